//! [`ToDlpack`] / [`FromDlpack`] and their implementations for the plain vector types.
//!
//! Who owns what:
//! - `ToDlpack::to_dlpack(self)` moves `self` (or the borrow it is) into the returned
//!   [`ManagedTensor`]. Owned values (`Vec<T>`, `Box<[T]>`) live in the tensor until its
//!   deleter runs; borrows (`&'a [T]`, `&'a mut [T]`) give a `ManagedTensor<'a>` that the
//!   borrow checker keeps inside the borrow.
//! - `FromDlpack::from_dlpack(tensor)` takes the tensor. On success the result either keeps
//!   the tensor (and calls the deleter when dropped) or copied out of it (and the tensor
//!   was dropped, calling the deleter). On error the tensor is dropped: the deleter runs
//!   exactly once, before `from_dlpack` returns.

use crate::error::{DlpackError, ErrorKind};
use crate::{DlpackElement, ManagedTensor};
use alloc::boxed::Box;
use alloc::vec::Vec;

/// Export to DLPack, keeping the producer's memory alive in the tensor.
pub trait ToDlpack<'a> {
    /// Exports `self`. Fails only when the data cannot be described (for example a
    /// stride that is not a whole number of elements).
    fn to_dlpack(self) -> Result<ManagedTensor<'a>, DlpackError>;
}

/// A refused import: why, and the tensor itself, not consumed, so that the caller can
/// offer it to another container (as `Vec::try_from` hands a slice back) instead of
/// losing the producer's memory to the deleter. Dropping it (or converting it into a
/// [`DlpackError`]) drops the tensor, which calls the deleter once.
#[derive(Debug)]
pub struct Refused<'a> {
    error: DlpackError,
    tensor: ManagedTensor<'a>,
}

impl<'a> Refused<'a> {
    /// The error and the tensor it refused.
    pub fn new(error: impl Into<DlpackError>, tensor: ManagedTensor<'a>) -> Self {
        Self {
            error: error.into(),
            tensor,
        }
    }

    /// Why the tensor was refused.
    pub fn error(&self) -> DlpackError {
        self.error
    }

    /// The tensor, still owned (its deleter has not run).
    pub fn into_tensor(self) -> ManagedTensor<'a> {
        self.tensor
    }

    /// The error and the tensor.
    pub fn into_parts(self) -> (DlpackError, ManagedTensor<'a>) {
        (self.error, self.tensor)
    }
}

impl core::fmt::Display for Refused<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::Display::fmt(&self.error, f)
    }
}

impl core::error::Error for Refused<'_> {}

/// The error of a refused import; the tensor is dropped (its deleter runs once).
impl From<Refused<'_>> for DlpackError {
    fn from(r: Refused<'_>) -> Self {
        r.error
    }
}

/// Import from DLPack.
pub trait FromDlpack<'a>: Sized {
    /// Adopts or copies `tensor`; see the module docs for who owns what. A refused tensor
    /// comes back unconsumed inside the error.
    ///
    /// ```
    /// use amrex_dlpack_core::{FromDlpack, ManagedTensor};
    /// let t = ManagedTensor::from_vec(vec![1.0_f64, 2.0]);
    /// // Not i32: the tensor comes back, and another container can take it.
    /// let refused = Vec::<i32>::try_from_dlpack(t).unwrap_err();
    /// let back = Vec::<f64>::try_from_dlpack(refused.into_tensor()).unwrap();
    /// assert_eq!(back, [1.0, 2.0]);
    /// ```
    ///
    /// # Errors
    /// The container's refusals, with the tensor.
    fn try_from_dlpack(tensor: ManagedTensor<'a>) -> Result<Self, Refused<'a>>;

    /// As [`try_from_dlpack`](Self::try_from_dlpack), but a refused tensor is dropped
    /// (its deleter runs once, before this returns).
    ///
    /// # Errors
    /// As `try_from_dlpack`.
    fn from_dlpack(tensor: ManagedTensor<'a>) -> Result<Self, DlpackError> {
        Self::try_from_dlpack(tensor).map_err(DlpackError::from)
    }
}

impl<T: DlpackElement> ToDlpack<'static> for Vec<T> {
    fn to_dlpack(self) -> Result<ManagedTensor<'static>, DlpackError> {
        Ok(ManagedTensor::from_vec(self))
    }
}

impl<T: DlpackElement> ToDlpack<'static> for Box<[T]> {
    fn to_dlpack(self) -> Result<ManagedTensor<'static>, DlpackError> {
        Ok(ManagedTensor::from_vec(self.into_vec()))
    }
}

impl<'a, T: DlpackElement> ToDlpack<'a> for &'a [T] {
    fn to_dlpack(self) -> Result<ManagedTensor<'a>, DlpackError> {
        Ok(ManagedTensor::from_slice(self))
    }
}

impl<'a, T: DlpackElement> ToDlpack<'a> for &'a mut [T] {
    fn to_dlpack(self) -> Result<ManagedTensor<'a>, DlpackError> {
        Ok(ManagedTensor::from_slice_mut(self))
    }
}

/// Copies a host tensor of rank 1 (any stride) into a `Vec`; other ranks are refused.
impl<'a, T: DlpackElement> FromDlpack<'a> for Vec<T> {
    fn try_from_dlpack(tensor: ManagedTensor<'a>) -> Result<Self, Refused<'a>> {
        let copied = {
            let view = tensor.view();
            view.expect_ndim(1)
                .and_then(|()| view.typed::<T>())
                .and_then(|t| t.try_to_vec())
        };
        copied.map_err(|e| Refused::new(e, tensor))
    }
}

/// As for `Vec<T>`.
impl<'a, T: DlpackElement> FromDlpack<'a> for Box<[T]> {
    fn try_from_dlpack(tensor: ManagedTensor<'a>) -> Result<Self, Refused<'a>> {
        Vec::try_from_dlpack(tensor).map(Vec::into_boxed_slice)
    }
}

impl<'a> ManagedTensor<'a> {
    /// Borrows a compact rank-1 host tensor of `T` as a slice.
    pub fn as_slice<T: DlpackElement>(&self) -> Result<&[T], DlpackError> {
        let view = self.view();
        view.expect_ndim(1)?;
        let typed = view.typed::<T>()?;
        typed.as_slice().ok_or(
            ErrorKind::NonUnitStride {
                axis: 0,
                stride: view.stride(0),
            }
            .into(),
        )
    }

    /// Borrows a compact rank-1, writable host tensor of `T` as a mutable slice.
    pub fn as_mut_slice<T: DlpackElement>(&mut self) -> Result<&mut [T], DlpackError> {
        let view = self.view_mut()?;
        view.expect_ndim(1)?;
        let stride = view.stride(0);
        view.typed_mut::<T>()?
            .into_slice()
            .ok_or(ErrorKind::NonUnitStride { axis: 0, stride }.into())
    }
}
