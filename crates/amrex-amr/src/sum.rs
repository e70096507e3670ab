//! `sum_fine_to_coarse`: the fine level's means added into the coarse level (AMReX's
//! `amrex::sum_fine_to_coarse` in `AMReX_MultiFabUtil`).

use amrex_box::IntVect;
use amrex_geometry::Geometry;
use amrex_multifab::{CopyOp, MultiFab};
use core::ops::Range;

use crate::check;
#[cfg(doc)]
use crate::error::AmrErrorKind;
use crate::error::{AmrError, Operand};
use crate::kernels;
use crate::level::{Plan, coarsen_into};

/// Adds to the valid cells of `crse` the mean of the fine cells of `fine` they cover,
/// components `comps` of both, fine ghost cells included (AMReX's
/// `sum_fine_to_coarse(S_fine, S_crse, scomp, ncomp, ratio, cgeom, fgeom)` with
/// `comps = scomp..scomp + ncomp`).
///
/// As in AMReX, the "sum" is the `ParallelCopy` with `ADD` into the coarse data: each
/// coarse cell under the fine level gets `crse += mean(fine)`. The means are computed
/// on the coarsened fine BoxArray grown by `fine.n_grow() / ratio` (whole coarse cells of
/// fine ghost data, rounded down per direction; AMReX asks for an isotropic ratio that
/// divides the ghost width), and each of those grown coarse boxes adds into every coarse
/// cell it overlaps, periodic images across `crse_geom`'s periodic directions included.
/// Where grown boxes overlap, every one of them adds (the contributions that fine ghost
/// cells hold, as particle deposition leaves them). This is what AMReX's AMR particle
/// deposition uses to bring fine densities onto the coarse level.
///
/// **Collective**.
///
/// ```
/// use amrex_amr::sum_fine_to_coarse;
/// use amrex_geometry::{CoordSys, Geometry, RealBox};
/// use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IntVect, MultiFab};
///
/// let cdom = IndexBox::new(IntVect::ZERO, IntVect::splat(7));
/// let cgeom = Geometry::new(cdom, RealBox::UNIT, CoordSys::Cartesian, [false; 3])?;
/// let fba = BoxArray::from_domain(IndexBox::new(IntVect::splat(4), IntVect::splat(7)), 8);
/// let mut fine = MultiFab::new(&fba, &DistributionMapping::single(&fba), 1, IntVect::ZERO);
/// fine.set_val(4.0, .., 0)?;
/// let cba = BoxArray::from_domain(cdom, 8);
/// let mut crse = MultiFab::new(&cba, &DistributionMapping::single(&cba), 1, IntVect::ZERO);
/// crse.set_val(1.0, .., 0)?;
///
/// sum_fine_to_coarse(&fine, &mut crse, 0..1, 2, &cgeom)?;
/// assert_eq!(crse.value_at(IntVect::splat(2), 0), Some(5.0)); // 1 + mean 4
/// assert_eq!(crse.value_at(IntVect::splat(0), 0), Some(1.0)); // not covered
/// # Ok::<(), Box<dyn core::error::Error>>(())
/// ```
///
/// # Errors
/// Nothing is written when any of these is returned:
/// [`BadRatio`](AmrErrorKind::BadRatio), [`ComponentsOutside`](AmrErrorKind::ComponentsOutside),
/// [`IndexTypeMismatch`](AmrErrorKind::IndexTypeMismatch),
/// [`WrongIndexType`](AmrErrorKind::WrongIndexType) (cell-centred data only),
/// [`NotCoarsenable`](AmrErrorKind::NotCoarsenable), and
/// [`MultiFab`](AmrErrorKind::MultiFab) when the `ParallelCopy` refuses.
pub fn sum_fine_to_coarse(
    fine: &MultiFab,
    crse: &mut MultiFab,
    comps: Range<usize>,
    ratio: impl Into<IntVect>,
    crse_geom: &Geometry,
) -> Result<(), AmrError> {
    let (scomp, ncomp) = (comps.start, comps.len());
    const OP: &str = "sum_fine_to_coarse";
    let ratio = ratio.into();
    check::Agreement::new(OP)
        .mf(fine)
        .mf(crse)
        .words(&[scomp, ncomp])
        .iv(ratio)
        .geom(crse_geom)
        .check(crse.communicator())?;
    check::ratio(OP, ratio)?;
    check::comps(OP, Operand::Fine, scomp, ncomp, fine.ncomp())?;
    check::comps(OP, Operand::Crse, scomp, ncomp, crse.ncomp())?;
    check::same_type(OP, fine, crse)?;
    check::cells(OP, Operand::Fine, fine.box_array().ix_type())?;
    check::coarsenable(OP, fine.box_array(), ratio)?;
    let plan = Plan {
        ng: fine.n_grow().zip_map(ratio, i32::div_euclid),
        dst_ng: IntVect::ZERO,
        period: crse_geom.periodicity(),
        op: CopyOp::Add,
    };
    coarsen_into(
        OP,
        fine,
        crse,
        scomp..scomp + ncomp,
        ratio,
        &plan,
        |c, f, bx| {
            kernels::mean(c, f, bx, ratio);
        },
    )
}
