//! The low-level parts both directions share: the description of exported memory
//! ([`Export`], [`Dims`]), device-to-host copies ([`DeviceCopier`], [`strided_copy_host`]),
//! the mapping of DLPack refusals to Python exceptions, and a small cache of Python
//! objects by address ([`PtrCache`]).

use amrex_array4::Access;
use amrex_dlpack_core::{DataType, Device, DlpackElement};
use core::ffi::c_void;
use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use pyo3::ffi;
use pyo3::prelude::*;

/// The largest rank a container exports (fabs use 4).
pub(crate) const MAX_NDIM: usize = 8;

/// Extents or strides of up to [`MAX_NDIM`] axes, kept inline so an export allocates once.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dims {
    len: usize,
    vals: [i64; MAX_NDIM],
}

impl Dims {
    /// # Panics
    /// If `s` has more than [`MAX_NDIM`] entries (a bug in the container).
    pub(crate) fn new(s: &[i64]) -> Self {
        assert!(s.len() <= MAX_NDIM, "rank {} exceeds {MAX_NDIM}", s.len());
        let mut vals = [0; MAX_NDIM];
        vals[..s.len()].copy_from_slice(s);
        Self { len: s.len(), vals }
    }

    pub(crate) fn as_slice(&self) -> &[i64] {
        &self.vals[..self.len]
    }
}

/// Copies data that the CPU cannot dereference (device memory).
pub(crate) trait DeviceCopier {
    /// Writes the exported elements, compact and row-major, into `dst` on the host.
    fn copy_to_host(&self, src: &Export, dst: &mut [u8]) -> PyResult<()>;

    /// Waits until the work queued on this memory is done, before the CPU reads it
    /// directly (managed memory handed to a host consumer). The default queues nothing.
    fn settle(&self) -> PyResult<()> {
        Ok(())
    }

    /// Makes the consumer's `stream` (validated for the device by the protocol) wait for
    /// the work queued on this memory. The default queues nothing, so waits for nothing.
    fn wait_on_stream(&self, stream: i64) -> PyResult<()> {
        let _ = stream;
        Ok(())
    }
}

/// What a container exports: a zero-copy description of its memory.
#[derive(Clone, Copy)]
pub(crate) struct Export<'c> {
    /// First element (NULL or dangling when empty: normalised to NULL on export).
    pub(crate) data: *mut c_void,
    /// Where the memory lives.
    pub(crate) device: Device,
    /// Whether the CPU may dereference `data` (pinned, managed and shared memory too).
    pub(crate) host_accessible: bool,
    pub(crate) dtype: DataType,
    pub(crate) shape: Dims,
    /// In elements, one per extent.
    pub(crate) strides: Dims,
    /// Consumers must not write (const views).
    pub(crate) read_only: bool,
    /// How to copy device memory to the host; `None` for host memory.
    pub(crate) copier: Option<&'c dyn DeviceCopier>,
}

impl Export<'_> {
    /// A host tensor of `T`; with [`Access::ReadOnly`] consumers must not write.
    pub(crate) fn host<T: DlpackElement>(
        data: *const T,
        shape: &[i64],
        strides: &[i64],
        access: Access,
    ) -> Self {
        Self {
            data: data.cast_mut().cast(),
            device: Device::CPU,
            host_accessible: true,
            dtype: T::DTYPE,
            shape: Dims::new(shape),
            strides: Dims::new(strides),
            read_only: access == Access::ReadOnly,
            copier: None,
        }
    }

    pub(crate) fn num_elements(&self) -> usize {
        self.shape
            .as_slice()
            .iter()
            .map(|&e| e.max(0) as usize)
            .product()
    }

    pub(crate) fn elem_size(&self) -> usize {
        self.dtype.size_in_bytes().unwrap_or(1)
    }

    /// `(device_type, device_id)`, as `__dlpack_device__` returns it.
    pub(crate) fn device_tuple(&self) -> (i32, i32) {
        (self.device.device_type.0, self.device.device_id)
    }
}

pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// Compact row-major copy of `src` (host-accessible) into `dst`.
///
/// # Safety
/// `src` is host-accessible: every element it reaches is readable host memory.
pub(crate) unsafe fn strided_copy_host(src: &Export, dst: &mut [u8]) {
    let elem = src.elem_size();
    let n = src.num_elements();
    debug_assert_eq!(dst.len(), n * elem);
    if n == 0 {
        return;
    }
    let shape = src.shape.as_slice();
    let strides = src.strides.as_slice();
    let base = src.data.cast::<u8>().cast_const();
    let mut index = [0i64; MAX_NDIM];
    for chunk in dst.chunks_exact_mut(elem) {
        let offset: i64 = index[..shape.len()]
            .iter()
            .zip(strides)
            .map(|(&i, &s)| i * s)
            .sum();
        // SAFETY: the container guarantees every index in `shape` with its strides reaches
        // an element of host-accessible memory it keeps alive (Export's contract), and
        // `offset` is such an element's offset in elements.
        let p = unsafe { base.offset(offset as isize * elem as isize) };
        // SAFETY: `p` points to `elem` readable bytes (above); `chunk` is `elem` bytes of
        // our own buffer, which cannot overlap the container's memory.
        unsafe { core::ptr::copy_nonoverlapping(p, chunk.as_mut_ptr(), elem) };
        for axis in (0..shape.len()).rev() {
            index[axis] += 1;
            if index[axis] < shape[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
}

/// A few Python objects (kwnames tuples, `max_version` tuples) seen before, by address,
/// with what they parsed to. Callers pass the same static tuples on every call (NumPy's
/// `("dl_device", "copy", "max_version")` and `(1, 0)`, a call site's constants), so a
/// pointer compare replaces the parse. Each cached object is kept alive by a strong
/// reference that is never released (at most `N` per cache), so its address cannot be
/// reused by another object.
pub(crate) struct PtrCache<const N: usize> {
    keys: [AtomicUsize; N],
    vals: [AtomicU32; N],
}

impl<const N: usize> PtrCache<N> {
    pub(crate) const fn new() -> Self {
        Self {
            keys: [const { AtomicUsize::new(0) }; N],
            vals: [const { AtomicU32::new(0) }; N],
        }
    }

    pub(crate) fn get(&self, obj: *mut ffi::PyObject) -> Option<u32> {
        let addr = obj.addr();
        (0..N)
            .find(|&i| self.keys[i].load(Ordering::Acquire) == addr)
            .map(|i| self.vals[i].load(Ordering::Relaxed))
    }

    /// Remembers `obj` (keeping it alive forever) if a slot is free. Called with the GIL
    /// held, which serialises writers.
    pub(crate) fn insert(&self, obj: &Bound<'_, PyAny>, val: u32) {
        if let Some(i) = (0..N).find(|&i| self.keys[i].load(Ordering::Acquire) == 0) {
            self.vals[i].store(val, Ordering::Relaxed);
            // The strong reference this slot owns from now on.
            let ptr = obj.clone().into_ptr();
            self.keys[i].store(ptr.addr(), Ordering::Release);
        }
    }
}
