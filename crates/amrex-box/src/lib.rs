//! `amrex-box`: work in progress.
#![no_std]
#[cfg(feature = "std")]
extern crate std;
