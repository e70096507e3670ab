//! `Array4`: AMReX's 4-D view with global indices over memory adopted from any DLPack
//! producer (a NumPy array, a fab's `array()`, a MultiFab's `array(mfi)`), zero-copy, for
//! each element type pyAMReX has: `Array4` (`Array4_double`), `Array4_float`,
//! `Array4_int`, `Array4_uint`, `Array4_long`.
//!
//! `Array4_T(obj, begin=(0, 0, 0))` accepts rank 1–4 tensors seen as `(ncomp, nz, ny, nx)`
//! (unit `i` stride, no negative strides), exactly as `amrex_array4::Array4` imports them;
//! `Array4_T()` is pyAMReX's empty view (`size == 0`, `nComp == 0`). Indexing follows
//! pyAMReX: `a[i, j, k, n]`, `a[i, j, k]` (component 0, as AMReX's `a(i, j, k)`),
//! `a[iv]` with an `IntVect`, and lists as well as tuples. `__dlpack__` re-exports the same
//! memory (READ_ONLY when the producer's was).

use crate::dlpack::common::{Dims, Export, type_name};
use crate::dlpack::export::{DlpackSource, ExportCount};
use crate::dlpack::import::{Sharing, import, to_cupy, to_numpy, to_xp};
use crate::dlpack::install;
use crate::error::py_err;
use crate::geometry::{PyBox, PyIntVect, int_vect_of};
use amrex_array4::{Array4, Array4Mut};
use amrex_box::IntVect;
use amrex_dlpack_capsule::Imported;
use amrex_dlpack_core::{DataType, Device};
use pyo3::exceptions::{PyBufferError, PyIndexError, PyTypeError};
use pyo3::prelude::*;

/// `(i, j, k, n)` from a subscript: an `IntVect` (component 0), or a tuple or list of
/// three (component 0) or four ints, as pyAMReX's `Array4.__getitem__` overloads.
fn index_of(idx: &Bound<'_, PyAny>) -> PyResult<(i32, i32, i32, usize)> {
    if let Ok(iv) = idx.cast::<PyIntVect>() {
        let v = iv.borrow().0;
        return Ok((v.x(), v.y(), v.z(), 0));
    }
    if let Ok(four) = idx.extract::<(i32, i32, i32, usize)>() {
        return Ok(four);
    }
    if let Ok((i, j, k)) = idx.extract::<(i32, i32, i32)>() {
        return Ok((i, j, k, 0));
    }
    if let Ok([i, j, k, n]) = idx.extract::<[i64; 4]>() {
        let n = usize::try_from(n)
            .map_err(|_| PyIndexError::new_err(format!("Array4 component {n} is negative")))?;
        let ijk = [i, j, k].map(i32::try_from);
        if let [Ok(i), Ok(j), Ok(k)] = ijk {
            return Ok((i, j, k, n));
        }
    }
    if let Ok([i, j, k]) = idx.extract::<[i32; 3]>() {
        return Ok((i, j, k, 0));
    }
    Err(PyTypeError::new_err(format!(
        "Array4 indices must be an IntVect or three or four ints (i, j, k[, n]), got {}",
        type_name(idx)
    )))
}

/// `IndexError` for an index outside the view.
fn outside(i: i32, j: i32, k: i32, n: usize) -> PyErr {
    PyIndexError::new_err(format!("Array4 index ({i}, {j}, {k}, {n}) out of range"))
}

/// `ValueError`-free refusal of an empty view's element access.
fn empty_view() -> PyErr {
    PyIndexError::new_err("this Array4 is empty (made by Array4_T()): it has no elements")
}

macro_rules! array4_class {
    ($(#[doc = $doc:literal])+ $ty:ident, $t:ty, $pyname:literal, $dtype:ident) => {
        $(#[doc = $doc])+
        #[pyclass(module = "amrex_rs", name = $pyname)]
        #[derive(Debug)]
        pub(crate) struct $ty {
            /// The adopted memory; `None` for the empty view of `Array4_T()`.
            tensor: Option<Imported>,
            begin: IntVect,
        }

        impl $ty {
            /// A view over an adopted tensor, validated once with the Array4 rules.
            pub(crate) fn from_imported(tensor: Imported, begin: IntVect) -> PyResult<Self> {
                let a = Self { tensor: Some(tensor), begin };
                a.view()?;
                Ok(a)
            }

            fn tensor(&self) -> PyResult<&Imported> {
                self.tensor.as_ref().ok_or_else(empty_view)
            }

            fn view(&self) -> PyResult<Array4<'_, $t>> {
                Array4::from_dlpack_view(&self.tensor()?.view(), self.begin).map_err(py_err)
            }

            fn view_mut(&mut self) -> PyResult<Array4Mut<'_, $t>> {
                let begin = self.begin;
                let v = match self.tensor.as_mut().ok_or_else(empty_view)? {
                    Imported::Versioned(t) => t.view_mut(),
                    Imported::Legacy(t) => t.view_mut(),
                }
                .map_err(py_err)?;
                Array4Mut::from_dlpack_view_mut(v, begin).map_err(py_err)
            }

            fn export(&self) -> PyResult<Export<'static>> {
                let Some(tensor) = &self.tensor else {
                    // The empty view: no elements, shape (0, 0, 0, 0), like pyAMReX's
                    // default-constructed Array4.
                    return Ok(Export {
                        data: core::ptr::NonNull::<$t>::dangling().as_ptr().cast(),
                        device: Device::CPU,
                        host_accessible: true,
                        dtype: DataType::$dtype,
                        shape: Dims::new(&[0, 0, 0, 0]),
                        strides: Dims::new(&[1, 1, 1, 1]),
                        read_only: false,
                        copier: None,
                    });
                };
                let a = self.view()?;
                let len = a.length();
                let shape = [
                    a.ncomp() as i64,
                    i64::from(len.z),
                    i64::from(len.y),
                    i64::from(len.x),
                ];
                let strides = [a.nstride() as i64, a.kstride() as i64, a.jstride() as i64, 1];
                let device = tensor.view().device();
                Ok(Export {
                    data: a.as_ptr().cast_mut().cast(),
                    device,
                    host_accessible: device.is_host_accessible(),
                    dtype: DataType::$dtype,
                    shape: Dims::new(&shape),
                    strides: Dims::new(&strides),
                    read_only: tensor.is_read_only(),
                    copier: None,
                })
            }
        }

        impl DlpackSource for $ty {
            fn with_export<R>(
                slf: &Bound<'_, Self>,
                f: impl FnOnce(&Export<'_>, Option<&ExportCount>) -> PyResult<R>,
            ) -> PyResult<R> {
                // The adopted tensor lives as long as this object and never moves.
                f(&slf.try_borrow()?.export()?, None)
            }
        }

        #[pymethods]
        impl $ty {
            /// `Array4_T()`: an empty view; `Array4_T(obj, begin=(0, 0, 0))`: adopts a
            /// DLPack producer's array of this element type zero-copy (another Array4
            /// too: a second view of the same memory), its first cell at `begin`.
            #[new]
            #[pyo3(signature = (obj=None, begin=None))]
            fn py_new(
                obj: Option<&Bound<'_, PyAny>>,
                begin: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<Self> {
                let begin = begin.map_or(Ok(IntVect::ZERO), int_vect_of)?;
                match obj {
                    None => Ok(Self { tensor: None, begin }),
                    Some(o) => {
                        let begin = match o.cast::<Self>() {
                            Ok(a) if a.borrow().tensor.is_some() => {
                                let b = a.borrow().begin;
                                if begin == IntVect::ZERO { b } else { begin }
                            }
                            Ok(_) => return Ok(Self { tensor: None, begin }),
                            Err(_) => begin,
                        };
                        Self::from_imported(import(o)?, begin)
                    }
                }
            }

            /// First cell (inclusive).
            #[getter]
            fn begin(&self) -> PyResult<(i32, i32, i32)> {
                let b = match &self.tensor {
                    Some(_) => self.view()?.begin(),
                    None => self.begin,
                };
                Ok((b.x(), b.y(), b.z()))
            }

            /// One past the last cell (exclusive), as AMReX's `Array4::end`.
            #[getter]
            fn end(&self) -> PyResult<(i32, i32, i32)> {
                if self.tensor.is_none() {
                    return self.begin();
                }
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
                match &self.tensor {
                    Some(_) => Ok(self.view()?.ncomp()),
                    None => Ok(0),
                }
            }

            /// Number of components (pyAMReX's property `nComp`).
            #[getter(nComp)]
            fn n_comp(&self) -> PyResult<usize> {
                self.ncomp()
            }

            /// Number of components (pyAMReX's property `num_comp`).
            #[getter]
            fn num_comp(&self) -> PyResult<usize> {
                self.ncomp()
            }

            /// Number of elements, all components (pyAMReX's property `size`).
            #[getter]
            fn size(&self) -> PyResult<u64> {
                match &self.tensor {
                    Some(_) => {
                        let a = self.view()?;
                        Ok(a.index_box().num_pts() * a.ncomp() as u64)
                    }
                    None => Ok(0),
                }
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
                self.tensor.as_ref().is_some_and(Imported::is_read_only)
            }

            /// Address of the first element.
            fn data_ptr(&self) -> PyResult<usize> {
                Ok(self.export()?.data.addr())
            }

            /// Whether the cell `(i, j, k)` (or an IntVect) is inside the view.
            #[pyo3(signature = (i, j=None, k=None))]
            fn contains(&self, i: &Bound<'_, PyAny>, j: Option<i32>, k: Option<i32>) -> PyResult<bool> {
                let p = match (j, k) {
                    (Some(j), Some(k)) => IntVect::new(i.extract()?, j, k),
                    (None, None) => int_vect_of(i)?,
                    _ => {
                        return Err(PyTypeError::new_err(
                            "Array4.contains takes (i, j, k) or an IntVect",
                        ));
                    }
                };
                Ok(self.tensor.is_some() && self.view()?.index_box().contains(p))
            }

            /// Value at global `(i, j, k)`, component `n`.
            #[pyo3(signature = (i, j, k, n=0))]
            fn get(&self, i: i32, j: i32, k: i32, n: usize) -> PyResult<$t> {
                self.view()?.get(i, j, k, n).copied().ok_or_else(|| outside(i, j, k, n))
            }

            /// Writes global `(i, j, k)`, component `n` (refused for read-only producers).
            #[pyo3(signature = (i, j, k, n, value))]
            fn set(&mut self, i: i32, j: i32, k: i32, n: usize, value: $t) -> PyResult<()> {
                let mut a = self.view_mut()?;
                *a.get_mut(i, j, k, n).ok_or_else(|| outside(i, j, k, n))? = value;
                Ok(())
            }

            /// Sets every element to `value` (refused for read-only producers).
            fn fill(&mut self, value: $t) -> PyResult<()> {
                if self.tensor.is_none() {
                    return Ok(());
                }
                let mut a = self.view_mut()?;
                let bx = a.index_box();
                a.for_each_mut(bx, |_, _, _, _, v| *v = value);
                Ok(())
            }

            /// `a[i, j, k, n]` (global indices), `a[i, j, k]` and `a[iv]` (component 0,
            /// as pyAMReX), with a tuple or a list.
            fn __getitem__(&self, idx: &Bound<'_, PyAny>) -> PyResult<$t> {
                let (i, j, k, n) = index_of(idx)?;
                self.get(i, j, k, n)
            }

            /// `a[i, j, k, n] = value`; `a[i, j, k] = value` and `a[iv] = value` write
            /// component 0, as pyAMReX.
            fn __setitem__(&mut self, idx: &Bound<'_, PyAny>, value: $t) -> PyResult<()> {
                let (i, j, k, n) = index_of(idx)?;
                self.set(i, j, k, n, value)
            }

            /// `(device_type, device_id)` of the memory, as DLPack's `__dlpack_device__`.
            fn __dlpack_device__(&self) -> PyResult<(i32, i32)> {
                Ok(self.export()?.device_tuple())
            }

            /// NumPy view `(nx, ny, nz, ncomp)` (`order="F"`, the default, as pyAMReX), or
            /// `(ncomp, nz, ny, nx)` with `order="C"`.
            #[pyo3(signature = (copy=false, order="F"))]
            fn to_numpy<'py>(
                slf: &Bound<'py, Self>,
                copy: bool,
                order: &str,
            ) -> PyResult<Bound<'py, PyAny>> {
                let src = slf.borrow().export()?;
                to_numpy(slf.as_any(), &src, Sharing::copy_if(copy), order)
            }

            /// An array of the module matching the device (NumPy, CuPy or dpnp), F order by
            /// default.
            #[pyo3(signature = (copy=false, order="F"))]
            fn to_xp<'py>(
                slf: &Bound<'py, Self>,
                copy: bool,
                order: &str,
            ) -> PyResult<Bound<'py, PyAny>> {
                let src = slf.borrow().export()?;
                to_xp(slf.as_any(), &src, Sharing::copy_if(copy), order)
            }

            /// A CuPy array of the memory, F order by default (pyAMReX `to_cupy`).
            #[pyo3(signature = (copy=false, order="F"))]
            fn to_cupy<'py>(
                slf: &Bound<'py, Self>,
                copy: bool,
                order: &str,
            ) -> PyResult<Bound<'py, PyAny>> {
                to_cupy(slf.as_any(), Sharing::copy_if(copy), order)
            }

            fn __repr__(&self) -> String {
                match (&self.tensor, self.view()) {
                    (None, _) => format!("{}()", $pyname),
                    (Some(_), Ok(a)) => {
                        format!("{}({}, ncomp={})", $pyname, a.index_box(), a.ncomp())
                    }
                    (Some(_), Err(_)) => format!("{}(<invalid>)", $pyname),
                }
            }
        }
    };
}

array4_class! {
    /// A 4-D `f64` view with global indices (AMReX `Array4<Real>`, pyAMReX `Array4_double`).
    PyArray4, f64, "Array4", F64
}
array4_class! {
    /// A 4-D `f32` view with global indices (pyAMReX `Array4_float`).
    PyArray4F32, f32, "Array4_float", F32
}
array4_class! {
    /// A 4-D `i32` view with global indices (pyAMReX `Array4_int`, an `IArrayBox`'s data).
    PyArray4I32, i32, "Array4_int", I32
}
array4_class! {
    /// A 4-D `u32` view with global indices (pyAMReX `Array4_uint`).
    PyArray4U32, u32, "Array4_uint", U32
}
array4_class! {
    /// A 4-D `i64` view with global indices (pyAMReX `Array4_long`).
    PyArray4I64, i64, "Array4_long", I64
}

impl PyArray4 {
    /// Adopts `obj` with its first cell at `begin` (a fab's `array4()`).
    pub(crate) fn adopt(obj: &Bound<'_, PyAny>, begin: (i32, i32, i32)) -> PyResult<Self> {
        Self::from_imported(import(obj)?, IntVect::new(begin.0, begin.1, begin.2))
    }
}

/// `amrex_rs.array4_from_dlpack(obj, begin=(0, 0, 0))`: an `Array4` over any producer.
#[pyfunction]
#[pyo3(signature = (obj, begin=None))]
fn array4_from_dlpack(
    obj: &Bound<'_, PyAny>,
    begin: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray4> {
    PyArray4::py_new(Some(obj), begin)
}

/// `amrex_rs.array4_from_dlpack_mut(obj, begin)`: as `array4_from_dlpack`, refusing
/// read-only producers and strides that alias elements up front.
#[pyfunction]
#[pyo3(signature = (obj, begin=None))]
fn array4_from_dlpack_mut(
    obj: &Bound<'_, PyAny>,
    begin: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray4> {
    let mut a = PyArray4::py_new(Some(obj), begin)?;
    if a.read_only() {
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
    m.add_class::<PyArray4F32>()?;
    install::<PyArray4F32>(m.py())?;
    m.add_class::<PyArray4I32>()?;
    install::<PyArray4I32>(m.py())?;
    m.add_class::<PyArray4U32>()?;
    install::<PyArray4U32>(m.py())?;
    m.add_class::<PyArray4I64>()?;
    install::<PyArray4I64>(m.py())?;
    m.add_function(wrap_pyfunction!(array4_from_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(array4_from_dlpack_mut, m)?)?;
    Ok(())
}
