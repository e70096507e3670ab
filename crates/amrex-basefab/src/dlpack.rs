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
use crate::fab::{BaseFab, Storage, box_lengths};
use amrex_arena::{Arena, HostArena};
use amrex_box::{IndexBox, IntVect};
use amrex_dlpack_core::{
    DataType, Device, DlpackElement, DlpackError, ErrorKind, FromDlpack, ManagedTensor, TensorSpec,
    ToDlpack, flags,
};
use bytemuck::AnyBitPattern;
use core::ffi::c_void;
use core::ptr::NonNull;

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
    /// First element (NULL when the fab is empty).
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

fn to_i64(v: usize) -> Result<i64, DlpackError> {
    i64::try_from(v).map_err(|_| ErrorKind::SpanOverflow.into())
}

impl<'a, T: AnyBitPattern + DlpackElement, A: Arena> BaseFab<'a, T, A> {
    /// The DLPack description of the whole fab.
    ///
    /// # Errors
    /// `SpanOverflow` if an extent does not fit `i64` (never on 64-bit targets).
    pub fn tensor_layout(&self) -> Result<FabTensorLayout, DlpackError> {
        let [nx, ny, nz] = box_lengths(&self.bx);
        let data = if self.is_empty() {
            core::ptr::null_mut()
        } else {
            self.data_ptr().cast()
        };
        Ok(FabTensorLayout {
            data,
            device: self.device(),
            dtype: T::DTYPE,
            shape: [to_i64(self.ncomp)?, to_i64(nz)?, to_i64(ny)?, to_i64(nx)?],
            strides: [
                to_i64(self.nstride)?,
                to_i64(self.kstride)?,
                to_i64(self.jstride)?,
                1,
            ],
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

/// Extents `(ncomp, nz, ny, nx)` and strides of a rank 1–4 tensor read by pyAMReX's rule.
fn import_layout<T: DlpackElement>(
    t: &ManagedTensor<'_>,
    read_only: bool,
) -> Result<([usize; 4], [usize; 4], *mut T), DlpackError> {
    let view = t.view();
    let ndim = view.ndim();
    if !(1..=4).contains(&ndim) {
        return Err(ErrorKind::RankMismatch {
            expected: 4,
            found: ndim as i32,
        }
        .into());
    }
    if view.dtype() != T::DTYPE {
        return Err(ErrorKind::DtypeMismatch {
            expected: T::DTYPE,
            found: view.dtype(),
        }
        .into());
    }
    let mut ext = [1usize; 4];
    let mut st = [0usize; 4];
    for axis in 0..ndim {
        let (e, s) = (view.shape()[axis], view.stride(axis));
        let slot = 4 - ndim + axis;
        // Validated: extents are non-negative and their product fits usize.
        ext[slot] = e as usize;
        if e > 1 {
            if s < 0 {
                return Err(ErrorKind::NegativeStride { axis, stride: s }.into());
            }
            st[slot] = s as usize;
        }
    }
    if ext[3] > 1 && st[3] != 1 {
        return Err(ErrorKind::NonUnitStride {
            axis: ndim - 1,
            stride: st[3] as i64,
        }
        .into());
    }
    let [nc, nz, ny, nx] = ext;
    // Unused strides (extent <= 1) get compact values.
    let jstride = if ny > 1 { st[2] } else { nx };
    let kstride = if nz > 1 {
        st[1]
    } else {
        jstride.saturating_mul(ny)
    };
    let nstride = if nc > 1 {
        st[0]
    } else {
        kstride.saturating_mul(nz)
    };
    let empty = ext.contains(&0);
    if !read_only
        && !empty
        && !non_overlapping([(1, nx), (jstride, ny), (kstride, nz), (nstride, nc)])
    {
        return Err(ErrorKind::OverlappingStrides.into());
    }
    let ptr = if empty {
        NonNull::<T>::dangling().as_ptr()
    } else {
        let p = view.data_ptr().cast::<T>();
        let align = core::mem::align_of::<T>();
        if !p.addr().is_multiple_of(align) {
            return Err(ErrorKind::Misaligned {
                address: p.addr(),
                align,
            }
            .into());
        }
        p
    };
    Ok(([nc, nz, ny, nx], [jstride, kstride, nstride, 1], ptr))
}

/// Whether distinct indices reach distinct elements: sorted by stride, each axis of
/// extent > 1 steps over the whole span of the smaller ones.
fn non_overlapping(mut axes: [(usize, usize); 4]) -> bool {
    !amrex_dlpack_core::strides_overlap(&mut axes)
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
    /// length above `i32::MAX`); the tensor is dropped then
    /// (its deleter runs once).
    pub fn from_dlpack_at(tensor: ManagedTensor<'a>, begin: IntVect) -> Result<Self, DlpackError> {
        let read_only = tensor.is_read_only();
        let ([nc, nz, ny, nx], [jstride, kstride, nstride, _], ptr) =
            import_layout::<T>(&tensor, read_only)?;
        // The one index-space rule: the box the extents describe from `begin` must have
        // an i32 end and i32 lengths (invariant 0).
        let ext = [nx, ny, nz].map(|e| i64::try_from(e).unwrap_or(i64::MAX));
        let bx = IndexBox::try_from_lo_len(begin, ext)?;
        let ptr = NonNull::new(ptr).ok_or(ErrorKind::NullData)?;
        // Invariants: 0 checked above; 1–3 from the validated tensor (every in-bounds offset lies in its
        // checked span; aligned first element; dangling when empty); distinct elements
        // unless read-only (checked above); 5: host access is decided by the tensor's
        // device; 6: the importer vouched for exclusive (or, READ_ONLY, shared) access.
        Ok(Self {
            storage: Storage::Tensor { tensor, ptr },
            bx,
            ncomp: nc,
            jstride,
            kstride,
            nstride,
            read_only,
            arena: HostArena,
        })
    }
}

/// Imports with the box starting at the origin; see [`BaseFab::from_dlpack_at`].
impl<'a, T: AnyBitPattern + DlpackElement> FromDlpack<'a> for BaseFab<'a, T, HostArena> {
    fn from_dlpack(tensor: ManagedTensor<'a>) -> Result<Self, DlpackError> {
        Self::from_dlpack_at(tensor, IntVect::ZERO)
    }
}

/// So `BaseFab` can be converted with `?` in functions returning [`FabError`].
impl From<ErrorKind> for FabError {
    fn from(k: ErrorKind) -> Self {
        Self::Dlpack(k.into())
    }
}
