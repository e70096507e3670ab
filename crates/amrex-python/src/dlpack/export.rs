//! The export side: our containers handing their memory out through the Python DLPack
//! protocol (`__dlpack__`), written once for every container, with the keep-alive owner
//! that ties an export to its Python object and the counts of live exports.
//!
//! Every rule of the protocol lives in [`dlpack_protocol`]: argument checking
//! (`TypeError`), legacy vs versioned capsules by `max_version`, `copy`, `dl_device`
//! re-badging and copies to the host (`BufferError`), and per-device `stream` validation
//! (`ValueError`). Containers only describe their memory in an [`Export`] and implement
//! [`DlpackSource`].

use crate::dlpack::common::{Export, MAX_NDIM, PtrCache, strided_copy_host, type_name};
use amrex_dlpack_capsule::{legacy_into_capsule, versioned_into_capsule};
use amrex_dlpack_core::{
    DLDeviceType, DataType, Device, LegacyManagedTensor, ManagedTensor, TensorSpec, flags,
};
use core::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};
use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyTuple};
use std::sync::Arc;

/// A container that exports through the shared protocol.
pub(crate) trait DlpackSource: pyo3::PyClass {
    /// Calls `f` with the container's current export and its export count.
    fn with_export<R>(
        slf: &Bound<'_, Self>,
        f: impl FnOnce(&Export<'_>, Option<&ExportCount>) -> PyResult<R>,
    ) -> PyResult<R>;
}

/// Number of exported tensors (zero-copy or copies) whose deleter has not run yet.
static LIVE_EXPORTS: AtomicIsize = AtomicIsize::new(0);

/// `amrex_rs._debug_live_exports()`.
#[cfg(feature = "testing")]
pub(crate) fn live_exports() -> isize {
    LIVE_EXPORTS.load(Ordering::Relaxed)
}

/// Counts one live export from creation to drop.
#[derive(Debug)]
struct LiveToken;

impl LiveToken {
    fn new() -> Self {
        LIVE_EXPORTS.fetch_add(1, Ordering::Relaxed);
        LiveToken
    }
}

impl Drop for LiveToken {
    fn drop(&mut self) {
        LIVE_EXPORTS.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A container's count of live zero-copy exports: while it is non-zero the container must
/// not reallocate (the consumers hold pointers into its buffer), as `bytearray` does.
#[derive(Debug, Default, Clone)]
pub(crate) struct ExportCount(Arc<AtomicUsize>);

impl ExportCount {
    /// `BufferError` while any export is alive.
    pub(crate) fn check_resizable(&self) -> PyResult<()> {
        match self.0.load(Ordering::Relaxed) {
            0 => Ok(()),
            n => Err(PyBufferError::new_err(format!(
                "cannot resize: {n} DLPack export(s) of this buffer are alive (drop the \
                 NumPy/array views first, or copy)"
            ))),
        }
    }

    pub(crate) fn get(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }

    pub(crate) fn guard(&self) -> ExportGuard {
        self.0.fetch_add(1, Ordering::Relaxed);
        ExportGuard(self.0.clone())
    }
}

/// One live export (or view) of a container; dropping it releases the container.
#[derive(Debug)]
pub(crate) struct ExportGuard(Arc<AtomicUsize>);

impl Drop for ExportGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The owner of a zero-copy export: a strong reference to the Python object whose memory
/// is exported, so the object (and its buffer) outlives every consumer's view.
///
/// The deleter may run on any thread, with or without the GIL: dropping attaches to the
/// interpreter to release the reference, and does nothing (leaks the reference) once the
/// interpreter is finalizing.
#[derive(Debug)]
struct KeepAlive {
    obj: Option<Py<PyAny>>,
    _guard: Option<ExportGuard>,
    _live: LiveToken,
}

unsafe extern "C" {
    /// `PyGILState_Check` (CPython >= 3.4; not in the limited API's headers, but exported
    /// by every CPython 3 since 3.4, so an abi3 module can call it).
    fn PyGILState_Check() -> core::ffi::c_int;
}

impl Drop for KeepAlive {
    fn drop(&mut self) {
        let Some(obj) = self.obj.take() else { return };
        // SAFETY: callable at any time from any thread; 1 iff this thread holds the GIL.
        if unsafe { PyGILState_Check() } == 1 {
            // Fast path (NumPy calls deleters with the GIL held): release the reference
            // now. pyo3 would defer it, since its own attach count is zero here.
            // SAFETY: the GIL is held and `into_ptr` hands us the one strong reference.
            unsafe { pyo3::ffi::Py_DecRef(obj.into_ptr()) };
            return;
        }
        let mut slot = Some(obj);
        let _ = Python::try_attach(|_py| drop(slot.take()));
        if let Some(obj) = slot {
            // Finalizing or not initialized: touching the refcount is not allowed.
            core::mem::forget(obj);
        }
    }
}

/// The owner of a copy: an 8-byte aligned host buffer (enough for every DLPack dtype we
/// export).
#[derive(Debug)]
struct CopyOwner {
    _buf: Vec<u64>,
    _live: LiveToken,
}

/// Which capsule a consumer gets: `max_version` below 1.0 (or none) asks for a legacy
/// `"dltensor"`, 1.0 or newer for a `"dltensor_versioned"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CapsuleKind {
    /// `DLManagedTensor` in a `"dltensor"` capsule.
    Legacy,
    /// `DLManagedTensorVersioned` (version 1.3) in a `"dltensor_versioned"` capsule.
    Versioned,
}

/// The parsed, validated arguments of `__dlpack__`.
#[derive(Clone, Copy, Debug)]
struct Request {
    capsule: CapsuleKind,
    device: Option<Device>,
    copy: Option<bool>,
    stream: Option<i64>,
}

fn int_of(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<i64> {
    if obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<PyBool>() {
        obj.extract::<i64>()
            .map_err(|_| PyTypeError::new_err(format!("{what} does not fit a 64-bit integer")))
    } else {
        Err(PyTypeError::new_err(format!(
            "{what} must be an int, got {}",
            type_name(obj)
        )))
    }
}

fn pair_of(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<(i64, i64)> {
    let tuple = obj.cast::<PyTuple>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what} must be a tuple of two ints, got {}",
            type_name(obj)
        ))
    })?;
    if tuple.len() != 2 {
        return Err(PyTypeError::new_err(format!(
            "{what} must be a tuple of two ints, got {} items",
            tuple.len()
        )));
    }
    Ok((
        int_of(&tuple.get_item(0)?, what)?,
        int_of(&tuple.get_item(1)?, what)?,
    ))
}

/// `max_version` tuples seen before (NumPy passes one static `(1, 0)`).
static MAX_VERSIONS: PtrCache<4> = PtrCache::new();

fn parse(
    stream: Option<&Bound<'_, PyAny>>,
    max_version: Option<&Bound<'_, PyAny>>,
    dl_device: Option<&Bound<'_, PyAny>>,
    copy: Option<&Bound<'_, PyAny>>,
) -> PyResult<Request> {
    let versioned = match max_version {
        None => false,
        Some(v) => match MAX_VERSIONS.get(v.as_ptr()) {
            Some(flag) => flag != 0,
            None => {
                let versioned = pair_of(v, "max_version")?.0 >= 1;
                // Only exact tuples are immutable, hence safe to remember by address.
                if v.is_exact_instance_of::<PyTuple>() {
                    MAX_VERSIONS.insert(v, u32::from(versioned));
                }
                versioned
            }
        },
    };
    let device = match dl_device {
        None => None,
        Some(d) => {
            let (t, id) = pair_of(d, "dl_device")?;
            let t = i32::try_from(t)
                .map_err(|_| PyTypeError::new_err("dl_device type does not fit an int32"))?;
            let id = i32::try_from(id)
                .map_err(|_| PyTypeError::new_err("dl_device id does not fit an int32"))?;
            Some(Device::new(DLDeviceType(t), id))
        }
    };
    let copy = match copy {
        None => None,
        Some(c) => Some(
            c.cast::<PyBool>()
                .map_err(|_| {
                    PyTypeError::new_err(format!(
                        "copy must be None or a bool, got {}",
                        type_name(c)
                    ))
                })?
                .is_true(),
        ),
    };
    let stream = stream.map(|s| int_of(s, "stream")).transpose()?;
    Ok(Request {
        capsule: if versioned {
            CapsuleKind::Versioned
        } else {
            CapsuleKind::Legacy
        },
        device,
        copy,
        stream,
    })
}

/// Checks `stream` against the rules for the device the consumer will read on.
fn check_stream(stream: Option<i64>, device: Device) -> PyResult<()> {
    let Some(s) = stream else { return Ok(()) };
    match device.device_type {
        DLDeviceType::CUDA | DLDeviceType::CUDA_HOST | DLDeviceType::CUDA_MANAGED => {
            if s == 0 {
                Err(PyValueError::new_err(
                    "stream=0 is ambiguous for CUDA and forbidden: use 1 (legacy default \
                     stream), 2 (per-thread default stream), -1 (no synchronisation) or a \
                     stream handle",
                ))
            } else {
                Ok(())
            }
        }
        DLDeviceType::ROCM | DLDeviceType::ROCM_HOST => {
            if s == 1 || s == 2 {
                Err(PyValueError::new_err(format!(
                    "stream={s} is not valid for ROCm: use 0 (default stream), -1 (no \
                     synchronisation) or a stream handle"
                )))
            } else {
                Ok(())
            }
        }
        _ => Err(PyValueError::new_err(format!(
            "stream must be None for data on {device} (got {s})"
        ))),
    }
}

/// How the export will be made.
enum Plan {
    /// Zero-copy, badged with this device.
    Share(Device),
    /// A compact copy on the host, badged with this (host) device.
    HostCopy(Device),
    /// A compact copy of device memory to the host (through the copier).
    DeviceToHost,
}

fn plan(src: &Export, req: &Request) -> PyResult<Plan> {
    let own = src.device;
    let target = req.device.unwrap_or(own);
    let needs_host_copy = if target == own {
        false
    } else if target == Device::CPU {
        !src.host_accessible
    } else {
        return Err(PyBufferError::new_err(format!(
            "cannot export data on {own} to {target}: only the data's own device or \
             (kDLCPU, 0) is supported"
        )));
    };
    check_stream(req.stream, target)?;
    match (req.copy, needs_host_copy) {
        (Some(false), true) => Err(PyBufferError::new_err(format!(
            "copy=False, but data on {own} must be copied to reach {target}"
        ))),
        (_, true) => Ok(Plan::DeviceToHost),
        (Some(true), false) => {
            if src.host_accessible {
                Ok(Plan::HostCopy(target))
            } else {
                Err(PyBufferError::new_err(format!(
                    "copy=True on {own} is not supported: ask for dl_device=(1, 0) to copy \
                     to the host"
                )))
            }
        }
        (_, false) => Ok(Plan::Share(target)),
    }
}

/// The whole `__dlpack__` protocol for a container whose memory `src` describes.
///
/// `owner` is the Python object that keeps `src`'s memory alive (the container itself);
/// zero-copy exports hold a strong reference to it until the consumer's deleter runs.
/// `count`, when given, is the container's [`ExportCount`].
///
/// # Safety
/// `src` describes memory that stays valid (and is not reallocated while `count` is
/// non-zero) for as long as `owner` lives; unless `src.read_only`, consumers may write it.
pub(crate) unsafe fn dlpack_protocol(
    owner: &Bound<'_, PyAny>,
    src: &Export,
    count: Option<&ExportCount>,
    stream: Option<&Bound<'_, PyAny>>,
    max_version: Option<&Bound<'_, PyAny>>,
    dl_device: Option<&Bound<'_, PyAny>>,
    copy: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let req = parse(stream, max_version, dl_device, copy)?;
    let plan = plan(src, &req)?;
    match plan {
        Plan::Share(device) => {
            if let Some(copier) = src.copier {
                match req.stream {
                    Some(stream) => copier.wait_on_stream(stream)?,
                    // No stream: a host consumer (NumPy) reading host-accessible memory
                    // (managed) directly; the device must be done with it first.
                    None if src.host_accessible => copier.settle()?,
                    None => {}
                }
            }
            let spec = shared_spec(src, device);
            // SAFETY: the keep-alive holds `owner`, which keeps the memory valid (caller),
            // and the export count that forbids reallocation while the tensor lives.
            unsafe { wrap(owner.py(), keep_alive(owner, count), &spec, req.capsule) }
        }
        Plan::HostCopy(device) => copied(owner.py(), src, device, req.capsule, |dst| {
            if let Some(copier) = src.copier {
                copier.settle()?;
            }
            // SAFETY: the plan copies on the host only host-accessible exports.
            unsafe { strided_copy_host(src, dst) };
            Ok(())
        }),
        Plan::DeviceToHost => {
            let copier = src.copier.ok_or_else(|| {
                PyBufferError::new_err(format!(
                    "data on {} cannot be copied to the host by this container",
                    src.device
                ))
            })?;
            copied(owner.py(), src, Device::CPU, req.capsule, |dst| {
                copier.copy_to_host(src, dst)
            })
        }
    }
}

fn copied(
    py: Python<'_>,
    src: &Export,
    device: Device,
    kind: CapsuleKind,
    fill: impl FnOnce(&mut [u8]) -> PyResult<()>,
) -> PyResult<Py<PyAny>> {
    let shape = src.shape.as_slice();
    let mut strides = [0i64; MAX_NDIM];
    amrex_dlpack_core::c_strides(shape, &mut strides[..shape.len()]);
    let bytes = src.num_elements() * src.elem_size();
    let mut buf = vec![0u64; bytes.div_ceil(8)];
    {
        // SAFETY: `buf` holds `bytes.div_ceil(8) * 8 >= bytes` initialised bytes; u8 has
        // no alignment or validity requirements.
        let dst = unsafe { core::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<u8>(), bytes) };
        fill(dst)?;
    }
    let data = if bytes == 0 {
        core::ptr::null_mut()
    } else {
        buf.as_mut_ptr().cast()
    };
    let spec = TensorSpec {
        data,
        device,
        dtype: src.dtype,
        shape,
        strides: &strides[..shape.len()],
        flags: flags::IS_COPIED,
    };
    let owner = CopyOwner {
        _buf: buf,
        _live: LiveToken::new(),
    };
    // SAFETY: the Vec's heap buffer moves with the owner without moving, holds the compact
    // elements, and only the consumer accesses it.
    unsafe { wrap(py, owner, &spec, kind) }
}

/// Builds the managed tensor and its capsule.
///
/// # Safety
/// As `ManagedTensor::from_owner`, with `'static` owners.
unsafe fn wrap<O: Send + 'static>(
    py: Python<'_>,
    owner: O,
    spec: &TensorSpec<'_>,
    kind: CapsuleKind,
) -> PyResult<Py<PyAny>> {
    let capsule = match kind {
        CapsuleKind::Versioned => {
            // SAFETY: forwarded from the caller.
            let tensor = unsafe { ManagedTensor::from_owner(owner, spec) };
            // SAFETY: attached to the interpreter (we hold `py`).
            unsafe { versioned_into_capsule(tensor) }
        }
        CapsuleKind::Legacy => {
            // SAFETY: forwarded from the caller.
            let tensor = unsafe { LegacyManagedTensor::from_owner(owner, spec) };
            // SAFETY: attached to the interpreter (we hold `py`).
            unsafe { legacy_into_capsule(tensor) }
        }
    };
    match capsule {
        // SAFETY: a new strong reference from PyCapsule_New.
        Ok(ptr) => Ok(unsafe { Bound::from_owned_ptr(py, ptr.as_ptr().cast()) }.unbind()),
        Err(_) => Err(PyErr::fetch(py)),
    }
}

/// A zero-copy versioned managed tensor of `src` that keeps `owner` alive: the export of
/// the C exchange API (`managed_tensor_from_py_object_no_sync`: no copy, no stream).
///
/// # Safety
/// As [`dlpack_protocol`].
pub(crate) unsafe fn share_versioned(
    owner: &Bound<'_, PyAny>,
    src: &Export,
    count: Option<&ExportCount>,
) -> ManagedTensor<'static> {
    let spec = shared_spec(src, src.device);
    // SAFETY: the keep-alive holds `owner`, which keeps the memory valid (caller), and the
    // export count that forbids reallocation while the tensor lives.
    unsafe { ManagedTensor::from_owner(keep_alive(owner, count), &spec) }
}

/// The zero-copy export spec of `src`, labelled with `device` (its own, or the
/// re-badged one a consumer asked for). An empty tensor's data pointer becomes NULL in
/// the export builder.
fn shared_spec<'s>(src: &'s Export<'_>, device: Device) -> TensorSpec<'s> {
    TensorSpec {
        data: src.data,
        device,
        dtype: src.dtype,
        shape: src.shape.as_slice(),
        strides: src.strides.as_slice(),
        flags: if src.read_only { flags::READ_ONLY } else { 0 },
    }
}

/// What a zero-copy export keeps alive: a reference to `owner` and, when the container
/// can reallocate, an export-count guard.
fn keep_alive(owner: &Bound<'_, PyAny>, count: Option<&ExportCount>) -> KeepAlive {
    KeepAlive {
        obj: Some(owner.clone().unbind()),
        _guard: count.map(ExportCount::guard),
        _live: LiveToken::new(),
    }
}

/// A new zero-filled, compact host tensor of `dtype` and `shape` (the exchange API's
/// `managed_tensor_allocator`); `None` when the size overflows or the dtype has no size.
pub(crate) fn allocate_versioned(dtype: DataType, shape: &[i64]) -> Option<ManagedTensor<'static>> {
    if shape.len() > MAX_NDIM || shape.iter().any(|&e| e < 0) {
        return None;
    }
    let elem = dtype.size_in_bytes()?;
    let n = shape
        .iter()
        .try_fold(1usize, |acc, &e| acc.checked_mul(usize::try_from(e).ok()?))?;
    let bytes = n.checked_mul(elem).filter(|&b| b <= isize::MAX as usize)?;
    let mut buf = vec![0u64; bytes.div_ceil(8)];
    let mut strides = [0i64; MAX_NDIM];
    amrex_dlpack_core::c_strides(shape, &mut strides[..shape.len()]);
    let spec = TensorSpec {
        data: if bytes == 0 {
            core::ptr::null_mut()
        } else {
            buf.as_mut_ptr().cast()
        },
        device: Device::CPU,
        dtype,
        shape,
        strides: &strides[..shape.len()],
        flags: 0,
    };
    let owner = CopyOwner {
        _buf: buf,
        _live: LiveToken::new(),
    };
    // SAFETY: the Vec's heap buffer moves with the owner without moving; it holds
    // `bytes` zeroed bytes, compact row-major, 8-byte aligned, reached only by the consumer.
    Some(unsafe { ManagedTensor::from_owner(owner, &spec) })
}
