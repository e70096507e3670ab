//! `amrex-multifab`: work in progress.
#![no_std]
#[cfg(feature = "std")]
extern crate std;
