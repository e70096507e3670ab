//! The crate's one error type: [`GeometryError`] and what went wrong, [`GeometryErrorKind`].

use core::fmt;

use amrex_box::{IndexBox, IndexSpaceError, IntVect};

use crate::coord_sys::CoordSys;

/// Which corner of a [`RealBox`](crate::RealBox) a coordinate belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// The low corner (AMReX's `prob_lo`).
    Lo,
    /// The high corner (AMReX's `prob_hi`).
    Hi,
}

impl fmt::Display for Side {
    /// `prob_lo` or `prob_hi`, AMReX's input names for the two corners.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Lo => "prob_lo",
            Self::Hi => "prob_hi",
        })
    }
}

/// What was wrong with a [`RealBox`](crate::RealBox), a [`Geometry`](crate::Geometry) or
/// a coordinate system code.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum GeometryErrorKind {
    /// A corner coordinate is NaN.
    NanCoordinate {
        /// The corner.
        side: Side,
        /// The direction (0, 1 or 2).
        dir: usize,
    },
    /// A corner coordinate is `+inf` or `-inf`.
    InfiniteCoordinate {
        /// The corner.
        side: Side,
        /// The direction.
        dir: usize,
        /// The coordinate found.
        value: f64,
    },
    /// `hi <= lo` in a direction: the box has no extent there.
    EmptyExtent {
        /// The direction.
        dir: usize,
        /// The low coordinate.
        lo: f64,
        /// The high coordinate.
        hi: f64,
    },
    /// Both corners are finite but `hi - lo` overflows `f64`.
    InfiniteLength {
        /// The direction.
        dir: usize,
        /// The low coordinate.
        lo: f64,
        /// The high coordinate.
        hi: f64,
    },
    /// The index domain holds no cell (`!domain.ok()`).
    EmptyDomain {
        /// The domain given.
        domain: IndexBox,
    },
    /// The index domain is nodal in some direction; a domain indexes cells.
    NotCellCentred {
        /// The domain given.
        domain: IndexBox,
    },
    /// The domain (or a refined one) leaves the `i32` index space.
    OutsideIndexSpace(IndexSpaceError),
    /// The cell size `(prob_hi - prob_lo) / cells` is zero or its inverse is infinite
    /// (a domain of many cells over a tiny, subnormal extent).
    CellSizeOutOfRange {
        /// The direction.
        dir: usize,
        /// The cell size computed.
        dx: f64,
    },
    /// An RZ or spherical geometry with more than one cell in direction 2. AMReX has
    /// these coordinate systems only in one and two dimensions; direction 2 is the
    /// azimuth, integrated over the full turn, and must be a single cell.
    CurvilinearThirdDirection {
        /// The coordinate system.
        coord: CoordSys,
        /// The number of cells the domain has in direction 2.
        cells: i32,
    },
    /// A refinement or coarsening ratio is not positive.
    BadRatio {
        /// The direction.
        dir: usize,
        /// The ratio given.
        ratio: i32,
    },
    /// Coarsening then refining the domain by the ratio would not give it back: the
    /// coarse cells would not nest over the fine ones.
    NotCoarsenable {
        /// The domain.
        domain: IndexBox,
        /// The ratio.
        ratio: IntVect,
    },
    /// An integer coordinate system code other than AMReX's 0, 1 and 2.
    UnknownCoordSys(i32),
}

/// Why a [`RealBox`](crate::RealBox) or [`Geometry`](crate::Geometry) could not be made;
/// [`kind`](Self::kind) says what, and `Display` names the offending value and direction.
///
/// ```
/// use amrex_geometry::{GeometryErrorKind, RealBox, Side};
/// let err = RealBox::new([0.0, 0.0, 0.0], [1.0, f64::NAN, 1.0]).unwrap_err();
/// assert_eq!(err.kind(), GeometryErrorKind::NanCoordinate { side: Side::Hi, dir: 1 });
/// assert_eq!(err.to_string(), "RealBox: prob_hi[1] is NaN");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GeometryError {
    kind: GeometryErrorKind,
}

impl GeometryError {
    /// An error of the given kind.
    #[must_use]
    pub const fn new(kind: GeometryErrorKind) -> Self {
        Self { kind }
    }

    /// What went wrong.
    #[must_use]
    pub const fn kind(&self) -> GeometryErrorKind {
        self.kind
    }
}

impl From<GeometryErrorKind> for GeometryError {
    fn from(kind: GeometryErrorKind) -> Self {
        Self::new(kind)
    }
}

impl From<IndexSpaceError> for GeometryError {
    fn from(e: IndexSpaceError) -> Self {
        Self::new(GeometryErrorKind::OutsideIndexSpace(e))
    }
}

impl fmt::Display for GeometryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use GeometryErrorKind as K;
        match self.kind {
            K::NanCoordinate { side, dir } => write!(f, "RealBox: {side}[{dir}] is NaN"),
            K::InfiniteCoordinate { side, dir, value } => {
                write!(f, "RealBox: expected a finite {side}[{dir}], got {value}")
            }
            K::EmptyExtent { dir, lo, hi } => write!(
                f,
                "RealBox: direction {dir}: expected prob_hi > prob_lo, got prob_lo = {lo}, \
                 prob_hi = {hi}"
            ),
            K::InfiniteLength { dir, lo, hi } => write!(
                f,
                "RealBox: direction {dir}: the length prob_hi - prob_lo = {hi} - ({lo}) \
                 overflows f64"
            ),
            K::EmptyDomain { domain } => {
                write!(f, "Geometry: expected a domain with cells, got {domain}")
            }
            K::NotCellCentred { domain } => {
                write!(f, "Geometry: expected a cell-centred domain, got {domain}")
            }
            K::OutsideIndexSpace(e) => write!(f, "Geometry: domain {e}"),
            K::CellSizeOutOfRange { dir, dx } => write!(
                f,
                "Geometry: direction {dir}: the cell size {dx} is zero or has no finite inverse"
            ),
            K::CurvilinearThirdDirection { coord, cells } => write!(
                f,
                "Geometry: {coord} coordinates take one cell in direction 2 (the azimuth), \
                 got {cells}"
            ),
            K::BadRatio { dir, ratio } => write!(
                f,
                "Geometry: direction {dir}: expected a positive ratio, got {ratio}"
            ),
            K::NotCoarsenable { domain, ratio } => write!(
                f,
                "Geometry: the domain {domain} does not coarsen by {ratio} (coarse cells \
                 would not nest over the fine ones)"
            ),
            K::UnknownCoordSys(code) => write!(
                f,
                "CoordSys: expected 0 (Cartesian), 1 (RZ) or 2 (spherical), got {code}"
            ),
        }
    }
}

impl core::error::Error for GeometryError {}
