//! The averages: `average_down` against a cell-by-cell reference for ratios 1 to 4 and
//! anisotropic ones, fine boxes in different coarse boxes, the direct and the
//! ParallelCopy paths, conservation (Cartesian, RZ and spherical volumes),
//! `sum_fine_to_coarse`, `average_down_faces` and `average_down_nodal`.
#![warn(clippy::cast_possible_truncation)]

mod common;

use amrex_amr::{
    average_down, average_down_faces, average_down_geom, average_down_nodal, sum_fine_to_coarse,
};
use amrex_geometry::{CoordSys, Geometry, RealBox};
use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IndexType, IntVect, MultiFab};
use common::{at, close, fill, mf, noise, points, reference_mean};

/// A fine BoxArray over three separate coarse regions (in different boxes of the coarse
/// level `0..=15`³ chopped by 8), refined by `r`.
fn fine_boxes(r: IntVect) -> BoxArray {
    let coarse = [
        IndexBox::new(IntVect::new(2, 2, 2), IntVect::new(5, 6, 4)),
        IndexBox::new(IntVect::new(6, 9, 3), IntVect::new(11, 12, 5)), // straddles x = 8
        IndexBox::new(IntVect::new(12, 0, 10), IntVect::new(15, 3, 15)),
    ];
    BoxArray::new(coarse.iter().map(|b| b.refine_iv(r)).collect())
}

fn coarse_level() -> BoxArray {
    BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::splat(15)), 8)
}

/// average_down equals the reference mean on every covered coarse cell (bit for bit:
/// the same sums in the same order) and leaves the others alone.
fn check_average_down(r: IntVect) {
    let fba = fine_boxes(r);
    let mut fine = mf(&fba, 3, 0);
    fill(&mut fine, |p, n| noise(p, n) + n as f64);
    let cba = coarse_level();
    let mut crse = mf(&cba, 3, 1);
    fill(&mut crse, |_, _| -7.0);
    average_down(&fine, &mut crse, 1..3, r).unwrap();
    let covered = fba.coarsen(r);
    for (p, v) in points(&crse, 0) {
        assert_eq!(v, -7.0, "component 0 untouched at {p}");
    }
    for n in 1..3 {
        for (p, v) in points(&crse, n) {
            if covered.contains(p) {
                assert_eq!(
                    v,
                    reference_mean(&fine, p, n, r),
                    "ratio {r}, cell {p}, comp {n}"
                );
            } else {
                assert_eq!(v, -7.0, "uncovered cell {p} untouched");
            }
        }
    }
    // Ghost cells of the coarse level are not written.
    for l in 0..crse.local_size() {
        let g = crse.global_index(l);
        let (valid, a) = (crse.box_of(g), crse.array_at(l));
        for p in crse.fabbox(g) {
            if !valid.contains(p) {
                assert_eq!(a[(p, 1)], -7.0);
            }
        }
    }
}

#[test]
fn average_down_ratios_2_3_4() {
    for r in [2, 3, 4] {
        check_average_down(IntVect::splat(r));
    }
}

#[test]
fn average_down_anisotropic_and_unit_ratios() {
    for r in [
        IntVect::new(2, 1, 1),
        IntVect::new(1, 3, 2),
        IntVect::new(4, 2, 3),
        IntVect::new(1, 1, 1),
    ] {
        check_average_down(r);
    }
}

#[test]
fn direct_path_matches_parallel_copy_path() {
    let r = IntVect::new(2, 3, 2);
    let fba = fine_boxes(r);
    let dm = DistributionMapping::new(&fba);
    let mut fine = MultiFab::new(&fba, &dm, 2, IntVect::splat(1));
    fill(&mut fine, noise);
    // The coarsened fine layout with the fine map: the values go straight in.
    let mut direct = MultiFab::new(&fba.coarsen(r), &dm, 2, IntVect::ZERO);
    average_down(&fine, &mut direct, 0..2, r).unwrap();
    // Another layout: through the temporary and ParallelCopy.
    let mut copied = mf(&coarse_level(), 2, 0);
    average_down(&fine, &mut copied, 0..2, r).unwrap();
    for n in 0..2 {
        for (p, v) in points(&direct, n) {
            assert_eq!(v.to_bits(), at(&copied, p, n).to_bits(), "{p}");
        }
    }
}

#[test]
fn average_down_is_conservative() {
    // Σ fine · fine volume == Σ coarse · coarse volume over the covered region.
    let r = IntVect::new(2, 4, 3);
    let fba = fine_boxes(r);
    let mut fine = mf(&fba, 1, 0);
    fill(&mut fine, |p, _| noise(p, 0) * 10.0 - 3.0);
    let mut crse = mf(&coarse_level(), 1, 0);
    average_down(&fine, &mut crse, 0..1, r).unwrap();
    // Cartesian cells: a coarse cell's volume is r0 r1 r2 fine volumes.
    let vf = 1.0 / 4096.0;
    let vc = vf * f64::from(r[0] * r[1] * r[2]);
    let fine_sum: f64 = points(&fine, 0).iter().map(|(_, v)| v * vf).sum();
    let covered = fba.coarsen(r);
    let crse_sum: f64 = points(&crse, 0)
        .iter()
        .filter(|(p, _)| covered.contains(*p))
        .map(|(_, v)| v * vc)
        .sum();
    assert!(close(fine_sum, crse_sum, 1e-13), "{fine_sum} vs {crse_sum}");
}

/// An RZ or spherical pair of geometries, coarse `nr x nz` (nz θ cells when spherical),
/// and the fine one refined by `(r0, r1, 1)`.
fn curvilinear(coord: CoordSys, ratio: IntVect) -> (Geometry, Geometry) {
    let hi1 = if coord == CoordSys::Spherical {
        core::f64::consts::PI
    } else {
        2.0
    };
    let rb = RealBox::new([0.0, 0.0, 0.0], [1.5, hi1, 1.0]).unwrap();
    let cdom = IndexBox::new(IntVect::ZERO, IntVect::new(11, 7, 0));
    let cgeom = Geometry::new(cdom, rb, coord, [false; 3]).unwrap();
    let fgeom = cgeom.refine(ratio).unwrap();
    (fgeom, cgeom)
}

#[test]
fn average_down_geom_conserves_volume_integrals() {
    for coord in [CoordSys::Rz, CoordSys::Spherical, CoordSys::Cartesian] {
        for ratio in [
            IntVect::new(2, 2, 1),
            IntVect::new(3, 2, 1),
            IntVect::new(4, 1, 1),
        ] {
            let (fgeom, cgeom) = curvilinear(coord, ratio);
            // Fine boxes over part of the domain, the coarse level in other boxes.
            // Coarse cells chopped, then refined: boxes that coarsen by the ratio.
            let ccells = IndexBox::new(IntVect::new(0, 2, 0), IntVect::new(7, 5, 0));
            let fba = BoxArray::from_domain(ccells, 3).refine(ratio);
            let mut fine = mf(&fba, 2, 0);
            fill(&mut fine, |p, n| noise(p, n) + 1.0);
            let mut crse = mf(&BoxArray::from_domain(cgeom.domain(), 4), 2, 0);
            average_down_geom(&fine, &mut crse, &fgeom, &cgeom, 0..2, ratio).unwrap();
            let covered = fba.coarsen(ratio);
            for n in 0..2 {
                let fsum: f64 = points(&fine, n)
                    .iter()
                    .map(|&(p, v)| v * fgeom.volume(p))
                    .sum();
                let csum: f64 = points(&crse, n)
                    .iter()
                    .filter(|(p, _)| covered.contains(*p))
                    .map(|&(p, v)| v * cgeom.volume(p))
                    .sum();
                assert!(
                    close(fsum, csum, 1e-13),
                    "{coord} {ratio}: {fsum} vs {csum}"
                );
            }
            if coord == CoordSys::Cartesian {
                // Cartesian is the plain mean, bit for bit.
                let mut plain = mf(&BoxArray::from_domain(cgeom.domain(), 4), 2, 0);
                average_down(&fine, &mut plain, 0..2, ratio).unwrap();
                for (p, v) in points(&plain, 1) {
                    assert_eq!(v.to_bits(), at(&crse, p, 1).to_bits());
                }
            }
        }
    }
}

#[test]
fn average_down_geom_rz_weights_by_hand() {
    // One coarse RZ cell r in [0, 2], z in [0, 1]; ratio (2, 1, 1): fine r-cells
    // [0, 1] (volume π) and [1, 2] (volume 3π). Values 4 and 8: (4 + 24) / 4 = 7.
    let rb = RealBox::new([0.0; 3], [2.0, 1.0, 1.0]).unwrap();
    let cdom = IndexBox::new(IntVect::ZERO, IntVect::ZERO);
    let cgeom = Geometry::new(cdom, rb, CoordSys::Rz, [false; 3]).unwrap();
    let ratio = IntVect::new(2, 1, 1);
    let fgeom = cgeom.refine(ratio).unwrap();
    let fba = BoxArray::from_domain(fgeom.domain(), 8);
    let mut fine = mf(&fba, 1, 0);
    fill(&mut fine, |p, _| if p[0] == 0 { 4.0 } else { 8.0 });
    let mut crse = mf(&BoxArray::from_domain(cdom, 8), 1, 0);
    average_down_geom(&fine, &mut crse, &fgeom, &cgeom, 0..1, ratio).unwrap();
    assert!(close(at(&crse, IntVect::ZERO, 0), 7.0, 1e-15));
    // The plain mean would be 6.
    average_down(&fine, &mut crse, 0..1, ratio).unwrap();
    assert_eq!(at(&crse, IntVect::ZERO, 0), 6.0);
}

#[test]
fn average_down_of_nodal_data_injects() {
    let nodes = IndexType::new(true, true, true);
    let r = IntVect::new(2, 3, 1);
    let cells = IndexBox::new(IntVect::new(1, 1, 0), IntVect::new(4, 3, 2));
    let fba = BoxArray::from_domain(cells.refine_iv(r), 4).convert(nodes);
    let mut fine = mf(&fba, 1, 0);
    fill(&mut fine, |p, _| noise(p, 0));
    let mut crse = mf(&coarse_level().convert(nodes), 1, 0);
    average_down(&fine, &mut crse, 0..1, r).unwrap();
    for p in cells.convert(nodes) {
        assert_eq!(at(&crse, p, 0), at(&fine, p.refine(r), 0), "{p}");
    }
}

#[test]
fn sum_fine_to_coarse_adds_the_means_with_ghosts_and_periodic_images() {
    let cdom = IndexBox::new(IntVect::ZERO, IntVect::splat(7));
    let cgeom = Geometry::new(
        cdom,
        RealBox::UNIT,
        CoordSys::Cartesian,
        [true, false, false],
    )
    .unwrap();
    let r = IntVect::splat(2);
    // A fine box against the high x face of the periodic domain, 2 fine ghost cells
    // (one coarse cell): its ghosts beyond x = 8 wrap to coarse x = 0.
    let fcells = IndexBox::new(IntVect::new(6, 2, 2), IntVect::new(7, 3, 3));
    let fba = BoxArray::new(vec![fcells.refine_iv(r)]);
    let mut fine = mf(&fba, 1, 2);
    fill(&mut fine, |p, _| f64::from(p[0] + 2 * p[1]));
    let mut crse = mf(&BoxArray::from_domain(cdom, 4), 1, 0);
    fill(&mut crse, |_, _| 100.0);
    sum_fine_to_coarse(&fine, &mut crse, 0..1, r, &cgeom).unwrap();
    let grown = fcells.grow(1);
    for (p, v) in points(&crse, 0) {
        // The coarse cell's own image and its periodic image in x.
        let hit = [p, p + IntVect::new(8, 0, 0), p - IntVect::new(8, 0, 0)]
            .into_iter()
            .find(|q| grown.contains(*q));
        let want = match hit {
            // Mean of the fine values 2q + (0 or 1): x part 2 q0 + 0.5, y part 2 (2 q1 + 0.5).
            Some(q) => 100.0 + (f64::from(2 * q[0]) + 0.5) + 2.0 * (f64::from(2 * q[1]) + 0.5),
            None => 100.0,
        };
        assert_eq!(v, want, "{p}");
    }
}

#[test]
fn sum_fine_to_coarse_rounds_fine_ghosts_down_to_whole_coarse_cells() {
    let cdom = IndexBox::new(IntVect::ZERO, IntVect::splat(7));
    let cgeom = Geometry::new(cdom, RealBox::UNIT, CoordSys::Cartesian, [false; 3]).unwrap();
    let r = IntVect::new(2, 3, 1);
    let fcells = IndexBox::new(IntVect::splat(3), IntVect::splat(4));
    let fba = BoxArray::new(vec![fcells.refine_iv(r)]);
    // Ghost (3, 2, 1): coarse ghost (1, 0, 1).
    let mut fine = mf(&fba, 1, IntVect::new(3, 2, 1));
    fill(&mut fine, |_, _| 1.0);
    let mut crse = mf(&BoxArray::from_domain(cdom, 8), 1, 0);
    sum_fine_to_coarse(&fine, &mut crse, 0..1, r, &cgeom).unwrap();
    let grown = fcells.grow_iv(IntVect::new(1, 0, 1));
    for (p, v) in points(&crse, 0) {
        assert_eq!(v, if grown.contains(p) { 1.0 } else { 0.0 }, "{p}");
    }
}

/// Face MultiFabs normal to `dir`: fine over the coarse cells `(2..=9, 3..=7, 4..=8)`
/// (chopped by 3) refined by `r`, coarse over `0..=15`³ chopped by 8.
fn face_pair(dir: usize, r: IntVect, fng: i32, cng: i32) -> (MultiFab, MultiFab) {
    let face = IndexType::new(dir == 0, dir == 1, dir == 2);
    let ccells = IndexBox::new(IntVect::new(2, 3, 4), IntVect::new(9, 7, 8));
    let fba = BoxArray::from_domain(ccells, 3).refine(r).convert(face);
    let mut fine = mf(&fba, 2, fng);
    fill(&mut fine, noise);
    let crse = mf(&coarse_level().convert(face), 2, cng);
    (fine, crse)
}

#[test]
fn average_down_faces_means_the_fine_faces_on_each_coarse_face() {
    for dir in 0..3 {
        for r in [
            IntVect::splat(2),
            IntVect::new(3, 2, 4),
            IntVect::new(1, 2, 3),
        ] {
            let (fine, mut crse) = face_pair(dir, r, 0, 0);
            average_down_faces(&fine, &mut crse, r, 0).unwrap();
            let covered = fine.box_array().coarsen(r);
            let others: Vec<usize> = (0..3).filter(|&d| d != dir).collect();
            for n in 0..2 {
                for (p, v) in points(&crse, n) {
                    if !covered.contains(p) {
                        assert_eq!(v, 0.0);
                        continue;
                    }
                    // The fine faces on coarse face p: p·r in dir, all offsets across.
                    let (a, b) = (others[0], others[1]);
                    let mut s = 0.0;
                    for ob in 0..r[b] {
                        for oa in 0..r[a] {
                            let mut q = p.refine(r);
                            q[a] += oa;
                            q[b] += ob;
                            s += at(&fine, q, n);
                        }
                    }
                    let want = s * (1.0 / f64::from(r[a] * r[b]));
                    assert_eq!(v, want, "dir {dir}, ratio {r}, face {p}");
                }
            }
        }
    }
}

#[test]
fn average_down_faces_fills_coarse_ghost_faces() {
    let r = IntVect::splat(2);
    let dir = 1;
    // The coarsened fine layout with the fine map, one coarse ghost cell, two fine.
    let (fine, _) = face_pair(dir, r, 2, 1);
    let mut direct = MultiFab::new(
        &fine.box_array().coarsen(r),
        fine.distribution_map(),
        2,
        IntVect::splat(1),
    );
    average_down_faces(&fine, &mut direct, r, 1).unwrap();
    for l in 0..direct.local_size() {
        let g = direct.global_index(l);
        let a = direct.array_at(l);
        for p in direct.fabbox(g) {
            let q = p.refine(r);
            let want = 0.25
                * (at_any(&fine, q)
                    + at_any(&fine, q + IntVect::new(1, 0, 0))
                    + at_any(&fine, q + IntVect::new(0, 0, 1))
                    + at_any(&fine, q + IntVect::new(1, 0, 1)));
            assert!(close(a[(p, 0)], want, 1e-15), "{p}");
        }
    }

    // fine(q, 0) from whichever fab holds q, ghost cells included.
    fn at_any(m: &MultiFab, q: IntVect) -> f64 {
        (0..m.local_size())
            .find_map(|l| m.array_at(l).get(q[0], q[1], q[2], 0).copied())
            .expect("a fab holds it")
    }
}

#[test]
fn average_down_nodal_injects_with_ghost_nodes() {
    let nodes = IndexType::new(true, true, true);
    let r = IntVect::new(2, 4, 1);
    let fcells = IndexBox::new(IntVect::new(1, 0, 2), IntVect::new(6, 3, 5)).refine_iv(r);
    let fba = BoxArray::from_domain(fcells, 8).convert(nodes);
    let mut fine = mf(&fba, 1, IntVect::new(2, 4, 1));
    fill(&mut fine, |p, _| {
        f64::from(p[0] * 10_000 + p[1] * 100 + p[2])
    });
    // Different coarse boxes: ParallelCopy with the ghost nodes.
    let cba =
        BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::splat(7)), 4).convert(nodes);
    let mut crse = mf(&cba, 1, 1);
    fill(&mut crse, |_, _| -1.0);
    average_down_nodal(&fine, &mut crse, r, 1).unwrap();
    let reach = BoxArray::from_domain(fcells, 8)
        .coarsen(r)
        .convert(nodes)
        .grow(IntVect::splat(1));
    for l in 0..crse.local_size() {
        let g = crse.global_index(l);
        let a = crse.array_at(l);
        for p in crse.fabbox(g) {
            let q = p.refine(r);
            let v = a[(p, 0)];
            if reach.contains(p) {
                assert_eq!(v, f64::from(q[0] * 10_000 + q[1] * 100 + q[2]), "{p}");
            }
        }
    }
}

#[test]
fn average_down_faces_geom_lands_periodic_images() {
    // x-faces of a 16x4x4 fine level over the whole 8x2x2 coarse domain, periodic in x:
    // the fine faces at x = 0 and x = 16 are one face, here given different values.
    let xface = IndexType::new(true, false, false);
    let cdom = IndexBox::new(IntVect::ZERO, IntVect::new(7, 1, 1));
    let cgeom = Geometry::new(
        cdom,
        RealBox::UNIT,
        CoordSys::Cartesian,
        [true, false, false],
    )
    .unwrap();
    let fba = BoxArray::new(vec![cdom.refine_iv(IntVect::splat(2))]).convert(xface);
    let mut fine = MultiFab::new(&fba, &DistributionMapping::single(&fba), 1, IntVect::ZERO);
    fine.array_mut_at(0)
        .for_each_mut(fba.get(0), |i, _, _, _, v| *v = f64::from(i + 1));
    let cba = BoxArray::from_domain(cdom, 4).convert(xface);
    let dm = DistributionMapping::single(&cba);
    let mut plain = MultiFab::new(&cba, &dm, 1, IntVect::ZERO);
    average_down_faces(&fine, &mut plain, 2, 0).unwrap();
    let mut periodic = MultiFab::new(&cba, &dm, 1, IntVect::ZERO);
    amrex_amr::average_down_faces_geom(&fine, &mut periodic, 2, &cgeom).unwrap();
    let at = |mf: &MultiFab, i: i32| mf.value_at(IntVect::new(i, 0, 0), 0).unwrap();
    // Without the geometry each side keeps its own mean: faces 1 and 17.
    assert_eq!((at(&plain, 0), at(&plain, 8)), (1.0, 17.0));
    // With it, both sides hold one of the two, the same on both.
    assert_eq!(at(&periodic, 0), at(&periodic, 8));
    assert!([1.0, 17.0].contains(&at(&periodic, 0)));
    // Inside the domain nothing changes (face 4 is fine face 8: 9).
    assert_eq!(at(&periodic, 4), 9.0);
    assert_eq!(at(&plain, 4), 9.0);
}
