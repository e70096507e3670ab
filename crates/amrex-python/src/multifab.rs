//! `MultiFab` with pyAMReX's names: cell data on a BoxArray with ghost cells, in host
//! memory or in memory of another arena.
//!
//! `mf.to_xp()` / `mf.array(mfi)` export each local box zero-copy with shape
//! `(ncomp, nz, ny, nx)`; every exported tensor holds a reference to the fabs' storage, so
//! arrays outlive the MultiFab. NumPy and Rust share the memory as in pyAMReX: while Rust
//! runs a MultiFab operation it holds the GIL, so only NumPy code that releases the GIL in
//! another thread could race with it. Global indexing (`mf[i, j, k, n]`) is in
//! [`subscript`].

use crate::arena::{PyArena, arena_arg};
use crate::array4::PyArray4;
use crate::box_array::PyBoxArray;
use crate::distribution::PyDistributionMapping;
use crate::dlpack::import::{Sharing, Tensor, to_xp};
use crate::error::py_err;
use crate::geometry::int_vect_of;
use crate::mfiter::PyMfi;
use amrex_arena::{AnyArena, Arena};
use amrex_basefab::component_range;
use amrex_box::{IndexBox, IntVect};
use amrex_dlpack_capsule::Imported;
use amrex_multifab::{FabArray, FillPattern, Ghosts, MultiFab, Periodicity, Tiling};
use pyo3::exceptions::{PyIndexError, PyNotImplementedError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

/// `(lo, hi)` corners as tuples.
type Corners = ((i32, i32, i32), (i32, i32, i32));

fn corners(b: IndexBox) -> Corners {
    let (lo, hi) = (b.small_end(), b.big_end());
    ((lo.x(), lo.y(), lo.z()), (hi.x(), hi.y(), hi.z()))
}

/// Cell data on a BoxArray with ghost cells (AMReX `MultiFab`, `f64`).
#[pyclass(module = "amrex_rs", name = "MultiFab")]
#[derive(Debug)]
pub(crate) struct PyMultiFab {
    store: Store,
}

/// A MultiFab's data: host memory (every operation), or memory of another arena (device,
/// pinned or managed: the same operations, run by the arena's kernels, exports and host copies).
#[derive(Debug)]
enum Store {
    Host(MultiFab),
    Arena(FabArray<f64, AnyArena>),
}

/// Evaluates `$e` with `$m` bound to the MultiFab whichever memory it is in: the
/// operations are one method set for every arena (the arena's kernels or the host loops
/// run them), so only the type differs.
macro_rules! either {
    ($s:expr, $m:ident => $e:expr) => {
        match &$s.store {
            Store::Host($m) => $e,
            Store::Arena($m) => $e,
        }
    };
}

/// [`either!`] on a mutable MultiFab.
macro_rules! either_mut {
    ($s:expr, $m:ident => $e:expr) => {
        match &mut $s.store {
            Store::Host($m) => $e,
            Store::Arena($m) => $e,
        }
    };
}

/// Evaluates `$e` with `$x` and `$y` bound to two MultiFabs in the same kind of memory;
/// a pair in different memory returns [`mixed_memory`]`($name)` from the function.
macro_rules! pair {
    ($a:expr, $b:expr, $name:expr, ($x:ident, $y:ident) => $e:expr) => {
        match ($a, $b) {
            (Store::Host($x), Store::Host($y)) => $e,
            (Store::Arena($x), Store::Arena($y)) => $e,
            _ => return Err(mixed_memory($name)),
        }
    };
}

mod subscript;
mod typed;

/// The ghost width of a new MultiFab of `ba`/`dm`, after checking that the two belong
/// together and that the width is not negative (the library would panic on either).
fn checked_layout(
    ba: &PyBoxArray,
    dm: &PyDistributionMapping,
    ngrow: Option<&Bound<'_, PyAny>>,
) -> PyResult<IntVect> {
    let ng = ngrow.map_or(Ok(IntVect::ZERO), int_vect_of)?;
    if dm.0.len() != ba.0.len() {
        return Err(PyValueError::new_err(
            "the DistributionMapping was made for another BoxArray",
        ));
    }
    if !ng.all_ge(IntVect::ZERO) {
        return Err(PyValueError::new_err("ngrow must be non-negative"));
    }
    Ok(ng)
}

/// Which array module `per_box` hands the tensors to.
#[derive(Clone, Copy, Debug)]
enum ArrayModule {
    /// The device's own (`to_xp`).
    Xp,
    /// NumPy (`to_numpy`).
    Numpy,
    /// CuPy (`to_cupy`).
    Cupy,
}

/// One array of `module` per tensor (a MultiFab's `to_xp`/`to_numpy`/`to_cupy`).
fn per_box<'py>(
    py: Python<'py>,
    tensors: Vec<Tensor>,
    module: ArrayModule,
    copy: bool,
    order: &str,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let sharing = Sharing::copy_if(copy);
    tensors
        .into_iter()
        .map(|t| {
            let obj = Bound::new(py, t)?;
            let obj = obj.as_any();
            match module {
                ArrayModule::Cupy => crate::dlpack::import::to_cupy(obj, sharing, order),
                ArrayModule::Xp => {
                    to_xp(obj, &obj.cast::<Tensor>()?.get().export()?, sharing, order)
                }
                ArrayModule::Numpy => crate::dlpack::import::to_numpy(
                    obj,
                    &obj.cast::<Tensor>()?.get().export()?,
                    sharing,
                    order,
                ),
            }
        })
        .collect()
}

/// The Python keyword `ghosts=` (a bool, as in pyAMReX).
fn ghosts_of(ghosts: bool) -> Ghosts {
    if ghosts {
        Ghosts::Include
    } else {
        Ghosts::Exclude
    }
}

/// Components `comp..comp+nc` checked by the library's component rule.
fn check_comps(ncomp: usize, comp: usize, nc: usize) -> PyResult<()> {
    component_range(comp..comp.saturating_add(nc), ncomp)
        .map(drop)
        .map_err(py_err)
}

impl PyMultiFab {
    /// Wraps a MultiFab made in Rust (a plotfile level).
    pub(crate) fn from_multifab(mf: MultiFab) -> Self {
        Self {
            store: Store::Host(mf),
        }
    }

    /// The host MultiFab, or `NotImplementedError` for one in device memory.
    pub(crate) fn host(&self) -> PyResult<&MultiFab> {
        match &self.store {
            Store::Host(m) => Ok(m),
            Store::Arena(m) => Err(not_on_device(m)),
        }
    }

    pub(crate) fn host_mut(&mut self) -> PyResult<&mut MultiFab> {
        match &mut self.store {
            Store::Host(m) => Ok(m),
            Store::Arena(m) => Err(not_on_device(m)),
        }
    }

    fn ncomp_(&self) -> usize {
        either!(self, m => m.ncomp())
    }

    fn nc(&self, comp: usize, ncomp: Option<usize>) -> PyResult<usize> {
        let nc = ncomp.unwrap_or(self.ncomp_().saturating_sub(comp));
        check_comps(self.ncomp_(), comp, nc)?;
        Ok(nc)
    }

    fn ng(&self, ngrow: Option<&Bound<'_, PyAny>>) -> PyResult<IntVect> {
        match ngrow {
            None => Ok(IntVect::ZERO),
            Some(n) => {
                let ng = int_vect_of(n)?;
                either!(self, m => m.check_ghost_width(ng)).map_err(py_err)?;
                Ok(ng)
            }
        }
    }

    /// Whether `pred` holds for any value of `comp..comp+nc` over `ng` ghost cells.
    fn any_value(
        &self,
        comp: usize,
        nc: usize,
        ng: IntVect,
        pred: fn(f64) -> bool,
    ) -> PyResult<bool> {
        let mf = self.host()?;
        Ok((0..mf.local_size()).any(|l| {
            let region = mf.box_of(mf.global_index(l)).grow_iv(ng);
            let mut found = false;
            mf.array_at(l)
                .components(comp, nc)
                .for_each(region, |_, _, _, _, v| found |= pred(*v));
            found
        }))
    }

    /// The periodicity argument of the exchanges (see [`periodicity_arg`]).
    fn period(&self, periodic: Option<&Bound<'_, PyAny>>) -> PyResult<Periodicity> {
        periodicity_arg(either!(self, m => m.box_array().minimal_box()), periodic)
    }

    /// Zero-copy tensors of every local box.
    fn tensors(&self, ghosts: Ghosts) -> Vec<Tensor> {
        match &self.store {
            // SAFETY: Python code holds the GIL while it reads or writes the arrays and
            // while this MultiFab's methods run, so the sharing the function warns about
            // happens only as in pyAMReX (NumPy threads that release the GIL); no Rust
            // reference into the tensors is kept across MultiFab calls.
            Store::Host(m) => unsafe { m.to_dlpack_per_box_detached(ghosts) }
                .into_iter()
                .map(|t| Tensor::new(Imported::Versioned(t)))
                .collect(),
            // SAFETY: as above.
            Store::Arena(m) => unsafe { m.to_dlpack_per_box_detached(ghosts) }
                .into_iter()
                .map(|t| Tensor::on(Imported::Versioned(t), m.arena()))
                .collect(),
        }
    }
}

#[pymethods]
impl PyMultiFab {
    /// `MultiFab(ba, dm, ncomp, ngrow, arena=None)`: zero-initialised; `ngrow` is an int
    /// or IntVect; `arena` an `Arena` or `"host"`, `"pinned"`, `"device"`, `"managed"`.
    #[new]
    #[pyo3(signature = (ba, dm, ncomp=1, ngrow=None, arena=None))]
    fn py_new(
        ba: &PyBoxArray,
        dm: &PyDistributionMapping,
        ncomp: usize,
        ngrow: Option<&Bound<'_, PyAny>>,
        arena: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let ng = checked_layout(ba, dm, ngrow)?;
        let arena = arena_arg(arena)?;
        if matches!(arena, AnyArena::Host(_)) {
            return Ok(Self::from_multifab(MultiFab::new(&ba.0, &dm.0, ncomp, ng)));
        }
        let mf = FabArray::try_new_in(&ba.0, &dm.0, ncomp, ng, arena).map_err(py_err)?;
        Ok(Self {
            store: Store::Arena(mf),
        })
    }

    /// The arena the data lives in.
    #[getter]
    fn arena(&self) -> PyArena {
        match &self.store {
            Store::Host(_) => PyArena(AnyArena::default()),
            Store::Arena(m) => PyArena(m.arena().clone()),
        }
    }

    /// A host copy (valid and ghost cells); for a host MultiFab, a copy too.
    fn to_host(&self) -> PyResult<Self> {
        let mf = match &self.store {
            Store::Host(m) => {
                let mut c =
                    MultiFab::new(m.box_array(), m.distribution_map(), m.ncomp(), m.n_grow());
                for (d, s) in c.fabs_mut().zip(m.fabs()) {
                    d.as_mut_slice()
                        .map_err(py_err)?
                        .copy_from_slice(s.as_slice().map_err(py_err)?);
                }
                c
            }
            Store::Arena(m) => m.to_host().map_err(py_err)?,
        };
        Ok(Self::from_multifab(mf))
    }

    /// Number of components.
    #[getter]
    fn ncomp(&self) -> usize {
        self.ncomp_()
    }

    /// Ghost cells per direction.
    #[getter]
    fn n_grow(&self) -> (i32, i32, i32) {
        let g = either!(self, m => m.n_grow());
        (g.x(), g.y(), g.z())
    }

    /// Number of components (pyAMReX's property `nComp`).
    #[getter(nComp)]
    fn n_comp(&self) -> usize {
        self.ncomp_()
    }

    /// Number of components (pyAMReX's property `num_comp`).
    #[getter]
    fn num_comp(&self) -> usize {
        self.ncomp_()
    }

    /// Number of boxes (pyAMReX's property `size`).
    #[getter]
    fn size(&self) -> usize {
        either!(self, m => m.box_array().len())
    }

    /// The BoxArray.
    fn box_array(&self) -> PyBoxArray {
        PyBoxArray(either!(self, m => m.box_array().clone()))
    }

    /// The DistributionMapping.
    fn dm(&self) -> PyDistributionMapping {
        PyDistributionMapping(either!(self, m => m.distribution_map().clone()))
    }

    /// Number of boxes on this rank.
    fn num_local_boxes(&self) -> usize {
        either!(self, m => m.local_size())
    }

    /// `MFIter` items of the local boxes (tiles with `tiling=True`).
    #[pyo3(signature = (tiling=false))]
    fn mfiter(&self, tiling: bool) -> Vec<PyMfi> {
        let tiling = if tiling {
            Tiling::Default
        } else {
            Tiling::None
        };
        either!(self, m => m.mfiter(tiling).map(PyMfi).collect())
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(PyList::new(py, self.mfiter(false))?.try_iter()?.into_any())
    }

    fn __len__(&self) -> usize {
        either!(self, m => m.local_size())
    }

    /// The `(lo, hi)` corners of each local box (with ghost cells when `ghosts`), in the
    /// order of `to_xp`.
    #[pyo3(signature = (ghosts=false))]
    fn boxes(&self, ghosts: bool) -> Vec<Corners> {
        let ghosts = ghosts_of(ghosts);
        either!(self, m => (0..m.local_size())
            .map(|l| {
                let g = m.global_index(l);
                corners(match ghosts {
                    Ghosts::Include => m.fabbox(g),
                    Ghosts::Exclude => m.box_of(g),
                })
            })
            .collect())
    }

    /// The fab of `mfi` (ghost cells included), zero-copy, as pyAMReX's `mf.array(mfi)`:
    /// an `Array4` with global indices (`a[i, j, k, n]`, assignable; `to_xp()` in F order)
    /// for memory the CPU reaches, a DLPack `Tensor` for device memory.
    /// `np.from_dlpack(mf.array(mfi))[n, k, j, i]` is component `n` at `fabbox.lo + (i, j, k)`.
    fn array(&self, py: Python<'_>, mfi: &PyMfi) -> PyResult<Py<PyAny>> {
        let l = mfi.0.local_index();
        if l >= either!(self, m => m.local_size()) {
            return Err(PyIndexError::new_err("MFIter item of another MultiFab"));
        }
        let begin = either!(self, m => m.fabbox(m.global_index(l)).small_end());
        let t = match &self.store {
            // SAFETY: as in `tensors`: Python holds the GIL while it uses the arrays
            // and while this MultiFab's methods run, and no Rust reference into the
            // tensor is kept.
            Store::Host(m) => Tensor::new(Imported::Versioned(unsafe {
                m.to_dlpack_box_detached(l, Ghosts::Include)
            })),
            // SAFETY: as above.
            Store::Arena(m) => Tensor::on(
                Imported::Versioned(unsafe { m.to_dlpack_box_detached(l, Ghosts::Include) }),
                m.arena(),
            ),
        };
        if !t.inner.view().device().is_host_accessible() {
            return Ok(Bound::new(py, t)?.into_any().unbind());
        }
        let a = PyArray4::from_imported(t.inner, begin)?;
        Ok(Bound::new(py, a)?.into_any().unbind())
    }

    /// One array per local box, as pyAMReX: the whole fab with its ghost cells, zero-copy,
    /// shape `(nx, ny, nz, ncomp)` (`order="F"`, the default) or `(ncomp, nz, ny, nx)`
    /// (`order="C"`); NumPy for host memory, CuPy/dpnp for device memory. `ghosts=False`
    /// (not in pyAMReX) gives the valid cells only.
    #[pyo3(signature = (copy=false, order="F", *, ghosts=true))]
    fn to_xp<'py>(
        &self,
        py: Python<'py>,
        copy: bool,
        order: &str,
        ghosts: bool,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        per_box(
            py,
            self.tensors(ghosts_of(ghosts)),
            ArrayModule::Xp,
            copy,
            order,
        )
    }

    /// NumPy arrays of every local box, as `to_xp`: ghost cells included, `order="F"`
    /// by default; zero-copy for host memory; device memory needs `copy=True` (a host
    /// copy), else `BufferError`.
    #[pyo3(signature = (copy=false, order="F", *, ghosts=true))]
    fn to_numpy<'py>(
        &self,
        py: Python<'py>,
        copy: bool,
        order: &str,
        ghosts: bool,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        per_box(
            py,
            self.tensors(ghosts_of(ghosts)),
            ArrayModule::Numpy,
            copy,
            order,
        )
    }

    /// CuPy arrays of every local box, as `to_xp` (pyAMReX `to_cupy`): an `ImportError`
    /// without CuPy, CuPy's own error for host memory.
    #[pyo3(signature = (copy=false, order="F", *, ghosts=true))]
    fn to_cupy<'py>(
        &self,
        py: Python<'py>,
        copy: bool,
        order: &str,
        ghosts: bool,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        per_box(
            py,
            self.tensors(ghosts_of(ghosts)),
            ArrayModule::Cupy,
            copy,
            order,
        )
    }

    /// Fills ghost cells from the valid cells of other boxes (and periodic images):
    /// AMReX `FillBoundary`. `periodic` is three bools, a `Periodicity` or a `Geometry`
    /// (pyAMReX: `mf.FillBoundary(geom.periodicity())`). **Collective** over the
    /// MultiFab's communicator.
    #[pyo3(signature = (periodic=None))]
    fn fill_boundary(&mut self, periodic: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let period = self.period(periodic)?;
        either_mut!(self, m => m.fill_boundary(period)).map_err(py_err)
    }

    /// The first half of `fill_boundary` (AMReX `FillBoundary_nowait`): posts the
    /// messages and does the local copies; the ghost cells other ranks fill are written
    /// by `fill_boundary_finish()`. Work on valid cells may go in between. **Collective**.
    /// An exchange still in flight when the interpreter exits is finished before MPI ends.
    #[pyo3(signature = (periodic=None))]
    fn fill_boundary_nowait(
        slf: &Bound<'_, Self>,
        periodic: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let mut this = slf.try_borrow_mut()?;
        let period = this.period(periodic)?;
        let ng = either!(this, m => m.n_grow());
        either_mut!(this, m => m.fill_boundary_nowait(period, FillPattern::Full, .., ng))
            .map_err(py_err)?;
        in_flight::add(slf);
        Ok(())
    }

    /// Completes a `fill_boundary_nowait` (nothing to do, and no error, when none is in
    /// flight). **Collective**.
    fn fill_boundary_finish(slf: &Bound<'_, Self>) -> PyResult<()> {
        let mut this = slf.try_borrow_mut()?;
        in_flight::remove(slf);
        either_mut!(this, m => m.fill_boundary_finish()).map_err(py_err)
    }

    /// Adds each ghost cell's value into the valid cell it is a copy of (in another box,
    /// or a periodic image), all components, every ghost cell: AMReX `SumBoundary`, what
    /// particle deposition needs. Ghost cells keep their values; the result is the same
    /// bit for bit on any number of ranks. **Collective**.
    #[pyo3(signature = (periodic=None))]
    fn sum_boundary(&mut self, periodic: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let period = self.period(periodic)?;
        either_mut!(self, m => m.sum_boundary(period)).map_err(py_err)
    }

    /// The communicator the MultiFab's boxes are spread over.
    #[getter]
    fn communicator(&self) -> crate::parallel::PyCommunicator {
        crate::parallel::PyCommunicator(
            either!(self, m => m.distribution_map().communicator().clone()),
        )
    }

    /// Test pattern: valid cell `(i, j, k)` of component `n` gets
    /// `i + 100 j + 10000 k + 1e6 n` (ghost cells untouched).
    fn fill_cell_index_pattern(&mut self) -> PyResult<()> {
        for mut tile in self.host_mut()?.iter_tiles_mut(Tiling::None, IntVect::ZERO) {
            let region = tile.region();
            tile.array_mut().for_each_mut(region, |i, j, k, n, v| {
                *v = f64::from(i) + 100.0 * f64::from(j) + 10000.0 * f64::from(k) + 1e6 * n as f64;
            });
        }
        Ok(())
    }

    /// Value at global cell `(i, j, k)` of component `n` (valid or ghost of a local box).
    fn value_at(&self, p: &Bound<'_, PyAny>, n: usize) -> PyResult<Option<f64>> {
        Ok(self.host()?.value_at(int_vect_of(p)?, n))
    }

    /// Dot product of `self[comp..comp+nc]` with `y[ycomp..]`.
    #[pyo3(signature = (comp, y, ycomp, nc, ng=None))]
    fn dot(
        &self,
        comp: usize,
        y: &PyMultiFab,
        ycomp: usize,
        nc: usize,
        ng: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<f64> {
        let ng = self.ng(ng)?;
        let comps = comp..comp.saturating_add(nc);
        pair!(&self.store, &y.store, "dot", (x, y) => x.dot(y, ycomp, comps, ng)).map_err(py_err)
    }

    fn __repr__(&self) -> String {
        format!(
            "MultiFab({} boxes, ncomp={}, ngrow={})",
            either!(self, m => m.box_array().len()),
            self.ncomp_(),
            either!(self, m => m.n_grow())
        )
    }
}

/// The part of a MultiFab an element-wise operation covers: pyAMReX's positional forms
/// `(nghost)`, `(comp, num_comp)` and `(comp, num_comp, nghost)` in `args`, or this
/// module's keywords.
struct Part {
    comp: usize,
    nc: usize,
    ng: IntVect,
}

/// How an operation reads a lone positional argument and no arguments at all.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// `set_val(v)`: every component over the whole fab, ghost cells included (AMReX's
    /// `FabArray::setVal(val)`); a lone positional argument is refused (pyAMReX has no
    /// `set_val(val, nghost)`).
    SetVal,
    /// `plus(v, nghost=0)`, `negate(nghost=0)`: a lone positional is the ghost width.
    Nghost,
}

impl PyMultiFab {
    fn part(
        &self,
        name: &str,
        form: Form,
        args: &Bound<'_, PyTuple>,
        comp: Option<usize>,
        ncomp: Option<usize>,
        ngrow: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Part> {
        either!(self, m => part_of(m, "MultiFab", name, form, args, comp, ncomp, ngrow))
    }
}

/// The [`Part`] of `m` that `cls.name(value, *args, comp=, ncomp=, ngrow=)` covers.
#[expect(
    clippy::too_many_arguments,
    reason = "the Python call's pieces, passed through"
)]
fn part_of<T: amrex_multifab::Element, A: Arena>(
    m: &FabArray<T, A>,
    cls: &str,
    name: &str,
    form: Form,
    args: &Bound<'_, PyTuple>,
    comp: Option<usize>,
    ncomp: Option<usize>,
    ngrow: Option<&Bound<'_, PyAny>>,
) -> PyResult<Part> {
    let keywords = comp.is_some() || ncomp.is_some() || ngrow.is_some();
    let clash = || {
        PyTypeError::new_err(format!(
            "{cls}.{name}: give the components and ghost cells either positionally \
             (pyAMReX's form) or as comp=/ncomp=/ngrow= keywords, not both"
        ))
    };
    let (comp, ncomp, ngrow): (Option<usize>, Option<usize>, Option<Bound<'_, PyAny>>) =
        match args.len() {
            0 => (comp, ncomp, ngrow.cloned()),
            1 if form == Form::Nghost => {
                if keywords {
                    return Err(clash());
                }
                (None, None, Some(args.get_item(0)?))
            }
            2 | 3 => {
                if keywords {
                    return Err(clash());
                }
                let ng = if args.len() == 3 {
                    Some(args.get_item(2)?)
                } else {
                    None
                };
                (
                    Some(args.get_item(0)?.extract()?),
                    Some(args.get_item(1)?.extract()?),
                    ng,
                )
            }
            n => {
                return Err(PyTypeError::new_err(format!(
                    "{cls}.{name}: takes {} positional arguments after the value, got {n}",
                    if form == Form::Nghost {
                        "(nghost), (comp, num_comp) or (comp, num_comp, nghost)"
                    } else {
                        "(comp, num_comp) or (comp, num_comp, nghost)"
                    }
                )));
            }
        };
    if form == Form::SetVal && args.is_empty() && !keywords {
        return Ok(Part {
            comp: 0,
            nc: m.ncomp(),
            ng: m.n_grow(),
        });
    }
    let comp = comp.unwrap_or(0);
    let nc = ncomp.unwrap_or(m.ncomp().saturating_sub(comp));
    check_comps(m.ncomp(), comp, nc)?;
    let ng = match ngrow {
        None => IntVect::ZERO,
        Some(n) => {
            let ng = int_vect_of(&n)?;
            m.check_ghost_width(ng).map_err(py_err)?;
            ng
        }
    };
    Ok(Part { comp, nc, ng })
}

/// `MultiFab.f(value, *args, comp=None, ncomp=None, ngrow=None)`: a scalar applied to
/// components `comp..comp+ncomp` over `ngrow` ghost cells, with pyAMReX's positional forms
/// (see [`PyMultiFab::part`]).
macro_rules! scalar_ops {
    ($($(#[doc = $doc:literal])+ $name:ident => $method:ident, $form:expr;)+) => {
        #[pymethods]
        impl PyMultiFab {$(
            $(#[doc = $doc])+
            #[pyo3(signature = (value, *args, comp=None, ncomp=None, ngrow=None))]
            fn $name(
                &mut self,
                value: f64,
                args: &Bound<'_, PyTuple>,
                comp: Option<usize>,
                ncomp: Option<usize>,
                ngrow: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<()> {
                let p = self.part(stringify!($name), $form, args, comp, ncomp, ngrow)?;
                either_mut!(self, m => m.$method(value, p.comp..p.comp + p.nc, p.ng))
                    .map_err(py_err)
            }
        )+}
    };
}

scalar_ops! {
    /// `set_val(v)` sets every component of every fab, ghost cells included (pyAMReX,
    /// AMReX's `setVal(val)`); `set_val(v, comp, num_comp, nghost=0)` or the keywords
    /// `comp=`, `ncomp=`, `ngrow=` (default 0) set a part.
    set_val => set_val, Form::SetVal;
    /// Adds `value`: `plus(v, nghost=0)` to every component, `plus(v, comp, num_comp,
    /// nghost=0)` to a range (pyAMReX's forms), or the keywords `comp=`, `ncomp=`, `ngrow=`.
    plus => plus, Form::Nghost;
    /// Multiplies by `value`, with the forms of `plus`.
    mult => mult, Form::Nghost;
}

/// `MultiFab.f(comp=0, ngrow=None) -> float`: a reduction of one component.
macro_rules! reductions {
    ($($(#[doc = $doc:literal])+ $name:ident;)+) => {
        #[pymethods]
        impl PyMultiFab {$(
            $(#[doc = $doc])+
            #[pyo3(signature = (comp=0, ngrow=None))]
            fn $name(&self, comp: usize, ngrow: Option<&Bound<'_, PyAny>>) -> PyResult<f64> {
                let ng = self.ng(ngrow)?;
                either!(self, m => m.$name(comp..=comp, ng).map(f64::from)).map_err(py_err)
            }
        )+}
    };
}

reductions! {
    /// Smallest value of `comp` (over `ngrow` ghost cells).
    min;
    /// Largest value of `comp`.
    max;
    /// Sum of `comp`.
    sum;
    /// Max norm of `comp`.
    norm0;
    /// L1 norm of `comp`.
    norm1;
    /// L2 norm of `comp`.
    norm2;
}

/// Two-MultiFab operations `dst.f([a,] src, scomp, dcomp, nc, ng=None)`, each the
/// FabArray method `$method` on either memory; `(a)` after the name adds the scalar
/// `a: float`. Instance methods as in pyAMReX since 2025, so the static form of the older
/// bindings and of AMReX's C++, `MultiFab.f(dst, [a,] src, ...)`, is the same call.
/// Operations without a device kernel refuse device memory in the library
/// ([`FabArrayError::NoKernel`](amrex_multifab::FabArrayError::NoKernel), raised as `NotImplementedError`).
macro_rules! binary_ops {
    ($($(#[doc = $doc:literal])+ $name:ident $(($a:ident))? => $method:ident;)+) => {
        #[pymethods]
        impl PyMultiFab {$(
            $(#[doc = $doc])+
            #[pyo3(signature = ($($a,)? src, scomp, dcomp, nc, ng=None))]
            fn $name(
                mut slf: PyRefMut<'_, Self>,
                $($a: f64,)?
                src: PyRef<'_, Self>,
                scomp: usize,
                dcomp: usize,
                nc: usize,
                ng: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<()> {
                let ng = slf.ng(ng)?;
                let comps = dcomp..dcomp.saturating_add(nc);
                pair!(
                    &mut slf.store,
                    &src.store,
                    stringify!($name),
                    (d, s) => d.$method($($a,)? s, scomp, comps, ng)
                )
                .map_err(py_err)
            }
        )+}
    };
}

binary_ops! {
    /// `self[dcomp..] = src[scomp..]` (AMReX `MultiFab::Copy`; pyAMReX `copymf`).
    copymf => copy_from;
    /// `self[dcomp..] += src[scomp..]`.
    add => add;
    /// `self[dcomp..] -= src[scomp..]`.
    subtract => subtract;
    /// `self[dcomp..] *= src[scomp..]`.
    multiply => multiply;
    /// `self[dcomp..] /= src[scomp..]`.
    divide => divide;
    /// `self[dcomp..] += a * src[scomp..]` (AMReX `MultiFab::Saxpy`).
    saxpy(a) => saxpy;
    /// `self[dcomp..] = src[scomp..] + a * self[dcomp..]` (AMReX `MultiFab::Xpay`).
    xpay(a) => xpay;
}

impl PyMultiFab {
    /// A new MultiFab of the same layout and memory with every value (ghost cells
    /// included) copied.
    fn deep_copy(&self) -> PyResult<Self> {
        let store = match &self.store {
            Store::Host(m) => {
                let mut c =
                    MultiFab::new(m.box_array(), m.distribution_map(), m.ncomp(), m.n_grow());
                c.copy_from(m, 0, 0..m.ncomp(), m.n_grow())
                    .map_err(py_err)?;
                Store::Host(c)
            }
            Store::Arena(m) => {
                let mut c = FabArray::try_new_in(
                    m.box_array(),
                    m.distribution_map(),
                    m.ncomp(),
                    m.n_grow(),
                    m.arena().clone(),
                )
                .map_err(py_err)?;
                c.copy_from(m, 0, 0..m.ncomp(), m.n_grow())
                    .map_err(py_err)?;
                Store::Arena(c)
            }
        };
        Ok(Self { store })
    }
}

#[pymethods]
impl PyMultiFab {
    /// `mf.copy()`: a deep copy (same layout, same memory, ghost cells included), as
    /// pyAMReX's `MultiFab.copy()`. `dst.copy(src, scomp, dcomp, nc, ng=None)` (or
    /// `MultiFab.copy(dst, src, ...)`, AMReX's `MultiFab::Copy`) copies components of `src`
    /// into this MultiFab and returns `None`.
    #[pyo3(signature = (src=None, scomp=None, dcomp=None, nc=None, ng=None))]
    fn copy(
        slf: PyRefMut<'_, Self>,
        src: Option<PyRef<'_, Self>>,
        scomp: Option<usize>,
        dcomp: Option<usize>,
        nc: Option<usize>,
        ng: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<Self>> {
        match (src, scomp, dcomp, nc) {
            (None, None, None, None) if ng.is_none() => slf.deep_copy().map(Some),
            (Some(src), Some(scomp), Some(dcomp), Some(nc)) => {
                Self::copymf(slf, src, scomp, dcomp, nc, ng).map(|()| None)
            }
            _ => Err(PyTypeError::new_err(
                "MultiFab.copy() takes no arguments (a deep copy) or (src, scomp, dcomp, nc, \
                 ng=None) (copy components of src into this MultiFab)",
            )),
        }
    }
}

/// `amrex_rs.copy_mfab(dst, src, srccomp, dstcomp, numcomp, nghost)`: pyAMReX's function
/// form of `MultiFab::Copy`.
#[pyfunction]
#[pyo3(signature = (dst, src, srccomp, dstcomp, numcomp, nghost))]
fn copy_mfab(
    dst: PyRefMut<'_, PyMultiFab>,
    src: PyRef<'_, PyMultiFab>,
    srccomp: usize,
    dstcomp: usize,
    numcomp: usize,
    nghost: &Bound<'_, PyAny>,
) -> PyResult<()> {
    PyMultiFab::copymf(dst, src, srccomp, dstcomp, numcomp, Some(nghost))
}

/// `ValueError` for two MultiFabs in different kinds of memory.
fn mixed_memory(name: &str) -> PyErr {
    PyValueError::new_err(format!(
        "MultiFab.{name}: both MultiFabs must live in the same kind of memory (one is on the \
         host, the other in arena memory)"
    ))
}

/// `NotImplementedError` for an operation the bindings run on host memory only (the
/// views, indexing helpers and tests of every value) on a MultiFab in arena memory.
fn not_on_device(m: &FabArray<f64, AnyArena>) -> PyErr {
    PyNotImplementedError::new_err(format!(
        "this operation needs host memory, but this MultiFab lives in {} memory on {}; the \
         MultiFab operations (set_val, plus, mult, copy, add, saxpy, xpay, the reductions, \
         dot, fill_boundary, parallel_copy) run on it, and to_host() gives a host copy",
        m.arena().kind(),
        m.arena().device()
    ))
}

/// MultiFab operations of pyAMReX's bindings on top of the arithmetic above.
#[pymethods]
impl PyMultiFab {
    /// `x = |x|` on components `comp..comp+ncomp` over `ngrow` ghost cells.
    #[pyo3(signature = (comp=0, ncomp=None, ngrow=None))]
    fn abs(
        &mut self,
        comp: usize,
        ncomp: Option<usize>,
        ngrow: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let (nc, ng) = (self.nc(comp, ncomp)?, self.ng(ngrow)?);
        either_mut!(self, m => m.abs(comp..comp + nc, ng)).map_err(py_err)
    }

    /// `x = -x`: `negate(nghost=0)` on every component, `negate(comp, num_comp,
    /// nghost=0)` on a range (pyAMReX's forms), or the keywords `comp=`, `ncomp=`, `ngrow=`.
    #[pyo3(signature = (*args, comp=None, ncomp=None, ngrow=None))]
    fn negate(
        &mut self,
        args: &Bound<'_, PyTuple>,
        comp: Option<usize>,
        ncomp: Option<usize>,
        ngrow: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let p = self.part("negate", Form::Nghost, args, comp, ncomp, ngrow)?;
        either_mut!(self, m => m.negate(p.comp..p.comp + p.nc, p.ng)).map_err(py_err)
    }

    /// `x = numerator / x`: `invert(numerator, nghost)` on every component,
    /// `invert(numerator, comp, num_comp, nghost=0)` on a range (pyAMReX's forms), or the
    /// keywords `comp=`, `ncomp=`, `ngrow=`.
    #[pyo3(signature = (numerator, *args, comp=None, ncomp=None, ngrow=None))]
    fn invert(
        &mut self,
        numerator: f64,
        args: &Bound<'_, PyTuple>,
        comp: Option<usize>,
        ncomp: Option<usize>,
        ngrow: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let p = self.part("invert", Form::Nghost, args, comp, ncomp, ngrow)?;
        either_mut!(self, m => m.invert(numerator, p.comp..p.comp + p.nc, p.ng)).map_err(py_err)
    }

    /// `dst[dcomp..] = a * x[xcomp..] + b * y[ycomp..]` (AMReX `MultiFab.LinComb`).
    #[pyo3(signature = (a, x, xcomp, b, y, ycomp, dcomp, nc, ng=None))]
    #[expect(clippy::too_many_arguments, reason = "AMReX's argument list")]
    fn lin_comb(
        mut slf: PyRefMut<'_, Self>,
        a: f64,
        x: PyRef<'_, Self>,
        xcomp: usize,
        b: f64,
        y: PyRef<'_, Self>,
        ycomp: usize,
        dcomp: usize,
        nc: usize,
        ng: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let ng = slf.ng(ng)?;
        let (x, y) = (x.host()?, y.host()?);
        slf.host_mut()?
            .lin_comb(a, x, xcomp, b, y, ycomp, dcomp..dcomp + nc, ng)
            .map_err(py_err)?;
        Ok(())
    }

    /// `dst[dcomp..] += s1[comp1..] * s2[comp2..]` (AMReX `MultiFab.AddProduct`).
    #[pyo3(signature = (s1, comp1, s2, comp2, dcomp, nc, ng=None))]
    #[expect(clippy::too_many_arguments, reason = "AMReX's argument list")]
    fn add_product(
        mut slf: PyRefMut<'_, Self>,
        s1: PyRef<'_, Self>,
        comp1: usize,
        s2: PyRef<'_, Self>,
        comp2: usize,
        dcomp: usize,
        nc: usize,
        ng: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let ng = slf.ng(ng)?;
        let (s1, s2) = (s1.host()?, s2.host()?);
        slf.host_mut()?
            .add_product(s1, comp1, s2, comp2, dcomp..dcomp + nc, ng)
            .map_err(py_err)?;
        Ok(())
    }

    /// Copies `src` into this MultiFab wherever their boxes intersect, whatever the two
    /// BoxArrays (AMReX `ParallelCopy`); the component counts must match.
    #[pyo3(signature = (src, periodic=None))]
    fn parallel_copy(
        &mut self,
        src: PyRef<'_, Self>,
        periodic: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        if src.ncomp_() != self.ncomp_() {
            return Err(PyValueError::new_err(format!(
                "parallel_copy: {} components into {}",
                src.ncomp_(),
                self.ncomp_()
            )));
        }
        let period = self.period(periodic)?;
        pair!(&mut self.store, &src.store, "parallel_copy", (d, s) => d.parallel_copy(s, period))
            .map_err(py_err)
    }

    /// Whether any value of components `comp..comp+ncomp` over `ngrow` ghost cells is NaN
    /// (pyAMReX `contains_nan`).
    #[pyo3(signature = (comp=0, ncomp=None, ngrow=None))]
    fn contains_nan(
        &self,
        comp: usize,
        ncomp: Option<usize>,
        ngrow: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let (nc, ng) = (self.nc(comp, ncomp)?, self.ng(ngrow)?);
        self.any_value(comp, nc, ng, f64::is_nan)
    }

    /// Whether any value of components `comp..comp+ncomp` over `ngrow` ghost cells is
    /// infinite (pyAMReX `contains_inf`).
    #[pyo3(signature = (comp=0, ncomp=None, ngrow=None))]
    fn contains_inf(
        &self,
        comp: usize,
        ncomp: Option<usize>,
        ngrow: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let (nc, ng) = (self.nc(comp, ncomp)?, self.ng(ngrow)?);
        self.any_value(comp, nc, ng, f64::is_infinite)
    }

    /// Max norm of `comp` (pyAMReX `norminf`, the same as `norm0`).
    #[pyo3(signature = (comp=0, ngrow=None))]
    fn norminf(&self, comp: usize, ngrow: Option<&Bound<'_, PyAny>>) -> PyResult<f64> {
        let ng = self.ng(ngrow)?;
        either!(self, m => m.norm0(comp..=comp, ng)).map_err(py_err)
    }

    /// `self[comp..comp+ncomp] -= mf[comp..]` over `ngrow` ghost cells (pyAMReX `minus`).
    #[pyo3(signature = (mf, comp, ncomp, ngrow=None))]
    fn minus(
        &mut self,
        mf: PyRef<'_, Self>,
        comp: usize,
        ncomp: usize,
        ngrow: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let ng = self.ng(ngrow)?;
        pair!(&mut self.store, &mf.store, "minus", (d, s) => d.subtract(s, comp, comp..comp + ncomp, ng))
            .map_err(py_err)
    }

    /// Swaps `dst[dcomp..dcomp+nc]` and `src[scomp..scomp+nc]` over `ng` ghost cells
    /// (AMReX `MultiFab.Swap`; two different MultiFabs of the same layout).
    #[pyo3(signature = (src, scomp, dcomp, nc, ng=None))]
    fn swap(
        mut slf: PyRefMut<'_, Self>,
        mut src: PyRefMut<'_, Self>,
        scomp: usize,
        dcomp: usize,
        nc: usize,
        ng: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let ng = slf.ng(ng)?;
        let src = src.host_mut()?;
        slf.host_mut()?
            .swap(src, scomp, dcomp..dcomp.saturating_add(nc), ng)
            .map_err(py_err)
    }

    /// Number of components (pyAMReX `n_comp`).
    #[getter(n_comp)]
    fn n_comp_getter(&self) -> usize {
        self.ncomp_()
    }

    /// Ghost cells per direction as an IntVect (pyAMReX `n_grow_vect`).
    #[getter]
    fn n_grow_vect(&self) -> crate::geometry::PyIntVect {
        crate::geometry::PyIntVect(either!(self, m => m.n_grow()))
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    typed::register(m)?;
    m.add_class::<PyMultiFab>()?;
    m.add_function(wrap_pyfunction!(copy_mfab, m)?)
}

/// The periodicity argument of the exchanges of every MultiFab type: none, three bools
/// or ints (periods from `domain`, the BoxArray's minimal box), a `Periodicity` or a
/// `Geometry`.
pub(crate) fn periodicity_arg(
    domain: amrex_multifab::IndexBox,
    periodic: Option<&Bound<'_, PyAny>>,
) -> PyResult<Periodicity> {
    let Some(p) = periodic else {
        return Ok(Periodicity::new(domain, [false; 3]));
    };
    if let Ok(p) = p.cast::<crate::amr::geometry::PyPeriodicity>() {
        return Ok(p.get().0);
    }
    if let Ok(g) = p.cast::<crate::amr::geometry::PyGeometry>() {
        return Ok(g.borrow().0.periodicity());
    }
    let flags = crate::amr::geometry::flags3(
        p,
        "periodic: three bools (or ints), a Periodicity or a Geometry (geom.periodicity())",
    )?;
    Ok(Periodicity::new(domain, flags))
}

/// MultiFabs with a `fill_boundary_nowait` in flight (MPI builds): the hook that ends
/// MPI at the interpreter's exit finishes them first, since a request left in flight at
/// `MPI_Finalize` can never be completed (MPI warns, and the buffers leak).
pub(crate) mod in_flight {
    use super::PyMultiFab;
    #[cfg(feature = "mpi")]
    use super::Store;
    use pyo3::prelude::*;

    #[cfg(feature = "mpi")]
    static LIST: std::sync::Mutex<Vec<Py<PyMultiFab>>> = std::sync::Mutex::new(Vec::new());

    pub(super) fn add(mf: &Bound<'_, PyMultiFab>) {
        #[cfg(feature = "mpi")]
        {
            let mut l = LIST
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if !l.iter().any(|m| m.is(mf)) {
                l.push(mf.clone().unbind());
            }
        }
        let _ = mf;
    }

    pub(super) fn remove(mf: &Bound<'_, PyMultiFab>) {
        #[cfg(feature = "mpi")]
        LIST.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .retain(|m| !m.is(mf));
        let _ = mf;
    }

    /// Finishes every exchange still in flight (collective: every rank exits together).
    #[cfg(feature = "mpi")]
    pub(crate) fn finish_all(py: Python<'_>) {
        let list = core::mem::take(
            &mut *LIST
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        for mf in list {
            if let Ok(mut m) = mf.bind(py).try_borrow_mut() {
                let _ = either_mut!(m, f => f.fill_boundary_finish());
            }
        }
    }
}
