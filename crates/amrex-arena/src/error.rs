//! The error type: one named kind per failure, each saying what was asked and what happened.

use amrex_dlpack_core::Device;
use core::fmt;

/// A memory backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// The global allocator.
    Host,
    /// CUDA (driver API, through `cudarc`).
    Cuda,
    /// HIP / ROCm (`libamdhip64`).
    Hip,
    /// Level Zero (`libze_loader`).
    LevelZero,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Host => "host",
            Self::Cuda => "CUDA",
            Self::Hip => "HIP",
            Self::LevelZero => "Level Zero",
        })
    }
}

/// Why an arena operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The backend's cargo feature is off in this build.
    NotCompiled(Backend),
    /// None of the shared libraries the backend loads could be opened.
    LibraryNotFound {
        /// The backend.
        backend: Backend,
        /// The library names that were tried, in order.
        tried: &'static [&'static str],
    },
    /// The library was opened but lacks a function the backend calls.
    SymbolNotFound {
        /// The backend.
        backend: Backend,
        /// The missing function.
        symbol: &'static str,
    },
    /// The runtime library is present but no driver answered (for example the Level Zero
    /// loader without any GPU driver installed).
    NoDriver {
        /// The backend.
        backend: Backend,
        /// The runtime's error code.
        code: i64,
    },
    /// The driver is present but reports no device.
    NoDevice(Backend),
    /// A device ordinal past the number of devices.
    DeviceOutOfRange {
        /// The backend.
        backend: Backend,
        /// The ordinal asked for.
        requested: i32,
        /// How many devices there are.
        available: i32,
    },
    /// A runtime call failed.
    Driver {
        /// The backend.
        backend: Backend,
        /// The function that failed.
        call: &'static str,
        /// The runtime's error code.
        code: i64,
        /// The runtime's name or description of the code.
        message: &'static str,
    },
    /// The allocator returned no memory.
    AllocationFailed {
        /// Bytes requested.
        size: usize,
        /// Alignment requested.
        align: usize,
    },
    /// The backend cannot guarantee the requested alignment.
    UnsupportedAlignment {
        /// The backend.
        backend: Backend,
        /// Alignment requested.
        align: usize,
        /// The largest alignment the backend guarantees.
        max: usize,
    },
    /// A size computation overflowed (`capacity * size_of::<T>()` past `isize::MAX`).
    CapacityOverflow,
    /// Host access was asked for memory the CPU cannot dereference.
    NotHostAccessible(Device),
    /// Two lengths that must agree (for example of a bulk copy's source and destination)
    /// do not.
    LengthMismatch {
        /// The required length.
        expected: usize,
        /// The length given.
        found: usize,
    },
    /// An index past the end.
    OutOfBounds {
        /// The index given.
        index: usize,
        /// The length.
        len: usize,
    },
    /// The arena's memory has no device kernels in this build (HIP and Level Zero device
    /// memory, for now): copy to a host arena to compute on it.
    NoKernels(Backend),
    /// The run-time compiler refused the kernels' source (a bug in this crate, or a
    /// compiler too old for the device); `log` is the compiler's log.
    KernelCompile {
        /// The backend.
        backend: Backend,
        /// The architecture compiled for (`90` for `sm_90`).
        arch: u32,
        /// The compiler's log.
        log: &'static str,
    },
    /// Anything else, with a short description.
    Unsupported(&'static str),
}

/// A failed arena operation. See [`ErrorKind`] for the cases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArenaError {
    kind: ErrorKind,
}

impl ArenaError {
    /// An error of the given kind.
    pub const fn new(kind: ErrorKind) -> Self {
        Self { kind }
    }

    /// What went wrong.
    pub const fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The error returned by every constructor of a backend whose feature is off.
    pub const fn not_compiled(backend: Backend) -> Self {
        Self::new(ErrorKind::NotCompiled(backend))
    }
}

impl From<ErrorKind> for ArenaError {
    fn from(kind: ErrorKind) -> Self {
        Self::new(kind)
    }
}

impl fmt::Display for ArenaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ErrorKind::NotCompiled(b) => write!(
                f,
                "{b} support is not compiled in (enable the amrex-arena feature for {b})"
            ),
            ErrorKind::LibraryNotFound { backend, tried } => {
                write!(f, "{backend}: library not found (tried ")?;
                for (i, name) in tried.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    f.write_str(name)?;
                }
                f.write_str(")")
            }
            ErrorKind::SymbolNotFound { backend, symbol } => {
                write!(f, "{backend}: the runtime library has no symbol {symbol}")
            }
            ErrorKind::NoDriver { backend, code } => write!(
                f,
                "{backend}: the runtime library is present but no driver is (error code {code:#x})"
            ),
            ErrorKind::NoDevice(b) => write!(f, "{b}: the driver reports no device"),
            ErrorKind::DeviceOutOfRange {
                backend,
                requested,
                available,
            } => write!(
                f,
                "{backend}: expected a device ordinal below {available}, got {requested}"
            ),
            ErrorKind::Driver {
                backend,
                call,
                code,
                message,
            } => {
                write!(f, "{backend}: {call} failed with {message} ({code})")
            }
            ErrorKind::AllocationFailed { size, align } => {
                write!(f, "allocation of {size} bytes aligned to {align} failed")
            }
            ErrorKind::UnsupportedAlignment {
                backend,
                align,
                max,
            } => write!(
                f,
                "{backend}: expected an alignment of at most {max} bytes, got {align}"
            ),
            ErrorKind::CapacityOverflow => write!(f, "capacity overflow"),
            ErrorKind::NotHostAccessible(d) => {
                write!(f, "expected host-accessible memory, got memory on {d}")
            }
            ErrorKind::LengthMismatch { expected, found } => {
                write!(f, "expected length {expected}, got {found}")
            }
            ErrorKind::OutOfBounds { index, len } => {
                write!(f, "index {index} out of bounds for length {len}")
            }
            ErrorKind::NoKernels(b) => write!(
                f,
                "{b}: no device kernels for this memory in this build (copy it to a host arena to compute on it)"
            ),
            ErrorKind::KernelCompile { backend, arch, log } => {
                write!(
                    f,
                    "{backend}: compiling the kernels for sm_{arch} failed: {log}"
                )
            }
            ErrorKind::Unsupported(what) => write!(f, "unsupported: {what}"),
        }
    }
}

impl core::error::Error for ArenaError {}

impl From<ArenaError> for amrex_dlpack_core::DlpackError {
    fn from(e: ArenaError) -> Self {
        use amrex_dlpack_core::ErrorKind as K;
        Self::new(match e.kind {
            ErrorKind::AllocationFailed { .. } | ErrorKind::CapacityOverflow => K::AllocationFailed,
            ErrorKind::NotHostAccessible(d) => K::NotHostAccessible(d),
            ErrorKind::LengthMismatch { expected, found } => K::LengthMismatch { expected, found },
            ErrorKind::NotCompiled(_) => K::Unsupported("arena backend not compiled in"),
            _ => K::Unsupported("arena operation failed"),
        })
    }
}
