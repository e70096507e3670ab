//! Who frees what, and when: the deleter runs exactly once however a tensor ends (dropped
//! unconsumed, consumed, refused, on another thread; a NULL deleter is accepted), the owner
//! outlives every view, and the edge-case layouts (zero size, scalars, NULL strides, negative
//! strides, byte offsets) export and import correctly.
#![cfg(feature = "alloc")]

mod common;

use amrex_dlpack_core::ffi::{DLManagedTensorVersioned, flags};
use amrex_dlpack_core::{
    DataType, Device, FromDlpack, LegacyManagedTensor, ManagedTensor, TensorSpec, ToDlpack,
};
use common::{Data, DropCounter, Ptr, RawBuilder, get, release, release_legacy};
use core::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

/// An export of `[0.0, 1.0, ..]` (rank 1) whose owner counts its drops.
fn counted_export(n: usize) -> (ManagedTensor<'static>, Arc<AtomicUsize>) {
    let drops = Arc::new(AtomicUsize::new(0));
    // A Vec, not a Box: moving a Box retags it as unique, which (under Stacked Borrows)
    // invalidates the data pointer taken before the move.
    let data: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let ptr = if n == 0 {
        core::ptr::null()
    } else {
        data.as_ptr()
    };
    let (shape, strides) = ([n as i64], [1]);
    let spec = TensorSpec::host(ptr, &shape, &strides);
    // SAFETY: the Vec moves into the tensor with the counter and does not move its heap
    // buffer; nobody else touches it.
    let t = unsafe { ManagedTensor::from_owner((data, DropCounter(Arc::clone(&drops))), &spec) };
    (t, drops)
}

/// A raw pointer that may cross threads (the DLPack deleter may run on any thread).
struct SendPtr(*mut DLManagedTensorVersioned);
// SAFETY: DLPack managed tensors may be handed to and freed on any thread; ours have `Send`
// owners.
unsafe impl Send for SendPtr {}

// ---------------------------------------------------------------- deleter exactly once

#[test]
fn dropped_unconsumed() {
    let (t, drops) = counted_export(3);
    assert_eq!(get(&drops), 0);
    drop(t);
    assert_eq!(get(&drops), 1);
}

#[test]
fn consumed_through_into_raw_and_from_raw() {
    let (t, drops) = counted_export(3);
    let raw = t.into_raw();
    assert_eq!(get(&drops), 0, "into_raw frees nothing");
    // SAFETY: `raw` came from `into_raw` and is adopted once.
    let back = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    assert_eq!(get(&drops), 0);
    assert_eq!(back.as_slice::<f64>().unwrap(), &[0.0, 1.0, 2.0]);
    drop(back);
    assert_eq!(get(&drops), 1);
}

#[test]
fn consumed_by_a_c_style_consumer_calling_the_deleter() {
    let (t, drops) = counted_export(2);
    let raw = t.into_raw();
    // SAFETY: `raw` is live; a consumer reads the deleter and calls it once.
    let deleter = unsafe { (*raw).deleter }.expect("exports always have a deleter");
    // SAFETY: called exactly once with the tensor it belongs to.
    unsafe { deleter(raw) };
    assert_eq!(get(&drops), 1);
}

#[test]
fn consumed_by_from_dlpack_copy() {
    let (t, drops) = counted_export(4);
    let v = Vec::<f64>::from_dlpack(t).unwrap();
    assert_eq!(v, [0.0, 1.0, 2.0, 3.0]);
    assert_eq!(get(&drops), 1, "the copy released the tensor");
}

#[test]
fn refused_import_of_our_own_export_frees_once() {
    // Major version 2.
    let (t, drops) = counted_export(2);
    let raw = t.into_raw();
    // SAFETY: we hold the only pointer to this live tensor.
    unsafe { (*raw).version.major = 2 };
    // SAFETY: ownership passes.
    assert!(unsafe { ManagedTensor::from_raw(raw) }.is_err());
    assert_eq!(get(&drops), 1);
    // Bad lanes.
    let (t, drops) = counted_export(2);
    let raw = t.into_raw();
    // SAFETY: as above.
    unsafe { (*raw).dl_tensor.dtype.lanes = 4 };
    // SAFETY: ownership passes.
    assert!(unsafe { ManagedTensor::from_raw(raw) }.is_err());
    assert_eq!(get(&drops), 1);
    // Unknown device.
    let (t, drops) = counted_export(2);
    let raw = t.into_raw();
    // SAFETY: as above.
    unsafe { (*raw).dl_tensor.device.device_type.0 = 99 };
    // SAFETY: ownership passes.
    assert!(unsafe { ManagedTensor::from_raw(raw) }.is_err());
    assert_eq!(get(&drops), 1);
}

#[test]
fn moved_to_another_thread_and_dropped_there() {
    let (t, drops) = counted_export(3);
    let here = std::thread::current().id();
    let dropped_on = std::thread::spawn(move || {
        assert_eq!(t.as_slice::<f64>().unwrap()[2], 2.0);
        drop(t);
        std::thread::current().id()
    })
    .join()
    .unwrap();
    assert_ne!(dropped_on, here);
    assert_eq!(get(&drops), 1);
}

#[test]
fn raw_pointer_adopted_on_another_thread() {
    let (t, drops) = counted_export(3);
    let raw = SendPtr(t.into_raw());
    std::thread::spawn(move || {
        let raw = raw;
        // SAFETY: the pointer came from `into_raw` and is adopted once, here.
        let t = unsafe { ManagedTensor::from_raw(raw.0) }.unwrap();
        assert_eq!(t.shape(), &[3]);
    })
    .join()
    .unwrap();
    assert_eq!(get(&drops), 1);
}

#[test]
fn imported_tensor_dropped_on_another_thread() {
    let (raw, calls) = RawBuilder::f64_c(&[2, 2]).build();
    // SAFETY: ownership passes.
    let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    std::thread::spawn(move || drop(t)).join().unwrap();
    assert_eq!(get(&calls), 1);
}

#[test]
fn null_deleter_accepted() {
    let (raw, calls) = RawBuilder::f64_c(&[3]).null_deleter().build();
    // SAFETY: ownership of the (deleter-less) tensor passes; the producer keeps its memory.
    let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    assert_eq!(t.as_slice::<f64>().unwrap(), &[0.0, 1.0, 2.0]);
    drop(t);
    assert_eq!(get(&calls), 0, "nothing to call");
    // SAFETY: the producer frees its own tensor once.
    unsafe { release(raw) };
    assert_eq!(get(&calls), 1);

    // A refused import with a NULL deleter frees nothing either.
    let (raw, calls) = RawBuilder::f64_c(&[3]).null_deleter().version(2, 0).build();
    // SAFETY: as above.
    assert!(unsafe { ManagedTensor::from_raw(raw) }.is_err());
    assert_eq!(get(&calls), 0);
    // SAFETY: as above.
    unsafe { release(raw) };

    let (raw, calls) = RawBuilder::f64_c(&[3]).null_deleter().build_legacy();
    // SAFETY: as above.
    let t = unsafe { LegacyManagedTensor::from_raw(raw) }.unwrap();
    drop(t);
    assert_eq!(get(&calls), 0);
    // SAFETY: as above.
    unsafe { release_legacy(raw) };
    assert_eq!(get(&calls), 1);
}

#[test]
fn legacy_conversion_frees_once() {
    let (t, drops) = counted_export(3);
    let legacy = t.into_legacy();
    assert_eq!(get(&drops), 0);
    assert_eq!(legacy.shape(), &[3]);
    assert_eq!(legacy.flags(), 0);
    assert_eq!(
        legacy.view().typed::<f64>().unwrap().to_vec(),
        [0.0, 1.0, 2.0]
    );
    drop(legacy);
    assert_eq!(get(&drops), 1);

    // Through a raw legacy pointer and back.
    let (t, drops) = counted_export(2);
    let raw = t.into_legacy().into_raw();
    // SAFETY: `raw` came from `into_raw`.
    let back = unsafe { LegacyManagedTensor::from_raw(raw) }.unwrap();
    assert_eq!(get(&drops), 0);
    drop(back);
    assert_eq!(get(&drops), 1);

    // A C-style consumer calling the legacy deleter.
    let (t, drops) = counted_export(2);
    let raw = t.into_legacy().into_raw();
    // SAFETY: `raw` is live.
    let deleter = unsafe { (*raw).deleter }.unwrap();
    // SAFETY: called once.
    unsafe { deleter(raw) };
    assert_eq!(get(&drops), 1);
}

#[test]
fn imported_legacy_converted_and_dropped_frees_once() {
    let (raw, calls) = RawBuilder::f64_c(&[2]).build();
    // SAFETY: ownership passes.
    let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    let legacy = t.into_legacy();
    assert_eq!(legacy.view().typed::<f64>().unwrap().to_vec(), [0.0, 1.0]);
    assert_eq!(get(&calls), 0);
    drop(legacy);
    assert_eq!(get(&calls), 1);
}

// ---------------------------------------------------------------- owner lifetime

#[test]
fn arc_owner_stays_alive_while_the_tensor_lives() {
    let owner = Arc::new(vec![1.5_f64, 2.5, 3.5]);
    let weak = Arc::downgrade(&owner);
    let (shape, strides) = ([3], [1]);
    let spec = TensorSpec::host(owner.as_ptr(), &shape, &strides).with_flags(flags::READ_ONLY);
    // SAFETY: the Arc keeps the Vec's buffer alive and unmoved; the export is READ_ONLY, so
    // shared readers are fine.
    let t = unsafe { ManagedTensor::from_owner(Arc::clone(&owner), &spec) };
    assert_eq!(Arc::strong_count(&owner), 2);
    drop(owner);
    assert!(weak.upgrade().is_some(), "the tensor holds the owner");
    let raw = t.into_raw();
    assert!(weak.upgrade().is_some());
    // SAFETY: `raw` from `into_raw`.
    let back = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    assert!(back.is_read_only());
    assert_eq!(back.as_slice::<f64>().unwrap(), &[1.5, 2.5, 3.5]);
    drop(back);
    assert!(weak.upgrade().is_none(), "the deleter released the owner");
}

#[test]
fn exports_are_zero_copy_and_writes_are_visible() {
    let mut data = [1i32, 2, 3, 4];
    let ptr = data.as_ptr();
    {
        let mut t = data.as_mut_slice().to_dlpack().unwrap();
        assert!(!t.is_read_only());
        assert_eq!(t.view().data_ptr().cast_const().cast(), ptr);
        t.as_mut_slice::<i32>().unwrap()[1] = 20;
        let mut v = t.view_mut().unwrap().typed_mut::<i32>().unwrap();
        *v.get_mut(&[3]).unwrap() = 40;
    }
    assert_eq!(data, [1, 20, 3, 40]);

    let v = vec![7u16, 8];
    let ptr = v.as_ptr();
    let t = v.into_boxed_slice().to_dlpack().unwrap();
    assert_eq!(t.view().data_ptr().cast_const().cast(), ptr);
    assert_eq!(Box::<[u16]>::from_dlpack(t).unwrap().as_ref(), &[7, 8]);
}

#[test]
fn owner_may_be_shared_and_mutated_after_the_export_ends() {
    let shared = Arc::new(Mutex::new(vec![0u8; 4]));
    {
        let guard = shared.lock().unwrap();
        let t = ManagedTensor::from_slice(&guard[..]);
        assert_eq!(t.view().num_elements(), 4);
    }
    shared.lock().unwrap()[0] = 1;
    assert_eq!(shared.lock().unwrap()[0], 1);
}

// ---------------------------------------------------------------- export fields

#[test]
fn export_fields_follow_the_contract() {
    let t = vec![1.0_f32, 2.0, 3.0].to_dlpack().unwrap();
    let raw = t.into_raw();
    // SAFETY: `raw` is live until adopted below; we only read.
    let m = unsafe { &*raw };
    assert_eq!((m.version.major, m.version.minor), (1, 3));
    assert_eq!(m.flags, 0);
    assert!(m.deleter.is_some());
    assert!(!m.manager_ctx.is_null());
    let dl = &m.dl_tensor;
    assert_eq!(dl.device, Device::CPU);
    assert_eq!(dl.ndim, 1);
    assert_eq!(dl.dtype, DataType::F32);
    assert_eq!(dl.byte_offset, 0);
    assert!(
        !dl.strides.is_null(),
        "strides are always present for ndim > 0"
    );
    // SAFETY: one extent.
    assert_eq!(unsafe { *dl.shape }, 3);
    // SAFETY: one stride.
    assert_eq!(unsafe { *dl.strides }, 1);
    // SAFETY: adopted once.
    drop(unsafe { ManagedTensor::from_raw(raw) }.unwrap());

    // Shared slices are READ_ONLY; mutable ones are not.
    let data = [1u64, 2];
    assert_eq!(
        data.as_slice().to_dlpack().unwrap().flags(),
        flags::READ_ONLY
    );
    let mut data = [1u64, 2];
    assert_eq!(data.as_mut_slice().to_dlpack().unwrap().flags(), 0);
    // Flags pass through the builder.
    let (shape, strides) = ([2], [1]);
    let spec = TensorSpec::host(data.as_ptr(), &shape, &strides)
        .with_flags(flags::IS_COPIED)
        .on_device(Device::new(amrex_dlpack_core::DLDeviceType::CUDA_HOST, 0));
    // SAFETY: `data` outlives the tensor, which is dropped at the end of this statement.
    let t = unsafe { ManagedTensor::from_owner((), &spec) };
    assert_eq!(t.flags(), flags::IS_COPIED);
    assert_eq!(t.device().device_type.0, 3);
}

#[test]
fn ndim_4_export_stores_shape_and_strides_in_the_block() {
    let data = vec![0i16; 2 * 3 * 4 * 5];
    let (shape, strides) = ([2, 3, 4, 5], [60, 20, 5, 1]);
    let spec = TensorSpec::host(data.as_ptr(), &shape, &strides);
    // SAFETY: the Vec moves in; its buffer does not move.
    let t = unsafe { ManagedTensor::from_owner(data, &spec) };
    let raw = t.as_raw();
    // SAFETY: `raw` is live while `t` is.
    let dl = unsafe { &(*raw).dl_tensor };
    let (s, st) = (dl.shape, dl.strides);
    // The extents live right after the context in the same allocation, strides after them.
    assert_eq!(st.addr() - s.addr(), 4 * 8);
    assert_eq!(t.shape(), &shape);
    assert_eq!(t.view().strides().collect::<Vec<_>>(), strides);
    assert!(t.view().is_c_contiguous());
}

// ---------------------------------------------------------------- edge-case layouts

#[test]
fn zero_size_exports_null_data() {
    let t = Vec::<f64>::new().to_dlpack().unwrap();
    assert!(t.view().raw().data.is_null());
    assert_eq!(t.shape(), &[0]);
    assert_eq!(t.as_slice::<f64>().unwrap(), &[] as &[f64]);
    let raw = t.into_raw();
    // SAFETY: from `into_raw`.
    let back = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    assert_eq!(back.view().num_elements(), 0);
    assert!(Vec::<f64>::from_dlpack(back).unwrap().is_empty());

    let empty: [u8; 0] = [];
    assert!(
        ManagedTensor::from_slice(&empty)
            .view()
            .raw()
            .data
            .is_null()
    );
    let mut empty: [u8; 0] = [];
    assert!(
        ManagedTensor::from_slice_mut(&mut empty)
            .view()
            .raw()
            .data
            .is_null()
    );
    let (t, drops) = counted_export(0);
    assert!(t.view().raw().data.is_null());
    drop(t);
    assert_eq!(get(&drops), 1);
}

#[test]
fn zero_size_imports_with_null_or_non_null_data() {
    for data in [Data::Null, Data::Backing(0), Data::Addr(8)] {
        let (raw, calls) = RawBuilder::f64_c(&[3, 0, 2]).data(data).build();
        // SAFETY: ownership passes; zero elements are never read.
        let mut t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
        let v = t.view();
        assert_eq!(v.num_elements(), 0);
        assert!(v.is_c_contiguous() && v.is_f_contiguous());
        let tv = v.typed::<f64>().unwrap();
        assert!(tv.to_vec().is_empty());
        assert_eq!(tv.get(&[0, 0, 0]), None);
        let m = t.view_mut().unwrap().typed_mut::<f64>().unwrap();
        assert_eq!(m.into_slice().unwrap().len(), 0);
        drop(t);
        assert_eq!(get(&calls), 1);
    }
}

#[test]
fn zero_size_with_huge_extents_and_null_strides() {
    // Non-zero extents whose product (2^62) fits isize, but whose row-major strides and
    // contiguity checks multiply large numbers.
    let shape = [0, 1 << 31, 1 << 31];
    let (raw, calls) = RawBuilder::f64_c(&[0])
        .ndim(3)
        .shape(&shape)
        .strides_ptr(Ptr::Null)
        .data(Data::Null)
        .build();
    // SAFETY: ownership passes.
    let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    let v = t.view();
    assert_eq!(v.num_elements(), 0);
    assert!(v.is_c_contiguous());
    assert_eq!(v.strides().collect::<Vec<_>>(), [1 << 62, 1 << 31, 1]);
    assert!(v.is_f_contiguous());
    assert_eq!(v.offset_range(), (0, 0));
    drop(t);
    assert_eq!(get(&calls), 1);
}

#[test]
fn scalar_round_trip() {
    let value = vec![42.5_f64];
    let spec = TensorSpec::host(value.as_ptr(), &[], &[]);
    // SAFETY: the Vec moves in; its heap buffer does not move.
    let t = unsafe { ManagedTensor::from_owner(value, &spec) };
    let raw = t.into_raw();
    // SAFETY: `raw` is live; we only read.
    let (ndim, shape, strides) = unsafe {
        let dl = &(*raw).dl_tensor;
        (dl.ndim, dl.shape, dl.strides)
    };
    assert_eq!(ndim, 0);
    assert!(shape.is_null() && strides.is_null());
    // SAFETY: adopted once.
    let back = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    let v = back.view();
    assert_eq!((v.ndim(), v.num_elements()), (0, 1));
    assert_eq!(v.shape(), &[] as &[i64]);
    assert_eq!(v.typed::<f64>().unwrap().get(&[]), Some(&42.5));
    assert_eq!(v.typed::<f64>().unwrap().as_slice(), Some(&[42.5][..]));
    assert_eq!(v.typed::<f64>().unwrap().to_vec(), [42.5]);
    assert_eq!(v.offset_range(), (0, 0));
}

#[test]
fn scalar_import_with_null_or_valid_shape() {
    for p in [Ptr::Null, Ptr::Valid, Ptr::Dangling] {
        // With ndim == 0 the shape and strides pointers are never read.
        let (raw, calls) = RawBuilder::f64_c(&[])
            .shape_ptr(p)
            .strides_ptr(p)
            .byte_offset(0)
            .build();
        // SAFETY: ownership passes.
        let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
        assert_eq!(t.view().typed::<f64>().unwrap().get(&[]), Some(&0.0));
        drop(t);
        assert_eq!(get(&calls), 1);
    }
}

#[test]
fn null_strides_are_c_contiguous() {
    let (raw, calls) = RawBuilder::f64_c(&[2, 3, 4]).strides_ptr(Ptr::Null).build();
    // SAFETY: ownership passes.
    let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    let v = t.view();
    assert_eq!(v.strides_raw(), None);
    assert_eq!(v.strides().collect::<Vec<_>>(), [12, 4, 1]);
    assert!(v.is_c_contiguous() && !v.is_f_contiguous());
    let tv = v.typed::<f64>().unwrap();
    assert_eq!(tv.get(&[1, 2, 3]), Some(&23.0));
    assert_eq!(tv.as_slice().unwrap().len(), 24);
    assert_eq!(tv.to_vec(), (0..24).map(f64::from).collect::<Vec<_>>());
    drop(t);
    assert_eq!(get(&calls), 1);
}

#[test]
fn negative_strides_are_handled() {
    // A reversed view of [0, 1, 2, 3, 4, 5] as 2x3 with both axes flipped: the first
    // element is the last one in memory.
    let (raw, calls) = RawBuilder::f64_c(&[6])
        .ndim(2)
        .shape(&[2, 3])
        .strides(&[-3, -1])
        .byte_offset(5 * 8)
        .build();
    // SAFETY: ownership passes.
    let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    let v = t.view();
    assert_eq!(v.offset_range(), (-5, 0));
    assert!(!v.is_c_contiguous());
    let tv = v.typed::<f64>().unwrap();
    assert_eq!(tv.to_vec(), [5.0, 4.0, 3.0, 2.0, 1.0, 0.0]);
    assert_eq!(tv.get(&[1, 0]), Some(&2.0));
    assert_eq!(tv.as_slice(), None);
    #[cfg(feature = "ndarray")]
    {
        let a = t.as_ndarray::<f64, ndarray::Ix2>().unwrap();
        assert_eq!(a, ndarray::arr2(&[[5.0, 4.0, 3.0], [2.0, 1.0, 0.0]]));
    }
    drop(t);
    assert_eq!(get(&calls), 1);
}

#[test]
fn byte_offset_is_honoured() {
    let (raw, calls) = RawBuilder::f64_c(&[5])
        .shape(&[3])
        .byte_offset(2 * 8)
        .build();
    // SAFETY: ownership passes.
    let mut t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    let (data, first) = (t.view().raw().data, t.view().data_ptr());
    assert_eq!(first.addr() - data.addr(), 16);
    assert_eq!(t.as_slice::<f64>().unwrap(), &[2.0, 3.0, 4.0]);
    t.as_mut_slice::<f64>().unwrap()[0] = -2.0;
    assert_eq!(t.view().typed::<f64>().unwrap().get(&[0]), Some(&-2.0));
    // Re-exporting as legacy keeps the first element (byte_offset folded into data).
    let legacy = t.into_legacy();
    assert_eq!(legacy.view().raw().byte_offset, 0);
    assert_eq!(legacy.view().data_ptr(), first);
    drop(legacy);
    assert_eq!(get(&calls), 1);
}

#[cfg(feature = "ndarray")]
#[test]
fn ndarray_exports_round_trip_zero_copy() {
    use ndarray::{Array3, ArrayView3, Ix3, s};
    let a = Array3::from_shape_fn((3, 4, 5), |(i, j, k)| (100 * i + 10 * j + k) as i64);
    let sub = a.slice(s![1.., ..;-2, 1..4]);
    let t = sub.to_dlpack().unwrap();
    assert!(t.is_read_only());
    assert_eq!(t.shape(), &[2, 2, 3]);
    assert_eq!(t.view().strides().collect::<Vec<_>>(), [20, -10, 1]);
    let back: ArrayView3<'_, i64> = t.as_ndarray::<i64, Ix3>().unwrap();
    assert_eq!(back, sub);
    assert_eq!(back.as_ptr(), sub.as_ptr());

    // An empty array exports NULL data.
    let e = Array3::<f32>::zeros((2, 0, 3));
    let t = e.to_dlpack().unwrap();
    assert!(t.view().raw().data.is_null());
    assert_eq!(t.as_ndarray::<f32, Ix3>().unwrap().len(), 0);

    // A mutable view writes through.
    let mut m = Array3::<u8>::zeros((2, 2, 2));
    {
        let mut t = m.slice_mut(s![.., ..;-1, ..]).to_dlpack().unwrap();
        let mut w = t.as_ndarray_mut::<u8, Ix3>().unwrap();
        w[[0, 0, 1]] = 9;
    }
    assert_eq!(m[[0, 1, 1]], 9);
}
