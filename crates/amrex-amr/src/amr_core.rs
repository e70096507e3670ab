//! `AmrCore`: the regrid loop (AMReX's `AmrCore` and `AmrMesh::MakeNewGrids`).
//!
//! A simulation implements [`AmrCore`] for its state: where its [`AmrMesh`] is, how to
//! tag cells ([`error_est`](AmrCore::error_est)), and how to make, remake and clear a
//! level's data. The provided methods [`init_from_scratch`](AmrCore::init_from_scratch)
//! and [`regrid`](AmrCore::regrid) then build the hierarchy and move it to new grids in
//! AMReX's order, calling those methods where AMReX calls its virtual functions.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use amrex_box::{IntVect, SPACEDIM};
use amrex_geometry::Geometry;
use amrex_multifab::{BoxArray, BoxList, DistributionMapping};
use amrex_runtime::Communicator;

use crate::amr_mesh::{AmrMesh, proj_periodic};
use crate::cluster::ClusterList;
use crate::error::{AmrError, AmrErrorKind};
use crate::tags::TagBoxArray;

/// A simulation on an AMR hierarchy (AMReX's `AmrCore`): it owns an [`AmrMesh`] and the
/// data of each level, and says how to tag cells and how to fill a level's data on new
/// grids. [`init_from_scratch`](Self::init_from_scratch) and [`regrid`](Self::regrid)
/// do the rest.
///
/// Every method is called on every rank with the same arguments (the grids are
/// collective); an error returned (or, with `std`, a panic) in
/// [`error_est`](Self::error_est) on any rank becomes an error on every rank.
pub trait AmrCore {
    /// The error the simulation's methods return: its own type (an enum of the
    /// simulation, `Box<dyn Error>`, or [`AmrError`] itself). The drivers' own
    /// failures (grids, tags, MPI) reach the caller through `From<AmrError>`.
    type Error: From<AmrError> + core::fmt::Display;

    /// The hierarchy's layout.
    fn mesh(&self) -> &AmrMesh;

    /// The hierarchy's layout, to update (the drivers set each level's grids after the
    /// level's data is made).
    fn mesh_mut(&mut self) -> &mut AmrMesh;

    /// Tags the cells of level `lev` to refine: write [`TagBoxArray::SET`] into the
    /// valid cells of `tags` (on level `lev`'s grids) through
    /// [`fab_array_mut`](TagBoxArray::fab_array_mut). `ngrow` is AMReX's argument
    /// (always 0 here).
    ///
    /// # Errors
    /// Whatever the simulation reports; the regrid then fails on every rank.
    fn error_est(
        &mut self,
        lev: usize,
        tags: &mut TagBoxArray,
        time: f64,
        ngrow: usize,
    ) -> Result<(), Self::Error>;

    /// Makes level `lev`'s data on `ba`/`dm` from the initial conditions (at start-up).
    ///
    /// # Errors
    /// Whatever the simulation reports.
    fn make_new_level_from_scratch(
        &mut self,
        lev: usize,
        time: f64,
        ba: &BoxArray,
        dm: &DistributionMapping,
    ) -> Result<(), Self::Error>;

    /// Makes the new level `lev` on `ba`/`dm`, its data interpolated from level
    /// `lev - 1` (typically [`interp_from_coarse_level`](crate::interp_from_coarse_level)).
    ///
    /// # Errors
    /// Whatever the simulation reports.
    fn make_new_level_from_coarse(
        &mut self,
        lev: usize,
        time: f64,
        ba: &BoxArray,
        dm: &DistributionMapping,
    ) -> Result<(), Self::Error>;

    /// Moves the existing level `lev` onto `ba`/`dm`, its data from the old level where
    /// it was and from level `lev - 1` elsewhere (typically
    /// [`fill_patch_two_levels`](crate::fill_patch_two_levels)). While it runs,
    /// [`mesh`](Self::mesh) still has the old grids of `lev`.
    ///
    /// # Errors
    /// Whatever the simulation reports.
    fn remake_level(
        &mut self,
        lev: usize,
        time: f64,
        ba: &BoxArray,
        dm: &DistributionMapping,
    ) -> Result<(), Self::Error>;

    /// Drops level `lev`'s data (the level no longer exists).
    fn clear_level(&mut self, lev: usize);

    /// Builds the hierarchy at `time` (AMReX's `InitFromScratch`): level 0 on
    /// [`AmrMesh::make_base_grids`], then one finer level at a time from the tags of the
    /// one below, and then (with `amr.iterate_on_new_grids`) the levels are made again,
    /// at most 4 times, until their grids stop changing.
    ///
    /// # Errors
    /// Those of the methods above, and of [`make_new_grids`].
    fn init_from_scratch(&mut self, time: f64) -> Result<(), Self::Error>
    where
        Self: Sized,
    {
        init_from_scratch(self, time)
    }

    /// Makes new grids for the levels above `lbase` from the current tags and moves the
    /// data onto them (AMReX's `AmrCore::regrid`): a level whose grids changed (or whose
    /// coarser level's did) is remade, a new level is made from the coarser one, and the
    /// levels above the new finest are cleared. Nothing happens if `lbase` is the
    /// finest level allowed.
    ///
    /// # Errors
    /// Those of the methods above, and of [`make_new_grids`].
    fn regrid(&mut self, lbase: usize, time: f64) -> Result<(), Self::Error>
    where
        Self: Sized,
    {
        regrid(self, lbase, time)
    }
}

fn comm_of(mesh: &AmrMesh) -> Communicator {
    match mesh.finest_level() {
        Some(_) => mesh.dist_map(0).communicator().clone(),
        None => Communicator::current(),
    }
}

/// Prints AMReX's line for a new distribution mapping (rank 0, `amr.v` > 0).
fn say_new_dm(mesh: &AmrMesh, comm: &Communicator, lev: usize) {
    #[cfg(feature = "std")]
    if mesh.info().verbose > 0 && comm.rank() == 0 {
        std::println!("Creating new distribution map on level: {lev}");
    }
    #[cfg(not(feature = "std"))]
    let _ = (mesh, comm, lev);
}

/// Runs `error_est` and makes every rank agree on whether it worked anywhere: a failure
/// (an error, or with `std` a panic) on any rank is an error on every rank. The rank
/// whose `error_est` returned an error gets that error back; the others (and a rank that
/// panicked) get [`AmrErrorKind::ErrorEstFailed`].
fn error_est_agreed<C: AmrCore>(
    core: &mut C,
    comm: &Communicator,
    lev: usize,
    tags: &mut TagBoxArray,
    time: f64,
) -> Result<(), C::Error> {
    #[cfg(feature = "std")]
    let local: Result<(), Result<C::Error, String>> =
        match amrex_runtime::catch_panic(|| core.error_est(lev, tags, time, 0)) {
            Ok(r) => r.map_err(Ok),
            Err(p) => Err(Err(format!("panicked: {p}"))),
        };
    #[cfg(not(feature = "std"))]
    let local: Result<(), Result<C::Error, String>> =
        core.error_est(lev, tags, time, 0).map_err(Ok);
    let agreed = crate::check::Agreement::new("AmrCore::error_est")
        .words(&[lev])
        .reals(&[time])
        .check(comm)?;
    let failed = agreed.all_reduce_u64(u64::from(local.is_err()), amrex_runtime::ReduceOp::Sum);
    if failed == 0 {
        return Ok(());
    }
    let message = match local {
        Err(Ok(own)) => return Err(own),
        Err(Err(panic)) => panic,
        Ok(()) => String::from("failed on another rank"),
    };
    Err(AmrError::new(
        "AmrCore::error_est",
        AmrErrorKind::ErrorEstFailed {
            level: lev,
            ranks: failed,
            message,
        },
    )
    .into())
}

/// The proper-nesting domains of AMReX's `MakeNewGrids`, per level `lbase..=max_crse`
/// in coarsened (blocking-factor) index space: the complement and the domain itself.
struct Nesting {
    comp: Vec<BoxList>,
    inside: Vec<BoxList>,
}

fn nesting(
    mesh: &AmrMesh,
    lbase: usize,
    max_crse: usize,
    bf_lev: &[IntVect],
    rr_lev: &[IntVect],
) -> Nesting {
    let n_proper = IntVect::splat(mesh.info().n_proper);
    let periodic = mesh.geom(0).periodic_flags();
    let any_periodic = periodic.iter().any(|&p| p);
    let mut comp = vec![BoxList::new(amrex_box::IndexType::CELL); max_crse + 1];
    let mut inside = vec![BoxList::new(amrex_box::IndexType::CELL); max_crse + 1];
    for i in lbase..=max_crse {
        let pc_domain = mesh.geom(i).domain().coarsen_iv(bf_lev[i]);
        let mut c = if i == lbase {
            let mut bl = mesh.box_array(lbase).simplified_list();
            bl.coarsen(bf_lev[lbase]);
            let mut c = BoxList::complement_in(&pc_domain, &bl);
            c.simplify();
            c
        } else {
            let mut c = comp[i - 1].clone();
            c.simplify();
            c.refine(rr_lev[i - 1]);
            c
        };
        c.accrete(n_proper);
        if any_periodic {
            proj_periodic(&mut c, &pc_domain, periodic);
        }
        let mut p = BoxList::complement_in(&pc_domain, &c);
        p.simplify();
        comp[i] = c;
        inside[i] = p;
    }
    Nesting { comp, inside }
}

/// New grids for the levels above `lbase`, from the tags `core`'s
/// [`error_est`](AmrCore::error_est) sets (AMReX's `AmrMesh::MakeNewGrids(lbase, time,
/// new_finest, new_grids)`): at most one level more than the finest existing one.
/// Returns the new finest level; `new_grids[l]` holds level `l`'s grids for
/// `lbase < l <= new finest` (it is resized to hold them).
///
/// From the finest level down, per coarse level `levc`: tags from `error_est`, buffered
/// by `n_error_buf`, coarsened by `blocking_factor / ref_ratio`, the grids already made
/// for `levc + 2` projected down and tagged (proper nesting), mapped through periodic
/// boundaries, cleared outside the proper-nesting domain; then clustered
/// (Berger–Rigoutsos to `grid_eff`), the clusters cut to the nesting domain, refined
/// back, merged, cut to the domain, refined to `levc + 1` and chopped to
/// `max_grid_size`; last, each new level is chopped for the number of ranks
/// (`refine_grid_layout`). Every rank computes the same grids from the same gathered
/// tags. **Collective**.
///
/// # Errors
/// [`AmrErrorKind::BadParameter`] if `lbase` is not below `max_level` or above the
/// finest level; [`AmrErrorKind::ErrorEstFailed`] if `error_est` failed on any rank;
/// the tag operations' errors.
#[expect(
    clippy::needless_range_loop,
    reason = "levels are indices into the mesh and new_grids alike"
)]
pub fn make_new_grids<C: AmrCore>(
    core: &mut C,
    lbase: usize,
    time: f64,
    new_grids: &mut Vec<BoxArray>,
) -> Result<usize, C::Error> {
    let mesh = core.mesh().clone();
    let info = mesh.info();
    let finest = mesh.finest_level().unwrap_or(0);
    if lbase >= info.max_level || mesh.finest_level().is_none_or(|f| lbase > f) {
        return Err(AmrError::new(
            "make_new_grids",
            AmrErrorKind::BadParameter {
                key: String::from("lbase"),
                detail: format!(
                    "expected an existing level below max_level {}, got {lbase} (finest level {:?})",
                    info.max_level,
                    mesh.finest_level()
                ),
            },
        )
        .into());
    }
    let comm = comm_of(&mesh);
    let nprocs = comm.size();
    let max_crse = finest.min(info.max_level - 1);
    if new_grids.len() < max_crse + 2 {
        new_grids.resize(max_crse + 2, BoxArray::new(Vec::new()));
    }
    let rr = &info.ref_ratio;
    let bf = &info.blocking_factor;
    let bf_lev: Vec<IntVect> = (0..=max_crse)
        .map(|i| {
            let mut v = IntVect::UNIT;
            for d in 0..SPACEDIM {
                v = v.with(d, (bf[i + 1][d] / rr[i][d]).max(1));
            }
            v
        })
        .collect();
    let rr_lev: Vec<IntVect> = (0..max_crse)
        .map(|i| {
            let mut v = IntVect::UNIT;
            for d in 0..SPACEDIM {
                v = v.with(d, rr[i][d] * bf_lev[i][d] / bf_lev[i + 1][d]);
            }
            v
        })
        .collect();
    let nest = nesting(&mesh, lbase, max_crse, &bf_lev, &rr_lev);
    let n_proper = IntVect::splat(info.n_proper);

    let mut new_finest = lbase;
    for levc in (lbase..=max_crse).rev() {
        let levf = levc + 1;
        let mut ngt = info.n_error_buf[levc];
        let mut ba_proj = None;
        if levf < new_finest {
            let proj = new_grids[levf + 1]
                .coarsen(rr[levf])
                .grow(n_proper)
                .coarsen(rr[levc]);
            let mut levc_ba = mesh.box_array(levc).clone();
            let mut ngrow = 0;
            while !levc_ba.contains_box_array(&proj) {
                levc_ba = levc_ba.grow(IntVect::UNIT);
                ngrow += 1;
            }
            ngt = ngt.max(IntVect::splat(ngrow));
            ba_proj = Some(proj);
        }
        let mut tags = TagBoxArray::new(mesh.box_array(levc), mesh.dist_map(levc), ngt)?;
        error_est_agreed(core, &comm, levc, &mut tags, time)?;
        tags.buffer(info.n_error_buf[levc])?;
        tags.coarsen(bf_lev[levc])?;
        if let Some(proj) = ba_proj {
            tags.set_val_in(&proj.coarsen(bf_lev[levc]), TagBoxArray::SET);
        }
        let g = mesh.geom(levc);
        let pc_geom = Geometry::new(
            g.domain().coarsen_iv(bf_lev[levc]),
            g.real_box(),
            g.coord(),
            g.periodic_flags(),
        )
        .map_err(|e| {
            AmrError::new(
                "make_new_grids",
                AmrErrorKind::BadParameter {
                    key: String::from("blocking_factor"),
                    detail: format!("the coarsened domain of level {levc} has no geometry: {e}"),
                },
            )
        })?;
        tags.map_periodic_remove_duplicates(&pc_geom)?;
        tags.set_val_in_list(&nest.comp[levc], TagBoxArray::CLEAR);
        let tagvec = tags.collate()?;
        drop(tags);
        if tagvec.is_empty() {
            continue;
        }
        new_finest = new_finest.max(levf);
        let mut clist = ClusterList::new(&tagvec);
        if info.use_new_chop {
            clist.new_chop(info.grid_eff);
        } else {
            clist.chop(info.grid_eff);
        }
        clist.intersect(&nest.inside[levc]);
        let mut new_bx = clist.box_list();
        new_bx.refine(bf_lev[levc]);
        new_bx.simplify();
        if !new_bx.is_empty() {
            new_bx.intersect(&g.domain());
        }
        new_grids[levf] = if (0..SPACEDIM).any(|d| rr[levc][d] != 1 && rr[levc][d] % 2 != 0) {
            // An odd ratio: max_grid_size (coarsened) before refining, so that the fine
            // grids align with the coarse ones.
            let mgs = info.max_grid_size[levf];
            // AMReX asserts max_grid_size >= ratio; a smaller one chops to single cells.
            let coarse_mgs = mgs.zip_map(rr[levc], |m, r| (m / r).max(1));
            BoxArray::from(new_bx).max_size(coarse_mgs).refine(rr[levc])
        } else {
            new_bx.refine(rr[levc]);
            BoxArray::from_list_max_size(new_bx, info.max_grid_size[levf])
        };
    }
    for lev in lbase + 1..=new_finest {
        if info.refine_grid_layout.iter().any(|&d| d) {
            let ba = core::mem::replace(&mut new_grids[lev], BoxArray::new(Vec::new()));
            let chopped = mesh.chop_grids(lev, ba, nprocs);
            new_grids[lev] = match mesh.finest_level() {
                Some(f) if lev <= f && chopped == *mesh.box_array(lev) => {
                    mesh.box_array(lev).clone()
                }
                _ => chopped,
            };
        }
    }
    Ok(new_finest)
}

/// The body of [`AmrCore::init_from_scratch`].
#[expect(
    clippy::needless_range_loop,
    reason = "levels are indices into the mesh and new_grids alike"
)]
fn init_from_scratch<C: AmrCore>(core: &mut C, time: f64) -> Result<(), C::Error> {
    let comm = Communicator::current();
    let ba = core.mesh().make_base_grids(comm.size());
    let dm = DistributionMapping::new(&ba);
    say_new_dm(core.mesh(), &comm, 0);
    core.make_new_level_from_scratch(0, time, &ba, &dm)?;
    core.mesh_mut().truncate(0);
    core.mesh_mut().set_level(0, ba, dm);
    let max_level = core.mesh().max_level();
    if max_level == 0 {
        return Ok(());
    }
    let mut new_grids = vec![BoxArray::new(Vec::new()); max_level + 1];
    new_grids[0] = core.mesh().box_array(0).clone();
    let mut finest = 0;
    while finest < max_level {
        let nf = make_new_grids(core, finest, time, &mut new_grids)?;
        if nf <= finest {
            break;
        }
        finest = nf;
        let dm = DistributionMapping::new(&new_grids[nf]);
        say_new_dm(core.mesh(), &comm, nf);
        core.make_new_level_from_scratch(nf, time, &new_grids[nf], &dm)?;
        core.mesh_mut().set_level(nf, new_grids[nf].clone(), dm);
    }
    if !core.mesh().info().iterate_on_new_grids {
        return Ok(());
    }
    for _ in 0..4 {
        for (i, g) in new_grids.iter_mut().enumerate().take(finest + 1).skip(1) {
            *g = core.mesh().box_array(i).clone();
        }
        let nf = make_new_grids(core, 0, time, &mut new_grids)?;
        if nf < finest {
            break;
        }
        finest = nf;
        let mut same = true;
        for lev in 1..=nf {
            let exists = core.mesh().finest_level().is_some_and(|f| lev <= f);
            if !exists || new_grids[lev] != *core.mesh().box_array(lev) {
                same = false;
                let dm = DistributionMapping::new(&new_grids[lev]);
                say_new_dm(core.mesh(), &comm, lev);
                core.make_new_level_from_scratch(lev, time, &new_grids[lev], &dm)?;
                core.mesh_mut().set_level(lev, new_grids[lev].clone(), dm);
            }
        }
        if same {
            break;
        }
    }
    Ok(())
}

/// The body of [`AmrCore::regrid`].
#[expect(
    clippy::needless_range_loop,
    reason = "levels are indices into the mesh and new_grids alike"
)]
fn regrid<C: AmrCore>(core: &mut C, lbase: usize, time: f64) -> Result<(), C::Error> {
    if lbase >= core.mesh().max_level() {
        return Ok(());
    }
    let Some(finest) = core.mesh().finest_level() else {
        return Err(AmrError::new(
            "AmrCore::regrid",
            AmrErrorKind::BadParameter {
                key: String::from("lbase"),
                detail: String::from("the hierarchy has no levels yet (init_from_scratch first)"),
            },
        )
        .into());
    };
    let comm = comm_of(core.mesh());
    let mut new_grids = vec![BoxArray::new(Vec::new()); finest + 2];
    let nf = make_new_grids(core, lbase, time, &mut new_grids)?;
    let mut coarse_ba_changed = false;
    for lev in lbase + 1..=nf {
        if lev <= finest {
            let old_ba = core.mesh().box_array(lev).clone();
            let ba_changed = new_grids[lev] != old_ba;
            if ba_changed || coarse_ba_changed {
                let (ba, dm) = if ba_changed {
                    say_new_dm(core.mesh(), &comm, lev);
                    let dm = DistributionMapping::new(&new_grids[lev]);
                    (new_grids[lev].clone(), dm)
                } else {
                    (old_ba, core.mesh().dist_map(lev).clone())
                };
                core.remake_level(lev, time, &ba, &dm)?;
                core.mesh_mut().set_level(lev, ba, dm);
            }
            coarse_ba_changed = ba_changed;
        } else {
            let dm = DistributionMapping::new(&new_grids[lev]);
            say_new_dm(core.mesh(), &comm, lev);
            core.make_new_level_from_coarse(lev, time, &new_grids[lev], &dm)?;
            core.mesh_mut().set_level(lev, new_grids[lev].clone(), dm);
        }
    }
    for lev in nf + 1..=finest {
        core.clear_level(lev);
    }
    core.mesh_mut().truncate(nf);
    Ok(())
}
