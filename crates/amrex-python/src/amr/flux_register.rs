//! `FluxRegister` with pyAMReX's names (`src/AmrCore/FluxRegister.cpp`): refluxing at
//! coarse/fine interfaces.
//!
//! With fluxes already multiplied by face area and time step, one coarse step is
//! `fr.crse_init(cflux[d], d, 0, 0, n)` (`mult=-1`) for every direction, then
//! `fr.fine_add(fflux[d], d, 0, 0, n, 1.0)` for every fine substep and direction, then
//! `fr.reflux(state, 1.0, 0, 0, n, cgeom)`: the coarse cells next to the fine region get
//! the difference, so the two levels together conserve to round-off.

use crate::amr::geometry::PyGeometry;
use crate::box_array::PyBoxArray;
use crate::distribution::PyDistributionMapping;
use crate::error::py_err;
use crate::geometry::{PyIntVect, int_vect_of};
use crate::multifab::PyMultiFab;
use amrex_amr::{Comps, FluxRegister};
use amrex_multifab::CopyOp;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyType;

/// Whether `crse_init` copies or adds into the register (AMReX `FluxRegister::FrOp`).
#[pyclass(
    module = "amrex_rs",
    name = "FrOp",
    eq,
    eq_int,
    frozen,
    hash,
    from_py_object
)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum PyFrOp {
    /// Overwrite the register's values (0).
    #[pyo3(name = "COPY")]
    Copy = 0,
    /// Add to the register's values (1).
    #[pyo3(name = "ADD")]
    Add = 1,
}

impl From<PyFrOp> for CopyOp {
    fn from(op: PyFrOp) -> Self {
        match op {
            PyFrOp::Copy => Self::Copy,
            PyFrOp::Add => Self::Add,
        }
    }
}

/// A flux register for the interface of a fine level with the level below (AMReX
/// `FluxRegister`): on every coarse face around each (coarsened) fine box, the
/// difference between the fine fluxes and the coarse flux through it.
#[pyclass(module = "amrex_rs", name = "FluxRegister")]
#[derive(Debug)]
pub(crate) struct PyFluxRegister(FluxRegister);

#[pymethods]
impl PyFluxRegister {
    /// `FluxRegister(fine_boxes, dm, ref_ratio, fine_lev, nvar)`: the register of fine
    /// level `fine_lev` (1 or more) with BoxArray `fine_boxes` on `dm`, refined by
    /// `ref_ratio` (an int or IntVect) from the level below, with `nvar` components, all
    /// zero. `ValueError` for level 0, a ratio below 1, non-cell-centred, overlapping or
    /// non-coarsenable fine boxes, or a map of another length.
    #[new]
    fn py_new(
        fine_boxes: &PyBoxArray,
        dm: &PyDistributionMapping,
        ref_ratio: &Bound<'_, PyAny>,
        fine_lev: usize,
        nvar: usize,
    ) -> PyResult<Self> {
        let ratio = int_vect_of(ref_ratio)?;
        FluxRegister::new(&fine_boxes.0, &dm.0, ratio, fine_lev, nvar)
            .map(Self)
            .map_err(py_err)
    }

    /// `FluxRegister.FrOp.COPY` / `ADD`, as in pyAMReX.
    #[classattr]
    #[pyo3(name = "FrOp")]
    fn fr_op(py: Python<'_>) -> Py<PyType> {
        py.get_type::<PyFrOp>().unbind()
    }

    /// The fine level's number.
    #[getter]
    fn fine_level(&self) -> usize {
        self.0.fine_level()
    }

    /// The coarse level's number (`fine_level - 1`).
    #[getter]
    fn crse_level(&self) -> usize {
        self.0.crse_level()
    }

    /// The number of components.
    #[getter]
    fn n_comp(&self) -> usize {
        self.0.ncomp()
    }

    /// The refinement ratio.
    #[getter]
    fn ref_ratio(&self) -> PyIntVect {
        PyIntVect(self.0.ratio())
    }

    /// Sets every register value to `val`.
    fn set_val(&mut self, val: f64) {
        self.0.set_val(val);
    }

    /// The sum of component `comp` over every low-side register face minus the sum over
    /// every high-side one (AMReX `SumReg`).
    fn sum_reg(&self, comp: usize) -> PyResult<f64> {
        self.0.sum_reg(comp).map_err(py_err)
    }

    /// Copies (`op=FrOp.COPY`) or adds (`FrOp.ADD`) `mult` times the coarse flux `mflx`
    /// (faces normal to `dir`, components `srccomp..srccomp + numcomp`) into register
    /// components `destcomp..` wherever a register face is a face of `mflx` (AMReX
    /// `CrseInit`; its default `mult` is -1). With `area=` (a face MultiFab on the
    /// flux's layout, component 0) the flux is multiplied by the area too (pyAMReX's
    /// `crse_init(mflx, area, dir, ...)`).
    #[pyo3(signature = (mflx, dir, srccomp, destcomp, numcomp, mult=-1.0, op=PyFrOp::Copy, *, area=None))]
    #[expect(
        clippy::too_many_arguments,
        reason = "AMReX's argument list: flux, direction, components, factor, op, area"
    )]
    fn crse_init(
        &mut self,
        mflx: PyRef<'_, PyMultiFab>,
        dir: usize,
        srccomp: usize,
        destcomp: usize,
        numcomp: usize,
        mult: f64,
        op: PyFrOp,
        area: Option<PyRef<'_, PyMultiFab>>,
    ) -> PyResult<()> {
        let (flux, comps) = (mflx.host()?, Comps::new(srccomp, destcomp, numcomp));
        let op = op.into();
        match area {
            None => self.0.crse_init(flux, dir, comps, mult, op),
            Some(a) => {
                let area = a.host()?;
                self.0.crse_init_area(flux, area, dir, comps, mult, op)
            }
        }
        .map_err(py_err)
    }

    /// Adds `mult` times the coarse flux `mflx` into the register, each coarse face's
    /// flux once even where boxes or periodic images of `crse_geom` share it (AMReX
    /// `CrseAdd`); `area=` as for `crse_init`.
    #[pyo3(signature = (mflx, dir, srccomp, destcomp, numcomp, mult, crse_geom, *, area=None))]
    #[expect(
        clippy::too_many_arguments,
        reason = "AMReX's argument list: flux, direction, components, factor, geometry, area"
    )]
    fn crse_add(
        &mut self,
        mflx: PyRef<'_, PyMultiFab>,
        dir: usize,
        srccomp: usize,
        destcomp: usize,
        numcomp: usize,
        mult: f64,
        crse_geom: &PyGeometry,
        area: Option<PyRef<'_, PyMultiFab>>,
    ) -> PyResult<()> {
        let (flux, g) = (mflx.host()?, &crse_geom.0);
        let comps = Comps::new(srccomp, destcomp, numcomp);
        match area {
            None => self.0.crse_add(flux, dir, comps, mult, g),
            Some(a) => {
                let area = a.host()?;
                self.0.crse_add_area(flux, area, dir, comps, mult, g)
            }
        }
        .map_err(py_err)
    }

    /// Adds `mult` times the fine flux `mflx` (faces normal to `dir` of the fine boxes,
    /// or any layout, which is copied onto them first) into the register: each coarse
    /// register face gets the sum of the fine faces on it (AMReX `FineAdd`); `area=` as
    /// for `crse_init`.
    #[pyo3(signature = (mflx, dir, srccomp, destcomp, numcomp, mult, *, area=None))]
    #[expect(
        clippy::too_many_arguments,
        reason = "AMReX's argument list: flux, direction, components, factor, area"
    )]
    fn fine_add(
        &mut self,
        mflx: PyRef<'_, PyMultiFab>,
        dir: usize,
        srccomp: usize,
        destcomp: usize,
        numcomp: usize,
        mult: f64,
        area: Option<PyRef<'_, PyMultiFab>>,
    ) -> PyResult<()> {
        let (flux, comps) = (mflx.host()?, Comps::new(srccomp, destcomp, numcomp));
        match area {
            None => self.0.fine_add(flux, dir, comps, mult),
            Some(a) => {
                let area = a.host()?;
                self.0.fine_add_area(flux, area, dir, comps, mult)
            }
        }
        .map_err(py_err)
    }

    /// Adds the correction to the coarse state `mf` (components `dcomp..dcomp + nc` from
    /// register components `scomp..`): `-scale * r / V` into the cell below each low-side
    /// register face, `+scale * r / V` into the cell above each high-side one, `V` the
    /// cell's volume in `crse_geom`, or from `volume=` (a cell MultiFab on `mf`'s layout,
    /// component 0; pyAMReX's `reflux(mf, volume, scale, ...)`) (AMReX `Reflux`).
    #[pyo3(signature = (mf, scale, scomp, dcomp, nc, crse_geom, *, volume=None))]
    #[expect(
        clippy::too_many_arguments,
        reason = "AMReX's argument list: state, scale, components, geometry, volume"
    )]
    fn reflux(
        &self,
        mf: &Bound<'_, PyMultiFab>,
        scale: f64,
        scomp: usize,
        dcomp: usize,
        nc: usize,
        crse_geom: &PyGeometry,
        volume: Option<&Bound<'_, PyMultiFab>>,
    ) -> PyResult<()> {
        let g = &crse_geom.0;
        match volume {
            None => {
                let mut state = mf.try_borrow_mut()?;
                self.0
                    .reflux(state.host_mut()?, scale, Comps::new(scomp, dcomp, nc), g)
            }
            Some(v) => {
                let (v, mut state) = crate::amr::read_write("FluxRegister.reflux", v, mf)?;
                self.0.reflux_volume(
                    state.host_mut()?,
                    v.host()?,
                    scale,
                    Comps::new(scomp, dcomp, nc),
                    g,
                )
            }
        }
        .map_err(py_err)
    }

    /// Zeroes every register face that is also a face of another fine box (periodic
    /// images in `crse_geom` included), so only the coarse/fine interface keeps
    /// corrections (AMReX `ClearInternalBorders`).
    fn clear_internal_borders(&mut self, crse_geom: &PyGeometry) {
        self.0.clear_internal_borders(&crse_geom.0);
    }

    /// Overwrites the coarse fluxes `crse_fluxes` (three face MultiFabs, normal to x, y,
    /// z) on the coarse/fine interface with `scale` times the register (components
    /// `srccomp..srccomp + numcomp` into `destcomp..`), so the coarse update uses the
    /// fine fluxes and needs no reflux (AMReX `OverwriteFlux`). `ValueError` unless the
    /// three are distinct MultiFabs, each on the faces of its direction.
    fn overwrite_flux(
        &self,
        crse_fluxes: [Bound<'_, PyMultiFab>; 3],
        scale: f64,
        srccomp: usize,
        destcomp: usize,
        numcomp: usize,
        crse_geom: &PyGeometry,
    ) -> PyResult<()> {
        let [x, y, z] = &crse_fluxes;
        if x.is(y) || y.is(z) || x.is(z) {
            return Err(PyValueError::new_err(
                "FluxRegister.overwrite_flux: the three flux MultiFabs must be distinct \
                 objects (one per direction)",
            ));
        }
        let (mut bx, mut by, mut bz) = (
            x.try_borrow_mut()?,
            y.try_borrow_mut()?,
            z.try_borrow_mut()?,
        );
        let fluxes = [bx.host_mut()?, by.host_mut()?, bz.host_mut()?];
        self.0
            .overwrite_flux(
                fluxes,
                scale,
                Comps::new(srccomp, destcomp, numcomp),
                &crse_geom.0,
            )
            .map_err(py_err)
    }

    fn __repr__(&self) -> String {
        format!(
            "<amrex_rs.FluxRegister with {} components, fine level {}, ratio {}>",
            self.0.ncomp(),
            self.0.fine_level(),
            self.0.ratio()
        )
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyFrOp>()?;
    m.add_class::<PyFluxRegister>()
}
