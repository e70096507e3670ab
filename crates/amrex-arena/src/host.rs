//! [`HostArena`]: ordinary host memory from the global allocator.

use crate::{Arena, ArenaError, ErrorKind, HostAccessible, MemoryKind};
use amrex_dlpack_core::Device;
use core::{alloc::Layout, ptr::NonNull};

/// Ordinary pageable host memory from Rust's global allocator (`kDLCPU`, device 0).
///
/// Always available, also without `std`. Growth uses `realloc`, so a vector that grows
/// by a little at a time often extends in place.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HostArena;

impl HostArena {
    /// The host arena.
    pub const fn new() -> Self {
        Self
    }
}

fn alloc_failed(layout: Layout) -> ArenaError {
    ArenaError::new(ErrorKind::AllocationFailed {
        size: layout.size(),
        align: layout.align(),
    })
}

impl Arena for HostArena {
    fn kind(&self) -> MemoryKind {
        MemoryKind::Host
    }

    fn device(&self) -> Device {
        Device::CPU
    }

    fn host_accessible(&self) -> bool {
        true
    }

    fn allocate_nonzero(&self, layout: Layout) -> Result<NonNull<u8>, ArenaError> {
        debug_assert!(
            layout.size() > 0,
            "allocate_nonzero called with a zero-size layout"
        );
        // SAFETY: `allocate` routes zero sizes away, so `layout.size() > 0`.
        let p = unsafe { alloc::alloc::alloc(layout) };
        NonNull::new(p).ok_or_else(|| alloc_failed(layout))
    }

    unsafe fn deallocate_nonzero(&self, ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: the caller guarantees `ptr` came from `alloc(layout)` (our
        // `allocate_nonzero`) and is live.
        unsafe { alloc::alloc::dealloc(ptr.as_ptr(), layout) }
    }

    unsafe fn reallocate(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new_size: usize,
    ) -> Result<NonNull<u8>, ArenaError> {
        let new = Layout::from_size_align(new_size, old.align())
            .map_err(|_| ArenaError::new(ErrorKind::CapacityOverflow))?;
        if old.size() == 0 {
            return self.allocate(new);
        }
        if new_size == 0 {
            // SAFETY: the caller's obligation 1: `ptr` is a live allocation of `old`.
            unsafe { self.deallocate_nonzero(ptr, old) };
            return Ok(crate::dangling(new));
        }
        // SAFETY: `ptr` is live from `alloc(old)` (obligation 1), `new_size > 0`, and
        // `Layout::from_size_align` above proved it does not overflow `isize` when rounded.
        let p = unsafe { alloc::alloc::realloc(ptr.as_ptr(), old, new_size) };
        NonNull::new(p).ok_or_else(|| alloc_failed(new))
    }

    crate::host::host_bulk_ops!();

    fn synchronize(&self) -> Result<(), ArenaError> {
        Ok(())
    }
}

// SAFETY: the global allocator hands out ordinary host memory, and every bulk operation
// above is a synchronous CPU copy.
unsafe impl HostAccessible for HostArena {}

/// Host memory copy behind [`host_bulk_ops!`]; zero lengths touch nothing.
///
/// # Safety
/// For `len > 0`: `src` readable and `dst` writable for `len` bytes, not overlapping.
pub(crate) unsafe fn host_copy(dst: *mut u8, src: *const u8, len: usize) -> Result<(), ArenaError> {
    if len > 0 {
        // SAFETY: the caller's obligation.
        unsafe { core::ptr::copy_nonoverlapping(src, dst, len) };
    }
    Ok(())
}

/// Host memset behind [`host_bulk_ops!`]; zero lengths touch nothing.
///
/// # Safety
/// For `len > 0`: `dst` writable for `len` bytes.
pub(crate) unsafe fn host_fill(dst: *mut u8, value: u8, len: usize) -> Result<(), ArenaError> {
    if len > 0 {
        // SAFETY: the caller's obligation.
        unsafe { core::ptr::write_bytes(dst, value, len) };
    }
    Ok(())
}

/// The four bulk operations of an [`Arena`] whose memory is ordinary host memory
/// ([`HostArena`], CUDA/HIP pinned memory, Level Zero host USM): synchronous CPU copies
/// and memsets. Expand inside `impl Arena for X` only where `X: HostAccessible`, with the
/// backend's own allocation, deallocation and synchronisation written beside it.
macro_rules! host_bulk_ops {
    () => {
        unsafe fn copy_from_host(
            &self,
            dst: core::ptr::NonNull<u8>,
            src: *const u8,
            len: usize,
        ) -> Result<(), $crate::ArenaError> {
            // SAFETY: this arena's memory is host memory; both ranges are valid for `len`
            // bytes and do not overlap (the caller's obligations).
            unsafe { $crate::host::host_copy(dst.as_ptr(), src, len) }
        }

        unsafe fn copy_to_host(
            &self,
            dst: *mut u8,
            src: core::ptr::NonNull<u8>,
            len: usize,
        ) -> Result<(), $crate::ArenaError> {
            // SAFETY: as above, in the other direction.
            unsafe { $crate::host::host_copy(dst, src.as_ptr(), len) }
        }

        unsafe fn copy_within(
            &self,
            dst: core::ptr::NonNull<u8>,
            src: core::ptr::NonNull<u8>,
            len: usize,
        ) -> Result<(), $crate::ArenaError> {
            // SAFETY: as above, both ranges in this arena.
            unsafe { $crate::host::host_copy(dst.as_ptr(), src.as_ptr(), len) }
        }

        unsafe fn fill_bytes(
            &self,
            dst: core::ptr::NonNull<u8>,
            value: u8,
            len: usize,
        ) -> Result<(), $crate::ArenaError> {
            // SAFETY: host memory, writable for `len` bytes (the caller's obligation).
            unsafe { $crate::host::host_fill(dst.as_ptr(), value, len) }
        }
    };
}
pub(crate) use host_bulk_ops;
