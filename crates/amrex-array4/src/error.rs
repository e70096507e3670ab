//! Errors of the safe constructors.

use core::fmt;

/// Why a safe [`Array4`](crate::Array4) constructor refused its arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Array4Error {
    /// The slice holds fewer elements than the box and component count need.
    SliceTooShort {
        /// Elements needed: `num_pts * ncomp`.
        needed: usize,
        /// Elements in the slice.
        found: usize,
    },
    /// The number of elements does not fit in memory (`usize`/`isize` overflow).
    TooLarge,
    /// The box leaves the `i32` index space (its `big_end + 1` or a length overflows
    /// `i32`).
    OutsideIndexSpace(amrex_box::IndexSpaceError),
}

impl fmt::Display for Array4Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::SliceTooShort { needed, found } => write!(
                f,
                "Array4: the slice has {found} elements but the box and components need {needed}"
            ),
            Self::TooLarge => write!(f, "Array4: the box and components do not fit in memory"),
            Self::OutsideIndexSpace(e) => write!(f, "Array4: {e}"),
        }
    }
}

impl core::error::Error for Array4Error {}
