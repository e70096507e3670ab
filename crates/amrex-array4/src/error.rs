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
    /// The number of elements does not fit in memory (`usize`/`isize` overflow), or
    /// the box's `big_end + 1` overflows `i32`.
    TooLarge,
}

impl fmt::Display for Array4Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::SliceTooShort { needed, found } => write!(
                f,
                "Array4: the slice has {found} elements but the box and components need {needed}"
            ),
            Self::TooLarge => write!(f, "Array4: the box and components do not fit in memory"),
        }
    }
}

impl core::error::Error for Array4Error {}
