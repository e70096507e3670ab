//! `PODVector`-style vectors (`PodVectorF64`, `PodVectorI32`, …; pyAMReX aliases
//! `PODVector_real_std`, `PODVector_int_std`, …) with the full DLPack protocol.
//!
//! A vector either owns its elements — in host memory, or on any arena
//! (`PodVectorF64(n, arena="device")`) — or has adopted another producer's memory
//! zero-copy (`PodVectorF64.from_dlpack(a)`, a NumPy array or a CUDA tensor). Growing an
//! adopted vector copies it into owned storage first (on the same arena). While any
//! DLPack export of a vector is alive (a NumPy view, say), every operation that could
//! move or free its buffer raises `BufferError`, as `bytearray` does.
//!
//! On arenas other than the host arena, element access goes through the arena's bulk
//! copies (one element per `v[i]`), so the CPU never dereferences device memory.

use crate::arena::{PyArena, arena_arg, dyn_copier, import_arena, is_host, settle};
use crate::dlpack::common::{Dims, Export};
use crate::dlpack::export::{DlpackSource, ExportCount};
use crate::dlpack::import::{Sharing, import, to_numpy};
use crate::dlpack::install;
use crate::error::py_err;
use amrex_arena::{AnyArena, Arena};
use amrex_dlpack_capsule::Imported;
use amrex_dlpack_core::{Device, DlpackElement, DlpackError, ErrorKind};
use amrex_podvector::PodVector;
use bytemuck::AnyBitPattern;
use core::mem::size_of;
use core::ptr::NonNull;
use pyo3::exceptions::{PyBufferError, PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;

/// Where a vector's elements live.
///
/// Invariants:
/// 1. `Adopted` holds a validated rank-1 tensor of `T` with unit stride and an aligned
///    first element (checked by [`VecCore::adopt`]); its memory lives until the tensor is
///    dropped. It is host memory when the core's arena is the host arena, and otherwise
///    memory the arena's bulk operations reach.
/// 2. `Arena` vectors live on the core's arena, which is not the host arena (host
///    vectors are `Owned`).
/// 3. The buffer of any variant is only reallocated or freed when the owning
///    [`VecCore`]'s export count is zero.
#[derive(Debug)]
enum Storage<T: AnyBitPattern> {
    Owned(PodVector<T>),
    Arena(PodVector<T, AnyArena>),
    Adopted(Imported),
}

/// An owned vector that may grow or shrink.
enum Growable<'a, T: AnyBitPattern> {
    Host(&'a mut PodVector<T>),
    Arena(&'a mut PodVector<T, AnyArena>),
}

/// `$e` with `$v` bound to the vector inside a [`Growable`], whichever arena it is on.
macro_rules! on_growable {
    ($g:expr, $v:ident => $e:expr) => {
        match $g {
            Growable::Host($v) => $e,
            Growable::Arena($v) => $e,
        }
    };
}

/// The element logic shared by every vector class.
#[derive(Debug)]
pub(crate) struct VecCore<T: AnyBitPattern> {
    store: Storage<T>,
    /// The arena of the memory: the host arena for host memory; for adopted device
    /// memory, the arena its copies and stream waits go through (never its allocator).
    arena: AnyArena,
    pub(crate) exports: ExportCount,
}

impl<T: DlpackElement + AnyBitPattern + Default> VecCore<T> {
    pub(crate) fn new(len: usize, value: T) -> Self {
        Self::from_vec(vec![value; len])
    }

    pub(crate) fn from_vec(v: Vec<T>) -> Self {
        Self {
            store: Storage::Owned(PodVector::from_vec(v)),
            arena: AnyArena::default(),
            exports: ExportCount::default(),
        }
    }

    /// `len` copies of `value` in memory of `arena`.
    pub(crate) fn new_in(len: usize, value: T, arena: AnyArena) -> PyResult<Self> {
        if is_host(&arena) {
            return Ok(Self::new(len, value));
        }
        let v = PodVector::try_from_elem_in(value, len, arena.clone()).map_err(py_err)?;
        Ok(Self {
            store: Storage::Arena(v),
            arena,
            exports: ExportCount::default(),
        })
    }

    /// A copy of host `values` in memory of `arena`.
    pub(crate) fn from_vec_in(values: Vec<T>, arena: AnyArena) -> PyResult<Self> {
        if is_host(&arena) {
            return Ok(Self::from_vec(values));
        }
        let v = PodVector::try_from_slice_in(&values, arena.clone()).map_err(py_err)?;
        Ok(Self {
            store: Storage::Arena(v),
            arena,
            exports: ExportCount::default(),
        })
    }

    /// Adopts a producer's tensor zero-copy: it must be a rank-1, unit-stride tensor of
    /// `T`; host memory for the host arena, else memory of `arena`'s device.
    pub(crate) fn adopt(t: Imported, arena: AnyArena) -> PyResult<Self> {
        {
            let v = t.view();
            v.expect_ndim(1).map_err(py_err)?;
            if is_host(&arena) {
                // Dtype, host accessibility and alignment.
                v.typed::<T>().map_err(py_err)?;
            } else {
                if v.dtype() != T::DTYPE {
                    return Err(py_err::<DlpackError>(
                        ErrorKind::DtypeMismatch {
                            expected: T::DTYPE,
                            found: v.dtype(),
                        }
                        .into(),
                    ));
                }
                let address = v.data_ptr().addr();
                if v.num_elements() > 0 && !address.is_multiple_of(align_of::<T>()) {
                    return Err(py_err::<DlpackError>(
                        ErrorKind::Misaligned {
                            address,
                            align: align_of::<T>(),
                        }
                        .into(),
                    ));
                }
            }
            if v.shape()[0] > 1 && v.stride(0) != 1 {
                return Err(py_err::<DlpackError>(
                    ErrorKind::NonUnitStride {
                        axis: 0,
                        stride: v.stride(0),
                    }
                    .into(),
                ));
            }
        }
        Ok(Self {
            store: Storage::Adopted(t),
            arena,
            exports: ExportCount::default(),
        })
    }

    fn ptr_len(&self) -> (*mut T, usize) {
        match &self.store {
            Storage::Owned(v) => (v.as_ptr().cast_mut(), v.len()),
            Storage::Arena(v) => (v.as_ptr().cast_mut(), v.len()),
            Storage::Adopted(t) => {
                let v = t.view();
                (v.data_ptr().cast(), v.shape()[0] as usize)
            }
        }
    }

    /// Whether the CPU reads and writes the elements through their pointer (host
    /// memory); otherwise through the arena.
    fn direct(&self) -> bool {
        is_host(&self.arena)
    }

    pub(crate) fn arena(&self) -> &AnyArena {
        &self.arena
    }

    pub(crate) fn device(&self) -> Device {
        match &self.store {
            Storage::Owned(_) => Device::CPU,
            Storage::Arena(v) => v.device(),
            Storage::Adopted(t) => t.view().device(),
        }
    }

    fn host_accessible(&self) -> bool {
        match &self.store {
            Storage::Owned(_) => true,
            Storage::Arena(v) => v.arena().host_accessible(),
            Storage::Adopted(t) => t.view().device().is_host_accessible(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.ptr_len().1
    }

    pub(crate) fn capacity(&self) -> usize {
        match &self.store {
            Storage::Owned(v) => v.capacity(),
            Storage::Arena(v) => v.capacity(),
            Storage::Adopted(_) => self.len(),
        }
    }

    pub(crate) fn read_only(&self) -> bool {
        match &self.store {
            Storage::Owned(_) | Storage::Arena(_) => false,
            Storage::Adopted(t) => t.is_read_only(),
        }
    }

    pub(crate) fn is_adopted(&self) -> bool {
        matches!(self.store, Storage::Adopted(_))
    }

    fn index(&self, i: isize) -> PyResult<usize> {
        let len = self.len();
        let j = if i < 0 { i + len as isize } else { i };
        if j < 0 || j as usize >= len {
            Err(PyIndexError::new_err(format!(
                "index {i} out of range for a vector of length {len}"
            )))
        } else {
            Ok(j as usize)
        }
    }

    /// Element `j < len` of adopted arena memory, as its address for the arena.
    fn arena_elem(&self, j: usize) -> PyResult<NonNull<u8>> {
        let (p, _) = self.ptr_len();
        NonNull::new(p.wrapping_add(j).cast::<u8>())
            .ok_or_else(|| PyValueError::new_err("a non-empty vector with a NULL pointer"))
    }

    pub(crate) fn get(&self, i: isize) -> PyResult<T> {
        let j = self.index(i)?;
        if self.direct() {
            let (p, _) = self.ptr_len();
            // SAFETY: `j < len` and `p` points to `len` initialised host elements
            // (invariant 1 or the Vec); a raw read tolerates consumers that write
            // concurrently via views.
            return Ok(unsafe { p.wrapping_add(j).read() });
        }
        if let Storage::Arena(v) = &self.store {
            settle(&self.arena)?;
            return v.get_copy(j).map_err(py_err);
        }
        let mut out = T::zeroed();
        let src = self.arena_elem(j)?;
        // SAFETY: element `j < len` of adopted memory the arena reaches (invariant 1);
        // `out` is one element of host memory of ours.
        unsafe {
            self.arena
                .copy_to_host((&raw mut out).cast(), src, size_of::<T>())
        }
        .map_err(py_err)?;
        Ok(out)
    }

    pub(crate) fn set(&mut self, i: isize, value: T) -> PyResult<()> {
        if self.read_only() {
            return Err(PyBufferError::new_err(
                "this vector adopted read-only memory",
            ));
        }
        let j = self.index(i)?;
        if self.direct() {
            let (p, _) = self.ptr_len();
            // SAFETY: in bounds (above); writable host memory: owned, or adopted without
            // READ_ONLY.
            unsafe { p.wrapping_add(j).write(value) };
            return Ok(());
        }
        settle(&self.arena)?;
        if let Storage::Arena(v) = &mut self.store {
            return v.set(j, value).map_err(py_err);
        }
        let dst = self.arena_elem(j)?;
        // SAFETY: element `j < len` of writable adopted memory the arena reaches
        // (invariant 1, not READ_ONLY); `value` is a host local.
        unsafe {
            self.arena
                .copy_from_host(dst, (&raw const value).cast(), size_of::<T>())
        }
        .map_err(py_err)
    }

    /// A host copy of the elements.
    pub(crate) fn to_vec(&self) -> PyResult<Vec<T>> {
        let (p, len) = self.ptr_len();
        if self.direct() {
            return Ok((0..len)
                // SAFETY: `k < len` elements, initialised host memory.
                .map(|k| unsafe { p.wrapping_add(k).read() })
                .collect());
        }
        settle(&self.arena)?;
        if let Storage::Arena(v) = &self.store {
            return v.to_host_vec().map_err(py_err);
        }
        let mut out = vec![T::zeroed(); len];
        if len > 0 {
            let src = self.arena_elem(0)?;
            // SAFETY: the `len` elements of adopted memory the arena reaches (invariant
            // 1) into `out`, `len` host elements of ours.
            unsafe {
                self.arena
                    .copy_to_host(out.as_mut_ptr().cast(), src, len * size_of::<T>())
            }
            .map_err(py_err)?;
        }
        Ok(out)
    }

    /// The owned vector, for operations that may reallocate: refused while exports
    /// live; adopted memory is copied into owned storage on the same arena first.
    fn growable(&mut self) -> PyResult<Growable<'_, T>> {
        self.exports.check_resizable()?;
        settle(&self.arena)?;
        if let Storage::Adopted(_) = self.store {
            let values = self.to_vec()?;
            self.store = if is_host(&self.arena) {
                Storage::Owned(PodVector::from_vec(values))
            } else {
                Storage::Arena(
                    PodVector::try_from_slice_in(&values, self.arena.clone()).map_err(py_err)?,
                )
            };
        }
        Ok(match &mut self.store {
            Storage::Owned(v) => Growable::Host(v),
            Storage::Arena(v) => Growable::Arena(v),
            Storage::Adopted(_) => unreachable!("converted just above"),
        })
    }

    pub(crate) fn push(&mut self, value: T) -> PyResult<()> {
        on_growable!(self.growable()?, v => v.try_push(value)).map_err(py_err)
    }

    pub(crate) fn pop(&mut self) -> PyResult<Option<T>> {
        match self.growable()? {
            Growable::Host(v) => Ok(v.pop()),
            Growable::Arena(v) => {
                let Some(last) = v.len().checked_sub(1) else {
                    return Ok(None);
                };
                let x = v.get_copy(last).map_err(py_err)?;
                v.truncate(last);
                Ok(Some(x))
            }
        }
    }

    pub(crate) fn clear(&mut self) -> PyResult<()> {
        on_growable!(self.growable()?, v => v.clear());
        Ok(())
    }

    pub(crate) fn resize(&mut self, size: usize, value: T) -> PyResult<()> {
        on_growable!(self.growable()?, v => v.try_resize(size, value)).map_err(py_err)
    }

    pub(crate) fn reserve(&mut self, capacity: usize) -> PyResult<()> {
        on_growable!(self.growable()?, v => {
            let extra = capacity.saturating_sub(v.len());
            v.try_reserve(extra)
        })
        .map_err(py_err)
    }

    pub(crate) fn shrink_to_fit(&mut self) -> PyResult<()> {
        on_growable!(self.growable()?, v => v.try_shrink_to_fit()).map_err(py_err)
    }

    pub(crate) fn export(&self) -> Export<'static> {
        let (p, len) = self.ptr_len();
        Export {
            data: p.cast(),
            device: self.device(),
            host_accessible: self.host_accessible(),
            dtype: T::DTYPE,
            shape: Dims::new(&[len as i64]),
            strides: Dims::new(&[1]),
            read_only: self.read_only(),
            copier: dyn_copier(&self.arena),
        }
    }
}

/// Python element conversion for the vector macro.
pub(crate) fn numpy_dtype<T: DlpackElement>() -> &'static str {
    let d = T::DTYPE;
    match (d.code.0, d.bits) {
        (0, 8) => "int8",
        (0, 16) => "int16",
        (0, 32) => "int32",
        (0, 64) => "int64",
        (1, 8) => "uint8",
        (1, 16) => "uint16",
        (1, 32) => "uint32",
        (1, 64) => "uint64",
        (2, 32) => "float32",
        (2, 64) => "float64",
        (6, 8) => "bool",
        _ => "unknown",
    }
}

macro_rules! pod_vector {
    ($name:ident, $pyname:literal, $t:ty, $doc:literal) => {
        #[doc = $doc]
        ///
        /// Methods follow pyAMReX's `PODVector` (`push_back`, `pop_back`, `resize`, `size`,
        /// `capacity`, `reserve`, `shrink_to_fit`, `clear`, `empty`, `to_numpy`) with
        /// Python aliases (`append`, `pop`, `len()`); `__dlpack__` exports zero-copy.
        #[pyclass(module = "amrex_rs", name = $pyname)]
        #[derive(Debug)]
        pub(crate) struct $name {
            pub(crate) core: VecCore<$t>,
        }

        impl DlpackSource for $name {
            fn with_export<R>(
                slf: &Bound<'_, Self>,
                f: impl FnOnce(&Export<'_>, Option<&ExportCount>) -> PyResult<R>,
            ) -> PyResult<R> {
                let this = slf.try_borrow()?;
                settle(this.core.arena())?;
                f(&this.core.export(), Some(&this.core.exports))
            }
        }

        #[pymethods]
        impl $name {
            /// A vector of `size` elements, each `value` (default zero), in memory of
            /// `arena` (`None`/`"host"`, `"pinned"`, `"device"`, `"managed"` or an
            /// `Arena`).
            #[new]
            #[pyo3(signature = (size=0, value=None, arena=None))]
            fn py_new(
                size: usize,
                value: Option<$t>,
                arena: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<Self> {
                Ok(Self {
                    core: VecCore::new_in(size, value.unwrap_or_default(), arena_arg(arena)?)?,
                })
            }

            /// A vector holding a copy of `values` (any iterable of numbers), in memory
            /// of `arena`.
            #[staticmethod]
            #[pyo3(signature = (values, arena=None))]
            fn from_list(values: Vec<$t>, arena: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
                Ok(Self {
                    core: VecCore::from_vec_in(values, arena_arg(arena)?)?,
                })
            }

            /// Adopts the memory of any DLPack producer (a rank-1, unit-stride array of
            /// this dtype: host memory, or a CUDA/ROCm/oneAPI tensor) without copying:
            /// writes are visible both ways. Device memory is reached through `arena`
            /// (default: the device's own backend), which never frees it.
            #[staticmethod]
            #[pyo3(signature = (obj, arena=None))]
            fn from_dlpack(
                obj: &Bound<'_, PyAny>,
                arena: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<Self> {
                let t = import(obj)?;
                let arena = import_arena(t.view().device(), arena)?;
                Ok(Self {
                    core: VecCore::adopt(t, arena)?,
                })
            }

            /// `(device_type, device_id)` of the memory (`(1, 0)` for host memory).
            fn __dlpack_device__(&self) -> (i32, i32) {
                self.core.export().device_tuple()
            }

            /// The arena of the memory.
            #[getter]
            fn arena(&self) -> PyArena {
                PyArena(self.core.arena().clone())
            }

            /// A copy of this vector in host memory.
            fn to_host(&self) -> PyResult<Self> {
                Ok(Self {
                    core: VecCore::from_vec(self.core.to_vec()?),
                })
            }

            /// A NumPy view (`copy=False`, zero-copy; host memory only) or copy.
            #[pyo3(signature = (copy=false, order="F"))]
            fn to_numpy<'py>(
                slf: &Bound<'py, Self>,
                copy: bool,
                order: &str,
            ) -> PyResult<Bound<'py, PyAny>> {
                let src = slf.borrow().core.export();
                to_numpy(slf.as_any(), &src, Sharing::copy_if(copy), order)
            }

            /// An array of the module matching the memory (NumPy for host memory, CuPy
            /// for CUDA and ROCm, dpnp for oneAPI).
            #[pyo3(signature = (copy=false, order="F"))]
            fn to_xp<'py>(
                slf: &Bound<'py, Self>,
                copy: bool,
                order: &str,
            ) -> PyResult<Bound<'py, PyAny>> {
                let src = slf.borrow().core.export();
                crate::dlpack::import::to_xp(slf.as_any(), &src, Sharing::copy_if(copy), order)
            }

            /// NumPy's `__array__`, so `np.asarray(v)` is a zero-copy view.
            #[pyo3(signature = (dtype=None, copy=None))]
            fn __array__<'py>(
                slf: &Bound<'py, Self>,
                dtype: Option<&Bound<'py, PyAny>>,
                copy: Option<bool>,
            ) -> PyResult<Bound<'py, PyAny>> {
                let src = slf.borrow().core.export();
                let arr = to_numpy(
                    slf.as_any(),
                    &src,
                    Sharing::copy_if(copy.unwrap_or(false)),
                    "C",
                )?;
                match dtype {
                    Some(d) => arr.call_method1("astype", (d,)),
                    None => Ok(arr),
                }
            }

            /// Address of the first element (0 when empty).
            fn data_ptr(&self) -> usize {
                let e = self.core.export();
                if self.core.len() == 0 {
                    0
                } else {
                    e.data.addr()
                }
            }

            /// NumPy dtype name of the elements.
            #[getter]
            fn dtype(&self) -> &'static str {
                numpy_dtype::<$t>()
            }

            /// Whether this vector adopted read-only memory.
            #[getter]
            fn read_only(&self) -> bool {
                self.core.read_only()
            }

            /// Whether the elements live in another producer's adopted memory.
            #[getter]
            fn adopted(&self) -> bool {
                self.core.is_adopted()
            }

            /// Number of live DLPack exports (views) of this vector.
            #[getter]
            fn num_exports(&self) -> usize {
                self.core.exports.get()
            }

            /// Number of elements.
            fn size(&self) -> usize {
                self.core.len()
            }

            fn __len__(&self) -> usize {
                self.core.len()
            }

            /// Whether the vector has no elements.
            fn empty(&self) -> bool {
                self.core.len() == 0
            }

            /// Elements the buffer can hold without reallocating.
            fn capacity(&self) -> usize {
                self.core.capacity()
            }

            /// Appends `value`.
            fn push_back(&mut self, value: $t) -> PyResult<()> {
                self.core.push(value)
            }

            /// Alias of `push_back`.
            fn append(&mut self, value: $t) -> PyResult<()> {
                self.push_back(value)
            }

            /// Removes the last element.
            fn pop_back(&mut self) -> PyResult<()> {
                self.pop().map(drop)
            }

            /// Removes and returns the last element.
            fn pop(&mut self) -> PyResult<$t> {
                self.core
                    .pop()?
                    .ok_or_else(|| PyIndexError::new_err("pop from an empty vector"))
            }

            /// Removes every element (keeps the capacity).
            fn clear(&mut self) -> PyResult<()> {
                self.core.clear()
            }

            /// Sets the length to `size`; new elements are `value` (default zero).
            #[pyo3(signature = (size, value=None))]
            fn resize(&mut self, size: usize, value: Option<$t>) -> PyResult<()> {
                self.core.resize(size, value.unwrap_or_default())
            }

            /// Makes room for at least `capacity` elements.
            fn reserve(&mut self, capacity: usize) -> PyResult<()> {
                self.core.reserve(capacity)
            }

            /// Frees unused capacity.
            fn shrink_to_fit(&mut self) -> PyResult<()> {
                self.core.shrink_to_fit()
            }

            fn __getitem__(&self, i: isize) -> PyResult<$t> {
                self.core.get(i)
            }

            fn __setitem__(&mut self, i: isize, value: $t) -> PyResult<()> {
                self.core.set(i, value)
            }

            /// The elements as a Python list (a copy).
            fn to_list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
                PyList::new(py, self.core.to_vec()?)
            }

            fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                Ok(self.to_list(py)?.try_iter()?.into_any())
            }

            fn __repr__(&self) -> String {
                let device = self.core.device();
                let on = if device == Device::CPU {
                    String::new()
                } else {
                    format!(", device={device}")
                };
                format!(
                    "amrex_rs.{}(size={}, dtype={}{on})",
                    $pyname,
                    self.core.len(),
                    numpy_dtype::<$t>()
                )
            }
        }
    };
}

pod_vector!(
    PodVectorF64,
    "PodVectorF64",
    f64,
    "A vector of `f64` (AMReX `Real`)."
);
pod_vector!(PodVectorF32, "PodVectorF32", f32, "A vector of `f32`.");
pod_vector!(
    PodVectorI32,
    "PodVectorI32",
    i32,
    "A vector of `i32` (AMReX `int`)."
);
pod_vector!(
    PodVectorI64,
    "PodVectorI64",
    i64,
    "A vector of `i64` (AMReX `Long`)."
);
pod_vector!(
    PodVectorU64,
    "PodVectorU64",
    u64,
    "A vector of `u64` (particle `idcpu`)."
);

/// Registers the vector classes and their pyAMReX aliases.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PodVectorF64>()?;
    m.add_class::<PodVectorF32>()?;
    m.add_class::<PodVectorI32>()?;
    m.add_class::<PodVectorI64>()?;
    m.add_class::<PodVectorU64>()?;
    let py = m.py();
    install::<PodVectorF64>(py)?;
    install::<PodVectorF32>(py)?;
    install::<PodVectorI32>(py)?;
    install::<PodVectorI64>(py)?;
    install::<PodVectorU64>(py)?;
    for (alias, class) in [
        ("PODVector_real_std", py.get_type::<PodVectorF64>()),
        ("PODVector_int_std", py.get_type::<PodVectorI32>()),
        ("PODVector_int64_std", py.get_type::<PodVectorI64>()),
        ("PODVector_uint64_std", py.get_type::<PodVectorU64>()),
        ("Vector_Real", py.get_type::<PodVectorF64>()),
        ("Vector_int", py.get_type::<PodVectorI32>()),
        ("Vector_Long", py.get_type::<PodVectorI64>()),
    ] {
        m.add(alias, class)?;
    }
    Ok(())
}
