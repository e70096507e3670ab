//! `RealBox`: AMReX's `RealBox`, the physical extent of the problem.

use core::fmt;

use amrex_box::SPACEDIM;

use crate::error::{GeometryError, GeometryErrorKind, Side};

/// A box in physical space, AMReX's `RealBox`: a low corner `lo` and a high corner `hi`
/// per direction, in `f64`.
///
/// Invariant, checked by [`new`](Self::new) and kept by every method: each coordinate is
/// finite, and `lo[d] < hi[d]` with a finite length `hi[d] - lo[d]` in each direction.
/// (AMReX's `RealBox` may be invalid and answers `ok()`; here an invalid one cannot be
/// made, so there is no `ok`.)
///
/// ```
/// use amrex_geometry::RealBox;
/// let rb = RealBox::new([0.0, -1.0, 0.0], [2.0, 1.0, 0.5])?;
/// assert_eq!(rb.length(1), 2.0);
/// assert_eq!(rb.volume(), 2.0);
/// assert!(rb.contains([1.0, 0.0, 0.25], 0.0));
/// assert!(!rb.contains([2.0, 0.0, 0.25], 0.0)); // the faces are outside with eps = 0...
/// assert!(rb.contains([2.0, 0.0, 0.25], 1e-12)); // ...and inside with any eps > 0
/// # Ok::<(), amrex_geometry::GeometryError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RealBox {
    lo: [f64; SPACEDIM],
    hi: [f64; SPACEDIM],
}

/// Checks one coordinate: neither NaN nor infinite.
fn check_coordinate(side: Side, dir: usize, value: f64) -> Result<(), GeometryError> {
    if value.is_nan() {
        Err(GeometryErrorKind::NanCoordinate { side, dir }.into())
    } else if value.is_infinite() {
        Err(GeometryErrorKind::InfiniteCoordinate { side, dir, value }.into())
    } else {
        Ok(())
    }
}

impl RealBox {
    /// The unit cube `[0, 1]³`, the extent to give the unused directions of a 1-D or
    /// 2-D Cartesian problem.
    pub const UNIT: Self = Self {
        lo: [0.0; SPACEDIM],
        hi: [1.0; SPACEDIM],
    };

    /// The box with corners `lo` and `hi`.
    ///
    /// # Errors
    /// For the first direction (0, 1, 2) with a bad coordinate, low corner first:
    /// [`NanCoordinate`](GeometryErrorKind::NanCoordinate),
    /// [`InfiniteCoordinate`](GeometryErrorKind::InfiniteCoordinate), then
    /// [`EmptyExtent`](GeometryErrorKind::EmptyExtent) if `hi <= lo` and
    /// [`InfiniteLength`](GeometryErrorKind::InfiniteLength) if `hi - lo` overflows.
    pub fn new(lo: [f64; SPACEDIM], hi: [f64; SPACEDIM]) -> Result<Self, GeometryError> {
        for dir in 0..SPACEDIM {
            check_coordinate(Side::Lo, dir, lo[dir])?;
            check_coordinate(Side::Hi, dir, hi[dir])?;
            let (l, h) = (lo[dir], hi[dir]);
            if h <= l {
                return Err(GeometryErrorKind::EmptyExtent { dir, lo: l, hi: h }.into());
            }
            if !(h - l).is_finite() {
                return Err(GeometryErrorKind::InfiniteLength { dir, lo: l, hi: h }.into());
            }
        }
        Ok(Self { lo, hi })
    }

    /// The low corner (AMReX's `lo()`, the problem's `prob_lo`).
    #[must_use]
    pub const fn lo(&self) -> [f64; SPACEDIM] {
        self.lo
    }

    /// The high corner (AMReX's `hi()`, the problem's `prob_hi`).
    #[must_use]
    pub const fn hi(&self) -> [f64; SPACEDIM] {
        self.hi
    }

    /// The low coordinate in direction `dir` (AMReX's `lo(dir)`).
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[must_use]
    #[track_caller]
    pub const fn lo_dir(&self, dir: usize) -> f64 {
        self.lo[dir]
    }

    /// The high coordinate in direction `dir` (AMReX's `hi(dir)`).
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[must_use]
    #[track_caller]
    pub const fn hi_dir(&self, dir: usize) -> f64 {
        self.hi[dir]
    }

    /// `hi - lo` in direction `dir` (AMReX's `length(dir)`); positive and finite.
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[must_use]
    #[track_caller]
    pub fn length(&self, dir: usize) -> f64 {
        self.hi[dir] - self.lo[dir]
    }

    /// The three lengths.
    #[must_use]
    pub fn lengths(&self) -> [f64; SPACEDIM] {
        core::array::from_fn(|d| self.length(d))
    }

    /// The product of the lengths (AMReX's `volume()`); may overflow to `inf` for a
    /// box that is huge in every direction.
    #[must_use]
    pub fn volume(&self) -> f64 {
        self.length(0) * self.length(1) * self.length(2)
    }

    /// `true` if `lo[d] - eps < point[d] < hi[d] + eps` in every direction, AMReX's
    /// `contains(point, eps)`. With `eps = 0` the faces themselves are outside; a NaN
    /// coordinate is never contained.
    #[must_use]
    pub fn contains(&self, point: [f64; SPACEDIM], eps: f64) -> bool {
        (0..SPACEDIM).all(|d| self.lo[d] - eps < point[d] && point[d] < self.hi[d] + eps)
    }

    /// `true` if both corners of `other` satisfy [`contains`](Self::contains) with the
    /// same `eps` (AMReX's `contains(RealBox, eps)`; with `eps = 0` a box does not
    /// contain itself).
    #[must_use]
    pub fn contains_box(&self, other: &Self, eps: f64) -> bool {
        self.contains(other.lo, eps) && self.contains(other.hi, eps)
    }

    /// `true` if the closed boxes share a point (AMReX's `intersects`, for which
    /// touching faces count).
    #[must_use]
    pub fn intersects(&self, other: &Self) -> bool {
        (0..SPACEDIM).all(|d| self.lo[d] <= other.hi[d] && other.lo[d] <= self.hi[d])
    }
}

impl fmt::Display for RealBox {
    /// AMReX's notation: `(RealBox lo0 hi0 lo1 hi1 lo2 hi2 )`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(RealBox ")?;
        for d in 0..SPACEDIM {
            write!(f, "{} {} ", self.lo[d], self.hi[d])?;
        }
        f.write_str(")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_volume_and_corners() {
        let rb = RealBox::new([-1.0, 0.0, 2.0], [1.0, 0.5, 6.0]).unwrap();
        assert_eq!(rb.lo(), [-1.0, 0.0, 2.0]);
        assert_eq!(rb.hi(), [1.0, 0.5, 6.0]);
        assert_eq!((rb.lo_dir(2), rb.hi_dir(2)), (2.0, 6.0));
        assert_eq!(rb.lengths(), [2.0, 0.5, 4.0]);
        assert_eq!(rb.volume(), 4.0);
        assert_eq!(RealBox::UNIT.volume(), 1.0);
    }

    #[test]
    fn contains_is_open_and_eps_widens_it() {
        let rb = RealBox::UNIT;
        assert!(rb.contains([0.5; 3], 0.0));
        assert!(!rb.contains([0.0, 0.5, 0.5], 0.0));
        assert!(!rb.contains([0.5, 1.0, 0.5], 0.0));
        assert!(rb.contains([0.0, 0.5, 1.0], 1e-9));
        assert!(!rb.contains([-1e-6, 0.5, 0.5], 1e-9));
        assert!(!rb.contains([f64::NAN, 0.5, 0.5], 1.0));
        // A negative eps shrinks the box.
        assert!(!rb.contains([0.05, 0.5, 0.5], -0.1));
        let inner = RealBox::new([0.25; 3], [0.75; 3]).unwrap();
        assert!(rb.contains_box(&inner, 0.0));
        assert!(!rb.contains_box(&rb, 0.0));
        assert!(rb.contains_box(&rb, 1e-12));
    }

    #[test]
    fn intersects_counts_touching_faces() {
        let a = RealBox::UNIT;
        let b = RealBox::new([1.0, 0.0, 0.0], [2.0, 1.0, 1.0]).unwrap();
        let c = RealBox::new([1.5, 0.0, 0.0], [2.0, 1.0, 1.0]).unwrap();
        assert!(a.intersects(&b) && b.intersects(&a));
        assert!(!a.intersects(&c));
    }

    #[test]
    fn each_bad_coordinate_is_its_own_error() {
        use GeometryErrorKind as K;
        let ok = [0.0; 3];
        let one = [1.0; 3];
        let kind = |lo, hi| RealBox::new(lo, hi).unwrap_err().kind();
        assert_eq!(
            kind([0.0, f64::NAN, 0.0], one),
            K::NanCoordinate {
                side: Side::Lo,
                dir: 1
            }
        );
        assert_eq!(
            kind(ok, [1.0, 1.0, f64::INFINITY]),
            K::InfiniteCoordinate {
                side: Side::Hi,
                dir: 2,
                value: f64::INFINITY
            }
        );
        assert_eq!(
            kind([f64::NEG_INFINITY, 0.0, 0.0], one),
            K::InfiniteCoordinate {
                side: Side::Lo,
                dir: 0,
                value: f64::NEG_INFINITY
            }
        );
        assert_eq!(
            kind(ok, [1.0, 0.0, 1.0]),
            K::EmptyExtent {
                dir: 1,
                lo: 0.0,
                hi: 0.0
            }
        );
        assert_eq!(
            kind(ok, [-1.0, 1.0, 1.0]),
            K::EmptyExtent {
                dir: 0,
                lo: 0.0,
                hi: -1.0
            }
        );
        assert_eq!(
            kind([0.0, 0.0, -f64::MAX], [1.0, 1.0, f64::MAX]),
            K::InfiniteLength {
                dir: 2,
                lo: -f64::MAX,
                hi: f64::MAX
            }
        );
    }
}
