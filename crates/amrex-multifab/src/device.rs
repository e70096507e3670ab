//! FabArray operations that run where the memory lives: [`DeviceOps`], for FabArrays on
//! arenas with [`Kernels`] (CUDA device and managed memory, the runtime-chosen
//! [`AnyArena`](amrex_arena::AnyArena), the test stand-in).
//!
//! Each operation checks its arguments exactly as the host operation does, then turns
//! every local box (grown by the ghost width, restricted to the components) into a
//! [`Region`] of the fab's memory and calls the arena's kernel on it: one launch per box,
//! queued in order on the device's default stream. Reductions fold the per-box results in
//! local box order on the host. `fill_boundary` hands the arena every copy tag of the
//! cached plan in one batch (cell-centred data, whose ghost cells have one source each),
//! or tag by tag in the plan's order (nodal data, where the last source wins as on the
//! host).
//!
//! Element-wise results are bit-identical to the host operations (the kernels do not
//! contract multiply-adds); sums fold in another order than the host's.
//!
//! Device FabArrays run in one process for now: on a communicator of more than one rank
//! every operation returns [`FabError::Comm`].

use crate::element::Element;
use crate::fabarray::FabArray;
use crate::ops::operand_comps;
use crate::periodicity::Periodicity;
use crate::plan::FillPattern;
use alloc::vec::Vec;
use amrex_arena::kernels::{Binary, KernelElement, Kernels, Reduce, Region, Unary};
use amrex_arena::{ArenaError, HostArena};
use amrex_array4::rows::CopyOp;
use amrex_basefab::{BaseFab, FabError, component_range};
use amrex_box::{IndexBox, IntVect};
use core::ops::{Range, RangeBounds};
use core::ptr::NonNull;

/// An arena failure inside a device operation.
fn dev_err(e: ArenaError) -> FabError {
    FabError::Comm(alloc::format!("device operation failed: {e}"))
}

/// The [`Region`] of `fab`'s memory over `bx` (inside the fab's box) and components `c`.
fn region<T, A: amrex_arena::Arena>(
    fab: &BaseFab<'_, T, A>,
    ptr: *const T,
    bx: IndexBox,
    c: &Range<usize>,
) -> Region
where
    T: bytemuck::AnyBitPattern,
{
    let [sj, sk, sn] = fab.strides();
    let lo = fab.index_box().small_end();
    let len = if bx.ok() {
        [
            bx.length_dir(0) as usize,
            bx.length_dir(1) as usize,
            bx.length_dir(2) as usize,
            c.len(),
        ]
    } else {
        [0; 4]
    };
    let d = bx.small_end() - lo;
    let offset = if len.contains(&0) {
        0
    } else {
        // `bx` lies in the fab's box (checked ghost width), so every term is >= 0.
        d.x() as usize + d.y() as usize * sj + d.z() as usize * sk + c.start * sn
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

/// Operations of a FabArray whose memory its arena's [`Kernels`] reach, with the host
/// operations' names, arguments and checks (see [`FabArray::saxpy`] and the others).
///
/// Bring it into scope with `use amrex_multifab::DeviceOps;`. On host arenas the host
/// operations (inherent methods, run over tiles in parallel) are the ones called.
///
/// ```
/// use amrex_arena::cuda::CudaDeviceArena;
/// use amrex_multifab::{
///     BoxArray, DeviceOps, DistributionMapping, FabArray, IndexBox, IntVect, Periodicity,
/// };
///
/// let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(31));
/// let ba = BoxArray::from_domain(domain, 16);
/// let dm = DistributionMapping::new(&ba);
/// // Without the `cuda` feature, a driver or a device this is an error value.
/// match CudaDeviceArena::new(0) {
///     Ok(gpu) => {
///         let mut mf = FabArray::<f64, _>::try_new_in(&ba, &dm, 1, IntVect::splat(1), gpu)?;
///         mf.set_val(1.0, .., 0)?; // valid cells, on the device
///         assert_eq!(mf.min(.., 1)?, 0.0); // the ghost cells are still 0
///         mf.fill_boundary(Periodicity::all(domain))?; // ghost cells from the neighbours
///         assert_eq!(mf.min(.., 1)?, 1.0);
///         assert_eq!(mf.sum(.., 0)?, 32768.0);
///         let host = mf.to_host()?; // a MultiFab in host memory
///         assert_eq!(host.min(.., 1)?, 1.0);
///     }
///     Err(e) => println!("no CUDA device here: {e}"),
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait DeviceOps<T: Element> {
    /// `self[comps] = v` over ghost width `ng` (AMReX `setVal`).
    ///
    /// # Errors
    /// The host operation's errors; [`FabError::Comm`] for a failing device or more than
    /// one rank.
    fn set_val(
        &mut self,
        v: T,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabError>;

    /// `self[comps] += v`.
    ///
    /// # Errors
    /// As [`set_val`](Self::set_val).
    fn plus(
        &mut self,
        v: T,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabError>;

    /// `self[comps] *= v`.
    ///
    /// # Errors
    /// As [`set_val`](Self::set_val).
    fn mult(
        &mut self,
        v: T,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabError>;

    /// `self[comps] = src[scomp..]` (AMReX `Copy`).
    ///
    /// # Errors
    /// As [`set_val`](Self::set_val), and [`FabError::LayoutMismatch`].
    fn copy_from(
        &mut self,
        src: &Self,
        scomp: usize,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabError>;

    /// `self[comps] += src[scomp..]`.
    ///
    /// # Errors
    /// As [`copy_from`](Self::copy_from).
    fn add(
        &mut self,
        src: &Self,
        scomp: usize,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabError>;

    /// `self[comps] += a * src[scomp..]` (AMReX `Saxpy`).
    ///
    /// # Errors
    /// As [`copy_from`](Self::copy_from).
    fn saxpy(
        &mut self,
        a: T,
        src: &Self,
        scomp: usize,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabError>;

    /// `self[comps] = src[scomp..] + a * self[comps]` (AMReX `Xpay`).
    ///
    /// # Errors
    /// As [`copy_from`](Self::copy_from).
    fn xpay(
        &mut self,
        a: T,
        src: &Self,
        scomp: usize,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabError>;

    /// `Σ x` over `comps` and ghost width `ng`, in `f64`.
    ///
    /// # Errors
    /// As [`set_val`](Self::set_val).
    fn sum(&self, comps: impl RangeBounds<usize>, ng: impl Into<IntVect>) -> Result<f64, FabError>;

    /// `sqrt(Σ x²)`.
    ///
    /// # Errors
    /// As [`set_val`](Self::set_val).
    fn norm2(
        &self,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<f64, FabError>;

    /// `Σ |x|`.
    ///
    /// # Errors
    /// As [`set_val`](Self::set_val).
    fn norm1(
        &self,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<f64, FabError>;

    /// `max |x|`, `0` when there is no cell.
    ///
    /// # Errors
    /// As [`set_val`](Self::set_val).
    fn norm0(&self, comps: impl RangeBounds<usize>, ng: impl Into<IntVect>) -> Result<T, FabError>;

    /// Smallest value; the type's largest when there is no cell.
    ///
    /// # Errors
    /// As [`set_val`](Self::set_val).
    fn min(&self, comps: impl RangeBounds<usize>, ng: impl Into<IntVect>) -> Result<T, FabError>;

    /// Largest value; the type's lowest when there is no cell.
    ///
    /// # Errors
    /// As [`set_val`](Self::set_val).
    fn max(&self, comps: impl RangeBounds<usize>, ng: impl Into<IntVect>) -> Result<T, FabError>;

    /// `Σ self[comps] * y[ycomp..]`.
    ///
    /// # Errors
    /// As [`copy_from`](Self::copy_from).
    fn dot(
        &self,
        y: &Self,
        ycomp: usize,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<f64, FabError>;

    /// `FillBoundary` of every component over the full ghost width.
    ///
    /// # Errors
    /// As [`fill_boundary_with`](Self::fill_boundary_with).
    fn fill_boundary(&mut self, period: Periodicity) -> Result<(), FabError>;

    /// `FillBoundary` of `comps` over ghost width `ng` with `pattern`, from the same cached
    /// plan as the host's.
    ///
    /// # Errors
    /// As [`set_val`](Self::set_val).
    fn fill_boundary_with(
        &mut self,
        period: Periodicity,
        pattern: FillPattern,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabError>;

    /// `ParallelCopy` of every component between two FabArrays in memory of this arena,
    /// on any two BoxArrays (AMReX's `ParallelCopy(src, period)`).
    ///
    /// # Errors
    /// As [`parallel_copy_with`](Self::parallel_copy_with).
    fn parallel_copy(&mut self, src: &Self, period: Periodicity) -> Result<(), FabError>;

    /// `ParallelCopy` with components, ghost widths and copy-or-add, from the same cached
    /// plan as the host's; where several sources cover a destination cell they are
    /// applied in the host's order (the last copy wins; adds accumulate).
    ///
    /// # Errors
    /// The host operation's errors; [`FabError::Comm`] for a failing device or more than
    /// one rank.
    #[expect(
        clippy::too_many_arguments,
        reason = "the host operation's argument list"
    )]
    fn parallel_copy_with(
        &mut self,
        src: &Self,
        scomp: usize,
        src_ng: impl Into<IntVect>,
        period: Periodicity,
        op: CopyOp,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabError>;

    /// A host copy (same BoxArray, map, components and ghost width).
    ///
    /// # Errors
    /// [`FabError::Comm`] when a copy fails; allocation failures.
    fn to_host(&self) -> Result<FabArray<T, HostArena>, FabError>;

    /// Overwrites every element (ghost cells too) from a host FabArray of the same layout.
    ///
    /// # Errors
    /// [`FabError::LayoutMismatch`] (also for other component counts or ghost widths);
    /// [`FabError::Comm`] when a copy fails.
    fn copy_from_host(&mut self, src: &FabArray<T, HostArena>) -> Result<(), FabError>;
}

impl<T: Element + KernelElement, A: Kernels> FabArray<T, A> {
    fn single_process(&self) -> Result<(), FabError> {
        if self.communicator().size() > 1 {
            return Err(FabError::Comm(
                "device FabArrays run in one process for now (this one's communicator has \
                 more than one rank)"
                    .into(),
            ));
        }
        Ok(())
    }

    /// Checks, then applies `op` to every local box grown by `ng`.
    fn each_region_mut(
        &mut self,
        comps: impl RangeBounds<usize>,
        ng: IntVect,
        op: Unary<T>,
    ) -> Result<(), FabError> {
        let c = component_range(comps, self.ncomp())?;
        self.check_ghost_width(ng)?;
        self.single_process()?;
        if c.is_empty() {
            return Ok(());
        }
        let arena = self.arena().clone();
        for l in 0..self.local_size() {
            let bx = self.box_of(self.global_index(l)).grow_iv(ng);
            let fab = self.fab_mut(l);
            let p = fab.as_mut_ptr()?;
            let r = region(fab, p, bx, &c);
            // SAFETY: `r` lies in this fab's allocation (the box inside the grown box,
            // the components inside `ncomp`), and `&mut self` is exclusive.
            unsafe { arena.apply(r, op) }.map_err(dev_err)?;
        }
        Ok(())
    }

    /// Checks a second operand and runs `f(arena, dst, src)` box by box.
    fn each_pair_mut(
        &mut self,
        src: &Self,
        scomp: usize,
        comps: impl RangeBounds<usize>,
        ng: IntVect,
        op: Binary<T>,
    ) -> Result<(), FabError> {
        let c = component_range(comps, self.ncomp())?;
        self.check_other_device(src, scomp, c.len(), ng)?;
        let sc = scomp..scomp + c.len();
        let arena = self.arena().clone();
        for l in 0..self.local_size() {
            let bx = self.box_of(self.global_index(l)).grow_iv(ng);
            let s = src.fab(l);
            let sr = region(s, s.as_ptr(), bx, &sc);
            let d = self.fab_mut(l);
            let p = d.as_mut_ptr()?;
            let dr = region(d, p, bx, &c);
            // SAFETY: both regions lie in their fabs (same layout, checked components and
            // widths); `src` is another FabArray (borrowed shared while `self` is borrowed
            // mutably), so the destination overlaps no source.
            unsafe { arena.combine(dr, sr, op) }.map_err(dev_err)?;
        }
        Ok(())
    }

    fn check_other_device(
        &self,
        o: &Self,
        first: usize,
        n: usize,
        ng: IntVect,
    ) -> Result<(), FabError> {
        self.check_ghost_width(ng)?;
        if !self.same_layout(o) {
            return Err(FabError::LayoutMismatch);
        }
        operand_comps(first, n, o.ncomp())?;
        o.check_ghost_width(ng)?;
        self.single_process()
    }

    /// The `(destination, source)` regions of a single-process plan's tags, each
    /// destination's tags in the host's order (their positions in the plan): components
    /// `c` of `self`, `sc` of `src` (`self` itself when `None`, as for FillBoundary).
    fn tag_regions(
        &mut self,
        plan: &crate::plan::CopyPlan,
        src: Option<&Self>,
        c: &Range<usize>,
        sc: &Range<usize>,
    ) -> Result<Vec<(Region, Region)>, FabError> {
        let mut tags: Vec<(u32, &crate::plan::CopyTag)> = plan
            .local()
            .iter()
            .zip(plan.local_order())
            .map(|(t, &seq)| (seq, t))
            .collect();
        tags.sort_by_key(|&(seq, t)| (t.dst, seq));
        let mut pairs = Vec::with_capacity(tags.len());
        for (_, t) in tags {
            let sr = {
                let from = src.unwrap_or(self);
                let s = from.fab(from.g2l[t.src] as usize);
                region(s, s.as_ptr(), t.sbox(), sc)
            };
            let d = self.fab_mut(self.g2l[t.dst] as usize);
            let p = d.as_mut_ptr()?;
            pairs.push((region(d, p, t.dbox, c), sr));
        }
        Ok(pairs)
    }

    /// Reduces every local box grown by `ng` with `op`, folding from `init` in box order.
    fn reduce_boxes(
        &self,
        op: Reduce,
        init: f64,
        comps: impl RangeBounds<usize>,
        ng: IntVect,
    ) -> Result<f64, FabError> {
        let c = component_range(comps, self.ncomp())?;
        self.check_ghost_width(ng)?;
        self.single_process()?;
        let mut acc = init;
        if c.is_empty() {
            return Ok(acc);
        }
        for l in 0..self.local_size() {
            let bx = self.box_of(self.global_index(l)).grow_iv(ng);
            let fab = self.fab(l);
            let r = region(fab, fab.as_ptr(), bx, &c);
            // SAFETY: `r` lies in this fab's allocation (the box is inside the grown box,
            // the components inside `ncomp`); `&self` keeps writers away.
            let v = unsafe { self.arena().reduce::<T>(r, op) }.map_err(dev_err)?;
            acc = op.fold(acc, v);
        }
        Ok(acc)
    }
}

impl<T: Element + KernelElement, A: Kernels> DeviceOps<T> for FabArray<T, A> {
    fn set_val(
        &mut self,
        v: T,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabError> {
        self.each_region_mut(comps, ng.into(), Unary::Set(v))
    }

    fn plus(
        &mut self,
        v: T,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabError> {
        self.each_region_mut(comps, ng.into(), Unary::Add(v))
    }

    fn mult(
        &mut self,
        v: T,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabError> {
        self.each_region_mut(comps, ng.into(), Unary::Scale(v))
    }

    fn copy_from(
        &mut self,
        src: &Self,
        scomp: usize,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabError> {
        self.each_pair_mut(src, scomp, comps, ng.into(), Binary::<T>::Copy)
    }

    fn add(
        &mut self,
        src: &Self,
        scomp: usize,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabError> {
        self.each_pair_mut(src, scomp, comps, ng.into(), Binary::<T>::Add)
    }

    fn saxpy(
        &mut self,
        x: T,
        src: &Self,
        scomp: usize,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabError> {
        self.each_pair_mut(src, scomp, comps, ng.into(), Binary::Axpy(x))
    }

    fn xpay(
        &mut self,
        x: T,
        src: &Self,
        scomp: usize,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabError> {
        self.each_pair_mut(src, scomp, comps, ng.into(), Binary::Xpay(x))
    }

    fn sum(&self, comps: impl RangeBounds<usize>, ng: impl Into<IntVect>) -> Result<f64, FabError> {
        self.reduce_boxes(Reduce::Sum, 0.0, comps, ng.into())
    }

    fn norm2(
        &self,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<f64, FabError> {
        let s = self.reduce_boxes(Reduce::SumSquares, 0.0, comps, ng.into())?;
        Ok(crate::ops::sqrt(s))
    }

    fn norm1(
        &self,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<f64, FabError> {
        self.reduce_boxes(Reduce::SumAbs, 0.0, comps, ng.into())
    }

    fn norm0(&self, comps: impl RangeBounds<usize>, ng: impl Into<IntVect>) -> Result<T, FabError> {
        self.reduce_boxes(Reduce::MaxAbs, 0.0, comps, ng.into())
            .map(T::from_f64)
    }

    fn min(&self, comps: impl RangeBounds<usize>, ng: impl Into<IntVect>) -> Result<T, FabError> {
        let init = <T as Element>::HIGHEST.to_f64();
        self.reduce_boxes(Reduce::Min, init, comps, ng.into())
            .map(T::from_f64)
    }

    fn max(&self, comps: impl RangeBounds<usize>, ng: impl Into<IntVect>) -> Result<T, FabError> {
        let init = <T as Element>::LOWEST.to_f64();
        self.reduce_boxes(Reduce::Max, init, comps, ng.into())
            .map(T::from_f64)
    }

    fn dot(
        &self,
        y: &Self,
        ycomp: usize,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<f64, FabError> {
        let ng = ng.into();
        let c = component_range(comps, self.ncomp())?;
        self.check_other_device(y, ycomp, c.len(), ng)?;
        let yc = ycomp..ycomp + c.len();
        let mut acc = 0.0;
        for l in 0..self.local_size() {
            let bx = self.box_of(self.global_index(l)).grow_iv(ng);
            let (x, yf) = (self.fab(l), y.fab(l));
            let xr = region(x, x.as_ptr(), bx, &c);
            let yr = region(yf, yf.as_ptr(), bx, &yc);
            // SAFETY: both regions lie in their fabs (same layout, checked components and
            // widths); both are only read.
            acc += unsafe { self.arena().dot::<T>(xr, yr) }.map_err(dev_err)?;
        }
        Ok(acc)
    }

    fn fill_boundary(&mut self, period: Periodicity) -> Result<(), FabError> {
        let ng = self.n_grow();
        DeviceOps::fill_boundary_with(self, period, FillPattern::Full, .., ng)
    }

    fn fill_boundary_with(
        &mut self,
        period: Periodicity,
        pattern: FillPattern,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabError> {
        let ng = ng.into();
        let c = component_range(comps, self.ncomp())?;
        self.check_ghost_width(ng)?;
        self.single_process()?;
        if ng == IntVect::ZERO || c.is_empty() {
            return Ok(());
        }
        let plan =
            self.distribution_map()
                .fill_boundary_plan(self.box_array(), ng, period, pattern, 0);
        // Local tags of each destination in the single-process order (their positions).
        let pairs = self.tag_regions(&plan, None, &c, &c)?;
        // Cell-centred ghost cells have one source each: one concurrent batch. Nodal
        // boxes share faces, so tags go one after another in the host's order.
        let ordered = !self.box_array().ix_type().cell_centered();
        // SAFETY: every destination is ghost cells of a local fab (tags lie outside their
        // destination's valid box, inside the grown box since ng <= ngrow), every source
        // valid cells, which no tag writes; cell-centred destinations are disjoint.
        unsafe { self.arena().copy_regions::<T>(&pairs, ordered) }.map_err(dev_err)
    }

    fn parallel_copy(&mut self, src: &Self, period: Periodicity) -> Result<(), FabError> {
        DeviceOps::parallel_copy_with(self, src, 0, 0, period, CopyOp::Copy, .., 0)
    }

    fn parallel_copy_with(
        &mut self,
        src: &Self,
        scomp: usize,
        src_ng: impl Into<IntVect>,
        period: Periodicity,
        op: CopyOp,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabError> {
        let (src_ng, dst_ng) = (src_ng.into(), ng.into());
        let c = component_range(comps, self.ncomp())?;
        self.check_parallel_copy(src, scomp, c.len(), src_ng, dst_ng)?;
        self.single_process()?;
        src.single_process()?;
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
        // Every region lies in its fab (tags lie in the boxes grown by the checked widths);
        // `src` is another FabArray (shared borrow while `self` is borrowed mutably), so no
        // destination overlaps a source. Destinations may overlap each other, so the tags
        // go one after another, in the host's order.
        match op {
            // SAFETY: as said above.
            CopyOp::Copy => unsafe { arena.copy_regions::<T>(&pairs, true) },
            CopyOp::Add => pairs
                .iter()
                // SAFETY: as above, one tag at a time.
                .try_for_each(|&(d, s)| unsafe { arena.combine(d, s, Binary::<T>::Add) }),
        }
        .map_err(dev_err)
    }

    fn to_host(&self) -> Result<FabArray<T, HostArena>, FabError> {
        let mut out = FabArray::<T, HostArena>::try_new_on_rank_in(
            self.box_array(),
            self.distribution_map(),
            self.ncomp(),
            self.n_grow(),
            self.rank(),
            HostArena,
        )
        .map_err(dev_err)?;
        for l in 0..self.local_size() {
            let host = self.fab(l).to_host()?;
            let dst = out.fab_mut(l).as_mut_slice()?;
            dst.copy_from_slice(host.as_slice()?);
        }
        Ok(out)
    }

    fn copy_from_host(&mut self, src: &FabArray<T, HostArena>) -> Result<(), FabError> {
        if !self.same_layout(src) || src.ncomp() != self.ncomp() || src.n_grow() != self.n_grow() {
            return Err(FabError::LayoutMismatch);
        }
        for l in 0..self.local_size() {
            self.fab_mut(l).copy_from_host_fab(src.fab(l))?;
        }
        Ok(())
    }
}
