//! CUDA arenas (feature `cuda`) through `cudarc`'s driver API, loaded at run time.
//!
//! Before any `cudarc` call (which panics when the library or a symbol is missing) the
//! driver library is opened with `libloading` and every symbol used here is looked up, so
//! a machine without CUDA gets [`ErrorKind::LibraryNotFound`] or
//! [`ErrorKind::SymbolNotFound`]. `cuInit` failing gives [`ErrorKind::NoDriver`], no
//! device [`ErrorKind::NoDevice`]. Each arena retains the device's primary context (as the
//! CUDA runtime does) and makes it current before each call.

use super::common::{check_align, non_null, open};
use crate::{Arena, ArenaError, Backend, ErrorKind, HostAccessible, MemoryKind};
use amrex_dlpack_core::{DLDeviceType, Device};
use core::{alloc::Layout, ffi::c_void, fmt, ptr::NonNull};
use cudarc::driver::sys::{self, CUresult};
use std::sync::{Arc, OnceLock};

mod kernels;
pub use kernels::{
    Image, ImageFormat, NVRTC_NAMES, compile_kernels, nvrtc_version, wait_on_stream,
};

/// Driver library names tried, in order (all of them are also in `cudarc`'s list).
#[cfg(target_os = "windows")]
pub const LIBRARY_NAMES: &[&str] = &["nvcuda.dll"];
/// Driver library names tried, in order (all of them are also in `cudarc`'s list).
#[cfg(not(target_os = "windows"))]
pub const LIBRARY_NAMES: &[&str] = &["libcuda.so.1", "libcuda.so"];

const SYMBOLS: &[&str] = &[
    "cuInit",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxSetCurrent",
    "cuCtxSynchronize",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemHostAlloc",
    "cuMemFreeHost",
    "cuMemAllocManaged",
    "cuMemcpyHtoD_v2",
    "cuMemcpyDtoH_v2",
    "cuMemcpyDtoD_v2",
    "cuMemsetD8_v2",
    "cuGetErrorName",
    "cuDeviceGetAttribute",
    "cuModuleLoadData",
    "cuModuleGetFunction",
    "cuLaunchKernel",
    "cuStreamSynchronize",
    "cuEventCreate",
    "cuEventRecord",
    "cuEventDestroy_v2",
    "cuStreamWaitEvent",
];

/// `cuMemAlloc` and `cuMemAllocManaged` align to at least 256 bytes.
const DEVICE_ALIGN: usize = 256;
/// `cuMemHostAlloc` returns whole pages.
const PINNED_ALIGN: usize = 4096;
const CU_MEMHOSTALLOC_PORTABLE: u32 = 1;
const CU_MEM_ATTACH_GLOBAL: u32 = 1;

struct Driver {
    count: i32,
    _lib: libloading::Library,
}

static DRIVER: OnceLock<Result<Driver, ArenaError>> = OnceLock::new();

fn driver() -> Result<&'static Driver, ArenaError> {
    DRIVER.get_or_init(load).as_ref().map_err(|e| *e)
}

fn load() -> Result<Driver, ArenaError> {
    let lib = open(Backend::Cuda, LIBRARY_NAMES)?;
    for &symbol in SYMBOLS {
        // SAFETY: only looks the symbol up; the pointer is not used.
        unsafe { lib.get::<*const c_void>(symbol.as_bytes()) }.map_err(|_| {
            ArenaError::new(ErrorKind::SymbolNotFound {
                backend: Backend::Cuda,
                symbol,
            })
        })?;
    }
    // SAFETY: the library and `cuInit` exist (checked above), so cudarc's lazy loader
    // finds them; `cuInit(0)` has no preconditions.
    match unsafe { sys::cuInit(0) } {
        CUresult::CUDA_SUCCESS => {}
        CUresult::CUDA_ERROR_NO_DEVICE => return Err(ErrorKind::NoDevice(Backend::Cuda).into()),
        other => {
            return Err(ErrorKind::NoDriver {
                backend: Backend::Cuda,
                code: other as i64,
            }
            .into());
        }
    }
    let mut count = 0;
    // SAFETY: `count` is a valid out-pointer; the driver is initialised.
    let r = unsafe { sys::cuDeviceGetCount(&mut count) };
    check(r, "cuDeviceGetCount")?;
    if count <= 0 {
        return Err(ErrorKind::NoDevice(Backend::Cuda).into());
    }
    Ok(Driver { count, _lib: lib })
}

fn error_name(r: CUresult) -> &'static str {
    let mut p: *const core::ffi::c_char = core::ptr::null();
    // SAFETY: `p` is a valid out-pointer; the driver library is loaded (we only get here
    // after `load` resolved the symbols).
    let ok = unsafe { sys::cuGetErrorName(r, &mut p) } == CUresult::CUDA_SUCCESS;
    if !ok || p.is_null() {
        return "an unknown CUDA error";
    }
    // SAFETY: CUDA returns a NUL-terminated string with static storage duration.
    unsafe { core::ffi::CStr::from_ptr(p) }
        .to_str()
        .unwrap_or("a CUDA error")
}

fn check(r: CUresult, call: &'static str) -> Result<(), ArenaError> {
    if r == CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    Err(ErrorKind::Driver {
        backend: Backend::Cuda,
        call,
        code: r as i64,
        message: error_name(r),
    }
    .into())
}

fn alloc_result(r: CUresult, call: &'static str, layout: Layout) -> Result<(), ArenaError> {
    if r == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
        return Err(ErrorKind::AllocationFailed {
            size: layout.size(),
            align: layout.align(),
        }
        .into());
    }
    check(r, call)
}

/// Number of CUDA devices.
///
/// # Errors
/// [`ErrorKind::LibraryNotFound`], [`ErrorKind::SymbolNotFound`], [`ErrorKind::NoDriver`]
/// or [`ErrorKind::NoDevice`].
pub fn device_count() -> Result<i32, ArenaError> {
    driver().map(|d| d.count)
}

/// A retained primary context of one device.
struct Ctx {
    ordinal: i32,
    dev: sys::CUdevice,
    ctx: sys::CUcontext,
}

// SAFETY: a CUDA context handle may be made current and used from any thread.
unsafe impl Send for Ctx {}
// SAFETY: as above; the driver serialises what needs serialising.
unsafe impl Sync for Ctx {}

impl Ctx {
    fn new(ordinal: i32) -> Result<Arc<Self>, ArenaError> {
        let count = driver()?.count;
        if !(0..count).contains(&ordinal) {
            return Err(ErrorKind::DeviceOutOfRange {
                backend: Backend::Cuda,
                requested: ordinal,
                available: count,
            }
            .into());
        }
        let mut dev = 0;
        // SAFETY: valid out-pointer, ordinal in range, driver initialised.
        let r = unsafe { sys::cuDeviceGet(&mut dev, ordinal) };
        check(r, "cuDeviceGet")?;
        let mut ctx = core::ptr::null_mut();
        // SAFETY: valid out-pointer and device.
        let r = unsafe { sys::cuDevicePrimaryCtxRetain(&mut ctx, dev) };
        check(r, "cuDevicePrimaryCtxRetain")?;
        Ok(Arc::new(Self { ordinal, dev, ctx }))
    }

    fn make_current(&self) -> Result<(), ArenaError> {
        // SAFETY: `ctx` is a retained primary context (released only in `Drop`).
        let r = unsafe { sys::cuCtxSetCurrent(self.ctx) };
        check(r, "cuCtxSetCurrent")
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        // SAFETY: balances the retain in `new`; every arena clone (and so every allocation
        // made through one) is gone when the last `Arc` drops.
        let _ = unsafe { sys::cuDevicePrimaryCtxRelease_v2(self.dev) };
    }
}

fn dptr(p: NonNull<u8>) -> sys::CUdeviceptr {
    p.as_ptr().expose_provenance() as sys::CUdeviceptr
}

fn from_dptr(d: sys::CUdeviceptr) -> *mut c_void {
    core::ptr::with_exposed_provenance_mut(d as usize)
}

macro_rules! device_like {
    ($(#[$m:meta])* $name:ident, $kind:expr, $dl:expr, $alloc:ident $(, $flag:expr)?) => {
        $(#[$m])*
        #[derive(Clone)]
        pub struct $name {
            ctx: Arc<Ctx>,
        }

        impl $name {
            /// The arena of device `ordinal`.
            ///
            /// # Errors
            /// The loader's errors (see [`device_count`]), or
            /// [`ErrorKind::DeviceOutOfRange`].
            pub fn new(ordinal: i32) -> Result<Self, ArenaError> {
                Ok(Self { ctx: Ctx::new(ordinal)? })
            }
        }

        impl $name {
            /// Device-to-device copies and memsets do not block the host; managed memory
            /// may be touched by the host right after, so wait for them there.
            fn settle(&self) -> Result<(), ArenaError> {
                if $kind == MemoryKind::Managed { self.synchronize() } else { Ok(()) }
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name)).field("ordinal", &self.ctx.ordinal).finish()
            }
        }

        impl Arena for $name {
            fn kind(&self) -> MemoryKind {
                $kind
            }

            fn device(&self) -> Device {
                Device::new($dl, self.ctx.ordinal)
            }

            fn allocate_nonzero(&self, layout: Layout) -> Result<NonNull<u8>, ArenaError> {
                check_align(Backend::Cuda, layout, DEVICE_ALIGN)?;
                self.ctx.make_current()?;
                let mut d: sys::CUdeviceptr = 0;
                // SAFETY: valid out-pointer, non-zero size, current context.
                let r = unsafe { sys::$alloc(&mut d, layout.size() $(, $flag)?) };
                alloc_result(r, stringify!($alloc), layout)?;
                non_null(from_dptr(d), layout)
            }

            unsafe fn deallocate_nonzero(&self, ptr: NonNull<u8>, _layout: Layout) {
                if self.ctx.make_current().is_ok() {
                    // SAFETY: `ptr` came from our allocation call (caller's obligation).
                    let _ = unsafe { sys::cuMemFree_v2(dptr(ptr)) };
                }
            }

            unsafe fn copy_from_host(&self, dst: NonNull<u8>, src: *const u8, len: usize) -> Result<(), ArenaError> {
                if len == 0 {
                    return Ok(());
                }
                self.ctx.make_current()?;
                // SAFETY: `dst` is ours with `len` bytes, `src` readable host memory.
                let r = unsafe { sys::cuMemcpyHtoD_v2(dptr(dst), src.cast(), len) };
                check(r, "cuMemcpyHtoD")?;
                // From pageable memory the copy may return before the data lands; the
                // host may read managed memory right after.
                self.settle()
            }

            unsafe fn copy_to_host(&self, dst: *mut u8, src: NonNull<u8>, len: usize) -> Result<(), ArenaError> {
                if len == 0 {
                    return Ok(());
                }
                self.ctx.make_current()?;
                // SAFETY: `src` is ours with `len` bytes, `dst` writable host memory.
                let r = unsafe { sys::cuMemcpyDtoH_v2(dst.cast(), dptr(src), len) };
                check(r, "cuMemcpyDtoH")
            }

            unsafe fn copy_within(&self, dst: NonNull<u8>, src: NonNull<u8>, len: usize) -> Result<(), ArenaError> {
                if len == 0 {
                    return Ok(());
                }
                self.ctx.make_current()?;
                // SAFETY: both ours with `len` bytes, not overlapping.
                let r = unsafe { sys::cuMemcpyDtoD_v2(dptr(dst), dptr(src), len) };
                check(r, "cuMemcpyDtoD")?;
                self.settle()
            }

            unsafe fn fill_bytes(&self, dst: NonNull<u8>, value: u8, len: usize) -> Result<(), ArenaError> {
                if len == 0 {
                    return Ok(());
                }
                self.ctx.make_current()?;
                // SAFETY: `dst` is ours with `len` bytes.
                let r = unsafe { sys::cuMemsetD8_v2(dptr(dst), value, len) };
                check(r, "cuMemsetD8")?;
                self.settle()
            }

            fn synchronize(&self) -> Result<(), ArenaError> {
                self.ctx.make_current()?;
                // SAFETY: current context.
                let r = unsafe { sys::cuCtxSynchronize() };
                check(r, "cuCtxSynchronize")
            }
        }
    };
}

device_like!(
    /// CUDA device memory (`cuMemAlloc`), reported as `kDLCUDA` with the device ordinal.
    CudaDeviceArena, MemoryKind::Device, DLDeviceType::CUDA, cuMemAlloc_v2
);
device_like!(
    /// CUDA managed memory (`cuMemAllocManaged`, attached globally), reported as
    /// `kDLCUDAManaged` with the device ordinal. Host access is allowed after
    /// [`synchronize`](Arena::synchronize).
    CudaManagedArena, MemoryKind::Managed, DLDeviceType::CUDA_MANAGED, cuMemAllocManaged, CU_MEM_ATTACH_GLOBAL
);

/// CUDA pinned host memory (`cuMemHostAlloc`, portable), reported as `kDLCUDAHost`, device 0.
/// Host-accessible: vectors on it deref to slices.
#[derive(Clone)]
pub struct CudaPinnedArena {
    ctx: Arc<Ctx>,
}

impl CudaPinnedArena {
    /// Pinned memory registered through device `ordinal`'s context (portable to all).
    ///
    /// # Errors
    /// As [`CudaDeviceArena::new`].
    pub fn new(ordinal: i32) -> Result<Self, ArenaError> {
        Ok(Self {
            ctx: Ctx::new(ordinal)?,
        })
    }
}

impl fmt::Debug for CudaPinnedArena {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CudaPinnedArena")
            .field("ordinal", &self.ctx.ordinal)
            .finish()
    }
}

impl Arena for CudaPinnedArena {
    fn kind(&self) -> MemoryKind {
        MemoryKind::Pinned
    }

    fn device(&self) -> Device {
        Device::new(DLDeviceType::CUDA_HOST, 0)
    }

    fn allocate_nonzero(&self, layout: Layout) -> Result<NonNull<u8>, ArenaError> {
        check_align(Backend::Cuda, layout, PINNED_ALIGN)?;
        self.ctx.make_current()?;
        let mut p = core::ptr::null_mut();
        // SAFETY: valid out-pointer, non-zero size, current context.
        let r = unsafe { sys::cuMemHostAlloc(&mut p, layout.size(), CU_MEMHOSTALLOC_PORTABLE) };
        alloc_result(r, "cuMemHostAlloc", layout)?;
        non_null(p, layout)
    }

    unsafe fn deallocate_nonzero(&self, ptr: NonNull<u8>, _layout: Layout) {
        if self.ctx.make_current().is_ok() {
            // SAFETY: `ptr` came from `cuMemHostAlloc` (caller's obligation).
            let _ = unsafe { sys::cuMemFreeHost(ptr.as_ptr().cast()) };
        }
    }

    crate::host::host_bulk_ops!();

    fn synchronize(&self) -> Result<(), ArenaError> {
        self.ctx.make_current()?;
        // SAFETY: current context.
        let r = unsafe { sys::cuCtxSynchronize() };
        check(r, "cuCtxSynchronize")
    }
}

// SAFETY: `cuMemHostAlloc` memory is ordinary host memory for its whole lifetime, and the
// bulk operations above are synchronous CPU copies.
unsafe impl HostAccessible for CudaPinnedArena {}
