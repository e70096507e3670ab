//! AMReX plotfiles from Python: `amrex_rs.Plotfile(dir)` reads the `Header` only; each
//! level's `Cell_H` is read when first needed, and `read_box(lev, i)` reads one FAB's
//! bytes and nothing else. Whole levels and the writers go through
//! `amrex_plotfile`'s public API.
//!
//! The per-box reader is here because that API reads whole levels: it parses the one
//! line AMReX writes before each FAB (`FAB <real descriptor><box> <ncomp>`), checks it
//! against the `Cell_H`, and decodes the IEEE values (4 or 8 bytes, either byte order).

use crate::error::py_err;
use crate::geometry::PyBox;
use crate::multifab::PyMultiFab;
use amrex_box::{IndexBox, IntVect};
use amrex_dlpack_core::ToDlpack;
use amrex_plotfile::{self as plotfile, Geometry, PlotfileHeader, RealDescriptor, VisMfHeader};
use ndarray::ShapeBuilder;
use pyo3::exceptions::{PyIndexError, PyKeyError, PyOSError, PyValueError};
use pyo3::prelude::*;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Component, Path, PathBuf};

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> PyErr + '_ {
    move |e| PyOSError::new_err(format!("{}: {e}", path.display()))
}

fn invalid(path: &Path, what: String) -> PyErr {
    PyValueError::new_err(format!("{}: {what}", path.display()))
}

/// A plotfile on disk, read lazily (AMReX `HyperCLaw-V1.1`: what
/// `WriteSingleLevelPlotfile` / `WriteMultiLevelPlotfile` write, and yt and VisIt read).
#[pyclass(module = "amrex_rs", name = "Plotfile")]
#[derive(Debug)]
pub(crate) struct PyPlotfile {
    dir: PathBuf,
    header: PlotfileHeader,
    cell_headers: Vec<Option<VisMfHeader>>,
}

impl PyPlotfile {
    fn check_level(&self, lev: usize) -> PyResult<()> {
        if lev < self.header.nlevels() {
            Ok(())
        } else {
            Err(PyIndexError::new_err(format!(
                "level {lev} out of range: the plotfile has {} level(s)",
                self.header.nlevels()
            )))
        }
    }

    /// The `Cell_H` of level `lev`, read on first use.
    fn cell_header(&mut self, lev: usize) -> PyResult<&VisMfHeader> {
        self.check_level(lev)?;
        if self.cell_headers[lev].is_none() {
            let mut path = self.level_prefix(lev).into_os_string();
            path.push("_H");
            let path = PathBuf::from(path);
            let text = std::fs::read_to_string(&path).map_err(io_err(&path))?;
            let h = VisMfHeader::parse(&text, self.header.space_dim)
                .map_err(|e| PyValueError::new_err(format!("{}: {e}", path.display())))?;
            if h.ncomp != self.header.var_names.len() {
                return Err(invalid(
                    &path,
                    format!(
                        "{} components, but the Header lists {} variables",
                        h.ncomp,
                        self.header.var_names.len()
                    ),
                ));
            }
            self.cell_headers[lev] = Some(h);
        }
        Ok(self.cell_headers[lev].as_ref().expect("just read"))
    }

    /// `dir/Level_<lev>/Cell` (the header's MultiFab path).
    fn level_prefix(&self, lev: usize) -> PathBuf {
        self.dir.join(&self.header.levels[lev].mf_path)
    }

    fn comps(&self, var: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<usize>> {
        let names = &self.header.var_names;
        let index = |v: &Bound<'_, PyAny>| -> PyResult<usize> {
            if let Ok(name) = v.extract::<String>() {
                names.iter().position(|n| *n == name).ok_or_else(|| {
                    PyKeyError::new_err(format!(
                        "no variable {name:?} in the plotfile (it has {names:?})"
                    ))
                })
            } else {
                let i: usize = v.extract()?;
                if i < names.len() {
                    Ok(i)
                } else {
                    Err(PyIndexError::new_err(format!(
                        "component {i} out of range for {} variables",
                        names.len()
                    )))
                }
            }
        };
        match var {
            None => Ok((0..names.len()).collect()),
            Some(v) if v.is_instance_of::<pyo3::types::PyString>() => Ok(vec![index(v)?]),
            Some(v) => match v.try_iter() {
                Ok(it) => it.map(|x| index(&x?)).collect(),
                Err(_) => Ok(vec![index(v)?]),
            },
        }
    }
}

/// Whether a FAB file name stays inside the level's directory.
fn confined(file: &str) -> bool {
    Path::new(file)
        .components()
        .all(|c| matches!(c, Component::Normal(_)))
}

/// Parses `FAB ((8, (64 11 52 0 1 12 0 1023)),(8, (8 7 6 5 4 3 2 1)))((0,0,0) (7,7,7)
/// (0,0,0)) 2`: the value format, the box corners (`dim` directions) and the component
/// count.
fn parse_fab_line(line: &str, dim: usize) -> Result<(RealDescriptor, Vec<i64>, usize), String> {
    let rest = line
        .strip_prefix("FAB ")
        .ok_or_else(|| format!("a binary FAB header starting `FAB (`, found {line:?}"))?;
    let end = rest
        .find(")))")
        .ok_or("the end `)))` of the real descriptor")?
        + 3;
    let ints = |s: &str| -> Vec<i64> {
        s.split(|c: char| !(c.is_ascii_digit() || c == '-'))
            .filter(|t| !t.is_empty())
            .filter_map(|t| t.parse().ok())
            .collect()
    };
    let desc = ints(&rest[..end]);
    // bytes, 8 format numbers, bytes again, then the byte order.
    let bytes = desc.first().copied().unwrap_or(0);
    if !(bytes == 4 || bytes == 8) || desc.len() != 10 + bytes as usize {
        return Err(format!(
            "a real descriptor of 4- or 8-byte IEEE values, found {:?}",
            &rest[..end]
        ));
    }
    let order = &desc[10..];
    let n = bytes;
    let little_endian = if order.iter().copied().eq((1..=n).rev()) {
        true
    } else if order.iter().copied().eq(1..=n) {
        false
    } else {
        return Err(format!(
            "a little- or big-endian byte order, found {order:?}"
        ));
    };
    let tail = ints(&rest[end..]);
    if tail.len() != 3 * dim + 1 {
        return Err(format!(
            "a {dim}-dimensional box and a component count, found {:?}",
            &rest[end..]
        ));
    }
    let ncomp = usize::try_from(tail[3 * dim]).map_err(|_| "a component count".to_string())?;
    Ok((
        RealDescriptor {
            bytes: bytes as usize,
            little_endian,
        },
        tail[..2 * dim].to_vec(),
        ncomp,
    ))
}

fn decode(rd: RealDescriptor, bytes: &[u8], out: &mut Vec<f64>) {
    match (rd.bytes, rd.little_endian) {
        (8, true) => out.extend(
            bytes
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))),
        ),
        (8, false) => out.extend(
            bytes
                .chunks_exact(8)
                .map(|c| f64::from_be_bytes(c.try_into().expect("8 bytes"))),
        ),
        (_, true) => out.extend(
            bytes
                .chunks_exact(4)
                .map(|c| f64::from(f32::from_le_bytes(c.try_into().expect("4 bytes")))),
        ),
        (_, false) => out.extend(
            bytes
                .chunks_exact(4)
                .map(|c| f64::from(f32::from_be_bytes(c.try_into().expect("4 bytes")))),
        ),
    }
}

/// Reads FAB `i` of a level: its box and its values (Fortran order, component slowest),
/// only the components `comps`.
fn read_fab(
    level_dir: &Path,
    h: &VisMfHeader,
    i: usize,
    dim: usize,
    comps: &[usize],
) -> PyResult<(IndexBox, Vec<f64>)> {
    let bx = h.boxes[i];
    let fod = &h.fabs[i];
    if !confined(&fod.file) {
        return Err(PyValueError::new_err(format!(
            "FAB {i}: file {:?} leaves the level directory",
            fod.file
        )));
    }
    let path = level_dir.join(&fod.file);
    let mut f = BufReader::new(File::open(&path).map_err(io_err(&path))?);
    f.seek(SeekFrom::Start(fod.offset)).map_err(io_err(&path))?;
    let mut line = Vec::new();
    f.by_ref()
        .take(4096)
        .read_until(b'\n', &mut line)
        .map_err(io_err(&path))?;
    let text = String::from_utf8_lossy(&line);
    let (rd, corners, ncomp) = parse_fab_line(text.trim_end(), dim).map_err(|what| {
        invalid(
            &path,
            format!("FAB {i} at byte {}: expected {what}", fod.offset),
        )
    })?;
    let (lo, hi) = (bx.small_end(), bx.big_end());
    let expect: Vec<i64> = (0..dim)
        .map(|d| i64::from(lo[d]))
        .chain((0..dim).map(|d| i64::from(hi[d])))
        .collect();
    if corners != expect || ncomp != h.ncomp {
        return Err(invalid(
            &path,
            format!(
                "FAB {i} at byte {} covers {corners:?} with {ncomp} components; Cell_H says \
                 {bx} with {}",
                fod.offset, h.ncomp
            ),
        ));
    }
    let npts = bx
        .checked_num_pts_usize()
        .ok_or_else(|| invalid(&path, format!("FAB {i}: box {bx} too large")))?;
    let comp_bytes = npts * rd.bytes;
    let start = f.stream_position().map_err(io_err(&path))?;
    let mut out = Vec::with_capacity(npts * comps.len());
    let mut buf = vec![0u8; comp_bytes];
    for &c in comps {
        f.seek(SeekFrom::Start(start + (c * comp_bytes) as u64))
            .map_err(io_err(&path))?;
        f.read_exact(&mut buf).map_err(|e| {
            invalid(
                &path,
                format!("FAB {i}: component {c} ends past the end of the file ({e})"),
            )
        })?;
        decode(rd, &buf, &mut out);
    }
    Ok((bx, out))
}

/// `(lo, hi)` corners as tuples.
type Corners = ((i32, i32, i32), (i32, i32, i32));

fn corners(b: IndexBox) -> Corners {
    let (lo, hi) = (b.small_end(), b.big_end());
    ((lo[0], lo[1], lo[2]), (hi[0], hi[1], hi[2]))
}

#[pymethods]
impl PyPlotfile {
    /// `Plotfile(dir)`: reads the plotfile's `Header` (nothing else until asked).
    #[new]
    fn py_new(dir: PathBuf) -> PyResult<Self> {
        let header = plotfile::read_plotfile_header(&dir).map_err(py_err)?;
        let n = header.nlevels();
        Ok(Self {
            dir,
            header,
            cell_headers: (0..n).map(|_| None).collect(),
        })
    }

    /// The variable (component) names.
    #[getter]
    fn var_names(&self) -> Vec<String> {
        self.header.var_names.clone()
    }

    /// Simulation time.
    #[getter]
    fn time(&self) -> f64 {
        self.header.time
    }

    /// Number of levels.
    #[getter]
    fn nlevels(&self) -> usize {
        self.header.nlevels()
    }

    /// Finest level index.
    #[getter]
    fn finest_level(&self) -> usize {
        self.header.finest_level
    }

    /// Dimension AMReX was built for (1, 2 or 3; missing directions are `0..=0`).
    #[getter]
    fn space_dim(&self) -> usize {
        self.header.space_dim
    }

    /// Lower corner of the physical domain.
    #[getter]
    fn prob_lo(&self) -> (f64, f64, f64) {
        let p = self.header.prob_lo;
        (p[0], p[1], p[2])
    }

    /// Upper corner of the physical domain.
    #[getter]
    fn prob_hi(&self) -> (f64, f64, f64) {
        let p = self.header.prob_hi;
        (p[0], p[1], p[2])
    }

    /// Refinement ratio between each level and the next finer one.
    #[getter]
    fn ref_ratio(&self) -> Vec<i32> {
        self.header.ref_ratio.clone()
    }

    /// The step of every level.
    #[getter]
    fn level_steps(&self) -> Vec<i64> {
        self.header.level_steps.clone()
    }

    /// The index domain of level `lev`.
    #[pyo3(signature = (lev=0))]
    fn domain(&self, lev: usize) -> PyResult<PyBox> {
        self.check_level(lev)?;
        Ok(PyBox(self.header.domains[lev]))
    }

    /// The cell size of level `lev`.
    #[pyo3(signature = (lev=0))]
    fn cell_size(&self, lev: usize) -> PyResult<(f64, f64, f64)> {
        self.check_level(lev)?;
        let c = self.header.cell_sizes[lev];
        Ok((c[0], c[1], c[2]))
    }

    /// The boxes of level `lev` (reads the level's `Cell_H` on first use).
    #[pyo3(signature = (lev=0))]
    fn boxes(&mut self, lev: usize) -> PyResult<Vec<PyBox>> {
        Ok(self
            .cell_header(lev)?
            .boxes
            .iter()
            .map(|&b| PyBox(b))
            .collect())
    }

    /// Number of boxes of level `lev`.
    #[pyo3(signature = (lev=0))]
    fn num_boxes(&mut self, lev: usize) -> PyResult<usize> {
        Ok(self.cell_header(lev)?.boxes.len())
    }

    /// Reads box `i` of level `lev` alone (only its bytes are read from disk) as a NumPy
    /// array indexed `[i, j, k, n]` relative to the box's lower corner; `var` is a name,
    /// an index or a list of them (default: every variable).
    #[pyo3(signature = (lev, i, var=None))]
    fn read_box<'py>(
        &mut self,
        py: Python<'py>,
        lev: usize,
        i: usize,
        var: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let comps = self.comps(var)?;
        let dim = self.header.space_dim;
        self.check_level(lev)?;
        let level_dir = self
            .level_prefix(lev)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let h = self.cell_header(lev)?;
        if i >= h.boxes.len() {
            return Err(PyIndexError::new_err(format!(
                "box {i} out of range: level {lev} has {} boxes",
                h.boxes.len()
            )));
        }
        let (bx, values) = read_fab(&level_dir, h, i, dim, &comps)?;
        let len = bx.length();
        let shape = (
            len[0] as usize,
            len[1] as usize,
            len[2] as usize,
            comps.len(),
        );
        let a = ndarray::Array4::from_shape_vec(shape.f(), values)
            .expect("one value per cell and component");
        let t = a.to_dlpack().map_err(py_err)?;
        let t = Bound::new(
            py,
            crate::dlpack::import::Tensor::new(amrex_dlpack_capsule::Imported::Versioned(t)),
        )?;
        py.import("numpy")?.call_method1("from_dlpack", (t,))
    }

    /// The `(lo, hi)` corners of box `i` of level `lev`.
    fn box_corners(&mut self, lev: usize, i: usize) -> PyResult<Corners> {
        let h = self.cell_header(lev)?;
        h.boxes
            .get(i)
            .map(|&b| corners(b))
            .ok_or_else(|| PyIndexError::new_err(format!("box {i} out of range")))
    }

    /// Reads level `lev` whole into a MultiFab (components in `var_names` order),
    /// distributed over `comm` (by default MPI's world in an MPI build, else this one
    /// process) by AMReX's default map, each rank reading only its own boxes, whatever
    /// number of ranks wrote the file. **Collective** over `comm`.
    #[pyo3(signature = (lev=0, *, comm=None))]
    fn read_level(
        &self,
        py: Python<'_>,
        lev: usize,
        comm: Option<&crate::parallel::PyCommunicator>,
    ) -> PyResult<PyMultiFab> {
        self.check_level(lev)?;
        let comm = match comm {
            Some(c) => c.0.clone(),
            None => crate::parallel::default_comm(py)?,
        };
        let (_, mf) =
            plotfile::read_level_on(&self.dir, &self.header, lev, &comm).map_err(py_err)?;
        Ok(PyMultiFab::from_multifab(mf))
    }

    fn __repr__(&self) -> String {
        format!(
            "Plotfile({:?}, {} level(s), vars={:?}, time={})",
            self.dir.display().to_string(),
            self.header.nlevels(),
            self.header.var_names,
            self.header.time
        )
    }
}

/// The non-periodic Cartesian geometry of `domain` over `prob_lo ..= prob_hi`;
/// `ValueError` for corners or a domain that make none (NaN, `prob_hi <= prob_lo`, an
/// empty domain).
fn geometry(
    domain: IndexBox,
    prob_lo: (f64, f64, f64),
    prob_hi: (f64, f64, f64),
) -> PyResult<Geometry> {
    Geometry::cartesian(
        domain,
        [prob_lo.0, prob_lo.1, prob_lo.2],
        [prob_hi.0, prob_hi.1, prob_hi.2],
    )
    .map_err(py_err)
}

/// `write_single_level_plotfile(dir, mf, var_names, domain=None, prob_lo=(0, 0, 0),
/// prob_hi=(1, 1, 1), time=0.0, step=0)`: AMReX's `WriteSingleLevelPlotfile` (valid cells;
/// `domain` defaults to the BoxArray's minimal box).
#[pyfunction]
#[pyo3(signature = (dir, mf, var_names, domain=None, prob_lo=(0.0, 0.0, 0.0), prob_hi=(1.0, 1.0, 1.0), time=0.0, step=0))]
#[expect(clippy::too_many_arguments, reason = "AMReX's argument list")]
pub(crate) fn write_single_level_plotfile(
    dir: PathBuf,
    mf: PyRef<'_, PyMultiFab>,
    var_names: Vec<String>,
    domain: Option<PyRef<'_, PyBox>>,
    prob_lo: (f64, f64, f64),
    prob_hi: (f64, f64, f64),
    time: f64,
    step: i64,
) -> PyResult<()> {
    let host = mf.host()?;
    let domain = domain.map_or_else(|| host.box_array().minimal_box(), |b| b.0);
    let geom = geometry(domain, prob_lo, prob_hi)?;
    plotfile::write_single_level_plotfile(&dir, host, &var_names, &geom, time, step).map_err(py_err)
}

/// `write_multi_level_plotfile(dir, mfs, var_names, ref_ratio, domain=None, prob_lo,
/// prob_hi, time=0.0, steps=None)`: AMReX's `WriteMultiLevelPlotfile`. Level `l + 1` is
/// refined from level `l` by `ref_ratio[l]` (an int or IntVect); the domains of the finer
/// levels are level 0's refined; `steps` defaults to zeros.
#[pyfunction]
#[pyo3(signature = (dir, mfs, var_names, ref_ratio, domain=None, prob_lo=(0.0, 0.0, 0.0), prob_hi=(1.0, 1.0, 1.0), time=0.0, steps=None))]
#[expect(clippy::too_many_arguments, reason = "AMReX's argument list")]
pub(crate) fn write_multi_level_plotfile(
    dir: PathBuf,
    mfs: Vec<PyRef<'_, PyMultiFab>>,
    var_names: Vec<String>,
    ref_ratio: Vec<Bound<'_, PyAny>>,
    domain: Option<PyRef<'_, PyBox>>,
    prob_lo: (f64, f64, f64),
    prob_hi: (f64, f64, f64),
    time: f64,
    steps: Option<Vec<i64>>,
) -> PyResult<()> {
    let Some(first) = mfs.first() else {
        return Err(PyValueError::new_err(
            "write_multi_level_plotfile: no levels",
        ));
    };
    let ratios: Vec<IntVect> = ref_ratio
        .iter()
        .map(crate::geometry::int_vect_of)
        .collect::<PyResult<_>>()?;
    if ratios.len() + 1 < mfs.len() {
        return Err(PyValueError::new_err(format!(
            "{} levels need {} refinement ratios, got {}",
            mfs.len(),
            mfs.len() - 1,
            ratios.len()
        )));
    }
    let mut geom = geometry(
        domain.map_or_else(
            || Ok::<_, PyErr>(first.host()?.box_array().minimal_box()),
            |b| Ok(b.0),
        )?,
        prob_lo,
        prob_hi,
    )?;
    let mut geoms = vec![geom];
    for r in ratios.iter().take(mfs.len() - 1) {
        geom = geom.refine(*r).map_err(py_err)?;
        geoms.push(geom);
    }
    let steps = steps.unwrap_or_else(|| vec![0; mfs.len()]);
    let levels: Vec<&amrex_multifab::MultiFab> =
        mfs.iter().map(|m| m.host()).collect::<PyResult<_>>()?;
    plotfile::write_multi_level_plotfile(&dir, &levels, &var_names, &geoms, time, &steps, &ratios)
        .map_err(py_err)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPlotfile>()?;
    m.add_function(wrap_pyfunction!(write_single_level_plotfile, m)?)?;
    m.add_function(wrap_pyfunction!(write_multi_level_plotfile, m)?)?;
    Ok(())
}
