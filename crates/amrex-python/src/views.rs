//! `SharedView`: a read-only (or re-described) DLPack view of another object's memory.
//!
//! `m.readonly()`, `fab.const_array()`, component slices and particle fields return one
//! of these: it holds a strong reference to the object that owns the memory and exports a
//! fixed description of it (pointer, shape, strides, `READ_ONLY`) through the shared
//! protocol. Only objects whose buffer never moves while they live hand these out.

use crate::dlpack::common::Export;
use crate::dlpack::export::{DlpackSource, ExportCount, ExportGuard};
use crate::dlpack::import::{Sharing, to_numpy, to_xp};
use crate::dlpack::install;
use pyo3::prelude::*;

/// A DLPack view of memory owned by another Python object.
///
/// Invariants:
/// 1. `export` describes memory owned by `owner` that stays valid, without moving, while
///    `owner` lives (the constructors' callers guarantee it).
/// 2. `guard`, when present, counts this view as a live export of the owner for as long
///    as the view lives, so the owner refuses to reallocate until the view is gone.
#[pyclass(module = "amrex_rs", name = "SharedView", frozen)]
pub(crate) struct SharedView {
    owner: Py<PyAny>,
    export: Export<'static>,
    _guard: Option<ExportGuard>,
}

// SAFETY: the raw pointer in `export` is only dereferenced by DLPack consumers, with the
// GIL held or under the protocol's rules, while `owner` (a `Py`, which is Send + Sync)
// keeps the memory alive (invariant 1); the copier reference is `'static` and stateless.
unsafe impl Send for SharedView {}
// SAFETY: as above; the struct is immutable (frozen).
unsafe impl Sync for SharedView {}

impl core::fmt::Debug for SharedView {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SharedView")
            .field("shape", &self.export.shape.as_slice())
            .field("read_only", &self.export.read_only)
            .finish()
    }
}

impl SharedView {
    /// # Safety
    /// `export` describes memory owned by `owner` that stays valid and does not move while
    /// `owner` lives (or, with `count`, while the count is non-zero: the view holds one).
    pub(crate) unsafe fn new(
        owner: &Bound<'_, PyAny>,
        export: Export<'static>,
        count: Option<&ExportCount>,
    ) -> Self {
        Self {
            owner: owner.clone().unbind(),
            export,
            _guard: count.map(ExportCount::guard),
        }
    }
}

impl DlpackSource for SharedView {
    fn with_export<R>(
        slf: &Bound<'_, Self>,
        f: impl FnOnce(&Export<'_>, Option<&ExportCount>) -> PyResult<R>,
    ) -> PyResult<R> {
        let this = slf.get();
        // The export's keep-alive holds this view, which holds the owner and its guard
        // (invariants 1 and 2).
        f(&this.export, None)
    }
}

#[pymethods]
impl SharedView {
    /// `(device_type, device_id)` of the memory, as DLPack's `__dlpack_device__`.
    fn __dlpack_device__(&self) -> (i32, i32) {
        self.export.device_tuple()
    }

    /// Whether consumers must not write.
    #[getter]
    fn read_only(&self) -> bool {
        self.export.read_only
    }

    /// Extents.
    #[getter]
    fn shape(&self) -> Vec<i64> {
        self.export.shape.as_slice().to_vec()
    }

    /// Strides in elements.
    #[getter]
    fn strides(&self) -> Vec<i64> {
        self.export.strides.as_slice().to_vec()
    }

    /// Address of the first element.
    fn data_ptr(&self) -> usize {
        self.export.data.addr()
    }

    /// The object that owns the memory.
    #[getter]
    fn owner(&self, py: Python<'_>) -> Py<PyAny> {
        self.owner.clone_ref(py)
    }

    /// A NumPy view (or copy).
    #[pyo3(signature = (copy=false, order="C"))]
    fn to_numpy<'py>(
        slf: &Bound<'py, Self>,
        copy: bool,
        order: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        to_numpy(
            slf.as_any(),
            &slf.get().export,
            Sharing::copy_if(copy),
            order,
        )
    }

    /// An array of the module matching the device.
    #[pyo3(signature = (copy=false, order="C"))]
    fn to_xp<'py>(slf: &Bound<'py, Self>, copy: bool, order: &str) -> PyResult<Bound<'py, PyAny>> {
        to_xp(
            slf.as_any(),
            &slf.get().export,
            Sharing::copy_if(copy),
            order,
        )
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SharedView>()?;
    install::<SharedView>(m.py())
}
