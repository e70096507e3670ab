//! The writer: AMReX's `VisMF::Write`, `WriteSingleLevelPlotfile` and
//! `WriteMultiLevelPlotfile`, on one process or collectively on many ranks (each rank
//! writing its own FABs).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use std::path::{Path, PathBuf};

use amrex_arena::HostAccessible;
use amrex_box::IntVect;
use amrex_geometry::Geometry;
use amrex_multifab::{BoxArray, FabArray, FabError, Tiling};
use amrex_runtime::{Agreed, Communicator, Fingerprint};

use crate::error::{PlotfileError, invalid, io_err};
use crate::fs::{make_staging, publish, staging_path, with_suffix, write_all_at, write_text};
use crate::header::{LevelHeader, PLOTFILE_VERSION, PlotfileHeader};
use crate::nesting;
use crate::parallel::{self, nfiles};
use crate::vismf::{self, FabOnDisk, RealDescriptor, VisMfHeader};

/// The communicator a write is collective over: the first FabArray's, when its map
/// spans that communicator; otherwise the single process (a FabArray on a map made for
/// inspection, which [`check_layout`] accepts only when every box is here).
pub(crate) fn write_comm<A: HostAccessible>(mfs: &[&FabArray<f64, A>]) -> Communicator {
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

/// Writes this rank's FABs of `mf` over their boxes grown by `ngrow` into its data file
/// `<prefix>_D_<file>` (AMReX's `NFilesIter`: the ranks sharing a file append to it in
/// turn, a barrier between turns). **Collective** over `comm` when ranks share files
/// (the barriers are taken whatever happens here); errors are this rank's.
fn write_local<A: HostAccessible>(
    mf: &FabArray<f64, A>,
    prefix: &Path,
    ngrow: IntVect,
    comm: &Agreed<'_>,
    nfiles: usize,
) -> Result<parallel::LocalPart, PlotfileError> {
    let c = comm.communicator();
    let (file, turn, turns) = parallel::file_group(c.rank(), c.size(), nfiles);
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
    let dpath = with_suffix(prefix, &format!("_D_{file:05}"));
    // Not opened for appending: the FABs are written at their offsets (an appending
    // descriptor would ignore them); a later turn starts at the end of the earlier ones.
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(!append)
        .open(&dpath)
        .map_err(io_err(&dpath))?;
    let start = if append {
        f.metadata().map_err(io_err(&dpath))?.len()
    } else {
        0
    };
    let rd = RealDescriptor::NATIVE_F64;
    let nc = mf.ncomp();
    // Local boxes in increasing global order (on one process, every box in order), each
    // at the offset the ones before it leave: its FAB header line, then its values.
    let mfis: Vec<_> = mf.mfiter(Tiling::None).collect();
    let mut offsets = Vec::with_capacity(mfis.len());
    let mut heads = Vec::with_capacity(mfis.len());
    let mut offset = start;
    for mfi in &mfis {
        let region = mfi.validbox().grow_iv(ngrow);
        let head = vismf::fab_header(rd, &region, nc, 3);
        offsets.push(offset);
        offset += head.len() as u64 + region.num_pts() * nc as u64 * 8;
        heads.push(head);
    }
    // The FABs in parallel: each written with positional writes (no shared cursor), then
    // its minima and maxima over the valid box (what `_H` records), while it is in cache.
    let records = amrex_runtime::threads::par_map(mfis.len(), |i| {
        let mfi = &mfis[i];
        let (g, vbx) = (mfi.index(), mfi.validbox());
        let region = vbx.grow_iv(ngrow);
        let fab = mf.fab(mfi);
        let bad = |e: FabError| invalid(&dpath, format!("box {g}: {e}"));
        let head = heads[i].as_bytes();
        let at = offsets[i];
        write_all_at(&f, head, at).map_err(io_err(&dpath))?;
        let at = at + head.len() as u64;
        if fab.index_box() == region && fab.is_contiguous() {
            let data = fab.as_slice().map_err(bad)?;
            write_all_at(&f, bytemuck::cast_slice(data), at).map_err(io_err(&dpath))?;
        } else {
            let a = fab.array().map_err(bad)?;
            let x0 = (region.lo()[0] - a.begin()[0]) as usize;
            let nx = region.length_dir(0) as usize;
            let mut values =
                Vec::with_capacity(usize::try_from(region.num_pts()).unwrap_or(0) * nc);
            for n in 0..nc {
                for k in region.lo()[2]..=region.hi()[2] {
                    for j in region.lo()[1]..=region.hi()[1] {
                        values.extend_from_slice(&a.row(j, k, n)[x0..x0 + nx]);
                    }
                }
            }
            write_all_at(&f, bytemuck::cast_slice(&values), at).map_err(io_err(&dpath))?;
        }
        let (mut min, mut max) = (Vec::with_capacity(nc), Vec::with_capacity(nc));
        for n in 0..nc {
            let (lo, hi) = fab.min_max(n..=n, vbx).map_err(bad)?;
            min.push(lo);
            max.push(hi);
        }
        Ok(parallel::BoxRecord {
            g,
            offset: offsets[i],
            min,
            max,
        })
    });
    // Closed before the next turn's rank opens the file (close-to-open consistency).
    drop(f);
    Ok(parallel::LocalPart {
        file,
        fabs: records.into_iter().collect::<Result<_, PlotfileError>>()?,
    })
}

/// **Collective.** Every rank's [`parallel::LocalPart`] gathered on every rank and put
/// in global box order: the VisMF header (version 1, `NFiles`, minima and maxima over
/// the valid boxes), the same on every rank.
fn assemble_header<A: HostAccessible>(
    mf: &FabArray<f64, A>,
    prefix: &Path,
    ngrow: IntVect,
    comm: &Agreed<'_>,
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

/// Runs `f` on rank 0 only; the others succeed.
fn on_root(
    comm: &Agreed<'_>,
    f: impl FnOnce() -> Result<(), PlotfileError>,
) -> Result<(), PlotfileError> {
    if comm.communicator().rank() == 0 {
        f()
    } else {
        Ok(())
    }
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
    let mut hash = Fingerprint::new();
    hash.str(&prefix.to_string_lossy()).word(nf as u64);
    mf.hash_operand(&mut hash);
    let comm = comm
        .agree("write_multifab", &hash)
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
/// must lie in `geom.domain()` and not overlap.
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
/// its `x` component, as AMReX does).
///
/// The plotfile is written in `<dir>.partial` (a leftover of that name is removed) and
/// renamed to `dir` once complete, so `dir` never holds half a plotfile; a `dir` that
/// already exists is first moved aside to `<dir>.old.<unique>`, as AMReX's
/// `PreBuildDirectorHierarchy` moves it (nothing is overwritten in place).
///
/// The `Header` records what AMReX's `WriteGenericPlotfileHeader` records of a
/// [`Geometry`]: level 0's `prob_lo` and `prob_hi`, each level's domain and cell size,
/// each box's physical extent ([`Geometry::box_extent`]) and the coordinate system as
/// AMReX's code (0 Cartesian, 1 RZ, 2 spherical). Periodicity has no place in a
/// plotfile and is not written.
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
    let mut hash = Fingerprint::new();
    hash.str(&dir.to_string_lossy())
        .word(nf as u64)
        .word(time.to_bits())
        .str(&format!("{names:?}{geoms:?}{steps:?}{ref_ratio:?}"))
        .word(nlev as u64);
    for mf in mfs {
        mf.hash_operand(&mut hash);
    }
    let comm = comm
        .agree("write_plotfile", &hash)
        .map_err(PlotfileError::Comm)?;
    parallel::agree(&comm, checked)?;
    let staging = parallel::agree(&comm, staging_path(dir))?;
    let made = on_root(&comm, || make_staging(&staging, nlev));
    // Also the barrier between rank 0's directories and the others' files.
    parallel::agree(&comm, made)?;
    let prefixes: Vec<PathBuf> = (0..nlev)
        .map(|lev| staging.join(format!("Level_{lev}")).join("Cell"))
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
                .map(|b| geoms[lev].box_extent(b))
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
        prob_lo: geoms[0].prob_lo(),
        prob_hi: geoms[0].prob_hi(),
        ref_ratio: ref_ratio[..nlev - 1].iter().map(|r| r[0]).collect(),
        domains: geoms.iter().map(Geometry::domain).collect(),
        level_steps: steps.to_vec(),
        cell_sizes: geoms.iter().map(Geometry::cell_size).collect(),
        coord_sys: geoms[0].coord(),
        bwidth: 0,
        levels,
    };
    let written = on_root(&comm, || {
        for (prefix, h) in prefixes.iter().zip(&cell_headers) {
            write_text(&with_suffix(prefix, "_H"), &h.to_text(3))?;
        }
        write_text(&staging.join("Header"), &header.to_string())
    });
    parallel::agree(&comm, written)?;
    let published = on_root(&comm, || publish(&staging, dir).map(drop));
    parallel::agree(&comm, published)
}
