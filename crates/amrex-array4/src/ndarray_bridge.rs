//! Zero-copy `ndarray` views (feature `ndarray`).
//!
//! - `(n, k, j, i)`: shape `(ncomp, nz, ny, nx)`, C order for a compact view — what
//!   NumPy sees through DLPack.
//! - `(i, j, k, n)`: shape `(nx, ny, nz, ncomp)`, Fortran order — AMReX's own order,
//!   pyAMReX's `to_numpy(order="F")`.
//!
//! ndarray indices are local (from 0): element `[n, k, j, i]` of the first view is
//! `a(begin.x + i, begin.y + j, begin.z + k, n)`.

use ndarray::{ArrayView4, ArrayViewMut4, Ix4, ShapeBuilder};

use crate::array4::{Array4, Array4Mut};
use crate::raw::Raw;

/// Shape and strides in `(n, k, j, i)` order; all strides 0 for an empty view so that
/// ndarray never offsets its (dangling) pointer.
fn nkji<T>(raw: &Raw<T>) -> ([usize; 4], [usize; 4]) {
    let shape = [raw.ncomp, raw.len_dir(2), raw.len_dir(1), raw.len_dir(0)];
    let strides = if raw.is_empty() {
        [0; 4]
    } else {
        [raw.nstride, raw.kstride, raw.jstride, 1]
    };
    (shape, strides)
}

fn ijkn<T>(raw: &Raw<T>) -> ([usize; 4], [usize; 4]) {
    let (mut s, mut st) = nkji(raw);
    s.reverse();
    st.reverse();
    (s, st)
}

fn layout((s, st): ([usize; 4], [usize; 4])) -> ndarray::StrideShape<Ix4> {
    Ix4(s[0], s[1], s[2], s[3]).strides(Ix4(st[0], st[1], st[2], st[3]))
}

impl<'a, T> Array4<'a, T> {
    /// The view as an `ndarray` view indexed `[n, k, j, i]` (local indices), zero-copy.
    ///
    /// ```
    /// use amrex_array4::{Array4, IndexBox, IntVect};
    /// let bx = IndexBox::new(IntVect::new(-1, -1, -1), IntVect::new(1, 1, 1));
    /// let data: Vec<f64> = (0..27).map(f64::from).collect();
    /// let a = Array4::new(&data, bx, 1);
    /// let v = a.to_ndarray_nkji();
    /// assert_eq!(v.shape(), &[1, 3, 3, 3]);
    /// assert_eq!(v[[0, 2, 1, 0]], a[(-1, 0, 1)]);
    /// assert_eq!(a.to_ndarray_ijkn()[[0, 1, 2, 0]], a[(-1, 0, 1)]);
    /// ```
    #[must_use]
    pub fn to_ndarray_nkji(&self) -> ArrayView4<'a, T> {
        // SAFETY: invariants 2–4: every element the shape and strides reach is a live,
        // aligned, initialised `T` not written during 'a, offsets fit isize; an empty view
        // has zero strides so its dangling pointer is never offset.
        unsafe { ArrayView4::from_shape_ptr(layout(nkji(&self.raw)), self.raw.ptr.as_ptr()) }
    }

    /// The view as an `ndarray` view indexed `[i, j, k, n]` (local indices), zero-copy.
    #[must_use]
    pub fn to_ndarray_ijkn(&self) -> ArrayView4<'a, T> {
        // SAFETY: as for `to_ndarray_nkji`, with the axes reversed.
        unsafe { ArrayView4::from_shape_ptr(layout(ijkn(&self.raw)), self.raw.ptr.as_ptr()) }
    }
}

impl<'a, T> Array4Mut<'a, T> {
    /// Shared `[n, k, j, i]` view, borrowing `self`.
    #[must_use]
    pub fn to_ndarray_nkji(&self) -> ArrayView4<'_, T> {
        self.as_const().to_ndarray_nkji()
    }

    /// Shared `[i, j, k, n]` view, borrowing `self`.
    #[must_use]
    pub fn to_ndarray_ijkn(&self) -> ArrayView4<'_, T> {
        self.as_const().to_ndarray_ijkn()
    }

    /// Mutable `[n, k, j, i]` view, borrowing `self`.
    #[must_use]
    pub fn to_ndarray_nkji_mut(&mut self) -> ArrayViewMut4<'_, T> {
        self.reborrow().into_ndarray_nkji_mut()
    }

    /// Mutable `[i, j, k, n]` view, borrowing `self`.
    #[must_use]
    pub fn to_ndarray_ijkn_mut(&mut self) -> ArrayViewMut4<'_, T> {
        self.reborrow().into_ndarray_ijkn_mut()
    }

    /// Mutable `[n, k, j, i]` view for the rest of `'a`.
    #[must_use]
    pub fn into_ndarray_nkji_mut(self) -> ArrayViewMut4<'a, T> {
        // SAFETY: invariants 2, 3 and 5: live, aligned, initialised elements reached by
        // distinct indices, accessed only through this view (consumed) during 'a.
        unsafe { ArrayViewMut4::from_shape_ptr(layout(nkji(&self.raw)), self.raw.ptr.as_ptr()) }
    }

    /// Mutable `[i, j, k, n]` view for the rest of `'a`.
    #[must_use]
    pub fn into_ndarray_ijkn_mut(self) -> ArrayViewMut4<'a, T> {
        // SAFETY: as for `into_ndarray_nkji_mut`, with the axes reversed.
        unsafe { ArrayViewMut4::from_shape_ptr(layout(ijkn(&self.raw)), self.raw.ptr.as_ptr()) }
    }
}
