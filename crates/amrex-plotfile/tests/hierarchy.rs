//! The writer's hierarchy checks against a cell-by-cell oracle: random two-level
//! hierarchies (boxes anywhere, overlapping or not, nested or not, with a refinement ratio
//! that agrees with the level domains or not) are refused exactly when the oracle finds a
//! fault, with the error of the first fault, and the accepted ones read back unchanged.
#![cfg(not(miri))] // Writes files (Miri runs isolated from the file system).

use std::collections::HashSet;
use std::path::PathBuf;

use amrex_box::{IndexBox, IntVect};
use amrex_multifab::{BoxArray, DistributionMapping, MultiFab};
use amrex_plotfile::{self as plotfile, Geometry, PlotfileError};
use proptest::prelude::*;

/// Level 0's domain.
fn domain0() -> IndexBox {
    IndexBox::new(IntVect::ZERO, IntVect::new(11, 7, 3))
}

fn cells(b: &IndexBox) -> impl Iterator<Item = IntVect> + '_ {
    let (lo, hi) = (b.lo(), b.hi());
    (lo[2]..=hi[2]).flat_map(move |k| {
        (lo[1]..=hi[1]).flat_map(move |j| (lo[0]..=hi[0]).map(move |i| IntVect::new(i, j, k)))
    })
}

/// Which check fails first, found cell by cell: `None` when the hierarchy is consistent.
fn oracle(
    levels: &[Vec<IndexBox>; 2],
    domains: &[IndexBox; 2],
    ratio: IntVect,
) -> Option<&'static str> {
    let mut covered: [HashSet<IntVect>; 2] = Default::default();
    for lev in 0..2 {
        if lev == 1 && domains[1] != domain0().refine_iv(ratio) {
            return Some("ratio");
        }
        for b in &levels[lev] {
            if cells(b).any(|p| !domains[lev].contains(p)) {
                return Some("outside");
            }
        }
        for b in &levels[lev] {
            for p in cells(b) {
                if !covered[lev].insert(p) {
                    return Some("overlap");
                }
            }
        }
        if lev == 1 {
            let coarse_of = |p: IntVect| {
                IntVect::new(
                    p[0].div_euclid(ratio[0]),
                    p[1].div_euclid(ratio[1]),
                    p[2].div_euclid(ratio[2]),
                )
            };
            if covered[1]
                .iter()
                .any(|&p| !covered[0].contains(&coarse_of(p)))
            {
                return Some("nesting");
            }
        }
    }
    None
}

fn kind(e: &PlotfileError) -> &'static str {
    match e {
        PlotfileError::RefRatioMismatch { .. } => "ratio",
        PlotfileError::BoxOutsideDomain { .. } => "outside",
        PlotfileError::OverlappingBoxes { .. } => "overlap",
        PlotfileError::NotProperlyNested { .. } => "nesting",
        _ => "other",
    }
}

/// A box inside level 0's domain.
fn sub_box() -> impl Strategy<Value = IndexBox> {
    ((0..6, 0..4, 0..2), (1..7, 1..5, 1..3)).prop_map(|((x, y, z), (l, m, n))| {
        IndexBox::new(
            IntVect::new(x, y, z),
            IntVect::new(x + l - 1, y + m - 1, z + n - 1),
        )
    })
}

/// A box anywhere near level 0's domain (often outside it).
fn any_box() -> impl Strategy<Value = IndexBox> {
    (
        proptest::array::uniform3(-2..12),
        proptest::array::uniform3(1..6),
    )
        .prop_map(|(lo, len)| {
            let lo = IntVect::from(lo);
            IndexBox::new(lo, lo + IntVect::from(len) - 1)
        })
}

/// `b` chopped into disjoint boxes of at most `m` cells per side.
fn chopped(b: IndexBox, m: [i32; 3]) -> Vec<IndexBox> {
    BoxArray::from_domain_iv(b, IntVect::from(m))
        .boxes()
        .to_vec()
}

/// Level 0: the domain or a sub-box chopped into disjoint boxes, or a few boxes anywhere.
fn coarse_level() -> impl Strategy<Value = Vec<IndexBox>> {
    let mgs = proptest::array::uniform3(1..6);
    prop_oneof![
        3 => mgs.clone().prop_map(|m| chopped(domain0(), m)),
        3 => (sub_box(), mgs).prop_map(|(b, m)| chopped(b, m)),
        1 => proptest::collection::vec(any_box(), 1..4),
    ]
}

/// Level 1 in level-0 cells (refined by the ratio in the test): a sub-box chopped into
/// disjoint boxes, or a few boxes anywhere.
fn fine_regions() -> impl Strategy<Value = Vec<IndexBox>> {
    prop_oneof![
        4 => (sub_box(), proptest::array::uniform3(1..4)).prop_map(|(b, m)| chopped(b, m)),
        1 => proptest::collection::vec(prop_oneof![sub_box(), any_box()], 1..4),
    ]
}

fn scratch() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("plotfile-hierarchy");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn mf(boxes: &[IndexBox]) -> MultiFab {
    let ba = BoxArray::new(boxes.to_vec());
    let mut mf = MultiFab::new(&ba, &DistributionMapping::single(&ba), 1, IntVect::ZERO);
    mf.fill(1.0).unwrap();
    mf
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn writer_refuses_exactly_the_inconsistent_hierarchies(
        coarse in coarse_level(),
        fine_regions in fine_regions(),
        ratio in proptest::array::uniform3(1i32..4),
        shift in prop_oneof![3 => Just([0; 3]), 1 => proptest::array::uniform3(-1i32..2)],
        domain_ratio_differs in proptest::bool::weighted(0.1),
        case in any::<u64>(),
    ) {
        let ratio = IntVect::from(ratio);
        // Level 1: coarse-space regions refined by the ratio, sometimes shifted by a fine
        // cell (which breaks nesting or the domain unless a coarse box is there).
        let fine: Vec<IndexBox> =
            fine_regions.iter().map(|b| b.refine_iv(ratio).shift_iv(IntVect::from(shift))).collect();
        let g0 = Geometry::cartesian(domain0(), [0.0; 3], [1.0, 0.5, 0.25]).unwrap();
        let domain_ratio = if domain_ratio_differs { ratio + IntVect::new(1, 0, 0) } else { ratio };
        let geoms = [g0, g0.refine(domain_ratio).unwrap()];
        let levels = [coarse, fine];
        let expected = oracle(&levels, &[geoms[0].domain(), geoms[1].domain()], ratio);
        let mfs = [mf(&levels[0]), mf(&levels[1])];
        let dir = scratch().join(format!("case-{case:016x}"));
        let _ = std::fs::remove_dir_all(&dir);
        let got = plotfile::write_multi_level_plotfile(
            &dir, &[&mfs[0], &mfs[1]], &["a"], &geoms, 0.0, &[0, 0], &[ratio],
        );
        match (expected, got) {
            (None, Ok(())) => {
                let back = plotfile::read_plotfile(&dir).unwrap();
                prop_assert_eq!(back.levels[0].box_array(), mfs[0].box_array());
                prop_assert_eq!(back.levels[1].box_array(), mfs[1].box_array());
                prop_assert_eq!(back.header.ref_ratio, vec![ratio[0]]);
                std::fs::remove_dir_all(&dir).unwrap();
            }
            (Some(want), Err(e)) => {
                prop_assert_eq!(want, kind(&e), "{}", e);
                prop_assert!(!dir.exists());
            }
            (want, got) => prop_assert!(false, "oracle {:?}, writer {:?}", want, got),
        }
    }
}
