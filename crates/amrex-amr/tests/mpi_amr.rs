//! The AMR level operations under `mpirun`: `average_down` (ratios 2, 4 and (2, 4, 1),
//! component subranges), `average_down_geom` in RZ, `average_down_faces`,
//! `average_down_nodal`, `sum_fine_to_coarse` across periodic boundaries,
//! `fill_physical_boundary` with every `BCType`, a subcycled `FluxRegister` cycle, its
//! `crse_add`, `overwrite_flux` and `clear_internal_borders`, FillPatch and
//! `interp_from_coarse_level`, each on coarse and fine BoxArrays spread over the ranks by
//! different maps (fine boxes straddling coarse ones), compared bit for bit with the same
//! computation on maps that keep every box on this process; a `TagBoxArray`'s buffer,
//! periodic fold and collate against the same tags computed serially; and ranks that pass
//! mismatched arguments, which must all get an error instead of hanging.
//!
//! Run by `scripts/test-mpi.sh` under `mpirun -n 1`, `-n 2` and `-n 4`
//! (`cargo test -p amrex-amr --features mpi --test mpi_amr` runs it on one rank).
//! `harness = false`: libtest would run the checks on threads in an order of its
//! choosing on each rank, and the collectives inside them would then be entered in
//! different orders. So this is a plain `main` running named checks one after the other,
//! the same list in the same order on every rank, with a barrier after each; a failed
//! check panics, and the panic hook `Communicator::world` installs aborts every rank.
//!
//! Given check names as arguments, it runs those instead of the default list.
#![warn(clippy::cast_possible_truncation)]

use amrex_amr::Comps;
use amrex_amr::TagBoxArray;
use amrex_amr::boundary::{BCRec, BCType, PhysBcFunct, fill_physical_boundary};
use amrex_amr::fill_patch::{
    Source, fill_patch_single_level, fill_patch_two_levels, interp_from_coarse_level,
};
use amrex_amr::flux_register::Side;
use amrex_amr::{
    AmrError, AmrErrorKind, CellBilinear, CellConsLinear, FluxRegister, PcInterp, average_down,
    average_down_faces, average_down_geom, average_down_nodal, sum_fine_to_coarse,
};
use amrex_geometry::{CoordSys, Geometry, RealBox};
use amrex_multifab::{
    BoxArray, CopyOp, DistributionMapping, FabArrayError, IndexBox, IndexType, IntVect, MultiFab,
    Strategy, Tiling,
};
use amrex_runtime::{Communicator, ReduceOp};

// ----- deterministic data and layouts -------------------------------------------------

/// splitmix64's mixing step.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// splitmix64, seeded the same on every rank: every rank draws the same cases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// Uniform in `lo..=hi`.
    fn int(&mut self, lo: i32, hi: i32) -> i32 {
        lo + i32::try_from(self.next() % (hi - lo + 1) as u64).unwrap()
    }

    fn iv(&mut self, lo: i32, hi: i32) -> IntVect {
        IntVect::new(self.int(lo, hi), self.int(lo, hi), self.int(lo, hi))
    }
}

/// A value in `[-1, 1)` for a point, a component and a salt: a field of the index alone,
/// so the fabs of two boxes agree where they overlap.
fn value(p: IntVect, n: usize, salt: u64) -> f64 {
    let mut h = mix(salt);
    for x in [p[0], p[1], p[2]] {
        h = mix(h ^ i64::from(x) as u64);
    }
    h = mix(h ^ n as u64);
    (h >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// Every element of every local fab of `mf` (ghost cells too) becomes `value(p, n, salt)`.
fn fill(mf: &mut MultiFab, salt: u64) {
    let typ = mf.box_array().ix_type();
    for l in 0..mf.local_size() {
        let fb = mf.fabbox(mf.global_index(l));
        let bx = IndexBox::with_type(fb.lo(), fb.hi(), typ);
        mf.array_mut_at(l).for_each_mut(bx, |i, j, k, n, v| {
            *v = value(IntVect::new(i, j, k), n, salt)
        });
    }
}

/// How a scenario maps a BoxArray onto ranks; the `u64` seeds the choice.
type Mapper<'a> = &'a dyn Fn(&BoxArray, u64) -> DistributionMapping;

/// A map of `ba` onto `comm`'s ranks drawn from `seed`: one of the three strategies or a
/// random pmap.
fn random_map(seed: u64, ba: &BoxArray, comm: &Communicator) -> DistributionMapping {
    let mut rng = Rng(seed);
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

/// A coarse level over `cdom` in boxes of 4 x 8 x 8, and a fine one refined by `ratio`:
/// a random block of coarse cells inside `region_in` (trimmed by up to 2 cells a side),
/// cut into blocks of 2 to 5 cells per direction (so its boxes straddle the coarse
/// boxes' faces), one block dropped half the time, then refined. Panics if no fine box
/// straddles a coarse face (the layouts would not test what they claim).
fn levels(
    rng: &mut Rng,
    cdom: IndexBox,
    region_in: IndexBox,
    ratio: IntVect,
) -> (BoxArray, BoxArray) {
    let cba = BoxArray::from_domain_iv(cdom, IntVect::new(4, 8, 8));
    let room = region_in.length();
    let mut lo = region_in.lo();
    let mut hi = region_in.hi();
    for d in 0..3 {
        if room[d] > 6 {
            lo[d] += rng.int(0, 2);
            hi[d] -= rng.int(0, 2);
        }
    }
    let region = IndexBox::new(lo, hi);
    let mut boxes = BoxArray::from_domain_iv(region, rng.iv(2, 5))
        .boxes()
        .to_vec();
    if boxes.len() > 3 && rng.int(0, 1) == 0 {
        boxes.remove(rng.int(0, i32::try_from(boxes.len()).unwrap() - 1) as usize);
    }
    let coarse_fine = BoxArray::new(boxes);
    let straddles = coarse_fine
        .boxes()
        .iter()
        .any(|b| !cba.boxes().iter().any(|c| c.contains_box(b)));
    assert!(straddles, "no fine box straddles a coarse box in {region}");
    (cba, coarse_fine.refine(ratio))
}

/// The unit cube over `cdom`, Cartesian, periodic where asked.
fn cartesian(cdom: IndexBox, periodic: [bool; 3]) -> Geometry {
    let rb = RealBox::new([0.0; 3], [1.0, 2.0, 0.5]).expect("real box");
    Geometry::new(cdom, rb, CoordSys::Cartesian, periodic).expect("geometry")
}

fn faces(dir: usize) -> IndexType {
    IndexType::CELL.with_node(dir)
}

// ----- comparing a distributed run with one process -----------------------------------

/// Every element of every local fab of `dist` equals, bit for bit, that of the same box
/// of `single` (which holds every box).
fn assert_same(what: &str, dist: &MultiFab, single: &MultiFab) {
    assert_eq!(dist.box_array(), single.box_array(), "{what}: BoxArrays");
    for l in 0..dist.local_size() {
        let g = dist.global_index(l);
        let s = single
            .local_index(g)
            .expect("the single-process MultiFab holds every box");
        let (a, b) = (
            dist.fab(l).as_slice().expect("host fab"),
            single.fab(s).as_slice().expect("host fab"),
        );
        assert_eq!(a.len(), b.len(), "{what}: box {g} sizes");
        if let Some(i) = (0..a.len()).find(|&i| a[i].to_bits() != b[i].to_bits()) {
            panic!(
                "{what}: box {g} ({}) on rank {}: element {i} is {} distributed but {} in one process",
                dist.box_of(g),
                dist.communicator().rank(),
                a[i],
                b[i]
            );
        }
    }
}

/// Runs `scenario` twice, its BoxArrays mapped over `c`'s ranks and then all on this
/// process, and compares every MultiFab it returns bit for bit. Asserts that the
/// distributed run really spread some BoxArray over several ranks when there are.
fn compare(what: &str, c: &Communicator, scenario: impl Fn(Mapper<'_>) -> Vec<(String, MultiFab)>) {
    let spread = core::cell::Cell::new(false);
    let dist = |ba: &BoxArray, seed: u64| {
        let dm = random_map(seed, ba, c);
        let mut ranks: Vec<usize> = (0..ba.len()).map(|b| dm.rank_of(b)).collect();
        ranks.dedup();
        if ranks.len() > 1 {
            spread.set(true);
        }
        dm
    };
    let single = |ba: &BoxArray, _: u64| DistributionMapping::single(ba);
    let d = scenario(&dist);
    let s = scenario(&single);
    assert_eq!(d.len(), s.len());
    for ((name, a), (_, b)) in d.iter().zip(&s) {
        assert_same(&format!("{what}: {name}"), a, b);
    }
    assert!(
        c.size() == 1 || spread.get(),
        "{what}: every BoxArray landed on one rank"
    );
}

/// The values of components `comps` over `region` on every rank (collective).
fn read(mf: &MultiFab, comps: core::ops::Range<usize>, region: IndexBox) -> Vec<f64> {
    mf.read_region(comps, region).expect("read_region")
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * a.abs().max(b.abs()).max(1.0)
}

// ----- the averages ---------------------------------------------------------------------

fn average_down_ratios_and_components(c: &Communicator) {
    let cdom = IndexBox::new(IntVect::ZERO, IntVect::splat(15));
    for (case, ratio) in [IntVect::splat(2), IntVect::splat(4), IntVect::new(2, 4, 1)]
        .into_iter()
        .enumerate()
    {
        let mut rng = Rng(100 + case as u64);
        let inner = IndexBox::new(IntVect::splat(2), IntVect::splat(12));
        let (cba, fba) = levels(&mut rng, cdom, inner, ratio);
        let seed = 1000 * case as u64;
        for (scomp, ncomp) in [(0, 3), (1, 2), (2, 1)] {
            compare(
                &format!(
                    "average_down ratio {ratio} comps {scomp}..{}",
                    scomp + ncomp
                ),
                c,
                |map| {
                    let mut fine = MultiFab::new(&fba, &map(&fba, seed + 1), 3, IntVect::splat(1));
                    fill(&mut fine, seed + 2);
                    let mut crse = MultiFab::new(&cba, &map(&cba, seed + 3), 3, IntVect::splat(1));
                    fill(&mut crse, seed + 4);
                    average_down(&fine, &mut crse, scomp..scomp + ncomp, ratio)
                        .expect("average_down");
                    // A coarse cell under the fine level holds the mean of its fine cells.
                    let cell = fba.coarsen(ratio).get(0).lo();
                    let fcells = IndexBox::new(cell, cell).refine_iv(ratio);
                    let f = read(&fine, scomp..scomp + 1, fcells);
                    let mean = f.iter().sum::<f64>() / f.len() as f64;
                    let got = read(&crse, scomp..scomp + 1, IndexBox::new(cell, cell))[0];
                    assert!(close(got, mean, 1e-13), "mean at {cell}: {got} vs {mean}");
                    // The direct path: the coarse data on the coarsened fine layout.
                    let cfba = fba.coarsen(ratio);
                    let mut direct =
                        MultiFab::new(&cfba, fine.distribution_map(), 3, IntVect::ZERO);
                    fill(&mut direct, seed + 5);
                    average_down(&fine, &mut direct, scomp..scomp + ncomp, ratio)
                        .expect("average_down (direct)");
                    vec![("crse".into(), crse), ("direct".into(), direct)]
                },
            );
        }
    }
}

fn average_down_geom_rz(c: &Communicator) {
    let cdom = IndexBox::new(IntVect::ZERO, IntVect::new(15, 15, 0));
    let rb = RealBox::new([0.0; 3], [1.0, 2.0, 1.0]).expect("real box");
    let cgeom = Geometry::new(cdom, rb, CoordSys::Rz, [false; 3]).expect("RZ geometry");
    for (case, ratio) in [IntVect::new(2, 2, 1), IntVect::new(4, 2, 1)]
        .into_iter()
        .enumerate()
    {
        let fgeom = cgeom.refine(ratio).expect("fine geometry");
        let mut rng = Rng(200 + case as u64);
        // The fine level reaches the axis (r = 0), where the volumes differ most.
        let inner = IndexBox::new(IntVect::ZERO, IntVect::new(11, 13, 0));
        let (cba, fba) = levels(&mut rng, cdom, inner, ratio);
        let seed = 2000 + 100 * case as u64;
        compare(&format!("average_down_geom RZ ratio {ratio}"), c, |map| {
            let mut fine = MultiFab::new(&fba, &map(&fba, seed + 1), 2, IntVect::ZERO);
            fill(&mut fine, seed + 2);
            let mut crse = MultiFab::new(&cba, &map(&cba, seed + 3), 2, IntVect::ZERO);
            fill(&mut crse, seed + 4);
            average_down_geom(&fine, &mut crse, &fgeom, &cgeom, 1..2, ratio)
                .expect("average_down_geom");
            vec![("crse".into(), crse)]
        });
    }
}

fn average_down_faces_every_direction(c: &Communicator) {
    let cdom = IndexBox::new(IntVect::ZERO, IntVect::splat(15));
    for (case, ratio) in [IntVect::splat(2), IntVect::new(2, 4, 1)]
        .into_iter()
        .enumerate()
    {
        let mut rng = Rng(300 + case as u64);
        let inner = IndexBox::new(IntVect::splat(1), IntVect::splat(13));
        let (cba, fba) = levels(&mut rng, cdom, inner, ratio);
        for dir in 0..3 {
            let seed = 3000 + 100 * case as u64 + 10 * dir as u64;
            let (cf, ff) = (cba.convert(faces(dir)), fba.convert(faces(dir)));
            compare(
                &format!("average_down_faces ratio {ratio} dir {dir}"),
                c,
                |map| {
                    let mut fine = MultiFab::new(&ff, &map(&ff, seed + 1), 2, ratio);
                    fill(&mut fine, seed + 2);
                    let mut crse = MultiFab::new(&cf, &map(&cf, seed + 3), 2, IntVect::splat(1));
                    fill(&mut crse, seed + 4);
                    average_down_faces(&fine, &mut crse, ratio, 1).expect("average_down_faces");
                    vec![("crse".into(), crse)]
                },
            );
        }
    }
}

fn average_down_nodal_with_ghosts(c: &Communicator) {
    let cdom = IndexBox::new(IntVect::ZERO, IntVect::splat(15));
    for (case, ratio) in [IntVect::splat(2), IntVect::new(4, 2, 2)]
        .into_iter()
        .enumerate()
    {
        let mut rng = Rng(400 + case as u64);
        let inner = IndexBox::new(IntVect::splat(1), IntVect::splat(13));
        let (cba, fba) = levels(&mut rng, cdom, inner, ratio);
        let (cn, fnd) = (cba.convert(IndexType::NODE), fba.convert(IndexType::NODE));
        let seed = 4000 + 100 * case as u64;
        compare(&format!("average_down_nodal ratio {ratio}"), c, |map| {
            let mut fine = MultiFab::new(&fnd, &map(&fnd, seed + 1), 1, ratio);
            fill(&mut fine, seed + 2);
            let mut crse = MultiFab::new(&cn, &map(&cn, seed + 3), 1, IntVect::splat(1));
            fill(&mut crse, seed + 4);
            average_down_nodal(&fine, &mut crse, ratio, 1).expect("average_down_nodal");
            // Nodal average_down injects too, onto valid nodes only.
            let mut inj = MultiFab::new(&cn, &map(&cn, seed + 5), 1, IntVect::ZERO);
            fill(&mut inj, seed + 6);
            average_down(&fine, &mut inj, 0..1, ratio).expect("average_down (nodal)");
            vec![("crse".into(), crse), ("injected".into(), inj)]
        });
    }
}

fn sum_fine_to_coarse_periodic(c: &Communicator) {
    let cdom = IndexBox::new(IntVect::ZERO, IntVect::splat(15));
    let cgeom = cartesian(cdom, [true, true, false]);
    for (case, ratio) in [IntVect::splat(2), IntVect::splat(4)]
        .into_iter()
        .enumerate()
    {
        // Against the low x face and the high y face, so the grown boxes wrap around;
        // boxes of 3 in x against coarse boxes of 4.
        let inner = IndexBox::new(IntVect::new(0, 6, 3), IntVect::new(8, 15, 12));
        let cba = BoxArray::from_domain_iv(cdom, IntVect::new(4, 8, 8));
        let fba = BoxArray::from_domain_iv(inner, IntVect::new(3, 4, 5)).refine(ratio);
        let seed = 5000 + 100 * case as u64;
        compare(
            &format!("sum_fine_to_coarse periodic ratio {ratio}"),
            c,
            |map| {
                let mut fine = MultiFab::new(&fba, &map(&fba, seed + 1), 2, ratio * 2);
                fill(&mut fine, seed + 2);
                let mut crse = MultiFab::new(&cba, &map(&cba, seed + 3), 2, IntVect::ZERO);
                fill(&mut crse, seed + 4);
                // The coarse cells at the high x face, across the periodic boundary from the
                // fine level's ghost cells.
                let far = IndexBox::new(IntVect::new(15, 8, 4), IntVect::new(15, 12, 10));
                let before = read(&crse, 0..2, far);
                sum_fine_to_coarse(&fine, &mut crse, 0..2, ratio, &cgeom)
                    .expect("sum_fine_to_coarse");
                let after = read(&crse, 0..2, far);
                assert!(
                    before.iter().zip(&after).all(|(b, a)| b != a),
                    "the periodic images added into every cell across the x face"
                );
                vec![("crse".into(), crse)]
            },
        );
    }
}

// ----- physical boundaries ----------------------------------------------------------------

/// `ext_dir` values: a function of position, time and component.
fn ext(x: [f64; 3], t: f64, n: usize) -> f64 {
    1.0 + x[0] - 2.0 * x[1] + 3.0 * x[2] + 0.25 * t + n as f64
}

type Ext = fn([f64; 3], f64, usize) -> f64;

/// One record per component, `BCType::ALL` rotated so that every type sits on every
/// face of some component, and faces of one component differ.
fn every_bc(ncomp: usize) -> Vec<BCRec> {
    let all = BCType::ALL;
    (0..ncomp)
        .map(|n| {
            BCRec::new(
                core::array::from_fn(|d| all[(n + 2 * d) % all.len()]),
                core::array::from_fn(|d| all[(n + 2 * d + 3) % all.len()]),
            )
        })
        .collect()
}

fn fill_physical_boundary_every_bc_type(c: &Communicator) {
    let dom = IndexBox::new(IntVect::ZERO, IntVect::new(11, 9, 7));
    let ncomp = BCType::ALL.len();
    let recs = every_bc(ncomp);
    for (case, periodic) in [[false; 3], [false, true, false]].into_iter().enumerate() {
        let geom = cartesian(dom, periodic);
        for typ in [IndexType::CELL, IndexType::NODE] {
            let ba = BoxArray::from_domain_iv(dom, IntVect::new(4, 5, 3)).convert(typ);
            let seed = 6000 + 100 * case as u64 + u64::from(typ.node_centered());
            compare(
                &format!("fill_physical_boundary periodic {periodic:?} {typ:?}"),
                c,
                |map| {
                    let mut mf =
                        MultiFab::new(&ba, &map(&ba, seed + 1), ncomp, IntVect::new(3, 2, 2));
                    fill(&mut mf, seed + 2);
                    mf.fill_boundary(geom.periodicity()).expect("fill_boundary");
                    fill_physical_boundary(&mut mf, &geom, &recs, .., 0.5, ext as Ext)
                        .expect("fill_physical_boundary");
                    if typ.cell_centered() {
                        // The component that is reflect_odd on the low x face: its
                        // first ghost cell is minus the boundary cell.
                        let n = (0..ncomp)
                            .find(|&n| recs[n].lo(0) == BCType::ReflectOdd)
                            .expect("every type on every face");
                        let (p, q) = (IntVect::new(0, 4, 3), IntVect::new(-1, 4, 3));
                        let inside = read(&mf, n..n + 1, IndexBox::new(p, p))[0];
                        assert_ne!(inside, 0.0);
                        assert_eq!(read(&mf, n..n + 1, IndexBox::new(q, q))[0], -inside);
                    }
                    vec![("mf".into(), mf)]
                },
            );
        }
    }
}

// ----- the flux register ------------------------------------------------------------------

/// The area of a face normal to `dir`.
fn area(g: &Geometry, dir: usize) -> f64 {
    let dx = g.cell_size();
    (0..3).filter(|&d| d != dir).map(|d| dx[d]).product()
}

/// A flux on the faces of `ba` normal to `dir`, a function of the face's index modulo
/// the domain in the periodic directions (faces shared by boxes or images agree).
fn face_flux(
    ba: &BoxArray,
    dm: &DistributionMapping,
    dir: usize,
    g: &Geometry,
    seed: u64,
) -> MultiFab {
    let fb = ba.convert(faces(dir));
    let mut mf = MultiFab::new(&fb, dm, 1, IntVect::ZERO);
    let (lo, len) = (g.domain().lo(), g.domain().length());
    mf.par_for_each_tile(Tiling::None, IntVect::ZERO, |mut t| {
        let bx = t.region();
        t.array_mut().for_each_mut(bx, |i, j, k, _, v| {
            let wrap = |d: usize, x: i32| {
                if g.is_periodic(d) {
                    (x - lo[d]).rem_euclid(len[d])
                } else {
                    x - lo[d]
                }
            };
            *v = value(IntVect::new(wrap(0, i), wrap(1, j), wrap(2, k)), dir, seed);
        });
    });
    mf
}

/// `u -= dt Σ_d (F_d(c + e_d) - F_d(c)) / dx_d` on every valid cell (the fluxes on the
/// state's BoxArray and map).
fn update(u: &mut MultiFab, fluxes: &[MultiFab; 3], dt: f64, g: &Geometry) {
    let inv = g.inv_cell_size();
    u.par_for_each_tile(Tiling::None, IntVect::ZERO, |mut t| {
        let bx = t.region();
        let f: Vec<_> = fluxes.iter().map(|f| f.array(t.mfi())).collect();
        let mut a = t.array_mut();
        for p in bx {
            let mut div = 0.0;
            for d in 0..3 {
                let e = p + IntVect::basis(d);
                div += (f[d][(e, 0)] - f[d][(p, 0)]) * inv[d];
            }
            a[(p, 0)] -= dt * div;
        }
    });
}

/// `Σ u V` over the coarse cells outside `covered` and every fine cell, over every rank,
/// and `Σ |u V|` (the scale of the round-off).
fn mass(
    crse: &MultiFab,
    fine: &MultiFab,
    covered: &BoxArray,
    cg: &Geometry,
    fg: &Geometry,
) -> (f64, f64) {
    let (mut sum, mut abs) = (0.0, 0.0);
    let mut add = |m: f64| {
        sum += m;
        abs += m.abs();
    };
    for l in 0..crse.local_size() {
        let a = crse.array_at(l);
        for p in crse.box_of(crse.global_index(l)) {
            if !covered.contains(p) {
                add(a[(p, 0)] * cg.volume(p));
            }
        }
    }
    for l in 0..fine.local_size() {
        let a = fine.array_at(l);
        for p in fine.box_of(fine.global_index(l)) {
            add(a[(p, 0)] * fg.volume(p));
        }
    }
    let comm = crse.communicator();
    (
        comm.all_reduce_f64(sum, ReduceOp::Sum).unwrap(),
        comm.all_reduce_f64(abs, ReduceOp::Sum).unwrap(),
    )
}

/// A copy of `mf` on its own layout (the registers are borrowed from the register).
fn copy_of(mf: &MultiFab) -> MultiFab {
    let mut out = MultiFab::new(
        mf.box_array(),
        mf.distribution_map(),
        mf.ncomp(),
        mf.n_grow(),
    );
    out.copy_from(mf, 0, .., mf.n_grow()).expect("copy");
    out
}

fn flux_register_subcycled_cycle(c: &Communicator) {
    let cdom = IndexBox::new(IntVect::ZERO, IntVect::splat(15));
    let cg = cartesian(cdom, [true; 3]);
    for (case, ratio) in [IntVect::splat(2), IntVect::splat(4), IntVect::new(2, 2, 1)]
        .into_iter()
        .enumerate()
    {
        let fg = cg.refine(ratio).expect("fine geometry");
        let mut rng = Rng(700 + case as u64);
        let inner = IndexBox::new(IntVect::splat(2), IntVect::splat(12));
        let (cba, fba) = levels(&mut rng, cdom, inner, ratio);
        let covered = fba.coarsen(ratio);
        let seed = 7000 + 100 * case as u64;
        compare(
            &format!("FluxRegister ratio {ratio}, two fine steps"),
            c,
            |map| {
                let (cdm, fdm) = (map(&cba, seed + 1), map(&fba, seed + 2));
                let dt = 0.01;
                let mut uc = MultiFab::new(&cba, &cdm, 1, IntVect::ZERO);
                fill(&mut uc, seed + 3);
                let mut uf = MultiFab::new(&fba, &fdm, 1, IntVect::ZERO);
                fill(&mut uf, seed + 4);
                let start = mass(&uc, &uf, &covered, &cg, &fg);
                let mut fr = FluxRegister::new(&fba, &fdm, ratio, 1, 1).expect("FluxRegister::new");
                let cflux: [MultiFab; 3] =
                    core::array::from_fn(|d| face_flux(&cba, &cdm, d, &cg, seed + 5));
                update(&mut uc, &cflux, dt, &cg);
                for (d, f) in cflux.iter().enumerate() {
                    fr.crse_init(f, d, Comps::first(1), -dt * area(&cg, d), CopyOp::Copy)
                        .expect("crse_init");
                }
                for step in 0..2 {
                    let fflux: [MultiFab; 3] =
                        core::array::from_fn(|d| face_flux(&fba, &fdm, d, &fg, seed + 10 + step));
                    update(&mut uf, &fflux, 0.5 * dt, &fg);
                    for (d, f) in fflux.iter().enumerate() {
                        fr.fine_add(f, d, Comps::first(1), 0.5 * dt * area(&fg, d))
                            .expect("fine_add");
                    }
                }
                let (leaky, scale) = mass(&uc, &uf, &covered, &cg, &fg);
                assert!(
                    (leaky - start.0).abs() > 1e-6 * scale,
                    "without reflux the interface leaks: {leaky:e} against {:e}",
                    start.0
                );
                fr.reflux(&mut uc, 1.0, Comps::first(1), &cg)
                    .expect("reflux");
                let (m, scale) = mass(&uc, &uf, &covered, &cg, &fg);
                assert!(
                    (m - start.0).abs() <= 1e-12 * scale,
                    "ratio {ratio}: total {m:e} after reflux, {:e} before the step (scale {scale:e})",
                    start.0
                );
                let mut out = vec![("coarse state".into(), uc), ("fine state".into(), uf)];
                out.extend(registers(&fr));
                out
            },
        );
    }
}

/// The layouts of the register checks for `ratio`: the random ones of [`levels`], and a
/// fine level against the low x face and over the whole periodic z extent, so some of
/// its faces meet a periodic image (of a coarse face, or of another fine box's face).
fn flux_levels(rng: &mut Rng, cdom: IndexBox, ratio: IntVect) -> [(BoxArray, BoxArray); 2] {
    let inner = IndexBox::new(IntVect::splat(2), IntVect::splat(12));
    let (cba, random) = levels(rng, cdom, inner, ratio);
    let band = IndexBox::new(IntVect::new(0, 3, 0), IntVect::new(6, 10, 15));
    let fba = BoxArray::from_domain_iv(band, IntVect::new(3, 4, 5)).refine(ratio);
    [(cba.clone(), random), (cba, fba)]
}

/// The six registers of `fr`, copied, named.
fn registers(fr: &FluxRegister) -> Vec<(String, MultiFab)> {
    let mut out = Vec::new();
    for d in 0..3 {
        for s in Side::BOTH {
            out.push((format!("register {d} {s:?}"), copy_of(fr.register(d, s))));
        }
    }
    out
}

/// How many elements of `a` and `b` (the same layout) differ, over every rank.
fn count_changed(a: &MultiFab, b: &MultiFab) -> u64 {
    let mut n = 0;
    for l in 0..a.local_size() {
        let (x, y) = (
            a.fab(l).as_slice().expect("host fab"),
            b.fab(l).as_slice().expect("host fab"),
        );
        n += x
            .iter()
            .zip(y)
            .filter(|(x, y)| x.to_bits() != y.to_bits())
            .count() as u64;
    }
    a.communicator().all_reduce_u64(n, ReduceOp::Sum).unwrap()
}

/// `crse_init` (copy) of one coarse flux, then `crse_add` of another on top with
/// periodic images: every register face takes each coarse face once, whichever rank
/// holds the coarse box (or the image) it comes from.
fn flux_register_crse_add(c: &Communicator) {
    let cdom = IndexBox::new(IntVect::ZERO, IntVect::splat(15));
    for (case, ratio) in [IntVect::splat(2), IntVect::new(2, 4, 1)]
        .into_iter()
        .enumerate()
    {
        let mut rng = Rng(1100 + case as u64);
        for (lay, (cba, fba)) in flux_levels(&mut rng, cdom, ratio).into_iter().enumerate() {
            let cg = cartesian(cdom, [true, lay == 0, true]);
            let seed = 11_000 + 100 * case as u64 + 10 * lay as u64;
            compare(
                &format!("FluxRegister::crse_add ratio {ratio} layout {lay}"),
                c,
                |map| {
                    let (cdm, fdm) = (map(&cba, seed + 1), map(&fba, seed + 2));
                    let mut fr =
                        FluxRegister::new(&fba, &fdm, ratio, 1, 2).expect("FluxRegister::new");
                    for d in 0..3 {
                        let f = face_flux(&cba, &cdm, d, &cg, seed + 3);
                        fr.crse_init(&f, d, Comps::new(0, 1, 1), -0.5, CopyOp::Copy)
                            .expect("crse_init");
                        let g = face_flux(&cba, &cdm, d, &cg, seed + 4);
                        fr.crse_add(&g, d, Comps::new(0, 1, 1), 2.0, &cg)
                            .expect("crse_add");
                        fr.crse_add(&g, d, Comps::first(1), -1.0, &cg)
                            .expect("crse_add");
                    }
                    // Component 0 of a register face is -g there, taken once: check one
                    // low-x face against the flux itself.
                    let face = fr.register(0, Side::Lo).box_of(0).lo();
                    let g = face_flux(&cba, &cdm, 0, &cg, seed + 4);
                    let cell = IndexBox::with_type(face, face, faces(0));
                    let want = read(&g, 0..1, cell)[0];
                    let got = read(fr.register(0, Side::Lo), 0..1, cell)[0];
                    assert_eq!(got, -want, "crse_add at {face}");
                    registers(&fr)
                },
            );
        }
    }
}

/// `set_val(0)`, two `fine_add` steps, then `overwrite_flux` into coarse fluxes on the
/// coarse layout, on a periodic domain and on one with walls (whose faces it leaves).
fn flux_register_overwrite_flux(c: &Communicator) {
    let cdom = IndexBox::new(IntVect::ZERO, IntVect::splat(15));
    for (case, ratio) in [IntVect::splat(2), IntVect::splat(4)]
        .into_iter()
        .enumerate()
    {
        let mut rng = Rng(1200 + case as u64);
        for (lay, (cba, fba)) in flux_levels(&mut rng, cdom, ratio).into_iter().enumerate() {
            for periodic in [[true; 3], [false, true, false]] {
                let cg = cartesian(cdom, periodic);
                let fg = cg.refine(ratio).expect("fine geometry");
                let seed = 12_000 + 100 * case as u64 + 10 * lay as u64;
                compare(
                    &format!(
                        "FluxRegister::overwrite_flux ratio {ratio} layout {lay} periodic {periodic:?}"
                    ),
                    c,
                    |map| {
                        let (cdm, fdm) = (map(&cba, seed + 1), map(&fba, seed + 2));
                        let mut fr =
                            FluxRegister::new(&fba, &fdm, ratio, 1, 1).expect("FluxRegister::new");
                        fr.set_val(0.0);
                        for step in 0..2 {
                            for d in 0..3 {
                                let f = face_flux(&fba, &fdm, d, &fg, seed + 3 + step);
                                fr.fine_add(&f, d, Comps::first(1), 0.5 * area(&fg, d))
                                    .expect("fine_add");
                            }
                        }
                        let mut fl: [MultiFab; 3] =
                            core::array::from_fn(|d| face_flux(&cba, &cdm, d, &cg, seed + 5));
                        let before: Vec<MultiFab> = fl.iter().map(copy_of).collect();
                        let [f0, f1, f2] = &mut fl;
                        fr.overwrite_flux([f0, f1, f2], 1.0, Comps::first(1), &cg)
                            .expect("overwrite_flux");
                        let changed: u64 = fl
                            .iter()
                            .zip(&before)
                            .map(|(a, b)| count_changed(a, b))
                            .sum();
                        assert!(changed > 0, "overwrite_flux changed no coarse face");
                        let [f0, f1, f2] = fl;
                        vec![
                            ("x fluxes".into(), f0),
                            ("y fluxes".into(), f1),
                            ("z fluxes".into(), f2),
                        ]
                    },
                );
            }
        }
    }
}

/// `crse_init` and `fine_add`, then `clear_internal_borders` (local) and `reflux`: the
/// cleared registers agree, and the reflux changes no coarse cell the fine level covers
/// (it does without the clearing), across the periodic z boundary too.
fn flux_register_clear_internal_borders(c: &Communicator) {
    let cdom = IndexBox::new(IntVect::ZERO, IntVect::splat(15));
    let cg = cartesian(cdom, [true; 3]);
    for (case, ratio) in [IntVect::splat(2), IntVect::new(2, 2, 1)]
        .into_iter()
        .enumerate()
    {
        let fg = cg.refine(ratio).expect("fine geometry");
        let mut rng = Rng(1300 + case as u64);
        for (lay, (cba, fba)) in flux_levels(&mut rng, cdom, ratio).into_iter().enumerate() {
            let covered = fba.coarsen(ratio);
            let seed = 13_000 + 100 * case as u64 + 10 * lay as u64;
            for clear in [false, true] {
                compare(
                    &format!(
                        "FluxRegister::clear_internal_borders ratio {ratio} layout {lay} clear {clear}"
                    ),
                    c,
                    |map| {
                        let (cdm, fdm) = (map(&cba, seed + 1), map(&fba, seed + 2));
                        let mut fr =
                            FluxRegister::new(&fba, &fdm, ratio, 1, 1).expect("FluxRegister::new");
                        for d in 0..3 {
                            let f = face_flux(&cba, &cdm, d, &cg, seed + 3);
                            fr.crse_init(&f, d, Comps::first(1), -area(&cg, d), CopyOp::Copy)
                                .expect("crse_init");
                            let f = face_flux(&fba, &fdm, d, &fg, seed + 4);
                            fr.fine_add(&f, d, Comps::first(1), area(&fg, d))
                                .expect("fine_add");
                        }
                        if clear {
                            fr.clear_internal_borders(&cg);
                        }
                        let mut uc = MultiFab::new(&cba, &cdm, 1, IntVect::ZERO);
                        fill(&mut uc, seed + 5);
                        let before = copy_of(&uc);
                        fr.reflux(&mut uc, 1.0, Comps::first(1), &cg)
                            .expect("reflux");
                        let mut touched = 0;
                        for l in 0..uc.local_size() {
                            let (a, b) = (uc.array_at(l), before.array_at(l));
                            for p in uc.box_of(uc.global_index(l)) {
                                if covered.contains(p) && a[(p, 0)].to_bits() != b[(p, 0)].to_bits()
                                {
                                    touched += 1;
                                }
                            }
                        }
                        let touched = c.all_reduce_u64(touched, ReduceOp::Sum).unwrap();
                        assert_eq!(
                            touched > 0,
                            !clear,
                            "{touched} covered coarse cells changed by reflux (cleared: {clear})"
                        );
                        let mut out = registers(&fr);
                        out.push(("coarse state".into(), uc));
                        out
                    },
                );
            }
        }
    }
}

// ----- FillPatch ----------------------------------------------------------------------------

fn fill_patch_single_and_two_levels(c: &Communicator) {
    let cdom = IndexBox::new(IntVect::ZERO, IntVect::splat(15));
    let cg = cartesian(cdom, [false, true, false]);
    let ncomp = BCType::ALL.len();
    let recs = every_bc(ncomp);
    let cbc = PhysBcFunct::new(cg, recs.clone(), ext as Ext);
    for (case, ratio) in [IntVect::splat(2), IntVect::new(2, 4, 1)]
        .into_iter()
        .enumerate()
    {
        let fg = cg.refine(ratio).expect("fine geometry");
        let fbc = PhysBcFunct::new(fg, recs.clone(), ext as Ext);
        let mut rng = Rng(800 + case as u64);
        let inner = IndexBox::new(IntVect::new(1, 0, 2), IntVect::new(13, 15, 13));
        let (cba, fba) = levels(&mut rng, cdom, inner, ratio);
        let seed = 8000 + 100 * case as u64;
        compare(
            &format!("fill_patch_single_level ratio {ratio}"),
            c,
            |map| {
                // Two states in time on one layout, the destination on another.
                let sdm = map(&cba, seed + 1);
                let mut old = MultiFab::new(&cba, &sdm, ncomp, IntVect::ZERO);
                fill(&mut old, seed + 2);
                let mut new = MultiFab::new(&cba, &sdm, ncomp, IntVect::ZERO);
                fill(&mut new, seed + 3);
                let dba = BoxArray::from_domain_iv(cdom, IntVect::new(8, 4, 5));
                let mut mf = MultiFab::new(&dba, &map(&dba, seed + 4), ncomp, IntVect::splat(2));
                fill(&mut mf, seed + 5);
                let src = Source::between((&old, 0.0), (&new, 1.0), &cbc);
                fill_patch_single_level(&mut mf, 2, 0.25, &src, Comps::first(ncomp))
                    .expect("single level");
                // The same layout as the states: the direct path.
                let mut same = MultiFab::new(&cba, &sdm, ncomp, IntVect::splat(1));
                fill(&mut same, seed + 6);
                fill_patch_single_level(&mut same, 1, 0.75, &src, Comps::new(1, 0, ncomp - 1))
                    .expect("single level (state layout)");
                vec![("mf".into(), mf), ("same layout".into(), same)]
            },
        );
        let cell_cons = CellConsLinear::CELL_CONS_INTERP;
        for (m, mapper) in [&cell_cons as &dyn amrex_amr::Interpolater, &PcInterp]
            .into_iter()
            .enumerate()
        {
            compare(
                &format!("fill_patch_two_levels ratio {ratio} mapper {m}"),
                c,
                |map| {
                    let cdm = map(&cba, seed + 10);
                    let mut c0 = MultiFab::new(&cba, &cdm, ncomp, IntVect::ZERO);
                    fill(&mut c0, seed + 11);
                    let mut c1 = MultiFab::new(&cba, &cdm, ncomp, IntVect::ZERO);
                    fill(&mut c1, seed + 12);
                    let fdm = map(&fba, seed + 13);
                    let mut f0 = MultiFab::new(&fba, &fdm, ncomp, IntVect::ZERO);
                    fill(&mut f0, seed + 14);
                    let mut f1 = MultiFab::new(&fba, &fdm, ncomp, IntVect::ZERO);
                    fill(&mut f1, seed + 15);
                    let mut mf =
                        MultiFab::new(&fba, &map(&fba, seed + 16), ncomp, IntVect::splat(2));
                    fill(&mut mf, seed + 17);
                    fill_patch_two_levels(
                        &mut mf,
                        2,
                        0.5,
                        &Source::between((&c0, 0.0), (&c1, 1.0), &cbc),
                        &Source::between((&f0, 0.0), (&f1, 1.0), &fbc),
                        Comps::first(ncomp),
                        mapper,
                    )
                    .expect("two levels");
                    vec![("mf".into(), mf)]
                },
            );
        }
    }
}

/// A new fine level from two coarse states in time, every `BCType` on the coarse and the
/// fine level (walls in x and z, periodic in y), into components `1..` of a destination
/// with two ghost cells.
fn interp_from_coarse_level_every_bc(c: &Communicator) {
    let cdom = IndexBox::new(IntVect::ZERO, IntVect::splat(15));
    let cg = cartesian(cdom, [false, true, false]);
    let ncomp = BCType::ALL.len();
    let recs = every_bc(ncomp);
    let cbc = PhysBcFunct::new(cg, recs.clone(), ext as Ext);
    for (case, ratio) in [IntVect::splat(2), IntVect::new(2, 4, 1)]
        .into_iter()
        .enumerate()
    {
        let fg = cg.refine(ratio).expect("fine geometry");
        let fbc = PhysBcFunct::new(fg, recs.clone(), ext as Ext);
        let mut rng = Rng(900 + case as u64);
        // Up to the walls in x, across the periodic y faces.
        let inner = IndexBox::new(IntVect::new(0, 0, 2), IntVect::new(15, 15, 13));
        let (cba, fba) = levels(&mut rng, cdom, inner, ratio);
        let seed = 9000 + 100 * case as u64;
        let cell_cons = CellConsLinear::CELL_CONS_INTERP;
        for (m, mapper) in [
            &cell_cons as &dyn amrex_amr::Interpolater,
            &CellBilinear,
            &PcInterp,
        ]
        .into_iter()
        .enumerate()
        {
            compare(
                &format!("interp_from_coarse_level ratio {ratio} mapper {m}"),
                c,
                |map| {
                    let cdm = map(&cba, seed + 1);
                    let mut c0 = MultiFab::new(&cba, &cdm, ncomp, IntVect::ZERO);
                    fill(&mut c0, seed + 2);
                    let mut c1 = MultiFab::new(&cba, &cdm, ncomp, IntVect::ZERO);
                    fill(&mut c1, seed + 3);
                    let mut mf =
                        MultiFab::new(&fba, &map(&fba, seed + 4), ncomp + 1, IntVect::splat(2));
                    fill(&mut mf, seed + 5);
                    let untouched = read(&mf, 0..1, fba.get(0));
                    interp_from_coarse_level(
                        &mut mf,
                        2,
                        0.25,
                        &Source::between((&c0, 0.0), (&c1, 1.0), &cbc),
                        &fbc,
                        Comps::new(0, 1, ncomp),
                        mapper,
                    )
                    .expect("interp_from_coarse_level");
                    assert_eq!(
                        read(&mf, 0..1, fba.get(0)),
                        untouched,
                        "component 0 is not filled"
                    );
                    vec![("mf".into(), mf)]
                },
            );
        }
    }
}

// ----- mismatched calls -------------------------------------------------------------------

/// `r` is an error on every rank when there are several, and `Ok` on one; the error of a
/// rank that disagrees comes from the copy inside the operation.
fn expect_disagreement(what: &str, c: &Communicator, r: Result<(), AmrError>) {
    match (c.size(), r) {
        (1, Ok(())) => {}
        (n, Err(e))
            if n > 1
                && matches!(
                    e.kind(),
                    AmrErrorKind::MultiFab(
                        FabArrayError::RanksDisagree { .. }
                            | FabArrayError::RefusedOnOtherRank { .. }
                    )
                ) => {}
        (n, other) => panic!(
            "{what} on rank {} of {n}: expected an error on every rank, got {other:?}",
            c.rank()
        ),
    }
}

/// The fine level for the mismatch checks: coarsenable by 2 and by 4, and a coarse layout
/// that is not its coarsening (so the averages go through their `ParallelCopy`).
fn mismatch_levels(c: &Communicator) -> (MultiFab, MultiFab) {
    let cdom = IndexBox::new(IntVect::ZERO, IntVect::splat(15));
    let cba = BoxArray::from_domain(cdom, 8);
    let fba = BoxArray::from_domain(IndexBox::new(IntVect::splat(2), IntVect::splat(9)), 4)
        .refine(IntVect::splat(4));
    let mut fine = MultiFab::new(&fba, &DistributionMapping::on(&fba, c), 2, IntVect::ZERO);
    fill(&mut fine, 9001);
    let crse = MultiFab::new(&cba, &DistributionMapping::on(&cba, c), 2, IntVect::ZERO);
    (fine, crse)
}

/// Rank 0 averages other components, or with another (valid) ratio, than the others:
/// every rank gets an error from the copy's agreement, nobody waits.
fn mismatched_components_and_ratios(c: &Communicator) {
    let (fine, mut crse) = mismatch_levels(c);
    let root = c.rank() == 0;
    let scomp = usize::from(!root);
    expect_disagreement(
        "average_down, components",
        c,
        average_down(&fine, &mut crse, scomp..scomp + 1, 2),
    );
    let ratio = if root { 4 } else { 2 };
    expect_disagreement(
        "average_down, ratio",
        c,
        average_down(&fine, &mut crse, 0..1, ratio),
    );
    let cgeom = cartesian(crse.box_array().minimal_box(), [true; 3]);
    expect_disagreement(
        "sum_fine_to_coarse, ratio",
        c,
        sum_fine_to_coarse(&fine, &mut crse, 0..2, ratio, &cgeom),
    );
    // A register built with another ratio on rank 0: its coarse faces differ, so the
    // coarse flux's copy into it disagrees.
    let fr = FluxRegister::new(fine.box_array(), fine.distribution_map(), ratio, 1, 1);
    let mut fr = fr.expect("FluxRegister::new");
    let flux = face_flux(crse.box_array(), crse.distribution_map(), 0, &cgeom, 9002);
    match (
        c.size(),
        fr.crse_init(&flux, 0, Comps::first(1), -1.0, CopyOp::Copy),
    ) {
        (1, Ok(())) => {}
        (n, Err(e)) if n > 1 && matches!(e.kind(), AmrErrorKind::MultiFab(_)) => {}
        (n, other) => panic!("crse_init on rank {} of {n}: {other:?}", c.rank()),
    }
}

/// Rank 0 asks for a component the MultiFabs do not have; the others ask for a valid one.
/// The ranks agree on the arguments before any local check, so every rank gets the
/// disagreement (rank 0 does not return its refusal alone and leave the others waiting in
/// the copy); on one process the refusal itself.
fn refusal_on_one_rank_reaches_the_others(c: &Communicator) {
    let (fine, mut crse) = mismatch_levels(c);
    let scomp = if c.rank() == 0 { 5 } else { 0 };
    let r = average_down(&fine, &mut crse, scomp..scomp + 1, 2);
    match r {
        Err(e) if c.size() == 1 && matches!(e.kind(), AmrErrorKind::ComponentsOutside { .. }) => {}
        r if c.size() > 1 => expect_disagreement("average_down, refused on rank 0", c, r),
        other => panic!("average_down with a refused component: {other:?}"),
    }
}

/// Rank 0 averages with ratio 4, the others with 2, into a coarse MultiFab that is the
/// fine level coarsened by 2 on the fine map: the others write it directly (no copy) and
/// return `Ok`, rank 0 goes through the copy and waits for them in its agreement —
/// unless the ranks agree on the arguments first, which they do: every rank gets the
/// disagreement.
fn mismatched_ratio_on_the_direct_path(c: &Communicator) {
    let (fine, _) = mismatch_levels(c);
    let cba = fine.box_array().coarsen(IntVect::splat(2));
    let mut crse = MultiFab::new(&cba, fine.distribution_map(), 2, IntVect::ZERO);
    let ratio = if c.rank() == 0 { 4 } else { 2 };
    expect_disagreement(
        "average_down, ratio, direct path",
        c,
        average_down(&fine, &mut crse, 0..1, ratio),
    );
}

/// Rank 0 refluxes register component 1, the others component 0, into a coarse state on
/// another layout than the register's. The copies inside `reflux` move a temporary
/// holding the chosen components, whose layout and range are the same on every rank, so
/// only the agreement on `reflux`'s own arguments sees the difference: every rank gets
/// an error instead of silently applying different components.
fn mismatched_reflux_components(c: &Communicator) {
    let (fine, crse) = mismatch_levels(c);
    let ratio = IntVect::splat(2);
    let mut fr = FluxRegister::new(fine.box_array(), fine.distribution_map(), ratio, 1, 2)
        .expect("FluxRegister::new");
    fr.set_val(1.0);
    let mut state = MultiFab::new(crse.box_array(), crse.distribution_map(), 1, IntVect::ZERO);
    let cgeom = cartesian(crse.box_array().minimal_box(), [true; 3]);
    let srccomp = usize::from(c.rank() == 0);
    match (
        c.size(),
        fr.reflux(&mut state, 1.0, Comps::new(srccomp, 0, 1), &cgeom),
    ) {
        (1, Ok(())) => {}
        (n, Err(e)) if n > 1 && matches!(e.kind(), AmrErrorKind::MultiFab(_)) => {}
        (n, other) => panic!(
            "reflux, components, on rank {} of {n}: expected an error on every rank, got {other:?}",
            c.rank()
        ),
    }
}

/// Tags set on whichever rank owns the cell, buffered, mapped through periodic edges and
/// collated (AMReX 24.10's semantics: every cell of the grown boxes, inside the domain or
/// not, tagged when one of its periodic images is within `nbuf` of a set cell, once):
/// every rank gets that set, computed here serially, whatever the map.
fn tags_buffer_map_collate(c: &Communicator) {
    let domain = IndexBox::new(IntVect::ZERO, IntVect::new(15, 11, 3));
    let geom = Geometry::new(
        domain,
        RealBox::UNIT,
        CoordSys::Cartesian,
        [true, true, false],
    )
    .expect("geometry");
    let ba = BoxArray::from_domain_iv(domain, IntVect::new(4, 4, 2));
    let nbuf = IntVect::new(1, 2, 1);
    let set: Vec<IntVect> = domain
        .iter()
        .filter(|p| mix((p[0] + 16 * p[1] + 256 * p[2]) as u64 + 7).is_multiple_of(23))
        .collect();
    assert!(
        set.iter().any(|p| p[0] == 0 || p[1] == 0),
        "no set cell on a periodic edge"
    );
    let mut want = Vec::new();
    // The union of the grown boxes: the boxes tile the domain.
    for p in domain.grow_iv(nbuf).iter() {
        let near = set.iter().any(|q| {
            (0..3).all(|d| {
                let n = domain.length()[d];
                let mut dd = (p[d] - q[d]).rem_euclid(n);
                if geom.is_periodic(d) {
                    dd = dd.min(n - dd);
                } else {
                    dd = (p[d] - q[d]).abs();
                }
                dd <= nbuf[d]
            })
        });
        if near {
            want.push(p);
        }
    }
    want.sort_by(|a, b| a.lex_cmp(*b));
    for seed in 0..3 {
        for dm in [random_map(seed, &ba, c), DistributionMapping::single(&ba)] {
            let mut t = TagBoxArray::new(&ba, &dm, nbuf).expect("tags");
            for l in 0..t.fab_array().local_size() {
                let vbx = t.fab_array().box_of(t.fab_array().global_index(l));
                let mut a = t.fab_array_mut().array_mut_at(l);
                for p in set.iter().filter(|p| vbx.contains(**p)) {
                    a[(p[0], p[1], p[2])] = TagBoxArray::SET;
                }
            }
            t.buffer(nbuf).expect("buffer");
            t.map_periodic_remove_duplicates(&geom).expect("map");
            let got = t.collate().expect("collate");
            assert_eq!(got.len(), want.len(), "seed {seed}");
            assert_eq!(got, want, "seed {seed}");
        }
    }
}

type Check = (&'static str, fn(&Communicator));

/// The checks every run makes, in this order on every rank.
/// A regrid driver over MPI: a blob tagged on every rank's boxes gives three levels and
/// the same grids on every rank; and an `error_est` that panics on the last rank only
/// is an `ErrorEstFailed` error on every rank (no abort, no hang). (That the grids do
/// not depend on the rank count is what scripts/test-advection.sh shows: AMReX's grids
/// on 1, 2 and 4 ranks.)
fn amr_core_regrid_and_panicking_error_est(c: &Communicator) {
    use amrex_amr::{AmrCore, AmrInfo, AmrMesh};
    struct Blob {
        mesh: AmrMesh,
        panic_on: Option<usize>,
    }
    impl AmrCore for Blob {
        type Error = AmrError;

        fn mesh(&self) -> &AmrMesh {
            &self.mesh
        }
        fn mesh_mut(&mut self) -> &mut AmrMesh {
            &mut self.mesh
        }
        fn error_est(
            &mut self,
            lev: usize,
            tags: &mut TagBoxArray,
            t: f64,
            _: usize,
        ) -> Result<(), AmrError> {
            if self.panic_on == Some(Communicator::current().rank()) {
                panic!("error_est of this rank panics on purpose");
            }
            let g = *self.mesh.geom(lev);
            let fa = tags.fab_array_mut();
            fa.par_for_each_tile(Tiling::None, IntVect::ZERO, |mut tile| {
                let bx = tile.region();
                let mut a = tile.array_mut();
                for p in bx.iter() {
                    let x = g.cell_centre(p);
                    let r2 = (x[0] - 0.3 - t).powi(2) + (x[1] - 0.6).powi(2) + (x[2] - 0.5).powi(2);
                    if r2 < 0.03 {
                        a[p] = TagBoxArray::SET;
                    }
                }
            });
            Ok(())
        }
        fn make_new_level_from_scratch(
            &mut self,
            _: usize,
            _: f64,
            _: &BoxArray,
            _: &DistributionMapping,
        ) -> Result<(), AmrError> {
            Ok(())
        }
        fn make_new_level_from_coarse(
            &mut self,
            _: usize,
            _: f64,
            _: &BoxArray,
            _: &DistributionMapping,
        ) -> Result<(), AmrError> {
            Ok(())
        }
        fn remake_level(
            &mut self,
            _: usize,
            _: f64,
            _: &BoxArray,
            _: &DistributionMapping,
        ) -> Result<(), AmrError> {
            Ok(())
        }
        fn clear_level(&mut self, _: usize) {}
    }
    let info = AmrInfo {
        max_level: 2,
        max_grid_size: vec![IntVect::splat(16)],
        blocking_factor: vec![IntVect::splat(4)],
        // The same grids on any rank count: no chopping for the ranks.
        refine_grid_layout: [false; 3],
        ..AmrInfo::default()
    };
    let g = cartesian(
        IndexBox::new(IntVect::ZERO, IntVect::splat(31)),
        [true, false, true],
    );
    let mut sim = Blob {
        mesh: AmrMesh::new(g, info.clone()).unwrap(),
        panic_on: None,
    };
    sim.init_from_scratch(0.0).unwrap();
    sim.regrid(0, 0.2).unwrap();
    // Every rank made the same grids.
    let grids: Vec<Vec<IndexBox>> = (0..=sim.mesh.finest_level().unwrap())
        .map(|l| sim.mesh.box_array(l).boxes().to_vec())
        .collect();
    assert!(grids.len() == 3 && !grids[2].is_empty(), "{grids:?}");
    let digest: u64 = grids.iter().flatten().fold(0, |h, b| {
        mix(h ^ mix(b.small_end()[0] as u64
            + 1000 * b.big_end()[1] as u64
            + 7 * b.small_end()[2] as u64))
    });
    assert_eq!(
        c.all_reduce_u64(digest, ReduceOp::Max).unwrap(),
        c.all_reduce_u64(digest, ReduceOp::Min).unwrap(),
        "ranks disagree on the grids"
    );

    sim.panic_on = Some(c.size() - 1);
    let e = sim.regrid(0, 0.3).unwrap_err();
    match e.kind() {
        AmrErrorKind::ErrorEstFailed {
            ranks: 1, message, ..
        } => {
            let mine = c.rank() == c.size() - 1;
            assert_eq!(message.contains("panics on purpose"), mine, "{message}");
        }
        k => panic!("expected ErrorEstFailed on every rank, got {k:?}"),
    }
}

const CHECKS: &[Check] = &[
    (
        "amr_core_regrid_and_panicking_error_est",
        amr_core_regrid_and_panicking_error_est,
    ),
    (
        "average_down_ratios_and_components",
        average_down_ratios_and_components,
    ),
    ("average_down_geom_rz", average_down_geom_rz),
    (
        "average_down_faces_every_direction",
        average_down_faces_every_direction,
    ),
    (
        "average_down_nodal_with_ghosts",
        average_down_nodal_with_ghosts,
    ),
    ("sum_fine_to_coarse_periodic", sum_fine_to_coarse_periodic),
    (
        "fill_physical_boundary_every_bc_type",
        fill_physical_boundary_every_bc_type,
    ),
    (
        "flux_register_subcycled_cycle",
        flux_register_subcycled_cycle,
    ),
    ("flux_register_crse_add", flux_register_crse_add),
    ("flux_register_overwrite_flux", flux_register_overwrite_flux),
    (
        "flux_register_clear_internal_borders",
        flux_register_clear_internal_borders,
    ),
    (
        "fill_patch_single_and_two_levels",
        fill_patch_single_and_two_levels,
    ),
    (
        "interp_from_coarse_level_every_bc",
        interp_from_coarse_level_every_bc,
    ),
    (
        "mismatched_components_and_ratios",
        mismatched_components_and_ratios,
    ),
    (
        "refusal_on_one_rank_reaches_the_others",
        refusal_on_one_rank_reaches_the_others,
    ),
    (
        "mismatched_ratio_on_the_direct_path",
        mismatched_ratio_on_the_direct_path,
    ),
    ("mismatched_reflux_components", mismatched_reflux_components),
    ("tags_buffer_map_collate", tags_buffer_map_collate),
];

fn main() {
    let parallel = amrex_runtime::init().expect("MPI initialises");
    let c = parallel.communicator().clone();
    let asked: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let checks: Vec<Check> = if asked.is_empty() {
        CHECKS.to_vec()
    } else {
        asked
            .iter()
            .map(|name| {
                *CHECKS
                    .iter()
                    .find(|(n, _)| n == name)
                    .unwrap_or_else(|| panic!("no check named {name}"))
            })
            .collect()
    };
    for (name, check) in &checks {
        check(&c);
        c.barrier().unwrap();
        if c.rank() == 0 {
            println!("ok {name} ({} ranks)", c.size());
        }
    }
    if c.rank() == 0 {
        println!(
            "mpi_amr on {} ranks: {} passed, 0 failed",
            c.size(),
            checks.len()
        );
    }
    drop(c);
    drop(parallel);
}
