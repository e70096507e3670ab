//! `FArrayBox` (AMReX `BaseFab<Real>`, `f64`) with zero-copy `array()` / `const_array()`
//! exports of shape `(ncomp, nz, ny, nx)` and zero-copy adoption of NumPy arrays.

use crate::fastcall::{DlpackSource, install};
use crate::geometry::{PyBox, int_vect_of};
use crate::interop::{dlpack_err, fab_err, import, to_numpy, to_xp};
use crate::protocol::{Export, ExportCount};
use crate::views::SharedView;
use amrex_basefab::{BaseFab, IndexBox, IntVect};
use amrex_dlpack_capsule::Imported;
use amrex_dlpack_core::DLDeviceType;
use pyo3::exceptions::{PyBufferError, PyIndexError};
use pyo3::prelude::*;

/// A box of cells with `ncomp` components of `f64` (AMReX `FArrayBox`).
///
/// Owning (`FArrayBox(box, ncomp)`) or over adopted memory (`FArrayBox.from_dlpack(a)`).
/// Its buffer never moves while it lives, so exports hold a reference to the fab.
#[pyclass(module = "amrex_rs", name = "FArrayBox")]
#[derive(Debug)]
pub(crate) struct PyFab {
    fab: BaseFab<'static, f64>,
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

// SAFETY: a plain description of the fab's memory (pointer, extents, strides); it grants
// no access by itself and is only used while the fab it describes is alive.
unsafe impl Send for FullExport {}
// SAFETY: as above; never mutated after construction.
unsafe impl Sync for FullExport {}

impl PyFab {
    fn wrap(fab: BaseFab<'static, f64>) -> Self {
        let mut this = Self {
            fab,
            full: FullExport(None),
        };
        this.full = FullExport(this.export_box(0, None, None, false).ok());
        this
    }
}

impl PyFab {
    fn export(
        &self,
        start: usize,
        count: Option<usize>,
        read_only: bool,
    ) -> PyResult<Export<'static>> {
        match self.full.0 {
            Some(e) if start == 0 && count.is_none() && !read_only => Ok(e),
            _ => self.export_box(start, count, None, read_only),
        }
    }

    /// Components `start..start+count` over `sub` (default: the fab's box).
    fn export_box(
        &self,
        start: usize,
        count: Option<usize>,
        sub: Option<IndexBox>,
        read_only: bool,
    ) -> PyResult<Export<'static>> {
        let layout = self.fab.tensor_layout().map_err(dlpack_err)?;
        let fab_box = self.fab.index_box();
        let sub = sub.unwrap_or(fab_box);
        if !fab_box.contains_box(&sub) || !sub.ok() {
            return Err(PyIndexError::new_err(format!(
                "box {sub} is not inside the fab's box {fab_box}"
            )));
        }
        let ncomp = self.fab.ncomp();
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
            host_accessible: self.fab.host_accessible(),
            dtype: amrex_dlpack_core::DataType::F64,
            shape: crate::protocol::Dims::new(&shape),
            strides: crate::protocol::Dims::new(&strides),
            read_only: read_only || self.fab.is_read_only(),
            copier: None,
        })
    }

    fn region(&self, bx: Option<&PyBox>) -> IndexBox {
        bx.map_or(self.fab.index_box(), |b| b.0)
    }

    fn view(
        slf: &Bound<'_, Self>,
        start: usize,
        count: Option<usize>,
        sub: Option<IndexBox>,
        ro: bool,
    ) -> PyResult<SharedView> {
        let e = slf.borrow().export_box(start, count, sub, ro)?;
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
        f(&slf.try_borrow()?.export(0, None, false)?, None)
    }
}

#[pymethods]
impl PyFab {
    /// A zero-filled fab over `box` with `ncomp` components.
    #[new]
    #[pyo3(signature = (r#box, ncomp=1))]
    fn py_new(r#box: &PyBox, ncomp: usize) -> Self {
        Self::wrap(BaseFab::new(r#box.0, ncomp))
    }

    /// Adopts a DLPack producer's `(ncomp, nz, ny, nx)` float64 array (rank 1–4, unit `i`
    /// stride, no negative strides) zero-copy, with the box starting at `lo`. A read-only
    /// array gives a read-only fab.
    #[staticmethod]
    #[pyo3(signature = (obj, lo=None))]
    fn from_dlpack(obj: &Bound<'_, PyAny>, lo: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let lo = lo.map_or(Ok(IntVect::ZERO), int_vect_of)?;
        let tensor = match import(obj)? {
            Imported::Versioned(t) => t,
            Imported::Legacy(_) => {
                return Err(PyBufferError::new_err(
                    "FArrayBox.from_dlpack needs a DLPack >= 1.0 producer (versioned capsule)",
                ));
            }
        };
        Ok(Self::wrap(
            BaseFab::from_dlpack_at(tensor, lo).map_err(dlpack_err)?,
        ))
    }

    /// The fab's box.
    #[getter(r#box)]
    fn index_box(&self) -> PyBox {
        PyBox(self.fab.index_box())
    }

    /// Number of components.
    #[getter]
    fn ncomp(&self) -> usize {
        self.fab.ncomp()
    }

    /// Number of cells.
    #[getter]
    fn num_pts(&self) -> usize {
        self.fab.num_pts()
    }

    /// Whether writes are refused (a read-only import).
    #[getter]
    fn read_only(&self) -> bool {
        self.fab.is_read_only()
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
        Self::view(slf, start_comp, num_comps, r#box.map(|b| b.0), false)
    }

    /// Read-only (`READ_ONLY`) zero-copy DLPack view; arguments as `array`.
    #[pyo3(signature = (start_comp=0, num_comps=None, r#box=None))]
    fn const_array(
        slf: &Bound<'_, Self>,
        start_comp: usize,
        num_comps: Option<usize>,
        r#box: Option<PyRef<'_, PyBox>>,
    ) -> PyResult<SharedView> {
        Self::view(slf, start_comp, num_comps, r#box.map(|b| b.0), true)
    }

    /// An `Array4` (global indices) over this fab's memory, zero-copy.
    fn array4(slf: &Bound<'_, Self>) -> PyResult<crate::array4::PyArray4> {
        let view = Self::view(slf, 0, None, None, false)?;
        let lo = slf.borrow().fab.index_box().small_end();
        let view = Bound::new(slf.py(), view)?;
        crate::array4::PyArray4::adopt(view.as_any(), (lo.x(), lo.y(), lo.z()))
    }

    /// `(device_type, device_id)` of the memory, as DLPack's `__dlpack_device__`.
    fn __dlpack_device__(&self) -> PyResult<(i32, i32)> {
        Ok(self.export(0, None, false)?.device_tuple())
    }

    /// A NumPy view `(ncomp, nz, ny, nx)`, or `(nx, ny, nz, ncomp)` with `order="F"`.
    #[pyo3(signature = (copy=false, order="F"))]
    fn to_numpy<'py>(
        slf: &Bound<'py, Self>,
        copy: bool,
        order: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let src = slf.borrow().export(0, None, false)?;
        to_numpy(slf.as_any(), &src, copy, order)
    }

    /// An array of the module matching the device (NumPy, CuPy or dpnp).
    #[pyo3(signature = (copy=false, order="F"))]
    fn to_xp<'py>(slf: &Bound<'py, Self>, copy: bool, order: &str) -> PyResult<Bound<'py, PyAny>> {
        let src = slf.borrow().export(0, None, false)?;
        to_xp(slf.as_any(), &src, copy, order)
    }

    /// Value at global `(i, j, k)`, component `n`.
    #[pyo3(signature = (i, j, k, n=0))]
    fn get(&self, i: i32, j: i32, k: i32, n: usize) -> PyResult<f64> {
        let a = self.fab.array().map_err(fab_err)?;
        a.get(i, j, k, n).copied().ok_or_else(|| {
            PyIndexError::new_err(format!(
                "({i}, {j}, {k}, {n}) outside the fab's box {} x {} components",
                self.fab.index_box(),
                self.fab.ncomp()
            ))
        })
    }

    fn __repr__(&self) -> String {
        let on_gpu = self.fab.device().device_type != DLDeviceType::CPU;
        format!(
            "FArrayBox({}, ncomp={}{})",
            self.fab.index_box(),
            self.fab.ncomp(),
            if on_gpu { ", device" } else { "" }
        )
    }
}

/// `FArrayBox.f(val, box=None, start_comp=0, num_comps=None)`: a scalar applied to
/// components `start_comp..start_comp+num_comps` (default: the rest) over `box` (default:
/// the fab's box).
macro_rules! scalar_ops {
    ($($(#[doc = $doc:literal])+ $name:ident;)+) => {
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
                let r = self.region(r#box.as_deref());
                let end = num_comps.map_or(self.fab.ncomp(), |n| start_comp.saturating_add(n));
                self.fab.$name(val, start_comp..end, r).map_err(fab_err)
            }
        )+}
    };
}

scalar_ops! {
    /// Sets components `start_comp..start_comp+num_comps` over `box` (default: all).
    set_val;
    /// Adds `val` to components `start_comp..start_comp+num_comps` over `box`.
    plus;
    /// Multiplies components by `val` over `box`.
    mult;
}

/// `FArrayBox.f(comp=0, box=None) -> float`: a reduction of one component over `box`
/// (default: the fab's box).
macro_rules! reductions {
    ($($(#[doc = $doc:literal])+ $name:ident;)+) => {
        #[pymethods]
        impl PyFab {$(
            $(#[doc = $doc])+
            #[pyo3(signature = (comp=0, r#box=None))]
            fn $name(&self, comp: usize, r#box: Option<PyRef<'_, PyBox>>) -> PyResult<f64> {
                self.fab
                    .$name(comp..=comp, self.region(r#box.as_deref()))
                    .map_err(fab_err)
            }
        )+}
    };
}

reductions! {
    /// Sum of component `comp` over `box` (default: the fab's box).
    sum;
    /// Minimum of component `comp`.
    min;
    /// Maximum of component `comp`.
    max;
    /// Max norm of component `comp`.
    norm0;
    /// L1 norm of component `comp`.
    norm1;
    /// L2 norm of component `comp`.
    norm2;
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyFab>()?;
    install::<PyFab>(m.py())?;
    m.add("BaseFab_Real", m.py().get_type::<PyFab>())
}
