//! `Arena` (pyAMReX's `The_Arena()`, `The_Device_Arena()`, `The_Pinned_Arena()`,
//! `The_Managed_Arena()`) and the device services every container export of arena memory
//! uses: host copies (`dl_device=(1, 0)`) and the consumer-stream wait, shared by every
//! container of arena memory (copiers, the arena of adopted memory, the refusals).

use crate::dlpack::common::{DeviceCopier, Export, strided_copy_host};
use crate::error::py_err;
use amrex_arena::{AnyArena, Arena, ErrorKind, MemoryKind};
use amrex_dlpack_core::{DLDeviceType, Device};
use pyo3::exceptions::{PyNotImplementedError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use std::sync::{Mutex, PoisonError};

/// A memory resource: host, pinned, device or managed memory of one GPU backend.
#[pyclass(module = "amrex_rs", name = "Arena", frozen)]
#[derive(Debug, Clone)]
pub(crate) struct PyArena(pub(crate) AnyArena);

fn kind_name(k: MemoryKind) -> &'static str {
    match k {
        MemoryKind::Host => "host",
        MemoryKind::Pinned => "pinned",
        MemoryKind::Device => "device",
        _ => "managed",
    }
}

fn kind_of(name: &str) -> PyResult<MemoryKind> {
    Ok(match name {
        "host" => MemoryKind::Host,
        "pinned" => MemoryKind::Pinned,
        "device" => MemoryKind::Device,
        "managed" => MemoryKind::Managed,
        _ => {
            return Err(PyValueError::new_err(format!(
                "arena must be 'host', 'pinned', 'device', 'managed' or an Arena, got {name:?}"
            )));
        }
    })
}

fn make(kind: MemoryKind, device_id: i32) -> PyResult<PyArena> {
    AnyArena::new(kind, device_id).map(PyArena).map_err(py_err)
}

/// The `arena=` argument of a container constructor: `None` (host), an `Arena`, or one of
/// `"host"`, `"pinned"`, `"device"`, `"managed"` (device 0).
pub(crate) fn arena_arg(arena: Option<&Bound<'_, PyAny>>) -> PyResult<AnyArena> {
    let Some(a) = arena else {
        return Ok(AnyArena::default());
    };
    if a.is_none() {
        return Ok(AnyArena::default());
    }
    if let Ok(a) = a.cast::<PyArena>() {
        return Ok(a.get().0.clone());
    }
    if let Ok(name) = a.extract::<String>() {
        return make(kind_of(&name)?, 0).map(|a| a.0);
    }
    Err(PyTypeError::new_err(format!(
        "arena must be None, a string or an Arena, got {}",
        crate::dlpack::common::type_name(a)
    )))
}

#[pymethods]
impl PyArena {
    /// `"host"`, `"pinned"`, `"device"` or `"managed"`.
    #[getter]
    fn kind(&self) -> &'static str {
        kind_name(self.0.kind())
    }

    /// `"host"`, `"cuda"`, `"hip"`, `"level_zero"`, or `"fake"` (the test stand-in of
    /// builds with the cargo feature `testing`).
    #[getter]
    fn backend(&self) -> &'static str {
        self.0.backend_name()
    }

    /// The DLPack `(device_type, device_id)` its memory is exported as.
    #[getter]
    fn dl_device(&self) -> (i32, i32) {
        let d = self.0.device();
        (d.device_type.0, d.device_id)
    }

    /// Waits until the device finished the work queued on it.
    fn synchronize(&self) -> PyResult<()> {
        self.0.synchronize().map_err(py_err)
    }

    fn __eq__(&self, other: &Self) -> bool {
        self.0.kind() == other.0.kind()
            && self.0.device() == other.0.device()
            && self.0.backend_name() == other.0.backend_name()
    }

    fn __repr__(&self) -> String {
        format!(
            "Arena(kind={:?}, backend={:?}, dl_device={:?})",
            self.kind(),
            self.backend(),
            self.dl_device()
        )
    }
}

/// The host arena (AMReX's default `The_Arena()` on a CPU build).
#[pyfunction]
#[pyo3(name = "The_Arena")]
fn the_arena() -> PyArena {
    PyArena(AnyArena::default())
}

/// `kind` memory of the first GPU backend with a device, as AMReX's `The_*_Arena()`: in
/// a build without any GPU backend that is host memory, as AMReX's CPU builds (and
/// pyAMReX's) give; a build with a backend but no usable device raises `RuntimeError`
/// saying why.
fn the(kind: MemoryKind, device_id: i32) -> PyResult<PyArena> {
    match AnyArena::new(kind, device_id) {
        Ok(a) => Ok(PyArena(a)),
        Err(e) if matches!(e.kind(), ErrorKind::NotCompiled(_)) => Ok(PyArena(AnyArena::default())),
        Err(e) => Err(py_err(e)),
    }
}

/// Device memory of the first GPU backend with a device; host memory in a build without
/// GPU backends (AMReX's CPU builds); `RuntimeError` saying why for a GPU build without a
/// usable device.
#[pyfunction]
#[pyo3(name = "The_Device_Arena", signature = (device_id=0))]
fn the_device_arena(device_id: i32) -> PyResult<PyArena> {
    the(MemoryKind::Device, device_id)
}

/// Pinned (page-locked) host memory of the first GPU backend; host memory in a build
/// without GPU backends.
#[pyfunction]
#[pyo3(name = "The_Pinned_Arena", signature = (device_id=0))]
fn the_pinned_arena(device_id: i32) -> PyResult<PyArena> {
    the(MemoryKind::Pinned, device_id)
}

/// Managed (migrating) memory of the first GPU backend; host memory in a build without
/// GPU backends.
#[pyfunction]
#[pyo3(name = "The_Managed_Arena", signature = (device_id=0))]
fn the_managed_arena(device_id: i32) -> PyResult<PyArena> {
    the(MemoryKind::Managed, device_id)
}

/// Host memory (AMReX's `The_Cpu_Arena()`).
#[pyfunction]
#[pyo3(name = "The_Cpu_Arena")]
fn the_cpu_arena() -> PyArena {
    PyArena(AnyArena::default())
}

/// Stream-ordered device memory in AMReX; here the device arena (`The_Device_Arena()`).
#[pyfunction]
#[pyo3(name = "The_Async_Arena", signature = (device_id=0))]
fn the_async_arena(device_id: i32) -> PyResult<PyArena> {
    the(MemoryKind::Device, device_id)
}

/// Memory for MPI buffers in AMReX; here the device arena (`The_Device_Arena()`).
#[pyfunction]
#[pyo3(name = "The_Comms_Arena", signature = (device_id=0))]
fn the_comms_arena(device_id: i32) -> PyResult<PyArena> {
    the(MemoryKind::Device, device_id)
}

/// Copies an export of `arena` memory to the host and makes consumer streams wait for
/// the arena's queued work.
#[derive(Debug)]
pub(crate) struct ArenaCopier(pub(crate) AnyArena);

impl DeviceCopier for ArenaCopier {
    fn copy_to_host(&self, src: &Export, dst: &mut [u8]) -> PyResult<()> {
        let elem = src.dtype.size_in_bytes().unwrap_or(1);
        if src.num_elements() == 0 {
            return Ok(());
        }
        // The span of elements the export reaches: [lo, hi] offsets from `data`.
        let (mut lo, mut hi) = (0i64, 0i64);
        for (&n, &s) in src.shape.as_slice().iter().zip(src.strides.as_slice()) {
            let reach = (n - 1) * s;
            if reach < 0 { lo += reach } else { hi += reach }
        }
        let span = usize::try_from(hi - lo + 1).expect("a valid export's span fits usize") * elem;
        let mut host = vec![0u64; span.div_ceil(8)];
        let first = src
            .data
            .cast::<u8>()
            .wrapping_offset(lo as isize * elem as isize);
        let first = core::ptr::NonNull::new(first)
            .ok_or_else(|| PyValueError::new_err("a non-empty export with a NULL pointer"))?;
        // SAFETY: the export's contract: every element its shape and strides reach lies in
        // live memory of this arena, so the span [lo, hi] does; `host` holds `span` bytes.
        unsafe { self.0.copy_to_host(host.as_mut_ptr().cast(), first, span) }.map_err(py_err)?;
        let mut local = *src;
        local.data = host
            .as_mut_ptr()
            .cast::<u8>()
            .wrapping_offset(-(lo as isize) * elem as isize)
            .cast();
        local.host_accessible = true;
        // SAFETY: `local` describes the same elements inside our host copy of the span.
        unsafe { strided_copy_host(&local, dst) };
        Ok(())
    }

    fn settle(&self) -> PyResult<()> {
        if self.0.kind() == MemoryKind::Managed {
            self.0.synchronize().map_err(py_err)?;
        }
        Ok(())
    }

    fn wait_on_stream(&self, stream: i64) -> PyResult<()> {
        let Ok(s) = usize::try_from(stream) else {
            return Ok(()); // -1: the consumer asked for no synchronisation.
        };
        // SAFETY: `check_stream` admitted `s` for this device: 1, 2 or a stream handle
        // the consumer owns (the protocol's contract with the consumer).
        unsafe { self.0.wait_on_stream(s) }.map_err(py_err)
    }
}

/// Whether `arena` is the host arena (containers on it take their host paths).
pub(crate) fn is_host(arena: &AnyArena) -> bool {
    matches!(arena, AnyArena::Host(_))
}

/// The copier that exports of `arena`'s memory carry (`None` for the host arena).
///
/// Exports and views hold `&'static` copiers (a view outlives every borrow of its
/// container), so there is one copier per distinct arena — backend, kind and device —
/// for the life of the process: a handful at most.
pub(crate) fn copier_of(arena: &AnyArena) -> Option<&'static ArenaCopier> {
    if is_host(arena) {
        return None;
    }
    static COPIERS: Mutex<Vec<&'static ArenaCopier>> = Mutex::new(Vec::new());
    let key = |a: &AnyArena| (a.backend_name(), a.kind(), a.device());
    let mut list = COPIERS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(c) = list.iter().find(|c| key(&c.0) == key(arena)) {
        return Some(c);
    }
    let c: &'static ArenaCopier = Box::leak(Box::new(ArenaCopier(arena.clone())));
    list.push(c);
    Some(c)
}

/// `copier_of` as the protocol's trait object.
pub(crate) fn dyn_copier(arena: &AnyArena) -> Option<&'static dyn DeviceCopier> {
    copier_of(arena).map(|c| c as &'static dyn DeviceCopier)
}

/// Waits for the arena's queued work when the CPU is about to read its memory directly
/// (managed memory; host and pinned memory have no queued work, device memory is only
/// reached through the arena's copies, which wait themselves).
pub(crate) fn settle(arena: &AnyArena) -> PyResult<()> {
    if arena.kind() == MemoryKind::Managed {
        arena.synchronize().map_err(py_err)?;
    }
    Ok(())
}

/// The arena adopted memory on `device` belongs to: `given` (an `arena=` argument, which
/// must report that device), else the arena of the device's own backend — CUDA device
/// memory for `kDLCUDA`, CUDA managed memory for `kDLCUDAManaged`, HIP for `kDLROCM`,
/// Level Zero for `kDLOneAPI` — and the host arena for host-accessible memory (CPU,
/// pinned). The arena is used for copies, kernels and stream waits only: adopted memory
/// is never freed through it (the producer's deleter owns it).
///
/// # Errors
/// `RuntimeError` when that backend is not available here (not compiled, no driver, no
/// device: the arena's message); `ValueError` when `given` reports another device.
pub(crate) fn import_arena(device: Device, given: Option<&Bound<'_, PyAny>>) -> PyResult<AnyArena> {
    use amrex_arena::{cuda, hip, level_zero};
    if let Some(g) = given.filter(|g| !g.is_none()) {
        let a = arena_arg(Some(g))?;
        let host_memory = !needs_arena(device);
        if a.device() == device || (is_host(&a) && host_memory) {
            return Ok(a);
        }
        return Err(PyValueError::new_err(format!(
            "from_dlpack: the tensor is on {device}, but the arena's memory is on {} \
             ({} {}); pass an arena of the tensor's device, or none",
            a.device(),
            a.backend_name(),
            a.kind()
        )));
    }
    let id = device.device_id;
    let made = match device.device_type {
        DLDeviceType::CUDA => cuda::CudaDeviceArena::new(id).map(AnyArena::CudaDevice),
        DLDeviceType::CUDA_MANAGED => cuda::CudaManagedArena::new(id).map(AnyArena::CudaManaged),
        DLDeviceType::ROCM => hip::HipDeviceArena::new(id).map(AnyArena::HipDevice),
        DLDeviceType::ONE_API => level_zero::ZeDeviceArena::new(id).map(AnyArena::ZeDevice),
        _ => return Ok(AnyArena::default()),
    };
    made.map_err(|e| {
        PyRuntimeError::new_err(format!("from_dlpack: cannot adopt memory on {device}: {e}"))
    })
}

/// Whether memory on `device` is reached through an arena (device and managed memory of
/// a GPU backend) rather than directly by the CPU.
pub(crate) fn needs_arena(device: Device) -> bool {
    matches!(
        device.device_type,
        DLDeviceType::CUDA
            | DLDeviceType::CUDA_MANAGED
            | DLDeviceType::ROCM
            | DLDeviceType::ONE_API
    )
}

/// The `NotImplementedError` of an operation that needs the CPU to touch memory it
/// cannot reach.
pub(crate) fn not_on_device(what: &str, device: Device, hint: &str) -> PyErr {
    PyNotImplementedError::new_err(format!(
        "{what} is not implemented for memory on {device} (not host accessible); copy to \
         the host first: {hint}"
    ))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyArena>()?;
    m.add_function(wrap_pyfunction!(the_arena, m)?)?;
    m.add_function(wrap_pyfunction!(the_device_arena, m)?)?;
    m.add_function(wrap_pyfunction!(the_pinned_arena, m)?)?;
    m.add_function(wrap_pyfunction!(the_managed_arena, m)?)?;
    m.add_function(wrap_pyfunction!(the_cpu_arena, m)?)?;
    m.add_function(wrap_pyfunction!(the_async_arena, m)?)?;
    m.add_function(wrap_pyfunction!(the_comms_arena, m)?)?;
    Ok(())
}
