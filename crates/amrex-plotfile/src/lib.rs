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
//! default (version 1 headers, one `Cell_D_00000` per level, native doubles, valid cells
//! only), the `Header` and `Cell_H` formatted like AMReX's (numbers as C++ streams print
//! them).
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
//! None: the crate needs `std` (files) and always has it. Writing needs every box on this
//! process (a later MPI engine will write one file per rank group, as AMReX's `NFiles`
//! does).
//!
//! [`IndexBox::check_index_space`]: amrex_box::IndexBox::check_index_space
#![forbid(unsafe_code)]
#![doc(test(attr(deny(warnings))))]

extern crate alloc;

mod header;
mod nesting;
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

use amrex_multifab::{BoxArray, DistributionMapping, FabArray, MultiFab};

pub use header::{Geometry, LevelHeader, PLOTFILE_VERSION, PlotfileHeader};
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
        }
    }
}

impl core::error::Error for PlotfileError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
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

/// Reads a whole plotfile (every level into a [`MultiFab`] on the host).
///
/// # Errors
/// Any failure to read or parse a file, or data that disagree with the headers.
pub fn read_plotfile(dir: impl AsRef<Path>) -> Result<Plotfile, PlotfileError> {
    let dir = dir.as_ref();
    let header = read_plotfile_header(dir)?;
    let mut cell_headers = Vec::with_capacity(header.nlevels());
    let mut levels = Vec::with_capacity(header.nlevels());
    for lev in 0..header.nlevels() {
        let (h, mf) = read_level(dir, &header, lev)?;
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
    let dir = dir.as_ref();
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
    let (h, mf) = read_multifab_dim(&prefix, header.space_dim)?;
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
    let prefix = prefix.as_ref();
    let text = read_text(&with_suffix(prefix, "_H"))?;
    read_multifab_text(prefix, &text, detect_dim(&text))
}

fn read_multifab_dim(prefix: &Path, dim: usize) -> Result<(VisMfHeader, MultiFab), PlotfileError> {
    let text = read_text(&with_suffix(prefix, "_H"))?;
    read_multifab_text(prefix, &text, dim)
}

fn read_multifab_text(
    prefix: &Path,
    text: &str,
    dim: usize,
) -> Result<(VisMfHeader, MultiFab), PlotfileError> {
    let hpath = with_suffix(prefix, "_H");
    let h = VisMfHeader::parse_text(text, dim).map_err(parse_err(&hpath))?;
    let ba = BoxArray::try_new(h.boxes.clone()).map_err(|e| invalid(&hpath, e.to_string()))?;
    ba.check_ghost(h.ngrow)
        .map_err(|e| invalid(&hpath, format!("ghost width {}: {e}", h.ngrow)))?;
    let dir = prefix.parent().unwrap_or(Path::new("."));
    // Open every data file and check, before allocating anything, that the bytes the
    // FABs need are there: each FAB's data lies inside its file and no two FABs share
    // bytes. The MultiFab then costs at most twice the files' size (f32 data read as
    // f64), whatever the headers claim.
    let mut files: Vec<(String, BufReader<File>, u64)> = Vec::new();
    let mut fab_file = Vec::with_capacity(h.fabs.len());
    let mut ranges: Vec<(usize, u64, u64, usize)> = Vec::with_capacity(h.fabs.len());
    // Bytes per value: known from the header (versions >= 2), else at least 4 (the FAB
    // header of version 1 says; f32 is the smallest AMReX writes).
    let min_bytes = h.real_descriptor.map_or(4, |rd| rd.bytes) as u64;
    for (g, fod) in h.fabs.iter().enumerate() {
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
        fab_file.push(fi);
        // Validated boxes: fits u64; the multiplication by ncomp may not.
        let cells = ba.get(g).grow_iv(h.ngrow).num_pts();
        let need = cells
            .checked_mul(h.ncomp as u64)
            .and_then(|n| n.checked_mul(min_bytes))
            .and_then(|n| n.checked_add(fod.offset));
        let flen = files[fi].2;
        match need {
            Some(end) if end <= flen => ranges.push((fi, fod.offset, end, g)),
            _ => {
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
    ranges.sort_unstable();
    for w in ranges.windows(2) {
        let ((fa, _, ea, ga), (fb, sb, _, gb)) = (w[0], w[1]);
        if fa == fb && sb < ea {
            return Err(invalid(
                &dir.join(&files[fa].0),
                format!("FABs {ga} and {gb} claim the same bytes (from byte {sb})"),
            ));
        }
    }
    let dm = DistributionMapping::single(&ba);
    let mut mf = MultiFab::new(&ba, &dm, h.ncomp, h.ngrow);
    let mut bytes = Vec::new();
    for (g, fod) in h.fabs.iter().enumerate() {
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
        let l = mf.local_index(g).unwrap_or(g);
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
    Ok((h, mf))
}

/// Writes the FABs of `mf` over `region(g)` into `<prefix>_D_00000` and returns the
/// VisMF header (version 1, `NFiles`, minima and maxima over the valid boxes).
fn write_fabs<A: HostAccessible>(
    mf: &FabArray<f64, A>,
    prefix: &Path,
    ngrow: IntVect,
) -> Result<VisMfHeader, PlotfileError> {
    let ba = mf.box_array();
    if mf.local_size() != ba.len() {
        return Err(PlotfileError::Argument(format!(
            "rank {} holds {} of the {} boxes; writing needs every box here (single process)",
            mf.rank(),
            mf.local_size(),
            ba.len()
        )));
    }
    let name = format!(
        "{}_D_00000",
        prefix
            .file_name()
            .map_or_else(|| "Cell".into(), |n| n.to_string_lossy())
    );
    let dpath = with_suffix(prefix, "_D_00000");
    let file = File::create(&dpath).map_err(io_err(&dpath))?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    let rd = RealDescriptor::NATIVE_F64;
    let nc = mf.ncomp();
    let mut offset = 0u64;
    let mut fabs = Vec::with_capacity(ba.len());
    let (mut mins, mut maxs) = (Vec::with_capacity(ba.len()), Vec::with_capacity(ba.len()));
    for g in 0..ba.len() {
        let l = mf
            .local_index(g)
            .ok_or_else(|| PlotfileError::Argument(format!("box {g} is not local")))?;
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
        fabs.push(FabOnDisk {
            file: name.clone(),
            offset,
        });
        offset += len;
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
        mins.push(minmax(false)?);
        maxs.push(minmax(true)?);
    }
    w.flush().map_err(io_err(&dpath))?;
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

/// Writes `mf` (ghost cells included) as AMReX's `VisMF::Write` does: `<prefix>_H` and
/// `<prefix>_D_00000` (native doubles, version 1 header). The directory of `prefix`
/// must exist.
///
/// # Errors
/// [`PlotfileError::Io`], or [`PlotfileError::Argument`] when boxes are held by other
/// ranks.
pub fn write_multifab<A: HostAccessible>(
    mf: &FabArray<f64, A>,
    prefix: impl AsRef<Path>,
) -> Result<VisMfHeader, PlotfileError> {
    let prefix = prefix.as_ref();
    let h = write_fabs(mf, prefix, mf.n_grow())?;
    write_text(&with_suffix(prefix, "_H"), &h.to_text(3))?;
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
/// # Errors
/// [`PlotfileError::Argument`] when the counts of levels, geometries, steps and ratios
/// disagree, a level has another number of components than there are names, a name is
/// empty or contains whitespace, or boxes are held by other ranks;
/// [`PlotfileError::RefRatioNotPositive`], [`PlotfileError::RefRatioMismatch`],
/// [`PlotfileError::ProbDomainMismatch`], [`PlotfileError::BoxOutsideDomain`],
/// [`PlotfileError::OverlappingBoxes`] or [`PlotfileError::NotProperlyNested`] for an
/// inconsistent hierarchy; [`PlotfileError::Io`] when a file cannot be written.
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
    let names: Vec<String> = var_names.iter().map(|s| s.as_ref().to_string()).collect();
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
    let bas: Vec<&BoxArray> = mfs.iter().map(|mf| mf.box_array()).collect();
    nesting::check_hierarchy(&bas, geoms, ref_ratio)?;
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    let mut levels = Vec::with_capacity(nlev);
    for (lev, mf) in mfs.iter().enumerate() {
        let ldir = dir.join(format!("Level_{lev}"));
        std::fs::create_dir_all(&ldir).map_err(io_err(&ldir))?;
        let prefix = ldir.join("Cell");
        let h = write_fabs(mf, &prefix, IntVect::ZERO)?;
        write_text(&with_suffix(&prefix, "_H"), &h.to_text(3))?;
        levels.push(LevelHeader {
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
        });
    }
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
    write_text(&dir.join("Header"), &header.to_string())
}
