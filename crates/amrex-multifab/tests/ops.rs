//! Every operation against a naive single-threaded reference, on random layouts.
#![warn(clippy::cast_possible_truncation)]

use amrex_box::{IndexBox, IntVect};
use amrex_multifab::{
    BoxArray, DistributionMapping, FabArray, FabArrayError, FabError, MultiFab, Tiling, iMultiFab,
};
use proptest::prelude::*;

fn hash(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// A value in ±[0.5, 1.5) from the cell, component, box and seed.
fn val(seed: u64, g: usize, p: IntVect, n: usize) -> f64 {
    let h = hash(
        seed ^ hash(
            g as u64
                ^ hash(
                    (p[0] as u64)
                        ^ hash((p[1] as u64) << 20 ^ (p[2] as u64) << 40 ^ (n as u64) << 60),
                ),
        ),
    );
    let m = 0.5 + (h >> 11) as f64 / (1u64 << 53) as f64;
    if h & 1 == 0 { m } else { -m }
}

fn fill(mf: &mut MultiFab, seed: u64) {
    for mfi in mf.mfiter(Tiling::None) {
        let g = mfi.index();
        let fb = mfi.fabbox();
        let mut a = mf.array_mut(&mfi);
        a.for_each_mut(fb, |i, j, k, n, v| {
            *v = val(seed, g, IntVect::new(i, j, k), n)
        });
    }
}

/// Every fab's elements (fab box in Fortran order, component slowest).
type Snap = Vec<Vec<f64>>;

fn snap(mf: &MultiFab) -> Snap {
    mf.fabs().map(|f| f.as_slice().unwrap().to_vec()).collect()
}

/// `(q, cell, component)` of every element of fab `b` of a snapshot.
fn elements(ba: &BoxArray, ngrow: IntVect, b: usize, ncomp: usize) -> Vec<(usize, IntVect, usize)> {
    let fbx = ba.get(b).grow_iv(ngrow);
    let npts = fbx.checked_num_pts_usize().unwrap();
    (0..ncomp)
        .flat_map(|n| {
            fbx.iter()
                .enumerate()
                .map(move |(c, p)| (c + n * npts, p, n))
        })
        .collect()
}

#[derive(Debug, Clone)]
struct Case {
    ba: BoxArray,
    ncomp: usize,
    ngrow: IntVect,
    comp: usize,
    nc: usize,
    ng: IntVect,
}

/// Random layouts; under Miri tiny ones (at least two boxes along `x`, so tasks run
/// on both threads, and at most a few hundred elements).
fn case() -> impl Strategy<Value = Case> {
    let miri = cfg!(miri);
    let len = if miri {
        [3i32..4, 1..3, 1..3]
    } else {
        [1i32..20, 1..20, 1..20]
    };
    (
        proptest::array::uniform3(-4i32..4),
        len,
        proptest::array::uniform3(2i32..if miri { 3 } else { 12 }),
        1usize..if miri { 3 } else { 4 },
        proptest::array::uniform3(0i32..if miri { 2 } else { 3 }),
    )
        .prop_flat_map(|(lo, len, mgs, ncomp, ngrow)| {
            (
                Just((lo, len, mgs, ncomp, ngrow)),
                0..ncomp,
                proptest::array::uniform3(0i32..3),
            )
        })
        .prop_flat_map(|((lo, len, mgs, ncomp, ngrow), comp, ngf)| {
            let ngrow = IntVect::from(ngrow);
            let ng = IntVect::from(ngf).min(ngrow);
            let lo = IntVect::from(lo);
            let ba = BoxArray::from_domain_iv(
                IndexBox::new(lo, lo + IntVect::from(len) - 1),
                IntVect::from(mgs),
            );
            (
                Just(ba),
                Just(ncomp),
                Just(ngrow),
                Just(comp),
                1..=(ncomp - comp),
                Just(ng),
            )
        })
        .prop_map(|(ba, ncomp, ngrow, comp, nc, ng)| Case {
            ba,
            ncomp,
            ngrow,
            comp,
            nc,
            ng,
        })
}

fn in_region(c: &Case, vbx: IndexBox, p: IntVect, n: usize) -> bool {
    vbx.grow_iv(c.ng).contains(p) && n >= c.comp && n < c.comp + c.nc
}

/// Runs `op` on FabArrays and compares with `reference(dst, srcs...)` applied per cell.
fn check_elementwise(
    c: &Case,
    op: impl Fn(&mut MultiFab, &MultiFab, &MultiFab),
    reference: impl Fn(f64, f64, f64) -> f64,
) {
    let dm = DistributionMapping::single(&c.ba);
    let mut d = MultiFab::new(&c.ba, &dm, c.ncomp, c.ngrow);
    let mut x = MultiFab::new(&c.ba, &dm, c.ncomp, c.ngrow);
    let mut y = MultiFab::new(&c.ba, &dm, c.ncomp, c.ngrow);
    fill(&mut d, 1);
    fill(&mut x, 2);
    fill(&mut y, 3);
    let (d0, x0, y0) = (snap(&d), snap(&x), snap(&y));
    op(&mut d, &x, &y);
    let d1 = snap(&d);
    for (b, fab) in d1.iter().enumerate() {
        let vbx = c.ba.get(b);
        for (q, p, n) in elements(&c.ba, c.ngrow, b, c.ncomp) {
            let v = fab[q];
            let want = if in_region(c, vbx, p, n) {
                // The comp offset: sources are read at the same component here.
                reference(d0[b][q], x0[b][q], y0[b][q])
            } else {
                d0[b][q]
            };
            assert!(
                want.to_bits() == v.to_bits() || (want.is_nan() && v.is_nan()),
                "box {b} cell {p} comp {n}: {v} != {want}"
            );
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

proptest! {
    #![proptest_config(config(16, 1))]

    #[test]
    fn elementwise_ops_match_reference(c in case()) {
        let (comp, nc, ng) = (c.comp, c.nc, c.ng);
        check_elementwise(&c, |d, _, _| d.set_val(2.5, comp..comp + nc, ng).unwrap(), |_, _, _| 2.5);
        check_elementwise(&c, |d, _, _| d.plus(0.25, comp..comp + nc, ng).unwrap(), |d, _, _| d + 0.25);
        check_elementwise(&c, |d, _, _| d.mult(-3.0, comp..comp + nc, ng).unwrap(), |d, _, _| d * -3.0);
        check_elementwise(&c, |d, _, _| d.invert(2.0, comp..comp + nc, ng).unwrap(), |d, _, _| 2.0 / d);
        check_elementwise(&c, |d, _, _| d.negate(comp..comp + nc, ng).unwrap(), |d, _, _| -d);
        check_elementwise(&c, |d, _, _| d.abs(comp..comp + nc, ng).unwrap(), |d, _, _| d.abs());
        check_elementwise(&c, |d, x, _| d.add(x, comp, comp..comp + nc, ng).unwrap(), |d, x, _| d + x);
        check_elementwise(&c, |d, x, _| d.subtract(x, comp, comp..comp + nc, ng).unwrap(), |d, x, _| d - x);
        check_elementwise(&c, |d, x, _| d.multiply(x, comp, comp..comp + nc, ng).unwrap(), |d, x, _| d * x);
        check_elementwise(&c, |d, x, _| d.divide(x, comp, comp..comp + nc, ng).unwrap(), |d, x, _| d / x);
        check_elementwise(&c, |d, x, _| d.copy_from(x, comp, comp..comp + nc, ng).unwrap(), |_, x, _| x);
        check_elementwise(&c, |d, x, _| d.saxpy(0.5, x, comp, comp..comp + nc, ng).unwrap(), |d, x, _| d + 0.5 * x);
        check_elementwise(&c, |d, x, _| d.xpay(0.5, x, comp, comp..comp + nc, ng).unwrap(), |d, x, _| x + 0.5 * d);
        check_elementwise(&c, |d, x, y| d.lin_comb(2.0, x, comp, -1.5, y, comp, comp..comp + nc, ng).unwrap(), |_, x, y| 2.0 * x + -1.5 * y);
        check_elementwise(&c, |d, x, y| d.add_product(x, comp, y, comp, comp..comp + nc, ng).unwrap(), |d, x, y| d + x * y);
    }

    #[test]
    fn shifted_components_and_swap(c in case()) {
        // Source component 0 into destination component `comp`.
        let dm = DistributionMapping::single(&c.ba);
        let mut d = MultiFab::new(&c.ba, &dm, c.ncomp, c.ngrow);
        let mut x = MultiFab::new(&c.ba, &dm, c.ncomp, c.ngrow);
        fill(&mut d, 5);
        fill(&mut x, 6);
        let (d0, x0) = (snap(&d), snap(&x));
        d.copy_from(&x, 0, c.comp..=c.comp, c.ng).unwrap();
        for (b, fab) in snap(&d).iter().enumerate() {
            let vbx = c.ba.get(b);
            let npts = vbx.grow_iv(c.ngrow).checked_num_pts_usize().unwrap();
            for (q, p, n) in elements(&c.ba, c.ngrow, b, c.ncomp) {
                let want = if n == c.comp && vbx.grow_iv(c.ng).contains(p) {
                    // component 0 of x at the same cell
                    x0[b][q - n * npts]
                } else { d0[b][q] };
                prop_assert_eq!(fab[q], want);
            }
        }
        let (d1, x1) = (snap(&d), snap(&x));
        d.swap(&mut x, c.comp, c.comp..c.comp + c.nc, c.ng).unwrap();
        let (d2, x2) = (snap(&d), snap(&x));
        for b in 0..d1.len() {
            let vbx = c.ba.get(b);
            for (q, p, n) in elements(&c.ba, c.ngrow, b, c.ncomp) {
                if in_region(&c, vbx, p, n) {
                    prop_assert_eq!(d2[b][q], x1[b][q]);
                    prop_assert_eq!(x2[b][q], d1[b][q]);
                } else {
                    prop_assert_eq!(d2[b][q], d1[b][q]);
                    prop_assert_eq!(x2[b][q], x1[b][q]);
                }
            }
        }
    }

    #[test]
    fn reductions_match_reference(c in case()) {
        let dm = DistributionMapping::single(&c.ba);
        let mut x = MultiFab::new(&c.ba, &dm, c.ncomp, c.ngrow);
        let mut y = MultiFab::new(&c.ba, &dm, c.ncomp, c.ngrow);
        fill(&mut x, 7);
        fill(&mut y, 8);
        let (xs, ys) = (snap(&x), snap(&y));
        let (mut mn, mut mx, mut sum, mut n0, mut n1, mut n2, mut dot) = (f64::MAX, f64::MIN, 0.0, 0.0f64, 0.0, 0.0, 0.0);
        for b in 0..xs.len() {
            let vbx = c.ba.get(b);
            for (q, p, n) in elements(&c.ba, c.ngrow, b, c.ncomp) {
                let v = xs[b][q];
                if in_region(&c, vbx, p, n) {
                    mn = mn.min(v); mx = mx.max(v); sum += v; n0 = n0.max(v.abs()); n1 += v.abs(); n2 += v * v;
                    dot += v * ys[b][q];
                }
            }
        }
        let (comp, nc, ng) = (c.comp, c.nc, c.ng);
        prop_assert_eq!(x.min(comp..comp + nc, ng).unwrap(), mn);
        prop_assert_eq!(x.max(comp..comp + nc, ng).unwrap(), mx);
        prop_assert_eq!(x.norm0(comp..comp + nc, ng).unwrap(), n0);
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * (1.0 + b.abs());
        prop_assert!(close(x.sum(comp..comp + nc, ng).unwrap(), sum));
        prop_assert!(close(x.norm1(comp..comp + nc, ng).unwrap(), n1));
        prop_assert!(close(x.norm2(comp..comp + nc, ng).unwrap(), n2.sqrt()));
        prop_assert!(close(x.dot(&y, comp, comp..comp + nc, ng).unwrap(), dot));
    }
}

#[test]
fn imultifab_sums_in_i64() {
    // 8 boxes of 8³ (of 4³ under Miri).
    let n = if cfg!(miri) { 8 } else { 16 };
    let ba = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::splat(n - 1)), n / 2);
    let dm = DistributionMapping::single(&ba);
    let ncells = i64::from(n * n * n);
    let mut m = iMultiFab::new(&ba, &dm, 2, IntVect::splat(1));
    m.fill(i32::MAX).unwrap();
    assert_eq!(m.sum(0..1, 0).unwrap(), i64::from(i32::MAX) * ncells);
    m.set_val(-3, 1..2, 0).unwrap();
    assert_eq!(m.min(0..2, 0).unwrap(), -3);
    assert_eq!(m.norm0(1..2, 0).unwrap(), 3);
    assert_eq!(m.norm1(1..2, 0).unwrap(), 3 * ncells);
    let f: FabArray<f32> = FabArray::new(&ba, &dm, 1, IntVect::ZERO);
    assert_eq!(f.sum(0..1, 0).unwrap(), 0.0);
}

#[test]
fn reductions_do_not_depend_on_thread_count() {
    // Several boxes and tasks; a small domain under Miri.
    let (hi, mgs) = if cfg!(miri) {
        (IntVect::new(9, 5, 3), 4)
    } else {
        (IntVect::new(40, 33, 20), 16)
    };
    let ba = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, hi), mgs);
    let dm = DistributionMapping::single(&ba);
    let mut x = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
    fill(&mut x, 9);
    let run = |n: usize| {
        let f = || {
            (
                x.sum(0..1, 0).unwrap(),
                x.norm2(0..1, 1).unwrap(),
                x.dot(&x, 0, 0..1, 0).unwrap(),
            )
        };
        // Under Miri rayon cannot run (strict provenance); the crate then runs its tasks
        // on two scoped threads, and this compares repeated runs.
        if cfg!(miri) {
            f()
        } else {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap()
                .install(f)
        }
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one, run(3));
}

#[test]
fn refused_operations_name_the_reason_and_write_nothing() {
    let ba = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::splat(7)), 4);
    let dm = DistributionMapping::single(&ba);
    let mut x = MultiFab::new(&ba, &dm, 2, IntVect::splat(1));
    x.fill(1.0).unwrap();
    let y = MultiFab::new(&ba, &dm, 1, IntVect::ZERO);
    let other_ba = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::splat(7)), 8);
    let z = MultiFab::new(
        &other_ba,
        &DistributionMapping::single(&other_ba),
        2,
        IntVect::splat(1),
    );
    let everything = |m: &MultiFab| {
        m.read_region(.., IndexBox::new(IntVect::splat(-1), IntVect::splat(8)))
            .unwrap()
    };
    let before = everything(&x);

    let e = x.plus(1.0, 0..1, 2).unwrap_err();
    assert_eq!(
        e,
        FabArrayError::GhostOutside {
            ng: IntVect::splat(2),
            ngrow: IntVect::splat(1)
        }
    );
    assert!(e.to_string().contains("ghost width (2,2,2)"), "{e}");
    let e = x.set_val(3.0, 1..3, 0).unwrap_err();
    assert_eq!(
        e,
        FabArrayError::Fab(FabError::ComponentsOutside {
            start: 1,
            end: 3,
            ncomp: 2
        })
    );
    let e = x.saxpy(2.0, &y, 0, 0..2, 0).unwrap_err();
    assert_eq!(
        e,
        FabArrayError::Fab(FabError::ComponentsOutside {
            start: 0,
            end: 2,
            ncomp: 1
        })
    );
    let e = x.copy_from(&y, 0, 0..1, 1).unwrap_err();
    assert!(matches!(e, FabArrayError::GhostOutside { .. }), "{e}");
    assert_eq!(
        x.add(&z, 0, .., 0).unwrap_err(),
        FabArrayError::LayoutMismatch
    );
    assert_eq!(
        x.norm2(0..3, 0).unwrap_err(),
        FabArrayError::Fab(FabError::ComponentsOutside {
            start: 0,
            end: 3,
            ncomp: 2
        })
    );
    assert!(matches!(
        x.dot(&y, 0, 0..1, 1).unwrap_err(),
        FabArrayError::GhostOutside { .. }
    ));
    assert_eq!(everything(&x), before, "a refused operation wrote");

    // The ghost width may be given as an i32 (every direction) or an IntVect.
    x.plus(1.0, 1..2, IntVect::new(1, 0, 1)).unwrap();
    assert_eq!(x.max(1..2, 1).unwrap(), 2.0);
    assert_eq!(x.min(1..2, 1).unwrap(), 1.0);
}

/// The FabArray reductions run in a copy compiled for the CPU's widest vectors
/// (`amrex_array4::simd::widest`), the BaseFab ones in the baseline copy; both fold
/// with the same lane kernel, so on a box that is one slab with rows a multiple of the
/// lane count they must agree bit for bit, on values whose sum rounds at every step.
#[test]
fn wide_reductions_round_like_the_baseline_loop() {
    // (Miri runs the baseline copy only; one small case is enough there.)
    let edges: &[i32] = if cfg!(miri) { &[8] } else { &[16, 24, 32] };
    for &edge in edges {
        let bx = IndexBox::new(IntVect::ZERO, IntVect::splat(edge - 1));
        let ba = BoxArray::from_domain(bx, edge);
        let dm = DistributionMapping::single(&ba);
        let mut mf = MultiFab::new(&ba, &dm, 1, IntVect::ZERO);
        fill(&mut mf, edge as u64);
        let fab = mf.fab(0);
        let (sum, norm2) = (mf.sum(0..1, 0).unwrap(), mf.norm2(0..1, 0).unwrap());
        assert_eq!(
            sum.to_bits(),
            fab.sum(0..1, bx).unwrap().to_bits(),
            "sum, {edge}³"
        );
        assert_eq!(
            norm2.to_bits(),
            fab.norm2(0..1, bx).unwrap().to_bits(),
            "norm2, {edge}³"
        );
        // A plain left-to-right sum rounds differently: the test can tell orders apart.
        let plain: f64 = (0..edge * edge * edge)
            .map(|c| {
                val(
                    edge as u64,
                    0,
                    IntVect::new(c % edge, c / edge % edge, c / (edge * edge)),
                    0,
                )
            })
            .sum();
        assert_ne!(
            plain.to_bits(),
            sum.to_bits(),
            "{edge}³: the orders should differ"
        );
    }
}
