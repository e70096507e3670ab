//! `amrex`: the facade over the amrex-rs crates.
//!
//! Each module re-exports one member crate, so a simulation code can depend on this one
//! package; codes that want a single container depend on its crate directly.
#![no_std]

pub use amrex_aos as aos;
pub use amrex_arena as arena;
pub use amrex_array4 as array4;
pub use amrex_basefab as basefab;
pub use amrex_box as boxes;
pub use amrex_dlpack_core as dlpack;
pub use amrex_multifab as multifab;
pub use amrex_podvector as podvector;
pub use amrex_smallmatrix as smallmatrix;

/// The README's Rust examples, compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
