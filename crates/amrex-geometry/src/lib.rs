//! AMReX's `Geometry` in Rust: the index domain of a level laid over the problem's
//! physical extent, with its coordinate system and periodicity.
//!
//! | AMReX | here |
//! |---|---|
//! | `RealBox` | [`RealBox`] (always valid: construction checks it) |
//! | `CoordSys::CoordType` (`cartesian`, `RZ`, `SPHERICAL`) and its weights (`GetVolume`, `GetFaceArea`, `GetDLogA`) | [`CoordSys`] |
//! | `Periodicity` | [`Periodicity`] |
//! | `Geometry` | [`Geometry`] |
//!
//! Everything is three-dimensional, as the rest of amrex-rs; 1-D and 2-D problems give
//! the unused directions one cell of unit extent (RZ and spherical: see [`CoordSys`] for
//! what each direction means there).
//!
//! # Quick start
//!
//! ```
//! use amrex_box::{IndexBox, IntVect};
//! use amrex_geometry::{CoordSys, Geometry, RealBox};
//!
//! // 32³ cells over [0, 1]³, periodic in x and y.
//! let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(31));
//! let geom = Geometry::new(domain, RealBox::UNIT, CoordSys::Cartesian, [true, true, false])?;
//! assert_eq!(geom.cell_size(), [1.0 / 32.0; 3]);
//! assert_eq!(geom.cell_centre(IntVect::ZERO), [1.0 / 64.0; 3]);
//! assert_eq!(geom.node_location(IntVect::splat(32)), [1.0; 3]);
//! assert_eq!(geom.cell_index([0.5, 0.25, 0.999]), Some(IntVect::new(16, 8, 31)));
//!
//! // Periodicity: one image on each side of x and y.
//! let p = geom.periodicity();
//! assert_eq!(p.period(), IntVect::new(32, 32, 0));
//! assert_eq!(p.shift_iter(IntVect::splat(2)).count(), 9);
//!
//! // The ghost cells beyond the low-x, low-y corner come from the opposite corner...
//! let ghost = IndexBox::new(IntVect::new(-2, -2, 4), IntVect::new(-1, -1, 5));
//! assert_eq!(geom.periodic_shift(&ghost, &domain).as_slice(), [IntVect::new(-32, -32, 0)]);
//! // ...while those below z = 0 need a physical boundary condition.
//! assert!(geom.outside_physical_domain_box(&domain.grow(1)));
//! assert_eq!(geom.grow_periodic_domain(2).lo(), IntVect::new(-2, -2, 0));
//!
//! // Points, as particles see them.
//! assert!(geom.inside_physical_domain([0.5, 0.5, 0.0]));
//! assert!(geom.outside_physical_domain([0.5, 0.5, 1.0]));
//!
//! // Refined and coarsened levels keep the RealBox.
//! let fine = geom.refine(2)?;
//! assert_eq!(fine.cell_size(), [1.0 / 64.0; 3]);
//! assert_eq!(fine.coarsen(2)?, geom);
//!
//! // An axisymmetric (RZ) 2-D problem: r in [0, 1] by z in [0, 2], the azimuth
//! // integrated (one cell). The cell volumes add up to the cylinder's, π r² h.
//! let rz_domain = IndexBox::new(IntVect::ZERO, IntVect::new(15, 31, 0));
//! let rb = RealBox::new([0.0, 0.0, 0.0], [1.0, 2.0, 1.0])?;
//! let rz = Geometry::new(rz_domain, rb, CoordSys::Rz, [false; 3])?;
//! let total: f64 = rz_domain.iter().map(|iv| rz.volume(iv)).sum();
//! assert!((total - core::f64::consts::PI * 2.0).abs() < 1e-12);
//! # Ok::<(), amrex_geometry::GeometryError>(())
//! ```
//!
//! # Feature flags
//!
//! - `std` (default): implies `alloc`; lets `num-traits` use the standard library's
//!   float functions (otherwise they come from `libm`).
//! - `alloc`: [`Periodicity::shifts`], which collects [`Periodicity::shift_iter`] into a
//!   `Vec`. Everything else works without an allocator.
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

/// The README's example, compiled as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

mod coord_sys;
mod error;
mod geometry;
mod periodicity;
mod real_box;

pub use coord_sys::CoordSys;
pub use error::{GeometryError, GeometryErrorKind, Side};
pub use geometry::{Geometry, ShiftList};
pub use periodicity::{PeriodicShifts, Periodicity};
pub use real_box::RealBox;
