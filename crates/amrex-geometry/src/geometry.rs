//! `Geometry`: AMReX's `Geometry`, the index domain of one level laid over the problem's
//! physical extent, with its coordinate system and periodicity.

use amrex_box::{IndexBox, IndexSpaceError, IntVect, SPACEDIM};
use num_traits::{Float, ToPrimitive};

use crate::coord_sys::CoordSys;
use crate::error::{GeometryError, GeometryErrorKind};
use crate::periodicity::Periodicity;
use crate::real_box::RealBox;

/// The geometry of one AMR level, AMReX's `Geometry`: a cell-centred index `domain`, the
/// physical extent it covers (a [`RealBox`], AMReX's `ProbDomain()`), the coordinate
/// system and which directions are periodic.
///
/// The domain's first cell starts at `prob_lo` and its last cell ends at `prob_hi`, so
/// the cell size is `dx[d] = (prob_hi[d] - prob_lo[d]) / cells[d]` and cell `i` spans
/// `prob_lo + dx·(i - small_end) ..= prob_lo + dx·(i - small_end + 1)`. (AMReX's
/// `CoordSys` puts index 0, not the domain's first cell, at `prob_lo`, while its particle
/// and round-off code put the first cell there; the two agree for domains that start at
/// index 0, which every AMR level built by refining a level-0 domain at 0 does. This
/// type follows the second rule everywhere, so that the `RealBox` is always exactly the
/// domain's extent.)
///
/// | AMReX | here |
/// |---|---|
/// | `Geometry(dom, rb, coord, is_per)` | [`Geometry::new`] (checked: [`GeometryError`]) |
/// | `Geometry(dom, RealBox(lo, hi), 0, {0, 0, 0})` | [`Geometry::cartesian`] (checked) |
/// | `Domain()`, `ProbDomain()`, `ProbLo()`, `ProbHi()`, `ProbLength(d)`, `ProbSize()` | [`domain`](Self::domain), [`real_box`](Self::real_box), [`prob_lo`](Self::prob_lo), [`prob_hi`](Self::prob_hi), [`prob_length`](Self::prob_length), [`prob_size`](Self::prob_size) |
/// | `Coord()` | [`coord`](Self::coord) |
/// | `CellSize()`, `InvCellSize()` | [`cell_size`](Self::cell_size), [`inv_cell_size`](Self::inv_cell_size) |
/// | `CellCenter(iv)`, `CellCenter(i, d)` | [`cell_centre`](Self::cell_centre), [`cell_centre_dir`](Self::cell_centre_dir) |
/// | `LoNode(iv)`, `LoEdge(i, d)`, `HiEdge(i, d)`, `LoFace(iv, d)` | [`node_location`](Self::node_location), [`lo_edge`](Self::lo_edge), [`hi_edge`](Self::hi_edge), [`face_centre`](Self::face_centre) |
/// | `RealBox(b, CellSize(), ProbLo())` | [`box_extent`](Self::box_extent) |
/// | `CellIndex(x)` (with `floor`, as AMReX's particle code) | [`cell_index`](Self::cell_index) |
/// | `Volume(iv)`, `AreaLo(iv, d)`, `GetDLogA` per cell | [`volume`](Self::volume), [`face_area`](Self::face_area), [`dloga`](Self::dloga) |
/// | `isPeriodic(d)`, `isAnyPeriodic()`, `isAllPeriodic()`, `period(d)` | [`is_periodic`](Self::is_periodic), [`is_any_periodic`](Self::is_any_periodic), [`is_all_periodic`](Self::is_all_periodic), [`period`](Self::period) |
/// | `periodicity()`, `periodicity(b)` | [`periodicity`](Self::periodicity), [`periodicity_for`](Self::periodicity_for) |
/// | `periodicShift(target, src, out)` | [`periodic_shift`](Self::periodic_shift) |
/// | `growPeriodicDomain(n)`, `growNonPeriodicDomain(n)` | [`grow_periodic_domain`](Self::grow_periodic_domain), [`grow_non_periodic_domain`](Self::grow_non_periodic_domain); any box: [`grow_periodic`](Self::grow_periodic), [`grow_non_periodic`](Self::grow_non_periodic) |
/// | `insideRoundoffDomain(x)`, `outsideRoundoffDomain(x)` | [`inside_physical_domain`](Self::inside_physical_domain), [`outside_physical_domain`](Self::outside_physical_domain) |
/// | `refine(geom, rr)`, `coarsen(geom, rr)` | [`refine`](Self::refine), [`coarsen`](Self::coarsen) (checked) |
///
/// ```
/// use amrex_box::{IndexBox, IntVect};
/// use amrex_geometry::{CoordSys, Geometry, RealBox};
/// let domain = IndexBox::new(IntVect::ZERO, IntVect::new(63, 31, 0));
/// let rb = RealBox::new([0.0, -1.0, 0.0], [2.0, 1.0, 1.0])?;
/// let geom = Geometry::new(domain, rb, CoordSys::Cartesian, [true, false, false])?;
/// assert_eq!(geom.cell_size(), [1.0 / 32.0, 1.0 / 16.0, 1.0]);
/// assert_eq!(geom.cell_centre(IntVect::new(0, 16, 0)), [1.0 / 64.0, 1.0 / 32.0, 0.5]);
/// assert_eq!(geom.period(0), Some(64));
/// assert_eq!(geom.period(1), None);
/// // A 2-D problem refines by 1 in direction 2.
/// let fine = geom.refine(IntVect::new(2, 2, 1))?;
/// assert_eq!(fine.domain().hi(), IntVect::new(127, 63, 0));
/// assert_eq!(fine.real_box(), geom.real_box());
/// # Ok::<(), amrex_geometry::GeometryError>(())
/// ```
//
// Invariants, established by `new` and kept because the fields are private and every
// method that makes a new `Geometry` goes through `new`:
// 1. `domain` is cell-centred, non-empty and inside the i32 index space.
// 2. `real_box` is valid (finite corners, `lo < hi`, finite lengths).
// 3. `dx[d] = real_box.length(d) / cells[d]` is positive and finite, and
//    `inv_dx[d] = 1 / dx[d]` is finite.
// 4. RZ and spherical domains are one cell thick in direction 2.
// 5. `roundoff_hi[d]` is the smallest f64 `x` with `(x - prob_lo) * inv_dx >= cells`,
//    so every `x` in `prob_lo .. roundoff_hi` maps into the domain's cells.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Geometry {
    domain: IndexBox,
    real_box: RealBox,
    coord: CoordSys,
    periodic: [bool; SPACEDIM],
    dx: [f64; SPACEDIM],
    inv_dx: [f64; SPACEDIM],
    roundoff_hi: [f64; SPACEDIM],
}

/// Panics with a clear message for a direction that is not 0, 1 or 2.
#[inline]
#[track_caller]
fn check_dir(dir: usize) {
    assert!(dir < SPACEDIM, "Geometry: direction {dir} is not 0, 1 or 2");
}

/// A key whose unsigned order is the numeric order of the non-NaN `f64`s (`-0.0` just
/// below `+0.0`).
fn ordered_key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 { !b } else { b | 1 << 63 }
}

/// The inverse of [`ordered_key`].
fn from_ordered_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// The smallest `x` that maps past the last of `cells` cells starting at `lo` with
/// inverse cell size `inv_dx`, i.e. with `(x - lo) * inv_dx >= cells` in `f64`: AMReX's
/// round-off domain edge (`computeRoundoffDomain`), found exactly by bisecting the
/// ordered `f64`s instead of up to a tolerance. The test is monotone in `x` (each
/// rounded operation is), so bisection finds the one edge.
fn roundoff_edge(lo: f64, hi: f64, inv_dx: f64, cells: i32) -> f64 {
    let n = f64::from(cells);
    let outside = |x: f64| (x - lo) * inv_dx >= n;
    // `lo` maps to 0 < n: inside. Find a point outside: `hi`, else one more length up,
    // else infinity (for which the test is `inf >= n`).
    let up = [hi, hi + (hi - lo), f64::INFINITY]
        .into_iter()
        .find(|&x| outside(x))
        .unwrap_or(f64::INFINITY);
    let (mut inside_k, mut outside_k) = (ordered_key(lo), ordered_key(up));
    while outside_k - inside_k > 1 {
        let mid = inside_k + (outside_k - inside_k) / 2;
        if outside(from_ordered_key(mid)) {
            outside_k = mid;
        } else {
            inside_k = mid;
        }
    }
    from_ordered_key(outside_k)
}

impl Geometry {
    /// The geometry of `domain` over `real_box` in coordinates `coord`, periodic in the
    /// flagged directions (AMReX's `Geometry(dom, rb, coord, is_per)`).
    ///
    /// # Errors
    /// - [`NotCellCentred`](GeometryErrorKind::NotCellCentred) if `domain` is nodal in
    ///   some direction, [`EmptyDomain`](GeometryErrorKind::EmptyDomain) if it holds no
    ///   cell, [`OutsideIndexSpace`](GeometryErrorKind::OutsideIndexSpace) if it leaves
    ///   the `i32` index space;
    /// - [`CurvilinearThirdDirection`](GeometryErrorKind::CurvilinearThirdDirection) for
    ///   RZ or spherical coordinates with more than one cell in direction 2;
    /// - [`CellSizeOutOfRange`](GeometryErrorKind::CellSizeOutOfRange) if a cell size
    ///   underflows to zero or its inverse overflows.
    pub fn new(
        domain: IndexBox,
        real_box: RealBox,
        coord: CoordSys,
        periodic: [bool; SPACEDIM],
    ) -> Result<Self, GeometryError> {
        if !domain.cell_centered() {
            return Err(GeometryErrorKind::NotCellCentred { domain }.into());
        }
        if !domain.ok() {
            return Err(GeometryErrorKind::EmptyDomain { domain }.into());
        }
        domain.check_index_space()?;
        let cells = domain.length();
        if !coord.is_cartesian() && cells[2] != 1 {
            return Err(GeometryErrorKind::CurvilinearThirdDirection {
                coord,
                cells: cells[2],
            }
            .into());
        }
        let mut dx = [0.0; SPACEDIM];
        let mut inv_dx = [0.0; SPACEDIM];
        let mut roundoff_hi = [0.0; SPACEDIM];
        for d in 0..SPACEDIM {
            // AMReX's `computeRoundoffDomain`: length / cells, then the inverse.
            dx[d] = real_box.length(d) / f64::from(cells[d]);
            inv_dx[d] = 1.0 / dx[d];
            if !(dx[d] > 0.0 && inv_dx[d].is_finite()) {
                return Err(GeometryErrorKind::CellSizeOutOfRange { dir: d, dx: dx[d] }.into());
            }
            roundoff_hi[d] =
                roundoff_edge(real_box.lo_dir(d), real_box.hi_dir(d), inv_dx[d], cells[d]);
        }
        Ok(Self {
            domain,
            real_box,
            coord,
            periodic,
            dx,
            inv_dx,
            roundoff_hi,
        })
    }

    /// The non-periodic Cartesian geometry of `domain` over the box with corners
    /// `prob_lo` and `prob_hi`: [`RealBox::new`] then [`new`](Self::new), the common case
    /// in one call.
    ///
    /// ```
    /// use amrex_box::{IndexBox, IntVect};
    /// use amrex_geometry::{CoordSys, Geometry, RealBox};
    /// let domain = IndexBox::new(IntVect::ZERO, IntVect::new(15, 7, 7));
    /// let g = Geometry::cartesian(domain, [0.0; 3], [1.0, 0.5, 0.5])?;
    /// let rb = RealBox::new([0.0; 3], [1.0, 0.5, 0.5])?;
    /// assert_eq!(g, Geometry::new(domain, rb, CoordSys::Cartesian, [false; 3])?);
    /// assert!(Geometry::cartesian(domain, [0.0; 3], [1.0, 0.0, 1.0]).is_err());
    /// # Ok::<(), amrex_geometry::GeometryError>(())
    /// ```
    ///
    /// # Errors
    /// Those of [`RealBox::new`] for the corners, then those of [`new`](Self::new).
    pub fn cartesian(
        domain: IndexBox,
        prob_lo: [f64; SPACEDIM],
        prob_hi: [f64; SPACEDIM],
    ) -> Result<Self, GeometryError> {
        Self::new(
            domain,
            RealBox::new(prob_lo, prob_hi)?,
            CoordSys::Cartesian,
            [false; SPACEDIM],
        )
    }

    /// The cell-centred index domain (AMReX's `Domain()`).
    #[must_use]
    pub const fn domain(&self) -> IndexBox {
        self.domain
    }

    /// The physical extent of the domain (AMReX's `ProbDomain()`).
    #[must_use]
    pub const fn real_box(&self) -> RealBox {
        self.real_box
    }

    /// The low corner of the physical extent (AMReX's `ProbLo()`).
    #[must_use]
    pub const fn prob_lo(&self) -> [f64; SPACEDIM] {
        self.real_box.lo()
    }

    /// The high corner of the physical extent (AMReX's `ProbHi()`).
    #[must_use]
    pub const fn prob_hi(&self) -> [f64; SPACEDIM] {
        self.real_box.hi()
    }

    /// The physical length in direction `dir` (AMReX's `ProbLength(dir)`).
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[must_use]
    #[track_caller]
    pub fn prob_length(&self, dir: usize) -> f64 {
        self.real_box.length(dir)
    }

    /// The product of the three physical lengths (AMReX's `ProbSize()`); not the
    /// domain's volume in RZ or spherical coordinates (sum [`volume`](Self::volume)).
    #[must_use]
    pub fn prob_size(&self) -> f64 {
        self.real_box.volume()
    }

    /// The coordinate system (AMReX's `Coord()`).
    #[must_use]
    pub const fn coord(&self) -> CoordSys {
        self.coord
    }

    /// The cell size per direction (AMReX's `CellSize()`).
    #[must_use]
    pub const fn cell_size(&self) -> [f64; SPACEDIM] {
        self.dx
    }

    /// `1 / dx` per direction (AMReX's `InvCellSize()`).
    #[must_use]
    pub const fn inv_cell_size(&self) -> [f64; SPACEDIM] {
        self.inv_dx
    }

    /// The periodicity flags, one per direction.
    #[must_use]
    pub const fn periodic_flags(&self) -> [bool; SPACEDIM] {
        self.periodic
    }

    /// `true` if direction `dir` is periodic (AMReX's `isPeriodic(dir)`).
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[must_use]
    #[track_caller]
    pub fn is_periodic(&self, dir: usize) -> bool {
        check_dir(dir);
        self.periodic[dir]
    }

    /// `true` if some direction is periodic (AMReX's `isAnyPeriodic()`).
    #[must_use]
    pub fn is_any_periodic(&self) -> bool {
        self.periodic.iter().any(|&p| p)
    }

    /// `true` if every direction is periodic (AMReX's `isAllPeriodic()`).
    #[must_use]
    pub fn is_all_periodic(&self) -> bool {
        self.periodic.iter().all(|&p| p)
    }

    /// The period in direction `dir`, the domain's number of cells there, if that
    /// direction is periodic (AMReX's `period(dir)`, which asserts instead of answering
    /// `None`).
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[must_use]
    #[track_caller]
    pub fn period(&self, dir: usize) -> Option<i32> {
        self.is_periodic(dir).then(|| self.domain.length()[dir])
    }

    /// The domain's [`Periodicity`] (AMReX's `periodicity()`).
    #[must_use]
    pub fn periodicity(&self) -> Periodicity {
        Periodicity::new(self.domain, self.periodic)
    }

    /// A [`Periodicity`] with this geometry's flags and the lengths of `b` as periods
    /// (AMReX's `periodicity(const Box&)`; a nodal `b` is converted to cells first).
    #[must_use]
    #[track_caller]
    pub fn periodicity_for(&self, b: IndexBox) -> Periodicity {
        Periodicity::new(b, self.periodic)
    }

    /// The periodic shifts that move `src` onto `target`, AMReX's `periodicShift`: every
    /// `(i·L₀, j·L₁, k·L₂)` with `i, j, k` in `-1 ..= 1` (zero in non-periodic
    /// directions) and not all zero, `L` the domain's cell counts, for which `src`
    /// shifted by it intersects `target`; `i` slowest, `k` fastest. The zero shift is
    /// never listed, even when the boxes intersect unshifted, and only the nearest image
    /// on each side is tried (so boxes that reach more than a period beyond the domain
    /// miss further images; see [`Periodicity::shift_iter`] for those). Boxes of different
    /// index types never intersect.
    ///
    /// ```
    /// use amrex_box::{IndexBox, IntVect};
    /// use amrex_geometry::{CoordSys, Geometry, RealBox};
    /// let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(7));
    /// let g = Geometry::new(domain, RealBox::UNIT, CoordSys::Cartesian, [true; 3])?;
    /// // A ghost region beyond the high x face is filled from the low x end.
    /// let ghost = IndexBox::new(IntVect::new(8, 2, 2), IntVect::new(9, 3, 3));
    /// assert_eq!(g.periodic_shift(&ghost, &domain).as_slice(), [IntVect::new(8, 0, 0)]);
    /// # Ok::<(), amrex_geometry::GeometryError>(())
    /// ```
    #[must_use]
    #[track_caller]
    pub fn periodic_shift(&self, target: &IndexBox, src: &IndexBox) -> ShiftList {
        let len = self.domain.length();
        let range = |d: usize| if self.periodic[d] { 1 } else { 0 };
        let (mi, mj, mk) = (range(0), range(1), range(2));
        let mut out = ShiftList::new();
        for i in -mi..=mi {
            for j in -mj..=mj {
                for k in -mk..=mk {
                    if (i, j, k) == (0, 0, 0) {
                        continue;
                    }
                    let shift = IntVect::new(i, j, k) * len;
                    let moved = src.shifted_in_index_space(shift);
                    if moved.is_some_and(|m| target.intersects(&m)) {
                        out.push(shift);
                    }
                }
            }
        }
        out
    }

    /// `b` grown by `n[d]` on both sides in each periodic direction `d` (the
    /// non-periodic directions unchanged); AMReX's `growPeriodicDomain` for any box.
    ///
    /// # Panics
    /// If a corner leaves `i32`.
    #[must_use]
    #[track_caller]
    pub fn grow_periodic(&self, b: IndexBox, n: impl Into<IntVect>) -> IndexBox {
        self.grow_where(b, n.into(), true)
    }

    /// `b` grown by `n[d]` on both sides in each non-periodic direction `d`; AMReX's
    /// `growNonPeriodicDomain` for any box.
    ///
    /// # Panics
    /// If a corner leaves `i32`.
    #[must_use]
    #[track_caller]
    pub fn grow_non_periodic(&self, b: IndexBox, n: impl Into<IntVect>) -> IndexBox {
        self.grow_where(b, n.into(), false)
    }

    /// The domain grown by `n` in its periodic directions (AMReX's
    /// `growPeriodicDomain`): every cell a ghost region of width `n` can fill from
    /// periodic images.
    ///
    /// # Panics
    /// If a corner leaves `i32`.
    #[must_use]
    #[track_caller]
    pub fn grow_periodic_domain(&self, n: impl Into<IntVect>) -> IndexBox {
        self.grow_periodic(self.domain, n)
    }

    /// The domain grown by `n` in its non-periodic directions (AMReX's
    /// `growNonPeriodicDomain`).
    ///
    /// # Panics
    /// If a corner leaves `i32`.
    #[must_use]
    #[track_caller]
    pub fn grow_non_periodic_domain(&self, n: impl Into<IntVect>) -> IndexBox {
        self.grow_non_periodic(self.domain, n)
    }

    #[track_caller]
    fn grow_where(&self, b: IndexBox, n: IntVect, periodic: bool) -> IndexBox {
        (0..SPACEDIM)
            .filter(|&d| self.periodic[d] == periodic)
            .fold(b, |b, d| b.grow_dir(d, n[d]))
    }

    /// The offset of index `i` from the domain's first cell in direction `dir`, as `f64`
    /// (exact: two `i32` differ by less than 2³³).
    fn offset(&self, i: i32, dir: usize) -> f64 {
        (i64::from(i) - i64::from(self.domain.small_end()[dir])) as f64
    }

    /// The coordinate of the low face of cell `i` in direction `dir`, AMReX's
    /// `LoEdge(i, dir)`: `prob_lo + dx·(i - small_end)`.
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[must_use]
    #[track_caller]
    pub fn lo_edge(&self, i: i32, dir: usize) -> f64 {
        check_dir(dir);
        self.real_box.lo_dir(dir) + self.dx[dir] * self.offset(i, dir)
    }

    /// The coordinate of the high face of cell `i` in direction `dir`, AMReX's
    /// `HiEdge(i, dir)`: `prob_lo + dx·(i - small_end + 1)`.
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[must_use]
    #[track_caller]
    pub fn hi_edge(&self, i: i32, dir: usize) -> f64 {
        check_dir(dir);
        self.real_box.lo_dir(dir) + self.dx[dir] * (self.offset(i, dir) + 1.0)
    }

    /// The coordinate of the centre of cell `i` in direction `dir`, AMReX's
    /// `CellCenter(i, dir)`: `prob_lo + dx·(0.5 + i - small_end)`.
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[must_use]
    #[track_caller]
    pub fn cell_centre_dir(&self, i: i32, dir: usize) -> f64 {
        check_dir(dir);
        self.real_box.lo_dir(dir) + self.dx[dir] * (0.5 + self.offset(i, dir))
    }

    /// The centre of cell `iv` (AMReX's `CellCenter(iv)`). Any index works, including
    /// ghost cells outside the domain.
    #[must_use]
    pub fn cell_centre(&self, iv: IntVect) -> [f64; SPACEDIM] {
        core::array::from_fn(|d| self.cell_centre_dir(iv[d], d))
    }

    /// The location of node `iv`, the low corner of cell `iv` (AMReX's `LoNode(iv)`).
    #[must_use]
    pub fn node_location(&self, iv: IntVect) -> [f64; SPACEDIM] {
        core::array::from_fn(|d| self.lo_edge(iv[d], d))
    }

    /// The centre of the low face, normal to `dir`, of cell `iv` (AMReX's
    /// `LoFace(iv, dir)`): the low edge in `dir`, the cell centre in the others.
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[must_use]
    #[track_caller]
    pub fn face_centre(&self, iv: IntVect, dir: usize) -> [f64; SPACEDIM] {
        check_dir(dir);
        core::array::from_fn(|d| {
            if d == dir {
                self.lo_edge(iv[d], d)
            } else {
                self.cell_centre_dir(iv[d], d)
            }
        })
    }

    /// The physical extent of index box `b`, per direction `[lo, hi]`: from the low
    /// edge of its first cell to the high edge of its last (AMReX's
    /// `RealBox(b, CellSize(), ProbLo())` for a domain that starts at index 0). A nodal
    /// direction spans its first to its last node, so a box of one node has `lo == hi`
    /// there (which is why this is not a [`RealBox`]). This is the extent a plotfile
    /// `Header` records for each box.
    ///
    /// ```
    /// use amrex_box::{IndexBox, IndexType, IntVect};
    /// use amrex_geometry::Geometry;
    /// let domain = IndexBox::new(IntVect::ZERO, IntVect::new(7, 3, 0));
    /// let g = Geometry::cartesian(domain, [0.0; 3], [1.0, 1.0, 1.0])?;
    /// let b = IndexBox::new(IntVect::new(2, 0, 0), IntVect::new(3, 1, 0));
    /// assert_eq!(g.box_extent(&b), [[0.25, 0.5], [0.0, 0.5], [0.0, 1.0]]);
    /// // The nodes around those cells span the same extent; nodes 2 and 3 alone, less.
    /// let xnodal = IndexType::new(true, false, false);
    /// assert_eq!(g.box_extent(&b.convert(xnodal)), g.box_extent(&b));
    /// let nodes = IndexBox::with_type(b.lo(), b.hi(), xnodal);
    /// assert_eq!(g.box_extent(&nodes)[0], [0.25, 0.375]);
    /// # Ok::<(), amrex_geometry::GeometryError>(())
    /// ```
    #[must_use]
    pub fn box_extent(&self, b: &IndexBox) -> [[f64; 2]; SPACEDIM] {
        let (lo, hi, ix) = (b.lo(), b.hi(), b.ix_type());
        core::array::from_fn(|d| {
            let high = if ix.cell_centered_dir(d) {
                self.hi_edge(hi[d], d)
            } else {
                self.lo_edge(hi[d], d)
            };
            [self.lo_edge(lo[d], d), high]
        })
    }

    /// The cell that holds `point`: `floor((x - prob_lo) / dx) + small_end` per direction,
    /// as AMReX's particle code locates particles (AMReX's `CellIndex` truncates
    /// towards zero instead, which is wrong below `prob_lo`). A point on a face belongs
    /// to the cell above it. `None` if a coordinate is NaN or infinite or the index
    /// leaves `i32`; a point outside the domain gives a (ghost) index outside it.
    #[must_use]
    pub fn cell_index(&self, point: [f64; SPACEDIM]) -> Option<IntVect> {
        let mut iv = IntVect::ZERO;
        for d in 0..SPACEDIM {
            let y = (point[d] - self.real_box.lo_dir(d)) * self.inv_dx[d];
            let i = Float::floor(y) + f64::from(self.domain.small_end()[d]);
            // `None` for NaN, an infinity or a value outside `i32`; `i` is integral, so
            // the conversion is exact.
            iv[d] = ToPrimitive::to_i32(&i)?;
        }
        Some(iv)
    }

    /// `true` if `point` lies in the physical domain as particles see it, AMReX's
    /// `insideRoundoffDomain`: `prob_lo[d] <= x[d] < roundoff_hi[d]` in every direction,
    /// where `roundoff_hi[d]` is the smallest `f64` that [`cell_index`](Self::cell_index)
    /// maps past the domain's last cell (at or within a few rounding steps of
    /// `prob_hi[d]`). So a point inside always has a `cell_index` inside the domain, even
    /// when rounding in `(x - prob_lo) / dx` would push a point just below `prob_hi` to
    /// the next cell. AMReX bisects for that edge up to a tolerance; here it is exact. A
    /// NaN coordinate is outside (AMReX's `outsideRoundoffDomain`, which tests
    /// `x < lo || x >= hi`, would call it inside).
    #[must_use]
    pub fn inside_physical_domain(&self, point: [f64; SPACEDIM]) -> bool {
        (0..SPACEDIM).all(|d| point[d] >= self.real_box.lo_dir(d) && point[d] < self.roundoff_hi[d])
    }

    /// `!inside_physical_domain(point)`, AMReX's `outsideRoundoffDomain`.
    #[must_use]
    pub fn outside_physical_domain(&self, point: [f64; SPACEDIM]) -> bool {
        !self.inside_physical_domain(point)
    }

    /// The round-off edge of the domain per direction: the smallest `f64` coordinate
    /// that is outside (see [`inside_physical_domain`](Self::inside_physical_domain)).
    #[must_use]
    pub const fn roundoff_hi(&self) -> [f64; SPACEDIM] {
        self.roundoff_hi
    }

    /// The domain converted to the index type of `b`.
    #[track_caller]
    fn domain_like(&self, b: &IndexBox) -> IndexBox {
        self.domain.convert(b.ix_type())
    }

    /// `true` if every point of `b` lies in the domain (converted to `b`'s index type,
    /// so a nodal box may reach the domain's boundary nodes). An empty box is inside.
    #[must_use]
    #[track_caller]
    pub fn inside_physical_domain_box(&self, b: &IndexBox) -> bool {
        b.is_empty() || self.domain_like(b).contains_box(b)
    }

    /// `true` if `b` reaches beyond a **non-periodic** face of the domain: the points of
    /// `b` that a physical boundary condition has to fill. Not the negation of
    /// [`inside_physical_domain_box`](Self::inside_physical_domain_box): a box that
    /// leaves the domain only through periodic faces is neither inside nor outside, its
    /// outer part being filled from periodic images. An empty box is not outside.
    #[must_use]
    #[track_caller]
    pub fn outside_physical_domain_box(&self, b: &IndexBox) -> bool {
        if b.is_empty() {
            return false;
        }
        let dom = self.domain_like(b);
        (0..SPACEDIM)
            .any(|d| !self.periodic[d] && (b.lo()[d] < dom.lo()[d] || b.hi()[d] > dom.hi()[d]))
    }

    /// The volume of cell `iv` in this geometry's coordinates (one cell of AMReX's
    /// `GetVolume`; see [`CoordSys::cell_volume`] for the formulas). Any index works,
    /// including ghost cells.
    #[must_use]
    pub fn volume(&self, iv: IntVect) -> f64 {
        self.coord.cell_volume(self.node_location(iv), self.dx)
    }

    /// The area of the face normal to `dir` at face index `iv`, i.e. the low face of cell
    /// `iv` (one face of AMReX's `GetFaceArea`, whose face boxes are the cells'
    /// `surroundingNodes(dir)`; see [`CoordSys::face_area`]).
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[must_use]
    #[track_caller]
    pub fn face_area(&self, iv: IntVect, dir: usize) -> f64 {
        self.coord.face_area(dir, self.node_location(iv), self.dx)
    }

    /// `d(log A)/dx_dir` at the centre of cell `iv` (one cell of AMReX's `GetDLogA`; see
    /// [`CoordSys::dloga`]).
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[must_use]
    #[track_caller]
    pub fn dloga(&self, iv: IntVect, dir: usize) -> f64 {
        self.coord.dloga(dir, self.node_location(iv), self.dx)
    }

    /// The geometry of the level refined by `ratio` (AMReX's `refine(geom, rr)`): the
    /// same `RealBox`, coordinates and periodicity, the domain refined (`small_end·r ..=
    /// (big_end + 1)·r - 1`) and the cell size recomputed from them. A 2-D problem
    /// passes a ratio of 1 in direction 2 (`IntVect::new(2, 2, 1)`), which RZ and
    /// spherical geometries require.
    ///
    /// # Errors
    /// [`BadRatio`](GeometryErrorKind::BadRatio) for a ratio that is not positive,
    /// [`OutsideIndexSpace`](GeometryErrorKind::OutsideIndexSpace) if the refined domain
    /// leaves `i32`, and any error of [`new`](Self::new) for the new cell size (e.g. an
    /// RZ domain refined in direction 2).
    pub fn refine(&self, ratio: impl Into<IntVect>) -> Result<Self, GeometryError> {
        let r = Self::check_ratio(ratio.into())?;
        let (lo, hi) = (self.domain.small_end(), self.domain.big_end());
        let mut fine_lo = IntVect::ZERO;
        let mut len = [0_i64; SPACEDIM];
        for d in 0..SPACEDIM {
            let l = i64::from(lo[d]) * i64::from(r[d]);
            let end = (i64::from(hi[d]) + 1) * i64::from(r[d]);
            fine_lo[d] =
                i32::try_from(l).map_err(|_| IndexSpaceError::Overflow { dir: d, lo: l, end })?;
            len[d] = end - l;
        }
        let domain = IndexBox::try_from_lo_len(fine_lo, len)?;
        Self::new(domain, self.real_box, self.coord, self.periodic)
    }

    /// The geometry of the level coarsened by `ratio` (AMReX's `coarsen(geom, rr)`):
    /// the same `RealBox`, coordinates and periodicity, the domain coarsened and the cell
    /// size recomputed from them.
    ///
    /// # Errors
    /// [`BadRatio`](GeometryErrorKind::BadRatio) for a ratio that is not positive, and
    /// [`NotCoarsenable`](GeometryErrorKind::NotCoarsenable) if the domain does not
    /// coarsen exactly (AMReX coarsens it anyway, and its coarse cells then no longer
    /// nest over the fine ones).
    pub fn coarsen(&self, ratio: impl Into<IntVect>) -> Result<Self, GeometryError> {
        let r = Self::check_ratio(ratio.into())?;
        if !self.domain.coarsenable(r) {
            return Err(GeometryErrorKind::NotCoarsenable {
                domain: self.domain,
                ratio: r,
            }
            .into());
        }
        Self::new(
            self.domain.coarsen_iv(r),
            self.real_box,
            self.coord,
            self.periodic,
        )
    }

    fn check_ratio(r: IntVect) -> Result<IntVect, GeometryError> {
        match (0..SPACEDIM).find(|&d| r[d] <= 0) {
            Some(dir) => Err(GeometryErrorKind::BadRatio { dir, ratio: r[dir] }.into()),
            None => Ok(r),
        }
    }
}

/// The shifts [`Geometry::periodic_shift`] finds, at most 26 (one per neighbouring
/// image), stored inline so that no allocation is needed. Derefs to a slice.
#[derive(Clone, Copy, Debug)]
pub struct ShiftList {
    len: usize,
    items: [IntVect; ShiftList::CAPACITY],
}

impl ShiftList {
    /// The most shifts a list holds: the 3³ - 1 neighbouring images.
    pub const CAPACITY: usize = 26;

    const fn new() -> Self {
        Self {
            len: 0,
            items: [IntVect::ZERO; Self::CAPACITY],
        }
    }

    /// Called at most once per non-zero `(i, j, k)` in `{-1, 0, 1}³`, so never past the
    /// capacity.
    fn push(&mut self, v: IntVect) {
        self.items[self.len] = v;
        self.len += 1;
    }

    /// The shifts, in [`Geometry::periodic_shift`]'s order.
    #[must_use]
    pub fn as_slice(&self) -> &[IntVect] {
        &self.items[..self.len]
    }
}

impl core::ops::Deref for ShiftList {
    type Target = [IntVect];
    fn deref(&self) -> &[IntVect] {
        self.as_slice()
    }
}

impl PartialEq for ShiftList {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for ShiftList {}

impl<'a> IntoIterator for &'a ShiftList {
    type Item = &'a IntVect;
    type IntoIter = core::slice::Iter<'a, IntVect>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl IntoIterator for ShiftList {
    type Item = IntVect;
    type IntoIter = core::iter::Take<core::array::IntoIter<IntVect, { ShiftList::CAPACITY }>>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter().take(self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_keys_follow_the_numbers() {
        let xs = [
            f64::NEG_INFINITY,
            -f64::MAX,
            -1.0,
            -f64::MIN_POSITIVE,
            -0.0,
            0.0,
            f64::from_bits(1),
            1.0,
            f64::MAX,
            f64::INFINITY,
        ];
        for w in xs.windows(2) {
            assert!(
                ordered_key(w[0]) < ordered_key(w[1]),
                "{} vs {}",
                w[0],
                w[1]
            );
        }
        assert_eq!(ordered_key(0.0) - ordered_key(-0.0), 1);
        assert_eq!(ordered_key(f64::from_bits(1)) - ordered_key(0.0), 1);
        for x in xs {
            assert_eq!(from_ordered_key(ordered_key(x)).to_bits(), x.to_bits());
        }
    }

    #[test]
    fn roundoff_edge_is_the_first_outside_value() {
        for (lo, hi, cells) in [
            (0.0, 1.0, 8),
            (0.1, 0.7, 3),
            (-1.0, 1.0, 7),
            (1.0e6, 1.0e6 + 1.0e-3, 10),
            (-3.3, -0.2, 1),
        ] {
            let inv_dx = 1.0 / ((hi - lo) / f64::from(cells));
            let edge = roundoff_edge(lo, hi, inv_dx, cells);
            let n = f64::from(cells);
            assert!((edge - lo) * inv_dx >= n, "{lo} {hi} {cells}: {edge}");
            let below = edge.next_down();
            assert!((below - lo) * inv_dx < n, "{lo} {hi} {cells}: {below}");
            // Within a few rounding steps of hi.
            assert!((edge - hi).abs() <= 8.0 * f64::EPSILON * hi.abs().max(lo.abs()));
        }
    }

    #[test]
    fn shift_list_basics() {
        let mut l = ShiftList::new();
        assert!(l.is_empty());
        l.push(IntVect::new(1, 2, 3));
        l.push(IntVect::ZERO);
        assert_eq!(l.len(), 2);
        assert_eq!(l.as_slice(), [IntVect::new(1, 2, 3), IntVect::ZERO]);
        assert!(l.into_iter().eq([IntVect::new(1, 2, 3), IntVect::ZERO]));
        assert_eq!((&l).into_iter().count(), 2);
        let mut m = ShiftList::new();
        m.push(IntVect::new(1, 2, 3));
        assert_ne!(l, m);
        m.push(IntVect::ZERO);
        assert_eq!(l, m);
    }
}
