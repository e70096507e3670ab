//! AMReX's `Array4`: strided 4-D views `a(i, j, k, n)` with **global** indices, for
//! writing kernels over boxes of cells in Rust and handing the data to any DLPack
//! consumer without copying.
//!
//! - [`Array4<'a, T>`] is a shared view (`Copy`, like `&'a [T]`); [`Array4Mut<'a, T>`] a
//!   unique one (like `&'a mut [T]`, with [`reborrow`](Array4Mut::reborrow)).
//! - Indexing is AMReX's: `i` has unit stride, then `j`, `k`, and the component `n` is
//!   slowest; indices are global, so ghost cells sit below the valid box's `small_end`.
//!   `a[(i, j, k, n)]` panics with the index and the bounds; [`Array4::get`] returns an
//!   `Option`; `get_unchecked` is `unsafe` and still `debug_assert!`s.
//! - Views of components ([`Array4::components`]) and of sub-boxes
//!   ([`Array4::sub_box`]) keep global indices and strides.
//! - Loop helpers ([`for_each_cell`], [`Array4Mut::for_each_mut`],
//!   [`Array4Mut::zip_mut_with`], [`Array4Mut::stencil_mut_with`]) check bounds once and
//!   let the compiler vectorise along `i`; [`Array4Mut::into_tiles`] and
//!   [`Array4Mut::split_at`] give disjoint mutable views for threads.
//! - DLPack: export with shape `(ncomp, nz, ny, nx)` and strides
//!   `(nstride, kstride, jstride, 1)`, as pyAMReX does (`alloc` feature); import any host
//!   tensor of rank 1–4 with unit `i` stride ([`Array4::from_dlpack_view`]).
//!
//! See `docs/indexing.md` in the repository for a guide to global indices, ghost cells
//! and the `(n, k, j, i)` versus `(i, j, k, n)` views.
//!
//! # Quick start
//!
//! ```
//! use amrex_array4::{Array4, Array4Mut, IndexBox, IntVect, Stencil};
//!
//! // A 8³ valid box with one ghost cell: the data covers (-1,-1,-1) ..= (8,8,8).
//! let valid = IndexBox::new(IntVect::ZERO, IntVect::splat(7));
//! let grown = valid.grow(1);
//! let mut phi = vec![0.0_f64; grown.num_pts() as usize];
//! let mut lap = vec![0.0_f64; valid.num_pts() as usize];
//!
//! // Fill phi = x² + y² + z² everywhere, ghost cells included (global indices).
//! let mut p = Array4Mut::new(&mut phi, grown, 1);
//! p.for_each_mut(grown, |i, j, k, _n, v| *v = f64::from(i * i + j * j + k * k));
//! assert_eq!(p[(-1, 0, 0, 0)], 1.0);
//!
//! // 7-point Laplacian over the valid box, bounds checked once.
//! let p = Array4::new(&phi, grown, 1);
//! let mut out = Array4Mut::new(&mut lap, valid, 1);
//! out.stencil_mut_with(p, valid, |o, s: Stencil<'_, f64, 1>| {
//!     *o = s.at(1, 0, 0) + s.at(-1, 0, 0) + s.at(0, 1, 0) + s.at(0, -1, 0)
//!         + s.at(0, 0, 1) + s.at(0, 0, -1) - 6.0 * s.center();
//! });
//! assert!(lap.iter().all(|&v| v == 6.0));
//! ```
//!
//! # Feature flags
//!
//! - `std` (default): implies `alloc`; nothing else.
//! - `alloc`: DLPack export ([`ToDlpack`](amrex_dlpack_core::ToDlpack) for `Array4` and
//!   `Array4Mut`), which allocates the managed-tensor header. Import and everything else
//!   work without it; the crate itself never allocates.
//! - `ndarray`: zero-copy `ndarray` views in `(n, k, j, i)` (C order) and `(i, j, k, n)`
//!   (Fortran order) index order.
#![no_std]
#![warn(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss
)]
#![doc(test(attr(deny(warnings))))]
#![cfg_attr(docsrs, feature(doc_cfg))]
#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod array4;
mod dlpack;
mod error;
pub mod hint;
mod layout;
mod loops;
#[cfg(feature = "ndarray")]
mod ndarray_bridge;
mod raw;
pub mod rows;
pub mod simd;

// The proofs of the narrowing casts this crate keeps (its `#[expect]`s) use that a
// difference of two `i32`, at most `u32::MAX`, fits `usize`.
const _: () = assert!(
    usize::BITS >= 32,
    "amrex-array4 needs a usize of 32 bits or more"
);

pub use amrex_box::{Dim3, IndexBox, IndexSpaceError, IndexType, IntVect};

/// The examples of `docs/indexing.md`, compiled and run as doctests.
#[doc = include_str!("../../../docs/indexing.md")]
#[cfg(doctest)]
pub struct IndexingGuide;
pub use array4::{Array4, Array4Mut, CellData, CellDataMut};
pub use error::Array4Error;
pub use layout::{Access, FabLayout};
pub use loops::{Stencil, TilesMut, for_each_cell, for_each_cell_n};
