//! `DistributionMapping` with pyAMReX's names: box index to rank.

use crate::box_array::PyBoxArray;
use amrex_multifab::DistributionMapping;
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;

/// Box index → rank (AMReX `DistributionMapping`); this module runs as one rank.
#[pyclass(module = "amrex_rs", name = "DistributionMapping", frozen)]
#[derive(Debug, Clone)]
pub(crate) struct PyDistributionMapping(pub(crate) DistributionMapping);

#[pymethods]
impl PyDistributionMapping {
    /// `DistributionMapping(ba, nranks=1)` (space-filling curve, AMReX's default).
    #[new]
    #[pyo3(signature = (ba, nranks=1))]
    fn py_new(ba: &PyBoxArray, nranks: usize) -> PyResult<Self> {
        if nranks == 0 {
            return Err(PyValueError::new_err("nranks must be at least 1"));
        }
        Ok(Self(DistributionMapping::with_ranks(&ba.0, nranks)))
    }

    fn __len__(&self) -> usize {
        self.0.len()
    }

    /// The rank owning box `i`.
    fn rank_of(&self, i: usize) -> PyResult<usize> {
        if i >= self.0.len() {
            return Err(PyIndexError::new_err("box index out of range"));
        }
        Ok(self.0.rank_of(i))
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDistributionMapping>()
}
