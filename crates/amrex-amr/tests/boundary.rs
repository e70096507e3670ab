//! Physical boundary fills against hand-computed values: every `BCType` on every face,
//! cell-centred and nodal data, edges and corners, periodic directions, `ext_dir`
//! positions, an RZ axis, and every error.
//!
//! Most cases use a 4³ domain over [0, 4]³ (so `dx = 1` and cell `i` has its centre at
//! `i + 0.5`) in two boxes split in x, with two ghost cells holding a sentinel before
//! the fills, and `q = i + 10 j + 100 k` in the valid cells.
#![warn(clippy::cast_possible_truncation)]

use core::cell::{Cell, RefCell};
use core::ops::Bound;

use BCType::{ExtDir, FoExtrap, HoExtrap, HoExtrapCc, IntDir, ReflectEven, ReflectOdd};
use amrex_amr::boundary::{BCRec, BCType, PhysBcFunct, fill_physical_boundary};
use amrex_amr::{AmrErrorKind, Operand};
use amrex_geometry::{CoordSys, Geometry, RealBox};
use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IndexType, IntVect, MultiFab};

/// What every ghost cell holds before `fill_boundary` and the physical fill.
const S: f64 = -999.0;

/// The 4³ cell domain.
fn domain() -> IndexBox {
    IndexBox::new(IntVect::ZERO, IntVect::splat(3))
}

/// `i + 10 j + 100 k` at a point with real coordinates.
fn lin(x: [f64; 3]) -> f64 {
    x[0] + 10.0 * x[1] + 100.0 * x[2]
}

/// `i + 10 j + 100 k` at an index.
fn lin_iv(p: IntVect) -> f64 {
    lin([f64::from(p[0]), f64::from(p[1]), f64::from(p[2])])
}

/// A level over `domain` (dx = 1 over [lo, lo + cells]) in the boxes of `ba`
/// (converted to `ix`), `ng` ghost cells holding [`S`], `value(p, n)` in the valid
/// points, ghost cells then filled by `fill_boundary`.
fn level_on(
    dom: IndexBox,
    ba: &BoxArray,
    ix: IndexType,
    periodic: [bool; 3],
    ncomp: usize,
    ng: IntVect,
    value: impl Fn(IntVect, usize) -> f64,
) -> (MultiFab, Geometry) {
    let len = dom.length();
    let hi = core::array::from_fn(|d| f64::from(dom.lo()[d] + len[d]));
    let lo = core::array::from_fn(|d| f64::from(dom.lo()[d]));
    let rb = RealBox::new(lo, hi).unwrap();
    let geom = Geometry::new(dom, rb, CoordSys::Cartesian, periodic).unwrap();
    let ba = ba.convert(ix);
    let mut mf = MultiFab::new(&ba, &DistributionMapping::single(&ba), ncomp, ng);
    for l in 0..mf.local_size() {
        let g = mf.global_index(l);
        let (fb, vb) = (mf.fabbox(g), mf.box_of(g));
        let mut a = mf.array_mut_at(l);
        a.fill(fb, S);
        a.for_each_mut(vb, |i, j, k, n, v| *v = value(IntVect::new(i, j, k), n));
    }
    mf.fill_boundary(geom.periodicity()).unwrap();
    (mf, geom)
}

/// The 4³ level in two boxes split in x, two ghost cells, `lin` in every component.
fn level(ix: IndexType, periodic: [bool; 3], ncomp: usize) -> (MultiFab, Geometry) {
    let ba = BoxArray::from_domain_iv(domain(), IntVect::new(2, 4, 4));
    assert_eq!(ba.len(), 2);
    level_on(
        domain(),
        &ba,
        ix,
        periodic,
        ncomp,
        IntVect::splat(2),
        |p, _| lin_iv(p),
    )
}

/// Every value of every local fab, to see that a refused fill changed nothing.
fn snapshot(mf: &MultiFab) -> Vec<f64> {
    let mut v = Vec::new();
    for l in 0..mf.local_size() {
        let a = mf.array_at(l);
        a.for_each(mf.fabbox(mf.global_index(l)), |_, _, _, _, x| v.push(*x));
    }
    v
}

/// Asserts `expect(p, n)` at every point and component of every local fab.
#[track_caller]
fn check_all(mf: &MultiFab, expect: impl Fn(IntVect, usize) -> f64) {
    for l in 0..mf.local_size() {
        let a = mf.array_at(l);
        for p in mf.fabbox(mf.global_index(l)) {
            for n in 0..mf.ncomp() {
                assert_eq!(a[(p, n)], expect(p, n), "fab {l}, point {p}, component {n}");
            }
        }
    }
}

/// The value at global point `p` of the first local fab whose fab box holds it.
#[track_caller]
fn at(mf: &MultiFab, p: IntVect, n: usize) -> f64 {
    let l = (0..mf.local_size())
        .find(|&l| mf.fabbox(mf.global_index(l)).contains(p))
        .unwrap_or_else(|| panic!("no fab holds {p}"));
    mf.array_at(l)[(p, n)]
}

/// `x` clamped into `0..=hi`.
fn clamp(x: i32, hi: i32) -> i32 {
    x.clamp(0, hi)
}

/// The cell a reflection through the faces of `0..=3` reads.
fn mirror(x: i32) -> i32 {
    if x < 0 {
        -x - 1
    } else if x > 3 {
        7 - x
    } else {
        x
    }
}

fn no_ext_dir(_: [f64; 3], _: f64, _: usize) -> f64 {
    panic!("no ext_dir face here")
}

fn fill_uniform(mf: &mut MultiFab, geom: &Geometry, t: BCType) {
    let bcs = BCRec::uniform(t).repeated(mf.ncomp());
    fill_physical_boundary(mf, geom, &bcs, .., 0.0, no_ext_dir).unwrap();
}

#[test]
fn foextrap_copies_the_boundary_cell_into_faces_edges_and_corners() {
    let (mut mf, geom) = level(IndexType::CELL, [false; 3], 1);
    fill_uniform(&mut mf, &geom, FoExtrap);
    check_all(&mf, |p, _| lin_iv(p.map(|x| clamp(x, 3))));
    assert_eq!(at(&mf, IntVect::new(-2, 5, -1), 0), 30.0);
}

#[test]
fn reflect_even_mirrors_through_every_face() {
    let (mut mf, geom) = level(IndexType::CELL, [false; 3], 1);
    fill_uniform(&mut mf, &geom, ReflectEven);
    check_all(&mf, |p, _| lin_iv(p.map(mirror)));
    // (-2, 4, 5) mirrors to (1, 3, 2).
    assert_eq!(at(&mf, IntVect::new(-2, 4, 5), 0), 231.0);
}

#[test]
fn reflect_odd_flips_the_sign_once_per_face_crossed() {
    let (mut mf, geom) = level(IndexType::CELL, [false; 3], 1);
    fill_uniform(&mut mf, &geom, ReflectOdd);
    check_all(&mf, |p, _| {
        let crossed = (0..3).filter(|&d| !(0..=3).contains(&p[d])).count();
        let sign = if crossed % 2 == 0 { 1.0 } else { -1.0 };
        sign * lin_iv(p.map(mirror))
    });
    assert_eq!(at(&mf, IntVect::new(-1, 1, 1), 0), -110.0);
    assert_eq!(at(&mf, IntVect::new(-1, -1, 1), 0), 100.0);
    assert_eq!(at(&mf, IntVect::new(-1, -1, -1), 0), -0.0);
}

#[test]
fn hoextrap_puts_the_face_value_in_the_first_layer_and_copies_beyond() {
    let (mut mf, geom) = level(IndexType::CELL, [false; 3], 1);
    fill_uniform(&mut mf, &geom, HoExtrap);
    // Exact for linear data: the first layer holds the value on the face (i = -1/2 or
    // 7/2), the second the boundary cell's.
    let h = |x: i32| match x {
        -2 => 0.0,
        -1 => -0.5,
        4 => 3.5,
        5 => 3.0,
        _ => f64::from(x),
    };
    check_all(&mf, |p, _| lin([h(p[0]), h(p[1]), h(p[2])]));
    assert_eq!(at(&mf, IntVect::new(-1, 4, -2), 0), -0.5 + 35.0);
}

/// A tensor product `g(i) g(j) g(k)` with a cubic `g`, which the quadratic
/// extrapolation does not reproduce: every edge and corner must hold the product of the
/// one-dimensional extrapolations, whatever order AMReX's passes and corner
/// corrections apply them in.
#[test]
fn hoextrap_edges_and_corners_are_the_products_of_the_1d_extrapolations() {
    let g = |x: i32| f64::from(x * x * x + 1); // 1, 2, 9, 28 on the cells
    let ba = BoxArray::from_domain_iv(domain(), IntVect::new(2, 4, 4));
    let value = |p: IntVect, _| g(p[0]) * g(p[1]) * g(p[2]);
    let (mut mf, geom) = level_on(
        domain(),
        &ba,
        IndexType::CELL,
        [false; 3],
        1,
        IntVect::splat(2),
        value,
    );
    fill_uniform(&mut mf, &geom, HoExtrap);
    // (15·1 - 10·2 + 3·9) / 8 = 2.75 and (15·28 - 10·9 + 3·2) / 8 = 42.
    let e = |x: i32| match x {
        -2 => 1.0,
        -1 => 2.75,
        4 => 42.0,
        5 => 28.0,
        _ => g(x),
    };
    check_all(&mf, |p, _| e(p[0]) * e(p[1]) * e(p[2]));
    assert_eq!(at(&mf, IntVect::new(-1, -1, -1), 0), 2.75 * 2.75 * 2.75);
    assert_eq!(at(&mf, IntVect::new(4, -1, 4), 0), 42.0 * 2.75 * 42.0);
}

/// `q = i² + 10 j + 100 k`: the three-point stencil is exact for the quadratic, the
/// two-point one (used when the fab or the domain lacks the third cell) is not.
#[test]
fn hoextrap_falls_back_to_two_points_when_the_fab_or_the_domain_is_too_small() {
    let quad = |p: IntVect, _| f64::from(p[0] * p[0] + 10 * p[1] + 100 * p[2]);
    let bc = BCRec::new(
        [HoExtrap, FoExtrap, FoExtrap],
        [HoExtrap, FoExtrap, FoExtrap],
    );
    let ghost_x = |mf: &MultiFab, i: i32| {
        let mut seen = Vec::new();
        for (j, k) in [(0, 0), (1, 3), (3, 2)] {
            seen.push(at(mf, IntVect::new(i, j, k), 0) - f64::from(10 * j + 100 * k));
        }
        assert!(seen.iter().all(|&v| v == seen[0]), "{seen:?}");
        seen[0]
    };

    // One box over the domain: (15·0 - 10·1 + 3·4) / 8 = 1/4 and (15·9 - 10·4 + 3·1) / 8.
    let one = BoxArray::new(vec![domain()]);
    let (mut mf, geom) = level_on(
        domain(),
        &one,
        IndexType::CELL,
        [false; 3],
        1,
        IntVect::splat(1),
        quad,
    );
    fill_physical_boundary(&mut mf, &geom, &[bc], 0..1, 0.0, no_ext_dir).unwrap();
    assert_eq!(ghost_x(&mf, -1), 0.25);
    assert_eq!(ghost_x(&mf, 4), 12.25);

    // Boxes one cell wide with one ghost cell: the fab at the low face reaches i = 1
    // only, so (3·0 - 1) / 2; at the high face i = 2 only, so (3·9 - 4) / 2.
    let thin = BoxArray::from_domain_iv(domain(), IntVect::new(1, 4, 4));
    let (mut mf, geom) = level_on(
        domain(),
        &thin,
        IndexType::CELL,
        [false; 3],
        1,
        IntVect::splat(1),
        quad,
    );
    fill_physical_boundary(&mut mf, &geom, &[bc], 0..1, 0.0, no_ext_dir).unwrap();
    assert_eq!(ghost_x(&mf, -1), -0.5);
    assert_eq!(ghost_x(&mf, 4), 11.5);

    // A domain two cells wide: two points from both faces; the second layer copies.
    let narrow = IndexBox::new(IntVect::ZERO, IntVect::new(1, 3, 3));
    let ba = BoxArray::new(vec![narrow]);
    let (mut mf, geom) = level_on(
        narrow,
        &ba,
        IndexType::CELL,
        [false; 3],
        1,
        IntVect::splat(2),
        quad,
    );
    fill_physical_boundary(&mut mf, &geom, &[bc], 0..1, 0.0, no_ext_dir).unwrap();
    assert_eq!(ghost_x(&mf, -1), -0.5);
    assert_eq!(ghost_x(&mf, -2), 0.0);
    assert_eq!(ghost_x(&mf, 2), 1.5);
    assert_eq!(ghost_x(&mf, 3), 1.0);
}

#[test]
fn hoextrapcc_extrapolates_linearly_into_every_layer_from_the_first_two_cells() {
    let (mut mf, geom) = level(IndexType::CELL, [false; 3], 1);
    fill_uniform(&mut mf, &geom, HoExtrapCc);
    // 2 q(0) - q(1) is the value at i = -1 for linear data, in both layers.
    let h = |x: i32| match x {
        -2 | -1 => -1,
        4 | 5 => 4,
        _ => x,
    };
    check_all(&mf, |p, _| lin_iv(p.map(h)));
}

#[test]
fn ext_dir_takes_the_function_at_cell_centres_once_per_point_and_component() {
    let (mut mf, geom) = level(IndexType::CELL, [false; 3], 2);
    let calls = Cell::new(0_usize);
    let f = |x: [f64; 3], t: f64, n: usize| {
        calls.set(calls.get() + 1);
        1000.0 * t + lin(x) + 0.25 * n as f64
    };
    let bcs = BCRec::uniform(ExtDir).repeated(2);
    fill_physical_boundary(&mut mf, &geom, &bcs, 0..2, 3.0, f).unwrap();
    let inside = |p: IntVect| domain().contains(p);
    check_all(&mf, |p, n| {
        if inside(p) {
            lin_iv(p)
        } else {
            let centre = [0, 1, 2].map(|d| f64::from(p[d]) + 0.5);
            3000.0 + lin(centre) + 0.25 * n as f64
        }
    });
    let outside: usize = (0..mf.local_size())
        .map(|l| {
            mf.fabbox(mf.global_index(l))
                .iter()
                .filter(|&p| !inside(p))
                .count()
        })
        .sum();
    assert_eq!(calls.get(), 2 * outside);
    // The corner cell beyond three faces: its own centre.
    assert_eq!(
        at(&mf, IntVect::new(-2, -1, 5), 1),
        3000.0 + lin([-1.5, -0.5, 5.5]) + 0.25
    );
}

#[test]
fn int_dir_on_a_non_periodic_face_leaves_its_ghost_cells_alone() {
    let (mut mf, geom) = level(IndexType::CELL, [false; 3], 1);
    let mut bc = BCRec::uniform(FoExtrap);
    bc.set_lo(0, IntDir);
    fill_physical_boundary(&mut mf, &geom, &[bc], 0..1, 0.0, no_ext_dir).unwrap();
    check_all(&mf, |p, _| {
        if p[0] < 0 {
            S // the y and z passes copy the untouched sentinel along
        } else {
            lin_iv(p.map(|x| clamp(x, 3)))
        }
    });
}

/// A different type on each face, checked point by point. Edges and corners follow
/// AMReX's order: direction 0, then 1, then 2, each pass over the fab's whole extent in
/// the other directions, then the `ext_dir` function. (With exact data the passes
/// commute, so these values are also the compositions of the faces' rules.)
#[test]
fn mixed_faces_follow_amrex_order_on_edges_and_corners() {
    let (mut mf, geom) = level(IndexType::CELL, [false; 3], 1);
    let bc = BCRec::new(
        [ReflectOdd, HoExtrap, ReflectEven],
        [FoExtrap, ExtDir, HoExtrapCc],
    );
    let f = |x: [f64; 3], _t: f64, _n: usize| 5000.0 + lin(x);
    fill_physical_boundary(&mut mf, &geom, &[bc], 0..1, 0.0, f).unwrap();
    let q = |i, j, k| at(&mf, IntVect::new(i, j, k), 0);
    // Faces.
    assert_eq!(q(-1, 1, 1), -110.0); // -q(0, 1, 1)
    assert_eq!(q(-2, 1, 1), -111.0); // -q(1, 1, 1)
    assert_eq!(q(4, 2, 3), 323.0); // q(3, 2, 3)
    assert_eq!(q(5, 2, 3), 323.0);
    assert_eq!(q(1, -1, 2), 196.0); // the value at y = -1/2
    assert_eq!(q(1, -2, 2), 201.0); // q(1, 0, 2)
    assert_eq!(q(2, 4, 1), 5000.0 + lin([2.5, 4.5, 1.5]));
    assert_eq!(q(1, 1, -1), 11.0); // q(1, 1, 0)
    assert_eq!(q(1, 1, -2), 111.0); // q(1, 1, 1)
    assert_eq!(q(1, 1, 4), 411.0); // 2 q(1, 1, 3) - q(1, 1, 2)
    assert_eq!(q(1, 1, 5), 411.0);
    // Edges: the later direction wins, applied to the earlier one's ghost values.
    assert_eq!(q(-1, -1, 1), -95.0); // y's stencil over -q(0, j, 1)
    assert_eq!(q(-2, -2, 1), -101.0); // y's copy of -q(1, 0, 1)
    assert_eq!(q(5, -1, 2), 198.0); // y's stencil over q(3, j, 2)
    assert_eq!(q(-1, 4, 1), 5000.0 + lin([-0.5, 4.5, 1.5])); // ext_dir wins
    // Corners.
    assert_eq!(q(-1, -1, -1), 5.0); // z's mirror of the edge value -(0 - 5 + 0)
    assert_eq!(q(5, -1, 4), 398.0); // 2 q(5, -1, 3) - q(5, -1, 2) = 2·298 - 198
    assert_eq!(q(5, 5, 5), 5000.0 + lin([5.5, 5.5, 5.5]));
}

#[test]
fn only_the_components_asked_for_are_filled() {
    let (mut mf, geom) = level(IndexType::CELL, [false; 3], 3);
    let before = snapshot(&mf);
    let bcs = BCRec::uniform(ExtDir).repeated(3);
    let seen = RefCell::new(Vec::new());
    fill_physical_boundary(&mut mf, &geom, &bcs, 1..=1, 0.0, |_, _, n| {
        seen.borrow_mut().push(n);
        -1.0
    })
    .unwrap();
    assert!(!seen.borrow().is_empty());
    assert!(seen.borrow().iter().all(|&n| n == 1));
    check_all(&mf, |p, n| {
        if domain().contains(p) {
            lin_iv(p)
        } else if n == 1 {
            -1.0
        } else {
            S
        }
    });
    // An empty range changes nothing.
    let (mut mf, geom) = level(IndexType::CELL, [false; 3], 3);
    fill_physical_boundary(&mut mf, &geom, &bcs, 2..2, 0.0, no_ext_dir).unwrap();
    assert_eq!(snapshot(&mf), before);
}

#[test]
fn periodic_directions_are_left_to_fill_boundary() {
    let (mut mf, geom) = level(IndexType::CELL, [true, false, true], 1);
    let periodic_part = snapshot(&mf);
    // foextrap everywhere, the periodic faces included: those records are ignored.
    fill_uniform(&mut mf, &geom, FoExtrap);
    let wrap = |x: i32| x.rem_euclid(4);
    check_all(&mf, |p, _| {
        lin_iv(IntVect::new(wrap(p[0]), clamp(p[1], 3), wrap(p[2])))
    });
    // What fill_boundary put beyond the periodic faces is untouched.
    let (mf0, _) = level(IndexType::CELL, [true, false, true], 1);
    for l in 0..mf.local_size() {
        let (a, b) = (mf.array_at(l), mf0.array_at(l));
        for p in mf.fabbox(mf.global_index(l)) {
            if (0..=3).contains(&p[1]) {
                assert_eq!(a[(p, 0)], b[(p, 0)], "{p}");
            }
        }
    }
    assert_ne!(snapshot(&mf), periodic_part);

    // All periodic: nothing to do, even for ext_dir records.
    let (mut mf, geom) = level(IndexType::CELL, [true; 3], 1);
    let before = snapshot(&mf);
    let bcs = [BCRec::uniform(ExtDir)];
    fill_physical_boundary(&mut mf, &geom, &bcs, 0..1, 0.0, no_ext_dir).unwrap();
    assert_eq!(snapshot(&mf), before);
}

#[test]
fn nodal_data_copies_the_boundary_node_for_every_type_but_int_dir() {
    let (mut mf, geom) = level(IndexType::NODE, [false; 3], 1);
    // FilND has one rule: reflections and extrapolations all copy the boundary node.
    let bc = BCRec::new(
        [ReflectOdd, HoExtrap, ReflectEven],
        [HoExtrapCc, FoExtrap, IntDir],
    );
    fill_physical_boundary(&mut mf, &geom, &[bc], 0..1, 0.0, no_ext_dir).unwrap();
    check_all(&mf, |p, _| {
        if p[2] > 4 {
            S // beyond the int_dir face (the x and y passes copy the sentinel along)
        } else {
            lin_iv(p.map(|x| clamp(x, 4)))
        }
    });
    assert_eq!(at(&mf, IntVect::new(-2, 6, 1), 0), 140.0);
}

#[test]
fn nodal_ext_dir_takes_the_function_at_the_nodes() {
    let (mut mf, geom) = level(IndexType::NODE, [false; 3], 1);
    let mut bc = BCRec::uniform(FoExtrap);
    bc.set_lo(0, ExtDir);
    bc.set_hi(2, ExtDir);
    let f = |x: [f64; 3], _t: f64, _n: usize| 1000.0 + lin(x);
    fill_physical_boundary(&mut mf, &geom, &[bc], 0..1, 0.0, f).unwrap();
    check_all(&mf, |p, _| {
        if p[0] < 0 || p[2] > 4 {
            1000.0 + lin_iv(p) // node p sits at (i, j, k)
        } else {
            lin_iv(p.map(|x| clamp(x, 4)))
        }
    });
    // The boundary nodes are valid data, never overwritten.
    assert_eq!(at(&mf, IntVect::new(0, 2, 4), 0), 420.0);
}

/// An axisymmetric level: r in [0, 1], z in [0, 2], 4 × 4 cells. Component 0 is the
/// radial velocity `u_r = r` (odd through the axis), component 1 a scalar `1 + z`
/// (even); `ext_dir` below and above in z gives the same formulas.
#[test]
fn rz_axis_reflects_the_radial_velocity_odd_and_scalars_even() {
    let dom = IndexBox::new(IntVect::ZERO, IntVect::new(3, 3, 0));
    let rb = RealBox::new([0.0; 3], [1.0, 2.0, 1.0]).unwrap();
    let geom = Geometry::new(dom, rb, CoordSys::Rz, [false; 3]).unwrap();
    let r = |i: i32| (f64::from(i) + 0.5) * 0.25;
    let z = |j: i32| (f64::from(j) + 0.5) * 0.5;
    let ba = BoxArray::from_domain_iv(dom, IntVect::new(2, 2, 1));
    let ng = IntVect::new(2, 2, 0);
    let mut mf = MultiFab::new(&ba, &DistributionMapping::single(&ba), 2, ng);
    for l in 0..mf.local_size() {
        let g = mf.global_index(l);
        let (fb, vb) = (mf.fabbox(g), mf.box_of(g));
        let mut a = mf.array_mut_at(l);
        a.fill(fb, S);
        a.for_each_mut(vb, |i, j, _, n, v| {
            *v = if n == 0 { r(i) } else { 1.0 + z(j) }
        });
    }
    mf.fill_boundary(geom.periodicity()).unwrap();

    let radial = BCRec::new([ReflectOdd, ExtDir, IntDir], [FoExtrap, ExtDir, IntDir]);
    let mut scalar = radial;
    scalar.set_lo(0, ReflectEven);
    let min_r = Cell::new(f64::INFINITY);
    let f = |x: [f64; 3], _t: f64, n: usize| {
        min_r.set(min_r.get().min(x[0]));
        if n == 0 { x[0] } else { 1.0 + x[1] }
    };
    let bc = PhysBcFunct::new(geom, vec![radial, scalar], f);
    bc.fill(&mut mf, .., 0.0).unwrap();

    check_all(&mf, |p, n| {
        if n == 0 && (0..=3).contains(&p[1]) {
            r(p[0].min(3)) // odd through r = 0: u_r(-r) = -u_r(r); copied beyond r = 1
        } else if n == 0 {
            r(p[0]) // beyond a z face: the function at the cell centre
        } else {
            1.0 + z(p[1])
        }
    });
    assert_eq!(at(&mf, IntVect::new(-1, 2, 0), 0), -0.125);
    assert_eq!(at(&mf, IntVect::new(-2, 2, 0), 0), -0.375);
    // The function saw the ghost cells' centres on the far side of the axis.
    assert_eq!(min_r.get(), -0.375);
}

#[test]
fn too_few_bcrecs_are_refused_and_nothing_changes() {
    let (mut mf, geom) = level(IndexType::CELL, [false; 3], 2);
    let before = snapshot(&mf);
    let one = [BCRec::uniform(FoExtrap)];
    let e = fill_physical_boundary(&mut mf, &geom, &one, 0..2, 0.0, no_ext_dir).unwrap_err();
    assert_eq!(
        e.kind(),
        &AmrErrorKind::TooFewBcRecs {
            given: 1,
            needed: 2
        }
    );
    // Record c is component c's: component 1 alone still needs two.
    let e = fill_physical_boundary(&mut mf, &geom, &one, 1..2, 0.0, no_ext_dir).unwrap_err();
    assert_eq!(
        e.kind(),
        &AmrErrorKind::TooFewBcRecs {
            given: 1,
            needed: 2
        }
    );
    assert_eq!(
        e.to_string(),
        "fill_physical_boundary: needs 2 boundary records (one per component from the \
         first record used), got 1"
    );
    assert_eq!(snapshot(&mf), before);
}

#[test]
fn components_out_of_range_are_refused() {
    let (mut mf, geom) = level(IndexType::CELL, [false; 3], 2);
    let before = snapshot(&mf);
    let bcs = BCRec::uniform(FoExtrap).repeated(4);
    let mut kind = |r: (Bound<usize>, Bound<usize>)| {
        fill_physical_boundary(&mut mf, &geom, &bcs, r, 0.0, no_ext_dir)
            .unwrap_err()
            .into_kind()
    };
    use Bound::{Excluded, Included, Unbounded};
    let outside = |start, end| AmrErrorKind::ComponentsOutside {
        operand: Operand::Dest,
        start,
        end,
        ncomp: 2,
    };
    assert_eq!(kind((Included(0), Excluded(3))), outside(0, 3));
    assert_eq!(kind((Included(2), Excluded(1))), outside(2, 1));
    assert_eq!(
        kind((Unbounded, Included(usize::MAX))),
        outside(0, usize::MAX)
    );
    assert_eq!(kind((Included(3), Unbounded)), outside(3, 2));
    let e = fill_physical_boundary(&mut mf, &geom, &bcs, 1..3, 0.0, no_ext_dir).unwrap_err();
    assert_eq!(
        e.to_string(),
        "fill_physical_boundary: components 1..3 are not within the destination data's 2 \
         components"
    );
    assert_eq!(snapshot(&mf), before);
}

#[test]
fn boxes_outside_the_domain_are_refused() {
    // The BoxArray covers 8³ cells, the geometry 4³.
    let big = IndexBox::new(IntVect::ZERO, IntVect::splat(7));
    let ba = BoxArray::from_domain(big, 4);
    let (mut mf, geom) = level_on(
        domain(),
        &ba,
        IndexType::CELL,
        [false; 3],
        1,
        IntVect::splat(1),
        |p, _| lin_iv(p),
    );
    let before = snapshot(&mf);
    let bcs = [BCRec::uniform(FoExtrap)];
    let e = fill_physical_boundary(&mut mf, &geom, &bcs, 0..1, 0.0, no_ext_dir).unwrap_err();
    let index = (0..ba.len())
        .find(|&g| !domain().contains_box(&ba.get(g)))
        .unwrap();
    assert_eq!(
        e.kind(),
        &AmrErrorKind::BoxOutsideDomain {
            index,
            bx: ba.get(index),
            domain: domain()
        }
    );
    assert!(e.to_string().contains("is not inside the domain"), "{e}");
    assert_eq!(snapshot(&mf), before);

    // Nodal boxes may reach the boundary nodes, not past them.
    let (mut mf, geom) = level(IndexType::NODE, [false; 3], 1);
    fill_physical_boundary(&mut mf, &geom, &bcs, 0..1, 0.0, no_ext_dir).unwrap();
    let (mut mf, geom) = level_on(
        domain(),
        &ba,
        IndexType::NODE,
        [false; 3],
        1,
        IntVect::splat(1),
        |p, _| lin_iv(p),
    );
    let e = fill_physical_boundary(&mut mf, &geom, &bcs, 0..1, 0.0, no_ext_dir).unwrap_err();
    assert!(
        matches!(e.kind(), AmrErrorKind::BoxOutsideDomain { domain, .. }
            if *domain == IndexBox::with_type(IntVect::ZERO, IntVect::splat(4), IndexType::NODE)),
        "{e}"
    );
}

#[test]
fn face_centred_data_is_refused() {
    let xface = IndexType::new(true, false, false);
    let (mut mf, geom) = level(xface, [false; 3], 1);
    let before = snapshot(&mf);
    let bcs = [BCRec::uniform(FoExtrap)];
    let e = fill_physical_boundary(&mut mf, &geom, &bcs, 0..1, 0.0, no_ext_dir).unwrap_err();
    assert_eq!(
        e.kind(),
        &AmrErrorKind::UnsupportedIndexType { found: xface }
    );
    assert!(
        e.to_string().starts_with(
            "fill_physical_boundary: the physical boundary fill takes cell-centred or nodal data"
        ),
        "{e}"
    );
    assert_eq!(snapshot(&mf), before);
    // Every direction periodic: nothing to fill, so any index type is taken as it is.
    let (mut mf, geom) = level(xface, [true; 3], 1);
    let before = snapshot(&mf);
    fill_physical_boundary(&mut mf, &geom, &bcs, 0..1, 0.0, no_ext_dir).unwrap();
    assert_eq!(snapshot(&mf), before);
}
#[test]
fn phys_bc_funct_reports_the_same_errors() {
    let (mut mf, geom) = level(IndexType::CELL, [false; 3], 2);
    let bc = PhysBcFunct::new(geom, BCRec::uniform(FoExtrap).repeated(1), no_ext_dir);
    assert_eq!(bc.bcrecs().len(), 1);
    assert_eq!(bc.geometry(), &geom);
    let e = bc.fill(&mut mf, .., 0.0).unwrap_err();
    assert_eq!(
        e.kind(),
        &AmrErrorKind::TooFewBcRecs {
            given: 1,
            needed: 2
        }
    );
    bc.fill(&mut mf, 0..1, 0.0).unwrap();
    assert!(format!("{bc:?}").starts_with("PhysBcFunct { geom: "));
}
