//! `average_down_nodal`: coarse nodes from the fine nodes they coincide with (AMReX's
//! `amrex::average_down_nodal` in `AMReX_MultiFabUtil`).

use amrex_box::IntVect;
use amrex_multifab::MultiFab;

use crate::error::AmrError;
#[cfg(doc)]
use crate::error::AmrErrorKind;
use crate::faces::average_staggered;
use crate::interp::Centring;
use crate::kernels;

/// Every coarse node takes the value of the fine node at the same place, every
/// component, over the coarse boxes grown by `ngcrse` (AMReX's
/// `average_down_nodal(fine, crse, ratio, ngcrse)`: injection, not a mean).
///
/// Any BoxArrays and distributions, as [`average_down_faces`](crate::average_down_faces).
///
/// ```
/// use amrex_amr::average_down_nodal;
/// use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IndexType, IntVect, MultiFab, Tiling};
///
/// let nodes = IndexType::new(true, true, true);
/// let cells = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::splat(7)), 4);
/// let fba = cells.convert(nodes);
/// let cba = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::new(3, 3, 1)), 4).convert(nodes);
/// let mut fine = MultiFab::new(&fba, &DistributionMapping::single(&fba), 1, IntVect::ZERO);
/// fine.par_for_each_tile(Tiling::None, IntVect::ZERO, |mut t| {
///     let bx = t.region();
///     t.array_mut().for_each_mut(bx, |i, j, k, _n, v| *v = f64::from(100 * i + 10 * j + k));
/// });
/// let mut crse = MultiFab::new(&cba, &DistributionMapping::single(&cba), 1, IntVect::ZERO);
///
/// average_down_nodal(&fine, &mut crse, IntVect::new(2, 2, 4), 0)?;
/// assert_eq!(crse.value_at(IntVect::new(3, 1, 2), 0), Some(628.0)); // fine node (6, 2, 8)
/// # Ok::<(), amrex_amr::AmrError>(())
/// ```
///
/// # Errors
/// As [`average_down_faces`](crate::average_down_faces), with
/// [`WrongIndexType`](AmrErrorKind::WrongIndexType) unless every direction is nodal.
pub fn average_down_nodal(
    fine: &MultiFab,
    crse: &mut MultiFab,
    ratio: impl Into<IntVect>,
    ngcrse: impl Into<IntVect>,
) -> Result<(), AmrError> {
    let ratio = ratio.into();
    average_staggered(
        "average_down_nodal",
        fine,
        crse,
        (ratio, ngcrse.into()),
        (Centring::Node, None),
        |c, f, bx| kernels::inject(c, f, bx, ratio),
    )
}
