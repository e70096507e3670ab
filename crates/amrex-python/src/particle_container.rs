//! `ParticleContainer` (pyAMReX's name): pure struct-of-arrays particles tied to the grids
//! of a `Geometry`, `BoxArray` and `DistributionMapping` (`amrex-particles` with
//! `SoaTile<3, 0>` tiles: the position, then the named real and int components added at
//! construction). Tiles hand out their components as zero-copy DLPack views; the
//! container refuses to add or move particles (`BufferError`) while any view is alive.
use crate::amr::geometry::PyGeometry;
use crate::box_array::PyBoxArray;
use crate::distribution::PyDistributionMapping;
use crate::dlpack::common::Export;
use crate::dlpack::export::ExportCount;
use crate::error::py_err;
use crate::views::SharedView;
use amrex_array4::Access;
use amrex_dlpack_core::DlpackElement;
use amrex_particles::{AosTile, ParticleArrays, ParticleContainer, ParticleTile, SoaTile, idcpu};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The two layouts: AMReX's pure SoA (`SoaTile<3, 0>`: x, y, z, then the named
/// components) and AoS (`AosTile<0, 0>`: `Particle<0, 0>` structs holding x, y, z and
/// idcpu, the named components beside them).
#[derive(Debug)]
enum AnyPc {
    Soa(ParticleContainer<SoaTile<3, 0>>),
    Aos(ParticleContainer<AosTile<0, 0>>),
}

/// `$body` with `$p` bound to the container, whichever its layout.
macro_rules! on_pc {
    ($pc:expr, $p:ident => $body:expr) => {
        match $pc {
            AnyPc::Soa($p) => $body,
            AnyPc::Aos($p) => $body,
        }
    };
}

/// The values of a 1-D array of dtype `dtype` (NumPy name), copied. A NumPy (or any
/// `dtype`-carrying) array of another dtype is a `TypeError` naming both; a list is
/// converted.
fn values<T: DlpackElement + Copy>(
    x: &Bound<'_, PyAny>,
    dtype: &str,
    what: &str,
) -> PyResult<Vec<T>> {
    let py = x.py();
    if let Ok(dt) = x.getattr("dtype") {
        let got = dt.str()?.to_string();
        if got != dtype {
            return Err(PyTypeError::new_err(format!(
                "{what}: expected {dtype}, got {got}"
            )));
        }
    }
    let np = py.import("numpy")?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("dtype", dtype)?;
    let arr = np.call_method("ascontiguousarray", (x,), Some(&kwargs))?;
    let shape: Vec<usize> = arr.getattr("shape")?.extract()?;
    if shape.len() != 1 {
        return Err(PyValueError::new_err(format!(
            "{what}: expected a 1-D array, got shape {shape:?}"
        )));
    }
    let t = crate::dlpack::import::import(&arr)?;
    let typed = t.view().typed::<T>().map_err(py_err)?;
    Ok(typed
        .as_slice()
        .ok_or_else(|| PyValueError::new_err(format!("{what}: not compact")))?
        .to_vec())
}

/// One column per name in `names` (zeros where `given` has none), from the arrays that
/// `given` maps names to; an unknown name is a `ValueError`.
fn columns<T: DlpackElement + Copy + Default>(
    given: Option<&Bound<'_, PyDict>>,
    names: &[String],
    kind: &str,
    dtype: &str,
    n: usize,
) -> PyResult<Vec<Vec<T>>> {
    let mut cols = vec![vec![T::default(); n]; names.len()];
    for (k, v) in given.iter().flat_map(|d| d.iter()) {
        let name: String = k.extract()?;
        let c = names.iter().position(|s| *s == name).ok_or_else(|| {
            PyValueError::new_err(format!(
                "no {kind} component {name:?} (the container has {names:?})"
            ))
        })?;
        cols[c] = values::<T>(&v, dtype, &name)?;
    }
    Ok(cols)
}

/// Pure-SoA particles on the grids of one level (pyAMReX's `ParticleContainer_...PureSoA`).
#[pyclass(module = "amrex_rs", name = "ParticleContainer")]
pub(crate) struct PyParticleContainer {
    pc: AnyPc,
    real_names: Vec<String>,
    int_names: Vec<String>,
    exports: ExportCount,
}

impl core::fmt::Debug for PyParticleContainer {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ParticleContainer")
            .field("real_comps", &self.real_names)
            .field("int_comps", &self.int_names)
            .finish()
    }
}

fn report(py: Python<'_>, pairs: &[(&str, u64)]) -> PyResult<Py<PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in pairs {
        d.set_item(k, v)?;
    }
    Ok(d.unbind())
}

#[pymethods]
impl PyParticleContainer {
    /// `ParticleContainer(geom, ba, dm, real_comps=[], int_comps=[], layout="soa")`:
    /// particles with a position and the named real (float64) and int (int32)
    /// components, stored as pure SoA (`"soa"`, AMReX `ParticleContainerPureSoA`) or as
    /// `Particle<0, 0>` structs with the components beside them (`"aos"`).
    #[new]
    #[pyo3(signature = (geom, ba, dm, real_comps = Vec::new(), int_comps = Vec::new(), layout = "soa"))]
    fn new(
        geom: &PyGeometry,
        ba: &PyBoxArray,
        dm: &PyDistributionMapping,
        real_comps: Vec<String>,
        int_comps: Vec<String>,
        layout: &str,
    ) -> PyResult<Self> {
        let (g, b, d) = (
            [geom.0],
            core::slice::from_ref(&ba.0),
            core::slice::from_ref(&dm.0),
        );
        let (nr, ni) = (real_comps.len(), int_comps.len());
        let pc = match layout {
            "soa" => AnyPc::Soa(
                ParticleContainer::new_hierarchy(&g, b, d, SoaTile::new(nr, ni)).map_err(py_err)?,
            ),
            "aos" => AnyPc::Aos(
                ParticleContainer::new_hierarchy(&g, b, d, AosTile::new(nr, ni)).map_err(py_err)?,
            ),
            _ => {
                return Err(PyValueError::new_err(format!(
                    "layout must be \"soa\" or \"aos\", got {layout:?}"
                )));
            }
        };
        Ok(Self {
            pc,
            real_names: real_comps,
            int_names: int_comps,
            exports: ExportCount::default(),
        })
    }

    /// Names of the real components: `x`, `y`, `z`, then those given.
    #[getter]
    fn real_comp_names(&self) -> Vec<String> {
        ["x", "y", "z"]
            .into_iter()
            .map(String::from)
            .chain(self.real_names.iter().cloned())
            .collect()
    }

    /// Names of the int components.
    #[getter]
    fn int_comp_names(&self) -> Vec<String> {
        self.int_names.clone()
    }

    /// Adds particles in one call: `x`, `y`, `z` (float64 arrays of one length),
    /// `reals`/`ints` map component names to float64/int32 arrays (missing ones are
    /// zero), `ids` (int64; default: fresh ids). Returns a dict: `added`, `placed`,
    /// `pending` (held until `redistribute`), `outside_domain`. Nothing is added on an
    /// error: `TypeError` for a wrong dtype, `ValueError` for arrays of different lengths,
    /// an unknown component name or a NaN/infinite position.
    #[pyo3(signature = (x, y, z, reals = None, ints = None, ids = None))]
    #[expect(clippy::too_many_arguments, reason = "pyAMReX's keyword arguments")]
    fn add_particles(
        &mut self,
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        y: &Bound<'_, PyAny>,
        z: &Bound<'_, PyAny>,
        reals: Option<&Bound<'_, PyDict>>,
        ints: Option<&Bound<'_, PyDict>>,
        ids: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyDict>> {
        self.exports.check_resizable()?;
        let (x, y, z) = (
            values::<f64>(x, "float64", "x")?,
            values::<f64>(y, "float64", "y")?,
            values::<f64>(z, "float64", "z")?,
        );
        let n = x.len();
        let rv = columns::<f64>(reals, &self.real_names, "real", "float64", n)?;
        let iv = columns::<i32>(ints, &self.int_names, "int", "int32", n)?;
        let ids = ids.map(|v| values::<i64>(v, "int64", "ids")).transpose()?;
        let rs: Vec<&[f64]> = rv.iter().map(Vec::as_slice).collect();
        let is: Vec<&[i32]> = iv.iter().map(Vec::as_slice).collect();
        let mut a = ParticleArrays::new(&x, &y, &z)
            .with_reals(&rs)
            .with_ints(&is);
        if let Some(ids) = &ids {
            a = a.with_ids(ids);
        }
        let r = on_pc!(&mut self.pc, p => p.add_particles(&a)).map_err(py_err)?;
        report(
            py,
            &[
                ("added", r.added as u64),
                ("placed", r.placed as u64),
                ("pending", r.pending as u64),
                ("outside_domain", r.outside_domain as u64),
            ],
        )
    }

    /// `n` particles uniformly in the domain, the same for a `seed` on any rank count
    /// (AMReX `InitRandom`); components zero. Then `redistribute`.
    fn init_random(&mut self, py: Python<'_>, n: u64, seed: u64) -> PyResult<Py<PyDict>> {
        self.exports.check_resizable()?;
        let reals = vec![0.0; self.real_names.len()];
        let ints = vec![0; self.int_names.len()];
        let r = on_pc!(&mut self.pc, p => p.init_random(n, seed, &reals, &ints)).map_err(py_err)?;
        redistribute_report(py, &r)
    }

    /// Puts every particle in the tile that holds it (AMReX `Redistribute`): wraps
    /// periodic positions, removes invalid ids and particles outside a non-periodic
    /// side. Returns a dict of counts (`kept`, `moved_local`, `sent`, `received`,
    /// `removed_invalid`, `removed_outside`, `removed_outside_global`).
    fn redistribute(&mut self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        self.exports.check_resizable()?;
        let r = on_pc!(&mut self.pc, p => p.redistribute()).map_err(py_err)?;
        redistribute_report(py, &r)
    }

    /// Particles at level `lev` (pyAMReX `number_of_particles_at_level`).
    #[pyo3(signature = (lev, only_valid = true, only_local = false))]
    fn number_of_particles_at_level(
        &self,
        lev: usize,
        only_valid: bool,
        only_local: bool,
    ) -> PyResult<u64> {
        on_pc!(&self.pc, p => {
            p.level(lev).map_err(py_err)?;
            p.number_of_particles_at_level(lev, only_valid, only_local).map_err(py_err)
        })
    }

    /// Particles on all levels (pyAMReX `total_number_of_particles`).
    #[pyo3(signature = (only_valid = true, only_local = false))]
    fn total_number_of_particles(&self, only_valid: bool, only_local: bool) -> PyResult<u64> {
        on_pc!(&self.pc, p => (0..p.num_levels())
            .map(|l| p.number_of_particles_at_level(l, only_valid, only_local))
            .sum::<Result<u64, _>>()
            .map_err(py_err))
    }

    /// The local tiles of level `lev` (pyAMReX's `ParIter`).
    #[pyo3(signature = (lev = 0))]
    fn tiles(slf: &Bound<'_, Self>, lev: usize) -> PyResult<Vec<PyParticleTile>> {
        let this = slf.borrow();
        let grids: Vec<(usize, usize)> = on_pc!(&this.pc, p => {
            p.level(lev).map_err(py_err)?;
            p.tiles(lev).map(|t| (t.grid, t.tile)).collect()
        });
        Ok(grids
            .into_iter()
            .map(|(grid, tile)| PyParticleTile {
                owner: slf.clone().unbind(),
                level: lev,
                grid,
                tile,
            })
            .collect())
    }

    /// Tile `(grid, tile)` of level `lev`; `IndexError` if it does not exist on this rank.
    #[pyo3(signature = (lev, grid, tile = 0))]
    fn tile(
        slf: &Bound<'_, Self>,
        lev: usize,
        grid: usize,
        tile: usize,
    ) -> PyResult<PyParticleTile> {
        on_pc!(&slf.borrow().pc, p => p.tile(lev, grid, tile).map(|_| ())).map_err(py_err)?;
        Ok(PyParticleTile {
            owner: slf.clone().unbind(),
            level: lev,
            grid,
            tile,
        })
    }

    /// The particles as columns (`x`, `y`, `z`, real and int components, `id`, `cpu`): a
    /// `pandas.DataFrame` when pandas is installed, else a dict of NumPy arrays (copies).
    /// `local=True` (the default): this rank's particles. `local=False`: every rank's,
    /// gathered to `root_rank` in rank order, which returns them while the other ranks
    /// return `None` (pyAMReX's `to_df(local=False)`); **collective** then.
    #[pyo3(signature = (local = true, root_rank = 0))]
    fn to_df(&self, py: Python<'_>, local: bool, root_rank: usize) -> PyResult<Option<Py<PyAny>>> {
        let mut cols: Vec<(String, Vec<f64>)> = self
            .real_comp_names()
            .into_iter()
            .map(|n| (n, Vec::new()))
            .collect();
        let mut icols: Vec<(String, Vec<i64>)> = self
            .int_names
            .iter()
            .cloned()
            .chain(["id".into(), "cpu".into()])
            .map(|n| (n, Vec::new()))
            .collect();
        let ni = self.int_names.len();
        on_pc!(&self.pc, pc => for lev in 0..pc.num_levels() {
            for t in pc.tiles(lev) {
                let d = t.data;
                for i in 0..d.len() {
                    let p = d.pos(i);
                    for k in 0..3 {
                        cols[k].1.push(p[k]);
                    }
                    for c in 0..d.num_reals() {
                        cols[3 + c].1.push(d.real(i, c));
                    }
                    for (c, col) in icols.iter_mut().take(ni).enumerate() {
                        col.1.push(i64::from(d.int(i, c)));
                    }
                    let w = d.idcpu(i);
                    icols[ni].1.push(idcpu::id(w));
                    icols[ni + 1].1.push(i64::from(idcpu::cpu(w)));
                }
            }
        });
        if !local {
            // A root out of range is refused by the gather, on every rank: a check here,
            // on one rank, would leave the others waiting.
            let comm = on_pc!(&self.pc, p => p.communicator().clone());
            if !gather_columns(&comm, root_rank, &mut cols, &mut icols)? {
                return Ok(None);
            }
        }
        let np = py.import("numpy")?;
        let d = PyDict::new(py);
        for (n, v) in cols {
            d.set_item(n, np.call_method1("array", (v,))?)?;
        }
        for (n, v) in icols {
            d.set_item(n, np.call_method1("array", (v,))?)?;
        }
        match py.import("pandas") {
            Ok(pd) => Ok(Some(pd.call_method1("DataFrame", (d,))?.unbind())),
            Err(_) => Ok(Some(d.into_any().unbind())),
        }
    }

    /// Writes the particles as `dir/name/` in AMReX's particle plotfile format (the
    /// names of the real components after the position and of the int components).
    #[pyo3(signature = (dir, name = "particles"))]
    fn write_plotfile(&self, dir: &str, name: &str) -> PyResult<()> {
        let r: Vec<&str> = self.real_names.iter().map(String::as_str).collect();
        let i: Vec<&str> = self.int_names.iter().map(String::as_str).collect();
        on_pc!(&self.pc, p => p.write_plotfile(dir, name, &r, &i)).map_err(py_err)
    }

    /// Reads `dir/name/` (AMReX `Restart`) and redistributes; returns how many were read.
    #[pyo3(signature = (dir, name = "particles"))]
    fn read_plotfile(&mut self, dir: &str, name: &str) -> PyResult<u64> {
        self.exports.check_resizable()?;
        on_pc!(&mut self.pc, p => p.read_plotfile(dir, name)).map_err(py_err)
    }

    fn __repr__(&self) -> String {
        format!(
            "ParticleContainer({} local particles, real {:?}, int {:?}, layout={})",
            on_pc!(&self.pc, p => p.num_local_particles()),
            self.real_comp_names(),
            self.int_names,
            match self.pc {
                AnyPc::Soa(_) => "soa",
                AnyPc::Aos(_) => "aos",
            }
        )
    }
}

/// Gathers every rank's columns to `root` in rank order (one message per rank: the
/// particle count, then each column's values). Returns whether this rank holds the
/// result. **Collective** over `comm`.
fn gather_columns(
    comm: &amrex_runtime::Communicator,
    root: usize,
    cols: &mut [(String, Vec<f64>)],
    icols: &mut [(String, Vec<i64>)],
) -> PyResult<bool> {
    let n = cols.first().map_or(0, |c| c.1.len());
    // Native bytes, as every message of the workspace (the ranks of a job share one
    // machine type): whole columns at a time.
    let mut blob = Vec::with_capacity(8 + 8 * n * (cols.len() + icols.len()));
    blob.extend_from_slice(bytemuck::bytes_of(&(n as u64)));
    for (_, v) in cols.iter() {
        blob.extend_from_slice(bytemuck::cast_slice(v));
    }
    for (_, v) in icols.iter() {
        blob.extend_from_slice(bytemuck::cast_slice(v));
    }
    // Every rank must be here (not in another collective, whose value is another hash)
    // and name the same root.
    let mut fp = amrex_runtime::Fingerprint::new();
    fp.usize(root);
    let gathered = comm
        .agree("to_df(local=False)", &fp)
        .and_then(|agreed| agreed.gather_bytes(root, &blob))
        .map_err(|e| PyValueError::new_err(format!("to_df(local=False): {e}")))?;
    let Some(parts) = gathered else {
        return Ok(false);
    };
    cols.iter_mut().for_each(|c| c.1.clear());
    icols.iter_mut().for_each(|c| c.1.clear());
    for (rank, part) in parts.iter().enumerate() {
        let bad = || {
            PyValueError::new_err(format!(
                "to_df(local=False): rank {rank} sent a malformed part"
            ))
        };
        let (head, mut rest) = part.split_at_checked(8).ok_or_else(bad)?;
        let n = usize::try_from(bytemuck::pod_read_unaligned::<u64>(head)).map_err(|_| bad())?;
        let width = n.checked_mul(8).ok_or_else(bad)?;
        if Some(rest.len()) != width.checked_mul(cols.len() + icols.len()) {
            return Err(bad());
        }
        /// Appends the next column of `width` bytes of `rest` to `v`.
        fn take<T: bytemuck::AnyBitPattern>(rest: &mut &[u8], width: usize, v: &mut Vec<T>) {
            let (col, tail) = rest.split_at(width);
            v.extend(col.chunks_exact(8).map(bytemuck::pod_read_unaligned::<T>));
            *rest = tail;
        }
        cols.iter_mut().for_each(|(_, v)| take(&mut rest, width, v));
        icols
            .iter_mut()
            .for_each(|(_, v)| take(&mut rest, width, v));
    }
    Ok(true)
}

fn redistribute_report(
    py: Python<'_>,
    r: &amrex_particles::RedistributeReport,
) -> PyResult<Py<PyDict>> {
    report(
        py,
        &[
            ("kept", r.kept as u64),
            ("moved_local", r.moved_local as u64),
            ("sent", r.sent as u64),
            ("received", r.received as u64),
            ("removed_invalid", r.removed_invalid as u64),
            ("removed_outside", r.removed_outside as u64),
            ("removed_outside_global", r.removed_outside_global),
        ],
    )
}

/// One local tile of a `ParticleContainer`: its components as zero-copy DLPack views.
#[pyclass(module = "amrex_rs", name = "ParticleTile", frozen)]
#[derive(Debug)]
pub(crate) struct PyParticleTile {
    owner: Py<PyParticleContainer>,
    level: usize,
    grid: usize,
    tile: usize,
}

impl PyParticleTile {
    /// A writable view of component `which` (`Err` names the component).
    fn view(&self, py: Python<'_>, which: Comp) -> PyResult<SharedView> {
        let c = self.owner.bind(py);
        let this = c.borrow();
        let (lev, grid, tile) = (self.level, self.grid, self.tile);
        let e: Export<'static> = match &this.pc {
            AnyPc::Soa(p) => {
                let soa = p.tile(lev, grid, tile).map_err(py_err)?.struct_of_arrays();
                match which {
                    Comp::Real(i) => compact(&soa.real(i)[..]),
                    Comp::Int(i) => compact(&soa.int(i)[..]),
                    Comp::IdCpu => compact(&soa.idcpu()[..]),
                }
            }
            AnyPc::Aos(p) => {
                let t = p.tile(lev, grid, tile).map_err(py_err)?;
                let ps = t.particles();
                // `Particle<0, 0>` is 32 bytes: x, y, z, idcpu; stride 4 elements.
                let n = ps.len() as i64;
                let stride = (core::mem::size_of::<amrex_particles::Particle<0, 0>>() / 8) as i64;
                let base = ps.as_ptr();
                match which {
                    Comp::Real(i) if i < 3 => Export::host(
                        base.cast::<f64>().wrapping_add(i),
                        &[n],
                        &[stride],
                        Access::Writable,
                    ),
                    Comp::Real(i) => compact(&t.runtime().real(i - 3)[..]),
                    Comp::Int(i) => compact(&t.runtime().int(i)[..]),
                    Comp::IdCpu => Export::host(
                        base.cast::<u64>().wrapping_add(3),
                        &[n],
                        &[stride],
                        Access::Writable,
                    ),
                }
            }
        };
        // SAFETY: the component vector lives in the container `c`; the container refuses
        // every operation that could reallocate or move it (`add_particles`,
        // `redistribute`, `init_random`, `read_plotfile` check the export count) while the
        // view, which holds one count, lives.
        Ok(unsafe { SharedView::new(c.as_any(), e, Some(&this.exports)) })
    }
}

/// A writable compact export of a component vector.
fn compact<T: DlpackElement>(v: &[T]) -> Export<'static> {
    Export::host(v.as_ptr(), &[v.len() as i64], &[1], Access::Writable)
}

#[derive(Clone, Copy)]
enum Comp {
    Real(usize),
    Int(usize),
    IdCpu,
}

#[pymethods]
impl PyParticleTile {
    /// The level.
    #[getter]
    fn level(&self) -> usize {
        self.level
    }

    /// The grid index (AMReX `pti.index()`).
    #[getter]
    fn grid(&self) -> usize {
        self.grid
    }

    /// The tile index within the grid (AMReX `pti.LocalTileIndex()`).
    #[getter]
    fn tile(&self) -> usize {
        self.tile
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        let c = self.owner.bind(py).borrow();
        on_pc!(&c.pc, p => Ok(p.tile(self.level, self.grid, self.tile).map_err(py_err)?.len()))
    }

    /// Zero-copy view of real component `name` (`x`, `y`, `z` or a name given to the
    /// container), float64.
    fn real(&self, py: Python<'_>, name: &str) -> PyResult<SharedView> {
        let names = self.owner.bind(py).borrow().real_comp_names();
        let i = names.iter().position(|n| n == name).ok_or_else(|| {
            PyValueError::new_err(format!(
                "no real component {name:?} (the container has {names:?})"
            ))
        })?;
        self.view(py, Comp::Real(i))
    }

    /// Zero-copy view of int component `name`, int32.
    fn int(&self, py: Python<'_>, name: &str) -> PyResult<SharedView> {
        let names = self.owner.bind(py).borrow().int_names.clone();
        let i = names.iter().position(|n| n == name).ok_or_else(|| {
            PyValueError::new_err(format!(
                "no int component {name:?} (the container has {names:?})"
            ))
        })?;
        self.view(py, Comp::Int(i))
    }

    /// Zero-copy view of the packed id/cpu words, uint64.
    fn idcpu(&self, py: Python<'_>) -> PyResult<SharedView> {
        self.view(py, Comp::IdCpu)
    }

    /// Every component as a zero-copy view, by name (`idcpu` included).
    fn soa(&self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        let d = PyDict::new(py);
        let (rn, inn) = {
            let c = self.owner.bind(py).borrow();
            (c.real_comp_names(), c.int_names.clone())
        };
        for (i, n) in rn.iter().enumerate() {
            d.set_item(n, self.view(py, Comp::Real(i))?)?;
        }
        for (i, n) in inn.iter().enumerate() {
            d.set_item(n, self.view(py, Comp::Int(i))?)?;
        }
        d.set_item("idcpu", self.view(py, Comp::IdCpu)?)?;
        Ok(d.unbind())
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyParticleContainer>()?;
    m.add_class::<PyParticleTile>()?;
    Ok(())
}
