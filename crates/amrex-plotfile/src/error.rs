//! [`PlotfileError`], why reading or writing a plotfile failed, and the constructors the
//! reader and the writer build it with (each names the file it is about).

use alloc::boxed::Box;
use alloc::string::String;
use core::fmt;
use std::path::{Path, PathBuf};

use amrex_box::{IndexBox, IntVect};
use amrex_geometry::{Geometry, GeometryError};
use amrex_runtime::CommError;

use crate::header::HeaderError;
use crate::nesting;
use crate::text::ParseError;

/// Why reading or writing a plotfile failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum PlotfileError {
    /// A file could not be opened, read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A header (or a FAB header) is not in the expected format.
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line (for FAB headers: of the header line itself).
        line: usize,
        /// What was expected and found.
        what: String,
    },
    /// A `Header`'s numbers make no [`Geometry`]: a coordinate system other than AMReX's
    /// 0, 1 and 2, a `prob_lo`/`prob_hi` that is NaN, infinite or inverted (`level:
    /// None`), or a level domain that makes no geometry over them (`level: Some(..)`:
    /// an empty domain, an RZ or spherical domain of several cells in direction 2).
    /// `source` names the value.
    BadGeometry {
        /// The file.
        path: PathBuf,
        /// The level whose domain makes no geometry; `None` for the coordinate system
        /// and the physical box, which every level shares.
        level: Option<usize>,
        /// What is wrong, and the value.
        source: GeometryError,
    },
    /// The headers and the data disagree (a FAB of another box or size, a short file).
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
    /// The writer was given something it cannot write (component names that do not
    /// match the components, levels without geometry, boxes held by other ranks).
    Argument(String),
    /// The writer was given a refinement ratio that is not at least 1 in every direction
    /// (`level` is the finer of the two levels it joins).
    RefRatioNotPositive {
        /// The finer level.
        level: usize,
        /// `ref_ratio[level - 1]`.
        ratio: IntVect,
    },
    /// The writer was given a level whose domain is not the coarser level's domain
    /// refined by the ratio between them (yt and AMReX derive one from the other).
    RefRatioMismatch {
        /// The finer level.
        level: usize,
        /// `ref_ratio[level - 1]`.
        ratio: IntVect,
        /// Level `level - 1`'s domain.
        coarse: IndexBox,
        /// Level `level`'s domain.
        fine: IndexBox,
    },
    /// The writer was given levels on different physical domains or coordinate systems
    /// (the `Header` records level 0's for every level).
    ProbDomainMismatch {
        /// The level that differs from level 0.
        level: usize,
        /// Its geometry (boxed: keeps `PlotfileError` small).
        found: Box<Geometry>,
        /// Level 0's geometry.
        expected: Box<Geometry>,
    },
    /// The writer was given a box (of cells; nodal boxes are compared by the cells they
    /// enclose) that is not inside its level's domain.
    BoxOutsideDomain {
        /// The level.
        level: usize,
        /// The box's index in the level's `BoxArray`.
        index: usize,
        /// The box.
        bx: IndexBox,
        /// The level's domain.
        domain: IndexBox,
    },
    /// The writer was given a level with two boxes that share cells.
    OverlappingBoxes {
        /// The level.
        level: usize,
        /// The lower index of the two.
        first: usize,
        /// The higher index.
        second: usize,
        /// Box `first`.
        first_box: IndexBox,
        /// Box `second`.
        second_box: IndexBox,
        /// The cells they share.
        overlap: IndexBox,
    },
    /// The writer was given a level that is not properly nested in the one below: one of
    /// its boxes, coarsened by the refinement ratio, is not covered by the coarser level's
    /// boxes (AMReX's proper nesting requires at least this containment).
    NotProperlyNested {
        /// The finer level.
        level: usize,
        /// The box's index in the level's `BoxArray`.
        index: usize,
        /// The box.
        bx: IndexBox,
        /// `ref_ratio[level - 1]`.
        ratio: IntVect,
        /// The box coarsened by `ratio`.
        coarsened: IndexBox,
        /// How many cells of `coarsened` no box of level `level - 1` covers.
        uncovered: u64,
    },
    /// A collective step of a write or read on many ranks failed (the ranks passed
    /// different arguments, or MPI was finalised); returned on every rank alike.
    Comm(CommError),
    /// Another rank failed during a write or read on many ranks, and this rank's own part
    /// went well: `rank` is the lowest rank that failed, `what` its error.
    OtherRank {
        /// The lowest rank that failed.
        rank: usize,
        /// Its error, as text.
        what: String,
    },
}

impl fmt::Display for PlotfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Self::Parse { path, line, what } => {
                write!(f, "{}:{line}: expected {what}", path.display())
            }
            Self::BadGeometry {
                path,
                level: None,
                source,
            } => write!(f, "{}: {source}", path.display()),
            Self::BadGeometry {
                path,
                level: Some(level),
                source,
            } => write!(f, "{}: level {level}: {source}", path.display()),
            Self::Invalid { path, what } => write!(f, "{}: {what}", path.display()),
            Self::Argument(what) => write!(f, "plotfile writer: {what}"),
            Self::RefRatioNotPositive { level, ratio } => write!(
                f,
                "plotfile writer: the refinement ratio {ratio} between levels {} and {level} \
                 is not at least 1 in every direction",
                level.saturating_sub(1)
            ),
            Self::RefRatioMismatch {
                level,
                ratio,
                coarse,
                fine,
            } => write!(
                f,
                "plotfile writer: level {level}'s domain {fine} is not level {}'s domain \
                 {coarse} refined by the ratio {ratio}, which is {}",
                level.saturating_sub(1),
                nesting::fmt_corners(nesting::refined_corners(coarse, *ratio))
            ),
            Self::ProbDomainMismatch {
                level,
                found,
                expected,
            } => write!(
                f,
                "plotfile writer: level {level} spans {:?}..{:?} ({} coordinates), but level 0 \
                 spans {:?}..{:?} ({} coordinates); every level of a plotfile shares level \
                 0's physical domain",
                found.prob_lo(),
                found.prob_hi(),
                found.coord(),
                expected.prob_lo(),
                expected.prob_hi(),
                expected.coord()
            ),
            Self::BoxOutsideDomain {
                level,
                index,
                bx,
                domain,
            } => write!(
                f,
                "plotfile writer: level {level} box {index} {bx} is not inside the level's \
                 domain {domain}"
            ),
            Self::OverlappingBoxes {
                level,
                first,
                second,
                first_box,
                second_box,
                overlap,
            } => write!(
                f,
                "plotfile writer: level {level} boxes {first} {first_box} and {second} \
                 {second_box} overlap in {overlap} ({} cells)",
                overlap.num_pts()
            ),
            Self::NotProperlyNested {
                level,
                index,
                bx,
                ratio,
                coarsened,
                uncovered,
            } => write!(
                f,
                "plotfile writer: level {level} is not properly nested in level {}: box \
                 {index} {bx} coarsened by {ratio} is {coarsened}, and {uncovered} of its {} \
                 cells lie outside level {}'s boxes",
                level.saturating_sub(1),
                coarsened.num_pts(),
                level.saturating_sub(1)
            ),
            Self::Comm(e) => write!(f, "plotfile on many ranks: {e}"),
            Self::OtherRank { rank, what } => write!(f, "rank {rank} failed: {what}"),
        }
    }
}

impl core::error::Error for PlotfileError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            Self::BadGeometry { source, .. } => Some(source),
            Self::Comm(e) => Some(e),
            _ => None,
        }
    }
}

pub(crate) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> PlotfileError + '_ {
    move |source| PlotfileError::Io {
        path: path.to_path_buf(),
        source,
    }
}

pub(crate) fn parse_err(path: &Path) -> impl FnOnce(ParseError) -> PlotfileError + '_ {
    move |e| PlotfileError::Parse {
        path: path.to_path_buf(),
        line: e.line,
        what: e.what,
    }
}

pub(crate) fn header_err(path: &Path) -> impl FnOnce(HeaderError) -> PlotfileError + '_ {
    move |e| match e {
        HeaderError::Text(e) => parse_err(path)(e),
        HeaderError::Geometry { level, source } => PlotfileError::BadGeometry {
            path: path.to_path_buf(),
            level,
            source,
        },
    }
}

pub(crate) fn invalid(path: &Path, what: impl Into<String>) -> PlotfileError {
    PlotfileError::Invalid {
        path: path.to_path_buf(),
        what: what.into(),
    }
}
