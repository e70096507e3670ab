//! StructOfArrays: components, names, neighbours, device path and DLPack round trips.
//!
//! The device path runs on `FakeDeviceArena` (host memory behind pointers the host cannot
//! dereference, with the host's copies): it checks the plumbing, not a GPU (`gpu.rs` has
//! the GPU tests, ignored without a device).

use amrex_aos::{FieldKind, ParticleError, ParticleReal, StructOfArrays, idcpu};
use amrex_arena::testing::FakeDeviceArena;
use amrex_dlpack_core::{DLDeviceType, DataType, FromDlpack};
use proptest::prelude::*;

#[test]
fn push_and_components() {
    let mut s = StructOfArrays::<2, 1>::new();
    assert_eq!((s.num_real_comps(), s.num_int_comps()), (2, 1));
    s.push(idcpu::make_id_cpu(1, 0), &[1.0, 2.0], &[3]).unwrap();
    s.push(idcpu::make_id_cpu(2, 1), &[4.0, 5.0], &[6]).unwrap();
    assert_eq!(s.len(), 2);
    assert_eq!(s.real(0).as_slice(), &[1.0, 4.0]);
    assert_eq!(s.real(1).as_slice(), &[2.0, 5.0]);
    assert_eq!(s.int(0).as_slice(), &[3, 6]);
    assert_eq!(idcpu::id(s.idcpu()[1]), 2);
    let e = s.push(0, &[1.0], &[0]).unwrap_err();
    assert!(matches!(
        e,
        ParticleError::ComponentCountMismatch {
            expected: 2,
            found: 1,
            ..
        }
    ));
    assert_eq!(s.len(), 2, "a refused push appends nothing");
    assert!(s.get_real(2).is_none());
}

#[test]
fn runtime_components_and_names() {
    let mut s = StructOfArrays::<1, 0>::new();
    s.push(0, &[1.0], &[]).unwrap();
    let w = s.add_real_comp(Some("w")).unwrap();
    let q = s.add_int_comp(None).unwrap();
    assert_eq!((w, q), (1, 0));
    assert_eq!(
        (s.num_runtime_real_comps(), s.num_runtime_int_comps()),
        (1, 1)
    );
    assert_eq!(s.real(1).as_slice(), &[0.0], "new component is zero-filled");
    assert_eq!(s.int(0).as_slice(), &[0]);
    assert!(matches!(
        s.add_real_comp(Some("w")),
        Err(ParticleError::DuplicateName(_))
    ));
    s.set_real_name(0, "x").unwrap();
    assert_eq!(s.find_real("x"), Some(0));
    assert_eq!(s.real_name(1), Some("w"));
    assert_eq!(s.int_name(0), None);
    assert!(s.set_real_name(1, "x").is_err());
    assert!(matches!(
        s.set_int_name(5, "a"),
        Err(ParticleError::NoSuchComponent {
            index: 5,
            count: 1,
            ..
        })
    ));
    s.push(0, &[2.0, 3.0], &[4]).unwrap();
    assert_eq!(s.real_by_name("w").unwrap().as_slice(), &[0.0, 3.0]);
    let mut c = s.components_mut();
    c.reals[1][0] = 9.0;
    c.ints[0][1] = 8;
    assert_eq!(s.real(1).as_slice(), &[9.0, 3.0]);
    assert_eq!(s.int(0).as_slice(), &[0, 8]);
}

#[test]
fn neighbours() {
    let mut s = StructOfArrays::<1, 1>::new();
    for i in 0..4 {
        s.push(idcpu::make_id_cpu(i + 1, 0), &[i as ParticleReal], &[0])
            .unwrap();
    }
    s.set_num_neighbors(3).unwrap();
    assert_eq!((s.len(), s.num_particles(), s.num_neighbors()), (7, 4, 3));
    assert!(s.idcpu()[4..].iter().all(|&w| !idcpu::is_valid(w)));
    s.resize(5).unwrap();
    assert_eq!((s.len(), s.num_particles(), s.num_neighbors()), (5, 4, 1));
    s.resize(2).unwrap();
    assert_eq!((s.len(), s.num_particles(), s.num_neighbors()), (2, 2, 0));
    s.clear();
    assert!(s.is_empty());
}

#[test]
fn exports_are_zero_copy() {
    let mut s = StructOfArrays::<2, 1>::new();
    for i in 0..5 {
        s.push(
            idcpu::make_id_cpu(i, 3),
            &[i as ParticleReal, -(i as ParticleReal)],
            &[i as i32],
        )
        .unwrap();
    }
    let t = s.real_to_dlpack(1).unwrap();
    assert_eq!(t.shape(), &[5]);
    assert_eq!(t.dtype(), DataType::of::<ParticleReal>());
    assert!(t.is_read_only());
    assert_eq!(t.view().data_ptr().cast_const().cast(), s.real(1).as_ptr());
    drop(t);
    {
        let mut t = s.int_to_dlpack_mut(0).unwrap();
        t.as_mut_slice::<i32>().unwrap()[4] = 40;
    }
    assert_eq!(s.int(0)[4], 40);
    {
        let mut all = s.to_dlpack_all_mut();
        assert_eq!(
            all.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
            [
                FieldKind::IdCpu,
                FieldKind::Real(0),
                FieldKind::Real(1),
                FieldKind::Int(0)
            ]
        );
        all[0].1.as_mut_slice::<u64>().unwrap()[0] = idcpu::make_id_cpu(-9, 1);
        all[1].1.as_mut_slice::<ParticleReal>().unwrap()[0] = 0.5;
    }
    assert_eq!(idcpu::id(s.idcpu()[0]), -9);
    assert_eq!(s.real(0)[0], 0.5);
    let ids = Vec::<u64>::from_dlpack(s.idcpu_to_dlpack()).unwrap();
    assert_eq!(ids, s.idcpu().as_slice());
    assert!(s.to_dlpack_all().iter().all(|(_, t)| t.is_read_only()));
    assert!(s.real_to_dlpack(2).is_none());
}

#[test]
fn device_soa() {
    let mut s = StructOfArrays::<2, 0, FakeDeviceArena>::new_in(FakeDeviceArena);
    s.push(idcpu::make_id_cpu(1, 0), &[1.0, 2.0], &[]).unwrap();
    s.add_real_comp(Some("extra")).unwrap();
    s.set_num_neighbors(2).unwrap();
    assert_eq!(s.len(), 3);
    assert_eq!(s.real(1).to_host_vec().unwrap(), [2.0, 0.0, 0.0]);
    let t = s.real_to_dlpack(0).unwrap();
    assert_eq!(t.device().device_type, DLDeviceType::CUDA);
    assert_eq!(t.shape(), &[3]);
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

    /// Export then import (copying) gives back every component exactly.
    #[test]
    fn component_round_trip(
        rows in proptest::collection::vec((any::<i32>(), -1e9f64..1e9, -1e9f64..1e9, any::<i32>()), 0..30),
        extra in 0usize..3,
    ) {
        let mut s = StructOfArrays::<2, 1>::new();
        for _ in 0..extra {
            s.add_real_comp(None).unwrap();
        }
        for (i, &(id, a, b, k)) in rows.iter().enumerate() {
            let id = i64::from(id) % idcpu::MAX_ID;
            let mut reals = vec![a as ParticleReal, b as ParticleReal];
            reals.extend((0..extra).map(|e| (e + i) as ParticleReal));
            s.push(idcpu::make_id_cpu(id, (i % 100) as i32), &reals, &[k]).unwrap();
        }
        let ids = Vec::<u64>::from_dlpack(s.idcpu_to_dlpack()).unwrap();
        prop_assert_eq!(ids.len(), rows.len());
        for (i, (&w, &(id, a, b, k))) in ids.iter().zip(&rows).enumerate() {
            prop_assert_eq!(idcpu::id(w), i64::from(id) % idcpu::MAX_ID);
            prop_assert_eq!(idcpu::cpu(w), (i % 100) as i32);
            prop_assert_eq!(s.real(0)[i], a as ParticleReal);
            prop_assert_eq!(s.real(1)[i], b as ParticleReal);
            prop_assert_eq!(s.int(0)[i], k);
        }
        for c in 0..s.num_real_comps() {
            let back = Vec::<ParticleReal>::from_dlpack(s.real_to_dlpack(c).unwrap()).unwrap();
            prop_assert_eq!(&back[..], s.real(c).as_slice());
        }
    }
}
