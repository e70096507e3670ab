//! The methods of the shared view [`Array4`].

use core::marker::PhantomData;
use core::ptr::NonNull;

use amrex_box::{Dim3, IndexBox, IntVect};

use super::{Array4, CellData, box_outside, compact, comps_outside, out_of_bounds};
use crate::error::Array4Error;
use crate::layout::FabLayout;
use crate::loops::coord_at;
use crate::raw::Raw;

impl<'a, T> Array4<'a, T> {
    /// Wraps a pointer and layout.
    ///
    /// # Safety
    /// `raw` satisfies `Array4`'s invariants 1–4 for `'a`.
    #[inline(always)]
    pub(crate) unsafe fn from_raw(raw: Raw<T>) -> Self {
        Self {
            raw,
            _marker: PhantomData,
        }
    }

    /// A view of `data` laid out as AMReX's `BaseFab` does: box `bx` in Fortran order
    /// (`i` fastest), then `ncomp` components, with global indices starting at
    /// `bx.small_end()`. The box's index type does not matter. `data` may be longer than
    /// needed.
    ///
    /// # Panics
    /// If `data` is shorter than `bx.num_pts() * ncomp`; see [`try_new`](Self::try_new).
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn new(data: &'a [T], bx: IndexBox, ncomp: usize) -> Self {
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
    pub fn try_new(data: &'a [T], bx: IndexBox, ncomp: usize) -> Result<Self, Array4Error> {
        let ptr = NonNull::from(data).cast::<T>();
        let raw = compact(ptr, data.len(), &bx, ncomp)?;
        // Invariants: compact strides over a slice of at least `needed` elements (2); a
        // dangling pointer when empty (3); a shared borrow for 'a (4).
        Ok(Self {
            raw,
            _marker: PhantomData,
        })
    }

    /// A view from raw parts, AMReX's `Array4(p, begin, end, ncomp)` with explicit strides.
    ///
    /// # Safety
    /// 1. `begin <= end` component-wise.
    /// 2. If `(end - begin)` has no zero component and `ncomp > 0`: for every
    ///    `begin <= (i, j, k) < end` and `n < ncomp`, `ptr` offset by
    ///    `(i-begin.x) + (j-begin.y)*jstride + (k-begin.z)*kstride + n*nstride` elements
    ///    stays inside one allocation, the offset fits `isize`, and it points to an
    ///    initialised, aligned `T`.
    /// 3. Otherwise `ptr` is non-null and aligned.
    /// 4. Those elements are not written by anyone during `'a`.
    ///
    /// # Panics
    /// If `begin .. end` is not a box of the `i32` index space (`begin > end`, or a
    /// length `end - begin` above `i32::MAX`, which a view could not report through
    /// [`length`](Self::length)) or the largest offset overflows `usize`: see
    /// [`FabLayout::with_strides`].
    #[inline]
    #[must_use]
    #[track_caller]
    pub unsafe fn from_raw_parts(
        ptr: *const T,
        begin: IntVect,
        end: IntVect,
        strides: [usize; 3],
        ncomp: usize,
    ) -> Self {
        let layout = match FabLayout::with_strides(begin, end, strides, ncomp) {
            Ok(l) => l,
            Err(e) => panic!("Array4::from_raw_parts: {begin} .. {end}: {e}"),
        };
        debug_assert!(
            !ptr.is_null() && ptr.is_aligned(),
            "Array4::from_raw_parts: bad pointer"
        );
        // SAFETY: caller obligation 3 (non-null) and 2.
        let ptr = unsafe { NonNull::new_unchecked(ptr.cast_mut()) };
        Self {
            raw: Raw { ptr, layout },
            _marker: PhantomData,
        }
    }

    common_methods!();

    /// Reference to `a(i, j, k, n)`, `None` out of bounds.
    #[inline]
    #[must_use]
    pub fn get(&self, i: i32, j: i32, k: i32, n: usize) -> Option<&'a T> {
        let off = self.raw.offset(i, j, k, n)?;
        // SAFETY: in bounds, so invariant 2 makes `ptr + off` a live, initialised T that
        // nobody writes during 'a (invariant 4).
        Some(unsafe { &*self.raw.elem(off) })
    }

    /// Reference to `a(i, j, k, n)` without bounds checks (checked by `debug_assert!`).
    ///
    /// # Safety
    /// `(i, j, k)` lies in `begin .. end` and `n < ncomp`.
    #[inline(always)]
    #[must_use]
    pub unsafe fn get_unchecked(&self, i: i32, j: i32, k: i32, n: usize) -> &'a T {
        debug_assert!(
            self.raw.offset(i, j, k, n).is_some(),
            "Array4::get_unchecked: ({i}, {j}, {k}, {n}) is out of bounds"
        );
        let off = self.raw.offset_unchecked(i, j, k, n);
        // SAFETY: the caller guarantees bounds, so by invariant 2 `off` reaches an element
        // of the view.
        let p = unsafe { self.raw.ptr.as_ptr().offset(off) };
        // SAFETY: that element is initialised and not written during 'a (invariants 2, 4).
        unsafe { &*p }
    }

    /// The components of cell `(i, j, k)`, AMReX's `cellData(i, j, k)`.
    ///
    /// # Panics
    /// If the cell is out of bounds.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn cell_data(&self, i: i32, j: i32, k: i32) -> CellData<'a, T> {
        if !self.raw.contains(i, j, k) {
            out_of_bounds(&self.raw, i, j, k, 0);
        }
        let raw = self
            .raw
            .restrict(&IndexBox::new(IntVect::new(i, j, k), IntVect::new(i, j, k)));
        CellData {
            ptr: raw.ptr,
            nstride: raw.nstride,
            ncomp: raw.ncomp,
            _marker: PhantomData,
        }
    }

    /// Every element as one slice, element `(i, j, k, n)` at
    /// [`layout().offset(i, j, k, n)`](FabLayout::offset), when the layout is compact
    /// ([`FabLayout::is_compact`]: the view of a whole fab, or of a slice laid out by
    /// [`new`](Self::new), or a sub-box that spans the fab in `i` and `j`); `None` when
    /// the strides are not the compact ones (a sub-box narrower than the fab in `i` or
    /// `j`, or several components of a k-range).
    ///
    /// ```
    /// use amrex_array4::{Array4, IndexBox, IntVect};
    /// let bx = IndexBox::new(IntVect::new(-1, 0, 0), IntVect::new(2, 1, 0));
    /// let data: Vec<f64> = (0..8).map(f64::from).collect();
    /// let a = Array4::new(&data, bx, 1);
    /// let flat = a.as_slice().unwrap();
    /// assert_eq!(flat[a.layout().offset(2, 1, 0, 0).unwrap()], a[(2, 1, 0, 0)]);
    /// assert!(a.sub_box(&IndexBox::new(IntVect::ZERO, IntVect::new(1, 1, 0))).as_slice().is_none());
    /// ```
    #[inline]
    #[must_use]
    pub fn as_slice(&self) -> Option<&'a [T]> {
        if !self.raw.is_compact() {
            return None;
        }
        let len = self.raw.len();
        if len == 0 {
            return Some(&[]);
        }
        // SAFETY: with compact strides the elements are exactly the offsets `0..len`
        // from `ptr`, each an initialised `T` of one allocation (invariant 2) that nobody
        // writes during 'a (invariant 4).
        Some(unsafe { core::slice::from_raw_parts(self.raw.ptr.as_ptr(), len) })
    }

    /// The `i`-row `a(begin.x .. end.x, j, k, n)` as a slice.
    ///
    /// # Panics
    /// If `(j, k, n)` is out of bounds.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn row(&self, j: i32, k: i32, n: usize) -> &'a [T] {
        if !self.raw.row_in_bounds(j, k, n) {
            out_of_bounds(&self.raw, self.raw.begin[0], j, k, n);
        }
        let nx = self.raw.len_dir(0);
        match self.raw.offset(self.raw.begin[0], j, k, n) {
            // SAFETY: the row's `nx` elements have unit stride and are in bounds
            // (invariant 2); shared for 'a (invariant 4).
            Some(off) => unsafe { core::slice::from_raw_parts(self.raw.elem(off), nx) },
            // `(j, k, n)` is in bounds, so only `nx == 0` gets here.
            None => &[],
        }
    }

    /// The single component `n` (AMReX's `Array4(a, n, 1)`).
    ///
    /// # Panics
    /// If `n >= ncomp`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn component(&self, n: usize) -> Self {
        self.components(n, 1)
    }

    /// Components `start .. start + count` as a view whose component 0 is `start`
    /// (AMReX's `Array4(a, start, count)`); strides are kept.
    ///
    /// # Panics
    /// If `start + count > ncomp`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn components(&self, start: usize, count: usize) -> Self {
        if start.checked_add(count).is_none_or(|e| e > self.raw.ncomp) {
            comps_outside(start, count, self.raw.ncomp);
        }
        // Same memory, fewer elements: invariants kept.
        Self {
            raw: self.raw.comps(start, count),
            _marker: PhantomData,
        }
    }

    /// The part of the view over `bx` (any index type), keeping global indices and
    /// strides; `None` unless `bx` is non-empty and inside the bounds.
    #[inline]
    #[must_use]
    pub fn try_sub_box(&self, bx: &IndexBox) -> Option<Self> {
        // Same memory, fewer elements: invariants kept.
        self.raw.covers(bx).then(|| Self {
            raw: self.raw.restrict(bx),
            _marker: PhantomData,
        })
    }

    /// As [`try_sub_box`](Self::try_sub_box).
    ///
    /// # Panics
    /// If `bx` is empty or not inside the bounds.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn sub_box(&self, bx: &IndexBox) -> Self {
        match self.try_sub_box(bx) {
            Some(a) => a,
            None => box_outside(&self.raw, bx, "sub_box"),
        }
    }

    /// Calls `f(i, j, k, n, &a(i, j, k, n))` for every cell of `bx` and every component,
    /// `i` fastest and `n` slowest. Bounds are checked once, up front; the inner loop
    /// runs over a slice.
    ///
    /// An empty `bx` does nothing.
    ///
    /// # Panics
    /// If `bx` is not empty and not inside the bounds.
    #[inline]
    #[track_caller]
    pub fn for_each(&self, bx: IndexBox, mut f: impl FnMut(i32, i32, i32, usize, &'a T)) {
        if bx.is_empty() {
            return;
        }
        let sub = self.sub_box(&bx);
        let x0 = bx.lo()[0];
        for n in 0..sub.ncomp() {
            for k in bx.lo()[2]..=bx.hi()[2] {
                for j in bx.lo()[1]..=bx.hi()[1] {
                    for (ii, v) in sub.row(j, k, n).iter().enumerate() {
                        f(coord_at(x0, ii as u64), j, k, n, v);
                    }
                }
            }
        }
    }
}
