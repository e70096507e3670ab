//! Row kernels: plain slice loops the compiler vectorises (no bounds checks inside).
//!
//! Reductions keep `LANES` independent accumulators so floating-point sums and min/max
//! do not form one serial dependency chain; the order of additions therefore differs
//! from a left-to-right sum (results agree to rounding), and it is the same for a fab
//! and for a FabArray, which use these kernels too.

use num_traits::Float;

/// Accumulators per reduction.
pub const LANES: usize = 8;

/// How far ahead of the element being folded the reductions prefetch, in bytes.
///
/// A reduction reads one or two streams and does little work per line, so the core runs
/// out of outstanding misses before the memory runs out of bandwidth: measured on a
/// 2-core Xeon VM (`multifab_table`, cold cache), `sum` went from 0.8 to 0.95–1.0 of a
/// same-run STREAM triad with 8 KiB, a little less with 1 or 4 KiB, no better with 16.
pub const PREFETCH_AHEAD: usize = 8192;

/// Prefetches the line [`PREFETCH_AHEAD`] bytes after `p` (a hint; any address).
#[inline(always)]
fn prefetch_ahead<T>(p: *const T) {
    amrex_array4::hint::prefetch(p.cast::<u8>().wrapping_add(PREFETCH_AHEAD));
}

/// Folds `row` into `LANES` independent accumulators: element `l` of every chunk of
/// `LANES` into `acc[l]`, the remainder into `acc[0..]`. The accumulators carry over
/// from row to row, so a region is one fold; [`combine_lanes`] ends it. This is the one
/// reduction kernel of the workspace: `BaseFab` and `FabArray` reductions both use it,
/// so they add in the same order and round alike. It prefetches [`PREFETCH_AHEAD`]
/// bytes ahead (a chunk of eight `f64` is one cache line), which changes no result.
#[inline(always)]
pub fn fold_lanes<T: Copy, R: Copy>(row: &[T], acc: &mut [R; LANES], f: impl Fn(R, T) -> R) {
    let (chunks, rest) = row.as_chunks::<LANES>();
    for c in chunks {
        prefetch_ahead(c.as_ptr());
        for l in 0..LANES {
            acc[l] = f(acc[l], c[l]);
        }
    }
    for (a, &x) in acc.iter_mut().zip(rest) {
        *a = f(*a, x);
    }
}

/// [`fold_lanes`] over two rows of equal length (dot products).
#[inline(always)]
pub fn fold_lanes2<T: Copy, R: Copy>(
    a: &[T],
    b: &[T],
    acc: &mut [R; LANES],
    f: impl Fn(R, T, T) -> R,
) {
    let (ca, ra) = a.as_chunks::<LANES>();
    let (cb, rb) = b.as_chunks::<LANES>();
    for (x, y) in ca.iter().zip(cb) {
        prefetch_ahead(x.as_ptr());
        prefetch_ahead(y.as_ptr());
        for l in 0..LANES {
            acc[l] = f(acc[l], x[l], y[l]);
        }
    }
    for ((s, &x), &y) in acc.iter_mut().zip(ra).zip(rb) {
        *s = f(*s, x, y);
    }
}

/// Ends a [`fold_lanes`] reduction: `init` combined with the accumulators in lane order.
#[inline(always)]
pub fn combine_lanes<R: Copy>(acc: [R; LANES], init: R, combine: impl Fn(R, R) -> R) -> R {
    acc.into_iter().fold(init, combine)
}

/// `sqrt` for the float element types (`libm` through `num-traits` without `std`).
#[inline]
pub(crate) fn sqrt<T: Float>(x: T) -> T {
    x.sqrt()
}
