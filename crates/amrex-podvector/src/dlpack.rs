//! DLPack export and import for [`PodVector`].
//!
//! - Export (`ToDlpack`): shape `(len,)`, stride `(1,)`, the arena's device (also when
//!   empty, with a NULL data pointer). `PodVector` by value moves into the tensor (the
//!   deleter frees it through its arena); `&PodVector` exports `READ_ONLY`;
//!   `&mut PodVector` exports writable. Device vectors export device pointers.
//! - Import: [`DlpackVector`] adopts a rank-1, unit-stride host tensor without copying and
//!   calls its deleter when dropped; [`PodVector::from_dlpack_copy`] copies any rank-1
//!   host tensor (any stride) into a new vector on an arena (pyAMReX's `from_array`).

use crate::PodVector;
use amrex_arena::{Arena, HostArena};
use amrex_dlpack_core::{
    Device, DlpackElement, DlpackError, ErrorKind, FromDlpack, ManagedTensor, Refused, TensorSpec,
    ToDlpack, flags,
};
use bytemuck::AnyBitPattern;
use core::{ffi::c_void, fmt, marker::PhantomData, ops::Deref};

fn spec_parts<T, A: Arena>(v: &PodVector<T, A>) -> Result<(*mut c_void, [i64; 1]), DlpackError>
where
    T: AnyBitPattern + DlpackElement,
{
    let len = i64::try_from(v.len()).map_err(|_| DlpackError::new(ErrorKind::SpanOverflow))?;
    // An empty vector's dangling pointer is exported as NULL by `from_owner`.
    Ok((v.as_ptr().cast_mut().cast(), [len]))
}

fn spec<'s, T: DlpackElement>(
    data: *mut c_void,
    device: Device,
    shape: &'s [i64; 1],
) -> TensorSpec<'s> {
    TensorSpec {
        data,
        device,
        dtype: T::DTYPE,
        shape,
        strides: &[1],
        flags: 0,
    }
}

/// Moves the vector into the tensor; the tensor's deleter drops it (freeing through the
/// arena).
impl<'a, T, A> ToDlpack<'a> for PodVector<T, A>
where
    T: AnyBitPattern + DlpackElement,
    A: Arena + 'a,
{
    fn to_dlpack(self) -> Result<ManagedTensor<'a>, DlpackError> {
        let (data, shape) = spec_parts(&self)?;
        let spec = spec::<T>(data, self.device(), &shape);
        // SAFETY: `data` is the vector's buffer of `len` initialised `T` on the arena's
        // device (NULL when empty); the vector moves into the tensor as its owner, and its
        // heap buffer does not move with it; nobody else reaches the buffer afterwards.
        Ok(unsafe { ManagedTensor::from_owner(self, &spec) })
    }
}

/// Read-only export of a borrowed vector (`READ_ONLY`).
impl<'a, T, A> ToDlpack<'a> for &'a PodVector<T, A>
where
    T: AnyBitPattern + DlpackElement,
    A: Arena,
{
    fn to_dlpack(self) -> Result<ManagedTensor<'a>, DlpackError> {
        let (data, shape) = spec_parts(self)?;
        let spec = spec::<T>(data, self.device(), &shape).with_flags(flags::READ_ONLY);
        // SAFETY: the shared borrow keeps the buffer alive and unchanged for `'a`; the
        // tensor is flagged READ_ONLY so consumers only read.
        Ok(unsafe { ManagedTensor::from_owner((), &spec) })
    }
}

/// Writable export of an exclusively borrowed vector.
impl<'a, T, A> ToDlpack<'a> for &'a mut PodVector<T, A>
where
    T: AnyBitPattern + DlpackElement,
    A: Arena,
{
    fn to_dlpack(self) -> Result<ManagedTensor<'a>, DlpackError> {
        let (data, shape) = spec_parts(self)?;
        let spec = spec::<T>(data, self.device(), &shape);
        // SAFETY: the exclusive borrow keeps the buffer alive for `'a` and gives the
        // consumer the only access to it (no length change can happen meanwhile).
        Ok(unsafe { ManagedTensor::from_owner((), &spec) })
    }
}

/// Checks that `tensor` is a rank-1 tensor of `T` and returns `(data, len)`; `data` is
/// dangling-aligned for an empty tensor. `host` additionally requires host access.
fn rank1<T: DlpackElement>(
    tensor: &ManagedTensor<'_>,
    contiguous: bool,
) -> Result<(*mut T, usize), DlpackError> {
    let view = tensor.view();
    view.expect_ndim(1)?;
    let len = view.num_elements();
    if contiguous && len > 1 && view.stride(0) != 1 {
        return Err(ErrorKind::NonUnitStride {
            axis: 0,
            stride: view.stride(0),
        }
        .into());
    }
    Ok((view.typed_ptr::<T>()?, len))
}

/// A rank-1 host tensor adopted without copying: derefs to `[T]`, and calls the
/// producer's deleter when dropped.
///
/// Accepts host-accessible devices only (`kDLCPU`, `kDLCUDAHost`, `kDLROCMHost`,
/// `kDLCUDAManaged`), unit stride (any stride for length ≤ 1), the exact dtype of `T`, and
/// an aligned first element. Writing needs a tensor without `READ_ONLY`:
/// [`as_mut_slice`](Self::as_mut_slice).
///
/// ```
/// use amrex_dlpack_core::{FromDlpack, ToDlpack};
/// use amrex_podvector::{DlpackVector, PodVector};
///
/// let v = PodVector::from_slice(&[1.0f64, 2.0, 3.0]);
/// let tensor = v.to_dlpack()?; // the vector moves into the tensor
/// let adopted = DlpackVector::<f64>::from_dlpack(tensor)?;
/// assert_eq!(&*adopted, &[1.0, 2.0, 3.0]);
/// # Ok::<(), amrex_dlpack_core::DlpackError>(())
/// ```
//
// Invariants:
// 1. `tensor` owns a validated rank-1 tensor of `T` on a host-accessible device.
// 2. `data` points to its `len` contiguous, aligned elements (dangling when `len == 0`),
//    alive until `tensor` drops.
// 3. Mutable access is handed out only when the tensor is not `READ_ONLY`.
pub struct DlpackVector<'a, T> {
    tensor: ManagedTensor<'a>,
    data: *mut T,
    len: usize,
    _marker: PhantomData<T>,
}

// SAFETY: the tensor is `Send`; the elements are `Send` data owned through it.
unsafe impl<T: Send> Send for DlpackVector<'_, T> {}
// SAFETY: shared access only reads.
unsafe impl<T: Sync> Sync for DlpackVector<'_, T> {}

impl<'a, T: DlpackElement> DlpackVector<'a, T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The producer's device.
    pub fn device(&self) -> Device {
        self.tensor.device()
    }

    /// Whether the producer forbids writing.
    pub fn is_read_only(&self) -> bool {
        self.tensor.is_read_only()
    }

    /// The elements.
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: invariant 2.
        unsafe { core::slice::from_raw_parts(self.data, self.len) }
    }

    /// The elements, mutably; refused for `READ_ONLY` tensors.
    ///
    /// # Errors
    /// [`ErrorKind::ReadOnly`].
    pub fn as_mut_slice(&mut self) -> Result<&mut [T], DlpackError> {
        if self.is_read_only() {
            return Err(ErrorKind::ReadOnly.into());
        }
        // SAFETY: invariants 2-3; `&mut self` makes the access exclusive on our side, and
        // a writable export hands its memory to the consumer.
        Ok(unsafe { core::slice::from_raw_parts_mut(self.data, self.len) })
    }

    /// Gives back the tensor (nothing is freed).
    pub fn into_tensor(self) -> ManagedTensor<'a> {
        self.tensor
    }
}

impl<T: DlpackElement> Deref for DlpackVector<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: DlpackElement + fmt::Debug> fmt::Debug for DlpackVector<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DlpackVector")
            .field("device", &self.device())
            .field("read_only", &self.is_read_only())
            .field("data", &self.as_slice())
            .finish()
    }
}

impl<'a, T: DlpackElement> FromDlpack<'a> for DlpackVector<'a, T> {
    fn try_from_dlpack(tensor: ManagedTensor<'a>) -> Result<Self, Refused<'a>> {
        let (data, len) = match rank1::<T>(&tensor, true) {
            Ok(r) => r,
            Err(e) => return Err(Refused::new(e, tensor)),
        };
        Ok(Self {
            tensor,
            data,
            len,
            _marker: PhantomData,
        })
    }
}

impl<T: AnyBitPattern + DlpackElement, A: Arena> PodVector<T, A> {
    /// Copies a rank-1 host tensor (any stride) into a new vector on `arena`, with
    /// capacity equal to the length (pyAMReX's `PODVector.from_array`). The tensor is
    /// consumed: its deleter runs once, before this returns.
    ///
    /// # Errors
    /// [`ErrorKind::RankMismatch`], [`ErrorKind::DtypeMismatch`],
    /// [`ErrorKind::NotHostAccessible`], [`ErrorKind::Misaligned`], or
    /// [`ErrorKind::AllocationFailed`] / an arena failure converted from
    /// [`ArenaError`](amrex_arena::ArenaError).
    pub fn from_dlpack_copy(tensor: ManagedTensor<'_>, arena: A) -> Result<Self, DlpackError> {
        Self::copy_of(&tensor, arena)
    }

    /// The copy of [`from_dlpack_copy`](Self::from_dlpack_copy), leaving the tensor to
    /// the caller.
    fn copy_of(tensor: &ManagedTensor<'_>, arena: A) -> Result<Self, DlpackError> {
        let view = tensor.view();
        view.expect_ndim(1)?;
        let typed = view.typed::<T>()?;
        if let Some(s) = typed.as_slice() {
            return Ok(Self::try_from_slice_in(s, arena)?);
        }
        let mut v = Self::try_with_capacity_in(view.num_elements(), arena)?;
        let mut err = None;
        typed.for_each(|x| {
            if err.is_none()
                && let Err(e) = v.try_push(*x)
            {
                err = Some(e);
            }
        });
        match err {
            Some(e) => Err(e.into()),
            None => Ok(v),
        }
    }
}

/// Copies a rank-1 host tensor into a new host vector (see
/// [`PodVector::from_dlpack_copy`]).
impl<'a, T: AnyBitPattern + DlpackElement> FromDlpack<'a> for PodVector<T, HostArena> {
    fn try_from_dlpack(tensor: ManagedTensor<'a>) -> Result<Self, Refused<'a>> {
        Self::copy_of(&tensor, HostArena).map_err(|e| Refused::new(e, tensor))
    }
}
