//! HIP arenas through our own minimal bindings to `libamdhip64`, loaded at run time.
//!
//! `hip-sys` is not used: its build script needs ROCm installed and it links the runtime,
//! which breaks builds and binaries on machines without ROCm. Here the twelve functions
//! below are resolved with `libloading` when the first arena is made: a missing library is
//! [`ErrorKind::LibraryNotFound`], a missing function [`ErrorKind::SymbolNotFound`], a
//! failing device query [`ErrorKind::NoDriver`] / [`ErrorKind::NoDevice`]. Every call
//! sets the arena's device first (`hipSetDevice`).

use crate::common::{check_align, non_null, open};
use crate::{Arena, ArenaError, Backend, ErrorKind, HostAccessible, MemoryKind};
use amrex_dlpack_core::{DLDeviceType, Device};
use core::{
    alloc::Layout,
    ffi::{c_char, c_int, c_uint, c_void},
    fmt,
    ptr::NonNull,
};
use std::sync::OnceLock;

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

type HipError = c_int;
const HIP_SUCCESS: HipError = 0;
const HIP_ERROR_OUT_OF_MEMORY: HipError = 2;
const HIP_ERROR_NO_DEVICE: HipError = 100;
const HIP_MEMCPY_HOST_TO_DEVICE: c_int = 1;
const HIP_MEMCPY_DEVICE_TO_HOST: c_int = 2;
const HIP_MEMCPY_DEVICE_TO_DEVICE: c_int = 3;
const HIP_HOST_MALLOC_DEFAULT: c_uint = 0;
const HIP_MEM_ATTACH_GLOBAL: c_uint = 1;
/// `hipMalloc` and `hipMallocManaged` align to at least 256 bytes.
const DEVICE_ALIGN: usize = 256;
/// `hipHostMalloc` returns whole pages.
const PINNED_ALIGN: usize = 4096;

/// The resolved HIP functions.
struct Hip {
    get_device_count: unsafe extern "C" fn(*mut c_int) -> HipError,
    set_device: unsafe extern "C" fn(c_int) -> HipError,
    malloc: unsafe extern "C" fn(*mut *mut c_void, usize) -> HipError,
    free: unsafe extern "C" fn(*mut c_void) -> HipError,
    host_malloc: unsafe extern "C" fn(*mut *mut c_void, usize, c_uint) -> HipError,
    host_free: unsafe extern "C" fn(*mut c_void) -> HipError,
    malloc_managed: unsafe extern "C" fn(*mut *mut c_void, usize, c_uint) -> HipError,
    memcpy: unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int) -> HipError,
    memset: unsafe extern "C" fn(*mut c_void, c_int, usize) -> HipError,
    device_synchronize: unsafe extern "C" fn() -> HipError,
    runtime_get_version: unsafe extern "C" fn(*mut c_int) -> HipError,
    get_error_string: unsafe extern "C" fn(HipError) -> *const c_char,
    count: i32,
    version: i32,
    _lib: libloading::Library,
}

static HIP: OnceLock<Result<Hip, ArenaError>> = OnceLock::new();

fn hip() -> Result<&'static Hip, ArenaError> {
    HIP.get_or_init(load).as_ref().map_err(|e| *e)
}

macro_rules! sym {
    ($lib:ident, $name:literal) => {
        // SAFETY: the symbol is the HIP runtime function of this name, whose C signature
        // is the field's type; the pointer lives while the library stays loaded, which it
        // does for as long as `Hip` (stored in a static).
        *unsafe { $lib.get(concat!($name, "\0").as_bytes()) }.map_err(|_| {
            ArenaError::new(ErrorKind::SymbolNotFound {
                backend: Backend::Hip,
                symbol: $name,
            })
        })?
    };
}

fn load() -> Result<Hip, ArenaError> {
    let lib = open(Backend::Hip, LIBRARY_NAMES)?;
    let mut hip = Hip {
        get_device_count: sym!(lib, "hipGetDeviceCount"),
        set_device: sym!(lib, "hipSetDevice"),
        malloc: sym!(lib, "hipMalloc"),
        free: sym!(lib, "hipFree"),
        host_malloc: sym!(lib, "hipHostMalloc"),
        host_free: sym!(lib, "hipHostFree"),
        malloc_managed: sym!(lib, "hipMallocManaged"),
        memcpy: sym!(lib, "hipMemcpy"),
        memset: sym!(lib, "hipMemset"),
        device_synchronize: sym!(lib, "hipDeviceSynchronize"),
        runtime_get_version: sym!(lib, "hipRuntimeGetVersion"),
        get_error_string: sym!(lib, "hipGetErrorString"),
        count: 0,
        version: 0,
        _lib: lib,
    };
    let mut version = 0;
    // SAFETY: valid out-pointer; no other precondition.
    let r = unsafe { (hip.runtime_get_version)(&mut version) };
    if r != HIP_SUCCESS {
        return Err(ErrorKind::NoDriver {
            backend: Backend::Hip,
            code: r.into(),
        }
        .into());
    }
    let mut count = 0;
    // SAFETY: valid out-pointer.
    match unsafe { (hip.get_device_count)(&mut count) } {
        HIP_SUCCESS if count > 0 => {}
        HIP_SUCCESS | HIP_ERROR_NO_DEVICE => return Err(ErrorKind::NoDevice(Backend::Hip).into()),
        other => {
            return Err(ErrorKind::NoDriver {
                backend: Backend::Hip,
                code: other.into(),
            }
            .into());
        }
    }
    hip.count = count;
    hip.version = version;
    Ok(hip)
}

impl Hip {
    fn check(&self, r: HipError, call: &'static str) -> Result<(), ArenaError> {
        if r == HIP_SUCCESS {
            return Ok(());
        }
        // SAFETY: `hipGetErrorString` accepts any code and returns a static string.
        let p = unsafe { (self.get_error_string)(r) };
        let message = if p.is_null() {
            "an unknown HIP error"
        } else {
            // SAFETY: NUL-terminated with static storage duration (HIP's documentation).
            unsafe { core::ffi::CStr::from_ptr(p) }
                .to_str()
                .unwrap_or("a HIP error")
        };
        Err(ErrorKind::Driver {
            backend: Backend::Hip,
            call,
            code: r.into(),
            message,
        }
        .into())
    }

    fn alloc_check(
        &self,
        r: HipError,
        call: &'static str,
        layout: Layout,
    ) -> Result<(), ArenaError> {
        if r == HIP_ERROR_OUT_OF_MEMORY {
            return Err(ErrorKind::AllocationFailed {
                size: layout.size(),
                align: layout.align(),
            }
            .into());
        }
        self.check(r, call)
    }
}

/// Number of HIP devices.
///
/// # Errors
/// [`ErrorKind::LibraryNotFound`], [`ErrorKind::SymbolNotFound`], [`ErrorKind::NoDriver`]
/// or [`ErrorKind::NoDevice`].
pub fn device_count() -> Result<i32, ArenaError> {
    hip().map(|h| h.count)
}

/// The HIP runtime version (`hipRuntimeGetVersion`).
///
/// # Errors
/// As [`device_count`].
pub fn runtime_version() -> Result<i32, ArenaError> {
    hip().map(|h| h.version)
}

/// A device ordinal checked against the device count.
#[derive(Clone, Copy)]
struct Dev {
    hip: &'static Hip,
    ordinal: i32,
}

impl Dev {
    fn new(ordinal: i32) -> Result<Self, ArenaError> {
        let hip = hip()?;
        if !(0..hip.count).contains(&ordinal) {
            return Err(ErrorKind::DeviceOutOfRange {
                backend: Backend::Hip,
                requested: ordinal,
                available: hip.count,
            }
            .into());
        }
        Ok(Self { hip, ordinal })
    }

    fn set(&self) -> Result<(), ArenaError> {
        // SAFETY: the ordinal is in range.
        self.hip.check(
            unsafe { (self.hip.set_device)(self.ordinal) },
            "hipSetDevice",
        )
    }

    /// `hipMemcpy` of `len > 0` bytes.
    ///
    /// # Safety
    /// Both ranges valid for `len` bytes for the given direction, not overlapping.
    unsafe fn memcpy(
        &self,
        dst: *mut c_void,
        src: *const c_void,
        len: usize,
        kind: c_int,
    ) -> Result<(), ArenaError> {
        if len == 0 {
            return Ok(());
        }
        self.set()?;
        // SAFETY: the caller's obligation.
        self.hip.check(
            unsafe { (self.hip.memcpy)(dst, src, len, kind) },
            "hipMemcpy",
        )
    }

    fn synchronize(&self) -> Result<(), ArenaError> {
        self.set()?;
        // SAFETY: no preconditions.
        self.hip.check(
            unsafe { (self.hip.device_synchronize)() },
            "hipDeviceSynchronize",
        )
    }
}

macro_rules! device_like {
    ($(#[$m:meta])* $name:ident, $kind:expr, $call:literal, |$h:ident, $p:ident, $size:ident| $alloc:expr) => {
        $(#[$m])*
        #[derive(Clone, Copy)]
        pub struct $name {
            dev: Dev,
        }

        impl $name {
            /// The arena of device `ordinal`.
            ///
            /// # Errors
            /// The loader's errors (see [`device_count`]), or
            /// [`ErrorKind::DeviceOutOfRange`].
            pub fn new(ordinal: i32) -> Result<Self, ArenaError> {
                Ok(Self { dev: Dev::new(ordinal)? })
            }
        }

        impl $name {
            /// Device-to-device copies and memsets may not block the host; managed memory
            /// may be touched by the host right after, so wait for them there.
            fn settle(&self) -> Result<(), ArenaError> {
                if $kind == MemoryKind::Managed { self.dev.synchronize() } else { Ok(()) }
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name)).field("ordinal", &self.dev.ordinal).finish()
            }
        }

        impl Arena for $name {
            fn kind(&self) -> MemoryKind {
                $kind
            }

            fn device(&self) -> Device {
                Device::new(DLDeviceType::ROCM, self.dev.ordinal)
            }

            fn allocate_nonzero(&self, layout: Layout) -> Result<NonNull<u8>, ArenaError> {
                check_align(Backend::Hip, layout, DEVICE_ALIGN)?;
                self.dev.set()?;
                let $h = self.dev.hip;
                let mut $p = core::ptr::null_mut();
                let $size = layout.size();
                // SAFETY: valid out-pointer, non-zero size, device set.
                let r = unsafe { $alloc };
                $h.alloc_check(r, $call, layout)?;
                non_null($p, layout)
            }

            unsafe fn deallocate_nonzero(&self, ptr: NonNull<u8>, _layout: Layout) {
                if self.dev.set().is_ok() {
                    // SAFETY: `ptr` came from our allocation call (caller's obligation).
                    let _ = unsafe { (self.dev.hip.free)(ptr.as_ptr().cast()) };
                }
            }

            unsafe fn copy_from_host(&self, dst: NonNull<u8>, src: *const u8, len: usize) -> Result<(), ArenaError> {
                // SAFETY: `dst` is ours with `len` bytes, `src` readable host memory.
                unsafe { self.dev.memcpy(dst.as_ptr().cast(), src.cast(), len, HIP_MEMCPY_HOST_TO_DEVICE) }
            }

            unsafe fn copy_to_host(&self, dst: *mut u8, src: NonNull<u8>, len: usize) -> Result<(), ArenaError> {
                // SAFETY: `src` is ours with `len` bytes, `dst` writable host memory.
                unsafe { self.dev.memcpy(dst.cast(), src.as_ptr().cast(), len, HIP_MEMCPY_DEVICE_TO_HOST) }
            }

            unsafe fn copy_within(&self, dst: NonNull<u8>, src: NonNull<u8>, len: usize) -> Result<(), ArenaError> {
                // SAFETY: both ours with `len` bytes, not overlapping.
                unsafe {
                    self.dev.memcpy(dst.as_ptr().cast(), src.as_ptr().cast(), len, HIP_MEMCPY_DEVICE_TO_DEVICE)
                }?;
                self.settle()
            }

            unsafe fn fill_bytes(&self, dst: NonNull<u8>, value: u8, len: usize) -> Result<(), ArenaError> {
                if len == 0 {
                    return Ok(());
                }
                self.dev.set()?;
                // SAFETY: `dst` is ours with `len` bytes.
                let r = unsafe { (self.dev.hip.memset)(dst.as_ptr().cast(), value.into(), len) };
                self.dev.hip.check(r, "hipMemset")?;
                self.settle()
            }

            fn synchronize(&self) -> Result<(), ArenaError> {
                self.dev.synchronize()
            }
        }
    };
}

device_like!(
    /// HIP device memory (`hipMalloc`), reported as `kDLROCM` with the device ordinal.
    HipDeviceArena, MemoryKind::Device, "hipMalloc", |h, p, size| (h.malloc)(&mut p, size)
);
device_like!(
    /// HIP managed memory (`hipMallocManaged`, attached globally), reported as `kDLROCM`
    /// with the device ordinal (DLPack has no ROCm-managed device type). Host access is
    /// allowed after [`synchronize`](Arena::synchronize).
    HipManagedArena, MemoryKind::Managed, "hipMallocManaged",
    |h, p, size| (h.malloc_managed)(&mut p, size, HIP_MEM_ATTACH_GLOBAL)
);

/// HIP pinned host memory (`hipHostMalloc`), reported as `kDLROCMHost`, device 0.
/// Host-accessible: vectors on it deref to slices.
#[derive(Clone, Copy)]
pub struct HipPinnedArena {
    dev: Dev,
}

impl HipPinnedArena {
    /// Pinned memory allocated with device `ordinal` current.
    ///
    /// # Errors
    /// As [`HipDeviceArena::new`].
    pub fn new(ordinal: i32) -> Result<Self, ArenaError> {
        Ok(Self {
            dev: Dev::new(ordinal)?,
        })
    }
}

impl fmt::Debug for HipPinnedArena {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HipPinnedArena")
            .field("ordinal", &self.dev.ordinal)
            .finish()
    }
}

impl Arena for HipPinnedArena {
    fn kind(&self) -> MemoryKind {
        MemoryKind::Pinned
    }

    fn device(&self) -> Device {
        Device::new(DLDeviceType::ROCM_HOST, 0)
    }

    fn allocate_nonzero(&self, layout: Layout) -> Result<NonNull<u8>, ArenaError> {
        check_align(Backend::Hip, layout, PINNED_ALIGN)?;
        self.dev.set()?;
        let hip = self.dev.hip;
        let mut p = core::ptr::null_mut();
        // SAFETY: valid out-pointer, non-zero size.
        let r = unsafe { (hip.host_malloc)(&mut p, layout.size(), HIP_HOST_MALLOC_DEFAULT) };
        hip.alloc_check(r, "hipHostMalloc", layout)?;
        non_null(p, layout)
    }

    unsafe fn deallocate_nonzero(&self, ptr: NonNull<u8>, _layout: Layout) {
        // SAFETY: `ptr` came from `hipHostMalloc` (caller's obligation).
        let _ = unsafe { (self.dev.hip.host_free)(ptr.as_ptr().cast()) };
    }

    crate::host::host_bulk_ops!();

    fn synchronize(&self) -> Result<(), ArenaError> {
        self.dev.synchronize()
    }
}

// SAFETY: `hipHostMalloc` memory is ordinary host memory for its whole lifetime, and the
// bulk operations above are synchronous CPU copies.
unsafe impl HostAccessible for HipPinnedArena {}
