//! `MultiFab.__getitem__` / `__setitem__` with global indices, as pyAMReX does them, and
//! `shape` / `shape_with_ghosts`, the extents of that index space. The subscript is parsed
//! by the `indexing` module.

use super::{PyMultiFab, Store};
use crate::dlpack::import::Tensor;
use crate::error::py_err;
use crate::indexing::Region;
use amrex_dlpack_capsule::Imported;
use amrex_dlpack_core::ToDlpack;
use amrex_multifab::Ghosts;
use ndarray::ShapeBuilder;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Global indexing (pyAMReX's `MultiFab.__getitem__` / `__setitem__`); the rules are in
/// the `indexing` module.
#[pymethods]
impl PyMultiFab {
    /// `mf[i, j, k, n]` with global indices, as in pyAMReX: a NumPy array (copy) of the
    /// region across every box, valid cells winning over ghost cells, length-1 axes
    /// dropped (a scalar when every axis is one cell). `:` spans the valid cells,
    /// imaginary indices reach ghost cells (`mf[-1j:]`), `()` spans an axis with its
    /// ghosts and `mf[()]` is everything; the component is the last index.
    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        // Arena memory is read through a host copy of the whole MultiFab.
        let staged;
        let mf = match &self.store {
            Store::Host(m) => m,
            Store::Arena(m) => {
                staged = m.to_host().map_err(py_err)?;
                &staged
            }
        };
        let region = Region::parse(mf, key)?;
        let np = py.import("numpy")?;
        let [ni, nj, nk, nc] = region.shape();
        let arr = if region.is_empty() {
            np.call_method1("zeros", ((ni, nj, nk, nc),))?
        } else {
            let (bx, comp, nc) = region.cells()?;
            let v = mf.read_region(comp..comp + nc, bx).map_err(py_err)?;
            let a = ndarray::Array4::from_shape_vec((ni, nj, nk, nc).f(), v)
                .expect("read_region returns one value per cell and component");
            let t = a.to_dlpack().map_err(py_err)?;
            let t = Bound::new(py, Tensor::new(Imported::Versioned(t)))?;
            np.call_method1("from_dlpack", (t,))?
        };
        let arr = arr.call_method0("squeeze")?;
        if arr.getattr("ndim")?.extract::<usize>()? == 0 {
            arr.get_item(())
        } else {
            Ok(arr)
        }
    }

    /// `mf[i, j, k, n] = value`, a scalar or an array, written to the valid and ghost cells
    /// of every box that covers a cell of the region (pyAMReX's semantics). An array may
    /// have the region's shape with or without its length-1 axes (pyAMReX re-inserts
    /// them) and broadcasts as in NumPy.
    ///
    /// Arena memory is written through a host copy of the whole MultiFab, copied back.
    fn __setitem__(&mut self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut staged = match &self.store {
            Store::Host(_) => None,
            Store::Arena(m) => Some(m.to_host().map_err(py_err)?),
        };
        let mf = match (&mut self.store, staged.as_mut()) {
            (_, Some(h)) => h,
            (Store::Host(m), None) => m,
            (Store::Arena(_), None) => unreachable!("staged above"),
        };
        let region = Region::parse(mf, key)?;
        if region.is_empty() {
            return Ok(());
        }
        let (bx, comp, nc) = region.cells()?;
        let n: usize = region.shape().iter().product();
        let scalar = if value.hasattr("shape")? {
            None
        } else {
            value.extract::<f64>().ok()
        };
        let data = match scalar {
            Some(x) => vec![x; n],
            None => region_values(value, &region)?,
        };
        mf.write_region(&data, Ghosts::Include, comp..comp + nc, bx)
            .map_err(py_err)?;
        if let (Store::Arena(m), Some(h)) = (&mut self.store, staged.as_ref()) {
            m.copy_from_host(h).map_err(py_err)?;
        }
        Ok(())
    }

    /// `(nx, ny, nz, ncomp)` of the valid cells' minimal box (pyAMReX `mf.shape`).
    #[getter]
    fn shape(&self) -> (i32, i32, i32, usize) {
        let l = either!(self, m => m.box_array().minimal_box().length());
        (l[0], l[1], l[2], self.ncomp_())
    }

    /// As `shape`, with the ghost cells on both sides (pyAMReX `mf.shape_with_ghosts`).
    #[getter]
    fn shape_with_ghosts(&self) -> (i32, i32, i32, usize) {
        let l = either!(self, m => m.box_array().minimal_box().length());
        let g = either!(self, m => m.n_grow());
        (
            l[0] + 2 * g[0],
            l[1] + 2 * g[1],
            l[2] + 2 * g[2],
            self.ncomp_(),
        )
    }
}

/// The values of an array `value` for `region`, broadcast to its full `(ni, nj, nk, nc)`
/// shape and flattened in Fortran order (what `write_region` takes), always copied into
/// Rust-owned memory (the array may be a view of this very MultiFab).
fn region_values(value: &Bound<'_, PyAny>, region: &Region) -> PyResult<Vec<f64>> {
    let py = value.py();
    let np = py.import("numpy")?;
    let kwargs = pyo3::types::PyDict::new(py);
    kwargs.set_item("dtype", "float64")?;
    let arr = np.call_method("asarray", (value,), Some(&kwargs))?;
    let target = region.shape();
    let mut shape: Vec<usize> = arr.getattr("shape")?.extract()?;
    if shape.len() != 4 {
        // pyAMReX: a length-1 axis of the region may be absent from the value.
        for (d, &len) in target[..3].iter().enumerate() {
            if len == 1 {
                shape.insert(d.min(shape.len()), 1);
            }
        }
        if target[3] == 1 || shape.len() < 4 {
            shape.insert(3.min(shape.len()), 1);
        }
    }
    let mismatch = || {
        PyValueError::new_err(format!(
            "cannot assign an array of shape {:?} to a MultiFab region of shape {:?} \
             (without its length-1 axes: {:?})",
            arr.getattr("shape")
                .map(|s| s.to_string())
                .unwrap_or_default(),
            target,
            region.squeezed_shape()
        ))
    };
    if shape.len() != 4 {
        return Err(mismatch());
    }
    let arr = arr
        .call_method1("reshape", (shape,))
        .and_then(|a| np.call_method1("broadcast_to", (a, target)))
        .map_err(|_| mismatch())?;
    // `.T` of a Fortran-ordered copy is C-contiguous with the axes reversed, so its
    // row-major flattening is the Fortran order of the region.
    let flat = arr
        .getattr("T")?
        .call_method1("reshape", (-1,))
        .and_then(|a| np.call_method1("ascontiguousarray", (a,)))?;
    let t = crate::dlpack::import::import(&flat)?;
    let typed = t.view().typed::<f64>().map_err(py_err)?;
    let values = typed
        .as_slice()
        .ok_or_else(|| PyValueError::new_err("internal: flattened values are not compact"))?;
    Ok(values.to_vec())
}
