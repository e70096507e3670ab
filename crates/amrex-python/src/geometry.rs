//! `IntVect`, `IndexType` and `Box` (the index box) with pyAMReX's names.

use amrex_box::{IndexBox, IndexType, IntVect};
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pyclass::CompareOp;
use pyo3::types::PyTuple;

/// Accepts an `IntVect`, a 3-sequence of ints, or a single int (broadcast). A bool is
/// refused: in pyAMReX's `mf.sum(comp, local)` the second argument is a flag, which here
/// would otherwise read as a ghost width of 1.
pub(crate) fn int_vect_of(obj: &Bound<'_, PyAny>) -> PyResult<IntVect> {
    if let Ok(iv) = obj.cast::<PyIntVect>() {
        return Ok(iv.borrow().0);
    }
    if obj.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err(
            "expected an IntVect, an int or a sequence of three ints, got a bool (pyAMReX's \
             `local` flag has no counterpart here: reductions are over every rank's boxes)",
        ));
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
///
/// Mutable as in pyAMReX (`iv[0] = 4`, `iv += 1`), so not hashable; `<`, `<=`, `>`, `>=`
/// are AMReX's lexicographic order (z compared first), `all_lt`/`all_le`/... compare every
/// component; `/` is AMReX's integer division (truncating towards zero).
#[pyclass(module = "amrex_rs", name = "IntVect")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PyIntVect(pub(crate) IntVect);

/// `o` as an IntVect, or `None` when it is not one (for the comparisons).
fn int_vect_opt(o: &Bound<'_, PyAny>) -> Option<IntVect> {
    int_vect_of(o).ok()
}

/// Component-wise `a / b` truncating towards zero (C++ `int` division, AMReX's
/// `IntVect::operator/`); `ZeroDivisionError` for a zero component.
fn div_iv(a: IntVect, b: IntVect) -> PyResult<IntVect> {
    let mut out = [0; 3];
    for d in 0..3 {
        out[d] = a[d].checked_div(b[d]).ok_or_else(|| {
            pyo3::exceptions::PyZeroDivisionError::new_err(format!(
                "IntVect division by {b}: component {d} is zero (or overflows)"
            ))
        })?;
    }
    Ok(IntVect::new(out[0], out[1], out[2]))
}

/// AMReX's `IntVect::operator<`: lexicographic, the last direction compared first.
fn lex_lt(a: IntVect, b: IntVect) -> bool {
    for d in (0..3).rev() {
        if a[d] != b[d] {
            return a[d] < b[d];
        }
    }
    false
}

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

    /// `(1, 1, 1)`, the node index type per direction (AMReX `TheNodeVector`).
    #[staticmethod]
    fn node_vector() -> Self {
        Self(IntVect::splat(1))
    }

    /// `(0, 0, 0)`, the cell index type per direction (AMReX `TheCellVector`).
    #[staticmethod]
    fn cell_vector() -> Self {
        Self(IntVect::splat(0))
    }

    /// Every component `i32::MAX` (AMReX `TheMaxVector`).
    #[staticmethod]
    fn max_vector() -> Self {
        Self(IntVect::splat(i32::MAX))
    }

    /// Every component `i32::MIN` (AMReX `TheMinVector`).
    #[staticmethod]
    fn min_vector() -> Self {
        Self(IntVect::splat(i32::MIN))
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
        Ok(self.0[component(i)?])
    }

    /// `iv[d] = v` (pyAMReX's IntVect is mutable).
    fn __setitem__(&mut self, i: isize, v: i32) -> PyResult<()> {
        self.0[component(i)?] = v;
        Ok(())
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(PyTuple::new(py, self.0.to_array())?.try_iter()?.into_any())
    }

    /// The three components as a tuple.
    fn as_tuple(&self) -> (i32, i32, i32) {
        (self.0.x(), self.0.y(), self.0.z())
    }

    /// The components as a NumPy `int32` array (a copy).
    fn numpy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("numpy")?
            .call_method1("array", (self.0.to_array(), "int32"))
    }

    /// Sum of the components (a property, as pyAMReX's `iv.sum`).
    #[getter]
    fn sum(&self) -> i64 {
        self.0.sum()
    }

    /// Smallest component (a property, as pyAMReX's `iv.min`).
    #[getter]
    fn min(&self) -> i32 {
        self.0.min_component()
    }

    /// Largest component (a property, as pyAMReX's `iv.max`).
    #[getter]
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

    /// Component-wise integer division truncating towards zero (AMReX's `operator/`).
    fn __truediv__(&self, o: &Bound<'_, PyAny>) -> PyResult<Self> {
        div_iv(self.0, int_vect_of(o)?).map(Self)
    }

    fn __iadd__(&mut self, o: &Bound<'_, PyAny>) -> PyResult<()> {
        self.0 += int_vect_of(o)?;
        Ok(())
    }

    fn __isub__(&mut self, o: &Bound<'_, PyAny>) -> PyResult<()> {
        self.0 -= int_vect_of(o)?;
        Ok(())
    }

    fn __imul__(&mut self, o: &Bound<'_, PyAny>) -> PyResult<()> {
        self.0 *= int_vect_of(o)?;
        Ok(())
    }

    fn __itruediv__(&mut self, o: &Bound<'_, PyAny>) -> PyResult<()> {
        self.0 = div_iv(self.0, int_vect_of(o)?)?;
        Ok(())
    }

    fn __neg__(&self) -> Self {
        Self(-self.0)
    }

    /// `==`/`!=` with an IntVect, a 3-sequence or an int (every component); `<`, `<=`,
    /// `>`, `>=` in AMReX's lexicographic order (z first).
    fn __richcmp__(&self, o: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<Py<PyAny>> {
        let py = o.py();
        let Some(b) = int_vect_opt(o) else {
            return Ok(match op {
                CompareOp::Eq => false.into_pyobject(py)?.to_owned().into_any().unbind(),
                CompareOp::Ne => true.into_pyobject(py)?.to_owned().into_any().unbind(),
                _ => py.NotImplemented(),
            });
        };
        let a = self.0;
        let r = match op {
            CompareOp::Eq => a == b,
            CompareOp::Ne => a != b,
            CompareOp::Lt => lex_lt(a, b),
            CompareOp::Le => !lex_lt(b, a),
            CompareOp::Gt => lex_lt(b, a),
            CompareOp::Ge => !lex_lt(a, b),
        };
        Ok(r.into_pyobject(py)?.to_owned().into_any().unbind())
    }

    /// Whether every component is `<` the other's (AMReX `allLT`).
    fn all_lt(&self, o: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.0.all_lt(int_vect_of(o)?))
    }

    /// Whether every component is `<=` the other's.
    fn all_le(&self, o: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.0.all_le(int_vect_of(o)?))
    }

    /// Whether every component is `>` the other's.
    fn all_gt(&self, o: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.0.all_gt(int_vect_of(o)?))
    }

    /// Whether every component is `>=` the other's.
    fn all_ge(&self, o: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.0.all_ge(int_vect_of(o)?))
    }

    /// Floor division by `ratio`, AMReX's rule for negative indices (a new IntVect).
    fn coarsen(&self, ratio: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self(self.0.coarsen(int_vect_of(ratio)?)))
    }

    /// Multiplication by `ratio` (a new IntVect).
    fn refine(&self, ratio: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self(self.0.refine(int_vect_of(ratio)?)))
    }

    /// `copy.copy(iv)`: an independent IntVect.
    fn __copy__(&self) -> Self {
        *self
    }

    /// `copy.deepcopy(iv)`.
    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
        *self
    }

    fn __repr__(&self) -> String {
        format!("IntVect({}, {}, {})", self.0.x(), self.0.y(), self.0.z())
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }
}

/// Component `i` of three (negative from the end), or `IndexError`.
fn component(i: isize) -> PyResult<usize> {
    let j = if i < 0 { i + 3 } else { i };
    if (0..3).contains(&j) {
        Ok(j as usize)
    } else {
        Err(PyIndexError::new_err(format!(
            "IntVect index {i} out of range (3 components)"
        )))
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
///
/// Mutable as in pyAMReX: `grow`, `grow_low`, `grow_high`, `shift`, `convert`,
/// `surrounding_nodes`, `enclosed_cells`, `make_slab` and `normalize` change this box (and
/// return a copy of the result, so `b2 = b.grow(1)` works too, with `b` grown as well);
/// `coarsen`, `refine`, `intersection`, `min_box` and `&` return new boxes. Not hashable.
#[pyclass(module = "amrex_rs", name = "Box", eq)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PyBox(pub(crate) IndexBox);

impl PyBox {
    /// Replaces this box with `b` and returns a copy (pyAMReX's mutate-and-return).
    fn set(&mut self, b: IndexBox) -> Self {
        self.0 = b;
        *self
    }
}

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

    /// Inclusive low corner (a copy; assigning `b.small_end = iv` moves it).
    #[getter]
    fn small_end(&self) -> PyIntVect {
        PyIntVect(self.0.small_end())
    }

    #[setter]
    fn set_small_end(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.0 = IndexBox::with_type(int_vect_of(v)?, self.0.big_end(), self.0.ix_type());
        Ok(())
    }

    /// Inclusive high corner (a copy; assigning `b.big_end = iv` moves it).
    #[getter]
    fn big_end(&self) -> PyIntVect {
        PyIntVect(self.0.big_end())
    }

    #[setter]
    fn set_big_end(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.0 = IndexBox::with_type(self.0.small_end(), int_vect_of(v)?, self.0.ix_type());
        Ok(())
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

    #[setter]
    fn set_lo_vect(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.set_small_end(v)
    }

    /// Alias of `big_end` (pyAMReX `hi_vect`).
    #[getter]
    fn hi_vect(&self) -> PyIntVect {
        self.big_end()
    }

    #[setter]
    fn set_hi_vect(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.set_big_end(v)
    }

    /// The index type.
    #[getter]
    fn ix_type(&self) -> PyIndexType {
        PyIndexType(self.0.ix_type())
    }

    /// Whether `big_end >= small_end` in every direction (a property, as pyAMReX).
    #[getter]
    fn ok(&self) -> bool {
        self.0.ok()
    }

    /// Whether the box has no cells (a property, as pyAMReX).
    #[getter]
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether every direction is cell-centred (a property, as pyAMReX).
    #[getter]
    fn cell_centered(&self) -> bool {
        self.0.cell_centered()
    }

    /// Whether every side has the same length.
    #[getter]
    fn is_square(&self) -> bool {
        let l = self.0.length();
        l.x() == l.y() && l.y() == l.z()
    }

    /// Cells per direction, or along `dir` (an int) when given.
    #[pyo3(signature = (dir=None))]
    fn length(&self, py: Python<'_>, dir: Option<usize>) -> PyResult<Py<PyAny>> {
        match dir {
            None => Ok(Bound::new(py, PyIntVect(self.0.length()))?
                .into_any()
                .unbind()),
            Some(d) => Ok(self.0.length()[dir_of(d)?]
                .into_pyobject(py)?
                .into_any()
                .unbind()),
        }
    }

    /// Cells per direction (pyAMReX's property `size`).
    #[getter]
    fn size(&self) -> PyIntVect {
        PyIntVect(self.0.length())
    }

    /// Total number of points (0 when not ok).
    #[getter]
    fn num_pts(&self) -> u64 {
        self.0.num_pts()
    }

    /// Total number of points as a float (pyAMReX `d_num_pts`).
    #[getter]
    fn d_num_pts(&self) -> f64 {
        self.0.num_pts() as f64
    }

    /// Total number of points (pyAMReX's property `volume`).
    #[getter]
    fn volume(&self) -> u64 {
        self.0.num_pts()
    }

    /// Total number of points (pyAMReX's method `numPts()`).
    #[pyo3(name = "numPts")]
    fn num_pts_method(&self) -> u64 {
        self.0.num_pts()
    }

    /// Number of points, as `len(box)`.
    fn __len__(&self) -> PyResult<usize> {
        self.0
            .checked_num_pts_usize()
            .ok_or_else(|| PyValueError::new_err("box too large"))
    }

    /// The cells as IntVects, `i` fastest (pyAMReX `for i, j, k in bx`).
    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let cells: Vec<PyIntVect> = self.0.iter().map(PyIntVect).collect();
        Ok(pyo3::types::PyList::new(py, cells)?.try_iter()?.into_any())
    }

    /// Whether the point (an IntVect or 3-sequence) or box is inside.
    fn contains(&self, o: &Bound<'_, PyAny>) -> PyResult<bool> {
        if let Ok(b) = o.cast::<PyBox>() {
            return Ok(self.0.contains_box(&b.borrow().0));
        }
        Ok(self.0.contains(int_vect_of(o)?))
    }

    /// Whether the point is inside and not on the box's boundary.
    fn strictly_contains(&self, p: &Bound<'_, PyAny>) -> PyResult<bool> {
        let p = int_vect_of(p)?;
        Ok(p.all_gt(self.0.small_end()) && p.all_lt(self.0.big_end()))
    }

    fn __contains__(&self, o: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.contains(o)
    }

    /// Whether the boxes overlap.
    fn intersects(&self, o: &Self) -> bool {
        self.0.intersects(&o.0)
    }

    /// Whether the boxes have the same lengths.
    fn same_size(&self, o: &Self) -> bool {
        self.0.length() == o.0.length()
    }

    /// Whether the boxes have the same index type.
    fn same_type(&self, o: &Self) -> bool {
        self.0.same_type(&o.0)
    }

    /// The overlap, or `None`.
    fn intersection(&self, o: &Self) -> Option<Self> {
        self.0.intersection(&o.0).map(Self)
    }

    fn __and__(&self, o: &Self) -> Option<Self> {
        self.intersection(o)
    }

    /// The smallest box holding both (a new box).
    fn min_box(&self, o: &Self) -> Self {
        Self(self.0.min_box(&o.0))
    }

    /// Grows this box (and returns a copy): `grow(n)` or `grow(iv)` on both sides of every
    /// direction, `grow(idir, n_cell)` in one; negative shrinks.
    #[pyo3(signature = (n, n_cell=None))]
    fn grow(&mut self, n: &Bound<'_, PyAny>, n_cell: Option<i32>) -> PyResult<Self> {
        let b = match n_cell {
            None => self.0.grow_iv(int_vect_of(n)?),
            Some(c) => self.0.grow_dir(dir_of(n.extract()?)?, c),
        };
        Ok(self.set(b))
    }

    /// Grows this box by `n_cell` on the low side of `idir` (and returns a copy).
    #[pyo3(signature = (idir, n_cell=1))]
    fn grow_low(&mut self, idir: usize, n_cell: i32) -> PyResult<Self> {
        let b = self.0.grow_lo(dir_of(idir)?, n_cell);
        Ok(self.set(b))
    }

    /// Grows this box by `n_cell` on the high side of `idir` (and returns a copy).
    #[pyo3(signature = (idir, n_cell=1))]
    fn grow_high(&mut self, idir: usize, n_cell: i32) -> PyResult<Self> {
        let b = self.0.grow_hi(dir_of(idir)?, n_cell);
        Ok(self.set(b))
    }

    /// Shifts this box (and returns a copy): `shift(iv)`, or `shift(dir, nzones)`.
    #[pyo3(signature = (v, nzones=None))]
    fn shift(&mut self, v: &Bound<'_, PyAny>, nzones: Option<i32>) -> PyResult<Self> {
        let b = match nzones {
            None => self.0.shift_iv(int_vect_of(v)?),
            Some(n) => self.0.shift(dir_of(v.extract()?)?, n),
        };
        Ok(self.set(b))
    }

    /// A shifted copy (`b + iv`).
    fn __add__(&self, v: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self(self.0.shift_iv(int_vect_of(v)?)))
    }

    /// A shifted copy (`b - iv`).
    fn __sub__(&self, v: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self(self.0.shift_iv(-int_vect_of(v)?)))
    }

    fn __iadd__(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.0 = self.0.shift_iv(int_vect_of(v)?);
        Ok(())
    }

    fn __isub__(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.0 = self.0.shift_iv(-int_vect_of(v)?);
        Ok(())
    }

    /// Makes this box nodal in every direction, or in `dir` (and returns a copy).
    #[pyo3(signature = (dir=None))]
    fn surrounding_nodes(&mut self, dir: Option<usize>) -> PyResult<Self> {
        let b = match dir {
            None => self.0.surrounding_nodes(),
            Some(d) => self.0.surrounding_nodes_dir(dir_of(d)?),
        };
        Ok(self.set(b))
    }

    /// Makes this box cell-centred in every direction, or in `dir` (and returns a copy).
    #[pyo3(signature = (dir=None))]
    fn enclosed_cells(&mut self, dir: Option<usize>) -> PyResult<Self> {
        let b = match dir {
            None => self.0.enclosed_cells(),
            Some(d) => self.0.enclosed_cells_dir(dir_of(d)?),
        };
        Ok(self.set(b))
    }

    /// Converts this box to another index type (and returns a copy).
    fn convert(&mut self, typ: &PyIndexType) -> Self {
        let b = self.0.convert(typ.0);
        self.set(b)
    }

    /// Swaps the ends where `small_end > big_end` (AMReX `normalize`; returns a copy).
    fn normalize(&mut self) -> Self {
        let (lo, hi) = (self.0.small_end(), self.0.big_end());
        let b = IndexBox::with_type(lo.min(hi), lo.max(hi), self.0.ix_type());
        self.set(b)
    }

    /// Coarsened by `ratio` (AMReX floor rule; a new box, this one unchanged).
    fn coarsen(&self, ratio: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self(self.0.coarsen_iv(int_vect_of(ratio)?)))
    }

    /// Refined by `ratio` (a new box, this one unchanged).
    fn refine(&self, ratio: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self(self.0.refine_iv(int_vect_of(ratio)?)))
    }

    /// Flattens this box to index `slab_index` of `direction` (and returns a copy).
    fn make_slab(&mut self, direction: usize, slab_index: i32) -> PyResult<Self> {
        let b = self.0.make_slab(dir_of(direction)?, slab_index);
        Ok(self.set(b))
    }

    /// `copy.copy(b)`: an independent box (the mutating methods change only this one).
    fn __copy__(&self) -> Self {
        *self
    }

    /// `copy.deepcopy(b)`.
    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
        *self
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
