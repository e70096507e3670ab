//! DLPack export and import.
//!
//! A matrix exports shape `(R, C)` with strides `(1, R)` (column-major) or `(C, 1)`
//! (row-major), in elements, so a consumer's `[i, j]` is element
//! `(i + START, j + START)`. Only element types with a DLPack dtype
//! (`T: DlpackElement`) implement the export traits.
//!
//! | what | how | memory |
//! |---|---|---|
//! | `&m` → tensor | [`ToDlpack`] | borrowed, `READ_ONLY` |
//! | `&mut m` → tensor | [`ToDlpack`] | borrowed, writable |
//! | `m` → tensor | [`ToDlpack`] | the matrix moves (to the heap) into the tensor |
//! | tensor → `SmallMatrix` | [`SmallMatrix::from_dlpack_copy`], [`FromDlpack`] | copied, any strides |
//! | tensor → `&SmallMatrix` | [`SmallMatrix::view_from_dlpack`] | zero-copy, strides must match |
//! | tensor → `&mut SmallMatrix` | [`SmallMatrix::view_from_dlpack_mut`] | zero-copy, writable tensors only |

use amrex_dlpack_core::{DlpackElement, DlpackError, ErrorKind, TensorView, TensorViewMut};
#[cfg(feature = "alloc")]
use amrex_dlpack_core::{FromDlpack, ManagedTensor, Refused, TensorSpec, ToDlpack, flags};

use crate::matrix::SmallMatrix;
use crate::order::Order;

/// `R` as a DLPack extent.
fn extent(n: usize) -> Result<i64, DlpackError> {
    i64::try_from(n).map_err(|_| ErrorKind::SpanOverflow.into())
}

impl<T, const R: usize, const C: usize, O: Order, const START: usize>
    SmallMatrix<T, R, C, O, START>
{
    /// The DLPack shape `(R, C)` and strides, in elements, this matrix exports with:
    /// `(1, R)` for column-major, `(C, 1)` for row-major.
    ///
    /// # Errors
    /// [`ErrorKind::SpanOverflow`] if `R` or `C` does not fit `i64`.
    pub fn dlpack_layout() -> Result<([i64; 2], [i64; 2]), DlpackError> {
        let (s0, s1) = O::strides(R, C);
        Ok(([extent(R)?, extent(C)?], [extent(s0)?, extent(s1)?]))
    }

    /// Checks rank 2 and shape `(R, C)`.
    fn check_shape(view: &TensorView<'_>) -> Result<(), DlpackError> {
        view.expect_ndim(2)?;
        for (axis, (&found, want)) in view.shape().iter().zip([R, C]).enumerate() {
            let expected = extent(want)?;
            if found != expected {
                return Err(ErrorKind::ShapeMismatch {
                    axis,
                    expected,
                    found,
                }
                .into());
            }
        }
        Ok(())
    }

    /// Checks that the tensor's strides address memory exactly as this matrix's storage
    /// does. Axes of extent 1 may carry any stride (they never move the address).
    fn check_strides(view: &TensorView<'_>) -> Result<(), DlpackError> {
        if R * C == 0 {
            return Ok(());
        }
        let (s0, s1) = O::strides(R, C);
        // The unit-stride axis first, so its error names the axis that must be 1.
        let order = if O::ROW_MAJOR {
            [(1, C, s1), (0, R, s0)]
        } else {
            [(0, R, s0), (1, C, s1)]
        };
        for (axis, n, want) in order {
            let stride = view.stride(axis);
            if n == 1 || i64::try_from(want).is_ok_and(|w| w == stride) {
                continue;
            }
            return Err(if stride < 0 {
                ErrorKind::NegativeStride { axis, stride }
            } else if want == 1 {
                ErrorKind::NonUnitStride { axis, stride }
            } else {
                ErrorKind::StrideMismatch {
                    axis,
                    expected: want as i64,
                    found: stride,
                }
            }
            .into());
        }
        Ok(())
    }

    /// Copies a rank-2, host-accessible tensor of shape `(R, C)` and dtype `T` into a
    /// new matrix: tensor element `[i, j]` becomes `(i + START, j + START)`. Any strides
    /// are accepted (negative, zero, NULL = row-major, non-compact).
    ///
    /// # Errors
    /// [`ErrorKind::RankMismatch`], [`ErrorKind::ShapeMismatch`] (naming the axis),
    /// [`ErrorKind::DtypeMismatch`], [`ErrorKind::NotHostAccessible`],
    /// [`ErrorKind::Misaligned`].
    ///
    /// ```
    /// use amrex_dlpack_core::ManagedTensor;
    /// use amrex_smallmatrix::{RowMajor, SmallMatrix};
    ///
    /// // A rank-1 tensor is refused with a rank error...
    /// let flat = [1.0_f64, 2.0, 3.0, 4.0];
    /// let t = ManagedTensor::from_slice(&flat);
    /// assert!(SmallMatrix::<f64, 2, 2>::from_dlpack_copy(&t.view()).is_err());
    /// // ...a (2, 2) one is copied.
    /// let m = SmallMatrix::<f64, 2, 2, RowMajor>::from_rows([[1., 2.], [3., 4.]]);
    /// let t = amrex_dlpack_core::ToDlpack::to_dlpack(&m)?;
    /// let c = SmallMatrix::<f64, 2, 2>::from_dlpack_copy(&t.view())?; // column-major copy
    /// assert_eq!(c[(1, 0)], 3.0);
    /// # Ok::<(), amrex_dlpack_core::DlpackError>(())
    /// ```
    pub fn from_dlpack_copy(view: &TensorView<'_>) -> Result<Self, DlpackError>
    where
        T: DlpackElement,
    {
        Self::check_shape(view)?;
        let typed = view.typed::<T>()?;
        Ok(Self::from_fn(|i, j| {
            match typed.get(&[i - START, j - START]) {
                Some(&v) => v,
                // The shape was checked to be (R, C), so every index is in bounds.
                None => unreachable!("index checked against the shape"),
            }
        }))
    }

    /// Borrows a host-accessible tensor as a matrix without copying, when its layout is
    /// exactly this matrix's storage: rank 2, shape `(R, C)`, dtype `T`, first element
    /// aligned for `T`, strides `(1, R)` (column-major) or `(C, 1)` (row-major; also
    /// NULL strides). Axes of extent 1 may have any stride.
    ///
    /// # Errors
    /// As [`from_dlpack_copy`](Self::from_dlpack_copy), plus
    /// [`ErrorKind::NonUnitStride`] (the axis that must be 1),
    /// [`ErrorKind::NegativeStride`], or [`ErrorKind::StrideMismatch`] (the other axis).
    pub fn view_from_dlpack<'a>(view: &TensorView<'a>) -> Result<&'a Self, DlpackError>
    where
        T: DlpackElement,
    {
        Self::assert_start();
        Self::check_shape(view)?;
        let ptr = view.typed_ptr::<T>()?;
        Self::check_strides(view)?;
        // SAFETY: `ptr` is aligned for `T` (typed_ptr), hence for `Self` (invariant 4);
        // the shape is (R, C) and the strides match the storage order (or the matrix is
        // empty and `ptr` is dangling-but-aligned for a zero-sized `Self`), so the
        // validated span holds exactly the R*C elements of `Self` in storage order, which
        // the view keeps alive and unwritten for 'a (TensorView invariants 2 and 6).
        Ok(unsafe { &*ptr.cast_const().cast::<Self>() })
    }

    /// As [`view_from_dlpack`](Self::view_from_dlpack), mutably. A `READ_ONLY` tensor
    /// never yields a [`TensorViewMut`] (`ManagedTensor::view_mut` refuses it with
    /// [`ErrorKind::ReadOnly`]).
    ///
    /// ```
    /// use amrex_dlpack_core::ToDlpack;
    /// use amrex_smallmatrix::SmallMatrix;
    ///
    /// let mut data = SmallMatrix::<f32, 2, 3>::zero();
    /// {
    ///     let mut t = (&mut data).to_dlpack()?;
    ///     let view = SmallMatrix::<f32, 2, 3>::view_from_dlpack_mut(t.view_mut()?)?;
    ///     view[(1, 2)] = 5.0;
    /// }
    /// assert_eq!(data[(1, 2)], 5.0);
    /// # Ok::<(), amrex_dlpack_core::DlpackError>(())
    /// ```
    pub fn view_from_dlpack_mut<'a>(view: TensorViewMut<'a>) -> Result<&'a mut Self, DlpackError>
    where
        T: DlpackElement,
    {
        Self::assert_start();
        Self::check_shape(&view)?;
        view.typed_ptr::<T>()?;
        Self::check_strides(&view)?;
        let mut typed = view.typed_mut::<T>()?;
        let ptr = typed.as_mut_ptr();
        // SAFETY: as in `view_from_dlpack`; in addition `TensorViewMut` grants exclusive,
        // writable access for its lifetime, which we consume and return as `&mut Self`.
        Ok(unsafe { &mut *ptr.cast::<Self>() })
    }
}

/// Shared export: the tensor borrows the matrix and is flagged `READ_ONLY`.
#[cfg(feature = "alloc")]
impl<'a, T: DlpackElement, const R: usize, const C: usize, O: Order, const START: usize>
    ToDlpack<'a> for &'a SmallMatrix<T, R, C, O, START>
{
    fn to_dlpack(self) -> Result<ManagedTensor<'a>, DlpackError> {
        let (shape, strides) = SmallMatrix::<T, R, C, O, START>::dlpack_layout()?;
        let data = if R * C == 0 {
            core::ptr::null()
        } else {
            self.as_ptr()
        };
        let spec = TensorSpec::host(data, &shape, &strides).with_flags(flags::READ_ONLY);
        // SAFETY: `data` points to the R*C elements the (R, C) shape and storage-order
        // strides reach (invariants 1-2), or is NULL for an empty matrix; the shared
        // borrow keeps them alive and unwritten for 'a, which bounds the tensor; the
        // consumer may only read (READ_ONLY).
        Ok(unsafe { ManagedTensor::from_owner((), &spec) })
    }
}

/// Mutable export: the tensor borrows the matrix exclusively and is writable.
#[cfg(feature = "alloc")]
impl<'a, T: DlpackElement, const R: usize, const C: usize, O: Order, const START: usize>
    ToDlpack<'a> for &'a mut SmallMatrix<T, R, C, O, START>
{
    fn to_dlpack(self) -> Result<ManagedTensor<'a>, DlpackError> {
        let (shape, strides) = SmallMatrix::<T, R, C, O, START>::dlpack_layout()?;
        let data = if R * C == 0 {
            core::ptr::null_mut()
        } else {
            self.as_mut_ptr()
        };
        let spec = TensorSpec::host(data.cast_const(), &shape, &strides);
        // SAFETY: as for the shared export; the pointer comes from the exclusive borrow,
        // which lasts 'a and bounds the tensor, so the consumer is the only writer.
        Ok(unsafe { ManagedTensor::from_owner((), &spec) })
    }
}

/// Owned export: the matrix moves (to the heap, so its address is stable) into the
/// tensor, which frees it when the deleter runs.
#[cfg(feature = "alloc")]
impl<T: DlpackElement, const R: usize, const C: usize, O: Order, const START: usize>
    ToDlpack<'static> for SmallMatrix<T, R, C, O, START>
{
    fn to_dlpack(self) -> Result<ManagedTensor<'static>, DlpackError> {
        let (shape, strides) = Self::dlpack_layout()?;
        // The inline storage would move with the owner into the tensor's allocation, so
        // it goes to the heap first. A one-element `Vec`, not a `Box`: moving a `Box`
        // asserts unique access to its contents, which would invalidate `data` under the
        // aliasing model; `Vec::as_mut_ptr` is documented to stay valid across moves.
        let mut owner = alloc::vec![self];
        let data = if R * C == 0 {
            core::ptr::null_mut()
        } else {
            owner.as_mut_ptr().cast::<T>()
        };
        let spec = TensorSpec::host(data.cast_const(), &shape, &strides);
        // SAFETY: `data` points to the matrix in the Vec's heap block (invariant 4: a
        // matrix is R*C contiguous T in storage order), which the tensor owns and which
        // does not move when the Vec does, until the deleter drops it; nobody else holds
        // the matrix, so the consumer may read and write.
        Ok(unsafe { ManagedTensor::from_owner(owner, &spec) })
    }
}

/// Copying import (see [`SmallMatrix::from_dlpack_copy`]); on success the tensor is
/// dropped (its deleter runs once) before this returns, a refused one comes back.
#[cfg(feature = "alloc")]
impl<'a, T: DlpackElement, const R: usize, const C: usize, O: Order, const START: usize>
    FromDlpack<'a> for SmallMatrix<T, R, C, O, START>
{
    fn try_from_dlpack(tensor: ManagedTensor<'a>) -> Result<Self, Refused<'a>> {
        let copied = Self::from_dlpack_copy(&tensor.view());
        copied.map_err(|e| Refused::new(e, tensor))
    }
}
