//! `BCType`, `BCRec` and `fill_physical_boundary` with pyAMReX's names
//! (`src/Boundary/BCRec.cpp`): the ghost cells beyond non-periodic domain faces, filled
//! per component from boundary records.

use crate::amr::geometry::PyGeometry;
use crate::error::amr_err;
use crate::geometry::{PyBox, dir_of};
use crate::multifab::PyMultiFab;
use amrex_amr::boundary::{BCRec, BCType, fill_physical_boundary};
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
    BCType::from_int(code).map_err(amr_err)
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
                bx.cast::<PyBox>()?.get(),
                domain.cast::<PyBox>()?.get(),
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
    phi: PyRefMut<'_, PyMultiFab>,
    geom: &PyGeometry,
    bc: &Bound<'_, PyAny>,
) -> PyResult<()> {
    fill_physical_boundary_py(phi, geom, bc, 0, None, 0.0, None)
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
fn fill_physical_boundary_py(
    mut mf: PyRefMut<'_, PyMultiFab>,
    geom: &PyGeometry,
    bcrecs: &Bound<'_, PyAny>,
    scomp: usize,
    ncomp: Option<usize>,
    time: f64,
    ext_dir: Option<Bound<'_, PyAny>>,
) -> PyResult<()> {
    let recs: Vec<BCRec> = bcrecs
        .try_iter()?
        .map(|r| Ok(r?.cast::<PyBCRec>()?.borrow().0))
        .collect::<PyResult<_>>()?;
    let mf = mf.host_mut()?;
    let ncomp = ncomp.unwrap_or_else(|| mf.ncomp().saturating_sub(scomp));
    let comps = scomp..scomp.saturating_add(ncomp);
    let Some(f) = ext_dir else {
        // Without a function the ext_dir faces are left alone, as int_dir faces are.
        let recs: Vec<BCRec> = recs.iter().map(without_ext_dir).collect();
        return fill_physical_boundary(mf, &geom.0, &recs, comps, time, |_, _, _| 0.0)
            .map_err(amr_err);
    };
    // The first exception of `f` is kept and raised after the fill (the fill cannot stop
    // part-way); once there is one, `f` is not called again.
    let failed: RefCell<Option<PyErr>> = RefCell::new(None);
    let value = |x: [f64; 3], t: f64, n: usize| -> f64 {
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
    fill_physical_boundary(mf, &geom.0, &recs, comps, time, value).map_err(amr_err)?;
    match failed.into_inner() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyBCType>()?;
    m.add_class::<PyBCRec>()?;
    m.add_function(wrap_pyfunction!(set_bc_py, m)?)?;
    m.add_function(wrap_pyfunction!(fill_physical_boundary_py, m)?)?;
    m.add_function(wrap_pyfunction!(fill_domain_boundary_py, m)?)
}
