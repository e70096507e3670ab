//! Tests that hold in both particle precisions. `scripts/test.sh` runs this file in the
//! default (`f64`) build and again with `amrex-aos/single-precision-particles`, where
//! `ParticleReal` is `f32` (the other test files assume `f64`).
#![warn(clippy::cast_possible_truncation)]

use amrex_geometry::{CoordSys, Geometry, RealBox};
use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IntVect};
use amrex_particles::{AosTile, ParticleArrays, ParticleContainer, ParticleReal, ParticleTile};

fn geom(n: i32, lo: f64, hi: f64, per: bool) -> Geometry {
    let dom = IndexBox::new(IntVect::ZERO, IntVect::splat(n - 1));
    Geometry::new(
        dom,
        RealBox::new([lo; 3], [hi; 3]).unwrap(),
        CoordSys::Cartesian,
        [per; 3],
    )
    .unwrap()
}

/// A position wrapped through a periodic side, or drawn by `init_random`, and then
/// rounded to the particles' precision could land on the domain's high side (outside)
/// and be removed; in `f32` both happened before the rounding was checked.
#[test]
fn rounding_to_the_particle_precision_keeps_particles_inside() {
    let g = geom(16, 0.0, 1.0, true);
    let ba = BoxArray::from_domain(g.domain(), 8);
    let dm = DistributionMapping::new(&ba);
    let mut pc = ParticleContainer::new(g, &ba, &dm, AosTile::<0, 0>::new(0, 0));
    let x: [ParticleReal; 1] = [-1e-9];
    let (y, z): ([ParticleReal; 1], [ParticleReal; 1]) = ([0.5], [1.0 + 1e-9]);
    pc.add_particles(&ParticleArrays::new(&x, &y, &z)).unwrap();
    let r = pc.redistribute().unwrap();
    assert_eq!((r.removed_outside, pc.num_particles().unwrap()), (0, 1));
    for t in pc.tiles(0) {
        for i in 0..t.data.len() {
            let p = t.data.pos(i);
            assert!(p.iter().all(|&c| (0.0..1.0).contains(&c)), "{p:?}");
            let cell = g.cell_index(p.map(f64::from)).unwrap();
            assert!(t.tilebox.contains(cell), "{p:?} outside tile {}", t.tilebox);
        }
    }

    let far = geom(12, 1e6, 1e6 + 3.0, false);
    let ba = BoxArray::from_domain(far.domain(), 4);
    let dm = DistributionMapping::new(&ba);
    let mut pc = ParticleContainer::new(far, &ba, &dm, AosTile::<0, 0>::new(0, 0));
    let r = pc.init_random(3000, 11, &[], &[]).unwrap();
    assert_eq!((r.removed_outside, pc.num_particles().unwrap()), (0, 3000));
}
