//! MultiFab bandwidth table: saxpy (built in, on slabs; and through `zip_mut_with` on
//! MFIter's default tiles and on whole boxes), the 7-point Laplacian through `Array4` tiles, a
//! 2-component `div(beta grad phi)` (cell-centred beta, `stencil2_mut_with`), `norm2`,
//! `dot` and `sum` on N³ cells (max grid size 64), and `fill_boundary` on N³ (max grid size 32,
//! 2 ghost cells, periodic), with 1 and 2 threads, each against a STREAM triad measured
//! in the same run and pool, so the ratio column compares like with like. FillBoundary's
//! bytes are counted as AMReX counts them (ghost cells written and their sources read).
//! Every call, the triad's too, starts from a cold cache ([`CacheFlush`]): on machines
//! whose last-level cache holds a 256³ MultiFab the ratios would otherwise measure the
//! cache.
//!
//! `cargo run --release -p amrex-benches --bin multifab_table [-- N REPS]` (N = 256 and
//! REPS = 5 by default; the best of REPS runs is reported). `LAP_TILE_Y=ty` and
//! `LAP_TILE_Z=tz` tile the Laplacian `(1024000, ty, tz)` instead of AMReX's default
//! `(1024000, 8, 8)`.

use core::hint::black_box;

use amrex_benches::{
    CacheFlush, MultiFabCase, VarCoefCase, best_cold, div_beta_grad, env_or, laplacian,
    saxpy_tiles, triad,
};
use amrex_multifab::{FillPattern, IntVect, Tiling};

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n = i32::try_from(args.first().copied().unwrap_or(256)).expect("N fits i32");
    let reps = args.get(1).copied().unwrap_or(5);
    let tiling = match (env_or("LAP_TILE_Y", 0), env_or("LAP_TILE_Z", 0)) {
        (0, 0) => Tiling::Default,
        (ty, tz) => Tiling::Size(IntVect::new(
            1_024_000,
            if ty == 0 { 8 } else { ty },
            if tz == 0 { 8 } else { tz },
        )),
    };
    let MultiFabCase {
        domain,
        x,
        mut y,
        phi,
        mut lap,
        mut fb,
        period,
    } = MultiFabCase::new(n);
    let cells = domain.num_pts() as f64;
    let VarCoefCase {
        phi: phi2,
        beta,
        out: mut div2,
    } = VarCoefCase::new(n);

    let len = domain.num_pts() as usize;
    let (mut a, b, c) = (vec![0.0f64; len], vec![1.0f64; len], vec![2.0f64; len]);

    let flush = CacheFlush::new();
    println!(
        "MultiFab benchmark, {n}^3 cells, best of {reps}, each call from a cold cache \
         ({} MiB read before it)",
        flush.bytes() >> 20
    );
    println!(
        "{:<14} {:>3} {:>10} {:>9} {:>9}",
        "kernel", "thr", "time [ms]", "GB/s", "/triad"
    );
    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("thread pool");
        pool.install(|| {
            let t_triad = best_cold(reps, &flush, || triad(&mut a, &b, &c, 3.0));
            let triad_gbs = 24.0 * cells / t_triad / 1e9;
            let row = |name: &str, bytes: f64, t: f64| {
                let gbs = bytes * cells / t / 1e9;
                println!(
                    "{name:<14} {threads:>3} {:>10.2} {gbs:>9.2} {:>9.2}",
                    t * 1e3,
                    gbs / triad_gbs
                );
            };
            row("stream triad", 24.0, t_triad);
            row(
                "saxpy",
                24.0,
                best_cold(reps, &flush, || y.saxpy(1e-3, &x, 0, 0..1, 0).unwrap()),
            );
            // The same saxpy on MFIter's default tiles and on whole boxes (docs/multifab.md,
            // "Tiling": why the built-in operations run on slabs).
            row(
                "saxpy tiles",
                24.0,
                best_cold(reps, &flush, || {
                    saxpy_tiles(&mut y, 1e-3, &x, Tiling::Default)
                }),
            );
            row(
                "saxpy boxes",
                24.0,
                best_cold(reps, &flush, || saxpy_tiles(&mut y, 1e-3, &x, Tiling::None)),
            );
            row(
                "laplacian",
                16.0,
                best_cold(reps, &flush, || laplacian(&mut lap, &phi, tiling)),
            );
            // 2-component div(beta grad phi): phi (2) and beta (1) read, out (2) written.
            row(
                "div_beta_grad2",
                40.0,
                best_cold(reps, &flush, || {
                    div_beta_grad(&mut div2, &phi2, &beta, tiling)
                }),
            );
            let t = best_cold(reps, &flush, || {
                black_box(x.norm2(0..1, 0).unwrap());
            });
            row("norm2", 8.0, t);
            let t = best_cold(reps, &flush, || {
                black_box(x.dot(&y, 0, 0..1, 0).unwrap());
            });
            row("dot", 16.0, t);
            let t = best_cold(reps, &flush, || {
                black_box(x.sum(0..1, 0).unwrap());
            });
            row("sum", 8.0, t);
            // FillBoundary's bytes as AMReX counts them: every ghost cell it fills is
            // written once and its source read once (from the copy profile of one call).
            amrex_multifab::reset_comm_profile();
            fb.fill_boundary(period).unwrap();
            let fb_bytes = 2.0 * amrex_multifab::comm_profile().bytes_local as f64;
            let t = best_cold(reps, &flush, || fb.fill_boundary(period).unwrap());
            row("fill_boundary", fb_bytes / cells, t);
            let tags = fb
                .distribution_map()
                .fill_boundary_plan(fb.box_array(), fb.n_grow(), period, FillPattern::Full, 0)
                .local()
                .len();
            if threads == 1 {
                println!(
                    "  fill_boundary: {:.1} MB moved per call, {tags} tags, {:.1} ns per tag",
                    fb_bytes / 1e6,
                    t * 1e9 / tags as f64
                );
            }
        });
    }
}
