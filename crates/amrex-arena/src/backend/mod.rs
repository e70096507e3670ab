//! The GPU backends, one module each. A backend whose feature is on is the real arena
//! over its runtime (loaded at run time); with the feature off the module keeps the same
//! type names, and every constructor returns
//! [`ErrorKind::NotCompiled`](crate::ErrorKind::NotCompiled) (see `dummy`).
//!
//! Each backend is a safe layer over raw bindings: `cudarc`'s driver API for CUDA, the
//! `level-zero-sys` crate for Level Zero, and `hip::sys` (this crate) for HIP.

#[cfg(any(feature = "cuda", feature = "hip", feature = "level-zero"))]
mod common;
#[cfg(not(all(feature = "cuda", feature = "hip", feature = "level-zero")))]
mod dummy;

#[cfg(feature = "cuda")]
pub mod cuda;

/// CUDA arenas (feature `cuda`, off in this build).
#[cfg(not(feature = "cuda"))]
pub mod cuda {
    super::dummy::dummy_arenas!(crate::Backend::Cuda;
        /// CUDA device memory (`kDLCUDA`).
        CudaDeviceArena: crate::MemoryKind::Device,
        /// CUDA pinned host memory (`kDLCUDAHost`).
        CudaPinnedArena: crate::MemoryKind::Pinned,
        /// CUDA managed memory (`kDLCUDAManaged`).
        CudaManagedArena: crate::MemoryKind::Managed,
    );

    /// Always fails: the backend is not compiled in.
    ///
    /// # Safety
    /// None needed; the signature matches the real backend's.
    ///
    /// # Errors
    /// [`ErrorKind::NotCompiled`](crate::ErrorKind::NotCompiled).
    pub unsafe fn wait_on_stream(ordinal: i32, stream: usize) -> Result<(), crate::ArenaError> {
        let _ = (ordinal, stream);
        Err(crate::ArenaError::not_compiled(crate::Backend::Cuda))
    }

    /// Always fails: the backend is not compiled in.
    ///
    /// # Errors
    /// [`ErrorKind::NotCompiled`](crate::ErrorKind::NotCompiled).
    pub fn nvrtc_version() -> Result<(i32, i32), crate::ArenaError> {
        Err(crate::ArenaError::not_compiled(crate::Backend::Cuda))
    }
}

#[cfg(feature = "hip")]
pub mod hip;

/// HIP arenas (feature `hip`, off in this build).
#[cfg(not(feature = "hip"))]
pub mod hip {
    super::dummy::dummy_arenas!(crate::Backend::Hip;
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

#[cfg(feature = "level-zero")]
pub mod level_zero;

/// Level Zero arenas (feature `level-zero`, off in this build).
#[cfg(not(feature = "level-zero"))]
pub mod level_zero {
    super::dummy::dummy_arenas!(crate::Backend::LevelZero;
        /// Level Zero device USM (`kDLOneAPI`).
        ZeDeviceArena: crate::MemoryKind::Device,
        /// Level Zero shared USM (`kDLOneAPI`).
        ZeSharedArena: crate::MemoryKind::Managed,
        /// Level Zero host USM (`kDLCPU`).
        ZeHostArena: crate::MemoryKind::Pinned,
    );
}
