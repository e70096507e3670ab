//! HIP arenas (feature `hip`): the safe layer over the raw runtime bindings in `sys`,
//! loaded at run time.
//!
//! The functions are resolved with `libloading` when the first arena is made: a missing
//! library is [`ErrorKind::LibraryNotFound`], a missing function
//! [`ErrorKind::SymbolNotFound`], a failing device query [`ErrorKind::NoDriver`] /
//! [`ErrorKind::NoDevice`]. Every call sets the arena's device first (`hipSetDevice`).

mod sys;

use self::sys::{
    HipApi, hipError_t, hipErrorNoDevice, hipErrorOutOfMemory, hipHostMallocDefault,
    hipMemAttachGlobal, hipMemcpyDeviceToDevice, hipMemcpyDeviceToHost, hipMemcpyHostToDevice,
    hipMemcpyKind, hipSuccess,
};
use super::common::{check_align, non_null, open};
use crate::{Arena, ArenaError, Backend, ErrorKind, HostAccessible, MemoryKind};
use amrex_dlpack_core::{DLDeviceType, Device};
use core::{alloc::Layout, ffi::c_void, fmt, ptr::NonNull};
use std::sync::OnceLock;

pub use self::sys::LIBRARY_NAMES;

/// `hipMalloc` and `hipMallocManaged` align to at least 256 bytes.
const DEVICE_ALIGN: usize = 256;
/// `hipHostMalloc` returns whole pages.
const PINNED_ALIGN: usize = 4096;

/// The loaded runtime and what it reported when it was loaded.
struct Hip {
    api: HipApi,
    count: i32,
    version: i32,
}

static HIP: OnceLock<Result<Hip, ArenaError>> = OnceLock::new();

fn hip() -> Result<&'static Hip, ArenaError> {
    HIP.get_or_init(load).as_ref().map_err(|e| *e)
}

fn load() -> Result<Hip, ArenaError> {
    let lib = open(Backend::Hip, LIBRARY_NAMES)?;
    let api = HipApi::load(lib).map_err(|symbol| {
        ArenaError::new(ErrorKind::SymbolNotFound {
            backend: Backend::Hip,
            symbol,
        })
    })?;
    let mut version = 0;
    // SAFETY: valid out-pointer; no other precondition.
    let r = unsafe { (api.hipRuntimeGetVersion)(&mut version) };
    if r != hipSuccess {
        return Err(ErrorKind::NoDriver {
            backend: Backend::Hip,
            code: r.into(),
        }
        .into());
    }
    let mut count = 0;
    // SAFETY: valid out-pointer.
    let r = unsafe { (api.hipGetDeviceCount)(&mut count) };
    if r == hipErrorNoDevice || (r == hipSuccess && count <= 0) {
        return Err(ErrorKind::NoDevice(Backend::Hip).into());
    }
    if r != hipSuccess {
        return Err(ErrorKind::NoDriver {
            backend: Backend::Hip,
            code: r.into(),
        }
        .into());
    }
    Ok(Hip {
        api,
        count,
        version,
    })
}

impl Hip {
    fn check(&self, r: hipError_t, call: &'static str) -> Result<(), ArenaError> {
        if r == hipSuccess {
            return Ok(());
        }
        // SAFETY: `hipGetErrorString` accepts any code and returns a static string.
        let p = unsafe { (self.api.hipGetErrorString)(r) };
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
        r: hipError_t,
        call: &'static str,
        layout: Layout,
    ) -> Result<(), ArenaError> {
        if r == hipErrorOutOfMemory {
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
            unsafe { (self.hip.api.hipSetDevice)(self.ordinal) },
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
        kind: hipMemcpyKind,
    ) -> Result<(), ArenaError> {
        if len == 0 {
            return Ok(());
        }
        self.set()?;
        // SAFETY: the caller's obligation.
        self.hip.check(
            unsafe { (self.hip.api.hipMemcpy)(dst, src, len, kind) },
            "hipMemcpy",
        )
    }

    fn synchronize(&self) -> Result<(), ArenaError> {
        self.set()?;
        // SAFETY: no preconditions.
        self.hip.check(
            unsafe { (self.hip.api.hipDeviceSynchronize)() },
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
                    let _ = unsafe { (self.dev.hip.api.hipFree)(ptr.as_ptr().cast()) };
                }
            }

            unsafe fn copy_from_host(&self, dst: NonNull<u8>, src: *const u8, len: usize) -> Result<(), ArenaError> {
                // SAFETY: `dst` is ours with `len` bytes, `src` readable host memory.
                unsafe { self.dev.memcpy(dst.as_ptr().cast(), src.cast(), len, hipMemcpyHostToDevice) }
            }

            unsafe fn copy_to_host(&self, dst: *mut u8, src: NonNull<u8>, len: usize) -> Result<(), ArenaError> {
                // SAFETY: `src` is ours with `len` bytes, `dst` writable host memory.
                unsafe { self.dev.memcpy(dst.cast(), src.as_ptr().cast(), len, hipMemcpyDeviceToHost) }
            }

            unsafe fn copy_within(&self, dst: NonNull<u8>, src: NonNull<u8>, len: usize) -> Result<(), ArenaError> {
                // SAFETY: both ours with `len` bytes, not overlapping.
                unsafe {
                    self.dev.memcpy(dst.as_ptr().cast(), src.as_ptr().cast(), len, hipMemcpyDeviceToDevice)
                }?;
                self.settle()
            }

            unsafe fn fill_bytes(&self, dst: NonNull<u8>, value: u8, len: usize) -> Result<(), ArenaError> {
                if len == 0 {
                    return Ok(());
                }
                self.dev.set()?;
                // SAFETY: `dst` is ours with `len` bytes.
                let r = unsafe { (self.dev.hip.api.hipMemset)(dst.as_ptr().cast(), value.into(), len) };
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
    HipDeviceArena, MemoryKind::Device, "hipMalloc", |h, p, size| (h.api.hipMalloc)(&mut p, size)
);
device_like!(
    /// HIP managed memory (`hipMallocManaged`, attached globally), reported as `kDLROCM`
    /// with the device ordinal (DLPack has no ROCm-managed device type). Host access is
    /// allowed after [`synchronize`](Arena::synchronize).
    HipManagedArena, MemoryKind::Managed, "hipMallocManaged",
    |h, p, size| (h.api.hipMallocManaged)(&mut p, size, hipMemAttachGlobal)
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
        let r = unsafe { (hip.api.hipHostMalloc)(&mut p, layout.size(), hipHostMallocDefault) };
        hip.alloc_check(r, "hipHostMalloc", layout)?;
        non_null(p, layout)
    }

    unsafe fn deallocate_nonzero(&self, ptr: NonNull<u8>, _layout: Layout) {
        // SAFETY: `ptr` came from `hipHostMalloc` (caller's obligation).
        let _ = unsafe { (self.dev.hip.api.hipHostFree)(ptr.as_ptr().cast()) };
    }

    crate::host::host_bulk_ops!();

    fn synchronize(&self) -> Result<(), ArenaError> {
        self.dev.synchronize()
    }
}

// SAFETY: `hipHostMalloc` memory is ordinary host memory for its whole lifetime, and the
// bulk operations above are synchronous CPU copies.
unsafe impl HostAccessible for HipPinnedArena {}

crate::kernels::host_kernels!(HipPinnedArena);
crate::kernels::no_kernels!(crate::Backend::Hip; HipDeviceArena, HipManagedArena);
