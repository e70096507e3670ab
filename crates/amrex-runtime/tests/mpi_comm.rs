//! The MPI communicator under `mpirun`: collectives, split-phase exchanges (ring,
//! all-to-all, random sizes with zero-byte messages, pieces above the message limit),
//! `check_same`'s error on every rank, bring-your-own communicator, finalisation.
//!
//! Run by `scripts/test-mpi.sh` under `mpirun -n 1`, `-n 2` and `-n 4`
//! (`cargo test -p amrex-multifab --features mpi --test mpi_comm` runs it on one rank).
//!
//! # Why `harness = false`
//!
//! libtest runs each `#[test]` on its own thread, in an order and with a parallelism of
//! its choosing, and every rank would choose its own: collectives would be entered in
//! different orders on different ranks and hang. So this is a plain `main` that runs the
//! named checks one after the other, in the same order on every rank, with a barrier
//! after each. A failed check panics; the panic hook that `Communicator::world` installs
//! (`amrex_runtime::abort_on_panic`) calls `MPI_Abort`, so the other ranks end too
//! instead of waiting in the next collective. `scripts/test-mpi.sh` also wraps each run
//! in `timeout`, and checks that `AMREX_MPI_TEST_PANIC_RANK=r` (rank r panics while the
//! others wait in a barrier) fails fast instead of hanging.
#![warn(clippy::cast_possible_truncation)]

use amrex_runtime::mpi::traits::{Communicator as _, Destination as _, Source as _};
use amrex_runtime::{CommError, Communicator, Direction, Fingerprint, ReduceOp, Tag};

/// User tag `n` (the workspace's own tags are not for tests to reuse).
fn t(n: u16) -> Tag {
    Tag::user(n).expect("a small user tag")
}

/// splitmix64: deterministic, so every rank can compute what every other rank sends.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The message `src` sends `dst` in round `round`: a random length in 0..max (0 about
/// one time in five) and bytes that name all four.
fn message(round: u64, src: usize, dst: usize, max: usize) -> Vec<u8> {
    let h = mix(round ^ mix(src as u64 ^ mix(dst as u64)));
    let len = if h.is_multiple_of(5) {
        0
    } else {
        usize::try_from((h >> 8) % max as u64).unwrap()
    };
    (0..len)
        .map(|i| mix(h ^ i as u64).to_le_bytes()[0])
        .collect()
}

/// The byte that names rank `r` in a payload (the tests run on at most 4 ranks).
fn byte(r: usize) -> u8 {
    u8::try_from(r).expect("a rank of a test run fits a byte")
}

fn collectives(c: &Communicator) {
    let (r, n) = (c.rank() as u64, c.size() as u64);
    assert_eq!(
        c.all_reduce_u64(r + 1, ReduceOp::Sum).unwrap(),
        n * (n + 1) / 2
    );
    assert_eq!(c.all_reduce_u64(r + 1, ReduceOp::Min).unwrap(), 1);
    assert_eq!(c.all_reduce_u64(r + 1, ReduceOp::Max).unwrap(), n);
    assert_eq!(
        c.all_reduce_f64(0.5 * r as f64, ReduceOp::Sum).unwrap(),
        0.25 * (n * (n - 1)) as f64
    );
    assert_eq!(
        c.all_reduce_f64(-(r as f64), ReduceOp::Min).unwrap(),
        -((n - 1) as f64)
    );
    assert_eq!(c.all_reduce_f64(-(r as f64), ReduceOp::Max).unwrap(), 0.0);
    let mut v = [r, 10 * r, u64::MAX - r];
    c.all_reduce_u64_slice(&mut v, ReduceOp::Max).unwrap();
    assert_eq!(v, [n - 1, 10 * (n - 1), u64::MAX]);
    // Values on both sides of 2^63: some MPI libraries compare unsigned as signed.
    let big = if r == 0 { u64::MAX } else { r };
    assert_eq!(
        c.all_reduce_u64(big, ReduceOp::Min).unwrap(),
        if n == 1 { u64::MAX } else { 1 }
    );
    assert_eq!(c.all_reduce_u64(big, ReduceOp::Max).unwrap(), u64::MAX);
    let mut w = [
        if r == 0 { 1 << 63 } else { (1 << 63) - 1 },
        if r == 0 { 0 } else { u64::MAX },
    ];
    c.all_reduce_u64_slice(&mut w, ReduceOp::Min).unwrap();
    assert_eq!(
        w,
        if n == 1 {
            [1 << 63, 0]
        } else {
            [(1 << 63) - 1, 0]
        }
    );
    let mut f = [r as f64, 1.0];
    c.all_reduce_f64_slice(&mut f, ReduceOp::Sum).unwrap();
    assert_eq!(f, [(n * (n - 1) / 2) as f64, n as f64]);
}

fn all_gather_different_lengths(c: &Communicator) {
    // Rank r sends 3r bytes of value r (rank 0 sends nothing).
    let r = c.rank();
    let all = c.all_gather_bytes(&vec![byte(r); 3 * r]).unwrap();
    assert_eq!(all.len(), c.size());
    for (q, bytes) in all.iter().enumerate() {
        assert_eq!(bytes, &vec![byte(q); 3 * q], "from rank {q}");
    }
}

fn gather_and_broadcast(c: &Communicator) {
    let (r, n) = (c.rank(), c.size());
    let root = n - 1;
    let got = c.gather_bytes(root, &message(1, r, root, 50)).unwrap();
    if r == root {
        let got = got.expect("the root gets the gather");
        for (q, bytes) in got.iter().enumerate() {
            assert_eq!(bytes, &message(1, q, root, 50), "from rank {q}");
        }
    } else {
        assert!(got.is_none());
    }
    // The root's buffer replaces everyone's, whatever their length; in one message and
    // in pieces of 7 bytes.
    for comm in [c.clone(), c.with_message_limit(7)] {
        let want: Vec<u8> = (0..1000u32)
            .map(|i| mix(u64::from(i)).to_le_bytes()[0])
            .collect();
        let mut data = if r == root {
            want.clone()
        } else {
            vec![9; r * 13]
        };
        comm.broadcast_bytes(root, &mut data).unwrap();
        assert_eq!(data, want);
        let mut empty = if r == root { Vec::new() } else { vec![1, 2, 3] };
        comm.broadcast_bytes(root, &mut empty).unwrap();
        assert!(empty.is_empty());
    }
    assert_eq!(
        c.gather_bytes(n, b"x"),
        Err(CommError::RankOutOfRange { rank: n, size: n })
    );
}

fn ring_exchange(c: &Communicator) {
    let (r, n) = (c.rank(), c.size());
    if n == 1 {
        assert!(
            c.start_exchange(t(1), Vec::new(), Vec::new())
                .unwrap()
                .wait()
                .unwrap()
                .is_empty()
        );
        return;
    }
    let (next, prev) = ((r + 1) % n, (r + n - 1) % n);
    for round in 0..20 {
        let sends = vec![(next, message(round, r, next, 300))];
        let recvs = vec![(prev, message(round, prev, r, 300).len())];
        let got = c
            .start_exchange(t(2), sends, recvs)
            .unwrap()
            .wait()
            .unwrap();
        assert_eq!(
            got,
            vec![(prev, message(round, prev, r, 300))],
            "round {round}"
        );
    }
}

/// Every rank sends every other rank a random-size message; the receives are listed in a
/// rank-dependent order, and the result must come back in that order.
fn all_to_all(c: &Communicator, limit: usize, tag: Tag, rounds: u64) {
    let (r, n) = (c.rank(), c.size());
    let comm = c.with_message_limit(limit);
    for round in 0..rounds {
        let peers: Vec<usize> = (0..n).filter(|&q| q != r).collect();
        let sends = peers
            .iter()
            .map(|&q| (q, message(round + 100, r, q, 5000)))
            .collect();
        let mut order = peers.clone();
        order.sort_by_key(|&q| mix(round ^ (q as u64) << 8 ^ r as u64));
        let recvs = order
            .iter()
            .map(|&q| (q, message(round + 100, q, r, 5000).len()))
            .collect();
        let got = comm
            .start_exchange(tag, sends, recvs)
            .unwrap()
            .wait()
            .unwrap();
        let want: Vec<_> = order
            .iter()
            .map(|&q| (q, message(round + 100, q, r, 5000)))
            .collect();
        assert_eq!(got, want, "round {round}, limit {limit}");
    }
}

fn all_to_all_whole(c: &Communicator) {
    all_to_all(c, amrex_runtime::MAX_MESSAGE_BYTES, t(3), 10);
}

fn all_to_all_in_pieces(c: &Communicator) {
    // Pieces of 64 bytes: most messages go as several MPI messages.
    all_to_all(c, 64, t(4), 5);
}

fn split_phase_with_work_between(c: &Communicator) {
    let (r, n) = (c.rank(), c.size());
    let peers: Vec<usize> = (0..n).filter(|&q| q != r).collect();
    let sends = || {
        peers
            .iter()
            .map(|&q| (q, message(7, r, q, 100_000)))
            .collect::<Vec<_>>()
    };
    let recvs = || {
        peers
            .iter()
            .map(|&q| (q, message(7, q, r, 100_000).len()))
            .collect::<Vec<_>>()
    };
    let ex = c.start_exchange(t(5), sends(), recvs()).unwrap();
    // Local work while the messages are in flight; uneven across ranks.
    let mut acc = 0u64;
    for i in 0..(200_000 * (r as u64 + 1)) {
        acc = acc.wrapping_add(mix(i));
    }
    core::hint::black_box(acc);
    std::thread::sleep(core::time::Duration::from_millis(5 * r as u64));
    let got = ex.wait().unwrap();
    for (q, bytes) in got {
        assert_eq!(bytes, message(7, q, r, 100_000), "from rank {q}");
    }
    // An exchange dropped without wait still completes (Drop waits): the next exchange
    // with the same tag gets its own messages, not stale ones.
    drop(c.start_exchange(t(5), sends(), recvs()).unwrap());
    let sends2 = peers.iter().map(|&q| (q, vec![byte(q); 3])).collect();
    let recvs2 = peers.iter().map(|&q| (q, 3)).collect();
    for (q, bytes) in c
        .start_exchange(t(5), sends2, recvs2)
        .unwrap()
        .wait()
        .unwrap()
    {
        assert_eq!(bytes, vec![byte(r); 3], "from rank {q}");
    }
    // The exchange can be moved to another thread and finished there.
    let ex = c.start_exchange(t(6), sends(), recvs()).unwrap();
    let got = std::thread::spawn(move || ex.wait().unwrap())
        .join()
        .unwrap();
    assert_eq!(got.len(), peers.len());
}

fn check_same_errors_on_every_rank(c: &Communicator) {
    let (r, n) = (c.rank(), c.size());
    c.check_same("the same value", 0xABCD).unwrap();
    if n == 1 {
        return;
    }
    // The last rank disagrees.
    let value = if r == n - 1 { 7 } else { 0xABCD };
    let err = c.check_same("BoxArray hash", value).unwrap_err();
    assert_eq!(
        err,
        CommError::Mismatch {
            what: "BoxArray hash".into(),
            rank_min: n - 1,
            value_min: 7,
            rank_max: 0,
            value_max: 0xABCD,
            size: n,
        }
    );
    let msg = err.to_string();
    assert!(
        msg.contains("BoxArray hash") && msg.contains(&format!("rank {}", n - 1)),
        "{msg}"
    );
    // Every rank got it and every rank goes on: no hang.
    c.barrier().unwrap();
    assert_eq!(c.all_reduce_u64(1, ReduceOp::Sum).unwrap(), n as u64);
}

/// Ranks that call different collectives (a barrier on one, a sum on the others; a sum
/// and a max; gathers to different roots; an operation's own agreement against a
/// barrier) all get `RanksDisagree` and go on: nobody waits in a collective the others
/// never entered.
fn mismatched_collectives_disagree(c: &Communicator) {
    let (r, n) = (c.rank(), c.size());
    if n == 1 {
        return;
    }
    let odd = |op: &'static str| CommError::RanksDisagree { op };
    let got = if r == 0 {
        c.barrier().map(|()| 0)
    } else {
        c.all_reduce_u64(1, ReduceOp::Sum)
    };
    assert_eq!(
        got,
        Err(odd(if r == 0 { "barrier" } else { "all_reduce_u64" }))
    );
    let op = if r == n - 1 {
        ReduceOp::Max
    } else {
        ReduceOp::Sum
    };
    assert_eq!(
        c.all_reduce_f64(1.0, op),
        Err(odd("all_reduce_f64")),
        "rank {r}"
    );
    assert_eq!(c.gather_bytes(r % 2, b"x"), Err(odd("gather_bytes")));
    let mut fp = Fingerprint::new();
    fp.word(7);
    let got = if r == 1 {
        c.agree("my_operation", &fp).map(|_| ())
    } else {
        c.barrier()
    };
    assert_eq!(
        got,
        Err(odd(if r == 1 { "my_operation" } else { "barrier" }))
    );
    // The same operation with different arguments.
    let mut fp = Fingerprint::new();
    fp.usize(r.min(1));
    assert_eq!(
        c.agree("my_operation", &fp).map(|_| ()),
        Err(odd("my_operation"))
    );
    // And everyone is still in step.
    assert_eq!(c.all_reduce_u64(1, ReduceOp::Sum), Ok(n as u64));
}

fn size_mismatch_is_an_error(c: &Communicator) {
    let (r, n) = (c.rank(), c.size());
    if n == 1 {
        return;
    }
    // Rank 0 sends one byte fewer to rank 1 than rank 1 expects.
    let mut sends = Vec::new();
    let mut recvs = Vec::new();
    if r == 0 {
        sends.push((1, vec![5u8; 9]));
    }
    if r == 1 {
        recvs.push((0, 10));
    }
    let result = c.start_exchange(t(8), sends, recvs).unwrap().wait();
    if r == 1 {
        assert_eq!(
            result,
            Err(CommError::SizeMismatch {
                from: 0,
                tag: t(8),
                expected: 10,
                received: 9
            })
        );
    } else {
        assert_eq!(result, Ok(Vec::new()));
    }
}

fn bad_arguments_are_refused_locally(c: &Communicator) {
    let (r, n) = (c.rank(), c.size());
    assert_eq!(
        c.start_exchange(t(1), vec![(r, vec![1])], Vec::new())
            .unwrap_err(),
        CommError::SelfMessage { rank: r }
    );
    assert_eq!(
        c.start_exchange(t(1), Vec::new(), vec![(n, 4)])
            .unwrap_err(),
        CommError::RankOutOfRange { rank: n, size: n }
    );
    if n > 1 {
        let other = (r + 1) % n;
        assert_eq!(
            c.start_exchange(t(1), Vec::new(), vec![(other, 1), (other, 2)])
                .unwrap_err(),
            CommError::DuplicateRank {
                rank: other,
                direction: Direction::Receive
            }
        );
    }
}

fn world_is_one_communicator(c: &Communicator) {
    let again = Communicator::world().unwrap();
    assert_eq!(&again, c);
    assert_ne!(c, &Communicator::single());
    let (rank, size) = c
        .with_mpi(|raw| (raw.rank() as usize, raw.size() as usize))
        .expect("an MPI communicator");
    assert_eq!((rank, size), (c.rank(), c.size()));
    assert!(Communicator::single().with_mpi(|_| ()).is_none());
}

/// A user's own communicator (the world split into even and odd ranks): ours is its
/// duplicate, so a user message with the same tag, posted first, never matches ours.
fn bring_your_own(c: &Communicator) {
    let world = amrex_runtime::mpi::topology::SimpleCommunicator::world();
    let color =
        amrex_runtime::mpi::topology::Color::with_value(i32::try_from(c.rank() % 2).unwrap());
    let user = world.split_by_color(color).expect("a color was given");
    let ours = Communicator::from_mpi(&user);
    assert_eq!(
        (ours.rank(), ours.size()),
        (user.rank() as usize, user.size() as usize)
    );
    assert_ne!(&ours, c);
    let (r, n) = (ours.rank(), ours.size());
    let members = ours.all_reduce_u64(1, ReduceOp::Sum).unwrap();
    assert_eq!(usize::try_from(members).unwrap(), n);
    if n == 1 {
        return;
    }
    let (next, prev) = ((r + 1) % n, (r + n - 1) % n);
    let tag = t(9);
    // The user's message, on their communicator, with our tag, sent before ours.
    let user_msg = vec![0xEE_u8; 4];
    mpi_user_exchange(&user, next, prev, tag.get(), &user_msg, || {
        let got = ours
            .start_exchange(tag, vec![(next, vec![byte(r); 6])], vec![(prev, 6)])
            .unwrap()
            .wait()
            .unwrap();
        assert_eq!(got, vec![(prev, vec![byte(prev); 6])]);
    });
}

/// A raw `MPI_Comm` (as C or mpi4py hand it over): duplicated, so freeing the caller's
/// handle leaves ours working; `MPI_COMM_NULL` refused.
fn bring_a_raw_handle(c: &Communicator) {
    use amrex_runtime::mpi::raw::AsRaw as _;
    let world = amrex_runtime::mpi::topology::SimpleCommunicator::world();
    let color =
        amrex_runtime::mpi::topology::Color::with_value(i32::try_from(c.rank() % 2).unwrap());
    let user = world.split_by_color(color).expect("a color was given");
    // SAFETY: `user` is a live intra-communicator of the MPI this crate links.
    let ours = unsafe { Communicator::from_raw_mpi(user.as_raw()) }.expect("a usable handle");
    assert_eq!(
        (ours.rank(), ours.size()),
        (user.rank() as usize, user.size() as usize)
    );
    drop(user); // MPI_Comm_free of the caller's handle
    let n = ours.all_reduce_u64(1, ReduceOp::Sum).unwrap();
    assert_eq!(usize::try_from(n).unwrap(), ours.size());
    // SAFETY: MPI is initialised; the null handle is a valid value to pass.
    let null = unsafe { Communicator::from_raw_mpi(amrex_runtime::mpi::ffi::RSMPI_COMM_NULL) };
    assert!(matches!(null, Err(CommError::BadHandle { .. })), "{null:?}");
}

/// Sends `msg` to `next` on the user's communicator, runs `between`, then receives the
/// user's message from `prev` and checks it.
fn mpi_user_exchange(
    user: &amrex_runtime::mpi::topology::SimpleCommunicator,
    next: usize,
    prev: usize,
    tag: u16,
    msg: &[u8],
    between: impl FnOnce(),
) {
    amrex_runtime::mpi::request::scope(|scope| {
        let send = user
            .process_at_rank(i32::try_from(next).unwrap())
            .immediate_send_with_tag(scope, msg, i32::from(tag));
        between();
        let (got, _status) = user
            .process_at_rank(i32::try_from(prev).unwrap())
            .receive_vec_with_tag::<u8>(i32::from(tag));
        assert_eq!(got, msg);
        send.wait();
    });
}

/// `AMREX_MPI_TEST_PANIC_RANK=r`: rank r panics while the others wait in a barrier. The
/// run must end (non-zero) quickly; `scripts/test-mpi.sh` checks that it is not a timeout.
fn panic_on_request(c: &Communicator) {
    if let Ok(v) = std::env::var("AMREX_MPI_TEST_PANIC_RANK") {
        let victim: usize = v.parse().expect("AMREX_MPI_TEST_PANIC_RANK is a rank");
        if c.rank() == victim {
            panic!("rank {victim} panics on purpose (AMREX_MPI_TEST_PANIC_RANK)");
        }
        c.barrier().unwrap();
        // With one rank nothing waits: the panic above already failed the run.
        unreachable!(
            "rank {} passed a barrier that rank {victim} never entered",
            c.rank()
        );
    }
}

/// A named check, run on every rank in list order.
type Check = (&'static str, fn(&Communicator));

fn main() {
    let parallel = amrex_runtime::init().expect("MPI initialises");
    let c = parallel.communicator().clone();
    let checks: &[Check] = &[
        ("panic_on_request", panic_on_request),
        ("world_is_one_communicator", world_is_one_communicator),
        ("collectives", collectives),
        ("all_gather_different_lengths", all_gather_different_lengths),
        ("gather_and_broadcast", gather_and_broadcast),
        ("ring_exchange", ring_exchange),
        ("all_to_all_whole", all_to_all_whole),
        ("all_to_all_in_pieces", all_to_all_in_pieces),
        (
            "split_phase_with_work_between",
            split_phase_with_work_between,
        ),
        (
            "check_same_errors_on_every_rank",
            check_same_errors_on_every_rank,
        ),
        (
            "mismatched_collectives_disagree",
            mismatched_collectives_disagree,
        ),
        ("size_mismatch_is_an_error", size_mismatch_is_an_error),
        (
            "bad_arguments_are_refused_locally",
            bad_arguments_are_refused_locally,
        ),
        ("bring_your_own", bring_your_own),
        ("bring_a_raw_handle", bring_a_raw_handle),
    ];
    for (name, check) in checks {
        check(&c);
        c.barrier().unwrap();
        if c.rank() == 0 {
            println!("ok {name} ({} ranks)", c.size());
        }
    }
    let (rank, size) = (c.rank(), c.size());
    drop(c);
    drop(parallel); // MPI_Finalize
    assert_eq!(Communicator::world(), Err(CommError::Finalized));
    if rank == 0 {
        println!(
            "mpi_comm on {size} ranks: {} passed, 0 failed",
            checks.len()
        );
    }
}
