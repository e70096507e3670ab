//! [`FabError`]: why a fab operation was refused.

use amrex_arena::ArenaError;
use amrex_box::IndexBox;
use amrex_dlpack_core::{Device, DlpackError};
use core::fmt;

/// Why a [`BaseFab`](crate::BaseFab) operation was refused: one box's concerns (its
/// memory, box, components and DLPack form). Each variant names what was asked and what
/// the fab has. Operations over many boxes and ranks have their own error type in
/// `amrex-multifab`, which wraps this one.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum FabError {
    /// Host code was asked to read or write memory the CPU cannot dereference (a device
    /// arena or an imported device tensor). Stage through [`BaseFab::to_host`] and
    /// [`BaseFab::copy_from_host_fab`], or run a device kernel on
    /// [`BaseFab::as_mut_ptr`].
    ///
    /// [`BaseFab::to_host`]: crate::BaseFab::to_host
    /// [`BaseFab::copy_from_host_fab`]: crate::BaseFab::copy_from_host_fab
    /// [`BaseFab::as_mut_ptr`]: crate::BaseFab::as_mut_ptr
    NotHostAccessible(Device),
    /// A write to a fab imported from a `READ_ONLY` tensor.
    ReadOnly,
    /// A box that is not inside the fab's box.
    BoxOutside {
        /// The box asked for.
        bx: IndexBox,
        /// The fab's box.
        fab: IndexBox,
    },
    /// Source and destination boxes of different sizes.
    BoxSizeMismatch {
        /// The source box.
        src: IndexBox,
        /// The destination box.
        dst: IndexBox,
    },
    /// A component range past the fab's component count.
    ComponentsOutside {
        /// First component asked for.
        start: usize,
        /// One past the last component asked for.
        end: usize,
        /// The fab's component count.
        ncomp: usize,
    },
    /// A reduction with no identity (`min`, `max`) over an empty box.
    EmptyBox,
    /// A slice shorter than the box and components need.
    SliceTooShort {
        /// Elements needed.
        needed: usize,
        /// Elements given.
        found: usize,
    },
    /// The box and components need more elements than memory can address.
    TooLarge,
    /// The box leaves the `i32` index space (its `big_end + 1` or a length overflows
    /// `i32`).
    OutsideIndexSpace(amrex_box::IndexSpaceError),
    /// The arena failed.
    Arena(ArenaError),
    /// A DLPack export or import was refused.
    Dlpack(DlpackError),
}

impl fmt::Display for FabError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotHostAccessible(d) => write!(
                f,
                "the fab's memory is on {d}, which the host cannot dereference; copy it to a \
                 host fab (to_host) or run a device kernel"
            ),
            Self::ReadOnly => f.write_str("the fab was imported from a read-only tensor"),
            Self::BoxOutside { bx, fab } => write!(f, "box {bx} is not inside the fab's box {fab}"),
            Self::BoxSizeMismatch { src, dst } => write!(
                f,
                "source box {src} and destination box {dst} differ in size"
            ),
            Self::ComponentsOutside { start, end, ncomp } => write!(
                f,
                "components {start}..{end} asked for, but the fab has {ncomp}"
            ),
            Self::EmptyBox => f.write_str("min/max over an empty box"),
            Self::SliceTooShort { needed, found } => write!(
                f,
                "slice of {found} elements is shorter than the {needed} the box needs"
            ),
            Self::TooLarge => f.write_str("box and components exceed the addressable size"),
            Self::OutsideIndexSpace(e) => write!(f, "fab box: {e}"),
            Self::Arena(e) => write!(f, "fab storage: {e}"),
            Self::Dlpack(e) => write!(f, "fab DLPack: {e}"),
        }
    }
}

impl core::error::Error for FabError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Arena(e) => Some(e),
            Self::Dlpack(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ArenaError> for FabError {
    fn from(e: ArenaError) -> Self {
        Self::Arena(e)
    }
}

impl From<DlpackError> for FabError {
    fn from(e: DlpackError) -> Self {
        Self::Dlpack(e)
    }
}
