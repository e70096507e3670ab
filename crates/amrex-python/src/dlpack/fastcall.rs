//! `__dlpack__` as a raw vectorcall (`METH_FASTCALL | METH_KEYWORDS`) method.
//!
//! NumPy calls `x.__dlpack__(dl_device=..., copy=..., max_version=(1, 0))` with three
//! keywords on every `np.from_dlpack`. pyo3's generic argument extraction costs more than
//! the whole export under `abi3-py39` (it encodes every keyword name to a new bytes
//! object), which put `np.from_dlpack` on our containers at about 4x NumPy's own round
//! trip. This module installs one C-level method per class that matches keyword names by
//! pointer (interned) or by value, then runs the shared [`dlpack_protocol`].
//!
//! `METH_FASTCALL` (0x80) is part of the stable ABI since 3.10 and has had the same value
//! and calling convention since CPython 3.7, so the module keeps working on 3.9.

use crate::dlpack::common::PtrCache;
use crate::dlpack::export::{DlpackSource, dlpack_protocol};
use core::ffi::{CStr, c_int};
use core::panic::AssertUnwindSafe;
use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::panic::PanicException;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyString;
use std::panic::catch_unwind;

/// `METH_FASTCALL` (see the module docs for why it is spelled out here).
const METH_FASTCALL: c_int = 0x0080;

/// `_PyCFunctionFastWithKeywords`.
type FastWithKeywords = unsafe extern "C" fn(
    *mut ffi::PyObject,
    *const *mut ffi::PyObject,
    ffi::Py_ssize_t,
    *mut ffi::PyObject,
) -> *mut ffi::PyObject;

const DOC: &CStr =
    c"__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, copy=None)
--

Export as a DLPack capsule (Python array API standard).

max_version None or (0, x) gives a legacy 'dltensor' capsule; (1, x) or newer a
'dltensor_versioned' one with version 1.3. copy=True always copies (IS_COPIED),
copy=False raises BufferError when a copy would be needed. dl_device=(1, 0) asks for host
memory (zero-copy for host-accessible memory, a copy otherwise). stream must be None for
host data. Malformed arguments raise TypeError, unknown keywords TypeError.";

/// The four keyword names, interned once.
struct Names([Py<PyString>; 4]);

static NAMES: PyOnceLock<Names> = PyOnceLock::new();

fn names(py: Python<'_>) -> &Names {
    NAMES.get_or_init(py, || {
        Names(
            ["stream", "max_version", "dl_device", "copy"]
                .map(|n| PyString::intern(py, n).unbind()),
        )
    })
}

/// Which parameter `kw` names, if any.
fn slot_of(py: Python<'_>, kw: *mut ffi::PyObject) -> Option<usize> {
    let names = &names(py).0;
    if let Some(i) = names.iter().position(|n| n.as_ptr() == kw) {
        return Some(i);
    }
    names.iter().position(|n| {
        // SAFETY: attached; both are live str objects (kwnames holds only str).
        unsafe { ffi::PyUnicode_Compare(kw, n.as_ptr()) == 0 }
    })
}

static KWNAMES: PtrCache<4> = PtrCache::new();

/// Slot of each keyword name in a kwnames tuple, packed one byte each (0xff: unused).
fn kwnames_map(py: Python<'_>, kwnames: *mut ffi::PyObject) -> PyResult<[u8; 4]> {
    if let Some(packed) = KWNAMES.get(kwnames) {
        return Ok(packed.to_le_bytes());
    }
    // SAFETY: `kwnames` is a live tuple of str (vectorcall convention).
    let tuple = unsafe { Borrowed::from_ptr(py, kwnames) };
    // SAFETY: as above.
    let nkw = unsafe { ffi::PyTuple_Size(kwnames) };
    let mut map = [0xffu8; 4];
    for k in 0..nkw {
        // SAFETY: `k` is in range; borrowed reference owned by the tuple.
        let name = unsafe { ffi::PyTuple_GetItem(kwnames, k) };
        let Some(slot) = slot_of(py, name) else {
            // SAFETY: a live str.
            let name = unsafe { Borrowed::from_ptr(py, name) };
            return Err(PyTypeError::new_err(format!(
                "__dlpack__() got an unexpected keyword argument {}",
                name.repr().map(|r| r.to_string()).unwrap_or_default()
            )));
        };
        if k < 4 {
            map[k as usize] = slot as u8;
        }
    }
    if nkw <= 4 {
        KWNAMES.insert(&tuple, u32::from_le_bytes(map));
    }
    Ok(map)
}

/// # Safety
/// Called by CPython with the vectorcall convention: `args` holds `nargs` positional
/// arguments followed by one value per name in the `kwnames` tuple (or NULL).
unsafe fn call<T: DlpackSource>(
    py: Python<'_>,
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> PyResult<*mut ffi::PyObject> {
    // The high bit is PY_VECTORCALL_ARGUMENTS_OFFSET; CPython strips it for methods, but
    // masking is harmless.
    let nargs = nargs & ffi::Py_ssize_t::MAX;
    if nargs != 0 {
        return Err(PyTypeError::new_err(format!(
            "__dlpack__() takes no positional arguments ({nargs} given)"
        )));
    }
    let mut slots: [Option<Borrowed<'_, '_, PyAny>>; 4] = [None; 4];
    if !kwnames.is_null() {
        let map = kwnames_map(py, kwnames)?;
        // SAFETY: as in `kwnames_map`.
        let nkw = unsafe { ffi::PyTuple_Size(kwnames) };
        for k in 0..nkw {
            let slot = if k < 4 {
                usize::from(map[k as usize])
            } else {
                // SAFETY: `k` is in range; borrowed reference owned by the tuple.
                let name = unsafe { ffi::PyTuple_GetItem(kwnames, k) };
                slot_of(py, name).unwrap_or(usize::MAX)
            };
            // SAFETY: `args` holds `nargs + nkw` values (vectorcall convention).
            let value = unsafe { args.wrapping_add((nargs + k) as usize).read() };
            // SAFETY: a live object borrowed from the caller for the call.
            let value = unsafe { Borrowed::from_ptr(py, value) };
            if slot < 4 && !value.is_none() {
                if slots[slot].is_some() {
                    return Err(PyTypeError::new_err(
                        "__dlpack__() got multiple values for a keyword argument",
                    ));
                }
                slots[slot] = Some(value);
            }
        }
    }
    // SAFETY: `slf` is the object the method descriptor was called on, alive for the call.
    let obj = unsafe { Borrowed::from_ptr(py, slf) };
    let this = obj.cast::<T>()?;
    let [stream, max_version, dl_device, copy] = slots;
    let capsule = T::with_export(&this, |src, count| {
        // SAFETY: `DlpackSource` implementors describe memory kept alive by the object and
        // not reallocated while `count` is non-zero.
        unsafe {
            dlpack_protocol(
                obj.as_any(),
                src,
                count,
                stream.as_deref(),
                max_version.as_deref(),
                dl_device.as_deref(),
                copy.as_deref(),
            )
        }
    })?;
    Ok(capsule.into_ptr())
}

unsafe extern "C" fn dlpack_fastcall<T: DlpackSource>(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls methods with the thread attached (GIL held).
    let py = unsafe { Python::assume_attached() };
    // SAFETY: forwarded from CPython's vectorcall convention.
    let result = catch_unwind(AssertUnwindSafe(|| unsafe {
        call::<T>(py, slf, args, nargs, kwnames)
    }));
    let err = match result {
        Ok(Ok(ptr)) => return ptr,
        Ok(Err(e)) => e,
        Err(_) => PanicException::new_err("__dlpack__ panicked"),
    };
    err.restore(py);
    core::ptr::null_mut()
}

/// Installs the vectorcall `__dlpack__` on `T`'s type object.
pub(crate) fn install<T: DlpackSource>(py: Python<'_>) -> PyResult<()> {
    let meth: FastWithKeywords = dlpack_fastcall::<T>;
    let def: &'static mut ffi::PyMethodDef = Box::leak(Box::new(ffi::PyMethodDef {
        ml_name: c"__dlpack__".as_ptr(),
        ml_meth: ffi::PyMethodDefPointer {
            // SAFETY: with METH_FASTCALL | METH_KEYWORDS, CPython calls `ml_meth` with the
            // `FastWithKeywords` signature; the union field only stores the pointer.
            PyCFunction: unsafe {
                core::mem::transmute::<FastWithKeywords, ffi::PyCFunction>(meth)
            },
        },
        ml_flags: METH_FASTCALL | ffi::METH_KEYWORDS,
        ml_doc: DOC.as_ptr(),
    }));
    let ty = py.get_type::<T>();
    // SAFETY: attached; `def` is leaked, so it outlives the descriptor as CPython requires.
    let descr = unsafe { ffi::PyDescr_NewMethod(ty.as_type_ptr(), def) };
    // SAFETY: a new reference or NULL with an exception set.
    let descr = unsafe { Bound::from_owned_ptr_or_err(py, descr) }?;
    ty.setattr("__dlpack__", descr)
}
