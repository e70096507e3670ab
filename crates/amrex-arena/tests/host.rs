//! The host arena and the trait's provided methods.

use amrex_arena::{Arena, ArenaError, Backend, ErrorKind, HostArena, MemoryKind, copy_between};
use amrex_dlpack_core::Device;
use core::{alloc::Layout, ptr::NonNull};

#[test]
fn host_arena_reports_cpu() {
    let a = HostArena;
    assert_eq!(a.kind(), MemoryKind::Host);
    assert_eq!(a.device(), Device::CPU);
    assert!(a.host_accessible());
    assert!(a.synchronize().is_ok());
}

#[test]
fn zero_size_is_dangling_and_aligned() {
    for align in [1usize, 2, 8, 64, 4096] {
        let layout = Layout::from_size_align(0, align).unwrap();
        let p = HostArena.allocate(layout).unwrap();
        assert_eq!(p.as_ptr() as usize, align);
        // SAFETY: zero-size deallocation is a no-op.
        unsafe { HostArena.deallocate(p, layout) };
    }
}

/// An arena whose backend panics: the provided methods must keep zero sizes away from it.
#[derive(Clone, Debug)]
struct Forbidden;

impl Arena for Forbidden {
    fn kind(&self) -> MemoryKind {
        MemoryKind::Device
    }
    fn device(&self) -> Device {
        Device::CPU
    }
    fn allocate_nonzero(&self, _: Layout) -> Result<NonNull<u8>, ArenaError> {
        panic!("backend touched by allocate")
    }
    unsafe fn deallocate_nonzero(&self, _: NonNull<u8>, _: Layout) {
        panic!("backend touched by deallocate")
    }
    unsafe fn copy_from_host(
        &self,
        _: NonNull<u8>,
        _: *const u8,
        _: usize,
    ) -> Result<(), ArenaError> {
        panic!("backend touched by copy_from_host")
    }
    unsafe fn copy_to_host(&self, _: *mut u8, _: NonNull<u8>, _: usize) -> Result<(), ArenaError> {
        panic!("backend touched by copy_to_host")
    }
    unsafe fn copy_within(
        &self,
        _: NonNull<u8>,
        _: NonNull<u8>,
        _: usize,
    ) -> Result<(), ArenaError> {
        panic!("backend touched by copy_within")
    }
    unsafe fn fill_bytes(&self, _: NonNull<u8>, _: u8, _: usize) -> Result<(), ArenaError> {
        panic!("backend touched by fill_bytes")
    }
    fn synchronize(&self) -> Result<(), ArenaError> {
        panic!("backend touched by synchronize")
    }
}

#[test]
fn zero_size_never_touches_the_backend() {
    let layout = Layout::from_size_align(0, 16).unwrap();
    let p = Forbidden.allocate(layout).unwrap();
    // SAFETY: zero-size: the provided method returns before the backend.
    unsafe { Forbidden.deallocate(p, layout) };
    // SAFETY: a zero-byte copy between arenas touches neither.
    unsafe { copy_between(&Forbidden, p, &Forbidden, p, 0) }.unwrap();
}

#[test]
fn copy_fill_and_reallocate() {
    let a = HostArena;
    let layout = Layout::array::<u32>(8).unwrap();
    let p = a.allocate(layout).unwrap();
    let src: [u32; 8] = core::array::from_fn(|i| i as u32 * 3);
    // SAFETY: 32 bytes each side, distinct allocations.
    unsafe { a.copy_from_host(p, src.as_ptr().cast(), 32) }.unwrap();
    // SAFETY: `p` is a live 32-byte allocation of this arena.
    let p = unsafe { a.reallocate(p, layout, 64) }.unwrap();
    let big = Layout::array::<u32>(16).unwrap();
    // SAFETY: 32 is within the 64-byte allocation.
    let upper = unsafe { p.add(32) };
    // SAFETY: the first 32 bytes survived; fill the next 32.
    unsafe { a.fill_bytes(upper, 0xff, 32) }.unwrap();
    let mut back = [0u32; 16];
    // SAFETY: 64 bytes each side.
    unsafe { a.copy_to_host(back.as_mut_ptr().cast(), p, 64) }.unwrap();
    assert_eq!(&back[..8], &src);
    assert!(back[8..].iter().all(|&x| x == u32::MAX));
    // SAFETY: copy the first half onto the second half: disjoint.
    unsafe { a.copy_within(upper, p, 32) }.unwrap();
    // SAFETY: 64 bytes each side.
    unsafe { a.copy_to_host(back.as_mut_ptr().cast(), p, 64) }.unwrap();
    assert_eq!(&back[8..], &src);
    // SAFETY: `p` came from the reallocation to 64 bytes.
    unsafe { a.deallocate(p, big) };
}

#[test]
fn reallocate_to_and_from_zero() {
    let a = HostArena;
    let z = Layout::from_size_align(0, 8).unwrap();
    let p = a.allocate(z).unwrap();
    // SAFETY: a zero-size "allocation" grows into a real one.
    let p = unsafe { a.reallocate(p, z, 24) }.unwrap();
    let l = Layout::from_size_align(24, 8).unwrap();
    // SAFETY: shrinking to zero frees it and gives a dangling pointer.
    let p = unsafe { a.reallocate(p, l, 0) }.unwrap();
    assert_eq!(p.as_ptr() as usize, 8);
}

#[test]
fn default_reallocate_via_trait_copies() {
    /// Host memory through the trait's default `reallocate` (allocate, copy, free).
    #[derive(Clone, Debug)]
    struct Plain;
    impl Arena for Plain {
        fn kind(&self) -> MemoryKind {
            MemoryKind::Host
        }
        fn device(&self) -> Device {
            Device::CPU
        }
        fn allocate_nonzero(&self, l: Layout) -> Result<NonNull<u8>, ArenaError> {
            HostArena.allocate_nonzero(l)
        }
        amrex_arena::forward_to_host_arena!();
    }
    let l = Layout::array::<u16>(4).unwrap();
    let p = Plain.allocate(l).unwrap();
    let src = [1u16, 2, 3, 4];
    // SAFETY: 8 bytes each side.
    unsafe { Plain.copy_from_host(p, src.as_ptr().cast(), 8) }.unwrap();
    // SAFETY: live allocation of `l`.
    let q = unsafe { Plain.reallocate(p, l, 4) }.unwrap();
    let mut back = [0u16; 2];
    // SAFETY: 4 bytes each side.
    unsafe { Plain.copy_to_host(back.as_mut_ptr().cast(), q, 4) }.unwrap();
    assert_eq!(back, [1, 2]);
    // SAFETY: `q` is the live 4-byte allocation.
    unsafe { Plain.deallocate(q, Layout::array::<u16>(2).unwrap()) };
}

#[test]
fn huge_allocation_fails_with_an_error() {
    if cfg!(miri) {
        return; // Miri reports resource exhaustion instead of returning NULL.
    }
    let l = Layout::from_size_align(isize::MAX as usize - 4095, 4096).unwrap();
    let e = HostArena.allocate(l).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::AllocationFailed { align: 4096, .. }),
        "{e}"
    );
}

#[test]
fn errors_say_what_happened() {
    let e = ArenaError::not_compiled(Backend::Cuda);
    assert_eq!(e.kind(), ErrorKind::NotCompiled(Backend::Cuda));
    assert!(
        e.to_string().contains("CUDA support is not compiled in"),
        "{e}"
    );
    let e = ArenaError::new(ErrorKind::LibraryNotFound {
        backend: Backend::Hip,
        tried: &["libamdhip64.so", "libamdhip64.so.6"],
    });
    assert_eq!(
        e.to_string(),
        "HIP: library not found (tried libamdhip64.so, libamdhip64.so.6)"
    );
    let e = ArenaError::new(ErrorKind::DeviceOutOfRange {
        backend: Backend::LevelZero,
        requested: 3,
        available: 1,
    });
    assert_eq!(
        e.to_string(),
        "Level Zero: expected a device ordinal below 1, got 3"
    );
    let d: amrex_dlpack_core::DlpackError = ArenaError::new(ErrorKind::CapacityOverflow).into();
    assert_eq!(d.kind(), amrex_dlpack_core::ErrorKind::AllocationFailed);
}

#[test]
fn disabled_backends_are_not_compiled_errors() {
    #[cfg(not(feature = "cuda"))]
    {
        let e = amrex_arena::cuda::CudaDeviceArena::new(0).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotCompiled(Backend::Cuda));
        assert!(amrex_arena::cuda::device_count().is_err());
    }
    #[cfg(not(feature = "hip"))]
    {
        let e = amrex_arena::hip::HipManagedArena::new(0).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotCompiled(Backend::Hip));
    }
    #[cfg(not(feature = "level-zero"))]
    {
        let e = amrex_arena::level_zero::ZeSharedArena::new(0).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotCompiled(Backend::LevelZero));
    }
}

#[test]
fn copy_between_host_arenas() {
    let l = Layout::array::<u8>(5).unwrap();
    let a = HostArena.allocate(l).unwrap();
    let b = HostArena.allocate(l).unwrap();
    // SAFETY: 5 bytes each side.
    unsafe { HostArena.copy_from_host(a, b"hello".as_ptr(), 5) }.unwrap();
    // SAFETY: distinct 5-byte allocations.
    unsafe { copy_between(&HostArena, a, &HostArena, b, 5) }.unwrap();
    let mut out = [0u8; 5];
    // SAFETY: 5 bytes each side.
    unsafe { HostArena.copy_to_host(out.as_mut_ptr(), b, 5) }.unwrap();
    assert_eq!(&out, b"hello");
    // SAFETY: both live allocations of `l`.
    unsafe { HostArena.deallocate(a, l) };
    // SAFETY: as above.
    unsafe { HostArena.deallocate(b, l) };
}
