//! Ranks and communicators: `amr.Communicator`, pyAMReX's `amr.ParallelDescriptor`, and
//! how the package starts and ends MPI.
//!
//! The MPI build (cargo feature `mpi`) runs `amrex_multifab`'s distributed engine under
//! `mpirun`. MPI starts on first need: `amr.initialize()`, `Communicator.world()`, or the
//! first `DistributionMapping(ba)` made without a communicator, whichever comes first. If
//! mpi4py (or anyone else) initialised MPI before, that MPI is used as it is and left to
//! its owner to finalise; if this package initialised it, it finalises it when the
//! interpreter exits (an `atexit` hook), not in `amr.finalize()`, so that `initialize()`
//! may follow `finalize()` again, as pytest fixtures do, and mpi4py keeps working after
//! `finalize()`.
//!
//! With more than one rank, two hooks keep a failure on one rank from leaving the others
//! waiting in a collective: a Rust panic calls `MPI_Abort` (`amrex_multifab`'s panic
//! hook), and so does an uncaught Python exception (a `sys.excepthook` that prints the
//! traceback first, as `python -m mpi4py` does).
//!
//! The default build has no MPI: `Communicator.world()` is the one-process communicator,
//! unless `mpirun` started this process as one of several ranks, when it and
//! `Communicator.from_mpi4py` raise a `RuntimeError` that says how to build with MPI.

use crate::error::py_err;
use amrex_runtime::Communicator;
use pyo3::exceptions::PyRuntimeError;
#[cfg(feature = "mpi")]
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// How to get an MPI build, for the errors of the default one.
#[cfg(not(feature = "mpi"))]
const BUILD_WITH_MPI: &str = "build it with MPI: `AMREX_PY_FEATURES=mpi bash scripts/build-python.sh`, or \
     `MATURIN_PEP517_ARGS=\"--features mpi\" pip install ./crates/amrex-python`";

/// The number of ranks `mpirun` (MPICH's Hydra, Open MPI, Slurm's PMI) says this process
/// belongs to, if it was started by one.
#[cfg(not(feature = "mpi"))]
fn launched_ranks() -> Option<usize> {
    ["PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE"]
        .iter()
        .find_map(|k| std::env::var(k).ok()?.trim().parse().ok())
}

/// The communicator of a `DistributionMapping` made without one: MPI's world in the MPI
/// build (starting MPI on first use), one process otherwise.
pub(crate) fn default_comm(py: Python<'_>) -> PyResult<Communicator> {
    #[cfg(feature = "mpi")]
    {
        world(py)
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = py;
        Ok(Communicator::single())
    }
}

/// MPI's world, starting MPI on first use (collective then) and installing the hooks.
#[cfg(feature = "mpi")]
pub(crate) fn world(py: Python<'_>) -> PyResult<Communicator> {
    let c = py.detach(Communicator::world).map_err(py_err)?;
    install_hooks(py)?;
    Ok(c)
}

/// Installs, once, what a Python process using MPI needs (MPI initialised):
/// - an `atexit` hook that finishes the exchanges still in flight and then ends MPI if
///   this package started it (`amrex_runtime::finalize` leaves another owner's MPI
///   alone; that owner's own exit hook, registered earlier, runs later);
/// - with more than one rank in MPI's world, the `sys.excepthook` that ends the job.
#[cfg(feature = "mpi")]
fn install_hooks(py: Python<'_>) -> PyResult<()> {
    use core::sync::atomic::{AtomicBool, Ordering};
    use mpi::traits::Communicator as _;
    static HOOKS: AtomicBool = AtomicBool::new(false);
    if HOOKS.swap(true, Ordering::SeqCst) {
        return Ok(());
    }
    let at_exit = pyo3::types::PyCFunction::new_closure(py, None, None, |args, _| {
        crate::multifab::in_flight::finish_all(args.py());
        amrex_runtime::finalize();
    })?;
    py.import("atexit")?.call_method1("register", (at_exit,))?;
    // MPI_Comm_size is local: no collective over the world here.
    if mpi::topology::SimpleCommunicator::world().size() > 1 {
        abort_on_uncaught_exception(py)?;
    }
    Ok(())
}

/// Chains a `sys.excepthook` that, after the previous hook printed the traceback, ends
/// every rank with `MPI_Abort`: the other ranks may be waiting for this one in a
/// collective, and would wait forever.
#[cfg(feature = "mpi")]
fn abort_on_uncaught_exception(py: Python<'_>) -> PyResult<()> {
    let sys = py.import("sys")?;
    let previous: Py<PyAny> = sys.getattr("excepthook")?.unbind();
    let hook = pyo3::types::PyCFunction::new_closure(py, None, None, move |args, kwargs| {
        let py = args.py();
        // The traceback first, whatever the previous hook does with it.
        if previous.bind(py).call(args, kwargs).is_err() {
            eprintln!("amrex_rs: an uncaught exception (its traceback could not be printed)");
        }
        for stream in ["stdout", "stderr"] {
            if let Ok(s) = py.import("sys").and_then(|m| m.getattr(stream)) {
                let _ = s.call_method0("flush");
            }
        }
        amrex_runtime::abort_all_ranks("amrex_rs", "ended with an uncaught exception");
    })?;
    sys.setattr("excepthook", hook)?;
    Ok(())
}

/// An MPI communicator, or the one-process one (`amrex_runtime::Communicator`).
///
/// Every `DistributionMapping`, and so every MultiFab, particle container and plotfile
/// read, runs on one; operations on them are collective over it.
#[pyclass(module = "amrex_rs", name = "Communicator", frozen, eq)]
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PyCommunicator(pub(crate) Communicator);

#[pymethods]
impl PyCommunicator {
    /// MPI's world (a duplicate of `MPI_COMM_WORLD`), starting MPI if nobody has; the same
    /// communicator on every call. **Collective** on first use. Without MPI in the build:
    /// the one-process communicator, or `RuntimeError` when `mpirun` started several ranks.
    #[staticmethod]
    fn world(py: Python<'_>) -> PyResult<Self> {
        #[cfg(feature = "mpi")]
        {
            world(py).map(Self)
        }
        #[cfg(not(feature = "mpi"))]
        {
            let _ = py;
            match launched_ranks() {
                Some(n) if n > 1 => Err(PyRuntimeError::new_err(format!(
                    "Communicator.world(): mpirun started {n} ranks, but this amrex_rs was built \
                     without MPI and would run each rank alone; {BUILD_WITH_MPI}"
                ))),
                _ => Ok(Self(Communicator::single())),
            }
        }
    }

    /// The one-process communicator (rank 0 of 1), in any build: a DistributionMapping on
    /// it keeps every box on this rank.
    #[staticmethod]
    fn single() -> Self {
        Self(Communicator::single())
    }

    /// Adopts an mpi4py intra-communicator (`MPI.COMM_WORLD`, a `Split` of it, ...): it is
    /// duplicated, so the caller keeps its own and our messages never match its.
    /// **Collective** over `comm`. mpi4py must run on the MPI library this package was
    /// built with (checked: `MPI.Get_library_version()`).
    #[staticmethod]
    fn from_mpi4py(comm: &Bound<'_, PyAny>) -> PyResult<Self> {
        #[cfg(feature = "mpi")]
        {
            from_mpi4py(comm).map(Self)
        }
        #[cfg(not(feature = "mpi"))]
        {
            let _ = comm;
            Err(PyRuntimeError::new_err(format!(
                "Communicator.from_mpi4py: this amrex_rs was built without MPI; {BUILD_WITH_MPI}"
            )))
        }
    }

    /// This process's rank, `0 .. size`.
    #[getter]
    fn rank(&self) -> usize {
        self.0.rank()
    }

    /// The number of ranks.
    #[getter]
    fn size(&self) -> usize {
        self.0.size()
    }

    /// Waits for every rank. **Collective**: ranks in another collective make every rank
    /// raise instead of waiting.
    fn barrier(&self, py: Python<'_>) -> PyResult<()> {
        let c = self.0.clone();
        py.detach(move || c.barrier()).map_err(py_err)
    }

    fn __repr__(&self) -> String {
        format!(
            "Communicator(rank={}, size={}{})",
            self.0.rank(),
            self.0.size(),
            if self.0 == Communicator::single() {
                ", single"
            } else {
                ", MPI"
            }
        )
    }
}

/// The raw handle of an mpi4py communicator, duplicated into ours.
#[cfg(feature = "mpi")]
fn from_mpi4py(comm: &Bound<'_, PyAny>) -> PyResult<Communicator> {
    let py = comm.py();
    let mpi4py = py.import("mpi4py.MPI")?;
    if comm.is_instance(&mpi4py.getattr("Comm")?)? && comm.eq(mpi4py.getattr("COMM_NULL")?)? {
        return Err(PyValueError::new_err(
            "Communicator.from_mpi4py: the communicator is MPI_COMM_NULL (a rank outside a \
             Split's colour or a freed communicator)",
        ));
    }
    if !comm.is_instance(&mpi4py.getattr("Intracomm")?)? {
        return Err(PyTypeError::new_err(format!(
            "Communicator.from_mpi4py needs an mpi4py intra-communicator (mpi4py.MPI.Intracomm), got {}",
            comm.get_type().name()?
        )));
    }
    // Handles mean something only to the library that made them.
    let theirs: String = mpi4py.call_method0("Get_library_version")?.extract()?;
    let ours = mpi::environment::library_version().unwrap_or_default();
    if theirs.trim_end_matches(['\0', '\n', ' ']) != ours.trim_end_matches(['\0', '\n', ' ']) {
        return Err(PyRuntimeError::new_err(format!(
            "Communicator.from_mpi4py: mpi4py runs on another MPI library than amrex_rs \
             (mpi4py: {:?}; amrex_rs: {:?}); build mpi4py against the MPI amrex_rs uses \
             (pip install --no-binary mpi4py mpi4py)",
            first_line(&theirs),
            first_line(&ours)
        )));
    }
    let addr: usize = mpi4py.call_method1("_addressof", (comm,))?.extract()?;
    if addr == 0 || !addr.is_multiple_of(core::mem::align_of::<mpi::ffi::MPI_Comm>()) {
        return Err(PyValueError::new_err(
            "Communicator.from_mpi4py: mpi4py gave no usable handle address",
        ));
    }
    // SAFETY: `MPI._addressof(comm)` is the address of the `MPI_Comm` field inside the
    // mpi4py object `comm` (non-null and aligned, checked above), which lives while we
    // hold `comm`; it was written by the same MPI library as ours (checked above), so it
    // has our `MPI_Comm` type.
    let raw = unsafe { (addr as *const mpi::ffi::MPI_Comm).read() };
    // SAFETY: `raw` is a handle of this process's MPI library (above). mpi4py frees its
    // handles only when asked (`Free()`) or when the object dies: we hold `comm`, and we
    // keep the GIL through the dup, so no other Python thread can call `Free()` on it
    // meanwhile. (The dup is collective over `comm`; holding this rank's GIL does not
    // stop the other ranks.)
    let c = unsafe { Communicator::from_raw_mpi(raw) }.map_err(py_err)?;
    amrex_runtime::abort_on_panic();
    install_hooks(py)?;
    Ok(c)
}

#[cfg(feature = "mpi")]
fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("").trim()
}

/// pyAMReX's `amr.ParallelDescriptor`: this process among the world's ranks.
#[pyclass(module = "amrex_rs", name = "ParallelDescriptor", frozen)]
pub(crate) struct PyParallelDescriptor;

#[pymethods]
impl PyParallelDescriptor {
    /// This process's rank in the world.
    #[staticmethod]
    #[pyo3(name = "MyProc")]
    fn my_proc(py: Python<'_>) -> PyResult<usize> {
        Ok(default_comm(py)?.rank())
    }

    /// The number of ranks in the world.
    #[staticmethod]
    #[pyo3(name = "NProcs")]
    fn n_procs(py: Python<'_>) -> PyResult<usize> {
        Ok(default_comm(py)?.size())
    }

    /// Whether this is the I/O rank (rank 0).
    #[staticmethod]
    #[pyo3(name = "IOProcessor")]
    fn io_processor(py: Python<'_>) -> PyResult<bool> {
        Ok(default_comm(py)?.rank() == 0)
    }

    /// The I/O rank: 0.
    #[staticmethod]
    #[pyo3(name = "IOProcessorNumber")]
    fn io_processor_number() -> usize {
        0
    }

    /// Waits for every rank of the world. **Collective**.
    #[staticmethod]
    #[pyo3(name = "Barrier")]
    fn barrier(py: Python<'_>) -> PyResult<()> {
        let c = default_comm(py)?;
        py.detach(move || c.barrier()).map_err(py_err)
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyCommunicator>()?;
    m.add_class::<PyParallelDescriptor>()?;
    Ok(())
}
