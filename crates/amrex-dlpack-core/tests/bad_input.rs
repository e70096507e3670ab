//! Refused imports (unknown device or dtype, major version 2, `lanes != 1`, `ndim < 0`,
//! negative extents, overflowing spans, ...): each malformed tensor gives its own `ErrorKind`,
//! through `TensorView::new`, `ManagedTensor::from_raw` and `LegacyManagedTensor::from_raw`
//! alike, and every refused managed tensor is freed exactly once. Typed access refusals (dtype,
//! device, alignment, READ_ONLY) come after.
#![cfg(feature = "alloc")]

mod common;

use amrex_dlpack_core::ffi::flags;
use amrex_dlpack_core::{
    DLDataTypeCode, DLDeviceType, DataType, Device, ErrorKind, FromDlpack, LegacyManagedTensor,
    ManagedTensor, TensorView, TensorViewMut,
};
use common::{Data, Ptr, RawBuilder, get, kind_of, release};

/// Imports `b` three ways; all must refuse with the same kind, freeing managed tensors once.
fn refused(b: &RawBuilder) -> ErrorKind {
    let (raw, calls) = b.clone().build();
    // SAFETY: `raw` is live until `release` below.
    let dl = unsafe { &(*raw).dl_tensor };
    // SAFETY: its shape/strides pointers are valid for `ndim` entries (these cases never
    // use dangling ones) and validation does not read `data`.
    let view_kind = kind_of(unsafe { TensorView::new(dl, 0) });
    // SAFETY: `raw` came from `build` and is freed once, here.
    unsafe { release(raw) };
    assert_eq!(get(&calls), 1);

    let (raw, calls) = b.clone().build();
    // SAFETY: ownership of a live tensor passes to `from_raw`.
    let versioned_kind = kind_of(unsafe { ManagedTensor::from_raw(raw) });
    assert_eq!(get(&calls), 1, "a refused import frees exactly once");

    let (raw, calls) = b.clone().build_legacy();
    // SAFETY: as above, legacy flavour.
    let legacy_kind = kind_of(unsafe { LegacyManagedTensor::from_raw(raw) });
    assert_eq!(get(&calls), 1, "a refused legacy import frees exactly once");

    assert_eq!(view_kind, versioned_kind);
    assert_eq!(view_kind, legacy_kind);
    view_kind
}

fn f64s(shape: &[i64]) -> RawBuilder {
    RawBuilder::f64_c(shape)
}

// ---------------------------------------------------------------- pointers and versions

#[test]
fn null_managed_pointer() {
    // SAFETY: NULL is explicitly allowed.
    let k = kind_of(unsafe { ManagedTensor::from_raw(core::ptr::null_mut()) });
    assert_eq!(k, ErrorKind::NullPointer("managed tensor"));
}

#[test]
fn null_legacy_managed_pointer() {
    // SAFETY: NULL is explicitly allowed.
    let k = kind_of(unsafe { LegacyManagedTensor::from_raw(core::ptr::null_mut()) });
    assert_eq!(k, ErrorKind::NullPointer("managed tensor"));
}

#[test]
fn major_version_2_calls_the_deleter_and_reads_nothing_else() {
    // Everything past `deleter` is garbage: dangling shape and strides (reading them is UB,
    // which Miri reports and which faults natively), an address without provenance for
    // data, and a device and dtype that would be refused with other kinds.
    let b = f64s(&[2, 3])
        .version(2, 0)
        .ndim(3)
        .shape_ptr(Ptr::Dangling)
        .strides_ptr(Ptr::Dangling)
        .data(Data::Addr(8))
        .device(99, 0)
        .dtype(200, 1, 7);
    let (raw, calls) = b.build();
    // SAFETY: `version`, `manager_ctx` and `deleter` are valid, which is all a 2.x tensor
    // promises a 1.x consumer.
    let k = kind_of(unsafe { ManagedTensor::from_raw(raw) });
    assert_eq!(k, ErrorKind::UnsupportedVersion { major: 2, minor: 0 });
    assert_eq!(get(&calls), 1);
}

#[test]
fn major_version_0_refused() {
    let (raw, calls) = f64s(&[4]).version(0, 8).build();
    // SAFETY: ownership passes.
    let k = kind_of(unsafe { ManagedTensor::from_raw(raw) });
    assert_eq!(k, ErrorKind::UnsupportedVersion { major: 0, minor: 8 });
    assert_eq!(get(&calls), 1);
}

#[test]
fn major_version_max_refused() {
    let (raw, calls) = f64s(&[4]).version(u32::MAX, u32::MAX).build();
    // SAFETY: ownership passes.
    let k = kind_of(unsafe { ManagedTensor::from_raw(raw) });
    assert_eq!(
        k,
        ErrorKind::UnsupportedVersion {
            major: u32::MAX,
            minor: u32::MAX
        }
    );
    assert_eq!(get(&calls), 1);
}

#[test]
fn minor_version_9_accepted() {
    let (raw, calls) = f64s(&[4]).version(1, 9).build();
    // SAFETY: ownership passes.
    let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    assert_eq!(t.version().minor, 9);
    assert_eq!(t.as_slice::<f64>().unwrap(), &[0.0, 1.0, 2.0, 3.0]);
    drop(t);
    assert_eq!(get(&calls), 1);
}

#[test]
fn legacy_accepted_writable() {
    let (raw, calls) = f64s(&[2, 2]).strides_ptr(Ptr::Null).build_legacy();
    // SAFETY: ownership passes.
    let mut t = unsafe { LegacyManagedTensor::from_raw(raw) }.unwrap();
    assert_eq!(t.flags(), 0);
    assert_eq!(t.view().stride(0), 2);
    let mut v = t.view_mut().unwrap().typed_mut::<f64>().unwrap();
    *v.get_mut(&[1, 1]).unwrap() = 30.0;
    assert_eq!(
        t.view().typed::<f64>().unwrap().to_vec(),
        [0.0, 1.0, 2.0, 30.0]
    );
    drop(t);
    assert_eq!(get(&calls), 1);
}

// ---------------------------------------------------------------- rank and extents

#[test]
fn rank_minus_one() {
    assert_eq!(refused(&f64s(&[2]).ndim(-1)), ErrorKind::NegativeRank(-1));
}

#[test]
fn rank_i32_min() {
    assert_eq!(
        refused(&f64s(&[2]).ndim(i32::MIN)),
        ErrorKind::NegativeRank(i32::MIN)
    );
}

#[test]
fn negative_extent() {
    let b = f64s(&[2, 3]).shape(&[2, -3]);
    assert_eq!(
        refused(&b),
        ErrorKind::NegativeExtent {
            axis: 1,
            extent: -3
        }
    );
}

#[test]
fn negative_extent_in_a_zero_size_tensor() {
    let b = f64s(&[0, 3]).shape(&[0, i64::MIN]).data(Data::Null);
    assert_eq!(
        refused(&b),
        ErrorKind::NegativeExtent {
            axis: 1,
            extent: i64::MIN
        }
    );
}

#[test]
fn extent_product_overflow() {
    let b = f64s(&[2, 2])
        .shape(&[1 << 32, 1 << 32])
        .strides(&[1 << 32, 1]);
    assert_eq!(refused(&b), ErrorKind::SpanOverflow);
}

#[test]
fn extent_product_overflow_with_zero_strides() {
    // Broadcast strides reach one element, but the element count still overflows.
    let b = f64s(&[2, 2]).shape(&[i64::MAX, 3]).strides(&[0, 0]);
    assert_eq!(refused(&b), ErrorKind::SpanOverflow);
}

#[test]
fn zero_size_tensor_whose_other_extents_overflow_isize() {
    // Nothing to read, but ndarray (and slices) need the product of the non-zero extents
    // to fit isize, so the tensor is refused rather than handed on.
    let b = f64s(&[0, 2, 2])
        .shape(&[0, 1 << 40, 1 << 40])
        .data(Data::Null);
    assert_eq!(refused(&b), ErrorKind::SpanOverflow);
    let b = f64s(&[0, 2, 2]).shape(&[3, 1 << 62, 0]).data(Data::Null);
    assert_eq!(refused(&b), ErrorKind::SpanOverflow);
}

#[test]
fn element_count_above_isize_max() {
    // 3 * 2^62 broadcast elements: fits usize, not isize.
    let b = f64s(&[2, 2]).shape(&[3, 1 << 62]).strides(&[0, 0]);
    assert_eq!(refused(&b), ErrorKind::SpanOverflow);
}

#[test]
fn stride_times_extent_overflow() {
    let b = f64s(&[3]).strides(&[i64::MAX / 2 + 1]);
    assert_eq!(refused(&b), ErrorKind::SpanOverflow);
}

#[test]
fn stride_sum_overflow() {
    let b = f64s(&[2, 2]).strides(&[i64::MAX, i64::MAX]);
    assert_eq!(refused(&b), ErrorKind::SpanOverflow);
}

#[test]
fn negative_stride_overflow() {
    let b = f64s(&[3]).strides(&[i64::MIN]);
    assert_eq!(refused(&b), ErrorKind::SpanOverflow);
}

#[test]
fn span_in_bytes_overflow() {
    // 2^61 f64 elements: the element offsets fit i64, the bytes do not.
    let b = f64s(&[4]).shape(&[1 << 61]).strides(&[1]);
    assert_eq!(refused(&b), ErrorKind::SpanOverflow);
}

#[test]
fn span_below_address_zero() {
    let b = f64s(&[4]).shape(&[100]).strides(&[-1]).data(Data::Addr(64));
    assert_eq!(refused(&b), ErrorKind::SpanOverflow);
}

#[test]
fn span_past_the_address_space() {
    let b = f64s(&[4]).shape(&[100]).data(Data::Addr(usize::MAX - 63));
    assert_eq!(refused(&b), ErrorKind::SpanOverflow);
}

#[test]
fn byte_offset_overflow() {
    let b = f64s(&[4]).byte_offset(u64::MAX - 7);
    assert_eq!(refused(&b), ErrorKind::SpanOverflow);
}

#[test]
fn byte_offset_past_the_address_space() {
    let b = f64s(&[4])
        .data(Data::Addr(usize::MAX / 2 + 4096))
        .byte_offset(isize::MAX as u64 - 8);
    assert_eq!(refused(&b), ErrorKind::SpanOverflow);
}

#[test]
fn null_data_with_elements() {
    assert_eq!(
        refused(&f64s(&[2, 3]).data(Data::Null)),
        ErrorKind::NullData
    );
}

#[test]
fn null_data_for_a_scalar() {
    // A scalar has one element.
    let b = f64s(&[]).data(Data::Null);
    assert_eq!(refused(&b), ErrorKind::NullData);
}

#[test]
fn null_shape_with_positive_rank() {
    let b = f64s(&[2, 3]).shape_ptr(Ptr::Null);
    assert_eq!(refused(&b), ErrorKind::NullPointer("shape"));
}

// ---------------------------------------------------------------- devices

#[test]
fn unknown_device_99() {
    assert_eq!(
        refused(&f64s(&[2]).device(99, 0)),
        ErrorKind::UnknownDeviceType(99)
    );
}

#[test]
fn unknown_device_0_and_gaps() {
    for code in [0, 5, 6, 19, -1] {
        assert_eq!(
            refused(&f64s(&[2]).device(code, 0)),
            ErrorKind::UnknownDeviceType(code)
        );
    }
}

// ---------------------------------------------------------------- dtypes

#[test]
fn dtype_code_200() {
    let k = refused(&f64s(&[2]).dtype(200, 64, 1));
    assert_eq!(
        k,
        ErrorKind::UnsupportedDtype(DataType::scalar(DLDataTypeCode(200), 64))
    );
}

#[test]
fn lanes_4() {
    assert_eq!(refused(&f64s(&[2]).dtype(2, 32, 4)), ErrorKind::Lanes(4));
}

#[test]
fn lanes_0() {
    assert_eq!(refused(&f64s(&[2]).dtype(2, 64, 0)), ErrorKind::Lanes(0));
}

#[test]
fn float6_with_8_bits() {
    for code in [15, 16] {
        let k = refused(&f64s(&[2]).dtype(code, 8, 1));
        assert_eq!(
            k,
            ErrorKind::UnsupportedDtype(DataType::scalar(DLDataTypeCode(code), 8))
        );
    }
}

#[test]
fn float4_with_8_bits() {
    let k = refused(&f64s(&[2]).dtype(17, 8, 1));
    assert_eq!(
        k,
        ErrorKind::UnsupportedDtype(DataType::scalar(DLDataTypeCode::FLOAT4_E2M1FN, 8))
    );
}

#[test]
fn float8_with_16_bits() {
    for code in 7..=14 {
        let k = refused(&f64s(&[2]).dtype(code, 16, 1));
        assert_eq!(
            k,
            ErrorKind::UnsupportedDtype(DataType::scalar(DLDataTypeCode(code), 16))
        );
    }
}

#[test]
fn bool_with_16_bits() {
    let k = refused(&f64s(&[2]).dtype(6, 16, 1));
    assert_eq!(
        k,
        ErrorKind::UnsupportedDtype(DataType::scalar(DLDataTypeCode::BOOL, 16))
    );
}

#[test]
fn int_with_odd_widths() {
    for bits in [0, 1, 7, 24, 128] {
        let k = refused(&f64s(&[2]).dtype(0, bits, 1));
        assert_eq!(
            k,
            ErrorKind::UnsupportedDtype(DataType::scalar(DLDataTypeCode::INT, bits))
        );
    }
}

#[test]
fn bfloat_with_32_bits() {
    let k = refused(&f64s(&[2]).dtype(4, 32, 1));
    assert_eq!(
        k,
        ErrorKind::UnsupportedDtype(DataType::scalar(DLDataTypeCode::BFLOAT, 32))
    );
}

#[test]
fn complex_with_16_bits() {
    let k = refused(&f64s(&[2]).dtype(5, 16, 1));
    assert_eq!(
        k,
        ErrorKind::UnsupportedDtype(DataType::scalar(DLDataTypeCode::COMPLEX, 16))
    );
}

#[test]
fn opaque_handle_not_pointer_sized() {
    let bits = if cfg!(target_pointer_width = "64") {
        32
    } else {
        64
    };
    let k = refused(&f64s(&[2]).dtype(3, bits, 1));
    assert_eq!(
        k,
        ErrorKind::UnsupportedDtype(DataType::scalar(DLDataTypeCode::OPAQUE_HANDLE, bits))
    );
}

#[test]
fn sub_byte_floats_with_right_widths_accepted() {
    for (code, bits) in [(15, 6), (16, 6), (17, 4), (7, 8), (14, 8)] {
        let (raw, calls) = f64s(&[3]).dtype(code, bits, 1).build();
        // SAFETY: ownership passes.
        let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
        assert_eq!(t.view().element_size(), 1);
        drop(t);
        assert_eq!(get(&calls), 1);
    }
}

#[test]
fn legacy_refusal_frees_once() {
    let (raw, calls) = f64s(&[2]).dtype(2, 64, 2).build_legacy();
    // SAFETY: ownership passes.
    let k = kind_of(unsafe { LegacyManagedTensor::from_raw(raw) });
    assert_eq!(k, ErrorKind::Lanes(2));
    assert_eq!(get(&calls), 1);
}

// ---------------------------------------------------------------- typed access

/// Imports a well-formed tensor, runs `f` on it, and checks that it was freed once.
fn imported(b: RawBuilder, f: impl FnOnce(&mut ManagedTensor<'static>)) {
    let (raw, calls) = b.build();
    // SAFETY: ownership passes.
    let mut t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    f(&mut t);
    assert_eq!(get(&calls), 0);
    drop(t);
    assert_eq!(get(&calls), 1);
}

#[test]
fn dtype_mismatch_f64_as_f32() {
    imported(f64s(&[3]), |t| {
        assert_eq!(
            kind_of(t.view().typed::<f32>()),
            ErrorKind::DtypeMismatch {
                expected: DataType::F32,
                found: DataType::F64
            }
        );
    });
}

#[test]
fn dtype_mismatch_same_width_other_code() {
    imported(f64s(&[3]).dtype(0, 64, 1), |t| {
        assert_eq!(
            kind_of(t.view().typed::<u64>()),
            ErrorKind::DtypeMismatch {
                expected: DataType::U64,
                found: DataType::I64
            }
        );
        assert_eq!(t.view().typed::<i64>().unwrap().to_vec().len(), 3);
    });
}

#[test]
fn device_not_host_accessible() {
    for (code, id) in [(2, 1), (10, 0), (14, 3), (4, 0)] {
        imported(f64s(&[3]).device(code, id), |t| {
            let dev = Device::new(DLDeviceType(code), id);
            assert_eq!(
                kind_of(t.view().typed::<f64>()),
                ErrorKind::NotHostAccessible(dev)
            );
            assert_eq!(
                kind_of(t.as_slice::<f64>()),
                ErrorKind::NotHostAccessible(dev)
            );
            // Untyped access to a device tensor is fine.
            assert_eq!(t.device(), dev);
            assert_eq!(t.shape(), &[3]);
        });
    }
}

#[test]
fn host_accessible_devices_allow_typed_access() {
    for code in [3, 11, 13] {
        imported(f64s(&[3]).device(code, 0), |t| {
            assert_eq!(t.as_slice::<f64>().unwrap(), &[0.0, 1.0, 2.0]);
        });
    }
}

#[test]
fn misaligned_first_element() {
    imported(f64s(&[2]).byte_offset(4), |t| {
        let addr = t.view().data_ptr().addr();
        assert_eq!(addr % 8, 4);
        assert_eq!(
            kind_of(t.view().typed::<f64>()),
            ErrorKind::Misaligned {
                address: addr,
                align: 8
            }
        );
        // The same bytes as u8 are fine.
    });
}

#[test]
fn misaligned_data_with_realigning_byte_offset_is_accepted() {
    // `data` itself need not be aligned; only `data + byte_offset` must be.
    imported(
        f64s(&[4])
            .shape(&[2])
            .data(Data::Backing(3))
            .byte_offset(13),
        |t| {
            assert_eq!(t.as_slice::<f64>().unwrap(), &[2.0, 3.0]);
        },
    );
}

#[test]
fn read_only_refused_for_view_mut() {
    imported(f64s(&[3]).flags(flags::READ_ONLY), |t| {
        assert!(t.is_read_only());
        assert_eq!(kind_of(t.view_mut()), ErrorKind::ReadOnly);
        assert_eq!(kind_of(t.as_mut_slice::<f64>()), ErrorKind::ReadOnly);
        // Reading is fine.
        assert_eq!(t.as_slice::<f64>().unwrap(), &[0.0, 1.0, 2.0]);
    });
}

#[test]
fn read_only_refused_for_tensor_view_mut() {
    let (raw, calls) = f64s(&[3]).build();
    // SAFETY: `raw` is live until `release` below.
    let dl = unsafe { &(*raw).dl_tensor };
    // SAFETY: well formed; nothing else touches it during the call.
    let k = kind_of(unsafe { TensorViewMut::new(dl, flags::READ_ONLY) });
    assert_eq!(k, ErrorKind::ReadOnly);
    // SAFETY: freed once.
    unsafe { release(raw) };
    assert_eq!(get(&calls), 1);
}

#[test]
fn read_only_slice_export_refuses_mutation() {
    let data = [1u8, 2, 3];
    let mut t = ManagedTensor::from_slice(&data);
    assert_eq!(kind_of(t.view_mut()), ErrorKind::ReadOnly);
    assert_eq!(kind_of(t.as_mut_slice::<u8>()), ErrorKind::ReadOnly);
}

#[test]
fn device_and_rank_expectations() {
    imported(f64s(&[2, 3]).device(2, 1), |t| {
        let found = Device::new(DLDeviceType::CUDA, 1);
        assert_eq!(
            kind_of(t.view().expect_device(Device::CPU)),
            ErrorKind::DeviceMismatch {
                expected: Device::CPU,
                found
            }
        );
        assert_eq!(
            kind_of(t.view().expect_ndim(3)),
            ErrorKind::RankMismatch {
                expected: 3,
                found: 2
            }
        );
        assert!(t.view().expect_device(found).is_ok());
    });
}

#[test]
fn slice_of_strided_or_multi_dimensional_tensor() {
    imported(f64s(&[6]).shape(&[3]).strides(&[2]), |t| {
        assert_eq!(
            kind_of(t.as_slice::<f64>()),
            ErrorKind::NonUnitStride { axis: 0, stride: 2 }
        );
        assert_eq!(t.view().typed::<f64>().unwrap().to_vec(), [0.0, 2.0, 4.0]);
    });
    imported(f64s(&[2, 3]), |t| {
        assert_eq!(
            kind_of(t.as_slice::<f64>()),
            ErrorKind::RankMismatch {
                expected: 1,
                found: 2
            }
        );
    });
}

#[test]
fn vec_from_dlpack_wrong_rank_frees_once() {
    let (raw, calls) = f64s(&[2, 3]).build();
    // SAFETY: ownership passes.
    let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    let k = kind_of(Vec::<f64>::from_dlpack(t));
    assert_eq!(
        k,
        ErrorKind::RankMismatch {
            expected: 1,
            found: 2
        }
    );
    assert_eq!(
        get(&calls),
        1,
        "the deleter ran before from_dlpack returned"
    );
}

#[test]
fn vec_from_dlpack_wrong_dtype_frees_once() {
    let (raw, calls) = f64s(&[3]).build();
    // SAFETY: ownership passes.
    let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    let k = kind_of(Vec::<i32>::from_dlpack(t));
    assert!(matches!(k, ErrorKind::DtypeMismatch { .. }), "{k:?}");
    assert_eq!(get(&calls), 1);
}

#[test]
fn out_of_range_indices_are_none() {
    imported(f64s(&[2, 3]), |t| {
        let v = t.view().typed::<f64>().unwrap();
        assert_eq!(v.get(&[1, 2]), Some(&5.0));
        assert_eq!(v.get(&[2, 0]), None);
        assert_eq!(v.get(&[0, 3]), None);
        assert_eq!(v.get(&[0]), None);
        assert_eq!(v.get(&[0, 0, 0]), None);
        // Indices above i64::MAX must not wrap to negative offsets.
        assert_eq!(v.get(&[usize::MAX, 0]), None);
        assert_eq!(v.get(&[0, 1 << 63]), None);
        assert_eq!(t.view().offset_of(&[usize::MAX, usize::MAX]), None);
    });
}

#[cfg(feature = "ndarray")]
#[test]
fn ndarray_rank_mismatch_and_overlap() {
    use ndarray::{Ix1, Ix3, IxDyn};
    imported(f64s(&[2, 3]), |t| {
        assert_eq!(
            kind_of(t.as_ndarray::<f64, Ix3>()),
            ErrorKind::RankMismatch {
                expected: 3,
                found: 2
            }
        );
        assert!(t.as_ndarray::<f64, IxDyn>().is_ok());
    });
    // A broadcast (stride 0) tensor is fine to read but not to view mutably.
    imported(f64s(&[1]).shape(&[4]).strides(&[0]), |t| {
        assert_eq!(t.as_ndarray::<f64, Ix1>().unwrap().to_vec(), [0.0; 4]);
        assert_eq!(
            kind_of(t.as_ndarray_mut::<f64, Ix1>()),
            ErrorKind::OverlappingStrides
        );
    });
    // Interleaved axes that collide: shape (2, 2) with strides (1, 1).
    imported(f64s(&[3]).shape(&[2, 2]).strides(&[1, 1]), |t| {
        assert!(t.as_ndarray_mut::<f64, IxDyn>().is_err());
    });
}
