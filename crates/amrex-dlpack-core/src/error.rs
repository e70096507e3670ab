//! The error type: one named kind per refusal, each saying what was expected and found.

use crate::{DataType, Device};
use core::fmt;

/// Why a DLPack export or import was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A pointer that must not be NULL was NULL (the managed tensor, or the shape).
    NullPointer(&'static str),
    /// A versioned tensor with a major version other than ours (its deleter was called).
    UnsupportedVersion {
        /// The producer's major version.
        major: u32,
        /// The producer's minor version.
        minor: u32,
    },
    /// `ndim` is negative.
    NegativeRank(i32),
    /// The rank is not what the target type can hold.
    RankMismatch {
        /// What the target accepts (for ranges, the largest).
        expected: i32,
        /// What the tensor has.
        found: i32,
    },
    /// An extent is negative.
    NegativeExtent {
        /// The axis.
        axis: usize,
        /// The extent.
        extent: i64,
    },
    /// An extent differs from what the target requires.
    ShapeMismatch {
        /// The axis.
        axis: usize,
        /// The required extent.
        expected: i64,
        /// The tensor's extent.
        found: i64,
    },
    /// The number of elements, or the memory the strides reach, overflows the address space.
    SpanOverflow,
    /// `data` is NULL although the tensor has elements.
    NullData,
    /// The dtype is not the one the target holds.
    DtypeMismatch {
        /// The target's dtype.
        expected: DataType,
        /// The tensor's dtype.
        found: DataType,
    },
    /// A dtype this crate cannot describe in memory (unknown code, bad bit width).
    UnsupportedDtype(DataType),
    /// `lanes != 1`.
    Lanes(u16),
    /// A device type the header does not define.
    UnknownDeviceType(i32),
    /// The tensor is on another device than the target requires.
    DeviceMismatch {
        /// The required device.
        expected: Device,
        /// The tensor's device.
        found: Device,
    },
    /// Host access was asked for memory the CPU cannot dereference.
    NotHostAccessible(Device),
    /// The first element is not aligned for the element type.
    Misaligned {
        /// The first element's address.
        address: usize,
        /// The alignment the element type needs.
        align: usize,
    },
    /// Mutable access was asked for a tensor flagged `READ_ONLY`.
    ReadOnly,
    /// A stride the target needs to be 1 is not.
    NonUnitStride {
        /// The axis.
        axis: usize,
        /// The stride found.
        stride: i64,
    },
    /// A negative stride the target cannot express.
    NegativeStride {
        /// The axis.
        axis: usize,
        /// The stride found.
        stride: i64,
    },
    /// The target needs a layout the tensor does not have (for example compact).
    NotContiguous,
    /// A stride differs from the one the target's fixed layout needs.
    StrideMismatch {
        /// The axis.
        axis: usize,
        /// The stride the target needs.
        expected: i64,
        /// The stride found.
        found: i64,
    },
    /// Two indices reach the same element (a zero stride on a long axis, or strides that
    /// interleave), which a writable view must not allow.
    OverlappingStrides,
    /// Lengths that must agree do not (for example `shape` vs `strides` in an export).
    LengthMismatch {
        /// The required length.
        expected: usize,
        /// The length found.
        found: usize,
    },
    /// The capsule was already consumed (`used_dltensor`), or is not a DLPack capsule.
    BadCapsule,
    /// An allocation failed.
    AllocationFailed,
    /// The box a tensor's extents describe from the requested start (or a box grown by a
    /// ghost width) leaves the `i32` index space of AMReX indices: in direction `dir`, the
    /// indices `lo .. end` (end exclusive) do not fit, or the length `end - lo` does not.
    OutsideIndexSpace {
        /// The direction (0 = `i`, 1 = `j`, 2 = `k`).
        dir: usize,
        /// The first index.
        lo: i64,
        /// One past the last index.
        end: i64,
    },
    /// Tensors handed over together to be distinct (one per box of a `FabArray`) share
    /// memory.
    AliasedTensors,
    /// A ghost width given with an import is negative.
    NegativeGhost {
        /// The direction.
        dir: usize,
        /// The width.
        ghost: i32,
    },
    /// Anything else, with a short description.
    Unsupported(&'static str),
}

/// A refused DLPack operation. See [`ErrorKind`] for the cases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DlpackError {
    kind: ErrorKind,
}

impl DlpackError {
    /// An error of the given kind.
    pub const fn new(kind: ErrorKind) -> Self {
        Self { kind }
    }

    /// What went wrong.
    pub const fn kind(&self) -> ErrorKind {
        self.kind
    }
}

impl From<ErrorKind> for DlpackError {
    fn from(kind: ErrorKind) -> Self {
        Self::new(kind)
    }
}

impl fmt::Display for DlpackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ErrorKind::NullPointer(what) => write!(f, "DLPack: {what} is NULL"),
            ErrorKind::UnsupportedVersion { major, minor } => write!(
                f,
                "DLPack: expected major version {}, got {major}.{minor}",
                crate::ffi::DLPACK_MAJOR_VERSION
            ),
            ErrorKind::NegativeRank(n) => write!(f, "DLPack: expected ndim >= 0, got {n}"),
            ErrorKind::RankMismatch { expected, found } => {
                write!(f, "DLPack: expected {expected} dimensions, got {found}")
            }
            ErrorKind::NegativeExtent { axis, extent } => {
                write!(
                    f,
                    "DLPack: expected a non-negative extent on axis {axis}, got {extent}"
                )
            }
            ErrorKind::ShapeMismatch {
                axis,
                expected,
                found,
            } => {
                write!(
                    f,
                    "DLPack: expected extent {expected} on axis {axis}, got {found}"
                )
            }
            ErrorKind::SpanOverflow => {
                write!(
                    f,
                    "DLPack: the extents and strides reach past the address space"
                )
            }
            ErrorKind::NullData => {
                write!(
                    f,
                    "DLPack: expected a data pointer for a non-empty tensor, got NULL"
                )
            }
            ErrorKind::DtypeMismatch { expected, found } => {
                write!(f, "DLPack: expected dtype {expected}, got {found}")
            }
            ErrorKind::UnsupportedDtype(dt) => write!(f, "DLPack: unsupported dtype {dt}"),
            ErrorKind::Lanes(l) => write!(f, "DLPack: expected lanes == 1, got {l}"),
            ErrorKind::UnknownDeviceType(t) => write!(f, "DLPack: unknown device type {t}"),
            ErrorKind::DeviceMismatch { expected, found } => {
                write!(f, "DLPack: expected device {expected}, got {found}")
            }
            ErrorKind::NotHostAccessible(d) => {
                write!(f, "DLPack: expected host-accessible memory, got {d}")
            }
            ErrorKind::Misaligned { address, align } => write!(
                f,
                "DLPack: expected the first element aligned to {align} bytes, got address {address:#x}"
            ),
            ErrorKind::ReadOnly => {
                write!(
                    f,
                    "DLPack: expected a writable tensor, got one flagged READ_ONLY"
                )
            }
            ErrorKind::NonUnitStride { axis, stride } => {
                write!(f, "DLPack: expected stride 1 on axis {axis}, got {stride}")
            }
            ErrorKind::NegativeStride { axis, stride } => write!(
                f,
                "DLPack: expected a non-negative stride on axis {axis}, got {stride}"
            ),
            ErrorKind::NotContiguous => write!(f, "DLPack: expected a contiguous tensor"),
            ErrorKind::StrideMismatch {
                axis,
                expected,
                found,
            } => {
                write!(
                    f,
                    "DLPack: expected stride {expected} on axis {axis}, got {found}"
                )
            }
            ErrorKind::OverlappingStrides => write!(
                f,
                "DLPack: expected strides that give every index its own element, got overlapping ones"
            ),
            ErrorKind::LengthMismatch { expected, found } => {
                write!(f, "DLPack: expected length {expected}, got {found}")
            }
            ErrorKind::BadCapsule => write!(
                f,
                "DLPack: expected an unused 'dltensor' or 'dltensor_versioned' capsule"
            ),
            ErrorKind::AllocationFailed => write!(f, "DLPack: allocation failed"),
            ErrorKind::OutsideIndexSpace { dir, lo, end } => write!(
                f,
                "DLPack: expected a box inside the i32 index space, got indices {lo} .. {end} \
                 (end exclusive, length {}) in direction {dir}",
                i128::from(end) - i128::from(lo)
            ),
            ErrorKind::AliasedTensors => write!(
                f,
                "DLPack: expected tensors over disjoint memory, got two that share elements"
            ),
            ErrorKind::NegativeGhost { dir, ghost } => write!(
                f,
                "DLPack: expected a ghost width >= 0, got {ghost} in direction {dir}"
            ),
            ErrorKind::Unsupported(what) => write!(f, "DLPack: unsupported: {what}"),
        }
    }
}

impl core::error::Error for DlpackError {}
