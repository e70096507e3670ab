//! `FillBoundary`, `ParallelCopy` and `SumBoundary`: executing cached copy plans, in one
//! process or over the ranks of the FabArrays' [`Communicator`].
//!
//! A distributed operation runs in four steps on every rank:
//!
//! 1. **Agreement.** With more than one rank, every rank hashes what should be one
//!    operation (BoxArrays, maps, components, ghost widths, periodicity, op) and
//!    [`Communicator::agree`] compares the hashes: if the ranks disagree, every rank
//!    returns [`FabArrayError::RanksDisagree`] naming the operation, and nobody waits for a message
//!    that will never come.
//! 2. **Pack and post.** One buffer per neighbour rank, packed tag by tag in plan order
//!    (both sides list a message's tags in the same order), sent without blocking;
//!    receives are posted first.
//! 3. **Local copies** while the messages are in flight.
//! 4. **Unpack** in plan order, whatever the arrival order.
//!
//! On a cell-centred BoxArray `fill_boundary` writes each ghost cell from exactly one
//! source cell, so the order of local and remote copies cannot change its result, and
//! every local copy runs while the messages are in flight. Where a cell can be written
//! several times (nodal boxes share their face nodes; `parallel_copy`'s grown sources
//! overlap; every `CopyOp::Add`), each destination applies its local and received tags
//! merged back into the single-process order ([`CopyPlan::local_order`],
//! [`CopyPlan::recv_order`]); destinations without received tags go while the messages
//! are in flight, the others when they are here. So the results of all three
//! operations, `sum_boundary` included, are bit for bit the single-process ones on any
//! number of ranks.
//!
//! Between `fill_boundary_nowait` and `fill_boundary_finish`, ghost cells that other
//! ranks fill are written at the finish: writing them in between (or reading them, as
//! `sum_boundary` does) gives another result than one process, as in AMReX.

use crate::error::FabArrayError;
use alloc::borrow::Cow;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ops::{Range, RangeBounds};

use crate::error::component_range;
use amrex_arena::Arena;
use amrex_arena::kernels::Kernels;
pub use amrex_array4::rows::CopyOp;
use amrex_box::IntVect;

use crate::copy::{Order, apply_in_order, copy_tags_interleaved, merged_order, run_tag};
use crate::element::Element;
use crate::fabarray::{FabArray, HashArgs as _};
use crate::message::{as_elements, comm_err, post, tag_len, unpack_tag};
use crate::ops::{check_ghost, operand_comps};
use crate::plan::{CopyPlan, FillPattern};
use crate::profile::{self, CALLS, LOCAL, PACK, RECEIVED, UNPACK, WAIT};
use amrex_geometry::Periodicity;
use amrex_runtime::threads::par_for;
use amrex_runtime::{Agreed, Communicator, Exchange, Fingerprint, Tag};

/// A `fill_boundary_nowait` in flight: its messages, the plan that unpacks them and the
/// components.
pub(crate) struct PendingFill {
    exchange: Exchange,
    plan: Arc<CopyPlan>,
    comps: Range<usize>,
    /// For BoxArrays whose boxes share cells (nodal ones share faces, so a ghost cell
    /// can have several sources): the merged order of the destinations still to do.
    merged: Option<(Order, Vec<bool>)>,
}

/// Step 1: with more than one rank, every rank checks that all ranks run the same
/// operation on the same layout. Every collective of a FabArray (the exchanges here, the
/// reductions, the global reads) starts with this one all-reduce, so ranks that call two
/// different ones meet in it and all get [`FabArrayError::RanksDisagree`] instead of waiting
/// in mismatched MPI calls.
pub(crate) fn agree<'c>(
    comm: &'c Communicator,
    what: &'static str,
    fp: &Fingerprint,
) -> Result<Agreed<'c>, FabArrayError> {
    comm.agree(what, fp).map_err(|e| comm_err(what, e))
}

/// A plan that needs messages can run only on a FabArray of this process's own rank on
/// a map that spans its communicator (a map made with `with_ranks` for inspection
/// cannot).
fn check_messages<T: Element, A: Arena>(
    what: &'static str,
    fa: &FabArray<T, A>,
    plan: &CopyPlan,
) -> Result<(), FabArrayError> {
    if plan.is_local_only() {
        return Ok(());
    }
    let comm = fa.dm.communicator();
    if !fa.dm.is_distributed_over_comm() || fa.rank != comm.rank() {
        return Err(FabArrayError::CannotExchange {
            op: what,
            part_of_rank: fa.rank,
            map_ranks: fa.dm.nranks(),
            comm_rank: comm.rank(),
            comm_size: comm.size(),
        });
    }
    Ok(())
}

impl<T: Element, A: amrex_arena::Arena> FabArray<T, A> {
    /// The operand checks of a `ParallelCopy` into `self` (on the host or on a device):
    /// the same index type, `n` source components from `scomp`, and ghost widths within
    /// each FabArray's.
    pub(crate) fn check_parallel_copy<B: amrex_arena::Arena>(
        &self,
        src: &FabArray<T, B>,
        scomp: usize,
        n: usize,
        src_ng: IntVect,
        dst_ng: IntVect,
    ) -> Result<(), FabArrayError> {
        if self.ba.ix_type() != src.ba.ix_type() {
            return Err(FabArrayError::LayoutMismatch);
        }
        operand_comps(scomp, n, src.ncomp)?;
        check_ghost(src_ng, src.ngrow)?;
        check_ghost(dst_ng, self.ngrow)
    }
}

impl<T: Element, A: Kernels> FabArray<T, A> {
    /// Fills every ghost cell that overlaps the valid region of another box (or of a
    /// periodic image of any box), all components, the full ghost width (AMReX's
    /// `FillBoundary(period)`). **Collective** over the FabArray's communicator.
    ///
    /// # Errors
    /// As [`fill_boundary_with`](Self::fill_boundary_with).
    pub fn fill_boundary(&mut self, period: Periodicity) -> Result<(), FabArrayError> {
        let ng = self.ngrow;
        self.fill_boundary_with(period, FillPattern::Full, .., ng)
    }

    /// `FillBoundary` of components `comps` over ghost width `ng`; with
    /// [`FillPattern::Cross`], only the face ghost cells (no edges or corners), as a
    /// 7-point stencil needs. **Collective**.
    ///
    /// The plan is computed on first use and cached in the DistributionMapping; local
    /// copies run in parallel, one task per destination fab, while the messages to other
    /// ranks are in flight.
    ///
    /// # Errors
    /// [`FabArrayError::Fab`]`(`[`ComponentsOutside`](amrex_basefab::FabError::ComponentsOutside)`)` or [`FabArrayError::GhostOutside`] (nothing is written
    /// then); [`FabArrayError::RanksDisagree`] when the ranks disagree on the layout or the
    /// arguments (on every rank); [`FabArrayError::CannotExchange`] when the plan needs
    /// messages that this FabArray's map cannot send; [`FabArrayError::FillInFlight`] when a
    /// `fill_boundary_nowait` of this FabArray is still in flight; [`FabArrayError::Comm`]
    /// when a message fails. On device and managed memory, the errors of the kernels
    /// ([`FabError::Arena`](amrex_basefab::FabError::Arena)) and [`FabArrayError::DeviceNeedsOneProcess`].
    pub fn fill_boundary_with(
        &mut self,
        period: Periodicity,
        pattern: FillPattern,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabArrayError> {
        self.fill_boundary_nowait(period, pattern, comps, ng)?;
        self.fill_boundary_finish()
    }

    /// The first half of [`fill_boundary_with`](Self::fill_boundary_with) (AMReX's
    /// `FillBoundary_nowait`): checks, packs and posts the messages and does the local
    /// copies; the ghost cells filled from other ranks are written by
    /// [`fill_boundary_finish`](Self::fill_boundary_finish). Work on valid cells in
    /// between overlaps the messages; the sources were packed already. **Collective**,
    /// and so is the finish.
    ///
    /// # Errors
    /// As [`fill_boundary_with`](Self::fill_boundary_with).
    pub fn fill_boundary_nowait(
        &mut self,
        period: Periodicity,
        pattern: FillPattern,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabArrayError> {
        const WHAT: &str = "fill_boundary";
        let ng = ng.into();
        if !self.arena.host_loops() {
            // Device memory: one process, so no agreement; the kernels copy every tag
            // now, and `fill_boundary_finish` has nothing to wait for.
            let c = component_range(comps, self.ncomp)?;
            check_ghost(ng, self.ngrow)?;
            return self.kernel_fill_boundary(period, pattern, c, ng);
        }
        // The arguments are checked after the ranks agree on them (the fingerprint holds
        // everything the checks read), so all ranks refuse together or none does.
        let c = component_range(comps, self.ncomp);
        let mut fp = Fingerprint::new();
        fp.word(1)
            .with(|fp| self.hash_operand(fp))
            .comps(&c)
            .iv(ng)
            .iv(period.period())
            .word(u64::from(pattern == FillPattern::Cross));
        agree(self.dm.communicator(), WHAT, &fp)?;
        let c = c?;
        check_ghost(ng, self.ngrow)?;
        if self.pending.is_some() {
            return Err(FabArrayError::FillInFlight);
        }
        if ng == IntVect::ZERO || c.is_empty() {
            return Ok(());
        }
        let plan = self
            .dm
            .fill_boundary_plan(&self.ba, ng, period, pattern, self.rank);
        check_messages(WHAT, self, &plan)?;
        let t0 = profile::now();
        let raws = self.raws_mut();
        let g2l = &self.g2l;
        // SAFETY: the sources of sent tags are valid cells of local fabs (the plan),
        // inside their fabs; `&mut self` keeps other writers away while packing reads.
        let (exchange, t1) = unsafe {
            post(
                self.dm.communicator(),
                WHAT,
                Tag::FILL_BOUNDARY,
                &plan,
                (&raws, g2l, c.start),
                c.len(),
            )?
        };
        // A cell-centred BoxArray's ghost cells each have one source, so the order of the
        // copies does not matter: every local copy goes now. Otherwise (nodal boxes share
        // faces) each destination's tags keep the single-process order: those without
        // received tags go now, the others in `fill_boundary_finish`.
        let merged = if self.ba.ix_type().cell_centered() {
            let plan_ref: &CopyPlan = &plan;
            par_for(plan_ref.local_groups().len(), |gi| {
                let (dst, ref range) = plan_ref.local_groups()[gi];
                let d = raws[g2l[dst] as usize];
                let tags = &plan_ref.local()[range.clone()];
                if plan_ref.local_tags_disjoint() {
                    // SAFETY: `&mut self` is exclusive. This task alone writes destination
                    // fab `dst`, and only its ghost cells (tags lie outside its valid
                    // box), no cell twice (the plan checked the tags are disjoint);
                    // sources lie in valid boxes, which no task writes. Boxes are in
                    // their fabs because ng <= ngrow.
                    unsafe {
                        copy_tags_interleaved(&d, c.start, (c.start, c.len()), tags, |t| {
                            raws[g2l[t.src] as usize]
                        });
                    }
                } else {
                    // Overlapping boxes: the tags in plan order, the last one winning.
                    for tag in tags {
                        let s = raws[g2l[tag.src] as usize];
                        // SAFETY: as above, but tags may write a cell more than once,
                        // one after the other.
                        unsafe { run_tag(&d, c.start, &s, c.start, c.len(), tag, CopyOp::Copy) };
                    }
                }
            });
            None
        } else {
            let (order, remote) = merged_order(&plan, g2l, self.local.len(), c.len());
            // SAFETY: as in the branch above: each task writes the ghost cells of its own
            // fab, sources are valid cells, which no tag writes.
            unsafe {
                apply_in_order(
                    &plan,
                    &order,
                    &raws,
                    (&raws, g2l, c.start),
                    &[],
                    (c.start, c.len()),
                    CopyOp::Copy,
                    |l| !remote[l],
                );
            }
            Some((order, remote))
        };
        profile::add(CALLS, 1);
        profile::add(PACK, t1 - t0);
        profile::add(LOCAL, profile::now() - t1);
        self.pending = Some(PendingFill {
            exchange,
            plan,
            comps: c,
            merged,
        });
        Ok(())
    }

    /// The second half of a `fill_boundary_nowait` (AMReX's `FillBoundary_finish`):
    /// waits for the messages and writes the ghost cells they fill, in plan order.
    /// Nothing to do (and `Ok`) when no FillBoundary is in flight. **Collective**.
    ///
    /// # Errors
    /// [`FabArrayError::Comm`] if a message failed.
    pub fn fill_boundary_finish(&mut self) -> Result<(), FabArrayError> {
        let Some(p) = self.pending.take() else {
            return Ok(());
        };
        let t0 = profile::now();
        let got = p
            .exchange
            .wait()
            .map_err(|e| comm_err("fill_boundary_finish", e))?;
        let t1 = profile::now();
        let raws = self.raws_mut();
        let nc = p.comps.len();
        if let Some((order, remote)) = &p.merged {
            let vals: Vec<Cow<'_, [T]>> = got.iter().map(|(_, b)| as_elements::<T>(b)).collect();
            // SAFETY: as in `fill_boundary_nowait`; received tags fill ghost cells of
            // local fabs inside their fab boxes.
            unsafe {
                apply_in_order(
                    &p.plan,
                    order,
                    &raws,
                    (&raws, &self.g2l, p.comps.start),
                    &vals,
                    (p.comps.start, nc),
                    CopyOp::Copy,
                    |l| remote[l],
                );
            }
        } else {
            for (i, (_, bytes)) in got.iter().enumerate() {
                let vals = as_elements::<T>(bytes);
                let mut at = 0;
                for tag in &p.plan.recvs()[i].1 {
                    let d = &raws[self.g2l[tag.dst] as usize];
                    let n = tag_len(tag, nc);
                    // SAFETY: received tags fill ghost cells of local fabs inside their
                    // fab boxes (the plan, ng <= ngrow); `&mut self` is exclusive and this
                    // loop is the only writer. The message has exactly the plan's length
                    // (the exchange checks sizes), so `at + n` is in bounds.
                    unsafe {
                        unpack_tag(d, p.comps.start, nc, tag, &vals[at..at + n], CopyOp::Copy);
                    }
                    at += n;
                }
            }
        }
        profile::add(WAIT, t1 - t0);
        profile::add(UNPACK, profile::now() - t1);
        profile::add(RECEIVED, got.iter().map(|(_, b)| b.len() as u64).sum());
        Ok(())
    }

    /// Copies the valid cells of `src` into the valid cells of `self` where they overlap
    /// (AMReX's `ParallelCopy(src, period)`), all components. **Collective**.
    ///
    /// # Errors
    /// As [`parallel_copy_with`](Self::parallel_copy_with); also
    /// [`FabArrayError::Fab`]`(`[`ComponentsOutside`](amrex_basefab::FabError::ComponentsOutside)`)` when `src` has fewer components than `self`.
    pub fn parallel_copy<B: Kernels>(
        &mut self,
        src: &FabArray<T, B>,
        period: Periodicity,
    ) -> Result<(), FabArrayError> {
        self.parallel_copy_with(src, 0, IntVect::ZERO, period, CopyOp::Copy, .., 0)
    }

    /// `ParallelCopy` with components, ghost widths and copy-or-add: components
    /// `scomp..` of `src` over its boxes grown by `src_ng` go to components `comps` of
    /// `self` over its boxes grown by `ng` (AMReX's `ParallelCopy(src, scomp, dcomp,
    /// ncomp, snghost, dnghost, period, op)`), between any two BoxArrays and maps on one
    /// communicator. Where several sources cover a destination cell they are applied in
    /// the single-process plan order (the last copy wins; adds accumulate), on any number
    /// of ranks. **Collective**.
    ///
    /// # Errors
    /// [`FabArrayError::Fab`]`(`[`ComponentsOutside`](amrex_basefab::FabError::ComponentsOutside)`)` or [`FabArrayError::GhostOutside`] for either side
    /// (nothing is written then); the distributed errors as for
    /// [`fill_boundary_with`](Self::fill_boundary_with);
    /// [`FabArrayError::DifferentCommunicators`] when the two FabArrays live on different
    /// communicators; [`FabArrayError::DifferentMemory`] when one is in host memory and the
    /// other not.
    ///
    /// [`FabArrayError::LayoutMismatch`] when the two BoxArrays have different index types.
    #[expect(
        clippy::too_many_arguments,
        reason = "AMReX's argument list: the source with its component and width, the \
                  period and op, then the destination's components and width"
    )]
    pub fn parallel_copy_with<B: Kernels>(
        &mut self,
        src: &FabArray<T, B>,
        scomp: usize,
        src_ng: impl Into<IntVect>,
        period: Periodicity,
        op: CopyOp,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabArrayError> {
        const WHAT: &str = "parallel_copy";
        let (src_ng, dst_ng) = (src_ng.into(), ng.into());
        if !self.arena.host_loops() || !src.arena.host_loops() {
            let c = component_range(comps, self.ncomp)?;
            self.check_parallel_copy(src, scomp, c.len(), src_ng, dst_ng)?;
            return self.kernel_parallel_copy(src, scomp, src_ng, period, op, c, dst_ng);
        }
        // Checked after the ranks agree on the arguments, as in `fill_boundary_nowait`.
        let c = component_range(comps, self.ncomp);
        let comm = self.dm.communicator().clone();
        let mut fp = Fingerprint::new();
        fp.word(2)
            .with(|fp| self.hash_operand(fp))
            .with(|fp| src.hash_operand(fp))
            .word(scomp as u64)
            .comps(&c)
            .iv(src_ng)
            .iv(dst_ng)
            .iv(period.period())
            .word(u64::from(op == CopyOp::Add));
        agree(&comm, WHAT, &fp)?;
        let c = c?;
        self.check_parallel_copy(src, scomp, c.len(), src_ng, dst_ng)?;
        if *src.dm.communicator() != comm || self.rank != src.rank {
            return Err(FabArrayError::DifferentCommunicators { op: WHAT });
        }
        if c.is_empty() {
            return Ok(());
        }
        let plan = self.dm.parallel_copy_plan(
            &self.ba, dst_ng, &src.ba, &src.dm, src_ng, period, self.rank,
        );
        check_messages(WHAT, self, &plan)?;
        let t0 = profile::now();
        let (draws, sraws) = (self.raws_mut(), src.raws());
        // SAFETY: sent tags read local source fabs inside their grown boxes (src_ng <=
        // src.ngrow); `src` is borrowed shared, so nobody writes it.
        let (exchange, t1) = unsafe {
            post(
                &comm,
                WHAT,
                Tag::PARALLEL_COPY,
                &plan,
                (&sraws, &src.g2l, scomp),
                c.len(),
            )?
        };

        // Every destination's tags, local and received, in the single-process order.
        let (order, remote) = merged_order(&plan, &self.g2l, self.local_size(), c.len());
        // Destinations without received tags go while the messages are in flight, the
        // others (local and received tags merged) once the messages are here.
        // SAFETY: `self` is borrowed mutably and `src` shared, so they are different
        // FabArrays; tags lie in the grown boxes (checked widths).
        unsafe {
            apply_in_order(
                &plan,
                &order,
                &draws,
                (&sraws, &src.g2l, scomp),
                &[],
                (c.start, c.len()),
                op,
                |l| !remote[l],
            );
        }
        let t2 = profile::now();
        let got = exchange.wait().map_err(|e| comm_err(WHAT, e))?;
        let t3 = profile::now();
        let vals: Vec<Cow<'_, [T]>> = got.iter().map(|(_, b)| as_elements::<T>(b)).collect();
        // SAFETY: as above.
        unsafe {
            apply_in_order(
                &plan,
                &order,
                &draws,
                (&sraws, &src.g2l, scomp),
                &vals,
                (c.start, c.len()),
                op,
                |l| remote[l],
            );
        }
        profile::add(CALLS, 1);
        profile::add(PACK, t1 - t0);
        profile::add(LOCAL, t2 - t1);
        profile::add(WAIT, t3 - t2);
        profile::add(UNPACK, profile::now() - t3);
        profile::add(RECEIVED, got.iter().map(|(_, b)| b.len() as u64).sum());
        Ok(())
    }

    /// Adds the ghost cells of every box into the valid cells that own them (the cells
    /// of the same index in another box, or in a periodic image), all components, the
    /// full ghost width (AMReX's `SumBoundary(period)`), as particle deposition needs.
    /// Ghost cells keep their values. **Collective**.
    ///
    /// # Errors
    /// As [`sum_boundary_with`](Self::sum_boundary_with).
    pub fn sum_boundary(&mut self, period: Periodicity) -> Result<(), FabArrayError>
    where
        A: Clone,
    {
        let ng = self.ngrow;
        self.sum_boundary_with(period, .., ng)
    }

    /// `SumBoundary` of components `comps` from ghost width `ng`: each valid cell becomes
    /// the sum, in the single-process plan order, of every cell (valid or within `ng`
    /// ghost cells of any box, periodic images included) that has its index, so the
    /// result is the same bit for bit on any number of ranks. **Collective**.
    ///
    /// # Errors
    /// As [`parallel_copy_with`](Self::parallel_copy_with); an arena failure for the
    /// temporary copy.
    pub fn sum_boundary_with(
        &mut self,
        period: Periodicity,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabArrayError>
    where
        A: Clone,
    {
        let ng = ng.into();
        let c = component_range(comps, self.ncomp);
        let mut fp = Fingerprint::new();
        fp.word(3)
            .with(|fp| self.hash_operand(fp))
            .comps(&c)
            .iv(ng)
            .iv(period.period());
        let agreed = agree(self.dm.communicator(), "sum_boundary", &fp)?;
        let c = c?;
        check_ghost(ng, self.ngrow)?;
        let tmp = FabArray::<T, A>::try_new_on_rank_in(
            &self.ba,
            &self.dm,
            c.len(),
            ng,
            self.rank,
            self.arena.clone(),
        );
        // A rank whose allocation failed must not leave the others in parallel_copy.
        if let Some(rank) = agreed.first_failure(tmp.is_ok()) {
            return Err(match tmp {
                Err(e) => FabArrayError::from(e),
                Ok(_) => FabArrayError::RefusedOnOtherRank {
                    op: "sum_boundary",
                    rank: Some(rank),
                },
            });
        }
        let mut tmp = tmp.map_err(FabArrayError::from)?;
        tmp.copy_from(self, c.start, .., ng)?;
        self.set_val(T::ZERO, c.clone(), 0)?;
        self.parallel_copy_with(&tmp, 0, ng, period, CopyOp::Add, c, 0)
    }
}
