//! AMReX particles: [`Particle`] with AMReX's byte layout and bit-exact id/cpu packing
//! ([`idcpu`]), [`ArrayOfStructs`] and [`StructOfArrays`] on any arena, and zero-copy
//! DLPack views — per field (strided) for arrays of structs, per component for structs
//! of arrays. The layout and the views are described in `docs/particles.md`.
//!
//! # Quick start
//!
//! ```
//! use amrex_aos::{ArrayOfStructs, FieldKind, Particle, StructOfArrays, idcpu};
//!
//! // Particles with 2 real and 1 int component: 56 bytes each, as in AMReX.
//! type P = Particle<2, 1>;
//! assert_eq!(core::mem::size_of::<P>(), 56);
//!
//! let mut aos = ArrayOfStructs::<P>::new();
//! for i in 0..10 {
//!     // position, reals, id, cpu, ints
//!     aos.push(P::with_fields([i as f64, 0.0, 0.0], [1.0, -1.0], i + 1, 0, [7]));
//! }
//! aos.set_num_neighbors(2)?; // halo slots at the end
//! assert_eq!((aos.len(), aos.num_particles()), (12, 10));
//!
//! // Push x += dt * v on the host.
//! for p in aos.particles_mut() {
//!     p.pos[0] += 0.5 * p.rdata[0];
//! }
//!
//! // The ids, as AMReX packs them: sign/valid bit, 39-bit |id|, 24-bit cpu.
//! assert_eq!(aos[3].id(), 4);
//! aos[3].make_invalid();
//! assert_eq!((aos[3].id(), aos[3].is_valid()), (-4, false));
//! assert_eq!(idcpu::id(idcpu::make_id_cpu(-5, 9)), -5);
//!
//! // Zero-copy DLPack view of one field: stride = 56 / 8 = 7 elements.
//! let x = aos.field_to_dlpack(FieldKind::Position(0))?;
//! assert_eq!((x.shape(), x.view().stride(0)), (&[12_i64][..], 7));
//! assert_eq!(*x.view().typed::<f64>()?.get(&[2]).unwrap(), 2.5);
//! drop(x);
//!
//! // The same data component by component.
//! let mut soa = StructOfArrays::<5, 1>::new();
//! for p in aos.particles() {
//!     soa.push(p.idcpu, &[p.pos[0], p.pos[1], p.pos[2], p.rdata[0], p.rdata[1]], &p.idata)?;
//! }
//! assert_eq!(soa.real(0)[2], 2.5);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Feature flags
//! - `std` (default): `std` support in the dependencies; without it the crate is
//!   `no_std` + `alloc`.
//! - `single-precision-particles`: [`ParticleReal`] is `f32` instead of `f64` (the
//!   examples here assume `f64`).
//! - `cuda`, `hip`, `level-zero`: the matching GPU arenas of `amrex-arena` (loaded at run
//!   time), for particles in device memory. The device tests (`tests/gpu.rs`) are
//!   ignored on machines without one (with `cuda` they passed on one NVIDIA H200; HIP and
//!   Level Zero never ran on a device), and the host-side device paths are tested on
//!   `amrex-arena`'s `FakeDeviceArena` (host memory behind pointers the host cannot
//!   dereference).
#![no_std]
#![doc(test(attr(deny(warnings))))]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod aos;
mod convert;
mod error;
mod fields;
pub mod idcpu;
mod particle;
mod soa;

pub use aos::ArrayOfStructs;
pub use error::{CompKind, ParticleError};
pub use fields::{
    Field, FieldKind, ParticleLayout, StridedLayout, field_layout, real_block_layout,
};
pub use particle::{Particle, ParticleReal, SPACEDIM};
pub use soa::{ComponentsMut, StructOfArrays};

/// The examples of `docs/particles.md`, compiled and run as doctests.
#[doc = include_str!("../../../docs/particles.md")]
#[cfg(doctest)]
pub struct ParticlesGuide;
