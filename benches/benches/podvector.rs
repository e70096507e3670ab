//! `PodVector` against `Vec` and `memcpy`, measured in the same run and printed as ratios.
//!
//! - `push` of 10^8 `f64` under each growth strategy vs `Vec::<f64>::push`.
//! - bulk `extend_from_slice` of 10^8 `f64` vs `copy_nonoverlapping` into a preallocated
//!   buffer (memcpy bandwidth).
//!
//! `cargo bench -p amrex-benches --bench podvector` (set `PODVECTOR_BENCH_N` for another size).
//! A plain timing harness (best of three) rather than criterion: each case moves 800 MB,
//! far above criterion's sampling scale, and the point is the ratio within one run.

use amrex_podvector::{GrowthStrategy, PodVector};
use core::hint::black_box;
use core::time::Duration;
use std::time::Instant;

fn best_of<F: FnMut() -> usize>(mut f: F) -> Duration {
    (0..3)
        .map(|_| {
            let t = Instant::now();
            black_box(f());
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    let n: usize = std::env::var("PODVECTOR_BENCH_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000_000);
    println!(
        "podvector benchmark, n = {n} f64 ({} MB)",
        n * 8 / 1_000_000
    );

    let vec_push = best_of(|| {
        let mut v = Vec::<f64>::new();
        for i in 0..n {
            v.push(i as f64);
        }
        black_box(&v);
        v.len()
    });
    println!(
        "  Vec::push                       {:>8.1} ms  (baseline)",
        ms(vec_push)
    );
    for s in [
        GrowthStrategy::Geometric,
        GrowthStrategy::Poisson,
        GrowthStrategy::Exact,
    ] {
        let mut reallocs = 0usize;
        let t = best_of(|| {
            let mut v = PodVector::<f64>::new().with_growth_strategy(s);
            reallocs = 0;
            for i in 0..n {
                if v.len() == v.capacity() {
                    reallocs += 1;
                }
                v.push(i as f64);
            }
            black_box(&v);
            v.len()
        });
        let label = format!("PodVector::push ({s})");
        println!(
            "  {label:<31} {:>8.1} ms  ratio {:.2}  ({reallocs} reallocations)",
            ms(t),
            ratio(t, vec_push)
        );
    }

    let src: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let mut dst = vec![0.0f64; n];
    let memcpy = best_of(|| {
        // SAFETY: `src` and `dst` are distinct buffers of `n` elements.
        unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), dst.as_mut_ptr(), n) };
        black_box(&dst);
        n
    });
    let gbs = |t: Duration| (n * 8) as f64 / t.as_secs_f64() / 1e9;
    println!(
        "  memcpy into preallocated        {:>8.1} ms  {:.1} GB/s (baseline)",
        ms(memcpy),
        gbs(memcpy)
    );
    let mut pv = PodVector::<f64>::with_capacity(n);
    let extend = best_of(|| {
        pv.clear();
        pv.extend_from_slice(&src);
        black_box(&pv);
        pv.len()
    });
    println!(
        "  PodVector::extend_from_slice    {:>8.1} ms  {:.1} GB/s  ratio {:.2}",
        ms(extend),
        gbs(extend),
        ratio(extend, memcpy)
    );
    let fresh = best_of(|| {
        let mut v = PodVector::<f64>::new();
        v.extend_from_slice(&src);
        black_box(&v);
        v.len()
    });
    println!(
        "  PodVector::extend (fresh alloc) {:>8.1} ms  {:.1} GB/s  ratio {:.2}",
        ms(fresh),
        gbs(fresh),
        ratio(fresh, memcpy)
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}
