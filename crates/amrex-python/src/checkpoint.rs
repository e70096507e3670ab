//! AMReX checkpoints from Python, as AMReX's AMR codes write them (the
//! `Advection_AmrCore` tutorial's `WriteCheckpointFile` and `ReadCheckpointFile`):
//! `write_checkpoint(dir, fields, lines=(), title=...)`, `read_checkpoint_header(dir)`
//! and `read_checkpoint_multifab(dir, lev, name, ba, dm)`, through
//! `amrex_plotfile`'s checkpoint API (the same bytes as AMReX for the same data). A
//! restart then hands the header's grids to `AmrMesh.restore_grids`.

use crate::box_array::PyBoxArray;
use crate::distribution::PyDistributionMapping;
use crate::error::py_err;
use crate::multifab::PyMultiFab;
use amrex_multifab::MultiFab;
use amrex_plotfile::{self as plotfile, CheckpointHeader};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyMapping, PyString};
use std::path::PathBuf;

/// A checkpoint's `Header`, as read by `read_checkpoint_header`: the title, the
/// caller's lines (between the finest level and the grids) and each level's grids.
#[pyclass(module = "amrex_rs", name = "CheckpointHeader", frozen)]
#[derive(Debug)]
pub(crate) struct PyCheckpointHeader(CheckpointHeader);

#[pymethods]
impl PyCheckpointHeader {
    /// The first line.
    #[getter]
    fn title(&self) -> String {
        self.0.title.clone()
    }

    /// The lines between the finest level and the grids, each as written (no newline).
    #[getter]
    fn lines(&self) -> Vec<String> {
        self.0.lines.clone()
    }

    /// The finest level (one BoxArray per level up to it).
    #[getter]
    fn finest_level(&self) -> usize {
        self.0.finest_level()
    }

    /// Each level's grids, level 0 first.
    #[getter]
    fn grids(&self) -> Vec<PyBoxArray> {
        self.0.grids.iter().cloned().map(PyBoxArray).collect()
    }

    /// Line `i` (0 is the first line after the finest level) as integers; `ValueError`
    /// naming the line if there is none or a word is not an integer.
    fn ints(&self, i: usize) -> PyResult<Vec<i64>> {
        self.0.ints(i).map_err(py_err)
    }

    /// Line `i` as finite reals; `ValueError` naming the line if there is none or a
    /// word is not one.
    fn reals(&self, i: usize) -> PyResult<Vec<f64>> {
        self.0.reals(i).map_err(py_err)
    }

    /// The `Header`'s text, byte for byte what `write_checkpoint` writes for it.
    fn to_text(&self) -> String {
        self.0.to_text()
    }

    fn __repr__(&self) -> String {
        format!(
            "CheckpointHeader(title={:?}, {} line(s), finest_level={}, boxes per level {:?})",
            self.0.title,
            self.0.lines.len(),
            self.0.finest_level(),
            self.0.grids.iter().map(|g| g.len()).collect::<Vec<_>>()
        )
    }
}

/// One of the caller's header lines: all ints (written as ints), or with a float among
/// them (every value written as a real, 17 significant digits).
enum Line {
    Ints(Vec<i64>),
    Reals(Vec<f64>),
}

/// A value of a line.
enum Num {
    Int(i64),
    Real(f64),
}

fn line_of(i: usize, obj: &Bound<'_, PyAny>) -> PyResult<Line> {
    let not_numbers = || {
        PyTypeError::new_err(format!(
            "write_checkpoint: line {i} is not a list of ints or floats (got {})",
            obj.get_type()
        ))
    };
    if obj.is_instance_of::<PyString>() {
        return Err(not_numbers());
    }
    let items: Vec<Bound<'_, PyAny>> = obj
        .try_iter()
        .map_err(|_| not_numbers())?
        .collect::<PyResult<_>>()?;
    let (mut ints, mut reals, mut any_float) = (Vec::new(), Vec::new(), false);
    for x in &items {
        let value = if x.is_instance_of::<PyBool>() {
            None
        } else if x.is_instance_of::<PyFloat>() {
            x.extract::<f64>().ok().map(Num::Real)
        } else if x.is_instance_of::<PyInt>() {
            // An int beyond i64 is an OverflowError, not a real.
            Some(Num::Int(x.extract::<i64>()?))
        } else if let Ok(v) = x.extract::<i64>() {
            Some(Num::Int(v)) // NumPy's integers (`__index__`)
        } else {
            x.extract::<f64>().ok().map(Num::Real) // NumPy's float32 and the like
        };
        match value {
            Some(Num::Int(v)) => {
                ints.push(v);
                reals.push(v as f64);
            }
            Some(Num::Real(v)) if v.is_finite() => {
                any_float = true;
                reals.push(v);
            }
            Some(Num::Real(v)) => {
                return Err(PyValueError::new_err(format!(
                    "write_checkpoint: line {i} holds {v}, which a checkpoint cannot hold \
                     (its reals are finite)"
                )));
            }
            None => {
                return Err(PyTypeError::new_err(format!(
                    "write_checkpoint: line {i} holds {} ({}); a line holds ints or floats",
                    x.repr()?,
                    x.get_type()
                )));
            }
        }
    }
    Ok(if any_float {
        Line::Reals(reals)
    } else {
        Line::Ints(ints)
    })
}

/// `write_checkpoint(dir, fields, lines=(), title="Checkpoint file")`: a checkpoint as
/// AMReX's AMR codes write it. `fields` (a dict, in its order) maps a name to one
/// MultiFab per level, level 0 first; the `Header`'s grids are the first field's
/// BoxArrays, and every field must be on them. `lines` are the `Header` lines between
/// the finest level and the grids (the tutorial's steps, `dt` and `t_new` per level):
/// each a list of ints (written as ints) or of numbers with a float among them (written
/// with 17 significant digits, which read back to the same doubles). The checkpoint is
/// written in `<dir>.partial` and renamed when complete; an existing `dir` is moved
/// aside to `<dir>.old.<unique>`. **Collective** over the MultiFabs' communicator.
/// `TypeError`/`ValueError` for fields or lines that make no checkpoint (nothing is
/// written then), `OSError` when a file cannot be written.
#[pyfunction]
#[pyo3(signature = (dir, fields, lines=None, title="Checkpoint file"))]
pub(crate) fn write_checkpoint(
    dir: PathBuf,
    fields: &Bound<'_, PyMapping>,
    lines: Option<&Bound<'_, PyAny>>,
    title: &str,
) -> PyResult<()> {
    if title.contains(['\n', '\r']) {
        return Err(PyValueError::new_err(format!(
            "write_checkpoint: the title {title:?} is not one line"
        )));
    }
    let mut named: Vec<(String, Vec<PyRef<'_, PyMultiFab>>)> = Vec::new();
    for kv in fields.items()?.iter() {
        let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = kv.extract()?;
        let name: String = k.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "write_checkpoint: field names are str, got {}",
                k.repr()
                    .map_or_else(|_| String::from("?"), |r| r.to_string())
            ))
        })?;
        if v.is_instance_of::<PyMultiFab>() {
            return Err(PyTypeError::new_err(format!(
                "write_checkpoint: field {name:?} is one MultiFab; give a list, one per level"
            )));
        }
        let levels: Vec<PyRef<'_, PyMultiFab>> = v.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "write_checkpoint: field {name:?} is not a list of MultiFabs (one per level)"
            ))
        })?;
        named.push((name, levels));
    }
    let Some((first_name, first)) = named.first() else {
        return Err(PyValueError::new_err(
            "write_checkpoint: no fields (the Header's grids are the first field's BoxArrays)",
        ));
    };
    if first.is_empty() {
        return Err(PyValueError::new_err(format!(
            "write_checkpoint: field {first_name:?} has no levels"
        )));
    }
    let grids = first
        .iter()
        .map(|m| Ok(m.host()?.box_array().clone()))
        .collect::<PyResult<Vec<_>>>()?;
    let mut header = CheckpointHeader::new(title, grids);
    if let Some(lines) = lines {
        if lines.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err(
                "write_checkpoint: lines is a list of lists of numbers, not a str",
            ));
        }
        for (i, l) in lines.try_iter()?.enumerate() {
            header = match line_of(i, &l?)? {
                Line::Ints(v) => header.with_ints(v),
                Line::Reals(v) => header.with_reals(v),
            };
        }
    }
    let host: Vec<(&str, Vec<&MultiFab>)> = named
        .iter()
        .map(|(n, levels)| {
            Ok((
                n.as_str(),
                levels.iter().map(|m| m.host()).collect::<PyResult<_>>()?,
            ))
        })
        .collect::<PyResult<_>>()?;
    let fields: Vec<(&str, &[&MultiFab])> = host.iter().map(|(n, l)| (*n, l.as_slice())).collect();
    plotfile::write_checkpoint(&dir, &header, &fields).map_err(py_err)
}

/// `read_checkpoint_header(dir, *, comm=None)`: `<dir>/Header` as a `CheckpointHeader`,
/// read by rank 0 of `comm` (by default MPI's world in an MPI build, else this one
/// process) and sent to the others. **Collective** over `comm`. `OSError` if it cannot
/// be read (no such checkpoint), `ValueError` naming the line where it stops being a
/// checkpoint `Header`.
#[pyfunction]
#[pyo3(signature = (dir, *, comm=None))]
pub(crate) fn read_checkpoint_header(
    py: Python<'_>,
    dir: PathBuf,
    comm: Option<&crate::parallel::PyCommunicator>,
) -> PyResult<PyCheckpointHeader> {
    let comm = match comm {
        Some(c) => c.0.clone(),
        None => crate::parallel::default_comm(py)?,
    };
    plotfile::read_checkpoint_header_on(&dir, &comm)
        .map(PyCheckpointHeader)
        .map_err(py_err)
}

/// `read_checkpoint_multifab(dir, lev, name, ba, dm)`: the MultiFab `name` of level
/// `lev` (`<dir>/Level_<lev>/<name>_H` and its data, ghost cells included) on the
/// level's grids `ba` (from the `Header`) and the map `dm`, any map of them: each rank
/// of `dm`'s communicator reads its own FABs, whatever number of ranks wrote them.
/// **Collective** over `dm`'s communicator. `OSError` for a missing level or file,
/// `ValueError` for a corrupt one or one whose boxes are not `ba`.
#[pyfunction]
pub(crate) fn read_checkpoint_multifab(
    dir: PathBuf,
    lev: usize,
    name: &str,
    ba: &PyBoxArray,
    dm: &PyDistributionMapping,
) -> PyResult<PyMultiFab> {
    if dm.0.len() != ba.0.len() {
        return Err(PyValueError::new_err(format!(
            "read_checkpoint_multifab: the map has {} boxes, the grids {}",
            dm.0.len(),
            ba.0.len()
        )));
    }
    plotfile::read_checkpoint_multifab(&dir, lev, name, &ba.0, &dm.0)
        .map(PyMultiFab::from_multifab)
        .map_err(py_err)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyCheckpointHeader>()?;
    m.add_function(wrap_pyfunction!(write_checkpoint, m)?)?;
    m.add_function(wrap_pyfunction!(read_checkpoint_header, m)?)?;
    m.add_function(wrap_pyfunction!(read_checkpoint_multifab, m)?)
}
