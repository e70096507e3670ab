//! Checkpoint write and read against a plain sequential write and read of the same bytes,
//! in the same run: `cargo bench -p amrex-benches --bench checkpoint` on one process,
//! `bash scripts/bench-checkpoint.sh` on 1 and 2 ranks (it builds this with `--features
//! mpi` and starts it under `mpirun -n 2`).
//!
//! The hierarchy: level 0 is N³ cells (N = 256 by default, `N=...` to change) in boxes of
//! 64³, level 1 the middle eighth of the domain refined by 2 (another N³ cells), one
//! component, no ghost cells: 2·N³ doubles, 256 MiB at N = 256. Each repetition writes
//! the checkpoint with `write_checkpoint` (a fresh directory: the previous one is removed
//! first, untimed) and reads both levels back with `read_checkpoint_header_on` and
//! `read_checkpoint_multifab` into new MultiFabs; the baseline writes each rank's share of
//! the same bytes to one file with one `write` call, and reads it back into fresh memory
//! with `std::fs::read` (the reader's destination is new memory too), and once more into a
//! buffer reused between reads (`read*`: the copy alone). All go through the page cache
//! (none syncs), as AMReX's `VisMF` does. Reported: median
//! and best GB/s of each and the ratio ours / baseline (median over repetitions, `REPS=`,
//! default 5). With many ranks every rank times its own part between two barriers, and
//! rank 0 prints the slowest rank's times.
//!
//! Not a criterion bench: criterion cannot drive a program that `mpirun` starts on
//! several ranks in step; the timing loop is a best/median over repetitions after a
//! warm-up, the same on one rank.

use core::time::Duration;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use amrex_benches::{env_or, median_min};
use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IntVect, MultiFab};
use amrex_plotfile::{
    CheckpointHeader, read_checkpoint_header_on, read_checkpoint_multifab, write_checkpoint,
};
use amrex_runtime::{Communicator, ReduceOp};

/// The slowest rank's time of `f` (each rank times its own part between barriers).
fn timed(comm: &Communicator, f: &mut dyn FnMut()) -> Duration {
    comm.barrier().expect("barrier");
    let t = Instant::now();
    f();
    let mine = t.elapsed().as_secs_f64();
    comm.barrier().expect("barrier");
    Duration::from_secs_f64(comm.all_reduce_f64(mine, ReduceOp::Max).expect("max"))
}

fn gbs(bytes: u64, d: Duration) -> f64 {
    bytes as f64 / d.as_secs_f64() / 1e9
}

fn main() {
    let parallel = amrex_runtime::init().expect("MPI initialises");
    let comm = parallel.communicator().clone();
    let root = comm.rank() == 0;
    let n: i32 = env_or("N", 256);
    let reps: usize = env_or("REPS", 5);
    let scratch = PathBuf::from(env_or("SCRATCH", String::from("target/bench-checkpoint")));
    if root {
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(&scratch).expect("scratch directory");
    }
    comm.barrier().expect("barrier");

    let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(n - 1));
    let ba0 = BoxArray::from_domain(domain, 64);
    let mid = IndexBox::new(IntVect::splat(n / 4), IntVect::splat(3 * n / 4 - 1));
    let ba1 = BoxArray::from_domain(mid.refine_iv(IntVect::splat(2)), 64);
    let levels: Vec<MultiFab> = [&ba0, &ba1]
        .iter()
        .enumerate()
        .map(|(lev, ba)| {
            let mut mf = MultiFab::new(ba, &DistributionMapping::new(ba), 1, IntVect::ZERO);
            mf.set_val(1.0 + lev as f64, .., 0).expect("set_val");
            mf
        })
        .collect();
    let header = CheckpointHeader::new("Checkpoint file for the benchmark", vec![ba0, ba1])
        .with_ints([0, 0])
        .with_reals([0.1, 0.05]);
    let refs: Vec<&MultiFab> = levels.iter().collect();
    let chk = scratch.join("chk");

    // This rank's bytes of the checkpoint: its FABs (8 bytes a cell), as the baseline's.
    let my_cells: u64 = levels
        .iter()
        .map(|mf| {
            mf.box_array()
                .boxes()
                .iter()
                .enumerate()
                .filter(|&(i, _)| mf.distribution_map().rank_of(i) == comm.rank())
                .map(|(_, b)| b.num_pts())
                .sum::<u64>()
        })
        .sum();
    let my_bytes = 8 * my_cells;
    let total_bytes = comm.all_reduce_u64(my_bytes, ReduceOp::Sum).expect("sum");
    let baseline = scratch.join(format!("baseline.{}", comm.rank()));
    let payload = vec![1_u8; usize::try_from(my_bytes).expect("fits memory")];

    // Untimed, before each repetition: both writers start from no file (a write over an
    // existing file would also pay for truncating it).
    let remove = |p: &Path| {
        if root {
            let _ = std::fs::remove_dir_all(p);
        }
        let _ = std::fs::remove_file(&baseline);
        comm.barrier().expect("barrier");
    };
    let mut write = || {
        write_checkpoint(&chk, &header, &[("phi", &refs)]).expect("write_checkpoint");
    };
    let mut read = || {
        let h = read_checkpoint_header_on(&chk, &comm).expect("read header");
        for (lev, ba) in h.grids.iter().enumerate() {
            let dm = DistributionMapping::new(ba);
            let mf = read_checkpoint_multifab(&chk, lev, "phi", ba, &dm).expect("read level");
            assert_eq!(mf.ncomp(), 1);
        }
    };
    let mut base_write = || {
        let mut f = std::fs::File::create(&baseline).expect("baseline file");
        f.write_all(&payload).expect("baseline write");
    };
    // Into fresh memory, as the reader's MultiFabs are (`std::fs::read`)...
    let mut base_read = || {
        let buf = std::fs::read(&baseline).expect("baseline read");
        assert_eq!(buf.len(), payload.len());
    };
    // ... and into a buffer reused from one read to the next (what `dd` does): the
    // copy alone, without the first touch of new memory.
    let mut buf = Vec::with_capacity(payload.len());
    let mut reuse_read = || {
        buf.clear();
        let mut f = std::fs::File::open(&baseline).expect("baseline file");
        f.read_to_end(&mut buf).expect("baseline read");
        assert_eq!(buf.len(), payload.len());
    };

    // Warm-up, then the repetitions, the four alternated.
    let mut times: [Vec<Duration>; 5] = Default::default();
    for rep in 0..=reps {
        remove(&chk);
        let w = timed(&comm, &mut write);
        let r = timed(&comm, &mut read);
        let bw = timed(&comm, &mut base_write);
        let br = timed(&comm, &mut base_read);
        let rr = timed(&comm, &mut reuse_read);
        if rep > 0 {
            for (v, t) in times.iter_mut().zip([w, r, bw, br, rr]) {
                v.push(t);
            }
        }
    }
    let [w, r, bw, br, rr] = times.map(|mut v| median_min(&mut v));
    if root {
        println!(
            "checkpoint of {n}³ + {n}³ cells ({:.0} MiB of data), {} rank(s), {reps} repetitions \
             (median / best GB/s)",
            total_bytes as f64 / (1 << 20) as f64,
            comm.size()
        );
        for (what, ours, base) in [("write", w, bw), ("read", r, br), ("read*", r, rr)] {
            println!(
                "  {what:<5}  ours {:6.2} / {:6.2}   baseline {:6.2} / {:6.2}   ratio {:.2}",
                gbs(total_bytes, ours.0),
                gbs(total_bytes, ours.1),
                gbs(total_bytes, base.0),
                gbs(total_bytes, base.1),
                base.0.as_secs_f64() / ours.0.as_secs_f64()
            );
        }
        println!("  (read*: against a read into a reused buffer, without the first touch)");
    }
    remove(&scratch);
}
