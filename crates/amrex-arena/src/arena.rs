//! The [`Arena`] trait, the [`HostAccessible`] marker and [`MemoryKind`].

use crate::{ArenaError, ErrorKind};
use amrex_dlpack_core::Device;
use core::{alloc::Layout, fmt, ptr::NonNull};

/// What kind of memory an arena hands out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MemoryKind {
    /// Ordinary pageable host memory.
    Host,
    /// Page-locked host memory the device can reach (CUDA/HIP pinned, Level Zero host USM).
    Pinned,
    /// Device memory the host cannot dereference.
    Device,
    /// Memory that migrates between host and device (CUDA/HIP managed, Level Zero shared USM).
    Managed,
}

impl MemoryKind {
    /// Whether the CPU may dereference memory of this kind (managed memory only while no
    /// device work touches it: synchronise first).
    pub const fn is_host_accessible(self) -> bool {
        !matches!(self, Self::Device)
    }
}

impl fmt::Display for MemoryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Host => "host",
            Self::Pinned => "pinned",
            Self::Device => "device",
            Self::Managed => "managed",
        })
    }
}

/// A well-aligned, non-null pointer for a zero-size allocation. It must never be
/// dereferenced for more than zero bytes and never be passed to a backend.
pub fn dangling(layout: Layout) -> NonNull<u8> {
    // `Layout` guarantees a non-zero power-of-two alignment, so `align` is a non-null
    // address; without provenance it may only be used for zero-size accesses.
    NonNull::<u8>::dangling().with_addr(
        core::num::NonZeroUsize::new(layout.align()).unwrap_or(core::num::NonZeroUsize::MIN),
    )
}

/// A memory resource: host, pinned, device or managed memory of one backend and device.
///
/// Arenas are cheap handles (`Clone`); every clone allocates from, and frees into, the
/// same resource. Memory from [`allocate`](Arena::allocate) must be returned with
/// [`deallocate`](Arena::deallocate) on an arena that compares as the same resource
/// (a clone).
///
/// Zero-size layouts never reach the backend: [`allocate`](Arena::allocate) returns
/// [`dangling`] and [`deallocate`](Arena::deallocate) ignores them, and bulk operations
/// of zero bytes are no-ops. Implementors provide the `*_nonzero` methods (only called
/// with non-zero sizes) and the bulk operations, which must return `Ok(())` without
/// touching the backend when `len == 0`.
pub trait Arena: Clone + Send + Sync + fmt::Debug {
    /// The kind of memory this arena hands out.
    fn kind(&self) -> MemoryKind;

    /// The DLPack device its memory is reported as.
    fn device(&self) -> Device;

    /// Whether the CPU may dereference this arena's memory now.
    fn host_accessible(&self) -> bool {
        self.kind().is_host_accessible()
    }

    /// Allocates memory for `layout`. Zero-size layouts give [`dangling`] without
    /// touching the backend.
    ///
    /// # Errors
    /// The backend's failure, for example [`ErrorKind::AllocationFailed`].
    fn allocate(&self, layout: Layout) -> Result<NonNull<u8>, ArenaError> {
        if layout.size() == 0 {
            return Ok(dangling(layout));
        }
        self.allocate_nonzero(layout)
    }

    /// Allocates `layout.size() > 0` bytes from the backend.
    ///
    /// # Errors
    /// The backend's failure.
    fn allocate_nonzero(&self, layout: Layout) -> Result<NonNull<u8>, ArenaError>;

    /// Frees memory from [`allocate`](Arena::allocate). Zero-size layouts are ignored.
    ///
    /// # Safety
    /// 1. `ptr` came from `allocate(layout)` on this arena (or a clone) with this `layout`.
    /// 2. It has not been freed, and nothing uses it afterwards.
    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        if layout.size() != 0 {
            // SAFETY: the caller's obligations 1-2, and the size is non-zero.
            unsafe { self.deallocate_nonzero(ptr, layout) }
        }
    }

    /// Frees a non-zero-size allocation.
    ///
    /// # Safety
    /// As [`deallocate`](Arena::deallocate), and `layout.size() > 0`.
    unsafe fn deallocate_nonzero(&self, ptr: NonNull<u8>, layout: Layout);

    /// Moves an allocation to a new size (same alignment), keeping the first
    /// `min(old.size(), new_size)` bytes. On error the old allocation is untouched.
    ///
    /// The default allocates, copies on the backend and frees; the host arena uses
    /// `realloc`.
    ///
    /// # Safety
    /// 1. `ptr` came from `allocate(old)` on this arena and is live.
    /// 2. On success `ptr` is freed and only the returned pointer may be used.
    ///
    /// # Errors
    /// [`ErrorKind::CapacityOverflow`] when `new_size` does not make a layout, or the
    /// backend's failure.
    unsafe fn reallocate(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new_size: usize,
    ) -> Result<NonNull<u8>, ArenaError> {
        let new = Layout::from_size_align(new_size, old.align())
            .map_err(|_| ArenaError::new(ErrorKind::CapacityOverflow))?;
        let fresh = self.allocate(new)?;
        let keep = old.size().min(new_size);
        if keep > 0 {
            // SAFETY: `ptr` is live for `old.size() >= keep` bytes (obligation 1); `fresh`
            // was just allocated with `new_size >= keep` bytes, so the two do not overlap.
            let copied = unsafe { self.copy_within(fresh, ptr, keep) };
            if let Err(e) = copied {
                // SAFETY: `fresh` came from `allocate(new)` just above and is unused.
                unsafe { self.deallocate(fresh, new) };
                return Err(e);
            }
        }
        // SAFETY: obligation 1; the caller stops using `ptr` on success (obligation 2).
        unsafe { self.deallocate(ptr, old) };
        Ok(fresh)
    }

    /// Copies `len` bytes from host memory into this arena's memory.
    ///
    /// # Safety
    /// 1. `src` is readable host memory for `len` bytes.
    /// 2. `dst` lies in a live allocation of this arena with `len` bytes from it.
    /// 3. The two ranges do not overlap.
    ///
    /// # Errors
    /// The backend's failure.
    unsafe fn copy_from_host(
        &self,
        dst: NonNull<u8>,
        src: *const u8,
        len: usize,
    ) -> Result<(), ArenaError>;

    /// Copies `len` bytes of this arena's memory to host memory.
    ///
    /// # Safety
    /// 1. `dst` is writable host memory for `len` bytes.
    /// 2. `src` lies in a live allocation of this arena with `len` bytes from it.
    /// 3. The two ranges do not overlap.
    ///
    /// # Errors
    /// The backend's failure.
    unsafe fn copy_to_host(
        &self,
        dst: *mut u8,
        src: NonNull<u8>,
        len: usize,
    ) -> Result<(), ArenaError>;

    /// Copies `len` bytes between two places in this arena's memory.
    ///
    /// # Safety
    /// 1. `src` and `dst` each lie in a live allocation of this arena, with `len` bytes.
    /// 2. The two ranges do not overlap.
    ///
    /// # Errors
    /// The backend's failure.
    unsafe fn copy_within(
        &self,
        dst: NonNull<u8>,
        src: NonNull<u8>,
        len: usize,
    ) -> Result<(), ArenaError>;

    /// Sets `len` bytes of this arena's memory to `value`.
    ///
    /// # Safety
    /// `dst` lies in a live allocation of this arena with `len` bytes from it.
    ///
    /// # Errors
    /// The backend's failure.
    unsafe fn fill_bytes(&self, dst: NonNull<u8>, value: u8, len: usize) -> Result<(), ArenaError>;

    /// Waits until all work the backend queued on this arena's device has finished.
    ///
    /// # Errors
    /// The backend's failure.
    fn synchronize(&self) -> Result<(), ArenaError>;
}

/// Marker for arenas whose memory the CPU may always dereference (host and pinned memory).
///
/// Containers deref to slices only on these arenas, so device vectors have no slices at
/// compile time. Managed memory is host-accessible only at run time (after
/// synchronisation) and does not implement this trait.
///
/// # Safety
/// Every allocation of the arena must be ordinary readable and writable host memory for
/// its whole size and lifetime, with `copy_*`/`fill_bytes` finished when they return.
pub unsafe trait HostAccessible: Arena {}

/// Copies `len` bytes from memory of `src_arena` to memory of `dst_arena`, staging
/// through host memory when neither side is host accessible.
///
/// # Safety
/// 1. `src` lies in a live allocation of `src_arena` with `len` bytes from it.
/// 2. `dst` lies in a live allocation of `dst_arena` with `len` bytes from it.
/// 3. The two ranges do not overlap.
///
/// # Errors
/// Either backend's failure, or [`ErrorKind::AllocationFailed`] for the staging buffer.
pub unsafe fn copy_between<S: Arena, D: Arena>(
    src_arena: &S,
    src: NonNull<u8>,
    dst_arena: &D,
    dst: NonNull<u8>,
    len: usize,
) -> Result<(), ArenaError> {
    if len == 0 {
        return Ok(());
    }
    if src_arena.host_accessible() {
        src_arena.synchronize()?;
        // SAFETY: `src` is host accessible and readable for `len` bytes (obligation 1);
        // `dst` satisfies obligation 2 and the ranges do not overlap (obligation 3).
        return unsafe { dst_arena.copy_from_host(dst, src.as_ptr(), len) };
    }
    if dst_arena.host_accessible() {
        dst_arena.synchronize()?;
        // SAFETY: `dst` is host accessible and writable for `len` bytes (obligation 2);
        // `src` satisfies obligation 1 and the ranges do not overlap (obligation 3).
        return unsafe { src_arena.copy_to_host(dst.as_ptr(), src, len) };
    }
    let mut staging = alloc::vec::Vec::<u8>::new();
    staging.try_reserve_exact(len).map_err(|_| {
        ArenaError::new(ErrorKind::AllocationFailed {
            size: len,
            align: 1,
        })
    })?;
    // SAFETY: `staging` has capacity for `len` bytes and is fresh host memory; `src`
    // satisfies obligation 1.
    unsafe { src_arena.copy_to_host(staging.as_mut_ptr(), src, len) }?;
    // SAFETY: `staging` holds `len` bytes just written; `dst` satisfies obligation 2.
    unsafe { dst_arena.copy_from_host(dst, staging.as_ptr(), len) }
}
