//! DLPack export + import round trip: amrex-dlpack-core against dlpark 0.10 and against the
//! floor of one 144-byte heap allocation + free, all measured in the same run.
//!
//! A round trip is: export (owner moved into the managed tensor) → `into_raw` → `from_raw`
//! (with validation) → read one field → drop (the deleter runs). Cases:
//! - an `Arc`-shared owner, rank 1 and rank 4 (no allocation but the export's own);
//! - an owned `Vec<f64>` of 16 elements, rank 1 (the Vec's allocation is inside the loop, so
//!   it is also shown with that cost subtracted);
//! - an owned `ndarray::Array1` through each crate's ndarray producer.
//!
//! `cargo bench -p amrex-benches --bench dlpack` runs criterion on every case, then prints a
//! summary table (median of interleaved batches) with allocations per round trip (counted by
//! this binary's global allocator) and the ratio to the floor. `-- --summary` skips
//! criterion and prints only the table. The target is one allocation per export and a
//! round trip within 1.5x of the floor.

use amrex_dlpack_core::ffi::flags;
use amrex_dlpack_core::{ManagedTensor, TensorSpec, ToDlpack};
use core::alloc::{GlobalAlloc, Layout};
use core::hint::black_box;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use core::time::Duration;
use criterion::Criterion;
use std::alloc::System;
use std::sync::Arc;
use std::time::Instant;

// ------------------------------------------------------------------ allocation counting

/// Forwards to the system allocator; counts allocations while `COUNTING` is set (the
/// check is one relaxed load, paid equally by every case, floor included).
struct CountingAlloc;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to `System`.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// Heap allocations made by one call of `f` (single-threaded binary).
fn allocations(f: &dyn Fn()) -> usize {
    f(); // warm any lazy state first
    ALLOCS.store(0, Ordering::Relaxed);
    COUNTING.store(true, Ordering::Relaxed);
    f();
    COUNTING.store(false, Ordering::Relaxed);
    ALLOCS.load(Ordering::Relaxed)
}

// ------------------------------------------------------------------ the cases

const RANK4: [i64; 4] = [2, 3, 4, 5];
const RANK4_STRIDES: [i64; 4] = [60, 20, 5, 1];

fn floor() {
    black_box(Box::new([0u8; 144]));
}

fn vec_alone() {
    black_box(vec![1.0f64; 16]);
}

fn amrex_arc(owner: &Arc<Vec<f64>>, shape: &[i64], strides: &[i64]) {
    let spec = TensorSpec::host(owner.as_ptr(), shape, strides).with_flags(flags::READ_ONLY);
    // SAFETY: the Arc keeps the buffer alive and unmoved; the export is read-only.
    let t = unsafe { ManagedTensor::from_owner(Arc::clone(owner), &spec) };
    let raw = black_box(t.into_raw());
    // SAFETY: `raw` came from `into_raw`.
    let back = unsafe { ManagedTensor::from_raw(raw) }.expect("valid export");
    black_box(back.view().num_elements());
}

fn amrex_vec() {
    let t = ManagedTensor::from_vec(vec![1.0f64; 16]);
    let raw = black_box(t.into_raw());
    // SAFETY: `raw` came from `into_raw`.
    let back = unsafe { ManagedTensor::from_raw(raw) }.expect("valid export");
    black_box(back.view().num_elements());
}

fn amrex_ndarray() {
    let t = ndarray::Array1::<f64>::from_elem(16, 1.0)
        .to_dlpack()
        .expect("exportable");
    let raw = black_box(t.into_raw());
    // SAFETY: `raw` came from `into_raw`.
    let back = unsafe { ManagedTensor::from_raw(raw) }.expect("valid export");
    black_box(back.view().num_elements());
}

mod dl {
    //! dlpark 0.10's equivalents: `metadata::Fixed` (shape and strides copied into the
    //! managed allocation) with the owner as the opaque context, then `Managed::from_raw`
    //! and `validate`.
    use super::black_box;
    use dlpark::ffi::{DLDataType, DLDevice, DLManagedTensorVersioned};
    use dlpark::metadata::Fixed;
    use dlpark::{DlpackFlags, OpaqueContext, versioned};
    use std::sync::Arc;

    fn round_trip<const N: usize>(
        ctx: impl OpaqueContext,
        data: *const f64,
        shape: [i64; N],
        strides: [i64; N],
        read_only: bool,
    ) {
        let mut init = Fixed::new(shape, strides)
            .initialize(ctx)
            .expect("metadata");
        init.set_data(data.cast_mut().cast())
            .set_dtype(DLDataType::F64)
            .set_device(DLDevice::CPU);
        if read_only {
            init.set_flags(DlpackFlags::READ_ONLY).expect("flags");
        }
        // SAFETY: data outlives the tensor (owned by the context); the flags are honest.
        let t: versioned::Dlpack = unsafe { init.finish() };
        let raw: *mut DLManagedTensorVersioned = black_box(t.into_raw());
        // SAFETY: `raw` came from `into_raw`.
        let back = unsafe { versioned::Dlpack::from_raw(raw) }.expect("compatible");
        black_box(back.validate().expect("valid").num_elements());
    }

    pub(super) fn arc1(owner: &Arc<Vec<f64>>) {
        round_trip(
            Arc::clone(owner),
            owner.as_ptr(),
            [owner.len() as i64],
            [1],
            true,
        );
    }

    pub(super) fn arc4(owner: &Arc<Vec<f64>>) {
        round_trip(
            Arc::clone(owner),
            owner.as_ptr(),
            super::RANK4,
            super::RANK4_STRIDES,
            true,
        );
    }

    pub(super) fn vec() {
        let v = vec![1.0f64; 16];
        let data = v.as_ptr();
        round_trip(Box::new(v), data, [16], [1], false);
    }

    pub(super) fn ndarray() {
        use dlpark::allocation::dynamic;
        let a = ndarray::Array1::<f64>::from_elem(16, 1.0);
        let init: dynamic::Initialized<DLManagedTensorVersioned> =
            Box::new(a).try_into().expect("exportable");
        // SAFETY: dlpark's ndarray producer filled every field.
        let t: versioned::Dlpack = unsafe { init.finish() };
        let raw = black_box(t.into_raw());
        // SAFETY: `raw` came from `into_raw`.
        let back = unsafe { versioned::Dlpack::from_raw(raw) }.expect("compatible");
        black_box(back.validate().expect("valid").num_elements());
    }
}

// ------------------------------------------------------------------ measurement

struct Case {
    name: &'static str,
    run: Box<dyn Fn()>,
    /// Subtract the `vec_alone` baseline in the "net" column (the case allocates a Vec).
    has_vec: bool,
}

fn cases() -> Vec<Case> {
    let owner1 = Arc::new(vec![1.0f64; 120]);
    let owner4 = Arc::clone(&owner1);
    let (o1, o2, o3) = (
        Arc::clone(&owner1),
        Arc::clone(&owner1),
        Arc::clone(&owner1),
    );
    let case = |name, has_vec, run: Box<dyn Fn()>| Case { name, run, has_vec };
    vec![
        case("floor: Box<[u8; 144]> alloc+free", false, Box::new(floor)),
        case(
            "baseline: vec![0f64; 16] alloc+free",
            false,
            Box::new(vec_alone),
        ),
        case(
            "amrex  Arc owner, rank 1",
            false,
            Box::new(move || amrex_arc(&owner1, &[120], &[1])),
        ),
        case(
            "dlpark Arc owner, rank 1",
            false,
            Box::new(move || dl::arc1(&o1)),
        ),
        case(
            "amrex  Arc owner, rank 4",
            false,
            Box::new(move || amrex_arc(&owner4, &RANK4, &RANK4_STRIDES)),
        ),
        case(
            "dlpark Arc owner, rank 4",
            false,
            Box::new(move || dl::arc4(&o2)),
        ),
        case("amrex  owned Vec<f64>, rank 1", true, Box::new(amrex_vec)),
        case("dlpark owned Vec<f64>, rank 1", true, Box::new(dl::vec)),
        case("amrex  owned Array1<f64>", true, Box::new(amrex_ndarray)),
        case("dlpark owned Array1<f64>", true, Box::new(dl::ndarray)),
        case(
            "(keeps the Arc alive)",
            false,
            Box::new(move || {
                black_box(&o3);
            }),
        ),
    ]
}

/// Median ns per call over interleaved batches, per case.
fn summary_timings(cases: &[Case]) -> Vec<f64> {
    const ROUNDS: usize = 21;
    let iters: u32 = std::env::var("DLPACK_BENCH_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let mut samples = vec![Vec::with_capacity(ROUNDS); cases.len()];
    for c in cases {
        for _ in 0..iters {
            (c.run)();
        }
    }
    for _ in 0..ROUNDS {
        for (c, s) in cases.iter().zip(&mut samples) {
            let t = Instant::now();
            for _ in 0..iters {
                (c.run)();
            }
            s.push(t.elapsed().as_secs_f64() * 1e9 / f64::from(iters));
        }
    }
    samples
        .into_iter()
        .map(|mut s| {
            s.sort_by(f64::total_cmp);
            s[s.len() / 2]
        })
        .collect()
}

fn main() {
    let summary_only = std::env::args().any(|a| a == "--summary");
    let mut cases = cases();
    cases.pop(); // the Arc keeper
    // `DLPACK_BENCH_FILTER=amrex` keeps the floors and the cases whose name contains it.
    if let Ok(filter) = std::env::var("DLPACK_BENCH_FILTER") {
        let mut i = 0;
        cases.retain(|c| {
            i += 1;
            i <= 2 || c.name.contains(&filter)
        });
    }
    let shown = &cases[..];

    if !summary_only {
        let mut c = Criterion::default()
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2))
            .configure_from_args();
        {
            let mut g = c.benchmark_group("dlpack_round_trip");
            for case in shown {
                g.bench_function(case.name, |b| b.iter(|| (case.run)()));
            }
            g.finish();
        }
        c.final_summary();
    }

    let allocs: Vec<usize> = shown.iter().map(|c| allocations(&*c.run)).collect();
    let ns = summary_timings(shown);
    let (floor_ns, vec_ns) = (ns[0], ns[1]);
    println!("\nDLPack export + import round trip (median of interleaved batches)");
    println!(
        "{:<40} {:>9} {:>7} {:>9} {:>16}",
        "case", "ns/rt", "allocs", "vs floor", "net of Vec alloc"
    );
    for ((c, &t), a) in shown.iter().zip(&ns).zip(&allocs) {
        let net = if c.has_vec {
            format!("{:.2}x", (t - vec_ns) / floor_ns)
        } else {
            String::new()
        };
        println!(
            "{:<40} {:>9.1} {:>7} {:>8.2}x {:>16}",
            c.name,
            t,
            a,
            t / floor_ns,
            net
        );
    }
    println!(
        "target: one allocation per export and a round trip within 1.5x of the floor \
         ({floor_ns:.1} ns)"
    );
}
