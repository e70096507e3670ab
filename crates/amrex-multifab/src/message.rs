//! Messages between ranks: packing a plan's send tags into one buffer per neighbour,
//! posting them with the receives, and unpacking a received tag, in the order both
//! sides list a message's tags.

use crate::error::FabArrayError;
use alloc::vec::Vec;

use amrex_array4::rows::{CopyOp, apply_row};

use crate::element::Element;
use crate::fabarray::RawFab;
use crate::plan::{CopyPlan, CopyTag};
use crate::profile::{self, LOCAL_BYTES, MSGS, SENT};
use crate::raw_fab::extent;
use amrex_runtime::threads::par_map;
use amrex_runtime::{CommError, Communicator, Exchange, Tag};

/// A failed collective or exchange of `op` ([`FabArrayError::comm`]).
pub(crate) fn comm_err(op: &'static str, e: CommError) -> FabArrayError {
    FabArrayError::comm(op, e)
}

/// Counts the messages and bytes of one call.
fn record_traffic(sends: &[(usize, Vec<u8>)], local_bytes: u64) {
    profile::add(MSGS, sends.len() as u64);
    profile::add(SENT, sends.iter().map(|(_, b)| b.len() as u64).sum());
    profile::add(LOCAL_BYTES, local_bytes);
}

/// Elements of one tag's message part.
pub(crate) fn tag_len(tag: &CopyTag, nc: usize) -> usize {
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
pub(crate) unsafe fn unpack_tag<T: Element>(
    dst: &RawFab<T>,
    dcomp: usize,
    nc: usize,
    tag: &CopyTag,
    vals: &[T],
    op: CopyOp,
) {
    let (lo, hi) = (tag.dbox.lo(), tag.dbox.hi());
    let nx = extent(lo[0], hi[0]);
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
pub(crate) unsafe fn post<T: Element>(
    comm: &Communicator,
    what: &'static str,
    tag: Tag,
    plan: &CopyPlan,
    (raws, g2l, scomp): (&[RawFab<T>], &[u32], usize),
    nc: usize,
) -> Result<(Exchange, u64), FabArrayError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::box_array::BoxArray;
    use crate::copy::run_tag;
    use crate::distribution::{DistributionMapping, Strategy};
    use crate::fabarray::FabArray;
    use crate::mfiter::Tiling;
    use crate::plan::FillPattern;
    use alloc::collections::BTreeMap;
    use amrex_arena::HostArena;
    use amrex_box::{IndexBox, IntVect};
    use amrex_geometry::Periodicity;
    use amrex_runtime::Fingerprint;

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
            for mfi in fa.mfiter(Tiling::None) {
                let g = mfi.index();
                let mut a = fa.array_mut(&mfi);
                a.for_each_mut(mfi.validbox(), |i, j, k, n, v| {
                    *v = value(g, IntVect::new(i, j, k), n);
                });
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
        let f = |ba: &BoxArray, dm: &DistributionMapping| {
            let mut fp = Fingerprint::new();
            fp.word(ba.fingerprint()).word(dm.fingerprint());
            fp.value()
        };
        assert_eq!(f(&a, &da), f(&a, &DistributionMapping::single(&a)));
        assert_ne!(f(&a, &da), f(&b, &db));
        let shifted = DistributionMapping::from_pmap(alloc::vec![0, 0, 0, 0, 0, 0, 0, 1], 2);
        assert_ne!(f(&a, &da), f(&a, &shifted));
    }
}
