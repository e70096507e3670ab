//! `PodVector` against `Vec` and `memcpy`, measured in the same run and printed as ratios.
//!
//! Two criterion groups over `N` `f64` (default 10^8, 800 MB per case; set `AMREX_BENCH_N`
//! for another size), each with [`Throughput::Bytes`] so criterion prints GB/s:
//! - `push`: `N` single pushes into an empty vector under each `GrowthStrategy`
//!   (`Geometric`, `Poisson`, `Exact`) against `Vec::<f64>::push` (the baseline);
//! - `extend_from_slice`: one bulk append of `N` elements, into a preallocated
//!   `PodVector` (cleared, capacity kept) and into a fresh one (allocation, page faults and
//!   the final free included), against `copy_from_slice` into a preallocated `Vec` (the
//!   memcpy baseline). `Vec::extend_from_slice` into a fresh `Vec` is shown as the fair
//!   reference for the fresh case.
//!
//! `Exact` grows by one element per push, so it calls `realloc` `N` times; glibc grows large
//! blocks in place or with `mremap`, which keeps it linear but about 4x slower than
//! `Vec::push` (2.3 s per call at 10^8 on the 2-core dev box; the whole 10^8 run takes
//! about 90 s there). Set `AMREX_BENCH_SKIP_EXACT=1` to leave it out (or use a smaller
//! `AMREX_BENCH_N`) where `realloc` copies instead and the case turns quadratic.
//!
//! Each case moves hundreds of megabytes per call, so the groups take 10 samples of one
//! call each (flat sampling; criterion warns that 10 samples do not fit its target time at
//! 10^8, which is expected). Benchmark ids end in `N`, so saved baselines of different
//! sizes are never compared. After criterion's groups a summary times every case again,
//! interleaved (`AMREX_BENCH_ROUNDS` rounds, default 3), and prints the median per call,
//! GB/s and the ratio of throughput to the baseline (1.0 = as fast, below 1 = slower).
//! Interleaved calls start with cold caches, so at small `N` (data that fits in cache) the
//! summary times are above criterion's warm ones; at 10^8 the two agree.
//!
//! `AMREX_BENCH_N=1000000 cargo bench -p amrex-benches --bench podvector -- --warm-up-time 1 --measurement-time 2`

use core::hint::black_box;
use core::time::Duration;
use std::time::Instant;

use amrex_benches::env_or;
use amrex_podvector::{GrowthStrategy, PodVector};
use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};

/// Buffers shared by the cases, allocated (and touched) once.
struct State {
    /// Elements per case.
    n: usize,
    /// Source of the bulk copies.
    src: Vec<f64>,
    /// Preallocated destination of the memcpy baseline.
    dst: Vec<f64>,
    /// Preallocated destination of `PodVector::extend_from_slice`.
    pv: PodVector<f64>,
}

/// One measured case: its group, name, and a call returning something to keep alive.
struct Case {
    group: &'static str,
    name: &'static str,
    /// The baseline of its group.
    baseline: bool,
    run: fn(&mut State) -> usize,
}

fn vec_push(s: &mut State) -> usize {
    let mut v = Vec::<f64>::new();
    for i in 0..s.n {
        v.push(i as f64);
    }
    black_box(&v);
    v.len()
}

fn pod_push(n: usize, strategy: GrowthStrategy) -> usize {
    let mut v = PodVector::<f64>::new().with_growth_strategy(strategy);
    for i in 0..n {
        v.push(i as f64);
    }
    black_box(&v);
    v.len()
}

fn memcpy(s: &mut State) -> usize {
    s.dst.copy_from_slice(black_box(&s.src));
    black_box(&s.dst);
    s.dst.len()
}

fn pod_extend_prealloc(s: &mut State) -> usize {
    s.pv.clear();
    s.pv.extend_from_slice(black_box(&s.src));
    black_box(&s.pv);
    s.pv.len()
}

fn pod_extend_fresh(s: &mut State) -> usize {
    let mut v = PodVector::<f64>::new();
    v.extend_from_slice(black_box(&s.src));
    black_box(&v);
    v.len()
}

fn vec_extend_fresh(s: &mut State) -> usize {
    let mut v = Vec::<f64>::new();
    v.extend_from_slice(black_box(&s.src));
    black_box(&v);
    v.len()
}

fn cases(skip_exact: bool) -> Vec<Case> {
    let mut c = vec![
        Case {
            group: "push",
            name: "Vec::push",
            baseline: true,
            run: vec_push,
        },
        Case {
            group: "push",
            name: "PodVector::push geometric",
            baseline: false,
            run: |s| pod_push(s.n, GrowthStrategy::Geometric),
        },
        Case {
            group: "push",
            name: "PodVector::push poisson",
            baseline: false,
            run: |s| pod_push(s.n, GrowthStrategy::Poisson),
        },
    ];
    if !skip_exact {
        c.push(Case {
            group: "push",
            name: "PodVector::push exact",
            baseline: false,
            run: |s| pod_push(s.n, GrowthStrategy::Exact),
        });
    }
    c.extend([
        Case {
            group: "extend_from_slice",
            name: "memcpy (copy_from_slice)",
            baseline: true,
            run: memcpy,
        },
        Case {
            group: "extend_from_slice",
            name: "PodVector preallocated",
            baseline: false,
            run: pod_extend_prealloc,
        },
        Case {
            group: "extend_from_slice",
            name: "PodVector fresh",
            baseline: false,
            run: pod_extend_fresh,
        },
        Case {
            group: "extend_from_slice",
            name: "Vec fresh (reference)",
            baseline: false,
            run: vec_extend_fresh,
        },
    ]);
    c
}

fn time_one(s: &mut State, run: fn(&mut State) -> usize) -> Duration {
    let t = Instant::now();
    black_box(run(s));
    t.elapsed()
}

fn main() {
    let n: usize = env_or("AMREX_BENCH_N", 100_000_000);
    let skip_exact = env_or("AMREX_BENCH_SKIP_EXACT", 0u8) != 0;
    let rounds: usize = env_or("AMREX_BENCH_ROUNDS", 3usize).max(1);
    let src: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
    let mut state = State {
        n,
        dst: vec![0.0; n],
        pv: PodVector::with_capacity(n),
        src,
    };
    // Touch the preallocated PodVector's pages once so the first sample pays no faults.
    pod_extend_prealloc(&mut state);
    let cases = cases(skip_exact);
    let bytes = (n * size_of::<f64>()) as u64;

    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    for group in ["push", "extend_from_slice"] {
        let mut g = c.benchmark_group(group);
        g.sample_size(10);
        g.sampling_mode(SamplingMode::Flat);
        g.throughput(Throughput::Bytes(bytes));
        for case in cases.iter().filter(|k| k.group == group) {
            g.bench_function(BenchmarkId::new(case.name, n), |b| {
                b.iter_custom(|iters| {
                    (0..iters)
                        .map(|_| time_one(&mut state, case.run))
                        .sum::<Duration>()
                })
            });
        }
        g.finish();
    }
    c.final_summary();

    // Interleaved re-timing for the ratios: every case once per round.
    let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(rounds); cases.len()];
    for _ in 0..rounds {
        for (case, t) in cases.iter().zip(&mut times) {
            t.push(time_one(&mut state, case.run));
        }
    }
    let median = |t: &mut Vec<Duration>| {
        t.sort_unstable();
        t[t.len() / 2]
    };
    let medians: Vec<Duration> = times.iter_mut().map(median).collect();
    let gbs = |t: Duration| bytes as f64 / t.as_secs_f64() / 1e9;
    println!(
        "\nPodVector vs Vec / memcpy, N = {n} f64 ({} MB): median of {rounds} interleaved calls; \
         ratio = baseline time / time",
        bytes / 1_000_000
    );
    let mut base = Duration::ZERO;
    for (case, &t) in cases.iter().zip(&medians) {
        if case.baseline {
            base = t;
            println!("  {}", case.group);
        }
        let note = if case.baseline { "  (baseline)" } else { "" };
        println!(
            "    {:<28} {:>10.2} ms  {:>7.2} GB/s  ratio {:>6.3}{note}",
            case.name,
            t.as_secs_f64() * 1e3,
            gbs(t),
            base.as_secs_f64() / t.as_secs_f64(),
        );
    }
    if skip_exact {
        println!("  (PodVector::push exact skipped: AMREX_BENCH_SKIP_EXACT is set)");
    }
}
