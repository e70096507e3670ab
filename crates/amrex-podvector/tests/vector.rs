//! `PodVector` operations against `Vec` as the model, and failure paths.

use amrex_arena::{Arena, ArenaError, ErrorKind, HostAccessible, HostArena, MemoryKind};
use amrex_dlpack_core::Device;
use amrex_podvector::{GrowthStrategy, PodVector};
use core::{alloc::Layout, ptr::NonNull};
use proptest::prelude::*;

#[test]
fn basic_operations() {
    let mut v = PodVector::<i32>::new();
    assert!(v.is_empty());
    assert_eq!(v.pop(), None);
    v.extend_from_slice(&[1, 2, 3]);
    v.insert(0, 0);
    v.insert(4, 4);
    assert_eq!(v, [0, 1, 2, 3, 4]);
    assert_eq!(v.erase(2), 2);
    assert_eq!(v, [0, 1, 3, 4]);
    v.erase_range(1..3);
    assert_eq!(v, [0, 4]);
    v.insert_from_slice(1, &[7, 8, 9]);
    assert_eq!(v, [0, 7, 8, 9, 4]);
    assert_eq!(v.pop(), Some(4));
    v[0] = 5;
    assert_eq!(v.iter().copied().collect::<Vec<_>>(), [5, 7, 8, 9]);
    assert_eq!(v.get_copy(1), Ok(7));
    assert_eq!(
        v.get_copy(9).unwrap_err().kind(),
        ErrorKind::OutOfBounds { index: 9, len: 4 }
    );
    v.set(1, 70).unwrap();
    assert_eq!(v.to_host_vec().unwrap(), [5, 70, 8, 9]);
    let mut w = PodVector::from_slice(&[1, 1]);
    v.swap(&mut w);
    assert_eq!((v.len(), w.len()), (2, 4));
    let c = w.clone();
    assert_eq!(c, w);
    assert_eq!(c.capacity(), w.capacity());
    v.try_fill(3).unwrap();
    assert_eq!(v, [3, 3]);
    assert!(format!("{v:?}").contains("data: [3, 3]"));
    assert_eq!(v.device(), Device::CPU);
    assert_eq!(v.memory_kind(), MemoryKind::Host);
}

#[test]
fn vec_round_trip_without_copy() {
    let src = vec![1.5f64, 2.5, 3.5];
    let p = src.as_ptr();
    let v = PodVector::from(src);
    assert_eq!(v.as_ptr(), p);
    assert_eq!(v, [1.5, 2.5, 3.5]);
    let back: Vec<f64> = v.into();
    assert_eq!(back.as_ptr(), p);
    let empty: Vec<f64> = PodVector::<f64>::new().into();
    assert!(empty.is_empty());
}

#[test]
fn copy_and_length_errors() {
    let mut v = PodVector::<u8>::from_slice(&[1, 2, 3]);
    let e = v.copy_from_host(&[1, 2]).unwrap_err();
    assert_eq!(
        e.kind(),
        ErrorKind::LengthMismatch {
            expected: 3,
            found: 2
        }
    );
    v.copy_from_host(&[9, 8, 7]).unwrap();
    let mut out = [0u8; 3];
    v.copy_to_host(&mut out).unwrap();
    assert_eq!(out, [9, 8, 7]);
    assert!(v.copy_to_host(&mut [0u8; 4]).is_err());
    assert_eq!(
        v.try_insert(4, 0).unwrap_err().kind(),
        ErrorKind::OutOfBounds { index: 4, len: 3 }
    );
    let u = v.to_arena(HostArena).unwrap();
    assert_eq!(u, v);
    assert_eq!(u.capacity(), 3);
}

#[test]
fn uninit_resize_and_spare_capacity() {
    let mut v = PodVector::<u32>::with_capacity(4);
    for (i, slot) in v.spare_capacity_mut().iter_mut().enumerate() {
        slot.write(i as u32 * 10);
    }
    // SAFETY: the four spare elements were written above.
    unsafe { v.set_len(4) };
    assert_eq!(v, [0, 10, 20, 30]);
    // SAFETY: the new tail is written right after.
    unsafe { v.try_resize_uninit(6) }.unwrap();
    v[4] = 40;
    v[5] = 50;
    assert_eq!(v, [0, 10, 20, 30, 40, 50]);
}

/// Host memory that refuses allocations above a byte budget, to test failure paths.
#[derive(Clone, Debug)]
struct Limited(usize);

impl Arena for Limited {
    fn kind(&self) -> MemoryKind {
        MemoryKind::Host
    }
    fn device(&self) -> Device {
        Device::CPU
    }
    fn allocate_nonzero(&self, l: Layout) -> Result<NonNull<u8>, ArenaError> {
        if l.size() > self.0 {
            return Err(ErrorKind::AllocationFailed {
                size: l.size(),
                align: l.align(),
            }
            .into());
        }
        HostArena.allocate_nonzero(l)
    }
    amrex_arena::forward_to_host_arena!();
}
// SAFETY: plain global-allocator memory with synchronous copies.
unsafe impl HostAccessible for Limited {}

#[test]
fn allocation_failure_is_an_error_and_leaves_the_vector_unchanged() {
    let mut v = PodVector::<f64, _>::new_in(Limited(64));
    for i in 0..8 {
        v.try_push(f64::from(i)).unwrap();
    }
    assert_eq!(v.capacity(), 8);
    let e = v.try_push(8.0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AllocationFailed { size: 96, align: 8 });
    assert_eq!((v.len(), v.capacity()), (8, 8));
    assert_eq!(v[7], 7.0);
    assert!(v.try_extend_from_slice(&[1.0; 4]).is_err());
    assert!(v.try_resize(100, 0.0).is_err());
    assert!(v.try_insert(0, 0.0).is_err());
    assert_eq!(v.len(), 8);
    assert!(PodVector::<u8, _>::try_with_capacity_in(65, Limited(64)).is_err());
    assert!(PodVector::<u8, _>::try_from_elem_in(1, 65, Limited(64)).is_err());
}

#[test]
#[should_panic(expected = "PodVector::push: allocation of 96 bytes aligned to 8 failed")]
fn push_panics_with_a_clear_message() {
    let mut v = PodVector::<f64, _>::new_in(Limited(64));
    for i in 0..9 {
        v.push(f64::from(i));
    }
}

#[test]
fn capacity_overflow_is_an_error() {
    let mut v = PodVector::<f64>::from_slice(&[1.0]);
    assert_eq!(
        v.try_reserve(usize::MAX).unwrap_err().kind(),
        ErrorKind::CapacityOverflow
    );
    assert_eq!(
        v.try_reserve_exact(usize::MAX / 4).unwrap_err().kind(),
        ErrorKind::CapacityOverflow
    );
    assert_eq!(
        v.try_reserve_with(usize::MAX - 5, GrowthStrategy::Poisson)
            .unwrap_err()
            .kind(),
        ErrorKind::CapacityOverflow
    );
    assert_eq!(v, [1.0]);
    if !cfg!(miri) {
        // Passes the layout check, fails in the allocator.
        let e = v
            .try_reserve_exact(isize::MAX as usize / 8 - 16)
            .unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::AllocationFailed { .. }),
            "{e}"
        );
    }
}

#[test]
#[should_panic(expected = "PodVector::reserve: capacity overflow")]
fn reserve_panics_on_overflow() {
    PodVector::<u16>::new().reserve(usize::MAX);
}

#[test]
fn zero_sized_elements() {
    let mut v = PodVector::<()>::new();
    for _ in 0..100 {
        v.push(());
    }
    assert_eq!(v.len(), 100);
    v.insert(3, ());
    assert_eq!(v.pop(), Some(()));
    v.shrink_to_fit();
    assert_eq!(v.len(), 100);
}

#[derive(Clone, Debug)]
enum Op {
    Push(i16),
    Pop,
    Insert(usize, i16),
    Erase(usize),
    Extend(Vec<i16>),
    Resize(usize, i16),
    Truncate(usize),
    Shrink,
    Reserve(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        any::<i16>().prop_map(Op::Push),
        Just(Op::Pop),
        (any::<usize>(), any::<i16>()).prop_map(|(i, x)| Op::Insert(i, x)),
        any::<usize>().prop_map(Op::Erase),
        proptest::collection::vec(any::<i16>(), 0..20).prop_map(Op::Extend),
        (0usize..80, any::<i16>()).prop_map(|(n, x)| Op::Resize(n, x)),
        (0usize..80).prop_map(Op::Truncate),
        Just(Op::Shrink),
        (0usize..50).prop_map(Op::Reserve),
    ]
}

fn strategy() -> impl Strategy<Value = GrowthStrategy> {
    prop_oneof![
        Just(GrowthStrategy::Exact),
        Just(GrowthStrategy::Geometric),
        Just(GrowthStrategy::Poisson)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 4 } else { 256 }, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn behaves_like_vec(s in strategy(), ops in proptest::collection::vec(op(), 0..40)) {
        let mut v = PodVector::<i16>::new().with_growth_strategy(s);
        let mut model: Vec<i16> = Vec::new();
        for op in ops {
            let old_cap = v.capacity();
            let grows_to = match &op {
                Op::Push(_) | Op::Insert(..) => Some(model.len() + 1),
                Op::Extend(x) => Some(model.len() + x.len()),
                Op::Resize(n, _) => Some(*n),
                Op::Reserve(n) => Some(model.len() + n),
                _ => None,
            };
            match op {
                Op::Push(x) => { v.push(x); model.push(x); }
                Op::Pop => prop_assert_eq!(v.pop(), model.pop()),
                Op::Insert(i, x) => { let i = i % (model.len() + 1); v.insert(i, x); model.insert(i, x); }
                Op::Erase(i) => if !model.is_empty() {
                    let i = i % model.len();
                    prop_assert_eq!(v.erase(i), model.remove(i));
                },
                Op::Extend(x) => { v.extend_from_slice(&x); model.extend_from_slice(&x); }
                Op::Resize(n, x) => { v.resize(n, x); model.resize(n, x); }
                Op::Truncate(n) => { v.truncate(n); model.truncate(n); }
                Op::Shrink => { v.shrink_to_fit(); prop_assert_eq!(v.capacity(), model.len()); }
                Op::Reserve(n) => v.reserve(n),
            }
            if let Some(n) = grows_to {
                prop_assert_eq!(v.capacity(), s.new_capacity(old_cap, n, 2).unwrap());
            }
            prop_assert_eq!(v.as_slice(), model.as_slice());
            prop_assert!(v.capacity() >= v.len());
        }
    }
}

/// AMReX's `Particle<2, 1>` layout: 52 bytes of data and 4 of tail padding.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
struct Padded {
    pos: [f64; 3],
    rdata: [f64; 2],
    idcpu: u64,
    id: i32,
}
// SAFETY: plain numbers; all-zero is valid.
unsafe impl bytemuck::Zeroable for Padded {}
// SAFETY: every field accepts any bits; padding is allowed.
unsafe impl bytemuck::AnyBitPattern for Padded {}

#[test]
fn padded_elements_move_through_every_path() {
    assert_eq!(size_of::<Padded>(), 56);
    let p = |i: i32| Padded {
        pos: [f64::from(i); 3],
        id: i,
        ..Padded::default()
    };
    let mut v = PodVector::<Padded>::new();
    for i in 0..10 {
        v.push(p(i));
    }
    v.insert(3, p(100));
    assert_eq!(v.erase(3), p(100));
    v.resize(12, p(-1));
    v.try_fill(p(7)).unwrap();
    let c = v.clone();
    let on_other = v.to_arena(Limited(4096)).unwrap();
    assert_eq!(on_other.to_host_vec().unwrap(), c.to_host_vec().unwrap());
    assert!(c.iter().all(|x| *x == p(7)));
    v.try_fill_zeroed().unwrap();
    assert_eq!(v.get_copy(11), Ok(Padded::default()));
    v.shrink_to_fit();
    assert_eq!(v.capacity(), 12);
}
