//! Copy plans for `FillBoundary` and `ParallelCopy`, and their cache.
//!
//! A plan lists *copy tags*: "copy the cells of `dbox` in destination box `dst` from
//! `dbox + shift` in source box `src`". Tags whose source and destination are both owned
//! by the calling rank are *local*; the others are *messages* to send to or receive from
//! another rank, kept apart so that an MPI engine can execute them. A plan is computed
//! once per `(BoxArray, DistributionMapping, ghost width, periodicity, ...)` and cached
//! in the destination's [`DistributionMapping`], as AMReX caches its `FB` and `CPC`
//! objects.

use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;
use core::ops::Range;

use amrex_box::{IndexBox, IntVect};

use crate::box_array::{BaWeak, BoxArray};
use crate::boxlist::box_diff;
use crate::distribution::{DistributionMapping, DmWeak};
use amrex_geometry::Periodicity;
use amrex_runtime::sync::Lock;

/// One rectangular copy: destination cells `dbox` of box `dst` receive source cells
/// `dbox + shift` of box `src` (AMReX's `CopyComTag`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CopyTag {
    /// Global index of the destination box.
    pub dst: usize,
    /// Global index of the source box.
    pub src: usize,
    /// Region written, in the destination's index space.
    pub dbox: IndexBox,
    /// Source region is `dbox` shifted by this (a periodic shift, or zero).
    pub shift: IntVect,
}

impl CopyTag {
    /// The region read, in the source's index space.
    #[must_use]
    pub fn sbox(&self) -> IndexBox {
        self.dbox.shift_iv(self.shift)
    }
}

/// A computed copy plan: local copies grouped by destination, plus per-rank messages.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CopyPlan {
    rank: usize,
    local: Vec<CopyTag>,
    groups: Vec<(usize, Range<usize>)>,
    sends: Vec<(usize, Vec<CopyTag>)>,
    recvs: Vec<(usize, Vec<CopyTag>)>,
    /// For each local tag, its position among all tags of its destination box (the
    /// order a single process applies them in).
    local_seq: Vec<u32>,
    /// The same for the tags of each receive.
    recv_seq: Vec<Vec<u32>>,
    /// No two local tags of one destination overlap (checked for destinations with up
    /// to [`DISJOINT_CHECK_MAX`] local tags; `false` if one has more).
    local_disjoint: bool,
}

/// Up to how many local tags per destination a plan checks whether they overlap.
const DISJOINT_CHECK_MAX: usize = 64;

impl CopyPlan {
    /// The rank this plan was computed for.
    #[must_use]
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Copies whose source and destination this rank owns, grouped by destination box
    /// (in increasing destination index) and, within a group, in the order they must be
    /// applied.
    #[must_use]
    pub fn local(&self) -> &[CopyTag] {
        &self.local
    }

    /// `(destination box, range into local())` for each destination with local copies.
    #[must_use]
    pub fn local_groups(&self) -> &[(usize, Range<usize>)] {
        &self.groups
    }

    /// Messages to send: `(destination rank, tags)` with sources owned here, by
    /// increasing rank. Both sides list a message's tags in the same order.
    #[must_use]
    pub fn sends(&self) -> &[(usize, Vec<CopyTag>)] {
        &self.sends
    }

    /// Messages to receive: `(source rank, tags)` with destinations owned here.
    #[must_use]
    pub fn recvs(&self) -> &[(usize, Vec<CopyTag>)] {
        &self.recvs
    }

    /// `true` if the plan needs no communication with another rank.
    #[must_use]
    pub fn is_local_only(&self) -> bool {
        self.sends.is_empty() && self.recvs.is_empty()
    }

    /// Position of each [`local`](Self::local) tag among all the tags of its destination
    /// box, local or received: the order in which one process applies them.
    #[must_use]
    pub fn local_order(&self) -> &[u32] {
        &self.local_seq
    }

    /// Position of each tag of receive `i` (see [`recvs`](Self::recvs)) among all the
    /// tags of its destination box.
    #[must_use]
    pub fn recv_order(&self, i: usize) -> &[u32] {
        &self.recv_seq[i]
    }

    /// Whether no two [`local`](Self::local) tags of one destination write the same
    /// cell, so that the order in which they are applied does not matter. Checked when
    /// the plan is built, for destinations of up to 64 local tags; `false` when one has
    /// more. A FillBoundary of a cell-centred BoxArray of disjoint boxes has it.
    #[must_use]
    pub fn local_tags_disjoint(&self) -> bool {
        self.local_disjoint
    }

    /// Number of cells copied locally.
    #[must_use]
    pub fn local_cells(&self) -> u64 {
        self.local.iter().map(|t| t.dbox.num_pts()).sum()
    }

    fn from_parts(
        rank: usize,
        (local, local_seq): (Vec<CopyTag>, Vec<u32>),
        sends: Vec<Vec<CopyTag>>,
        recvs: Vec<(Vec<CopyTag>, Vec<u32>)>,
    ) -> Self {
        let mut groups: Vec<(usize, Range<usize>)> = Vec::new();
        for (n, t) in local.iter().enumerate() {
            match groups.last_mut() {
                Some((d, r)) if *d == t.dst => r.end = n + 1,
                _ => groups.push((t.dst, n..n + 1)),
            }
        }
        debug_assert!(
            groups.windows(2).all(|w| w[0].0 < w[1].0),
            "local tags must be grouped by dst"
        );
        let nz = |v: Vec<Vec<CopyTag>>| -> Vec<(usize, Vec<CopyTag>)> {
            v.into_iter()
                .enumerate()
                .filter(|(_, t)| !t.is_empty())
                .collect()
        };
        let local_disjoint = groups.iter().all(|(_, range)| {
            let tags = &local[range.clone()];
            tags.len() <= DISJOINT_CHECK_MAX
                && tags.iter().enumerate().all(|(i, a)| {
                    tags[i + 1..]
                        .iter()
                        .all(|b| a.dbox.intersection(&b.dbox).is_none())
                })
        });
        let (recvs, recv_seq): (Vec<_>, Vec<_>) = recvs
            .into_iter()
            .enumerate()
            .filter(|(_, (t, _))| !t.is_empty())
            .map(|(r, (t, q))| ((r, t), q))
            .unzip();
        Self {
            rank,
            local,
            groups,
            sends: nz(sends),
            recvs,
            local_seq,
            recv_seq,
            local_disjoint,
        }
    }
}

/// Which ghost cells a `FillBoundary` fills.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FillPattern {
    /// Every ghost cell: faces, edges and corners.
    #[default]
    Full,
    /// Only the face slabs (AMReX's `cross = true`), what a 7-point stencil reads.
    Cross,
}

/// The six face slabs of ghost width `ng` around `vbx` (the `cross` stencil region).
fn cross_slabs(vbx: &IndexBox, ng: IntVect) -> [IndexBox; 6] {
    core::array::from_fn(|n| {
        let d = n / 2;
        let (lo, hi) = (vbx.lo()[d], vbx.hi()[d]);
        let mut l = vbx.lo();
        let mut h = vbx.hi();
        if n % 2 == 0 {
            l[d] = lo - ng[d];
            h[d] = lo - 1;
        } else {
            l[d] = hi + 1;
            h[d] = hi + ng[d];
        }
        IndexBox::with_type(l, h, vbx.ix_type())
    })
}

/// Tags that fill the ghost cells of box `k` (AMReX's `FB::define_fb`, receive side).
fn fb_tags_for(
    ba: &BoxArray,
    k: usize,
    ng: IntVect,
    shifts: &[IntVect],
    cross: FillPattern,
    out: &mut Vec<CopyTag>,
) {
    let vbx = ba.get(k);
    let bxrcv = vbx.grow_iv(ng);
    let slabs = cross_slabs(&vbx, ng);
    for &s in shifts {
        // Periodic images are clipped to the index space (an image of a box at its edge
        // would overflow); what is clipped away exists in no box.
        let Some(image) = bxrcv.shifted_in_index_space(s) else {
            continue;
        };
        for (j, isect) in ba.intersections(&image) {
            let dst_bx = isect.shift_iv(-s);
            for piece in box_diff(&dst_bx, &vbx) {
                if cross == FillPattern::Cross {
                    for slab in &slabs {
                        if let Some(p) = piece.intersection(slab) {
                            out.push(CopyTag {
                                dst: k,
                                src: j,
                                dbox: p,
                                shift: s,
                            });
                        }
                    }
                } else {
                    out.push(CopyTag {
                        dst: k,
                        src: j,
                        dbox: piece,
                        shift: s,
                    });
                }
            }
        }
    }
}

/// Tags that copy `src` (valid region grown by `src_ng`) into box `k` of `dst` grown by
/// `dst_ng` (AMReX's `CPC::define`, receive side).
fn pc_tags_for(
    dst: &BoxArray,
    k: usize,
    dst_ng: IntVect,
    src: &BoxArray,
    src_ng: IntVect,
    shifts: &[IntVect],
    out: &mut Vec<CopyTag>,
) {
    let bx_dst = dst.get(k).grow_iv(dst_ng);
    for &s in shifts {
        // Clipped to the index space, as in `fb_tags_for`.
        let Some(image) = bx_dst.shifted_in_index_space(s) else {
            continue;
        };
        for (j, isect) in src.intersections_grown(&image, src_ng) {
            out.push(CopyTag {
                dst: k,
                src: j,
                dbox: isect.shift_iv(-s),
                shift: s,
            });
        }
    }
}

/// Splits the tags of every destination box into local / send / receive lists for
/// `rank`. `tags_for(k, out)` appends the tags of destination box `k`.
fn split(
    rank: usize,
    dst_dm: &DistributionMapping,
    src_dm: &DistributionMapping,
    mut tags_for: impl FnMut(usize, &mut Vec<CopyTag>),
) -> CopyPlan {
    let n = dst_dm.nranks().max(src_dm.nranks());
    let mut local = (Vec::new(), Vec::new());
    let mut sends = vec![Vec::new(); n];
    let mut recvs = vec![(Vec::new(), Vec::new()); n];
    let mut buf = Vec::new();
    let src_has_mine = src_dm.pmap().iter().any(|&r| r as usize == rank);
    for k in 0..dst_dm.len() {
        let dst_owner = dst_dm.rank_of(k);
        // A destination owned elsewhere matters only for what this rank sends.
        if dst_owner != rank && !src_has_mine {
            continue;
        }
        buf.clear();
        tags_for(k, &mut buf);
        for (seq, t) in buf.iter().enumerate() {
            let src_owner = src_dm.rank_of(t.src);
            let seq = u32::try_from(seq).expect("fewer than 2^32 tags per box");
            if dst_owner == rank && src_owner == rank {
                local.0.push(*t);
                local.1.push(seq);
            } else if dst_owner == rank {
                recvs[src_owner].0.push(*t);
                recvs[src_owner].1.push(seq);
            } else if src_owner == rank {
                sends[dst_owner].push(*t);
            }
        }
    }
    CopyPlan::from_parts(rank, local, sends, recvs)
}

/// Computes the `FillBoundary` plan of `(ba, dm)` for `rank` without caching.
#[must_use]
pub fn fill_boundary_plan(
    ba: &BoxArray,
    dm: &DistributionMapping,
    ng: IntVect,
    period: Periodicity,
    cross: FillPattern,
    rank: usize,
) -> CopyPlan {
    assert_eq!(
        ba.len(),
        dm.len(),
        "fill_boundary_plan: BoxArray and DistributionMapping sizes differ"
    );
    let shifts = period.shifts(ng);
    split(rank, dm, dm, |k, out| {
        fb_tags_for(ba, k, ng, &shifts, cross, out)
    })
}

/// Computes the `ParallelCopy` plan (src → dst) for `rank` without caching.
#[expect(clippy::too_many_arguments, reason = "mirrors AMReX's CPC constructor")]
#[must_use]
pub fn parallel_copy_plan(
    dst_ba: &BoxArray,
    dst_dm: &DistributionMapping,
    dst_ng: IntVect,
    src_ba: &BoxArray,
    src_dm: &DistributionMapping,
    src_ng: IntVect,
    period: Periodicity,
    rank: usize,
) -> CopyPlan {
    assert_eq!(
        dst_ba.len(),
        dst_dm.len(),
        "parallel_copy_plan: dst sizes differ"
    );
    assert_eq!(
        src_ba.len(),
        src_dm.len(),
        "parallel_copy_plan: src sizes differ"
    );
    assert_eq!(
        dst_ba.ix_type(),
        src_ba.ix_type(),
        "parallel_copy_plan: index types differ"
    );
    let shifts = period.shifts(dst_ng.max(src_ng));
    split(rank, dst_dm, src_dm, |k, out| {
        pc_tags_for(dst_ba, k, dst_ng, src_ba, src_ng, &shifts, out);
    })
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Key {
    Fb {
        ng: IntVect,
        period: Periodicity,
        cross: FillPattern,
    },
    Pc {
        dst_ng: IntVect,
        src_ba: usize,
        src_dm: usize,
        src_ng: IntVect,
        period: Periodicity,
    },
}

struct Entry {
    /// The destination BoxArray, by its id and a weak handle that pins that id.
    ba_id: usize,
    ba: BaWeak,
    rank: usize,
    key: Key,
    // The source BoxArray and mapping (of a `ParallelCopy` plan), held weakly too: the
    // entry must not keep them alive (the mapping may be the very one that owns this
    // cache), and once either is gone the entry can never be found again.
    src_ba: Option<BaWeak>,
    src_dm: Option<DmWeak>,
    plan: Arc<CopyPlan>,
    uses: u64,
}

impl Entry {
    /// Whether every BoxArray and mapping the entry is keyed by is still alive.
    fn is_alive(&self) -> bool {
        self.ba.is_alive()
            && self.src_ba.as_ref().is_none_or(BaWeak::is_alive)
            && self.src_dm.as_ref().is_none_or(DmWeak::is_alive)
    }

    fn is_for(&self, ba: &BoxArray, rank: usize, key: &Key) -> bool {
        self.ba_id == ba.id() && self.rank == rank && &self.key == key
    }
}

/// Cache of plans, stored in a [`DistributionMapping`] (shared by its clones). Entries
/// whose BoxArrays or source mapping have been dropped are removed when a plan is added,
/// so a long run that copies from a new temporary layout every step (FillPatch,
/// `average_down` through a copy) keeps only the plans of layouts that still exist.
#[derive(Default)]
pub(crate) struct PlanCache {
    entries: Lock<Vec<Entry>>,
}

impl core::fmt::Debug for PlanCache {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let n = self.entries.with(|e| e.len());
        f.debug_struct("PlanCache").field("entries", &n).finish()
    }
}

/// Statistics of a plan cache: number of plans built and number of lookups served.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Plans stored.
    pub plans: usize,
    /// Total uses of all stored plans (each lookup counts one).
    pub uses: u64,
}

impl PlanCache {
    fn get_or_build(
        &self,
        ba: &BoxArray,
        rank: usize,
        key: Key,
        src_ba: Option<&BoxArray>,
        src_dm_keepalive: Option<DmWeak>,
        build: impl FnOnce() -> CopyPlan,
    ) -> Arc<CopyPlan> {
        let found = self.entries.with(|entries| {
            entries
                .iter_mut()
                .find(|e| e.is_for(ba, rank, &key))
                .map(|e| {
                    e.uses += 1;
                    e.plan.clone()
                })
        });
        if let Some(p) = found {
            return p;
        }
        // Build outside the lock; a concurrent builder of the same plan just loses.
        let plan = Arc::new(build());
        self.entries.with(|entries| {
            if let Some(e) = entries.iter_mut().find(|e| e.is_for(ba, rank, &key)) {
                e.uses += 1;
                return e.plan.clone();
            }
            entries.retain(Entry::is_alive);
            entries.push(Entry {
                ba_id: ba.id(),
                ba: ba.keepalive(),
                rank,
                key,
                src_ba: src_ba.map(BoxArray::keepalive),
                src_dm: src_dm_keepalive,
                plan: plan.clone(),
                uses: 1,
            });
            plan
        })
    }

    pub(crate) fn stats(&self) -> CacheStats {
        self.entries.with(|e| CacheStats {
            plans: e.len(),
            uses: e.iter().map(|x| x.uses).sum(),
        })
    }

    pub(crate) fn clear(&self) {
        self.entries.with(Vec::clear);
    }
}

impl DistributionMapping {
    /// The cached `FillBoundary` plan for `(ba, self)` on `rank`, built on first use.
    ///
    /// # Panics
    /// If `ba.len() != self.len()`.
    #[must_use]
    pub fn fill_boundary_plan(
        &self,
        ba: &BoxArray,
        ng: IntVect,
        period: Periodicity,
        cross: FillPattern,
        rank: usize,
    ) -> Arc<CopyPlan> {
        let key = Key::Fb { ng, period, cross };
        self.cache().get_or_build(ba, rank, key, None, None, || {
            fill_boundary_plan(ba, self, ng, period, cross, rank)
        })
    }

    /// The cached `ParallelCopy` plan from `(src_ba, src_dm)` into `(dst_ba, self)` on
    /// `rank`, built on first use.
    #[expect(
        clippy::too_many_arguments,
        reason = "one argument per part of the cache key"
    )]
    #[must_use]
    pub fn parallel_copy_plan(
        &self,
        dst_ba: &BoxArray,
        dst_ng: IntVect,
        src_ba: &BoxArray,
        src_dm: &DistributionMapping,
        src_ng: IntVect,
        period: Periodicity,
        rank: usize,
    ) -> Arc<CopyPlan> {
        let key = Key::Pc {
            dst_ng,
            src_ba: src_ba.id(),
            src_dm: src_dm.id(),
            src_ng,
            period,
        };
        self.cache().get_or_build(
            dst_ba,
            rank,
            key,
            Some(src_ba),
            Some(src_dm.keepalive()),
            || parallel_copy_plan(dst_ba, self, dst_ng, src_ba, src_dm, src_ng, period, rank),
        )
    }

    /// Number of plans cached in this mapping and how often they were used.
    #[must_use]
    pub fn plan_cache_stats(&self) -> CacheStats {
        self.cache().stats()
    }

    /// Drops every cached plan (AMReX's `flushFBCache`/`flushCPCache` for this mapping).
    pub fn clear_plan_cache(&self) {
        self.cache().clear();
    }
}
