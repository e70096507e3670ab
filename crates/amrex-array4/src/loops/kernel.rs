//! The row loop behind the stencil helpers: software prefetching of the planes a sweep
//! reads for the first time, run through [`simd::widest`] (copies of the loop compiled
//! for AVX2 and AVX-512, chosen at run time).
//!
//! Why (measured on a 2-core AMD EPYC, 64³ boxes, `(1024000, 8, 8)` tiles): the plain
//! loop computes a 7-point Laplacian at about 1.5 cycles per cell from cache (SSE2 does
//! two `f64` per instruction, and six additions per cell saturate the two FP adders),
//! and memory latency is not hidden behind that work: from memory the loop ran at the
//! sum of the two times, a third of a STREAM triad. Prefetching the leading plane and
//! the destination a few kilobytes ahead overlaps them; AVX2 halves the compute. Both
//! together bring the Laplacian to the triad's bandwidth (see `docs/multifab.md`).

use core::mem::size_of;

use amrex_box::IndexBox;

use crate::array4::{Array4, Array4Mut};
use crate::hint::prefetch_span;
use crate::simd;

/// How far ahead (in bytes of destination rows) the sweep prefetches: about one plane of
/// an `MFIter` tile (8 rows of 64 `f64`), and enough to cover memory latency at the rate
/// a vectorised stencil consumes rows.
const AHEAD_BYTES: usize = 4096;
/// At most this many rows ahead (very short rows).
const MAX_AHEAD_ROWS: usize = 64;

/// A prefetch stream: the rows of one source's halo that a row of the sweep reads
/// first, on the leading plane `k + R`. Only addresses are computed (wrapping pointer
/// arithmetic, never dereferenced): a prefetch is a hint.
pub(super) struct Stream {
    /// Element `(lo - R, lo - R, lo - R, 0)` of the halo, as bytes.
    base: *const u8,
    jstride: usize,
    kstride: usize,
    /// `0` when every component reads component 0.
    nstride: usize,
    /// Bytes of one halo row, `(nx + 2R) * size_of::<T>()`.
    row_bytes: usize,
    /// The radius.
    r: usize,
}

impl Stream {
    /// The stream of `halo`, which is `src.sub_box(&bx.grow(r))` for a non-empty `bx`.
    #[inline(always)]
    #[expect(
        clippy::cast_sign_loss,
        reason = "the radius `r` is not negative: the callers assert `R >= 0`"
    )]
    pub(super) fn source<T>(halo: &Array4<'_, T>, r: i32, shared: bool) -> Self {
        let sz = size_of::<T>();
        Self {
            base: halo.raw.ptr.as_ptr().cast::<u8>().cast_const(),
            jstride: halo.jstride() * sz,
            kstride: halo.kstride() * sz,
            nstride: if shared { 0 } else { halo.nstride() * sz },
            row_bytes: halo.raw.len_dir(0) * sz,
            r: r as usize,
        }
    }

    /// Prefetches what the row `(jr, kr, n)` of the sweep (relative to `bx.lo()`) reads
    /// first: the halo row `(jr, kr + R)`, and below it the `R` rows past the box's last
    /// row when `last_row`.
    #[inline(always)]
    fn fetch(&self, jr: usize, kr: usize, n: usize, last_row: bool) {
        let r = self.r;
        let plane = self
            .base
            .wrapping_add((kr + 2 * r) * self.kstride + n * self.nstride);
        let rows = if last_row { r + 1 } else { 1 };
        for dj in 0..rows {
            prefetch_span(
                plane.wrapping_add((jr + r + dj) * self.jstride),
                self.row_bytes,
            );
        }
    }
}

/// Position of the row `ahead` rows in front of the one being computed, in the sweep's
/// order (`j`, then `k`, then `n`), relative to `bx.lo()`.
///
/// Past the last row of `bx` it guesses where the next sweep starts: the following `ny`
/// rows in `j` on the first plane, which is the next tile of an `MFIter` (tiles advance
/// in `j` first). A wrong guess costs a few useless prefetches, nothing else.
struct Cursor {
    j: usize,
    k: usize,
    n: usize,
    ny: usize,
    nz: usize,
    ncomp: usize,
}

impl Cursor {
    #[inline(always)]
    fn advance(&mut self) {
        self.j += 1;
        if self.n < self.ncomp && self.j == self.ny {
            self.j = 0;
            self.k += 1;
            if self.k == self.nz {
                self.k = 0;
                self.n += 1;
                if self.n == self.ncomp {
                    // The guessed next tile: rows `ny ..` of plane 0, component 0.
                    self.j = self.ny;
                }
            }
        }
    }

    /// `(j, k, n)` of the row to prefetch for, if any, and whether it is the last row of
    /// its plane (whose `R` rows beyond are read first too).
    #[inline(always)]
    fn get(&self) -> Option<(usize, usize, usize, bool)> {
        if self.n < self.ncomp {
            Some((self.j, self.k, self.n, self.j + 1 == self.ny))
        } else if self.j < 2 * self.ny {
            Some((self.j, 0, 0, self.j + 1 == 2 * self.ny))
        } else {
            None
        }
    }
}

/// Calls `row(dst.row_mut(j, k, n), j, k, n)` for every row of `bx` (the bounds of `dst`,
/// and the box each stream was made for) and every component of `dst`, `j` fastest, while
/// prefetching the streams' leading rows and the destination rows ahead, in the copy
/// [`simd::widest`] picks (so that `row`, and the user's kernel inlined into it,
/// vectorise as wide as the CPU allows, with the same arithmetic in every copy).
#[inline(always)]
pub(super) fn sweep<T>(
    dst: &mut Array4Mut<'_, T>,
    bx: IndexBox,
    streams: &[Stream],
    row: impl FnMut(&mut [T], i32, i32, usize),
) {
    simd::widest(Sweep {
        dst,
        bx,
        streams,
        row,
    });
}

/// [`sweep_rows`] as a [`simd::Kernel`].
struct Sweep<'s, 'd, T, F> {
    dst: &'s mut Array4Mut<'d, T>,
    bx: IndexBox,
    streams: &'s [Stream],
    row: F,
}

impl<T, F: FnMut(&mut [T], i32, i32, usize)> simd::Kernel for Sweep<'_, '_, T, F> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        sweep_rows(self.dst, self.bx, self.streams, self.row);
    }
}

#[inline(always)]
fn sweep_rows<T>(
    dst: &mut Array4Mut<'_, T>,
    bx: IndexBox,
    streams: &[Stream],
    mut row: impl FnMut(&mut [T], i32, i32, usize),
) {
    let (lo, hi) = (bx.lo(), bx.hi());
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "`bx` is non-empty and the bounds of `dst` (see below): 1 <= len <= i32::MAX \
                  (FabLayout invariant 1), and usize has at least 32 bits (lib.rs)"
    )]
    let len = |d: usize| (i64::from(hi[d]) - i64::from(lo[d]) + 1) as usize;
    let (nx, ny, nz, ncomp) = (len(0), len(1), len(2), dst.ncomp());
    let sz = size_of::<T>();
    let ahead = (AHEAD_BYTES / (nx * sz).max(1)).clamp(1, MAX_AHEAD_ROWS);
    let mut fut = Cursor {
        j: 0,
        k: 0,
        n: 0,
        ny,
        nz,
        ncomp,
    };
    // The destination's rows, for prefetching (element `bx.lo()`, component 0).
    let dbase = dst.raw.ptr.as_ptr().cast::<u8>().cast_const();
    let (djs, dks, dns) = (dst.jstride() * sz, dst.kstride() * sz, dst.nstride() * sz);
    let fetch = |fut: &Cursor| {
        if let Some((jf, kf, nf, last)) = fut.get() {
            for s in streams {
                s.fetch(jf, kf, nf, last);
            }
            prefetch_span(dbase.wrapping_add(jf * djs + kf * dks + nf * dns), nx * sz);
        }
    };
    // Warm-up: the first rows' leading rows and destinations (a tile is often only a
    // few planes deep, so its first rows are a good part of it).
    for _ in 0..ahead {
        fetch(&fut);
        fut.advance();
    }
    // `dst` covers exactly `bx` (its caller made it with `sub_box_mut(&bx)`), so the row `(j, k, n)` starts
    // at element offset `(j - lo.y)*jstride + (k - lo.z)*kstride + n*nstride` from
    // `dst.raw.ptr`; the fields are copied into locals so the loop keeps them in
    // registers instead of reloading them through `dst` after every store.
    debug_assert!(dst.raw.begin == lo && dst.raw.end == hi + 1);
    let dptr = dst.raw.ptr;
    let (js, ks, ns) = (dst.jstride(), dst.kstride(), dst.nstride());
    for n in 0..ncomp {
        for (kr, k) in (lo[2]..=hi[2]).enumerate() {
            for (jr, j) in (lo[1]..=hi[1]).enumerate() {
                fetch(&fut);
                fut.advance();
                // SAFETY: `(jr, kr, n)` is a row of `bx` = the bounds of `dst` (non-empty),
                // so by invariant 2 of `Array4Mut` the offset is that of its first element
                // and fits the allocation.
                let start = unsafe { dptr.add(jr * js + kr * ks + n * ns) };
                // SAFETY: the row's `nx` elements have unit stride and are in bounds
                // (invariant 2); `dst` is borrowed mutably for the whole sweep, so only
                // this slice reaches them while `row` runs (invariant 5), and it is dropped
                // before the next row is made.
                let r = unsafe { core::slice::from_raw_parts_mut(start.as_ptr(), nx) };
                row(r, j, k, n);
            }
        }
    }
}
