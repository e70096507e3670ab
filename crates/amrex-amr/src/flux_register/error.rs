//! The flux register's error type: [`FluxRegisterError`] (the operation and what went
//! wrong), [`FluxRegisterErrorKind`] and [`Argument`].

use core::fmt;

use amrex_box::{IndexBox, IndexType, IntVect};
use amrex_multifab::FabError;

/// Which argument of a [`FluxRegister`](super::FluxRegister) operation an error is
/// about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Argument {
    /// The fine BoxArray the register is built from.
    FineBoxes,
    /// The register itself (its components).
    Register,
    /// A flux MultiFab (coarse or fine, as the operation says).
    Flux,
    /// The face areas given with a flux.
    Area,
    /// The coarse state MultiFab that `reflux` corrects.
    State,
    /// The cell volumes given to `reflux_volume`.
    Volume,
}

impl fmt::Display for Argument {
    /// `fine boxes`, `register`, `flux`, `area`, `state` or `volume`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::FineBoxes => "fine boxes",
            Self::Register => "register",
            Self::Flux => "flux",
            Self::Area => "area",
            Self::State => "state",
            Self::Volume => "volume",
        })
    }
}

/// What was wrong with the arguments of a flux register operation.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum FluxRegisterErrorKind {
    /// A fine level number of 0: level 0 has no coarser level, so it has no coarse/fine
    /// interface.
    NoCoarseLevel,
    /// A refinement ratio below 1 in some direction.
    BadRatio {
        /// The ratio given.
        ratio: IntVect,
    },
    /// Data that must be cell-centred is not.
    NotCellCentred {
        /// The argument.
        what: Argument,
        /// Its index type.
        found: IndexType,
    },
    /// The fine distribution mapping does not have one rank per fine box.
    MapLength {
        /// The number of fine boxes.
        boxes: usize,
        /// The length of the mapping.
        map: usize,
    },
    /// A fine box that coarsening by the ratio and refining back would not give again.
    NotCoarsenable {
        /// The box's index in the fine BoxArray.
        index: usize,
        /// The box.
        bx: IndexBox,
        /// The ratio.
        ratio: IntVect,
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
        /// The argument.
        what: Argument,
        /// The direction of the operation.
        dir: usize,
        /// The index type found.
        found: IndexType,
    },
    /// A component range past the components an argument has.
    ComponentsOutside {
        /// The argument.
        what: Argument,
        /// The first component asked for.
        start: usize,
        /// How many components were asked for.
        count: usize,
        /// The argument's component count.
        ncomp: usize,
    },
    /// Data that must share another argument's BoxArray and distribution does not.
    LayoutMismatch {
        /// The argument with the wrong layout.
        what: Argument,
        /// The argument whose layout it must have.
        of: Argument,
    },
    /// A `ParallelCopy` or another MultiFab operation underneath was refused (MultiFabs
    /// on different communicators, ranks that disagree, ...).
    MultiFab(FabError),
}

/// Why a [`FluxRegister`](super::FluxRegister) operation refused its arguments:
/// [`op`](Self::op) names the operation, [`kind`](Self::kind) says what was wrong, and
/// `Display` names the offending values.
///
/// ```
/// use amrex_amr::{FluxRegister, FluxRegisterErrorKind};
/// use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IntVect};
///
/// let fba = BoxArray::from_domain(IndexBox::new(IntVect::splat(8), IntVect::splat(23)), 8);
/// let err = FluxRegister::new(&fba, &DistributionMapping::single(&fba), IntVect::new(2, 0, 2), 1, 1)
///     .unwrap_err();
/// assert_eq!(err.kind(), &FluxRegisterErrorKind::BadRatio { ratio: IntVect::new(2, 0, 2) });
/// assert_eq!(
///     err.to_string(),
///     "FluxRegister::new: expected a refinement ratio of at least 1 in every direction, got (2,0,2)"
/// );
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct FluxRegisterError {
    op: &'static str,
    kind: FluxRegisterErrorKind,
}

impl FluxRegisterError {
    /// An error of operation `op` (`"FluxRegister::reflux"`, ...).
    #[must_use]
    pub const fn new(op: &'static str, kind: FluxRegisterErrorKind) -> Self {
        Self { op, kind }
    }

    /// The operation that refused its arguments.
    #[must_use]
    pub const fn op(&self) -> &'static str {
        self.op
    }

    /// What was wrong.
    #[must_use]
    pub const fn kind(&self) -> &FluxRegisterErrorKind {
        &self.kind
    }

    /// The kind, by value.
    #[must_use]
    pub fn into_kind(self) -> FluxRegisterErrorKind {
        self.kind
    }
}

impl fmt::Display for FluxRegisterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use FluxRegisterErrorKind as K;
        write!(f, "{}: ", self.op)?;
        match &self.kind {
            K::NoCoarseLevel => f.write_str(
                "expected a fine level of at least 1, got 0 (level 0 has no coarser level)",
            ),
            K::BadRatio { ratio } => write!(
                f,
                "expected a refinement ratio of at least 1 in every direction, got {ratio}"
            ),
            K::NotCellCentred { what, found } => {
                write!(
                    f,
                    "expected cell-centred {what} data, got index type {found}"
                )
            }
            K::MapLength { boxes, map } => write!(
                f,
                "expected a distribution mapping of {boxes} ranks (one per fine box), got {map}"
            ),
            K::NotCoarsenable { index, bx, ratio } => write!(
                f,
                "fine box {index} {bx} does not coarsen by {ratio} (its coarse cells would \
                 not nest over its fine ones)"
            ),
            K::Overlapping { first, second } => {
                write!(f, "fine boxes {first} and {second} overlap")
            }
            K::OutsideIndexSpace { index, bx } => write!(
                f,
                "the cells just outside coarsened fine box {index} {bx} leave the i32 index \
                 space"
            ),
            K::BadDirection { dir } => write!(f, "expected a direction 0, 1 or 2, got {dir}"),
            K::WrongFaces { what, dir, found } => write!(
                f,
                "expected {what} data on the faces normal to direction {dir} (nodal in {dir} \
                 only), got index type {found}"
            ),
            K::ComponentsOutside {
                what,
                start,
                count,
                ncomp,
            } => write!(
                f,
                "components {start}..{start}+{count} are not within the {what}'s {ncomp} \
                 components"
            ),
            K::LayoutMismatch { what, of } => write!(
                f,
                "expected the {what} on the {of}'s BoxArray and distribution mapping"
            ),
            K::MultiFab(e) => write!(f, "a MultiFab operation failed: {e}"),
        }
    }
}

impl core::error::Error for FluxRegisterError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match &self.kind {
            FluxRegisterErrorKind::MultiFab(e) => Some(e),
            _ => None,
        }
    }
}
