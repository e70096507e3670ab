//! Bindings for the operations between AMR levels (amrex-amr) and the geometry they take
//! (amrex-geometry), with pyAMReX's names: [`geometry`] (`RealBox`, `CoordSys`,
//! `Periodicity`, `Geometry`), [`bc`] (`BCType`, `BCRec`, `fill_physical_boundary`),
//! [`average`] (`average_down` and its relatives), [`interp`] (the interpolater
//! objects), [`fill_patch`] (FillPatch) and [`flux_register`] (`FluxRegister`).
//!
//! Every operation takes host `float64` MultiFabs: a MultiFab in device memory raises
//! `NotImplementedError` (naming `to_host()`), as the library's level operations run on
//! host memory only. A refused argument raises `ValueError` with the library's message,
//! before anything is written.

pub(crate) mod amr_core;
pub(crate) mod average;
pub(crate) mod bc;
pub(crate) mod fill_patch;
pub(crate) mod flux_register;
pub(crate) mod geometry;
pub(crate) mod interp;

use crate::multifab::PyMultiFab;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The fine MultiFab to read and the coarse one to write, borrowed together; passing one
/// MultiFab as both is a `ValueError` (it cannot be read and written at once).
pub(crate) fn read_write<'py>(
    op: &str,
    src: &Bound<'py, PyMultiFab>,
    dst: &Bound<'py, PyMultiFab>,
) -> PyResult<(PyRef<'py, PyMultiFab>, PyRefMut<'py, PyMultiFab>)> {
    if src.is(dst) {
        return Err(PyValueError::new_err(format!(
            "{op}: the MultiFab to read and the MultiFab to write are the same object"
        )));
    }
    Ok((src.try_borrow()?, dst.try_borrow_mut()?))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    geometry::register(m)?;
    bc::register(m)?;
    average::register(m)?;
    interp::register(m)?;
    fill_patch::register(m)?;
    flux_register::register(m)?;
    amr_core::register(m)
}
