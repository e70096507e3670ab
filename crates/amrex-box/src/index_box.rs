//! `IndexBox`: AMReX's `Box`.

use core::fmt;
use core::ops::BitAnd;

use crate::index_type::IndexType;
use crate::int_vect::{IntVect, SPACEDIM};
use crate::iter::{Cells, Tiles};

/// A rectangular region of index space, AMReX's `Box` (renamed so it does not clash
/// with `alloc::boxed::Box`).
///
/// Both corners are **inclusive**: the box holds every point `p` with
/// `small_end <= p <= big_end` component-wise. The [`IndexType`] says, per direction,
/// whether the indices name cells or nodes; two boxes are equal only if their corners
/// *and* types are equal. A box whose `big_end` is below its `small_end` in some
/// direction is empty ([`ok`](Self::ok) is `false`); such boxes are legal values (the
/// result of growing by a negative amount, for example) and have zero points.
///
/// Methods that transform the box (`grow`, `shift`, `coarsen`, ...) return a new box,
/// like `ndarray`'s slicing; the original is `Copy`.
///
/// ```
/// use amrex_box::{IndexBox, IndexType, IntVect};
/// let b = IndexBox::new(IntVect::new(0, 0, 0), IntVect::new(7, 3, 1));
/// assert_eq!(b.length(), IntVect::new(8, 4, 2));
/// assert_eq!(b.num_pts(), 64);
/// assert!(b.contains(IntVect::new(7, 3, 1)) && !b.contains(IntVect::new(8, 0, 0)));
/// let nodes = b.surrounding_nodes();
/// assert_eq!(nodes.ix_type(), IndexType::NODE);
/// assert_eq!(nodes.enclosed_cells(), b);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IndexBox {
    small: IntVect,
    big: IntVect,
    typ: IndexType,
}

impl Default for IndexBox {
    /// An empty cell-centred box (`small_end = (1,1,1)`, `big_end = (0,0,0)`), as
    /// AMReX's default `Box()`.
    fn default() -> Self {
        Self::new(IntVect::UNIT, IntVect::ZERO)
    }
}

/// `a + b`, panicking on `i32` overflow in every build profile (see [`IntVect`]'s
/// arithmetic).
#[inline]
#[track_caller]
fn add(a: i32, b: i32) -> i32 {
    match a.checked_add(b) {
        Some(v) => v,
        None => panic!("IndexBox: {a} + {b} overflows i32"),
    }
}

/// `a - b`, as [`add`].
#[inline]
#[track_caller]
fn sub(a: i32, b: i32) -> i32 {
    match a.checked_sub(b) {
        Some(v) => v,
        None => panic!("IndexBox: {a} - {b} overflows i32"),
    }
}

/// `v` as `i32`, for a coordinate computed in `i64` that lies inside a box or the index
/// space (so inside `i32`); panics in every build profile if it does not, as [`add`].
#[inline]
#[track_caller]
pub(crate) fn coord(v: i64) -> i32 {
    match i32::try_from(v) {
        Ok(c) => c,
        Err(_) => panic!("IndexBox: {v} is outside i32"),
    }
}

#[inline]
#[track_caller]
fn check_dir(dir: usize) {
    assert!(dir < SPACEDIM, "IndexBox: direction {dir} is not 0, 1 or 2");
}

impl IndexBox {
    /// A cell-centred box with inclusive corners `lo` and `hi`.
    #[inline]
    #[must_use]
    pub const fn new(lo: IntVect, hi: IntVect) -> Self {
        Self {
            small: lo,
            big: hi,
            typ: IndexType::CELL,
        }
    }

    /// A box with inclusive corners `lo` and `hi` and the given index type.
    #[inline]
    #[must_use]
    pub const fn with_type(lo: IntVect, hi: IntVect, typ: IndexType) -> Self {
        Self {
            small: lo,
            big: hi,
            typ,
        }
    }

    /// A cell-centred box with low corner `lo` and `len` points per direction.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn from_lo_len(lo: IntVect, len: IntVect) -> Self {
        Self::new(lo, lo + len - 1)
    }

    /// The inclusive low corner (AMReX's `smallEnd()`).
    #[inline]
    #[must_use]
    pub const fn small_end(&self) -> IntVect {
        self.small
    }

    /// The inclusive high corner (AMReX's `bigEnd()`).
    #[inline]
    #[must_use]
    pub const fn big_end(&self) -> IntVect {
        self.big
    }

    /// Alias of [`small_end`](Self::small_end).
    #[inline]
    #[must_use]
    pub const fn lo(&self) -> IntVect {
        self.small
    }

    /// Alias of [`big_end`](Self::big_end).
    #[inline]
    #[must_use]
    pub const fn hi(&self) -> IntVect {
        self.big
    }

    /// The index type (cell or node per direction).
    #[inline]
    #[must_use]
    pub const fn ix_type(&self) -> IndexType {
        self.typ
    }

    /// `true` if cell-centred in every direction.
    #[inline]
    #[must_use]
    pub const fn cell_centered(&self) -> bool {
        self.typ.cell_centered()
    }

    /// `true` if node-centred in every direction.
    #[inline]
    #[must_use]
    pub const fn node_centered(&self) -> bool {
        self.typ.node_centered()
    }

    /// `true` if both boxes have the same index type.
    #[inline]
    #[must_use]
    pub fn same_type(&self, other: &Self) -> bool {
        self.typ == other.typ
    }

    /// `true` if the box holds at least one point: `big_end >= small_end` in every
    /// direction.
    #[inline]
    #[must_use]
    pub const fn ok(&self) -> bool {
        self.small.all_le(self.big)
    }

    /// `true` if the box holds no point (`!self.ok()`).
    #[inline]
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        !self.ok()
    }

    /// Number of points per direction, `big_end - small_end + 1` (zero or negative in
    /// a direction where the box is empty).
    ///
    /// # Panics
    /// If a length does not fit in `i32` (a box outside the index space, see
    /// [`check_index_space`](Self::check_index_space)), in every build profile.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn length(&self) -> IntVect {
        self.big - self.small + 1
    }

    /// Number of points in direction `dir`, as `u64`; `0` if empty in that direction.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn length_dir(&self, dir: usize) -> u64 {
        check_dir(dir);
        let l = i64::from(self.big[dir]) - i64::from(self.small[dir]) + 1;
        u64::try_from(l).unwrap_or(0)
    }

    /// Total number of points, `None` if it overflows `u64`; `Some(0)` for an empty box.
    #[inline]
    #[must_use]
    pub fn checked_num_pts(&self) -> Option<u64> {
        if !self.ok() {
            return Some(0);
        }
        self.length_dir(0)
            .checked_mul(self.length_dir(1))?
            .checked_mul(self.length_dir(2))
    }

    /// Total number of points as `usize`, `None` if it does not fit (useful to size an
    /// allocation); `Some(0)` for an empty box.
    #[inline]
    #[must_use]
    pub fn checked_num_pts_usize(&self) -> Option<usize> {
        usize::try_from(self.checked_num_pts()?).ok()
    }

    /// Total number of points (AMReX's `numPts()`), `0` for an empty box.
    ///
    /// # Panics
    /// If the count overflows `u64` (a box with more than 2⁶⁴ points); use
    /// [`checked_num_pts`](Self::checked_num_pts) to handle that case.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn num_pts(&self) -> u64 {
        match self.checked_num_pts() {
            Some(n) => n,
            None => panic!("IndexBox::num_pts: the number of points of {self} overflows u64"),
        }
    }

    /// `true` if `p` lies inside the box.
    #[inline]
    #[must_use]
    pub const fn contains(&self, p: IntVect) -> bool {
        self.small.all_le(p) && p.all_le(self.big)
    }

    /// `true` if `b` lies inside `self`: same index type and both corners of `b` inside
    /// `self` (AMReX's `contains(Box)`; an empty `b` is contained only if its corners are).
    #[inline]
    #[must_use]
    pub fn contains_box(&self, b: &Self) -> bool {
        self.typ == b.typ && self.contains(b.small) && self.contains(b.big)
    }

    /// `true` if the boxes have the same type and share at least one point.
    #[inline]
    #[must_use]
    pub fn intersects(&self, b: &Self) -> bool {
        self.intersection(b).is_some()
    }

    /// The common part of two boxes of the same type, `None` if they do not overlap or
    /// their types differ.
    #[inline]
    #[must_use]
    pub fn intersection(&self, b: &Self) -> Option<Self> {
        let r = Self::with_type(self.small.max(b.small), self.big.min(b.big), self.typ);
        (self.typ == b.typ && r.ok()).then_some(r)
    }

    /// The smallest box containing both (AMReX's `minBox`).
    ///
    /// # Panics
    /// If the types differ.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn min_box(&self, b: &Self) -> Self {
        assert!(
            self.typ == b.typ,
            "IndexBox::min_box: index types differ ({} vs {})",
            self.typ,
            b.typ
        );
        Self::with_type(self.small.min(b.small), self.big.max(b.big), self.typ)
    }

    /// Moves both corners outwards by `n` in every direction (inwards if `n < 0`).
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn grow(&self, n: i32) -> Self {
        self.grow_iv(IntVect::splat(n))
    }

    /// Moves both corners outwards by `n[d]` in each direction `d`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn grow_iv(&self, n: IntVect) -> Self {
        Self::with_type(self.small - n, self.big + n, self.typ)
    }

    /// Moves both corners outwards by `n` in direction `dir` only.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn grow_dir(&self, dir: usize, n: i32) -> Self {
        self.grow_lo(dir, n).grow_hi(dir, n)
    }

    /// Moves the low corner down by `n` in direction `dir`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn grow_lo(&self, dir: usize, n: i32) -> Self {
        check_dir(dir);
        let mut r = *self;
        r.small[dir] = sub(r.small[dir], n);
        r
    }

    /// Moves the high corner up by `n` in direction `dir`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn grow_hi(&self, dir: usize, n: i32) -> Self {
        check_dir(dir);
        let mut r = *self;
        r.big[dir] = add(r.big[dir], n);
        r
    }

    /// The nodes around the box: in every cell-centred direction `big_end` grows by
    /// one and the direction becomes nodal (AMReX's `surroundingNodes()`).
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn surrounding_nodes(&self) -> Self {
        self.convert(IndexType::NODE)
    }

    /// [`surrounding_nodes`](Self::surrounding_nodes) in direction `dir` only; no change
    /// if that direction is already nodal.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn surrounding_nodes_dir(&self, dir: usize) -> Self {
        self.convert(self.typ.with_node(dir))
    }

    /// The cells enclosed by a nodal box: in every nodal direction `big_end` shrinks by
    /// one and the direction becomes cell-centred (AMReX's `enclosedCells()`).
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn enclosed_cells(&self) -> Self {
        self.convert(IndexType::CELL)
    }

    /// [`enclosed_cells`](Self::enclosed_cells) in direction `dir` only.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn enclosed_cells_dir(&self, dir: usize) -> Self {
        self.convert(self.typ.with_cell(dir))
    }

    /// Changes the index type: `big_end` grows by one in each direction that goes from
    /// cell to node and shrinks by one in each that goes from node to cell.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn convert(&self, typ: IndexType) -> Self {
        let shift = typ.ix_type() - self.typ.ix_type();
        Self::with_type(self.small, self.big + shift, typ)
    }

    /// Coarsens by the same ratio `r` in every direction; see
    /// [`coarsen_iv`](Self::coarsen_iv).
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn coarsen(&self, r: i32) -> Self {
        self.coarsen_iv(IntVect::splat(r))
    }

    /// Coarsens by `r[d]` in each direction with AMReX's rounding: `small_end` is
    /// floor-divided; `big_end` is floor-divided in cell directions and rounded up in
    /// node directions (so the coarse box still covers every fine node).
    ///
    /// # Panics
    /// If a ratio is not positive.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn coarsen_iv(&self, r: IntVect) -> Self {
        let small = self.small.coarsen(r);
        let mut big = self.big.coarsen(r);
        for d in 0..SPACEDIM {
            if self.typ.node_centered_dir(d) && self.big[d].rem_euclid(r[d]) != 0 {
                big[d] = add(big[d], 1);
            }
        }
        Self::with_type(small, big, self.typ)
    }

    /// Refines by the same ratio `r` in every direction; see
    /// [`refine_iv`](Self::refine_iv).
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn refine(&self, r: i32) -> Self {
        self.refine_iv(IntVect::splat(r))
    }

    /// Refines by `r[d]` in each direction: `small_end * r`; `big_end` becomes
    /// `(big_end + 1) * r - 1` in cell directions and `big_end * r` in node directions.
    ///
    /// # Panics
    /// If a ratio is not positive.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn refine_iv(&self, r: IntVect) -> Self {
        let shift = IntVect::UNIT - self.typ.ix_type();
        Self::with_type(
            self.small.refine(r),
            (self.big + shift).refine(r) - shift,
            self.typ,
        )
    }

    /// `true` if coarsening by `r` and refining back gives `self` exactly.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn coarsenable(&self, r: IntVect) -> bool {
        self.coarsen_iv(r).refine_iv(r) == *self
    }

    /// A slab one index thick: `small_end[dir] = big_end[dir] = idx`
    /// (AMReX's `makeSlab`).
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn make_slab(&self, dir: usize, idx: i32) -> Self {
        check_dir(dir);
        let mut r = *self;
        r.small[dir] = idx;
        r.big[dir] = idx;
        r
    }

    /// Moves the box by `n` in direction `dir`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn shift(&self, dir: usize, n: i32) -> Self {
        check_dir(dir);
        self.shift_iv(IntVect::basis(dir) * n)
    }

    /// Moves the box by `v`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn shift_iv(&self, v: IntVect) -> Self {
        Self::with_type(self.small + v, self.big + v, self.typ)
    }

    /// Splits the box in direction `dir` into the part below `idx` and the part from
    /// `idx` up; the two parts are disjoint and one may be empty. Unlike AMReX's `chop`,
    /// nodal boxes do not share the node at `idx`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn split_at(&self, dir: usize, idx: i32) -> (Self, Self) {
        check_dir(dir);
        let mut lo = *self;
        let mut hi = *self;
        lo.big[dir] = sub(idx, 1);
        hi.small[dir] = idx;
        (lo, hi)
    }

    /// Fortran-order (i fastest) offset of `p` from `small_end`:
    /// `(i-lo.x) + len.x*((j-lo.y) + len.y*(k-lo.z))`.
    ///
    /// # Panics
    /// If `p` is not inside the box.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn index(&self, p: IntVect) -> usize {
        assert!(
            self.contains(p),
            "IndexBox::index: point {p} is outside {self}"
        );
        // Not negative: `p` is inside the box.
        let d = |dir: usize| (i64::from(p[dir]) - i64::from(self.small[dir])).cast_unsigned();
        // In range because `p` is inside the box, so the result is below `num_pts`;
        // only the conversion to `usize` can fail, on 32-bit targets.
        let n = d(0) + self.length_dir(0) * (d(1) + self.length_dir(1) * d(2));
        usize::try_from(n).expect("IndexBox::index: offset does not fit in usize")
    }

    /// The point at Fortran-order offset `n`; inverse of [`index`](Self::index).
    ///
    /// # Panics
    /// If `n >= num_pts()`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn at_index(&self, n: usize) -> IntVect {
        let n64 = n as u64;
        assert!(
            self.checked_num_pts().is_none_or(|np| n64 < np),
            "IndexBox::at_index: offset {n} is not below the {} points of {self}",
            self.checked_num_pts().unwrap_or(0)
        );
        let (lx, ly) = (self.length_dir(0), self.length_dir(1));
        let (i, rest) = (n64 % lx, n64 / lx);
        let (j, k) = (rest % ly, rest / ly);
        // Each offset is below the length of its direction (at most 2^32), so it fits in
        // i64, and the sum with small_end lies inside the box, hence inside i32.
        let at = |d: usize, off: u64| coord(i64::from(self.small[d]) + off.cast_signed());
        IntVect::new(at(0, i), at(1, j), at(2, k))
    }

    /// Iterator over the box's points in Fortran order (`i` fastest, then `j`, then `k`).
    #[inline]
    #[must_use]
    pub fn iter(&self) -> Cells {
        Cells::new(*self)
    }

    /// Tiles of at most `tile_size` points per direction that partition the box, in
    /// Fortran order of tiles (tile `x` index fastest). Each tile has the box's index
    /// type; tiles are disjoint and cover every point once, so they can be handed to
    /// different threads. Useful for cache blocking and for parallel loops.
    ///
    /// ```
    /// use amrex_box::{IndexBox, IntVect};
    /// let b = IndexBox::new(IntVect::ZERO, IntVect::new(9, 3, 0));
    /// let tiles = b.tiles(IntVect::new(4, 4, 4));
    /// assert_eq!(tiles.len(), 3);
    /// let his: Vec<_> = tiles.map(|t| t.hi().x()).collect();
    /// assert_eq!(his, [3, 7, 9]);
    /// ```
    ///
    /// # Panics
    /// If a tile size is not positive or the number of tiles does not fit in `usize`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn tiles(&self, tile_size: IntVect) -> Tiles {
        Tiles::new(*self, tile_size)
    }
}

impl BitAnd for IndexBox {
    type Output = Self;
    /// AMReX's `operator&`: the intersection, which may be empty (`!ok()`).
    ///
    /// # Panics
    /// If the types differ.
    #[inline]
    #[track_caller]
    fn bitand(self, b: Self) -> Self {
        assert!(
            self.typ == b.typ,
            "IndexBox & IndexBox: index types differ ({} vs {})",
            self.typ,
            b.typ
        );
        Self::with_type(self.small.max(b.small), self.big.min(b.big), self.typ)
    }
}

impl IntoIterator for IndexBox {
    type Item = IntVect;
    type IntoIter = Cells;
    #[inline]
    fn into_iter(self) -> Cells {
        Cells::new(self)
    }
}

impl IntoIterator for &IndexBox {
    type Item = IntVect;
    type IntoIter = Cells;
    #[inline]
    fn into_iter(self) -> Cells {
        Cells::new(*self)
    }
}

impl fmt::Display for IndexBox {
    /// AMReX's notation: `((lo) (hi) (ixtype))`, e.g. `((0,0,0) (7,7,7) (0,0,0))`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({} {} {})", self.small, self.big, self.typ.ix_type())
    }
}
