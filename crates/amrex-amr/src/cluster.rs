//! Berger–Rigoutsos clustering of tagged cells into boxes (AMReX's `ClusterList`).

use alloc::vec;
use alloc::vec::Vec;

use amrex_box::{IndexBox, IntVect};
use amrex_multifab::{BoxArray, BoxList};

/// How a direction's signature is cut, best first (AMReX's `CutStatus`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum CutStatus {
    Hole,
    Steep,
    Bisect,
    Invalid,
}

/// Tagged points and their minimal box.
#[derive(Clone, Debug)]
struct Cluster {
    pts: Vec<IntVect>,
    bx: IndexBox,
}

fn min_box(pts: &[IntVect]) -> IndexBox {
    match pts.split_first() {
        None => IndexBox::new(IntVect::UNIT, IntVect::ZERO),
        Some((f, rest)) => {
            let (lo, hi) = rest
                .iter()
                .fold((*f, *f), |(l, h), p| (l.min(*p), h.max(*p)));
            IndexBox::new(lo, hi)
        }
    }
}

/// `i` as `i64`, for the length of a signature (a slice of `i64`) or an index into it.
#[inline]
#[expect(
    clippy::cast_possible_wrap,
    reason = "a slice of i64 has at most isize::MAX / 8 elements, and isize::MAX <= i64::MAX"
)]
fn signed(i: usize) -> i64 {
    i as i64
}

/// Signature `hist` over `lo..=hi`: the cut position and how it was found (AMReX's
/// `FindCut`, with its `MINOFF = 2` and `CUT_THRESH = 2`).
fn find_cut(hist: &[i64], lo: i32) -> (i32, CutStatus) {
    const MINOFF: usize = 2;
    const CUT_THRESH: i64 = 2;
    let len = hist.len();
    if len <= 1 {
        return (lo, CutStatus::Invalid);
    }
    let mid = signed(len / 2);
    let off = |c: i64| i32::try_from(c).unwrap_or(0);
    // The hole nearest the centre; on a tie the lower one.
    let mut cut: i64 = -1;
    let mut hole = false;
    for (i, &h) in hist.iter().enumerate() {
        let i = signed(i);
        if h == 0 {
            hole = true;
            if (cut - mid).abs() > (i - mid).abs() {
                cut = i;
                if i > mid {
                    break;
                }
            }
        }
    }
    if hole {
        return (lo + off(cut), CutStatus::Hole);
    }
    // The strongest sign change of the second difference, away from the ends.
    let mut d2 = vec![0_i64; len];
    for i in 1..len - 1 {
        d2[i] = hist[i + 1] - 2 * hist[i] + hist[i - 1];
    }
    let mut locmax: i64 = -1;
    let mut status = CutStatus::Invalid;
    for i in MINOFF..len.saturating_sub(MINOFF) {
        let (prev, cur) = (d2[i - 1], d2[i]);
        let dif = (prev - cur).abs();
        if prev * cur < 0 && dif >= locmax {
            let ii = signed(i);
            if dif > locmax {
                status = CutStatus::Steep;
                cut = ii;
                locmax = dif;
            } else if (ii - mid).abs() < (cut - mid).abs() {
                cut = ii;
            }
        }
    }
    if locmax <= CUT_THRESH {
        return (lo + off(mid), CutStatus::Bisect);
    }
    (lo + off(cut), status)
}

impl Cluster {
    fn new(pts: Vec<IntVect>) -> Self {
        let bx = min_box(&pts);
        Self { pts, bx }
    }

    fn eff(&self) -> f64 {
        self.pts.len() as f64 / self.bx.num_pts() as f64
    }

    /// Splits off the points at and above the cut as a new cluster; `self` keeps those
    /// below (AMReX's `Cluster::chop`).
    fn chop(&mut self) -> Cluster {
        let (low, high, _) = self.split(None);
        *self = low;
        high
    }

    /// AMReX's `Cluster::new_chop`: the cut of [`chop`](Self::chop), kept only if one
    /// of the two parts is more efficient than the whole; else the best cut of the
    /// other directions (if the cluster is one cell thick across them, the first cut
    /// stays).
    fn new_chop(&mut self) -> Cluster {
        let old = self.eff();
        let (low, high, dir) = self.split(None);
        let others = (0..3).any(|d| d != dir && self.bx.length()[d] > 1);
        let (low, high, _) = if low.eff() > old || high.eff() > old || !others {
            (low, high, dir)
        } else {
            self.split(Some(dir))
        };
        *self = low;
        high
    }

    /// The signatures: per direction, the number of points in each plane across it, from
    /// the box's low end.
    #[expect(
        clippy::cast_sign_loss,
        reason = "`bx` is the points' minimal box: `lo <= p <= hi` for each point, so \
                  `0 <= p - lo < len`, and `len` (exact: IntVect arithmetic panics on \
                  overflow) is not negative, the box 1..=0 of length 0 if there are none"
    )]
    fn signatures(&self) -> [Vec<i64>; 3] {
        let (lo, len) = (self.bx.lo(), self.bx.length());
        let mut hist: [Vec<i64>; 3] = core::array::from_fn(|d| vec![0; len[d] as usize]);
        for p in &self.pts {
            for d in 0..3 {
                hist[d][(p[d] - lo[d]) as usize] += 1;
            }
        }
        hist
    }

    /// The two parts of the best cut, below and above, and the direction cut across,
    /// skipping direction `skip`.
    fn split(&self, skip: Option<usize>) -> (Cluster, Cluster, usize) {
        let (lo, hi) = (self.bx.lo(), self.bx.hi());
        let hist = self.signatures();
        let mut cut = [0; 3];
        let mut status = [CutStatus::Invalid; 3];
        let mut best = CutStatus::Invalid;
        for d in (0..3).filter(|&d| Some(d) != skip) {
            (cut[d], status[d]) = find_cut(&hist[d], lo[d]);
            best = best.min(status[d]);
        }
        // Among the directions with the best kind of cut, the one leaving the larger
        // smaller side; on a tie the later direction.
        let mut dir = 0;
        let mut minlen = -1;
        for d in 0..3 {
            if status[d] == best {
                let l = (cut[d] - lo[d]).min(hi[d] - cut[d]);
                if l >= minlen {
                    dir = d;
                    minlen = l;
                }
            }
        }
        let (low, high): (Vec<IntVect>, Vec<IntVect>) =
            self.pts.iter().partition(|p| p[dir] < cut[dir]);
        (Cluster::new(low), Cluster::new(high), dir)
    }
}

/// A list of clusters of tagged cells (AMReX's `ClusterList`): built over all the tags,
/// [`chop`](Self::chop)ped by Berger–Rigoutsos until every cluster fills its box well
/// enough, cut to a nesting domain with [`intersect`](Self::intersect), and read off as
/// boxes with [`box_list`](Self::box_list).
///
/// The decisions are AMReX's `Cluster.cpp`'s, so the same tags give the same boxes in
/// the same order. Clusters are cell-centred.
///
/// ```
/// use amrex_amr::ClusterList;
/// use amrex_multifab::{IndexBox, IntVect};
///
/// // Two 2x2 blobs in a row: cut at the hole between them.
/// let mut tags = Vec::new();
/// for j in 0..2 {
///     for i in [0, 1, 6, 7] {
///         tags.push(IntVect::new(i, j, 0));
///     }
/// }
/// let mut cl = ClusterList::new(&tags);
/// cl.chop(0.7);
/// assert_eq!(
///     cl.box_list().boxes(),
///     &[
///         IndexBox::new(IntVect::new(0, 0, 0), IntVect::new(1, 1, 0)),
///         IndexBox::new(IntVect::new(6, 0, 0), IntVect::new(7, 1, 0)),
///     ]
/// );
/// ```
#[derive(Clone, Debug, Default)]
pub struct ClusterList {
    lst: Vec<Cluster>,
}

impl ClusterList {
    /// One cluster over every tag (none if `tags` is empty).
    #[must_use]
    pub fn new(tags: &[IntVect]) -> Self {
        let lst = if tags.is_empty() {
            Vec::new()
        } else {
            vec![Cluster::new(tags.to_vec())]
        };
        Self { lst }
    }

    /// Number of clusters.
    #[must_use]
    pub fn len(&self) -> usize {
        self.lst.len()
    }

    /// `true` if there are no clusters.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.lst.is_empty()
    }

    /// Chops every cluster whose efficiency (tags over cells of its box) is below
    /// `grid_eff`, again and again: the part below the cut stays in the cluster's place
    /// and is looked at again, the part above goes to the end of the list (AMReX's
    /// `ClusterList::chop`). Afterwards every cluster has efficiency `>= grid_eff` or
    /// is a single cell.
    pub fn chop(&mut self, grid_eff: f64) {
        let mut i = 0;
        while i < self.lst.len() {
            if self.lst[i].pts.len() > 1 && self.lst[i].eff() < grid_eff {
                let high = self.lst[i].chop();
                self.lst.push(high);
            } else {
                i += 1;
            }
        }
    }

    /// As [`chop`](Self::chop) with AMReX's `ClusterList::new_chop` (`amr.use_new_chop`):
    /// a cut that makes neither part more efficient than the cluster is replaced by the
    /// best cut across another direction.
    pub fn new_chop(&mut self, grid_eff: f64) {
        let mut i = 0;
        while i < self.lst.len() {
            if self.lst[i].pts.len() > 1 && self.lst[i].eff() < grid_eff {
                let high = self.lst[i].new_chop();
                self.lst.push(high);
            } else {
                i += 1;
            }
        }
    }

    /// Cuts the clusters to `domain` (AMReX's `ClusterList::intersect`): `domain` is
    /// first [simplified](BoxList::simplify), then a cluster whose box it covers stays;
    /// any other is replaced, at the end of the list, by its tags in each box of
    /// `domain` in turn (boxes holding none are dropped), each with its minimal box.
    /// Tags outside `domain` are dropped. `domain`'s boxes should be disjoint.
    pub fn intersect(&mut self, domain: &BoxList) {
        // AMReX's `removeOverlap` of the domain, which also simplifies it: its pieces
        // are the ones the clusters are cut along.
        let mut domain = domain.clone();
        domain.simplify();
        let domain = &domain;
        let domba = BoxArray::new(domain.boxes().to_vec());
        let mut i = 0;
        while i < self.lst.len() {
            if domba.contains_box(&self.lst[i].bx) {
                i += 1;
                continue;
            }
            let mut c = self.lst.remove(i);
            let mut pieces = domain.clone();
            pieces.intersect(&c.bx);
            for b in pieces.iter() {
                if c.pts.is_empty() {
                    break;
                }
                let (inside, rest): (Vec<IntVect>, Vec<IntVect>) =
                    c.pts.iter().partition(|p| b.contains(**p));
                if !inside.is_empty() {
                    self.lst.push(Cluster::new(inside));
                }
                c.pts = rest;
            }
        }
    }

    /// The clusters' boxes, in list order.
    #[must_use]
    pub fn box_list(&self) -> BoxList {
        BoxList::from_boxes(self.lst.iter().map(|c| c.bx).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b2(lo: (i32, i32), hi: (i32, i32)) -> IndexBox {
        IndexBox::new(IntVect::new(lo.0, lo.1, 0), IntVect::new(hi.0, hi.1, 0))
    }

    /// Every tag in exactly one box, boxes disjoint, each efficient or a single cell.
    fn check(tags: &[IntVect], cl: &ClusterList, eff: f64) {
        let bl = cl.box_list();
        for t in tags {
            assert_eq!(bl.iter().filter(|b| b.contains(*t)).count(), 1, "tag {t}");
        }
        for (i, a) in bl.iter().enumerate() {
            for b in &bl.boxes()[i + 1..] {
                assert!(!a.intersects(b), "{a} {b}");
            }
            let n = tags.iter().filter(|t| a.contains(**t)).count();
            assert!(
                n as f64 / a.num_pts() as f64 >= eff || a.num_pts() == 1,
                "{a}"
            );
            assert_eq!(
                min_box(
                    &tags
                        .iter()
                        .copied()
                        .filter(|t| a.contains(*t))
                        .collect::<Vec<_>>()
                ),
                *a
            );
        }
    }

    #[test]
    fn find_cut_follows_amrex() {
        // Holes at 2..=5 of 8: the centre-most is 4.
        assert_eq!(
            find_cut(&[2, 2, 0, 0, 0, 0, 2, 2], 10),
            (14, CutStatus::Hole)
        );
        // A step: second differences 0,0,5,-5,0,0; the change at 3 is 10 > CUT_THRESH.
        assert_eq!(find_cut(&[1, 1, 1, 6, 6, 6], 0), (3, CutStatus::Steep));
        // A weak step (jump 2) is bisected.
        assert_eq!(find_cut(&[1, 1, 1, 2, 2, 2], 0), (3, CutStatus::Bisect));
        assert_eq!(find_cut(&[3], 7), (7, CutStatus::Invalid));
    }

    #[test]
    fn two_blobs_split_at_the_hole() {
        let mut tags = Vec::new();
        for j in 0..2 {
            for i in [0, 1, 6, 7] {
                tags.push(IntVect::new(i, j, 0));
            }
        }
        let mut cl = ClusterList::new(&tags);
        cl.chop(0.7);
        assert_eq!(
            cl.box_list().boxes(),
            &[b2((0, 0), (1, 1)), b2((6, 0), (7, 1))]
        );
        check(&tags, &cl, 0.7);
    }

    #[test]
    fn ring_gives_the_hand_derived_boxes() {
        // The edge of the 6x6 square [0,5]^2, derived by hand from Cluster.cpp's rules:
        // bisections (no holes, no strong inflection), ties to the later direction.
        let mut tags = Vec::new();
        for j in 0..6 {
            for i in 0..6 {
                if i == 0 || i == 5 || j == 0 || j == 5 {
                    tags.push(IntVect::new(i, j, 0));
                }
            }
        }
        let mut cl = ClusterList::new(&tags);
        cl.chop(0.7);
        let want = [
            b2((0, 0), (2, 0)),
            b2((0, 3), (0, 3)),
            b2((3, 0), (5, 0)),
            b2((0, 1), (0, 2)),
            b2((5, 3), (5, 3)),
            b2((0, 4), (0, 5)),
            b2((5, 1), (5, 2)),
            b2((3, 5), (3, 5)),
            b2((1, 5), (2, 5)),
            b2((4, 4), (5, 5)),
        ];
        assert_eq!(cl.box_list().boxes(), &want);
        assert_eq!(cl.len(), 10);
        check(&tags, &cl, 0.7);
    }

    #[test]
    fn new_chop_retries_a_useless_cut() {
        // A 4x4 checkerboard (efficiency 1/2): no holes, flat second differences, so
        // both x and y are bisected at 2 and y wins the tie. Cut in y, both halves are
        // still 1/2 efficient, so new_chop cuts in x instead.
        let tags: Vec<IntVect> = IndexBox::new(IntVect::ZERO, IntVect::new(3, 3, 0))
            .iter()
            .filter(|p| (p[0] + p[1]) % 2 == 0)
            .collect();
        let mut c = Cluster::new(tags.clone());
        let h = c.chop();
        assert_eq!((c.bx, h.bx), (b2((0, 0), (3, 1)), b2((0, 2), (3, 3))));
        let mut c = Cluster::new(tags.clone());
        let h = c.new_chop();
        assert_eq!((c.bx, h.bx), (b2((0, 0), (1, 3)), b2((2, 0), (3, 3))));
        // A plus sign: a steep cut at the centre row, kept by new_chop (the part below is
        // a full column).
        let mut plus = Vec::new();
        for k in 0..7 {
            plus.push(IntVect::new(k, 3, 0));
            if k != 3 {
                plus.push(IntVect::new(3, k, 0));
            }
        }
        let mut c = Cluster::new(plus.clone());
        let h = c.new_chop();
        assert_eq!((c.bx, h.bx), (b2((3, 0), (3, 2)), b2((0, 3), (6, 6))));
        for eff in [0.5, 0.8] {
            for t in [&tags, &plus] {
                let mut cl = ClusterList::new(t);
                cl.new_chop(eff);
                check(t, &cl, eff);
            }
        }
    }

    #[test]
    fn diagonal_line_and_3d_blobs() {
        let tags: Vec<IntVect> = (0..12).map(|i| IntVect::new(i, i, i / 2)).collect();
        for eff in [0.3, 0.7, 1.0] {
            let mut cl = ClusterList::new(&tags);
            cl.chop(eff);
            check(&tags, &cl, eff);
        }
        let mut blobs = Vec::new();
        for p in IndexBox::new(IntVect::ZERO, IntVect::splat(2)).iter() {
            blobs.push(p);
            blobs.push(p + IntVect::new(9, 5, 7));
        }
        let mut cl = ClusterList::new(&blobs);
        cl.chop(0.9);
        check(&blobs, &cl, 0.9);
        assert_eq!(cl.len(), 2);
        assert!(ClusterList::new(&[]).is_empty());
    }

    #[test]
    fn periodic_edge_tags_are_cut_to_the_domain() {
        // Tags along x = 0 and x = 15 (after periodic mapping, both edges of a 16-wide
        // domain) and one outside the domain, which intersect drops.
        let mut tags = Vec::new();
        for j in 2..6 {
            tags.push(IntVect::new(0, j, 0));
            tags.push(IntVect::new(15, j, 0));
        }
        tags.push(IntVect::new(16, 3, 0));
        let mut cl = ClusterList::new(&tags);
        cl.chop(0.7);
        // By hand: the hole cut at x = 8 (the centre of 0..=16), then the right part
        // (5 tags in 8 cells) is bisected in y at 4, which leaves the larger smaller side.
        assert_eq!(
            cl.box_list().boxes(),
            &[
                b2((0, 2), (0, 5)),
                b2((15, 2), (16, 3)),
                b2((15, 4), (15, 5))
            ]
        );
        // The nesting domain: the left and right halves.
        let dom = BoxList::from_boxes(vec![b2((0, 0), (7, 7)), b2((8, 0), (15, 7))]);
        cl.intersect(&dom);
        // The one box sticking out is replaced, at the end, by its tags in the domain.
        assert_eq!(
            cl.box_list().boxes(),
            &[
                b2((0, 2), (0, 5)),
                b2((15, 4), (15, 5)),
                b2((15, 2), (15, 3))
            ]
        );
        tags.pop();
        check(&tags, &cl, 0.7);
    }
}
