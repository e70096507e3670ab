//! Regridding from Python with pyAMReX's names: `AmrInfo`, `AmrMesh`, `TagBoxArray` and
//! `AmrCore`, a class a Python simulation subclasses.
//!
//! A subclass of `AmrCore` defines `error_est(lev, tags, time, ngrow)`,
//! `make_new_level_from_scratch(lev, time, ba, dm)`, `make_new_level_from_coarse(...)`,
//! `remake_level(...)` and `clear_level(lev)`; `init_from_scratch(time)` and
//! `regrid(lbase, time)` then run the library's driver (`amrex_amr::AmrCore`), which
//! calls them back in AMReX's order. While a callback runs, the object's `geom(lev)`,
//! `box_array(lev)`, `distribution_map(lev)` and `finest_level` describe the hierarchy as
//! the driver has it at that moment (the grids of a level change after its
//! `remake_level` or `make_new_level_*` returns, as in AMReX).
//!
//! A Python exception raised in a callback stops the driver and is raised again from
//! `init_from_scratch`/`regrid`; under MPI, an exception in `error_est` on one rank is an
//! error on every rank (the other ranks get a `RuntimeError` naming it).

use crate::amr::geometry::PyGeometry;
use crate::box_array::PyBoxArray;
use crate::distribution::PyDistributionMapping;
use crate::error::py_err;
use crate::geometry::{PyIntVect, int_vect_of};
use crate::mfiter::PyMfi;
use amrex_amr::{AmrCore, AmrError, AmrErrorKind, AmrInfo, AmrMesh, TagBoxArray};
use amrex_box::IntVect;
use amrex_dlpack_capsule::Imported;
use amrex_multifab::{BoxArray, DistributionMapping, Ghosts};
use pyo3::exceptions::{PyIndexError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// `[IntVect]` from a list of IntVects or ints, one per level.
fn int_vects(obj: &Bound<'_, PyAny>) -> PyResult<Vec<IntVect>> {
    obj.try_iter()?
        .map(|x| int_vect_of(&x?))
        .collect::<PyResult<Vec<_>>>()
}

fn py_int_vects(v: &[IntVect]) -> Vec<PyIntVect> {
    v.iter().map(|&x| PyIntVect(x)).collect()
}

/// The parameters of a hierarchy (AMReX `AmrInfo`), with AMReX's defaults; per-level
/// lists (`ref_ratio`, `blocking_factor`, `max_grid_size`, `n_error_buf`) take IntVects
/// or ints, and a shorter list is extended with its last value.
#[pyclass(module = "amrex_rs", name = "AmrInfo", from_py_object)]
#[derive(Clone, Debug)]
pub(crate) struct PyAmrInfo {
    /// `amr.v`.
    #[pyo3(get, set)]
    verbose: i32,
    /// `amr.max_level`.
    #[pyo3(get, set)]
    max_level: usize,
    /// `amr.grid_eff`.
    #[pyo3(get, set)]
    grid_eff: f64,
    /// `amr.n_proper`.
    #[pyo3(get, set)]
    n_proper: i32,
    /// `amr.check_input`.
    #[pyo3(get, set)]
    check_input: bool,
    /// The alternative cluster chop (AMReX's `SetUseNewChop`; no inputs key).
    #[pyo3(get, set)]
    use_new_chop: bool,
    /// Remake the levels at start-up until their grids stop changing (AMReX's
    /// `SetIterateToFalse` turns it off; no inputs key).
    #[pyo3(get, set)]
    iterate_on_new_grids: bool,
    /// The per-level lists and the per-direction layout switch.
    lists: AmrInfo,
}

impl PyAmrInfo {
    pub(crate) fn info(&self) -> AmrInfo {
        AmrInfo {
            verbose: self.verbose,
            max_level: self.max_level,
            grid_eff: self.grid_eff,
            n_proper: self.n_proper,
            check_input: self.check_input,
            use_new_chop: self.use_new_chop,
            iterate_on_new_grids: self.iterate_on_new_grids,
            ..self.lists.clone()
        }
    }

    fn of(i: AmrInfo) -> Self {
        Self {
            verbose: i.verbose,
            max_level: i.max_level,
            grid_eff: i.grid_eff,
            n_proper: i.n_proper,
            check_input: i.check_input,
            use_new_chop: i.use_new_chop,
            iterate_on_new_grids: i.iterate_on_new_grids,
            lists: i,
        }
    }
}

#[pymethods]
impl PyAmrInfo {
    /// `AmrInfo()`: AMReX's defaults (`max_level` 0).
    #[new]
    fn new() -> Self {
        Self::of(AmrInfo::default())
    }

    /// `amr.ref_ratio`, one IntVect per coarse level.
    #[getter]
    fn get_ref_ratio(&self) -> Vec<PyIntVect> {
        py_int_vects(&self.lists.ref_ratio)
    }
    #[setter]
    fn set_ref_ratio(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.lists.ref_ratio = int_vects(v)?;
        Ok(())
    }
    /// `amr.blocking_factor`, one IntVect per level.
    #[getter]
    fn get_blocking_factor(&self) -> Vec<PyIntVect> {
        py_int_vects(&self.lists.blocking_factor)
    }
    #[setter]
    fn set_blocking_factor(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.lists.blocking_factor = int_vects(v)?;
        Ok(())
    }
    /// `amr.max_grid_size`, one IntVect per level.
    #[getter]
    fn get_max_grid_size(&self) -> Vec<PyIntVect> {
        py_int_vects(&self.lists.max_grid_size)
    }
    #[setter]
    fn set_max_grid_size(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.lists.max_grid_size = int_vects(v)?;
        Ok(())
    }
    /// `amr.n_error_buf`, one IntVect per level.
    #[getter]
    fn get_n_error_buf(&self) -> Vec<PyIntVect> {
        py_int_vects(&self.lists.n_error_buf)
    }
    #[setter]
    fn set_n_error_buf(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.lists.n_error_buf = int_vects(v)?;
        Ok(())
    }
    /// `amr.refine_grid_layout`: on if any direction is.
    #[getter]
    fn get_refine_grid_layout(&self) -> bool {
        self.lists.refine_grid_layout.iter().any(|&d| d)
    }
    #[setter]
    fn set_refine_grid_layout(&mut self, v: bool) {
        self.lists.refine_grid_layout = [v; 3];
    }
    /// `amr.refine_grid_layout_x/_y/_z` as an IntVect of 0/1.
    #[getter]
    fn get_refine_grid_layout_dims(&self) -> PyIntVect {
        let d = self.lists.refine_grid_layout.map(i32::from);
        PyIntVect(IntVect::new(d[0], d[1], d[2]))
    }
    #[setter]
    fn set_refine_grid_layout_dims(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        let iv = int_vect_of(v)?;
        self.lists.refine_grid_layout = [iv[0] != 0, iv[1] != 0, iv[2] != 0];
        Ok(())
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.info()).replacen("AmrInfo", "AmrInfo(", 1) + ")"
    }
}

/// Tags per cell over a level's grids (AMReX `TagBoxArray`), handed to `error_est`.
/// `array(mfi)` is an `Array4_int` over a fab (ghost cells included), zero-copy: write
/// `TagBoxArray.SET` (2) into the cells to refine. After `error_est` returns the driver
/// takes the tags back; the object then refuses further use.
#[pyclass(module = "amrex_rs", name = "TagBoxArray")]
#[derive(Debug)]
pub(crate) struct PyTagBoxArray {
    inner: Option<TagBoxArray>,
}

impl PyTagBoxArray {
    fn tags(&self) -> PyResult<&TagBoxArray> {
        self.inner.as_ref().ok_or_else(handed_back)
    }
    fn tags_mut(&mut self) -> PyResult<&mut TagBoxArray> {
        self.inner.as_mut().ok_or_else(handed_back)
    }
}

fn handed_back() -> PyErr {
    PyRuntimeError::new_err(
        "this TagBoxArray was handed back to the regrid when error_est returned; it can only be used inside error_est",
    )
}

#[pymethods]
impl PyTagBoxArray {
    /// Not tagged (0).
    #[classattr]
    const CLEAR: i32 = TagBoxArray::CLEAR;
    /// A buffer cell around a tagged one (1).
    #[classattr]
    const BUF: i32 = TagBoxArray::BUF;
    /// Tagged for refinement (2).
    #[classattr]
    const SET: i32 = TagBoxArray::SET;

    /// `TagBoxArray(ba, dm, ngrow=0)`: all `CLEAR`.
    #[new]
    #[pyo3(signature = (ba, dm, ngrow=None))]
    fn new(
        ba: &PyBoxArray,
        dm: &PyDistributionMapping,
        ngrow: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let ng = ngrow.map_or(Ok(IntVect::ZERO), int_vect_of)?;
        Ok(Self {
            inner: Some(TagBoxArray::new(&ba.0, &dm.0, ng).map_err(py_err)?),
        })
    }

    /// The grids.
    fn box_array(&self) -> PyResult<PyBoxArray> {
        Ok(PyBoxArray(self.tags()?.box_array().clone()))
    }
    /// The distribution mapping.
    #[pyo3(name = "DistributionMap")]
    fn distribution_map(&self) -> PyResult<PyDistributionMapping> {
        Ok(PyDistributionMapping(self.tags()?.dist_map().clone()))
    }
    /// The ghost width.
    #[getter]
    fn n_grow(&self) -> PyResult<PyIntVect> {
        Ok(PyIntVect(self.tags()?.n_grow()))
    }

    /// The tags of `mfi`'s fab, ghost cells included, as an `Array4_int` with global
    /// indices (`a[i, j, k] = TagBoxArray.SET`), zero-copy; `to_numpy()` of it is the
    /// `(nx, ny, nz, 1)` array.
    fn array(&self, py: Python<'_>, mfi: &PyMfi) -> PyResult<Py<PyAny>> {
        let fa = self.tags()?.fab_array();
        let l = mfi.0.local_index();
        if l >= fa.local_size() {
            return Err(PyIndexError::new_err("MFIter item of another layout"));
        }
        let begin = fa.fabbox(fa.global_index(l)).small_end();
        // SAFETY: the detached tensor owns a reference to the fab's storage, which stays
        // alive until the view drops even if the tags go back to the driver; Python holds
        // the GIL while it writes through the view and while the driver reads the tags
        // (the driver runs with the GIL held, between Python calls), so the two never
        // touch the memory at the same time, and no Rust reference into it is kept.
        let t = unsafe { fa.to_dlpack_box_detached(l, Ghosts::Include) };
        let a = crate::array4::PyArray4I32::from_imported(Imported::Versioned(t), begin)?;
        Ok(Bound::new(py, a)?.into_any().unbind())
    }

    /// Sets every cell (ghost cells included) to `tag`.
    fn set_val(&mut self, tag: i32) -> PyResult<()> {
        self.tags_mut()?.set_val(tag);
        Ok(())
    }

    /// Marks `BUF` every `CLEAR` cell within `nbuf` of a `SET` cell.
    fn buffer(&mut self, nbuf: &Bound<'_, PyAny>) -> PyResult<()> {
        let n = int_vect_of(nbuf)?;
        self.tags_mut()?.buffer(n).map_err(py_err)
    }

    /// Number of tagged valid cells on this rank.
    fn num_tags_local(&self) -> PyResult<usize> {
        Ok(self.tags()?.num_tags_local())
    }

    /// Every rank's tagged valid cells, sorted, on every rank. **Collective**.
    fn collate(&self) -> PyResult<Vec<PyIntVect>> {
        Ok(self
            .tags()?
            .collate()
            .map_err(py_err)?
            .into_iter()
            .map(PyIntVect)
            .collect())
    }

    fn __repr__(&self) -> String {
        match &self.inner {
            Some(t) => format!(
                "TagBoxArray({} boxes, n_grow={})",
                t.box_array().len(),
                t.n_grow()
            ),
            None => String::from("TagBoxArray(handed back)"),
        }
    }
}

/// The layout of a hierarchy (AMReX `AmrMesh`): per level a `Geometry`, and for the
/// levels that exist a `BoxArray` and a `DistributionMapping`.
///
/// `AmrMesh()` reads `geometry.*` and `amr.*` from the inputs table (`amr.initialize`,
/// `ParmParse`); `AmrMesh(geom, info)` takes level 0's geometry and an `AmrInfo`. Either
/// applies AMReX's input checks (`ValueError` naming the rule).
#[pyclass(module = "amrex_rs", name = "AmrMesh", subclass)]
#[derive(Debug)]
pub(crate) struct PyAmrMesh {
    /// `None` between `__new__` and `__init__` (a subclass that never calls
    /// `super().__init__`).
    mesh: Option<AmrMesh>,
}

fn mesh_from(geom: Option<&PyGeometry>, info: Option<&PyAmrInfo>) -> PyResult<AmrMesh> {
    match (geom, info) {
        (Some(g), Some(i)) => AmrMesh::new(g.0, i.info()).map_err(py_err),
        (None, None) => AmrMesh::from_parm_parse(&crate::runtime::table()).map_err(py_err),
        _ => Err(PyValueError::new_err(
            "AmrMesh takes either no arguments (the inputs table) or both geom and info",
        )),
    }
}

impl PyAmrMesh {
    fn m(&self) -> PyResult<&AmrMesh> {
        self.mesh.as_ref().ok_or_else(|| {
            PyRuntimeError::new_err(
                "this AmrMesh/AmrCore has no hierarchy: its __init__ was not run (a subclass's __init__ must call super().__init__(...))",
            )
        })
    }

    fn level_check(&self, lev: usize) -> PyResult<()> {
        match self.m()?.finest_level() {
            Some(f) if lev <= f => Ok(()),
            f => Err(PyIndexError::new_err(format!(
                "level {lev} does not exist (finest level {})",
                f.map_or(-1, |f| f as i64)
            ))),
        }
    }
}

#[pymethods]
impl PyAmrMesh {
    /// Allocates the object; `__init__` builds the hierarchy (so a subclass may take
    /// arguments of its own).
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyAny>, _kwargs: Option<&Bound<'_, PyAny>>) -> Self {
        Self { mesh: None }
    }

    /// `AmrMesh()` (the inputs table) or `AmrMesh(geom, info)`.
    /// In an MPI build the levels are spread over MPI's world (MPI starts here if nobody
    /// has started it).
    #[pyo3(signature = (geom=None, info=None))]
    fn __init__(
        &mut self,
        py: Python<'_>,
        geom: Option<PyRef<'_, PyGeometry>>,
        info: Option<PyRef<'_, PyAmrInfo>>,
    ) -> PyResult<()> {
        crate::parallel::default_comm(py)?;
        self.mesh = Some(mesh_from(geom.as_deref(), info.as_deref())?);
        Ok(())
    }

    /// The parameters.
    #[getter]
    fn info(&self) -> PyResult<PyAmrInfo> {
        Ok(PyAmrInfo::of(self.m()?.info().clone()))
    }
    /// The finest level allowed.
    #[getter]
    fn max_level(&self) -> PyResult<usize> {
        Ok(self.m()?.max_level())
    }
    /// The finest level that exists (-1 before the hierarchy is made).
    #[getter]
    fn finest_level(&self) -> PyResult<i64> {
        Ok(self.m()?.finest_level().map_or(-1, |f| f as i64))
    }
    /// Level `lev`'s geometry (AMReX `Geom(lev)`).
    #[pyo3(name = "Geom")]
    fn geom_amrex(&self, lev: usize) -> PyResult<PyGeometry> {
        self.geom(lev)
    }
    /// Level `lev`'s geometry.
    fn geom(&self, lev: usize) -> PyResult<PyGeometry> {
        let m = self.m()?;
        m.geoms().get(lev).map(|g| PyGeometry(*g)).ok_or_else(|| {
            PyIndexError::new_err(format!("level {lev} is above max_level {}", m.max_level()))
        })
    }
    /// Level `lev`'s grids (AMReX `boxArray(lev)`).
    #[pyo3(name = "boxArray")]
    fn box_array_amrex(&self, lev: usize) -> PyResult<PyBoxArray> {
        self.box_array(lev)
    }
    /// Level `lev`'s grids.
    fn box_array(&self, lev: usize) -> PyResult<PyBoxArray> {
        self.level_check(lev)?;
        Ok(PyBoxArray(self.m()?.box_array(lev).clone()))
    }
    /// Level `lev`'s distribution mapping (AMReX `DistributionMap(lev)`).
    #[pyo3(name = "DistributionMap")]
    fn distribution_map_amrex(&self, lev: usize) -> PyResult<PyDistributionMapping> {
        self.distribution_map(lev)
    }
    /// Level `lev`'s distribution mapping.
    fn distribution_map(&self, lev: usize) -> PyResult<PyDistributionMapping> {
        self.level_check(lev)?;
        Ok(PyDistributionMapping(self.m()?.dist_map(lev).clone()))
    }
    /// The refinement ratio between `lev` and `lev + 1`.
    fn ref_ratio(&self, lev: usize) -> PyResult<PyIntVect> {
        let m = self.m()?;
        m.info()
            .ref_ratio
            .get(lev)
            .filter(|_| lev < m.max_level())
            .map(|&r| PyIntVect(r))
            .ok_or_else(|| PyIndexError::new_err(format!("no ratio above level {lev}")))
    }
    /// The largest component of `ref_ratio(lev)` (AMReX `MaxRefRatio`).
    fn max_ref_ratio(&self, lev: usize) -> PyResult<i32> {
        let r = self.ref_ratio(lev)?.0;
        Ok(r[0].max(r[1]).max(r[2]))
    }
    /// Cells of level `lev` (AMReX `CountCells`).
    fn count_cells(&self, lev: usize) -> PyResult<u64> {
        self.level_check(lev)?;
        Ok(self.m()?.count_cells(lev))
    }
    /// Level 0's grids for `nprocs` ranks (AMReX `MakeBaseGrids`).
    #[pyo3(signature = (nprocs=1))]
    fn make_base_grids(&self, nprocs: usize) -> PyResult<PyBoxArray> {
        Ok(PyBoxArray(self.m()?.make_base_grids(nprocs)))
    }

    /// Makes `grids` (a checkpoint's, level 0 first: `read_checkpoint_header(dir).grids`)
    /// the hierarchy, each level on a new distribution map over the current ranks, as
    /// AMReX codes' `ReadCheckpointFile` does; no callback is called (the caller reads
    /// each level's data onto `box_array(lev)`/`distribution_map(lev)`). `ValueError`
    /// naming the level and the problem, with nothing changed, if they do not fit this
    /// mesh: more levels than `max_level + 1`, a box outside its level's domain, level 0
    /// not covering its domain, overlapping boxes, or a finer level not coarsenable by
    /// the ratio or not inside the level below.
    fn restore_grids(&mut self, grids: Vec<PyRef<'_, PyBoxArray>>) -> PyResult<()> {
        let grids: Vec<BoxArray> = grids.iter().map(|g| g.0.clone()).collect();
        let mesh = self.mesh.as_mut().ok_or_else(|| {
            PyRuntimeError::new_err(
                "this AmrMesh/AmrCore has no hierarchy: its __init__ was not run (a subclass's __init__ must call super().__init__(...))",
            )
        })?;
        mesh.restore_grids(&grids).map_err(py_err)
    }

    fn __repr__(&self) -> String {
        match &self.mesh {
            Some(m) => format!(
                "AmrMesh(max_level={}, finest_level={}, domain={})",
                m.max_level(),
                m.finest_level().map_or(-1, |f| f as i64),
                m.geom(0).domain()
            ),
            None => String::from("AmrMesh(not initialised)"),
        }
    }
}

/// A simulation on a hierarchy (AMReX `AmrCore`), to subclass: define `error_est`,
/// `make_new_level_from_scratch`, `make_new_level_from_coarse`, `remake_level` and
/// `clear_level`, then call `init_from_scratch(time)` and `regrid(lbase, time)`.
/// `AmrCore()` reads the inputs table; `AmrCore(geom, info)` takes them.
#[pyclass(module = "amrex_rs", name = "AmrCore", extends = PyAmrMesh, subclass)]
#[derive(Debug)]
pub(crate) struct PyAmrCore;

/// The driver's view of a Python `AmrCore`: the mesh it updates, and the Python object
/// whose methods it calls, with the mesh copied into it before each call.
struct Adapter<'py> {
    obj: Bound<'py, PyAmrCore>,
    mesh: AmrMesh,
    err: Option<PyErr>,
}

impl<'py> Adapter<'py> {
    /// Calls `name(*args)` on the Python object after giving it the current mesh; a
    /// Python exception is kept (the first one) and reported to the driver as an error.
    fn call(
        &mut self,
        name: &'static str,
        args: impl pyo3::call::PyCallArgs<'py>,
    ) -> Result<(), AmrError> {
        self.obj.as_super().borrow_mut().mesh = Some(self.mesh.clone());
        match self.obj.call_method1(name, args) {
            Ok(_) => Ok(()),
            Err(e) => {
                let msg = e.to_string();
                if self.err.is_none() {
                    self.err = Some(e);
                }
                Err(AmrError::new(
                    "AmrCore (Python)",
                    AmrErrorKind::BadParameter {
                        key: String::from(name),
                        detail: msg,
                    },
                ))
            }
        }
    }
}

fn level_args<'py>(
    py: Python<'py>,
    ba: &BoxArray,
    dm: &DistributionMapping,
) -> PyResult<(Bound<'py, PyBoxArray>, Bound<'py, PyDistributionMapping>)> {
    Ok((
        Bound::new(py, PyBoxArray(ba.clone()))?,
        Bound::new(py, PyDistributionMapping(dm.clone()))?,
    ))
}

impl<'py> AmrCore for Adapter<'py> {
    type Error = AmrError;

    fn mesh(&self) -> &AmrMesh {
        &self.mesh
    }
    fn mesh_mut(&mut self) -> &mut AmrMesh {
        &mut self.mesh
    }
    fn error_est(
        &mut self,
        lev: usize,
        tags: &mut TagBoxArray,
        time: f64,
        ngrow: usize,
    ) -> Result<(), AmrError> {
        let py = self.obj.py();
        let empty = BoxArray::new(Vec::new());
        let placeholder =
            TagBoxArray::new(&empty, &DistributionMapping::single(&empty), IntVect::ZERO)?;
        let owned = core::mem::replace(tags, placeholder);
        let py_tags = match Bound::new(py, PyTagBoxArray { inner: Some(owned) }) {
            Ok(t) => t,
            Err(e) => {
                self.err.get_or_insert(e);
                return Err(AmrError::new(
                    "AmrCore (Python)",
                    AmrErrorKind::NoCoarseLevel,
                ));
            }
        };
        let r = self.call("error_est", (lev, py_tags.clone(), time, ngrow));
        if let Some(t) = py_tags.borrow_mut().inner.take() {
            *tags = t;
        }
        r
    }
    fn make_new_level_from_scratch(
        &mut self,
        lev: usize,
        time: f64,
        ba: &BoxArray,
        dm: &DistributionMapping,
    ) -> Result<(), AmrError> {
        let py = self.obj.py();
        match level_args(py, ba, dm) {
            Ok((b, d)) => self.call("make_new_level_from_scratch", (lev, time, b, d)),
            Err(e) => Err(self.keep(e)),
        }
    }
    fn make_new_level_from_coarse(
        &mut self,
        lev: usize,
        time: f64,
        ba: &BoxArray,
        dm: &DistributionMapping,
    ) -> Result<(), AmrError> {
        let py = self.obj.py();
        match level_args(py, ba, dm) {
            Ok((b, d)) => self.call("make_new_level_from_coarse", (lev, time, b, d)),
            Err(e) => Err(self.keep(e)),
        }
    }
    fn remake_level(
        &mut self,
        lev: usize,
        time: f64,
        ba: &BoxArray,
        dm: &DistributionMapping,
    ) -> Result<(), AmrError> {
        let py = self.obj.py();
        match level_args(py, ba, dm) {
            Ok((b, d)) => self.call("remake_level", (lev, time, b, d)),
            Err(e) => Err(self.keep(e)),
        }
    }
    fn clear_level(&mut self, lev: usize) {
        let _ = self.call("clear_level", (lev,));
    }
}

impl Adapter<'_> {
    fn keep(&mut self, e: PyErr) -> AmrError {
        let msg = e.to_string();
        self.err.get_or_insert(e);
        AmrError::new(
            "AmrCore (Python)",
            AmrErrorKind::BadParameter {
                key: String::from("arguments"),
                detail: msg,
            },
        )
    }
}

/// Runs `f` (a driver call) on `slf`'s mesh with `slf`'s methods as the callbacks, then
/// stores the mesh back; a Python exception from a callback is raised again.
fn drive(
    slf: &Bound<'_, PyAmrCore>,
    f: impl FnOnce(&mut Adapter<'_>) -> Result<(), AmrError>,
) -> PyResult<()> {
    let mesh = slf.as_super().borrow().m()?.clone();
    let mut ad = Adapter {
        obj: slf.clone(),
        mesh,
        err: None,
    };
    let r = f(&mut ad);
    slf.as_super().borrow_mut().mesh = Some(ad.mesh);
    match (r, ad.err) {
        (Ok(()), _) => Ok(()),
        (Err(e), Some(pyerr)) => {
            // Under MPI another rank's failure reaches this rank as an ErrorEstFailed
            // without a Python exception of its own.
            if let AmrErrorKind::ErrorEstFailed { ranks, .. } = e.kind()
                && *ranks > 1
            {
                return Err(PyRuntimeError::new_err(e.to_string()));
            }
            Err(pyerr)
        }
        (Err(e), None) => Err(match e.kind() {
            AmrErrorKind::ErrorEstFailed { .. } => PyRuntimeError::new_err(e.to_string()),
            _ => py_err(e),
        }),
    }
}

#[pymethods]
impl PyAmrCore {
    /// Allocates the object; `AmrMesh.__init__` (inherited: `AmrCore()` or
    /// `AmrCore(geom, info)`, or `super().__init__(...)` from a subclass) builds the
    /// hierarchy.
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(
        _args: &Bound<'_, PyAny>,
        _kwargs: Option<&Bound<'_, PyAny>>,
    ) -> PyClassInitializer<Self> {
        PyClassInitializer::from(PyAmrMesh { mesh: None }).add_subclass(Self)
    }

    /// Builds the hierarchy at `time` (AMReX `InitFromScratch`), calling
    /// `make_new_level_from_scratch` and `error_est`.
    fn init_from_scratch(slf: &Bound<'_, Self>, time: f64) -> PyResult<()> {
        drive(slf, |ad| ad.init_from_scratch(time))
    }

    /// New grids above `lbase` and the data moved onto them (AMReX `regrid`), calling
    /// `error_est`, `remake_level`, `make_new_level_from_coarse` and `clear_level`.
    fn regrid(slf: &Bound<'_, Self>, lbase: usize, time: f64) -> PyResult<()> {
        drive(slf, |ad| ad.regrid(lbase, time))
    }

    /// To override: tag the cells of level `lev` to refine.
    fn error_est(
        &self,
        _lev: usize,
        _tags: &Bound<'_, PyAny>,
        _time: f64,
        _ngrow: usize,
    ) -> PyResult<()> {
        Err(pyo3::exceptions::PyNotImplementedError::new_err(
            "AmrCore.error_est must be defined by the subclass",
        ))
    }
    /// To override: make level `lev` on `ba`/`dm` from the initial conditions.
    fn make_new_level_from_scratch(
        &self,
        _lev: usize,
        _time: f64,
        _ba: &Bound<'_, PyAny>,
        _dm: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        Err(pyo3::exceptions::PyNotImplementedError::new_err(
            "AmrCore.make_new_level_from_scratch must be defined by the subclass",
        ))
    }
    /// To override: make the new level `lev` from level `lev - 1`.
    fn make_new_level_from_coarse(
        &self,
        _lev: usize,
        _time: f64,
        _ba: &Bound<'_, PyAny>,
        _dm: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        Err(pyo3::exceptions::PyNotImplementedError::new_err(
            "AmrCore.make_new_level_from_coarse must be defined by the subclass",
        ))
    }
    /// To override: move level `lev` onto `ba`/`dm`.
    fn remake_level(
        &self,
        _lev: usize,
        _time: f64,
        _ba: &Bound<'_, PyAny>,
        _dm: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        Err(pyo3::exceptions::PyNotImplementedError::new_err(
            "AmrCore.remake_level must be defined by the subclass",
        ))
    }
    /// To override: drop level `lev`'s data.
    fn clear_level(&self, _lev: usize) -> PyResult<()> {
        Err(pyo3::exceptions::PyNotImplementedError::new_err(
            "AmrCore.clear_level must be defined by the subclass",
        ))
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyAmrInfo>()?;
    m.add_class::<PyTagBoxArray>()?;
    m.add_class::<PyAmrMesh>()?;
    m.add_class::<PyAmrCore>()
}
