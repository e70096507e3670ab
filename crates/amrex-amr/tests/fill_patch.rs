//! FillPatch against its definition: single-level fills in time (both ends and the
//! middle, on the states' layout and off it), periodic images and physical boundaries;
//! two-level fills where fine data exists (taken bit for bit) and where it does not
//! (interpolated: linear functions exact for the linear interpolaters); the fill of a
//! new level from the coarse one; and every refusal, leaving the destination unchanged.
#![warn(clippy::cast_possible_truncation)]

mod common;

use amrex_amr::Comps;
use amrex_amr::boundary::{BCRec, BCType, PhysBcFunct};
use amrex_amr::fill_patch::Source;
use amrex_amr::{
    AmrErrorKind, CellBilinear, CellConsLinear, Interpolater, NodeBilinear, Operand, PcInterp,
    fill_patch_single_level, fill_patch_two_levels, interp_from_coarse_level,
};
use amrex_geometry::{CoordSys, Geometry, RealBox};
use amrex_multifab::{BoxArray, IndexBox, IndexType, IntVect, MultiFab, Tiling};
use common::{close, fill, mf, noise, snapshot};

type Ext = fn([f64; 3], f64, usize) -> f64;

fn zero(_: [f64; 3], _: f64, _: usize) -> f64 {
    0.0
}

/// Walls in x, periodic in y and z.
fn geom(n: i32) -> Geometry {
    let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(n - 1));
    Geometry::new(
        domain,
        RealBox::UNIT,
        CoordSys::Cartesian,
        [false, true, true],
    )
    .unwrap()
}

fn walls(bc: BCType, ncomp: usize) -> PhysBcFunct<Ext> {
    walls_on(geom(16), bc, ncomp)
}

fn walls_on(g: Geometry, bc: BCType, ncomp: usize) -> PhysBcFunct<Ext> {
    let mut rec = BCRec::uniform(BCType::IntDir);
    rec.set_lo(0, bc);
    rec.set_hi(0, bc);
    PhysBcFunct::new(g, vec![rec; ncomp], zero as Ext)
}

fn every_point(m: &MultiFab, grow: IntVect, mut f: impl FnMut(IntVect, usize, f64)) {
    for mfi in m.mfiter(Tiling::None) {
        let bx = mfi.validbox().grow_iv(grow);
        let a = m.array(&mfi);
        for n in 0..m.ncomp() {
            for p in bx {
                f(p, n, a[(p, n)]);
            }
        }
    }
}

#[test]
fn single_level_in_time_takes_each_end_exactly_and_weights_the_middle() {
    let g = geom(16);
    let ba = BoxArray::from_domain(g.domain(), 8);
    let other_ba = BoxArray::from_domain(g.domain(), 4);
    let (mut s0, mut s1) = (mf(&ba, 2, 0), mf(&ba, 2, 0));
    fill(&mut s0, noise);
    fill(&mut s1, |p, n| noise(p, n + 7) * 3.0 - 1.0);
    let bc = walls(BCType::FoExtrap, 2);
    let src = Source::between((&s0, 1.0), (&s1, 1.5), &bc);
    for dst_ba in [&ba, &other_ba] {
        for (t, want) in [
            (1.0, (1.0, 0.0)),
            (1.5, (0.0, 1.0)),
            (1.2, ((1.5 - 1.2) / 0.5, (1.2 - 1.0) / 0.5)),
        ] {
            let mut m = mf(dst_ba, 3, 1);
            m.set_val(-9.0, .., 1).unwrap();
            fill_patch_single_level(&mut m, 1, t, &src, Comps::new(0, 1, 2)).unwrap();
            // Component 0 is not one of the filled ones.
            assert_eq!(m.min(0..1, 1).unwrap(), -9.0);
            every_point(&m, IntVect::ZERO, |p, n, v| {
                if n == 0 {
                    return;
                }
                let (a, b) = (common::at(&s0, p, n - 1), common::at(&s1, p, n - 1));
                let expect = if t == 1.0 {
                    a
                } else if t == 1.5 {
                    b
                } else {
                    want.0 * a + want.1 * b
                };
                assert_eq!(v.to_bits(), expect.to_bits(), "t {t} at {p} comp {n}");
            });
            // Ghost cells: periodic images in y and z, foextrap beyond the walls.
            let a = m.array_at(0);
            let bx = m.box_of(m.global_index(0));
            let lo = bx.lo();
            assert_eq!(a[(lo.with(0, -1), 1)], a[(lo, 1)]);
            let image = lo.with(1, lo[1] - 1);
            let inside = image.with(1, 15);
            let expect = if t == 1.0 {
                common::at(&s0, inside, 0)
            } else if t == 1.5 {
                common::at(&s1, inside, 0)
            } else {
                want.0 * common::at(&s0, inside, 0) + want.1 * common::at(&s1, inside, 0)
            };
            assert_eq!(a[(image, 1)].to_bits(), expect.to_bits());
        }
    }
}

#[test]
fn single_level_from_one_state_copies_and_fills_boundaries_with_the_records_from_bc_comp() {
    let g = geom(8);
    let ba = BoxArray::from_domain(g.domain(), 4);
    let mut s = mf(&ba, 2, 0);
    fill(&mut s, |p, n| {
        f64::from(p[0] + 10 * p[1] + 100 * p[2]) + n as f64 * 0.5
    });
    // Records: 0 foextrap, 1 reflect_odd, 2 ext_dir told its record number.
    let mut recs = Vec::new();
    for t in [BCType::FoExtrap, BCType::ReflectOdd, BCType::ExtDir] {
        let mut r = BCRec::uniform(BCType::IntDir);
        r.set_lo(0, t);
        r.set_hi(0, t);
        recs.push(r);
    }
    let bc = PhysBcFunct::new(g, recs, |_: [f64; 3], _: f64, rec: usize| {
        1000.0 * rec as f64
    });
    let mut m = mf(&ba, 2, 2);
    // Components 0..2 of the state into 0..2 of m with records 1 and 2.
    let src = Source::at(&s, &bc).with_bc_comp(1);
    fill_patch_single_level(&mut m, 2, 0.0, &src, Comps::first(2)).unwrap();
    let a = m.array_at(0);
    let p = IntVect::new(0, 1, 1);
    assert_eq!(a[(p.with(0, -1), 0)], -a[(p, 0)]);
    assert_eq!(a[(p.with(0, -2), 0)], -a[(p.with(0, 1), 0)]);
    assert_eq!(a[(p.with(0, -1), 1)], 2000.0);
    // Only `nghost` is filled: with 1, the second ghost layer keeps its value.
    let mut m = mf(&ba, 2, 2);
    m.set_val(5.0, .., 2).unwrap();
    fill_patch_single_level(&mut m, 1, 0.0, &src, Comps::first(2)).unwrap();
    let a = m.array_at(0);
    assert_eq!(a[(p.with(0, -1), 0)], -a[(p, 0)]);
    assert_eq!(a[(p.with(0, -2), 0)], 5.0);
    assert_eq!(a[(IntVect::new(1, -2, 1), 0)], 5.0);
    assert_eq!(
        a[(IntVect::new(1, -1, 1), 0)],
        common::at(&s, IntVect::new(1, 7, 1), 0)
    );
}

/// A two-level hierarchy over `geom(nc)` refined by `r`: the fine level covers coarse
/// cells `flo..=fhi` in boxes of `fmax` fine cells.
struct Levels {
    cg: Geometry,
    fg: Geometry,
    cba: BoxArray,
    fba: BoxArray,
}

fn levels(nc: i32, r: IntVect, flo: i32, fhi: i32, fmax: i32, ix: IndexType) -> Levels {
    let cg = geom(nc);
    let fg = cg.refine(r).unwrap();
    let cba = BoxArray::from_domain(cg.domain(), 8).convert(ix);
    let fine_cells = IndexBox::new(IntVect::splat(flo), IntVect::splat(fhi)).refine_iv(r);
    let fba = BoxArray::from_domain(fine_cells, fmax).convert(ix);
    Levels { cg, fg, cba, fba }
}

/// A linear function of position.
fn linear(x: [f64; 3], n: usize) -> f64 {
    1.0 + 2.0 * x[0] - 3.0 * x[1] + 0.5 * x[2] + n as f64
}

fn position(g: &Geometry, ix: IndexType, p: IntVect) -> [f64; 3] {
    if ix.node_centered() {
        g.node_location(p)
    } else {
        g.cell_centre(p)
    }
}

fn check_two_levels<I: Interpolater>(mapper: &I, ix: IndexType, r: IntVect) {
    let lv = levels(16, r, 4, 11, 8, ix);
    let mut crse = mf(&lv.cba, 2, 0);
    let cg = lv.cg;
    fill(&mut crse, |p, n| linear(position(&cg, ix, p), n));
    let mut fstate = mf(&lv.fba, 2, 0);
    fill(&mut fstate, noise);
    let (cbc, fbc) = (
        walls_on(lv.cg, BCType::FoExtrap, 2),
        walls_on(lv.fg, BCType::FoExtrap, 2),
    );
    let ng = IntVect::splat(2);
    let mut m = mf(&lv.fba, 2, ng);
    fill_patch_two_levels(
        &mut m,
        ng,
        0.0,
        &Source::at(&crse, &cbc),
        &Source::at(&fstate, &fbc),
        Comps::first(2),
        mapper,
    )
    .unwrap();
    let fg = lv.fg;
    let mut interpolated = 0;
    every_point(&m, ng, |p, n, v| {
        if lv.fba.contains(p) {
            // Fine data where it exists, bit for bit (another box's valid cells too).
            assert_eq!(
                v.to_bits(),
                common::at(&fstate, p, n).to_bits(),
                "{} at {p}",
                mapper.name()
            );
        } else {
            interpolated += 1;
            let want = linear(position(&fg, ix, p), n);
            assert!(
                close(v, want, 1e-12),
                "{} at {p} comp {n}: {v} vs {want}",
                mapper.name()
            );
        }
    });
    assert!(interpolated > 0);
}

#[test]
fn two_levels_take_fine_data_where_it_exists_and_interpolate_linear_functions_exactly_elsewhere() {
    let cell = IndexType::CELL;
    for r in [IntVect::splat(2), IntVect::splat(4), IntVect::new(2, 4, 1)] {
        check_two_levels(&CellConsLinear::CELL_CONS_INTERP, cell, r);
        check_two_levels(&CellConsLinear::LINCC_INTERP, cell, r);
        check_two_levels(&CellBilinear, cell, r);
    }
    check_two_levels(&NodeBilinear, IndexType::NODE, IntVect::splat(2));
}

#[test]
fn two_levels_interpolate_the_coarse_level_in_time() {
    let r = IntVect::splat(2);
    let lv = levels(16, r, 4, 11, 8, IndexType::CELL);
    let (mut c0, mut c1) = (mf(&lv.cba, 1, 0), mf(&lv.cba, 1, 0));
    c0.set_val(1.0, .., 0).unwrap();
    c1.set_val(5.0, .., 0).unwrap();
    let (mut f0, mut f1) = (mf(&lv.fba, 1, 0), mf(&lv.fba, 1, 0));
    f0.set_val(-1.0, .., 0).unwrap();
    f1.set_val(-5.0, .., 0).unwrap();
    let (cbc, fbc) = (
        walls_on(lv.cg, BCType::FoExtrap, 1),
        walls_on(lv.fg, BCType::FoExtrap, 1),
    );
    let crse = Source::between((&c0, 0.0), (&c1, 1.0), &cbc);
    let fine = Source::between((&f0, 0.0), (&f1, 1.0), &fbc);
    for (t, cw, fw) in [
        (0.0, 1.0, -1.0),
        (1.0, 5.0, -5.0),
        (0.25, 2.0, -2.0),
        (0.5, 3.0, -3.0),
    ] {
        let mut m = mf(&lv.fba, 1, 1);
        fill_patch_two_levels(&mut m, 1, t, &crse, &fine, Comps::first(1), &PcInterp).unwrap();
        every_point(&m, IntVect::splat(1), |p, _, v| {
            let want = if lv.fba.contains(p) { fw } else { cw };
            assert_eq!(v, want, "t {t} at {p}");
        });
    }
}

#[test]
fn a_new_level_is_interpolated_from_the_coarse_one_with_the_fine_boundaries() {
    // The fine level touches the low x wall: its ghost cells there are foextrap'd.
    let r = IntVect::splat(2);
    let cg = geom(16);
    let fg = cg.refine(r).unwrap();
    let cba = BoxArray::from_domain(cg.domain(), 8);
    let fba = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::new(15, 31, 31)), 8);
    let mut crse = mf(&cba, 1, 0);
    fill(&mut crse, |p, n| linear(cg.cell_centre(p), n));
    let (cbc, fbc) = (
        walls_on(cg, BCType::FoExtrap, 1),
        walls_on(fg, BCType::FoExtrap, 1),
    );
    let mut m = mf(&fba, 1, 1);
    interp_from_coarse_level(
        &mut m,
        1,
        0.0,
        &Source::at(&crse, &cbc),
        &fbc,
        Comps::first(1),
        &CellConsLinear::CELL_CONS_INTERP,
    )
    .unwrap();
    let mut checked = 0;
    for l in 0..m.local_size() {
        let a = m.array_at(l);
        for p in m.box_of(m.global_index(l)).grow_iv(IntVect::splat(1)) {
            let v = a[(p, 0)];
            if p[0] < 0 {
                assert_eq!(v, a[(p.with(0, 0), 0)], "foextrap at {p}");
            } else if (2..=15).contains(&p[0])
                && (2..=29).contains(&p[1])
                && (2..=29).contains(&p[2])
            {
                // Inside the domain: the linear function, except next to the wall, where
                // the coarse slopes see the coarse ghost cells' foextrap values, and next
                // to the periodic faces, across which the function jumps.
                let want = linear(fg.cell_centre(p), 0);
                assert!(close(v, want, 1e-12), "at {p}: {v} vs {want}");
                checked += 1;
            }
        }
    }
    assert!(checked > 0);
}

#[test]
fn refusals_name_the_problem_and_change_nothing() {
    let r = IntVect::splat(2);
    let lv = levels(16, r, 4, 11, 8, IndexType::CELL);
    let crse = mf(&lv.cba, 2, 0);
    let fstate = mf(&lv.fba, 2, 0);
    let other = mf(&BoxArray::from_domain(lv.fg.domain(), 16), 2, 0);
    let (cbc, fbc) = (
        walls_on(lv.cg, BCType::FoExtrap, 2),
        walls_on(lv.fg, BCType::FoExtrap, 2),
    );
    let mut m = mf(&lv.fba, 3, 1);
    fill(&mut m, |p, n| noise(p, n + 3));
    let before = snapshot(&m);
    let c = Source::at(&crse, &cbc);
    let f = Source::at(&fstate, &fbc);
    let pc = &PcInterp;
    let expect =
        |what: &str, r: Result<(), amrex_amr::AmrError>, kind: &dyn Fn(&AmrErrorKind) -> bool| {
            let e = r.expect_err(what);
            assert!(kind(e.kind()), "{what}: {e}");
            assert!(!e.to_string().is_empty());
        };
    expect(
        "ghost too wide",
        fill_patch_two_levels(&mut m, 2, 0.0, &c, &f, Comps::first(1), pc),
        &|k| {
            matches!(
                k,
                AmrErrorKind::GhostTooWide {
                    operand: Operand::Dest,
                    ..
                }
            )
        },
    );
    expect(
        "negative ghost",
        fill_patch_single_level(&mut m, -1, 0.0, &f, Comps::first(1)),
        &|k| matches!(k, AmrErrorKind::GhostTooWide { .. }),
    );
    expect(
        "dest components",
        fill_patch_single_level(&mut m, 1, 0.0, &f, Comps::new(0, 2, 2)),
        &|k| {
            matches!(
                k,
                AmrErrorKind::ComponentsOutside {
                    operand: Operand::Dest,
                    ..
                }
            )
        },
    );
    expect(
        "source components",
        fill_patch_single_level(&mut m, 1, 0.0, &f, Comps::new(1, 0, 2)),
        &|k| {
            matches!(
                k,
                AmrErrorKind::ComponentsOutside {
                    operand: Operand::Source,
                    ..
                }
            )
        },
    );
    expect(
        "coarse components",
        fill_patch_two_levels(
            &mut m,
            1,
            0.0,
            &Source::at(&mf(&lv.cba, 1, 0), &cbc),
            &f,
            Comps::first(2),
            pc,
        ),
        &|k| {
            matches!(
                k,
                AmrErrorKind::ComponentsOutside {
                    operand: Operand::Crse,
                    ..
                }
            )
        },
    );
    expect(
        "states differ",
        fill_patch_single_level(
            &mut m,
            1,
            0.5,
            &Source::between((&fstate, 0.0), (&other, 1.0), &fbc),
            Comps::first(1),
        ),
        &|k| {
            matches!(
                k,
                AmrErrorKind::StatesDiffer {
                    operand: Operand::Source
                }
            )
        },
    );
    expect(
        "time",
        fill_patch_single_level(&mut m, 1, f64::NAN, &f, Comps::first(1)),
        &|k| matches!(k, AmrErrorKind::NotFinite { what: "time", .. }),
    );
    expect(
        "source time",
        fill_patch_single_level(
            &mut m,
            1,
            0.5,
            &Source::between((&fstate, 0.0), (&fstate, f64::INFINITY), &fbc),
            Comps::first(1),
        ),
        &|k| {
            matches!(
                k,
                AmrErrorKind::NotFinite {
                    what: "source time",
                    ..
                }
            )
        },
    );
    expect(
        "records",
        fill_patch_single_level(&mut m, 1, 0.0, &f.with_bc_comp(1), Comps::first(2)),
        &|k| {
            matches!(
                k,
                AmrErrorKind::TooFewBcRecs {
                    given: 2,
                    needed: 3
                }
            )
        },
    );
    // The ratio is read off the geometries: a fine geometry that is no refinement of
    // the coarse one (one more cell in x) is refused.
    let odd = Geometry::new(
        lv.fg.domain().grow_hi(0, 1),
        lv.fg.real_box(),
        lv.fg.coord(),
        lv.fg.periodic_flags(),
    )
    .unwrap();
    let odd_bc = walls_on(odd, BCType::FoExtrap, 2);
    expect(
        "geometry",
        fill_patch_two_levels(
            &mut m,
            1,
            0.0,
            &c,
            &Source::at(&fstate, &odd_bc),
            Comps::first(1),
            pc,
        ),
        &|k| matches!(k, AmrErrorKind::GeometryMismatch { .. }),
    );
    let node_crse = mf(&lv.cba.convert(IndexType::NODE), 2, 0);
    expect(
        "type",
        fill_patch_two_levels(
            &mut m,
            1,
            0.0,
            &Source::at(&node_crse, &cbc),
            &f,
            Comps::first(1),
            pc,
        ),
        &|k| {
            matches!(
                k,
                AmrErrorKind::IndexTypeMismatch {
                    operand: Operand::Crse,
                    ..
                }
            )
        },
    );
    let mut nodal = mf(&lv.fba.convert(IndexType::NODE), 1, 1);
    let nodal_before = snapshot(&nodal);
    let (nc, nf) = (
        mf(&lv.cba.convert(IndexType::NODE), 1, 0),
        mf(&lv.fba.convert(IndexType::NODE), 1, 0),
    );
    expect(
        "interpolater's index type",
        fill_patch_two_levels(
            &mut nodal,
            1,
            0.0,
            &Source::at(&nc, &cbc),
            &Source::at(&nf, &fbc),
            Comps::first(1),
            &CellConsLinear::CELL_CONS_INTERP,
        ),
        &|k| matches!(k, AmrErrorKind::WrongIndexType { .. }),
    );
    assert_eq!(snapshot(&nodal), nodal_before);
    // The fine level reaches past the coarse boxes: remove the coarse boxes under it.
    let holes: Vec<IndexBox> = lv
        .cba
        .boxes()
        .iter()
        .copied()
        .filter(|b| !b.contains(IntVect::splat(7)))
        .collect();
    let sparse = mf(&BoxArray::new(holes), 2, 0);
    expect(
        "not nested",
        fill_patch_two_levels(
            &mut m,
            1,
            0.0,
            &Source::at(&sparse, &cbc),
            &f,
            Comps::first(1),
            pc,
        ),
        &|k| matches!(k, AmrErrorKind::NotCovered { .. }),
    );
    expect(
        "source count",
        Source::from_slices(&[&fstate, &fstate, &fstate], &[0.0, 1.0, 2.0], &fbc).map(|_| ()),
        &|k| {
            matches!(
                k,
                AmrErrorKind::SourceCount {
                    states: 3,
                    times: 3
                }
            )
        },
    );
    let outside = mf(
        &BoxArray::new(vec![IndexBox::new(
            IntVect::new(30, 0, 0),
            IntVect::new(33, 3, 3),
        )]),
        1,
        1,
    );
    let mut outside = outside;
    expect(
        "box outside the domain",
        fill_patch_two_levels(&mut outside, 1, 0.0, &c, &f, Comps::first(1), pc),
        &|k| matches!(k, AmrErrorKind::BoxOutsideDomain { .. }),
    );
    assert_eq!(snapshot(&m), before);
}

#[test]
fn two_levels_take_periodic_images_of_fine_data_before_coarse_data() {
    // The fine level spans the periodic y and z directions: its ghost cells beyond those
    // faces hold the fine data of the images, bit for bit; beyond its x extent, coarse
    // data interpolated.
    let r = IntVect::splat(2);
    let cg = geom(8);
    let fg = cg.refine(r).unwrap();
    let cba = BoxArray::from_domain(cg.domain(), 4);
    let fba = BoxArray::from_domain(
        IndexBox::new(IntVect::new(4, 0, 0), IntVect::new(11, 15, 15)),
        8,
    );
    let mut crse = mf(&cba, 1, 0);
    crse.set_val(7.0, .., 0).unwrap();
    let mut fstate = mf(&fba, 1, 0);
    fill(&mut fstate, noise);
    let (cbc, fbc) = (
        walls_on(cg, BCType::FoExtrap, 1),
        walls_on(fg, BCType::FoExtrap, 1),
    );
    let mut m = mf(&fba, 1, 2);
    let (c, f) = (Source::at(&crse, &cbc), Source::at(&fstate, &fbc));
    fill_patch_two_levels(&mut m, 2, 0.0, &c, &f, Comps::first(1), &PcInterp).unwrap();
    let mut images = 0;
    every_point(&m, IntVect::splat(2), |p, _, v| {
        let q = IntVect::new(p[0], p[1].rem_euclid(16), p[2].rem_euclid(16));
        if fba.contains(q) {
            images += usize::from(q != p);
            assert_eq!(v.to_bits(), common::at(&fstate, q, 0).to_bits(), "at {p}");
        } else {
            assert_eq!(v, 7.0, "at {p}");
        }
    });
    assert!(images > 0);
}
