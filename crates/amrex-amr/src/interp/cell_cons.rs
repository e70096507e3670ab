//! `CellConsLinear`: conservative linear interpolation with limited slopes (AMReX's
//! `CellConservativeLinear`, `cell_cons_interp` and `lincc_interp`).

use alloc::vec;
use alloc::vec::Vec;

use amrex_array4::{Array4, Array4Mut};
use amrex_box::{IndexBox, IntVect};
use amrex_geometry::Geometry;

use super::{Centring, Interpolater, grow_sides, off};

/// Conservative linear interpolation of cell-centred data, AMReX's
/// `CellConservativeLinear`: each coarse cell gets a slope per direction, and its fine
/// cells take `crse + xoff·sx + yoff·sy + zoff·sz`, the offsets being the fine cell
/// centres' distances from the coarse centre in coarse cell widths. The offsets of the
/// fine cells of a coarse cell sum to zero, so **the mean of the fine values over each
/// coarse cell is the coarse value** (to round-off), and a linear function is
/// reproduced exactly where no limiter acts.
///
/// The slopes start from the centred difference `(u₊ - u₋) / 2`, limited by the
/// monotonised-central (MC) rule `min(|2(u₊ - u)|, |2(u - u₋)|, |centred|)` (zero at an
/// extremum). Then, as AMReX's two variants do:
///
/// - `do_linear_limiting = true` ([`LINCC_INTERP`](Self::LINCC_INTERP), AMReX's
///   `lincc_interp` and the constructor's default): per direction, every component's
///   **unlimited** slope is multiplied by the smallest ratio of limited to unlimited slope
///   over the components, so the components keep their relations (AMReX's
///   `mf_cell_cons_lin_interp_llslope`).
/// - `do_linear_limiting = false` ([`CELL_CONS_INTERP`](Self::CELL_CONS_INTERP), AMReX's
///   `cell_cons_interp`): each component keeps its MC-limited slopes, scaled down further
///   so that no fine value goes beyond the minimum or maximum of the 3×3×3 coarse
///   neighbourhood (AMReX's `mf_cell_cons_lin_interp_mcslope`).
///
/// With an RZ `fine_geom`, the offsets in r are volume-weighted (AMReX's two-dimensional
/// `_rz` kernels), so the fine values conserve `Σ value · volume`. Spherical geometries
/// take the Cartesian offsets, as AMReX's two-dimensional build does.
///
/// Directions with ratio 1 are not interpolated in: they get no slope, and neither the
/// coarse box nor the limiter's neighbourhood reaches past the fine region's own coarse
/// cells there. A two-dimensional problem (one cell in z, ratio 1 in z) therefore gets
/// AMReX's two-dimensional results, and needs no coarse ghost cells in z. (AMReX's 3-D
/// build, given ratio 1 in a direction, still widens the limiter's neighbourhood there.)
///
/// Physical boundaries are not built yet: the slopes are centred everywhere (AMReX's
/// one-sided slopes at `ext_dir` and `hoextrap` domain faces are not there).
///
/// ```
/// use amrex_amr::{CellConsLinear, Comps, Interpolater};
/// use amrex_array4::{Array4, Array4Mut};
/// use amrex_box::{IndexBox, IntVect};
///
/// // Coarse u = 10 i, cells -1..=2 in x (one ghost cell each side of 0..=1).
/// let cbx = IndexBox::new(IntVect::new(-1, 0, 0), IntVect::new(2, 0, 0));
/// let crse = [-10.0, 0.0, 10.0, 20.0];
/// let fbx = IndexBox::new(IntVect::ZERO, IntVect::new(3, 0, 0));
/// let mut fine = [0.0; 4];
/// CellConsLinear::CELL_CONS_INTERP.interp(Array4::new(&crse, cbx, 1),
///     Array4Mut::new(&mut fine, fbx, 1), &fbx, Comps::first(1), IntVect::new(2, 1, 1), None)?;
/// // The line through the coarse centres, at the fine centres.
/// assert_eq!(fine, [-2.5, 2.5, 7.5, 12.5]);
/// # Ok::<(), amrex_amr::AmrError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CellConsLinear {
    do_linear_limiting: bool,
}

impl Default for CellConsLinear {
    /// [`LINCC_INTERP`](Self::LINCC_INTERP), as AMReX's constructor defaults to.
    fn default() -> Self {
        Self::LINCC_INTERP
    }
}

impl CellConsLinear {
    /// AMReX's `cell_cons_interp`: per-component MC slopes kept within the coarse
    /// neighbourhood's bounds.
    pub const CELL_CONS_INTERP: Self = Self::new(false);
    /// AMReX's `lincc_interp`: slopes limited across components.
    pub const LINCC_INTERP: Self = Self::new(true);

    /// The interpolater with or without limiting across components (AMReX's
    /// `CellConservativeLinear(do_linear_limiting)`).
    #[must_use]
    pub const fn new(do_linear_limiting: bool) -> Self {
        Self { do_linear_limiting }
    }

    /// Whether slopes are limited across components.
    #[must_use]
    pub const fn do_linear_limiting(&self) -> bool {
        self.do_linear_limiting
    }
}

/// The MC-limited slope and the centred one from `u₋, u, u₊`.
///
/// The minima are comparisons rather than `f64::min` (which would add a NaN blend) and
/// give the same values: `|df|` and `|db|` are not NaN where `df · db >= 0`, `s` is
/// never NaN, a NaN `|dc|` leaves `s` (as `f64::min` does), and equal absolute values
/// have equal bits.
#[inline]
fn mc(um: f64, u: f64, up: f64) -> (f64, f64) {
    let dc = 0.5 * (up - um);
    let df = 2.0 * (up - u);
    let db = 2.0 * (u - um);
    let (af, ab, ac) = (df.abs(), db.abs(), dc.abs());
    let s = if df * db >= 0.0 {
        if ab < af { ab } else { af }
    } else {
        0.0
    };
    (1.0_f64.copysign(dc) * if ac < s { ac } else { s }, dc)
}

/// The r-geometry of an RZ fine level: the fine cell width in r and the low r edge.
#[derive(Clone, Copy)]
struct Rz {
    drf: f64,
    rlo: f64,
}

impl Rz {
    /// `0.5 ((r_fm² + r_fp²) - (r_cm² + r_cp²)) / (r_cp² - r_cm²)` for the coarse cell
    /// `ic` and the fine cell between the fine edges `fm` and `fp` (fine indices): the
    /// fine cell's volume-weighted offset in coarse widths.
    fn offset(self, ic: i32, fm: i32, fp: i32, rx: i32) -> f64 {
        let drc = self.drf * f64::from(rx);
        let rcm = f64::from(ic) * drc + self.rlo;
        let rcp = f64::from(ic + 1) * drc + self.rlo;
        let rfm = f64::from(fm) * self.drf + self.rlo;
        let rfp = f64::from(fp) * self.drf + self.rlo;
        let (vcm, vcp) = (rcm * rcm, rcp * rcp);
        let (vfm, vfp) = (rfm * rfm, rfp * rfp);
        0.5 * ((vfm + vfp) - (vcm + vcp)) / (vcp - vcm)
    }
}

/// `(d + ½) / r - ½`: the centre of the fine cell `d` (`0..r`) of a coarse cell from the
/// coarse centre, in coarse widths.
#[inline]
fn frac(d: i32, r: i32) -> f64 {
    (f64::from(d) + 0.5) / f64::from(r) - 0.5
}

/// The coarse cells of a fill along x: where they are and the fine offsets in them.
struct Frame {
    /// Coarse cells per row.
    ncx: usize,
    /// The ratio in x.
    rx: usize,
    /// The first coarse cell's index in the coarse data's rows.
    cx0: usize,
    /// 1 in the directions interpolated in (ratio above 1), else 0.
    shift: [i32; 3],
    /// AMReX's `Real(ratio - 1) / Real(2 ratio)`: a slope's largest excursion.
    reach: [f64; 3],
    /// Per fine cell of the coarse cells along x (`rx` per coarse cell): its offset.
    xoff: Vec<f64>,
    /// RZ: per coarse cell, the offsets of its lowest and highest fine cells (the
    /// limiter's excursions); empty in Cartesian coordinates.
    xlim: Vec<[f64; 2]>,
}

impl Frame {
    fn new(cs: &IndexBox, ratio: IntVect, rzg: Option<Rz>, cx0: usize) -> Self {
        let rx = ratio[0];
        let mut xoff = Vec::new();
        let mut xlim = Vec::new();
        for ic in cs.lo()[0]..=cs.hi()[0] {
            for io in 0..rx {
                let i = ic * rx + io;
                xoff.push(match rzg {
                    Some(g) => g.offset(ic, i, i + 1, rx),
                    None => frac(io, rx),
                });
            }
            if let Some(g) = rzg {
                xlim.push([
                    g.offset(ic, ic * rx, ic * rx + 1, rx),
                    g.offset(ic, (ic + 1) * rx - 1, (ic + 1) * rx, rx),
                ]);
            }
        }
        Self {
            ncx: usize::try_from(cs.length()[0]).expect("non-empty region"),
            rx: usize::try_from(rx).expect("ratio >= 1"),
            cx0,
            shift: ratio.to_array().map(|r| i32::from(r > 1)),
            reach: ratio
                .to_array()
                .map(|r| f64::from(r - 1) / f64::from(2 * r)),
            xoff,
            xlim,
        }
    }

    /// The coarse row `(jc, kc)` of component `n` over the fill's cells and its
    /// neighbours: `[u, (below, above) in x, in y, in z]`, each `ncx` long (the row itself
    /// for both in a direction not interpolated in, which takes no slope).
    fn cross<'a>(
        &self,
        crse: &Array4<'a, f64>,
        (jc, kc, n): (i32, i32, usize),
    ) -> (&'a [f64], [[&'a [f64]; 2]; 3]) {
        let (c0, ncx) = (self.cx0, self.ncx);
        let [sx, sy, sz] = self.shift;
        let r = crse.row(jc, kc, n);
        let u = &r[c0..c0 + ncx];
        let row = |j: i32, k: i32| &crse.row(j, k, n)[c0..c0 + ncx];
        let x = if sx == 1 {
            [&r[c0 - 1..c0 - 1 + ncx], &r[c0 + 1..c0 + 1 + ncx]]
        } else {
            [u, u]
        };
        let y = if sy == 1 {
            [row(jc - 1, kc), row(jc + 1, kc)]
        } else {
            [u, u]
        };
        let z = if sz == 1 {
            [row(jc, kc - 1), row(jc, kc + 1)]
        } else {
            [u, u]
        };
        (u, [x, y, z])
    }
}

/// `LINCC_INTERP`'s scratch rows, allocated once per fab: three rows (x, y, z) of `ncx`
/// each.
struct Scratch {
    /// The limited slopes.
    sl: Vec<f64>,
    /// The limiting factors.
    sf: Vec<f64>,
}

impl Scratch {
    fn new(ncx: usize) -> Self {
        Self {
            sl: vec![0.0; 3 * ncx],
            sf: vec![0.0; 3 * ncx],
        }
    }
}

/// `(sl, dc)` = [`mc`] of `(um, u, up)`, element by element.
fn mc_row(um: &[f64], u: &[f64], up: &[f64], sl: &mut [f64], dc: &mut [f64]) {
    let outs = sl.iter_mut().zip(dc.iter_mut());
    for ((s, c), ((&um, &u), &up)) in outs.zip(um.iter().zip(u).zip(up)) {
        (*s, *c) = mc(um, u, up);
    }
}

/// How the neighbourhood bounds compare two values.
trait Order {
    fn min(a: f64, b: f64) -> f64;
    fn max(a: f64, b: f64) -> f64;
}

/// `f64::min` and `f64::max`: a NaN counts only when both are NaN.
struct WithNan;

impl Order for WithNan {
    #[inline]
    fn min(a: f64, b: f64) -> f64 {
        a.min(b)
    }
    #[inline]
    fn max(a: f64, b: f64) -> f64 {
        a.max(b)
    }
}

/// Plain comparisons (one `minpd`/`maxpd`, no NaN blend): the same values as
/// [`WithNan`] for data that hold no NaN.
struct NoNan;

impl Order for NoNan {
    #[inline]
    fn min(a: f64, b: f64) -> f64 {
        if b < a { b } else { a }
    }
    #[inline]
    fn max(a: f64, b: f64) -> f64 {
        if b > a { b } else { a }
    }
}

/// `out = min(a, b, c)` element by element.
fn min3<O: Order>(out: &mut [f64], a: &[f64], b: &[f64], c: &[f64]) {
    for (o, ((&a, &b), &c)) in out.iter_mut().zip(a.iter().zip(b).zip(c)) {
        *o = O::min(O::min(a, b), c);
    }
}

/// `out = max(a, b, c)` element by element.
fn max3<O: Order>(out: &mut [f64], a: &[f64], b: &[f64], c: &[f64]) {
    for (o, ((&a, &b), &c)) in out.iter_mut().zip(a.iter().zip(b).zip(c)) {
        *o = O::max(O::max(a, b), c);
    }
}

/// Whether `r` holds a NaN.
fn has_nan(r: &[f64]) -> bool {
    r.iter().fold(false, |any, v| any | v.is_nan())
}

/// The minimum and maximum of the coarse data over each coarse cell's 3×3×3
/// neighbourhood (one cell wide in a direction not interpolated in), computed separably:
/// over `i` for every coarse row of a plane, then over `j` into the plane's bounds
/// (three planes kept, by `k mod 3`), then over `k` for one row at a time. `f64::min`
/// and `f64::max` give a set's minimum and maximum whatever the order (ignoring NaN
/// unless all are NaN), so these are the values a cell-by-cell loop finds; coarse data
/// without NaN take plain comparisons, which give the same values. (A set that holds
/// both `0` and `-0` may give either.)
struct Bounds {
    ncx: usize,
    ncy: usize,
    ncomp: usize,
    /// Whether the coarse data hold a NaN ([`WithNan`] then, else [`NoNan`]).
    nan: bool,
    /// `[slot][min, max][n][jr][ic]`: a plane's bounds over `i` and `j`.
    planes: Vec<f64>,
    /// `[min, max][jr][ic]`: a plane's rows' bounds over `i` (one more row each side
    /// where y is interpolated in).
    rows: Vec<f64>,
    /// `[min, max][ic]`: one row's bounds.
    out: Vec<f64>,
}

impl Bounds {
    fn new(cs: &IndexBox, ncomp: usize, shift: [i32; 3], nan: bool) -> Self {
        let len = |d: usize| usize::try_from(cs.length()[d]).expect("non-empty region");
        let (ncx, ncy) = (len(0), len(1));
        let ny = ncy + 2 * usize::from(shift[1] == 1);
        Self {
            ncx,
            ncy,
            ncomp,
            nan,
            planes: vec![0.0; 3 * 2 * ncomp * ncy * ncx],
            rows: vec![0.0; 2 * ny * ncx],
            out: vec![0.0; 2 * ncx],
        }
    }

    /// The slot of plane `k`.
    fn slot(k: i32) -> usize {
        usize::try_from(k.rem_euclid(3)).expect("0..3")
    }

    /// Where row `jr` of plane `k`'s minima (`m = 0`) or maxima (`m = 1`) of component
    /// `n` starts.
    fn at(&self, k: i32, m: usize, n: usize, jr: usize) -> usize {
        (((Self::slot(k) * 2 + m) * self.ncomp + n) * self.ncy + jr) * self.ncx
    }

    /// The bounds of plane `k` of component `n`, over the coarse rows `cs` covers.
    fn plane(&mut self, crse: &Array4<'_, f64>, cs: &IndexBox, frame: &Frame, k: i32, n: usize) {
        if self.nan {
            self.plane_with::<WithNan>(crse, cs, frame, k, n);
        } else {
            self.plane_with::<NoNan>(crse, cs, frame, k, n);
        }
    }

    fn plane_with<O: Order>(
        &mut self,
        crse: &Array4<'_, f64>,
        cs: &IndexBox,
        frame: &Frame,
        k: i32,
        n: usize,
    ) {
        let [sx, sy, _] = frame.shift;
        let (ncx, c0) = (self.ncx, frame.cx0);
        let (ax, ay) = (usize::from(sx == 1), usize::from(sy == 1));
        let (pmin, pmax) = (self.at(k, 0, n, 0), self.at(k, 1, n, 0));
        let half = self.rows.len() / 2;
        let (rmin, rmax) = self.rows.split_at_mut(half);
        let rows = rmin.chunks_exact_mut(ncx).zip(rmax.chunks_exact_mut(ncx));
        for ((mn, mx), j) in rows.zip(cs.lo()[1] - sy..=cs.hi()[1] + sy) {
            let r = crse.row(j, k, n);
            let [a, b, c] = [c0 - ax, c0, c0 + ax].map(|s| &r[s..s + ncx]);
            min3::<O>(mn, a, b, c);
            max3::<O>(mx, a, b, c);
        }
        let size = self.ncy * ncx;
        for (m, src, dst) in [(0, &*rmin, pmin), (1, &*rmax, pmax)] {
            let plane = &mut self.planes[dst..dst + size];
            for (jr, p) in plane.chunks_exact_mut(ncx).enumerate() {
                let [a, b, c] = [jr, jr + ay, jr + 2 * ay].map(|r| &src[r * ncx..][..ncx]);
                if m == 0 {
                    min3::<O>(p, a, b, c);
                } else {
                    max3::<O>(p, a, b, c);
                }
            }
        }
    }

    /// `[min, max]` over the neighbourhoods of coarse row `jr` (from the region's first)
    /// of plane `kc`, component `n`; planes `kc - sz ..= kc + sz` must have been
    /// computed (`sz`: 1 where z is interpolated in, else 0).
    fn around(&mut self, kc: i32, jr: usize, n: usize, sz: i32) -> [&[f64]; 2] {
        let ncx = self.ncx;
        let at = [0, 1].map(|m| [kc - sz, kc, kc + sz].map(|k| self.at(k, m, n, jr)));
        let planes = &self.planes;
        let row = |m: usize, k: usize| &planes[at[m][k]..][..ncx];
        let [lo, mid, hi] = [0, 1, 2];
        let (omin, omax) = self.out.split_at_mut(ncx);
        if self.nan {
            min3::<WithNan>(omin, row(0, lo), row(0, mid), row(0, hi));
            max3::<WithNan>(omax, row(1, lo), row(1, mid), row(1, hi));
        } else {
            min3::<NoNan>(omin, row(0, lo), row(0, mid), row(0, hi));
            max3::<NoNan>(omax, row(1, lo), row(1, mid), row(1, hi));
        }
        [omin, omax]
    }
}

/// `LINCC_INTERP`'s slopes of the coarse row `(jc, kc)`, every component: the centred
/// slopes times, per direction and cell, the smallest ratio of limited to centred slope
/// over the components.
fn lincc_row(
    crse: &Array4<'_, f64>,
    frame: &Frame,
    (jc, kc): (i32, i32),
    slopes: &mut [f64],
    w: &mut Scratch,
) {
    let ncx = frame.ncx;
    let ncomp = slopes.len() / (3 * ncx);
    let (sl, sf) = (&mut w.sl, &mut w.sf);
    sf.fill(1.0);
    for n in 0..ncomp {
        let (u, nb) = frame.cross(crse, (jc, kc, n));
        for (d, [um, up]) in nb.into_iter().enumerate() {
            let dc = &mut slopes[(d * ncomp + n) * ncx..][..ncx];
            if frame.shift[d] == 0 {
                dc.fill(0.0);
                continue;
            }
            let sl = &mut sl[d * ncx..][..ncx];
            mc_row(um, u, up, sl, dc);
            let f = &mut sf[d * ncx..][..ncx];
            for ((f, &s), &c) in f.iter_mut().zip(&*sl).zip(&*dc) {
                if c != 0.0 {
                    *f = f.min(s / c);
                }
            }
        }
    }
    for d in 0..3 {
        let f = &sf[d * ncx..][..ncx];
        for n in 0..ncomp {
            for (s, &f) in slopes[(d * ncomp + n) * ncx..][..ncx].iter_mut().zip(f) {
                *s *= f;
            }
        }
    }
}

/// `CELL_CONS_INTERP`'s slopes of the coarse row `(jc, kc)`, component `n`: the MC
/// slopes, scaled by one factor per cell so that no fine value leaves the bounds
/// `[umin, umax]` of the cell's neighbourhood. One pass over the row.
fn mc_limited_row(
    crse: &Array4<'_, f64>,
    frame: &Frame,
    (jc, kc, n): (i32, i32, usize),
    [umin, umax]: [&[f64]; 2],
    slopes: &mut [f64],
) {
    let ncx = frame.ncx;
    let ncomp = slopes.len() / (3 * ncx);
    let (u, [[xm, xp], [ym, yp], [zm, zp]]) = frame.cross(crse, (jc, kc, n));
    let mut outs = slopes.chunks_exact_mut(ncx).skip(n).step_by(ncomp);
    let mut out = || outs.next().expect("three slope rows per component");
    let (ox, oy, oz) = (out(), out(), out());
    let cells = u.iter().zip(umin).zip(umax);
    let nbrs = xm
        .iter()
        .zip(xp)
        .zip(ym.iter().zip(yp))
        .zip(zm.iter().zip(zp));
    let outs = ox.iter_mut().zip(oy.iter_mut()).zip(oz.iter_mut());
    let rows = cells.zip(nbrs).zip(outs);
    // In a direction not interpolated in, both neighbours are the row itself, and
    // `mc(u, u, u)` is the zero slope there for a finite `u`; for an infinite or NaN `u`
    // it may be `-0` or come with a NaN centred slope, but the cell's fine values are `u`
    // itself (its non-finite value plus zeros) either way.
    #[inline(always)]
    fn cell(
        [u, umin, umax]: [f64; 3],
        [xm, xp, ym, yp, zm, zp]: [f64; 6],
        reach: [f64; 3],
        xlim: Option<[f64; 2]>,
    ) -> [f64; 3] {
        let s = [mc(xm, u, xp).0, mc(ym, u, yp).0, mc(zm, u, zp).0];
        let alpha = mc_alpha([u, umin, umax], s, reach, xlim);
        s.map(|s| s * alpha)
    }
    let r = frame.reach;
    if frame.xlim.is_empty() {
        for ((((&u, &umin), &umax), (((&xm, &xp), (&ym, &yp)), (&zm, &zp))), ((ox, oy), oz)) in rows
        {
            [*ox, *oy, *oz] = cell([u, umin, umax], [xm, xp, ym, yp, zm, zp], r, None);
        }
    } else {
        for (
            ((((&u, &umin), &umax), (((&xm, &xp), (&ym, &yp)), (&zm, &zp))), ((ox, oy), oz)),
            &xlim,
        ) in rows.zip(&frame.xlim)
        {
            [*ox, *oy, *oz] = cell([u, umin, umax], [xm, xp, ym, yp, zm, zp], r, Some(xlim));
        }
    }
}

/// The scale of one cell's MC slopes `s` that keeps its fine values within the bounds
/// `[umin, umax]` of its neighbourhood (`u` the cell's value; `xlim` the RZ offsets of
/// its lowest and highest fine cells in r): 1, made smaller where the largest excursion
/// up, then down, would pass them (`dumax · 1 == dumax`); 1 for a cell without slopes.
#[inline]
fn mc_alpha(
    [u, umin, umax]: [f64; 3],
    [sx, sy, sz]: [f64; 3],
    r: [f64; 3],
    xlim: Option<[f64; 2]>,
) -> f64 {
    let trans = sy.abs() * r[1] + sz.abs() * r[2];
    let (dumax, dumin) = match xlim {
        Some([xlo, xhi]) => (
            (sx * xlo).max(sx * xhi) + trans,
            -(sx * xlo).min(sx * xhi) + trans,
        ),
        None => {
            let d = sx.abs() * r[0] + trans;
            (d, d)
        }
    };
    let up = if dumax > umax - u {
        (umax - u) / dumax
    } else {
        1.0
    };
    let down = if dumin * up > u - umin {
        (u - umin) / dumin
    } else {
        up
    };
    if sx != 0.0 || sy != 0.0 || sz != 0.0 {
        down
    } else {
        1.0
    }
}

/// `out[m] = c[ic] + xoff[m] · sx[ic]` for the `r` fine cells `m` of each coarse cell
/// `ic` (`r = out.len() / c.len()`).
fn expand(out: &mut [f64], c: &[f64], sx: &[f64], xoff: &[f64]) {
    fn chunks<const R: usize>(out: &mut [f64], c: &[f64], sx: &[f64], xoff: &[f64]) {
        let fine = out.as_chunks_mut::<R>().0.iter_mut();
        for ((o, xo), (&c, &sx)) in fine.zip(xoff.as_chunks::<R>().0).zip(c.iter().zip(sx)) {
            *o = core::array::from_fn(|m| c + xo[m] * sx);
        }
    }
    match out.len() / c.len() {
        2 => chunks::<2>(out, c, sx, xoff),
        4 => chunks::<4>(out, c, sx, xoff),
        r => {
            let fine = out.chunks_exact_mut(r).zip(xoff.chunks_exact(r));
            for ((o, xo), (&c, &sx)) in fine.zip(c.iter().zip(sx)) {
                for (o, &x) in o.iter_mut().zip(xo) {
                    *o = c + x * sx;
                }
            }
        }
    }
}

/// `out[m] = s[ic]` for the `r` fine cells `m` of each coarse cell `ic`.
fn spread(out: &mut [f64], s: &[f64]) {
    fn chunks<const R: usize>(out: &mut [f64], s: &[f64]) {
        for (o, &s) in out.as_chunks_mut::<R>().0.iter_mut().zip(s) {
            *o = [s; R];
        }
    }
    match out.len() / s.len() {
        2 => chunks::<2>(out, s),
        4 => chunks::<4>(out, s),
        r => {
            for (o, &s) in out.chunks_exact_mut(r).zip(s) {
                o.fill(s);
            }
        }
    }
}

/// One fine row: `f = cx + yoff · sy + zoff · sz`, the parts per fine cell.
fn fine_row(f: &mut [f64], [cx, sy, sz]: [&[f64]; 3], yoff: f64, zoff: f64) {
    for (f, ((&cx, &sy), &sz)) in f.iter_mut().zip(cx.iter().zip(sy).zip(sz)) {
        *f = cx + yoff * sy + zoff * sz;
    }
}

impl Interpolater for CellConsLinear {
    fn name(&self) -> &'static str {
        "CellConsLinear"
    }

    fn centring(&self) -> Centring {
        Centring::Cell
    }

    /// The fine region coarsened and grown by one cell in every direction whose ratio
    /// is above 1 (AMReX's `CellConservativeLinear::CoarseBox` grows in all).
    fn coarse_box(&self, fine_region: &IndexBox, ratio: IntVect) -> IndexBox {
        let mut b = fine_region.coarsen_iv(ratio);
        for d in 0..3 {
            b = grow_sides(b, d, ratio[d] > 1, ratio[d] > 1);
        }
        b
    }

    fn fill(
        &self,
        crse: Array4<'_, f64>,
        mut fine: Array4Mut<'_, f64>,
        fine_region: &IndexBox,
        ratio: IntVect,
        fine_geom: Option<&Geometry>,
    ) {
        let ncomp = fine.ncomp();
        let [rx, ry, rz] = ratio.to_array();
        let rzg = fine_geom.filter(|g| g.coord().is_rz()).map(|g| Rz {
            drf: g.cell_size()[0],
            rlo: g.prob_lo()[0],
        });
        let (lo, hi) = (fine_region.lo(), fine_region.hi());
        let cs = fine_region.coarsen_iv(ratio);
        let frame = Frame::new(&cs, ratio, rzg, off(cs.lo()[0], crse.begin()[0]));
        let (ncx, rxu) = (frame.ncx, frame.rx);
        let nfx = usize::try_from(hi[0] - lo[0] + 1).expect("non-empty region");
        // The region's fine row is `head .. head + nfx` of the fine cells of its coarse
        // cells (`rx` per coarse cell).
        let head = off(lo[0], cs.lo()[0] * rx);
        let fx0 = off(lo[0], fine.begin()[0]);
        // slopes[(d * ncomp + n) * ncx + ic].
        let mut slopes = vec![0.0; 3 * ncomp * ncx];
        let mut scratch = self.do_linear_limiting.then(|| Scratch::new(ncx));
        let mut padded = vec![0.0; 3 * ncx * rxu];
        let mut bounds = (!self.do_linear_limiting).then(|| {
            let cb = self.coarse_box(fine_region, ratio);
            let x0 = off(cb.lo()[0], crse.begin()[0]);
            let nx = usize::try_from(cb.length()[0]).expect("non-empty region");
            let nan = (0..ncomp).any(|n| {
                (cb.lo()[2]..=cb.hi()[2]).any(|k| {
                    (cb.lo()[1]..=cb.hi()[1]).any(|j| has_nan(&crse.row(j, k, n)[x0..x0 + nx]))
                })
            });
            Bounds::new(&cs, ncomp, frame.shift, nan)
        });
        // The fine offsets in y and z, per position in the coarse cell.
        let yoffs: Vec<f64> = (0..ry).map(|d| frac(d, ry)).collect();
        let zoffs: Vec<f64> = (0..rz).map(|d| frac(d, rz)).collect();
        let az = frame.shift[2];
        for kc in cs.lo()[2]..=cs.hi()[2] {
            if let Some(b) = bounds.as_mut() {
                // The planes kc - 1 ..= kc + 1 of the neighbourhood bounds (kc alone where z
                // is not interpolated in); the earlier ones are kept from the last kc.
                let first = if kc == cs.lo()[2] { kc - az } else { kc + az };
                for k in first..=kc + az {
                    for n in 0..ncomp {
                        b.plane(&crse, &cs, &frame, k, n);
                    }
                }
            }
            for jc in cs.lo()[1]..=cs.hi()[1] {
                let jr = off(jc, cs.lo()[1]);
                if let Some(w) = scratch.as_mut() {
                    lincc_row(&crse, &frame, (jc, kc), &mut slopes, w);
                } else if let Some(b) = bounds.as_mut() {
                    for n in 0..ncomp {
                        let lim = b.around(kc, jr, n, az);
                        mc_limited_row(&crse, &frame, (jc, kc, n), lim, &mut slopes);
                    }
                }
                // The fine rows over this coarse row, a component at a time.
                let (jf0, jf1) = ((jc * ry).max(lo[1]), (jc * ry + ry - 1).min(hi[1]));
                let (kf0, kf1) = ((kc * rz).max(lo[2]), (kc * rz + rz - 1).min(hi[2]));
                for n in 0..ncomp {
                    let c = &crse.row(jc, kc, n)[frame.cx0..frame.cx0 + ncx];
                    let at = |d: usize| &slopes[(d * ncomp + n) * ncx..][..ncx];
                    let (cxp, rest) = padded.split_at_mut(ncx * rxu);
                    let (syp, szp) = rest.split_at_mut(ncx * rxu);
                    expand(cxp, c, at(0), &frame.xoff);
                    spread(syp, at(1));
                    spread(szp, at(2));
                    let parts = [&*cxp, &*syp, &*szp].map(|p| &p[head..head + nfx]);
                    for k in kf0..=kf1 {
                        let zoff = zoffs[off(k, kc * rz)];
                        for j in jf0..=jf1 {
                            let yoff = yoffs[off(j, jc * ry)];
                            let f = &mut fine.row_mut(j, k, n)[fx0..fx0 + nfx];
                            fine_row(f, parts, yoff, zoff);
                        }
                    }
                }
            }
        }
    }
}
