//! `#[repr(C)]` mirrors of the DLPack 1.3 C ABI (`dlpack/dlpack.h`).
//!
//! Enumerations of the header are integer newtypes with associated constants, never Rust
//! enums: a newer producer may send a code this crate does not know, and an out-of-range
//! discriminant in a Rust enum would be undefined behaviour. Layouts are checked at compile
//! time on 64-bit targets and again at run time by the tests.

use core::ffi::c_void;

/// The DLPack major version this crate produces and accepts.
pub const DLPACK_MAJOR_VERSION: u32 = 1;
/// The DLPack minor version this crate produces.
pub const DLPACK_MINOR_VERSION: u32 = 3;

/// `DLPackVersion`: the ABI version of a versioned managed tensor.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DLPackVersion {
    /// Major version; a consumer refuses any major it does not know.
    pub major: u32,
    /// Minor version; minors are backwards compatible.
    pub minor: u32,
}

impl DLPackVersion {
    /// The version this crate produces (1.3).
    pub const CURRENT: Self = Self {
        major: DLPACK_MAJOR_VERSION,
        minor: DLPACK_MINOR_VERSION,
    };
}

/// `DLDeviceType`: where a tensor's memory lives.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DLDeviceType(pub i32);

impl DLDeviceType {
    /// `kDLCPU`: ordinary host memory.
    pub const CPU: Self = Self(1);
    /// `kDLCUDA`: CUDA device memory.
    pub const CUDA: Self = Self(2);
    /// `kDLCUDAHost`: page-locked host memory allocated by CUDA.
    pub const CUDA_HOST: Self = Self(3);
    /// `kDLOpenCL`.
    pub const OPENCL: Self = Self(4);
    /// `kDLVulkan`.
    pub const VULKAN: Self = Self(7);
    /// `kDLMetal`.
    pub const METAL: Self = Self(8);
    /// `kDLVPI`.
    pub const VPI: Self = Self(9);
    /// `kDLROCM`: HIP device memory.
    pub const ROCM: Self = Self(10);
    /// `kDLROCMHost`: page-locked host memory allocated by HIP.
    pub const ROCM_HOST: Self = Self(11);
    /// `kDLExtDev`: reserved for extension devices.
    pub const EXT_DEV: Self = Self(12);
    /// `kDLCUDAManaged`: CUDA unified (managed) memory.
    pub const CUDA_MANAGED: Self = Self(13);
    /// `kDLOneAPI`: SYCL / Level Zero unified shared memory.
    pub const ONE_API: Self = Self(14);
    /// `kDLWebGPU`.
    pub const WEBGPU: Self = Self(15);
    /// `kDLHexagon`.
    pub const HEXAGON: Self = Self(16);
    /// `kDLMAIA`.
    pub const MAIA: Self = Self(17);
    /// `kDLTrn`: AWS Trainium.
    pub const TRN: Self = Self(18);

    /// Whether the header (1.3) defines this code.
    pub const fn is_known(self) -> bool {
        matches!(self.0, 1..=4 | 7..=18)
    }

    /// The header's name for a known code (`"kDLCPU"`, ...), or `None`.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            1 => "kDLCPU",
            2 => "kDLCUDA",
            3 => "kDLCUDAHost",
            4 => "kDLOpenCL",
            7 => "kDLVulkan",
            8 => "kDLMetal",
            9 => "kDLVPI",
            10 => "kDLROCM",
            11 => "kDLROCMHost",
            12 => "kDLExtDev",
            13 => "kDLCUDAManaged",
            14 => "kDLOneAPI",
            15 => "kDLWebGPU",
            16 => "kDLHexagon",
            17 => "kDLMAIA",
            18 => "kDLTrn",
            _ => return None,
        })
    }
}

/// `DLDevice`: a device type and the device's ordinal.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DLDevice {
    /// The kind of memory.
    pub device_type: DLDeviceType,
    /// Ordinal: 0 for CPU, pinned and managed memory; the runtime ordinal for CUDA/HIP; the
    /// root device's index in the SYCL device list for oneAPI.
    pub device_id: i32,
}

/// `DLDataTypeCode`: the kind of number an element is.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DLDataTypeCode(pub u8);

impl DLDataTypeCode {
    /// `kDLInt`: signed integer.
    pub const INT: Self = Self(0);
    /// `kDLUInt`: unsigned integer.
    pub const UINT: Self = Self(1);
    /// `kDLFloat`: IEEE floating point.
    pub const FLOAT: Self = Self(2);
    /// `kDLOpaqueHandle`: an opaque pointer-sized handle.
    pub const OPAQUE_HANDLE: Self = Self(3);
    /// `kDLBfloat`: bfloat16.
    pub const BFLOAT: Self = Self(4);
    /// `kDLComplex`: complex with two floats of `bits / 2` each.
    pub const COMPLEX: Self = Self(5);
    /// `kDLBool`: boolean, 8 bits.
    pub const BOOL: Self = Self(6);
    /// `kDLFloat8_e3m4`.
    pub const FLOAT8_E3M4: Self = Self(7);
    /// `kDLFloat8_e4m3`.
    pub const FLOAT8_E4M3: Self = Self(8);
    /// `kDLFloat8_e4m3b11fnuz`.
    pub const FLOAT8_E4M3B11FNUZ: Self = Self(9);
    /// `kDLFloat8_e4m3fn`.
    pub const FLOAT8_E4M3FN: Self = Self(10);
    /// `kDLFloat8_e4m3fnuz`.
    pub const FLOAT8_E4M3FNUZ: Self = Self(11);
    /// `kDLFloat8_e5m2`.
    pub const FLOAT8_E5M2: Self = Self(12);
    /// `kDLFloat8_e5m2fnuz`.
    pub const FLOAT8_E5M2FNUZ: Self = Self(13);
    /// `kDLFloat8_e8m0fnu`.
    pub const FLOAT8_E8M0FNU: Self = Self(14);
    /// `kDLFloat6_e2m3fn` (bits must be 6).
    pub const FLOAT6_E2M3FN: Self = Self(15);
    /// `kDLFloat6_e3m2fn` (bits must be 6).
    pub const FLOAT6_E3M2FN: Self = Self(16);
    /// `kDLFloat4_e2m1fn` (bits must be 4).
    pub const FLOAT4_E2M1FN: Self = Self(17);

    /// Whether the header (1.3) defines this code.
    pub const fn is_known(self) -> bool {
        self.0 <= 17
    }
}

/// `DLDataType`: element type code, bit width and vector lanes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DLDataType {
    /// Kind of number.
    pub code: DLDataTypeCode,
    /// Bits per lane.
    pub bits: u8,
    /// Vector lanes; every array library (and this crate) requires 1.
    pub lanes: u16,
}

/// `DLTensor`: the plain (non-owning) description of a strided array.
#[repr(C)]
#[derive(Debug)]
pub struct DLTensor {
    /// Base pointer of the allocation (opaque for device memory). The first element is at
    /// `data + byte_offset`.
    pub data: *mut c_void,
    /// Where `data` lives.
    pub device: DLDevice,
    /// Number of dimensions; 0 is a scalar.
    pub ndim: i32,
    /// Element type.
    pub dtype: DLDataType,
    /// `ndim` extents.
    pub shape: *mut i64,
    /// `ndim` strides in elements, or NULL for compact row-major (legacy and pre-1.2).
    pub strides: *mut i64,
    /// Offset in bytes from `data` to the first element.
    pub byte_offset: u64,
}

/// `DLManagedTensor`: the legacy (unversioned) owning wrapper.
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensor {
    /// The tensor.
    pub dl_tensor: DLTensor,
    /// Producer's context; opaque to the consumer.
    pub manager_ctx: *mut c_void,
    /// Called once by the consumer when done, with this struct; may be NULL.
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

/// `DLManagedTensorVersioned`: the owning wrapper with a version and flags (DLPack ≥ 1.0).
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensorVersioned {
    /// ABI version of this struct.
    pub version: DLPackVersion,
    /// Producer's context; opaque to the consumer.
    pub manager_ctx: *mut c_void,
    /// Called once by the consumer when done, with this struct; may be NULL.
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    /// Bitmask of [`flags`].
    pub flags: u64,
    /// The tensor.
    pub dl_tensor: DLTensor,
}

/// Bits of [`DLManagedTensorVersioned::flags`].
pub mod flags {
    /// `DLPACK_FLAG_BITMASK_READ_ONLY`: the consumer must not write.
    pub const READ_ONLY: u64 = 1 << 0;
    /// `DLPACK_FLAG_BITMASK_IS_COPIED`: the producer copied the data for this export.
    pub const IS_COPIED: u64 = 1 << 1;
    /// `DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED`: sub-byte elements are padded to a byte.
    pub const IS_SUBBYTE_TYPE_PADDED: u64 = 1 << 2;
}

// Field-by-field layout checks against the header (x86-64 / aarch64 values). On 32-bit
// targets pointers are 4 bytes and these numbers do not apply.
#[cfg(target_pointer_width = "64")]
const _: () = {
    use core::mem::{align_of, offset_of, size_of};
    assert!(size_of::<DLPackVersion>() == 8 && align_of::<DLPackVersion>() == 4);
    assert!(offset_of!(DLPackVersion, major) == 0 && offset_of!(DLPackVersion, minor) == 4);
    assert!(size_of::<DLDevice>() == 8 && align_of::<DLDevice>() == 4);
    assert!(offset_of!(DLDevice, device_type) == 0 && offset_of!(DLDevice, device_id) == 4);
    assert!(size_of::<DLDataType>() == 4 && align_of::<DLDataType>() == 2);
    assert!(offset_of!(DLDataType, code) == 0);
    assert!(offset_of!(DLDataType, bits) == 1);
    assert!(offset_of!(DLDataType, lanes) == 2);
    assert!(size_of::<DLTensor>() == 48 && align_of::<DLTensor>() == 8);
    assert!(offset_of!(DLTensor, data) == 0);
    assert!(offset_of!(DLTensor, device) == 8);
    assert!(offset_of!(DLTensor, ndim) == 16);
    assert!(offset_of!(DLTensor, dtype) == 20);
    assert!(offset_of!(DLTensor, shape) == 24);
    assert!(offset_of!(DLTensor, strides) == 32);
    assert!(offset_of!(DLTensor, byte_offset) == 40);
    assert!(size_of::<DLManagedTensor>() == 64 && align_of::<DLManagedTensor>() == 8);
    assert!(offset_of!(DLManagedTensor, dl_tensor) == 0);
    assert!(offset_of!(DLManagedTensor, manager_ctx) == 48);
    assert!(offset_of!(DLManagedTensor, deleter) == 56);
    assert!(size_of::<DLManagedTensorVersioned>() == 80);
    assert!(align_of::<DLManagedTensorVersioned>() == 8);
    assert!(offset_of!(DLManagedTensorVersioned, version) == 0);
    assert!(offset_of!(DLManagedTensorVersioned, manager_ctx) == 8);
    assert!(offset_of!(DLManagedTensorVersioned, deleter) == 16);
    assert!(offset_of!(DLManagedTensorVersioned, flags) == 24);
    assert!(offset_of!(DLManagedTensorVersioned, dl_tensor) == 32);
};

// Offsets that hold on every target, written in terms of the pointer size.
const _: () = {
    use core::mem::{offset_of, size_of};
    const P: usize = size_of::<usize>();
    assert!(offset_of!(DLTensor, device) == P);
    assert!(offset_of!(DLManagedTensorVersioned, manager_ctx) == 8);
    assert!(offset_of!(DLManagedTensorVersioned, deleter) == 8 + P);
};
