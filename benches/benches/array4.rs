//! `Array4` kernels against plain slice loops, measured in the same run.
//!
//! Two kernels over a 256³ box of `f64` (set `ARRAY4_BENCH_N` for another edge):
//! - a 7-point Laplacian `out = Σ neighbours - 6 phi` reading `phi` over the box grown by
//!   one ghost cell;
//! - a saxpy `y += a x`.
//!
//! Each is written four ways: a plain slice loop (the baseline), checked `Array4`
//! indexing `a[(i, j, k)]` in a triple loop, `for_each_cell` with `get_unchecked`, and
//! the safe helpers (`stencil_mut_with` / `zip_mut_with`). Criterion prints its own
//! statistics; at the end a summary gives each variant's median time, effective
//! bandwidth (Laplacian: one read and one write per cell; saxpy: two reads and one
//! write) and its ratio of throughput to the slice loop (1.0 = as fast).
//!
//! A third group runs the MultiFab stencils of `benches/src/lib.rs` (the 7-point
//! Laplacian, `stencil_mut_with`, 16 B per cell; the 2-component `div(beta grad phi)`,
//! `stencil2_mut_with`, 40 B per cell) on 256³ cells (max grid 64, `MFIter`'s default
//! tiles) against a STREAM triad in the same run, with 1 and 2 threads, every call from a
//! cold cache (`CacheFlush`), and prints each ratio to the triad (targets: 0.8 and 0.6).
//!
//! `cargo bench -p amrex-benches --bench array4 -- --warm-up-time 1 --measurement-time 3`

use core::hint::black_box;
use core::time::Duration;

use amrex_array4::{Array4, Array4Mut, IndexBox, IntVect, Stencil, for_each_cell};
use amrex_benches::{
    CacheFlush, MultiFabCase, Recorder, VarCoefCase, div_beta_grad, env_or,
    laplacian as mf_laplacian, triad,
};
use amrex_multifab::Tiling;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// Per-call times recorded by each (kernel, variant), for the summary.
static TIMES: Recorder<(&str, &str)> = Recorder::new();

fn edge() -> i32 {
    env_or("ARRAY4_BENCH_N", 256)
}

/// Times `iters` calls of `f` and records the mean per call.
fn timed(kernel: &'static str, variant: &'static str, iters: u64, f: impl FnMut()) -> Duration {
    TIMES.timed((kernel, variant), iters, f)
}

// ---------------------------------------------------------------- Laplacian

/// Baseline: rows as slices of known length, so the i-loop has no bounds checks.
fn lap_slices(phi: &[f64], out: &mut [f64], n: usize) {
    let g = n + 2; // grown edge
    for k in 0..n {
        for j in 0..n {
            let c = ((k + 1) * g + (j + 1)) * g; // start of the grown row at (j, k)
            let o = &mut out[(k * n + j) * n..][..n];
            let mid = &phi[c..][..n + 2];
            let jm = &phi[c - g + 1..][..n];
            let jp = &phi[c + g + 1..][..n];
            let km = &phi[c - g * g + 1..][..n];
            let kp = &phi[c + g * g + 1..][..n];
            for i in 0..n {
                o[i] = mid[i] + mid[i + 2] + jm[i] + jp[i] + km[i] + kp[i] - 6.0 * mid[i + 1];
            }
        }
    }
}

fn lap_index(phi: Array4<'_, f64>, out: &mut Array4Mut<'_, f64>, bx: IndexBox) {
    let (lo, hi) = (bx.lo(), bx.hi());
    for k in lo[2]..=hi[2] {
        for j in lo[1]..=hi[1] {
            for i in lo[0]..=hi[0] {
                out[(i, j, k)] = phi[(i - 1, j, k)]
                    + phi[(i + 1, j, k)]
                    + phi[(i, j - 1, k)]
                    + phi[(i, j + 1, k)]
                    + phi[(i, j, k - 1)]
                    + phi[(i, j, k + 1)]
                    - 6.0 * phi[(i, j, k)];
            }
        }
    }
}

fn lap_for_each_cell(phi: Array4<'_, f64>, out: &mut Array4Mut<'_, f64>, bx: IndexBox) {
    assert!(out.index_box().contains_box(&bx) && phi.index_box().contains_box(&bx.grow(1)));
    // Capture the views by value (`move`, after a reborrow) so their fields stay in
    // registers: a view captured by reference is reloaded after every store.
    let mut out = out.reborrow();
    for_each_cell(bx, move |i, j, k| {
        // SAFETY: checked above: (i, j, k) is in `out`'s box and its neighbours in `phi`'s.
        let p = |a: i32, b: i32, c: i32| unsafe { *phi.get_unchecked(a, b, c, 0) };
        let v = p(i - 1, j, k)
            + p(i + 1, j, k)
            + p(i, j - 1, k)
            + p(i, j + 1, k)
            + p(i, j, k - 1)
            + p(i, j, k + 1)
            - 6.0 * p(i, j, k);
        // SAFETY: as above.
        unsafe { *out.get_unchecked_mut(i, j, k, 0) = v };
    });
}

fn lap_stencil(phi: Array4<'_, f64>, out: &mut Array4Mut<'_, f64>, bx: IndexBox) {
    out.stencil_mut_with(phi, bx, |o, s: Stencil<'_, f64, 1>| {
        *o = s.at(-1, 0, 0)
            + s.at(1, 0, 0)
            + s.at(0, -1, 0)
            + s.at(0, 1, 0)
            + s.at(0, 0, -1)
            + s.at(0, 0, 1)
            - 6.0 * s.center();
    });
}

fn laplacian(c: &mut Criterion) {
    let n = edge();
    let bx = IndexBox::new(IntVect::ZERO, IntVect::splat(n - 1));
    let g = bx.grow(1);
    let cells = bx.num_pts() as usize;
    let phi: Vec<f64> = (0..g.num_pts()).map(|v| (v % 1013) as f64 * 0.5).collect();
    let mut reference = vec![0.0; cells];
    lap_slices(&phi, &mut reference, n as usize);
    let mut out = vec![0.0; cells];
    let pa = Array4::new(&phi, g, 1);

    // All variants compute the same numbers.
    for f in [lap_index, lap_for_each_cell, lap_stencil] {
        out.fill(0.0);
        f(pa, &mut Array4Mut::new(&mut out, bx, 1), bx);
        assert!(
            out == reference,
            "a Laplacian variant disagrees with the slice loop"
        );
    }

    let mut grp = c.benchmark_group("laplacian7");
    grp.sample_size(10); // each call moves ~270 MB: few, long samples
    grp.throughput(Throughput::Bytes(2 * 8 * cells as u64));
    grp.bench_function("slice loop", |b| {
        b.iter_custom(|it| {
            timed("laplacian7", "slice loop", it, || {
                lap_slices(black_box(&phi), &mut out, n as usize)
            })
        });
    });
    grp.bench_function("Array4 index", |b| {
        b.iter_custom(|it| {
            let mut o = Array4Mut::new(&mut out, bx, 1);
            timed("laplacian7", "Array4 index", it, || {
                lap_index(black_box(pa), &mut o, bx)
            })
        });
    });
    grp.bench_function("for_each_cell", |b| {
        b.iter_custom(|it| {
            let mut o = Array4Mut::new(&mut out, bx, 1);
            timed("laplacian7", "for_each_cell", it, || {
                lap_for_each_cell(black_box(pa), &mut o, bx)
            })
        });
    });
    grp.bench_function("stencil_mut_with", |b| {
        b.iter_custom(|it| {
            let mut o = Array4Mut::new(&mut out, bx, 1);
            timed("laplacian7", "stencil_mut_with", it, || {
                lap_stencil(black_box(pa), &mut o, bx)
            })
        });
    });
    grp.finish();
    black_box(&out);
}

// ---------------------------------------------------------------- saxpy

fn saxpy_slices(a: f64, x: &[f64], y: &mut [f64]) {
    for (y, x) in y.iter_mut().zip(x) {
        *y += a * x;
    }
}

fn saxpy_index(a: f64, x: Array4<'_, f64>, y: &mut Array4Mut<'_, f64>, bx: IndexBox) {
    let (lo, hi) = (bx.lo(), bx.hi());
    for k in lo[2]..=hi[2] {
        for j in lo[1]..=hi[1] {
            for i in lo[0]..=hi[0] {
                y[(i, j, k)] += a * x[(i, j, k)];
            }
        }
    }
}

fn saxpy_for_each_cell(a: f64, x: Array4<'_, f64>, y: &mut Array4Mut<'_, f64>, bx: IndexBox) {
    assert!(y.index_box().contains_box(&bx) && x.index_box().contains_box(&bx));
    let mut y = y.reborrow();
    for_each_cell(bx, move |i, j, k| {
        // SAFETY: checked above: (i, j, k) is inside both views.
        let xv = unsafe { *x.get_unchecked(i, j, k, 0) };
        // SAFETY: as above.
        unsafe { *y.get_unchecked_mut(i, j, k, 0) += a * xv };
    });
}

fn saxpy_zip(a: f64, x: Array4<'_, f64>, y: &mut Array4Mut<'_, f64>, bx: IndexBox) {
    y.zip_mut_with(x, bx, |y, x| *y += a * x);
}

fn saxpy(c: &mut Criterion) {
    let n = edge();
    let bx = IndexBox::new(IntVect::ZERO, IntVect::splat(n - 1));
    let cells = bx.num_pts() as usize;
    let x: Vec<f64> = (0..cells).map(|v| (v % 977) as f64).collect();
    let mut y = vec![1.0; cells];
    let a = 1e-9;
    let xa = Array4::new(&x, bx, 1);

    let mut grp = c.benchmark_group("saxpy");
    grp.sample_size(10);
    grp.throughput(Throughput::Bytes(3 * 8 * cells as u64));
    grp.bench_function("slice loop", |b| {
        b.iter_custom(|it| {
            timed("saxpy", "slice loop", it, || {
                saxpy_slices(black_box(a), &x, &mut y)
            })
        });
    });
    grp.bench_function("Array4 index", |b| {
        b.iter_custom(|it| {
            let mut ya = Array4Mut::new(&mut y, bx, 1);
            timed("saxpy", "Array4 index", it, || {
                saxpy_index(black_box(a), xa, &mut ya, bx)
            })
        });
    });
    grp.bench_function("for_each_cell", |b| {
        b.iter_custom(|it| {
            let mut ya = Array4Mut::new(&mut y, bx, 1);
            timed("saxpy", "for_each_cell", it, || {
                saxpy_for_each_cell(black_box(a), xa, &mut ya, bx)
            })
        });
    });
    grp.bench_function("zip_mut_with", |b| {
        b.iter_custom(|it| {
            let mut ya = Array4Mut::new(&mut y, bx, 1);
            timed("saxpy", "zip_mut_with", it, || {
                saxpy_zip(black_box(a), xa, &mut ya, bx)
            })
        });
    });
    grp.finish();
    black_box(&y);
}

// ---------------------------------------------------------------- MultiFab stencils

/// Per-call times of the MultiFab stencils and their triad: (threads, kernel).
static MF_TIMES: Recorder<(usize, &str)> = Recorder::new();

fn multifab_stencils(c: &mut Criterion) {
    let n = 256;
    let MultiFabCase { phi, mut lap, .. } = MultiFabCase::new(n);
    let VarCoefCase {
        phi: phi2,
        beta,
        out: mut div2,
    } = VarCoefCase::new(n);
    let cells = u64::from(n.unsigned_abs()).pow(3);
    let len = cells as usize;
    let (mut a, b, cc) = (vec![0.0f64; len], vec![1.0f64; len], vec![2.0f64; len]);
    let flush = CacheFlush::new();
    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        let mut g = c.benchmark_group(format!("multifab stencils {threads} thr"));
        g.sample_size(10);
        let mut run = |name: &'static str, bytes: u64, f: &mut (dyn FnMut() + Send)| {
            g.throughput(Throughput::Bytes(bytes * cells));
            g.bench_function(name, |bch| {
                bch.iter_custom(|it| {
                    pool.install(|| MF_TIMES.timed_cold((threads, name), it, &flush, &mut *f))
                });
            });
        };
        run("stream triad", 24, &mut || triad(&mut a, &b, &cc, 3.0));
        run("laplacian", 16, &mut || {
            mf_laplacian(&mut lap, &phi, Tiling::Default)
        });
        run("div_beta_grad2", 40, &mut || {
            div_beta_grad(&mut div2, &phi2, &beta, Tiling::Default)
        });
        g.finish();
    }
    println!(
        "\nMultiFab stencils, 256³, default tiles, cold cache: median (best) per call; ratio to the triad"
    );
    for threads in [1usize, 2] {
        let Some((tm, tb)) = MF_TIMES.median_min(&(threads, "stream triad")) else {
            continue;
        };
        for (name, bytes) in [("laplacian", 16.0), ("div_beta_grad2", 40.0)] {
            let Some((m, bst)) = MF_TIMES.median_min(&(threads, name)) else {
                continue;
            };
            let ratio = |t: Duration, base: Duration| {
                (bytes / t.as_secs_f64()) / (24.0 / base.as_secs_f64())
            };
            println!(
                "  {threads} thr {name:<15} {:>7.2} ({:>7.2}) ms  ratio {:.2} ({:.2})",
                m.as_secs_f64() * 1e3,
                bst.as_secs_f64() * 1e3,
                ratio(m, tm),
                ratio(bst, tb)
            );
        }
    }
}

/// The same-run summary: median (and best) per call of every variant, and its ratio to
/// the slice loop. Criterion's warm-up calls are recorded too; they rarely move the
/// median, and on a shared machine the best time is the better estimate.
fn summary(_: &mut Criterion) {
    let n = edge() as f64;
    println!(
        "\nArray4 vs slice loop, {0}³ f64 cells: median (best) per call; ratio = slice-loop time / time",
        edge()
    );
    for kernel in ["laplacian7", "saxpy"] {
        let bytes = if kernel == "saxpy" { 24.0 } else { 16.0 } * n * n * n;
        let Some((base_med, base_min)) = TIMES.median_min(&(kernel, "slice loop")) else {
            continue;
        };
        for variant in [
            "slice loop",
            "Array4 index",
            "for_each_cell",
            "stencil_mut_with",
            "zip_mut_with",
        ] {
            let Some((med, min)) = TIMES.median_min(&(kernel, variant)) else {
                continue;
            };
            let gbs = |t: Duration| bytes / t.as_secs_f64() / 1e9;
            println!(
                "  {kernel:<11} {variant:<17} {:>7.2} ({:>7.2}) ms  {:>6.2} ({:>6.2}) GB/s  ratio {:.3} ({:.3})",
                med.as_secs_f64() * 1e3,
                min.as_secs_f64() * 1e3,
                gbs(med),
                gbs(min),
                base_med.as_secs_f64() / med.as_secs_f64(),
                base_min.as_secs_f64() / min.as_secs_f64(),
            );
        }
    }
}

criterion_group!(benches, laplacian, saxpy, summary, multifab_stencils);
criterion_main!(benches);
