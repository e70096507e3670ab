//! The interpolaters: what each reproduces exactly (constants for `PcInterp`, linear
//! and multilinear functions for the linear ones), conservation of `CellConsLinear`
//! (Cartesian and RZ), its two limiters, and `average_down(interp(c)) == c` through
//! whole MultiFabs whose fine boxes straddle coarse boxes.
#![warn(clippy::cast_possible_truncation)]

mod common;

use amrex_amr::{
    CellBilinear, CellConsLinear, Comps, FaceLinear, Interpolater, NodeBilinear, PcInterp,
    average_down, average_down_geom,
};
use amrex_array4::{Array4, Array4Mut};
use amrex_geometry::{CoordSys, Geometry, Periodicity, RealBox};
use amrex_multifab::{BoxArray, IndexBox, IndexType, IntVect};
use common::{at, close, fill, interp_level, mf, noise, points};

const RATIOS: [IntVect; 6] = [
    IntVect::new(2, 2, 2),
    IntVect::new(3, 3, 3),
    IntVect::new(4, 4, 4),
    IntVect::new(2, 3, 1),
    IntVect::new(4, 1, 3),
    IntVect::new(1, 1, 1),
];

/// A fab: its box, component count and data.
struct Fab {
    bx: IndexBox,
    ncomp: usize,
    data: Vec<f64>,
}

impl Fab {
    fn new(bx: IndexBox, ncomp: usize, f: impl Fn(IntVect, usize) -> f64) -> Self {
        let len = bx.checked_num_pts_usize().unwrap() * ncomp;
        let mut fab = Self {
            bx,
            ncomp,
            data: vec![0.0; len],
        };
        let cells = IndexBox::new(bx.lo(), bx.hi());
        fab.view_mut()
            .for_each_mut(cells, |i, j, k, n, v| *v = f(IntVect::new(i, j, k), n));
        fab
    }
    fn view(&self) -> Array4<'_, f64> {
        Array4::new(
            &self.data,
            IndexBox::new(self.bx.lo(), self.bx.hi()),
            self.ncomp,
        )
    }
    fn view_mut(&mut self) -> Array4Mut<'_, f64> {
        Array4Mut::new(
            &mut self.data,
            IndexBox::new(self.bx.lo(), self.bx.hi()),
            self.ncomp,
        )
    }
    fn get(&self, p: IntVect, n: usize) -> f64 {
        self.view()[(p, n)]
    }
}

/// Interpolates `region` from coarse data `f` given over `interp.coarse_box(region)`
/// (grown by `extra` cells, to show nothing outside is read), `ncomp` components.
fn run(
    interp: &dyn Interpolater,
    region: IndexBox,
    ratio: IntVect,
    ncomp: usize,
    geom: Option<&Geometry>,
    f: impl Fn(IntVect, usize) -> f64,
) -> (Fab, Fab) {
    let cbx = interp.coarse_box(&region, ratio);
    let crse = Fab::new(cbx, ncomp, f);
    // The fine fab is larger than the region; the rest must stay untouched (NaN).
    let mut fine = Fab::new(region.grow(2), ncomp, |_, _| f64::NAN);
    interp
        .interp(
            crse.view(),
            fine.view_mut(),
            &region,
            Comps::first(ncomp),
            ratio,
            geom,
        )
        .unwrap();
    for p in IndexBox::new(region.grow(2).lo(), region.grow(2).hi()) {
        let inside = region.lo().all_le(p) && p.all_le(region.hi());
        for n in 0..ncomp {
            assert_eq!(fine.get(p, n).is_nan(), !inside, "{} at {p}", interp.name());
        }
    }
    (crse, fine)
}

/// The position of point `p` of index type `typ` in units of its level's cell width.
fn pos(p: IntVect, typ: IndexType, d: usize) -> f64 {
    f64::from(p[d]) + if typ.node_centered_dir(d) { 0.0 } else { 0.5 }
}

#[test]
fn pc_interp_copies_the_coarse_point_below() {
    let types = [
        IndexType::new(false, false, false),
        IndexType::new(true, true, true),
        IndexType::new(false, true, false),
    ];
    for typ in types {
        for r in RATIOS {
            let region = IndexBox::with_type(IntVect::new(-3, 1, 2), IntVect::new(6, 7, 9), typ);
            let (crse, fine) = run(&PcInterp, region, r, 2, None, noise);
            for p in region {
                for n in 0..2 {
                    assert_eq!(fine.get(p, n), crse.get(p.coarsen(r), n));
                }
            }
            // Constants exactly.
            let (_, fine) = run(&PcInterp, region, r, 1, None, |_, _| 0.3);
            assert!(region.iter().all(|p| fine.get(p, 0) == 0.3));
        }
    }
}

/// `a + b x + c y + d z` (component `n` has its own coefficients) at position `x` in
/// units of the coarse cell width.
fn linear(x: [f64; 3], n: usize) -> f64 {
    let k = n as f64;
    1.0 + k + (0.5 + k) * x[0] - (2.0 - k) * x[1] + 0.25 * x[2]
}

#[test]
fn cell_cons_linear_reproduces_linear_functions() {
    let cell = IndexType::new(false, false, false);
    for interp in [
        CellConsLinear::CELL_CONS_INTERP,
        CellConsLinear::LINCC_INTERP,
    ] {
        for r in RATIOS {
            let region = IndexBox::new(IntVect::new(-2, 3, 1), IntVect::new(9, 10, 7));
            let coarse = |p: IntVect, n| linear([0, 1, 2].map(|d| pos(p, cell, d)), n);
            let (_, fine) = run(&interp, region, r, 3, None, coarse);
            for p in region {
                let x = [0, 1, 2].map(|d| pos(p, cell, d) / f64::from(r[d]));
                for n in 0..3 {
                    assert!(
                        close(fine.get(p, n), linear(x, n), 1e-14),
                        "{interp:?} {r} {p} {n}"
                    );
                }
            }
        }
    }
}

#[test]
fn cell_cons_linear_is_conservative_and_cell_cons_keeps_bounds() {
    for interp in [
        CellConsLinear::CELL_CONS_INTERP,
        CellConsLinear::LINCC_INTERP,
    ] {
        for r in RATIOS {
            // A region of whole coarse cells, random data (the limiters act).
            let cells = IndexBox::new(IntVect::new(-1, 0, 2), IntVect::new(3, 2, 4));
            let region = cells.refine_iv(r);
            let (crse, fine) = run(&interp, region, r, 2, None, |p, n| noise(p, n) * 4.0 - 1.0);
            let nf = f64::from(r[0] * r[1] * r[2]);
            for c in cells {
                for n in 0..2 {
                    let fine_cells = IndexBox::new(c, c).refine_iv(r);
                    let mean = fine_cells.iter().map(|p| fine.get(p, n)).sum::<f64>() / nf;
                    assert!(
                        close(mean, crse.get(c, n), 1e-14),
                        "{interp:?} {r} {c}: {mean}"
                    );
                    if !interp.do_linear_limiting() {
                        // No new extrema: within the 3x3x3 coarse neighbourhood's bounds
                        // (in the directions interpolated in).
                        let nb = IndexBox::new(c, c).grow_iv(r.map(|x| i32::from(x > 1)));
                        let (lo, hi) = nb.iter().fold((f64::MAX, f64::MIN), |(lo, hi), q| {
                            (lo.min(crse.get(q, n)), hi.max(crse.get(q, n)))
                        });
                        for p in fine_cells {
                            let v = fine.get(p, n);
                            assert!(
                                v >= lo - 1e-14 && v <= hi + 1e-14,
                                "{r} {p}: {v} not in [{lo}, {hi}]"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn linear_limiting_limits_across_components() {
    // Component 0 is linear in x; component 1 has a maximum at coarse i = 0 (values -1,
    // 0, -3), so its MC slope in x is zero there while its centred one is not. Limiting
    // across components then flattens component 0 in x in that coarse cell;
    // cell_cons_interp keeps it linear.
    let r = IntVect::new(2, 1, 1);
    let cells = IndexBox::new(IntVect::ZERO, IntVect::ZERO);
    let region = cells.refine_iv(r);
    let data = |p: IntVect, n| match (n, p[0]) {
        (0, i) => f64::from(i),
        (_, -1) => -1.0,
        (_, 0) => 0.0,
        _ => -3.0,
    };
    let (_, lincc) = run(&CellConsLinear::LINCC_INTERP, region, r, 2, None, data);
    assert_eq!(lincc.get(IntVect::ZERO, 0), 0.0);
    assert_eq!(lincc.get(IntVect::new(1, 0, 0), 0), 0.0);
    let (_, cons) = run(&CellConsLinear::CELL_CONS_INTERP, region, r, 2, None, data);
    assert_eq!(cons.get(IntVect::ZERO, 0), -0.25);
    assert_eq!(cons.get(IntVect::new(1, 0, 0), 0), 0.25);
    // Component 1 is flat in both.
    for f in [&lincc, &cons] {
        assert_eq!(f.get(IntVect::ZERO, 1), 0.0);
        assert_eq!(f.get(IntVect::new(1, 0, 0), 1), 0.0);
    }
}

#[test]
fn cell_cons_linear_conserves_rz_volume_integrals() {
    let rb = RealBox::new([0.0; 3], [2.0, 1.0, 1.0]).unwrap();
    let cdom = IndexBox::new(IntVect::ZERO, IntVect::new(7, 7, 0));
    let cgeom = Geometry::new(cdom, rb, CoordSys::Rz, [false; 3]).unwrap();
    for interp in [
        CellConsLinear::CELL_CONS_INTERP,
        CellConsLinear::LINCC_INTERP,
    ] {
        for r in [
            IntVect::new(2, 2, 1),
            IntVect::new(3, 2, 1),
            IntVect::new(4, 4, 1),
        ] {
            let fgeom = cgeom.refine(r).unwrap();
            let cells = IndexBox::new(IntVect::new(0, 1, 0), IntVect::new(6, 6, 0));
            let region = cells.refine_iv(r);
            let (crse, fine) = run(&interp, region, r, 1, Some(&fgeom), |p, _| {
                noise(p, 0) + 0.5
            });
            for c in cells {
                let fine_cells = IndexBox::new(c, c).refine_iv(r);
                let fsum: f64 = fine_cells
                    .iter()
                    .map(|p| fine.get(p, 0) * fgeom.volume(p))
                    .sum();
                let csum = crse.get(c, 0) * cgeom.volume(c);
                assert!(
                    close(fsum, csum, 1e-14),
                    "{interp:?} {r} {c}: {fsum} vs {csum}"
                );
            }
            // Without the geometry (Cartesian offsets) a slope in r does not conserve
            // the volume integral: the check above is not vacuous.
            let (crse, cart) = run(&interp, region, r, 1, None, |p, _| f64::from(p[0]));
            let c = IntVect::new(0, 3, 0);
            let fsum: f64 = IndexBox::new(c, c)
                .refine_iv(r)
                .iter()
                .map(|p| cart.get(p, 0) * fgeom.volume(p))
                .sum();
            assert!(!close(fsum, crse.get(c, 0) * cgeom.volume(c), 1e-6));
        }
    }
}

#[test]
fn ratio_one_directions_need_no_coarse_ghost_cells() {
    // A 2-D problem: one cell in z, ratio 1 there.
    let r = IntVect::new(2, 2, 1);
    let region = IndexBox::new(IntVect::new(0, 0, 0), IntVect::new(7, 7, 0));
    for interp in [
        &CellConsLinear::CELL_CONS_INTERP as &dyn Interpolater,
        &CellConsLinear::LINCC_INTERP,
        &CellBilinear,
        &PcInterp,
    ] {
        let cb = interp.coarse_box(&region, r);
        assert_eq!((cb.lo()[2], cb.hi()[2]), (0, 0), "{}", interp.name());
    }
    let nodal = IndexBox::with_type(
        IntVect::ZERO,
        IntVect::new(8, 8, 0),
        IndexType::new(true, true, true),
    );
    let cb = NodeBilinear.coarse_box(&nodal, r);
    assert_eq!((cb.lo()[2], cb.hi()[2]), (0, 0));
}

/// `(1 + x)(2 - y)(3 + 2z)`: multilinear.
fn trilinear(x: [f64; 3]) -> f64 {
    (1.0 + x[0]) * (2.0 - x[1]) * (3.0 + 2.0 * x[2])
}

#[test]
fn cell_bilinear_reproduces_multilinear_functions() {
    let cell = IndexType::new(false, false, false);
    for r in RATIOS {
        // A region that starts and ends mid-way through coarse cells.
        let region = IndexBox::new(IntVect::new(-3, 1, 2), IntVect::new(10, 6, 9));
        let (_, fine) = run(&CellBilinear, region, r, 1, None, |p, _| {
            trilinear([0, 1, 2].map(|d| pos(p, cell, d)))
        });
        for p in region {
            let x = [0, 1, 2].map(|d| pos(p, cell, d) / f64::from(r[d]));
            assert!(close(fine.get(p, 0), trilinear(x), 1e-13), "{r} {p}");
        }
    }
}

#[test]
fn node_bilinear_reproduces_multilinear_functions() {
    let node = IndexType::new(true, true, true);
    for r in RATIOS {
        let region = IndexBox::with_type(IntVect::new(-3, 1, 2), IntVect::new(10, 6, 9), node);
        let (crse, fine) = run(&NodeBilinear, region, r, 1, None, |p, _| {
            trilinear([0, 1, 2].map(|d| pos(p, node, d)))
        });
        for p in region {
            let x = [0, 1, 2].map(|d| pos(p, node, d) / f64::from(r[d]));
            assert!(close(fine.get(p, 0), trilinear(x), 1e-13), "{r} {p}");
            // Fine nodes on coarse nodes take the coarse value exactly.
            if (0..3).all(|d| p[d].rem_euclid(r[d]) == 0) {
                assert_eq!(fine.get(p, 0), crse.get(p.coarsen(r), 0));
            }
        }
    }
}

#[test]
fn face_linear_is_linear_across_faces_and_constant_along_them() {
    for dir in 0..3 {
        let typ = IndexType::new(dir == 0, dir == 1, dir == 2);
        for r in RATIOS {
            let region = IndexBox::with_type(IntVect::new(-3, 1, 2), IntVect::new(9, 7, 8), typ);
            // Linear in the normal direction, a step function of the coarse index across.
            let g = |p: IntVect| {
                let t: f64 = (0..3)
                    .filter(|&d| d != dir)
                    .map(|d| f64::from(p[d]) * 10.0)
                    .sum();
                t + 3.0 * f64::from(p[dir])
            };
            let (crse, fine) = run(&FaceLinear, region, r, 1, None, |p, _| g(p));
            for p in region {
                let c = p.coarsen(r);
                let w = f64::from(p[dir] - c[dir] * r[dir]) / f64::from(r[dir]);
                let want = g(c) + 3.0 * w;
                assert!(close(fine.get(p, 0), want, 1e-14), "dir {dir} {r} {p}");
                if w == 0.0 {
                    assert_eq!(fine.get(p, 0), crse.get(c, 0));
                }
            }
        }
    }
}

/// A periodic coarse level `0..=15`³ in boxes of 8, noise in its valid cells and its
/// ghost cell filled by `fill_boundary`; a fine level over three coarse regions that
/// straddle coarse boxes, refined by `r`.
fn levels(r: IntVect) -> (amrex_multifab::MultiFab, amrex_multifab::MultiFab) {
    let cdom = IndexBox::new(IntVect::ZERO, IntVect::splat(15));
    let mut crse = mf(&BoxArray::from_domain(cdom, 8), 2, 1);
    fill(&mut crse, |p, n| noise(p, n) * 2.0 - 0.5);
    crse.fill_boundary(Periodicity::all(cdom)).unwrap();
    let regions = [
        IndexBox::new(IntVect::new(5, 6, 3), IntVect::new(10, 9, 12)),
        IndexBox::new(IntVect::new(0, 0, 0), IntVect::new(3, 3, 3)),
        IndexBox::new(IntVect::new(12, 10, 7), IntVect::new(15, 15, 9)),
    ];
    let fba = BoxArray::new(regions.iter().map(|b| b.refine_iv(r)).collect());
    (crse, mf(&fba, 2, 0))
}

#[test]
fn average_down_of_cons_interp_gives_the_coarse_data_back() {
    for interp in [
        CellConsLinear::CELL_CONS_INTERP,
        CellConsLinear::LINCC_INTERP,
    ] {
        for r in RATIOS {
            let (crse, mut fine) = levels(r);
            interp_level(&interp, &crse, &mut fine, r, None);
            let mut back = mf(crse.box_array(), 2, 0);
            average_down(&fine, &mut back, 0..2, r).unwrap();
            let covered = fine.box_array().coarsen(r);
            for n in 0..2 {
                for (p, v) in points(&back, n) {
                    if covered.contains(p) {
                        let c = at(&crse, p, n);
                        assert!(close(v, c, 1e-14), "{interp:?} {r} {p}: {v} vs {c}");
                    }
                }
            }
        }
    }
}

#[test]
fn average_down_geom_of_rz_cons_interp_gives_the_coarse_data_back() {
    let rb = RealBox::new([0.0; 3], [1.0, 2.0, 1.0]).unwrap();
    let cdom = IndexBox::new(IntVect::ZERO, IntVect::new(15, 15, 0));
    let cgeom = Geometry::new(cdom, rb, CoordSys::Rz, [false, true, false]).unwrap();
    let r = IntVect::new(2, 4, 1);
    let fgeom = cgeom.refine(r).unwrap();
    let mut crse = mf(&BoxArray::from_domain(cdom, 8), 1, IntVect::new(1, 1, 0));
    fill(&mut crse, |p, _| 1.0 + noise(p, 0));
    crse.fill_boundary(cgeom.periodicity()).unwrap();
    let fcells = IndexBox::new(IntVect::new(1, 5, 0), IntVect::new(12, 13, 0));
    let fba = BoxArray::from_domain(fcells, 5).refine(r);
    let mut fine = mf(&fba, 1, 0);
    for interp in [
        CellConsLinear::CELL_CONS_INTERP,
        CellConsLinear::LINCC_INTERP,
    ] {
        interp_level(&interp, &crse, &mut fine, r, Some(&fgeom));
        let mut back = mf(crse.box_array(), 1, 0);
        average_down_geom(&fine, &mut back, &fgeom, &cgeom, 0..1, r).unwrap();
        for p in fcells {
            assert!(
                close(at(&back, p, 0), at(&crse, p, 0), 1e-14),
                "{interp:?} {p}"
            );
        }
    }
}

#[test]
fn pc_and_bilinear_through_multifabs() {
    for r in [IntVect::splat(2), IntVect::new(3, 1, 2)] {
        let (crse, mut fine) = levels(r);
        interp_level(&PcInterp, &crse, &mut fine, r, None);
        for n in 0..2 {
            for (p, v) in points(&fine, n) {
                assert_eq!(v, at(&crse, p.coarsen(r), n));
            }
        }
        // PcInterp is conservative too: averaging down gives the coarse data exactly.
        let mut back = mf(crse.box_array(), 2, 0);
        average_down(&fine, &mut back, 0..2, r).unwrap();
        for (p, v) in points(&back, 1) {
            if fine.box_array().coarsen(r).contains(p) {
                assert!(close(v, at(&crse, p, 1), 1e-15));
            }
        }
        interp_level(&CellBilinear, &crse, &mut fine, r, None);
    }
}
