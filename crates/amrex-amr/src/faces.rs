//! `average_down_faces`: coarse faces from the fine faces on them (AMReX's
//! `amrex::average_down_faces` in `AMReX_MultiFabUtil`).

use amrex_array4::{Array4, Array4Mut};
use amrex_box::{IndexBox, IntVect};
use amrex_geometry::Geometry;
use amrex_multifab::{CopyOp, MultiFab, Periodicity};

use crate::check;
use crate::error::{AmrError, AmrErrorKind, Operand};
use crate::interp::Centring;
use crate::kernels;
use crate::level::{Plan, coarsen_into};

/// What `average_down_faces` and `average_down_nodal` share: the checks (ratio, index
/// types, `centring`, component counts, ghost widths — `ngcrse` in the coarse data,
/// `ngcrse · ratio` in the fine data —, fine boxes that coarsen), then `kernel` over the
/// coarse boxes grown by `ngcrse`, every component, copied into `crse` with its ghost
/// cells. With `crse_geom` the copy also lands the periodic images of the coarse values
/// (AMReX's overloads that take the coarse `Geometry`).
pub(crate) fn average_staggered(
    op: &'static str,
    fine: &MultiFab,
    crse: &mut MultiFab,
    (ratio, ngcrse): (IntVect, IntVect),
    (centring, crse_geom): (Centring, Option<&Geometry>),
    kernel: impl Fn(&mut Array4Mut<'_, f64>, Array4<'_, f64>, &IndexBox) + Sync + Send,
) -> Result<(), AmrError> {
    let mut agreement = check::Agreement::new(op)
        .mf(fine)
        .mf(crse)
        .iv(ratio)
        .iv(ngcrse);
    if let Some(g) = crse_geom {
        agreement = agreement.geom(g);
    }
    agreement.check(crse.communicator())?;
    check::ratio(op, ratio)?;
    check::same_type(op, fine, crse)?;
    check::centring(op, Operand::Fine, fine.box_array().ix_type(), centring)?;
    if fine.ncomp() != crse.ncomp() {
        return Err(AmrError::new(
            op,
            AmrErrorKind::ComponentCountMismatch {
                fine: fine.ncomp(),
                crse: crse.ncomp(),
            },
        ));
    }
    check::ghost(op, Operand::Crse, ngcrse, crse.n_grow())?;
    check::ghost(op, Operand::Fine, ngcrse * ratio, fine.n_grow())?;
    check::coarsenable(op, fine.box_array(), ratio)?;
    let plan = Plan {
        ng: ngcrse,
        dst_ng: ngcrse,
        period: crse_geom.map_or(Periodicity::non_periodic(), Geometry::periodicity),
        op: CopyOp::Copy,
    };
    coarsen_into(op, fine, crse, 0..fine.ncomp(), ratio, &plan, kernel)
}

/// Every coarse face normal to the one nodal direction `d` of the data becomes the mean
/// of the `r₁ · r₂` fine faces on it (the ratios of the two other directions), every
/// component, over the coarse boxes grown by `ngcrse` (AMReX's
/// `average_down_faces(fine, crse, ratio, ngcrse)`): the flux through a coarse face is
/// the sum of the fluxes through its fine faces.
///
/// Call it once per direction for the three face MultiFabs of a staggered field. Any
/// BoxArrays and distributions: the means are computed on the coarsened fine BoxArray
/// and `ParallelCopy`'d (ghost width `ngcrse` on both sides) unless `crse` already has
/// that BoxArray and the fine distribution. Faces on the boundary of two coarse boxes
/// get the value of whichever copy comes last, which is the same value when both are
/// covered by fine data.
///
/// ```
/// use amrex_amr::average_down_faces;
/// use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IndexType, IntVect, MultiFab};
///
/// // x-faces of 8³ fine cells and of their 4³ coarse cells.
/// let xface = IndexType::new(true, false, false);
/// let cells = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::splat(7)), 8);
/// let fba = cells.convert(xface);
/// let cba = cells.coarsen(IntVect::splat(2)).convert(xface);
/// let mut fine = MultiFab::new(&fba, &DistributionMapping::single(&fba), 1, IntVect::ZERO);
/// fine.array_mut_at(0).for_each_mut(fba.get(0), |i, j, k, _n, v| *v = f64::from(i + j + k));
/// let mut crse = MultiFab::new(&cba, &DistributionMapping::single(&cba), 1, IntVect::ZERO);
///
/// average_down_faces(&fine, &mut crse, 2, 0)?;
/// // Coarse x-face (1, 1, 1) is fine x-face 2 with j, k in 2..=3: mean 2 + 2.5 + 2.5.
/// assert_eq!(crse.value_at(IntVect::splat(1), 0), Some(7.0));
/// # Ok::<(), amrex_amr::AmrError>(())
/// ```
///
/// # Errors
/// Nothing is written when any of these is returned:
/// [`BadRatio`](AmrErrorKind::BadRatio);
/// [`IndexTypeMismatch`](AmrErrorKind::IndexTypeMismatch), or
/// [`WrongIndexType`](AmrErrorKind::WrongIndexType) unless exactly one direction is
/// nodal; [`ComponentCountMismatch`](AmrErrorKind::ComponentCountMismatch);
/// [`GhostTooWide`](AmrErrorKind::GhostTooWide) when `crse` has fewer than `ngcrse`
/// ghost cells or `fine` fewer than `ngcrse · ratio`;
/// [`NotCoarsenable`](AmrErrorKind::NotCoarsenable); [`MultiFab`](AmrErrorKind::MultiFab).
pub fn average_down_faces(
    fine: &MultiFab,
    crse: &mut MultiFab,
    ratio: impl Into<IntVect>,
    ngcrse: impl Into<IntVect>,
) -> Result<(), AmrError> {
    let (ratio, ngcrse) = (ratio.into(), ngcrse.into());
    let dir = nodal_dir(fine);
    average_staggered(
        "average_down_faces",
        fine,
        crse,
        (ratio, ngcrse),
        (Centring::Face, None),
        |c, f, bx| kernels::faces(c, f, bx, ratio, dir),
    )
}

/// [`average_down_faces`] with no ghost faces whose copy into `crse` also lands the
/// periodic images of the coarse faces, by the periodicity of `crse_geom`, the coarse
/// level's geometry (AMReX's `average_down_faces(fine, crse, ratio, crse_geom)`, what
/// its AMR codes call to make the coarse fluxes of a step without subcycling those of
/// the fine level above them). On a periodic domain the faces on its low and high sides
/// are one face: a coarse face there takes the fine mean from either side, whichever
/// the copy lands last, as in AMReX.
///
/// # Errors
/// As [`average_down_faces`].
pub fn average_down_faces_geom(
    fine: &MultiFab,
    crse: &mut MultiFab,
    ratio: impl Into<IntVect>,
    crse_geom: &Geometry,
) -> Result<(), AmrError> {
    let ratio = ratio.into();
    let dir = nodal_dir(fine);
    average_staggered(
        "average_down_faces_geom",
        fine,
        crse,
        (ratio, IntVect::ZERO),
        (Centring::Face, Some(crse_geom)),
        |c, f, bx| kernels::faces(c, f, bx, ratio, dir),
    )
}

/// The one nodal direction of `fine`'s index type; `average_staggered` checks that there
/// is exactly one (0 stands in until then).
fn nodal_dir(fine: &MultiFab) -> usize {
    let typ = fine.box_array().ix_type();
    (0..3).find(|&d| typ.node_centered_dir(d)).unwrap_or(0)
}
