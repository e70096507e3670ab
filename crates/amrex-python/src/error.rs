//! Python exceptions for refused fab and MultiFab operations.

use amrex_basefab::FabError;
use pyo3::exceptions::{PyIndexError, PyNotImplementedError, PyValueError};
use pyo3::prelude::*;

/// Maps a refused fab or MultiFab operation to a Python exception: an index past the
/// container (components, a box outside the fab) is an `IndexError`, an operation that
/// device memory cannot run (no kernel, several ranks) a `NotImplementedError`, the rest
/// `ValueError`.
pub(crate) fn fab_err(e: FabError) -> PyErr {
    match e {
        FabError::ComponentsOutside { .. } | FabError::BoxOutside { .. } => {
            PyIndexError::new_err(e.to_string())
        }
        FabError::NoKernel { .. } | FabError::DeviceNeedsOneProcess { .. } => {
            PyNotImplementedError::new_err(e.to_string())
        }
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// Maps a refused AMR-level operation to `ValueError` with the library's message (which
/// names the operation and the offending value): the averages and interpolaters, the
/// boundary records and the physical-boundary fill, the flux register (amrex-amr) and
/// the geometry they take (amrex-geometry). Every such refusal is a bad argument and
/// leaves the data as it was. Every AMR error of the bindings goes through here, so
/// another error type or another exception for one kind is a change in this one place.
pub(crate) fn amr_err(e: impl core::error::Error) -> PyErr {
    PyValueError::new_err(e.to_string())
}
