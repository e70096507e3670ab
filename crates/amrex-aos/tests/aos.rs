//! ArrayOfStructs: neighbour semantics, growth, device path, and DLPack field views that
//! read and write the right bytes.
//!
//! The device path runs on `FakeDeviceArena` (host memory behind pointers the host cannot
//! dereference, with the host's copies): it checks that nothing dereferences device
//! memory on the host and that data moves through the arena's copies, not anything a GPU
//! does (`gpu.rs` has the GPU tests, ignored without a device).

use amrex_aos::{ArrayOfStructs, FieldKind, Particle, ParticleReal, idcpu};
use amrex_arena::testing::FakeDeviceArena;
use amrex_dlpack_core::{DLDeviceType, DataType, ErrorKind, ManagedTensor, flags};
use core::mem::size_of;
use proptest::prelude::*;

type P = Particle<2, 1>;
const R: usize = size_of::<ParticleReal>();

fn particle(i: usize) -> P {
    let f = i as ParticleReal;
    P::with_fields(
        [f, f + 0.25, f + 0.5],
        [10.0 * f, 20.0 * f],
        i as i64 + 1,
        (i % 7) as i32,
        [-(i as i32)],
    )
}

fn filled(n: usize) -> ArrayOfStructs<P> {
    (0..n).map(particle).collect()
}

/// Reads element `i` of a rank-1 tensor of `T` through its own data pointer and stride.
fn read<T: Copy>(t: &ManagedTensor<'_>, i: usize) -> T {
    let v = t.view();
    let p = v.data_ptr().cast::<T>();
    // SAFETY: `i` < extent; the tensor describes live host memory of `T`.
    unsafe { p.wrapping_offset(i as isize * v.stride(0) as isize).read() }
}

#[test]
fn neighbour_counts() {
    let mut a = filled(5);
    assert_eq!((a.len(), a.num_particles(), a.num_neighbors()), (5, 5, 0));
    a.set_num_neighbors(3).unwrap();
    assert_eq!((a.len(), a.num_particles(), a.num_neighbors()), (8, 5, 3));
    assert_eq!(a.particles().len(), 5);
    assert_eq!(a.neighbors().len(), 3);
    assert!(a.neighbors().iter().all(|p| !p.is_valid() && p.id() == 0));
    a.set_num_neighbors(1).unwrap();
    assert_eq!((a.len(), a.num_particles()), (6, 5));
    a.truncate(4);
    assert_eq!((a.len(), a.num_neighbors(), a.num_particles()), (4, 0, 4));
    a.set_num_neighbors(2).unwrap();
    assert_eq!(a.pop().map(|p| p.id()), Some(0));
    assert_eq!((a.len(), a.num_neighbors()), (5, 1));
    a.clear();
    assert_eq!((a.len(), a.num_neighbors()), (0, 0));
}

#[test]
fn growth_is_geometric() {
    let mut a = ArrayOfStructs::<P>::new();
    a.push(particle(0));
    // First allocation: max(64 / 56, 1) = 1, then (3c + 1) / 2.
    assert_eq!(a.capacity(), 1);
    a.push(particle(1));
    assert_eq!(a.capacity(), 2);
    a.push(particle(2));
    assert_eq!(a.capacity(), 3);
    a.push(particle(3));
    assert_eq!(a.capacity(), 5);
    assert_eq!(
        a.as_slice(),
        &[particle(0), particle(1), particle(2), particle(3)]
    );
    a.try_shrink_to_fit().unwrap();
    assert_eq!(a.capacity(), 4);
    let b = a.clone();
    assert_eq!(b.as_slice(), a.as_slice());
}

#[test]
fn field_views_read_the_right_bytes() {
    let a = filled(6);
    let expect_stride_r = (size_of::<P>() / R) as i64;
    for d in 0..3 {
        let t = a.field_to_dlpack(FieldKind::Position(d)).unwrap();
        assert_eq!(t.shape(), &[6]);
        assert_eq!(t.view().stride(0), expect_stride_r);
        assert_eq!(t.dtype(), DataType::of::<ParticleReal>());
        assert!(t.is_read_only());
        for i in 0..6 {
            assert_eq!(read::<ParticleReal>(&t, i), a[i].pos[d]);
        }
    }
    for n in 0..2 {
        let t = a.field_to_dlpack(FieldKind::Real(n)).unwrap();
        for i in 0..6 {
            assert_eq!(read::<ParticleReal>(&t, i), a[i].rdata[n]);
        }
    }
    let t = a.field_to_dlpack(FieldKind::IdCpu).unwrap();
    assert_eq!(t.dtype(), DataType::U64);
    assert_eq!(t.view().stride(0), (size_of::<P>() / 8) as i64);
    for i in 0..6 {
        let w: u64 = read(&t, i);
        assert_eq!(w, idcpu::make_id_cpu(i as i64 + 1, (i % 7) as i32));
    }
    let t = a.field_to_dlpack(FieldKind::Int(0)).unwrap();
    assert_eq!(t.dtype(), DataType::I32);
    assert_eq!(t.view().stride(0), (size_of::<P>() / 4) as i64);
    for i in 0..6 {
        assert_eq!(read::<i32>(&t, i), -(i as i32));
    }
    // Typed access through dlpack-core's validated view agrees.
    let t = a.field_to_dlpack(FieldKind::Real(1)).unwrap();
    let v = t.view().typed::<ParticleReal>().unwrap().to_vec();
    assert_eq!(
        v,
        (0..6).map(|i| 20.0 * i as ParticleReal).collect::<Vec<_>>()
    );
    // No such field.
    let err = a.field_to_dlpack(FieldKind::Int(1)).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Unsupported(_)));
}

#[test]
fn field_views_write_the_right_bytes() {
    let mut a = filled(4);
    let before = a.to_host_vec().unwrap();
    {
        let mut t = a.field_to_dlpack_mut(FieldKind::Position(1)).unwrap();
        assert!(!t.is_read_only());
        let mut v = t.view_mut().unwrap().typed_mut::<ParticleReal>().unwrap();
        *v.get_mut(&[2]).unwrap() = -1.5;
    }
    {
        let mut t = a.field_to_dlpack_mut(FieldKind::Int(0)).unwrap();
        let mut v = t.view_mut().unwrap().typed_mut::<i32>().unwrap();
        *v.get_mut(&[3]).unwrap() = 99;
    }
    {
        let mut t = a.field_to_dlpack_mut(FieldKind::IdCpu).unwrap();
        let mut v = t.view_mut().unwrap().typed_mut::<u64>().unwrap();
        *v.get_mut(&[0]).unwrap() = idcpu::make_id_cpu(-5, 2);
    }
    for (i, (p, q)) in a.iter().zip(&before).enumerate() {
        let mut expect = *q;
        if i == 2 {
            expect.pos[1] = -1.5;
        }
        if i == 3 {
            expect.idata[0] = 99;
        }
        if i == 0 {
            expect.idcpu = idcpu::make_id_cpu(-5, 2);
        }
        assert_eq!(*p, expect, "particle {i}");
    }
    assert_eq!((a[0].id(), a[0].cpu(), a[0].is_valid()), (-5, 2, false));
}

#[test]
fn all_fields_at_once() {
    let mut a = filled(3);
    let views = a.fields_to_dlpack_mut().unwrap();
    let kinds: Vec<_> = views.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        kinds,
        [
            FieldKind::Position(0),
            FieldKind::Position(1),
            FieldKind::Position(2),
            FieldKind::Real(0),
            FieldKind::Real(1),
            FieldKind::IdCpu,
            FieldKind::Int(0),
        ]
    );
    // Write through two different views while both are alive.
    let (x, rest) = views.split_first().unwrap();
    let r0 = &rest[2].1;
    let px = x.1.view().data_ptr().cast::<ParticleReal>();
    let pr = r0.view().data_ptr().cast::<ParticleReal>();
    let s = x.1.view().stride(0) as usize;
    // SAFETY: element 1 of each writable view, in bounds.
    unsafe { px.wrapping_add(s).write(7.0) };
    // SAFETY: as above.
    unsafe { pr.wrapping_add(s).write(8.0) };
    drop(views);
    assert_eq!((a[1].pos[0], a[1].rdata[0]), (7.0, 8.0));
    let ro = a.fields_to_dlpack().unwrap();
    assert!(ro.iter().all(|(_, t)| t.flags() & flags::READ_ONLY != 0));
}

#[test]
fn real_block_view() {
    let mut a = filled(5);
    let t = a.real_block_to_dlpack().unwrap();
    assert_eq!(t.shape(), &[5, 5]);
    assert_eq!(
        t.view().strides().collect::<Vec<_>>(),
        [(size_of::<P>() / R) as i64, 1]
    );
    let v = t.view().typed::<ParticleReal>().unwrap();
    for i in 0..5 {
        for c in 0..5 {
            let p = &a[i];
            let want = if c < 3 { p.pos[c] } else { p.rdata[c - 3] };
            assert_eq!(*v.get(&[i, c]).unwrap(), want);
        }
    }
    drop(t);
    let mut t = a.real_block_to_dlpack_mut().unwrap();
    let mut v = t.view_mut().unwrap().typed_mut::<ParticleReal>().unwrap();
    *v.get_mut(&[4, 4]).unwrap() = 123.0;
    drop(t);
    assert_eq!(a[4].rdata[1], 123.0);
}

#[test]
fn empty_exports_have_null_data() {
    let a = ArrayOfStructs::<P>::new();
    let t = a.field_to_dlpack(FieldKind::Position(0)).unwrap();
    assert_eq!(t.shape(), &[0]);
    assert!(t.view().data_ptr().is_null());
    // Still carries the stride.
    assert_eq!(t.view().stride(0), (size_of::<P>() / R) as i64);
}

#[test]
fn device_arena_never_dereferenced() {
    let mut a = ArrayOfStructs::<P, FakeDeviceArena>::new_in(FakeDeviceArena);
    for i in 0..5 {
        a.push(particle(i));
    }
    a.set_num_neighbors(2).unwrap();
    a.try_resize(9, particle(100)).unwrap();
    let host = a.to_host_vec().unwrap();
    assert_eq!(host.len(), 9);
    assert_eq!(&host[..5], &(0..5).map(particle).collect::<Vec<_>>()[..]);
    assert!(host[5..7].iter().all(|p| p.idcpu == 0));
    assert!(host[7..].iter().all(|p| *p == particle(100)));
    let c = a.try_clone().unwrap();
    assert_eq!(c.to_host_vec().unwrap(), host);
    let mut back = host.clone();
    back[0].pos[0] = 77.0;
    a.copy_from_host(&back).unwrap();
    assert_eq!(a.to_host_vec().unwrap()[0].pos[0], 77.0);
    // Views describe device memory; only the pointer is computed.
    let t = a.field_to_dlpack(FieldKind::Real(0)).unwrap();
    assert_eq!(t.device().device_type, DLDeviceType::CUDA);
    assert_eq!(
        t.view().data_ptr().addr(),
        a.as_ptr().addr() + core::mem::offset_of!(P, rdata)
    );
    let err = t.view().typed::<ParticleReal>().unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::NotHostAccessible(_)));
}

const CASES: u32 = 64;

/// Fewer cases under Miri, and no failure persistence there (it needs the file system).
fn config() -> ProptestConfig {
    let mut c = ProptestConfig::with_cases(if cfg!(miri) { 3 } else { CASES });
    if cfg!(miri) {
        c.failure_persistence = None;
    }
    c
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn views_round_trip(n in 0usize..20, field in 0usize..7, value in -1e6f64..1e6) {
        use amrex_aos::ParticleLayout;
        let mut a = filled(n);
        let before = a.to_host_vec().unwrap();
        let f = P::field(field).unwrap();
        let bits = value as i64;
        {
            let mut t = a.field_to_dlpack_mut(f.kind).unwrap();
            prop_assert_eq!(t.shape(), &[n as i64]);
            let v = t.view_mut().unwrap();
            for i in 0..n {
                let off = i as isize * v.stride(0) as isize;
                let p = v.data_ptr();
                match f.kind {
                    // SAFETY: in bounds of a writable host tensor of the field's dtype.
                    FieldKind::IdCpu => unsafe { p.cast::<u64>().wrapping_offset(off).write(bits as u64 ^ i as u64) },
                    // SAFETY: as above.
                    FieldKind::Int(_) => unsafe { p.cast::<i32>().wrapping_offset(off).write(bits as i32 ^ i as i32) },
                    // SAFETY: as above.
                    _ => unsafe { p.cast::<ParticleReal>().wrapping_offset(off).write(value as ParticleReal + i as ParticleReal) },
                }
            }
        }
        for (i, (p, q)) in a.iter().zip(&before).enumerate() {
            let mut e = *q;
            match f.kind {
                FieldKind::Position(d) => e.pos[d] = value as ParticleReal + i as ParticleReal,
                FieldKind::Real(r) => e.rdata[r] = value as ParticleReal + i as ParticleReal,
                FieldKind::IdCpu => e.idcpu = bits as u64 ^ i as u64,
                FieldKind::Int(k) => e.idata[k] = bits as i32 ^ i as i32,
                _ => unreachable!(),
            }
            prop_assert_eq!(*p, e);
        }
    }
}
