//! Copy plans: coverage, symmetry between ranks, and caching.

use std::collections::HashMap;

use amrex_box::{IndexBox, IntVect};
use amrex_multifab::plan::{fill_boundary_plan, parallel_copy_plan};
use amrex_multifab::{BoxArray, CopyTag, DistributionMapping, Periodicity, Strategy};
use proptest::prelude::*;

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

fn in_cross(p: IntVect, vbx: &IndexBox) -> bool {
    (0..3)
        .filter(|&d| p[d] < vbx.lo()[d] || p[d] > vbx.hi()[d])
        .count()
        == 1
}

/// Checks that a single-rank FB plan fills each ghost cell exactly once from the right
/// place, and nothing else.
fn check_fb(domain: IndexBox, mgs: IntVect, ng: IntVect, periodic: [bool; 3], cross: bool) {
    let ba = BoxArray::from_domain_iv(domain, mgs);
    let dm = DistributionMapping::single(&ba);
    let period = Periodicity::new(domain, periodic);
    let plan = fill_boundary_plan(&ba, &dm, ng, period, cross, 0);
    assert!(plan.is_local_only());
    let mut seen: HashMap<(usize, IntVect), (usize, IntVect)> = HashMap::new();
    for t in plan.local() {
        assert!(
            ba.get(t.src).contains_box(&t.sbox()),
            "source outside valid box: {t:?}"
        );
        for p in t.dbox.iter() {
            let prev = seen.insert((t.dst, p), (t.src, p + t.shift));
            assert!(prev.is_none(), "cell {p} of box {} written twice", t.dst);
        }
    }
    for (k, vbx) in ba.boxes().iter().enumerate() {
        for p in vbx.grow_iv(ng).iter() {
            let ghost = !vbx.contains(p);
            let want = if !ghost || (cross && !in_cross(p, vbx)) {
                None
            } else {
                wrap(p, &domain, &period)
            };
            let got = seen.get(&(k, p));
            match (want, got) {
                (None, None) => {}
                (Some(q), Some(&(src, sp))) => {
                    assert_eq!(q, sp, "ghost {p} of box {k}");
                    assert!(ba.get(src).contains(sp));
                }
                _ => panic!("ghost {p} of box {k}: want {want:?}, got {got:?}"),
            }
        }
    }
}

#[test]
fn fb_periodic_every_face_edge_and_corner() {
    // 2x2x2 boxes: each box touches every face, edge and corner of the periodic domain.
    let domain = IndexBox::new(IntVect::ZERO, IntVect::new(7, 7, 7));
    check_fb(
        domain,
        IntVect::splat(4),
        IntVect::splat(2),
        [true; 3],
        false,
    );
    check_fb(
        domain,
        IntVect::splat(4),
        IntVect::splat(2),
        [true; 3],
        true,
    );
    // A single box, periodic onto itself.
    check_fb(
        domain,
        IntVect::splat(8),
        IntVect::new(1, 2, 3),
        [true, false, true],
        false,
    );
    // ghost wider than a box.
    check_fb(
        domain,
        IntVect::splat(2),
        IntVect::splat(3),
        [true; 3],
        false,
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 2 } else { 24 }))]
    #[test]
    fn fb_random(
        lo in proptest::array::uniform3(-5i32..5),
        len in proptest::array::uniform3(1i32..13),
        mgs in proptest::array::uniform3(1i32..9),
        ng in proptest::array::uniform3(0i32..3),
        periodic in proptest::array::uniform3(any::<bool>()),
        cross in any::<bool>(),
    ) {
        let lo = IntVect::from(lo);
        let domain = IndexBox::new(lo, lo + IntVect::from(len) - 1);
        check_fb(domain, IntVect::from(mgs), IntVect::from(ng), periodic, cross);
    }

    #[test]
    fn multi_rank_plans_partition_the_single_rank_plan(
        len in proptest::array::uniform3(4i32..17),
        mgs in 2i32..7,
        nranks in 1usize..5,
        strategy in 0usize..3,
        periodic in proptest::array::uniform3(any::<bool>()),
    ) {
        let domain = IndexBox::new(IntVect::ZERO, IntVect::from(len) - 1);
        let ba = BoxArray::from_domain(domain, mgs);
        let s = [Strategy::RoundRobin, Strategy::KnapSack, Strategy::Sfc][strategy];
        let dm = DistributionMapping::with_strategy(&ba, nranks, s);
        let period = Periodicity::new(domain, periodic);
        let ng = IntVect::splat(1);
        let single = fill_boundary_plan(&ba, &DistributionMapping::single(&ba), ng, period, false, 0);
        let mut all: Vec<CopyTag> = Vec::new();
        let plans: Vec<_> = (0..nranks).map(|r| fill_boundary_plan(&ba, &dm, ng, period, false, r)).collect();
        for p in &plans {
            all.extend_from_slice(p.local());
            for (src_rank, tags) in p.recvs() {
                // What src_rank sends to this rank is exactly what this rank receives.
                let sent = plans[*src_rank].sends().iter().find(|(r, _)| *r == p.rank()).map(|(_, t)| t.clone());
                prop_assert_eq!(sent.as_ref(), Some(tags));
                all.extend_from_slice(tags);
            }
        }
        let key = |t: &CopyTag| (t.dst, t.src, t.dbox.lo().to_array(), t.dbox.hi().to_array(), t.shift.to_array());
        let mut a: Vec<_> = all.iter().map(key).collect();
        let mut b: Vec<_> = single.local().iter().map(key).collect();
        a.sort();
        b.sort();
        prop_assert_eq!(a, b);
    }
}

#[test]
fn parallel_copy_plan_covers_the_overlap() {
    let domain = IndexBox::new(IntVect::ZERO, IntVect::new(23, 17, 9));
    let src = BoxArray::from_domain(domain, 8);
    let dst = BoxArray::from_domain_iv(domain, IntVect::new(5, 7, 10));
    let sdm = DistributionMapping::single(&src);
    let ddm = DistributionMapping::single(&dst);
    let period = Periodicity::all(domain);
    for (dng, sng) in [
        (IntVect::ZERO, IntVect::ZERO),
        (IntVect::splat(1), IntVect::ZERO),
        (IntVect::splat(2), IntVect::splat(1)),
    ] {
        let plan = parallel_copy_plan(&dst, &ddm, dng, &src, &sdm, sng, period, 0);
        let mut count: HashMap<(usize, IntVect), usize> = HashMap::new();
        for t in plan.local() {
            assert!(src.get(t.src).grow_iv(sng).contains_box(&t.sbox()));
            assert!(dst.get(t.dst).grow_iv(dng).contains_box(&t.dbox));
            for p in t.dbox.iter() {
                *count.entry((t.dst, p)).or_default() += 1;
            }
        }
        for (k, b) in dst.boxes().iter().enumerate() {
            for p in b.grow_iv(dng).iter() {
                // Number of source boxes (grown by sng, all periodic images) covering p.
                let want: usize = period
                    .shifts(dng.max(sng))
                    .iter()
                    .map(|s| {
                        src.boxes()
                            .iter()
                            .filter(|sb| sb.grow_iv(sng).contains(p + *s))
                            .count()
                    })
                    .sum();
                assert_eq!(
                    count.get(&(k, p)).copied().unwrap_or(0),
                    want,
                    "dst {k} cell {p}"
                );
            }
        }
    }
}

#[test]
fn plans_are_cached_per_key() {
    let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(31));
    let ba = BoxArray::from_domain(domain, 8);
    let dm = DistributionMapping::new(&ba, 1);
    let p = Periodicity::all(domain);
    let a = dm.fill_boundary_plan(&ba, IntVect::splat(1), p, false, 0);
    let b = dm
        .clone()
        .fill_boundary_plan(&ba.clone(), IntVect::splat(1), p, false, 0);
    assert!(std::sync::Arc::ptr_eq(&a, &b));
    let c = dm.fill_boundary_plan(&ba, IntVect::splat(1), p, true, 0);
    assert!(!std::sync::Arc::ptr_eq(&a, &c));
    // Another BoxArray with equal boxes is a different key (AMReX keys by identity).
    let ba2 = BoxArray::from_domain(domain, 8);
    let _ = dm.fill_boundary_plan(&ba2, IntVect::splat(1), p, false, 0);
    let st = dm.plan_cache_stats();
    assert_eq!((st.plans, st.uses), (3, 4));
    let pc1 = dm.parallel_copy_plan(&ba, IntVect::ZERO, &ba2, &dm, IntVect::ZERO, p, 0);
    let pc2 = dm.parallel_copy_plan(&ba, IntVect::ZERO, &ba2, &dm, IntVect::ZERO, p, 0);
    assert!(std::sync::Arc::ptr_eq(&pc1, &pc2));
    dm.clear_plan_cache();
    assert_eq!(dm.plan_cache_stats().plans, 0);
}
