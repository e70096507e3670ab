//! `PODVector`-style vectors (`PodVectorF64`, `PodVectorI32`, …; pyAMReX aliases
//! `PODVector_real_std`, `PODVector_int_std`, …) with the full DLPack protocol.
//!
//! A vector either owns its elements or has adopted another producer's memory zero-copy
//! (`PodVectorF64.from_dlpack(np_array)`). Growing an adopted vector copies it into owned
//! storage first. While any DLPack export of a vector is alive (a NumPy view, say), every
//! operation that could move or free its buffer raises `BufferError`, as `bytearray` does.

use crate::fastcall::{DlpackSource, install};
use crate::interop::{dlpack_err, import, to_numpy, to_xp};
use crate::protocol::{Export, ExportCount};
use amrex_dlpack_capsule::Imported;
use amrex_dlpack_core::{DlpackElement, ErrorKind};
use amrex_podvector::PodVector;
use bytemuck::AnyBitPattern;
use pyo3::exceptions::{PyBufferError, PyIndexError};
use pyo3::prelude::*;
use pyo3::types::PyList;

/// Where a vector's elements live.
///
/// Invariants:
/// 1. `Adopted` holds a validated rank-1 host tensor of `T` with unit stride (checked by
///    [`VecCore::adopt`]); its memory lives until the tensor is dropped.
/// 2. The buffer of either variant is only reallocated or freed when the owning
///    [`VecCore`]'s export count is zero.
#[derive(Debug)]
enum Storage<T: AnyBitPattern> {
    Owned(PodVector<T>),
    Adopted(Imported),
}

/// The element logic shared by every vector class.
#[derive(Debug)]
pub(crate) struct VecCore<T: AnyBitPattern> {
    store: Storage<T>,
    pub(crate) exports: ExportCount,
}

impl<T: DlpackElement + AnyBitPattern + Default> VecCore<T> {
    pub(crate) fn new(len: usize, value: T) -> Self {
        Self::from_vec(vec![value; len])
    }

    pub(crate) fn from_vec(v: Vec<T>) -> Self {
        Self {
            store: Storage::Owned(PodVector::from_vec(v)),
            exports: ExportCount::default(),
        }
    }

    /// Adopts a producer's tensor zero-copy: it must be a rank-1, unit-stride host tensor
    /// of `T`.
    pub(crate) fn adopt(t: Imported) -> PyResult<Self> {
        {
            let v = t.view();
            v.expect_ndim(1).map_err(dlpack_err)?;
            let typed = v.typed::<T>().map_err(dlpack_err)?;
            if typed.as_slice().is_none() {
                return Err(dlpack_err(
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
            exports: ExportCount::default(),
        })
    }

    fn ptr_len(&self) -> (*mut T, usize) {
        match &self.store {
            Storage::Owned(v) => (v.as_ptr().cast_mut(), v.len()),
            Storage::Adopted(t) => {
                let v = t.view();
                (v.data_ptr().cast(), v.shape()[0] as usize)
            }
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.ptr_len().1
    }

    pub(crate) fn capacity(&self) -> usize {
        match &self.store {
            Storage::Owned(v) => v.capacity(),
            Storage::Adopted(_) => self.len(),
        }
    }

    pub(crate) fn read_only(&self) -> bool {
        match &self.store {
            Storage::Owned(_) => false,
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

    pub(crate) fn get(&self, i: isize) -> PyResult<T> {
        let j = self.index(i)?;
        let (p, _) = self.ptr_len();
        // SAFETY: `j < len` and `p` points to `len` initialised elements (invariant 1 or
        // the Vec); a raw read tolerates consumers that write concurrently via views.
        Ok(unsafe { p.wrapping_add(j).read() })
    }

    pub(crate) fn set(&mut self, i: isize, value: T) -> PyResult<()> {
        if self.read_only() {
            return Err(PyBufferError::new_err(
                "this vector adopted read-only memory",
            ));
        }
        let j = self.index(i)?;
        let (p, _) = self.ptr_len();
        // SAFETY: in bounds (above); writable: owned, or adopted without READ_ONLY.
        unsafe { p.wrapping_add(j).write(value) };
        Ok(())
    }

    /// A copy of the elements.
    pub(crate) fn to_vec(&self) -> Vec<T> {
        let (p, len) = self.ptr_len();
        (0..len)
            // SAFETY: `k < len` elements, initialised.
            .map(|k| unsafe { p.wrapping_add(k).read() })
            .collect()
    }

    /// The owned Vec, for operations that may reallocate: refused while exports live;
    /// an adopted buffer is copied into owned storage first.
    pub(crate) fn owned_mut(&mut self) -> PyResult<&mut PodVector<T>> {
        self.exports.check_resizable()?;
        if let Storage::Adopted(_) = self.store {
            self.store = Storage::Owned(PodVector::from_vec(self.to_vec()));
        }
        match &mut self.store {
            Storage::Owned(v) => Ok(v),
            Storage::Adopted(_) => unreachable!("converted just above"),
        }
    }

    pub(crate) fn export(&self) -> Export<'static> {
        let (p, len) = self.ptr_len();
        Export::host::<T>(p, &[len as i64], &[1], self.read_only())
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
                f(&this.core.export(), Some(&this.core.exports))
            }
        }

        #[pymethods]
        impl $name {
            /// A vector of `size` elements, each `value` (default zero).
            #[new]
            #[pyo3(signature = (size=0, value=None))]
            fn py_new(size: usize, value: Option<$t>) -> Self {
                Self {
                    core: VecCore::new(size, value.unwrap_or_default()),
                }
            }

            /// A vector holding a copy of `values` (any iterable of numbers).
            #[staticmethod]
            fn from_list(values: Vec<$t>) -> Self {
                Self {
                    core: VecCore::from_vec(values),
                }
            }

            /// Adopts the memory of any DLPack producer (a rank-1, unit-stride host array
            /// of this dtype) without copying: writes are visible both ways.
            #[staticmethod]
            fn from_dlpack(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
                Ok(Self {
                    core: VecCore::adopt(import(obj)?)?,
                })
            }

            /// `(device_type, device_id)`: `(1, 0)`, host memory.
            fn __dlpack_device__(&self) -> (i32, i32) {
                self.core.export().device_tuple()
            }

            /// A NumPy view (`copy=False`, zero-copy) or copy.
            #[pyo3(signature = (copy=false, order="F"))]
            fn to_numpy<'py>(
                slf: &Bound<'py, Self>,
                copy: bool,
                order: &str,
            ) -> PyResult<Bound<'py, PyAny>> {
                let src = slf.borrow().core.export();
                to_numpy(slf.as_any(), &src, copy, order)
            }

            /// An array of the module matching the memory (NumPy here).
            #[pyo3(signature = (copy=false, order="F"))]
            fn to_xp<'py>(
                slf: &Bound<'py, Self>,
                copy: bool,
                order: &str,
            ) -> PyResult<Bound<'py, PyAny>> {
                let src = slf.borrow().core.export();
                to_xp(slf.as_any(), &src, copy, order)
            }

            /// NumPy's `__array__`, so `np.asarray(v)` is a zero-copy view.
            #[pyo3(signature = (dtype=None, copy=None))]
            fn __array__<'py>(
                slf: &Bound<'py, Self>,
                dtype: Option<&Bound<'py, PyAny>>,
                copy: Option<bool>,
            ) -> PyResult<Bound<'py, PyAny>> {
                let src = slf.borrow().core.export();
                let arr = to_numpy(slf.as_any(), &src, copy.unwrap_or(false), "C")?;
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
                self.core.owned_mut()?.push(value);
                Ok(())
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
                    .owned_mut()?
                    .pop()
                    .ok_or_else(|| PyIndexError::new_err("pop from an empty vector"))
            }

            /// Removes every element (keeps the capacity).
            fn clear(&mut self) -> PyResult<()> {
                self.core.owned_mut()?.clear();
                Ok(())
            }

            /// Sets the length to `size`; new elements are `value` (default zero).
            #[pyo3(signature = (size, value=None))]
            fn resize(&mut self, size: usize, value: Option<$t>) -> PyResult<()> {
                self.core
                    .owned_mut()?
                    .resize(size, value.unwrap_or_default());
                Ok(())
            }

            /// Makes room for at least `capacity` elements.
            fn reserve(&mut self, capacity: usize) -> PyResult<()> {
                let v = self.core.owned_mut()?;
                let extra = capacity.saturating_sub(v.len());
                v.reserve(extra);
                Ok(())
            }

            /// Frees unused capacity.
            fn shrink_to_fit(&mut self) -> PyResult<()> {
                self.core.owned_mut()?.shrink_to_fit();
                Ok(())
            }

            fn __getitem__(&self, i: isize) -> PyResult<$t> {
                self.core.get(i)
            }

            fn __setitem__(&mut self, i: isize, value: $t) -> PyResult<()> {
                self.core.set(i, value)
            }

            /// The elements as a Python list (a copy).
            fn to_list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
                PyList::new(py, self.core.to_vec())
            }

            fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                Ok(self.to_list(py)?.try_iter()?.into_any())
            }

            fn __repr__(&self) -> String {
                format!(
                    "amrex_rs.{}(size={}, dtype={})",
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
