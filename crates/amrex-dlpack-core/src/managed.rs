//! Owning handles ([`ManagedTensor`], [`LegacyManagedTensor`]) and the export builder.
//!
//! # One allocation per export
//! [`ManagedTensor::from_owner`] makes a single heap block laid out as
//! `ExportCtx { header, ndim, owner }` followed by `ndim` extents and `ndim` strides. The
//! header (`DLManagedTensorVersioned` or `DLManagedTensor`) sits at offset 0 and its
//! `manager_ctx` points at the block itself, so the deleter finds everything from the
//! pointer it is given. The owner is moved in: a `Vec`, a container, or an `Arc` clone —
//! none of which costs a second allocation.
//!
//! # The deleter
//! The deleter is an `extern "C"` function, so a panic in the owner's `Drop` cannot unwind
//! into C: Rust aborts the process instead (`extern "C"` functions are `nounwind`). It runs
//! on whatever thread the consumer calls it from; that is why owners must be `Send`.

use crate::error::{DlpackError, ErrorKind};
use crate::ffi::{DLManagedTensor, DLManagedTensorVersioned, DLPackVersion, DLTensor, flags};
use crate::view::{TensorView, TensorViewMut, validate};
use crate::{DataType, Device, DlpackElement};
use alloc::alloc::{dealloc, handle_alloc_error};
use core::alloc::Layout;
use core::ffi::c_void;
use core::marker::PhantomData;
use core::mem::offset_of;
use core::ptr::NonNull;

/// What a container hands to [`ManagedTensor::from_owner`]: the tensor to describe.
#[derive(Clone, Copy, Debug)]
pub struct TensorSpec<'s> {
    /// First element (exported with `byte_offset = 0`); NULL when the tensor has no elements.
    pub data: *mut c_void,
    /// Where the memory lives.
    pub device: Device,
    /// Element type.
    pub dtype: DataType,
    /// Extents.
    pub shape: &'s [i64],
    /// Strides in elements, one per extent (always present, as DLPack ≥ 1.2 requires).
    pub strides: &'s [i64],
    /// `READ_ONLY` / `IS_COPIED` bits.
    pub flags: u64,
}

impl<'s> TensorSpec<'s> {
    /// A host tensor of `T` with the given layout and no flags.
    pub fn host<T: DlpackElement>(data: *const T, shape: &'s [i64], strides: &'s [i64]) -> Self {
        Self {
            data: data.cast_mut().cast(),
            device: Device::CPU,
            dtype: T::DTYPE,
            shape,
            strides,
            flags: 0,
        }
    }

    /// The same spec with `flags` set.
    pub fn with_flags(mut self, flags: u64) -> Self {
        self.flags = flags;
        self
    }

    /// The same spec on `device`.
    pub fn on_device(mut self, device: Device) -> Self {
        self.device = device;
        self
    }
}

/// A [`TensorSpec`] whose extents and strides are iterators, so that callers holding them
/// in another form (`ndarray`'s `usize`/`isize`, a view's computed strides) write them
/// straight into the export's block without staging them anywhere.
pub(crate) struct IterSpec<S, T> {
    pub(crate) data: *mut c_void,
    pub(crate) device: Device,
    pub(crate) dtype: DataType,
    pub(crate) shape: S,
    pub(crate) strides: T,
    pub(crate) flags: u64,
}

type SliceIter<'s> = core::iter::Copied<core::slice::Iter<'s, i64>>;

impl<'s> From<&TensorSpec<'s>> for IterSpec<SliceIter<'s>, SliceIter<'s>> {
    #[inline]
    fn from(spec: &TensorSpec<'s>) -> Self {
        Self {
            data: spec.data,
            device: spec.device,
            dtype: spec.dtype,
            shape: spec.shape.iter().copied(),
            strides: spec.strides.iter().copied(),
            flags: spec.flags,
        }
    }
}

/// The two managed-tensor headers, so the export code is written once.
trait Header: Sized {
    fn make(
        tensor: DLTensor,
        ctx: *mut c_void,
        flags: u64,
        deleter: unsafe extern "C" fn(*mut Self),
    ) -> Self;
}

impl Header for DLManagedTensorVersioned {
    fn make(
        dl_tensor: DLTensor,
        manager_ctx: *mut c_void,
        flags: u64,
        d: unsafe extern "C" fn(*mut Self),
    ) -> Self {
        Self {
            version: DLPackVersion::CURRENT,
            manager_ctx,
            deleter: Some(d),
            flags,
            dl_tensor,
        }
    }
}

impl Header for DLManagedTensor {
    fn make(
        dl_tensor: DLTensor,
        manager_ctx: *mut c_void,
        _flags: u64,
        d: unsafe extern "C" fn(*mut Self),
    ) -> Self {
        Self {
            dl_tensor,
            manager_ctx,
            deleter: Some(d),
        }
    }
}

/// The single allocation behind an export. Invariants:
/// 1. `header` is at offset 0, so a `*mut H` handed to the deleter is a `*mut ExportCtx<H, O>`.
/// 2. The block was allocated with `export_layout::<H, O>(ndim)`.
/// 3. The `2 * ndim` i64 after the struct hold the extents then the strides; the header's
///    `shape`/`strides` point there (NULL when `ndim == 0`).
/// 4. `owner` is initialised until the deleter drops it, exactly once.
#[repr(C)]
struct ExportCtx<H, O> {
    header: H,
    ndim: usize,
    owner: O,
}

#[inline]
fn export_layout<H, O>(ndim: usize) -> (Layout, usize) {
    let ctx = Layout::new::<ExportCtx<H, O>>();
    // The 2 * ndim i64 start right after the context, aligned for i64 (constants per H, O).
    let offset = ctx.size().next_multiple_of(core::mem::align_of::<i64>());
    let align = ctx.align().max(core::mem::align_of::<i64>());
    let size = ndim
        .checked_mul(2 * core::mem::size_of::<i64>())
        .and_then(|dims| dims.checked_add(offset))
        .and_then(|size| size.checked_next_multiple_of(align));
    match size.map(|size| Layout::from_size_align(size, align)) {
        Some(Ok(layout)) => (layout, offset),
        _ => dims_overflow(),
    }
}

#[cold]
fn dims_overflow() -> ! {
    panic!("DLPack export: rank too large to lay out")
}

unsafe extern "C" fn export_deleter<H, O>(header: *mut H) {
    if header.is_null() {
        return;
    }
    let ctx = header.cast::<ExportCtx<H, O>>();
    // SAFETY: invariant 1: the pointer we handed out is the start of a live ExportCtx.
    let ndim = unsafe { (*ctx).ndim };
    let owner = ctx
        .cast::<u8>()
        .wrapping_add(offset_of!(ExportCtx<H, O>, owner));
    // SAFETY: invariant 4: the owner is initialised at that offset and dropped here exactly
    // once, since the DLPack contract lets the deleter run only once.
    unsafe { core::ptr::drop_in_place(owner.cast::<O>()) };
    let (layout, _) = export_layout::<H, O>(ndim);
    // SAFETY: invariant 2: allocated by the global allocator with this layout.
    unsafe { dealloc(ctx.cast(), layout) };
}

/// Builds an export; see the module docs.
///
/// # Safety
/// As [`ManagedTensor::from_owner`].
#[inline]
unsafe fn build<H, O, S, T>(owner: O, spec: IterSpec<S, T>) -> NonNull<H>
where
    H: Header,
    O: Send,
    S: ExactSizeIterator<Item = i64>,
    T: ExactSizeIterator<Item = i64>,
{
    let IterSpec {
        data,
        device,
        dtype,
        mut shape,
        mut strides,
        flags,
    } = spec;
    assert_eq!(
        shape.len(),
        strides.len(),
        "DLPack export: shape and strides must have the same length"
    );
    let ndim = shape.len();
    let ndim_i32 = i32::try_from(ndim).unwrap_or_else(|_| dims_overflow());
    let (layout, dims_offset) = export_layout::<H, O>(ndim);
    // SAFETY: the layout has non-zero size (it contains the header).
    let block = unsafe { alloc::alloc::alloc(layout) };
    let Some(block) = NonNull::new(block) else {
        handle_alloc_error(layout)
    };
    let ctx = block.cast::<ExportCtx<H, O>>();
    // DLPack's rule for empty tensors, kept here once for every exporter: no element,
    // NULL data (whatever pointer the container had).
    let mut empty = false;
    let (shape, strides) = if ndim == 0 {
        (core::ptr::null_mut(), core::ptr::null_mut())
    } else {
        // `dims_offset` is within the block (`export_layout`), and so is every pointer
        // below; element-wise writes avoid a `memcpy` call for a handful of i64.
        let dims = block.as_ptr().wrapping_add(dims_offset).cast::<i64>();
        let dims_strides = dims.wrapping_add(ndim);
        // Exactly `ndim` of each are written whatever the iterators yield (an
        // `ExactSizeIterator` may lie about its length; a short one leaves zeros).
        for i in 0..ndim {
            let extent = shape.next().unwrap_or(0);
            empty |= extent == 0;
            // SAFETY: the block has room for 2 * ndim aligned i64 at `dims`; i < ndim.
            unsafe { dims.wrapping_add(i).write(extent) };
            // SAFETY: as above, in the second half.
            unsafe {
                dims_strides
                    .wrapping_add(i)
                    .write(strides.next().unwrap_or(0))
            };
        }
        (dims, dims_strides)
    };
    let tensor = DLTensor {
        data: if empty { core::ptr::null_mut() } else { data },
        device,
        ndim: ndim_i32,
        dtype,
        shape,
        strides,
        byte_offset: 0,
    };
    let header = H::make(tensor, block.as_ptr().cast(), flags, export_deleter::<H, O>);
    // Field by field, in place (invariants 1–4): the header is written straight into the
    // block rather than built in a temporary and copied.
    let base = block.as_ptr();
    let field = |offset: usize| base.wrapping_add(offset);
    // SAFETY: `ctx` is a fresh allocation of `ExportCtx<H, O>`'s layout; each field pointer
    // is in bounds and aligned for its type.
    unsafe {
        field(offset_of!(ExportCtx<H, O>, header))
            .cast::<H>()
            .write(header)
    };
    // SAFETY: as above.
    unsafe {
        field(offset_of!(ExportCtx<H, O>, ndim))
            .cast::<usize>()
            .write(ndim)
    };
    // SAFETY: as above.
    unsafe {
        field(offset_of!(ExportCtx<H, O>, owner))
            .cast::<O>()
            .write(owner)
    };
    ctx.cast::<H>()
}

macro_rules! managed_common {
    ($name:ident, $header:ty) => {
        impl<'a> $name<'a> {
            /// Exports memory kept alive by `owner`: one allocation holds the header, the
            /// owner, the extents and the strides; dropping the tensor (or the consumer
            /// calling the deleter) drops `owner` exactly once.
            ///
            /// # Safety
            /// For as long as `owner` lives (and `'a` lasts), `spec.data` must point to memory
            /// of `spec.device` holding the elements `spec.shape`/`spec.strides` reach, of
            /// type `spec.dtype`, readable and — unless `spec.flags` has `READ_ONLY` —
            /// writable by the consumer without data races. `spec.data` is NULL only when
            /// the tensor has no elements; for such a tensor it may be anything (a
            /// dangling pointer of an empty container): the export always writes NULL,
            /// as DLPack requires, so exporters need not special-case it. Moving `owner` must not move that memory, nor
            /// invalidate `spec.data`: a `Vec`, an `Arc` or a container holding raw
            /// pointers is fine, but a `Box` (also inside a struct or tuple) is a unique
            /// pointer, and moving it invalidates pointers derived from it beforehand
            /// (Miri reports this) — pass `Box<[T]>` as `Vec<T>`, or keep it behind an
            /// `Arc`.
            ///
            /// # Panics
            /// If `spec.shape` and `spec.strides` differ in length.
            #[inline]
            pub unsafe fn from_owner<O: Send + 'a>(owner: O, spec: &TensorSpec<'_>) -> Self {
                // SAFETY: forwarded to the caller.
                unsafe { Self::from_owner_iter(owner, IterSpec::from(spec)) }
            }

            /// [`Self::from_owner`] with extents and strides given as iterators.
            ///
            /// # Safety
            /// As [`Self::from_owner`].
            #[inline]
            pub(crate) unsafe fn from_owner_iter<O, S, T>(owner: O, spec: IterSpec<S, T>) -> Self
            where
                O: Send + 'a,
                S: ExactSizeIterator<Item = i64>,
                T: ExactSizeIterator<Item = i64>,
            {
                // SAFETY: forwarded to the caller.
                let ptr = unsafe { build::<$header, O, S, T>(owner, spec) };
                debug_assert!({
                    // SAFETY: just built from a valid spec.
                    unsafe { validate(&(*ptr.as_ptr()).dl_tensor) }.is_ok()
                });
                Self {
                    ptr,
                    _lifetime: PhantomData,
                }
            }

            /// Gives up ownership: the returned pointer must reach a consumer that calls
            /// its deleter once (or be passed back to `from_raw`).
            #[inline]
            pub fn into_raw(self) -> *mut $header {
                let ptr = self.ptr.as_ptr();
                core::mem::forget(self);
                ptr
            }

            /// The raw managed tensor, still owned by `self`.
            #[inline]
            pub fn as_raw(&self) -> *const $header {
                self.ptr.as_ptr()
            }

            #[inline]
            fn tensor(&self) -> &DLTensor {
                // SAFETY: invariant 1: the header is live while `self` is.
                unsafe { &(*self.ptr.as_ptr()).dl_tensor }
            }

            /// Read access to the validated tensor.
            #[inline]
            pub fn view(&self) -> TensorView<'_> {
                // SAFETY: invariant 2: validated on construction; alive while `self` is.
                unsafe { TensorView::new_unchecked(self.tensor(), self.flags()) }
            }

            /// Exclusive access to the tensor; refused for `READ_ONLY` tensors.
            pub fn view_mut(&mut self) -> Result<TensorViewMut<'_>, DlpackError> {
                TensorViewMut::from_view(self.view())
            }

            /// Where the memory lives.
            #[inline]
            pub fn device(&self) -> Device {
                self.tensor().device
            }

            /// Element type.
            #[inline]
            pub fn dtype(&self) -> DataType {
                self.tensor().dtype
            }

            /// Extents.
            #[inline]
            pub fn shape(&self) -> &[i64] {
                self.view().shape()
            }
        }

        impl Drop for $name<'_> {
            #[inline]
            fn drop(&mut self) {
                let ptr = self.ptr.as_ptr();
                // SAFETY: invariant 1; we own the tensor, so we call its deleter once.
                if let Some(deleter) = unsafe { (*ptr).deleter } {
                    // SAFETY: the deleter of a tensor we own, called exactly once.
                    unsafe { deleter(ptr) };
                }
            }
        }

        // SAFETY: DLPack lets the deleter run on any thread; exports only accept `Send`
        // owners, and importers take responsibility for the producer's promise.
        unsafe impl Send for $name<'_> {}
        // SAFETY: shared access only reads the header and the (validated) data.
        unsafe impl Sync for $name<'_> {}
    };
}

/// An owning `DLManagedTensorVersioned` (DLPack ≥ 1.0). Dropping it calls the deleter once.
///
/// The lifetime ties an export of borrowed data to the borrow: `ManagedTensor<'a>` built
/// from a `&'a mut [T]` cannot outlive the slice in safe code. Owned exports and imports
/// are `ManagedTensor<'static>`.
///
/// A borrowed export cannot outlive its slice:
/// ```compile_fail,E0597
/// use amrex_dlpack_core::ManagedTensor;
/// let tensor;
/// {
///     let data = vec![1.0_f64, 2.0];
///     tensor = ManagedTensor::from_slice(&data);
/// } // `data` is freed here while `tensor` still points into it
/// drop(tensor);
/// ```
/// nor can the slice be touched while a writable export of it lives:
/// ```compile_fail,E0499
/// use amrex_dlpack_core::ManagedTensor;
/// let mut data = [1.0_f64, 2.0];
/// let tensor = ManagedTensor::from_slice_mut(&mut data);
/// data.as_mut_slice()[0] = 3.0; // a second mutable borrow
/// drop(tensor);
/// ```
/// Within the borrow, all is well:
/// ```
/// use amrex_dlpack_core::ManagedTensor;
/// let data = vec![1.0_f64, 2.0];
/// let tensor = ManagedTensor::from_slice(&data);
/// assert!(tensor.is_read_only());
/// assert_eq!(tensor.as_slice::<f64>()?, &[1.0, 2.0]);
/// drop(tensor);
/// # Ok::<(), amrex_dlpack_core::DlpackError>(())
/// ```
///
/// Invariants:
/// 1. `ptr` points to a live `DLManagedTensorVersioned` this handle owns.
/// 2. Its `dl_tensor` passed validation and its memory stays alive until the deleter runs.
/// 3. Its major version is 1.
#[derive(Debug)]
pub struct ManagedTensor<'a> {
    ptr: NonNull<DLManagedTensorVersioned>,
    _lifetime: PhantomData<&'a mut ()>,
}

managed_common!(ManagedTensor, DLManagedTensorVersioned);

impl<'a> ManagedTensor<'a> {
    /// Adopts a tensor from a producer.
    ///
    /// A major version other than 1 is refused after calling the deleter, reading nothing
    /// but `version` and `deleter`. A tensor that fails validation is refused after calling
    /// the deleter. Either way the producer's memory is released exactly once.
    ///
    /// # Safety
    /// `ptr` is NULL or points to a `DLManagedTensorVersioned` whose ownership passes to us;
    /// when its version is 1.x, its shape/strides pointers and data are valid as DLPack
    /// says until we call its deleter.
    #[inline]
    pub unsafe fn from_raw(
        ptr: *mut DLManagedTensorVersioned,
    ) -> Result<ManagedTensor<'static>, DlpackError> {
        let Some(ptr) = NonNull::new(ptr) else {
            return Err(ErrorKind::NullPointer("managed tensor").into());
        };
        // SAFETY: the caller passes a valid pointer; `version` sits at a fixed offset in
        // every major version.
        let version = unsafe { (*ptr.as_ptr()).version };
        let tensor = ManagedTensor {
            ptr,
            _lifetime: PhantomData,
        };
        if version.major != crate::ffi::DLPACK_MAJOR_VERSION {
            // Dropping `tensor` calls the deleter (fixed offset too) and nothing else.
            drop(tensor);
            return Err(ErrorKind::UnsupportedVersion {
                major: version.major,
                minor: version.minor,
            }
            .into());
        }
        // SAFETY: the caller vouches for shape/strides of a 1.x tensor.
        unsafe { validate(tensor.tensor()) }?;
        Ok(tensor)
    }

    /// `DLManagedTensorVersioned::flags`.
    #[inline]
    pub fn flags(&self) -> u64 {
        // SAFETY: invariant 1.
        unsafe { (*self.ptr.as_ptr()).flags }
    }

    /// The producer's DLPack version.
    #[inline]
    pub fn version(&self) -> DLPackVersion {
        // SAFETY: invariant 1.
        unsafe { (*self.ptr.as_ptr()).version }
    }

    /// Whether consumers must not write.
    #[inline]
    pub fn is_read_only(&self) -> bool {
        self.flags() & flags::READ_ONLY != 0
    }

    /// Exports a `Vec` without copying; the vector moves into the tensor.
    pub fn from_vec<T: DlpackElement>(v: alloc::vec::Vec<T>) -> ManagedTensor<'static> {
        let len = v.len() as i64;
        let data = if v.is_empty() {
            core::ptr::null()
        } else {
            v.as_ptr()
        };
        let (shape, strides) = ([len], [1]);
        let spec = TensorSpec::host(data, &shape, &strides);
        // SAFETY: the Vec's heap buffer does not move when the Vec moves; `len` elements
        // are initialised; the tensor owns the Vec, so nobody else writes.
        unsafe { ManagedTensor::from_owner(v, &spec) }
    }

    /// Exports a slice read-only; the tensor cannot outlive the borrow.
    pub fn from_slice<T: DlpackElement>(s: &'a [T]) -> Self {
        let data = if s.is_empty() {
            core::ptr::null()
        } else {
            s.as_ptr()
        };
        let (shape, strides) = ([s.len() as i64], [1]);
        let spec = TensorSpec::host(data, &shape, &strides).with_flags(flags::READ_ONLY);
        // SAFETY: the slice lives for 'a, which bounds the tensor; consumers may only read.
        unsafe { ManagedTensor::from_owner((), &spec) }
    }

    /// Exports a mutable slice writable; the tensor cannot outlive the borrow.
    pub fn from_slice_mut<T: DlpackElement>(s: &'a mut [T]) -> Self {
        let data = if s.is_empty() {
            core::ptr::null_mut()
        } else {
            s.as_mut_ptr()
        };
        let (shape, strides) = ([s.len() as i64], [1]);
        let spec = TensorSpec::host(data.cast_const(), &shape, &strides);
        // SAFETY: the exclusive borrow lasts 'a, which bounds the tensor.
        unsafe { ManagedTensor::from_owner((), &spec) }
    }

    /// Re-wraps as a legacy `DLManagedTensor` for consumers that predate DLPack 1.0.
    ///
    /// Costs one more allocation (the legacy header owns this tensor). Legacy tensors have
    /// no flags: `READ_ONLY` is lost, so only use this when the consumer treats legacy
    /// imports as read-only (NumPy does) or the data is writable.
    pub fn into_legacy(self) -> LegacyManagedTensor<'a> {
        let (tensor, flags) = (core::ptr::from_ref(self.tensor()), self.flags());
        // SAFETY: the header lives in its own allocation, alive and unchanged until the
        // deleter of `self` runs; `self` only moves (a pointer copy) into the new block
        // below, and its deleter cannot run before this function returns.
        let tensor = unsafe { &*tensor };
        // SAFETY: validated when `self` was made (invariant 2), alive as just argued.
        let t = unsafe { TensorView::new_unchecked(tensor, flags) };
        let spec = IterSpec {
            data: t.data_ptr(),
            device: t.device(),
            dtype: t.dtype(),
            shape: t.shape().iter().copied(),
            strides: t.strides(),
            flags: 0,
        };
        // SAFETY: the memory stays alive because `self`, its owner, moves into the tensor;
        // the first element, extents and strides are the validated ones of `self`.
        unsafe { LegacyManagedTensor::from_owner_iter(self, spec) }
    }
}

/// An owning legacy `DLManagedTensor` (no version, no flags). Dropping it calls the
/// deleter once. Invariants as [`ManagedTensor`], without the version.
#[derive(Debug)]
pub struct LegacyManagedTensor<'a> {
    ptr: NonNull<DLManagedTensor>,
    _lifetime: PhantomData<&'a mut ()>,
}

managed_common!(LegacyManagedTensor, DLManagedTensor);

impl LegacyManagedTensor<'_> {
    /// Adopts a legacy tensor; one that fails validation is refused after its deleter runs.
    ///
    /// # Safety
    /// `ptr` is NULL or points to a `DLManagedTensor` whose ownership passes to us, with
    /// valid shape/strides pointers and data until we call its deleter.
    pub unsafe fn from_raw(
        ptr: *mut DLManagedTensor,
    ) -> Result<LegacyManagedTensor<'static>, DlpackError> {
        let Some(ptr) = NonNull::new(ptr) else {
            return Err(ErrorKind::NullPointer("managed tensor").into());
        };
        let tensor = LegacyManagedTensor {
            ptr,
            _lifetime: PhantomData,
        };
        // SAFETY: the caller vouches for shape/strides.
        unsafe { validate(tensor.tensor()) }?;
        Ok(tensor)
    }

    /// Legacy tensors carry no flags: always 0.
    pub fn flags(&self) -> u64 {
        0
    }
}
