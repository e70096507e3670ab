//! The pointer-plus-layout shared by `Array4` and `Array4Mut`.

use core::ops::{Deref, DerefMut};
use core::ptr::NonNull;

use amrex_box::IndexBox;

use crate::layout::FabLayout;

/// A pointer and a [`FabLayout`] (which does all the index arithmetic; `Raw` derefs to
/// it). The owning view types state the invariants; this type never dereferences.
pub(crate) struct Raw<T> {
    /// Element `(begin.x, begin.y, begin.z, 0)`; dangling (but aligned) when empty.
    pub(crate) ptr: NonNull<T>,
    pub(crate) layout: FabLayout,
}

impl<T> Clone for Raw<T> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Raw<T> {}

impl<T> Deref for Raw<T> {
    type Target = FabLayout;
    #[inline(always)]
    fn deref(&self) -> &FabLayout {
        &self.layout
    }
}

impl<T> DerefMut for Raw<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut FabLayout {
        &mut self.layout
    }
}

impl<T> Raw<T> {
    /// `ptr + off` as a raw pointer (wrapping arithmetic: dereferencing it is the
    /// caller's business, and only sound for the offset of an in-bounds element).
    #[inline(always)]
    pub(crate) fn elem(&self, off: usize) -> *mut T {
        self.ptr.as_ptr().wrapping_add(off)
    }

    /// Same memory, bounds restricted to `bx`, which the caller checked with `covers`.
    /// The pointer moves to `bx.lo()`; an empty result gets a dangling pointer.
    #[inline]
    pub(crate) fn restrict(&self, bx: &IndexBox) -> Self {
        debug_assert!(self.covers(bx));
        let mut r = *self;
        r.begin = bx.lo();
        // `bx.hi()` lies inside `[begin, end)`, so `hi + 1 <= end` fits i32.
        r.end = bx.hi() + 1;
        r.ptr = self.moved(self.offset(bx.lo()[0], bx.lo()[1], bx.lo()[2], 0), r.len());
        r
    }

    /// Same memory, components `start .. start + count` (checked by the caller).
    #[inline]
    pub(crate) fn comps(&self, start: usize, count: usize) -> Self {
        debug_assert!(start.checked_add(count).is_some_and(|e| e <= self.ncomp));
        let mut r = *self;
        r.ncomp = count;
        let off = (start < self.ncomp).then(|| start * self.nstride);
        r.ptr = self.moved(off, r.len());
        r
    }

    /// `ptr + off` when the resulting view has elements, else a dangling pointer.
    #[inline]
    fn moved(&self, off: Option<usize>, new_len: usize) -> NonNull<T> {
        match off {
            Some(off) if new_len > 0 => {
                // SAFETY: `new_len > 0` means the old view had elements too, and `off` is
                // the offset of one of its elements (computed by `offset` or as
                // `start * nstride` with `start < ncomp`), so it stays inside the
                // allocation the views' invariant 2 describes.
                unsafe { self.ptr.add(off) }
            }
            _ => NonNull::dangling(),
        }
    }
}
