//! The ground floor of amrex-rs: what every crate that communicates, runs threads or
//! reads inputs shares — AMReX's `ParallelDescriptor`, `amrex::Initialize`/`Finalize`
//! and `ParmParse`.
//!
//! - [`Communicator`]: who this process is among how many; one process, or MPI's ranks
//!   with the feature `mpi`. [`init`] starts MPI (with `mpi`) and hands back the
//!   communicator (`init_with_args` also reads the inputs file and the command line into
//!   a [`ParmParse`]); dropping its guard finalises.
//! - The ranks-agree check: every collective of the workspace starts with
//!   [`Communicator::agree`], one all-reduce of a [`Fingerprint`] of the operation and
//!   its arguments, so ranks that call different collectives (or the same one with
//!   different arguments) all get [`CommError::RanksDisagree`] instead of hanging. The
//!   collectives themselves are reached only through the [`Agreed`] it returns.
//! - [`Tag`]: the one registry of message tags (the workspace's, and a user range).
//! - [`abort_all_ranks`]: how a rank that cannot go on ends the job instead of leaving
//!   the others in a collective; [`catch_panic`] for a panic the caller will report.
//! - [`threads`]: the parallel loops over tiles and fabs (rayon with `std`).
//! - [`ParmParse`]: AMReX's inputs files and command-line overrides.
//! - [`sync::Lock`]: the lock of the workspace's caches (a spin lock without `std`).
//!
//! Nothing here depends on a crate above it: the containers, the FabArrays, the AMR
//! levels, particles and plotfiles all draw on this crate.
//!
//! # Quick start
//!
//! ```
//! use amrex_runtime::{Fingerprint, ParmParse, ReduceOp};
//!
//! // One process here; with the `mpi` feature under mpirun, MPI's world.
//! let parallel = amrex_runtime::init()?;
//! let comm = parallel.communicator();
//! let pp = ParmParse::from_text("amr.n_cell = 64 64 8\nadv.cfl = 0.7", "inputs")?;
//! let n_cell: Vec<i32> = pp.get_arr("amr.n_cell")?;
//! let cells = comm.all_reduce_u64(n_cell.iter().map(|&n| u64::from(n.unsigned_abs())).product(), ReduceOp::Sum)?;
//! assert_eq!(cells, 64 * 64 * 8 * comm.size() as u64);
//!
//! // An operation of your own: agree once, then run its collectives.
//! let mut fp = Fingerprint::new();
//! fp.str("my_norm").word(3);
//! let agreed = comm.agree("my_norm", &fp)?;
//! let norm = agreed.all_reduce_f64(2.0, ReduceOp::Max);
//! assert_eq!(norm, 2.0);
//! # Ok::<(), Box<dyn core::error::Error>>(())
//! ```
//!
//! # Feature flags
//!
//! - `std` (default): rayon threads for [`threads`], [`catch_panic`], and
//!   `ParmParse::from_file`. Without it the crate is `no_std` + `alloc`: one process,
//!   sequential loops, and a spin lock.
//! - `mpi` (implies `std`): `Communicator::world` and `Communicator::from_mpi` over MPI
//!   (rsmpi); needs an MPI library and libclang to build. Without it,
//!   [`Communicator`] is the single-process one and [`init`] / [`finalize`] start and
//!   end nothing.
#![no_std]
#![warn(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss
)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![doc(test(attr(deny(warnings))))]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

/// The README's example, compiled as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

mod comm;
mod fingerprint;
mod init;
mod parm_parse;
pub mod sync;
mod tags;
pub mod threads;

/// The rsmpi crate this one is built against (feature `mpi`), for bringing your own
/// communicator.
#[cfg(feature = "mpi")]
pub use ::mpi;
#[cfg(feature = "std")]
pub use comm::catch_panic;
pub use comm::{
    Agreed, CommError, Communicator, Direction, Exchange, MAX_MESSAGE_BYTES, MAX_TAG, ReduceOp,
    abort_all_ranks, abort_on_panic,
};
pub use fingerprint::Fingerprint;
#[cfg(feature = "std")]
pub use init::init_with_args;
pub use init::{InitError, InitGuard, finalize, init};
pub use parm_parse::{Origin, ParmParse, ParmParseError, ParmValue, Prefixed};
pub use tags::Tag;
