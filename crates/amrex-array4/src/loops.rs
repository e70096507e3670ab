//! Loop helpers: plain cell loops and safe, vectorisable stencil loops.
//!
//! Three ways to write a kernel, from most to least convenient:
//!
//! 1. [`Array4Mut::for_each_mut`], [`Array4Mut::zip_mut_with`] and
//!    [`Array4Mut::stencil_mut_with`] check the box against the views **once**, then run
//!    the innermost loop over slices (or, for stencils, over pointers whose neighbour
//!    offsets are checked against a compile-time radius), so the compiler vectorises it
//!    along `i`. They are safe.
//! 2. [`for_each_cell`] / [`for_each_cell_n`] are AMReX's `ParallelFor` on one thread: they
//!    call a closure with `(i, j, k)`. With `a[(i, j, k, n)]` (checked) the bounds checks
//!    usually stop vectorisation; with `unsafe` [`Array4::get_unchecked`] the loop
//!    compiles to the same code as a raw-pointer loop.
//! 3. [`Array4::row`] / [`Array4Mut::row_mut`] hand out `i`-rows as slices for
//!    hand-written loops.
//!
//! For threads, split the work with [`IndexBox::tiles`] (shared views are `Copy + Sync`)
//! or [`Array4Mut::into_tiles`] / [`Array4Mut::split_at`] (disjoint mutable views).

use core::marker::PhantomData;
use core::ptr::NonNull;

use amrex_box::{IndexBox, IntVect};

use crate::array4::{Array4, Array4Mut};

/// Calls `f(i, j, k)` for every cell of `bx`, `i` fastest (AMReX's `ParallelFor(bx, f)`
/// on one thread). An empty box does nothing.
///
/// ```
/// use amrex_array4::{Array4Mut, IndexBox, IntVect, for_each_cell};
/// let bx = IndexBox::new(IntVect::ZERO, IntVect::new(7, 7, 7));
/// let mut data = vec![0_i32; 512];
/// let mut a = Array4Mut::new(&mut data, bx, 1);
/// for_each_cell(bx, |i, j, k| a[(i, j, k)] = i + 10 * j + 100 * k);
/// assert_eq!(a[(7, 6, 5)], 567);
/// ```
#[inline(always)]
pub fn for_each_cell(bx: IndexBox, mut f: impl FnMut(i32, i32, i32)) {
    if bx.is_empty() {
        return;
    }
    let (lo, hi) = (bx.lo(), bx.hi());
    // `hi.x - lo.x` may exceed i32::MAX; count in u32 and add with wrapping (the sum is
    // always in `lo.x ..= hi.x`).
    let nx = (i64::from(hi[0]) - i64::from(lo[0]) + 1) as u64;
    for k in lo[2]..=hi[2] {
        for j in lo[1]..=hi[1] {
            for ii in 0..nx {
                f(lo[0].wrapping_add(ii as i32), j, k);
            }
        }
    }
}

/// Calls `f(i, j, k, n)` for every cell of `bx` and every `n < ncomp`, `i` fastest and
/// `n` slowest (AMReX's `ParallelFor(bx, ncomp, f)` on one thread).
#[inline(always)]
pub fn for_each_cell_n(bx: IndexBox, ncomp: usize, mut f: impl FnMut(i32, i32, i32, usize)) {
    for n in 0..ncomp {
        for_each_cell(bx, |i, j, k| f(i, j, k, n));
    }
}

/// The neighbourhood of one cell of a source view, handed to the closure of
/// [`Array4Mut::stencil_mut_with`]. Offsets up to `R` in each direction are readable.
///
/// Invariant: every `ptr + di + dj*jstride + dk*kstride` with `|di|, |dj|, |dk| <= R`
/// is a live element of a shared view, valid for `'a`.
pub struct Stencil<'a, T, const R: i32> {
    ptr: NonNull<T>,
    jstride: isize,
    kstride: isize,
    _marker: PhantomData<&'a T>,
}

impl<T, const R: i32> Clone for Stencil<'_, T, R> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, const R: i32> Copy for Stencil<'_, T, R> {}

impl<'a, T, const R: i32> Stencil<'a, T, R> {
    /// The value at offset `(di, dj, dk)` from the centre cell. With constant offsets (the
    /// usual case) the radius check folds away at compile time.
    ///
    /// # Panics
    /// If an offset exceeds the radius `R`.
    #[inline(always)]
    #[must_use]
    #[track_caller]
    pub fn at(&self, di: i32, dj: i32, dk: i32) -> &'a T {
        assert!(
            di.abs() <= R && dj.abs() <= R && dk.abs() <= R,
            "Stencil::at: offset ({di}, {dj}, {dk}) exceeds the radius {R}"
        );
        let off = di as isize + dj as isize * self.jstride + dk as isize * self.kstride;
        // SAFETY: within the radius, so by the invariant the element is live for 'a.
        let p = unsafe { self.ptr.as_ptr().offset(off) };
        // SAFETY: a live element of a shared view.
        unsafe { &*p }
    }

    /// The centre value, `at(0, 0, 0)`.
    #[inline(always)]
    #[must_use]
    pub fn center(&self) -> &'a T {
        self.at(0, 0, 0)
    }
}

impl<T, const R: i32> core::fmt::Debug for Stencil<'_, T, R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Stencil")
            .field("radius", &R)
            .finish_non_exhaustive()
    }
}

impl<'a, T> Array4Mut<'a, T> {
    /// Calls `f(&mut self(i, j, k, n), stencil)` for every cell of `bx` and every
    /// component of `self`, where `stencil.at(di, dj, dk)` reads `src(i+di, j+dj, k+dk, n)`
    /// for offsets up to the radius `R`. Bounds are checked once, up front (`bx` grown by
    /// `R` must lie inside `src`), so the loop vectorises along `i`.
    ///
    /// ```
    /// use amrex_array4::{Array4, Array4Mut, IndexBox, IntVect, Stencil};
    /// let valid = IndexBox::new(IntVect::ZERO, IntVect::splat(3));
    /// let grown = valid.grow(1);
    /// let phi: Vec<f64> = grown.iter().map(|p| f64::from(p.x() * p.x())).collect();
    /// let phi = Array4::new(&phi, grown, 1);
    /// let mut lap = vec![0.0; 64];
    /// let mut out = Array4Mut::new(&mut lap, valid, 1);
    /// out.stencil_mut_with(phi, valid, |o, s: Stencil<'_, f64, 1>| {
    ///     *o = s.at(-1, 0, 0) + s.at(1, 0, 0) + s.at(0, -1, 0) + s.at(0, 1, 0)
    ///         + s.at(0, 0, -1) + s.at(0, 0, 1) - 6.0 * s.center();
    /// });
    /// assert!(lap.iter().all(|&v| v == 2.0)); // d²(x²)/dx² = 2
    /// ```
    ///
    /// An empty `bx` does nothing.
    ///
    /// # Panics
    /// If `bx` is not inside `self`, `bx.grow(R)` is not inside `src`, `src` has fewer
    /// components than `self`, or `R < 0`.
    #[inline]
    #[track_caller]
    pub fn stencil_mut_with<U, const R: i32>(
        &mut self,
        src: Array4<'_, U>,
        bx: IndexBox,
        mut f: impl FnMut(&mut T, Stencil<'_, U, R>),
    ) {
        assert!(
            R >= 0,
            "Array4Mut::stencil_mut_with: radius {R} is negative"
        );
        if bx.is_empty() {
            return;
        }
        let mut dst = self.sub_box_mut(&bx);
        let halo = src.sub_box(&bx.grow(R));
        assert!(
            halo.ncomp() >= dst.ncomp(),
            "Array4Mut::stencil_mut_with: the source has {} components, the destination {}",
            halo.ncomp(),
            dst.ncomp()
        );
        let (jstride, kstride) = (halo.jstride() as isize, halo.kstride() as isize);
        let lo = bx.lo();
        for n in 0..dst.ncomp() {
            for k in lo[2]..=bx.hi()[2] {
                for j in lo[1]..=bx.hi()[1] {
                    // The row start `(lo.x, j, k, n)` is inside `halo` (bx ⊂ halo).
                    let row = halo.cell_ptr(lo[0], j, k, n);
                    for (ii, d) in dst.row_mut(j, k, n).iter_mut().enumerate() {
                        // SAFETY: `(lo.x + ii, j, k)` is in `bx`, so the pointer is a
                        // cell of `halo`, which is `bx` grown by `R` inside `src`.
                        let centre = unsafe { row.add(ii) };
                        // Invariant of `Stencil`: every offset within `R` of a cell of
                        // `bx` is in `halo`, a live shared view for this call.
                        let s = Stencil {
                            ptr: centre,
                            jstride,
                            kstride,
                            _marker: PhantomData,
                        };
                        f(d, s);
                    }
                }
            }
        }
    }

    /// Splits the view into disjoint tiles of at most `tile_size` cells (in the order of
    /// [`IndexBox::tiles`]), each a mutable view for the rest of `'a`, so tiles can go to
    /// different threads.
    ///
    /// ```
    /// use amrex_array4::{Array4Mut, IndexBox, IntVect};
    /// let bx = IndexBox::new(IntVect::ZERO, IntVect::new(7, 7, 0));
    /// let mut data = vec![0_u32; 64];
    /// let a = Array4Mut::new(&mut data, bx, 1);
    /// for (t, mut tile) in a.into_tiles(IntVect::new(4, 4, 1)).enumerate() {
    ///     let tb = tile.index_box();
    ///     tile.fill(tb, t as u32);
    /// }
    /// assert_eq!((data[0], data[4], data[32], data[63]), (0, 1, 2, 3));
    /// ```
    ///
    /// # Panics
    /// If a tile size is not positive.
    #[inline]
    #[track_caller]
    pub fn into_tiles(self, tile_size: IntVect) -> TilesMut<'a, T> {
        let tiles = self.index_box().tiles(tile_size);
        TilesMut {
            raw: self.raw,
            tiles,
            _marker: PhantomData,
        }
    }
}

impl<T> Array4<'_, T> {
    /// Pointer to `(i, j, k, n)` (checked by the caller to be in bounds).
    #[inline(always)]
    fn cell_ptr(&self, i: i32, j: i32, k: i32, n: usize) -> NonNull<T> {
        debug_assert!(self.raw.offset(i, j, k, n).is_some());
        let off = self.raw.offset_unchecked(i, j, k, n);
        // SAFETY: in bounds (checked by the caller), so the offset reaches an element of
        // the view (invariant 2).
        unsafe { self.raw.ptr.offset(off) }
    }
}

/// Iterator over disjoint mutable tiles of an [`Array4Mut`], from
/// [`Array4Mut::into_tiles`].
///
/// Invariant: `raw` describes a view with unique access for `'a`; every tile handed out
/// is a different tile of a partition of its box, so the tiles never share an element.
pub struct TilesMut<'a, T> {
    raw: crate::raw::Raw<T>,
    tiles: amrex_box::Tiles,
    _marker: PhantomData<&'a mut [T]>,
}

// SAFETY: hands out unique borrows of `T`s, like `ChunksMut`.
unsafe impl<T: Send> Send for TilesMut<'_, T> {}
// SAFETY: shared access reads nothing.
unsafe impl<T: Sync> Sync for TilesMut<'_, T> {}

impl<'a, T> TilesMut<'a, T> {
    fn make(&self, bx: IndexBox) -> Array4Mut<'a, T> {
        // SAFETY: a tile of a partition of the view's (non-empty) box: inside the bounds
        // (so invariants 1–3 carry over from the view), and disjoint from every other
        // tile (the iterator's invariant), so each tile's view is exclusive (5).
        unsafe { Array4Mut::from_raw(self.raw.restrict(&bx)) }
    }
}

impl<'a, T> Iterator for TilesMut<'a, T> {
    type Item = Array4Mut<'a, T>;

    #[inline]
    fn next(&mut self) -> Option<Array4Mut<'a, T>> {
        let bx = self.tiles.next()?;
        Some(self.make(bx))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.tiles.size_hint()
    }
}

impl<T> DoubleEndedIterator for TilesMut<'_, T> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        let bx = self.tiles.next_back()?;
        Some(self.make(bx))
    }
}

impl<T> ExactSizeIterator for TilesMut<'_, T> {}

impl<T> core::fmt::Debug for TilesMut<'_, T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TilesMut")
            .field("remaining", &self.tiles.len())
            .finish_non_exhaustive()
    }
}
