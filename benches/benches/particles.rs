//! Particle push `x += dt * v` over 10⁷ `Particle<2, 0>` as an `ArrayOfStructs` and the
//! same data as a `StructOfArrays<5, 0>` (x, y, z, vx, vy), each against the plain loop it
//! should match: a slice of a plain `#[repr(C)]` struct for AoS, plain `Vec<f64>`s for
//! SoA. The push moves x and y by the two velocity components (`rdata[0..2]`).
//!
//! Bandwidth counts the bytes the push needs (read x, y, vx, vy; write x, y: 48 bytes per
//! particle); the AoS layout also drags z and idcpu through the cache, which is why SoA
//! wins. The summary prints median time, GB/s and the ratio to each layout's plain loop
//! (1.0 = as fast) and SoA over AoS.
//!
//! `cargo bench -p amrex-benches --bench particles -- --warm-up-time 1 --measurement-time 3`
//! (`PARTICLES_BENCH_N` sets the count, default 10⁷).

use core::hint::black_box;
use core::time::Duration;

use amrex_aos::{ArrayOfStructs, Particle, StructOfArrays, idcpu};
use amrex_benches::{Recorder, env_or};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// Per-call times recorded by each variant, for the summary.
static TIMES: Recorder<&str> = Recorder::new();

fn timed(variant: &'static str, iters: u64, f: impl FnMut()) -> Duration {
    TIMES.timed(variant, iters, f)
}

/// The plain baseline struct: same fields and layout as `Particle<2, 0>`.
#[repr(C)]
#[derive(Clone, Copy)]
struct Plain {
    pos: [f64; 3],
    vel: [f64; 2],
    idcpu: u64,
}

const DT: f64 = 1e-3;

#[inline(never)]
fn push_plain(ps: &mut [Plain], dt: f64) {
    for p in ps {
        p.pos[0] += dt * p.vel[0];
        p.pos[1] += dt * p.vel[1];
    }
}

#[inline(never)]
fn push_aos(aos: &mut ArrayOfStructs<Particle<2, 0>>, dt: f64) {
    for p in aos.iter_mut() {
        p.pos[0] += dt * p.rdata[0];
        p.pos[1] += dt * p.rdata[1];
    }
}

#[inline(never)]
fn push_vecs(x: &mut [f64], y: &mut [f64], vx: &[f64], vy: &[f64], dt: f64) {
    for (x, v) in x.iter_mut().zip(vx) {
        *x += dt * v;
    }
    for (y, v) in y.iter_mut().zip(vy) {
        *y += dt * v;
    }
}

#[inline(never)]
fn push_soa(soa: &mut StructOfArrays<5, 0>, dt: f64) {
    let mut c = soa.components_mut();
    let [x, y, _z, vx, vy] = &mut c.reals[..] else {
        unreachable!()
    };
    for (x, v) in x.iter_mut().zip(vx.iter()) {
        *x += dt * v;
    }
    for (y, v) in y.iter_mut().zip(vy.iter()) {
        *y += dt * v;
    }
}

fn count() -> usize {
    env_or("PARTICLES_BENCH_N", 10_000_000)
}

fn push(c: &mut Criterion) {
    let n = count();
    let init = |i: usize| {
        let f = i as f64;
        ([f * 1e-6, 0.5, 0.25], [1.0 + (i % 7) as f64, -2.0])
    };
    let mut plain: Vec<Plain> = (0..n)
        .map(|i| {
            let (pos, vel) = init(i);
            Plain {
                pos,
                vel,
                idcpu: idcpu::make_id_cpu(i as i64 + 1, 0),
            }
        })
        .collect();
    let mut aos: ArrayOfStructs<Particle<2, 0>> = (0..n)
        .map(|i| {
            let (pos, vel) = init(i);
            Particle::with_fields(pos, vel, i as i64 + 1, 0, [])
        })
        .collect();
    let mut soa = StructOfArrays::<5, 0>::new();
    soa.resize(n).unwrap();
    {
        let mut c = soa.components_mut();
        for i in 0..n {
            let (pos, vel) = init(i);
            c.idcpu[i] = idcpu::make_id_cpu(i as i64 + 1, 0);
            for (comp, &p) in c.reals.iter_mut().zip(&pos) {
                comp[i] = p;
            }
            c.reals[3][i] = vel[0];
            c.reals[4][i] = vel[1];
        }
    }
    let (mut x, mut y, vx, vy): (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) = (
        (0..n).map(|i| init(i).0[0]).collect(),
        (0..n).map(|i| init(i).0[1]).collect(),
        (0..n).map(|i| init(i).1[0]).collect(),
        (0..n).map(|i| init(i).1[1]).collect(),
    );

    // All four agree after one push.
    push_plain(&mut plain, DT);
    push_aos(&mut aos, DT);
    push_vecs(&mut x, &mut y, &vx, &vy, DT);
    push_soa(&mut soa, DT);
    for i in (0..n).step_by(n / 97 + 1) {
        assert_eq!(plain[i].pos[0], aos[i].pos[0]);
        assert_eq!(aos[i].pos[1], soa.real(1)[i]);
        assert_eq!(x[i], soa.real(0)[i]);
    }

    let mut g = c.benchmark_group("particle push");
    g.throughput(Throughput::Bytes(48 * n as u64));
    g.sample_size(10);
    g.bench_function("plain struct slice", |b| {
        b.iter_custom(|it| {
            timed("plain struct slice", it, || {
                push_plain(black_box(&mut plain), DT)
            })
        });
    });
    g.bench_function("ArrayOfStructs", |b| {
        b.iter_custom(|it| timed("ArrayOfStructs", it, || push_aos(black_box(&mut aos), DT)));
    });
    g.bench_function("plain Vec<f64>s", |b| {
        b.iter_custom(|it| {
            timed("plain Vec<f64>s", it, || {
                push_vecs(black_box(&mut x), &mut y, &vx, &vy, DT)
            })
        });
    });
    g.bench_function("StructOfArrays", |b| {
        b.iter_custom(|it| timed("StructOfArrays", it, || push_soa(black_box(&mut soa), DT)));
    });
    g.finish();

    let med = |k: &'static str| TIMES.median_min(&k).unwrap().0.as_secs_f64();
    let (p, a, v, s) = (
        med("plain struct slice"),
        med("ArrayOfStructs"),
        med("plain Vec<f64>s"),
        med("StructOfArrays"),
    );
    let gbs = |sec: f64| 48.0 * n as f64 / sec / 1e9;
    println!("\nParticle push x += dt*v, {n} particles, 48 B/particle needed:");
    println!(
        "  plain struct slice  {:>8.2} ms  {:>6.2} GB/s",
        p * 1e3,
        gbs(p)
    );
    println!(
        "  ArrayOfStructs      {:>8.2} ms  {:>6.2} GB/s  ratio to plain struct slice {:.2}",
        a * 1e3,
        gbs(a),
        p / a
    );
    println!(
        "  plain Vec<f64>s     {:>8.2} ms  {:>6.2} GB/s",
        v * 1e3,
        gbs(v)
    );
    println!(
        "  StructOfArrays      {:>8.2} ms  {:>6.2} GB/s  ratio to plain Vec<f64>s {:.2}",
        s * 1e3,
        gbs(s),
        v / s
    );
    println!("  SoA speed-up over AoS: {:.2}x", a / s);
}

criterion_group!(benches, push);
criterion_main!(benches);
