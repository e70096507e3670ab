//! DLPack export (feature `alloc`) and import.
//!
//! Export follows pyAMReX: shape `(ncomp, nz, ny, nx)`, strides
//! `(nstride, kstride, jstride, 1)`, so a consumer's `[n, k, j, i]` is
//! `a(begin.x + i, begin.y + j, begin.z + k, n)`. Shared views export `READ_ONLY`.
//!
//! Import accepts a host tensor of rank 1 to 4; missing leading axes have extent 1, as in
//! pyAMReX (`(nx)`, `(ny, nx)`, `(nz, ny, nx)`, `(ncomp, nz, ny, nx)`).

use amrex_box::IntVect;
use amrex_dlpack_core::{DlpackElement, DlpackError, ErrorKind, TensorView, TensorViewMut};

use crate::array4::{Array4, Array4Mut};
use crate::layout::{Access, FabLayout};
use crate::raw::Raw;

#[cfg(feature = "alloc")]
mod export {
    use amrex_dlpack_core::{
        DlpackElement, DlpackError, ManagedTensor, TensorSpec, ToDlpack, flags,
    };

    use crate::array4::{Array4, Array4Mut};
    use crate::raw::Raw;

    /// Exports the elements a view's `raw` describes.
    ///
    /// # Safety
    /// `raw` satisfies the views' invariants 1–3 for `'a`; if `flags` lacks `READ_ONLY`,
    /// nothing but the consumer accesses the elements during `'a` (invariant 5).
    unsafe fn export<'a, T: DlpackElement>(
        raw: &Raw<T>,
        flags: u64,
    ) -> Result<ManagedTensor<'a>, DlpackError> {
        let (shape, strides) = (raw.dlpack_shape(), raw.dlpack_strides());
        // An empty view's dangling pointer is exported as NULL by `from_owner`.
        let spec =
            TensorSpec::host(raw.ptr.as_ptr().cast_const(), &shape, &strides).with_flags(flags);
        // SAFETY: by the views' invariant 2 every element the shape and strides reach is a
        // live, initialised, aligned `T` in host memory for 'a, which bounds the tensor;
        // the owner `()` holds nothing, so moving it moves no memory; writes are allowed
        // only without READ_ONLY, where the caller guarantees exclusivity.
        Ok(unsafe { ManagedTensor::from_owner((), &spec) })
    }

    /// Read-only export: shape `(ncomp, nz, ny, nx)`, strides `(nstride, kstride, jstride, 1)`.
    impl<'a, T: DlpackElement> ToDlpack<'a> for Array4<'a, T> {
        fn to_dlpack(self) -> Result<ManagedTensor<'a>, DlpackError> {
            // SAFETY: a shared view's invariants hold for 'a; exported READ_ONLY.
            unsafe { export(&self.raw, flags::READ_ONLY) }
        }
    }

    /// Writable export; the view is consumed, so nothing else touches the elements while
    /// the tensor lives (use [`Array4Mut::reborrow`] to keep the view).
    impl<'a, T: DlpackElement> ToDlpack<'a> for Array4Mut<'a, T> {
        fn to_dlpack(self) -> Result<ManagedTensor<'a>, DlpackError> {
            // SAFETY: the unique view moves into this call, so for 'a only the consumer
            // accesses its elements (invariant 5).
            unsafe { export(&self.raw, 0) }
        }
    }
}

/// A host view's pointer and layout for a tensor: the one importer
/// ([`FabLayout::from_dlpack`]), the typed first element, and host access.
fn import_layout<T: DlpackElement>(
    view: &TensorView<'_>,
    begin: IntVect,
    access: Access,
) -> Result<Raw<T>, DlpackError> {
    let layout = FabLayout::from_dlpack(view, begin, access)?;
    let ptr = layout.first_element::<T>(view)?;
    if !view.device().is_host_accessible() {
        return Err(ErrorKind::NotHostAccessible(view.device()).into());
    }
    Ok(Raw { ptr, layout })
}

impl<'a, T: DlpackElement> Array4<'a, T> {
    /// A shared view of a DLPack tensor, with global indices starting at `begin`.
    ///
    /// Accepted: host-accessible memory (CPU, CUDA/ROCm pinned, CUDA managed) of dtype
    /// `T`, rank 4 `(ncomp, nz, ny, nx)` — or rank 3 `(nz, ny, nx)`, 2 `(ny, nx)`, 1
    /// `(nx)` with the missing axes of extent 1, as pyAMReX does — with unit stride along
    /// the last axis (`i`) and no negative stride. Any other stride pattern is accepted,
    /// overlapping ones included.
    ///
    /// ```
    /// use amrex_array4::{Array4, IntVect};
    /// use amrex_dlpack_core::ManagedTensor;
    /// let data = [1.0_f64, 2.0, 3.0];
    /// let t = ManagedTensor::from_slice(&data);
    /// let a = Array4::<f64>::from_dlpack_view(&t.view(), IntVect::new(-1, 5, 7))?;
    /// assert_eq!(a[(1, 5, 7)], 3.0);
    /// # Ok::<(), amrex_dlpack_core::DlpackError>(())
    /// ```
    ///
    /// # Errors
    /// `RankMismatch` (rank 0 or above 4), `DtypeMismatch`, `NotHostAccessible`,
    /// `Misaligned`, `NegativeStride`, `NonUnitStride` (innermost axis),
    /// `OutsideIndexSpace` (the extents from `begin` leave the `i32` index space: an end
    /// or a length above `i32::MAX`).
    pub fn from_dlpack_view(view: &TensorView<'a>, begin: IntVect) -> Result<Self, DlpackError> {
        let raw = import_layout::<T>(view, begin, Access::ReadOnly)?;
        // Invariants: every in-bounds offset lies in the span the TensorView validated
        // (non-negative strides, first element aligned and host-accessible) (2); dangling
        // when empty (3); the TensorView's contract keeps the memory alive and unwritten
        // for 'a (4).
        // SAFETY: those are Array4's invariants 1–4, as just argued.
        Ok(unsafe { Self::from_raw(raw) })
    }
}

impl<'a, T: DlpackElement> Array4Mut<'a, T> {
    /// A mutable view of a writable DLPack tensor, with global indices starting at `begin`.
    ///
    /// The rules of [`Array4::from_dlpack_view`] apply, and additionally the tensor must
    /// not be `READ_ONLY` and distinct indices must reach distinct elements.
    ///
    /// # Errors
    /// As [`Array4::from_dlpack_view`], plus `ReadOnly`, and `OverlappingStrides` for strides that
    /// make elements overlap (e.g. a zero stride on an axis of extent > 1).
    pub fn from_dlpack_view_mut(
        view: TensorViewMut<'a>,
        begin: IntVect,
    ) -> Result<Self, DlpackError> {
        if view.is_read_only() {
            return Err(ErrorKind::ReadOnly.into());
        }
        let raw = import_layout::<T>(&view, begin, Access::Writable)?;
        // Invariants 2–3 as for `Array4::from_dlpack_view`; 5: distinct offsets (just
        // checked) and TensorViewMut's contract of exclusive access for 'a.
        // SAFETY: those are Array4Mut's invariants 1–3 and 5, as just argued.
        Ok(unsafe { Self::from_raw(raw) })
    }
}
