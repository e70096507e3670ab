//! `CellConsLinear`'s row kernels against a plain cell-by-cell reference written here
//! (the same operations in the same order for every value), bit for bit: both limiters,
//! isotropic, anisotropic and ratio-1 directions, regions that start and end inside
//! coarse cells, thin ghost-like slabs, RZ and Cartesian geometry, one to three
//! components, and data with plateaus (zero slopes), extrema and smooth parts.
#![warn(clippy::cast_possible_truncation)]

mod common;

use amrex_amr::{CellConsLinear, Comps, Interpolater};
use amrex_array4::{Array4, Array4Mut};
use amrex_geometry::{CoordSys, Geometry, RealBox};
use amrex_multifab::{IndexBox, IntVect};
use common::noise;

/// A fab: its box, component count and data.
struct Fab {
    bx: IndexBox,
    ncomp: usize,
    data: Vec<f64>,
}

impl Fab {
    fn new(bx: IndexBox, ncomp: usize, f: impl Fn(IntVect, usize) -> f64) -> Self {
        let mut fab = Self {
            bx,
            ncomp,
            data: vec![0.0; bx.checked_num_pts_usize().unwrap() * ncomp],
        };
        fab.view_mut()
            .for_each_mut(bx, |i, j, k, n, v| *v = f(IntVect::new(i, j, k), n));
        fab
    }
    fn view(&self) -> Array4<'_, f64> {
        Array4::new(&self.data, self.bx, self.ncomp)
    }
    fn view_mut(&mut self) -> Array4Mut<'_, f64> {
        Array4Mut::new(&mut self.data, self.bx, self.ncomp)
    }
    fn get(&self, p: IntVect, n: usize) -> f64 {
        self.view()[(p, n)]
    }
    fn set(&mut self, p: IntVect, n: usize, v: f64) {
        self.view_mut()[(p, n)] = v;
    }
}

/// The MC-limited slope and the centred one.
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

/// The reference: every coarse cell's slopes on their own, then every fine cell.
fn reference(
    lincc: bool,
    crse: &Fab,
    fine: &mut Fab,
    region: IndexBox,
    r: IntVect,
    geom: Option<&Geometry>,
) {
    let ncomp = fine.ncomp;
    let active = [r[0] > 1, r[1] > 1, r[2] > 1];
    let reach = [0, 1, 2].map(|d| f64::from(r[d] - 1) / f64::from(2 * r[d]));
    let rz = geom
        .filter(|g| g.coord().is_rz())
        .map(|g| (g.cell_size()[0], g.prob_lo()[0]));
    let rz_off = |(drf, rlo): (f64, f64), ic: i32, fm: i32, fp: i32| {
        let drc = drf * f64::from(r[0]);
        let rcm = f64::from(ic) * drc + rlo;
        let rcp = f64::from(ic + 1) * drc + rlo;
        let rfm = f64::from(fm) * drf + rlo;
        let rfp = f64::from(fp) * drf + rlo;
        let (vcm, vcp) = (rcm * rcm, rcp * rcp);
        let (vfm, vfp) = (rfm * rfm, rfp * rfp);
        0.5 * ((vfm + vfp) - (vcm + vcp)) / (vcp - vcm)
    };
    let unit = |d: usize| {
        let mut e = IntVect::ZERO;
        if active[d] {
            e[d] = 1;
        }
        e
    };
    let window = |d: usize| if active[d] { -1..=1 } else { 0..=0 };
    let cs = region.coarsen_iv(r);
    // Per coarse cell, per component: the slopes.
    let mut slopes = std::collections::HashMap::new();
    for kc in cs.lo()[2]..=cs.hi()[2] {
        for jc in cs.lo()[1]..=cs.hi()[1] {
            for ic in cs.lo()[0]..=cs.hi()[0] {
                let c = IntVect::new(ic, jc, kc);
                let s: Vec<[(f64, f64); 3]> = (0..ncomp)
                    .map(|n| {
                        core::array::from_fn(|d| {
                            if active[d] {
                                let e = unit(d);
                                mc(crse.get(c - e, n), crse.get(c, n), crse.get(c + e, n))
                            } else {
                                (0.0, 0.0)
                            }
                        })
                    })
                    .collect();
                let out: Vec<[f64; 3]> = if lincc {
                    let mut sf = [1.0_f64; 3];
                    for sn in &s {
                        for d in 0..3 {
                            let (sl, dc) = sn[d];
                            if dc != 0.0 {
                                sf[d] = sf[d].min(sl / dc);
                            }
                        }
                    }
                    s.iter()
                        .map(|sn| core::array::from_fn(|d| sn[d].1 * sf[d]))
                        .collect()
                } else {
                    (0..ncomp)
                        .map(|n| {
                            let u = crse.get(c, n);
                            let (sx, sy, sz) = (s[n][0].0, s[n][1].0, s[n][2].0);
                            let mut alpha = 1.0;
                            if sx != 0.0 || sy != 0.0 || sz != 0.0 {
                                let trans = sy.abs() * reach[1] + sz.abs() * reach[2];
                                let (dumax, dumin) = match rz {
                                    Some(g) => {
                                        let xlo = rz_off(g, ic, ic * r[0], ic * r[0] + 1);
                                        let xhi =
                                            rz_off(g, ic, (ic + 1) * r[0] - 1, (ic + 1) * r[0]);
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
                                for dk in window(2) {
                                    for dj in window(1) {
                                        for di in window(0) {
                                            let v = crse.get(c + IntVect::new(di, dj, dk), n);
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
                            core::array::from_fn(|d| s[n][d].0 * alpha)
                        })
                        .collect()
                };
                slopes.insert(c, out);
            }
        }
    }
    let frac = |f: i32, c: i32, r: i32| (f64::from(f - c * r) + 0.5) / f64::from(r) - 0.5;
    for k in region.lo()[2]..=region.hi()[2] {
        for j in region.lo()[1]..=region.hi()[1] {
            for i in region.lo()[0]..=region.hi()[0] {
                let c = IntVect::new(i.div_euclid(r[0]), j.div_euclid(r[1]), k.div_euclid(r[2]));
                let xo = match rz {
                    Some(g) => rz_off(g, c[0], i, i + 1),
                    None => frac(i, c[0], r[0]),
                };
                let (yo, zo) = (frac(j, c[1], r[1]), frac(k, c[2], r[2]));
                for (n, s) in slopes[&c].iter().enumerate() {
                    let v = crse.get(c, n) + xo * s[0] + yo * s[1] + zo * s[2];
                    fine.set(IntVect::new(i, j, k), n, v);
                }
            }
        }
    }
}

/// Component 0 smooth with some noise, 1 pure noise (extrema everywhere), 2 plateaus
/// (many zero slopes and equal neighbours).
fn data(p: IntVect, n: usize) -> f64 {
    let x = p.to_array().map(f64::from);
    match n % 3 {
        0 => (0.4 * x[0]).sin() + 0.3 * x[1] - 0.2 * x[2] + 0.05 * noise(p, n),
        1 => noise(p, n) - 0.5,
        _ => (4.0 * noise(p, n)).floor(),
    }
}

/// Interpolates `region` with `interp` and with the reference from the same coarse data
/// (the coarse box grown by one cell, holding NaN there, so a read outside the coarse box
/// would show) into fine fabs two cells larger than the region (NaN outside it), and
/// compares every bit. With `holes`, about one coarse cell in twelve holds NaN (as the
/// coarse cells a two-level fill leaves unfilled do).
fn compare(
    lincc: bool,
    region: IndexBox,
    r: IntVect,
    ncomp: usize,
    geom: Option<&Geometry>,
    holes: bool,
) {
    let interp = CellConsLinear::new(lincc);
    let cbx = interp.coarse_box(&region, r);
    let crse = Fab::new(cbx.grow(1), ncomp, |p, n| {
        if !cbx.contains(p) || (holes && noise(p, n + 7) < 0.08) {
            f64::NAN
        } else {
            data(p, n)
        }
    });
    let fbx = region.grow(2);
    let mut got = Fab::new(fbx, ncomp, |_, _| f64::NAN);
    let mut want = Fab::new(fbx, ncomp, |_, _| f64::NAN);
    interp
        .interp(
            crse.view(),
            got.view_mut(),
            &region,
            Comps::first(ncomp),
            r,
            geom,
        )
        .unwrap();
    reference(lincc, &crse, &mut want, region, r, geom);
    let mut set = 0;
    for (m, (g, w)) in got.data.iter().zip(&want.data).enumerate() {
        assert_eq!(
            g.to_bits(),
            w.to_bits(),
            "lincc {lincc}, ratio {r:?}, region {region:?}, {ncomp} comps, rz {}: value {m}: {g} != {w}",
            geom.is_some()
        );
        set += usize::from(g.is_finite());
    }
    if !holes {
        assert_eq!(
            set,
            region.checked_num_pts_usize().unwrap() * ncomp,
            "every region value set"
        );
    }
}

const RATIOS: [IntVect; 8] = [
    IntVect::new(2, 2, 2),
    IntVect::new(3, 3, 3),
    IntVect::new(4, 4, 4),
    IntVect::new(2, 2, 1),
    IntVect::new(2, 3, 1),
    IntVect::new(4, 1, 3),
    IntVect::new(1, 2, 2),
    IntVect::new(1, 1, 1),
];

/// Regions: aligned with the coarse cells, starting and ending inside them, and thin
/// slabs like the ghost pieces of a two-level fill.
fn regions(r: IntVect) -> Vec<IndexBox> {
    vec![
        IndexBox::new(
            IntVect::ZERO,
            IntVect::new(4 * r[0] - 1, 3 * r[1] - 1, 2 * r[2] - 1),
        ),
        IndexBox::new(IntVect::new(-3, 2, -1), IntVect::new(8, 9, 6)),
        IndexBox::new(IntVect::new(-2, -1, 1), IntVect::new(-1, 6, 5)),
        IndexBox::new(IntVect::new(5, 0, 0), IntVect::new(5, 0, 0)),
    ]
}

#[test]
fn cartesian_bit_for_bit() {
    for lincc in [false, true] {
        for r in RATIOS {
            for region in regions(r) {
                for ncomp in [1, 3] {
                    for holes in [false, true] {
                        compare(lincc, region, r, ncomp, None, holes);
                    }
                }
            }
        }
    }
}

#[test]
fn rz_bit_for_bit() {
    let rb = RealBox::new([0.5, 0.0, 0.0], [2.5, 1.0, 1.0]).unwrap();
    // RZ is two-dimensional: one cell in z, ratio 1 there.
    let cdom = IndexBox::new(IntVect::ZERO, IntVect::new(15, 15, 0));
    let cgeom = Geometry::new(cdom, rb, CoordSys::Rz, [false; 3]).unwrap();
    let ratios = RATIOS.into_iter().filter(|r| r[2] == 1).chain([
        IntVect::new(3, 2, 1),
        IntVect::new(4, 4, 1),
        IntVect::new(1, 3, 1),
    ]);
    for lincc in [false, true] {
        for r in ratios.clone() {
            let fgeom = cgeom.refine(r).unwrap();
            for region in regions(r) {
                for ncomp in [1, 2] {
                    for holes in [false, true] {
                        compare(lincc, region, r, ncomp, Some(&fgeom), holes);
                    }
                }
            }
        }
    }
}
