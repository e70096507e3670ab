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

/// Import from DLPack.
pub trait FromDlpack<'a>: Sized {
    /// Adopts or copies `tensor`; see the module docs for who owns what.
    fn from_dlpack(tensor: ManagedTensor<'a>) -> Result<Self, DlpackError>;
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
    fn from_dlpack(tensor: ManagedTensor<'a>) -> Result<Self, DlpackError> {
        let view = tensor.view();
        if view.ndim() != 1 {
            return Err(ErrorKind::RankMismatch {
                expected: 1,
                found: view.ndim() as i32,
            }
            .into());
        }
        view.typed::<T>()?.try_to_vec()
    }
}

/// As for `Vec<T>`.
impl<'a, T: DlpackElement> FromDlpack<'a> for Box<[T]> {
    fn from_dlpack(tensor: ManagedTensor<'a>) -> Result<Self, DlpackError> {
        Vec::from_dlpack(tensor).map(Vec::into_boxed_slice)
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
