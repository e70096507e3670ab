//! [`ParticleContainer::redistribute`] and its local part (AMReX's
//! `ParticleContainer::Redistribute`, `AMReX_ParticleContainerI.H`): every particle is
//! classified (its destination tile's code, after wrapping in periodic directions), the
//! leavers of each tile grouped by destination, and routed: to local tiles here, to other
//! ranks through [`communication`](crate::communication).
//!
//! One `redistribute`, in order:
//! 1. [`sift_tiles`](ParticleContainer::sift_tiles): each tile, in parallel,
//!    [`sift`](ParticleContainer::sift)s its leavers into its staging tile with their
//!    codes ([`classify`](ParticleContainer::classify)); the holding tile's particles
//!    are only classified ([`all_codes`](ParticleContainer::all_codes)).
//! 2. The ranks agree that they are all in `redistribute`, and whether any found a NaN or
//!    infinite position; if not, every leaver goes back to its tile and nothing moves.
//! 3. [`route`](ParticleContainer::route) groups each source's leavers by code
//!    ([`group_by_code`]): removals are counted, particles for other ranks packed into a
//!    [`ParticleCopyPlan`], particles for local tiles listed, and
//!    [`append_arrivals`](ParticleContainer::append_arrivals) appends them, tiles in
//!    parallel.
//! 4. With more than one rank, the plan is
//!    [`communicate`](ParticleCopyPlan::communicate)d and each message unpacked into the
//!    tiles ([`unpack_buffer`](ParticleContainer::unpack_buffer)).
use crate::communication::ParticleCopyPlan;
use crate::container::{ParticleContainer, REMOTE, TileEntry, real_inside};
use crate::error::{ErrorKind, Result};
use crate::mesh::{MeshMap, cell_of};
use crate::tile::{PREFETCH_AHEAD, ParticleTile, is_valid, r2f};
use alloc::vec;
use alloc::vec::Vec;
use amrex_aos::{ParticleReal, SPACEDIM};
use amrex_multifab::{IndexBox, IntVect};
use amrex_runtime::threads::{par_for_each_mut, par_map_mut};
use amrex_runtime::{Fingerprint, ReduceOp};
use num_traits::Float;

/// Destination code of a particle to drop because its id is negative (invalid).
pub(crate) const INVALID: u32 = u32::MAX;
/// Destination code of a particle outside a non-periodic side of the domain.
pub(crate) const OUTSIDE: u32 = u32::MAX - 1;
/// Source code of the holding tile (nothing stays there).
const PENDING: u32 = u32::MAX - 2;

/// A tile's arrivals in `redistribute`: `(source, indices in the source)`.
type Arrivals = Vec<(usize, Vec<u32>)>;
/// The first particle of a tile with a non-finite position: its index and position.
type BadPosition = (usize, [ParticleReal; SPACEDIM]);
/// What [`sift`](ParticleContainer::sift) gives for one tile: the codes of its leavers,
/// and its first bad position.
type Sifted = (Vec<u32>, Option<BadPosition>);

/// The constants of `ParticleContainer::classify` for the particles of one tile.
struct Classifier {
    /// The tile's code (`PENDING` for a tile whose particles all leave).
    own: u32,
    plo: [f64; SPACEDIM],
    rhi: [f64; SPACEDIM],
    plen: [f64; SPACEDIM],
    per: [bool; SPACEDIM],
    any_per: bool,
    /// One level and a real tile: the map, and the tile's cells as bounds on `(x -
    /// plo) / dx` (see `classifier`).
    stay_box: Option<(MeshMap, [f64; SPACEDIM], [f64; SPACEDIM])>,
    own_map: MeshMap,
    tb: IndexBox,
}

/// What [`ParticleContainer::redistribute`] did on this rank.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RedistributeReport {
    /// Particles that stayed in their tile.
    pub kept: usize,
    /// Moved to another tile of this rank.
    pub moved_local: usize,
    /// Sent to other ranks.
    pub sent: usize,
    /// Received from other ranks.
    pub received: usize,
    /// Removed for a negative (invalid) id.
    pub removed_invalid: usize,
    /// Removed for leaving a non-periodic side of the domain.
    pub removed_outside: usize,
    /// `removed_outside` summed over all ranks.
    pub removed_outside_global: u64,
    /// Bytes sent to other ranks.
    pub bytes_sent: usize,
}

impl<T: ParticleTile + Clone> ParticleContainer<T> {
    /// Puts every particle in the tile whose cells hold it (AMReX `Redistribute`):
    /// positions in periodic directions are wrapped into the domain; particles with a
    /// negative id are removed; particles outside a non-periodic side of the domain are
    /// removed and counted; the rest move between tiles and ranks. Each particle's grid
    /// is found by binning ([`GridLocator`](crate::GridLocator)), on the finest level
    /// whose grids hold it. The order of the particles in a tile changes (a leaver's
    /// place is taken by the tile's last particle; arrivals go at the end).
    ///
    /// Between ranks, counts go first (one 8-byte message to every other rank), then
    /// one message of particles to each rank that gets any (AMReX's
    /// `ParticleCopyPlan`). **Collective**.
    ///
    /// # Errors
    /// [`ErrorKind::NonFinitePosition`] if a particle on any rank has a NaN or infinite
    /// coordinate: every rank learns it (one all-reduce) before any particle changes
    /// tile, so none is lost, removed or moved to another tile (their order within a
    /// tile may change; ranks without such a particle report index `usize::MAX` and a
    /// NaN position); [`ErrorKind::Comm`] if the ranks are not all in `redistribute` on
    /// the same container layout (nothing moves then either).
    ///
    /// A failed exchange of particles between ranks is not returned: it cannot be undone
    /// (the leavers for other ranks were already taken out of their tiles) and the other
    /// ranks may be waiting for its messages, so the rank whose exchange fails ends every
    /// rank with [`abort_all_ranks`](amrex_runtime::abort_all_ranks). The job stops; no
    /// rank hangs, and none goes on with particles missing. (`abort_all_ranks` returns
    /// only without MPI ranks to end, where there is no exchange; the exchange's
    /// [`ErrorKind::Comm`] would be returned then.)
    pub fn redistribute(&mut self) -> Result<RedistributeReport> {
        // Pass 1 (tiles in parallel): each tile sifts its particles in one sweep, its
        // leavers into its staging tile (kept between calls, so no fresh pages each
        // step), with their destination codes. The holding tile's particles all leave:
        // they are only classified, and stay where they are until pass 2.
        let ntiles = self.tiles.len();
        let mut tiles = core::mem::take(&mut self.tiles);
        let mut staging = core::mem::take(&mut self.staging);
        staging.truncate(ntiles);
        staging.resize_with(ntiles, || self.template.new_like());
        let mut pending = core::mem::replace(&mut self.pending, self.template.new_like());
        let sifted = self.sift_tiles(&mut tiles, &mut staging);
        let pcodes = self.all_codes(&mut pending);
        self.tiles = tiles;
        let first_bad = sifted
            .iter()
            .find_map(|s| s.1)
            .or_else(|| pcodes.as_ref().err().copied());
        // Ranks that are not all in `redistribute` (one called another collective) find
        // out here, every one of them, instead of waiting in mismatched MPI calls; then
        // every rank learns whether some rank found a bad position. Either way the
        // leavers go back to their tiles.
        let comm = self.comm.clone();
        let agreed = self
            .agree_with(&comm, "redistribute", &Fingerprint::new())
            .and_then(|agreed| {
                if agreed.first_failure(first_bad.is_none()).is_none() {
                    return Ok(agreed);
                }
                let (index, position) = first_bad.unwrap_or((usize::MAX, [ParticleReal::NAN; 3]));
                Err(ErrorKind::NonFinitePosition { index, position }.into())
            });
        let agreed = match agreed {
            Ok(a) => a,
            Err(e) => {
                for (t, st) in self.tiles.iter_mut().zip(&staging) {
                    t.data.append(st);
                }
                self.pending = pending;
                self.staging = staging;
                return Err(e);
            }
        };
        let pcodes = pcodes.unwrap_or_default();

        // Pass 2: removals counted, movers for other ranks packed, movers for local
        // tiles appended to them.
        let (mut rep, plan, incoming) = self.route(&sifted, &pcodes, &staging, &pending);
        self.append_arrivals(&incoming, &staging, &pending);
        self.staging = staging;
        drop(pending);

        // Pass 3: between ranks, counts first, then one message per rank that gets any.
        if self.comm.size() > 1 {
            let (got, bytes_sent) = match plan.communicate(&comm, self.template.packed_bytes()) {
                Ok(r) => r,
                Err(e) => {
                    // The packed leavers are in no tile any more, and the other ranks may
                    // be waiting in the exchange: an error here would lose particles or
                    // leave them hanging, so the job ends (see `# Errors`).
                    amrex_runtime::abort_all_ranks(
                        "redistribute",
                        &alloc::format!("could not exchange particles with the other ranks: {e}"),
                    );
                    return Err(e);
                }
            };
            rep.bytes_sent = bytes_sent;
            for (_, msg) in got {
                rep.received += self.unpack_buffer(&msg);
            }
        }
        rep.removed_outside_global =
            agreed.all_reduce_u64(rep.removed_outside as u64, ReduceOp::Sum);
        Ok(rep)
    }

    /// Pass 1 of [`redistribute`](Self::redistribute), tiles in parallel: each of
    /// `tiles` [`sift`](Self::sift)s its leavers into its (emptied) staging tile, the
    /// same index of `staging`.
    fn sift_tiles(&self, tiles: &mut [TileEntry<T>], staging: &mut [T]) -> Vec<Sifted> {
        let mut jobs: Vec<(&mut TileEntry<T>, &mut T)> =
            tiles.iter_mut().zip(staging.iter_mut()).collect();
        par_map_mut(&mut jobs, |(t, st)| {
            st.resize(0);
            self.sift(&mut t.data, st, t.code, t.level, t.tilebox)
        })
    }

    /// Pass 2 of [`redistribute`](Self::redistribute), routing (one thread; groups, not
    /// particles): removals are counted, movers for other ranks packed into the plan,
    /// movers for local tiles listed by destination slot. Source `s` is staging tile
    /// `s` (with the codes `sifted[s].0`), or the holding tile `pending` (with `pcodes`)
    /// when `s == staging.len()`.
    fn route(
        &self,
        sifted: &[Sifted],
        pcodes: &[u32],
        staging: &[T],
        pending: &T,
    ) -> (RedistributeReport, ParticleCopyPlan, Vec<Arrivals>) {
        let mut rep = RedistributeReport {
            kept: self.tiles.iter().map(|t| t.data.len()).sum(),
            ..RedistributeReport::default()
        };
        let mut plan = ParticleCopyPlan::new(self.comm.size());
        let mut incoming: Vec<Arrivals> = vec![Vec::new(); self.tiles.len()];
        let sources = sifted
            .iter()
            .map(|s| s.0.as_slice())
            .chain(core::iter::once(pcodes));
        for (s, codes) in sources.enumerate() {
            let src = staging.get(s).unwrap_or(pending);
            for (code, idx) in group_by_code(codes) {
                match code {
                    INVALID => rep.removed_invalid += idx.len(),
                    OUTSIDE => rep.removed_outside += idx.len(),
                    _ => {
                        let slot = self.local[code as usize];
                        if slot == REMOTE {
                            let r = self.owner[code as usize] as usize;
                            rep.sent += idx.len();
                            plan.pack(r, code, src, &idx);
                        } else {
                            rep.moved_local += idx.len();
                            incoming[slot as usize].push((s, idx));
                        }
                    }
                }
            }
        }
        (rep, plan, incoming)
    }

    /// The end of pass 2 of [`redistribute`](Self::redistribute): destination tiles in
    /// parallel append their arrivals (`incoming[slot]`, from [`route`](Self::route)).
    fn append_arrivals(&mut self, incoming: &[Arrivals], staging: &[T], pending: &T) {
        let (st, pend) = (staging, pending);
        let mut jobs: Vec<(&mut TileEntry<T>, &Arrivals)> =
            self.tiles.iter_mut().zip(incoming.iter()).collect();
        par_for_each_mut(&mut jobs, |(t, inc)| {
            for (s, idx) in inc.iter() {
                t.data.append_selected(st.get(*s).unwrap_or(pend), idx);
            }
        });
    }

    /// Sifts tile `data` (code `own`, box `tb` on level `own_level`) in one sweep: each
    /// particle that leaves is appended to `st` (its code to the returned list) and its
    /// hole filled with the last particle that stays (AMReX's CPU redistribute fills
    /// holes the same way), while the particle's cache line is at hand. Periodic
    /// positions are wrapped in place.
    ///
    /// On a NaN or infinite position the sweep stops: the bad particle and the ones not
    /// yet swept are in `data`, the ones that left in `st`, and putting `st` back
    /// loses nothing. The error names the bad particle's index in `data`.
    fn sift(
        &self,
        data: &mut T,
        st: &mut T,
        own: u32,
        own_level: usize,
        tb: IndexBox,
    ) -> (Vec<u32>, Option<BadPosition>) {
        let c = self.classifier(own, own_level, tb);
        let mut codes = Vec::new();
        // `data[..i]` stay, `data[i..n]` are not swept yet; every other particle of the
        // tile is in `st` or was copied into `data[..i]`.
        let (mut i, mut n) = (0, data.len());
        let mut bad = None;
        'sweep: while i < n {
            data.prefetch(i + PREFETCH_AHEAD);
            let code = match self.classify(&c, data, i) {
                Ok(code) => code,
                Err(b) => {
                    bad = Some(b);
                    break;
                }
            };
            if code == own {
                i += 1;
                continue;
            }
            st.push_from(data, i);
            codes.push(code);
            // Fill the hole at `i` from the end, staging the last particles that leave.
            loop {
                n -= 1;
                if n == i {
                    break 'sweep;
                }
                data.prefetch(n.saturating_sub(PREFETCH_AHEAD));
                match self.classify(&c, data, n) {
                    Ok(code) if code == own => {
                        data.copy_particle(n, i);
                        i += 1;
                        break;
                    }
                    Ok(code) => {
                        st.push_from(data, n);
                        codes.push(code);
                    }
                    Err((_, p)) => {
                        // The bad particle fills the hole; `data[..=n]` is whole again
                        // once `n` is dropped below.
                        data.copy_particle(n, i);
                        bad = Some((i, p));
                        break 'sweep;
                    }
                }
            }
        }
        data.resize(n);
        (codes, bad)
    }

    /// The destination codes of every particle of `data` (which all leave it: the
    /// holding tile, or a tile being placed), wrapping periodic positions in place.
    pub(crate) fn all_codes(&self, data: &mut T) -> core::result::Result<Vec<u32>, BadPosition> {
        let c = self.classifier(PENDING, 0, IndexBox::new(IntVect::ZERO, IntVect::ZERO));
        (0..data.len())
            .map(|i| {
                data.prefetch(i + PREFETCH_AHEAD);
                self.classify(&c, data, i)
            })
            .collect()
    }

    /// What [`classify`](Self::classify) needs for the particles of one tile (its code
    /// `own`, its tile box `tb` on level `own_level`), computed once per tile.
    fn classifier(&self, own: u32, own_level: usize, tb: IndexBox) -> Classifier {
        let g0 = &self.levels[0].geom;
        let per = g0.periodic_flags();
        // One level and a real tile: a valid particle inside the domain whose cell is in
        // the tile box stays. Its cell `floor(y) + small_end`, with `y = (x - plo) / dx`
        // as `cell_of` computes it, lies in `lo..=hi` exactly when `lo - small_end <= y <
        // hi - small_end + 1` (the bounds are integers): no floor and no conversion, so
        // the particles that stay, most of them, cost a few compares.
        let stay_box = (self.levels.len() == 1 && own != PENDING).then(|| {
            let map = MeshMap::new(g0);
            let lo = core::array::from_fn(|d| f64::from(tb.lo()[d] - map.dlo[d]));
            let hi = core::array::from_fn(|d| f64::from(tb.hi()[d] - map.dlo[d]) + 1.0);
            (map, lo, hi)
        });
        Classifier {
            own,
            plo: g0.prob_lo(),
            rhi: g0.roundoff_hi(),
            plen: core::array::from_fn(|d| g0.prob_length(d)),
            per,
            any_per: per.iter().any(|&b| b),
            stay_box,
            own_map: MeshMap::new(&self.levels[own_level.min(self.levels.len() - 1)].geom),
            tb,
        }
    }

    /// The destination code of particle `i` of `data` (`c.own` if it stays; `INVALID`
    /// for a negative id, `OUTSIDE` beyond a non-periodic side of the domain), after
    /// wrapping its position in place in periodic directions. A NaN or infinite
    /// coordinate is an error.
    #[inline(always)]
    fn classify(
        &self,
        c: &Classifier,
        data: &mut T,
        i: usize,
    ) -> core::result::Result<u32, BadPosition> {
        let mut p = data.pos(i);
        let valid = is_valid(data.idcpu(i));
        if let Some((map, lo, hi)) = &c.stay_box {
            // `&`, not `&&`: compares without a branch per direction.
            let mut stay = valid;
            for d in 0..SPACEDIM {
                let x = r2f(p[d]);
                let y = (x - map.plo[d]) * map.dxi[d];
                stay &= (x >= c.plo[d]) & (x < c.rhi[d]) & (y >= lo[d]) & (y < hi[d]);
            }
            if stay {
                return Ok(c.own);
            }
        }
        if !valid {
            return Ok(INVALID);
        }
        let stays = |p: [ParticleReal; SPACEDIM]| {
            c.stay_box.is_some() && cell_of(&c.own_map, p).is_some_and(|cell| c.tb.contains(cell))
        };
        // Inside the domain: finite, nothing to wrap. (With a stay box the test above
        // already said the particle leaves its tile; without one, `stays` is false.)
        if (0..SPACEDIM).all(|d| r2f(p[d]) >= c.plo[d] && r2f(p[d]) < c.rhi[d]) {
            return Ok(self.locate_code(p));
        }
        if !p.iter().all(|x| x.is_finite()) {
            return Err((i, p));
        }
        if c.any_per {
            let q: [ParticleReal; 3] = core::array::from_fn(|d| {
                if c.per[d] {
                    wrap(p[d], c.plo[d], c.plen[d], c.rhi[d])
                } else {
                    p[d]
                }
            });
            if q != p {
                p = q;
                data.set_pos(i, p);
            }
        }
        if !self.levels[0].geom.inside_physical_domain(p.map(r2f)) {
            return Ok(OUTSIDE);
        }
        Ok(if stays(p) { c.own } else { self.locate_code(p) })
    }

    /// Where the particle at `p` (already wrapped, inside the domain) belongs: the
    /// finest level whose grids hold it.
    #[inline]
    fn locate_code(&self, p: [ParticleReal; SPACEDIM]) -> u32 {
        let pf = p.map(r2f);
        for l in (0..self.levels.len()).rev() {
            let lev = &self.levels[l];
            if let Some(cell) = lev.geom.cell_index(pf)
                && let Some(g) = lev.locator.locate(cell)
            {
                return self.code_of(l, g, cell);
            }
        }
        OUTSIDE
    }
}

/// Folds `x` into `[lo, hi_roundoff)` with period `len` (AMReX `enforcePeriodic`, by
/// division instead of a loop, so far-away particles cost the same).
#[inline]
pub(crate) fn wrap(x: ParticleReal, lo: f64, len: f64, rhi: f64) -> ParticleReal {
    let xf = r2f(x);
    if xf >= lo && xf < rhi {
        return x;
    }
    let mut y = xf - Float::floor((xf - lo) / len) * len;
    if y < lo {
        y += len;
    }
    if y >= rhi {
        y -= len;
    }
    if y < lo {
        y = lo;
    }
    real_inside(y, lo, rhi)
}

/// Groups particle indices by destination code: `(code, indices)` in increasing code
/// order, indices increasing within a group. A tile's particles go to the tiles around
/// it, so there are few codes: they are counted and the indices placed in one pass;
/// beyond `FEW` codes the indices are sorted by code.
pub(crate) fn group_by_code(codes: &[u32]) -> Vec<(u32, Vec<u32>)> {
    const FEW: usize = 32;
    // Particle indices are u32 (as `append_selected` takes them): the casts below rely
    // on this.
    assert!(
        u32::try_from(codes.len()).is_ok(),
        "group_by_code: more than u32::MAX particles"
    );
    // (code, count), in order of first appearance.
    let mut seen: Vec<(u32, usize)> = Vec::new();
    let mut last = 0;
    for &c in codes {
        if seen.get(last).is_some_and(|x| x.0 == c) {
            seen[last].1 += 1;
            continue;
        }
        last = match seen.iter().position(|x| x.0 == c) {
            Some(s) => s,
            None if seen.len() < FEW => {
                seen.push((c, 0));
                seen.len() - 1
            }
            None => return group_by_sorting(codes),
        };
        seen[last].1 += 1;
    }
    seen.sort_unstable();
    let mut out: Vec<(u32, Vec<u32>)> = seen
        .iter()
        .map(|&(c, k)| (c, Vec::with_capacity(k)))
        .collect();
    for (i, &c) in codes.iter().enumerate() {
        let g = out.partition_point(|x| x.0 < c);
        #[expect(
            clippy::cast_possible_truncation,
            reason = "i < codes.len() <= u32::MAX (asserted above)"
        )]
        out[g].1.push(i as u32);
    }
    out
}

/// [`group_by_code`] for many codes, by sorting.
fn group_by_sorting(codes: &[u32]) -> Vec<(u32, Vec<u32>)> {
    debug_assert!(u32::try_from(codes.len()).is_ok());
    let mut keyed: Vec<u64> = codes
        .iter()
        .enumerate()
        .map(|(i, &c)| (u64::from(c) << 32) | i as u64)
        .collect();
    keyed.sort_unstable();
    let mut out: Vec<(u32, Vec<u32>)> = Vec::new();
    for k in keyed {
        #[expect(
            clippy::cast_possible_truncation,
            reason = "the key's low half, the index i, below 2^32 (group_by_code asserts)"
        )]
        let (c, i) = ((k >> 32) as u32, k as u32);
        match out.last_mut() {
            Some((lc, v)) if *lc == c => v.push(i),
            _ => out.push((c, vec![i])),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouping_by_code_equals_a_map_from_code_to_indices() {
        // From one code to many more than `group_by_code` counts (it then sorts).
        for distinct in [1u32, 2, 5, 31, 32, 33, 200] {
            let mut z = u64::from(distinct);
            let codes: Vec<u32> = (0..3000)
                .map(|_| {
                    z = z.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    // Spread-out codes, INVALID and OUTSIDE among them.
                    match (z >> 33) as u32 % distinct {
                        0 => INVALID,
                        1 => OUTSIDE,
                        k => k * 977,
                    }
                })
                .collect();
            let mut want: alloc::collections::BTreeMap<u32, Vec<u32>> = Default::default();
            for (i, &c) in codes.iter().enumerate() {
                want.entry(c).or_default().push(u32::try_from(i).unwrap());
            }
            let want: Vec<(u32, Vec<u32>)> = want.into_iter().collect();
            assert_eq!(group_by_code(&codes), want, "{distinct} codes");
            assert_eq!(group_by_sorting(&codes), want, "{distinct} codes, sorted");
        }
        assert!(group_by_code(&[]).is_empty());
    }
}
