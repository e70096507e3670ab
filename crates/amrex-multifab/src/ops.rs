//! Arithmetic and reductions, parallel over tiles, vectorised along `i`.
//!
//! Arguments follow the order BaseFab's operations use: the scalars, then each other
//! FabArray followed by its first component, then the component range of `self`
//! (`..` for all), then the ghost width last (`0` for the valid cells; an `i32` is the
//! same width in every direction). Every operation returns `Result<_, FabArrayError>` and
//! checks components, ghost widths and layouts before it touches an element, so an
//! error leaves every FabArray unchanged.
//!
//! Every operation works on the tiles of AMReX's default tiling grown by the requested
//! ghost width (AMReX's `growntilebox(ng)`), one tile per task. Kernels see whole
//! `i`-rows as slices, so the inner loops are plain slice loops the compiler
//! vectorises. Reductions accumulate each tile in eight lanes and fold the tiles in a
//! fixed order, so their result does not depend on the number of threads.

use crate::error::FabArrayError;
use alloc::vec::Vec;
use core::convert::Infallible;
use core::ops::{Bound, Range, RangeBounds};

use crate::error::component_range;
use amrex_arena::kernels::{Binary, Kernels, MemorySpace, Reduce, Unary};
use amrex_box::{IndexBox, IntVect};

use crate::element::Element;
use crate::fabarray::{FabArray, HashArgs as _, RawFab};
use amrex_runtime::threads::{par_for, par_map};

// The one lane kernel of the workspace (BaseFab's reductions use it too).
use amrex_array4::simd;
use amrex_basefab::kernels::{LANES as L, combine_lanes, fold_lanes, fold_lanes2};

/// How far consecutive rows of a region can be merged into one contiguous run: 0 = rows
/// only, 1 = whole `k`-planes, 2 = the whole region per component.
fn merge_level<T>(bx: &IndexBox, raws: &[&RawFab<T>]) -> u8 {
    let len = bx.length();
    let mut level = 2;
    for r in raws {
        let (fl, fh) = (r.bx.lo(), r.bx.hi());
        let [jstride, kstride, _] = r.layout.strides();
        // A negative length (an empty box) matches no stride, as before.
        let full_x =
            fl[0] == bx.lo()[0] && fh[0] == bx.hi()[0] && usize::try_from(len[0]) == Ok(jstride);
        let full_y = fl[1] == bx.lo()[1]
            && fh[1] == bx.hi()[1]
            && usize::try_from(len[1]).is_ok_and(|l| kstride == jstride * l);
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

/// The loop of every reduction over one FabArray, for [`simd::widest`]: folds the runs
/// of components `comps` of `bx` in `r` into `acc` with [`fold_lanes`].
///
/// Invariant (promised to [`Fold::new`]): `bx` lies in the fab's box, `comps` are
/// components of it, and nobody writes them while the value lives.
struct Fold<'a, T, R, F> {
    r: &'a RawFab<T>,
    bx: &'a IndexBox,
    comps: &'a Range<usize>,
    merge: u8,
    acc: &'a mut [R; L],
    f: &'a F,
}

impl<'a, T, R, F> Fold<'a, T, R, F> {
    /// The fold of `comps` of `bx` in `r` into `acc`.
    ///
    /// # Safety
    /// `bx` lies in `r`'s box, `comps` are components of `r`, and nobody writes those
    /// cells while the value lives.
    unsafe fn new(
        r: &'a RawFab<T>,
        (bx, comps, merge): (&'a IndexBox, &'a Range<usize>, u8),
        acc: &'a mut [R; L],
        f: &'a F,
    ) -> Self {
        Self {
            r,
            bx,
            comps,
            merge,
            acc,
            f,
        }
    }
}

impl<T: Copy, R: Copy, F: Fn(R, T) -> R> simd::Kernel for Fold<'_, T, R, F> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let c = self.comps;
        for (i0, j, k, n, len) in Runs::new(self.bx, c.len(), self.merge) {
            // SAFETY: a run of `bx` in a component of `comps` (invariant), not written.
            let row = unsafe { self.r.run(i0, j, k, len, c.start + n) };
            fold_lanes(row, self.acc, self.f);
        }
    }
}

/// [`Fold`] over two FabArrays' fabs: components `comps.0` of `r.0` with as many from
/// `comps.1` of `r.1`, folded with [`fold_lanes2`] (dot products).
///
/// Invariant (promised to [`Fold2::new`]): as [`Fold`]'s, for both fabs and both
/// component ranges.
struct Fold2<'a, T, R, F> {
    r: (&'a RawFab<T>, &'a RawFab<T>),
    bx: &'a IndexBox,
    comps: (&'a Range<usize>, usize),
    merge: u8,
    acc: &'a mut [R; L],
    f: &'a F,
}

impl<'a, T, R, F> Fold2<'a, T, R, F> {
    /// The fold of `comps.0` of `bx` in `r.0` with as many components from `comps.1` of
    /// `r.1` into `acc`.
    ///
    /// # Safety
    /// As [`Fold::new`], for both fabs and both component ranges.
    unsafe fn new(
        r: (&'a RawFab<T>, &'a RawFab<T>),
        (bx, comps, merge): (&'a IndexBox, (&'a Range<usize>, usize), u8),
        acc: &'a mut [R; L],
        f: &'a F,
    ) -> Self {
        Self {
            r,
            bx,
            comps,
            merge,
            acc,
            f,
        }
    }
}

impl<T: Copy, R: Copy, F: Fn(R, T, T) -> R> simd::Kernel for Fold2<'_, T, R, F> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let (c, bfirst) = self.comps;
        for (i0, j, k, n, len) in Runs::new(self.bx, c.len(), self.merge) {
            // SAFETY: a run of `bx` in component `c.start + n` of `r.0` (invariant).
            let ra = unsafe { self.r.0.run(i0, j, k, len, c.start + n) };
            // SAFETY: as above, component `bfirst + n` of `r.1`.
            let rb = unsafe { self.r.1.run(i0, j, k, len, bfirst + n) };
            fold_lanes2(ra, rb, self.acc, self.f);
        }
    }
}

/// Calls `f(i0, j, k, n, len)` for each contiguous run of `bx` (component `n < nc`):
/// `i`-rows, or whole planes / the whole region when `merge` allows.
#[inline(always)]
fn for_runs(bx: &IndexBox, nc: usize, merge: u8, mut f: impl FnMut(i32, i32, i32, usize, usize)) {
    for (i0, j, k, n, len) in Runs::new(bx, nc, merge) {
        f(i0, j, k, n, len);
    }
}

/// The contiguous runs of a region as `(i0, j, k, n, len)`, in the order of
/// [`for_runs`]: `i`-rows, or whole planes / the whole region when `merge` allows,
/// component by component. (An iterator, not a closure, so that loops over it inline
/// into each copy [`simd::widest`] makes.)
struct Runs {
    lo: IntVect,
    /// Runs per plane, planes per component, components.
    counts: (usize, usize, usize),
    run: usize,
    /// The next run's `(dj, dk, n)`.
    at: (usize, usize, usize),
}

impl Runs {
    #[inline(always)]
    fn new(bx: &IndexBox, nc: usize, merge: u8) -> Self {
        let mut runs = Self {
            lo: bx.lo(),
            counts: (0, 0, 0),
            run: 0,
            at: (0, 0, 0),
        };
        // An empty box has no runs (and lengths that are not sizes).
        if bx.ok() {
            let len = bx.length();
            #[expect(
                clippy::cast_sign_loss,
                reason = "bx is ok, so every length is at least 1"
            )]
            let (nx, ny, nz) = (len[0] as usize, len[1] as usize, len[2] as usize);
            let (nj, nk, run) = match merge {
                2 => (1, 1, nx * ny * nz),
                1 => (1, nz, nx * ny),
                _ => (ny, nz, nx),
            };
            (runs.counts, runs.run) = ((nj, nk, nc), run);
        }
        runs
    }
}

impl Iterator for Runs {
    type Item = (i32, i32, i32, usize, usize);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let (nj, nk, nc) = self.counts;
        let (dj, dk, n) = self.at;
        if n >= nc || nj == 0 || nk == 0 {
            return None;
        }
        self.at = if dj + 1 < nj {
            (dj + 1, dk, n)
        } else if dk + 1 < nk {
            (0, dk + 1, n)
        } else {
            (0, 0, n + 1)
        };
        // `lo + d` lies in the box (d < its length), so it fits an i32.
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_possible_wrap,
            reason = "dj < ny and dk < nz, lengths of the box as i32 (`IndexBox::length`)"
        )]
        let (dj, dk) = (dj as i32, dk as i32);
        Some((self.lo[0], self.lo[1] + dj, self.lo[2] + dk, n, self.run))
    }
}

/// `√x`: the standard library's with `std` (libm's x86 version is inline assembly, which
/// Miri cannot run), libm's without.
pub(crate) fn sqrt(x: f64) -> f64 {
    #[cfg(feature = "std")]
    {
        x.sqrt()
    }
    #[cfg(not(feature = "std"))]
    {
        libm::sqrt(x)
    }
}

/// Which reduction: part of what the ranks check they agree on, and the description of
/// each reduction's kernel.
#[derive(Clone, Copy)]
enum Kind {
    Min,
    Max,
    Sum,
    Norm0,
    Norm1,
    Norm2,
    Dot,
}

impl Kind {
    /// The operation's name, in errors.
    fn name(self) -> &'static str {
        match self {
            Self::Min => "min",
            Self::Max => "max",
            Self::Sum => "sum",
            Self::Norm0 => "norm0",
            Self::Norm1 => "norm1",
            Self::Norm2 => "norm2",
            Self::Dot => "dot",
        }
    }

    /// The arena's reduction for it and the `f64` it folds from; `None` for
    /// [`Kind::Dot`], whose kernel is [`Kernels::dot`] (see [`FabArray::dot`]).
    fn kernel<T: Element>(self) -> Option<(Reduce, f64)> {
        Some(match self {
            Self::Min => (Reduce::Min, T::acc_to_f64(T::HIGHEST.to_acc())),
            Self::Max => (Reduce::Max, T::acc_to_f64(T::LOWEST.to_acc())),
            Self::Sum => (Reduce::Sum, 0.0),
            Self::Norm0 => (Reduce::MaxAbs, 0.0),
            Self::Norm1 => (Reduce::SumAbs, 0.0),
            Self::Norm2 => (Reduce::SumSquares, 0.0),
            Self::Dot => return None,
        })
    }
}

/// An element-wise operation on one FabArray, `x = op(x)`, described once: its name (in
/// errors), its arena kernel ([`Op1::kernel`]) and its host loop ([`FabArray::run1`]).
#[derive(Clone, Copy)]
enum Op1<T> {
    /// `x = v` (`set_val`).
    Set(T),
    /// `x += v` (`plus`).
    Plus(T),
    /// `x *= v` (`mult`).
    Mult(T),
    /// `x = numerator / x` (`invert`).
    Invert(T),
    /// `x = -x` (`negate`).
    Negate,
    /// `x = |x|` (`abs`).
    Abs,
}

impl<T: Copy> Op1<T> {
    /// Its name, in errors.
    fn name(self) -> &'static str {
        match self {
            Self::Set(_) => "set_val",
            Self::Plus(_) => "plus",
            Self::Mult(_) => "mult",
            Self::Invert(_) => "invert",
            Self::Negate => "negate",
            Self::Abs => "abs",
        }
    }

    /// The arena's kernel for it, `None` where the arenas have none.
    fn kernel(self) -> Option<Unary<T>> {
        match self {
            Self::Set(v) => Some(Unary::Set(v)),
            Self::Plus(v) => Some(Unary::Add(v)),
            Self::Mult(v) => Some(Unary::Scale(v)),
            Self::Invert(_) | Self::Negate | Self::Abs => None,
        }
    }
}

/// An element-wise operation of a FabArray with another, `dst = op(dst, src)`,
/// described once: its name, its arena kernel ([`Op2::kernel`]) and its host loop
/// ([`FabArray::run2`]).
#[derive(Clone, Copy)]
enum Op2<T> {
    /// `dst += src` (`add`).
    Add,
    /// `dst -= src` (`subtract`).
    Subtract,
    /// `dst *= src` (`multiply`).
    Multiply,
    /// `dst /= src` (`divide`).
    Divide,
    /// `dst = src` (`copy_from`).
    Copy,
    /// `dst += a * src` (`saxpy`).
    Saxpy(T),
    /// `dst = src + a * dst` (`xpay`).
    Xpay(T),
}

impl<T: Copy> Op2<T> {
    /// Its name, in errors.
    fn name(self) -> &'static str {
        match self {
            Self::Add => "add",
            Self::Subtract => "subtract",
            Self::Multiply => "multiply",
            Self::Divide => "divide",
            Self::Copy => "copy_from",
            Self::Saxpy(_) => "saxpy",
            Self::Xpay(_) => "xpay",
        }
    }

    /// The arena's kernel for it, `None` where the arenas have none.
    fn kernel(self) -> Option<Binary<T>> {
        match self {
            Self::Add => Some(Binary::Add),
            Self::Copy => Some(Binary::Copy),
            Self::Saxpy(a) => Some(Binary::Axpy(a)),
            Self::Xpay(a) => Some(Binary::Xpay(a)),
            Self::Subtract | Self::Multiply | Self::Divide => None,
        }
    }
}

/// An element-wise operation of a FabArray with two others, `dst = op(dst, x, y)`,
/// described once: its name and its host loop ([`FabArray::run3`]). The arenas have no
/// kernels of three operands.
#[derive(Clone, Copy)]
enum Op3<T> {
    /// `dst = a * x + b * y` (`lin_comb`).
    LinComb(T, T),
    /// `dst += x * y` (`add_product`).
    AddProduct,
}

impl<T: Copy> Op3<T> {
    /// Its name, in errors.
    fn name(self) -> &'static str {
        match self {
            Self::LinComb(..) => "lin_comb",
            Self::AddProduct => "add_product",
        }
    }
}

/// Where [`FabArray::route`] sends an operation.
enum Path<K> {
    /// The tiled, threaded host loops of this file.
    Host,
    /// The arena's kernel `K` ([`crate::device`]).
    Kernel(K),
}

/// An operand besides `self`, as [`FabArray::route`] sees it (in any arena).
trait Operand {
    /// Whether the host loops do the work on its memory ([`Kernels::host_loops`]).
    fn host_loops(&self) -> bool;
    /// Its memory space (asked only to word a refusal).
    fn memory_space(&self) -> MemorySpace;
}

impl<T: Element, B: Kernels> Operand for FabArray<T, B> {
    fn host_loops(&self) -> bool {
        self.arena.host_loops()
    }

    fn memory_space(&self) -> MemorySpace {
        self.arena.memory_space()
    }
}

/// A component range as the operations pass it on: any [`RangeBounds`] as one type, so
/// that each operation's host loop is compiled once, not once per range type of the
/// callers.
type Comps = (Bound<usize>, Bound<usize>);

/// `r` as [`Comps`] (the same bounds, so the same components and the same refusals).
fn bounds(r: impl RangeBounds<usize>) -> Comps {
    (r.start_bound().cloned(), r.end_bound().cloned())
}

/// The reduction, its components (as resolved, or as asked for when refused), the other
/// operand's first component and the ghost width, hashed.
fn reduction_key(
    kind: Kind,
    c: &Result<Range<usize>, FabArrayError>,
    other: usize,
    ng: IntVect,
) -> u64 {
    let mut fp = amrex_runtime::Fingerprint::new();
    fp.word(kind as u64).comps(c).word(other as u64).iv(ng);
    fp.value()
}

/// A reduction's work items and their partial results.
type Parts<R> = (Vec<(usize, IndexBox)>, Vec<R>);

/// How a FabArray's reductions combine partial results over boxes and ranks.
///
/// Within a box, rows fold into eight lanes per slab of about 32 Ki cells, and the slabs
/// fold in order: a partition that depends on the box alone, not on threads or ranks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Reduction {
    /// Every box's value folds in global box order on every rank: the result is bit for
    /// bit the same for any number of ranks and threads. One all-gather of one value
    /// per box.
    #[default]
    Reproducible,
    /// Each rank folds its own boxes, then the ranks' values fold in rank order: the same
    /// result for a given number of ranks (any number of threads). One all-gather of one
    /// value per rank.
    Fast,
}

/// Checks a ghost width against a FabArray's: `0 <= ng <= ngrow` in every direction.
pub(crate) fn check_ghost(ng: IntVect, ngrow: IntVect) -> Result<(), FabArrayError> {
    if ng.all_ge(IntVect::ZERO) && ng.all_le(ngrow) {
        Ok(())
    } else {
        Err(FabArrayError::GhostOutside { ng, ngrow })
    }
}

/// The components `first..first + n` of a second operand with `ncomp` components.
pub(crate) fn operand_comps(
    first: usize,
    n: usize,
    ncomp: usize,
) -> Result<Range<usize>, FabArrayError> {
    component_range(first..first.saturating_add(n), ncomp)
}

impl<T: Element, A: amrex_arena::Arena> FabArray<T, A> {
    /// Checks a ghost width against this FabArray's, as every operation does.
    ///
    /// # Errors
    /// [`FabArrayError::GhostOutside`] unless `0 <= ng <= n_grow()` in every direction.
    pub fn check_ghost_width(&self, ng: IntVect) -> Result<(), FabArrayError> {
        check_ghost(ng, self.ngrow)
    }
}

impl<T: Element, A: Kernels> FabArray<T, A> {
    /// The work items of an operation over ghost width `ng`: `(local fab, region)`.
    fn op_items(&self, ng: IntVect) -> Result<Vec<(usize, IndexBox)>, FabArrayError> {
        check_ghost(ng, self.ngrow)?;
        // One task per slab of about `TARGET` cells (whole k-planes of the region), a
        // partition that does not depend on the number of threads.
        const TARGET: u64 = 32 * 1024;
        let mut v = Vec::new();
        if self.ncomp == 0 {
            // No element anywhere: nothing to do. (Without this, a huge box of a
            // component-less FabArray, which allocates nothing, would still make one
            // work item per k-plane.)
            return Ok(v);
        }
        for (l, &g) in self.local.iter().enumerate() {
            let region = self.ba.get(g).grow_iv(ng);
            if !region.ok() {
                continue;
            }
            let plane = region.length_dir(0) * region.length_dir(1);
            // At most TARGET, so the same in i64.
            let nk = (TARGET / plane.max(1)).max(1).cast_signed();
            // Slabs `k ..= kh` in i64, so that a region ending at any i32 (even i32::MAX)
            // cannot make the walk wrap or loop forever.
            let (lo, hi) = (i64::from(region.lo()[2]), i64::from(region.hi()[2]));
            let mut k = lo;
            while k <= hi {
                let kh = (k + nk - 1).min(hi);
                #[expect(
                    clippy::cast_possible_truncation,
                    reason = "both lie in lo..=hi, which are i32"
                )]
                let (k32, kh32) = (k as i32, kh as i32);
                let mut b = region;
                b = b.make_slab(2, k32).grow_hi(2, kh32 - k32);
                v.push((l, b));
                k = kh + 1;
            }
        }
        Ok(v)
    }

    /// Checks a second operand: same layout, components `first..first + n`, ghost width.
    fn check_other<B: Kernels>(
        &self,
        o: &FabArray<T, B>,
        first: usize,
        n: usize,
        ng: IntVect,
    ) -> Result<(), FabArrayError> {
        if !self.same_layout(o) {
            return Err(FabArrayError::LayoutMismatch);
        }
        operand_comps(first, n, o.ncomp)?;
        check_ghost(ng, o.ngrow)
    }

    /// Applies `f` to every row of components `comps` over ghost width `ng`.
    fn apply1(
        &mut self,
        comps: impl RangeBounds<usize>,
        ng: IntVect,
        f: impl Fn(&mut [T]) + Sync + Send,
    ) -> Result<(), FabArrayError> {
        let c = component_range(comps, self.ncomp)?;
        let items = self.op_items(ng)?;
        let raws = self.raws_mut();
        par_for(items.len(), |it| {
            let (l, bx) = items[it];
            let r = raws[l];
            let merge = merge_level(&bx, &[&r]);
            for_runs(&bx, c.len(), merge, |i0, j, k, n, len| {
                // SAFETY: `&mut self`: exclusive access; items are disjoint regions of
                // the grown fab (grown tiles partition it), each visited by one task.
                f(unsafe { r.run_mut(i0, j, k, len, c.start + n) });
            });
        });
        Ok(())
    }

    /// Applies `f(dst_row, src_row)`; `src` has the same layout.
    fn apply2<B: Kernels>(
        &mut self,
        src: &FabArray<T, B>,
        scomp: usize,
        comps: impl RangeBounds<usize>,
        ng: IntVect,
        f: impl Fn(&mut [T], &[T]) + Sync + Send,
    ) -> Result<(), FabArrayError> {
        let c = component_range(comps, self.ncomp)?;
        self.check_other(src, scomp, c.len(), ng)?;
        let items = self.op_items(ng)?;
        let (draws, sraws) = (self.raws_mut(), src.raws());
        par_for(items.len(), |it| {
            let (l, bx) = items[it];
            let (d, s) = (draws[l], sraws[l]);
            let merge = merge_level(&bx, &[&d, &s]);
            for_runs(&bx, c.len(), merge, |i0, j, k, n, len| {
                // SAFETY: dst rows as in `apply1`; `src` is a different FabArray (it is
                // borrowed shared while `self` is borrowed mutably), only read here.
                let dr = unsafe { d.run_mut(i0, j, k, len, c.start + n) };
                // SAFETY: as above.
                let sr = unsafe { s.run(i0, j, k, len, scomp + n) };
                f(dr, sr);
            });
        });
        Ok(())
    }

    /// Applies `f(dst_row, a_row, b_row)`.
    #[expect(
        clippy::too_many_arguments,
        reason = "two operands with their first components, the range, the width, the kernel"
    )]
    fn apply3<B: Kernels, C: Kernels>(
        &mut self,
        a: &FabArray<T, B>,
        acomp: usize,
        b: &FabArray<T, C>,
        bcomp: usize,
        comps: impl RangeBounds<usize>,
        ng: IntVect,
        f: impl Fn(&mut [T], &[T], &[T]) + Sync + Send,
    ) -> Result<(), FabArrayError> {
        let c = component_range(comps, self.ncomp)?;
        self.check_other(a, acomp, c.len(), ng)?;
        self.check_other(b, bcomp, c.len(), ng)?;
        let items = self.op_items(ng)?;
        let (draws, araws, braws) = (self.raws_mut(), a.raws(), b.raws());
        par_for(items.len(), |it| {
            let (l, bx) = items[it];
            let (d, ra, rb) = (draws[l], araws[l], braws[l]);
            let merge = merge_level(&bx, &[&d, &ra, &rb]);
            for_runs(&bx, c.len(), merge, |i0, j, k, n, len| {
                // SAFETY: as in `apply2`; `a` and `b` are only read.
                let dr = unsafe { d.run_mut(i0, j, k, len, c.start + n) };
                // SAFETY: as above.
                let x = unsafe { ra.run(i0, j, k, len, acomp + n) };
                // SAFETY: as above.
                let y = unsafe { rb.run(i0, j, k, len, bcomp + n) };
                f(dr, x, y);
            });
        });
        Ok(())
    }

    /// Reduces rows of components `comps` over ghost width `ng`: each task folds its
    /// rows into `L` lanes with `f`, then [`combine_boxes`](Self::combine_boxes) folds
    /// the tasks.
    fn reduce<R: bytemuck::Pod + Send + Sync>(
        &self,
        kind: Kind,
        comps: impl RangeBounds<usize>,
        ng: IntVect,
        id: R,
        f: impl Fn(R, T) -> R + Sync + Send,
        combine: impl Fn(R, R) -> R + Sync + Send,
    ) -> Result<R, FabArrayError> {
        let c = component_range(comps, self.ncomp);
        let key = reduction_key(kind, &c, 0, ng);
        let local = (|| {
            let c = c?;
            let items = self.op_items(ng)?;
            let raws = self.raws();
            let parts = par_map(items.len(), |it| {
                let (l, bx) = items[it];
                let r: RawFab<T> = raws[l];
                let merge = merge_level(&bx, &[&r]);
                let mut acc = [id; L];
                // SAFETY: `&self`, so nobody writes during the reduction; `bx` is a region
                // of fab `l` and `c` its components (`op_items`, `component_range`).
                let fold = unsafe { Fold::new(&r, (&bx, &c, merge), &mut acc, &f) };
                simd::widest(fold);
                combine_lanes(acc, id, &combine)
            });
            Ok((items, parts))
        })();
        self.combine_boxes(key, local, id, combine)
    }

    /// The one combine step of every reduction: the parts of each box (its slabs, in
    /// order) fold into one value per box; then, over every rank, the boxes fold in
    /// global box order ([`Reduction::Reproducible`]) or the ranks' sums in rank order
    /// ([`Reduction::Fast`]). **Collective**.
    fn combine_boxes<R: bytemuck::Pod + Send + Sync>(
        &self,
        key: u64,
        local: Result<Parts<R>, FabArrayError>,
        id: R,
        combine: impl Fn(R, R) -> R,
    ) -> Result<R, FabArrayError> {
        // A rank whose arguments were refused still takes part in the gather (with no
        // values), so that every rank learns of it and none waits.
        let per_box = local.as_ref().ok().map(|(items, parts)| {
            let mut per_box = alloc::vec![id; self.local_size()];
            for (&(l, _), &p) in items.iter().zip(parts) {
                per_box[l] = combine(per_box[l], p);
            }
            per_box
        });
        let comm = self.dm.communicator();
        if comm.is_single() {
            let per_box = match (per_box, local) {
                (Some(v), _) => v,
                (None, Err(e)) => return Err(e),
                (None, Ok(_)) => unreachable!("per-box values exist when the parts do"),
            };
            // Local indices run in increasing global order.
            return Ok(match self.reduction {
                Reduction::Reproducible => per_box.into_iter().fold(id, &combine),
                Reduction::Fast => combine(id, per_box.into_iter().fold(id, &combine)),
            });
        }
        // The ranks agree on the reduction first (layout, mode, arguments); then every
        // rank sends whether it accepted the arguments, with its values, so every rank
        // reaches the same verdict.
        let mine: Vec<R> = match (self.reduction, per_box) {
            (_, None) => Vec::new(),
            (Reduction::Reproducible, Some(v)) => v,
            (Reduction::Fast, Some(v)) => alloc::vec![v.into_iter().fold(id, &combine)],
        };
        let mut fp = amrex_runtime::Fingerprint::new();
        fp.str("reduction")
            .word(self.layout_fingerprint())
            .word(self.reduction as u64)
            .word(key);
        let agreed = crate::comm::agree(comm, "reduction", &fp)?;
        let accepted = u64::from(local.is_ok());
        let mut payload = Vec::with_capacity(8 + mine.len() * core::mem::size_of::<R>());
        payload.extend_from_slice(&accepted.to_le_bytes());
        payload.extend_from_slice(bytemuck::cast_slice(&mine));
        let all = agreed
            .all_gather_bytes(&payload)
            .map_err(|e| crate::message::comm_err("reduction", e))?;
        let refused = all
            .iter()
            .position(|b| b.get(..8) != Some(&1_u64.to_le_bytes()[..]));
        if let Some(rank) = refused {
            return Err(match local {
                Err(e) => e,
                Ok(_) => FabArrayError::RefusedOnOtherRank {
                    op: "reduction",
                    rank: Some(rank),
                },
            });
        }
        let values = |b: &[u8]| -> Vec<R> {
            b[8..]
                .chunks_exact(core::mem::size_of::<R>())
                .map(bytemuck::pod_read_unaligned)
                .collect()
        };
        match self.reduction {
            Reduction::Reproducible => {
                // One pass over the map: each box's value is the next one of its rank's.
                let mut parts: Vec<Vec<R>> = all.iter().map(|b| values(b)).collect();
                for p in &mut parts {
                    p.reverse();
                }
                let mut global = Vec::with_capacity(self.ba.len());
                for &r in self.dm.pmap() {
                    let Some(x) = parts.get_mut(r as usize).and_then(Vec::pop) else {
                        return Err(FabArrayError::MalformedContribution {
                            op: "reduction",
                            rank: r as usize,
                        });
                    };
                    global.push(x);
                }
                if let Some(rank) = parts.iter().position(|p| !p.is_empty()) {
                    return Err(FabArrayError::MalformedContribution {
                        op: "reduction",
                        rank,
                    });
                }
                Ok(global.into_iter().fold(id, &combine))
            }
            Reduction::Fast => Ok(all.iter().flat_map(|b| values(b)).fold(id, &combine)),
        }
    }

    /// How reductions combine over boxes and ranks (default
    /// [`Reduction::Reproducible`]).
    pub fn set_reduction(&mut self, mode: Reduction) {
        self.reduction = mode;
    }

    /// The reduction mode.
    #[must_use]
    pub fn reduction(&self) -> Reduction {
        self.reduction
    }

    // ----- the kernel dispatch --------------------------------------------------------

    /// The one kernel dispatch of the operations of this file: [`Path::Host`] where this
    /// FabArray's arena and every one of `others` run host loops
    /// ([`Kernels::host_loops`]), else `op`'s arena `kernel`. Where `op` has none, it is
    /// refused before any argument is checked: [`FabArrayError::DifferentMemory`] where
    /// an operand's memory is not this arena's (a kernel would not help then), else
    /// [`FabArrayError::NoKernel`].
    fn route<K>(
        &self,
        op: &'static str,
        kernel: Option<K>,
        others: &[&dyn Operand],
    ) -> Result<Path<K>, FabArrayError> {
        if self.arena.host_loops() && others.iter().all(|o| o.host_loops()) {
            return Ok(Path::Host);
        }
        kernel.map(Path::Kernel).ok_or_else(|| {
            let spaces: Vec<MemorySpace> = others.iter().map(|o| o.memory_space()).collect();
            self.no_kernel_with(op, &spaces)
        })
    }

    /// Runs `op` on components `comps` over ghost width `ng` where
    /// [`route`](Self::route) sends it: the arena's kernel, or the host loop specialised
    /// for `op` (the match is outside the row loop, so each loop is compiled for its
    /// operation alone).
    fn run1(&mut self, op: Op1<T>, comps: Comps, ng: IntVect) -> Result<(), FabArrayError> {
        if let Path::Kernel(k) = self.route(op.name(), op.kernel(), &[])? {
            return self.kernel_unary(op.name(), comps, ng, k);
        }
        match op {
            Op1::Set(v) => self.apply1(comps, ng, |r| r.fill(v)),
            Op1::Plus(v) => self.apply1(comps, ng, |r| r.iter_mut().for_each(|x| *x = *x + v)),
            Op1::Mult(v) => self.apply1(comps, ng, |r| r.iter_mut().for_each(|x| *x = *x * v)),
            Op1::Invert(numerator) => self.apply1(comps, ng, |r| {
                r.iter_mut().for_each(|x| *x = numerator / *x)
            }),
            Op1::Negate => self.apply1(comps, ng, |r| r.iter_mut().for_each(|x| *x = -*x)),
            Op1::Abs => self.apply1(comps, ng, |r| r.iter_mut().for_each(|x| *x = x.abs())),
        }
    }

    /// Runs `op` on components `comps` and components `scomp..` of `src` over ghost
    /// width `ng`, as [`run1`](Self::run1).
    fn run2<B: Kernels>(
        &mut self,
        op: Op2<T>,
        src: &FabArray<T, B>,
        scomp: usize,
        comps: Comps,
        ng: IntVect,
    ) -> Result<(), FabArrayError> {
        if let Path::Kernel(k) = self.route(op.name(), op.kernel(), &[src])? {
            return self.kernel_binary(op.name(), src, scomp, comps, ng, k);
        }
        match op {
            Op2::Add => self.apply2(src, scomp, comps, ng, |d, s| {
                d.iter_mut().zip(s).for_each(|(d, &s)| *d = *d + s)
            }),
            Op2::Subtract => self.apply2(src, scomp, comps, ng, |d, s| {
                d.iter_mut().zip(s).for_each(|(d, &s)| *d = *d - s)
            }),
            Op2::Multiply => self.apply2(src, scomp, comps, ng, |d, s| {
                d.iter_mut().zip(s).for_each(|(d, &s)| *d = *d * s)
            }),
            Op2::Divide => self.apply2(src, scomp, comps, ng, |d, s| {
                d.iter_mut().zip(s).for_each(|(d, &s)| *d = *d / s)
            }),
            Op2::Copy => self.apply2(src, scomp, comps, ng, <[T]>::copy_from_slice),
            Op2::Saxpy(a) => self.apply2(src, scomp, comps, ng, |d, s| {
                d.iter_mut().zip(s).for_each(|(d, &s)| *d = *d + a * s)
            }),
            Op2::Xpay(a) => self.apply2(src, scomp, comps, ng, |d, s| {
                d.iter_mut().zip(s).for_each(|(d, &s)| *d = s + a * *d)
            }),
        }
    }

    /// Runs `op` on components `comps`, components `xcomp..` of `x` and `ycomp..` of `y`
    /// over ghost width `ng`, as [`run1`](Self::run1) (on the host loops only: there is
    /// no kernel of three operands).
    #[expect(
        clippy::too_many_arguments,
        reason = "the operation, two operands with their first components, the range, the width"
    )]
    fn run3<B: Kernels, C: Kernels>(
        &mut self,
        op: Op3<T>,
        x: &FabArray<T, B>,
        xcomp: usize,
        y: &FabArray<T, C>,
        ycomp: usize,
        comps: Comps,
        ng: IntVect,
    ) -> Result<(), FabArrayError> {
        let Path::Host = self.route::<Infallible>(op.name(), None, &[x, y])?;
        match op {
            Op3::LinComb(a, b) => self.apply3(x, xcomp, y, ycomp, comps, ng, |d, x, y| {
                for ((d, &x), &y) in d.iter_mut().zip(x).zip(y) {
                    *d = a * x + b * y;
                }
            }),
            Op3::AddProduct => self.apply3(x, xcomp, y, ycomp, comps, ng, |d, x, y| {
                for ((d, &x), &y) in d.iter_mut().zip(x).zip(y) {
                    *d = *d + x * y;
                }
            }),
        }
    }

    /// Reduction `kind` of components `comps` over ghost width `ng` where
    /// [`route`](Self::route) sends it: the arena's kernel ([`Kind::kernel`]), its value
    /// through `from_kernel`; or the host loops of [`reduce`](Self::reduce) with
    /// `(id, f, combine)`, their value through `from_host`.
    fn reduce1<R: bytemuck::Pod + Send + Sync, O>(
        &self,
        kind: Kind,
        comps: Comps,
        ng: IntVect,
        (id, f, combine): (
            R,
            impl Fn(R, T) -> R + Sync + Send,
            impl Fn(R, R) -> R + Sync + Send,
        ),
        (from_kernel, from_host): (impl FnOnce(f64) -> O, impl FnOnce(R) -> O),
    ) -> Result<O, FabArrayError> {
        match self.route(kind.name(), kind.kernel::<T>(), &[])? {
            Path::Kernel((op, init)) => self
                .kernel_reduce(kind.name(), op, init, comps, ng)
                .map(from_kernel),
            Path::Host => self.reduce(kind, comps, ng, id, f, combine).map(from_host),
        }
    }

    // ----- in-place scalar operations -------------------------------------------------

    /// Sets every element (all components, ghost cells included) to `v`.
    ///
    /// # Errors
    /// As [`set_val`](Self::set_val) (on host memory nothing can fail).
    pub fn fill(&mut self, v: T) -> Result<(), FabArrayError> {
        let all = self.ngrow;
        self.set_val(v, .., all)
    }

    /// Sets components `comps` over ghost width `ng` to `v` (AMReX's `setVal(v, comp,
    /// ncomp, nghost)`).
    ///
    /// # Errors
    /// [`FabArrayError::Fab`]`(`[`ComponentsOutside`](amrex_basefab::FabError::ComponentsOutside)`)` or [`FabArrayError::GhostOutside`]; nothing is written
    /// then. The same holds for every operation below (binary ones also refuse
    /// [`FabArrayError::LayoutMismatch`]).
    ///
    /// Every operation runs on any arena: on host and pinned memory the tiled, threaded
    /// host loops do the work; on device and managed memory the arena's kernels (see
    /// [`Kernels`]), which refuse with [`FabError::Arena`](amrex_basefab::FabError::Arena) where there are none.
    /// Operations that have no kernel (`invert`, `negate`, `abs`, `subtract`,
    /// `multiply`, `divide`, `lin_comb`, `add_product`, `swap`) return
    /// [`FabArrayError::NoKernel`] there; operands in other memory than the destination's,
    /// [`FabArrayError::DifferentMemory`]; and device FabArrays on more than one rank,
    /// [`FabArrayError::DeviceNeedsOneProcess`].
    pub fn set_val(
        &mut self,
        v: T,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabArrayError> {
        self.run1(Op1::Set(v), bounds(comps), ng.into())
    }

    /// `x += v` (AMReX's `plus`).
    pub fn plus(
        &mut self,
        v: T,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabArrayError> {
        self.run1(Op1::Plus(v), bounds(comps), ng.into())
    }

    /// `x *= v` (AMReX's `mult`).
    pub fn mult(
        &mut self,
        v: T,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabArrayError> {
        self.run1(Op1::Mult(v), bounds(comps), ng.into())
    }

    /// `x = numerator / x` (AMReX's `invert`).
    pub fn invert(
        &mut self,
        numerator: T,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabArrayError> {
        self.run1(Op1::Invert(numerator), bounds(comps), ng.into())
    }

    /// `x = -x` (AMReX's `negate`).
    pub fn negate(
        &mut self,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabArrayError> {
        self.run1(Op1::Negate, bounds(comps), ng.into())
    }

    /// `x = |x|` (AMReX's `abs`).
    pub fn abs(
        &mut self,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabArrayError> {
        self.run1(Op1::Abs, bounds(comps), ng.into())
    }

    // ----- element-wise with other FabArrays (same layout) ---------------------------

    /// `self[comps] += src[scomp..]` (AMReX's `MultiFab::Add`).
    pub fn add<B: Kernels>(
        &mut self,
        src: &FabArray<T, B>,
        scomp: usize,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabArrayError> {
        self.run2(Op2::Add, src, scomp, bounds(comps), ng.into())
    }

    /// `self[comps] -= src[scomp..]` (AMReX's `MultiFab::Subtract`).
    pub fn subtract<B: Kernels>(
        &mut self,
        src: &FabArray<T, B>,
        scomp: usize,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabArrayError> {
        self.run2(Op2::Subtract, src, scomp, bounds(comps), ng.into())
    }

    /// `self[comps] *= src[scomp..]` (AMReX's `MultiFab::Multiply`).
    pub fn multiply<B: Kernels>(
        &mut self,
        src: &FabArray<T, B>,
        scomp: usize,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabArrayError> {
        self.run2(Op2::Multiply, src, scomp, bounds(comps), ng.into())
    }

    /// `self[comps] /= src[scomp..]` (AMReX's `MultiFab::Divide`).
    pub fn divide<B: Kernels>(
        &mut self,
        src: &FabArray<T, B>,
        scomp: usize,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabArrayError> {
        self.run2(Op2::Divide, src, scomp, bounds(comps), ng.into())
    }

    /// `self[comps] = src[scomp..]` (AMReX's `MultiFab::Copy`).
    pub fn copy_from<B: Kernels>(
        &mut self,
        src: &FabArray<T, B>,
        scomp: usize,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabArrayError> {
        self.run2(Op2::Copy, src, scomp, bounds(comps), ng.into())
    }

    /// `self[comps] += a * x[xcomp..]` (AMReX's `MultiFab::Saxpy`).
    pub fn saxpy<B: Kernels>(
        &mut self,
        a: T,
        x: &FabArray<T, B>,
        xcomp: usize,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabArrayError> {
        self.run2(Op2::Saxpy(a), x, xcomp, bounds(comps), ng.into())
    }

    /// `self[comps] = x[xcomp..] + a * self[comps]` (AMReX's `MultiFab::Xpay`).
    pub fn xpay<B: Kernels>(
        &mut self,
        a: T,
        x: &FabArray<T, B>,
        xcomp: usize,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabArrayError> {
        self.run2(Op2::Xpay(a), x, xcomp, bounds(comps), ng.into())
    }

    /// `self[comps] = a * x[xcomp..] + b * y[ycomp..]` (AMReX's `MultiFab::LinComb`).
    #[expect(clippy::too_many_arguments, reason = "AMReX's argument list")]
    pub fn lin_comb<B: Kernels, C: Kernels>(
        &mut self,
        a: T,
        x: &FabArray<T, B>,
        xcomp: usize,
        b: T,
        y: &FabArray<T, C>,
        ycomp: usize,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabArrayError> {
        let op = Op3::LinComb(a, b);
        self.run3(op, x, xcomp, y, ycomp, bounds(comps), ng.into())
    }

    /// `self[comps] += s1[comp1..] * s2[comp2..]` (AMReX's `MultiFab::AddProduct`).
    pub fn add_product<B: Kernels, C: Kernels>(
        &mut self,
        s1: &FabArray<T, B>,
        comp1: usize,
        s2: &FabArray<T, C>,
        comp2: usize,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabArrayError> {
        let op = Op3::AddProduct;
        self.run3(op, s1, comp1, s2, comp2, bounds(comps), ng.into())
    }

    /// Swaps `self[comps]` with `other[ocomp..]` (AMReX's `MultiFab::Swap`).
    pub fn swap<B: Kernels>(
        &mut self,
        other: &mut FabArray<T, B>,
        ocomp: usize,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabArrayError> {
        // The one operation that writes two FabArrays: no kernel, its own host loop.
        let Path::Host = self.route::<Infallible>("swap", None, &[&*other])?;
        let ng = ng.into();
        let c = component_range(comps, self.ncomp)?;
        self.check_other(other, ocomp, c.len(), ng)?;
        let items = self.op_items(ng)?;
        let (draws, sraws) = (self.raws_mut(), other.raws_mut());
        par_for(items.len(), |it| {
            let (l, bx) = items[it];
            let (d, s) = (draws[l], sraws[l]);
            let merge = merge_level(&bx, &[&d, &s]);
            for_runs(&bx, c.len(), merge, |i0, j, k, n, len| {
                // SAFETY: both FabArrays are borrowed mutably (so they are different
                // ones); rows of one task are disjoint from other tasks' rows.
                let dr = unsafe { d.run_mut(i0, j, k, len, c.start + n) };
                // SAFETY: as above.
                let sr = unsafe { s.run_mut(i0, j, k, len, ocomp + n) };
                dr.swap_with_slice(sr);
            });
        });
        Ok(())
    }

    // ----- reductions -----------------------------------------------------------------

    /// Smallest value of components `comps` over ghost width `ng` (AMReX's `min`); the
    /// element type's largest value when there is no cell.
    pub fn min(
        &self,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<T, FabArrayError> {
        let host = (T::HIGHEST, T::min_of, T::min_of);
        let out = (T::from_kernel_value, |m| m);
        self.reduce1(Kind::Min, bounds(comps), ng.into(), host, out)
    }

    /// Largest value (AMReX's `max`); the element type's lowest value when there is no
    /// cell.
    pub fn max(
        &self,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<T, FabArrayError> {
        let host = (T::LOWEST, T::max_of, T::max_of);
        let out = (T::from_kernel_value, |m| m);
        self.reduce1(Kind::Max, bounds(comps), ng.into(), host, out)
    }

    /// `Σ x`, accumulated in [`Element::Acc`] (AMReX's `sum`).
    pub fn sum(
        &self,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<T::Acc, FabArrayError> {
        let host = (T::Acc::default(), |a, x: T| a + x.to_acc(), |a, b| a + b);
        let out = (T::acc_from_kernel_value, |s| s);
        self.reduce1(Kind::Sum, bounds(comps), ng.into(), host, out)
    }

    /// `max |x|` (AMReX's `norm0`).
    pub fn norm0(
        &self,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<T, FabArrayError> {
        let host = (T::ZERO, |a, x: T| T::max_of(a, x.abs()), T::max_of);
        let out = (T::from_kernel_value, |m| m);
        self.reduce1(Kind::Norm0, bounds(comps), ng.into(), host, out)
    }

    /// `Σ |x|` (AMReX's `norm1`).
    pub fn norm1(
        &self,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<T::Acc, FabArrayError> {
        let host = (
            T::Acc::default(),
            |a, x: T| a + x.abs().to_acc(),
            |a, b| a + b,
        );
        let out = (T::acc_from_kernel_value, |s| s);
        self.reduce1(Kind::Norm1, bounds(comps), ng.into(), host, out)
    }

    /// `sqrt(Σ x²)` (AMReX's `norm2`).
    pub fn norm2(
        &self,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<f64, FabArrayError> {
        let host = (
            T::Acc::default(),
            |a, x: T| a + (x * x).to_acc(),
            |a, b| a + b,
        );
        let out = (sqrt, |s| sqrt(T::acc_to_f64(s)));
        self.reduce1(Kind::Norm2, bounds(comps), ng.into(), host, out)
    }

    /// `Σ self[comps] * y[ycomp..]` over ghost width `ng` (AMReX's `MultiFab::Dot`).
    pub fn dot<B: Kernels>(
        &self,
        y: &FabArray<T, B>,
        ycomp: usize,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<T::Acc, FabArrayError> {
        let ng = ng.into();
        // The one reduction of two FabArrays, with its own kernel ([`Kernels::dot`]).
        if let Path::Kernel(()) = self.route(Kind::Dot.name(), Some(()), &[y])? {
            return self
                .kernel_dot(y, ycomp, comps, ng)
                .map(T::acc_from_kernel_value);
        }
        let zero = T::Acc::default();
        let c = component_range(comps, self.ncomp);
        let key = reduction_key(Kind::Dot, &c, ycomp, ng);
        let local = (|| {
            let c = c?;
            self.check_other(y, ycomp, c.len(), ng)?;
            let items = self.op_items(ng)?;
            let (xr, yr) = (self.raws(), y.raws());
            let parts = par_map(items.len(), |it| {
                let (l, bx) = items[it];
                let (a, b) = (xr[l], yr[l]);
                let merge = merge_level(&bx, &[&a, &b]);
                let mut acc = [zero; L];
                let f = |s: T::Acc, x: T, y: T| s + (x * y).to_acc();
                // SAFETY: both only read (`&self` and `&y` keep writers away); `bx` is a
                // region of fab `l` of both, and `c` and `ycomp..` are components of
                // each (`op_items`, `check_other`).
                let fold = unsafe { Fold2::new((&a, &b), (&bx, (&c, ycomp), merge), &mut acc, &f) };
                simd::widest(fold);
                combine_lanes(acc, zero, |a, b| a + b)
            });
            Ok((items, parts))
        })();
        self.combine_boxes(key, local, zero, |a, b| a + b)
    }
}
