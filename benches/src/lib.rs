//! Support code shared by the criterion benches in `benches/` and the `multifab_table`
//! binary: per-call time recording for the summaries the benches print after criterion's
//! own output, medians, size parameters from the environment, and the two MultiFab
//! kernels (the STREAM triad baseline and the 7-point Laplacian) that both the criterion
//! bench and the table measure.

use core::time::Duration;
use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use amrex_array4::Stencil;
use amrex_multifab::{
    BoxArray, DistributionMapping, IndexBox, IntVect, MultiFab, Periodicity, Tiling,
};
use rayon::prelude::*;

/// `name` parsed from the environment, or `default` when it is unset or does not parse.
pub fn env_or<T: core::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Per-call times of each benchmark variant, recorded while criterion runs it, so that a
/// bench can print a same-run summary (variant against baseline) at the end.
///
/// ```
/// use amrex_benches::Recorder;
/// static TIMES: Recorder<&str> = Recorder::new();
/// TIMES.timed("noop", 4, || {});
/// assert!(TIMES.median_min(&"noop").is_some());
/// ```
#[derive(Debug)]
pub struct Recorder<K> {
    times: Mutex<BTreeMap<K, Vec<Duration>>>,
}

impl<K: Ord> Default for Recorder<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Ord> Recorder<K> {
    /// An empty recorder (usable in a `static`).
    #[must_use]
    pub const fn new() -> Self {
        Self {
            times: Mutex::new(BTreeMap::new()),
        }
    }

    /// Times `iters` calls of `f`, records the mean per call under `key` and returns the
    /// total, as criterion's `iter_custom` wants.
    pub fn timed(&self, key: K, iters: u64, mut f: impl FnMut()) -> Duration {
        let t = Instant::now();
        for _ in 0..iters {
            f();
        }
        let e = t.elapsed();
        self.record(key, iters, e);
        e
    }

    /// Records the mean of `iters` calls that took `total`.
    fn record(&self, key: K, iters: u64, total: Duration) {
        if iters > 0 {
            let per = total / u32::try_from(iters).unwrap_or(u32::MAX);
            self.times
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(key)
                .or_default()
                .push(per);
        }
    }

    /// [`timed`](Self::timed) from a cold cache: `flush` runs before each call, and only
    /// the calls are timed. Returns the calls' total time.
    pub fn timed_cold(
        &self,
        key: K,
        iters: u64,
        flush: &CacheFlush,
        mut f: impl FnMut(),
    ) -> Duration {
        let mut total = Duration::ZERO;
        for _ in 0..iters {
            flush.run();
            let t = Instant::now();
            f();
            total += t.elapsed();
        }
        self.record(key, iters, total);
        total
    }

    /// Median and minimum of the per-call times recorded under `key`, `None` when that
    /// variant did not run (criterion filtered it out).
    ///
    /// Criterion's warm-up calls are recorded too; they are few, so they rarely move the
    /// median. On a shared machine the minimum is the better estimate of what the code
    /// can do.
    pub fn median_min(&self, key: &K) -> Option<(Duration, Duration)> {
        let mut times = self.times.lock().unwrap_or_else(PoisonError::into_inner);
        times.get_mut(key).map(|v| median_min(v))
    }

    /// The keys recorded so far, in order.
    pub fn keys(&self) -> Vec<K>
    where
        K: Clone,
    {
        let times = self.times.lock().unwrap_or_else(PoisonError::into_inner);
        times.keys().cloned().collect()
    }
}

/// Median and minimum of `v` (sorted in place).
///
/// # Panics
/// If `v` is empty.
pub fn median_min(v: &mut [Duration]) -> (Duration, Duration) {
    v.sort_unstable();
    (v[v.len() / 2], v[0])
}

/// Best times in seconds of `f` and of `g` over `reps` rounds that each call `f`, then
/// `g`, each from a cold cache (after one warm-up call of each): a kernel and its
/// baseline measured alternately, so that machine drift moves both alike.
pub fn best_cold_paired(
    reps: usize,
    flush: &CacheFlush,
    f: &mut dyn FnMut(),
    g: &mut dyn FnMut(),
) -> (f64, f64) {
    let (mut tf, mut tg) = (f64::INFINITY, f64::INFINITY);
    f();
    g();
    let cold = |h: &mut dyn FnMut()| {
        flush.run();
        let t = Instant::now();
        h();
        t.elapsed().as_secs_f64()
    };
    for _ in 0..reps {
        tf = tf.min(cold(f));
        tg = tg.min(cold(g));
    }
    (tf, tg)
}

/// Evicts the benchmark's data from every cache level by reading a buffer twice the
/// size of the largest cache, so that a memory-bound kernel timed after it reads its
/// operands from memory, as a STREAM triad over arrays larger than the cache does.
///
/// Without it, a 256³ MultiFab (134 MB) fits in the last-level cache of some servers
/// (300 MB on a 2-core Xeon VM this was measured on), and a reduction timed
/// right after the kernel that wrote its input runs at cache speed: 1.7–2× the triad,
/// a figure about the cache, not the kernel. Reading (not writing) the buffer leaves
/// only clean lines behind, so the timed kernel pays no write-backs for the flush.
///
/// The size is twice the largest cache the OS lists in
/// `/sys/devices/system/cpu/cpu0/cache`, at least 64 MiB; `AMREX_BENCH_FLUSH_MIB` sets
/// it (0 turns flushing off).
#[derive(Debug)]
pub struct CacheFlush {
    buf: Vec<u64>,
}

impl Default for CacheFlush {
    fn default() -> Self {
        Self::new()
    }
}

impl CacheFlush {
    /// A flush buffer sized as described on the type.
    #[must_use]
    pub fn new() -> Self {
        let mib = env_or(
            "AMREX_BENCH_FLUSH_MIB",
            ((2 * largest_cache()) >> 20).max(64),
        );
        Self::with_bytes(mib << 20)
    }

    /// A flush buffer of `bytes` bytes (`0`: no flushing).
    #[must_use]
    pub fn with_bytes(bytes: usize) -> Self {
        // Distinct values, so the pages are really allocated (not the shared zero page).
        let buf = (0..bytes / 8).map(|i| i as u64).collect();
        Self { buf }
    }

    /// The buffer's size in bytes.
    #[must_use]
    pub fn bytes(&self) -> usize {
        self.buf.len() * 8
    }

    /// Reads one word of every cache line of the buffer.
    pub fn run(&self) {
        let mut acc = 0u64;
        for line in self.buf.chunks(8) {
            acc = acc.wrapping_add(line[0]);
        }
        core::hint::black_box(acc);
    }
}

/// The largest cache size the OS reports for CPU 0, in bytes (0 if unknown).
fn largest_cache() -> usize {
    let dir = "/sys/devices/system/cpu/cpu0/cache";
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("size")).ok())
        .filter_map(|s| parse_size(s.trim()))
        .max()
        .unwrap_or(0)
}

/// `"307200K"`, `"2M"` or `"512"` in bytes.
fn parse_size(s: &str) -> Option<usize> {
    let (num, mul) = match s.as_bytes().last()? {
        b'K' => (&s[..s.len() - 1], 1 << 10),
        b'M' => (&s[..s.len() - 1], 1 << 20),
        b'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<usize>().ok().map(|n| n * mul)
}

/// STREAM triad `a = b + s * c` in parallel chunks: the bandwidth baseline (24 bytes moved
/// per element) every MultiFab kernel is compared with in the same run.
pub fn triad(a: &mut [f64], b: &[f64], c: &[f64], s: f64) {
    const CHUNK: usize = 1 << 16;
    a.par_chunks_mut(CHUNK)
        .zip(b.par_chunks(CHUNK))
        .zip(c.par_chunks(CHUNK))
        .for_each(|((a, b), c)| {
            for ((a, &b), &c) in a.iter_mut().zip(b).zip(c) {
                *a = b + s * c;
            }
        });
}

/// 7-point Laplacian `lap = Σ neighbours - 6 phi` over the valid cells of `lap`, tile by
/// tile in parallel (`phi` needs one ghost cell; bounds are checked once per tile).
pub fn laplacian(lap: &mut MultiFab, phi: &MultiFab, tiling: Tiling) {
    lap.par_for_each_tile(tiling, IntVect::ZERO, |mut t| {
        let p = phi.array(t.mfi());
        let bx = t.region();
        t.array_mut()
            .stencil_mut_with(p, bx, |o, s: Stencil<'_, f64, 1>| {
                *o = (s.at(-1, 0, 0) + s.at(1, 0, 0))
                    + (s.at(0, -1, 0) + s.at(0, 1, 0))
                    + (s.at(0, 0, -1) + s.at(0, 0, 1))
                    - 6.0 * s.center();
            });
    });
}

/// `y += a x` over the valid cells, component 0, tile by tile in parallel through
/// [`Array4Mut::zip_mut_with`](amrex_array4::Array4Mut::zip_mut_with): the same kernel as
/// `MultiFab::saxpy`, which runs on `k`-slabs of about 32 Ki cells instead, so the table
/// can show what each work split costs (`docs/multifab.md`, "Tiling").
pub fn saxpy_tiles(y: &mut MultiFab, a: f64, x: &MultiFab, tiling: Tiling) {
    y.par_for_each_tile(tiling, IntVect::ZERO, |mut t| {
        let xa = x.array(t.mfi());
        let bx = t.region();
        t.array_mut().zip_mut_with(xa, bx, |y, x| *y += a * x);
    });
}

/// Two-component variable-coefficient operator `out_n = div(beta grad phi_n)`, n = 0, 1,
/// over the valid cells of `out`, tile by tile in parallel, through
/// [`Array4Mut::stencil2_mut_with`](amrex_array4::Array4Mut::stencil2_mut_with): `beta` is
/// cell-centred (one component, shared by both components of `phi`) and averaged onto the
/// faces, `beta_{i+1/2} = (beta_i + beta_{i+1}) / 2`. `phi` and `beta` need one ghost
/// cell. Per cell it reads 24 bytes (`phi` twice, `beta` once) and writes 16.
pub fn div_beta_grad(out: &mut MultiFab, phi: &MultiFab, beta: &MultiFab, tiling: Tiling) {
    out.par_for_each_tile(tiling, IntVect::ZERO, |mut t| {
        let (p, b) = (phi.array(t.mfi()), beta.array(t.mfi()));
        let bx = t.region();
        t.array_mut().stencil2_mut_with(
            p,
            b,
            bx,
            |o, s: Stencil<'_, f64, 1>, c: Stencil<'_, f64, 1>| *o = div_beta_grad_cell(s, c),
        );
    });
}

/// The `div(beta grad phi)` of one cell (see [`div_beta_grad`]), in the order of the
/// reference loop in `tests/stencils.rs`: x, y, then z faces, high face minus low face.
#[inline(always)]
#[must_use]
pub fn div_beta_grad_cell(s: Stencil<'_, f64, 1>, b: Stencil<'_, f64, 1>) -> f64 {
    let (pc, bc) = (*s.center(), *b.center());
    let flux = |di: i32, dj: i32, dk: i32| {
        let bp = 0.5 * (bc + b.at(di, dj, dk));
        let bm = 0.5 * (bc + b.at(-di, -dj, -dk));
        bp * (s.at(di, dj, dk) - pc) - bm * (pc - s.at(-di, -dj, -dk))
    };
    (flux(1, 0, 0) + flux(0, 1, 0)) + flux(0, 0, 1)
}

/// The MultiFabs of [`div_beta_grad`] over an `n`³ periodic domain, max grid 64: `phi`
/// (2 components, 1 ghost, smooth, ghosts filled), `beta` (1 component, 1 ghost, ghosts
/// filled) and `out` (2 components).
#[derive(Debug)]
pub struct VarCoefCase {
    /// Input, 2 components.
    pub phi: MultiFab,
    /// Cell-centred coefficient, 1 component.
    pub beta: MultiFab,
    /// Output, 2 components.
    pub out: MultiFab,
}

impl VarCoefCase {
    /// Builds the case for an `n`³ domain.
    #[must_use]
    pub fn new(n: i32) -> Self {
        let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(n - 1));
        let ba = BoxArray::from_domain(domain, 64);
        let dm = DistributionMapping::single(&ba);
        let mut phi = MultiFab::new(&ba, &dm, 2, IntVect::splat(1));
        let mut beta = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
        let out = MultiFab::new(&ba, &dm, 2, IntVect::ZERO);
        let h = 1.0 / f64::from(n);
        phi.par_for_each_tile(Tiling::Default, IntVect::ZERO, |mut t| {
            let bx = t.region();
            t.array_mut().for_each_mut(bx, |i, j, k, c, v| {
                let (x, y, z) = (f64::from(i) * h, f64::from(j) * h, f64::from(k) * h);
                *v = (x * (1.0 - x) + y * y * (1.0 - y) + z) * (1.0 + c as f64);
            });
        });
        beta.par_for_each_tile(Tiling::Default, IntVect::ZERO, |mut t| {
            let bx = t.region();
            t.array_mut().for_each_mut(bx, |i, j, k, _, v| {
                *v = 1.0 + 0.5 * f64::from((i + 2 * j + 3 * k) % 7) / 7.0;
            });
        });
        let period = Periodicity::all(domain);
        phi.fill_boundary(period).expect("fill_boundary");
        beta.fill_boundary(period).expect("fill_boundary");
        Self { phi, beta, out }
    }
}

/// The MultiFabs both MultiFab benchmarks (the criterion bench and the table binary) run
/// on, over an `n`³ periodic domain: `x = 1`, `y = 2` (max grid 64, no ghosts) for saxpy
/// and the reductions, `phi = 0.5` (1 ghost) and `lap` for the Laplacian, and `fb = 1`
/// (max grid 32, 2 ghosts) for FillBoundary.
#[derive(Debug)]
pub struct MultiFabCase {
    /// The domain `0 ..= n-1` in every direction.
    pub domain: IndexBox,
    /// Source of saxpy and the reductions.
    pub x: MultiFab,
    /// Destination of saxpy.
    pub y: MultiFab,
    /// Input of the Laplacian.
    pub phi: MultiFab,
    /// Output of the Laplacian.
    pub lap: MultiFab,
    /// The FillBoundary MultiFab.
    pub fb: MultiFab,
    /// Periodic in every direction.
    pub period: Periodicity,
}

impl MultiFabCase {
    /// Builds the case for an `n`³ domain.
    #[must_use]
    pub fn new(n: i32) -> Self {
        let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(n - 1));
        let ba = BoxArray::from_domain(domain, 64);
        let dm = DistributionMapping::single(&ba);
        let mut x = MultiFab::new(&ba, &dm, 1, IntVect::ZERO);
        let mut y = MultiFab::new(&ba, &dm, 1, IntVect::ZERO);
        let mut phi = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
        let lap = MultiFab::new(&ba, &dm, 1, IntVect::ZERO);
        x.fill(1.0).unwrap();
        y.fill(2.0).unwrap();
        phi.fill(0.5).unwrap();
        let ba32 = BoxArray::from_domain(domain, 32);
        let mut fb = MultiFab::new(
            &ba32,
            &DistributionMapping::single(&ba32),
            1,
            IntVect::splat(2),
        );
        fb.fill(1.0).unwrap();
        Self {
            domain,
            x,
            y,
            phi,
            lap,
            fb,
            period: Periodicity::all(domain),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{CacheFlush, parse_size};

    #[test]
    fn cache_sizes_parse_as_sysfs_writes_them() {
        assert_eq!(parse_size("307200K"), Some(300 << 20));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("K"), None);
        assert_eq!(parse_size(""), None);
    }

    #[test]
    fn a_flush_buffer_has_the_size_asked_for() {
        let f = CacheFlush::with_bytes(1 << 16);
        assert_eq!(f.bytes(), 1 << 16);
        f.run();
        assert_eq!(CacheFlush::with_bytes(0).bytes(), 0);
        CacheFlush::with_bytes(0).run();
    }
}

/// The bandwidth benchmarks' harness: every operation on 1 and 2 threads from a cold
/// cache, each in a criterion group of its thread count, then one table of median (best)
/// time, GB/s of the bytes it must move, and the ratio to a STREAM triad of the same
/// thread count measured in the same run.
///
/// ```no_run
/// # use criterion::Criterion;
/// # let mut c = Criterion::default();
/// let (mut a, b, s) = (vec![0.0; 1 << 20], vec![1.0; 1 << 20], vec![2.0; 1 << 20]);
/// let mut table = amrex_benches::TriadTable::new(24 << 20);
/// for threads in [1, 2] {
///     table.group(&mut c, "example", threads, |run| {
///         run.bench("stream_triad", 24 << 20, &mut || amrex_benches::triad(&mut a, &b, &s, 3.0));
///     });
/// }
/// table.print("example", |_| None);
/// ```
#[derive(Debug)]
pub struct TriadTable {
    times: Recorder<(usize, &'static str)>,
    ops: Vec<(&'static str, u64)>,
    flush: CacheFlush,
    triad_bytes: u64,
}

/// One thread count's criterion group of a [`TriadTable`]: [`bench`](Self::bench) adds
/// an operation.
#[expect(
    missing_debug_implementations,
    reason = "criterion's BenchmarkGroup is not Debug"
)]
pub struct TriadRun<'a, 'c> {
    group: criterion::BenchmarkGroup<'c, criterion::measurement::WallTime>,
    pool: rayon::ThreadPool,
    threads: usize,
    table: &'a mut TriadTable,
}

impl TriadRun<'_, '_> {
    /// Benchmarks `f`, which moves `bytes` bytes, under `name` (the triad is
    /// `"stream_triad"`, which the table's ratios divide by).
    pub fn bench(&mut self, name: &'static str, bytes: u64, f: &mut (dyn FnMut() + Send)) {
        let (pool, threads) = (&self.pool, self.threads);
        let (times, flush) = (&self.table.times, &self.table.flush);
        self.group.throughput(criterion::Throughput::Bytes(bytes));
        self.group.bench_function(name, |bch| {
            bch.iter_custom(|it| {
                pool.install(|| times.timed_cold((threads, name), it, flush, &mut *f))
            });
        });
        if threads == 1 {
            self.table.ops.push((name, bytes));
        }
    }
}

impl TriadTable {
    /// An empty table whose triad moves `triad_bytes` bytes.
    #[must_use]
    pub fn new(triad_bytes: u64) -> Self {
        Self {
            times: Recorder::new(),
            ops: Vec::new(),
            flush: CacheFlush::new(),
            triad_bytes,
        }
    }

    /// Runs `body`'s benchmarks on `threads` threads, in the criterion group
    /// `{prefix}_{threads}thr` (10 samples).
    ///
    /// # Panics
    /// If rayon cannot build the thread pool.
    pub fn group<'c>(
        &mut self,
        c: &'c mut criterion::Criterion,
        prefix: &str,
        threads: usize,
        body: impl FnOnce(&mut TriadRun<'_, 'c>),
    ) {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool");
        let mut group = c.benchmark_group(format!("{prefix}_{threads}thr"));
        group.sample_size(10);
        let mut run = TriadRun {
            group,
            pool,
            threads,
            table: self,
        };
        body(&mut run);
        run.group.finish();
    }

    /// Prints the table under `title`: per thread count and operation, median (best) ms,
    /// MB, GB/s and the ratio to the triad, and `target(name)`'s verdict where it gives
    /// one.
    pub fn print(&self, title: &str, target: impl Fn(&str) -> Option<f64>) {
        println!(
            "\n{title}: median (best) per call, GB/s of the bytes each must move, ratio to the same-run triad"
        );
        let gbs = |bytes: u64, t: Duration| bytes as f64 / t.as_secs_f64() / 1e9;
        for threads in [1usize, 2] {
            let Some((tm, tb)) = self.times.median_min(&(threads, "stream_triad")) else {
                continue;
            };
            for &(name, bytes) in &self.ops {
                let Some((m, bst)) = self.times.median_min(&(threads, name)) else {
                    continue;
                };
                let (rm, rb) = (
                    gbs(bytes, m) / gbs(self.triad_bytes, tm),
                    gbs(bytes, bst) / gbs(self.triad_bytes, tb),
                );
                let goal = target(name).map_or(String::new(), |t| {
                    let verdict = if rm >= t { "met" } else { "NOT met" };
                    format!("  target {t:.1}: {verdict}")
                });
                println!(
                    "  {threads} thr {name:<24} {:>8.3} ({:>8.3}) ms  {:>7.1} MB  {:>6.2} ({:>6.2}) GB/s  ratio {rm:.2} ({rb:.2}){goal}",
                    m.as_secs_f64() * 1e3,
                    bst.as_secs_f64() * 1e3,
                    bytes as f64 / 1e6,
                    gbs(bytes, m),
                    gbs(bytes, bst),
                );
            }
        }
    }
}
