//! `MFIter` with pyAMReX's names: one item of a MultiFab's iteration (`mf.mfiter()`).

use crate::geometry::{PyBox, int_vect_of};
use amrex_multifab::Mfi;
use pyo3::prelude::*;

/// One `MFIter` item: a local box (or tile) of a MultiFab.
#[pyclass(module = "amrex_rs", name = "MFIter", frozen)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct PyMfi(pub(crate) Mfi);

#[pymethods]
impl PyMfi {
    /// Global box index (a property, as pyAMReX's `mfi.index`).
    #[getter]
    fn index(&self) -> usize {
        self.0.index()
    }

    /// Local box index.
    fn local_index(&self) -> usize {
        self.0.local_index()
    }

    /// The tile box (the valid box without tiling).
    fn tilebox(&self) -> PyBox {
        PyBox(self.0.tilebox())
    }

    /// The valid box.
    fn validbox(&self) -> PyBox {
        PyBox(self.0.validbox())
    }

    /// The valid box grown by the ghost cells.
    fn fabbox(&self) -> PyBox {
        PyBox(self.0.fabbox())
    }

    /// The tile box grown by `ng` at the fab's boundary.
    fn growntilebox(&self, ng: &Bound<'_, PyAny>) -> PyResult<PyBox> {
        Ok(PyBox(self.0.growntilebox(int_vect_of(ng)?)))
    }

    fn __repr__(&self) -> String {
        format!(
            "MFIter(index={}, tilebox={})",
            self.0.index(),
            self.0.tilebox()
        )
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyMfi>()
}
