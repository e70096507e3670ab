//! Property tests: locations and cell indices agree, the physical-domain test agrees
//! with the cell index, periodic shifts match their definition, refine and coarsen are
//! inverse, and RZ and spherical volumes add up to the analytic ones.
#![warn(clippy::cast_possible_truncation)]

use core::f64::consts::PI;

use amrex_box::{IndexBox, IntVect};
use amrex_geometry::{CoordSys, Geometry, RealBox};
use proptest::prelude::*;

fn cases() -> ProptestConfig {
    ProptestConfig {
        cases: if cfg!(miri) { 8 } else { 256 },
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn iv(range: core::ops::Range<i32>) -> impl Strategy<Value = IntVect> {
    (range.clone(), range.clone(), range).prop_map(|(x, y, z)| IntVect::new(x, y, z))
}

/// A Cartesian geometry anywhere, with awkward extents and a domain that need not
/// start at 0.
fn any_geometry() -> impl Strategy<Value = Geometry> {
    (
        iv(-20..20),
        iv(1..17),
        prop::array::uniform3(-100.0f64..100.0),
        prop::array::uniform3(1e-3f64..50.0),
        prop::array::uniform3(any::<bool>()),
    )
        .prop_map(|(lo, len, plo, ext, periodic)| {
            let hi: [f64; 3] = core::array::from_fn(|d| plo[d] + ext[d]);
            let domain = IndexBox::from_lo_len(lo, len);
            let rb = RealBox::new(plo, hi).unwrap();
            Geometry::new(domain, rb, CoordSys::Cartesian, periodic).unwrap()
        })
}

proptest! {
    #![proptest_config(cases())]

    #[test]
    fn cell_centres_map_back_to_their_cells(g in any_geometry(), off in iv(-3..20)) {
        let cell = g.domain().small_end() + off;
        prop_assert_eq!(g.cell_index(g.cell_centre(cell)), Some(cell));
        // Nodes bound the cell: the low node is at most the centre, the next node above.
        let (lo, c) = (g.node_location(cell), g.cell_centre(cell));
        let hi = g.node_location(cell + 1);
        for d in 0..3 {
            prop_assert!(lo[d] < c[d] && c[d] < hi[d]);
        }
    }

    #[test]
    fn inside_means_the_cell_index_is_in_the_domain(
        g in any_geometry(),
        t in prop::array::uniform3(-0.25f64..1.25),
    ) {
        let lo = g.prob_lo();
        let point: [f64; 3] = core::array::from_fn(|d| lo[d] + t[d] * g.prob_length(d));
        let cell = g.cell_index(point).unwrap();
        let at_or_above_lo = (0..3).all(|d| point[d] >= lo[d]);
        prop_assert_eq!(
            g.inside_physical_domain(point),
            at_or_above_lo && g.domain().contains(cell)
        );
        prop_assert_eq!(g.outside_physical_domain(point), !g.inside_physical_domain(point));
    }

    #[test]
    fn the_roundoff_edge_is_exact(g in any_geometry()) {
        let edge = g.roundoff_hi();
        let mid = g.cell_centre(g.domain().small_end());
        let hi_cells = g.domain().big_end();
        for d in 0..3 {
            let mut at = mid;
            at[d] = edge[d];
            prop_assert!(g.outside_physical_domain(at));
            prop_assert_eq!(g.cell_index(at).unwrap()[d], hi_cells[d] + 1);
            at[d] = edge[d].next_down();
            prop_assert!(g.inside_physical_domain(at));
            prop_assert_eq!(g.cell_index(at).unwrap()[d], hi_cells[d]);
            // Within a few rounding steps of prob_hi.
            let scale = g.prob_hi()[d].abs().max(g.prob_lo()[d].abs());
            prop_assert!((edge[d] - g.prob_hi()[d]).abs() <= 16.0 * f64::EPSILON * scale);
        }
    }

    #[test]
    fn periodic_shift_matches_its_definition(
        g in any_geometry(),
        t_off in iv(-24..24), t_len in iv(1..10),
        s_off in iv(-4..20), s_len in iv(1..10),
    ) {
        let base = g.domain().small_end();
        let target = IndexBox::from_lo_len(base + t_off, t_len);
        let src = IndexBox::from_lo_len(base + s_off, s_len);
        let len = g.domain().length();
        let mut expected = Vec::new();
        for i in -1..=1 {
            for j in -1..=1 {
                for k in -1..=1 {
                    let m = [i, j, k];
                    if m == [0, 0, 0] || (0..3).any(|d| m[d] != 0 && !g.is_periodic(d)) {
                        continue;
                    }
                    let s = IntVect::from(m) * len;
                    if target.intersects(&src.shift_iv(s)) {
                        expected.push(s);
                    }
                }
            }
        }
        let found = g.periodic_shift(&target, &src);
        prop_assert_eq!(found.as_slice(), expected.as_slice());
    }

    #[test]
    fn refine_then_coarsen_is_identity(g in any_geometry(), r in iv(1..5)) {
        let fine = g.refine(r).unwrap();
        prop_assert_eq!(fine.real_box(), g.real_box());
        prop_assert_eq!(fine.domain(), g.domain().refine_iv(r));
        prop_assert_eq!(fine.coarsen(r).unwrap(), g);
        for d in 0..3 {
            let ratio = g.cell_size()[d] / fine.cell_size()[d];
            prop_assert!((ratio - f64::from(r[d])).abs() <= 1e-12 * f64::from(r[d]));
        }
    }

    #[test]
    fn rz_volumes_add_up(
        r_lo in 0.0f64..5.0, dr in 0.1f64..5.0, z_lo in -5.0f64..5.0, dz in 0.1f64..5.0,
        nr in 1i32..24, nz in 1i32..24, lo in iv(-10..10),
    ) {
        let domain = IndexBox::from_lo_len(lo.with(2, 0), IntVect::new(nr, nz, 1));
        let rb = RealBox::new([r_lo, z_lo, 0.0], [r_lo + dr, z_lo + dz, 1.0]).unwrap();
        let g = Geometry::new(domain, rb, CoordSys::Rz, [false; 3]).unwrap();
        let total: f64 = domain.iter().map(|c| g.volume(c)).sum();
        let r_hi = r_lo + dr;
        let exact = PI * (r_hi * r_hi - r_lo * r_lo) * dz;
        prop_assert!((total - exact).abs() <= 1e-11 * exact, "{} vs {}", total, exact);
    }

    #[test]
    fn spherical_volumes_add_up(
        r_lo in 0.0f64..5.0, dr in 0.1f64..5.0, t_lo in 0.0f64..3.0, dt in 0.01f64..3.0,
        nr in 1i32..24, nt in 1i32..24,
    ) {
        let t_hi = (t_lo + dt).min(PI);
        prop_assume!(t_hi > t_lo);
        let domain = IndexBox::from_lo_len(IntVect::ZERO, IntVect::new(nr, nt, 1));
        let rb = RealBox::new([r_lo, t_lo, 0.0], [r_lo + dr, t_hi, 1.0]).unwrap();
        let g = Geometry::new(domain, rb, CoordSys::Spherical, [false; 3]).unwrap();
        let total: f64 = domain.iter().map(|c| g.volume(c)).sum();
        let r_hi = r_lo + dr;
        let exact = 2.0 * PI / 3.0 * (t_lo.cos() - t_hi.cos()) * (r_hi.powi(3) - r_lo.powi(3));
        prop_assert!((total - exact).abs() <= 1e-9 * exact, "{} vs {}", total, exact);
    }
}
