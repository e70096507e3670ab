//! The kernel path of the FabArray operations: for FabArrays whose arena's
//! [`Kernels`] do the work ([`Kernels::host_loops`] is `false`: CUDA device and managed
//! memory, HIP and Level Zero memory (whose kernels refuse), the runtime-chosen
//! [`AnyArena`](amrex_arena::AnyArena) on those, the test stand-in). The public
//! operations (`set_val`, `saxpy`, `fill_boundary`, ...) check their arguments as on the
//! host, then call these.
//!
//! Every local box (grown by the ghost width, restricted to the components) becomes a
//! [`Region`] of the fab's memory, and the arena's kernel runs on it: one launch per box,
//! queued in order on the device's default stream. Reductions fold the per-box results
//! in local box order on the host. `fill_boundary` hands the arena every copy tag of the
//! cached plan in one batch (cell-centred data, whose ghost cells have one source each),
//! or tag by tag in the plan's order (nodal data, where the last source wins as on the
//! host).
//!
//! The CUDA kernels are compiled without fused multiply-adds so that element-wise
//! results can round as the host loops do; that has not been measured on a GPU yet.
//! Sums fold in another order than the host's. These FabArrays run in one process for
//! now: on a communicator of more than one rank every operation returns
//! [`FabArrayError::DeviceNeedsOneProcess`].

use crate::element::Element;
use crate::error::FabArrayError;
use crate::error::component_range;
use crate::fabarray::FabArray;
use crate::mfiter::Tiling;
use crate::plan::{CopyPlan, CopyTag, FillPattern};
use alloc::vec::Vec;
use amrex_arena::kernels::{Binary, CopyOrder, Kernels, MemorySpace, Reduce, Region, Unary};
use amrex_arena::{Arena, HostArena};
use amrex_array4::rows::CopyOp;
use amrex_basefab::BaseFab;
use amrex_box::{IndexBox, IntVect};
use amrex_geometry::Periodicity;
use core::ops::{Range, RangeBounds};
use core::ptr::NonNull;

/// The [`Region`] of `fab`'s memory over `bx` (inside the fab's box) and components `c`.
fn region<T, A: Arena>(
    fab: &BaseFab<'_, T, A>,
    ptr: *const T,
    bx: IndexBox,
    c: &Range<usize>,
) -> Region
where
    T: bytemuck::AnyBitPattern,
{
    let layout = fab.layout();
    let [sj, sk, sn] = layout.strides();
    // `bx` lies in the fab's box (checked ghost width): its lengths are at most the fab's,
    // which fit usize (FabLayout invariant 2).
    let size = |v: u64| usize::try_from(v).expect("a length of a box in a fab");
    let len = if bx.ok() {
        [
            size(bx.length_dir(0)),
            size(bx.length_dir(1)),
            size(bx.length_dir(2)),
            c.len(),
        ]
    } else {
        [0; 4]
    };
    let offset = if len.contains(&0) {
        0
    } else {
        // Not empty: `bx`'s low corner is a cell of the fab and `c.start` one of its
        // components (`c` was resolved against them), so the layout has its offset.
        let lo = bx.small_end();
        layout
            .offset(lo.x(), lo.y(), lo.z(), c.start)
            .expect("a region's corner inside its fab")
    };
    // Pointer arithmetic only (a device address is never dereferenced here); the kernels'
    // callers prove the region lies in the allocation.
    let p = ptr.wrapping_add(offset).cast_mut().cast::<u8>();
    Region {
        ptr: NonNull::new(p).unwrap_or(NonNull::dangling()),
        len,
        stride: [sj, sk, sn],
    }
}

impl<T: Element, A: Kernels> FabArray<T, A> {
    /// `Ok` on a single-process communicator.
    fn single_process(&self, op: &'static str) -> Result<(), FabArrayError> {
        let ranks = self.communicator().size();
        if ranks > 1 {
            return Err(FabArrayError::DeviceNeedsOneProcess { op, ranks });
        }
        Ok(())
    }

    /// `Ok` when `other`'s memory is in this arena's memory space
    /// ([`Kernels::memory_space`]: the same arena type, device and kind), so this arena's
    /// kernels reach it. The device and kind alone would not do: the test stand-in
    /// reports a CUDA device, and its kernels dereference what they are given.
    fn same_memory<B: Kernels>(
        &self,
        op: &'static str,
        other: &FabArray<T, B>,
    ) -> Result<(), FabArrayError> {
        self.spaces_match(op, &[other.arena().memory_space()])
    }

    /// `Ok` when every one of `others` is this arena's memory space, else
    /// [`FabArrayError::DifferentMemory`] naming the first that is not.
    fn spaces_match(&self, op: &'static str, others: &[MemorySpace]) -> Result<(), FabArrayError> {
        let mine = self.arena().memory_space();
        match others.iter().find(|&&o| o != mine) {
            None => Ok(()),
            Some(o) => Err(FabArrayError::DifferentMemory {
                op,
                dst: mine.device(),
                src: o.device(),
            }),
        }
    }

    /// The refusal of an operation that has no kernel.
    pub(crate) fn no_kernel(&self, op: &'static str) -> FabArrayError {
        FabArrayError::NoKernel {
            op,
            device: self.arena().device(),
        }
    }

    /// The refusal of a kernel-less operation whose other operands live in `others`:
    /// that the memories differ, where they do (a kernel would not help then), else
    /// [`no_kernel`](Self::no_kernel).
    pub(crate) fn no_kernel_with(&self, op: &'static str, others: &[MemorySpace]) -> FabArrayError {
        match self.spaces_match(op, others) {
            Err(e) => e,
            Ok(()) => self.no_kernel(op),
        }
    }

    /// Applies `op` to components `comps` of every local box grown by `ng` (both
    /// checked).
    pub(crate) fn kernel_unary(
        &mut self,
        what: &'static str,
        comps: impl RangeBounds<usize>,
        ng: IntVect,
        op: Unary<T>,
    ) -> Result<(), FabArrayError> {
        let c = component_range(comps, self.ncomp())?;
        self.check_ghost_width(ng)?;
        self.single_process(what)?;
        if c.is_empty() {
            return Ok(());
        }
        let arena = self.arena().clone();
        for mfi in self.mfiter(Tiling::None) {
            let bx = mfi.validbox().grow_iv(ng);
            let fab = self.fab_mut(&mfi);
            let p = fab.as_mut_ptr()?;
            let r = region(fab, p, bx, &c);
            // SAFETY: `r` lies in this fab's allocation (the box inside the grown box,
            // the components inside `ncomp`), and `&mut self` is exclusive.
            unsafe { T::kernel_apply(&arena, r, op) }.map_err(FabArrayError::from)?;
        }
        Ok(())
    }

    /// Checks a second operand (layout, components `first..first + n`, ghost width,
    /// memory, one process).
    fn check_kernel_operand<B: Kernels>(
        &self,
        what: &'static str,
        o: &FabArray<T, B>,
        first: usize,
        n: usize,
        ng: IntVect,
    ) -> Result<(), FabArrayError> {
        self.check_ghost_width(ng)?;
        if !self.same_layout(o) {
            return Err(FabArrayError::LayoutMismatch);
        }
        crate::ops::operand_comps(first, n, o.ncomp())?;
        o.check_ghost_width(ng)?;
        self.same_memory(what, o)?;
        self.single_process(what)
    }

    /// Applies `op` to components `comps` of every local box grown by `ng` and
    /// components `scomp..` of `src` (all checked).
    pub(crate) fn kernel_binary<B: Kernels>(
        &mut self,
        what: &'static str,
        src: &FabArray<T, B>,
        scomp: usize,
        comps: impl RangeBounds<usize>,
        ng: IntVect,
        op: Binary<T>,
    ) -> Result<(), FabArrayError> {
        let c = component_range(comps, self.ncomp())?;
        self.check_kernel_operand(what, src, scomp, c.len(), ng)?;
        let sc = scomp..scomp + c.len();
        let arena = self.arena().clone();
        for mfi in self.mfiter(Tiling::None) {
            let bx = mfi.validbox().grow_iv(ng);
            let s = src.fab(&mfi);
            let sr = region(s, s.as_ptr(), bx, &sc);
            let d = self.fab_mut(&mfi);
            let p = d.as_mut_ptr()?;
            let dr = region(d, p, bx, &c);
            // SAFETY: both regions lie in their fabs (same layout, checked components and
            // widths), in this arena's memory space (`same_memory`), which its kernels
            // reach; `src` is another FabArray (borrowed shared while
            // `self` is borrowed mutably), so the destination overlaps no source.
            unsafe { T::kernel_combine(&arena, dr, sr, op) }.map_err(FabArrayError::from)?;
        }
        Ok(())
    }

    /// Reduces components `comps` of every local box grown by `ng` (both checked) with
    /// `op`, folding from `init` in box order.
    pub(crate) fn kernel_reduce(
        &self,
        what: &'static str,
        op: Reduce,
        init: f64,
        comps: impl RangeBounds<usize>,
        ng: IntVect,
    ) -> Result<f64, FabArrayError> {
        let c = component_range(comps, self.ncomp())?;
        self.check_ghost_width(ng)?;
        self.single_process(what)?;
        let mut acc = init;
        if c.is_empty() {
            return Ok(acc);
        }
        for mfi in self.mfiter(Tiling::None) {
            let bx = mfi.validbox().grow_iv(ng);
            let fab = self.fab(&mfi);
            let r = region(fab, fab.as_ptr(), bx, &c);
            // SAFETY: `r` lies in this fab's allocation (the box is inside the grown box,
            // the components inside `ncomp`); `&self` keeps writers away.
            let v =
                unsafe { T::kernel_reduce(self.arena(), r, op) }.map_err(FabArrayError::from)?;
            acc = op.fold(acc, v);
        }
        Ok(acc)
    }

    /// `Σ self[comps] * y[ycomp..]` over every local box grown by `ng` (all checked),
    /// in `f64`.
    pub(crate) fn kernel_dot<B: Kernels>(
        &self,
        y: &FabArray<T, B>,
        ycomp: usize,
        comps: impl RangeBounds<usize>,
        ng: IntVect,
    ) -> Result<f64, FabArrayError> {
        let c = component_range(comps, self.ncomp())?;
        self.check_kernel_operand("dot", y, ycomp, c.len(), ng)?;
        let yc = ycomp..ycomp + c.len();
        let mut acc = 0.0;
        for mfi in self.mfiter(Tiling::None) {
            let bx = mfi.validbox().grow_iv(ng);
            let (x, yf) = (self.fab(&mfi), y.fab(&mfi));
            let xr = region(x, x.as_ptr(), bx, &c);
            let yr = region(yf, yf.as_ptr(), bx, &yc);
            // SAFETY: both regions lie in their fabs (same layout, checked components and
            // widths), in memory this arena's kernels reach (`same_memory`); both are
            // only read.
            acc += unsafe { T::kernel_dot(self.arena(), xr, yr) }.map_err(FabArrayError::from)?;
        }
        Ok(acc)
    }

    /// The `(destination, source)` regions of a single-process plan's tags, each
    /// destination's tags in the host's order (their positions in the plan): components
    /// `c` of `self`, `sc` of `src` (`self` itself when `None`, as for FillBoundary).
    fn tag_regions<B: Kernels>(
        &mut self,
        plan: &CopyPlan,
        src: Option<&FabArray<T, B>>,
        c: &Range<usize>,
        sc: &Range<usize>,
    ) -> Result<Vec<(Region, Region)>, FabArrayError> {
        let mut tags: Vec<(u32, &CopyTag)> = plan
            .local()
            .iter()
            .zip(plan.local_order())
            .map(|(t, &seq)| (seq, t))
            .collect();
        tags.sort_by_key(|&(seq, t)| (t.dst, seq));
        let mut pairs = Vec::with_capacity(tags.len());
        for (_, t) in tags {
            let sr = match src {
                Some(from) => {
                    let s = from.fab(from.g2l[t.src] as usize);
                    region(s, s.as_ptr(), t.sbox(), sc)
                }
                None => {
                    let s = self.fab(self.g2l[t.src] as usize);
                    region(s, s.as_ptr(), t.sbox(), sc)
                }
            };
            let d = self.fab_mut(self.g2l[t.dst] as usize);
            let p = d.as_mut_ptr()?;
            pairs.push((region(d, p, t.dbox, c), sr));
        }
        Ok(pairs)
    }

    /// FillBoundary of components `c` over ghost width `ng` (both checked) by the
    /// arena's kernels.
    pub(crate) fn kernel_fill_boundary(
        &mut self,
        period: Periodicity,
        pattern: FillPattern,
        c: Range<usize>,
        ng: IntVect,
    ) -> Result<(), FabArrayError> {
        self.single_process("fill_boundary")?;
        if ng == IntVect::ZERO || c.is_empty() {
            return Ok(());
        }
        let plan =
            self.distribution_map()
                .fill_boundary_plan(self.box_array(), ng, period, pattern, 0);
        // Local tags of each destination in the single-process order (their positions).
        let pairs = self.tag_regions::<A>(&plan, None, &c, &c)?;
        // Cell-centred ghost cells have one source each: one concurrent batch. Nodal
        // boxes share faces, so tags go one after another in the host's order.
        let order = if self.box_array().ix_type().cell_centered() {
            CopyOrder::Concurrent
        } else {
            CopyOrder::InOrder
        };
        // SAFETY: every destination is ghost cells of a local fab (tags lie outside their
        // destination's valid box, inside the grown box since ng <= ngrow), every source
        // valid cells, which no tag writes; cell-centred destinations are disjoint.
        unsafe { T::kernel_copy_regions(self.arena(), &pairs, order) }.map_err(FabArrayError::from)
    }

    /// ParallelCopy (arguments checked) by the arena's kernels.
    #[expect(
        clippy::too_many_arguments,
        reason = "ParallelCopy's argument list, as the host form"
    )]
    pub(crate) fn kernel_parallel_copy<B: Kernels>(
        &mut self,
        src: &FabArray<T, B>,
        scomp: usize,
        src_ng: IntVect,
        period: Periodicity,
        op: CopyOp,
        c: Range<usize>,
        dst_ng: IntVect,
    ) -> Result<(), FabArrayError> {
        self.same_memory("parallel_copy", src)?;
        self.single_process("parallel_copy")?;
        let ranks = src.communicator().size();
        if ranks > 1 {
            return Err(FabArrayError::DeviceNeedsOneProcess {
                op: "parallel_copy",
                ranks,
            });
        }
        if c.is_empty() {
            return Ok(());
        }
        let plan = self.distribution_map().parallel_copy_plan(
            self.box_array(),
            dst_ng,
            src.box_array(),
            src.distribution_map(),
            src_ng,
            period,
            0,
        );
        let pairs = self.tag_regions(&plan, Some(src), &c, &(scomp..scomp + c.len()))?;
        let arena = self.arena().clone();
        // Every region lies in its fab (tags lie in the boxes grown by the checked widths),
        // in memory this arena's kernels reach (`same_memory`); `src` is another FabArray
        // (shared borrow while `self` is borrowed mutably), so no destination overlaps a
        // source. Destinations may overlap each other, so the tags go one after another,
        // in the host's order.
        match op {
            // SAFETY: as said above.
            CopyOp::Copy => unsafe { T::kernel_copy_regions(&arena, &pairs, CopyOrder::InOrder) },
            CopyOp::Add => pairs
                .iter()
                // SAFETY: as above, one tag at a time.
                .try_for_each(|&(d, s)| unsafe { T::kernel_combine(&arena, d, s, Binary::Add) }),
        }
        .map_err(FabArrayError::from)
    }
}

impl<T: Element, A: Arena> FabArray<T, A> {
    /// A copy of this FabArray in host memory (the same layout, components and ghost
    /// width), from any arena.
    ///
    /// # Errors
    /// An arena failure of the copy or of the allocation.
    pub fn to_host(&self) -> Result<FabArray<T, HostArena>, FabArrayError> {
        let mut out = FabArray::<T, HostArena>::try_new_on_rank_in(
            self.box_array(),
            self.distribution_map(),
            self.ncomp(),
            self.n_grow(),
            self.rank(),
            HostArena,
        )
        .map_err(FabArrayError::from)?;
        for l in 0..self.local_size() {
            let host = self.fab(l).to_host()?;
            let dst = out.fab_mut(l).as_mut_slice()?;
            dst.copy_from_slice(host.as_slice()?);
        }
        Ok(out)
    }

    /// Overwrites every element (ghost cells too) from a host FabArray of the same
    /// layout, components and ghost width.
    ///
    /// # Errors
    /// [`FabArrayError::LayoutMismatch`] (also for other component counts or ghost widths);
    /// an arena failure of a copy.
    pub fn copy_from_host(&mut self, src: &FabArray<T, HostArena>) -> Result<(), FabArrayError> {
        if !self.same_layout(src) || src.ncomp() != self.ncomp() || src.n_grow() != self.n_grow() {
            return Err(FabArrayError::LayoutMismatch);
        }
        for l in 0..self.local_size() {
            self.fab_mut(l).copy_from_host_fab(src.fab(l))?;
        }
        Ok(())
    }
}
