//! The crate's one error type: [`AmrError`] (the operation and what went wrong) and
//! [`AmrErrorKind`].
//!
//! Every operation checks all of its arguments before it writes anything, so an error
//! means the destination is exactly as it was.

use core::fmt;

use amrex_box::{IndexBox, IndexType, IntVect};
use amrex_geometry::CoordSys;
use amrex_multifab::FabError;

/// Which argument of an operation an [`AmrError`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// The fine level's data (the source of an average, the destination of an
    /// interpolation).
    Fine,
    /// The coarse level's data.
    Crse,
    /// The data a fill writes (FillPatch's destination).
    Dest,
    /// The states a single-level fill reads.
    Source,
}

impl fmt::Display for Operand {
    /// `fine` or `coarse`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Fine => "fine",
            Self::Crse => "coarse",
            Self::Dest => "destination",
            Self::Source => "source",
        })
    }
}

/// What was wrong with the arguments of an operation.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum AmrErrorKind {
    /// A refinement ratio below 1 in some direction (AMReX asserts `ratio >= 1`).
    BadRatio {
        /// The ratio given.
        ratio: IntVect,
    },
    /// A fine box that coarsening by the ratio and refining back would not give again:
    /// its coarse cells would not nest over its fine ones.
    NotCoarsenable {
        /// The box's index in the fine BoxArray.
        index: usize,
        /// The box.
        bx: IndexBox,
        /// The ratio.
        ratio: IntVect,
    },
    /// A component range past the components an operand has.
    ComponentsOutside {
        /// The operand.
        operand: Operand,
        /// The first component asked for.
        start: usize,
        /// How many components were asked for.
        count: usize,
        /// The operand's component count.
        ncomp: usize,
    },
    /// The fine and coarse data of an operation over every component have different
    /// component counts.
    ComponentCountMismatch {
        /// The fine data's count.
        fine: usize,
        /// The coarse data's count.
        crse: usize,
    },
    /// An operation needs more ghost cells than an operand has (or a negative width was
    /// asked for).
    GhostTooWide {
        /// The operand.
        operand: Operand,
        /// The ghost width needed.
        needed: IntVect,
        /// The ghost width the operand has.
        has: IntVect,
    },
    /// The fine and coarse data have different index types.
    IndexTypeMismatch {
        /// The fine data's index type.
        fine: IndexType,
        /// The coarse data's index type.
        crse: IndexType,
    },
    /// The data has an index type the operation does not take.
    WrongIndexType {
        /// What the operation takes (`"cell-centred"`, `"nodal"`, ...).
        expected: &'static str,
        /// The index type found.
        found: IndexType,
    },
    /// An interpolation's region (or the coarse region it needs) is not inside the data
    /// given for it.
    RegionOutside {
        /// The data that should hold the region.
        operand: Operand,
        /// The region needed.
        region: IndexBox,
        /// The bounds of the data given.
        bounds: IndexBox,
    },
    /// The fine geometry is not the coarse one refined by the ratio.
    GeometryMismatch {
        /// The fine geometry's domain.
        fine_domain: IndexBox,
        /// The fine geometry's coordinate system.
        fine_coord: CoordSys,
        /// The coarse geometry's domain.
        crse_domain: IndexBox,
        /// The coarse geometry's coordinate system.
        crse_coord: CoordSys,
        /// The ratio.
        ratio: IntVect,
    },
    /// The `ParallelCopy` from the temporary coarse data into the coarse MultiFab was
    /// refused (FabArrays on different communicators, ranks that disagree, ...).
    Copy(FabError),
    /// A FillPatch source with other than one or two states, or not one time per state.
    SourceCount {
        /// The states given.
        states: usize,
        /// The times given.
        times: usize,
    },
    /// The two states of a FillPatch source have different BoxArrays or distributions.
    StatesDiffer {
        /// Which source.
        operand: Operand,
    },
    /// Data of another index type than the destination's.
    TypeMismatch {
        /// The data.
        operand: Operand,
        /// The destination's index type.
        expected: IndexType,
        /// The data's.
        found: IndexType,
    },
    /// A time or coordinate that is NaN or infinite.
    NotFinite {
        /// What it is (`"time"`, `"source time"`).
        what: &'static str,
        /// The value.
        value: f64,
    },
    /// Fewer boundary records than the components to fill need.
    TooFewBcRecs {
        /// The records given.
        given: usize,
        /// The records needed (the first record's number plus the component count).
        needed: usize,
    },
    /// Data that is neither cell-centred nor nodal where the physical boundary
    /// conditions must be filled (AMReX's host fill aborts on it).
    UnsupportedIndexType {
        /// The index type found.
        found: IndexType,
    },
    /// A box of the data is not inside the domain (in the data's index type).
    BoxOutsideDomain {
        /// The box's index in its BoxArray.
        index: usize,
        /// The box.
        bx: IndexBox,
        /// The domain.
        domain: IndexBox,
    },
    /// The coarse states do not hold coarse cells an interpolation needs: the fine
    /// level is not properly nested in the coarse one.
    NotCovered {
        /// The coarse box the interpolation needs.
        bx: IndexBox,
        /// The part of it (or of its periodic image) inside the domain that the coarse
        /// boxes do not cover.
        piece: IndexBox,
    },
}

/// Why an operation of this crate refused its arguments: [`op`](Self::op) names the
/// operation, [`kind`](Self::kind) says what was wrong, and `Display` names the
/// offending values.
///
/// ```
/// use amrex_amr::{AmrErrorKind, average_down};
/// use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IntVect, MultiFab};
///
/// let fine_ba = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::splat(7)), 8);
/// let crse_ba = fine_ba.coarsen(IntVect::splat(2));
/// let fine = MultiFab::new(&fine_ba, &DistributionMapping::single(&fine_ba), 1, IntVect::ZERO);
/// let mut crse = MultiFab::new(&crse_ba, &DistributionMapping::single(&crse_ba), 1, IntVect::ZERO);
///
/// let err = average_down(&fine, &mut crse, 0, 1, IntVect::new(2, 0, 2)).unwrap_err();
/// assert_eq!(err.kind(), &AmrErrorKind::BadRatio { ratio: IntVect::new(2, 0, 2) });
/// assert_eq!(err.to_string(), "average_down: expected a refinement ratio of at least 1 in every direction, got (2,0,2)");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct AmrError {
    op: &'static str,
    kind: AmrErrorKind,
}

impl AmrError {
    /// An error of operation `op` (`"average_down"`, `"PcInterp::interp"`, ...).
    #[must_use]
    pub const fn new(op: &'static str, kind: AmrErrorKind) -> Self {
        Self { op, kind }
    }

    /// The operation that refused its arguments.
    #[must_use]
    pub const fn op(&self) -> &'static str {
        self.op
    }

    /// What was wrong.
    #[must_use]
    pub const fn kind(&self) -> &AmrErrorKind {
        &self.kind
    }

    /// The kind, by value.
    #[must_use]
    pub fn into_kind(self) -> AmrErrorKind {
        self.kind
    }
}

impl fmt::Display for AmrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use AmrErrorKind as K;
        write!(f, "{}: ", self.op)?;
        match &self.kind {
            K::BadRatio { ratio } => write!(
                f,
                "expected a refinement ratio of at least 1 in every direction, got {ratio}"
            ),
            K::NotCoarsenable { index, bx, ratio } => write!(
                f,
                "fine box {index} {bx} does not coarsen by {ratio} (its coarse cells would \
                 not nest over its fine ones)"
            ),
            K::ComponentsOutside {
                operand,
                start,
                count,
                ncomp,
            } => write!(
                f,
                "components {start}..{start}+{count} are not within the {operand} data's \
                 {ncomp} components"
            ),
            K::ComponentCountMismatch { fine, crse } => write!(
                f,
                "expected as many coarse components as fine ones, got {fine} fine and \
                 {crse} coarse"
            ),
            K::GhostTooWide {
                operand,
                needed,
                has,
            } => write!(
                f,
                "needs a ghost width of {needed} in the {operand} data, which has {has}"
            ),
            K::IndexTypeMismatch { fine, crse } => write!(
                f,
                "expected the same index type, got {fine} fine and {crse} coarse"
            ),
            K::WrongIndexType { expected, found } => {
                write!(f, "expected {expected} data, got index type {found}")
            }
            K::RegionOutside {
                operand,
                region,
                bounds,
            } => write!(
                f,
                "the {operand} region {region} is not inside the {operand} data's bounds \
                 {bounds}"
            ),
            K::GeometryMismatch {
                fine_domain,
                fine_coord,
                crse_domain,
                crse_coord,
                ratio,
            } => write!(
                f,
                "the fine geometry ({fine_coord}, domain {fine_domain}) is not the coarse \
                 one ({crse_coord}, domain {crse_domain}) refined by {ratio}"
            ),
            K::Copy(e) => write!(f, "the parallel copy into the coarse data failed: {e}"),
            K::SourceCount { states, times } => write!(
                f,
                "expected one or two source states with one time each, got {states} states \
                 and {times} times"
            ),
            K::StatesDiffer { operand } => write!(
                f,
                "the two {operand} states have different BoxArrays or distributions"
            ),
            K::TypeMismatch {
                operand,
                expected,
                found,
            } => write!(
                f,
                "the {operand} data has index type {found}, the destination {expected}"
            ),
            K::NotFinite { what, value } => write!(f, "the {what} is {value}, not finite"),
            K::TooFewBcRecs { given, needed } => write!(
                f,
                "needs {needed} boundary records (one per component from the first record \
                 used), got {given}"
            ),
            K::UnsupportedIndexType { found } => write!(
                f,
                "the physical boundary fill takes cell-centred or nodal data, got index \
                 type {found}"
            ),
            K::BoxOutsideDomain { index, bx, domain } => {
                write!(f, "box {index} {bx} is not inside the domain {domain}")
            }
            K::NotCovered { bx, piece } => write!(
                f,
                "the coarse cells {piece} (of the coarse box {bx} the interpolation needs) \
                 are not covered by the coarse level's boxes: the fine level is not \
                 properly nested in the coarse one"
            ),
        }
    }
}

impl core::error::Error for AmrError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match &self.kind {
            AmrErrorKind::Copy(e) => Some(e),
            _ => None,
        }
    }
}
