//! Raw bindings to the HIP runtime (`libamdhip64`), loaded at run time: the few types
//! and constants of `hip_runtime_api.h` the arenas use, and a table of the twelve
//! functions resolved from the library with `libloading`. No safety is added here; the
//! arenas in the parent module are the safe layer.
//!
//! The `hip-sys` crate is not used: its build script needs ROCm installed and it links
//! the runtime, which breaks builds and binaries on machines without ROCm. The C names are
//! kept so that the code reads against the HIP headers.
#![expect(non_camel_case_types, reason = "C type names from hip_runtime_api.h")]
#![expect(
    non_upper_case_globals,
    reason = "C enumerator names from hip_runtime_api.h"
)]
#![expect(non_snake_case, reason = "C function names from hip_runtime_api.h")]

use core::ffi::{c_char, c_int, c_uint, c_void};
use core::mem::size_of;

/// Runtime library names tried, in order.
#[cfg(target_os = "windows")]
pub const LIBRARY_NAMES: &[&str] = &["amdhip64.dll", "amdhip64_6.dll"];
/// Runtime library names tried, in order.
#[cfg(not(target_os = "windows"))]
pub const LIBRARY_NAMES: &[&str] = &[
    "libamdhip64.so",
    "libamdhip64.so.7",
    "libamdhip64.so.6",
    "libamdhip64.so.5",
];

/// `hipError_t` (a C enum: `int`-sized on every platform HIP supports).
pub(crate) type hipError_t = c_int;
/// `hipSuccess`.
pub(crate) const hipSuccess: hipError_t = 0;
/// `hipErrorOutOfMemory`.
pub(crate) const hipErrorOutOfMemory: hipError_t = 2;
/// `hipErrorNoDevice`.
pub(crate) const hipErrorNoDevice: hipError_t = 100;

/// `hipMemcpyKind` (a C enum).
pub(crate) type hipMemcpyKind = c_int;
/// `hipMemcpyHostToDevice`.
pub(crate) const hipMemcpyHostToDevice: hipMemcpyKind = 1;
/// `hipMemcpyDeviceToHost`.
pub(crate) const hipMemcpyDeviceToHost: hipMemcpyKind = 2;
/// `hipMemcpyDeviceToDevice`.
pub(crate) const hipMemcpyDeviceToDevice: hipMemcpyKind = 3;

/// `hipHostMallocDefault` (flags of `hipHostMalloc`).
pub(crate) const hipHostMallocDefault: c_uint = 0;
/// `hipMemAttachGlobal` (flags of `hipMallocManaged`).
pub(crate) const hipMemAttachGlobal: c_uint = 1;

// The ABI the function table relies on: the enums are passed and returned as 32-bit
// `int`, the flags as 32-bit `unsigned int`, sizes as `size_t`, pointers as pointers.
const _: () = assert!(size_of::<hipError_t>() == 4);
const _: () = assert!(size_of::<hipMemcpyKind>() == 4);
const _: () = assert!(size_of::<c_uint>() == 4);
const _: () = assert!(size_of::<usize>() == size_of::<*mut c_void>());

/// The HIP runtime functions, resolved from one loaded library that the table keeps
/// alive, so every pointer stays valid as long as the table does.
pub(crate) struct HipApi {
    pub(crate) hipGetDeviceCount: unsafe extern "C" fn(*mut c_int) -> hipError_t,
    pub(crate) hipSetDevice: unsafe extern "C" fn(c_int) -> hipError_t,
    pub(crate) hipMalloc: unsafe extern "C" fn(*mut *mut c_void, usize) -> hipError_t,
    pub(crate) hipFree: unsafe extern "C" fn(*mut c_void) -> hipError_t,
    pub(crate) hipHostMalloc: unsafe extern "C" fn(*mut *mut c_void, usize, c_uint) -> hipError_t,
    pub(crate) hipHostFree: unsafe extern "C" fn(*mut c_void) -> hipError_t,
    pub(crate) hipMallocManaged:
        unsafe extern "C" fn(*mut *mut c_void, usize, c_uint) -> hipError_t,
    pub(crate) hipMemcpy:
        unsafe extern "C" fn(*mut c_void, *const c_void, usize, hipMemcpyKind) -> hipError_t,
    pub(crate) hipMemset: unsafe extern "C" fn(*mut c_void, c_int, usize) -> hipError_t,
    pub(crate) hipDeviceSynchronize: unsafe extern "C" fn() -> hipError_t,
    pub(crate) hipRuntimeGetVersion: unsafe extern "C" fn(*mut c_int) -> hipError_t,
    pub(crate) hipGetErrorString: unsafe extern "C" fn(hipError_t) -> *const c_char,
    _lib: libloading::Library,
}

macro_rules! sym {
    ($lib:ident, $name:ident) => {
        // SAFETY: the symbol is the HIP runtime function of this name, whose C signature
        // is the field's type (hip_runtime_api.h); the pointer stays valid while `_lib`,
        // moved into the same table, is loaded.
        *unsafe { $lib.get(concat!(stringify!($name), "\0").as_bytes()) }
            .map_err(|_| stringify!($name))?
    };
}

impl HipApi {
    /// Resolves every function from `lib` (an opened HIP runtime) and keeps `lib`.
    ///
    /// # Errors
    /// The name of the first function the library does not export.
    pub(crate) fn load(lib: libloading::Library) -> Result<Self, &'static str> {
        Ok(Self {
            hipGetDeviceCount: sym!(lib, hipGetDeviceCount),
            hipSetDevice: sym!(lib, hipSetDevice),
            hipMalloc: sym!(lib, hipMalloc),
            hipFree: sym!(lib, hipFree),
            hipHostMalloc: sym!(lib, hipHostMalloc),
            hipHostFree: sym!(lib, hipHostFree),
            hipMallocManaged: sym!(lib, hipMallocManaged),
            hipMemcpy: sym!(lib, hipMemcpy),
            hipMemset: sym!(lib, hipMemset),
            hipDeviceSynchronize: sym!(lib, hipDeviceSynchronize),
            hipRuntimeGetVersion: sym!(lib, hipRuntimeGetVersion),
            hipGetErrorString: sym!(lib, hipGetErrorString),
            _lib: lib,
        })
    }
}
