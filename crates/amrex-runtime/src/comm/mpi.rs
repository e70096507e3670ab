//! The MPI side of [`Communicator`], over rsmpi (`mpi` 0.8).
//!
//! # Design
//!
//! - **Thread level: `MPI_THREAD_SERIALIZED`.** The exchange and the collectives are
//!   driven by one thread at a time while rayon works on local tiles, but that thread is
//!   not necessarily the one that called `MPI_Init_thread` (a program may run its solver
//!   on a spawned thread, or Python may call from any thread), which `FUNNELED` would
//!   forbid. `SERIALIZED` costs nothing over `FUNNELED` in MPICH or Open MPI, and
//!   `MULTIPLE` would buy nothing: every MPI call this module makes holds one process-wide
//!   lock, which is exactly `SERIALIZED`'s promise. An exchange's completion polls
//!   (`MPI_Test`) with the lock released between polls, so two threads each waiting on an
//!   exchange cannot deadlock each other; blocking collectives hold the lock, so
//!   collectives of two communicators must not be driven from two threads at once.
//! - **Finalisation.** rsmpi finalises MPI when its `Universe` is dropped. The universe
//!   this crate creates lives in a process-wide `Mutex`, which never drops by itself;
//!   [`crate::finalize`] (or dropping [`crate::init`]'s guard) takes it out and drops it.
//!   A process that never finalises still exits cleanly under MPICH; Open MPI's `mpirun`
//!   reports it. Communicator handles that outlive finalisation leak their MPI handle
//!   instead of freeing it after `MPI_Finalize`, and any use of them panics with a clear
//!   message.
//! - **Panics.** [`abort_on_panic`] (installed by [`Communicator::world`]) chains a panic
//!   hook that calls `MPI_Abort` on the world when there is more than one rank, so a panic
//!   on one rank ends the job instead of leaving the others in a collective forever.
//! - **Owned buffers across the split phase.** An [`Exchange`](super::Exchange) owns its
//!   buffers as raw `(ptr, len, cap)` parts of `Vec`s, lends MPI `'static` slices of them
//!   through rsmpi's [`StaticScope`], and rebuilds the `Vec`s only after every request on
//!   them has completed (in `wait`, or in `Drop`, which waits). Those are this module's
//!   only `unsafe` operations.

use alloc::boxed::Box;
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;
use core::mem::ManuallyDrop;
use std::sync::{Mutex, MutexGuard, Once, PoisonError};

use mpi::Threading;
use mpi::collective::SystemOperation;
use mpi::datatype::{Equivalence, PartitionMut};
use mpi::environment::Universe;
use mpi::request::{Request, StaticScope};
use mpi::topology::SimpleCommunicator;
use mpi::traits::{
    Communicator as _, CommunicatorCollectives as _, Destination as _, Root as _, Source as _,
};

use super::{CommError, Communicator, Kind, MAX_MESSAGE_BYTES, ReduceOp};
use crate::tags::Tag;

/// Held around every MPI call this crate makes: `MPI_THREAD_SERIALIZED` (see the module
/// docs). Lock order: [`WORLD`] before [`MPI_LOCK`], never the other way.
static MPI_LOCK: Mutex<()> = Mutex::new(());

fn lock() -> MutexGuard<'static, ()> {
    // A panic while holding the lock leaves nothing half-done on our side (MPI calls do
    // not unwind), so a poisoned lock is still good.
    MPI_LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The universe this crate initialised (if it did) and the cached world communicator.
struct World {
    universe: Option<Universe>,
    world: Option<Communicator>,
    finalized: bool,
}

static WORLD: Mutex<World> = Mutex::new(World {
    universe: None,
    world: None,
    finalized: false,
});

fn world_state() -> MutexGuard<'static, World> {
    WORLD.lock().unwrap_or_else(PoisonError::into_inner)
}

/// An MPI rank, size, count or displacement (an `int`, never negative) as `usize`.
fn mpi_usize(r: core::ffi::c_int) -> usize {
    usize::try_from(r).expect("MPI ranks, sizes, counts and displacements are never negative")
}

/// Whether an MPI return code is `MPI_SUCCESS` (compared in `i64`, whatever integer type
/// the bindings give the constant).
fn succeeded(code: core::ffi::c_int) -> bool {
    i64::from(code) == i64::from(mpi::ffi::MPI_SUCCESS)
}

fn mpi_rank(r: usize) -> mpi::Rank {
    // Ranks are checked against the communicator's size, itself an MPI `int`.
    mpi::Rank::try_from(r).expect("a rank below the communicator's size fits MPI's int")
}

/// Our own duplicate of an MPI communicator, with its rank and size.
pub(crate) struct MpiComm {
    /// `None` only while being dropped.
    comm: Option<SimpleCommunicator>,
    rank: usize,
    size: usize,
}

// SAFETY: an MPI communicator handle (an `int` in MPICH, a pointer to a process-global
// object in Open MPI) may be used from any thread of the process; what MPI requires is
// that calls are not concurrent at our thread level (SERIALIZED), and every call this
// type makes goes through `with`, which holds `MPI_LOCK`. The cached rank and size are
// plain integers.
unsafe impl Send for MpiComm {}
// SAFETY: as for `Send`: shared references only reach MPI through `with` (under the lock).
unsafe impl Sync for MpiComm {}

impl MpiComm {
    fn duplicate_of<C: mpi::traits::Communicator>(comm: &C) -> Self {
        let _g = lock();
        let dup = comm.duplicate();
        // A duplicate inherits the error handler: MPI_ERRORS_RETURN where mpi4py started
        // MPI. Setting the predefined fatal handler on a live communicator cannot
        // meaningfully fail; `from_raw_mpi` checks it all the same.
        let fatal = errors_are_fatal(&dup);
        debug_assert!(fatal, "MPI_Comm_set_errhandler failed on a fresh duplicate");
        let (rank, size) = (mpi_usize(dup.rank()), mpi_usize(dup.size()));
        MpiComm {
            comm: Some(dup),
            rank,
            size,
        }
    }

    fn raw(&self) -> &SimpleCommunicator {
        self.comm
            .as_ref()
            .expect("an MpiComm holds its communicator until dropped")
    }

    pub(super) fn rank(&self) -> usize {
        self.rank
    }

    pub(super) fn size(&self) -> usize {
        self.size
    }

    /// Runs `f` on the communicator under the MPI lock; panics if MPI was finalised.
    fn with<R>(&self, f: impl FnOnce(&SimpleCommunicator) -> R) -> R {
        let _g = lock();
        assert!(
            !mpi::environment::is_finalized(),
            "amrex-runtime: an MPI communicator was used after MPI was finalised (amrex_runtime::finalize)"
        );
        f(self.raw())
    }

    pub(super) fn barrier(&self) {
        self.with(|c| c.barrier());
    }

    fn all_reduce<T: Equivalence + Copy>(&self, values: &mut [T], op: ReduceOp) {
        self.with(|c| {
            for chunk in values.chunks_mut(MAX_MESSAGE_BYTES) {
                let send = chunk.to_vec();
                let op = match op {
                    ReduceOp::Sum => SystemOperation::sum(),
                    ReduceOp::Min => SystemOperation::min(),
                    ReduceOp::Max => SystemOperation::max(),
                };
                c.all_reduce_into(&send[..], chunk, op);
            }
        });
    }

    pub(super) fn all_reduce_u64(&self, values: &mut [u64], op: ReduceOp) {
        match op {
            ReduceOp::Sum => self.all_reduce(values, op),
            // Debian's MPICH 4.0.2 and Open MPI 4.1.2–4.1.4 compare unsigned integers as
            // signed in MPI_MIN/MPI_MAX (pmodels/mpich#6083, open-mpi/ompi#10525):
            // min(1, u64::MAX) comes out u64::MAX. Flipping the sign bit maps u64 onto
            // i64 in order, and signed MIN/MAX are right everywhere.
            ReduceOp::Min | ReduceOp::Max => {
                const FLIP: u64 = 1 << 63;
                let mut signed: Vec<i64> = values
                    .iter()
                    .map(|&v| i64::from_ne_bytes((v ^ FLIP).to_ne_bytes()))
                    .collect();
                self.all_reduce(&mut signed, op);
                for (v, s) in values.iter_mut().zip(&signed) {
                    *v = u64::from_ne_bytes(s.to_ne_bytes()) ^ FLIP;
                }
            }
        }
    }

    pub(super) fn all_reduce_f64(&self, values: &mut [f64], op: ReduceOp) {
        self.all_reduce(values, op);
    }

    /// Every rank's length (an all-gather), and the `i32` counts and displacements of a
    /// varcount collective over them, or `TooLarge` (alike on every rank).
    fn gather_layout(
        c: &SimpleCommunicator,
        what: &'static str,
        len: usize,
    ) -> Result<Layout, CommError> {
        let size = mpi_usize(c.size());
        let mut lens = vec![0u64; size];
        c.all_gather_into(&(len as u64), &mut lens[..]);
        let total = lens.iter().fold(0u64, |a, &b| a.saturating_add(b));
        let limit = MAX_MESSAGE_BYTES as u64;
        let too_large = || CommError::TooLarge {
            what,
            bytes: total,
            limit,
        };
        if total > limit {
            return Err(too_large());
        }
        // Every length and prefix sum is at most `total` ≤ i32::MAX, so the conversions
        // below succeed.
        let counts = lens
            .iter()
            .map(|&l| mpi::Count::try_from(l).map_err(|_| too_large()))
            .collect::<Result<Vec<_>, _>>()?;
        let mut displs = Vec::with_capacity(size);
        let mut at: mpi::Count = 0;
        for &n in &counts {
            displs.push(at);
            at += n;
        }
        Ok(Layout {
            counts,
            displs,
            total: usize::try_from(total).map_err(|_| too_large())?,
        })
    }

    pub(super) fn all_gather_bytes(&self, data: &[u8]) -> Result<Vec<Vec<u8>>, CommError> {
        self.with(|c| {
            let layout = Self::gather_layout(c, "all_gather_bytes", data.len())?;
            let mut buf = vec![0u8; layout.total];
            {
                let mut part =
                    PartitionMut::new(&mut buf[..], &layout.counts[..], &layout.displs[..]);
                c.all_gather_varcount_into(data, &mut part);
            }
            Ok(layout.split(&buf))
        })
    }

    pub(super) fn gather_bytes(
        &self,
        root: usize,
        data: &[u8],
    ) -> Result<Option<Vec<Vec<u8>>>, CommError> {
        self.with(|c| {
            let layout = Self::gather_layout(c, "gather_bytes", data.len())?;
            let root_process = c.process_at_rank(mpi_rank(root));
            if root == self.rank {
                let mut buf = vec![0u8; layout.total];
                {
                    let mut part =
                        PartitionMut::new(&mut buf[..], &layout.counts[..], &layout.displs[..]);
                    root_process.gather_varcount_into_root(data, &mut part);
                }
                Ok(Some(layout.split(&buf)))
            } else {
                root_process.gather_varcount_into(data);
                Ok(None)
            }
        })
    }

    pub(super) fn broadcast_bytes(
        &self,
        root: usize,
        data: &mut Vec<u8>,
        limit: usize,
    ) -> Result<(), CommError> {
        self.with(|c| {
            let root_process = c.process_at_rank(mpi_rank(root));
            let mut len = data.len() as u64;
            root_process.broadcast_into(&mut len);
            // `len` is the root's `Vec` length: it fits its `usize`, and so ours (the
            // ranks of one job share a pointer width).
            let len = usize::try_from(len).map_err(|_| CommError::TooLarge {
                what: "broadcast_bytes",
                bytes: len,
                limit: usize::MAX as u64,
            })?;
            data.resize(len, 0);
            for chunk in data.chunks_mut(limit) {
                root_process.broadcast_into(chunk);
            }
            Ok(())
        })
    }
}

impl Drop for MpiComm {
    fn drop(&mut self) {
        let comm = self.comm.take();
        let _g = lock();
        if mpi::environment::is_finalized() {
            // `MPI_Comm_free` after `MPI_Finalize` is erroneous; the process is ending
            // its MPI life anyway, so the handle is simply not freed.
            core::mem::forget(comm);
        } else {
            drop(comm);
        }
    }
}

struct Layout {
    counts: Vec<mpi::Count>,
    displs: Vec<mpi::Count>,
    total: usize,
}

impl Layout {
    fn split(&self, buf: &[u8]) -> Vec<Vec<u8>> {
        self.counts
            .iter()
            .zip(&self.displs)
            .map(|(&n, &d)| buf[mpi_usize(d)..mpi_usize(d + n)].to_vec())
            .collect()
    }
}

impl Communicator {
    /// MPI's world (`MPI_COMM_WORLD`, duplicated), initialising MPI on first use with
    /// `MPI_THREAD_SERIALIZED` and installing [`abort_on_panic`]. Every later call returns
    /// the same communicator (until [`crate::finalize`], after which it is
    /// [`CommError::Finalized`]). If MPI was already initialised by someone else (your own
    /// `mpi::initialize()`), it is used as it is and this crate never finalises it.
    /// **Collective** on first use (it duplicates the world communicator).
    pub fn world() -> Result<Self, CommError> {
        let mut w = world_state();
        if let Some(c) = &w.world {
            return Ok(c.clone());
        }
        if w.finalized || mpi::environment::is_finalized() {
            return Err(CommError::Finalized);
        }
        {
            let _g = lock();
            // `None`: MPI is already initialised by its owner, who also finalises it.
            if let Some((universe, _provided)) =
                mpi::initialize_with_threading(Threading::Serialized)
            {
                w.universe = Some(universe);
            }
        }
        check_thread_level()?;
        let comm = Communicator::from_mpi(&SimpleCommunicator::world());
        abort_on_panic();
        w.world = Some(comm.clone());
        Ok(comm)
    }

    /// Bring your own communicator: any rsmpi intra-communicator (the world, a split, a
    /// Cartesian one). It is duplicated (`MPI_Comm_dup`, so this is **collective** over
    /// `comm`), so our messages can never match yours. MPI must be initialised (by you,
    /// which you also finalise). Does not install [`abort_on_panic`]; call it if you want
    /// it.
    pub fn from_mpi<C: mpi::traits::Communicator>(comm: &C) -> Self {
        Communicator {
            kind: Kind::Mpi(Arc::new(MpiComm::duplicate_of(comm))),
            message_limit: MAX_MESSAGE_BYTES,
        }
    }

    /// Bring a raw `MPI_Comm` handle: mpi4py's (`MPI._addressof(comm)` is where it
    /// lies), a C or Fortran code's. It is duplicated (`MPI_Comm_dup`, **collective** over
    /// it), so the caller keeps and frees its own handle and our messages never match
    /// its. MPI must be initialised by its owner, at `MPI_THREAD_SERIALIZED` or above.
    /// Does not install [`abort_on_panic`]; call it if you want it.
    ///
    /// # Safety
    ///
    /// `raw` must be a communicator handle of the MPI library this crate is linked with
    /// (not one of another MPI's ABI) that is not freed during this call.
    ///
    /// # Errors
    ///
    /// [`CommError::NotInitialized`], [`CommError::Finalized`],
    /// [`CommError::ThreadLevel`], or [`CommError::BadHandle`] for `MPI_COMM_NULL` and
    /// inter-communicators.
    pub unsafe fn from_raw_mpi(raw: mpi::ffi::MPI_Comm) -> Result<Self, CommError> {
        if mpi::environment::is_finalized() {
            return Err(CommError::Finalized);
        }
        if !mpi::environment::is_initialized() {
            return Err(CommError::NotInitialized);
        }
        check_thread_level()?;
        let _g = lock();
        // SAFETY: MPI is initialised and not finalised (checked above); `RSMPI_COMM_NULL`
        // is an immutable handle constant that mpi-sys defines once at load time.
        if raw == unsafe { mpi::ffi::RSMPI_COMM_NULL } {
            return Err(CommError::BadHandle {
                reason: "it is MPI_COMM_NULL",
            });
        }
        // The caller's handle may carry MPI_ERRORS_RETURN (mpi4py sets it on its
        // communicators, and duplicates inherit it): every return code is checked here.
        let mut inter = 0;
        // SAFETY: `raw` is a live communicator of this MPI library (the caller's promise)
        // and not MPI_COMM_NULL; `inter` is a valid `int` to write to.
        if !succeeded(unsafe { mpi::ffi::MPI_Comm_test_inter(raw, &mut inter) }) {
            return Err(CommError::BadHandle {
                reason: "MPI_Comm_test_inter refused it",
            });
        }
        if inter != 0 {
            return Err(CommError::BadHandle {
                reason: "it is an inter-communicator (an intra-communicator is needed)",
            });
        }
        // SAFETY: as above; `dup` is written by `MPI_Comm_dup` before it is read.
        let mut dup = unsafe { mpi::ffi::RSMPI_COMM_NULL };
        // SAFETY: `raw` is a live intra-communicator (checked above), `dup` a valid handle
        // slot; the MPI lock is held (SERIALIZED).
        let dup_ok = succeeded(unsafe { mpi::ffi::MPI_Comm_dup(raw, &mut dup) });
        // SAFETY: reading the immutable handle constant, as above.
        if !dup_ok || dup == unsafe { mpi::ffi::RSMPI_COMM_NULL } {
            return Err(CommError::BadHandle {
                reason: "MPI_Comm_dup failed on it",
            });
        }
        // SAFETY: `dup` is a fresh intra-communicator that nothing else holds: not
        // MPI_COMM_NULL (checked above), WORLD or SELF (MPI_Comm_dup makes a new handle),
        // not an inter-communicator (a dup of an intra-communicator is one), and used
        // from now on only through this `SimpleCommunicator`, which frees it when
        // dropped (also on the error return just below).
        let owned = unsafe { <SimpleCommunicator as mpi::raw::FromRaw>::from_raw(dup) };
        // rsmpi ignores return codes: errors on our duplicate must end the job, as on
        // MPI's world, instead of returning unnoticed.
        if !errors_are_fatal(&owned) {
            return Err(CommError::BadHandle {
                reason: "MPI_Comm_set_errhandler failed on its duplicate",
            });
        }
        let (rank, size) = (mpi_usize(owned.rank()), mpi_usize(owned.size()));
        Ok(Communicator {
            kind: Kind::Mpi(Arc::new(MpiComm {
                comm: Some(owned),
                rank,
                size,
            })),
            message_limit: MAX_MESSAGE_BYTES,
        })
    }

    /// Runs `f` on the rsmpi communicator this one runs on (our duplicate) while holding
    /// this crate's MPI lock, so that `f`'s MPI calls never run at the same time as this
    /// crate's (`MPI_THREAD_SERIALIZED`); `None` for a single-process communicator.
    /// `f` must not call this crate's communicator methods (the lock is not reentrant).
    pub fn with_mpi<R>(&self, f: impl FnOnce(&SimpleCommunicator) -> R) -> Option<R> {
        match &self.kind {
            Kind::Single => None,
            Kind::Mpi(c) => {
                let _g = lock();
                Some(f(c.raw()))
            }
        }
    }
}

/// Sets `MPI_ERRORS_ARE_FATAL` on `c` (a communicator this crate owns; the MPI lock
/// held): rsmpi does not check return codes, so an error must not return. Whether MPI
/// accepted it.
fn errors_are_fatal(c: &SimpleCommunicator) -> bool {
    use mpi::raw::AsRaw;
    // SAFETY: `c` is a live communicator (held by reference); `RSMPI_ERRORS_ARE_FATAL`
    // is a predefined error handler constant that mpi-sys defines once at load time.
    let code =
        unsafe { mpi::ffi::MPI_Comm_set_errhandler(c.as_raw(), mpi::ffi::RSMPI_ERRORS_ARE_FATAL) };
    succeeded(code)
}

/// This crate drives MPI from whichever thread runs an operation (one at a time): it
/// needs `MPI_THREAD_SERIALIZED` or above, which an MPI initialised by someone else may
/// not give.
fn check_thread_level() -> Result<(), CommError> {
    let level = {
        let _g = lock();
        mpi::environment::threading_support()
    };
    if matches!(level, Threading::Serialized | Threading::Multiple) {
        return Ok(());
    }
    Err(CommError::ThreadLevel {
        provided: match level {
            Threading::Single => "MPI_THREAD_SINGLE",
            _ => "MPI_THREAD_FUNNELED",
        },
    })
}

/// MPI's world communicator if [`Communicator::world`] has made it (and MPI is not
/// finalised yet).
pub(crate) fn current_world() -> Option<Communicator> {
    world_state().world.clone()
}

/// Finalises MPI if this crate initialised it; see [`crate::finalize`].
pub(crate) fn finalize_mpi() {
    let mut w = world_state();
    // Our duplicate of the world is freed here, before `MPI_Finalize`, unless the caller
    // still holds clones (those leak their handle, see `MpiComm::drop`).
    drop(w.world.take());
    if let Some(universe) = w.universe.take() {
        let _g = lock();
        drop(universe); // MPI_Finalize
        w.finalized = true;
    }
}

/// Installs (once per process) a panic hook that, after the previous hook has printed
/// the panic, calls `MPI_Abort` on MPI's world when it has more than one rank: a rank
/// that panics must not leave the others waiting in a collective forever. With one rank
/// the panic unwinds as usual. [`Communicator::world`] installs it; call it yourself if
/// you bring your own communicator. (It also means `catch_unwind` cannot recover a panic
/// under `mpirun -n 2` or more; [`catch_panic`](crate::catch_panic) can, on its own
/// thread.)
pub fn abort_on_panic() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            previous(info);
            if super::catching_panics() {
                // `catch_panic` takes it, and the caller tells the other ranks.
                return;
            }
            abort_all_ranks("amrex", "panicked");
        }));
    });
}

/// Ends every rank of MPI's world with `MPI_Abort`, saying on stderr that this rank
/// `what` (`"panicked"`, say), when MPI is running with more than one rank; returns
/// otherwise. For a rank that cannot go on while the others may be waiting for it in a
/// collective: they would wait forever. Takes no MPI lock (the failing thread may hold
/// it); this is the last MPI call the process makes.
pub fn abort_all_ranks(who: &str, what: &str) {
    if mpi::environment::is_initialized() && !mpi::environment::is_finalized() {
        let world = SimpleCommunicator::world();
        if world.size() > 1 {
            std::eprintln!(
                "{who}: rank {} of {} {what}; MPI_Abort ends every rank so that none waits for it",
                world.rank(),
                world.size()
            );
            world.abort(1);
        }
    }
}

/// A `Vec<u8>` taken apart, so that MPI can hold a `'static` slice of it while we keep
/// the right to free it once MPI is done.
///
/// Invariant: `(ptr, len, cap)` are the parts of a `Vec<u8>` that nothing else owns.
struct RawBuf {
    ptr: *mut u8,
    len: usize,
    cap: usize,
}

impl RawBuf {
    fn new(v: Vec<u8>) -> Self {
        let mut v = ManuallyDrop::new(v);
        RawBuf {
            ptr: v.as_mut_ptr(),
            len: v.len(),
            cap: v.capacity(),
        }
    }

    /// The whole buffer as a `'static` slice, to hand to MPI.
    ///
    /// # Safety
    ///
    /// Call at most once per buffer, and call [`RawBuf::into_vec`] only after the slice
    /// and everything made from it (MPI requests on it) are gone.
    unsafe fn lend(&mut self) -> &'static mut [u8] {
        // SAFETY: `ptr` points to `len` initialised bytes of a live allocation that only
        // this `RawBuf` owns (invariant); the caller hands out this slice once and frees
        // the allocation only after the slice is dead, so it is unique while it lives.
        unsafe { core::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    /// The `Vec` back.
    ///
    /// # Safety
    ///
    /// No slice from [`RawBuf::lend`] (and no MPI request on one) may still be alive.
    unsafe fn into_vec(self) -> Vec<u8> {
        // SAFETY: the parts came from a `Vec<u8>` (invariant) and no borrow of them is
        // alive (caller), so the `Vec` is rebuilt as its sole owner, exactly once
        // (`self` is consumed).
        unsafe { Vec::from_raw_parts(self.ptr, self.len, self.cap) }
    }
}

/// One MPI message of an exchange (a whole buffer, or a piece of one above the limit).
struct Piece {
    /// `Some` until the request has completed.
    request: Option<Request<'static, [u8], StaticScope>>,
    /// For receives: the index in `Pending::recvs`; `None` for sends.
    recv: Option<usize>,
    /// For receives: the bytes this piece expects, then the bytes that arrived.
    expected: usize,
    received: usize,
}

/// An exchange in flight: the buffers and every piece's request.
///
/// Invariant: a buffer is given back (`RawBuf::into_vec`) only when no piece has a
/// request left, i.e. after `complete_all`.
pub(crate) struct Pending {
    /// Keeps the communicator (and its MPI handle) alive while requests are in flight.
    comm: Arc<MpiComm>,
    tag: Tag,
    /// `(peer rank, buffer)` in the order of the caller's `recvs`.
    recvs: Vec<(usize, RawBuf)>,
    sends: Vec<RawBuf>,
    pieces: Vec<Piece>,
}

// SAFETY: the raw buffers are owned by this value alone (`RawBuf`'s invariant); the
// requests are MPI handles that any thread may complete at our thread level
// (SERIALIZED), and every MPI call on them holds `MPI_LOCK`.
unsafe impl Send for Pending {}
// SAFETY: `Pending` has no method taking `&self`; a shared reference can do nothing.
unsafe impl Sync for Pending {}

impl Pending {
    /// Posts the receives, then the sends (arguments already checked by the caller).
    pub(super) fn start(
        comm: &Arc<MpiComm>,
        tag: Tag,
        sends: Vec<(usize, Vec<u8>)>,
        recvs: Vec<(usize, usize)>,
        limit: usize,
    ) -> Pending {
        let mut p = Pending {
            comm: Arc::clone(comm),
            tag,
            recvs: Vec::with_capacity(recvs.len()),
            sends: Vec::with_capacity(sends.len()),
            pieces: Vec::new(),
        };
        let mpi_tag = mpi::Tag::from(tag.get());
        let _g = lock();
        assert!(
            !mpi::environment::is_finalized(),
            "amrex-runtime: an exchange was started after MPI was finalised (amrex_runtime::finalize)"
        );
        let raw = p.comm.raw();
        for (i, (peer, bytes)) in recvs.into_iter().enumerate() {
            p.recvs.push((peer, RawBuf::new(vec![0u8; bytes])));
            // SAFETY: lent once, right after it was made; `Pending`'s invariant frees it
            // only after `complete_all` has finished every request on its pieces.
            let whole = unsafe { p.recvs[i].1.lend() };
            let process = raw.process_at_rank(mpi_rank(peer));
            for chunk in pieces_mut(whole, limit) {
                let expected = chunk.len();
                let request = process.immediate_receive_into_with_tag(StaticScope, chunk, mpi_tag);
                p.pieces.push(Piece {
                    request: Some(request),
                    recv: Some(i),
                    expected,
                    received: 0,
                });
            }
        }
        for (peer, data) in sends {
            p.sends.push(RawBuf::new(data));
            let last = p.sends.len() - 1;
            // SAFETY: as for the receives.
            let whole: &'static [u8] = unsafe { p.sends[last].lend() };
            let process = raw.process_at_rank(mpi_rank(peer));
            for chunk in pieces(whole, limit) {
                let request = process.immediate_send_with_tag(StaticScope, chunk, mpi_tag);
                p.pieces.push(Piece {
                    request: Some(request),
                    recv: None,
                    expected: 0,
                    received: 0,
                });
            }
        }
        p
    }

    /// Completes every request: polls with `MPI_Test` under the lock, releasing it (and
    /// yielding the CPU, which matters on oversubscribed nodes) between rounds.
    fn complete_all(&mut self) {
        while self.pieces.iter().any(|p| p.request.is_some()) {
            {
                let _g = lock();
                for piece in &mut self.pieces {
                    if let Some(request) = piece.request.take() {
                        match request.test() {
                            Ok(status) => {
                                if piece.recv.is_some() {
                                    let n = status.count(u8::equivalent_datatype());
                                    piece.received = usize::try_from(n).unwrap_or(usize::MAX);
                                }
                            }
                            Err(request) => piece.request = Some(request),
                        }
                    }
                }
            }
            if self.pieces.iter().any(|p| p.request.is_some()) {
                std::thread::yield_now();
            }
        }
    }

    /// The received buffers, in the caller's order (and the send buffers freed).
    fn take_buffers(&mut self) -> Vec<(usize, Vec<u8>)> {
        self.complete_all();
        self.pieces.clear();
        // `complete_all` finished every request, and the pieces (which held the lent
        // slices) are gone: no borrow of any buffer is left.
        for buf in self.sends.drain(..) {
            // SAFETY: no slice of `buf` or request on one is alive (just above).
            let v = unsafe { buf.into_vec() };
            drop(v);
        }
        let mut out = Vec::with_capacity(self.recvs.len());
        for (peer, buf) in self.recvs.drain(..) {
            // SAFETY: no slice of `buf` or request on one is alive (just above).
            let v = unsafe { buf.into_vec() };
            out.push((peer, v));
        }
        out
    }

    pub(super) fn wait(mut self) -> Result<Vec<(usize, Vec<u8>)>, CommError> {
        self.complete_all();
        let mut got = vec![0usize; self.recvs.len()];
        let mut short = vec![false; self.recvs.len()];
        for piece in &self.pieces {
            if let Some(i) = piece.recv {
                got[i] = got[i].saturating_add(piece.received);
                short[i] |= piece.received != piece.expected;
            }
        }
        let mismatch = short
            .iter()
            .position(|&s| s)
            .map(|i| CommError::SizeMismatch {
                from: self.recvs[i].0,
                tag: self.tag,
                expected: self.recvs[i].1.len,
                received: got[i],
            });
        let buffers = self.take_buffers();
        match mismatch {
            Some(e) => Err(e),
            None => Ok(buffers),
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        let finalized = {
            let _g = lock();
            mpi::environment::is_finalized()
        };
        if finalized {
            // MPI ended while this exchange was in flight (nobody waited for it, e.g. a
            // `fill_boundary_nowait` without its finish before the program's end): no
            // MPI call is allowed any more, so the requests are not completed but
            // forgotten, and the buffers (raw parts, which free nothing when dropped)
            // are leaked rather than freed under MPI.
            core::mem::forget(core::mem::take(&mut self.pieces));
            return;
        }
        // MPI may still be reading or writing the buffers: finish first, then free.
        drop(self.take_buffers());
    }
}

/// A send buffer in pieces of at most `limit` bytes; an empty buffer is one empty piece
/// (zero-byte messages are sent like any other).
fn pieces(whole: &'static [u8], limit: usize) -> Vec<&'static [u8]> {
    if whole.is_empty() {
        vec![whole]
    } else {
        whole.chunks(limit).collect()
    }
}

/// As [`pieces`], for a receive buffer.
fn pieces_mut(whole: &'static mut [u8], limit: usize) -> Vec<&'static mut [u8]> {
    if whole.is_empty() {
        vec![whole]
    } else {
        whole.chunks_mut(limit).collect()
    }
}
