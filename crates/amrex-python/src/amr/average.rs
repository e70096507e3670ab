//! `average_down`, `average_down_faces`, `average_down_nodal` and `sum_fine_to_coarse`
//! with pyAMReX's argument order (`src/Base/MultiFabUtil.cpp`).

use crate::amr::geometry::PyGeometry;
use crate::amr::read_write;
use crate::error::py_err;
use crate::geometry::int_vect_of;
use crate::multifab::PyMultiFab;
use amrex_amr::{
    IntVect, average_down, average_down_faces, average_down_faces_geom, average_down_geom,
    average_down_nodal, sum_fine_to_coarse,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// Averages components `scomp..scomp + ncomp` of `S_fine` onto the coarse cells they
/// cover in `S_crse`, as pyAMReX: `average_down(S_fine, S_crse, scomp, ncomp, ratio)`
/// (the plain mean, cell-centred or, by injection, nodal data) or
/// `average_down(S_fine, S_crse, fgeom, cgeom, scomp, ncomp, ratio)` (cell-centred
/// data, weighted by the cell volumes of RZ and spherical coordinates). `ratio` is an
/// int or an IntVect; the two BoxArrays may be any. Coarse cells the fine level does not
/// cover keep their values. `ValueError` for a bad ratio, components, index types,
/// fine boxes that are not multiples of the ratio, or geometries that do not match.
#[pyfunction]
#[pyo3(name = "average_down", signature = (S_fine, S_crse, *args))]
#[expect(non_snake_case, reason = "pyAMReX's argument names")]
fn average_down_py(
    S_fine: &Bound<'_, PyMultiFab>,
    S_crse: &Bound<'_, PyMultiFab>,
    args: &Bound<'_, PyTuple>,
) -> PyResult<()> {
    let (fine, mut crse) = read_write("average_down", S_fine, S_crse)?;
    let (fine, crse) = (fine.host()?, crse.host_mut()?);
    match args.len() {
        3 => {
            let (scomp, ncomp, ratio): (usize, usize, Bound<'_, PyAny>) = args.extract()?;
            average_down(
                fine,
                crse,
                scomp..scomp.saturating_add(ncomp),
                int_vect_of(&ratio)?,
            )
            .map_err(py_err)
        }
        5 => {
            let (fgeom, cgeom, scomp, ncomp, ratio): (
                PyRef<'_, PyGeometry>,
                PyRef<'_, PyGeometry>,
                usize,
                usize,
                Bound<'_, PyAny>,
            ) = args.extract()?;
            let ratio = int_vect_of(&ratio)?;
            average_down_geom(
                fine,
                crse,
                &fgeom.0,
                &cgeom.0,
                scomp..scomp.saturating_add(ncomp),
                ratio,
            )
            .map_err(py_err)
        }
        n => Err(PyTypeError::new_err(format!(
            "average_down takes (S_fine, S_crse, scomp, ncomp, ratio) or (S_fine, S_crse, \
             fgeom, cgeom, scomp, ncomp, ratio), got {} arguments",
            n + 2
        ))),
    }
}

/// Adds to each coarse cell the mean of its fine cells' values, components `scomp..scomp + ncomp` of `S_fine` to `S_crse`
/// (pyAMReX and AMReX `sum_fine_to_coarse`; cell-centred data). `fgeom`, when given, must
/// be `cgeom` refined by `ratio` (`ValueError` otherwise); the sum itself needs only
/// `cgeom` (its periodicity).
#[pyfunction]
#[pyo3(
    name = "sum_fine_to_coarse",
    signature = (S_fine, S_crse, scomp, ncomp, ratio, cgeom, fgeom=None)
)]
#[expect(non_snake_case, reason = "pyAMReX's argument names")]
fn sum_fine_to_coarse_py(
    S_fine: &Bound<'_, PyMultiFab>,
    S_crse: &Bound<'_, PyMultiFab>,
    scomp: usize,
    ncomp: usize,
    ratio: &Bound<'_, PyAny>,
    cgeom: &PyGeometry,
    fgeom: Option<&PyGeometry>,
) -> PyResult<()> {
    let ratio = int_vect_of(ratio)?;
    if let Some(f) = fgeom
        && cgeom.0.refine(ratio).ok() != Some(f.0)
    {
        return Err(PyValueError::new_err(format!(
            "sum_fine_to_coarse: fgeom (domain {}) is not cgeom (domain {}) refined by {ratio}",
            f.0.domain(),
            cgeom.0.domain()
        )));
    }
    let (fine, mut crse) = read_write("sum_fine_to_coarse", S_fine, S_crse)?;
    sum_fine_to_coarse(
        fine.host()?,
        crse.host_mut()?,
        scomp..scomp.saturating_add(ncomp),
        ratio,
        &cgeom.0,
    )
    .map_err(py_err)
}

/// Averages face data (nodal in exactly one direction) onto the coarse faces, one
/// direction per call, in pyAMReX's two forms: `average_down_faces(fine, crse, ratio,
/// ngcrse=0)` (coarse ghost faces `ngcrse` deep included) and `average_down_faces(fine,
/// crse, ratio, geom)` (or `crse_geom=geom`), where the copy onto `crse` also lands the
/// periodic images of the coarse faces by the periodicity of `geom`, the coarse level's
/// geometry: what AMReX's codes call to make the coarse fluxes of a step without
/// subcycling the means of the fine ones (on a periodic domain a face on its low side
/// and the one on its high side are one face, and both get the fine mean).
#[pyfunction]
#[pyo3(name = "average_down_faces", signature = (fine, crse, ratio, ngcrse=None, *, crse_geom=None))]
fn average_down_faces_py(
    fine: &Bound<'_, PyMultiFab>,
    crse: &Bound<'_, PyMultiFab>,
    ratio: &Bound<'_, PyAny>,
    ngcrse: Option<&Bound<'_, PyAny>>,
    crse_geom: Option<PyRef<'_, PyGeometry>>,
) -> PyResult<()> {
    let ratio = int_vect_of(ratio)?;
    // The fourth argument is a Geometry in pyAMReX's second form.
    let (ngcrse, geom) = match (ngcrse, crse_geom) {
        (Some(g), None) if g.is_instance_of::<PyGeometry>() => {
            (None, Some(g.cast::<PyGeometry>()?.borrow()))
        }
        (Some(_), Some(_)) => {
            return Err(PyTypeError::new_err(
                "average_down_faces takes ngcrse or crse_geom, not both (the periodic form has no ghost faces)",
            ));
        }
        (ng, g) => (ng, g),
    };
    let ng = ngcrse.map_or(Ok(IntVect::ZERO), int_vect_of)?;
    let (f, mut c) = read_write("average_down_faces", fine, crse)?;
    match geom {
        Some(g) => average_down_faces_geom(f.host()?, c.host_mut()?, ratio, &g.0).map_err(py_err),
        None => average_down_faces(f.host()?, c.host_mut()?, ratio, ng).map_err(py_err),
    }
}

/// Injects nodal data onto the coarse nodes, coarse ghost nodes `ngcrse` deep included
/// (pyAMReX `average_down_nodal(fine, crse, ratio, ngcrse=0)`).
#[pyfunction]
#[pyo3(name = "average_down_nodal", signature = (fine, crse, ratio, ngcrse=None))]
fn average_down_nodal_py(
    fine: &Bound<'_, PyMultiFab>,
    crse: &Bound<'_, PyMultiFab>,
    ratio: &Bound<'_, PyAny>,
    ngcrse: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let (ratio, ng) = (
        int_vect_of(ratio)?,
        ngcrse.map_or(Ok(IntVect::ZERO), int_vect_of)?,
    );
    let (f, mut c) = read_write("average_down_nodal", fine, crse)?;
    average_down_nodal(f.host()?, c.host_mut()?, ratio, ng).map_err(py_err)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(average_down_py, m)?)?;
    m.add_function(wrap_pyfunction!(sum_fine_to_coarse_py, m)?)?;
    m.add_function(wrap_pyfunction!(average_down_faces_py, m)?)?;
    m.add_function(wrap_pyfunction!(average_down_nodal_py, m)?)
}
