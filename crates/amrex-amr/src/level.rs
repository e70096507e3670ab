//! The level driver every average shares, AMReX's pattern: coarsen the fine BoxArray,
//! compute the coarse values on the fine level's distribution (each rank reads only its
//! own fine data), then `ParallelCopy` them into the coarse MultiFab, whatever its
//! BoxArray and distribution. When the coarse MultiFab already is the coarsened fine
//! layout (AMReX's `isMFIterSafe`), and the copy does not add, the values go straight
//! into it.

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
    let direct = plan.op == CopyOp::Copy
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
    let mut tmp = MultiFab::new(&cba, fine.distribution_map(), ncomp, plan.ng);
    tmp.par_for_each_tile(slabs(&cba, plan.ng), plan.ng, |mut t| {
        let region = t.region();
        let f = fine.array(t.mfi()).components(start, ncomp);
        kernel(&mut t.array_mut(), f, &region);
    });
    crse.parallel_copy_with(&tmp, 0, plan.ng, plan.period, plan.op, comps, plan.dst_ng)
        .map_err(fab_err(op))
}
