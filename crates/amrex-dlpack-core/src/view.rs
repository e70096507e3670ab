//! Validated, borrowed access to a `DLTensor`.
//!
//! Validation never allocates: it walks the `ndim` extents and strides once, with checked
//! arithmetic, and stores nothing but the tensor reference and its flags.

use crate::error::{DlpackError, ErrorKind};
use crate::ffi::{DLDataTypeCode, DLTensor, flags};
use crate::{DataType, Device, DlpackElement};
use core::ffi::c_void;
use core::marker::PhantomData;

/// Checks a dtype for something this crate can lay out in memory.
#[inline]
pub(crate) fn check_dtype(dtype: DataType) -> Result<usize, DlpackError> {
    if dtype.lanes != 1 {
        return Err(ErrorKind::Lanes(dtype.lanes).into());
    }
    // Bit widths as one bit each: 4, 6, 8, 16, 32, 64, 128 -> bits 0..=6.
    const W4: u8 = 1;
    const W6: u8 = 1 << 1;
    const W8: u8 = 1 << 2;
    const W16: u8 = 1 << 3;
    const W32: u8 = 1 << 4;
    const W64: u8 = 1 << 5;
    const W128: u8 = 1 << 6;
    const PTR: u8 = if core::mem::size_of::<usize>() == 8 {
        W64
    } else {
        W32
    };
    // The widths each code of the 1.3 header allows, indexed by code.
    const ALLOWED: [u8; 18] = {
        use DLDataTypeCode as C;
        let mut t = [0u8; 18];
        t[C::INT.0 as usize] = W8 | W16 | W32 | W64;
        t[C::UINT.0 as usize] = W8 | W16 | W32 | W64;
        t[C::FLOAT.0 as usize] = W8 | W16 | W32 | W64 | W128;
        t[C::OPAQUE_HANDLE.0 as usize] = PTR;
        t[C::BFLOAT.0 as usize] = W16;
        t[C::COMPLEX.0 as usize] = W32 | W64 | W128;
        t[C::BOOL.0 as usize] = W8;
        let mut float8 = C::FLOAT8_E3M4.0;
        while float8 <= C::FLOAT8_E8M0FNU.0 {
            t[float8 as usize] = W8;
            float8 += 1;
        }
        t[C::FLOAT6_E2M3FN.0 as usize] = W6;
        t[C::FLOAT6_E3M2FN.0 as usize] = W6;
        t[C::FLOAT4_E2M1FN.0 as usize] = W4;
        t
    };
    let width = match dtype.bits {
        4 => W4,
        6 => W6,
        8 => W8,
        16 => W16,
        32 => W32,
        64 => W64,
        128 => W128,
        _ => 0,
    };
    match ALLOWED.get(usize::from(dtype.code.0)) {
        // 4, 6 and 8 bits take one (padded) byte; the rest are whole bytes. This equals
        // `dtype.size_in_bytes()` for every accepted dtype.
        Some(&allowed) if allowed & width != 0 => Ok(usize::from(dtype.bits).div_ceil(8)),
        _ => Err(ErrorKind::UnsupportedDtype(dtype).into()),
    }
}

/// Offsets (in elements, relative to the first element) of the lowest and highest element
/// a shape and strides reach, and the element count. `strides == None` means compact
/// row-major; otherwise it has `shape.len()` entries.
///
/// Refuses, in this order: a negative extent (the first one), a product of the non-zero
/// extents above `isize::MAX` (what `ndarray` and slices require, even of an empty tensor),
/// and — for a non-empty tensor — offsets that overflow `i64`.
#[inline]
pub(crate) fn span(
    shape: &[i64],
    strides: Option<&[i64]>,
) -> Result<(i64, i64, usize), DlpackError> {
    // First the extents: signs, the element count (0 if any extent is 0) and the product
    // of the non-zero extents, both saturating ("too big" survives saturation).
    let mut count = 1u64;
    for (axis, &extent) in shape.iter().enumerate() {
        if extent < 0 {
            return Err(ErrorKind::NegativeExtent { axis, extent }.into());
        }
        count = count.saturating_mul(extent as u64);
    }
    if count == 0 {
        // Rare: an empty tensor. Its non-zero extents must still multiply within isize.
        let nonzero = shape
            .iter()
            .fold(1u64, |n, &e| n.saturating_mul((e as u64).max(1)));
        if nonzero > isize::MAX as u64 {
            return Err(ErrorKind::SpanOverflow.into());
        }
        return Ok((0, 0, 0));
    }
    if count > isize::MAX as u64 {
        return Err(ErrorKind::SpanOverflow.into());
    }
    // count <= isize::MAX, so it fits usize and i64.
    let Some(strides) = strides else {
        return Ok((0, count as i64 - 1, count as usize));
    };
    // Then, for a non-empty tensor, the offsets the strides reach.
    let (mut lo, mut hi) = (0i64, 0i64);
    for (&extent, &stride) in shape.iter().zip(strides) {
        let reach = (extent - 1)
            .checked_mul(stride)
            .ok_or(ErrorKind::SpanOverflow)?;
        if reach < 0 {
            lo = lo.checked_add(reach).ok_or(ErrorKind::SpanOverflow)?;
        } else {
            hi = hi.checked_add(reach).ok_or(ErrorKind::SpanOverflow)?;
        }
    }
    Ok((lo, hi, count as usize))
}

/// Validates every field of `t` that can be checked without dereferencing `data`.
///
/// # Safety
/// When `t.ndim > 0`, `t.shape` (if not NULL) must point to `t.ndim` readable `i64`s, and
/// so must `t.strides` (if not NULL).
#[inline]
pub(crate) unsafe fn validate(t: &DLTensor) -> Result<(), DlpackError> {
    if t.ndim < 0 {
        return Err(ErrorKind::NegativeRank(t.ndim).into());
    }
    let elem = check_dtype(t.dtype)?;
    if !t.device.device_type.is_known() {
        return Err(ErrorKind::UnknownDeviceType(t.device.device_type.0).into());
    }
    // SAFETY: forwarded from the caller's obligation on `shape` and `strides`.
    let (shape, strides) = unsafe { raw_dims(t) }?;
    let (lo, hi, count) = span(shape, strides)?;
    let offset = isize::try_from(t.byte_offset).map_err(|_| ErrorKind::SpanOverflow)?;
    if count == 0 {
        return Ok(());
    }
    if t.data.is_null() {
        return Err(ErrorKind::NullData.into());
    }
    // Every byte the tensor reaches must be addressable: [first + lo*elem, first + (hi+1)*elem)
    // must lie within the address space and span at most isize::MAX bytes. `lo <= 0 <= hi`,
    // so `hi - lo` is exact in u64.
    let elems = (hi as u64).wrapping_sub(lo as u64).checked_add(1);
    let bytes = elems.and_then(|n| n.checked_mul(elem as u64));
    // <= bytes when `bytes` is Some (and then exact); otherwise unused.
    let below = lo.unsigned_abs().wrapping_mul(elem as u64);
    let start = (t.data.addr() as u64)
        .checked_add(offset as u64)
        .and_then(|first| first.checked_sub(below));
    match (bytes, start) {
        (Some(bytes), Some(start))
            if bytes <= isize::MAX as u64
                && start
                    .checked_add(bytes)
                    .is_some_and(|end| end <= usize::MAX as u64) => {}
        _ => return Err(ErrorKind::SpanOverflow.into()),
    }
    Ok(())
}

/// Shape and strides of `t` as slices (`&[]` for a scalar; strides `None` when NULL).
///
/// # Safety
/// As for [`validate`]; additionally the slices must stay valid for the borrow of `t`.
#[inline]
pub(crate) unsafe fn raw_dims(t: &DLTensor) -> Result<(&[i64], Option<&[i64]>), DlpackError> {
    let ndim = usize::try_from(t.ndim).map_err(|_| ErrorKind::NegativeRank(t.ndim))?;
    if ndim == 0 {
        return Ok((&[], None));
    }
    if t.shape.is_null() {
        return Err(ErrorKind::NullPointer("shape").into());
    }
    // SAFETY: the caller guarantees `shape` points to `ndim` readable i64 for 't.
    let shape = unsafe { core::slice::from_raw_parts(t.shape, ndim) };
    let strides = if t.strides.is_null() {
        None
    } else {
        // SAFETY: as above, for `strides`.
        Some(unsafe { core::slice::from_raw_parts(t.strides, ndim) })
    };
    Ok((shape, strides))
}

/// A validated, read-only view of a `DLTensor` and its flags.
///
/// Invariants (established by validation and kept for `'a`):
/// 1. `ndim >= 0`; `shape` has `ndim` non-negative extents; the product of the non-zero
///    ones fits `isize`.
/// 2. `strides` is NULL (compact row-major) or has `ndim` entries; every offset the
///    extents and strides reach, in bytes from the first element, fits `isize`, and the
///    addresses stay inside the address space.
/// 3. The dtype has `lanes == 1` and a whole number of bytes per element.
/// 4. The device type is one the header defines.
/// 5. `data` is non-NULL when the tensor has elements.
/// 6. Whoever handed out this view keeps the tensor's memory alive for `'a`.
#[derive(Clone, Copy, Debug)]
pub struct TensorView<'a> {
    tensor: &'a DLTensor,
    flags: u64,
}

impl<'a> TensorView<'a> {
    /// Validates `tensor` and borrows it.
    ///
    /// # Safety
    /// `tensor.shape` and `tensor.strides` (when not NULL and `ndim > 0`) point to `ndim`
    /// readable `i64` each; when the tensor has elements, the memory from `data +
    /// byte_offset` over the span its strides reach is an allocation of the tensor's device
    /// that stays valid, and is not written by anyone else, for `'a`.
    pub unsafe fn new(tensor: &'a DLTensor, flags: u64) -> Result<Self, DlpackError> {
        // SAFETY: the caller's contract covers `shape` and `strides`.
        unsafe { validate(tensor) }?;
        Ok(Self { tensor, flags })
    }

    /// Borrows a tensor that was validated before.
    #[cfg_attr(
        not(feature = "alloc"),
        expect(dead_code, reason = "only the owning handles use it")
    )]
    ///
    /// # Safety
    /// `tensor` passed [`validate`] and the contract of [`TensorView::new`] holds.
    #[inline]
    pub(crate) unsafe fn new_unchecked(tensor: &'a DLTensor, flags: u64) -> Self {
        Self { tensor, flags }
    }

    /// The underlying `DLTensor`.
    #[inline]
    pub fn raw(&self) -> &'a DLTensor {
        self.tensor
    }

    /// Where the memory lives.
    #[inline]
    pub fn device(&self) -> Device {
        self.tensor.device
    }

    /// Element type.
    #[inline]
    pub fn dtype(&self) -> DataType {
        self.tensor.dtype
    }

    /// Bytes per element.
    #[inline]
    pub fn element_size(&self) -> usize {
        // Validated: `check_dtype` succeeded, so `size_in_bytes` is `Some`.
        self.tensor.dtype.size_in_bytes().unwrap_or(1)
    }

    /// Number of dimensions.
    #[inline]
    pub fn ndim(&self) -> usize {
        self.tensor.ndim as usize
    }

    /// The `ndim` extents.
    #[inline]
    pub fn shape(&self) -> &'a [i64] {
        // SAFETY: invariant 1 (validated shape pointer, valid for 'a).
        unsafe { raw_dims(self.tensor) }
            .map(|(s, _)| s)
            .unwrap_or(&[])
    }

    /// The producer's strides as given, `None` when it sent NULL (compact row-major).
    #[inline]
    pub fn strides_raw(&self) -> Option<&'a [i64]> {
        // SAFETY: invariant 2 (validated strides pointer, valid for 'a).
        unsafe { raw_dims(self.tensor) }.ok().and_then(|(_, s)| s)
    }

    /// The stride of `axis` in elements, computing compact row-major strides for NULL
    /// (then O(ndim) per call: walk every axis with [`strides`](Self::strides) instead).
    ///
    /// # Panics
    /// If `axis >= ndim`.
    pub fn stride(&self, axis: usize) -> i64 {
        let shape = self.shape();
        assert!(
            axis < shape.len(),
            "axis {axis} out of range for a tensor of rank {}",
            shape.len()
        );
        match self.strides_raw() {
            Some(s) => s[axis],
            // Compact row-major, as `c_strides` computes it. For a non-empty tensor the
            // product of trailing extents fits (the total was checked); an empty tensor's
            // extents were never multiplied, so saturate instead of overflowing.
            None => shape[axis + 1..]
                .iter()
                .fold(1i64, |acc, &e| acc.saturating_mul(e.max(1))),
        }
    }

    /// Iterates over the strides (computed for NULL), in elements: O(ndim) for the whole
    /// walk, whatever the rank (prefer it to calling [`stride`](Self::stride) per axis,
    /// which is O(ndim) per call for NULL strides).
    pub fn strides(&self) -> Strides<'a> {
        let shape = self.shape();
        match self.strides_raw() {
            Some(s) => Strides::Given(s.iter()),
            // The compact stride of axis 0 is the product of the other extents (each at
            // least 1); invariant 1 bounds the product of the non-zero extents by
            // isize::MAX, so it is exact, and each next stride divides exactly.
            None => Strides::Compact {
                shape,
                axis: 0,
                next: shape
                    .iter()
                    .skip(1)
                    .fold(1i64, |acc, &e| acc.saturating_mul(e.max(1))),
            },
        }
    }

    /// `DLManagedTensorVersioned::flags` (0 for legacy tensors).
    #[inline]
    pub fn flags(&self) -> u64 {
        self.flags
    }

    /// Whether the producer forbids writes.
    #[inline]
    pub fn is_read_only(&self) -> bool {
        self.flags & flags::READ_ONLY != 0
    }

    /// Address of the first element (`data + byte_offset`); opaque for device memory.
    #[inline]
    pub fn data_ptr(&self) -> *mut c_void {
        // Wrapping: the address is only ever used by code that checked invariant 2.
        self.tensor
            .data
            .cast::<u8>()
            .wrapping_add(self.tensor.byte_offset as usize)
            .cast()
    }

    /// Number of elements (1 for a scalar).
    #[inline]
    pub fn num_elements(&self) -> usize {
        // Invariant 1: the product fits usize.
        self.shape().iter().map(|&e| e as usize).product()
    }

    /// Whether the layout is compact row-major (C order). Axes of extent 1 may carry any stride.
    pub fn is_c_contiguous(&self) -> bool {
        // An empty tensor is trivially compact; its extents may overflow when multiplied.
        if self.num_elements() == 0 {
            return true;
        }
        let Some(strides) = self.strides_raw() else {
            return true;
        };
        let mut expected = 1i64;
        for (&extent, &stride) in self.shape().iter().zip(strides).rev() {
            if extent != 1 && stride != expected {
                return false;
            }
            expected *= extent;
        }
        true
    }

    /// Whether the layout is compact column-major (Fortran order).
    pub fn is_f_contiguous(&self) -> bool {
        if self.num_elements() == 0 {
            return true;
        }
        let mut expected = 1i64;
        for (&extent, stride) in self.shape().iter().zip(self.strides()) {
            if extent != 1 && stride != expected {
                return false;
            }
            expected *= extent;
        }
        true
    }

    /// Lowest and highest element offset the tensor reaches, relative to the first element.
    pub fn offset_range(&self) -> (i64, i64) {
        // Invariant 2: validated, cannot fail.
        span(self.shape(), self.strides_raw())
            .map(|(lo, hi, _)| (lo, hi))
            .unwrap_or((0, 0))
    }

    /// Checks that the device is `expected`.
    pub fn expect_device(&self, expected: Device) -> Result<(), DlpackError> {
        if self.device() == expected {
            Ok(())
        } else {
            Err(ErrorKind::DeviceMismatch {
                expected,
                found: self.device(),
            }
            .into())
        }
    }

    /// Checks that the rank is `expected`.
    pub fn expect_ndim(&self, expected: usize) -> Result<(), DlpackError> {
        if self.ndim() == expected {
            Ok(())
        } else {
            Err(ErrorKind::RankMismatch {
                expected: expected as i32,
                found: self.tensor.ndim,
            }
            .into())
        }
    }

    /// Typed read access: checks dtype, host accessibility and alignment.
    pub fn typed<T: DlpackElement>(&self) -> Result<TypedView<'a, T>, DlpackError> {
        let ptr = self.typed_ptr::<T>()?;
        Ok(TypedView {
            view: *self,
            ptr,
            _marker: PhantomData,
        })
    }

    /// Checks `T` against dtype, host accessibility and alignment, and returns the typed
    /// first-element pointer (dangling-but-aligned for an empty tensor).
    pub fn typed_ptr<T: DlpackElement>(&self) -> Result<*mut T, DlpackError> {
        if self.dtype() != T::DTYPE {
            return Err(ErrorKind::DtypeMismatch {
                expected: T::DTYPE,
                found: self.dtype(),
            }
            .into());
        }
        if !self.device().is_host_accessible() {
            return Err(ErrorKind::NotHostAccessible(self.device()).into());
        }
        if self.num_elements() == 0 {
            return Ok(core::ptr::NonNull::<T>::dangling().as_ptr());
        }
        let ptr = self.data_ptr().cast::<T>();
        let align = core::mem::align_of::<T>();
        if !ptr.addr().is_multiple_of(align) {
            return Err(ErrorKind::Misaligned {
                address: ptr.addr(),
                align,
            }
            .into());
        }
        Ok(ptr)
    }

    /// Element offset of a multi-index, or `None` if out of bounds or of the wrong rank.
    pub fn offset_of(&self, index: &[usize]) -> Option<isize> {
        let shape = self.shape();
        if index.len() != shape.len() {
            return None;
        }
        let mut off = 0isize;
        for ((&i, &extent), stride) in index.iter().zip(shape).zip(self.strides()) {
            // Compare unsigned: `i as i64` would wrap an index above i64::MAX to a negative
            // number that passes `< extent` and reads out of bounds.
            if i as u64 >= extent as u64 {
                return None;
            }
            // In bounds, so the product and the running sum stay within the validated
            // span (they fit isize).
            off += i as isize * stride as isize;
        }
        Some(off)
    }
}

/// The strides of a [`TensorView`] in elements, made by [`TensorView::strides`].
#[derive(Clone, Debug)]
pub enum Strides<'a> {
    /// The producer's strides.
    Given(core::slice::Iter<'a, i64>),
    /// Compact row-major strides for NULL, computed on the fly.
    Compact {
        /// The extents.
        shape: &'a [i64],
        /// The next axis.
        axis: usize,
        /// Its stride.
        next: i64,
    },
}

impl Iterator for Strides<'_> {
    type Item = i64;

    #[inline]
    fn next(&mut self) -> Option<i64> {
        match self {
            Self::Given(it) => it.next().copied(),
            Self::Compact { shape, axis, next } => {
                if *axis >= shape.len() {
                    return None;
                }
                let s = *next;
                *axis += 1;
                if let Some(&e) = shape.get(*axis) {
                    // `next` is the product of the extents after `axis - 1`, which
                    // includes max(e, 1): the division is exact.
                    *next = s / e.max(1);
                }
                Some(s)
            }
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match self {
            Self::Given(it) => it.len(),
            Self::Compact { shape, axis, .. } => shape.len().saturating_sub(*axis),
        };
        (n, Some(n))
    }
}

impl ExactSizeIterator for Strides<'_> {}

impl core::iter::FusedIterator for Strides<'_> {}

/// Typed, host-side, read-only access to a validated tensor.
#[derive(Clone, Copy, Debug)]
pub struct TypedView<'a, T> {
    view: TensorView<'a>,
    ptr: *mut T,
    _marker: PhantomData<&'a T>,
}

// SAFETY: a TypedView only reads `T: Sync` data through shared access.
unsafe impl<T: Sync> Send for TypedView<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for TypedView<'_, T> {}

impl<'a, T: DlpackElement> TypedView<'a, T> {
    /// The untyped view.
    pub fn view(&self) -> &TensorView<'a> {
        &self.view
    }

    /// Pointer to the first element (dangling and aligned when empty).
    pub fn as_ptr(&self) -> *const T {
        self.ptr
    }

    /// The element at a multi-index.
    pub fn get(&self, index: &[usize]) -> Option<&'a T> {
        let off = self.view.offset_of(index)?;
        // SAFETY: `offset_of` checked the index against the shape, so the element lies in
        // the validated span of live, host-accessible memory (TensorView invariants 2, 6).
        Some(unsafe { &*self.ptr.wrapping_offset(off) })
    }

    /// The data as a slice when compact row-major.
    pub fn as_slice(&self) -> Option<&'a [T]> {
        if !self.view.is_c_contiguous() {
            return None;
        }
        // SAFETY: compact row-major with `num_elements` elements starting at the aligned
        // first element, alive and unaliased by writers for 'a (invariants 2, 6).
        Some(unsafe { core::slice::from_raw_parts(self.ptr, self.view.num_elements()) })
    }

    /// Calls `f` on every element in row-major logical order. O(number of elements +
    /// ndim), whatever the rank.
    pub fn for_each(&self, mut f: impl FnMut(&'a T)) {
        if self.view.num_elements() == 0 {
            return;
        }
        // Only axes of extent > 1 move: a non-empty tensor has at most 63 of them, since
        // the product of its extents is at most isize::MAX < 2^63 (invariant 1). Keep
        // (extent, stride) of those, in order.
        let mut axes = [(0usize, 0isize); 64];
        let mut n = 0;
        for (&e, s) in self.view.shape().iter().zip(self.view.strides()) {
            if e > 1 {
                axes[n] = (e as usize, s as isize);
                n += 1;
            }
        }
        let axes = &axes[..n];
        let mut index = [0usize; 64];
        let mut off = 0isize;
        loop {
            // SAFETY: `index` is always in bounds, so `off` is the offset of an element
            // inside the validated span of live, host-accessible memory (invariants 2, 6).
            f(unsafe { &*self.ptr.wrapping_offset(off) });
            // Odometer over the moving axes, last fastest. The offset only ever moves to
            // an in-bounds element's: step, or go back to 0 on this axis and carry.
            let mut axis = n;
            loop {
                if axis == 0 {
                    return;
                }
                axis -= 1;
                let (extent, stride) = axes[axis];
                if index[axis] + 1 < extent {
                    index[axis] += 1;
                    off += stride;
                    break;
                }
                off -= stride * index[axis] as isize;
                index[axis] = 0;
            }
        }
    }

    /// Copies the elements into a vector in row-major logical order.
    #[cfg(feature = "alloc")]
    ///
    /// # Panics
    /// If the allocation fails (as `Vec::with_capacity`); see
    /// [`try_to_vec`](Self::try_to_vec).
    pub fn to_vec(&self) -> alloc::vec::Vec<T> {
        match self.try_to_vec() {
            Ok(v) => v,
            Err(e) => panic!("TypedView::to_vec: {e}"),
        }
    }

    /// Copies the elements into a vector in row-major logical order, with a fallible
    /// allocation: a tensor whose strides repeat elements (a zero stride) can describe far
    /// more elements than the bytes behind it, and copying it must not abort the process.
    ///
    /// # Errors
    /// [`ErrorKind::AllocationFailed`] if the vector cannot be allocated.
    #[cfg(feature = "alloc")]
    pub fn try_to_vec(&self) -> Result<alloc::vec::Vec<T>, DlpackError> {
        let mut out = alloc::vec::Vec::new();
        out.try_reserve_exact(self.view.num_elements())
            .map_err(|_| ErrorKind::AllocationFailed)?;
        // Within the reserved capacity: push never reallocates.
        self.for_each(|x| out.push(*x));
        Ok(out)
    }
}

/// A validated view with exclusive access: obtained from an owning handle that is not
/// `READ_ONLY`, or from a caller who promises exclusivity.
#[derive(Debug)]
pub struct TensorViewMut<'a> {
    view: TensorView<'a>,
}

impl<'a> TensorViewMut<'a> {
    /// Validates `tensor` for writing: refuses `READ_ONLY`.
    ///
    /// # Safety
    /// As [`TensorView::new`], and nobody else reads or writes the memory for `'a`.
    pub unsafe fn new(tensor: &'a DLTensor, flags: u64) -> Result<Self, DlpackError> {
        // SAFETY: forwarded.
        let view = unsafe { TensorView::new(tensor, flags) }?;
        Self::from_view(view)
    }

    pub(crate) fn from_view(view: TensorView<'a>) -> Result<Self, DlpackError> {
        if view.is_read_only() {
            return Err(ErrorKind::ReadOnly.into());
        }
        Ok(Self { view })
    }

    /// Typed mutable access (dtype, host, alignment checked).
    pub fn typed_mut<T: DlpackElement>(self) -> Result<TypedViewMut<'a, T>, DlpackError> {
        let ptr = self.view.typed_ptr::<T>()?;
        Ok(TypedViewMut {
            view: self.view,
            ptr,
            _marker: PhantomData,
        })
    }

    /// Read-only view of the same tensor.
    pub fn as_view(&self) -> &TensorView<'a> {
        &self.view
    }

    /// Converts into the read-only view, keeping the lifetime.
    pub fn into_view(self) -> TensorView<'a> {
        self.view
    }
}

impl<'a> core::ops::Deref for TensorViewMut<'a> {
    type Target = TensorView<'a>;
    fn deref(&self) -> &TensorView<'a> {
        &self.view
    }
}

/// Typed, host-side, exclusive access to a validated writable tensor.
#[derive(Debug)]
pub struct TypedViewMut<'a, T> {
    view: TensorView<'a>,
    ptr: *mut T,
    _marker: PhantomData<&'a mut T>,
}

// SAFETY: exclusive access to `T: Send` data.
unsafe impl<T: Send> Send for TypedViewMut<'_, T> {}
// SAFETY: shared access to a TypedViewMut only reads.
unsafe impl<T: Sync> Sync for TypedViewMut<'_, T> {}

impl<'a, T: DlpackElement> TypedViewMut<'a, T> {
    /// The untyped view.
    pub fn view(&self) -> &TensorView<'a> {
        &self.view
    }

    /// Pointer to the first element (dangling and aligned when empty).
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.ptr
    }

    /// The element at a multi-index.
    pub fn get_mut(&mut self, index: &[usize]) -> Option<&mut T> {
        let off = self.view.offset_of(index)?;
        // SAFETY: in bounds of the validated span; exclusive access for 'a (TensorViewMut).
        Some(unsafe { &mut *self.ptr.wrapping_offset(off) })
    }

    /// The element at a multi-index.
    pub fn get(&self, index: &[usize]) -> Option<&T> {
        let off = self.view.offset_of(index)?;
        // SAFETY: in bounds of the validated span.
        Some(unsafe { &*self.ptr.wrapping_offset(off) })
    }

    /// The data as a mutable slice when compact row-major.
    pub fn into_slice(self) -> Option<&'a mut [T]> {
        if !self.view.is_c_contiguous() {
            return None;
        }
        // SAFETY: compact, aligned, live and exclusively ours for 'a.
        Some(unsafe { core::slice::from_raw_parts_mut(self.ptr, self.view.num_elements()) })
    }
}
