//! Box facts from AMReX and pyAMReX's test-suite, plus unit tests for every operation.
#![warn(clippy::cast_possible_truncation)]

use amrex_box::{IndexBox, IndexType, IntVect};

fn b(lo: [i32; 3], hi: [i32; 3]) -> IndexBox {
    IndexBox::new(lo.into(), hi.into())
}

fn domain() -> IndexBox {
    b([0, 0, 0], [127, 127, 127])
}

#[test]
fn pyamrex_128_cubed_box() {
    let bx = domain();
    assert!(bx.ok());
    assert_eq!(bx.num_pts(), 128 * 128 * 128);
    assert_eq!(bx.length(), IntVect::splat(128));
    assert!(bx.cell_centered());
}

#[test]
fn pyamrex_grow_by_three() {
    let g = domain().grow(3);
    assert_eq!(g.small_end(), IntVect::splat(-3));
    assert_eq!(g.big_end(), IntVect::splat(130));
    assert_eq!(g.length(), IntVect::splat(134));
    assert_eq!(g.num_pts(), 134 * 134 * 134);
}

#[test]
fn pyamrex_surrounding_nodes() {
    let n = domain().surrounding_nodes();
    assert_eq!(n.ix_type(), IndexType::NODE);
    assert_eq!(n.small_end(), IntVect::ZERO);
    assert_eq!(n.big_end(), IntVect::splat(128));
    assert_eq!(n.num_pts(), 129 * 129 * 129);
    assert_eq!(n.enclosed_cells(), domain());
}

#[test]
fn pyamrex_slab_at_k60() {
    let s = domain().make_slab(2, 60);
    assert_eq!(s.lo(), IntVect::new(0, 0, 60));
    assert_eq!(s.hi(), IntVect::new(127, 127, 60));
    assert_eq!(s.num_pts(), 128 * 128);
}

#[test]
fn default_is_empty() {
    let d = IndexBox::default();
    assert!(!d.ok() && d.is_empty());
    assert_eq!(d.num_pts(), 0);
    assert_eq!(d.iter().count(), 0);
    assert_eq!(d.tiles(IntVect::UNIT).len(), 0);
}

#[test]
fn ok_length_num_pts() {
    let x = b([1, 2, 3], [1, 5, 10]);
    assert_eq!(x.length(), IntVect::new(1, 4, 8));
    assert_eq!(x.num_pts(), 32);
    assert_eq!(x.length_dir(2), 8);
    let empty = b([0, 0, 0], [3, -1, 3]);
    assert!(!empty.ok());
    assert_eq!(empty.num_pts(), 0);
    assert_eq!(empty.length_dir(1), 0);
    assert_eq!(empty.checked_num_pts_usize(), Some(0));
    assert_eq!(
        IndexBox::from_lo_len(IntVect::new(1, 2, 3), IntVect::new(2, 2, 2)),
        b([1, 2, 3], [2, 3, 4])
    );
}

#[test]
fn num_pts_overflow_is_checked() {
    let huge = b([i32::MIN; 3], [i32::MAX; 3]);
    assert_eq!(huge.checked_num_pts(), None);
    assert_eq!(huge.checked_num_pts_usize(), None);
    let big = b([0; 3], [i32::MAX - 1, i32::MAX - 1, 0]);
    assert_eq!(
        big.checked_num_pts(),
        Some((i32::MAX as u64) * (i32::MAX as u64))
    );
}

#[test]
#[should_panic(expected = "overflows u64")]
fn num_pts_overflow_panics() {
    let _ = b([i32::MIN; 3], [i32::MAX; 3]).num_pts();
}

#[test]
fn contains() {
    let x = domain();
    assert!(x.contains(IntVect::ZERO));
    assert!(x.contains(IntVect::splat(127)));
    assert!(!x.contains(IntVect::new(128, 0, 0)));
    assert!(!x.contains(IntVect::new(0, -1, 0)));
    assert!(x.contains_box(&x));
    assert!(x.contains_box(&x.grow(-1)));
    assert!(!x.contains_box(&x.grow(1)));
    assert!(!x.contains_box(&x.surrounding_nodes().grow_hi(0, -5)));
}

#[test]
fn intersection() {
    let x = b([0, 0, 0], [9, 9, 9]);
    let y = b([5, -3, 2], [20, 4, 9]);
    let want = b([5, 0, 2], [9, 4, 9]);
    assert_eq!(x.intersection(&y), Some(want));
    assert_eq!(y.intersection(&x), Some(want));
    assert_eq!(x & y, want);
    assert!(x.intersects(&y));
    let far = x.shift(0, 100);
    assert_eq!(x.intersection(&far), None);
    assert!(!(x & far).ok());
    assert_eq!(x.intersection(&x.surrounding_nodes()), None, "types differ");
    assert_eq!(x.min_box(&y), b([0, -3, 0], [20, 9, 9]));
}

#[test]
#[should_panic(expected = "index types differ")]
fn bitand_type_mismatch() {
    let _ = domain() & domain().surrounding_nodes();
}

#[test]
fn grow_variants() {
    let x = b([0, 0, 0], [3, 3, 3]);
    assert_eq!(x.grow_iv(IntVect::new(1, 2, 0)), b([-1, -2, 0], [4, 5, 3]));
    assert_eq!(x.grow_dir(1, 2), b([0, -2, 0], [3, 5, 3]));
    assert_eq!(x.grow_lo(2, 1), b([0, 0, -1], [3, 3, 3]));
    assert_eq!(x.grow_hi(0, 4), b([0, 0, 0], [7, 3, 3]));
    assert_eq!(x.grow(-2), b([2, 2, 2], [1, 1, 1]));
    assert!(!x.grow(-2).ok());
}

#[test]
fn nodes_cells_convert() {
    let x = b([0, 0, 0], [3, 4, 5]);
    let xf = x.surrounding_nodes_dir(0);
    assert_eq!(xf.ix_type(), IndexType::new(true, false, false));
    assert_eq!(xf.big_end(), IntVect::new(4, 4, 5));
    assert_eq!(xf.surrounding_nodes_dir(0), xf, "already nodal: unchanged");
    assert_eq!(xf.enclosed_cells_dir(0), x);
    assert_eq!(xf.enclosed_cells_dir(1), xf, "already cell: unchanged");
    assert_eq!(
        x.convert(IndexType::new(false, true, true)).big_end(),
        IntVect::new(3, 5, 6)
    );
    assert_eq!(
        xf.convert(IndexType::new(false, true, false)).big_end(),
        IntVect::new(3, 5, 5)
    );
}

#[test]
fn coarsen_refine_amrex_rounding() {
    // Cell-centred: floor division on both ends.
    let x = b([-4, -3, -1], [7, 4, 0]);
    assert_eq!(x.coarsen(2), b([-2, -2, -1], [3, 2, 0]));
    assert_eq!(x.coarsen(4), b([-1, -1, -1], [1, 1, 0]));
    // Refining a cell box: big = (big+1)*r - 1.
    assert_eq!(b([-1, 0, 1], [1, 2, 3]).refine(2), b([-2, 0, 2], [3, 5, 7]));
    // Node-centred: big_end rounds up when not divisible.
    let n = IndexBox::with_type(
        IntVect::new(-3, 0, 1),
        IntVect::new(5, 4, 7),
        IndexType::NODE,
    );
    let c = n.coarsen(2);
    assert_eq!(c.small_end(), IntVect::new(-2, 0, 0));
    assert_eq!(c.big_end(), IntVect::new(3, 2, 4));
    assert_eq!(n.refine(2).big_end(), IntVect::new(10, 8, 14));
    // Per-direction ratios.
    assert_eq!(
        b([0, 0, 0], [7, 7, 7]).coarsen_iv(IntVect::new(1, 2, 4)),
        b([0, 0, 0], [7, 3, 1])
    );
    assert!(b([0, 0, 0], [7, 7, 7]).coarsenable(IntVect::splat(4)));
    assert!(!b([0, 0, 0], [6, 7, 7]).coarsenable(IntVect::splat(2)));
}

#[test]
fn slab_shift_split() {
    let x = b([0, 0, 0], [9, 9, 9]);
    assert_eq!(x.shift(1, -3), b([0, -3, 0], [9, 6, 9]));
    assert_eq!(
        x.shift_iv(IntVect::new(1, 2, 3)),
        b([1, 2, 3], [10, 11, 12])
    );
    assert_eq!(x.make_slab(0, -7), b([-7, 0, 0], [-7, 9, 9]));
    let (l, h) = x.split_at(2, 4);
    assert_eq!((l, h), (b([0, 0, 0], [9, 9, 3]), b([0, 0, 4], [9, 9, 9])));
    assert_eq!(l.num_pts() + h.num_pts(), x.num_pts());
}

#[test]
fn fortran_index() {
    let x = b([-1, 2, 3], [2, 4, 7]);
    assert_eq!(x.index(IntVect::new(-1, 2, 3)), 0);
    assert_eq!(x.index(IntVect::new(0, 2, 3)), 1);
    assert_eq!(x.index(IntVect::new(-1, 3, 3)), 4);
    assert_eq!(x.index(IntVect::new(-1, 2, 4)), 12);
    assert_eq!(
        x.index(x.big_end()),
        usize::try_from(x.num_pts()).unwrap() - 1
    );
    for (n, p) in x.iter().enumerate() {
        assert_eq!(x.index(p), n);
        assert_eq!(x.at_index(n), p);
    }
    assert_eq!(x.iter().count() as u64, x.num_pts());
    assert_eq!(x.iter().size_hint(), (60, Some(60)));
}

#[test]
#[should_panic(expected = "outside")]
fn index_outside_panics() {
    let _ = domain().index(IntVect::splat(128));
}

#[test]
#[should_panic(expected = "not below")]
fn at_index_outside_panics() {
    let _ = b([0; 3], [1; 3]).at_index(8);
}

#[test]
fn iteration_order_is_fortran() {
    let x = b([0, 0, 0], [1, 1, 1]);
    let v: Vec<[i32; 3]> = x.into_iter().map(IntVect::to_array).collect();
    assert_eq!(
        v,
        [
            [0, 0, 0],
            [1, 0, 0],
            [0, 1, 0],
            [1, 1, 0],
            [0, 0, 1],
            [1, 0, 1],
            [0, 1, 1],
            [1, 1, 1]
        ]
    );
    let mut n = 0;
    for _ in &x {
        n += 1;
    }
    assert_eq!(n, 8);
}

#[test]
fn tiles_partition() {
    let x = b([-3, 0, 5], [10, 7, 6]);
    let t = x.tiles(IntVect::new(4, 8, 1));
    assert_eq!(t.counts(), [4, 1, 2]);
    assert_eq!(t.len(), 8);
    assert_eq!(t.get(0), Some(b([-3, 0, 5], [0, 7, 5])));
    assert_eq!(t.get(3), Some(b([9, 0, 5], [10, 7, 5])));
    assert_eq!(t.get(4), Some(b([-3, 0, 6], [0, 7, 6])));
    assert_eq!(t.get(8), None);
    let tiles: Vec<_> = t.clone().collect();
    let rev: Vec<_> = t.rev().collect();
    assert_eq!(tiles.len(), 8);
    assert_eq!(tiles.iter().rev().copied().collect::<Vec<_>>(), rev);
    let mut covered = 0;
    for (a, ta) in tiles.iter().enumerate() {
        covered += ta.num_pts();
        assert!(x.contains_box(ta));
        for tb in &tiles[a + 1..] {
            assert!(!ta.intersects(tb));
        }
    }
    assert_eq!(covered, x.num_pts());
    let mut it = x.tiles(IntVect::new(4, 8, 1));
    assert_eq!(it.nth(5), tiles.get(5).copied());
    assert_eq!(it.len(), 2);
}

#[test]
#[should_panic(expected = "must be positive")]
fn tiles_zero_size_panics() {
    let _ = domain().tiles(IntVect::new(0, 1, 1));
}

#[test]
fn display_matches_amrex() {
    assert_eq!(domain().to_string(), "((0,0,0) (127,127,127) (0,0,0))");
    assert_eq!(
        domain().surrounding_nodes_dir(1).to_string(),
        "((0,0,0) (127,128,127) (0,1,0))"
    );
    assert_eq!(IndexType::new(true, false, true).to_string(), "(N,C,N)");
}
