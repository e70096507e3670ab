//! The `i32` index space every box lives in, and the one checked rule for it.
//!
//! AMReX indexes cells with `int`. A box is only usable if everything computed from its
//! corners is an `i32` too: in each direction its exclusive end `hi + 1` and its length
//! `hi - lo + 1` (so that loops that run to `hi` inclusive, views that store `hi + 1`,
//! and extents stored as `i32` never wrap). This module is the one place that rule is
//! written; every path that makes a box out of numbers it did not compute itself — a
//! DLPack importer, a file reader, `BoxArray` construction, a ghost width — goes through
//! it and gets an [`IndexSpaceError`] that names the direction and the numbers.

use core::fmt;

use crate::index_box::{IndexBox, coord};
use crate::int_vect::{IntVect, SPACEDIM};

/// Why a box, a box given by a corner and lengths, or a ghost width leaves the `i32`
/// index space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum IndexSpaceError {
    /// In direction `dir` the points `lo .. end` (end exclusive, both as `i64`) do not
    /// fit: `end` is not below `i32::MAX + 1`, `end - 1` is not an `i32`, or the length
    /// `end - lo` is not an `i32`.
    Overflow {
        /// The direction (0, 1 or 2).
        dir: usize,
        /// The low corner.
        lo: i64,
        /// The exclusive end (`hi + 1`).
        end: i64,
    },
    /// A ghost width (or another count that must be non-negative) is negative.
    NegativeGhost {
        /// The direction.
        dir: usize,
        /// The width found.
        ghost: i32,
    },
}

impl fmt::Display for IndexSpaceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Overflow { dir, lo, end } => write!(
                f,
                "direction {dir}: the indices {lo} .. {end} (end exclusive) leave the i32 \
                 index space (the end and the length {} must both fit in i32)",
                i128::from(end) - i128::from(lo)
            ),
            Self::NegativeGhost { dir, ghost } => {
                write!(
                    f,
                    "direction {dir}: expected a ghost width >= 0, got {ghost}"
                )
            }
        }
    }
}

impl core::error::Error for IndexSpaceError {}

/// Importers report the rule's verdict as the DLPack error of the same name.
impl From<IndexSpaceError> for amrex_dlpack_core::ErrorKind {
    fn from(e: IndexSpaceError) -> Self {
        match e {
            IndexSpaceError::Overflow { dir, lo, end } => Self::OutsideIndexSpace { dir, lo, end },
            IndexSpaceError::NegativeGhost { dir, ghost } => Self::NegativeGhost { dir, ghost },
        }
    }
}

impl From<IndexSpaceError> for amrex_dlpack_core::DlpackError {
    fn from(e: IndexSpaceError) -> Self {
        amrex_dlpack_core::ErrorKind::from(e).into()
    }
}

/// Checks one direction: `lo .. end` with `end` exclusive.
#[inline]
const fn check_dir(dir: usize, lo: i64, end: i64) -> Result<(), IndexSpaceError> {
    // `end - 1` (the inclusive high corner) and `end` itself must be i32, and so must the
    // length, which may be negative for an empty direction. All in i64: no overflow for
    // inputs that are i32 or lengths up to i64::MAX added to an i32 (checked below).
    let ok = end > i32::MIN as i64
        && end <= i32::MAX as i64
        && end - lo >= i32::MIN as i64
        && end - lo <= i32::MAX as i64;
    if ok {
        Ok(())
    } else {
        Err(IndexSpaceError::Overflow { dir, lo, end })
    }
}

impl IndexBox {
    /// Checks that the box lies in the `i32` index space: in every direction
    /// `big_end + 1` and the length `big_end - small_end + 1` are `i32`. Every box this
    /// crate's checked constructors make passes; a box built with [`IndexBox::new`] from
    /// arbitrary corners may not (e.g. `big_end = i32::MAX`).
    ///
    /// ```
    /// use amrex_box::{IndexBox, IntVect};
    /// assert!(IndexBox::new(IntVect::ZERO, IntVect::splat(7)).check_index_space().is_ok());
    /// let edge = IndexBox::new(IntVect::ZERO, IntVect::new(i32::MAX, 0, 0));
    /// assert!(edge.check_index_space().is_err());
    /// ```
    ///
    /// # Errors
    /// [`IndexSpaceError::Overflow`] for the first direction that does not fit.
    #[inline]
    pub const fn check_index_space(&self) -> Result<(), IndexSpaceError> {
        let (lo, hi) = (self.small_end(), self.big_end());
        let mut dir = 0;
        while dir < SPACEDIM {
            let l = lo.to_array()[dir] as i64;
            let h = hi.to_array()[dir] as i64;
            if let Err(e) = check_dir(dir, l, h + 1) {
                return Err(e);
            }
            dir += 1;
        }
        Ok(())
    }

    /// A cell-centred box with low corner `lo` and `len[d]` points in direction `d`,
    /// checked against the index space (the checked form of
    /// [`from_lo_len`](Self::from_lo_len), for lengths that come from outside, such as a
    /// tensor's shape or a file). A zero length gives a box that is empty in that
    /// direction (`big_end = small_end - 1`).
    ///
    /// ```
    /// use amrex_box::{IndexBox, IntVect};
    /// let b = IndexBox::try_from_lo_len(IntVect::new(-2, 0, 0), [4, 1, 1])?;
    /// assert_eq!(b.hi(), IntVect::new(1, 0, 0));
    /// assert!(IndexBox::try_from_lo_len(IntVect::new(0, -1, 0), [1, 1 << 31, 1]).is_err());
    /// # Ok::<(), amrex_box::IndexSpaceError>(())
    /// ```
    ///
    /// # Errors
    /// [`IndexSpaceError::Overflow`] if a length is negative or the box would leave the
    /// index space.
    pub fn try_from_lo_len(lo: IntVect, len: [i64; SPACEDIM]) -> Result<Self, IndexSpaceError> {
        let mut hi = lo;
        for (dir, &n) in len.iter().enumerate() {
            let l = i64::from(lo[dir]);
            // A negative length is refused with the end it would give (saturated).
            let end = if n < 0 { i64::MIN } else { l.saturating_add(n) };
            check_dir(dir, l, end)?;
            // check_dir: end - 1 is an i32.
            hi[dir] = i32::try_from(end - 1).map_err(|_| IndexSpaceError::Overflow {
                dir,
                lo: l,
                end,
            })?;
        }
        Ok(Self::new(lo, hi))
    }

    /// The box with inclusive corners `lo` and `hi` (cell-centred), checked against the
    /// index space.
    ///
    /// # Errors
    /// [`IndexSpaceError::Overflow`], as [`check_index_space`](Self::check_index_space).
    #[inline]
    pub fn try_new(lo: IntVect, hi: IntVect) -> Result<Self, IndexSpaceError> {
        let b = Self::new(lo, hi);
        b.check_index_space().map(|()| b)
    }

    /// The box grown by the ghost width `ng` (every component `>= 0`), checked: the
    /// grown box must lie in the index space too. This is how a fab box is made from a
    /// valid box.
    ///
    /// ```
    /// use amrex_box::{IndexBox, IntVect};
    /// let b = IndexBox::new(IntVect::ZERO, IntVect::splat(7));
    /// assert_eq!(b.try_grow_ghost(IntVect::splat(2))?.lo(), IntVect::splat(-2));
    /// assert!(b.try_grow_ghost(IntVect::new(0, -1, 0)).is_err());
    /// assert!(b.try_grow_ghost(IntVect::new(0, i32::MAX, 0)).is_err());
    /// # Ok::<(), amrex_box::IndexSpaceError>(())
    /// ```
    ///
    /// # Errors
    /// [`IndexSpaceError::NegativeGhost`] for a negative width, or
    /// [`IndexSpaceError::Overflow`] if the box or the grown box leaves the index space.
    pub fn try_grow_ghost(&self, ng: IntVect) -> Result<Self, IndexSpaceError> {
        check_ghost(ng)?;
        self.check_index_space()?;
        let (lo, hi) = (self.small_end(), self.big_end());
        let mut glo = lo;
        let mut ghi = hi;
        for dir in 0..SPACEDIM {
            let l = i64::from(lo[dir]) - i64::from(ng[dir]);
            let e = i64::from(hi[dir]) + i64::from(ng[dir]) + 1;
            check_dir(dir, l, e)?;
            let err = |_| IndexSpaceError::Overflow { dir, lo: l, end: e };
            glo[dir] = i32::try_from(l).map_err(err)?;
            ghi[dir] = i32::try_from(e - 1).map_err(err)?;
        }
        Ok(Self::with_type(glo, ghi, self.ix_type()))
    }

    /// The part of the box moved by `v` that lies in the index space, `None` if nothing
    /// does. Computed in `i64`, so it never overflows: a periodic image of a box near the
    /// edge of the index space is clipped to the points that exist (the only ones another
    /// box can intersect) instead of wrapping. For a box in the index space moved by a
    /// shift that keeps it there, this is `Some(self.shift_iv(v))`.
    ///
    /// ```
    /// use amrex_box::{IndexBox, IntVect};
    /// let b = IndexBox::new(IntVect::new(i32::MIN + 2, 0, 0), IntVect::new(i32::MIN + 9, 0, 0));
    /// let s = b.shifted_in_index_space(IntVect::new(-5, 0, 0)).unwrap();
    /// assert_eq!((s.lo().x(), s.hi().x()), (i32::MIN, i32::MIN + 4));
    /// assert!(b.shifted_in_index_space(IntVect::new(-20, 0, 0)).is_none());
    /// ```
    #[must_use]
    pub fn shifted_in_index_space(&self, v: IntVect) -> Option<Self> {
        let (lo, hi) = (self.small_end(), self.big_end());
        let mut nlo = lo;
        let mut nhi = hi;
        for dir in 0..SPACEDIM {
            let l = (i64::from(lo[dir]) + i64::from(v[dir])).max(i64::from(i32::MIN));
            // The highest point of the index space is i32::MAX - 1 (its end must fit).
            let h = (i64::from(hi[dir]) + i64::from(v[dir])).min(i64::from(i32::MAX) - 1);
            if l > h {
                return None;
            }
            // Both clamped into the i32 range above.
            nlo[dir] = coord(l);
            nhi[dir] = coord(h);
        }
        Some(Self::with_type(nlo, nhi, self.ix_type()))
    }

    /// The exclusive end `big_end + 1` of a box that passed
    /// [`check_index_space`](Self::check_index_space); for an empty direction, the low
    /// corner (so `end - lo` is the number of points, zero when empty).
    ///
    /// # Errors
    /// [`IndexSpaceError::Overflow`] if the box is not in the index space.
    #[inline]
    pub fn try_end(&self) -> Result<IntVect, IndexSpaceError> {
        self.check_index_space()?;
        let (lo, hi) = (self.small_end(), self.big_end());
        // Checked above: hi + 1 <= i32::MAX in every direction.
        Ok(IntVect::new(
            end_dir(lo[0], hi[0]),
            end_dir(lo[1], hi[1]),
            end_dir(lo[2], hi[2]),
        ))
    }
}

/// `hi + 1` when `hi >= lo`, else `lo`; the caller checked that `hi + 1` is an `i32`.
#[inline]
fn end_dir(lo: i32, hi: i32) -> i32 {
    if hi >= lo { hi.saturating_add(1) } else { lo }
}

/// Checks that every component of a ghost width is non-negative.
///
/// # Errors
/// [`IndexSpaceError::NegativeGhost`] for the first negative component.
#[inline]
pub fn check_ghost(ng: IntVect) -> Result<(), IndexSpaceError> {
    for dir in 0..SPACEDIM {
        if ng[dir] < 0 {
            return Err(IndexSpaceError::NegativeGhost {
                dir,
                ghost: ng[dir],
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: i32 = i32::MAX;
    const MIN: i32 = i32::MIN;

    #[test]
    fn the_edges_of_the_index_space() {
        let b = |lo: [i32; 3], hi: [i32; 3]| IndexBox::new(lo.into(), hi.into());
        // The largest box that fits in x: length i32::MAX ending at i32::MAX - 1.
        assert!(b([-1, 0, 0], [MAX - 2, 0, 0]).check_index_space().is_ok());
        assert!(b([0, 0, 0], [MAX - 1, 0, 0]).check_index_space().is_ok());
        // hi = i32::MAX: hi + 1 does not fit.
        assert_eq!(
            b([0, 0, 0], [0, 0, MAX]).check_index_space(),
            Err(IndexSpaceError::Overflow {
                dir: 2,
                lo: 0,
                end: i64::from(MAX) + 1
            })
        );
        // Length 2^31 (one more than i32::MAX).
        assert!(b([-2, 0, 0], [MAX - 2, 0, 0]).check_index_space().is_err());
        assert!(b([MIN, 0, 0], [-1, 0, 0]).check_index_space().is_err());
        // Empty boxes are fine while their length is an i32 ...
        assert!(IndexBox::default().check_index_space().is_ok());
        assert!(b([5, 0, 0], [-5, 0, 0]).check_index_space().is_ok());
        // ... but not when even the negative length overflows.
        assert!(b([MAX - 1, 0, 0], [MIN, 0, 0]).check_index_space().is_err());
    }

    #[test]
    fn lo_len_boxes() {
        let b = IndexBox::try_from_lo_len(IntVect::new(MIN, 0, 7), [1, 0, 3]).unwrap();
        assert_eq!(b.lo(), IntVect::new(MIN, 0, 7));
        assert_eq!(b.hi(), IntVect::new(MIN, -1, 9));
        assert!(b.is_empty());
        assert_eq!(b.try_end().unwrap(), IntVect::new(MIN + 1, 0, 10));
        // Zero length at i32::MIN would need hi = i32::MIN - 1.
        assert!(IndexBox::try_from_lo_len(IntVect::new(MIN, 0, 0), [0, 1, 1]).is_err());
        // The findings: begin (0, i32::MAX, 0) with extent 1 ends at 2^31; begin y = -3
        // with extent 2^31 + 1 is too long; i64::MAX - 1 from 2 saturates and fails.
        for (lo, len) in [
            ([0, MAX, 0], [1, 1, 1]),
            ([0, -3, 0], [1, (1 << 31) + 1, 1]),
            ([0, -1, 0], [1, 1 << 31, 1]),
            ([0, 2, 0], [1, i64::MAX - 1, 1]),
            ([0, 0, 0], [1, -1, 1]),
        ] {
            let e = IndexBox::try_from_lo_len(lo.into(), len).unwrap_err();
            assert!(matches!(e, IndexSpaceError::Overflow { dir: 1, .. }), "{e}");
        }
    }

    #[test]
    fn ghosts() {
        let valid = IndexBox::new(IntVect::new(0, 0, 10), IntVect::new(7, 7, MAX - 3));
        assert_eq!(
            valid.try_grow_ghost(IntVect::new(1, 1, 2)).unwrap().hi(),
            IntVect::new(8, 8, MAX - 1)
        );
        assert!(valid.try_grow_ghost(IntVect::new(0, 0, 3)).is_err());
        assert_eq!(
            valid.try_grow_ghost(IntVect::new(0, -2, 0)),
            Err(IndexSpaceError::NegativeGhost { dir: 1, ghost: -2 })
        );
        assert!(valid.try_grow_ghost(IntVect::new(0, 1 << 29, 0)).is_ok());
        let wide = IndexBox::new(IntVect::ZERO, IntVect::new(0, 1 << 30, 0));
        assert!(wide.try_grow_ghost(IntVect::new(0, 1 << 30, 0)).is_err());
        let low = IndexBox::new(IntVect::splat(MIN + 1), IntVect::splat(MIN + 1));
        assert!(low.try_grow_ghost(IntVect::splat(1)).is_ok());
        assert!(low.try_grow_ghost(IntVect::splat(2)).is_err());
    }

    #[test]
    fn messages_name_the_numbers() {
        extern crate std;
        use std::string::ToString;
        let e = IndexBox::new(IntVect::ZERO, IntVect::new(0, MAX, 0))
            .check_index_space()
            .unwrap_err();
        let s = e.to_string();
        assert!(s.contains("direction 1") && s.contains("2147483648"), "{s}");
    }
}
