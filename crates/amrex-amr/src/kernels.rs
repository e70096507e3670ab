//! The per-box loops of the averages, written over `i`-rows (slices) so that they
//! vectorise. Each sums in AMReX's order (`kref`, then `jref`, then `iref`, into one
//! accumulator per coarse cell); the results have not been compared with AMReX's own
//! output.
//!
//! The callers have checked that `bx` (coarse indices) lies inside `crse` and that its
//! refinement lies inside `fine`; a violation panics in the views' row accessors.

use alloc::vec;

use amrex_array4::{Array4, Array4Mut};
use amrex_box::{IndexBox, IntVect};
use amrex_geometry::Geometry;

/// The offset of global index `i` (an `i32`, or an `i64` product that may pass
/// `i32::MAX`) from a view's first index `begin` along `i`: the index into a row.
#[inline]
#[track_caller]
pub(crate) fn off(i: impl Into<i64>, begin: i32) -> usize {
    usize::try_from(i.into() - i64::from(begin)).expect("index inside the view (checked)")
}

/// The ratio's components as `usize` (positive: checked by the callers).
#[inline]
fn ratios(ratio: IntVect) -> [usize; 3] {
    ratio
        .to_array()
        .map(|r| usize::try_from(r).expect("ratio >= 1 (checked)"))
}

/// `(kr, jr)` of the fine row `r = kr * ury + jr` under a coarse row, for `r < ury * urz`
/// and `ury`, `urz` the ratio's `y` and `z` components (as `usize`).
#[inline(always)]
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    reason = "r < ury * urz, so r / ury < urz and r % ury < ury, components of an i32 ratio"
)]
fn fine_row(r: usize, ury: usize) -> (i32, i32) {
    ((r / ury) as i32, (r % ury) as i32)
}

/// `1 / n` for the product of some ratios, computed as AMReX does (the integer
/// product, then its reciprocal).
#[inline]
fn inv_product(rs: &[i32]) -> f64 {
    let p: i64 = rs.iter().map(|&r| i64::from(r)).product();
    // Exact for any product below 2^53.
    1.0 / (p as f64)
}

/// `c[i] += f[R i] + f[R i + 1] + ... + f[R i + R - 1]`, added one by one in that order.
#[inline]
fn add_chunks<const R: usize>(c: &mut [f64], f: &[f64]) {
    let (chunks, _) = f.as_chunks::<R>();
    for (c, v) in c.iter_mut().zip(chunks) {
        let mut s = *c;
        for &x in v {
            s += x;
        }
        *c = s;
    }
}

/// Adds to each `c[i]` the `r` fine values `f[r i ..= r i + r - 1]`, in order.
#[inline]
pub(crate) fn add_decimated(c: &mut [f64], f: &[f64], r: usize) {
    match r {
        1 => c.iter_mut().zip(f).for_each(|(c, &v)| *c += v),
        2 => add_chunks::<2>(c, f),
        3 => add_chunks::<3>(c, f),
        4 => add_chunks::<4>(c, f),
        _ => {
            for (c, v) in c.iter_mut().zip(f.chunks_exact(r)) {
                for &x in v {
                    *c += x;
                }
            }
        }
    }
}

/// Where the coarse `i`-rows of a box start in the coarse view and the fine rows under
/// them in the fine view.
struct Span {
    /// The first coarse index `i` of the box.
    x0: i32,
    /// The box's length in `i`.
    nx: usize,
    /// The box's first `i` in a coarse row.
    co: usize,
    /// The first fine `i` under it in a fine row.
    fo: usize,
}

impl Span {
    fn new(crse: &Array4Mut<'_, f64>, fine: &Array4<'_, f64>, bx: &IndexBox, rx: i32) -> Self {
        let x0 = bx.lo()[0];
        Self {
            x0,
            nx: usize::try_from(bx.length()[0]).expect("non-empty box"),
            co: off(i64::from(x0), crse.begin()[0]),
            fo: off(i64::from(x0) * i64::from(rx), fine.begin()[0]),
        }
    }
}

/// The row loop of the averages: `row(c, j, k, n)` for every coarse `i`-row of `bx`,
/// every component, `c` the row's part inside `bx`.
fn for_each_coarse_row(
    crse: &mut Array4Mut<'_, f64>,
    bx: &IndexBox,
    span: &Span,
    mut row: impl FnMut(&mut [f64], i32, i32, usize),
) {
    for n in 0..crse.ncomp() {
        for k in bx.lo()[2]..=bx.hi()[2] {
            for j in bx.lo()[1]..=bx.hi()[1] {
                row(
                    &mut crse.row_mut(j, k, n)[span.co..span.co + span.nx],
                    j,
                    k,
                    n,
                );
            }
        }
    }
}

/// Coarse cells `bx` of `crse` become the mean of the fine cells of `fine` they cover,
/// component by component (AMReX's `amrex_avgdown`).
pub(crate) fn mean(
    crse: &mut Array4Mut<'_, f64>,
    fine: Array4<'_, f64>,
    bx: &IndexBox,
    ratio: IntVect,
) {
    let [rx, ry, rz] = ratio.to_array();
    let [urx, _, _] = ratios(ratio);
    let volfrac = inv_product(&[rx, ry, rz]);
    let span = Span::new(crse, &fine, bx, rx);
    let (fo, nfx) = (span.fo, span.nx * urx);
    for_each_coarse_row(crse, bx, &span, |c, j, k, n| {
        c.fill(0.0);
        for kr in 0..rz {
            for jr in 0..ry {
                let f = fine.row(j * ry + jr, k * rz + kr, n);
                add_decimated(c, &f[fo..fo + nfx], urx);
            }
        }
        c.iter_mut().for_each(|v| *v *= volfrac);
    });
}

/// As [`mean`], weighted by the fine cells' volumes in `fine_geom`
/// (AMReX's `amrex_avgdown_with_vol`): each coarse value is `Σ f v / Σ v` over its fine
/// cells.
pub(crate) fn volume_weighted(
    crse: &mut Array4Mut<'_, f64>,
    fine: Array4<'_, f64>,
    bx: &IndexBox,
    ratio: IntVect,
    fine_geom: &Geometry,
) {
    let ncomp = crse.ncomp();
    let [rx, ry, rz] = ratio.to_array();
    let [urx, ury, urz] = ratios(ratio);
    let Span { x0, nx, co, fo } = Span::new(crse, &fine, bx, rx);
    let nfx = nx * urx;
    // The fine volumes of one coarse row, row (kr, jr) at `(kr * ry + jr) * nfx`, and the
    // sum of the volumes under each coarse cell.
    let mut vol = vec![0.0; nfx * ury * urz];
    let mut cv = vec![0.0; nx];
    let mut fv = vec![0.0; nx];
    for k in bx.lo()[2]..=bx.hi()[2] {
        for j in bx.lo()[1]..=bx.hi()[1] {
            for (r, row) in vol.chunks_exact_mut(nfx).enumerate() {
                let (kr, jr) = fine_row(r, ury);
                let (jf, kf) = (j * ry + jr, k * rz + kr);
                for (i, v) in row.iter_mut().enumerate() {
                    #[expect(
                        clippy::cast_possible_truncation,
                        clippy::cast_possible_wrap,
                        reason = "i < nfx, the length in x of the refinement of bx, which lies in \
                                  `fine` (module doc), a view whose lengths are at most i32::MAX \
                                  (FabLayout invariant 1)"
                    )]
                    let i = i as i32;
                    *v = fine_geom.volume(IntVect::new(x0 * rx + i, jf, kf));
                }
            }
            // The volume under each coarse cell, summed in AMReX's order (`kref`, `jref`,
            // `iref`), once for every component.
            cv.fill(0.0);
            for v in vol.chunks_exact(nfx) {
                for (cvol, v) in cv.iter_mut().zip(v.chunks_exact(urx)) {
                    for &v in v {
                        *cvol += v;
                    }
                }
            }
            for n in 0..ncomp {
                fv.fill(0.0);
                for (r, v) in vol.chunks_exact(nfx).enumerate() {
                    let (kr, jr) = fine_row(r, ury);
                    let f = &fine.row(j * ry + jr, k * rz + kr, n)[fo..fo + nfx];
                    let fine_cells = f.chunks_exact(urx).zip(v.chunks_exact(urx));
                    for (cd, (f, v)) in fv.iter_mut().zip(fine_cells) {
                        for (&f, &v) in f.iter().zip(v) {
                            *cd += f * v;
                        }
                    }
                }
                let c = &mut crse.row_mut(j, k, n)[co..co + nx];
                for ((c, &cd), &cvol) in c.iter_mut().zip(&fv).zip(&cv) {
                    *c = cd / cvol;
                }
            }
        }
    }
}

/// Coarse points `bx` take the fine point they coincide with, `(ri, rj, rk)`
/// (AMReX's `amrex_avgdown_nodes`: injection).
pub(crate) fn inject(
    crse: &mut Array4Mut<'_, f64>,
    fine: Array4<'_, f64>,
    bx: &IndexBox,
    ratio: IntVect,
) {
    let [rx, ry, rz] = ratio.to_array();
    let [urx, _, _] = ratios(ratio);
    let span = Span::new(crse, &fine, bx, rx);
    let (fo, nx) = (span.fo, span.nx);
    for_each_coarse_row(crse, bx, &span, |c, j, k, n| {
        let f = &fine.row(j * ry, k * rz, n)[fo..];
        if urx == 1 {
            c.copy_from_slice(&f[..nx]);
        } else {
            c.iter_mut()
                .zip(f.iter().step_by(urx))
                .for_each(|(c, &v)| *c = v);
        }
    });
}

/// Coarse faces `bx` normal to `dir` become the mean of the fine faces on them
/// (AMReX's `amrex_avgdown_faces`).
pub(crate) fn faces(
    crse: &mut Array4Mut<'_, f64>,
    fine: Array4<'_, f64>,
    bx: &IndexBox,
    ratio: IntVect,
    dir: usize,
) {
    let [rx, ry, rz] = ratio.to_array();
    let [urx, _, _] = ratios(ratio);
    let span = Span::new(crse, &fine, bx, rx);
    let (fo, nfx) = (span.fo, span.nx * urx);
    // The fine rows summed for a coarse row (j, k), as (jref, kref) ranges, and the
    // reciprocal of their count.
    let (jrs, krs, inv) = match dir {
        0 => (ry, rz, inv_product(&[ry, rz])),
        1 => (1, rz, inv_product(&[rx, rz])),
        _ => (ry, 1, inv_product(&[rx, ry])),
    };
    for_each_coarse_row(crse, bx, &span, |c, j, k, n| {
        c.fill(0.0);
        for kr in 0..krs {
            for jr in 0..jrs {
                let f = &fine.row(j * ry + jr, k * rz + kr, n)[fo..];
                if dir == 0 {
                    // One fine face per row: the one on the coarse face.
                    c.iter_mut()
                        .zip(f.iter().step_by(urx))
                        .for_each(|(c, &v)| *c += v);
                } else {
                    add_decimated(c, &f[..nfx], urx);
                }
            }
        }
        c.iter_mut().for_each(|v| *v *= inv);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_decimated_sums_in_order() {
        for r in 1..=6 {
            let f: alloc::vec::Vec<f64> = (0..3 * r)
                .map(|i| f64::from(u8::try_from(i).unwrap()))
                .collect();
            let mut c = [1.0; 3];
            add_decimated(&mut c, &f, r);
            for (i, &v) in c.iter().enumerate() {
                let want: f64 = 1.0 + f[i * r..(i + 1) * r].iter().sum::<f64>();
                assert_eq!(v, want, "ratio {r}, cell {i}");
            }
        }
    }

    #[test]
    fn mean_of_one_box_by_hand() {
        // A 4x2x2 fine box over a 2x1x1 coarse box, ratio 2.
        let fbx = IndexBox::new(IntVect::ZERO, IntVect::new(3, 1, 1));
        let fdata: alloc::vec::Vec<f64> = (0..16).map(f64::from).collect();
        let fine = Array4::new(&fdata, fbx, 1);
        let cbx = IndexBox::new(IntVect::ZERO, IntVect::new(1, 0, 0));
        let mut cdata = [0.0; 2];
        let mut crse = Array4Mut::new(&mut cdata, cbx, 1);
        mean(&mut crse, fine, &cbx, IntVect::splat(2));
        // Cell 0 covers i in {0,1}, j, k in {0,1}: values 0,1,4,5,8,9,12,13.
        assert_eq!(cdata, [6.5, 8.5]);
    }
}
