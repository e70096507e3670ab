//! AMReX's particle container: particles tied to the grids of a level hierarchy,
//! [`redistribute`](ParticleContainer::redistribute)d across tiles and MPI ranks,
//! deposited onto and gathered from `MultiFab`s, and written as AMReX particle
//! plotfiles. See `docs/particles.md` for the design, next to AMReX's names.
//!
//! # Quick start
//!
//! ```
//! use amrex_geometry::{CoordSys, Geometry, RealBox};
//! use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IntVect, MultiFab};
//! use amrex_particles::{AosTile, ParticleArrays, ParticleContainer, ParticleTile};
//!
//! // 16^3 cells over the unit cube, periodic, in 8^3 grids.
//! let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(15));
//! let rb = RealBox::new([0.0; 3], [1.0; 3])?;
//! let geom = Geometry::new(domain, rb, CoordSys::Cartesian, [true; 3])?;
//! let ba = BoxArray::from_domain(domain, 8);
//! let dm = DistributionMapping::new(&ba);
//!
//! // Particle<1, 0> (one real: the charge) and no run-time component.
//! let mut pc = ParticleContainer::new(geom, &ba, &dm, AosTile::<1, 0>::new(0, 0));
//! let (x, y, z) = ([0.1, 0.6, 1.2], [0.1, 0.5, 0.3], [0.2, 0.9, -0.1]);
//! let q = [1.0, 2.0, 3.0];
//! let report = pc.add_particles(&ParticleArrays::new(&x, &y, &z).with_reals(&[&q]))?;
//! assert_eq!(report.added, 3);
//! let r = pc.redistribute()?; // wraps 1.2 -> 0.2 and -0.1 -> 0.9
//! assert_eq!((pc.num_particles()?, r.removed_outside), (3, 0));
//!
//! // Cloud-in-cell charge deposition: the total is the particles' total.
//! let mut rho = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
//! rho.set_val(0.0, .., 1)?;
//! pc.deposit_cic(0, &mut rho, 0, |t, i| t.real(i, 0))?;
//! assert!((rho.sum(0..1, 0)? - 6.0).abs() < 1e-12);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Feature flags
//! - `std` (default): rayon threads over tiles and grids, particle plotfiles; without
//!   it the crate is `no_std` + `alloc` and loops run on one thread.
//! - `mpi`: MPI through `amrex-runtime`'s communicator (redistribute works on any
//!   communicator; this feature builds the MPI one).
//! - `ndarray`: `add_particles_ndarray`, particles from ndarray views.
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

mod communication;
mod container;
mod error;
#[cfg(feature = "std")]
pub mod io;
mod locator;
mod mesh;
mod redistribute;
mod tile;

pub use amrex_aos::{Particle, ParticleReal, idcpu};
pub use container::{
    AddReport, ParticleArrays, ParticleContainer, ParticleLevel, TileMut, TileRef,
};
pub use error::{ErrorKind, ParticleContainerError, Result};
pub use locator::GridLocator;
pub use mesh::{Linear, MeshMap, Nearest};
pub use redistribute::RedistributeReport;
pub use tile::{AosTile, ParticleTile, SoaTile};
