//! `Array4` (shared) and `Array4Mut` (unique) views.

use core::fmt;
use core::marker::PhantomData;
use core::ops::{Index, IndexMut};
use core::ptr::NonNull;

use amrex_box::{Dim3, IndexBox, IntVect};

use crate::error::Array4Error;
use crate::layout::FabLayout;
use crate::raw::Raw;

// Invariants of `Array4<'a, T>` and `Array4Mut<'a, T>` (field `raw`):
// 1. `raw.begin <= raw.end` component-wise; the lengths `end - begin` are the extents
//    `nx, ny, nz`, and `ncomp` is the number of components.
// 2. If the view has elements (`nx*ny*nz*ncomp > 0`), then for every `(i, j, k, n)` with
//    `begin <= (i, j, k) < end` and `n < ncomp`, the offset
//    `(i-begin.x) + (j-begin.y)*jstride + (k-begin.z)*kstride + n*nstride` fits `isize`
//    and `raw.ptr + offset` is an aligned, initialised `T` inside one live allocation
//    that outlives `'a`. The i-stride is always 1.
// 3. If the view has no elements, `raw.ptr` is only aligned and non-null (it may be
//    dangling) and is never dereferenced or offset.
// 4. `Array4`: nobody writes those elements during `'a` (like `&'a [T]`).
// 5. `Array4Mut`: distinct in-bounds indices have distinct offsets, and nothing else reads
//    or writes those elements during `'a` except through this view or views reborrowed
//    from it (like `&'a mut [T]`).
// Nobody frees anything: the views borrow.

/// A shared 4-D view `a(i, j, k, n)` with AMReX's **global** indexing, AMReX's const
/// `Array4<T const>`.
///
/// `i` is the unit-stride direction; `j`, `k` and the component `n` have strides
/// `jstride`, `kstride` and `nstride`. Indices are global: a view of a box whose
/// `small_end` is `(-2, -2, -2)` (two ghost cells around a box at the origin) is indexed
/// from `-2`. `Array4` is `Copy`, like `&[T]`.
///
/// ```
/// use amrex_array4::{Array4, IndexBox, IntVect};
/// let bx = IndexBox::new(IntVect::new(-1, 0, 0), IntVect::new(2, 1, 0));
/// let data: Vec<f64> = (0..16).map(f64::from).collect();
/// let a = Array4::new(&data, bx, 2);
/// assert_eq!(a[(-1, 0, 0, 0)], 0.0);
/// assert_eq!(a[(2, 1, 0, 0)], 7.0);
/// assert_eq!(a[(-1, 0, 0, 1)], 8.0); // components are slowest
/// assert_eq!(a.get(3, 0, 0, 0), None);
/// ```
pub struct Array4<'a, T> {
    pub(crate) raw: Raw<T>,
    _marker: PhantomData<&'a [T]>,
}

/// A unique (mutable) 4-D view with AMReX's global indexing, AMReX's `Array4<T>`.
///
/// Like `&mut [T]` it is not `Copy`; [`reborrow`](Self::reborrow) gives a shorter-lived
/// `Array4Mut`, [`as_const`](Self::as_const) a shared [`Array4`].
///
/// ```
/// use amrex_array4::{Array4Mut, IndexBox, IntVect};
/// let bx = IndexBox::new(IntVect::ZERO, IntVect::new(3, 3, 3));
/// let mut data = vec![0.0_f64; 64];
/// let mut a = Array4Mut::new(&mut data, bx, 1);
/// a[(1, 2, 3, 0)] = 5.0;
/// a.for_each_mut(bx, |i, j, k, _n, v| *v += f64::from(i + j + k));
/// assert_eq!(a[(1, 2, 3, 0)], 11.0);
/// assert_eq!(data[1 + 4 * (2 + 4 * 3)], 11.0);
/// ```
pub struct Array4Mut<'a, T> {
    pub(crate) raw: Raw<T>,
    _marker: PhantomData<&'a mut [T]>,
}

// SAFETY: an `Array4` is a shared borrow of `T`s (invariant 4), like `&[T]`.
unsafe impl<T: Sync> Send for Array4<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for Array4<'_, T> {}
// SAFETY: an `Array4Mut` is a unique borrow of `T`s (invariant 5), like `&mut [T]`.
unsafe impl<T: Send> Send for Array4Mut<'_, T> {}
// SAFETY: shared access to an `Array4Mut` only reads, like `&&mut [T]`.
unsafe impl<T: Sync> Sync for Array4Mut<'_, T> {}

impl<T> Clone for Array4<'_, T> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Array4<'_, T> {}

/// The compact view of `bx` with `ncomp` components over `len` elements at `ptr`
/// (dangling when empty): [`FabLayout::compact`], plus the checks that the elements fit
/// `isize` bytes and the slice.
fn compact<T>(
    ptr: NonNull<T>,
    len: usize,
    bx: &IndexBox,
    ncomp: usize,
) -> Result<Raw<T>, Array4Error> {
    let layout = FabLayout::compact(bx, ncomp)?;
    let needed = layout.len();
    if isize::try_from(needed.saturating_mul(core::mem::size_of::<T>())).is_err() {
        return Err(Array4Error::TooLarge);
    }
    if len < needed {
        return Err(Array4Error::SliceTooShort { needed, found: len });
    }
    let ptr = if needed == 0 {
        NonNull::dangling()
    } else {
        ptr
    };
    Ok(Raw { ptr, layout })
}

macro_rules! common_methods {
    () => {
        /// The layout: bounds, components and strides (the view without its pointer).
        #[inline]
        #[must_use]
        pub fn layout(&self) -> FabLayout {
            self.raw.layout
        }

        /// Pointer to element `(begin.x, begin.y, begin.z, 0)` (dangling when empty).
        #[inline]
        #[must_use]
        pub fn as_ptr(&self) -> *const T {
            self.raw.ptr.as_ptr()
        }

        /// Inclusive low corner (AMReX's `begin`).
        #[inline]
        #[must_use]
        pub fn begin(&self) -> IntVect {
            self.raw.begin
        }

        /// Exclusive high corner (AMReX's `end`, `big_end + 1`).
        #[inline]
        #[must_use]
        pub fn end(&self) -> IntVect {
            self.raw.end
        }

        /// Inclusive low corner as `Dim3` (AMReX's `lbound(a)`).
        #[inline]
        #[must_use]
        pub fn lbound(&self) -> Dim3 {
            self.raw.begin.dim3()
        }

        /// Inclusive high corner as `Dim3` (AMReX's `ubound(a)`, `end - 1`).
        #[inline]
        #[must_use]
        pub fn ubound(&self) -> Dim3 {
            (self.raw.end - 1).dim3()
        }

        /// Extents as `Dim3` (AMReX's `length(a)`, `end - begin`).
        #[inline]
        #[must_use]
        pub fn length(&self) -> Dim3 {
            (self.raw.end - self.raw.begin).dim3()
        }

        /// The spatial bounds as a cell-centred box `begin ..= end - 1`.
        #[inline]
        #[must_use]
        pub fn index_box(&self) -> IndexBox {
            self.raw.index_box()
        }

        /// Stride of `j` in elements (the stride of `i` is 1).
        #[inline]
        #[must_use]
        pub fn jstride(&self) -> usize {
            self.raw.jstride
        }

        /// Stride of `k` in elements.
        #[inline]
        #[must_use]
        pub fn kstride(&self) -> usize {
            self.raw.kstride
        }

        /// Stride of the component `n` in elements.
        #[inline]
        #[must_use]
        pub fn nstride(&self) -> usize {
            self.raw.nstride
        }

        /// Number of components.
        #[inline]
        #[must_use]
        pub fn ncomp(&self) -> usize {
            self.raw.ncomp
        }

        /// Number of elements, `nx * ny * nz * ncomp`.
        #[inline]
        #[must_use]
        pub fn len(&self) -> usize {
            self.raw.len()
        }

        /// `true` if the view has no element.
        #[inline]
        #[must_use]
        pub fn is_empty(&self) -> bool {
            self.raw.len() == 0
        }

        /// `true` if `(i, j, k)` lies in the spatial bounds (components are not checked,
        /// as in AMReX).
        #[inline]
        #[must_use]
        pub fn contains(&self, i: i32, j: i32, k: i32) -> bool {
            self.raw.contains(i, j, k)
        }

        /// `true` if the point `p` lies in the spatial bounds.
        #[inline]
        #[must_use]
        pub fn contains_iv(&self, p: IntVect) -> bool {
            self.raw.contains_iv(p)
        }

        /// Element offset of `(i, j, k, n)` from [`as_ptr`](Self::as_ptr), `None` when
        /// out of bounds.
        #[inline]
        #[must_use]
        pub fn offset_of(&self, i: i32, j: i32, k: i32, n: usize) -> Option<usize> {
            self.raw.offset(i, j, k, n)
        }
    };
}

#[cold]
#[inline(never)]
#[track_caller]
fn out_of_bounds<T>(raw: &Raw<T>, i: i32, j: i32, k: i32, n: usize) -> ! {
    panic!(
        "Array4 index (i, j, k, n) = ({i}, {j}, {k}, {n}) is out of bounds: \
         begin {}, end {} (exclusive), ncomp {}",
        raw.begin, raw.end, raw.ncomp
    )
}

#[cold]
#[inline(never)]
#[track_caller]
fn box_outside<T>(raw: &Raw<T>, bx: &IndexBox, what: &str) -> ! {
    panic!(
        "Array4::{what}: box {bx} is empty or not inside the view's bounds begin {}, end {} (exclusive)",
        raw.begin, raw.end
    )
}

#[cold]
#[inline(never)]
#[track_caller]
fn comps_outside(start: usize, count: usize, ncomp: usize) -> ! {
    panic!(
        "Array4: components {start}..{start}+{count} are not within the view's {ncomp} components"
    )
}

impl<'a, T> Array4<'a, T> {
    /// Wraps a pointer and layout.
    ///
    /// # Safety
    /// `raw` satisfies `Array4`'s invariants 1–4 for `'a`.
    #[inline(always)]
    pub(crate) unsafe fn from_raw(raw: Raw<T>) -> Self {
        Self {
            raw,
            _marker: PhantomData,
        }
    }

    /// A view of `data` laid out as AMReX's `BaseFab` does: box `bx` in Fortran order
    /// (`i` fastest), then `ncomp` components, with global indices starting at
    /// `bx.small_end()`. The box's index type does not matter. `data` may be longer than
    /// needed.
    ///
    /// # Panics
    /// If `data` is shorter than `bx.num_pts() * ncomp`; see [`try_new`](Self::try_new).
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn new(data: &'a [T], bx: IndexBox, ncomp: usize) -> Self {
        match Self::try_new(data, bx, ncomp) {
            Ok(a) => a,
            Err(e) => panic!("{e}"),
        }
    }

    /// As [`new`](Self::new), returning an error instead of panicking.
    ///
    /// # Errors
    /// [`Array4Error::SliceTooShort`] or [`Array4Error::TooLarge`].
    #[inline]
    pub fn try_new(data: &'a [T], bx: IndexBox, ncomp: usize) -> Result<Self, Array4Error> {
        let ptr = NonNull::from(data).cast::<T>();
        let raw = compact(ptr, data.len(), &bx, ncomp)?;
        // Invariants: compact strides over a slice of at least `needed` elements (2); a
        // dangling pointer when empty (3); a shared borrow for 'a (4).
        Ok(Self {
            raw,
            _marker: PhantomData,
        })
    }

    /// A view from raw parts, AMReX's `Array4(p, begin, end, ncomp)` with explicit strides.
    ///
    /// # Safety
    /// 1. `begin <= end` component-wise.
    /// 2. If `(end - begin)` has no zero component and `ncomp > 0`: for every
    ///    `begin <= (i, j, k) < end` and `n < ncomp`, `ptr` offset by
    ///    `(i-begin.x) + (j-begin.y)*jstride + (k-begin.z)*kstride + n*nstride` elements
    ///    stays inside one allocation, the offset fits `isize`, and it points to an
    ///    initialised, aligned `T`.
    /// 3. Otherwise `ptr` is non-null and aligned.
    /// 4. Those elements are not written by anyone during `'a`.
    ///
    /// # Panics
    /// If `begin .. end` is not a box of the `i32` index space (`begin > end`, or a
    /// length `end - begin` above `i32::MAX`, which a view could not report through
    /// [`length`](Self::length)) or the largest offset overflows `usize`: see
    /// [`FabLayout::with_strides`].
    #[inline]
    #[must_use]
    #[track_caller]
    pub unsafe fn from_raw_parts(
        ptr: *const T,
        begin: IntVect,
        end: IntVect,
        strides: [usize; 3],
        ncomp: usize,
    ) -> Self {
        let layout = match FabLayout::with_strides(begin, end, strides, ncomp) {
            Ok(l) => l,
            Err(e) => panic!("Array4::from_raw_parts: {begin} .. {end}: {e}"),
        };
        debug_assert!(
            !ptr.is_null() && ptr.is_aligned(),
            "Array4::from_raw_parts: bad pointer"
        );
        // SAFETY: caller obligation 3 (non-null) and 2.
        let ptr = unsafe { NonNull::new_unchecked(ptr.cast_mut()) };
        Self {
            raw: Raw { ptr, layout },
            _marker: PhantomData,
        }
    }

    common_methods!();

    /// Reference to `a(i, j, k, n)`, `None` out of bounds.
    #[inline]
    #[must_use]
    pub fn get(&self, i: i32, j: i32, k: i32, n: usize) -> Option<&'a T> {
        let off = self.raw.offset(i, j, k, n)?;
        // SAFETY: in bounds, so invariant 2 makes `ptr + off` a live, initialised T that
        // nobody writes during 'a (invariant 4).
        Some(unsafe { &*self.raw.elem(off) })
    }

    /// Reference to `a(i, j, k, n)` without bounds checks (checked by `debug_assert!`).
    ///
    /// # Safety
    /// `(i, j, k)` lies in `begin .. end` and `n < ncomp`.
    #[inline(always)]
    #[must_use]
    pub unsafe fn get_unchecked(&self, i: i32, j: i32, k: i32, n: usize) -> &'a T {
        debug_assert!(
            self.raw.offset(i, j, k, n).is_some(),
            "Array4::get_unchecked: ({i}, {j}, {k}, {n}) is out of bounds"
        );
        let off = self.raw.offset_unchecked(i, j, k, n);
        // SAFETY: the caller guarantees bounds, so by invariant 2 `off` reaches an element
        // of the view.
        let p = unsafe { self.raw.ptr.as_ptr().offset(off) };
        // SAFETY: that element is initialised and not written during 'a (invariants 2, 4).
        unsafe { &*p }
    }

    /// The components of cell `(i, j, k)`, AMReX's `cellData(i, j, k)`.
    ///
    /// # Panics
    /// If the cell is out of bounds.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn cell_data(&self, i: i32, j: i32, k: i32) -> CellData<'a, T> {
        if !self.raw.contains(i, j, k) {
            out_of_bounds(&self.raw, i, j, k, 0);
        }
        let raw = self
            .raw
            .restrict(&IndexBox::new(IntVect::new(i, j, k), IntVect::new(i, j, k)));
        CellData {
            ptr: raw.ptr,
            nstride: raw.nstride,
            ncomp: raw.ncomp,
            _marker: PhantomData,
        }
    }

    /// The `i`-row `a(begin.x .. end.x, j, k, n)` as a slice.
    ///
    /// # Panics
    /// If `(j, k, n)` is out of bounds.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn row(&self, j: i32, k: i32, n: usize) -> &'a [T] {
        if !self.raw.row_in_bounds(j, k, n) {
            out_of_bounds(&self.raw, self.raw.begin[0], j, k, n);
        }
        let nx = self.raw.len_dir(0);
        match self.raw.offset(self.raw.begin[0], j, k, n) {
            // SAFETY: the row's `nx` elements have unit stride and are in bounds
            // (invariant 2); shared for 'a (invariant 4).
            Some(off) => unsafe { core::slice::from_raw_parts(self.raw.elem(off), nx) },
            // `(j, k, n)` is in bounds, so only `nx == 0` gets here.
            None => &[],
        }
    }

    /// The single component `n` (AMReX's `Array4(a, n, 1)`).
    ///
    /// # Panics
    /// If `n >= ncomp`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn component(&self, n: usize) -> Self {
        self.components(n, 1)
    }

    /// Components `start .. start + count` as a view whose component 0 is `start`
    /// (AMReX's `Array4(a, start, count)`); strides are kept.
    ///
    /// # Panics
    /// If `start + count > ncomp`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn components(&self, start: usize, count: usize) -> Self {
        if start.checked_add(count).is_none_or(|e| e > self.raw.ncomp) {
            comps_outside(start, count, self.raw.ncomp);
        }
        // Same memory, fewer elements: invariants kept.
        Self {
            raw: self.raw.comps(start, count),
            _marker: PhantomData,
        }
    }

    /// The part of the view over `bx` (any index type), keeping global indices and
    /// strides; `None` unless `bx` is non-empty and inside the bounds.
    #[inline]
    #[must_use]
    pub fn try_sub_box(&self, bx: &IndexBox) -> Option<Self> {
        // Same memory, fewer elements: invariants kept.
        self.raw.covers(bx).then(|| Self {
            raw: self.raw.restrict(bx),
            _marker: PhantomData,
        })
    }

    /// As [`try_sub_box`](Self::try_sub_box).
    ///
    /// # Panics
    /// If `bx` is empty or not inside the bounds.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn sub_box(&self, bx: &IndexBox) -> Self {
        match self.try_sub_box(bx) {
            Some(a) => a,
            None => box_outside(&self.raw, bx, "sub_box"),
        }
    }

    /// Calls `f(i, j, k, n, &a(i, j, k, n))` for every cell of `bx` and every component,
    /// `i` fastest and `n` slowest. Bounds are checked once, up front; the inner loop
    /// runs over a slice.
    ///
    /// An empty `bx` does nothing.
    ///
    /// # Panics
    /// If `bx` is not empty and not inside the bounds.
    #[inline]
    #[track_caller]
    pub fn for_each(&self, bx: IndexBox, mut f: impl FnMut(i32, i32, i32, usize, &'a T)) {
        if bx.is_empty() {
            return;
        }
        let sub = self.sub_box(&bx);
        let x0 = bx.lo()[0];
        for n in 0..sub.ncomp() {
            for k in bx.lo()[2]..=bx.hi()[2] {
                for j in bx.lo()[1]..=bx.hi()[1] {
                    for (ii, v) in sub.row(j, k, n).iter().enumerate() {
                        f(x0.wrapping_add(ii as i32), j, k, n, v);
                    }
                }
            }
        }
    }
}

impl<'a, T> Array4Mut<'a, T> {
    /// A mutable view of `data` laid out as AMReX's `BaseFab` does; see [`Array4::new`].
    ///
    /// # Panics
    /// If `data` is shorter than `bx.num_pts() * ncomp`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn new(data: &'a mut [T], bx: IndexBox, ncomp: usize) -> Self {
        match Self::try_new(data, bx, ncomp) {
            Ok(a) => a,
            Err(e) => panic!("{e}"),
        }
    }

    /// As [`new`](Self::new), returning an error instead of panicking.
    ///
    /// # Errors
    /// [`Array4Error::SliceTooShort`] or [`Array4Error::TooLarge`].
    #[inline]
    pub fn try_new(data: &'a mut [T], bx: IndexBox, ncomp: usize) -> Result<Self, Array4Error> {
        let len = data.len();
        let ptr = NonNull::from(data).cast::<T>();
        let raw = compact(ptr, len, &bx, ncomp)?;
        // Invariants: compact strides (distinct offsets) over a slice of at least `needed`
        // elements (2, 5); dangling when empty (3); unique borrow for 'a (5).
        Ok(Self {
            raw,
            _marker: PhantomData,
        })
    }

    /// A mutable view from raw parts.
    ///
    /// # Safety
    /// As [`Array4::from_raw_parts`] items 1–3, and in place of item 4:
    /// 4. distinct in-bounds indices reach distinct elements, and nothing else reads or
    ///    writes those elements during `'a`.
    ///
    /// # Panics
    /// As [`Array4::from_raw_parts`].
    #[inline]
    #[must_use]
    #[track_caller]
    pub unsafe fn from_raw_parts(
        ptr: *mut T,
        begin: IntVect,
        end: IntVect,
        strides: [usize; 3],
        ncomp: usize,
    ) -> Self {
        // SAFETY: items 1–3 forwarded; item 4 is stronger than `Array4`'s.
        let a = unsafe { Array4::from_raw_parts(ptr, begin, end, strides, ncomp) };
        Self {
            raw: a.raw,
            _marker: PhantomData,
        }
    }

    common_methods!();

    /// Wraps a pointer and layout.
    ///
    /// # Safety
    /// `raw` satisfies `Array4Mut`'s invariants 1–3 and 5 for `'a`.
    #[inline(always)]
    pub(crate) unsafe fn from_raw(raw: Raw<T>) -> Self {
        Self {
            raw,
            _marker: PhantomData,
        }
    }

    /// Mutable pointer to element `(begin.x, begin.y, begin.z, 0)` (dangling when empty).
    #[inline]
    #[must_use]
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.raw.ptr.as_ptr()
    }

    /// A shorter-lived mutable view of the same elements.
    #[inline]
    #[must_use]
    pub fn reborrow(&mut self) -> Array4Mut<'_, T> {
        Array4Mut {
            raw: self.raw,
            _marker: PhantomData,
        }
    }

    /// A shared view of the same elements for as long as `self` is borrowed (AMReX's
    /// implicit `Array4<T>` → `Array4<T const>`).
    #[inline]
    #[must_use]
    pub fn as_const(&self) -> Array4<'_, T> {
        Array4 {
            raw: self.raw,
            _marker: PhantomData,
        }
    }

    /// Turns the unique view into a shared one for the rest of `'a`.
    #[inline]
    #[must_use]
    pub fn into_const(self) -> Array4<'a, T> {
        Array4 {
            raw: self.raw,
            _marker: PhantomData,
        }
    }

    /// Reference to `a(i, j, k, n)`, `None` out of bounds.
    #[inline]
    #[must_use]
    pub fn get(&self, i: i32, j: i32, k: i32, n: usize) -> Option<&T> {
        self.as_const().get(i, j, k, n)
    }

    /// Mutable reference to `a(i, j, k, n)`, `None` out of bounds.
    #[inline]
    #[must_use]
    pub fn get_mut(&mut self, i: i32, j: i32, k: i32, n: usize) -> Option<&mut T> {
        let off = self.raw.offset(i, j, k, n)?;
        // SAFETY: in bounds: a live element (invariant 2) that only this view, borrowed
        // mutably here, may access (invariant 5).
        Some(unsafe { &mut *self.raw.elem(off) })
    }

    /// Reference to `a(i, j, k, n)` without bounds checks (checked by `debug_assert!`).
    ///
    /// # Safety
    /// `(i, j, k)` lies in `begin .. end` and `n < ncomp`.
    #[inline(always)]
    #[must_use]
    pub unsafe fn get_unchecked(&self, i: i32, j: i32, k: i32, n: usize) -> &T {
        // SAFETY: forwarded.
        unsafe { self.as_const().get_unchecked(i, j, k, n) }
    }

    /// Mutable reference to `a(i, j, k, n)` without bounds checks (checked by
    /// `debug_assert!`).
    ///
    /// # Safety
    /// `(i, j, k)` lies in `begin .. end` and `n < ncomp`.
    #[inline(always)]
    #[must_use]
    pub unsafe fn get_unchecked_mut(&mut self, i: i32, j: i32, k: i32, n: usize) -> &mut T {
        debug_assert!(
            self.raw.offset(i, j, k, n).is_some(),
            "Array4Mut::get_unchecked_mut: ({i}, {j}, {k}, {n}) is out of bounds"
        );
        let off = self.raw.offset_unchecked(i, j, k, n);
        // SAFETY: the caller guarantees bounds, so `off` reaches an element (invariant 2).
        let p = unsafe { self.raw.ptr.as_ptr().offset(off) };
        // SAFETY: a live element that only this (mutably borrowed) view accesses (5).
        unsafe { &mut *p }
    }

    /// The components of cell `(i, j, k)`.
    ///
    /// # Panics
    /// If the cell is out of bounds.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn cell_data(&self, i: i32, j: i32, k: i32) -> CellData<'_, T> {
        self.as_const().cell_data(i, j, k)
    }

    /// The mutable components of cell `(i, j, k)`, AMReX's `cellData(i, j, k)`.
    ///
    /// # Panics
    /// If the cell is out of bounds.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn cell_data_mut(&mut self, i: i32, j: i32, k: i32) -> CellDataMut<'_, T> {
        let c = self.as_const().cell_data(i, j, k);
        CellDataMut {
            ptr: c.ptr,
            nstride: c.nstride,
            ncomp: c.ncomp,
            _marker: PhantomData,
        }
    }

    /// The `i`-row at `(j, k, n)` as a slice.
    ///
    /// # Panics
    /// If `(j, k, n)` is out of bounds.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn row(&self, j: i32, k: i32, n: usize) -> &[T] {
        self.as_const().row(j, k, n)
    }

    /// The `i`-row at `(j, k, n)` as a mutable slice.
    ///
    /// # Panics
    /// If `(j, k, n)` is out of bounds.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn row_mut(&mut self, j: i32, k: i32, n: usize) -> &mut [T] {
        if !self.raw.row_in_bounds(j, k, n) {
            out_of_bounds(&self.raw, self.raw.begin[0], j, k, n);
        }
        let nx = self.raw.len_dir(0);
        match self.raw.offset(self.raw.begin[0], j, k, n) {
            // SAFETY: the row's `nx` elements have unit stride and are in bounds
            // (invariant 2); the pointer comes from the view's own (writable) pointer, not
            // from a shared reference, and only this mutably borrowed view accesses the
            // elements (invariant 5).
            Some(off) => unsafe { core::slice::from_raw_parts_mut(self.raw.elem(off), nx) },
            // `(j, k, n)` is in bounds, so only `nx == 0` gets here.
            None => &mut [],
        }
    }

    /// Component `n` only, borrowing `self`.
    ///
    /// # Panics
    /// If `n >= ncomp`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn component_mut(&mut self, n: usize) -> Array4Mut<'_, T> {
        self.reborrow().into_components(n, 1)
    }

    /// Components `start .. start + count`, borrowing `self`.
    ///
    /// # Panics
    /// If `start + count > ncomp`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn components_mut(&mut self, start: usize, count: usize) -> Array4Mut<'_, T> {
        self.reborrow().into_components(start, count)
    }

    /// Components `start .. start + count` for the rest of `'a`.
    ///
    /// # Panics
    /// If `start + count > ncomp`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn into_components(self, start: usize, count: usize) -> Self {
        let raw = self.as_const().components(start, count).raw;
        // Subset of this view's elements: invariants kept.
        Self {
            raw,
            _marker: PhantomData,
        }
    }

    /// The part over `bx`, borrowing `self`; `None` unless `bx` is non-empty and inside.
    #[inline]
    #[must_use]
    pub fn try_sub_box_mut(&mut self, bx: &IndexBox) -> Option<Array4Mut<'_, T>> {
        self.reborrow().try_into_sub_box(bx)
    }

    /// The part over `bx`, borrowing `self`.
    ///
    /// # Panics
    /// If `bx` is empty or not inside the bounds.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn sub_box_mut(&mut self, bx: &IndexBox) -> Array4Mut<'_, T> {
        self.reborrow().into_sub_box(bx)
    }

    /// The part over `bx` for the rest of `'a`; `None` unless `bx` is non-empty and inside.
    #[inline]
    #[must_use]
    pub fn try_into_sub_box(self, bx: &IndexBox) -> Option<Self> {
        // Subset of this view's elements: invariants kept.
        self.raw.covers(bx).then(|| Self {
            raw: self.raw.restrict(bx),
            _marker: PhantomData,
        })
    }

    /// The part over `bx` for the rest of `'a`.
    ///
    /// # Panics
    /// If `bx` is empty or not inside the bounds.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn into_sub_box(self, bx: &IndexBox) -> Self {
        let raw = self.raw;
        match self.try_into_sub_box(bx) {
            Some(a) => a,
            None => box_outside(&raw, bx, "sub_box_mut"),
        }
    }

    /// Splits into the cells below `idx` and those from `idx` up in direction `dir`
    /// (`idx` is clamped to the bounds, so one part may be empty). The two views are
    /// disjoint, so they can go to different threads (like `split_at_mut`).
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn split_at(self, dir: usize, idx: i32) -> (Self, Self) {
        assert!(
            dir < 3,
            "Array4Mut::split_at: direction {dir} is not 0, 1 or 2"
        );
        let idx = idx.clamp(self.raw.begin[dir], self.raw.end[dir]);
        let mut lo = self.raw;
        let mut hi = self.raw;
        lo.end[dir] = idx;
        hi.begin[dir] = idx;
        let part = |r: Raw<T>| {
            let r = if r.is_empty() {
                Raw {
                    ptr: NonNull::dangling(),
                    layout: r.layout,
                }
            } else {
                // Non-empty, so its box is inside the original bounds.
                self.raw.restrict(&r.index_box())
            };
            // Disjoint subsets of this view's elements: each keeps the invariants, and
            // neither touches the other's elements (invariant 5 holds for both).
            Array4Mut {
                raw: r,
                _marker: PhantomData,
            }
        };
        (part(lo), part(hi))
    }

    /// Calls `f(i, j, k, n, &mut a(i, j, k, n))` for every cell of `bx` and every
    /// component, `i` fastest and `n` slowest. Bounds are checked once, up front; the
    /// inner loop runs over a slice, so the compiler vectorises it.
    ///
    /// An empty `bx` does nothing.
    ///
    /// # Panics
    /// If `bx` is not empty and not inside the bounds.
    #[inline]
    #[track_caller]
    pub fn for_each_mut(&mut self, bx: IndexBox, mut f: impl FnMut(i32, i32, i32, usize, &mut T)) {
        if bx.is_empty() {
            return;
        }
        let mut sub = self.sub_box_mut(&bx);
        let x0 = bx.lo()[0];
        for n in 0..sub.ncomp() {
            for k in bx.lo()[2]..=bx.hi()[2] {
                for j in bx.lo()[1]..=bx.hi()[1] {
                    for (ii, v) in sub.row_mut(j, k, n).iter_mut().enumerate() {
                        f(x0.wrapping_add(ii as i32), j, k, n, v);
                    }
                }
            }
        }
    }

    /// Sets every element over `bx` (all components) to `v`.
    ///
    /// An empty `bx` does nothing.
    ///
    /// # Panics
    /// If `bx` is not empty and not inside the bounds.
    #[inline]
    #[track_caller]
    pub fn fill(&mut self, bx: IndexBox, v: T)
    where
        T: Clone,
    {
        if bx.is_empty() {
            return;
        }
        let mut sub = self.sub_box_mut(&bx);
        for n in 0..sub.ncomp() {
            for k in bx.lo()[2]..=bx.hi()[2] {
                for j in bx.lo()[1]..=bx.hi()[1] {
                    sub.row_mut(j, k, n).fill(v.clone());
                }
            }
        }
    }

    /// Calls `f(&mut self(i, j, k, n), &src(i, j, k, n))` for every cell of `bx` and
    /// every component of `self` (ndarray's `zip_mut_with`). Bounds are checked once; the
    /// inner loop zips two slices, which the compiler vectorises.
    ///
    /// An empty `bx` does nothing.
    ///
    /// # Panics
    /// If `bx` is not empty and not inside both views, or `src` has fewer components.
    #[inline]
    #[track_caller]
    pub fn zip_mut_with<U>(
        &mut self,
        src: Array4<'_, U>,
        bx: IndexBox,
        mut f: impl FnMut(&mut T, &U),
    ) {
        if bx.is_empty() {
            return;
        }
        let mut dst = self.sub_box_mut(&bx);
        let src = src.sub_box(&bx);
        assert!(
            src.ncomp() >= dst.ncomp(),
            "Array4Mut::zip_mut_with: the source has {} components, the destination {}",
            src.ncomp(),
            dst.ncomp()
        );
        for n in 0..dst.ncomp() {
            for k in bx.lo()[2]..=bx.hi()[2] {
                for j in bx.lo()[1]..=bx.hi()[1] {
                    let s = src.row(j, k, n);
                    for (d, s) in dst.row_mut(j, k, n).iter_mut().zip(s) {
                        f(d, s);
                    }
                }
            }
        }
    }
}

impl<'a, T> From<Array4Mut<'a, T>> for Array4<'a, T> {
    #[inline]
    fn from(a: Array4Mut<'a, T>) -> Self {
        a.into_const()
    }
}

impl<T> fmt::Debug for Array4<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_layout("Array4", &self.raw, f)
    }
}

impl<T> fmt::Debug for Array4Mut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_layout("Array4Mut", &self.raw, f)
    }
}

fn debug_layout<T>(name: &str, raw: &Raw<T>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    f.debug_struct(name)
        .field("ptr", &raw.ptr)
        .field("begin", &raw.begin)
        .field("end", &raw.end)
        .field("jstride", &raw.jstride)
        .field("kstride", &raw.kstride)
        .field("nstride", &raw.nstride)
        .field("ncomp", &raw.ncomp)
        .finish()
}

macro_rules! index_impls {
    ($ty:ident) => {
        impl<T> Index<(i32, i32, i32, usize)> for $ty<'_, T> {
            type Output = T;
            /// `a[(i, j, k, n)]` with global indices.
            #[inline]
            #[track_caller]
            fn index(&self, (i, j, k, n): (i32, i32, i32, usize)) -> &T {
                match self.raw.offset(i, j, k, n) {
                    // SAFETY: in bounds: a live element (invariant 2), shared for the
                    // borrow of `self` (invariants 4, 5).
                    Some(off) => unsafe { &*self.raw.elem(off) },
                    None => out_of_bounds(&self.raw, i, j, k, n),
                }
            }
        }

        impl<T> Index<(i32, i32, i32)> for $ty<'_, T> {
            type Output = T;
            /// `a[(i, j, k)]`: component 0.
            #[inline]
            #[track_caller]
            fn index(&self, (i, j, k): (i32, i32, i32)) -> &T {
                &self[(i, j, k, 0)]
            }
        }

        impl<T> Index<IntVect> for $ty<'_, T> {
            type Output = T;
            /// `a[p]`: component 0 at point `p`.
            #[inline]
            #[track_caller]
            fn index(&self, p: IntVect) -> &T {
                &self[(p[0], p[1], p[2], 0)]
            }
        }

        impl<T> Index<(IntVect, usize)> for $ty<'_, T> {
            type Output = T;
            /// `a[(p, n)]`: component `n` at point `p`.
            #[inline]
            #[track_caller]
            fn index(&self, (p, n): (IntVect, usize)) -> &T {
                &self[(p[0], p[1], p[2], n)]
            }
        }
    };
}

index_impls!(Array4);
index_impls!(Array4Mut);

impl<T> IndexMut<(i32, i32, i32, usize)> for Array4Mut<'_, T> {
    #[inline]
    #[track_caller]
    fn index_mut(&mut self, (i, j, k, n): (i32, i32, i32, usize)) -> &mut T {
        match self.raw.offset(i, j, k, n) {
            // SAFETY: in bounds: a live element (invariant 2) that only this mutably
            // borrowed view accesses (invariant 5).
            Some(off) => unsafe { &mut *self.raw.elem(off) },
            None => out_of_bounds(&self.raw, i, j, k, n),
        }
    }
}

impl<T> IndexMut<(i32, i32, i32)> for Array4Mut<'_, T> {
    #[inline]
    #[track_caller]
    fn index_mut(&mut self, (i, j, k): (i32, i32, i32)) -> &mut T {
        &mut self[(i, j, k, 0)]
    }
}

impl<T> IndexMut<IntVect> for Array4Mut<'_, T> {
    #[inline]
    #[track_caller]
    fn index_mut(&mut self, p: IntVect) -> &mut T {
        &mut self[(p[0], p[1], p[2], 0)]
    }
}

impl<T> IndexMut<(IntVect, usize)> for Array4Mut<'_, T> {
    #[inline]
    #[track_caller]
    fn index_mut(&mut self, (p, n): (IntVect, usize)) -> &mut T {
        &mut self[(p[0], p[1], p[2], n)]
    }
}

// Invariants of `CellData`/`CellDataMut`: `ptr` is cell `(i, j, k)`'s component 0 in a
// view whose invariants hold for `'a`; components `0 .. ncomp` are at `ptr + n*nstride`;
// if `ncomp == 0`, `ptr` may dangle. `CellDataMut` has unique access, like `Array4Mut`.

/// The components of one cell (AMReX's `CellData`), from [`Array4::cell_data`].
pub struct CellData<'a, T> {
    ptr: NonNull<T>,
    nstride: usize,
    ncomp: usize,
    _marker: PhantomData<&'a [T]>,
}

/// The mutable components of one cell, from [`Array4Mut::cell_data_mut`].
pub struct CellDataMut<'a, T> {
    ptr: NonNull<T>,
    nstride: usize,
    ncomp: usize,
    _marker: PhantomData<&'a mut [T]>,
}

// SAFETY: a shared borrow of `T`s.
unsafe impl<T: Sync> Send for CellData<'_, T> {}
// SAFETY: a shared borrow of `T`s.
unsafe impl<T: Sync> Sync for CellData<'_, T> {}
// SAFETY: a unique borrow of `T`s.
unsafe impl<T: Send> Send for CellDataMut<'_, T> {}
// SAFETY: shared access only reads.
unsafe impl<T: Sync> Sync for CellDataMut<'_, T> {}

impl<T> Clone for CellData<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for CellData<'_, T> {}

impl<'a, T> CellData<'a, T> {
    /// Number of components.
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.ncomp
    }

    /// `true` if there is no component.
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ncomp == 0
    }

    /// Component `n`, `None` if `n >= len()`.
    #[inline]
    #[must_use]
    pub fn get(&self, n: usize) -> Option<&'a T> {
        // SAFETY: `n < ncomp`: a live element of the cell, shared for 'a.
        (n < self.ncomp).then(|| unsafe { &*self.ptr.as_ptr().wrapping_add(n * self.nstride) })
    }
}

impl<T> CellDataMut<'_, T> {
    /// Number of components.
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.ncomp
    }

    /// `true` if there is no component.
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ncomp == 0
    }

    /// Component `n`, `None` if `n >= len()`.
    #[inline]
    #[must_use]
    pub fn get(&self, n: usize) -> Option<&T> {
        // SAFETY: `n < ncomp`: a live element of the cell.
        (n < self.ncomp).then(|| unsafe { &*self.ptr.as_ptr().wrapping_add(n * self.nstride) })
    }

    /// Mutable component `n`, `None` if `n >= len()`.
    #[inline]
    #[must_use]
    pub fn get_mut(&mut self, n: usize) -> Option<&mut T> {
        // SAFETY: `n < ncomp`: a live element of the cell, uniquely borrowed.
        (n < self.ncomp).then(|| unsafe { &mut *self.ptr.as_ptr().wrapping_add(n * self.nstride) })
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn comp_oob(n: usize, ncomp: usize) -> ! {
    panic!("CellData: component {n} is out of bounds (ncomp {ncomp})")
}

impl<T> Index<usize> for CellData<'_, T> {
    type Output = T;
    #[inline]
    #[track_caller]
    fn index(&self, n: usize) -> &T {
        self.get(n).unwrap_or_else(|| comp_oob(n, self.ncomp))
    }
}

impl<T> Index<usize> for CellDataMut<'_, T> {
    type Output = T;
    #[inline]
    #[track_caller]
    fn index(&self, n: usize) -> &T {
        self.get(n).unwrap_or_else(|| comp_oob(n, self.ncomp))
    }
}

impl<T> IndexMut<usize> for CellDataMut<'_, T> {
    #[inline]
    #[track_caller]
    fn index_mut(&mut self, n: usize) -> &mut T {
        let ncomp = self.ncomp;
        self.get_mut(n).unwrap_or_else(|| comp_oob(n, ncomp))
    }
}

impl<T> fmt::Debug for CellData<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CellData")
            .field("ncomp", &self.ncomp)
            .finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for CellDataMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CellDataMut")
            .field("ncomp", &self.ncomp)
            .finish_non_exhaustive()
    }
}
