//! DLPack per-box export and import.
#![warn(clippy::cast_possible_truncation)]

use amrex_box::{IndexBox, IntVect};
use amrex_dlpack_core::{ErrorKind, ManagedTensor, TensorSpec, flags::READ_ONLY};
use amrex_multifab::{BoxArray, DistributionMapping, Ghosts, MultiFab, Periodicity, Tiling};

fn f(p: IntVect, n: usize) -> f64 {
    f64::from(p[0]) + 10.0 * f64::from(p[1]) + 100.0 * f64::from(p[2]) + 1000.0 * n as f64
}

/// The periodic domain: 8 x 6 x 4 cells (4 x 4 x 2 under Miri), 2 x 2 x 1 boxes.
fn domain() -> IndexBox {
    let hi = if cfg!(miri) {
        IntVect::new(3, 3, 1)
    } else {
        IntVect::new(7, 5, 3)
    };
    IndexBox::new(IntVect::ZERO, hi)
}

/// Valid cells hold `f`; with `ghosts`, ghost cells are filled (periodic) too.
fn setup(ghosts: bool) -> (BoxArray, DistributionMapping, MultiFab) {
    let domain = domain();
    let len = domain.length();
    let ba = BoxArray::from_domain_iv(domain, IntVect::new(len[0] / 2, len[1] / 2, len[2]));
    let dm = DistributionMapping::single(&ba);
    let mut mf = MultiFab::new(&ba, &dm, 2, IntVect::new(1, 2, 1));
    for mfi in mf.mfiter(Tiling::None) {
        let vbx = mfi.validbox();
        let mut a = mf.array_mut(&mfi);
        a.for_each_mut(vbx, |i, j, k, n, v| *v = f(IntVect::new(i, j, k), n));
    }
    if ghosts {
        mf.fill_boundary(Periodicity::all(domain)).unwrap();
    }
    (ba, dm, mf)
}

#[test]
fn every_per_box_tensor_reads_the_right_values_including_ghosts() {
    let (ba, _dm, mut mf) = setup(true);
    let len = domain().length();
    let want = |p: IntVect, n: usize| {
        let q = IntVect::new(
            p[0].rem_euclid(len[0]),
            p[1].rem_euclid(len[1]),
            p[2].rem_euclid(len[2]),
        );
        f(q, n)
    };
    for ghosts in [Ghosts::Exclude, Ghosts::Include] {
        let boxes: Vec<IndexBox> = (0..ba.len())
            .map(|g| match ghosts {
                Ghosts::Include => mf.fabbox(g),
                Ghosts::Exclude => ba.get(g),
            })
            .collect();
        let tensors = mf.to_dlpack_per_box(ghosts);
        assert_eq!(tensors.len(), ba.len());
        assert_eq!(ba.len(), 4);
        for (t, bx) in tensors.iter().zip(&boxes) {
            let len = bx.length();
            assert_eq!(
                t.shape(),
                &[2, i64::from(len[2]), i64::from(len[1]), i64::from(len[0])]
            );
            let v = t.view().typed::<f64>().unwrap();
            for p in bx.iter() {
                let d = p - bx.lo();
                for n in 0..2 {
                    let idx = [n, d[2] as usize, d[1] as usize, d[0] as usize];
                    assert_eq!(
                        *v.get(&idx).unwrap(),
                        want(p, n),
                        "cell {p} comp {n} ghosts {ghosts:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn shared_export_keeps_the_data_alive() {
    let (_ba, _dm, mf) = setup(false);
    // SAFETY: the FabArray is not used while the tensors are read.
    let tensors = unsafe { mf.to_dlpack_per_box_detached(Ghosts::Exclude) };
    drop(mf);
    let v = tensors[0].view().typed::<f64>().unwrap();
    assert_eq!(*v.get(&[1, 0, 0, 1]).unwrap(), f(IntVect::new(1, 0, 0), 1));
}

#[test]
fn import_builds_a_non_owning_multifab_that_writes_through() {
    let (ba, dm, mf) = setup(false);
    // SAFETY: `mf` is not used while the imported FabArray writes (until `view` drops).
    let tensors = unsafe { mf.to_dlpack_per_box_detached(Ghosts::Include) };
    let mut view = MultiFab::from_dlpack_per_box(&ba, &dm, mf.n_grow(), tensors).unwrap();
    assert_eq!(view.ncomp(), 2);
    assert_eq!(view.sum(0..2, 0).unwrap(), mf.sum(0..2, 0).unwrap());
    view.set_val(5.0, 1..2, 0).unwrap();
    drop(view);
    assert_eq!(mf.max(1..2, 0).unwrap(), 5.0);
    assert_eq!(mf.min(1..2, 0).unwrap(), 5.0);
}

#[test]
fn import_refuses_bad_tensors() {
    let (ba, dm, mf) = setup(false);
    let ng = mf.n_grow();
    // Wrong count.
    // SAFETY: `mf` is only read while the tensors live.
    let mut t = unsafe { mf.to_dlpack_per_box_detached(Ghosts::Include) };
    t.pop();
    let e = MultiFab::from_dlpack_per_box(&ba, &dm, ng, t).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::LengthMismatch { .. }), "{e}");
    // Wrong shape (valid-only tensors for a FabArray with ghost cells).
    // SAFETY: `mf` is only read while the tensors live.
    let t = unsafe { mf.to_dlpack_per_box_detached(Ghosts::Exclude) };
    let e = MultiFab::from_dlpack_per_box(&ba, &dm, ng, t).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::ShapeMismatch { .. }), "{e}");
    // Read-only.
    let data = vec![0.0f64; 8];
    let shape = [1i64, 2, 2, 2];
    let strides = [8i64, 4, 2, 1];
    let spec = TensorSpec::host(data.as_ptr(), &shape, &strides).with_flags(READ_ONLY);
    // SAFETY: `data` is moved into the owner and not moved in memory.
    let ro = unsafe { ManagedTensor::from_owner(data, &spec) };
    let one = BoxArray::new(vec![IndexBox::new(IntVect::ZERO, IntVect::splat(1))]);
    let e = MultiFab::from_dlpack_per_box(
        &one,
        &DistributionMapping::single(&one),
        IntVect::ZERO,
        vec![ro],
    )
    .unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::ReadOnly), "{e}");
    // Overlapping strides.
    let data = vec![0.0f64; 8];
    let strides = [8i64, 1, 2, 1];
    let spec = TensorSpec::host(data.as_ptr(), &shape, &strides);
    // SAFETY: as above.
    let ov = unsafe { ManagedTensor::from_owner(data, &spec) };
    let e = MultiFab::from_dlpack_per_box(
        &one,
        &DistributionMapping::single(&one),
        IntVect::ZERO,
        vec![ov],
    )
    .unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::OverlappingStrides), "{e}");
    // k faster than j, but no two cells share an element: accepted, as BaseFab accepts it.
    let data = vec![0.0f64; 8];
    let strides = [8i64, 2, 4, 1];
    let spec = TensorSpec::host(data.as_ptr(), &shape, &strides);
    // SAFETY: as above.
    let kj = unsafe { ManagedTensor::from_owner(data, &spec) };
    let mf = MultiFab::from_dlpack_per_box(
        &one,
        &DistributionMapping::single(&one),
        IntVect::ZERO,
        vec![kj],
    )
    .unwrap();
    assert_eq!(mf.fab(0).strides()[..2], [4, 2]);
}
