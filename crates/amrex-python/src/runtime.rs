//! What every pyAMReX (and AMReX) program starts with: `amr.initialize(args)` /
//! `amr.finalize()`, the build description `amr.Config`, and `ParmParse`, the inputs
//! table (`key = value` files and command-line definitions) read through typed queries.
//!
//! The table is `amrex_runtime::ParmParse` (one parser for the Rust and the Python side),
//! held once per process as AMReX's global table is: `initialize(args)` reads the
//! arguments into it (an inputs file first when the first argument holds no `=`, then the
//! definitions, which override it), `ParmParse(prefix)` objects are views of it, and the
//! last `finalize()` clears it. Nothing else in this package needs `initialize`: the
//! containers work without it.

use crate::error::py_err;
use crate::geometry::PyIntVect;
use amrex_runtime::{ParmParse, ParmParseError, ParmValue};
use pyo3::exceptions::{PyIndexError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};
use std::sync::{LazyLock, Mutex, MutexGuard, PoisonError};

/// The process-wide inputs table and how many `initialize` calls are open.
#[derive(Debug, Default)]
struct State {
    depth: usize,
    table: ParmParse,
}

static STATE: LazyLock<Mutex<State>> = LazyLock::new(Mutex::default);

/// The global state; a panic while it was held (none of ours can panic) leaves it usable.
fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `amr.initialize(args=None)`: starts "AMReX" as pyAMReX's `initialize` does: the
/// arguments (no program name) are read into the inputs table, an inputs file first if the
/// first argument holds no `=`, then `key=value` definitions that override it, read as
/// AMReX reads its command line (the words joined by spaces: `"amr.n_cell=32 32 16"` is
/// three values, a value in double quotes one). Calls nest; each needs its `finalize()`.
///
/// In the MPI build it also starts MPI if nobody has (collective then; see
/// `Communicator.world()`); MPI ends when the interpreter exits, not in `finalize()`.
#[pyfunction]
#[pyo3(signature = (args=None))]
fn initialize(py: Python<'_>, args: Option<Vec<String>>) -> PyResult<()> {
    // MPI before the table's lock: starting it releases the GIL while ranks meet.
    crate::parallel::default_comm(py)?;
    let mut st = state();
    if let Some(args) = args.filter(|a| !a.is_empty()) {
        let (file, rest) = match args.first() {
            Some(first) if !first.contains('=') => (Some(first.as_str()), &args[1..]),
            _ => (None, &args[..]),
        };
        // Parse into a copy, so a bad argument leaves the table as it was.
        let mut table = st.table.clone();
        if let Some(path) = file {
            read_file(&mut table, path)?;
        }
        // AMReX joins the arguments with spaces and reads them as one line, so
        // "amr.n_cell=32 32 16" is three values; quoted values stay whole.
        let words: Vec<&str> = rest
            .iter()
            .flat_map(|a| {
                if a.contains('"') {
                    vec![a.as_str()]
                } else {
                    a.split_whitespace().collect()
                }
            })
            .collect();
        table.read_command_line(&words).map_err(py_err)?;
        st.table = table;
    }
    st.depth += 1;
    Ok(())
}

/// `amr.finalize()`: ends one `initialize`; the last one clears the inputs table, as
/// AMReX's `Finalize` does.
#[pyfunction]
fn finalize() {
    let mut st = state();
    st.depth = st.depth.saturating_sub(1);
    if st.depth == 0 {
        st.table = ParmParse::new();
    }
}

/// `amr.initialized()`: whether an `initialize` is open.
#[pyfunction]
fn initialized() -> bool {
    state().depth > 0
}

fn read_file(table: &mut ParmParse, path: &str) -> PyResult<()> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        py_err(ParmParseError::Io {
            path: path.to_owned(),
            message: e.to_string(),
        })
    })?;
    table.read_text(&text, path).map_err(py_err)
}

/// The build, as pyAMReX's `amr.Config` describes it (class attributes; `to_dict()`).
#[pyclass(module = "amrex_rs", name = "Config", frozen)]
#[derive(Debug)]
pub(crate) struct PyConfig;

/// The GPU backend compiled in, with pyAMReX's names.
fn gpu_backend() -> Option<&'static str> {
    if cfg!(feature = "cuda") {
        Some("CUDA")
    } else if cfg!(feature = "hip") {
        Some("HIP")
    } else if cfg!(feature = "level-zero") {
        Some("SYCL")
    } else {
        None
    }
}

/// The class attributes of `Config` and its `to_dict()`, from one list.
macro_rules! config {
    ($($(#[doc = $doc:literal])+ $name:ident: $t:ty = $v:expr;)+) => {
        #[pymethods]
        impl PyConfig {
            $(
                $(#[doc = $doc])+
                #[classattr]
                fn $name() -> $t {
                    $v
                }
            )+

            /// The build description as a dict (pyAMReX `Config.to_dict()`).
            #[staticmethod]
            fn to_dict(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
                let d = PyDict::new(py);
                $(d.set_item(stringify!($name), Self::$name())?;)+
                Ok(d)
            }
        }
    };
}

config! {
    /// This package's version (pyAMReX: the AMReX library version).
    amrex_version: &'static str = env!("CARGO_PKG_VERSION");
    /// `"CUDA"`, `"HIP"`, `"SYCL"` (Level Zero), or `None` without GPU support.
    gpu_backend: Option<&'static str> = gpu_backend();
    /// Embedded boundaries: not built.
    have_eb: bool = false;
    /// Whether a GPU backend is compiled in (cargo feature `cuda`, `hip` or `level-zero`).
    have_gpu: bool = gpu_backend().is_some();
    /// Whether the package was built with MPI (cargo feature `mpi`).
    have_mpi: bool = cfg!(feature = "mpi");
    /// OpenMP: not used (the host loops are serial or Rust threads).
    have_omp: bool = false;
    /// Explicit SIMD types: not used.
    have_simd: bool = false;
    /// Precision of `MultiFab`/`FArrayBox` (`amrex::Real`): `"DOUBLE"`.
    precision: &'static str = "DOUBLE";
    /// Precision of particle reals: `"DOUBLE"`.
    precision_particles: &'static str = "DOUBLE";
    /// `amrex::Real` elements in a native SIMD vector (1: no explicit SIMD).
    simd_size: i32 = 1;
    /// Number of spatial dimensions: always 3 (1-D and 2-D problems use unit extents).
    spacedim: i32 = 3;
}

#[pymethods]
impl PyConfig {
    /// Verbosity level (stored, as pyAMReX's settable `Config.verbose`; nothing here
    /// prints).
    #[classattr]
    fn verbose() -> i32 {
        0
    }
}

/// The type a typed query reads.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Bool,
    Int,
    Real,
    Str,
}

impl Kind {
    /// `bool`, `int`, `float` or `str` (the `type=` argument of `getarr`/`queryarr`).
    fn of_type(t: &Bound<'_, PyType>) -> PyResult<Self> {
        let py = t.py();
        if t.is(py.get_type::<PyBool>()) {
            Ok(Self::Bool)
        } else if t.is(py.get_type::<PyInt>()) {
            Ok(Self::Int)
        } else if t.is(py.get_type::<PyFloat>()) {
            Ok(Self::Real)
        } else if t.is(py.get_type::<PyString>()) {
            Ok(Self::Str)
        } else {
            Err(PyTypeError::new_err(format!(
                "ParmParse reads bool, int, float or str values, not {}",
                t.name()?
            )))
        }
    }

    /// The kind of a default value (a bool before an int: `True` is an int too).
    fn of_value(v: &Bound<'_, PyAny>) -> PyResult<Self> {
        if v.is_instance_of::<PyBool>() {
            Ok(Self::Bool)
        } else if v.is_instance_of::<PyInt>() {
            Ok(Self::Int)
        } else if v.is_instance_of::<PyFloat>() {
            Ok(Self::Real)
        } else if v.is_instance_of::<PyString>() {
            Ok(Self::Str)
        } else {
            Err(PyTypeError::new_err(format!(
                "ParmParse.query: the default must be a bool, int, float or str, got {}",
                crate::dlpack::common::type_name(v)
            )))
        }
    }
}

/// One value of `kind` from the table, as a Python object.
fn get_one<'py>(
    py: Python<'py>,
    t: &ParmParse,
    key: &str,
    kind: Kind,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    Ok(match kind {
        Kind::Bool => t
            .query::<bool>(key)
            .map_err(py_err)?
            .map(|v| v.into_pyobject(py).map(|b| b.to_owned().into_any()))
            .transpose()?,
        Kind::Int => t
            .query::<i64>(key)
            .map_err(py_err)?
            .map(|v| v.into_pyobject(py).map(Bound::into_any))
            .transpose()?,
        Kind::Real => t
            .query::<f64>(key)
            .map_err(py_err)?
            .map(|v| v.into_pyobject(py).map(Bound::into_any))
            .transpose()?,
        Kind::Str => t
            .query::<String>(key)
            .map_err(py_err)?
            .map(|v| v.into_pyobject(py).map(Bound::into_any))
            .transpose()?,
    })
}

/// Every value of `key` as `kind`, as a Python list.
fn get_all<'py>(
    py: Python<'py>,
    t: &ParmParse,
    key: &str,
    kind: Kind,
) -> PyResult<Option<Bound<'py, PyList>>> {
    fn list<'py, T: ParmValue + for<'a> IntoPyObject<'a>>(
        py: Python<'py>,
        t: &ParmParse,
        key: &str,
    ) -> PyResult<Option<Bound<'py, PyList>>> {
        t.query_arr::<T>(key)
            .map_err(py_err)?
            .map(|v| PyList::new(py, v))
            .transpose()
    }
    match kind {
        Kind::Bool => list::<bool>(py, t, key),
        Kind::Int => list::<i64>(py, t, key),
        Kind::Real => list::<f64>(py, t, key),
        Kind::Str => list::<String>(py, t, key),
    }
}

/// A value as written, typed the way it reads: an int, else a real, else `true`/`false`,
/// else the text (for `to_dict`).
fn guess<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    if let Ok(i) = text.parse::<i64>() {
        return Ok(i.into_pyobject(py)?.into_any());
    }
    if let Some(x) = <f64 as ParmValue>::parse_value(text) {
        return Ok(x.into_pyobject(py)?.into_any());
    }
    match text.to_ascii_lowercase().as_str() {
        "true" => Ok(PyBool::new(py, true).to_owned().into_any()),
        "false" => Ok(PyBool::new(py, false).to_owned().into_any()),
        _ => Ok(PyString::new(py, text).into_any()),
    }
}

/// The words an `add` of `value` stores: bools as `true`/`false`, numbers and strings as
/// written (floats by `repr`, which reads back exactly), an `IntVect` or a sequence as one
/// word per element.
fn words(value: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if let Ok(b) = value.cast::<PyBool>() {
        return Ok(vec![if b.is_true() { "true" } else { "false" }.to_owned()]);
    }
    if value.is_instance_of::<PyInt>() || value.is_instance_of::<PyFloat>() {
        return Ok(vec![value.repr()?.to_string()]);
    }
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(vec![s.to_string()]);
    }
    if let Ok(iv) = value.cast::<PyIntVect>() {
        return Ok(iv
            .borrow()
            .0
            .to_array()
            .iter()
            .map(ToString::to_string)
            .collect());
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let mut out = Vec::new();
        for item in value.try_iter()? {
            let item = item?;
            if item.is_instance_of::<PyList>() || item.is_instance_of::<PyTuple>() {
                return Err(PyTypeError::new_err("ParmParse.addarr: nested sequences"));
            }
            out.extend(words(&item)?);
        }
        return Ok(out);
    }
    Err(PyTypeError::new_err(format!(
        "ParmParse.add: a bool, int, float, str, IntVect or a list of them, got {}",
        crate::dlpack::common::type_name(value)
    )))
}

/// A view of the inputs table whose keys are prefixed with `prefix.` (AMReX's
/// `ParmParse pp("amr")`; `ParmParse()` or `ParmParse("")` reads keys as given).
#[pyclass(module = "amrex_rs", name = "ParmParse", frozen)]
#[derive(Debug)]
pub(crate) struct PyParmParse {
    prefix: String,
}

impl PyParmParse {
    fn key(&self, name: &str) -> String {
        if self.prefix.is_empty() {
            name.to_owned()
        } else {
            format!("{}.{name}", self.prefix)
        }
    }

    /// The `ival`-th value of `name` as `kind` (`None` when `name` is not defined).
    fn nth<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        kind: Kind,
        ival: usize,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let key = self.key(name);
        let st = state();
        if ival == 0 {
            return get_one(py, &st.table, &key, kind);
        }
        let Some(all) = get_all(py, &st.table, &key, kind)? else {
            return Ok(None);
        };
        if ival >= all.len() {
            return Err(PyIndexError::new_err(format!(
                "input `{key}` has {} value(s); value {ival} was asked for",
                all.len()
            )));
        }
        all.get_item(ival).map(Some)
    }

    fn get<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        kind: Kind,
        ival: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.nth(py, name, kind, ival)?.ok_or_else(|| {
            py_err(ParmParseError::Missing {
                key: self.key(name),
            })
        })
    }

    /// pyAMReX's `query_*`: `(found, value)`, with the type's zero when not found.
    fn query_pair<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        kind: Kind,
        ival: usize,
        zero: Bound<'py, PyAny>,
    ) -> PyResult<(bool, Bound<'py, PyAny>)> {
        Ok(match self.nth(py, name, kind, ival)? {
            Some(v) => (true, v),
            None => (false, zero),
        })
    }
}

#[pymethods]
impl PyParmParse {
    /// `ParmParse(prefix="")`.
    #[new]
    #[pyo3(signature = (prefix=String::new()))]
    fn py_new(prefix: String) -> Self {
        Self { prefix }
    }

    /// The prefix (`""` for none).
    #[getter]
    fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Reads an inputs file into the table; its definitions override earlier ones
    /// (AMReX `ParmParse::addfile`). `OSError` if it cannot be read, `ValueError` naming
    /// the line for a malformed one (nothing is added then).
    #[staticmethod]
    fn addfile(filename: &str) -> PyResult<()> {
        let mut st = state();
        let mut table = st.table.clone();
        read_file(&mut table, filename)?;
        st.table = table;
        Ok(())
    }

    /// Defines `prefix.name` as `value` (a bool, int, float, str, IntVect, or a list of
    /// them); it overrides earlier definitions.
    fn add(&self, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let w = words(value)?;
        state().table.add(&self.key(name), &w);
        Ok(())
    }

    /// Defines `prefix.name` as the values of a list (AMReX `addarr`).
    fn addarr(&self, name: &str, values: &Bound<'_, PyAny>) -> PyResult<()> {
        if !(values.is_instance_of::<PyList>() || values.is_instance_of::<PyTuple>()) {
            return Err(PyTypeError::new_err(format!(
                "ParmParse.addarr: a list or tuple, got {}",
                crate::dlpack::common::type_name(values)
            )));
        }
        self.add(name, values)
    }

    /// Whether `prefix.name` is defined (AMReX `contains`).
    fn contains(&self, name: &str) -> bool {
        state().table.contains(&self.key(name))
    }

    fn __contains__(&self, name: &str) -> bool {
        self.contains(name)
    }

    /// Number of values of the last definition of `prefix.name` (AMReX `countval`).
    fn countval(&self, name: &str) -> usize {
        state().table.count_values(&self.key(name))
    }
}

/// Typed getters `pp.get_T(name, ival=0)`: value `ival` of `prefix.name`, `KeyError` if it
/// is not defined, `ValueError` (naming key, file and line) if it does not read as `T`.
macro_rules! getters {
    ($($(#[doc = $doc:literal])+ $name:ident => $kind:ident;)+) => {
        #[pymethods]
        impl PyParmParse {$(
            $(#[doc = $doc])+
            #[pyo3(signature = (name, ival=0))]
            fn $name<'py>(
                &self,
                py: Python<'py>,
                name: &str,
                ival: usize,
            ) -> PyResult<Bound<'py, PyAny>> {
                self.get(py, name, Kind::$kind, ival)
            }
        )+}
    };
}

getters! {
    /// Value `ival` of `prefix.name` as a bool (`true`/`false`/`t`/`f` or an integer).
    get_bool => Bool;
    /// Value `ival` of `prefix.name` as an int.
    get_int => Int;
    /// Value `ival` of `prefix.name` as a float (Fortran's `1.5d-3` too).
    get_real => Real;
    /// Value `ival` of `prefix.name` as a string.
    get_string => Str;
}

/// Typed queries `pp.query_T(name, ival=0) -> (found, value)` (pyAMReX's `query_int`),
/// with the type's zero (`zero(py)`) as the value when `prefix.name` is not defined.
macro_rules! queries {
    ($($(#[doc = $doc:literal])+ $name:ident => $kind:ident, $zero:expr;)+) => {
        #[pymethods]
        impl PyParmParse {$(
            $(#[doc = $doc])+
            #[pyo3(signature = (name, ival=0))]
            fn $name<'py>(
                &self,
                py: Python<'py>,
                name: &str,
                ival: usize,
            ) -> PyResult<(bool, Bound<'py, PyAny>)> {
                let zero: fn(Python<'py>) -> PyResult<Bound<'py, PyAny>> = $zero;
                self.query_pair(py, name, Kind::$kind, ival, zero(py)?)
            }
        )+}
    };
}

queries! {
    /// `(found, value)` of an int (0 when not found).
    query_int => Int, |py| Ok(0i64.into_pyobject(py)?.into_any());
    /// `(found, value)` of a float (0.0 when not found).
    query_real => Real, |py| Ok(0f64.into_pyobject(py)?.into_any());
    /// `(found, value)` of a bool (False when not found).
    query_bool => Bool, |py| Ok(PyBool::new(py, false).to_owned().into_any());
    /// `(found, value)` of a string (`""` when not found).
    query_string => Str, |py| Ok(PyString::new(py, "").into_any());
}

#[pymethods]
impl PyParmParse {
    /// `prefix.name` read as the type of `default` (bool, int, float or str), or
    /// `default` when it is not defined (AMReX `query` with a preset value).
    fn query<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        default: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let kind = Kind::of_value(&default)?;
        Ok(self.nth(py, name, kind, 0)?.unwrap_or(default))
    }

    /// Every value of `prefix.name` as `type` (bool, int, float or str); `KeyError` if it
    /// is not defined (AMReX `getarr`).
    #[pyo3(signature = (name, r#type=None))]
    fn getarr<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        r#type: Option<&Bound<'py, PyType>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let kind = r#type.map_or(Ok(Kind::Real), Kind::of_type)?;
        let key = self.key(name);
        get_all(py, &state().table, &key, kind)?
            .ok_or_else(|| py_err(ParmParseError::Missing { key }))
    }

    /// `(found, values)` of `prefix.name` as `type` (an empty list when not found;
    /// AMReX `queryarr`).
    #[pyo3(signature = (name, r#type=None))]
    fn queryarr<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        r#type: Option<&Bound<'py, PyType>>,
    ) -> PyResult<(bool, Bound<'py, PyList>)> {
        let kind = r#type.map_or(Ok(Kind::Real), Kind::of_type)?;
        Ok(match get_all(py, &state().table, &self.key(name), kind)? {
            Some(v) => (true, v),
            None => (false, PyList::empty(py)),
        })
    }

    /// Every key defined in the table (all prefixes), in first-definition order.
    #[staticmethod]
    fn keys() -> Vec<String> {
        state()
            .table
            .keys()
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    /// The whole table as nested dicts (`amr.n_cell = 64 64 8` becomes
    /// `{"amr": {"n_cell": [64, 64, 8]}}`), each value typed the way it reads (int, float,
    /// bool, else str), as pyAMReX's `to_dict`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let st = state();
        let root = PyDict::new(py);
        let mut keys = st.table.keys();
        keys.sort_unstable();
        for key in keys {
            let vals: Vec<String> = st.table.get_arr(key).map_err(py_err)?;
            let value = if vals.len() == 1 {
                guess(py, &vals[0])?
            } else {
                let items = vals
                    .iter()
                    .map(|v| guess(py, v))
                    .collect::<PyResult<Vec<_>>>()?;
                PyList::new(py, items)?.into_any()
            };
            let mut d = root.clone();
            let mut parts = key.split('.').peekable();
            while let Some(part) = parts.next() {
                if parts.peek().is_none() {
                    d.set_item(part, &value)?;
                } else {
                    let inner = match d.get_item(part)? {
                        Some(x) if x.is_instance_of::<PyDict>() => x.cast_into::<PyDict>()?,
                        _ => {
                            let n = PyDict::new(py);
                            d.set_item(part, &n)?;
                            n
                        }
                    };
                    d = inner;
                }
            }
        }
        Ok(root)
    }

    /// Prints `key = values` for every key (the last definition of each), as pyAMReX's
    /// `pretty_print_table`, through Python's `print`.
    fn pretty_print_table(&self, py: Python<'_>) -> PyResult<()> {
        let lines: Vec<String> = {
            let st = state();
            st.table
                .keys()
                .into_iter()
                .map(|k| {
                    let v: Vec<String> = st.table.get_arr(k).map_err(py_err)?;
                    Ok(format!("{k} = {}", v.join(" ")))
                })
                .collect::<PyResult<_>>()?
        };
        let print = py.import("builtins")?.getattr("print")?;
        for l in lines {
            print.call1((l,))?;
        }
        Ok(())
    }

    fn __repr__(&self) -> String {
        format!("ParmParse({:?})", self.prefix)
    }
}

/// A copy of the inputs table, for the classes that read their keys from it
/// (`AmrMesh()`, `AmrCore()`).
pub(crate) fn table() -> ParmParse {
    state().table.clone()
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(initialize, m)?)?;
    m.add_function(wrap_pyfunction!(finalize, m)?)?;
    m.add_function(wrap_pyfunction!(initialized, m)?)?;
    m.add_class::<PyConfig>()?;
    m.add_class::<PyParmParse>()
}
