//! Iterators over a box's points and tiles.

use core::iter::FusedIterator;

use crate::index_box::{IndexBox, coord};
use crate::int_vect::IntVect;

/// Iterator over the points of an [`IndexBox`] in Fortran order (`i` fastest).
///
/// Made by [`IndexBox::iter`]. For hot loops prefer three nested `for` loops (or
/// `amrex-array4`'s loop helpers): they let the compiler vectorise along `i`.
#[derive(Clone, Debug)]
pub struct Cells {
    bx: IndexBox,
    cur: IntVect,
    remaining: u64,
}

impl Cells {
    pub(crate) fn new(bx: IndexBox) -> Self {
        // A box so large that its point count overflows u64 is iterated "forever".
        let remaining = bx.checked_num_pts().unwrap_or(u64::MAX);
        Self {
            bx,
            cur: bx.small_end(),
            remaining,
        }
    }
}

impl Iterator for Cells {
    type Item = IntVect;

    #[inline]
    fn next(&mut self) -> Option<IntVect> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let p = self.cur;
        if self.remaining != 0 {
            let (lo, hi) = (self.bx.small_end(), self.bx.big_end());
            if self.cur[0] < hi[0] {
                self.cur[0] += 1;
            } else {
                self.cur[0] = lo[0];
                if self.cur[1] < hi[1] {
                    self.cur[1] += 1;
                } else {
                    self.cur[1] = lo[1];
                    self.cur[2] += 1;
                }
            }
        }
        Some(p)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        match usize::try_from(self.remaining) {
            Ok(n) => (n, Some(n)),
            Err(_) => (usize::MAX, None),
        }
    }
}

impl FusedIterator for Cells {}

/// Iterator over the tiles that partition an [`IndexBox`], made by [`IndexBox::tiles`].
///
/// It knows its length and can be indexed with [`Tiles::get`], so parallel callers can
/// hand tile numbers to threads.
#[derive(Clone, Debug)]
pub struct Tiles {
    bx: IndexBox,
    size: IntVect,
    counts: [u64; 3],
    front: usize,
    back: usize,
}

impl Tiles {
    #[track_caller]
    pub(crate) fn new(bx: IndexBox, size: IntVect) -> Self {
        assert!(
            size.all_gt(IntVect::ZERO),
            "IndexBox::tiles: tile size {size} must be positive"
        );
        let counts: [u64; 3] = core::array::from_fn(|d| {
            // Positive (asserted above).
            let s = u64::from(size[d].cast_unsigned());
            bx.length_dir(d).div_ceil(s)
        });
        let total = if bx.ok() {
            counts[0]
                .checked_mul(counts[1])
                .and_then(|c| c.checked_mul(counts[2]))
                .and_then(|c| usize::try_from(c).ok())
                .expect("IndexBox::tiles: the number of tiles does not fit in usize")
        } else {
            0
        };
        Self {
            bx,
            size,
            counts,
            front: 0,
            back: total,
        }
    }

    /// Number of tiles per direction.
    #[inline]
    #[must_use]
    pub fn counts(&self) -> [u64; 3] {
        self.counts
    }

    /// The `n`-th tile (in the iterator's original order), `None` if out of range.
    /// Independent of how far the iterator has advanced.
    #[inline]
    #[must_use]
    pub fn get(&self, n: usize) -> Option<IndexBox> {
        let total = self.counts.iter().product::<u64>();
        let n = n as u64;
        if !self.bx.ok() || n >= total {
            return None;
        }
        let t = [
            n % self.counts[0],
            (n / self.counts[0]) % self.counts[1],
            n / (self.counts[0] * self.counts[1]),
        ];
        let (lo, hi) = (self.bx.small_end(), self.bx.big_end());
        let mut tlo = lo;
        let mut thi = hi;
        for d in 0..3 {
            // t[d] * size[d] < length <= 2^32, which fits in i64; the result lies in the
            // box.
            let start = i64::from(lo[d]) + t[d].cast_signed() * i64::from(self.size[d]);
            let end = (start + i64::from(self.size[d]) - 1).min(i64::from(hi[d]));
            tlo[d] = coord(start);
            thi[d] = coord(end);
        }
        Some(IndexBox::with_type(tlo, thi, self.bx.ix_type()))
    }
}

impl Iterator for Tiles {
    type Item = IndexBox;

    #[inline]
    fn next(&mut self) -> Option<IndexBox> {
        if self.front >= self.back {
            return None;
        }
        let t = self.get(self.front);
        self.front += 1;
        t
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.back - self.front;
        (n, Some(n))
    }

    #[inline]
    fn nth(&mut self, n: usize) -> Option<IndexBox> {
        self.front = self.front.saturating_add(n).min(self.back);
        self.next()
    }
}

impl DoubleEndedIterator for Tiles {
    #[inline]
    fn next_back(&mut self) -> Option<IndexBox> {
        if self.front >= self.back {
            return None;
        }
        self.back -= 1;
        self.get(self.back)
    }
}

impl ExactSizeIterator for Tiles {}
impl FusedIterator for Tiles {}
