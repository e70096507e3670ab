//! `amrex-multifab`: AMReX's distributed-array layer.
#![no_std]
#![doc(test(attr(deny(warnings))))]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod box_array;
mod boxlist;
mod comm;
mod distribution;
mod dlpack;
mod element;
mod fabarray;
mod lock;
mod mfiter;
mod ops;
mod par;
mod periodicity;
pub mod plan;

pub use amrex_arena::{Arena, HostArena};
pub use amrex_array4::{Array4, Array4Mut};
pub use amrex_box::{IndexBox, IndexType, IntVect};
pub use box_array::BoxArray;
pub use comm::CopyOp;
pub use distribution::{DistributionMapping, Strategy};
pub use element::Element;
pub use fabarray::{FabArray, MultiFab, iMultiFab};
pub use mfiter::{DEFAULT_TILE_SIZE, MFIter, Mfi, Tiling};
pub use par::TileMut;
pub use periodicity::Periodicity;
pub use plan::{CopyPlan, CopyTag};
