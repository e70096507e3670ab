//! The layout shared by `Array4` and `Array4Mut`, with all the index arithmetic.

use core::ptr::NonNull;

use amrex_box::{IndexBox, IntVect};

/// Pointer, bounds and strides of a 4-D view. The owning view types state the
/// invariants; this type only does arithmetic and never dereferences.
pub(crate) struct Raw<T> {
    /// Element `(begin.x, begin.y, begin.z, 0)`; dangling (but aligned) when empty.
    pub(crate) ptr: NonNull<T>,
    /// Inclusive low corner.
    pub(crate) begin: IntVect,
    /// Exclusive high corner; `end >= begin` component-wise.
    pub(crate) end: IntVect,
    pub(crate) jstride: usize,
    pub(crate) kstride: usize,
    pub(crate) nstride: usize,
    pub(crate) ncomp: usize,
}

impl<T> Clone for Raw<T> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Raw<T> {}

/// Offset of `i` from `b` when `b <= i < e`.
#[inline(always)]
fn rel(i: i32, b: i32, e: i32) -> Option<usize> {
    // Differences of two i32 fit i64; a negative one wraps to a huge u64 and fails.
    let d = (i64::from(i) - i64::from(b)) as u64;
    let len = (i64::from(e) - i64::from(b)) as u64;
    (d < len).then_some(d as usize)
}

impl<T> Raw<T> {
    /// Length in direction `d` (`end - begin`, at most `u32::MAX`).
    #[inline(always)]
    pub(crate) fn len_dir(&self, d: usize) -> usize {
        (i64::from(self.end[d]) - i64::from(self.begin[d])) as usize
    }

    /// Number of elements (`nx * ny * nz * ncomp`).
    #[inline]
    pub(crate) fn len(&self) -> usize {
        let dims = [
            self.len_dir(0),
            self.len_dir(1),
            self.len_dir(2),
            self.ncomp,
        ];
        if dims.contains(&0) {
            return 0;
        }
        // A non-empty view's elements are addressable (invariant 2 of the views), so the
        // product fits; saturate rather than wrap if raw parts broke that contract.
        dims.iter().fold(1usize, |acc, &d| acc.saturating_mul(d))
    }

    #[inline(always)]
    pub(crate) fn contains(&self, i: i32, j: i32, k: i32) -> bool {
        rel(i, self.begin[0], self.end[0]).is_some()
            && rel(j, self.begin[1], self.end[1]).is_some()
            && rel(k, self.begin[2], self.end[2]).is_some()
    }

    /// `true` if `(j, k)` is in bounds and `n < ncomp` (whatever the `i` extent).
    #[inline(always)]
    pub(crate) fn row_in_bounds(&self, j: i32, k: i32, n: usize) -> bool {
        rel(j, self.begin[1], self.end[1]).is_some()
            && rel(k, self.begin[2], self.end[2]).is_some()
            && n < self.ncomp
    }

    /// Element offset of `(i, j, k, n)`, `None` out of bounds.
    #[inline(always)]
    pub(crate) fn offset(&self, i: i32, j: i32, k: i32, n: usize) -> Option<usize> {
        let di = rel(i, self.begin[0], self.end[0])?;
        let dj = rel(j, self.begin[1], self.end[1])?;
        let dk = rel(k, self.begin[2], self.end[2])?;
        if n >= self.ncomp {
            return None;
        }
        // In bounds, so the offset is at most the view's largest offset, which fits isize
        // (invariant 2 of the views): no overflow.
        Some(di + dj * self.jstride + dk * self.kstride + n * self.nstride)
    }

    /// `ptr + off` as a raw pointer (wrapping arithmetic: dereferencing it is the
    /// caller's business, and only sound for the offset of an in-bounds element).
    #[inline(always)]
    pub(crate) fn elem(&self, off: usize) -> *mut T {
        self.ptr.as_ptr().wrapping_add(off)
    }

    /// Element offset without bounds checks (only meaningful in bounds).
    #[inline(always)]
    pub(crate) fn offset_unchecked(&self, i: i32, j: i32, k: i32, n: usize) -> isize {
        let d = |x: i32, b: i32| x as isize - b as isize;
        d(i, self.begin[0])
            + d(j, self.begin[1]) * self.jstride as isize
            + d(k, self.begin[2]) * self.kstride as isize
            + n as isize * self.nstride as isize
    }

    /// The bounds as a cell-centred box (`begin ..= end - 1`).
    #[inline]
    pub(crate) fn index_box(&self) -> IndexBox {
        IndexBox::new(self.begin, self.end - 1)
    }

    /// `true` if `bx` (any index type) is non-empty and inside the bounds.
    #[inline]
    pub(crate) fn covers(&self, bx: &IndexBox) -> bool {
        bx.ok() && self.contains_iv(bx.lo()) && self.contains_iv(bx.hi())
    }

    #[inline(always)]
    pub(crate) fn contains_iv(&self, p: IntVect) -> bool {
        self.contains(p[0], p[1], p[2])
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
