//! The test stand-ins of `python-tests/`, compiled only with the cargo feature `testing`
//! (never in a wheel for users): the live-export and exchange-API counters, Rust exports
//! of the DLPack core, and host memory that reports a device (`_DebugDeviceArray`, the
//! fake device arena), so the per-device protocol rules (streams, `dl_device`, copies to
//! the host) and the containers' device paths are tested on machines without a GPU.

use crate::arena::PyArena;
use crate::dlpack::common::{DeviceCopier, Export};
use crate::dlpack::exchange::{_debug_exchange_api_address, _debug_exchange_exports};
use crate::dlpack::export::{DlpackSource, ExportCount, live_exports};
use crate::dlpack::import::Sharing;
use crate::dlpack::install;
use crate::error::py_err;
use amrex_arena::AnyArena;
use amrex_array4::Access;
use amrex_dlpack_core::{DLDeviceType, Device};
use pyo3::prelude::*;

/// Number of exported DLPack tensors whose deleter has not run yet.
#[pyfunction]
fn _debug_live_exports() -> isize {
    live_exports()
}

/// Host memory that reports a device of the caller's choice (`dl_device` tuple).
///
/// Host-accessible device types (CPU, CUDA host/managed, ROCm host) are re-badged to
/// CPU zero-copy; the others behave as device memory: `dl_device=(1, 0)` makes a host copy
/// through a copier, as a real GPU container does with its arena.
#[pyclass(module = "amrex_rs", name = "_DebugDeviceArray", frozen)]
#[derive(Debug)]
struct DebugDeviceArray {
    data: Vec<f64>,
    device: Device,
}

struct HostCopier;

impl DeviceCopier for HostCopier {
    fn copy_to_host(&self, src: &Export, dst: &mut [u8]) -> PyResult<()> {
        // Host-backed stand-in: the "device" buffer is compact, so one memcpy.
        let bytes = dst.len();
        if bytes > 0 {
            // SAFETY: `src` is this array's compact export of `bytes` bytes, alive for the
            // call; `dst` is the protocol's fresh buffer of the same size.
            unsafe {
                core::ptr::copy_nonoverlapping(src.data.cast::<u8>(), dst.as_mut_ptr(), bytes)
            };
        }
        Ok(())
    }
}

static HOST_COPIER: HostCopier = HostCopier;

impl DebugDeviceArray {
    fn export(&self) -> Export<'static> {
        let len = self.data.len() as i64;
        let mut e = Export::host(self.data.as_ptr(), &[len], &[1], Access::Writable);
        e.device = self.device;
        e.host_accessible = self.device.is_host_accessible();
        e.copier = Some(&HOST_COPIER);
        e
    }
}

impl DlpackSource for DebugDeviceArray {
    fn with_export<R>(
        slf: &Bound<'_, Self>,
        f: impl FnOnce(&Export<'_>, Option<&ExportCount>) -> PyResult<R>,
    ) -> PyResult<R> {
        // The frozen object's Vec is never reallocated.
        f(&slf.get().export(), None)
    }
}

#[pymethods]
impl DebugDeviceArray {
    /// `_DebugDeviceArray(device_type, device_id, size)` holding `0..size`.
    #[new]
    fn py_new(device_type: i32, device_id: i32, size: usize) -> Self {
        Self {
            data: (0..size).map(|i| i as f64).collect(),
            device: Device::new(DLDeviceType(device_type), device_id),
        }
    }

    /// `(device_type, device_id)` of the memory, as DLPack's `__dlpack_device__`.
    fn __dlpack_device__(&self) -> (i32, i32) {
        self.export().device_tuple()
    }

    /// Address of the first element.
    fn data_ptr(&self) -> usize {
        self.data.as_ptr().addr()
    }

    /// A NumPy view (host-accessible devices) or a host copy.
    fn to_numpy<'py>(slf: &Bound<'py, Self>, copy: bool) -> PyResult<Bound<'py, PyAny>> {
        let src = slf.get().export();
        crate::dlpack::import::to_numpy(slf.as_any(), &src, Sharing::copy_if(copy), "C")
    }
}

/// A Rust `Vec<f64>` holding `0..n`, exported through `amrex-dlpack-core`'s `ToDlpack for
/// Vec<T>` (the Vec moves into the tensor) and wrapped as a DLPack producer, so NumPy
/// tests reach the core's plain-vector export without a container in between.
#[pyfunction]
fn _debug_rust_vec(n: usize) -> PyResult<crate::dlpack::import::Tensor> {
    use amrex_dlpack_core::ToDlpack;
    let v: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let t = v.to_dlpack().map_err(py_err)?;
    Ok(crate::dlpack::import::Tensor::new(
        amrex_dlpack_capsule::Imported::Versioned(t),
    ))
}

/// An owned `ndarray::Array2<f64>` of shape `(rows, cols)` holding `10 * i + j`, optionally
/// with its row axis reversed (a negative stride), exported through the core's `ndarray`
/// bridge and wrapped as a DLPack producer.
#[pyfunction]
fn _debug_rust_ndarray(
    rows: usize,
    cols: usize,
    reversed: bool,
) -> PyResult<crate::dlpack::import::Tensor> {
    use amrex_dlpack_core::ToDlpack;
    let mut a = ndarray::Array2::from_shape_fn((rows, cols), |(i, j)| (10 * i + j) as f64);
    if reversed {
        a.invert_axis(ndarray::Axis(0));
    }
    let t = a.to_dlpack().map_err(py_err)?;
    Ok(crate::dlpack::import::Tensor::new(
        amrex_dlpack_capsule::Imported::Versioned(t),
    ))
}

/// A host-backed stand-in for device memory (reported as `kDLCUDA`, device 0) whose
/// pointers fault if dereferenced on the host: containers on it take their device paths
/// on machines without a GPU. For tests.
#[pyfunction]
fn _debug_fake_device_arena() -> PyArena {
    PyArena(AnyArena::FakeDevice(amrex_arena::testing::FakeDeviceArena))
}

/// Registers every test stand-in on the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_debug_live_exports, m)?)?;
    m.add_function(wrap_pyfunction!(_debug_exchange_exports, m)?)?;
    m.add_function(wrap_pyfunction!(_debug_exchange_api_address, m)?)?;
    m.add_function(wrap_pyfunction!(_debug_rust_vec, m)?)?;
    m.add_function(wrap_pyfunction!(_debug_rust_ndarray, m)?)?;
    m.add_class::<DebugDeviceArray>()?;
    install::<DebugDeviceArray>(m.py())?;
    m.add_function(wrap_pyfunction!(_debug_fake_device_arena, m)?)
}
