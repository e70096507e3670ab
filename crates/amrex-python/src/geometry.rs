//! `IntVect`, `IndexType` and `Box` (the index box) with pyAMReX's names.

use amrex_box::{IndexBox, IndexType, IntVect};
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// Accepts an `IntVect`, a 3-sequence of ints, or a single int (broadcast).
pub(crate) fn int_vect_of(obj: &Bound<'_, PyAny>) -> PyResult<IntVect> {
    if let Ok(iv) = obj.cast::<PyIntVect>() {
        return Ok(iv.get().0);
    }
    if let Ok(n) = obj.extract::<i32>() {
        return Ok(IntVect::splat(n));
    }
    if let Ok([x, y, z]) = obj.extract::<[i32; 3]>() {
        return Ok(IntVect::new(x, y, z));
    }
    Err(PyTypeError::new_err(
        "expected an IntVect, an int or a sequence of three ints",
    ))
}

pub(crate) fn dir_of(dir: usize) -> PyResult<usize> {
    if dir < 3 {
        Ok(dir)
    } else {
        Err(PyIndexError::new_err(format!(
            "direction {dir} out of range (0..3)"
        )))
    }
}

/// Three integers, one per direction (AMReX `IntVect`, `AMREX_SPACEDIM = 3`).
#[pyclass(module = "amrex_rs", name = "IntVect", frozen, eq, hash)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct PyIntVect(pub(crate) IntVect);

#[pymethods]
impl PyIntVect {
    /// `IntVect()` (zeros), `IntVect(n)` (all n), `IntVect(x, y, z)` or `IntVect([x, y, z])`.
    #[new]
    #[pyo3(signature = (*args))]
    fn py_new(args: &Bound<'_, PyTuple>) -> PyResult<Self> {
        match args.len() {
            0 => Ok(Self(IntVect::splat(0))),
            1 => int_vect_of(&args.get_item(0)?).map(Self),
            3 => {
                let (x, y, z): (i32, i32, i32) = args.extract()?;
                Ok(Self(IntVect::new(x, y, z)))
            }
            n => Err(PyTypeError::new_err(format!(
                "IntVect takes 0, 1 or 3 arguments, got {n}"
            ))),
        }
    }

    /// `(0, 0, 0)`.
    #[staticmethod]
    fn zero_vector() -> Self {
        Self(IntVect::splat(0))
    }

    /// `(1, 1, 1)`.
    #[staticmethod]
    fn unit_vector() -> Self {
        Self(IntVect::splat(1))
    }

    /// The unit vector of direction `dir`.
    #[staticmethod]
    fn basis(dir: usize) -> PyResult<Self> {
        Ok(Self(IntVect::basis(dir_of(dir)?)))
    }

    /// The x component.
    #[getter]
    fn x(&self) -> i32 {
        self.0.x()
    }

    /// The y component.
    #[getter]
    fn y(&self) -> i32 {
        self.0.y()
    }

    /// The z component.
    #[getter]
    fn z(&self) -> i32 {
        self.0.z()
    }

    fn __len__(&self) -> usize {
        3
    }

    fn __getitem__(&self, i: isize) -> PyResult<i32> {
        let j = if i < 0 { i + 3 } else { i };
        if (0..3).contains(&j) {
            Ok(self.0[j as usize])
        } else {
            Err(PyIndexError::new_err("IntVect index out of range"))
        }
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(PyTuple::new(py, self.0.to_array())?.try_iter()?.into_any())
    }

    /// The three components as a tuple.
    fn as_tuple(&self) -> (i32, i32, i32) {
        (self.0.x(), self.0.y(), self.0.z())
    }

    /// Sum of the components.
    fn sum(&self) -> i64 {
        self.0.sum()
    }

    /// Smallest component.
    fn min(&self) -> i32 {
        self.0.min_component()
    }

    /// Largest component.
    fn max(&self) -> i32 {
        self.0.max_component()
    }

    fn __add__(&self, o: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self(self.0 + int_vect_of(o)?))
    }

    fn __radd__(&self, o: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.__add__(o)
    }

    fn __sub__(&self, o: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self(self.0 - int_vect_of(o)?))
    }

    fn __mul__(&self, o: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self(self.0 * int_vect_of(o)?))
    }

    fn __rmul__(&self, o: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.__mul__(o)
    }

    fn __neg__(&self) -> Self {
        Self(-self.0)
    }

    /// Whether every component is `<=` the other's.
    fn all_le(&self, o: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.0.all_le(int_vect_of(o)?))
    }

    /// Whether every component is `>=` the other's.
    fn all_ge(&self, o: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.0.all_ge(int_vect_of(o)?))
    }

    /// Floor division by `ratio`, AMReX's rule for negative indices.
    fn coarsen(&self, ratio: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self(self.0.coarsen(int_vect_of(ratio)?)))
    }

    /// Multiplication by `ratio`.
    fn refine(&self, ratio: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self(self.0.refine(int_vect_of(ratio)?)))
    }

    fn __repr__(&self) -> String {
        format!("IntVect({}, {}, {})", self.0.x(), self.0.y(), self.0.z())
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }
}

/// Cell or node centring per direction (AMReX `IndexType`).
#[pyclass(module = "amrex_rs", name = "IndexType", frozen, eq, hash)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct PyIndexType(pub(crate) IndexType);

#[pymethods]
impl PyIndexType {
    /// `IndexType(node_x=False, node_y=False, node_z=False)`; all cell-centred by default.
    #[new]
    #[pyo3(signature = (node_x=false, node_y=false, node_z=false))]
    fn py_new(node_x: bool, node_y: bool, node_z: bool) -> Self {
        Self(IndexType::new(node_x, node_y, node_z))
    }

    /// All cell-centred.
    #[staticmethod]
    fn cell_type() -> Self {
        Self(IndexType::new(false, false, false))
    }

    /// All node-centred.
    #[staticmethod]
    fn node_type() -> Self {
        Self(IndexType::new(true, true, true))
    }

    /// Whether direction `dir` is nodal.
    fn node_centered_dir(&self, dir: usize) -> PyResult<bool> {
        Ok(self.0.node_centered_dir(dir_of(dir)?))
    }

    /// Whether every direction is cell-centred.
    fn cell_centered(&self) -> bool {
        self.0.cell_centered()
    }

    /// Whether every direction is nodal.
    fn node_centered(&self) -> bool {
        self.0.node_centered()
    }

    /// 1 for nodal, 0 for cell, per direction.
    fn ix_type(&self) -> PyIntVect {
        PyIntVect(self.0.ix_type())
    }

    fn __repr__(&self) -> String {
        format!("IndexType({})", self.0)
    }
}

/// An index box: inclusive `small_end`/`big_end` and an `IndexType` (AMReX `Box`).
#[pyclass(module = "amrex_rs", name = "Box", frozen, eq, hash)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct PyBox(pub(crate) IndexBox);

#[pymethods]
impl PyBox {
    /// `Box(small_end, big_end, typ=IndexType())`; ends are IntVects or 3-sequences.
    #[new]
    #[pyo3(signature = (small_end, big_end, typ=None))]
    fn py_new(
        small_end: &Bound<'_, PyAny>,
        big_end: &Bound<'_, PyAny>,
        typ: Option<PyRef<'_, PyIndexType>>,
    ) -> PyResult<Self> {
        let (lo, hi) = (int_vect_of(small_end)?, int_vect_of(big_end)?);
        let t = typ.map_or(IndexType::new(false, false, false), |t| t.0);
        Ok(Self(IndexBox::with_type(lo, hi, t)))
    }

    /// Inclusive low corner.
    #[getter]
    fn small_end(&self) -> PyIntVect {
        PyIntVect(self.0.small_end())
    }

    /// Inclusive high corner.
    #[getter]
    fn big_end(&self) -> PyIntVect {
        PyIntVect(self.0.big_end())
    }

    /// Low corner as a tuple.
    #[getter]
    fn lo(&self) -> (i32, i32, i32) {
        let v = self.0.small_end();
        (v.x(), v.y(), v.z())
    }

    /// High corner as a tuple.
    #[getter]
    fn hi(&self) -> (i32, i32, i32) {
        let v = self.0.big_end();
        (v.x(), v.y(), v.z())
    }

    /// Alias of `small_end` (pyAMReX `lo_vect`).
    #[getter]
    fn lo_vect(&self) -> PyIntVect {
        self.small_end()
    }

    /// Alias of `big_end` (pyAMReX `hi_vect`).
    #[getter]
    fn hi_vect(&self) -> PyIntVect {
        self.big_end()
    }

    /// The index type.
    #[getter]
    fn ix_type(&self) -> PyIndexType {
        PyIndexType(self.0.ix_type())
    }

    /// Whether `big_end >= small_end` in every direction.
    fn ok(&self) -> bool {
        self.0.ok()
    }

    /// Whether the box has no cells.
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Cells per direction.
    fn length(&self) -> PyIntVect {
        PyIntVect(self.0.length())
    }

    /// Total number of points (0 when not ok).
    #[getter]
    fn num_pts(&self) -> u64 {
        self.0.num_pts()
    }

    /// Number of points, as `len(box)`.
    fn __len__(&self) -> PyResult<usize> {
        self.0
            .checked_num_pts_usize()
            .ok_or_else(|| PyValueError::new_err("box too large"))
    }

    /// Whether the point (an IntVect or 3-sequence) or box is inside.
    fn contains(&self, o: &Bound<'_, PyAny>) -> PyResult<bool> {
        if let Ok(b) = o.cast::<PyBox>() {
            return Ok(self.0.contains_box(&b.get().0));
        }
        Ok(self.0.contains(int_vect_of(o)?))
    }

    fn __contains__(&self, o: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.contains(o)
    }

    /// Whether the boxes overlap.
    fn intersects(&self, o: &Self) -> bool {
        self.0.intersects(&o.0)
    }

    /// The overlap, or `None`.
    fn intersection(&self, o: &Self) -> Option<Self> {
        self.0.intersection(&o.0).map(Self)
    }

    fn __and__(&self, o: &Self) -> Option<Self> {
        self.intersection(o)
    }

    /// The smallest box holding both.
    fn min_box(&self, o: &Self) -> Self {
        Self(self.0.min_box(&o.0))
    }

    /// Grown by `n` (an int or IntVect) on both sides; negative shrinks.
    fn grow(&self, n: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self(self.0.grow_iv(int_vect_of(n)?)))
    }

    /// Grown by `n` on the low side of `dir`.
    fn grow_low(&self, dir: usize, n: i32) -> PyResult<Self> {
        Ok(Self(self.0.grow_lo(dir_of(dir)?, n)))
    }

    /// Grown by `n` on the high side of `dir`.
    fn grow_high(&self, dir: usize, n: i32) -> PyResult<Self> {
        Ok(Self(self.0.grow_hi(dir_of(dir)?, n)))
    }

    /// Shifted by `v` (an IntVect or 3-sequence).
    fn shift(&self, v: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self(self.0.shift_iv(int_vect_of(v)?)))
    }

    /// The node box around the cells.
    fn surrounding_nodes(&self) -> Self {
        Self(self.0.surrounding_nodes())
    }

    /// The cell box inside the nodes.
    fn enclosed_cells(&self) -> Self {
        Self(self.0.enclosed_cells())
    }

    /// Converted to another index type.
    fn convert(&self, typ: &PyIndexType) -> Self {
        Self(self.0.convert(typ.0))
    }

    /// Coarsened by `ratio` (AMReX floor rule).
    fn coarsen(&self, ratio: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self(self.0.coarsen_iv(int_vect_of(ratio)?)))
    }

    /// Refined by `ratio`.
    fn refine(&self, ratio: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self(self.0.refine_iv(int_vect_of(ratio)?)))
    }

    /// The slab at index `idx` of direction `dir`.
    fn make_slab(&self, dir: usize, idx: i32) -> PyResult<Self> {
        Ok(Self(self.0.make_slab(dir_of(dir)?, idx)))
    }

    fn __repr__(&self) -> String {
        format!(
            "Box({}, {}, {})",
            self.0.small_end(),
            self.0.big_end(),
            self.0.ix_type()
        )
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyIntVect>()?;
    m.add_class::<PyIndexType>()?;
    m.add_class::<PyBox>()?;
    m.add("IndexBox", m.py().get_type::<PyBox>())?;
    m.add("IntVect3D", m.py().get_type::<PyIntVect>())?;
    Ok(())
}
