//! [`FabError`]: why a fab operation was refused.

use amrex_arena::ArenaError;
use amrex_box::{IndexBox, IntVect};
use amrex_dlpack_core::{Device, DlpackError};
use core::fmt;

/// Why a [`BaseFab`](crate::BaseFab) or FabArray operation was refused. Each variant
/// names what was asked and what the container has.
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
    /// A FabArray operation asked for more ghost cells than a FabArray has (or a
    /// negative width).
    GhostOutside {
        /// The ghost width asked for.
        ng: IntVect,
        /// The FabArray's ghost width.
        ngrow: IntVect,
    },
    /// FabArrays combined element by element have different BoxArrays or distributions.
    LayoutMismatch,
    /// The ranks disagree on what should be one collective operation: its FabArrays'
    /// BoxArrays or maps differ between ranks, or its arguments do (a component range, a
    /// ghost width, a region, a reduction), or they called different operations. Every
    /// rank gets this error, and no rank waits for a message that will not come.
    RanksDisagree {
        /// The operation (`"fill_boundary"`, `"reduction"`, ...).
        op: &'static str,
    },
    /// Another rank refused the arguments of a collective operation (or could not
    /// allocate what it needed), so every rank stops; that rank returns the specific
    /// error itself.
    RefusedOnOtherRank {
        /// The operation.
        op: &'static str,
        /// The rank that refused, where it is known.
        rank: Option<usize>,
    },
    /// A collective operation's plan exchanges messages, but this FabArray cannot send
    /// them: it is another rank's part, or its map does not span its communicator (a map
    /// made with `with_ranks` for inspection).
    CannotExchange {
        /// The operation.
        op: &'static str,
        /// The rank whose part this FabArray is.
        part_of_rank: usize,
        /// The ranks of the map.
        map_ranks: usize,
        /// This process's rank in the FabArray's communicator.
        comm_rank: usize,
        /// The communicator's size.
        comm_size: usize,
    },
    /// `fill_boundary_nowait` was called while a FillBoundary of the same FabArray is in
    /// flight: call `fill_boundary_finish` first.
    FillInFlight,
    /// The two FabArrays of an operation live on different communicators (or are parts
    /// of different ranks).
    DifferentCommunicators {
        /// The operation.
        op: &'static str,
    },
    /// Sending or receiving a message failed (a message of the wrong size, a rank out of
    /// range, the MPI library's failure); `detail` is the communicator's error.
    Exchange {
        /// The operation.
        op: &'static str,
        /// What the communicator reported.
        detail: alloc::string::String,
    },
    /// A rank's gathered contribution to a collective does not have the shape the
    /// others agreed on (a corrupt or foreign message).
    MalformedContribution {
        /// The operation.
        op: &'static str,
        /// The rank whose contribution is wrong.
        rank: usize,
    },
    /// Operations on device (or managed) memory run in one process for now, and this
    /// FabArray's communicator has more ranks.
    DeviceNeedsOneProcess {
        /// The operation.
        op: &'static str,
        /// The communicator's size.
        ranks: usize,
    },
    /// The operands live in different memory spaces (host and device, two devices, or
    /// two arenas whose kernels cannot reach each other's memory): copy one of them
    /// first.
    DifferentMemory {
        /// The operation.
        op: &'static str,
        /// The destination's device.
        dst: Device,
        /// The other operand's device.
        src: Device,
    },
    /// The operation has no kernel for memory the host cannot loop over (device and
    /// managed memory): copy to a host FabArray (`to_host`) for it.
    NoKernel {
        /// The operation.
        op: &'static str,
        /// The memory's device.
        device: Device,
    },
    /// A buffer whose length is not the one the region and components need.
    WrongLength {
        /// Elements needed.
        needed: usize,
        /// Elements given.
        found: usize,
    },
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
            Self::GhostOutside { ng, ngrow } => write!(
                f,
                "ghost width {ng} asked for, but the FabArray has {ngrow} (and widths must \
                 not be negative)"
            ),
            Self::LayoutMismatch => {
                f.write_str("the FabArrays have different BoxArrays or DistributionMappings")
            }
            Self::RanksDisagree { op } => write!(
                f,
                "{op}: the ranks disagree on the BoxArray, the DistributionMapping or the \
                 arguments of what should be one collective operation"
            ),
            Self::RefusedOnOtherRank { op, rank: Some(r) } => {
                write!(f, "{op}: rank {r} refused the arguments")
            }
            Self::RefusedOnOtherRank { op, rank: None } => {
                write!(
                    f,
                    "{op}: another rank refused the arguments or could not allocate"
                )
            }
            Self::CannotExchange {
                op,
                part_of_rank,
                map_ranks,
                comm_rank,
                comm_size,
            } => write!(
                f,
                "{op}: the plan exchanges messages, but this FabArray is rank \
                 {part_of_rank}'s part of a map over {map_ranks} ranks and its communicator \
                 has {comm_size} (rank {comm_rank}); build the map with \
                 DistributionMapping::new or ::on"
            ),
            Self::FillInFlight => f.write_str(
                "fill_boundary_nowait: a FillBoundary of this FabArray is in flight; call \
                 fill_boundary_finish first",
            ),
            Self::DifferentCommunicators { op } => write!(
                f,
                "{op}: the two FabArrays do not live on one communicator (or are parts of \
                 different ranks)"
            ),
            Self::Exchange { op, detail } => write!(f, "{op}: message exchange failed: {detail}"),
            Self::MalformedContribution { op, rank } => write!(
                f,
                "{op}: rank {rank}'s contribution does not have the agreed shape"
            ),
            Self::DeviceNeedsOneProcess { op, ranks } => write!(
                f,
                "{op}: FabArrays in device or managed memory run in one process for now, \
                 and this one's communicator has {ranks} ranks"
            ),
            Self::DifferentMemory { op, dst, src } => write!(
                f,
                "{op}: the destination's memory (on {dst}) and the other operand's (on \
                 {src}) are not one memory space (another arena or kind of memory); copy \
                 one of them first"
            ),
            Self::NoKernel { op, device } => write!(
                f,
                "{op} has no kernel for this device memory (on {device}; device and managed \
                 memory run kernels only): copy the FabArray to host memory with to_host() \
                 for it"
            ),
            Self::WrongLength { needed, found } => write!(
                f,
                "buffer of {found} elements given where the region needs {needed}"
            ),
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
