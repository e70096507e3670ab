//! `BoxList`: an ordered list of boxes of one index type (AMReX's `BoxList`), and the
//! difference of two boxes.

use alloc::vec;
use alloc::vec::Vec;

use amrex_box::{IndexBox, IndexType, IntVect};

use crate::box_array::{BoxArray, max_size_chop};

/// An ordered, mutable list of boxes of one index type, AMReX's `BoxList`.
///
/// Unlike [`BoxArray`] the boxes need not be disjoint, and the list is edited in place.
/// Every operation keeps the boxes in a fixed order for given inputs, so every rank
/// that runs the same calls holds the same list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoxList {
    boxes: Vec<IndexBox>,
    typ: IndexType,
}

impl BoxList {
    /// An empty list of boxes of index type `ix`.
    #[must_use]
    pub const fn new(ix: IndexType) -> Self {
        Self {
            boxes: Vec::new(),
            typ: ix,
        }
    }

    /// The list holding `boxes` in this order (index type of the first box, cell-centred
    /// if there is none).
    ///
    /// # Panics
    /// If the boxes have different index types.
    #[must_use]
    #[track_caller]
    pub fn from_boxes(boxes: Vec<IndexBox>) -> Self {
        let typ = boxes.first().map_or(IndexType::CELL, IndexBox::ix_type);
        assert!(
            boxes.iter().all(|b| b.ix_type() == typ),
            "BoxList::from_boxes: the boxes have different index types"
        );
        Self { boxes, typ }
    }

    /// The list holding the single box `bx`.
    #[must_use]
    pub fn from_box(bx: IndexBox) -> Self {
        Self {
            boxes: vec![bx],
            typ: bx.ix_type(),
        }
    }

    /// Appends `bx` (AMReX's `push_back`).
    ///
    /// # Panics
    /// If `bx` has another index type than the list.
    #[track_caller]
    pub fn push(&mut self, bx: IndexBox) {
        assert_eq!(
            bx.ix_type(),
            self.typ,
            "BoxList::push: the box's index type is not the list's"
        );
        self.boxes.push(bx);
    }

    /// The boxes, in order.
    #[must_use]
    pub fn boxes(&self) -> &[IndexBox] {
        &self.boxes
    }

    /// The boxes, in order, by value.
    #[must_use]
    pub fn into_boxes(self) -> Vec<IndexBox> {
        self.boxes
    }

    /// Number of boxes.
    #[must_use]
    pub fn len(&self) -> usize {
        self.boxes.len()
    }

    /// `true` if there are no boxes.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.boxes.is_empty()
    }

    /// The boxes, in order.
    pub fn iter(&self) -> core::slice::Iter<'_, IndexBox> {
        self.boxes.iter()
    }

    /// The index type of the boxes.
    #[must_use]
    pub const fn ix_type(&self) -> IndexType {
        self.typ
    }

    /// Total number of points in the boxes (overlaps counted twice).
    #[must_use]
    pub fn num_pts(&self) -> u64 {
        self.boxes.iter().map(IndexBox::num_pts).sum()
    }

    /// `bx` minus the union of `bl`'s boxes, as disjoint boxes cut the way AMReX's
    /// `BoxList::complementIn` cuts them (the same region can be cut into boxes in many
    /// ways, and AMReX's grid generation depends on the cut): with one box in `bl`, its
    /// [`box_diff`] from `bx`; with more, `bx` minus the minimal box of `bl` first, then
    /// the part of `bx` inside that minimal box, chopped into blocks (a side of 16 per 4
    /// cells of the cube root of `bl`'s mean box volume, rounded up, at least 4) and each
    /// block minus the boxes that meet it, in the order of
    /// [`BoxArray::complement_in`]. Empty when `bl` covers `bx`, `[bx]` when `bl` is
    /// empty. An MPI build of AMReX (`parallelComplementIn`) cuts the same boxes and
    /// lists the blocks' pieces first.
    ///
    /// # Panics
    /// If `bx` and `bl` have different index types.
    #[must_use]
    #[track_caller]
    pub fn complement_in(bx: &IndexBox, bl: &BoxList) -> BoxList {
        assert!(
            bl.is_empty() || bx.ix_type() == bl.typ,
            "BoxList::complement_in: the box's index type is not the list's"
        );
        let typ = bx.ix_type();
        let cutters: Vec<IndexBox> = bl.boxes.iter().copied().filter(IndexBox::ok).collect();
        let boxes = match cutters.as_slice() {
            [] => {
                if bx.ok() {
                    vec![*bx]
                } else {
                    Vec::new()
                }
            }
            [one] => box_diff(bx, one),
            _ => {
                let mbox = cutters[1..].iter().fold(cutters[0], |m, b| m.min_box(b));
                let total: u64 = cutters.iter().map(IndexBox::num_pts).sum();
                let mean = total / cutters.len() as u64;
                let mut out = box_diff(bx, &mbox);
                if let Some(inside) = mbox.intersection(bx) {
                    let block = complement_block(mean);
                    let ba = BoxArray::new(cutters);
                    for chunk in max_size_chop(&[inside], IntVect::splat(block)) {
                        out.extend(ba.complement_in(&chunk));
                    }
                }
                out
            }
        };
        BoxList { boxes, typ }
    }

    /// Replaces every box by its intersection with `bx`, dropping the empty ones (AMReX's
    /// `BoxList::intersect(const Box&)`).
    pub fn intersect(&mut self, bx: &IndexBox) -> &mut Self {
        self.boxes.retain_mut(|b| match b.intersection(bx) {
            Some(i) => {
                *b = i;
                true
            }
            None => false,
        });
        self
    }

    /// Replaces the list by the non-empty intersections of its boxes with `bl`'s: for
    /// each box of `self`, its intersection with each box of `bl` in turn (AMReX's
    /// `BoxList::intersect(const BoxList&)`).
    pub fn intersect_list(&mut self, bl: &BoxList) -> &mut Self {
        let mut out = Vec::new();
        for a in &self.boxes {
            for b in &bl.boxes {
                if let Some(i) = a.intersection(b) {
                    out.push(i);
                }
            }
        }
        self.boxes = out;
        self
    }

    /// Merges boxes that abut and share their extent in every other direction, as AMReX's
    /// `BoxList::simplify()`: the boxes are first sorted by their low corner, then each
    /// box is joined into the first of the next 100 boxes it can join, which takes its
    /// place. Returns the number of merges. The sort is lexicographic with `z` most
    /// significant ([`IntVect::lex_cmp`]), as AMReX's `IntVect` `operator<`; it is
    /// stable, where AMReX's `std::sort` is not, which matters only for boxes with the
    /// same low corner (overlapping boxes).
    pub fn simplify(&mut self) -> usize {
        self.boxes
            .sort_by(|a, b| a.small_end().lex_cmp(b.small_end()));
        self.simplify_pass(100)
    }

    /// Like [`simplify`](Self::simplify), looking at every later box (AMReX's
    /// `simplify(true)`).
    pub fn simplify_best(&mut self) -> usize {
        self.boxes
            .sort_by(|a, b| a.small_end().lex_cmp(b.small_end()));
        self.simplify_pass(usize::MAX)
    }

    /// Merges boxes without sorting them first: three passes in which each box is joined
    /// into the next one when it can be (AMReX's `BoxList::ordered_simplify`, what
    /// `BoxArray::simplified_list` applies). Returns the merges of the last pass.
    pub fn ordered_simplify(&mut self) -> usize {
        let mut count = 0;
        for _ in 0..3 {
            count = self.simplify_pass(1);
        }
        count
    }

    fn simplify_pass(&mut self, max_look: usize) -> usize {
        let n = self.boxes.len();
        let mut gone = vec![false; n];
        let mut count = 0;
        for a in 0..n {
            let ab = self.boxes[a];
            let (alo, ahi) = (ab.lo(), ab.hi());
            for b in (a + 1..n).take(max_look) {
                if gone[b] {
                    // AMReX compares against the empty box left behind, which never joins.
                    continue;
                }
                let bb = self.boxes[b];
                let (blo, bhi) = (bb.lo(), bb.hi());
                let (mut lo, mut hi) = (alo, ahi);
                let mut joins = 0;
                let mut can = true;
                for d in 0..3 {
                    if alo[d] == blo[d] && ahi[d] == bhi[d] {
                    } else if alo[d] <= blo[d] && blo[d] <= ahi[d] + 1 {
                        hi[d] = ahi[d].max(bhi[d]);
                        joins += 1;
                    } else if blo[d] <= alo[d] && alo[d] <= bhi[d] + 1 {
                        lo[d] = blo[d];
                        hi[d] = ahi[d].max(bhi[d]);
                        joins += 1;
                    } else {
                        can = false;
                        break;
                    }
                }
                if can && joins <= 1 {
                    self.boxes[b] = IndexBox::with_type(lo, hi, self.typ);
                    gone[a] = true;
                    count += 1;
                    break;
                }
            }
        }
        let mut i = 0;
        self.boxes.retain(|_| {
            i += 1;
            !gone[i - 1]
        });
        count
    }

    /// Grows every box by `n` cells on every side (AMReX's `accrete`).
    pub fn accrete(&mut self, n: IntVect) -> &mut Self {
        for b in &mut self.boxes {
            *b = b.grow_iv(n);
        }
        self
    }

    /// Refines every box by `r`.
    pub fn refine(&mut self, r: IntVect) -> &mut Self {
        for b in &mut self.boxes {
            *b = b.refine_iv(r);
        }
        self
    }

    /// Coarsens every box by `r` (AMReX's floor rounding).
    pub fn coarsen(&mut self, r: IntVect) -> &mut Self {
        for b in &mut self.boxes {
            *b = b.coarsen_iv(r);
        }
        self
    }

    /// Chops every box so that no side exceeds `chunk`, with the rule of
    /// [`BoxArray::max_size`] (the one implementation of AMReX's `BoxList::maxSize`).
    ///
    /// # Panics
    /// If a component of `chunk` is not positive.
    #[track_caller]
    pub fn max_size(&mut self, chunk: IntVect) -> &mut Self {
        self.boxes = max_size_chop(&self.boxes, chunk);
        self
    }

    /// Splits every box that straddles `pos` in direction `dir` into the part below `pos`
    /// and the part from `pos` on, the low part in the box's place and the high part
    /// appended.
    pub fn chop(&mut self, dir: usize, pos: i32) -> &mut Self {
        let n = self.boxes.len();
        for i in 0..n {
            let b = self.boxes[i];
            if b.lo()[dir] < pos && pos <= b.hi()[dir] {
                let (low, high) = b.split_at(dir, pos);
                self.boxes[i] = low;
                self.boxes.push(high);
            }
        }
        self
    }

    /// The smallest box containing every box (an empty box of the list's type if there
    /// are none), AMReX's `minimalBox`.
    #[must_use]
    pub fn minimal_box(&self) -> IndexBox {
        match self.boxes.split_first() {
            None => IndexBox::with_type(IntVect::UNIT, IntVect::ZERO, self.typ),
            Some((f, rest)) => rest.iter().fold(*f, |m, b| m.min_box(b)),
        }
    }

    /// `true` if the union of the boxes covers `bx` (AMReX's `BoxList::contains(Box)`).
    #[must_use]
    pub fn contains(&self, bx: &IndexBox) -> bool {
        cut_out(bx, self.boxes.iter().filter(|b| b.intersects(bx))).is_empty()
    }

    /// Drops the empty boxes (AMReX's `removeEmpty`).
    pub fn remove_empty(&mut self) -> &mut Self {
        self.boxes.retain(IndexBox::ok);
        self
    }
}

impl<'a> IntoIterator for &'a BoxList {
    type Item = &'a IndexBox;
    type IntoIter = core::slice::Iter<'a, IndexBox>;
    fn into_iter(self) -> Self::IntoIter {
        self.boxes.iter()
    }
}

impl From<BoxList> for BoxArray {
    fn from(bl: BoxList) -> Self {
        BoxArray::new(bl.boxes)
    }
}

impl BoxArray {
    /// The boxes as a [`BoxList`], in order (AMReX's `boxList()`).
    #[must_use]
    pub fn box_list(&self) -> BoxList {
        BoxList {
            boxes: self.boxes().to_vec(),
            typ: self.ix_type(),
        }
    }
}

/// The side of the blocks `complement_in` cuts a region into for boxes of `mean` cells:
/// AMReX's `4 * max(1, ceil(cbrt(mean) / 4) * 4)`, in integers (`no_std` has no `cbrt`):
/// `ceil(cbrt(m) / 4)` is the least `q` with `(4q)³ >= m`, the same number, since the
/// cube root of an integer that is not a cube is never a multiple of 4.
fn complement_block(mean: u64) -> i32 {
    let covers = |q: u64| 64 * u128::from(q).pow(3) >= u128::from(mean);
    // The least q that covers, by bisection over 0..=2^21 (64·(2^21)³ > u64::MAX).
    let (mut lo, mut hi) = (0_u64, 1_u64 << 21);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if covers(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let quarter = i32::try_from(lo).unwrap_or(i32::MAX);
    4 * quarter.saturating_mul(4).max(1)
}

/// `bx` minus each of `cutters` in turn: every piece left so far is replaced by its
/// [`box_diff`] from the next cutter (AMReX's loop in `BoxArray::complementIn`).
pub(crate) fn cut_out<'a>(
    bx: &IndexBox,
    cutters: impl IntoIterator<Item = &'a IndexBox>,
) -> Vec<IndexBox> {
    let mut rest = Vec::new();
    if bx.ok() {
        rest.push(*bx);
    }
    for c in cutters {
        if rest.is_empty() {
            break;
        }
        rest = rest.iter().flat_map(|r| box_diff(r, c)).collect();
    }
    rest
}

/// `a` minus `b` as disjoint boxes (AMReX's `boxDiff`): at most six boxes, empty if `b`
/// covers `a`, `[a]` if they do not overlap.
#[must_use]
pub fn box_diff(a: &IndexBox, b: &IndexBox) -> Vec<IndexBox> {
    let mut out = Vec::new();
    if !a.ok() {
        return out;
    }
    if !a.intersects(b) {
        out.push(*a);
        return out;
    }
    let mut rest = *a;
    for d in (0..3).rev() {
        let (rlo, rhi) = (rest.lo()[d], rest.hi()[d]);
        let (blo, bhi) = (b.lo()[d], b.hi()[d]);
        if rlo < blo {
            let (low, high) = rest.split_at(d, blo);
            out.push(low);
            rest = high;
        }
        if rhi > bhi {
            let (low, high) = rest.split_at(d, bhi + 1);
            out.push(high);
            rest = low;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use amrex_box::IntVect;

    #[test]
    fn diff_covers_exactly_the_difference() {
        // Every cell is checked against every part: a smaller box under Miri.
        let h = if cfg!(miri) { 5 } else { 9 };
        let a = IndexBox::new(IntVect::splat(0), IntVect::splat(h));
        for b in [
            IndexBox::new(IntVect::splat(h / 3), IntVect::splat(h / 2 + 1)),
            IndexBox::new(IntVect::splat(-3), IntVect::splat(h / 2 + 1)),
            IndexBox::new(IntVect::new(0, 0, 0), IntVect::new(h, h, 2)),
            IndexBox::new(IntVect::splat(20), IntVect::splat(25)),
            a,
        ] {
            let parts = box_diff(&a, &b);
            for p in a.iter() {
                let n = parts.iter().filter(|q| q.contains(p)).count();
                assert_eq!(n, usize::from(!b.contains(p)), "point {p} b {b}");
            }
        }
    }
}

#[cfg(test)]
mod list_tests {
    use super::*;

    fn bx(lo: [i32; 3], hi: [i32; 3]) -> IndexBox {
        IndexBox::new(
            IntVect::new(lo[0], lo[1], lo[2]),
            IntVect::new(hi[0], hi[1], hi[2]),
        )
    }

    #[test]
    fn simplify_merges_as_amrex_does() {
        // Sorted by low corner: A=[0..3,0..3], B=[4..7,0..3], C=[0..3,4..7].
        // A joins B (abut in x, same y): B becomes [0..7,0..3] and A is dropped; B then
        // cannot join C (differ in x and y), so two boxes remain in that order.
        let mut bl = BoxList::from_boxes(vec![
            bx([0, 4, 0], [3, 7, 0]),
            bx([4, 0, 0], [7, 3, 0]),
            bx([0, 0, 0], [3, 3, 0]),
        ]);
        assert_eq!(bl.simplify(), 1);
        assert_eq!(
            bl.boxes(),
            &[bx([0, 0, 0], [7, 3, 0]), bx([0, 4, 0], [3, 7, 0])]
        );
        // A column of four unit boxes collapses into one in three merges.
        let mut col = BoxList::from_boxes((0..4).rev().map(|j| bx([0, j, 0], [0, j, 0])).collect());
        assert_eq!(col.simplify_best(), 3);
        assert_eq!(col.boxes(), &[bx([0, 0, 0], [0, 3, 0])]);
    }

    #[test]
    fn complement_intersect_contains() {
        let dom = bx([0, 0, 0], [7, 7, 0]);
        let bl = BoxList::from_boxes(vec![bx([0, 0, 0], [3, 7, 0]), bx([4, 0, 0], [7, 3, 0])]);
        let c = BoxList::complement_in(&dom, &bl);
        assert_eq!(c.boxes(), &[bx([4, 4, 0], [7, 7, 0])]);
        assert!(bl.contains(&bx([2, 1, 0], [6, 2, 0])));
        assert!(!bl.contains(&bx([2, 1, 0], [6, 5, 0])));
        assert!(BoxList::complement_in(&dom, &BoxList::from_box(dom)).is_empty());
        let mut i = bl.clone();
        i.intersect(&bx([2, 2, 0], [5, 5, 0]));
        assert_eq!(
            i.boxes(),
            &[bx([2, 2, 0], [3, 5, 0]), bx([4, 2, 0], [5, 3, 0])]
        );
        let mut j = bl.clone();
        j.intersect_list(&BoxList::from_boxes(vec![
            bx([3, 3, 0], [4, 4, 0]),
            bx([9, 9, 0], [9, 9, 0]),
        ]));
        assert_eq!(
            j.boxes(),
            &[bx([3, 3, 0], [3, 4, 0]), bx([4, 3, 0], [4, 3, 0])]
        );
        assert_eq!(bl.minimal_box(), dom);
        assert!(!BoxList::new(IndexType::CELL).minimal_box().ok());
    }

    #[test]
    fn complement_cuts_as_amrex_does() {
        // Two 4x4 corners of a 16x16 square: mean 16 cells, so 16-cell blocks, and the
        // minimal box is the square itself. The lower corner is cut first (AMReX's hash
        // order), each cut in z, then y, then x, low side before high side.
        let sq = bx([0, 0, 0], [15, 15, 0]);
        let bl = BoxList::from_boxes(vec![bx([12, 12, 0], [15, 15, 0]), bx([0, 0, 0], [3, 3, 0])]);
        assert_eq!(
            BoxList::complement_in(&sq, &bl).boxes(),
            &[
                bx([0, 4, 0], [15, 11, 0]),
                bx([0, 12, 0], [11, 15, 0]),
                bx([4, 0, 0], [15, 3, 0]),
            ]
        );
        // A 40x8 strip around them: its part outside the minimal box comes first, then
        // the square in blocks of 16 (one block here).
        let strip = bx([-8, 0, 0], [31, 15, 0]);
        let c = BoxList::complement_in(&strip, &bl);
        assert_eq!(
            c.boxes()[..2],
            [bx([-8, 0, 0], [-1, 15, 0]), bx([16, 0, 0], [31, 15, 0])]
        );
        assert_eq!(c.len(), 5);
        // Larger boxes make larger blocks: 27^3 cells on average gives a side of
        // 16 * ceil(27 / 4) = 112, so the 127-long box is cut into blocks of 64 and 63
        // cells, and the cut shows in the pieces.
        let cube = |lo: i32| bx([lo, 0, 0], [lo + 26, 26, 26]);
        let bl = BoxList::from_boxes(vec![cube(0), cube(100)]);
        let long = bx([0, 0, 0], [126, 26, 26]);
        let c = BoxList::complement_in(&long, &bl);
        assert_eq!(
            c.boxes(),
            &[bx([27, 0, 0], [63, 26, 26]), bx([64, 0, 0], [99, 26, 26])]
        );
        // Whatever the cut, the pieces are disjoint and cover exactly the difference.
        let total: u64 = c.iter().map(IndexBox::num_pts).sum();
        assert_eq!(total, long.num_pts() - 2 * cube(0).num_pts());
    }

    #[test]
    fn complement_blocks_follow_amrex_cube_roots() {
        // 4 * max(1, ceil(cbrt(m) / 4) * 4): 4 for nothing, 16 up to 4³ cells, 32 up to 8³.
        for (m, want) in [
            (0, 4),
            (1, 16),
            (64, 16),
            (65, 32),
            (512, 32),
            (513, 48),
            (19683, 112),
        ] {
            assert_eq!(complement_block(m), want, "{m}");
        }
        // cbrt(2^64 - 1) = 2642245.95: ceil(/ 4) = 660562.
        assert_eq!(complement_block(u64::MAX), 16 * 660_562);
    }

    #[test]
    fn ordered_simplify_merges_neighbours_in_list_order() {
        // No sort: A joins B, then AB joins C, in three passes of one look ahead.
        let mut bl = BoxList::from_boxes(vec![
            bx([0, 0, 0], [3, 3, 0]),
            bx([4, 0, 0], [7, 3, 0]),
            bx([0, 4, 0], [7, 7, 0]),
            bx([20, 0, 0], [21, 0, 0]),
        ]);
        bl.ordered_simplify();
        assert_eq!(
            bl.boxes(),
            &[bx([0, 0, 0], [7, 7, 0]), bx([20, 0, 0], [21, 0, 0])]
        );
    }

    #[test]
    fn chop_accrete_refine_coarsen_max_size() {
        let mut bl =
            BoxList::from_boxes(vec![bx([0, 0, 0], [7, 3, 0]), bx([10, 0, 0], [11, 0, 0])]);
        bl.chop(0, 5);
        assert_eq!(
            bl.boxes(),
            &[
                bx([0, 0, 0], [4, 3, 0]),
                bx([10, 0, 0], [11, 0, 0]),
                bx([5, 0, 0], [7, 3, 0])
            ]
        );
        let mut a = BoxList::from_box(bx([2, 2, 2], [3, 3, 3]));
        a.accrete(IntVect::new(1, 0, 2)).refine(IntVect::splat(2));
        assert_eq!(a.boxes(), &[bx([2, 4, 0], [9, 7, 11])]);
        a.coarsen(IntVect::splat(4));
        assert_eq!(a.boxes(), &[bx([0, 1, 0], [2, 1, 2])]);
        let big = bx([0, 0, 0], [23, 7, 7]);
        let mut m = BoxList::from_box(big);
        m.max_size(IntVect::splat(8));
        assert_eq!(
            m.boxes(),
            BoxArray::new(vec![big]).max_size(IntVect::splat(8)).boxes()
        );
        assert_eq!(m.len(), 3);
        let mut e = BoxList::from_boxes(vec![bx([1, 0, 0], [0, 0, 0]), big]);
        e.remove_empty();
        assert_eq!(e.boxes(), &[big]);
        let ba: BoxArray = m.clone().into();
        assert_eq!(ba.box_list(), m);
    }
}
