//! A stand-in "device" arena: host memory behind pointers shifted far away, so any host
//! dereference of "device" memory faults, while the bulk operations shift back and work.
//!
//! Under Miri the shift is 0: containers offset device pointers with `ptr::add` (as they
//! must for real device pointers, which carry no host provenance), and Miri would flag
//! that offset on a shifted host pointer before any dereference could be checked.

use amrex_arena::{Arena, ArenaError, HostArena, MemoryKind};
use amrex_dlpack_core::{DLDeviceType, Device};
use core::alloc::Layout;
use core::ptr::NonNull;

/// Shift between the real host allocation and the address handed out.
const SHIFT: usize = if cfg!(miri) { 0 } else { 1 << 44 };

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FakeDevice;

fn hide(p: NonNull<u8>) -> NonNull<u8> {
    NonNull::new(p.as_ptr().wrapping_add(SHIFT)).unwrap()
}

fn show(p: NonNull<u8>) -> *mut u8 {
    p.as_ptr().wrapping_sub(SHIFT)
}

impl Arena for FakeDevice {
    fn kind(&self) -> MemoryKind {
        MemoryKind::Device
    }
    fn device(&self) -> Device {
        Device::new(DLDeviceType::CUDA, 0)
    }
    fn allocate_nonzero(&self, layout: Layout) -> Result<NonNull<u8>, ArenaError> {
        HostArena.allocate_nonzero(layout).map(hide)
    }
    unsafe fn deallocate_nonzero(&self, ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: `ptr` was handed out by `allocate_nonzero`, shifted; shifting back gives
        // the host allocation.
        unsafe { HostArena.deallocate_nonzero(NonNull::new(show(ptr)).unwrap(), layout) }
    }
    unsafe fn copy_from_host(
        &self,
        dst: NonNull<u8>,
        src: *const u8,
        len: usize,
    ) -> Result<(), ArenaError> {
        // SAFETY: caller obligations, on the unshifted host allocation.
        unsafe { core::ptr::copy_nonoverlapping(src, show(dst), len) };
        Ok(())
    }
    unsafe fn copy_to_host(
        &self,
        dst: *mut u8,
        src: NonNull<u8>,
        len: usize,
    ) -> Result<(), ArenaError> {
        // SAFETY: as above.
        unsafe { core::ptr::copy_nonoverlapping(show(src), dst, len) };
        Ok(())
    }
    unsafe fn copy_within(
        &self,
        dst: NonNull<u8>,
        src: NonNull<u8>,
        len: usize,
    ) -> Result<(), ArenaError> {
        // SAFETY: as above.
        unsafe { core::ptr::copy_nonoverlapping(show(src), show(dst), len) };
        Ok(())
    }
    unsafe fn fill_bytes(&self, dst: NonNull<u8>, value: u8, len: usize) -> Result<(), ArenaError> {
        // SAFETY: as above.
        unsafe { core::ptr::write_bytes(show(dst), value, len) };
        Ok(())
    }
    fn synchronize(&self) -> Result<(), ArenaError> {
        Ok(())
    }
}
