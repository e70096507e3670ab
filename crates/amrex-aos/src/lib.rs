//! AMReX particles: [`Particle`] with AMReX's byte layout and id/cpu packing, and the
//! strided DLPack field views an array of particles is shared through.
#![no_std]
#![doc(test(attr(deny(warnings))))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod aos;
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
