//! DLPack export and import.
#![warn(clippy::cast_possible_truncation)]

use amrex_array4::{Array4, Array4Mut, IndexBox, IntVect};
use amrex_dlpack_core::{
    DLDeviceType, DataType, Device, DlpackError, ErrorKind, ManagedTensor, TensorSpec, ToDlpack,
    flags,
};

fn bx(lo: [i32; 3], hi: [i32; 3]) -> IndexBox {
    IndexBox::new(lo.into(), hi.into())
}

fn val(i: i32, j: i32, k: i32, n: usize) -> f64 {
    f64::from(i) + 10.0 * f64::from(j) + 100.0 * f64::from(k) + 1000.0 * n as f64
}

fn filled(b: IndexBox, ncomp: usize) -> Vec<f64> {
    (0..ncomp)
        .flat_map(|n| b.iter().map(move |p| val(p[0], p[1], p[2], n)))
        .collect()
}

/// A tensor owning `data` with the given layout (strides in elements).
fn tensor<T: amrex_dlpack_core::DlpackElement>(
    data: Vec<T>,
    shape: &[i64],
    strides: &[i64],
    device: Device,
    fl: u64,
) -> ManagedTensor<'static> {
    let spec = TensorSpec::host(data.as_ptr(), shape, strides)
        .on_device(device)
        .with_flags(fl);
    // SAFETY: `data` moves into the tensor and its heap buffer does not move; the tests
    // only use layouts that stay inside it; the tensor owns it, so nobody else writes.
    unsafe { ManagedTensor::from_owner(data, &spec) }
}

fn kind(r: Result<impl Sized, DlpackError>) -> ErrorKind {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.kind(),
    }
}

#[test]
fn export_shape_strides_and_flags() {
    let b = bx([-1, 2, 3], [2, 4, 7]);
    let data = filled(b, 2);
    let a = Array4::new(&data, b, 2);
    let t = a.to_dlpack().unwrap();
    let v = t.view();
    assert_eq!(v.shape(), &[2, 5, 3, 4]);
    assert_eq!(v.strides().collect::<Vec<_>>(), [60, 12, 4, 1]);
    assert_eq!(v.strides_raw().map(<[i64]>::len), Some(4));
    assert_eq!(v.dtype(), DataType::F64);
    assert_eq!(v.device(), Device::CPU);
    assert_eq!(v.raw().byte_offset, 0);
    assert!(t.is_read_only());
    assert_eq!(v.data_ptr().cast_const().cast::<f64>(), data.as_ptr());
    // Consumer's [n, k, j, i] is a(begin + (i, j, k), n).
    let tv = v.typed::<f64>().unwrap();
    for n in 0..2 {
        for p in b.iter() {
            let q = p - b.lo();
            let idx = [n, q[2] as usize, q[1] as usize, q[0] as usize];
            assert_eq!(tv.get(&idx), Some(&val(p[0], p[1], p[2], n)));
        }
    }
}

#[test]
fn export_sub_box_and_component_slice() {
    let b = bx([-2, -2, -2], [5, 5, 5]);
    let data = filled(b, 3);
    let a = Array4::new(&data, b, 3);
    let s = bx([0, 1, 2], [3, 3, 4]);
    let view = a.components(1, 2).sub_box(&s);
    let t = view.to_dlpack().unwrap();
    let v = t.view();
    assert_eq!(v.shape(), &[2, 3, 3, 4]);
    assert_eq!(v.strides().collect::<Vec<_>>(), [512, 64, 8, 1]);
    assert!(!v.is_c_contiguous());
    let tv = v.typed::<f64>().unwrap();
    assert_eq!(tv.get(&[0, 0, 0, 0]), Some(&val(0, 1, 2, 1)));
    assert_eq!(tv.get(&[1, 2, 2, 3]), Some(&val(3, 3, 4, 2)));
    // Round trip back into an Array4 with the original global indices.
    let back = Array4::<f64>::from_dlpack_view(&v, s.lo()).unwrap();
    assert_eq!(
        (back.jstride(), back.kstride(), back.nstride()),
        (8, 64, 512)
    );
    assert_eq!(back.as_ptr(), view.as_ptr());
    for n in 0..2 {
        for p in s.iter() {
            assert_eq!(back[(p, n)], val(p[0], p[1], p[2], n + 1));
        }
    }
}

#[test]
fn mutable_export_is_writable_and_writes_through() {
    let b = bx([0, 0, 0], [2, 1, 0]);
    let mut data = vec![0.0_f32; 6];
    {
        let mut a = Array4Mut::new(&mut data, b, 1);
        let mut t = a.reborrow().to_dlpack().unwrap();
        assert!(!t.is_read_only());
        assert_eq!(t.flags() & flags::READ_ONLY, 0);
        let mut m =
            Array4Mut::<f32>::from_dlpack_view_mut(t.view_mut().unwrap(), IntVect::ZERO).unwrap();
        m[(2, 1, 0)] = 9.0;
        drop(t);
        a[(0, 0, 0)] = 1.0;
    }
    assert_eq!(data, [1.0, 0.0, 0.0, 0.0, 0.0, 9.0]);
}

#[test]
fn empty_export_has_null_data() {
    let data: Vec<i32> = Vec::new();
    let a = Array4::new(&data, bx([0; 3], [-1, 3, 3]), 2);
    let t = a.to_dlpack().unwrap();
    assert!(t.view().raw().data.is_null());
    assert_eq!(t.shape(), &[2, 4, 4, 0]);
    let back = Array4::<i32>::from_dlpack_view(&t.view(), IntVect::ZERO).unwrap();
    assert!(back.is_empty());
    assert_eq!(back.length().x, 0);
}

#[test]
fn import_rank4_numpy_layout() {
    // A C-contiguous NumPy array of shape (2, 3, 4, 5) = (ncomp, nz, ny, nx).
    let data: Vec<f64> = (0..120).map(f64::from).collect();
    let t = tensor(data, &[2, 3, 4, 5], &[60, 20, 5, 1], Device::CPU, 0);
    let begin = IntVect::new(-2, 10, 0);
    let a = Array4::<f64>::from_dlpack_view(&t.view(), begin).unwrap();
    assert_eq!(a.begin(), begin);
    assert_eq!(a.end(), IntVect::new(3, 14, 3));
    assert_eq!(a.ncomp(), 2);
    for n in 0..2usize {
        for k in 0..3 {
            for j in 0..4 {
                for i in 0..5 {
                    let want = (n * 60 + k as usize * 20 + j as usize * 5 + i as usize) as f64;
                    assert_eq!(a[(begin[0] + i, begin[1] + j, begin[2] + k, n)], want);
                }
            }
        }
    }
}

#[test]
fn import_lower_ranks_pyamrex_rule() {
    let data: Vec<i64> = (0..24).collect();
    let t3 = tensor(data.clone(), &[2, 3, 4], &[12, 4, 1], Device::CPU, 0);
    let a3 = Array4::<i64>::from_dlpack_view(&t3.view(), IntVect::ZERO).unwrap();
    assert_eq!(
        (a3.length().x, a3.length().y, a3.length().z, a3.ncomp()),
        (4, 3, 2, 1)
    );
    assert_eq!(a3[(3, 2, 1)], 23);
    assert_eq!(a3[(1, 2, 0)], 9);
    let t2 = tensor(data.clone(), &[4, 6], &[6, 1], Device::CPU, 0);
    let a2 = Array4::<i64>::from_dlpack_view(&t2.view(), IntVect::ZERO).unwrap();
    assert_eq!(
        (a2.length().x, a2.length().y, a2.length().z, a2.ncomp()),
        (6, 4, 1, 1)
    );
    assert_eq!(a2[(5, 3, 0)], 23);
    let t1 = tensor(data, &[24], &[1], Device::CPU, 0);
    let a1 = Array4::<i64>::from_dlpack_view(&t1.view(), IntVect::new(100, 0, 0)).unwrap();
    assert_eq!(
        (a1.length().x, a1.length().y, a1.length().z, a1.ncomp()),
        (24, 1, 1, 1)
    );
    assert_eq!(a1[(123, 0, 0)], 23);
}

#[test]
fn import_null_strides_and_byte_offset() {
    // Legacy producers send NULL strides (C-contiguous); dpnp sends byte offsets.
    let data: Vec<u16> = (0..12).collect();
    let shape = [2i64, 4];
    let dl = amrex_dlpack_core::DLTensor {
        data: data.as_ptr().cast_mut().cast(),
        device: Device::CPU,
        ndim: 2,
        dtype: DataType::U16,
        shape: shape.as_ptr().cast_mut(),
        strides: core::ptr::null_mut(),
        byte_offset: 4,
    };
    // SAFETY: `shape` holds 2 i64; the first element is 2 elements into `data` and the
    // 8 elements after it end at 10 <= 12; `data` is alive and unwritten meanwhile.
    let v = unsafe { amrex_dlpack_core::TensorView::new(&dl, 0) }.unwrap();
    let a = Array4::<u16>::from_dlpack_view(&v, IntVect::ZERO).unwrap();
    assert_eq!(a.jstride(), 4);
    assert_eq!(a[(0, 0, 0)], 2);
    assert_eq!(a[(3, 1, 0)], 9);
}

#[test]
fn import_refusals() {
    let v = || (0..120).map(f64::from).collect::<Vec<f64>>();
    let c = [60i64, 20, 5, 1];
    // Rank 5 and rank 0.
    let t = tensor(v(), &[1, 2, 3, 4, 5], &[120, 60, 20, 5, 1], Device::CPU, 0);
    assert_eq!(
        kind(Array4::<f64>::from_dlpack_view(&t.view(), IntVect::ZERO)),
        ErrorKind::RankMismatch {
            expected: 4,
            found: 5
        }
    );
    let t = tensor(v(), &[], &[], Device::CPU, 0);
    assert_eq!(
        kind(Array4::<f64>::from_dlpack_view(&t.view(), IntVect::ZERO)),
        ErrorKind::RankMismatch {
            expected: 4,
            found: 0
        }
    );
    // Wrong dtype.
    let t = tensor(v(), &[2, 3, 4, 5], &c, Device::CPU, 0);
    assert_eq!(
        kind(Array4::<f32>::from_dlpack_view(&t.view(), IntVect::ZERO)),
        ErrorKind::DtypeMismatch {
            expected: DataType::F32,
            found: DataType::F64
        }
    );
    // Device memory.
    let cuda = Device::new(DLDeviceType::CUDA, 0);
    let t = tensor(v(), &[2, 3, 4, 5], &c, cuda, 0);
    assert_eq!(
        kind(Array4::<f64>::from_dlpack_view(&t.view(), IntVect::ZERO)),
        ErrorKind::NotHostAccessible(cuda)
    );
    // Fortran-ordered (i not unit stride).
    let t = tensor(v(), &[2, 3, 4, 5], &[1, 2, 6, 24], Device::CPU, 0);
    assert_eq!(
        kind(Array4::<f64>::from_dlpack_view(&t.view(), IntVect::ZERO)),
        ErrorKind::NonUnitStride {
            axis: 3,
            stride: 24
        }
    );
    // Negative stride (a reversed NumPy view), starting from the last row.
    let data = v();
    let spec = TensorSpec::host(data[15..].as_ptr(), &[4, 5], &[-5, 1]);
    // SAFETY: rows at offsets 15, 10, 5, 0 from `data`'s start: inside the Vec it owns.
    let t = unsafe { ManagedTensor::from_owner(data, &spec) };
    assert_eq!(
        kind(Array4::<f64>::from_dlpack_view(&t.view(), IntVect::ZERO)),
        ErrorKind::NegativeStride {
            axis: 0,
            stride: -5
        }
    );
    // Extents that do not fit the i32 index space from `begin`.
    let t = tensor(v(), &[2, 3, 4, 5], &c, Device::CPU, 0);
    assert_eq!(
        kind(Array4::<f64>::from_dlpack_view(
            &t.view(),
            IntVect::new(i32::MAX - 2, 0, 0)
        )),
        ErrorKind::OutsideIndexSpace {
            dir: 0,
            lo: i64::from(i32::MAX) - 2,
            end: i64::from(i32::MAX) + 3
        }
    );
    // READ_ONLY refused for a mutable view (by the core's view_mut and by us).
    let mut t = tensor(v(), &[2, 3, 4, 5], &c, Device::CPU, flags::READ_ONLY);
    assert_eq!(kind(t.view_mut()), ErrorKind::ReadOnly);
    // Overlapping strides: fine for shared views, refused for mutable ones.
    let mut t = tensor(v(), &[2, 3, 4, 5], &[0, 20, 5, 1], Device::CPU, 0);
    let shared = Array4::<f64>::from_dlpack_view(&t.view(), IntVect::ZERO).unwrap();
    assert_eq!(shared[(1, 1, 1, 0)], shared[(1, 1, 1, 1)]);
    assert!(matches!(
        kind(Array4Mut::<f64>::from_dlpack_view_mut(
            t.view_mut().unwrap(),
            IntVect::ZERO
        )),
        ErrorKind::OverlappingStrides
    ));
    let mut t = tensor(v(), &[2, 3], &[1, 1], Device::CPU, 0);
    assert!(matches!(
        kind(Array4Mut::<f64>::from_dlpack_view_mut(
            t.view_mut().unwrap(),
            IntVect::ZERO
        )),
        ErrorKind::OverlappingStrides
    ));
}

#[test]
fn import_accepts_unusual_but_safe_layouts() {
    // Padded rows and extent-1 axes with arbitrary strides; mutable.
    let data: Vec<i32> = (0..64).collect();
    let mut t = tensor(data, &[1, 2, 3, 4], &[-7, 30, 8, 1], Device::CPU, 0);
    let mut a =
        Array4Mut::<i32>::from_dlpack_view_mut(t.view_mut().unwrap(), IntVect::new(1, 1, 1))
            .unwrap();
    assert_eq!((a.jstride(), a.kstride()), (8, 30));
    assert_eq!(a[(4, 3, 2)], 3 + 16 + 30);
    a[(1, 1, 1)] = -1;
    assert_eq!(a.row(1, 1, 0), &[-1, 1, 2, 3]);
    // Transposed j/k (kstride < jstride) is still non-overlapping.
    let data: Vec<i32> = (0..24).collect();
    let mut t = tensor(data, &[3, 2, 4], &[4, 12, 1], Device::CPU, 0);
    let a = Array4Mut::<i32>::from_dlpack_view_mut(t.view_mut().unwrap(), IntVect::ZERO).unwrap();
    assert_eq!(a[(3, 1, 2)], 3 + 12 + 8);
    // Pinned host memory is host accessible.
    let pinned = Device::new(DLDeviceType::CUDA_HOST, 0);
    let t = tensor(vec![1.5_f64; 4], &[4], &[1], pinned, 0);
    assert_eq!(
        Array4::<f64>::from_dlpack_view(&t.view(), IntVect::ZERO).unwrap()[(3, 0, 0)],
        1.5
    );
}

#[test]
fn export_then_import_through_raw_pointer() {
    let b = bx([3, -4, 0], [6, -1, 2]);
    let mut data = filled(b, 2);
    let ptr = data.as_ptr();
    let a = Array4Mut::new(&mut data, b, 2);
    let raw = a.to_dlpack().unwrap().into_raw();
    // SAFETY: `raw` came from `into_raw` and is adopted exactly once, within the borrow.
    let mut t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    let back = Array4Mut::<f64>::from_dlpack_view_mut(t.view_mut().unwrap(), b.lo()).unwrap();
    assert_eq!(back.as_ptr(), ptr);
    for n in 0..2 {
        for p in b.iter() {
            assert_eq!(back[(p, n)], val(p[0], p[1], p[2], n));
        }
    }
}
