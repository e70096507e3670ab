//! Redistribute against a brute-force owner search, periodic wrapping at every face,
//! edge and corner, particles on box faces, invalid and out-of-domain particles, and
//! bad input that must lose no particle.
#![warn(clippy::cast_possible_truncation)]

use amrex_geometry::{CoordSys, Geometry, RealBox};
use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IntVect};
use amrex_particles::{
    AosTile, ErrorKind, ParticleArrays, ParticleContainer, ParticleTile, SoaTile, idcpu,
};
use proptest::prelude::*;

fn geom(n: [i32; 3], lo: [f64; 3], hi: [f64; 3], per: [bool; 3]) -> Geometry {
    let dom = IndexBox::new(IntVect::ZERO, IntVect::new(n[0] - 1, n[1] - 1, n[2] - 1));
    Geometry::new(dom, RealBox::new(lo, hi).unwrap(), CoordSys::Cartesian, per).unwrap()
}

/// Every particle: (id, position, level, grid) of its tile.
fn contents<T: ParticleTile + Clone>(
    pc: &ParticleContainer<T>,
) -> Vec<(i64, [f64; 3], usize, usize)> {
    let mut v = Vec::new();
    for lev in 0..pc.num_levels() {
        for t in pc.tiles(lev) {
            let g = pc.level(lev).unwrap().geom();
            for i in 0..t.data.len() {
                let p = t.data.pos(i);
                // Every particle sits in the tile whose box holds its cell.
                let c = g.cell_index(p).unwrap();
                assert!(
                    t.tilebox.contains(c),
                    "particle {p:?} (cell {c}) outside tile {}",
                    t.tilebox
                );
                v.push((idcpu::id(t.data.idcpu(i)), p, lev, t.grid));
            }
        }
    }
    v.sort_by_key(|x| x.0);
    v
}

/// Brute force: scan every box for the cell.
fn owner(ba: &BoxArray, c: IntVect) -> Option<usize> {
    ba.boxes().iter().position(|b| b.contains(c))
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Where `p` should end up: wrapped in periodic directions, `None` outside a
/// non-periodic side of the domain.
fn expected_position(g: &Geometry, mut p: [f64; 3]) -> Option<[f64; 3]> {
    for (d, x) in p.iter_mut().enumerate() {
        let (lo, len) = (g.prob_lo()[d], g.prob_length(d));
        if g.periodic_flags()[d] {
            *x = lo + (*x - lo).rem_euclid(len);
        } else if !(*x >= lo && *x < g.roundoff_hi()[d]) {
            return None;
        }
    }
    Some(p)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn redistribute_matches_brute_force(
        n in prop::array::uniform3(3i32..20),
        max_size in 2i32..9,
        per in prop::array::uniform3(any::<bool>()),
        tile in prop::option::of(2i32..5),
        seed in any::<u64>(),
        soa in any::<bool>(),
    ) {
        let g = geom(n, [-1.0, 0.0, 2.0], [1.0, 3.0, 2.5], per);
        let ba = BoxArray::from_domain(g.domain(), max_size);
        let dm = DistributionMapping::new(&ba);
        let np = 300usize;
        // Positions up to half a domain length outside on each side.
        let mut pos = [vec![0.0; np], vec![0.0; np], vec![0.0; np]];
        for (d, p) in pos.iter_mut().enumerate() {
            for (i, x) in p.iter_mut().enumerate() {
                let u = (splitmix(seed ^ (i as u64 * 3 + d as u64)) >> 11) as f64 / (1u64 << 53) as f64;
                *x = g.prob_lo()[d] + (2.0 * u - 0.5) * g.prob_length(d);
            }
        }
        let q: Vec<f64> = (0..np).map(|i| i as f64).collect();
        let qs = [&q[..]];
        let arrays = ParticleArrays::new(&pos[0], &pos[1], &pos[2]).with_reals(&qs);
        // Expected: wrap, then drop what leaves a non-periodic side.
        let mut expect = Vec::new();
        for (i, ((&x, &y), &z)) in pos[0].iter().zip(&pos[1]).zip(&pos[2]).enumerate() {
            if let Some(p) = expected_position(&g, [x, y, z]) {
                expect.push((i as i64 + 1, p));
            }
        }
        let check = |got: Vec<(i64, [f64; 3], usize, usize)>, removed: usize| {
            prop_assert_eq!(removed, np - expect.len());
            prop_assert_eq!(got.len(), expect.len());
            for ((id, p, _, grid), (eid, ep)) in got.iter().zip(&expect) {
                prop_assert_eq!(id, eid);
                for d in 0..3 {
                    prop_assert!((p[d] - ep[d]).abs() < 1e-12 * g.prob_length(d).max(1.0), "{:?} vs {:?}", p, ep);
                }
                prop_assert_eq!(Some(*grid), owner(&ba, g.cell_index(*p).unwrap()));
            }
            Ok(())
        };
        if soa {
            let mut pc = ParticleContainer::new(g, &ba, &dm, SoaTile::<4, 0>::new(0, 0));
            pc.set_tile_size(tile.map(IntVect::splat));
            let add = pc.add_particles(&arrays).unwrap();
            prop_assert_eq!(add.outside_domain, np - expect.len());
            let r = pc.redistribute().unwrap();
            check(contents(&pc), r.removed_outside)?;
        } else {
            let mut pc = ParticleContainer::new(g, &ba, &dm, AosTile::<0, 0>::new(1, 0));
            pc.set_tile_size(tile.map(IntVect::splat));
            pc.add_particles(&arrays).unwrap();
            let r = pc.redistribute().unwrap();
            check(contents(&pc), r.removed_outside)?;
            // The real component travelled with its particle.
            for t in pc.tiles(0) {
                for i in 0..t.data.len() {
                    prop_assert_eq!(t.data.real(i, 0), (idcpu::id(t.data.idcpu(i)) - 1) as f64);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    /// Particles already in their tiles move (up to a domain length either way, so a
    /// tile's leavers go to many tiles), some are invalidated, and `redistribute` must
    /// give what a brute-force search gives, with every real component still on its
    /// particle. (`group_by_code`'s fallback for many codes has its own unit test.)
    #[test]
    fn moved_particles_match_brute_force(
        n in prop::array::uniform3(4i32..16),
        max_size in 2i32..6,
        per in prop::array::uniform3(any::<bool>()),
        tile in prop::option::of(2i32..4),
        seed in any::<u64>(),
        soa in any::<bool>(),
    ) {
        if soa {
            check_moved(SoaTile::<4, 0>::new(0, 0), n, max_size, per, tile, seed)?;
        } else {
            check_moved(AosTile::<1, 0>::new(0, 0), n, max_size, per, tile, seed)?;
        }
    }
}

fn check_moved<T: ParticleTile + Clone>(
    template: T,
    n: [i32; 3],
    max_size: i32,
    per: [bool; 3],
    tile: Option<i32>,
    seed: u64,
) -> Result<(), TestCaseError> {
    let g = geom(n, [-1.0, 0.0, 2.0], [1.0, 3.0, 2.5], per);
    let ba = BoxArray::from_domain(g.domain(), max_size);
    let dm = DistributionMapping::new(&ba);
    let np = 2000u64;
    let u = |i: u64, d: u64| (splitmix(seed ^ (i * 7 + d)) >> 11) as f64 / (1u64 << 53) as f64;
    // Displacement of particle `id`, and whether it is invalidated (about 5 %).
    let shift = |id: i64, d: usize| (2.0 * u(id as u64, 3 + d as u64) - 1.0) * g.prob_length(d);
    let dropped = |id: i64| u(id as u64, 6) < 0.05;
    {
        let mut pc = ParticleContainer::new(g, &ba, &dm, template);
        pc.set_tile_size(tile.map(IntVect::splat));
        pc.init_random(np, seed, &[0.0], &[]).unwrap();
        let before = contents(&pc);
        for t in pc.tiles_mut(0) {
            for i in 0..t.data.len() {
                let w = t.data.idcpu(i);
                let id = idcpu::id(w);
                t.data.set_real(i, 0, id as f64);
                if dropped(id) {
                    t.data.set_idcpu(i, idcpu::make_invalid(w));
                }
                let mut p = t.data.pos(i);
                for (d, x) in p.iter_mut().enumerate() {
                    *x += shift(id, d);
                }
                t.data.set_pos(i, p);
            }
        }
        let mut expect = Vec::new();
        let (mut outside, mut invalid) = (0, 0);
        for &(id, p0, _, _) in &before {
            if dropped(id) {
                invalid += 1;
                continue;
            }
            let moved = core::array::from_fn(|d| p0[d] + shift(id, d));
            match expected_position(&g, moved) {
                Some(p) => expect.push((id, p)),
                None => outside += 1,
            }
        }
        let r = pc.redistribute().unwrap();
        prop_assert_eq!((r.removed_invalid, r.removed_outside), (invalid, outside));
        prop_assert_eq!(r.kept + r.moved_local, expect.len());
        let got = contents(&pc);
        prop_assert_eq!(got.len(), expect.len());
        for ((id, p, _, grid), (eid, ep)) in got.iter().zip(&expect) {
            prop_assert_eq!(id, eid);
            for d in 0..3 {
                prop_assert!(
                    (p[d] - ep[d]).abs() < 1e-12 * g.prob_length(d).max(1.0),
                    "{:?} vs {:?}",
                    p,
                    ep
                );
            }
            prop_assert_eq!(Some(*grid), owner(&ba, g.cell_index(*p).unwrap()));
        }
        for t in pc.tiles(0) {
            for i in 0..t.data.len() {
                prop_assert_eq!(t.data.real(i, 0), idcpu::id(t.data.idcpu(i)) as f64);
            }
        }
        Ok(())
    }
}

fn unit(per: bool) -> (Geometry, BoxArray, DistributionMapping) {
    let g = geom([16, 16, 16], [0.0; 3], [1.0; 3], [per; 3]);
    let ba = BoxArray::from_domain(g.domain(), 8);
    let dm = DistributionMapping::new(&ba);
    (g, ba, dm)
}

#[test]
fn periodic_wrap_at_every_face_edge_and_corner() {
    let (g, ba, dm) = unit(true);
    let mut pc = ParticleContainer::new(g, &ba, &dm, AosTile::<0, 0>::new(0, 0));
    let (mut x, mut y, mut z, mut want) = (vec![], vec![], vec![], vec![]);
    for a in -1..=1 {
        for b in -1..=1 {
            for c in -1..=1 {
                if (a, b, c) == (0, 0, 0) {
                    continue;
                }
                // 0.03 beyond the face / edge / corner in the direction (a, b, c).
                let p = [a, b, c].map(|s| 0.5 + f64::from(s) * 0.53);
                x.push(p[0]);
                y.push(p[1]);
                z.push(p[2]);
                want.push([a, b, c].map(|s| 0.5 + f64::from(s) * 0.53 - f64::from(s)));
            }
        }
    }
    pc.add_particles(&ParticleArrays::new(&x, &y, &z)).unwrap();
    let r = pc.redistribute().unwrap();
    assert_eq!((r.removed_outside, pc.num_particles().unwrap()), (0, 26));
    let got = contents(&pc);
    for (id, p, _, grid) in got {
        let w = want[usize::try_from(id).unwrap() - 1];
        for d in 0..3 {
            assert!(
                (p[d] - w[d]).abs() < 1e-15,
                "particle {id}: {p:?}, expected {w:?}"
            );
        }
        assert_eq!(Some(grid), owner(&ba, g.cell_index(w).unwrap()));
    }
}

#[test]
fn particles_on_box_faces_belong_to_the_box_above() {
    let (g, ba, dm) = unit(false);
    let mut pc = ParticleContainer::new(g, &ba, &dm, AosTile::<0, 0>::new(0, 0));
    // 0.5 is the face between cells 7 and 8 (grids 0..=7 and 8..=15); 0.0 is the
    // domain's low face (inside); 1.0 its high face (outside a non-periodic domain).
    let x = [0.5, 0.0, 0.5, 1.0, 0.25];
    let below_one = f64::from_bits(1.0f64.to_bits() - 1);
    let y = [0.5, 0.0, 0.25, 0.5, below_one];
    let z = [0.5, 0.0, 0.0, 0.5, 0.5];
    let add = pc.add_particles(&ParticleArrays::new(&x, &y, &z)).unwrap();
    assert_eq!(add.outside_domain, 1);
    assert_eq!(
        pc.num_particles().unwrap(),
        5,
        "outside particles are kept until redistribute"
    );
    let r = pc.redistribute().unwrap();
    assert_eq!((r.removed_outside, r.removed_outside_global), (1, 1));
    let got = contents(&pc);
    let cell = |id: i64| {
        got.iter()
            .find(|p| p.0 == id)
            .map(|p| g.cell_index(p.1).unwrap())
    };
    assert_eq!(cell(1), Some(IntVect::new(8, 8, 8)));
    assert_eq!(cell(2), Some(IntVect::new(0, 0, 0)));
    assert_eq!(cell(3), Some(IntVect::new(8, 4, 0)));
    assert_eq!(cell(4), None, "x = prob_hi leaves a non-periodic domain");
    // The largest f64 below 1.0 is inside, in the last cell.
    assert_eq!(cell(5), Some(IntVect::new(4, 15, 8)));
}

#[test]
fn face_on_periodic_high_side_wraps_to_low() {
    let (g, ba, dm) = unit(true);
    let mut pc = ParticleContainer::new(g, &ba, &dm, AosTile::<0, 0>::new(0, 0));
    pc.add_particles(&ParticleArrays::new(&[1.0], &[0.0], &[-1e-300]))
        .unwrap();
    pc.redistribute().unwrap();
    let got = contents(&pc);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].1[0], 0.0);
    assert!(got[0].1[2] < 1.0 && got[0].1[2] >= 0.0);
}

#[test]
fn invalid_particles_are_dropped_and_counts_conserved() {
    let (g, ba, dm) = unit(true);
    let mut pc = ParticleContainer::new(g, &ba, &dm, SoaTile::<3, 1>::new(0, 0));
    let r0 = pc.init_random(1000, 7, &[], &[5]).unwrap();
    assert_eq!(r0.removed_invalid, 0);
    assert_eq!(pc.num_particles().unwrap(), 1000);
    // Invalidate every particle with id divisible by 10, move the others a bit.
    let mut invalidated = 0;
    for t in pc.tiles_mut(0) {
        for i in 0..t.data.len() {
            let w = t.data.idcpu(i);
            if idcpu::id(w) % 10 == 0 {
                t.data.set_idcpu(i, idcpu::make_invalid(w));
                invalidated += 1;
            } else {
                let mut p = t.data.pos(i);
                p[0] += 0.37;
                t.data.set_pos(i, p);
            }
        }
    }
    assert_eq!(invalidated, 100);
    let r = pc.redistribute().unwrap();
    assert_eq!(r.removed_invalid, 100);
    assert_eq!(pc.num_particles().unwrap(), 900);
    assert!(r.moved_local > 0 && r.kept > 0);
    let ids: Vec<i64> = contents(&pc).iter().map(|p| p.0).collect();
    let want: Vec<i64> = (1..=1000).filter(|i| i % 10 != 0).collect();
    assert_eq!(ids, want);
    for t in pc.tiles(0) {
        assert!((0..t.data.len()).all(|i| t.data.int(i, 0) == 5));
    }
}

#[test]
fn init_random_is_deterministic_and_one_per_cell_fills_every_cell() {
    let (g, ba, dm) = unit(true);
    let mut a = ParticleContainer::new(g, &ba, &dm, AosTile::<1, 0>::new(0, 0));
    let mut b = ParticleContainer::new(g, &ba, &dm, AosTile::<1, 0>::new(0, 0));
    a.init_random(500, 42, &[2.0], &[]).unwrap();
    b.init_random(500, 42, &[2.0], &[]).unwrap();
    assert_eq!(contents(&a), contents(&b));
    let mut c = ParticleContainer::new(g, &ba, &dm, AosTile::<1, 0>::new(0, 0));
    c.init_random(500, 43, &[2.0], &[]).unwrap();
    assert_ne!(contents(&a), contents(&c));

    let mut o = ParticleContainer::new(g, &ba, &dm, AosTile::<0, 1>::new(0, 0));
    let rep = o.init_one_per_cell([0.5; 3], &[], &[0]).unwrap();
    assert_eq!((rep.added, rep.placed), (4096, 4096));
    let got = contents(&o);
    assert_eq!(got.len(), 4096);
    for (id, p, _, _) in got {
        let c = g.cell_index(p).unwrap();
        assert_eq!(g.domain().index(c) as i64 + 1, id);
        assert_eq!(p, g.cell_centre(c));
    }
    assert_eq!(o.number_of_particles_at_level(0, true, true).unwrap(), 4096);
}

#[test]
fn bad_input_gets_a_specific_error_and_loses_nothing() {
    let (g, ba, dm) = unit(false);
    let mut pc = ParticleContainer::new(g, &ba, &dm, AosTile::<1, 0>::new(1, 0));
    pc.init_random(100, 1, &[0.0, 0.0], &[]).unwrap();
    let (x, y, z) = ([0.1, f64::NAN], [0.1, 0.2], [0.1, 0.3]);
    let q = [1.0, 1.0];
    let e = pc
        .add_particles(&ParticleArrays::new(&x, &y, &z).with_reals(&[&q, &q]))
        .unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::NonFinitePosition { index: 1, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("NaN"), "{e}");
    let inf = [f64::INFINITY, 0.5];
    let e = pc
        .add_particles(&ParticleArrays::new(&inf, &y, &z).with_reals(&[&q, &q]))
        .unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::NonFinitePosition { index: 0, .. }),
        "{e}"
    );
    let e = pc
        .add_particles(&ParticleArrays::new(&[0.1], &y, &z).with_reals(&[&q, &q]))
        .unwrap_err();
    assert!(
        matches!(
            e.kind(),
            ErrorKind::LengthMismatch {
                expected: 1,
                found: 2,
                ..
            }
        ),
        "{e}"
    );
    let e = pc
        .add_particles(&ParticleArrays::new(&y, &y, &z).with_reals(&[&q]))
        .unwrap_err();
    assert!(
        matches!(
            e.kind(),
            ErrorKind::ComponentCount {
                expected: 2,
                found: 1,
                ..
            }
        ),
        "{e}"
    );
    let short = [1.0];
    let e = pc
        .add_particles(&ParticleArrays::new(&y, &y, &z).with_reals(&[&q, &short]))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "real component 1 has 1 entries, but the positions have 2"
    );
    let e = pc.tile(0, 8, 0).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::NoSuchTile { grid: 8, .. }),
        "{e}"
    );
    assert!(pc.tile(0, 0, 1).is_err());
    assert!(matches!(
        pc.tile(3, 0, 0).unwrap_err().kind(),
        ErrorKind::NoSuchLevel {
            level: 3,
            levels: 1
        }
    ));
    assert_eq!(pc.num_particles().unwrap(), 100);
    // More particles than AMReX's ids can number: refused before any is drawn (and
    // before `n * rank` could overflow).
    for n in [amrex_particles::idcpu::MAX_ID.unsigned_abs() + 1, u64::MAX] {
        let e = pc.init_random(n, 1, &[0.0, 0.0], &[]).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::BadId { .. }), "{e}");
    }
    assert_eq!(pc.num_particles().unwrap(), 100);

    // A NaN written into a tile: redistribute refuses before moving anything.
    let t = pc.tile_mut(0, 0, 0).unwrap();
    assert!(!t.is_empty());
    t.set_pos(0, [f64::NAN, 0.0, 0.0]);
    let e = pc.redistribute().unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::NonFinitePosition { index: 0, .. }),
        "{e}"
    );
    assert_eq!(pc.num_particles().unwrap(), 100);
}

#[test]
fn a_nan_met_while_filling_a_hole_loses_nothing_and_moves_nothing_between_tiles() {
    let (g, ba, dm) = unit(true);
    let mut pc = ParticleContainer::new(g, &ba, &dm, AosTile::<1, 0>::new(0, 0));
    pc.init_random(1000, 3, &[0.0], &[]).unwrap();
    let ids_per_tile = |pc: &ParticleContainer<AosTile<1, 0>>| -> Vec<Vec<i64>> {
        pc.tiles(0)
            .map(|t| {
                let mut v: Vec<i64> = (0..t.data.len())
                    .map(|i| idcpu::id(t.data.idcpu(i)))
                    .collect();
                v.sort_unstable();
                v
            })
            .collect()
    };
    // The first three particles of tile 0 leave it; its last one is NaN, so the sweep
    // meets the NaN when it fills the first hole from the end.
    let t = pc.tile_mut(0, 0, 0).unwrap();
    let n = t.len();
    for i in 0..3 {
        let mut p = t.pos(i);
        p[0] += 0.5;
        t.set_pos(i, p);
    }
    t.set_pos(n - 1, [0.25, f64::NAN, 0.25]);
    let before = ids_per_tile(&pc);
    let e = pc.redistribute().unwrap_err();
    let ErrorKind::NonFinitePosition { index, position } = *e.kind() else {
        panic!("{e}")
    };
    assert!(position[1].is_nan());
    // The index says where the bad particle is now.
    assert!(pc.tile(0, 0, 0).unwrap().pos(index)[1].is_nan());
    assert_eq!(
        ids_per_tile(&pc),
        before,
        "every particle is still in its tile"
    );
    assert_eq!(pc.num_particles().unwrap(), 1000);
    // Once the position is fixed, the leavers arrive where they belong.
    pc.tile_mut(0, 0, 0)
        .unwrap()
        .set_pos(index, [0.25, 0.25, 0.25]);
    let r = pc.redistribute().unwrap();
    assert_eq!(r.moved_local, 3);
    assert_eq!(contents(&pc).len(), 1000);
}

#[test]
fn finest_level_that_covers_a_particle_owns_it() {
    let g0 = geom([16, 16, 16], [0.0; 3], [1.0; 3], [true; 3]);
    let g1 = g0.refine(IntVect::splat(2)).unwrap();
    let ba0 = BoxArray::from_domain(g0.domain(), 8);
    // Level 1 covers the physical region [0.25, 0.75)^3.
    let ba1 = BoxArray::from_domain(IndexBox::new(IntVect::splat(8), IntVect::splat(23)), 8);
    let (dm0, dm1) = (
        DistributionMapping::new(&ba0),
        DistributionMapping::new(&ba1),
    );
    let mut pc = ParticleContainer::new_hierarchy(
        &[g0, g1],
        &[ba0, ba1],
        &[dm0, dm1],
        AosTile::<0, 0>::new(0, 0),
    )
    .unwrap();
    pc.init_random(2000, 3, &[], &[]).unwrap();
    let got = contents(&pc);
    assert_eq!(got.len(), 2000);
    for (_, p, lev, _) in &got {
        let inside = p.iter().all(|&x| (0.25..0.75).contains(&x));
        assert_eq!(*lev, usize::from(inside), "{p:?}");
    }
    assert_eq!(
        pc.number_of_particles_at_level(0, true, false).unwrap()
            + pc.number_of_particles_at_level(1, true, false).unwrap(),
        2000
    );
    // Levels on different physical domains are refused.
    let gx = geom([16, 16, 16], [0.0; 3], [2.0; 3], [true; 3]);
    let ba = BoxArray::from_domain(gx.domain(), 8);
    let dm = DistributionMapping::new(&ba);
    let e = ParticleContainer::new_hierarchy(
        &[g0, gx],
        &[ba.clone(), ba],
        &[dm.clone(), dm],
        AosTile::<0, 0>::new(0, 0),
    )
    .unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::BadHierarchy(_)), "{e}");
}

#[cfg(feature = "ndarray")]
#[test]
fn add_particles_from_ndarray() {
    let (g, ba, dm) = unit(true);
    let mut pc = ParticleContainer::new(g, &ba, &dm, AosTile::<1, 1>::new(0, 0));
    let pos = ndarray::array![[0.1, 0.2, 0.3], [0.9, 0.8, 0.7]];
    let reals = ndarray::array![[1.0], [2.0]];
    let ints = ndarray::array![[5], [6]];
    let r = pc
        .add_particles_ndarray(pos.view(), reals.view(), ints.view())
        .unwrap();
    assert_eq!((r.added, r.placed), (2, 2));
    let got = contents(&pc);
    assert_eq!(got[1].1, [0.9, 0.8, 0.7]);
    // Transposed (column-major) views work too; a wrong column count is refused.
    let t = ndarray::array![[0.4, 0.5], [0.4, 0.5], [0.4, 0.5]];
    pc.add_particles_ndarray(t.t(), reals.view(), ints.view())
        .unwrap();
    assert_eq!(pc.num_particles().unwrap(), 4);
    let e = pc
        .add_particles_ndarray(t.view(), reals.view(), ints.view())
        .unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::LengthMismatch { .. }), "{e}");
    let wide = ndarray::array![[1.0, 2.0], [3.0, 4.0]];
    let e = pc
        .add_particles_ndarray(pos.view(), wide.view(), ints.view())
        .unwrap_err();
    assert!(
        matches!(
            e.kind(),
            ErrorKind::ComponentCount {
                expected: 1,
                found: 2,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(pc.num_particles().unwrap(), 4);
}
