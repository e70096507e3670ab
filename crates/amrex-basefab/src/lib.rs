//! AMReX's `BaseFab`, `FArrayBox` and `IArrayBox`: values over a box of cells with
//! components, owned on any [`Arena`] (host or device) or borrowed from a slice, an
//! [`Array4Mut`] or an imported DLPack tensor, and shared with any DLPack consumer
//! without copying.
//!
//! # Quick start
//!
//! ```
//! use amrex_basefab::{FArrayBox, IArrayBox, IndexBox, IntVect};
//! use amrex_dlpack_core::ToDlpack;
//!
//! // A 8³ box with one ghost cell, two components.
//! let valid = IndexBox::new(IntVect::ZERO, IntVect::splat(7));
//! let mut fab = FArrayBox::new(valid.grow(1), 2);
//! fab.set_val(1.0, 0..1, valid)?;               // component 0 on the valid cells
//! fab.set_val(-2.0, 1..2, valid.grow(1))?;      // component 1 everywhere
//! fab.abs(1..2, valid)?;
//! assert_eq!(fab.sum(0..1, valid)?, 512.0);
//! assert_eq!(fab.norm0(1..2, valid.grow(1))?, 2.0);
//! assert_eq!(fab.min(1..2, valid.grow(1))?, -2.0);   // ghost cells kept -2
//!
//! // Kernels index with global indices through an Array4.
//! let mut a = fab.array_mut()?;
//! a[(-1, -1, -1, 0)] = 5.0;
//!
//! // Copy a shifted sub-box of one fab into another.
//! let mut other = FArrayBox::new(valid, 1);
//! let src = IndexBox::new(IntVect::splat(-1), IntVect::splat(0));
//! let dst = IndexBox::new(IntVect::splat(6), IntVect::splat(7));
//! other.copy_from(&fab, 0, src, 0..1, dst)?;
//! assert_eq!(other.array()?[(6, 6, 6, 0)], 5.0);
//!
//! // Share with NumPy, PyTorch or C through DLPack: shape (ncomp, nz, ny, nx).
//! let t = (&fab).to_dlpack()?;
//! assert_eq!(t.shape(), &[2, 10, 10, 10]);
//! assert!(t.is_read_only());
//!
//! let counts = IArrayBox::new(valid, 1);
//! assert_eq!(counts.max(0..1, valid)?, 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Device fabs (`BaseFab::new_in(bx, ncomp, device_arena)`) export device tensors and copy
//! to and from the host ([`BaseFab::to_host`], [`BaseFab::copy_from_host_fab`]); host
//! element operations on them return [`FabError::NotHostAccessible`] and never touch the
//! memory. The refusals and exports are tested on `amrex-arena`'s `FakeDeviceArena`
//! (host memory behind pointers the host cannot dereference), and the tests on real GPU
//! arenas (`tests/gpu.rs`) are ignored on machines without a device; with `cuda` they
//! passed on one NVIDIA H200 (device, pinned and managed memory).
//!
//! # Feature flags
//! - `std` (default): `std` support in the dependencies and `num-traits`; without it the
//!   crate is `no_std` + `alloc` (float math through `libm`).
//! - `single-precision`: [`Real`] (and so [`FArrayBox`]) is `f32` instead of `f64`.
//! - `cuda`, `hip`, `level-zero`: the matching GPU arenas of `amrex-arena` (loaded at run
//!   time), for device fabs (built and tested without a GPU; CUDA run on one H200).
//!
//! # Design notes
//! - `BaseFab<'a, T, A>` carries a lifetime so a fab over a borrowed slice or `Array4Mut`
//!   cannot outlive the borrow; owning fabs are `BaseFab<'static, ..>`, which the
//!   [`FArrayBox`] and [`IArrayBox`] aliases spell for you.
//! - Operations return `Result<_, FabError>` instead of asserting as AMReX does: a box
//!   outside the fab, a bad component range or device memory is a named error, and
//!   nothing is written when one is returned.
//! - Reductions keep 8 partial sums per row (rows of a compact fab are fused into one
//!   slice per component), so they vectorise; results agree with a left-to-right sum to
//!   rounding.
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

mod dlpack;
mod error;
mod fab;
pub mod kernels;
mod ops;

pub use amrex_arena::{Arena, HostArena};
pub use amrex_array4::{Array4, Array4Mut};
pub use amrex_box::{IndexBox, IntVect};
pub use dlpack::FabTensorLayout;
pub use error::FabError;
pub use fab::{BaseFab, component_range};

/// AMReX's `Real`: `f64`, or `f32` with the `single-precision` feature.
#[cfg(not(feature = "single-precision"))]
pub type Real = f64;
/// AMReX's `Real`: `f64`, or `f32` with the `single-precision` feature.
#[cfg(feature = "single-precision")]
pub type Real = f32;

/// An owning fab of [`Real`]s (AMReX `FArrayBox`).
pub type FArrayBox<A = HostArena> = BaseFab<'static, Real, A>;
/// An owning fab of `i32`s (AMReX `IArrayBox`).
pub type IArrayBox<A = HostArena> = BaseFab<'static, i32, A>;
