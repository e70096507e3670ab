//! The particle container's hot loops against a STREAM triad measured in the same run:
//! `redistribute` with 10 % of the particles leaving their grid per step, cloud-in-cell
//! deposition (`deposit_cic`, `sum_boundary` included) and gather (`gather_cic` of three
//! components), on 1 and 2 threads; under `mpirun -n 2` (feature `mpi`) on 2 ranks of
//! one thread each.
//!
//! 16 M particles (`PC_BENCH_N`) of `Particle<4, 0>` (position, charge, 3 velocities,
//! idcpu: 64 bytes) in a periodic unit cube of 128³ cells in 32³ grids. A step of the
//! redistribute benchmark first moves every particle whose id is `step mod 10` (mod 10)
//! by one grid length in x (untimed), so exactly 10 % change grid (and, on 2 ranks,
//! about half of those change rank), then times `redistribute`.
//!
//! The particles are sorted by cell once after `init_random` (untimed), as PIC codes
//! keep them: unsorted, every particle's stencil is a cache miss in its grid's fab.
//!
//! Bytes counted, the least each operation must move: redistribute reads every particle
//! once and reads and writes each mover once (`64 N + 128 · 0.1 N`); deposition reads
//! every particle (64 N) and reads and writes the density (16 per cell); gather reads
//! and writes every particle's cache lines (128 N) and reads three field components
//! (24 per cell). Each timed call starts from a cold cache (`CacheFlush`), the triad's
//! too; the printed ratio is (bytes / time) over the triad's (24 bytes per element over
//! `N` elements) / time. Best of `PC_BENCH_REPS` (default 3) calls.
//!
//! `cargo bench -p amrex-benches --bench particle_container`; on 2 ranks:
//! `cargo bench --no-run -p amrex-benches --features mpi --bench particle_container`
//! then `mpirun -n 2 <that executable>`.
use amrex_benches::{CacheFlush, env_or, triad};
use amrex_geometry::{CoordSys, Geometry, RealBox};
use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IntVect, MultiFab};
use amrex_particles::{AosTile, ParticleContainer, ParticleTile, idcpu};
use amrex_runtime::{Communicator, ReduceOp};
use std::time::Instant;

type Pc = ParticleContainer<AosTile<4, 0>>;
const PSIZE: f64 = 64.0;

/// Seconds of `f`, from a cold cache, the slowest rank's (all ranks start together).
fn cold(comm: &Communicator, flush: &CacheFlush, f: impl FnOnce()) -> f64 {
    flush.run();
    comm.barrier().unwrap();
    let t = Instant::now();
    f();
    let s = t.elapsed().as_secs_f64();
    comm.all_reduce_f64(s, ReduceOp::Max).unwrap()
}

fn main() {
    let guard = amrex_runtime::init().expect("MPI init");
    let comm = guard.communicator().clone();
    let n: u64 = env_or("PC_BENCH_N", 1 << 24);
    let reps: usize = env_or("PC_BENCH_REPS", 3);
    let say = |s: String| {
        if comm.rank() == 0 {
            println!("{s}");
        }
    };
    let cells = 128;
    let dom = IndexBox::new(IntVect::ZERO, IntVect::splat(cells - 1));
    let geom = Geometry::new(
        dom,
        RealBox::new([0.0; 3], [1.0; 3]).unwrap(),
        CoordSys::Cartesian,
        [true; 3],
    )
    .unwrap();
    let ba = BoxArray::from_domain(dom, 32);
    let dm = DistributionMapping::new(&ba);
    let ncell = f64::from(cells).powi(3);
    let flush = CacheFlush::new();
    let mut pc = Pc::new(geom, &ba, &dm, AosTile::new(0, 0));
    let t = Instant::now();
    pc.init_random(n, 1, &[1.0, 0.1, 0.2, 0.3], &[]).unwrap();
    // Cell order, as PIC codes keep their particles (AMReX `SortParticlesByCell`), so
    // that a grid's neighbouring particles touch neighbouring cells.
    pc.sort_particles_by_cell(0);
    say(format!(
        "particle container: {n} particles of 64 B, {cells}^3 cells in {} grids, {} rank(s); init_random {:.2} s",
        ba.len(),
        comm.size(),
        t.elapsed().as_secs_f64()
    ));
    let local = pc.num_local_particles();
    let (mut a, b, c) = (vec![0.0; local], vec![1.0; local], vec![2.0; local]);
    let mut rho = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
    let mut vel = MultiFab::new(&ba, &dm, 3, IntVect::splat(1));
    vel.set_val(0.5, .., 1).unwrap();
    let threads: Vec<usize> = if comm.size() > 1 { vec![1] } else { vec![1, 2] };
    let mut step = 0u64;
    for nt in threads {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(nt)
            .build()
            .unwrap();
        pool.install(|| {
            let mut best = [f64::INFINITY; 4];
            let mut moved = 0;
            for _ in 0..reps {
                best[0] = best[0].min(cold(&comm, &flush, || triad(&mut a, &b, &c, 3.0)));
                // 10 % of the particles move one grid length in x.
                let k = step % 10;
                step += 1;
                pc.par_for_each_tile(0, |t| {
                    for i in 0..t.data.len() {
                        if idcpu::id(t.data.idcpu(i)) as u64 % 10 == k {
                            let mut p = t.data.pos(i);
                            p[0] += 0.25;
                            t.data.set_pos(i, p);
                        }
                    }
                });
                let mut r = Default::default();
                best[1] = best[1].min(cold(&comm, &flush, || r = pc.redistribute().unwrap()));
                let r: amrex_particles::RedistributeReport = r;
                moved = comm.all_reduce_u64((r.moved_local + r.sent) as u64, ReduceOp::Sum).unwrap();
                rho.set_val(0.0, .., 1).unwrap();
                best[2] = best[2].min(cold(&comm, &flush, || pc.deposit_cic(0, &mut rho, 0, |t, i| t.real(i, 0)).unwrap()));
                best[3] = best[3].min(cold(&comm, &flush, || pc.gather_cic(0, &vel, 0, &[1, 2, 3]).unwrap()));
            }
            let nf = n as f64;
            let triad_bw = 24.0 * (local as f64) * comm.size() as f64 / best[0];
            say(format!(
                "{nt} thread(s) x {} rank(s): triad {:.2} GB/s ({:.3} s)",
                comm.size(),
                triad_bw / 1e9,
                best[0]
            ));
            let report = |name: &str, t: f64, bytes: f64| {
                let bw = bytes / t;
                say(format!(
                    "  {name:<12} {:>7.1} M particles/s, {:>6.2} GB/s, {:.2} of the triad ({:.3} s)",
                    nf / t / 1e6,
                    bw / 1e9,
                    bw / triad_bw,
                    t
                ));
            };
            let movers = moved as f64;
            say(format!("  (redistribute moved {moved} particles, {:.1} %)", 100.0 * movers / nf));
            report("redistribute", best[1], PSIZE * nf + 2.0 * PSIZE * movers);
            report("deposit CIC", best[2], PSIZE * nf + 16.0 * ncell);
            report("gather CIC", best[3], 2.0 * PSIZE * nf + 24.0 * ncell);
        });
    }
    assert_eq!(pc.num_particles().unwrap(), n);
}
