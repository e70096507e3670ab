//! `Array4` (shared) and `Array4Mut` (unique) views: the types, their invariants and
//! what both flavours share; each flavour's methods live in a file of its own
//! (`shared.rs`, `mutable.rs`), indexing in `index.rs`, per-cell views in `cell.rs`.

use core::fmt;
use core::marker::PhantomData;
use core::ptr::NonNull;

use amrex_box::IndexBox;

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

mod cell;
mod index;
mod mutable;
mod shared;

pub use cell::{CellData, CellDataMut};
