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

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(make_id_cpu, m)?)?;
    m.add_function(wrap_pyfunction!(particle_id, m)?)?;
    m.add_function(wrap_pyfunction!(particle_cpu, m)?)?;
    m.add_class::<PyAos>()?;
    m.add_class::<PySoa>()?;
    Ok(())
}
