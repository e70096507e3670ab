//! `RealBox`, `CoordSys` (with its `CoordType`), `Periodicity`, `Geometry` and
//! `GeometryData` with pyAMReX's names (`src/Base/Geometry.cpp`, `RealBox.cpp`,
//! `CoordSys.cpp`), over amrex-geometry's types.
//!
//! The classes are immutable: pyAMReX's in-place `coarsen`/`refine`/`setPeriodicity`/
//! `ProbDomain(rb)` become methods that return a new object.

use crate::error::py_err;
use crate::geometry::{PyBox, PyIntVect, dir_of, int_vect_of};
use amrex_box::IntVect;
use amrex_geometry::{CoordSys, Geometry, Periodicity, RealBox};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyType;

type Real3 = [f64; 3];

/// AMReX's coordinate kinds (`CoordSys.CoordType`); the integer values are AMReX's codes.
#[pyclass(module = "amrex_rs", name = "CoordType", eq, eq_int, frozen, hash)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum PyCoordType {
    /// Cartesian x, y, z (0).
    #[pyo3(name = "cartesian")]
    Cartesian = 0,
    /// Cylindrical r, z with the azimuth integrated (1).
    #[pyo3(name = "RZ")]
    Rz = 1,
    /// Spherical r, θ with the azimuth integrated (2).
    #[pyo3(name = "SPHERICAL")]
    Spherical = 2,
}

impl From<CoordSys> for PyCoordType {
    fn from(c: CoordSys) -> Self {
        match c {
            CoordSys::Cartesian => Self::Cartesian,
            CoordSys::Rz => Self::Rz,
            CoordSys::Spherical => Self::Spherical,
        }
    }
}

impl From<PyCoordType> for CoordSys {
    fn from(c: PyCoordType) -> Self {
        match c {
            PyCoordType::Cartesian => Self::Cartesian,
            PyCoordType::Rz => Self::Rz,
            PyCoordType::Spherical => Self::Spherical,
        }
    }
}

/// A coordinate system given as a `CoordType`, a `CoordSys` or AMReX's integer code.
fn coord_of(obj: &Bound<'_, PyAny>) -> PyResult<CoordSys> {
    if let Ok(t) = obj.cast::<PyCoordType>() {
        return Ok((*t.get()).into());
    }
    if let Ok(c) = obj.cast::<PyCoordSys>() {
        return Ok(c.get().0);
    }
    match obj.extract::<i32>() {
        Ok(code) => CoordSys::from_int(code).map_err(py_err),
        Err(_) => Err(PyTypeError::new_err(format!(
            "expected a CoordType, a CoordSys or an int code (0 cartesian, 1 RZ, 2 \
             SPHERICAL), got {}",
            obj.get_type().name()?
        ))),
    }
}

/// Three floats from a sequence of three numbers.
fn real3(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Real3> {
    obj.extract::<Real3>()
        .map_err(|_| PyTypeError::new_err(format!("{what}: expected a sequence of three floats")))
}

/// What `Geometry` says of an `is_periodic` it cannot read.
const IS_PERIODIC: &str = "is_periodic: expected a sequence of three bools or ints";

/// Three flags from a sequence of three bools or ints (pyAMReX's `[0, 0, 1]`); a
/// `TypeError` saying `refusal` otherwise.
pub(crate) fn flags3(obj: &Bound<'_, PyAny>, refusal: &'static str) -> PyResult<[bool; 3]> {
    if let Ok(f) = obj.extract::<[bool; 3]>() {
        return Ok(f);
    }
    match obj.extract::<[i64; 3]>() {
        Ok(v) => Ok(v.map(|x| x != 0)),
        Err(_) => Err(PyTypeError::new_err(refusal)),
    }
}

/// The coordinate system of a geometry (AMReX `CoordSys`).
#[pyclass(module = "amrex_rs", name = "CoordSys", frozen, eq, hash)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct PyCoordSys(pub(crate) CoordSys);

#[pymethods]
impl PyCoordSys {
    /// `CoordSys(coord=CoordType.cartesian)`: a `CoordType`, another `CoordSys` or
    /// AMReX's integer code.
    #[new]
    #[pyo3(signature = (coord=None))]
    fn py_new(coord: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        coord.map_or(Ok(CoordSys::Cartesian), coord_of).map(Self)
    }

    /// The enum of coordinate kinds (`CoordSys.CoordType.RZ`, as in pyAMReX).
    #[classattr]
    #[pyo3(name = "CoordType")]
    fn coord_type(py: Python<'_>) -> Py<PyType> {
        py.get_type::<PyCoordType>().unbind()
    }

    /// Always `True`: a `CoordSys` here is never undefined.
    fn ok(&self) -> bool {
        true
    }

    /// The coordinate kind.
    #[pyo3(name = "Coord")]
    fn coord(&self) -> PyCoordType {
        self.0.into()
    }

    /// AMReX's integer code: 0 Cartesian, 1 RZ, 2 spherical.
    #[pyo3(name = "CoordInt")]
    fn coord_int(&self) -> i32 {
        self.0.to_int()
    }

    /// Whether the coordinates are Cartesian.
    #[pyo3(name = "IsCartesian")]
    fn is_cartesian(&self) -> bool {
        self.0.is_cartesian()
    }

    /// Whether the coordinates are RZ.
    #[pyo3(name = "IsRZ")]
    fn is_rz(&self) -> bool {
        self.0.is_rz()
    }

    /// Whether the coordinates are spherical.
    #[pyo3(name = "IsSPHERICAL")]
    fn is_spherical(&self) -> bool {
        self.0.is_spherical()
    }

    fn __repr__(&self) -> String {
        format!("CoordSys({})", self.0)
    }
}

/// A box in physical space, `lo < hi` in every direction (AMReX `RealBox`).
#[pyclass(module = "amrex_rs", name = "RealBox", frozen, eq)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PyRealBox(pub(crate) RealBox);

#[pymethods]
impl PyRealBox {
    /// `RealBox(lo, hi)` with three floats each, or `RealBox(x_lo, y_lo, z_lo, x_hi,
    /// y_hi, z_hi)`; `ValueError` unless `lo < hi` and every coordinate is finite.
    #[new]
    #[pyo3(signature = (*args))]
    fn py_new(args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<Self> {
        let (lo, hi) = match args.len() {
            2 => (
                real3(&args.get_item(0)?, "lo")?,
                real3(&args.get_item(1)?, "hi")?,
            ),
            6 => {
                let v: [f64; 6] = args.extract()?;
                ([v[0], v[1], v[2]], [v[3], v[4], v[5]])
            }
            n => {
                return Err(PyTypeError::new_err(format!(
                    "RealBox takes (lo, hi) or six floats, got {n} arguments"
                )));
            }
        };
        RealBox::new(lo, hi).map(Self).map_err(py_err)
    }

    /// The low corner.
    #[getter]
    fn xlo(&self) -> Real3 {
        self.0.lo()
    }

    /// The high corner.
    #[getter]
    fn xhi(&self) -> Real3 {
        self.0.hi()
    }

    /// The low corner, or its coordinate in direction `dir`.
    #[pyo3(signature = (dir=None))]
    fn lo<'py>(&self, py: Python<'py>, dir: Option<usize>) -> PyResult<Bound<'py, PyAny>> {
        match dir {
            None => self.0.lo().into_pyobject(py).map(Bound::into_any),
            Some(d) => Ok(self.0.lo_dir(dir_of(d)?).into_pyobject(py)?.into_any()),
        }
    }

    /// The high corner, or its coordinate in direction `dir`.
    #[pyo3(signature = (dir=None))]
    fn hi<'py>(&self, py: Python<'py>, dir: Option<usize>) -> PyResult<Bound<'py, PyAny>> {
        match dir {
            None => self.0.hi().into_pyobject(py).map(Bound::into_any),
            Some(d) => Ok(self.0.hi_dir(dir_of(d)?).into_pyobject(py)?.into_any()),
        }
    }

    /// The length in direction `dir`.
    fn length(&self, dir: usize) -> PyResult<f64> {
        Ok(self.0.length(dir_of(dir)?))
    }

    /// Always `True`: construction refuses `lo >= hi`.
    fn ok(&self) -> bool {
        true
    }

    /// The volume, the product of the lengths.
    fn volume(&self) -> f64 {
        self.0.volume()
    }

    /// Whether the point (three floats) or `RealBox` lies inside, within `eps`.
    #[pyo3(signature = (p, eps=0.0))]
    fn contains(&self, p: &Bound<'_, PyAny>, eps: f64) -> PyResult<bool> {
        if let Ok(rb) = p.cast::<Self>() {
            return Ok(self.0.contains_box(&rb.get().0, eps));
        }
        Ok(self.0.contains(real3(p, "contains")?, eps))
    }

    /// Whether the two boxes overlap.
    fn intersects(&self, other: &Self) -> bool {
        self.0.intersects(&other.0)
    }

    fn __repr__(&self) -> String {
        format!("RealBox({:?}, {:?})", self.0.lo(), self.0.hi())
    }
}

/// The periods of a domain, 0 where it is not periodic (AMReX `Periodicity`).
#[pyclass(module = "amrex_rs", name = "Periodicity", frozen, eq, hash)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct PyPeriodicity(pub(crate) Periodicity);

#[pymethods]
impl PyPeriodicity {
    /// `Periodicity(period)`: the period per direction (an IntVect or three ints, 0 for
    /// not periodic); `ValueError` for a negative one.
    #[new]
    fn py_new(period: &Bound<'_, PyAny>) -> PyResult<Self> {
        let p = int_vect_of(period)?;
        if !p.all_ge(IntVect::ZERO) {
            return Err(PyValueError::new_err(format!(
                "Periodicity: expected periods of 0 or more, got {p}"
            )));
        }
        Ok(Self(Periodicity::from_period(p)))
    }

    /// No direction periodic.
    #[staticmethod]
    #[pyo3(name = "NonPeriodic")]
    fn non_periodic() -> Self {
        Self(Periodicity::non_periodic())
    }

    /// The periods (AMReX `intVect()`).
    #[pyo3(name = "intVect")]
    fn int_vect(&self) -> PyIntVect {
        PyIntVect(self.0.period())
    }

    /// Whether direction `dir` is periodic.
    #[pyo3(name = "isPeriodic")]
    fn is_periodic(&self, dir: usize) -> PyResult<bool> {
        Ok(self.0.is_periodic(dir_of(dir)?))
    }

    /// Whether any direction is periodic.
    #[pyo3(name = "isAnyPeriodic")]
    fn is_any_periodic(&self) -> bool {
        self.0.is_any_periodic()
    }

    /// Whether every direction is periodic.
    #[pyo3(name = "isAllPeriodic")]
    fn is_all_periodic(&self) -> bool {
        self.0.is_all_periodic()
    }

    /// The periodic shifts (and the zero shift) that reach within `ng` cells of the
    /// domain, as IntVects (AMReX `shiftIntVect`).
    #[pyo3(name = "shiftIntVect", signature = (ng=None))]
    fn shift_int_vect(&self, ng: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<PyIntVect>> {
        let ng = ng.map_or(Ok(IntVect::ZERO), int_vect_of)?;
        Ok(self.0.shift_iter(ng).map(PyIntVect).collect())
    }

    fn __repr__(&self) -> String {
        format!("Periodicity({})", self.0.period())
    }
}

/// A three-float tuple or one of its entries, as pyAMReX's `ProbLo()` / `ProbLo(dir)`.
fn all_or_dir<'py>(py: Python<'py>, v: Real3, dir: Option<usize>) -> PyResult<Bound<'py, PyAny>> {
    match dir {
        None => Ok(v.into_pyobject(py)?.into_any()),
        Some(d) => Ok(v[dir_of(d)?].into_pyobject(py)?.into_any()),
    }
}

/// An index domain laid over a `RealBox`, with a coordinate system and periodicity (AMReX
/// `Geometry`).
#[pyclass(module = "amrex_rs", name = "Geometry", frozen, eq)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PyGeometry(pub(crate) Geometry);

#[pymethods]
impl PyGeometry {
    /// `Geometry(dom, rb, coord, is_per)` as pyAMReX: a cell-centred domain `Box`, a
    /// `RealBox`, a `CoordType` / `CoordSys` / int code, and three periodic flags (bools
    /// or ints). `ValueError` for an empty or nodal domain, a curvilinear domain with
    /// more than one cell in z, or cell sizes that are not positive and finite.
    #[new]
    #[pyo3(signature = (dom, rb, coord=None, is_per=None))]
    fn py_new(
        dom: &PyBox,
        rb: &PyRealBox,
        coord: Option<&Bound<'_, PyAny>>,
        is_per: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let coord = coord.map_or(Ok(CoordSys::Cartesian), coord_of)?;
        let per = is_per.map_or(Ok([false; 3]), |f| flags3(f, IS_PERIODIC))?;
        Geometry::new(dom.0, rb.0, coord, per)
            .map(Self)
            .map_err(py_err)
    }

    /// Always `True`: construction refuses what would not be.
    fn ok(&self) -> bool {
        true
    }

    /// A `GeometryData`: the same geometry through AMReX's plain-data names.
    fn data(&self) -> PyGeometryData {
        PyGeometryData(self.0)
    }

    /// The index domain.
    #[pyo3(name = "Domain")]
    fn domain(&self) -> PyBox {
        PyBox(self.0.domain())
    }

    /// The physical extent.
    #[pyo3(name = "ProbDomain")]
    fn prob_domain(&self) -> PyRealBox {
        PyRealBox(self.0.real_box())
    }

    /// The low corner of the physical extent, or its coordinate in direction `dir`.
    #[pyo3(name = "ProbLo", signature = (dir=None))]
    fn prob_lo<'py>(&self, py: Python<'py>, dir: Option<usize>) -> PyResult<Bound<'py, PyAny>> {
        all_or_dir(py, self.0.prob_lo(), dir)
    }

    /// The high corner of the physical extent, or its coordinate in direction `dir`.
    #[pyo3(name = "ProbHi", signature = (dir=None))]
    fn prob_hi<'py>(&self, py: Python<'py>, dir: Option<usize>) -> PyResult<Bound<'py, PyAny>> {
        all_or_dir(py, self.0.prob_hi(), dir)
    }

    /// The physical length in direction `dir`.
    #[pyo3(name = "ProbLength")]
    fn prob_length(&self, dir: usize) -> PyResult<f64> {
        Ok(self.0.prob_length(dir_of(dir)?))
    }

    /// The physical volume of the domain (the product of the lengths).
    #[pyo3(name = "ProbSize")]
    fn prob_size(&self) -> f64 {
        self.0.prob_size()
    }

    /// The cell size per direction, or in direction `dir`.
    #[pyo3(name = "CellSize", signature = (dir=None))]
    fn cell_size<'py>(&self, py: Python<'py>, dir: Option<usize>) -> PyResult<Bound<'py, PyAny>> {
        all_or_dir(py, self.0.cell_size(), dir)
    }

    /// The inverse cell size per direction, or in direction `dir`.
    #[pyo3(name = "InvCellSize", signature = (dir=None))]
    fn inv_cell_size<'py>(
        &self,
        py: Python<'py>,
        dir: Option<usize>,
    ) -> PyResult<Bound<'py, PyAny>> {
        all_or_dir(py, self.0.inv_cell_size(), dir)
    }

    /// The coordinate kind.
    #[pyo3(name = "Coord")]
    fn coord(&self) -> PyCoordType {
        self.0.coord().into()
    }

    /// AMReX's integer code of the coordinate system.
    #[pyo3(name = "CoordInt")]
    fn coord_int(&self) -> i32 {
        self.0.coord().to_int()
    }

    /// Whether the coordinates are Cartesian.
    #[pyo3(name = "IsCartesian")]
    fn is_cartesian(&self) -> bool {
        self.0.coord().is_cartesian()
    }

    /// Whether the coordinates are RZ.
    #[pyo3(name = "IsRZ")]
    fn is_rz(&self) -> bool {
        self.0.coord().is_rz()
    }

    /// Whether the coordinates are spherical.
    #[pyo3(name = "IsSPHERICAL")]
    fn is_spherical(&self) -> bool {
        self.0.coord().is_spherical()
    }

    /// The three periodic flags as ints (pyAMReX `isPeriodic()`), or whether direction
    /// `dir` is periodic.
    #[pyo3(name = "isPeriodic", signature = (dir=None))]
    fn is_periodic_dir<'py>(
        &self,
        py: Python<'py>,
        dir: Option<usize>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match dir {
            None => Ok(self
                .0
                .periodic_flags()
                .map(i32::from)
                .into_pyobject(py)?
                .into_any()),
            Some(d) => Ok(self
                .0
                .is_periodic(dir_of(d)?)
                .into_pyobject(py)?
                .to_owned()
                .into_any()),
        }
    }

    /// The three periodic flags as bools.
    #[getter]
    fn is_periodic(&self) -> [bool; 3] {
        self.0.periodic_flags()
    }

    /// Whether any direction is periodic.
    #[pyo3(name = "isAnyPeriodic")]
    fn is_any_periodic(&self) -> bool {
        self.0.is_any_periodic()
    }

    /// Whether every direction is periodic.
    #[pyo3(name = "isAllPeriodic")]
    fn is_all_periodic(&self) -> bool {
        self.0.is_all_periodic()
    }

    /// The period (cell count) in direction `dir`; `ValueError` when it is not periodic.
    fn period(&self, dir: usize) -> PyResult<i32> {
        self.0.period(dir_of(dir)?).ok_or_else(|| {
            PyValueError::new_err(format!("the geometry is not periodic in direction {dir}"))
        })
    }

    /// The domain's `Periodicity`, or one with the lengths of `bx` as periods.
    #[pyo3(signature = (bx=None))]
    fn periodicity(&self, bx: Option<&PyBox>) -> PyPeriodicity {
        PyPeriodicity(match bx {
            None => self.0.periodicity(),
            Some(b) => self.0.periodicity_for(b.0),
        })
    }

    /// The same geometry with other periodic flags (pyAMReX `setPeriodicity`, which
    /// changes the geometry in place).
    #[pyo3(name = "setPeriodicity")]
    fn set_periodicity(&self, is_per: &Bound<'_, PyAny>) -> PyResult<Self> {
        let g = self.0;
        Geometry::new(
            g.domain(),
            g.real_box(),
            g.coord(),
            flags3(
                is_per,
                "is_periodic: expected a sequence of three bools or ints",
            )?,
        )
        .map(Self)
        .map_err(py_err)
    }

    /// The domain grown by `n` in the periodic directions.
    #[pyo3(name = "growPeriodicDomain")]
    fn grow_periodic_domain(&self, n: &Bound<'_, PyAny>) -> PyResult<PyBox> {
        Ok(PyBox(self.0.grow_periodic_domain(int_vect_of(n)?)))
    }

    /// The domain grown by `n` in the non-periodic directions.
    #[pyo3(name = "growNonPeriodicDomain")]
    fn grow_non_periodic_domain(&self, n: &Bound<'_, PyAny>) -> PyResult<PyBox> {
        Ok(PyBox(self.0.grow_non_periodic_domain(int_vect_of(n)?)))
    }

    /// The geometry refined by `ratio` (same extent; pyAMReX refines in place).
    fn refine(&self, ratio: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.0.refine(int_vect_of(ratio)?).map(Self).map_err(py_err)
    }

    /// The geometry coarsened by `ratio` (same extent; pyAMReX coarsens in place).
    /// `ValueError` when the domain is not a multiple of the ratio.
    fn coarsen(&self, ratio: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.0
            .coarsen(int_vect_of(ratio)?)
            .map(Self)
            .map_err(py_err)
    }

    /// The centre of cell `iv` (three floats).
    fn cell_centre(&self, iv: &Bound<'_, PyAny>) -> PyResult<Real3> {
        Ok(self.0.cell_centre(int_vect_of(iv)?))
    }

    /// The location of node `iv` (three floats).
    fn node_location(&self, iv: &Bound<'_, PyAny>) -> PyResult<Real3> {
        Ok(self.0.node_location(int_vect_of(iv)?))
    }

    /// The low edge of cell `i` in direction `dir` (AMReX `LoEdge`).
    #[pyo3(name = "LoEdge")]
    fn lo_edge(&self, i: i32, dir: usize) -> PyResult<f64> {
        Ok(self.0.lo_edge(i, dir_of(dir)?))
    }

    /// The high edge of cell `i` in direction `dir` (AMReX `HiEdge`).
    #[pyo3(name = "HiEdge")]
    fn hi_edge(&self, i: i32, dir: usize) -> PyResult<f64> {
        Ok(self.0.hi_edge(i, dir_of(dir)?))
    }

    /// The cell holding `point` (three floats), or `None` outside the domain.
    fn cell_index(&self, point: &Bound<'_, PyAny>) -> PyResult<Option<PyIntVect>> {
        Ok(self
            .0
            .cell_index(real3(point, "cell_index")?)
            .map(PyIntVect))
    }

    /// The volume of cell `iv` in the geometry's coordinates.
    fn volume(&self, iv: &Bound<'_, PyAny>) -> PyResult<f64> {
        Ok(self.0.volume(int_vect_of(iv)?))
    }

    /// The area of the low face of cell `iv` normal to `dir`.
    fn face_area(&self, iv: &Bound<'_, PyAny>, dir: usize) -> PyResult<f64> {
        Ok(self.0.face_area(int_vect_of(iv)?, dir_of(dir)?))
    }

    /// Whether the point `(x, y, z)` lies outside the round-off domain (pyAMReX).
    #[pyo3(name = "outsideRoundOffDomain")]
    fn outside_round_off_domain(&self, x: f64, y: f64, z: f64) -> bool {
        self.0.outside_physical_domain([x, y, z])
    }

    /// Whether the point `(x, y, z)` lies inside the round-off domain (pyAMReX): every
    /// such point maps to a cell of the domain.
    #[pyo3(name = "insideRoundOffDomain")]
    fn inside_round_off_domain(&self, x: f64, y: f64, z: f64) -> bool {
        self.0.inside_physical_domain([x, y, z])
    }

    fn __repr__(&self) -> String {
        let g = &self.0;
        format!(
            "<amrex_rs.Geometry domain {}, prob_lo {:?}, prob_hi {:?}, {}, periodic {:?}>",
            g.domain(),
            g.prob_lo(),
            g.prob_hi(),
            g.coord(),
            g.periodic_flags().map(i32::from)
        )
    }
}

/// A geometry through AMReX's plain-data names (`GeometryData`, from `Geometry.data()`).
#[pyclass(module = "amrex_rs", name = "GeometryData", frozen)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct PyGeometryData(Geometry);

#[pymethods]
impl PyGeometryData {
    /// The physical extent.
    #[getter]
    fn prob_domain(&self) -> PyRealBox {
        PyRealBox(self.0.real_box())
    }

    /// The index domain.
    #[getter]
    fn domain(&self) -> PyBox {
        PyBox(self.0.domain())
    }

    /// AMReX's integer code of the coordinate system.
    #[getter]
    fn coord(&self) -> i32 {
        self.0.coord().to_int()
    }

    /// The cell sizes.
    #[getter]
    fn dx(&self) -> Real3 {
        self.0.cell_size()
    }

    /// The periodic flags as ints.
    #[getter]
    fn is_periodic(&self) -> [i32; 3] {
        self.0.periodic_flags().map(i32::from)
    }

    /// The cell size per direction, or in direction `dir`.
    #[pyo3(name = "CellSize", signature = (dir=None))]
    fn cell_size<'py>(&self, py: Python<'py>, dir: Option<usize>) -> PyResult<Bound<'py, PyAny>> {
        all_or_dir(py, self.0.cell_size(), dir)
    }

    /// The low corner, or its coordinate in direction `dir`.
    #[pyo3(name = "ProbLo", signature = (dir=None))]
    fn prob_lo<'py>(&self, py: Python<'py>, dir: Option<usize>) -> PyResult<Bound<'py, PyAny>> {
        all_or_dir(py, self.0.prob_lo(), dir)
    }

    /// The high corner, or its coordinate in direction `dir`.
    #[pyo3(name = "ProbHi", signature = (dir=None))]
    fn prob_hi<'py>(&self, py: Python<'py>, dir: Option<usize>) -> PyResult<Bound<'py, PyAny>> {
        all_or_dir(py, self.0.prob_hi(), dir)
    }

    /// The index domain.
    #[pyo3(name = "Domain")]
    fn domain_box(&self) -> PyBox {
        PyBox(self.0.domain())
    }

    /// The periodic flags as ints, or whether direction `dir` is periodic (as an int).
    #[pyo3(name = "isPeriodic", signature = (dir=None))]
    fn is_periodic_dir<'py>(
        &self,
        py: Python<'py>,
        dir: Option<usize>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let flags = self.0.periodic_flags().map(i32::from);
        match dir {
            None => Ok(flags.into_pyobject(py)?.into_any()),
            Some(d) => Ok(flags[dir_of(d)?].into_pyobject(py)?.into_any()),
        }
    }

    /// AMReX's integer code of the coordinate system.
    #[pyo3(name = "Coord")]
    fn coord_code(&self) -> i32 {
        self.0.coord().to_int()
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyCoordType>()?;
    m.add_class::<PyCoordSys>()?;
    m.add_class::<PyRealBox>()?;
    m.add_class::<PyPeriodicity>()?;
    m.add_class::<PyGeometry>()?;
    m.add_class::<PyGeometryData>()
}
