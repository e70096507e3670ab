//! DLPack export and import of fabs.
//!
//! Export (any device, zero copy): shape `(ncomp, nz, ny, nx)`, strides
//! `(nstride, kstride, jstride, 1)` as pyAMReX, so a consumer's `[n, k, j, i]` is
//! `fab(lo.x + i, lo.y + j, lo.z + k, n)`. The device is the arena's (or the imported
//! tensor's). An owned fab moves into the tensor; `&fab` exports `READ_ONLY`; `&mut fab`
//! exports writable.
//!
//! Import: a tensor of rank 1–4 read as `(nx)`, `(ny, nx)`, `(nz, ny, nx)` or
//! `(ncomp, nz, ny, nx)` (pyAMReX's rule: missing leading axes have extent 1), of the
//! fab's dtype, on any device, with unit stride along `i` and no negative stride, becomes
//! a non-owning fab whose box starts at `begin`. The fab keeps the tensor and drops it
//! (calling the producer's deleter once) when it drops. `READ_ONLY` tensors give
//! read-only fabs.

use crate::FabError;
use crate::fab::{BaseFab, Storage};
use amrex_arena::{Arena, HostArena};
use amrex_array4::{Access, FabLayout};
use amrex_box::IntVect;
use amrex_dlpack_core::{
    DataType, Device, DlpackElement, DlpackError, ErrorKind, FromDlpack, ManagedTensor, Refused,
    TensorSpec, ToDlpack, flags,
};
use bytemuck::AnyBitPattern;
use core::ffi::c_void;

/// What a DLPack export of a fab describes: everything but the owner. For exporters that
/// keep the fab alive their own way (the Python bindings).
#[derive(Clone, Copy, Debug)]
pub struct FabTensorLayout {
    data: *mut c_void,
    device: Device,
    dtype: DataType,
    shape: [i64; 4],
    strides: [i64; 4],
}

// SAFETY: a plain description; it grants no access by itself.
unsafe impl Send for FabTensorLayout {}
// SAFETY: as above.
unsafe impl Sync for FabTensorLayout {}

impl FabTensorLayout {
    /// First element (dangling, never dereferenced, when the fab has no element; the
    /// export builder writes NULL for such a tensor).
    pub fn data(&self) -> *mut c_void {
        self.data
    }
    /// Device.
    pub fn device(&self) -> Device {
        self.device
    }
    /// `(ncomp, nz, ny, nx)`.
    pub fn shape(&self) -> &[i64; 4] {
        &self.shape
    }
    /// `(nstride, kstride, jstride, 1)`.
    pub fn strides(&self) -> &[i64; 4] {
        &self.strides
    }
    /// The export spec with `flags`.
    pub fn spec(&self, flags: u64) -> TensorSpec<'_> {
        TensorSpec {
            data: self.data,
            device: self.device,
            dtype: self.dtype,
            shape: &self.shape,
            strides: &self.strides,
            flags,
        }
    }
}

impl<'a, T: AnyBitPattern + DlpackElement, A: Arena> BaseFab<'a, T, A> {
    /// The DLPack description of the whole fab.
    ///
    /// # Errors
    /// `SpanOverflow` if an extent does not fit `i64` (never on 64-bit targets).
    pub fn tensor_layout(&self) -> Result<FabTensorLayout, DlpackError> {
        Ok(FabTensorLayout {
            data: self.data_ptr().cast(),
            device: self.device(),
            dtype: T::DTYPE,
            shape: self.layout.dlpack_shape(),
            strides: self.layout.dlpack_strides(),
        })
    }
}

/// The fab moves into the tensor (its memory is freed, or its borrow or imported tensor
/// released, when the consumer calls the deleter). A read-only fab exports `READ_ONLY`.
impl<'a, T, A> ToDlpack<'a> for BaseFab<'a, T, A>
where
    T: AnyBitPattern + DlpackElement,
    A: Arena + 'a,
{
    fn to_dlpack(self) -> Result<ManagedTensor<'a>, DlpackError> {
        let l = self.tensor_layout()?;
        let f = if self.read_only { flags::READ_ONLY } else { 0 };
        // SAFETY: the layout describes the fab's elements (invariant 2) on its device;
        // the fab moves into the tensor as its owner, and moving it does not move the
        // elements (a heap buffer, a borrow, or an imported tensor's memory); nobody else
        // reaches them afterwards; READ_ONLY when the fab may not be written.
        Ok(unsafe { ManagedTensor::from_owner(self, &l.spec(f)) })
    }
}

/// Read-only export of a borrowed fab (`READ_ONLY`).
impl<'b, T, A> ToDlpack<'b> for &'b BaseFab<'_, T, A>
where
    T: AnyBitPattern + DlpackElement,
    A: Arena,
{
    fn to_dlpack(self) -> Result<ManagedTensor<'b>, DlpackError> {
        let l = self.tensor_layout()?;
        // SAFETY: the shared borrow keeps the elements alive and unwritten for 'b, which
        // bounds the tensor; READ_ONLY.
        Ok(unsafe { ManagedTensor::from_owner((), &l.spec(flags::READ_ONLY)) })
    }
}

/// Writable export of an exclusively borrowed fab; refused (`ReadOnly`) for read-only fabs.
impl<'b, T, A> ToDlpack<'b> for &'b mut BaseFab<'_, T, A>
where
    T: AnyBitPattern + DlpackElement,
    A: Arena,
{
    fn to_dlpack(self) -> Result<ManagedTensor<'b>, DlpackError> {
        if self.read_only {
            return Err(ErrorKind::ReadOnly.into());
        }
        let l = self.tensor_layout()?;
        // SAFETY: the exclusive borrow gives the consumer the only access for 'b; distinct
        // indices reach distinct elements (invariant 2, not read-only); any bits are a
        // valid `T` (`AnyBitPattern`).
        Ok(unsafe { ManagedTensor::from_owner((), &l.spec(0)) })
    }
}

impl<'a, T: AnyBitPattern + DlpackElement> BaseFab<'a, T, HostArena> {
    /// A non-owning fab over an imported tensor, with its box starting at `begin` (see the
    /// module docs for the accepted layouts). The tensor's memory may be on any device;
    /// host operations on a device fab are refused, never attempted.
    ///
    /// # Errors
    /// `RankMismatch`, `DtypeMismatch`, `NegativeStride`, `NonUnitStride` (along `i`),
    /// `Misaligned`, `OverlappingStrides` (on a writable tensor) or
    /// `OutsideIndexSpace` (the box the extents describe from `begin` has an end or a
    /// length above `i32::MAX`); the tensor is dropped then (its deleter runs once). Use
    /// [`try_from_dlpack_at`](Self::try_from_dlpack_at) to get it back instead.
    pub fn from_dlpack_at(tensor: ManagedTensor<'a>, begin: IntVect) -> Result<Self, DlpackError> {
        Self::try_from_dlpack_at(tensor, begin).map_err(DlpackError::from)
    }

    /// As [`from_dlpack_at`](Self::from_dlpack_at), handing a refused tensor back
    /// unconsumed inside the error.
    ///
    /// # Errors
    /// As `from_dlpack_at`.
    pub fn try_from_dlpack_at(
        tensor: ManagedTensor<'a>,
        begin: IntVect,
    ) -> Result<Self, Refused<'a>> {
        let read_only = tensor.is_read_only();
        let checked = {
            let view = tensor.view();
            // The one importer of box layouts (rank, strides, index space, overlap for a
            // writable tensor), then the typed first element; any device.
            FabLayout::from_dlpack(
                &view,
                begin,
                if read_only {
                    Access::ReadOnly
                } else {
                    Access::Writable
                },
            )
            .and_then(|l| Ok((l, l.first_element::<T>(&view)?)))
        };
        let (layout, ptr) = match checked {
            Ok(c) => c,
            Err(e) => return Err(Refused::new(e, tensor)),
        };
        let bx = layout.index_box();
        // Invariants: 0 by `FabLayout::from_dlpack`; 1–3 from the validated tensor (every
        // in-bounds offset lies in its checked span; aligned first element; dangling when
        // empty); distinct elements unless read-only (checked above); 5: host access is
        // decided by the tensor's device; 6: the importer vouched for exclusive (or,
        // READ_ONLY, shared) access.
        Ok(Self {
            storage: Storage::Tensor { tensor, ptr },
            bx,
            layout,
            read_only,
            arena: HostArena,
        })
    }

    /// The tensor an imported fab adopted, handed back (its deleter has not run); a fab
    /// that did not come from a tensor is returned unchanged.
    ///
    /// # Errors
    /// `self`, when the fab owns or borrows memory instead.
    pub fn into_tensor(self) -> Result<ManagedTensor<'a>, Self> {
        match self.storage {
            Storage::Tensor { tensor, .. } => Ok(tensor),
            storage => Err(Self { storage, ..self }),
        }
    }
}

/// Imports with the box starting at the origin; see [`BaseFab::from_dlpack_at`].
impl<'a, T: AnyBitPattern + DlpackElement> FromDlpack<'a> for BaseFab<'a, T, HostArena> {
    fn try_from_dlpack(tensor: ManagedTensor<'a>) -> Result<Self, Refused<'a>> {
        Self::try_from_dlpack_at(tensor, IntVect::ZERO)
    }
}

/// So `BaseFab` can be converted with `?` in functions returning [`FabError`].
impl From<ErrorKind> for FabError {
    fn from(k: ErrorKind) -> Self {
        Self::Dlpack(k.into())
    }
}
