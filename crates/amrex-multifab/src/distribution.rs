//! `DistributionMapping`: which rank owns which box.

use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::fmt;

use crate::box_array::BoxArray;
use crate::plan::PlanCache;
use amrex_runtime::Communicator;

/// How boxes are assigned to ranks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Strategy {
    /// Boxes sorted from largest to smallest, dealt to ranks in turn.
    RoundRobin,
    /// Balances cell counts: heaviest box to the lightest rank, then swaps between the
    /// heaviest and lightest ranks until 90% efficiency (AMReX's knapsack).
    KnapSack,
    /// Boxes in Morton order of their low corners, cut into runs of about equal cell
    /// count, heaviest run on rank 0 (AMReX's default).
    #[default]
    Sfc,
}

/// Box index → rank, AMReX's `DistributionMapping`, and the [`Communicator`] whose ranks
/// these are.
///
/// Cheap to clone (shared storage). Clones share the copy-plan cache used by
/// `FillBoundary` and `ParallelCopy`, so every `FabArray` built on one
/// `(BoxArray, DistributionMapping)` pair reuses the same plans, as in AMReX.
///
/// [`new`](Self::new) and [`on`](Self::on) map the boxes onto the ranks of a
/// communicator (MPI's world under `mpirun` once `amrex_runtime::init` has run; one process
/// otherwise). Every strategy is a deterministic function of the BoxArray and the rank
/// count, so every rank computes the same map. [`with_ranks`](Self::with_ranks),
/// [`with_strategy`](Self::with_strategy) and [`from_pmap`](Self::from_pmap) make maps
/// over any number of ranks on the single-process communicator, to inspect plans: a
/// FabArray on such a map holds rank 0's boxes and refuses operations that need
/// messages.
///
/// ```
/// use amrex_box::{IndexBox, IntVect};
/// use amrex_multifab::{BoxArray, DistributionMapping, Strategy};
/// let ba = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::splat(63)), 16);
/// let dm = DistributionMapping::with_ranks(&ba, 4);
/// assert_eq!(dm.len(), 64);
/// assert!((0..4).all(|r| dm.local_indices(r).len() == 16));
/// let rr = DistributionMapping::with_strategy(&ba, 3, Strategy::RoundRobin);
/// assert_eq!(rr.rank_of(0), 0);
/// assert_eq!(rr.rank_of(1), 1);
/// ```
#[derive(Clone)]
pub struct DistributionMapping {
    inner: Arc<DmInner>,
}

/// Weak handle on a mapping's storage, see [`DistributionMapping::keepalive`].
pub(crate) struct DmWeak(Weak<DmInner>);

impl DmWeak {
    /// Whether a clone of the mapping is still alive.
    pub(crate) fn is_alive(&self) -> bool {
        self.0.strong_count() > 0
    }
}

struct DmInner {
    pmap: Vec<u32>,
    nranks: usize,
    comm: Communicator,
    cache: PlanCache,
    /// A hash of the map, which distributed operations compare between ranks.
    fingerprint: u64,
}

impl fmt::Debug for DistributionMapping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DistributionMapping")
            .field("nranks", &self.inner.nranks)
            .field("pmap", &self.inner.pmap)
            .finish()
    }
}

impl PartialEq for DistributionMapping {
    fn eq(&self, o: &Self) -> bool {
        self.same_as(o)
            || (self.inner.nranks == o.inner.nranks
                && self.inner.pmap == o.inner.pmap
                && self.inner.comm == o.inner.comm)
    }
}
impl Eq for DistributionMapping {}

impl DistributionMapping {
    /// AMReX's default mapping (Morton space-filling curve) of `ba` onto the ranks of
    /// [`Communicator::current`] (AMReX's `DistributionMapping(ba)`): every box on rank 0
    /// in a single process, spread over MPI's world under `mpirun` once `amrex_runtime::init`
    /// has run.
    #[must_use]
    pub fn new(ba: &BoxArray) -> Self {
        Self::on(ba, &Communicator::current())
    }

    /// AMReX's default mapping of `ba` onto the ranks of `comm`.
    #[must_use]
    pub fn on(ba: &BoxArray, comm: &Communicator) -> Self {
        Self::with_strategy_on(ba, comm, Strategy::Sfc)
    }

    /// A mapping of `ba` onto the ranks of `comm` built with `strategy`.
    #[must_use]
    pub fn with_strategy_on(ba: &BoxArray, comm: &Communicator, strategy: Strategy) -> Self {
        let pmap = Self::with_strategy(ba, comm.size(), strategy)
            .inner
            .pmap
            .clone();
        Self::from_pmap_on(pmap, comm)
    }

    /// A mapping from an explicit processor map onto the ranks of `comm` (every rank must
    /// pass the same map; FabArray operations check that they do).
    ///
    /// # Panics
    /// If a rank is `>= comm.size()`.
    #[must_use]
    #[track_caller]
    pub fn from_pmap_on(pmap: Vec<u32>, comm: &Communicator) -> Self {
        Self::with_comm(pmap, comm.size(), comm.clone(), "from_pmap_on")
    }

    #[track_caller]
    fn with_comm(pmap: Vec<u32>, nranks: usize, comm: Communicator, what: &str) -> Self {
        assert!(
            pmap.iter().all(|&r| (r as usize) < nranks),
            "DistributionMapping::{what}: a rank is not below {nranks}"
        );
        let mut fp = amrex_runtime::Fingerprint::new();
        fp.word(pmap.len() as u64).word(nranks as u64);
        for &r in &pmap {
            fp.word(u64::from(r));
        }
        Self {
            inner: Arc::new(DmInner {
                fingerprint: fp.value(),
                pmap,
                nranks,
                comm,
                cache: PlanCache::default(),
            }),
        }
    }

    /// The hash of the map that distributed operations compare between ranks
    /// (computed once, when it was made; see `amrex_runtime::Communicator::agree`).
    #[must_use]
    pub fn fingerprint(&self) -> u64 {
        self.inner.fingerprint
    }

    /// The communicator whose ranks this map names.
    #[must_use]
    pub fn communicator(&self) -> &Communicator {
        &self.inner.comm
    }

    /// Whether FabArrays on this map can exchange messages: the map spans exactly its
    /// communicator's ranks.
    #[must_use]
    pub fn is_distributed_over_comm(&self) -> bool {
        self.inner.comm.size() == self.inner.nranks
    }

    /// This process's rank in the map: its rank in the communicator, or 0 for a map made
    /// for inspection (its FabArrays hold rank 0's boxes).
    #[must_use]
    pub fn my_rank(&self) -> usize {
        if self.is_distributed_over_comm() {
            self.inner.comm.rank()
        } else {
            0
        }
    }

    /// AMReX's default mapping (Morton space-filling curve) of `ba` onto `nranks` ranks
    /// of no communicator (to inspect plans; [`single`](Self::single) for one process,
    /// [`new`](Self::new) for this program's ranks).
    ///
    /// # Panics
    /// If `nranks == 0`.
    #[must_use]
    #[track_caller]
    pub fn with_ranks(ba: &BoxArray, nranks: usize) -> Self {
        Self::with_strategy(ba, nranks, Strategy::Sfc)
    }

    /// Every box on rank 0 (a single-process run).
    #[must_use]
    pub fn single(ba: &BoxArray) -> Self {
        Self::from_pmap(alloc::vec![0; ba.len()], 1)
    }

    /// A mapping built with the given strategy.
    ///
    /// # Panics
    /// If `nranks == 0` or `nranks > u32::MAX`.
    #[must_use]
    #[track_caller]
    pub fn with_strategy(ba: &BoxArray, nranks: usize, strategy: Strategy) -> Self {
        assert!(
            nranks > 0,
            "DistributionMapping: the number of ranks must be positive"
        );
        assert!(
            u32::try_from(nranks).is_ok(),
            "DistributionMapping: too many ranks"
        );
        let wgts: Vec<u64> = ba
            .boxes()
            .iter()
            .map(amrex_box::IndexBox::num_pts)
            .collect();
        let pmap = if ba.is_empty() {
            Vec::new()
        } else {
            match strategy {
                Strategy::RoundRobin => round_robin_sorted(&wgts, nranks),
                Strategy::KnapSack => knapsack_map(&wgts, nranks),
                Strategy::Sfc => sfc_map(ba, &wgts, nranks),
            }
        };
        Self::from_pmap(pmap, nranks)
    }

    /// A mapping from an explicit processor map.
    ///
    /// # Panics
    /// If a rank is `>= nranks`.
    #[must_use]
    #[track_caller]
    pub fn from_pmap(pmap: Vec<u32>, nranks: usize) -> Self {
        Self::with_comm(pmap, nranks, Communicator::single(), "from_pmap")
    }

    /// Number of boxes mapped.
    #[must_use]
    pub fn len(&self) -> usize {
        self.inner.pmap.len()
    }

    /// `true` if no box is mapped.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.inner.pmap.is_empty()
    }

    /// Number of ranks.
    #[must_use]
    pub fn nranks(&self) -> usize {
        self.inner.nranks
    }

    /// The rank that owns box `i`.
    ///
    /// # Panics
    /// If `i >= len()`.
    #[must_use]
    #[track_caller]
    pub fn rank_of(&self, i: usize) -> usize {
        self.inner.pmap[i] as usize
    }

    /// The processor map (rank of each box).
    #[must_use]
    pub fn pmap(&self) -> &[u32] {
        &self.inner.pmap
    }

    /// Indices of the boxes owned by `rank`, increasing.
    #[must_use]
    pub fn local_indices(&self, rank: usize) -> Vec<usize> {
        (0..self.len())
            .filter(|&i| self.rank_of(i) == rank)
            .collect()
    }

    /// `true` if both handles share storage (clones).
    #[must_use]
    pub fn same_as(&self, o: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &o.inner)
    }

    pub(crate) fn cache(&self) -> &PlanCache {
        &self.inner.cache
    }

    pub(crate) fn id(&self) -> usize {
        Arc::as_ptr(&self.inner) as usize
    }

    /// A weak handle that keeps the allocation (and so [`id`](Self::id)) from being
    /// reused without keeping the mapping alive.
    pub(crate) fn keepalive(&self) -> DmWeak {
        DmWeak(Arc::downgrade(&self.inner))
    }

    /// Sum of cells per rank divided by `nranks × max`, in `(0, 1]` (AMReX's efficiency).
    #[must_use]
    pub fn efficiency(&self, ba: &BoxArray) -> f64 {
        let mut w = alloc::vec![0u64; self.nranks()];
        for (i, b) in ba.boxes().iter().enumerate() {
            w[self.rank_of(i)] += b.num_pts();
        }
        let max = w.iter().copied().max().unwrap_or(0);
        if max == 0 {
            return 1.0;
        }
        w.iter().sum::<u64>() as f64 / (self.nranks() as f64 * max as f64)
    }
}

/// Rank `r` of a map being built, `r < nranks`, which
/// [`with_strategy`](DistributionMapping::with_strategy) asserts is at most `u32::MAX`.
fn rank_u32(r: usize) -> u32 {
    u32::try_from(r).expect("ranks are below nranks <= u32::MAX (asserted)")
}

/// Round robin with boxes sorted by decreasing weight (stable).
fn round_robin_sorted(wgts: &[u64], nranks: usize) -> Vec<u32> {
    let mut order: Vec<usize> = (0..wgts.len()).collect();
    order.sort_by(|&a, &b| wgts[b].cmp(&wgts[a]));
    let mut pmap = alloc::vec![0u32; wgts.len()];
    for (i, &b) in order.iter().enumerate() {
        pmap[b] = rank_u32(i % nranks);
    }
    pmap
}

#[derive(Clone, Debug)]
struct Bin {
    balls: Vec<usize>,
    weight: u64,
    id: usize,
}

/// AMReX's `knapsack`: returns the bins sorted by decreasing weight.
fn knapsack(wgts: &[u64], nranks: usize) -> Vec<Vec<usize>> {
    let mut lb: Vec<usize> = (0..wgts.len()).collect();
    lb.sort_by(|&a, &b| wgts[b].cmp(&wgts[a]));
    let mut bins: Vec<Bin> = (0..nranks)
        .map(|id| Bin {
            balls: Vec::new(),
            weight: 0,
            id,
        })
        .collect();
    // Heaviest ball to the lightest bin (ties: lowest bin id).
    let mut heap: alloc::collections::BinaryHeap<core::cmp::Reverse<(u64, usize)>> =
        (0..nranks).map(|i| core::cmp::Reverse((0, i))).collect();
    for &b in &lb {
        let Some(core::cmp::Reverse((w, i))) = heap.pop() else {
            break;
        };
        bins[i].balls.push(b);
        bins[i].weight = w + wgts[b];
        heap.push(core::cmp::Reverse((bins[i].weight, i)));
    }
    let sum: u64 = bins.iter().map(|b| b.weight).sum();
    let mut wblv: Vec<Bin> = bins.into_iter().filter(|b| !b.balls.is_empty()).collect();
    wblv.sort_by(|a, b| b.weight.cmp(&a.weight).then(a.id.cmp(&b.id)));
    let max_efficiency = 0.9;
    let eff = |wblv: &[Bin]| sum as f64 / (nranks as f64 * wblv[0].weight as f64);
    if wblv.len() > 1 && wblv[0].balls.len() > 1 {
        'top: while eff(&wblv) < max_efficiency && wblv[0].balls.len() > 1 {
            let last = wblv.len() - 1;
            let (w_top, w_bottom) = (wblv[0].weight, wblv[last].weight);
            for i1 in 0..wblv[0].balls.len() {
                for i2 in 0..wblv[last].balls.len() {
                    let (b1, b2) = (wblv[0].balls[i1], wblv[last].balls[i2]);
                    if wgts[b1] <= wgts[b2] {
                        continue;
                    }
                    let dw = wgts[b1] - wgts[b2];
                    if w_bottom + dw < w_top {
                        wblv[0].balls[i1] = b2;
                        wblv[last].balls[i2] = b1;
                        wblv[0].weight -= dw;
                        wblv[last].weight += dw;
                        if last == 1 {
                            if wblv[1].weight > wblv[0].weight {
                                wblv.swap(0, 1);
                            }
                        } else {
                            // Bubble the bottom bin up to the first position whose
                            // weight is <= its own, then sink the top bin down.
                            let wb = wblv[last].weight;
                            let pos = (1..last).find(|&p| wblv[p].weight <= wb).unwrap_or(last);
                            let bin = wblv.remove(last);
                            wblv.insert(pos, bin);
                            let wt = wblv[0].weight;
                            let pos = (1..=last)
                                .find(|&p| wblv[p].weight <= wt)
                                .unwrap_or(last + 1);
                            let bin = wblv.remove(0);
                            wblv.insert(pos - 1, bin);
                        }
                        continue 'top;
                    }
                }
            }
            break;
        }
    }
    wblv.into_iter().map(|b| b.balls).collect()
}

fn knapsack_map(wgts: &[u64], nranks: usize) -> Vec<u32> {
    if wgts.len() <= nranks || nranks < 2 {
        return round_robin_sorted(wgts, nranks);
    }
    let mut bins = knapsack(wgts, nranks);
    // Heaviest bucket to rank 0 (stable by bucket order).
    let w = |b: &Vec<usize>| b.iter().map(|&i| wgts[i]).sum::<u64>();
    bins.sort_by_key(|b| core::cmp::Reverse(w(b)));
    let mut pmap = alloc::vec![0u32; wgts.len()];
    for (r, bin) in bins.iter().enumerate() {
        for &b in bin {
            pmap[b] = rank_u32(r);
        }
    }
    pmap
}

/// Spreads the low 10 bits of `x` to every third bit.
fn make_space(x: u32) -> u32 {
    let mut x = x & 0x3FF;
    x = (x | (x << 16)) & 0x0300_00FF;
    x = (x | (x << 8)) & 0x0300_F00F;
    x = (x | (x << 4)) & 0x030C_30C3;
    x = (x | (x << 2)) & 0x0924_9249;
    x
}

/// AMReX's `SFCToken` key: three interleaved 10-bit words, most significant last.
fn morton_key(p: amrex_box::IntVect) -> [u32; 3] {
    const IMIN: i32 = -(1 << 29);
    // `p - IMIN` modulo 2^32, of which the words use the low 30 bits.
    let mut c: [u32; 3] = core::array::from_fn(|d| p[d].wrapping_sub(IMIN).cast_unsigned());
    let mut key = [0u32; 3];
    for word in &mut key {
        *word = make_space(c[0]) | (make_space(c[1]) << 1) | (make_space(c[2]) << 2);
        for v in &mut c {
            *v >>= 10;
        }
    }
    key
}

fn sfc_map(ba: &BoxArray, wgts: &[u64], nranks: usize) -> Vec<u32> {
    let mut tokens: Vec<(usize, [u32; 3])> = ba
        .boxes()
        .iter()
        .enumerate()
        .map(|(i, b)| (i, morton_key(b.lo())))
        .collect();
    tokens.sort_by(|a, b| (a.1[2], a.1[1], a.1[0]).cmp(&(b.1[2], b.1[1], b.1[0])));
    let volpercpu = wgts.iter().map(|&w| w as f64).sum::<f64>() / nranks as f64;
    // AMReX's `Distribute`.
    let mut v: Vec<Vec<usize>> = alloc::vec![Vec::new(); nranks];
    let mut k = 0usize;
    let mut totalvol = 0.0f64;
    for (i, vi) in v.iter_mut().enumerate() {
        let mut cnt = 0;
        let mut vol = 0.0f64;
        while k < tokens.len() && (i == nranks - 1 || vol < volpercpu) {
            vol += wgts[tokens[k].0] as f64;
            cnt += 1;
            vi.push(tokens[k].0);
            k += 1;
        }
        totalvol += vol;
        if totalvol / (i + 1) as f64 > volpercpu && cnt > 1 && i < nranks - 1 {
            k -= 1;
            vi.pop();
            totalvol -= wgts[tokens[k].0] as f64;
        }
    }
    let mut order: Vec<(u64, usize)> = v
        .iter()
        .enumerate()
        .map(|(i, b)| (b.iter().map(|&j| wgts[j]).sum(), i))
        .collect();
    order.sort_by_key(|&(w, _)| core::cmp::Reverse(w));
    let mut pmap = alloc::vec![0u32; wgts.len()];
    for (rank, &(_, bucket)) in order.iter().enumerate() {
        for &b in &v[bucket] {
            pmap[b] = rank_u32(rank);
        }
    }
    pmap
}

#[cfg(test)]
mod tests {
    use super::*;
    use amrex_box::{IndexBox, IntVect};

    #[test]
    fn morton_interleaves_bits() {
        assert_eq!(make_space(0b111), 0b1001001);
        let a = morton_key(IntVect::new(0, 0, 0));
        let b = morton_key(IntVect::new(1, 0, 0));
        let c = morton_key(IntVect::new(0, 1, 0));
        let d = morton_key(IntVect::new(0, 0, 1));
        assert_eq!(b[0] ^ a[0], 1);
        assert_eq!(c[0] ^ a[0], 2);
        assert_eq!(d[0] ^ a[0], 4);
    }

    #[test]
    fn sfc_keeps_neighbours_together() {
        let ba = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::splat(63)), 32);
        let dm = DistributionMapping::with_ranks(&ba, 2);
        // Morton order of the 8 octants: x fastest, so the first four (z = 0) go to
        // rank 0.
        assert_eq!(dm.pmap(), [0, 0, 0, 0, 1, 1, 1, 1]);
        assert!((dm.efficiency(&ba) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn knapsack_balances_unequal_boxes() {
        let boxes: Vec<IndexBox> = [5, 3, 3, 2, 2, 2, 1, 1, 1, 1]
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let lo = IntVect::new(10 * i32::try_from(i).unwrap(), 0, 0);
                IndexBox::new(lo, lo + IntVect::new(n - 1, 0, 0))
            })
            .collect();
        let ba = BoxArray::new(boxes);
        let dm = DistributionMapping::with_strategy(&ba, 3, Strategy::KnapSack);
        assert!(dm.efficiency(&ba) >= 0.9, "{:?}", dm);
        let rr = DistributionMapping::with_strategy(&ba, 3, Strategy::RoundRobin);
        // Largest first: box 0 -> rank 0, boxes 1, 2 -> ranks 1, 2.
        assert_eq!(&rr.pmap()[..3], &[0, 1, 2]);
    }

    #[test]
    fn every_strategy_maps_every_box_to_a_valid_rank() {
        // Fewer boxes and ranks under Miri; still more ranks than boxes at the end.
        let (nx, many) = if cfg!(miri) { (27, 50) } else { (99, 1000) };
        let ba = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::new(nx, 37, 5)), 7);
        assert!(many > ba.len());
        for s in [Strategy::RoundRobin, Strategy::KnapSack, Strategy::Sfc] {
            for n in [1, 2, 3, 7, many] {
                let dm = DistributionMapping::with_strategy(&ba, n, s);
                assert_eq!(dm.len(), ba.len());
                assert!(dm.pmap().iter().all(|&r| (r as usize) < n));
                if n <= ba.len() && s != Strategy::RoundRobin {
                    assert!(
                        dm.efficiency(&ba) > 0.6,
                        "{s:?} {n}: {}",
                        dm.efficiency(&ba)
                    );
                }
            }
        }
    }
}
