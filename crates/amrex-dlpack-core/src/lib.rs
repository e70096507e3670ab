//! An exact, `no_std` implementation of the DLPack 1.3 C ABI for amrex-rs.
//!
//! DLPack is the C struct every array library (NumPy, PyTorch, CuPy, dpnp, JAX) uses to
//! share memory without copying. This crate holds the ABI ([`ffi`]), element types
//! ([`DlpackElement`]), validated borrowed views ([`TensorView`]), owning handles
//! ([`ManagedTensor`], [`LegacyManagedTensor`]) with an export builder
//! ([`ManagedTensor::from_owner`]), and the [`ToDlpack`] / [`FromDlpack`] traits every
//! amrex-rs container implements.
//!
//! # Quick start
//! ```
//! # #[cfg(feature = "alloc")] {
//! use amrex_dlpack_core::{FromDlpack, ManagedTensor, ToDlpack};
//!
//! // Export a Vec without copying: the Vec moves into the tensor.
//! let v = vec![1.0_f64, 2.0, 3.0];
//! let ptr = v.as_ptr();
//! let tensor = v.to_dlpack()?;
//! assert_eq!(tensor.shape(), &[3]);
//! assert_eq!(tensor.view().data_ptr().cast_const().cast(), ptr);
//!
//! // Hand it across a C boundary and adopt it back (validation included).
//! let raw = tensor.into_raw();
//! // SAFETY: `raw` came from `into_raw` and is passed back exactly once.
//! let back = unsafe { ManagedTensor::from_raw(raw) }?;
//! assert_eq!(back.as_slice::<f64>()?, &[1.0, 2.0, 3.0]);
//!
//! // Copy out (the deleter runs once, when `back` is consumed).
//! let copy = Vec::<f64>::from_dlpack(back)?;
//! assert_eq!(copy, [1.0, 2.0, 3.0]);
//! # }
//! # Ok::<(), amrex_dlpack_core::DlpackError>(())
//! ```
//!
//! # Features
//! - `alloc`: owning handles, the export builder, `ToDlpack`/`FromDlpack` and the vector
//!   implementations. Without it: the ABI, dtypes, errors and validated views only.
//! - `std` (default): implies `alloc`; nothing else yet (the error type uses
//!   `core::error::Error`).
//! - `ndarray`: zero-copy export of `Array`/`ArrayView`/`ArrayViewMut` (negative strides
//!   included) and import as `ArrayView`/`ArrayViewMut`.
//! - `half`: `f16` and `bf16` elements.
//! - `num-complex`: `Complex<f32>` and `Complex<f64>` elements.
//!
//! # Why written by hand
//! `dlpark` covers similar ground but assumes 64-bit in its layout asserts, needs `std`,
//! allocates several times per export and pins its users to one pyo3 version. The ABI is
//! small; owning it lets the core stay `no_std` and dependency-free. The Python capsule
//! glue lives in `amrex-dlpack-capsule`, which binds the stable CPython capsule functions
//! directly and so works with any pyo3 version, or none.
#![no_std]
#![doc(test(attr(deny(warnings))))]
#![cfg_attr(docsrs, feature(doc_cfg))]
#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod device;
mod dtype;
mod error;
pub mod ffi;
#[cfg(feature = "alloc")]
mod managed;
#[cfg(feature = "ndarray")]
mod ndarray_bridge;
#[cfg(feature = "alloc")]
mod traits;
mod view;

pub use device::Device;
pub use dtype::{DataType, DlpackElement};
pub use error::{DlpackError, ErrorKind};
pub use ffi::{
    DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, DLManagedTensor, DLManagedTensorVersioned,
    DLPackVersion, DLTensor, flags,
};
#[cfg(feature = "alloc")]
pub use managed::{LegacyManagedTensor, ManagedTensor, TensorSpec};
#[cfg(feature = "ndarray")]
pub use ndarray_bridge::tensor_view_as_ndarray;
#[cfg(feature = "alloc")]
pub use traits::{FromDlpack, Refused, ToDlpack};
pub use view::{Strides, TensorView, TensorViewMut, TypedView, TypedViewMut};

/// Whether two different indices of a layout reach the same element.
///
/// `axes` holds `(|stride|, extent)` pairs in any order (it is sorted in place). Axes of
/// extent 0 make the layout empty (nothing overlaps); axes of extent 1 never move. The
/// test is the usual sufficient one: sorted by stride, each axis must step past every
/// offset the faster axes reach. Layouts it calls overlapping may, in rare interleavings,
/// be injective after all; writable views refuse them anyway, which is safe.
pub fn strides_overlap(axes: &mut [(usize, usize)]) -> bool {
    if axes.iter().any(|&(_, extent)| extent == 0) {
        return false;
    }
    axes.sort_unstable();
    // One past the highest offset the axes seen so far reach.
    let mut reach = 1usize;
    for &(stride, extent) in axes.iter() {
        if extent <= 1 {
            continue;
        }
        if stride < reach {
            return true;
        }
        match stride
            .checked_mul(extent - 1)
            .and_then(|r| r.checked_add(reach))
        {
            Some(r) => reach = r,
            None => return true,
        }
    }
    false
}

/// Compact row-major (C order) strides, in elements, for `shape`, written into `out`.
///
/// # Panics
/// If `out` is shorter than `shape`.
pub fn c_strides(shape: &[i64], out: &mut [i64]) {
    let mut acc = 1i64;
    for axis in (0..shape.len()).rev() {
        out[axis] = acc;
        acc = acc.saturating_mul(shape[axis].max(1));
    }
}
