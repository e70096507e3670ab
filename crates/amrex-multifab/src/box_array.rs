//! `BoxArray`: an immutable, cheaply cloned list of boxes with a spatial index.

use alloc::sync::{Arc, Weak};
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use amrex_box::{IndexBox, IndexSpaceError, IndexType, IntVect};

use crate::boxlist::BoxList;

/// An array of boxes of one index type, AMReX's `BoxArray`.
///
/// Cloning is cheap (the boxes live behind an [`Arc`]); two clones are the *same*
/// `BoxArray` for the purpose of caching copy plans ([`BoxArray::same_as`]).
/// Construction builds a bin index over the boxes so that
/// [`intersections`](Self::intersections) costs about the number of boxes it returns,
/// not the number of boxes in the array.
///
/// ```
/// use amrex_box::{IndexBox, IntVect};
/// use amrex_multifab::BoxArray;
/// let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(63));
/// let ba = BoxArray::from_domain(domain, 32);
/// assert_eq!(ba.len(), 8);
/// assert_eq!(ba.minimal_box(), domain);
/// let hits = ba.intersections(&IndexBox::new(IntVect::splat(30), IntVect::splat(33)));
/// assert_eq!(hits.len(), 8);
/// ```
#[derive(Clone)]
pub struct BoxArray {
    inner: Arc<Inner>,
}

struct Inner {
    boxes: Vec<IndexBox>,
    typ: IndexType,
    index: BinIndex,
    /// A hash of the boxes, which distributed operations compare between ranks.
    fingerprint: u64,
    /// The list the boxes were chopped from, when they were (AMReX's
    /// `m_simplified_list`; see [`BoxArray::simplified_list`]).
    simplified: Option<BoxList>,
}

/// Weak handle on a BoxArray's storage, see [`BoxArray::keepalive`].
pub(crate) struct BaWeak(Weak<Inner>);

impl BaWeak {
    /// Whether a clone of the BoxArray is still alive.
    pub(crate) fn is_alive(&self) -> bool {
        self.0.strong_count() > 0
    }
}

/// The fingerprint of a list of boxes (their corners and index types).
fn fingerprint(boxes: &[IndexBox]) -> u64 {
    let mut fp = amrex_runtime::Fingerprint::new();
    fp.word(boxes.len() as u64);
    for b in boxes {
        fp.iv(b.lo()).iv(b.hi()).word(u64::from(b.ix_type().bits()));
    }
    fp.value()
}

impl fmt::Debug for BoxArray {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BoxArray")
            .field("len", &self.len())
            .field("ix_type", &self.inner.typ)
            .field("boxes", &self.inner.boxes)
            .finish()
    }
}

impl PartialEq for BoxArray {
    /// Equal if the boxes are equal, in the same order.
    fn eq(&self, o: &Self) -> bool {
        self.same_as(o) || (self.inner.typ == o.inner.typ && self.inner.boxes == o.inner.boxes)
    }
}
impl Eq for BoxArray {}

/// Why [`BoxArray::try_new`] refused its boxes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BoxArrayError {
    /// Box `index` has another index type than box 0.
    MixedIndexTypes {
        /// The box's position.
        index: usize,
        /// Its index type.
        found: IndexType,
        /// The first box's index type.
        expected: IndexType,
    },
    /// Box `index` is empty.
    EmptyBox {
        /// The box's position.
        index: usize,
        /// The box.
        bx: IndexBox,
    },
    /// Box `index` leaves the `i32` index space.
    OutsideIndexSpace {
        /// The box's position.
        index: usize,
        /// The box.
        bx: IndexBox,
        /// The direction and numbers.
        err: IndexSpaceError,
    },
}

impl fmt::Display for BoxArrayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::MixedIndexTypes {
                index,
                found,
                expected,
            } => write!(
                f,
                "BoxArray: box {index} has index type {found}, box 0 has {expected}"
            ),
            Self::EmptyBox { index, bx } => write!(f, "BoxArray: box {index} {bx} is empty"),
            Self::OutsideIndexSpace { index, bx, err } => {
                write!(f, "BoxArray: box {index} {bx}: {err}")
            }
        }
    }
}

impl core::error::Error for BoxArrayError {}

impl BoxArray {
    /// The hash of the boxes that distributed operations compare between ranks
    /// (computed once, when it was made; see `amrex_runtime::Communicator::agree`).
    #[must_use]
    pub fn fingerprint(&self) -> u64 {
        self.inner.fingerprint
    }

    /// A `BoxArray` over the given boxes, in that order.
    ///
    /// # Panics
    /// On the errors of [`try_new`](Self::try_new).
    #[must_use]
    #[track_caller]
    pub fn new(boxes: Vec<IndexBox>) -> Self {
        match Self::try_new(boxes) {
            Ok(ba) => ba,
            Err(e) => panic!("{e}"),
        }
    }

    /// A `BoxArray` over the given boxes, in that order, checked: every box non-empty,
    /// of one index type, and inside the `i32` index space (its `big_end + 1` and its
    /// lengths are `i32`; see [`IndexBox::check_index_space`]). Use this for boxes that
    /// come from outside (a file, a user).
    ///
    /// # Errors
    /// [`BoxArrayError`] for the first box that fails.
    pub fn try_new(boxes: Vec<IndexBox>) -> Result<Self, BoxArrayError> {
        let typ = boxes.first().map_or(IndexType::CELL, IndexBox::ix_type);
        for (index, b) in boxes.iter().enumerate() {
            if b.ix_type() != typ {
                return Err(BoxArrayError::MixedIndexTypes {
                    index,
                    found: b.ix_type(),
                    expected: typ,
                });
            }
            if !b.ok() {
                return Err(BoxArrayError::EmptyBox { index, bx: *b });
            }
            if let Err(err) = b.check_index_space() {
                return Err(BoxArrayError::OutsideIndexSpace { index, bx: *b, err });
            }
        }
        let index = BinIndex::build(&boxes);
        Ok(Self {
            inner: Arc::new(Inner {
                fingerprint: fingerprint(&boxes),
                boxes,
                typ,
                index,
                simplified: None,
            }),
        })
    }

    /// The boxes of `bl`, chopped so that no side exceeds `max_size` by the rule of
    /// [`max_size`](Self::max_size) (AMReX's `BoxArray(BoxList, max_grid_size)`, how
    /// its `MakeNewGrids` makes a level's grids). The array keeps `bl` as its
    /// [`simplified_list`](Self::simplified_list).
    ///
    /// # Panics
    /// On the errors of [`try_new`](Self::try_new).
    #[must_use]
    #[track_caller]
    pub fn from_list_max_size(bl: BoxList, max_size: IntVect) -> Self {
        Self::new(max_size_chop(bl.boxes(), max_size)).remembering(Some(bl))
    }

    /// `self` with `list` as the list its boxes were chopped from.
    fn remembering(mut self, list: Option<BoxList>) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.simplified = list;
        }
        self
    }

    /// The region of the boxes as fewer, larger boxes (AMReX's `simplified_list`): the
    /// list the boxes were chopped from when the array was made by
    /// [`from_list_max_size`](Self::from_list_max_size) or
    /// [`from_domain`](Self::from_domain) (and chopped further by
    /// [`max_size`](Self::max_size) or [`min_max_size`](Self::min_max_size) since),
    /// otherwise the boxes merged by [`BoxList::ordered_simplify`]. AMReX's grid
    /// generation cuts its proper-nesting domains from this list, so a port that
    /// makes the same grids needs the same list.
    #[must_use]
    pub fn simplified_list(&self) -> BoxList {
        match &self.inner.simplified {
            Some(bl) => bl.clone(),
            None => {
                let mut bl = self.box_list();
                bl.ordered_simplify();
                bl
            }
        }
    }

    /// Checks that every box grown by the ghost width `ng` (non-negative) stays in the
    /// `i32` index space: what a FabArray with `ng` ghosts over this `BoxArray` needs.
    ///
    /// # Errors
    /// [`IndexSpaceError::NegativeGhost`], or the overflow of the first box that fails.
    pub fn check_ghost(&self, ng: IntVect) -> Result<(), IndexSpaceError> {
        amrex_box::check_ghost(ng)?;
        // Lengths are per box, so check each (O(n), no allocation).
        for b in self.boxes() {
            b.try_grow_ghost(ng)?;
        }
        Ok(())
    }

    /// The single box `domain`, chopped so that no side exceeds `max_size` (AMReX's
    /// `BoxArray ba(domain); ba.maxSize(max_size)`).
    #[must_use]
    #[track_caller]
    pub fn from_domain(domain: IndexBox, max_size: i32) -> Self {
        Self::from_domain_iv(domain, IntVect::splat(max_size))
    }

    /// Like [`from_domain`](Self::from_domain) with a maximum size per direction.
    #[must_use]
    #[track_caller]
    pub fn from_domain_iv(domain: IndexBox, max_size: IntVect) -> Self {
        Self::from_list_max_size(BoxList::from_box(domain), max_size)
    }

    /// A new `BoxArray` where every box is chopped so that no side exceeds `max_size`,
    /// with AMReX's `BoxList::maxSize` rule (cuts at multiples of the largest power of
    /// two shared by the size and the length, blocks as equal as possible, larger
    /// blocks first; new boxes in Fortran order of blocks, `x` fastest).
    #[must_use]
    #[track_caller]
    pub fn max_size(&self, max_size: IntVect) -> Self {
        Self::new(max_size_chop(&self.inner.boxes, max_size))
            .remembering(self.inner.simplified.clone())
    }

    /// A new `BoxArray` chopped so that no side exceeds `max_size` with every cut at a
    /// multiple of `min_size` (AMReX's `minmaxSize`): the boxes coarsened by
    /// `min_size`, chopped by [`max_size`](Self::max_size) to `max_size / min_size`
    /// and refined back. The boxes must be coarsenable by `min_size`.
    ///
    /// # Panics
    /// If a component of `min_size` or of `max_size / min_size` is not positive.
    #[must_use]
    #[track_caller]
    pub fn min_max_size(&self, min_size: IntVect, max_size: IntVect) -> Self {
        let coarse: Vec<IndexBox> = self
            .inner
            .boxes
            .iter()
            .map(|b| b.coarsen_iv(min_size))
            .collect();
        let boxes = max_size_chop(&coarse, max_size.zip_map(min_size, |a, b| a / b))
            .into_iter()
            .map(|b| b.refine_iv(min_size))
            .collect();
        Self::new(boxes).remembering(self.inner.simplified.clone())
    }

    /// Number of boxes.
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.inner.boxes.len()
    }

    /// `true` if there are no boxes.
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.inner.boxes.is_empty()
    }

    /// The boxes.
    #[inline]
    #[must_use]
    pub fn boxes(&self) -> &[IndexBox] {
        &self.inner.boxes
    }

    /// Box `i`.
    ///
    /// # Panics
    /// If `i >= len()`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn get(&self, i: usize) -> IndexBox {
        self.inner.boxes[i]
    }

    /// The index type shared by all boxes.
    #[inline]
    #[must_use]
    pub fn ix_type(&self) -> IndexType {
        self.inner.typ
    }

    /// `true` if both handles share the same storage (clones of one another).
    #[inline]
    #[must_use]
    pub fn same_as(&self, o: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &o.inner)
    }

    /// A number that identifies the storage while any clone is alive.
    #[inline]
    #[must_use]
    pub(crate) fn id(&self) -> usize {
        Arc::as_ptr(&self.inner) as usize
    }

    /// A weak handle that keeps the allocation (and so [`id`](Self::id)) from being
    /// reused without keeping the boxes alive: a cache entry keyed by the id holds one
    /// and is dropped once the BoxArray is.
    pub(crate) fn keepalive(&self) -> BaWeak {
        BaWeak(Arc::downgrade(&self.inner))
    }

    /// Total number of points over all boxes.
    #[must_use]
    pub fn num_pts(&self) -> u64 {
        self.inner.boxes.iter().map(IndexBox::num_pts).sum()
    }

    /// The smallest box containing every box (an empty box if there are none).
    #[must_use]
    pub fn minimal_box(&self) -> IndexBox {
        let mut it = self.inner.boxes.iter();
        let Some(first) = it.next() else {
            return IndexBox::with_type(IntVect::UNIT, IntVect::ZERO, self.inner.typ);
        };
        it.fold(*first, |m, b| m.min_box(b))
    }

    /// Every box coarsened by `r` (AMReX's rounding).
    #[must_use]
    #[track_caller]
    pub fn coarsen(&self, r: IntVect) -> Self {
        self.map(|b| b.coarsen_iv(r))
    }

    /// Every box refined by `r`.
    #[must_use]
    #[track_caller]
    pub fn refine(&self, r: IntVect) -> Self {
        self.map(|b| b.refine_iv(r))
    }

    /// Every box converted to index type `typ`.
    #[must_use]
    #[track_caller]
    pub fn convert(&self, typ: IndexType) -> Self {
        let mut ba = self.map(|b| b.convert(typ));
        if self.is_empty() {
            ba = Self {
                inner: Arc::new(Inner {
                    boxes: vec![],
                    typ,
                    index: BinIndex::empty(),
                    fingerprint: fingerprint(&[]),
                    simplified: None,
                }),
            };
        }
        ba
    }

    /// Every box grown by `n` per direction.
    #[must_use]
    #[track_caller]
    pub fn grow(&self, n: IntVect) -> Self {
        self.map(|b| b.grow_iv(n))
    }

    /// `true` if every box can be coarsened by `r` and refined back exactly.
    #[must_use]
    pub fn coarsenable(&self, r: IntVect) -> bool {
        self.inner.boxes.iter().all(|b| b.coarsenable(r))
    }

    fn map(&self, f: impl Fn(&IndexBox) -> IndexBox) -> Self {
        Self::new(self.inner.boxes.iter().map(f).collect())
    }

    /// `true` if some box contains point `p`.
    #[must_use]
    pub fn contains(&self, p: IntVect) -> bool {
        let q = IndexBox::with_type(p, p, self.inner.typ);
        let mut found = false;
        self.for_each_intersection(&q, IntVect::ZERO, |_, _| {
            found = true;
            false
        });
        found
    }

    /// `true` if the union of the boxes covers `bx` (same index type required).
    #[must_use]
    pub fn contains_box(&self, bx: &IndexBox) -> bool {
        bx.ix_type() == self.inner.typ && self.uncovered(bx).is_empty()
    }

    /// The part of `bx` no box covers, as disjoint boxes cut as AMReX's
    /// `BoxArray::complementIn` cuts them: the boxes that meet `bx` are cut out of it in
    /// the order of AMReX's hash of the array (by their low corners coarsened by the
    /// largest box length, `z` slowest, then by position), each one from every piece
    /// left ([`box_diff`](crate::box_diff)). Empty when the boxes cover `bx`, `[bx]`
    /// when none touches it. The same inputs give the same list on every rank.
    ///
    /// # Panics
    /// If `bx` has another index type than the boxes.
    #[must_use]
    #[track_caller]
    pub fn complement_in(&self, bx: &IndexBox) -> Vec<IndexBox> {
        assert_eq!(
            bx.ix_type(),
            self.inner.typ,
            "BoxArray::complement_in: the box's index type is not the BoxArray's"
        );
        if !bx.ok() {
            return Vec::new();
        }
        self.uncovered(bx)
    }

    /// `bx` minus every box that meets it, in AMReX's hash order.
    fn uncovered(&self, bx: &IndexBox) -> Vec<IndexBox> {
        let crsn = self.inner.index.maxlen;
        let mut hits = self.intersections(bx);
        let bin = |i: usize| self.inner.boxes[i].lo().coarsen(crsn);
        hits.sort_by(|a, b| bin(a.0).lex_cmp(bin(b.0)).then(a.0.cmp(&b.0)));
        crate::boxlist::cut_out(bx, hits.iter().map(|(_, i)| i))
    }

    /// `true` if every box of `o` is covered by `self`.
    #[must_use]
    pub fn contains_box_array(&self, o: &Self) -> bool {
        o.boxes().iter().all(|b| self.contains_box(b))
    }

    /// `true` if no two boxes overlap.
    #[must_use]
    pub fn is_disjoint(&self) -> bool {
        self.inner.boxes.iter().enumerate().all(|(i, b)| {
            let mut ok = true;
            self.for_each_intersection(b, IntVect::ZERO, |j, _| {
                ok = j == i;
                ok
            });
            ok
        })
    }

    /// `true` if some box intersects `bx`.
    #[must_use]
    pub fn intersects(&self, bx: &IndexBox) -> bool {
        let mut found = false;
        self.for_each_intersection(bx, IntVect::ZERO, |_, _| {
            found = true;
            false
        });
        found
    }

    /// Every `(index, box_i ∩ bx)` with a non-empty intersection, in increasing index
    /// order.
    #[must_use]
    pub fn intersections(&self, bx: &IndexBox) -> Vec<(usize, IndexBox)> {
        self.intersections_grown(bx, IntVect::ZERO)
    }

    /// Every `(index, grow(box_i, ng) ∩ bx)` with a non-empty intersection, in increasing
    /// index order (AMReX's `intersections(bx, isects, false, ng)`).
    #[must_use]
    pub fn intersections_grown(&self, bx: &IndexBox, ng: IntVect) -> Vec<(usize, IndexBox)> {
        let mut v = Vec::new();
        self.for_each_intersection(bx, ng, |i, b| {
            v.push((i, b));
            true
        });
        v.sort_unstable_by_key(|&(i, _)| i);
        v
    }

    /// Calls `f(index, grow(box_i, ng) ∩ bx)` for each intersecting box, in no
    /// particular order, until `f` returns `false`.
    fn for_each_intersection(
        &self,
        bx: &IndexBox,
        ng: IntVect,
        mut f: impl FnMut(usize, IndexBox) -> bool,
    ) {
        if bx.ix_type() != self.inner.typ || !bx.ok() {
            return;
        }
        let inner = &*self.inner;
        inner.index.candidates(bx, ng, |i| {
            let gb = inner.boxes[i].grow_iv(ng);
            match gb.intersection(bx) {
                Some(isect) => f(i, isect),
                None => true,
            }
        });
    }
}

/// AMReX's `BoxList::maxSize`.
pub(crate) fn max_size_chop(boxes: &[IndexBox], chunk: IntVect) -> Vec<IndexBox> {
    assert!(
        chunk.all_gt(IntVect::ZERO),
        "BoxArray::max_size: size {chunk} must be positive"
    );
    let mut out = Vec::with_capacity(boxes.len());
    for bx in boxes {
        let typ = bx.ix_type();
        let cells = bx.enclosed_cells();
        let len = cells.length();
        let lo = bx.small_end();
        let mut ratio = IntVect::UNIT;
        let mut numblk = IntVect::UNIT;
        let mut extra = IntVect::ZERO;
        let mut sz = len;
        for d in 0..3 {
            if len[d] > chunk[d] {
                let mut bs = chunk[d];
                let mut nlen = len[d];
                while bs % 2 == 0 && nlen % 2 == 0 {
                    ratio[d] *= 2;
                    bs /= 2;
                    nlen /= 2;
                }
                numblk[d] = (nlen + bs - 1) / bs;
                sz[d] = nlen / numblk[d];
                extra[d] = nlen - sz[d] * numblk[d];
            }
        }
        if numblk == IntVect::UNIT {
            out.push(*bx);
            continue;
        }
        let range = |d: usize, b: i32| -> (i32, i32) {
            let (s, e, r) = (sz[d], extra[d], ratio[d]);
            let l = if b < e {
                b * (s + 1) * r
            } else {
                (b * s + e) * r
            };
            let h = if b < e {
                l + (s + 1) * r - 1
            } else {
                l + s * r - 1
            };
            (l + lo[d], h + lo[d])
        };
        for k in 0..numblk[2] {
            let (klo, khi) = range(2, k);
            for j in 0..numblk[1] {
                let (jlo, jhi) = range(1, j);
                for i in 0..numblk[0] {
                    let (ilo, ihi) = range(0, i);
                    let b = IndexBox::new(IntVect::new(ilo, jlo, klo), IntVect::new(ihi, jhi, khi));
                    out.push(b.convert(typ));
                }
            }
        }
    }
    out
}

/// A uniform grid of bins over the boxes' low corners (CSR layout).
///
/// A box is stored in the bin of its low corner. A query for `bx` grown by `ng`
/// visits the bins whose low corners can reach it: those from
/// `bx.lo - ng - (maxlen - 1)` to `bx.hi + ng`. The bin size is at least the largest box
/// length and grows until the grid has at most a few bins per box, so the index takes
/// `O(n)` memory and a query visits `O(1 + hits)` bins for box arrays of similar boxes.
#[derive(Debug)]
struct BinIndex {
    origin: IntVect,
    bin: IntVect,
    nbins: [usize; 3],
    maxlen: IntVect,
    /// `start[b]..start[b + 1]` indexes `items` for bin `b`.
    start: Vec<u32>,
    items: Vec<u32>,
}

impl BinIndex {
    fn empty() -> Self {
        Self {
            origin: IntVect::ZERO,
            bin: IntVect::UNIT,
            nbins: [0; 3],
            maxlen: IntVect::ZERO,
            start: vec![0],
            items: vec![],
        }
    }

    fn build(boxes: &[IndexBox]) -> Self {
        let Some(first) = boxes.first() else {
            return Self::empty();
        };
        assert!(
            u32::try_from(boxes.len()).is_ok(),
            "BoxArray: more than u32::MAX boxes are not supported"
        );
        let mut lo = first.lo();
        let mut hi = first.lo();
        let mut maxlen = IntVect::UNIT;
        for b in boxes {
            lo = lo.min(b.lo());
            hi = hi.max(b.lo());
            maxlen = maxlen.max(b.length());
        }
        let budget = 4 * boxes.len() as u128 + 64;
        let mut bin = maxlen;
        // Bins per direction, in u64: the extent `hi - lo + 1` is at least 1 (`hi` is
        // the largest low corner) and at most 2^32, which need not fit a 32-bit usize;
        // the bin sizes are positive (box lengths, doubled with saturation).
        let count = |bin: IntVect| -> [u64; 3] {
            core::array::from_fn(|d| {
                let ext = (i64::from(hi[d]) - i64::from(lo[d]) + 1).cast_unsigned();
                ext.div_ceil(u64::from(bin[d].cast_unsigned()))
            })
        };
        let mut nbins = count(bin);
        while nbins.iter().map(|&n| u128::from(n)).product::<u128>() > budget {
            // Double the bin size in the direction with the most bins.
            let d = (0..3).max_by_key(|&d| nbins[d]).unwrap_or(0);
            bin[d] = bin[d].saturating_mul(2);
            nbins = count(bin);
        }
        // Each count is at least 1 and their product at most the budget,
        // `4 * boxes.len() + 64`, which fits usize (a slice of boxes, of more than 8
        // bytes each, holds fewer than isize::MAX / 8): so do each count and the total.
        let nbins = nbins.map(|n| usize::try_from(n).expect("bins within the budget"));
        let total = nbins[0] * nbins[1] * nbins[2];
        let mut idx = Self {
            origin: lo,
            bin,
            nbins,
            maxlen,
            start: vec![0; total + 1],
            items: vec![0; boxes.len()],
        };
        let keys: Vec<usize> = boxes.iter().map(|b| idx.key(idx.bin_of(b.lo()))).collect();
        for &k in &keys {
            idx.start[k + 1] += 1;
        }
        for b in 0..total {
            idx.start[b + 1] += idx.start[b];
        }
        let mut fill = idx.start.clone();
        for (i, &k) in keys.iter().enumerate() {
            idx.items[fill[k] as usize] =
                u32::try_from(i).expect("at most u32::MAX boxes (asserted)");
            fill[k] += 1;
        }
        idx
    }

    fn bin_of(&self, p: IntVect) -> [i64; 3] {
        core::array::from_fn(|d| {
            (i64::from(p[d]) - i64::from(self.origin[d])).div_euclid(i64::from(self.bin[d]))
        })
    }

    /// The index of bin `b`, which lies in the grid: `0 <= b[d] < nbins[d]` (the bin of a
    /// low corner, which lies in `lo..=hi`, or one of `candidates`'s clamped range).
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "0 <= b[d] < nbins[d], a usize"
    )]
    fn key(&self, b: [i64; 3]) -> usize {
        debug_assert!((0..3).all(|d| usize::try_from(b[d]).is_ok_and(|x| x < self.nbins[d])));
        b[0] as usize + self.nbins[0] * (b[1] as usize + self.nbins[1] * b[2] as usize)
    }

    fn candidates(&self, bx: &IndexBox, ng: IntVect, mut f: impl FnMut(usize) -> bool) {
        if self.items.is_empty() {
            return;
        }
        let qlo: [i64; 3] = core::array::from_fn(|d| {
            i64::from(bx.lo()[d]) - i64::from(ng[d]) - i64::from(self.maxlen[d]) + 1
        });
        let qhi: [i64; 3] = core::array::from_fn(|d| i64::from(bx.hi()[d]) + i64::from(ng[d]));
        let mut blo = [0i64; 3];
        let mut bhi = [0i64; 3];
        for d in 0..3 {
            let o = i64::from(self.origin[d]);
            let s = i64::from(self.bin[d]);
            blo[d] = (qlo[d] - o).div_euclid(s).max(0);
            // At most 2^32 bins per direction (`build`), so the count fits i64.
            let last = i64::try_from(self.nbins[d]).unwrap_or(i64::MAX) - 1;
            bhi[d] = (qhi[d] - o).div_euclid(s).min(last);
            if blo[d] > bhi[d] {
                return;
            }
        }
        for k in blo[2]..=bhi[2] {
            for j in blo[1]..=bhi[1] {
                for i in blo[0]..=bhi[0] {
                    let key = self.key([i, j, k]);
                    let (s, e) = (self.start[key] as usize, self.start[key + 1] as usize);
                    for &item in &self.items[s..e] {
                        if !f(item as usize) {
                            return;
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bx(lo: [i32; 3], hi: [i32; 3]) -> IndexBox {
        IndexBox::new(lo.into(), hi.into())
    }

    #[test]
    fn simplified_list_is_the_list_chopped_from() {
        let sq = IndexBox::new(IntVect::ZERO, IntVect::new(15, 15, 0));
        let halves = BoxList::from_boxes(vec![
            IndexBox::new(IntVect::ZERO, IntVect::new(7, 15, 0)),
            IndexBox::new(IntVect::new(8, 0, 0), IntVect::new(15, 15, 0)),
        ]);
        let ba = BoxArray::from_list_max_size(halves.clone(), IntVect::splat(4));
        assert_eq!(ba.len(), 16);
        assert_eq!(ba.simplified_list(), halves);
        // Chopping further keeps it; min_max_size chops at multiples of its minimum.
        assert_eq!(ba.max_size(IntVect::splat(2)).simplified_list(), halves);
        let mm = ba.min_max_size(IntVect::splat(2), IntVect::new(2, 4, 4));
        assert_eq!(mm.len(), 32);
        assert_eq!(mm.simplified_list(), halves);
        // A domain's array remembers the domain; any other array merges its boxes.
        assert_eq!(
            BoxArray::from_domain(sq, 8).simplified_list().boxes(),
            &[sq]
        );
        let refined = ba.refine(IntVect::UNIT);
        assert_eq!(refined.simplified_list().boxes(), &[sq]);
        assert_eq!(refined, ba);
    }

    #[test]
    fn complement_in_is_exactly_the_uncovered_part() {
        let ba = BoxArray::new(vec![
            bx([0, 0, 0], [3, 3, 3]),
            bx([4, 0, 0], [7, 3, 3]),
            bx([2, 4, 0], [5, 7, 3]),
        ]);
        for target in [
            bx([-1, -1, -1], [8, 8, 4]),
            bx([0, 0, 0], [7, 3, 3]),
            bx([9, 9, 9], [10, 10, 10]),
        ] {
            let parts = ba.complement_in(&target);
            for p in target.iter() {
                let n = parts.iter().filter(|q| q.contains(p)).count();
                assert_eq!(n, usize::from(!ba.contains(p)), "point {p} of {target}");
            }
            assert!(parts.iter().all(|q| target.contains_box(q)));
        }
        assert!(ba.complement_in(&bx([0, 0, 0], [7, 3, 3])).is_empty());
        assert_eq!(
            ba.complement_in(&bx([9, 9, 9], [10, 10, 10])),
            [bx([9, 9, 9], [10, 10, 10])]
        );
    }

    #[test]
    fn max_size_matches_amrex_order_and_sizes() {
        // 100 cells with max 32: AMReX reduces by powers of two (4 | 32 and 4 | 100),
        // 25 coarse cells in blocks of 8 -> 4 blocks of 7,6,6,6 coarse -> 28,24,24,24.
        let ba = BoxArray::from_domain_iv(bx([0, 0, 0], [99, 7, 7]), IntVect::new(32, 8, 8));
        let his: Vec<i32> = ba.boxes().iter().map(|b| b.hi().x()).collect();
        assert_eq!(his, [27, 51, 75, 99]);
        // x fastest, then y, then z.
        let ba = BoxArray::from_domain(bx([0, 0, 0], [63, 63, 63]), 32);
        assert_eq!(ba.get(1).lo(), IntVect::new(32, 0, 0));
        assert_eq!(ba.get(2).lo(), IntVect::new(0, 32, 0));
        assert_eq!(ba.get(4).lo(), IntVect::new(0, 0, 32));
        // odd length: 33 cells, max 16 -> 3 blocks 11,11,11.
        let ba = BoxArray::from_domain_iv(bx([-5, 0, 0], [27, 0, 0]), IntVect::new(16, 1, 1));
        let lens: Vec<i32> = ba.boxes().iter().map(|b| b.length().x()).collect();
        assert_eq!(lens, [11, 11, 11]);
        assert_eq!(ba.get(0).lo().x(), -5);
    }

    #[test]
    fn nodal_max_size_shares_nodes() {
        let d = bx([0, 0, 0], [63, 0, 0]).surrounding_nodes();
        let ba = BoxArray::from_domain_iv(d, IntVect::new(32, 64, 64));
        assert_eq!(ba.len(), 2);
        assert_eq!(ba.get(0).hi().x(), 32);
        assert_eq!(ba.get(1).lo().x(), 32);
    }

    #[test]
    fn index_finds_everything_brute_force_finds() {
        // Fewer boxes under Miri.
        let hi = if cfg!(miri) {
            [40, 20, 10]
        } else {
            [90, 40, 20]
        };
        let ba = BoxArray::from_domain(bx([-7, 3, 0], hi), 9);
        let queries = [
            bx([0, 0, 0], [0, 0, 0]),
            bx([-100, -100, -100], [100, 100, 100]),
            bx([10, 10, 10], [30, 12, 11]),
            bx([95, 0, 0], [99, 50, 50]),
            bx([-9, 2, -2], [-7, 3, 0]),
        ];
        for q in queries {
            for ng in [IntVect::ZERO, IntVect::new(1, 2, 3)] {
                let got = ba.intersections_grown(&q, ng);
                let want: Vec<_> = ba
                    .boxes()
                    .iter()
                    .enumerate()
                    .filter_map(|(i, b)| b.grow_iv(ng).intersection(&q).map(|x| (i, x)))
                    .collect();
                assert_eq!(got, want, "query {q} ng {ng}");
            }
        }
    }

    #[test]
    fn sparse_boxes_do_not_blow_up_the_index() {
        let ba = BoxArray::new(vec![
            bx([0, 0, 0], [0, 0, 0]),
            bx(
                [1_000_000, 1_000_000, 1_000_000],
                [1_000_000, 1_000_000, 1_000_000],
            ),
        ]);
        assert!(ba.inner.index.start.len() < 200);
        assert!(ba.contains(IntVect::splat(1_000_000)));
        assert!(!ba.contains(IntVect::splat(500_000)));
    }

    #[test]
    fn contains_box_and_disjoint() {
        // 8 boxes instead of 64 under Miri.
        let n = if cfg!(miri) { 16 } else { 32 };
        let ba = BoxArray::from_domain(bx([0, 0, 0], [n - 1, n - 1, n - 1]), 8);
        assert!(ba.contains_box(&bx([3, 3, 3], [n - 12, n - 2, n - 1])));
        assert!(!ba.contains_box(&bx([3, 3, 3], [n - 12, n - 2, n])));
        assert!(ba.is_disjoint());
        let ov = BoxArray::new(vec![bx([0, 0, 0], [3, 3, 3]), bx([3, 3, 3], [5, 5, 5])]);
        assert!(!ov.is_disjoint());
        assert_eq!(ba.minimal_box(), bx([0, 0, 0], [n - 1, n - 1, n - 1]));
        assert_eq!(
            ba.coarsen(IntVect::splat(2)).minimal_box(),
            bx([0, 0, 0], [n / 2 - 1, n / 2 - 1, n / 2 - 1])
        );
        assert_eq!(
            ba.refine(IntVect::splat(2)).num_pts(),
            8 * u64::try_from(n * n * n).unwrap()
        );
        assert_eq!(ba.convert(IndexType::NODE).get(0).hi(), IntVect::splat(8));
    }
}
