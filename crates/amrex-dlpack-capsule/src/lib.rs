//! DLPack PyCapsules over the stable CPython C API, usable with any pyo3 version — or none.
//!
//! The Python array protocol hands a `DLManagedTensorVersioned` (or a legacy
//! `DLManagedTensor`) across in a `PyCapsule` named `"dltensor_versioned"` (or
//! `"dltensor"`). The consumer renames the capsule to `"used_dltensor_versioned"` (or
//! `"used_dltensor"`) when it takes ownership; the capsule's destructor calls the tensor's
//! deleter only if the capsule still carries its unused name.
//!
//! This crate does exactly that and nothing else, binding the nine stable-ABI functions it
//! needs (`PyCapsule_New`, `PyCapsule_IsValid`, `PyCapsule_GetPointer`,
//! `PyCapsule_SetName`, `PyErr_Fetch` and `PyErr_Restore`, plus `Py_IsInitialized`,
//! `PyGILState_Ensure` and `PyGILState_Release` for [`try_with_gil`]) with plain
//! `extern "C"` declarations over an opaque [`PyObject`]. It has no pyo3 dependency, so any pyo3
//! version can use it (pass `obj.as_ptr().cast()`), and so can hand-written extension
//! modules.
//!
//! # Quick start (with pyo3)
//! ```ignore
//! use amrex_dlpack_capsule::{take_from_capsule, versioned_into_capsule, Imported};
//! use amrex_dlpack_core::ManagedTensor;
//!
//! // Export: a capsule that owns the tensor until a consumer takes it.
//! let tensor = ManagedTensor::from_vec(vec![1.0_f64, 2.0]);
//! // SAFETY: attached to the interpreter (we hold `py`).
//! let raw = unsafe { versioned_into_capsule(tensor) }.map_err(|_| PyErr::fetch(py))?;
//! // SAFETY: `raw` is a new strong reference.
//! let capsule = unsafe { Bound::from_owned_ptr(py, raw.as_ptr().cast()) };
//!
//! // Import: take the tensor out of any producer's capsule.
//! // SAFETY: attached; `capsule` is alive for the call.
//! let imported = unsafe { take_from_capsule(capsule.as_ptr().cast()) }?;
//! assert!(matches!(imported, Imported::Versioned(_)));
//! ```
//!
//! # Linking
//! Extension modules do not link `libpython`: the interpreter that loads them provides the
//! symbols. So this crate's functions can only be *called* inside a Python process; a Rust
//! test binary that does not call them links fine. Its behaviour is tested through the
//! `amrex_rs` Python module (`python-tests/test_protocol.py`).
//!
//! # Features
//! None. The crate is `no_std` + `alloc`.
#![no_std]
#![doc(test(attr(deny(warnings))))]
#![cfg_attr(docsrs, feature(doc_cfg))]

/// The README's example, compiled as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

extern crate alloc;

use amrex_dlpack_core::{
    DLManagedTensor, DLManagedTensorVersioned, DlpackError, ErrorKind, LegacyManagedTensor,
    ManagedTensor,
};
use core::ffi::{CStr, c_char, c_int, c_void};
use core::ptr::NonNull;

/// An opaque CPython object (`PyObject`); pass `pyo3_obj.as_ptr().cast()`.
pub type PyObject = c_void;

/// Name of an unused versioned capsule.
pub const VERSIONED_NAME: &CStr = c"dltensor_versioned";
/// Name of an unused legacy capsule.
pub const LEGACY_NAME: &CStr = c"dltensor";
/// Name a consumer gives a versioned capsule it took ownership of.
pub const USED_VERSIONED_NAME: &CStr = c"used_dltensor_versioned";
/// Name a consumer gives a legacy capsule it took ownership of.
pub const USED_LEGACY_NAME: &CStr = c"used_dltensor";

/// `PyCapsule_Destructor`.
type Destructor = unsafe extern "C" fn(*mut PyObject);

/// `PyGILState_STATE` (a C enum, an `int` in the ABI).
type GilState = c_int;

// All of these are in the stable ABI (`abi3`) of every CPython 3.x we support (3.9+).
// `PyErr_Fetch`/`PyErr_Restore` are deprecated since 3.12 but remain exported; their
// replacement (`PyErr_GetRaisedException`) does not exist before 3.12.
unsafe extern "C" {
    fn PyCapsule_New(
        pointer: *mut c_void,
        name: *const c_char,
        destructor: Option<Destructor>,
    ) -> *mut PyObject;
    fn PyCapsule_GetPointer(capsule: *mut PyObject, name: *const c_char) -> *mut c_void;
    fn PyCapsule_IsValid(capsule: *mut PyObject, name: *const c_char) -> c_int;
    fn PyCapsule_SetName(capsule: *mut PyObject, name: *const c_char) -> c_int;
    fn PyErr_Fetch(
        ptype: *mut *mut PyObject,
        pvalue: *mut *mut PyObject,
        ptraceback: *mut *mut PyObject,
    );
    fn PyErr_Restore(ptype: *mut PyObject, pvalue: *mut PyObject, ptraceback: *mut PyObject);
    fn Py_IsInitialized() -> c_int;
    fn PyGILState_Ensure() -> GilState;
    fn PyGILState_Release(state: GilState);
}

/// What [`take_from_capsule`] found in the capsule.
#[derive(Debug)]
pub enum Imported {
    /// A `"dltensor_versioned"` capsule (DLPack ≥ 1.0).
    Versioned(ManagedTensor<'static>),
    /// A legacy `"dltensor"` capsule.
    Legacy(LegacyManagedTensor<'static>),
}

impl Imported {
    /// The validated tensor, whichever kind it is.
    pub fn view(&self) -> amrex_dlpack_core::TensorView<'_> {
        match self {
            Imported::Versioned(t) => t.view(),
            Imported::Legacy(t) => t.view(),
        }
    }

    /// Whether the producer forbade writes (legacy tensors carry no flags: `false`).
    pub fn is_read_only(&self) -> bool {
        match self {
            Imported::Versioned(t) => t.is_read_only(),
            Imported::Legacy(_) => false,
        }
    }
}

/// Keeps the current Python error (if any) aside while a destructor runs, and puts it
/// back afterwards: destructors may run while an exception propagates.
struct SavedError {
    ptype: *mut PyObject,
    pvalue: *mut PyObject,
    ptraceback: *mut PyObject,
}

impl SavedError {
    /// # Safety
    /// The thread is attached to the interpreter (holds the GIL).
    unsafe fn fetch() -> Self {
        let mut saved = Self {
            ptype: core::ptr::null_mut(),
            pvalue: core::ptr::null_mut(),
            ptraceback: core::ptr::null_mut(),
        };
        // SAFETY: attached (caller); the three out-pointers are valid.
        unsafe { PyErr_Fetch(&mut saved.ptype, &mut saved.pvalue, &mut saved.ptraceback) };
        saved
    }
}

impl Drop for SavedError {
    fn drop(&mut self) {
        // SAFETY: created by `fetch` on this attached thread; `PyErr_Restore` steals the
        // three references `PyErr_Fetch` gave us (NULLs clear the error indicator, which
        // is what it was).
        unsafe { PyErr_Restore(self.ptype, self.pvalue, self.ptraceback) };
    }
}

/// The capsule destructor shared by both names: calls the deleter only if the capsule
/// still carries `name` (the unused one).
///
/// # Safety
/// Called by CPython with the GIL held, on a capsule made by this crate with `name`, whose
/// pointer is a `*mut H`.
unsafe fn destroy<H>(
    capsule: *mut PyObject,
    name: &CStr,
    deleter_of: fn(*mut H) -> Option<unsafe extern "C" fn(*mut H)>,
) {
    // SAFETY: CPython runs capsule destructors with the GIL held; `capsule` is the
    // capsule being destroyed; IsValid neither raises nor clears an exception.
    if unsafe { PyCapsule_IsValid(capsule, name.as_ptr()) } == 0 {
        // Renamed to "used_…": the consumer owns the tensor now (the common case).
        return;
    }
    // The deleter may run Python code (dropping the producer's reference): keep any
    // exception that is propagating aside until it is done.
    // SAFETY: the GIL is held (above).
    let _saved = unsafe { SavedError::fetch() };
    // SAFETY: the capsule is valid with this name, so GetPointer succeeds and raises nothing.
    let ptr = unsafe { PyCapsule_GetPointer(capsule, name.as_ptr()) }.cast::<H>();
    if let Some(deleter) = deleter_of(ptr) {
        // SAFETY: the capsule still owns the tensor (unused name), so nobody else calls
        // its deleter; it is called once, here, as the capsule dies. `extern "C"`
        // deleters cannot unwind into us.
        unsafe { deleter(ptr) };
    }
}

fn versioned_deleter(
    ptr: *mut DLManagedTensorVersioned,
) -> Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)> {
    if ptr.is_null() {
        return None;
    }
    // SAFETY: a non-NULL pointer stored by `versioned_into_capsule`, whose tensor is alive
    // until its deleter runs; `deleter` sits at a fixed offset in every major version.
    unsafe { (*ptr).deleter }
}

fn legacy_deleter(ptr: *mut DLManagedTensor) -> Option<unsafe extern "C" fn(*mut DLManagedTensor)> {
    if ptr.is_null() {
        return None;
    }
    // SAFETY: a non-NULL pointer stored by `legacy_into_capsule`, alive until its deleter.
    unsafe { (*ptr).deleter }
}

unsafe extern "C" fn versioned_destructor(capsule: *mut PyObject) {
    // SAFETY: registered only on capsules named "dltensor_versioned" holding a
    // `DLManagedTensorVersioned`; CPython calls it with the GIL held.
    unsafe { destroy(capsule, VERSIONED_NAME, versioned_deleter) }
}

unsafe extern "C" fn legacy_destructor(capsule: *mut PyObject) {
    // SAFETY: registered only on capsules named "dltensor" holding a `DLManagedTensor`.
    unsafe { destroy(capsule, LEGACY_NAME, legacy_deleter) }
}

/// Wraps a versioned tensor in a new `"dltensor_versioned"` capsule (a new reference).
///
/// The capsule owns the tensor until a consumer renames it; if it dies unconsumed, its
/// destructor calls the deleter once.
///
/// # Errors
/// `AllocationFailed` when `PyCapsule_New` fails; the tensor has then been dropped (its
/// deleter ran once) and a Python exception is set, as the C API does.
///
/// # Safety
/// The calling thread is attached to a live interpreter (holds the GIL).
pub unsafe fn versioned_into_capsule(
    tensor: ManagedTensor<'static>,
) -> Result<NonNull<PyObject>, DlpackError> {
    let raw = tensor.into_raw();
    // SAFETY: attached (caller); the name is a static C string; the destructor matches
    // the pointer's type.
    let capsule = unsafe {
        PyCapsule_New(
            raw.cast(),
            VERSIONED_NAME.as_ptr(),
            Some(versioned_destructor),
        )
    };
    NonNull::new(capsule).ok_or_else(|| {
        // SAFETY: `raw` came from `into_raw` just above and no capsule took it.
        drop(unsafe { ManagedTensor::from_raw(raw) });
        ErrorKind::AllocationFailed.into()
    })
}

/// Wraps a legacy tensor in a new `"dltensor"` capsule (a new reference); as
/// [`versioned_into_capsule`].
///
/// # Errors
/// As [`versioned_into_capsule`].
///
/// # Safety
/// The calling thread is attached to a live interpreter (holds the GIL).
pub unsafe fn legacy_into_capsule(
    tensor: LegacyManagedTensor<'static>,
) -> Result<NonNull<PyObject>, DlpackError> {
    let raw = tensor.into_raw();
    // SAFETY: attached (caller); static name; the destructor matches the pointer's type.
    let capsule =
        unsafe { PyCapsule_New(raw.cast(), LEGACY_NAME.as_ptr(), Some(legacy_destructor)) };
    NonNull::new(capsule).ok_or_else(|| {
        // SAFETY: `raw` came from `into_raw` just above and no capsule took it.
        drop(unsafe { LegacyManagedTensor::from_raw(raw) });
        ErrorKind::AllocationFailed.into()
    })
}

/// Takes ownership of the tensor in a `"dltensor_versioned"` or `"dltensor"` capsule made
/// by any producer, renaming the capsule to its used name first.
///
/// Ownership passes as soon as the capsule is renamed: if the tensor is then refused
/// (major version 2, bad dtype, …) its deleter has run exactly once when this returns.
///
/// # Errors
/// - `BadCapsule` for anything that is not an unused DLPack capsule (an already consumed
///   one, another capsule, any other object); nothing is freed and no Python exception
///   is set.
/// - The validation errors of [`ManagedTensor::from_raw`] / [`LegacyManagedTensor::from_raw`].
///
/// # Safety
/// The calling thread is attached to a live interpreter (holds the GIL); `capsule` points
/// to a live Python object. A DLPack capsule must hold what its name says, as the protocol
/// requires of producers.
pub unsafe fn take_from_capsule(capsule: *mut PyObject) -> Result<Imported, DlpackError> {
    if capsule.is_null() {
        return Err(ErrorKind::NullPointer("capsule").into());
    }
    // SAFETY: attached; a live object; IsValid checks the type and name and raises nothing.
    if unsafe { PyCapsule_IsValid(capsule, VERSIONED_NAME.as_ptr()) } != 0 {
        // SAFETY: valid with this name: GetPointer succeeds.
        let ptr = unsafe { PyCapsule_GetPointer(capsule, VERSIONED_NAME.as_ptr()) };
        rename(capsule, USED_VERSIONED_NAME)?;
        // SAFETY: the capsule handed us ownership (renamed), and producers put a
        // `DLManagedTensorVersioned` in "dltensor_versioned" capsules.
        return unsafe { ManagedTensor::from_raw(ptr.cast()) }.map(Imported::Versioned);
    }
    // SAFETY: as above.
    if unsafe { PyCapsule_IsValid(capsule, LEGACY_NAME.as_ptr()) } != 0 {
        // SAFETY: valid with this name: GetPointer succeeds.
        let ptr = unsafe { PyCapsule_GetPointer(capsule, LEGACY_NAME.as_ptr()) };
        rename(capsule, USED_LEGACY_NAME)?;
        // SAFETY: ownership passed (renamed); "dltensor" capsules hold a `DLManagedTensor`.
        return unsafe { LegacyManagedTensor::from_raw(ptr.cast()) }.map(Imported::Legacy);
    }
    Err(ErrorKind::BadCapsule.into())
}

/// Renames a valid capsule; fails (without taking ownership) only if CPython refuses.
fn rename(capsule: *mut PyObject, name: &'static CStr) -> Result<(), DlpackError> {
    // SAFETY: called by `take_from_capsule` on an attached thread with a valid capsule;
    // the name is static, as CPython requires (it stores the pointer).
    if unsafe { PyCapsule_SetName(capsule, name.as_ptr()) } == 0 {
        Ok(())
    } else {
        Err(ErrorKind::BadCapsule.into())
    }
}

/// Runs `f` attached to the interpreter (taking the GIL through `PyGILState_Ensure`), from
/// any thread — or returns `None` without running it once the interpreter is not
/// initialized or is finalizing (`Py_IsInitialized()` turns 0 as finalization starts).
///
/// For DLPack deleters of Python-owned memory that do not use pyo3 (which has
/// `Python::try_attach` for this). There is a window between the check and the attach
/// that no stable API closes; this is the same best effort pyo3 makes.
///
/// # Safety
/// The process hosts a CPython interpreter (this crate's symbols resolve to it), and `f`
/// does not release the GIL state it is given.
pub unsafe fn try_with_gil<R>(f: impl FnOnce() -> R) -> Option<R> {
    // SAFETY: callable at any time, from any thread.
    if unsafe { Py_IsInitialized() } == 0 {
        return None;
    }
    // SAFETY: the interpreter is initialized (checked just above, best effort).
    let state = unsafe { PyGILState_Ensure() };
    struct Release(GilState);
    impl Drop for Release {
        fn drop(&mut self) {
            // SAFETY: the state `PyGILState_Ensure` returned on this thread, released once.
            unsafe { PyGILState_Release(self.0) };
        }
    }
    let _release = Release(state);
    Some(f())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_protocols() {
        assert_eq!(VERSIONED_NAME.to_bytes(), b"dltensor_versioned");
        assert_eq!(LEGACY_NAME.to_bytes(), b"dltensor");
        assert_eq!(USED_VERSIONED_NAME.to_bytes(), b"used_dltensor_versioned");
        assert_eq!(USED_LEGACY_NAME.to_bytes(), b"used_dltensor");
    }

    #[test]
    fn deleter_lookup_tolerates_null() {
        assert!(versioned_deleter(core::ptr::null_mut()).is_none());
        assert!(legacy_deleter(core::ptr::null_mut()).is_none());
    }

    #[test]
    fn deleter_lookup_finds_the_deleter() {
        let t = ManagedTensor::from_vec(alloc::vec![1.0_f64]);
        let raw = t.into_raw();
        let d = versioned_deleter(raw);
        assert!(d.is_some());
        // SAFETY: `raw` came from `into_raw`; adopting it back frees it once.
        drop(unsafe { ManagedTensor::from_raw(raw) });
    }
}
