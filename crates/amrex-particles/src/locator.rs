//! Finding the grid that holds a cell by binning (AMReX's `ParticleLocator`), not by a
//! scan over every box.
use alloc::vec;
use alloc::vec::Vec;
use amrex_multifab::{BoxArray, IndexBox, IntVect};

/// The index of bin `b` among `nbins`, for `0 <= b < nbins` (a bin of the minimal box).
#[inline(always)]
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "0 <= b < nbins, so the index is below the bin count, which fits usize (the \
              `total` of GridLocator::new)"
)]
fn flat(nbins: [i64; 3], b: [i64; 3]) -> usize {
    debug_assert!((0..3).all(|d| (0..nbins[d]).contains(&b[d])));
    (b[0] + nbins[0] * (b[1] + nbins[1] * b[2])) as usize
}

/// Bins of the size of the largest box over the BoxArray's minimal box; each bin lists
/// the boxes that meet it. A cell's bin holds at most a few boxes (at most 8 when the
/// boxes do not overlap), so [`locate`](Self::locate) costs O(1).
//
// Invariants: `start.len() == nbins + 1`, `start` non-decreasing, `start[nbins] ==
// boxes.len()`; `boxes[start[b]..start[b + 1]]` are the indices of the grids meeting
// bin `b`, increasing.
#[derive(Debug, Clone)]
pub struct GridLocator {
    lo: IntVect,
    bin: [i64; 3],
    nbins: [i64; 3],
    start: Vec<u32>,
    boxes: Vec<u32>,
    grids: Vec<IndexBox>,
}

impl GridLocator {
    /// The locator of `ba` (cell-centred, non-overlapping boxes).
    #[must_use]
    pub fn new(ba: &BoxArray) -> Self {
        let grids: Vec<IndexBox> = ba.boxes().to_vec();
        if grids.is_empty() {
            return Self {
                lo: IntVect::ZERO,
                bin: [1; 3],
                nbins: [0; 3],
                start: vec![0],
                boxes: Vec::new(),
                grids,
            };
        }
        let mb = ba.minimal_box();
        let lo = mb.lo();
        // Lengths are at most 2^32, so the same in i64.
        let mut bin = [1i64; 3];
        for b in &grids {
            for (d, s) in bin.iter_mut().enumerate() {
                *s = (*s).max(b.length_dir(d).cast_signed());
            }
        }
        let nbins: [i64; 3] =
            core::array::from_fn(|d| (mb.length_dir(d).cast_signed() + bin[d] - 1) / bin[d]);
        let total = usize::try_from(nbins[0] * nbins[1] * nbins[2])
            .expect("GridLocator: more bins than usize holds");
        let bin_range = |b: &IndexBox, d: usize| {
            let l = (i64::from(b.lo()[d]) - i64::from(lo[d])) / bin[d];
            let h = (i64::from(b.hi()[d]) - i64::from(lo[d])) / bin[d];
            (l, h)
        };
        let mut count = vec![0u32; total + 1];
        let each = |f: &mut dyn FnMut(usize, usize)| {
            for (g, b) in grids.iter().enumerate() {
                let r: [(i64, i64); 3] = core::array::from_fn(|d| bin_range(b, d));
                for k in r[2].0..=r[2].1 {
                    for j in r[1].0..=r[1].1 {
                        for i in r[0].0..=r[0].1 {
                            f(g, flat(nbins, [i, j, k]));
                        }
                    }
                }
            }
        };
        each(&mut |_, b| count[b + 1] += 1);
        for b in 0..total {
            count[b + 1] += count[b];
        }
        let mut fill = count.clone();
        let mut boxes = vec![0u32; count[total] as usize];
        each(&mut |g, b| {
            boxes[fill[b] as usize] = u32::try_from(g).expect("at most u32::MAX boxes");
            fill[b] += 1;
        });
        Self {
            lo,
            bin,
            nbins,
            start: count,
            boxes,
            grids,
        }
    }

    /// The grid whose box holds `cell`, if any.
    #[inline]
    #[must_use]
    pub fn locate(&self, cell: IntVect) -> Option<usize> {
        let mut b = [0i64; 3];
        for d in 0..3 {
            let off = i64::from(cell[d]) - i64::from(self.lo[d]);
            if off < 0 {
                return None;
            }
            b[d] = off / self.bin[d];
            if b[d] >= self.nbins[d] {
                return None;
            }
        }
        let bi = flat(self.nbins, b);
        let (s, e) = (self.start[bi] as usize, self.start[bi + 1] as usize);
        self.boxes[s..e]
            .iter()
            .map(|&g| g as usize)
            .find(|&g| self.grids[g].contains(cell))
    }
}
