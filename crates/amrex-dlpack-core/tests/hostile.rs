//! Regression tests for hostile tensors that the core's validation accepts (they are
//! legal DLPack) but that once broke what came after the import: quadratic stride walks,
//! producer-sized allocations and small arithmetic panics. Each runs in debug and release
//! builds (`cargo test --release`), since release builds wrap where debug builds panic.

mod common;

use amrex_dlpack_core::{ErrorKind, FromDlpack, ManagedTensor, TensorSpec};
use common::{RawBuilder, get, kind_of};
use core::time::Duration;
use std::time::Instant;

fn import(b: RawBuilder) -> ManagedTensor<'static> {
    let (p, _calls) = b.build();
    // SAFETY: `p` is a fresh heap tensor whose ownership passes to us.
    unsafe { ManagedTensor::from_raw(p) }.expect("a valid tensor")
}

/// Rank 100 000 with NULL strides: every stride walk used to recompute the compact
/// strides per axis (O(ndim^2): 35 s for `get`, 42 s for `into_legacy` in release).
/// Linear walks take milliseconds; the bound is generous so that only the quadratic
/// behaviour (hundreds of times slower) fails it.
#[test]
#[cfg_attr(
    miri,
    ignore = "a timing bound over 10^5 axes; Miri is orders of magnitude slower"
)]
fn rank_100000_with_null_strides_is_linear() {
    let shape = vec![1i64; 100_000];
    let t = import(RawBuilder::f64_c(&shape).strides_ptr(common::Ptr::Null));
    let start = Instant::now();
    let view = t.view();
    assert_eq!(view.strides().len(), 100_000);
    assert!(view.strides().all(|s| s == 1));
    let typed = view.typed::<f64>().unwrap();
    assert_eq!(typed.get(&vec![0; 100_000]), Some(&0.0));
    assert_eq!(typed.get(&vec![1; 100_000]), None);
    assert!(view.is_c_contiguous() && view.is_f_contiguous());
    let mut n = 0;
    typed.for_each(|_| n += 1);
    assert_eq!(n, 1);
    let legacy = t.into_legacy();
    assert_eq!(legacy.view().shape().len(), 100_000);
    let took = start.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "stride walks over rank 100000 took {took:?}"
    );
}

/// NULL strides of a tensor with a zero extent: the compact strides still follow the
/// extents (each at least 1), as `stride(axis)` reports them.
#[test]
fn null_strides_iterate_like_stride() {
    for shape in [&[3i64, 0, 4, 5][..], &[0], &[2, 1, 7], &[]] {
        let t = import(RawBuilder::f64_c(shape).strides_ptr(common::Ptr::Null));
        let v = t.view();
        let walked: Vec<i64> = v.strides().collect();
        let one_by_one: Vec<i64> = (0..v.ndim()).map(|a| v.stride(a)).collect();
        assert_eq!(walked, one_by_one, "shape {shape:?}");
    }
}

/// An 8-byte buffer seen as 2^40 elements through a zero stride: copying it into a `Vec`
/// must fail cleanly instead of aborting the process on an 8 TiB allocation.
#[test]
#[cfg_attr(
    miri,
    ignore = "Miri stops at an 8 TiB allocation instead of failing it"
)]
fn zero_stride_copy_into_vec_fails_cleanly() {
    let data = vec![1.5f64];
    let spec = TensorSpec::host(data.as_ptr(), &[1 << 40], &[0]);
    // SAFETY: every index reaches offset 0, the one element of `data`, which moves in.
    let t = unsafe { ManagedTensor::from_owner(data, &spec) };
    assert_eq!(
        kind_of(Vec::<f64>::from_dlpack(t)),
        ErrorKind::AllocationFailed
    );
    // A modest broadcast still copies.
    let data = vec![2.5f64];
    let spec = TensorSpec::host(data.as_ptr(), &[1000], &[0]);
    // SAFETY: as above.
    let t = unsafe { ManagedTensor::from_owner(data, &spec) };
    assert_eq!(Vec::<f64>::from_dlpack(t).unwrap(), vec![2.5; 1000]);
}

/// `for_each` over shape `[2, 1]`, strides `[1, i64::MAX]`: the extent-1 axis used to add
/// its stride before testing the bound (overflow).
#[test]
fn for_each_never_steps_an_extent_one_axis() {
    let t = import(RawBuilder::f64_c(&[2, 1]).strides(&[1, i64::MAX]));
    let mut seen = Vec::new();
    t.view().typed::<f64>().unwrap().for_each(|&x| seen.push(x));
    assert_eq!(seen, [0.0, 1.0]);
    // The odometer with real strides, including a negative one.
    let data: Vec<f64> = (0..12).map(f64::from).collect();
    // The pointer keeps the provenance of the whole buffer (rows before it are reached).
    let spec = TensorSpec::host(data.as_ptr().wrapping_add(8), &[3, 1, 4], &[-4, 99, 1]);
    // SAFETY: rows at offsets 8, 4, 0 of `data`, which moves in.
    let t = unsafe { ManagedTensor::from_owner(data, &spec) };
    let mut seen = Vec::new();
    t.view().typed::<f64>().unwrap().for_each(|&x| seen.push(x));
    let want: Vec<f64> = [8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3]
        .into_iter()
        .map(f64::from)
        .collect();
    assert_eq!(seen, want);
}

/// Shape `[1]` with stride `i64::MIN` is legal (the stride of an extent-1 axis is never
/// used) and must not overflow when the ndarray bridge takes its absolute value.
#[cfg(feature = "ndarray")]
#[test]
fn ndarray_views_of_edge_strides() {
    use ndarray::{Ix1, Ix3};
    let mut t = import(RawBuilder::f64_c(&[1]).strides(&[i64::MIN]));
    let a = t.as_ndarray::<f64, Ix1>().unwrap();
    assert_eq!(a[0], 0.0);
    let mut m = t.as_ndarray_mut::<f64, Ix1>().unwrap();
    m[0] = 4.0;
    assert_eq!(t.as_ndarray::<f64, Ix1>().unwrap()[0], 4.0);
    // An empty [1, 5, 0] tensor with strides [5, 1, 1].
    let mut t = import(RawBuilder::f64_c(&[1, 5, 0]).strides(&[5, 1, 1]));
    assert_eq!(t.as_ndarray_mut::<f64, Ix3>().unwrap().len(), 0);
    assert_eq!(t.as_ndarray::<f64, Ix3>().unwrap().shape(), &[1, 5, 0]);
}

/// The deleter of every tensor above ran exactly once (checked on one case here; the
/// ownership suite covers the rest).
#[test]
#[cfg_attr(
    miri,
    ignore = "Miri stops at an 8 TiB allocation instead of failing it"
)]
fn refused_copy_still_releases_the_tensor_once() {
    let data = vec![0u64];
    let (p, calls) = RawBuilder::f64_c(&[1])
        .shape(&[1 << 40])
        .strides(&[0])
        .backing(data)
        .build();
    // SAFETY: a fresh heap tensor whose ownership passes to us.
    let t = unsafe { ManagedTensor::from_raw(p) }.unwrap();
    assert_eq!(
        kind_of(Vec::<f64>::from_dlpack(t)),
        ErrorKind::AllocationFailed
    );
    assert_eq!(get(&calls), 1);
}

/// DLPack's rule for empty tensors lives in the export builder: an exporter may pass the
/// dangling pointer of an empty container, and the consumer still sees NULL data.
#[test]
fn empty_exports_carry_null_data() {
    let data: Vec<f64> = Vec::new();
    let dangling = data.as_ptr();
    assert!(!dangling.is_null());
    for (shape, strides) in [(&[0i64][..], &[1i64][..]), (&[3, 0, 2], &[0, 2, 1])] {
        let spec = TensorSpec::host(dangling, shape, strides);
        // SAFETY: no element is reached; `()` owns nothing.
        let t = unsafe { ManagedTensor::from_owner((), &spec) };
        assert!(t.view().raw().data.is_null(), "shape {shape:?}");
    }
    // A scalar (rank 0) has one element and keeps its pointer.
    let one = [5.0f64];
    let spec = TensorSpec::host(one.as_ptr(), &[], &[]);
    // SAFETY: the scalar is `one[0]`, alive for the test.
    let t = unsafe { ManagedTensor::from_owner((), &spec) };
    assert!(!t.view().raw().data.is_null());
}
