//! FillBoundary, ParallelCopy and a stencil through parallel tiles.
#![warn(clippy::cast_possible_truncation)]

use amrex_box::{IndexBox, IntVect};
use amrex_multifab::{
    BoxArray, CopyOp, DistributionMapping, FillPattern, MultiFab, Periodicity, Tiling,
};
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
    mf.fill(GARBAGE).unwrap();
    for mfi in mf.mfiter(Tiling::None) {
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
    let pattern = if cross {
        FillPattern::Cross
    } else {
        FillPattern::Full
    };
    mf.fill_boundary_with(period, pattern, scomp..scomp + nc, ng)
        .unwrap();
    for mfi in mf.mfiter(Tiling::None) {
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
    // Every cell is checked: a domain of 4³ (boxes of 2³, ghost cells reaching past
    // the neighbours) instead of 16³ under Miri.
    let n = if cfg!(miri) { 4 } else { 16 };
    let lo = IntVect::new(-3, 0, 5);
    let domain = IndexBox::new(lo, lo + (n - 1));
    // (periodic, mgs, ngrow, ng, ncomp, scomp, nc) for each case below.
    type Case = ([bool; 3], i32, IntVect, IntVect, usize, usize, usize);
    let miri = cfg!(miri);
    // Per-direction widths; narrower under Miri (every ghost cell is checked).
    let mixed = if miri {
        IntVect::new(1, 2, 0)
    } else {
        IntVect::new(1, 2, 3)
    };
    let wide = IntVect::splat(if miri { 1 } else { 2 });
    let cases: [Case; 3] = [
        // 2x2x2 boxes: every box touches every face, edge and corner of the domain.
        ([true; 3], n / 2, wide, wide, 2, 0, 2),
        // Mixed periodicity and per-direction ghost widths.
        ([true, false, true], n / 2, mixed, mixed, 1, 0, 1),
        // One box periodic onto itself; a subset of components and ghost width.
        (
            [true; 3],
            n,
            IntVect::splat(if miri { 2 } else { 3 }),
            IntVect::splat(if miri { 1 } else { 2 }),
            if miri { 2 } else { 3 },
            1,
            1,
        ),
    ];
    for (c, &(periodic, mgs, ngrow, ng, ncomp, scomp, nc)) in cases.iter().enumerate() {
        for cross in [false, true] {
            // Under Miri each case runs once, with or without `cross` (the copies run
            // the same code either way).
            if cfg!(miri) && cross != (c == 1) {
                continue;
            }
            check_fb(
                domain,
                IntVect::splat(mgs),
                ngrow,
                ng,
                periodic,
                cross,
                ncomp,
                scomp,
                nc,
            );
        }
    }
}

#[test]
fn fill_boundary_rows_of_every_width_class() {
    // The copy loops differ by row width: 1 to 4 elements (one move per row, wide rows
    // interleaved between them), 5 to 8 (a loop per row, prefetching rows ahead) and
    // more (prefetching the next row's lines). Ghost widths of 4 and 6 in `i` and rows
    // of 12 cells (10 under Miri, in one box periodic onto itself) reach all three, with
    // 2 of 3 components.
    let (len, mgs) = if cfg!(miri) {
        (IntVect::new(10, 4, 4), IntVect::new(10, 4, 4))
    } else {
        (IntVect::splat(24), IntVect::splat(12))
    };
    let lo = IntVect::new(-5, 2, 0);
    let domain = IndexBox::new(lo, lo + len - 1);
    for ng in [IntVect::new(4, 2, 1), IntVect::new(6, 1, 1)] {
        for cross in [false, true] {
            if cfg!(miri) && cross {
                continue;
            }
            check_fb(domain, mgs, ng, ng, [true; 3], cross, 3, 1, 2);
        }
    }
}

/// `cases` cases (`miri_cases` under Miri, without failure persistence there: it
/// needs the file system).
fn config(cases: u32, miri_cases: u32) -> ProptestConfig {
    let mut c = ProptestConfig::with_cases(if cfg!(miri) { miri_cases } else { cases });
    if cfg!(miri) {
        c.failure_persistence = None;
    }
    c
}

/// Domain lengths below this in the random tests (smaller under Miri).
const MAX_LEN: i32 = if cfg!(miri) { 6 } else { 14 };
/// Smallest box size in the random ParallelCopy test (fewer boxes under Miri).
const MIN_MGS: i32 = if cfg!(miri) { 3 } else { 2 };

proptest! {
    #![proptest_config(config(20, 1))]
    #[test]
    fn fill_boundary_random(
        lo in proptest::array::uniform3(-5i32..5),
        len in proptest::array::uniform3(2i32..MAX_LEN),
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
        len in proptest::array::uniform3(3i32..MAX_LEN),
        smgs in proptest::array::uniform3(MIN_MGS..8),
        dmgs in proptest::array::uniform3(MIN_MGS..8),
        dng in 0i32..3,
        periodic in proptest::array::uniform3(any::<bool>()),
        add in any::<bool>(),
    ) {
        let domain = IndexBox::new(IntVect::ZERO, IntVect::from(len) - 1);
        let period = Periodicity::new(domain, periodic);
        let sba = BoxArray::from_domain_iv(domain, IntVect::from(smgs));
        let dba = BoxArray::from_domain_iv(domain, IntVect::from(dmgs));
        let mut src = MultiFab::new(&sba, &DistributionMapping::single(&sba), 2, IntVect::splat(1));
        let mut dst = MultiFab::new(&dba, &DistributionMapping::with_ranks(&dba, 1), 3, IntVect::splat(2));
        valid_only(&mut src);
        dst.fill(1.0).unwrap();
        let dng = IntVect::splat(dng);
        let op = if add { CopyOp::Add } else { CopyOp::Copy };
        // source comps 0..2 -> destination comps 1..3
        dst.parallel_copy_with(&src, 0, 0, period, op, 1..3, dng).unwrap();
        for mfi in dst.mfiter(Tiling::None) {
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
    // A quarter of the cells under Miri; the boxes still cross each other.
    let hi = if cfg!(miri) {
        IntVect::new(15, 8, 4)
    } else {
        IntVect::new(31, 17, 9)
    };
    let domain = IndexBox::new(IntVect::ZERO, hi);
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
    dst.parallel_copy(&src, Periodicity::non_periodic())
        .unwrap();
    for mfi in dst.mfiter(Tiling::Default) {
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

/// Runs `f` on a rayon pool of `n` threads. Under Miri (where rayon cannot run with
/// strict provenance) the crate runs its tasks on two scoped threads whatever `n` is.
fn with_threads<R: Send>(n: usize, f: impl FnOnce() -> R + Send) -> R {
    if cfg!(miri) {
        f()
    } else {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
            .install(f)
    }
}

/// 7-point Laplacian of `phi` over the valid boxes with parallel tiles.
fn laplacian(lap: &mut MultiFab, phi: &MultiFab, tiling: Tiling) {
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
    // Under Miri: a smaller domain (two boxes, each cut into two tiles), one thread
    // count (the crate's Miri engine always uses two scoped threads).
    let (hi, mgs, threads_list) = if cfg!(miri) {
        (IntVect::new(5, 4, 31), 16, &[1][..])
    } else {
        (IntVect::new(31, 23, 17), 8, &[1, 2][..])
    };
    let domain = IndexBox::new(IntVect::ZERO, hi);
    let ba = BoxArray::from_domain(domain, mgs);
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
    // Under Miri the linear field only: the quadratic one runs the same code.
    let fields = if cfg!(miri) {
        &fields[..1]
    } else {
        &fields[..]
    };
    for &(field, want) in fields {
        for &threads in threads_list {
            // Under Miri tiled only (the untiled run is the same code on larger pieces).
            for tiling in [Tiling::None, Tiling::Default] {
                if cfg!(miri) && tiling == Tiling::None {
                    continue;
                }
                with_threads(threads, || {
                    let mut phi = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
                    // Valid cells and physical-boundary ghosts hold the field; interior
                    // ghosts hold NaN until FillBoundary replaces them.
                    phi.par_for_each_tile(tiling, IntVect::splat(1), |mut t| {
                        let bx = t.region();
                        t.array_mut()
                            .for_each_mut(bx, |i, j, k, _, v| *v = field(IntVect::new(i, j, k)));
                    });
                    for mfi in phi.mfiter(Tiling::None) {
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
                        Periodicity::non_periodic(),
                        FillPattern::Cross,
                        0..1,
                        1,
                    )
                    .unwrap();
                    let mut lap = MultiFab::new(&ba, &dm, 1, IntVect::ZERO);
                    laplacian(&mut lap, &phi, tiling);
                    assert_eq!(
                        lap.min(0..1, 0).unwrap(),
                        want,
                        "threads {threads} tiling {tiling:?}"
                    );
                    assert_eq!(
                        lap.max(0..1, 0).unwrap(),
                        want,
                        "threads {threads} tiling {tiling:?}"
                    );
                    assert!(!lap.sum(0..1, 0).unwrap().is_nan());
                });
            }
        }
    }
}
