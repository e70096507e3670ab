//! `FillBoundary`, `ParallelCopy` and `SumBoundary`: executing cached copy plans, in one
//! process or over the ranks of the FabArrays' [`Communicator`].
//!
//! A distributed operation runs in four steps on every rank:
//!
//! 1. **Agreement.** With more than one rank, every rank hashes what should be one
//!    operation (BoxArrays, maps, components, ghost widths, periodicity, op) and
//!    [`Communicator::check_same`] compares the hashes: if the ranks disagree, every rank
//!    returns [`FabError::Comm`] naming the operation, and nobody waits for a message
//!    that will never come.
//! 2. **Pack and post.** One buffer per neighbour rank, packed tag by tag in plan order
//!    (both sides list a message's tags in the same order), sent without blocking;
//!    receives are posted first.
//! 3. **Local copies** while the messages are in flight.
//! 4. **Unpack** in plan order, whatever the arrival order.
//!
//! On a cell-centred BoxArray `fill_boundary` writes each ghost cell from exactly one
//! source cell, so the order of local and remote copies cannot change its result, and
//! every local copy runs while the messages are in flight. Where a cell can be written
//! several times (nodal boxes share their face nodes; `parallel_copy`'s grown sources
//! overlap; every `CopyOp::Add`), each destination applies its local and received tags
//! merged back into the single-process order ([`CopyPlan::local_order`],
//! [`CopyPlan::recv_order`]); destinations without received tags go while the messages
//! are in flight, the others when they are here. So the results of all three
//! operations, `sum_boundary` included, are bit for bit the single-process ones on any
//! number of ranks.
//!
//! Between `fill_boundary_nowait` and `fill_boundary_finish`, ghost cells that other
//! ranks fill are written at the finish: writing them in between (or reading them, as
//! `sum_boundary` does) gives another result than one process, as in AMReX.

use alloc::format;
use alloc::string::ToString;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ops::{Range, RangeBounds};

use amrex_arena::HostAccessible;
use amrex_array4::hint::{prefetch, prefetch_span};
use amrex_basefab::{FabError, component_range};
use amrex_box::IntVect;

use crate::box_array::BoxArray;
use crate::distribution::DistributionMapping;
use crate::element::Element;
use crate::fabarray::{FabArray, RawFab};
use crate::ops::{check_ghost, operand_comps};
use crate::par::{par_for, par_map};
use crate::parallel::{CommError, Communicator, Exchange, ReduceOp};
use crate::periodicity::Periodicity;
use crate::plan::{CopyPlan, CopyTag, FillPattern};

/// Whether `parallel_copy` overwrites or adds (AMReX's `FabArrayBase::COPY` / `ADD`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CopyOp {
    /// `dst = src`.
    #[default]
    Copy,
    /// `dst += src`.
    Add,
}

/// Where the time of this process's `fill_boundary` / `parallel_copy` calls went,
/// summed since the last [`reset_comm_profile`] (AMReX's TinyProfiler regions for
/// `FillBoundary`): packing messages, local copies (done while messages are in flight),
/// waiting for messages, unpacking them; and the traffic. Times need feature `std`
/// (zero without it), and targets without 64-bit atomics count nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CommProfile {
    /// Calls that exchanged or copied anything.
    pub calls: u64,
    /// Nanoseconds packing send buffers.
    pub pack_ns: u64,
    /// Nanoseconds posting messages and doing the local copies.
    pub local_ns: u64,
    /// Nanoseconds waiting for messages.
    pub wait_ns: u64,
    /// Nanoseconds unpacking received messages.
    pub unpack_ns: u64,
    /// Messages sent and their bytes.
    pub messages_sent: u64,
    /// Bytes sent.
    pub bytes_sent: u64,
    /// Bytes received.
    pub bytes_received: u64,
    /// Bytes copied between local fabs.
    pub bytes_local: u64,
}

mod profile {
    #[cfg(target_has_atomic = "64")]
    use core::sync::atomic::{AtomicU64, Ordering};

    /// The counters (targets without 64-bit atomics keep none).
    #[cfg(target_has_atomic = "64")]
    static COUNTERS: [AtomicU64; 9] = [const { AtomicU64::new(0) }; 9];

    pub(super) fn add(i: usize, v: u64) {
        #[cfg(target_has_atomic = "64")]
        COUNTERS[i].fetch_add(v, Ordering::Relaxed);
        #[cfg(not(target_has_atomic = "64"))]
        let _ = (i, v);
    }

    pub(super) fn get(i: usize) -> u64 {
        #[cfg(target_has_atomic = "64")]
        return COUNTERS[i].load(Ordering::Relaxed);
        #[cfg(not(target_has_atomic = "64"))]
        {
            let _ = i;
            0
        }
    }

    pub(super) fn reset() {
        #[cfg(target_has_atomic = "64")]
        for c in &COUNTERS {
            c.store(0, Ordering::Relaxed);
        }
    }

    /// A clock for the profile: nanoseconds since some fixed instant (0 without `std`).
    #[cfg(feature = "std")]
    pub(super) fn now() -> u64 {
        use std::sync::OnceLock;
        use std::time::Instant;
        static START: OnceLock<Instant> = OnceLock::new();
        START.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }

    #[cfg(not(feature = "std"))]
    pub(super) fn now() -> u64 {
        0
    }
}

const CALLS: usize = 0;
const PACK: usize = 1;
const LOCAL: usize = 2;
const WAIT: usize = 3;
const UNPACK: usize = 4;
const MSGS: usize = 5;
const SENT: usize = 6;
const RECEIVED: usize = 7;
const LOCAL_BYTES: usize = 8;

/// The profile of this process's distributed copies since the last reset.
#[must_use]
pub fn comm_profile() -> CommProfile {
    let c = profile::get;
    CommProfile {
        calls: c(CALLS),
        pack_ns: c(PACK),
        local_ns: c(LOCAL),
        wait_ns: c(WAIT),
        unpack_ns: c(UNPACK),
        messages_sent: c(MSGS),
        bytes_sent: c(SENT),
        bytes_received: c(RECEIVED),
        bytes_local: c(LOCAL_BYTES),
    }
}

/// Zeroes [`comm_profile`].
pub fn reset_comm_profile() {
    profile::reset();
}

/// Message tags of the two exchanges (every rank runs the same sequence of operations,
/// and MPI keeps messages of one tag between two ranks in order).
const TAG_FILL_BOUNDARY: u16 = 101;
const TAG_PARALLEL_COPY: u16 = 102;

/// A `fill_boundary_nowait` in flight: its messages, the plan that unpacks them and the
/// components.
pub(crate) struct PendingFill {
    exchange: Exchange,
    plan: Arc<CopyPlan>,
    comps: Range<usize>,
    /// For BoxArrays whose boxes share cells (nodal ones share faces, so a ghost cell
    /// can have several sources): the merged order of the destinations still to do.
    merged: Option<(Order, Vec<bool>)>,
}

/// FNV-1a over 64-bit words: the fingerprint the ranks compare before an exchange.
pub(crate) struct Fingerprint(u64);

impl Fingerprint {
    pub(crate) fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    pub(crate) fn value(&self) -> u64 {
        self.0
    }

    pub(crate) fn word(&mut self, w: u64) -> &mut Self {
        for b in w.to_le_bytes() {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        self
    }

    pub(crate) fn iv(&mut self, v: IntVect) -> &mut Self {
        for d in 0..3 {
            self.word(v[d] as u32 as u64);
        }
        self
    }

    /// A BoxArray and its map, by the fingerprints each computed once when it was made
    /// (so an operation costs no pass over the boxes).
    fn layout(&mut self, ba: &BoxArray, dm: &DistributionMapping) -> &mut Self {
        self.word(ba.fingerprint()).word(dm.fingerprint())
    }

    /// What every distributed operation on `fa` hashes: its layout, components and ghost
    /// width, the element size, the communicator's message limit, and whether the
    /// FabArray is this process's own rank's part (one built for another rank cannot
    /// exchange).
    fn common<T: Element, A: HostAccessible>(&mut self, fa: &FabArray<T, A>) -> &mut Self {
        let comm = fa.dm.communicator();
        self.layout(&fa.ba, &fa.dm)
            .word(fa.ncomp as u64)
            .iv(fa.ngrow)
            .word(core::mem::size_of::<T>() as u64)
            .word(comm.message_limit() as u64)
            .word(u64::from(fa.rank == comm.rank()))
    }

    /// A component range as resolved, or as asked for when it was refused.
    pub(crate) fn comps(&mut self, c: &Result<Range<usize>, FabError>) -> &mut Self {
        let (s, e) = match c {
            Ok(r) => (r.start, r.end),
            Err(FabError::ComponentsOutside { start, end, .. }) => (*start, *end),
            Err(_) => (usize::MAX, usize::MAX),
        };
        self.word(s as u64).word(e as u64)
    }

    fn period(&mut self, p: Periodicity) -> &mut Self {
        self.iv(p.period())
    }
}

/// The fingerprint of a FabArray's layout, which reductions compare between ranks.
pub(crate) fn layout_fingerprint(
    ba: &BoxArray,
    dm: &DistributionMapping,
    ncomp: usize,
    ngrow: IntVect,
) -> u64 {
    let mut fp = Fingerprint::new();
    fp.layout(ba, dm).word(ncomp as u64).iv(ngrow);
    fp.0
}

fn comm_err(what: &str, e: CommError) -> FabError {
    FabError::Comm(format!("{what}: {e}"))
}

/// Step 1: with more than one rank, every rank checks that all ranks run the same
/// operation on the same layout.
fn agree(comm: &Communicator, what: &str, fp: &Fingerprint) -> Result<(), FabError> {
    if comm.is_single() {
        return Ok(());
    }
    comm.check_same(what, fp.0).map_err(|e| match e {
        CommError::Mismatch { .. } => FabError::Comm(format!(
            "{what}: the ranks disagree on the BoxArray, the DistributionMapping or the \
             arguments of what should be one operation ({e})"
        )),
        e => comm_err(what, e),
    })
}

/// A plan that needs messages can run only on a FabArray of this process's own rank on
/// a map that spans its communicator (a map made with `with_ranks` for inspection
/// cannot).
fn check_messages<T: Element, A: HostAccessible>(
    what: &str,
    fa: &FabArray<T, A>,
    plan: &CopyPlan,
) -> Result<(), FabError> {
    if plan.is_local_only() {
        return Ok(());
    }
    let comm = fa.dm.communicator();
    if !fa.dm.is_distributed_over_comm() || fa.rank != comm.rank() {
        return Err(FabError::Comm(format!(
            "{what}: the plan exchanges messages with {} ranks, but this FabArray is rank \
             {}'s part of a map over {} ranks and its communicator has {} (rank {}); build \
             the map with DistributionMapping::new or ::on",
            plan.sends().len().max(plan.recvs().len()),
            fa.rank,
            fa.dm.nranks(),
            comm.size(),
            comm.rank()
        )));
    }
    Ok(())
}

/// Copies (or adds) the cells of one tag, `nc` components from `scomp` to `dcomp`.
///
/// # Safety
/// `tag.dbox` lies in `dst`'s box and `tag.sbox()` in `src`'s, the component ranges
/// fit; nobody else accesses the destination cells, and nobody writes the source cells
/// during the call. `dst` and `src` may describe the same fab only if the two regions
/// are disjoint.
#[inline]
unsafe fn run_tag<T: Element>(
    dst: &RawFab<T>,
    dcomp: usize,
    src: &RawFab<T>,
    scomp: usize,
    nc: usize,
    tag: &CopyTag,
    op: CopyOp,
) {
    for p in tag_parts(dst, dcomp, src, scomp, nc, tag) {
        // SAFETY: the rows `ny` x `nz` of `nx` elements from `p.d` and `p.r` at the fabs'
        // strides are the tag's rows of one component: inside the boxes, disjoint, and
        // accessed by nobody else (caller).
        unsafe { p.rows.run(p.d, p.r, op, &mut || {}) };
    }
}

/// Copies the tags of one destination fab, `nc` components from `scomp` to `dcomp`,
/// each from its source fab `src(tag)`: the tags of narrow rows (the `i` sides, up to 4
/// elements wide) one after another, with a row of the wider tags after every
/// [`INTERLEAVE`] rows of each (per component), and what is left of the wide rows at the
/// end.
///
/// The narrow rows are bound by memory latency (each needs its own cache lines, and a
/// core has only so many misses in flight), the wide rows by bandwidth, which the
/// hardware prefetchers keep busy: interleaved, the two overlap. On 256³ in 32³ boxes
/// with 2 ghosts this took 3–7% off the time of a call on one thread.
///
/// # Safety
/// As [`run_tag`] for every tag (with `src(tag)` its source), and the tags' destination
/// regions are pairwise disjoint ([`CopyPlan::local_tags_disjoint`]), so that the order
/// of the copies does not matter.
unsafe fn copy_tags_interleaved<T: Element>(
    dst: &RawFab<T>,
    dcomp: usize,
    (scomp, nc): (usize, usize),
    tags: &[CopyTag],
    src: impl Fn(&CopyTag) -> RawFab<T>,
) {
    let narrow = |t: &&CopyTag| t.dbox.length()[0] <= 4;
    let parts = |t: &CopyTag| tag_parts(dst, dcomp, &src(t), scomp, nc, t);
    // SAFETY: the wide tags' parts are tags of this destination that the caller lets us
    // copy, for the whole call; no narrow tag (and no other wide one) writes their
    // cells, as the tags are disjoint (caller).
    let mut wide = unsafe { WideRows::new(tags.iter().filter(|t| !narrow(t)).flat_map(parts)) };
    let mut side = || {
        wide.step();
    };
    for t in tags.iter().filter(narrow) {
        for p in parts(t) {
            // SAFETY: as in `run_tag` (caller); `side` copies rows of the wide tags, whose
            // destinations are disjoint from this one's (caller), so it may run between
            // this tag's rows.
            unsafe { p.rows.run(p.d, p.r, CopyOp::Copy, &mut side) };
        }
    }
    while wide.step() {}
}

/// After how many narrow rows [`copy_tags_interleaved`] copies one wide row (found by
/// measurement: 4 to 16 ran alike).
const INTERLEAVE: usize = 8;

/// One component of one tag: its rows and their first elements in the destination and
/// in the source, with the provenance of the whole fabs.
#[derive(Clone, Copy)]
struct TagPart<T> {
    rows: TagRows,
    d: *mut T,
    r: *const T,
}

/// The parts of `tag`, one per component.
fn tag_parts<T: Element>(
    dst: &RawFab<T>,
    dcomp: usize,
    src: &RawFab<T>,
    scomp: usize,
    nc: usize,
    tag: &CopyTag,
) -> impl Iterator<Item = TagPart<T>> + use<T> {
    let (lo, hi) = (tag.dbox.lo(), tag.dbox.hi());
    let s = tag.shift;
    let len = |d: usize| (hi[d] - lo[d] + 1) as usize;
    let (ds, ss) = (dst.layout.strides(), src.layout.strides());
    let rows = TagRows::new([len(0), len(1), len(2)], (ds[0], ds[1]), (ss[0], ss[1]));
    let (dst, src) = (*dst, *src);
    (0..nc).map(move |n| TagPart {
        rows,
        // Pointers with the provenance of the whole fab (not of one row's slice), since
        // the rows are reached from the first by the strides.
        d: dst
            .ptr
            .as_ptr()
            .wrapping_add(dst.offset(lo[0], lo[1], lo[2], dcomp + n)),
        r: src.ptr.as_ptr().cast_const().wrapping_add(src.offset(
            lo[0] + s[0],
            lo[1] + s[1],
            lo[2] + s[2],
            scomp + n,
        )),
    })
}

/// The rows of a sequence of tag parts, copied one per [`step`](Self::step).
struct WideRows<T, I> {
    parts: I,
    cur: Option<TagPart<T>>,
    jr: usize,
    kr: usize,
}

impl<T: Element, I: Iterator<Item = TagPart<T>>> WideRows<T, I> {
    /// The rows of `parts`.
    ///
    /// # Safety
    /// Every part's rows are as in [`TagRows::apply`]'s contract (with `CopyOp::Copy`)
    /// for as long as this lives: [`step`](Self::step) copies them.
    unsafe fn new(mut parts: I) -> Self {
        let cur = parts.next();
        Self {
            parts,
            cur,
            jr: 0,
            kr: 0,
        }
    }

    /// Copies the next row, prefetching the one after it in its part (past the part's
    /// end after its last row: a hint); `false` when no row is left.
    #[inline]
    fn step(&mut self) -> bool {
        while let Some(p) = self.cur {
            let (ny, nz) = (p.rows.ny, p.rows.nz);
            if self.jr < ny && self.kr < nz {
                let (d, r) = p.rows.at(p.d, p.r, self.jr, self.kr);
                self.jr += 1;
                if self.jr == ny {
                    (self.jr, self.kr) = (0, self.kr + 1);
                }
                let next = p.rows.at(p.d, p.r, self.jr, self.kr);
                // SAFETY: `jr < ny` and `kr < nz` (checked above, before they moved on):
                // `(d, r)` is a row of a part that `new`'s caller let us copy.
                unsafe { p.rows.row(d, r, next, CopyOp::Copy) };
                return true;
            }
            (self.cur, self.jr, self.kr) = (self.parts.next(), 0, 0);
        }
        false
    }
}

/// How many rows ahead the copies of narrow rows prefetch (found by measurement on 256³,
/// max grid 32, 2 ghosts).
const AHEAD: usize = 24;

/// The rows of one component of a tag: `ny` x `nz` rows of `nx` elements, at the
/// `(j, k)` strides `d` in the destination and `s` in the source (in elements).
///
/// The `i`-faces of a FillBoundary are a million rows of 2 elements for 256³ in 32³
/// boxes, each in its own cache line, and its edges are tags of 2 rows per plane: per
/// row the loop does little more than the copy (pointers advance by the strides, a
/// fixed width copies as one move). Memory latency would otherwise leave each row
/// waiting for its lines one after the other, so the loops prefetch: narrow rows the
/// rows about [`AHEAD`] rows on (in `j`, or in `k` when a plane has fewer rows), wide
/// rows all lines of the next row.
#[derive(Clone, Copy)]
struct TagRows {
    nx: usize,
    ny: usize,
    nz: usize,
    d: (usize, usize),
    s: (usize, usize),
    /// From a row to the one about [`AHEAD`] rows on, in the destination and the source.
    ahead: (usize, usize),
}

impl TagRows {
    fn new(n: [usize; 3], d: (usize, usize), s: (usize, usize)) -> Self {
        let [nx, ny, nz] = n;
        let ahead = if ny >= AHEAD {
            (AHEAD * d.0, AHEAD * s.0)
        } else {
            let planes = AHEAD / ny.max(1);
            (planes * d.1, planes * s.1)
        };
        Self {
            nx,
            ny,
            nz,
            d,
            s,
            ahead,
        }
    }

    /// Row `(jr, kr)` from the first rows `d` and `r` (any indices: past the tag the
    /// pointers are only hints).
    #[inline(always)]
    fn at<T>(&self, d: *mut T, r: *const T, jr: usize, kr: usize) -> (*mut T, *const T) {
        (
            d.wrapping_add(jr * self.d.0 + kr * self.d.1),
            r.wrapping_add(jr * self.s.0 + kr * self.s.1),
        )
    }

    /// Prefetches the rows about `AHEAD` on from `d` and `r` (hints: past the tag they
    /// point at other cells or anywhere, which is harmless).
    #[inline(always)]
    fn prefetch_ahead<T>(&self, d: *const T, r: *const T) {
        prefetch(d.wrapping_add(self.ahead.0));
        prefetch(r.wrapping_add(self.ahead.1));
    }

    /// Calls `f(d, r)` with the first element of every row, `j` fastest.
    #[inline(always)]
    fn for_rows<T>(&self, d: *mut T, r: *const T, mut f: impl FnMut(*mut T, *const T)) {
        for kr in 0..self.nz {
            let (d, r) = (d.wrapping_add(kr * self.d.1), r.wrapping_add(kr * self.s.1));
            for jr in 0..self.ny {
                f(d.wrapping_add(jr * self.d.0), r.wrapping_add(jr * self.s.0));
            }
        }
    }

    /// Applies `op` to the rows, with the narrow copies of a fixed width, calling
    /// `side()` after every [`INTERLEAVE`] rows of up to 4 elements.
    ///
    /// # Safety
    /// As [`apply`](Self::apply).
    #[inline(always)]
    unsafe fn run<T: Element>(&self, d: *mut T, r: *const T, op: CopyOp, side: &mut impl FnMut()) {
        match (op, self.nx) {
            // SAFETY: the caller's promise; each arm's width is `nx`.
            (CopyOp::Copy, 1) => unsafe { self.copy::<T, 1>(d, r, side) },
            // SAFETY: as above.
            (CopyOp::Copy, 2) => unsafe { self.copy::<T, 2>(d, r, side) },
            // SAFETY: as above.
            (CopyOp::Copy, 3) => unsafe { self.copy::<T, 3>(d, r, side) },
            // SAFETY: as above.
            (CopyOp::Copy, 4) => unsafe { self.copy::<T, 4>(d, r, side) },
            // SAFETY: as above.
            _ => unsafe { self.apply(d, r, op) },
        }
    }

    /// Copies the rows, `N == nx` elements each, calling `side()` after every
    /// [`INTERLEAVE`] rows (the count kept in a register: a counter in `side` would live
    /// in memory, and that was slower).
    ///
    /// # Safety
    /// As [`apply`](Self::apply).
    #[inline(always)]
    unsafe fn copy<T: Copy, const N: usize>(
        &self,
        d: *mut T,
        r: *const T,
        side: &mut impl FnMut(),
    ) {
        debug_assert_eq!(N, self.nx);
        let mut count = 0;
        self.for_rows(d, r, |d, r| {
            self.prefetch_ahead(d, r);
            // SAFETY: a row of the tag: `N` elements, not written during the call (caller).
            let v = unsafe { r.cast::<[T; N]>().read_unaligned() };
            // SAFETY: a row of the tag: `N` elements, disjoint from the source, ours
            // (caller).
            unsafe { d.cast::<[T; N]>().write_unaligned(v) };
            count += 1;
            if count == INTERLEAVE {
                count = 0;
                side();
            }
        });
    }

    /// Applies `op` row by row.
    ///
    /// # Safety
    /// The `ny` x `nz` rows of `nx` elements from `d` and from `r` at their strides lie
    /// in live allocations; the destination rows are accessed by nobody else and the
    /// source rows written by nobody during the call, and the two do not overlap.
    #[inline(always)]
    unsafe fn apply<T: Element>(&self, d0: *mut T, r0: *const T, op: CopyOp) {
        let (mut jr, mut kr) = (0, 0);
        self.for_rows(d0, r0, |d, r| {
            // The next row in the loop's order: in `j`, or the first of the next plane.
            jr += 1;
            if jr == self.ny {
                (jr, kr) = (0, kr + 1);
            }
            let next = self.at(d0, r0, jr, kr);
            // SAFETY: a row of the tag (caller).
            unsafe { self.row(d, r, next, op) };
        });
    }

    /// Applies `op` to the row from `d` and `r`: narrow rows prefetch the rows about
    /// [`AHEAD`] on, wide ones all lines of the `next` (a hint: any address).
    ///
    /// # Safety
    /// The `nx` elements from `d` are ours alone, those from `r` written by nobody during
    /// the call, and the two do not overlap.
    #[inline(always)]
    unsafe fn row<T: Element>(&self, d: *mut T, r: *const T, next: (*mut T, *const T), op: CopyOp) {
        if self.nx <= 8 {
            self.prefetch_ahead(d, r);
        } else {
            let bytes = self.nx * size_of::<T>();
            prefetch_span(next.0.cast_const().cast::<u8>(), bytes);
            prefetch_span(next.1.cast::<u8>(), bytes);
        }
        // SAFETY: the destination row: in bounds, ours (caller).
        let d = unsafe { core::slice::from_raw_parts_mut(d, self.nx) };
        // SAFETY: the source row: in bounds, not written (caller).
        let r = unsafe { core::slice::from_raw_parts(r, self.nx) };
        apply_row(d, r, op);
    }
}

#[inline(always)]
fn apply_row<T: Element>(d: &mut [T], r: &[T], op: CopyOp) {
    match op {
        CopyOp::Copy => copy_row(d, r),
        CopyOp::Add => d.iter_mut().zip(r).for_each(|(d, &r)| *d = *d + r),
    }
}

/// `d.copy_from_slice(r)`, with the rows a few ghost cells wide (the `i`-faces of a
/// FillBoundary: a million rows of 2 elements for 256³ in 32³ boxes) copied inline
/// instead of through a `memcpy` call each.
#[inline(always)]
fn copy_row<T: Copy>(d: &mut [T], r: &[T]) {
    match (d, r) {
        ([d0], [r0]) => *d0 = *r0,
        ([d0, d1], [r0, r1]) => (*d0, *d1) = (*r0, *r1),
        ([d0, d1, d2], [r0, r1, r2]) => (*d0, *d1, *d2) = (*r0, *r1, *r2),
        ([d0, d1, d2, d3], [r0, r1, r2, r3]) => (*d0, *d1, *d2, *d3) = (*r0, *r1, *r2, *r3),
        (d, r) => d.copy_from_slice(r),
    }
}

fn record_traffic(sends: &[(usize, Vec<u8>)], local_bytes: u64) {
    profile::add(MSGS, sends.len() as u64);
    profile::add(SENT, sends.iter().map(|(_, b)| b.len() as u64).sum());
    profile::add(LOCAL_BYTES, local_bytes);
}

/// Elements of one tag's message part.
fn tag_len(tag: &CopyTag, nc: usize) -> usize {
    tag.dbox.checked_num_pts_usize().unwrap_or(0) * nc
}

/// Packs the source cells of `tags` (components from `scomp`), tag by tag, component,
/// `k`, `j`, as the receiver unpacks them.
///
/// # Safety
/// Every tag's source box lies in its (local) source fab, and nobody writes the sources
/// during the call.
unsafe fn pack<T: Element>(
    raws: &[RawFab<T>],
    g2l: &[u32],
    tags: &[CopyTag],
    scomp: usize,
    nc: usize,
) -> Vec<u8> {
    let elems: usize = tags.iter().map(|t| tag_len(t, nc)).sum();
    let mut buf = Vec::with_capacity(elems * core::mem::size_of::<T>());
    for tag in tags {
        let src = &raws[g2l[tag.src] as usize];
        let sb = tag.sbox();
        let (lo, hi) = (sb.lo(), sb.hi());
        for n in 0..nc {
            for k in lo[2]..=hi[2] {
                for j in lo[1]..=hi[1] {
                    // SAFETY: inside the source fab, not written (caller).
                    let r = unsafe { src.row(lo[0], hi[0], j, k, scomp + n) };
                    buf.extend_from_slice(bytemuck::cast_slice(r));
                }
            }
        }
    }
    buf
}

/// Unpacks (copies or adds) one tag's part `vals` into `dst`.
///
/// # Safety
/// `tag.dbox` lies in `dst`'s box, the components fit, and nobody else accesses those
/// destination cells during the call.
unsafe fn unpack_tag<T: Element>(
    dst: &RawFab<T>,
    dcomp: usize,
    nc: usize,
    tag: &CopyTag,
    vals: &[T],
    op: CopyOp,
) {
    let (lo, hi) = (tag.dbox.lo(), tag.dbox.hi());
    let nx = (hi[0] - lo[0] + 1) as usize;
    let mut at = 0;
    for n in 0..nc {
        for k in lo[2]..=hi[2] {
            for j in lo[1]..=hi[1] {
                // SAFETY: inside the destination fab, accessed by nobody else (caller).
                let d = unsafe { dst.row_mut(lo[0], hi[0], j, k, dcomp + n) };
                apply_row(d, &vals[at..at + nx], op);
                at += nx;
            }
        }
    }
}

/// The received bytes as elements (copied only if the buffer is misaligned for `T`).
pub(crate) fn as_elements<T: Element>(bytes: &[u8]) -> alloc::borrow::Cow<'_, [T]> {
    match bytemuck::try_cast_slice::<u8, T>(bytes) {
        Ok(v) => alloc::borrow::Cow::Borrowed(v),
        Err(_) => alloc::borrow::Cow::Owned(
            bytes
                .chunks_exact(core::mem::size_of::<T>())
                .map(bytemuck::pod_read_unaligned)
                .collect(),
        ),
    }
}

/// Step 2: packs the plan's sends from `src` (its fabs, global-to-local map and first
/// component), `nc` components each, posts them and the receives, and records the
/// traffic. Returns the exchange and the profile clock after packing.
///
/// # Safety
/// As [`pack`], for every send tag of `plan`.
unsafe fn post<T: Element>(
    comm: &Communicator,
    what: &str,
    tag: u16,
    plan: &CopyPlan,
    (raws, g2l, scomp): (&[RawFab<T>], &[u32], usize),
    nc: usize,
) -> Result<(Exchange, u64), FabError> {
    let sends = par_map(plan.sends().len(), |i| {
        let (rank, ref tags) = plan.sends()[i];
        // SAFETY: the caller's promise.
        (rank, unsafe { pack(raws, g2l, tags, scomp, nc) })
    });
    let recvs = plan
        .recvs()
        .iter()
        .map(|(rank, tags)| {
            let n: usize = tags.iter().map(|t| tag_len(t, nc)).sum();
            (*rank, n * core::mem::size_of::<T>())
        })
        .collect();
    let t1 = profile::now();
    record_traffic(
        &sends,
        plan.local_cells() * (nc * core::mem::size_of::<T>()) as u64,
    );
    let exchange = comm
        .start_exchange(tag, sends, recvs)
        .map_err(|e| comm_err(what, e))?;
    Ok((exchange, t1))
}

/// Where a destination's tag takes its values from.
#[derive(Clone, Copy)]
enum Source {
    /// `plan.local()[i]`.
    Local(usize),
    /// Tag `t` of receive `msg`, starting at element `at` of its message.
    Remote { msg: usize, t: usize, at: usize },
}

/// For each local destination, its tags as `(position among the destination's tags,
/// where the values come from)`.
type Order = Vec<Vec<(u32, Source)>>;

/// Every local destination's tags, local and received, in the single-process order
/// (`g2l`: the destination FabArray's global-to-local map), and whether each has
/// received tags.
fn merged_order(plan: &CopyPlan, g2l: &[u32], nlocal: usize, nc: usize) -> (Order, Vec<bool>) {
    let mut order: Order = alloc::vec![Vec::new(); nlocal];
    let mut remote = alloc::vec![false; nlocal];
    for (i, t) in plan.local().iter().enumerate() {
        order[g2l[t.dst] as usize].push((plan.local_order()[i], Source::Local(i)));
    }
    for (msg, (_, tags)) in plan.recvs().iter().enumerate() {
        let mut at = 0;
        for (t, tag) in tags.iter().enumerate() {
            let l = g2l[tag.dst] as usize;
            order[l].push((plan.recv_order(msg)[t], Source::Remote { msg, t, at }));
            remote[l] = true;
            at += tag_len(tag, nc);
        }
    }
    for o in &mut order {
        o.sort_unstable_by_key(|&(seq, _)| seq);
    }
    (order, remote)
}

/// Applies, in parallel over the local destinations `l` with `pick(l)`, each one's
/// tags in `order`: local tags from `src` (fabs, global-to-local map, first component),
/// received ones from `vals`, into components `dcomp..dcomp + nc` of `draws`.
///
/// # Safety
/// Every tag's destination lies in its fab of `draws` and its source in its fab of
/// `src` (or its part of `vals`, of the plan's length); nobody else accesses the
/// destination fabs; the source cells are not written during the call (they are
/// another FabArray, or valid cells of other fabs, which no tag writes).
#[expect(clippy::too_many_arguments, reason = "the plan, both sides and the op")]
unsafe fn apply_in_order<T: Element>(
    plan: &CopyPlan,
    order: &[Vec<(u32, Source)>],
    draws: &[RawFab<T>],
    (sraws, sg2l, scomp): (&[RawFab<T>], &[u32], usize),
    vals: &[alloc::borrow::Cow<'_, [T]>],
    (dcomp, nc): (usize, usize),
    op: CopyOp,
    pick: impl Fn(usize) -> bool + Sync + Send,
) {
    par_for(order.len(), |l| {
        if !pick(l) {
            return;
        }
        let d = &draws[l];
        for &(_, source) in &order[l] {
            match source {
                Source::Local(i) => {
                    let tag = &plan.local()[i];
                    let s = sraws[sg2l[tag.src] as usize];
                    // SAFETY: the caller's promise; this task alone writes fab `l`.
                    unsafe { run_tag(d, dcomp, &s, scomp, nc, tag, op) };
                }
                Source::Remote { msg, t, at } => {
                    let tag = &plan.recvs()[msg].1[t];
                    let n = tag_len(tag, nc);
                    // SAFETY: as above; the message has the plan's length (the exchange
                    // checks it), so the part is in bounds.
                    unsafe { unpack_tag(d, dcomp, nc, tag, &vals[msg][at..at + n], op) };
                }
            }
        }
    });
}

impl<T: Element, A: amrex_arena::Arena> FabArray<T, A> {
    /// The operand checks of a `ParallelCopy` into `self` (on the host or on a device):
    /// the same index type, `n` source components from `scomp`, and ghost widths within
    /// each FabArray's.
    pub(crate) fn check_parallel_copy<B: amrex_arena::Arena>(
        &self,
        src: &FabArray<T, B>,
        scomp: usize,
        n: usize,
        src_ng: IntVect,
        dst_ng: IntVect,
    ) -> Result<(), FabError> {
        if self.ba.ix_type() != src.ba.ix_type() {
            return Err(FabError::LayoutMismatch);
        }
        operand_comps(scomp, n, src.ncomp)?;
        check_ghost(src_ng, src.ngrow)?;
        check_ghost(dst_ng, self.ngrow)
    }
}

impl<T: Element, A: HostAccessible> FabArray<T, A> {
    /// Fills every ghost cell that overlaps the valid region of another box (or of a
    /// periodic image of any box), all components, the full ghost width (AMReX's
    /// `FillBoundary(period)`). **Collective** over the FabArray's communicator.
    ///
    /// # Errors
    /// As [`fill_boundary_with`](Self::fill_boundary_with).
    pub fn fill_boundary(&mut self, period: Periodicity) -> Result<(), FabError> {
        let ng = self.ngrow;
        self.fill_boundary_with(period, FillPattern::Full, .., ng)
    }

    /// `FillBoundary` of components `comps` over ghost width `ng`; with
    /// [`FillPattern::Cross`], only the face ghost cells (no edges or corners), as a
    /// 7-point stencil needs. **Collective**.
    ///
    /// The plan is computed on first use and cached in the DistributionMapping; local
    /// copies run in parallel, one task per destination fab, while the messages to other
    /// ranks are in flight.
    ///
    /// # Errors
    /// [`FabError::ComponentsOutside`] or [`FabError::GhostOutside`] (nothing is written
    /// then); [`FabError::Comm`] when the ranks disagree on the layout or the arguments
    /// (on every rank), when the plan needs messages that this FabArray's map cannot send,
    /// or when a `fill_boundary_nowait` of this FabArray is still in flight.
    pub fn fill_boundary_with(
        &mut self,
        period: Periodicity,
        pattern: FillPattern,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabError> {
        self.fill_boundary_nowait(period, pattern, comps, ng)?;
        self.fill_boundary_finish()
    }

    /// The first half of [`fill_boundary_with`](Self::fill_boundary_with) (AMReX's
    /// `FillBoundary_nowait`): checks, packs and posts the messages and does the local
    /// copies; the ghost cells filled from other ranks are written by
    /// [`fill_boundary_finish`](Self::fill_boundary_finish). Work on valid cells in
    /// between overlaps the messages; the sources were packed already. **Collective**,
    /// and so is the finish.
    ///
    /// # Errors
    /// As [`fill_boundary_with`](Self::fill_boundary_with).
    pub fn fill_boundary_nowait(
        &mut self,
        period: Periodicity,
        pattern: FillPattern,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabError> {
        const WHAT: &str = "fill_boundary";
        let ng = ng.into();
        // The arguments are checked after the ranks agree on them (the fingerprint holds
        // everything the checks read), so all ranks refuse together or none does.
        let c = component_range(comps, self.ncomp);
        let mut fp = Fingerprint::new();
        fp.word(1)
            .common::<T, A>(self)
            .comps(&c)
            .iv(ng)
            .period(period)
            .word(u64::from(pattern == FillPattern::Cross));
        agree(self.dm.communicator(), WHAT, &fp)?;
        let c = c?;
        check_ghost(ng, self.ngrow)?;
        if self.pending.is_some() {
            return Err(FabError::Comm(
                "fill_boundary_nowait: a FillBoundary of this FabArray is in flight; call \
                 fill_boundary_finish first"
                    .to_string(),
            ));
        }
        if ng == IntVect::ZERO || c.is_empty() {
            return Ok(());
        }
        let plan = self
            .dm
            .fill_boundary_plan(&self.ba, ng, period, pattern, self.rank);
        check_messages(WHAT, self, &plan)?;
        let t0 = profile::now();
        let raws = self.raws_mut();
        let g2l = &self.g2l;
        // SAFETY: the sources of sent tags are valid cells of local fabs (the plan),
        // inside their fabs; `&mut self` keeps other writers away while packing reads.
        let (exchange, t1) = unsafe {
            post(
                self.dm.communicator(),
                WHAT,
                TAG_FILL_BOUNDARY,
                &plan,
                (&raws, g2l, c.start),
                c.len(),
            )?
        };
        // A cell-centred BoxArray's ghost cells each have one source, so the order of the
        // copies does not matter: every local copy goes now. Otherwise (nodal boxes share
        // faces) each destination's tags keep the single-process order: those without
        // received tags go now, the others in `fill_boundary_finish`.
        let merged = if self.ba.ix_type().cell_centered() {
            let plan_ref: &CopyPlan = &plan;
            par_for(plan_ref.local_groups().len(), |gi| {
                let (dst, ref range) = plan_ref.local_groups()[gi];
                let d = raws[g2l[dst] as usize];
                let tags = &plan_ref.local()[range.clone()];
                if plan_ref.local_tags_disjoint() {
                    // SAFETY: `&mut self` is exclusive. This task alone writes destination
                    // fab `dst`, and only its ghost cells (tags lie outside its valid
                    // box), no cell twice (the plan checked the tags are disjoint);
                    // sources lie in valid boxes, which no task writes. Boxes are in
                    // their fabs because ng <= ngrow.
                    unsafe {
                        copy_tags_interleaved(&d, c.start, (c.start, c.len()), tags, |t| {
                            raws[g2l[t.src] as usize]
                        });
                    }
                } else {
                    // Overlapping boxes: the tags in plan order, the last one winning.
                    for tag in tags {
                        let s = raws[g2l[tag.src] as usize];
                        // SAFETY: as above, but tags may write a cell more than once,
                        // one after the other.
                        unsafe { run_tag(&d, c.start, &s, c.start, c.len(), tag, CopyOp::Copy) };
                    }
                }
            });
            None
        } else {
            let (order, remote) = merged_order(&plan, g2l, self.local.len(), c.len());
            // SAFETY: as in the branch above: each task writes the ghost cells of its own
            // fab, sources are valid cells, which no tag writes.
            unsafe {
                apply_in_order(
                    &plan,
                    &order,
                    &raws,
                    (&raws, g2l, c.start),
                    &[],
                    (c.start, c.len()),
                    CopyOp::Copy,
                    |l| !remote[l],
                );
            }
            Some((order, remote))
        };
        profile::add(CALLS, 1);
        profile::add(PACK, t1 - t0);
        profile::add(LOCAL, profile::now() - t1);
        self.pending = Some(PendingFill {
            exchange,
            plan,
            comps: c,
            merged,
        });
        Ok(())
    }

    /// The second half of a `fill_boundary_nowait` (AMReX's `FillBoundary_finish`):
    /// waits for the messages and writes the ghost cells they fill, in plan order.
    /// Nothing to do (and `Ok`) when no FillBoundary is in flight. **Collective**.
    ///
    /// # Errors
    /// [`FabError::Comm`] if a message failed.
    pub fn fill_boundary_finish(&mut self) -> Result<(), FabError> {
        let Some(p) = self.pending.take() else {
            return Ok(());
        };
        let t0 = profile::now();
        let got = p
            .exchange
            .wait()
            .map_err(|e| comm_err("fill_boundary_finish", e))?;
        let t1 = profile::now();
        let raws = self.raws_mut();
        let nc = p.comps.len();
        if let Some((order, remote)) = &p.merged {
            let vals: Vec<alloc::borrow::Cow<'_, [T]>> =
                got.iter().map(|(_, b)| as_elements::<T>(b)).collect();
            // SAFETY: as in `fill_boundary_nowait`; received tags fill ghost cells of
            // local fabs inside their fab boxes.
            unsafe {
                apply_in_order(
                    &p.plan,
                    order,
                    &raws,
                    (&raws, &self.g2l, p.comps.start),
                    &vals,
                    (p.comps.start, nc),
                    CopyOp::Copy,
                    |l| remote[l],
                );
            }
        } else {
            for (i, (_, bytes)) in got.iter().enumerate() {
                let vals = as_elements::<T>(bytes);
                let mut at = 0;
                for tag in &p.plan.recvs()[i].1 {
                    let d = &raws[self.g2l[tag.dst] as usize];
                    let n = tag_len(tag, nc);
                    // SAFETY: received tags fill ghost cells of local fabs inside their
                    // fab boxes (the plan, ng <= ngrow); `&mut self` is exclusive and this
                    // loop is the only writer. The message has exactly the plan's length
                    // (the exchange checks sizes), so `at + n` is in bounds.
                    unsafe {
                        unpack_tag(d, p.comps.start, nc, tag, &vals[at..at + n], CopyOp::Copy);
                    }
                    at += n;
                }
            }
        }
        profile::add(WAIT, t1 - t0);
        profile::add(UNPACK, profile::now() - t1);
        profile::add(RECEIVED, got.iter().map(|(_, b)| b.len() as u64).sum());
        Ok(())
    }

    /// Copies the valid cells of `src` into the valid cells of `self` where they overlap
    /// (AMReX's `ParallelCopy(src, period)`), all components. **Collective**.
    ///
    /// # Errors
    /// As [`parallel_copy_with`](Self::parallel_copy_with); also
    /// [`FabError::ComponentsOutside`] when `src` has fewer components than `self`.
    pub fn parallel_copy<B: HostAccessible>(
        &mut self,
        src: &FabArray<T, B>,
        period: Periodicity,
    ) -> Result<(), FabError> {
        self.parallel_copy_with(src, 0, IntVect::ZERO, period, CopyOp::Copy, .., 0)
    }

    /// `ParallelCopy` with components, ghost widths and copy-or-add: components
    /// `scomp..` of `src` over its boxes grown by `src_ng` go to components `comps` of
    /// `self` over its boxes grown by `ng` (AMReX's `ParallelCopy(src, scomp, dcomp,
    /// ncomp, snghost, dnghost, period, op)`), between any two BoxArrays and maps on one
    /// communicator. Where several sources cover a destination cell they are applied in
    /// the single-process plan order (the last copy wins; adds accumulate), on any number
    /// of ranks. **Collective**.
    ///
    /// # Errors
    /// [`FabError::ComponentsOutside`] or [`FabError::GhostOutside`] for either side
    /// (nothing is written then); [`FabError::Comm`] as for
    /// [`fill_boundary_with`](Self::fill_boundary_with), or when the two FabArrays live
    /// on different communicators.
    ///
    /// [`FabError::LayoutMismatch`] when the two BoxArrays have different index types.
    #[expect(
        clippy::too_many_arguments,
        reason = "AMReX's argument list: the source with its component and width, the \
                  period and op, then the destination's components and width"
    )]
    pub fn parallel_copy_with<B: HostAccessible>(
        &mut self,
        src: &FabArray<T, B>,
        scomp: usize,
        src_ng: impl Into<IntVect>,
        period: Periodicity,
        op: CopyOp,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabError> {
        const WHAT: &str = "parallel_copy";
        let (src_ng, dst_ng) = (src_ng.into(), ng.into());
        // Checked after the ranks agree on the arguments, as in `fill_boundary_nowait`.
        let c = component_range(comps, self.ncomp);
        let comm = self.dm.communicator().clone();
        let mut fp = Fingerprint::new();
        fp.word(2)
            .common::<T, A>(self)
            .common::<T, B>(src)
            .word(scomp as u64)
            .comps(&c)
            .iv(src_ng)
            .iv(dst_ng)
            .period(period)
            .word(u64::from(op == CopyOp::Add));
        agree(&comm, WHAT, &fp)?;
        let c = c?;
        self.check_parallel_copy(src, scomp, c.len(), src_ng, dst_ng)?;
        if *src.dm.communicator() != comm || self.rank != src.rank {
            return Err(FabError::Comm(format!(
                "{WHAT}: the source (rank {} of a map over {} ranks) and the destination \
                 (rank {} of {}) do not live on one communicator",
                src.rank,
                src.dm.nranks(),
                self.rank,
                self.dm.nranks()
            )));
        }
        if c.is_empty() {
            return Ok(());
        }
        let plan = self.dm.parallel_copy_plan(
            &self.ba, dst_ng, &src.ba, &src.dm, src_ng, period, self.rank,
        );
        check_messages(WHAT, self, &plan)?;
        let t0 = profile::now();
        let (draws, sraws) = (self.raws_mut(), src.raws());
        // SAFETY: sent tags read local source fabs inside their grown boxes (src_ng <=
        // src.ngrow); `src` is borrowed shared, so nobody writes it.
        let (exchange, t1) = unsafe {
            post(
                &comm,
                WHAT,
                TAG_PARALLEL_COPY,
                &plan,
                (&sraws, &src.g2l, scomp),
                c.len(),
            )?
        };

        // Every destination's tags, local and received, in the single-process order.
        let (order, remote) = merged_order(&plan, &self.g2l, self.local_size(), c.len());
        // Destinations without received tags go while the messages are in flight, the
        // others (local and received tags merged) once the messages are here.
        // SAFETY: `self` is borrowed mutably and `src` shared, so they are different
        // FabArrays; tags lie in the grown boxes (checked widths).
        unsafe {
            apply_in_order(
                &plan,
                &order,
                &draws,
                (&sraws, &src.g2l, scomp),
                &[],
                (c.start, c.len()),
                op,
                |l| !remote[l],
            );
        }
        let t2 = profile::now();
        let got = exchange.wait().map_err(|e| comm_err(WHAT, e))?;
        let t3 = profile::now();
        let vals: Vec<alloc::borrow::Cow<'_, [T]>> =
            got.iter().map(|(_, b)| as_elements::<T>(b)).collect();
        // SAFETY: as above.
        unsafe {
            apply_in_order(
                &plan,
                &order,
                &draws,
                (&sraws, &src.g2l, scomp),
                &vals,
                (c.start, c.len()),
                op,
                |l| remote[l],
            );
        }
        profile::add(CALLS, 1);
        profile::add(PACK, t1 - t0);
        profile::add(LOCAL, t2 - t1);
        profile::add(WAIT, t3 - t2);
        profile::add(UNPACK, profile::now() - t3);
        profile::add(RECEIVED, got.iter().map(|(_, b)| b.len() as u64).sum());
        Ok(())
    }

    /// Adds the ghost cells of every box into the valid cells that own them (the cells
    /// of the same index in another box, or in a periodic image), all components, the
    /// full ghost width (AMReX's `SumBoundary(period)`), as particle deposition needs.
    /// Ghost cells keep their values. **Collective**.
    ///
    /// # Errors
    /// As [`sum_boundary_with`](Self::sum_boundary_with).
    pub fn sum_boundary(&mut self, period: Periodicity) -> Result<(), FabError>
    where
        A: Clone,
    {
        let ng = self.ngrow;
        self.sum_boundary_with(period, .., ng)
    }

    /// `SumBoundary` of components `comps` from ghost width `ng`: each valid cell becomes
    /// the sum, in the single-process plan order, of every cell (valid or within `ng`
    /// ghost cells of any box, periodic images included) that has its index, so the
    /// result is the same bit for bit on any number of ranks. **Collective**.
    ///
    /// # Errors
    /// As [`parallel_copy_with`](Self::parallel_copy_with); an arena failure for the
    /// temporary copy.
    pub fn sum_boundary_with(
        &mut self,
        period: Periodicity,
        comps: impl RangeBounds<usize>,
        ng: impl Into<IntVect>,
    ) -> Result<(), FabError>
    where
        A: Clone,
    {
        let ng = ng.into();
        let c = component_range(comps, self.ncomp);
        let mut fp = Fingerprint::new();
        fp.word(3)
            .common::<T, A>(self)
            .comps(&c)
            .iv(ng)
            .period(period);
        agree(self.dm.communicator(), "sum_boundary", &fp)?;
        let c = c?;
        check_ghost(ng, self.ngrow)?;
        let tmp = FabArray::<T, A>::try_new_on_rank_in(
            &self.ba,
            &self.dm,
            c.len(),
            ng,
            self.rank,
            self.arena.clone(),
        );
        // A rank whose allocation failed must not leave the others in parallel_copy.
        let comm = self.dm.communicator();
        if !comm.is_single() && comm.all_reduce_u64(u64::from(tmp.is_ok()), ReduceOp::Min) == 0 {
            return Err(match tmp {
                Err(e) => FabError::Arena(e),
                Ok(_) => FabError::Comm(
                    "sum_boundary: another rank could not allocate its temporary copy".to_string(),
                ),
            });
        }
        let mut tmp = tmp.map_err(FabError::Arena)?;
        tmp.copy_from(self, c.start, .., ng)?;
        self.set_val(T::ZERO, c.clone(), 0)?;
        self.parallel_copy_with(&tmp, 0, ng, period, CopyOp::Add, c, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distribution::Strategy;
    use alloc::collections::BTreeMap;
    use amrex_arena::HostArena;
    use amrex_box::IndexBox;

    /// The message path without MPI: rank 0's and rank 1's parts of a FabArray built in
    /// one process, their messages packed by one part and unpacked by the other exactly
    /// as the engine does, give every fab the values a FabArray holding every box gets.
    /// (This also puts `pack` and `unpack_tag` under Miri.)
    #[test]
    fn messages_packed_by_one_rank_unpack_on_the_other() {
        let domain = IndexBox::new(IntVect::ZERO, IntVect::new(7, 5, 3));
        let ba = BoxArray::from_domain(domain, 3);
        let dm = DistributionMapping::with_strategy(&ba, 2, Strategy::RoundRobin);
        let (ng, nc) = (IntVect::splat(1), 2);
        let period = Periodicity::all(domain);
        let value = |g: usize, p: IntVect, n: usize| {
            (g * 1000) as f64 + f64::from(p[0] * 100 + p[1] * 10 + p[2]) + n as f64 * 0.5
        };
        let fill = |fa: &mut FabArray<f64>| {
            for l in 0..fa.local_size() {
                let g = fa.global_index(l);
                let vb = fa.box_of(g);
                let mut a = fa.array_mut_at(l);
                a.for_each_mut(vb, |i, j, k, n, v| *v = value(g, IntVect::new(i, j, k), n));
            }
        };
        let mut full = FabArray::<f64>::new(&ba, &DistributionMapping::single(&ba), nc, ng);
        fill(&mut full);
        full.fill_boundary(period).unwrap();
        let mut parts: Vec<FabArray<f64>> = (0..2)
            .map(|r| FabArray::try_new_on_rank_in(&ba, &dm, nc, ng, r, HostArena).unwrap())
            .collect();
        let plans: Vec<_> = (0..2)
            .map(|r| dm.fill_boundary_plan(&ba, ng, period, FillPattern::Full, r))
            .collect();
        let mut messages = BTreeMap::new();
        for (r, part) in parts.iter_mut().enumerate() {
            fill(part);
            let raws = part.raws_mut();
            for (to, tags) in plans[r].sends() {
                // SAFETY: as in `fill_boundary_nowait`: sources inside local fabs.
                let bytes = unsafe { pack(&raws, &part.g2l, tags, 0, nc) };
                messages.insert((r, *to), bytes);
            }
        }
        assert!(!messages.is_empty(), "the case must exchange messages");
        for (r, part) in parts.iter_mut().enumerate() {
            let raws = part.raws_mut();
            for tag in plans[r].local() {
                let (d, s) = (
                    raws[part.g2l[tag.dst] as usize],
                    raws[part.g2l[tag.src] as usize],
                );
                // SAFETY: as in `fill_boundary_nowait`.
                unsafe { run_tag(&d, 0, &s, 0, nc, tag, CopyOp::Copy) };
            }
            for (from, tags) in plans[r].recvs() {
                let vals = as_elements::<f64>(&messages[&(*from, r)]);
                let mut at = 0;
                for tag in tags {
                    let n = tag_len(tag, nc);
                    // SAFETY: as in `fill_boundary_finish`.
                    unsafe {
                        unpack_tag(
                            &raws[part.g2l[tag.dst] as usize],
                            0,
                            nc,
                            tag,
                            &vals[at..at + n],
                            CopyOp::Copy,
                        );
                    }
                    at += n;
                }
                assert_eq!(at, vals.len(), "message from {from} to {r} fully used");
            }
            for l in 0..part.local_size() {
                let g = part.global_index(l);
                let f = full.local_index(g).unwrap();
                assert_eq!(
                    part.fab(l).as_slice().unwrap(),
                    full.fab(f).as_slice().unwrap(),
                    "box {g} on rank {r}"
                );
            }
        }
    }

    #[test]
    fn fingerprints_tell_layouts_apart() {
        let d = IndexBox::new(IntVect::ZERO, IntVect::splat(15));
        let (a, b) = (BoxArray::from_domain(d, 8), BoxArray::from_domain(d, 4));
        let (da, db) = (
            DistributionMapping::single(&a),
            DistributionMapping::single(&b),
        );
        let f = |ba: &BoxArray, dm: &DistributionMapping| Fingerprint::new().layout(ba, dm).0;
        assert_eq!(f(&a, &da), f(&a, &DistributionMapping::single(&a)));
        assert_ne!(f(&a, &da), f(&b, &db));
        let shifted = DistributionMapping::from_pmap(alloc::vec![0, 0, 0, 0, 0, 0, 0, 1], 2);
        assert_ne!(f(&a, &da), f(&a, &shifted));
    }
}
