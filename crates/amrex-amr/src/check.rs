//! The argument checks every operation runs before it writes anything.

use amrex_box::{IndexBox, IndexType, IntVect};
use amrex_geometry::Geometry;
use amrex_multifab::{BoxArray, MultiFab};

use crate::error::{AmrError, AmrErrorKind, Operand};

/// `ratio >= 1` in every direction.
pub(crate) fn ratio(op: &'static str, ratio: IntVect) -> Result<(), AmrError> {
    if ratio.all_ge(IntVect::UNIT) {
        Ok(())
    } else {
        Err(AmrError::new(op, AmrErrorKind::BadRatio { ratio }))
    }
}

/// Components `start .. start + count` exist among `ncomp`.
pub(crate) fn comps(
    op: &'static str,
    operand: Operand,
    start: usize,
    count: usize,
    ncomp: usize,
) -> Result<(), AmrError> {
    if start.checked_add(count).is_some_and(|e| e <= ncomp) {
        Ok(())
    } else {
        Err(AmrError::new(
            op,
            AmrErrorKind::ComponentsOutside {
                operand,
                start,
                count,
                ncomp,
            },
        ))
    }
}

/// `0 <= needed <= has` in every direction.
pub(crate) fn ghost(
    op: &'static str,
    operand: Operand,
    needed: IntVect,
    has: IntVect,
) -> Result<(), AmrError> {
    if needed.all_ge(IntVect::ZERO) && needed.all_le(has) {
        Ok(())
    } else {
        Err(AmrError::new(
            op,
            AmrErrorKind::GhostTooWide {
                operand,
                needed,
                has,
            },
        ))
    }
}

/// Every box of `ba` coarsens by `ratio` and refines back to itself; the first that
/// does not is named.
pub(crate) fn coarsenable(op: &'static str, ba: &BoxArray, ratio: IntVect) -> Result<(), AmrError> {
    match ba.boxes().iter().position(|b| !b.coarsenable(ratio)) {
        None => Ok(()),
        Some(index) => Err(AmrError::new(
            op,
            AmrErrorKind::NotCoarsenable {
                index,
                bx: ba.get(index),
                ratio,
            },
        )),
    }
}

/// The fine and coarse MultiFabs have the same index type.
pub(crate) fn same_type(
    op: &'static str,
    fine: &MultiFab,
    crse: &MultiFab,
) -> Result<(), AmrError> {
    let (f, c) = (fine.box_array().ix_type(), crse.box_array().ix_type());
    if f == c {
        Ok(())
    } else {
        Err(AmrError::new(
            op,
            AmrErrorKind::IndexTypeMismatch { fine: f, crse: c },
        ))
    }
}

/// `fine` is `crse` refined by `ratio`: the same coordinate system, and the coarse
/// domain refined is the fine one.
pub(crate) fn geometries(
    op: &'static str,
    fine: &Geometry,
    crse: &Geometry,
    ratio: IntVect,
) -> Result<(), AmrError> {
    if fine.coord() == crse.coord() && crse.domain().refine_iv(ratio) == fine.domain() {
        Ok(())
    } else {
        Err(AmrError::new(
            op,
            AmrErrorKind::GeometryMismatch {
                fine_domain: fine.domain(),
                fine_coord: fine.coord(),
                crse_domain: crse.domain(),
                crse_coord: crse.coord(),
                ratio,
            },
        ))
    }
}

/// `region` lies inside `bounds` (the spatial bounds of a view, as cells: index types
/// are not compared, a nodal region's node indices index the view directly).
pub(crate) fn inside(
    op: &'static str,
    operand: Operand,
    region: &IndexBox,
    bounds: IndexBox,
) -> Result<(), AmrError> {
    if region.lo().all_ge(bounds.lo()) && region.hi().all_le(bounds.hi()) {
        Ok(())
    } else {
        Err(AmrError::new(
            op,
            AmrErrorKind::RegionOutside {
                operand,
                region: *region,
                bounds,
            },
        ))
    }
}

/// `given` boundary records hold records `first .. first + ncomp`.
pub(crate) fn bc_records(
    op: &'static str,
    given: usize,
    first: usize,
    ncomp: usize,
) -> Result<(), AmrError> {
    let needed = first.saturating_add(ncomp);
    if given < needed {
        return Err(AmrError::new(
            op,
            AmrErrorKind::TooFewBcRecs { given, needed },
        ));
    }
    Ok(())
}

/// The physical-boundary fill takes data of index type `ix` on `geom`: cell-centred or
/// nodal data, or any data when every direction is periodic (nothing to fill then).
pub(crate) fn boundary_type(
    op: &'static str,
    ix: IndexType,
    geom: &Geometry,
) -> Result<(), AmrError> {
    if geom.is_all_periodic() || ix.cell_centered() || ix.node_centered() {
        Ok(())
    } else {
        Err(AmrError::new(
            op,
            AmrErrorKind::UnsupportedIndexType { found: ix },
        ))
    }
}

/// Every box of `ba` lies inside `geom`'s domain (in the boxes' index type).
pub(crate) fn boxes_in_domain(
    op: &'static str,
    ba: &BoxArray,
    geom: &Geometry,
) -> Result<(), AmrError> {
    match ba
        .boxes()
        .iter()
        .position(|b| !geom.inside_physical_domain_box(b))
    {
        None => Ok(()),
        Some(index) => Err(AmrError::new(
            op,
            AmrErrorKind::BoxOutsideDomain {
                index,
                bx: ba.get(index),
                domain: geom.domain().convert(ba.ix_type()),
            },
        )),
    }
}
