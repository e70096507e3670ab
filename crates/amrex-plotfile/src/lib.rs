//! AMReX plotfiles (`HyperCLaw-V1.1`): read what AMReX's `WriteSingleLevelPlotfile` /
//! `WriteMultiLevelPlotfile` write, and write plotfiles AMReX, yt, VisIt and ParaView
//! read, for the [`MultiFab`]s of `amrex-multifab`.
//!
//! A plotfile is a directory:
//!
//! ```text
//! plt00010/Header                  names, time, geometry, per-level steps and box extents
//! plt00010/Level_0/Cell_H          VisMF header: BoxArray, where each FAB is, min/max
//! plt00010/Level_0/Cell_D_00000    the FABs: `FAB ((8, (64 11 52 ...)),(8, (8 7 ...)))`
//!                                  `((lo) (hi) (type)) ncomp\n` then the doubles
//! plt00010/Level_1/...
//! ```
//!
//! Every FAB holds `ncomp` components over its box in Fortran order (`i` fastest,
//! component slowest) as native doubles, exactly a compact
//! [`BaseFab`](amrex_multifab::BaseFab). The reader accepts IEEE floats and doubles in
//! either byte order, VisMF header versions 1–4 and 1-, 2- and 3-dimensional plotfiles
//! (missing directions become `0..=0`); the writer writes what AMReX 24.10 writes by
//! default (version 1 headers, one `Cell_D_00000` per level — one `Cell_D_<rank>` per
//! rank on many —, native doubles, valid cells only), the `Header` and `Cell_H` formatted
//! like AMReX's (numbers as C++ streams print them).
//!
//! # Distrust on both sides
//!
//! - The reader treats every file as hostile: every box and ghost width it parses passes
//!   the `i32` index-space rule ([`IndexBox::check_index_space`]),
//!   the FABs' data must lie inside the data files and not overlap before anything is
//!   allocated, and the `Header`'s MultiFab paths must stay inside the plotfile
//!   directory.
//! - The writer refuses a hierarchy that yt, VisIt or AMReX would misread, before it
//!   creates a file: a refinement ratio that disagrees with the level domains
//!   ([`PlotfileError::RefRatioMismatch`]), levels on different physical domains
//!   ([`PlotfileError::ProbDomainMismatch`]), boxes outside their level's domain
//!   ([`PlotfileError::BoxOutsideDomain`]), overlapping boxes on a level
//!   ([`PlotfileError::OverlappingBoxes`]), and a level whose boxes, coarsened by the
//!   ratio, leave the boxes of the level below ([`PlotfileError::NotProperlyNested`]).
//!
//! # Quick start
//!
//! ```
//! # #[cfg(not(miri))] { // Miri runs isolated from the file system
//! use amrex_plotfile::{self as plotfile, Geometry};
//! use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IntVect, MultiFab, Tiling};
//!
//! let domain = IndexBox::new(IntVect::ZERO, IntVect::new(15, 7, 7));
//! let ba = BoxArray::from_domain(domain, 8);
//! let mut mf = MultiFab::new(&ba, &DistributionMapping::single(&ba), 2, IntVect::splat(1));
//! for mfi in mf.mfiter(Tiling::None) {
//!     let vbx = mfi.validbox();
//!     mf.array_mut(&mfi).for_each_mut(vbx, |i, j, k, n, v| {
//!         *v = 1e4 * n as f64 + f64::from(i) + 0.01 * f64::from(j) + 1e-4 * f64::from(k)
//!     });
//! }
//! let geom = Geometry::new(domain, [0.0; 3], [1.0, 0.5, 0.5]);
//! assert_eq!(geom.cell_center(IntVect::new(3, 0, 7)), [0.21875, 0.03125, 0.46875]);
//! let dir = std::env::temp_dir().join(format!("amrex_rs_doc_plt_{}", std::process::id()));
//! plotfile::write_single_level_plotfile(&dir, &mf, &["phi", "psi"], &geom, 0.5, 10)?;
//!
//! let plt = plotfile::read_plotfile(&dir)?;
//! assert_eq!(plt.header.var_names, ["phi", "psi"]);
//! assert_eq!((plt.header.time, plt.header.level_steps[0]), (0.5, 10));
//! assert_eq!(plt.header.domains[0], domain);
//! let back = &plt.levels[0];                // ghost cells are not written
//! assert_eq!(back.box_array(), &ba);
//! assert_eq!(back.sum(1..2, 0).unwrap(), mf.sum(1..2, 0).unwrap());
//! assert_eq!(back.value_at(IntVect::new(3, 2, 1), 1), Some(1e4 + 3.0 + 0.02 + 1e-4));
//! # std::fs::remove_dir_all(&dir)?;
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Features
//!
//! - `mpi`: turns on `amrex-multifab/mpi` (MPI's world as `Communicator::current()`).
//!   The parallel writer and readers below need nothing more: they are collective over
//!   whatever communicator the FabArrays' maps carry, and work unchanged on one process.
//!
//! The crate needs `std` (files) and always has it.
//!
//! # Plotfiles on many ranks
//!
//! A FabArray whose map spans its communicator (`DistributionMapping::new` under
//! `mpirun`) is written **collectively**: rank 0 creates the directories; every rank
//! writes its own FABs to `Level_<l>/Cell_D_<file>` (file = rank up to [`nfiles`] ranks,
//! then groups of ranks append to one file in turn, as AMReX's `NFilesIter`); rank 0
//! gathers every FAB's file, offset, minima and maxima and writes `Cell_H` and `Header`.
//! [`read_plotfile_on`], [`read_level_on`] and [`read_multifab_on`] read on many ranks,
//! each rank only its own FABs ([`read_level_with`], [`read_multifab_with`] into a map
//! of yours). An error on any rank is an error on every rank
//! ([`PlotfileError::OtherRank`]), never a hang.
//!
//! [`IndexBox::check_index_space`]: amrex_box::IndexBox::check_index_space
#![forbid(unsafe_code)]
#![doc(test(attr(deny(warnings))))]

extern crate alloc;

mod header;
mod nesting;
mod parallel;
mod text;
mod vismf;

use alloc::boxed::Box;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use amrex_arena::HostAccessible;
use amrex_box::{IndexBox, IntVect};

use amrex_multifab::{BoxArray, CommError, Communicator, DistributionMapping, FabArray, MultiFab};

pub use header::{Geometry, LevelHeader, PLOTFILE_VERSION, PlotfileHeader};
pub use parallel::{DEFAULT_NFILES, nfiles, set_nfiles};
pub use vismf::{FabOnDisk, RealDescriptor, VisMfHeader};

use text::ParseError;

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
                "plotfile writer: level {level} spans {:?}..{:?} (coordinate system {}), but \
                 level 0 spans {:?}..{:?} (coordinate system {}); every level of a plotfile \
                 shares level 0's physical domain",
                found.prob_lo,
                found.prob_hi,
                found.coord_sys,
                expected.prob_lo,
                expected.prob_hi,
                expected.coord_sys
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
            Self::Comm(e) => Some(e),
            _ => None,
        }
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> PlotfileError + '_ {
    move |source| PlotfileError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn parse_err(path: &Path) -> impl FnOnce(ParseError) -> PlotfileError + '_ {
    move |e| PlotfileError::Parse {
        path: path.to_path_buf(),
        line: e.line,
        what: e.what,
    }
}

fn invalid(path: &Path, what: impl Into<String>) -> PlotfileError {
    PlotfileError::Invalid {
        path: path.to_path_buf(),
        what: what.into(),
    }
}

fn read_text(path: &Path) -> Result<String, PlotfileError> {
    std::fs::read_to_string(path).map_err(io_err(path))
}

/// Whether a path read from a file stays inside the directory it is joined to: relative,
/// non-empty, and made only of plain names (no `..`, `.`, root or drive prefix). Symbolic
/// links inside the plotfile are the writer's own business.
fn confined(path: &str) -> bool {
    use std::path::Component;
    !path.is_empty()
        && !path.contains('\\')
        && Path::new(path)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
}

/// `<prefix>` + `suffix` (`Level_0/Cell` + `_H`).
fn with_suffix(prefix: &Path, suffix: &str) -> PathBuf {
    let mut s = prefix.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

impl PlotfileHeader {
    /// Parses the text of a `Header` file (errors name the file `Header`).
    ///
    /// # Errors
    /// [`PlotfileError::Parse`] with the line and what was expected.
    pub fn parse(text: &str) -> Result<Self, PlotfileError> {
        Self::parse_text(text).map_err(parse_err(Path::new("Header")))
    }
}

impl VisMfHeader {
    /// Parses the text of a VisMF header (`Cell_H`) written by a `space_dim`-dimensional
    /// AMReX (errors name the file `Cell_H`).
    ///
    /// # Errors
    /// [`PlotfileError::Parse`] with the line and what was expected.
    pub fn parse(text: &str, space_dim: usize) -> Result<Self, PlotfileError> {
        Self::parse_text(text, space_dim).map_err(parse_err(Path::new("Cell_H")))
    }
}

/// A plotfile read into memory: the `Header`, and per level the VisMF header and a
/// [`MultiFab`] over the level's boxes (ghost width as stored, 0 for plotfiles).
#[derive(Debug)]
pub struct Plotfile {
    /// The `Header` file.
    pub header: PlotfileHeader,
    /// Each level's `Cell_H`.
    pub cell_headers: Vec<VisMfHeader>,
    /// Each level's data, components in `header.var_names` order.
    pub levels: Vec<MultiFab>,
}

impl Plotfile {
    /// The component index of variable `name`.
    #[must_use]
    pub fn var_index(&self, name: &str) -> Option<usize> {
        self.header.var_names.iter().position(|n| n == name)
    }
}

/// Reads a plotfile's `Header`.
///
/// # Errors
/// [`PlotfileError::Io`] or [`PlotfileError::Parse`].
pub fn read_plotfile_header(dir: impl AsRef<Path>) -> Result<PlotfileHeader, PlotfileError> {
    let path = dir.as_ref().join("Header");
    let text = read_text(&path)?;
    PlotfileHeader::parse_text(&text).map_err(parse_err(&path))
}

/// Which boxes of a MultiFab on disk this process reads, and over which communicator the
/// reading is collective.
#[derive(Clone, Copy, Debug)]
enum Layout<'a> {
    /// Every box, on this process alone (no collective).
    Single,
    /// AMReX's default map of the file's BoxArray onto the communicator's ranks.
    On(&'a Communicator),
    /// The caller's map (collective over its communicator).
    Map(&'a DistributionMapping),
}

impl Layout<'_> {
    fn comm(self) -> Communicator {
        match self {
            Self::Single => Communicator::single(),
            Self::On(c) => c.clone(),
            Self::Map(dm) => dm.communicator().clone(),
        }
    }
}

/// Reads a plotfile's `Header` on every rank of `comm`: rank 0 reads the file and
/// broadcasts it (AMReX's `ReadAndBcastFile`). **Collective** over `comm`.
///
/// # Errors
/// As [`read_plotfile_header`], on every rank (ranks other than 0 get
/// [`PlotfileError::OtherRank`] when rank 0 cannot read the file).
pub fn read_plotfile_header_on(
    dir: impl AsRef<Path>,
    comm: &Communicator,
) -> Result<PlotfileHeader, PlotfileError> {
    let path = dir.as_ref().join("Header");
    let text = parallel::read_text_on(comm, &path)?;
    PlotfileHeader::parse_text(&text).map_err(parse_err(&path))
}

/// Reads a whole plotfile (every level into a [`MultiFab`] on the host).
///
/// # Errors
/// Any failure to read or parse a file, or data that disagree with the headers.
pub fn read_plotfile(dir: impl AsRef<Path>) -> Result<Plotfile, PlotfileError> {
    let dir = dir.as_ref();
    let header = read_plotfile_header(dir)?;
    read_levels(dir, header, Layout::Single)
}

/// Reads a whole plotfile on every rank of `comm`, each rank reading only the FABs it
/// owns: level `l` is distributed by `DistributionMapping::on(&ba_l, comm)` (AMReX's
/// default map, the one [`DistributionMapping::new`] gives a writer on the same ranks).
/// The headers are read by rank 0 and broadcast; every rank gets the whole `Header` and
/// every level's `Cell_H`. **Collective** over `comm`; works on any number of ranks,
/// whatever number wrote the file.
///
/// Why a communicator and not a [`DistributionMapping`]: a plotfile's BoxArrays are in
/// its files, so no map can exist before they are read. To read into a map of your own
/// (a restart onto known grids), use [`read_level_with`] or [`read_multifab_with`].
///
/// # Errors
/// As [`read_plotfile`], on **every** rank: a rank whose own FABs could not be read
/// returns its error, the others [`PlotfileError::OtherRank`]; no rank is left waiting.
pub fn read_plotfile_on(
    dir: impl AsRef<Path>,
    comm: &Communicator,
) -> Result<Plotfile, PlotfileError> {
    let dir = dir.as_ref();
    let header = read_plotfile_header_on(dir, comm)?;
    read_levels(dir, header, Layout::On(comm))
}

fn read_levels(
    dir: &Path,
    header: PlotfileHeader,
    layout: Layout<'_>,
) -> Result<Plotfile, PlotfileError> {
    let mut cell_headers = Vec::with_capacity(header.nlevels());
    let mut levels = Vec::with_capacity(header.nlevels());
    for lev in 0..header.nlevels() {
        let (h, mf) = read_level_layout(dir, &header, lev, layout)?;
        cell_headers.push(h);
        levels.push(mf);
    }
    Ok(Plotfile {
        header,
        cell_headers,
        levels,
    })
}

/// Reads level `lev` of a plotfile whose `Header` is `header`.
///
/// # Errors
/// As [`read_multifab`], plus [`PlotfileError::Invalid`] if the level's component
/// count differs from the number of variables or `lev` is not a level.
pub fn read_level(
    dir: impl AsRef<Path>,
    header: &PlotfileHeader,
    lev: usize,
) -> Result<(VisMfHeader, MultiFab), PlotfileError> {
    read_level_layout(dir.as_ref(), header, lev, Layout::Single)
}

/// [`read_level`] on every rank of `comm`, each rank reading its own FABs (AMReX's
/// default map of the level's BoxArray onto `comm`, as [`read_plotfile_on`]).
/// **Collective** over `comm`.
///
/// # Errors
/// As [`read_level`], on every rank.
pub fn read_level_on(
    dir: impl AsRef<Path>,
    header: &PlotfileHeader,
    lev: usize,
    comm: &Communicator,
) -> Result<(VisMfHeader, MultiFab), PlotfileError> {
    read_level_layout(dir.as_ref(), header, lev, Layout::On(comm))
}

/// [`read_level`] into the map `dm` (which must map as many boxes as the level has):
/// each rank of `dm`'s communicator reads the FABs `dm` gives it. **Collective** over
/// `dm.communicator()`; every rank must pass the same map (checked).
///
/// # Errors
/// As [`read_level`], on every rank; [`PlotfileError::Argument`] when `dm` maps another
/// number of boxes; [`PlotfileError::Comm`] when the ranks' maps differ.
pub fn read_level_with(
    dir: impl AsRef<Path>,
    header: &PlotfileHeader,
    lev: usize,
    dm: &DistributionMapping,
) -> Result<(VisMfHeader, MultiFab), PlotfileError> {
    read_level_layout(dir.as_ref(), header, lev, Layout::Map(dm))
}

fn read_level_layout(
    dir: &Path,
    header: &PlotfileHeader,
    lev: usize,
    layout: Layout<'_>,
) -> Result<(VisMfHeader, MultiFab), PlotfileError> {
    // Everything up to the Cell_H read depends only on `header`, the same on every rank.
    let Some(l) = header.levels.get(lev) else {
        return Err(invalid(
            &dir.join("Header"),
            format!("no level {lev} (finest level {})", header.finest_level),
        ));
    };
    // The parser refuses such paths; a header built by hand is checked here too.
    if !confined(&l.mf_path) {
        return Err(invalid(
            &dir.join("Header"),
            format!(
                "level {lev}: the MultiFab path {:?} leaves the plotfile directory",
                l.mf_path
            ),
        ));
    }
    let prefix = dir.join(&l.mf_path);
    let (h, mf) = read_multifab_layout(&prefix, Some(header.space_dim), layout)?;
    if h.ncomp != header.var_names.len() || h.boxes.len() != l.grids.len() {
        return Err(invalid(
            &with_suffix(&prefix, "_H"),
            format!(
                "{} components over {} boxes, but the Header lists {} variables and {} boxes",
                h.ncomp,
                h.boxes.len(),
                header.var_names.len(),
                l.grids.len()
            ),
        ));
    }
    Ok((h, mf))
}

/// The dimension of the boxes in a `_H` text: the number of integers in the first
/// `IntVect` of the BoxArray (3 when there are no boxes).
fn detect_dim(text: &str) -> usize {
    let Some(start) = text.find("((") else {
        return 3;
    };
    let rest = &text[start + 2..];
    let end = rest.find(')').unwrap_or(rest.len());
    (rest[..end].matches(',').count() + 1).clamp(1, 3)
}

/// Reads a MultiFab written by AMReX's `VisMF::Write` (`<prefix>_H` and its FAB files),
/// ghost cells included, into a host [`MultiFab`] on one rank.
///
/// # Errors
/// [`PlotfileError::Io`], [`PlotfileError::Parse`] (headers, FAB headers), or
/// [`PlotfileError::Invalid`] when a FAB's box or component count is not the header's,
/// or a file is too short.
pub fn read_multifab(prefix: impl AsRef<Path>) -> Result<(VisMfHeader, MultiFab), PlotfileError> {
    read_multifab_layout(prefix.as_ref(), None, Layout::Single)
}

/// [`read_multifab`] on every rank of `comm`, each rank reading its own FABs (AMReX's
/// default map of the file's BoxArray onto `comm`). **Collective** over `comm`.
///
/// # Errors
/// As [`read_multifab`], on every rank.
pub fn read_multifab_on(
    prefix: impl AsRef<Path>,
    comm: &Communicator,
) -> Result<(VisMfHeader, MultiFab), PlotfileError> {
    read_multifab_layout(prefix.as_ref(), None, Layout::On(comm))
}

/// [`read_multifab`] into the map `dm` (a restart onto a layout you already have): each
/// rank of `dm`'s communicator reads the FABs `dm` gives it. **Collective** over
/// `dm.communicator()`; every rank must pass the same map (checked).
///
/// # Errors
/// As [`read_level_with`].
pub fn read_multifab_with(
    prefix: impl AsRef<Path>,
    dm: &DistributionMapping,
) -> Result<(VisMfHeader, MultiFab), PlotfileError> {
    read_multifab_layout(prefix.as_ref(), None, Layout::Map(dm))
}

fn read_multifab_layout(
    prefix: &Path,
    dim: Option<usize>,
    layout: Layout<'_>,
) -> Result<(VisMfHeader, MultiFab), PlotfileError> {
    let comm = layout.comm();
    let text = parallel::read_text_on(&comm, &with_suffix(prefix, "_H"))?;
    let dim = dim.unwrap_or_else(|| detect_dim(&text));
    // From here to `read_local_fabs`, every step depends only on the broadcast text and
    // the layout, so every rank returns the same early error.
    let hpath = with_suffix(prefix, "_H");
    let h = VisMfHeader::parse_text(&text, dim).map_err(parse_err(&hpath))?;
    let ba = BoxArray::try_new(h.boxes.clone()).map_err(|e| invalid(&hpath, e.to_string()))?;
    ba.check_ghost(h.ngrow)
        .map_err(|e| invalid(&hpath, format!("ghost width {}: {e}", h.ngrow)))?;
    let dm = match layout {
        Layout::Single => DistributionMapping::single(&ba),
        Layout::On(c) => DistributionMapping::on(&ba, c),
        Layout::Map(dm) => {
            let mut hash = parallel::Fnv::new();
            hash.u64(dm.nranks() as u64).u64(dm.len() as u64);
            for &r in dm.pmap() {
                hash.u64(u64::from(r));
            }
            comm.check_same(
                "the DistributionMapping passed to the plotfile reader",
                hash.finish(),
            )
            .map_err(PlotfileError::Comm)?;
            if dm.len() != ba.len() {
                return Err(PlotfileError::Argument(format!(
                    "{}: the DistributionMapping maps {} boxes, but the file has {}",
                    hpath.display(),
                    dm.len(),
                    ba.len()
                )));
            }
            dm.clone()
        }
    };
    let local = read_local_fabs(prefix, &h, &ba, &dm, dim);
    let mf = parallel::agree(&comm, local)?;
    Ok((h, mf))
}

/// This process's part of a MultiFab on disk: the FABs `dm` gives it (all of them for a
/// single-process map). Not collective; the caller agrees on the result.
fn read_local_fabs(
    prefix: &Path,
    h: &VisMfHeader,
    ba: &BoxArray,
    dm: &DistributionMapping,
    dim: usize,
) -> Result<MultiFab, PlotfileError> {
    let dir = prefix.parent().unwrap_or(Path::new("."));
    // The rank `FabArray::new` allocates for (a map made for inspection: rank 0).
    let me = dm.my_rank();
    let mine = dm.local_indices(me);
    // Open every data file this rank needs and check, before allocating anything, that
    // the bytes its FABs need are there: each FAB's data lies inside its file. The
    // MultiFab then costs at most twice the files' size (f32 data read as f64), whatever
    // the headers claim.
    let mut files: Vec<(String, BufReader<File>, u64)> = Vec::new();
    let mut fab_file = alloc::vec![usize::MAX; h.fabs.len()];
    // Bytes per value: known from the header (versions >= 2), else at least 4 (the FAB
    // header of version 1 says; f32 is the smallest AMReX writes).
    let min_bytes = h.real_descriptor.map_or(4, |rd| rd.bytes) as u64;
    // Validated boxes: fits u64; the multiplication by ncomp may not.
    let need = |g: usize| {
        let cells = ba.get(g).grow_iv(h.ngrow).num_pts();
        let end = cells
            .checked_mul(h.ncomp as u64)
            .and_then(|n| n.checked_mul(min_bytes))
            .and_then(|n| n.checked_add(h.fabs[g].offset));
        (cells, end)
    };
    for &g in &mine {
        let fod = &h.fabs[g];
        let fi = match files.iter().position(|(n, ..)| *n == fod.file) {
            Some(i) => i,
            None => {
                let path = dir.join(&fod.file);
                let f = File::open(&path).map_err(io_err(&path))?;
                let len = f.metadata().map_err(io_err(&path))?.len();
                files.push((fod.file.clone(), BufReader::new(f), len));
                files.len() - 1
            }
        };
        fab_file[g] = fi;
        let flen = files[fi].2;
        match need(g) {
            (_, Some(end)) if end <= flen => {}
            (cells, _) => {
                return Err(invalid(
                    &dir.join(&fod.file),
                    format!(
                        "FAB {g} needs {} values of at least {min_bytes} bytes from byte {}, \
                         but the file has {flen} bytes",
                        u128::from(cells) * h.ncomp as u128,
                        fod.offset
                    ),
                ));
            }
        }
    }
    // No two FABs share bytes: checked over every FAB of the file (the headers alone
    // say where each lies), so every rank finds the same overlap. A FAB whose end
    // overflows is its owner's error, above.
    let mut ranges: Vec<(&str, u64, u64, usize)> = (0..h.fabs.len())
        .filter_map(|g| {
            need(g)
                .1
                .map(|end| (h.fabs[g].file.as_str(), h.fabs[g].offset, end, g))
        })
        .collect();
    ranges.sort_unstable();
    for w in ranges.windows(2) {
        let ((fa, _, ea, ga), (fb, sb, _, gb)) = (w[0], w[1]);
        if fa == fb && sb < ea {
            return Err(invalid(
                &dir.join(fa),
                format!("FABs {ga} and {gb} claim the same bytes (from byte {sb})"),
            ));
        }
    }
    let mut mf = MultiFab::new(ba, dm, h.ncomp, h.ngrow);
    let mut bytes = Vec::new();
    for &g in &mine {
        let fod = &h.fabs[g];
        let path = dir.join(&fod.file);
        let r = &mut files[fab_file[g]].1;
        r.seek(SeekFrom::Start(fod.offset)).map_err(io_err(&path))?;
        let fabbox = ba.get(g).grow_iv(h.ngrow);
        let rd = if let Some(rd) = h.real_descriptor {
            rd
        } else {
            let mut line = Vec::new();
            r.by_ref()
                .take(4096)
                .read_until(b'\n', &mut line)
                .map_err(io_err(&path))?;
            let line = String::from_utf8_lossy(&line);
            let (rd, bx, nc) =
                vismf::parse_fab_header(&line, dim).map_err(|e| PlotfileError::Parse {
                    path: path.clone(),
                    line: 1,
                    what: format!("{} (FAB {g} at byte {})", e.what, fod.offset),
                })?;
            if bx != fabbox || nc != h.ncomp {
                return Err(invalid(
                    &path,
                    format!(
                        "FAB {g} at byte {} covers {bx} with {nc} components; the header \
                         says {fabbox} with {}",
                        fod.offset, h.ncomp
                    ),
                ));
            }
            rd
        };
        let l = mf
            .local_index(g)
            .ok_or_else(|| invalid(&path, format!("FAB {g} is not this rank's")))?;
        let out = mf
            .fab_mut(l)
            .as_mut_slice()
            .map_err(|e| invalid(&path, format!("FAB {g}: {e}")))?;
        bytes.resize(out.len() * rd.bytes, 0);
        r.read_exact(&mut bytes).map_err(|e| {
            invalid(
                &path,
                format!(
                    "FAB {g} at byte {}: {} bytes of data: {e}",
                    fod.offset,
                    bytes.len()
                ),
            )
        })?;
        rd.decode(&bytes, out);
    }
    Ok(mf)
}

/// The communicator a write is collective over: the first FabArray's, when its map
/// spans that communicator; otherwise the single process (a FabArray on a map made for
/// inspection, which [`check_layout`] accepts only when every box is here).
fn write_comm<A: HostAccessible>(mfs: &[&FabArray<f64, A>]) -> Communicator {
    match mfs.first() {
        Some(mf) if mf.distribution_map().is_distributed_over_comm() => mf.communicator().clone(),
        _ => Communicator::single(),
    }
}

/// Whether this process can write its part of `mf` in a write collective over `comm`:
/// its map spans `comm` and it holds this rank's boxes, or (one process) it holds every
/// box.
fn check_layout<A: HostAccessible>(
    mf: &FabArray<f64, A>,
    comm: &Communicator,
    what: &str,
) -> Result<(), PlotfileError> {
    let dm = mf.distribution_map();
    let on_comm = dm.is_distributed_over_comm() && dm.communicator() == comm;
    if on_comm && mf.rank() == comm.rank() {
        return Ok(());
    }
    if comm.size() == 1 && mf.local_size() == mf.box_array().len() {
        return Ok(());
    }
    Err(PlotfileError::Argument(if on_comm || comm.size() == 1 {
        format!(
            "{what}: this FabArray holds rank {}'s boxes ({} of {}), but this process is \
             rank {} of {}; writing needs every box here (single process) or this rank's \
             boxes on a map over the writing communicator",
            mf.rank(),
            mf.local_size(),
            mf.box_array().len(),
            comm.rank(),
            comm.size()
        )
    } else {
        format!(
            "{what}: its DistributionMapping is not over the communicator of level 0 \
             (every level must be on one communicator)"
        )
    }))
}

/// Hashes what every rank must pass alike: one FabArray's layout.
fn hash_layout<A: HostAccessible>(h: &mut parallel::Fnv, mf: &FabArray<f64, A>) {
    let ba = mf.box_array();
    h.u64(mf.ncomp() as u64)
        .str(&format!("{:?}", mf.n_grow()))
        .u64(ba.len() as u64);
    for b in ba.boxes() {
        h.str(&format!("{b:?}"));
    }
    for &r in mf.distribution_map().pmap() {
        h.u64(u64::from(r));
    }
}

/// Writes this rank's FABs of `mf` over their boxes grown by `ngrow` into its data file
/// `<prefix>_D_<file>` (AMReX's `NFilesIter`: the ranks sharing a file append to it in
/// turn, a barrier between turns). **Collective** over `comm` when ranks share files
/// (the barriers are taken whatever happens here); errors are this rank's.
fn write_local<A: HostAccessible>(
    mf: &FabArray<f64, A>,
    prefix: &Path,
    ngrow: IntVect,
    comm: &Communicator,
    nfiles: usize,
) -> Result<parallel::LocalPart, PlotfileError> {
    let (file, turn, turns) = parallel::file_group(comm.rank(), comm.size(), nfiles);
    let mut out = Err(PlotfileError::Argument(String::from("no turn to write")));
    for t in 0..turns {
        if t == turn {
            out = write_my_fabs(mf, prefix, ngrow, file, t > 0);
        }
        if turns > 1 {
            comm.barrier();
        }
    }
    out
}

fn data_file_name(prefix: &Path, file: usize) -> String {
    format!(
        "{}_D_{file:05}",
        prefix
            .file_name()
            .map_or_else(|| "Cell".into(), |n| n.to_string_lossy())
    )
}

fn write_my_fabs<A: HostAccessible>(
    mf: &FabArray<f64, A>,
    prefix: &Path,
    ngrow: IntVect,
    file: usize,
    append: bool,
) -> Result<parallel::LocalPart, PlotfileError> {
    let ba = mf.box_array();
    let dpath = with_suffix(prefix, &format!("_D_{file:05}"));
    let f = if append {
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&dpath)
    } else {
        File::create(&dpath)
    }
    .map_err(io_err(&dpath))?;
    let mut offset = if append {
        f.metadata().map_err(io_err(&dpath))?.len()
    } else {
        0
    };
    let mut w = BufWriter::with_capacity(1 << 20, f);
    let rd = RealDescriptor::NATIVE_F64;
    let nc = mf.ncomp();
    let mut part = parallel::LocalPart {
        file,
        fabs: Vec::with_capacity(mf.local_size()),
    };
    // Local boxes in increasing global order: on one process, every box in order.
    for l in 0..mf.local_size() {
        let g = mf.global_index(l);
        let vbx = ba.get(g);
        let region = vbx.grow_iv(ngrow);
        let fab = mf.fab(l);
        let head = vismf::fab_header(rd, &region, nc, 3);
        w.write_all(head.as_bytes()).map_err(io_err(&dpath))?;
        let mut len = head.len() as u64;
        let whole = fab.index_box() == region && fab.is_contiguous();
        if whole {
            let data = fab
                .as_slice()
                .map_err(|e| invalid(&dpath, format!("box {g}: {e}")))?;
            w.write_all(bytemuck::cast_slice(data))
                .map_err(io_err(&dpath))?;
            len += (data.len() * 8) as u64;
        } else {
            let a = fab
                .array()
                .map_err(|e| invalid(&dpath, format!("box {g}: {e}")))?;
            let x0 = (region.lo()[0] - a.begin()[0]) as usize;
            let nx = region.length_dir(0) as usize;
            for n in 0..nc {
                for k in region.lo()[2]..=region.hi()[2] {
                    for j in region.lo()[1]..=region.hi()[1] {
                        let row = &a.row(j, k, n)[x0..x0 + nx];
                        w.write_all(bytemuck::cast_slice(row))
                            .map_err(io_err(&dpath))?;
                    }
                }
            }
            len += (region.num_pts() * nc as u64) * 8;
        }
        // Minima and maxima over the valid box, from the rank that owns it.
        let minmax = |max: bool| {
            (0..nc)
                .map(|n| {
                    let r = if max {
                        fab.max(n..=n, vbx)
                    } else {
                        fab.min(n..=n, vbx)
                    };
                    r.map_err(|e| invalid(&dpath, format!("box {g}: {e}")))
                })
                .collect::<Result<Vec<f64>, _>>()
        };
        part.fabs.push(parallel::BoxRecord {
            g,
            offset,
            min: minmax(false)?,
            max: minmax(true)?,
        });
        offset += len;
    }
    w.flush().map_err(io_err(&dpath))?;
    // Closed before the next turn's rank opens the file (close-to-open consistency).
    drop(w);
    Ok(part)
}

/// **Collective.** Every rank's [`parallel::LocalPart`] gathered on every rank and put
/// in global box order: the VisMF header (version 1, `NFiles`, minima and maxima over
/// the valid boxes), the same on every rank.
fn assemble_header<A: HostAccessible>(
    mf: &FabArray<f64, A>,
    prefix: &Path,
    ngrow: IntVect,
    comm: &Communicator,
    part: &parallel::LocalPart,
) -> Result<VisMfHeader, PlotfileError> {
    let ba = mf.box_array();
    let nc = mf.ncomp();
    let hpath = with_suffix(prefix, "_H");
    let all = comm
        .all_gather_bytes(&part.encode(nc))
        .map_err(PlotfileError::Comm)?;
    let mut slots: Vec<Option<(usize, parallel::BoxRecord)>> =
        (0..ba.len()).map(|_| None).collect();
    // Every rank decodes the same bytes, so every rank finds the same error, if any.
    for (rank, bytes) in all.iter().enumerate() {
        let p = parallel::LocalPart::decode(bytes, nc)
            .ok_or_else(|| invalid(&hpath, format!("rank {rank}'s box records do not parse")))?;
        for b in p.fabs {
            let g = b.g;
            match slots.get_mut(g) {
                Some(s @ None) => *s = Some((p.file, b)),
                _ => {
                    return Err(invalid(
                        &hpath,
                        format!("rank {rank} wrote box {g}, which is not its to write"),
                    ));
                }
            }
        }
    }
    let mut fabs = Vec::with_capacity(ba.len());
    let (mut mins, mut maxs) = (Vec::with_capacity(ba.len()), Vec::with_capacity(ba.len()));
    for (g, s) in slots.into_iter().enumerate() {
        let (file, b) = s.ok_or_else(|| invalid(&hpath, format!("no rank wrote box {g}")))?;
        fabs.push(FabOnDisk {
            file: data_file_name(prefix, file),
            offset: b.offset,
        });
        mins.push(b.min);
        maxs.push(b.max);
    }
    Ok(VisMfHeader {
        version: 1,
        how: 1,
        ncomp: nc,
        ngrow,
        boxes: ba.boxes().to_vec(),
        fabs,
        min: mins,
        max: maxs,
        fa_min: Vec::new(),
        fa_max: Vec::new(),
        real_descriptor: None,
    })
}

fn write_text(path: &Path, text: &str) -> Result<(), PlotfileError> {
    std::fs::write(path, text).map_err(io_err(path))
}

/// Runs `f` on rank 0 only; the others succeed.
fn on_root(
    comm: &Communicator,
    f: impl FnOnce() -> Result<(), PlotfileError>,
) -> Result<(), PlotfileError> {
    if comm.rank() == 0 { f() } else { Ok(()) }
}

/// Writes `mf` (ghost cells included) as AMReX's `VisMF::Write` does: `<prefix>_H` and
/// `<prefix>_D_00000` (native doubles, version 1 header). The directory of `prefix`
/// must exist.
///
/// On many ranks (a FabArray whose map spans its communicator) this is **collective**:
/// every rank writes its own FABs to `<prefix>_D_<file>` (one file per rank, at most
/// [`nfiles`] files), rank 0 gathers their offsets, minima and maxima and writes
/// `<prefix>_H`, and every rank returns the same header.
///
/// # Errors
/// [`PlotfileError::Io`], or [`PlotfileError::Argument`] when boxes are held by other
/// ranks of no communicator. On many ranks an error on one rank is an error on every
/// rank ([`PlotfileError::OtherRank`] on the others).
pub fn write_multifab<A: HostAccessible>(
    mf: &FabArray<f64, A>,
    prefix: impl AsRef<Path>,
) -> Result<VisMfHeader, PlotfileError> {
    let prefix = prefix.as_ref();
    let comm = write_comm(&[mf]);
    let nf = nfiles();
    let checked = check_layout(mf, &comm, "write_multifab");
    let mut hash = parallel::Fnv::new();
    hash.str(&prefix.to_string_lossy()).u64(nf as u64);
    hash_layout(&mut hash, mf);
    comm.check_same(
        "write_multifab's arguments (prefix, nfiles, layout)",
        hash.finish(),
    )
    .map_err(PlotfileError::Comm)?;
    parallel::agree(&comm, checked)?;
    let part = write_local(mf, prefix, mf.n_grow(), &comm, nf);
    let part = parallel::agree(&comm, part)?;
    let h = assemble_header(mf, prefix, mf.n_grow(), &comm, &part)?;
    let written = on_root(&comm, || {
        write_text(&with_suffix(prefix, "_H"), &h.to_text(3))
    });
    parallel::agree(&comm, written)?;
    Ok(h)
}

/// AMReX's `WriteSingleLevelPlotfile(dir, mf, var_names, geom, time, step)`: the valid
/// cells of `mf` (ghost cells are not written) with one name per component. Its boxes
/// must lie in `geom.domain` and not overlap.
///
/// # Errors
/// As [`write_multi_level_plotfile`].
pub fn write_single_level_plotfile<A: HostAccessible, S: AsRef<str>>(
    dir: impl AsRef<Path>,
    mf: &FabArray<f64, A>,
    var_names: &[S],
    geom: &Geometry,
    time: f64,
    step: i64,
) -> Result<(), PlotfileError> {
    write_multi_level_plotfile(dir, &[mf], var_names, &[*geom], time, &[step], &[])
}

/// The argument checks of [`write_multi_level_plotfile`], before anything is created.
fn check_plot_args<A: HostAccessible>(
    mfs: &[&FabArray<f64, A>],
    names: &[String],
    geoms: &[Geometry],
    steps: &[i64],
    ref_ratio: &[IntVect],
    comm: &Communicator,
) -> Result<(), PlotfileError> {
    let nlev = mfs.len();
    if nlev == 0 || geoms.len() != nlev || steps.len() != nlev || ref_ratio.len() + 1 < nlev {
        return Err(PlotfileError::Argument(format!(
            "{nlev} levels need as many geometries ({}) and steps ({}) and {} refinement \
             ratios ({})",
            geoms.len(),
            steps.len(),
            nlev.saturating_sub(1),
            ref_ratio.len()
        )));
    }
    if let Some(bad) = names
        .iter()
        .find(|n| n.is_empty() || n.contains(char::is_whitespace))
    {
        return Err(PlotfileError::Argument(format!(
            "variable name {bad:?} is empty or contains whitespace"
        )));
    }
    for (lev, mf) in mfs.iter().enumerate() {
        if mf.ncomp() != names.len() {
            return Err(PlotfileError::Argument(format!(
                "level {lev} has {} components but {} names were given",
                mf.ncomp(),
                names.len()
            )));
        }
    }
    for (lev, mf) in mfs.iter().enumerate() {
        check_layout(mf, comm, &format!("level {lev}"))?;
    }
    let bas: Vec<&BoxArray> = mfs.iter().map(|mf| mf.box_array()).collect();
    nesting::check_hierarchy(&bas, geoms, ref_ratio)
}

/// AMReX's `WriteMultiLevelPlotfile`: level `l` is `mfs[l]` on `geoms[l]` at step
/// `steps[l]`, refined from level `l - 1` by `ref_ratio[l - 1]` (the Header records
/// its `x` component, as AMReX does). Creates `dir` and `dir/Level_<l>`; existing files
/// of the same names are overwritten.
///
/// The hierarchy is checked before anything is created, so a file that yt or AMReX
/// would misread is never written: every level's domain is the coarser level's refined
/// by the ratio, every level shares level 0's physical domain and coordinate system,
/// every box lies in its level's domain, no two boxes of a level share a cell, and every
/// box of level `l`, coarsened by `ref_ratio[l - 1]`, is covered by level `l - 1`'s
/// boxes (the containment that AMReX's proper nesting requires at least).
///
/// # Many ranks
///
/// When the levels' maps span their communicator (`DistributionMapping::new` under
/// `mpirun`), the write is **collective**: every rank passes the same arguments
/// (checked: a difference is [`PlotfileError::Comm`] on every rank); rank 0 creates the
/// directories; every rank writes its own FABs to `Level_<l>/Cell_D_<file>` (file =
/// rank while there are at most [`nfiles`] ranks, as AMReX's `NFilesIter` numbers them);
/// rank 0 gathers each FAB's file, offset, minima and maxima and writes every `Cell_H`
/// and the `Header`. The values read back are the single-process file's. Every rank
/// returns the same outcome: an error on one rank is returned there and as
/// [`PlotfileError::OtherRank`] on the others, never a hang.
///
/// # Errors
/// [`PlotfileError::Argument`] when the counts of levels, geometries, steps and ratios
/// disagree, a level has another number of components than there are names, a name is
/// empty or contains whitespace, or boxes are held by other ranks;
/// [`PlotfileError::RefRatioNotPositive`], [`PlotfileError::RefRatioMismatch`],
/// [`PlotfileError::ProbDomainMismatch`], [`PlotfileError::BoxOutsideDomain`],
/// [`PlotfileError::OverlappingBoxes`] or [`PlotfileError::NotProperlyNested`] for an
/// inconsistent hierarchy; [`PlotfileError::Io`] when a file cannot be written;
/// [`PlotfileError::OtherRank`] and [`PlotfileError::Comm`] on many ranks.
pub fn write_multi_level_plotfile<A: HostAccessible, S: AsRef<str>>(
    dir: impl AsRef<Path>,
    mfs: &[&FabArray<f64, A>],
    var_names: &[S],
    geoms: &[Geometry],
    time: f64,
    steps: &[i64],
    ref_ratio: &[IntVect],
) -> Result<(), PlotfileError> {
    let dir = dir.as_ref();
    let nlev = mfs.len();
    let names: Vec<String> = var_names.iter().map(|s| s.as_ref().to_string()).collect();
    let comm = write_comm(mfs);
    let nf = nfiles();
    let checked = check_plot_args(mfs, &names, geoms, steps, ref_ratio, &comm);
    // Ranks that disagree on the arguments would write a mix, or enter different
    // collectives: one all-reduce finds out first.
    let mut hash = parallel::Fnv::new();
    hash.str(&dir.to_string_lossy())
        .u64(nf as u64)
        .u64(time.to_bits())
        .str(&format!("{names:?}{geoms:?}{steps:?}{ref_ratio:?}"))
        .u64(nlev as u64);
    for mf in mfs {
        hash_layout(&mut hash, mf);
    }
    comm.check_same(
        "the plotfile writer's arguments (directory, nfiles, names, time, steps, geometries, \
         ratios, layouts)",
        hash.finish(),
    )
    .map_err(PlotfileError::Comm)?;
    parallel::agree(&comm, checked)?;
    let made = on_root(&comm, || {
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        for lev in 0..nlev {
            let ldir = dir.join(format!("Level_{lev}"));
            std::fs::create_dir_all(&ldir).map_err(io_err(&ldir))?;
        }
        Ok(())
    });
    // Also the barrier between rank 0's directories and the others' files.
    parallel::agree(&comm, made)?;
    let prefixes: Vec<PathBuf> = (0..nlev)
        .map(|lev| dir.join(format!("Level_{lev}")).join("Cell"))
        .collect();
    let mut parts = Vec::with_capacity(nlev);
    for (mf, prefix) in mfs.iter().zip(&prefixes) {
        let part = write_local(mf, prefix, IntVect::ZERO, &comm, nf);
        parts.push(parallel::agree(&comm, part)?);
    }
    let mut cell_headers = Vec::with_capacity(nlev);
    for ((mf, prefix), part) in mfs.iter().zip(&prefixes).zip(&parts) {
        cell_headers.push(assemble_header(mf, prefix, IntVect::ZERO, &comm, part)?);
    }
    let levels = mfs
        .iter()
        .enumerate()
        .map(|(lev, mf)| LevelHeader {
            level: lev,
            time,
            step: steps[lev],
            grids: mf
                .box_array()
                .boxes()
                .iter()
                .map(|b| geoms[lev].real_box(b))
                .collect(),
            mf_path: format!("Level_{lev}/Cell"),
        })
        .collect();
    let header = PlotfileHeader {
        version: PLOTFILE_VERSION.to_string(),
        var_names: names,
        space_dim: 3,
        time,
        finest_level: nlev - 1,
        prob_lo: geoms[0].prob_lo,
        prob_hi: geoms[0].prob_hi,
        ref_ratio: ref_ratio[..nlev - 1].iter().map(|r| r[0]).collect(),
        domains: geoms.iter().map(|g| g.domain).collect(),
        level_steps: steps.to_vec(),
        cell_sizes: geoms.iter().map(Geometry::cell_size).collect(),
        coord_sys: geoms[0].coord_sys,
        bwidth: 0,
        levels,
    };
    let written = on_root(&comm, || {
        for (prefix, h) in prefixes.iter().zip(&cell_headers) {
            write_text(&with_suffix(prefix, "_H"), &h.to_text(3))?;
        }
        write_text(&dir.join("Header"), &header.to_string())
    });
    parallel::agree(&comm, written)
}
