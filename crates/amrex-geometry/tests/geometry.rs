//! `Geometry` against hand-computed values: construction and its errors, locations,
//! periodicity and periodic shifts, the physical-domain tests, refine/coarsen, and the
//! RZ and spherical weights summed over a domain against the analytic volumes and areas.
#![warn(clippy::cast_possible_truncation)]

use core::f64::consts::PI;

use amrex_box::{IndexBox, IndexSpaceError, IndexType, IntVect};
use amrex_geometry::{
    CoordSys, Geometry, GeometryError, GeometryErrorKind, Periodicity, RealBox, Side,
};

fn rb(lo: [f64; 3], hi: [f64; 3]) -> RealBox {
    RealBox::new(lo, hi).unwrap()
}

fn cube(n: i32) -> IndexBox {
    IndexBox::new(IntVect::ZERO, IntVect::splat(n - 1))
}

fn cartesian(domain: IndexBox, periodic: [bool; 3]) -> Geometry {
    Geometry::new(domain, RealBox::UNIT, CoordSys::Cartesian, periodic).unwrap()
}

/// Relative closeness for sums of many terms.
#[track_caller]
fn assert_close(a: f64, b: f64) {
    let tol = 1e-12 * a.abs().max(b.abs()).max(1.0);
    assert!((a - b).abs() <= tol, "{a} vs {b}");
}

fn kind(r: Result<Geometry, GeometryError>) -> GeometryErrorKind {
    r.unwrap_err().kind()
}

// ---------------------------------------------------------------------------------
// Construction

#[test]
fn accessors() {
    let domain = IndexBox::new(IntVect::new(-4, 0, 10), IntVect::new(3, 3, 10));
    let real = rb([0.0, -2.0, 5.0], [1.0, 2.0, 6.0]);
    let g = Geometry::new(domain, real, CoordSys::Cartesian, [false, true, false]).unwrap();
    assert_eq!(g.domain(), domain);
    assert_eq!(g.real_box(), real);
    assert_eq!(g.prob_lo(), [0.0, -2.0, 5.0]);
    assert_eq!(g.prob_hi(), [1.0, 2.0, 6.0]);
    assert_eq!(g.prob_length(1), 4.0);
    assert_eq!(g.prob_size(), 4.0);
    assert_eq!(g.coord(), CoordSys::Cartesian);
    assert_eq!(g.cell_size(), [0.125, 1.0, 1.0]);
    assert_eq!(g.inv_cell_size(), [8.0, 1.0, 1.0]);
    assert_eq!(g.periodic_flags(), [false, true, false]);
    assert!(!g.is_periodic(0) && g.is_periodic(1) && !g.is_periodic(2));
    assert!(g.is_any_periodic() && !g.is_all_periodic());
    assert_eq!(g.period(0), None);
    assert_eq!(g.period(1), Some(4));
    assert_eq!(
        g.periodicity(),
        Periodicity::from_period(IntVect::new(0, 4, 0))
    );
    let other = IndexBox::new(IntVect::ZERO, IntVect::new(9, 9, 9));
    assert_eq!(
        g.periodicity_for(other),
        Periodicity::from_period(IntVect::new(0, 10, 0))
    );
    assert!(cartesian(cube(4), [true; 3]).is_all_periodic());
    assert!(!cartesian(cube(4), [false; 3]).is_any_periodic());
}

#[test]
#[should_panic(expected = "direction 3 is not 0, 1 or 2")]
fn bad_direction_panics() {
    let _ = cartesian(cube(4), [false; 3]).is_periodic(3);
}

#[test]
fn construction_errors() {
    use GeometryErrorKind as K;
    let cart = CoordSys::Cartesian;
    let nodal = cube(4).surrounding_nodes();
    assert_eq!(
        kind(Geometry::new(nodal, RealBox::UNIT, cart, [false; 3])),
        K::NotCellCentred { domain: nodal }
    );
    let xface = cube(4).convert(IndexType::new(true, false, false));
    assert!(matches!(
        kind(Geometry::new(xface, RealBox::UNIT, cart, [false; 3])),
        K::NotCellCentred { .. }
    ));
    let empty = IndexBox::new(IntVect::ZERO, IntVect::new(3, -1, 3));
    assert_eq!(
        kind(Geometry::new(empty, RealBox::UNIT, cart, [false; 3])),
        K::EmptyDomain { domain: empty }
    );
    let huge = IndexBox::new(IntVect::ZERO, IntVect::new(i32::MAX, 0, 0));
    assert!(matches!(
        kind(Geometry::new(huge, RealBox::UNIT, cart, [false; 3])),
        K::OutsideIndexSpace(IndexSpaceError::Overflow { dir: 0, .. })
    ));
    for coord in [CoordSys::Rz, CoordSys::Spherical] {
        assert_eq!(
            kind(Geometry::new(cube(4), RealBox::UNIT, coord, [false; 3])),
            K::CurvilinearThirdDirection { coord, cells: 4 }
        );
    }
    // A tiny (subnormal) extent: 1 / dx overflows.
    let tiny = rb([0.0; 3], [1.0, 1e-310, 1.0]);
    assert_eq!(
        kind(Geometry::new(cube(1), tiny, cart, [false; 3])),
        K::CellSizeOutOfRange { dir: 1, dx: 1e-310 }
    );
    // The smallest extent over two cells: dx rounds to zero.
    let smallest = rb([0.0; 3], [1.0, 1.0, f64::from_bits(1)]);
    assert_eq!(
        kind(Geometry::new(cube(2), smallest, cart, [false; 3])),
        K::CellSizeOutOfRange { dir: 2, dx: 0.0 }
    );
}

#[test]
fn error_messages_name_the_value_and_direction() {
    let msg = |lo: [f64; 3], hi: [f64; 3]| RealBox::new(lo, hi).unwrap_err().to_string();
    assert_eq!(
        msg([0.0, 0.0, f64::NAN], [1.0; 3]),
        "RealBox: prob_lo[2] is NaN"
    );
    assert_eq!(
        msg([0.0; 3], [f64::INFINITY, 1.0, 1.0]),
        "RealBox: expected a finite prob_hi[0], got inf"
    );
    assert_eq!(
        msg([0.0, 2.0, 0.0], [1.0, 1.5, 1.0]),
        "RealBox: direction 1: expected prob_hi > prob_lo, got prob_lo = 2, prob_hi = 1.5"
    );
    assert_eq!(
        msg([-f64::MAX, 0.0, 0.0], [f64::MAX, 1.0, 1.0]),
        format!(
            "RealBox: direction 0: the length prob_hi - prob_lo = {} - ({}) overflows f64",
            f64::MAX,
            -f64::MAX
        )
    );
    let rz = Geometry::new(cube(2), RealBox::UNIT, CoordSys::Rz, [false; 3]).unwrap_err();
    assert_eq!(
        rz.to_string(),
        "Geometry: RZ coordinates take one cell in direction 2 (the azimuth), got 2"
    );
    let empty = IndexBox::new(IntVect::ZERO, IntVect::new(-1, 0, 0));
    let e = Geometry::new(empty, RealBox::UNIT, CoordSys::Cartesian, [false; 3]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Geometry: expected a domain with cells, got ((0,0,0) (-1,0,0) (0,0,0))"
    );
    let g = cartesian(cube(5), [false; 3]);
    assert_eq!(
        g.coarsen(2).unwrap_err().to_string(),
        "Geometry: the domain ((0,0,0) (4,4,4) (0,0,0)) does not coarsen by (2,2,2) \
         (coarse cells would not nest over the fine ones)"
    );
    assert_eq!(
        g.refine(IntVect::new(1, 0, 1)).unwrap_err().to_string(),
        "Geometry: direction 1: expected a positive ratio, got 0"
    );
    assert_eq!(
        CoordSys::try_from(7).unwrap_err().to_string(),
        "CoordSys: expected 0 (Cartesian), 1 (RZ) or 2 (spherical), got 7"
    );
    // The error is a core::error::Error.
    let boxed: Box<dyn core::error::Error> = Box::new(rz);
    assert!(boxed.to_string().starts_with("Geometry:"));
    assert_eq!(Side::Lo.to_string(), "prob_lo");
}

#[test]
fn displays() {
    let r = rb([0.0, -1.0, 2.0], [1.0, 1.0, 2.5]);
    assert_eq!(r.to_string(), "(RealBox 0 1 -1 1 2 2.5 )");
    assert_eq!(CoordSys::Cartesian.to_string(), "Cartesian");
    assert_eq!(CoordSys::Rz.to_string(), "RZ");
    assert_eq!(CoordSys::Spherical.to_string(), "spherical");
}

// ---------------------------------------------------------------------------------
// Locations

#[test]
fn locations_start_at_the_domains_first_cell() {
    // Eight cells from index -4 over [0, 1]: cell -4 spans [0, 1/8].
    let domain = IndexBox::new(IntVect::new(-4, 0, 0), IntVect::new(3, 1, 0));
    let g = Geometry::new(
        domain,
        rb([0.0, 10.0, -1.0], [1.0, 11.0, 1.0]),
        CoordSys::Cartesian,
        [false; 3],
    )
    .unwrap();
    assert_eq!(g.lo_edge(-4, 0), 0.0);
    assert_eq!(g.hi_edge(-4, 0), 0.125);
    assert_eq!(g.cell_centre_dir(-4, 0), 0.0625);
    assert_eq!(g.hi_edge(3, 0), 1.0);
    assert_eq!(g.cell_centre(IntVect::new(-4, 0, 0)), [0.0625, 10.25, 0.0]);
    assert_eq!(g.node_location(IntVect::new(4, 2, 1)), [1.0, 11.0, 1.0]);
    assert_eq!(g.node_location(IntVect::new(-4, 0, 0)), g.prob_lo());
    // Ghost cells continue the grid.
    assert_eq!(
        g.cell_centre(IntVect::new(-5, -1, -1)),
        [-0.0625, 9.75, -2.0]
    );
    // The low x face of cell (0, 1, 0): x at its low edge, y and z at the centre.
    assert_eq!(g.face_centre(IntVect::new(0, 1, 0), 0), [0.5, 10.75, 0.0]);
    assert_eq!(g.face_centre(IntVect::new(0, 1, 0), 1), [0.5625, 10.5, 0.0]);
    assert_eq!(
        g.face_centre(IntVect::new(0, 1, 0), 2),
        [0.5625, 10.75, -1.0]
    );
}

#[test]
fn cartesian_is_new_with_a_real_box_and_no_periodicity() {
    let domain = IndexBox::new(IntVect::new(-4, 0, 10), IntVect::new(3, 3, 10));
    let g = Geometry::cartesian(domain, [0.0, -2.0, 5.0], [1.0, 2.0, 6.0]).unwrap();
    let want = Geometry::new(
        domain,
        rb([0.0, -2.0, 5.0], [1.0, 2.0, 6.0]),
        CoordSys::Cartesian,
        [false; 3],
    )
    .unwrap();
    assert_eq!(g, want);
    assert!(!g.is_any_periodic());
    // The corners are checked first, then the domain.
    assert_eq!(
        kind(Geometry::cartesian(domain, [0.0, f64::NAN, 0.0], [1.0; 3])),
        GeometryErrorKind::NanCoordinate {
            side: Side::Lo,
            dir: 1
        }
    );
    assert_eq!(
        kind(Geometry::cartesian(domain, [0.0; 3], [1.0, 1.0, -1.0])),
        GeometryErrorKind::EmptyExtent {
            dir: 2,
            lo: 0.0,
            hi: -1.0
        }
    );
    let empty = IndexBox::new(IntVect::ZERO, IntVect::new(3, -1, 0));
    assert_eq!(
        kind(Geometry::cartesian(empty, [0.0; 3], [1.0; 3])),
        GeometryErrorKind::EmptyDomain { domain: empty }
    );
}

#[test]
fn box_extent_runs_from_the_first_low_edge_to_the_last_high_edge() {
    // Eight cells from index -4 over [0, 1] in x; four from 0 over [10, 12] in y.
    let domain = IndexBox::new(IntVect::new(-4, 0, 0), IntVect::new(3, 3, 0));
    let g = Geometry::cartesian(domain, [0.0, 10.0, -1.0], [1.0, 12.0, 1.0]).unwrap();
    assert_eq!(
        g.box_extent(&domain),
        [[0.0, 1.0], [10.0, 12.0], [-1.0, 1.0]]
    );
    let b = IndexBox::new(IntVect::new(-2, 1, 0), IntVect::new(0, 1, 0));
    assert_eq!(g.box_extent(&b), [[0.25, 0.625], [10.5, 11.0], [-1.0, 1.0]]);
    // Every cell's extent has its centre in the middle and its edges at lo_edge/hi_edge,
    // ghost cells included.
    for iv in [
        IntVect::new(-5, -1, 0),
        IntVect::new(0, 2, 0),
        IntVect::new(4, 4, 1),
    ] {
        let e = g.box_extent(&IndexBox::new(iv, iv));
        let c = g.cell_centre(iv);
        for d in 0..3 {
            assert_eq!(e[d], [g.lo_edge(iv[d], d), g.hi_edge(iv[d], d)]);
            assert_close(c[d], 0.5 * (e[d][0] + e[d][1]));
        }
    }
    // Nodal directions run from the first node to the last: the nodes around a box's
    // cells span the box, and one node has no extent.
    let xy_nodal = IndexType::new(true, true, false);
    assert_eq!(g.box_extent(&b.convert(xy_nodal)), g.box_extent(&b));
    assert_eq!(
        g.box_extent(&IndexBox::with_type(b.lo(), b.hi(), xy_nodal)),
        [[0.25, 0.5], [10.5, 10.5], [-1.0, 1.0]]
    );
    // The same in a refined level, whose cells are half as wide.
    let fine = g.refine(IntVect::new(2, 2, 1)).unwrap();
    assert_eq!(
        fine.box_extent(&b.refine_iv(IntVect::new(2, 2, 1))),
        g.box_extent(&b)
    );
}

#[test]
fn cell_index_floors() {
    let domain = IndexBox::new(IntVect::new(-4, 0, 0), IntVect::new(3, 1, 0));
    let g = Geometry::new(
        domain,
        rb([0.0, 10.0, -1.0], [1.0, 11.0, 1.0]),
        CoordSys::Cartesian,
        [false; 3],
    )
    .unwrap();
    assert_eq!(
        g.cell_index([0.0, 10.0, -1.0]),
        Some(IntVect::new(-4, 0, 0))
    );
    assert_eq!(g.cell_index([0.1, 10.6, 0.9]), Some(IntVect::new(-4, 1, 0)));
    // A point on a face belongs to the cell above.
    assert_eq!(
        g.cell_index([0.125, 10.5, 1.0]),
        Some(IntVect::new(-3, 1, 1))
    );
    // Below prob_lo: floor, not truncation.
    assert_eq!(
        g.cell_index([-0.01, 9.99, -1.5]),
        Some(IntVect::new(-5, -1, -1))
    );
    assert_eq!(g.cell_index([f64::NAN, 10.0, 0.0]), None);
    assert_eq!(g.cell_index([0.0, f64::INFINITY, 0.0]), None);
    assert_eq!(g.cell_index([0.0, 10.0, -1e300]), None);
    // The edges of i32: the centre of cell `i` (in x) is `(i + 4.5) / 8`, exact in f64.
    let x = |i: f64| [(i + 4.5) / 8.0, 10.0, 0.0];
    let (min, max) = (f64::from(i32::MIN), f64::from(i32::MAX));
    assert_eq!(g.cell_index(x(max)).map(|iv| iv[0]), Some(i32::MAX));
    assert_eq!(g.cell_index(x(min)).map(|iv| iv[0]), Some(i32::MIN));
    assert_eq!(g.cell_index(x(max + 1.0)), None);
    assert_eq!(g.cell_index(x(min - 1.0)), None);
    // The centre of every cell maps back to it.
    for iv in domain.grow(2) {
        assert_eq!(g.cell_index(g.cell_centre(iv)), Some(iv));
    }
}

// ---------------------------------------------------------------------------------
// The physical domain

#[test]
fn points_inside_and_outside() {
    let g = cartesian(cube(8), [false; 3]);
    assert!(g.inside_physical_domain([0.0; 3]));
    assert!(g.inside_physical_domain([0.5, 0.999_999, 0.0]));
    assert!(g.outside_physical_domain([1.0, 0.5, 0.5]));
    assert!(g.outside_physical_domain([0.5, -1e-300, 0.5]));
    assert!(g.outside_physical_domain([0.5, 0.5, f64::NAN]));
    assert!(g.inside_physical_domain([1.0f64.next_down(), 0.5, 0.5]));
    // Here the round-off edge is prob_hi itself.
    assert_eq!(g.roundoff_hi(), [1.0; 3]);
}

#[test]
fn roundoff_edge_keeps_particles_in_the_domain() {
    // Seven cells over [0.2, 0.9]: (x - 0.2) * (1 / dx) rounds up to 7 for the last f64
    // below 0.9, so that point, inside the RealBox, would land in cell 7, past the
    // domain; the round-off edge moves below it.
    let g = Geometry::new(
        IndexBox::new(IntVect::ZERO, IntVect::new(6, 0, 0)),
        rb([0.2, 0.0, 0.0], [0.9, 1.0, 1.0]),
        CoordSys::Cartesian,
        [false; 3],
    )
    .unwrap();
    let below_hi = 0.9f64.next_down();
    assert!(g.real_box().contains([below_hi, 0.5, 0.5], 0.0));
    assert_eq!(
        g.cell_index([below_hi, 0.5, 0.5]),
        Some(IntVect::new(7, 0, 0))
    );
    assert!(g.outside_physical_domain([below_hi, 0.5, 0.5]));
    let edge = g.roundoff_hi()[0];
    assert!(edge < 0.9);
    let last = edge.next_down();
    assert!(g.inside_physical_domain([last, 0.5, 0.5]));
    assert_eq!(g.cell_index([last, 0.5, 0.5]), Some(IntVect::new(6, 0, 0)));
    assert!(g.outside_physical_domain([edge, 0.5, 0.5]));
    assert_eq!(g.cell_index([edge, 0.5, 0.5]), Some(IntVect::new(7, 0, 0)));
    // Whatever the edge, every value below it maps inside: check all within 64 ulps.
    let mut x = edge;
    for _ in 0..64 {
        x = x.next_down();
        let iv = g.cell_index([x, 0.5, 0.5]).unwrap();
        assert!(g.domain().contains(iv), "{x} -> {iv}");
    }
}

#[test]
fn boxes_inside_and_outside() {
    // Periodic in x only.
    let g = cartesian(cube(8), [true, false, false]);
    let d = g.domain();
    assert!(g.inside_physical_domain_box(&d));
    assert!(!g.outside_physical_domain_box(&d));
    // The domain's nodes are inside too.
    assert!(g.inside_physical_domain_box(&d.surrounding_nodes()));
    // Beyond the periodic x faces: neither inside nor outside.
    let xghost = d.grow_dir(0, 2);
    assert!(!g.inside_physical_domain_box(&xghost));
    assert!(!g.outside_physical_domain_box(&xghost));
    // Beyond a non-periodic face: outside.
    for dir in [1, 2] {
        assert!(g.outside_physical_domain_box(&d.grow_lo(dir, 1)));
        assert!(g.outside_physical_domain_box(&d.grow_hi(dir, 1)));
        let slab = d.make_slab(dir, 8);
        assert!(g.outside_physical_domain_box(&slab));
        assert!(!g.inside_physical_domain_box(&slab));
    }
    // A nodal box one node past the boundary nodes.
    let nodes = d.surrounding_nodes().grow_hi(2, 1);
    assert!(g.outside_physical_domain_box(&nodes));
    // Empty boxes are inside and not outside.
    let empty = IndexBox::new(IntVect::splat(100), IntVect::splat(50));
    assert!(g.inside_physical_domain_box(&empty));
    assert!(!g.outside_physical_domain_box(&empty));
}

#[test]
fn growing_only_periodic_or_only_non_periodic_directions() {
    let g = cartesian(cube(8), [true, false, true]);
    let b = IndexBox::new(IntVect::new(2, 2, 2), IntVect::new(3, 3, 3));
    let p = g.grow_periodic(b, 2);
    assert_eq!(
        (p.lo(), p.hi()),
        (IntVect::new(0, 2, 0), IntVect::new(5, 3, 5))
    );
    let np = g.grow_non_periodic(b, IntVect::new(5, 1, 5));
    assert_eq!(
        (np.lo(), np.hi()),
        (IntVect::new(2, 1, 2), IntVect::new(3, 4, 3))
    );
    let pd = g.grow_periodic_domain(1);
    assert_eq!(
        (pd.lo(), pd.hi()),
        (IntVect::new(-1, 0, -1), IntVect::new(8, 7, 8))
    );
    let npd = g.grow_non_periodic_domain(3);
    assert_eq!(
        (npd.lo(), npd.hi()),
        (IntVect::new(0, -3, 0), IntVect::new(7, 10, 7))
    );
    // Growing the periodic domain by the ghost width covers what periodic images fill.
    assert!(pd.contains_box(&g.domain()));
}

// ---------------------------------------------------------------------------------
// periodicShift

/// The nearest-image shifts, in AMReX's order, for which `src` moved meets `target`.
fn brute_force(g: &Geometry, target: &IndexBox, src: &IndexBox) -> Vec<IntVect> {
    let len = g.domain().length();
    let mut v = Vec::new();
    for i in -1..=1 {
        for j in -1..=1 {
            for k in -1..=1 {
                let m = [i, j, k];
                if m == [0, 0, 0] || (0..3).any(|d| m[d] != 0 && !g.is_periodic(d)) {
                    continue;
                }
                let s = IntVect::from(m) * len;
                if target.intersects(&src.shift_iv(s)) {
                    v.push(s);
                }
            }
        }
    }
    v
}

/// Every non-zero direction `(a, b, c)` in `{-1, 0, 1}³`: the 6 faces, 12 edges and 8
/// corners of the domain.
fn neighbours() -> impl Iterator<Item = [i32; 3]> {
    (0..27)
        .map(|n| [n / 9 - 1, (n / 3) % 3 - 1, n % 3 - 1])
        .filter(|m| *m != [0, 0, 0])
}

#[test]
fn periodic_shift_for_ghost_regions_beyond_each_face_edge_and_corner() {
    let g = cartesian(cube(8), [true; 3]);
    let domain = g.domain();
    let mut seen = [0; 4];
    for m in neighbours() {
        // One ghost layer in the neighbour's direction, the middle cells elsewhere.
        let range = |a: i32| match a {
            -1 => (-1, -1),
            1 => (8, 8),
            _ => (3, 4),
        };
        let (r0, r1, r2) = (range(m[0]), range(m[1]), range(m[2]));
        let ghost = IndexBox::new(
            IntVect::new(r0.0, r1.0, r2.0),
            IntVect::new(r0.1, r1.1, r2.1),
        );
        let shifts = g.periodic_shift(&ghost, &domain);
        assert_eq!(shifts.as_slice(), [IntVect::from(m) * 8], "{m:?}");
        seen[m.iter().filter(|&&a| a != 0).count()] += 1;
    }
    assert_eq!(seen, [0, 6, 12, 8]);
}

#[test]
fn periodic_shift_for_boxes_straddling_each_face_edge_and_corner() {
    let g = cartesian(cube(8), [true; 3]);
    let domain = g.domain();
    for m in neighbours() {
        // Two cells on each side of the face in the neighbour's direction.
        let range = |a: i32| match a {
            -1 => (-2, 1),
            1 => (6, 9),
            _ => (3, 4),
        };
        let (r0, r1, r2) = (range(m[0]), range(m[1]), range(m[2]));
        let target = IndexBox::new(
            IntVect::new(r0.0, r1.0, r2.0),
            IntVect::new(r0.1, r1.1, r2.1),
        );
        let shifts = g.periodic_shift(&target, &domain);
        // Each non-empty subset of the crossed directions, in AMReX's order.
        let expected: Vec<IntVect> = (0..27)
            .map(|n| [n / 9 - 1, (n / 3) % 3 - 1, n % 3 - 1])
            .filter(|s| *s != [0, 0, 0] && (0..3).all(|d| s[d] == 0 || s[d] == m[d]))
            .map(|s| IntVect::from(s) * 8)
            .collect();
        let crossed = m.iter().filter(|&&a| a != 0).count();
        assert_eq!(expected.len(), (1 << crossed) - 1);
        assert_eq!(shifts.as_slice(), expected.as_slice(), "{m:?}");
        assert_eq!(shifts.as_slice(), brute_force(&g, &target, &domain));
    }
}

#[test]
fn periodic_shift_respects_non_periodic_directions_and_small_sources() {
    let g = cartesian(cube(8), [true, false, true]);
    let domain = g.domain();
    // A corner region past x-hi, y-hi, z-hi: only the x and z images exist.
    let corner = IndexBox::new(IntVect::new(7, 7, 7), IntVect::new(8, 8, 8));
    assert_eq!(
        g.periodic_shift(&corner, &domain).as_slice(),
        [
            IntVect::new(0, 0, 8),
            IntVect::new(8, 0, 0),
            IntVect::new(8, 0, 8)
        ]
    );
    // Nothing periodic: no shifts.
    let np = cartesian(cube(8), [false; 3]);
    assert!(np.periodic_shift(&corner, &domain).is_empty());
    // The source is any box, not only the domain: the first cell's image across x.
    let first = IndexBox::new(IntVect::ZERO, IntVect::ZERO);
    let ghost = IndexBox::new(IntVect::new(8, 0, 0), IntVect::new(8, 0, 0));
    assert_eq!(
        g.periodic_shift(&ghost, &first).as_slice(),
        [IntVect::new(8, 0, 0)]
    );
    assert!(g.periodic_shift(&ghost, &first.shift(1, 1)).is_empty());
    // The zero shift is never listed, even for overlapping boxes.
    assert!(g.periodic_shift(&domain, &first.shift(0, 4)).is_empty());
    // Boxes of another index type never meet a cell box.
    assert!(
        g.periodic_shift(&ghost, &first.surrounding_nodes())
            .is_empty()
    );
    // Nodal boxes shift by the cell count too; node z = 0 is on the periodic boundary,
    // so the image from below (z - 8) reaches it as well.
    let nodes = domain.surrounding_nodes();
    let node_ghost = IndexBox::with_type(
        IntVect::new(9, 0, 0),
        IntVect::new(9, 0, 0),
        nodes.ix_type(),
    );
    assert_eq!(
        g.periodic_shift(&node_ghost, &nodes).as_slice(),
        [IntVect::new(8, 0, -8), IntVect::new(8, 0, 0)]
    );
}

#[test]
fn periodic_shift_lists_up_to_all_26_images() {
    let g = cartesian(cube(4), [true; 3]);
    let everything = cube(4).grow(1);
    let shifts = g.periodic_shift(&everything, &g.domain());
    assert_eq!(shifts.len(), 26);
    assert_eq!(shifts.as_slice(), brute_force(&g, &everything, &g.domain()));
}

// ---------------------------------------------------------------------------------
// Refine and coarsen

#[test]
fn refine_and_coarsen_keep_the_real_box() {
    let real = rb([0.0, -1.0, 0.0], [2.0, 1.0, 1.0]);
    let domain = IndexBox::new(IntVect::new(0, 4, 0), IntVect::new(15, 11, 3));
    let g = Geometry::new(domain, real, CoordSys::Cartesian, [true, false, false]).unwrap();
    assert_eq!(g.cell_size(), [0.125, 0.25, 0.25]);
    let f = g.refine(IntVect::new(2, 4, 1)).unwrap();
    assert_eq!(
        f.domain(),
        IndexBox::new(IntVect::new(0, 16, 0), IntVect::new(31, 47, 3))
    );
    assert_eq!(f.cell_size(), [0.0625, 0.0625, 0.25]);
    assert_eq!(f.real_box(), real);
    assert_eq!(f.periodic_flags(), g.periodic_flags());
    assert_eq!(f.period(0), Some(32));
    assert_eq!(f.coarsen(IntVect::new(2, 4, 1)).unwrap(), g);
    let c = g.coarsen(4).unwrap();
    assert_eq!(
        c.domain(),
        IndexBox::new(IntVect::new(0, 1, 0), IntVect::new(3, 2, 0))
    );
    assert_eq!(c.cell_size(), [0.5, 1.0, 1.0]);
    assert_eq!(c.refine(4).unwrap(), g);
}

#[test]
fn refine_and_coarsen_errors() {
    use GeometryErrorKind as K;
    let g = cartesian(cube(6), [false; 3]);
    assert_eq!(
        g.refine(IntVect::new(2, -1, 2)).unwrap_err().kind(),
        K::BadRatio { dir: 1, ratio: -1 }
    );
    assert_eq!(
        g.coarsen(IntVect::new(2, 2, 0)).unwrap_err().kind(),
        K::BadRatio { dir: 2, ratio: 0 }
    );
    assert_eq!(
        g.coarsen(4).unwrap_err().kind(),
        K::NotCoarsenable {
            domain: cube(6),
            ratio: IntVect::splat(4)
        }
    );
    assert!(g.coarsen(IntVect::new(2, 3, 6)).is_ok());
    // Refining past the i32 index space.
    let big = cartesian(
        IndexBox::new(IntVect::ZERO, IntVect::new(1 << 29, 0, 0)),
        [false; 3],
    );
    assert!(matches!(
        big.refine(4).unwrap_err().kind(),
        K::OutsideIndexSpace(IndexSpaceError::Overflow { dir: 0, .. })
    ));
    let low = cartesian(
        IndexBox::new(IntVect::new(-(1 << 30), 0, 0), IntVect::ZERO),
        [false; 3],
    );
    assert!(matches!(
        low.refine(4).unwrap_err().kind(),
        K::OutsideIndexSpace(IndexSpaceError::Overflow { dir: 0, .. })
    ));
    // An RZ level refines by 1 in the azimuth only.
    let rz = Geometry::new(
        IndexBox::new(IntVect::ZERO, IntVect::new(3, 3, 0)),
        RealBox::UNIT,
        CoordSys::Rz,
        [false; 3],
    )
    .unwrap();
    assert_eq!(
        rz.refine(2).unwrap_err().kind(),
        K::CurvilinearThirdDirection {
            coord: CoordSys::Rz,
            cells: 2
        }
    );
    assert_eq!(
        rz.refine(IntVect::new(2, 2, 1)).unwrap().cell_size(),
        [0.125, 0.125, 1.0]
    );
}

// ---------------------------------------------------------------------------------
// Weights summed over a domain

fn sum_volumes(g: &Geometry) -> f64 {
    g.domain().iter().map(|iv| g.volume(iv)).sum()
}

/// The areas of the faces normal to `dir` at the domain's face index `at`.
fn sum_face_areas(g: &Geometry, dir: usize, at: i32) -> f64 {
    g.domain()
        .make_slab(dir, at)
        .iter()
        .map(|iv| g.face_area(iv, dir))
        .sum()
}

#[test]
fn cartesian_weights_add_up_to_the_box() {
    let real = rb([-1.0, 0.0, 2.0], [3.0, 0.5, 5.0]);
    let domain = IndexBox::new(IntVect::new(-3, 0, 0), IntVect::new(4, 9, 5));
    let g = Geometry::new(domain, real, CoordSys::Cartesian, [false; 3]).unwrap();
    assert_close(sum_volumes(&g), 4.0 * 0.5 * 3.0);
    assert_close(sum_volumes(&g), g.prob_size());
    assert_close(sum_face_areas(&g, 0, -3), 0.5 * 3.0);
    assert_close(sum_face_areas(&g, 1, 10), 4.0 * 3.0);
    assert_close(sum_face_areas(&g, 2, 3), 4.0 * 0.5);
    assert_eq!(g.volume(IntVect::ZERO), 0.5 * 0.05 * 0.5);
    assert_eq!(g.dloga(IntVect::ZERO, 0), 0.0);
}

#[test]
fn rz_weights_add_up_to_the_cylindrical_shell() {
    // r in [0.5, 2], z in [-1, 3]: a thick-walled tube.
    let (r_lo, r_hi, z_lo, z_hi) = (0.5, 2.0, -1.0, 3.0);
    let domain = IndexBox::new(IntVect::ZERO, IntVect::new(23, 15, 0));
    let real = rb([r_lo, z_lo, 0.0], [r_hi, z_hi, 1.0]);
    let g = Geometry::new(domain, real, CoordSys::Rz, [false, true, false]).unwrap();
    assert_close(
        sum_volumes(&g),
        PI * (r_hi * r_hi - r_lo * r_lo) * (z_hi - z_lo),
    );
    // Inner and outer walls, and a cross-section normal to the axis.
    assert_close(sum_face_areas(&g, 0, 0), 2.0 * PI * r_lo * (z_hi - z_lo));
    assert_close(sum_face_areas(&g, 0, 24), 2.0 * PI * r_hi * (z_hi - z_lo));
    for j in [0, 7, 16] {
        assert_close(sum_face_areas(&g, 1, j), PI * (r_hi * r_hi - r_lo * r_lo));
    }
    assert_eq!(g.face_area(IntVect::new(3, 3, 0), 2), 0.0);
    // d(log A)/dr = 1 / r at the cell centre.
    let iv = IntVect::new(5, 2, 0);
    let rc = g.cell_centre(iv)[0];
    assert_close(g.dloga(iv, 0), 1.0 / rc);
    assert_eq!(g.dloga(iv, 1), 0.0);
    // A solid cylinder from the axis: π r² h, and no area on the axis.
    let solid = Geometry::new(
        domain,
        rb([0.0, z_lo, 0.0], [r_hi, z_hi, 1.0]),
        CoordSys::Rz,
        [false; 3],
    )
    .unwrap();
    assert_close(sum_volumes(&solid), PI * r_hi * r_hi * (z_hi - z_lo));
    assert_eq!(sum_face_areas(&solid, 0, 0), 0.0);
}

#[test]
fn one_dimensional_rz_is_rz_with_unit_height() {
    // AMReX's 1-D RZ cell volume is π (r_o² - r_i²).
    let g = Geometry::new(
        IndexBox::new(IntVect::ZERO, IntVect::new(9, 0, 0)),
        rb([1.0, 0.0, 0.0], [3.0, 1.0, 1.0]),
        CoordSys::Rz,
        [false; 3],
    )
    .unwrap();
    let (ri, ro) = (1.4, 1.6);
    assert_close(g.volume(IntVect::new(2, 0, 0)), PI * (ro * ro - ri * ri));
    assert_close(g.face_area(IntVect::new(2, 0, 0), 0), 2.0 * PI * ri);
    assert_close(sum_volumes(&g), PI * (9.0 - 1.0));
}

#[test]
fn spherical_weights_add_up_to_the_shell() {
    let (r_lo, r_hi) = (0.5, 2.0);
    let cube3 = |r: f64| r * r * r;
    // The whole shell: θ over [0, π].
    let domain = IndexBox::new(IntVect::ZERO, IntVect::new(19, 30, 0));
    let full = Geometry::new(
        domain,
        rb([r_lo, 0.0, 0.0], [r_hi, PI, 1.0]),
        CoordSys::Spherical,
        [false; 3],
    )
    .unwrap();
    assert_close(
        sum_volumes(&full),
        4.0 / 3.0 * PI * (cube3(r_hi) - cube3(r_lo)),
    );
    assert_close(sum_face_areas(&full, 0, 0), 4.0 * PI * r_lo * r_lo);
    assert_close(sum_face_areas(&full, 0, 20), 4.0 * PI * r_hi * r_hi);
    // The θ faces at the poles have no area.
    assert!(sum_face_areas(&full, 1, 0).abs() < 1e-15);
    assert!(sum_face_areas(&full, 1, 31).abs() < 1e-12);

    // A band θ in [π/6, π/2]: 2π/3 (cos θ_lo - cos θ_hi)(r_hi³ - r_lo³).
    let (t_lo, t_hi) = (PI / 6.0, PI / 2.0);
    let band = Geometry::new(
        IndexBox::new(IntVect::new(-5, 2, 0), IntVect::new(10, 17, 0)),
        rb([r_lo, t_lo, 0.0], [r_hi, t_hi, 1.0]),
        CoordSys::Spherical,
        [false; 3],
    )
    .unwrap();
    let angular = t_lo.cos() - t_hi.cos();
    assert_close(
        sum_volumes(&band),
        2.0 * PI / 3.0 * angular * (cube3(r_hi) - cube3(r_lo)),
    );
    assert_close(
        sum_face_areas(&band, 0, 11),
        2.0 * PI * angular * r_hi * r_hi,
    );
    // A cone at θ_lo: π sin θ (r_hi² - r_lo²).
    assert_close(
        sum_face_areas(&band, 1, 2),
        PI * t_lo.sin() * (r_hi * r_hi - r_lo * r_lo),
    );
    assert_close(
        sum_face_areas(&band, 1, 18),
        PI * t_hi.sin() * (r_hi * r_hi - r_lo * r_lo),
    );
    let iv = IntVect::new(0, 9, 0);
    let c = band.cell_centre(iv);
    assert_close(band.dloga(iv, 0), 2.0 / c[0]);
    assert_close(band.dloga(iv, 1), 1.0 / (c[0] * c[1].tan()));
    assert_eq!(band.dloga(iv, 2), 0.0);
    assert_eq!(band.face_area(iv, 2), 0.0);
}

#[test]
fn one_dimensional_spherical_is_one_theta_cell_over_the_whole_sphere() {
    // AMReX's 1-D spherical weights: 4π/3 (r_o³ - r_i³) and 4π r².
    let g = Geometry::new(
        IndexBox::new(IntVect::ZERO, IntVect::new(7, 0, 0)),
        rb([0.0, 0.0, 0.0], [4.0, PI, 1.0]),
        CoordSys::Spherical,
        [false; 3],
    )
    .unwrap();
    let iv = IntVect::new(3, 0, 0);
    assert_close(g.volume(iv), 4.0 / 3.0 * PI * (64.0 - 27.0) / 8.0);
    assert_close(g.face_area(iv, 0), 4.0 * PI * 1.5 * 1.5);
    assert_close(g.dloga(iv, 0), 2.0 / 1.75);
    assert_close(sum_volumes(&g), 4.0 / 3.0 * PI * 64.0);
}
