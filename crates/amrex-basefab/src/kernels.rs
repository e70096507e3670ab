//! Row kernels: plain slice loops the compiler vectorises (no bounds checks inside).
//!
//! Reductions keep `LANES` independent accumulators so floating-point sums and min/max
//! do not form one serial dependency chain; the order of additions therefore differs
//! from a left-to-right sum (results agree to rounding).

use num_traits::{Float, Signed};

/// Accumulators per reduction.
pub(crate) const LANES: usize = 8;

#[inline(always)]
fn fold_lanes<T: Copy>(
    row: &[T],
    init: T,
    f: impl Fn(T, T) -> T,
    combine: impl Fn(T, T) -> T,
) -> T {
    let mut acc = [init; LANES];
    let (chunks, rest) = row.as_chunks::<LANES>();
    for c in chunks {
        for l in 0..LANES {
            acc[l] = f(acc[l], c[l]);
        }
    }
    let mut r = init;
    for x in rest {
        r = f(r, *x);
    }
    // Pairwise combine of the partial results.
    let c = &combine;
    let [a0, a1, a2, a3, a4, a5, a6, a7] = acc;
    let s = c(c(c(a0, a1), c(a2, a3)), c(c(a4, a5), c(a6, a7)));
    c(s, r)
}

#[inline(always)]
pub(crate) fn row_sum<T: Copy + num_traits::Num>(row: &[T]) -> T {
    fold_lanes(row, T::zero(), |a, x| a + x, |a, b| a + b)
}

#[inline(always)]
pub(crate) fn row_abs_sum<T: Copy + Signed>(row: &[T]) -> T {
    fold_lanes(row, T::zero(), |a, x| a + x.abs(), |a, b| a + b)
}

#[inline(always)]
pub(crate) fn row_sq_sum<T: Copy + num_traits::Num>(row: &[T]) -> T {
    fold_lanes(row, T::zero(), |a, x| a + x * x, |a, b| a + b)
}

#[inline(always)]
pub(crate) fn row_min<T: Copy + PartialOrd>(row: &[T], init: T) -> T {
    let m = |a: T, x: T| if x < a { x } else { a };
    fold_lanes(row, init, m, m)
}

#[inline(always)]
pub(crate) fn row_max<T: Copy + PartialOrd>(row: &[T], init: T) -> T {
    let m = |a: T, x: T| if x > a { x } else { a };
    fold_lanes(row, init, m, m)
}

#[inline(always)]
pub(crate) fn row_abs_max<T: Copy + Signed + PartialOrd>(row: &[T]) -> T {
    fold_lanes(
        row,
        T::zero(),
        |a, x| {
            let y = x.abs();
            if y > a { y } else { a }
        },
        |a, b| if b > a { b } else { a },
    )
}

/// `sqrt` for the float element types (`libm` through `num-traits` without `std`).
#[inline]
pub(crate) fn sqrt<T: Float>(x: T) -> T {
    x.sqrt()
}
