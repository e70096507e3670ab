//! MultiFabs of other element types, in host memory: `iMultiFab` (`int32`, AMReX's
//! `iMultiFab`) and `MultiFab_float` (`float32`, AMReX's `FabArray<BaseFab<float>>`), with
//! the everyday API of the `float64` MultiFab and its pyAMReX defaults (`to_xp()` of whole
//! fabs in F order, `array(mfi)` an `Array4_int`/`Array4_float`, `set_val(v)` over ghost
//! cells, the positional `(nghost)` and `(comp, num_comp, nghost)` forms). Not here: device
//! memory, global indexing (`mf[...]`), plotfiles and the AMR-level operations, which take
//! `float64` MultiFabs. The fabs `IArrayBox` and `FArrayBox_float` sit here too.

use super::{ArrayModule, Form, checked_layout, corners, ghosts_of, part_of, per_box};
use crate::array4::{PyArray4F32, PyArray4I32};
use crate::box_array::PyBoxArray;
use crate::distribution::PyDistributionMapping;
use crate::dlpack::import::{Sharing, Tensor, to_numpy};
use crate::error::py_err;
use crate::geometry::{PyBox, PyIntVect, int_vect_of};
use crate::mfiter::PyMfi;
use amrex_box::IntVect;
use amrex_dlpack_capsule::Imported;
use amrex_multifab::{FabArray, Ghosts, Tiling};
use pyo3::exceptions::{PyIndexError, PyNotImplementedError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

/// `(lo, hi)` corners as tuples.
type Corners = ((i32, i32, i32), (i32, i32, i32));

macro_rules! typed_multifab {
    (
        $(#[doc = $doc:literal])+
        $ty:ident, $t:ty, $pyname:literal, $array4:ident
    ) => {
        $(#[doc = $doc])+
        #[pyclass(module = "amrex_rs", name = $pyname)]
        #[derive(Debug)]
        pub(crate) struct $ty(FabArray<$t>);

        impl $ty {
            /// Zero-copy tensors of every local box.
            fn tensors(&self, ghosts: Ghosts) -> Vec<Tensor> {
                // SAFETY: Python holds the GIL while it reads or writes the arrays and while
                // this MultiFab's methods run, so the sharing the function warns about
                // happens only as in pyAMReX (NumPy threads that release the GIL); no Rust
                // reference into the tensors is kept across calls.
                unsafe { self.0.to_dlpack_per_box_detached(ghosts) }
                    .into_iter()
                    .map(|t| Tensor::new(Imported::Versioned(t)))
                    .collect()
            }

            fn ng(&self, ngrow: Option<&Bound<'_, PyAny>>) -> PyResult<IntVect> {
                match ngrow {
                    None => Ok(IntVect::ZERO),
                    Some(n) => {
                        let ng = int_vect_of(n)?;
                        self.0.check_ghost_width(ng).map_err(py_err)?;
                        Ok(ng)
                    }
                }
            }
        }

        #[pymethods]
        impl $ty {
            /// `(ba, dm, ncomp=1, ngrow=0)`: zero-initialised, host memory.
            #[new]
            #[pyo3(signature = (ba, dm, ncomp=1, ngrow=None))]
            fn py_new(
                ba: &PyBoxArray,
                dm: &PyDistributionMapping,
                ncomp: usize,
                ngrow: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<Self> {
                let ng = checked_layout(ba, dm, ngrow)?;
                Ok(Self(FabArray::new(&ba.0, &dm.0, ncomp, ng)))
            }

            /// Number of components.
            #[getter]
            fn ncomp(&self) -> usize {
                self.0.ncomp()
            }

            /// Number of components (pyAMReX's property `n_comp`).
            #[getter]
            fn n_comp(&self) -> usize {
                self.0.ncomp()
            }

            /// Number of components (pyAMReX's property `nComp`).
            #[getter(nComp)]
            fn n_comp_camel(&self) -> usize {
                self.0.ncomp()
            }

            /// Number of components (pyAMReX's property `num_comp`).
            #[getter]
            fn num_comp(&self) -> usize {
                self.0.ncomp()
            }

            /// Ghost cells per direction.
            #[getter]
            fn n_grow_vect(&self) -> PyIntVect {
                PyIntVect(self.0.n_grow())
            }

            /// Number of boxes.
            #[getter]
            fn size(&self) -> usize {
                self.0.box_array().len()
            }

            fn __len__(&self) -> usize {
                self.0.local_size()
            }

            /// The BoxArray.
            fn box_array(&self) -> PyBoxArray {
                PyBoxArray(self.0.box_array().clone())
            }

            /// The DistributionMapping.
            fn dm(&self) -> PyDistributionMapping {
                PyDistributionMapping(self.0.distribution_map().clone())
            }

            /// `MFIter` items of the local boxes (tiles with `tiling=True`).
            #[pyo3(signature = (tiling=false))]
            fn mfiter(&self, tiling: bool) -> Vec<PyMfi> {
                let tiling = if tiling { Tiling::Default } else { Tiling::None };
                self.0.mfiter(tiling).map(PyMfi).collect()
            }

            fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                Ok(PyList::new(py, self.mfiter(false))?.try_iter()?.into_any())
            }

            /// The `(lo, hi)` corners of each local box (with ghost cells by default), in
            /// the order of `to_xp`.
            #[pyo3(signature = (ghosts=true))]
            fn boxes(&self, ghosts: bool) -> Vec<Corners> {
                let m = &self.0;
                (0..m.local_size())
                    .map(|l| {
                        let g = m.global_index(l);
                        corners(if ghosts { m.fabbox(g) } else { m.box_of(g) })
                    })
                    .collect()
            }

            /// The fab of `mfi` with its ghost cells as an Array4 with global indices.
            fn array(&self, mfi: &PyMfi) -> PyResult<$array4> {
                let l = mfi.0.local_index();
                if l >= self.0.local_size() {
                    return Err(PyIndexError::new_err("MFIter item of another MultiFab"));
                }
                let begin = self.0.fabbox(self.0.global_index(l)).small_end();
                // SAFETY: as in `tensors`.
                let t = unsafe { self.0.to_dlpack_box_detached(l, Ghosts::Include) };
                $array4::from_imported(Imported::Versioned(t), begin)
            }

            /// One array per local box: the whole fab with its ghost cells, zero-copy,
            /// `(x, y, z, comp)` (`order="F"`) or `(comp, z, y, x)` (`order="C"`);
            /// `ghosts=False` for the valid cells.
            #[pyo3(signature = (copy=false, order="F", *, ghosts=true))]
            fn to_xp<'py>(
                &self,
                py: Python<'py>,
                copy: bool,
                order: &str,
                ghosts: bool,
            ) -> PyResult<Vec<Bound<'py, PyAny>>> {
                per_box(py, self.tensors(ghosts_of(ghosts)), ArrayModule::Xp, copy, order)
            }

            /// NumPy arrays of every local box, as `to_xp`.
            #[pyo3(signature = (copy=false, order="F", *, ghosts=true))]
            fn to_numpy<'py>(
                &self,
                py: Python<'py>,
                copy: bool,
                order: &str,
                ghosts: bool,
            ) -> PyResult<Vec<Bound<'py, PyAny>>> {
                per_box(py, self.tensors(ghosts_of(ghosts)), ArrayModule::Numpy, copy, order)
            }

            /// `x = -x`: `negate(nghost=0)` or `negate(comp, num_comp, nghost=0)`.
            #[pyo3(signature = (*args, comp=None, ncomp=None, ngrow=None))]
            fn negate(
                &mut self,
                args: &Bound<'_, PyTuple>,
                comp: Option<usize>,
                ncomp: Option<usize>,
                ngrow: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<()> {
                let p = part_of(&self.0, $pyname, "negate", Form::Nghost, args, comp, ncomp, ngrow)?;
                self.0.negate(p.comp..p.comp + p.nc, p.ng).map_err(py_err)
            }

            /// `x = |x|` on components `comp..comp+ncomp` over `ngrow` ghost cells.
            #[pyo3(signature = (comp=0, ncomp=None, ngrow=None))]
            fn abs(
                &mut self,
                comp: usize,
                ncomp: Option<usize>,
                ngrow: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<()> {
                let nc = ncomp.unwrap_or(self.0.ncomp().saturating_sub(comp));
                let ng = self.ng(ngrow)?;
                self.0.abs(comp..comp.saturating_add(nc), ng).map_err(py_err)
            }

            /// Smallest value of `comp` (over `ngrow` ghost cells).
            #[pyo3(signature = (comp=0, ngrow=None))]
            fn min(&self, comp: usize, ngrow: Option<&Bound<'_, PyAny>>) -> PyResult<$t> {
                let ng = self.ng(ngrow)?;
                self.0.min(comp..=comp, ng).map_err(py_err)
            }

            /// Largest value of `comp` (over `ngrow` ghost cells).
            #[pyo3(signature = (comp=0, ngrow=None))]
            fn max(&self, comp: usize, ngrow: Option<&Bound<'_, PyAny>>) -> PyResult<$t> {
                let ng = self.ng(ngrow)?;
                self.0.max(comp..=comp, ng).map_err(py_err)
            }

            /// Sum of `comp` (over `ngrow` ghost cells), accumulated in `int64`/`float64`.
            #[pyo3(signature = (comp=0, ngrow=None))]
            fn sum(
                &self,
                comp: usize,
                ngrow: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<<$t as amrex_multifab::Element>::Acc> {
                let ng = self.ng(ngrow)?;
                self.0.sum(comp..=comp, ng).map_err(py_err)
            }

            /// A deep copy (same layout, ghost cells included), as pyAMReX's `copy()`.
            fn copy(&self) -> PyResult<Self> {
                let m = &self.0;
                let mut c = FabArray::new(m.box_array(), m.distribution_map(), m.ncomp(), m.n_grow());
                c.copy_from(m, 0, 0..m.ncomp(), m.n_grow()).map_err(py_err)?;
                Ok(Self(c))
            }

            /// Fills ghost cells from the valid cells of other boxes (and periodic images):
            /// `periodic` is three bools, a `Periodicity` or a `Geometry`, as for
            /// `MultiFab`.
            #[pyo3(signature = (periodic=None))]
            fn fill_boundary(&mut self, periodic: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
                let period = crate::multifab::periodicity_arg(self.0.box_array().minimal_box(), periodic)?;
                self.0.fill_boundary(period).map_err(py_err)
            }

            fn __repr__(&self) -> String {
                format!(
                    "{}({} boxes, ncomp={}, ngrow={})",
                    $pyname,
                    self.0.box_array().len(),
                    self.0.ncomp(),
                    self.0.n_grow()
                )
            }
        }

        typed_scalar_ops! { $ty, $t, $pyname:
            /// `set_val(v)`: every component of every fab, ghost cells included;
            /// `set_val(v, comp, num_comp, nghost=0)`, or the keywords.
            set_val, SetVal;
            /// Adds `value`: `plus(v, nghost=0)` or `plus(v, comp, num_comp, nghost=0)`.
            plus, Nghost;
            /// Multiplies by `value`, with the forms of `plus`.
            mult, Nghost;
        }

        typed_binary_ops! { $ty:
            /// `self[dcomp..] = src[scomp..]` over `ng` ghost cells (pyAMReX `copymf`).
            copymf => copy_from;
            /// `self[dcomp..] += src[scomp..]`.
            add => add;
            /// `self[dcomp..] -= src[scomp..]`.
            subtract => subtract;
            /// `self[dcomp..] *= src[scomp..]`.
            multiply => multiply;
        }
    };
}

/// Scalar operations `mf.f(value, *args, comp=None, ncomp=None, ngrow=None)` of a typed
/// MultiFab, with pyAMReX's positional forms (see [`part_of`]).
macro_rules! typed_scalar_ops {
    ($ty:ident, $t:ty, $cls:literal: $($(#[doc = $doc:literal])+ $name:ident, $form:ident;)+) => {
        #[pymethods]
        impl $ty {$(
            $(#[doc = $doc])+
            #[pyo3(signature = (value, *args, comp=None, ncomp=None, ngrow=None))]
            fn $name(
                &mut self,
                value: $t,
                args: &Bound<'_, PyTuple>,
                comp: Option<usize>,
                ncomp: Option<usize>,
                ngrow: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<()> {
                let p = part_of(&self.0, $cls, stringify!($name), Form::$form, args, comp, ncomp, ngrow)?;
                self.0.$name(value, p.comp..p.comp + p.nc, p.ng).map_err(py_err)
            }
        )+}
    };
}

/// Two-FabArray operations `dst.f(src, scomp, dcomp, nc, ng=None)` of a typed MultiFab,
/// each the FabArray method of the same effect.
macro_rules! typed_binary_ops {
    ($ty:ident: $($(#[doc = $doc:literal])+ $name:ident => $method:ident;)+) => {
        #[pymethods]
        impl $ty {$(
            $(#[doc = $doc])+
            #[pyo3(signature = (src, scomp, dcomp, nc, ng=None))]
            fn $name(
                &mut self,
                src: PyRef<'_, Self>,
                scomp: usize,
                dcomp: usize,
                nc: usize,
                ng: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<()> {
                let ng = self.ng(ng)?;
                self.0
                    .$method(&src.0, scomp, dcomp..dcomp.saturating_add(nc), ng)
                    .map_err(py_err)
            }
        )+}
    };
}

typed_multifab! {
    /// Integer cell data on a BoxArray with ghost cells (AMReX `iMultiFab`, `int32`), in
    /// host memory.
    PyIMultiFab, i32, "iMultiFab", PyArray4I32
}

typed_multifab! {
    /// Single-precision cell data on a BoxArray with ghost cells (AMReX
    /// `FabArray<BaseFab<float>>`, `float32`), in host memory.
    PyMultiFabF32, f32, "MultiFab_float", PyArray4F32
}

typed_binary_ops! { PyMultiFabF32:
    /// `self[dcomp..] /= src[scomp..]` (`float32` only: integer division by zero has no
    /// value).
    divide => divide;
}

/// Fabs of other element types, in host memory: `IArrayBox` (`int32`) and
/// `FArrayBox_float` (`float32`, alias `BaseFab_float`). Each is a one-box FabArray without
/// ghost cells, so its memory is exported zero-copy exactly as a MultiFab's.
macro_rules! typed_fab {
    (
        $(#[doc = $doc:literal])+
        $ty:ident, $t:ty, $pyname:literal, $array4:ident
    ) => {
        $(#[doc = $doc])+
        #[pyclass(module = "amrex_rs", name = $pyname)]
        #[derive(Debug)]
        pub(crate) struct $ty(FabArray<$t>);

        impl $ty {
            fn tensor(&self) -> Tensor {
                // SAFETY: as in the typed MultiFabs' `tensors`: Python holds the GIL while
                // it uses the array and while this fab's methods run.
                Tensor::new(Imported::Versioned(unsafe {
                    self.0.to_dlpack_box_detached(0, Ghosts::Exclude)
                }))
            }

            fn comps(&self, start_comp: usize, num_comps: Option<usize>) -> core::ops::Range<usize> {
                let n = num_comps.unwrap_or(self.0.ncomp().saturating_sub(start_comp));
                start_comp..start_comp.saturating_add(n)
            }

            /// Refuses a `box` other than the fab's own (sub-box operations are not bound).
            fn whole(&self, name: &str, bx: Option<PyRef<'_, PyBox>>) -> PyResult<()> {
                match bx {
                    Some(b) if b.0 != self.0.box_of(0) => Err(PyNotImplementedError::new_err(format!(
                        "{}.{name}: only the whole fab ({}) is supported, got the box {}; \
                         use array() for a part",
                        $pyname,
                        self.0.box_of(0),
                        b.0
                    ))),
                    _ => Ok(()),
                }
            }
        }

        #[pymethods]
        impl $ty {
            /// `(box, ncomp=1)`: a zero-filled fab in host memory.
            #[new]
            #[pyo3(signature = (r#box, ncomp=1))]
            fn py_new(r#box: &PyBox, ncomp: usize) -> PyResult<Self> {
                if !r#box.0.ok() {
                    return Err(PyValueError::new_err(format!(
                        "{}: the box {} is empty",
                        $pyname, r#box.0
                    )));
                }
                let ba = amrex_multifab::BoxArray::new(vec![r#box.0]);
                let dm = amrex_multifab::DistributionMapping::with_ranks(&ba, 1);
                Ok(Self(FabArray::new(&ba, &dm, ncomp, IntVect::ZERO)))
            }

            /// The fab's box.
            #[getter(r#box)]
            fn index_box(&self) -> PyBox {
                PyBox(self.0.box_of(0))
            }

            /// Number of components.
            #[getter]
            fn ncomp(&self) -> usize {
                self.0.ncomp()
            }

            /// Number of components (pyAMReX `n_comp`).
            #[getter]
            fn n_comp(&self) -> usize {
                self.0.ncomp()
            }

            /// Number of cells.
            #[getter]
            fn num_pts(&self) -> u64 {
                self.0.box_of(0).num_pts()
            }

            /// An Array4 (global indices) over the whole fab, zero-copy.
            fn array(&self) -> PyResult<$array4> {
                $array4::from_imported(self.tensor().inner, self.0.box_of(0).small_end())
            }

            /// A NumPy view `(x, y, z, comp)` (`order="F"`) or `(comp, z, y, x)`.
            #[pyo3(signature = (copy=false, order="F"))]
            fn to_numpy<'py>(
                &self,
                py: Python<'py>,
                copy: bool,
                order: &str,
            ) -> PyResult<Bound<'py, PyAny>> {
                let obj = Bound::new(py, self.tensor())?;
                let src = obj.get().export()?;
                to_numpy(obj.as_any(), &src, Sharing::copy_if(copy), order)
            }

            /// As `to_numpy` (the memory is host memory).
            #[pyo3(signature = (copy=false, order="F"))]
            fn to_xp<'py>(
                &self,
                py: Python<'py>,
                copy: bool,
                order: &str,
            ) -> PyResult<Bound<'py, PyAny>> {
                self.to_numpy(py, copy, order)
            }

            /// Sum of component `comp`.
            #[pyo3(signature = (comp=0, r#box=None))]
            fn sum(
                &self,
                comp: usize,
                r#box: Option<PyRef<'_, PyBox>>,
            ) -> PyResult<<$t as amrex_multifab::Element>::Acc> {
                self.whole("sum", r#box)?;
                self.0.sum(comp..=comp, IntVect::ZERO).map_err(py_err)
            }

            /// Minimum of component `comp`.
            #[pyo3(signature = (comp=0, r#box=None))]
            fn min(&self, comp: usize, r#box: Option<PyRef<'_, PyBox>>) -> PyResult<$t> {
                self.whole("min", r#box)?;
                self.0.min(comp..=comp, IntVect::ZERO).map_err(py_err)
            }

            /// Maximum of component `comp`.
            #[pyo3(signature = (comp=0, r#box=None))]
            fn max(&self, comp: usize, r#box: Option<PyRef<'_, PyBox>>) -> PyResult<$t> {
                self.whole("max", r#box)?;
                self.0.max(comp..=comp, IntVect::ZERO).map_err(py_err)
            }

            /// Value at global `(i, j, k)`, component `n`.
            #[pyo3(signature = (i, j, k, n=0))]
            fn get(&self, i: i32, j: i32, k: i32, n: usize) -> PyResult<$t> {
                self.0.value_at(IntVect::new(i, j, k), n).ok_or_else(|| {
                    PyIndexError::new_err(format!("({i}, {j}, {k}, {n}) is outside the fab"))
                })
            }

            fn __repr__(&self) -> String {
                format!("{}({}, ncomp={})", $pyname, self.0.box_of(0), self.0.ncomp())
            }
        }

        fab_scalar_ops! { $ty, $t:
            /// Sets components `start_comp..start_comp+num_comps` (all by default).
            set_val;
            /// Adds `val` to components `start_comp..start_comp+num_comps`.
            plus;
            /// Multiplies components `start_comp..start_comp+num_comps` by `val`.
            mult;
        }
    };
}

/// Scalar operations `fab.f(val, box=None, start_comp=0, num_comps=None)` of a typed fab
/// (over the whole fab: another `box` is refused).
macro_rules! fab_scalar_ops {
    ($ty:ident, $t:ty: $($(#[doc = $doc:literal])+ $name:ident;)+) => {
        #[pymethods]
        impl $ty {$(
            $(#[doc = $doc])+
            #[pyo3(signature = (val, r#box=None, start_comp=0, num_comps=None))]
            fn $name(
                &mut self,
                val: $t,
                r#box: Option<PyRef<'_, PyBox>>,
                start_comp: usize,
                num_comps: Option<usize>,
            ) -> PyResult<()> {
                self.whole(stringify!($name), r#box)?;
                let c = self.comps(start_comp, num_comps);
                self.0.$name(val, c, IntVect::ZERO).map_err(py_err)
            }
        )+}
    };
}

typed_fab! {
    /// A box of cells with `ncomp` components of `int32` (AMReX `IArrayBox`), host memory.
    PyIArrayBox, i32, "IArrayBox", PyArray4I32
}

typed_fab! {
    /// A box of cells with `ncomp` components of `float32` (AMReX `BaseFab<float>`), host
    /// memory.
    PyFabF32, f32, "FArrayBox_float", PyArray4F32
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyIArrayBox>()?;
    m.add_class::<PyFabF32>()?;
    m.add("BaseFab_float", m.py().get_type::<PyFabF32>())?;
    m.add_class::<PyIMultiFab>()?;
    m.add_class::<PyMultiFabF32>()?;
    m.add("FabArray_BaseFab_float", m.py().get_type::<PyMultiFabF32>())
}
