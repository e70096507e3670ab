//! The methods of the unique view [`Array4Mut`].

use core::marker::PhantomData;
use core::ptr::NonNull;

use amrex_box::{Dim3, IndexBox, IntVect};

use super::{Array4, Array4Mut, CellData, CellDataMut, box_outside, compact, out_of_bounds};
use crate::error::Array4Error;
use crate::layout::FabLayout;
use crate::loops::coord_at;
use crate::raw::Raw;

impl<'a, T> Array4Mut<'a, T> {
    /// A mutable view of `data` laid out as AMReX's `BaseFab` does; see [`Array4::new`].
    ///
    /// # Panics
    /// If `data` is shorter than `bx.num_pts() * ncomp`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn new(data: &'a mut [T], bx: IndexBox, ncomp: usize) -> Self {
        match Self::try_new(data, bx, ncomp) {
            Ok(a) => a,
            Err(e) => panic!("{e}"),
        }
    }

    /// As [`new`](Self::new), returning an error instead of panicking.
    ///
    /// # Errors
    /// [`Array4Error::SliceTooShort`] or [`Array4Error::TooLarge`].
    #[inline]
    pub fn try_new(data: &'a mut [T], bx: IndexBox, ncomp: usize) -> Result<Self, Array4Error> {
        let len = data.len();
        let ptr = NonNull::from(data).cast::<T>();
        let raw = compact(ptr, len, &bx, ncomp)?;
        // Invariants: compact strides (distinct offsets) over a slice of at least `needed`
        // elements (2, 5); dangling when empty (3); unique borrow for 'a (5).
        Ok(Self {
            raw,
            _marker: PhantomData,
        })
    }

    /// A mutable view from raw parts.
    ///
    /// # Safety
    /// As [`Array4::from_raw_parts`] items 1–3, and in place of item 4:
    /// 4. distinct in-bounds indices reach distinct elements, and nothing else reads or
    ///    writes those elements during `'a`.
    ///
    /// # Panics
    /// As [`Array4::from_raw_parts`].
    #[inline]
    #[must_use]
    #[track_caller]
    pub unsafe fn from_raw_parts(
        ptr: *mut T,
        begin: IntVect,
        end: IntVect,
        strides: [usize; 3],
        ncomp: usize,
    ) -> Self {
        // SAFETY: items 1–3 forwarded; item 4 is stronger than `Array4`'s.
        let a = unsafe { Array4::from_raw_parts(ptr, begin, end, strides, ncomp) };
        Self {
            raw: a.raw,
            _marker: PhantomData,
        }
    }

    common_methods!();

    /// Wraps a pointer and layout.
    ///
    /// # Safety
    /// `raw` satisfies `Array4Mut`'s invariants 1–3 and 5 for `'a`.
    #[inline(always)]
    pub(crate) unsafe fn from_raw(raw: Raw<T>) -> Self {
        Self {
            raw,
            _marker: PhantomData,
        }
    }

    /// Mutable pointer to element `(begin.x, begin.y, begin.z, 0)` (dangling when empty).
    #[inline]
    #[must_use]
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.raw.ptr.as_ptr()
    }

    /// A shorter-lived mutable view of the same elements.
    #[inline]
    #[must_use]
    pub fn reborrow(&mut self) -> Array4Mut<'_, T> {
        Array4Mut {
            raw: self.raw,
            _marker: PhantomData,
        }
    }

    /// A shared view of the same elements for as long as `self` is borrowed (AMReX's
    /// implicit `Array4<T>` → `Array4<T const>`).
    #[inline]
    #[must_use]
    pub fn as_const(&self) -> Array4<'_, T> {
        Array4 {
            raw: self.raw,
            _marker: PhantomData,
        }
    }

    /// Turns the unique view into a shared one for the rest of `'a`.
    #[inline]
    #[must_use]
    pub fn into_const(self) -> Array4<'a, T> {
        Array4 {
            raw: self.raw,
            _marker: PhantomData,
        }
    }

    /// Reference to `a(i, j, k, n)`, `None` out of bounds.
    #[inline]
    #[must_use]
    pub fn get(&self, i: i32, j: i32, k: i32, n: usize) -> Option<&T> {
        self.as_const().get(i, j, k, n)
    }

    /// Mutable reference to `a(i, j, k, n)`, `None` out of bounds.
    #[inline]
    #[must_use]
    pub fn get_mut(&mut self, i: i32, j: i32, k: i32, n: usize) -> Option<&mut T> {
        let off = self.raw.offset(i, j, k, n)?;
        // SAFETY: in bounds: a live element (invariant 2) that only this view, borrowed
        // mutably here, may access (invariant 5).
        Some(unsafe { &mut *self.raw.elem(off) })
    }

    /// Reference to `a(i, j, k, n)` without bounds checks (checked by `debug_assert!`).
    ///
    /// # Safety
    /// `(i, j, k)` lies in `begin .. end` and `n < ncomp`.
    #[inline(always)]
    #[must_use]
    pub unsafe fn get_unchecked(&self, i: i32, j: i32, k: i32, n: usize) -> &T {
        // SAFETY: forwarded.
        unsafe { self.as_const().get_unchecked(i, j, k, n) }
    }

    /// Mutable reference to `a(i, j, k, n)` without bounds checks (checked by
    /// `debug_assert!`).
    ///
    /// # Safety
    /// `(i, j, k)` lies in `begin .. end` and `n < ncomp`.
    #[inline(always)]
    #[must_use]
    pub unsafe fn get_unchecked_mut(&mut self, i: i32, j: i32, k: i32, n: usize) -> &mut T {
        debug_assert!(
            self.raw.offset(i, j, k, n).is_some(),
            "Array4Mut::get_unchecked_mut: ({i}, {j}, {k}, {n}) is out of bounds"
        );
        let off = self.raw.offset_unchecked(i, j, k, n);
        // SAFETY: the caller guarantees bounds, so `off` reaches an element (invariant 2).
        let p = unsafe { self.raw.ptr.as_ptr().offset(off) };
        // SAFETY: a live element that only this (mutably borrowed) view accesses (5).
        unsafe { &mut *p }
    }

    /// The components of cell `(i, j, k)`.
    ///
    /// # Panics
    /// If the cell is out of bounds.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn cell_data(&self, i: i32, j: i32, k: i32) -> CellData<'_, T> {
        self.as_const().cell_data(i, j, k)
    }

    /// The mutable components of cell `(i, j, k)`, AMReX's `cellData(i, j, k)`.
    ///
    /// # Panics
    /// If the cell is out of bounds.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn cell_data_mut(&mut self, i: i32, j: i32, k: i32) -> CellDataMut<'_, T> {
        let c = self.as_const().cell_data(i, j, k);
        CellDataMut {
            ptr: c.ptr,
            nstride: c.nstride,
            ncomp: c.ncomp,
            _marker: PhantomData,
        }
    }

    /// Every element as one slice when the layout is compact; see
    /// [`Array4::as_slice`].
    #[inline]
    #[must_use]
    pub fn as_slice(&self) -> Option<&[T]> {
        self.as_const().as_slice()
    }

    /// Every element as one mutable slice, element `(i, j, k, n)` at
    /// [`layout().offset(i, j, k, n)`](FabLayout::offset), when the layout is compact
    /// (the view of a whole fab); `None` when the elements are not contiguous.
    #[inline]
    #[must_use]
    pub fn as_mut_slice(&mut self) -> Option<&mut [T]> {
        if !self.raw.is_compact() {
            return None;
        }
        let len = self.raw.len();
        if len == 0 {
            return Some(&mut []);
        }
        // SAFETY: with compact strides the elements are exactly the offsets `0..len` from
        // the view's own (writable) pointer, initialised and in one allocation (invariant
        // 2); only this mutably borrowed view accesses them (invariant 5).
        Some(unsafe { core::slice::from_raw_parts_mut(self.raw.ptr.as_ptr(), len) })
    }

    /// The `i`-row at `(j, k, n)` as a slice.
    ///
    /// # Panics
    /// If `(j, k, n)` is out of bounds.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn row(&self, j: i32, k: i32, n: usize) -> &[T] {
        self.as_const().row(j, k, n)
    }

    /// The `i`-row at `(j, k, n)` as a mutable slice.
    ///
    /// # Panics
    /// If `(j, k, n)` is out of bounds.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn row_mut(&mut self, j: i32, k: i32, n: usize) -> &mut [T] {
        if !self.raw.row_in_bounds(j, k, n) {
            out_of_bounds(&self.raw, self.raw.begin[0], j, k, n);
        }
        let nx = self.raw.len_dir(0);
        match self.raw.offset(self.raw.begin[0], j, k, n) {
            // SAFETY: the row's `nx` elements have unit stride and are in bounds
            // (invariant 2); the pointer comes from the view's own (writable) pointer, not
            // from a shared reference, and only this mutably borrowed view accesses the
            // elements (invariant 5).
            Some(off) => unsafe { core::slice::from_raw_parts_mut(self.raw.elem(off), nx) },
            // `(j, k, n)` is in bounds, so only `nx == 0` gets here.
            None => &mut [],
        }
    }

    /// Component `n` only, borrowing `self`.
    ///
    /// # Panics
    /// If `n >= ncomp`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn component_mut(&mut self, n: usize) -> Array4Mut<'_, T> {
        self.reborrow().into_components(n, 1)
    }

    /// Components `start .. start + count`, borrowing `self`.
    ///
    /// # Panics
    /// If `start + count > ncomp`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn components_mut(&mut self, start: usize, count: usize) -> Array4Mut<'_, T> {
        self.reborrow().into_components(start, count)
    }

    /// Components `start .. start + count` for the rest of `'a`.
    ///
    /// # Panics
    /// If `start + count > ncomp`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn into_components(self, start: usize, count: usize) -> Self {
        let raw = self.as_const().components(start, count).raw;
        // Subset of this view's elements: invariants kept.
        Self {
            raw,
            _marker: PhantomData,
        }
    }

    /// The part over `bx`, borrowing `self`; `None` unless `bx` is non-empty and inside.
    #[inline]
    #[must_use]
    pub fn try_sub_box_mut(&mut self, bx: &IndexBox) -> Option<Array4Mut<'_, T>> {
        self.reborrow().try_into_sub_box(bx)
    }

    /// The part over `bx`, borrowing `self`.
    ///
    /// # Panics
    /// If `bx` is empty or not inside the bounds.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn sub_box_mut(&mut self, bx: &IndexBox) -> Array4Mut<'_, T> {
        self.reborrow().into_sub_box(bx)
    }

    /// The part over `bx` for the rest of `'a`; `None` unless `bx` is non-empty and inside.
    #[inline]
    #[must_use]
    pub fn try_into_sub_box(self, bx: &IndexBox) -> Option<Self> {
        // Subset of this view's elements: invariants kept.
        self.raw.covers(bx).then(|| Self {
            raw: self.raw.restrict(bx),
            _marker: PhantomData,
        })
    }

    /// The part over `bx` for the rest of `'a`.
    ///
    /// # Panics
    /// If `bx` is empty or not inside the bounds.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn into_sub_box(self, bx: &IndexBox) -> Self {
        let raw = self.raw;
        match self.try_into_sub_box(bx) {
            Some(a) => a,
            None => box_outside(&raw, bx, "sub_box_mut"),
        }
    }

    /// Splits into the cells below `idx` and those from `idx` up in direction `dir`
    /// (`idx` is clamped to the bounds, so one part may be empty). The two views are
    /// disjoint, so they can go to different threads (like `split_at_mut`).
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn split_at(self, dir: usize, idx: i32) -> (Self, Self) {
        assert!(
            dir < 3,
            "Array4Mut::split_at: direction {dir} is not 0, 1 or 2"
        );
        let idx = idx.clamp(self.raw.begin[dir], self.raw.end[dir]);
        let mut lo = self.raw;
        let mut hi = self.raw;
        lo.end[dir] = idx;
        hi.begin[dir] = idx;
        let part = |r: Raw<T>| {
            let r = if r.is_empty() {
                Raw {
                    ptr: NonNull::dangling(),
                    layout: r.layout,
                }
            } else {
                // Non-empty, so its box is inside the original bounds.
                self.raw.restrict(&r.index_box())
            };
            // Disjoint subsets of this view's elements: each keeps the invariants, and
            // neither touches the other's elements (invariant 5 holds for both).
            Array4Mut {
                raw: r,
                _marker: PhantomData,
            }
        };
        (part(lo), part(hi))
    }

    /// Calls `f(i, j, k, n, &mut a(i, j, k, n))` for every cell of `bx` and every
    /// component, `i` fastest and `n` slowest. Bounds are checked once, up front; the
    /// inner loop runs over a slice, so the compiler vectorises it.
    ///
    /// An empty `bx` does nothing.
    ///
    /// # Panics
    /// If `bx` is not empty and not inside the bounds.
    #[inline]
    #[track_caller]
    pub fn for_each_mut(&mut self, bx: IndexBox, mut f: impl FnMut(i32, i32, i32, usize, &mut T)) {
        if bx.is_empty() {
            return;
        }
        let mut sub = self.sub_box_mut(&bx);
        let x0 = bx.lo()[0];
        for n in 0..sub.ncomp() {
            for k in bx.lo()[2]..=bx.hi()[2] {
                for j in bx.lo()[1]..=bx.hi()[1] {
                    for (ii, v) in sub.row_mut(j, k, n).iter_mut().enumerate() {
                        f(coord_at(x0, ii as u64), j, k, n, v);
                    }
                }
            }
        }
    }

    /// Sets every element over `bx` (all components) to `v`.
    ///
    /// An empty `bx` does nothing.
    ///
    /// # Panics
    /// If `bx` is not empty and not inside the bounds.
    #[inline]
    #[track_caller]
    pub fn fill(&mut self, bx: IndexBox, v: T)
    where
        T: Clone,
    {
        if bx.is_empty() {
            return;
        }
        let mut sub = self.sub_box_mut(&bx);
        for n in 0..sub.ncomp() {
            for k in bx.lo()[2]..=bx.hi()[2] {
                for j in bx.lo()[1]..=bx.hi()[1] {
                    sub.row_mut(j, k, n).fill(v.clone());
                }
            }
        }
    }

    /// Calls `f(&mut self(i, j, k, n), &src(i, j, k, n))` for every cell of `bx` and
    /// every component of `self` (ndarray's `zip_mut_with`). Bounds are checked once; the
    /// inner loop zips two slices, which the compiler vectorises.
    ///
    /// An empty `bx` does nothing.
    ///
    /// # Panics
    /// If `bx` is not empty and not inside both views, or `src` has fewer components.
    #[inline]
    #[track_caller]
    pub fn zip_mut_with<U>(
        &mut self,
        src: Array4<'_, U>,
        bx: IndexBox,
        mut f: impl FnMut(&mut T, &U),
    ) {
        if bx.is_empty() {
            return;
        }
        let mut dst = self.sub_box_mut(&bx);
        let src = src.sub_box(&bx);
        assert!(
            src.ncomp() >= dst.ncomp(),
            "Array4Mut::zip_mut_with: the source has {} components, the destination {}",
            src.ncomp(),
            dst.ncomp()
        );
        for n in 0..dst.ncomp() {
            for k in bx.lo()[2]..=bx.hi()[2] {
                for j in bx.lo()[1]..=bx.hi()[1] {
                    let s = src.row(j, k, n);
                    for (d, s) in dst.row_mut(j, k, n).iter_mut().zip(s) {
                        f(d, s);
                    }
                }
            }
        }
    }
}
