//! Every error case: the kind, the message naming the bad value, and that the
//! destination is exactly as it was.

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

#[test]
fn bad_ratios() {
    let (fine, mut crse) = pair(CELL, 0, 0);
    for r in [
        IntVect::new(2, 0, 2),
        IntVect::new(-2, 2, 2),
        IntVect::splat(0),
    ] {
        let kind = AmrErrorKind::BadRatio { ratio: r };
        let msg = format!("got {r}");
        refused(&mut crse, |c| average_down(&fine, c, 0, 1, r), &kind, &msg);
        let g = Geometry::new(
            IndexBox::new(IntVect::ZERO, IntVect::splat(7)),
            RealBox::UNIT,
            CoordSys::Cartesian,
            [false; 3],
        )
        .unwrap();
        refused(
            &mut crse,
            |c| sum_fine_to_coarse(&fine, c, 0, 1, r, &g),
            &kind,
            &msg,
        );
        refused(
            &mut crse,
            |c| average_down_geom(&fine, c, &g, &g, 0, 1, r),
            &kind,
            &msg,
        );
    }
    let (ff, mut cf) = pair(XFACE, 0, 0);
    let kind = AmrErrorKind::BadRatio {
        ratio: IntVect::new(2, 2, -1),
    };
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
        &AmrErrorKind::BadRatio {
            ratio: IntVect::new(0, 2, 2),
        },
        "(0,2,2)",
    );
}

#[test]
fn components_out_of_range() {
    let (fine, mut crse) = pair(CELL, 0, 0);
    let small = mf(fine.box_array(), 1, 0);
    refused(
        &mut crse,
        |c| average_down(&fine, c, 1, 2, 2),
        &AmrErrorKind::ComponentsOutside {
            operand: Operand::Fine,
            start: 1,
            count: 2,
            ncomp: 2,
        },
        "components 1..1+2 are not within the fine data's 2 components",
    );
    refused(
        &mut crse,
        |c| average_down(&small, c, 0, 2, 2),
        &AmrErrorKind::ComponentsOutside {
            operand: Operand::Fine,
            start: 0,
            count: 2,
            ncomp: 1,
        },
        "fine data's 1 components",
    );
    let mut crse1 = mf(crse.box_array(), 1, 0);
    refused(
        &mut crse1,
        |c| average_down(&fine, c, 0, 2, 2),
        &AmrErrorKind::ComponentsOutside {
            operand: Operand::Crse,
            start: 0,
            count: 2,
            ncomp: 1,
        },
        "coarse data's 1 components",
    );
    refused(
        &mut crse,
        |c| average_down(&fine, c, usize::MAX, 2, 2),
        &AmrErrorKind::ComponentsOutside {
            operand: Operand::Fine,
            start: usize::MAX,
            count: 2,
            ncomp: 2,
        },
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
        |c| average_down(&fine, c, 0, 2, 2),
        &AmrErrorKind::NotCoarsenable {
            index: 1,
            bx: odd.get(1),
            ratio: IntVect::splat(2),
        },
        "fine box 1 ((8,0,0) (12,7,7) (0,0,0)) does not coarsen by (2,2,2)",
    );
    // A ratio of 3 does not divide the boxes of 8.
    let (fine, _) = pair(CELL, 0, 0);
    refused(
        &mut crse,
        |c| average_down(&fine, c, 0, 1, 3),
        &AmrErrorKind::NotCoarsenable {
            index: 0,
            bx: fine.box_array().get(0),
            ratio: IntVect::splat(3),
        },
        "does not coarsen",
    );
    let (ff, mut cf) = pair(XFACE, 0, 0);
    refused(
        &mut cf,
        |c| average_down_faces(&ff, c, 3, 0),
        &AmrErrorKind::NotCoarsenable {
            index: 0,
            bx: ff.box_array().get(0),
            ratio: IntVect::splat(3),
        },
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
        &AmrErrorKind::GhostTooWide {
            operand: Operand::Crse,
            needed: IntVect::splat(2),
            has: IntVect::splat(1),
        },
        "needs a ghost width of (2,2,2) in the coarse data, which has (1,1,1)",
    );
    // Fine ghost 1 · (2, 2, 4) > 2.
    let (ff4, mut cf4) = pair(XFACE, 2, 1);
    let r = IntVect::new(2, 2, 4);
    refused(
        &mut cf4,
        |c| average_down_faces(&ff4, c, r, 1),
        &AmrErrorKind::GhostTooWide {
            operand: Operand::Fine,
            needed: IntVect::new(2, 2, 4),
            has: IntVect::splat(2),
        },
        "in the fine data",
    );
    // Negative widths.
    refused(
        &mut cf,
        |c| average_down_faces(&ff, c, 2, -1),
        &AmrErrorKind::GhostTooWide {
            operand: Operand::Crse,
            needed: IntVect::splat(-1),
            has: IntVect::splat(1),
        },
        "(-1,-1,-1)",
    );
    let (fnd, mut cnd) = pair(NODE, 1, 1);
    refused(
        &mut cnd,
        |c| average_down_nodal(&fnd, c, 2, 1),
        &AmrErrorKind::GhostTooWide {
            operand: Operand::Fine,
            needed: IntVect::splat(2),
            has: IntVect::splat(1),
        },
        "fine data",
    );
}

#[test]
fn index_types() {
    let (fine, _) = pair(CELL, 0, 0);
    let (_, mut cf) = pair(XFACE, 0, 0);
    refused(
        &mut cf,
        |c| average_down(&fine, c, 0, 1, 2),
        &AmrErrorKind::IndexTypeMismatch {
            fine: CELL,
            crse: XFACE,
        },
        "got (C,C,C) fine and (N,C,C) coarse",
    );
    let (ff, mut cf) = pair(XFACE, 0, 0);
    refused(
        &mut cf,
        |c| average_down(&ff, c, 0, 1, 2),
        &AmrErrorKind::WrongIndexType {
            expected: "cell-centred or nodal",
            found: XFACE,
        },
        "expected cell-centred or nodal data, got index type (N,C,C)",
    );
    let (fc, mut cc) = pair(CELL, 0, 0);
    refused(
        &mut cc,
        |c| average_down_faces(&fc, c, 2, 0),
        &AmrErrorKind::WrongIndexType {
            expected: "face-centred (nodal in exactly one direction)",
            found: CELL,
        },
        "face-centred",
    );
    refused(
        &mut cc,
        |c| average_down_nodal(&fc, c, 2, 0),
        &AmrErrorKind::WrongIndexType {
            expected: "nodal",
            found: CELL,
        },
        "expected nodal data",
    );
    let (fnd, mut cnd) = pair(NODE, 0, 0);
    let g = Geometry::new(
        IndexBox::new(IntVect::ZERO, IntVect::splat(7)),
        RealBox::UNIT,
        CoordSys::Cartesian,
        [false; 3],
    )
    .unwrap();
    let gf = g.refine(2).unwrap();
    refused(
        &mut cnd,
        |c| average_down_geom(&fnd, c, &gf, &g, 0, 1, 2),
        &AmrErrorKind::WrongIndexType {
            expected: "cell-centred",
            found: NODE,
        },
        "expected cell-centred data",
    );
    refused(
        &mut cnd,
        |c| sum_fine_to_coarse(&fnd, c, 0, 1, 2, &g),
        &AmrErrorKind::WrongIndexType {
            expected: "cell-centred",
            found: NODE,
        },
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
        |c| average_down_geom(&fine, c, &rz, &g, 0, 1, 2),
        &kind,
        "the fine geometry (RZ, domain",
    );
    // The right coordinate system but the wrong refinement.
    let g4 = g.refine(4).unwrap();
    refused(
        &mut crse,
        |c| average_down_geom(&fine, c, &g4, &g, 0, 1, 2),
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
    let err = average_down(&fine, &mut crse, 0, 2, 2).unwrap_err();
    assert!(matches!(err.kind(), AmrErrorKind::Copy(_)), "{err}");
    assert!(
        err.to_string()
            .starts_with("average_down: the parallel copy into the coarse data failed: ")
    );
    assert!(core::error::Error::source(&err).is_some());
    assert_eq!(snapshot(&crse), before);
}

/// Interpolation errors: a coarse fab over `cbx`, a fine fab over `fbx`, two components
/// each.
#[expect(
    clippy::too_many_arguments,
    reason = "the interpolater's arguments plus the expected kind and message"
)]
fn interp_refused(
    interp: &dyn Interpolater,
    cbx: IndexBox,
    fbx: IndexBox,
    region: IndexBox,
    comps: Comps,
    ratio: IntVect,
    kind: &AmrErrorKind,
    msg: &str,
) {
    let crse = vec![1.0; cbx.num_pts() as usize * 2];
    let mut fine = vec![7.0; fbx.num_pts() as usize * 2];
    let err = interp
        .interp(
            Array4::new(&crse, cbx, 2),
            Array4Mut::new(&mut fine, fbx, 2),
            &region,
            comps,
            ratio,
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

#[test]
fn interpolation_errors() {
    let fbx = IndexBox::new(IntVect::ZERO, IntVect::splat(7));
    let cbx = IndexBox::new(IntVect::splat(-1), IntVect::splat(4));
    let r = IntVect::splat(2);
    let one = Comps::first(1);
    let cc = CellConsLinear::CELL_CONS_INTERP;
    interp_refused(
        &cc,
        cbx,
        fbx,
        fbx,
        one,
        IntVect::new(2, 0, 2),
        &AmrErrorKind::BadRatio {
            ratio: IntVect::new(2, 0, 2),
        },
        "got (2,0,2)",
    );
    interp_refused(
        &PcInterp,
        cbx,
        fbx,
        fbx,
        one,
        IntVect::splat(-1),
        &AmrErrorKind::BadRatio {
            ratio: IntVect::splat(-1),
        },
        "(-1,-1,-1)",
    );
    // Index types.
    let nodal = IndexBox::with_type(IntVect::ZERO, IntVect::splat(6), NODE);
    interp_refused(
        &cc,
        cbx,
        fbx,
        nodal,
        one,
        r,
        &AmrErrorKind::WrongIndexType {
            expected: "cell-centred",
            found: NODE,
        },
        "expected cell-centred data",
    );
    interp_refused(
        &CellBilinear,
        cbx,
        fbx,
        nodal,
        one,
        r,
        &AmrErrorKind::WrongIndexType {
            expected: "cell-centred",
            found: NODE,
        },
        "(N,N,N)",
    );
    interp_refused(
        &NodeBilinear,
        cbx,
        fbx,
        fbx,
        one,
        r,
        &AmrErrorKind::WrongIndexType {
            expected: "nodal",
            found: CELL,
        },
        "expected nodal data",
    );
    interp_refused(
        &FaceLinear,
        cbx,
        fbx,
        nodal,
        one,
        r,
        &AmrErrorKind::WrongIndexType {
            expected: "face-centred (nodal in exactly one direction)",
            found: NODE,
        },
        "face-centred",
    );
    // Components.
    interp_refused(
        &PcInterp,
        cbx,
        fbx,
        fbx,
        Comps::new(1, 0, 2),
        r,
        &AmrErrorKind::ComponentsOutside {
            operand: Operand::Crse,
            start: 1,
            count: 2,
            ncomp: 2,
        },
        "coarse data's 2 components",
    );
    interp_refused(
        &PcInterp,
        cbx,
        fbx,
        fbx,
        Comps::new(0, 2, 1),
        r,
        &AmrErrorKind::ComponentsOutside {
            operand: Operand::Fine,
            start: 2,
            count: 1,
            ncomp: 2,
        },
        "fine data's 2 components",
    );
    // A fine region outside the fine fab.
    let big = fbx.grow(1);
    interp_refused(
        &PcInterp,
        cbx,
        fbx,
        big,
        one,
        r,
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
    interp_refused(
        &cc,
        tight,
        fbx,
        fbx,
        one,
        r,
        &AmrErrorKind::RegionOutside {
            operand: Operand::Crse,
            region: need,
            bounds: tight,
        },
        "the coarse region ((-1,-1,-1) (4,4,4) (0,0,0))",
    );
    let xf = IndexBox::with_type(IntVect::ZERO, IntVect::new(7, 7, 7), XFACE);
    let need = FaceLinear.coarse_box(&xf, r);
    interp_refused(
        &FaceLinear,
        tight,
        fbx,
        xf,
        one,
        r,
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
    average_down(&fine, &mut crse, 0, 0, 2).unwrap();
    average_down(&fine, &mut crse, 2, 0, 2).unwrap();
    assert_eq!(snapshot(&crse), before);
    let empty = mf(&BoxArray::new(vec![]), 2, 0);
    average_down(&empty, &mut crse, 0, 2, 2).unwrap();
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
