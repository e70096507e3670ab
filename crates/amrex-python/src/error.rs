//! Python exceptions for the library's errors, decided in one place.
//!
//! Every error a binding can get from the Rust crates goes through [`py_err`]: each error
//! type says which kind of refusal it is ([`Classify`]), errors that wrap another (a
//! MultiFab error inside an AMR error, an arena error inside a fab error) ask the inner
//! one, and the kind picks the exception. So one refusal raises one exception type from
//! every method: a component range past the components is an `IndexError` from
//! `mf.copy`, from `average_down` and from a particle deposit alike. (This crate's Rust
//! tests do not run: it links against Python. `python-tests/test_refusals.py` and the
//! `test_amr_*.py` refusal tests check the mapping through the installed package.)
//!
//! | kind | Python exception |
//! |---|---|
//! | an index past the container: components, a box outside a fab, a level or tile that does not exist | `IndexError` |
//! | a required inputs key that is missing | `KeyError` |
//! | a file that cannot be read or written | `OSError` |
//! | memory that cannot be allocated | `MemoryError` |
//! | an operation that device memory cannot run (no kernel, several ranks) | `NotImplementedError` |
//! | a DLPack tensor that cannot be exported or imported | `BufferError` |
//! | MPI or a GPU runtime failing | `RuntimeError` |
//! | any other bad argument (ranks that disagree on a collective's arguments included) | `ValueError` |

use amrex_amr::{AmrError, AmrErrorKind};
use amrex_arena::{ArenaError, ErrorKind as ArenaKind};
use amrex_basefab::FabError;
use amrex_dlpack_core::{DlpackError, ErrorKind as DlpackKind};
use amrex_geometry::GeometryError;
use amrex_multifab::FabArrayError;
use amrex_particles::{ErrorKind as ParticleKind, ParticleContainerError};
use amrex_plotfile::PlotfileError;
use amrex_runtime::{CommError, ParmParseError};
use pyo3::PyErr;
use pyo3::exceptions::{
    PyBufferError, PyIndexError, PyKeyError, PyMemoryError, PyNotImplementedError, PyOSError,
    PyRuntimeError, PyValueError,
};

/// The Python exception a refusal raises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exc {
    /// `IndexError`.
    Index,
    /// `KeyError`.
    Key,
    /// `OSError`.
    Os,
    /// `MemoryError`.
    Memory,
    /// `NotImplementedError`.
    NotImplemented,
    /// `BufferError`.
    Buffer,
    /// `RuntimeError`.
    Runtime,
    /// `ValueError`.
    Value,
}

/// An error of the library, with the kind of refusal it is.
pub(crate) trait Classify: core::fmt::Display {
    /// Which Python exception it raises.
    fn exc(&self) -> Exc;
}

/// Any error of the library as its Python exception, with the library's message (which
/// names the operation and the offending values).
pub(crate) fn py_err<E: Classify>(e: E) -> PyErr {
    let msg = e.to_string();
    match e.exc() {
        Exc::Index => PyIndexError::new_err(msg),
        Exc::Key => PyKeyError::new_err(msg),
        Exc::Os => PyOSError::new_err(msg),
        Exc::Memory => PyMemoryError::new_err(msg),
        Exc::NotImplemented => PyNotImplementedError::new_err(msg),
        Exc::Buffer => PyBufferError::new_err(msg),
        Exc::Runtime => PyRuntimeError::new_err(msg),
        Exc::Value => PyValueError::new_err(msg),
    }
}

impl Classify for FabError {
    fn exc(&self) -> Exc {
        match self {
            Self::ComponentsOutside { .. } | Self::BoxOutside { .. } => Exc::Index,
            Self::Arena(e) => e.exc(),
            Self::Dlpack(e) => e.exc(),
            _ => Exc::Value,
        }
    }
}

impl Classify for FabArrayError {
    fn exc(&self) -> Exc {
        match self {
            Self::Fab(e) => e.exc(),
            Self::NoKernel { .. } | Self::DeviceNeedsOneProcess { .. } => Exc::NotImplemented,
            Self::Comm { source, .. } => source.exc(),
            _ => Exc::Value,
        }
    }
}

impl Classify for AmrError {
    fn exc(&self) -> Exc {
        match self.kind() {
            AmrErrorKind::ComponentsOutside { .. } => Exc::Index,
            AmrErrorKind::MultiFab(e) => e.exc(),
            AmrErrorKind::Input(e) => e.exc(),
            _ => Exc::Value,
        }
    }
}

impl Classify for ParticleContainerError {
    fn exc(&self) -> Exc {
        match self.kind() {
            ParticleKind::NoSuchTile { .. }
            | ParticleKind::NoSuchLevel { .. }
            | ParticleKind::BadComponent { .. } => Exc::Index,
            ParticleKind::MultiFab(e) => e.exc(),
            ParticleKind::Comm(e) => e.exc(),
            ParticleKind::Io { .. } => Exc::Os,
            // As `FabArrayError::RefusedOnOtherRank`: the rank that failed raises its
            // own error's exception; the others stop with it.
            ParticleKind::FailedOnOtherRank { .. } => Exc::Value,
            _ => Exc::Value,
        }
    }
}

impl Classify for amrex_aos::ParticleError {
    fn exc(&self) -> Exc {
        Exc::Value
    }
}

impl Classify for ArenaError {
    fn exc(&self) -> Exc {
        match self.kind() {
            ArenaKind::AllocationFailed { .. } | ArenaKind::CapacityOverflow => Exc::Memory,
            _ => Exc::Runtime,
        }
    }
}

impl Classify for DlpackError {
    fn exc(&self) -> Exc {
        match self.kind() {
            DlpackKind::BadCapsule => Exc::Value,
            _ => Exc::Buffer,
        }
    }
}

impl Classify for CommError {
    fn exc(&self) -> Exc {
        match self {
            // Ranks that called different collectives, or passed different arguments:
            // the arguments are at fault, as for the FabArray operations' own
            // `RanksDisagree`.
            Self::BadHandle { .. } | Self::RanksDisagree { .. } | Self::Mismatch { .. } => {
                Exc::Value
            }
            _ => Exc::Runtime,
        }
    }
}

impl Classify for ParmParseError {
    fn exc(&self) -> Exc {
        match self {
            Self::Missing { .. } => Exc::Key,
            Self::Io { .. } => Exc::Os,
            _ => Exc::Value,
        }
    }
}

impl Classify for PlotfileError {
    fn exc(&self) -> Exc {
        match self {
            Self::Io { .. } => Exc::Os,
            Self::Comm(e) => e.exc(),
            _ => Exc::Value,
        }
    }
}

impl Classify for GeometryError {
    fn exc(&self) -> Exc {
        Exc::Value
    }
}
