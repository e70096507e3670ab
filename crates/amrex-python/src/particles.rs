//! Particles: `ArrayOfStructs_2_1` (`Particle<2, 1>`: 3 positions, 2 reals, idcpu, 1 int)
//! and `StructOfArrays_2_1`, with id/cpu packing helpers.
//!
//! DLPack has no struct dtype, so an array of structs is shared one field at a time
//! (`aos.field("x")`: a rank-1 view whose stride is the particle size in elements) or as
//! the `(n, 5)` block of positions and reals. Views count as exports: while one lives,
//! operations that could reallocate the particles raise `BufferError`.

use crate::interop::dlpack_err;
use crate::protocol::{Dims, Export, ExportCount};
use crate::views::SharedView;
use amrex_aos::{ArrayOfStructs, FieldKind, Particle, StridedLayout, StructOfArrays, idcpu};
use amrex_dlpack_core::DlpackElement;
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

type P21 = Particle<2, 1>;

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

fn layout_export(l: &StridedLayout, read_only: bool) -> Export<'static> {
    Export {
        data: l.data(),
        device: l.device(),
        host_accessible: l.device().is_host_accessible(),
        dtype: l.dtype(),
        shape: Dims::new(l.shape()),
        strides: Dims::new(l.strides()),
        read_only,
        copier: None,
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
    aos: ArrayOfStructs<P21>,
    exports: ExportCount,
}

impl PyAos {
    fn view(slf: &Bound<'_, Self>, l: PyResult<StridedLayout>, ro: bool) -> PyResult<SharedView> {
        let this = slf.borrow();
        let e = layout_export(&l?, ro);
        // SAFETY: the particles live in this object's vector, which is not reallocated
        // while the view (holding one count) lives.
        Ok(unsafe { SharedView::new(slf.as_any(), e, Some(&this.exports)) })
    }
}

#[pymethods]
impl PyAos {
    #[new]
    fn py_new() -> Self {
        Self {
            aos: ArrayOfStructs::new(),
            exports: ExportCount::default(),
        }
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
        self.aos.push(p);
        Ok(())
    }

    /// Particles including neighbours.
    fn size(&self) -> usize {
        self.aos.len()
    }

    fn __len__(&self) -> usize {
        self.aos.len()
    }

    /// Particles excluding neighbours.
    fn num_particles(&self) -> usize {
        self.aos.num_particles()
    }

    /// Neighbour particles at the end.
    fn num_neighbors(&self) -> usize {
        self.aos.num_neighbors()
    }

    /// Sets the number of neighbour particles (grows or shrinks the array).
    fn set_num_neighbors(&mut self, n: usize) -> PyResult<()> {
        self.exports.check_resizable()?;
        self.aos
            .set_num_neighbors(n)
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Bytes per particle.
    #[getter]
    fn particle_size(&self) -> usize {
        core::mem::size_of::<P21>()
    }

    /// Particle `i` as a dict (`pos`, `rdata`, `idata`, `id`, `cpu`, `valid`).
    fn get<'py>(&self, py: Python<'py>, i: usize) -> PyResult<Bound<'py, PyDict>> {
        let p = self
            .aos
            .as_slice()
            .get(i)
            .ok_or_else(|| PyIndexError::new_err("particle index out of range"))?;
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
        let l = slf.borrow().aos.field_layout(kind).map_err(dlpack_err);
        Self::view(slf, l, readonly)
    }

    /// Zero-copy `(n, 5)` view of positions and reals.
    #[pyo3(signature = (readonly=false))]
    fn real_block(slf: &Bound<'_, Self>, readonly: bool) -> PyResult<SharedView> {
        let l = slf.borrow().aos.real_block_layout().map_err(dlpack_err);
        Self::view(slf, l, readonly)
    }

    fn __repr__(&self) -> String {
        format!("ArrayOfStructs_2_1(size={})", self.aos.len())
    }
}

/// AMReX `StructOfArrays<2, 1>`: an idcpu vector, 2 real and 1 int component vectors,
/// plus components added at run time.
#[pyclass(module = "amrex_rs", name = "StructOfArrays_2_1")]
#[derive(Debug)]
pub(crate) struct PySoa {
    soa: StructOfArrays<2, 1>,
    exports: ExportCount,
}

fn vec_export<T: DlpackElement>(ptr: *const T, len: usize) -> Export<'static> {
    Export::host(ptr, &[len as i64], &[1], false)
}

impl PySoa {
    fn view(slf: &Bound<'_, Self>, e: Export<'static>) -> SharedView {
        let this = slf.borrow();
        // SAFETY: the component lives in this object and is not reallocated while the view
        // (holding one count) lives.
        unsafe { SharedView::new(slf.as_any(), e, Some(&this.exports)) }
    }
}

#[pymethods]
impl PySoa {
    #[new]
    fn py_new() -> Self {
        Self {
            soa: StructOfArrays::new(),
            exports: ExportCount::default(),
        }
    }

    /// Appends a particle: its packed `idcpu`, one value per real and int component.
    #[pyo3(signature = (idcpu, reals, ints))]
    fn push_back(&mut self, idcpu: u64, reals: Vec<f64>, ints: Vec<i32>) -> PyResult<()> {
        self.exports.check_resizable()?;
        self.soa
            .push(idcpu, &reals, &ints)
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Adds a real component (zero-filled); returns its index.
    #[pyo3(signature = (name=None))]
    fn add_real_comp(&mut self, name: Option<&str>) -> PyResult<usize> {
        self.exports.check_resizable()?;
        self.soa
            .add_real_comp(name)
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Adds an int component (zero-filled); returns its index.
    #[pyo3(signature = (name=None))]
    fn add_int_comp(&mut self, name: Option<&str>) -> PyResult<usize> {
        self.exports.check_resizable()?;
        self.soa
            .add_int_comp(name)
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// The names of the real components (`None` for unnamed ones).
    fn real_names(&self) -> Vec<Option<String>> {
        (0..self.soa.num_real_comps())
            .map(|i| self.soa.real_name(i).map(str::to_owned))
            .collect()
    }

    /// Number of particles.
    fn size(&self) -> usize {
        self.soa.len()
    }

    fn __len__(&self) -> usize {
        self.soa.len()
    }

    /// Writable zero-copy view of real component `i`.
    fn real(slf: &Bound<'_, Self>, i: usize) -> PyResult<SharedView> {
        let e = {
            let this = slf.borrow();
            let v = this
                .soa
                .get_real(i)
                .ok_or_else(|| PyIndexError::new_err("real component out of range"))?;
            vec_export(v.as_ptr(), v.len())
        };
        Ok(Self::view(slf, e))
    }

    /// Writable zero-copy view of int component `i`.
    fn int(slf: &Bound<'_, Self>, i: usize) -> PyResult<SharedView> {
        let e = {
            let this = slf.borrow();
            let v = this
                .soa
                .get_int(i)
                .ok_or_else(|| PyIndexError::new_err("int component out of range"))?;
            vec_export(v.as_ptr(), v.len())
        };
        Ok(Self::view(slf, e))
    }

    /// Writable zero-copy view of the packed id/cpu words.
    fn idcpu(slf: &Bound<'_, Self>) -> SharedView {
        let e = {
            let this = slf.borrow();
            let v = this.soa.idcpu();
            vec_export(v.as_ptr(), v.len())
        };
        Self::view(slf, e)
    }

    /// Int component `comp` of particle `i`.
    fn get_int(&self, comp: usize, i: usize) -> PyResult<i32> {
        self.soa
            .get_int(comp)
            .and_then(|v| v.as_slice().get(i).copied())
            .ok_or_else(|| PyIndexError::new_err("component or particle out of range"))
    }

    /// Real component `comp` of particle `i`.
    fn get_real(&self, comp: usize, i: usize) -> PyResult<f64> {
        self.soa
            .get_real(comp)
            .and_then(|v| v.as_slice().get(i).copied())
            .ok_or_else(|| PyIndexError::new_err("component or particle out of range"))
    }
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
    let t = crate::interop::import(&flat)?;
    let typed = t.view().typed::<T>().map_err(dlpack_err)?;
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
        let words = id_cpu_words(ids, cpu, n, self.aos.len() as i64 + 1)?;
        let particles: Vec<P21> = (0..n)
            .map(|i| {
                let mut p = P21::new([pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]]);
                p.rdata = [rdata[2 * i], rdata[2 * i + 1]];
                p.idata = [idata[i]];
                p.idcpu = words[i];
                p
            })
            .collect();
        self.aos
            .try_extend_from_slice(&particles)
            .map_err(|e| PyValueError::new_err(format!("cannot allocate {n} particles: {e:?}")))
    }

    /// A new container holding the particles of [`extend`](Self::extend)'s arrays.
    #[staticmethod]
    #[pyo3(signature = (pos, rdata=None, ids=None, cpu=0, idata=None))]
    fn from_arrays(
        pos: &Bound<'_, PyAny>,
        rdata: Option<&Bound<'_, PyAny>>,
        ids: Option<&Bound<'_, PyAny>>,
        cpu: i32,
        idata: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut a = Self::py_new();
        a.extend(pos, rdata, ids, cpu, idata)?;
        Ok(a)
    }
}

/// Bulk construction from arrays and the components as a dict of zero-copy arrays.
#[pymethods]
impl PySoa {
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
        let (nr, ni) = (self.soa.num_real_comps(), self.soa.num_int_comps());
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
        let old = self.soa.len();
        self.soa
            .resize(old + n)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        self.soa.idcpu_mut()[old..].copy_from_slice(&words);
        for c in 0..nr {
            self.soa.real_mut(c)[old..].copy_from_slice(&rv[c * n..(c + 1) * n]);
        }
        for c in 0..ni {
            self.soa.int_mut(c)[old..].copy_from_slice(&iv[c * n..(c + 1) * n]);
        }
        Ok(())
    }

    /// A new container holding the particles of [`extend`](Self::extend)'s arrays.
    #[staticmethod]
    #[pyo3(signature = (idcpu, reals, ints))]
    fn from_arrays(
        idcpu: &Bound<'_, PyAny>,
        reals: &Bound<'_, PyAny>,
        ints: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let mut s = Self::py_new();
        s.extend(idcpu, reals, ints)?;
        Ok(s)
    }

    /// Number of real components.
    fn num_real_comps(&self) -> usize {
        self.soa.num_real_comps()
    }

    /// Number of int components.
    fn num_int_comps(&self) -> usize {
        self.soa.num_int_comps()
    }

    /// Every component as a writable zero-copy NumPy array, keyed `"idcpu"`, then each
    /// real component by its name (or `"real_<i>"`), then each int component by its name
    /// (or `"int_<i>"`): what `pandas.DataFrame(soa.to_dict(), copy=False)` takes. While
    /// any of the arrays lives, the container refuses to grow (`BufferError`).
    fn to_dict<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyDict>> {
        let py = slf.py();
        let np = py.import("numpy")?;
        let d = PyDict::new(py);
        d.set_item(
            "idcpu",
            np.call_method1("from_dlpack", (Self::idcpu(slf),))?,
        )?;
        let (nr, ni) = {
            let this = slf.borrow();
            (this.soa.num_real_comps(), this.soa.num_int_comps())
        };
        for i in 0..nr {
            let name = slf
                .borrow()
                .soa
                .real_name(i)
                .map_or_else(|| format!("real_{i}"), str::to_owned);
            d.set_item(
                name,
                np.call_method1("from_dlpack", (Self::real(slf, i)?,))?,
            )?;
        }
        for i in 0..ni {
            let name = slf
                .borrow()
                .soa
                .int_name(i)
                .map_or_else(|| format!("int_{i}"), str::to_owned);
            d.set_item(name, np.call_method1("from_dlpack", (Self::int(slf, i)?,))?)?;
        }
        Ok(d)
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(make_id_cpu, m)?)?;
    m.add_function(wrap_pyfunction!(particle_id, m)?)?;
    m.add_function(wrap_pyfunction!(particle_cpu, m)?)?;
    m.add_class::<PyAos>()?;
    m.add_class::<PySoa>()?;
    Ok(())
}
