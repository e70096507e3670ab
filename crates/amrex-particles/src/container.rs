//! [`ParticleContainer`]: particles tied to the grids of one or more levels (AMReX's
//! `AMReX_ParticleContainer.H`): the levels and their tiles, adding particles, counts,
//! and access to the tiles. Moving particles to their tiles is in
//! [`redistribute`](crate::redistribute), between ranks in
//! [`communication`](crate::communication).
use crate::error::{ErrorKind, ParticleContainerError, Result};
use crate::locator::GridLocator;
use crate::redistribute::{OUTSIDE, RedistributeReport, group_by_code};
use crate::tile::{ParticleTile, f2r, is_valid, r2f};
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use amrex_aos::{ParticleReal, SPACEDIM, idcpu};
use amrex_geometry::Geometry;
use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IntVect, hash_geometry};
use amrex_runtime::threads::par_for_each_mut;
use amrex_runtime::{Agreed, Communicator, Fingerprint, ReduceOp};

/// Entry of `ParticleContainer::local` for a tile on another rank.
pub(crate) const REMOTE: u32 = u32::MAX;

/// One level: its geometry, grids, owners and how its grids are cut into tiles.
#[derive(Debug, Clone)]
pub struct ParticleLevel {
    pub(crate) geom: Geometry,
    ba: BoxArray,
    dm: DistributionMapping,
    pub(crate) locator: GridLocator,
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
        usize::try_from(n[0] * n[1] * n[2]).expect("at least one tile per grid")
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
    /// The tile as [`ParticleContainer::tiles`] shows it.
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

    /// The tile as [`ParticleContainer::tiles_mut`] shows it.
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
// The fields that `redistribute.rs` and `communication.rs` work on are `pub(crate)`:
// they move particles between the tiles, `pending` and `staging`, and read the layout;
// only this file changes the layout (which tiles there are, `local`, `owner`), in
// `build_tiles`.
#[derive(Debug, Clone)]
pub struct ParticleContainer<T: ParticleTile> {
    pub(crate) levels: Vec<ParticleLevel>,
    tile_size: Option<IntVect>,
    pub(crate) tiles: Vec<TileEntry<T>>,
    pub(crate) pending: T,
    pub(crate) template: T,
    pub(crate) local: Vec<u32>,
    pub(crate) owner: Vec<u32>,
    level_code: Vec<u32>,
    pub(crate) comm: Communicator,
    next_id: i64,
    /// Per local tile, its leavers during `redistribute` (kept for their capacity).
    pub(crate) staging: Vec<T>,
}

/// `x` (in `[lo, rhi)`) as a `ParticleReal` in `[lo, rhi)`: rounding to single
/// precision (`amrex-aos/single-precision-particles`) may give `rhi` itself, outside the
/// domain, or a value below `lo`; the nearest value inside is taken then. Exact for
/// `f64`.
#[inline]
pub(crate) fn real_inside(x: f64, lo: f64, rhi: f64) -> ParticleReal {
    let mut r = f2r(x);
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

    /// Makes the tiles of every level, empty, and numbers them: the destination codes,
    /// `local` and `owner` (invariants 1 and 2).
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
                let (rank, owner) = (lev.dm.rank_of(g), lev.dm.pmap()[g]);
                let tbs: Vec<IndexBox> = match self.tile_size {
                    None => vec![*b],
                    Some(ts) => b.tiles(ts).collect(),
                };
                for (t, tb) in tbs.into_iter().enumerate() {
                    self.owner.push(owner);
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
            // Fewer local tiles than codes, which are u32.
            self.local[t.code as usize] = u32::try_from(i).expect("a tile index below a code");
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

    /// The destination code of the tile holding `cell` of grid `g` of level `l` (the
    /// numbering of [`build_tiles`](Self::build_tiles)).
    #[inline]
    pub(crate) fn code_of(&self, l: usize, g: usize, cell: IntVect) -> u32 {
        let lev = &self.levels[l];
        let base = lev.code_start[g];
        match self.tile_size {
            None => base,
            Some(ts) => {
                let lo = lev.ba.boxes()[g].lo();
                let nt = lev.ntiles[g];
                let t: [i32; 3] = core::array::from_fn(|d| (cell[d] - lo[d]) / ts[d]);
                // Not negative: `cell` lies in grid `g`, so `0 <= t < nt`.
                base + (t[0] + nt[0] * (t[1] + nt[1] * t[2])).cast_unsigned()
            }
        }
    }

    /// Checks positions and lengths of `a`, and builds a tile of its particles.
    fn tile_from_arrays(&mut self, a: &ParticleArrays<'_>) -> Result<T> {
        let n = a.pos[0].len();
        // A slice holds at most isize::MAX elements, so its length fits i64.
        let count = i64::try_from(n).expect("a slice length fits i64");
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
        } else if self.next_id + count - 1 > idcpu::MAX_ID {
            return Err(ErrorKind::BadId {
                id: self.next_id + count - 1,
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
        // An MPI rank is a C int; `make_id_cpu` refuses one beyond 24 bits (and so the
        // saturated value of one beyond i32).
        let cpu = i32::try_from(self.comm.rank()).unwrap_or(i32::MAX);
        let mut t = self.template.new_like();
        t.resize(n);
        // The next fresh id: `next_id + i` for particle `i`.
        let mut fresh = self.next_id;
        for i in 0..n {
            t.set_pos(i, [a.pos[0][i], a.pos[1][i], a.pos[2][i]]);
            let w = match a.ids {
                Some(ids) => idcpu::make_id_cpu(ids[i], cpu),
                None => {
                    fresh += 1;
                    idcpu::make_id_cpu(fresh - 1, cpu)
                }
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
            self.next_id += count;
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
    /// On every rank, before anything is added: [`ErrorKind::Comm`] when the ranks do not
    /// all call it with the same arguments on the same container layout;
    /// [`ErrorKind::ComponentCount`] when `reals`/`ints` do not have one value per
    /// component; [`ErrorKind::BadId`] when `n` exceeds [`idcpu::MAX_ID`] (particle `n`
    /// would have id `n`). Then those of [`redistribute`](Self::redistribute).
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
        if n > idcpu::MAX_ID.unsigned_abs() {
            return Err(ErrorKind::BadId {
                id: i64::try_from(n).unwrap_or(i64::MAX),
            }
            .into());
        }
        // Rank `r` draws particles `n * r / size .. n * (r + 1) / size`, in u128: `n * r`
        // may not fit u64, the quotient (at most `n`) does.
        let size = self.comm.size() as u128;
        let share = |r: usize| {
            u64::try_from(u128::from(n) * r as u128 / size).expect("n * r / size <= n, a u64")
        };
        let (b, e) = (share(self.comm.rank()), share(self.comm.rank() + 1));
        let g = self.levels[0].geom;
        let (plo, phi) = (g.prob_lo(), g.prob_hi());
        let mut t = self.template.new_like();
        t.resize(usize::try_from(e - b).expect("init_random: a rank's share of n beyond usize"));
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
            t.set_idcpu(k, idcpu::make_id_cpu(id_after(i), 0));
            set_comp_values(&mut t, k, reals, ints);
        }
        self.next_id = self.next_id.max(id_after(n));
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
            t.resize(
                usize::try_from(tb.num_pts())
                    .expect("init_one_per_cell: more cells in a tile than usize holds"),
            );
            for (k, c) in tb.iter().enumerate() {
                let p: [ParticleReal; 3] =
                    core::array::from_fn(|d| f2r(g.lo_edge(c[d], d) + r2f(offset[d]) * dx[d]));
                t.set_pos(k, p);
                t.set_idcpu(k, idcpu::make_id_cpu(id_after(dom.index(c) as u64), 0));
                set_comp_values(&mut t, k, reals, ints);
            }
            let r = self.place(&mut t);
            rep.added += r.added;
            rep.placed += r.placed;
            rep.pending += r.pending;
            rep.outside_domain += r.outside_domain;
        }
        self.next_id = self.next_id.max(id_after(dom.num_pts()));
        Ok(rep)
    }

    /// `ComponentCount` unless there is one value per real and per int component.
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

    /// The hash of the container's layout that its collective operations agree on:
    /// everything that decides which tile, rank and message a particle goes to, or what a
    /// mesh operation reads. Each level's geometry ([`hash_geometry`]: domain, extent,
    /// coordinates, periodicity), grids and map; the tile size (`None` or the cut);
    /// the communicator's message limit (the pieces `redistribute`'s messages are cut
    /// into); the particle type's components.
    pub(crate) fn fingerprint(&self) -> Fingerprint {
        let mut fp = Fingerprint::new();
        fp.usize(self.levels.len());
        for l in &self.levels {
            hash_geometry(&mut fp, &l.geom);
            fp.word(l.ba.fingerprint()).word(l.dm.fingerprint());
        }
        match self.tile_size {
            None => fp.word(0),
            Some(ts) => fp.word(1).iv(ts),
        };
        fp.usize(self.comm.message_limit())
            .usize(self.template.num_reals())
            .usize(self.template.num_ints())
            .usize(self.template.packed_bytes());
        fp
    }

    /// The agreement of collective operation `op` of this container, with `args` (the
    /// operation's arguments) and the container's layout, on its communicator.
    pub(crate) fn agree(&self, op: &'static str, args: &Fingerprint) -> Result<Agreed<'_>> {
        self.agree_with(&self.comm, op, args)
    }

    /// [`agree`](Self::agree) on `comm`, a clone of the container's communicator, for an
    /// operation that takes `&mut self` and so cannot hold an agreement that borrows it
    /// (`redistribute`, `read_plotfile`).
    pub(crate) fn agree_with<'c>(
        &self,
        comm: &'c Communicator,
        op: &'static str,
        args: &Fingerprint,
    ) -> Result<Agreed<'c>> {
        debug_assert!(
            *comm == self.comm,
            "{op}: agreeing on another communicator than the container's"
        );
        let mut fp = self.fingerprint();
        fp.word(args.value());
        Ok(comm.agree(op, &fp).map_err(ErrorKind::Comm)?)
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

    /// The index in `tiles` of the local tile `(grid, tile)` of level `lev`.
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

    /// The local tiles, all levels, in (level, grid, tile) order.
    pub(crate) fn entries(&self) -> &[TileEntry<T>] {
        &self.tiles
    }

    /// The levels, and the local tiles (mutable).
    pub(crate) fn entries_mut(&mut self) -> (&[ParticleLevel], &mut [TileEntry<T>]) {
        (&self.levels, &mut self.tiles)
    }
}

/// The outcome of a step of collective operation `op` that may fail on some ranks and
/// not on others (a file, a particle outside its fab), agreed in one all-reduce before
/// the next collective, so that no rank goes on into a collective a failed rank has left:
/// this rank's own error `failed` if it has one, else [`ErrorKind::FailedOnOtherRank`]
/// naming the lowest rank that failed, else `Ok`.
pub(crate) fn agree_failure(
    agreed: &Agreed<'_>,
    op: &'static str,
    failed: Option<ParticleContainerError>,
) -> Result<()> {
    let first = agreed.first_failure(failed.is_none());
    match (failed, first) {
        (Some(e), _) => Err(e),
        (None, Some(rank)) => Err(ErrorKind::FailedOnOtherRank { op, rank }.into()),
        (None, None) => Ok(()),
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

/// `n + 1`, the id that follows `n` particles numbered from 1, saturated at `i64::MAX`:
/// like every id beyond [`idcpu::MAX_ID`], `make_id_cpu` and `add_particles` refuse it.
fn id_after(n: u64) -> i64 {
    i64::try_from(n.saturating_add(1)).unwrap_or(i64::MAX)
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

/// Sets every real and int component of particle `k` of `t` to `reals`/`ints`.
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
