//! Our DLPack 1.3 C exchange API (`__dlpack_c_exchange_api__`), on top of both
//! directions.
//!
//! Every container type carries, as a type attribute, a capsule named
//! `"dlpack_exchange_api"` pointing to one static [`ExchangeApi`] table. Its
//! `managed_tensor_from_py_object_no_sync` finds the object's type in a registry filled
//! by [`register`] (one exporter per container type, installed with `__dlpack__`) and
//! makes the same zero-copy versioned tensor `__dlpack__(max_version=(1, x))` would, with
//! no capsule and no argument parsing. `managed_tensor_allocator` makes zero-filled host
//! tensors, `managed_tensor_to_py_object_no_sync` wraps a tensor in a [`Tensor`],
//! `current_work_stream` reports NULL (host memory has no stream), and
//! `dltensor_from_py_object_no_sync` is NULL: our extents and strides are computed per
//! call, so there is nothing that outlives the call to point a borrowed `DLTensor` at.
//!
//! The consumer of other producers' tables is on the import side
//! ([`try_import`](crate::dlpack::import::try_import)).

use crate::dlpack::abi::{ApiHeader, CAPSULE_NAME, ExchangeApi, SetError};
use crate::dlpack::common::type_name;
use crate::dlpack::export::{DlpackSource, allocate_versioned, share_versioned};
use crate::dlpack::import::Tensor;
use crate::error::py_err;
use amrex_dlpack_capsule::Imported;
use amrex_dlpack_core::{
    DLDataType, DLDeviceType, DLManagedTensorVersioned, DLPackVersion, DLTensor, ManagedTensor,
};
use core::ffi::{c_int, c_void};
use core::panic::AssertUnwindSafe;
use core::sync::atomic::{AtomicUsize, Ordering};
use pyo3::exceptions::{PyBufferError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyCapsule;
use std::panic::catch_unwind;
use std::sync::RwLock;

/// The table, shareable across threads: it is immutable and `prev_api` is NULL.
struct SyncApi(ExchangeApi);

// SAFETY: never written after construction; the only pointer in it is NULL.
unsafe impl Sync for SyncApi {}

static API: SyncApi = SyncApi(ExchangeApi {
    header: ApiHeader {
        version: DLPackVersion { major: 1, minor: 3 },
        prev_api: core::ptr::null_mut(),
    },
    managed_tensor_allocator: Some(allocator),
    managed_tensor_from_py_object_no_sync: Some(from_py_object),
    managed_tensor_to_py_object_no_sync: Some(to_py_object),
    dltensor_from_py_object_no_sync: None,
    current_work_stream: Some(work_stream),
});

/// Exports an object of one registered type.
type Exporter = fn(&Bound<'_, PyAny>) -> PyResult<ManagedTensor<'static>>;

/// Type object address → exporter, for every container type.
static EXPORTERS: RwLock<Vec<(usize, Exporter)>> = RwLock::new(Vec::new());

/// Number of tensors our table exported (tests check that consumers took this path).
static EXCHANGE_EXPORTS: AtomicUsize = AtomicUsize::new(0);

fn export_of<T: DlpackSource>(obj: &Bound<'_, PyAny>) -> PyResult<ManagedTensor<'static>> {
    let this = obj.cast::<T>()?;
    T::with_export(this, |src, count| {
        // SAFETY: `DlpackSource` implementors describe memory kept alive by the object
        // and not reallocated while `count` is non-zero.
        Ok(unsafe { share_versioned(obj, src, count) })
    })
}

/// The shared `"dlpack_exchange_api"` capsule.
fn capsule(py: Python<'_>) -> PyResult<&Bound<'_, PyCapsule>> {
    static CAPSULE: PyOnceLock<Py<PyCapsule>> = PyOnceLock::new();
    let c = CAPSULE.get_or_try_init(py, || -> PyResult<Py<PyCapsule>> {
        let ptr = core::ptr::from_ref(&API.0).cast_mut().cast::<c_void>();
        // SAFETY: attached; `ptr` is a static that lives as long as the process, and the
        // name is a static C string; no destructor.
        let raw = unsafe { ffi::PyCapsule_New(ptr, CAPSULE_NAME.as_ptr(), None) };
        // SAFETY: a new reference or NULL with an exception set.
        Ok(unsafe { Bound::from_owned_ptr_or_err(py, raw) }?
            .cast_into::<PyCapsule>()?
            .unbind())
    })?;
    Ok(c.bind(py))
}

/// Publishes the table on `T`'s type and registers its exporter.
pub(crate) fn register<T: DlpackSource>(py: Python<'_>) -> PyResult<()> {
    let ty = py.get_type::<T>();
    ty.setattr("__dlpack_c_exchange_api__", capsule(py)?)?;
    let mut reg = EXPORTERS
        .write()
        .map_err(|_| PyTypeError::new_err("exchange API registry poisoned"))?;
    reg.push((ty.as_ptr().addr(), export_of::<T> as Exporter));
    Ok(())
}

/// Runs `f` with the interpreter attached (the caller holds the GIL, as the header
/// requires), turning panics and errors into a Python exception and -1.
fn guarded(f: impl FnOnce(Python<'_>) -> PyResult<()>) -> c_int {
    // SAFETY: the exchange API is called by Python-level consumers with the GIL held.
    let py = unsafe { Python::assume_attached() };
    match catch_unwind(AssertUnwindSafe(|| f(py))) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            e.restore(py);
            -1
        }
        Err(_) => {
            pyo3::panic::PanicException::new_err("DLPack exchange API panicked").restore(py);
            -1
        }
    }
}

unsafe extern "C" fn from_py_object(
    py_object: *mut c_void,
    out: *mut *mut DLManagedTensorVersioned,
) -> c_int {
    guarded(|py| {
        if py_object.is_null() || out.is_null() {
            return Err(PyTypeError::new_err("DLPack exchange API: NULL argument"));
        }
        // SAFETY: the consumer passes a live Python object, borrowed for the call.
        let obj = unsafe { Borrowed::from_ptr(py, py_object.cast::<ffi::PyObject>()) };
        let ty = obj.get_type().as_ptr().addr();
        let exporter = EXPORTERS
            .read()
            .ok()
            .and_then(|r| r.iter().find(|(t, _)| *t == ty).map(|(_, e)| *e))
            .ok_or_else(|| {
                PyBufferError::new_err(format!(
                    "DLPack exchange API of amrex_rs: {} is not an amrex_rs container",
                    type_name(&obj)
                ))
            })?;
        let tensor = exporter(&obj)?;
        EXCHANGE_EXPORTS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: `out` is a valid place for one pointer (checked non-NULL above); the
        // consumer now owns the tensor and calls its deleter once.
        unsafe { out.write(tensor.into_raw()) };
        Ok(())
    })
}

unsafe extern "C" fn to_py_object(
    tensor: *mut DLManagedTensorVersioned,
    out_py_object: *mut *mut c_void,
) -> c_int {
    guarded(|py| {
        if out_py_object.is_null() {
            return Err(PyTypeError::new_err(
                "DLPack exchange API: NULL out_py_object",
            ));
        }
        // SAFETY: the consumer hands us ownership of a managed tensor (the header: "the
        // ownership of the tensor is stolen"); `from_raw` validates it and calls the
        // deleter itself when it refuses.
        let t = unsafe { ManagedTensor::from_raw(tensor) }.map_err(py_err)?;
        let obj = Bound::new(py, Tensor::new(Imported::Versioned(t)))?;
        // SAFETY: `out_py_object` is a valid place for one pointer (checked); the caller
        // receives the new strong reference.
        unsafe { out_py_object.write(obj.into_ptr().cast()) };
        Ok(())
    })
}

unsafe extern "C" fn allocator(
    prototype: *mut DLTensor,
    out: *mut *mut DLManagedTensorVersioned,
    error_ctx: *mut c_void,
    set_error: SetError,
) -> c_int {
    let result = catch_unwind(AssertUnwindSafe(|| -> Result<(), String> {
        if prototype.is_null() || out.is_null() {
            return Err("NULL prototype or out".into());
        }
        // SAFETY: the consumer passes a valid prototype whose shape holds `ndim` extents.
        let p = unsafe { &*prototype };
        if p.device.device_type != DLDeviceType::CPU {
            return Err(format!(
                "amrex_rs allocates host memory only, not on {}",
                p.device
            ));
        }
        let ndim = usize::try_from(p.ndim).map_err(|_| format!("ndim {}", p.ndim))?;
        let shape: &[i64] = if ndim == 0 {
            &[]
        } else if p.shape.is_null() {
            return Err("NULL shape".into());
        } else {
            // SAFETY: a non-NULL shape of a prototype holds `ndim` extents (header).
            unsafe { core::slice::from_raw_parts(p.shape, ndim) }
        };
        if p.dtype.lanes != 1 {
            return Err(format!("lanes {} (only 1 is supported)", p.dtype.lanes));
        }
        let dtype: DLDataType = p.dtype;
        let t = allocate_versioned(dtype, shape)
            .ok_or_else(|| format!("cannot allocate a {dtype} tensor of shape {shape:?}"))?;
        // SAFETY: `out` is a valid place for one pointer (checked).
        unsafe { out.write(t.into_raw()) };
        Ok(())
    }));
    let msg = match result {
        Ok(Ok(())) => return 0,
        Ok(Err(m)) => m,
        Err(_) => "amrex_rs allocator panicked".into(),
    };
    let msg = std::ffi::CString::new(msg).unwrap_or_default();
    // SAFETY: the header's contract: `set_error(error_ctx, kind, message)` is called
    // exactly when we fail, with NUL-terminated strings that live for the call.
    unsafe { set_error(error_ctx, c"MemoryError".as_ptr(), msg.as_ptr()) };
    -1
}

unsafe extern "C" fn work_stream(
    _device_type: DLDeviceType,
    _device_id: i32,
    out_current_stream: *mut *mut c_void,
) -> c_int {
    if !out_current_stream.is_null() {
        // SAFETY: a valid place for one pointer (checked): amrex_rs memory has no stream
        // of its own (host memory; device arenas use the default stream).
        unsafe { out_current_stream.write(core::ptr::null_mut()) };
    }
    0
}

/// `amrex_rs._debug_exchange_exports()`: tensors exported through our C table so far.
#[cfg(feature = "testing")]
#[pyfunction]
pub(crate) fn _debug_exchange_exports() -> usize {
    EXCHANGE_EXPORTS.load(Ordering::Relaxed)
}

/// `amrex_rs._debug_exchange_api_address()`: the address of our table (for C tests).
#[cfg(feature = "testing")]
#[pyfunction]
pub(crate) fn _debug_exchange_api_address() -> usize {
    core::ptr::from_ref(&API.0).addr()
}
