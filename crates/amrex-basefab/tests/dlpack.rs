//! BaseFab DLPack export/import, and the device (not host accessible) path.
//!
//! The device path runs on `FakeDeviceArena`: host memory behind pointers the host cannot
//! dereference, whose copies and kernels are the host's. Those tests check that device
//! fabs refuse host work, stage through host copies and export the device's tensors;
//! they say nothing about a GPU, on which no test here has run (`gpu.rs` is ignored
//! without one).
#![warn(clippy::cast_possible_truncation)]

use amrex_arena::testing::FakeDeviceArena;
use amrex_basefab::{Array4Mut, BaseFab, FabError, IndexBox, IntVect};
use amrex_dlpack_core::{
    DLDeviceType, DataType, Device, ErrorKind, FromDlpack, ManagedTensor, TensorSpec, ToDlpack,
    flags,
};
use core::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn cube(n: i32) -> IndexBox {
    IndexBox::new(IntVect::ZERO, IntVect::splat(n - 1))
}

fn filled(bx: IndexBox, ncomp: usize) -> BaseFab<'static, f64> {
    let mut f = BaseFab::<f64>::new(bx, ncomp);
    let mut a = f.array_mut().unwrap();
    for n in 0..ncomp {
        for p in bx.iter() {
            a[(p, n)] = f64::from(p[0] + 10 * p[1] + 100 * p[2]) + 1000.0 * n as f64;
        }
    }
    f
}

/// Counts drops, to check the deleter runs exactly once.
struct Counted(Vec<f64>, Arc<AtomicUsize>);
impl Drop for Counted {
    fn drop(&mut self) {
        self.1.fetch_add(1, Ordering::SeqCst);
    }
}

fn tensor_of(
    data: Vec<f64>,
    shape: &[i64],
    strides: &[i64],
    flags: u64,
    drops: &Arc<AtomicUsize>,
) -> ManagedTensor<'static> {
    let owner = Counted(data, drops.clone());
    let spec = TensorSpec::host(owner.0.as_ptr(), shape, strides).with_flags(flags);
    // SAFETY: the Vec's buffer covers every element the (test-chosen) shape and strides
    // reach, and moves into the tensor with its owner.
    unsafe { ManagedTensor::from_owner(owner, &spec) }
}

#[test]
fn export_shape_strides_and_flags() {
    let bx = cube(8);
    let mut f = filled(bx, 2);
    let t = (&f).to_dlpack().unwrap();
    assert_eq!(t.shape(), &[2, 8, 8, 8]);
    assert_eq!(t.view().strides().collect::<Vec<_>>(), [512, 64, 8, 1]);
    assert_eq!(t.dtype(), DataType::F64);
    assert_eq!(t.device(), Device::CPU);
    assert!(t.is_read_only());
    let v = t.view().typed::<f64>().unwrap();
    assert_eq!(*v.get(&[1, 3, 2, 1]).unwrap(), 1.0 + 20.0 + 300.0 + 1000.0);
    drop(t);
    {
        let mut t = (&mut f).to_dlpack().unwrap();
        assert!(!t.is_read_only());
        let mut v = t.view_mut().unwrap().typed_mut::<f64>().unwrap();
        *v.get_mut(&[0, 7, 0, 5]).unwrap() = -1.0;
    }
    assert_eq!(f.array().unwrap()[(5, 0, 7, 0)], -1.0);
    // A ghosted box exports from its own lo: consumer index 0 is lo.
    let g = filled(IndexBox::new(IntVect::splat(-1), IntVect::splat(2)), 1);
    let t = (&g).to_dlpack().unwrap();
    assert_eq!(
        *t.view().typed::<f64>().unwrap().get(&[0, 0, 0, 0]).unwrap(),
        -111.0
    );
}

#[test]
fn owned_export_moves_the_fab() {
    let f = filled(cube(4), 3);
    let p = f.as_ptr();
    let t = f.to_dlpack().unwrap();
    assert_eq!(t.view().data_ptr().cast_const().cast(), p);
    assert_eq!(t.shape(), &[3, 4, 4, 4]);
    assert!(!t.is_read_only());
    // Import it back: zero copy, same pointer, same values.
    let g = BaseFab::<f64>::from_dlpack_at(t, IntVect::splat(10)).unwrap();
    assert_eq!(g.as_ptr(), p);
    assert_eq!(
        g.index_box(),
        IndexBox::new(IntVect::splat(10), IntVect::splat(13))
    );
    assert_eq!(
        g.array().unwrap()[(11, 12, 13, 2)],
        1.0 + 20.0 + 300.0 + 2000.0
    );
}

#[test]
fn import_ranks_one_to_four() {
    let drops = Arc::new(AtomicUsize::new(0));
    let data: Vec<f64> = (0..24).map(f64::from).collect();
    for (shape, ncomp, len) in [
        (&[24][..], 1, [24, 1, 1]),
        (&[4, 6][..], 1, [6, 4, 1]),
        (&[2, 3, 4][..], 1, [4, 3, 2]),
        (&[2, 3, 2, 2][..], 2, [2, 2, 3]),
    ] {
        let mut strides = vec![0; shape.len()];
        amrex_dlpack_core::c_strides(shape, &mut strides);
        let t = tensor_of(data.clone(), shape, &strides, 0, &drops);
        let f = BaseFab::<f64>::from_dlpack(t).unwrap();
        assert_eq!(f.ncomp(), ncomp);
        assert_eq!(f.index_box().length(), IntVect::from(len));
        assert_eq!(
            f.sum(0..1, f.index_box()).unwrap(),
            (0..24 / ncomp).sum::<usize>() as f64
        );
        assert!(!f.is_read_only());
    }
    assert_eq!(
        drops.load(Ordering::SeqCst),
        4,
        "each deleter once, at drop"
    );
}

#[test]
fn import_strided_and_write_through() {
    let drops = Arc::new(AtomicUsize::new(0));
    // (nz=2, ny=2, nx=3) inside a (2, 4, 5) buffer: strides (20, 5, 1).
    let data = vec![0.0; 40];
    let t = tensor_of(data, &[2, 2, 3], &[20, 5, 1], 0, &drops);
    let base = t.view().data_ptr().cast::<f64>();
    let mut f = BaseFab::<f64>::from_dlpack(t).unwrap();
    assert_eq!(f.strides(), [5, 20, 40]);
    assert!(!f.is_contiguous());
    f.set_val(1.0, .., f.index_box()).unwrap();
    assert_eq!(f.sum(0..1, f.index_box()).unwrap(), 12.0);
    // SAFETY: element (i=2, j=1, k=1) = offset 2 + 5 + 20 of the live buffer the fab keeps.
    assert_eq!(unsafe { base.wrapping_add(27).read() }, 1.0);
    // SAFETY: offset 3 is padding outside the view, still inside the buffer.
    assert_eq!(unsafe { base.wrapping_add(3).read() }, 0.0);
    let host = f.to_host().unwrap();
    assert!(host.is_contiguous());
    assert_eq!(host.sum(0..1, host.index_box()).unwrap(), 12.0);
    drop(f);
    drop(host);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn import_refusals_free_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let d = || vec![0.0; 16];
    type Case = (ManagedTensor<'static>, fn(&ErrorKind) -> bool);
    let cases: Vec<Case> = vec![
        (
            tensor_of(d(), &[1, 1, 1, 1, 16], &[16, 16, 16, 16, 1], 0, &drops),
            |k| matches!(k, ErrorKind::RankMismatch { .. }),
        ),
        (tensor_of(d(), &[4, 4], &[4, 2], 0, &drops), |k| {
            matches!(k, ErrorKind::NonUnitStride { axis: 1, stride: 2 })
        }),
        (tensor_of(d(), &[2, 4], &[-4, 1], 0, &drops), |k| {
            matches!(k, ErrorKind::NegativeStride { axis: 0, .. })
        }),
        (tensor_of(d(), &[4, 4], &[0, 1], 0, &drops), |k| {
            matches!(k, ErrorKind::OverlappingStrides)
        }),
    ];
    let n = cases.len();
    for (t, ok) in cases {
        let e = BaseFab::<f64>::from_dlpack(t).unwrap_err();
        assert!(ok(&e.kind()), "{e}");
    }
    assert_eq!(drops.load(Ordering::SeqCst), n);
    // Wrong dtype.
    let t = ManagedTensor::from_vec(vec![1.0f32; 4]);
    let e = BaseFab::<f64>::from_dlpack(t).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::DtypeMismatch { .. }));
    // Overlapping strides are fine when read-only (a broadcast).
    let t = tensor_of(d(), &[4, 4], &[0, 1], flags::READ_ONLY, &drops);
    let f = BaseFab::<f64>::from_dlpack(t).unwrap();
    assert!(f.is_read_only());
    assert_eq!(f.sum(0..1, f.index_box()).unwrap(), 0.0);
}

#[test]
fn read_only_import() {
    let data = [1.0f64, 2.0, 3.0, 4.0];
    let t = ManagedTensor::from_slice(&data);
    let mut f = BaseFab::<f64>::from_dlpack(t).unwrap();
    assert!(f.is_read_only());
    assert_eq!(f.sum(0..1, f.index_box()).unwrap(), 10.0);
    let bx = f.index_box();
    assert_eq!(f.set_val(0.0, .., bx), Err(FabError::ReadOnly));
    assert!(matches!(
        (&mut f).to_dlpack().map(drop).unwrap_err().kind(),
        ErrorKind::ReadOnly
    ));
    let t = (&f).to_dlpack().unwrap();
    assert!(t.is_read_only());
    drop(t);
    // The owned export of a read-only fab stays READ_ONLY.
    let t = f.to_dlpack().unwrap();
    assert!(t.is_read_only());
}

#[test]
fn from_array4_sub_box_exports_strides() {
    let bx = cube(4);
    let mut data: Vec<f64> = (0..64).map(f64::from).collect();
    let sub = IndexBox::new(IntVect::splat(1), IntVect::splat(2));
    let a = Array4Mut::new(&mut data, bx, 1).into_sub_box(&sub);
    let f = BaseFab::from_array4(a);
    let t = (&f).to_dlpack().unwrap();
    assert_eq!(t.shape(), &[1, 2, 2, 2]);
    assert_eq!(t.view().strides().collect::<Vec<_>>(), [64, 16, 4, 1]);
    assert_eq!(
        *t.view().typed::<f64>().unwrap().get(&[0, 1, 1, 1]).unwrap(),
        42.0
    );
}

#[test]
fn device_fabs_refuse_host_work_and_stage() {
    let bx = cube(3);
    let mut d = BaseFab::<f64, FakeDeviceArena>::try_new_in(bx, 2, FakeDeviceArena).unwrap();
    let dev = Device::new(DLDeviceType::CUDA, 0);
    assert_eq!(d.device(), dev);
    assert!(!d.host_accessible());
    assert_eq!(
        d.set_val(1.0, .., bx),
        Err(FabError::NotHostAccessible(dev))
    );
    assert_eq!(d.sum(0..1, bx), Err(FabError::NotHostAccessible(dev)));
    assert!(matches!(d.array(), Err(FabError::NotHostAccessible(_))));
    assert!(matches!(d.as_slice(), Err(FabError::NotHostAccessible(_))));
    // Zero-filled on the device; stage through the host.
    let mut h = d.to_host().unwrap();
    assert_eq!(h.norm0(1..2, bx).unwrap(), 0.0);
    h.set_val(2.5, 1..2, bx).unwrap();
    d.copy_from_host_fab(&h).unwrap();
    let back = d.to_host().unwrap();
    assert_eq!(back.sum(1..2, bx).unwrap(), 2.5 * 27.0);
    let c = d.try_clone().unwrap();
    assert_eq!(c.to_host().unwrap().sum(1..2, bx).unwrap(), 2.5 * 27.0);
    // Host fabs copy into device fabs only with the same shape.
    let wrong = BaseFab::<f64>::new(cube(2), 2);
    assert!(matches!(
        d.copy_from_host_fab(&wrong),
        Err(FabError::BoxSizeMismatch { .. })
    ));
    // Export describes device memory.
    let t = (&d).to_dlpack().unwrap();
    assert_eq!(t.device(), dev);
    assert_eq!(t.shape(), &[2, 3, 3, 3]);
    drop(t);
    let t = d.to_dlpack().unwrap();
    // Imported device tensors are refused for host work too, and cannot be staged.
    let f = BaseFab::<f64>::from_dlpack(t).unwrap();
    assert_eq!(f.device(), dev);
    assert_eq!(f.max(0..1, bx), Err(FabError::NotHostAccessible(dev)));
    assert!(matches!(f.to_host(), Err(FabError::NotHostAccessible(_))));
}
