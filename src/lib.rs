//! AMReX's core data containers in Rust, each sharing its memory with any DLPack consumer
//! without copying (tested with NumPy, JAX, array-api-strict, tvm-ffi and C, and on one
//! GPU with CuPy and PyTorch; dpnp speaks the same protocol but has not been tried).
//!
//! GPU memory: CUDA has run on one GPU (an NVIDIA H200, CUDA 13.0); ROCm/HIP and Level
//! Zero are written but have never run on a device: see [Feature flags](#feature-flags).
//!
//! This package is a facade: each module re-exports one member crate, so a simulation
//! code can depend on `amrex` alone, while a code that needs one container depends on its
//! crate directly (every crate works on its own, and the core ones are `no_std`).
//! [`prelude`] brings the names most programs use; [`init`] / [`init_with_args`] start
//! a program as AMReX's `amrex::Initialize` does (MPI with the `mpi` feature, and the
//! inputs file and command line read into a [`ParmParse`](runtime::ParmParse)).
//!
//! # Quick start
//!
//! ```
//! use amrex::prelude::*;
//!
//! // One process here; under mpirun with the `mpi` feature, MPI's world.
//! let amrex = amrex::init()?;
//! assert_eq!(amrex.communicator().size(), 1);
//!
//! // A periodic 32³ domain in 8 boxes of 16³, one component, one ghost cell.
//! let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(31));
//! let ba = BoxArray::from_domain(domain, 16);
//! let dm = DistributionMapping::single(&ba);
//! let mut phi = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
//!
//! // Kernels run over tiles on all threads and index cells globally, as in AMReX.
//! phi.par_for_each_tile(Tiling::Default, IntVect::ZERO, |mut t| {
//!     let bx = t.region();
//!     t.array_mut().for_each_mut(bx, |i, j, k, _n, v| *v = f64::from(i + j + k));
//! });
//! phi.fill_boundary(Periodicity::all(domain)).unwrap();
//! assert_eq!(phi.max(0..1, 0).unwrap(), 93.0);
//!
//! // A fab of the MultiFab as a DLPack tensor: shape (ncomp, nz, ny, nx), ghosts included.
//! let mfi = phi.mfiter(Tiling::None).next().unwrap();
//! assert_eq!(phi.fab(&mfi).to_dlpack()?.shape(), &[1, 18, 18, 18]);
//!
//! // Plain Rust vectors speak DLPack too.
//! assert_eq!(vec![1.0_f64, 2.0].to_dlpack()?.shape(), &[2]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Crates
//!
//! From the ground up (a crate depends only on crates above it in this table):
//!
//! | module | crate | `no_std` | what it holds |
//! |---|---|---|---|
//! | [`dlpack`] | `amrex-dlpack-core` | yes (`alloc` optional) | the DLPack 1.3 C ABI, dtypes, validated views, owning tensors, `ToDlpack`/`FromDlpack`, the `ndarray` bridge |
//! | [`boxes`] | `amrex-box` | yes | `IntVect`, `Dim3`, `IndexType`, `IndexBox` and its algebra |
//! | [`geometry`] | `amrex-geometry` | yes (`alloc` optional) | `RealBox`, `CoordSys`, `Geometry`, `Periodicity` |
//! | [`runtime`] | `amrex-runtime` | `alloc`; `std` adds threads | the `Communicator` (one process, or MPI), `init`/`finalize`, the ranks-agree check, message tags, thread loops, `ParmParse` |
//! | [`array4`] | `amrex-array4` | yes | `Array4`/`Array4Mut`, strided 4-D views with global indices |
//! | [`smallmatrix`] | `amrex-smallmatrix` | yes | `SmallMatrix<T, R, C, Order, START>` |
//! | [`arena`] | `amrex-arena` | yes (`alloc`) | the `Arena` memory resource: host, CUDA, HIP, Level Zero |
//! | [`podvector`] | `amrex-podvector` | yes (`alloc`) | `PodVector<T, A>` with AMReX's growth strategies |
//! | [`aos`] | `amrex-aos` | yes (`alloc`) | `Particle`, `ArrayOfStructs`, `StructOfArrays` |
//! | [`basefab`] | `amrex-basefab` | yes (`alloc`) | `BaseFab`, `FArrayBox`, `IArrayBox` |
//! | [`multifab`] | `amrex-multifab` | `alloc`; `std` adds threads | `BoxArray`, `DistributionMapping`, `MultiFab`, `MFIter`, `FillBoundary`, `ParallelCopy` |
//! | [`plotfile`] (feature `std`) | `amrex-plotfile` | no (`std`) | AMReX plotfiles (`HyperCLaw-V1.1`, VisMF) read and written byte for byte, refusing inconsistent hierarchies |
//! | [`amr`] | `amrex-amr` | yes (`alloc`); `std` adds threads | levels: averaging, interpolaters, FillPatch, boundary fills, `FluxRegister`, tags, clustering, `AmrMesh`, `AmrCore` |
//! | [`particles`] | `amrex-particles` | yes (`alloc`); `std` adds threads and files | `ParticleContainer`: particles on grids, `redistribute` across tiles and ranks, CIC/NGP deposit and gather, particle plotfiles |
//!
//! Outside the facade: `level-zero-sys` (the Level Zero loader bindings under
//! `amrex-arena`'s `level-zero` feature) and `amrex-dlpack-capsule` (DLPack PyCapsules
//! over the stable CPython API, for Python extension modules built with any pyo3 version).
//!
//! # Conventions
//!
//! - AMReX data is Fortran ordered: `i` is fastest, then `j`, `k` and the component `n`.
//!   Box-shaped exports (`Array4`, `BaseFab`, each box of a `MultiFab`) have DLPack shape
//!   `(ncomp, nz, ny, nx)` and strides `(nstride, kstride, jstride, 1)`, as pyAMReX's do,
//!   so a consumer's `[n, k, j, i]` is `a(i, j, k, n)` with zero-based local indices.
//! - An export keeps its producer's memory alive until the consumer calls the deleter,
//!   exactly once, from any thread; an import validates every field first and refuses bad
//!   input with a named error, after which the producer's deleter has run exactly once.
//! - Containers on host-accessible arenas deref to slices; containers in device-only
//!   memory offer bulk copies and raw device pointers, never slices. GPU runtimes load at
//!   run time, so a missing one is an error value, not a build or link failure.
//!
//! # Feature flags
//!
//! - `std` (default): implies `alloc`; `std` in every crate, rayon threads for
//!   `MultiFab` work, and the [`plotfile`] module. Without it the facade is `no_std` +
//!   `alloc`.
//! - `alloc`: DLPack export from the view and matrix crates (a managed tensor is heap
//!   allocated); the owning containers always need `alloc`.
//! - `ndarray`: `ndarray` views and conversions in `dlpack`, `array4`, `podvector` and
//!   `multifab`.
//!
//! - `mpi`: distributed FabArrays, levels and particles over MPI (needs an MPI library).
//! - `cuda`, `hip`, `level-zero`: the GPU arenas in every container crate (the runtimes
//!   are loaded at run time, so builds need no SDK); device FabArrays then run their
//!   operations on their arena's kernels (CUDA kernels; HIP and Level Zero have
//!   memory, copies and exports but no device kernels at all, and return a `NoKernels`
//!   error for kernel work). Without a GPU, the tests check that each backend builds,
//!   loads its runtime lazily and fails cleanly with an error where its library or
//!   driver is missing, and that the CUDA kernels compile with NVRTC (and the PTX the
//!   library ships with `ptxas`); the containers' device code paths run on a host-backed
//!   stand-in arena, which checks their plumbing, not device arithmetic. **Only CUDA has
//!   run on a GPU**, one NVIDIA H200 with driver 580 (CUDA 13.0): device, pinned and
//!   managed memory, the kernels against the host, CuPy and PyTorch exchanges and the
//!   stream waits, all passing; HIP and Level Zero never (`docs/gpu.md`).
#![no_std]
#![doc(test(attr(deny(warnings))))]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use amrex_amr as amr;
pub use amrex_aos as aos;
pub use amrex_arena as arena;
pub use amrex_array4 as array4;
pub use amrex_basefab as basefab;
pub use amrex_box as boxes;
pub use amrex_dlpack_core as dlpack;
pub use amrex_geometry as geometry;
pub use amrex_multifab as multifab;
pub use amrex_particles as particles;
#[cfg(feature = "std")]
pub use amrex_plotfile as plotfile;
pub use amrex_podvector as podvector;
pub use amrex_runtime as runtime;
#[cfg(feature = "std")]
pub use amrex_runtime::init_with_args;
pub use amrex_runtime::{InitError, InitGuard, finalize, init};
pub use amrex_smallmatrix as smallmatrix;

/// The names most programs use, in one import: `use amrex::prelude::*;`.
///
/// Index space and layout (`IntVect`, `IndexBox`, `IndexType`, `BoxArray`,
/// `DistributionMapping`), the FabArrays and their loops (`MultiFab`, `iMultiFab`,
/// `FabArray`, `MFIter`, `Mfi`, `Tiling`, `Zip`, `Array4`, `Array4Mut`), geometry (`Geometry`,
/// `RealBox`, `CoordSys`, `Periodicity`), the runtime (`Communicator`, `ReduceOp`,
/// `ParmParse`), the AMR core (`AmrCore`, `AmrMesh`, `TagBoxArray`, `Comps`), particles
/// (`ParticleContainer`) and DLPack export (`ToDlpack`).
pub mod prelude {
    pub use amrex_amr::{AmrCore, AmrMesh, Comps, TagBoxArray};
    pub use amrex_array4::{Array4, Array4Mut};
    pub use amrex_box::{IndexBox, IndexType, IntVect};
    #[cfg(feature = "alloc")]
    pub use amrex_dlpack_core::ToDlpack;
    pub use amrex_geometry::{CoordSys, Geometry, Periodicity, RealBox};
    pub use amrex_multifab::{
        BoxArray, DistributionMapping, FabArray, MFIter, Mfi, MultiFab, Tiling, Zip, iMultiFab,
    };
    pub use amrex_particles::ParticleContainer;
    pub use amrex_runtime::{Communicator, ParmParse, ReduceOp};
}

/// The README's Rust examples, compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The READMEs of the member crates, compiled and run as doctests. The facade depends on
/// each of these crates, so their README examples build here; `amrex-runtime`,
/// `amrex-geometry` and `amrex-amr` (and `level-zero-sys` and `amrex-dlpack-capsule`, which the facade does not
/// depend on) compile theirs themselves.
#[cfg(doctest)]
pub mod crate_readmes {
    /// `amrex-dlpack-core`.
    #[doc = include_str!("../crates/amrex-dlpack-core/README.md")]
    pub struct DlpackCore;
    /// `amrex-box`.
    #[doc = include_str!("../crates/amrex-box/README.md")]
    pub struct IndexBox;
    /// `amrex-array4`.
    #[doc = include_str!("../crates/amrex-array4/README.md")]
    pub struct Array4;
    /// `amrex-smallmatrix`.
    #[doc = include_str!("../crates/amrex-smallmatrix/README.md")]
    pub struct SmallMatrix;
    /// `amrex-arena`.
    #[doc = include_str!("../crates/amrex-arena/README.md")]
    pub struct Arena;
    /// `amrex-podvector`.
    #[doc = include_str!("../crates/amrex-podvector/README.md")]
    pub struct PodVector;
    /// `amrex-aos`.
    #[doc = include_str!("../crates/amrex-aos/README.md")]
    pub struct Aos;
    /// `amrex-basefab`.
    #[doc = include_str!("../crates/amrex-basefab/README.md")]
    pub struct BaseFab;
    /// `amrex-multifab`.
    #[doc = include_str!("../crates/amrex-multifab/README.md")]
    pub struct MultiFab;

    /// `amrex-plotfile`.
    #[cfg(feature = "std")]
    #[doc = include_str!("../crates/amrex-plotfile/README.md")]
    pub struct Plotfile;
    /// `amrex-particles`.
    #[doc = include_str!("../crates/amrex-particles/README.md")]
    pub struct Particles;
}
