//! Allocation counts with a counting global allocator: every export is exactly one heap
//! allocation (header, owner, extents and strides in one block); validation, import and
//! element access allocate nothing. Counts are per thread, so the test harness's own
//! allocations on other threads do not interfere.
#![cfg(feature = "alloc")]

mod common;

use amrex_dlpack_core::{LegacyManagedTensor, ManagedTensor, TensorSpec, TensorView, ToDlpack};
use core::alloc::{GlobalAlloc, Layout};
use core::cell::Cell;
use std::alloc::System;
use std::sync::Arc;

struct Counting;

std::thread_local! {
    // `const` and `Cell<usize>`: no lazy initialisation and no destructor, so touching it
    // from inside the allocator never allocates or re-enters.
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
    static FREES: Cell<usize> = const { Cell::new(0) };
}

fn bump(c: &'static std::thread::LocalKey<Cell<usize>>) {
    let _ = c.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        bump(&ALLOCS);
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        bump(&ALLOCS);
        // SAFETY: forwarded.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        bump(&FREES);
        // SAFETY: forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        bump(&ALLOCS);
        bump(&FREES);
        // SAFETY: forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// (allocations, frees) made by `f` on this thread, and its result.
fn counted<R>(f: impl FnOnce() -> R) -> (usize, usize, R) {
    let (a0, f0) = (ALLOCS.with(Cell::get), FREES.with(Cell::get));
    let r = f();
    let (a1, f1) = (ALLOCS.with(Cell::get), FREES.with(Cell::get));
    (a1 - a0, f1 - f0, r)
}

#[test]
fn the_counter_counts() {
    let (a, f, ()) = counted(|| drop(core::hint::black_box(Box::new([0u8; 144]))));
    assert_eq!((a, f), (1, 1));
}

#[test]
fn owned_vec_export_is_one_allocation_and_import_none() {
    let v: Vec<f64> = (0..64).map(f64::from).collect();
    let (a, _, t) = counted(|| v.to_dlpack().unwrap());
    assert_eq!(a, 1, "export of an owned Vec");
    let (a, f, raw) = counted(|| t.into_raw());
    assert_eq!((a, f), (0, 0));
    // SAFETY: `raw` came from `into_raw`.
    let (a, f, back) = counted(|| unsafe { ManagedTensor::from_raw(raw) }.unwrap());
    assert_eq!((a, f), (0, 0), "import (with validation) allocates nothing");
    let (a, _, sum) = counted(|| {
        let v = back.view().typed::<f64>().unwrap();
        let mut s = 0.0;
        v.for_each(|x| s += x);
        s + v.get(&[3]).copied().unwrap() + back.as_slice::<f64>().unwrap()[1]
    });
    assert_eq!(a, 0, "element access allocates nothing");
    assert_eq!(sum, 2016.0 + 3.0 + 1.0);
    let (a, f, ()) = counted(|| drop(back));
    assert_eq!(
        (a, f),
        (0, 2),
        "the deleter frees the block and the Vec's buffer"
    );
}

#[test]
fn arc_owner_export_rank_1_and_4_is_one_allocation() {
    let shared = Arc::new(vec![0.5f32; 2 * 3 * 4 * 5]);
    for (shape, strides) in [
        (&[120i64][..], &[1i64][..]),
        (&[2, 3, 4, 5], &[60, 20, 5, 1]),
    ] {
        let (a, f, t) = counted(|| {
            let spec = TensorSpec::host(shared.as_ptr(), shape, strides);
            // SAFETY: the Arc keeps the buffer alive; only read by the test.
            unsafe { ManagedTensor::from_owner(Arc::clone(&shared), &spec) }
        });
        assert_eq!((a, f), (1, 0), "rank {}", shape.len());
        let raw = t.into_raw();
        // SAFETY: `raw` came from `into_raw`.
        let (a, f, back) = counted(|| unsafe { ManagedTensor::from_raw(raw) }.unwrap());
        assert_eq!((a, f), (0, 0));
        let (a, f, ()) = counted(|| drop(back));
        assert_eq!((a, f), (0, 1), "only the block; the Arc's data stays");
    }
}

#[test]
fn borrowed_exports_are_one_allocation() {
    let mut data = [1u8, 2, 3];
    let (a, f, t) = counted(|| ManagedTensor::from_slice(&data[..]));
    assert_eq!((a, f), (1, 0));
    drop(t);
    let (a, f, t) = counted(|| ManagedTensor::from_slice_mut(&mut data[..]));
    assert_eq!((a, f), (1, 0));
    drop(t);
}

#[test]
fn legacy_conversion_is_one_more_allocation() {
    let t = vec![1u32; 8].to_dlpack().unwrap();
    let (a, f, legacy) = counted(|| t.into_legacy());
    assert_eq!((a, f), (1, 0));
    let raw = legacy.into_raw();
    // SAFETY: `raw` came from `into_raw`.
    let (a, f, back) = counted(|| unsafe { LegacyManagedTensor::from_raw(raw) }.unwrap());
    assert_eq!((a, f), (0, 0));
    let (a, f, ()) = counted(|| drop(back));
    assert_eq!((a, f), (0, 3), "legacy block, versioned block, Vec buffer");
}

#[test]
fn validation_of_a_raw_tensor_allocates_nothing() {
    let (raw, _calls) = common::RawBuilder::f64_c(&[2, 3, 4, 5, 6, 7]).build();
    // SAFETY: `raw` is live until released below.
    let dl = unsafe { &(*raw).dl_tensor };
    // SAFETY: a well-formed tensor whose memory outlives the view.
    let (a, f, n) = counted(|| unsafe { TensorView::new(dl, 0) }.unwrap().num_elements());
    assert_eq!((a, f, n), (0, 0, 5040));
    // SAFETY: freed once.
    unsafe { common::release(raw) };
}

#[cfg(feature = "ndarray")]
#[test]
fn ndarray_exports_are_one_allocation() {
    use ndarray::{Array4, s};
    let arr = Array4::<f64>::zeros((2, 3, 4, 5));
    let (a, _, t) = counted(|| arr.slice(s![.., ..;-1, 1.., ..]).to_dlpack().unwrap());
    assert_eq!(a, 1, "a view exports with one allocation");
    drop(t);
    let (a, _, t) = counted(|| arr.to_dlpack().unwrap());
    assert_eq!(a, 1, "an owned array moves in with one allocation");
    drop(t);
}
