//! The fill itself: AMReX's `PhysBCFunct` over the local fabs of a FabArray, with its
//! host kernels `fab_filcc` (cell-centred data) and `fab_filnd` (nodal data), then the
//! user's `ext_dir` function.

use alloc::vec::Vec;
use core::fmt;
use core::ops::{Range, RangeBounds};

use amrex_arena::HostAccessible;
use amrex_array4::{Array4Mut, for_each_cell};
use amrex_box::{IndexBox, IntVect, SPACEDIM};
use amrex_geometry::Geometry;
use amrex_multifab::{MultiFab, Tiling};

use super::bcrec::{BCRec, BCType};
use crate::check;
#[cfg(doc)]
use crate::error::AmrErrorKind;
use crate::error::{AmrError, Operand};

/// The low or the high face of a direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Lo,
    Hi,
}

/// Both sides, low first: the order of AMReX's passes.
const SIDES: [Side; 2] = [Side::Lo, Side::Hi];

/// The six faces of the domain in the order the fill visits them: direction 0 low and
/// high, then direction 1, then direction 2.
const FACES: [(usize, Side); 2 * SPACEDIM] = [
    (0, Side::Lo),
    (0, Side::Hi),
    (1, Side::Lo),
    (1, Side::Hi),
    (2, Side::Lo),
    (2, Side::Hi),
];

impl Side {
    /// The step from the face's boundary index into the domain.
    const fn inward(self) -> i32 {
        match self {
            Self::Lo => 1,
            Self::Hi => -1,
        }
    }
}

/// What one component's fill needs to know about the domain: the domain in the data's
/// index type and the type of each face, with periodic directions made `int_dir` (they
/// belong to `fill_boundary`, whatever the record says).
struct Frame {
    dom: IndexBox,
    bc: [[BCType; 2]; SPACEDIM],
}

impl Frame {
    fn new(dom: IndexBox, rec: &BCRec, geom: &Geometry) -> Self {
        let bc = core::array::from_fn(|d| {
            if geom.is_periodic(d) {
                [BCType::IntDir; 2]
            } else {
                [rec.lo(d), rec.hi(d)]
            }
        });
        Self { dom, bc }
    }

    /// The type of face `(d, side)`.
    fn bc(&self, d: usize, side: Side) -> BCType {
        self.bc[d][side as usize]
    }

    /// The last index inside the domain at face `(d, side)`: AMReX's `ilo` or `ihi`.
    fn edge(&self, d: usize, side: Side) -> i32 {
        match side {
            Side::Lo => self.dom.lo()[d],
            Side::Hi => self.dom.hi()[d],
        }
    }

    /// The first index beyond face `(d, side)`: `ilo - 1` or `ihi + 1`.
    fn first_ghost(&self, d: usize, side: Side) -> i32 {
        self.edge(d, side) - side.inward()
    }

    /// How far index `x` lies beyond face `(d, side)`: 1 for the first ghost layer,
    /// zero or less inside.
    fn depth(&self, x: i32, d: usize, side: Side) -> i32 {
        (self.edge(d, side) - x) * side.inward()
    }

    /// Component `n` of `q` at the point `m` steps inside from face `(d, side)` (`m = 0`:
    /// the boundary cell), at the other coordinates of `p`.
    fn inside<'q>(
        &self,
        q: &'q Array4Mut<'_, f64>,
        p: IntVect,
        (d, side): (usize, Side),
        n: usize,
    ) -> impl Fn(i32) -> f64 + 'q {
        let (e, s) = (self.edge(d, side), side.inward());
        move |m| q[(p.with(d, e + s * m), n)]
    }

    /// The part of `fab` beyond face `(d, side)`, if any.
    fn slab(&self, fab: &IndexBox, d: usize, side: Side) -> Option<IndexBox> {
        let (mut lo, mut hi) = (fab.lo(), fab.hi());
        match side {
            Side::Lo => hi[d] = hi[d].min(self.dom.lo()[d] - 1),
            Side::Hi => lo[d] = lo[d].max(self.dom.hi()[d] + 1),
        }
        let s = IndexBox::with_type(lo, hi, fab.ix_type());
        s.ok().then_some(s)
    }
}

/// AMReX's `hoextrap` stencil along `d` from face `(d, side)`, at the other coordinates
/// of `p`: `(weight, sum)` with `weight * sum` the value extrapolated to the face. The
/// three-point `sum = 15 q0 - 10 q1 + 3 q2` (weight 1/8) where both the domain and the
/// fab hold the third cell (`ilo + 2 <= min(fab.hi, ihi)`), else the two-point
/// `3 q0 - q1` (weight 1/2). The two are returned apart because AMReX's edge
/// correction halves the weight before multiplying, and this keeps its rounding.
fn ho_stencil(
    q: &Array4Mut<'_, f64>,
    fr: &Frame,
    fab: &IndexBox,
    p: IntVect,
    (d, side): (usize, Side),
    n: usize,
) -> (f64, f64) {
    let e = fr.edge(d, side);
    let at = fr.inside(q, p, (d, side), n);
    let three = match side {
        Side::Lo => e + 2 <= fab.hi()[d].min(fr.dom.hi()[d]),
        Side::Hi => e - 2 >= fab.lo()[d].max(fr.dom.lo()[d]),
    };
    if three {
        (0.125, 15.0 * at(0) - 10.0 * at(1) + 3.0 * at(2))
    } else {
        (0.5, 3.0 * at(0) - at(1))
    }
}

/// The value `fab_filcc` gives ghost cell `p` beyond face `(d, side)` of type `t`, or
/// `None` for the types it leaves alone (`int_dir`, `ext_dir`).
fn filcc_value(
    q: &Array4Mut<'_, f64>,
    fr: &Frame,
    fab: &IndexBox,
    p: IntVect,
    (d, side): (usize, Side),
    n: usize,
) -> Option<f64> {
    let depth = fr.depth(p[d], d, side);
    let at = fr.inside(q, p, (d, side), n);
    Some(match fr.bc(d, side) {
        BCType::IntDir | BCType::ExtDir => return None,
        BCType::FoExtrap => at(0),
        BCType::ReflectEven => at(depth - 1),
        BCType::ReflectOdd => -at(depth - 1),
        BCType::HoExtrap if depth > 1 => at(0),
        BCType::HoExtrap => {
            let (w, sum) = ho_stencil(q, fr, fab, p, (d, side), n);
            w * sum
        }
        BCType::HoExtrapCc => 2.0 * at(0) - at(1),
    })
}

/// AMReX's `fab_filcc` on component `n` of one fab over the extent `fab` (the valid box
/// grown by the ghost width to fill, inside the fab): a pass per face, direction 0 low
/// and high, then 1, then 2, each over the extent's whole length in the other
/// directions (so a later direction fills the edges and corners from the values an
/// earlier one put there), then the `hoextrap` edge and corner corrections.
fn filcc(q: &mut Array4Mut<'_, f64>, n: usize, fr: &Frame, fab: IndexBox) {
    for face in FACES {
        let Some(slab) = fr.slab(&fab, face.0, face.1) else {
            continue;
        };
        if matches!(fr.bc(face.0, face.1), BCType::IntDir | BCType::ExtDir) {
            continue;
        }
        // Every read is inside the domain in direction `face.0` (or, for a domain
        // thinner than the ghost width, beyond the other face), never in this slab, so
        // the order within the pass does not matter.
        for_each_cell(slab, |i, j, k| {
            let p = IntVect::new(i, j, k);
            if let Some(v) = filcc_value(q, fr, &fab, p, face, n) {
                q[(p, n)] = v;
            }
        });
    }
    hoextrap_edges(q, n, fr, &fab);
}

/// `fab_filcc`'s corrections where two `hoextrap` faces meet: along each edge beyond
/// both faces' first ghost layers, the average of the two one-sided extrapolations
/// (the second direction's stencil applied to the first direction's ghost values and
/// the other way round); for the edges of directions 0 and 1, the cells also beyond a
/// `hoextrap` face of direction 2 are then redone by direction 2's stencil. The pairs
/// go (0, 1), (0, 2), (1, 2), low before high, and along the edge from low to high
/// index, each cell corrected in place, as AMReX's loops do, so later cells read the
/// corrected earlier ones exactly where AMReX's do.
fn hoextrap_edges(q: &mut Array4Mut<'_, f64>, n: usize, fr: &Frame, fab: &IndexBox) {
    for (a, b) in [(0, 1), (0, 2), (1, 2)] {
        let c = SPACEDIM - a - b;
        for sa in SIDES {
            for sb in SIDES {
                if fr.bc(a, sa) != BCType::HoExtrap || fr.bc(b, sb) != BCType::HoExtrap {
                    continue;
                }
                let (ga, gb) = (fr.first_ghost(a, sa), fr.first_ghost(b, sb));
                let holds = |d: usize, g: i32| fab.lo()[d] <= g && g <= fab.hi()[d];
                if !holds(a, ga) || !holds(b, gb) {
                    continue;
                }
                for m in fab.lo()[c]..=fab.hi()[c] {
                    let p = IntVect::ZERO.with(a, ga).with(b, gb).with(c, m);
                    let (wb, sum_b) = ho_stencil(q, fr, fab, p, (b, sb), n);
                    q[(p, n)] = 0.5 * wb * sum_b;
                    let (wa, sum_a) = ho_stencil(q, fr, fab, p, (a, sa), n);
                    q[(p, n)] += 0.5 * wa * sum_a;
                    if c != 2 {
                        continue;
                    }
                    for sc in SIDES {
                        if m == fr.first_ghost(c, sc) && fr.bc(c, sc) == BCType::HoExtrap {
                            let (wc, sum_c) = ho_stencil(q, fr, fab, p, (c, sc), n);
                            q[(p, n)] = wc * sum_c;
                        }
                    }
                }
            }
        }
    }
}

/// AMReX's `fab_filnd` on component `n` of one fab over the extent `fab`: beyond every
/// face whose type is not `int_dir`, the boundary node's value, face by face in the
/// order of [`FACES`] over the extent's whole length in the other directions.
fn filnd(q: &mut Array4Mut<'_, f64>, n: usize, fr: &Frame, fab: IndexBox) {
    for (d, side) in FACES {
        if fr.bc(d, side) == BCType::IntDir {
            continue;
        }
        let Some(slab) = fr.slab(&fab, d, side) else {
            continue;
        };
        let e = fr.edge(d, side);
        for_each_cell(slab, |i, j, k| {
            let p = IntVect::new(i, j, k);
            q[(p, n)] = q[(p.with(d, e), n)];
        });
    }
}

/// The user's `ext_dir` function at every point of the extent `fab` beyond an `ext_dir`
/// face, called once per point (a point beyond two such faces is visited with the
/// first) and told the record number `rec`.
fn fill_ext_dir<F>(
    q: &mut Array4Mut<'_, f64>,
    (n, rec): (usize, usize),
    fr: &Frame,
    fab: IndexBox,
    position: impl Fn(IntVect) -> [f64; SPACEDIM],
    time: f64,
    f: &F,
) where
    F: Fn([f64; SPACEDIM], f64, usize) -> f64,
{
    let is_ext = |(d, side): (usize, Side)| fr.bc(d, side) == BCType::ExtDir;
    for (idx, face) in FACES.into_iter().enumerate() {
        if !is_ext(face) {
            continue;
        }
        let Some(slab) = fr.slab(&fab, face.0, face.1) else {
            continue;
        };
        for_each_cell(slab, |i, j, k| {
            let p = IntVect::new(i, j, k);
            let seen = FACES[..idx]
                .iter()
                .any(|&(d, s)| is_ext((d, s)) && fr.depth(p[d], d, s) > 0);
            if !seen {
                q[(p, n)] = f(position(p), time, rec);
            }
        });
    }
}

/// Checks everything [`fill_physical_boundary`] is given before it writes anything;
/// returns the components.
fn check<A: HostAccessible>(
    mf: &MultiFab<A>,
    geom: &Geometry,
    bcrecs: &[BCRec],
    comps: impl RangeBounds<usize>,
) -> Result<Range<usize>, AmrError> {
    const OP: &str = "fill_physical_boundary";
    let comps = check::comp_range(OP, Operand::Dest, comps, mf.ncomp())?;
    // Record `c` is component `c`'s: records `0..comps.end`.
    check::bc_records(OP, bcrecs.len(), 0, comps.end)?;
    let ba = mf.box_array();
    check::boundary_type(OP, ba.ix_type(), geom)?;
    check::boxes_in_domain(OP, ba, geom)?;
    Ok(comps)
}

/// Fills the ghost cells of every local fab of `mf` that lie beyond a non-periodic face
/// of `geom`'s domain, for components `comps` (any range: `0..2`, `1..`, `..`), from
/// the boundary conditions `bcrecs` (record `c` is component `c`'s) and, on `ext_dir`
/// faces, from `ext_dir(position, time, component)`. This is AMReX's `PhysBCFunct` with its host
/// kernels (`CpuBndryFuncFab`: `fab_filcc` or `fab_filnd`, then the user's function),
/// the fill behind AMReX's `FillDomainBoundary` and `FillPatchSingleLevel`.
///
/// **Call `mf.fill_boundary(geom.periodicity())` first**, as AMReX's `FillPatch` does:
/// this fill reads the ghost cells that lie inside the domain or beyond a periodic
/// face (the rows along a face are extrapolated over the fab's whole extent, ghost
/// cells included) and never writes them. Periodic directions are left alone whatever
/// their records say (AMReX expects `int_dir` there).
///
/// # What each point gets
///
/// Cell-centred data, as AMReX's `fab_filcc` (formulas at [`BCType`]), component by
/// component:
/// 1. a pass per face, direction 0 low and high, then 1, then 2, over the part of the
///    fab beyond that face and the fab's whole extent in the other two directions: so
///    an edge or corner cell is last written by the highest direction it lies beyond,
///    from the values the lower directions put in the ghost cells it reads (a cell
///    beyond the low x and low y faces with `reflect_odd` in x and `foextrap` in y gets
///    `q(-1, 0) = -q(0, 0)`). Each pass is linear along its own direction, so in exact
///    arithmetic the order does not change the result: a point beyond several faces
///    holds the composition of their rules (`int_dir` and `ext_dir` acting as the
///    identity until step 3). The order is AMReX's so that the rounding is too;
/// 2. where two `hoextrap` faces meet, AMReX's edge and corner corrections (the average
///    of the two one-sided extrapolations, which agree in exact arithmetic since
///    extrapolations along different directions commute), in AMReX's order;
/// 3. `ext_dir` and `int_dir` faces are skipped by the passes; then every point beyond
///    an `ext_dir` face gets `ext_dir(position, time, n)`, called once per point, so at
///    an edge between an `ext_dir` face and another the function's value wins (AMReX's
///    user function runs after `fab_filcc`, and AMReX's example ones set every cell
///    beyond an `ext_dir` face). Points beyond an `int_dir` face and no `ext_dir` face
///    keep what the passes left there, as in AMReX.
///
/// Nodal data, as AMReX's `fab_filnd`: the same face order, each pass copying the
/// boundary node's value beyond every face whose type is not `int_dir` (reflections
/// and extrapolations included: `fab_filnd` has only that rule), then the `ext_dir`
/// function as above. The nodes on the domain's faces are valid data and untouched.
///
/// # Where `ext_dir` is evaluated
///
/// At the ghost point's own location: the cell centre
/// ([`Geometry::cell_centre`]) for cell-centred data, the node
/// ([`Geometry::node_location`]) for nodal data. AMReX's `fab_filcc` does nothing for
/// `ext_dir`; its user function gets the cell's index and decides, and AMReX's note on
/// `EXT_DIR` says the linear solvers read the value as the one *on the face*, while
/// application codes may use either. A function that wants the face value can clamp
/// the position to the domain's extent: for a cell beyond one face, the clamped centre
/// is the centre of the boundary face it touches.
///
/// # AMReX's GPU path
///
/// AMReX's device fill (`GpuBndryFuncFab` with `FilccCell`: faces, then edges, then
/// corners, each cell applying the x, y, z rules in turn) gives the same values, to
/// rounding, except for `hoextrapcc` beyond the first ghost layer, where it
/// extrapolates linearly by distance (`q(ilo) + (ilo - i)(q(ilo) - q(ilo+1))`) instead
/// of repeating the first layer's value, and for nodal data on `int_dir` faces, which
/// it fills as well. This function follows the host kernels.
///
/// ```
/// use amrex_amr::boundary::{BCRec, BCType, fill_physical_boundary};
/// use amrex_geometry::{CoordSys, Geometry, RealBox};
/// use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IntVect, MultiFab, Tiling};
///
/// // 8 cells over [0, 1] in x, periodic in y and z (one cell each), one ghost cell.
/// let domain = IndexBox::new(IntVect::ZERO, IntVect::new(7, 0, 0));
/// let geom = Geometry::new(domain, RealBox::UNIT, CoordSys::Cartesian, [false, true, true])?;
/// let ba = BoxArray::from_domain(domain, 4);
/// let mut mf = MultiFab::new(&ba, &DistributionMapping::single(&ba), 1, IntVect::new(1, 0, 0));
/// mf.par_for_each_tile(Tiling::None, IntVect::ZERO, |mut t| {
///     let vbx = t.region();
///     t.array_mut().for_each_mut(vbx, |i, _, _, _, v| *v = f64::from(i));
/// });
/// mf.fill_boundary(geom.periodicity()).unwrap();
///
/// // A wall held at 5 on the left (the value at the ghost cell's centre, x = -1/16),
/// // outflow on the right.
/// let mut bc = BCRec::uniform(BCType::IntDir);
/// bc.set_lo(0, BCType::ExtDir);
/// bc.set_hi(0, BCType::FoExtrap);
/// fill_physical_boundary(&mut mf, &geom, &[bc], 0..1, 0.0, |x, _t, _n| {
///     assert_eq!(x, [-1.0 / 16.0, 0.5, 0.5]);
///     5.0
/// })?;
/// assert_eq!(mf.array_at(0)[(-1, 0, 0)], 5.0);
/// assert_eq!(mf.array_at(1)[(8, 0, 0)], 7.0);
/// # Ok::<(), Box<dyn core::error::Error>>(())
/// ```
///
/// # Errors
/// Before anything is written:
/// - [`ComponentsOutside`](AmrErrorKind::ComponentsOutside) if `comps` is
///   reversed or reaches past `mf`'s components;
/// - [`TooFewBcRecs`](AmrErrorKind::TooFewBcRecs) if `bcrecs` has fewer records
///   than the end of `comps` (record `c` is component `c`'s, so a fill of components
///   `2..4` needs four);
/// - [`UnsupportedIndexType`](AmrErrorKind::UnsupportedIndexType) for data that is
///   neither cell-centred nor nodal, unless every direction is periodic (then there is
///   nothing to fill);
/// - [`BoxOutsideDomain`](AmrErrorKind::BoxOutsideDomain) if a box of `mf`'s
///   BoxArray is not inside the domain (in the data's index type).
///
/// # Panics
/// If a local fab was replaced (through `fab_mut`) by one that no longer covers its fab
/// box or that the CPU cannot write, as every FabArray operation does.
pub fn fill_physical_boundary<A, F>(
    mf: &mut MultiFab<A>,
    geom: &Geometry,
    bcrecs: &[BCRec],
    comps: impl RangeBounds<usize>,
    time: f64,
    ext_dir: F,
) -> Result<(), AmrError>
where
    A: HostAccessible,
    F: Fn([f64; SPACEDIM], f64, usize) -> f64,
{
    let comps = check(mf, geom, bcrecs, comps)?;
    let ng = mf.n_grow();
    fill_checked(
        mf,
        geom,
        &bcrecs[comps.clone()],
        comps.start,
        comps,
        ng,
        time,
        &ext_dir,
    );
    Ok(())
}

/// The fill of [`fill_physical_boundary`] with its arguments checked (cell-centred or
/// nodal data, `comps` inside `mf`, one record per component, `0 <= ng <=
/// mf.n_grow()`): component `comps.start + m` by `recs[m]`, its `ext_dir` values asked
/// for record number `first_rec + m`, over each local valid box grown by `ng` (AMReX's
/// `PhysBCFunct` with its `nghost` and `bcomp`). The valid boxes need not lie inside
/// the domain (FillPatch's coarse patches reach past it); the part of each extent
/// beyond a face is filled from the cells inside.
#[expect(
    clippy::too_many_arguments,
    reason = "AMReX's PhysBCFunct arguments: data, geometry, records and their first number, components, width, time, function"
)]
pub(crate) fn fill_checked<A, F>(
    mf: &mut MultiFab<A>,
    geom: &Geometry,
    recs: &[BCRec],
    first_rec: usize,
    comps: Range<usize>,
    ng: IntVect,
    time: f64,
    ext_dir: &F,
) where
    A: HostAccessible,
    F: Fn([f64; SPACEDIM], f64, usize) -> f64,
{
    debug_assert_eq!(recs.len(), comps.len());
    if geom.is_all_periodic() || comps.is_empty() {
        return;
    }
    let ix = mf.box_array().ix_type();
    let dom = geom.domain().convert(ix);
    // AMReX's `PhysBCFunct`: the domain grown by the ghost width in the periodic
    // directions holds everything `fill_boundary` fills; an extent inside it needs
    // nothing.
    let mut covered = dom;
    for d in 0..SPACEDIM {
        if geom.is_periodic(d) {
            covered = covered.grow_dir(d, ng[d]);
        }
    }
    let nodal = ix.node_centered();
    let frames: Vec<Frame> = recs.iter().map(|rec| Frame::new(dom, rec, geom)).collect();
    for mfi in mf.mfiter(Tiling::None) {
        let ext = mfi.validbox().grow_iv(ng);
        if covered.contains_box(&ext) {
            continue;
        }
        let mut q = mf.array_mut(&mfi);
        for (m, (n, fr)) in comps.clone().zip(&frames).enumerate() {
            let at = (n, first_rec + m);
            if nodal {
                filnd(&mut q, n, fr, ext);
                fill_ext_dir(
                    &mut q,
                    at,
                    fr,
                    ext,
                    |p| geom.node_location(p),
                    time,
                    ext_dir,
                );
            } else {
                filcc(&mut q, n, fr, ext);
                fill_ext_dir(&mut q, at, fr, ext, |p| geom.cell_centre(p), time, ext_dir);
            }
        }
    }
}

/// A level's physical boundary conditions in one value: the geometry, one [`BCRec`]
/// per component and the `ext_dir` function (AMReX's `PhysBCFunct<F>`, which
/// `FillPatchSingleLevel` and `FillPatchTwoLevels` take). [`fill`](Self::fill) is
/// [`fill_physical_boundary`] with them.
///
/// ```
/// use amrex_amr::boundary::{BCRec, BCType, PhysBcFunct};
/// use amrex_geometry::Geometry;
/// use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IntVect, MultiFab};
///
/// let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(3));
/// let geom = Geometry::cartesian(domain, [0.0; 3], [1.0; 3])?;
/// let ba = BoxArray::from_domain(domain, 4);
/// let mut mf = MultiFab::new(&ba, &DistributionMapping::single(&ba), 2, IntVect::splat(1));
/// mf.set_val(1.0, 0..2, IntVect::ZERO)?;
/// let bc = PhysBcFunct::new(geom, BCRec::uniform(BCType::ReflectOdd).repeated(2), |_, _, _| 0.0);
/// mf.fill_boundary(geom.periodicity())?;
/// bc.fill(&mut mf, 0..2, 0.0)?;
/// assert_eq!(mf.array_at(0)[(-1, 0, 0, 1)], -1.0);
/// assert_eq!(mf.array_at(0)[(-1, -1, -1, 0)], -1.0); // three reflections
/// # Ok::<(), Box<dyn core::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct PhysBcFunct<F> {
    geom: Geometry,
    bcrecs: Vec<BCRec>,
    ext_dir: F,
}

/// A level's boundary conditions read from record `first` on: record `first + c` for
/// the `c`-th component filled (AMReX's `bcfcomp`). `&PhysBcFunct` converts to one that
/// starts at record 0; [`PhysBcFunct::from_record`] starts elsewhere.
#[derive(Debug)]
pub struct BcRecords<'a, F: 'a> {
    /// The boundary conditions.
    pub bc: &'a PhysBcFunct<F>,
    /// The record of the first component filled.
    pub first: usize,
}

impl<F> Clone for BcRecords<'_, F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<F> Copy for BcRecords<'_, F> {}

impl<'a, F> From<&'a PhysBcFunct<F>> for BcRecords<'a, F> {
    fn from(bc: &'a PhysBcFunct<F>) -> Self {
        Self { bc, first: 0 }
    }
}

impl<F> PhysBcFunct<F>
where
    F: Fn([f64; SPACEDIM], f64, usize) -> f64,
{
    /// The boundary conditions `bcrecs` (record `c` for component `c`) of a level with
    /// geometry `geom`, `ext_dir` giving the values on `ext_dir` faces.
    #[must_use]
    pub fn new(geom: Geometry, bcrecs: Vec<BCRec>, ext_dir: F) -> Self {
        Self {
            geom,
            bcrecs,
            ext_dir,
        }
    }

    /// The geometry.
    #[must_use]
    pub fn geometry(&self) -> &Geometry {
        &self.geom
    }

    /// The records, one per component.
    #[must_use]
    pub fn bcrecs(&self) -> &[BCRec] {
        &self.bcrecs
    }

    /// These boundary conditions read from record `first` on, for a fill whose first
    /// component is not record 0's (AMReX's `bcfcomp`).
    #[must_use]
    pub fn from_record(&self, first: usize) -> BcRecords<'_, F> {
        BcRecords { bc: self, first }
    }

    /// The `ext_dir` function.
    #[must_use]
    pub fn ext_dir(&self) -> &F {
        &self.ext_dir
    }

    /// [`fill_physical_boundary`] of components `comps` of `mf` at time `time` (call
    /// `mf.fill_boundary(geometry().periodicity())` first).
    ///
    /// # Errors
    /// Those of [`fill_physical_boundary`]; nothing is written then.
    pub fn fill<A: HostAccessible>(
        &self,
        mf: &mut MultiFab<A>,
        comps: impl RangeBounds<usize>,
        time: f64,
    ) -> Result<(), AmrError> {
        fill_physical_boundary(mf, &self.geom, &self.bcrecs, comps, time, &self.ext_dir)
    }
}

impl<F> PhysBcFunct<F>
where
    F: Fn([f64; SPACEDIM], f64, usize) -> f64,
{
    /// [`fill_checked`] with these conditions: components `comps` of `mf` from records
    /// `first_rec ..` over the valid boxes grown by `ng`. The caller has checked the
    /// records, components, width and index type.
    pub(crate) fn fill_unchecked<A: HostAccessible>(
        &self,
        mf: &mut MultiFab<A>,
        first_rec: usize,
        comps: Range<usize>,
        ng: IntVect,
        time: f64,
    ) {
        let recs = &self.bcrecs[first_rec..first_rec + comps.len()];
        fill_checked(
            mf,
            &self.geom,
            recs,
            first_rec,
            comps,
            ng,
            time,
            &self.ext_dir,
        );
    }
}

impl<F> fmt::Debug for PhysBcFunct<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PhysBcFunct")
            .field("geom", &self.geom)
            .field("bcrecs", &self.bcrecs)
            .finish_non_exhaustive()
    }
}
