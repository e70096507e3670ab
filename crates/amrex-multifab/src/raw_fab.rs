//! [`RawFab`]: a pointer, a fab box and the fab's [`FabLayout`], copied into the
//! parallel kernels and the copy engine, which reach elements through it only while the
//! FabArray is borrowed.

use core::ptr::NonNull;

use amrex_array4::{Array4Mut, FabLayout};
use amrex_box::{IndexBox, IntVect};

/// Raw layout of one fab, copied into parallel kernels.
///
/// Invariant: built by `FabArray::raw` from a fab of a live `Store` (its invariant
/// 2): for every cell of `bx` and component `n < ncomp`, the element at `offset(..)`
/// from `ptr` is an initialised, aligned `T` of that fab's memory (`BaseFab` invariant
/// 2), and distinct (cell, component) pairs reach distinct elements. Users of the
/// unsafe accessors promise that the fab is still there and that accesses are
/// disjoint as for `&[T]` / `&mut [T]`.
pub(crate) struct RawFab<T> {
    pub(crate) ptr: NonNull<T>,
    /// The fab box (with its index type).
    pub(crate) bx: IndexBox,
    /// The fab's layout (its `begin` is `bx.lo()`).
    pub(crate) layout: FabLayout,
}

impl<T> Clone for RawFab<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for RawFab<T> {}

// SAFETY: a layout plus a pointer; every dereference goes through an unsafe accessor
// whose caller proves exclusive or shared access as for `&mut [T]` / `&[T]`.
unsafe impl<T: Send + Sync> Send for RawFab<T> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync> Sync for RawFab<T> {}

/// `hi - lo + 1`, the length of a non-empty extent `lo..=hi` of a fab's box, as `usize`
/// (a row's, or a tag's in one direction), with no branch.
#[inline(always)]
#[expect(
    clippy::cast_sign_loss,
    reason = "lo <= hi inside a fab's box, whose lengths are at most i32::MAX (FabLayout \
              invariant 1): 1 <= hi - lo + 1 <= i32::MAX"
)]
pub(crate) fn extent(lo: i32, hi: i32) -> usize {
    debug_assert!(lo <= hi);
    (hi - lo + 1) as usize
}

impl<T> RawFab<T> {
    /// Element offset of `(i, j, k, n)` (in bounds, checked in debug builds).
    #[inline(always)]
    pub(crate) fn offset(&self, i: i32, j: i32, k: i32, n: usize) -> usize {
        debug_assert!(self.layout.offset(i, j, k, n).is_some());
        // In bounds, so not negative.
        self.layout.offset_unchecked(i, j, k, n).cast_unsigned()
    }

    /// The `i`-row `i0..=i1` at `(j, k, n)`.
    ///
    /// # Safety
    /// The row lies inside `bx` with `n < ncomp`, and nobody writes those elements
    /// during `'a`.
    #[inline(always)]
    pub(crate) unsafe fn row<'a>(&self, i0: i32, i1: i32, j: i32, k: i32, n: usize) -> &'a [T] {
        debug_assert!(i0 <= i1 && self.bx.contains(IntVect::new(i1, j, k)));
        let off = self.offset(i0, j, k, n);
        // SAFETY: in bounds (caller), so inside the fab's memory (RawFab invariant).
        let p = unsafe { self.ptr.as_ptr().add(off) };
        // SAFETY: `i1 - i0 + 1` consecutive initialised elements (unit `i` stride), not
        // written during `'a` (caller).
        unsafe { core::slice::from_raw_parts(p, extent(i0, i1)) }
    }

    /// The `i`-row `i0..=i1` at `(j, k, n)`, mutably.
    ///
    /// # Safety
    /// The row lies inside `bx` with `n < ncomp`, and nobody else reads or writes those
    /// elements during `'a`.
    #[inline(always)]
    pub(crate) unsafe fn row_mut<'a>(
        &self,
        i0: i32,
        i1: i32,
        j: i32,
        k: i32,
        n: usize,
    ) -> &'a mut [T] {
        debug_assert!(i0 <= i1 && self.bx.contains(IntVect::new(i1, j, k)));
        let off = self.offset(i0, j, k, n);
        // SAFETY: in bounds (caller), so inside the fab's memory (RawFab invariant).
        let p = unsafe { self.ptr.as_ptr().add(off) };
        // SAFETY: consecutive initialised elements, exclusively ours during `'a` (caller).
        unsafe { core::slice::from_raw_parts_mut(p, extent(i0, i1)) }
    }

    /// `len` consecutive elements starting at `(i0, j, k, n)`: an `i`-row, or several
    /// rows/planes when the layout makes them contiguous.
    ///
    /// # Safety
    /// The elements are the cells from `(i0, j, k)` on in Fortran order within `bx`,
    /// contiguous in memory (the caller checked the strides), and nobody writes them
    /// during `'a`.
    #[inline(always)]
    pub(crate) unsafe fn run<'a>(&self, i0: i32, j: i32, k: i32, len: usize, n: usize) -> &'a [T] {
        let off = self.offset(i0, j, k, n);
        debug_assert!(self.layout.max_offset().is_some_and(|m| off + len <= m + 1));
        // SAFETY: in bounds (caller), so inside the fab's memory (RawFab invariant).
        let p = unsafe { self.ptr.as_ptr().add(off) };
        // SAFETY: `len` contiguous initialised elements, not written during `'a` (caller).
        unsafe { core::slice::from_raw_parts(p, len) }
    }

    /// Mutable version of [`run`](Self::run).
    ///
    /// # Safety
    /// As for `run`, and nobody else reads or writes the elements during `'a`.
    #[inline(always)]
    pub(crate) unsafe fn run_mut<'a>(
        &self,
        i0: i32,
        j: i32,
        k: i32,
        len: usize,
        n: usize,
    ) -> &'a mut [T] {
        let off = self.offset(i0, j, k, n);
        debug_assert!(self.layout.max_offset().is_some_and(|m| off + len <= m + 1));
        // SAFETY: in bounds (caller), so inside the fab's memory (RawFab invariant).
        let p = unsafe { self.ptr.as_ptr().add(off) };
        // SAFETY: contiguous initialised elements, exclusively ours during `'a` (caller).
        unsafe { core::slice::from_raw_parts_mut(p, len) }
    }

    /// Mutable `Array4` restricted to `sub` (inside `bx`).
    ///
    /// # Safety
    /// `sub` is inside `bx` and nobody else reads or writes the elements of `sub`
    /// during `'a`.
    pub(crate) unsafe fn array4_mut<'a>(&self, sub: IndexBox) -> Array4Mut<'a, T> {
        assert!(
            self.bx.contains_box(&sub.convert(self.bx.ix_type())),
            "tile outside fab"
        );
        let lo = sub.lo();
        let off = if sub.ok() && self.layout.ncomp() > 0 {
            self.offset(lo[0], lo[1], lo[2], 0)
        } else {
            0
        };
        // SAFETY: `off` is in bounds (just checked), so inside the fab's memory.
        let p = unsafe { self.ptr.as_ptr().add(off) };
        let end = if sub.ok() { sub.hi() + 1 } else { lo };
        // SAFETY: the view covers `sub` inside `bx` with the fab's strides (RawFab
        // invariant); exclusive access to those elements is the caller's promise.
        unsafe { Array4Mut::from_raw_parts(p, lo, end, self.layout.strides(), self.layout.ncomp()) }
    }
}
