//! The ABI at run time: every struct's size, alignment and field offsets, and every
//! device, dtype and flag constant, equal the values of the official `dlpack.h` (v1.3),
//! written out in this file (`c_interop.rs` checks them against a C compiler that includes
//! the header itself).

use amrex_dlpack_core::ffi::{
    DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, DLManagedTensor, DLManagedTensorVersioned,
    DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION, DLPackVersion, DLTensor, flags,
};
use amrex_dlpack_core::{DataType, Device, DlpackElement};
use core::mem::{align_of, offset_of, size_of};

#[test]
#[cfg(target_pointer_width = "64")]
fn struct_layouts_match_the_header() {
    // (size, align) of each struct.
    assert_eq!(
        (size_of::<DLPackVersion>(), align_of::<DLPackVersion>()),
        (8, 4)
    );
    assert_eq!((size_of::<DLDevice>(), align_of::<DLDevice>()), (8, 4));
    assert_eq!((size_of::<DLDataType>(), align_of::<DLDataType>()), (4, 2));
    assert_eq!((size_of::<DLTensor>(), align_of::<DLTensor>()), (48, 8));
    assert_eq!(
        (size_of::<DLManagedTensor>(), align_of::<DLManagedTensor>()),
        (64, 8)
    );
    assert_eq!(
        (
            size_of::<DLManagedTensorVersioned>(),
            align_of::<DLManagedTensorVersioned>()
        ),
        (80, 8)
    );
    // Field offsets, in declaration order.
    assert_eq!(
        [
            offset_of!(DLPackVersion, major),
            offset_of!(DLPackVersion, minor)
        ],
        [0, 4]
    );
    assert_eq!(
        [
            offset_of!(DLDevice, device_type),
            offset_of!(DLDevice, device_id)
        ],
        [0, 4]
    );
    assert_eq!(
        [
            offset_of!(DLDataType, code),
            offset_of!(DLDataType, bits),
            offset_of!(DLDataType, lanes)
        ],
        [0, 1, 2]
    );
    assert_eq!(
        [
            offset_of!(DLTensor, data),
            offset_of!(DLTensor, device),
            offset_of!(DLTensor, ndim),
            offset_of!(DLTensor, dtype),
            offset_of!(DLTensor, shape),
            offset_of!(DLTensor, strides),
            offset_of!(DLTensor, byte_offset),
        ],
        [0, 8, 16, 20, 24, 32, 40]
    );
    assert_eq!(
        [
            offset_of!(DLManagedTensor, dl_tensor),
            offset_of!(DLManagedTensor, manager_ctx),
            offset_of!(DLManagedTensor, deleter),
        ],
        [0, 48, 56]
    );
    assert_eq!(
        [
            offset_of!(DLManagedTensorVersioned, version),
            offset_of!(DLManagedTensorVersioned, manager_ctx),
            offset_of!(DLManagedTensorVersioned, deleter),
            offset_of!(DLManagedTensorVersioned, flags),
            offset_of!(DLManagedTensorVersioned, dl_tensor),
        ],
        [0, 8, 16, 24, 32]
    );
    // The newtypes are exactly their integers, and the deleter is one nullable pointer.
    assert_eq!(size_of::<DLDeviceType>(), size_of::<i32>());
    assert_eq!(size_of::<DLDataTypeCode>(), size_of::<u8>());
    assert_eq!(
        size_of::<Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>>(),
        size_of::<usize>()
    );
}

#[test]
fn fixed_offsets_hold_on_every_target() {
    // What a consumer reads of a tensor of an unknown major version must not move.
    let p = size_of::<usize>();
    assert_eq!(offset_of!(DLManagedTensorVersioned, version), 0);
    assert_eq!(offset_of!(DLManagedTensorVersioned, manager_ctx), 8);
    assert_eq!(offset_of!(DLManagedTensorVersioned, deleter), 8 + p);
    assert_eq!(offset_of!(DLTensor, device), p);
}

#[test]
fn device_type_constants_match_the_header() {
    let table = [
        (DLDeviceType::CPU, 1, "kDLCPU"),
        (DLDeviceType::CUDA, 2, "kDLCUDA"),
        (DLDeviceType::CUDA_HOST, 3, "kDLCUDAHost"),
        (DLDeviceType::OPENCL, 4, "kDLOpenCL"),
        (DLDeviceType::VULKAN, 7, "kDLVulkan"),
        (DLDeviceType::METAL, 8, "kDLMetal"),
        (DLDeviceType::VPI, 9, "kDLVPI"),
        (DLDeviceType::ROCM, 10, "kDLROCM"),
        (DLDeviceType::ROCM_HOST, 11, "kDLROCMHost"),
        (DLDeviceType::EXT_DEV, 12, "kDLExtDev"),
        (DLDeviceType::CUDA_MANAGED, 13, "kDLCUDAManaged"),
        (DLDeviceType::ONE_API, 14, "kDLOneAPI"),
        (DLDeviceType::WEBGPU, 15, "kDLWebGPU"),
        (DLDeviceType::HEXAGON, 16, "kDLHexagon"),
        (DLDeviceType::MAIA, 17, "kDLMAIA"),
        (DLDeviceType::TRN, 18, "kDLTrn"),
    ];
    for (t, code, name) in table {
        assert_eq!(t.0, code, "{name}");
        assert!(t.is_known(), "{name}");
        assert_eq!(t.name(), Some(name));
    }
    // Gaps and values outside the header are unknown.
    for code in [i32::MIN, -1, 0, 5, 6, 19, 99, i32::MAX] {
        assert!(!DLDeviceType(code).is_known(), "{code}");
        assert_eq!(DLDeviceType(code).name(), None);
    }
    assert_eq!(Device::CPU, Device::new(DLDeviceType::CPU, 0));
    // Host accessibility: plain, pinned and managed memory only.
    let host: Vec<i32> = (-2..30)
        .filter(|&c| Device::new(DLDeviceType(c), 0).is_host_accessible())
        .collect();
    assert_eq!(host, [1, 3, 11, 13]);
}

#[test]
fn dtype_code_constants_match_the_header() {
    let table = [
        (DLDataTypeCode::INT, 0),
        (DLDataTypeCode::UINT, 1),
        (DLDataTypeCode::FLOAT, 2),
        (DLDataTypeCode::OPAQUE_HANDLE, 3),
        (DLDataTypeCode::BFLOAT, 4),
        (DLDataTypeCode::COMPLEX, 5),
        (DLDataTypeCode::BOOL, 6),
        (DLDataTypeCode::FLOAT8_E3M4, 7),
        (DLDataTypeCode::FLOAT8_E4M3, 8),
        (DLDataTypeCode::FLOAT8_E4M3B11FNUZ, 9),
        (DLDataTypeCode::FLOAT8_E4M3FN, 10),
        (DLDataTypeCode::FLOAT8_E4M3FNUZ, 11),
        (DLDataTypeCode::FLOAT8_E5M2, 12),
        (DLDataTypeCode::FLOAT8_E5M2FNUZ, 13),
        (DLDataTypeCode::FLOAT8_E8M0FNU, 14),
        (DLDataTypeCode::FLOAT6_E2M3FN, 15),
        (DLDataTypeCode::FLOAT6_E3M2FN, 16),
        (DLDataTypeCode::FLOAT4_E2M1FN, 17),
    ];
    for (i, (c, code)) in table.into_iter().enumerate() {
        assert_eq!(c.0, code);
        assert_eq!(usize::from(code), i, "codes are dense 0..=17");
        assert!(c.is_known());
    }
    for code in [18u8, 99, 200, 255] {
        assert!(!DLDataTypeCode(code).is_known());
    }
}

#[test]
fn element_dtypes() {
    fn check<T: DlpackElement>(code: DLDataTypeCode, bits: u8) {
        let dt = DataType::of::<T>();
        assert_eq!((dt.code, dt.bits, dt.lanes), (code, bits, 1));
        assert_eq!(dt.size_in_bytes(), Some(size_of::<T>()));
    }
    use DLDataTypeCode as C;
    check::<bool>(C::BOOL, 8);
    check::<i8>(C::INT, 8);
    check::<i16>(C::INT, 16);
    check::<i32>(C::INT, 32);
    check::<i64>(C::INT, 64);
    check::<u8>(C::UINT, 8);
    check::<u16>(C::UINT, 16);
    check::<u32>(C::UINT, 32);
    check::<u64>(C::UINT, 64);
    check::<f32>(C::FLOAT, 32);
    check::<f64>(C::FLOAT, 64);
    #[cfg(feature = "half")]
    {
        check::<half::f16>(C::FLOAT, 16);
        check::<half::bf16>(C::BFLOAT, 16);
    }
    #[cfg(feature = "num-complex")]
    {
        check::<num_complex::Complex<f32>>(C::COMPLEX, 64);
        check::<num_complex::Complex<f64>>(C::COMPLEX, 128);
    }
    // Sub-byte floats occupy one (padded) byte; nonsense widths have no size.
    assert_eq!(
        DataType::scalar(DLDataTypeCode::FLOAT4_E2M1FN, 4).size_in_bytes(),
        Some(1)
    );
    assert_eq!(
        DataType::scalar(DLDataTypeCode::INT, 0).size_in_bytes(),
        None
    );
    assert_eq!(DataType::F64.to_string(), "float64");
    assert_eq!(
        DLDataType {
            lanes: 4,
            ..DataType::F32
        }
        .to_string(),
        "float32x4"
    );
}

#[test]
fn flag_and_version_constants_match_the_header() {
    assert_eq!(flags::READ_ONLY, 1);
    assert_eq!(flags::IS_COPIED, 2);
    assert_eq!(flags::IS_SUBBYTE_TYPE_PADDED, 4);
    assert_eq!((DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION), (1, 3));
    assert_eq!(DLPackVersion::CURRENT, DLPackVersion { major: 1, minor: 3 });
}
