//! `CellConsLinear`: conservative linear interpolation with limited slopes (AMReX's
//! `CellConservativeLinear`, `cell_cons_interp` and `lincc_interp`).

use alloc::vec;
use alloc::vec::Vec;

use amrex_array4::{Array4, Array4Mut};
use amrex_box::{IndexBox, IntVect};
use amrex_geometry::Geometry;

use super::{Centring, Interpolater, grow_sides, off, split};

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
#[inline]
fn mc(um: f64, u: f64, up: f64) -> (f64, f64) {
    let dc = 0.5 * (up - um);
    let df = 2.0 * (up - u);
    let db = 2.0 * (u - um);
    let s = if df * db >= 0.0 {
        df.abs().min(db.abs())
    } else {
        0.0
    };
    (1.0_f64.copysign(dc) * s.min(dc.abs()), dc)
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

/// The coarse rows around `(j, k)` of one component: `rows[dk][dj]` is row
/// `(j + dj - 1, k + dk - 1)`, or row `(j, k)` itself in a direction not interpolated in.
struct Rows<'a> {
    rows: [[&'a [f64]; 3]; 3],
}

impl<'a> Rows<'a> {
    fn new(crse: &Array4<'a, f64>, j: i32, k: i32, n: usize, active: [bool; 3]) -> Self {
        let at = |d: i32, on: bool| if on { d } else { 0 };
        let rows = core::array::from_fn(|dk| {
            core::array::from_fn(|dj| {
                let (dj, dk) = (dj as i32 - 1, dk as i32 - 1);
                crse.row(j + at(dj, active[1]), k + at(dk, active[2]), n)
            })
        });
        Self { rows }
    }

    #[inline]
    fn at(&self, dj: usize, dk: usize) -> &'a [f64] {
        self.rows[dk][dj]
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
        let active = [rx > 1, ry > 1, rz > 1];
        // AMReX's Real(ratio - 1) / Real(2 ratio): a slope's largest excursion.
        let reach = ratio
            .to_array()
            .map(|r| f64::from(r - 1) / f64::from(2 * r));
        let rzg = fine_geom.filter(|g| g.coord().is_rz()).map(|g| Rz {
            drf: g.cell_size()[0],
            rlo: g.prob_lo()[0],
        });
        let (lo, hi) = (fine_region.lo(), fine_region.hi());
        let cs = fine_region.coarsen_iv(ratio);
        let ncx = usize::try_from(cs.length()[0]).expect("non-empty region");
        let nfx = usize::try_from(hi[0] - lo[0] + 1).expect("non-empty region");
        // Per fine i: the coarse cell's position in the slope rows and the offset.
        let mut icx = Vec::with_capacity(nfx);
        let mut xoff = Vec::with_capacity(nfx);
        for i in lo[0]..=hi[0] {
            let (ic, io) = split(i, rx);
            icx.push(off(ic, cs.lo()[0]));
            xoff.push(match rzg {
                Some(g) => g.offset(ic, i, i + 1, rx),
                None => (f64::from(io) + 0.5) / f64::from(rx) - 0.5,
            });
        }
        let (cx0, fx0) = (
            off(cs.lo()[0], crse.begin()[0]),
            off(lo[0], fine.begin()[0]),
        );
        let xs: [usize; 3] = if active[0] { [0, 1, 2] } else { [1, 1, 1] };
        let (js, ks): ([usize; 3], [usize; 3]) = (
            if active[1] { [0, 1, 2] } else { [1, 1, 1] },
            if active[2] { [0, 1, 2] } else { [1, 1, 1] },
        );
        // slopes[(d * ncomp + n) * ncx + ic]; sf: the cross-component factors.
        let mut slopes = vec![0.0; 3 * ncomp * ncx];
        let mut sf = vec![[1.0_f64; 3]; ncx];
        for kc in cs.lo()[2]..=cs.hi()[2] {
            for jc in cs.lo()[1]..=cs.hi()[1] {
                sf.iter_mut().for_each(|s| *s = [1.0; 3]);
                for n in 0..ncomp {
                    let rows = Rows::new(&crse, jc, kc, n, active);
                    let u0 = rows.at(1, 1);
                    for ic in 0..ncx {
                        let p = cx0 + ic;
                        let u = u0[p];
                        // (limited, centred) per direction; zero where not interpolated.
                        let s: [(f64, f64); 3] = [
                            if active[0] {
                                mc(u0[p - 1], u, u0[p + 1])
                            } else {
                                (0.0, 0.0)
                            },
                            if active[1] {
                                mc(rows.at(0, 1)[p], u, rows.at(2, 1)[p])
                            } else {
                                (0.0, 0.0)
                            },
                            if active[2] {
                                mc(rows.at(1, 0)[p], u, rows.at(1, 2)[p])
                            } else {
                                (0.0, 0.0)
                            },
                        ];
                        if self.do_linear_limiting {
                            for d in 0..3 {
                                let (sl, dc) = s[d];
                                if dc != 0.0 {
                                    sf[ic][d] = sf[ic][d].min(sl / dc);
                                }
                                slopes[(d * ncomp + n) * ncx + ic] = dc;
                            }
                            continue;
                        }
                        let mut alpha = 1.0;
                        let (sx, sy, sz) = (s[0].0, s[1].0, s[2].0);
                        if sx != 0.0 || sy != 0.0 || sz != 0.0 {
                            let trans = sy.abs() * reach[1] + sz.abs() * reach[2];
                            let (dumax, dumin) = match rzg {
                                Some(g) => {
                                    let ci = cs.lo()[0] + ic as i32;
                                    let xlo = g.offset(ci, ci * rx, ci * rx + 1, rx);
                                    let xhi = g.offset(ci, (ci + 1) * rx - 1, (ci + 1) * rx, rx);
                                    (
                                        (sx * xlo).max(sx * xhi) + trans,
                                        -(sx * xlo).min(sx * xhi) + trans,
                                    )
                                }
                                None => {
                                    let d = sx.abs() * reach[0] + trans;
                                    (d, d)
                                }
                            };
                            let (mut umin, mut umax) = (u, u);
                            for &dk in &ks {
                                for &dj in &js {
                                    let r = rows.at(dj, dk);
                                    for &di in &xs {
                                        let v = r[p + di - 1];
                                        umin = umin.min(v);
                                        umax = umax.max(v);
                                    }
                                }
                            }
                            if dumax * alpha > umax - u {
                                alpha = (umax - u) / dumax;
                            }
                            if dumin * alpha > u - umin {
                                alpha = (u - umin) / dumin;
                            }
                        }
                        for (d, &(sl, _)) in s.iter().enumerate() {
                            slopes[(d * ncomp + n) * ncx + ic] = sl * alpha;
                        }
                    }
                }
                if self.do_linear_limiting {
                    for d in 0..3 {
                        for n in 0..ncomp {
                            let row = &mut slopes[(d * ncomp + n) * ncx..][..ncx];
                            for (s, f) in row.iter_mut().zip(&sf) {
                                *s *= f[d];
                            }
                        }
                    }
                }
                // The fine rows over this coarse row.
                let (jf0, jf1) = ((jc * ry).max(lo[1]), (jc * ry + ry - 1).min(hi[1]));
                let (kf0, kf1) = ((kc * rz).max(lo[2]), (kc * rz + rz - 1).min(hi[2]));
                for k in kf0..=kf1 {
                    let zoff = (f64::from(k - kc * rz) + 0.5) / f64::from(rz) - 0.5;
                    for j in jf0..=jf1 {
                        let yoff = (f64::from(j - jc * ry) + 0.5) / f64::from(ry) - 0.5;
                        for n in 0..ncomp {
                            let c = &crse.row(jc, kc, n)[cx0..cx0 + ncx];
                            let sx = &slopes[n * ncx..][..ncx];
                            let sy = &slopes[(ncomp + n) * ncx..][..ncx];
                            let sz = &slopes[(2 * ncomp + n) * ncx..][..ncx];
                            let f = &mut fine.row_mut(j, k, n)[fx0..fx0 + nfx];
                            for ((f, &ic), &xo) in f.iter_mut().zip(&icx).zip(&xoff) {
                                *f = c[ic] + xo * sx[ic] + yoff * sy[ic] + zoff * sz[ic];
                            }
                        }
                    }
                }
            }
        }
    }
}
