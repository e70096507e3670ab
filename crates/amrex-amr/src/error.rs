//! The crate's one error type: [`AmrError`] (the operation and what went wrong) and
//! [`AmrErrorKind`].
//!
//! Every operation of the crate (the averages, the interpolaters, the physical-boundary
//! fill and its codes, FillPatch, the flux register) returns it. Every operation checks
//! all of its arguments before it writes anything, so an error means the destination is
//! exactly as it was (only an exchange between MPI ranks that fails part-way, reported
//! as [`AmrErrorKind::MultiFab`], can leave an operation partly done).

use core::fmt;

use amrex_box::{IndexBox, IndexType, IntVect};
use amrex_geometry::CoordSys;
use amrex_multifab::FabArrayError;

use alloc::string::String;

use amrex_runtime::ParmParseError;

/// Which argument of an operation an [`AmrError`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Operand {
    /// The fine level's data (the source of an average, the destination of an
    /// interpolation).
    Fine,
    /// The coarse level's data.
    Crse,
    /// The data a fill writes (FillPatch's or the physical-boundary fill's destination).
    Dest,
    /// The states a single-level fill reads.
    Source,
    /// The fine BoxArray a [`FluxRegister`](crate::FluxRegister) is built from.
    FineBoxes,
    /// A flux register itself (its components).
    Register,
    /// A flux MultiFab (coarse or fine, as the operation says).
    Flux,
    /// The face areas given with a flux.
    Area,
    /// The coarse state MultiFab that a reflux corrects.
    State,
    /// The cell volumes given to a reflux.
    Volume,
}

impl fmt::Display for Operand {
    /// `fine`, `coarse`, `destination`, `source`, `fine boxes`, `register`, `flux`,
    /// `area`, `state` or `volume`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Fine => "fine",
            Self::Crse => "coarse",
            Self::Dest => "destination",
            Self::Source => "source",
            Self::FineBoxes => "fine boxes",
            Self::Register => "register",
            Self::Flux => "flux",
            Self::Area => "area",
            Self::State => "state",
            Self::Volume => "volume",
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
    /// A component range that is reversed or reaches past the components an operand
    /// has.
    ComponentsOutside {
        /// The operand.
        operand: Operand,
        /// The first component asked for.
        start: usize,
        /// One past the last component asked for (`usize::MAX` where that overflows).
        end: usize,
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
    /// Two operands that must have the same index type do not.
    IndexTypeMismatch {
        /// The operand with the wrong index type.
        operand: Operand,
        /// Its index type.
        found: IndexType,
        /// The operand whose index type it must have.
        of: Operand,
        /// That operand's index type.
        expected: IndexType,
    },
    /// Data of an index type the operation does not take.
    WrongIndexType {
        /// The operand.
        operand: Operand,
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
    /// A MultiFab operation underneath was refused: a `ParallelCopy` or a reduction
    /// between FabArrays on different communicators, ranks that disagree, ...
    MultiFab(FabArrayError),
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
    /// Data that must share another operand's BoxArray and distribution does not.
    LayoutMismatch {
        /// The operand with the wrong layout.
        operand: Operand,
        /// The operand whose layout it must have.
        of: Operand,
    },
    /// A time or coordinate that is NaN or infinite.
    NotFinite {
        /// What it is (`"time"`, `"source time"`).
        what: &'static str,
        /// The value.
        value: f64,
    },
    /// An integer that is not the AMReX code of a [`BCType`](crate::boundary::BCType).
    UnknownBcType {
        /// The code given.
        code: i32,
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
    /// A box of the data is not inside the domain (in the data's index type). Ghost
    /// cells may leave the domain; valid boxes may not.
    BoxOutsideDomain {
        /// The box's index in its BoxArray.
        index: usize,
        /// The box.
        bx: IndexBox,
        /// The domain, in the boxes' index type.
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
    /// A flux register for fine level 0: level 0 has no coarser level, so it has no
    /// coarse/fine interface.
    NoCoarseLevel,
    /// The fine distribution mapping does not have one rank per fine box.
    MapLength {
        /// The number of fine boxes.
        boxes: usize,
        /// The length of the mapping.
        map: usize,
    },
    /// Two fine boxes overlap (a fine level's boxes are disjoint).
    Overlapping {
        /// The index of the first box.
        first: usize,
        /// The index of the second box.
        second: usize,
    },
    /// A coarsened fine box so close to the edge of the `i32` index space that the cells
    /// just outside it have no index.
    OutsideIndexSpace {
        /// The box's index in the fine BoxArray.
        index: usize,
        /// The coarsened box.
        bx: IndexBox,
    },
    /// A direction that is not 0, 1 or 2.
    BadDirection {
        /// The direction given.
        dir: usize,
    },
    /// Face data that is not on the faces normal to `dir` (its index type must be nodal
    /// in `dir` and cell-centred in the other two directions).
    WrongFaces {
        /// The operand.
        operand: Operand,
        /// The direction of the operation.
        dir: usize,
        /// The index type found.
        found: IndexType,
    },
    /// An inputs-file value that could not be read (missing, wrong type or count): the
    /// ParmParse error names the key, file and line.
    Input(ParmParseError),
    /// A parameter with a value out of its range.
    BadParameter {
        /// The parameter (`amr.grid_eff`, ...).
        key: String,
        /// What is wrong, with the value.
        detail: String,
    },
    /// AMR parameters that break one of AMReX's `checkInput` rules.
    BadMeshInput {
        /// The rule broken.
        rule: &'static str,
        /// The level.
        level: usize,
        /// The direction, where the rule is per direction.
        dir: Option<usize>,
        /// The offending values.
        values: String,
    },
    /// Grids read from a checkpoint that do not fit this hierarchy (a restart with other
    /// inputs than the run that wrote it): more levels than `max_level` allows, a box
    /// outside its level's domain, a level 0 that does not cover the domain, a level
    /// not nested in the one below by the refinement ratio.
    CheckpointMismatch {
        /// The level.
        level: usize,
        /// What does not fit, with the values.
        detail: String,
    },
    /// The simulation's `error_est` failed (returned an error, or panicked) on some
    /// rank while tagging `level`; every rank gets this error.
    ErrorEstFailed {
        /// The level being tagged.
        level: usize,
        /// How many ranks failed.
        ranks: u64,
        /// This rank's failure, or that it failed elsewhere.
        message: String,
    },
}

/// AMReX's name for a boundary code it defines but this crate does not implement.
const fn amrex_only_code(code: i32) -> Option<&'static str> {
    match code {
        -666 => Some("bogus"),
        6 => Some("ext_dir_cc"),
        7 => Some("direction_dependent"),
        1001 => Some("user_1"),
        1002 => Some("user_2"),
        1003 => Some("user_3"),
        _ => None,
    }
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
/// let err = average_down(&fine, &mut crse, 0..1, IntVect::new(2, 0, 2)).unwrap_err();
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
                end,
                ncomp,
            } => write!(
                f,
                "components {start}..{end} are not within the {operand} data's {ncomp} \
                 components"
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
            K::IndexTypeMismatch {
                operand,
                found,
                of,
                expected,
            } => write!(
                f,
                "expected the {operand} data to have the {of} data's index type {expected}, \
                 got {found}"
            ),
            K::WrongIndexType {
                operand,
                expected,
                found,
            } => write!(
                f,
                "expected {expected} {operand} data, got index type {found}"
            ),
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
            K::MultiFab(e) => write!(f, "a MultiFab operation underneath failed: {e}"),
            K::SourceCount { states, times } => write!(
                f,
                "expected one or two source states with one time each, got {states} states \
                 and {times} times"
            ),
            K::StatesDiffer { operand } => write!(
                f,
                "the two {operand} states have different BoxArrays or distributions"
            ),
            K::LayoutMismatch { operand, of } => write!(
                f,
                "expected the {operand} data on the {of} data's BoxArray and distribution \
                 mapping"
            ),
            K::NotFinite { what, value } => write!(f, "the {what} is {value}, not finite"),
            K::UnknownBcType { code } => {
                write!(f, "expected an AMReX BCType code from -1 to 5, got {code}")?;
                match amrex_only_code(*code) {
                    Some(name) => write!(f, " (AMReX's {name}, which is not implemented)"),
                    None => Ok(()),
                }
            }
            K::TooFewBcRecs { given, needed } => write!(
                f,
                "needs {needed} boundary records (one per component from the first record \
                 used), got {given}"
            ),
            K::UnsupportedIndexType { found } => write!(
                f,
                "the physical boundary fill takes cell-centred or nodal data, got index \
                 type {found} (mixed face or edge types have no physical-boundary fill)"
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
            K::NoCoarseLevel => f.write_str(
                "expected a fine level of at least 1, got 0 (level 0 has no coarser level)",
            ),
            K::MapLength { boxes, map } => write!(
                f,
                "expected a distribution mapping of {boxes} ranks (one per fine box), got {map}"
            ),
            K::Overlapping { first, second } => {
                write!(f, "fine boxes {first} and {second} overlap")
            }
            K::OutsideIndexSpace { index, bx } => write!(
                f,
                "the cells just outside coarsened fine box {index} {bx} leave the i32 index \
                 space"
            ),
            K::Input(e) => write!(f, "{e}"),
            K::BadParameter { key, detail } => write!(f, "bad {key}: {detail}"),
            K::BadMeshInput {
                rule,
                level,
                dir,
                values,
            } => {
                write!(f, "{rule}: level {level}")?;
                if let Some(d) = dir {
                    write!(f, ", direction {d}")?;
                }
                write!(f, " ({values})")
            }
            K::CheckpointMismatch { level, detail } => write!(
                f,
                "the checkpoint does not fit this hierarchy on level {level}: {detail}"
            ),
            K::ErrorEstFailed {
                level,
                ranks,
                message,
            } => write!(
                f,
                "error_est failed while tagging level {level} on {ranks} rank(s): {message}"
            ),
            K::BadDirection { dir } => write!(f, "expected a direction 0, 1 or 2, got {dir}"),
            K::WrongFaces {
                operand,
                dir,
                found,
            } => write!(
                f,
                "expected {operand} data on the faces normal to direction {dir} (nodal in \
                 {dir} only), got index type {found}"
            ),
        }
    }
}

/// A refused MultiFab operation underneath `op`, as an [`AmrError`] of kind
/// [`MultiFab`](AmrErrorKind::MultiFab): for `map_err`.
pub(crate) fn fab_err(op: &'static str) -> impl Fn(FabArrayError) -> AmrError + Copy {
    move |e| AmrError::new(op, AmrErrorKind::MultiFab(e))
}

impl core::error::Error for AmrError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match &self.kind {
            AmrErrorKind::MultiFab(e) => Some(e),
            _ => None,
        }
    }
}
