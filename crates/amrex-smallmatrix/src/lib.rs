//! Fixed-size matrices as AMReX's `SmallMatrix`, stored inline (no allocation), with
//! a choice of storage order and of first index (0 or 1), and DLPack export/import.
//!
//! # Quick start
//!
//! ```
//! use amrex_smallmatrix::{ColumnMajor, RowMajor, SmallMatrix, SmallVector};
//!
//! // A 2x3 row-major matrix with Fortran style (1 based) indices.
//! let a = SmallMatrix::<f64, 2, 3, RowMajor, 1>::from_rows([[1., 2., 3.], [4., 5., 6.]]);
//! assert_eq!(a[(2, 1)], 4.0);
//! assert_eq!(a.get(0, 1), None); // index 0 is out of range with START = 1
//!
//! // Products check dimensions in the type system: (2x3) * (3x1) -> (2x1).
//! let x = SmallMatrix::<f64, 3, 1, RowMajor, 1>::from_fn(|i, _| i as f64);
//! let y = a * x;
//! assert_eq!((y[1], y[2]), (14.0, 32.0));
//!
//! // Square-only operations exist only for square types.
//! let i3 = SmallMatrix::<f64, 3, 3>::identity();
//! assert_eq!(i3.trace(), 3.0);
//! assert_eq!(2.0 * i3 - i3, i3);
//!
//! // Column vectors are N x 1 column-major matrices.
//! let v = SmallVector::<f64, 3>::from_cols([[1., 2., 3.]]);
//! assert_eq!(v.dot(&v), 14.0);
//! assert_eq!(v.transpose().shape(), (1, 3));
//!
//! // Storage is flat, in AMReX's order: (i, j) at i + j*R (column-major).
//! let m = SmallMatrix::<i32, 2, 2, ColumnMajor>::from_rows([[1, 2], [3, 4]]);
//! assert_eq!(m.as_slice(), &[1, 3, 2, 4]);
//! ```
//!
//! # Feature flags
//!
//! * `std` (default): implies `alloc`; enables `std` in the dependencies.
//! * `alloc`: DLPack export ([`ToDlpack`](amrex_dlpack_core::ToDlpack) for borrowed and
//!   owned matrices), since a managed tensor is heap allocated. Import and all matrix
//!   operations work without it.
//! * `approx`: `approx::{AbsDiffEq, RelativeEq, UlpsEq}` for matrices.
#![no_std]
#![doc(test(attr(deny(warnings))))]
#![cfg_attr(docsrs, feature(doc_cfg))]
#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

#[cfg(feature = "approx")]
mod approx_impl;
mod dlpack;
mod matrix;
mod ops;
mod order;

pub use matrix::{SmallMatrix, SmallRowVector, SmallVector};
pub use order::{ColumnMajor, Order, RowMajor};
