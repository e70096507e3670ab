//! The DLPack glue of the bindings, by direction, with dependencies running one way:
//!
//! - [`common`] and [`abi`], below everything: the description of exported memory, host
//!   copies, error mapping, and the C layout of the DLPack 1.3 exchange API.
//! - [`export`], our containers handing tensors out: the `__dlpack__` protocol, capsule
//!   making, the keep-alive owner and the counts of live exports; [`fastcall`] installs
//!   `__dlpack__` as a vectorcall method on top of it.
//! - [`import`], adopting other producers' tensors: `from_dlpack`, capsule taking, the
//!   exchange-API consumer, [`Tensor`](import::Tensor), `to_numpy` / `to_xp`. An adopted
//!   tensor is itself re-exported, so this side builds on [`export`]; the export side never
//!   reaches into it.
//! - [`exchange`], on top: our DLPack 1.3 C exchange table, whose entries both export
//!   (`managed_tensor_from_py_object_no_sync`) and wrap a consumer's tensor
//!   (`managed_tensor_to_py_object_no_sync`).
//!
//! [`install`] puts both the vectorcall `__dlpack__` and the exchange table on a container
//! type.

pub(crate) mod abi;
pub(crate) mod common;
pub(crate) mod exchange;
pub(crate) mod export;
pub(crate) mod fastcall;
pub(crate) mod import;

use export::DlpackSource;
use pyo3::prelude::*;

/// Installs the vectorcall `__dlpack__` and the C exchange API on `T`'s type object.
pub(crate) fn install<T: DlpackSource>(py: Python<'_>) -> PyResult<()> {
    fastcall::install::<T>(py)?;
    exchange::register::<T>(py)
}
