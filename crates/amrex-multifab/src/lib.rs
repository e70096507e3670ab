//! AMReX's distributed-array layer: [`BoxArray`], [`DistributionMapping`],
//! [`FabArray`]/[`MultiFab`]/[`iMultiFab`], [`MFIter`] tiling, arithmetic and
//! reductions, `FillBoundary` and `ParallelCopy` driven by cached [`CopyPlan`]s, and
//! DLPack export of every local box.
//!
//! - A [`BoxArray`] chops a domain with AMReX's `maxSize` rule and answers
//!   intersection queries through a bin index (cost ~ number of hits).
//! - A [`DistributionMapping`] assigns boxes to ranks (Morton SFC by default,
//!   knapsack, round robin) of its [`Communicator`](amrex_runtime::Communicator): one
//!   process, or MPI ranks with the
//!   feature `mpi`. Plans keep local copies apart from messages, and every collective
//!   operation gives the single-process result bit for bit on any number of ranks.
//! - A [`FabArray`] allocates only its local fabs, each a [`BaseFab`] over the valid box
//!   grown by a per-direction ghost width, from an arena ([`HostArena`] by default);
//!   [`FabArray::fab`] / [`FabArray::fab_mut`] (or `fa[&mfi]`) return them.
//! - Work runs in parallel over tiles with rayon (feature `std`): every operation is a
//!   plain slice loop along `i`, and reductions give the same answer for any thread
//!   count. Your own loops: [`FabArray::par_for_each_tile`] over one FabArray, [`Zip`]
//!   over several at once (cell-, face- and node-centred on the same boxes), each tile
//!   writing only its own region.
//! - One method set for every arena: on host and pinned memory the operations run those
//!   host loops; on device and managed memory the arena's kernels
//!   ([`Kernels`](amrex_arena::kernels::Kernels), chosen by `Kernels::host_loops`). Only
//!   CUDA has kernels. They have run on one GPU (an NVIDIA H200, CUDA 13, on
//!   2026-12-04: the device tests of `tests/device_ops.rs` matched the host loops, bit
//!   for bit for the element-wise operations, sums and norms to 1e-12); everywhere else the tests run that path on `amrex-arena`'s `FakeDeviceArena`,
//!   whose kernels are the host loops, so they check the dispatch and plumbing, not
//!   device arithmetic.
//!
//! AMReX plotfiles of these MultiFabs are read and written by the `amrex-plotfile` crate.
//!
//! See `docs/multifab.md` in the repository for tiling, copy plans and the DLPack per-box
//! export.
//!
//! # Quick start: fill ghost cells, then a stencil on all threads
//!
//! ```
//! use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IntVect, MultiFab, Periodicity, Tiling};
//!
//! // A periodic 8³ domain in 8 boxes of 4³, one ghost cell.
//! let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(7));
//! let ba = BoxArray::from_domain(domain, 4);
//! let dm = DistributionMapping::single(&ba);
//! let mut phi = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
//! let mut lap = MultiFab::new(&ba, &dm, 1, IntVect::ZERO);
//!
//! // phi = i (periodic in x with period 8), valid cells only, in parallel tiles.
//! phi.par_for_each_tile(Tiling::Default, IntVect::ZERO, |mut t| {
//!     let bx = t.region();
//!     t.array_mut().for_each_mut(bx, |i, _j, _k, _n, v| *v = f64::from(i));
//! });
//! // Ghost cells from neighbours and periodic images (the plan is computed once).
//! phi.fill_boundary(Periodicity::all(domain)).unwrap();
//!
//! // 7-point Laplacian, one tile per task; each task owns its tile of `lap`.
//! lap.par_for_each_tile(Tiling::Default, IntVect::ZERO, |mut t| {
//!     let p = phi.array(t.mfi());
//!     let bx = t.region();
//!     t.array_mut().for_each_mut(bx, |i, j, k, _n, o| {
//!         *o = p[(i + 1, j, k, 0)] + p[(i - 1, j, k, 0)] + p[(i, j + 1, k, 0)]
//!             + p[(i, j - 1, k, 0)] + p[(i, j, k + 1, 0)] + p[(i, j, k - 1, 0)]
//!             - 6.0 * p[(i, j, k, 0)];
//!     });
//! });
//! // Zero inside, ±8 where the periodic wrap jumps from 7 to 0.
//! assert_eq!(lap.max(0..1, 0).unwrap(), 8.0);
//! assert_eq!(lap.min(0..1, 0).unwrap(), -8.0);
//! assert_eq!(lap.sum(0..1, 0).unwrap(), 0.0);
//! ```
//!
//! # Feature flags
//!
//! - `std` (default): rayon threads for every operation and `par_iter_tiles_mut`;
//!   without it everything runs sequentially and the crate is `no_std` + `alloc`.
//! - `ndarray`: `read_region_ndarray` / `write_region_ndarray`, global-index regions
//!   (ghost cells addressable) as `ndarray` arrays indexed `[i, j, k, n]`.
//! - `mpi` (implies `std`): `amrex-runtime`'s MPI communicators, so that FabArrays
//!   spread over MPI's ranks (rsmpi; needs an MPI library and libclang to build, see
//!   `docs/mpi.md`). Without it every FabArray lives in one process.
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

mod box_array;
mod boxlist;
mod comm;
mod copy;
mod device;
mod distribution;
mod dlpack;
mod element;
mod error;
mod fabarray;
mod message;
mod mfiter;
mod ops;
mod par;
pub mod plan;
mod profile;
mod raw_fab;
mod region;
mod zip;

pub use amrex_arena::{Arena, HostArena};
pub use amrex_array4::{Array4, Array4Mut};
pub use amrex_basefab::{BaseFab, FabError};
pub use amrex_box::{IndexBox, IndexSpaceError, IndexType, IntVect};
pub use amrex_geometry::Periodicity;
pub use box_array::{BoxArray, BoxArrayError};
pub use boxlist::{BoxList, box_diff};
pub use comm::CopyOp;
pub use distribution::{DistributionMapping, Strategy};
pub use dlpack::Ghosts;
pub use element::Element;
pub use error::FabArrayError;
pub use fabarray::{FabArray, FabIndex, MultiFab, hash_geometry, iMultiFab};
pub use mfiter::{DEFAULT_TILE_SIZE, MFIter, Mfi, Tiling};
pub use ops::Reduction;
pub use par::TileMut;
pub use plan::{CopyPlan, CopyTag, FillPattern};
pub use profile::{CommProfile, comm_profile, reset_comm_profile};
pub use zip::{Leader, Operand, Zip};
