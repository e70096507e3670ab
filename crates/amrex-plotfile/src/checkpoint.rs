//! Checkpoints as AMReX's AMR codes write them (`WriteCheckpointFile` of the
//! `Advection_AmrCore` tutorial and the codes built on it): a directory with a text
//! `Header` and each level's MultiFabs in AMReX's native VisMF format.
//!
//! ```text
//! chk00020/Header              title line, finest level, the caller's lines (the tutorial:
//!                              steps, dt and t_new per level), each level's BoxArray
//! chk00020/Level_0/phi_H       VisMF header of level 0's `phi`
//! chk00020/Level_0/phi_D_00000 its FABs (one file per rank on many)
//! chk00020/Level_1/...
//! ```
//!
//! What goes in is the caller's choice, as in AMReX, where each code writes its own
//! `Header` lines and MultiFabs: [`CheckpointHeader`] holds the lines and the grids,
//! [`write_checkpoint`] writes it with any number of MultiFabs per level, and
//! [`read_checkpoint_header`] and [`read_checkpoint_multifab`] read them back onto any
//! number of ranks. A checkpoint is written in `<dir>.partial` and renamed once
//! complete (an existing `dir` is moved aside first), so a run killed while writing
//! never leaves a checkpoint that a restart would read half of.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt::Write as _;
use std::path::{Path, PathBuf};

use amrex_arena::HostAccessible;
use amrex_multifab::{BoxArray, DistributionMapping, FabArray, MultiFab};
use amrex_runtime::{Communicator, Fingerprint};

use crate::error::PlotfileError;
use crate::fs::{confined, make_staging, publish, read_text, staging_path, write_text};
use crate::parallel::{self, read_text_on};
use crate::text::{Cursor, fmt_box, fmt_g};
use crate::write::write_multifab;

/// The most levels a checkpoint `Header` may name (a bound on what a corrupt file makes
/// the reader allocate; AMReX codes run with far fewer).
pub const MAX_CHECKPOINT_LEVELS: usize = 128;

/// A checkpoint's `Header`: a title line, the finest level, the caller's lines, and
/// each level's grids (AMReX's `BoxArray::writeOn`, level 0 first).
///
/// The tutorial's header is
///
/// ```text
/// Checkpoint file for AmrCoreAdv
/// 2                     <- finest level
/// 20 40 80              <- istep per level (each number followed by a space)
/// 0.0115... 0.0057...   <- dt per level, 17 significant digits
/// 0.2230... 0.2230...   <- t_new per level
/// (16 0                 <- level 0's BoxArray, then level 1's, ...
/// ((0,0,0) (15,15,7) (0,0,0))
/// ...
/// )
/// ```
///
/// which [`with_ints`](Self::with_ints) and [`with_reals`](Self::with_reals) build
/// line by line and [`ints`](Self::ints) and [`reals`](Self::reals) read back.
///
/// ```
/// use amrex_plotfile::CheckpointHeader;
/// use amrex_multifab::{BoxArray, IndexBox, IntVect};
///
/// let ba = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::splat(15)), 8);
/// let h = CheckpointHeader::new("Checkpoint file for AmrCoreAdv", vec![ba.clone()])
///     .with_ints([20])
///     .with_reals([0.1]);
/// let text = h.to_text();
/// assert!(text.starts_with("Checkpoint file for AmrCoreAdv\n0\n20 \n0.10000000000000001 \n(8 0\n"));
/// let back = CheckpointHeader::parse(&text)?;
/// assert_eq!((back.ints(0)?, back.reals(1)?), (vec![20], vec![0.1]));
/// assert_eq!(back.grids, [ba]);
/// # Ok::<(), amrex_plotfile::PlotfileError>(())
/// ```
#[derive(Clone, Debug)]
pub struct CheckpointHeader {
    /// The first line.
    pub title: String,
    /// The lines between the finest level and the grids, each as written (without its
    /// newline).
    pub lines: Vec<String>,
    /// Each level's grids, level 0 first: the finest level is `grids.len() - 1`.
    pub grids: Vec<BoxArray>,
    /// The file it was read from, for the errors of [`ints`](Self::ints) and
    /// [`reals`](Self::reals).
    path: PathBuf,
}

/// Equal when the title, the lines and the grids are (wherever each was read from).
impl PartialEq for CheckpointHeader {
    fn eq(&self, o: &Self) -> bool {
        self.title == o.title && self.lines == o.lines && self.grids == o.grids
    }
}

impl CheckpointHeader {
    /// A header with `title` and `grids` and no lines.
    #[must_use]
    pub fn new(title: impl Into<String>, grids: Vec<BoxArray>) -> Self {
        Self {
            title: title.into(),
            lines: Vec::new(),
            grids,
            path: PathBuf::from("Header"),
        }
    }

    /// Adds a line of integers, each followed by a space (as AMReX's codes write them).
    #[must_use]
    pub fn with_ints(mut self, values: impl IntoIterator<Item = i64>) -> Self {
        let mut line = String::new();
        for v in values {
            let _ = write!(line, "{v} ");
        }
        self.lines.push(line);
        self
    }

    /// Adds a line of reals, each with 17 significant digits (C++'s `precision(17)`,
    /// which reads back to the same double) and followed by a space.
    #[must_use]
    pub fn with_reals(mut self, values: impl IntoIterator<Item = f64>) -> Self {
        let mut line = String::new();
        for v in values {
            let _ = write!(line, "{} ", fmt_g(v, 17));
        }
        self.lines.push(line);
        self
    }

    /// The finest level (`grids.len() - 1`; 0 when there are no grids).
    #[must_use]
    pub fn finest_level(&self) -> usize {
        self.grids.len().saturating_sub(1)
    }

    /// The words of line `i` (0 is the first line after the finest level).
    fn words(&self, i: usize) -> Result<Vec<&str>, PlotfileError> {
        match self.lines.get(i) {
            Some(l) => Ok(l.split_whitespace().collect()),
            None => Err(self.parse_error(
                i,
                format!(
                    "line {i} of the caller's lines, found {} lines",
                    self.lines.len()
                ),
            )),
        }
    }

    fn parse_error(&self, i: usize, what: String) -> PlotfileError {
        PlotfileError::Parse {
            path: self.path.clone(),
            // Title, finest level, then the lines.
            line: i + 3,
            what,
        }
    }

    /// Line `i` as integers (the tutorial's `istep` is line 0).
    ///
    /// # Errors
    /// [`PlotfileError::Parse`] naming the line if there is no line `i` or a word is not
    /// an integer.
    pub fn ints(&self, i: usize) -> Result<Vec<i64>, PlotfileError> {
        self.words(i)?
            .into_iter()
            .map(|w| {
                w.parse()
                    .map_err(|_| self.parse_error(i, format!("an integer, found {w:?}")))
            })
            .collect()
    }

    /// Line `i` as reals (the tutorial's `dt` is line 1, `t_new` line 2).
    ///
    /// # Errors
    /// [`PlotfileError::Parse`] naming the line if there is no line `i` or a word is not
    /// a finite real.
    pub fn reals(&self, i: usize) -> Result<Vec<f64>, PlotfileError> {
        self.words(i)?
            .into_iter()
            .map(|w| match w.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(v),
                _ => Err(self.parse_error(i, format!("a finite real, found {w:?}"))),
            })
            .collect()
    }

    /// The text of the `Header`, byte for byte what AMReX's tutorial writes for the
    /// same lines and grids.
    #[must_use]
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{}", self.title);
        let _ = writeln!(s, "{}", self.finest_level());
        for l in &self.lines {
            let _ = writeln!(s, "{l}");
        }
        for ba in &self.grids {
            let _ = writeln!(s, "({} 0", ba.len());
            for b in ba.boxes() {
                let _ = writeln!(s, "{}", fmt_box(b, 3));
            }
            s.push_str(")\n");
        }
        s
    }

    /// Reads a `Header`'s text: the title line; the finest level alone on its line
    /// (at most [`MAX_CHECKPOINT_LEVELS`]` - 1`); every line up to the first that starts
    /// with `(`; then one BoxArray of non-empty, cell-centred boxes per level, and
    /// nothing after them.
    ///
    /// # Errors
    /// [`PlotfileError::Parse`] with the line where the text stops being a `Header`.
    pub fn parse(text: &str) -> Result<Self, PlotfileError> {
        Self::parse_at(text, Path::new("Header"))
    }

    fn parse_at(text: &str, path: &Path) -> Result<Self, PlotfileError> {
        let err = |e: crate::text::ParseError| PlotfileError::Parse {
            path: path.to_path_buf(),
            line: e.line,
            what: e.what,
        };
        let mut c = Cursor::new(text);
        let title = c.line().map_err(err)?.to_string();
        let finest_line = c.line().map_err(err)?;
        let finest: usize = match finest_line.trim().parse() {
            Ok(f) if f < MAX_CHECKPOINT_LEVELS => f,
            _ => {
                return Err(PlotfileError::Parse {
                    path: path.to_path_buf(),
                    line: 2,
                    what: format!(
                        "the finest level, an integer below {MAX_CHECKPOINT_LEVELS}, found {finest_line:?}"
                    ),
                });
            }
        };
        let mut lines = Vec::new();
        loop {
            let Some(next) = c.peek_line() else {
                return Err(err(c.error("level 0's BoxArray, found the end of the file")));
            };
            if next.trim_start().starts_with('(') {
                break;
            }
            lines.push(c.line().map_err(err)?.to_string());
        }
        let mut grids = Vec::with_capacity(finest + 1);
        for lev in 0..=finest {
            let what = format!("level {lev}'s BoxArray");
            // Every error of this level names it.
            let err = |e: crate::text::ParseError| {
                err(crate::text::ParseError {
                    line: e.line,
                    what: format!("{what}: {}", e.what),
                })
            };
            c.expect('(').map_err(err)?;
            let n: usize = c.int("its number of boxes").map_err(err)?;
            let _hash: i64 = c.int("the 0 after the count").map_err(err)?;
            let mut boxes = Vec::with_capacity(n.min(1 << 16));
            for i in 0..n {
                let b = c.index_box(3, &format!("box {i} of {n}")).map_err(err)?;
                if !b.ok() || !b.ix_type().cell_centered() {
                    return Err(err(
                        c.error(format!("a non-empty cell-centred box, found {b}"))
                    ));
                }
                boxes.push(b);
            }
            c.expect(')').map_err(err)?;
            if boxes.is_empty() {
                return Err(err(c.error("at least one box")));
            }
            grids.push(BoxArray::new(boxes));
        }
        if !c.at_end() {
            return Err(err(c.error(format!(
                "the end of the file after the {} BoxArrays",
                finest + 1
            ))));
        }
        Ok(Self {
            title,
            lines,
            grids,
            path: path.to_path_buf(),
        })
    }
}

/// `<dir>/Level_<lev>/<name>`, the VisMF prefix of a checkpointed MultiFab.
fn prefix(dir: &Path, lev: usize, name: &str) -> PathBuf {
    dir.join(format!("Level_{lev}")).join(name)
}

/// Writes a checkpoint: `<dir>/Header` from `header`, and for each `(name, levels)` of
/// `fields` the MultiFab `levels[l]` as `<dir>/Level_<l>/<name>_H` and
/// `<name>_D_<nnnnn>` (AMReX's `VisMF::Write`, ghost cells included), for every level of
/// `header.grids`, whose BoxArray it must have. The files are byte for byte what
/// AMReX's tutorial writes for the same data on one process.
///
/// The checkpoint is written in `<dir>.partial` and renamed to `dir` when every file is
/// complete; an existing `dir` is first moved aside to `<dir>.old.<unique>`, as AMReX's
/// `PreBuildDirectorHierarchy` moves it.
///
/// On many ranks (MultiFabs whose maps span their communicator) this is **collective**:
/// every rank passes the same arguments (checked), each writes its own FABs, rank 0 the
/// headers; an error on one rank is an error on every rank.
///
/// # Errors
/// [`PlotfileError::Argument`] if `header` has no grids, a name is not a plain file name
/// or repeats, a field has another number of levels than the header, or a MultiFab's
/// BoxArray is not its level's grids; [`PlotfileError::Io`] when a file cannot be
/// written; [`PlotfileError::Comm`] and [`PlotfileError::OtherRank`] on many ranks.
pub fn write_checkpoint<A: HostAccessible>(
    dir: impl AsRef<Path>,
    header: &CheckpointHeader,
    fields: &[(&str, &[&FabArray<f64, A>])],
) -> Result<(), PlotfileError> {
    let dir = dir.as_ref();
    let all: Vec<&FabArray<f64, A>> = fields.iter().flat_map(|(_, l)| l.iter().copied()).collect();
    let comm = crate::write::write_comm(&all);
    let checked = check_fields(header, fields);
    let mut hash = Fingerprint::new();
    hash.str(&dir.to_string_lossy()).str(&header.to_text());
    for (name, levels) in fields {
        hash.str(name).word(levels.len() as u64);
        for mf in *levels {
            mf.hash_operand(&mut hash);
        }
    }
    let comm = comm
        .agree("write_checkpoint", &hash)
        .map_err(PlotfileError::Comm)?;
    parallel::agree(&comm, checked)?;
    let staging = parallel::agree(&comm, staging_path(dir))?;
    let nlev = header.grids.len();
    let root = comm.communicator().rank() == 0;
    let made = if root {
        make_staging(&staging, nlev)
    } else {
        Ok(())
    };
    parallel::agree(&comm, made)?;
    let written = if root {
        write_text(&staging.join("Header"), &header.to_text())
    } else {
        Ok(())
    };
    parallel::agree(&comm, written)?;
    for (name, levels) in fields {
        for (lev, mf) in levels.iter().enumerate() {
            write_multifab(*mf, prefix(&staging, lev, name))?;
        }
    }
    let published = if root {
        publish(&staging, dir).map(drop)
    } else {
        Ok(())
    };
    parallel::agree(&comm, published)
}

/// The argument checks of [`write_checkpoint`], on each rank.
fn check_fields<A: HostAccessible>(
    header: &CheckpointHeader,
    fields: &[(&str, &[&FabArray<f64, A>])],
) -> Result<(), PlotfileError> {
    let arg = |s: String| Err(PlotfileError::Argument(format!("write_checkpoint: {s}")));
    if header.grids.is_empty() {
        return arg("the header has no grids (a checkpoint has at least level 0)".into());
    }
    for (i, (name, levels)) in fields.iter().enumerate() {
        if !confined(name) || name.contains('/') {
            return arg(format!("{name:?} is not a plain file name"));
        }
        if fields[..i].iter().any(|(n, _)| n == name) {
            return arg(format!("{name:?} is given twice"));
        }
        if levels.len() != header.grids.len() {
            return arg(format!(
                "{name:?} has {} levels, the header's grids {}",
                levels.len(),
                header.grids.len()
            ));
        }
        for (lev, mf) in levels.iter().enumerate() {
            if mf.box_array() != &header.grids[lev] {
                return arg(format!(
                    "{name:?} on level {lev} is not on the header's grids of that level"
                ));
            }
        }
    }
    Ok(())
}

/// Reads `<dir>/Header` on this process.
///
/// # Errors
/// [`PlotfileError::Io`] if it cannot be read (a `dir` that does not exist);
/// [`PlotfileError::Parse`] as [`CheckpointHeader::parse`].
pub fn read_checkpoint_header(dir: impl AsRef<Path>) -> Result<CheckpointHeader, PlotfileError> {
    let path = dir.as_ref().join("Header");
    CheckpointHeader::parse_at(&read_text(&path)?, &path)
}

/// [`read_checkpoint_header`] on every rank of `comm`: rank 0 reads the file and sends
/// it to the others (AMReX's `ReadAndBcastFile`). **Collective**; rank 0's error is an
/// error on every rank.
///
/// # Errors
/// As [`read_checkpoint_header`], and [`PlotfileError::Comm`].
pub fn read_checkpoint_header_on(
    dir: impl AsRef<Path>,
    comm: &Communicator,
) -> Result<CheckpointHeader, PlotfileError> {
    let path = dir.as_ref().join("Header");
    let mut hash = Fingerprint::new();
    hash.str(&path.to_string_lossy());
    let agreed = comm
        .agree("read_checkpoint_header", &hash)
        .map_err(PlotfileError::Comm)?;
    let text = read_text_on(&agreed, &path)?;
    CheckpointHeader::parse_at(&text, &path)
}

/// Reads the MultiFab `name` of level `lev` (`<dir>/Level_<lev>/<name>_H` and its data)
/// into the map `dm` of the level's grids `ba` (from the `Header`), each rank of `dm`'s
/// communicator reading its own FABs: any map, so any number of ranks. **Collective**
/// over `dm`'s communicator.
///
/// # Errors
/// [`PlotfileError::Io`] for a missing level or file, [`PlotfileError::Parse`] and
/// [`PlotfileError::Invalid`] for a corrupt one (as
/// [`read_multifab_with`](crate::read_multifab_with)), [`PlotfileError::Invalid`] if its
/// boxes are not `ba`'s; on every rank alike.
pub fn read_checkpoint_multifab(
    dir: impl AsRef<Path>,
    lev: usize,
    name: &str,
    ba: &BoxArray,
    dm: &DistributionMapping,
) -> Result<MultiFab, PlotfileError> {
    let p = prefix(dir.as_ref(), lev, name);
    let (_, mf) = crate::read::read_multifab_with(&p, dm)?;
    if mf.box_array() != ba {
        return Err(crate::error::invalid(
            &crate::fs::with_suffix(&p, "_H"),
            format!(
                "its {} boxes are not the {} grids the Header gives level {lev}",
                mf.box_array().len(),
                ba.len()
            ),
        ));
    }
    Ok(mf)
}
