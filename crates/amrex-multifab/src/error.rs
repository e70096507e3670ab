//! [`FabArrayError`]: why an operation over a FabArray's boxes and ranks was refused.

use core::fmt;

use amrex_arena::ArenaError;
use amrex_basefab::FabError;
use amrex_box::IntVect;
use amrex_dlpack_core::Device;
use amrex_runtime::CommError;

/// Why a FabArray operation was refused: its layout, ghost width, ranks, messages or
/// memory spaces. A refusal about one box (a component range, a box outside a fab, the
/// memory of one fab) is [`FabArrayError::Fab`], the one-box error of `amrex-basefab`.
/// Each variant names what was asked and what the FabArrays have.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum FabArrayError {
    /// A one-box refusal: a component range past the FabArray's components, a region
    /// outside a fab, memory the host cannot reach, an arena failure, ...
    Fab(FabError),
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
    /// The communicator failed (a message of the wrong size, a rank out of range, the
    /// MPI library's failure).
    Comm {
        /// The operation.
        op: &'static str,
        /// What the communicator reported.
        source: CommError,
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
}

impl FabArrayError {
    /// A communicator's error in operation `op`: the agreement's verdict as
    /// [`FabArrayError::RanksDisagree`], anything else as [`FabArrayError::Comm`].
    #[must_use]
    pub fn comm(op: &'static str, e: CommError) -> Self {
        match e {
            CommError::RanksDisagree { .. } => Self::RanksDisagree { op },
            source => Self::Comm { op, source },
        }
    }

    /// The one-box error inside, if this is one.
    #[must_use]
    pub fn as_fab(&self) -> Option<&FabError> {
        match self {
            Self::Fab(e) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Display for FabArrayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Fab(e) => fmt::Display::fmt(e, f),
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
            Self::Comm { op, source } => write!(f, "{op}: communication failed: {source}"),
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
        }
    }
}

impl core::error::Error for FabArrayError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Fab(e) => Some(e),
            Self::Comm { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<FabError> for FabArrayError {
    fn from(e: FabError) -> Self {
        Self::Fab(e)
    }
}

impl From<ArenaError> for FabArrayError {
    fn from(e: ArenaError) -> Self {
        Self::Fab(FabError::Arena(e))
    }
}

/// `comps` resolved against `ncomp` components (`amrex_basefab::component_range`), as a
/// FabArray error.
pub(crate) fn component_range(
    comps: impl core::ops::RangeBounds<usize>,
    ncomp: usize,
) -> Result<core::ops::Range<usize>, FabArrayError> {
    amrex_basefab::component_range(comps, ncomp).map_err(FabArrayError::Fab)
}

const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<FabArrayError>();
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agreements_verdict_is_ranks_disagree() {
        assert_eq!(
            FabArrayError::comm("fill_boundary", CommError::RanksDisagree { op: "x" }),
            FabArrayError::RanksDisagree {
                op: "fill_boundary"
            }
        );
        let e = FabArrayError::comm("fill_boundary", CommError::Finalized);
        assert!(alloc::format!("{e}").contains("fill_boundary"), "{e}");
        let e: FabArrayError = FabError::ComponentsOutside {
            start: 0,
            end: 3,
            ncomp: 2,
        }
        .into();
        assert_eq!(
            e.as_fab(),
            Some(&FabError::ComponentsOutside {
                start: 0,
                end: 3,
                ncomp: 2
            })
        );
    }
}
