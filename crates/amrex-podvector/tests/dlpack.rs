//! DLPack export and import of `PodVector`.

use amrex_arena::{Arena, ArenaError, HostAccessible, HostArena, MemoryKind};
use amrex_dlpack_core::{
    DLDeviceType, DataType, Device, ErrorKind, FromDlpack, ManagedTensor, TensorSpec, ToDlpack,
};
use amrex_podvector::{DlpackVector, PodVector};
use core::sync::atomic::{AtomicUsize, Ordering};
use core::{alloc::Layout, ptr::NonNull};
use proptest::prelude::*;
use std::sync::Arc;

#[test]
fn owned_export_moves_the_vector_into_the_tensor() {
    let v = PodVector::from_slice(&[1.0f64, 2.0, 3.0]);
    let p = v.as_ptr();
    let t = v.to_dlpack().unwrap();
    let view = t.view();
    assert_eq!(view.data_ptr().cast::<f64>().cast_const(), p);
    assert_eq!(view.shape(), &[3]);
    assert_eq!(view.strides_raw(), Some(&[1i64][..]));
    assert_eq!(view.device(), Device::CPU);
    assert_eq!(view.dtype(), DataType::F64);
    assert!(!t.is_read_only());
    // Across the C ABI and back; dropping runs the deleter, which frees the vector.
    let raw = t.into_raw();
    // SAFETY: from `into_raw`, passed back once.
    let back = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    assert_eq!(back.as_slice::<f64>().unwrap(), &[1.0, 2.0, 3.0]);
}

#[test]
fn borrowed_exports_set_read_only_or_write_through() {
    let mut v = PodVector::from_slice(&[1i32, 2, 3]);
    {
        let t = (&v).to_dlpack().unwrap();
        assert!(t.is_read_only());
        assert_eq!(t.as_slice::<i32>().unwrap(), &[1, 2, 3]);
        let mut t = t;
        assert_eq!(
            t.as_mut_slice::<i32>().unwrap_err().kind(),
            ErrorKind::ReadOnly
        );
    }
    {
        let mut t = (&mut v).to_dlpack().unwrap();
        assert!(!t.is_read_only());
        t.as_mut_slice::<i32>().unwrap()[1] = 20;
    }
    assert_eq!(v, [1, 20, 3]);
}

/// Host memory reported as CUDA pinned, to see that exports carry the arena's device.
#[derive(Clone, Debug)]
struct FakePinned;
impl Arena for FakePinned {
    fn kind(&self) -> MemoryKind {
        MemoryKind::Pinned
    }
    fn device(&self) -> Device {
        Device::new(DLDeviceType::CUDA_HOST, 0)
    }
    fn allocate_nonzero(&self, l: Layout) -> Result<NonNull<u8>, ArenaError> {
        HostArena.allocate_nonzero(l)
    }
    amrex_arena::forward_to_host_arena!();
}
// SAFETY: global-allocator memory with synchronous copies.
unsafe impl HostAccessible for FakePinned {}

#[test]
fn empty_vector_exports_null_data_and_its_arenas_device() {
    let t = PodVector::<f32>::new().to_dlpack().unwrap();
    assert!(t.view().data_ptr().is_null());
    assert_eq!(t.shape(), &[0]);
    assert_eq!(t.device(), Device::CPU);
    let pinned = PodVector::<f32, _>::new_in(FakePinned);
    let t = (&pinned).to_dlpack().unwrap();
    assert!(t.view().data_ptr().is_null());
    assert_eq!(t.device(), Device::new(DLDeviceType::CUDA_HOST, 0));
    // Cleared vectors too (capacity kept, length 0).
    let mut v = PodVector::from_slice(&[1u8, 2]);
    v.clear();
    let t = v.to_dlpack().unwrap();
    assert!(t.view().data_ptr().is_null());
    // And an empty tensor imports as an empty vector, both ways.
    let empty = DlpackVector::<u8>::from_dlpack(t).unwrap();
    assert!(empty.is_empty());
    let t = PodVector::<u8>::new().to_dlpack().unwrap();
    assert!(PodVector::<u8>::from_dlpack(t).unwrap().is_empty());
}

#[test]
fn non_empty_export_on_another_arena_reports_its_device() {
    let v = PodVector::try_from_slice_in(&[1u16, 2], FakePinned).unwrap();
    let t = v.to_dlpack().unwrap();
    assert_eq!(t.device().device_type, DLDeviceType::CUDA_HOST);
    assert_eq!(t.as_slice::<u16>().unwrap(), &[1, 2]);
}

/// An owner that counts its drops, to see the deleter run exactly once.
struct Counted {
    _data: Vec<f64>,
    drops: Arc<AtomicUsize>,
}
impl Drop for Counted {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

fn counted_tensor(
    data: Vec<f64>,
    shape: &[i64],
    strides: &[i64],
    flags: u64,
) -> (ManagedTensor<'static>, Arc<AtomicUsize>) {
    let drops = Arc::new(AtomicUsize::new(0));
    let spec = TensorSpec::host(data.as_ptr(), shape, strides).with_flags(flags);
    // SAFETY: the Vec (moved into the owner) holds every element the shape and strides
    // reach; its buffer does not move.
    let t = unsafe {
        ManagedTensor::from_owner(
            Counted {
                _data: data,
                drops: drops.clone(),
            },
            &spec,
        )
    };
    (t, drops)
}

#[test]
fn adopted_view_calls_the_deleter_once_on_drop() {
    let (t, drops) = counted_tensor(vec![1.0, 2.0, 3.0], &[3], &[1], 0);
    let p = t.view().data_ptr();
    let mut v = DlpackVector::<f64>::from_dlpack(t).unwrap();
    assert_eq!(v.as_ptr().cast_mut().cast(), p); // zero copy
    assert_eq!(&*v, &[1.0, 2.0, 3.0]);
    v.as_mut_slice().unwrap()[0] = 10.0;
    assert_eq!(v[0], 10.0);
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    drop(v);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn import_refusals_are_specific_and_release_the_tensor() {
    let (t, drops) = counted_tensor(vec![0.0; 6], &[2, 3], &[3, 1], 0);
    let e = DlpackVector::<f64>::from_dlpack(t).unwrap_err();
    assert_eq!(
        e.kind(),
        ErrorKind::RankMismatch {
            expected: 1,
            found: 2
        }
    );
    assert_eq!(drops.load(Ordering::SeqCst), 1);

    let (t, drops) = counted_tensor(vec![0.0; 6], &[6], &[1], 0);
    let e = DlpackVector::<f32>::from_dlpack(t).unwrap_err();
    assert_eq!(
        e.kind(),
        ErrorKind::DtypeMismatch {
            expected: DataType::F32,
            found: DataType::F64
        }
    );
    assert_eq!(drops.load(Ordering::SeqCst), 1);

    let (t, _) = counted_tensor(vec![0.0; 6], &[3], &[2], 0);
    let e = DlpackVector::<f64>::from_dlpack(t).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NonUnitStride { axis: 0, stride: 2 });

    let (t, _) = counted_tensor(
        vec![0.0; 2],
        &[2],
        &[1],
        amrex_dlpack_core::flags::READ_ONLY,
    );
    let mut v = DlpackVector::<f64>::from_dlpack(t).unwrap();
    assert!(v.is_read_only());
    assert_eq!(v.as_mut_slice().unwrap_err().kind(), ErrorKind::ReadOnly);

    let data = vec![0.0f64; 2];
    let spec =
        TensorSpec::host(data.as_ptr(), &[2], &[1]).on_device(Device::new(DLDeviceType::CUDA, 0));
    // SAFETY: the owner keeps the memory alive; it is never dereferenced (device refused).
    let t = unsafe { ManagedTensor::from_owner(data, &spec) };
    let e = DlpackVector::<f64>::from_dlpack(t).unwrap_err();
    assert_eq!(
        e.kind(),
        ErrorKind::NotHostAccessible(Device::new(DLDeviceType::CUDA, 0))
    );
}

#[test]
fn copy_import_is_isolated_and_accepts_strides() {
    let (t, drops) = counted_tensor(vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0], &[3], &[2], 0);
    let v = PodVector::<f64>::from_dlpack(t).unwrap();
    assert_eq!(v, [0.0, 2.0, 4.0]);
    assert_eq!(v.capacity(), 3);
    assert_eq!(drops.load(Ordering::SeqCst), 1); // consumed: deleter ran

    let src = PodVector::from_slice(&[1i64, 2, 3]);
    let mut copy =
        PodVector::<i64, _>::from_dlpack_copy((&src).to_dlpack().unwrap(), FakePinned).unwrap();
    copy[0] = 100;
    assert_eq!(src, [1, 2, 3]);
    assert_eq!(copy, [100, 2, 3]);
    assert_eq!(copy.device().device_type, DLDeviceType::CUDA_HOST);

    let (t, _) = counted_tensor(vec![0.0; 4], &[2, 2], &[2, 1], 0);
    let e = PodVector::<f64>::from_dlpack(t).unwrap_err();
    assert_eq!(
        e.kind(),
        ErrorKind::RankMismatch {
            expected: 1,
            found: 2
        }
    );
}

#[cfg(feature = "ndarray")]
#[test]
fn ndarray_views() {
    let mut v = PodVector::from_slice(&[1.0f64, 2.0, 3.0]);
    assert_eq!(v.view().sum(), 6.0);
    v.view_mut().mapv_inplace(|x| x * 2.0);
    assert_eq!(v, [2.0, 4.0, 6.0]);
    assert_eq!(v.view().as_ptr(), v.as_ptr());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 4 } else { 128 }, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn export_then_import_is_the_identity(data in proptest::collection::vec(any::<i32>(), 0..64)) {
        let v = PodVector::from_slice(&data);
        let adopted = DlpackVector::<i32>::from_dlpack(v.clone().to_dlpack().unwrap()).unwrap();
        prop_assert_eq!(&*adopted, data.as_slice());
        let copied = PodVector::<i32>::from_dlpack(v.to_dlpack().unwrap()).unwrap();
        prop_assert_eq!(copied.as_slice(), data.as_slice());
    }
}
