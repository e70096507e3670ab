//! AMReX plotfiles (`HyperCLaw-V1.1`): read what AMReX's `WriteSingleLevelPlotfile` /
//! `WriteMultiLevelPlotfile` write, and write plotfiles AMReX, yt, VisIt and ParaView
//! read, for the [`MultiFab`]s of `amrex-multifab`; and AMR checkpoints as AMReX's codes
//! write them ([`CheckpointHeader`], [`write_checkpoint`], [`read_checkpoint_header`],
//! [`read_checkpoint_multifab`]).
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
//! A level's geometry is `amrex-geometry`'s [`Geometry`] (re-exported here with
//! [`RealBox`] and [`CoordSys`]): the writer takes one per level, the reader gives them
//! back ([`PlotfileHeader::geometry`]). The `Header` records its domain, physical box,
//! cell sizes and coordinate system, not its periodicity.
//!
//! # Distrust on both sides
//!
//! - The reader treats every file as hostile: every box and ghost width it parses passes
//!   the `i32` index-space rule ([`IndexBox::check_index_space`]),
//!   the FABs' data must lie inside the data files and not overlap before anything is
//!   allocated, the `Header`'s MultiFab paths must stay inside the plotfile
//!   directory, and its coordinate system, `prob_lo`/`prob_hi` and level domains must
//!   make a [`Geometry`] for every level ([`PlotfileError::BadGeometry`] otherwise).
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
//! // 16 x 8 x 8 cells over [0, 1] x [0, 0.5] x [0, 0.5], Cartesian, not periodic.
//! let geom = Geometry::cartesian(domain, [0.0; 3], [1.0, 0.5, 0.5])?;
//! assert_eq!(geom.cell_centre(IntVect::new(3, 0, 7)), [0.21875, 0.03125, 0.46875]);
//! let dir = std::env::temp_dir().join(format!("amrex_rs_doc_plt_{}", std::process::id()));
//! plotfile::write_single_level_plotfile(&dir, &mf, &["phi", "psi"], &geom, 0.5, 10)?;
//!
//! let plt = plotfile::read_plotfile(&dir)?;
//! assert_eq!(plt.header.var_names, ["phi", "psi"]);
//! assert_eq!((plt.header.time, plt.header.level_steps[0]), (0.5, 10));
//! assert_eq!(plt.header.domains[0], domain);
//! assert_eq!(plt.header.geometry(0), geom);
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
//! [`MultiFab`]: amrex_multifab::MultiFab
//! [`IndexBox::check_index_space`]: amrex_box::IndexBox::check_index_space
#![forbid(unsafe_code)]
#![doc(test(attr(deny(warnings))))]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;

mod checkpoint;
mod error;
mod fs;
mod header;
mod nesting;
mod parallel;
mod read;
mod text;
mod vismf;
mod write;

pub use amrex_geometry::{CoordSys, Geometry, GeometryError, GeometryErrorKind, RealBox};
pub use checkpoint::{
    CheckpointHeader, MAX_CHECKPOINT_LEVELS, read_checkpoint_header, read_checkpoint_header_on,
    read_checkpoint_multifab, write_checkpoint,
};
pub use error::PlotfileError;
pub use header::{LevelHeader, PLOTFILE_VERSION, PlotfileHeader};
pub use parallel::{DEFAULT_NFILES, nfiles, set_nfiles};
pub use read::{
    Plotfile, read_level, read_level_on, read_level_with, read_multifab, read_multifab_on,
    read_multifab_with, read_plotfile, read_plotfile_header, read_plotfile_header_on,
    read_plotfile_on,
};
pub use vismf::{FabOnDisk, RealDescriptor, VisMfHeader};
pub use write::{write_multi_level_plotfile, write_multifab, write_single_level_plotfile};
