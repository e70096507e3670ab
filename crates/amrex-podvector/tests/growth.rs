//! Capacities under each growth strategy equal AMReX's
//! (`amrex::VectorGrowthStrategy::GetNewCapacity` and `PODVector::push_back`).

use amrex_podvector::{GrowthStrategy, PodVector};
use bytemuck::{AnyBitPattern, Zeroable};

/// AMReX's `Particle<2, 1>` in 3-D double precision: 56 bytes, the last 4 of them padding.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
struct Particle {
    pos: [f64; 3],
    rdata: [f64; 2],
    idcpu: u64,
    idata: [i32; 1],
}
// SAFETY: `repr(C)` of plain numbers: all-zero bytes are a valid value.
unsafe impl Zeroable for Particle {}
// SAFETY: every field accepts every bit pattern; padding is allowed for `AnyBitPattern`.
unsafe impl AnyBitPattern for Particle {}
const _: () = assert!(size_of::<Particle>() == 56);

const N: usize = if cfg!(miri) { 300 } else { 20_000 };

/// AMReX's formula, written independently of the crate (with `f64` sqrt as in C++).
#[expect(
    clippy::manual_div_ceil,
    reason = "AMReX's formula, written as AMReX writes it"
)]
fn amrex_capacity(strategy: GrowthStrategy, old_cap: usize, new_size: usize, size: usize) -> usize {
    if new_size <= old_cap {
        return old_cap;
    }
    match strategy {
        GrowthStrategy::Exact => new_size,
        GrowthStrategy::Geometric => ((old_cap * 3 + 1) / 2).max((64 / size).max(new_size)),
        GrowthStrategy::Poisson => new_size + (3.0 * (new_size as f64).sqrt()) as usize,
    }
}

fn push_sequence<T: AnyBitPattern + Default>(strategy: GrowthStrategy) -> Vec<usize> {
    let mut v = PodVector::<T>::new().with_growth_strategy(strategy);
    let mut seq = Vec::new();
    for _ in 0..N {
        let before = v.capacity();
        v.push(T::default());
        if v.capacity() != before {
            seq.push(v.capacity());
        }
    }
    seq
}

fn expected_push_sequence(strategy: GrowthStrategy, size: usize) -> Vec<usize> {
    let (mut cap, mut seq) = (0, Vec::new());
    for len in 0..N {
        if len == cap {
            cap = amrex_capacity(strategy, cap, len + 1, size);
            seq.push(cap);
        }
    }
    seq
}

fn check<T: AnyBitPattern + Default>() {
    for s in [
        GrowthStrategy::Exact,
        GrowthStrategy::Geometric,
        GrowthStrategy::Poisson,
    ] {
        assert_eq!(
            push_sequence::<T>(s),
            expected_push_sequence(s, size_of::<T>()),
            "{s} push sequence for {}",
            core::any::type_name::<T>()
        );
    }
}

#[test]
fn push_sequences_match_amrex() {
    check::<f64>();
    check::<i32>();
    check::<Particle>();
}

#[test]
fn known_first_capacities() {
    let first = |v: Vec<usize>| v.into_iter().take(8).collect::<Vec<_>>();
    // push_back: 64 bytes first, then (3c + 1) / 2.
    assert_eq!(
        first(push_sequence::<f64>(GrowthStrategy::Geometric)),
        [8, 12, 18, 27, 41, 62, 93, 140]
    );
    assert_eq!(
        first(push_sequence::<i32>(GrowthStrategy::Geometric)),
        [16, 24, 36, 54, 81, 122, 183, 275]
    );
    assert_eq!(
        first(push_sequence::<Particle>(GrowthStrategy::Geometric)),
        [1, 2, 3, 5, 8, 12, 18, 27]
    );
    // n + floor(3 sqrt(n)), the same for every element size.
    for seq in [
        push_sequence::<f64>(GrowthStrategy::Poisson),
        push_sequence::<i32>(GrowthStrategy::Poisson),
        push_sequence::<Particle>(GrowthStrategy::Poisson),
    ] {
        assert_eq!(first(seq), [4, 11, 22, 37, 56, 79, 106, 138]);
    }
    assert_eq!(
        first(push_sequence::<Particle>(GrowthStrategy::Exact)),
        [1, 2, 3, 4, 5, 6, 7, 8]
    );
}

fn resize_sequence<T: AnyBitPattern + Default>(
    strategy: GrowthStrategy,
    sizes: &[usize],
) -> Vec<usize> {
    let mut v = PodVector::<T>::new().with_growth_strategy(strategy);
    sizes
        .iter()
        .map(|&n| {
            v.resize(n, T::default());
            v.capacity()
        })
        .collect()
}

#[test]
fn resize_sequences_match_amrex() {
    let sizes = [1, 3, 10, 11, 100, 50, 101, 1000, 1001, 5000];
    for s in [
        GrowthStrategy::Exact,
        GrowthStrategy::Geometric,
        GrowthStrategy::Poisson,
    ] {
        for (size, got) in [
            (8, resize_sequence::<f64>(s, &sizes)),
            (4, resize_sequence::<i32>(s, &sizes)),
            (56, resize_sequence::<Particle>(s, &sizes)),
        ] {
            let mut cap = 0;
            let want: Vec<usize> = sizes
                .iter()
                .map(|&n| {
                    cap = amrex_capacity(s, cap, n, size);
                    cap
                })
                .collect();
            assert_eq!(got, want, "{s} resize sequence, element size {size}");
        }
    }
    // Spot values: Geometric f64 resize(1) → 8, resize(11) from 10 → 15; Poisson 100 → 130.
    assert_eq!(
        resize_sequence::<f64>(GrowthStrategy::Geometric, &[1, 9, 10]),
        [8, 12, 12]
    );
    assert_eq!(
        resize_sequence::<f64>(GrowthStrategy::Geometric, &[10, 11]),
        [10, 15]
    );
    assert_eq!(
        resize_sequence::<i32>(GrowthStrategy::Poisson, &[100, 131]),
        [130, 165]
    );
}

#[test]
fn explicit_strategies_and_reserve() {
    let mut v = PodVector::<f64>::new();
    v.reserve_with(100, GrowthStrategy::Poisson);
    assert_eq!(v.capacity(), 130);
    v.reserve_exact(131);
    assert_eq!(v.capacity(), 131);
    v.reserve(10); // len 0: fits
    assert_eq!(v.capacity(), 131);
    v.resize(131, 1.0);
    v.reserve(1); // geometric: (3 * 131 + 1) / 2
    assert_eq!(v.capacity(), 197);
    v.truncate(3);
    v.shrink_to_fit();
    assert_eq!((v.len(), v.capacity()), (3, 3));
    v.clear();
    v.shrink_to_fit();
    assert_eq!(v.capacity(), 0);
}

#[test]
fn formula_edge_cases() {
    // `new_capacity` is exactly the reference formula across the board.
    for size in [1, 4, 8, 56, 100] {
        for cap in [0usize, 1, 2, 7, 8, 63, 64, 1000] {
            for n in [0usize, 1, 2, 9, 64, 65, 1001, 1 << 40] {
                for s in [
                    GrowthStrategy::Exact,
                    GrowthStrategy::Geometric,
                    GrowthStrategy::Poisson,
                ] {
                    assert_eq!(
                        s.new_capacity(cap, n, size),
                        Some(amrex_capacity(s, cap, n, size)),
                        "{s} cap {cap} n {n} size {size}"
                    );
                }
            }
        }
    }
    // Element size 0 counts as 1; overflow is `None`.
    assert_eq!(GrowthStrategy::Geometric.new_capacity(0, 1, 0), Some(64));
    assert_eq!(
        GrowthStrategy::Geometric.new_capacity(usize::MAX / 2, usize::MAX, 8),
        None
    );
    assert_eq!(GrowthStrategy::Poisson.new_capacity(0, usize::MAX, 8), None);
}
