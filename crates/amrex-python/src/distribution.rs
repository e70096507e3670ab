//! `DistributionMapping` with pyAMReX's names: box index to rank.

use crate::box_array::PyBoxArray;
use crate::parallel::PyCommunicator;
use amrex_multifab::DistributionMapping;
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;

/// Box index → rank (AMReX `DistributionMapping`), on a communicator.
#[pyclass(module = "amrex_rs", name = "DistributionMapping", frozen)]
#[derive(Debug, Clone)]
pub(crate) struct PyDistributionMapping(pub(crate) DistributionMapping);

#[pymethods]
impl PyDistributionMapping {
    /// `DistributionMapping(ba, nranks=None, *, comm=None)`: AMReX's default map (a
    /// space-filling curve) of `ba` over the ranks of `comm`, by default MPI's world in
    /// an MPI build (started on first use) and this one process otherwise. **Collective**
    /// over that communicator only in that every rank must make it alike (no messages).
    /// `nranks=N` maps over N ranks without a communicator: a map to inspect, on which
    /// MultiFabs hold this process's rank-0 boxes and (for N > 1) cannot exchange; N = 1
    /// is the one-process map.
    #[new]
    #[pyo3(signature = (ba, nranks=None, *, comm=None))]
    fn py_new(
        py: Python<'_>,
        ba: &PyBoxArray,
        nranks: Option<usize>,
        comm: Option<&PyCommunicator>,
    ) -> PyResult<Self> {
        match (nranks, comm) {
            (Some(_), Some(_)) => Err(PyValueError::new_err(
                "DistributionMapping: give nranks or comm, not both",
            )),
            (Some(0), None) => Err(PyValueError::new_err("nranks must be at least 1")),
            (Some(n), None) if u32::try_from(n).is_err() => Err(PyValueError::new_err(format!(
                "nranks {n} is more ranks than a map can name (at most {})",
                u32::MAX
            ))),
            (Some(n), None) => Ok(Self(DistributionMapping::with_ranks(&ba.0, n))),
            (None, Some(c)) => Ok(Self(DistributionMapping::on(&ba.0, &c.0))),
            (None, None) => Ok(Self(DistributionMapping::on(
                &ba.0,
                &crate::parallel::default_comm(py)?,
            ))),
        }
    }

    /// The communicator the map's ranks belong to.
    #[getter]
    fn communicator(&self) -> PyCommunicator {
        PyCommunicator(self.0.communicator().clone())
    }

    /// The number of ranks the boxes are spread over.
    #[getter]
    fn nranks(&self) -> usize {
        self.0.nranks()
    }

    /// The rank of each box (pyAMReX `ProcessorMap()`).
    #[pyo3(name = "ProcessorMap")]
    fn processor_map(&self) -> Vec<u32> {
        self.0.pmap().to_vec()
    }

    /// The boxes this rank owns, in increasing order.
    fn local_indices(&self) -> Vec<usize> {
        self.0.local_indices(self.0.my_rank())
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
