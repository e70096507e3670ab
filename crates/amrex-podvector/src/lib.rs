//! AMReX's `PODVector` in Rust: a growable array of plain-old-data on any
//! [`Arena`] (host, pinned, device, managed), with AMReX's growth
//! strategies and zero-copy DLPack export and import.
//!
//! ```
//! use amrex_podvector::{GrowthStrategy, PodVector};
//!
//! let mut v: PodVector<f64> = PodVector::new();
//! for i in 0..10 {
//!     v.push(f64::from(i));
//! }
//! assert_eq!(v.capacity(), 12); // 8, then (3 * 8 + 1) / 2
//! assert_eq!(v.iter().sum::<f64>(), 45.0);
//!
//! let mut exact = PodVector::<i32>::new().with_growth_strategy(GrowthStrategy::Exact);
//! exact.resize(5, 7);
//! assert_eq!(exact.capacity(), 5);
//! ```
//!
//! # Host and device
//!
//! | arena | memory | `Deref<Target = [T]>` | host access | DLPack device |
//! |---|---|---|---|---|
//! | [`HostArena`] | pageable host | yes | always | `kDLCPU` |
//! | CUDA / HIP pinned, Level Zero host USM | page-locked host | yes | always | `kDLCUDAHost` / `kDLROCMHost` / `kDLCPU` |
//! | CUDA / HIP managed, Level Zero shared USM | migrating | no | [`try_as_slice`](PodVector::try_as_slice) after synchronising | `kDLCUDAManaged` / `kDLROCM` / `kDLOneAPI` |
//! | CUDA / HIP / Level Zero device | device only | no | never: `copy_to_host`, `to_host_vec` | `kDLCUDA` / `kDLROCM` / `kDLOneAPI` |
//!
//! # DLPack
//! Vectors export shape `(len,)`, stride `(1,)` and their arena's device (an empty vector
//! too, with a NULL data pointer): by value the vector moves into the tensor, `&v` is
//! `READ_ONLY`, `&mut v` writable. [`DlpackVector`] adopts a rank-1 host tensor without
//! copying (its deleter runs on drop); [`PodVector::from_dlpack_copy`] copies one into a
//! new vector on any arena.
//!
//! ```
//! use amrex_dlpack_core::{FromDlpack, ToDlpack};
//! use amrex_podvector::{DlpackVector, PodVector};
//!
//! let mut v = PodVector::from_slice(&[1i32, 2, 3]);
//! let mut t = (&mut v).to_dlpack()?; // a writable view for a consumer
//! t.as_mut_slice::<i32>()?[0] = 10;
//! drop(t);
//! assert_eq!(v, [10, 2, 3]);
//! let adopted = DlpackVector::<i32>::from_dlpack(v.to_dlpack()?)?;
//! assert_eq!(&*adopted, &[10, 2, 3]);
//! # Ok::<(), amrex_dlpack_core::DlpackError>(())
//! ```
//!
//! # Prefetch
//! [`prefetch_read`] and [`prefetch_index`] hint that host memory will be read soon (one
//! `prefetcht0` on x86-64, nothing elsewhere). Loops that read one record
//! and then do tens of instructions of work on it, such as the particle loops of
//! `amrex-particles`, issue them a few kilobytes ahead: on machines whose hardware
//! prefetcher stays close, such a loop otherwise waits on each record's cache line.
//!
//! # Feature flags
//! - `std` (default): `std` support in the arena and DLPack crates.
//! - `ndarray`: `ArrayView1` / `ArrayViewMut1` of host-accessible vectors (`view`,
//!   `view_mut`).
//! - `cuda`, `hip`, `level-zero`: turn on the matching `amrex-arena` backend, so
//!   [`DeviceVector`], [`PinnedVector`] and [`ManagedVector`] can hold memory. This
//!   builds and fails cleanly without a GPU. Vectors in GPU memory are exercised by
//!   `amrex-arena`'s device tests, which are ignored on machines without a device; with
//!   `cuda` they passed on one NVIDIA H200 (HIP and Level Zero never ran on a device).
#![no_std]
#![doc(test(attr(deny(warnings))))]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod dlpack;
mod growth;
#[cfg(feature = "ndarray")]
mod ndarray_impl;
mod prefetch;
mod vector;

pub use amrex_arena::{Arena, ArenaError, HostAccessible, HostArena};
pub use dlpack::DlpackVector;
pub use growth::GrowthStrategy;
pub use prefetch::{prefetch_index, prefetch_read};
pub use vector::PodVector;

/// A vector in device memory (AMReX `Gpu::DeviceVector`). Defaults to CUDA; use
/// `DeviceVector<T, HipDeviceArena>` or `DeviceVector<T, ZeDeviceArena>` for the others.
pub type DeviceVector<T, A = amrex_arena::cuda::CudaDeviceArena> = PodVector<T, A>;
/// A vector in pinned host memory (AMReX `Gpu::HostVector`).
pub type HostVector<T, A = amrex_arena::cuda::CudaPinnedArena> = PodVector<T, A>;
/// A vector in pinned host memory (AMReX `Gpu::PinnedVector`).
pub type PinnedVector<T, A = amrex_arena::cuda::CudaPinnedArena> = PodVector<T, A>;
/// A vector in managed memory (AMReX `Gpu::ManagedVector`).
pub type ManagedVector<T, A = amrex_arena::cuda::CudaManagedArena> = PodVector<T, A>;
