//! The FabArray operations on arenas whose kernels do the work, against the host
//! operations, element by element. Everywhere they run on the test arena
//! (`FakeDeviceArena`: host memory behind pointers that fault if the host dereferences
//! them, whose kernels are the host loops), so these tests check the plumbing (the
//! dispatch to the kernels, regions, batching, copy plans, argument checks), not device
//! arithmetic. The CUDA device and managed versions are `#[ignore]`d: no machine that
//! runs this suite has a GPU (`scripts/gpu-check.sh` runs them where a GPU is present;
//! they passed on one NVIDIA H200, with NVRTC's CUBIN and with the shipped PTX).
#![warn(clippy::cast_possible_truncation)]

use amrex_arena::kernels::Kernels;
use amrex_arena::testing::FakeDeviceArena;
use amrex_arena::{Arena, HostArena};
use amrex_multifab::{
    BoxArray, CopyOp, DistributionMapping, FabArray, FabArrayError, FabError, FillPattern,
    IndexBox, IndexType, IntVect, MultiFab, Periodicity,
};

/// Prints where a device test runs: `ran on kDLCUDA:0` for a real device (the GPU check
/// counts these lines), and the stand-in's name for the test arena, which only looks like
/// CUDA memory.
fn say_where<A: Kernels>(arena: &A) {
    let name = core::any::type_name::<A>();
    if name.ends_with("FakeDeviceArena") {
        eprintln!(
            "on the test arena (host memory reported as {})",
            arena.device()
        );
    } else {
        eprintln!("ran on {}", arena.device());
    }
}

/// Deterministic values with many distinct bit patterns (xorshift).
fn fill_random(mf: &mut MultiFab, seed: u64) {
    let mut s = seed | 1;
    for fab in mf.fabs_mut() {
        for v in fab.as_mut_slice().unwrap() {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            *v = (s >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0;
        }
    }
}

fn same_bits(what: &str, dev: &MultiFab, host: &MultiFab) {
    for (l, (d, h)) in dev.fabs().zip(host.fabs()).enumerate() {
        let (d, h) = (d.as_slice().unwrap(), h.as_slice().unwrap());
        for (e, (x, y)) in d.iter().zip(h).enumerate() {
            assert_eq!(
                x.to_bits(),
                y.to_bits(),
                "{what}: box {l} element {e}: device {x} host {y}"
            );
        }
    }
}

fn close(what: &str, d: f64, h: f64) {
    let tol = 1e-12 * h.abs().max(1.0);
    assert!((d - h).abs() <= tol, "{what}: device {d} host {h}");
}

fn setup(ix: IndexType) -> (BoxArray, DistributionMapping) {
    let n = if cfg!(miri) { 6 } else { 24 };
    let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(n - 1));
    let ba = BoxArray::from_domain(domain, n / 2).convert(ix);
    let dm = DistributionMapping::new(&ba);
    (ba, dm)
}

fn on<A: Kernels>(arena: &A, host: &MultiFab) -> FabArray<f64, A> {
    let mut d = FabArray::try_new_in(
        host.box_array(),
        host.distribution_map(),
        host.ncomp(),
        host.n_grow(),
        arena.clone(),
    )
    .unwrap();
    d.copy_from_host(host).unwrap();
    d
}

fn exercise<A: Kernels + 'static>(arena: A) {
    say_where(&arena);
    let (ba, dm) = setup(IndexType::CELL);
    let (nc, ng) = (3, IntVect::splat(2));
    let mut h = MultiFab::new(&ba, &dm, nc, ng);
    let mut hx = MultiFab::new(&ba, &dm, nc, ng);
    fill_random(&mut h, 1);
    fill_random(&mut hx, 2);
    let mut d = on(&arena, &h);
    let x = on(&arena, &hx);
    same_bits("upload", &d.to_host().unwrap(), &h);

    h.set_val(1.5, 1..2, 1).unwrap();
    d.set_val(1.5, 1..2, 1).unwrap();
    same_bits("set_val", &d.to_host().unwrap(), &h);
    h.plus(0.25, .., 2).unwrap();
    d.plus(0.25, .., 2).unwrap();
    same_bits("plus", &d.to_host().unwrap(), &h);
    h.mult(-3.0, 0..1, 0).unwrap();
    d.mult(-3.0, 0..1, 0).unwrap();
    same_bits("mult", &d.to_host().unwrap(), &h);
    h.saxpy(0.7, &hx, 1, 0..2, 1).unwrap();
    d.saxpy(0.7, &x, 1, 0..2, 1).unwrap();
    same_bits("saxpy", &d.to_host().unwrap(), &h);
    h.xpay(1.3, &hx, 0, 2..3, 0).unwrap();
    d.xpay(1.3, &x, 0, 2..3, 0).unwrap();
    same_bits("xpay", &d.to_host().unwrap(), &h);
    h.copy_from(&hx, 2, 0..1, 2).unwrap();
    d.copy_from(&x, 2, 0..1, 2).unwrap();
    same_bits("copy_from", &d.to_host().unwrap(), &h);
    h.add(&hx, 0, 1..3, 1).unwrap();
    d.add(&x, 0, 1..3, 1).unwrap();
    same_bits("add", &d.to_host().unwrap(), &h);

    let domain = ba.minimal_box();
    for (periodic, pattern, comps, w) in [
        ([true; 3], FillPattern::Full, 0..3, 2),
        ([false, true, false], FillPattern::Full, 1..3, 1),
        ([true; 3], FillPattern::Cross, 0..2, 2),
    ] {
        fill_random(&mut h, 7);
        d.copy_from_host(&h).unwrap();
        let period = Periodicity::new(domain, periodic);
        h.fill_boundary_with(period, pattern, comps.clone(), w)
            .unwrap();
        d.fill_boundary_with(period, pattern, comps, w).unwrap();
        same_bits("fill_boundary", &d.to_host().unwrap(), &h);
    }
    h.fill_boundary(Periodicity::new(domain, [true; 3]))
        .unwrap();
    d.fill_boundary(Periodicity::new(domain, [true; 3]))
        .unwrap();
    same_bits("fill_boundary (all)", &d.to_host().unwrap(), &h);

    for ngr in [0, 2] {
        close("sum", d.sum(.., ngr).unwrap(), h.sum(.., ngr).unwrap());
        close(
            "norm2",
            d.norm2(1..2, ngr).unwrap(),
            h.norm2(1..2, ngr).unwrap(),
        );
        close(
            "norm1",
            d.norm1(.., ngr).unwrap(),
            h.norm1(.., ngr).unwrap(),
        );
        close(
            "dot",
            d.dot(&x, 1, 0..2, ngr).unwrap(),
            h.dot(&hx, 1, 0..2, ngr).unwrap(),
        );
        assert_eq!(d.norm0(.., ngr).unwrap(), h.norm0(.., ngr).unwrap());
        assert_eq!(d.min(2..3, ngr).unwrap(), h.min(2..3, ngr).unwrap());
        assert_eq!(d.max(0..1, ngr).unwrap(), h.max(0..1, ngr).unwrap());
    }
    // No component: the identities, as on the host.
    assert_eq!(d.min(1..1, 0).unwrap(), h.min(1..1, 0).unwrap());
    assert_eq!(d.sum(1..1, 0).unwrap(), 0.0);

    // Bad arguments: the host's errors, and nothing written.
    let before = d.to_host().unwrap();
    assert!(matches!(
        d.set_val(9.0, 2..4, 0),
        Err(FabArrayError::Fab(FabError::ComponentsOutside { .. }))
    ));
    assert!(matches!(
        d.plus(9.0, .., 3),
        Err(FabArrayError::GhostOutside { .. })
    ));
    let other_ba = BoxArray::from_domain(domain, 4);
    let other = on(
        &arena,
        &MultiFab::new(&other_ba, &DistributionMapping::new(&other_ba), nc, ng),
    );
    assert!(matches!(
        d.saxpy(1.0, &other, 0, .., 0),
        Err(FabArrayError::LayoutMismatch)
    ));
    assert!(matches!(
        d.copy_from(&x, 2, 0..2, 0),
        Err(FabArrayError::Fab(FabError::ComponentsOutside { .. }))
    ));
    // Kernel-less operations with operands in other memory say that, not "no kernel":
    // a kernel would not help.
    let mut hh = h.to_host().unwrap();
    let hbefore = hh.to_host().unwrap();
    for (op, r) in [
        ("subtract", hh.subtract(&d, 0, .., 0)),
        ("multiply", hh.multiply(&d, 0, .., 0)),
        ("divide", hh.divide(&d, 0, .., 0)),
        ("lin_comb", hh.lin_comb(1.0, &h, 0, 2.0, &d, 0, .., 0)),
        ("add_product", hh.add_product(&d, 0, &h, 0, .., 0)),
        ("swap", hh.swap(&mut d, 0, .., 0)),
    ] {
        match r {
            Err(FabArrayError::DifferentMemory { op: o, dst, src }) => {
                assert_eq!(o, op);
                assert_eq!(dst, HostArena.device(), "{op}");
                // The arena under test: kDLCUDAManaged for managed memory, not the test
                // arena's kDLCUDA (the first GPU run, on an H200, caught that).
                assert_eq!(src, arena.device(), "{op}");
            }
            other => panic!("{op}: {other:?}"),
        }
    }
    same_bits("host after refused calls", &hh, &hbefore);
    same_bits("after refused calls", &d.to_host().unwrap(), &before);
}

/// Nodal data: shared face nodes have several sources; the device applies the tags in the
/// host's order, so the last source wins on both.
fn exercise_nodal<A: Kernels + 'static>(arena: A) {
    say_where(&arena);
    let (ba, dm) = setup(IndexType::NODE);
    let mut h = MultiFab::new(&ba, &dm, 2, IntVect::splat(1));
    fill_random(&mut h, 3);
    let mut d = on(&arena, &h);
    let period = Periodicity::new(ba.minimal_box(), [true, false, true]);
    h.fill_boundary(period).unwrap();
    d.fill_boundary(period).unwrap();
    same_bits("nodal fill_boundary", &d.to_host().unwrap(), &h);
}

/// `parallel_copy` between two BoxArrays (different box sizes, overlapping source ghost
/// regions, periodic images), copy and add, as the host does it.
fn exercise_parallel_copy<A: Kernels + 'static>(arena: A) {
    say_where(&arena);
    let n = if cfg!(miri) { 6 } else { 20 };
    let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(n - 1));
    let sba = BoxArray::from_domain(domain, n / 2);
    let dba = BoxArray::from_domain(domain, n / 2 - 1);
    let (sdm, ddm) = (
        DistributionMapping::new(&sba),
        DistributionMapping::new(&dba),
    );
    let mut hs = MultiFab::new(&sba, &sdm, 3, IntVect::splat(2));
    fill_random(&mut hs, 11);
    let ds = on(&arena, &hs);
    let period = Periodicity::new(domain, [true, false, true]);
    for (op, src_ng, ng, scomp, comps) in [
        (CopyOp::Copy, 0, 0, 0, 0..3),
        (CopyOp::Copy, 2, 1, 1, 0..2),
        (CopyOp::Add, 1, 2, 0, 1..3),
    ] {
        let mut hd = MultiFab::new(&dba, &ddm, 3, IntVect::splat(2));
        fill_random(&mut hd, 12);
        let mut dd = on(&arena, &hd);
        hd.parallel_copy_with(&hs, scomp, src_ng, period, op, comps.clone(), ng)
            .unwrap();
        dd.parallel_copy_with(&ds, scomp, src_ng, period, op, comps, ng)
            .unwrap();
        same_bits("parallel_copy", &dd.to_host().unwrap(), &hd);
    }
    let mut hd = MultiFab::new(&dba, &ddm, 3, IntVect::splat(2));
    let mut dd = on(&arena, &hd);
    hd.parallel_copy(&hs, period).unwrap();
    dd.parallel_copy(&ds, period).unwrap();
    same_bits("parallel_copy (all)", &dd.to_host().unwrap(), &hd);
    assert!(matches!(
        dd.parallel_copy_with(&ds, 2, 0, period, CopyOp::Copy, 0..2, 0),
        Err(FabArrayError::Fab(FabError::ComponentsOutside { .. }))
    ));
    assert!(matches!(
        dd.parallel_copy_with(&ds, 0, 3, period, CopyOp::Copy, .., 0),
        Err(FabArrayError::GhostOutside { .. })
    ));
}

#[test]
#[cfg_attr(
    miri,
    ignore = "slow under Miri; `fake_device_matches_the_host` runs the same unsafe paths"
)]
fn fake_device_parallel_copy_matches_the_host() {
    exercise_parallel_copy(FakeDeviceArena);
}

amrex_arena::device_tests! { exercise_parallel_copy;
    "needs a CUDA device and NVRTC (scripts/gpu-check.sh runs it)" {
        cuda_device_parallel_copy: cuda(amrex_arena::cuda::CudaDeviceArena::new(0));
    }
}

/// `f32` FabArrays take the `_f32` kernels.
fn exercise_f32<A: Kernels + 'static>(arena: A) {
    say_where(&arena);
    let (ba, dm) = setup(IndexType::CELL);
    let ng = IntVect::splat(1);
    let mut h = FabArray::<f32>::new(&ba, &dm, 2, ng);
    for (i, v) in h
        .fabs_mut()
        .flat_map(|f| f.as_mut_slice().unwrap().iter_mut())
        .enumerate()
    {
        *v = (i % 97) as f32 * 0.37 - 11.0;
    }
    let mut d = FabArray::<f32, A>::try_new_in(&ba, &dm, 2, ng, arena.clone()).unwrap();
    d.copy_from_host(&h).unwrap();
    let x = FabArray::<f32, A>::try_new_in(&ba, &dm, 2, ng, arena).unwrap();
    h.mult(1.25, .., 1).unwrap();
    d.mult(1.25, .., 1).unwrap();
    d.saxpy(2.0, &x, 0, .., 1).unwrap(); // x is zero: no change
    let back = d.to_host().unwrap();
    for (a, b) in back.fabs().zip(h.fabs()) {
        assert_eq!(a.as_slice().unwrap(), b.as_slice().unwrap());
    }
    assert_eq!(d.max(.., 1).unwrap(), h.max(.., 1).unwrap());
    close("f32 sum", d.sum(.., 0).unwrap(), h.sum(.., 0).unwrap());
}

#[test]
fn fake_device_matches_the_host() {
    exercise(FakeDeviceArena);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "slow under Miri; `fake_device_matches_the_host` runs the same unsafe paths"
)]
fn fake_device_nodal_fill_boundary_matches_the_host() {
    exercise_nodal(FakeDeviceArena);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "slow under Miri; `fake_device_matches_the_host` runs the same unsafe paths"
)]
fn fake_device_f32() {
    exercise_f32(FakeDeviceArena);
}

/// A CUDA arena whose kernels can be built here: a device, and NVRTC (a machine with a
/// GPU but without NVRTC skips, saying so, rather than failing in the first kernel).
fn cuda<A>(arena: Result<A, amrex_arena::ArenaError>) -> Result<A, amrex_arena::ArenaError> {
    let arena = arena?;
    amrex_arena::cuda::nvrtc_version()?;
    Ok(arena)
}

amrex_arena::device_tests! { exercise;
    "needs a CUDA device and NVRTC (scripts/gpu-check.sh runs it)" {
        cuda_device_matches_the_host: cuda(amrex_arena::cuda::CudaDeviceArena::new(0));
        cuda_managed_matches_the_host: cuda(amrex_arena::cuda::CudaManagedArena::new(0));
    }
}

amrex_arena::device_tests! { exercise_nodal;
    "needs a CUDA device and NVRTC (scripts/gpu-check.sh runs it)" {
        cuda_device_nodal_fill_boundary: cuda(amrex_arena::cuda::CudaDeviceArena::new(0));
    }
}

amrex_arena::device_tests! { exercise_f32;
    "needs a CUDA device and NVRTC (scripts/gpu-check.sh runs it)" {
        cuda_device_f32: cuda(amrex_arena::cuda::CudaDeviceArena::new(0));
    }
}

/// Memory with no kernels (HIP and Level Zero device memory for now) is refused with a
/// clear error, not run on the host.
#[test]
fn arenas_without_kernels_say_so() {
    let e =
        amrex_arena::ArenaError::new(amrex_arena::ErrorKind::NoKernels(amrex_arena::Backend::Hip));
    assert!(e.to_string().contains("no device kernels"), "{e}");
}

/// The device example of `docs/gpu.md`, on the test arena: a periodic fill_boundary
/// fills every ghost cell.
#[test]
fn the_doc_example_holds_on_the_test_arena() {
    let domain = IndexBox::new(
        IntVect::ZERO,
        IntVect::splat(if cfg!(miri) { 7 } else { 31 }),
    );
    let n = i32::try_from(domain.length_dir(0)).unwrap();
    let ba = BoxArray::from_domain(domain, n / 2);
    let dm = DistributionMapping::new(&ba);
    let mut mf =
        FabArray::<f64, _>::try_new_in(&ba, &dm, 1, IntVect::splat(1), FakeDeviceArena).unwrap();
    mf.set_val(1.0, .., 0).unwrap();
    assert_eq!(mf.min(.., 1).unwrap(), 0.0); // ghost cells not filled yet
    mf.fill_boundary(Periodicity::all(domain)).unwrap();
    assert_eq!(mf.min(.., 1).unwrap(), 1.0); // every ghost cell filled
    assert_eq!(mf.sum(.., 0).unwrap(), f64::from(n * n * n));
    assert_eq!(mf.to_host().unwrap().min(.., 1).unwrap(), 1.0);
}

/// One method set for every arena: what the kernels cannot do is refused with an error
/// naming the operation and the memory, operands in other memory are refused, and
/// operations built from others (`sum_boundary`, `fill`, the split FillBoundary) run on
/// the kernels too.
#[test]
#[cfg_attr(
    miri,
    ignore = "slow under Miri; `fake_device_matches_the_host` runs the same unsafe paths"
)]
fn the_kernel_path_refuses_what_it_cannot_do_and_composes_the_rest() {
    let (ba, dm) = setup(IndexType::CELL);
    let ng = IntVect::splat(1);
    let mut h = MultiFab::new(&ba, &dm, 2, ng);
    fill_random(&mut h, 5);
    let mut d = on(&FakeDeviceArena, &h);
    let before = d.to_host().unwrap();
    for (op, r) in [
        ("invert", d.invert(1.0, .., 0)),
        ("negate", d.negate(.., 0)),
        ("abs", d.abs(.., 0)),
    ] {
        match r {
            Err(FabArrayError::NoKernel { op: o, device }) => {
                assert_eq!(o, op);
                assert_eq!(device, FakeDeviceArena.device());
            }
            other => panic!("{op}: {other:?}"),
        }
    }
    let x = on(&FakeDeviceArena, &h);
    assert!(matches!(
        d.subtract(&x, 0, .., 0),
        Err(FabArrayError::NoKernel { op: "subtract", .. })
    ));
    // A host operand for a device destination (and the other way round).
    assert!(matches!(
        d.saxpy(2.0, &h, 0, .., 0),
        Err(FabArrayError::DifferentMemory { op: "saxpy", .. })
    ));
    assert!(matches!(
        h.to_host().unwrap().add(&d, 0, .., 0),
        Err(FabArrayError::DifferentMemory { op: "add", .. })
    ));
    same_bits("after refused calls", &d.to_host().unwrap(), &before);

    // Integer FabArrays have no kernels: an arena error that says so.
    let mut di = FabArray::<i32, _>::try_new_in(&ba, &dm, 1, ng, FakeDeviceArena).unwrap();
    match di.set_val(3, .., 0) {
        Err(FabArrayError::Fab(FabError::Arena(e))) => {
            assert!(e.to_string().contains("f32 and f64"), "{e}")
        }
        other => panic!("{other:?}"),
    }

    // sum_boundary, fill and nowait/finish, on the kernels, as on the host.
    let period = Periodicity::all(ba.minimal_box());
    let mut hs = h.to_host().unwrap();
    let mut ds = on(&FakeDeviceArena, &hs);
    hs.sum_boundary(period).unwrap();
    ds.sum_boundary(period).unwrap();
    same_bits("sum_boundary", &ds.to_host().unwrap(), &hs);
    hs.fill(0.5).unwrap();
    ds.fill(0.5).unwrap();
    same_bits("fill", &ds.to_host().unwrap(), &hs);
    fill_random(&mut hs, 9);
    ds.copy_from_host(&hs).unwrap();
    hs.fill_boundary_nowait(period, FillPattern::Full, .., ng)
        .unwrap();
    hs.fill_boundary_finish().unwrap();
    ds.fill_boundary_nowait(period, FillPattern::Full, .., ng)
        .unwrap();
    ds.fill_boundary_finish().unwrap();
    same_bits("fill_boundary_nowait", &ds.to_host().unwrap(), &hs);
}

/// An arena that reports what the test arena reports (device memory on `kDLCUDA:0`),
/// as a real CUDA arena does, but is another arena: its memory is not in the test
/// arena's memory space, so no operation hands one arena's memory to the other's
/// kernels (the test arena's kernels dereference what they are given, which on a real
/// device pointer would be undefined behaviour).
#[derive(Clone, Copy, Debug)]
struct LookAlike;

impl Arena for LookAlike {
    fn kind(&self) -> amrex_arena::MemoryKind {
        FakeDeviceArena.kind()
    }
    fn device(&self) -> amrex_dlpack_core::Device {
        FakeDeviceArena.device()
    }
    fn allocate_nonzero(
        &self,
        layout: core::alloc::Layout,
    ) -> Result<core::ptr::NonNull<u8>, amrex_arena::ArenaError> {
        HostArena.allocate_nonzero(layout)
    }
    amrex_arena::forward_to_host_arena!();
}

impl Kernels for LookAlike {
    unsafe fn apply<T: amrex_arena::kernels::KernelElement>(
        &self,
        _: amrex_arena::kernels::Region,
        _: amrex_arena::kernels::Unary<T>,
    ) -> Result<(), amrex_arena::ArenaError> {
        unreachable!("no operation reaches these kernels in this test")
    }
    unsafe fn combine<T: amrex_arena::kernels::KernelElement>(
        &self,
        _: amrex_arena::kernels::Region,
        _: amrex_arena::kernels::Region,
        _: amrex_arena::kernels::Binary<T>,
    ) -> Result<(), amrex_arena::ArenaError> {
        unreachable!("no operation reaches these kernels in this test")
    }
    unsafe fn reduce<T: amrex_arena::kernels::KernelElement>(
        &self,
        _: amrex_arena::kernels::Region,
        _: amrex_arena::kernels::Reduce,
    ) -> Result<f64, amrex_arena::ArenaError> {
        unreachable!("no operation reaches these kernels in this test")
    }
    unsafe fn dot<T: amrex_arena::kernels::KernelElement>(
        &self,
        _: amrex_arena::kernels::Region,
        _: amrex_arena::kernels::Region,
    ) -> Result<f64, amrex_arena::ArenaError> {
        unreachable!("no operation reaches these kernels in this test")
    }
    unsafe fn copy_regions<T: amrex_arena::kernels::KernelElement>(
        &self,
        _: &[(amrex_arena::kernels::Region, amrex_arena::kernels::Region)],
        _: amrex_arena::kernels::CopyOrder,
    ) -> Result<(), amrex_arena::ArenaError> {
        unreachable!("no operation reaches these kernels in this test")
    }
}

#[test]
fn same_device_and_kind_is_not_the_same_memory() {
    assert_eq!(LookAlike.device(), FakeDeviceArena.device());
    assert_eq!(LookAlike.kind(), FakeDeviceArena.kind());
    assert_ne!(LookAlike.memory_space(), FakeDeviceArena.memory_space());
    assert_eq!(
        amrex_arena::AnyArena::FakeDevice(FakeDeviceArena).memory_space(),
        FakeDeviceArena.memory_space()
    );

    let (ba, dm) = setup(IndexType::CELL);
    let ng = IntVect::splat(1);
    let mut h = MultiFab::new(&ba, &dm, 1, ng);
    fill_random(&mut h, 3);
    let mut d = on(&FakeDeviceArena, &h);
    let before = d.to_host().unwrap();
    let mut other = FabArray::<f64, _>::try_new_in(&ba, &dm, 1, ng, LookAlike).unwrap();
    let period = Periodicity::all(ba.minimal_box());
    for (op, r) in [
        ("add", d.add(&other, 0, .., 0)),
        ("copy_from", d.copy_from(&other, 0, .., 0)),
        ("saxpy", d.saxpy(2.0, &other, 0, .., 0)),
        ("subtract", d.subtract(&other, 0, .., 0)),
        ("dot", d.dot(&other, 0, .., 0).map(|_| ())),
        (
            "parallel_copy",
            d.parallel_copy_with(&other, 0, IntVect::ZERO, period, CopyOp::Copy, .., ng),
        ),
        ("swap", d.swap(&mut other, 0, .., 0)),
    ] {
        assert!(
            matches!(r, Err(FabArrayError::DifferentMemory { op: o, .. }) if o == op),
            "{op}: {r:?}"
        );
    }
    same_bits("after refused calls", &d.to_host().unwrap(), &before);
}
