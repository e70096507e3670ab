//! Particles on real GPU arenas (features `cuda`, `hip`, `level-zero`): one body per
//! backend and memory kind. No machine that runs this test suite has a GPU, so every test
//! here is `#[ignore]`d with the reason and `cargo test` reports it as ignored, never as
//! passed; `scripts/gpu-check.sh` runs the CUDA ones on a machine with an NVIDIA GPU.
//! (The host-side checks of device particles run on `FakeDeviceArena` in `aos.rs` and
//! `soa.rs`.)

use amrex_aos::{ArrayOfStructs, FieldKind, Particle, ParticleReal, StructOfArrays, idcpu};
use amrex_arena::{Arena, cuda, hip, level_zero};

type P = Particle<2, 1>;

fn exercise<A: Arena + 'static>(arena: A) {
    let device = arena.device();
    let ps: Vec<P> = (0..100)
        .map(|i| {
            P::with_fields(
                [i as ParticleReal, 0.5, -0.5],
                [1.0, 2.0],
                i64::from(i) + 1,
                3,
                [i],
            )
        })
        .collect();
    let mut aos = ArrayOfStructs::<P, A>::new_in(arena.clone());
    aos.extend_from_slice(&ps[..50]);
    for p in &ps[50..] {
        aos.push(*p); // grows on the device
    }
    aos.set_num_neighbors(10).unwrap();
    let host = aos.to_host_vec().unwrap();
    assert_eq!(&host[..100], &ps[..]);
    assert!(host[100..].iter().all(|p| p.idcpu == 0));
    let t = aos.field_to_dlpack(FieldKind::IdCpu).unwrap();
    assert_eq!(
        (t.device(), t.shape(), t.view().stride(0)),
        (device, &[110][..], 7)
    );
    drop(t);
    let mut soa = StructOfArrays::<2, 1, A>::new_in(arena.clone());
    for p in &ps {
        soa.push(p.idcpu, &p.rdata, &p.idata).unwrap();
    }
    soa.add_real_comp(Some("w")).unwrap();
    let ids = soa.idcpu().to_host_vec().unwrap();
    assert_eq!(idcpu::id(ids[99]), 100);
    assert_eq!(soa.real_to_dlpack(2).unwrap().device(), device);
    arena.synchronize().unwrap();
    eprintln!("ran on {device}");
}

amrex_arena::device_tests! { exercise;
    "needs a CUDA device (scripts/gpu-check.sh runs it)" {
        cuda_device: cuda::CudaDeviceArena::new(0);
        cuda_managed: cuda::CudaManagedArena::new(0);
    }
    "needs a HIP (ROCm) device; no script here runs it" {
        hip_device: hip::HipDeviceArena::new(0);
    }
    "needs a Level Zero GPU; no script here runs it" {
        level_zero_device: level_zero::ZeDeviceArena::new(0);
    }
}
