//! Local copies of a copy plan's tags (AMReX's `AMReX_FBI.H`): each tag becomes one
//! [`RowPart`] per component for the row kernels of `amrex_array4::rows`, and tags of
//! one destination run in the plan's order, or interleaved where they are disjoint.

use alloc::borrow::Cow;
use alloc::vec::Vec;

use amrex_array4::rows::{CopyOp, RowBlock, RowPart, WideRows};

use crate::element::Element;
use crate::fabarray::RawFab;
use crate::message::{tag_len, unpack_tag};
use crate::plan::{CopyPlan, CopyTag};
use crate::raw_fab::extent;
use amrex_runtime::threads::par_for;

/// Copies (or adds) the cells of one tag, `nc` components from `scomp` to `dcomp`.
///
/// # Safety
/// `tag.dbox` lies in `dst`'s box and `tag.sbox()` in `src`'s, the component ranges
/// fit; nobody else accesses the destination cells, and nobody writes the source cells
/// during the call. `dst` and `src` may describe the same fab only if the two regions
/// are disjoint.
#[inline]
pub(crate) unsafe fn run_tag<T: Element>(
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
/// [`INTERLEAVE`](amrex_array4::rows::INTERLEAVE) rows of each (per component), and what is left of the wide rows at the
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
pub(crate) unsafe fn copy_tags_interleaved<T: Element>(
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

/// The parts of `tag`, one per component.
fn tag_parts<T: Element>(
    dst: &RawFab<T>,
    dcomp: usize,
    src: &RawFab<T>,
    scomp: usize,
    nc: usize,
    tag: &CopyTag,
) -> impl Iterator<Item = RowPart<T>> + use<T> {
    let (lo, hi) = (tag.dbox.lo(), tag.dbox.hi());
    let s = tag.shift;
    // A tag's box is non-empty and lies in the destination fab.
    let len = |d: usize| extent(lo[d], hi[d]);
    let (ds, ss) = (dst.layout.strides(), src.layout.strides());
    let rows = RowBlock::new([len(0), len(1), len(2)], (ds[0], ds[1]), (ss[0], ss[1]));
    let (dst, src) = (*dst, *src);
    (0..nc).map(move |n| RowPart {
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

/// Where a destination's tag takes its values from.
#[derive(Clone, Copy)]
pub(crate) enum Source {
    /// `plan.local()[i]`.
    Local(usize),
    /// Tag `t` of receive `msg`, starting at element `at` of its message.
    Remote { msg: usize, t: usize, at: usize },
}

/// For each local destination, its tags as `(position among the destination's tags,
/// where the values come from)`.
pub(crate) type Order = Vec<Vec<(u32, Source)>>;

/// Every local destination's tags, local and received, in the single-process order
/// (`g2l`: the destination FabArray's global-to-local map), and whether each has
/// received tags.
pub(crate) fn merged_order(
    plan: &CopyPlan,
    g2l: &[u32],
    nlocal: usize,
    nc: usize,
) -> (Order, Vec<bool>) {
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
pub(crate) unsafe fn apply_in_order<T: Element>(
    plan: &CopyPlan,
    order: &[Vec<(u32, Source)>],
    draws: &[RawFab<T>],
    (sraws, sg2l, scomp): (&[RawFab<T>], &[u32], usize),
    vals: &[Cow<'_, [T]>],
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
