//! Deposition and gather against hand-computed CIC/NGP weights, totals conserved by
//! `sum_boundary`, `increment`, `sort_particles_by_cell`, and the refusals.
#![warn(clippy::cast_possible_truncation)]

use amrex_geometry::{CoordSys, Geometry, RealBox};
use amrex_multifab::{
    BoxArray, DistributionMapping, IndexBox, IntVect, MultiFab, Tiling, iMultiFab,
};
use amrex_particles::{
    AosTile, ErrorKind, Linear, MeshMap, Nearest, ParticleArrays, ParticleContainer, ParticleTile,
    SoaTile,
};

fn setup(n: i32, max: i32, per: bool) -> (Geometry, BoxArray, DistributionMapping) {
    let dom = IndexBox::new(IntVect::ZERO, IntVect::splat(n - 1));
    let rb = RealBox::new([0.0; 3], [1.0; 3]).unwrap();
    let g = Geometry::new(dom, rb, CoordSys::Cartesian, [per; 3]).unwrap();
    let ba = BoxArray::from_domain(dom, max);
    let dm = DistributionMapping::new(&ba);
    (g, ba, dm)
}

#[test]
fn cic_deposit_matches_hand_computed_weights() {
    let (g, ba, dm) = setup(8, 4, false);
    let mut pc = ParticleContainer::new(g, &ba, &dm, AosTile::<1, 0>::new(0, 0));
    // dx = 1/8. x: 0.3*8 - 0.5 = 1.9 -> cells 1, 2 with weights 0.1, 0.9;
    // y: 3.6 - 0.5 = 3.1 -> cells 3, 4 with 0.9, 0.1; z: 6.4 - 0.5 = 5.9 -> 5, 6 with 0.1, 0.9.
    // Cells 3|4 in y and the x pair straddle grid boundaries (grids of 4).
    let q = [2.0];
    pc.add_particles(&ParticleArrays::new(&[0.3], &[0.45], &[0.8]).with_reals(&[&q]))
        .unwrap();
    pc.redistribute().unwrap();
    let mut rho = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
    rho.set_val(0.0, .., 1).unwrap();
    pc.deposit_cic(0, &mut rho, 0, |t, i| t.real(i, 0)).unwrap();
    let wx = [(1, 0.1), (2, 0.9)];
    let wy = [(3, 0.9), (4, 0.1)];
    let wz = [(5, 0.1), (6, 0.9)];
    let mut total = 0.0;
    for &(i, a) in &wx {
        for &(j, b) in &wy {
            for &(k, c) in &wz {
                let got = rho.value_at(IntVect::new(i, j, k), 0).unwrap();
                let want = 2.0 * a * b * c;
                assert!(
                    (got - want).abs() < 1e-14,
                    "cell ({i},{j},{k}): {got} vs {want}"
                );
                total += got;
            }
        }
    }
    assert!((total - 2.0).abs() < 1e-14);
    assert!(
        (rho.sum(0..1, 0).unwrap() - 2.0).abs() < 1e-14,
        "nothing else was written"
    );
    // The interpolator alone.
    let lw = Linear::new(&MeshMap::new(&g), [0.3, 0.45, 0.8]);
    assert_eq!(lw.index, IntVect::new(1, 3, 5));
    let mut s = 0.0;
    lw.for_each(|_, w| s += w);
    assert!((s - 1.0).abs() < 1e-15);
    assert_eq!(
        Nearest::new(&MeshMap::new(&g), [0.3, 0.45, 0.8]).index,
        IntVect::new(2, 3, 6)
    );
}

#[test]
fn periodic_deposit_folds_ghosts_and_conserves_the_total() {
    let (g, ba, dm) = setup(8, 4, true);
    let mut pc = ParticleContainer::new(g, &ba, &dm, SoaTile::<4, 0>::new(0, 0));
    pc.add_particles(&ParticleArrays::new(&[0.01], &[0.01], &[0.99]).with_reals(&[&[1.0]]))
        .unwrap();
    pc.redistribute().unwrap();
    let mut rho = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
    rho.set_val(0.0, .., 1).unwrap();
    pc.deposit_cic(0, &mut rho, 0, |t, i| t.real(i, 0)).unwrap();
    // x: 0.08 - 0.5 = -0.42 -> cells -1 (-> 7), 0 with weights 0.42, 0.58.
    let v = rho.value_at(IntVect::new(7, 7, 0), 0).unwrap();
    let want = 0.42 * 0.42 * 0.42;
    assert!((v - want).abs() < 1e-14, "{v} vs {want}");
    assert!((rho.sum(0..1, 0).unwrap() - 1.0).abs() < 1e-14);

    // Many particles: the deposited total is the particles' total, to round-off.
    let mut pc = ParticleContainer::new(g, &ba, &dm, AosTile::<1, 0>::new(0, 0));
    pc.init_random(5000, 11, &[0.5], &[]).unwrap();
    rho.set_val(0.0, .., 1).unwrap();
    pc.deposit_cic(0, &mut rho, 0, |t, i| t.real(i, 0)).unwrap();
    assert!((rho.sum(0..1, 0).unwrap() - 2500.0).abs() < 1e-9);
    let mut ngp = MultiFab::new(&ba, &dm, 1, IntVect::ZERO);
    ngp.set_val(0.0, .., 0).unwrap();
    pc.deposit_ngp(0, &mut ngp, 0, |t, i| t.real(i, 0)).unwrap();
    assert!((ngp.sum(0..1, 0).unwrap() - 2500.0).abs() < 1e-9);
    // The generic closure with the NGP interpolator gives the same field.
    let map = MeshMap::new(&g);
    let mut closure_mf = MultiFab::new(&ba, &dm, 1, IntVect::ZERO);
    closure_mf.set_val(0.0, .., 0).unwrap();
    pc.particle_to_mesh(0, &mut closure_mf, |t, i, a| {
        let c = Nearest::new(&map, t.pos(i)).index;
        *a.get_mut(c[0], c[1], c[2], 0).unwrap() += t.real(i, 0);
    })
    .unwrap();
    for c in g.domain().iter() {
        assert_eq!(closure_mf.value_at(c, 0), ngp.value_at(c, 0));
    }
    // Increment: counts per cell.
    let mut cnt = iMultiFab::new(&ba, &dm, 1, IntVect::ZERO);
    cnt.set_val(0, .., 0).unwrap();
    pc.increment(0, &mut cnt, 0).unwrap();
    assert_eq!(cnt.sum(0..1, 0).unwrap(), 5000);
    for c in g.domain().iter() {
        let n = cnt.value_at(c, 0).unwrap();
        assert_eq!(f64::from(n) * 0.5, ngp.value_at(c, 0).unwrap());
    }
    // Into the second component of two: the same counts, the first left alone.
    let mut cnt2 = iMultiFab::new(&ba, &dm, 2, IntVect::ZERO);
    cnt2.set_val(0, .., 0).unwrap();
    pc.increment(0, &mut cnt2, 1).unwrap();
    assert_eq!(cnt2.sum(0..1, 0).unwrap(), 0);
    for c in g.domain().iter() {
        assert_eq!(cnt2.value_at(c, 1), cnt.value_at(c, 0), "cell {c}");
    }
}

#[test]
fn cic_gather_reproduces_a_linear_field() {
    let (g, ba, dm) = setup(16, 8, false);
    let f = |p: [f64; 3]| 1.0 + 2.0 * p[0] - 3.0 * p[1] + 0.5 * p[2];
    // Cell-centred values of f, ghosts included (as if filled by fill_boundary).
    let mut e = MultiFab::new(&ba, &dm, 2, IntVect::splat(1));
    for mfi in e.mfiter(Tiling::None) {
        let mut a = e.array_mut(&mfi);
        a.for_each_mut(mfi.fabbox(), |i, j, k, n, v| {
            let x = g.cell_centre(IntVect::new(i, j, k));
            *v = f(x) * (1.0 + n as f64);
        });
    }
    let mut pc = ParticleContainer::new(g, &ba, &dm, AosTile::<2, 0>::new(1, 0));
    pc.init_random(400, 5, &[0.0, 0.0, 0.0], &[]).unwrap();
    pc.gather_cic(0, &e, 0, &[2, 0]).unwrap();
    let mut n = 0;
    for t in pc.tiles(0) {
        for i in 0..t.data.len() {
            let p = t.data.pos(i);
            // Away from the non-periodic faces the stencil sees f exactly; at them it
            // sees the ghost values, which also follow f here.
            assert!((t.data.real(i, 2) - f(p)).abs() < 1e-12, "{p:?}");
            assert!((t.data.real(i, 0) - 2.0 * f(p)).abs() < 1e-12);
            assert_eq!(t.data.real(i, 1), 0.0);
            n += 1;
        }
    }
    assert_eq!(n, 400);
    pc.gather_ngp(0, &e, 0, &[1]).unwrap();
    for t in pc.tiles(0) {
        for i in 0..t.data.len() {
            let c = g.cell_index(t.data.pos(i)).unwrap();
            assert_eq!(t.data.real(i, 1), f(g.cell_centre(c)));
        }
    }
    // A closure gather.
    pc.mesh_to_particle(0, &e, |t, i, a| {
        let c = g.cell_index(t.pos(i)).unwrap();
        t.set_real(i, 0, *a.get(c[0], c[1], c[2], 1).unwrap());
    })
    .unwrap();
    for t in pc.tiles(0) {
        for i in 0..t.data.len() {
            assert_eq!(t.data.real(i, 0), 2.0 * t.data.real(i, 1));
        }
    }
}

#[test]
fn sort_by_cell_orders_each_tile_and_keeps_the_set() {
    let (g, ba, dm) = setup(8, 4, true);
    let mut pc = ParticleContainer::new(g, &ba, &dm, AosTile::<0, 1>::new(0, 0));
    pc.init_random(3000, 9, &[], &[3]).unwrap();
    let ids = |pc: &ParticleContainer<AosTile<0, 1>>| {
        let mut v: Vec<u64> = pc
            .tiles(0)
            .flat_map(|t| (0..t.data.len()).map(move |i| t.data.idcpu(i)))
            .collect();
        v.sort_unstable();
        v
    };
    let before = ids(&pc);
    pc.sort_particles_by_cell(0);
    assert_eq!(ids(&pc), before);
    for t in pc.tiles(0) {
        let keys: Vec<usize> = (0..t.data.len())
            .map(|i| t.tilebox.index(g.cell_index(t.data.pos(i)).unwrap()))
            .collect();
        assert!(keys.windows(2).all(|w| w[0] <= w[1]));
        assert!((0..t.data.len()).all(|i| t.data.int(i, 0) == 3));
    }
}

#[test]
fn mesh_refusals() {
    let (g, ba, dm) = setup(8, 4, false);
    let mut pc = ParticleContainer::new(g, &ba, &dm, AosTile::<1, 0>::new(0, 0));
    pc.init_random(100, 2, &[1.0], &[]).unwrap();
    let mut no_ghost = MultiFab::new(&ba, &dm, 1, IntVect::ZERO);
    let e = pc.deposit_cic(0, &mut no_ghost, 0, |_, _| 1.0).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::NotEnoughGhosts { need: 1, .. }),
        "{e}"
    );
    let e = pc.deposit_ngp(0, &mut no_ghost, 1, |_, _| 1.0).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::BadComponent { start: 1, .. }),
        "{e}"
    );
    let other = BoxArray::from_domain(g.domain(), 8);
    let mut wrong = MultiFab::new(
        &other,
        &DistributionMapping::new(&other),
        1,
        IntVect::splat(1),
    );
    let e = pc.deposit_cic(0, &mut wrong, 0, |_, _| 1.0).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::LayoutMismatch { level: 0 }),
        "{e}"
    );
    let mf = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
    let e = pc.gather_cic(0, &mf, 0, &[1]).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::BadComponent { start: 1, .. }),
        "{e}"
    );
    // A first component so large that `start + count` overflows: refused, not a panic,
    // by every operation, and the message saturates.
    let mut cnt = iMultiFab::new(&ba, &dm, 1, IntVect::ZERO);
    let mut rho = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
    let errs = [
        pc.deposit_ngp(0, &mut rho, usize::MAX, |_, _| 1.0),
        pc.deposit_cic(0, &mut rho, usize::MAX, |_, _| 1.0),
        pc.increment(0, &mut cnt, usize::MAX),
        pc.gather_ngp(0, &rho, usize::MAX, &[0]),
        pc.gather_cic(0, &rho, usize::MAX, &[0, 0]),
    ];
    for e in errs {
        let e = e.unwrap_err();
        assert!(
            matches!(
                e.kind(),
                ErrorKind::BadComponent {
                    start: usize::MAX,
                    ncomp: 1,
                    ..
                }
            ),
            "{e}"
        );
        assert!(
            e.to_string()
                .contains(&format!("{}..{}", usize::MAX, usize::MAX)),
            "{e}"
        );
    }
    let e = pc.increment(3, &mut cnt, 0).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::NoSuchLevel { level: 3, .. }),
        "{e}"
    );
    // A particle moved far without redistribute reaches outside its fab.
    let t = pc.tile_mut(0, 0, 0).unwrap();
    let mut p = t.pos(0);
    p[0] += 0.6;
    t.set_pos(0, p);
    let mut rho = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
    let e = pc.deposit_cic(0, &mut rho, 0, |_, _| 1.0).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::OutsideFab { grid: 0, .. }),
        "{e}"
    );
    // So does a particle at a position that is not a number, for every kernel.
    for bad in [f64::NAN, -f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e300] {
        let t = pc.tile_mut(0, 0, 0).unwrap();
        t.set_pos(0, [0.1, bad, 0.1]);
        let outside = |e: amrex_particles::ParticleContainerError| {
            assert!(
                matches!(e.kind(), ErrorKind::OutsideFab { grid: 0, .. }),
                "{bad}: {e}"
            );
        };
        outside(pc.deposit_cic(0, &mut rho, 0, |_, _| 1.0).unwrap_err());
        outside(pc.deposit_ngp(0, &mut rho, 0, |_, _| 1.0).unwrap_err());
        outside(pc.gather_cic(0, &rho, 0, &[0]).unwrap_err());
        outside(pc.gather_ngp(0, &rho, 0, &[0]).unwrap_err());
    }
}

#[test]
fn ready_made_kernels_agree_with_the_interpolators_on_faces_and_centres() {
    // Positions exactly on cell faces and centres (where `floor` decides the cell), next
    // to them, and random: `deposit_cic`/`gather_cic` (the fast kernels) against the
    // closure versions driven by `Linear`, which is AMReX's formula.
    let n = 8;
    let (g, ba, dm) = setup(n, 4, true);
    let mut xs = Vec::new();
    for i in 0..n {
        for f in [0.0, 0.5, 1e-12, -1e-12, 0.25, 0.75] {
            let x = (f64::from(i) + f) / f64::from(n);
            if (0.0..1.0).contains(&x) {
                xs.push(x);
            }
        }
    }
    let m = xs.len();
    let (mut x, mut y, mut z) = (Vec::new(), Vec::new(), Vec::new());
    for k in 0..m * m {
        x.push(xs[k % m]);
        y.push(xs[(k / m + 3 * k) % m]);
        z.push(xs[(7 * k + k / m) % m]);
    }
    let q: Vec<f64> = (0..x.len()).map(|i| 1.0 + (i % 5) as f64).collect();
    let zero = vec![0.0; x.len()];
    let mut pc = ParticleContainer::new(g, &ba, &dm, AosTile::<4, 0>::new(0, 0));
    pc.add_particles(&ParticleArrays::new(&x, &y, &z).with_reals(&[&q, &zero, &zero, &zero]))
        .unwrap();
    pc.redistribute().unwrap();
    pc.init_random(2000, 3, &[1.0, 0.0, 0.0, 0.0], &[]).unwrap();
    pc.sort_particles_by_cell(0);

    let map = MeshMap::new(&g);
    let mut fast = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
    fast.set_val(0.0, .., 1).unwrap();
    pc.deposit_cic(0, &mut fast, 0, |t, i| t.real(i, 0))
        .unwrap();
    let mut slow = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
    slow.set_val(0.0, .., 1).unwrap();
    pc.particle_to_mesh(0, &mut slow, |t, i, a| {
        let q = t.real(i, 0);
        Linear::new(&map, t.pos(i)).for_each(|c, w| {
            *a.get_mut(c[0], c[1], c[2], 0).unwrap() += q * w;
        });
    })
    .unwrap();
    for c in g.domain().iter() {
        let (a, b) = (fast.value_at(c, 0).unwrap(), slow.value_at(c, 0).unwrap());
        assert!(
            (a - b).abs() <= 1e-12 * b.abs().max(1.0),
            "{c:?}: {a} vs {b}"
        );
    }

    // Gather of three components of a field that differs from cell to cell.
    let mut e = MultiFab::new(&ba, &dm, 3, IntVect::splat(1));
    for mfi in e.mfiter(Tiling::None) {
        let mut a = e.array_mut(&mfi);
        a.for_each_mut(mfi.fabbox(), |i, j, k, c, v| {
            *v = f64::from((i * 7 + j * 13 + k * 29).rem_euclid(17)) + 100.0 * c as f64;
        });
    }
    pc.gather_cic(0, &e, 0, &[1, 2, 3]).unwrap();
    let mut checked = 0;
    for t in pc.tiles(0) {
        for i in 0..t.data.len() {
            let lw = Linear::new(&map, t.data.pos(i));
            for comp in 0..3 {
                let mut want = 0.0;
                lw.for_each(|c, w| {
                    // The ghost cells hold the formula's values too (not filled).
                    let (i, j, k) = (c[0], c[1], c[2]);
                    let v =
                        f64::from((i * 7 + j * 13 + k * 29).rem_euclid(17)) + 100.0 * comp as f64;
                    want += w * v;
                });
                let got = t.data.real(i, comp + 1);
                assert!(
                    (got - want).abs() < 1e-11,
                    "{:?}: {got} vs {want}",
                    t.data.pos(i)
                );
            }
            checked += 1;
        }
    }
    assert_eq!(checked, x.len() + 2000);
    // Nearest grid point: the cell of `Geometry::cell_index`.
    pc.gather_ngp(0, &e, 0, &[1]).unwrap();
    for t in pc.tiles(0) {
        for i in 0..t.data.len() {
            let c = g.cell_index(t.data.pos(i)).unwrap();
            let want = f64::from((c[0] * 7 + c[1] * 13 + c[2] * 29).rem_euclid(17));
            assert_eq!(t.data.real(i, 1), want);
        }
    }
}
