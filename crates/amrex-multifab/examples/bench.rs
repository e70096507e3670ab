//! MultiFab bandwidth table: saxpy, 7-point Laplacian through Array4 tiles, norm2 and
//! sum on 256³ (max_grid_size 64), FillBoundary on 256³ (max_grid_size 32, 2 ghost
//! cells, periodic), with 1 and 2 threads, against a STREAM triad measured in the same
//! run and AMReX 24.10's ratios on the same class of machine.
//!
//! `cargo run --release -p amrex-multifab --example bench [-- N REPS]` (N = 256 default).

use core::hint::black_box;
use std::time::Instant;

use amrex_array4::Stencil;
use amrex_multifab::{
    BoxArray, DistributionMapping, IndexBox, IntVect, MultiFab, Periodicity, Tiling,
};
use rayon::prelude::*;

/// Best wall time of `reps` runs (after one warm-up run).
fn best(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// STREAM triad `a = b + s * c` over `n` doubles, in parallel chunks.
fn triad(a: &mut [f64], b: &[f64], c: &[f64], s: f64) {
    const CHUNK: usize = 1 << 16;
    a.par_chunks_mut(CHUNK)
        .zip(b.par_chunks(CHUNK))
        .zip(c.par_chunks(CHUNK))
        .for_each(|((a, b), c)| {
            for ((a, &b), &c) in a.iter_mut().zip(b).zip(c) {
                *a = b + s * c;
            }
        });
}

/// 7-point Laplacian over each tile, row by row (plain slice loops along `i`).
fn laplacian(lap: &mut MultiFab, phi: &MultiFab) {
    let tiling = std::env::var("LAP_TILE_Y")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(Tiling::Default, |ty: i32| {
            Tiling::Size(IntVect::new(1_024_000, ty, 8))
        });
    lap.par_for_each_tile(tiling, IntVect::ZERO, |mut t| {
        let p = phi.array(t.mfi());
        let bx = t.region();
        t.array_mut()
            .stencil_mut_with(p, bx, |o, s: Stencil<'_, f64, 1>| {
                *o = (s.at(-1, 0, 0) + s.at(1, 0, 0))
                    + (s.at(0, -1, 0) + s.at(0, 1, 0))
                    + (s.at(0, 0, -1) + s.at(0, 0, 1))
                    - 6.0 * s.center();
            });
    });
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n = args.first().copied().unwrap_or(256) as i32;
    let reps = args.get(1).copied().unwrap_or(5);
    let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(n - 1));
    let cells = domain.num_pts() as f64;

    let ba = BoxArray::from_domain(domain, 64);
    let dm = DistributionMapping::new(&ba, 1);
    let mut x = MultiFab::new(&ba, &dm, 1, IntVect::ZERO);
    let mut y = MultiFab::new(&ba, &dm, 1, IntVect::ZERO);
    let mut phi = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
    let mut lap = MultiFab::new(&ba, &dm, 1, IntVect::ZERO);
    x.set_val(1.0);
    y.set_val(2.0);
    phi.set_val(0.5);

    let ba32 = BoxArray::from_domain(domain, 32);
    let dm32 = DistributionMapping::new(&ba32, 1);
    let mut fb = MultiFab::new(&ba32, &dm32, 1, IntVect::splat(2));
    fb.set_val(1.0);
    let period = Periodicity::all(domain);

    let len = cells as usize;
    let (mut a, b, c) = (vec![0.0f64; len], vec![1.0f64; len], vec![2.0f64; len]);

    // AMReX 24.10 (C++, OpenMP, -O3), same sizes, 1 / 2 threads: GB/s and triad.
    let amrex = [
        ("saxpy", 11.9, 18.9),
        ("laplacian", 5.3, 9.4),
        ("norm2", 4.6, 8.5),
        ("sum", 4.8, 9.2),
    ];
    let amrex_triad = (10.1, 15.5);
    let amrex_fb = (0.061, 0.032);

    println!("MultiFab benchmark, {n}^3 cells, best of {reps}");
    println!(
        "{:<14} {:>3} {:>10} {:>9} {:>9} {:>12} {:>9}",
        "kernel", "thr", "time [ms]", "GB/s", "/triad", "AMReX/triad", "ours/AMReX"
    );
    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("thread pool");
        pool.install(|| {
            let t_triad = best(reps, || triad(&mut a, &b, &c, 3.0));
            let triad_gbs = 24.0 * cells / t_triad / 1e9;
            let at = if threads == 1 { amrex_triad.0 } else { amrex_triad.1 };
            println!("{:<14} {:>3} {:>10.2} {:>9.2} {:>9.2} {:>12.2} {:>9}", "stream triad", threads, t_triad * 1e3, triad_gbs, 1.0, 1.0, "");
            let row = |name: &str, bytes: f64, t: f64| {
                let gbs = bytes * cells / t / 1e9;
                let (_, a1, a2) = amrex.iter().find(|e| e.0 == name).copied().unwrap_or(("", f64::NAN, f64::NAN));
                let ar = if threads == 1 { a1 / amrex_triad.0 } else { a2 / amrex_triad.1 };
                let ours = gbs / triad_gbs;
                println!("{:<14} {:>3} {:>10.2} {:>9.2} {:>9.2} {:>12.2} {:>9.2}", name, threads, t * 1e3, gbs, ours, ar, ours / ar);
            };
            let t = best(reps, || y.saxpy(1e-3, &x, 0, 0, 1, IntVect::ZERO));
            row("saxpy", 24.0, t);
            let t = best(reps, || laplacian(&mut lap, &phi));
            row("laplacian", 16.0, t);
            let t = best(reps, || {
                black_box(x.norm2(0, 1, IntVect::ZERO));
            });
            row("norm2", 8.0, t);
            let t = best(reps, || {
                black_box(x.sum(0, 1, IntVect::ZERO));
            });
            row("sum", 8.0, t);
            let t = best(reps, || fb.fill_boundary(period));
            let amrex_t = if threads == 1 { amrex_fb.0 } else { amrex_fb.1 };
            // Normalise by each machine's triad bandwidth: time x triad GB/s.
            let ours_norm = t * triad_gbs;
            let amrex_norm = amrex_t * at;
            println!(
                "{:<14} {:>3} {:>10.2} {:>9} {:>9} {:>12} {:>9.2}   (AMReX {:.1} ms; normalised time ratio, <1 is faster)",
                "fill_boundary", threads, t * 1e3, "-", "-", "-", ours_norm / amrex_norm, amrex_t * 1e3
            );
        });
    }
}
