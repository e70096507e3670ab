//! Distributed FabArrays under `mpirun`: `fill_boundary` (all variants, split phase),
//! `parallel_copy` (copy and add, ghost widths, periodic, different BoxArrays and maps),
//! `sum_boundary` and the reductions, each compared bit for bit with the single-process
//! result of the same operation, which every rank computes itself on a FabArray that
//! holds every box; and the mismatch errors, on every rank, without a hang.
//!
//! Run by `scripts/test-mpi.sh` under `mpirun -n 1`, `-n 2` and `-n 4`; `harness =
//! false` for the reason given in `tests/mpi_comm.rs` (collectives must be entered in
//! the same order on every rank).
#![warn(clippy::cast_possible_truncation)]

use amrex_multifab::{
    BoxArray, CopyOp, DistributionMapping, FabArrayError, FabError, FillPattern, IndexBox,
    IndexType, IntVect, MultiFab, Periodicity, Reduction, Strategy, Tiling,
};
use amrex_runtime::Communicator;

/// splitmix64, seeded the same on every rank: every rank draws the same cases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut x = self.0;
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^ (x >> 31)
    }

    /// Uniform in `lo..=hi`.
    fn int(&mut self, lo: i32, hi: i32) -> i32 {
        lo + i32::try_from(self.next() % (hi - lo + 1) as u64).unwrap()
    }

    fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }

    fn iv(&mut self, lo: i32, hi: i32) -> IntVect {
        IntVect::new(self.int(lo, hi), self.int(lo, hi), self.int(lo, hi))
    }
}

/// A random domain cut into boxes (some dropped, so the BoxArray has holes), and a
/// periodicity over the domain.
fn random_layout(rng: &mut Rng) -> (BoxArray, Periodicity) {
    let lo = rng.iv(-6, 6);
    let domain = IndexBox::new(lo, lo + rng.iv(5, 17));
    let ba = BoxArray::from_domain_iv(domain, rng.iv(3, 9));
    let mut boxes: Vec<IndexBox> = ba.boxes().to_vec();
    if boxes.len() > 2 && rng.int(0, 3) == 0 {
        let drop = rng.int(0, i32::try_from(boxes.len()).unwrap() - 1) as usize;
        boxes.remove(drop);
    }
    let periodic = [rng.coin(), rng.coin(), rng.coin()];
    (BoxArray::new(boxes), Periodicity::new(domain, periodic))
}

/// A random map of `ba` onto `comm`'s ranks: one of the three strategies or any pmap.
fn random_map(rng: &mut Rng, ba: &BoxArray, comm: &Communicator) -> DistributionMapping {
    match rng.int(0, 3) {
        0 => DistributionMapping::on(ba, comm),
        1 => DistributionMapping::with_strategy_on(ba, comm, Strategy::KnapSack),
        2 => DistributionMapping::with_strategy_on(ba, comm, Strategy::RoundRobin),
        _ => {
            let pmap = (0..ba.len())
                .map(|_| u32::try_from(rng.next() % comm.size() as u64).unwrap())
                .collect();
            DistributionMapping::from_pmap_on(pmap, comm)
        }
    }
}

/// A value for every element (ghost cells too) that names the box, cell and component,
/// so a wrong source shows.
fn fill_pattern(mf: &mut MultiFab, salt: u64) {
    for mfi in mf.mfiter(Tiling::None) {
        let (g, bx) = (mfi.index() as u64, mfi.fabbox());
        let mut a = mf.array_mut(&mfi);
        let nc = a.ncomp();
        for n in 0..nc {
            amrex_array4::for_each_cell(bx, |i, j, k| {
                let h = (salt ^ g.wrapping_mul(0x1000193))
                    .wrapping_mul(31)
                    .wrapping_add(
                        ((i64::from(i) * 73_856_093)
                            ^ (i64::from(j) * 19_349_663)
                            ^ (i64::from(k) * 83_492_791)) as u64,
                    )
                    .wrapping_add(n as u64 * 7919);
                a[(i, j, k, n)] = (h % 1_000_003) as f64 * 0.001 - 300.0;
            });
        }
    }
}

/// Every element of every local fab of `dist` equals, bit for bit, that of the same box
/// of `single` (which holds every box).
fn assert_same(what: &str, dist: &MultiFab, single: &MultiFab) {
    for mfi in dist.mfiter(Tiling::None) {
        let g = mfi.index();
        let (a, b) = (
            dist.fab(&mfi).as_slice().unwrap(),
            single.fab(&mfi).as_slice().unwrap(),
        );
        assert_eq!(a.len(), b.len(), "{what}: box {g} sizes");
        if let Some(i) = (0..a.len()).find(|&i| a[i].to_bits() != b[i].to_bits()) {
            panic!(
                "{what}: box {g} of {} on rank {}: element {i} is {} distributed but {} in one process",
                mfi.validbox(),
                dist.communicator().rank(),
                a[i],
                b[i]
            );
        }
    }
}

/// The distributed FabArray and its single-process twin, filled alike.
fn pair(
    ba: &BoxArray,
    dm: &DistributionMapping,
    ncomp: usize,
    ngrow: IntVect,
    salt: u64,
) -> (MultiFab, MultiFab) {
    let mut d = MultiFab::new(ba, dm, ncomp, ngrow);
    let mut s = MultiFab::new(ba, &DistributionMapping::single(ba), ncomp, ngrow);
    fill_pattern(&mut d, salt);
    fill_pattern(&mut s, salt);
    (d, s)
}

/// A random component range of `ncomp` (never empty).
fn comps(rng: &mut Rng, ncomp: usize) -> core::ops::Range<usize> {
    let n = i32::try_from(ncomp).unwrap();
    let a = rng.int(0, n - 1);
    let b = rng.int(a + 1, n) as usize;
    let a = a as usize;
    a..b
}

fn fill_boundary_random(c: &Communicator) {
    let mut rng = Rng(11);
    for case in 0..16 {
        let (ba, period) = random_layout(&mut rng);
        let dm = random_map(&mut rng, &ba, c);
        let ncomp = rng.int(1, 3) as usize;
        let ngrow = rng.iv(0, 3);
        let (mut d, mut s) = pair(&ba, &dm, ncomp, ngrow, case);
        let cr = comps(&mut rng, ncomp);
        let ng = IntVect::new(
            rng.int(0, ngrow[0]),
            rng.int(0, ngrow[1]),
            rng.int(0, ngrow[2]),
        );
        let pattern = if rng.coin() {
            FillPattern::Full
        } else {
            FillPattern::Cross
        };
        d.fill_boundary_with(period, pattern, cr.clone(), ng)
            .unwrap();
        s.fill_boundary_with(period, pattern, cr, ng).unwrap();
        assert_same(&format!("fill_boundary case {case}"), &d, &s);
        // The whole-width call too.
        d.fill_boundary(period).unwrap();
        s.fill_boundary(period).unwrap();
        assert_same(&format!("fill_boundary (full) case {case}"), &d, &s);
        // Global-index reads are collective and give every rank the whole region.
        let region = ba.minimal_box().grow(1);
        let (rd, rs) = (
            d.read_region(.., region).unwrap(),
            s.read_region(.., region).unwrap(),
        );
        assert!(
            rd.iter().zip(&rs).all(|(a, b)| a.to_bits() == b.to_bits()),
            "read_region case {case}"
        );
    }
}

/// 2x2x2 boxes on a periodic domain, neighbours on different ranks: every face, edge
/// and corner of every box crosses ranks.
fn periodic_faces_edges_corners(c: &Communicator) {
    let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(11));
    let ba = BoxArray::from_domain(domain, 6);
    assert_eq!(ba.len(), 8);
    let pmap = (0..8)
        .map(|b| u32::try_from(b % c.size()).unwrap())
        .collect();
    let dm = DistributionMapping::from_pmap_on(pmap, c);
    let period = Periodicity::all(domain);
    for ng in [1, 2, 3] {
        let (mut d, mut s) = pair(&ba, &dm, 2, IntVect::splat(ng), 77 + ng as u64);
        d.fill_boundary(period).unwrap();
        s.fill_boundary(period).unwrap();
        assert_same("periodic corners", &d, &s);
        // And every ghost cell is now the value of the cell it images.
        for mfi in d.mfiter(Tiling::None) {
            let (g, a) = (mfi.index(), d.array(&mfi));
            amrex_array4::for_each_cell(mfi.fabbox(), |i, j, k| {
                let p = IntVect::new(i, j, k);
                let w = IntVect::new(i.rem_euclid(12), j.rem_euclid(12), k.rem_euclid(12));
                let owner = (0..8).find(|&b| ba.get(b).contains(w)).unwrap();
                let so = s.local_index(owner).unwrap();
                assert_eq!(
                    a[(i, j, k, 1)].to_bits(),
                    s.array_at(so)[(w[0], w[1], w[2], 1)].to_bits(),
                    "ghost {p} of box {g}"
                );
            });
        }
    }
}

/// Nodal BoxArrays: neighbouring boxes share their face nodes, so a ghost node has
/// several sources, applied in the single-process order on any number of ranks.
fn fill_boundary_nodal(c: &Communicator) {
    let mut rng = Rng(17);
    for case in 0..8 {
        let (ba, period) = random_layout(&mut rng);
        let ba = ba.convert(IndexType::new(rng.coin(), true, rng.coin()));
        let dm = random_map(&mut rng, &ba, c);
        let (mut d, mut s) = pair(&ba, &dm, 1, rng.iv(1, 2), 200 + case);
        let per = if rng.coin() {
            period
        } else {
            Periodicity::non_periodic()
        };
        d.fill_boundary(per).unwrap();
        s.fill_boundary(per).unwrap();
        assert_same(&format!("nodal fill_boundary case {case}"), &d, &s);
    }
}

/// Two FillBoundaries in flight at once (the same message tag), finished in the other
/// order.
fn two_in_flight(c: &Communicator) {
    let mut rng = Rng(29);
    let (ba, period) = random_layout(&mut rng);
    let dm = random_map(&mut rng, &ba, c);
    let (mut a, mut sa) = pair(&ba, &dm, 1, IntVect::splat(1), 401);
    let (mut b, mut sb) = pair(&ba, &dm, 2, IntVect::splat(2), 402);
    a.fill_boundary_nowait(period, FillPattern::Full, .., 1)
        .unwrap();
    b.fill_boundary_nowait(period, FillPattern::Full, .., 2)
        .unwrap();
    b.fill_boundary_finish().unwrap();
    a.fill_boundary_finish().unwrap();
    sa.fill_boundary(period).unwrap();
    sb.fill_boundary(period).unwrap();
    assert_same("first in flight", &a, &sa);
    assert_same("second in flight", &b, &sb);
}

fn fill_boundary_split_phase(c: &Communicator) {
    let mut rng = Rng(23);
    for case in 0..4 {
        let (ba, period) = random_layout(&mut rng);
        let dm = random_map(&mut rng, &ba, c);
        let (mut d, mut s) = pair(&ba, &dm, 2, IntVect::splat(2), 300 + case);
        for mf in [&mut d, &mut s] {
            mf.fill_boundary_nowait(period, FillPattern::Full, .., 2)
                .unwrap();
            // A second one while the first is in flight is refused.
            assert!(matches!(
                mf.fill_boundary_nowait(period, FillPattern::Full, .., 2),
                Err(FabArrayError::FillInFlight)
            ));
            // Work on valid cells overlaps the messages (the sources were packed).
            mf.plus(1.0, .., 0).unwrap();
            mf.fill_boundary_finish().unwrap();
            mf.fill_boundary_finish().unwrap(); // nothing in flight: Ok
        }
        assert_same(&format!("split phase case {case}"), &d, &s);
    }
}

fn parallel_copy_random(c: &Communicator) {
    let mut rng = Rng(37);
    for case in 0..16 {
        let (src_ba, period) = random_layout(&mut rng);
        // The destination: the same domain region cut differently (and shifted a little,
        // so some cells have no source).
        let dom = src_ba.minimal_box();
        let dst_ba = BoxArray::from_domain_iv(dom.shift_iv(rng.iv(-2, 2)), rng.iv(3, 9));
        let (src_dm, dst_dm) = (
            random_map(&mut rng, &src_ba, c),
            random_map(&mut rng, &dst_ba, c),
        );
        let (snc, dnc) = (rng.int(1, 3) as usize, rng.int(1, 3) as usize);
        let (sgrow, dgrow) = (rng.iv(0, 2), rng.iv(0, 2));
        let (src_d, src_s) = pair(&src_ba, &src_dm, snc, sgrow, 500 + case);
        let (mut dst_d, mut dst_s) = pair(&dst_ba, &dst_dm, dnc, dgrow, 600 + case);
        let int = |n: usize| i32::try_from(n).unwrap();
        let nc = rng.int(1, int(snc.min(dnc))) as usize;
        let scomp = rng.int(0, int(snc - nc)) as usize;
        let dcomp = rng.int(0, int(dnc - nc)) as usize;
        let src_ng = IntVect::new(
            rng.int(0, sgrow[0]),
            rng.int(0, sgrow[1]),
            rng.int(0, sgrow[2]),
        );
        let dst_ng = IntVect::new(
            rng.int(0, dgrow[0]),
            rng.int(0, dgrow[1]),
            rng.int(0, dgrow[2]),
        );
        let op = if rng.coin() {
            CopyOp::Copy
        } else {
            CopyOp::Add
        };
        let per = if rng.coin() {
            period
        } else {
            Periodicity::non_periodic()
        };
        dst_d
            .parallel_copy_with(&src_d, scomp, src_ng, per, op, dcomp..dcomp + nc, dst_ng)
            .unwrap();
        dst_s
            .parallel_copy_with(&src_s, scomp, src_ng, per, op, dcomp..dcomp + nc, dst_ng)
            .unwrap();
        assert_same(
            &format!("parallel_copy case {case} ({op:?})"),
            &dst_d,
            &dst_s,
        );
    }
}

fn sum_boundary_random(c: &Communicator) {
    let mut rng = Rng(41);
    for case in 0..12 {
        let (ba, period) = random_layout(&mut rng);
        let dm = random_map(&mut rng, &ba, c);
        let ncomp = rng.int(1, 2) as usize;
        let ngrow = rng.iv(0, 2);
        let (mut d, mut s) = pair(&ba, &dm, ncomp, ngrow, 700 + case);
        d.sum_boundary(period).unwrap();
        s.sum_boundary(period).unwrap();
        assert_same(&format!("sum_boundary case {case}"), &d, &s);
    }
    // Deposition: every cell of a periodic domain gets 1 in each box that covers it
    // (valid or ghost); after sum_boundary each valid cell holds its coverage count.
    let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(9));
    let ba = BoxArray::from_domain(domain, 5);
    let dm = DistributionMapping::on(&ba, c);
    let mut mf = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
    mf.fill(1.0).unwrap();
    mf.sum_boundary(Periodicity::all(domain)).unwrap();
    // A cell at distance 0 from a box face in d directions is covered by 2^d boxes.
    for mfi in mf.mfiter(Tiling::None) {
        let (vb, a) = (mfi.validbox(), mf.array(&mfi));
        amrex_array4::for_each_cell(vb, |i, j, k| {
            let p = [i, j, k];
            let faces = (0..3)
                .filter(|&d| p[d] == vb.lo()[d] || p[d] == vb.hi()[d])
                .count();
            assert_eq!(a[(i, j, k, 0)], f64::from(1 << faces), "cell ({i},{j},{k})");
        });
    }
}

fn reductions(c: &Communicator) {
    let mut rng = Rng(53);
    for case in 0..8 {
        let (ba, _) = random_layout(&mut rng);
        let dm = random_map(&mut rng, &ba, c);
        let ngrow = rng.iv(0, 2);
        let (d, s) = pair(&ba, &dm, 2, ngrow, 900 + case);
        let (y, ys) = pair(&ba, &dm, 2, ngrow, 950 + case);
        let ng = IntVect::new(
            rng.int(0, ngrow[0]),
            rng.int(0, ngrow[1]),
            rng.int(0, ngrow[2]),
        );
        let bits = |x: f64| x.to_bits();
        let check = |what: &str, a: f64, b: f64| {
            assert_eq!(
                bits(a),
                bits(b),
                "{what} case {case}: {a} distributed, {b} in one process"
            );
        };
        check("sum", d.sum(.., ng).unwrap(), s.sum(.., ng).unwrap());
        check(
            "norm1",
            d.norm1(1..2, ng).unwrap(),
            s.norm1(1..2, ng).unwrap(),
        );
        check("norm2", d.norm2(.., ng).unwrap(), s.norm2(.., ng).unwrap());
        check(
            "norm0",
            d.norm0(0..1, ng).unwrap(),
            s.norm0(0..1, ng).unwrap(),
        );
        check("min", d.min(.., ng).unwrap(), s.min(.., ng).unwrap());
        check("max", d.max(.., ng).unwrap(), s.max(.., ng).unwrap());
        check(
            "dot",
            d.dot(&y, 1, 0..1, ng).unwrap(),
            s.dot(&ys, 1, 0..1, ng).unwrap(),
        );
        // The fast mode agrees to rounding.
        let mut f = d;
        f.set_reduction(Reduction::Fast);
        let (a, b) = (f.sum(.., ng).unwrap(), s.sum(.., ng).unwrap());
        assert!(
            (a - b).abs() <= 1e-9 * b.abs().max(1.0),
            "fast sum {a} vs {b}"
        );
        assert_eq!(f.max(.., ng).unwrap(), s.max(.., ng).unwrap());
    }
}

/// Rank 0 builds a different BoxArray (or map) than the others: every rank gets the
/// error, and every rank goes on (the barrier after each check proves nobody hangs).
fn mismatches_are_errors_on_every_rank(c: &Communicator) {
    let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(15));
    let mine = if c.rank() == 0 { 8 } else { 4 };
    let ba = BoxArray::from_domain(domain, mine);
    let dm = DistributionMapping::on(&ba, c);
    let mut mf = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
    let period = Periodicity::all(domain);
    let fb = mf.fill_boundary(period);
    let sum = mf.sum(.., 0);
    let other_ba = BoxArray::from_domain(domain, 8);
    let other = MultiFab::new(
        &other_ba,
        &DistributionMapping::on(&other_ba, c),
        1,
        IntVect::ZERO,
    );
    let pc = mf.parallel_copy(&other, period);
    if c.size() == 1 {
        fb.unwrap();
        sum.unwrap();
        pc.unwrap();
    } else {
        for (what, r) in [
            ("fill_boundary", fb),
            ("sum", sum.map(drop)),
            ("parallel_copy", pc),
        ] {
            match r {
                Err(FabArrayError::RanksDisagree { op }) => assert!(
                    what.starts_with(op) || op == "reduction",
                    "{what}: the error names {op}"
                ),
                other => panic!(
                    "{what} on rank {}: expected a mismatch error, got {other:?}",
                    c.rank()
                ),
            }
        }
    }
    // Arguments that only rank 0 gets wrong: rank 0 refuses them, every other rank
    // learns of it, and none waits for rank 0.
    let ba = BoxArray::from_domain(domain, 8);
    let dm = DistributionMapping::on(&ba, c);
    let mut mf = MultiFab::new(&ba, &dm, 2, IntVect::splat(1));
    let bad = if c.rank() == 0 { 1..3 } else { 0..1 };
    let results = [
        (
            "fill_boundary",
            mf.fill_boundary_with(period, FillPattern::Full, bad.clone(), 1),
        ),
        ("sum", mf.sum(bad.clone(), 0).map(drop)),
        ("read_region", mf.read_region(bad.clone(), domain).map(drop)),
        ("sum_boundary", mf.sum_boundary_with(period, bad.clone(), 1)),
    ];
    for (what, r) in results {
        match (c.rank(), r) {
            (0, Err(FabArrayError::Fab(FabError::ComponentsOutside { .. }))) => {}
            (
                _,
                Err(FabArrayError::RanksDisagree { .. } | FabArrayError::RefusedOnOtherRank { .. }),
            ) if c.size() > 1 => {}
            (r, Ok(())) if r > 0 && c.size() == 1 => {}
            (r, other) => panic!("{what} on rank {r} of {}: {other:?}", c.size()),
        }
    }
    // Different reductions on rank 0 and the others.
    let r = if c.rank() == 0 {
        mf.sum(0..1, 0)
    } else {
        mf.max(0..1, 0)
    };
    assert_eq!(r.is_err(), c.size() > 1, "sum against max: {r:?}");
    // Same BoxArray, a different map on rank 0.
    let ba = BoxArray::from_domain(domain, 8);
    let pmap: Vec<u32> = (0..ba.len())
        .map(|b| u32::try_from((b + usize::from(c.rank() == 0)) % c.size()).unwrap())
        .collect();
    let dm = DistributionMapping::from_pmap_on(pmap, c);
    let mut mf = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
    let r = mf.fill_boundary(period);
    assert_eq!(r.is_err(), c.size() > 1, "map mismatch: {r:?}");
}

type Check = (&'static str, fn(&Communicator));

fn main() {
    let parallel = amrex_runtime::init().expect("MPI initialises");
    let c = parallel.communicator().clone();
    assert_eq!(Communicator::current(), c);
    let checks: &[Check] = &[
        ("fill_boundary_random", fill_boundary_random),
        ("periodic_faces_edges_corners", periodic_faces_edges_corners),
        ("fill_boundary_nodal", fill_boundary_nodal),
        ("fill_boundary_split_phase", fill_boundary_split_phase),
        ("two_in_flight", two_in_flight),
        ("parallel_copy_random", parallel_copy_random),
        ("sum_boundary_random", sum_boundary_random),
        ("reductions", reductions),
        (
            "mismatches_are_errors_on_every_rank",
            mismatches_are_errors_on_every_rank,
        ),
    ];
    for (name, check) in checks {
        check(&c);
        c.barrier().unwrap();
        if c.rank() == 0 {
            println!("ok {name} ({} ranks)", c.size());
        }
    }
    if c.rank() == 0 {
        println!(
            "mpi_multifab on {} ranks: {} passed, 0 failed",
            c.size(),
            checks.len()
        );
    }
    drop(c);
    drop(parallel);
}
