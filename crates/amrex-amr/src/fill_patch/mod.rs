//! FillPatch (AMReX's `AMReX_FillPatchUtil`): filling a MultiFab — valid cells and ghost
//! cells — from the states of its own level where they reach, and from the next coarser
//! level through an [`Interpolater`] where they do not, with periodic images and the
//! physical boundary conditions, at a time between two states.
//!
//! | AMReX | here |
//! |---|---|
//! | `FillPatchSingleLevel(mf, nghost, time, smf, stime, scomp, dcomp, ncomp, geom, physbcf, bcfcomp)` | [`fill_patch_single_level`] |
//! | `FillPatchTwoLevels(mf, nghost, time, cmf, ct, fmf, ft, scomp, dcomp, ncomp, cgeom, fgeom, cbc, cbccomp, fbc, fbccomp, ratio, mapper, bcs, bcscomp)` | [`fill_patch_two_levels`] |
//! | `InterpFromCoarseLevel(mf, nghost, time, cmf, scomp, dcomp, ncomp, cgeom, fgeom, cbc, cbccomp, fbc, fbccomp, ratio, mapper, bcs, bcscomp)` | [`interp_from_coarse_level`] |
//!
//! A level's states, times and boundary conditions (geometry included) travel as one
//! [`Source`]. The component arguments mean what AMReX's do: components `scomp ..
//! scomp + ncomp` of the states fill components `dcomp .. dcomp + ncomp` of `mf`, and the
//! boundary records start at the source's [`bc_comp`](Source::with_bc_comp). `nghost`
//! is how far around its valid boxes `mf` is filled (at most its ghost width).
//!
//! Every result is independent of how the boxes are distributed over ranks: each value
//! is computed from the same coarse and fine cells whichever rank computes it.

mod patches;
mod source;

pub use source::Source;

use crate::comps::Comps;
use alloc::vec::Vec;
use amrex_box::{IndexBox, IntVect, SPACEDIM};
use amrex_geometry::Geometry;
use amrex_multifab::{BoxArray, CopyOp, DistributionMapping, MultiFab, Periodicity, Tiling};
use core::ops::Range;

use crate::boundary::BcRecords;
use crate::check;
#[cfg(doc)]
use crate::error::AmrErrorKind;
use crate::error::{AmrError, Operand, fab_err};
use crate::interp::Interpolater;
use source::States;

/// Fills components `comps.dst_range()` of `mf` over its valid boxes grown by `nghost`
/// from components `comps.src_range()` of one level's states at time `time` (AMReX's
/// `FillPatchSingleLevel` with `scomp, dcomp, ncomp` as one [`Comps`]):
///
/// 1. one state: a `ParallelCopy` of its components (valid cells, periodic
///    images included) into `mf`;
///    two states: the linear interpolation in time [`Source::between`] describes, computed
///    on the states' layout — directly into `mf` when it has that BoxArray and
///    distribution, then a `FillBoundary` of `mf`'s ghost cells; else into a temporary
///    that a `ParallelCopy` lands in `mf`;
/// 2. the physical boundary conditions of the source beyond the non-periodic domain
///    faces ([`fill_physical_boundary`](crate::boundary::fill_physical_boundary)'s rules,
///    over the boxes grown by `nghost`).
///
/// Cells of the grown boxes that no state covers and that lie inside the domain keep
/// what `mf` held (the single-level fill of a level that does not cover its domain
/// leaves them for [`fill_patch_two_levels`]).
///
/// ```
/// use amrex_amr::boundary::{BCRec, BCType, PhysBcFunct};
/// use amrex_amr::Comps;
/// use amrex_amr::fill_patch::{Source, fill_patch_single_level};
/// use amrex_geometry::{CoordSys, Geometry, RealBox};
/// use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IntVect, MultiFab};
///
/// // 8³ cells, periodic in y and z, walls (`foextrap`) in x; states at t = 0 and t = 1.
/// let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(7));
/// let geom = Geometry::new(domain, RealBox::UNIT, CoordSys::Cartesian, [false, true, true])?;
/// let ba = BoxArray::from_domain(domain, 4);
/// let dm = DistributionMapping::single(&ba);
/// let mut old = MultiFab::new(&ba, &dm, 1, IntVect::ZERO);
/// let mut new = MultiFab::new(&ba, &dm, 1, IntVect::ZERO);
/// old.set_val(1.0, .., 0)?;
/// new.set_val(3.0, .., 0)?;
/// let bc = PhysBcFunct::new(geom, vec![BCRec::uniform(BCType::FoExtrap)], |_, _, _| 0.0);
///
/// // Halfway: every cell, ghost cells beyond the walls included, holds 2.
/// let mut mf = MultiFab::new(&ba, &dm, 1, IntVect::splat(2));
/// fill_patch_single_level(&mut mf, 2, 0.5, &Source::between((&old, 0.0), (&new, 1.0), &bc), Comps::first(1))?;
/// assert_eq!(mf.min(.., 2)?, 2.0);
/// assert_eq!(mf.max(.., 2)?, 2.0);
/// # Ok::<(), Box<dyn core::error::Error>>(())
/// ```
///
/// # Errors
/// Before anything is written: [`GhostTooWide`](AmrErrorKind::GhostTooWide) for a
/// negative `nghost` or one past `mf`'s; [`ComponentsOutside`](AmrErrorKind::ComponentsOutside)
/// for components past `mf`'s or a state's; [`IndexTypeMismatch`](AmrErrorKind::IndexTypeMismatch)
/// for a state of another index type; [`StatesDiffer`](AmrErrorKind::StatesDiffer) for two
/// states of different layouts; [`NotFinite`](AmrErrorKind::NotFinite) for a time that is
/// not finite; [`TooFewBcRecs`](AmrErrorKind::TooFewBcRecs);
/// [`UnsupportedIndexType`](AmrErrorKind::UnsupportedIndexType) for data neither
/// cell-centred nor nodal beyond a non-periodic face. [`MultiFab`](AmrErrorKind::MultiFab) when
/// the `ParallelCopy` is refused (MultiFabs on other communicators, ranks that disagree);
/// that is found before anything is written too.
pub fn fill_patch_single_level<F>(
    mf: &mut MultiFab,
    nghost: impl Into<IntVect>,
    time: f64,
    src: &Source<'_, F>,
    comps: impl Into<Comps>,
) -> Result<(), AmrError>
where
    F: Fn([f64; SPACEDIM], f64, usize) -> f64,
{
    let Comps {
        src: scomp,
        dst: dcomp,
        count: ncomp,
    } = comps.into();
    const OP: &str = "fill_patch_single_level";
    let ng = nghost.into();
    src.hashed(dest_agreement(OP, mf, ng, time, [scomp, dcomp, ncomp]))
        .check(mf.communicator())?;
    check_dest(OP, mf, ng, time, dcomp, ncomp)?;
    let ix = mf.box_array().ix_type();
    src.check(OP, Operand::Source, ix, scomp, ncomp)?;
    check::boundary_type(OP, ix, src.geometry())?;
    single_level(OP, mf, ng, time, src, Comps::new(scomp, dcomp, ncomp))
}

/// Fills components `comps.dst_range()` of `mf` (on the fine level), from components
/// `comps.src_range()` of the states, over its valid boxes grown by `nghost` at time
/// `time` (AMReX's `FillPatchTwoLevels`; the refinement ratio is the fine geometry's
/// domain over the coarse one's, which AMReX passes separately): where the
/// fine states' boxes do not reach (inside the fine domain, grown by `nghost` in the
/// periodic directions), from the coarse states, filled first with
/// [`fill_patch_single_level`] on the coarse boxes `mapper` needs and interpolated
/// onto the fine cells by `mapper`; then everything the fine states hold, periodic
/// images and the fine physical boundary conditions, by [`fill_patch_single_level`].
///
/// The pieces to interpolate are the parts of each grown box of `mf` that no fine box
/// covers, as AMReX computes them (`FabArrayBase::FPinfo`); each is interpolated on the
/// rank that owns the box of `mf` it came from, straight into that box (AMReX balances
/// them over the ranks instead; the values do not depend on where they are computed). The coarse data in
/// those pieces start as NaN, so a coarse cell that nothing fills shows in the result.
///
/// # Errors
/// Before anything is written: those of [`fill_patch_single_level`] for either source;
/// [`BadRatio`](AmrErrorKind::BadRatio) for a fine domain smaller than the coarse one;
/// [`GeometryMismatch`](AmrErrorKind::GeometryMismatch) unless the fine geometry is the
/// coarse one refined by a whole ratio in every direction; [`WrongIndexType`](AmrErrorKind::WrongIndexType) for
/// data `mapper` does not take; [`BoxOutsideDomain`](AmrErrorKind::BoxOutsideDomain)
/// for a box of `mf` outside the fine domain; [`NotCovered`](AmrErrorKind::NotCovered)
/// when the coarse states do not hold coarse cells the interpolation needs (a fine
/// level not properly nested in the coarse one).
pub fn fill_patch_two_levels<FC, FF, I>(
    mf: &mut MultiFab,
    nghost: impl Into<IntVect>,
    time: f64,
    crse: &Source<'_, FC>,
    fine: &Source<'_, FF>,
    comps: impl Into<Comps>,
    mapper: &I,
) -> Result<(), AmrError>
where
    FC: Fn([f64; SPACEDIM], f64, usize) -> f64,
    FF: Fn([f64; SPACEDIM], f64, usize) -> f64,
    I: Interpolater + ?Sized,
{
    let Comps {
        src: scomp,
        dst: dcomp,
        count: ncomp,
    } = comps.into();
    const OP: &str = "fill_patch_two_levels";
    let ng = nghost.into();
    let ag = dest_agreement(OP, mf, ng, time, [scomp, dcomp, ncomp]);
    fine.hashed(crse.hashed(ag).name(mapper.name()))
        .check(mf.communicator())?;
    check_dest(OP, mf, ng, time, dcomp, ncomp)?;
    let ix = mf.box_array().ix_type();
    fine.check(OP, Operand::Fine, ix, scomp, ncomp)?;
    crse.check(OP, Operand::Crse, ix, scomp, ncomp)?;
    let ratio = check_levels(OP, mf, crse.geometry(), fine.geometry(), mapper)?;
    let fstate = fine.first();
    let fine_layout =
        mf.box_array() == fstate.box_array() && mf.distribution_map() == fstate.distribution_map();
    if ng != IntVect::ZERO || !fine_layout {
        let fdom = fine.geometry().grow_periodic_domain(ng).convert(ix);
        let pieces = patches::uncovered(mf, ng, fdom, fstate.box_array());
        if !pieces.is_empty() {
            interp_onto(
                OP,
                mf,
                &pieces,
                time,
                crse,
                (scomp, dcomp, ncomp),
                ratio,
                ng,
                mapper,
                fine.geometry(),
            )?;
        }
    }
    single_level(OP, mf, ng, time, fine, Comps::new(scomp, dcomp, ncomp))
}

/// Fills components `comps.dst_range()` of a new fine level `mf` over its valid boxes
/// grown by `nghost` entirely from components `comps.src_range()` of the coarse level (AMReX's
/// `InterpFromCoarseLevel`, used when a level is made or regridded): the coarse states
/// are filled on the coarse boxes `mapper` needs with [`fill_patch_single_level`] at
/// time `time`, interpolated onto each grown box (cut to the fine domain grown by
/// `nghost` in the periodic directions), and the fine physical boundary conditions
/// `fine_bc` (from its record `first`: `&bc`, or `bc.from_record(first)`, AMReX's
/// `fbccomp`) fill what lies beyond the fine domain. The ratio is read off the
/// geometries, as in [`fill_patch_two_levels`].
///
/// # Errors
/// As [`fill_patch_two_levels`].
pub fn interp_from_coarse_level<'b, FC, FF, I>(
    mf: &mut MultiFab,
    nghost: impl Into<IntVect>,
    time: f64,
    crse: &Source<'_, FC>,
    fine_bc: impl Into<BcRecords<'b, FF>>,
    comps: impl Into<Comps>,
    mapper: &I,
) -> Result<(), AmrError>
where
    FC: Fn([f64; SPACEDIM], f64, usize) -> f64,
    FF: Fn([f64; SPACEDIM], f64, usize) -> f64,
    FF: 'b,
    I: Interpolater + ?Sized,
{
    let Comps {
        src: scomp,
        dst: dcomp,
        count: ncomp,
    } = comps.into();
    const OP: &str = "interp_from_coarse_level";
    let ng = nghost.into();
    let BcRecords {
        bc: fine_bc,
        first: fine_bc_comp,
    } = fine_bc.into();
    crse.hashed(dest_agreement(OP, mf, ng, time, [scomp, dcomp, ncomp]))
        .geom(fine_bc.geometry())
        .bcrecs(fine_bc.bcrecs())
        .words(&[fine_bc_comp])
        .name(mapper.name())
        .check(mf.communicator())?;
    check_dest(OP, mf, ng, time, dcomp, ncomp)?;
    let ix = mf.box_array().ix_type();
    crse.check(OP, Operand::Crse, ix, scomp, ncomp)?;
    check::bc_records(OP, fine_bc.bcrecs().len(), fine_bc_comp, ncomp)?;
    let fgeom = *fine_bc.geometry();
    let ratio = check_levels(OP, mf, crse.geometry(), &fgeom, mapper)?;
    let fdom = fine_bc.geometry().grow_periodic_domain(ng).convert(ix);
    let ba = mf.box_array().clone();
    let pieces: Vec<(IndexBox, usize)> = (0..ba.len())
        .filter_map(|i| ba.get(i).grow_iv(ng).intersection(&fdom).map(|b| (b, i)))
        .collect();
    if ncomp == 0 || pieces.is_empty() {
        return Ok(());
    }
    interp_onto(
        OP,
        mf,
        &pieces,
        time,
        crse,
        (scomp, dcomp, ncomp),
        ratio,
        ng,
        mapper,
        &fgeom,
    )?;
    fine_bc.fill_unchecked(mf, fine_bc_comp, dcomp..dcomp + ncomp, ng, time);
    Ok(())
}

/// The agreement of a fill's destination and its scalar arguments.
fn dest_agreement(
    op: &'static str,
    mf: &MultiFab,
    ng: IntVect,
    time: f64,
    comps: [usize; 3],
) -> check::Agreement {
    check::Agreement::new(op)
        .mf(mf)
        .iv(ng)
        .reals(&[time])
        .words(&comps)
}

/// Checks the destination: ghost width, components, a finite time.
fn check_dest(
    op: &'static str,
    mf: &MultiFab,
    ng: IntVect,
    time: f64,
    dcomp: usize,
    ncomp: usize,
) -> Result<(), AmrError> {
    check::ghost(op, Operand::Dest, ng, mf.n_grow())?;
    check::comps(op, Operand::Dest, dcomp, ncomp, mf.ncomp())?;
    check::finite(op, "time", time)
}

/// Checks what a two-level fill adds: the geometries (the fine one the coarse one
/// refined), the interpolater's index types, the destination's boxes inside the fine
/// domain, and the boundary fills' index types. Returns the ratio.
fn check_levels<I: Interpolater + ?Sized>(
    op: &'static str,
    mf: &MultiFab,
    cgeom: &Geometry,
    fgeom: &Geometry,
    mapper: &I,
) -> Result<IntVect, AmrError> {
    let ratio = check::ratio_of(op, fgeom, cgeom)?;
    let ix = mf.box_array().ix_type();
    check::centring(op, Operand::Dest, ix, mapper.centring())?;
    check::boundary_type(op, ix, fgeom)?;
    check::boundary_type(op, ix, cgeom)?;
    check::boxes_in_domain(op, mf.box_array(), fgeom)?;
    Ok(ratio)
}

/// The single-level fill, arguments checked.
fn single_level<F>(
    op: &'static str,
    mf: &mut MultiFab,
    ng: IntVect,
    time: f64,
    src: &Source<'_, F>,
    comps: impl Into<Comps>,
) -> Result<(), AmrError>
where
    F: Fn([f64; SPACEDIM], f64, usize) -> f64,
{
    let Comps {
        src: scomp,
        dst: dcomp,
        count: ncomp,
    } = comps.into();
    if ncomp == 0 {
        return Ok(());
    }
    let copy_err = fab_err(op);
    let geom = *src.geometry();
    let period = geom.periodicity();
    let dst = dcomp..dcomp + ncomp;
    match src.states {
        States::One(s) => copy_onto(mf, s, scomp, period, dst.clone(), ng).map_err(copy_err)?,
        States::Two((s0, t0), (s1, t1)) => {
            let same =
                mf.box_array() == s0.box_array() && mf.distribution_map() == s0.distribution_map();
            if same {
                // `mf`'s layout is the states' and is checked; these cannot fail.
                time_interp(mf, dcomp, (s0, t0), (s1, t1), scomp, ncomp, time).map_err(copy_err)?;
                mf.fill_boundary_with(period, amrex_multifab::FillPattern::Full, dst.clone(), ng)
                    .map_err(copy_err)?;
            } else {
                let mut tmp =
                    MultiFab::new(s0.box_array(), s0.distribution_map(), ncomp, IntVect::ZERO);
                time_interp(&mut tmp, 0, (s0, t0), (s1, t1), scomp, ncomp, time)
                    .map_err(copy_err)?;
                copy_onto(mf, &tmp, 0, period, dst.clone(), ng).map_err(copy_err)?;
            }
        }
    }
    src.bc.fill_unchecked(mf, src.bc_comp, dst, ng, time);
    Ok(())
}

/// Components `dst` of `mf` over its valid boxes grown by `ng` from the valid cells of
/// `src` (components `scomp..`), periodic images of `period` included.
fn copy_onto(
    mf: &mut MultiFab,
    src: &MultiFab,
    scomp: usize,
    period: Periodicity,
    dst: Range<usize>,
    ng: IntVect,
) -> Result<(), amrex_multifab::FabArrayError> {
    mf.parallel_copy_with(src, scomp, IntVect::ZERO, period, CopyOp::Copy, dst, ng)
}

/// `dst[dcomp..] = s0` at `t0`, `s1` at `t1`, else AMReX's linear weights, over the valid
/// cells (`dst` has the states' layout).
fn time_interp(
    dst: &mut MultiFab,
    dcomp: usize,
    (s0, t0): (&MultiFab, f64),
    (s1, t1): (&MultiFab, f64),
    scomp: usize,
    ncomp: usize,
    time: f64,
) -> Result<(), amrex_multifab::FabArrayError> {
    let comps = dcomp..dcomp + ncomp;
    // `dst` is not `s0` or `s1` (it is borrowed mutably while they are shared), so the
    // copy AMReX skips when they alias always runs here.
    if time == t0 {
        dst.copy_from(s0, scomp, comps, 0)
    } else if time == t1 {
        dst.copy_from(s1, scomp, comps, 0)
    } else if (t1 - t0).abs() > 1e-16 {
        let alpha = (t1 - time) / (t1 - t0);
        let beta = (time - t0) / (t1 - t0);
        dst.lin_comb(alpha, s0, scomp, beta, s1, scomp, comps, 0)
    } else {
        dst.copy_from(s0, scomp, comps, 0)
    }
}

/// Interpolates the coarse level onto the fine boxes `pieces` (each with the index of
/// the box of `mf`, grown by `ng`, that holds it) straight into components `dcomp ..
/// dcomp + ncomp` of `mf`: the coarse boxes `mapper` needs are filled from `crse` by the
/// single-level fill, after a check that the coarse states cover them (each on the rank
/// that owns the piece's box), then the fabs of `mf` are filled in parallel, one task per
/// fab and its pieces, with `mf`'s level's geometry.
///
/// Writing each piece into its own box only gives what a copy of every piece into every
/// grown box it meets would: a fine cell in two grown boxes and in no fine box lies in a
/// piece of each, and the interpolaters' values depend on the coarse cells around the
/// fine cell only, not on the piece.
#[expect(clippy::too_many_arguments, reason = "the two-level fill's arguments")]
fn interp_onto<FC, I>(
    op: &'static str,
    mf: &mut MultiFab,
    pieces: &[(IndexBox, usize)],
    time: f64,
    crse: &Source<'_, FC>,
    (scomp, dcomp, ncomp): (usize, usize, usize),
    ratio: IntVect,
    ng: IntVect,
    mapper: &I,
    fgeom: &Geometry,
) -> Result<(), AmrError>
where
    FC: Fn([f64; SPACEDIM], f64, usize) -> f64,
    I: Interpolater + ?Sized,
{
    let pmap = mf.distribution_map().pmap();
    let owners: Vec<u32> = pieces.iter().map(|p| pmap[p.1]).collect();
    let cgeom = crse.geometry();
    let crse_boxes: Vec<_> = pieces
        .iter()
        .map(|p| patches::with_boundary_stencil(mapper.coarse_box(&p.0, ratio), cgeom))
        .collect();
    patches::check_covered(op, &crse_boxes, crse.first().box_array(), crse.geometry())?;
    let dm = DistributionMapping::from_pmap_on(owners, mf.communicator());
    let crse_ba = BoxArray::new(crse_boxes);
    let mut crse_patch = MultiFab::new(&crse_ba, &dm, ncomp, IntVect::ZERO);
    crse_patch.set_val(f64::NAN, .., 0).map_err(fab_err(op))?;
    single_level(
        op,
        &mut crse_patch,
        IntVect::ZERO,
        time,
        crse,
        Comps::new(scomp, 0, ncomp),
    )?;
    // Per box of `mf`: its local pieces, each with its coarse patch's local index.
    let mut by_box: Vec<Vec<(IndexBox, usize)>> = Vec::new();
    by_box.resize_with(mf.box_array().len(), Vec::new);
    for l in 0..crse_patch.local_size() {
        let (region, i) = pieces[crse_patch.global_index(l)];
        by_box[i].push((region, l));
    }
    // `fill`'s guarantees hold by construction, so `interp`'s checks are not repeated:
    // the ratio and the index type were checked (`check_levels`), components `dcomp ..
    // dcomp + ncomp` are in `mf` (`check_dest`) and the coarse patch has `ncomp`; a piece
    // is non-empty and inside its box grown by `ng`, the tile's region; its coarse box
    // is inside its coarse patch's box.
    mf.par_for_each_tile(Tiling::None, ng, |mut t| {
        for &(region, l) in &by_box[t.index()] {
            mapper.fill(
                crse_patch.array_at(l),
                t.array_mut().into_components(dcomp, ncomp),
                &region,
                ratio,
                Some(fgeom),
            );
        }
    });
    Ok(())
}
