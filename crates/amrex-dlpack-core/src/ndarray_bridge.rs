//! The `ndarray` bridge: zero-copy export of any `ArrayBase` of a DLPack element, and
//! import of a host tensor as an `ArrayView`/`ArrayViewMut` of the right rank.
//!
//! Negative strides are handled as rust-numpy does: the view is built over the lowest
//! address with absolute strides, then the axes that were negative are inverted.

use crate::error::{DlpackError, ErrorKind};
use crate::ffi::flags;
use crate::managed::IterSpec;
use crate::view::TensorView;
use crate::{Device, DlpackElement, ManagedTensor, ToDlpack};
use alloc::vec::Vec;
use ndarray::{ArrayView, ArrayViewMut, Axis, Dimension, IxDyn, ShapeBuilder};

macro_rules! export_array {
    ($owner:expr, $a:expr, $flags:expr) => {{
        let data = if $a.is_empty() {
            core::ptr::null_mut()
        } else {
            $a.as_ptr().cast_mut()
        };
        // Copies of the extents and strides as `D` values (inline for fixed ranks and for
        // `IxDyn` up to rank 4, so no allocation), so that `$a` can move into the tensor;
        // `build` writes them straight into the export's block, its only allocation.
        let dims = $a.raw_dim();
        let mut strides = $a.raw_dim();
        for (s, &x) in strides.slice_mut().iter_mut().zip($a.strides()) {
            // ndarray itself keeps strides as the bits of an `isize` in a `usize`.
            *s = x as usize;
        }
        let spec = IterSpec {
            data: data.cast(),
            device: Device::CPU,
            dtype: A::DTYPE,
            shape: dims.slice().iter().map(|&e| e as i64),
            strides: strides.slice().iter().map(|&s| s as isize as i64),
            flags: $flags,
        };
        spec_export($owner, spec)
    }};
}

fn spec_export<'a, O, S, T>(owner: O, spec: IterSpec<S, T>) -> ManagedTensor<'a>
where
    O: Send + 'a,
    S: ExactSizeIterator<Item = i64>,
    T: ExactSizeIterator<Item = i64>,
{
    // SAFETY: callers pass the array (or its borrow) as `owner`; ndarray's pointer is the
    // first logical element and its strides (possibly negative) stay inside the array's
    // memory, which does not move with the owner and lives as long as it.
    unsafe { ManagedTensor::from_owner_iter(owner, spec) }
}

impl<A: DlpackElement, D: Dimension + Send + 'static> ToDlpack<'static> for ndarray::Array<A, D> {
    fn to_dlpack(self) -> Result<ManagedTensor<'static>, DlpackError> {
        Ok(export_array!(self, self, 0))
    }
}

impl<'a, A: DlpackElement, D: Dimension + Send + 'a> ToDlpack<'a> for ArrayView<'a, A, D> {
    fn to_dlpack(self) -> Result<ManagedTensor<'a>, DlpackError> {
        Ok(export_array!((), self, flags::READ_ONLY))
    }
}

impl<'a, A: DlpackElement, D: Dimension + Send + 'a> ToDlpack<'a> for ArrayViewMut<'a, A, D> {
    fn to_dlpack(self) -> Result<ManagedTensor<'a>, DlpackError> {
        Ok(export_array!((), self, 0))
    }
}

/// Shape, absolute strides, the lowest-address pointer and which axes to invert.
fn layout<T: DlpackElement>(
    view: &TensorView<'_>,
    ptr: *mut T,
) -> (Vec<usize>, Vec<usize>, *mut T, Vec<usize>) {
    let shape: Vec<usize> = view.shape().iter().map(|&e| e as usize).collect();
    let mut strides = Vec::with_capacity(shape.len());
    let mut inverted = Vec::new();
    let mut base = ptr;
    let empty = view.num_elements() == 0;
    for (axis, stride) in view.strides().enumerate() {
        // The stride of an axis of extent 0 or 1 never moves to another element: give it
        // 0, so that any value the producer sent (even i64::MIN, whose absolute value is
        // no isize) is harmless to ndarray.
        let moves = !empty && shape[axis] > 1;
        if stride < 0 && moves {
            // Move to the lowest address along this axis: within the validated span.
            base = base.wrapping_offset((shape[axis] as isize - 1) * stride as isize);
            inverted.push(axis);
        }
        strides.push(if moves {
            stride.unsigned_abs() as usize
        } else {
            0
        });
    }
    (shape, strides, base, inverted)
}

/// Whether two indices may reach the same element (a sufficient test, as ndarray's): sorted
/// by stride, each axis must step past everything the smaller-stride axes reach.
fn overlaps(shape: &[usize], abs_strides: &[usize]) -> bool {
    let mut axes: Vec<(usize, usize)> = abs_strides
        .iter()
        .copied()
        .zip(shape.iter().copied())
        .collect();
    crate::strides_overlap(&mut axes)
}

fn dim_of<D: Dimension>(shape: &[usize]) -> Result<D, DlpackError> {
    D::from_dimension(&IxDyn(shape)).ok_or_else(|| {
        ErrorKind::RankMismatch {
            expected: D::NDIM.map_or(-1, |n| n as i32),
            found: shape.len() as i32,
        }
        .into()
    })
}

impl<'a> ManagedTensor<'a> {
    /// Views a host tensor as an `ndarray` view of dimension `D` (`IxDyn` takes any rank).
    pub fn as_ndarray<T: DlpackElement, D: Dimension>(
        &self,
    ) -> Result<ArrayView<'_, T, D>, DlpackError> {
        tensor_view_as_ndarray(&self.view())
    }

    /// Views a writable host tensor as a mutable `ndarray` view of dimension `D`.
    pub fn as_ndarray_mut<T: DlpackElement, D: Dimension>(
        &mut self,
    ) -> Result<ArrayViewMut<'_, T, D>, DlpackError> {
        let view = self.view_mut()?;
        let ptr = view.typed_ptr::<T>()?;
        let (shape, strides, base, inverted) = layout(&view, ptr);
        if overlaps(&shape, &strides) {
            // ArrayViewMut must not reach one element through two indices.
            return Err(ErrorKind::OverlappingStrides.into());
        }
        let dim = dim_of::<D>(&shape)?;
        let st = dim_of::<D>(&strides)?;
        let mut a = if view.num_elements() == 0 {
            // SAFETY: no element is ever reached; the pointer is non-null and aligned
            // (`typed_ptr` gives a dangling one for empty tensors). Default strides: an
            // empty array has no layout to keep, and ndarray checks them for overlap.
            unsafe { ArrayViewMut::from_shape_ptr(dim, base) }
        } else {
            // SAFETY: validated span of live, host-accessible, exclusively borrowed memory;
            // the absolute strides from the lowest address reach exactly the same elements.
            unsafe { ArrayViewMut::from_shape_ptr(dim.strides(st), base) }
        };
        for axis in inverted {
            a.invert_axis(Axis(axis));
        }
        Ok(a)
    }
}

/// Views a validated host tensor as an `ndarray` view (negative strides handled).
pub fn tensor_view_as_ndarray<'a, T: DlpackElement, D: Dimension>(
    view: &TensorView<'a>,
) -> Result<ArrayView<'a, T, D>, DlpackError> {
    let ptr = view.typed_ptr::<T>()?;
    let (shape, strides, base, inverted) = layout(view, ptr);
    let dim = dim_of::<D>(&shape)?;
    let st = dim_of::<D>(&strides)?;
    // SAFETY: validated span of live, host-accessible memory that nobody writes for 'a;
    // the absolute strides from the lowest address reach exactly the same elements.
    let mut a = unsafe { ArrayView::from_shape_ptr(dim.strides(st), base.cast_const()) };
    for axis in inverted {
        a.invert_axis(Axis(axis));
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array2, Ix2, s};

    #[test]
    fn reversed_view_round_trips() {
        let a = Array2::from_shape_fn((3, 4), |(i, j)| (10 * i + j) as f64);
        let rev = a.slice(s![..;-1, ..;2]);
        let t = rev.to_dlpack().unwrap();
        assert_eq!(t.view().stride(0), -4);
        let back: ArrayView<'_, f64, Ix2> = t.as_ndarray().unwrap();
        assert_eq!(back, rev);
    }

    #[test]
    fn owned_array_moves_in() {
        let a = Array2::from_shape_fn((2, 3), |(i, j)| (i * 3 + j) as i32);
        let ptr = a.as_ptr();
        let mut t = a.to_dlpack().unwrap();
        assert_eq!(t.view().data_ptr().cast_const().cast::<i32>(), ptr);
        let mut m = t.as_ndarray_mut::<i32, Ix2>().unwrap();
        m[[1, 2]] = 99;
        assert_eq!(t.as_ndarray::<i32, IxDyn>().unwrap()[[1, 2]], 99);
        assert!(t.as_ndarray::<i32, ndarray::Ix3>().is_err());
    }
}
