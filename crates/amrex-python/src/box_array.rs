//! `BoxArray` with pyAMReX's names: a list of boxes, chopped by `max_size`.

use crate::geometry::{PyBox, int_vect_of};
use amrex_multifab::BoxArray;
use pyo3::exceptions::PyIndexError;
use pyo3::prelude::*;

/// A list of boxes (AMReX `BoxArray`).
///
/// Mutable as in pyAMReX: `ba.max_size(n)` chops the boxes in place. Objects built from a
/// BoxArray (a DistributionMapping, a MultiFab) keep the boxes it had then.
#[pyclass(module = "amrex_rs", name = "BoxArray")]
#[derive(Debug, Clone)]
pub(crate) struct PyBoxArray(pub(crate) BoxArray);

#[pymethods]
impl PyBoxArray {
    /// `BoxArray(domain, max_size=None)` chops `domain` so no side exceeds `max_size`;
    /// `BoxArray([box, ...])` takes the boxes as given.
    #[new]
    #[pyo3(signature = (boxes, max_size=None))]
    fn py_new(boxes: &Bound<'_, PyAny>, max_size: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        if let Ok(domain) = boxes.cast::<PyBox>() {
            let domain = domain.borrow().0;
            return Ok(Self(match max_size {
                Some(m) => BoxArray::from_domain_iv(domain, int_vect_of(m)?),
                None => BoxArray::new(vec![domain]),
            }));
        }
        let list: Vec<PyBox> = boxes
            .try_iter()?
            .map(|b| Ok(*b?.cast::<PyBox>()?.borrow()))
            .collect::<PyResult<_>>()?;
        let ba = BoxArray::new(list.into_iter().map(|b| b.0).collect());
        Ok(Self(match max_size {
            Some(m) => ba.max_size(int_vect_of(m)?),
            None => ba,
        }))
    }

    /// Chops every box in place so no side exceeds `n` (an int or IntVect), as pyAMReX's
    /// `ba.max_size(n)`, and returns this BoxArray (so `ba.max_size(n)` chained or
    /// assigned sees the chopped boxes too).
    fn max_size<'py>(
        mut slf: PyRefMut<'py, Self>,
        n: &Bound<'_, PyAny>,
    ) -> PyResult<PyRefMut<'py, Self>> {
        slf.0 = slf.0.max_size(int_vect_of(n)?);
        Ok(slf)
    }

    /// The smallest box holding every box.
    fn minimal_box(&self) -> PyBox {
        PyBox(self.0.minimal_box())
    }

    fn __len__(&self) -> usize {
        self.0.len()
    }

    /// Number of boxes (pyAMReX `size`).
    fn size(&self) -> usize {
        self.0.len()
    }

    fn __getitem__(&self, i: isize) -> PyResult<PyBox> {
        let n = self.0.len() as isize;
        let j = if i < 0 { i + n } else { i };
        if !(0..n).contains(&j) {
            return Err(PyIndexError::new_err("BoxArray index out of range"));
        }
        Ok(PyBox(self.0.get(j as usize)))
    }

    fn __repr__(&self) -> String {
        format!("BoxArray({} boxes, {})", self.0.len(), self.0.minimal_box())
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyBoxArray>()
}
