//! `BCType`, `BCRec`, `PhysBCFunct`, `fill_physical_boundary` and `fill_domain_boundary`
//! with pyAMReX's names (`src/Boundary/BCRec.cpp`, `BCUtil.cpp`, `PhysBCFunct.cpp`): the
//! ghost cells beyond non-periodic domain faces, filled per component from boundary
//! records and, beyond `ext_dir` faces, from a Python function.

use crate::amr::geometry::PyGeometry;
use crate::error::py_err;
use crate::geometry::{PyBox, dir_of};
use crate::multifab::PyMultiFab;
use amrex_amr::boundary::{BCRec, BCType, PhysBcFunct};
use amrex_geometry::Geometry;
use core::cell::RefCell;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// AMReX's mathematical boundary types (`BCType`); the integer values are AMReX's codes,
/// and a `BCType` compares equal to its code.
#[pyclass(module = "amrex_rs", name = "BCType", eq, eq_int, frozen, hash)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum PyBCType {
    /// Interior or periodic: the fill leaves these ghost cells alone (0).
    #[pyo3(name = "int_dir")]
    IntDir = 0,
    /// A mirror through the face (1).
    #[pyo3(name = "reflect_even")]
    ReflectEven = 1,
    /// An antisymmetric mirror (-1).
    #[pyo3(name = "reflect_odd")]
    ReflectOdd = -1,
    /// The last interior value repeated (2).
    #[pyo3(name = "foextrap")]
    FoExtrap = 2,
    /// External Dirichlet: values from the `ext_dir` function (3).
    #[pyo3(name = "ext_dir")]
    ExtDir = 3,
    /// Higher-order extrapolation to the face in the first ghost cell (4).
    #[pyo3(name = "hoextrap")]
    HoExtrap = 4,
    /// Linear extrapolation into every ghost cell (5).
    #[pyo3(name = "hoextrapcc")]
    HoExtrapCc = 5,
}

impl From<BCType> for PyBCType {
    fn from(t: BCType) -> Self {
        match t {
            BCType::IntDir => Self::IntDir,
            BCType::ReflectEven => Self::ReflectEven,
            BCType::ReflectOdd => Self::ReflectOdd,
            BCType::FoExtrap => Self::FoExtrap,
            BCType::ExtDir => Self::ExtDir,
            BCType::HoExtrap => Self::HoExtrap,
            BCType::HoExtrapCc => Self::HoExtrapCc,
        }
    }
}

/// A boundary type given as a `BCType` or AMReX's integer code (`ValueError` for a code
/// that is not one of `BCType`'s).
fn bc_type_of(obj: &Bound<'_, PyAny>) -> PyResult<BCType> {
    let code = match obj.cast::<PyBCType>() {
        Ok(t) => *t.get() as i32,
        Err(_) => obj
            .extract::<i32>()
            .map_err(|_| PyTypeError::new_err("expected a BCType or an int code from -1 to 5"))?,
    };
    BCType::from_int(code).map_err(py_err)
}

/// Three boundary types from a sequence of three `BCType`s or ints.
fn bc_types3(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<[BCType; 3]> {
    let items: Vec<Bound<'_, PyAny>> = obj.try_iter()?.collect::<PyResult<_>>()?;
    let [x, y, z] = items.as_slice() else {
        return Err(PyValueError::new_err(format!(
            "{what}: expected three boundary types (one per direction), got {}",
            items.len()
        )));
    };
    Ok([bc_type_of(x)?, bc_type_of(y)?, bc_type_of(z)?])
}

/// The boundary condition of one component: a `BCType` on the low and high face of each
/// direction (AMReX `BCRec`).
#[pyclass(module = "amrex_rs", name = "BCRec", eq)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PyBCRec(pub(crate) BCRec);

#[pymethods]
impl PyBCRec {
    /// `BCRec(lo, hi)` with three `BCType`s (or int codes) each; `BCRec()` is `int_dir`
    /// on every face (AMReX starts from `bogus`, which this library does not have);
    /// `BCRec(bx, domain, bc_domain)` is `bc_domain` as box `bx` sees it: a face keeps
    /// its type where `bx` reaches the domain's face and is `int_dir` elsewhere.
    #[new]
    #[pyo3(signature = (lo=None, hi=None, bc_domain=None))]
    fn py_new(
        lo: Option<&Bound<'_, PyAny>>,
        hi: Option<&Bound<'_, PyAny>>,
        bc_domain: Option<&Self>,
    ) -> PyResult<Self> {
        match (lo, hi, bc_domain) {
            (None, None, None) => Ok(Self(BCRec::uniform(BCType::IntDir))),
            (Some(bx), Some(domain), Some(bc)) => Ok(set_bc(
                &bx.cast::<PyBox>()?.borrow(),
                &domain.cast::<PyBox>()?.borrow(),
                bc,
            )),
            (Some(lo), Some(hi), None) => {
                Ok(Self(BCRec::new(bc_types3(lo, "lo")?, bc_types3(hi, "hi")?)))
            }
            _ => Err(PyTypeError::new_err(
                "BCRec takes no arguments, (lo, hi) or (bx, domain, bc_domain)",
            )),
        }
    }

    /// Sets the low-face type of direction `dir`.
    fn set_lo(&mut self, dir: usize, bc_type: &Bound<'_, PyAny>) -> PyResult<()> {
        let t = bc_type_of(bc_type)?;
        self.0.set_lo(dir_of(dir)?, t);
        Ok(())
    }

    /// Sets the high-face type of direction `dir`.
    fn set_hi(&mut self, dir: usize, bc_type: &Bound<'_, PyAny>) -> PyResult<()> {
        let t = bc_type_of(bc_type)?;
        self.0.set_hi(dir_of(dir)?, t);
        Ok(())
    }

    /// The low-face types of the three directions, or of direction `dir`.
    #[pyo3(signature = (dir=None))]
    fn lo<'py>(&self, py: Python<'py>, dir: Option<usize>) -> PyResult<Bound<'py, PyAny>> {
        types_or_one(py, self.0.lo_types(), dir)
    }

    /// The high-face types of the three directions, or of direction `dir`.
    #[pyo3(signature = (dir=None))]
    fn hi<'py>(&self, py: Python<'py>, dir: Option<usize>) -> PyResult<Bound<'py, PyAny>> {
        types_or_one(py, self.0.hi_types(), dir)
    }

    /// The six integer codes, low faces then high faces (AMReX `vect()`).
    fn vect(&self) -> [i32; 6] {
        self.0.to_ints()
    }

    /// The six integer codes, as `vect()` (pyAMReX `data()`).
    fn data(&self) -> [i32; 6] {
        self.0.to_ints()
    }

    fn __repr__(&self) -> String {
        let [a, b, c, d, e, f] = self.0.to_ints();
        format!("BCRec(({a}, {b}, {c}), ({d}, {e}, {f}))")
    }
}

/// The types of three faces as a list of `BCType`s, or the one of direction `dir`.
fn types_or_one<'py>(
    py: Python<'py>,
    t: [BCType; 3],
    dir: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    match dir {
        None => Ok(t.map(PyBCType::from).into_pyobject(py)?.into_any()),
        Some(d) => Ok(PyBCType::from(t[dir_of(d)?]).into_pyobject(py)?.into_any()),
    }
}

/// `r` with every `ext_dir` face made `int_dir`: the fill then leaves those faces' ghost
/// cells alone.
fn without_ext_dir(r: &BCRec) -> BCRec {
    let keep = |t: BCType| {
        if t == BCType::ExtDir {
            BCType::IntDir
        } else {
            t
        }
    };
    BCRec::new(r.lo_types().map(keep), r.hi_types().map(keep))
}

/// Fills the ghost cells of `phi` beyond non-periodic domain faces, every component `c`
/// by `bc[c]`, leaving those beyond `ext_dir` faces alone (pyAMReX
/// `fill_domain_boundary`); `fill_physical_boundary` with `ext_dir=None`.
#[pyfunction]
#[pyo3(name = "fill_domain_boundary")]
fn fill_domain_boundary_py(
    py: Python<'_>,
    phi: PyRefMut<'_, PyMultiFab>,
    geom: &PyGeometry,
    bc: &Bound<'_, PyAny>,
) -> PyResult<()> {
    PyPhysBCFunct(Boundary::new(geom.0, bc, None)?).fill(py, phi, 0, None, 0.0)
}

fn set_bc(bx: &PyBox, domain: &PyBox, bc: &PyBCRec) -> PyBCRec {
    PyBCRec(bc.0.restricted_to(&bx.0, &domain.0))
}

/// The record `bc_domain` as box `bx` sees it (pyAMReX `setBC(bx, domain, bc_domain)`):
/// a face keeps its type where `bx` reaches the domain's face and is `int_dir` elsewhere.
#[pyfunction]
#[pyo3(name = "setBC")]
fn set_bc_py(bx: &PyBox, domain: &PyBox, bc_domain: &PyBCRec) -> PyBCRec {
    set_bc(bx, domain, bc_domain)
}

/// The library's `ext_dir` function type as the bindings build it: a Python callable
/// behind one closure (`&dyn`, since each call is a Python call anyway).
pub(crate) type ExtDirFn<'a> = &'a dyn Fn([f64; 3], f64, usize) -> f64;

/// A level's physical boundary conditions as Python gives them: the geometry, one record
/// per component, and the optional `ext_dir(x, time, comp) -> float` callable.
#[derive(Debug)]
pub(crate) struct Boundary {
    geom: Geometry,
    recs: Vec<BCRec>,
    ext_dir: Option<Py<PyAny>>,
}

impl Boundary {
    fn new(
        geom: Geometry,
        bcrecs: &Bound<'_, PyAny>,
        ext_dir: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let recs = bcrecs
            .try_iter()?
            .map(|r| Ok(r?.cast::<PyBCRec>()?.borrow().0))
            .collect::<PyResult<_>>()?;
        Ok(Self {
            geom,
            recs,
            ext_dir: ext_dir.map(Bound::unbind),
        })
    }

    /// Runs `body` with the library's `PhysBcFunct` of these conditions. Without a
    /// callable the `ext_dir` faces become `int_dir` ones, so their ghost cells keep
    /// their values. The first exception of the callable is kept (the library's fill
    /// cannot stop part-way; the callable is not called again) and raised once `body`
    /// has returned, unless `body` itself refused its arguments.
    pub(crate) fn with<R>(
        &self,
        py: Python<'_>,
        body: impl FnOnce(&PhysBcFunct<ExtDirFn<'_>>) -> PyResult<R>,
    ) -> PyResult<R> {
        let f = self.ext_dir.as_ref().map(|f| f.bind(py));
        let failed: RefCell<Option<PyErr>> = RefCell::new(None);
        let value = |x: [f64; 3], t: f64, n: usize| -> f64 {
            let Some(f) = f else { return 0.0 };
            if failed.borrow().is_some() {
                return f64::NAN;
            }
            match f.call1((x, t, n)).and_then(|v| v.extract::<f64>()) {
                Ok(v) => v,
                Err(e) => {
                    *failed.borrow_mut() = Some(e);
                    f64::NAN
                }
            }
        };
        let recs = match f {
            Some(_) => self.recs.clone(),
            None => self.recs.iter().map(without_ext_dir).collect(),
        };
        let bc = PhysBcFunct::new(self.geom, recs, &value as ExtDirFn<'_>);
        let out = body(&bc)?;
        match failed.into_inner() {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    /// The geometry.
    pub(crate) fn geometry(&self) -> &Geometry {
        &self.geom
    }
}

/// The components `scomp..scomp + ncomp` (all from `scomp` when `ncomp` is None) of a
/// MultiFab with `total` components.
fn comps_of(scomp: usize, ncomp: Option<usize>, total: usize) -> core::ops::Range<usize> {
    scomp..scomp.saturating_add(ncomp.unwrap_or_else(|| total.saturating_sub(scomp)))
}

/// A level's physical boundary conditions as one object (AMReX `PhysBCFunct`, pyAMReX's
/// `PhysBCFunct_CpuBndryFuncFab` and `PhysBCFunctUser` in one): the geometry, one
/// `BCRec` per component and the optional `ext_dir(x, time, comp) -> float` function,
/// for the FillPatch functions and for filling a MultiFab directly.
#[pyclass(module = "amrex_rs", name = "PhysBCFunct", frozen)]
#[derive(Debug)]
pub(crate) struct PyPhysBCFunct(pub(crate) Boundary);

#[pymethods]
impl PyPhysBCFunct {
    /// `PhysBCFunct(geom, bcrecs, ext_dir=None)`: record `c` is component `c`'s.
    #[new]
    #[pyo3(signature = (geom, bcrecs, ext_dir=None))]
    fn py_new(
        geom: &PyGeometry,
        bcrecs: &Bound<'_, PyAny>,
        ext_dir: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Boundary::new(geom.0, bcrecs, ext_dir).map(Self)
    }

    /// The geometry.
    #[getter]
    fn geom(&self) -> PyGeometry {
        PyGeometry(self.0.geom)
    }

    /// The records, one per component.
    #[getter]
    fn bcrecs(&self) -> Vec<PyBCRec> {
        self.0.recs.iter().copied().map(PyBCRec).collect()
    }

    /// Fills the ghost cells of `mf` beyond the non-periodic domain faces, components
    /// `scomp..scomp + ncomp`, as `fill_physical_boundary` does.
    #[pyo3(signature = (mf, scomp=0, ncomp=None, time=0.0))]
    fn fill(
        &self,
        py: Python<'_>,
        mut mf: PyRefMut<'_, PyMultiFab>,
        scomp: usize,
        ncomp: Option<usize>,
        time: f64,
    ) -> PyResult<()> {
        let mf = mf.host_mut()?;
        let comps = comps_of(scomp, ncomp, mf.ncomp());
        self.0
            .with(py, |bc| bc.fill(mf, comps, time).map_err(py_err))
    }
}

/// Fills the ghost cells of `mf` (host memory, cell-centred or nodal) that lie beyond a
/// non-periodic face of `geom`'s domain, components `scomp..scomp + ncomp` (all from
/// `scomp` when `ncomp` is None), component `c` by `bcrecs[c]`, as AMReX's host kernels
/// `fab_filcc`/`fab_filnd` do direction by direction. Call `mf.fill_boundary(...)`
/// first for the ghost cells between boxes and across periodic faces.
///
/// `ext_dir(x, time, comp) -> float` gives the value at every ghost point beyond an
/// `ext_dir` face, `x` the point's location (cell centre, or node) as three floats and
/// `comp` the component; without it (`ext_dir=None`) those ghost cells keep their values,
/// as pyAMReX's `fill_domain_boundary` leaves them.
///
/// Errors: `ValueError` for bad components, too few records, face- or edge-centred
/// data or boxes outside the domain, raised before anything is written; an exception
/// raised by `ext_dir` (or a value it returns that is not a float) propagates after the
/// fill, whose ghost cells beyond the domain are then partly filled (valid cells are
/// never written). `NotImplementedError` for a MultiFab in device memory.
#[pyfunction]
#[pyo3(
    name = "fill_physical_boundary",
    signature = (mf, geom, bcrecs, scomp=0, ncomp=None, time=0.0, ext_dir=None)
)]
#[expect(
    clippy::too_many_arguments,
    reason = "AMReX's argument list: data, geometry, records, components, time, function"
)]
fn fill_physical_boundary_py(
    py: Python<'_>,
    mf: PyRefMut<'_, PyMultiFab>,
    geom: &PyGeometry,
    bcrecs: &Bound<'_, PyAny>,
    scomp: usize,
    ncomp: Option<usize>,
    time: f64,
    ext_dir: Option<Bound<'_, PyAny>>,
) -> PyResult<()> {
    PyPhysBCFunct(Boundary::new(geom.0, bcrecs, ext_dir)?).fill(py, mf, scomp, ncomp, time)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyBCType>()?;
    m.add_class::<PyBCRec>()?;
    m.add_class::<PyPhysBCFunct>()?;
    m.add_function(wrap_pyfunction!(set_bc_py, m)?)?;
    m.add_function(wrap_pyfunction!(fill_physical_boundary_py, m)?)?;
    m.add_function(wrap_pyfunction!(fill_domain_boundary_py, m)?)
}
