//! The reader: a plotfile's `Header`, its levels and any VisMF MultiFab, on one process
//! or collectively on many ranks (each rank reading only its own FABs).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use std::fs::File;
use std::path::Path;

use amrex_box::IndexBox;
use amrex_multifab::{BoxArray, DistributionMapping, MultiFab};
use amrex_runtime::{Communicator, Fingerprint};

use crate::error::{PlotfileError, header_err, invalid, io_err, parse_err};
use crate::fs::{confined, read_at_most, read_exact_at, read_text, with_suffix};
use crate::header::PlotfileHeader;
use crate::parallel;
use crate::vismf::{self, VisMfHeader};

impl PlotfileHeader {
    /// Parses the text of a `Header` file (errors name the file `Header`).
    ///
    /// # Errors
    /// [`PlotfileError::Parse`] with the line and what was expected;
    /// [`PlotfileError::BadGeometry`] if the coordinate system, the physical box or a
    /// level domain make no [`Geometry`](crate::Geometry).
    pub fn parse(text: &str) -> Result<Self, PlotfileError> {
        Self::parse_text(text).map_err(header_err(Path::new("Header")))
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
/// [`PlotfileError::Io`], [`PlotfileError::Parse`], or [`PlotfileError::BadGeometry`]
/// for numbers that make no [`Geometry`](crate::Geometry).
pub fn read_plotfile_header(dir: impl AsRef<Path>) -> Result<PlotfileHeader, PlotfileError> {
    let path = dir.as_ref().join("Header");
    let text = read_text(&path)?;
    PlotfileHeader::parse_text(&text).map_err(header_err(&path))
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
    let mut fp = Fingerprint::new();
    fp.str(&path.to_string_lossy());
    let agreed = comm
        .agree("read_plotfile_header", &fp)
        .map_err(PlotfileError::Comm)?;
    let text = parallel::read_text_on(&agreed, &path)?;
    PlotfileHeader::parse_text(&text).map_err(header_err(&path))
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
    // Ranks that are not all in this read (one called another collective, or reads
    // another file) find out here, every one of them, instead of waiting in mismatched
    // MPI calls.
    // The map passed, if any, is part of what they agree on.
    let mut op = Fingerprint::new();
    op.str(&prefix.to_string_lossy());
    if let Layout::Map(dm) = layout {
        op.word(dm.fingerprint());
    }
    let agreed = comm
        .agree("read_multifab", &op)
        .map_err(PlotfileError::Comm)?;
    let text = parallel::read_text_on(&agreed, &with_suffix(prefix, "_H"))?;
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
    let mf = parallel::agree(&agreed, local)?;
    Ok((h, mf))
}

/// Reads FAB `g` of `file` at byte `offset` into `out` (`fabbox` with `h.ncomp`
/// components): its header line first when the VisMF header has no real descriptor
/// (version 1), checked against the box and components `h` expects, then the values.
/// Native little-endian doubles land in `out` directly; other formats are decoded.
fn read_fab(
    file: &File,
    path: &Path,
    offset: u64,
    g: usize,
    (fabbox, h): (IndexBox, &VisMfHeader),
    dim: usize,
    out: &mut [f64],
) -> Result<(), PlotfileError> {
    let mut at = offset;
    let rd = if let Some(rd) = h.real_descriptor {
        rd
    } else {
        // The header line: at most 4096 bytes, up to its newline.
        let mut head = alloc::vec![0_u8; 4096];
        let n = read_at_most(file, &mut head, at).map_err(io_err(path))?;
        let end =
            head[..n]
                .iter()
                .position(|&b| b == b'\n')
                .ok_or_else(|| PlotfileError::Parse {
                    path: path.to_path_buf(),
                    line: 1,
                    what: format!("a FAB header line (FAB {g} at byte {offset}), found no newline"),
                })?;
        let line = String::from_utf8_lossy(&head[..=end]);
        let (rd, bx, nc) =
            vismf::parse_fab_header(&line, dim).map_err(|e| PlotfileError::Parse {
                path: path.to_path_buf(),
                line: 1,
                what: format!("{} (FAB {g} at byte {offset})", e.what),
            })?;
        if bx != fabbox || nc != h.ncomp {
            return Err(invalid(
                path,
                format!(
                    "FAB {g} at byte {offset} covers {bx} with {nc} components; the header \
                     says {fabbox} with {}",
                    h.ncomp
                ),
            ));
        }
        at += end as u64 + 1;
        rd
    };
    let nbytes = out.len() * rd.bytes;
    let short = |e: std::io::Error| {
        invalid(
            path,
            format!("FAB {g} at byte {offset}: {nbytes} bytes of data: {e}"),
        )
    };
    if rd.is_native_f64() {
        read_exact_at(file, bytemuck::cast_slice_mut(out), at).map_err(short)
    } else {
        let mut bytes = alloc::vec![0_u8; nbytes];
        read_exact_at(file, &mut bytes, at).map_err(short)?;
        rd.decode(&bytes, out);
        Ok(())
    }
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
    let mut files: Vec<(String, File, u64)> = Vec::new();
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
                files.push((fod.file.clone(), f, len));
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
    // Each FAB is read at its offset into its own memory, the FABs in parallel (the
    // files are read with positional reads, which share no cursor).
    // The FabArray holds this rank's FABs in the order of their global indices.
    debug_assert!(
        mine.iter()
            .enumerate()
            .all(|(l, &g)| mf.local_index(g) == Some(l))
    );
    let mut jobs: Vec<(
        usize,
        &mut amrex_multifab::BaseFab<'static, f64, amrex_multifab::HostArena>,
    )> = Vec::with_capacity(mine.len());
    for (l, fab) in mf.fabs_mut().enumerate() {
        jobs.push((mine[l], fab));
    }
    let results = amrex_runtime::threads::par_map_mut(&mut jobs, |(g, fab)| {
        let g = *g;
        let fod = &h.fabs[g];
        let path = dir.join(&fod.file);
        let fabbox = ba.get(g).grow_iv(h.ngrow);
        let out = fab
            .as_mut_slice()
            .map_err(|e| invalid(&path, format!("FAB {g}: {e}")))?;
        read_fab(
            &files[fab_file[g]].1,
            &path,
            fod.offset,
            g,
            (fabbox, h),
            dim,
            out,
        )
    });
    results.into_iter().collect::<Result<(), _>>()?;
    Ok(mf)
}
