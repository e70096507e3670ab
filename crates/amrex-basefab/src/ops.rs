//! Element operations and reductions over a component range and a sub-box.
//!
//! Arguments follow the workspace's one order (FabArrays use it too): the scalars, then
//! each other operand followed by its first component (and, for a fab, the box it is
//! read over), then the component range of `self`, then the region of `self` last (here
//! a box; a FabArray takes a ghost width). Every operation returns `Result` and
//! validates everything before it touches an element, so an error leaves both fabs
//! unchanged.
//!
//! Every operation validates once (host access, writability, box inside the fab,
//! components inside the fab), then walks `n`, `k`, `j` and hands each `i`-row to a plain
//! slice loop: no bounds checks in the inner loop, which the compiler vectorises.

use crate::FabError;
use crate::fab::{BaseFab, box_inside, box_lengths, component_range};
use crate::kernels;
use amrex_arena::Arena;
use amrex_box::IndexBox;
use bytemuck::AnyBitPattern;
use core::ops::{Range, RangeBounds};
use num_traits::{Float, Signed};

/// A validated walk over the rows of `bx` and components `comps` of one fab.
#[derive(Clone, Copy)]
struct Rows<T> {
    /// Element `(bx.lo, comps.start)`.
    base: *mut T,
    nx: usize,
    ny: usize,
    nz: usize,
    nc: usize,
    jstride: usize,
    kstride: usize,
    nstride: usize,
}

impl<T> Rows<T> {
    fn is_empty(&self) -> bool {
        self.nx == 0 || self.ny == 0 || self.nz == 0 || self.nc == 0
    }

    /// The same walk with adjacent rows fused into longer ones: rows `j` and `j + 1` are
    /// adjacent when `jstride == nx`, planes when `kstride == nx * ny`. Longer rows mean
    /// fewer loop setups and partial-result combines (a compact fab reduces over one
    /// slice per component).
    fn fused(mut self) -> Self {
        if self.ny > 1 && self.jstride == self.nx {
            self.nx *= self.ny;
            self.ny = 1;
        }
        if self.ny == 1 && self.nz > 1 && self.kstride == self.nx {
            self.nx *= self.nz;
            self.nz = 1;
        }
        self
    }

    /// Pointer to the row `(j, k, n)` (relative indices).
    #[inline(always)]
    fn row(&self, j: usize, k: usize, n: usize) -> *mut T {
        self.base
            .wrapping_add(j * self.jstride + k * self.kstride + n * self.nstride)
    }
}

impl<'a, T: AnyBitPattern, A: Arena> BaseFab<'a, T, A> {
    /// Checks `bx` and `comps` and returns the rows; an empty box gives no rows.
    fn rows(&self, bx: IndexBox, comps: Range<usize>) -> Result<Rows<T>, FabError> {
        let [nx, ny, nz] = box_lengths(&bx);
        let nc = comps.len();
        let [jstride, kstride, nstride] = self.layout.strides();
        let mut rows = Rows {
            base: self.data_ptr(),
            nx,
            ny,
            nz,
            nc,
            jstride,
            kstride,
            nstride,
        };
        if rows.is_empty() {
            return Ok(rows);
        }
        if !box_inside(&bx, &self.bx) {
            return Err(FabError::BoxOutside { bx, fab: self.bx });
        }
        // In bounds (box inside, component < ncomp): the offset fits (invariant 2).
        rows.base = self
            .data_ptr()
            .wrapping_add(self.offset(bx.lo(), comps.start));
        Ok(rows)
    }

    /// Calls `f(n, row)` for every `i`-row of `bx` in components `comps` (`n` relative to
    /// `comps.start`).
    fn for_rows(
        &self,
        comps: impl RangeBounds<usize>,
        bx: IndexBox,
        mut f: impl FnMut(usize, &[T]),
    ) -> Result<(), FabError> {
        self.check_host()?;
        let comps = component_range(comps, self.ncomp())?;
        let r = self.rows(bx, comps)?.fused();
        if r.is_empty() {
            return Ok(());
        }
        for n in 0..r.nc {
            for k in 0..r.nz {
                for j in 0..r.ny {
                    // SAFETY: `(j, k, n)` is inside the checked box and components, so the
                    // row's `nx` unit-stride elements are initialised, aligned and host
                    // readable (invariants 2, 5); `&self` keeps them unwritten.
                    let row = unsafe { core::slice::from_raw_parts(r.row(j, k, n), r.nx) };
                    f(n, row);
                }
            }
        }
        Ok(())
    }

    /// Calls `f(row)` for every `i`-row of `bx` in components `comps`, mutably.
    fn for_rows_mut(
        &mut self,
        comps: impl RangeBounds<usize>,
        bx: IndexBox,
        mut f: impl FnMut(&mut [T]),
    ) -> Result<(), FabError> {
        self.check_write()?;
        let comps = component_range(comps, self.ncomp())?;
        let r = self.rows(bx, comps)?.fused();
        if r.is_empty() {
            return Ok(());
        }
        for n in 0..r.nc {
            for k in 0..r.nz {
                for j in 0..r.ny {
                    // SAFETY: as `for_rows`; the fab is writable and exclusively borrowed
                    // (invariants 5–6), and distinct rows are distinct elements
                    // (invariant 2), so this is the only reference to the row.
                    let row = unsafe { core::slice::from_raw_parts_mut(r.row(j, k, n), r.nx) };
                    f(row);
                }
            }
        }
        Ok(())
    }

    /// Walks components `comps` of `self` over `dst_box` together with the same number
    /// of components of `src` from `src_comp` over `src_box`, row by row (rows fused
    /// where both sides allow).
    fn zip_rows_mut<B: Arena>(
        &mut self,
        src: &BaseFab<'_, T, B>,
        src_comp: usize,
        src_box: IndexBox,
        comps: impl RangeBounds<usize>,
        dst_box: IndexBox,
        mut f: impl FnMut(&mut [T], &[T]),
    ) -> Result<(), FabError> {
        self.check_write()?;
        src.check_host()?;
        if box_lengths(&src_box) != box_lengths(&dst_box) {
            return Err(FabError::BoxSizeMismatch {
                src: src_box,
                dst: dst_box,
            });
        }
        let dc = component_range(comps, self.ncomp())?;
        let sc = component_range(src_comp..src_comp.saturating_add(dc.len()), src.ncomp())?;
        let (mut s, mut d) = (src.rows(src_box, sc)?, self.rows(dst_box, dc)?);
        if d.is_empty() {
            return Ok(());
        }
        // Fuse rows only where both sides fuse the same way.
        let (fs, fd) = (s.fused(), d.fused());
        if (fs.nx, fs.ny, fs.nz) == (fd.nx, fd.ny, fd.nz) {
            (s, d) = (fs, fd);
        }
        for n in 0..d.nc {
            for k in 0..d.nz {
                for j in 0..d.ny {
                    // SAFETY: in bounds of the checked source box and components; host
                    // readable; `&src` keeps it unwritten.
                    let sr = unsafe { core::slice::from_raw_parts(s.row(j, k, n), s.nx) };
                    // SAFETY: as `for_rows_mut`. `src` is a different fab than `self`
                    // (`&` and `&mut` cannot alias), and fabs do not share elements
                    // (invariant 6), so the two rows do not overlap.
                    let dr = unsafe { core::slice::from_raw_parts_mut(d.row(j, k, n), d.nx) };
                    f(dr, sr);
                }
            }
        }
        Ok(())
    }

    /// Sets components `comps` of every cell of `bx` to `val` (AMReX `setVal`).
    ///
    /// # Errors
    /// [`FabError::NotHostAccessible`], [`FabError::ReadOnly`],
    /// [`FabError::BoxOutside`] or [`FabError::ComponentsOutside`]; nothing is written then.
    pub fn set_val(
        &mut self,
        val: T,
        comps: impl RangeBounds<usize>,
        bx: IndexBox,
    ) -> Result<(), FabError> {
        self.for_rows_mut(comps, bx, |row| row.fill(val))
    }

    /// Copies `src` (components from `src_comp`, over `src_box`) into components `comps`
    /// of `self` over `dst_box` (same size; the shift is `dst_box.lo - src_box.lo`)
    /// (AMReX `copy(src, srcbox, srccomp, destbox, destcomp, numcomp)`).
    ///
    /// # Errors
    /// [`FabError::BoxSizeMismatch`], and as [`set_val`](Self::set_val) for either fab.
    pub fn copy_from<B: Arena>(
        &mut self,
        src: &BaseFab<'_, T, B>,
        src_comp: usize,
        src_box: IndexBox,
        comps: impl RangeBounds<usize>,
        dst_box: IndexBox,
    ) -> Result<(), FabError> {
        self.zip_rows_mut(src, src_comp, src_box, comps, dst_box, |d, s| {
            d.copy_from_slice(s);
        })
    }
}

impl<'a, T, A> BaseFab<'a, T, A>
where
    T: AnyBitPattern + Signed + PartialOrd,
    A: Arena,
{
    /// Adds `val` to components `comps` over `bx` (AMReX `plus(val, box, comp, ncomp)`).
    ///
    /// # Errors
    /// As [`set_val`](Self::set_val).
    pub fn plus(
        &mut self,
        val: T,
        comps: impl RangeBounds<usize>,
        bx: IndexBox,
    ) -> Result<(), FabError> {
        self.for_rows_mut(comps, bx, |row| {
            for x in row {
                *x = *x + val;
            }
        })
    }

    /// Adds `src` (components from `src_comp`, over `src_box`) to components `comps` of
    /// `self` over `dst_box` (AMReX `plus(src, srcbox, destbox, srccomp, destcomp,
    /// numcomp)`; argument order as [`copy_from`](Self::copy_from)).
    ///
    /// # Errors
    /// As [`copy_from`](Self::copy_from).
    pub fn plus_from<B: Arena>(
        &mut self,
        src: &BaseFab<'_, T, B>,
        src_comp: usize,
        src_box: IndexBox,
        comps: impl RangeBounds<usize>,
        dst_box: IndexBox,
    ) -> Result<(), FabError> {
        self.zip_rows_mut(src, src_comp, src_box, comps, dst_box, |d, s| {
            for (x, &y) in d.iter_mut().zip(s) {
                *x = *x + y;
            }
        })
    }

    /// Multiplies components `comps` over `bx` by `val` (AMReX `mult`).
    ///
    /// # Errors
    /// As [`set_val`](Self::set_val).
    pub fn mult(
        &mut self,
        val: T,
        comps: impl RangeBounds<usize>,
        bx: IndexBox,
    ) -> Result<(), FabError> {
        self.for_rows_mut(comps, bx, |row| {
            for x in row {
                *x = *x * val;
            }
        })
    }

    /// Multiplies `self` over `dst_box` by `src` over `src_box`, element by element.
    ///
    /// # Errors
    /// As [`copy_from`](Self::copy_from).
    pub fn mult_from<B: Arena>(
        &mut self,
        src: &BaseFab<'_, T, B>,
        src_comp: usize,
        src_box: IndexBox,
        comps: impl RangeBounds<usize>,
        dst_box: IndexBox,
    ) -> Result<(), FabError> {
        self.zip_rows_mut(src, src_comp, src_box, comps, dst_box, |d, s| {
            for (x, &y) in d.iter_mut().zip(s) {
                *x = *x * y;
            }
        })
    }

    /// Negates components `comps` over `bx` (AMReX `negate`).
    ///
    /// # Errors
    /// As [`set_val`](Self::set_val).
    pub fn negate(&mut self, comps: impl RangeBounds<usize>, bx: IndexBox) -> Result<(), FabError> {
        self.for_rows_mut(comps, bx, |row| {
            for x in row {
                *x = -*x;
            }
        })
    }

    /// Replaces components `comps` over `bx` by their absolute values (AMReX `abs`).
    ///
    /// # Errors
    /// As [`set_val`](Self::set_val).
    pub fn abs(&mut self, comps: impl RangeBounds<usize>, bx: IndexBox) -> Result<(), FabError> {
        self.for_rows_mut(comps, bx, |row| {
            for x in row {
                *x = x.abs();
            }
        })
    }

    /// Folds components `comps` over `bx` with the one lane kernel: `f` into the lanes
    /// (each starting at `init`), then `combine` over the lanes.
    fn reduce(
        &self,
        comps: impl RangeBounds<usize>,
        bx: IndexBox,
        init: T,
        f: impl Fn(T, T) -> T,
        combine: impl Fn(T, T) -> T,
    ) -> Result<T, FabError> {
        let mut acc = [init; kernels::LANES];
        self.for_rows(comps, bx, |_, row| {
            kernels::fold_lanes(row, &mut acc, &f);
        })?;
        Ok(kernels::combine_lanes(acc, init, combine))
    }

    fn first_value(&self, comps: impl RangeBounds<usize>, bx: IndexBox) -> Result<T, FabError> {
        self.check_host()?;
        let c = component_range(comps, self.ncomp())?;
        let r = self.rows(bx, c)?;
        if r.is_empty() {
            return Err(FabError::EmptyBox);
        }
        // SAFETY: the first element of a non-empty checked box and component: in bounds,
        // initialised, host readable (invariants 2, 5).
        Ok(unsafe { r.base.read() })
    }

    /// Smallest value of components `comps` over `bx` (AMReX `min`).
    ///
    /// # Errors
    /// [`FabError::EmptyBox`], and as [`set_val`](Self::set_val) (reads only).
    pub fn min(&self, comps: impl RangeBounds<usize>, bx: IndexBox) -> Result<T, FabError> {
        let comps = component_range(comps, self.ncomp())?;
        let first = self.first_value(comps.clone(), bx)?;
        self.reduce(
            comps,
            bx,
            first,
            |a, x| if x < a { x } else { a },
            |a, b| {
                if b < a { b } else { a }
            },
        )
    }

    /// The smallest and the largest value of components `comps` over `bx` in one pass
    /// over the data (each row folded for both while it is in cache): the values of
    /// [`min`](Self::min) and [`max`](Self::max), bit for bit.
    ///
    /// # Errors
    /// As [`min`](Self::min).
    pub fn min_max(
        &self,
        comps: impl RangeBounds<usize>,
        bx: IndexBox,
    ) -> Result<(T, T), FabError> {
        let comps = component_range(comps, self.ncomp())?;
        let first = self.first_value(comps.clone(), bx)?;
        let (mut lo, mut hi) = ([first; kernels::LANES], [first; kernels::LANES]);
        let less = |a: T, x: T| if x < a { x } else { a };
        let more = |a: T, x: T| if x > a { x } else { a };
        self.for_rows(comps, bx, |_, row| {
            kernels::fold_lanes(row, &mut lo, less);
            kernels::fold_lanes(row, &mut hi, more);
        })?;
        Ok((
            kernels::combine_lanes(lo, first, less),
            kernels::combine_lanes(hi, first, more),
        ))
    }

    /// Largest value of components `comps` over `bx` (AMReX `max`).
    ///
    /// # Errors
    /// As [`min`](Self::min).
    pub fn max(&self, comps: impl RangeBounds<usize>, bx: IndexBox) -> Result<T, FabError> {
        let comps = component_range(comps, self.ncomp())?;
        let first = self.first_value(comps.clone(), bx)?;
        self.reduce(
            comps,
            bx,
            first,
            |a, x| if x > a { x } else { a },
            |a, b| {
                if b > a { b } else { a }
            },
        )
    }

    /// Sum of components `comps` over `bx` (AMReX `sum`); zero for an empty box.
    ///
    /// # Errors
    /// As [`set_val`](Self::set_val) (reads only).
    pub fn sum(&self, comps: impl RangeBounds<usize>, bx: IndexBox) -> Result<T, FabError> {
        self.reduce(comps, bx, T::zero(), |a, x| a + x, |a, b| a + b)
    }

    /// Max norm `max |x|` of components `comps` over `bx` (AMReX `norm(0, ...)`); zero for
    /// an empty box.
    ///
    /// # Errors
    /// As [`sum`](Self::sum).
    pub fn norm0(&self, comps: impl RangeBounds<usize>, bx: IndexBox) -> Result<T, FabError> {
        self.reduce(
            comps,
            bx,
            T::zero(),
            |a, x| {
                let y = x.abs();
                if y > a { y } else { a }
            },
            |a, b| if b > a { b } else { a },
        )
    }

    /// 1-norm `sum |x|` of components `comps` over `bx` (AMReX `norm(1, ...)`).
    ///
    /// # Errors
    /// As [`sum`](Self::sum).
    pub fn norm1(&self, comps: impl RangeBounds<usize>, bx: IndexBox) -> Result<T, FabError> {
        self.reduce(comps, bx, T::zero(), |a, x| a + x.abs(), |a, b| a + b)
    }
}

impl<'a, T, A> BaseFab<'a, T, A>
where
    T: AnyBitPattern + Float + Signed,
    A: Arena,
{
    /// 2-norm `sqrt(sum x²)` of components `comps` over `bx` (AMReX `norm(2, ...)`).
    ///
    /// # Errors
    /// As [`sum`](Self::sum).
    pub fn norm2(&self, comps: impl RangeBounds<usize>, bx: IndexBox) -> Result<T, FabError> {
        let s = self.reduce(comps, bx, T::zero(), |a, x| a + x * x, |a, b| a + b)?;
        Ok(kernels::sqrt(s))
    }

    /// Replaces components `comps` over `bx` by `numerator / x` (AMReX `invert`).
    ///
    /// # Errors
    /// As [`set_val`](Self::set_val).
    pub fn invert(
        &mut self,
        numerator: T,
        comps: impl RangeBounds<usize>,
        bx: IndexBox,
    ) -> Result<(), FabError> {
        self.for_rows_mut(comps, bx, |row| {
            for x in row {
                *x = numerator / *x;
            }
        })
    }
}
