//! The import side: adopting other producers' tensors and handing ours to array modules.
//! `from_dlpack` takes a producer's tensor (through its type's C exchange API when it has
//! one, else a capsule from its `__dlpack__`) into a [`Tensor`]; `to_numpy` and `to_xp`
//! give any exporter's memory to NumPy, CuPy or dpnp (imported lazily).

use crate::dlpack::abi::{CAPSULE_NAME, ExchangeApi};
use crate::dlpack::common::{Dims, Export, MAX_NDIM, type_name};
use crate::dlpack::export::{DlpackSource, ExportCount};
use crate::error::py_err;
use amrex_dlpack_capsule::{Imported, take_from_capsule};
use amrex_dlpack_core::{DLDeviceType, DLManagedTensorVersioned, Device, ManagedTensor};
use core::sync::atomic::{AtomicUsize, Ordering};
use pyo3::exceptions::{PyBufferError, PyImportError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyCapsule, PyDict, PyInt, PyTuple};

/// Which array module holds arrays of `device`: NumPy for host-accessible memory, CuPy
/// for CUDA and ROCm device memory, dpnp for oneAPI.
fn xp_name(device: Device, host_accessible: bool) -> &'static str {
    // CUDA managed memory is host accessible (NumPy views it), but it lives on the
    // device while kernels use it: its array module is CuPy, as in pyAMReX.
    if device.device_type == DLDeviceType::CUDA_MANAGED {
        return "cupy";
    }
    if host_accessible {
        return "numpy";
    }
    match device.device_type {
        DLDeviceType::CUDA | DLDeviceType::ROCM => "cupy",
        DLDeviceType::ONE_API => "dpnp",
        _ => "numpy",
    }
}

fn import_xp<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyModule>> {
    py.import(name).map_err(|e| {
        PyImportError::new_err(format!(
            "to_xp() needs the '{name}' package for this data ({e}); install it, or use \
             to_numpy(copy=True) to copy to the host"
        ))
    })
}

/// Whether `to_numpy` / `to_xp` hand out the exporter's memory itself or a copy of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sharing {
    /// A zero-copy view (`copy=False`); refused where the array module cannot see the
    /// memory.
    View,
    /// A copy the array owns (`copy=True`).
    Copy,
}

impl Sharing {
    /// The Python keyword `copy=`.
    pub(crate) fn copy_if(copy: bool) -> Self {
        if copy { Self::Copy } else { Self::View }
    }
}

/// Whether `order` asks for the reversed (`"F"`, AMReX's `(i, j, k, n)`) axes rather than
/// the exporter's own (`"C"`); `ValueError` for anything else.
fn f_order(order: &str) -> PyResult<bool> {
    match order {
        "C" | "c" => Ok(false),
        "F" | "f" => Ok(true),
        _ => Err(PyValueError::new_err(format!(
            "order must be 'F' or 'C', got {order:?}"
        ))),
    }
}

/// `to_numpy(copy, order)` for any exporter: a zero-copy NumPy view (or a copy), with
/// `order="F"` reversing the axes (AMReX's `(i, j, k, n)` order for fabs).
pub(crate) fn to_numpy<'py>(
    obj: &Bound<'py, PyAny>,
    src: &Export,
    sharing: Sharing,
    order: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let py = obj.py();
    let reverse = f_order(order)?;
    let np = py.import("numpy")?;
    let arr = if src.host_accessible {
        let arr = np.call_method1("from_dlpack", (obj,))?;
        match sharing {
            Sharing::Copy => arr.call_method0("copy")?,
            Sharing::View => arr,
        }
    } else if sharing == Sharing::Copy {
        let kwargs = PyDict::new(py);
        kwargs.set_item("device", "cpu")?;
        kwargs.set_item("copy", true)?;
        np.call_method("from_dlpack", (obj,), Some(&kwargs))?
    } else {
        return Err(PyBufferError::new_err(format!(
            "to_numpy(copy=False): the data lives in device memory ({}), which NumPy \
             cannot view; use to_xp() for a zero-copy device array or to_numpy(copy=True) \
             for a host copy",
            src.device
        )));
    };
    if reverse { arr.getattr("T") } else { Ok(arr) }
}

/// `to_xp(copy, order)`: the array module matching the device, imported lazily.
pub(crate) fn to_xp<'py>(
    obj: &Bound<'py, PyAny>,
    src: &Export,
    sharing: Sharing,
    order: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let name = xp_name(src.device, src.host_accessible);
    if name == "numpy" {
        return to_numpy(obj, src, sharing, order);
    }
    from_module(&import_xp(obj.py(), name)?, obj, sharing, order)
}

/// `to_cupy(copy, order)`: a CuPy array of the memory (CuPy's own error for memory it
/// cannot see, an `ImportError` without CuPy), as pyAMReX's `to_cupy`.
pub(crate) fn to_cupy<'py>(
    obj: &Bound<'py, PyAny>,
    sharing: Sharing,
    order: &str,
) -> PyResult<Bound<'py, PyAny>> {
    from_module(&import_xp(obj.py(), "cupy")?, obj, sharing, order)
}

/// `xp.from_dlpack(obj)`, copied for `Sharing::Copy`, transposed for `order="F"`.
fn from_module<'py>(
    xp: &Bound<'py, PyModule>,
    obj: &Bound<'py, PyAny>,
    sharing: Sharing,
    order: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let reverse = f_order(order)?;
    let mut arr = xp.call_method1("from_dlpack", (obj,))?;
    if sharing == Sharing::Copy {
        arr = arr.call_method0("copy")?;
    }
    if reverse { arr.getattr("T") } else { Ok(arr) }
}

/// The `stream` a consumer on our kernels' stream passes to a producer on `device`:
/// 1 (CUDA's legacy default stream, which our CUDA kernels and copies use) for CUDA
/// device and managed memory, 0 (the default stream) for ROCm, none otherwise (host
/// memory, oneAPI: the protocol allows no stream there).
fn consumer_stream(device_type: i32) -> Option<i64> {
    match DLDeviceType(device_type) {
        DLDeviceType::CUDA | DLDeviceType::CUDA_MANAGED => Some(1),
        DLDeviceType::ROCM => Some(0),
        _ => None,
    }
}

/// The device `obj.__dlpack_device__()` reports; `None` when it has no such method or
/// the call fails (the producer's `__dlpack__` then decides alone, as before).
fn producer_device_type(obj: &Bound<'_, PyAny>) -> Option<i32> {
    let py = obj.py();
    let f = obj.getattr(pyo3::intern!(py, "__dlpack_device__")).ok()?;
    let (t, _id): (i32, i32) = f.call0().ok()?.extract().ok()?;
    Some(t)
}

/// Gets an unused DLPack capsule from `obj`: the capsule itself, or what its
/// `__dlpack__(max_version=(1, 3))` returns (retrying without `max_version` for
/// producers that predate DLPack 1.0 and raise `TypeError`). Producers on CUDA or ROCm
/// (by `__dlpack_device__()`) also get the `stream` our kernels run on (see
/// [`consumer_stream`]), so their queued work is ordered before ours. Every refusal
/// names what it received.
fn capsule_of<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyCapsule>> {
    if let Ok(capsule) = obj.cast::<PyCapsule>() {
        check_capsule_name(capsule, "the argument")?;
        return Ok(capsule.clone());
    }
    let py = obj.py();
    let method = obj.getattr(pyo3::intern!(py, "__dlpack__")).map_err(|_| {
        PyTypeError::new_err(format!(
            "from_dlpack: expected an object with __dlpack__ or a DLPack capsule, got {}",
            type_name(obj)
        ))
    })?;
    let stream = producer_device_type(obj).and_then(consumer_stream);
    let out = match stream {
        None => {
            // One shared `{"max_version": (1, 3)}`: callees receive keyword arguments by
            // value (vectorcall) or a copy (`**kwargs`), so it is never mutated.
            static KWARGS: PyOnceLock<Py<PyDict>> = PyOnceLock::new();
            let kwargs = KWARGS.get_or_try_init(py, || -> PyResult<Py<PyDict>> {
                let d = PyDict::new(py);
                d.set_item("max_version", PyTuple::new(py, [1u32, 3])?)?;
                Ok(d.unbind())
            })?;
            match method.call((), Some(kwargs.bind(py))) {
                Ok(c) => c,
                Err(e) if e.is_instance_of::<PyTypeError>(py) => method.call0()?,
                Err(e) => return Err(e),
            }
        }
        Some(s) => {
            let kwargs = PyDict::new(py);
            kwargs.set_item("stream", s)?;
            let plain = kwargs.copy()?;
            kwargs.set_item("max_version", PyTuple::new(py, [1u32, 3])?)?;
            match method.call((), Some(&kwargs)) {
                Ok(c) => c,
                Err(e) if e.is_instance_of::<PyTypeError>(py) => method.call((), Some(&plain))?,
                Err(e) => return Err(e),
            }
        }
    };
    let from = format!("what {}.__dlpack__() returned", type_name(obj));
    let capsule = out.cast::<PyCapsule>().map_err(|_| {
        PyTypeError::new_err(format!(
            "from_dlpack: {from} is of type {}, expected a DLPack capsule",
            type_name(&out)
        ))
    })?;
    check_capsule_name(capsule, &from)?;
    Ok(capsule.clone())
}

/// Refuses a capsule that is not an unused DLPack tensor, saying what its name is.
fn check_capsule_name(capsule: &Bound<'_, PyCapsule>, from: &str) -> PyResult<()> {
    let Some(name) = capsule.name()? else {
        return Err(PyValueError::new_err(format!(
            "from_dlpack: {from} is a capsule without a name, expected one named \
             'dltensor' or 'dltensor_versioned'"
        )));
    };
    // SAFETY: a capsule's name is a NUL-terminated string that lives as long as the
    // capsule, which `capsule` keeps alive for this call; it is copied out at once.
    let name = unsafe { name.as_cstr() }.to_string_lossy().into_owned();
    match name.as_str() {
        "dltensor" | "dltensor_versioned" => Ok(()),
        "used_dltensor" | "used_dltensor_versioned" => Err(PyValueError::new_err(format!(
            "from_dlpack: {from} is a DLPack capsule that was already consumed (it is \
             named '{name}'); a capsule is imported once, call __dlpack__ again for a new one"
        ))),
        _ => Err(PyValueError::new_err(format!(
            "from_dlpack: {from} is a capsule named '{name}', not a DLPack tensor \
             (expected 'dltensor' or 'dltensor_versioned')"
        ))),
    }
}

/// Takes ownership of the tensor behind any DLPack producer.
///
/// The C exchange API of the object's type is used when it has one (DLPack 1.3), but
/// only for memory without a stream: its `managed_tensor_from_py_object_no_sync` orders
/// nothing, so a CUDA or ROCm tensor it hands over is released again (its deleter runs)
/// and asked for through `__dlpack__(stream=...)` instead, which makes the producer order
/// its queued work before our stream's.
pub(crate) fn import(obj: &Bound<'_, PyAny>) -> PyResult<Imported> {
    // A producer whose table cannot describe this object (`BufferError`) gets the capsule
    // path, as tvm-ffi does.
    match try_import(obj) {
        Ok(Some(t)) if consumer_stream(t.device().device_type.0).is_none() => {
            return Ok(Imported::Versioned(t));
        }
        Ok(Some(t)) => drop(t),
        Ok(None) => {}
        Err(e) if e.is_instance_of::<PyBufferError>(obj.py()) => {}
        Err(e) => return Err(e),
    }
    let capsule = capsule_of(obj)?;
    // SAFETY: attached (we hold a Bound); the capsule object is alive for the call.
    unsafe { take_from_capsule(capsule.as_ptr().cast()) }.map_err(py_err)
}

/// The table of `obj`'s type, if it publishes a DLPack 1.x exchange API.
fn api_of(obj: &Bound<'_, PyAny>) -> Option<*const ExchangeApi> {
    /// Type address → table address (0: none), for a few types, each kept alive by a
    /// reference that is never released so its address cannot be reused.
    struct Cache([AtomicUsize; 16], [AtomicUsize; 16]);
    static CACHE: Cache = Cache(
        [const { AtomicUsize::new(0) }; 16],
        [const { AtomicUsize::new(0) }; 16],
    );
    let ty = obj.get_type();
    let key = ty.as_ptr().addr();
    if let Some(i) = (0..16).find(|&i| CACHE.0[i].load(Ordering::Acquire) == key) {
        let v = CACHE.1[i].load(Ordering::Relaxed);
        return (v != 0).then_some(core::ptr::with_exposed_provenance(v));
    }
    let api = ty
        .getattr(pyo3::intern!(obj.py(), "__dlpack_c_exchange_api__"))
        .ok()
        .and_then(|a| {
            if let Ok(c) = a.cast::<PyCapsule>() {
                // SAFETY: attached; `c` is a live capsule; a wrong name gives NULL (and an
                // exception we clear).
                let p = unsafe { ffi::PyCapsule_GetPointer(c.as_ptr(), CAPSULE_NAME.as_ptr()) };
                if p.is_null() {
                    let _ = PyErr::take(obj.py());
                    None
                } else {
                    Some(p.cast::<ExchangeApi>().cast_const())
                }
            } else if a.is_instance_of::<PyInt>() {
                // tvm-ffi publishes the table's address as an int.
                a.extract::<usize>()
                    .ok()
                    .filter(|&v| v != 0)
                    .map(core::ptr::with_exposed_provenance::<ExchangeApi>)
            } else {
                None
            }
        })
        .filter(|&p| {
            // SAFETY: a published table lives for the process; its header is stable
            // across versions.
            unsafe { (*p).header.version.major == 1 }
        });
    if let Some(i) = (0..16).find(|&i| CACHE.0[i].load(Ordering::Acquire) == 0) {
        CACHE.1[i].store(api.map_or(0, |p| p.expose_provenance()), Ordering::Relaxed);
        // The strong reference this slot owns from now on.
        let _ = ty.clone().into_ptr();
        CACHE.0[i].store(key, Ordering::Release);
    }
    api
}

/// Imports `obj` through its type's exchange API; `None` when it has none (the caller
/// then uses `__dlpack__`).
pub(crate) fn try_import(obj: &Bound<'_, PyAny>) -> PyResult<Option<ManagedTensor<'static>>> {
    if obj.is_instance_of::<PyCapsule>() {
        return Ok(None);
    }
    let Some(api) = api_of(obj) else {
        return Ok(None);
    };
    // SAFETY: a published table lives for the process.
    let Some(f) = (unsafe { (*api).managed_tensor_from_py_object_no_sync }) else {
        return Ok(None);
    };
    let mut out: *mut DLManagedTensorVersioned = core::ptr::null_mut();
    // SAFETY: attached (GIL held), `obj` is of the type the table came from, `out` is a
    // valid place for the result.
    let rc = unsafe { f(obj.as_ptr().cast(), &mut out) };
    if rc != 0 {
        return Err(PyErr::take(obj.py()).unwrap_or_else(|| {
            PyBufferError::new_err("the producer's DLPack exchange API failed without an error")
        }));
    }
    // SAFETY: on success the producer handed us ownership of a managed tensor.
    unsafe { ManagedTensor::from_raw(out) }
        .map(Some)
        .map_err(py_err)
}

/// A tensor adopted from another DLPack producer (`amrex_rs.from_dlpack`): it owns the
/// producer's managed tensor (the producer's deleter runs when this object dies) and
/// re-exports it zero-copy through `__dlpack__`, honouring the producer's `READ_ONLY`.
#[pyclass(module = "amrex_rs", frozen)]
#[derive(Debug)]
pub(crate) struct Tensor {
    pub(crate) inner: Imported,
    /// For memory reached through an arena: host copies and stream waits through it.
    pub(crate) copier: Option<&'static crate::arena::ArenaCopier>,
}

impl Tensor {
    /// A tensor of host memory (or of memory the protocol needs no arena for).
    pub(crate) fn new(inner: Imported) -> Self {
        Self {
            inner,
            copier: None,
        }
    }

    /// A tensor of memory from `arena`.
    pub(crate) fn on(inner: Imported, arena: &amrex_arena::AnyArena) -> Self {
        Self {
            inner,
            copier: crate::arena::copier_of(arena),
        }
    }

    pub(crate) fn export(&self) -> PyResult<Export<'_>> {
        let v = self.inner.view();
        if v.ndim() > MAX_NDIM {
            return Err(PyBufferError::new_err(format!(
                "rank {} exceeds {}",
                v.ndim(),
                MAX_NDIM
            )));
        }
        let strides: Vec<i64> = v.strides().collect();
        Ok(Export {
            data: v.data_ptr(),
            device: v.device(),
            host_accessible: v.device().is_host_accessible(),
            dtype: v.dtype(),
            shape: Dims::new(v.shape()),
            strides: Dims::new(&strides),
            read_only: self.inner.is_read_only(),
            copier: self
                .copier
                .map(|c| c as &dyn crate::dlpack::common::DeviceCopier),
        })
    }
}

impl DlpackSource for Tensor {
    fn with_export<R>(
        slf: &Bound<'_, Self>,
        f: impl FnOnce(&Export<'_>, Option<&ExportCount>) -> PyResult<R>,
    ) -> PyResult<R> {
        // The adopted memory lives until this object dies and is never reallocated.
        f(&slf.get().export()?, None)
    }
}

#[pymethods]
impl Tensor {
    /// `(device_type, device_id)` of the adopted memory.
    fn __dlpack_device__(&self) -> PyResult<(i32, i32)> {
        Ok(self.export()?.device_tuple())
    }

    /// Extents.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.inner.view().shape())
    }

    /// Strides in elements.
    #[getter]
    fn strides<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.inner.view().strides())
    }

    /// Number of dimensions.
    #[getter]
    fn ndim(&self) -> usize {
        self.inner.view().ndim()
    }

    /// The DLPack dtype as `(code, bits, lanes)`.
    #[getter]
    fn dtype(&self) -> (u8, u8, u16) {
        let d = self.inner.view().dtype();
        (d.code.0, d.bits, d.lanes)
    }

    /// Whether the producer forbade writes.
    #[getter]
    fn read_only(&self) -> bool {
        self.inner.is_read_only()
    }

    /// Whether the producer sent a versioned (DLPack ≥ 1.0) capsule.
    #[getter]
    fn versioned(&self) -> bool {
        matches!(self.inner, Imported::Versioned(_))
    }

    /// The producer's flags (0 for legacy capsules).
    #[getter]
    fn flags(&self) -> u64 {
        self.inner.view().flags()
    }

    /// Address of the first element (`data + byte_offset`).
    fn data_ptr(&self) -> usize {
        self.inner.view().data_ptr().addr()
    }

    /// A NumPy view (or copy); `order="F"` reverses the axes.
    #[pyo3(signature = (copy=false, order="C"))]
    fn to_numpy<'py>(
        slf: &Bound<'py, Self>,
        copy: bool,
        order: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let src = slf.get().export()?;
        to_numpy(slf.as_any(), &src, Sharing::copy_if(copy), order)
    }

    /// An array of the module that matches the device (NumPy, CuPy or dpnp).
    #[pyo3(signature = (copy=false, order="C"))]
    fn to_xp<'py>(slf: &Bound<'py, Self>, copy: bool, order: &str) -> PyResult<Bound<'py, PyAny>> {
        let src = slf.get().export()?;
        to_xp(slf.as_any(), &src, Sharing::copy_if(copy), order)
    }

    fn __len__(&self) -> usize {
        self.inner.view().shape().first().map_or(1, |&e| e as usize)
    }

    fn __repr__(&self) -> String {
        let v = self.inner.view();
        format!(
            "amrex_rs.Tensor(shape={:?}, dtype={}, device={}, read_only={})",
            v.shape(),
            v.dtype(),
            v.device(),
            self.inner.is_read_only()
        )
    }
}

/// `amrex_rs.from_dlpack(obj)`: adopts the memory of any DLPack producer (or an unused
/// capsule) zero-copy.
#[pyfunction]
pub(crate) fn from_dlpack(obj: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    let t = import(obj)?;
    let device = t.view().device();
    // Device memory keeps its device's arena for host copies and stream waits, when this
    // machine has that backend; without it the tensor still re-exports zero-copy.
    if crate::arena::needs_arena(device)
        && let Ok(arena) = crate::arena::import_arena(device, None)
    {
        return Ok(Tensor::on(t, &arena));
    }
    Ok(Tensor::new(t))
}

/// `amrex_rs.xp_for(obj=None)`: the array module for `obj`'s memory (anything with
/// `__dlpack_device__`): NumPy for host-accessible memory, CuPy for CUDA (device and
/// managed) and ROCm device memory, dpnp for oneAPI. `None` means this module's own default memory (the host
/// arena), which is what `amrex_rs.xp` resolves to. The module is imported on this call,
/// never by `import amrex_rs`.
#[pyfunction]
#[pyo3(signature = (obj=None))]
pub(crate) fn xp_for<'py>(
    py: Python<'py>,
    obj: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyModule>> {
    let name = match obj {
        None => "numpy",
        Some(o) => {
            let (t, id): (i32, i32) = o
                .call_method0(pyo3::intern!(py, "__dlpack_device__"))
                .map_err(|_| {
                    PyTypeError::new_err(format!(
                        "xp_for: expected an object with __dlpack_device__, got {}",
                        type_name(o)
                    ))
                })?
                .extract()?;
            let device = Device::new(DLDeviceType(t), id);
            xp_name(device, device.is_host_accessible())
        }
    };
    import_xp(py, name)
}
