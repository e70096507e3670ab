//! `BaseFab` reductions (`sum`, `norm2`) over a 256³ box against plain slice loops,
//! measured in the same run.
//!
//! Baselines: the idiomatic one-accumulator slice loop (`iter().sum()`), which cannot
//! vectorise a floating-point sum, and a hand-written 8-accumulator slice loop, the best a
//! plain loop does. `BaseFab` walks rows and uses 8 accumulators per row. The summary
//! gives each variant's median time, bandwidth (8 bytes read per cell) and throughput
//! ratio to the `iter().sum()` baseline.
//!
//! `cargo bench -p amrex-benches --bench basefab -- --warm-up-time 1 --measurement-time 2`
//! (`BASEFAB_BENCH_N` sets the edge, default 256).

use core::hint::black_box;
use core::time::Duration;

use amrex_basefab::{FArrayBox, IndexBox, IntVect};
use amrex_benches::{Recorder, env_or};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// Per-call times recorded by each (kernel, variant), for the summary.
static TIMES: Recorder<(&str, &str)> = Recorder::new();

fn timed(kernel: &'static str, variant: &'static str, iters: u64, f: impl FnMut()) -> Duration {
    TIMES.timed((kernel, variant), iters, f)
}

fn edge() -> i32 {
    env_or("BASEFAB_BENCH_N", 256)
}

fn sum8(x: &[f64]) -> f64 {
    let mut acc = [0.0f64; 8];
    let mut it = x.chunks_exact(8);
    for c in &mut it {
        for l in 0..8 {
            acc[l] += c[l];
        }
    }
    acc.iter().sum::<f64>() + it.remainder().iter().sum::<f64>()
}

fn sq8(x: &[f64]) -> f64 {
    let mut acc = [0.0f64; 8];
    let mut it = x.chunks_exact(8);
    for c in &mut it {
        for l in 0..8 {
            acc[l] += c[l] * c[l];
        }
    }
    acc.iter().sum::<f64>() + it.remainder().iter().map(|v| v * v).sum::<f64>()
}

fn reductions(c: &mut Criterion) {
    let n = edge();
    let bx = IndexBox::new(IntVect::ZERO, IntVect::splat(n - 1));
    let mut fab = FArrayBox::new(bx, 1);
    for (i, v) in fab.as_mut_slice().unwrap().iter_mut().enumerate() {
        *v = (i % 1013) as f64 * 0.001;
    }
    let cells = fab.len();
    let data = fab.as_slice().unwrap().to_vec();
    let rel = |a: f64, b: f64| ((a - b) / b).abs();
    assert!(rel(fab.sum(0..1, bx).unwrap(), data.iter().sum()) < 1e-9);
    assert!(
        rel(
            fab.norm2(0..1, bx).unwrap(),
            data.iter().map(|v| v * v).sum::<f64>().sqrt()
        ) < 1e-9
    );

    for (kernel, variants) in [("sum", 0), ("norm2", 1)] {
        let mut g = c.benchmark_group(kernel);
        g.throughput(Throughput::Bytes(8 * cells as u64));
        g.sample_size(10);
        let d = &data;
        let f = &fab;
        if variants == 0 {
            g.bench_function("slice iter().sum()", |b| {
                b.iter_custom(|it| {
                    timed(kernel, "slice iter().sum()", it, || {
                        black_box(black_box(d).iter().sum::<f64>());
                    })
                });
            });
            g.bench_function("slice 8 accumulators", |b| {
                b.iter_custom(|it| {
                    timed(kernel, "slice 8 accumulators", it, || {
                        black_box(sum8(black_box(d)));
                    })
                });
            });
            g.bench_function("BaseFab::sum", |b| {
                b.iter_custom(|it| {
                    timed(kernel, "BaseFab::sum", it, || {
                        black_box(black_box(f).sum(0..1, bx).unwrap());
                    })
                });
            });
        } else {
            g.bench_function("slice iter().sum()", |b| {
                b.iter_custom(|it| {
                    timed(kernel, "slice iter().sum()", it, || {
                        black_box(black_box(d).iter().map(|v| v * v).sum::<f64>().sqrt());
                    })
                });
            });
            g.bench_function("slice 8 accumulators", |b| {
                b.iter_custom(|it| {
                    timed(kernel, "slice 8 accumulators", it, || {
                        black_box(sq8(black_box(d)).sqrt());
                    })
                });
            });
            g.bench_function("BaseFab::norm2", |b| {
                b.iter_custom(|it| {
                    timed(kernel, "BaseFab::norm2", it, || {
                        black_box(black_box(f).norm2(0..1, bx).unwrap());
                    })
                });
            });
        }
        g.finish();
    }
    summary(8.0 * cells as f64);
}

fn summary(bytes: f64) {
    println!(
        "\nBaseFab reductions, {} cells ({} MiB read per call):",
        bytes / 8.0,
        bytes / 1048576.0
    );
    let median = |k: &(&'static str, &'static str)| TIMES.median_min(k).map(|(m, _)| m);
    for kernel in ["sum", "norm2"] {
        let Some(base) = median(&(kernel, "slice iter().sum()")) else {
            continue;
        };
        for k in TIMES.keys().into_iter().filter(|k| k.0 == kernel) {
            let m = median(&k).unwrap();
            println!(
                "  {:6} {:24} {:>9.3} ms  {:>6.2} GB/s  ratio {:.2}",
                kernel,
                k.1,
                m.as_secs_f64() * 1e3,
                bytes / m.as_secs_f64() / 1e9,
                base.as_secs_f64() / m.as_secs_f64()
            );
        }
    }
}

criterion_group!(benches, reductions);
criterion_main!(benches);
