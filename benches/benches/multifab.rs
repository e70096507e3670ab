//! MultiFab kernels at 256³ (criterion), against a STREAM triad measured in the same run.
//! The same kernels print a table of GB/s and ratios to the triad in
//! `cargo run --release -p amrex-benches --bin multifab_table`.

use core::hint::black_box;

use amrex_benches::{MultiFabCase, laplacian, triad};
use amrex_multifab::Tiling;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const N: i32 = 256;

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
    let cells = domain.num_pts();
    let len = cells as usize;
    let (mut a, b, cc) = (vec![0.0f64; len], vec![1.0f64; len], vec![2.0f64; len]);

    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        let mut g = c.benchmark_group(format!("multifab_256_{threads}thr"));
        g.sample_size(10);
        g.throughput(Throughput::Bytes(24 * cells));
        g.bench_function("stream_triad", |bch| {
            bch.iter(|| pool.install(|| triad(&mut a, &b, &cc, 3.0)))
        });
        g.bench_function("saxpy", |bch| {
            bch.iter(|| pool.install(|| y.saxpy(1e-3, &x, 0, 0..1, 0).unwrap()))
        });
        g.throughput(Throughput::Bytes(16 * cells));
        g.bench_function("laplacian", |bch| {
            bch.iter(|| pool.install(|| laplacian(&mut lap, &phi, Tiling::Default)))
        });
        g.throughput(Throughput::Bytes(8 * cells));
        g.bench_function("norm2", |bch| {
            bch.iter(|| pool.install(|| black_box(x.norm2(0..1, 0).unwrap())))
        });
        g.bench_function("sum", |bch| {
            bch.iter(|| pool.install(|| black_box(x.sum(0..1, 0).unwrap())))
        });
        g.throughput(Throughput::Elements(1));
        g.bench_function("fill_boundary_mgs32_ng2", |bch| {
            bch.iter(|| pool.install(|| fb.fill_boundary(period).unwrap()))
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
