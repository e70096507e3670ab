//! Every error case: the kind, the message naming the bad value, and that the
//! destination is exactly as it was.
#![warn(clippy::cast_possible_truncation)]

mod common;

use amrex_amr::{
    AmrError, AmrErrorKind, CellBilinear, CellConsLinear, Comps, FaceLinear, Interpolater,
    NodeBilinear, Operand, PcInterp, average_down, average_down_faces, average_down_geom,
    average_down_nodal, sum_fine_to_coarse,
};
use amrex_array4::{Array4, Array4Mut};
use amrex_geometry::{CoordSys, Geometry, RealBox};
use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IndexType, IntVect, MultiFab};
use common::{fill, mf, noise, snapshot};

const CELL: IndexType = IndexType::new(false, false, false);
const XFACE: IndexType = IndexType::new(true, false, false);
const NODE: IndexType = IndexType::new(true, true, true);

/// Fine (`0..=15`³ in boxes of 8) and coarse (`0..=7`³ in boxes of 4) MultiFabs of index
/// type `typ`, two components, ghost widths `fng` and `cng`, filled with noise.
fn pair(typ: IndexType, fng: i32, cng: i32) -> (MultiFab, MultiFab) {
    let f = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::splat(15)), 8).convert(typ);
    let c = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::splat(7)), 4).convert(typ);
    let mut fine = mf(&f, 2, fng);
    fill(&mut fine, noise);
    let mut crse = mf(&c, 2, cng);
    fill(&mut crse, |p, n| noise(p, n + 7));
    (fine, crse)
}

/// Runs `op` on `crse`, expects `kind`, checks `crse` is untouched and the message
/// contains `msg`.
fn refused(
    crse: &mut MultiFab,
    op: impl FnOnce(&mut MultiFab) -> Result<(), AmrError>,
    kind: &AmrErrorKind,
    msg: &str,
) {
    let before = snapshot(crse);
    let err = op(crse).expect_err("refused");
    assert_eq!(err.kind(), kind, "{err}");
    let text = err.to_string();
    assert!(text.contains(msg), "{text:?} should contain {msg:?}");
    assert!(text.starts_with(err.op()), "{text}");
    assert_eq!(snapshot(crse), before, "{err}: nothing written");
}

/// The 8³ unit-cube Cartesian geometry of the coarse data of [`pair`].
fn cartesian() -> Geometry {
    let dom = IndexBox::new(IntVect::ZERO, IntVect::splat(7));
    Geometry::new(dom, RealBox::UNIT, CoordSys::Cartesian, [false; 3]).unwrap()
}

fn bad_ratio(ratio: IntVect) -> AmrErrorKind {
    AmrErrorKind::BadRatio { ratio }
}

fn outside(operand: Operand, start: usize, end: usize, ncomp: usize) -> AmrErrorKind {
    AmrErrorKind::ComponentsOutside {
        operand,
        start,
        end,
        ncomp,
    }
}

/// Fine data (or a fine region) of index type `found` where `expected` is taken.
fn wrong_type(expected: &'static str, found: IndexType) -> AmrErrorKind {
    AmrErrorKind::WrongIndexType {
        operand: Operand::Fine,
        expected,
        found,
    }
}

fn ghost(operand: Operand, needed: IntVect, has: IntVect) -> AmrErrorKind {
    AmrErrorKind::GhostTooWide {
        operand,
        needed,
        has,
    }
}

fn not_coarsenable(index: usize, bx: IndexBox, ratio: IntVect) -> AmrErrorKind {
    AmrErrorKind::NotCoarsenable { index, bx, ratio }
}

#[test]
fn bad_ratios() {
    let (fine, mut crse) = pair(CELL, 0, 0);
    for r in [
        IntVect::new(2, 0, 2),
        IntVect::new(-2, 2, 2),
        IntVect::splat(0),
    ] {
        let kind = bad_ratio(r);
        let msg = format!("got {r}");
        refused(&mut crse, |c| average_down(&fine, c, 0..1, r), &kind, &msg);
        let g = cartesian();
        refused(
            &mut crse,
            |c| sum_fine_to_coarse(&fine, c, 0..1, r, &g),
            &kind,
            &msg,
        );
        refused(
            &mut crse,
            |c| average_down_geom(&fine, c, &g, &g, 0..1, r),
            &kind,
            &msg,
        );
    }
    let (ff, mut cf) = pair(XFACE, 0, 0);
    let kind = bad_ratio(IntVect::new(2, 2, -1));
    refused(
        &mut cf,
        |c| average_down_faces(&ff, c, IntVect::new(2, 2, -1), 0),
        &kind,
        "(2,2,-1)",
    );
    let (fnd, mut cnd) = pair(NODE, 0, 0);
    refused(
        &mut cnd,
        |c| average_down_nodal(&fnd, c, IntVect::new(0, 2, 2), 0),
        &bad_ratio(IntVect::new(0, 2, 2)),
        "(0,2,2)",
    );
}

#[test]
fn components_out_of_range() {
    let (fine, mut crse) = pair(CELL, 0, 0);
    let small = mf(fine.box_array(), 1, 0);
    refused(
        &mut crse,
        |c| average_down(&fine, c, 1..3, 2),
        &outside(Operand::Fine, 1, 3, 2),
        "components 1..3 are not within the fine data's 2 components",
    );
    refused(
        &mut crse,
        |c| average_down(&small, c, 0..2, 2),
        &outside(Operand::Fine, 0, 2, 1),
        "fine data's 1 components",
    );
    let mut crse1 = mf(crse.box_array(), 1, 0);
    refused(
        &mut crse1,
        |c| average_down(&fine, c, 0..2, 2),
        &outside(Operand::Crse, 0, 2, 1),
        "coarse data's 1 components",
    );
    refused(
        &mut crse,
        |c| average_down(&fine, c, usize::MAX - 1..usize::MAX, 2),
        &outside(Operand::Fine, usize::MAX - 1, usize::MAX, 2),
        "components",
    );
    // Face and nodal averages take every component: the counts must match.
    let (ff, _) = pair(XFACE, 0, 0);
    let mut c1 = mf(
        &BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::splat(7)), 4).convert(XFACE),
        1,
        0,
    );
    refused(
        &mut c1,
        |c| average_down_faces(&ff, c, 2, 0),
        &AmrErrorKind::ComponentCountMismatch { fine: 2, crse: 1 },
        "got 2 fine and 1 coarse",
    );
}

#[test]
fn fine_boxes_that_do_not_coarsen() {
    let (_, mut crse) = pair(CELL, 0, 0);
    let odd = BoxArray::new(vec![
        IndexBox::new(IntVect::ZERO, IntVect::splat(7)),
        IndexBox::new(IntVect::new(8, 0, 0), IntVect::new(12, 7, 7)),
    ]);
    let fine = mf(&odd, 2, 0);
    refused(
        &mut crse,
        |c| average_down(&fine, c, 0..2, 2),
        &not_coarsenable(1, odd.get(1), IntVect::splat(2)),
        "fine box 1 ((8,0,0) (12,7,7) (0,0,0)) does not coarsen by (2,2,2)",
    );
    // A ratio of 3 does not divide the boxes of 8.
    let (fine, _) = pair(CELL, 0, 0);
    refused(
        &mut crse,
        |c| average_down(&fine, c, 0..1, 3),
        &not_coarsenable(0, fine.box_array().get(0), IntVect::splat(3)),
        "does not coarsen",
    );
    let (ff, mut cf) = pair(XFACE, 0, 0);
    refused(
        &mut cf,
        |c| average_down_faces(&ff, c, 3, 0),
        &not_coarsenable(0, ff.box_array().get(0), IntVect::splat(3)),
        "does not coarsen",
    );
}

#[test]
fn ghost_widths_wider_than_the_data_has() {
    let (ff, mut cf) = pair(XFACE, 2, 1);
    // Coarse ghost 2 > 1.
    refused(
        &mut cf,
        |c| average_down_faces(&ff, c, 2, 2),
        &ghost(Operand::Crse, IntVect::splat(2), IntVect::splat(1)),
        "needs a ghost width of (2,2,2) in the coarse data, which has (1,1,1)",
    );
    // Fine ghost 1 · (2, 2, 4) > 2.
    let (ff4, mut cf4) = pair(XFACE, 2, 1);
    let r = IntVect::new(2, 2, 4);
    refused(
        &mut cf4,
        |c| average_down_faces(&ff4, c, r, 1),
        &ghost(Operand::Fine, IntVect::new(2, 2, 4), IntVect::splat(2)),
        "in the fine data",
    );
    // Negative widths.
    refused(
        &mut cf,
        |c| average_down_faces(&ff, c, 2, -1),
        &ghost(Operand::Crse, IntVect::splat(-1), IntVect::splat(1)),
        "(-1,-1,-1)",
    );
    let (fnd, mut cnd) = pair(NODE, 1, 1);
    refused(
        &mut cnd,
        |c| average_down_nodal(&fnd, c, 2, 1),
        &ghost(Operand::Fine, IntVect::splat(2), IntVect::splat(1)),
        "fine data",
    );
}

#[test]
fn index_types() {
    let (fine, _) = pair(CELL, 0, 0);
    let (_, mut cf) = pair(XFACE, 0, 0);
    refused(
        &mut cf,
        |c| average_down(&fine, c, 0..1, 2),
        &AmrErrorKind::IndexTypeMismatch {
            operand: Operand::Crse,
            found: XFACE,
            of: Operand::Fine,
            expected: CELL,
        },
        "expected the coarse data to have the fine data's index type (C,C,C), got (N,C,C)",
    );
    let (ff, mut cf) = pair(XFACE, 0, 0);
    refused(
        &mut cf,
        |c| average_down(&ff, c, 0..1, 2),
        &wrong_type("cell-centred or nodal", XFACE),
        "expected cell-centred or nodal fine data, got index type (N,C,C)",
    );
    let (fc, mut cc) = pair(CELL, 0, 0);
    refused(
        &mut cc,
        |c| average_down_faces(&fc, c, 2, 0),
        &wrong_type("face-centred (nodal in exactly one direction)", CELL),
        "face-centred",
    );
    refused(
        &mut cc,
        |c| average_down_nodal(&fc, c, 2, 0),
        &wrong_type("nodal", CELL),
        "expected nodal fine data",
    );
    let (fnd, mut cnd) = pair(NODE, 0, 0);
    let g = cartesian();
    let gf = g.refine(2).unwrap();
    refused(
        &mut cnd,
        |c| average_down_geom(&fnd, c, &gf, &g, 0..1, 2),
        &wrong_type("cell-centred", NODE),
        "expected cell-centred fine data",
    );
    refused(
        &mut cnd,
        |c| sum_fine_to_coarse(&fnd, c, 0..1, 2, &g),
        &wrong_type("cell-centred", NODE),
        "cell-centred",
    );
}

#[test]
fn mismatched_geometries() {
    let (fine, mut crse) = pair(CELL, 0, 0);
    let rb = RealBox::UNIT;
    let cdom = IndexBox::new(IntVect::ZERO, IntVect::splat(7));
    let g = Geometry::new(cdom, rb, CoordSys::Cartesian, [false; 3]).unwrap();
    let rz_dom = IndexBox::new(IntVect::ZERO, IntVect::new(15, 15, 0));
    let rz = Geometry::new(rz_dom, rb, CoordSys::Rz, [false; 3]).unwrap();
    let kind = AmrErrorKind::GeometryMismatch {
        fine_domain: rz_dom,
        fine_coord: CoordSys::Rz,
        crse_domain: cdom,
        crse_coord: CoordSys::Cartesian,
        ratio: IntVect::splat(2),
    };
    refused(
        &mut crse,
        |c| average_down_geom(&fine, c, &rz, &g, 0..1, 2),
        &kind,
        "the fine geometry (RZ, domain",
    );
    // The right coordinate system but the wrong refinement.
    let g4 = g.refine(4).unwrap();
    refused(
        &mut crse,
        |c| average_down_geom(&fine, c, &g4, &g, 0..1, 2),
        &AmrErrorKind::GeometryMismatch {
            fine_domain: g4.domain(),
            fine_coord: CoordSys::Cartesian,
            crse_domain: cdom,
            crse_coord: CoordSys::Cartesian,
            ratio: IntVect::splat(2),
        },
        "refined by (2,2,2)",
    );
}

#[test]
fn a_refused_parallel_copy_is_reported() {
    // A coarse map over two ranks in a one-process run: the copy would need messages.
    let (fine, _) = pair(CELL, 0, 0);
    let cba = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::splat(7)), 4);
    let dm = DistributionMapping::with_ranks(&cba, 2);
    let mut crse = MultiFab::new(&cba, &dm, 2, IntVect::ZERO);
    let before = snapshot(&crse);
    let err = average_down(&fine, &mut crse, 0..2, 2).unwrap_err();
    assert!(matches!(err.kind(), AmrErrorKind::MultiFab(_)), "{err}");
    assert!(
        err.to_string()
            .starts_with("average_down: a MultiFab operation underneath failed: ")
    );
    assert!(core::error::Error::source(&err).is_some());
    assert_eq!(snapshot(&crse), before);
}

/// The arguments of an interpolation: a coarse fab over `cbx` and a fine fab over
/// `fbx`, two components each, the region, components and ratio.
#[derive(Clone, Copy)]
struct Interp {
    cbx: IndexBox,
    fbx: IndexBox,
    region: IndexBox,
    comps: Comps,
    ratio: IntVect,
}

impl Interp {
    /// Valid arguments for every cell-centred interpolater: the fine fab `0..=7`³ (the
    /// region), coarse data over `-1..=4`³, one component, ratio 2.
    fn valid() -> Self {
        let fbx = IndexBox::new(IntVect::ZERO, IntVect::splat(7));
        Self {
            cbx: IndexBox::new(IntVect::splat(-1), IntVect::splat(4)),
            fbx,
            region: fbx,
            comps: Comps::first(1),
            ratio: IntVect::splat(2),
        }
    }

    /// Runs `interp` on these arguments, expects `kind` and a message containing `msg`,
    /// and checks that the fine fab is untouched.
    fn refused(self, interp: &dyn Interpolater, kind: &AmrErrorKind, msg: &str) {
        let crse = vec![1.0; self.cbx.checked_num_pts_usize().unwrap() * 2];
        let mut fine = vec![7.0; self.fbx.checked_num_pts_usize().unwrap() * 2];
        let err = interp
            .interp(
                Array4::new(&crse, self.cbx, 2),
                Array4Mut::new(&mut fine, self.fbx, 2),
                &self.region,
                self.comps,
                self.ratio,
                None,
            )
            .expect_err("refused");
        assert_eq!(err.kind(), kind, "{err}");
        assert_eq!(err.op(), interp.name());
        assert!(
            err.to_string().contains(msg),
            "{err} should contain {msg:?}"
        );
        assert!(fine.iter().all(|&v| v == 7.0), "nothing written");
    }
}

#[test]
fn interpolation_errors() {
    let ok = Interp::valid();
    let (fbx, r) = (ok.fbx, ok.ratio);
    let cc = CellConsLinear::CELL_CONS_INTERP;
    Interp {
        ratio: IntVect::new(2, 0, 2),
        ..ok
    }
    .refused(&cc, &bad_ratio(IntVect::new(2, 0, 2)), "got (2,0,2)");
    Interp {
        ratio: IntVect::splat(-1),
        ..ok
    }
    .refused(&PcInterp, &bad_ratio(IntVect::splat(-1)), "(-1,-1,-1)");
    // Index types.
    let nodal = IndexBox::with_type(IntVect::ZERO, IntVect::splat(6), NODE);
    Interp {
        region: nodal,
        ..ok
    }
    .refused(
        &cc,
        &wrong_type("cell-centred", NODE),
        "expected cell-centred fine data",
    );
    Interp {
        region: nodal,
        ..ok
    }
    .refused(&CellBilinear, &wrong_type("cell-centred", NODE), "(N,N,N)");
    ok.refused(
        &NodeBilinear,
        &wrong_type("nodal", CELL),
        "expected nodal fine data",
    );
    Interp {
        region: nodal,
        ..ok
    }
    .refused(
        &FaceLinear,
        &wrong_type("face-centred (nodal in exactly one direction)", NODE),
        "face-centred",
    );
    // Components.
    Interp {
        comps: Comps::new(1, 0, 2),
        ..ok
    }
    .refused(
        &PcInterp,
        &outside(Operand::Crse, 1, 3, 2),
        "coarse data's 2 components",
    );
    Interp {
        comps: Comps::new(0, 2, 1),
        ..ok
    }
    .refused(
        &PcInterp,
        &outside(Operand::Fine, 2, 3, 2),
        "fine data's 2 components",
    );
    // A fine region outside the fine fab.
    let big = fbx.grow(1);
    Interp { region: big, ..ok }.refused(
        &PcInterp,
        &AmrErrorKind::RegionOutside {
            operand: Operand::Fine,
            region: big,
            bounds: fbx,
        },
        "the fine region ((-1,-1,-1) (8,8,8) (0,0,0)) is not inside",
    );
    // Coarse data without the ghost cells the interpolater reads.
    let tight = IndexBox::new(IntVect::ZERO, IntVect::splat(3));
    let need = cc.coarse_box(&fbx, r);
    Interp { cbx: tight, ..ok }.refused(
        &cc,
        &AmrErrorKind::RegionOutside {
            operand: Operand::Crse,
            region: need,
            bounds: tight,
        },
        "the coarse region ((-1,-1,-1) (4,4,4) (0,0,0))",
    );
    let xf = IndexBox::with_type(IntVect::ZERO, IntVect::new(7, 7, 7), XFACE);
    let need = FaceLinear.coarse_box(&xf, r);
    Interp {
        cbx: tight,
        region: xf,
        ..ok
    }
    .refused(
        &FaceLinear,
        &AmrErrorKind::RegionOutside {
            operand: Operand::Crse,
            region: need,
            bounds: tight,
        },
        "coarse region",
    );
}

#[test]
fn empty_inputs_do_nothing() {
    let (fine, mut crse) = pair(CELL, 0, 0);
    let before = snapshot(&crse);
    average_down(&fine, &mut crse, 0..0, 2).unwrap();
    average_down(&fine, &mut crse, 2..2, 2).unwrap();
    assert_eq!(snapshot(&crse), before);
    let empty = mf(&BoxArray::new(vec![]), 2, 0);
    average_down(&empty, &mut crse, 0..2, 2).unwrap();
    assert_eq!(snapshot(&crse), before);
    // An empty interpolation region.
    let fbx = IndexBox::new(IntVect::ZERO, IntVect::splat(3));
    let mut data = vec![5.0; 64];
    let none = IndexBox::new(IntVect::splat(2), IntVect::splat(1));
    PcInterp
        .interp(
            Array4::new(
                &[1.0; 8],
                IndexBox::new(IntVect::ZERO, IntVect::splat(1)),
                1,
            ),
            Array4Mut::new(&mut data, fbx, 1),
            &none,
            Comps::first(1),
            IntVect::splat(2),
            None,
        )
        .unwrap();
    assert!(data.iter().all(|&v| v == 5.0));
}
