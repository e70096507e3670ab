//! Test support (feature `testing`): arenas for exercising containers without a GPU.
//!
//! Not for production use. Enable it only as a dev-dependency:
//! `amrex-arena = { workspace = true, features = ["testing"] }`.

use crate::kernels::{Binary, CopyOrder, KernelElement, Kernels, Reduce, Region, Unary, host};
use crate::{Arena, ArenaError, ErrorKind, HostArena, MemoryKind};
use amrex_dlpack_core::{DLDeviceType, Device};
use core::alloc::Layout;
use core::ptr::NonNull;

/// Shift between the real host allocation and the address handed out.
///
/// Under Miri the shift is 0: containers offset device pointers with `ptr::add` (as they
/// must for real device pointers, which carry no host provenance), and Miri would flag
/// that offset on a shifted host pointer before any dereference could be checked.
const SHIFT: usize = if cfg!(miri) { 0 } else { 1 << 44 };

/// A stand-in "device" arena: host memory behind pointers shifted far away, so any host
/// dereference of "device" memory faults, while the bulk operations shift back and work.
///
/// It reports [`MemoryKind::Device`] on `kDLCUDA` device 0, and is not
/// [`HostAccessible`](crate::HostAccessible). Test support only.
#[derive(Clone, Copy, Debug, Default)]
pub struct FakeDeviceArena;

fn hide(p: NonNull<u8>) -> NonNull<u8> {
    NonNull::new(p.as_ptr().wrapping_add(SHIFT)).expect("shifted pointer is non-null")
}

fn show(p: NonNull<u8>) -> *mut u8 {
    p.as_ptr().wrapping_sub(SHIFT)
}

impl Arena for FakeDeviceArena {
    fn kind(&self) -> MemoryKind {
        MemoryKind::Device
    }
    fn device(&self) -> Device {
        Device::new(DLDeviceType::CUDA, 0)
    }
    fn allocate_nonzero(&self, layout: Layout) -> Result<NonNull<u8>, ArenaError> {
        HostArena.allocate_nonzero(layout).map(hide)
    }
    unsafe fn deallocate_nonzero(&self, ptr: NonNull<u8>, layout: Layout) {
        let host = NonNull::new(show(ptr)).expect("unshifted pointer is non-null");
        // SAFETY: `ptr` was handed out by `allocate_nonzero`, shifted; shifting back gives
        // the host allocation.
        unsafe { HostArena.deallocate_nonzero(host, layout) }
    }
    unsafe fn copy_from_host(
        &self,
        dst: NonNull<u8>,
        src: *const u8,
        len: usize,
    ) -> Result<(), ArenaError> {
        // SAFETY: caller obligations, on the unshifted host allocation.
        unsafe { core::ptr::copy_nonoverlapping(src, show(dst), len) };
        Ok(())
    }
    unsafe fn copy_to_host(
        &self,
        dst: *mut u8,
        src: NonNull<u8>,
        len: usize,
    ) -> Result<(), ArenaError> {
        // SAFETY: as above.
        unsafe { core::ptr::copy_nonoverlapping(show(src), dst, len) };
        Ok(())
    }
    unsafe fn copy_within(
        &self,
        dst: NonNull<u8>,
        src: NonNull<u8>,
        len: usize,
    ) -> Result<(), ArenaError> {
        // SAFETY: as above.
        unsafe { core::ptr::copy_nonoverlapping(show(src), show(dst), len) };
        Ok(())
    }
    unsafe fn fill_bytes(&self, dst: NonNull<u8>, value: u8, len: usize) -> Result<(), ArenaError> {
        // SAFETY: as above.
        unsafe { core::ptr::write_bytes(show(dst), value, len) };
        Ok(())
    }
    fn synchronize(&self) -> Result<(), ArenaError> {
        Ok(())
    }
}

fn shown(r: Region) -> Region {
    r.at(NonNull::new(show(r.ptr)).expect("unshifted pointer is non-null"))
}

/// The host loops on the unshifted memory, so containers' device paths (regions built
/// from device pointers, one kernel call per box) run without a GPU.
impl Kernels for FakeDeviceArena {
    unsafe fn apply<T: KernelElement>(&self, dst: Region, op: Unary<T>) -> Result<(), ArenaError> {
        // SAFETY: forwarded obligations; unshifting gives the host allocation.
        unsafe { host::apply(shown(dst), op) }
    }
    unsafe fn combine<T: KernelElement>(
        &self,
        dst: Region,
        src: Region,
        op: Binary<T>,
    ) -> Result<(), ArenaError> {
        // SAFETY: as above.
        unsafe { host::combine(shown(dst), shown(src), op) }
    }
    unsafe fn reduce<T: KernelElement>(&self, src: Region, op: Reduce) -> Result<f64, ArenaError> {
        // SAFETY: as above.
        unsafe { host::reduce::<T>(shown(src), op) }
    }
    unsafe fn dot<T: KernelElement>(&self, x: Region, y: Region) -> Result<f64, ArenaError> {
        // SAFETY: as above.
        unsafe { host::dot::<T>(shown(x), shown(y)) }
    }
    unsafe fn copy_regions<T: KernelElement>(
        &self,
        pairs: &[(Region, Region)],
        _order: CopyOrder,
    ) -> Result<(), ArenaError> {
        let shifted: std::vec::Vec<_> = pairs.iter().map(|&(d, s)| (shown(d), shown(s))).collect();
        // SAFETY: as above.
        unsafe { host::copy_regions::<T>(&shifted) }
    }
}

/// For GPU tests: an error that means "no such runtime or device on this machine" (feature
/// not compiled, library not found, no driver, no device) prints `skipped <test>: <e>`;
/// any other error panics, failing the test.
///
/// # Panics
/// On any other error kind.
pub fn skip_if_unavailable(test: &str, e: &ArenaError) {
    if is_unavailable(e) {
        std::eprintln!("skipped {test}: {e}");
    } else {
        panic!("{test}: unexpected error: {e}");
    }
}

/// Whether `e` says that the backend is not there (not compiled, library not found, no
/// driver, no device), rather than that it failed.
#[must_use]
pub fn is_unavailable(e: &ArenaError) -> bool {
    matches!(
        e.kind(),
        ErrorKind::NotCompiled(_)
            | ErrorKind::LibraryNotFound { .. }
            | ErrorKind::NoDriver { .. }
            | ErrorKind::NoDevice(_)
    )
}

/// Generates one `#[test]` per arena constructor, `#[ignore]`d with the reason given for
/// its group, since a test that needs a device must not pass where there is none (no
/// machine that runs this test suite has a GPU; `scripts/gpu-check.sh` runs the CUDA
/// ones with `-- --include-ignored`). Run, it calls `$body(arena)` when the constructor
/// succeeds and otherwise prints `skipped <test>: <reason>` through
/// [`skip_if_unavailable`], which fails the test on any error other than "not compiled /
/// library not found / no driver / no device".
///
/// ```ignore
/// fn exercise<A: Arena + 'static>(arena: A) { /* ... */ }
/// amrex_arena::device_tests! { exercise;
///     "needs a CUDA device (scripts/gpu-check.sh runs it)" {
///         cuda_device: cuda::CudaDeviceArena::new(0);
///     }
///     "needs a HIP (ROCm) device; no script here runs it" {
///         hip_device: hip::HipDeviceArena::new(0);
///     }
/// }
/// ```
#[macro_export]
macro_rules! device_tests {
    ($body:path; $($why:literal { $($name:ident: $ctor:expr;)+ })+) => {$($(
        #[test]
        #[ignore = $why]
        fn $name() {
            match $ctor {
                Ok(arena) => $body(arena),
                Err(e) => $crate::testing::skip_if_unavailable(stringify!($name), &e),
            }
        }
    )+)+};
}

/// Inside `impl Arena for X` of a test arena over ordinary host memory: expands
/// `deallocate_nonzero`, the four bulk operations and `synchronize`, each forwarded to
/// [`HostArena`], so the test arena writes only what it changes (`kind`, `device`,
/// `allocate_nonzero`, which must hand out [`HostArena`] memory).
///
/// ```ignore
/// impl Arena for Limited {
///     fn kind(&self) -> MemoryKind { MemoryKind::Host }
///     fn device(&self) -> Device { Device::CPU }
///     fn allocate_nonzero(&self, l: Layout) -> Result<NonNull<u8>, ArenaError> { /* ... */ }
///     amrex_arena::forward_to_host_arena!();
/// }
/// ```
#[macro_export]
macro_rules! forward_to_host_arena {
    () => {
        unsafe fn deallocate_nonzero(&self, p: core::ptr::NonNull<u8>, l: core::alloc::Layout) {
            // SAFETY: forwarded obligations; `allocate_nonzero` handed out `HostArena`
            // memory.
            unsafe {
                <$crate::HostArena as $crate::Arena>::deallocate_nonzero(&$crate::HostArena, p, l)
            }
        }
        unsafe fn copy_from_host(
            &self,
            d: core::ptr::NonNull<u8>,
            s: *const u8,
            n: usize,
        ) -> Result<(), $crate::ArenaError> {
            // SAFETY: forwarded obligations.
            unsafe {
                <$crate::HostArena as $crate::Arena>::copy_from_host(&$crate::HostArena, d, s, n)
            }
        }
        unsafe fn copy_to_host(
            &self,
            d: *mut u8,
            s: core::ptr::NonNull<u8>,
            n: usize,
        ) -> Result<(), $crate::ArenaError> {
            // SAFETY: forwarded obligations.
            unsafe {
                <$crate::HostArena as $crate::Arena>::copy_to_host(&$crate::HostArena, d, s, n)
            }
        }
        unsafe fn copy_within(
            &self,
            d: core::ptr::NonNull<u8>,
            s: core::ptr::NonNull<u8>,
            n: usize,
        ) -> Result<(), $crate::ArenaError> {
            // SAFETY: forwarded obligations.
            unsafe {
                <$crate::HostArena as $crate::Arena>::copy_within(&$crate::HostArena, d, s, n)
            }
        }
        unsafe fn fill_bytes(
            &self,
            d: core::ptr::NonNull<u8>,
            v: u8,
            n: usize,
        ) -> Result<(), $crate::ArenaError> {
            // SAFETY: forwarded obligations.
            unsafe { <$crate::HostArena as $crate::Arena>::fill_bytes(&$crate::HostArena, d, v, n) }
        }
        fn synchronize(&self) -> Result<(), $crate::ArenaError> {
            Ok(())
        }
    };
}

#[cfg(test)]
mod tests {
    use super::FakeDeviceArena;
    use crate::{Arena, MemoryKind};
    use core::alloc::Layout;

    #[test]
    #[should_panic(expected = "unexpected error")]
    fn other_errors_fail_the_test() {
        let e = crate::ArenaError::new(crate::ErrorKind::CapacityOverflow);
        super::skip_if_unavailable("t", &e);
    }

    #[test]
    fn only_the_no_backend_kinds_count_as_unavailable() {
        use crate::{ArenaError, Backend, ErrorKind};
        assert!(super::is_unavailable(&ArenaError::not_compiled(
            Backend::Hip
        )));
        assert!(!super::is_unavailable(&ArenaError::new(
            ErrorKind::CapacityOverflow
        )));
        assert!(!super::is_unavailable(&ArenaError::new(
            ErrorKind::NoKernels(Backend::Hip)
        )));
    }

    #[test]
    fn round_trips_through_the_bulk_operations() {
        let arena = FakeDeviceArena;
        assert_eq!(arena.kind(), MemoryKind::Device);
        let layout = Layout::array::<u8>(8).unwrap();
        let p = arena.allocate(layout).unwrap();
        let data = [1u8, 2, 3, 4, 5, 6, 7, 8];
        let mut back = [0u8; 8];
        // SAFETY: `p` holds 8 bytes from this arena; `data` is 8 readable bytes.
        unsafe { arena.copy_from_host(p, data.as_ptr(), 8).unwrap() };
        // SAFETY: as above, in the other direction.
        unsafe { arena.copy_to_host(back.as_mut_ptr(), p, 8).unwrap() };
        assert_eq!(back, data);
        // SAFETY: `p` holds 8 bytes from this arena.
        unsafe { arena.fill_bytes(p, 9, 8).unwrap() };
        // SAFETY: as above.
        unsafe { arena.copy_to_host(back.as_mut_ptr(), p, 8).unwrap() };
        assert_eq!(back, [9u8; 8]);
        // SAFETY: `p` came from `allocate(layout)` and is no longer used.
        unsafe { arena.deallocate(p, layout) };
    }
}
