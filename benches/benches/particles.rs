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
//! The same run measures the AoS <-> SoA conversions (`StructOfArrays::copy_from_aos`,
//! `ArrayOfStructs::copy_from_soa`; 96 bytes per particle counted: 48 read, 48 written)
//! and a STREAM triad over three `Vec<f64>` of the same count on one thread, and prints
//! each conversion's ratio to the triad (bytes per second over the triad's 24 bytes per
//! element). With 2 threads (rayon chunks of the same slices) it measures both pushes
//! and the triad again.
//!
//! Why AoS stays near half of SoA: an AoS push touches every byte of every particle,
//! since each 64-byte line holds some particle's `x` or `y`, so it reads and writes back
//! 48 bytes per particle (96 B of traffic), where the SoA push reads 32 and writes 16.
//! Both run at the memory's bandwidth, and the AoS loop is already the ideal code (one
//! 16-byte load of `(x, y)`, one of `(vx, vy)`, a multiply, an add and a store per
//! particle, no bounds checks); only the layout differs.
//!
//! Every timed call, the triad's too, starts from a cold cache (`CacheFlush`, outside the
//! timing): the triad's three arrays (240 MB for 10⁷) fit some servers' last-level cache,
//! and a baseline timed from there would not be a memory bandwidth.
//!
//! `cargo bench -p amrex-benches --bench particles -- --warm-up-time 1 --measurement-time 3`
//! (`PARTICLES_BENCH_N` sets the count, default 10⁷).

use core::hint::black_box;
use core::time::Duration;

use std::sync::OnceLock;

use amrex_aos::{ArrayOfStructs, Particle, StructOfArrays, idcpu};
use amrex_benches::{CacheFlush, Recorder, env_or, triad};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rayon::prelude::*;

/// Per-call times recorded by each variant, for the summary.
static TIMES: Recorder<&str> = Recorder::new();

/// The cache flush run before every timed call.
static FLUSH: OnceLock<CacheFlush> = OnceLock::new();

/// Times `iters` calls of `f`, each from a cold cache.
fn timed(variant: &'static str, iters: u64, f: impl FnMut()) -> Duration {
    TIMES.timed_cold(variant, iters, FLUSH.get_or_init(CacheFlush::new), f)
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

/// `push_aos` on rayon chunks (the pool's threads).
fn push_aos_par(aos: &mut ArrayOfStructs<Particle<2, 0>>, dt: f64) {
    aos.par_chunks_mut(1 << 14).for_each(|ps| {
        for p in ps {
            p.pos[0] += dt * p.rdata[0];
            p.pos[1] += dt * p.rdata[1];
        }
    });
}

/// `push_soa` on rayon chunks.
fn push_soa_par(soa: &mut StructOfArrays<5, 0>, dt: f64) {
    let mut c = soa.components_mut();
    let [x, y, _z, vx, vy] = &mut c.reals[..] else {
        unreachable!()
    };
    let chunk = 1 << 14;
    x.par_chunks_mut(chunk)
        .zip(y.par_chunks_mut(chunk))
        .zip(vx.par_chunks(chunk).zip(vy.par_chunks(chunk)))
        .for_each(|((x, y), (vx, vy))| {
            for (x, v) in x.iter_mut().zip(vx) {
                *x += dt * v;
            }
            for (y, v) in y.iter_mut().zip(vy) {
                *y += dt * v;
            }
        });
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
    // The conversions and their baseline, on one thread.
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    let (mut ta, tb, tc) = (vec![0.0f64; n], vec![1.0f64; n], vec![2.0f64; n]);
    let mut soa2 = StructOfArrays::<5, 0>::new();
    let mut aos2 = ArrayOfStructs::<Particle<2, 0>>::new();
    soa2.copy_from_aos(&aos).unwrap();
    aos2.copy_from_soa(&soa2).unwrap();
    assert!(
        aos2.as_slice() == aos.as_slice(),
        "AoS -> SoA -> AoS changed the particles"
    );
    g.bench_function("triad 1 thread", |b| {
        b.iter_custom(|it| {
            one.install(|| {
                timed("triad 1 thread", it, || {
                    triad(black_box(&mut ta), &tb, &tc, 3.0)
                })
            })
        });
    });
    g.bench_function("AoS -> SoA", |b| {
        b.iter_custom(|it| {
            timed("AoS -> SoA", it, || {
                soa2.copy_from_aos(black_box(&aos)).unwrap()
            })
        });
    });
    g.bench_function("SoA -> AoS", |b| {
        b.iter_custom(|it| {
            timed("SoA -> AoS", it, || {
                aos2.copy_from_soa(black_box(&soa2)).unwrap()
            })
        });
    });
    // Both pushes and the triad on 2 threads.
    let two = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("pool");
    g.bench_function("triad 2 threads", |b| {
        b.iter_custom(|it| {
            two.install(|| {
                timed("triad 2 threads", it, || {
                    triad(black_box(&mut ta), &tb, &tc, 3.0)
                })
            })
        });
    });
    g.bench_function("ArrayOfStructs 2 threads", |b| {
        b.iter_custom(|it| {
            two.install(|| {
                timed("ArrayOfStructs 2 threads", it, || {
                    push_aos_par(black_box(&mut aos), DT)
                })
            })
        });
    });
    g.bench_function("StructOfArrays 2 threads", |b| {
        b.iter_custom(|it| {
            two.install(|| {
                timed("StructOfArrays 2 threads", it, || {
                    push_soa_par(black_box(&mut soa), DT)
                })
            })
        });
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
    println!(
        "  SoA speed-up over AoS: {:.2}x (AoS push / SoA push throughput ratio {:.2})",
        a / s,
        s / a
    );
    let (t1, a2s, s2a) = (med("triad 1 thread"), med("AoS -> SoA"), med("SoA -> AoS"));
    let triad_gbs = |sec: f64| 24.0 * n as f64 / sec / 1e9;
    let conv_gbs = |sec: f64| 96.0 * n as f64 / sec / 1e9;
    println!("\nAoS <-> SoA conversion, 96 B/particle (48 read, 48 written), 1 thread:");
    println!(
        "  stream triad        {:>8.2} ms  {:>6.2} GB/s",
        t1 * 1e3,
        triad_gbs(t1)
    );
    for (name, t) in [("AoS -> SoA", a2s), ("SoA -> AoS", s2a)] {
        println!(
            "  {name:<19} {:>8.2} ms  {:>6.2} GB/s  ratio to triad {:.2}",
            t * 1e3,
            conv_gbs(t),
            conv_gbs(t) / triad_gbs(t1)
        );
    }
    let (t2, a2, s2) = (
        med("triad 2 threads"),
        med("ArrayOfStructs 2 threads"),
        med("StructOfArrays 2 threads"),
    );
    println!("\nParticle push, 2 threads:");
    println!(
        "  stream triad        {:>8.2} ms  {:>6.2} GB/s",
        t2 * 1e3,
        triad_gbs(t2)
    );
    println!(
        "  ArrayOfStructs      {:>8.2} ms  {:>6.2} GB/s",
        a2 * 1e3,
        gbs(a2)
    );
    println!(
        "  StructOfArrays      {:>8.2} ms  {:>6.2} GB/s  AoS push / SoA push ratio {:.2}",
        s2 * 1e3,
        gbs(s2),
        s2 / a2
    );
}

criterion_group!(benches, push);
criterion_main!(benches);
