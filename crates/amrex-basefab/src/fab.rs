//! [`BaseFab`]: the struct, its storage and constructors, views and host/device staging.

use crate::FabError;
use amrex_arena::{Arena, HostArena};
use amrex_array4::{Array4, Array4Error, Array4Mut, FabLayout};
use amrex_box::{IndexBox, IntVect};
use amrex_dlpack_core::{Device, ManagedTensor};
use amrex_podvector::PodVector;
use bytemuck::AnyBitPattern;
use core::fmt;
use core::marker::PhantomData;
use core::ops::{Bound, Range, RangeBounds};
use core::ptr::NonNull;

/// Where a fab's elements live.
pub(crate) enum Storage<'a, T: AnyBitPattern, A: Arena> {
    /// Allocated from the fab's arena; compact layout.
    Owned(PodVector<T, A>),
    /// Memory of the fab's arena borrowed for `'a` (a host slice, an `Array4Mut`, or raw
    /// parts).
    Borrowed {
        ptr: NonNull<T>,
        _borrow: PhantomData<&'a mut [T]>,
    },
    /// An imported DLPack tensor, kept alive (and its deleter deferred) until the fab drops.
    Tensor {
        tensor: ManagedTensor<'a>,
        ptr: NonNull<T>,
    },
}

/// AMReX's `BaseFab<T>`: values of `T` over the cells (or nodes) of an [`IndexBox`], with
/// `ncomp` components, laid out like AMReX: `i` fastest, then `j`, `k`, and the component
/// slowest. Indices are **global**: element `(i, j, k, n)` of a fab whose box starts at
/// `(-2, -2, -2)` is addressed from `-2`.
///
/// A fab either owns its memory — allocated from an [`Arena`], compact, on the host or a
/// device — or borrows it: a host slice ([`from_slice`](Self::from_slice)), an
/// [`Array4Mut`] ([`from_array4`](Self::from_array4), strides kept), or an imported DLPack
/// tensor ([`from_dlpack_at`](Self::from_dlpack_at)) that the fab keeps alive and whose
/// deleter runs exactly once, when the fab drops. The lifetime `'a` bounds borrowed
/// memory; owning fabs are `BaseFab<'static, T, A>` ([`FArrayBox`](crate::FArrayBox),
/// [`IArrayBox`](crate::IArrayBox)).
///
/// # Host and device
/// Element operations (`set_val`, `plus`, reductions, `array`, …) run on the CPU and are
/// refused with [`FabError::NotHostAccessible`] when the memory is device memory: the fab
/// never dereferences it. Stage instead: [`to_host`](Self::to_host), work on the host copy,
/// [`copy_from_host_fab`](Self::copy_from_host_fab) back; or hand
/// [`as_mut_ptr`](Self::as_mut_ptr) and [`strides`](Self::strides) to a device kernel.
/// DLPack export works on every device (it only describes the memory).
///
/// ```
/// use amrex_basefab::{FArrayBox, IndexBox, IntVect};
/// let bx = IndexBox::new(IntVect::ZERO, IntVect::splat(7));
/// let mut fab = FArrayBox::new(bx, 2);
/// fab.set_val(1.0, .., bx)?;
/// fab.plus(2.0, 1..2, bx)?;
/// assert_eq!(fab.sum(0..1, bx)?, 512.0);
/// assert_eq!(fab.max(1..2, bx)?, 3.0);
/// let a = fab.array()?;
/// assert_eq!(a[(7, 7, 7, 1)], 3.0);
/// # Ok::<(), amrex_basefab::FabError>(())
/// ```
//
// Invariants:
// 0. `bx` lies in the `i32` index space (`bx.check_index_space()` passes), so
//    `hi + 1` and every length are `i32`.
// 1. `ncomp * num_pts(bx)` elements (`len`) fit `isize` bytes.
// 2. If `len > 0`: for every `(i, j, k)` in `bx` and `n < ncomp`, the element offset
//    `(i-lo.x) + (j-lo.y)*jstride + (k-lo.z)*kstride + n*nstride` fits `isize`, and
//    `data_ptr() + offset` is an aligned, initialised `T` inside memory that `storage`
//    keeps alive (owned vector, borrow for `'a`, imported tensor). Distinct indices reach
//    distinct elements, unless `read_only`.
// 3. If `len == 0`, `data_ptr()` is aligned and non-null but never dereferenced.
// 4. `Owned`: the vector holds at least `len` elements, strides are compact
//    (`jstride = nx`, `kstride = nx*ny`, `nstride = nx*ny*nz`).
// 5. The CPU dereferences the elements only when `host_accessible()`; it writes them
//    only when additionally `!read_only`.
// 6. `Borrowed` and `Tensor` grant exclusive access to the elements for `'a` (a `&mut`
//    borrow, an exclusive `Array4Mut`, or a tensor whose importer vouched for it), or
//    shared read-only access when `read_only`.
pub struct BaseFab<'a, T: AnyBitPattern, A: Arena = HostArena> {
    pub(crate) storage: Storage<'a, T, A>,
    pub(crate) bx: IndexBox,
    /// Components and strides of the elements over `bx` (begin = `bx.lo()`).
    pub(crate) layout: FabLayout,
    pub(crate) read_only: bool,
    pub(crate) arena: A,
}

// SAFETY: a fab owns or exclusively borrows its `T`s (invariant 6), like `Vec<T>` or
// `&mut [T]`; the tensor handle and arenas are `Send`.
unsafe impl<T: AnyBitPattern + Send, A: Arena> Send for BaseFab<'_, T, A> {}
// SAFETY: shared access only reads (invariant 5); arenas and tensor handles are `Sync`.
unsafe impl<T: AnyBitPattern + Sync, A: Arena> Sync for BaseFab<'_, T, A> {}

/// Lengths of a box, zero when it is empty (computed in `i64`, so exact for any box).
pub(crate) fn box_lengths(bx: &IndexBox) -> [usize; 3] {
    if !bx.ok() {
        return [0; 3];
    }
    // Each length is at most 2^32 - 1, which fits usize on the 64-bit targets that can
    // hold such a fab; a fab's box lies in the index space (invariant 0), so <= i32::MAX.
    core::array::from_fn(|d| usize::try_from(bx.length_dir(d)).unwrap_or(usize::MAX))
}

/// The compact layout of a fab over `bx` with `ncomp` components and its element count:
/// [`FabLayout::compact`] (which applies the index-space rule) plus the check that the
/// elements fit `isize` bytes.
pub(crate) fn compact<T>(bx: &IndexBox, ncomp: usize) -> Result<(usize, FabLayout), FabError> {
    let layout = FabLayout::compact(bx, ncomp).map_err(|e| match e {
        Array4Error::OutsideIndexSpace(e) => FabError::OutsideIndexSpace(e),
        _ => FabError::TooLarge,
    })?;
    let len = layout.len();
    if isize::try_from(len.saturating_mul(core::mem::size_of::<T>().max(1))).is_err() {
        return Err(FabError::TooLarge);
    }
    Ok((len, layout))
}

/// Resolves a component range (`..`, `1..3`, `2..=2`, ...) against a container's `ncomp`
/// components: the one component rule of every fab and FabArray operation.
///
/// # Errors
/// [`FabError::ComponentsOutside`] when the range is reversed or ends past `ncomp`.
pub fn component_range(r: impl RangeBounds<usize>, ncomp: usize) -> Result<Range<usize>, FabError> {
    let start = match r.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.saturating_add(1),
        Bound::Unbounded => 0,
    };
    let end = match r.end_bound() {
        Bound::Included(&e) => e.saturating_add(1),
        Bound::Excluded(&e) => e,
        Bound::Unbounded => ncomp,
    };
    if start > end || end > ncomp {
        return Err(FabError::ComponentsOutside { start, end, ncomp });
    }
    Ok(start..end)
}

/// Whether `inner` (any index type) lies inside `outer` (by corners).
pub(crate) fn box_inside(inner: &IndexBox, outer: &IndexBox) -> bool {
    outer.ok() && inner.lo().all_ge(outer.lo()) && inner.hi().all_le(outer.hi())
}

impl<T: AnyBitPattern> BaseFab<'static, T, HostArena> {
    /// A zero-filled host fab over `bx` with `ncomp` components.
    ///
    /// # Panics
    /// If memory runs out or the size overflows; see [`try_new_in`](Self::try_new_in).
    #[track_caller]
    pub fn new(bx: IndexBox, ncomp: usize) -> Self {
        Self::new_in(bx, ncomp, HostArena)
    }
}

impl<T: AnyBitPattern, A: Arena> BaseFab<'static, T, A> {
    /// A zero-filled fab whose memory comes from `arena` (zeroed on the device for
    /// device arenas).
    ///
    /// # Errors
    /// [`FabError::TooLarge`] or the arena's failure.
    pub fn try_new_in(bx: IndexBox, ncomp: usize, arena: A) -> Result<Self, FabError> {
        let (len, layout) = compact::<T>(&bx, ncomp)?;
        let mut v = PodVector::try_with_capacity_in(len, arena.clone())?;
        // SAFETY: the `len` new elements are written by `try_fill_zeroed` right below,
        // before anything reads them; on failure the vector is dropped unread.
        unsafe { v.try_resize_uninit(len) }?;
        v.try_fill_zeroed()?;
        // Invariants 1–4: compact layout over a vector of exactly `len` initialised
        // elements; 5–6: owned.
        Ok(Self {
            storage: Storage::Owned(v),
            bx,
            layout,
            read_only: false,
            arena,
        })
    }

    /// As [`try_new_in`](Self::try_new_in).
    ///
    /// # Panics
    /// On its errors.
    #[track_caller]
    pub fn new_in(bx: IndexBox, ncomp: usize, arena: A) -> Self {
        match Self::try_new_in(bx, ncomp, arena) {
            Ok(f) => f,
            Err(e) => panic!("BaseFab::new: {e}"),
        }
    }

    /// An owning fab over a vector laid out compactly over `bx` (the vector may be
    /// longer than needed; its extra elements are kept but unused).
    ///
    /// # Errors
    /// [`FabError::SliceTooShort`] (handing the vector back is not possible then: it is
    /// dropped) or [`FabError::TooLarge`].
    pub fn from_pod_vector(
        v: PodVector<T, A>,
        bx: IndexBox,
        ncomp: usize,
    ) -> Result<Self, FabError> {
        let (len, layout) = compact::<T>(&bx, ncomp)?;
        if v.len() < len {
            return Err(FabError::SliceTooShort {
                needed: len,
                found: v.len(),
            });
        }
        let arena = v.arena().clone();
        // Invariants 1–4: compact layout over at least `len` initialised elements.
        Ok(Self {
            storage: Storage::Owned(v),
            bx,
            layout,
            read_only: false,
            arena,
        })
    }

    /// The vector of an owning fab (`Err(self)` for a non-owning one).
    ///
    /// # Errors
    /// The fab itself when it does not own its memory.
    pub fn into_pod_vector(self) -> Result<PodVector<T, A>, Self> {
        match self.storage {
            Storage::Owned(v) => Ok(v),
            _ => Err(self),
        }
    }
}

impl<'a, T: AnyBitPattern, A: Arena> BaseFab<'a, T, A> {
    /// A non-owning fab over raw parts in memory of `arena` (AMReX's
    /// `BaseFab(box, ncomp, T* p)` with explicit strides): element `(i, j, k, n)` is at
    /// `ptr + (i-lo.x) + (j-lo.y)*jstride + (k-lo.z)*kstride + n*nstride`. The fab reports
    /// the arena's device and never dereferences device memory.
    ///
    /// # Safety
    /// 1. If the box is non-empty and `ncomp > 0`: every such offset fits `isize` and
    ///    `ptr` plus it is an aligned, initialised `T` inside one allocation of `arena`'s
    ///    memory that stays alive for `'a`; distinct indices reach distinct elements.
    /// 2. Otherwise `ptr` is non-null and aligned.
    /// 3. Nobody else reads or writes those elements during `'a`.
    ///
    /// # Panics
    /// If `bx` leaves the `i32` index space ([`IndexBox::check_index_space`]).
    #[track_caller]
    pub unsafe fn from_raw_parts_in(
        ptr: *mut T,
        bx: IndexBox,
        ncomp: usize,
        strides: [usize; 3],
        arena: A,
    ) -> Self {
        let layout = match bx
            .try_end()
            .map_err(Array4Error::OutsideIndexSpace)
            .and_then(|end| FabLayout::with_strides(bx.lo(), end, strides, ncomp))
        {
            Ok(l) => l,
            Err(e) => panic!("BaseFab::from_raw_parts_in: {bx}: {e}"),
        };
        debug_assert!(
            !ptr.is_null() && ptr.is_aligned(),
            "BaseFab::from_raw_parts_in: bad pointer"
        );
        let ptr = NonNull::new(ptr).unwrap_or(NonNull::dangling());
        // Invariant 0: checked above; 1–3, 6: the caller's obligations 1–3.
        Self {
            storage: Storage::Borrowed {
                ptr,
                _borrow: PhantomData,
            },
            bx,
            layout,
            read_only: false,
            arena,
        }
    }
}

impl<'a, T: AnyBitPattern> BaseFab<'a, T, HostArena> {
    /// A non-owning fab over a host slice laid out compactly over `bx` (AMReX's
    /// `BaseFab(box, ncomp, T* p)`). `data` may be longer than needed.
    ///
    /// # Errors
    /// [`FabError::SliceTooShort`] or [`FabError::TooLarge`].
    pub fn from_slice(data: &'a mut [T], bx: IndexBox, ncomp: usize) -> Result<Self, FabError> {
        let (len, layout) = compact::<T>(&bx, ncomp)?;
        if data.len() < len {
            return Err(FabError::SliceTooShort {
                needed: len,
                found: data.len(),
            });
        }
        // Invariants 2–3, 6: `len` compact elements of an exclusive borrow for 'a.
        Ok(Self {
            storage: Storage::Borrowed {
                ptr: NonNull::from(data).cast(),
                _borrow: PhantomData,
            },
            bx,
            layout,
            read_only: false,
            arena: HostArena,
        })
    }

    /// A read-only non-owning fab over a shared host slice (writes are refused with
    /// [`FabError::ReadOnly`]).
    ///
    /// # Errors
    /// As [`from_slice`](Self::from_slice).
    pub fn from_slice_ref(data: &'a [T], bx: IndexBox, ncomp: usize) -> Result<Self, FabError> {
        let (len, layout) = compact::<T>(&bx, ncomp)?;
        if data.len() < len {
            return Err(FabError::SliceTooShort {
                needed: len,
                found: data.len(),
            });
        }
        // Invariants 2–3, 6: `len` compact elements of a shared borrow for 'a, never
        // written because `read_only` (invariant 5).
        Ok(Self {
            storage: Storage::Borrowed {
                ptr: NonNull::from(data).cast(),
                _borrow: PhantomData,
            },
            bx,
            layout,
            read_only: true,
            arena: HostArena,
        })
    }

    /// A non-owning fab over an `Array4Mut` (AMReX's `BaseFab(Array4<T> const&)`): same
    /// box, components and strides; the view is consumed, so the fab has the elements to
    /// itself for `'a`.
    pub fn from_array4(mut a: Array4Mut<'a, T>) -> Self {
        let bx = a.index_box();
        let layout = a.layout();
        // `Array4Mut` pointers are non-null (dangling when empty).
        let ptr = NonNull::new(a.as_mut_ptr()).unwrap_or(NonNull::dangling());
        // Invariant 0: a view's lengths are at most i32::MAX and its exclusive end is an
        // i32, so its box lies in the index space; 2–3, 6: the view's own invariants
        // (in-bounds offsets, distinct elements, exclusive for 'a) carry over; the view
        // is moved in and never used again.
        Self {
            storage: Storage::Borrowed {
                ptr,
                _borrow: PhantomData,
            },
            bx,
            layout,
            read_only: false,
            arena: HostArena,
        }
    }
}

impl<'a, T: AnyBitPattern, A: Arena> BaseFab<'a, T, A> {
    /// The box (AMReX `box()`).
    pub fn index_box(&self) -> IndexBox {
        self.bx
    }

    /// Number of components (AMReX `nComp()`).
    pub fn ncomp(&self) -> usize {
        self.layout.ncomp()
    }

    /// Cells (or nodes) in the box.
    pub fn num_pts(&self) -> usize {
        let [nx, ny, nz] = box_lengths(&self.bx);
        nx * ny * nz
    }

    /// Elements: `num_pts() * ncomp()` (AMReX `size()`).
    pub fn len(&self) -> usize {
        self.num_pts() * self.layout.ncomp()
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The layout of the elements: bounds (the box, cell-centred), components and
    /// strides, as an `Array4` or a DLPack export describes them.
    pub fn layout(&self) -> FabLayout {
        self.layout
    }

    /// `[jstride, kstride, nstride]` in elements (the `i` stride is 1).
    pub fn strides(&self) -> [usize; 3] {
        self.layout.strides()
    }

    /// Whether the layout is compact (always for owning fabs).
    pub fn is_contiguous(&self) -> bool {
        self.layout.is_compact()
    }

    /// Whether the fab owns its memory (AMReX `isAllocated` for an owning fab).
    pub fn is_owning(&self) -> bool {
        matches!(self.storage, Storage::Owned(_))
    }

    /// Whether writes are refused (a fab over a shared slice or a `READ_ONLY` tensor).
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// The arena owning fabs allocate from (also used when a non-owning fab is resized).
    pub fn arena(&self) -> &A {
        &self.arena
    }

    /// Where the memory lives: the arena's device, or the imported tensor's.
    pub fn device(&self) -> Device {
        match &self.storage {
            Storage::Owned(_) | Storage::Borrowed { .. } => self.arena.device(),
            Storage::Tensor { tensor, .. } => tensor.device(),
        }
    }

    /// Whether the CPU may dereference the elements.
    pub fn host_accessible(&self) -> bool {
        match &self.storage {
            Storage::Owned(_) | Storage::Borrowed { .. } => self.arena.host_accessible(),
            Storage::Tensor { tensor, .. } => tensor.device().is_host_accessible(),
        }
    }

    /// The first element `(lo, 0)` (dangling when empty).
    pub(crate) fn data_ptr(&self) -> *mut T {
        match &self.storage {
            Storage::Owned(v) => v.as_ptr().cast_mut(),
            Storage::Borrowed { ptr, .. } | Storage::Tensor { ptr, .. } => ptr.as_ptr(),
        }
    }

    /// Pointer to element `(lo, 0)`: device memory for device fabs, for kernels.
    pub fn as_ptr(&self) -> *const T {
        self.data_ptr()
    }

    /// Mutable pointer to element `(lo, 0)`, for kernels (device memory for device fabs).
    ///
    /// # Errors
    /// [`FabError::ReadOnly`].
    pub fn as_mut_ptr(&mut self) -> Result<*mut T, FabError> {
        if self.read_only {
            return Err(FabError::ReadOnly);
        }
        Ok(self.data_ptr())
    }

    pub(crate) fn check_host(&self) -> Result<(), FabError> {
        if self.host_accessible() {
            Ok(())
        } else {
            Err(FabError::NotHostAccessible(self.device()))
        }
    }

    pub(crate) fn check_write(&self) -> Result<(), FabError> {
        self.check_host()?;
        if self.read_only {
            return Err(FabError::ReadOnly);
        }
        Ok(())
    }

    /// Element offset of `(i, j, k, n)`, which the caller has checked to be in bounds.
    #[inline(always)]
    pub(crate) fn offset(&self, p: IntVect, n: usize) -> usize {
        debug_assert!(self.layout.offset(p[0], p[1], p[2], n).is_some());
        // In bounds, so not negative.
        self.layout
            .offset_unchecked(p[0], p[1], p[2], n)
            .cast_unsigned()
    }

    /// The elements as one slice, when compact and host accessible.
    ///
    /// # Errors
    /// [`FabError::NotHostAccessible`], or `Dlpack(NotContiguous)` for strided fabs.
    pub fn as_slice(&self) -> Result<&[T], FabError> {
        self.check_host()?;
        if !self.is_contiguous() {
            return Err(amrex_dlpack_core::DlpackError::from(
                amrex_dlpack_core::ErrorKind::NotContiguous,
            )
            .into());
        }
        // SAFETY: compact, `len` initialised elements from `data_ptr` (invariants 2–4),
        // host readable (checked); shared for the borrow of `self`.
        Ok(unsafe { core::slice::from_raw_parts(self.data_ptr(), self.len()) })
    }

    /// The elements as one mutable slice, when compact, host accessible and writable.
    ///
    /// # Errors
    /// As [`as_slice`](Self::as_slice), plus [`FabError::ReadOnly`].
    pub fn as_mut_slice(&mut self) -> Result<&mut [T], FabError> {
        self.check_write()?;
        if !self.is_contiguous() {
            return Err(amrex_dlpack_core::DlpackError::from(
                amrex_dlpack_core::ErrorKind::NotContiguous,
            )
            .into());
        }
        // SAFETY: as `as_slice`; exclusive through `&mut self` (invariant 6), writable.
        Ok(unsafe { core::slice::from_raw_parts_mut(self.data_ptr(), self.len()) })
    }

    fn end(&self) -> IntVect {
        match self.bx.try_end() {
            Ok(end) => end,
            // Invariant 0 rules this out.
            Err(e) => unreachable!("BaseFab: {e}"),
        }
    }

    /// An [`Array4`] over the whole box and every component (AMReX `array()`).
    ///
    /// # Errors
    /// [`FabError::NotHostAccessible`].
    pub fn array(&self) -> Result<Array4<'_, T>, FabError> {
        self.array_comps(..)
    }

    /// An [`Array4`] of components `comps`, whose component 0 is `comps.start` (AMReX
    /// `array(start_comp, num_comps)`).
    ///
    /// # Errors
    /// [`FabError::NotHostAccessible`] or [`FabError::ComponentsOutside`].
    pub fn array_comps(&self, comps: impl RangeBounds<usize>) -> Result<Array4<'_, T>, FabError> {
        self.check_host()?;
        let r = component_range(comps, self.ncomp())?;
        let ptr = if self.is_empty() || r.is_empty() {
            self.data_ptr()
        } else {
            self.data_ptr()
                .wrapping_add(r.start * self.layout.strides()[2])
        };
        // SAFETY: the elements of components `r` over the box are in bounds, initialised,
        // aligned, host readable (invariants 2–3, 5, checked) and alive for the borrow of
        // `self`, during which nobody writes them (`&self`).
        Ok(unsafe {
            Array4::from_raw_parts(ptr, self.bx.lo(), self.end(), self.strides(), r.len())
        })
    }

    /// An [`Array4Mut`] over the whole box and every component.
    ///
    /// # Errors
    /// [`FabError::NotHostAccessible`] or [`FabError::ReadOnly`].
    pub fn array_mut(&mut self) -> Result<Array4Mut<'_, T>, FabError> {
        self.array_comps_mut(..)
    }

    /// An [`Array4Mut`] of components `comps`.
    ///
    /// # Errors
    /// As [`array_comps`](Self::array_comps), plus [`FabError::ReadOnly`].
    pub fn array_comps_mut(
        &mut self,
        comps: impl RangeBounds<usize>,
    ) -> Result<Array4Mut<'_, T>, FabError> {
        self.check_write()?;
        let r = component_range(comps, self.ncomp())?;
        let ptr = if self.is_empty() || r.is_empty() {
            self.data_ptr()
        } else {
            self.data_ptr()
                .wrapping_add(r.start * self.layout.strides()[2])
        };
        // SAFETY: as `array_comps`; distinct indices reach distinct elements (invariant 2,
        // not read-only), and `&mut self` gives exclusive access (invariant 6).
        Ok(unsafe {
            Array4Mut::from_raw_parts(ptr, self.bx.lo(), self.end(), self.strides(), r.len())
        })
    }

    /// A compact copy in host memory (works on every arena: device fabs are copied with
    /// the arena's bulk copy; AMReX's host staging).
    ///
    /// # Errors
    /// [`FabError::NotHostAccessible`] for an imported device tensor (no arena can copy
    /// it), or the arena's failure.
    pub fn to_host(&self) -> Result<BaseFab<'static, T, HostArena>, FabError> {
        let mut out = BaseFab::<T, HostArena>::try_new_in(self.bx, self.ncomp(), HostArena)?;
        if let Storage::Owned(v) = &self.storage
            && !self.host_accessible()
        {
            let len = self.len();
            let dst = out.as_mut_slice()?;
            if v.len() == len {
                v.copy_to_host(dst)?;
            } else {
                // A shrunk owned fab keeps a longer vector: copy the prefix.
                let host = v.to_host_vec()?;
                dst.copy_from_slice(&host[..len]);
            }
            return Ok(out);
        }
        out.copy_from(self, 0, self.bx, .., self.bx)?;
        Ok(out)
    }

    /// Overwrites every element with those of a host fab over the same box and
    /// component count (device fabs through the arena's bulk copy).
    ///
    /// # Errors
    /// [`FabError::BoxSizeMismatch`] / [`FabError::ComponentsOutside`] for a different
    /// shape, [`FabError::ReadOnly`], [`FabError::NotHostAccessible`] for an imported
    /// device tensor, or the arena's failure.
    pub fn copy_from_host_fab(&mut self, src: &BaseFab<'_, T, HostArena>) -> Result<(), FabError> {
        if src.bx.length() != self.bx.length() || src.bx.lo() != self.bx.lo() {
            return Err(FabError::BoxSizeMismatch {
                src: src.bx,
                dst: self.bx,
            });
        }
        if src.ncomp() != self.ncomp() {
            return Err(FabError::ComponentsOutside {
                start: 0,
                end: src.ncomp(),
                ncomp: self.ncomp(),
            });
        }
        if self.read_only {
            return Err(FabError::ReadOnly);
        }
        let host = self.host_accessible();
        let len = self.len();
        if let Storage::Owned(v) = &mut self.storage
            && !host
        {
            let compact = src.to_host()?;
            let data = compact.as_slice()?;
            if v.len() == len {
                v.copy_from_host(data)?;
            } else {
                let mut whole = v.to_host_vec()?;
                whole[..len].copy_from_slice(data);
                v.copy_from_host(&whole)?;
            }
            return Ok(());
        }
        let (bx, nc) = (self.bx, self.ncomp());
        self.copy_from(src, 0, bx, 0..nc, bx)
    }

    /// A copy with the same box and components, owning compact memory from the same
    /// arena.
    ///
    /// # Errors
    /// As [`to_host`](Self::to_host).
    pub fn try_clone(&self) -> Result<BaseFab<'static, T, A>, FabError> {
        if let Storage::Owned(v) = &self.storage {
            let mut v = v.try_clone()?;
            v.truncate(self.len());
            return Ok(BaseFab {
                storage: Storage::Owned(v),
                bx: self.bx,
                layout: self.layout,
                read_only: false,
                arena: self.arena.clone(),
            });
        }
        let host = self.to_host()?;
        let mut out = BaseFab::try_new_in(self.bx, self.ncomp(), self.arena.clone())?;
        out.copy_from_host_fab(&host)?;
        Ok(out)
    }

    /// Gives the fab a new box and component count (AMReX `resize`). An owning fab keeps
    /// its allocation when it is large enough; a non-owning fab (and an owning one that
    /// must grow) gets fresh memory from its arena and stops borrowing. Element values
    /// afterwards are unspecified (old bits or zero).
    ///
    /// # Errors
    /// [`FabError::TooLarge`] or the arena's failure; the fab is unchanged then.
    pub fn resize(&mut self, bx: IndexBox, ncomp: usize) -> Result<(), FabError> {
        let (len, layout) = compact::<T>(&bx, ncomp)?;
        match &mut self.storage {
            Storage::Owned(v) if v.len() >= len => {}
            Storage::Owned(v) => {
                let extra = len - v.len();
                v.try_reserve_exact(extra)?;
                v.try_resize(len, T::zeroed())?;
            }
            _ => {
                let mut v = PodVector::try_with_capacity_in(len, self.arena.clone())?;
                v.try_resize(len, T::zeroed())?;
                // Dropping the old storage ends the borrow or calls the tensor's deleter.
                self.storage = Storage::Owned(v);
                self.read_only = false;
            }
        }
        // Invariants 1–4 hold for the compact layout over at least `len` elements.
        self.bx = bx;
        self.layout = layout;
        Ok(())
    }

    /// Exchanges everything with `other` (AMReX `swap`).
    pub fn swap(&mut self, other: &mut Self) {
        core::mem::swap(self, other);
    }
}

impl<T: AnyBitPattern, A: Arena> fmt::Debug for BaseFab<'_, T, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let storage = match self.storage {
            Storage::Owned(_) => "owned",
            Storage::Borrowed { .. } => "borrowed",
            Storage::Tensor { .. } => "dlpack",
        };
        f.debug_struct("BaseFab")
            .field("box", &self.bx)
            .field("ncomp", &self.ncomp())
            .field("strides", &self.strides())
            .field("storage", &storage)
            .field("read_only", &self.read_only)
            .field("device", &self.device())
            .finish()
    }
}
