//! FillBoundary and `sum` on 2 ranks x 1 thread against 1 rank x 2 threads, in the same
//! run: `bash scripts/bench-mpi.sh [N REPS]` (it builds this with `--features mpi` and
//! starts it under `mpirun -n 2`). N³ cells (256 by default), max grid 32, 2 ghost cells,
//! periodic, as issue #12 asks; the sum runs on the same MultiFab's valid cells.
//!
//! 1. Both ranks, one rayon thread each: the distributed MultiFab (boxes spread by
//!    `DistributionMapping::new`). Reported: median and best time per call, bytes moved
//!    as AMReX counts them (ghost cells written, read once and written once), the share
//!    of packing, local copies (while messages fly), waiting and unpacking from
//!    `comm_profile()`, and a STREAM triad on 1 thread per rank run at the same time.
//! 2. Rank 0 alone, two threads: the same BoxArray on one process (every box local). Rank
//!    1 sleeps meanwhile (MPI's barrier would spin and take a core), for a time rank 0
//!    measured and broadcast beforehand; rank 0 says if it overran that time.
//!
//! Not a criterion bench: criterion cannot drive a program that `mpirun` starts on
//! several ranks in step; the timing loop here is the same best/median over repetitions
//! after a warm-up call.

use core::time::Duration;
use std::time::Instant;

use amrex_benches::{env_or, median_min, triad};
use amrex_multifab::{
    BoxArray, CommProfile, DistributionMapping, IndexBox, IntVect, MultiFab, Periodicity,
    Reduction, comm_profile, reset_comm_profile,
};
use amrex_runtime::{Communicator, ReduceOp};

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a rayon pool")
}

/// Median and best of `reps` timed calls after one warm-up.
fn time(reps: usize, mut f: impl FnMut()) -> (Duration, Duration) {
    f();
    let mut v: Vec<Duration> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    median_min(&mut v)
}

/// Bytes a FillBoundary moves as AMReX counts them: every ghost cell it fills is read
/// once and written once.
fn fb_bytes(p: &CommProfile, calls: u64) -> f64 {
    2.0 * (p.bytes_local + p.bytes_received) as f64 / calls.max(1) as f64
}

fn triad_gbs(reps: usize, n: usize) -> f64 {
    let (mut a, b, c) = (vec![0.0; n], vec![1.0; n], vec![2.0; n]);
    let (_, best) = time(reps, || triad(&mut a, &b, &c, 0.5));
    24.0 * n as f64 / best.as_secs_f64() / 1e9
}

fn main() {
    let parallel = amrex_runtime::init().expect("MPI initialises");
    let comm: Communicator = parallel.communicator().clone();
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n = i32::try_from(args.first().copied().unwrap_or(256)).expect("N fits i32");
    let reps = args.get(1).copied().unwrap_or(env_or("REPS", 10));
    let say = |s: String| {
        if comm.rank() == 0 {
            println!("{s}");
        }
    };
    let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(n - 1));
    let period = Periodicity::all(domain);
    let ba = BoxArray::from_domain(domain, 32);
    let triad_len = 1 << 24; // 16 Mi doubles per array: 384 MiB moved per triad

    // 1. Distributed, one thread per rank.
    let dm = DistributionMapping::new(&ba);
    let mut mf = MultiFab::new(&ba, &dm, 1, IntVect::splat(2));
    mf.fill(1.0).unwrap();
    let one = pool(1);
    let (fb_med, fb_best, prof, dist_sum_med, fast_med, tri) = one.install(|| {
        mf.fill_boundary(period).unwrap();
        reset_comm_profile();
        let (med, best) = time(reps, || mf.fill_boundary(period).unwrap());
        let prof = comm_profile();
        // The two reduction modes alternate call by call on the same data, so that a
        // change in the machine's speed during the run hits both alike.
        let (mut rep_t, mut fast_t) = (Vec::new(), Vec::new());
        for i in 0..=3 * reps {
            for (mode, times) in [
                (Reduction::Reproducible, &mut rep_t),
                (Reduction::Fast, &mut fast_t),
            ] {
                mf.set_reduction(mode);
                let t = Instant::now();
                core::hint::black_box(mf.sum(.., 0).unwrap());
                if i > 0 {
                    times.push(t.elapsed());
                }
            }
        }
        mf.set_reduction(Reduction::Reproducible);
        let (sum_med, _) = median_min(&mut rep_t);
        let (fast_med, _) = median_min(&mut fast_t);
        comm.barrier().unwrap();
        let tri = triad_gbs(reps, triad_len);
        (med, best, prof, sum_med, fast_med, tri)
    });
    let calls = prof.calls.max(1);
    let bytes = fb_bytes(&prof, calls);
    let total_bytes = comm.all_reduce_f64(bytes, ReduceOp::Sum).unwrap();
    let tri_sum = comm.all_reduce_f64(tri, ReduceOp::Sum).unwrap();
    let slowest = comm
        .all_reduce_f64(fb_med.as_secs_f64(), ReduceOp::Max)
        .unwrap();
    let share = |x: u64| {
        let all = (prof.pack_ns + prof.local_ns + prof.wait_ns + prof.unpack_ns).max(1);
        100.0 * x as f64 / all as f64
    };
    say(format!(
        "FillBoundary {n}^3, max grid 32, 2 ghosts, periodic, {} boxes",
        ba.len()
    ));
    say(format!(
        "  {} ranks x 1 thread: median {:.2} ms (best {:.2} ms, slowest rank {:.2} ms) per call; \
         {:.1} MB moved per call ({:.1} MB in {} messages from rank 0); {:.1} GB/s = {:.2} of the \
         ranks' summed triad ({tri_sum:.1} GB/s)",
        comm.size(),
        fb_med.as_secs_f64() * 1e3,
        fb_best.as_secs_f64() * 1e3,
        slowest * 1e3,
        total_bytes / 1e6,
        prof.bytes_sent as f64 / calls as f64 / 1e6,
        prof.messages_sent / calls,
        total_bytes / slowest / 1e9,
        total_bytes / slowest / 1e9 / tri_sum,
    ));
    say(format!(
        "  rank 0's time: pack {:.0}%, local copies while messages fly {:.0}%, waiting {:.0}%, \
         unpack {:.0}%",
        share(prof.pack_ns),
        share(prof.local_ns),
        share(prof.wait_ns),
        share(prof.unpack_ns)
    ));
    say(format!(
        "sum over {n}^3 valid cells: {} ranks x 1 thread: median {:.2} ms reproducible, {:.2} ms \
         fast, alternating (reproducible costs {:+.1}%)",
        comm.size(),
        dist_sum_med.as_secs_f64() * 1e3,
        fast_med.as_secs_f64() * 1e3,
        100.0 * (dist_sum_med.as_secs_f64() / fast_med.as_secs_f64() - 1.0)
    ));
    drop(mf);

    // 2. One process, two threads, on rank 0; rank 1 sleeps for the time rank 0 expects.
    let mut budget = Vec::new();
    let single = if comm.rank() == 0 {
        let dm1 = DistributionMapping::single(&ba);
        let mut s = MultiFab::new(&ba, &dm1, 1, IntVect::splat(2));
        s.fill(1.0).unwrap();
        let two = pool(2);
        let t = Instant::now();
        two.install(|| s.fill_boundary(period).unwrap());
        let guess = t.elapsed() * (3 * reps as u32 + 4)
            + Duration::from_secs(2)
            + Duration::from_secs_f64(3.0 * 384e6 * reps as f64 / 1e9);
        budget.extend_from_slice(&guess.as_millis().to_le_bytes());
        Some((s, two, guess))
    } else {
        None
    };
    comm.broadcast_bytes(0, &mut budget).unwrap();
    let ms = u128::from_le_bytes(budget.try_into().expect("16 bytes"));
    if let Some((mut s, two, guess)) = single {
        let start = Instant::now();
        let (med, best, prof, sum_med, tri) = two.install(|| {
            reset_comm_profile();
            let (med, best) = time(reps, || s.fill_boundary(period).unwrap());
            let prof = comm_profile();
            let (sum_med, _) = time(reps, || {
                core::hint::black_box(s.sum(.., 0).unwrap());
            });
            (med, best, prof, sum_med, triad_gbs(reps, triad_len))
        });
        let bytes = fb_bytes(&prof, prof.calls);
        println!(
            "  1 rank x 2 threads: median {:.2} ms (best {:.2} ms) per call; {:.1} MB moved; \
             {:.1} GB/s = {:.2} of the 2-thread triad ({tri:.1} GB/s)",
            med.as_secs_f64() * 1e3,
            best.as_secs_f64() * 1e3,
            bytes / 1e6,
            bytes / med.as_secs_f64() / 1e9,
            bytes / med.as_secs_f64() / 1e9 / tri
        );
        println!(
            "  sum, 1 rank x 2 threads: median {:.2} ms; 2 ranks x 1 thread / 1 rank x 2 threads: \
             FillBoundary {:.2}x, sum {:.2}x the time",
            sum_med.as_secs_f64() * 1e3,
            slowest / med.as_secs_f64(),
            dist_sum_med.as_secs_f64() / sum_med.as_secs_f64()
        );
        if start.elapsed() > guess {
            println!(
                "  (note: rank 0's single-process part took {:.1} s, longer than the {:.1} s \
                 rank 1 slept; rank 1 was spinning in MPI for the rest)",
                start.elapsed().as_secs_f64(),
                guess.as_secs_f64()
            );
        }
    } else {
        std::thread::sleep(Duration::from_millis(u64::try_from(ms).unwrap_or(u64::MAX)));
    }
    comm.barrier().unwrap();
    drop(parallel);
}
