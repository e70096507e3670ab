//! Property tests: for random rank 0–6, extents (including 0), positive, zero and negative
//! strides, byte offsets and unaligned base pointers over an exact-size backing buffer,
//! every element read through `TypedView::get`, `for_each`, `to_vec` and the ndarray bridge
//! equals the value computed independently from the buffer; and export → `into_raw` →
//! `from_raw` (versioned and legacy) is the identity on device, dtype, shape, strides, first
//! element and contents. The buffer is exactly as long as the span, so any out-of-bounds
//! read is caught by Miri.
#![cfg(feature = "alloc")]

mod common;

use amrex_dlpack_core::{DataType, ManagedTensor, TensorSpec, TensorView};
use common::{Data, RawBuilder, get};
use proptest::prelude::*;
use std::sync::Arc;

/// One random layout.
#[derive(Clone, Debug)]
struct Layout {
    shape: Vec<i64>,
    strides: Vec<i64>,
    /// Send NULL strides (only used when `strides` are compact row-major).
    null_strides: bool,
    /// Spare elements on each side of the span.
    pad: usize,
    /// Bytes added to `data` (and taken off `byte_offset`), so `data` itself is unaligned.
    shift: usize,
}

fn layout() -> impl Strategy<Value = Layout> {
    let max_extent: i64 = if cfg!(miri) { 3 } else { 4 };
    (0usize..=6)
        .prop_flat_map(move |rank| {
            (
                proptest::collection::vec(0..=max_extent, rank),
                proptest::collection::vec(-7i64..=7, rank),
                any::<bool>(),
                0usize..3,
                0usize..8,
            )
        })
        .prop_map(|(shape, strides, null_strides, pad, shift)| {
            let strides = if null_strides {
                common::c_strides(&shape)
            } else {
                strides
            };
            Layout {
                shape,
                strides,
                null_strides,
                pad,
                shift,
            }
        })
}

/// The value stored at buffer position `p` (distinct for every position).
fn value(p: usize) -> u64 {
    (p as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xA5
}

/// All multi-indices in row-major order.
fn indices(shape: &[i64]) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    if shape.contains(&0) {
        return out;
    }
    let mut idx = vec![0usize; shape.len()];
    loop {
        out.push(idx.clone());
        let mut axis = shape.len();
        loop {
            if axis == 0 {
                return out;
            }
            axis -= 1;
            idx[axis] += 1;
            if (idx[axis] as i64) < shape[axis] {
                break;
            }
            idx[axis] = 0;
        }
    }
}

/// The buffer, the first element's position in it, and the expected elements in row-major
/// order, computed without the crate.
fn expected(l: &Layout) -> (Vec<u64>, usize, Vec<u64>) {
    let empty = l.shape.contains(&0);
    let (mut lo, mut hi) = (0i64, 0i64);
    if !empty {
        for (&e, &s) in l.shape.iter().zip(&l.strides) {
            let reach = (e - 1) * s;
            if reach < 0 {
                lo += reach;
            } else {
                hi += reach;
            }
        }
    }
    // One spare element in front so that `data + shift` stays inside the buffer.
    let first = (1 - lo) as usize + l.pad;
    let len = first + hi as usize + 1 + l.pad;
    let buf: Vec<u64> = (0..len).map(value).collect();
    let elems = indices(&l.shape)
        .iter()
        .map(|idx| {
            let off: i64 = idx
                .iter()
                .zip(&l.strides)
                .map(|(&i, &s)| i as i64 * s)
                .sum();
            buf[(first as i64 + off) as usize]
        })
        .collect();
    (buf, first, elems)
}

/// Checks every way of reading `view` against `want`.
fn check_reads(view: &TensorView<'_>, l: &Layout, want: &[u64]) {
    assert_eq!(view.shape(), &l.shape[..]);
    assert_eq!(view.strides().collect::<Vec<_>>(), l.strides);
    assert_eq!(view.dtype(), DataType::U64);
    assert_eq!(view.num_elements(), want.len());
    let typed = view.typed::<u64>().unwrap();
    for (idx, w) in indices(&l.shape).iter().zip(want) {
        assert_eq!(typed.get(idx), Some(w), "index {idx:?}");
    }
    // One past the end on each axis is refused.
    for axis in 0..l.shape.len() {
        let mut idx = vec![0usize; l.shape.len()];
        idx[axis] = l.shape[axis] as usize;
        assert_eq!(typed.get(&idx), None);
    }
    assert_eq!(typed.to_vec(), want);
    let mut seen = Vec::new();
    typed.for_each(|x| seen.push(*x));
    assert_eq!(seen, want);
    if let Some(s) = typed.as_slice() {
        assert_eq!(s, want);
    }
    #[cfg(feature = "ndarray")]
    {
        let a = amrex_dlpack_core::tensor_view_as_ndarray::<u64, ndarray::IxDyn>(view).unwrap();
        let shape: Vec<usize> = l.shape.iter().map(|&e| e as usize).collect();
        assert_eq!(a.shape(), &shape[..]);
        assert_eq!(a.iter().copied().collect::<Vec<_>>(), want);
    }
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 256 },
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn import_reads_exactly_the_expected_elements(l in layout()) {
        let (buf, first, want) = expected(&l);
        let mut b = RawBuilder::f64_c(&[])
            .dtype(1, 64, 1)
            .shape(&l.shape)
            .strides(&l.strides)
            .backing(buf)
            .data(Data::Backing(l.shift))
            .byte_offset((first * 8 - l.shift) as u64);
        if l.null_strides {
            b = b.strides_ptr(common::Ptr::Null);
        }
        let (raw, calls) = b.clone().build();
        // SAFETY: ownership of a well-formed tensor passes.
        let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
        check_reads(&t.view(), &l, &want);
        drop(t);
        prop_assert_eq!(get(&calls), 1);

        let (raw, calls) = b.build_legacy();
        // SAFETY: as above.
        let t = unsafe { amrex_dlpack_core::LegacyManagedTensor::from_raw(raw) }.unwrap();
        check_reads(&t.view(), &l, &want);
        drop(t);
        prop_assert_eq!(get(&calls), 1);
    }

    #[test]
    fn export_import_round_trip_is_the_identity(l in layout()) {
        let (buf, first, want) = expected(&l);
        let buf = Arc::new(buf);
        let data = if want.is_empty() {
            core::ptr::null()
        } else {
            buf.as_ptr().wrapping_add(first)
        };
        let spec = TensorSpec::host(data, &l.shape, &l.strides);
        // SAFETY: the Arc keeps the buffer alive and unmoved; every offset the strides reach
        // from `first` is inside it (built that way by `expected`); nobody writes.
        let t = unsafe { ManagedTensor::from_owner(Arc::clone(&buf), &spec) };
        prop_assert_eq!(Arc::strong_count(&buf), 2);
        let raw = t.into_raw();
        // SAFETY: `raw` came from `into_raw`.
        let back = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
        let v = back.view();
        prop_assert_eq!(v.device(), amrex_dlpack_core::Device::CPU);
        prop_assert_eq!(v.raw().byte_offset, 0);
        prop_assert_eq!(v.data_ptr().cast_const().cast::<u64>(), data);
        prop_assert_eq!(v.strides_raw().is_some(), !l.shape.is_empty());
        check_reads(&v, &l, &want);

        // Through the legacy header as well.
        let legacy = back.into_legacy();
        let raw = legacy.into_raw();
        // SAFETY: `raw` came from `into_raw`.
        let legacy = unsafe { amrex_dlpack_core::LegacyManagedTensor::from_raw(raw) }.unwrap();
        check_reads(&legacy.view(), &l, &want);
        prop_assert_eq!(Arc::strong_count(&buf), 2);
        drop(legacy);
        prop_assert_eq!(Arc::strong_count(&buf), 1, "the owner was released exactly once");
    }
}

#[cfg(feature = "ndarray")]
proptest! {
    #![proptest_config(config())]

    #[test]
    fn ndarray_export_of_an_imported_view_round_trips(l in layout()) {
        use amrex_dlpack_core::ToDlpack;
        let (buf, first, want) = expected(&l);
        let (raw, calls) = RawBuilder::f64_c(&[])
            .dtype(1, 64, 1)
            .shape(&l.shape)
            .strides(&l.strides)
            .backing(buf)
            .byte_offset((first * 8) as u64)
            .build();
        // SAFETY: ownership passes.
        let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
        let a = t.as_ndarray::<u64, ndarray::IxDyn>().unwrap();
        let again = a.view().to_dlpack().unwrap();
        prop_assert!(again.is_read_only());
        let b = again.as_ndarray::<u64, ndarray::IxDyn>().unwrap();
        prop_assert_eq!(&a, &b);
        prop_assert_eq!(b.iter().copied().collect::<Vec<_>>(), want);
        if !a.is_empty() {
            prop_assert_eq!(a.as_ptr(), b.as_ptr());
        }
        drop(again);
        drop(t);
        prop_assert_eq!(get(&calls), 1);
    }
}
