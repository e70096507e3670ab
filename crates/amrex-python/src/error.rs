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
