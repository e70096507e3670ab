//! AMReX's `PODVector` in Rust: a growable array of plain-old-data on any
//! [`Arena`](amrex_arena::Arena) (host, pinned, device, managed), with AMReX's growth
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
//! # Feature flags
//! - `std` (default): `std` support in the arena and DLPack crates.
//! - `ndarray`: `ArrayView1` / `ArrayViewMut1` of host-accessible vectors.
#![no_std]
#![doc(test(attr(deny(warnings))))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod dlpack;
mod growth;
#[cfg(feature = "ndarray")]
mod ndarray_impl;
mod vector;

pub use amrex_arena::{Arena, ArenaError, HostAccessible, HostArena};
pub use dlpack::DlpackVector;
pub use growth::GrowthStrategy;
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
