//! `fab(i)` / `fab_mut(i)` / `fa[&mfi]`: the local boxes' `BaseFab`s.
#![warn(clippy::cast_possible_truncation)]

use amrex_box::{IndexBox, IntVect};
use amrex_dlpack_core::{ManagedTensor, TensorSpec, ToDlpack, flags::READ_ONLY};
use amrex_multifab::{
    BaseFab, BoxArray, DistributionMapping, Ghosts, HostArena, MultiFab, Periodicity, Strategy,
    Tiling, iMultiFab,
};

fn layout() -> (BoxArray, DistributionMapping) {
    let domain = IndexBox::new(IntVect::ZERO, IntVect::new(7, 5, 3));
    let ba = BoxArray::from_domain_iv(domain, IntVect::new(4, 3, 2));
    let dm = DistributionMapping::single(&ba);
    (ba, dm)
}

#[test]
fn fab_by_local_index_and_by_mfi_is_the_local_box_fab() {
    let (ba, dm) = layout();
    let ng = IntVect::new(1, 2, 0);
    let mut mf = MultiFab::new(&ba, &dm, 3, ng);
    assert_eq!(mf.fabs().len(), ba.len());
    for mfi in mf.mfiter(Tiling::None) {
        let l = mfi.local_index();
        let fab = mf.fab(&mfi);
        assert_eq!(fab.index_box(), ba.get(mfi.index()).grow_iv(ng));
        assert_eq!(fab.index_box(), mfi.fabbox());
        assert_eq!(fab.ncomp(), 3);
        assert!(fab.is_owning());
        assert!(core::ptr::eq(fab, mf.fab(l)));
        assert!(core::ptr::eq(fab, &mf[&mfi]));
    }
    // Writes through the fab are what the FabArray and its Array4 see.
    for mfi in mf.mfiter(Tiling::None) {
        let vbx = mfi.validbox();
        let g = mfi.index() as f64;
        mf.fab_mut(&mfi).set_val(g, 0..1, vbx).unwrap();
        mf[&mfi].set_val(1.0, 2..3, vbx).unwrap();
        let mut a = mf.fab_mut(mfi.local_index()).array_mut().unwrap();
        a[(vbx.lo()[0], vbx.lo()[1], vbx.lo()[2], 1)] = 7.0;
    }
    let ncell = |g: usize| ba.get(g).num_pts() as f64;
    let want0: f64 = (0..ba.len()).map(|g| g as f64 * ncell(g)).sum();
    assert_eq!(mf.sum(0..1, 0).unwrap(), want0);
    assert_eq!(mf.sum(1..2, 0).unwrap(), 7.0 * ba.len() as f64);
    assert_eq!(mf.sum(2..3, ng).unwrap(), 8.0 * 6.0 * 4.0);
    // Per-fab BaseFab reductions agree with the FabArray's.
    let by_fab: f64 = mf
        .mfiter(Tiling::None)
        .map(|mfi| mf[&mfi].sum(0..1, mfi.validbox()).unwrap())
        .sum();
    assert_eq!(by_fab, want0);
    for mfi in mf.mfiter(Tiling::None) {
        assert_eq!(
            mf.array(&mfi)[(
                mfi.validbox().lo()[0],
                mfi.validbox().lo()[1],
                mfi.validbox().lo()[2],
                0
            )],
            mfi.index() as f64
        );
    }
    // fabs_mut visits each fab once.
    for f in mf.fabs_mut() {
        let bx = f.index_box();
        f.plus(1.0, 1..2, bx).unwrap();
    }
    let npts: u64 = (0..ba.len()).map(|g| mf.fabbox(g).num_pts()).sum();
    assert_eq!(
        mf.sum(1..2, ng).unwrap(),
        7.0 * ba.len() as f64 + npts as f64
    );
}

#[test]
fn mfi_selects_by_global_index_on_other_ranks() {
    let (ba, _) = layout();
    let dm = DistributionMapping::with_strategy(&ba, 3, Strategy::RoundRobin);
    let rank = 1;
    let mut mf: iMultiFab =
        iMultiFab::try_new_on_rank_in(&ba, &dm, 1, IntVect::splat(1), rank, HostArena).unwrap();
    assert!(mf.local_size() < ba.len());
    for mfi in mf.mfiter(Tiling::None) {
        let g = mfi.index();
        assert_eq!(dm.rank_of(g), rank);
        let vbx = mfi.validbox();
        mf.fab_mut(&mfi)
            .set_val(i32::try_from(g).unwrap(), .., vbx)
            .unwrap();
    }
    for mfi in mf.mfiter(Tiling::None) {
        let g = mfi.index();
        assert_eq!(mf.fab(&mfi).index_box(), mf.fabbox(g));
        assert_eq!(
            mf.fab(&mfi).max(0..1, mfi.validbox()).unwrap(),
            i32::try_from(g).unwrap()
        );
    }
}

#[test]
#[should_panic(expected = "not local")]
fn fab_of_a_box_of_another_rank_panics() {
    let (ba, _) = layout();
    let dm = DistributionMapping::with_strategy(&ba, 2, Strategy::RoundRobin);
    let on0 = MultiFab::try_new_on_rank_in(&ba, &dm, 1, IntVect::ZERO, 0, HostArena).unwrap();
    let on1 = MultiFab::try_new_on_rank_in(&ba, &dm, 1, IntVect::ZERO, 1, HostArena).unwrap();
    let mfi = on1.mfiter(Tiling::None).next().unwrap();
    let _ = on0.fab(&mfi);
}

#[test]
#[should_panic(expected = "out of range")]
fn fab_local_index_out_of_range_panics() {
    let (ba, dm) = layout();
    let mf = MultiFab::new(&ba, &dm, 1, IntVect::ZERO);
    let _ = mf.fab(ba.len());
}

#[test]
fn a_fab_swapped_for_one_of_the_same_shape_is_used() {
    let (ba, dm) = layout();
    let mut mf = MultiFab::new(&ba, &dm, 2, IntVect::splat(1));
    let bx = mf.fabbox(0);
    let mut other = BaseFab::new(bx, 2);
    other.set_val(3.0, .., bx).unwrap();
    core::mem::swap(mf.fab_mut(0), &mut other);
    assert_eq!(other.sum(0..1, bx).unwrap(), 0.0);
    assert_eq!(mf.sum(0..1, 0).unwrap(), 3.0 * ba.get(0).num_pts() as f64);
    mf.fill_boundary(Periodicity::new(ba.minimal_box(), [false; 3]))
        .unwrap();
    mf.fill(1.0).unwrap();
    assert_eq!(mf.fab(0).sum(1..2, bx).unwrap(), bx.num_pts() as f64);
    // Resizing to the same box keeps the fab usable.
    mf.fab_mut(0).resize(bx, 2).unwrap();
    assert_eq!(mf.norm0(0..2, 1).unwrap(), 1.0);
}

#[test]
#[should_panic(expected = "replaced through fab_mut")]
fn a_fab_resized_through_fab_mut_is_refused_by_operations() {
    let (ba, dm) = layout();
    let mut mf = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
    let big = mf.fabbox(0).grow(1);
    mf.fab_mut(0).resize(big, 1).unwrap();
    mf.fill(1.0).unwrap();
}

#[test]
#[should_panic(expected = "read-only")]
fn a_read_only_fab_swapped_in_is_refused_by_operations() {
    let (ba, dm) = layout();
    let mut mf = MultiFab::new(&ba, &dm, 1, IntVect::ZERO);
    let bx = mf.fabbox(0);
    let len = bx.length();
    let data = vec![0.0f64; bx.checked_num_pts_usize().unwrap()];
    let shape = [1, i64::from(len[2]), i64::from(len[1]), i64::from(len[0])];
    let strides = [
        shape[1] * shape[2] * shape[3],
        shape[2] * shape[3],
        shape[3],
        1,
    ];
    let spec = TensorSpec::host(data.as_ptr(), &shape, &strides).with_flags(READ_ONLY);
    // SAFETY: the vector moves into the tensor as its owner; its heap buffer does not
    // move, and nobody writes it.
    let t = unsafe { ManagedTensor::from_owner(data, &spec) };
    let mut ro = BaseFab::from_dlpack_at(t, bx.lo()).unwrap();
    assert!(ro.is_read_only());
    core::mem::swap(mf.fab_mut(0), &mut ro);
    let _ = mf.sum(0..1, 0).unwrap();
}

#[test]
fn fabs_of_an_imported_multifab_hold_the_tensors() {
    let (ba, dm) = layout();
    let ng = IntVect::splat(1);
    let mut src = MultiFab::new(&ba, &dm, 2, ng);
    src.fill(2.0).unwrap();
    // SAFETY: `src` is only read (below, after `view` is dropped) while the tensors live.
    let tensors = unsafe { src.to_dlpack_per_box_detached(Ghosts::Include) };
    let mut view = MultiFab::from_dlpack_per_box(&ba, &dm, ng, tensors).unwrap();
    for mfi in view.mfiter(Tiling::None) {
        let f = view.fab(&mfi);
        assert!(!f.is_owning());
        assert_eq!(f.index_box().lo(), mfi.fabbox().lo());
        assert_eq!(f.index_box().hi(), mfi.fabbox().hi());
        assert_eq!(f.ncomp(), 2);
    }
    let bx = view.box_of(view.global_index(0));
    view.fab_mut(0).set_val(5.0, 1..2, bx).unwrap();
    view.plus(1.0, 0..1, 0).unwrap();
    drop(view);
    assert_eq!(src.max(1..2, 0).unwrap(), 5.0);
    assert_eq!(src.min(0..1, 0).unwrap(), 3.0);
}

#[test]
fn a_fab_exports_through_dlpack() {
    let (ba, dm) = layout();
    let mut mf = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
    mf.fill(4.0).unwrap();
    let len = mf.fabbox(0).length();
    let t = mf.fab(0).to_dlpack().unwrap();
    assert_eq!(
        t.shape(),
        &[1, i64::from(len[2]), i64::from(len[1]), i64::from(len[0])]
    );
    assert!(t.is_read_only());
    assert_eq!(
        *t.view().typed::<f64>().unwrap().get(&[0, 0, 0, 0]).unwrap(),
        4.0
    );
}
