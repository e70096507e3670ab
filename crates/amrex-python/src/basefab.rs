//! `FArrayBox` (AMReX `BaseFab<Real>`, `f64`) on any arena, with zero-copy `array()` /
//! `const_array()` exports of shape `(ncomp, nz, ny, nx)` and zero-copy adoption of NumPy
//! arrays and CUDA/ROCm/oneAPI tensors.
//!
//! Host fabs (the default) are `BaseFab<f64>` and run every operation on the CPU. Fabs on
//! another arena (`FArrayBox(box, ncomp, arena="device")`) own `BaseFab<f64, AnyArena>`
//! memory; fabs over adopted device memory keep the imported tensor plus the arena of its
//! device. Either way `set_val`, `plus`, `mult` and the reductions run as the arena's
//! [`Kernels`] on a [`Region`] of the fab, `get` copies one element, exports carry the
//! device, and operations that need the CPU on the memory raise `NotImplementedError`.

use crate::arena::{PyArena, arena_arg};
use crate::arena::{copier_of, dyn_copier, import_arena, is_host, not_on_device, settle};
use crate::dlpack::common::{DeviceCopier, Export};
use crate::dlpack::export::{DlpackSource, ExportCount};
use crate::dlpack::import::{Sharing, import, to_numpy};
use crate::dlpack::install;
use crate::error::py_err;
use crate::geometry::{PyBox, int_vect_of};
use crate::views::SharedView;
use amrex_arena::kernels::{Kernels, Reduce, Region, Unary, region_ptr};
use amrex_arena::{AnyArena, HostArena};
use amrex_array4::Access;
use amrex_basefab::{BaseFab, FabError, IndexBox, IntVect, component_range};
use amrex_dlpack_capsule::Imported;
use amrex_dlpack_core::{DLDeviceType, Device};
use core::ops::Range;
use pyo3::exceptions::{PyBufferError, PyIndexError};
use pyo3::prelude::*;

/// A fab's memory.
#[derive(Debug)]
enum Fab {
    /// Host memory (owned or adopted), or an adopted tensor on any device.
    Host(BaseFab<'static, f64>),
    /// Owned memory of an arena other than the host arena.
    Arena(BaseFab<'static, f64, AnyArena>),
}

/// `$e` with `$f` bound to the `BaseFab` inside a [`Fab`], whichever arena it is on.
macro_rules! on_fab {
    ($fab:expr, $f:ident => $e:expr) => {
        match $fab {
            Fab::Host($f) => $e,
            Fab::Arena($f) => $e,
        }
    };
}

/// A box of cells with `ncomp` components of `f64` (AMReX `FArrayBox`).
///
/// Owning (`FArrayBox(box, ncomp, arena=None)`) or over adopted memory
/// (`FArrayBox.from_dlpack(a)`). Its buffer never moves while it lives, so exports hold a
/// reference to the fab.
///
/// Invariant: `arena` is the host arena exactly when the CPU reaches the memory
/// directly: `Fab::Arena` fabs live on it (not the host arena), and a `Fab::Host` fab
/// with another arena is an adopted tensor of that arena's device, reached only through
/// the arena's copies and kernels.
#[pyclass(module = "amrex_rs", name = "FArrayBox")]
#[derive(Debug)]
pub(crate) struct PyFab {
    fab: Fab,
    /// The arena of the memory: the host arena for host memory; for adopted device memory,
    /// the arena its copies, kernels and stream waits go through (never its allocator).
    arena: AnyArena,
    /// The whole-fab export, computed once (the fab's layout never changes).
    full: FullExport,
}

/// A cached export of the whole fab.
#[derive(Clone, Copy)]
struct FullExport(Option<Export<'static>>);

impl core::fmt::Debug for FullExport {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("FullExport")
    }
}

// SAFETY: a plain description of the fab's memory (pointer, extents, strides, a
// `'static` stateless-or-shared copier); it grants no access by itself and is only used
// while the fab it describes is alive.
unsafe impl Send for FullExport {}
// SAFETY: as above; never mutated after construction.
unsafe impl Sync for FullExport {}

impl PyFab {
    fn wrap(fab: Fab, arena: AnyArena) -> Self {
        let mut this = Self {
            fab,
            arena,
            full: FullExport(None),
        };
        this.full = FullExport(this.export_box(0, None, None, Access::Writable).ok());
        this
    }

    /// Whether the memory is reached through the arena (kernels, copies) rather than by
    /// the CPU directly.
    fn on_arena(&self) -> bool {
        !is_host(&self.arena)
    }

    /// The host fab, when the CPU reaches the memory directly.
    fn host_fab(&self) -> Option<&BaseFab<'static, f64>> {
        match &self.fab {
            Fab::Host(f) if !self.on_arena() => Some(f),
            _ => None,
        }
    }

    /// As `host_fab`, for writing.
    fn host_fab_mut(&mut self) -> Option<&mut BaseFab<'static, f64>> {
        let direct = !self.on_arena();
        match &mut self.fab {
            Fab::Host(f) if direct => Some(f),
            _ => None,
        }
    }

    fn fab_box(&self) -> IndexBox {
        on_fab!(&self.fab, f => f.index_box())
    }

    fn ncomp_(&self) -> usize {
        on_fab!(&self.fab, f => f.ncomp())
    }

    fn device(&self) -> Device {
        on_fab!(&self.fab, f => f.device())
    }

    fn is_read_only(&self) -> bool {
        on_fab!(&self.fab, f => f.is_read_only())
    }

    /// The `NotImplementedError` of `method` on memory the CPU cannot reach.
    fn not_here(&self, method: &str) -> PyErr {
        not_on_device(
            &format!("FArrayBox.{method}"),
            self.device(),
            "fab.to_host() or fab.to_numpy(copy=True)",
        )
    }

    /// Components `comps` over `bx` as a region of the arena's kernels, validated as the
    /// host fab validates (components already resolved): `None` when it has no element.
    fn region(&self, bx: IndexBox, comps: Range<usize>) -> PyResult<Option<Region>> {
        let fab_box = self.fab_box();
        let len: [usize; 3] = if bx.ok() {
            core::array::from_fn(|d| usize::try_from(bx.length_dir(d)).unwrap_or(usize::MAX))
        } else {
            [0; 3]
        };
        if len.contains(&0) || comps.is_empty() {
            return Ok(None);
        }
        let inside = fab_box.ok() && bx.lo().all_ge(fab_box.lo()) && bx.hi().all_le(fab_box.hi());
        if !inside {
            return Err(py_err(FabError::BoxOutside { bx, fab: fab_box }));
        }
        let [js, ks, ns] = on_fab!(&self.fab, f => f.strides());
        let d = bx.lo() - fab_box.lo();
        // Non-negative (the box is inside) and inside the fab's elements.
        let offset = d.x() as usize + d.y() as usize * js + d.z() as usize * ks + comps.start * ns;
        let first = on_fab!(&self.fab, f => f.as_ptr());
        let ptr = region_ptr(first.wrapping_add(offset)).map_err(py_err)?;
        Ok(Some(Region {
            ptr,
            len: [len[0], len[1], len[2], comps.len()],
            stride: [js, ks, ns],
        }))
    }

    /// `op` on components `start..end` over `bx`, on the arena.
    fn apply(&mut self, op: Unary<f64>, bx: IndexBox, start: usize, end: usize) -> PyResult<()> {
        if self.is_read_only() {
            return Err(py_err(FabError::ReadOnly));
        }
        let comps = component_range(start..end, self.ncomp_()).map_err(py_err)?;
        let Some(r) = self.region(bx, comps)? else {
            return Ok(());
        };
        // SAFETY: `r` covers elements of this fab (box and components inside it, the
        // fab's own strides), in memory of `self.arena`'s device that the fab keeps alive
        // (owned from the arena, or an adopted tensor of its device: the struct
        // invariant); the fab is writable, so distinct indices are distinct elements, and
        // `&mut self` keeps our other methods off them while the kernel runs.
        unsafe { self.arena.apply(r, op) }.map_err(py_err)
    }

    /// `op` over component `comp` and `bx`, on the arena.
    fn reduce(&self, op: Reduce, comp: usize, bx: IndexBox) -> PyResult<f64> {
        let comps = component_range(comp..=comp, self.ncomp_()).map_err(py_err)?;
        let Some(r) = self.region(bx, comps)? else {
            return match op {
                Reduce::Min | Reduce::Max => Err(py_err(FabError::EmptyBox)),
                _ => Ok(0.0),
            };
        };
        // SAFETY: as in `apply`; reductions only read.
        unsafe { self.arena.reduce::<f64>(r, op) }.map_err(py_err)
    }

    /// A compact host copy.
    fn to_host_fab(&self) -> PyResult<BaseFab<'static, f64>> {
        if let Some(f) = self.host_fab() {
            return f.to_host().map_err(py_err);
        }
        settle(&self.arena)?;
        let e = self.export(0, None, Access::Writable)?;
        let mut out =
            BaseFab::try_new_in(self.fab_box(), self.ncomp_(), HostArena).map_err(py_err)?;
        let dst = out.as_mut_slice().map_err(py_err)?;
        let copier = copier_of(&self.arena).ok_or_else(|| self.not_here("to_host()"))?;
        // The export's compact row-major order (n, k, j, i) is the compact fab's order.
        copier.copy_to_host(&e, bytemuck::cast_slice_mut(dst))?;
        Ok(out)
    }
}

impl PyFab {
    fn export(
        &self,
        start: usize,
        count: Option<usize>,
        access: Access,
    ) -> PyResult<Export<'static>> {
        match self.full.0 {
            Some(e) if start == 0 && count.is_none() && access == Access::Writable => Ok(e),
            _ => self.export_box(start, count, None, access),
        }
    }

    /// Components `start..start+count` over `sub` (default: the fab's box).
    fn export_box(
        &self,
        start: usize,
        count: Option<usize>,
        sub: Option<IndexBox>,
        access: Access,
    ) -> PyResult<Export<'static>> {
        let layout = on_fab!(&self.fab, f => f.tensor_layout()).map_err(py_err)?;
        let fab_box = self.fab_box();
        let sub = sub.unwrap_or(fab_box);
        if !fab_box.contains_box(&sub) || !sub.ok() {
            return Err(PyIndexError::new_err(format!(
                "box {sub} is not inside the fab's box {fab_box}"
            )));
        }
        let ncomp = self.ncomp_();
        let count = count.unwrap_or(ncomp.saturating_sub(start));
        if start.checked_add(count).is_none_or(|e| e > ncomp) {
            return Err(PyIndexError::new_err(format!(
                "components {start}..{} out of range for {ncomp}",
                start.saturating_add(count)
            )));
        }
        let strides = *layout.strides();
        let len = sub.length();
        let shape = [
            count as i64,
            i64::from(len.z()),
            i64::from(len.y()),
            i64::from(len.x()),
        ];
        let d = sub.small_end() - fab_box.small_end();
        // Offset of (sub.lo, start) from the fab's first element; every term is
        // non-negative because `sub` lies inside the fab's box.
        let offset = start as i64 * strides[0]
            + i64::from(d.z()) * strides[1]
            + i64::from(d.y()) * strides[2]
            + i64::from(d.x());
        // Wrapping: the address is only used when the view has elements, and then it is
        // an element of the fab.
        let data = layout
            .data()
            .cast::<f64>()
            .wrapping_add(offset as usize)
            .cast();
        let device = layout.device();
        Ok(Export {
            data,
            device,
            host_accessible: on_fab!(&self.fab, f => f.host_accessible()),
            dtype: amrex_dlpack_core::DataType::F64,
            shape: crate::dlpack::common::Dims::new(&shape),
            strides: crate::dlpack::common::Dims::new(&strides),
            read_only: access == Access::ReadOnly || self.is_read_only(),
            copier: dyn_copier(&self.arena),
        })
    }

    fn region_of(&self, bx: Option<&PyBox>) -> IndexBox {
        bx.map_or(self.fab_box(), |b| b.0)
    }

    fn view(
        slf: &Bound<'_, Self>,
        start: usize,
        count: Option<usize>,
        sub: Option<IndexBox>,
        access: Access,
    ) -> PyResult<SharedView> {
        let e = slf.borrow().export_box(start, count, sub, access)?;
        // SAFETY: the fab's buffer lives as long as the fab object, which the view holds,
        // and no Python method reallocates it.
        Ok(unsafe { SharedView::new(slf.as_any(), e, None) })
    }
}

impl DlpackSource for PyFab {
    fn with_export<R>(
        slf: &Bound<'_, Self>,
        f: impl FnOnce(&Export<'_>, Option<&ExportCount>) -> PyResult<R>,
    ) -> PyResult<R> {
        let this = slf.try_borrow()?;
        settle(&this.arena)?;
        f(&this.export(0, None, Access::Writable)?, None)
    }
}

#[pymethods]
impl PyFab {
    /// A zero-filled fab over `box` with `ncomp` components, in memory of `arena`
    /// (`None`/`"host"`, `"pinned"`, `"device"`, `"managed"` or an `Arena`).
    #[new]
    #[pyo3(signature = (r#box, ncomp=1, arena=None))]
    fn py_new(r#box: &PyBox, ncomp: usize, arena: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let arena = arena_arg(arena)?;
        let fab = if is_host(&arena) {
            Fab::Host(BaseFab::try_new_in(r#box.0, ncomp, HostArena).map_err(py_err)?)
        } else {
            Fab::Arena(BaseFab::try_new_in(r#box.0, ncomp, arena.clone()).map_err(py_err)?)
        };
        Ok(Self::wrap(fab, arena))
    }

    /// Adopts a DLPack producer's `(ncomp, nz, ny, nx)` float64 array (rank 1–4, unit `i`
    /// stride, no negative strides) zero-copy, with the box starting at `lo`: host memory,
    /// or a CUDA/ROCm/oneAPI tensor, which is reached through `arena` (default: the
    /// device's own backend; it never frees the memory). A read-only array gives a
    /// read-only fab.
    #[staticmethod]
    #[pyo3(signature = (obj, lo=None, arena=None))]
    fn from_dlpack(
        obj: &Bound<'_, PyAny>,
        lo: Option<&Bound<'_, PyAny>>,
        arena: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let lo = lo.map_or(Ok(IntVect::ZERO), int_vect_of)?;
        let tensor = match import(obj)? {
            Imported::Versioned(t) => t,
            Imported::Legacy(_) => {
                return Err(PyBufferError::new_err(
                    "FArrayBox.from_dlpack needs a DLPack >= 1.0 producer (versioned capsule)",
                ));
            }
        };
        let arena = import_arena(tensor.device(), arena)?;
        let fab = BaseFab::from_dlpack_at(tensor, lo).map_err(py_err)?;
        Ok(Self::wrap(Fab::Host(fab), arena))
    }

    /// The arena of the memory.
    #[getter]
    fn arena(&self) -> PyArena {
        PyArena(self.arena.clone())
    }

    /// A copy of this fab in host memory (compact, same box and components).
    fn to_host(&self) -> PyResult<Self> {
        Ok(Self::wrap(
            Fab::Host(self.to_host_fab()?),
            AnyArena::default(),
        ))
    }

    /// The fab's box.
    #[getter(r#box)]
    fn index_box(&self) -> PyBox {
        PyBox(self.fab_box())
    }

    /// Number of components.
    #[getter]
    fn ncomp(&self) -> usize {
        self.ncomp_()
    }

    /// Number of cells.
    #[getter]
    fn num_pts(&self) -> usize {
        on_fab!(&self.fab, f => f.num_pts())
    }

    /// Whether writes are refused (a read-only import).
    #[getter]
    fn read_only(&self) -> bool {
        self.is_read_only()
    }

    /// Writable zero-copy DLPack view of components `start_comp..start_comp+num_comps`
    /// (all by default) over `box` (default: the whole fab):
    /// `np.from_dlpack(fab.array())[n, k, j, i]` is component `start_comp + n` at
    /// `box.lo + (i, j, k)`.
    #[pyo3(signature = (start_comp=0, num_comps=None, r#box=None))]
    fn array(
        slf: &Bound<'_, Self>,
        start_comp: usize,
        num_comps: Option<usize>,
        r#box: Option<PyRef<'_, PyBox>>,
    ) -> PyResult<SharedView> {
        Self::view(
            slf,
            start_comp,
            num_comps,
            r#box.map(|b| b.0),
            Access::Writable,
        )
    }

    /// Read-only (`READ_ONLY`) zero-copy DLPack view; arguments as `array`.
    #[pyo3(signature = (start_comp=0, num_comps=None, r#box=None))]
    fn const_array(
        slf: &Bound<'_, Self>,
        start_comp: usize,
        num_comps: Option<usize>,
        r#box: Option<PyRef<'_, PyBox>>,
    ) -> PyResult<SharedView> {
        Self::view(
            slf,
            start_comp,
            num_comps,
            r#box.map(|b| b.0),
            Access::ReadOnly,
        )
    }

    /// An `Array4` (global indices) over this fab's memory, zero-copy (host-accessible
    /// memory only).
    fn array4(slf: &Bound<'_, Self>) -> PyResult<crate::array4::PyArray4> {
        {
            let this = slf.borrow();
            if !on_fab!(&this.fab, f => f.host_accessible()) {
                return Err(this.not_here("array4()"));
            }
            settle(&this.arena)?;
        }
        let view = Self::view(slf, 0, None, None, Access::Writable)?;
        let lo = slf.borrow().fab_box().small_end();
        let view = Bound::new(slf.py(), view)?;
        crate::array4::PyArray4::adopt(view.as_any(), (lo.x(), lo.y(), lo.z()))
    }

    /// `(device_type, device_id)` of the memory, as DLPack's `__dlpack_device__`.
    fn __dlpack_device__(&self) -> PyResult<(i32, i32)> {
        Ok(self.export(0, None, Access::Writable)?.device_tuple())
    }

    /// A NumPy view `(ncomp, nz, ny, nx)`, or `(nx, ny, nz, ncomp)` with `order="F"`.
    #[pyo3(signature = (copy=false, order="F"))]
    fn to_numpy<'py>(
        slf: &Bound<'py, Self>,
        copy: bool,
        order: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let src = slf.borrow().export(0, None, Access::Writable)?;
        to_numpy(slf.as_any(), &src, Sharing::copy_if(copy), order)
    }

    /// An array of the module matching the device (NumPy, CuPy or dpnp).
    #[pyo3(signature = (copy=false, order="F"))]
    fn to_xp<'py>(slf: &Bound<'py, Self>, copy: bool, order: &str) -> PyResult<Bound<'py, PyAny>> {
        let src = slf.borrow().export(0, None, Access::Writable)?;
        crate::dlpack::import::to_xp(slf.as_any(), &src, Sharing::copy_if(copy), order)
    }

    /// Value at global `(i, j, k)`, component `n`.
    #[pyo3(signature = (i, j, k, n=0))]
    fn get(&self, i: i32, j: i32, k: i32, n: usize) -> PyResult<f64> {
        let outside = || {
            PyIndexError::new_err(format!(
                "({i}, {j}, {k}, {n}) outside the fab's box {} x {} components",
                self.fab_box(),
                self.ncomp_()
            ))
        };
        if let Some(f) = self.host_fab() {
            let a = f.array().map_err(py_err)?;
            return a.get(i, j, k, n).copied().ok_or_else(outside);
        }
        // One element through the arena.
        let p = IntVect::new(i, j, k);
        if !self.fab_box().contains(p) || n >= self.ncomp_() {
            return Err(outside());
        }
        let Some(r) = self.region(IndexBox::new(p, p), n..n + 1)? else {
            return Err(outside());
        };
        let mut out = 0.0f64;
        // SAFETY: `r.ptr` is one element of this fab (checked inside), in memory the
        // arena reaches (struct invariant); `out` is 8 bytes of host memory of ours.
        unsafe { amrex_arena::Arena::copy_to_host(&self.arena, (&raw mut out).cast(), r.ptr, 8) }
            .map_err(py_err)?;
        Ok(out)
    }

    fn __repr__(&self) -> String {
        let device = self.device();
        let on = if device.device_type == DLDeviceType::CPU {
            String::new()
        } else {
            format!(", device={device}")
        };
        format!("FArrayBox({}, ncomp={}{on})", self.fab_box(), self.ncomp_(),)
    }
}

/// `FArrayBox.f(val, box=None, start_comp=0, num_comps=None)`: a scalar applied to
/// components `start_comp..start_comp+num_comps` (default: the rest) over `box` (default:
/// the fab's box).
/// On another arena the same operation runs as the arena's kernel.
macro_rules! scalar_ops {
    ($($(#[doc = $doc:literal])+ $name:ident => $op:ident;)+) => {
        #[pymethods]
        impl PyFab {$(
            $(#[doc = $doc])+
            #[pyo3(signature = (val, r#box=None, start_comp=0, num_comps=None))]
            fn $name(
                &mut self,
                val: f64,
                r#box: Option<PyRef<'_, PyBox>>,
                start_comp: usize,
                num_comps: Option<usize>,
            ) -> PyResult<()> {
                let r = self.region_of(r#box.as_deref());
                let end = num_comps.map_or(self.ncomp_(), |n| start_comp.saturating_add(n));
                match self.host_fab_mut() {
                    Some(f) => f.$name(val, start_comp..end, r).map_err(py_err),
                    None => self.apply(Unary::$op(val), r, start_comp, end),
                }
            }
        )+}
    };
}

scalar_ops! {
    /// Sets components `start_comp..start_comp+num_comps` over `box` (default: all).
    set_val => Set;
    /// Adds `val` to components `start_comp..start_comp+num_comps` over `box`.
    plus => Add;
    /// Multiplies components by `val` over `box`.
    mult => Scale;
}

/// `FArrayBox.f(comp=0, box=None) -> float`: a reduction of one component over `box`
/// (default: the fab's box). On another arena it runs as the arena's reduction kernel
/// (`post` turns its result into the norm).
macro_rules! reductions {
    ($($(#[doc = $doc:literal])+ $name:ident => $op:ident, $post:expr;)+) => {
        #[pymethods]
        impl PyFab {$(
            $(#[doc = $doc])+
            #[pyo3(signature = (comp=0, r#box=None))]
            fn $name(&self, comp: usize, r#box: Option<PyRef<'_, PyBox>>) -> PyResult<f64> {
                let r = self.region_of(r#box.as_deref());
                match self.host_fab() {
                    Some(f) => f.$name(comp..=comp, r).map_err(py_err),
                    None => self.reduce(Reduce::$op, comp, r).map($post),
                }
            }
        )+}
    };
}

reductions! {
    /// Sum of component `comp` over `box` (default: the fab's box).
    sum => Sum, |x| x;
    /// Minimum of component `comp`.
    min => Min, |x| x;
    /// Maximum of component `comp`.
    max => Max, |x| x;
    /// Max norm of component `comp`.
    norm0 => MaxAbs, |x| x;
    /// L1 norm of component `comp`.
    norm1 => SumAbs, |x| x;
    /// L2 norm of component `comp`.
    norm2 => SumSquares, f64::sqrt;
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyFab>()?;
    install::<PyFab>(m.py())?;
    m.add("BaseFab_Real", m.py().get_type::<PyFab>())
}
