//! Copy plans: coverage, symmetry between ranks, and caching.
#![warn(clippy::cast_possible_truncation)]

use amrex_box::{IndexBox, IntVect};
use amrex_multifab::plan::{fill_boundary_plan, parallel_copy_plan};
use amrex_multifab::{BoxArray, CopyTag, DistributionMapping, FillPattern, Periodicity, Strategy};
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
/// The pattern a proptest's `cross` flag stands for.
fn pattern(cross: bool) -> FillPattern {
    if cross {
        FillPattern::Cross
    } else {
        FillPattern::Full
    }
}

fn check_fb(domain: IndexBox, mgs: IntVect, ng: IntVect, periodic: [bool; 3], cross: bool) {
    let ba = BoxArray::from_domain_iv(domain, mgs);
    let dm = DistributionMapping::single(&ba);
    let period = Periodicity::new(domain, periodic);
    let plan = fill_boundary_plan(&ba, &dm, ng, period, pattern(cross), 0);
    assert!(plan.is_local_only());
    // Per destination box, per cell of its grown box: (source box, source cell).
    let grown: Vec<IndexBox> = ba.boxes().iter().map(|b| b.grow_iv(ng)).collect();
    let mut seen: Vec<Vec<Option<(usize, IntVect)>>> = grown
        .iter()
        .map(|g| vec![None; g.checked_num_pts_usize().unwrap()])
        .collect();
    for t in plan.local() {
        assert!(
            ba.get(t.src).contains_box(&t.sbox()),
            "source outside valid box: {t:?}"
        );
        assert!(
            grown[t.dst].contains_box(&t.dbox),
            "destination outside: {t:?}"
        );
        for p in t.dbox.iter() {
            let slot = &mut seen[t.dst][grown[t.dst].index(p)];
            assert!(slot.is_none(), "cell {p} of box {} written twice", t.dst);
            *slot = Some((t.src, p + t.shift));
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
            let got = seen[k][grown[k].index(p)];
            match (want, got) {
                (None, None) => {}
                (Some(q), Some((src, sp))) => {
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
    // Every ghost cell is checked: 4³ and narrower ghost regions under Miri.
    let miri = cfg!(miri);
    let n = if miri { 4 } else { 8 };
    let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(n - 1));
    let ng = IntVect::splat(if miri { 1 } else { 2 });
    check_fb(domain, IntVect::splat(n / 2), ng, [true; 3], false);
    // (Under Miri the `cross` variant runs in tests/comm.rs, through FillBoundary.)
    if !miri {
        check_fb(domain, IntVect::splat(n / 2), ng, [true; 3], true);
    }
    // A single box, periodic onto itself.
    check_fb(
        domain,
        IntVect::splat(n),
        IntVect::new(1, 2, 3),
        [true, false, true],
        false,
    );
    // ghost wider than a box (only along x under Miri).
    let wide = if miri {
        IntVect::new(3, 1, 0)
    } else {
        IntVect::splat(3)
    };
    check_fb(domain, IntVect::splat(2), wide, [true; 3], false);
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
    #![proptest_config(config(24, 1))]
    #[test]
    fn fb_random(
        lo in proptest::array::uniform3(-5i32..5),
        len in proptest::array::uniform3(1i32..if cfg!(miri) { 6 } else { 13 }),
        mgs in proptest::array::uniform3(1i32..if cfg!(miri) { 4 } else { 9 }),
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
        len in proptest::array::uniform3(4i32..if cfg!(miri) { 8 } else { 17 }),
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
        let single = fill_boundary_plan(&ba, &DistributionMapping::single(&ba), ng, period, FillPattern::Full, 0);
        let mut all: Vec<CopyTag> = Vec::new();
        let plans: Vec<_> = (0..nranks).map(|r| fill_boundary_plan(&ba, &dm, ng, period, FillPattern::Full, r)).collect();
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
    // Every destination cell is checked against every source box: smaller under Miri.
    let (hi, smgs) = if cfg!(miri) {
        (IntVect::new(7, 5, 3), 4)
    } else {
        (IntVect::new(23, 17, 9), 8)
    };
    let domain = IndexBox::new(IntVect::ZERO, hi);
    let src = BoxArray::from_domain(domain, smgs);
    assert!(src.len() > 1);
    let dst = BoxArray::from_domain_iv(domain, IntVect::new(5, 7, 10));
    let sdm = DistributionMapping::single(&src);
    let ddm = DistributionMapping::single(&dst);
    let period = Periodicity::all(domain);
    for (c, (dng, sng)) in [
        (IntVect::ZERO, IntVect::ZERO),
        (IntVect::splat(1), IntVect::ZERO),
        (IntVect::splat(2), IntVect::splat(1)),
    ]
    .into_iter()
    .enumerate()
    {
        // Under Miri the middle case (between the other two) is left out.
        if cfg!(miri) && c == 1 {
            continue;
        }
        let plan = parallel_copy_plan(&dst, &ddm, dng, &src, &sdm, sng, period, 0);
        // Per destination box, per cell of its grown box: how many tags write it.
        let grown: Vec<IndexBox> = dst.boxes().iter().map(|b| b.grow_iv(dng)).collect();
        let mut count: Vec<Vec<usize>> = grown
            .iter()
            .map(|g| vec![0; g.checked_num_pts_usize().unwrap()])
            .collect();
        for t in plan.local() {
            assert!(src.get(t.src).grow_iv(sng).contains_box(&t.sbox()));
            assert!(grown[t.dst].contains_box(&t.dbox));
            for p in t.dbox.iter() {
                count[t.dst][grown[t.dst].index(p)] += 1;
            }
        }
        // Reference: for every cell, the number of source boxes (grown by sng, every
        // periodic image) covering it, counted box by box.
        let shifts = period.shifts(dng.max(sng));
        for (k, g) in grown.iter().enumerate() {
            let mut want = vec![0usize; g.checked_num_pts_usize().unwrap()];
            for s in &shifts {
                for sb in src.boxes() {
                    if let Some(x) = sb.grow_iv(sng).shift_iv(-*s).intersection(g) {
                        for p in x.iter() {
                            want[g.index(p)] += 1;
                        }
                    }
                }
            }
            for p in g.iter() {
                assert_eq!(count[k][g.index(p)], want[g.index(p)], "dst {k} cell {p}");
            }
        }
    }
}

#[test]
fn plans_are_cached_per_key() {
    // 64 boxes (2 under Miri).
    let hi = if cfg!(miri) {
        IntVect::new(15, 7, 7)
    } else {
        IntVect::splat(31)
    };
    let domain = IndexBox::new(IntVect::ZERO, hi);
    let ba = BoxArray::from_domain(domain, 8);
    let dm = DistributionMapping::single(&ba);
    let p = Periodicity::all(domain);
    let a = dm.fill_boundary_plan(&ba, IntVect::splat(1), p, FillPattern::Full, 0);
    let b = dm
        .clone()
        .fill_boundary_plan(&ba.clone(), IntVect::splat(1), p, FillPattern::Full, 0);
    assert!(std::sync::Arc::ptr_eq(&a, &b));
    let c = dm.fill_boundary_plan(&ba, IntVect::splat(1), p, FillPattern::Cross, 0);
    assert!(!std::sync::Arc::ptr_eq(&a, &c));
    // Another BoxArray with equal boxes is a different key (AMReX keys by identity).
    let ba2 = BoxArray::from_domain(domain, 8);
    let _ = dm.fill_boundary_plan(&ba2, IntVect::splat(1), p, FillPattern::Full, 0);
    let st = dm.plan_cache_stats();
    assert_eq!((st.plans, st.uses), (3, 4));
    let pc1 = dm.parallel_copy_plan(&ba, IntVect::ZERO, &ba2, &dm, IntVect::ZERO, p, 0);
    let pc2 = dm.parallel_copy_plan(&ba, IntVect::ZERO, &ba2, &dm, IntVect::ZERO, p, 0);
    assert!(std::sync::Arc::ptr_eq(&pc1, &pc2));
    dm.clear_plan_cache();
    assert_eq!(dm.plan_cache_stats().plans, 0);
}

#[test]
fn plans_of_dropped_layouts_leave_the_cache() {
    // A long-lived destination that is copied into every step from a new temporary
    // layout (as FillPatch and average_down do): the cache keeps only the plans whose
    // BoxArrays and maps still exist, instead of one more plan per step.
    let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(7));
    let ba = BoxArray::from_domain(domain, 4);
    let dm = DistributionMapping::single(&ba);
    let mut dst = amrex_multifab::MultiFab::new(&ba, &dm, 1, IntVect::ZERO);
    // Four steps under Miri (the copies there take seconds each), twenty elsewhere.
    let steps = if cfg!(miri) { 4 } else { 20 };
    for step in 0..steps {
        let tmp_ba = BoxArray::from_domain(domain, 8);
        let tmp_dm = DistributionMapping::single(&tmp_ba);
        let mut tmp = amrex_multifab::MultiFab::new(&tmp_ba, &tmp_dm, 1, IntVect::ZERO);
        tmp.set_val(f64::from(step), .., 0).unwrap();
        dst.parallel_copy(&tmp, Periodicity::non_periodic())
            .unwrap();
        assert_eq!(dst.min(.., 0).unwrap(), f64::from(step));
        // The plans of earlier steps' temporaries are gone: at most the one in use.
        assert!(
            dm.plan_cache_stats().plans <= 2,
            "step {step}: {:?}",
            dm.plan_cache_stats()
        );
    }
    // A plan whose layouts live on is still found, not rebuilt.
    let src_ba = BoxArray::from_domain(domain, 2);
    let src_dm = DistributionMapping::single(&src_ba);
    let p = Periodicity::non_periodic();
    let a = dm.parallel_copy_plan(&ba, IntVect::ZERO, &src_ba, &src_dm, IntVect::ZERO, p, 0);
    let tmp_ba = BoxArray::from_domain(domain, 8);
    let tmp_dm = DistributionMapping::single(&tmp_ba);
    let _ = dm.parallel_copy_plan(&ba, IntVect::ZERO, &tmp_ba, &tmp_dm, IntVect::ZERO, p, 0);
    drop((tmp_ba, tmp_dm));
    let b = dm.parallel_copy_plan(&ba, IntVect::ZERO, &src_ba, &src_dm, IntVect::ZERO, p, 0);
    assert!(std::sync::Arc::ptr_eq(&a, &b));
}

#[test]
fn plans_say_whether_a_destinations_tags_overlap() {
    let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(7));
    let p = Periodicity::all(domain);
    let plan = |ba: &BoxArray, ng: i32| {
        fill_boundary_plan(
            ba,
            &DistributionMapping::single(ba),
            IntVect::splat(ng),
            p,
            FillPattern::Full,
            0,
        )
    };
    // Disjoint cell-centred boxes: each ghost cell has one source.
    let ba = BoxArray::from_domain(domain, 4);
    assert!(plan(&ba, 2).local_tags_disjoint());
    // Two boxes that share the plane i = 3: the ghost cells of either box on that plane
    // (in j and k, across the periodic boundary) come from both.
    let ov = BoxArray::new(vec![
        IndexBox::new(IntVect::new(0, 0, 0), IntVect::new(3, 7, 7)),
        IndexBox::new(IntVect::new(3, 0, 0), IntVect::new(5, 7, 7)),
        IndexBox::new(IntVect::new(6, 0, 0), IntVect::new(7, 7, 7)),
    ]);
    assert!(!plan(&ov, 1).local_tags_disjoint());
}
