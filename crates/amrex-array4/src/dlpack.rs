//! DLPack export (feature `alloc`) and import.
//!
//! Export follows pyAMReX: shape `(ncomp, nz, ny, nx)`, strides
//! `(nstride, kstride, jstride, 1)`, so a consumer's `[n, k, j, i]` is
//! `a(begin.x + i, begin.y + j, begin.z + k, n)`. Shared views export `READ_ONLY`.
//!
//! Import accepts a host tensor of rank 1 to 4; missing leading axes have extent 1, as in
//! pyAMReX (`(nx)`, `(ny, nx)`, `(nz, ny, nx)`, `(ncomp, nz, ny, nx)`).

use core::ptr::NonNull;

use amrex_box::{IndexBox, IntVect};
use amrex_dlpack_core::{DlpackElement, DlpackError, ErrorKind, TensorView, TensorViewMut};

use crate::array4::{Array4, Array4Mut};
use crate::raw::Raw;

#[cfg(feature = "alloc")]
mod export {
    use amrex_dlpack_core::{
        DlpackElement, DlpackError, ErrorKind, ManagedTensor, TensorSpec, ToDlpack, flags,
    };

    use crate::array4::{Array4, Array4Mut};
    use crate::raw::Raw;

    fn to_i64(v: usize) -> Result<i64, DlpackError> {
        i64::try_from(v).map_err(|_| ErrorKind::SpanOverflow.into())
    }

    fn spec_arrays<T>(raw: &Raw<T>) -> Result<([i64; 4], [i64; 4]), DlpackError> {
        let shape = [
            to_i64(raw.ncomp)?,
            to_i64(raw.len_dir(2))?,
            to_i64(raw.len_dir(1))?,
            to_i64(raw.len_dir(0))?,
        ];
        let strides = [
            to_i64(raw.nstride)?,
            to_i64(raw.kstride)?,
            to_i64(raw.jstride)?,
            1,
        ];
        Ok((shape, strides))
    }

    /// Exports the elements a view's `raw` describes.
    ///
    /// # Safety
    /// `raw` satisfies the views' invariants 1–3 for `'a`; if `flags` lacks `READ_ONLY`,
    /// nothing but the consumer accesses the elements during `'a` (invariant 5).
    unsafe fn export<'a, T: DlpackElement>(
        raw: &Raw<T>,
        flags: u64,
    ) -> Result<ManagedTensor<'a>, DlpackError> {
        let (shape, strides) = spec_arrays(raw)?;
        let data = if raw.len() == 0 {
            core::ptr::null()
        } else {
            raw.ptr.as_ptr().cast_const()
        };
        let spec = TensorSpec::host(data, &shape, &strides).with_flags(flags);
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

/// Layout of a rank 1–4 tensor seen as `(ncomp, nz, ny, nx)`: a `Raw` with the tensor's
/// first element, after every check that does not depend on mutability.
fn import_layout<T: DlpackElement>(
    view: &TensorView<'_>,
    begin: IntVect,
) -> Result<Raw<T>, DlpackError> {
    let ndim = view.ndim();
    if !(1..=4).contains(&ndim) {
        return Err(ErrorKind::RankMismatch {
            expected: 4,
            found: ndim as i32,
        }
        .into());
    }
    // dtype, host accessibility and alignment of the first element.
    let ptr = view.typed_ptr::<T>()?;
    let shape = view.shape();
    // Pad to (ncomp, nz, ny, nx): tensor axis `a` is slot `4 - ndim + a`.
    let mut ext = [1i64; 4];
    let mut st = [0i64; 4];
    for axis in 0..ndim {
        let (e, s) = (shape[axis], view.stride(axis));
        if e > 1 && s < 0 {
            return Err(ErrorKind::NegativeStride { axis, stride: s }.into());
        }
        ext[4 - ndim + axis] = e;
        st[4 - ndim + axis] = s;
    }
    if ext[3] > 1 && st[3] != 1 {
        return Err(ErrorKind::NonUnitStride {
            axis: ndim - 1,
            stride: st[3],
        }
        .into());
    }
    // The box the spatial extents describe from `begin` must lie in the i32 index space
    // (its end and its length are i32), the one rule every importer applies.
    let end = IndexBox::try_from_lo_len(begin, [ext[3], ext[2], ext[1]])?.try_end()?;
    // Validated: extents and strides of axes with extent > 1 span at most isize::MAX.
    let as_usize =
        |v: i64| usize::try_from(v).map_err(|_| DlpackError::from(ErrorKind::SpanOverflow));
    let (nx, ny, nz, ncomp) = (
        as_usize(ext[3])?,
        as_usize(ext[2])?,
        as_usize(ext[1])?,
        as_usize(ext[0])?,
    );
    // Strides of axes with extent <= 1 are never used to address memory; give them the
    // compact value so a re-export looks tidy.
    let pick = |e: usize, s: i64, compact: usize| if e > 1 { as_usize(s) } else { Ok(compact) };
    let jstride = pick(ny, st[2], nx)?;
    let kstride = pick(nz, st[1], jstride.saturating_mul(ny))?;
    let nstride = pick(ncomp, st[0], kstride.saturating_mul(nz))?;
    let mut raw = Raw {
        ptr: NonNull::dangling(),
        begin,
        end,
        jstride,
        kstride,
        nstride,
        ncomp,
    };
    if raw.len() > 0 {
        // Non-empty tensors have a non-NULL, aligned first element (checked above).
        raw.ptr = NonNull::new(ptr).ok_or(ErrorKind::NullData)?;
    }
    Ok(raw)
}

/// `true` if distinct in-bounds indices reach distinct elements: sorted by stride, each
/// axis of extent > 1 steps over the whole span of the axes below it.
fn non_overlapping<T>(raw: &Raw<T>) -> bool {
    !amrex_dlpack_core::strides_overlap(&mut [
        (1usize, raw.len_dir(0)),
        (raw.jstride, raw.len_dir(1)),
        (raw.kstride, raw.len_dir(2)),
        (raw.nstride, raw.ncomp),
    ])
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
        let raw = import_layout::<T>(view, begin)?;
        // Invariants: every in-bounds offset lies in the span the TensorView validated
        // (non-negative strides, first element aligned and host-accessible) (2); dangling
        // when empty (3); the TensorView's contract keeps the memory alive and unwritten
        // for 'a (4).
        Ok(Self::from_raw_checked(raw))
    }

    #[inline(always)]
    fn from_raw_checked(raw: Raw<T>) -> Self {
        let a = Array4Mut::from_raw_restricted(raw);
        a.into_const()
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
        let raw = import_layout::<T>(&view, begin)?;
        if !non_overlapping(&raw) {
            return Err(ErrorKind::OverlappingStrides.into());
        }
        // Invariants 2–3 as for `Array4::from_dlpack_view`; 5: distinct offsets (just
        // checked) and TensorViewMut's contract of exclusive access for 'a.
        Ok(Self::from_raw_restricted(raw))
    }
}
