//! Arithmetic and reductions, parallel over tiles, vectorised along `i`.
//!
//! Every operation works on the tiles of AMReX's default tiling grown by the requested
//! ghost width (AMReX's `growntilebox(ng)`), one tile per task. Kernels see whole
//! `i`-rows as slices, so the inner loops are plain slice loops the compiler
//! vectorises. Reductions accumulate each tile in eight lanes and fold the tiles in a
//! fixed order, so their result does not depend on the number of threads.

use alloc::vec::Vec;

use amrex_arena::HostAccessible;
use amrex_box::{IndexBox, IntVect};

use crate::element::Element;
use crate::fabarray::{FabArray, RawFab};
use crate::par::{par_for, par_map};

// The one lane kernel of the workspace (BaseFab's reductions use it too).
use amrex_basefab::kernels::{LANES as L, combine_lanes, fold_lanes, fold_lanes2};

/// How far consecutive rows of a region can be merged into one contiguous run: 0 = rows
/// only, 1 = whole `k`-planes, 2 = the whole region per component.
fn merge_level<T>(bx: &IndexBox, raws: &[&RawFab<T>]) -> u8 {
    let len = bx.length();
    let mut level = 2;
    for r in raws {
        let (fl, fh) = (r.bx.lo(), r.bx.hi());
        let [jstride, kstride, _] = r.layout.strides();
        let full_x = fl[0] == bx.lo()[0] && fh[0] == bx.hi()[0] && jstride == len[0] as usize;
        let full_y =
            fl[1] == bx.lo()[1] && fh[1] == bx.hi()[1] && kstride == jstride * len[1] as usize;
        level = level.min(if full_x && full_y {
            2
        } else if full_x {
            1
        } else {
            0
        });
    }
    level
}

/// Calls `f(i0, j, k, n, len)` for each contiguous run of `bx` (component `n < nc`):
/// `i`-rows, or whole planes / the whole region when `merge` allows.
#[inline(always)]
fn for_runs(bx: &IndexBox, nc: usize, merge: u8, mut f: impl FnMut(i32, i32, i32, usize, usize)) {
    if !bx.ok() {
        return;
    }
    let (lo, hi) = (bx.lo(), bx.hi());
    let len = bx.length();
    let nx = len[0] as usize;
    for n in 0..nc {
        match merge {
            2 => f(
                lo[0],
                lo[1],
                lo[2],
                n,
                nx * len[1] as usize * len[2] as usize,
            ),
            1 => {
                for k in lo[2]..=hi[2] {
                    f(lo[0], lo[1], k, n, nx * len[1] as usize);
                }
            }
            _ => {
                for k in lo[2]..=hi[2] {
                    for j in lo[1]..=hi[1] {
                        f(lo[0], j, k, n, nx);
                    }
                }
            }
        }
    }
}

/// `√x`: the standard library's with `std` (libm's x86 version is inline assembly, which
/// Miri cannot run), libm's without.
fn sqrt(x: f64) -> f64 {
    #[cfg(feature = "std")]
    {
        x.sqrt()
    }
    #[cfg(not(feature = "std"))]
    {
        libm::sqrt(x)
    }
}

#[track_caller]
pub(crate) fn check_comps(what: &str, comp: usize, nc: usize, ncomp: usize) {
    assert!(
        comp.checked_add(nc).is_some_and(|e| e <= ncomp),
        "FabArray::{what}: components {comp}..{} exceed the {ncomp} components",
        comp.saturating_add(nc)
    );
}

impl<T: Element, A: HostAccessible> FabArray<T, A> {
    /// The work items of an operation over ghost width `ng`: `(local fab, region)`.
    #[track_caller]
    fn op_items(&self, what: &str, ng: IntVect) -> Vec<(usize, IndexBox)> {
        assert!(
            ng.all_ge(IntVect::ZERO) && ng.all_le(self.ngrow),
            "FabArray::{what}: ghost width {ng} exceeds the FabArray's {}",
            self.ngrow
        );
        // One task per slab of about `TARGET` cells (whole k-planes of the region), a
        // partition that does not depend on the number of threads.
        const TARGET: u64 = 32 * 1024;
        let mut v = Vec::new();
        if self.ncomp == 0 {
            // No element anywhere: nothing to do. (Without this, a huge box of a
            // component-less FabArray, which allocates nothing, would still make one
            // work item per k-plane.)
            return v;
        }
        for (l, &g) in self.local.iter().enumerate() {
            let region = self.ba.get(g).grow_iv(ng);
            if !region.ok() {
                continue;
            }
            let plane = region.length_dir(0) * region.length_dir(1);
            let nk = (TARGET / plane.max(1)).max(1) as i64;
            // Slabs `k ..= kh` in i64, so that a region ending at any i32 (even i32::MAX)
            // cannot make the walk wrap or loop forever.
            let (lo, hi) = (i64::from(region.lo()[2]), i64::from(region.hi()[2]));
            let mut k = lo;
            while k <= hi {
                let kh = (k + nk - 1).min(hi);
                // Both lie in lo..=hi, which are i32.
                let (k32, kh32) = (k as i32, kh as i32);
                let mut b = region;
                b = b.make_slab(2, k32).grow_hi(2, kh32 - k32);
                v.push((l, b));
                k = kh + 1;
            }
        }
        v
    }

    #[track_caller]
    fn check_other<B: HostAccessible>(
        &self,
        what: &str,
        o: &FabArray<T, B>,
        comp: usize,
        nc: usize,
        ng: IntVect,
    ) {
        assert!(
            self.same_layout(o),
            "FabArray::{what}: the FabArrays have different layouts"
        );
        check_comps(what, comp, nc, o.ncomp);
        assert!(
            ng.all_le(o.ngrow),
            "FabArray::{what}: ghost width {ng} exceeds the source's {}",
            o.ngrow
        );
    }

    /// Applies `f` to every row of components `comp..comp+nc` over ghost width `ng`.
    #[track_caller]
    fn apply1(
        &mut self,
        what: &str,
        comp: usize,
        nc: usize,
        ng: IntVect,
        f: impl Fn(&mut [T]) + Sync + Send,
    ) {
        check_comps(what, comp, nc, self.ncomp);
        let items = self.op_items(what, ng);
        let raws = self.raws_mut();
        par_for(items.len(), |it| {
            let (l, bx) = items[it];
            let r = raws[l];
            let merge = merge_level(&bx, &[&r]);
            for_runs(&bx, nc, merge, |i0, j, k, n, len| {
                // SAFETY: `&mut self`: exclusive access; items are disjoint regions of
                // the grown fab (grown tiles partition it), each visited by one task.
                f(unsafe { r.run_mut(i0, j, k, len, comp + n) });
            });
        });
    }

    /// Applies `f(dst_row, src_row)`; `src` has the same layout.
    #[expect(clippy::too_many_arguments, reason = "component ranges of two arrays")]
    #[track_caller]
    fn apply2<B: HostAccessible>(
        &mut self,
        what: &str,
        dcomp: usize,
        src: &FabArray<T, B>,
        scomp: usize,
        nc: usize,
        ng: IntVect,
        f: impl Fn(&mut [T], &[T]) + Sync + Send,
    ) {
        check_comps(what, dcomp, nc, self.ncomp);
        self.check_other(what, src, scomp, nc, ng);
        let items = self.op_items(what, ng);
        let (draws, sraws) = (self.raws_mut(), src.raws());
        par_for(items.len(), |it| {
            let (l, bx) = items[it];
            let (d, s) = (draws[l], sraws[l]);
            let merge = merge_level(&bx, &[&d, &s]);
            for_runs(&bx, nc, merge, |i0, j, k, n, len| {
                // SAFETY: dst rows as in `apply1`; `src` is a different FabArray (it is
                // borrowed shared while `self` is borrowed mutably), only read here.
                let dr = unsafe { d.run_mut(i0, j, k, len, dcomp + n) };
                // SAFETY: as above.
                let sr = unsafe { s.run(i0, j, k, len, scomp + n) };
                f(dr, sr);
            });
        });
    }

    /// Applies `f(dst_row, a_row, b_row)`.
    #[expect(
        clippy::too_many_arguments,
        reason = "component ranges of three arrays"
    )]
    #[track_caller]
    fn apply3<B: HostAccessible, C: HostAccessible>(
        &mut self,
        what: &str,
        dcomp: usize,
        a: &FabArray<T, B>,
        acomp: usize,
        b: &FabArray<T, C>,
        bcomp: usize,
        nc: usize,
        ng: IntVect,
        f: impl Fn(&mut [T], &[T], &[T]) + Sync + Send,
    ) {
        check_comps(what, dcomp, nc, self.ncomp);
        self.check_other(what, a, acomp, nc, ng);
        self.check_other(what, b, bcomp, nc, ng);
        let items = self.op_items(what, ng);
        let (draws, araws, braws) = (self.raws_mut(), a.raws(), b.raws());
        par_for(items.len(), |it| {
            let (l, bx) = items[it];
            let (d, ra, rb) = (draws[l], araws[l], braws[l]);
            let merge = merge_level(&bx, &[&d, &ra, &rb]);
            for_runs(&bx, nc, merge, |i0, j, k, n, len| {
                // SAFETY: as in `apply2`; `a` and `b` are only read.
                let dr = unsafe { d.run_mut(i0, j, k, len, dcomp + n) };
                // SAFETY: as above.
                let x = unsafe { ra.run(i0, j, k, len, acomp + n) };
                // SAFETY: as above.
                let y = unsafe { rb.run(i0, j, k, len, bcomp + n) };
                f(dr, x, y);
            });
        });
    }

    /// Reduces rows of components `comp..comp+nc` over ghost width `ng`: each task folds
    /// its rows into `L` lanes with `f`, then lanes and tasks are folded in order.
    #[expect(
        clippy::too_many_arguments,
        reason = "a reduction needs identity, fold and combine"
    )]
    #[track_caller]
    fn reduce<R: Copy + Send + Sync>(
        &self,
        what: &str,
        comp: usize,
        nc: usize,
        ng: IntVect,
        id: R,
        f: impl Fn(R, T) -> R + Sync + Send,
        combine: impl Fn(R, R) -> R + Sync + Send,
    ) -> R {
        check_comps(what, comp, nc, self.ncomp);
        let items = self.op_items(what, ng);
        let raws = self.raws();
        let parts = par_map(items.len(), |it| {
            let (l, bx) = items[it];
            let r: RawFab<T> = raws[l];
            let merge = merge_level(&bx, &[&r]);
            let mut acc = [id; L];
            for_runs(&bx, nc, merge, |i0, j, k, n, len| {
                // SAFETY: `&self`: nobody writes during the reduction.
                fold_lanes(unsafe { r.run(i0, j, k, len, comp + n) }, &mut acc, &f);
            });
            combine_lanes(acc, id, &combine)
        });
        parts.into_iter().fold(id, combine)
    }

    // ----- in-place scalar operations -------------------------------------------------

    /// Sets every element (all components, ghost cells included) to `v`.
    pub fn set_val(&mut self, v: T) {
        self.set_val_range(v, 0, self.ncomp, self.ngrow);
    }

    /// Sets components `comp..comp+nc` to `v` over the valid boxes grown by `ng`.
    ///
    /// # Panics
    /// If the components or `ng` exceed the FabArray's.
    #[track_caller]
    pub fn set_val_range(&mut self, v: T, comp: usize, nc: usize, ng: IntVect) {
        self.apply1("set_val", comp, nc, ng, |r| r.fill(v));
    }

    /// `x += v` on components `comp..comp+nc` grown by `ng`.
    #[track_caller]
    pub fn plus(&mut self, v: T, comp: usize, nc: usize, ng: IntVect) {
        self.apply1("plus", comp, nc, ng, |r| {
            r.iter_mut().for_each(|x| *x = *x + v)
        });
    }

    /// `x *= v` on components `comp..comp+nc` grown by `ng`.
    #[track_caller]
    pub fn mult(&mut self, v: T, comp: usize, nc: usize, ng: IntVect) {
        self.apply1("mult", comp, nc, ng, |r| {
            r.iter_mut().for_each(|x| *x = *x * v)
        });
    }

    /// `x = numerator / x` on components `comp..comp+nc` grown by `ng`.
    #[track_caller]
    pub fn invert(&mut self, numerator: T, comp: usize, nc: usize, ng: IntVect) {
        self.apply1("invert", comp, nc, ng, |r| {
            r.iter_mut().for_each(|x| *x = numerator / *x)
        });
    }

    /// `x = -x` on components `comp..comp+nc` grown by `ng`.
    #[track_caller]
    pub fn negate(&mut self, comp: usize, nc: usize, ng: IntVect) {
        self.apply1("negate", comp, nc, ng, |r| {
            r.iter_mut().for_each(|x| *x = -*x)
        });
    }

    /// `x = |x|` on components `comp..comp+nc` grown by `ng`.
    #[track_caller]
    pub fn abs(&mut self, comp: usize, nc: usize, ng: IntVect) {
        self.apply1("abs", comp, nc, ng, |r| {
            r.iter_mut().for_each(|x| *x = x.abs())
        });
    }

    // ----- operations with other FabArrays (same BoxArray and mapping) ----------------

    /// `self[dcomp..] += src[scomp..]` for `nc` components over ghost width `ng`
    /// (AMReX's `MultiFab::Add(dst, src, srccomp, dstcomp, numcomp, nghost)`).
    #[track_caller]
    pub fn add<B: HostAccessible>(
        &mut self,
        src: &FabArray<T, B>,
        scomp: usize,
        dcomp: usize,
        nc: usize,
        ng: IntVect,
    ) {
        self.apply2("add", dcomp, src, scomp, nc, ng, |d, s| {
            d.iter_mut().zip(s).for_each(|(d, &s)| *d = *d + s)
        });
    }

    /// `self[dcomp..] -= src[scomp..]`.
    #[track_caller]
    pub fn subtract<B: HostAccessible>(
        &mut self,
        src: &FabArray<T, B>,
        scomp: usize,
        dcomp: usize,
        nc: usize,
        ng: IntVect,
    ) {
        self.apply2("subtract", dcomp, src, scomp, nc, ng, |d, s| {
            d.iter_mut().zip(s).for_each(|(d, &s)| *d = *d - s)
        });
    }

    /// `self[dcomp..] *= src[scomp..]`.
    #[track_caller]
    pub fn multiply<B: HostAccessible>(
        &mut self,
        src: &FabArray<T, B>,
        scomp: usize,
        dcomp: usize,
        nc: usize,
        ng: IntVect,
    ) {
        self.apply2("multiply", dcomp, src, scomp, nc, ng, |d, s| {
            d.iter_mut().zip(s).for_each(|(d, &s)| *d = *d * s)
        });
    }

    /// `self[dcomp..] /= src[scomp..]`.
    #[track_caller]
    pub fn divide<B: HostAccessible>(
        &mut self,
        src: &FabArray<T, B>,
        scomp: usize,
        dcomp: usize,
        nc: usize,
        ng: IntVect,
    ) {
        self.apply2("divide", dcomp, src, scomp, nc, ng, |d, s| {
            d.iter_mut().zip(s).for_each(|(d, &s)| *d = *d / s)
        });
    }

    /// `self[dcomp..] = src[scomp..]` (AMReX's `MultiFab::Copy`).
    #[track_caller]
    pub fn copy_from<B: HostAccessible>(
        &mut self,
        src: &FabArray<T, B>,
        scomp: usize,
        dcomp: usize,
        nc: usize,
        ng: IntVect,
    ) {
        self.apply2("copy", dcomp, src, scomp, nc, ng, <[T]>::copy_from_slice);
    }

    /// `self += a * x` (AMReX's `MultiFab::Saxpy`).
    #[track_caller]
    pub fn saxpy<B: HostAccessible>(
        &mut self,
        a: T,
        x: &FabArray<T, B>,
        xcomp: usize,
        dcomp: usize,
        nc: usize,
        ng: IntVect,
    ) {
        self.apply2("saxpy", dcomp, x, xcomp, nc, ng, |d, s| {
            d.iter_mut().zip(s).for_each(|(d, &s)| *d = *d + a * s)
        });
    }

    /// `self = x + a * self` (AMReX's `MultiFab::Xpay`).
    #[track_caller]
    pub fn xpay<B: HostAccessible>(
        &mut self,
        a: T,
        x: &FabArray<T, B>,
        xcomp: usize,
        dcomp: usize,
        nc: usize,
        ng: IntVect,
    ) {
        self.apply2("xpay", dcomp, x, xcomp, nc, ng, |d, s| {
            d.iter_mut().zip(s).for_each(|(d, &s)| *d = s + a * *d)
        });
    }

    /// `self = a * x + b * y` (AMReX's `MultiFab::LinComb`).
    #[expect(clippy::too_many_arguments, reason = "AMReX's argument list")]
    #[track_caller]
    pub fn lin_comb<B: HostAccessible, C: HostAccessible>(
        &mut self,
        a: T,
        x: &FabArray<T, B>,
        xcomp: usize,
        b: T,
        y: &FabArray<T, C>,
        ycomp: usize,
        dcomp: usize,
        nc: usize,
        ng: IntVect,
    ) {
        self.apply3("lin_comb", dcomp, x, xcomp, y, ycomp, nc, ng, |d, x, y| {
            for ((d, &x), &y) in d.iter_mut().zip(x).zip(y) {
                *d = a * x + b * y;
            }
        });
    }

    /// `self += s1 * s2` (AMReX's `MultiFab::AddProduct`).
    #[expect(clippy::too_many_arguments, reason = "AMReX's argument list")]
    #[track_caller]
    pub fn add_product<B: HostAccessible, C: HostAccessible>(
        &mut self,
        s1: &FabArray<T, B>,
        comp1: usize,
        s2: &FabArray<T, C>,
        comp2: usize,
        dcomp: usize,
        nc: usize,
        ng: IntVect,
    ) {
        self.apply3(
            "add_product",
            dcomp,
            s1,
            comp1,
            s2,
            comp2,
            nc,
            ng,
            |d, x, y| {
                for ((d, &x), &y) in d.iter_mut().zip(x).zip(y) {
                    *d = *d + x * y;
                }
            },
        );
    }

    /// Exchanges `self[dcomp..]` and `other[scomp..]` (AMReX's `MultiFab::Swap`).
    #[track_caller]
    pub fn swap<B: HostAccessible>(
        &mut self,
        other: &mut FabArray<T, B>,
        scomp: usize,
        dcomp: usize,
        nc: usize,
        ng: IntVect,
    ) {
        check_comps("swap", dcomp, nc, self.ncomp);
        self.check_other("swap", other, scomp, nc, ng);
        let items = self.op_items("swap", ng);
        let (draws, sraws) = (self.raws_mut(), other.raws_mut());
        par_for(items.len(), |it| {
            let (l, bx) = items[it];
            let (d, s) = (draws[l], sraws[l]);
            let merge = merge_level(&bx, &[&d, &s]);
            for_runs(&bx, nc, merge, |i0, j, k, n, len| {
                // SAFETY: both FabArrays are borrowed mutably (so they are different),
                // and each task owns its disjoint region of both.
                let dr = unsafe { d.run_mut(i0, j, k, len, dcomp + n) };
                // SAFETY: as above.
                let sr = unsafe { s.run_mut(i0, j, k, len, scomp + n) };
                dr.swap_with_slice(sr);
            });
        });
    }

    // ----- reductions -----------------------------------------------------------------

    /// Smallest value of components `comp..comp+nc` over ghost width `ng`
    /// ([`Element::HIGHEST`] when there is no cell).
    #[track_caller]
    #[must_use]
    pub fn min(&self, comp: usize, nc: usize, ng: IntVect) -> T {
        self.reduce("min", comp, nc, ng, T::HIGHEST, T::min_of, T::min_of)
    }

    /// Largest value ([`Element::LOWEST`] when there is no cell).
    #[track_caller]
    #[must_use]
    pub fn max(&self, comp: usize, nc: usize, ng: IntVect) -> T {
        self.reduce("max", comp, nc, ng, T::LOWEST, T::max_of, T::max_of)
    }

    /// Sum of components `comp..comp+nc` over ghost width `ng`.
    #[track_caller]
    #[must_use]
    pub fn sum(&self, comp: usize, nc: usize, ng: IntVect) -> T::Acc {
        self.reduce(
            "sum",
            comp,
            nc,
            ng,
            T::Acc::default(),
            |a, x| a + x.to_acc(),
            |a, b| a + b,
        )
    }

    /// Largest `|x|` (AMReX's `norm0`).
    #[track_caller]
    #[must_use]
    pub fn norm0(&self, comp: usize, nc: usize, ng: IntVect) -> T {
        self.reduce(
            "norm0",
            comp,
            nc,
            ng,
            T::ZERO,
            |a, x| a.max_of(x.abs()),
            T::max_of,
        )
    }

    /// Sum of `|x|` (AMReX's `norm1`).
    #[track_caller]
    #[must_use]
    pub fn norm1(&self, comp: usize, nc: usize, ng: IntVect) -> T::Acc {
        self.reduce(
            "norm1",
            comp,
            nc,
            ng,
            T::Acc::default(),
            |a, x| a + x.abs().to_acc(),
            |a, b| a + b,
        )
    }

    /// `sqrt(Σ x²)` (AMReX's `norm2`).
    #[track_caller]
    #[must_use]
    pub fn norm2(&self, comp: usize, nc: usize, ng: IntVect) -> f64 {
        let s = self.reduce(
            "norm2",
            comp,
            nc,
            ng,
            T::Acc::default(),
            |a, x| a + (x * x).to_acc(),
            |a, b| a + b,
        );
        sqrt(T::acc_to_f64(s))
    }

    /// `Σ self[comp..] * y[ycomp..]` over `nc` components and ghost width `ng`
    /// (AMReX's `MultiFab::Dot`).
    #[track_caller]
    #[must_use]
    pub fn dot<B: HostAccessible>(
        &self,
        comp: usize,
        y: &FabArray<T, B>,
        ycomp: usize,
        nc: usize,
        ng: IntVect,
    ) -> T::Acc {
        check_comps("dot", comp, nc, self.ncomp);
        self.check_other("dot", y, ycomp, nc, ng);
        let items = self.op_items("dot", ng);
        let (xr, yr) = (self.raws(), y.raws());
        let zero = T::Acc::default();
        let parts = par_map(items.len(), |it| {
            let (l, bx) = items[it];
            let (a, b) = (xr[l], yr[l]);
            let merge = merge_level(&bx, &[&a, &b]);
            let mut acc = [zero; L];
            for_runs(&bx, nc, merge, |i0, j, k, n, len| {
                // SAFETY: both only read; `&self` and `&y` keep writers away.
                let ra = unsafe { a.run(i0, j, k, len, comp + n) };
                // SAFETY: as above.
                let rb = unsafe { b.run(i0, j, k, len, ycomp + n) };
                fold_lanes2(ra, rb, &mut acc, |s, x, y| s + (x * y).to_acc());
            });
            combine_lanes(acc, zero, |a, b| a + b)
        });
        parts.into_iter().fold(zero, |a, b| a + b)
    }
}
