//! Level Zero arenas (feature `level-zero`) through `level-zero-sys`, loaded at run time.
//!
//! The loader (`libze_loader.so.1`) is opened when the first arena is made: no loader is
//! [`ErrorKind::LibraryNotFound`]; a loader without any GPU driver makes `zeInit` fail,
//! which is [`ErrorKind::NoDriver`] (Debian's `libze1` alone gives exactly this); drivers
//! without devices give [`ErrorKind::NoDevice`]. Device ordinals count the root devices of
//! every driver in order, which is what `kDLOneAPI` device ids mean.
//!
//! One context is created per driver and lives for the rest of the process. SYCL
//! consumers (dpctl, dpnp) accept DLPack memory only when it belongs to the SYCL platform's
//! default context; memory from our own context is valid Level Zero USM but such consumers
//! may refuse it or need to copy. Copies and fills go through one synchronous immediate
//! command list per arena, so they have finished when they return.

use super::common::non_null;
use crate::{Arena, ArenaError, Backend, ErrorKind, HostAccessible, MemoryKind};
use amrex_dlpack_core::{DLDeviceType, Device};
use core::{alloc::Layout, ffi::c_void, fmt, ptr::NonNull};
use level_zero_sys as ze;
use std::sync::{Arc, Mutex, OnceLock};
use std::vec::Vec;

struct Runtime {
    api: ze::LevelZero,
    /// `(context index, device)` for every root device of every driver, in order.
    devices: Vec<(usize, ze::ze_device_handle_t)>,
    contexts: Vec<ze::ze_context_handle_t>,
}

// SAFETY: Level Zero driver, device and context handles are thread-safe (the
// specification allows their use from any thread); nothing here is mutated after `load`.
unsafe impl Send for Runtime {}
// SAFETY: as above.
unsafe impl Sync for Runtime {}

static RUNTIME: OnceLock<Result<Runtime, ArenaError>> = OnceLock::new();

fn runtime() -> Result<&'static Runtime, ArenaError> {
    RUNTIME.get_or_init(load).as_ref().map_err(|e| *e)
}

fn driver_error(call: &'static str, r: ze::ze_result_t) -> ArenaError {
    ErrorKind::Driver {
        backend: Backend::LevelZero,
        call,
        code: r.into(),
        message: ze::result_name(r),
    }
    .into()
}

fn check(r: ze::ze_result_t, call: &'static str) -> Result<(), ArenaError> {
    if r == ze::ZE_RESULT_SUCCESS {
        Ok(())
    } else {
        Err(driver_error(call, r))
    }
}

fn load() -> Result<Runtime, ArenaError> {
    let api = ze::LevelZero::load().map_err(|e| match e {
        ze::LoadError::LibraryNotFound => ErrorKind::LibraryNotFound {
            backend: Backend::LevelZero,
            tried: ze::LIBRARY_NAMES,
        },
        ze::LoadError::SymbolNotFound(symbol) => ErrorKind::SymbolNotFound {
            backend: Backend::LevelZero,
            symbol,
        },
    })?;
    // SAFETY: `zeInit` has no preconditions.
    let r = unsafe { (api.zeInit)(ze::ZE_INIT_FLAG_GPU_ONLY) };
    if r != ze::ZE_RESULT_SUCCESS {
        return Err(ErrorKind::NoDriver {
            backend: Backend::LevelZero,
            code: r.into(),
        }
        .into());
    }
    let mut n = 0u32;
    // SAFETY: count query: valid out-pointer, NULL array.
    let r = unsafe { (api.zeDriverGet)(&mut n, core::ptr::null_mut()) };
    check(r, "zeDriverGet")?;
    let mut drivers = std::vec![core::ptr::null_mut(); n as usize];
    // SAFETY: `drivers` has room for `n` handles.
    let r = unsafe { (api.zeDriverGet)(&mut n, drivers.as_mut_ptr()) };
    check(r, "zeDriverGet")?;
    drivers.truncate(n as usize);
    let mut devices = Vec::new();
    let mut contexts = Vec::new();
    for &driver in &drivers {
        let mut m = 0u32;
        // SAFETY: count query on a valid driver handle.
        let r = unsafe { (api.zeDeviceGet)(driver, &mut m, core::ptr::null_mut()) };
        check(r, "zeDeviceGet")?;
        let mut devs = std::vec![core::ptr::null_mut(); m as usize];
        // SAFETY: `devs` has room for `m` handles.
        let r = unsafe { (api.zeDeviceGet)(driver, &mut m, devs.as_mut_ptr()) };
        check(r, "zeDeviceGet")?;
        devs.truncate(m as usize);
        if devs.is_empty() {
            continue;
        }
        let desc = ze::ze_context_desc_t {
            stype: ze::ZE_STRUCTURE_TYPE_CONTEXT_DESC,
            pNext: core::ptr::null(),
            flags: 0,
        };
        let mut ctx = core::ptr::null_mut();
        // SAFETY: valid driver, descriptor and out-pointer.
        let r = unsafe { (api.zeContextCreate)(driver, &desc, &mut ctx) };
        check(r, "zeContextCreate")?;
        contexts.push(ctx);
        devices.extend(devs.into_iter().map(|d| (contexts.len() - 1, d)));
    }
    if devices.is_empty() {
        return Err(ErrorKind::NoDevice(Backend::LevelZero).into());
    }
    Ok(Runtime {
        api,
        devices,
        contexts,
    })
}

/// Number of Level Zero root devices over all drivers.
///
/// # Errors
/// [`ErrorKind::LibraryNotFound`], [`ErrorKind::SymbolNotFound`], [`ErrorKind::NoDriver`]
/// or [`ErrorKind::NoDevice`].
pub fn device_count() -> Result<i32, ArenaError> {
    runtime().map(|rt| i32::try_from(rt.devices.len()).unwrap_or(i32::MAX))
}

/// One device, its context and a synchronous immediate command list.
struct Dev {
    rt: &'static Runtime,
    ordinal: i32,
    device: ze::ze_device_handle_t,
    context: ze::ze_context_handle_t,
    list: Mutex<ze::ze_command_list_handle_t>,
}

// SAFETY: device and context handles are thread-safe; the command list, which is not, is
// only used under its mutex.
unsafe impl Send for Dev {}
// SAFETY: as above.
unsafe impl Sync for Dev {}

impl Dev {
    fn new(ordinal: i32) -> Result<Arc<Self>, ArenaError> {
        let rt = runtime()?;
        let available = i32::try_from(rt.devices.len()).unwrap_or(i32::MAX);
        let &(ci, device) = usize::try_from(ordinal)
            .ok()
            .and_then(|i| rt.devices.get(i))
            .ok_or(ArenaError::new(ErrorKind::DeviceOutOfRange {
                backend: Backend::LevelZero,
                requested: ordinal,
                available,
            }))?;
        let context = rt.contexts[ci];
        let desc = ze::ze_command_queue_desc_t {
            stype: ze::ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
            pNext: core::ptr::null(),
            ordinal: 0,
            index: 0,
            flags: 0,
            mode: ze::ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS,
            priority: ze::ZE_COMMAND_QUEUE_PRIORITY_NORMAL,
        };
        let mut list = core::ptr::null_mut();
        // SAFETY: valid context, device, descriptor and out-pointer.
        let r = unsafe { (rt.api.zeCommandListCreateImmediate)(context, device, &desc, &mut list) };
        check(r, "zeCommandListCreateImmediate")?;
        Ok(Arc::new(Self {
            rt,
            ordinal,
            device,
            context,
            list: Mutex::new(list),
        }))
    }

    fn alloc_check(
        &self,
        r: ze::ze_result_t,
        call: &'static str,
        layout: Layout,
    ) -> Result<(), ArenaError> {
        match r {
            ze::ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY | ze::ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY => {
                Err(ErrorKind::AllocationFailed {
                    size: layout.size(),
                    align: layout.align(),
                }
                .into())
            }
            ze::ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT => Err(ErrorKind::UnsupportedAlignment {
                backend: Backend::LevelZero,
                align: layout.align(),
                max: 0,
            }
            .into()),
            _ => check(r, call),
        }
    }

    fn free(&self, ptr: NonNull<u8>) {
        // SAFETY: `ptr` is a live USM allocation of this context (callers' obligation).
        let _ = unsafe { (self.rt.api.zeMemFree)(self.context, ptr.as_ptr().cast()) };
    }

    /// A blocking copy through the command list.
    ///
    /// # Safety
    /// Both ranges valid USM or host memory for `len` bytes, not overlapping.
    unsafe fn copy(
        &self,
        dst: *mut c_void,
        src: *const c_void,
        len: usize,
    ) -> Result<(), ArenaError> {
        if len == 0 {
            return Ok(());
        }
        let list = self
            .list
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // SAFETY: the caller's obligation; the list is exclusively ours under the lock and
        // synchronous, so the copy has finished when this returns.
        let r = unsafe {
            (self.rt.api.zeCommandListAppendMemoryCopy)(
                *list,
                dst,
                src,
                len,
                core::ptr::null_mut(),
                0,
                core::ptr::null_mut(),
            )
        };
        check(r, "zeCommandListAppendMemoryCopy")
    }

    /// A blocking byte fill through the command list.
    ///
    /// # Safety
    /// `dst` valid USM for `len` bytes.
    unsafe fn fill(&self, dst: *mut c_void, value: u8, len: usize) -> Result<(), ArenaError> {
        if len == 0 {
            return Ok(());
        }
        let list = self
            .list
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // SAFETY: as `copy`; the one-byte pattern is read before the call returns.
        let r = unsafe {
            (self.rt.api.zeCommandListAppendMemoryFill)(
                *list,
                dst,
                (&raw const value).cast(),
                1,
                len,
                core::ptr::null_mut(),
                0,
                core::ptr::null_mut(),
            )
        };
        check(r, "zeCommandListAppendMemoryFill")
    }
}

impl Drop for Dev {
    fn drop(&mut self) {
        let list = *self
            .list
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // SAFETY: our own command list, no longer used (last `Arc`).
        let _ = unsafe { (self.rt.api.zeCommandListDestroy)(list) };
    }
}

fn device_desc() -> ze::ze_device_mem_alloc_desc_t {
    ze::ze_device_mem_alloc_desc_t {
        stype: ze::ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC,
        pNext: core::ptr::null(),
        flags: 0,
        ordinal: 0,
    }
}

fn host_desc() -> ze::ze_host_mem_alloc_desc_t {
    ze::ze_host_mem_alloc_desc_t {
        stype: ze::ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC,
        pNext: core::ptr::null(),
        flags: 0,
    }
}

macro_rules! arena_type {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone)]
        pub struct $name {
            dev: Arc<Dev>,
        }

        impl $name {
            /// The arena of root device `ordinal` (counted over all drivers).
            ///
            /// # Errors
            /// The loader's errors (see [`device_count`]), or
            /// [`ErrorKind::DeviceOutOfRange`].
            pub fn new(ordinal: i32) -> Result<Self, ArenaError> {
                Ok(Self { dev: Dev::new(ordinal)? })
            }

            /// The USM type of `ptr` as Level Zero reports it (`ZE_MEMORY_TYPE_*`).
            ///
            /// # Errors
            /// The runtime's failure.
            pub fn memory_type(&self, ptr: *const u8) -> Result<u32, ArenaError> {
                let mut props = ze::ze_memory_allocation_properties_t {
                    stype: ze::ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES,
                    pNext: core::ptr::null_mut(),
                    type_: ze::ZE_MEMORY_TYPE_UNKNOWN,
                    id: 0,
                    pageSize: 0,
                };
                // SAFETY: valid context and out-structure; any pointer may be queried.
                let r = unsafe {
                    (self.dev.rt.api.zeMemGetAllocProperties)(
                        self.dev.context,
                        ptr.cast(),
                        &mut props,
                        core::ptr::null_mut(),
                    )
                };
                check(r, "zeMemGetAllocProperties")?;
                Ok(props.type_)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name)).field("ordinal", &self.dev.ordinal).finish()
            }
        }
    };
}

arena_type!(
    /// Level Zero device USM (`zeMemAllocDevice`), reported as `kDLOneAPI` with the root
    /// device ordinal.
    ZeDeviceArena
);
arena_type!(
    /// Level Zero shared USM (`zeMemAllocShared`), reported as `kDLOneAPI` with the root
    /// device ordinal. Host access is allowed at run time.
    ZeSharedArena
);
arena_type!(
    /// Level Zero host USM (`zeMemAllocHost`), reported as `kDLCPU`. Host-accessible:
    /// vectors on it deref to slices.
    ZeHostArena
);

macro_rules! usm_ops {
    () => {
        unsafe fn deallocate_nonzero(&self, ptr: NonNull<u8>, _layout: Layout) {
            self.dev.free(ptr);
        }

        unsafe fn copy_from_host(
            &self,
            dst: NonNull<u8>,
            src: *const u8,
            len: usize,
        ) -> Result<(), ArenaError> {
            // SAFETY: the caller's obligations.
            unsafe { self.dev.copy(dst.as_ptr().cast(), src.cast(), len) }
        }

        unsafe fn copy_to_host(
            &self,
            dst: *mut u8,
            src: NonNull<u8>,
            len: usize,
        ) -> Result<(), ArenaError> {
            // SAFETY: the caller's obligations.
            unsafe { self.dev.copy(dst.cast(), src.as_ptr().cast(), len) }
        }

        unsafe fn copy_within(
            &self,
            dst: NonNull<u8>,
            src: NonNull<u8>,
            len: usize,
        ) -> Result<(), ArenaError> {
            // SAFETY: the caller's obligations.
            unsafe { self.dev.copy(dst.as_ptr().cast(), src.as_ptr().cast(), len) }
        }

        unsafe fn fill_bytes(
            &self,
            dst: NonNull<u8>,
            value: u8,
            len: usize,
        ) -> Result<(), ArenaError> {
            // SAFETY: the caller's obligation.
            unsafe { self.dev.fill(dst.as_ptr().cast(), value, len) }
        }

        fn synchronize(&self) -> Result<(), ArenaError> {
            // Every operation runs on a synchronous command list.
            Ok(())
        }
    };
}

impl Arena for ZeDeviceArena {
    fn kind(&self) -> MemoryKind {
        MemoryKind::Device
    }

    fn device(&self) -> Device {
        Device::new(DLDeviceType::ONE_API, self.dev.ordinal)
    }

    fn allocate_nonzero(&self, layout: Layout) -> Result<NonNull<u8>, ArenaError> {
        let mut p = core::ptr::null_mut();
        let d = &self.dev;
        // SAFETY: valid context, descriptor, device and out-pointer; non-zero size and a
        // power-of-two alignment.
        let r = unsafe {
            (d.rt.api.zeMemAllocDevice)(
                d.context,
                &device_desc(),
                layout.size(),
                layout.align(),
                d.device,
                &mut p,
            )
        };
        d.alloc_check(r, "zeMemAllocDevice", layout)?;
        non_null(p, layout)
    }

    usm_ops!();
}

impl Arena for ZeSharedArena {
    fn kind(&self) -> MemoryKind {
        MemoryKind::Managed
    }

    fn device(&self) -> Device {
        Device::new(DLDeviceType::ONE_API, self.dev.ordinal)
    }

    fn allocate_nonzero(&self, layout: Layout) -> Result<NonNull<u8>, ArenaError> {
        let mut p = core::ptr::null_mut();
        let d = &self.dev;
        // SAFETY: as for device USM, plus a valid host descriptor.
        let r = unsafe {
            (d.rt.api.zeMemAllocShared)(
                d.context,
                &device_desc(),
                &host_desc(),
                layout.size(),
                layout.align(),
                d.device,
                &mut p,
            )
        };
        d.alloc_check(r, "zeMemAllocShared", layout)?;
        non_null(p, layout)
    }

    usm_ops!();
}

impl Arena for ZeHostArena {
    fn kind(&self) -> MemoryKind {
        MemoryKind::Pinned
    }

    fn device(&self) -> Device {
        Device::CPU
    }

    fn allocate_nonzero(&self, layout: Layout) -> Result<NonNull<u8>, ArenaError> {
        let mut p = core::ptr::null_mut();
        let d = &self.dev;
        // SAFETY: valid context, host descriptor and out-pointer; non-zero size and a
        // power-of-two alignment.
        let r = unsafe {
            (d.rt.api.zeMemAllocHost)(
                d.context,
                &host_desc(),
                layout.size(),
                layout.align(),
                &mut p,
            )
        };
        d.alloc_check(r, "zeMemAllocHost", layout)?;
        non_null(p, layout)
    }

    unsafe fn deallocate_nonzero(&self, ptr: NonNull<u8>, _layout: Layout) {
        self.dev.free(ptr);
    }

    crate::host::host_bulk_ops!();

    fn synchronize(&self) -> Result<(), ArenaError> {
        Ok(())
    }
}

// SAFETY: host USM is ordinary host memory for its whole lifetime; the bulk operations
// above are synchronous CPU copies.
unsafe impl HostAccessible for ZeHostArena {}

crate::kernels::host_kernels!(ZeHostArena);
crate::kernels::no_kernels!(crate::Backend::LevelZero; ZeDeviceArena, ZeSharedArena);
