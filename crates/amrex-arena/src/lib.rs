//! Memory resources ("arenas") for host, pinned, device and managed memory, with GPU
//! backends for CUDA, ROCm/HIP and Level Zero loaded at run time.
//!
//! ```
//! use amrex_arena::{Arena, HostArena, MemoryKind};
//! use core::alloc::Layout;
//!
//! let arena = HostArena;
//! let layout = Layout::array::<f64>(4).unwrap();
//! let p = arena.allocate(layout)?;
//! let data = [1.0f64, 2.0, 3.0, 4.0];
//! // SAFETY: `p` holds 32 bytes from this arena; `data` is 32 readable bytes elsewhere.
//! unsafe { arena.copy_from_host(p, data.as_ptr().cast(), 32)? };
//! let mut back = [0.0f64; 4];
//! // SAFETY: as above, in the other direction.
//! unsafe { arena.copy_to_host(back.as_mut_ptr().cast(), p, 32)? };
//! assert_eq!(back, data);
//! assert_eq!(arena.kind(), MemoryKind::Host);
//! // SAFETY: `p` came from `allocate(layout)` and is no longer used.
//! unsafe { arena.deallocate(p, layout) };
//! # Ok::<(), amrex_arena::ArenaError>(())
//! ```
//!
//! # Feature flags
//! - `std` (default): `std` support; required by every GPU backend.
//! - `cuda`: CUDA device, pinned and managed arenas through `cudarc` (driver API,
//!   loaded at run time).
//! - `hip`: HIP device, pinned and managed arenas through our own bindings to
//!   `libamdhip64`, loaded at run time.
//! - `level-zero`: Level Zero device, shared and host USM arenas through `level-zero-sys`,
//!   loaded at run time.
#![no_std]
#![doc(test(attr(deny(warnings))))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod arena;
#[cfg(not(all(feature = "cuda", feature = "hip", feature = "level-zero")))]
mod dummy;
mod error;
mod host;

pub use arena::{Arena, HostAccessible, MemoryKind, copy_between, dangling};
pub use error::{ArenaError, Backend, ErrorKind};
pub use host::HostArena;

#[cfg(any(feature = "cuda", feature = "hip", feature = "level-zero"))]
#[path = "backend/common.rs"]
mod backend_common;
#[cfg(any(feature = "cuda", feature = "hip", feature = "level-zero"))]
use backend_common as common;

/// CUDA arenas (feature `cuda`).
#[cfg(feature = "cuda")]
#[path = "backend/cuda.rs"]
pub mod cuda;

/// CUDA arenas (feature `cuda`, off in this build).
#[cfg(not(feature = "cuda"))]
pub mod cuda {
    crate::dummy::dummy_arenas!(crate::Backend::Cuda;
        /// CUDA device memory (`kDLCUDA`).
        CudaDeviceArena: crate::MemoryKind::Device,
        /// CUDA pinned host memory (`kDLCUDAHost`).
        CudaPinnedArena: crate::MemoryKind::Pinned,
        /// CUDA managed memory (`kDLCUDAManaged`).
        CudaManagedArena: crate::MemoryKind::Managed,
    );
}

/// HIP arenas (feature `hip`).
#[cfg(feature = "hip")]
#[path = "backend/hip.rs"]
pub mod hip;

/// HIP arenas (feature `hip`, off in this build).
#[cfg(not(feature = "hip"))]
pub mod hip {
    crate::dummy::dummy_arenas!(crate::Backend::Hip;
        /// HIP device memory (`kDLROCM`).
        HipDeviceArena: crate::MemoryKind::Device,
        /// HIP pinned host memory (`kDLROCMHost`).
        HipPinnedArena: crate::MemoryKind::Pinned,
        /// HIP managed memory (`kDLROCM`).
        HipManagedArena: crate::MemoryKind::Managed,
    );

    /// Always fails: the backend is not compiled in.
    ///
    /// # Errors
    /// [`ErrorKind::NotCompiled`](crate::ErrorKind::NotCompiled).
    pub fn runtime_version() -> Result<i32, crate::ArenaError> {
        Err(crate::ArenaError::not_compiled(crate::Backend::Hip))
    }
}

/// Level Zero arenas (feature `level-zero`).
#[cfg(feature = "level-zero")]
#[path = "backend/level_zero.rs"]
pub mod level_zero;

/// Level Zero arenas (feature `level-zero`, off in this build).
#[cfg(not(feature = "level-zero"))]
pub mod level_zero {
    crate::dummy::dummy_arenas!(crate::Backend::LevelZero;
        /// Level Zero device USM (`kDLOneAPI`).
        ZeDeviceArena: crate::MemoryKind::Device,
        /// Level Zero shared USM (`kDLOneAPI`).
        ZeSharedArena: crate::MemoryKind::Managed,
        /// Level Zero host USM (`kDLCPU`).
        ZeHostArena: crate::MemoryKind::Pinned,
    );
}
