//! [`PodVector`]: a growable array of plain-old-data on any arena.

use crate::GrowthStrategy;
use alloc::vec::Vec;
use amrex_arena::{Arena, ArenaError, ErrorKind, HostAccessible, HostArena, MemoryKind};
use amrex_dlpack_core::Device;
use bytemuck::AnyBitPattern;
use core::{
    alloc::Layout,
    fmt,
    mem::{ManuallyDrop, MaybeUninit, size_of},
    ops::{Deref, DerefMut, Range},
    ptr::NonNull,
};

/// A growable array of plain-old-data `T` (any [`AnyBitPattern`] type: padding allowed,
/// every bit pattern valid) in memory from the arena `A`, like AMReX's
/// `PODVector<T, Allocator>`.
///
/// On host-accessible arenas ([`HostAccessible`]: [`HostArena`], pinned memory) it derefs
/// to `[T]`. On device arenas it has no slices at all: data moves with
/// [`copy_from_host`](Self::copy_from_host), [`copy_to_host`](Self::copy_to_host),
/// [`to_host_vec`](Self::to_host_vec) and [`try_fill`](Self::try_fill), and kernels get
/// the raw device pointer from [`as_ptr`](Self::as_ptr). Managed memory is
/// host-accessible at run time: [`try_as_slice`](Self::try_as_slice) synchronises and
/// checks.
///
/// Growth follows the vector's [`GrowthStrategy`] (default `Geometric`, AMReX's
/// `push_back`). Every operation that may allocate has a `try_` form returning
/// [`ArenaError`]; the plain form panics with the error's message.
///
/// ```
/// use amrex_podvector::{GrowthStrategy, PodVector};
///
/// let mut v = PodVector::<f64>::new();
/// v.push(1.0);
/// assert_eq!(v.capacity(), 8); // 64 bytes first, as AMReX
/// v.extend_from_slice(&[2.0, 3.0]);
/// v.resize(5, 0.5);
/// assert_eq!(&v[..], &[1.0, 2.0, 3.0, 0.5, 0.5]);
///
/// let mut p = PodVector::<i32>::new().with_growth_strategy(GrowthStrategy::Poisson);
/// p.resize(100, 0);
/// assert_eq!(p.capacity(), 130); // 100 + 3 * sqrt(100)
/// ```
//
// Invariants:
// 1. `ptr` is the start of a live allocation from `arena` with layout
//    `Layout::array::<T>(cap)`; when that layout has size 0, `ptr` is the arena's
//    dangling pointer and is never freed.
// 2. `len <= cap`, and elements `[0, len)` have been written (are initialised).
// 3. `Layout::array::<T>(cap)` is a valid layout (so `cap * size_of::<T>()` fits `isize`).
// 4. The vector owns the allocation: it is freed exactly once, by `Drop`, with `arena`.
// 5. The CPU reads or writes through `ptr` only when `arena.host_accessible()`; otherwise
//    through the arena's bulk operations.
pub struct PodVector<T: AnyBitPattern, A: Arena = HostArena> {
    ptr: NonNull<T>,
    len: usize,
    cap: usize,
    arena: A,
    strategy: GrowthStrategy,
}

// SAFETY: the vector owns its elements (invariant 4) like `Vec<T>`; arenas are `Send`.
unsafe impl<T: AnyBitPattern + Send, A: Arena> Send for PodVector<T, A> {}
// SAFETY: shared access only reads (invariant 5); arenas are `Sync`.
unsafe impl<T: AnyBitPattern + Sync, A: Arena> Sync for PodVector<T, A> {}

fn overflow() -> ArenaError {
    ArenaError::new(ErrorKind::CapacityOverflow)
}

#[cold]
#[track_caller]
fn fail(what: &str, e: ArenaError) -> ! {
    panic!("PodVector::{what}: {e}")
}

impl<T: AnyBitPattern> PodVector<T, HostArena> {
    /// An empty vector in host memory; allocates nothing.
    pub const fn new() -> Self {
        Self::new_in(HostArena)
    }

    /// A host vector with room for exactly `capacity` elements.
    ///
    /// # Panics
    /// When the allocation fails or `capacity` bytes overflow.
    #[track_caller]
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_capacity_in(capacity, HostArena)
    }

    /// A host vector holding a copy of `src`.
    pub fn from_slice(src: &[T]) -> Self {
        let mut v = Self::new();
        v.extend_from_slice(src);
        v
    }

    /// Takes over a `Vec`'s buffer without copying (both use the global allocator with
    /// `Layout::array::<T>(capacity)`).
    pub fn from_vec(v: Vec<T>) -> Self {
        let mut v = ManuallyDrop::new(v);
        let (len, cap) = (v.len(), v.capacity());
        // SAFETY: a Vec's pointer is never null.
        let ptr = unsafe { NonNull::new_unchecked(v.as_mut_ptr()) };
        let cap = if size_of::<T>() == 0 { len } else { cap };
        // Invariants 1-4: the Vec's buffer is a global-allocator allocation of
        // `Layout::array::<T>(cap)` (dangling when zero-sized), `len <= cap` are written,
        // and the Vec is forgotten, so we own it.
        Self {
            ptr,
            len,
            cap,
            arena: HostArena,
            strategy: GrowthStrategy::default(),
        }
    }

    /// Gives the buffer to a `Vec` without copying.
    pub fn into_vec(self) -> Vec<T> {
        let me = ManuallyDrop::new(self);
        if size_of::<T>() == 0 || me.cap == 0 {
            let mut v = Vec::new();
            v.resize(me.len, T::zeroed());
            return v;
        }
        // SAFETY: invariant 1: `ptr` is a global-allocator allocation of
        // `Layout::array::<T>(cap)` (what `Vec` uses), `len <= cap` are initialised
        // (invariant 2), and `me` is never dropped, so the Vec becomes the only owner.
        unsafe { Vec::from_raw_parts(me.ptr.as_ptr(), me.len, me.cap) }
    }
}

impl<T: AnyBitPattern> Default for PodVector<T, HostArena> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: AnyBitPattern, A: Arena> PodVector<T, A> {
    /// An empty vector on `arena`; allocates nothing.
    pub const fn new_in(arena: A) -> Self {
        Self {
            ptr: NonNull::dangling(),
            len: 0,
            cap: 0,
            arena,
            strategy: GrowthStrategy::Geometric,
        }
    }

    /// An empty vector on `arena` with room for exactly `capacity` elements.
    ///
    /// # Errors
    /// [`ErrorKind::CapacityOverflow`] or the arena's allocation failure.
    pub fn try_with_capacity_in(capacity: usize, arena: A) -> Result<Self, ArenaError> {
        let mut v = Self::new_in(arena);
        v.set_capacity(capacity)?;
        Ok(v)
    }

    /// As [`try_with_capacity_in`](Self::try_with_capacity_in).
    ///
    /// # Panics
    /// On the errors of `try_with_capacity_in`.
    #[track_caller]
    pub fn with_capacity_in(capacity: usize, arena: A) -> Self {
        Self::try_with_capacity_in(capacity, arena).unwrap_or_else(|e| fail("with_capacity_in", e))
    }

    /// A vector on `arena` holding a copy of host data `src` (exact capacity).
    ///
    /// # Errors
    /// Allocation or copy failure.
    pub fn try_from_slice_in(src: &[T], arena: A) -> Result<Self, ArenaError> {
        let mut v = Self::try_with_capacity_in(src.len(), arena)?;
        v.try_extend_from_slice(src)?;
        Ok(v)
    }

    /// A vector on `arena` of `len` copies of `value` (exact capacity).
    ///
    /// # Errors
    /// Allocation or fill failure.
    pub fn try_from_elem_in(value: T, len: usize, arena: A) -> Result<Self, ArenaError> {
        let mut v = Self::try_with_capacity_in(len, arena)?;
        v.try_resize(len, value)?;
        Ok(v)
    }

    /// The same vector with growth strategy `strategy`.
    #[must_use]
    pub fn with_growth_strategy(mut self, strategy: GrowthStrategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// The strategy used whenever the vector must grow.
    pub fn growth_strategy(&self) -> GrowthStrategy {
        self.strategy
    }

    /// Sets the strategy used whenever the vector must grow.
    pub fn set_growth_strategy(&mut self, strategy: GrowthStrategy) {
        self.strategy = strategy;
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of elements the current allocation holds.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// The arena the memory comes from.
    pub fn arena(&self) -> &A {
        &self.arena
    }

    /// The DLPack device of the memory (the arena's, also when empty).
    pub fn device(&self) -> Device {
        self.arena.device()
    }

    /// The kind of memory.
    pub fn memory_kind(&self) -> MemoryKind {
        self.arena.kind()
    }

    /// The first element's address: a device pointer on device arenas. Dangling (never
    /// NULL) when nothing is allocated.
    #[doc(alias = "as_device_ptr")]
    #[doc(alias = "data")]
    pub fn as_ptr(&self) -> *const T {
        self.ptr.as_ptr()
    }

    /// As [`as_ptr`](Self::as_ptr), for writing.
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.ptr.as_ptr()
    }

    fn layout(cap: usize) -> Result<Layout, ArenaError> {
        Layout::array::<T>(cap).map_err(|_| overflow())
    }

    /// Reallocates to exactly `new_cap >= len` elements.
    fn set_capacity(&mut self, new_cap: usize) -> Result<(), ArenaError> {
        debug_assert!(new_cap >= self.len, "set_capacity below len");
        let new = Self::layout(new_cap)?;
        let old = Self::layout(self.cap)?;
        // SAFETY: invariant 1: `ptr` is a live allocation of `old` from `arena`; on success
        // we replace it and never use the old pointer again.
        let p = unsafe { self.arena.reallocate(self.ptr.cast(), old, new.size()) }?;
        self.ptr = p.cast();
        self.cap = new_cap;
        Ok(())
    }

    /// Grows (when needed) so that `new_len` elements fit, by `strategy`.
    fn grow_for(&mut self, new_len: usize, strategy: GrowthStrategy) -> Result<(), ArenaError> {
        if new_len <= self.cap {
            return Ok(());
        }
        let cap = strategy
            .new_capacity(self.cap, new_len, size_of::<T>())
            .ok_or_else(overflow)?;
        self.set_capacity(cap)
    }

    /// Makes room for `additional` more elements, growing by the vector's strategy.
    ///
    /// # Errors
    /// [`ErrorKind::CapacityOverflow`] or the arena's allocation failure; the vector is
    /// unchanged then.
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), ArenaError> {
        let new_len = self.len.checked_add(additional).ok_or_else(overflow)?;
        self.grow_for(new_len, self.strategy)
    }

    /// As [`try_reserve`](Self::try_reserve) with strategy `strategy` for this growth only.
    ///
    /// # Errors
    /// As `try_reserve`.
    pub fn try_reserve_with(
        &mut self,
        additional: usize,
        strategy: GrowthStrategy,
    ) -> Result<(), ArenaError> {
        let new_len = self.len.checked_add(additional).ok_or_else(overflow)?;
        self.grow_for(new_len, strategy)
    }

    /// Makes room for exactly `additional` more elements (when the capacity is short).
    ///
    /// # Errors
    /// As `try_reserve`.
    pub fn try_reserve_exact(&mut self, additional: usize) -> Result<(), ArenaError> {
        self.try_reserve_with(additional, GrowthStrategy::Exact)
    }

    /// As [`try_reserve`](Self::try_reserve).
    ///
    /// # Panics
    /// On its errors.
    #[track_caller]
    pub fn reserve(&mut self, additional: usize) {
        self.try_reserve(additional)
            .unwrap_or_else(|e| fail("reserve", e));
    }

    /// As [`try_reserve_with`](Self::try_reserve_with).
    ///
    /// # Panics
    /// On its errors.
    #[track_caller]
    pub fn reserve_with(&mut self, additional: usize, strategy: GrowthStrategy) {
        self.try_reserve_with(additional, strategy)
            .unwrap_or_else(|e| fail("reserve_with", e));
    }

    /// As [`try_reserve_exact`](Self::try_reserve_exact).
    ///
    /// # Panics
    /// On its errors.
    #[track_caller]
    pub fn reserve_exact(&mut self, additional: usize) {
        self.try_reserve_exact(additional)
            .unwrap_or_else(|e| fail("reserve_exact", e));
    }

    /// Writes host data `src` at element `index`.
    ///
    /// # Safety
    /// `index + src.len() <= cap`.
    unsafe fn write_from_host(&mut self, index: usize, src: &[T]) -> Result<(), ArenaError> {
        if src.is_empty() {
            return Ok(());
        }
        debug_assert!(index + src.len() <= self.cap, "write past capacity");
        // SAFETY: `index <= cap` (obligation), inside the allocation (invariant 1).
        let dst = unsafe { self.ptr.add(index) };
        if self.arena.host_accessible() {
            // SAFETY: `dst` has room for `src.len()` elements (obligation); `src` is a
            // borrow, so it cannot overlap memory we own exclusively; host access is
            // allowed (invariant 5).
            unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), dst.as_ptr(), src.len()) };
            Ok(())
        } else {
            // SAFETY: as above, through the arena's copy.
            unsafe {
                self.arena
                    .copy_from_host(dst.cast(), src.as_ptr().cast(), size_of_val(src))
            }
        }
    }

    /// Fills `count` elements from `start` with `value`.
    ///
    /// # Safety
    /// `start + count <= cap`.
    unsafe fn fill_range(
        &mut self,
        start: usize,
        count: usize,
        value: T,
    ) -> Result<(), ArenaError> {
        if count == 0 {
            return Ok(());
        }
        debug_assert!(start + count <= self.cap, "fill past capacity");
        // SAFETY: `start <= cap` (obligation), inside the allocation.
        let dst = unsafe { self.ptr.add(start) };
        if self.arena.host_accessible() {
            for i in 0..count {
                // SAFETY: `i < count`, so `start + i < cap`: inside the allocation.
                let p = unsafe { dst.add(i) };
                // SAFETY: in bounds (above); host access is allowed (invariant 5).
                unsafe { p.write(value) };
            }
            return Ok(());
        }
        // One element from the host, then doubling copies on the device: O(log n) calls.
        // (`T` may have padding, so its bytes are never inspected; the copies are untyped.)
        // SAFETY: room for one element at `dst`; `value` is a distinct host local.
        unsafe {
            self.arena
                .copy_from_host(dst.cast(), (&raw const value).cast(), size_of::<T>())
        }?;
        let mut filled = 1;
        while filled < count {
            let n = filled.min(count - filled);
            // SAFETY: `filled + n <= count`, inside the allocation.
            let to = unsafe { dst.add(filled) };
            // SAFETY: `[0, n)` and `[filled, filled + n)` do not overlap as `n <= filled`.
            unsafe {
                self.arena
                    .copy_within(to.cast(), dst.cast(), n * size_of::<T>())
            }?;
            filled += n;
        }
        Ok(())
    }

    /// Appends `value`, growing by the vector's strategy when full.
    ///
    /// # Errors
    /// Allocation or copy failure; the vector is unchanged then.
    #[inline]
    pub fn try_push(&mut self, value: T) -> Result<(), ArenaError> {
        if self.len == self.cap {
            self.grow_for(self.len.checked_add(1).ok_or_else(overflow)?, self.strategy)?;
        }
        // SAFETY: `len < cap` now.
        unsafe { self.write_from_host(self.len, core::slice::from_ref(&value)) }?;
        self.len += 1;
        Ok(())
    }

    /// As [`try_push`](Self::try_push).
    ///
    /// # Panics
    /// On its errors.
    #[inline]
    #[track_caller]
    pub fn push(&mut self, value: T) {
        if self.len == self.cap || !self.arena.host_accessible() {
            return self.try_push(value).unwrap_or_else(|e| fail("push", e));
        }
        // SAFETY: `len < cap`: inside the allocation.
        let p = unsafe { self.ptr.add(self.len) };
        // SAFETY: in bounds; host access is allowed (invariant 5).
        unsafe { p.write(value) };
        self.len += 1;
    }

    /// Appends a copy of host data `src`, growing by the vector's strategy.
    ///
    /// # Errors
    /// Allocation or copy failure; the vector is unchanged then.
    pub fn try_extend_from_slice(&mut self, src: &[T]) -> Result<(), ArenaError> {
        self.try_reserve(src.len())?;
        // SAFETY: `len + src.len() <= cap` after the reserve.
        unsafe { self.write_from_host(self.len, src) }?;
        self.len += src.len();
        Ok(())
    }

    /// As [`try_extend_from_slice`](Self::try_extend_from_slice).
    ///
    /// # Panics
    /// On its errors.
    #[track_caller]
    pub fn extend_from_slice(&mut self, src: &[T]) {
        self.try_extend_from_slice(src)
            .unwrap_or_else(|e| fail("extend_from_slice", e));
    }

    /// Sets the length to `new_len`, filling new elements with `value` and growing by
    /// the vector's strategy.
    ///
    /// # Errors
    /// Allocation or fill failure; the length is unchanged then.
    pub fn try_resize(&mut self, new_len: usize, value: T) -> Result<(), ArenaError> {
        if new_len <= self.len {
            self.len = new_len;
            return Ok(());
        }
        self.grow_for(new_len, self.strategy)?;
        // SAFETY: `new_len <= cap` after growing.
        unsafe { self.fill_range(self.len, new_len - self.len, value) }?;
        self.len = new_len;
        Ok(())
    }

    /// As [`try_resize`](Self::try_resize).
    ///
    /// # Panics
    /// On its errors.
    #[track_caller]
    pub fn resize(&mut self, new_len: usize, value: T) {
        self.try_resize(new_len, value)
            .unwrap_or_else(|e| fail("resize", e));
    }

    /// Sets the length to `new_len` without initialising new elements (AMReX's
    /// `resize(n)`), growing by the vector's strategy.
    ///
    /// # Safety
    /// Elements `[old_len, new_len)` must be written (on the host, a device kernel or a
    /// copy) before they are read or exported.
    ///
    /// # Errors
    /// Allocation failure; the vector is unchanged then.
    pub unsafe fn try_resize_uninit(&mut self, new_len: usize) -> Result<(), ArenaError> {
        self.grow_for(new_len, self.strategy)?;
        // Invariant 2 is the caller's obligation for the new tail.
        self.len = new_len;
        Ok(())
    }

    /// Sets the length.
    ///
    /// # Safety
    /// `new_len <= capacity()`, and elements `[old_len, new_len)` are initialised.
    pub unsafe fn set_len(&mut self, new_len: usize) {
        debug_assert!(new_len <= self.cap, "set_len past capacity");
        self.len = new_len;
    }

    /// Shortens to `len` elements (no effect when already shorter); keeps the capacity.
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Removes every element; keeps the capacity (AMReX `clear`).
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Reduces the capacity to the length; frees everything when empty.
    ///
    /// # Errors
    /// The arena's failure; the vector is unchanged then.
    pub fn try_shrink_to_fit(&mut self) -> Result<(), ArenaError> {
        if self.cap > self.len {
            self.set_capacity(self.len)
        } else {
            Ok(())
        }
    }

    /// As [`try_shrink_to_fit`](Self::try_shrink_to_fit).
    ///
    /// # Panics
    /// On its errors.
    #[track_caller]
    pub fn shrink_to_fit(&mut self) {
        self.try_shrink_to_fit()
            .unwrap_or_else(|e| fail("shrink_to_fit", e));
    }

    /// Exchanges contents, capacities, arenas and strategies with `other`.
    pub fn swap(&mut self, other: &mut Self) {
        core::mem::swap(self, other);
    }

    /// Overwrites every element with host data `src`.
    ///
    /// # Errors
    /// [`ErrorKind::LengthMismatch`] when `src.len() != len()`, or the copy's failure.
    pub fn copy_from_host(&mut self, src: &[T]) -> Result<(), ArenaError> {
        if src.len() != self.len {
            return Err(ErrorKind::LengthMismatch {
                expected: self.len,
                found: src.len(),
            }
            .into());
        }
        // SAFETY: `src.len() == len <= cap`.
        unsafe { self.write_from_host(0, src) }
    }

    /// Copies every element into host memory `dst`.
    ///
    /// # Errors
    /// [`ErrorKind::LengthMismatch`] when `dst.len() != len()`, or the copy's failure.
    pub fn copy_to_host(&self, dst: &mut [T]) -> Result<(), ArenaError> {
        if dst.len() != self.len {
            return Err(ErrorKind::LengthMismatch {
                expected: self.len,
                found: dst.len(),
            }
            .into());
        }
        if self.len == 0 {
            return Ok(());
        }
        if self.arena.host_accessible() {
            // SAFETY: `len` initialised elements (invariant 2) readable on the host
            // (invariant 5); `dst` is an exclusive borrow, so no overlap.
            unsafe {
                core::ptr::copy_nonoverlapping(self.ptr.as_ptr(), dst.as_mut_ptr(), self.len)
            };
            return Ok(());
        }
        // SAFETY: `len` elements of ours and `dst.len() == len` writable host elements.
        unsafe {
            self.arena
                .copy_to_host(dst.as_mut_ptr().cast(), self.ptr.cast(), size_of_val(dst))
        }
    }

    /// Copies the elements into a new host `Vec`.
    ///
    /// # Errors
    /// Allocation or copy failure.
    pub fn to_host_vec(&self) -> Result<Vec<T>, ArenaError> {
        let mut out = Vec::new();
        out.try_reserve_exact(self.len).map_err(|_| {
            ArenaError::new(ErrorKind::AllocationFailed {
                size: self.len.saturating_mul(size_of::<T>()),
                align: align_of::<T>(),
            })
        })?;
        out.resize(self.len, T::zeroed());
        self.copy_to_host(&mut out)?;
        Ok(out)
    }

    /// Sets every element to `value` (on the device for device arenas).
    ///
    /// # Errors
    /// The arena's failure.
    pub fn try_fill(&mut self, value: T) -> Result<(), ArenaError> {
        // SAFETY: `len <= cap`.
        unsafe { self.fill_range(0, self.len, value) }
    }

    /// Sets every element to all-zero bytes (`T::zeroed()`) with one memset on the arena.
    ///
    /// # Errors
    /// The arena's failure.
    pub fn try_fill_zeroed(&mut self) -> Result<(), ArenaError> {
        if self.len == 0 {
            return Ok(());
        }
        // SAFETY: `len <= cap` elements from `ptr` are inside the allocation; all-zero bytes
        // are a valid `T` (`Zeroable`).
        unsafe {
            self.arena
                .fill_bytes(self.ptr.cast(), 0, self.len * size_of::<T>())
        }
    }

    /// Reads element `index` (a one-element copy on device arenas).
    ///
    /// # Errors
    /// [`ErrorKind::OutOfBounds`] or the copy's failure.
    pub fn get_copy(&self, index: usize) -> Result<T, ArenaError> {
        if index >= self.len {
            return Err(ErrorKind::OutOfBounds {
                index,
                len: self.len,
            }
            .into());
        }
        let mut out = T::zeroed();
        if self.arena.host_accessible() {
            // SAFETY: `index < len`: inside the allocation.
            let p = unsafe { self.ptr.add(index) };
            // SAFETY: initialised (invariant 2) and host readable.
            return Ok(unsafe { p.read() });
        }
        // SAFETY: `index < len`, inside the allocation.
        let src = unsafe { self.ptr.add(index) };
        // SAFETY: one element each side.
        unsafe {
            self.arena
                .copy_to_host((&raw mut out).cast(), src.cast(), size_of::<T>())
        }?;
        Ok(out)
    }

    /// Writes element `index` (a one-element copy on device arenas).
    ///
    /// # Errors
    /// [`ErrorKind::OutOfBounds`] or the copy's failure.
    pub fn set(&mut self, index: usize, value: T) -> Result<(), ArenaError> {
        if index >= self.len {
            return Err(ErrorKind::OutOfBounds {
                index,
                len: self.len,
            }
            .into());
        }
        // SAFETY: `index < len <= cap`.
        unsafe { self.write_from_host(index, core::slice::from_ref(&value)) }
    }

    /// A copy of this vector on `arena` (capacity = length).
    ///
    /// # Errors
    /// Allocation or copy failure.
    pub fn to_arena<B: Arena>(&self, arena: B) -> Result<PodVector<T, B>, ArenaError> {
        let mut out = PodVector::try_with_capacity_in(self.len, arena)?;
        out.strategy = self.strategy;
        // SAFETY: `len` elements of `self` (live, initialised) and `len` elements of room
        // in `out`'s fresh allocation; two distinct allocations.
        unsafe {
            amrex_arena::copy_between(
                &self.arena,
                self.ptr.cast(),
                &out.arena,
                out.ptr.cast(),
                self.len * size_of::<T>(),
            )
        }?;
        out.len = self.len;
        Ok(out)
    }

    /// A copy on the same arena with the same capacity and strategy.
    ///
    /// # Errors
    /// Allocation or copy failure.
    pub fn try_clone(&self) -> Result<Self, ArenaError> {
        let mut out = Self::try_with_capacity_in(self.cap, self.arena.clone())?;
        out.strategy = self.strategy;
        if self.len > 0 {
            // SAFETY: `len` initialised elements of ours, room for `len` in `out`'s distinct
            // allocation of the same arena.
            unsafe {
                self.arena
                    .copy_within(out.ptr.cast(), self.ptr.cast(), self.len * size_of::<T>())
            }?;
        }
        out.len = self.len;
        Ok(out)
    }

    /// The elements as a slice when the memory is host accessible now (after
    /// synchronising the arena); managed memory qualifies, device memory does not.
    ///
    /// # Errors
    /// [`ErrorKind::NotHostAccessible`], or the synchronisation's failure.
    pub fn try_as_slice(&self) -> Result<&[T], ArenaError> {
        if !self.arena.host_accessible() {
            return Err(ErrorKind::NotHostAccessible(self.arena.device()).into());
        }
        self.arena.synchronize()?;
        // SAFETY: `len` initialised elements (invariant 2), host readable (checked).
        Ok(unsafe { core::slice::from_raw_parts(self.ptr.as_ptr(), self.len) })
    }

    /// As [`try_as_slice`](Self::try_as_slice), for writing.
    ///
    /// # Errors
    /// As `try_as_slice`.
    pub fn try_as_mut_slice(&mut self) -> Result<&mut [T], ArenaError> {
        if !self.arena.host_accessible() {
            return Err(ErrorKind::NotHostAccessible(self.arena.device()).into());
        }
        self.arena.synchronize()?;
        // SAFETY: as `try_as_slice`, and `&mut self` makes the access exclusive.
        Ok(unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) })
    }
}

/// Host-only operations: slices, insertion and removal in the middle.
impl<T: AnyBitPattern, A: HostAccessible> PodVector<T, A> {
    /// The elements.
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: `len` initialised elements (invariant 2) in host memory (`HostAccessible`).
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The elements, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as `as_slice`, exclusive through `&mut self`.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// The unused capacity, to write before [`set_len`](Self::set_len).
    pub fn spare_capacity_mut(&mut self) -> &mut [MaybeUninit<T>] {
        // SAFETY: `len <= cap`: inside the allocation (invariant 1).
        let tail = unsafe { self.ptr.add(self.len) };
        // SAFETY: `[len, cap)` is host memory we own exclusively through `&mut self`, and
        // `MaybeUninit` makes no claim about its contents.
        unsafe {
            core::slice::from_raw_parts_mut(
                tail.cast::<MaybeUninit<T>>().as_ptr(),
                self.cap - self.len,
            )
        }
    }

    /// Removes and returns the last element.
    pub fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        // SAFETY: the old last index is below `cap`.
        let p = unsafe { self.ptr.add(self.len) };
        // SAFETY: the old last element is initialised and host readable.
        Some(unsafe { p.read() })
    }

    /// Inserts `value` at `index`, shifting the tail right.
    ///
    /// # Errors
    /// [`ErrorKind::OutOfBounds`] when `index > len`, or allocation failure.
    pub fn try_insert(&mut self, index: usize, value: T) -> Result<(), ArenaError> {
        self.try_insert_from_slice(index, core::slice::from_ref(&value))
    }

    /// Inserts a copy of `src` at `index`, shifting the tail right.
    ///
    /// # Errors
    /// [`ErrorKind::OutOfBounds`] when `index > len`, or allocation failure.
    pub fn try_insert_from_slice(&mut self, index: usize, src: &[T]) -> Result<(), ArenaError> {
        if index > self.len {
            return Err(ErrorKind::OutOfBounds {
                index,
                len: self.len,
            }
            .into());
        }
        self.try_reserve(src.len())?;
        // SAFETY: `index <= len <= cap`.
        let at = unsafe { self.ptr.add(index) };
        // SAFETY: `index + src.len() <= len + src.len() <= cap`.
        let after = unsafe { at.add(src.len()) };
        // SAFETY: moves the `len - index` tail elements right by `src.len()`; both ranges
        // fit the capacity after the reserve; `copy` allows overlap.
        unsafe { core::ptr::copy(at.as_ptr(), after.as_ptr(), self.len - index) };
        // SAFETY: `src` is a shared borrow distinct from our exclusive buffer; room for it.
        unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), at.as_ptr(), src.len()) };
        self.len += src.len();
        Ok(())
    }

    /// As [`try_insert`](Self::try_insert).
    ///
    /// # Panics
    /// On its errors.
    #[track_caller]
    pub fn insert(&mut self, index: usize, value: T) {
        self.try_insert(index, value)
            .unwrap_or_else(|e| fail("insert", e));
    }

    /// As [`try_insert_from_slice`](Self::try_insert_from_slice).
    ///
    /// # Panics
    /// On its errors.
    #[track_caller]
    pub fn insert_from_slice(&mut self, index: usize, src: &[T]) {
        self.try_insert_from_slice(index, src)
            .unwrap_or_else(|e| fail("insert_from_slice", e));
    }

    /// Removes and returns element `index`, shifting the tail left (AMReX `erase`).
    ///
    /// # Panics
    /// When `index >= len`.
    #[track_caller]
    pub fn erase(&mut self, index: usize) -> T {
        let len = self.len;
        assert!(
            index < len,
            "PodVector::erase: index {index} out of bounds for length {len}"
        );
        let value = self[index];
        self.erase_range(index..index + 1);
        value
    }

    /// Removes the elements in `range`, shifting the tail left.
    ///
    /// # Panics
    /// When the range is decreasing or ends past `len`.
    #[track_caller]
    pub fn erase_range(&mut self, range: Range<usize>) {
        let len = self.len;
        assert!(
            range.start <= range.end && range.end <= len,
            "PodVector::erase_range: range {range:?} out of bounds for length {len}"
        );
        // SAFETY: `start <= len`, inside the allocation.
        let start = unsafe { self.ptr.add(range.start) };
        // SAFETY: `end <= len`, inside the allocation.
        let end = unsafe { self.ptr.add(range.end) };
        // SAFETY: moves the `len - end` tail elements to `start`; `copy` allows overlap.
        unsafe { core::ptr::copy(end.as_ptr(), start.as_ptr(), len - range.end) };
        self.len -= range.end - range.start;
    }
}

impl<T: AnyBitPattern, A: Arena> Drop for PodVector<T, A> {
    fn drop(&mut self) {
        // Invariant 3: the layout of `cap` elements is valid.
        if let Ok(layout) = Layout::array::<T>(self.cap) {
            // SAFETY: invariants 1 and 4: we own this allocation of `layout` from `arena`
            // and free it once, here.
            unsafe { self.arena.deallocate(self.ptr.cast(), layout) };
        }
    }
}

impl<T: AnyBitPattern, A: HostAccessible> Deref for PodVector<T, A> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: AnyBitPattern, A: HostAccessible> DerefMut for PodVector<T, A> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

impl<T: AnyBitPattern, A: Arena> Clone for PodVector<T, A> {
    #[track_caller]
    fn clone(&self) -> Self {
        self.try_clone().unwrap_or_else(|e| fail("clone", e))
    }
}

impl<T: AnyBitPattern + fmt::Debug, A: Arena> fmt::Debug for PodVector<T, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("PodVector");
        d.field("len", &self.len)
            .field("capacity", &self.cap)
            .field("kind", &self.arena.kind())
            .field("device", &self.arena.device());
        if self.arena.host_accessible() {
            // SAFETY: `len` initialised, host-readable elements (invariants 2 and 5).
            let s = unsafe { core::slice::from_raw_parts(self.ptr.as_ptr(), self.len) };
            d.field("data", &s);
        }
        d.finish()
    }
}

impl<T: AnyBitPattern + PartialEq, A: HostAccessible, B: HostAccessible> PartialEq<PodVector<T, B>>
    for PodVector<T, A>
{
    fn eq(&self, other: &PodVector<T, B>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: AnyBitPattern + PartialEq, A: HostAccessible> PartialEq<[T]> for PodVector<T, A> {
    fn eq(&self, other: &[T]) -> bool {
        self.as_slice() == other
    }
}

impl<T: AnyBitPattern + PartialEq, A: HostAccessible, const N: usize> PartialEq<[T; N]>
    for PodVector<T, A>
{
    fn eq(&self, other: &[T; N]) -> bool {
        self.as_slice() == other
    }
}

impl<T: AnyBitPattern + Eq, A: HostAccessible> Eq for PodVector<T, A> {}

impl<T: AnyBitPattern, A: Arena> Extend<T> for PodVector<T, A> {
    #[track_caller]
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        let iter = iter.into_iter();
        self.reserve(iter.size_hint().0);
        for x in iter {
            self.push(x);
        }
    }
}

impl<'a, T: AnyBitPattern, A: Arena> Extend<&'a T> for PodVector<T, A> {
    #[track_caller]
    fn extend<I: IntoIterator<Item = &'a T>>(&mut self, iter: I) {
        self.extend(iter.into_iter().copied());
    }
}

impl<T: AnyBitPattern> FromIterator<T> for PodVector<T, HostArena> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut v = Self::new();
        v.extend(iter);
        v
    }
}

impl<T: AnyBitPattern> From<Vec<T>> for PodVector<T, HostArena> {
    fn from(v: Vec<T>) -> Self {
        Self::from_vec(v)
    }
}

impl<T: AnyBitPattern> From<&[T]> for PodVector<T, HostArena> {
    fn from(s: &[T]) -> Self {
        Self::from_slice(s)
    }
}

impl<T: AnyBitPattern> From<PodVector<T, HostArena>> for Vec<T> {
    fn from(v: PodVector<T, HostArena>) -> Self {
        v.into_vec()
    }
}

impl<'a, T: AnyBitPattern, A: HostAccessible> IntoIterator for &'a PodVector<T, A> {
    type Item = &'a T;
    type IntoIter = core::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl<'a, T: AnyBitPattern, A: HostAccessible> IntoIterator for &'a mut PodVector<T, A> {
    type Item = &'a mut T;
    type IntoIter = core::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_mut_slice().iter_mut()
    }
}
