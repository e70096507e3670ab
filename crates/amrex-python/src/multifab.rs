//! `BoxArray`, `DistributionMapping`, `MultiFab` and `MFIter` with pyAMReX's names.
//!
//! `mf.to_xp()` / `mf.array(mfi)` export each local box zero-copy with shape
//! `(ncomp, nz, ny, nx)`; every exported tensor holds a reference to the fabs' storage, so
//! arrays outlive the MultiFab. NumPy and Rust share the memory as in pyAMReX: while Rust
//! runs a MultiFab operation it holds the GIL, so only NumPy code that releases the GIL in
//! another thread could race with it.

use crate::geometry::{PyBox, int_vect_of};
use crate::interop::{Tensor, to_xp};
use amrex_box::{IndexBox, IntVect};
use amrex_dlpack_capsule::Imported;
use amrex_multifab::{BoxArray, DistributionMapping, Mfi, MultiFab, Periodicity};
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;

/// `(lo, hi)` corners as tuples.
type Corners = ((i32, i32, i32), (i32, i32, i32));

fn corners(b: IndexBox) -> Corners {
    let (lo, hi) = (b.small_end(), b.big_end());
    ((lo.x(), lo.y(), lo.z()), (hi.x(), hi.y(), hi.z()))
}

/// A list of boxes (AMReX `BoxArray`).
#[pyclass(module = "amrex_rs", name = "BoxArray", frozen)]
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
            let domain = domain.get().0;
            return Ok(Self(match max_size {
                Some(m) => BoxArray::from_domain_iv(domain, int_vect_of(m)?),
                None => BoxArray::new(vec![domain]),
            }));
        }
        let list: Vec<PyBox> = boxes
            .try_iter()?
            .map(|b| Ok(*b?.cast::<PyBox>()?.get()))
            .collect::<PyResult<_>>()?;
        let ba = BoxArray::new(list.into_iter().map(|b| b.0).collect());
        Ok(Self(match max_size {
            Some(m) => ba.max_size(int_vect_of(m)?),
            None => ba,
        }))
    }

    /// Chops every box so no side exceeds `n` (an int or IntVect).
    fn max_size(&self, n: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self(self.0.max_size(int_vect_of(n)?)))
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
        Ok(Self(DistributionMapping::new(&ba.0, nranks)))
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

/// One `MFIter` item: a local box (or tile) of a MultiFab.
#[pyclass(module = "amrex_rs", name = "MFIter", frozen)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct PyMfi(Mfi);

#[pymethods]
impl PyMfi {
    /// Global box index.
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

/// Cell data on a BoxArray with ghost cells (AMReX `MultiFab`, `f64`).
#[pyclass(module = "amrex_rs", name = "MultiFab")]
#[derive(Debug)]
pub(crate) struct PyMultiFab {
    mf: MultiFab,
}

fn check_comps(mf: &MultiFab, comp: usize, nc: usize) -> PyResult<()> {
    if comp.checked_add(nc).is_none_or(|e| e > mf.ncomp()) {
        return Err(PyIndexError::new_err(format!(
            "components {comp}..{} out of range for {} components",
            comp.saturating_add(nc),
            mf.ncomp()
        )));
    }
    Ok(())
}

fn check_ng(mf: &MultiFab, ng: IntVect) -> PyResult<IntVect> {
    if !ng.all_le(mf.n_grow()) || !ng.all_ge(IntVect::ZERO) {
        return Err(PyValueError::new_err(format!(
            "ghost width {ng} exceeds the MultiFab's {}",
            mf.n_grow()
        )));
    }
    Ok(ng)
}

impl PyMultiFab {
    fn nc(&self, comp: usize, ncomp: Option<usize>) -> PyResult<usize> {
        let nc = ncomp.unwrap_or(self.mf.ncomp().saturating_sub(comp));
        check_comps(&self.mf, comp, nc)?;
        Ok(nc)
    }

    fn ng(&self, ngrow: Option<&Bound<'_, PyAny>>) -> PyResult<IntVect> {
        match ngrow {
            None => Ok(IntVect::ZERO),
            Some(n) => check_ng(&self.mf, int_vect_of(n)?),
        }
    }

    fn same_layout(&self, o: &PyMultiFab) -> PyResult<()> {
        if self.mf.same_layout(&o.mf) {
            Ok(())
        } else {
            Err(PyValueError::new_err(
                "the MultiFabs have different BoxArrays or DistributionMappings",
            ))
        }
    }

    /// Zero-copy tensors of every local box.
    fn tensors(&self, ghosts: bool) -> Vec<Tensor> {
        // SAFETY: Python code holds the GIL while it reads or writes the arrays and while
        // this MultiFab's methods run, so the sharing the function warns about happens
        // only as in pyAMReX (NumPy threads that release the GIL); no Rust reference into
        // the tensors is kept across MultiFab calls.
        let ts = unsafe { self.mf.to_dlpack_per_box_shared(ghosts) };
        ts.into_iter()
            .map(|t| Tensor {
                inner: Imported::Versioned(t),
            })
            .collect()
    }
}

/// Two-MultiFab arguments for the static operations.
type Pair<'a, 'py> = (PyRefMut<'py, PyMultiFab>, PyRef<'py, PyMultiFab>, &'a str);

#[pymethods]
impl PyMultiFab {
    /// `MultiFab(ba, dm, ncomp, ngrow)`: zero-initialised; `ngrow` is an int or IntVect.
    #[new]
    #[pyo3(signature = (ba, dm, ncomp=1, ngrow=None))]
    fn py_new(
        ba: &PyBoxArray,
        dm: &PyDistributionMapping,
        ncomp: usize,
        ngrow: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let ng = ngrow.map_or(Ok(IntVect::ZERO), int_vect_of)?;
        if dm.0.len() != ba.0.len() {
            return Err(PyValueError::new_err(
                "the DistributionMapping was made for another BoxArray",
            ));
        }
        if !ng.all_ge(IntVect::ZERO) {
            return Err(PyValueError::new_err("ngrow must be non-negative"));
        }
        Ok(Self {
            mf: MultiFab::new(&ba.0, &dm.0, ncomp, ng),
        })
    }

    /// Number of components.
    #[getter]
    fn ncomp(&self) -> usize {
        self.mf.ncomp()
    }

    /// Ghost cells per direction.
    #[getter]
    fn n_grow(&self) -> (i32, i32, i32) {
        let g = self.mf.n_grow();
        (g.x(), g.y(), g.z())
    }

    /// Number of components (pyAMReX `nComp()`).
    #[pyo3(name = "nComp")]
    fn n_comp(&self) -> usize {
        self.mf.ncomp()
    }

    /// The BoxArray.
    fn box_array(&self) -> PyBoxArray {
        PyBoxArray(self.mf.box_array().clone())
    }

    /// The DistributionMapping.
    fn dm(&self) -> PyDistributionMapping {
        PyDistributionMapping(self.mf.distribution_map().clone())
    }

    /// Number of boxes on this rank.
    fn num_local_boxes(&self) -> usize {
        self.mf.local_size()
    }

    /// `MFIter` items of the local boxes (tiles with `tiling=True`).
    #[pyo3(signature = (tiling=false))]
    fn mfiter(&self, tiling: bool) -> Vec<PyMfi> {
        self.mf.mfiter(tiling).map(PyMfi).collect()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(PyList::new(py, self.mfiter(false))?.try_iter()?.into_any())
    }

    fn __len__(&self) -> usize {
        self.mf.local_size()
    }

    /// The `(lo, hi)` corners of each local box (with ghost cells when `ghosts`), in the
    /// order of `to_xp`.
    #[pyo3(signature = (ghosts=false))]
    fn boxes(&self, ghosts: bool) -> Vec<Corners> {
        (0..self.mf.local_size())
            .map(|l| {
                let g = self.mf.global_index(l);
                corners(if ghosts {
                    self.mf.fabbox(g)
                } else {
                    self.mf.box_of(g)
                })
            })
            .collect()
    }

    /// The fab of `mfi` (ghost cells included) as a zero-copy DLPack object: NumPy's
    /// `np.from_dlpack(mf.array(mfi))[n, k, j, i]` is component `n` at `fabbox.lo + (i, j, k)`.
    fn array(&self, mfi: &PyMfi) -> PyResult<Tensor> {
        let l = mfi.0.local_index();
        if l >= self.mf.local_size() {
            return Err(PyIndexError::new_err("MFIter item of another MultiFab"));
        }
        // SAFETY: as in `tensors`: Python holds the GIL while it uses the arrays and while
        // this MultiFab's methods run, and no Rust reference into the tensor is kept.
        let t = unsafe { self.mf.to_dlpack_box_shared(l, true) };
        Ok(Tensor {
            inner: Imported::Versioned(t),
        })
    }

    /// One array per local box (NumPy here), zero-copy, shape `(ncomp, nz, ny, nx)`, or
    /// `(nx, ny, nz, ncomp)` with `order="F"`.
    #[pyo3(signature = (ghosts=false, copy=false, order="C"))]
    fn to_xp<'py>(
        &self,
        py: Python<'py>,
        ghosts: bool,
        copy: bool,
        order: &str,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        self.tensors(ghosts)
            .into_iter()
            .map(|t| {
                let src = t.export()?;
                let obj = Bound::new(py, t)?;
                to_xp(obj.as_any(), &src, copy, order)
            })
            .collect()
    }

    /// As `to_xp` (host memory: NumPy arrays).
    #[pyo3(signature = (ghosts=false, copy=false, order="C"))]
    fn to_numpy<'py>(
        &self,
        py: Python<'py>,
        ghosts: bool,
        copy: bool,
        order: &str,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        self.to_xp(py, ghosts, copy, order)
    }

    /// Fills ghost cells from the valid cells of other boxes (and periodic images).
    #[pyo3(signature = (periodic=(false, false, false)))]
    fn fill_boundary(&mut self, periodic: (bool, bool, bool)) {
        let domain = self.mf.box_array().minimal_box();
        let period = Periodicity::new(domain, [periodic.0, periodic.1, periodic.2]);
        self.mf.fill_boundary(period);
    }

    /// Test pattern: valid cell `(i, j, k)` of component `n` gets
    /// `i + 100 j + 10000 k + 1e6 n` (ghost cells untouched).
    fn fill_cell_index_pattern(&mut self) {
        for mut tile in self.mf.iter_tiles_mut(false, IntVect::ZERO) {
            let region = tile.region();
            tile.array_mut().for_each_mut(region, |i, j, k, n, v| {
                *v = f64::from(i) + 100.0 * f64::from(j) + 10000.0 * f64::from(k) + 1e6 * n as f64;
            });
        }
    }

    /// Value at global cell `(i, j, k)` of component `n` (valid or ghost of a local box).
    fn value_at(&self, p: &Bound<'_, PyAny>, n: usize) -> PyResult<Option<f64>> {
        Ok(self.mf.value_at(int_vect_of(p)?, n))
    }

    /// Dot product of `self[comp..comp+nc]` with `y[ycomp..]`.
    #[pyo3(signature = (comp, y, ycomp, nc, ng=None))]
    fn dot(
        &self,
        comp: usize,
        y: &PyMultiFab,
        ycomp: usize,
        nc: usize,
        ng: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<f64> {
        self.same_layout(y)?;
        check_comps(&self.mf, comp, nc)?;
        check_comps(&y.mf, ycomp, nc)?;
        let ng = self.ng(ng)?;
        check_ng(&y.mf, ng)?;
        Ok(self.mf.dot(comp, &y.mf, ycomp, nc, ng))
    }

    fn __repr__(&self) -> String {
        format!(
            "MultiFab({} boxes, ncomp={}, ngrow={})",
            self.mf.box_array().len(),
            self.mf.ncomp(),
            self.mf.n_grow()
        )
    }
}

/// `MultiFab.f(value, comp=0, ncomp=None, ngrow=None)`: a scalar applied to components
/// `comp..comp+ncomp` over `ngrow` ghost cells, checked by `nc` and `ng`.
macro_rules! scalar_ops {
    ($($(#[doc = $doc:literal])+ $name:ident => $method:ident;)+) => {
        #[pymethods]
        impl PyMultiFab {$(
            $(#[doc = $doc])+
            #[pyo3(signature = (value, comp=0, ncomp=None, ngrow=None))]
            fn $name(
                &mut self,
                value: f64,
                comp: usize,
                ncomp: Option<usize>,
                ngrow: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<()> {
                let (nc, ng) = (self.nc(comp, ncomp)?, self.ng(ngrow)?);
                self.mf.$method(value, comp, nc, ng);
                Ok(())
            }
        )+}
    };
}

scalar_ops! {
    /// Sets components `comp..comp+ncomp` to `value` over `ngrow` ghost cells.
    set_val => set_val_range;
    /// Adds `value`.
    plus => plus;
    /// Multiplies by `value`.
    mult => mult;
}

/// `MultiFab.f(comp=0, ngrow=None) -> float`: a reduction of one component.
macro_rules! reductions {
    ($($(#[doc = $doc:literal])+ $name:ident;)+) => {
        #[pymethods]
        impl PyMultiFab {$(
            $(#[doc = $doc])+
            #[pyo3(signature = (comp=0, ngrow=None))]
            fn $name(&self, comp: usize, ngrow: Option<&Bound<'_, PyAny>>) -> PyResult<f64> {
                check_comps(&self.mf, comp, 1)?;
                Ok(self.mf.$name(comp, 1, self.ng(ngrow)?))
            }
        )+}
    };
}

reductions! {
    /// Smallest value of `comp` (over `ngrow` ghost cells).
    min;
    /// Largest value of `comp`.
    max;
    /// Sum of `comp`.
    sum;
    /// Max norm of `comp`.
    norm0;
    /// L1 norm of `comp`.
    norm1;
    /// L2 norm of `comp`.
    norm2;
}

/// Static two-MultiFab operations `MultiFab.f(dst, [a,] src, scomp, dcomp, nc, ng=None)`,
/// arguments checked by [`binary`]; `(a)` after the name adds the scalar `a: float`.
macro_rules! binary_ops {
    ($($(#[doc = $doc:literal])+ $name:ident $(($a:ident))? => $op:expr;)+) => {
        #[pymethods]
        impl PyMultiFab {$(
            $(#[doc = $doc])+
            #[staticmethod]
            #[pyo3(signature = (dst, $($a,)? src, scomp, dcomp, nc, ng=None))]
            fn $name(
                dst: PyRefMut<'_, Self>,
                $($a: f64,)?
                src: PyRef<'_, Self>,
                scomp: usize,
                dcomp: usize,
                nc: usize,
                ng: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<()> {
                binary((dst, src, stringify!($name)), scomp, dcomp, nc, ng, $op)
            }
        )+}
    };
}

binary_ops! {
    /// `dst[dcomp..] = src[scomp..]` (AMReX `MultiFab.Copy`).
    copy => |d, s, sc, dc, nc, ng| d.copy_from(s, sc, dc, nc, ng);
    /// `dst[dcomp..] += src[scomp..]`.
    add => |d, s, sc, dc, nc, ng| d.add(s, sc, dc, nc, ng);
    /// `dst[dcomp..] -= src[scomp..]`.
    subtract => |d, s, sc, dc, nc, ng| d.subtract(s, sc, dc, nc, ng);
    /// `dst[dcomp..] *= src[scomp..]`.
    multiply => |d, s, sc, dc, nc, ng| d.multiply(s, sc, dc, nc, ng);
    /// `dst[dcomp..] /= src[scomp..]`.
    divide => |d, s, sc, dc, nc, ng| d.divide(s, sc, dc, nc, ng);
    /// `dst[dcomp..] += a * src[scomp..]` (AMReX `MultiFab.Saxpy`).
    saxpy(a) => |d, s, sc, dc, nc, ng| d.saxpy(a, s, sc, dc, nc, ng);
    /// `dst[dcomp..] = src[scomp..] + a * dst[dcomp..]` (AMReX `MultiFab.Xpay`).
    xpay(a) => |d, s, sc, dc, nc, ng| d.xpay(a, s, sc, dc, nc, ng);
}

/// Checks a two-MultiFab operation's arguments, then runs it.
fn binary(
    (mut dst, src, _name): Pair<'_, '_>,
    scomp: usize,
    dcomp: usize,
    nc: usize,
    ng: Option<&Bound<'_, PyAny>>,
    op: impl FnOnce(&mut MultiFab, &MultiFab, usize, usize, usize, IntVect),
) -> PyResult<()> {
    dst.same_layout(&src)?;
    check_comps(&dst.mf, dcomp, nc)?;
    check_comps(&src.mf, scomp, nc)?;
    let ng = dst.ng(ng)?;
    check_ng(&src.mf, ng)?;
    op(&mut dst.mf, &src.mf, scomp, dcomp, nc, ng);
    Ok(())
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyBoxArray>()?;
    m.add_class::<PyDistributionMapping>()?;
    m.add_class::<PyMfi>()?;
    m.add_class::<PyMultiFab>()?;
    Ok(())
}
