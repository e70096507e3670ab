//! AMReX's index space: [`IntVect`], [`Dim3`], [`IndexType`] and the index box
//! [`IndexBox`] with its algebra.
//!
//! Everything here is three-dimensional, as in AMReX built with `AMREX_SPACEDIM = 3`;
//! one- and two-dimensional problems use unit extents in the unused directions.
//! Boxes are *inclusive* on both ends (`small_end ..= big_end`) and carry an
//! [`IndexType`] that says, per direction, whether indices name cells or nodes.
//!
//! # Quick start
//!
//! ```
//! use amrex_box::{IndexBox, IntVect};
//!
//! // A 128³ cell-centred domain, as in pyAMReX's tests.
//! let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(127));
//! assert_eq!(domain.num_pts(), 128 * 128 * 128);
//!
//! // Three ghost cells on each side.
//! let grown = domain.grow(3);
//! assert_eq!(grown.small_end(), IntVect::splat(-3));
//! assert_eq!(grown.length(), IntVect::splat(134));
//!
//! // The nodes around the cells.
//! assert_eq!(domain.surrounding_nodes().length(), IntVect::splat(129));
//!
//! // A one-cell-thick slab at k = 60.
//! let slab = domain.make_slab(2, 60);
//! assert_eq!((slab.lo(), slab.hi()), (IntVect::new(0, 0, 60), IntVect::new(127, 127, 60)));
//!
//! // Fortran-order linear index (i fastest) and its inverse.
//! let p = IntVect::new(5, 6, 7);
//! let n = domain.index(p);
//! assert_eq!(n, 5 + 128 * (6 + 128 * 7));
//! assert_eq!(domain.at_index(n), p);
//!
//! // Cells in Fortran order.
//! let small = IndexBox::new(IntVect::ZERO, IntVect::new(1, 1, 0));
//! let cells: [IntVect; 4] = core::array::from_fn(|n| small.at_index(n));
//! assert!(small.iter().eq(cells));
//! ```
//!
//! # The index space
//!
//! Corners are `i32`, as in AMReX. [`IntVect`] arithmetic panics on overflow in every
//! build profile (a wrapped corner would describe another box), and boxes made from
//! numbers that come from outside — a tensor's shape, a file — go through one checked
//! rule, [`IndexBox::check_index_space`] and its constructors
//! ([`IndexBox::try_from_lo_len`], [`IndexBox::try_grow_ghost`]), which return an
//! [`IndexSpaceError`] naming the direction and the numbers: in every direction
//! `big_end + 1` and the length must be `i32`.
//!
//! # Feature flags
//!
//! - `std` (default): nothing beyond `core` is used; the flag exists so that the
//!   workspace's feature ladder is uniform. The crate never allocates.
#![no_std]
#![warn(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss
)]
#![doc(test(attr(deny(warnings))))]
#![cfg_attr(docsrs, feature(doc_cfg))]
#[cfg(feature = "std")]
extern crate std;

mod index_box;
mod index_space;
mod index_type;
mod int_vect;
mod iter;

pub use index_box::IndexBox;
pub use index_space::{IndexSpaceError, check_ghost};
pub use index_type::IndexType;
pub use int_vect::{Dim3, IntVect, SPACEDIM};
pub use iter::{Cells, Tiles};
