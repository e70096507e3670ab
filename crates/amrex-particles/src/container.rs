//! [`ParticleContainer`]: particles tied to the grids of one or more levels.
use crate::error::{ErrorKind, ParticleContainerError, Result};
use crate::locator::GridLocator;
use crate::mesh::{MeshMap, cell_of};
use crate::tile::{PREFETCH_AHEAD, ParticleTile, is_valid, r2f};
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use amrex_aos::{ParticleReal, SPACEDIM, idcpu};
use amrex_geometry::Geometry;
use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IntVect};
use amrex_runtime::threads::{par_for_each_mut, par_map_mut};
use amrex_runtime::{Communicator, Fingerprint, ReduceOp, Tag};
use num_traits::Float;

/// Destination code of a particle to drop because its id is negative (invalid).
pub(crate) const INVALID: u32 = u32::MAX;
/// Destination code of a particle outside a non-periodic side of the domain.
pub(crate) const OUTSIDE: u32 = u32::MAX - 1;
/// Source code of the holding tile (nothing stays there).
const PENDING: u32 = u32::MAX - 2;
/// Entry of `ParticleContainer::local` for a tile on another rank.
const REMOTE: u32 = u32::MAX;

/// A tile's arrivals in `redistribute`: `(source, indices in the source)`.
type Arrivals = Vec<(usize, Vec<u32>)>;
/// The first particle of a tile with a non-finite position: its index and position.
type BadPosition = (usize, [ParticleReal; SPACEDIM]);

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

/// One level: its geometry, grids, owners and how its grids are cut into tiles.
#[derive(Debug, Clone)]
pub struct ParticleLevel {
    geom: Geometry,
    ba: BoxArray,
    dm: DistributionMapping,
    locator: GridLocator,
    /// Tiles per direction for each grid.
    ntiles: Vec<[i32; 3]>,
    /// First destination code of each grid (plus one past the last).
    code_start: Vec<u32>,
}

impl ParticleLevel {
    /// The level's geometry.
    #[must_use]
    pub fn geom(&self) -> &Geometry {
        &self.geom
    }
    /// The level's grids (AMReX's `ParticleBoxArray`).
    #[must_use]
    pub fn box_array(&self) -> &BoxArray {
        &self.ba
    }
    /// Their owners (AMReX's `ParticleDistributionMap`).
    #[must_use]
    pub fn distribution_map(&self) -> &DistributionMapping {
        &self.dm
    }
    /// Number of tiles of grid `g`.
    #[must_use]
    pub fn num_tiles(&self, g: usize) -> usize {
        let n = self.ntiles[g];
        (n[0] * n[1] * n[2]) as usize
    }
}

/// One local tile: where it is, and its particles.
#[derive(Debug, Clone)]
pub(crate) struct TileEntry<T> {
    pub(crate) level: usize,
    pub(crate) grid: usize,
    pub(crate) tile: usize,
    pub(crate) tilebox: IndexBox,
    pub(crate) code: u32,
    pub(crate) data: T,
}

impl<T> TileEntry<T> {
    fn view<'a>(&'a self, levels: &[ParticleLevel]) -> TileRef<'a, T> {
        TileRef {
            level: self.level,
            grid: self.grid,
            tile: self.tile,
            tilebox: self.tilebox,
            validbox: levels[self.level].ba.boxes()[self.grid],
            data: &self.data,
        }
    }

    fn view_mut<'a>(&'a mut self, levels: &[ParticleLevel]) -> TileMut<'a, T> {
        TileMut {
            level: self.level,
            grid: self.grid,
            tile: self.tile,
            tilebox: self.tilebox,
            validbox: levels[self.level].ba.boxes()[self.grid],
            data: &mut self.data,
        }
    }
}

/// A local tile seen by [`ParticleContainer::tiles`]: AMReX's `ParIter` position.
#[derive(Debug)]
pub struct TileRef<'a, T> {
    /// Level.
    pub level: usize,
    /// Grid index (AMReX `pti.index()`).
    pub grid: usize,
    /// Tile index within the grid (AMReX `pti.LocalTileIndex()`).
    pub tile: usize,
    /// The tile's cells (AMReX `pti.tilebox()`).
    pub tilebox: IndexBox,
    /// The grid's cells (AMReX `pti.validbox()`).
    pub validbox: IndexBox,
    /// The particles.
    pub data: &'a T,
}

/// A local tile seen by [`ParticleContainer::tiles_mut`] or
/// [`ParticleContainer::par_for_each_tile`].
#[derive(Debug)]
pub struct TileMut<'a, T> {
    /// Level.
    pub level: usize,
    /// Grid index.
    pub grid: usize,
    /// Tile index within the grid.
    pub tile: usize,
    /// The tile's cells.
    pub tilebox: IndexBox,
    /// The grid's cells.
    pub validbox: IndexBox,
    /// The particles (change their values, not their number: moved particles find
    /// their tile at the next [`ParticleContainer::redistribute`]).
    pub data: &'a mut T,
}

/// Particle data to add, one array per field, all of one length
/// ([`ParticleContainer::add_particles`]).
#[derive(Debug, Clone, Copy)]
pub struct ParticleArrays<'a> {
    /// Positions, per direction.
    pub pos: [&'a [ParticleReal]; SPACEDIM],
    /// One array per real component (after the position).
    pub reals: &'a [&'a [ParticleReal]],
    /// One array per int component.
    pub ints: &'a [&'a [i32]],
    /// Ids (positive); `None` gives fresh ids from this rank's counter.
    pub ids: Option<&'a [i64]>,
}

impl<'a> ParticleArrays<'a> {
    /// Positions only (every component zero, fresh ids).
    #[must_use]
    pub fn new(x: &'a [ParticleReal], y: &'a [ParticleReal], z: &'a [ParticleReal]) -> Self {
        Self {
            pos: [x, y, z],
            reals: &[],
            ints: &[],
            ids: None,
        }
    }
    /// With real components.
    #[must_use]
    pub fn with_reals(mut self, reals: &'a [&'a [ParticleReal]]) -> Self {
        self.reals = reals;
        self
    }
    /// With int components.
    #[must_use]
    pub fn with_ints(mut self, ints: &'a [&'a [i32]]) -> Self {
        self.ints = ints;
        self
    }
    /// With given ids.
    #[must_use]
    pub fn with_ids(mut self, ids: &'a [i64]) -> Self {
        self.ids = Some(ids);
        self
    }
}

/// What [`ParticleContainer::add_particles`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AddReport {
    /// Particles added.
    pub added: usize,
    /// Of those, placed at once in a local tile.
    pub placed: usize,
    /// Held until the next `redistribute` (owned by another rank, outside the domain or
    /// with an invalid id).
    pub pending: usize,
    /// Of the pending, outside a non-periodic side of the domain: `redistribute` will
    /// remove them and count them.
    pub outside_domain: usize,
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

/// Particles on the grids of a level hierarchy: AMReX's `ParticleContainer` (with
/// [`AosTile`](crate::AosTile) tiles) and `ParticleContainerPureSoA` (with
/// [`SoaTile`](crate::SoaTile)).
///
/// Each rank keeps the tiles of the grids its `DistributionMapping` gives it, one tile
/// per grid unless [`set_tile_size`](Self::set_tile_size) cuts grids into tiles (AMReX's
/// `do_tiling`). [`redistribute`](Self::redistribute) puts every particle in the tile
/// whose cells hold it (a point on a face belongs to the cell above), on the finest
/// level whose grids cover it.
//
// Invariants:
// 1. `tiles` holds exactly the tiles of the grids owned by this rank, on every level,
//    in (level, grid, tile) order; `local[code]` is the index in `tiles` of the tile
//    with destination `code`, or REMOTE.
// 2. `level_code[l]..level_code[l + 1]` are the codes of level `l`; `owner[code]` is
//    the rank owning that tile.
// 3. Every tile (and `pending`) has the components of `template`.
#[derive(Debug, Clone)]
pub struct ParticleContainer<T: ParticleTile> {
    levels: Vec<ParticleLevel>,
    tile_size: Option<IntVect>,
    tiles: Vec<TileEntry<T>>,
    pending: T,
    template: T,
    local: Vec<u32>,
    owner: Vec<u32>,
    level_code: Vec<u32>,
    comm: Communicator,
    next_id: i64,
    /// Per local tile, its leavers during `redistribute` (kept for their capacity).
    staging: Vec<T>,
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

/// `x` (in `[lo, rhi)`) as a `ParticleReal` in `[lo, rhi)`: rounding to single
/// precision (`amrex-aos/single-precision-particles`) may give `rhi` itself, outside the
/// domain, or a value below `lo`; the nearest value inside is taken then. Exact for
/// `f64`.
#[inline]
pub(crate) fn real_inside(x: f64, lo: f64, rhi: f64) -> ParticleReal {
    let mut r = x as ParticleReal;
    while r2f(r) >= rhi {
        r = r.next_down();
    }
    while r2f(r) < lo {
        r = r.next_up();
    }
    r
}

impl<T: ParticleTile + Clone> ParticleContainer<T> {
    /// A one-level container over `geom`, `ba`, `dm`; `template` is an empty tile with
    /// the run-time components every tile gets (e.g. `AosTile::<2, 1>::new(1, 0)`).
    ///
    /// # Panics
    /// If `dm` does not map `ba`'s boxes onto the ranks of its communicator (a map made
    /// with `DistributionMapping::with_ranks` for inspection); use
    /// [`new_hierarchy`](Self::new_hierarchy) for an error instead.
    #[must_use]
    #[track_caller]
    pub fn new(geom: Geometry, ba: &BoxArray, dm: &DistributionMapping, template: T) -> Self {
        Self::new_hierarchy(
            &[geom],
            core::slice::from_ref(ba),
            core::slice::from_ref(dm),
            template,
        )
        .unwrap_or_else(|e| panic!("ParticleContainer::new: {e}"))
    }

    /// A container over a hierarchy of levels (finest last).
    ///
    /// # Errors
    /// [`ErrorKind::BadHierarchy`] if there are no levels, the lists differ in length,
    /// levels cover different physical domains or periodicities, or their mappings are
    /// on different communicators.
    pub fn new_hierarchy(
        geoms: &[Geometry],
        bas: &[BoxArray],
        dms: &[DistributionMapping],
        template: T,
    ) -> Result<Self> {
        if geoms.is_empty() || geoms.len() != bas.len() || geoms.len() != dms.len() {
            return Err(ErrorKind::BadHierarchy(alloc::format!(
                "{} geometries, {} BoxArrays, {} DistributionMappings",
                geoms.len(),
                bas.len(),
                dms.len()
            ))
            .into());
        }
        let comm = dms[0].communicator().clone();
        for l in 1..geoms.len() {
            if geoms[l].real_box() != geoms[0].real_box()
                || geoms[l].periodic_flags() != geoms[0].periodic_flags()
            {
                return Err(ErrorKind::BadHierarchy(alloc::format!(
                    "level {l} covers {} (periodic {:?}), level 0 {} (periodic {:?})",
                    geoms[l].real_box(),
                    geoms[l].periodic_flags(),
                    geoms[0].real_box(),
                    geoms[0].periodic_flags()
                ))
                .into());
            }
            if *dms[l].communicator() != comm {
                return Err(ErrorKind::BadHierarchy(alloc::format!(
                    "level {l}'s DistributionMapping is on another communicator than level 0's"
                ))
                .into());
            }
        }
        for (l, (ba, dm)) in bas.iter().zip(dms).enumerate() {
            if dm.nranks() != comm.size() {
                return Err(ErrorKind::BadHierarchy(alloc::format!(
                    "level {l}'s DistributionMapping spans {} ranks, its communicator has {}",
                    dm.nranks(),
                    comm.size()
                ))
                .into());
            }
            if ba.len() != dm.len() {
                return Err(ErrorKind::BadHierarchy(alloc::format!(
                    "level {l}: {} boxes, a DistributionMapping of {}",
                    ba.len(),
                    dm.len()
                ))
                .into());
            }
        }
        let levels = geoms
            .iter()
            .zip(bas)
            .zip(dms)
            .map(|((g, ba), dm)| ParticleLevel {
                geom: *g,
                ba: ba.clone(),
                dm: dm.clone(),
                locator: GridLocator::new(ba),
                ntiles: Vec::new(),
                code_start: Vec::new(),
            })
            .collect();
        let mut pc = Self {
            levels,
            tile_size: None,
            tiles: Vec::new(),
            pending: template.new_like(),
            template,
            local: Vec::new(),
            owner: Vec::new(),
            level_code: Vec::new(),
            comm,
            next_id: 1,
            staging: Vec::new(),
        };
        pc.build_tiles();
        Ok(pc)
    }

    /// Cuts every grid into tiles of at most `tile_size` cells (AMReX's
    /// `do_tiling`/`tile_size`); `None` gives one tile per grid (AMReX's default for
    /// particles). Existing particles are held until the next
    /// [`redistribute`](Self::redistribute), which puts them in the new tiles.
    pub fn set_tile_size(&mut self, tile_size: Option<IntVect>) {
        let old = core::mem::take(&mut self.tiles);
        for t in &old {
            self.pending.append(&t.data);
        }
        self.tile_size = tile_size.map(|t| t.max(IntVect::splat(1)));
        self.build_tiles();
    }

    fn build_tiles(&mut self) {
        let me = self.comm.rank();
        self.tiles.clear();
        self.owner.clear();
        self.level_code.clear();
        let mut code = 0u32;
        for (l, lev) in self.levels.iter_mut().enumerate() {
            self.level_code.push(code);
            lev.ntiles.clear();
            lev.code_start.clear();
            for (g, b) in lev.ba.boxes().iter().enumerate() {
                let len = b.length();
                let nt: [i32; 3] = match self.tile_size {
                    None => [1; 3],
                    Some(ts) => core::array::from_fn(|d| (len[d] + ts[d] - 1) / ts[d]),
                };
                lev.ntiles.push(nt);
                lev.code_start.push(code);
                let rank = lev.dm.rank_of(g);
                let tbs: Vec<IndexBox> = match self.tile_size {
                    None => vec![*b],
                    Some(ts) => b.tiles(ts).collect(),
                };
                for (t, tb) in tbs.into_iter().enumerate() {
                    self.owner.push(rank as u32);
                    if rank == me {
                        self.tiles.push(TileEntry {
                            level: l,
                            grid: g,
                            tile: t,
                            tilebox: tb,
                            code,
                            data: self.template.new_like(),
                        });
                    }
                    code += 1;
                }
            }
            lev.code_start.push(code);
        }
        self.level_code.push(code);
        self.local = vec![REMOTE; code as usize];
        for (i, t) in self.tiles.iter().enumerate() {
            self.local[t.code as usize] = i as u32;
        }
    }

    /// Number of levels.
    #[must_use]
    pub fn num_levels(&self) -> usize {
        self.levels.len()
    }

    /// The finest level's index (AMReX `finestLevel()`).
    #[must_use]
    pub fn finest_level(&self) -> usize {
        self.levels.len() - 1
    }

    /// Level `lev`.
    ///
    /// # Errors
    /// [`ErrorKind::NoSuchLevel`].
    pub fn level(&self, lev: usize) -> Result<&ParticleLevel> {
        self.levels.get(lev).ok_or_else(|| {
            ErrorKind::NoSuchLevel {
                level: lev,
                levels: self.levels.len(),
            }
            .into()
        })
    }

    /// The communicator of the levels' mappings.
    #[must_use]
    pub fn communicator(&self) -> &Communicator {
        &self.comm
    }

    /// An empty tile with this container's components.
    #[must_use]
    pub fn make_tile(&self) -> T {
        self.template.new_like()
    }

    /// Real components after the position.
    #[must_use]
    pub fn num_real_comps(&self) -> usize {
        self.template.num_reals()
    }

    /// Int components.
    #[must_use]
    pub fn num_int_comps(&self) -> usize {
        self.template.num_ints()
    }

    /// The next id this rank gives (AMReX `ParticleType::NextID()`).
    #[must_use]
    pub fn next_id(&self) -> i64 {
        self.next_id
    }

    /// The destination code of the tile holding `cell` of grid `g` of level `l`.
    #[inline]
    fn code_of(&self, l: usize, g: usize, cell: IntVect) -> u32 {
        let lev = &self.levels[l];
        let base = lev.code_start[g];
        match self.tile_size {
            None => base,
            Some(ts) => {
                let lo = lev.ba.boxes()[g].lo();
                let nt = lev.ntiles[g];
                let t: [i32; 3] = core::array::from_fn(|d| (cell[d] - lo[d]) / ts[d]);
                base + (t[0] + nt[0] * (t[1] + nt[1] * t[2])) as u32
            }
        }
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

    /// The destination codes of every particle of `data` (which all leave it: the
    /// holding tile, or a tile being placed), wrapping periodic positions in place.
    fn all_codes(&self, data: &mut T) -> core::result::Result<Vec<u32>, BadPosition> {
        let c = self.classifier(PENDING, 0, IndexBox::new(IntVect::ZERO, IntVect::ZERO));
        (0..data.len())
            .map(|i| {
                data.prefetch(i + PREFETCH_AHEAD);
                self.classify(&c, data, i)
            })
            .collect()
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

    /// Checks positions and lengths of `a`, and builds a tile of its particles.
    fn tile_from_arrays(&mut self, a: &ParticleArrays<'_>) -> Result<T> {
        let n = a.pos[0].len();
        let names = ["y positions", "z positions"];
        for d in 1..SPACEDIM {
            check_len(|| String::from(names[d - 1]), n, a.pos[d].len())?;
        }
        check_count("real", self.template.num_reals(), a.reals.len())?;
        check_count("int", self.template.num_ints(), a.ints.len())?;
        for (c, r) in a.reals.iter().enumerate() {
            check_len(|| alloc::format!("real component {c}"), n, r.len())?;
        }
        for (c, r) in a.ints.iter().enumerate() {
            check_len(|| alloc::format!("int component {c}"), n, r.len())?;
        }
        if let Some(ids) = a.ids {
            check_len(|| String::from("ids"), n, ids.len())?;
            if let Some(&id) = ids
                .iter()
                .find(|id| id.unsigned_abs() > idcpu::MAX_ID as u64)
            {
                return Err(ErrorKind::BadId { id }.into());
            }
        } else if self.next_id + n as i64 - 1 > idcpu::MAX_ID {
            return Err(ErrorKind::BadId {
                id: self.next_id + n as i64 - 1,
            }
            .into());
        }
        for i in 0..n {
            let p = [a.pos[0][i], a.pos[1][i], a.pos[2][i]];
            if !p.iter().all(|x| x.is_finite()) {
                return Err(ErrorKind::NonFinitePosition {
                    index: i,
                    position: p,
                }
                .into());
            }
        }
        let cpu = self.comm.rank() as i32;
        let mut t = self.template.new_like();
        t.resize(n);
        for i in 0..n {
            t.set_pos(i, [a.pos[0][i], a.pos[1][i], a.pos[2][i]]);
            let w = match a.ids {
                Some(ids) => idcpu::make_id_cpu(ids[i], cpu),
                None => idcpu::make_id_cpu(self.next_id + i as i64, cpu),
            };
            t.set_idcpu(i, w);
            for (c, r) in a.reals.iter().enumerate() {
                t.set_real(i, c, r[i]);
            }
            for (c, r) in a.ints.iter().enumerate() {
                t.set_int(i, c, r[i]);
            }
        }
        if a.ids.is_none() {
            self.next_id += n as i64;
        }
        Ok(t)
    }

    /// Adds particles (AMReX `AddParticlesAtLevel`, pyAMReX `add_particles`), in one
    /// call: each goes straight into its tile when this rank owns it, or is held until
    /// the next [`redistribute`](Self::redistribute) (owned elsewhere, outside the
    /// domain, or with a negative id). Not collective. Fresh ids are `next_id()..`
    /// with this rank as cpu, so they are unique across ranks.
    ///
    /// # Errors
    /// Checked before anything is added, so an error adds nothing:
    /// [`ErrorKind::LengthMismatch`], [`ErrorKind::ComponentCount`],
    /// [`ErrorKind::NonFinitePosition`] (naming the first such particle),
    /// [`ErrorKind::BadId`].
    pub fn add_particles(&mut self, a: &ParticleArrays<'_>) -> Result<AddReport> {
        let mut t = self.tile_from_arrays(a)?;
        Ok(self.place(&mut t))
    }

    /// [`add_particles`](Self::add_particles) from ndarray views (feature `ndarray`):
    /// `pos` of shape `(n, 3)`, `reals` of shape `(n, num_real_comps())` and `ints` of
    /// shape `(n, num_int_comps())`, any strides (columns are copied out first).
    ///
    /// # Errors
    /// [`ErrorKind::LengthMismatch`] for another `n` or a position array without 3
    /// columns, [`ErrorKind::ComponentCount`] for another number of columns; then those
    /// of [`add_particles`](Self::add_particles).
    #[cfg(feature = "ndarray")]
    pub fn add_particles_ndarray(
        &mut self,
        pos: ndarray::ArrayView2<'_, ParticleReal>,
        reals: ndarray::ArrayView2<'_, ParticleReal>,
        ints: ndarray::ArrayView2<'_, i32>,
    ) -> Result<AddReport> {
        let n = pos.nrows();
        check_len(|| String::from("position columns"), SPACEDIM, pos.ncols())?;
        check_len(|| String::from("reals"), n, reals.nrows())?;
        check_len(|| String::from("ints"), n, ints.nrows())?;
        check_count("real", self.template.num_reals(), reals.ncols())?;
        check_count("int", self.template.num_ints(), ints.ncols())?;
        let col = |c: ndarray::ArrayView1<'_, ParticleReal>| c.iter().copied().collect::<Vec<_>>();
        let p: Vec<Vec<ParticleReal>> = pos.columns().into_iter().map(col).collect();
        let r: Vec<Vec<ParticleReal>> = reals.columns().into_iter().map(col).collect();
        let i: Vec<Vec<i32>> = ints
            .columns()
            .into_iter()
            .map(|c| c.iter().copied().collect())
            .collect();
        let rs: Vec<&[ParticleReal]> = r.iter().map(Vec::as_slice).collect();
        let is: Vec<&[i32]> = i.iter().map(Vec::as_slice).collect();
        self.add_particles(
            &ParticleArrays::new(&p[0], &p[1], &p[2])
                .with_reals(&rs)
                .with_ints(&is),
        )
    }

    /// Adds the particles of a tile (with this container's components), as
    /// [`add_particles`](Self::add_particles) but keeping their id/cpu words.
    ///
    /// # Errors
    /// [`ErrorKind::ComponentCount`] for a tile with other components,
    /// [`ErrorKind::NonFinitePosition`]; nothing is added then.
    pub fn add_tile(&mut self, mut t: T) -> Result<AddReport> {
        check_count("real", self.template.num_reals(), t.num_reals())?;
        check_count("int", self.template.num_ints(), t.num_ints())?;
        for i in 0..t.len() {
            let p = t.pos(i);
            if !p.iter().all(|x| x.is_finite()) {
                return Err(ErrorKind::NonFinitePosition {
                    index: i,
                    position: p,
                }
                .into());
            }
        }
        Ok(self.place(&mut t))
    }

    /// Puts the (finite) particles of `t` in their local tiles or in `pending`.
    fn place(&mut self, t: &mut T) -> AddReport {
        let codes = self
            .all_codes(t)
            .unwrap_or_else(|_| unreachable!("positions were checked"));
        let mut groups = group_by_code(&codes);
        let mut rep = AddReport {
            added: t.len(),
            ..AddReport::default()
        };
        let mut pend = Vec::new();
        for (code, idx) in groups.drain(..) {
            let slot = if code < OUTSIDE {
                self.local[code as usize]
            } else {
                REMOTE
            };
            if slot == REMOTE {
                if code == OUTSIDE {
                    rep.outside_domain += idx.len();
                }
                pend.extend_from_slice(&idx);
            } else {
                rep.placed += idx.len();
                self.tiles[slot as usize].data.append_selected(t, &idx);
            }
        }
        pend.sort_unstable();
        rep.pending = pend.len();
        self.pending.append_selected(t, &pend);
        rep
    }

    /// `n` particles uniformly distributed over the domain (AMReX `InitRandom`), the
    /// same set on any number of ranks: particle `i` (id `i + 1`, cpu 0) has a position
    /// drawn from a counter-based generator keyed by `seed` and `i`, and every real and
    /// int component set to `reals`/`ints`. Each rank draws a share, then the particles
    /// are redistributed. **Collective**.
    ///
    /// # Errors
    /// [`ErrorKind::ComponentCount`] when `reals`/`ints` do not have one value per
    /// component; those of [`redistribute`](Self::redistribute).
    pub fn init_random(
        &mut self,
        n: u64,
        seed: u64,
        reals: &[ParticleReal],
        ints: &[i32],
    ) -> Result<RedistributeReport> {
        let mut fp = Fingerprint::new();
        fp.word(n).word(seed).usize(reals.len()).usize(ints.len());
        for &x in reals {
            fp.f64(r2f(x));
        }
        for &i in ints {
            fp.word(u64::from(i.cast_unsigned()));
        }
        self.agree("init_random", &fp)?;
        self.check_comp_values(reals, ints)?;
        let (r, size) = (self.comm.rank() as u64, self.comm.size() as u64);
        let (b, e) = (n * r / size, n * (r + 1) / size);
        let g = self.levels[0].geom;
        let (plo, phi) = (g.prob_lo(), g.prob_hi());
        let mut t = self.template.new_like();
        t.resize((e - b) as usize);
        for (k, i) in (b..e).enumerate() {
            let p: [ParticleReal; 3] = core::array::from_fn(|d| {
                let u = uniform(seed, i * 3 + d as u64);
                let mut x = plo[d] + u * (phi[d] - plo[d]);
                if x >= g.roundoff_hi()[d] {
                    x = plo[d];
                }
                real_inside(x, plo[d], g.roundoff_hi()[d])
            });
            t.set_pos(k, p);
            t.set_idcpu(k, idcpu::make_id_cpu(i as i64 + 1, 0));
            set_comp_values(&mut t, k, reals, ints);
        }
        self.next_id = self.next_id.max(n as i64 + 1);
        let _ = self.place(&mut t);
        self.redistribute()
    }

    /// One particle in every cell of level 0's grids, at `offset` (a fraction of the
    /// cell, per direction) from the cell's low corner (AMReX `InitOnePerCell`). The
    /// particle of cell `c` has id `1 +` the cell's Fortran-order index in the domain
    /// and cpu 0, so the set is the same on any number of ranks. Not collective.
    ///
    /// # Errors
    /// [`ErrorKind::ComponentCount`] as for [`init_random`](Self::init_random).
    pub fn init_one_per_cell(
        &mut self,
        offset: [ParticleReal; SPACEDIM],
        reals: &[ParticleReal],
        ints: &[i32],
    ) -> Result<AddReport> {
        self.check_comp_values(reals, ints)?;
        let g = self.levels[0].geom;
        let dom = g.domain();
        let dx = g.cell_size();
        let mut rep = AddReport::default();
        let slots: Vec<usize> = (0..self.tiles.len())
            .filter(|&s| self.tiles[s].level == 0)
            .collect();
        for s in slots {
            let tb = self.tiles[s].tilebox;
            let mut t = self.template.new_like();
            t.resize(tb.num_pts() as usize);
            for (k, c) in tb.iter().enumerate() {
                let p: [ParticleReal; 3] = core::array::from_fn(|d| {
                    (g.lo_edge(c[d], d) + r2f(offset[d]) * dx[d]) as ParticleReal
                });
                t.set_pos(k, p);
                t.set_idcpu(k, idcpu::make_id_cpu(dom.index(c) as i64 + 1, 0));
                set_comp_values(&mut t, k, reals, ints);
            }
            let r = self.place(&mut t);
            rep.added += r.added;
            rep.placed += r.placed;
            rep.pending += r.pending;
            rep.outside_domain += r.outside_domain;
        }
        self.next_id = self.next_id.max(dom.num_pts() as i64 + 1);
        Ok(rep)
    }

    fn check_comp_values(&self, reals: &[ParticleReal], ints: &[i32]) -> Result<()> {
        check_count("real", self.template.num_reals(), reals.len())?;
        check_count("int", self.template.num_ints(), ints.len())
    }

    /// Particles on this rank (all levels, held ones included), valid or not.
    #[must_use]
    pub fn num_local_particles(&self) -> usize {
        self.tiles.iter().map(|t| t.data.len()).sum::<usize>() + self.pending.len()
    }

    /// Particles on all ranks (AMReX `TotalNumberOfParticles(false, false)`).
    /// **Collective**.
    ///
    /// # Errors
    /// [`ErrorKind::Comm`] on every rank when the ranks are not all counting the
    /// particles of the same container layout.
    pub fn num_particles(&self) -> Result<u64> {
        let n = self.num_local_particles() as u64;
        Ok(self
            .agree("num_particles", &Fingerprint::new())?
            .all_reduce_u64(n, ReduceOp::Sum))
    }

    /// The hash of the container's layout that its collective operations agree on: each
    /// level's grids and map, and the particle type's components.
    pub(crate) fn fingerprint(&self) -> Fingerprint {
        let mut fp = Fingerprint::new();
        fp.usize(self.levels.len());
        for l in &self.levels {
            fp.word(l.ba.fingerprint()).word(l.dm.fingerprint());
        }
        fp.usize(self.template.num_reals())
            .usize(self.template.num_ints())
            .usize(self.template.packed_bytes());
        fp
    }

    /// The agreement of collective operation `op` of this container, with `args` (the
    /// operation's arguments) and the container's layout.
    pub(crate) fn agree(
        &self,
        op: &'static str,
        args: &Fingerprint,
    ) -> Result<amrex_runtime::Agreed<'_>> {
        let mut fp = self.fingerprint();
        fp.word(args.value());
        Ok(self.comm.agree(op, &fp).map_err(ErrorKind::Comm)?)
    }

    /// Particles at level `lev` (pyAMReX `number_of_particles_at_level(lev, only_valid,
    /// only_local)`): counting only valid ones if `only_valid`, on this rank only if
    /// `only_local` (else **collective**). Held particles are not at any level.
    ///
    /// # Errors
    /// [`ErrorKind::Comm`] when not `only_local` and the ranks are not all counting the
    /// same level of the same container layout.
    pub fn number_of_particles_at_level(
        &self,
        lev: usize,
        only_valid: bool,
        only_local: bool,
    ) -> Result<u64> {
        let n: u64 = self
            .tiles
            .iter()
            .filter(|t| t.level == lev)
            .map(|t| {
                if only_valid {
                    (0..t.data.len())
                        .filter(|&i| is_valid(t.data.idcpu(i)))
                        .count() as u64
                } else {
                    t.data.len() as u64
                }
            })
            .sum();
        if only_local {
            Ok(n)
        } else {
            let mut fp = Fingerprint::new();
            fp.usize(lev).word(u64::from(only_valid));
            Ok(self
                .agree("number_of_particles_at_level", &fp)?
                .all_reduce_u64(n, ReduceOp::Sum))
        }
    }

    /// Particles held until the next `redistribute` on this rank.
    #[must_use]
    pub fn num_pending(&self) -> usize {
        self.pending.len()
    }

    /// The local tiles of level `lev`, in (grid, tile) order (AMReX `ParIter`).
    pub fn tiles(&self, lev: usize) -> impl Iterator<Item = TileRef<'_, T>> + '_ {
        let levels = &self.levels;
        self.tiles
            .iter()
            .filter(move |t| t.level == lev)
            .map(move |t| t.view(levels))
    }

    /// The local tiles of level `lev`, mutable.
    pub fn tiles_mut(&mut self, lev: usize) -> impl Iterator<Item = TileMut<'_, T>> + '_ {
        let levels = &self.levels;
        self.tiles
            .iter_mut()
            .filter(move |t| t.level == lev)
            .map(move |t| t.view_mut(levels))
    }

    /// Runs `f` on every local tile of level `lev`, in parallel (rayon, with `std`).
    pub fn par_for_each_tile(&mut self, lev: usize, f: impl Fn(TileMut<'_, T>) + Sync + Send) {
        let levels = &self.levels;
        par_for_each_mut(&mut self.tiles, |t| {
            if t.level == lev {
                f(t.view_mut(levels));
            }
        });
    }

    /// The tile `(grid, tile)` of level `lev` (AMReX `ParticlesAt`).
    ///
    /// # Errors
    /// [`ErrorKind::NoSuchLevel`], or [`ErrorKind::NoSuchTile`] if it does not exist or
    /// is on another rank.
    pub fn tile(&self, lev: usize, grid: usize, tile: usize) -> Result<&T> {
        let s = self.slot(lev, grid, tile)?;
        Ok(&self.tiles[s].data)
    }

    /// The tile `(grid, tile)` of level `lev`, mutable.
    ///
    /// # Errors
    /// As [`tile`](Self::tile).
    pub fn tile_mut(&mut self, lev: usize, grid: usize, tile: usize) -> Result<&mut T> {
        let s = self.slot(lev, grid, tile)?;
        Ok(&mut self.tiles[s].data)
    }

    fn slot(&self, lev: usize, grid: usize, tile: usize) -> Result<usize> {
        let l = self.level(lev)?;
        let none = || -> ParticleContainerError {
            ErrorKind::NoSuchTile {
                level: lev,
                grid,
                tile,
            }
            .into()
        };
        if grid >= l.ba.len() || tile >= l.num_tiles(grid) {
            return Err(none());
        }
        let code = l.code_start[grid] as usize + tile;
        match self.local[code] {
            REMOTE => Err(none()),
            s => Ok(s as usize),
        }
    }

    /// Raises this rank's next id to at least `v`.
    #[cfg(feature = "std")]
    pub(crate) fn raise_next_id(&mut self, v: i64) {
        self.next_id = self.next_id.max(v);
    }

    pub(crate) fn entries(&self) -> &[TileEntry<T>] {
        &self.tiles
    }

    pub(crate) fn entries_mut(&mut self) -> (&[ParticleLevel], &mut [TileEntry<T>]) {
        (&self.levels, &mut self.tiles)
    }

    /// Puts every particle in the tile whose cells hold it (AMReX `Redistribute`):
    /// positions in periodic directions are wrapped into the domain; particles with a
    /// negative id are removed; particles outside a non-periodic side of the domain are
    /// removed and counted; the rest move between tiles and ranks. Each particle's grid
    /// is found by binning ([`GridLocator`]), on the finest level whose grids hold it.
    /// The order of the particles in a tile changes (a leaver's place is taken by the
    /// tile's last particle; arrivals go at the end).
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
    /// NaN position); [`ErrorKind::Comm`] if a message fails, or if the ranks are not
    /// all in `redistribute` (nothing moves then either).
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
        let this = &*self;
        let mut jobs: Vec<(&mut TileEntry<T>, &mut T)> =
            tiles.iter_mut().zip(staging.iter_mut()).collect();
        let sifted: Vec<(Vec<u32>, Option<BadPosition>)> = par_map_mut(&mut jobs, |(t, st)| {
            st.resize(0);
            this.sift(&mut t.data, st, t.code, t.level, t.tilebox)
        });
        drop(jobs);
        let pcodes = this.all_codes(&mut pending);
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
        let agreed = comm
            .agree("redistribute", &self.fingerprint())
            .map_err(|e| ErrorKind::Comm(e).into())
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

        // Route (one thread; groups, not particles): removals are counted, movers for
        // other ranks packed, movers for local tiles listed by destination. Source `s`
        // is staging tile `s`, or the holding tile when `s == ntiles`.
        let mut rep = RedistributeReport {
            kept: self.tiles.iter().map(|t| t.data.len()).sum(),
            ..RedistributeReport::default()
        };
        let nranks = self.comm.size();
        let me = self.comm.rank();
        let mut send_codes: Vec<Vec<u32>> = vec![Vec::new(); nranks];
        let mut send_recs: Vec<Vec<u8>> = vec![Vec::new(); nranks];
        let mut incoming: Vec<Arrivals> = vec![Vec::new(); ntiles];
        let sources = sifted.iter().map(|s| &s.0).chain(core::iter::once(&pcodes));
        for (s, codes) in sources.enumerate() {
            let src = staging.get(s).unwrap_or(&pending);
            for (code, idx) in group_by_code(codes) {
                match code {
                    INVALID => rep.removed_invalid += idx.len(),
                    OUTSIDE => rep.removed_outside += idx.len(),
                    _ => {
                        let slot = self.local[code as usize];
                        if slot == REMOTE {
                            let r = self.owner[code as usize] as usize;
                            rep.sent += idx.len();
                            send_codes[r].extend(core::iter::repeat_n(code, idx.len()));
                            src.pack_selected(&idx, &mut send_recs[r]);
                        } else {
                            rep.moved_local += idx.len();
                            incoming[slot as usize].push((s, idx));
                        }
                    }
                }
            }
        }
        // Destination tiles in parallel append their arrivals.
        let (st, pend) = (&staging, &pending);
        let mut jobs: Vec<(&mut TileEntry<T>, &Arrivals)> =
            self.tiles.iter_mut().zip(incoming.iter()).collect();
        par_for_each_mut(&mut jobs, |(t, inc)| {
            for (s, idx) in inc.iter() {
                t.data.append_selected(st.get(*s).unwrap_or(pend), idx);
            }
        });
        drop(jobs);
        self.staging = staging;
        drop(pending);

        // Pass 3: between ranks, counts first, then one message per rank that gets any.
        if nranks > 1 {
            let others: Vec<usize> = (0..nranks).filter(|&r| r != me).collect();
            let sends = others
                .iter()
                .map(|&r| (r, (send_codes[r].len() as u64).to_le_bytes().to_vec()))
                .collect();
            let recvs = others.iter().map(|&r| (r, 8)).collect();
            let counts = comm
                .start_exchange(Tag::PARTICLE_COUNTS, sends, recvs)?
                .wait()?;
            let pb = self.template.packed_bytes();
            let mut sends = Vec::new();
            for &r in &others {
                if !send_codes[r].is_empty() {
                    let mut msg = Vec::with_capacity(send_codes[r].len() * 4 + send_recs[r].len());
                    for c in &send_codes[r] {
                        msg.extend_from_slice(&c.to_le_bytes());
                    }
                    msg.extend_from_slice(&send_recs[r]);
                    rep.bytes_sent += msg.len();
                    sends.push((r, msg));
                }
                send_recs[r] = Vec::new();
            }
            let mut recvs = Vec::new();
            for (r, b) in counts {
                let n = u64::from_le_bytes(b.as_slice().try_into().unwrap_or([0; 8])) as usize;
                if n > 0 {
                    recvs.push((r, n * (4 + pb)));
                }
            }
            let got = comm
                .start_exchange(Tag::PARTICLE_DATA, sends, recvs)?
                .wait()?;
            for (_, msg) in got {
                let n = msg.len() / (4 + pb);
                let codes: Vec<u32> = msg[..4 * n]
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
                let mut tmp = self.template.new_like();
                tmp.unpack_append(&msg[4 * n..]);
                rep.received += n;
                for (code, idx) in group_by_code(&codes) {
                    let slot = self.local.get(code as usize).copied().unwrap_or(REMOTE);
                    if slot == REMOTE {
                        // A sender with another layout: keep the particles, not lose them.
                        self.pending.append_selected(&tmp, &idx);
                    } else {
                        self.tiles[slot as usize].data.append_selected(&tmp, &idx);
                    }
                }
            }
        }
        rep.removed_outside_global =
            agreed.all_reduce_u64(rep.removed_outside as u64, ReduceOp::Sum);
        Ok(rep)
    }
}

/// `ComponentCount` unless `found == expected`.
pub(crate) fn check_count(what: &'static str, expected: usize, found: usize) -> Result<()> {
    if found == expected {
        Ok(())
    } else {
        Err(ErrorKind::ComponentCount {
            what,
            expected,
            found,
        }
        .into())
    }
}

/// `LengthMismatch` (naming the array `what()`) unless `found == expected`.
fn check_len(what: impl FnOnce() -> String, expected: usize, found: usize) -> Result<()> {
    if found == expected {
        Ok(())
    } else {
        Err(ErrorKind::LengthMismatch {
            what: what(),
            expected,
            found,
        }
        .into())
    }
}

/// Groups particle indices by destination code: `(code, indices)` in increasing code
/// order, indices increasing within a group. A tile's particles go to the tiles around
/// it, so there are few codes: they are counted and the indices placed in one pass;
/// beyond `FEW` codes the indices are sorted by code.
pub(crate) fn group_by_code(codes: &[u32]) -> Vec<(u32, Vec<u32>)> {
    const FEW: usize = 32;
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
        out[g].1.push(i as u32);
    }
    out
}

/// [`group_by_code`] for many codes, by sorting.
fn group_by_sorting(codes: &[u32]) -> Vec<(u32, Vec<u32>)> {
    let mut keyed: Vec<u64> = codes
        .iter()
        .enumerate()
        .map(|(i, &c)| (u64::from(c) << 32) | i as u64)
        .collect();
    keyed.sort_unstable();
    let mut out: Vec<(u32, Vec<u32>)> = Vec::new();
    for k in keyed {
        let (c, i) = ((k >> 32) as u32, k as u32);
        match out.last_mut() {
            Some((lc, v)) if *lc == c => v.push(i),
            _ => out.push((c, vec![i])),
        }
    }
    out
}

fn set_comp_values<T: ParticleTile>(t: &mut T, k: usize, reals: &[ParticleReal], ints: &[i32]) {
    for (c, &v) in reals.iter().enumerate() {
        t.set_real(k, c, v);
    }
    for (c, &v) in ints.iter().enumerate() {
        t.set_int(k, c, v);
    }
}

/// SplitMix64 of `seed` and `i`: a counter-based generator, so particle `i` gets the
/// same numbers whichever rank draws it.
fn splitmix(seed: u64, i: u64) -> u64 {
    let mut z = seed
        .wrapping_add(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(i.wrapping_mul(0xD1B5_4A32_D192_ED03));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniform number in `[0, 1)` with 53 random bits.
fn uniform(seed: u64, i: u64) -> f64 {
    (splitmix(seed, i) >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
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
                want.entry(c).or_default().push(i as u32);
            }
            let want: Vec<(u32, Vec<u32>)> = want.into_iter().collect();
            assert_eq!(group_by_code(&codes), want, "{distinct} codes");
            assert_eq!(group_by_sorting(&codes), want, "{distinct} codes, sorted");
        }
        assert!(group_by_code(&[]).is_empty());
    }
}
