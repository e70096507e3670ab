//! Row kernels: copying (or adding) a block of `i`-rows between two strided arrays, with
//! the prefetching that makes many short rows run near memory speed.
//!
//! A ghost-cell copy of an AMReX fab (one component of one FillBoundary or ParallelCopy
//! tag) is a block of `ny` x `nz` rows of `nx` elements at the `(j, k)` strides of the
//! destination and of the source: a [`RowBlock`]. `amrex-multifab` turns its copy plans
//! into such blocks ([`RowPart`]: a block and the first element on each side) and calls
//! the kernels here, which know nothing of boxes or plans. Prefetching lives in
//! [`hint`](crate::hint), the one place every hot loop of the workspace takes it from.

use core::ops::Add;

use crate::hint::{prefetch, prefetch_span};

/// Whether a copy overwrites or adds (AMReX's `FabArrayBase::COPY` / `ADD`, the `op` of
/// `ParallelCopy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CopyOp {
    /// `dst = src`.
    #[default]
    Copy,
    /// `dst += src`.
    Add,
}

/// After how many narrow rows [`RowBlock::run`] calls its `side` closure, which copies one
/// wide row of another block (found by measurement: 4 to 16 ran alike).
pub const INTERLEAVE: usize = 8;

/// One block of rows (one component of one copy tag) and its first elements in the
/// destination and in the source, pointers with the provenance of the whole arrays (the
/// rows are reached from the first by the strides).
#[derive(Clone, Copy, Debug)]
pub struct RowPart<T> {
    /// The rows.
    pub rows: RowBlock,
    /// The first element of the first row in the destination.
    pub d: *mut T,
    /// The first element of the first row in the source.
    pub r: *const T,
}

/// The rows of a sequence of [`RowPart`]s, copied one per [`step`](Self::step), so that a
/// loop over other rows can copy one of these in between.
#[derive(Debug)]
pub struct WideRows<T, I> {
    parts: I,
    cur: Option<RowPart<T>>,
    jr: usize,
    kr: usize,
}

impl<T: Copy + Add<Output = T>, I: Iterator<Item = RowPart<T>>> WideRows<T, I> {
    /// The rows of `parts`.
    ///
    /// # Safety
    /// Every part's rows are as in [`RowBlock::apply`]'s contract (with `CopyOp::Copy`)
    /// for as long as this lives: [`step`](Self::step) copies them.
    pub unsafe fn new(mut parts: I) -> Self {
        let cur = parts.next();
        Self {
            parts,
            cur,
            jr: 0,
            kr: 0,
        }
    }

    /// Copies the next row, prefetching the one after it in its part (past the part's
    /// end after its last row: a hint); `false` when no row is left.
    #[inline]
    pub fn step(&mut self) -> bool {
        while let Some(p) = self.cur {
            let (ny, nz) = (p.rows.ny, p.rows.nz);
            if self.jr < ny && self.kr < nz {
                let (d, r) = p.rows.at(p.d, p.r, self.jr, self.kr);
                self.jr += 1;
                if self.jr == ny {
                    (self.jr, self.kr) = (0, self.kr + 1);
                }
                let next = p.rows.at(p.d, p.r, self.jr, self.kr);
                // SAFETY: `jr < ny` and `kr < nz` (checked above, before they moved on):
                // `(d, r)` is a row of a part that `new`'s caller let us copy.
                unsafe { p.rows.row(d, r, next, CopyOp::Copy) };
                return true;
            }
            (self.cur, self.jr, self.kr) = (self.parts.next(), 0, 0);
        }
        false
    }
}

/// How many rows ahead the copies of narrow rows prefetch (found by measurement on 256³,
/// max grid 32, 2 ghosts).
pub const AHEAD: usize = 24;

/// A block of rows (one component of a copy tag): `ny` x `nz` rows of `nx` elements, at the
/// `(j, k)` strides `d` in the destination and `s` in the source (in elements).
///
/// The `i`-faces of a FillBoundary are a million rows of 2 elements for 256³ in 32³
/// boxes, each in its own cache line, and its edges are tags of 2 rows per plane: per
/// row the loop does little more than the copy (pointers advance by the strides, a
/// fixed width copies as one move). Memory latency would otherwise leave each row
/// waiting for its lines one after the other, so the loops prefetch: narrow rows the
/// rows about [`AHEAD`] rows on (in `j`, or in `k` when a plane has fewer rows), wide
/// rows all lines of the next row.
#[derive(Clone, Copy, Debug)]
pub struct RowBlock {
    nx: usize,
    ny: usize,
    nz: usize,
    d: (usize, usize),
    s: (usize, usize),
    /// From a row to the one about [`AHEAD`] rows on, in the destination and the source.
    ahead: (usize, usize),
}

impl RowBlock {
    /// `n = [nx, ny, nz]` rows of `nx` elements at the `(j, k)` element strides `d` of the
    /// destination and `s` of the source.
    #[must_use]
    pub fn new(n: [usize; 3], d: (usize, usize), s: (usize, usize)) -> Self {
        let [nx, ny, nz] = n;
        let ahead = if ny >= AHEAD {
            (AHEAD * d.0, AHEAD * s.0)
        } else {
            let planes = AHEAD / ny.max(1);
            (planes * d.1, planes * s.1)
        };
        Self {
            nx,
            ny,
            nz,
            d,
            s,
            ahead,
        }
    }

    /// Row `(jr, kr)` from the first rows `d` and `r` (any indices: past the tag the
    /// pointers are only hints).
    #[inline(always)]
    pub fn at<T>(&self, d: *mut T, r: *const T, jr: usize, kr: usize) -> (*mut T, *const T) {
        (
            d.wrapping_add(jr * self.d.0 + kr * self.d.1),
            r.wrapping_add(jr * self.s.0 + kr * self.s.1),
        )
    }

    /// Prefetches the rows about `AHEAD` on from `d` and `r` (hints: past the tag they
    /// point at other cells or anywhere, which is harmless).
    #[inline(always)]
    fn prefetch_ahead<T>(&self, d: *const T, r: *const T) {
        prefetch(d.wrapping_add(self.ahead.0));
        prefetch(r.wrapping_add(self.ahead.1));
    }

    /// Calls `f(d, r)` with the first element of every row, `j` fastest.
    #[inline(always)]
    fn for_rows<T>(&self, d: *mut T, r: *const T, mut f: impl FnMut(*mut T, *const T)) {
        for kr in 0..self.nz {
            let (d, r) = (d.wrapping_add(kr * self.d.1), r.wrapping_add(kr * self.s.1));
            for jr in 0..self.ny {
                f(d.wrapping_add(jr * self.d.0), r.wrapping_add(jr * self.s.0));
            }
        }
    }

    /// Applies `op` to the rows, with the narrow copies of a fixed width, calling
    /// `side()` after every [`INTERLEAVE`] rows of up to 4 elements.
    ///
    /// # Safety
    /// As [`apply`](Self::apply).
    #[inline(always)]
    pub unsafe fn run<T: Copy + Add<Output = T>>(
        &self,
        d: *mut T,
        r: *const T,
        op: CopyOp,
        side: &mut impl FnMut(),
    ) {
        match (op, self.nx) {
            // SAFETY: the caller's promise; each arm's width is `nx`.
            (CopyOp::Copy, 1) => unsafe { self.copy::<T, 1>(d, r, side) },
            // SAFETY: as above.
            (CopyOp::Copy, 2) => unsafe { self.copy::<T, 2>(d, r, side) },
            // SAFETY: as above.
            (CopyOp::Copy, 3) => unsafe { self.copy::<T, 3>(d, r, side) },
            // SAFETY: as above.
            (CopyOp::Copy, 4) => unsafe { self.copy::<T, 4>(d, r, side) },
            // SAFETY: as above.
            _ => unsafe { self.apply(d, r, op) },
        }
    }

    /// Copies the rows, `N == nx` elements each, calling `side()` after every
    /// [`INTERLEAVE`] rows (the count kept in a register: a counter in `side` would live
    /// in memory, and that was slower).
    ///
    /// # Safety
    /// As [`apply`](Self::apply).
    #[inline(always)]
    unsafe fn copy<T: Copy, const N: usize>(
        &self,
        d: *mut T,
        r: *const T,
        side: &mut impl FnMut(),
    ) {
        debug_assert_eq!(N, self.nx);
        let mut count = 0;
        self.for_rows(d, r, |d, r| {
            self.prefetch_ahead(d, r);
            // SAFETY: a row of the tag: `N` elements, not written during the call (caller).
            let v = unsafe { r.cast::<[T; N]>().read_unaligned() };
            // SAFETY: a row of the tag: `N` elements, disjoint from the source, ours
            // (caller).
            unsafe { d.cast::<[T; N]>().write_unaligned(v) };
            count += 1;
            if count == INTERLEAVE {
                count = 0;
                side();
            }
        });
    }

    /// Applies `op` row by row.
    ///
    /// # Safety
    /// The `ny` x `nz` rows of `nx` elements from `d` and from `r` at their strides lie
    /// in live allocations; the destination rows are accessed by nobody else and the
    /// source rows written by nobody during the call, and the two do not overlap.
    #[inline(always)]
    pub unsafe fn apply<T: Copy + Add<Output = T>>(&self, d0: *mut T, r0: *const T, op: CopyOp) {
        let (mut jr, mut kr) = (0, 0);
        self.for_rows(d0, r0, |d, r| {
            // The next row in the loop's order: in `j`, or the first of the next plane.
            jr += 1;
            if jr == self.ny {
                (jr, kr) = (0, kr + 1);
            }
            let next = self.at(d0, r0, jr, kr);
            // SAFETY: a row of the tag (caller).
            unsafe { self.row(d, r, next, op) };
        });
    }

    /// Applies `op` to the row from `d` and `r`: narrow rows prefetch the rows about
    /// [`AHEAD`] on, wide ones all lines of the `next` (a hint: any address).
    ///
    /// # Safety
    /// The `nx` elements from `d` are ours alone, those from `r` written by nobody during
    /// the call, and the two do not overlap.
    #[inline(always)]
    pub unsafe fn row<T: Copy + Add<Output = T>>(
        &self,
        d: *mut T,
        r: *const T,
        next: (*mut T, *const T),
        op: CopyOp,
    ) {
        if self.nx <= 8 {
            self.prefetch_ahead(d, r);
        } else {
            let bytes = self.nx * size_of::<T>();
            prefetch_span(next.0.cast_const().cast::<u8>(), bytes);
            prefetch_span(next.1.cast::<u8>(), bytes);
        }
        // SAFETY: the destination row: in bounds, ours (caller).
        let d = unsafe { core::slice::from_raw_parts_mut(d, self.nx) };
        // SAFETY: the source row: in bounds, not written (caller).
        let r = unsafe { core::slice::from_raw_parts(r, self.nx) };
        apply_row(d, r, op);
    }
}

#[inline(always)]
/// `d = r` or `d += r`, element by element (the slices have one length).
pub fn apply_row<T: Copy + Add<Output = T>>(d: &mut [T], r: &[T], op: CopyOp) {
    match op {
        CopyOp::Copy => copy_row(d, r),
        CopyOp::Add => d.iter_mut().zip(r).for_each(|(d, &r)| *d = *d + r),
    }
}

/// `d.copy_from_slice(r)`, with the rows a few ghost cells wide (the `i`-faces of a
/// FillBoundary: a million rows of 2 elements for 256³ in 32³ boxes) copied inline
/// instead of through a `memcpy` call each.
#[inline(always)]
pub fn copy_row<T: Copy>(d: &mut [T], r: &[T]) {
    match (d, r) {
        ([d0], [r0]) => *d0 = *r0,
        ([d0, d1], [r0, r1]) => (*d0, *d1) = (*r0, *r1),
        ([d0, d1, d2], [r0, r1, r2]) => (*d0, *d1, *d2) = (*r0, *r1, *r2),
        ([d0, d1, d2, d3], [r0, r1, r2, r3]) => (*d0, *d1, *d2, *d3) = (*r0, *r1, *r2, *r3),
        (d, r) => d.copy_from_slice(r),
    }
}
