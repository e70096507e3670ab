//! The C layout of the DLPack 1.3 exchange API (`DLPackExchangeAPI`, published as a
//! `"dlpack_exchange_api"` capsule in a type's `__dlpack_c_exchange_api__`): our own table
//! (`exchange`) and the tables of other producers (`import::try_import`) both use it.

use amrex_dlpack_core::{DLDeviceType, DLManagedTensorVersioned, DLPackVersion, DLTensor};
use core::ffi::{CStr, c_char, c_int, c_void};

/// The capsule name the header prescribes.
pub(crate) const CAPSULE_NAME: &CStr = c"dlpack_exchange_api";

pub(crate) type SetError = unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char);

pub(crate) type Allocator = unsafe extern "C" fn(
    *mut DLTensor,
    *mut *mut DLManagedTensorVersioned,
    *mut c_void,
    SetError,
) -> c_int;

pub(crate) type FromPy =
    unsafe extern "C" fn(*mut c_void, *mut *mut DLManagedTensorVersioned) -> c_int;

pub(crate) type ToPy =
    unsafe extern "C" fn(*mut DLManagedTensorVersioned, *mut *mut c_void) -> c_int;

pub(crate) type DlTensorFromPy = unsafe extern "C" fn(*mut c_void, *mut DLTensor) -> c_int;

pub(crate) type WorkStream = unsafe extern "C" fn(DLDeviceType, i32, *mut *mut c_void) -> c_int;

/// `DLPackExchangeAPIHeader`.
#[repr(C)]
#[derive(Debug)]
pub(crate) struct ApiHeader {
    pub(crate) version: DLPackVersion,
    pub(crate) prev_api: *mut ApiHeader,
}

/// `DLPackExchangeAPI` (DLPack 1.3).
#[repr(C)]
#[derive(Debug)]
pub(crate) struct ExchangeApi {
    pub(crate) header: ApiHeader,
    pub(crate) managed_tensor_allocator: Option<Allocator>,
    pub(crate) managed_tensor_from_py_object_no_sync: Option<FromPy>,
    pub(crate) managed_tensor_to_py_object_no_sync: Option<ToPy>,
    pub(crate) dltensor_from_py_object_no_sync: Option<DlTensorFromPy>,
    pub(crate) current_work_stream: Option<WorkStream>,
}

#[cfg(target_pointer_width = "64")]
const _: () = {
    use core::mem::{offset_of, size_of};
    assert!(size_of::<ApiHeader>() == 16 && offset_of!(ApiHeader, prev_api) == 8);
    assert!(size_of::<ExchangeApi>() == 56);
    assert!(offset_of!(ExchangeApi, managed_tensor_allocator) == 16);
    assert!(offset_of!(ExchangeApi, managed_tensor_from_py_object_no_sync) == 24);
    assert!(offset_of!(ExchangeApi, managed_tensor_to_py_object_no_sync) == 32);
    assert!(offset_of!(ExchangeApi, dltensor_from_py_object_no_sync) == 40);
    assert!(offset_of!(ExchangeApi, current_work_stream) == 48);
};
