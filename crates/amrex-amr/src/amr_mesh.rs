//! `AmrInfo` and `AmrMesh`: the per-level layout of an AMR hierarchy and AMReX's grid
//! generation (`AMReX_AmrMesh`).
//!
//! [`AmrMesh`] holds, per level, the [`Geometry`], the [`BoxArray`] and the
//! [`DistributionMapping`], with the parameters in [`AmrInfo`] (`amr.*` in an inputs
//! file). [`AmrMesh::make_base_grids`] chops the level-0 domain;
//! [`make_new_grids`](crate::amr_core::make_new_grids) (driven through
//! [`AmrCore`](crate::AmrCore), which supplies `error_est`) builds the finer levels from
//! tags in AMReX's order.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use amrex_box::{IndexBox, IntVect, SPACEDIM};
use amrex_geometry::{CoordSys, Geometry, RealBox};
use amrex_multifab::{BoxArray, BoxList, DistributionMapping};

use crate::error::{AmrError, AmrErrorKind};
use amrex_runtime::{ParmParse, ParmParseError};

/// The parameters of an AMR hierarchy (AMReX's `AmrInfo`), with AMReX's defaults.
///
/// The per-level vectors have one entry per level (`max_level + 1`; `ref_ratio` has
/// `max_level`); [`AmrMesh::new`] extends a shorter vector with its last entry, as
/// AMReX does.
#[derive(Clone, Debug, PartialEq)]
pub struct AmrInfo {
    /// `amr.v`: 0 prints nothing, 1 prints "Creating new distribution map on level: l".
    pub verbose: i32,
    /// `amr.max_level`: the finest level allowed (0 for one level).
    pub max_level: usize,
    /// `amr.ref_ratio` / `amr.ref_ratio_vect`: the ratio between level `l` and `l + 1`.
    pub ref_ratio: Vec<IntVect>,
    /// `amr.blocking_factor` (and `_x`, `_y`, `_z`): every grid of a level is a union of
    /// blocks of this size, aligned to it. Default 8.
    pub blocking_factor: Vec<IntVect>,
    /// `amr.max_grid_size` (and `_x`, `_y`, `_z`): the longest side of a grid. Default 32.
    pub max_grid_size: Vec<IntVect>,
    /// `amr.n_error_buf` (and `_x`, `_y`, `_z`): cells of buffer around each tag. Default 1.
    pub n_error_buf: Vec<IntVect>,
    /// `amr.grid_eff`: the fraction of tagged cells a cluster must reach before it stops
    /// being chopped. Default 0.7.
    pub grid_eff: f64,
    /// `amr.n_proper`: coarse cells of proper nesting between a level and the next
    /// coarser one beyond. Default 1.
    pub n_proper: i32,
    /// `amr.refine_grid_layout` (and `_x`, `_y`, `_z`): per direction, whether grids are
    /// chopped further until there are at least as many as ranks. Default all on.
    pub refine_grid_layout: [bool; SPACEDIM],
    /// `amr.check_input`: whether [`AmrMesh::new`] applies AMReX's `checkInput` rules.
    /// Default on.
    pub check_input: bool,
    /// [`ClusterList::new_chop`](crate::ClusterList::new_chop) instead of `chop`
    /// (AMReX's `SetUseNewChop`; no inputs key). Default off.
    pub use_new_chop: bool,
    /// At start-up, make the levels again (up to 4 times) until the grids stop changing
    /// (AMReX's `iterate_on_new_grids`, off by `SetIterateToFalse`; no inputs key).
    /// Default on.
    pub iterate_on_new_grids: bool,
}

impl Default for AmrInfo {
    fn default() -> Self {
        Self {
            verbose: 0,
            max_level: 0,
            ref_ratio: vec![IntVect::splat(2)],
            blocking_factor: vec![IntVect::splat(8)],
            max_grid_size: vec![IntVect::splat(32)],
            n_error_buf: vec![IntVect::splat(1)],
            grid_eff: 0.7,
            n_proper: 1,
            refine_grid_layout: [true; SPACEDIM],
            check_input: true,
            use_new_chop: false,
            iterate_on_new_grids: true,
        }
    }
}

const AXES: [&str; SPACEDIM] = ["_x", "_y", "_z"];

/// A ParmParse error as an [`AmrError`].
fn pp_err(e: ParmParseError) -> AmrError {
    AmrError::new("AmrMesh::from_parm_parse", AmrErrorKind::Input(e))
}

/// `values` as `n` per-level entries, the last one repeated (AMReX's resize).
fn per_level(values: &[i32], n: usize) -> Vec<i32> {
    let mut v: Vec<i32> = values.iter().copied().take(n).collect();
    let last = *values.last().unwrap_or(&0);
    v.resize(n, last);
    v
}

/// The levels an `AmrMesh` may have at most (AMReX asserts `max_level < 1000`).
pub const MAX_LEVELS: usize = 1000;

impl AmrInfo {
    /// The `amr.*` keys of `pp` over AMReX's defaults, as `AmrMesh::InitAmrMesh` reads
    /// them: `verbose` (or `v`), `max_level` (required), `n_proper`, `grid_eff`,
    /// `n_error_buf[_x|_y|_z]`, `ref_ratio` or `ref_ratio_vect` (not both, and only with
    /// `max_level > 0`), `max_grid_size[_x|_y|_z]`, `blocking_factor[_x|_y|_z]`,
    /// `refine_grid_layout[_x|_y|_z]`, `check_input`, `use_bittree` (refused when set: it
    /// is not built). A list shorter than the number of levels is extended with its last
    /// value. Like AMReX, no key sets [`use_new_chop`](Self::use_new_chop) or
    /// [`iterate_on_new_grids`](Self::iterate_on_new_grids): a program sets them.
    ///
    /// # Errors
    /// [`AmrErrorKind::Input`] naming the key (and file and line) for a missing
    /// `amr.max_level` or a value of the wrong type; [`AmrErrorKind::BadParameter`] for
    /// a negative `max_level` or both `ref_ratio` and `ref_ratio_vect`.
    pub fn from_parm_parse(pp: &ParmParse) -> Result<Self, AmrError> {
        let amr = pp.prefixed("amr");
        // `amr.verbose`, or `amr.v` when it is not given (AMReX's `query("verbose", "v")`).
        let verbose = match amr.query("verbose").map_err(pp_err)? {
            Some(v) => v,
            None => amr.query_or("v", 0).map_err(pp_err)?,
        };
        let mut info = Self {
            verbose,
            ..Self::default()
        };
        let max_level: i32 = amr.get("max_level").map_err(pp_err)?;
        // Checked before the per-level lists are made (AMReX asserts the same range).
        info.max_level = usize::try_from(max_level)
            .ok()
            .filter(|&m| m < MAX_LEVELS)
            .ok_or_else(|| {
                AmrError::new(
                    "AmrMesh::from_parm_parse",
                    AmrErrorKind::BadParameter {
                        key: String::from("amr.max_level"),
                        detail: format!("expected 0 to {}, got {max_level}", MAX_LEVELS - 1),
                    },
                )
            })?;
        let nlev = info.max_level + 1;
        info.n_proper = amr.query_or("n_proper", info.n_proper).map_err(pp_err)?;
        info.grid_eff = amr.query_or("grid_eff", info.grid_eff).map_err(pp_err)?;
        let read_iv = |key: &str, default: IntVect, n: usize| -> Result<Vec<IntVect>, AmrError> {
            let mut out = vec![default; n];
            if let Some(v) = amr.query_arr::<i32>(key).map_err(pp_err)? {
                for (o, x) in out.iter_mut().zip(per_level(&v, n)) {
                    *o = IntVect::splat(x);
                }
            }
            for (d, axis) in AXES.iter().enumerate() {
                let k = format!("{key}{axis}");
                if let Some(v) = amr.query_arr::<i32>(&k).map_err(pp_err)? {
                    for (o, x) in out.iter_mut().zip(per_level(&v, n)) {
                        *o = o.with(d, x);
                    }
                }
            }
            Ok(out)
        };
        info.n_error_buf = read_iv("n_error_buf", IntVect::splat(1), nlev)?;
        info.max_grid_size = read_iv("max_grid_size", IntVect::splat(32), nlev)?;
        info.blocking_factor = read_iv("blocking_factor", IntVect::splat(8), nlev)?;
        info.ref_ratio = vec![IntVect::splat(2); info.max_level.max(1)];
        if info.max_level > 0 {
            let by_vect = amr
                .query_arr_n::<i32>("ref_ratio_vect", info.max_level * SPACEDIM)
                .map_err(pp_err)?;
            let by_int = amr.query_arr::<i32>("ref_ratio").map_err(pp_err)?;
            match (by_vect, by_int) {
                (Some(_), Some(_)) => {
                    return Err(AmrError::new(
                        "AmrMesh::from_parm_parse",
                        AmrErrorKind::BadParameter {
                            key: String::from("amr.ref_ratio"),
                            detail: String::from(
                                "give either amr.ref_ratio or amr.ref_ratio_vect, not both",
                            ),
                        },
                    ));
                }
                (Some(v), None) => {
                    for (l, r) in info.ref_ratio.iter_mut().enumerate() {
                        *r = IntVect::new(v[3 * l], v[3 * l + 1], v[3 * l + 2]);
                    }
                }
                (None, Some(v)) => {
                    for (r, x) in info.ref_ratio.iter_mut().zip(per_level(&v, info.max_level)) {
                        *r = IntVect::splat(x);
                    }
                }
                (None, None) => {}
            }
        }
        let rgl: bool = amr.query_or("refine_grid_layout", true).map_err(pp_err)?;
        for (d, axis) in AXES.iter().enumerate() {
            info.refine_grid_layout[d] = amr
                .query_or(&format!("refine_grid_layout{axis}"), rgl)
                .map_err(pp_err)?;
        }
        info.check_input = amr.query_or("check_input", true).map_err(pp_err)?;
        if amr.query_or("use_bittree", false).map_err(pp_err)? {
            return Err(AmrError::new(
                "AmrMesh::from_parm_parse",
                AmrErrorKind::BadParameter {
                    key: String::from("amr.use_bittree"),
                    detail: String::from("the Bittree grid generator is not built in amrex-rs"),
                },
            ));
        }
        Ok(info)
    }

    fn normalise(&mut self) {
        let nlev = self.max_level + 1;
        let fill = |v: &mut Vec<IntVect>, n: usize, default: IntVect| {
            let last = v.last().copied().unwrap_or(default);
            v.resize(n.max(v.len()), last);
        };
        fill(
            &mut self.ref_ratio,
            self.max_level.max(1),
            IntVect::splat(2),
        );
        fill(&mut self.blocking_factor, nlev, IntVect::splat(8));
        fill(&mut self.max_grid_size, nlev, IntVect::splat(32));
        fill(&mut self.n_error_buf, nlev, IntVect::splat(1));
    }
}

/// The level-0 [`Geometry`] an inputs file describes, as AMReX's `Geometry::Setup` and
/// `AmrMesh` read it: `amr.n_cell` (three integers, required), `geometry.prob_lo` and
/// `geometry.prob_hi` (three reals each, required), `geometry.is_periodic` (three 0/1,
/// default 0 0 0) and `geometry.coord_sys` (0 Cartesian, 1 RZ, 2 spherical; default 0).
///
/// # Errors
/// [`AmrErrorKind::Input`] for a missing key or a value of the wrong type or count;
/// [`AmrErrorKind::BadParameter`] for a domain or a box of `prob_lo`/`prob_hi` that
/// makes no geometry (the message says why).
pub fn geometry_from_parm_parse(pp: &ParmParse) -> Result<Geometry, AmrError> {
    let bad = |key: &str, detail: String| {
        AmrError::new(
            "geometry_from_parm_parse",
            AmrErrorKind::BadParameter {
                key: String::from(key),
                detail,
            },
        )
    };
    let n_cell = pp
        .get_arr_n::<i32>("amr.n_cell", SPACEDIM)
        .map_err(pp_err)?;
    if n_cell.iter().any(|&n| n < 1) {
        return Err(bad(
            "amr.n_cell",
            format!("expected at least one cell per direction, got {n_cell:?}"),
        ));
    }
    let lo = pp
        .get_arr_n::<f64>("geometry.prob_lo", SPACEDIM)
        .map_err(pp_err)?;
    let hi = pp
        .get_arr_n::<f64>("geometry.prob_hi", SPACEDIM)
        .map_err(pp_err)?;
    let per = pp
        .query_arr_n::<i32>("geometry.is_periodic", SPACEDIM)
        .map_err(pp_err)?
        .unwrap_or_else(|| vec![0; SPACEDIM]);
    let coord = match pp
        .query_or::<i32>("geometry.coord_sys", 0)
        .map_err(pp_err)?
    {
        0 => CoordSys::Cartesian,
        1 => CoordSys::Rz,
        2 => CoordSys::Spherical,
        c => {
            return Err(bad(
                "geometry.coord_sys",
                format!("expected 0, 1 or 2, got {c}"),
            ));
        }
    };
    let rb = RealBox::new([lo[0], lo[1], lo[2]], [hi[0], hi[1], hi[2]])
        .map_err(|e| bad("geometry.prob_lo/prob_hi", format!("{e}")))?;
    let domain = IndexBox::new(
        IntVect::ZERO,
        IntVect::new(n_cell[0] - 1, n_cell[1] - 1, n_cell[2] - 1),
    );
    Geometry::new(domain, rb, coord, [per[0] != 0, per[1] != 0, per[2] != 0])
        .map_err(|e| bad("amr.n_cell", format!("{e}")))
}

/// The layout of an AMR hierarchy (AMReX's `AmrMesh`): per level its [`Geometry`]
/// (level 0's refined by the ratios), and for the levels that exist their [`BoxArray`]
/// and [`DistributionMapping`].
#[derive(Clone, Debug)]
pub struct AmrMesh {
    info: AmrInfo,
    geom: Vec<Geometry>,
    grids: Vec<BoxArray>,
    dmap: Vec<DistributionMapping>,
}

fn check_err(kind: AmrErrorKind) -> AmrError {
    AmrError::new("AmrMesh::check_input", kind)
}

impl AmrMesh {
    /// A hierarchy over `level0` with the parameters `info` and no levels made yet.
    /// Unless `info.check_input` is off, AMReX's `checkInput` rules are applied first.
    ///
    /// # Errors
    /// [`AmrErrorKind::BadMeshInput`] naming the rule, level and direction broken: a
    /// refinement ratio out of range (below 1, or below 2 in every direction, or above
    /// 16), a blocking factor or `max_grid_size` below 1, a blocking factor not a power
    /// of 2, the domain not divisible by the level-0 blocking factor, a blocking factor
    /// times the ratio below the next level's blocking factor, `max_grid_size` not a
    /// multiple of the blocking factor, or a coarse blocking factor not a multiple of
    /// the next level's blocking factor over the ratio. [`AmrErrorKind::BadParameter`]
    /// if `grid_eff` is not within (0, 1] or `n_proper` is negative.
    pub fn new(level0: Geometry, mut info: AmrInfo) -> Result<Self, AmrError> {
        if info.max_level >= MAX_LEVELS {
            return Err(check_err(AmrErrorKind::BadParameter {
                key: String::from("amr.max_level"),
                detail: format!("expected 0 to {}, got {}", MAX_LEVELS - 1, info.max_level),
            }));
        }
        info.normalise();
        if info.check_input {
            check_input(&level0, &info)?;
        }
        if !(info.grid_eff > 0.0 && info.grid_eff <= 1.0) {
            return Err(check_err(AmrErrorKind::BadParameter {
                key: String::from("amr.grid_eff"),
                detail: format!("expected a value in (0, 1], got {}", info.grid_eff),
            }));
        }
        if info.n_proper < 0 {
            return Err(check_err(AmrErrorKind::BadParameter {
                key: String::from("amr.n_proper"),
                detail: format!("expected 0 or more, got {}", info.n_proper),
            }));
        }
        let mut geom = vec![level0];
        for l in 0..info.max_level {
            let g = geom[l].refine(info.ref_ratio[l]).map_err(|e| {
                check_err(AmrErrorKind::BadParameter {
                    key: String::from("amr.ref_ratio"),
                    detail: format!("level {} cannot be refined: {e}", l),
                })
            })?;
            geom.push(g);
        }
        Ok(Self {
            info,
            geom,
            grids: Vec::new(),
            dmap: Vec::new(),
        })
    }

    /// The hierarchy an inputs file describes: [`geometry_from_parm_parse`] and
    /// [`AmrInfo::from_parm_parse`], then [`new`](Self::new).
    ///
    /// # Errors
    /// Those of the three.
    pub fn from_parm_parse(pp: &ParmParse) -> Result<Self, AmrError> {
        Self::new(geometry_from_parm_parse(pp)?, AmrInfo::from_parm_parse(pp)?)
    }

    /// The parameters.
    #[must_use]
    pub const fn info(&self) -> &AmrInfo {
        &self.info
    }

    /// The finest level allowed.
    #[must_use]
    pub const fn max_level(&self) -> usize {
        self.info.max_level
    }

    /// The finest level that exists (`None` before the hierarchy is made).
    #[must_use]
    pub fn finest_level(&self) -> Option<usize> {
        self.grids.len().checked_sub(1)
    }

    /// Level `lev`'s geometry.
    ///
    /// # Panics
    /// If `lev > max_level`.
    #[must_use]
    #[track_caller]
    pub fn geom(&self, lev: usize) -> &Geometry {
        &self.geom[lev]
    }

    /// Every level's geometry, `0..=max_level`.
    #[must_use]
    pub fn geoms(&self) -> &[Geometry] {
        &self.geom
    }

    /// Level `lev`'s grids.
    ///
    /// # Panics
    /// If level `lev` does not exist.
    #[must_use]
    #[track_caller]
    pub fn box_array(&self, lev: usize) -> &BoxArray {
        &self.grids[lev]
    }

    /// Level `lev`'s distribution mapping.
    ///
    /// # Panics
    /// If level `lev` does not exist.
    #[must_use]
    #[track_caller]
    pub fn dist_map(&self, lev: usize) -> &DistributionMapping {
        &self.dmap[lev]
    }

    /// The refinement ratio between `lev` and `lev + 1`.
    ///
    /// # Panics
    /// If `lev >= max_level` (and `max_level > 0`).
    #[must_use]
    #[track_caller]
    pub fn ref_ratio(&self, lev: usize) -> IntVect {
        self.info.ref_ratio[lev]
    }

    /// The largest component of [`ref_ratio`](Self::ref_ratio) (AMReX's `MaxRefRatio`).
    #[must_use]
    #[track_caller]
    pub fn max_ref_ratio(&self, lev: usize) -> i32 {
        let r = self.info.ref_ratio[lev];
        r[0].max(r[1]).max(r[2])
    }

    /// Number of cells of level `lev`'s grids (AMReX's `CountCells`).
    #[must_use]
    #[track_caller]
    pub fn count_cells(&self, lev: usize) -> u64 {
        self.grids[lev].num_pts()
    }

    /// Sets (or adds, if `lev` is one past the finest) level `lev`'s grids and mapping.
    ///
    /// # Panics
    /// If `lev` is more than one past the finest level or above `max_level`.
    #[track_caller]
    pub fn set_level(&mut self, lev: usize, ba: BoxArray, dm: DistributionMapping) {
        assert!(lev <= self.info.max_level && lev <= self.grids.len());
        if lev == self.grids.len() {
            self.grids.push(ba);
            self.dmap.push(dm);
        } else {
            self.grids[lev] = ba;
            self.dmap[lev] = dm;
        }
    }

    /// Removes the levels above `finest` (AMReX's `ClearBoxArray`/`ClearDistributionMap`
    /// of each).
    pub fn truncate(&mut self, finest: usize) {
        self.grids.truncate(finest + 1);
        self.dmap.truncate(finest + 1);
    }

    /// Chops `ba` further until it has at least `target_size` grids or nothing more can
    /// be chopped (AMReX's `ChopGrids`): starting from `max_grid_size` (at most the
    /// domain's length), each round halves the chunk in the direction where it is
    /// longest (the highest direction among equals) that
    /// [`refine_grid_layout`](AmrInfo::refine_grid_layout) allows and where the half,
    /// rounded down to a multiple of the refinement ratio from the level below, is a
    /// positive multiple of the blocking factor, and chops `ba` to it (at multiples of
    /// that ratio, [`BoxArray::min_max_size`], on a fine level).
    #[must_use]
    pub fn chop_grids(&self, lev: usize, ba: BoxArray, target_size: usize) -> BoxArray {
        let dims = self.info.refine_grid_layout;
        if dims.iter().all(|d| !d) {
            return ba;
        }
        let bf = self.info.blocking_factor[lev];
        let mut ba = ba;
        let mut chunk = self.info.max_grid_size[lev].min(self.geom[lev].domain().length());
        while ba.len() < target_size {
            let prev = chunk;
            let mut order = [(chunk[0], 0), (chunk[1], 1), (chunk[2], 2)];
            order.sort_unstable();
            for &(_, d) in order.iter().rev() {
                if !dims[d] {
                    continue;
                }
                let rr = if lev > 0 {
                    self.info.ref_ratio[lev - 1][d]
                } else {
                    1
                };
                let mut half = chunk[d] / 2;
                if rr > 1 {
                    half = half / rr * rr;
                }
                if half != 0 && half % bf[d] == 0 {
                    chunk = chunk.with(d, half);
                    ba = if rr == 1 {
                        ba.max_size(chunk)
                    } else {
                        ba.min_max_size(IntVect::UNIT.with(d, rr), chunk)
                    };
                    break;
                }
            }
            if chunk == prev {
                break;
            }
        }
        ba
    }

    /// Makes `grids` (a checkpoint's, level 0 first) the hierarchy, each level with a
    /// new [`DistributionMapping`] of its boxes over the current ranks (AMReX codes'
    /// `ReadCheckpointFile`: `SetBoxArray` and `DistributionMapping(ba, nprocs)` per
    /// level). They are checked first, and nothing changes when they do not fit: at
    /// most `max_level + 1` levels (AMReX would write past its per-level arrays), every
    /// box inside its level's domain, level 0 covering its domain exactly, and every
    /// finer box coarsenable by the ratio below it and, coarsened, covered by the level
    /// below. A checkpoint written with another domain or ratio than this mesh's fails
    /// one of these (a domain is recorded only through level 0's grids, which cover it).
    ///
    /// # Errors
    /// [`AmrErrorKind::CheckpointMismatch`] naming the level and what does not fit.
    pub fn restore_grids(&mut self, grids: &[BoxArray]) -> Result<(), AmrError> {
        let bad = |level: usize, detail: String| {
            AmrError::new(
                "AmrMesh::restore_grids",
                AmrErrorKind::CheckpointMismatch { level, detail },
            )
        };
        if grids.is_empty() {
            return Err(bad(0, String::from("it has no levels")));
        }
        let finest = grids.len() - 1;
        if finest > self.info.max_level {
            return Err(bad(
                finest,
                format!(
                    "its finest level {finest} is above amr.max_level = {}",
                    self.info.max_level
                ),
            ));
        }
        for (lev, ba) in grids.iter().enumerate() {
            let domain = self.geom[lev].domain();
            if !ba.ix_type().cell_centered() {
                return Err(bad(lev, String::from("its boxes are not cell-centred")));
            }
            if let Some(b) = ba.boxes().iter().find(|b| !domain.contains_box(b)) {
                return Err(bad(lev, format!("box {b} is outside the domain {domain}")));
            }
            if !ba.is_disjoint() {
                return Err(bad(lev, String::from("two of its boxes overlap")));
            }
            if lev == 0 {
                if ba.num_pts() != domain.num_pts() {
                    return Err(bad(
                        0,
                        format!(
                            "its boxes cover {} of the {} cells of the domain {domain}",
                            ba.num_pts(),
                            domain.num_pts()
                        ),
                    ));
                }
                continue;
            }
            let r = self.info.ref_ratio[lev - 1];
            if !ba.coarsenable(r) {
                return Err(bad(
                    lev,
                    format!("its boxes are not coarsenable by the ratio {r}"),
                ));
            }
            let below = &grids[lev - 1];
            if let Some(b) = ba
                .boxes()
                .iter()
                .find(|b| !below.contains_box(&b.coarsen_iv(r)))
            {
                return Err(bad(
                    lev,
                    format!(
                        "box {b} coarsened by the ratio {r} is not inside level {}'s grids",
                        lev - 1
                    ),
                ));
            }
        }
        self.truncate(finest);
        for (lev, ba) in grids.iter().enumerate() {
            let dm = DistributionMapping::new(ba);
            self.set_level(lev, ba.clone(), dm);
        }
        Ok(())
    }

    /// Level 0's grids: the domain coarsened by 2 (in the directions where it has an
    /// even number of cells), chopped to half of `max_grid_size`, refined back, and then
    /// chopped for `nprocs` ranks (AMReX's `MakeBaseGrids`), so every box has an even
    /// number of cells where the domain has.
    #[must_use]
    pub fn make_base_grids(&self, nprocs: usize) -> BoxArray {
        let dom = self.geom[0].domain();
        let two = IntVect::splat(2);
        let dom2 = dom.coarsen_iv(two).refine_iv(two);
        let mut fac = two;
        for d in 0..SPACEDIM {
            if dom.length()[d] != dom2.length()[d] {
                fac = fac.with(d, 1);
            }
        }
        let mgs = self.info.max_grid_size[0];
        let half = IntVect::new(mgs[0] / fac[0], mgs[1] / fac[1], mgs[2] / fac[2]);
        let mut bl = BoxList::from_box(dom.coarsen_iv(fac));
        bl.max_size(half.max(IntVect::UNIT));
        bl.refine(fac);
        let ba = BoxArray::from(bl);
        if self.info.refine_grid_layout.iter().any(|&d| d) {
            self.chop_grids(0, ba, nprocs)
        } else {
            ba
        }
    }
}

/// AMReX's `checkInput` rules, each a specific error.
fn check_input(level0: &Geometry, info: &AmrInfo) -> Result<(), AmrError> {
    use AmrErrorKind::BadMeshInput;
    let nlev = info.max_level + 1;
    for (l, r) in info.ref_ratio.iter().enumerate().take(info.max_level) {
        let max = r[0].max(r[1]).max(r[2]);
        if !r.all_ge(IntVect::UNIT) || !(2..=16).contains(&max) {
            return Err(check_err(BadMeshInput {
                rule: "refinement ratio out of range (each direction 1 to 16, at least 2 in one)",
                level: l,
                dir: None,
                values: format!("ref_ratio {r}"),
            }));
        }
    }
    for l in 0..nlev {
        for d in 0..SPACEDIM {
            let (bf, mgs) = (info.blocking_factor[l][d], info.max_grid_size[l][d]);
            if bf < 1 || mgs < 1 {
                return Err(check_err(BadMeshInput {
                    rule: "blocking factor and max_grid_size must be at least 1",
                    level: l,
                    dir: Some(d),
                    values: format!("blocking_factor {bf}, max_grid_size {mgs}"),
                }));
            }
            // Positive (checked above).
            if !bf.cast_unsigned().is_power_of_two() {
                return Err(check_err(BadMeshInput {
                    rule: "blocking factor not a power of 2",
                    level: l,
                    dir: Some(d),
                    values: format!("blocking_factor {bf}"),
                }));
            }
        }
    }
    let len = level0.domain().length();
    for d in 0..SPACEDIM {
        let (bf, mgs) = (info.blocking_factor[0][d], info.max_grid_size[0][d]);
        if bf <= mgs && len[d] % bf != 0 {
            return Err(check_err(BadMeshInput {
                rule: "domain size not divisible by the blocking factor",
                level: 0,
                dir: Some(d),
                values: format!("{} cells, blocking_factor {bf}", len[d]),
            }));
        }
    }
    for l in 0..info.max_level {
        let (bf, r, bff) = (
            info.blocking_factor[l],
            info.ref_ratio[l],
            info.blocking_factor[l + 1],
        );
        for d in 0..SPACEDIM {
            if bf[d] * r[d] < bff[d] {
                return Err(check_err(BadMeshInput {
                    rule: "blocking factors vary too much between levels (bf[l] * ref_ratio[l] < bf[l+1])",
                    level: l,
                    dir: Some(d),
                    values: format!(
                        "blocking_factor {} on level {l}, {} on level {}, ref_ratio {}",
                        bf[d],
                        bff[d],
                        l + 1,
                        r[d]
                    ),
                }));
            }
        }
    }
    for l in 0..info.max_level {
        for d in 0..SPACEDIM {
            let (bf, mgs) = (info.blocking_factor[l][d], info.max_grid_size[l][d]);
            if bf <= mgs && mgs % bf != 0 {
                return Err(check_err(BadMeshInput {
                    rule: "max_grid_size not divisible by the blocking factor",
                    level: l,
                    dir: Some(d),
                    values: format!("max_grid_size {mgs}, blocking_factor {bf}"),
                }));
            }
            let bf_lev = (info.blocking_factor[l + 1][d] / info.ref_ratio[l][d]).max(1);
            let min_grid = bf.min(mgs);
            if min_grid % bf_lev != 0 {
                return Err(check_err(BadMeshInput {
                    rule: "coarse blocking factor not a multiple of the fine blocking factor over the ratio",
                    level: l,
                    dir: Some(d),
                    values: format!(
                        "blocking_factor {bf}, max_grid_size {mgs} on level {l}; blocking_factor {} on level {}, ref_ratio {}",
                        info.blocking_factor[l + 1][d],
                        l + 1,
                        info.ref_ratio[l][d]
                    ),
                }));
            }
        }
    }
    Ok(())
}

/// Adds to `bl` the periodic images of its boxes (shifted by -1, 0 and +1 domain lengths
/// in each periodic direction) cut to `domain` (AMReX's `AmrMesh::ProjPeriodic`).
pub(crate) fn proj_periodic(bl: &mut BoxList, domain: &IndexBox, periodic: [bool; SPACEDIM]) {
    let orig = bl.clone();
    let len = domain.length();
    let range = |d: usize| if periodic[d] { -1..=1 } else { 0..=0 };
    for ri in range(0) {
        for rj in range(1) {
            for rk in range(2) {
                let shift = IntVect::new(ri * len[0], rj * len[1], rk * len[2]);
                for b in orig.iter() {
                    if let Some(i) = b.shift_iv(shift).intersection(domain) {
                        bl.push(i);
                    }
                }
            }
        }
    }
}
