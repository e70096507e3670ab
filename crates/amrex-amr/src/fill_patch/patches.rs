//! The boxes a two-level fill interpolates, and the check that the coarse level holds
//! what they need.

use alloc::vec::Vec;

use amrex_box::{IndexBox, IntVect, SPACEDIM};
use amrex_geometry::Geometry;
use amrex_multifab::{BoxArray, MultiFab};

use crate::error::{AmrError, AmrErrorKind};

/// The parts of `mf`'s valid boxes grown by `ng` and cut to `fdom` that no box of
/// `fine` covers, each with the index of the box of `mf` it came from, in box order
/// (AMReX's `FPinfo::ba_fine_patch`, before its load balancing). Every rank computes the
/// same list.
pub(crate) fn uncovered(
    mf: &MultiFab,
    ng: IntVect,
    fdom: IndexBox,
    fine: &BoxArray,
) -> Vec<(IndexBox, usize)> {
    let ba = mf.box_array();
    let mut out = Vec::new();
    for i in 0..ba.len() {
        let Some(bx) = ba.get(i).grow_iv(ng).intersection(&fdom) else {
            continue;
        };
        out.extend(fine.complement_in(&bx).into_iter().map(|b| (b, i)));
    }
    out
}

/// Every coarse cell of `boxes` inside the coarse domain, or the periodic image of one
/// inside it, is covered by `crse`: otherwise the interpolation would read cells that
/// nothing fills (a fine level that is not properly nested in the coarse one).
pub(crate) fn check_covered(
    op: &'static str,
    boxes: &[IndexBox],
    crse: &BoxArray,
    geom: &Geometry,
) -> Result<(), AmrError> {
    let cdom = geom.domain().convert(crse.ix_type());
    let period = geom.periodicity();
    for b in boxes {
        // How far the box reaches past the domain: the images to look at.
        let reach = IntVect::from(core::array::from_fn::<i32, SPACEDIM, _>(|d| {
            (cdom.lo()[d] - b.lo()[d])
                .max(b.hi()[d] - cdom.hi()[d])
                .max(0)
        }));
        for s in period.shift_iter(reach) {
            if let Some(piece) = b.shift_iv(s).intersection(&cdom)
                && !crse.contains_box(&piece)
            {
                return Err(AmrError::new(
                    op,
                    AmrErrorKind::NotCovered { bx: *b, piece },
                ));
            }
        }
    }
    Ok(())
}

/// `b` lengthened toward the inside of the domain where it reaches past a non-periodic
/// face, so that it holds the interior cells the physical-boundary fill of its outside
/// part reads: one per layer outside (the reflections) and at least two (the two-point
/// `hoextrap` and `hoextrapcc` stencils), as far as the domain has them. A coarse box an
/// interpolater asks for can hold a single interior cell next to a wall (`CellBilinear`
/// grows on one side only); its fill would then read a cell it does not have. Boxes that
/// already hold those cells come back unchanged, so the fill's values (and the
/// three-point `hoextrap` choice, which depends on the box) are those of the box asked
/// for.
pub(crate) fn with_boundary_stencil(b: IndexBox, geom: &Geometry) -> IndexBox {
    let dom = geom.domain().convert(b.ix_type());
    let (mut lo, mut hi) = (b.lo(), b.hi());
    for d in 0..SPACEDIM {
        if geom.is_periodic(d) {
            continue;
        }
        let (dlo, dhi) = (dom.lo()[d], dom.hi()[d]);
        if lo[d] < dlo {
            let need = (dlo - lo[d]).max(2);
            hi[d] = hi[d].max((dlo + need - 1).min(dhi));
        }
        if hi[d] > dhi {
            let need = (hi[d] - dhi).max(2);
            lo[d] = lo[d].min((dhi - need + 1).max(dlo));
        }
    }
    IndexBox::with_type(lo, hi, b.ix_type())
}
