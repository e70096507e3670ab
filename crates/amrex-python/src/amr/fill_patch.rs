//! `fill_patch_single_level`, `fill_patch_two_levels` and `interp_from_coarse_level` with
//! pyAMReX's argument lists (`src/AmrCore/FillPatchUtil.cpp`): filling a MultiFab, ghost
//! cells included, from its own level's states and, where they do not reach, from the
//! next coarser level through an interpolater.

use crate::amr::bc::{Boundary, PyBCRec, PyPhysBCFunct};
use crate::amr::geometry::PyGeometry;
use crate::amr::interp::PyInterpolater;
use crate::error::py_err;
use crate::geometry::int_vect_of;
use crate::multifab::PyMultiFab;
use amrex_amr::fill_patch::{
    Source, fill_patch_single_level, fill_patch_two_levels, interp_from_coarse_level,
};
use amrex_amr::{Comps, IntVect};
use amrex_multifab::MultiFab;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The states a fill reads, borrowed for the call; `ValueError` if the MultiFab to fill
/// is one of them.
fn states<'py>(
    op: &str,
    mf: &Bound<'py, PyMultiFab>,
    smf: &[Bound<'py, PyMultiFab>],
) -> PyResult<Vec<PyRef<'py, PyMultiFab>>> {
    if smf.iter().any(|s| s.is(mf)) {
        return Err(PyValueError::new_err(format!(
            "{op}: the MultiFab to fill is also one of the source states"
        )));
    }
    smf.iter().map(|s| Ok(s.try_borrow()?)).collect()
}

/// Host views of borrowed states.
fn hosts<'a>(s: &'a [PyRef<'_, PyMultiFab>]) -> PyResult<Vec<&'a MultiFab>> {
    s.iter().map(|m| m.host()).collect()
}

/// `ValueError` unless `geom` is the boundary conditions' geometry (pyAMReX passes both;
/// here the conditions carry the geometry, so the two must agree).
fn same_geometry(op: &str, what: &str, geom: &PyGeometry, bc: &Boundary) -> PyResult<()> {
    if geom.0 == *bc.geometry() {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!(
            "{op}: {what} is not the geometry of its PhysBCFunct"
        )))
    }
}

/// The ghost width to fill: `nghost`, or the MultiFab's whole ghost width.
fn nghost_of(nghost: Option<&Bound<'_, PyAny>>, mf: &MultiFab) -> PyResult<IntVect> {
    nghost.map_or(Ok(mf.n_grow()), int_vect_of)
}

/// Boundary records for the interpolater (pyAMReX's `bcs` from `bcscomp`), checked to
/// be `BCRec`s, one for each component filled. The interpolaters here read no boundary
/// records (AMReX's use them for one-sided slopes at `ext_dir` faces, which this
/// library does not build), so they are only checked.
fn check_bcs(
    op: &str,
    bcs: Option<&Bound<'_, PyAny>>,
    bcscomp: usize,
    ncomp: usize,
) -> PyResult<()> {
    let Some(b) = bcs else { return Ok(()) };
    let mut given = 0;
    for r in b.try_iter()? {
        r?.cast::<PyBCRec>()?;
        given += 1;
    }
    let needed = bcscomp.saturating_add(ncomp);
    if given < needed {
        return Err(PyValueError::new_err(format!(
            "{op}: bcs needs {needed} records (bcscomp + ncomp), got {given}"
        )));
    }
    Ok(())
}

/// Fills components `dcomp..dcomp + ncomp` of `mf` (valid cells and `nghost` ghost
/// cells, all of them by default) at time `time` from the states `smf` (one, or two at
/// the times `stime`, interpolated linearly in time), components `scomp..`: copies
/// from the states (periodic images included), then `physbcf` beyond the non-periodic
/// domain faces, its records from `bcfcomp` (pyAMReX and AMReX
/// `FillPatchSingleLevel`). `geom` must be `physbcf`'s geometry.
///
/// `ValueError`, before anything is written, for a bad ghost width, components or
/// time, other than one or two states with one time each, states on different layouts,
/// or too few boundary records.
#[pyfunction]
#[pyo3(
    name = "fill_patch_single_level",
    signature = (mf, time, smf, stime, scomp, dcomp, ncomp, geom, physbcf, bcfcomp=0, nghost=None)
)]
#[expect(clippy::too_many_arguments, reason = "AMReX's argument list")]
fn fill_patch_single_level_py(
    py: Python<'_>,
    mf: &Bound<'_, PyMultiFab>,
    time: f64,
    smf: Vec<Bound<'_, PyMultiFab>>,
    stime: Vec<f64>,
    scomp: usize,
    dcomp: usize,
    ncomp: usize,
    geom: &PyGeometry,
    physbcf: &PyPhysBCFunct,
    bcfcomp: usize,
    nghost: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    const OP: &str = "fill_patch_single_level";
    same_geometry(OP, "geom", geom, &physbcf.0)?;
    let held = states(OP, mf, &smf)?;
    let src = hosts(&held)?;
    let mut dst = mf.try_borrow_mut()?;
    let dst = dst.host_mut()?;
    let ng = nghost_of(nghost, dst)?;
    physbcf.0.with(py, |bc| {
        let s = Source::from_slices(&src, &stime, bc).map_err(py_err)?;
        fill_patch_single_level(
            dst,
            ng,
            time,
            &s.with_bc_comp(bcfcomp),
            Comps::new(scomp, dcomp, ncomp),
        )
        .map_err(py_err)
    })
}

/// Fills components `dcomp..dcomp + ncomp` of the fine-level MultiFab `mf` (valid and
/// `nghost` ghost cells) at time `time`: from the fine states `fmf` at times `ft` where
/// they reach, elsewhere from the coarse states `cmf` at times `ct`, filled on the
/// coarse level (`cbc` from record `cbccomp`) and interpolated by `mapper` with
/// refinement `ratio`; the fine physical boundary `fbc` (from `fbccomp`) beyond the
/// fine domain (pyAMReX and AMReX `FillPatchTwoLevels`). `cgeom` and `fgeom` must be the
/// geometries of `cbc` and `fbc`, and `fgeom` `cgeom` refined by `ratio`. `bcs` and
/// `bcscomp` (AMReX's records for the interpolater) are accepted and checked (`BCRec`s,
/// one per component from `bcscomp`), but not read: the interpolaters here take no
/// boundary records.
///
/// `ValueError`, before anything is written, for the errors of
/// `fill_patch_single_level` on either level, a bad ratio, geometries that do not match,
/// data the interpolater does not take, or a fine level not properly nested in the
/// coarse one (coarse cells the interpolation needs that no coarse box covers).
#[pyfunction]
#[pyo3(
    name = "fill_patch_two_levels",
    signature = (
        mf, time, cmf, ct, fmf, ft, scomp, dcomp, ncomp, cgeom, fgeom, cbc, cbccomp, fbc,
        fbccomp, ratio, mapper, bcs=None, bcscomp=0, nghost=None
    )
)]
#[expect(clippy::too_many_arguments, reason = "AMReX's argument list")]
fn fill_patch_two_levels_py(
    py: Python<'_>,
    mf: &Bound<'_, PyMultiFab>,
    time: f64,
    cmf: Vec<Bound<'_, PyMultiFab>>,
    ct: Vec<f64>,
    fmf: Vec<Bound<'_, PyMultiFab>>,
    ft: Vec<f64>,
    scomp: usize,
    dcomp: usize,
    ncomp: usize,
    cgeom: &PyGeometry,
    fgeom: &PyGeometry,
    cbc: &PyPhysBCFunct,
    cbccomp: usize,
    fbc: &PyPhysBCFunct,
    fbccomp: usize,
    ratio: &Bound<'_, PyAny>,
    mapper: &PyInterpolater,
    bcs: Option<&Bound<'_, PyAny>>,
    bcscomp: usize,
    nghost: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    const OP: &str = "fill_patch_two_levels";
    check_bcs(OP, bcs, bcscomp, ncomp)?;
    same_geometry(OP, "cgeom", cgeom, &cbc.0)?;
    same_geometry(OP, "fgeom", fgeom, &fbc.0)?;
    check_ratio(OP, int_vect_of(ratio)?, cgeom, fgeom)?;
    let (c_held, f_held) = (states(OP, mf, &cmf)?, states(OP, mf, &fmf)?);
    let (csrc, fsrc) = (hosts(&c_held)?, hosts(&f_held)?);
    let mut dst = mf.try_borrow_mut()?;
    let dst = dst.host_mut()?;
    let ng = nghost_of(nghost, dst)?;
    cbc.0.with(py, |c| {
        fbc.0.with(py, |f| {
            let cs = Source::from_slices(&csrc, &ct, c).map_err(py_err)?;
            let fs = Source::from_slices(&fsrc, &ft, f).map_err(py_err)?;
            let (cs, fs) = (cs.with_bc_comp(cbccomp), fs.with_bc_comp(fbccomp));
            fill_patch_two_levels(
                dst,
                ng,
                time,
                &cs,
                &fs,
                Comps::new(scomp, dcomp, ncomp),
                mapper.get(),
            )
            .map_err(py_err)
        })
    })
}

/// Fills components `dcomp..dcomp + ncomp` of a new fine level `mf` (valid and `nghost`
/// ghost cells) entirely from the coarse MultiFab `cmf` at time `time`: filled on the
/// coarse level (`cbc` from `cbccomp`), interpolated by `mapper`, then the fine physical
/// boundary `fbc` (from `fbccomp`) beyond the fine domain (pyAMReX and AMReX
/// `InterpFromCoarseLevel`, used when a level appears). Geometries, `bcs` and errors as
/// for `fill_patch_two_levels`.
#[pyfunction]
#[pyo3(
    name = "interp_from_coarse_level",
    signature = (
        mf, time, cmf, scomp, dcomp, ncomp, cgeom, fgeom, cbc, cbccomp, fbc, fbccomp, ratio,
        mapper, bcs=None, bcscomp=0, nghost=None
    )
)]
#[expect(clippy::too_many_arguments, reason = "AMReX's argument list")]
fn interp_from_coarse_level_py(
    py: Python<'_>,
    mf: &Bound<'_, PyMultiFab>,
    time: f64,
    cmf: Bound<'_, PyMultiFab>,
    scomp: usize,
    dcomp: usize,
    ncomp: usize,
    cgeom: &PyGeometry,
    fgeom: &PyGeometry,
    cbc: &PyPhysBCFunct,
    cbccomp: usize,
    fbc: &PyPhysBCFunct,
    fbccomp: usize,
    ratio: &Bound<'_, PyAny>,
    mapper: &PyInterpolater,
    bcs: Option<&Bound<'_, PyAny>>,
    bcscomp: usize,
    nghost: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    const OP: &str = "interp_from_coarse_level";
    check_bcs(OP, bcs, bcscomp, ncomp)?;
    same_geometry(OP, "cgeom", cgeom, &cbc.0)?;
    same_geometry(OP, "fgeom", fgeom, &fbc.0)?;
    check_ratio(OP, int_vect_of(ratio)?, cgeom, fgeom)?;
    let held = states(OP, mf, core::slice::from_ref(&cmf))?;
    let csrc = hosts(&held)?;
    let mut dst = mf.try_borrow_mut()?;
    let dst = dst.host_mut()?;
    let ng = nghost_of(nghost, dst)?;
    cbc.0.with(py, |c| {
        fbc.0.with(py, |f| {
            let cs = Source::at(csrc[0], c).with_bc_comp(cbccomp);
            interp_from_coarse_level(
                dst,
                ng,
                time,
                &cs,
                f.from_record(fbccomp),
                Comps::new(scomp, dcomp, ncomp),
                mapper.get(),
            )
            .map_err(py_err)
        })
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fill_patch_single_level_py, m)?)?;
    m.add_function(wrap_pyfunction!(fill_patch_two_levels_py, m)?)?;
    m.add_function(wrap_pyfunction!(interp_from_coarse_level_py, m)?)
}

/// AMReX takes the refinement ratio next to the two geometries; the Rust functions read
/// it off them, so a `ratio` that disagrees with them is refused here, naming both.
fn check_ratio(op: &str, ratio: IntVect, cgeom: &PyGeometry, fgeom: &PyGeometry) -> PyResult<()> {
    let (c, f) = (cgeom.0.domain(), fgeom.0.domain());
    if c.refine_iv(ratio) == f {
        Ok(())
    } else {
        Err(pyo3::exceptions::PyValueError::new_err(format!(
            "{op}: the fine domain {f} is not the coarse domain {c} refined by ratio {ratio}"
        )))
    }
}
