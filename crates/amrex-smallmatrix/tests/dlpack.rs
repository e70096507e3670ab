//! DLPack export and import: layouts, flags, round trips and every refusal.
#![cfg(feature = "alloc")]

use amrex_dlpack_core::ffi::{DLDeviceType, DLTensor};
use amrex_dlpack_core::{
    DataType, Device, DlpackElement, ErrorKind, FromDlpack, ManagedTensor, TensorView,
    TensorViewMut, ToDlpack, flags,
};
use amrex_smallmatrix::{ColumnMajor, Order, RowMajor, SmallMatrix};
use proptest::prelude::*;

/// Element `(i, j)` (START based) gets a value that encodes its position.
fn coded<const R: usize, const C: usize, O: Order, const S: usize>() -> SmallMatrix<f64, R, C, O, S>
{
    SmallMatrix::from_fn(|i, j| (100 * i + j) as f64 + 0.5)
}

/// Builds a `DLTensor` over caller-owned memory; `strides == None` sends NULL strides.
fn raw<T: DlpackElement>(
    data: *mut T,
    shape: &mut [i64],
    strides: Option<&mut [i64]>,
    byte_offset: u64,
    device: Device,
) -> DLTensor {
    DLTensor {
        data: data.cast(),
        device,
        ndim: shape.len() as i32,
        dtype: T::DTYPE,
        shape: shape.as_mut_ptr(),
        strides: strides.map_or(core::ptr::null_mut(), <[i64]>::as_mut_ptr),
        byte_offset,
    }
}

fn kind<T: core::fmt::Debug>(r: Result<T, amrex_dlpack_core::DlpackError>) -> ErrorKind {
    r.expect_err("expected a refusal").kind()
}

/// Export checks for one layout: shape, strides, flags, pointer, values; then the mutable
/// export writes through, the owned export keeps the values, and every import gives the
/// matrix back.
fn check_layout<const R: usize, const C: usize, O: Order, const S: usize>() {
    let mut m = coded::<R, C, O, S>();
    let expected_strides: [i64; 2] = if O::ROW_MAJOR {
        [C as i64, 1]
    } else {
        [1, R as i64]
    };

    // Shared export: READ_ONLY, zero-copy, values at [i, j] = (i + S, j + S).
    {
        let t = (&m).to_dlpack().unwrap();
        let v = t.view();
        assert_eq!(v.shape(), &[R as i64, C as i64]);
        assert_eq!(v.strides_raw().unwrap(), &expected_strides);
        assert_eq!(v.dtype(), DataType::F64);
        assert_eq!(v.device(), Device::CPU);
        assert!(t.is_read_only());
        assert_eq!(v.data_ptr().cast::<f64>().cast_const(), m.as_ptr());
        let typed = v.typed::<f64>().unwrap();
        for i in 0..R {
            for j in 0..C {
                assert_eq!(*typed.get(&[i, j]).unwrap(), m[(i + S, j + S)]);
            }
        }
        // Zero-copy view import of our own export: same address.
        let back = SmallMatrix::<f64, R, C, O, S>::view_from_dlpack(&v).unwrap();
        assert!(core::ptr::eq(back, &m));
        // Copy import into both orders.
        let copy = SmallMatrix::<f64, R, C, ColumnMajor, S>::from_dlpack_copy(&v).unwrap();
        assert_eq!(copy, m.to_order::<ColumnMajor>());
        let copy = SmallMatrix::<f64, R, C, RowMajor, S>::from_dlpack_copy(&v).unwrap();
        assert_eq!(copy, m.to_order::<RowMajor>());
        // A shared export never yields a mutable view.
        let mut t = t;
        assert_eq!(kind(t.view_mut()), ErrorKind::ReadOnly);
    }

    // Mutable export: writable, writes land in the matrix.
    {
        let ptr = m.as_ptr();
        let mut t = (&mut m).to_dlpack().unwrap();
        assert!(!t.is_read_only());
        assert_eq!(t.view().data_ptr().cast::<f64>().cast_const(), ptr);
        let mut typed = t.view_mut().unwrap().typed_mut::<f64>().unwrap();
        *typed.get_mut(&[R - 1, C - 1]).unwrap() = -7.0;
        *typed.get_mut(&[0, 0]).unwrap() = -1.0;
    }
    assert_eq!(m[(R - 1 + S, C - 1 + S)], -7.0);
    assert_eq!(m[(S, S)], -1.0);

    // Zero-copy mutable view import.
    {
        let mut t = (&mut m).to_dlpack().unwrap();
        let view =
            SmallMatrix::<f64, R, C, O, S>::view_from_dlpack_mut(t.view_mut().unwrap()).unwrap();
        view[(S, S)] = 42.0;
    }
    assert_eq!(m[(S, S)], 42.0);

    // Owned export: the matrix moves into the tensor; through a raw pointer and back.
    let snapshot = m;
    let t = m.to_dlpack().unwrap();
    assert!(!t.is_read_only());
    assert_eq!(t.view().strides_raw().unwrap(), &expected_strides);
    let raw = t.into_raw();
    // SAFETY: `raw` came from `into_raw` and is adopted exactly once.
    let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    let back = SmallMatrix::<f64, R, C, O, S>::from_dlpack(t).unwrap();
    assert_eq!(back, snapshot);
}

#[test]
fn layouts_6x6_6x1_1x6_both_orders_both_starts() {
    check_layout::<6, 6, ColumnMajor, 0>();
    check_layout::<6, 6, ColumnMajor, 1>();
    check_layout::<6, 6, RowMajor, 0>();
    check_layout::<6, 6, RowMajor, 1>();
    check_layout::<6, 1, ColumnMajor, 0>();
    check_layout::<6, 1, ColumnMajor, 1>();
    check_layout::<6, 1, RowMajor, 0>();
    check_layout::<6, 1, RowMajor, 1>();
    check_layout::<1, 6, ColumnMajor, 0>();
    check_layout::<1, 6, ColumnMajor, 1>();
    check_layout::<1, 6, RowMajor, 0>();
    check_layout::<1, 6, RowMajor, 1>();
    check_layout::<2, 3, ColumnMajor, 1>();
    check_layout::<3, 2, RowMajor, 1>();
}

#[test]
fn exported_strides_are_amrex_layout() {
    assert_eq!(
        SmallMatrix::<f64, 6, 4, ColumnMajor>::dlpack_layout().unwrap(),
        ([6, 4], [1, 6])
    );
    assert_eq!(
        SmallMatrix::<f64, 6, 4, RowMajor, 1>::dlpack_layout().unwrap(),
        ([6, 4], [4, 1])
    );
}

#[test]
fn empty_matrix_exports_null_data() {
    let m = SmallMatrix::<f32, 0, 3>::zero();
    let t = (&m).to_dlpack().unwrap();
    assert!(t.view().raw().data.is_null());
    assert_eq!(t.shape(), &[0, 3]);
    let v = SmallMatrix::<f32, 0, 3>::view_from_dlpack(&t.view()).unwrap();
    assert_eq!(v.as_slice().len(), 0);
    let c = SmallMatrix::<f32, 0, 3, RowMajor>::from_dlpack_copy(&t.view()).unwrap();
    assert_eq!(c.shape(), (0, 3));
    let owned = m.to_dlpack().unwrap();
    assert!(owned.view().raw().data.is_null());
}

#[test]
fn other_dtypes_export() {
    let m = SmallMatrix::<i32, 2, 2, RowMajor, 1>::from_rows([[1, 2], [3, 4]]);
    let t = (&m).to_dlpack().unwrap();
    assert_eq!(t.dtype(), DataType::I32);
    let m = SmallMatrix::<u8, 1, 3>::from_rows([[1, 2, 3]]);
    assert_eq!(m.to_dlpack().unwrap().dtype(), DataType::U8);
    let m = SmallMatrix::<bool, 1, 1>::from_rows([[true]]);
    assert_eq!((&m).to_dlpack().unwrap().dtype(), DataType::BOOL);
}

#[test]
fn copy_import_any_strides() {
    // A 3x4 C-order buffer (values 0..12) read with several layouts.
    let mut buf: Vec<f64> = (0..12).map(f64::from).collect();
    let base = buf.as_mut_ptr();

    // NULL strides = compact row-major (legacy producers, NumPy <= 2.3).
    let mut shape = [3, 4];
    let t = raw(base, &mut shape, None, 0, Device::CPU);
    // SAFETY: shape and data describe `buf`, alive and unwritten while `view` lives.
    let view = unsafe { TensorView::new(&t, 0) }.unwrap();
    let m = SmallMatrix::<f64, 3, 4, ColumnMajor, 1>::from_dlpack_copy(&view).unwrap();
    assert_eq!(m[(2, 3)], 6.0);
    assert_eq!(m[(3, 4)], 11.0);
    // ...which is also exactly row-major storage, so it views without copying.
    let v = SmallMatrix::<f64, 3, 4, RowMajor, 1>::view_from_dlpack(&view).unwrap();
    assert_eq!(v[(3, 4)], 11.0);
    assert_eq!(v.as_ptr(), base.cast_const());

    // Transposed read: shape (4, 3), strides (1, 4) — column-major storage.
    let mut shape = [4, 3];
    let mut strides = [1, 4];
    let t = raw(base, &mut shape, Some(&mut strides), 0, Device::CPU);
    // SAFETY: as above.
    let view = unsafe { TensorView::new(&t, 0) }.unwrap();
    let m = SmallMatrix::<f64, 4, 3, RowMajor>::from_dlpack_copy(&view).unwrap();
    assert_eq!(m[(3, 0)], 3.0);
    assert_eq!(m[(1, 2)], 9.0);
    let v = SmallMatrix::<f64, 4, 3, ColumnMajor>::view_from_dlpack(&view).unwrap();
    assert_eq!(*v, m.to_order());

    // Negative strides: both axes reversed; first element is the last in memory.
    let mut shape = [3, 4];
    let mut strides = [-4, -1];
    let t = raw(base, &mut shape, Some(&mut strides), 11 * 8, Device::CPU);
    // SAFETY: the span reaches buf[0..12] from the first element at buf[11].
    let view = unsafe { TensorView::new(&t, 0) }.unwrap();
    let m = SmallMatrix::<f64, 3, 4, ColumnMajor, 0>::from_dlpack_copy(&view).unwrap();
    assert_eq!(m[(0, 0)], 11.0);
    assert_eq!(m[(2, 3)], 0.0);
    assert_eq!(m[(1, 2)], 5.0);
    assert_eq!(
        kind(SmallMatrix::<f64, 3, 4, RowMajor>::view_from_dlpack(&view)),
        ErrorKind::NegativeStride {
            axis: 1,
            stride: -1
        }
    );

    // Non-compact: every other column of the 3x4 buffer, shape (3, 2), strides (4, 2).
    let mut shape = [3, 2];
    let mut strides = [4, 2];
    let t = raw(base, &mut shape, Some(&mut strides), 8, Device::CPU);
    // SAFETY: the span is buf[1..12].
    let view = unsafe { TensorView::new(&t, 0) }.unwrap();
    let m = SmallMatrix::<f64, 3, 2, RowMajor, 1>::from_dlpack_copy(&view).unwrap();
    assert_eq!(m, SmallMatrix::from_rows([[1., 3.], [5., 7.], [9., 11.]]));
    assert_eq!(
        kind(SmallMatrix::<f64, 3, 2, RowMajor, 1>::view_from_dlpack(
            &view
        )),
        ErrorKind::NonUnitStride { axis: 1, stride: 2 }
    );
    // Broadcast (stride 0) is fine for a copy.
    let mut shape = [2, 2];
    let mut strides = [0, 1];
    let t = raw(base, &mut shape, Some(&mut strides), 0, Device::CPU);
    // SAFETY: the span is buf[0..2].
    let view = unsafe { TensorView::new(&t, 0) }.unwrap();
    let m = SmallMatrix::<f64, 2, 2>::from_dlpack_copy(&view).unwrap();
    assert_eq!(m, SmallMatrix::from_rows([[0., 1.], [0., 1.]]));
    drop(buf);
}

#[test]
fn view_accepts_any_stride_on_unit_axes() {
    let mut buf = [1.0_f64, 2.0, 3.0];
    let base = buf.as_mut_ptr();
    // NumPy's C-contiguous (3, 1) array has strides (1, 1); column-major wants (1, 3).
    let mut shape = [3, 1];
    let mut strides = [1, 1];
    let t = raw(base, &mut shape, Some(&mut strides), 0, Device::CPU);
    // SAFETY: describes `buf`.
    let view = unsafe { TensorView::new(&t, 0) }.unwrap();
    let v = SmallMatrix::<f64, 3, 1, ColumnMajor, 1>::view_from_dlpack(&view).unwrap();
    assert_eq!(v[3], 3.0);
    let v = SmallMatrix::<f64, 3, 1, RowMajor>::view_from_dlpack(&view).unwrap();
    assert_eq!(v[2], 3.0);
    // (1, 3) with strides (3, 1) or (99, 1).
    let mut shape = [1, 3];
    let mut strides = [99, 1];
    let t = raw(base, &mut shape, Some(&mut strides), 0, Device::CPU);
    // SAFETY: describes `buf` (axis 0 has extent 1, so its stride is never applied).
    let view = unsafe { TensorView::new(&t, 0) }.unwrap();
    let v = SmallMatrix::<f64, 1, 3, ColumnMajor>::view_from_dlpack(&view).unwrap();
    assert_eq!(v[1], 2.0);
}

#[test]
fn mutable_view_import_writes_through_foreign_memory() {
    let mut buf = [0_i64; 6];
    let base = buf.as_mut_ptr();
    let mut shape = [2, 3];
    let mut strides = [1, 2];
    let t = raw(base, &mut shape, Some(&mut strides), 0, Device::CPU);
    {
        // SAFETY: describes `buf`, which nobody else touches while the view lives.
        let view = unsafe { TensorViewMut::new(&t, 0) }.unwrap();
        let m = SmallMatrix::<i64, 2, 3, ColumnMajor, 1>::view_from_dlpack_mut(view).unwrap();
        m[(2, 3)] = 5;
        m[(1, 2)] = 3;
    }
    assert_eq!(buf, [0, 0, 3, 0, 0, 5]);
}

#[test]
fn refusals_are_specific() {
    let mut buf = [0.0_f64; 13];
    let base = buf.as_mut_ptr();
    type M = SmallMatrix<f64, 2, 3, ColumnMajor, 1>;

    // Rank.
    let mut shape = [6];
    let t = raw(base, &mut shape, None, 0, Device::CPU);
    // SAFETY: describes part of `buf`.
    let view = unsafe { TensorView::new(&t, 0) }.unwrap();
    let want = ErrorKind::RankMismatch {
        expected: 2,
        found: 1,
    };
    assert_eq!(kind(M::from_dlpack_copy(&view)), want);
    assert_eq!(kind(M::view_from_dlpack(&view)), want);

    // Shape, naming the axis.
    let mut shape = [3, 2];
    let t = raw(base, &mut shape, None, 0, Device::CPU);
    // SAFETY: describes part of `buf`.
    let view = unsafe { TensorView::new(&t, 0) }.unwrap();
    assert_eq!(
        kind(M::from_dlpack_copy(&view)),
        ErrorKind::ShapeMismatch {
            axis: 0,
            expected: 2,
            found: 3
        }
    );
    let mut shape = [2, 4];
    let t = raw(base, &mut shape, None, 0, Device::CPU);
    // SAFETY: describes part of `buf`.
    let view = unsafe { TensorView::new(&t, 0) }.unwrap();
    assert_eq!(
        kind(M::view_from_dlpack(&view)),
        ErrorKind::ShapeMismatch {
            axis: 1,
            expected: 3,
            found: 4
        }
    );

    // Dtype.
    let mut shape = [2, 3];
    let t = raw(base.cast::<f32>(), &mut shape, None, 0, Device::CPU);
    // SAFETY: describes part of `buf` (as f32).
    let view = unsafe { TensorView::new(&t, 0) }.unwrap();
    let want = ErrorKind::DtypeMismatch {
        expected: DataType::F64,
        found: DataType::F32,
    };
    assert_eq!(kind(M::from_dlpack_copy(&view)), want);
    assert_eq!(kind(M::view_from_dlpack(&view)), want);

    // Device: a CUDA tensor is never dereferenced.
    let cuda = Device::new(DLDeviceType::CUDA, 0);
    let mut shape = [2, 3];
    let t = raw(base, &mut shape, None, 0, cuda);
    // SAFETY: validation only reads shape/strides; the data is never touched.
    let view = unsafe { TensorView::new(&t, 0) }.unwrap();
    assert_eq!(
        kind(M::from_dlpack_copy(&view)),
        ErrorKind::NotHostAccessible(cuda)
    );
    assert_eq!(
        kind(M::view_from_dlpack(&view)),
        ErrorKind::NotHostAccessible(cuda)
    );

    // Alignment: first element one byte in.
    let mut shape = [2, 3];
    let t = raw(base, &mut shape, None, 1, Device::CPU);
    // SAFETY: the span (6 f64 from byte 1) lies inside `buf` (13 f64).
    let view = unsafe { TensorView::new(&t, 0) }.unwrap();
    let address = base.addr() + 1;
    let want = ErrorKind::Misaligned { address, align: 8 };
    assert_eq!(kind(M::from_dlpack_copy(&view)), want);
    assert_eq!(kind(M::view_from_dlpack(&view)), want);

    // Strides for a zero-copy view: row-major data into a column-major matrix.
    let mut shape = [2, 3];
    let t = raw(base, &mut shape, None, 0, Device::CPU);
    // SAFETY: describes part of `buf`.
    let view = unsafe { TensorView::new(&t, 0) }.unwrap();
    assert_eq!(
        kind(M::view_from_dlpack(&view)),
        ErrorKind::NonUnitStride { axis: 0, stride: 3 }
    );
    // Column-major but with a padded leading dimension (lda = 3 instead of 2).
    let mut shape = [2, 3];
    let mut strides = [1, 3];
    let t = raw(base, &mut shape, Some(&mut strides), 0, Device::CPU);
    // SAFETY: the span is buf[0..8].
    let view = unsafe { TensorView::new(&t, 0) }.unwrap();
    assert_eq!(
        kind(M::view_from_dlpack(&view)),
        ErrorKind::StrideMismatch {
            axis: 1,
            expected: 2,
            found: 3
        }
    );
    assert!(M::from_dlpack_copy(&view).is_ok());

    // Read-only: a READ_ONLY tensor never becomes a mutable view.
    let mut shape = [2, 3];
    let mut strides = [1, 2];
    let t = raw(base, &mut shape, Some(&mut strides), 0, Device::CPU);
    // SAFETY: describes part of `buf`, exclusively ours.
    let r = unsafe { TensorViewMut::new(&t, flags::READ_ONLY) };
    assert_eq!(kind(r), ErrorKind::ReadOnly);
    // ...but it does as a shared one.
    // SAFETY: as above.
    let view = unsafe { TensorView::new(&t, flags::READ_ONLY) }.unwrap();
    assert!(M::view_from_dlpack(&view).is_ok());

    // Refusals through FromDlpack drop the tensor (its deleter runs; Miri checks leaks).
    let m = SmallMatrix::<f64, 3, 2>::zero();
    assert_eq!(
        kind(M::from_dlpack(m.to_dlpack().unwrap())),
        ErrorKind::ShapeMismatch {
            axis: 0,
            expected: 2,
            found: 3
        }
    );
    let v = vec![1.0_f64; 6];
    assert_eq!(
        kind(M::from_dlpack(v.to_dlpack().unwrap())),
        ErrorKind::RankMismatch {
            expected: 2,
            found: 1
        }
    );
    let _ = &mut buf;
}

#[test]
fn legacy_round_trip() {
    let m = coded::<3, 2, RowMajor, 1>();
    let legacy = (&m).to_dlpack().unwrap().into_legacy();
    let view = legacy.view();
    let back = SmallMatrix::<f64, 3, 2, ColumnMajor, 1>::from_dlpack_copy(&view).unwrap();
    assert_eq!(back, m.to_order());
}

/// Fewer cases under Miri, and no failure files (Miri isolates the file system).
fn config() -> ProptestConfig {
    if cfg!(miri) {
        ProptestConfig {
            cases: 3,
            failure_persistence: None,
            ..ProptestConfig::default()
        }
    } else {
        ProptestConfig::with_cases(128)
    }
}

fn entries(n: usize) -> impl Strategy<Value = Vec<i32>> {
    prop::collection::vec(any::<i32>(), n)
}

proptest! {
    #![proptest_config(config())]

    /// Export then import is the identity for every order/START pair, copying or not, and
    /// crossing orders copies correctly.
    #[test]
    fn round_trips(v in entries(20)) {
        let cm0 = SmallMatrix::<i32, 4, 5, ColumnMajor, 0>::from_slice(&v).unwrap();
        let rm1 = SmallMatrix::<i32, 4, 5, RowMajor, 1>::from_slice(&v).unwrap();
        for t in [(&cm0).to_dlpack().unwrap(), cm0.to_dlpack().unwrap()] {
            let view = t.view();
            prop_assert_eq!(
                SmallMatrix::<i32, 4, 5, ColumnMajor, 0>::view_from_dlpack(&view).unwrap(),
                &cm0
            );
            let r = SmallMatrix::<i32, 4, 5, RowMajor, 1>::from_dlpack_copy(&view).unwrap();
            prop_assert_eq!(r.to_order::<ColumnMajor>().with_start::<0>(), cm0);
        }
        let t = (&rm1).to_dlpack().unwrap();
        let back = SmallMatrix::<i32, 4, 5, RowMajor, 1>::view_from_dlpack(&t.view()).unwrap();
        prop_assert_eq!(back, &rm1);
        let c = SmallMatrix::<i32, 4, 5, ColumnMajor, 0>::from_dlpack(t).unwrap();
        for i in 0..4 {
            for j in 0..5 {
                prop_assert_eq!(c[(i, j)], rm1[(i + 1, j + 1)]);
            }
        }
    }
}
