//! `amrex_rs`: amrex-rs containers in Python, each speaking the full DLPack protocol.
//!
//! Every container with a DLPack dtype has `__dlpack__(*, stream=None, max_version=None,
//! dl_device=None, copy=None)` and `__dlpack_device__()`, implemented once in
//! `dlpack::export`, plus `to_numpy(copy=False, order=...)` and `to_xp()`.
//! `amrex_rs.from_dlpack(obj)` adopts any producer's memory zero-copy (`dlpack::import`).
//! Every container type also publishes the DLPack 1.3 C exchange API (`dlpack::exchange`),
//! and `from_dlpack` uses a producer's table when its type has one.
//!
//! Beyond the containers, with pyAMReX's names:
//! - global indexing of a MultiFab as pyAMReX does it (`indexing`, `multifab`);
//! - AMReX plotfiles read lazily per box and written per level (`plotfile`), and
//!   checkpoints written and read as AMReX's AMR codes do (`checkpoint`);
//! - particles: arrays of structs and structs of arrays built from NumPy arrays in one
//!   call (`particles`), and the particle container with `redistribute`, deposition,
//!   gather and particle plotfiles (`particle_container`);
//! - the AMR levels (`amr`): averages, interpolaters, FillPatch, physical boundaries, the
//!   flux register, tags, `AmrMesh`, and `AmrCore` subclasses whose `error_est` and level
//!   callbacks are Python methods (AMReX's Advection_AmrCore tutorial runs in NumPy on it);
//! - the runtime (`runtime`): `initialize`/`finalize`, `ParmParse` over inputs files and
//!   `key=value` arguments;
//! - MPI (`parallel`, feature `mpi`): `Communicator` (the world, or one from mpi4py),
//!   `ParallelDescriptor`, distributed MultiFabs, collectives that agree first so that
//!   ranks calling different ones raise instead of hanging, and an uncaught exception on
//!   one rank ending every rank.
//!
//! Every error of the Rust crates reaches Python through one mapping (`error::py_err`):
//! one kind of refusal, one exception type, whichever method found it.
//!
//! Package: `pip install ./crates/amrex-python` (maturin, `pyproject.toml` beside this
//! crate's `Cargo.toml`) installs the `amrex_rs` package: `python/amrex_rs/__init__.py`,
//! the typed stubs and this extension as `amrex_rs._core`. See `docs/python.md`.
//!
//! # Features
//! - `mpi`: communicators over MPI (rsmpi, linked against the machine's MPI), for
//!   scripts under `mpirun`.
//! - `cuda`, `hip`, `level-zero`: the GPU arenas of `amrex-arena` (loaded at run time, so
//!   a build with them still runs on machines without a GPU). Such builds compile and
//!   fail cleanly without a driver; CUDA builds have run on one NVIDIA H200, HIP and
//!   Level Zero never.
//! - `testing`: the test stand-ins of `python-tests/` (`_debug_*` counters and Rust
//!   exports, `_DebugDeviceArray`, `_debug_fake_device_arena()`: host memory that claims to
//!   be CUDA device 0). Off by default, so the wheel users install has none of them.

mod amr;
mod arena;
mod array4;
mod basefab;
mod box_array;
mod checkpoint;
#[cfg(feature = "testing")]
mod debug;
mod distribution;
mod dlpack;
mod error;
mod geometry;
mod indexing;
mod mfiter;
mod multifab;
mod parallel;
mod particle_container;
mod particles;
mod plotfile;
mod runtime;
mod smallmatrix;
mod vector;
mod views;

use pyo3::prelude::*;

/// The compiled half of the `amrex_rs` package, imported as `amrex_rs._core` (the
/// package's `__init__.py` re-exports every name).
#[pymodule(name = "_core")]
fn amrex_rs(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("DLPACK_VERSION", (1u32, 3u32))?;
    m.add_function(wrap_pyfunction!(dlpack::import::from_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(dlpack::import::xp_for, m)?)?;
    m.add_class::<dlpack::import::Tensor>()?;
    dlpack::install::<dlpack::import::Tensor>(m.py())?;
    #[cfg(feature = "testing")]
    debug::register(m)?;
    arena::register(m)?;
    vector::register(m)?;
    views::register(m)?;
    geometry::register(m)?;
    smallmatrix::register(m)?;
    box_array::register(m)?;
    parallel::register(m)?;
    distribution::register(m)?;
    mfiter::register(m)?;
    multifab::register(m)?;
    basefab::register(m)?;
    array4::register(m)?;
    particles::register(m)?;
    particle_container::register(m)?;
    plotfile::register(m)?;
    checkpoint::register(m)?;
    amr::register(m)?;
    runtime::register(m)?;
    Ok(())
}
