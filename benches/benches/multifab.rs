//! MultiFab kernels at 256³ (criterion), each against a STREAM triad measured in the same
//! run: saxpy, the 7-point Laplacian, the 2-component `div(beta grad phi)`, `norm2`,
//! `dot`, `sum` and `fill_boundary` (max grid 32, 2 ghosts, periodic), with 1 and 2
//! threads. Every call starts from a cold cache (`CacheFlush`, outside the timing), as
//! in the `multifab_table` binary, and the summary at the end prints each kernel's
//! median (best) time, GB/s and ratio to the triad of its thread count.
//!
//! Criterion measures one kernel after the other, so machine drift between the triad and
//! a kernel moves the ratio; the table binary alternates them call by call instead.
//!
//! `cargo bench -p amrex-benches --bench multifab -- --warm-up-time 1 --measurement-time 3`

use core::hint::black_box;
use core::time::Duration;

use amrex_benches::{
    CacheFlush, MultiFabCase, Recorder, VarCoefCase, div_beta_grad, laplacian, triad,
};
use amrex_multifab::Tiling;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const N: i32 = 256;

/// Per-call times: (threads, kernel).
static TIMES: Recorder<(usize, &str)> = Recorder::new();

fn bench(c: &mut Criterion) {
    let MultiFabCase {
        domain,
        x,
        mut y,
        phi,
        mut lap,
        mut fb,
        period,
    } = MultiFabCase::new(N);
    let VarCoefCase {
        phi: phi2,
        beta,
        out: mut div2,
    } = VarCoefCase::new(N);
    let cells = domain.num_pts();
    let len = cells as usize;
    let (mut a, b, cc) = (vec![0.0f64; len], vec![1.0f64; len], vec![2.0f64; len]);
    amrex_multifab::reset_comm_profile();
    fb.fill_boundary(period).unwrap();
    // FillBoundary's bytes as AMReX counts them: ghost cells written and their sources read.
    let fb_bytes = 2 * amrex_multifab::comm_profile().bytes_local;
    let flush = CacheFlush::new();
    let mut kernels: Vec<(&'static str, u64)> = Vec::new();

    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        let mut g = c.benchmark_group(format!("multifab_256_{threads}thr"));
        g.sample_size(10);
        let mut run = |name: &'static str, bytes: u64, f: &mut (dyn FnMut() + Send)| {
            g.throughput(Throughput::Bytes(bytes));
            g.bench_function(name, |bch| {
                bch.iter_custom(|it| {
                    pool.install(|| TIMES.timed_cold((threads, name), it, &flush, &mut *f))
                });
            });
            if threads == 1 {
                kernels.push((name, bytes));
            }
        };
        run("stream_triad", 24 * cells, &mut || {
            triad(&mut a, &b, &cc, 3.0)
        });
        run("saxpy", 24 * cells, &mut || {
            y.saxpy(1e-3, &x, 0, 0..1, 0).unwrap()
        });
        run("laplacian", 16 * cells, &mut || {
            laplacian(&mut lap, &phi, Tiling::Default)
        });
        run("div_beta_grad2", 40 * cells, &mut || {
            div_beta_grad(&mut div2, &phi2, &beta, Tiling::Default)
        });
        run("norm2", 8 * cells, &mut || {
            black_box(x.norm2(0..1, 0).unwrap());
        });
        run("dot", 16 * cells, &mut || {
            black_box(x.dot(&y, 0, 0..1, 0).unwrap());
        });
        run("sum", 8 * cells, &mut || {
            black_box(x.sum(0..1, 0).unwrap());
        });
        run("fill_boundary_mgs32_ng2", fb_bytes, &mut || {
            fb.fill_boundary(period).unwrap()
        });
        g.finish();
    }

    println!(
        "\nMultiFab kernels, {N}³, cold cache: median (best) per call, GB/s, ratio to the triad"
    );
    for threads in [1usize, 2] {
        let Some((tm, tb)) = TIMES.median_min(&(threads, "stream_triad")) else {
            continue;
        };
        for &(name, bytes) in &kernels {
            let Some((m, bst)) = TIMES.median_min(&(threads, name)) else {
                continue;
            };
            let gbs = |t: Duration| bytes as f64 / t.as_secs_f64() / 1e9;
            let triad = |t: Duration| 24.0 * cells as f64 / t.as_secs_f64() / 1e9;
            println!(
                "  {threads} thr {name:<24} {:>7.2} ({:>7.2}) ms  {:>6.2} ({:>6.2}) GB/s  ratio {:.2} ({:.2})",
                m.as_secs_f64() * 1e3,
                bst.as_secs_f64() * 1e3,
                gbs(m),
                gbs(bst),
                gbs(m) / triad(tm),
                gbs(bst) / triad(tb)
            );
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
