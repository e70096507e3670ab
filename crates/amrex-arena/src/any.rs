//! [`AnyArena`]: an arena chosen at run time, for code that cannot name the arena type at
//! compile time (the Python bindings' `arena="device"`).

use crate::kernels::{
    Binary, CopyOrder, KernelElement, Kernels, MemorySpace, Reduce, Region, Unary,
};
use crate::{Arena, ArenaError, Backend, ErrorKind, HostArena, MemoryKind};
use crate::{cuda, hip, level_zero};
use amrex_dlpack_core::Device;
use core::alloc::Layout;
use core::ptr::NonNull;

macro_rules! any_arena {
    ($($(#[doc = $doc:literal])* $(@cfg($c:meta))? $variant:ident($ty:ty) = $name:literal,)+) => {
        /// One of this crate's arenas, chosen at run time. Every call dispatches to the
        /// arena inside. Not [`HostAccessible`](crate::HostAccessible) even when the arena
        /// inside is: code on an `AnyArena` reaches memory through the bulk operations and
        /// the [`Kernels`], or asks [`Arena::host_accessible`] at run time.
        #[derive(Clone, Debug)]
        #[non_exhaustive]
        pub enum AnyArena {$(
            $(#[doc = $doc])*
            $(#[cfg($c)])?
            $variant($ty),
        )+}

        impl AnyArena {
            /// The backend's short name: `"host"`, `"cuda"`, `"hip"`, `"level_zero"` or
            /// `"fake"` (the test stand-in).
            pub fn backend_name(&self) -> &'static str {
                match self {$($(#[cfg($c)])? Self::$variant(_) => $name,)+}
            }
        }

        impl Arena for AnyArena {
            fn kind(&self) -> MemoryKind {
                match self {$($(#[cfg($c)])? Self::$variant(a) => a.kind(),)+}
            }
            fn device(&self) -> Device {
                match self {$($(#[cfg($c)])? Self::$variant(a) => a.device(),)+}
            }
            fn allocate_nonzero(&self, layout: Layout) -> Result<NonNull<u8>, ArenaError> {
                match self {$($(#[cfg($c)])? Self::$variant(a) => a.allocate_nonzero(layout),)+}
            }
            unsafe fn deallocate_nonzero(&self, ptr: NonNull<u8>, layout: Layout) {
                // SAFETY: forwarded obligations; clones of an `AnyArena` hold clones of
                // the same arena, so the pointer came from this variant's arena.
                match self {$($(#[cfg($c)])? Self::$variant(a) => unsafe { a.deallocate_nonzero(ptr, layout) },)+}
            }
            unsafe fn copy_from_host(&self, dst: NonNull<u8>, src: *const u8, len: usize) -> Result<(), ArenaError> {
                // SAFETY: forwarded obligations.
                match self {$($(#[cfg($c)])? Self::$variant(a) => unsafe { a.copy_from_host(dst, src, len) },)+}
            }
            unsafe fn copy_to_host(&self, dst: *mut u8, src: NonNull<u8>, len: usize) -> Result<(), ArenaError> {
                // SAFETY: forwarded obligations.
                match self {$($(#[cfg($c)])? Self::$variant(a) => unsafe { a.copy_to_host(dst, src, len) },)+}
            }
            unsafe fn copy_within(&self, dst: NonNull<u8>, src: NonNull<u8>, len: usize) -> Result<(), ArenaError> {
                // SAFETY: forwarded obligations.
                match self {$($(#[cfg($c)])? Self::$variant(a) => unsafe { a.copy_within(dst, src, len) },)+}
            }
            unsafe fn fill_bytes(&self, dst: NonNull<u8>, value: u8, len: usize) -> Result<(), ArenaError> {
                // SAFETY: forwarded obligations.
                match self {$($(#[cfg($c)])? Self::$variant(a) => unsafe { a.fill_bytes(dst, value, len) },)+}
            }
            fn synchronize(&self) -> Result<(), ArenaError> {
                match self {$($(#[cfg($c)])? Self::$variant(a) => a.synchronize(),)+}
            }
        }

        impl Kernels for AnyArena {
            fn memory_space(&self) -> MemorySpace {
                match self {$($(#[cfg($c)])? Self::$variant(a) => a.memory_space(),)+}
            }
            fn host_loops(&self) -> bool {
                match self {$($(#[cfg($c)])? Self::$variant(a) => a.host_loops(),)+}
            }
            unsafe fn apply<T: KernelElement>(&self, dst: Region, op: Unary<T>) -> Result<(), ArenaError> {
                // SAFETY: forwarded obligations.
                match self {$($(#[cfg($c)])? Self::$variant(a) => unsafe { a.apply(dst, op) },)+}
            }
            unsafe fn combine<T: KernelElement>(&self, dst: Region, src: Region, op: Binary<T>) -> Result<(), ArenaError> {
                // SAFETY: forwarded obligations.
                match self {$($(#[cfg($c)])? Self::$variant(a) => unsafe { a.combine(dst, src, op) },)+}
            }
            unsafe fn reduce<T: KernelElement>(&self, src: Region, op: Reduce) -> Result<f64, ArenaError> {
                // SAFETY: forwarded obligations.
                match self {$($(#[cfg($c)])? Self::$variant(a) => unsafe { a.reduce::<T>(src, op) },)+}
            }
            unsafe fn dot<T: KernelElement>(&self, x: Region, y: Region) -> Result<f64, ArenaError> {
                // SAFETY: forwarded obligations.
                match self {$($(#[cfg($c)])? Self::$variant(a) => unsafe { a.dot::<T>(x, y) },)+}
            }
            unsafe fn copy_regions<T: KernelElement>(&self, pairs: &[(Region, Region)], order: CopyOrder) -> Result<(), ArenaError> {
                // SAFETY: forwarded obligations.
                match self {$($(#[cfg($c)])? Self::$variant(a) => unsafe { a.copy_regions::<T>(pairs, order) },)+}
            }
        }
    };
}

any_arena! {
    /// The global allocator.
    Host(HostArena) = "host",
    /// CUDA pinned host memory.
    CudaPinned(cuda::CudaPinnedArena) = "cuda",
    /// CUDA device memory.
    CudaDevice(cuda::CudaDeviceArena) = "cuda",
    /// CUDA managed memory.
    CudaManaged(cuda::CudaManagedArena) = "cuda",
    /// HIP pinned host memory.
    HipPinned(hip::HipPinnedArena) = "hip",
    /// HIP device memory.
    HipDevice(hip::HipDeviceArena) = "hip",
    /// HIP managed memory.
    HipManaged(hip::HipManagedArena) = "hip",
    /// Level Zero host USM.
    ZeHost(level_zero::ZeHostArena) = "level_zero",
    /// Level Zero device USM.
    ZeDevice(level_zero::ZeDeviceArena) = "level_zero",
    /// Level Zero shared USM.
    ZeShared(level_zero::ZeSharedArena) = "level_zero",
    /// The host-backed stand-in for device memory (feature `testing`).
    @cfg(feature = "testing")
    FakeDevice(crate::testing::FakeDeviceArena) = "fake",
}

impl Default for AnyArena {
    fn default() -> Self {
        Self::Host(HostArena)
    }
}

impl AnyArena {
    /// The arena of `kind` on device `ordinal` of the first GPU backend that has one:
    /// CUDA, then HIP, then Level Zero (as pyAMReX's `The_Device_Arena()` is the arena of
    /// the backend AMReX was built for). [`MemoryKind::Host`] is the host arena.
    ///
    /// # Errors
    /// When no backend has it: the first backend's error that is not
    /// [`ErrorKind::NotCompiled`] (so a CUDA build on a machine without a driver says so),
    /// else `NotCompiled(Cuda)`.
    pub fn new(kind: MemoryKind, ordinal: i32) -> Result<Self, ArenaError> {
        type Ctor = fn(i32) -> Result<AnyArena, ArenaError>;
        let ctors: [Ctor; 3] = match kind {
            MemoryKind::Host => return Ok(Self::Host(HostArena)),
            MemoryKind::Pinned => [
                |o| cuda::CudaPinnedArena::new(o).map(Self::CudaPinned),
                |o| hip::HipPinnedArena::new(o).map(Self::HipPinned),
                |o| level_zero::ZeHostArena::new(o).map(Self::ZeHost),
            ],
            MemoryKind::Device => [
                |o| cuda::CudaDeviceArena::new(o).map(Self::CudaDevice),
                |o| hip::HipDeviceArena::new(o).map(Self::HipDevice),
                |o| level_zero::ZeDeviceArena::new(o).map(Self::ZeDevice),
            ],
            MemoryKind::Managed => [
                |o| cuda::CudaManagedArena::new(o).map(Self::CudaManaged),
                |o| hip::HipManagedArena::new(o).map(Self::HipManaged),
                |o| level_zero::ZeSharedArena::new(o).map(Self::ZeShared),
            ],
        };
        let mut first_real: Option<ArenaError> = None;
        for ctor in ctors {
            match ctor(ordinal) {
                Ok(a) => return Ok(a),
                Err(e) if matches!(e.kind(), ErrorKind::NotCompiled(_)) => {}
                Err(e) => {
                    first_real.get_or_insert(e);
                }
            }
        }
        Err(first_real.unwrap_or(ArenaError::not_compiled(Backend::Cuda)))
    }
}

impl AnyArena {
    /// Makes the consumer's stream wait for the work this arena's kernels queued, as the
    /// DLPack `__dlpack__(stream=...)` rule asks of a producer: on CUDA memory, `stream`
    /// is a `CUstream` handle, or `1` / `2` (the legacy and per-thread default streams,
    /// which need nothing). Host memory needs nothing; the other backends' kernels do not
    /// exist yet, so they queue nothing to wait for.
    ///
    /// # Safety
    /// On CUDA memory `stream` is `1`, `2` or a live stream of the device's primary
    /// context.
    ///
    /// # Errors
    /// The driver's failure.
    pub unsafe fn wait_on_stream(&self, stream: usize) -> Result<(), ArenaError> {
        match self {
            // Pinned memory is worked on by host loops: nothing is queued on it.
            Self::CudaDevice(_) | Self::CudaManaged(_) => {
                // SAFETY: the caller's obligation.
                unsafe { cuda::wait_on_stream(self.device().device_id, stream) }
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::AnyArena;
    use crate::kernels::{Kernels, Reduce, Region, Unary};
    use crate::{Arena, MemoryKind};
    use core::alloc::Layout;

    #[test]
    fn host_is_always_there_and_gpus_fail_cleanly() {
        let a = AnyArena::new(MemoryKind::Host, 0).unwrap();
        assert_eq!((a.kind(), a.backend_name()), (MemoryKind::Host, "host"));
        for kind in [MemoryKind::Device, MemoryKind::Pinned, MemoryKind::Managed] {
            // On a machine without a GPU this is an error value; with one, an arena of
            // the kind asked for.
            match AnyArena::new(kind, 0) {
                Ok(a) => assert_eq!(a.kind(), kind),
                Err(e) => assert!(!std::format!("{e}").is_empty()),
            }
        }
    }

    #[test]
    #[cfg(feature = "testing")]
    fn dispatches_to_the_arena_inside() {
        let a = AnyArena::FakeDevice(crate::testing::FakeDeviceArena);
        assert_eq!((a.kind(), a.backend_name()), (MemoryKind::Device, "fake"));
        let layout = Layout::array::<f64>(6).unwrap();
        let p = a.allocate(layout).unwrap();
        let r = Region {
            ptr: p,
            len: [3, 2, 1, 1],
            stride: [3, 6, 6],
        };
        // SAFETY: `r` covers the 6 doubles of `p`, which nothing else uses.
        unsafe { a.apply(r, Unary::Set(2.5f64)).unwrap() };
        // SAFETY: as above.
        let s = unsafe { a.reduce::<f64>(r, Reduce::Sum).unwrap() };
        assert_eq!(s, 15.0);
        // SAFETY: `p` came from `allocate(layout)` and is no longer used.
        unsafe { a.deallocate(p, layout) };
    }
}
