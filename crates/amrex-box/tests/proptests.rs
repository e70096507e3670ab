//! Property tests for the box algebra.
#![warn(clippy::cast_possible_truncation)]

use amrex_box::{IndexBox, IndexType, IntVect};
use proptest::prelude::*;

fn iv(range: core::ops::Range<i32>) -> impl Strategy<Value = IntVect> {
    (range.clone(), range.clone(), range).prop_map(|(x, y, z)| IntVect::new(x, y, z))
}

fn any_type() -> impl Strategy<Value = IndexType> {
    (0u8..8).prop_map(IndexType::from_bits)
}

/// A non-empty box of moderate size anywhere around the origin.
fn any_box() -> impl Strategy<Value = IndexBox> {
    (iv(-50..50), iv(1..12), any_type())
        .prop_map(|(lo, len, t)| IndexBox::with_type(lo, lo + len - 1, t))
}

fn cases() -> ProptestConfig {
    ProptestConfig {
        cases: if cfg!(miri) { 8 } else { 256 },
        // Miri's isolation forbids the file access failure persistence needs.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(cases())]

    #[test]
    fn grow_then_shrink_is_identity(bx in any_box(), n in iv(0..6)) {
        prop_assert_eq!(bx.grow_iv(n).grow_iv(-n), bx);
        prop_assert_eq!(bx.grow_iv(n).length(), bx.length() + n * 2);
        prop_assert!(bx.grow_iv(n).contains_box(&bx));
    }

    #[test]
    fn refine_then_coarsen_is_identity(bx in any_box(), r in iv(1..5)) {
        prop_assert_eq!(bx.refine_iv(r).coarsen_iv(r), bx);
        prop_assert!(bx.refine_iv(r).coarsenable(r));
    }

    #[test]
    fn coarsen_covers(bx in any_box(), r in iv(1..5)) {
        // Refining the coarsened box gives a box that contains the original.
        let c = bx.coarsen_iv(r).refine_iv(r);
        prop_assert!(c.contains_box(&bx));
        // And it is the smallest such aligned box: shrinking by a ratio loses it.
        for d in 0..3 {
            prop_assert!(c.small_end()[d] > bx.small_end()[d] - r[d]);
            prop_assert!(c.big_end()[d] < bx.big_end()[d] + r[d]);
        }
    }

    #[test]
    fn intersection_commutes(a in any_box(), b in any_box()) {
        prop_assert_eq!(a.intersection(&b), b.intersection(&a));
        if let Some(i) = a.intersection(&b) {
            prop_assert!(a.contains_box(&i) && b.contains_box(&i));
            for p in i.iter() {
                prop_assert!(a.contains(p) && b.contains(p));
            }
        } else if a.same_type(&b) {
            // No common point: spot-check a's corners.
            prop_assert!(!b.contains(a.small_end()) && !b.contains(a.big_end()));
        }
    }

    #[test]
    fn linear_index_round_trip(bx in any_box(), seed in any::<u64>()) {
        let n = usize::try_from(seed % bx.num_pts()).unwrap();
        let p = bx.at_index(n);
        prop_assert!(bx.contains(p));
        prop_assert_eq!(bx.index(p), n);
        let o = p - bx.small_end();
        let l = bx.length();
        prop_assert_eq!(i32::try_from(n).unwrap(), o[0] + l[0] * (o[1] + l[1] * o[2]));
    }

    #[test]
    fn surrounding_enclosed_round_trip(bx in any_box(), d in 0usize..3) {
        let cells = bx.enclosed_cells();
        prop_assert_eq!(cells.surrounding_nodes().enclosed_cells(), cells);
        prop_assert_eq!(bx.surrounding_nodes_dir(d).enclosed_cells_dir(d), bx.enclosed_cells_dir(d));
        prop_assert_eq!(bx.convert(IndexType::NODE).convert(bx.ix_type()), bx);
        prop_assert_eq!(cells.surrounding_nodes().num_pts(),
            (0..3).map(|d| cells.length_dir(d) + 1).product::<u64>());
    }

    #[test]
    fn tiles_partition(bx in any_box(), ts in iv(1..6)) {
        let tiles = bx.tiles(ts);
        let total: u64 = tiles.clone().map(|t| t.num_pts()).sum();
        prop_assert_eq!(total, bx.num_pts());
        for t in tiles {
            prop_assert!(bx.contains_box(&t));
            prop_assert!(t.length().all_le(ts));
        }
    }

    #[test]
    fn shift_moves_points(bx in any_box(), v in iv(-20..20)) {
        let s = bx.shift_iv(v);
        prop_assert_eq!(s.length(), bx.length());
        prop_assert_eq!(s.index(bx.big_end() + v), bx.index(bx.big_end()));
        prop_assert_eq!(bx.shift(0, v[0]).shift(1, v[1]).shift(2, v[2]), s);
    }
}
