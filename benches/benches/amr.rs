//! The AMR level operations (criterion), each against a STREAM triad measured in the same
//! run, with 1 and 2 threads; every call starts from a cold cache (`CacheFlush`, outside
//! the timing), and the summary at the end prints each operation's median (best) time,
//! the bytes it must move at least, GB/s and the ratio to the triad of its thread count.
//!
//! - `average_down`, ratio 2, one component: a `AMR_BENCH_AVG_N`³ fine level (default
//!   256) in boxes of `AMR_BENCH_AVG_GRID`³ (default 64) onto the coarse level, once on
//!   the coarsened fine layout (the direct path, no copy) and once on a coarse layout of
//!   its own (boxes of the same size in coarse cells, so the values go through a
//!   `ParallelCopy`). Bytes: the fine cells read and the coarse cells written.
//! - `fill_patch_two_levels`, `CellConsLinear::CELL_CONS_INTERP`, ratio 2: a fine level
//!   of `AMR_BENCH_LEVEL_N`³ cells (default 128) in boxes of 32³ over the middle half of
//!   a periodic coarse domain of `AMR_BENCH_LEVEL_N`³ coarse cells (so the fine level is
//!   refined from the middle (N/2)³ coarse cells, and the fine ghost cells on the fine
//!   level's outer boundary come from the coarse level), into a MultiFab with 2 ghost
//!   cells. Bytes: the fine valid cells read, the destination fabs written with their
//!   ghost cells, and the coarse cells the interpolation reads (those under the outer
//!   ghost ring and their slope neighbours) — not the temporaries the fill makes.
//! - `cell_cons_interp`: `CELL_CONS_INTERP.interp` fab by fab (in parallel over the
//!   fabs) of a whole `(N/2)`³ coarse level (boxes of 16³, one ghost cell) onto the
//!   `N`³ fine level (its boxes refined). Bytes: the coarse valid cells read and the fine
//!   cells written.
//! - `reflux`: a `FluxRegister` over an `N`³-fine-cell region in boxes of 32³ (after
//!   `crse_init` and `fine_add` once, in the setup) refluxed into an `N`³ coarse state.
//!   Bytes: each register face read and the coarse cell beside it read and written.
//!
//! `cargo bench -p amrex-benches --bench amr` (about a minute on 2 cores; criterion's
//! `--warm-up-time` and `--measurement-time` override the short defaults set here).

use core::time::Duration;

use amrex_amr::boundary::{BCRec, BCType, PhysBcFunct};
use amrex_amr::fill_patch::Source;
use amrex_amr::flux_register::Side;
use amrex_amr::{
    CellConsLinear, Comps, FluxRegister, Interpolater, average_down, fill_patch_two_levels,
};
use amrex_benches::{TriadTable, env_or, triad};
use amrex_geometry::{CoordSys, Geometry, RealBox};
use amrex_multifab::{
    BoxArray, CopyOp, DistributionMapping, IndexBox, IndexType, IntVect, MultiFab, Tiling,
};
use criterion::{Criterion, criterion_group, criterion_main};

/// The refinement ratio of every case.
const RATIO: i32 = 2;

/// The boundary-value function of the periodic cases (never called: no face is physical).
type Ext = fn([f64; 3], f64, usize) -> f64;

fn no_value(_: [f64; 3], _: f64, _: usize) -> f64 {
    0.0
}

/// The cells `lo ..= lo + n - 1` in every direction.
fn cube(lo: i32, n: i32) -> IndexBox {
    IndexBox::new(IntVect::splat(lo), IntVect::splat(lo + n - 1))
}

/// A smooth field with extrema, so the slope limiters act in places.
fn smooth_at(i: i32, j: i32, k: i32) -> f64 {
    (0.05 * f64::from(i)).sin() + (0.03 * f64::from(j)).cos() + 0.01 * f64::from(k)
}

/// One component on `ba` (one process), ghost cells `ng`, all holding [`smooth_at`].
fn smooth(ba: &BoxArray, ng: i32) -> MultiFab {
    let ng = IntVect::splat(ng);
    let mut mf = MultiFab::new(ba, &DistributionMapping::single(ba), 1, ng);
    mf.par_for_each_tile(Tiling::Default, ng, |mut t| {
        let bx = t.region();
        t.array_mut()
            .for_each_mut(bx, |i, j, k, _, v| *v = smooth_at(i, j, k));
    });
    mf
}

/// A periodic unit-cube geometry over `domain`.
fn periodic(domain: IndexBox) -> Geometry {
    Geometry::new(domain, RealBox::UNIT, CoordSys::Cartesian, [true; 3]).expect("geometry")
}

/// `average_down`'s fine level and its two coarse destinations.
struct AverageCase {
    fine: MultiFab,
    /// On the coarsened fine BoxArray and the fine distribution: written directly.
    direct: MultiFab,
    /// On a BoxArray of its own: reached through a `ParallelCopy`.
    copied: MultiFab,
    /// Coarse cells per direction.
    n_crse: i32,
    bytes: u64,
}

impl AverageCase {
    fn new(n: i32, grid: i32) -> Self {
        let fba = BoxArray::from_domain(cube(0, n), grid);
        let fine = smooth(&fba, 0);
        let cba = fba.coarsen(IntVect::splat(RATIO));
        let direct = MultiFab::new(&cba, fine.distribution_map(), 1, IntVect::ZERO);
        let own = BoxArray::from_domain(cube(0, n / RATIO), grid);
        assert!(own != cba, "the copy path needs another coarse layout");
        let copied = MultiFab::new(&own, &DistributionMapping::single(&own), 1, IntVect::ZERO);
        let bytes = 8 * (fba.num_pts() + cba.num_pts());
        Self {
            fine,
            direct,
            copied,
            n_crse: n / RATIO,
            bytes,
        }
    }

    /// Both paths give the same values (a check that the bench times working code).
    fn check(&mut self) {
        average_down(&self.fine, &mut self.direct, 0..1, RATIO).expect("average_down");
        average_down(&self.fine, &mut self.copied, 0..1, RATIO).expect("average_down");
        let last = self.n_crse - 1;
        for iv in [
            IntVect::ZERO,
            IntVect::new(3, last / 2, 5),
            IntVect::splat(last),
        ] {
            let (a, b) = (self.direct.value_at(iv, 0), self.copied.value_at(iv, 0));
            assert!(a.is_some() && a == b, "average_down paths differ at {iv:?}");
        }
    }
}

/// `fill_patch_two_levels`' levels and destination.
struct FillPatchCase {
    crse: MultiFab,
    fine: MultiFab,
    dest: MultiFab,
    crse_bc: PhysBcFunct<Ext>,
    fine_bc: PhysBcFunct<Ext>,
    bytes: u64,
}

/// The ghost width `fill_patch_two_levels` fills.
const FP_GHOST: i32 = 2;

impl FillPatchCase {
    fn new(n: i32) -> Self {
        let cdom = cube(0, n);
        let cgeom = periodic(cdom);
        let fgeom = cgeom.refine(RATIO).expect("fine geometry");
        let cba = BoxArray::from_domain(cdom, 32);
        let crse = smooth(&cba, 0);
        let region = cube(n / 4, n / 2).refine(RATIO);
        let fba = BoxArray::from_domain(region, 32);
        let fine = smooth(&fba, 0);
        let dest = MultiFab::new(&fba, fine.distribution_map(), 1, IntVect::splat(FP_GHOST));
        let rec = || vec![BCRec::uniform(BCType::IntDir)];
        let crse_bc = PhysBcFunct::new(cgeom, rec(), no_value as Ext);
        let fine_bc = PhysBcFunct::new(fgeom, rec(), no_value as Ext);
        // The coarse cells read: those under the ghost ring around the fine region and
        // their neighbours within one cell (the slopes), i.e. the coarse box of the grown
        // region less the coarse cells more than one cell inside the region's boundary.
        let interp = CellConsLinear::CELL_CONS_INTERP;
        let outer = interp.coarse_box(&region.grow(FP_GHOST), IntVect::splat(RATIO));
        let inner = region.coarsen(RATIO).grow(-1);
        let crse_read = outer.num_pts() - inner.num_pts();
        let written: u64 = fba.boxes().iter().map(|b| b.grow(FP_GHOST).num_pts()).sum();
        let bytes = 8 * (fba.num_pts() + written + crse_read);
        Self {
            crse,
            fine,
            dest,
            crse_bc,
            fine_bc,
            bytes,
        }
    }

    fn run(&mut self) {
        fill_patch_two_levels(
            &mut self.dest,
            FP_GHOST,
            0.0,
            &Source::at(&self.crse, &self.crse_bc),
            &Source::at(&self.fine, &self.fine_bc),
            Comps::first(1),
            &CellConsLinear::CELL_CONS_INTERP,
        )
        .expect("fill_patch_two_levels");
    }

    /// Every destination cell, ghost cells included, is filled (the coarse data of the
    /// interpolation starts as NaN, so a cell left out would show).
    fn check(&mut self) {
        self.dest.set_val(f64::NAN, .., FP_GHOST).expect("set_val");
        self.run();
        let total = self.dest.sum(.., FP_GHOST).expect("sum");
        assert!(
            total.is_finite(),
            "fill_patch_two_levels left a cell unfilled"
        );
        let (lo, hi) = (
            self.dest.min(.., FP_GHOST).expect("min"),
            self.dest.max(.., FP_GHOST).expect("max"),
        );
        // smooth_at lies in -2 ..= 2 + 0.01 k, and CELL_CONS_INTERP makes no new extrema.
        assert!(
            lo >= -2.0 && hi <= 5.0,
            "fill_patch_two_levels gave {lo} ..= {hi}"
        );
    }
}

/// `cell_cons_interp`'s coarse level (one ghost cell) and fine level (its boxes refined).
struct InterpCase {
    crse: MultiFab,
    fine: MultiFab,
    bytes: u64,
}

impl InterpCase {
    fn new(n_fine: i32) -> Self {
        let cba = BoxArray::from_domain(cube(0, n_fine / RATIO), 32 / RATIO);
        let crse = smooth(&cba, 1);
        let fba = cba.refine(IntVect::splat(RATIO));
        let fine = MultiFab::new(&fba, crse.distribution_map(), 1, IntVect::ZERO);
        let bytes = 8 * (cba.num_pts() + fba.num_pts());
        Self { crse, fine, bytes }
    }

    /// Fine fab `l` from coarse fab `l` (same index: the fine boxes are the coarse ones
    /// refined, on the same distribution), the fabs in parallel.
    fn run(&mut self) {
        let crse = &self.crse;
        let ratio = IntVect::splat(RATIO);
        self.fine
            .par_for_each_tile(Tiling::None, IntVect::ZERO, |mut t| {
                let region = t.region();
                CellConsLinear::CELL_CONS_INTERP
                    .interp(
                        crse.array(t.mfi()),
                        t.array_mut(),
                        &region,
                        Comps::first(1),
                        ratio,
                        None,
                    )
                    .expect("cell_cons_interp");
            });
    }

    /// The fine means are the coarse values (the interpolation is conservative).
    fn check(&mut self) {
        self.run();
        let (c, f) = (
            self.crse.sum(.., 0).expect("sum"),
            self.fine.sum(.., 0).expect("sum"),
        );
        let want = c * f64::from(RATIO.pow(3));
        assert!(
            (f - want).abs() <= 1e-9 * want.abs().max(1.0),
            "{f} != {want}"
        );
    }
}

/// `reflux`'s coarse state and register (filled once).
struct RefluxCase {
    state: MultiFab,
    geom: Geometry,
    fr: FluxRegister,
    bytes: u64,
}

impl RefluxCase {
    fn new(n: i32) -> Self {
        let cdom = cube(0, n);
        let geom = periodic(cdom);
        let cba = BoxArray::from_domain(cdom, 32);
        let cdm = DistributionMapping::single(&cba);
        let state = smooth(&cba, 0);
        let fba = BoxArray::from_domain(cube(n / 4, n / 2).refine(RATIO), 32);
        let fdm = DistributionMapping::single(&fba);
        let mut fr = FluxRegister::new(&fba, &fdm, IntVect::splat(RATIO), 1, 1).expect("register");
        for d in 0..3 {
            let faces = IndexType::CELL.with_node(d);
            let mut cflux = MultiFab::new(&cba.convert(faces), &cdm, 1, IntVect::ZERO);
            cflux.set_val(1.0, .., 0).expect("set_val");
            let mut fflux = MultiFab::new(&fba.convert(faces), &fdm, 1, IntVect::ZERO);
            fflux.set_val(0.3, .., 0).expect("set_val");
            fr.crse_init(&cflux, d, Comps::first(1), -1.0, CopyOp::Copy)
                .expect("crse_init");
            fr.fine_add(&fflux, d, Comps::first(1), 1.0)
                .expect("fine_add");
        }
        let faces: u64 = (0..3)
            .flat_map(|d| [Side::Lo, Side::Hi].map(|s| fr.register(d, s).box_array().num_pts()))
            .sum();
        Self {
            state,
            geom,
            fr,
            bytes: 8 * 3 * faces,
        }
    }

    fn run(&mut self) {
        self.fr
            .reflux(&mut self.state, 1.0, Comps::first(1), &self.geom)
            .expect("reflux");
    }

    /// Each register face holds `-1 + 4 · 0.3 = 0.2`; one reflux takes `0.2 / V` from
    /// the coarse cell below a low-side face (`V` the coarse cell volume).
    fn check(&mut self) {
        let n = self.geom.domain().length()[0];
        let below = IntVect::new(n / 4 - 1, n / 2, n / 2);
        let before = self.state.value_at(below, 0).expect("cell");
        self.run();
        let after = self.state.value_at(below, 0).expect("cell");
        let v = self.geom.volume(below);
        assert!(
            ((after - before) + 0.2 / v).abs() < 1e-6 / v,
            "{before} -> {after}"
        );
    }
}

/// The operations' targets (a ratio to the triad) from the issue that asked for them.
fn target(name: &str) -> Option<f64> {
    match name {
        "average_down" | "average_down_copy" => Some(0.6),
        "cell_cons_interp" => Some(0.4),
        "fill_patch_two_levels" => Some(0.3),
        _ => None,
    }
}

fn bench(c: &mut Criterion) {
    let avg_n: i32 = env_or("AMR_BENCH_AVG_N", 256);
    let avg_grid: i32 = env_or("AMR_BENCH_AVG_GRID", 64);
    let level_n: i32 = env_or("AMR_BENCH_LEVEL_N", 128);
    let mut avg = AverageCase::new(avg_n, avg_grid);
    let mut fp = FillPatchCase::new(level_n);
    let mut ip = InterpCase::new(level_n);
    let mut rf = RefluxCase::new(level_n);
    avg.check();
    fp.check();
    ip.check();
    rf.check();

    let cells = u64::try_from(avg_n).expect("positive size").pow(3);
    let len = usize::try_from(cells).expect("fits");
    let (mut a, b, cc) = (vec![0.0f64; len], vec![1.0f64; len], vec![2.0f64; len]);
    let mut table = TriadTable::new(24 * cells);
    for threads in [1usize, 2] {
        table.group(c, "amr", threads, |run| {
            run.bench("stream_triad", 24 * cells, &mut || {
                triad(&mut a, &b, &cc, 3.0)
            });
            run.bench("average_down", avg.bytes, &mut || {
                average_down(&avg.fine, &mut avg.direct, 0..1, RATIO).expect("average_down");
            });
            run.bench("average_down_copy", avg.bytes, &mut || {
                average_down(&avg.fine, &mut avg.copied, 0..1, RATIO).expect("average_down");
            });
            run.bench("fill_patch_two_levels", fp.bytes, &mut || fp.run());
            run.bench("cell_cons_interp", ip.bytes, &mut || ip.run());
            run.bench("reflux", rf.bytes, &mut || rf.run());
        });
    }
    table.print(
        &format!(
            "AMR level operations ({avg_n}³ cells for the triad and the averages), cold cache"
        ),
        target,
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500));
    targets = bench
}
criterion_main!(benches);
