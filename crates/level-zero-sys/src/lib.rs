//! Minimal Level Zero bindings, loaded at run time from `libze_loader.so.1`.
//!
//! Only what a memory arena needs: driver and device discovery, contexts, device / shared
//! / host USM allocation, allocation properties, and an immediate command list for copies
//! and fills. Nothing links against Level Zero: [`LevelZero::load`] opens the loader with
//! `libloading` and resolves every function up front, so a missing loader or symbol is an
//! error value. No crate on crates.io offered this without a build-time SDK.
//!
//! The C names are kept so the code reads against the specification (`ze_api.h`, v1.x);
//! every `#[repr(C)]` struct has its field offsets checked against the header's values.
//!
//! What has run: loading Debian's loader (`libze1`) and `zeInit` failing on a machine
//! with no GPU driver. No Level Zero driver or GPU has run these bindings yet: device
//! discovery, contexts, allocations and command lists are untested.
//!
//! ```no_run
//! use level_zero_sys::{LevelZero, ZE_INIT_FLAG_GPU_ONLY, ZE_RESULT_SUCCESS};
//!
//! match LevelZero::load() {
//!     Ok(ze) => {
//!         // SAFETY: `zeInit` may be called any time, from any thread.
//!         let r = unsafe { (ze.zeInit)(ZE_INIT_FLAG_GPU_ONLY) };
//!         println!("zeInit: {}", if r == ZE_RESULT_SUCCESS { "ok" } else { "no driver" });
//!     }
//!     Err(e) => println!("{e}"),
//! }
//! ```
#![expect(non_camel_case_types, reason = "C type names from ze_api.h")]
#![expect(non_snake_case, reason = "C function names from ze_api.h")]
#![cfg_attr(docsrs, feature(doc_cfg))]

/// The README's example, compiled as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

use core::ffi::c_void;
use core::fmt;

/// `ze_result_t`.
pub type ze_result_t = u32;
/// `ze_structure_type_t`.
pub type ze_structure_type_t = u32;
/// `ze_memory_type_t`.
pub type ze_memory_type_t = u32;
/// `ze_command_queue_mode_t`.
pub type ze_command_queue_mode_t = u32;
/// `ze_command_queue_priority_t`.
pub type ze_command_queue_priority_t = u32;

macro_rules! handles {
    ($($(#[$m:meta])* $handle:ident => $opaque:ident;)+) => {$(
        $(#[$m])*
        #[repr(C)]
        #[derive(Debug)]
        pub struct $opaque {
            _private: [u8; 0],
        }
        $(#[$m])*
        pub type $handle = *mut $opaque;
    )+};
}

handles! {
    /// `ze_driver_handle_t`.
    ze_driver_handle_t => _ze_driver_handle_t;
    /// `ze_device_handle_t`.
    ze_device_handle_t => _ze_device_handle_t;
    /// `ze_context_handle_t`.
    ze_context_handle_t => _ze_context_handle_t;
    /// `ze_command_list_handle_t`.
    ze_command_list_handle_t => _ze_command_list_handle_t;
    /// `ze_event_handle_t`.
    ze_event_handle_t => _ze_event_handle_t;
}

/// `ZE_RESULT_SUCCESS`.
pub const ZE_RESULT_SUCCESS: ze_result_t = 0;
/// `ZE_RESULT_ERROR_DEVICE_LOST`.
pub const ZE_RESULT_ERROR_DEVICE_LOST: ze_result_t = 0x7000_0001;
/// `ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY`.
pub const ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY: ze_result_t = 0x7000_0002;
/// `ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY`.
pub const ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY: ze_result_t = 0x7000_0003;
/// `ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE`.
pub const ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE: ze_result_t = 0x7002_0000;
/// `ZE_RESULT_ERROR_UNINITIALIZED`: the loader found no driver.
pub const ZE_RESULT_ERROR_UNINITIALIZED: ze_result_t = 0x7800_0001;
/// `ZE_RESULT_ERROR_UNSUPPORTED_VERSION`.
pub const ZE_RESULT_ERROR_UNSUPPORTED_VERSION: ze_result_t = 0x7800_0002;
/// `ZE_RESULT_ERROR_UNSUPPORTED_FEATURE`.
pub const ZE_RESULT_ERROR_UNSUPPORTED_FEATURE: ze_result_t = 0x7800_0003;
/// `ZE_RESULT_ERROR_INVALID_ARGUMENT`.
pub const ZE_RESULT_ERROR_INVALID_ARGUMENT: ze_result_t = 0x7800_0004;
/// `ZE_RESULT_ERROR_INVALID_NULL_HANDLE`.
pub const ZE_RESULT_ERROR_INVALID_NULL_HANDLE: ze_result_t = 0x7800_0005;
/// `ZE_RESULT_ERROR_INVALID_NULL_POINTER`.
pub const ZE_RESULT_ERROR_INVALID_NULL_POINTER: ze_result_t = 0x7800_0007;
/// `ZE_RESULT_ERROR_INVALID_SIZE`.
pub const ZE_RESULT_ERROR_INVALID_SIZE: ze_result_t = 0x7800_0008;
/// `ZE_RESULT_ERROR_UNSUPPORTED_SIZE`.
pub const ZE_RESULT_ERROR_UNSUPPORTED_SIZE: ze_result_t = 0x7800_0009;
/// `ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT`.
pub const ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT: ze_result_t = 0x7800_000a;
/// `ZE_RESULT_ERROR_OVERLAPPING_REGIONS`.
pub const ZE_RESULT_ERROR_OVERLAPPING_REGIONS: ze_result_t = 0x7800_001a;
/// `ZE_RESULT_ERROR_UNKNOWN`.
pub const ZE_RESULT_ERROR_UNKNOWN: ze_result_t = 0x7fff_fffe;

/// The name of a result code, or `"unknown ze_result_t"`.
pub const fn result_name(r: ze_result_t) -> &'static str {
    match r {
        ZE_RESULT_SUCCESS => "ZE_RESULT_SUCCESS",
        ZE_RESULT_ERROR_DEVICE_LOST => "ZE_RESULT_ERROR_DEVICE_LOST",
        ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY => "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY",
        ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY => "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
        ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE => "ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE",
        ZE_RESULT_ERROR_UNINITIALIZED => "ZE_RESULT_ERROR_UNINITIALIZED",
        ZE_RESULT_ERROR_UNSUPPORTED_VERSION => "ZE_RESULT_ERROR_UNSUPPORTED_VERSION",
        ZE_RESULT_ERROR_UNSUPPORTED_FEATURE => "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE",
        ZE_RESULT_ERROR_INVALID_ARGUMENT => "ZE_RESULT_ERROR_INVALID_ARGUMENT",
        ZE_RESULT_ERROR_INVALID_NULL_HANDLE => "ZE_RESULT_ERROR_INVALID_NULL_HANDLE",
        ZE_RESULT_ERROR_INVALID_NULL_POINTER => "ZE_RESULT_ERROR_INVALID_NULL_POINTER",
        ZE_RESULT_ERROR_INVALID_SIZE => "ZE_RESULT_ERROR_INVALID_SIZE",
        ZE_RESULT_ERROR_UNSUPPORTED_SIZE => "ZE_RESULT_ERROR_UNSUPPORTED_SIZE",
        ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT => "ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT",
        ZE_RESULT_ERROR_OVERLAPPING_REGIONS => "ZE_RESULT_ERROR_OVERLAPPING_REGIONS",
        ZE_RESULT_ERROR_UNKNOWN => "ZE_RESULT_ERROR_UNKNOWN",
        _ => "unknown ze_result_t",
    }
}

/// `ZE_INIT_FLAG_GPU_ONLY`.
pub const ZE_INIT_FLAG_GPU_ONLY: u32 = 1;

/// `ZE_STRUCTURE_TYPE_CONTEXT_DESC`.
pub const ZE_STRUCTURE_TYPE_CONTEXT_DESC: ze_structure_type_t = 0xd;
/// `ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC`.
pub const ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC: ze_structure_type_t = 0xe;
/// `ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC`.
pub const ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC: ze_structure_type_t = 0x15;
/// `ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC`.
pub const ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC: ze_structure_type_t = 0x16;
/// `ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES`.
pub const ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES: ze_structure_type_t = 0x17;

/// `ZE_MEMORY_TYPE_UNKNOWN`: not a USM allocation.
pub const ZE_MEMORY_TYPE_UNKNOWN: ze_memory_type_t = 0;
/// `ZE_MEMORY_TYPE_HOST`.
pub const ZE_MEMORY_TYPE_HOST: ze_memory_type_t = 1;
/// `ZE_MEMORY_TYPE_DEVICE`.
pub const ZE_MEMORY_TYPE_DEVICE: ze_memory_type_t = 2;
/// `ZE_MEMORY_TYPE_SHARED`.
pub const ZE_MEMORY_TYPE_SHARED: ze_memory_type_t = 3;

/// `ZE_COMMAND_QUEUE_MODE_DEFAULT`.
pub const ZE_COMMAND_QUEUE_MODE_DEFAULT: ze_command_queue_mode_t = 0;
/// `ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS`: every append returns after the work finished.
pub const ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS: ze_command_queue_mode_t = 1;
/// `ZE_COMMAND_QUEUE_PRIORITY_NORMAL`.
pub const ZE_COMMAND_QUEUE_PRIORITY_NORMAL: ze_command_queue_priority_t = 0;

/// `ze_context_desc_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_context_desc_t {
    /// `ZE_STRUCTURE_TYPE_CONTEXT_DESC`.
    pub stype: ze_structure_type_t,
    /// Extension chain (NULL).
    pub pNext: *const c_void,
    /// `ze_context_flags_t`.
    pub flags: u32,
}

/// `ze_device_mem_alloc_desc_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_device_mem_alloc_desc_t {
    /// `ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC`.
    pub stype: ze_structure_type_t,
    /// Extension chain (NULL).
    pub pNext: *const c_void,
    /// `ze_device_mem_alloc_flags_t`.
    pub flags: u32,
    /// Memory ordinal of the device.
    pub ordinal: u32,
}

/// `ze_host_mem_alloc_desc_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_host_mem_alloc_desc_t {
    /// `ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC`.
    pub stype: ze_structure_type_t,
    /// Extension chain (NULL).
    pub pNext: *const c_void,
    /// `ze_host_mem_alloc_flags_t`.
    pub flags: u32,
}

/// `ze_memory_allocation_properties_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_memory_allocation_properties_t {
    /// `ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES`.
    pub stype: ze_structure_type_t,
    /// Extension chain (NULL).
    pub pNext: *mut c_void,
    /// Output: `ZE_MEMORY_TYPE_*`.
    pub type_: ze_memory_type_t,
    /// Output: Allocation identifier.
    pub id: u64,
    /// Output: Page size.
    pub pageSize: u64,
}

/// `ze_command_queue_desc_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_command_queue_desc_t {
    /// `ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC`.
    pub stype: ze_structure_type_t,
    /// Extension chain (NULL).
    pub pNext: *const c_void,
    /// Command queue group ordinal.
    pub ordinal: u32,
    /// Queue index within the group.
    pub index: u32,
    /// `ze_command_queue_flags_t`.
    pub flags: u32,
    /// `ZE_COMMAND_QUEUE_MODE_*`.
    pub mode: ze_command_queue_mode_t,
    /// `ZE_COMMAND_QUEUE_PRIORITY_*`.
    pub priority: ze_command_queue_priority_t,
}

// Offsets from ze_api.h (v1.x), for 64-bit and 32-bit pointers alike.
const P: usize = size_of::<usize>();
const _: () = {
    use core::mem::offset_of;
    assert!(offset_of!(ze_context_desc_t, stype) == 0);
    assert!(offset_of!(ze_context_desc_t, pNext) == P);
    assert!(offset_of!(ze_context_desc_t, flags) == 2 * P);
    assert!(size_of::<ze_context_desc_t>() == 3 * P);
    assert!(offset_of!(ze_device_mem_alloc_desc_t, pNext) == P);
    assert!(offset_of!(ze_device_mem_alloc_desc_t, flags) == 2 * P);
    assert!(offset_of!(ze_device_mem_alloc_desc_t, ordinal) == 2 * P + 4);
    assert!(size_of::<ze_device_mem_alloc_desc_t>() == 2 * P + 8);
    assert!(offset_of!(ze_host_mem_alloc_desc_t, flags) == 2 * P);
    assert!(size_of::<ze_host_mem_alloc_desc_t>() == 3 * P);
    assert!(offset_of!(ze_memory_allocation_properties_t, pNext) == P);
    assert!(offset_of!(ze_memory_allocation_properties_t, type_) == 2 * P);
    assert!(offset_of!(ze_command_queue_desc_t, pNext) == P);
    assert!(offset_of!(ze_command_queue_desc_t, ordinal) == 2 * P);
    assert!(offset_of!(ze_command_queue_desc_t, index) == 2 * P + 4);
    assert!(offset_of!(ze_command_queue_desc_t, flags) == 2 * P + 8);
    assert!(offset_of!(ze_command_queue_desc_t, mode) == 2 * P + 12);
    assert!(offset_of!(ze_command_queue_desc_t, priority) == 2 * P + 16);
};
#[cfg(target_pointer_width = "64")]
const _: () = {
    use core::mem::offset_of;
    assert!(offset_of!(ze_memory_allocation_properties_t, id) == 24);
    assert!(offset_of!(ze_memory_allocation_properties_t, pageSize) == 32);
    assert!(size_of::<ze_memory_allocation_properties_t>() == 40);
    assert!(size_of::<ze_command_queue_desc_t>() == 40);
};

/// Shared-library names tried, in order.
#[cfg(target_os = "windows")]
pub const LIBRARY_NAMES: &[&str] = &["ze_loader.dll"];
/// Shared-library names tried, in order.
#[cfg(not(target_os = "windows"))]
pub const LIBRARY_NAMES: &[&str] = &["libze_loader.so.1", "libze_loader.so"];

/// Why [`LevelZero::load`] failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadError {
    /// None of [`LIBRARY_NAMES`] could be opened.
    LibraryNotFound,
    /// The loader lacks a function.
    SymbolNotFound(&'static str),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::LibraryNotFound => {
                write!(
                    f,
                    "Level Zero loader not found (tried {})",
                    LIBRARY_NAMES.join(", ")
                )
            }
            Self::SymbolNotFound(s) => write!(f, "Level Zero loader has no symbol {s}"),
        }
    }
}

impl core::error::Error for LoadError {}

macro_rules! api {
    ($($name:ident: fn($($arg:ident: $ty:ty),* $(,)?);)+) => {
        /// The loader's functions, resolved once by [`LevelZero::load`]. Each is the C
        /// function of the same name in `ze_api.h`; calling one is `unsafe` and follows
        /// the specification's rules for its arguments.
        pub struct LevelZero {
            $(
                #[doc = concat!("`", stringify!($name), "`.")]
                pub $name: unsafe extern "C" fn($($arg: $ty),*) -> ze_result_t,
            )+
            _lib: libloading::Library,
        }

        impl LevelZero {
            /// Opens the loader and resolves every function.
            ///
            /// # Errors
            /// [`LoadError::LibraryNotFound`] or [`LoadError::SymbolNotFound`].
            pub fn load() -> Result<Self, LoadError> {
                let lib = LIBRARY_NAMES
                    .iter()
                    .find_map(|name| {
                        // SAFETY: opening the Level Zero loader runs its initialisers,
                        // which have no preconditions.
                        unsafe { libloading::Library::new(*name) }.ok()
                    })
                    .ok_or(LoadError::LibraryNotFound)?;
                $(
                    // SAFETY: the symbol is the C function of this name and signature in
                    // ze_api.h; the pointer stays valid while `_lib` is loaded, which it is
                    // for as long as `Self` lives.
                    let $name = unsafe {
                        lib.get::<unsafe extern "C" fn($($ty),*) -> ze_result_t>(
                            concat!(stringify!($name), "\0").as_bytes(),
                        )
                    }
                    .map(|s| *s)
                    .map_err(|_| LoadError::SymbolNotFound(stringify!($name)))?;
                )+
                Ok(Self { $($name,)+ _lib: lib })
            }
        }
    };
}

api! {
    zeInit: fn(flags: u32);
    zeDriverGet: fn(pCount: *mut u32, phDrivers: *mut ze_driver_handle_t);
    zeDeviceGet: fn(hDriver: ze_driver_handle_t, pCount: *mut u32, phDevices: *mut ze_device_handle_t);
    zeContextCreate: fn(
        hDriver: ze_driver_handle_t,
        desc: *const ze_context_desc_t,
        phContext: *mut ze_context_handle_t,
    );
    zeContextDestroy: fn(hContext: ze_context_handle_t);
    zeMemAllocDevice: fn(
        hContext: ze_context_handle_t,
        device_desc: *const ze_device_mem_alloc_desc_t,
        size: usize,
        alignment: usize,
        hDevice: ze_device_handle_t,
        pptr: *mut *mut c_void,
    );
    zeMemAllocShared: fn(
        hContext: ze_context_handle_t,
        device_desc: *const ze_device_mem_alloc_desc_t,
        host_desc: *const ze_host_mem_alloc_desc_t,
        size: usize,
        alignment: usize,
        hDevice: ze_device_handle_t,
        pptr: *mut *mut c_void,
    );
    zeMemAllocHost: fn(
        hContext: ze_context_handle_t,
        host_desc: *const ze_host_mem_alloc_desc_t,
        size: usize,
        alignment: usize,
        pptr: *mut *mut c_void,
    );
    zeMemFree: fn(hContext: ze_context_handle_t, ptr: *mut c_void);
    zeMemGetAllocProperties: fn(
        hContext: ze_context_handle_t,
        ptr: *const c_void,
        pMemAllocProperties: *mut ze_memory_allocation_properties_t,
        phDevice: *mut ze_device_handle_t,
    );
    zeCommandListCreateImmediate: fn(
        hContext: ze_context_handle_t,
        hDevice: ze_device_handle_t,
        altdesc: *const ze_command_queue_desc_t,
        phCommandList: *mut ze_command_list_handle_t,
    );
    zeCommandListDestroy: fn(hCommandList: ze_command_list_handle_t);
    zeCommandListAppendMemoryCopy: fn(
        hCommandList: ze_command_list_handle_t,
        dstptr: *mut c_void,
        srcptr: *const c_void,
        size: usize,
        hSignalEvent: ze_event_handle_t,
        numWaitEvents: u32,
        phWaitEvents: *mut ze_event_handle_t,
    );
    zeCommandListAppendMemoryFill: fn(
        hCommandList: ze_command_list_handle_t,
        ptr: *mut c_void,
        pattern: *const c_void,
        pattern_size: usize,
        size: usize,
        hSignalEvent: ze_event_handle_t,
        numWaitEvents: u32,
        phWaitEvents: *mut ze_event_handle_t,
    );
}

impl fmt::Debug for LevelZero {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LevelZero").finish_non_exhaustive()
    }
}
