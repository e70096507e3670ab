//! Fabs on real GPU arenas (features `cuda`, `hip`, `level-zero`): one body per backend
//! and memory kind. No machine that runs this test suite has a GPU, so every test here is
//! `#[ignore]`d with the reason and `cargo test` reports it as ignored, never as passed;
//! `scripts/gpu-check.sh` runs the CUDA ones on a machine with an NVIDIA GPU. (The
//! device-fab refusals and exports are checked on `FakeDeviceArena` in `dlpack.rs`.)
#![warn(clippy::cast_possible_truncation)]

use amrex_arena::{Arena, cuda, hip, level_zero};
use amrex_basefab::{BaseFab, FabError, IndexBox, IntVect};
use amrex_dlpack_core::{FromDlpack, ToDlpack};

fn exercise<A: Arena + 'static>(arena: A) {
    let device = arena.device();
    let bx = IndexBox::new(IntVect::splat(-1), IntVect::new(6, 5, 4));
    let mut fab = BaseFab::<f64, A>::try_new_in(bx, 3, arena.clone()).unwrap();
    assert_eq!(fab.device(), device);
    // Zero-filled on the device.
    let host = fab.to_host().unwrap();
    assert_eq!(host.norm0(2..3, bx).unwrap(), 0.0);
    // Host work: refused on device memory, done directly on host-accessible memory.
    let mut h = host;
    h.set_val(1.5, 0..2, bx).unwrap();
    h.set_val(-2.0, 2..3, bx).unwrap();
    if arena.host_accessible() {
        fab.set_val(1.5, 0..2, bx).unwrap();
        fab.set_val(-2.0, 2..3, bx).unwrap();
        assert_eq!(fab.sum(0..1, bx).unwrap(), 1.5 * bx.num_pts() as f64);
    } else {
        assert_eq!(
            fab.set_val(1.0, .., bx),
            Err(FabError::NotHostAccessible(device))
        );
        assert!(matches!(fab.array(), Err(FabError::NotHostAccessible(_))));
        fab.copy_from_host_fab(&h).unwrap();
    }
    let back = fab.to_host().unwrap();
    assert_eq!(back.sum(2..3, bx).unwrap(), -2.0 * bx.num_pts() as f64);
    let c = fab.try_clone().unwrap();
    assert_eq!(
        c.to_host().unwrap().as_slice().unwrap(),
        back.as_slice().unwrap()
    );
    // Exports describe device memory; the owned export moves the fab.
    let t = (&fab).to_dlpack().unwrap();
    assert_eq!((t.device(), t.shape()), (device, &[3, 6, 7, 8][..]));
    drop(t);
    let p = fab.as_ptr();
    let t = fab.to_dlpack().unwrap();
    assert_eq!(t.view().data_ptr().cast_const().cast(), p);
    let imported = BaseFab::<f64>::from_dlpack(t).unwrap();
    assert_eq!(imported.device(), device);
    if !device.is_host_accessible() {
        assert!(matches!(
            imported.max(0..1, bx),
            Err(FabError::NotHostAccessible(_))
        ));
    }
    drop(imported);
    arena.synchronize().unwrap();
    eprintln!("ran on {device}");
}

amrex_arena::device_tests! { exercise;
    "needs a CUDA device (scripts/gpu-check.sh runs it)" {
        cuda_device: cuda::CudaDeviceArena::new(0);
        cuda_managed: cuda::CudaManagedArena::new(0);
        cuda_pinned: cuda::CudaPinnedArena::new(0);
    }
    "needs a HIP (ROCm) device; no script here runs it" {
        hip_device: hip::HipDeviceArena::new(0);
        hip_managed: hip::HipManagedArena::new(0);
    }
    "needs a Level Zero GPU; no script here runs it" {
        level_zero_device: level_zero::ZeDeviceArena::new(0);
        level_zero_shared: level_zero::ZeSharedArena::new(0);
    }
}
