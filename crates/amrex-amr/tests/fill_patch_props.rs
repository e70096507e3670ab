//! Property tests of `fill_patch_two_levels` over random hierarchies: a coarse level over
//! its whole domain (periodic or walled per direction, a random boundary type per wall)
//! and a fine level over a random block of it, cut into boxes by random sizes, one box
//! sometimes dropped; ratios 2, 3, 4 and (3, 1, 2); destinations on the fine level's
//! layout or another one; random component ranges and ghost widths. Properties:
//!
//! (a) every destination cell a fine state's box holds, or a periodic image of one, is
//!     the fine state's value bit for bit;
//! (b) elsewhere inside the domain, at least two coarse cells from every domain face, the
//!     value interpolated from a coarse state that is linear in position is that linear
//!     function to 1e-12 (`CellConsLinear` both ways, `CellBilinear`), or the coarse
//!     cell's own value bit for bit (`PcInterp`);
//! (c) components outside `dcomp..dcomp + ncomp`, and cells beyond `nghost`, keep their
//!     values bit for bit, and every filled value is finite;
//! (d) with fine states covering the destination and `nghost = 0`, the fill is a plain
//!     copy, and never reads the coarse level (a coarse state of NaN).
//!
//! `cell_bilinear_next_to_a_hoextrap_wall` keeps the case the property test found: a
//! coarse box with one interior cell next to a `hoextrap` wall, whose boundary fill read
//! a cell the box did not hold (FillPatch now lengthens such boxes inward).
#![warn(clippy::cast_possible_truncation)]

mod common;

use amrex_amr::Comps;
use amrex_amr::boundary::{BCRec, BCType, PhysBcFunct};
use amrex_amr::fill_patch::Source;
use amrex_amr::{CellBilinear, CellConsLinear, Interpolater, PcInterp, fill_patch_two_levels};
use amrex_geometry::{CoordSys, Geometry, RealBox};
use amrex_multifab::{BoxArray, IndexBox, IntVect, MultiFab, Tiling};
use common::{close, fill, mf, noise};
use proptest::prelude::*;

/// Components of the states and of the destination.
const NSTATE: usize = 3;
const NDEST: usize = 4;

const RATIOS: [IntVect; 4] = [
    IntVect::new(2, 2, 2),
    IntVect::new(4, 4, 4),
    IntVect::new(3, 3, 3),
    IntVect::new(3, 1, 2),
];

/// The boundary types a wall draws from.
const WALLS: [BCType; 6] = [
    BCType::FoExtrap,
    BCType::HoExtrap,
    BCType::HoExtrapCc,
    BCType::ReflectEven,
    BCType::ReflectOdd,
    BCType::ExtDir,
];

/// One random two-level fill.
#[derive(Clone, Debug)]
struct Case {
    /// The coarse domain.
    domain: IndexBox,
    periodic: [bool; 3],
    /// Boundary types of the low and high faces per direction (ignored where periodic).
    walls: [[BCType; 2]; 3],
    ratio: IntVect,
    /// The fine level's block, in coarse cells, and the size its boxes are cut to.
    region: IndexBox,
    fine_max: IntVect,
    /// The fine box left out, if any (index modulo the number of boxes).
    drop: Option<usize>,
    /// The destination's block in coarse cells (the fine block grown, inside the domain)
    /// and its box size; `None`: the fine state's layout itself.
    dest: Option<(IndexBox, IntVect)>,
    scomp: usize,
    dcomp: usize,
    ncomp: usize,
    /// The destination's ghost width, and the width filled.
    grow: IntVect,
    nghost: IntVect,
    /// Index into [`mappers`].
    mapper: usize,
}

/// A sub-block of `b` from two fractions per direction (at least one cell).
fn sub_box(b: IndexBox, cut: [(f64, f64); 3]) -> IndexBox {
    let (mut lo, mut hi) = (b.lo(), b.lo());
    let len = b.length();
    for d in 0..3 {
        let x = common::fraction(cut[d].0, len[d]);
        let y = common::fraction(cut[d].1, len[d]);
        lo[d] = b.lo()[d] + x.min(y);
        hi[d] = b.lo()[d] + x.max(y);
    }
    IndexBox::new(lo, hi)
}

fn cuts() -> impl Strategy<Value = [(f64, f64); 3]> {
    prop::array::uniform3((0.0..1.0f64, 0.0..1.0f64))
}

fn case() -> impl Strategy<Value = Case> {
    let layout = (
        prop::array::uniform3(-3..=3i32),
        prop::array::uniform3(6..=9i32),
        prop::array::uniform3(any::<bool>()),
        prop::array::uniform3(prop::array::uniform2(0..WALLS.len())),
        0..RATIOS.len(),
        cuts(),
        prop::array::uniform3(3..=9i32),
        prop::option::of(any::<usize>()),
    );
    let dest = prop::option::of((
        prop::array::uniform3(0..=2i32),
        prop::array::uniform3(3..=9i32),
    ));
    let rest = (
        (0..NSTATE, 0..NSTATE, 0..NDEST),
        prop::array::uniform3(0..=2i32),
        prop::array::uniform3(0..=2i32),
        0..4usize,
    );
    (layout, dest, rest).prop_map(
        |(
            (lo, len, periodic, walls, ratio, cut, fine_max, drop),
            dest,
            ((s, n, d), grow, ng, mapper),
        )| {
            let lo = IntVect::from(lo);
            let domain = IndexBox::new(lo, lo + IntVect::from(len) - 1);
            let scomp = s;
            let ncomp = 1 + n % (NSTATE - scomp);
            let dcomp = d % (NDEST - ncomp + 1);
            let grow = IntVect::from(grow);
            let region = sub_box(domain, cut);
            let walls = walls.map(|w| w.map(|i| WALLS[i]));
            Case {
                domain,
                periodic,
                walls,
                ratio: RATIOS[ratio],
                region,
                fine_max: IntVect::from(fine_max),
                drop,
                dest: dest.map(|(g, m)| {
                    let b = region.grow_iv(IntVect::from(g)).intersection(&domain);
                    (b.expect("the block is inside the domain"), IntVect::from(m))
                }),
                scomp,
                dcomp,
                ncomp,
                grow,
                nghost: IntVect::from(ng).zip_map(grow, |n, g| n % (g + 1)),
                mapper,
            }
        },
    )
}

/// The index of `CellBilinear` in [`mappers`].
const CELL_BILINEAR: usize = 2;

/// The index of `PcInterp` in [`mappers`]: the one that does not reproduce linear
/// functions, but copies the coarse cell's value.
const PC_INTERP: usize = 3;

/// The interpolaters the cases draw from.
fn mappers() -> [&'static dyn Interpolater; 4] {
    [
        &CellConsLinear::CELL_CONS_INTERP,
        &CellConsLinear::LINCC_INTERP,
        &CellBilinear,
        &PcInterp,
    ]
}

/// A linear function of position, another per component.
fn linear(x: [f64; 3], n: usize) -> f64 {
    1.0 + 2.0 * x[0] - 3.0 * x[1] + 0.5 * x[2] + n as f64 * (1.0 - x[2])
}

/// The destination's values before the fill.
fn before(p: IntVect, n: usize) -> f64 {
    -50.0 - noise(p, n + 11)
}

/// The fine state's values (far from the coarse ones, so their origin shows).
fn fine_value(p: IntVect, n: usize) -> f64 {
    100.0 + noise(p, n)
}

fn ext(x: [f64; 3], _: f64, n: usize) -> f64 {
    linear(x, n)
}

type Ext = fn([f64; 3], f64, usize) -> f64;

/// The coarse geometry (cells of a different size per direction) and boundary records.
fn geometry(c: &Case) -> (Geometry, Vec<BCRec>) {
    let rb = RealBox::new([0.0; 3], [1.0, 2.0, 0.5]).unwrap();
    let g = Geometry::new(c.domain, rb, CoordSys::Cartesian, c.periodic).unwrap();
    let side = |s: usize| {
        core::array::from_fn(|d| {
            if c.periodic[d] {
                BCType::IntDir
            } else {
                c.walls[d][s]
            }
        })
    };
    (g, vec![BCRec::new(side(0), side(1)); NSTATE])
}

/// `true` for the points of `b` a box of `ba` holds, indexed by `b.index`.
fn mask(b: IndexBox, ba: &BoxArray) -> Vec<bool> {
    let mut m = vec![false; b.checked_num_pts_usize().unwrap()];
    for bx in ba.boxes() {
        if let Some(i) = bx.intersection(&b) {
            for p in i {
                m[b.index(p)] = true;
            }
        }
    }
    m
}

/// `p` moved into `dom` in the periodic directions.
fn wrap(p: IntVect, dom: IndexBox, periodic: [bool; 3]) -> IntVect {
    let mut q = p;
    for d in (0..3).filter(|&d| periodic[d]) {
        q[d] = dom.lo()[d] + (p[d] - dom.lo()[d]).rem_euclid(dom.length()[d]);
    }
    q
}

/// Runs `c` and checks (a), (b) and (c); returns how many cells each of (a) and (b)
/// checked.
fn run(c: &Case) -> Result<(usize, usize), TestCaseError> {
    let (cg, recs) = geometry(c);
    let r = c.ratio;
    let fg = cg.refine(r).unwrap();
    let cba = BoxArray::from_domain(c.domain, 4);
    let mut crse = mf(&cba, NSTATE, 0);
    fill(&mut crse, |p, n| linear(cg.cell_centre(p), n));
    let mut boxes = BoxArray::from_domain_iv(c.region.refine_iv(r), c.fine_max)
        .boxes()
        .to_vec();
    if let Some(k) = c.drop
        && boxes.len() > 1
    {
        boxes.remove(k % boxes.len());
    }
    let fba = BoxArray::new(boxes);
    let mut fstate = mf(&fba, NSTATE, 0);
    fill(&mut fstate, fine_value);
    let dba = match c.dest {
        Some((b, m)) => BoxArray::from_domain_iv(b.refine_iv(r), m),
        None => fba.clone(),
    };
    let mut m = mf(&dba, NDEST, c.grow);
    fill(&mut m, before);
    let (cbc, fbc) = (
        PhysBcFunct::new(cg, recs.clone(), ext as Ext),
        PhysBcFunct::new(fg, recs, ext as Ext),
    );
    let mapper = mappers()[c.mapper];
    fill_patch_two_levels(
        &mut m,
        c.nghost,
        0.0,
        &Source::at(&crse, &cbc),
        &Source::at(&fstate, &fbc),
        Comps::new(c.scomp, c.dcomp, c.ncomp),
        mapper,
    )
    .unwrap();

    let fdom = fg.domain();
    let held = mask(fdom, &fba);
    let interior = c.domain.grow(-2);
    let dst = c.dcomp..c.dcomp + c.ncomp;
    let (mut fine_cells, mut interp_cells) = (0, 0);
    for mfi in m.mfiter(Tiling::None) {
        let valid = mfi.validbox();
        let filled = valid.grow_iv(c.nghost);
        let a = m.array(&mfi);
        for n in 0..NDEST {
            for p in valid.grow_iv(c.grow) {
                let v = a[(p, n)];
                if !dst.contains(&n) || !filled.contains(p) {
                    prop_assert_eq!(
                        v.to_bits(),
                        before(p, n).to_bits(),
                        "(c) at {} comp {}",
                        p,
                        n
                    );
                    continue;
                }
                prop_assert!(v.is_finite(), "(c) {} at {} comp {}", v, p, n);
                let sn = n - c.dcomp + c.scomp;
                let q = wrap(p, fdom, c.periodic);
                if fdom.contains(q) && held[fdom.index(q)] {
                    let want = fine_value(q, sn);
                    prop_assert_eq!(
                        v.to_bits(),
                        want.to_bits(),
                        "(a) {} at {} comp {}: {} vs {}",
                        mapper.name(),
                        p,
                        n,
                        v,
                        want
                    );
                    fine_cells += 1;
                } else if interior.contains(p.coarsen(r)) {
                    let want = if c.mapper == PC_INTERP {
                        linear(cg.cell_centre(p.coarsen(r)), sn)
                    } else {
                        linear(fg.cell_centre(p), sn)
                    };
                    let ok = if c.mapper == PC_INTERP {
                        v.to_bits() == want.to_bits()
                    } else {
                        close(v, want, 1e-12)
                    };
                    prop_assert!(
                        ok,
                        "(b) {} at {} comp {}: {} vs {}",
                        mapper.name(),
                        p,
                        n,
                        v,
                        want
                    );
                    interp_cells += 1;
                }
            }
        }
    }
    Ok((fine_cells, interp_cells))
}

/// Found by the property test: `CellBilinear` grows the coarse box of a fine piece on one
/// side only, so a piece in the upper half of the coarse cells next to a high wall gets a
/// coarse box holding one cell inside the domain and one beyond the wall. The coarse
/// physical fill of that box with `hoextrap` (or `hoextrapcc`) reads a second interior
/// cell; it panicked on the index until FillPatch lengthened such boxes inward.
#[test]
fn cell_bilinear_next_to_a_hoextrap_wall() {
    for wall in [BCType::HoExtrap, BCType::HoExtrapCc] {
        let c = Case {
            domain: IndexBox::new(IntVect::ZERO, IntVect::splat(5)),
            periodic: [false; 3],
            walls: [
                [BCType::FoExtrap, BCType::FoExtrap],
                [BCType::FoExtrap, wall],
                [BCType::FoExtrap, BCType::FoExtrap],
            ],
            ratio: IntVect::splat(4),
            region: IndexBox::new(IntVect::new(0, 4, 0), IntVect::new(4, 5, 0)),
            fine_max: IntVect::splat(3),
            drop: None,
            dest: None,
            scomp: 0,
            dcomp: 0,
            ncomp: 1,
            grow: IntVect::new(2, 0, 0),
            nghost: IntVect::new(1, 0, 0),
            mapper: CELL_BILINEAR,
        };
        run(&c).unwrap();
    }
}

/// A case for (d): fine states over the fine block (no box dropped), a destination over
/// a block of its fine cells, `nghost = 0`.
#[derive(Clone, Debug)]
struct CopyCase {
    base: Case,
    /// The destination's block, as fractions of the fine block, and its box size.
    cut: [(f64, f64); 3],
    dest_max: IntVect,
}

fn copy_case() -> impl Strategy<Value = CopyCase> {
    (case(), cuts(), prop::array::uniform3(2..=9i32)).prop_map(|(base, cut, m)| CopyCase {
        base,
        cut,
        dest_max: IntVect::from(m),
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn fine_data_is_taken_bit_for_bit_and_coarse_data_interpolated_exactly(c in case()) {
        run(&c)?;
    }
}

/// A fixed case in which (a) and (b) both have cells to check, with a periodic image of
/// fine data and a hole in the fine level: the checks of `run` are not vacuous.
#[test]
fn the_properties_check_cells_of_both_kinds() {
    let domain = IndexBox::new(IntVect::splat(-2), IntVect::splat(5));
    for mapper in 0..mappers().len() {
        let c = Case {
            domain,
            periodic: [true, false, true],
            walls: [[BCType::FoExtrap, BCType::ReflectOdd]; 3],
            ratio: IntVect::new(3, 1, 2),
            region: IndexBox::new(IntVect::new(-2, -1, 0), IntVect::new(2, 3, 2)),
            fine_max: IntVect::splat(4),
            drop: Some(3),
            dest: Some((
                IndexBox::new(IntVect::new(-2, -2, -1), IntVect::new(3, 4, 3)),
                IntVect::splat(5),
            )),
            scomp: 1,
            dcomp: 2,
            ncomp: 2,
            grow: IntVect::new(2, 1, 2),
            nghost: IntVect::new(2, 1, 1),
            mapper,
        };
        let (fine, interp) = run(&c).unwrap();
        assert!(
            fine > 0 && interp > 0,
            "{} fine, {} interpolated cells checked",
            fine,
            interp
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn fine_states_over_the_destination_and_no_ghost_cells_make_a_plain_copy(cc in copy_case()) {
        let c = &cc.base;
        let (cg, recs) = geometry(c);
        let r = c.ratio;
        let fg = cg.refine(r).unwrap();
        let mut crse = mf(&BoxArray::from_domain(c.domain, 4), NSTATE, 0);
        crse.set_val(f64::NAN, .., 0).unwrap();
        let fblock = c.region.refine_iv(r);
        let fba = BoxArray::from_domain_iv(fblock, c.fine_max);
        let mut fstate = mf(&fba, NSTATE, 0);
        fill(&mut fstate, fine_value);
        let dba = BoxArray::from_domain_iv(sub_box(fblock, cc.cut), cc.dest_max);
        let mut m: MultiFab = mf(&dba, NDEST, c.grow);
        fill(&mut m, before);
        let (cbc, fbc) = (
            PhysBcFunct::new(cg, recs.clone(), ext as Ext),
            PhysBcFunct::new(fg, recs, ext as Ext),
        );
        fill_patch_two_levels(
            &mut m,
            0,
            0.0,
            &Source::at(&crse, &cbc),
            &Source::at(&fstate, &fbc),
            Comps::new(c.scomp, c.dcomp, c.ncomp),
            mappers()[c.mapper],
        )
        .unwrap();
        let dst = c.dcomp..c.dcomp + c.ncomp;
        for mfi in m.mfiter(Tiling::None) {
            let valid = mfi.validbox();
            let a = m.array(&mfi);
            for n in 0..NDEST {
                for p in valid.grow_iv(c.grow) {
                    let want = if dst.contains(&n) && valid.contains(p) {
                        fine_value(p, n - c.dcomp + c.scomp)
                    } else {
                        before(p, n)
                    };
                    prop_assert_eq!(a[(p, n)].to_bits(), want.to_bits(), "at {} comp {}", p, n);
                }
            }
        }
    }
}
