//! Storage orders: where element `(i, j)` lives in the flat storage.

use core::fmt::Debug;
use core::hash::Hash;

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::ColumnMajor {}
    impl Sealed for super::RowMajor {}
}

/// The storage order of a [`SmallMatrix`](crate::SmallMatrix).
///
/// Sealed: the two implementors are [`ColumnMajor`] (AMReX's default, `Order::F`)
/// and [`RowMajor`] (`Order::C`). With zero based indices `i` (row) and `j`
/// (column), the element lives at flat position `i + j * R` (column-major) or
/// `j + i * C` (row-major), exactly as in `AMReX_SmallMatrix.H`.
pub trait Order:
    sealed::Sealed + Copy + Clone + Default + Debug + PartialEq + Eq + Hash + Send + Sync + 'static
{
    /// `true` for [`RowMajor`].
    const ROW_MAJOR: bool;
    /// Human-readable name, used by `Debug` output and error messages.
    const NAME: &'static str;

    /// Flat storage position of the zero based element `(i, j)` of an `r × c` matrix.
    ///
    /// The caller guarantees `i < r` and `j < c`.
    fn offset(i: usize, j: usize, r: usize, c: usize) -> usize;

    /// Inverse of [`offset`](Order::offset): the zero based `(i, j)` stored at flat
    /// position `k < r * c`.
    fn coords(k: usize, r: usize, c: usize) -> (usize, usize);

    /// DLPack strides, in elements, of an `r × c` matrix exported with shape `(r, c)`:
    /// `(1, r)` for column-major, `(c, 1)` for row-major.
    fn strides(r: usize, c: usize) -> (usize, usize);
}

/// Column-major (Fortran) order: `(i, j)` at `i + j * R`. AMReX's default.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq, Hash)]
pub struct ColumnMajor;

/// Row-major (C) order: `(i, j)` at `j + i * C`.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq, Hash)]
pub struct RowMajor;

impl Order for ColumnMajor {
    const ROW_MAJOR: bool = false;
    const NAME: &'static str = "ColumnMajor";

    #[inline(always)]
    fn offset(i: usize, j: usize, r: usize, _c: usize) -> usize {
        i + j * r
    }

    #[inline]
    fn coords(k: usize, r: usize, _c: usize) -> (usize, usize) {
        (k % r, k / r)
    }

    #[inline]
    fn strides(r: usize, _c: usize) -> (usize, usize) {
        (1, r)
    }
}

impl Order for RowMajor {
    const ROW_MAJOR: bool = true;
    const NAME: &'static str = "RowMajor";

    #[inline(always)]
    fn offset(i: usize, j: usize, _r: usize, c: usize) -> usize {
        j + i * c
    }

    #[inline]
    fn coords(k: usize, _r: usize, c: usize) -> (usize, usize) {
        (k / c, k % c)
    }

    #[inline]
    fn strides(_r: usize, c: usize) -> (usize, usize) {
        (c, 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_match_amrex() {
        // 3 x 4: column-major (1, 2) -> 1 + 2*3 = 7; row-major -> 2 + 1*4 = 6
        assert_eq!(ColumnMajor::offset(1, 2, 3, 4), 7);
        assert_eq!(RowMajor::offset(1, 2, 3, 4), 6);
        assert_eq!(ColumnMajor::strides(3, 4), (1, 3));
        assert_eq!(RowMajor::strides(3, 4), (4, 1));
    }

    #[test]
    fn coords_invert_offset() {
        for (r, c) in [(1, 1), (1, 5), (5, 1), (3, 4), (6, 6)] {
            for i in 0..r {
                for j in 0..c {
                    let k = ColumnMajor::offset(i, j, r, c);
                    assert_eq!(ColumnMajor::coords(k, r, c), (i, j));
                    let k = RowMajor::offset(i, j, r, c);
                    assert_eq!(RowMajor::coords(k, r, c), (i, j));
                }
            }
        }
    }
}
