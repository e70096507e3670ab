//! `amrex-multifab`: AMReX's distributed-array layer.
#![no_std]
#![doc(test(attr(deny(warnings))))]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod box_array;
mod boxlist;
mod distribution;
mod lock;
mod periodicity;
pub mod plan;

pub use box_array::BoxArray;
pub use distribution::{DistributionMapping, Strategy};
pub use periodicity::Periodicity;
pub use plan::{CopyPlan, CopyTag};
