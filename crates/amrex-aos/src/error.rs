//! [`ParticleError`]: why a particle-container operation failed.

use amrex_arena::ArenaError;
use core::fmt;

/// Which kind of component an error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompKind {
    /// Real components.
    Real,
    /// Integer components.
    Int,
}

impl fmt::Display for CompKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Real => "real",
            Self::Int => "int",
        })
    }
}

/// Why a particle-container operation failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParticleError {
    /// The arena failed (allocation, copy, or host access to device memory).
    Arena(ArenaError),
    /// A component index past the number of components.
    NoSuchComponent {
        /// Real or int.
        kind: CompKind,
        /// The index asked for.
        index: usize,
        /// How many there are.
        count: usize,
    },
    /// A particle given with the wrong number of components.
    ComponentCountMismatch {
        /// Real or int.
        kind: CompKind,
        /// How many the container holds.
        expected: usize,
        /// How many were given.
        found: usize,
    },
    /// Neighbour count larger than the number of particles.
    TooManyNeighbors {
        /// Neighbours asked for.
        neighbors: usize,
        /// Particles held.
        len: usize,
    },
    /// A component name already in use.
    DuplicateName(alloc::string::String),
}

impl fmt::Display for ParticleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Arena(e) => write!(f, "particle storage: {e}"),
            Self::NoSuchComponent { kind, index, count } => write!(
                f,
                "no {kind} component {index}: the container has {count} {kind} components"
            ),
            Self::ComponentCountMismatch {
                kind,
                expected,
                found,
            } => write!(
                f,
                "expected {expected} {kind} components per particle, got {found}"
            ),
            Self::TooManyNeighbors { neighbors, len } => write!(
                f,
                "{neighbors} neighbour particles asked for, but only {len} particles are held"
            ),
            Self::DuplicateName(name) => write!(f, "a component named {name:?} already exists"),
        }
    }
}

impl core::error::Error for ParticleError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Arena(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ArenaError> for ParticleError {
    fn from(e: ArenaError) -> Self {
        Self::Arena(e)
    }
}
