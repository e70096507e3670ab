//! Particles: `ArrayOfStructs_2_1` (`Particle<2, 1>`: 3 positions, 2 reals, idcpu, 1 int)
//! and `StructOfArrays_2_1`, with id/cpu packing helpers.
//!
//! DLPack has no struct dtype, so an array of structs is shared one field at a time
//! (`aos.field("x")`: a rank-1 view whose stride is the particle size in elements) or as
//! the `(n, 5)` block of positions and reals. Views count as exports: while one lives,
//! operations that could reallocate the particles raise `BufferError`.
//!
//! Both containers live on any arena (`ArrayOfStructs_2_1(arena="device")`): appending,
//! resizing, reading one particle or value, views (exported with the arena's device) and
//! `to_host()` work everywhere, through the arena's copies on device memory; `to_dict()`
//! (NumPy views) needs host memory and raises `NotImplementedError` on a device.

use crate::arena::{PyArena, arena_arg};
use crate::arena::{dyn_copier, is_host, not_on_device, settle};
use crate::dlpack::common::{Dims, Export};
use crate::dlpack::export::ExportCount;
use crate::error::py_err;
use crate::views::SharedView;
use amrex_aos::{ArrayOfStructs, FieldKind, Particle, StridedLayout, StructOfArrays, idcpu};
use amrex_arena::{AnyArena, Arena};
use amrex_array4::Access;
use amrex_dlpack_core::DlpackElement;
use amrex_podvector::PodVector;
use bytemuck::AnyBitPattern;
use core::ptr::NonNull;
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

type P21 = Particle<2, 1>;

/// An array of structs on the host arena or another one.
#[derive(Debug)]
enum Aos {
    Host(ArrayOfStructs<P21>),
    Arena(ArrayOfStructs<P21, AnyArena>),
}

/// `$e` with `$c` bound to the container inside an [`Aos`] or a struct-of-arrays store.
macro_rules! on {
    ($ty:ident, $x:expr, $c:ident => $e:expr) => {
        match $x {
            $ty::Host($c) => $e,
            $ty::Arena($c) => $e,
        }
    };
}

/// Element `i` of a vector on any arena (a one-element copy on device memory).
fn element<T: AnyBitPattern, A: Arena>(v: &PodVector<T, A>, i: usize) -> PyResult<T> {
    if i >= v.len() {
        return Err(PyIndexError::new_err("component or particle out of range"));
    }
    v.get_copy(i).map_err(py_err)
}

/// The export of a whole component vector on any arena.
fn pod_export<T: DlpackElement + AnyBitPattern, A: Arena>(
    v: &PodVector<T, A>,
    arena: &AnyArena,
) -> Export<'static> {
    Export {
        data: v.as_ptr().cast_mut().cast(),
        device: v.device(),
        host_accessible: v.arena().host_accessible(),
        dtype: T::DTYPE,
        shape: Dims::new(&[v.len() as i64]),
        strides: Dims::new(&[1]),
        read_only: false,
        copier: dyn_copier(arena),
    }
}

/// Writes host `src` into elements `at..at + src.len()` of `dst`, memory of `arena`.
///
/// # Safety
/// `dst` points to an allocation of `arena` holding at least `at + src.len()` elements.
unsafe fn write_at<T: AnyBitPattern>(
    arena: &AnyArena,
    dst: *mut T,
    at: usize,
    src: &[T],
) -> PyResult<()> {
    if src.is_empty() {
        return Ok(());
    }
    let p = NonNull::new(dst.wrapping_add(at).cast::<u8>())
        .ok_or_else(|| PyValueError::new_err("a non-empty component with a NULL pointer"))?;
    // SAFETY: the caller's obligation: `src.len()` elements from `at` lie in the
    // allocation; `src` is host memory of ours, distinct from it.
    unsafe { arena.copy_from_host(p, src.as_ptr().cast(), size_of_val(src)) }.map_err(py_err)
}

/// `amrex_rs.make_id_cpu(id, cpu)`: AMReX's packed 64-bit id/cpu word.
#[pyfunction]
fn make_id_cpu(id: i64, cpu: i32) -> PyResult<u64> {
    idcpu::try_make_id_cpu(id, cpu).map_err(|e| PyValueError::new_err(format!("{e:?}")))
}

/// The signed particle id of a packed word.
#[pyfunction]
fn particle_id(idcpu: u64) -> i64 {
    idcpu::id(idcpu)
}

/// The cpu of a packed word.
#[pyfunction]
fn particle_cpu(idcpu: u64) -> i32 {
    idcpu::cpu(idcpu)
}

fn layout_export(l: &StridedLayout, access: Access, arena: &AnyArena) -> Export<'static> {
    Export {
        data: l.data(),
        device: l.device(),
        host_accessible: l.device().is_host_accessible(),
        dtype: l.dtype(),
        shape: Dims::new(l.shape()),
        strides: Dims::new(l.strides()),
        read_only: access == Access::ReadOnly,
        copier: dyn_copier(arena),
    }
}

/// The Python keyword `readonly=` (a bool, as in pyAMReX).
fn access_of(readonly: bool) -> Access {
    if readonly {
        Access::ReadOnly
    } else {
        Access::Writable
    }
}

fn field_kind(name: &str) -> PyResult<FieldKind> {
    let bad = || {
        PyValueError::new_err(format!(
            "unknown field {name:?}: use x, y, z, real_N, idcpu or int_N"
        ))
    };
    Ok(match name {
        "x" => FieldKind::Position(0),
        "y" => FieldKind::Position(1),
        "z" => FieldKind::Position(2),
        "idcpu" => FieldKind::IdCpu,
        _ => {
            if let Some(n) = name.strip_prefix("real_") {
                FieldKind::Real(n.parse().map_err(|_| bad())?)
            } else if let Some(n) = name.strip_prefix("int_") {
                FieldKind::Int(n.parse().map_err(|_| bad())?)
            } else {
                return Err(bad());
            }
        }
    })
}

/// AMReX `ArrayOfStructs<Particle<2, 1>>` (double precision, 56-byte particles).
#[pyclass(module = "amrex_rs", name = "ArrayOfStructs_2_1")]
#[derive(Debug)]
pub(crate) struct PyAos {
    aos: Aos,
    exports: ExportCount,
}

impl PyAos {
    fn arena(&self) -> AnyArena {
        match &self.aos {
            Aos::Host(_) => AnyArena::default(),
            Aos::Arena(a) => a.arena().clone(),
        }
    }

    fn view(
        slf: &Bound<'_, Self>,
        l: PyResult<StridedLayout>,
        access: Access,
    ) -> PyResult<SharedView> {
        let this = slf.borrow();
        let arena = this.arena();
        settle(&arena)?;
        let e = layout_export(&l?, access, &arena);
        // SAFETY: the particles live in this object's vector, which is not reallocated
        // while the view (holding one count) lives.
        Ok(unsafe { SharedView::new(slf.as_any(), e, Some(&this.exports)) })
    }
}

#[pymethods]
impl PyAos {
    /// An empty container in memory of `arena` (`None`/`"host"`, `"pinned"`, `"device"`,
    /// `"managed"` or an `Arena`).
    #[new]
    #[pyo3(signature = (arena=None))]
    fn py_new(arena: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let arena = arena_arg(arena)?;
        let aos = if is_host(&arena) {
            Aos::Host(ArrayOfStructs::new())
        } else {
            Aos::Arena(ArrayOfStructs::new_in(arena))
        };
        Ok(Self {
            aos,
            exports: ExportCount::default(),
        })
    }

    /// The arena of the particles.
    #[getter(arena)]
    fn py_arena(&self) -> PyArena {
        PyArena(self.arena())
    }

    /// `(device_type, device_id)` of the particle memory.
    fn device(&self) -> (i32, i32) {
        let d = on!(Aos, &self.aos, a => a.device());
        (d.device_type.0, d.device_id)
    }

    /// A copy of the particles (neighbours included) in host memory.
    fn to_host(&self) -> PyResult<Self> {
        let aos = match &self.aos {
            Aos::Host(a) => a.try_clone().map_err(py_err)?,
            Aos::Arena(a) => {
                settle(a.arena())?;
                let all = a.to_host_vec().map_err(py_err)?;
                let real = a.num_particles();
                let mut h = ArrayOfStructs::from_slice(&all[..real]);
                h.set_num_neighbors(a.num_neighbors())
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                h.as_mut_slice()[real..].copy_from_slice(&all[real..]);
                h
            }
        };
        Ok(Self {
            aos: Aos::Host(aos),
            exports: ExportCount::default(),
        })
    }

    /// Appends a particle.
    #[pyo3(signature = (pos, rdata=[0.0, 0.0], id=1, cpu=0, idata=[0]))]
    fn push_back(
        &mut self,
        pos: [f64; 3],
        rdata: [f64; 2],
        id: i64,
        cpu: i32,
        idata: [i32; 1],
    ) -> PyResult<()> {
        self.exports.check_resizable()?;
        let mut p = P21::new(pos);
        p.rdata = rdata;
        p.idata = idata;
        p.try_set_id_cpu(id, cpu)
            .map_err(|e| PyValueError::new_err(format!("{e:?}")))?;
        on!(Aos, &mut self.aos, a => a.try_push(p)).map_err(py_err)
    }

    /// Particles including neighbours.
    fn size(&self) -> usize {
        on!(Aos, &self.aos, a => a.len())
    }

    /// Removes the last particle (AMReX `pop_back`: the size shrinks, the memory stays);
    /// `IndexError` when empty, `BufferError` while views of the particles live. With
    /// neighbour particles AMReX drops the last neighbour slot but keeps the neighbour
    /// count (one real particle fewer); that is refused (`NotImplementedError`) rather than
    /// done differently.
    fn pop_back(&mut self) -> PyResult<()> {
        self.exports.check_resizable()?;
        let n = self.size();
        if n == 0 {
            return Err(pyo3::exceptions::PyIndexError::new_err(
                "pop_back on an empty ArrayOfStructs",
            ));
        }
        let nn = on!(Aos, &self.aos, a => a.num_neighbors());
        if nn > 0 {
            return Err(pyo3::exceptions::PyNotImplementedError::new_err(format!(
                "pop_back with {nn} neighbour particles: AMReX would drop the last neighbour \
                 slot and keep the neighbour count; call set_num_neighbors(0) first"
            )));
        }
        on!(Aos, &mut self.aos, a => a.truncate(n - 1));
        Ok(())
    }

    fn __len__(&self) -> usize {
        self.size()
    }

    /// Particles excluding neighbours.
    fn num_particles(&self) -> usize {
        on!(Aos, &self.aos, a => a.num_particles())
    }

    /// Neighbour particles at the end.
    fn num_neighbors(&self) -> usize {
        on!(Aos, &self.aos, a => a.num_neighbors())
    }

    /// Sets the number of neighbour particles (grows or shrinks the array).
    fn set_num_neighbors(&mut self, n: usize) -> PyResult<()> {
        self.exports.check_resizable()?;
        on!(Aos, &mut self.aos, a => a.set_num_neighbors(n))
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Bytes per particle.
    #[getter]
    fn particle_size(&self) -> usize {
        core::mem::size_of::<P21>()
    }

    /// Particle `i` as a dict (`pos`, `rdata`, `idata`, `id`, `cpu`, `valid`).
    fn get<'py>(&self, py: Python<'py>, i: usize) -> PyResult<Bound<'py, PyDict>> {
        let out_of_range = || PyIndexError::new_err("particle index out of range");
        let p = match &self.aos {
            Aos::Host(a) => *a.as_slice().get(i).ok_or_else(out_of_range)?,
            Aos::Arena(a) => {
                if i >= a.len() {
                    return Err(out_of_range());
                }
                settle(a.arena())?;
                a.as_pod_vector().get_copy(i).map_err(py_err)?
            }
        };
        let d = PyDict::new(py);
        d.set_item("pos", (p.pos[0], p.pos[1], p.pos[2]))?;
        d.set_item("rdata", (p.rdata[0], p.rdata[1]))?;
        d.set_item("idata", (p.idata[0],))?;
        d.set_item("id", p.id())?;
        d.set_item("cpu", p.cpu())?;
        d.set_item("valid", p.is_valid())?;
        Ok(d)
    }

    /// Zero-copy view of one field over every particle: `x y z real_0 real_1 idcpu int_0`.
    #[pyo3(signature = (name, readonly=false))]
    fn field(slf: &Bound<'_, Self>, name: &str, readonly: bool) -> PyResult<SharedView> {
        let kind = field_kind(name)?;
        let l = on!(Aos, &slf.borrow().aos, a => a.field_layout(kind)).map_err(py_err);
        Self::view(slf, l, access_of(readonly))
    }

    /// Zero-copy `(n, 5)` view of positions and reals.
    #[pyo3(signature = (readonly=false))]
    fn real_block(slf: &Bound<'_, Self>, readonly: bool) -> PyResult<SharedView> {
        let l = on!(Aos, &slf.borrow().aos, a => a.real_block_layout()).map_err(py_err);
        Self::view(slf, l, access_of(readonly))
    }

    fn __repr__(&self) -> String {
        let d = on!(Aos, &self.aos, a => a.device());
        if is_host(&self.arena()) {
            format!("ArrayOfStructs_2_1(size={})", self.size())
        } else {
            format!("ArrayOfStructs_2_1(size={}, device={d})", self.size())
        }
    }
}

/// A host copy of a struct of arrays on any arena: components, names, neighbours.
fn soa_to_host<const NR: usize, const NI: usize, A: Arena>(
    s: &StructOfArrays<NR, NI, A>,
) -> PyResult<StructOfArrays<NR, NI>> {
    if s.arena().kind() == amrex_arena::MemoryKind::Managed {
        s.arena().synchronize().map_err(py_err)?;
    }
    let mut h = StructOfArrays::<NR, NI>::new();
    for i in 0..s.num_real_comps() {
        match (i < NR, s.real_name(i)) {
            (true, Some(name)) => h.set_real_name(i, name).map_err(py_err)?,
            (true, None) => {}
            (false, name) => {
                h.add_real_comp(name).map_err(py_err)?;
            }
        }
    }
    for i in 0..s.num_int_comps() {
        match (i < NI, s.int_name(i)) {
            (true, Some(name)) => h.set_int_name(i, name).map_err(py_err)?,
            (true, None) => {}
            (false, name) => {
                h.add_int_comp(name).map_err(py_err)?;
            }
        }
    }
    h.resize(s.num_particles()).map_err(py_err)?;
    h.set_num_neighbors(s.num_neighbors()).map_err(py_err)?;
    s.idcpu().copy_to_host(h.idcpu_mut()).map_err(py_err)?;
    for c in 0..s.num_real_comps() {
        s.real(c).copy_to_host(h.real_mut(c)).map_err(py_err)?;
    }
    for c in 0..s.num_int_comps() {
        s.int(c).copy_to_host(h.int_mut(c)).map_err(py_err)?;
    }
    Ok(h)
}

/// One component vector of a struct of arrays.
#[derive(Clone, Copy, Debug)]
enum SoaComponent {
    /// Real component `i`.
    Real(usize),
    /// Int component `i`.
    Int(usize),
    /// The packed id/cpu words.
    IdCpu,
}

/// Values of a NumPy-convertible array as `T` (converted with `numpy.asarray(x, dtype)`,
/// C order), with their shape; always copied into Rust memory, so the source may be any
/// array, even a view of the particles being extended.
fn array_values<T: DlpackElement + Copy>(
    x: &Bound<'_, PyAny>,
    dtype: &str,
    what: &str,
) -> PyResult<(Vec<usize>, Vec<T>)> {
    let py = x.py();
    let np = py.import("numpy")?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("dtype", dtype)?;
    let arr = np
        .call_method("ascontiguousarray", (x,), Some(&kwargs))
        .map_err(|e| PyValueError::new_err(format!("{what}: cannot convert to {dtype}: {e}")))?;
    let shape: Vec<usize> = arr.getattr("shape")?.extract()?;
    let flat = arr.call_method1("reshape", (-1,))?;
    let t = crate::dlpack::import::import(&flat)?;
    let typed = t.view().typed::<T>().map_err(py_err)?;
    let values = typed
        .as_slice()
        .ok_or_else(|| PyValueError::new_err(format!("{what}: not compact after conversion")))?
        .to_vec();
    Ok((shape, values))
}

/// Checks that an array has shape `want` (`usize::MAX` where any extent is allowed).
fn check_shape(what: &str, shape: &[usize], want: &[usize]) -> PyResult<()> {
    let ok = shape.len() == want.len()
        && shape
            .iter()
            .zip(want)
            .all(|(&s, &w)| w == usize::MAX || s == w);
    if ok {
        Ok(())
    } else {
        let want: Vec<String> = want
            .iter()
            .map(|&w| {
                if w == usize::MAX {
                    "n".into()
                } else {
                    w.to_string()
                }
            })
            .collect();
        Err(PyValueError::new_err(format!(
            "{what} must have shape ({}), got {shape:?}",
            want.join(", ")
        )))
    }
}

/// The packed id/cpu words for `n` particles: `ids` (default `first_id, first_id + 1,
/// ...`), one `cpu` for all.
fn id_cpu_words(
    ids: Option<&Bound<'_, PyAny>>,
    cpu: i32,
    n: usize,
    first_id: i64,
) -> PyResult<Vec<u64>> {
    let ids: Vec<i64> = match ids {
        Some(ids) => {
            let (shape, v) = array_values::<i64>(ids, "int64", "ids")?;
            check_shape("ids", &shape, &[n])?;
            v
        }
        None => (0..n as i64).map(|i| first_id + i).collect(),
    };
    ids.into_iter()
        .map(|id| {
            idcpu::try_make_id_cpu(id, cpu)
                .map_err(|e| PyValueError::new_err(format!("id {id}, cpu {cpu}: {e:?}")))
        })
        .collect()
}

/// Bulk construction from arrays (no Python loop per particle).
#[pymethods]
impl PyAos {
    /// Appends `n` particles from arrays in one call: `pos` of shape `(n, 3)`, `rdata`
    /// `(n, 2)` (default zeros), `idata` `(n, 1)` or `(n,)` (default zeros), `ids` `(n,)`
    /// (default `len + 1, len + 2, ...`), one `cpu` for all. Values are converted to the
    /// particle's types; nothing is appended when a shape is wrong.
    #[pyo3(signature = (pos, rdata=None, ids=None, cpu=0, idata=None))]
    fn extend(
        &mut self,
        pos: &Bound<'_, PyAny>,
        rdata: Option<&Bound<'_, PyAny>>,
        ids: Option<&Bound<'_, PyAny>>,
        cpu: i32,
        idata: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        self.exports.check_resizable()?;
        let (shape, pos) = array_values::<f64>(pos, "float64", "pos")?;
        check_shape("pos", &shape, &[usize::MAX, 3])?;
        let n = shape[0];
        let rdata = match rdata {
            Some(r) => {
                let (shape, v) = array_values::<f64>(r, "float64", "rdata")?;
                check_shape("rdata", &shape, &[n, 2])?;
                v
            }
            None => vec![0.0; 2 * n],
        };
        let idata = match idata {
            Some(r) => {
                let (shape, v) = array_values::<i32>(r, "int32", "idata")?;
                if shape.len() == 1 {
                    check_shape("idata", &shape, &[n])?;
                } else {
                    check_shape("idata", &shape, &[n, 1])?;
                }
                v
            }
            None => vec![0; n],
        };
        let words = id_cpu_words(ids, cpu, n, self.size() as i64 + 1)?;
        let particles: Vec<P21> = (0..n)
            .map(|i| {
                let mut p = P21::new([pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]]);
                p.rdata = [rdata[2 * i], rdata[2 * i + 1]];
                p.idata = [idata[i]];
                p.idcpu = words[i];
                p
            })
            .collect();
        settle(&self.arena())?;
        on!(Aos, &mut self.aos, a => a.try_extend_from_slice(&particles))
            .map_err(|e| PyValueError::new_err(format!("cannot allocate {n} particles: {e:?}")))
    }

    /// A new container (in memory of `arena`) holding the particles of
    /// [`extend`](Self::extend)'s arrays.
    #[staticmethod]
    #[pyo3(signature = (pos, rdata=None, ids=None, cpu=0, idata=None, arena=None))]
    fn from_arrays(
        pos: &Bound<'_, PyAny>,
        rdata: Option<&Bound<'_, PyAny>>,
        ids: Option<&Bound<'_, PyAny>>,
        cpu: i32,
        idata: Option<&Bound<'_, PyAny>>,
        arena: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut a = Self::py_new(arena)?;
        a.extend(pos, rdata, ids, cpu, idata)?;
        Ok(a)
    }
}

/// A struct-of-arrays class `$ty` for `StructOfArrays<$nr, $ni>` (`$soa` holds it on the
/// host arena or another one): the same API for every component count.
macro_rules! soa_class {
    (
        $(#[doc = $doc:literal])+
        $ty:ident, $soa:ident, $nr:literal, $ni:literal, $pyname:literal
    ) => {
/// A struct of arrays on the host arena or another one.
#[derive(Debug)]
enum $soa {
    Host(StructOfArrays<$nr, $ni>),
    Arena(StructOfArrays<$nr, $ni, AnyArena>),
}

$(#[doc = $doc])+
#[pyclass(module = "amrex_rs", name = $pyname)]
#[derive(Debug)]
pub(crate) struct $ty {
    soa: $soa,
    exports: ExportCount,
}

impl $ty {
    fn arena(&self) -> AnyArena {
        match &self.soa {
            $soa::Host(_) => AnyArena::default(),
            $soa::Arena(s) => s.arena().clone(),
        }
    }

    fn view(slf: &Bound<'_, Self>, e: Export<'static>) -> PyResult<SharedView> {
        let this = slf.borrow();
        settle(&this.arena())?;
        // SAFETY: the component lives in this object and is not reallocated while the view
        // (holding one count) lives.
        Ok(unsafe { SharedView::new(slf.as_any(), e, Some(&this.exports)) })
    }

    /// The export of one component vector.
    fn component_export(&self, which: SoaComponent) -> PyResult<Export<'static>> {
        let arena = self.arena();
        on!($soa, &self.soa, s => match which {
            SoaComponent::IdCpu => Ok(pod_export(s.idcpu(), &arena)),
            SoaComponent::Real(i) => s
                .get_real(i)
                .map(|v| pod_export(v, &arena))
                .ok_or_else(|| PyIndexError::new_err("real component out of range")),
            SoaComponent::Int(i) => s
                .get_int(i)
                .map(|v| pod_export(v, &arena))
                .ok_or_else(|| PyIndexError::new_err("int component out of range")),
        })
    }
}

#[pymethods]
impl $ty {
    /// An empty container in memory of `arena` (`None`/`"host"`, `"pinned"`, `"device"`,
    /// `"managed"` or an `Arena`).
    #[new]
    #[pyo3(signature = (arena=None))]
    fn py_new(arena: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let arena = arena_arg(arena)?;
        let soa = if is_host(&arena) {
            $soa::Host(StructOfArrays::new())
        } else {
            $soa::Arena(StructOfArrays::new_in(arena))
        };
        Ok(Self {
            soa,
            exports: ExportCount::default(),
        })
    }

    /// The arena of the particles.
    #[getter(arena)]
    fn py_arena(&self) -> PyArena {
        PyArena(self.arena())
    }

    /// `(device_type, device_id)` of the particle memory.
    fn device(&self) -> (i32, i32) {
        let d = on!($soa, &self.soa, s => s.device());
        (d.device_type.0, d.device_id)
    }

    /// A copy of the particles (components, names, neighbours) in host memory.
    fn to_host(&self) -> PyResult<Self> {
        Ok(Self {
            soa: $soa::Host(on!($soa, &self.soa, s => soa_to_host(s))?),
            exports: ExportCount::default(),
        })
    }

    /// Appends a particle: its packed `idcpu`, one value per real and int component.
    #[pyo3(signature = (idcpu, reals, ints))]
    fn push_back(&mut self, idcpu: u64, reals: Vec<f64>, ints: Vec<i32>) -> PyResult<()> {
        self.exports.check_resizable()?;
        on!($soa, &mut self.soa, s => s.push(idcpu, &reals, &ints)).map_err(py_err)
    }

    /// Adds a real component (zero-filled); returns its index.
    #[pyo3(signature = (name=None))]
    fn add_real_comp(&mut self, name: Option<&str>) -> PyResult<usize> {
        self.exports.check_resizable()?;
        on!($soa, &mut self.soa, s => s.add_real_comp(name)).map_err(py_err)
    }

    /// Adds an int component (zero-filled); returns its index.
    #[pyo3(signature = (name=None))]
    fn add_int_comp(&mut self, name: Option<&str>) -> PyResult<usize> {
        self.exports.check_resizable()?;
        on!($soa, &mut self.soa, s => s.add_int_comp(name)).map_err(py_err)
    }

    /// The names of the real components (`None` for unnamed ones).
    fn real_names(&self) -> Vec<Option<String>> {
        on!($soa, &self.soa, s => (0..s.num_real_comps())
            .map(|i| s.real_name(i).map(str::to_owned))
            .collect())
    }

    /// Number of particles.
    fn size(&self) -> usize {
        on!($soa, &self.soa, s => s.len())
    }

    fn __len__(&self) -> usize {
        self.size()
    }

    /// Writable zero-copy view of real component `i`.
    fn real(slf: &Bound<'_, Self>, i: usize) -> PyResult<SharedView> {
        let e = slf.borrow().component_export(SoaComponent::Real(i))?;
        Self::view(slf, e)
    }

    /// Writable zero-copy view of int component `i`.
    fn int(slf: &Bound<'_, Self>, i: usize) -> PyResult<SharedView> {
        let e = slf.borrow().component_export(SoaComponent::Int(i))?;
        Self::view(slf, e)
    }

    /// Writable zero-copy view of the packed id/cpu words.
    fn idcpu(slf: &Bound<'_, Self>) -> PyResult<SharedView> {
        let e = slf.borrow().component_export(SoaComponent::IdCpu)?;
        Self::view(slf, e)
    }

    /// Int component `comp` of particle `i`.
    fn get_int(&self, comp: usize, i: usize) -> PyResult<i32> {
        settle(&self.arena())?;
        on!($soa, &self.soa, s => match s.get_int(comp) {
            Some(v) => element(v, i),
            None => Err(PyIndexError::new_err("component or particle out of range")),
        })
    }

    /// Real component `comp` of particle `i`.
    fn get_real(&self, comp: usize, i: usize) -> PyResult<f64> {
        settle(&self.arena())?;
        on!($soa, &self.soa, s => match s.get_real(comp) {
            Some(v) => element(v, i),
            None => Err(PyIndexError::new_err("component or particle out of range")),
        })
    }
}

/// Bulk construction from arrays and the components as a dict of zero-copy arrays.
#[pymethods]
impl $ty {
    /// Appends `n` particles in one call: `idcpu` of shape `(n,)` (packed words, see
    /// `make_id_cpu`), `reals` of shape `(num_real_comps, n)` (or a sequence of that many
    /// length-`n` arrays), `ints` of shape `(num_int_comps, n)`. Nothing is appended when
    /// a shape is wrong.
    #[pyo3(signature = (idcpu, reals, ints))]
    fn extend(
        &mut self,
        idcpu: &Bound<'_, PyAny>,
        reals: &Bound<'_, PyAny>,
        ints: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.exports.check_resizable()?;
        let (shape, words) = array_values::<u64>(idcpu, "uint64", "idcpu")?;
        check_shape("idcpu", &shape, &[usize::MAX])?;
        let n = shape[0];
        let (nr, ni) = (self.num_real_comps(), self.num_int_comps());
        let (rshape, rv) = array_values::<f64>(reals, "float64", "reals")?;
        let (ishape, iv) = array_values::<i32>(ints, "int32", "ints")?;
        // An empty component list converts to shape (0,); accept it as (0, n).
        let comps = |shape: &[usize], k: usize| -> Vec<usize> {
            if k == 0 && shape == [0] {
                vec![0, n]
            } else {
                shape.to_vec()
            }
        };
        check_shape("reals", &comps(&rshape, nr), &[nr, n])?;
        check_shape("ints", &comps(&ishape, ni), &[ni, n])?;
        let old = self.size();
        match &mut self.soa {
            $soa::Host(s) => {
                s.resize(old + n).map_err(py_err)?;
                s.idcpu_mut()[old..].copy_from_slice(&words);
                for c in 0..nr {
                    s.real_mut(c)[old..].copy_from_slice(&rv[c * n..(c + 1) * n]);
                }
                for c in 0..ni {
                    s.int_mut(c)[old..].copy_from_slice(&iv[c * n..(c + 1) * n]);
                }
            }
            $soa::Arena(s) => {
                settle(s.arena())?;
                s.resize(old + n).map_err(py_err)?;
                let arena = s.arena().clone();
                let (ip, rp, np) = s.component_ptrs_mut();
                // Every component holds `old + n` elements after the resize, in memory of
                // `arena`; the pointers are used before anything resizes again.
                // SAFETY: as just said, for the idcpu words.
                unsafe { write_at(&arena, ip, old, &words) }?;
                for (c, &p) in rp.iter().enumerate() {
                    // SAFETY: as above, for real component `c`.
                    unsafe { write_at(&arena, p, old, &rv[c * n..(c + 1) * n]) }?;
                }
                for (c, &p) in np.iter().enumerate() {
                    // SAFETY: as above, for int component `c`.
                    unsafe { write_at(&arena, p, old, &iv[c * n..(c + 1) * n]) }?;
                }
            }
        }
        Ok(())
    }

    /// A new container (in memory of `arena`) holding the particles of
    /// [`extend`](Self::extend)'s arrays.
    #[staticmethod]
    #[pyo3(signature = (idcpu, reals, ints, arena=None))]
    fn from_arrays(
        idcpu: &Bound<'_, PyAny>,
        reals: &Bound<'_, PyAny>,
        ints: &Bound<'_, PyAny>,
        arena: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut s = Self::py_new(arena)?;
        s.extend(idcpu, reals, ints)?;
        Ok(s)
    }

    /// Number of real components.
    fn num_real_comps(&self) -> usize {
        on!($soa, &self.soa, s => s.num_real_comps())
    }

    /// Number of int components.
    fn num_int_comps(&self) -> usize {
        on!($soa, &self.soa, s => s.num_int_comps())
    }

    /// Every component as a writable zero-copy NumPy array, keyed `"idcpu"`, then each
    /// real component by its name (or `"real_<i>"`), then each int component by its name
    /// (or `"int_<i>"`): what `pandas.DataFrame(soa.to_dict(), copy=False)` takes. While
    /// any of the arrays lives, the container refuses to grow (`BufferError`).
    fn to_dict<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyDict>> {
        let py = slf.py();
        {
            let this = slf.borrow();
            let arena = this.arena();
            if !is_host(&arena) && arena.kind() != amrex_arena::MemoryKind::Pinned {
                return Err(not_on_device(
                    concat!($pyname, ".to_dict() (NumPy views)"),
                    arena.device(),
                    "soa.to_host().to_dict()",
                ));
            }
        }
        let np = py.import("numpy")?;
        let d = PyDict::new(py);
        d.set_item(
            "idcpu",
            np.call_method1("from_dlpack", (Self::idcpu(slf)?,))?,
        )?;
        let (nr, ni) = {
            let this = slf.borrow();
            (this.num_real_comps(), this.num_int_comps())
        };
        for i in 0..nr {
            let name = on!($soa, &slf.borrow().soa, s => s
                .real_name(i)
                .map_or_else(|| format!("real_{i}"), str::to_owned));
            d.set_item(
                name,
                np.call_method1("from_dlpack", (Self::real(slf, i)?,))?,
            )?;
        }
        for i in 0..ni {
            let name = on!($soa, &slf.borrow().soa, s => s
                .int_name(i)
                .map_or_else(|| format!("int_{i}"), str::to_owned));
            d.set_item(name, np.call_method1("from_dlpack", (Self::int(slf, i)?,))?)?;
        }
        Ok(d)
    }
}

    };
}

soa_class! {
    /// AMReX `StructOfArrays<2, 1>`: an idcpu vector, 2 real and 1 int component vectors,
    /// plus components added at run time.
    PySoa, Soa, 2, 1, "StructOfArrays_2_1"
}

soa_class! {
    /// AMReX `StructOfArrays<7, 0>` with idcpu (WarpX's 3-D and RZ particles: x, y, z, w,
    /// ux, uy, uz), plus components added at run time.
    PySoa70, Soa70, 7, 0, "StructOfArrays_7_0"
}

soa_class! {
    /// AMReX `StructOfArrays<8, 0>` with idcpu (ImpactX's particles), plus components
    /// added at run time.
    PySoa80, Soa80, 8, 0, "StructOfArrays_8_0"
}

soa_class! {
    /// AMReX `StructOfArrays<0, 0>` with idcpu: every component added at run time
    /// (`StructOfArrays_0_0.with_components(num_real, num_int)`), for any other count.
    PySoa00, Soa00, 0, 0, "StructOfArrays_0_0"
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(make_id_cpu, m)?)?;
    m.add_function(wrap_pyfunction!(particle_id, m)?)?;
    m.add_function(wrap_pyfunction!(particle_cpu, m)?)?;
    m.add_class::<PyAos>()?;
    m.add_class::<PySoa>()?;
    m.add_class::<PySoa70>()?;
    m.add_class::<PySoa80>()?;
    m.add_class::<PySoa00>()?;
    // pyAMReX's names for the pure-SoA layouts of WarpX and ImpactX (host memory)
    m.add(
        "StructOfArrays_7_0_idcpu_default",
        m.py().get_type::<PySoa70>(),
    )?;
    m.add(
        "StructOfArrays_8_0_idcpu_default",
        m.py().get_type::<PySoa80>(),
    )?;
    Ok(())
}

#[pymethods]
impl PySoa00 {
    /// A container with `num_real` real and `num_int` int components, every one added at
    /// run time (named `real_0`, ... in `to_dict()`): the runtime-sized form for component
    /// counts without a class of their own.
    #[staticmethod]
    #[pyo3(signature = (num_real, num_int=0, arena=None))]
    fn with_components(
        num_real: usize,
        num_int: usize,
        arena: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut s = Self::py_new(arena)?;
        for _ in 0..num_real {
            s.add_real_comp(None)?;
        }
        for _ in 0..num_int {
            s.add_int_comp(None)?;
        }
        Ok(s)
    }
}
