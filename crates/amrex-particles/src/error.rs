//! The crate's error type.
use alloc::string::String;
use amrex_aos::{ParticleReal, SPACEDIM};
use amrex_multifab::{FabArrayError, FabError, IntVect};
use amrex_runtime::CommError;
use core::fmt;

/// What went wrong (see [`ParticleContainerError::kind`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Input arrays that must have one entry per particle differ in length.
    LengthMismatch {
        /// Which array.
        what: String,
        /// Length of the position arrays.
        expected: usize,
        /// Its length.
        found: usize,
    },
    /// Not one array per real (or int) component.
    ComponentCount {
        /// `"real"` or `"int"`.
        what: &'static str,
        /// Components the container has.
        expected: usize,
        /// Arrays given.
        found: usize,
    },
    /// A position with a NaN or infinite coordinate.
    NonFinitePosition {
        /// Index of the particle (in the input, or in its tile).
        index: usize,
        /// Its position.
        position: [ParticleReal; SPACEDIM],
    },
    /// A level that does not exist.
    NoSuchLevel {
        /// Level asked for.
        level: usize,
        /// Levels the container has.
        levels: usize,
    },
    /// A (grid, tile) that does not exist or is not on this rank.
    NoSuchTile {
        /// Level.
        level: usize,
        /// Grid index.
        grid: usize,
        /// Tile index within the grid.
        tile: usize,
    },
    /// An id outside AMReX's 39-bit range, or a cpu outside 24 bits.
    BadId {
        /// The id.
        id: i64,
    },
    /// A MultiFab not built on the level's BoxArray and DistributionMapping.
    LayoutMismatch {
        /// Level.
        level: usize,
    },
    /// A component range the MultiFab does not have.
    BadComponent {
        /// First component.
        start: usize,
        /// Number of components.
        count: usize,
        /// Components of the MultiFab.
        ncomp: usize,
    },
    /// The MultiFab has fewer ghost cells than the stencil needs.
    NotEnoughGhosts {
        /// Ghost cells needed.
        need: i32,
        /// Ghost cells the MultiFab has.
        have: IntVect,
    },
    /// A particle whose stencil leaves its grid's fab (it moved and was not
    /// redistributed).
    OutsideFab {
        /// Its grid.
        grid: usize,
        /// Its position.
        position: [ParticleReal; SPACEDIM],
    },
    /// Levels built on different communicators, or geometries that disagree.
    BadHierarchy(String),
    /// A message or collective failed.
    Comm(CommError),
    /// Collective operation `op` failed on another rank (which returns its own error),
    /// so it stopped on this one too, before its next collective.
    FailedOnOtherRank {
        /// The operation (`"deposit_cic"`, `"write_plotfile (particles)"`, ...).
        op: &'static str,
        /// The lowest rank that failed.
        rank: usize,
    },
    /// A MultiFab (or one of its fabs) refused an operation.
    MultiFab(FabArrayError),
    /// A file could not be read or written (with std).
    Io {
        /// The path.
        path: String,
        /// The system's message.
        message: String,
    },
    /// A particle file that is not what AMReX writes.
    Format {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// The error of every fallible operation of this crate: an [`ErrorKind`] whose
/// `Display` names the offending value.
#[derive(Debug, Clone, PartialEq)]
pub struct ParticleContainerError {
    kind: ErrorKind,
}

impl ParticleContainerError {
    /// What went wrong.
    #[must_use]
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }
}

impl From<ErrorKind> for ParticleContainerError {
    fn from(kind: ErrorKind) -> Self {
        Self { kind }
    }
}

impl From<CommError> for ParticleContainerError {
    fn from(e: CommError) -> Self {
        ErrorKind::Comm(e).into()
    }
}

impl From<FabArrayError> for ParticleContainerError {
    fn from(e: FabArrayError) -> Self {
        ErrorKind::MultiFab(e).into()
    }
}

impl From<FabError> for ParticleContainerError {
    fn from(e: FabError) -> Self {
        ErrorKind::MultiFab(e.into()).into()
    }
}

impl fmt::Display for ParticleContainerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::LengthMismatch {
                what,
                expected,
                found,
            } => write!(
                f,
                "{what} has {found} entries, but the positions have {expected}"
            ),
            ErrorKind::ComponentCount {
                what,
                expected,
                found,
            } => write!(
                f,
                "expected {expected} {what} component arrays, got {found}"
            ),
            ErrorKind::NonFinitePosition { index, position } => {
                write!(f, "particle {index} has a non-finite position {position:?}")
            }
            ErrorKind::NoSuchLevel { level, levels } => {
                write!(
                    f,
                    "level {level} does not exist (the container has {levels})"
                )
            }
            ErrorKind::NoSuchTile { level, grid, tile } => write!(
                f,
                "tile (grid {grid}, tile {tile}) of level {level} does not exist on this rank"
            ),
            ErrorKind::BadId { id } => {
                write!(
                    f,
                    "particle id {id} is outside AMReX's range of ±(2^39 - 1)"
                )
            }
            ErrorKind::LayoutMismatch { level } => write!(
                f,
                "the MultiFab is not built on level {level}'s BoxArray and DistributionMapping"
            ),
            ErrorKind::BadComponent {
                start,
                count,
                ncomp,
            } => write!(
                f,
                "components {start}..{} are not within the MultiFab's {ncomp}",
                start.saturating_add(*count)
            ),
            ErrorKind::NotEnoughGhosts { need, have } => write!(
                f,
                "the stencil needs {need} ghost cell(s), the MultiFab has {have}"
            ),
            ErrorKind::OutsideFab { grid, position } => write!(
                f,
                "a particle at {position:?} reaches outside grid {grid}'s fab (redistribute after moving particles)"
            ),
            ErrorKind::BadHierarchy(m) => write!(f, "bad level hierarchy: {m}"),
            ErrorKind::Comm(e) => write!(f, "communication failed: {e}"),
            ErrorKind::FailedOnOtherRank { op, rank } => write!(f, "{op}: rank {rank} failed"),
            ErrorKind::MultiFab(e) => write!(f, "MultiFab operation failed: {e}"),
            ErrorKind::Io { path, message } => write!(f, "{path}: {message}"),
            ErrorKind::Format { path, message } => {
                write!(f, "{path}: not an AMReX particle file: {message}")
            }
        }
    }
}

impl core::error::Error for ParticleContainerError {}

/// Shorthand.
pub type Result<T, E = ParticleContainerError> = core::result::Result<T, E>;
