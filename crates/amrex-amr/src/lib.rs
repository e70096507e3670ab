//! AMReX's operations between AMR levels, on host MultiFabs: averaging a fine level
//! down onto a coarse one (`AMReX_MultiFabUtil`), interpolating coarse data onto a fine
//! region (`AMReX_Interpolater`), filling a level from its own states and the coarser
//! level in time and space ([`fill_patch`], `AMReX_FillPatchUtil`), filling ghost cells
//! beyond non-periodic domain faces ([`boundary`]: `BCRec`, `FilCC`/`FilND`),
//! refluxing at coarse/fine interfaces ([`FluxRegister`]), and regridding: tags,
//! Berger–Rigoutsos clustering and AMReX's grid generation ([`AmrMesh`], [`AmrCore`]),
//! configured by inputs files ([`ParmParse`](amrex_runtime::ParmParse)).
//!
//! | AMReX | here |
//! |---|---|
//! | `average_down(S_fine, S_crse, scomp, ncomp, ratio)` | [`average_down`] |
//! | `average_down(S_fine, S_crse, fgeom, cgeom, scomp, ncomp, ratio)` | [`average_down_geom`] |
//! | `sum_fine_to_coarse` | [`sum_fine_to_coarse`] |
//! | `average_down_faces(fine, crse, ratio, ngcrse)` | [`average_down_faces`] |
//! | `average_down_faces(fine, crse, ratio, crse_geom)` | [`average_down_faces_geom`] |
//! | `average_down_nodal(fine, crse, ratio, ngcrse)` | [`average_down_nodal`] |
//! | `Interpolater` (`CoarseBox`, `interp`) | [`Interpolater`] ([`coarse_box`](Interpolater::coarse_box), [`interp`](Interpolater::interp)) |
//! | `PCInterp` (`pc_interp`) | [`PcInterp`] |
//! | `CellConservativeLinear` (`cell_cons_interp`, `lincc_interp`) | [`CellConsLinear`] ([`CELL_CONS_INTERP`](CellConsLinear::CELL_CONS_INTERP), [`LINCC_INTERP`](CellConsLinear::LINCC_INTERP)) |
//! | `CellBilinear` (`cell_bilinear_interp`) | [`CellBilinear`] |
//! | `NodeBilinear` (`node_bilinear_interp`) | [`NodeBilinear`] |
//! | `FaceLinear` (`face_linear_interp`) | [`FaceLinear`] |
//! | `FillPatchSingleLevel` | [`fill_patch_single_level`] |
//! | `FillPatchTwoLevels` | [`fill_patch_two_levels`] |
//! | `InterpFromCoarseLevel` | [`interp_from_coarse_level`] |
//! | `FluxRegister` | [`FluxRegister`] |
//! | `TagBoxArray` | [`TagBoxArray`] |
//! | `ClusterList` (Berger–Rigoutsos) | [`ClusterList`] |
//! | `ParmParse` | [`amrex_runtime::ParmParse`] |
//! | `AmrInfo`, `AmrMesh` (`MakeBaseGrids`, `checkInput`) | [`AmrInfo`], [`AmrMesh`] |
//! | `AmrMesh::MakeNewGrids` | [`make_new_grids`] |
//! | `AmrCore` (`ErrorEst`, `MakeNewLevelFromScratch`, ..., `InitFromScratch`, `regrid`) | [`AmrCore`] |
//!
//! The averages take any refinement ratio of at least 1 per direction (an [`IntVect`])
//! and any fine and coarse BoxArrays and distributions: as in AMReX, the fine BoxArray is
//! coarsened, the coarse values are computed there on the fine level's distribution, and
//! a `ParallelCopy` takes them into the coarse MultiFab. The loops run over `i`-rows
//! (slices) in parallel over tiles, and add up each coarse value's fine values in
//! AMReX's order; the results have not been compared with AMReX's own output.
//!
//! Every operation of the crate (averages, interpolaters, the physical-boundary fill and
//! its boundary codes, [`fill_patch`], [`FluxRegister`]) checks all its arguments before
//! it writes anything and returns the one error type [`AmrError`]: the operation's name
//! ([`op`](AmrError::op)), an [`AmrErrorKind`] (`#[non_exhaustive]`) that names the
//! argument ([`Operand`]) and the bad values, and a message that names them too. The
//! crate has no `unsafe` code.
//!
//! The operations that cross levels or boxes are collective (through `ParallelCopy` and
//! `FillBoundary`), and each first has the ranks agree on a hash of all its arguments,
//! so ranks that pass different ones all get an error instead of waiting for each other.
//! The `mpi` feature's tests run every operation over 1, 2 and 4 ranks and compare bit
//! for bit with one process. `examples/two_level.rs` in the repository runs AMReX's
//! subcycled two-level step with these calls. See `docs/amr.md` in the repository for
//! the multi-level loop, each call next to its AMReX name, and what differs from AMReX.
//!
//! # Quick start: average a fine level down, interpolate it back
//!
//! ```
//! use amrex_amr::{CellConsLinear, Comps, Interpolater, average_down};
//! use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IntVect, MultiFab, Tiling};
//!
//! let ratio = IntVect::splat(2);
//! // A coarse level of 16³ cells in 8 boxes, one ghost cell, holding sin(i) cos(j) + k.
//! let cdom = IndexBox::new(IntVect::ZERO, IntVect::splat(15));
//! let cba = BoxArray::from_domain(cdom, 8);
//! let mut crse = MultiFab::new(&cba, &DistributionMapping::single(&cba), 1, IntVect::splat(1));
//! crse.par_for_each_tile(Tiling::Default, IntVect::splat(1), |mut t| {
//!     let bx = t.region();
//!     t.array_mut().for_each_mut(bx, |i, j, k, _n, v| {
//!         *v = f64::from(i).sin() * f64::from(j).cos() + f64::from(k);
//!     });
//! });
//!
//! // A fine level over the coarse cells 4..=11, in boxes of 8³ (each over one coarse box).
//! let fba = BoxArray::from_domain(IndexBox::new(IntVect::splat(4), IntVect::splat(11)).refine(2), 8);
//! let mut fine = MultiFab::new(&fba, &DistributionMapping::single(&fba), 1, IntVect::ZERO);
//!
//! // Conservative interpolation, fab by fab: each fine box needs the coarse cells of
//! // `coarse_box`, which here lie inside one coarse fab with its ghost cells.
//! let interp = CellConsLinear::CELL_CONS_INTERP;
//! for mfi in fine.mfiter(Tiling::None) {
//!     let fbx = mfi.validbox();
//!     let need = interp.coarse_box(&fbx, ratio);
//!     let c = crse
//!         .mfiter(Tiling::None)
//!         .find(|c| c.fabbox().contains_box(&need))
//!         .expect("one coarse fab holds it");
//!     interp.interp(crse.array(&c), fine.array_mut(&mfi), &fbx, Comps::first(1), ratio, None)?;
//! }
//!
//! // Averaging back down gives the coarse values again, to round-off.
//! let mut back = MultiFab::new(&cba, &DistributionMapping::single(&cba), 1, IntVect::ZERO);
//! average_down(&fine, &mut back, 0..1, ratio)?;
//! for iv in IndexBox::new(IntVect::splat(4), IntVect::splat(11)) {
//!     let (a, b) = (back.value_at(iv, 0).unwrap(), crse.value_at(iv, 0).unwrap());
//!     assert!((a - b).abs() < 1e-14 * (1.0 + b.abs()));
//! }
//! # Ok::<(), amrex_amr::AmrError>(())
//! ```
//!
//! # Feature flags
//!
//! - `std` (default): rayon threads for the averages (through `amrex-multifab/std`);
//!   without it they run sequentially and the crate is `no_std` + `alloc`.
//! - `mpi`: `amrex-runtime`'s MPI communicator (and `amrex-multifab/mpi`), for the MPI
//!   tests; the operations are the same code with or without it.
#![no_std]
#![warn(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss
)]
#![doc(test(attr(deny(warnings))))]
#![cfg_attr(docsrs, feature(doc_cfg))]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

/// The README's example, compiled as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

mod amr_core;
mod amr_mesh;
mod average;
pub mod boundary;
mod check;
mod cluster;
mod comps;
mod error;
mod faces;
pub mod fill_patch;
pub mod flux_register;
mod interp;
mod kernels;
mod level;
mod nodal;
mod sum;
mod tags;

pub use amr_core::{AmrCore, make_new_grids};
pub use amr_mesh::{AmrInfo, AmrMesh, MAX_LEVELS, geometry_from_parm_parse};
pub use amrex_box::IntVect;
pub use average::{average_down, average_down_geom};
pub use cluster::ClusterList;
pub use comps::Comps;
pub use error::{AmrError, AmrErrorKind, Operand};
pub use faces::{average_down_faces, average_down_faces_geom};
pub use fill_patch::{fill_patch_single_level, fill_patch_two_levels, interp_from_coarse_level};
pub use flux_register::FluxRegister;
pub use interp::{
    CellBilinear, CellConsLinear, Centring, FaceLinear, Interpolater, NodeBilinear, PcInterp,
};
pub use nodal::average_down_nodal;
pub use sum::sum_fine_to_coarse;
pub use tags::{TagBoxArray, TagType};
