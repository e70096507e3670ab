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

mod kernel;

use core::marker::PhantomData;
use core::ptr::NonNull;

use amrex_box::{IndexBox, IntVect};

use crate::array4::{Array4, Array4Mut};

/// `lo + off` for the offset `off` of a point of a box (or row) that starts at `lo`, with
/// no branch: `off` is below the length, at most 2^32, and the sum is taken mod 2^32, so
/// its low 32 bits are all the sum needs; the true sum lies in the box, hence in `i32`.
#[inline(always)]
#[expect(
    clippy::cast_possible_truncation,
    reason = "only the low 32 bits of `off` matter to a wrapping i32 sum, whose true value is in the box"
)]
pub(crate) fn coord_at(lo: i32, off: u64) -> i32 {
    lo.wrapping_add(off as i32)
}

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
    let nx = (i64::from(hi[0]) - i64::from(lo[0]) + 1).cast_unsigned();
    for k in lo[2]..=hi[2] {
        for j in lo[1]..=hi[1] {
            for ii in 0..nx {
                f(coord_at(lo[0], ii), j, k);
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

/// One source of a stencil sweep over `bx`: the halo view `bx.grow(R)` of a source
/// array, checked by the caller, reduced to what the row loop needs.
///
/// Invariant: for every `(i, j, k)` in `bx`, every `n < count` (any `n` when `shared`)
/// and every offset `|di|, |dj|, |dk| <= R`, the element
/// `corner + (i - lo.x + di) + (j - lo.y + dj)*jstride + (k - lo.z + dk)*kstride
///  + n'*nstride` (with `n' = 0` when `shared`, else `n`) is a live element of a shared
/// view valid for `'a`.
struct Source<'a, T, const R: i32> {
    /// The element at `bx.lo()`, component 0.
    corner: NonNull<T>,
    lo: IntVect,
    jstride: isize,
    kstride: isize,
    /// `0` when every component reads component 0.
    nstride: isize,
    /// The halo view, for prefetching.
    halo: Array4<'a, T>,
}

impl<'a, T, const R: i32> Source<'a, T, R> {
    /// `halo` must be `src.sub_box(&bx.grow(R))` for a non-empty `bx` (so it has
    /// elements). With `shared`, every component reads component 0.
    #[inline(always)]
    fn new(halo: Array4<'a, T>, bx: IndexBox, shared: bool) -> Self {
        let lo = bx.lo();
        Self {
            corner: halo.cell_ptr(lo[0], lo[1], lo[2], 0),
            lo,
            // The strides reach elements of the halo's allocation, so they fit isize.
            jstride: halo.jstride().cast_signed(),
            kstride: halo.kstride().cast_signed(),
            nstride: if shared {
                0
            } else {
                halo.nstride().cast_signed()
            },
            halo,
        }
    }

    /// The prefetch stream of this source: its leading plane.
    #[inline(always)]
    fn prefetch(&self) -> kernel::Stream {
        kernel::Stream::source(&self.halo, R, self.nstride == 0)
    }

    /// The stencils of row `(j, k, n)`.
    ///
    /// # Safety
    /// `(lo.x, j, k)` is in the box the source was made for, and `n` is below the
    /// source's component count (any `n` for a shared source).
    #[inline(always)]
    unsafe fn row(&self, j: i32, k: i32, n: usize) -> RowPtr<'a, T, R> {
        let off = (j as isize - self.lo[1] as isize) * self.jstride
            + (k as isize - self.lo[2] as isize) * self.kstride
            + n.cast_signed() * self.nstride;
        // SAFETY: the caller's row is in the box and `n` a valid component, so by the
        // invariant `corner + off` is an element of the halo (offsets 0).
        let start = unsafe { self.corner.offset(off) };
        RowPtr {
            start,
            jstride: self.jstride,
            kstride: self.kstride,
            _marker: PhantomData,
        }
    }
}

/// The first cell of one row of a [`Source`].
///
/// Invariant: for `ii` below the row length of the box, `start + ii` plus any offset
/// within `R` is a live element of a shared view valid for `'a`.
struct RowPtr<'a, T, const R: i32> {
    start: NonNull<T>,
    jstride: isize,
    kstride: isize,
    _marker: PhantomData<&'a T>,
}

impl<T, const R: i32> Clone for RowPtr<'_, T, R> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, const R: i32> Copy for RowPtr<'_, T, R> {}

impl<'a, T, const R: i32> RowPtr<'a, T, R> {
    /// The stencil at cell `ii` of the row.
    ///
    /// # Safety
    /// `ii` is below the row length of the box the source was made for.
    #[inline(always)]
    unsafe fn at(self, ii: usize) -> Stencil<'a, T, R> {
        // SAFETY: `ii` is in the row, so `start + ii` is an element of the halo
        // (invariant, offsets 0).
        let ptr = unsafe { self.start.add(ii) };
        // Invariant of `Stencil`: every offset within `R` of this cell is live for 'a
        // (invariant of `RowPtr`).
        Stencil {
            ptr,
            jstride: self.jstride,
            kstride: self.kstride,
            _marker: PhantomData,
        }
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
    /// # Performance
    /// The sweep runs row by row (`i` innermost, then `j`, `k`, `n`). Each row prefetches
    /// the source rows a few kilobytes ahead on the *leading* plane `k + R` (the only
    /// plane a sweep reads for the first time) and the destination row it will write, so
    /// that the loads of the other planes hit the cache while memory streams in. On
    /// x86-64 with `std`, the sweep is compiled three times ([`crate::simd::widest`]) and
    /// the AVX-512 or AVX2 copy runs where the CPU has it (detected at run time): the
    /// compiler vectorises `f` eight or four `f64` wide instead of two. All copies run the
    /// same arithmetic in the same order (Rust never contracts `a * b + c` into a fused
    /// multiply-add), so the results are bit-identical.
    /// Call this on tiles small enough for `2R + 1` planes of the tile (plus halo) to stay
    /// in cache, e.g. `MFIter`'s default `(1024000, 8, 8)` tiles.
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
        let a = Source::<U, R>::new(halo, bx, false);
        let pf = [a.prefetch()];
        kernel::sweep(&mut dst, bx, &pf, |row, j, k, n| {
            // SAFETY: `sweep` passes rows of `bx` and components of `dst`, which has no
            // more components than `src`.
            let ar = unsafe { a.row(j, k, n) };
            for (ii, d) in row.iter_mut().enumerate() {
                // SAFETY: `ii < nx`, the length of the rows of `bx`.
                f(d, unsafe { ar.at(ii) });
            }
        });
    }

    /// [`stencil_mut_with`](Self::stencil_mut_with) with a second source, typically a
    /// coefficient: calls `f(&mut self(i, j, k, n), s, c)` where `s` is the stencil of
    /// `src` at `(i, j, k, n)` (radius `R`) and `c` the stencil of `coef` at `(i, j, k)`
    /// (radius `RC`) and component `n`, or component 0 for every `n` when `coef` has a
    /// single component (one coefficient shared by all components, as for
    /// `div(beta grad phi)` on a vector `phi`).
    ///
    /// ```
    /// use amrex_array4::{Array4, Array4Mut, IndexBox, IntVect, Stencil};
    /// let valid = IndexBox::new(IntVect::ZERO, IntVect::splat(3));
    /// let grown = valid.grow(1);
    /// // Two components: phi_n = (n + 1) x.
    /// let phi: Vec<f64> = (0..2)
    ///     .flat_map(|n| grown.iter().map(move |p| f64::from((n + 1) * p.x())))
    ///     .collect();
    /// let beta: Vec<f64> = grown.iter().map(|p| f64::from(p.x())).collect();
    /// let (phi, beta) = (Array4::new(&phi, grown, 2), Array4::new(&beta, grown, 1));
    /// let mut div = vec![0.0; 128];
    /// let mut out = Array4Mut::new(&mut div, valid, 2);
    /// // d/dx(beta dphi/dx) with beta on faces = mean of the two cells.
    /// out.stencil2_mut_with(phi, beta, valid, |o, s: Stencil<'_, f64, 1>, b: Stencil<'_, f64, 1>| {
    ///     let bm = 0.5 * (b.center() + b.at(-1, 0, 0));
    ///     let bp = 0.5 * (b.center() + b.at(1, 0, 0));
    ///     *o = bp * (s.at(1, 0, 0) - s.center()) - bm * (s.center() - s.at(-1, 0, 0));
    /// });
    /// // d/dx(x * (n + 1)) = n + 1
    /// assert!(div[..64].iter().all(|&v| v == 1.0) && div[64..].iter().all(|&v| v == 2.0));
    /// ```
    ///
    /// An empty `bx` does nothing. The sweep, prefetching and vector-width dispatch are those of
    /// `stencil_mut_with` (both sources' leading planes are prefetched).
    ///
    /// # Panics
    /// If `bx` is not inside `self`, `bx.grow(R)` is not inside `src`, `bx.grow(RC)` is
    /// not inside `coef`, `src` has fewer components than `self`, `coef` has neither one
    /// component nor at least as many as `self`, or a radius is negative.
    #[inline]
    #[track_caller]
    pub fn stencil2_mut_with<U, V, const R: i32, const RC: i32>(
        &mut self,
        src: Array4<'_, U>,
        coef: Array4<'_, V>,
        bx: IndexBox,
        mut f: impl FnMut(&mut T, Stencil<'_, U, R>, Stencil<'_, V, RC>),
    ) {
        assert!(
            R >= 0 && RC >= 0,
            "Array4Mut::stencil2_mut_with: radius {R} or {RC} is negative"
        );
        if bx.is_empty() {
            return;
        }
        let mut dst = self.sub_box_mut(&bx);
        let halo = src.sub_box(&bx.grow(R));
        let chalo = coef.sub_box(&bx.grow(RC));
        assert!(
            halo.ncomp() >= dst.ncomp(),
            "Array4Mut::stencil2_mut_with: the source has {} components, the destination {}",
            halo.ncomp(),
            dst.ncomp()
        );
        let shared = chalo.ncomp() == 1;
        assert!(
            shared || chalo.ncomp() >= dst.ncomp(),
            "Array4Mut::stencil2_mut_with: the coefficient has {} components, the destination {}",
            chalo.ncomp(),
            dst.ncomp()
        );
        let a = Source::<U, R>::new(halo, bx, false);
        let c = Source::<V, RC>::new(chalo, bx, shared);
        let pf = [a.prefetch(), c.prefetch()];
        kernel::sweep(&mut dst, bx, &pf, |row, j, k, n| {
            // SAFETY: `sweep` passes rows of `bx` and components of `dst`; `src` has at
            // least as many, and `coef` too unless it is shared (component 0 for all).
            let ar = unsafe { a.row(j, k, n) };
            // SAFETY: as above.
            let cr = unsafe { c.row(j, k, n) };
            for (ii, d) in row.iter_mut().enumerate() {
                // SAFETY: `ii < nx`, the length of the rows of `bx`.
                let s = unsafe { ar.at(ii) };
                // SAFETY: as above.
                let b = unsafe { cr.at(ii) };
                f(d, s, b);
            }
        });
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
