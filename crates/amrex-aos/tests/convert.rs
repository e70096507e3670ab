//! AoS <-> SoA conversions: component order, neighbours, reuse of the destination, and
//! refusals.

use amrex_aos::{ArrayOfStructs, CompKind, Particle, ParticleError, ParticleReal, StructOfArrays};
use proptest::prelude::*;

type P = Particle<2, 1>;

fn particle(i: usize) -> P {
    let f = i as ParticleReal;
    Particle::with_fields(
        [f, f + 0.5, -f],
        [2.0 * f, 1.0 - f],
        i as i64 + 1,
        (i % 5) as i32,
        [i as i32 * 3],
    )
}

#[test]
fn aos_to_soa_puts_positions_first() {
    let mut aos: ArrayOfStructs<P> = (0..10).map(particle).collect();
    aos.set_num_neighbors(3).unwrap(); // 10 particles and 3 zero neighbours
    aos[11] = particle(99);
    let mut soa = StructOfArrays::<5, 1>::new();
    soa.copy_from_aos(&aos).unwrap();
    assert_eq!((soa.len(), soa.num_neighbors()), (13, 3));
    for (i, p) in aos.iter().enumerate() {
        let reals: Vec<ParticleReal> = (0..5).map(|c| soa.real(c)[i]).collect();
        assert_eq!(
            reals,
            [p.pos[0], p.pos[1], p.pos[2], p.rdata[0], p.rdata[1]]
        );
        assert_eq!(soa.idcpu()[i], p.idcpu);
        assert_eq!(soa.int(0)[i], p.idata[0]);
    }
    let mut back = ArrayOfStructs::<P>::new();
    back.copy_from_soa(&soa).unwrap();
    assert_eq!(back.as_slice(), aos.as_slice());
    assert_eq!(back.num_neighbors(), 3);
}

#[test]
fn conversions_reuse_and_shrink_the_destination() {
    let big: ArrayOfStructs<P> = (0..50).map(particle).collect();
    let small: ArrayOfStructs<P> = (100..107).map(particle).collect();
    let mut soa = StructOfArrays::<5, 1>::new();
    soa.copy_from_aos(&big).unwrap();
    soa.copy_from_aos(&small).unwrap();
    assert_eq!((soa.len(), soa.num_neighbors()), (7, 0));
    assert_eq!(soa.real(0)[6], 106.0);
    let mut aos: ArrayOfStructs<P> = (0..50).map(particle).collect();
    aos.set_num_neighbors(5).unwrap();
    aos.copy_from_soa(&soa).unwrap();
    assert_eq!(aos.as_slice(), small.as_slice());
    assert_eq!(aos.num_neighbors(), 0);
}

#[test]
fn runtime_components_are_refused() {
    let aos: ArrayOfStructs<P> = (0..4).map(particle).collect();
    let mut soa = StructOfArrays::<5, 1>::new();
    soa.add_real_comp(Some("w")).unwrap();
    assert_eq!(
        soa.copy_from_aos(&aos),
        Err(ParticleError::ComponentCountMismatch {
            kind: CompKind::Real,
            expected: 5,
            found: 6
        })
    );
    assert_eq!(soa.len(), 0);
    let mut ints = StructOfArrays::<5, 1>::new();
    ints.add_int_comp(None).unwrap();
    let mut out = aos.clone();
    assert_eq!(
        out.copy_from_soa(&ints),
        Err(ParticleError::ComponentCountMismatch {
            kind: CompKind::Int,
            expected: 1,
            found: 2
        })
    );
    assert_eq!(out.as_slice(), aos.as_slice());
}

#[test]
fn no_components_beyond_positions() {
    let aos: ArrayOfStructs<Particle<0, 0>> = (0..3)
        .map(|i| Particle::new([i as ParticleReal, 1.0, 2.0]))
        .collect();
    let mut soa = StructOfArrays::<3, 0>::new();
    soa.copy_from_aos(&aos).unwrap();
    assert_eq!(soa.real(0).as_slice(), [0.0, 1.0, 2.0]);
    let mut back = ArrayOfStructs::<Particle<0, 0>>::new();
    back.copy_from_soa(&soa).unwrap();
    assert_eq!(back.as_slice(), aos.as_slice());
}

/// Fewer cases under Miri, and no failure persistence there (it needs the file system).
fn config() -> ProptestConfig {
    let mut c = ProptestConfig::with_cases(if cfg!(miri) { 3 } else { 64 });
    if cfg!(miri) {
        c.failure_persistence = None;
    }
    c
}

proptest! {
    #![proptest_config(config())]
    /// AoS -> SoA -> AoS is the identity, whatever the counts.
    #[test]
    fn round_trip(n in 0usize..200, neighbors in 0usize..20, seed in any::<u64>()) {
        let neighbors = neighbors.min(n);
        let mut aos: ArrayOfStructs<Particle<3, 2>> = (0..n - neighbors)
            .map(|i| {
                let f = (i as u64 ^ seed) as ParticleReal;
                Particle::with_fields([f, -f, 0.5], [1.0, f, 2.0], i as i64 + 1, 7, [i as i32, -1])
            })
            .collect();
        aos.set_num_neighbors(neighbors).unwrap();
        let mut soa = StructOfArrays::<6, 2>::new();
        soa.copy_from_aos(&aos).unwrap();
        let mut back = ArrayOfStructs::new();
        back.copy_from_soa(&soa).unwrap();
        prop_assert_eq!(back.as_slice(), aos.as_slice());
        prop_assert_eq!(back.num_neighbors(), neighbors);
    }
}
