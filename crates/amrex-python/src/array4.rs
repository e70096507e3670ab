//! `Array4`: AMReX's 4-D view with global indices over memory adopted from any DLPack
//! producer (a NumPy array, a fab's `array()`), zero-copy.
//!
//! `Array4(obj, begin=(0, 0, 0))` accepts rank 1–4 tensors seen as `(ncomp, nz, ny, nx)`
//! (unit `i` stride, no negative strides), exactly as `amrex_array4::Array4` imports them;
//! `a.get(i, j, k, n)` / `a.set(...)` use global indices, and `__dlpack__` re-exports the
//! same memory (READ_ONLY when the producer's was).

use crate::dlpack::common::{Dims, Export, dlpack_err};
use crate::dlpack::export::{DlpackSource, ExportCount};
use crate::dlpack::import::{Sharing, import, to_numpy, to_xp};
use crate::dlpack::install;
use crate::geometry::{PyBox, int_vect_of};
use amrex_array4::{Array4, Array4Mut};
use amrex_box::IntVect;
use amrex_dlpack_capsule::Imported;
use amrex_dlpack_core::DataType;
use pyo3::exceptions::{PyBufferError, PyIndexError, PyTypeError};
use pyo3::prelude::*;

/// A 4-D `f64` view with global indices (AMReX `Array4<Real>`, pyAMReX `Array4_double`).
#[pyclass(module = "amrex_rs", name = "Array4")]
#[derive(Debug)]
pub(crate) struct PyArray4 {
    tensor: Imported,
    begin: IntVect,
}

impl PyArray4 {
    fn view(&self) -> PyResult<Array4<'_, f64>> {
        Array4::from_dlpack_view(&self.tensor.view(), self.begin).map_err(dlpack_err)
    }

    fn view_mut(&mut self) -> PyResult<Array4Mut<'_, f64>> {
        let begin = self.begin;
        let v = match &mut self.tensor {
            Imported::Versioned(t) => t.view_mut(),
            Imported::Legacy(t) => t.view_mut(),
        }
        .map_err(dlpack_err)?;
        Array4Mut::from_dlpack_view_mut(v, begin).map_err(dlpack_err)
    }

    fn export(&self) -> PyResult<Export<'static>> {
        let a = self.view()?;
        let len = a.length();
        let shape = [
            a.ncomp() as i64,
            i64::from(len.z),
            i64::from(len.y),
            i64::from(len.x),
        ];
        let strides = [
            a.nstride() as i64,
            a.kstride() as i64,
            a.jstride() as i64,
            1,
        ];
        let device = self.tensor.view().device();
        Ok(Export {
            data: a.as_ptr().cast_mut().cast(),
            device,
            host_accessible: device.is_host_accessible(),
            dtype: DataType::F64,
            shape: Dims::new(&shape),
            strides: Dims::new(&strides),
            read_only: self.tensor.is_read_only(),
            copier: None,
        })
    }
}

impl PyArray4 {
    /// `(i, j, k, n)` from a subscript: four ints, or three for a one-component view.
    fn index_of(&self, idx: &Bound<'_, PyAny>) -> PyResult<(i32, i32, i32, usize)> {
        if let Ok(four) = idx.extract::<(i32, i32, i32, usize)>() {
            return Ok(four);
        }
        if let Ok((i, j, k)) = idx.extract::<(i32, i32, i32)>() {
            let nc = self.view()?.ncomp();
            if nc != 1 {
                return Err(PyIndexError::new_err(format!(
                    "Array4[i, j, k] needs a one-component view, this one has {nc} \
                     components: index it as [i, j, k, n]"
                )));
            }
            return Ok((i, j, k, 0));
        }
        Err(PyTypeError::new_err(format!(
            "Array4 indices must be (i, j, k) or (i, j, k, n) ints, got {}",
            crate::dlpack::common::type_name(idx)
        )))
    }

    /// Adopts `obj` with its first cell at `begin`.
    pub(crate) fn adopt(obj: &Bound<'_, PyAny>, begin: (i32, i32, i32)) -> PyResult<Self> {
        let a = Self {
            tensor: import(obj)?,
            begin: IntVect::new(begin.0, begin.1, begin.2),
        };
        a.view()?;
        Ok(a)
    }
}

impl DlpackSource for PyArray4 {
    fn with_export<R>(
        slf: &Bound<'_, Self>,
        f: impl FnOnce(&Export<'_>, Option<&ExportCount>) -> PyResult<R>,
    ) -> PyResult<R> {
        // The adopted tensor lives as long as this object and never moves.
        f(&slf.try_borrow()?.export()?, None)
    }
}

#[pymethods]
impl PyArray4 {
    /// Adopts a DLPack producer's float64 array zero-copy, its first cell at `begin`.
    #[new]
    #[pyo3(signature = (obj, begin=None))]
    fn py_new(obj: &Bound<'_, PyAny>, begin: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let begin = begin.map_or(Ok(IntVect::ZERO), int_vect_of)?;
        let a = Self {
            tensor: import(obj)?,
            begin,
        };
        a.view()?; // validate once, with the Array4 rules
        Ok(a)
    }

    /// First cell (inclusive).
    #[getter]
    fn begin(&self) -> PyResult<(i32, i32, i32)> {
        let b = self.view()?.begin();
        Ok((b.x(), b.y(), b.z()))
    }

    /// One past the last cell (exclusive), as AMReX's `Array4::end`.
    #[getter]
    fn end(&self) -> PyResult<(i32, i32, i32)> {
        let e = self.view()?.end();
        Ok((e.x(), e.y(), e.z()))
    }

    /// The cell box.
    #[getter]
    fn r#box(&self) -> PyResult<PyBox> {
        Ok(PyBox(self.view()?.index_box()))
    }

    /// Number of components.
    #[getter]
    fn ncomp(&self) -> PyResult<usize> {
        Ok(self.view()?.ncomp())
    }

    /// Stride between `j` rows, in elements.
    #[getter]
    fn jstride(&self) -> PyResult<usize> {
        Ok(self.view()?.jstride())
    }

    /// Stride between `k` planes, in elements.
    #[getter]
    fn kstride(&self) -> PyResult<usize> {
        Ok(self.view()?.kstride())
    }

    /// Stride between components, in elements.
    #[getter]
    fn nstride(&self) -> PyResult<usize> {
        Ok(self.view()?.nstride())
    }

    /// Whether the producer forbade writes.
    #[getter]
    fn read_only(&self) -> bool {
        self.tensor.is_read_only()
    }

    /// Value at global `(i, j, k)`, component `n`.
    #[pyo3(signature = (i, j, k, n=0))]
    fn get(&self, i: i32, j: i32, k: i32, n: usize) -> PyResult<f64> {
        self.view()?
            .get(i, j, k, n)
            .copied()
            .ok_or_else(|| PyIndexError::new_err(format!("({i}, {j}, {k}, {n}) out of range")))
    }

    /// Writes global `(i, j, k)`, component `n` (refused for read-only producers).
    #[pyo3(signature = (i, j, k, n, value))]
    fn set(&mut self, i: i32, j: i32, k: i32, n: usize, value: f64) -> PyResult<()> {
        let mut a = self.view_mut()?;
        *a.get_mut(i, j, k, n)
            .ok_or_else(|| PyIndexError::new_err(format!("({i}, {j}, {k}, {n}) out of range")))? =
            value;
        Ok(())
    }

    /// Sets every element to `value` (refused for read-only producers).
    fn fill(&mut self, value: f64) -> PyResult<()> {
        let mut a = self.view_mut()?;
        let bx = a.index_box();
        a.for_each_mut(bx, |_, _, _, _, v| *v = value);
        Ok(())
    }

    /// `a[i, j, k, n]` (global indices); `a[i, j, k]` on a one-component view, as in
    /// pyAMReX.
    fn __getitem__(&self, idx: &Bound<'_, PyAny>) -> PyResult<f64> {
        let (i, j, k, n) = self.index_of(idx)?;
        self.get(i, j, k, n)
    }

    /// `a[i, j, k, n] = value`; `a[i, j, k] = value` on a one-component view.
    fn __setitem__(&mut self, idx: &Bound<'_, PyAny>, value: f64) -> PyResult<()> {
        let (i, j, k, n) = self.index_of(idx)?;
        self.set(i, j, k, n, value)
    }

    /// `(device_type, device_id)` of the memory, as DLPack's `__dlpack_device__`.
    fn __dlpack_device__(&self) -> PyResult<(i32, i32)> {
        Ok(self.export()?.device_tuple())
    }

    /// NumPy view `(ncomp, nz, ny, nx)`, or `(nx, ny, nz, ncomp)` with `order="F"`.
    #[pyo3(signature = (copy=false, order="F"))]
    fn to_numpy<'py>(
        slf: &Bound<'py, Self>,
        copy: bool,
        order: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let src = slf.borrow().export()?;
        to_numpy(slf.as_any(), &src, Sharing::copy_if(copy), order)
    }

    /// An array of the module matching the device.
    #[pyo3(signature = (copy=false, order="F"))]
    fn to_xp<'py>(slf: &Bound<'py, Self>, copy: bool, order: &str) -> PyResult<Bound<'py, PyAny>> {
        let src = slf.borrow().export()?;
        to_xp(slf.as_any(), &src, Sharing::copy_if(copy), order)
    }

    fn __repr__(&self) -> String {
        match self.view() {
            Ok(a) => format!("Array4({}, ncomp={})", a.index_box(), a.ncomp()),
            Err(_) => "Array4(<invalid>)".into(),
        }
    }
}

/// `amrex_rs.array4_from_dlpack(obj, begin=(0, 0, 0))`: an `Array4` over any producer.
#[pyfunction]
#[pyo3(signature = (obj, begin=None))]
fn array4_from_dlpack(
    obj: &Bound<'_, PyAny>,
    begin: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray4> {
    PyArray4::py_new(obj, begin)
}

/// `amrex_rs.array4_from_dlpack_mut(obj, begin)`: as `array4_from_dlpack`, refusing
/// read-only producers and strides that alias elements up front.
#[pyfunction]
#[pyo3(signature = (obj, begin=None))]
fn array4_from_dlpack_mut(
    obj: &Bound<'_, PyAny>,
    begin: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray4> {
    let mut a = PyArray4::py_new(obj, begin)?;
    if a.tensor.is_read_only() {
        return Err(PyBufferError::new_err(
            "DLPack: expected a writable tensor, got one flagged READ_ONLY",
        ));
    }
    a.view_mut()?;
    Ok(a)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyArray4>()?;
    install::<PyArray4>(m.py())?;
    m.add("Array4_double", m.py().get_type::<PyArray4>())?;
    m.add_function(wrap_pyfunction!(array4_from_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(array4_from_dlpack_mut, m)?)?;
    Ok(())
}
