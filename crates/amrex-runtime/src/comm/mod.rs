//! The communicator: who this process is among how many, the collectives every rank
//! calls together, and split-phase point-to-point exchange of byte buffers.
//!
//! One [`Communicator`] type covers both cases, so callers do not sprinkle `cfg`:
//!
//! - [`Communicator::single`] (also [`Default`]) is one process: rank 0 of 1. Every
//!   collective returns its own input, and an exchange may not name any rank (a message to
//!   oneself is a local copy, which callers do themselves). This part is `no_std` + `alloc`.
//! - With the `mpi` feature, `Communicator::world` (MPI's world, initialised on first
//!   use) and `Communicator::from_mpi` (bring your own rsmpi communicator) give a
//!   communicator over MPI. It always works on its own duplicate of the MPI communicator,
//!   so its messages never match anybody else's.
//!
//! # Collective means every rank, same order
//!
//! Methods documented as **collective** must be called by every rank of the communicator,
//! in the same order, with arguments that agree where they say so (the same `root`, the
//! same [`ReduceOp`]). A rank that skips one leaves the others waiting forever; that is
//! MPI's rule. What this type does about it is make a disagreement cheap to detect: every
//! collective starts with [`Communicator::agree`], one all-reduce over a [`Fingerprint`]
//! of the operation and its arguments (its name, a `BoxArray` and its map, components,
//! ghost widths, ...). Ranks that called different collectives, or one with different
//! arguments, all get [`CommError::RanksDisagree`] from it instead of waiting in
//! mismatched ones. `Communicator`'s own collectives (`barrier`, `all_reduce_*`,
//! `all_gather_bytes`, ...) each agree on their own; a library operation agrees once on
//! everything it was given and then runs its collectives on the [`Agreed`] token `agree`
//! returns, which skips the per-call check. [`Communicator::check_same`] is the same
//! check for one value.
//!
//! # Split-phase exchange
//!
//! [`Communicator::start_exchange`] posts every receive, then every send, and returns an
//! [`Exchange`] that owns the buffers; the caller does its local copies and then calls
//! [`Exchange::wait`], which hands back the received buffers in the order the receives
//! were listed (so unpacking follows the caller's plan, not the arrival order). This is
//! AMReX's `FillBoundary_nowait` / `FillBoundary_finish` split. Dropping an `Exchange`
//! without waiting still completes it (it waits in `Drop`), so its buffers are never freed
//! under MPI's feet.

#[cfg(feature = "mpi")]
mod mpi;

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use crate::fingerprint::Fingerprint;
use crate::tags::Tag;

#[cfg(feature = "mpi")]
pub(crate) use self::mpi::finalize_mpi;
#[cfg(feature = "mpi")]
pub use self::mpi::{abort_all_ranks, abort_on_panic};

/// Ends every rank of MPI's world when one cannot go on (feature `mpi`); without MPI
/// there are no other ranks to wait, and this returns: the caller goes on to fail as it
/// would anyway.
#[cfg(not(feature = "mpi"))]
pub fn abort_all_ranks(who: &str, what: &str) {
    let _ = (who, what);
}

/// Installs the panic hook that ends every rank when one panics (feature `mpi`); without
/// MPI a panic has no other ranks to strand, and this does nothing.
#[cfg(not(feature = "mpi"))]
pub fn abort_on_panic() {}

/// MPI counts are C `int`s: no single MPI message or collective buffer may hold more
/// bytes than this. Larger point-to-point messages and broadcasts are split into pieces of
/// at most this size (or of [`Communicator::with_message_limit`]'s size); the gathers
/// refuse a total above it with [`CommError::TooLarge`].
pub const MAX_MESSAGE_BYTES: usize = i32::MAX as usize;

/// The largest message tag: MPI guarantees tags up to 32767 on every implementation
/// (`MPI_TAG_UB` ≥ 32767), and every [`Tag`] is at most this.
pub const MAX_TAG: u16 = 32767;

/// A reduction for [`Communicator::all_reduce_u64`] and [`Communicator::all_reduce_f64`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// The sum over ranks (`u64` wraps on overflow, as MPI's does).
    Sum,
    /// The smallest value.
    Min,
    /// The largest value.
    Max,
}

/// Which side of an exchange a [`CommError::DuplicateRank`] was found on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// The `sends` list.
    Send,
    /// The `recvs` list.
    Receive,
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::Send => "send",
            Direction::Receive => "receive",
        })
    }
}

/// What went wrong in a communicator call.
///
/// Errors of collective calls ([`CommError::Mismatch`], [`CommError::TooLarge`] from a
/// gather, [`CommError::RankOutOfRange`] for a root) are returned on every rank alike.
/// Argument errors of [`Communicator::start_exchange`] are found locally, before anything
/// is posted, so only the rank with the bad plan sees them: treat them as fatal (the
/// other ranks are waiting for its messages).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CommError {
    /// An exchange named this process's own rank; callers copy locally instead.
    SelfMessage {
        /// The rank (this process's own).
        rank: usize,
    },
    /// A rank (a peer or a root) is not below the communicator's size.
    RankOutOfRange {
        /// The rank given.
        rank: usize,
        /// The communicator's size.
        size: usize,
    },
    /// An exchange listed the same peer twice on one side (one message per neighbour).
    DuplicateRank {
        /// The repeated rank.
        rank: usize,
        /// On which side.
        direction: Direction,
    },
    /// A received message was not the size the receive expected (the two ranks' plans
    /// differ).
    SizeMismatch {
        /// The sending rank.
        from: usize,
        /// The exchange tag.
        tag: Tag,
        /// The bytes the receiver expected.
        expected: usize,
        /// The bytes that arrived.
        received: usize,
    },
    /// A collective buffer over the MPI count limit ([`MAX_MESSAGE_BYTES`]).
    TooLarge {
        /// Which call.
        what: &'static str,
        /// The bytes asked for.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// [`Communicator::check_same`] found ranks that disagree.
    Mismatch {
        /// What was compared (the caller's words).
        what: String,
        /// The lowest rank holding the smallest value.
        rank_min: usize,
        /// The smallest value.
        value_min: u64,
        /// The lowest rank holding the largest value.
        rank_max: usize,
        /// The largest value.
        value_max: u64,
        /// The communicator's size.
        size: usize,
    },
    /// The ranks disagree on what should be one collective operation (they called
    /// different ones, or passed different arguments): [`Communicator::agree`]'s error,
    /// on every rank.
    RanksDisagree {
        /// The operation this rank called.
        op: &'static str,
    },
    /// MPI was finalised ([`crate::finalize`]) before this call.
    Finalized,
    /// A call that adopts someone else's MPI (`Communicator::from_raw_mpi`) found it not
    /// initialised.
    NotInitialized,
    /// A raw MPI communicator handle that cannot be used.
    BadHandle {
        /// Why.
        reason: &'static str,
    },
    /// MPI was initialised (by its owner) with a thread level below
    /// `MPI_THREAD_SERIALIZED`, which this crate needs: it drives MPI from whichever
    /// thread runs an operation, one at a time.
    ThreadLevel {
        /// The level MPI provides.
        provided: &'static str,
    },
}

impl fmt::Display for CommError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommError::SelfMessage { rank } => write!(
                f,
                "exchange names this process's own rank {rank}; copy locally instead of messaging oneself"
            ),
            CommError::RankOutOfRange { rank, size } => {
                write!(
                    f,
                    "rank {rank} out of range for a communicator of {size} ranks"
                )
            }
            CommError::DuplicateRank { rank, direction } => write!(
                f,
                "exchange lists rank {rank} twice among its {direction}s (one message per neighbour)"
            ),
            CommError::SizeMismatch {
                from,
                tag,
                expected,
                received,
            } => write!(
                f,
                "message from rank {from} (tag {tag}) has {received} bytes, the receive expected {expected}: the ranks' copy plans differ"
            ),
            CommError::TooLarge { what, bytes, limit } => {
                write!(
                    f,
                    "{what}: {bytes} bytes exceed the MPI count limit of {limit} bytes"
                )
            }
            CommError::Mismatch {
                what,
                rank_min,
                value_min,
                rank_max,
                value_max,
                size,
            } => write!(
                f,
                "ranks disagree on {what}: rank {rank_min} has {value_min:#018x}, rank {rank_max} has {value_max:#018x} (checked across {size} ranks)"
            ),
            CommError::RanksDisagree { op } => write!(
                f,
                "{op}: the ranks disagree on what should be one collective operation (they \
                 called different ones, or with different arguments)"
            ),
            CommError::Finalized => f.write_str("MPI was already finalised"),
            CommError::NotInitialized => f.write_str(
                "MPI is not initialised: whoever owns the communicator initialises MPI first",
            ),
            CommError::BadHandle { reason } => {
                write!(f, "the MPI communicator handle cannot be used: {reason}")
            }
            CommError::ThreadLevel { provided } => write!(
                f,
                "MPI provides {provided}, but amrex needs MPI_THREAD_SERIALIZED (initialise \
                 MPI with mpi::initialize_with_threading(Threading::Serialized), or let \
                 amrex_runtime::init() do it)"
            ),
        }
    }
}

impl core::error::Error for CommError {}

/// The communicator handle that a `DistributionMapping` and every `FabArray` carry (an
/// AMReX `ParallelDescriptor` you can hold).
///
/// Cheap to clone (an `Arc` inside for MPI; nothing for one process). `Default` is
/// [`Communicator::single`]. Two handles compare equal when they are the same
/// communicator (clones of one handle, or both single-process); `Communicator::world`
/// returns the same one each time.
#[derive(Clone)]
pub struct Communicator {
    kind: Kind,
    /// Largest piece of one message; every rank must use the same.
    message_limit: usize,
}

#[derive(Clone, Default)]
enum Kind {
    #[default]
    Single,
    #[cfg(feature = "mpi")]
    Mpi(alloc::sync::Arc<self::mpi::MpiComm>),
}

impl Default for Communicator {
    fn default() -> Self {
        Communicator::single()
    }
}

impl PartialEq for Communicator {
    fn eq(&self, other: &Self) -> bool {
        match (&self.kind, &other.kind) {
            (Kind::Single, Kind::Single) => true,
            #[cfg(feature = "mpi")]
            (Kind::Mpi(a), Kind::Mpi(b)) => alloc::sync::Arc::ptr_eq(a, b),
            #[cfg(feature = "mpi")]
            _ => false,
        }
    }
}

impl Eq for Communicator {}

impl fmt::Debug for Communicator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Communicator")
            .field("rank", &self.rank())
            .field("size", &self.size())
            .field("mpi", &!self.is_single_kind())
            .finish()
    }
}

impl Communicator {
    /// One process: rank 0 of 1.
    pub const fn single() -> Self {
        Communicator {
            kind: Kind::Single,
            message_limit: MAX_MESSAGE_BYTES,
        }
    }

    /// The communicator a new `DistributionMapping` uses unless told otherwise: MPI's world once [`crate::init`] or `Communicator::world` has run in this
    /// process (feature `mpi`), else [`Communicator::single`]. So a program that calls
    /// `init()` first runs unchanged on one process or under `mpirun`.
    pub fn current() -> Self {
        #[cfg(feature = "mpi")]
        if let Some(world) = self::mpi::current_world() {
            return world;
        }
        Communicator::single()
    }

    /// This process's rank, `0..size()`.
    pub fn rank(&self) -> usize {
        match &self.kind {
            Kind::Single => 0,
            #[cfg(feature = "mpi")]
            Kind::Mpi(c) => c.rank(),
        }
    }

    /// The number of ranks.
    pub fn size(&self) -> usize {
        match &self.kind {
            Kind::Single => 1,
            #[cfg(feature = "mpi")]
            Kind::Mpi(c) => c.size(),
        }
    }

    /// Whether there is only one rank (single-process, or an MPI communicator of size 1).
    pub fn is_single(&self) -> bool {
        self.size() == 1
    }

    fn is_single_kind(&self) -> bool {
        matches!(self.kind, Kind::Single)
    }

    /// The same communicator, but exchanges and broadcasts split each message into pieces
    /// of at most `bytes` (clamped to `1..=`[`MAX_MESSAGE_BYTES`], the default). Every
    /// rank must use the same limit for the same exchange. Useful where an MPI transport
    /// handles huge messages badly, and to test the splitting with small messages.
    #[must_use]
    pub fn with_message_limit(&self, bytes: usize) -> Self {
        Communicator {
            kind: self.kind.clone(),
            message_limit: bytes.clamp(1, MAX_MESSAGE_BYTES),
        }
    }

    /// The piece size of [`Communicator::with_message_limit`].
    pub fn message_limit(&self) -> usize {
        self.message_limit
    }

    /// **Collective.** Returns when every rank has entered it. It is the agreement
    /// itself ([`Communicator::agree`] on `"barrier"`): a rank that calls another
    /// collective at the same time gets [`CommError::RanksDisagree`] with all the
    /// others, instead of leaving them waiting.
    ///
    /// # Errors
    /// [`CommError::RanksDisagree`] on every rank when the ranks called different
    /// collectives.
    pub fn barrier(&self) -> Result<(), CommError> {
        self.agree("barrier", &Fingerprint::new()).map(|_| ())
    }

    /// **Collective.** `op` over every rank's `x` (every rank passes the same `op`); every
    /// rank gets the result. `u64` sums wrap on overflow, as MPI's do.
    ///
    /// # Errors
    /// [`CommError::RanksDisagree`] on every rank when the ranks called different
    /// collectives or passed different `op`s.
    pub fn all_reduce_u64(&self, x: u64, op: ReduceOp) -> Result<u64, CommError> {
        let mut v = [x];
        self.all_reduce_u64_slice(&mut v, op)?;
        Ok(v[0])
    }

    /// **Collective.** `op` over every rank's `x`; every rank gets the result. A `Sum`
    /// adds in MPI's order, which may depend on the rank count; `Min`/`Max` with a NaN are
    /// as the MPI library makes them.
    ///
    /// # Errors
    /// As [`Communicator::all_reduce_u64`].
    pub fn all_reduce_f64(&self, x: f64, op: ReduceOp) -> Result<f64, CommError> {
        let mut v = [x];
        self.all_reduce_f64_slice(&mut v, op)?;
        Ok(v[0])
    }

    /// **Collective.** Element-wise [`Communicator::all_reduce_u64`], in place.
    ///
    /// # Errors
    /// [`CommError::RanksDisagree`] on every rank when the ranks called different
    /// collectives, or passed different `op`s or slice lengths.
    pub fn all_reduce_u64_slice(&self, values: &mut [u64], op: ReduceOp) -> Result<(), CommError> {
        let mut fp = Fingerprint::new();
        fp.word(op as u64).word(values.len() as u64);
        self.agree("all_reduce_u64", &fp)?
            .all_reduce_u64_slice(values, op);
        Ok(())
    }

    /// **Collective.** Element-wise [`Communicator::all_reduce_f64`], in place.
    ///
    /// # Errors
    /// As [`Communicator::all_reduce_u64_slice`].
    pub fn all_reduce_f64_slice(&self, values: &mut [f64], op: ReduceOp) -> Result<(), CommError> {
        let mut fp = Fingerprint::new();
        fp.word(op as u64).word(values.len() as u64);
        self.agree("all_reduce_f64", &fp)?
            .all_reduce_f64_slice(values, op);
        Ok(())
    }

    /// **Collective.** Every rank's bytes (any length, zero included), indexed by rank,
    /// on every rank.
    ///
    /// # Errors
    /// [`CommError::RanksDisagree`] when the ranks called different collectives;
    /// [`CommError::TooLarge`] when the total exceeds MPI's count limit
    /// ([`MAX_MESSAGE_BYTES`]). Either on every rank.
    pub fn all_gather_bytes(&self, data: &[u8]) -> Result<Vec<Vec<u8>>, CommError> {
        self.agree("all_gather_bytes", &Fingerprint::new())?
            .all_gather_bytes(data)
    }

    /// **Collective.** Every rank's bytes, indexed by rank, on `root` (`Some`); the other
    /// ranks get `None`.
    ///
    /// # Errors
    /// As [`Communicator::all_gather_bytes`], and [`CommError::RanksDisagree`] when the
    /// ranks name different roots, [`CommError::RankOutOfRange`] for a root past the
    /// last rank; all on every rank.
    pub fn gather_bytes(
        &self,
        root: usize,
        data: &[u8],
    ) -> Result<Option<Vec<Vec<u8>>>, CommError> {
        let mut fp = Fingerprint::new();
        fp.word(root as u64);
        self.agree("gather_bytes", &fp)?.gather_bytes(root, data)
    }

    /// **Collective.** `root`'s `data` replaces every other rank's `data` (resized to fit;
    /// the other ranks' contents and lengths do not matter). Any length: long buffers go
    /// in pieces.
    ///
    /// # Errors
    /// [`CommError::RanksDisagree`] when the ranks called different collectives or name
    /// different roots, [`CommError::RankOutOfRange`] for a root past the last rank; both
    /// on every rank.
    pub fn broadcast_bytes(&self, root: usize, data: &mut Vec<u8>) -> Result<(), CommError> {
        let mut fp = Fingerprint::new();
        fp.word(root as u64);
        self.agree("broadcast_bytes", &fp)?
            .broadcast_bytes(root, data)
    }

    /// **Collective.** The ranks-agree check that every collective of the workspace
    /// starts with: every rank hashes what should be one operation (`op`, and in `fp`
    /// its operands and arguments), and one all-reduce compares the hashes. When they
    /// agree, the returned [`Agreed`] gives the collectives that operation runs; when
    /// they differ, **every** rank gets [`CommError::RanksDisagree`] naming `op`, and no
    /// rank waits in a collective that the others never enter.
    ///
    /// Ranks that call two different operations meet in this same all-reduce (each
    /// operation starts with it), so they disagree instead of hanging. On one rank it
    /// costs nothing.
    ///
    /// ```
    /// use amrex_runtime::{Communicator, Fingerprint, ReduceOp};
    /// let comm = Communicator::single();
    /// let mut fp = Fingerprint::new();
    /// fp.word(42);
    /// let agreed = comm.agree("my_sum", &fp)?;
    /// assert_eq!(agreed.all_reduce_u64(5, ReduceOp::Sum), 5);
    /// # Ok::<(), amrex_runtime::CommError>(())
    /// ```
    ///
    /// # Errors
    /// [`CommError::RanksDisagree`] on every rank.
    pub fn agree(&self, op: &'static str, fp: &Fingerprint) -> Result<Agreed<'_>, CommError> {
        if !self.is_single() {
            let mut h = Fingerprint::new();
            h.str(op).word(fp.value());
            self.check_same_raw(h.value())
                .map_err(|_| CommError::RanksDisagree { op })?;
        }
        Ok(Agreed { comm: self })
    }

    /// **Collective.** Whether every rank passed the same `value` (a hash of a `BoxArray`
    /// and its map, say). When they differ, **every** rank returns
    /// [`CommError::Mismatch`] naming `what`, the lowest rank with the smallest value and
    /// the lowest rank with the largest — no rank hangs or aborts, and all can go on to
    /// the next collective. Costs one all-reduce (two when they differ). It is the same
    /// all-reduce as [`Communicator::agree`]'s, so it also meets other collectives
    /// without hanging; use `agree` to go on to the operation's collectives.
    ///
    /// # Errors
    /// [`CommError::Mismatch`] on every rank.
    pub fn check_same(&self, what: &str, value: u64) -> Result<(), CommError> {
        self.check_same_raw(value)
            .map_err(
                |(rank_min, value_min, rank_max, value_max)| CommError::Mismatch {
                    what: String::from(what),
                    rank_min,
                    value_min,
                    rank_max,
                    value_max,
                    size: self.size(),
                },
            )
    }

    /// The all-reduce of [`Communicator::check_same`] and [`Communicator::agree`]: on a
    /// mismatch, the lowest rank holding the smallest value, that value, the lowest rank
    /// holding the largest, and that value.
    fn check_same_raw(&self, value: u64) -> Result<(), (usize, u64, usize, u64)> {
        let raw = Agreed { comm: self };
        // min(x) and min(!x) = !max(x), in one all-reduce.
        let mut v = [value, !value];
        raw.all_reduce_u64_slice(&mut v, ReduceOp::Min);
        let (value_min, value_max) = (v[0], !v[1]);
        if value_min == value_max {
            return Ok(());
        }
        // Every rank sees the same min and max, so every rank takes this branch.
        let me = self.rank() as u64;
        let mut r = [
            if value == value_min { me } else { u64::MAX },
            if value == value_max { me } else { u64::MAX },
        ];
        raw.all_reduce_u64_slice(&mut r, ReduceOp::Min);
        let rank = |x: u64| usize::try_from(x).unwrap_or(usize::MAX);
        Err((rank(r[0]), value_min, rank(r[1]), value_max))
    }

    /// Starts a split-phase exchange: posts a non-blocking receive of exactly `bytes` from
    /// each `(rank, bytes)` of `recvs`, then a non-blocking send of each `(rank, buffer)`
    /// of `sends`, all with `tag` (from the registry, [`Tag`]), and returns at once. One message
    /// per neighbour: a rank appears at most once in each list, never this process's own
    /// rank (do those as local copies). Zero-byte messages are sent and received like any
    /// other, so both sides' lists must match exactly. Messages longer than
    /// [`Communicator::message_limit`] go in pieces, transparently.
    ///
    /// Not collective, but every send must be matched by the receiving rank's `recvs`
    /// (same tag, same size). Arguments are checked before anything is posted; an error
    /// is local to this rank.
    ///
    /// One process: both lists must be empty (any rank named is this one or out of
    /// range), and the `Exchange` returns nothing.
    pub fn start_exchange(
        &self,
        tag: Tag,
        sends: Vec<(usize, Vec<u8>)>,
        recvs: Vec<(usize, usize)>,
    ) -> Result<Exchange, CommError> {
        self.check_peers(sends.iter().map(|s| s.0), Direction::Send)?;
        self.check_peers(recvs.iter().map(|r| r.0), Direction::Receive)?;
        match &self.kind {
            Kind::Single => {
                let _ = tag;
                Ok(Exchange {
                    state: ExchangeState::Done,
                })
            }
            #[cfg(feature = "mpi")]
            Kind::Mpi(c) => Ok(Exchange {
                state: ExchangeState::Mpi(self::mpi::Pending::start(
                    c,
                    tag,
                    sends,
                    recvs,
                    self.message_limit,
                )),
            }),
        }
    }

    fn check_rank(&self, rank: usize) -> Result<(), CommError> {
        let size = self.size();
        if rank < size {
            Ok(())
        } else {
            Err(CommError::RankOutOfRange { rank, size })
        }
    }

    fn check_peers(
        &self,
        ranks: impl Iterator<Item = usize>,
        direction: Direction,
    ) -> Result<(), CommError> {
        let size = self.size();
        let mut seen = vec![false; size];
        for rank in ranks {
            self.check_rank(rank)?;
            if rank == self.rank() {
                return Err(CommError::SelfMessage { rank });
            }
            if core::mem::replace(&mut seen[rank], true) {
                return Err(CommError::DuplicateRank { rank, direction });
            }
        }
        Ok(())
    }
}

/// A collective operation the ranks agreed on ([`Communicator::agree`]): the raw
/// collectives it runs. Every collective of the workspace goes through one, so every
/// one of them starts with the agreement's all-reduce. Hold it for the whole operation:
/// several collectives under one agreement cost one check.
///
/// Its methods are collective in MPI's sense: every rank of the agreement calls the same
/// ones in the same order, which the operation's own code guarantees (the agreement
/// covered the arguments that decide them).
#[derive(Clone, Copy, Debug)]
pub struct Agreed<'a> {
    comm: &'a Communicator,
}

impl Agreed<'_> {
    /// The communicator.
    #[must_use]
    pub fn communicator(&self) -> &Communicator {
        self.comm
    }

    /// Returns when every rank has entered it (an ordering point inside an operation,
    /// such as the turns of ranks appending to one file).
    pub fn barrier(&self) {
        match &self.comm.kind {
            Kind::Single => {}
            #[cfg(feature = "mpi")]
            Kind::Mpi(c) => c.barrier(),
        }
    }

    /// `op` over every rank's `x`; every rank gets the result.
    #[must_use]
    pub fn all_reduce_u64(&self, x: u64, op: ReduceOp) -> u64 {
        let mut v = [x];
        self.all_reduce_u64_slice(&mut v, op);
        v[0]
    }

    /// `op` over every rank's `x`; every rank gets the result.
    #[must_use]
    pub fn all_reduce_f64(&self, x: f64, op: ReduceOp) -> f64 {
        let mut v = [x];
        self.all_reduce_f64_slice(&mut v, op);
        v[0]
    }

    /// Element-wise [`Agreed::all_reduce_u64`], in place; every rank passes a slice of
    /// the same length.
    pub fn all_reduce_u64_slice(&self, values: &mut [u64], op: ReduceOp) {
        match &self.comm.kind {
            // One rank: the values are already the result.
            Kind::Single => {
                let _ = (values, op);
            }
            #[cfg(feature = "mpi")]
            Kind::Mpi(c) => c.all_reduce_u64(values, op),
        }
    }

    /// Element-wise [`Agreed::all_reduce_f64`], in place; every rank passes a slice of
    /// the same length.
    pub fn all_reduce_f64_slice(&self, values: &mut [f64], op: ReduceOp) {
        match &self.comm.kind {
            Kind::Single => {
                let _ = (values, op);
            }
            #[cfg(feature = "mpi")]
            Kind::Mpi(c) => c.all_reduce_f64(values, op),
        }
    }

    /// Every rank's bytes, indexed by rank, on every rank.
    ///
    /// # Errors
    /// [`CommError::TooLarge`] on every rank when the total exceeds MPI's count limit.
    pub fn all_gather_bytes(&self, data: &[u8]) -> Result<Vec<Vec<u8>>, CommError> {
        match &self.comm.kind {
            Kind::Single => Ok(vec![data.to_vec()]),
            #[cfg(feature = "mpi")]
            Kind::Mpi(c) => c.all_gather_bytes(data),
        }
    }

    /// Every rank's bytes, indexed by rank, on `root` (`Some`); `None` elsewhere. Every
    /// rank passes the same `root`.
    ///
    /// # Errors
    /// [`CommError::RankOutOfRange`] and [`CommError::TooLarge`], on every rank.
    pub fn gather_bytes(
        &self,
        root: usize,
        data: &[u8],
    ) -> Result<Option<Vec<Vec<u8>>>, CommError> {
        self.comm.check_rank(root)?;
        match &self.comm.kind {
            Kind::Single => Ok(Some(vec![data.to_vec()])),
            #[cfg(feature = "mpi")]
            Kind::Mpi(c) => c.gather_bytes(root, data),
        }
    }

    /// `root`'s `data` replaces every other rank's (resized to fit). Every rank passes
    /// the same `root`.
    ///
    /// # Errors
    /// [`CommError::RankOutOfRange`], on every rank.
    pub fn broadcast_bytes(&self, root: usize, data: &mut Vec<u8>) -> Result<(), CommError> {
        self.comm.check_rank(root)?;
        match &self.comm.kind {
            Kind::Single => {
                let _ = data;
                Ok(())
            }
            #[cfg(feature = "mpi")]
            Kind::Mpi(c) => c.broadcast_bytes(root, data, self.comm.message_limit),
        }
    }

    /// Whether `ok` holds on every rank: `None` when it does, else `Some(rank)` with the
    /// lowest rank where it does not, on every rank. One all-reduce; the common "did
    /// anybody fail?" step of an operation whose ranks may fail locally (an allocation,
    /// a file), so that the others stop with it instead of waiting.
    #[must_use]
    pub fn first_failure(&self, ok: bool) -> Option<usize> {
        let me = self.comm.rank() as u64;
        let r = self.all_reduce_u64(if ok { u64::MAX } else { me }, ReduceOp::Min);
        (r != u64::MAX).then(|| usize::try_from(r).unwrap_or(usize::MAX))
    }
}

/// An exchange in flight, from [`Communicator::start_exchange`]: owns its send and
/// receive buffers and MPI requests until [`Exchange::wait`]. Dropping it without waiting
/// waits (MPI must be done with the buffers before they are freed).
#[must_use = "an Exchange delivers its messages only through wait() (dropping it waits and discards them)"]
pub struct Exchange {
    state: ExchangeState,
}

enum ExchangeState {
    Done,
    #[cfg(feature = "mpi")]
    Mpi(self::mpi::Pending),
}

impl fmt::Debug for Exchange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let in_flight = match &self.state {
            ExchangeState::Done => false,
            #[cfg(feature = "mpi")]
            ExchangeState::Mpi(_) => true,
        };
        f.debug_struct("Exchange")
            .field("in_flight", &in_flight)
            .finish()
    }
}

impl Exchange {
    /// Waits for every send and receive, and returns `(rank, bytes)` for each receive in
    /// the order of the `recvs` given to [`Communicator::start_exchange`]. A message whose
    /// size differs from the receive's is [`CommError::SizeMismatch`] (a longer one is
    /// MPI's truncation error, which MPI's default error handler turns into an abort of
    /// the whole job, never a hang or a silent wrong answer).
    pub fn wait(self) -> Result<Vec<(usize, Vec<u8>)>, CommError> {
        match self.state {
            ExchangeState::Done => Ok(Vec::new()),
            #[cfg(feature = "mpi")]
            ExchangeState::Mpi(p) => p.wait(),
        }
    }
}

#[cfg(feature = "std")]
std::thread_local! {
    /// How many [`catch_panic`] calls are running on this thread.
    static CATCHING: core::cell::Cell<u32> = const { core::cell::Cell::new(0) };
}

/// `true` while [`catch_panic`] runs on this thread: the MPI panic hook then lets the
/// panic unwind to it instead of aborting every rank.
#[cfg(feature = "mpi")]
pub(crate) fn catching_panics() -> bool {
    CATCHING.with(|c| c.get() > 0)
}

/// Runs `f` on this thread and returns its panic, if any, as `Err(message)` instead of
/// unwinding further. Under MPI the hook that `Communicator::world` installs (which
/// aborts every rank when one panics) stands down for panics on this thread while `f`
/// runs, so the caller can tell the other ranks in its next collective and every rank
/// can return an error; a panic on another thread (a rayon worker inside `f`) still
/// aborts. The caller must then take part in that collective: a rank that catches a
/// panic and stops talking would leave the others waiting.
#[cfg(feature = "std")]
pub fn catch_panic<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    struct Guard;
    impl Drop for Guard {
        fn drop(&mut self) {
            CATCHING.with(|c| c.set(c.get() - 1));
        }
    }
    CATCHING.with(|c| c.set(c.get() + 1));
    let guard = Guard;
    let r = std::panic::catch_unwind(core::panic::AssertUnwindSafe(f));
    drop(guard);
    r.map_err(|p| {
        p.downcast_ref::<&str>()
            .map(|s| String::from(*s))
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| String::from("a panic with a non-string payload"))
    })
}

// A `DistributionMapping` and every `FabArray` carry a `Communicator`, and a FabArray may
// hold an exchange in flight: all must stay usable from rayon's threads.
const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Communicator>();
    send_sync::<Exchange>();
    send_sync::<CommError>();
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_process_communicator() {
        let c = Communicator::single();
        assert_eq!((c.rank(), c.size(), c.is_single()), (0, 1, true));
        assert_eq!(c, Communicator::default());
        assert_eq!(c.message_limit(), MAX_MESSAGE_BYTES);
        c.barrier().unwrap();
        assert_eq!(c.all_reduce_u64(7, ReduceOp::Sum), Ok(7));
        assert_eq!(c.all_reduce_f64(-2.5, ReduceOp::Max), Ok(-2.5));
        let mut v = [1.0, 2.0];
        c.all_reduce_f64_slice(&mut v, ReduceOp::Min).unwrap();
        assert_eq!(v, [1.0, 2.0]);
        assert_eq!(c.all_gather_bytes(b"abc").unwrap(), vec![b"abc".to_vec()]);
        assert_eq!(c.gather_bytes(0, b"").unwrap(), Some(vec![Vec::new()]));
        assert_eq!(
            c.gather_bytes(1, b"x"),
            Err(CommError::RankOutOfRange { rank: 1, size: 1 })
        );
        let mut b = b"keep".to_vec();
        c.broadcast_bytes(0, &mut b).unwrap();
        assert_eq!(b, b"keep");
        c.check_same("a hash", 42).unwrap();
        let agreed = c.agree("an operation", &Fingerprint::new()).unwrap();
        assert_eq!(agreed.first_failure(true), None);
        assert_eq!(agreed.first_failure(false), Some(0));
        let tag = Tag::user(3).unwrap();
        assert_eq!(
            c.start_exchange(tag, Vec::new(), Vec::new())
                .unwrap()
                .wait()
                .unwrap(),
            Vec::new()
        );
        assert_eq!(
            c.start_exchange(tag, vec![(0, vec![1])], Vec::new())
                .unwrap_err(),
            CommError::SelfMessage { rank: 0 }
        );
        assert_eq!(
            c.start_exchange(tag, Vec::new(), vec![(1, 8)]).unwrap_err(),
            CommError::RankOutOfRange { rank: 1, size: 1 }
        );
    }

    #[test]
    fn errors_name_the_values() {
        let e = CommError::Mismatch {
            what: String::from("BoxArray hash"),
            rank_min: 0,
            value_min: 1,
            rank_max: 3,
            value_max: 2,
            size: 4,
        };
        let s = alloc::format!("{e}");
        assert!(
            s.contains("BoxArray hash") && s.contains("rank 3") && s.contains("4 ranks"),
            "{s}"
        );
        let s = alloc::format!(
            "{}",
            CommError::SizeMismatch {
                from: 1,
                tag: Tag::FILL_BOUNDARY,
                expected: 8,
                received: 4
            }
        );
        assert!(s.contains("rank 1") && s.contains("expected 8"), "{s}");
    }
}
