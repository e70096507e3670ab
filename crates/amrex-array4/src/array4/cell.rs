//! Per-cell views of all components: [`CellData`] and [`CellDataMut`].

use core::fmt;
use core::marker::PhantomData;
use core::ops::{Index, IndexMut};
use core::ptr::NonNull;

// Invariants of `CellData`/`CellDataMut`: `ptr` is cell `(i, j, k)`'s component 0 in a
// view whose invariants hold for `'a`; components `0 .. ncomp` are at `ptr + n*nstride`;
// if `ncomp == 0`, `ptr` may dangle. `CellDataMut` has unique access, like `Array4Mut`.

/// The components of one cell (AMReX's `CellData`), from [`Array4::cell_data`](super::Array4::cell_data).
pub struct CellData<'a, T> {
    pub(super) ptr: NonNull<T>,
    pub(super) nstride: usize,
    pub(super) ncomp: usize,
    pub(super) _marker: PhantomData<&'a [T]>,
}

/// The mutable components of one cell, from [`Array4Mut::cell_data_mut`](super::Array4Mut::cell_data_mut).
pub struct CellDataMut<'a, T> {
    pub(super) ptr: NonNull<T>,
    pub(super) nstride: usize,
    pub(super) ncomp: usize,
    pub(super) _marker: PhantomData<&'a mut [T]>,
}

// SAFETY: a shared borrow of `T`s.
unsafe impl<T: Sync> Send for CellData<'_, T> {}
// SAFETY: a shared borrow of `T`s.
unsafe impl<T: Sync> Sync for CellData<'_, T> {}
// SAFETY: a unique borrow of `T`s.
unsafe impl<T: Send> Send for CellDataMut<'_, T> {}
// SAFETY: shared access only reads.
unsafe impl<T: Sync> Sync for CellDataMut<'_, T> {}

impl<T> Clone for CellData<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for CellData<'_, T> {}

impl<'a, T> CellData<'a, T> {
    /// Number of components.
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.ncomp
    }

    /// `true` if there is no component.
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ncomp == 0
    }

    /// Component `n`, `None` if `n >= len()`.
    #[inline]
    #[must_use]
    pub fn get(&self, n: usize) -> Option<&'a T> {
        // SAFETY: `n < ncomp`: a live element of the cell, shared for 'a.
        (n < self.ncomp).then(|| unsafe { &*self.ptr.as_ptr().wrapping_add(n * self.nstride) })
    }
}

impl<T> CellDataMut<'_, T> {
    /// Number of components.
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.ncomp
    }

    /// `true` if there is no component.
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ncomp == 0
    }

    /// Component `n`, `None` if `n >= len()`.
    #[inline]
    #[must_use]
    pub fn get(&self, n: usize) -> Option<&T> {
        // SAFETY: `n < ncomp`: a live element of the cell.
        (n < self.ncomp).then(|| unsafe { &*self.ptr.as_ptr().wrapping_add(n * self.nstride) })
    }

    /// Mutable component `n`, `None` if `n >= len()`.
    #[inline]
    #[must_use]
    pub fn get_mut(&mut self, n: usize) -> Option<&mut T> {
        // SAFETY: `n < ncomp`: a live element of the cell, uniquely borrowed.
        (n < self.ncomp).then(|| unsafe { &mut *self.ptr.as_ptr().wrapping_add(n * self.nstride) })
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn comp_oob(n: usize, ncomp: usize) -> ! {
    panic!("CellData: component {n} is out of bounds (ncomp {ncomp})")
}

impl<T> Index<usize> for CellData<'_, T> {
    type Output = T;
    #[inline]
    #[track_caller]
    fn index(&self, n: usize) -> &T {
        self.get(n).unwrap_or_else(|| comp_oob(n, self.ncomp))
    }
}

impl<T> Index<usize> for CellDataMut<'_, T> {
    type Output = T;
    #[inline]
    #[track_caller]
    fn index(&self, n: usize) -> &T {
        self.get(n).unwrap_or_else(|| comp_oob(n, self.ncomp))
    }
}

impl<T> IndexMut<usize> for CellDataMut<'_, T> {
    #[inline]
    #[track_caller]
    fn index_mut(&mut self, n: usize) -> &mut T {
        let ncomp = self.ncomp;
        self.get_mut(n).unwrap_or_else(|| comp_oob(n, ncomp))
    }
}

impl<T> fmt::Debug for CellData<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CellData")
            .field("ncomp", &self.ncomp)
            .finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for CellDataMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CellDataMut")
            .field("ncomp", &self.ncomp)
            .finish_non_exhaustive()
    }
}
