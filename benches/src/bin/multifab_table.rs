//! MultiFab bandwidth table: saxpy (built in, on slabs; and through `zip_mut_with` on
//! MFIter's default tiles and on whole boxes), the 7-point Laplacian through `Array4`
//! tiles, a 2-component `div(beta grad phi)` (cell-centred beta, `stencil2_mut_with`),
//! `norm2`, `dot` and `sum` on N³ cells (max grid size 64), and `fill_boundary` on N³
//! (max grid size 32, 2 ghost cells, periodic; all ghosts, then the face ghosts only),
//! with 1 and 2 threads. FillBoundary's bytes are counted as AMReX counts them (ghost
//! cells written and their sources read).
//!
//! Each kernel alternates call by call with a STREAM triad in the same pool, and its
//! ratio is to that triad, so that both see the same machine. Every call starts from a
//! cold cache ([`CacheFlush`]): on machines whose last-level cache holds a 256³
//! MultiFab the ratios would otherwise measure the cache.
//!
//! `cargo run --release -p amrex-benches --bin multifab_table [-- N REPS]` (N = 256 and
//! REPS = 5 by default; the best of REPS calls is reported). `MULTIFAB_TABLE_ONLY=fill,sum`
//! runs only the kernels whose names contain one of the words. `LAP_TILE_Y=ty` and
//! `LAP_TILE_Z=tz` tile the stencils `(1024000, ty, tz)` instead of AMReX's default
//! `(1024000, 8, 8)`.

use core::hint::black_box;

use amrex_benches::{
    CacheFlush, MultiFabCase, VarCoefCase, best_cold_paired, div_beta_grad, env_or, laplacian,
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
    // `MULTIFAB_TABLE_ONLY=fill,sum`: only the kernels whose names contain one of these.
    let only: Vec<String> = std::env::var("MULTIFAB_TABLE_ONLY")
        .map(|s| s.split(',').map(str::to_owned).collect())
        .unwrap_or_default();
    println!(
        "MultiFab benchmark, {n}^3 cells, best of {reps}, each call from a cold cache \
         ({} MiB read before it)",
        flush.bytes() >> 20
    );
    println!(
        "{:<15} {:>3} {:>10} {:>9} {:>9}",
        "kernel", "thr", "time [ms]", "GB/s", "/triad"
    );
    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("thread pool");
        pool.install(|| {
            // Each kernel alternates call by call with a triad, so that both see the same
            // machine (the bandwidth of a shared VM drifts by 10-20% within minutes), and
            // its ratio is to the triad measured alongside it.
            let mut t_triad = 0.0;
            let mut row = |name: &str, bytes: f64, f: &mut dyn FnMut()| -> Option<f64> {
                if !only.is_empty() && !only.iter().any(|o| name.contains(o.as_str())) {
                    return None;
                }
                let (t, tt) = best_cold_paired(reps, &flush, f, &mut || triad(&mut a, &b, &c, 3.0));
                if t_triad == 0.0 {
                    t_triad = tt;
                    println!(
                        "{:<15} {threads:>3} {:>10.2} {:>9.2} {:>9.2}",
                        "stream triad",
                        tt * 1e3,
                        24.0 * cells / tt / 1e9,
                        1.0
                    );
                }
                let gbs = bytes * cells / t / 1e9;
                println!(
                    "{name:<15} {threads:>3} {:>10.2} {gbs:>9.2} {:>9.2}",
                    t * 1e3,
                    gbs / (24.0 * cells / tt / 1e9)
                );
                Some(t)
            };
            row("saxpy", 24.0, &mut || {
                y.saxpy(1e-3, &x, 0, 0..1, 0).unwrap()
            });
            // The same saxpy on MFIter's default tiles and on whole boxes (docs/multifab.md,
            // "Tiling": why the built-in operations run on slabs).
            row("saxpy tiles", 24.0, &mut || {
                saxpy_tiles(&mut y, 1e-3, &x, Tiling::Default)
            });
            row("saxpy boxes", 24.0, &mut || {
                saxpy_tiles(&mut y, 1e-3, &x, Tiling::None)
            });
            row("laplacian", 16.0, &mut || laplacian(&mut lap, &phi, tiling));
            // 2-component div(beta grad phi): phi (2) and beta (1) read, out (2) written.
            row("div_beta_grad2", 40.0, &mut || {
                div_beta_grad(&mut div2, &phi2, &beta, tiling)
            });
            row("norm2", 8.0, &mut || {
                black_box(x.norm2(0..1, 0).unwrap());
            });
            row("dot", 16.0, &mut || {
                black_box(x.dot(&y, 0, 0..1, 0).unwrap());
            });
            row("sum", 8.0, &mut || {
                black_box(x.sum(0..1, 0).unwrap());
            });
            // FillBoundary's bytes as AMReX counts them: every ghost cell it fills is
            // written once and its source read once (from the copy profile of one call).
            amrex_multifab::reset_comm_profile();
            fb.fill_boundary(period).unwrap();
            let fb_bytes = 2.0 * amrex_multifab::comm_profile().bytes_local as f64;
            let t = row("fill_boundary", fb_bytes / cells, &mut || {
                fb.fill_boundary(period).unwrap()
            });
            // The same with the face ghosts only (no edges or corners: 6 of the 26 tags per
            // box), which shows what the 20 small tags of 2-cell rows cost.
            amrex_multifab::reset_comm_profile();
            fb.fill_boundary_with(period, FillPattern::Cross, .., fb.n_grow())
                .unwrap();
            let cross_bytes = 2.0 * amrex_multifab::comm_profile().bytes_local as f64;
            row("fill_bdry faces", cross_bytes / cells, &mut || {
                fb.fill_boundary_with(period, FillPattern::Cross, .., fb.n_grow())
                    .unwrap()
            });
            let tags = fb
                .distribution_map()
                .fill_boundary_plan(fb.box_array(), fb.n_grow(), period, FillPattern::Full, 0)
                .local()
                .len();
            if let (Some(t), 1) = (t, threads) {
                // What a call costs besides its copies (argument checks, the cached plan's
                // lookup, the message bookkeeping): its wall time less the time the copy
                // profile counts, over warm calls.
                let calls = 20;
                amrex_multifab::reset_comm_profile();
                let start = std::time::Instant::now();
                for _ in 0..calls {
                    fb.fill_boundary(period).unwrap();
                }
                let wall = start.elapsed().as_secs_f64();
                let p = amrex_multifab::comm_profile();
                let copies = (p.pack_ns + p.local_ns) as f64 * 1e-9;
                println!(
                    "  fill_boundary: {:.1} MB moved per call, {tags} tags, {:.1} ns per tag; \
                     {:.1} us per call outside the copies",
                    fb_bytes / 1e6,
                    t * 1e9 / tags as f64,
                    (wall - copies) * 1e6 / f64::from(calls)
                );
            }
        });
    }
}
