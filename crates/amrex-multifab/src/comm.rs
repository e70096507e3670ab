//! `FillBoundary` and `ParallelCopy`: executing cached copy plans.

use alloc::sync::Arc;
use core::ops::RangeBounds;

use amrex_arena::HostAccessible;
use amrex_basefab::{FabError, component_range};
use amrex_box::IntVect;

use crate::element::Element;
use crate::fabarray::{FabArray, RawFab};
use crate::ops::{check_ghost, operand_comps};
use crate::par::par_for;
use crate::periodicity::Periodicity;
use crate::plan::{CopyPlan, CopyTag, FillPattern};

/// Whether `parallel_copy` overwrites or adds (AMReX's `FabArrayBase::COPY` / `ADD`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CopyOp {
    /// `dst = src`.
    #[default]
    Copy,
    /// `dst += src`.
    Add,
}

/// Copies (or adds) the cells of one tag, components `scomp..` to `dcomp..`.
///
/// # Safety
/// `tag.dbox` lies in `dst`'s box and `tag.sbox()` in `src`'s, the component ranges
/// fit; nobody else accesses the destination cells, and nobody writes the source cells
/// during the call. `dst` and `src` may describe the same fab only if the two regions
/// are disjoint.
#[inline]
unsafe fn run_tag<T: Element>(
    dst: &RawFab<T>,
    dcomp: usize,
    src: &RawFab<T>,
    scomp: usize,
    nc: usize,
    tag: &CopyTag,
    op: CopyOp,
) {
    let (lo, hi) = (tag.dbox.lo(), tag.dbox.hi());
    let s = tag.shift;
    for n in 0..nc {
        for k in lo[2]..=hi[2] {
            for j in lo[1]..=hi[1] {
                // SAFETY: rows inside the boxes (caller); disjoint source and destination.
                let d = unsafe { dst.row_mut(lo[0], hi[0], j, k, dcomp + n) };
                // SAFETY: as above.
                let r =
                    unsafe { src.row(lo[0] + s[0], hi[0] + s[0], j + s[1], k + s[2], scomp + n) };
                match op {
                    CopyOp::Copy => d.copy_from_slice(r),
                    CopyOp::Add => d.iter_mut().zip(r).for_each(|(d, &r)| *d = *d + r),
                }
            }
        }
    }
}

#[track_caller]
fn require_local(plan: &CopyPlan, what: &str) {
    assert!(
        plan.is_local_only(),
        "FabArray::{what}: the plan exchanges messages with other ranks, which needs the MPI \
         engine (not built); {} sends and {} receives",
        plan.sends().len(),
        plan.recvs().len()
    );
}

impl<T: Element, A: HostAccessible> FabArray<T, A> {
    /// Fills every ghost cell that overlaps the valid region of another box (or of a
    /// periodic image of any box), all components, the full ghost width (AMReX's
    /// `FillBoundary(period)`).
    ///
    /// # Errors
    /// As [`fill_boundary_with`](Self::fill_boundary_with).
    pub fn fill_boundary(&mut self, period: Periodicity) -> Result<(), FabError> {
        let ng = self.ngrow;
        self.fill_boundary_with(period, FillPattern::Full, .., ng)
    }

    /// `FillBoundary` of components `comps` over ghost width `ng`; with
    /// [`FillPattern::Cross`], only the face ghost cells (no edges or corners), as a
    /// 7-point stencil needs.
    ///
    /// The plan is computed on first use and cached in the DistributionMapping; copies
    /// run in parallel, one task per destination fab, tags in plan order.
    ///
    /// # Errors
    /// [`FabError::ComponentsOutside`] or [`FabError::GhostOutside`]; nothing is written
    /// then.
    ///
    /// # Panics
    /// If the plan needs messages to other ranks.
    pub fn fill_boundary_with(
        &mut self,
        period: Periodicity,
        pattern: FillPattern,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabError> {
        let ng = ng.into();
        let c = component_range(comps, self.ncomp)?;
        check_ghost(ng, self.ngrow)?;
        if ng == IntVect::ZERO || c.is_empty() {
            return Ok(());
        }
        let plan = self
            .dm
            .fill_boundary_plan(&self.ba, ng, period, pattern, self.rank);
        require_local(&plan, "fill_boundary");
        let raws = self.raws_mut();
        let g2l = &self.g2l;
        let plan_ref: &Arc<CopyPlan> = &plan;
        par_for(plan_ref.local_groups().len(), |gi| {
            let (dst, ref range) = plan_ref.local_groups()[gi];
            let d = raws[g2l[dst] as usize];
            for tag in &plan_ref.local()[range.clone()] {
                let s = raws[g2l[tag.src] as usize];
                // SAFETY: `&mut self` is exclusive. This task alone writes destination
                // fab `dst`, and only its ghost cells (tags lie outside its valid box);
                // sources lie in valid boxes, which no task writes. Boxes are in their
                // fabs because ng <= ngrow.
                unsafe { run_tag(&d, c.start, &s, c.start, c.len(), tag, CopyOp::Copy) };
            }
        });
        Ok(())
    }

    /// Copies the valid cells of `src` into the valid cells of `self` where they overlap
    /// (AMReX's `ParallelCopy(src, period)`), all components.
    ///
    /// # Errors
    /// As [`parallel_copy_with`](Self::parallel_copy_with); also
    /// [`FabError::ComponentsOutside`] when `src` has fewer components than `self`.
    pub fn parallel_copy<B: HostAccessible>(
        &mut self,
        src: &FabArray<T, B>,
        period: Periodicity,
    ) -> Result<(), FabError> {
        self.parallel_copy_with(src, 0, IntVect::ZERO, period, CopyOp::Copy, .., 0)
    }

    /// `ParallelCopy` with components, ghost widths and copy-or-add: components
    /// `scomp..` of `src` over its boxes grown by `src_ng` go to components `comps` of
    /// `self` over its boxes grown by `ng` (AMReX's `ParallelCopy(src, scomp, dcomp,
    /// ncomp, snghost, dnghost, period, op)`). Where several sources cover a destination
    /// cell they are applied in plan order (the last copy wins; adds accumulate).
    ///
    /// # Errors
    /// [`FabError::ComponentsOutside`] or [`FabError::GhostOutside`] for either side;
    /// nothing is written then.
    ///
    /// # Panics
    /// If the index types differ or the plan needs messages to other ranks.
    #[expect(
        clippy::too_many_arguments,
        reason = "AMReX's argument list: the source with its component and width, the \
                  period and op, then the destination's components and width"
    )]
    pub fn parallel_copy_with<B: HostAccessible>(
        &mut self,
        src: &FabArray<T, B>,
        scomp: usize,
        src_ng: impl Into<IntVect>,
        period: Periodicity,
        op: CopyOp,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabError> {
        let (src_ng, dst_ng) = (src_ng.into(), ng.into());
        let c = component_range(comps, self.ncomp)?;
        operand_comps(scomp, c.len(), src.ncomp)?;
        check_ghost(src_ng, src.ngrow)?;
        check_ghost(dst_ng, self.ngrow)?;
        assert_eq!(
            self.rank, src.rank,
            "FabArray::parallel_copy: the FabArrays belong to different ranks"
        );
        if c.is_empty() {
            return Ok(());
        }
        let plan = self.dm.parallel_copy_plan(
            &self.ba, dst_ng, &src.ba, &src.dm, src_ng, period, self.rank,
        );
        require_local(&plan, "parallel_copy");
        let (draws, sraws) = (self.raws_mut(), src.raws());
        let (dg2l, sg2l) = (&self.g2l, &src.g2l);
        let plan_ref: &Arc<CopyPlan> = &plan;
        par_for(plan_ref.local_groups().len(), |gi| {
            let (dst, ref range) = plan_ref.local_groups()[gi];
            let d = draws[dg2l[dst] as usize];
            for tag in &plan_ref.local()[range.clone()] {
                let s = sraws[sg2l[tag.src] as usize];
                // SAFETY: `self` is borrowed mutably and `src` shared, so they are
                // different FabArrays; this task alone writes fab `dst`; regions lie in
                // the grown boxes (checked widths).
                unsafe { run_tag(&d, c.start, &s, scomp, c.len(), tag, op) };
            }
        });
        Ok(())
    }
}
