//! `average_down` and `average_down_geom`: a coarse level's cells from the fine cells
//! they cover (AMReX's `amrex::average_down` in `AMReX_MultiFabUtil`).

use amrex_box::IntVect;
use amrex_geometry::{CoordSys, Geometry};
use amrex_multifab::{CopyOp, MultiFab, Periodicity};
use core::ops::Range;

use crate::check;
#[cfg(doc)]
use crate::error::AmrErrorKind;
use crate::error::{AmrError, Operand};
use crate::kernels;
use crate::level::{Plan, coarsen_into};

/// The checks `average_down` and `average_down_geom` share: ratio, components, index
/// types (cell-centred, or nodal where `nodal_ok`), fine boxes that coarsen.
fn check_cells(
    op: &'static str,
    fine: &MultiFab,
    crse: &MultiFab,
    comps: Range<usize>,
    ratio: IntVect,
    nodal_ok: bool,
) -> Result<(), AmrError> {
    let (scomp, ncomp) = (comps.start, comps.len());
    check::ratio(op, ratio)?;
    check::comps(op, Operand::Fine, scomp, ncomp, fine.ncomp())?;
    check::comps(op, Operand::Crse, scomp, ncomp, crse.ncomp())?;
    check::same_type(op, fine, crse)?;
    let typ = fine.box_array().ix_type();
    if nodal_ok {
        let ok = typ.cell_centered() || typ.node_centered();
        check::index_type(op, Operand::Fine, typ, ok, "cell-centred or nodal")?;
    } else {
        check::cells(op, Operand::Fine, typ)?;
    }
    check::coarsenable(op, fine.box_array(), ratio)
}

/// The valid cells of `crse` covered by `fine` become the mean of the fine cells they
/// cover, components `comps` of both (AMReX's `average_down(S_fine, S_crse, scomp, ncomp,
/// ratio)` with `comps = scomp..scomp + ncomp`): conservative for Cartesian
/// cells, where each coarse cell's volume is the sum of its fine cells'.
///
/// Any ratio of at least 1 per direction; any BoxArrays and distributions. As in AMReX,
/// the fine BoxArray is coarsened, the means are computed there on the fine level's
/// distribution (one task per `k`-slab of a coarse box, in parallel with `std`), and a
/// `ParallelCopy` (valid cells, no periodic images) takes them into `crse`. When `crse`
/// already has the coarsened fine BoxArray and the fine distribution, they are written
/// into it directly; when each of its boxes meets only fine data of its own rank (any
/// BoxArray on one process), each box computes its own pieces, with no temporary and
/// no copy. The values are the same bits on every path. Coarse cells no fine cell
/// covers are left alone. Every sum runs in AMReX's order
/// (the values have not been compared with AMReX's own output).
///
/// Nodal data (every direction nodal) takes the fine value at each coarse node instead
/// (injection), as AMReX's `average_down` does; [`average_down_nodal`](crate::average_down_nodal)
/// also fills coarse ghost nodes.
///
/// **Collective** over the MultiFabs' communicator, like the `ParallelCopy` inside it.
///
/// ```
/// use amrex_amr::average_down;
/// use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IntVect, MultiFab, Tiling};
///
/// // A fine level over the coarse cells (2..=5)³, ratio 2, holding i + j + k.
/// let fine_ba = BoxArray::from_domain(IndexBox::new(IntVect::splat(4), IntVect::splat(11)), 4);
/// let mut fine = MultiFab::new(&fine_ba, &DistributionMapping::single(&fine_ba), 1, IntVect::ZERO);
/// fine.par_for_each_tile(Tiling::None, IntVect::ZERO, |mut t| {
///     let bx = t.region();
///     t.array_mut().for_each_mut(bx, |i, j, k, _n, v| *v = f64::from(i + j + k));
/// });
/// // The coarse level: 8³ cells in one box.
/// let crse_ba = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::splat(7)), 8);
/// let mut crse = MultiFab::new(&crse_ba, &DistributionMapping::single(&crse_ba), 1, IntVect::ZERO);
///
/// average_down(&fine, &mut crse, 0..1, 2)?;
/// // Coarse cell (2, 3, 4) covers fine i in 4..=5, j in 6..=7, k in 8..=9: mean 19.5.
/// assert_eq!(crse.value_at(IntVect::new(2, 3, 4), 0), Some(19.5));
/// // Uncovered coarse cells keep their value.
/// assert_eq!(crse.value_at(IntVect::new(0, 0, 0), 0), Some(0.0));
/// # Ok::<(), amrex_amr::AmrError>(())
/// ```
///
/// # Errors
/// Nothing is written when any of these is returned:
/// [`BadRatio`](AmrErrorKind::BadRatio) for a ratio below 1;
/// [`ComponentsOutside`](AmrErrorKind::ComponentsOutside) when either MultiFab lacks a
/// component; [`IndexTypeMismatch`](AmrErrorKind::IndexTypeMismatch) or
/// [`WrongIndexType`](AmrErrorKind::WrongIndexType) (face or edge data: see
/// [`average_down_faces`](crate::average_down_faces));
/// [`NotCoarsenable`](AmrErrorKind::NotCoarsenable) for a fine box whose corners are not
/// multiples of the ratio; [`MultiFab`](AmrErrorKind::MultiFab) when the `ParallelCopy` refuses
/// (MultiFabs on different communicators, ranks that disagree).
pub fn average_down(
    fine: &MultiFab,
    crse: &mut MultiFab,
    comps: Range<usize>,
    ratio: impl Into<IntVect>,
) -> Result<(), AmrError> {
    let (scomp, ncomp) = (comps.start, comps.len());
    const OP: &str = "average_down";
    let ratio = ratio.into();
    check::Agreement::new(OP)
        .mf(fine)
        .mf(crse)
        .words(&[scomp, ncomp])
        .iv(ratio)
        .check(crse.communicator())?;
    check_cells(OP, fine, crse, comps.clone(), ratio, true)?;
    let plan = copy_plan();
    let comps = scomp..scomp + ncomp;
    if fine.box_array().ix_type().cell_centered() {
        coarsen_into(OP, fine, crse, comps, ratio, &plan, |c, f, bx| {
            kernels::mean(c, f, bx, ratio);
        })
    } else {
        coarsen_into(OP, fine, crse, comps, ratio, &plan, |c, f, bx| {
            kernels::inject(c, f, bx, ratio);
        })
    }
}

/// [`average_down`] weighted by the cells' volumes in the geometries' coordinate system
/// (AMReX's `average_down(S_fine, S_crse, fgeom, cgeom, scomp, ncomp, ratio)`): each
/// coarse value is `Σ f v / Σ v` over its fine cells, `v` the fine cell volumes of
/// `fine_geom` ([`Geometry::volume`]), so `Σ fine · fine volume` equals
/// `Σ coarse · coarse volume` over the covered region (to round-off) in RZ and spherical
/// coordinates too.
///
/// Cartesian geometries take the plain mean of [`average_down`] (every fine cell has
/// the same volume), as AMReX's three-dimensional build does; RZ and spherical ones
/// weight, as AMReX's one- and two-dimensional builds (where alone those coordinate
/// systems exist) do. Cell-centred data only.
///
/// ```
/// use amrex_amr::average_down_geom;
/// use amrex_geometry::{CoordSys, Geometry, RealBox};
/// use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IntVect, MultiFab};
///
/// // RZ: r in [0, 1] by z in [0, 1], 4 x 4 coarse cells, ratio (2, 2, 1).
/// let rb = RealBox::new([0.0; 3], [1.0; 3])?;
/// let cdom = IndexBox::new(IntVect::ZERO, IntVect::new(3, 3, 0));
/// let cgeom = Geometry::new(cdom, rb, CoordSys::Rz, [false; 3])?;
/// let ratio = IntVect::new(2, 2, 1);
/// let fgeom = cgeom.refine(ratio)?;
///
/// let fba = BoxArray::from_domain(fgeom.domain(), 8);
/// let mut fine = MultiFab::new(&fba, &DistributionMapping::single(&fba), 1, IntVect::ZERO);
/// fine.set_val(1.0, .., 0)?;
/// // The fine cell at the axis holds 9, its neighbour in r holds 1.
/// fine.array_mut_at(0)[(0, 0, 0, 0)] = 9.0;
/// let cba = BoxArray::from_domain(cdom, 8);
/// let mut crse = MultiFab::new(&cba, &DistributionMapping::single(&cba), 1, IntVect::ZERO);
///
/// average_down_geom(&fine, &mut crse, &fgeom, &cgeom, 0..1, ratio)?;
/// // The inner ring has a third of the outer one's volume (r² from 0 to 1/8 against
/// // 1/8 to 2/8): (9·1 + 1·3 + 1·(1 + 3)) / 8 = 2 in the coarse cell at the axis.
/// assert!((crse.value_at(IntVect::ZERO, 0).unwrap() - 2.0).abs() < 1e-14);
/// # Ok::<(), Box<dyn core::error::Error>>(())
/// ```
///
/// # Errors
/// As [`average_down`] (nodal data is refused with
/// [`WrongIndexType`](AmrErrorKind::WrongIndexType), as AMReX refuses it), and
/// [`GeometryMismatch`](AmrErrorKind::GeometryMismatch) when `fine_geom` is not
/// `crse_geom` refined by `ratio` (another coordinate system or domain).
pub fn average_down_geom(
    fine: &MultiFab,
    crse: &mut MultiFab,
    fine_geom: &Geometry,
    crse_geom: &Geometry,
    comps: Range<usize>,
    ratio: impl Into<IntVect>,
) -> Result<(), AmrError> {
    let (scomp, ncomp) = (comps.start, comps.len());
    const OP: &str = "average_down_geom";
    let ratio = ratio.into();
    check::Agreement::new(OP)
        .mf(fine)
        .mf(crse)
        .geom(fine_geom)
        .geom(crse_geom)
        .words(&[scomp, ncomp])
        .iv(ratio)
        .check(crse.communicator())?;
    check_cells(OP, fine, crse, comps.clone(), ratio, false)?;
    check::geometries(OP, fine_geom, crse_geom, ratio)?;
    let plan = copy_plan();
    let comps = scomp..scomp + ncomp;
    if fine_geom.coord() == CoordSys::Cartesian {
        coarsen_into(OP, fine, crse, comps, ratio, &plan, |c, f, bx| {
            kernels::mean(c, f, bx, ratio);
        })
    } else {
        coarsen_into(OP, fine, crse, comps, ratio, &plan, |c, f, bx| {
            kernels::volume_weighted(c, f, bx, ratio, fine_geom);
        })
    }
}

/// Valid cells to valid cells, no periodic images: AMReX's `S_crse.ParallelCopy(tmp, 0,
/// scomp, ncomp)`.
fn copy_plan() -> Plan {
    Plan {
        ng: IntVect::ZERO,
        dst_ng: IntVect::ZERO,
        period: Periodicity::non_periodic(),
        op: CopyOp::Copy,
    }
}
