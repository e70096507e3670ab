//! GPU backends, in two tiers. Everywhere: the no-library / no-driver paths, which assert
//! the exact error a constructor returns on a machine without the runtime (these run in
//! every `cargo test`). With a device: one test body per backend and memory kind, which no
//! machine that runs this test suite has, so those tests are `#[ignore]`d with the reason
//! and `cargo test` reports them as ignored, never as passed; `scripts/gpu-check.sh` runs
//! the CUDA ones on a machine with an NVIDIA GPU (`-- --include-ignored`). Run by hand
//! without the device, a device test prints `skipped <test>: <reason>` and returns. (A
//! dev-dependency on `amrex-podvector` exercises the arenas through the container that
//! uses them.)

use amrex_arena::{Arena, ArenaError, Backend, ErrorKind, HostArena, cuda, hip, level_zero};
use amrex_podvector::PodVector;

/// The body every backend and memory kind runs on a machine with a device.
fn exercise<A: Arena + 'static>(arena: A) {
    use amrex_dlpack_core::ToDlpack;
    let device = arena.device();
    let src: Vec<f64> = (0..1000).map(f64::from).collect();
    let mut v = PodVector::<f64, A>::new_in(arena.clone());
    v.extend_from_slice(&src);
    assert_eq!(v.to_host_vec().unwrap(), src);
    for i in 0..100 {
        v.push(f64::from(i)); // grows on the device
    }
    assert_eq!(v.get_copy(1000 + 42), Ok(42.0));
    v.resize(3000, 2.5);
    let host = v.to_host_vec().unwrap();
    assert!(host[1100..].iter().all(|&x| x == 2.5));
    v.try_fill(7.0).unwrap();
    assert!(v.to_host_vec().unwrap().iter().all(|&x| x == 7.0));
    v.try_fill_zeroed().unwrap();
    v.set(5, -1.0).unwrap();
    assert_eq!(v.get_copy(5), Ok(-1.0));
    let back = v.to_arena(HostArena).unwrap();
    assert_eq!(back.len(), 3000);
    assert_eq!(back[5], -1.0);
    let again = back.to_arena(arena.clone()).unwrap();
    assert_eq!(again.to_host_vec().unwrap(), back.to_host_vec().unwrap());
    v.truncate(10);
    v.shrink_to_fit();
    assert_eq!(v.capacity(), 10);
    arena.synchronize().unwrap();

    let t = v.to_dlpack().unwrap();
    assert_eq!(t.device(), device);
    assert_eq!(t.shape(), &[10]);
    let empty = PodVector::<f32, A>::new_in(arena).to_dlpack().unwrap();
    assert!(empty.view().data_ptr().is_null());
    assert_eq!(empty.device(), device);
    eprintln!("ran on {device}");
}

amrex_arena::device_tests! { exercise;
    "needs a CUDA device (scripts/gpu-check.sh runs it)" {
        cuda_device: cuda::CudaDeviceArena::new(0);
        cuda_pinned: cuda::CudaPinnedArena::new(0);
        cuda_managed: cuda::CudaManagedArena::new(0);
    }
    "needs a HIP (ROCm) device; no script here runs it" {
        hip_device: hip::HipDeviceArena::new(0);
        hip_pinned: hip::HipPinnedArena::new(0);
        hip_managed: hip::HipManagedArena::new(0);
    }
    "needs a Level Zero GPU; no script here runs it" {
        level_zero_device: level_zero::ZeDeviceArena::new(0);
        level_zero_shared: level_zero::ZeSharedArena::new(0);
        level_zero_host: level_zero::ZeHostArena::new(0);
    }
}

/// Whether any of `names` can be opened on this machine.
#[cfg(any(feature = "cuda", feature = "hip"))]
fn loadable(names: &[&str]) -> bool {
    names.iter().any(|n| {
        // SAFETY: opening a GPU runtime library runs its initialisers only.
        unsafe { libloading::Library::new(*n) }.is_ok()
    })
}

#[test]
#[cfg_attr(miri, ignore = "FFI")]
fn cuda_without_library_is_library_not_found() {
    let e = cuda::CudaDeviceArena::new(0)
        .map(drop)
        .unwrap_err_or_skip("cuda");
    #[cfg(feature = "cuda")]
    {
        if loadable(cuda::LIBRARY_NAMES) {
            return eprintln!("skipped: a CUDA driver library is present");
        }
        let e = e.expect("constructor failed");
        assert_eq!(
            e.kind(),
            ErrorKind::LibraryNotFound {
                backend: Backend::Cuda,
                tried: cuda::LIBRARY_NAMES
            }
        );
        assert_eq!(cuda::device_count(), Err(e));
        assert!(
            e.to_string()
                .starts_with("CUDA: library not found (tried libcuda.so.1"),
            "{e}"
        );
        assert_other_cuda_kinds_fail_as(e.kind());
    }
    #[cfg(not(feature = "cuda"))]
    {
        assert_eq!(
            e.map(|e| e.kind()),
            Some(ErrorKind::NotCompiled(Backend::Cuda))
        );
        assert_other_cuda_kinds_fail_as(ErrorKind::NotCompiled(Backend::Cuda));
    }
}

/// The pinned and managed constructors fail as the device one did (the device tests that
/// call them are ignored without a GPU, so this is where their no-device path is checked).
fn assert_other_cuda_kinds_fail_as(kind: ErrorKind) {
    for (what, r) in [
        ("pinned", cuda::CudaPinnedArena::new(0).map(drop)),
        ("managed", cuda::CudaManagedArena::new(0).map(drop)),
    ] {
        assert_eq!(r.map_err(|e| e.kind()), Err(kind), "CUDA {what}");
    }
}

#[test]
#[cfg_attr(miri, ignore = "FFI")]
fn hip_without_library_is_library_not_found() {
    let e = hip::HipManagedArena::new(0)
        .map(drop)
        .unwrap_err_or_skip("hip");
    #[cfg(feature = "hip")]
    {
        if loadable(hip::LIBRARY_NAMES) {
            return eprintln!("skipped: a HIP runtime library is present");
        }
        let e = e.expect("constructor failed");
        assert_eq!(
            e.kind(),
            ErrorKind::LibraryNotFound {
                backend: Backend::Hip,
                tried: hip::LIBRARY_NAMES
            }
        );
        assert_eq!(hip::runtime_version(), Err(e));
        assert_other_hip_kinds_fail_as(e.kind());
    }
    #[cfg(not(feature = "hip"))]
    {
        assert_eq!(
            e.map(|e| e.kind()),
            Some(ErrorKind::NotCompiled(Backend::Hip))
        );
        assert_other_hip_kinds_fail_as(ErrorKind::NotCompiled(Backend::Hip));
    }
}

/// The device and pinned constructors fail as the managed one did.
fn assert_other_hip_kinds_fail_as(kind: ErrorKind) {
    for (what, r) in [
        ("device", hip::HipDeviceArena::new(0).map(drop)),
        ("pinned", hip::HipPinnedArena::new(0).map(drop)),
    ] {
        assert_eq!(r.map_err(|e| e.kind()), Err(kind), "HIP {what}");
    }
}

/// With only Debian's `libze1` installed (the loader, no GPU driver), `zeInit` fails and
/// every constructor reports `NoDriver` with that code.
#[test]
#[cfg_attr(miri, ignore = "FFI")]
fn level_zero_loader_without_driver_is_no_driver() {
    let e = level_zero::ZeDeviceArena::new(0)
        .map(drop)
        .unwrap_err_or_skip("level zero");
    #[cfg(feature = "level-zero")]
    {
        let expected = match level_zero_sys::LevelZero::load() {
            Err(_) => ErrorKind::LibraryNotFound {
                backend: Backend::LevelZero,
                tried: level_zero_sys::LIBRARY_NAMES,
            },
            Ok(ze) => {
                // SAFETY: `zeInit` has no preconditions.
                let r = unsafe { (ze.zeInit)(level_zero_sys::ZE_INIT_FLAG_GPU_ONLY) };
                if r == level_zero_sys::ZE_RESULT_SUCCESS {
                    return eprintln!("skipped: a Level Zero driver is present");
                }
                ErrorKind::NoDriver {
                    backend: Backend::LevelZero,
                    code: r.into(),
                }
            }
        };
        let e = e.expect("constructor failed");
        assert_eq!(e.kind(), expected, "{e}");
        assert_eq!(
            level_zero::ZeHostArena::new(0).unwrap_err().kind(),
            expected
        );
        assert_eq!(
            level_zero::ZeSharedArena::new(3).unwrap_err().kind(),
            expected
        );
        assert_eq!(level_zero::device_count(), Err(e));
        eprintln!("Level Zero: {e}");
    }
    #[cfg(not(feature = "level-zero"))]
    {
        let expected = ErrorKind::NotCompiled(Backend::LevelZero);
        assert_eq!(e.map(|e| e.kind()), Some(expected));
        assert_eq!(
            level_zero::ZeHostArena::new(0).unwrap_err().kind(),
            expected
        );
        assert_eq!(
            level_zero::ZeSharedArena::new(0).unwrap_err().kind(),
            expected
        );
    }
}

trait ErrOrSkip {
    /// The error, or `None` (with a message) when the constructor succeeded: a device is
    /// there, so the no-library path cannot be observed.
    fn unwrap_err_or_skip(self, what: &str) -> Option<ArenaError>;
}

impl ErrOrSkip for Result<(), ArenaError> {
    fn unwrap_err_or_skip(self, what: &str) -> Option<ArenaError> {
        match self {
            Ok(()) => {
                eprintln!(
                    "{what}: a device is present; the no-library path is not observable here"
                );
                None
            }
            Err(e) => Some(e),
        }
    }
}

#[cfg(feature = "cuda")]
#[test]
fn out_of_range_ordinals_are_errors_not_panics() {
    for e in [
        cuda::CudaDeviceArena::new(-1).map(drop),
        cuda::CudaDeviceArena::new(i32::MAX).map(drop),
    ] {
        assert!(e.is_err());
    }
}
