//! FillBoundary, ParallelCopy and a stencil through parallel tiles.

use amrex_box::{IndexBox, IntVect};
use amrex_multifab::{BoxArray, CopyOp, DistributionMapping, MultiFab, Periodicity};
use proptest::prelude::*;

const GARBAGE: f64 = -999.0;

/// A value that identifies a cell of the domain and a component.
fn f(p: IntVect, n: usize) -> f64 {
    f64::from(p[0]) + 100.0 * f64::from(p[1]) + 10_000.0 * f64::from(p[2]) + 1e6 * n as f64
}

fn wrap(p: IntVect, domain: &IndexBox, period: &Periodicity) -> Option<IntVect> {
    let mut q = p;
    for d in 0..3 {
        if period.is_periodic(d) {
            let (lo, n) = (domain.lo()[d], period.period()[d]);
            q[d] = lo + (q[d] - lo).rem_euclid(n);
        }
    }
    domain.contains(q).then_some(q)
}

/// Valid cells hold `f`, ghost cells garbage.
fn valid_only(mf: &mut MultiFab) {
    mf.set_val(GARBAGE);
    for mfi in mf.mfiter(false) {
        let vbx = mfi.validbox();
        let mut a = mf.array_mut(&mfi);
        a.for_each_mut(vbx, |i, j, k, n, v| *v = f(IntVect::new(i, j, k), n));
    }
}

#[expect(clippy::too_many_arguments, reason = "test helper")]
fn check_fb(
    domain: IndexBox,
    mgs: IntVect,
    ngrow: IntVect,
    ng: IntVect,
    periodic: [bool; 3],
    cross: bool,
    ncomp: usize,
    scomp: usize,
    nc: usize,
) {
    let ba = BoxArray::from_domain_iv(domain, mgs);
    let dm = DistributionMapping::single(&ba);
    let period = Periodicity::new(domain, periodic);
    let mut mf = MultiFab::new(&ba, &dm, ncomp, ngrow);
    valid_only(&mut mf);
    mf.fill_boundary_with(scomp, nc, ng, period, cross);
    for mfi in mf.mfiter(false) {
        let vbx = mfi.validbox();
        let a = mf.array(&mfi);
        a.for_each(mfi.fabbox(), |i, j, k, n, &v| {
            let p = IntVect::new(i, j, k);
            let outside = (0..3)
                .filter(|&d| p[d] < vbx.lo()[d] || p[d] > vbx.hi()[d])
                .count();
            let want = if outside == 0 {
                f(p, n)
            } else if n < scomp
                || n >= scomp + nc
                || !vbx.grow_iv(ng).contains(p)
                || (cross && outside > 1)
            {
                GARBAGE
            } else {
                wrap(p, &domain, &period).map_or(GARBAGE, |q| f(q, n))
            };
            assert_eq!(v, want, "box {} cell {p} comp {n}", mfi.index());
        });
    }
}

#[test]
fn fill_boundary_periodic_faces_edges_corners() {
    let domain = IndexBox::new(IntVect::new(-3, 0, 5), IntVect::new(12, 15, 20));
    for cross in [false, true] {
        // 2x2x2 boxes: every box touches every face, edge and corner of the domain.
        check_fb(
            domain,
            IntVect::splat(8),
            IntVect::splat(2),
            IntVect::splat(2),
            [true; 3],
            cross,
            2,
            0,
            2,
        );
        // Mixed periodicity and per-direction ghost widths.
        check_fb(
            domain,
            IntVect::splat(8),
            IntVect::new(1, 2, 3),
            IntVect::new(1, 2, 3),
            [true, false, true],
            cross,
            1,
            0,
            1,
        );
        // One box periodic onto itself; a subset of components and ghost width.
        check_fb(
            domain,
            IntVect::splat(16),
            IntVect::splat(3),
            IntVect::splat(2),
            [true; 3],
            cross,
            3,
            1,
            1,
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 1 } else { 20 }))]
    #[test]
    fn fill_boundary_random(
        lo in proptest::array::uniform3(-5i32..5),
        len in proptest::array::uniform3(2i32..14),
        mgs in proptest::array::uniform3(2i32..8),
        ngrow in proptest::array::uniform3(0i32..3),
        periodic in proptest::array::uniform3(any::<bool>()),
        cross in any::<bool>(),
    ) {
        let lo = IntVect::from(lo);
        let domain = IndexBox::new(lo, lo + IntVect::from(len) - 1);
        let ngrow = IntVect::from(ngrow);
        check_fb(domain, IntVect::from(mgs), ngrow, ngrow, periodic, cross, 2, 0, 2);
    }

    #[test]
    fn parallel_copy_random(
        len in proptest::array::uniform3(3i32..14),
        smgs in proptest::array::uniform3(2i32..8),
        dmgs in proptest::array::uniform3(2i32..8),
        dng in 0i32..3,
        periodic in proptest::array::uniform3(any::<bool>()),
        add in any::<bool>(),
    ) {
        let domain = IndexBox::new(IntVect::ZERO, IntVect::from(len) - 1);
        let period = Periodicity::new(domain, periodic);
        let sba = BoxArray::from_domain_iv(domain, IntVect::from(smgs));
        let dba = BoxArray::from_domain_iv(domain, IntVect::from(dmgs));
        let mut src = MultiFab::new(&sba, &DistributionMapping::single(&sba), 2, IntVect::splat(1));
        let mut dst = MultiFab::new(&dba, &DistributionMapping::new(&dba, 1), 3, IntVect::splat(2));
        valid_only(&mut src);
        dst.set_val(1.0);
        let dng = IntVect::splat(dng);
        let op = if add { CopyOp::Add } else { CopyOp::Copy };
        // source comps 0..2 -> destination comps 1..3
        dst.parallel_copy_with(&src, 0, 1, 2, IntVect::ZERO, dng, period, op);
        for mfi in dst.mfiter(false) {
            let a = dst.array(&mfi);
            let region = mfi.validbox().grow_iv(dng);
            a.for_each(mfi.fabbox(), |i, j, k, n, &v| {
                let p = IntVect::new(i, j, k);
                let want = match (n >= 1 && region.contains(p), wrap(p, &domain, &period)) {
                    (true, Some(q)) => if add { 1.0 + f(q, n - 1) } else { f(q, n - 1) },
                    _ => 1.0,
                };
                assert_eq!(v, want, "cell {p} comp {n}");
            });
        }
    }
}

#[test]
fn parallel_copy_valid_to_valid() {
    let domain = IndexBox::new(IntVect::ZERO, IntVect::new(31, 17, 9));
    let sba = BoxArray::from_domain(domain, 8);
    let dba = BoxArray::from_domain_iv(domain, IntVect::new(32, 5, 3));
    let mut src = MultiFab::new(&sba, &DistributionMapping::single(&sba), 1, IntVect::ZERO);
    let mut dst = MultiFab::new(
        &dba,
        &DistributionMapping::single(&dba),
        1,
        IntVect::splat(1),
    );
    valid_only(&mut src);
    dst.parallel_copy(&src, Periodicity::non_periodic());
    for mfi in dst.mfiter(true) {
        let a = dst.array(&mfi);
        a.for_each(mfi.fabbox(), |i, j, k, _, &v| {
            let p = IntVect::new(i, j, k);
            assert_eq!(
                v,
                if mfi.validbox().contains(p) {
                    f(p, 0)
                } else {
                    0.0
                }
            );
        });
    }
    // The plan was cached in the destination's mapping.
    assert_eq!(dst.distribution_map().plan_cache_stats().plans, 1);
}

/// 7-point Laplacian of `phi` over the valid boxes with parallel tiles.
fn laplacian(lap: &mut MultiFab, phi: &MultiFab, tiling: bool) {
    lap.par_for_each_tile(tiling, IntVect::ZERO, |mut t| {
        let p = phi.array(t.mfi());
        let bx = t.region();
        let mut out = t.array_mut();
        out.for_each_mut(bx, |i, j, k, _, o| {
            *o = p[(i + 1, j, k, 0)]
                + p[(i - 1, j, k, 0)]
                + p[(i, j + 1, k, 0)]
                + p[(i, j - 1, k, 0)]
                + p[(i, j, k + 1, 0)]
                + p[(i, j, k - 1, 0)]
                - 6.0 * p[(i, j, k, 0)];
        });
    });
}

#[test]
fn laplacian_through_tiles_and_fill_boundary_is_exact() {
    let domain = IndexBox::new(IntVect::ZERO, IntVect::new(31, 23, 17));
    let ba = BoxArray::from_domain(domain, 8);
    let dm = DistributionMapping::single(&ba);
    // (field, its Laplacian): linear -> 0, quadratic -> 6.
    type Field = (fn(IntVect) -> f64, f64);
    let fields: [Field; 2] = [
        (
            |p| 3.0 * f64::from(p[0]) - 2.0 * f64::from(p[1]) + 0.5 * f64::from(p[2]) + 7.0,
            0.0,
        ),
        (|p| f64::from(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]), 6.0),
    ];
    for (field, want) in fields {
        for threads in [1, 2] {
            for tiling in [false, true] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                pool.install(|| {
                    let mut phi = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
                    // Valid cells and physical-boundary ghosts hold the field; interior
                    // ghosts hold NaN until FillBoundary replaces them.
                    phi.par_for_each_tile(tiling, IntVect::splat(1), |mut t| {
                        let bx = t.region();
                        t.array_mut()
                            .for_each_mut(bx, |i, j, k, _, v| *v = field(IntVect::new(i, j, k)));
                    });
                    for mfi in phi.mfiter(false) {
                        let (vbx, fbx) = (mfi.validbox(), mfi.fabbox());
                        let mut a = phi.array_mut(&mfi);
                        a.for_each_mut(fbx, |i, j, k, _, v| {
                            let p = IntVect::new(i, j, k);
                            if domain.contains(p) && !vbx.contains(p) {
                                *v = f64::NAN;
                            }
                        });
                    }
                    phi.fill_boundary_with(
                        0,
                        1,
                        IntVect::splat(1),
                        Periodicity::non_periodic(),
                        true,
                    );
                    let mut lap = MultiFab::new(&ba, &dm, 1, IntVect::ZERO);
                    laplacian(&mut lap, &phi, tiling);
                    assert_eq!(
                        lap.min(0, 1, IntVect::ZERO),
                        want,
                        "threads {threads} tiling {tiling}"
                    );
                    assert_eq!(
                        lap.max(0, 1, IntVect::ZERO),
                        want,
                        "threads {threads} tiling {tiling}"
                    );
                    assert!(!lap.sum(0, 1, IntVect::ZERO).is_nan());
                });
            }
        }
    }
}
