//! The level driver every average shares, AMReX's pattern: coarsen the fine BoxArray,
//! compute the coarse values on the fine level's distribution (each rank reads only its
//! own fine data), then `ParallelCopy` them into the coarse MultiFab, whatever its
//! BoxArray and distribution. When the coarse MultiFab already is the coarsened fine
//! layout (AMReX's `isMFIterSafe`), and the copy neither adds nor lands periodic images,
//! the values go straight into it; so they do when every piece the copy would move stays
//! on its rank, lands once and needs no periodic image (each coarse box computes its own
//! pieces then).

use core::ops::Range;

use amrex_array4::{Array4, Array4Mut};
use amrex_box::{IndexBox, IntVect};
use amrex_multifab::{BoxArray, CopyOp, MultiFab, Periodicity, Tiling};

use crate::error::{AmrError, fab_err};

/// How the coarse values reach the coarse MultiFab.
pub(crate) struct Plan {
    /// The ghost width of the coarse values computed (coarse indices).
    pub(crate) ng: IntVect,
    /// The ghost width of the coarse MultiFab the copy writes.
    pub(crate) dst_ng: IntVect,
    /// The periodicity of the copy.
    pub(crate) period: Periodicity,
    /// Copy or add.
    pub(crate) op: CopyOp,
}

/// The work items of the averages: `k`-slabs of whole coarse boxes (grown by `ng`), of
/// about `TARGET` coarse cells each, so that a task reads whole planes of fine data,
/// long streams for the hardware prefetcher, instead of the short runs of rows that
/// tiles narrow in `j` give. The partition does not depend on the number of threads;
/// a 128³ coarse box still makes 64 tasks.
fn slabs(cba: &BoxArray, ng: IntVect) -> Tiling {
    const TARGET: i64 = 32 * 1024;
    let plane = cba
        .boxes()
        .iter()
        .map(|b| {
            let g = b.grow_iv(ng);
            i64::from(g.length()[0]) * i64::from(g.length()[1])
        })
        .max()
        .unwrap_or(1)
        .max(1);
    let nk = i32::try_from(TARGET / plane).unwrap_or(i32::MAX).max(1);
    Tiling::Size(IntVect::new(i32::MAX, i32::MAX, nk))
}

/// Runs `kernel(crse_view, fine_view, coarse_region)` over the coarsened fine layout,
/// then lands the results in components `comps` of `crse`. Both views hold exactly the
/// components `comps` (the fine view those of `fine`, the coarse one those of the
/// destination), indexed from 0.
///
/// The caller has checked every argument: nothing here fails but the final copy (which
/// writes nothing when it fails).
pub(crate) fn coarsen_into(
    op: &'static str,
    fine: &MultiFab,
    crse: &mut MultiFab,
    comps: Range<usize>,
    ratio: IntVect,
    plan: &Plan,
    kernel: impl Fn(&mut Array4Mut<'_, f64>, Array4<'_, f64>, &IndexBox) + Sync + Send,
) -> Result<(), AmrError> {
    let ncomp = comps.len();
    if ncomp == 0 || fine.box_array().is_empty() {
        return Ok(());
    }
    let cba = fine.box_array().coarsen(ratio);
    // A periodic copy also lands images across the domain's faces, which a straight
    // write into the coarse boxes would miss.
    let direct = plan.op == CopyOp::Copy
        && !plan.period.is_any_periodic()
        && plan.ng == plan.dst_ng
        && crse.box_array() == &cba
        && crse.distribution_map() == fine.distribution_map()
        && crse.rank() == fine.rank();
    let start = comps.start;
    if direct {
        crse.par_for_each_tile(slabs(&cba, plan.ng), plan.ng, |mut t| {
            let region = t.region();
            let f = fine.array(t.mfi()).components(start, ncomp);
            let mut c = t.array_mut().into_components(start, ncomp);
            kernel(&mut c, f, &region);
        });
        return Ok(());
    }
    if owners_match(fine, crse, &cba, plan) {
        // Every coarse box meets only coarsened fine boxes of its own rank, and they do
        // not overlap: each piece the copy would move is computed where it lands.
        crse.par_for_each_tile(
            slabs(crse.box_array(), IntVect::ZERO),
            IntVect::ZERO,
            |mut t| {
                let pieces = cba.intersections(&t.region());
                let mut c = t.array_mut().into_components(start, ncomp);
                for (k, region) in pieces {
                    let l = fine
                        .local_index(k)
                        .expect("the fine box is local (owners_match)");
                    kernel(&mut c, fine.array_at(l).components(start, ncomp), &region);
                }
            },
        );
        return Ok(());
    }
    let mut tmp = MultiFab::new(&cba, fine.distribution_map(), ncomp, plan.ng);
    tmp.par_for_each_tile(slabs(&cba, plan.ng), plan.ng, |mut t| {
        let region = t.region();
        let f = fine.array(t.mfi()).components(start, ncomp);
        kernel(&mut t.array_mut(), f, &region);
    });
    crse.parallel_copy_with(&tmp, 0, plan.ng, plan.period, plan.op, comps, plan.dst_ng)
        .map_err(fab_err(op))
}

/// Whether the `ParallelCopy` of the coarse values would only copy valid cells, without
/// periodic images, between boxes of one rank that never write a cell twice: then each
/// coarse box can compute its pieces from the fine data itself, with the same values,
/// and no temporary or copy is needed. Decided from the global layouts alone, so every
/// rank decides alike.
fn owners_match(fine: &MultiFab, crse: &MultiFab, cba: &BoxArray, plan: &Plan) -> bool {
    if plan.op != CopyOp::Copy
        || plan.ng != IntVect::ZERO
        || plan.dst_ng != IntVect::ZERO
        || plan.period.is_any_periodic()
        || !cba.ix_type().cell_centered()
        || crse.communicator() != fine.communicator()
        || crse.rank() != fine.rank()
    {
        return false;
    }
    let (fdm, cdm) = (fine.distribution_map(), crse.distribution_map());
    let same_owner = crse.box_array().boxes().iter().enumerate().all(|(g, b)| {
        cba.intersections(b)
            .iter()
            .all(|&(k, _)| fdm.rank_of(k) == cdm.rank_of(g))
    });
    same_owner && cba.is_disjoint()
}

#[cfg(test)]
mod tests {
    use amrex_multifab::DistributionMapping;

    use super::*;
    use crate::average_down;

    /// The coarse values are the same bits whether they are written into the coarsened
    /// fine layout, computed piece by piece into another layout of the same rank, or
    /// moved through the temporary and its `ParallelCopy` (a map whose owners differ).
    #[test]
    fn every_path_gives_the_same_bits() {
        let ratio = IntVect::new(2, 3, 1);
        let cdom = IndexBox::new(IntVect::new(-3, 0, 2), IntVect::new(12, 8, 9));
        let fba = BoxArray::from_domain_iv(cdom.refine_iv(ratio), IntVect::new(10, 9, 5));
        let fdm = DistributionMapping::single(&fba);
        let mut fine = MultiFab::new(&fba, &fdm, 2, IntVect::ZERO);
        fine.par_for_each_tile(Tiling::None, IntVect::ZERO, |mut t| {
            let bx = t.region();
            t.array_mut().for_each_mut(bx, |i, j, k, n, v| {
                let n = i32::try_from(n).unwrap();
                *v = 1.0 / f64::from(3 + (i * 7 + j * 13 + k * 5 + n * 11).rem_euclid(97));
            });
        });
        let cba = fba.coarsen(ratio);
        let mut direct = MultiFab::new(&cba, &fdm, 2, IntVect::ZERO);
        average_down(&fine, &mut direct, 0..2, ratio).unwrap();
        let other = BoxArray::from_domain_iv(cdom, IntVect::new(7, 4, 3));
        let plan = Plan {
            ng: IntVect::ZERO,
            dst_ng: IntVect::ZERO,
            period: Periodicity::non_periodic(),
            op: CopyOp::Copy,
        };
        let single = DistributionMapping::single(&other);
        let mut pieces = MultiFab::new(&other, &single, 2, IntVect::ZERO);
        assert!(owners_match(&fine, &pieces, &cba, &plan));
        average_down(&fine, &mut pieces, 0..2, ratio).unwrap();
        // A periodicity whose images meet nothing makes the same copy go through the
        // temporary and its `ParallelCopy`.
        let far = Plan {
            period: Periodicity::from_period(IntVect::splat(1000)),
            ..plan
        };
        let mut copied = MultiFab::new(&other, &single, 2, IntVect::ZERO);
        assert!(!owners_match(&fine, &copied, &cba, &far));
        coarsen_into("test", &fine, &mut copied, 0..2, ratio, &far, |c, f, bx| {
            crate::kernels::mean(c, f, bx, ratio);
        })
        .unwrap();
        for p in cdom.iter() {
            for n in 0..2 {
                let want = direct.value_at(p, n).unwrap().to_bits();
                assert_eq!(pieces.value_at(p, n).unwrap().to_bits(), want, "{p:?} {n}");
                assert_eq!(copied.value_at(p, n).unwrap().to_bits(), want, "{p:?} {n}");
            }
        }
    }
}
