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

use amrex_benches::{MultiFabCase, TriadTable, VarCoefCase, div_beta_grad, laplacian, triad};
use amrex_multifab::Tiling;
use criterion::{Criterion, criterion_group, criterion_main};

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
    let mut table = TriadTable::new(24 * cells);
    for threads in [1usize, 2] {
        table.group(c, "multifab_256", threads, |run| {
            run.bench("stream_triad", 24 * cells, &mut || {
                triad(&mut a, &b, &cc, 3.0)
            });
            run.bench("saxpy", 24 * cells, &mut || {
                y.saxpy(1e-3, &x, 0, 0..1, 0).unwrap()
            });
            run.bench("laplacian", 16 * cells, &mut || {
                laplacian(&mut lap, &phi, Tiling::Default)
            });
            run.bench("div_beta_grad2", 40 * cells, &mut || {
                div_beta_grad(&mut div2, &phi2, &beta, Tiling::Default)
            });
            run.bench("norm2", 8 * cells, &mut || {
                black_box(x.norm2(0..1, 0).unwrap());
            });
            run.bench("dot", 16 * cells, &mut || {
                black_box(x.dot(&y, 0, 0..1, 0).unwrap());
            });
            run.bench("sum", 8 * cells, &mut || {
                black_box(x.sum(0..1, 0).unwrap());
            });
            run.bench("fill_boundary_mgs32_ng2", fb_bytes, &mut || {
                fb.fill_boundary(period).unwrap()
            });
        });
    }
    table.print(&format!("MultiFab kernels, {N}³, cold cache"), |_| None);
}

criterion_group!(benches, bench);
criterion_main!(benches);
