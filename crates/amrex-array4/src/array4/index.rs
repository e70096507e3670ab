//! `a[(i, j, k, n)]`, `a[(i, j, k)]`, `a[p]` and `a[(p, n)]` for both views.

use core::ops::{Index, IndexMut};

use amrex_box::IntVect;

use super::{Array4, Array4Mut, out_of_bounds};

macro_rules! index_impls {
    ($ty:ident) => {
        impl<T> Index<(i32, i32, i32, usize)> for $ty<'_, T> {
            type Output = T;
            /// `a[(i, j, k, n)]` with global indices.
            #[inline]
            #[track_caller]
            fn index(&self, (i, j, k, n): (i32, i32, i32, usize)) -> &T {
                match self.raw.offset(i, j, k, n) {
                    // SAFETY: in bounds: a live element (invariant 2), shared for the
                    // borrow of `self` (invariants 4, 5).
                    Some(off) => unsafe { &*self.raw.elem(off) },
                    None => out_of_bounds(&self.raw, i, j, k, n),
                }
            }
        }

        impl<T> Index<(i32, i32, i32)> for $ty<'_, T> {
            type Output = T;
            /// `a[(i, j, k)]`: component 0.
            #[inline]
            #[track_caller]
            fn index(&self, (i, j, k): (i32, i32, i32)) -> &T {
                &self[(i, j, k, 0)]
            }
        }

        impl<T> Index<IntVect> for $ty<'_, T> {
            type Output = T;
            /// `a[p]`: component 0 at point `p`.
            #[inline]
            #[track_caller]
            fn index(&self, p: IntVect) -> &T {
                &self[(p[0], p[1], p[2], 0)]
            }
        }

        impl<T> Index<(IntVect, usize)> for $ty<'_, T> {
            type Output = T;
            /// `a[(p, n)]`: component `n` at point `p`.
            #[inline]
            #[track_caller]
            fn index(&self, (p, n): (IntVect, usize)) -> &T {
                &self[(p[0], p[1], p[2], n)]
            }
        }
    };
}

index_impls!(Array4);
index_impls!(Array4Mut);

impl<T> IndexMut<(i32, i32, i32, usize)> for Array4Mut<'_, T> {
    #[inline]
    #[track_caller]
    fn index_mut(&mut self, (i, j, k, n): (i32, i32, i32, usize)) -> &mut T {
        match self.raw.offset(i, j, k, n) {
            // SAFETY: in bounds: a live element (invariant 2) that only this mutably
            // borrowed view accesses (invariant 5).
            Some(off) => unsafe { &mut *self.raw.elem(off) },
            None => out_of_bounds(&self.raw, i, j, k, n),
        }
    }
}

impl<T> IndexMut<(i32, i32, i32)> for Array4Mut<'_, T> {
    #[inline]
    #[track_caller]
    fn index_mut(&mut self, (i, j, k): (i32, i32, i32)) -> &mut T {
        &mut self[(i, j, k, 0)]
    }
}

impl<T> IndexMut<IntVect> for Array4Mut<'_, T> {
    #[inline]
    #[track_caller]
    fn index_mut(&mut self, p: IntVect) -> &mut T {
        &mut self[(p[0], p[1], p[2], 0)]
    }
}

impl<T> IndexMut<(IntVect, usize)> for Array4Mut<'_, T> {
    #[inline]
    #[track_caller]
    fn index_mut(&mut self, (p, n): (IntVect, usize)) -> &mut T {
        &mut self[(p[0], p[1], p[2], n)]
    }
}
