//! The interpolaters as module attributes, as pyAMReX has them
//! (`src/AmrCore/Interpolater.cpp`): `pc_interp`, `cell_cons_interp`, `lincc_interp`,
//! `cell_bilinear_interp`, `node_bilinear_interp`, `face_linear_interp`, each an
//! `Interpolater` object.
//!
//! pyAMReX only hands them to FillPatch; here they also interpolate a coarse MultiFab
//! onto a fine one directly, box by box, when every fine box's coarse stencil lies in one
//! coarse fab (its ghost cells included).

use crate::amr::geometry::PyGeometry;
use crate::amr::read_write;
use crate::error::py_err;
use crate::geometry::{PyBox, int_vect_of};
use crate::multifab::PyMultiFab;
use amrex_amr::{
    CellBilinear, CellConsLinear, Comps, FaceLinear, IntVect, Interpolater, NodeBilinear, PcInterp,
};
use amrex_box::IndexBox;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Which of the library's interpolaters an object is.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Pc,
    CellCons(CellConsLinear),
    CellBilinear,
    NodeBilinear,
    FaceLinear,
}

impl Kind {
    fn get(&self) -> &dyn Interpolater {
        match self {
            Self::Pc => &PcInterp,
            Self::CellCons(c) => c,
            Self::CellBilinear => &CellBilinear,
            Self::NodeBilinear => &NodeBilinear,
            Self::FaceLinear => &FaceLinear,
        }
    }
}

/// A refinement ratio of at least 1 in every direction, as the interpolaters need.
fn ratio_of(op: &str, ratio: &Bound<'_, PyAny>) -> PyResult<IntVect> {
    let r = int_vect_of(ratio)?;
    if r.all_ge(IntVect::UNIT) {
        Ok(r)
    } else {
        Err(PyValueError::new_err(format!(
            "{op}: expected a refinement ratio of at least 1 in every direction, got {r}"
        )))
    }
}

/// One of AMReX's interpolaters (pyAMReX's module attributes `pc_interp`,
/// `cell_cons_interp`, ...): fills fine data from the coarse data under it.
#[pyclass(module = "amrex_rs", name = "Interpolater", frozen)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct PyInterpolater {
    kind: Kind,
    /// The module attribute holding it (`"lincc_interp"`), for `repr`.
    attr: &'static str,
}

impl PyInterpolater {
    /// The library's interpolater, for the operations that take one.
    pub(crate) fn get(&self) -> &dyn Interpolater {
        self.kind.get()
    }
}

#[pymethods]
impl PyInterpolater {
    /// The interpolater's name (`"PcInterp"`, `"CellConsLinear"`, ...).
    #[getter]
    fn name(&self) -> &'static str {
        self.get().name()
    }

    /// The coarse region whose data filling `fine_region` reads (AMReX `CoarseBox`), in
    /// coarse indices.
    #[pyo3(name = "CoarseBox")]
    fn coarse_box(&self, fine_region: &PyBox, ratio: &Bound<'_, PyAny>) -> PyResult<PyBox> {
        let r = ratio_of("CoarseBox", ratio)?;
        Ok(PyBox(self.get().coarse_box(&fine_region.0, r)))
    }

    /// Fills every local fine box of `fine` (host memory), grown by `ngrow` ghost cells,
    /// components `fine_comp..fine_comp + ncomp`, from components `crse_comp..` of
    /// `crse`, refined by `ratio` (AMReX's `Interpolater::interp` on each fine box).
    /// Each fine box's `CoarseBox` must lie inside one fab of `crse` (valid and ghost
    /// cells, which the caller fills first, e.g. with `fill_boundary`); FillPatch is the
    /// general form. `fine_geom` is the fine geometry (only `cell_cons_interp` and
    /// `lincc_interp` read it, for RZ coordinates; None stands for Cartesian).
    ///
    /// `ValueError`, before anything is written, for a bad ratio, components, index type
    /// (cell-centred for the cell interpolaters, nodal for `node_bilinear_interp`, faces
    /// for `face_linear_interp`), `ngrow` beyond the fine ghost cells, or a fine box
    /// whose coarse data no coarse fab holds.
    #[pyo3(signature = (crse, fine, ratio, crse_comp=0, fine_comp=0, ncomp=None, ngrow=0, fine_geom=None))]
    #[expect(
        clippy::too_many_arguments,
        reason = "AMReX's argument list: data, ratio, components, region, geometry"
    )]
    fn interp(
        &self,
        crse: &Bound<'_, PyMultiFab>,
        fine: &Bound<'_, PyMultiFab>,
        ratio: &Bound<'_, PyAny>,
        crse_comp: usize,
        fine_comp: usize,
        ncomp: Option<usize>,
        ngrow: i32,
        fine_geom: Option<&PyGeometry>,
    ) -> PyResult<()> {
        let it = self.get();
        let ratio = ratio_of(it.name(), ratio)?;
        let (c, mut f) = read_write(it.name(), crse, fine)?;
        let (c, f) = (c.host()?, f.host_mut()?);
        let count = ncomp.unwrap_or_else(|| c.ncomp().saturating_sub(crse_comp));
        let comps = Comps::new(crse_comp, fine_comp, count);
        if ngrow < 0 || !f.n_grow().all_ge(IntVect::splat(ngrow)) {
            return Err(PyValueError::new_err(format!(
                "{}: ngrow {ngrow} is not within the fine MultiFab's ghost cells {}",
                it.name(),
                f.n_grow()
            )));
        }
        let (centring, typ) = (it.centring(), f.box_array().ix_type());
        if !centring.admits(typ) {
            return Err(PyValueError::new_err(format!(
                "{}: expected {} data, got index type {typ}",
                it.name(),
                centring.describe()
            )));
        }
        // Plan first: the coarse fab of every fine box, so that a box without one is
        // refused before any fab is written.
        let mut plan: Vec<(IndexBox, usize)> = Vec::with_capacity(f.local_size());
        for l in 0..f.local_size() {
            let region = f.box_of(f.global_index(l)).grow(ngrow);
            let need = it.coarse_box(&region, ratio);
            let found =
                (0..c.local_size()).find(|&k| c.fabbox(c.global_index(k)).contains_box(&need));
            let Some(k) = found else {
                return Err(PyValueError::new_err(format!(
                    "{}: no coarse fab holds the coarse cells {need} that fine region {region} \
                     needs (give the coarse MultiFab more ghost cells, or use FillPatch)",
                    it.name()
                )));
            };
            plan.push((region, k));
        }
        let geom = fine_geom.map(|g| &g.0);
        // The checks `interp` makes beyond the coarse region (ratio, index type,
        // components, region inside the fine fab) are the same for every box, so a
        // refusal comes from the first box, before anything is written.
        for (l, (region, k)) in plan.into_iter().enumerate() {
            it.interp(
                c.array_at(k),
                f.array_mut_at(l),
                &region,
                comps,
                ratio,
                geom,
            )
            .map_err(py_err)?;
        }
        Ok(())
    }

    fn __repr__(&self) -> String {
        format!(
            "<amrex_rs.Interpolater {} ({})>",
            self.attr,
            self.get().name()
        )
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyInterpolater>()?;
    let objects = [
        ("pc_interp", Kind::Pc),
        (
            "cell_cons_interp",
            Kind::CellCons(CellConsLinear::CELL_CONS_INTERP),
        ),
        ("lincc_interp", Kind::CellCons(CellConsLinear::LINCC_INTERP)),
        ("cell_bilinear_interp", Kind::CellBilinear),
        ("node_bilinear_interp", Kind::NodeBilinear),
        ("face_linear_interp", Kind::FaceLinear),
    ];
    for (name, kind) in objects {
        m.add(name, PyInterpolater { kind, attr: name })?;
    }
    Ok(())
}
