//! Start and end of a program: AMReX's `amrex::Initialize(argc, argv)` and
//! `amrex::Finalize`.

use core::fmt;

use crate::comm::{CommError, Communicator};
#[cfg(feature = "std")]
use crate::fingerprint::Fingerprint;
use crate::parm_parse::{ParmParse, ParmParseError};

/// Returned by [`init`] and [`init_with_args`]: the communicator to build the program's
/// `DistributionMapping`s with, the inputs read from the command line, and MPI's
/// finalisation when dropped.
///
/// Keep it alive for the whole program (`let amrex = amrex_runtime::init()?;` first in
/// `main`). Dropping it calls [`finalize`], unless the thread is panicking: finalising
/// is collective in effect, and a rank that finalises while the others wait in a
/// collective would leave them hanging.
#[derive(Debug)]
pub struct InitGuard {
    comm: Communicator,
    pp: ParmParse,
}

impl InitGuard {
    /// MPI's world (feature `mpi`), or [`Communicator::single`] without it.
    #[must_use]
    pub fn communicator(&self) -> &Communicator {
        &self.comm
    }

    /// The inputs [`init_with_args`] read (the inputs file, then the command line's
    /// `key=value` definitions); empty after [`init`].
    #[must_use]
    pub fn parm_parse(&self) -> &ParmParse {
        &self.pp
    }

    /// The inputs, to add definitions to or to keep after the guard.
    pub fn parm_parse_mut(&mut self) -> &mut ParmParse {
        &mut self.pp
    }
}

impl Drop for InitGuard {
    fn drop(&mut self) {
        #[cfg(feature = "mpi")]
        if !std::thread::panicking() {
            crate::comm::finalize_mpi();
        }
    }
}

/// Why [`init_with_args`] failed (the same error on every rank).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InitError {
    /// MPI could not start, or the ranks could not agree on the start.
    Comm(CommError),
    /// The inputs file or a command-line definition (on this rank).
    Inputs(ParmParseError),
    /// Another rank could not read its inputs.
    InputsOnOtherRank {
        /// The lowest such rank.
        rank: usize,
    },
}

impl fmt::Display for InitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Comm(e) => write!(f, "starting the communicator: {e}"),
            Self::Inputs(e) => write!(f, "reading the inputs: {e}"),
            Self::InputsOnOtherRank { rank } => {
                write!(f, "rank {rank} could not read the inputs")
            }
        }
    }
}

impl core::error::Error for InitError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Comm(e) => Some(e),
            Self::Inputs(e) => Some(e),
            Self::InputsOnOtherRank { .. } => None,
        }
    }
}

impl From<CommError> for InitError {
    fn from(e: CommError) -> Self {
        Self::Comm(e)
    }
}

/// AMReX's `amrex::Initialize` without arguments: with the `mpi` feature, initialises MPI
/// (once per process; see `Communicator::world`) and returns a guard whose drop
/// finalises it; without it, a guard holding [`Communicator::single`]. So one program
/// runs either way, unchanged.
///
/// # Errors
/// [`CommError`] when MPI cannot start.
pub fn init() -> Result<InitGuard, CommError> {
    #[cfg(feature = "mpi")]
    let comm = Communicator::world()?;
    #[cfg(not(feature = "mpi"))]
    let comm = Communicator::single();
    Ok(InitGuard {
        comm,
        pp: ParmParse::new(),
    })
}

/// AMReX's `amrex::Initialize(argc, argv)`: [`init`], then the program's arguments
/// (without the program name) read as AMReX reads them ([`ParmParse::from_args`]: an
/// inputs file first if the first argument holds no `=`, then `key=value` overrides),
/// into [`InitGuard::parm_parse`]. **Collective**: every rank reads the inputs, and a
/// rank that cannot makes every rank fail.
///
/// ```no_run
/// let args: Vec<String> = std::env::args().skip(1).collect();
/// let amrex = amrex_runtime::init_with_args(&args)?;
/// let max_step: i32 = amrex.parm_parse().query_or("max_step", 10)?;
/// # let _ = max_step;
/// # Ok::<(), Box<dyn core::error::Error>>(())
/// ```
///
/// # Errors
/// [`InitError::Comm`], [`InitError::Inputs`] (on the ranks that could not read them),
/// [`InitError::InputsOnOtherRank`] (on the others).
#[cfg(feature = "std")]
pub fn init_with_args<S: AsRef<str>>(args: &[S]) -> Result<InitGuard, InitError> {
    let mut guard = init()?;
    let mut fp = Fingerprint::new();
    for a in args {
        fp.str(a.as_ref());
    }
    let read = ParmParse::from_args(args);
    let agreed = guard.comm.agree("init_with_args", &fp)?;
    let failed = agreed.first_failure(read.is_ok());
    match (read, failed) {
        (Ok(pp), None) => {
            guard.pp = pp;
            Ok(guard)
        }
        (Err(e), _) => Err(InitError::Inputs(e)),
        (Ok(_), Some(rank)) => Err(InitError::InputsOnOtherRank { rank }),
    }
}

/// AMReX's `amrex::Finalize`: with the `mpi` feature, finalises MPI if this crate
/// initialised it (and drops the cached world communicator); idempotent. **Collective**
/// over MPI's world. Call it at the end of `main` if you did not keep [`init`]'s guard.
/// MPI cannot be used afterwards (`Communicator::world` returns
/// [`CommError::Finalized`]). Without the feature it does nothing.
pub fn finalize() {
    #[cfg(feature = "mpi")]
    crate::comm::finalize_mpi();
}

#[cfg(all(test, not(feature = "mpi")))]
mod tests {
    use super::*;

    // With `mpi`, init() would start MPI inside a libtest thread; the MPI path is tested
    // by tests/mpi_comm.rs under mpirun.
    #[test]
    fn init_without_mpi_is_single() {
        let g = init().unwrap();
        assert_eq!(*g.communicator(), Communicator::single());
        assert!(g.parm_parse().keys().is_empty());
        drop(g);
        finalize();
    }

    #[cfg(feature = "std")]
    #[test]
    fn init_with_args_reads_the_command_line() {
        let g = init_with_args(&["amr.max_level=2", "adv.cfl", "=", "0.5"]).unwrap();
        assert_eq!(g.parm_parse().get::<i32>("amr.max_level"), Ok(2));
        assert_eq!(g.parm_parse().get::<f64>("adv.cfl"), Ok(0.5));
        let e = init_with_args(&["/no/such/inputs/file"]).unwrap_err();
        assert!(
            matches!(e, InitError::Inputs(ParmParseError::Io { .. })),
            "{e}"
        );
        assert!(
            alloc::format!("{e}").contains("/no/such/inputs/file"),
            "{e}"
        );
    }
}
