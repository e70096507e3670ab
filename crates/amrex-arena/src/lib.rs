//! Memory resources ("arenas") for host, pinned, device and managed memory, with GPU
//! backends for CUDA, ROCm/HIP and Level Zero loaded at run time.
//!
//! **Only the CUDA backend has run on a GPU** (one NVIDIA H200, driver 580, CUDA 13.0:
//! every device test of `tests/backends.rs`; the kernels, from NVRTC 13.0's CUBIN and
//! from the shipped PTX, matched the host loops in `amrex-multifab`'s device tests).
//! What the tests check without one: each
//! backend builds; it loads its runtime library lazily (nothing links against a GPU
//! runtime); it fails cleanly with an [`ArenaError`] where the library or driver is
//! missing (observed: [`ErrorKind::LibraryNotFound`] for CUDA and HIP with no runtime
//! installed, [`ErrorKind::NoDriver`] for Level Zero with the loader and no driver); and
//! the CUDA device kernels compile with NVRTC, with the shipped PTX assembled by
//! `ptxas`. HIP and Level Zero have never run on a device, and have no device kernels at
//! all: their device and managed/shared arenas return [`ErrorKind::NoKernels`] for all
//! [`kernels::Kernels`] work.
//!
//! ```
//! use amrex_arena::{Arena, HostArena, MemoryKind};
//! use core::alloc::Layout;
//!
//! let arena = HostArena;
//! let layout = Layout::array::<f64>(4).unwrap();
//! let p = arena.allocate(layout)?;
//! let data = [1.0f64, 2.0, 3.0, 4.0];
//! // SAFETY: `p` holds 32 bytes from this arena; `data` is 32 readable bytes elsewhere.
//! unsafe { arena.copy_from_host(p, data.as_ptr().cast(), 32)? };
//! let mut back = [0.0f64; 4];
//! // SAFETY: as above, in the other direction.
//! unsafe { arena.copy_to_host(back.as_mut_ptr().cast(), p, 32)? };
//! assert_eq!(back, data);
//! assert_eq!(arena.kind(), MemoryKind::Host);
//! // SAFETY: `p` came from `allocate(layout)` and is no longer used.
//! unsafe { arena.deallocate(p, layout) };
//!
//! // A backend that is missing (feature off, library absent, no driver, no device) is an
//! // error value, never a panic:
//! match amrex_arena::cuda::CudaDeviceArena::new(0) {
//!     Ok(gpu) => println!("CUDA device memory on {}", gpu.device()),
//!     Err(e) => println!("no CUDA: {e}"),
//! }
//! # Ok::<(), amrex_arena::ArenaError>(())
//! ```
//!
//! # Feature flags
//! - `std` (default): `std` support; required by every GPU backend.
//! - `cuda`: CUDA device, pinned and managed arenas through `cudarc` (driver API,
//!   dynamic loading).
//! - `hip`: HIP device, pinned and managed arenas through our own bindings to
//!   `libamdhip64`, loaded with `libloading`.
//! - `level-zero`: Level Zero device, shared and host USM arenas through `level-zero-sys`.
//! - `testing`: test support, `testing::FakeDeviceArena` (a host-backed stand-in for
//!   device memory); enable it in dev-dependencies only.
//!
//! Without a feature its module still exists with the same type names, and every
//! constructor returns [`ErrorKind::NotCompiled`], so callers need no `cfg`.
//!
//! # Host and device
//!
//! | arena | [`MemoryKind`] | [`HostAccessible`] | DLPack device | allocator |
//! |---|---|---|---|---|
//! | [`HostArena`] | `Host` | yes | `kDLCPU`, 0 | global allocator |
//! | `cuda::CudaPinnedArena` | `Pinned` | yes | `kDLCUDAHost`, 0 | `cuMemHostAlloc` (portable) |
//! | `cuda::CudaManagedArena` | `Managed` | at run time, after `synchronize` | `kDLCUDAManaged`, ordinal | `cuMemAllocManaged` |
//! | `cuda::CudaDeviceArena` | `Device` | no | `kDLCUDA`, ordinal | `cuMemAlloc` |
//! | `hip::HipPinnedArena` | `Pinned` | yes | `kDLROCMHost`, 0 | `hipHostMalloc` |
//! | `hip::HipManagedArena` | `Managed` | at run time | `kDLROCM`, ordinal | `hipMallocManaged` |
//! | `hip::HipDeviceArena` | `Device` | no | `kDLROCM`, ordinal | `hipMalloc` |
//! | `level_zero::ZeHostArena` | `Pinned` | yes | `kDLCPU`, 0 | `zeMemAllocHost` |
//! | `level_zero::ZeSharedArena` | `Managed` | at run time | `kDLOneAPI`, root-device index | `zeMemAllocShared` |
//! | `level_zero::ZeDeviceArena` | `Device` | no | `kDLOneAPI`, root-device index | `zeMemAllocDevice` |
//!
//! Containers deref to slices only on [`HostAccessible`] arenas (a compile-time marker).
//! Managed memory reports [`Arena::host_accessible`] `true` and may be read after
//! [`Arena::synchronize`]; device memory moves only through the bulk operations
//! ([`Arena::copy_from_host`], [`Arena::copy_to_host`], [`Arena::copy_within`],
//! [`Arena::fill_bytes`], [`copy_between`]). Zero-size allocations never reach a backend.
//!
//! # CUDA (`cuda`)
//! Loads the driver library (`libcuda.so.1` / `libcuda.so`; `nvcuda.dll`) with
//! `libloading` and looks up every driver function used before the first `cudarc` call
//! (cudarc panics on a missing library or symbol; we return
//! [`ErrorKind::LibraryNotFound`] / [`ErrorKind::SymbolNotFound`] instead). `cuInit`
//! failing is [`ErrorKind::NoDriver`] with the `CUresult`; no device is
//! [`ErrorKind::NoDevice`]; a bad ordinal [`ErrorKind::DeviceOutOfRange`]; a failing call
//! [`ErrorKind::Driver`] with `cuGetErrorName`'s text; out of memory
//! [`ErrorKind::AllocationFailed`]. Each arena retains the device's primary context (so it
//! shares memory with the CUDA runtime, CuPy and PyTorch) and makes it current per call.
//! Device and managed allocations are 256-byte aligned, pinned ones page aligned; larger
//! alignments are [`ErrorKind::UnsupportedAlignment`].
//!
//! # HIP (`hip`)
//! Twelve functions (`hipGetDeviceCount`, `hipSetDevice`, `hipMalloc`, `hipFree`,
//! `hipHostMalloc`, `hipHostFree`, `hipMallocManaged`, `hipMemcpy`, `hipMemset`,
//! `hipDeviceSynchronize`, `hipRuntimeGetVersion`, `hipGetErrorString`) are resolved from
//! `libamdhip64.so` (or `.so.7`, `.so.6`, `.so.5`) with `libloading`, in a raw binding
//! layer of our own (the C names and constants of `hip_runtime_api.h`, with their sizes
//! asserted) under the safe arenas, as `cudarc` is for CUDA and `level-zero-sys` for Level
//! Zero. The `hip-sys` crate is not used: its build script needs ROCm installed and it
//! links the runtime, which breaks builds and binaries on machines without ROCm. Errors
//! map as for CUDA (the message is `hipGetErrorString`'s). Every call sets the arena's
//! device first.
//!
//! # Level Zero (`level-zero`)
//! Opens `libze_loader.so.1` through `level-zero-sys`. The loader alone (Debian's
//! `libze1`, no GPU driver) makes `zeInit` fail with `ZE_RESULT_ERROR_UNINITIALIZED`:
//! [`ErrorKind::NoDriver`]. One context per driver lives for the process; copies and
//! fills use a synchronous immediate command list per arena. Device ordinals count root
//! devices over all drivers, as `kDLOneAPI` ids do. SYCL consumers (dpctl, dpnp) accept
//! DLPack memory only from the SYCL platform's default context, which a plain Level Zero
//! program cannot obtain: they may refuse our USM or copy it.
//!
//! # Testing with a device
//! `tests/backends.rs` has one test body per backend and memory kind, generated by a
//! macro: on the device it allocates, grows, fills, copies both ways and exports through
//! DLPack. The test machines have no GPU, so these tests are `#[ignore]`d with the reason
//! and `cargo test` lists them as ignored; on a machine with a device,
//! `cargo test -p amrex-arena --features cuda,testing --tests -- --include-ignored` (or
//! `hip`, `level-zero`; `scripts/gpu-check.sh` does it for CUDA) runs them. The
//! no-library / no-driver tests are not ignored: they check the exact error of every
//! constructor on machines without the runtime.
//!
//! `testing::FakeDeviceArena` runs the host loops on host memory behind shifted
//! pointers: tests of containers on it check their device code paths (regions, batching,
//! argument checks), not device arithmetic.
#![no_std]
#![doc(test(attr(deny(warnings))))]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

#[cfg(feature = "std")]
mod any;
mod arena;
mod backend;
mod error;
mod host;
pub mod kernels;

#[cfg(feature = "std")]
pub use any::AnyArena;
pub use arena::{Arena, HostAccessible, MemoryKind, copy_between, dangling};
pub use error::{ArenaError, Backend, ErrorKind};
pub use host::HostArena;

#[cfg(feature = "testing")]
pub mod testing;

pub use backend::{cuda, hip, level_zero};
