//! `SmallMatrix` classes with pyAMReX's names: `SmallMatrix_{R}x{C}_{F|C}_SI{0|1}_double`
//! for 6×6, 6×1 and 1×6, column-major (`F`) and row-major (`C`), indices starting at 0 or 1.
//!
//! `__dlpack__` exports the matrix storage zero-copy with shape `(R, C)` and strides
//! `(1, R)` (F) or `(C, 1)` (C), so NumPy's `[i, j]` is element `(i + START, j + START)`.
//! Construction is explicit: `from_rows`, `from_cols`, or `from_numpy`/`from_dlpack`
//! (copies, any layout) — never a guess about nested lists.

use crate::dlpack::common::Export;
use crate::dlpack::export::{DlpackSource, ExportCount};
use crate::dlpack::import::{Sharing, import, to_numpy, to_xp};
use crate::dlpack::install;
use crate::error::py_err;
use crate::views::SharedView;
use amrex_array4::Access;
use amrex_dlpack_capsule::Imported;
use amrex_smallmatrix::{ColumnMajor, RowMajor, SmallMatrix};
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// A matrix of any of the classes, row-major and zero-based, for mixed products.
struct Dyn {
    rows: usize,
    cols: usize,
    vals: Vec<f64>,
}

/// Index arguments: `m[i, j]`, or `m[i]` for row and column vectors.
fn indices(idx: &Bound<'_, PyAny>, rows: usize, cols: usize) -> PyResult<(usize, usize)> {
    if let Ok(t) = idx.cast::<PyTuple>() {
        let (i, j): (usize, usize) = t.extract()?;
        return Ok((i, j));
    }
    let k: usize = idx.extract()?;
    match (rows, cols) {
        (_, 1) => Ok((k, usize::MAX)),
        (1, _) => Ok((usize::MAX, k)),
        _ => Err(PyTypeError::new_err("index a matrix with a pair: m[i, j]")),
    }
}

macro_rules! small_matrix {
    ($name:ident, $pyname:literal, $r:literal, $c:literal, $order:ty, $f:literal, $start:literal, rect) => {
        small_matrix_impl!($name, $pyname, $r, $c, $order, $f, $start, {});
    };
    ($name:ident, $pyname:literal, $r:literal, $c:literal, $order:ty, $f:literal, $start:literal, square) => {
        small_matrix_impl!($name, $pyname, $r, $c, $order, $f, $start, {
            /// The identity.
            #[staticmethod]
            fn identity() -> Self {
                Self {
                    m: SmallMatrix::identity(),
                }
            }

            /// Sum of the diagonal.
            fn trace(&self) -> f64 {
                self.m.trace()
            }

            /// Transposes in place; returns self.
            fn transpose_in_place(mut slf: PyRefMut<'_, Self>) -> PyRefMut<'_, Self> {
                slf.m.transpose_in_place();
                slf
            }
        });
    };
}

macro_rules! small_matrix_impl {
    ($name:ident, $pyname:literal, $r:literal, $c:literal, $order:ty, $f:literal, $start:literal, { $($extra:tt)* }) => {
        #[doc = concat!("AMReX `SmallMatrix<double, ", $r, ", ", $c, ">` (`", $pyname, "`).")]
        #[pyclass(module = "amrex_rs", name = $pyname)]
        #[derive(Debug, Clone)]
        pub(crate) struct $name {
            m: SmallMatrix<f64, $r, $c, $order, $start>,
        }

        impl $name {
            fn from_dyn(d: &Dyn) -> Self {
                Self {
                    m: SmallMatrix::from_fn(|i, j| d.vals[(i - $start) * d.cols + (j - $start)]),
                }
            }

            fn to_dyn(&self) -> Dyn {
                let mut vals = Vec::with_capacity($r * $c);
                for i in 0..$r {
                    for j in 0..$c {
                        vals.push(self.m[(i + $start, j + $start)]);
                    }
                }
                Dyn { rows: $r, cols: $c, vals }
            }

            fn export(&self) -> Export<'static> {
                let (shape, strides) = SmallMatrix::<f64, $r, $c, $order, $start>::dlpack_layout()
                    .unwrap_or(([$r, $c], [1, $r]));
                Export::host(self.m.as_ptr(), &shape, &strides, Access::Writable)
            }

            fn locate(&self, idx: &Bound<'_, PyAny>) -> PyResult<(usize, usize)> {
                let (mut i, mut j) = indices(idx, $r, $c)?;
                if i == usize::MAX {
                    i = $start;
                }
                if j == usize::MAX {
                    j = $start;
                }
                if self.m.get(i, j).is_none() {
                    return Err(PyIndexError::new_err(format!(
                        "index ({i}, {j}) out of range for a {}x{} matrix starting at {}",
                        $r, $c, $start
                    )));
                }
                Ok((i, j))
            }
        }

        impl DlpackSource for $name {
            fn with_export<R>(
                slf: &Bound<'_, Self>,
                f: impl FnOnce(&Export<'_>, Option<&ExportCount>) -> PyResult<R>,
            ) -> PyResult<R> {
                // The storage lives inside the Python object and is never reallocated.
                f(&slf.try_borrow()?.export(), None)
            }
        }

        #[pymethods]
        impl $name {
            /// A zero matrix, or a copy of another matrix of this class.
            #[new]
            #[pyo3(signature = (other=None))]
            fn py_new(other: Option<PyRef<'_, Self>>) -> Self {
                other.map_or_else(|| Self { m: SmallMatrix::zero() }, |o| o.clone())
            }

            /// From a list of rows (`rows[i][j]` is element `(i + START, j + START)`).
            #[staticmethod]
            fn from_rows(rows: [[f64; $c]; $r]) -> Self {
                Self { m: SmallMatrix::from_rows(rows) }
            }

            /// From a list of columns (`cols[j][i]` is element `(i + START, j + START)`).
            #[staticmethod]
            fn from_cols(cols: [[f64; $r]; $c]) -> Self {
                Self { m: SmallMatrix::from_cols(cols) }
            }

            /// A copy of any DLPack producer's `(R, C)` float64 array, any strides.
            #[staticmethod]
            fn from_dlpack(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
                let t = import(obj)?;
                let m = SmallMatrix::from_dlpack_copy(&t.view()).map_err(py_err)?;
                Ok(Self { m })
            }

            /// A read-only DLPack view of this matrix (`READ_ONLY`: NumPy's view is not
            /// writeable); it keeps the matrix alive and sees later writes to it.
            fn readonly(slf: &Bound<'_, Self>) -> SharedView {
                let mut e = slf.borrow().export();
                e.read_only = true;
                // SAFETY: the storage lives inside this Python object, which the view
                // holds, and never moves.
                unsafe { SharedView::new(slf.as_any(), e, None) }
            }

            /// Element `(i, j)` of any DLPack producer's matrix, read in place (zero-copy
            /// view: shape `(R, C)`, float64, this class's storage order).
            #[staticmethod]
            fn view_get(obj: &Bound<'_, PyAny>, i: usize, j: usize) -> PyResult<f64> {
                let t = import(obj)?;
                let m = SmallMatrix::<f64, $r, $c, $order, $start>::view_from_dlpack(&t.view())
                    .map_err(py_err)?;
                m.get(i, j).copied().ok_or_else(|| {
                    PyIndexError::new_err(format!("index ({i}, {j}) out of range"))
                })
            }

            /// Writes element `(i, j)` of any DLPack producer's matrix in place (refused for
            /// `READ_ONLY` producers).
            #[staticmethod]
            fn view_set(obj: &Bound<'_, PyAny>, i: usize, j: usize, value: f64) -> PyResult<()> {
                let mut t = import(obj)?;
                let view = match &mut t {
                    Imported::Versioned(t) => t.view_mut(),
                    Imported::Legacy(t) => t.view_mut(),
                }
                .map_err(py_err)?;
                let m = SmallMatrix::<f64, $r, $c, $order, $start>::view_from_dlpack_mut(view)
                    .map_err(py_err)?;
                *m.get_mut(i, j).ok_or_else(|| {
                    PyIndexError::new_err(format!("index ({i}, {j}) out of range"))
                })? = value;
                Ok(())
            }

            /// Alias of `from_dlpack` for NumPy arrays.
            #[staticmethod]
            fn from_numpy(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
                Self::from_dlpack(obj)
            }

            /// All zeros.
            #[staticmethod]
            fn zero() -> Self {
                Self { m: SmallMatrix::zero() }
            }

            /// `R * C`.
            #[getter]
            fn size(&self) -> usize {
                $r * $c
            }

            /// Number of rows.
            #[getter]
            fn row_size(&self) -> usize {
                $r
            }

            /// Number of columns.
            #[getter]
            fn column_size(&self) -> usize {
                $c
            }

            /// `"F"` (column-major) or `"C"` (row-major).
            #[getter]
            fn order(&self) -> &'static str {
                $f
            }

            /// The first valid index (0 or 1).
            #[getter]
            fn starting_index(&self) -> usize {
                $start
            }

            fn __getitem__(&self, idx: &Bound<'_, PyAny>) -> PyResult<f64> {
                let (i, j) = self.locate(idx)?;
                Ok(self.m[(i, j)])
            }

            fn __setitem__(&mut self, idx: &Bound<'_, PyAny>, v: f64) -> PyResult<()> {
                let (i, j) = self.locate(idx)?;
                self.m[(i, j)] = v;
                Ok(())
            }

            /// Sets every element to `v`; returns self.
            fn set_val(mut slf: PyRefMut<'_, Self>, v: f64) -> PyRefMut<'_, Self> {
                slf.m.set_val(v);
                slf
            }

            /// Sum of the elements.
            fn sum(&self) -> f64 {
                self.m.sum()
            }

            /// Product of the elements.
            fn prod(&self) -> f64 {
                self.m.product()
            }

            /// Sum of the elementwise products.
            fn dot(&self, o: &Self) -> f64 {
                self.m.dot(&o.m)
            }

            /// The transpose (a `C x R` matrix of the same order and start).
            #[getter(T)]
            fn transposed(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
                let d = self.to_dyn();
                let mut vals = vec![0.0; d.vals.len()];
                for i in 0..d.rows {
                    for j in 0..d.cols {
                        vals[j * d.rows + i] = d.vals[i * d.cols + j];
                    }
                }
                build(py, &Dyn { rows: d.cols, cols: d.rows, vals }, $f, $start)
            }

            fn __add__(&self, o: &Self) -> Self {
                Self { m: self.m + o.m }
            }

            fn __sub__(&self, o: &Self) -> Self {
                Self { m: self.m - o.m }
            }

            fn __neg__(&self) -> Self {
                Self { m: -self.m }
            }

            /// Scalar or matrix product (`m * 2.0`, `a * b` with matching inner size).
            fn __mul__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                if let Ok(s) = o.extract::<f64>() {
                    return Ok(Self { m: self.m * s }.into_pyobject(py)?.into_any().unbind());
                }
                let rhs = dyn_of(o).ok_or_else(|| {
                    PyTypeError::new_err("can multiply by a float or a SmallMatrix")
                })?;
                let lhs = self.to_dyn();
                if lhs.cols != rhs.rows {
                    return Err(PyValueError::new_err(format!(
                        "cannot multiply a {}x{} by a {}x{} matrix",
                        lhs.rows, lhs.cols, rhs.rows, rhs.cols
                    )));
                }
                let mut vals = vec![0.0; lhs.rows * rhs.cols];
                for i in 0..lhs.rows {
                    for j in 0..rhs.cols {
                        vals[i * rhs.cols + j] = (0..lhs.cols)
                            .map(|k| lhs.vals[i * lhs.cols + k] * rhs.vals[k * rhs.cols + j])
                            .sum();
                    }
                }
                let out = Dyn { rows: lhs.rows, cols: rhs.cols, vals };
                if out.rows == 1 && out.cols == 1 {
                    return Ok(out.vals[0].into_pyobject(py)?.into_any().unbind());
                }
                build(py, &out, $f, $start)
            }

            fn __rmul__(&self, s: f64) -> Self {
                Self { m: self.m * s }
            }

            fn __eq__(&self, o: &Bound<'_, PyAny>) -> bool {
                o.cast::<Self>().is_ok_and(|o| o.borrow().m == self.m)
            }

            /// The elements as nested lists of rows.
            fn to_list(&self) -> Vec<Vec<f64>> {
                let d = self.to_dyn();
                d.vals.chunks(d.cols.max(1)).map(<[f64]>::to_vec).collect()
            }

            /// `(device_type, device_id)` of the memory, as DLPack's `__dlpack_device__`.
            fn __dlpack_device__(&self) -> (i32, i32) {
                self.export().device_tuple()
            }

            /// Address of the first element.
            fn data_ptr(&self) -> usize {
                self.m.as_ptr().addr()
            }

            /// A NumPy view `[i, j]` (zero-copy unless `copy`).
            #[pyo3(signature = (copy=false))]
            fn to_numpy<'py>(slf: &Bound<'py, Self>, copy: bool) -> PyResult<Bound<'py, PyAny>> {
                let src = slf.borrow().export();
                to_numpy(slf.as_any(), &src, Sharing::copy_if(copy), "C")
            }

            /// As `to_numpy` (host memory).
            #[pyo3(signature = (copy=false))]
            fn to_xp<'py>(slf: &Bound<'py, Self>, copy: bool) -> PyResult<Bound<'py, PyAny>> {
                let src = slf.borrow().export();
                to_xp(slf.as_any(), &src, Sharing::copy_if(copy), "C")
            }

            fn __repr__(&self) -> String {
                format!("{}({:?})", $pyname, self.to_list())
            }

            $($extra)*
        }
    };
}

macro_rules! family {
    ($( ($name:ident, $pyname:literal, $r:literal, $c:literal, $order:ty, $f:literal, $start:literal, $kind:ident) ),* $(,)?) => {
        $( small_matrix!($name, $pyname, $r, $c, $order, $f, $start, $kind); )*

        fn dyn_of(o: &Bound<'_, PyAny>) -> Option<Dyn> {
            $( if let Ok(m) = o.cast::<$name>() { return Some(m.borrow().to_dyn()); } )*
            None
        }

        /// The class for `(rows, cols, order, start)` holding `d`.
        fn build(py: Python<'_>, d: &Dyn, f: &str, start: usize) -> PyResult<Py<PyAny>> {
            $(
                if (d.rows, d.cols, f, start) == ($r, $c, $f, $start) {
                    return Ok($name::from_dyn(d).into_pyobject(py)?.into_any().unbind());
                }
            )*
            Err(PyValueError::new_err(format!(
                "no SmallMatrix class for a {}x{} result", d.rows, d.cols
            )))
        }

        pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $( m.add_class::<$name>()?; install::<$name>(m.py())?; )*
            Ok(())
        }
    };
}

family!(
    (
        Sm66F0,
        "SmallMatrix_6x6_F_SI0_double",
        6,
        6,
        ColumnMajor,
        "F",
        0,
        square
    ),
    (
        Sm66F1,
        "SmallMatrix_6x6_F_SI1_double",
        6,
        6,
        ColumnMajor,
        "F",
        1,
        square
    ),
    (
        Sm66C0,
        "SmallMatrix_6x6_C_SI0_double",
        6,
        6,
        RowMajor,
        "C",
        0,
        square
    ),
    (
        Sm66C1,
        "SmallMatrix_6x6_C_SI1_double",
        6,
        6,
        RowMajor,
        "C",
        1,
        square
    ),
    (
        Sm61F0,
        "SmallMatrix_6x1_F_SI0_double",
        6,
        1,
        ColumnMajor,
        "F",
        0,
        rect
    ),
    (
        Sm61F1,
        "SmallMatrix_6x1_F_SI1_double",
        6,
        1,
        ColumnMajor,
        "F",
        1,
        rect
    ),
    (
        Sm61C0,
        "SmallMatrix_6x1_C_SI0_double",
        6,
        1,
        RowMajor,
        "C",
        0,
        rect
    ),
    (
        Sm61C1,
        "SmallMatrix_6x1_C_SI1_double",
        6,
        1,
        RowMajor,
        "C",
        1,
        rect
    ),
    (
        Sm16F0,
        "SmallMatrix_1x6_F_SI0_double",
        1,
        6,
        ColumnMajor,
        "F",
        0,
        rect
    ),
    (
        Sm16F1,
        "SmallMatrix_1x6_F_SI1_double",
        1,
        6,
        ColumnMajor,
        "F",
        1,
        rect
    ),
    (
        Sm16C0,
        "SmallMatrix_1x6_C_SI0_double",
        1,
        6,
        RowMajor,
        "C",
        0,
        rect
    ),
    (
        Sm16C1,
        "SmallMatrix_1x6_C_SI1_double",
        1,
        6,
        RowMajor,
        "C",
        1,
        rect
    ),
);
