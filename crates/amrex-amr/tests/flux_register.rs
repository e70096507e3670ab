//! The flux register: conservation of a two-level conservative update after refluxing
//! (ratios 2, 4 and (2, 2, 1), subcycled and not, periodic and not, fine levels that
//! cross periodic boundaries, coarse and fine data on other BoxArrays), hand-computed
//! `fine_add` sums and `reflux` signs, `crse_init`/`crse_add`, `clear_internal_borders`,
//! `overwrite_flux`, and every error.
#![warn(clippy::cast_possible_truncation)]

use amrex_amr::Comps;
use amrex_amr::flux_register::Side;
use amrex_amr::{AmrError, AmrErrorKind as K, FluxRegister, Operand};
use amrex_geometry::{CoordSys, Geometry, RealBox};
use amrex_multifab::{
    BoxArray, CopyOp, DistributionMapping, IndexBox, IndexType, IntVect, MultiFab, Tiling,
};

// ----- helpers --------------------------------------------------------------------

/// A deterministic pseudo-random value in `[-1, 1)` for a seed and four integers
/// (splitmix64 over their combination).
fn noise(seed: u64, parts: [i64; 4]) -> f64 {
    let mut h = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    for p in parts {
        h ^= p as u64;
        h = h.wrapping_add(0x9E37_79B9_7F4A_7C15);
        h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        h ^= h >> 31;
    }
    (h >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

fn faces(dir: usize) -> IndexType {
    IndexType::CELL.with_node(dir)
}

/// Sets every valid point of `mf` (every component) to `f(point, component)`.
fn fill(mf: &mut MultiFab, f: impl Fn(IntVect, usize) -> f64 + Sync) {
    let nc = mf.ncomp();
    mf.par_for_each_tile(Tiling::None, IntVect::ZERO, |mut t| {
        let bx = t.region();
        let mut a = t.array_mut();
        for p in bx {
            for n in 0..nc {
                a[(p[0], p[1], p[2], n)] = f(p, n);
            }
        }
    });
}

/// Every value of every local fab of `mf`, ghost cells included.
fn values(mf: &MultiFab) -> Vec<f64> {
    mf.fabs()
        .flat_map(|f| f.as_slice().unwrap().to_vec())
        .collect()
}

/// Every value of the six registers.
fn register_values(fr: &FluxRegister) -> Vec<f64> {
    (0..3)
        .flat_map(|d| Side::BOTH.map(|s| values(fr.register(d, s))))
        .flatten()
        .collect()
}

/// The value at `p`, component `n`, wherever a box of `mf` holds it.
fn at(mf: &MultiFab, p: IntVect, n: usize) -> f64 {
    mf.value_at(p, n).unwrap()
}

/// The area of a face normal to `dir` in a Cartesian geometry.
fn area(g: &Geometry, dir: usize) -> f64 {
    let dx = g.cell_size();
    match dir {
        0 => dx[1] * dx[2],
        1 => dx[0] * dx[2],
        _ => dx[0] * dx[1],
    }
}

/// A face flux on the faces of `ba` normal to `dir`: noise of the face's index, taken
/// modulo the domain in the periodic directions, so faces shared by boxes or by periodic
/// images agree.
fn face_flux(
    ba: &BoxArray,
    dm: &DistributionMapping,
    dir: usize,
    g: &Geometry,
    seed: u64,
) -> MultiFab {
    let mut mf = MultiFab::new(&ba.convert(faces(dir)), dm, 1, IntVect::ZERO);
    let len = g.domain().length();
    let wrap = |p: IntVect, d: usize| {
        let v = i64::from(p[d] - g.domain().lo()[d]);
        if g.is_periodic(d) {
            v.rem_euclid(i64::from(len[d]))
        } else {
            v
        }
    };
    fill(&mut mf, |p, _| {
        noise(seed, [dir as i64, wrap(p, 0), wrap(p, 1), wrap(p, 2)])
    });
    mf
}

/// One conservative update: `u -= dt Σ_d (F_d(c + e_d) - F_d(c)) / dx_d` on every valid
/// cell (the fluxes on the state's BoxArray and distribution).
fn update(u: &mut MultiFab, fluxes: &[MultiFab; 3], dt: f64, g: &Geometry) {
    let inv = g.inv_cell_size();
    u.par_for_each_tile(Tiling::None, IntVect::ZERO, |mut t| {
        let bx = t.region();
        let f: Vec<_> = fluxes.iter().map(|f| f.array(t.mfi())).collect();
        let mut a = t.array_mut();
        for c in bx {
            let mut div = 0.0;
            for d in 0..3 {
                let e = c + IntVect::basis(d);
                div += (f[d][(e[0], e[1], e[2], 0)] - f[d][(c[0], c[1], c[2], 0)]) * inv[d];
            }
            a[(c[0], c[1], c[2], 0)] -= dt * div;
        }
    });
}

/// The total `Σ u V` over the coarse cells the fine level does not cover and every fine
/// cell, and `Σ |u V|` over the same cells (the scale of the round-off).
fn mass(
    crse: &MultiFab,
    fine: &MultiFab,
    covered: &BoxArray,
    cg: &Geometry,
    fg: &Geometry,
) -> (f64, f64) {
    let (vc, vf) = (cg.volume(IntVect::ZERO), fg.volume(IntVect::ZERO));
    let (mut sum, mut abs) = (0.0, 0.0);
    for l in 0..crse.local_size() {
        let a = crse.array_at(l);
        for c in crse.box_of(crse.global_index(l)) {
            if !covered.contains(c) {
                let m = a[(c[0], c[1], c[2], 0)] * vc;
                sum += m;
                abs += m.abs();
            }
        }
    }
    for l in 0..fine.local_size() {
        let a = fine.array_at(l);
        for c in fine.box_of(fine.global_index(l)) {
            let m = a[(c[0], c[1], c[2], 0)] * vf;
            sum += m;
            abs += m.abs();
        }
    }
    (sum, abs)
}

/// Two levels: a coarse 16³ domain over `[0,1]×[0,2]×[0,1/2]` (so `dx` differs per
/// direction) in boxes of 8³, a fine level over the coarse cells `region` refined by
/// `ratio`, chopped into boxes of at most `fine_max`.
struct Levels {
    cg: Geometry,
    fg: Geometry,
    cba: BoxArray,
    cdm: DistributionMapping,
    fba: BoxArray,
    fdm: DistributionMapping,
    ratio: IntVect,
}

fn levels(ratio: IntVect, periodic: bool, region: IndexBox, fine_max: IntVect) -> Levels {
    let cdom = IndexBox::new(IntVect::ZERO, IntVect::splat(15));
    let rb = RealBox::new([0.0; 3], [1.0, 2.0, 0.5]).unwrap();
    let cg = Geometry::new(cdom, rb, CoordSys::Cartesian, [periodic; 3]).unwrap();
    let fg = cg.refine(ratio).unwrap();
    let cba = BoxArray::from_domain(cdom, 8);
    let fba = BoxArray::from_domain_iv(region.refine_iv(ratio), fine_max);
    Levels {
        cdm: DistributionMapping::single(&cba),
        fdm: DistributionMapping::single(&fba),
        cg,
        fg,
        cba,
        fba,
        ratio,
    }
}

/// How one coarse step runs.
#[derive(Clone, Copy)]
struct Step {
    /// Fine substeps per coarse step (1: not subcycled).
    nsub: usize,
    /// Reflux at the end.
    reflux: bool,
    /// Clear the internal borders before refluxing.
    clear: bool,
}

impl Step {
    /// One fine step, no reflux: the registers as the step leaves them.
    const REGISTERS_ONLY: Self = Self {
        nsub: 1,
        reflux: false,
        clear: false,
    };
}

/// One coarse step and `nsub` fine steps of the conservative update from zero states,
/// with the register filled as AMReX's `AmrCoreAdv` does (coarse `mult = -dt A_c`,
/// fine `mult = dt_f A_f`), then refluxed. Returns the coarse and fine states.
fn coarse_step(lv: &Levels, step: Step) -> (MultiFab, MultiFab, FluxRegister) {
    let dt = 0.01;
    let mut uc = MultiFab::new(&lv.cba, &lv.cdm, 1, IntVect::ZERO);
    let mut uf = MultiFab::new(&lv.fba, &lv.fdm, 1, IntVect::ZERO);
    let mut fr = FluxRegister::new(&lv.fba, &lv.fdm, lv.ratio, 1, 1).unwrap();

    let cflux: [MultiFab; 3] = core::array::from_fn(|d| face_flux(&lv.cba, &lv.cdm, d, &lv.cg, 1));
    update(&mut uc, &cflux, dt, &lv.cg);
    for (d, f) in cflux.iter().enumerate() {
        fr.crse_init(f, d, Comps::first(1), -dt * area(&lv.cg, d), CopyOp::Copy)
            .unwrap();
    }

    // Each fine substep: dt_f = dt / nsub, i.e. mult = (1 / nsub) dt A_f.
    let sub = 1.0 / step.nsub as f64;
    for s in 0..step.nsub {
        let fflux: [MultiFab; 3] =
            core::array::from_fn(|d| face_flux(&lv.fba, &lv.fdm, d, &lv.fg, 10 + s as u64));
        update(&mut uf, &fflux, dt * sub, &lv.fg);
        for (d, f) in fflux.iter().enumerate() {
            fr.fine_add(f, d, Comps::first(1), sub * dt * area(&lv.fg, d))
                .unwrap();
        }
    }
    if step.clear {
        fr.clear_internal_borders(&lv.cg);
    }
    if step.reflux {
        fr.reflux(&mut uc, 1.0, Comps::first(1), &lv.cg).unwrap();
    }
    (uc, uf, fr)
}

/// `-dt Σ` of the outward coarse fluxes through the (non-periodic) domain boundary,
/// times their areas: what a conservative update loses there.
fn boundary_loss(lv: &Levels, dt: f64) -> f64 {
    let mut loss = 0.0;
    for d in 0..3 {
        let f = face_flux(&lv.cba, &lv.cdm, d, &lv.cg, 1);
        let (lo, hi) = (lv.cg.domain().lo()[d], lv.cg.domain().hi()[d] + 1);
        for l in 0..f.local_size() {
            let a = f.array_at(l);
            for p in f.box_of(f.global_index(l)) {
                let v = a[(p[0], p[1], p[2], 0)];
                if p[d] == hi {
                    loss -= dt * area(&lv.cg, d) * v;
                } else if p[d] == lo {
                    loss += dt * area(&lv.cg, d) * v;
                }
            }
        }
    }
    loss
}

/// After the step, the total is conserved to round-off with reflux and clearly not
/// without it.
fn assert_conserved(lv: &Levels, nsub: usize) {
    let covered = lv.fba.coarsen(lv.ratio);
    let expected = if lv.cg.is_all_periodic() {
        0.0
    } else {
        boundary_loss(lv, 0.01)
    };
    for clear in [false, true] {
        let (uc, uf, _) = coarse_step(
            lv,
            Step {
                nsub,
                reflux: true,
                clear,
            },
        );
        let (m, scale) = mass(&uc, &uf, &covered, &lv.cg, &lv.fg);
        assert!(
            (m - expected).abs() <= 1e-12 * scale,
            "ratio {} nsub {nsub} clear {clear}: total {m:e}, expected {expected:e} (scale {scale:e})",
            lv.ratio
        );
    }
    let (uc, uf, _) = coarse_step(
        lv,
        Step {
            nsub,
            reflux: false,
            clear: false,
        },
    );
    let (m, scale) = mass(&uc, &uf, &covered, &lv.cg, &lv.fg);
    assert!(
        (m - expected).abs() > 1e-6 * scale,
        "without reflux the interface should leak: total {m:e}, expected {expected:e}"
    );
}

fn middle() -> IndexBox {
    IndexBox::new(IntVect::splat(4), IntVect::splat(11))
}

// ----- conservation -----------------------------------------------------------------

#[test]
fn conserves_ratio_2_periodic() {
    let lv = levels(IntVect::splat(2), true, middle(), IntVect::splat(8));
    assert!(lv.fba.len() >= 2);
    assert_conserved(&lv, 1);
    assert_conserved(&lv, 2);
}

#[test]
fn conserves_ratio_4_periodic() {
    let lv = levels(IntVect::splat(4), true, middle(), IntVect::new(32, 16, 16));
    assert!(lv.fba.len() >= 2);
    assert_conserved(&lv, 1);
    assert_conserved(&lv, 4);
}

#[test]
fn conserves_anisotropic_ratio() {
    let lv = levels(
        IntVect::new(2, 2, 1),
        true,
        middle(),
        IntVect::new(8, 16, 4),
    );
    assert!(lv.fba.len() >= 2);
    assert_conserved(&lv, 1);
    assert_conserved(&lv, 2);
}

#[test]
fn conserves_with_physical_boundaries() {
    // Non-periodic: the total changes by exactly what leaves through the domain boundary.
    let lv = levels(IntVect::splat(2), false, middle(), IntVect::splat(8));
    assert_conserved(&lv, 2);
}

#[test]
fn conserves_across_periodic_boundaries() {
    // The fine level touches the low x and high z boundaries (and a second fine region
    // sits against the high x boundary), so its interface crosses periodic boundaries.
    let cdom_lo = IndexBox::new(IntVect::new(0, 4, 10), IntVect::new(5, 11, 15));
    let mut lv = levels(IntVect::splat(2), true, cdom_lo, IntVect::splat(8));
    let other = IndexBox::new(IntVect::new(13, 2, 0), IntVect::new(15, 7, 3)).refine(2);
    let mut boxes = lv.fba.boxes().to_vec();
    boxes.push(other);
    lv.fba = BoxArray::new(boxes);
    lv.fdm = DistributionMapping::single(&lv.fba);
    assert_conserved(&lv, 1);
    assert_conserved(&lv, 2);
}

#[test]
fn any_box_arrays_give_the_same_result() {
    // Coarse state and fluxes on the coarse boxes of 8³, the reflux target on boxes of 4³;
    // fine fluxes on other boxes than the fine level's: the corrections are the same.
    let lv = levels(IntVect::splat(2), true, middle(), IntVect::splat(8));
    let (_, _, fr) = coarse_step(&lv, Step::REGISTERS_ONLY);

    // fine_add from fluxes on a BoxArray chopped differently.
    let dt = 0.01;
    let cflux: [MultiFab; 3] = core::array::from_fn(|d| face_flux(&lv.cba, &lv.cdm, d, &lv.cg, 1));
    let other_fba = BoxArray::from_domain_iv(middle().refine(2), IntVect::new(16, 4, 8));
    let other_fdm = DistributionMapping::single(&other_fba);
    let mut fr2 = FluxRegister::new(&lv.fba, &lv.fdm, lv.ratio, 1, 1).unwrap();
    for (d, cf) in cflux.iter().enumerate() {
        fr2.crse_init(cf, d, Comps::first(1), -dt * area(&lv.cg, d), CopyOp::Copy)
            .unwrap();
        let f = face_flux(&other_fba, &other_fdm, d, &lv.fg, 10);
        fr2.fine_add(&f, d, Comps::first(1), dt * area(&lv.fg, d))
            .unwrap();
    }
    assert_eq!(register_values(&fr), register_values(&fr2));

    // reflux into a state on other boxes.
    let mut a = MultiFab::new(&lv.cba, &lv.cdm, 1, IntVect::ZERO);
    fr.reflux(&mut a, 1.0, Comps::first(1), &lv.cg).unwrap();
    let small = BoxArray::from_domain(lv.cg.domain(), 4);
    let mut b = MultiFab::new(
        &small,
        &DistributionMapping::single(&small),
        1,
        IntVect::splat(1),
    );
    fr.reflux(&mut b, 1.0, Comps::first(1), &lv.cg).unwrap();
    for c in lv.cg.domain() {
        assert_eq!(at(&a, c, 0), at(&b, c, 0), "cell {c}");
    }
    // Ghost cells are left alone.
    for l in 0..b.local_size() {
        let g = b.global_index(l);
        let (valid, a) = (b.box_of(g), b.array_at(l));
        for p in b.fabbox(g) {
            if !valid.contains(p) {
                assert_eq!(a[(p[0], p[1], p[2], 0)], 0.0, "ghost cell {p}");
            }
        }
    }
}

#[test]
fn cleared_borders_leave_covered_cells_alone() {
    let lv = levels(IntVect::splat(2), true, middle(), IntVect::splat(8));
    let covered = lv.fba.coarsen(lv.ratio);
    let (uc, ..) = coarse_step(&lv, Step::REGISTERS_ONLY);
    let (cleared, ..) = coarse_step(
        &lv,
        Step {
            nsub: 1,
            reflux: true,
            clear: true,
        },
    );
    let (uncleared, ..) = coarse_step(
        &lv,
        Step {
            nsub: 1,
            reflux: true,
            clear: false,
        },
    );
    let mut moved = 0;
    for c in lv.cg.domain() {
        if covered.contains(c) {
            assert_eq!(at(&cleared, c, 0), at(&uc, c, 0), "covered cell {c}");
            moved += usize::from(at(&uncleared, c, 0) != at(&uc, c, 0));
        } else {
            assert_eq!(at(&cleared, c, 0), at(&uncleared, c, 0), "cell {c}");
        }
    }
    assert!(
        moved > 0,
        "the internal borders should have corrected covered cells"
    );
}

// ----- overwrite_flux ---------------------------------------------------------------

#[test]
fn overwritten_coarse_fluxes_conserve_without_reflux() {
    for (ratio, region) in [
        (IntVect::splat(2), middle()),
        (
            IntVect::new(2, 2, 1),
            IndexBox::new(IntVect::new(0, 4, 10), IntVect::new(5, 11, 15)),
        ),
    ] {
        let lv = levels(ratio, true, region, IntVect::splat(8));
        let dt = 0.01;
        let mut fr = FluxRegister::new(&lv.fba, &lv.fdm, ratio, 1, 1).unwrap();
        let fflux: [MultiFab; 3] =
            core::array::from_fn(|d| face_flux(&lv.fba, &lv.fdm, d, &lv.fg, 10));
        // The register holds the mean of the fine fluxes on each coarse face.
        for (d, f) in fflux.iter().enumerate() {
            fr.fine_add(f, d, Comps::first(1), area(&lv.fg, d) / area(&lv.cg, d))
                .unwrap();
        }
        let mut cflux: [MultiFab; 3] =
            core::array::from_fn(|d| face_flux(&lv.cba, &lv.cdm, d, &lv.cg, 1));
        let before: Vec<Vec<f64>> = cflux.iter().map(values).collect();
        let [c0, c1, c2] = &mut cflux;
        fr.overwrite_flux([c0, c1, c2], 1.0, Comps::first(1), &lv.cg)
            .unwrap();

        // Only interface faces changed, each to the mean of its fine faces.
        let covered = lv.fba.coarsen(ratio);
        let period = lv.cg.domain().length();
        let wrap = |c: IntVect| c.zip_map(period, i32::rem_euclid);
        for d in 0..3 {
            let f = &cflux[d];
            let orig = face_flux(&lv.cba, &lv.cdm, d, &lv.cg, 1);
            let mut changed = 0;
            for l in 0..f.local_size() {
                for p in f.box_of(f.global_index(l)) {
                    let (below, above) = (
                        covered.contains(wrap(p - IntVect::basis(d))),
                        covered.contains(wrap(p)),
                    );
                    if below != above {
                        changed += 1;
                        let r = lv.ratio;
                        let fine_lo = p.refine(r);
                        let mut sum = 0.0;
                        let mut n = 0.0;
                        let t = IndexBox::new(fine_lo, fine_lo + r - IntVect::UNIT)
                            .make_slab(d, fine_lo[d]);
                        for q in t {
                            sum += noise(
                                10,
                                [
                                    d as i64,
                                    i64::from(q[0].rem_euclid(16 * r[0])),
                                    i64::from(q[1].rem_euclid(16 * r[1])),
                                    i64::from(q[2].rem_euclid(16 * r[2])),
                                ],
                            );
                            n += 1.0;
                        }
                        let got = f.array_at(l)[(p[0], p[1], p[2], 0)];
                        assert!(
                            (got - sum / n).abs() < 1e-14,
                            "face {p} dir {d}: {got} vs {}",
                            sum / n
                        );
                    } else {
                        assert_eq!(
                            f.array_at(l)[(p[0], p[1], p[2], 0)],
                            orig.array_at(l)[(p[0], p[1], p[2], 0)]
                        );
                    }
                }
            }
            assert!(changed > 0);
            assert_ne!(values(f), before[d]);
        }

        // The coarse update with those fluxes plus the fine update conserve.
        let mut uc = MultiFab::new(&lv.cba, &lv.cdm, 1, IntVect::ZERO);
        let mut uf = MultiFab::new(&lv.fba, &lv.fdm, 1, IntVect::ZERO);
        update(&mut uc, &cflux, dt, &lv.cg);
        update(&mut uf, &fflux, dt, &lv.fg);
        let (m, scale) = mass(&uc, &uf, &covered, &lv.cg, &lv.fg);
        assert!(
            m.abs() <= 1e-12 * scale,
            "ratio {ratio}: total {m:e} (scale {scale:e})"
        );
    }
}

// ----- hand-computed cases ----------------------------------------------------------

/// One fine box over fine cells 4..=7 (coarse 2..=3) in a 16³ coarse domain of unit
/// cells, ratio 2, two components.
fn one_box(ratio: IntVect) -> (BoxArray, DistributionMapping, FluxRegister) {
    let fba = BoxArray::new(vec![IndexBox::new(
        IntVect::splat(2).refine(ratio),
        (IntVect::splat(4)).refine(ratio) - IntVect::UNIT,
    )]);
    let fdm = DistributionMapping::single(&fba);
    let fr = FluxRegister::new(&fba, &fdm, ratio, 1, 2).unwrap();
    (fba, fdm, fr)
}

#[test]
fn fine_add_sums_the_covered_fine_faces() {
    let (fba, fdm, mut fr) = one_box(IntVect::splat(2));
    for d in 0..3 {
        // Flux i + 10 j + 100 k in component 1 (component 0 is junk that must be ignored).
        let mut f = MultiFab::new(&fba.convert(faces(d)), &fdm, 2, IntVect::ZERO);
        fill(&mut f, |p, n| {
            if n == 1 {
                f64::from(p[0] + 10 * p[1] + 100 * p[2])
            } else {
                1e9
            }
        });
        fr.fine_add(&f, d, Comps::new(1, 0, 1), 0.5).unwrap();
    }
    // x, low side: coarse face (2, 2, 3) covers fine faces i = 4, j = 4..=5, k = 6..=7:
    // 0.5 (644 + 654 + 744 + 754) = 1398.
    let lo_x = fr.register(0, Side::Lo);
    assert_eq!(at(lo_x, IntVect::new(2, 2, 3), 0), 1398.0);
    // x, high side: face 4 covers i = 8: 0.5 (648 + 658 + 748 + 758).
    assert_eq!(
        at(fr.register(0, Side::Hi), IntVect::new(4, 2, 3), 0),
        1406.0
    );
    // y, low side: coarse face (3, 2, 2): i = 6..=7, j = 4, k = 4..=5:
    // 0.5 (446 + 447 + 546 + 547) = 993.
    assert_eq!(
        at(fr.register(1, Side::Lo), IntVect::new(3, 2, 2), 0),
        993.0
    );
    // z, high side: coarse face (2, 3, 4): i = 4..=5, j = 6..=7, k = 8:
    // 0.5 (864 + 865 + 874 + 875) = 1739.
    assert_eq!(
        at(fr.register(2, Side::Hi), IntVect::new(2, 3, 4), 0),
        1739.0
    );
    // The second component was not touched.
    for d in 0..3 {
        for s in Side::BOTH {
            assert_eq!(fr.register(d, s).max(1..2, 0).unwrap(), 0.0);
        }
    }
    // A second fine_add accumulates.
    let mut f = MultiFab::new(&fba.convert(faces(0)), &fdm, 1, IntVect::ZERO);
    f.set_val(1.0, .., 0).unwrap();
    fr.fine_add(&f, 0, Comps::first(1), 0.25).unwrap();
    assert_eq!(
        at(fr.register(0, Side::Lo), IntVect::new(2, 2, 3), 0),
        1399.0
    );
}

#[test]
fn fine_add_matches_brute_force_for_every_ratio() {
    for ratio in [
        IntVect::splat(2),
        IntVect::splat(4),
        IntVect::new(2, 2, 1),
        IntVect::new(1, 3, 2),
    ] {
        let (fba, fdm, mut fr) = one_box(ratio);
        for d in 0..3 {
            let mut f = MultiFab::new(&fba.convert(faces(d)), &fdm, 1, IntVect::ZERO);
            fill(&mut f, |p, _| {
                noise(7, [d as i64, p[0].into(), p[1].into(), p[2].into()])
            });
            fr.fine_add(&f, d, Comps::new(0, 1, 1), 0.75).unwrap();
            for s in Side::BOTH {
                let reg = fr.register(d, s);
                let rbox = reg.box_of(0);
                for c in rbox {
                    let fine_lo = c.refine(ratio);
                    let t = IndexBox::new(fine_lo, fine_lo + ratio - IntVect::UNIT)
                        .make_slab(d, fine_lo[d]);
                    let want: f64 = t
                        .iter()
                        .map(|q| 0.75 * noise(7, [d as i64, q[0].into(), q[1].into(), q[2].into()]))
                        .sum();
                    assert!(
                        (at(reg, c, 1) - want).abs() < 1e-14,
                        "ratio {ratio} dir {d} face {c}"
                    );
                }
            }
        }
    }
}

#[test]
fn fine_add_area_weighs_each_fine_face() {
    let (fba, fdm, mut fr) = one_box(IntVect::splat(2));
    let mut plain = FluxRegister::new(&fba, &fdm, IntVect::splat(2), 1, 2).unwrap();
    for d in 0..3 {
        let ba = fba.convert(faces(d));
        let mut f = MultiFab::new(&ba, &fdm, 1, IntVect::ZERO);
        fill(&mut f, |p, _| {
            noise(3, [d as i64, p[0].into(), p[1].into(), p[2].into()])
        });
        let mut a = MultiFab::new(&ba, &fdm, 1, IntVect::ZERO);
        a.set_val(0.125, .., 0).unwrap();
        fr.fine_add_area(&f, &a, d, Comps::first(1), 2.0).unwrap();
        plain.fine_add(&f, d, Comps::first(1), 2.0 * 0.125).unwrap();
    }
    assert_eq!(register_values(&fr), register_values(&plain));

    // Varying areas: each fine face weighed by its own.
    let ba = fba.convert(faces(2));
    let mut f = MultiFab::new(&ba, &fdm, 1, IntVect::ZERO);
    f.set_val(1.0, .., 0).unwrap();
    let mut a = MultiFab::new(&ba, &fdm, 1, IntVect::ZERO);
    fill(&mut a, |p, _| f64::from(p[0]));
    fr.set_val(0.0);
    fr.fine_add_area(&f, &a, 2, Comps::new(0, 1, 1), 1.0)
        .unwrap();
    // Coarse face (3, 2, 2) low z: fine i = 6, 7 twice each.
    assert_eq!(at(fr.register(2, Side::Lo), IntVect::new(3, 2, 2), 1), 26.0);
}

#[test]
fn reflux_signs_on_each_side_and_direction() {
    // Coarse 16³ over [0,1]×[0,2]×[0,1/2]: V = 1/16 · 1/8 · 1/32 = 1/4096.
    let lv = levels(
        IntVect::splat(2),
        false,
        IndexBox::new(IntVect::splat(4), IntVect::splat(7)),
        IntVect::splat(8),
    );
    let v = lv.cg.volume(IntVect::ZERO);
    assert_eq!(v, 1.0 / 4096.0);
    let mut fr = FluxRegister::new(&lv.fba, &lv.fdm, lv.ratio, 1, 1).unwrap();
    for d in 0..3 {
        for side in Side::BOTH {
            fr.set_val(0.0);
            // One register face at tangential (5, 6) set to 3.
            let face = match side {
                Side::Lo => 4,
                Side::Hi => 8,
            };
            let p = IntVect::new(5, 5, 6).with(d, face);
            let reg = fr.register_mut(d, side);
            let l = 0;
            reg.array_mut_at(l)[(p[0], p[1], p[2], 0)] = 3.0;
            let mut u = MultiFab::new(&lv.cba, &lv.cdm, 1, IntVect::ZERO);
            fr.reflux(&mut u, 2.0, Comps::first(1), &lv.cg).unwrap();
            // Low side: the cell below the face loses scale·r/V; high side: the cell
            // above gains it.
            let (cell, want) = match side {
                Side::Lo => (p - IntVect::basis(d), -2.0 * 3.0 / v),
                Side::Hi => (p, 2.0 * 3.0 / v),
            };
            for c in lv.cg.domain() {
                let expect = if c == cell { want } else { 0.0 };
                assert_eq!(at(&u, c, 0), expect, "dir {d} side {side:?} cell {c}");
            }
        }
    }
}

#[test]
fn reflux_volume_and_curvilinear_volumes() {
    let lv = levels(IntVect::splat(2), true, middle(), IntVect::splat(8));
    let (_, _, fr) = coarse_step(&lv, Step::REGISTERS_ONLY);
    let mut a = MultiFab::new(&lv.cba, &lv.cdm, 1, IntVect::ZERO);
    fr.reflux(&mut a, 1.0, Comps::first(1), &lv.cg).unwrap();
    let mut vol = MultiFab::new(&lv.cba, &lv.cdm, 1, IntVect::ZERO);
    vol.set_val(lv.cg.volume(IntVect::ZERO), .., 0).unwrap();
    let mut b = MultiFab::new(&lv.cba, &lv.cdm, 1, IntVect::ZERO);
    fr.reflux_volume(&mut b, &vol, 1.0, Comps::first(1), &lv.cg)
        .unwrap();
    assert_eq!(values(&a), values(&b));

    // RZ: each cell's own volume.
    let dom = IndexBox::new(IntVect::ZERO, IntVect::new(15, 15, 0));
    let rb = RealBox::new([0.0; 3], [1.0, 1.0, 1.0]).unwrap();
    let g = Geometry::new(dom, rb, CoordSys::Rz, [false; 3]).unwrap();
    let cba = BoxArray::from_domain(dom, 8);
    let cdm = DistributionMapping::single(&cba);
    let fba = BoxArray::new(vec![IndexBox::new(
        IntVect::new(8, 8, 0),
        IntVect::new(15, 15, 0),
    )]);
    let mut fr = FluxRegister::new(
        &fba,
        &DistributionMapping::single(&fba),
        IntVect::new(2, 2, 1),
        1,
        1,
    )
    .unwrap();
    fr.register_mut(0, Side::Lo).set_val(1.0, .., 0).unwrap();
    let mut u = MultiFab::new(&cba, &cdm, 1, IntVect::ZERO);
    fr.reflux(&mut u, 1.0, Comps::first(1), &g).unwrap();
    for j in 4..8 {
        let c = IntVect::new(3, j, 0);
        assert_eq!(at(&u, c, 0), -1.0 / g.volume(c));
    }
    assert_ne!(
        g.volume(IntVect::new(3, 4, 0)),
        g.volume(IntVect::new(2, 4, 0))
    );
}

#[test]
fn crse_init_copy_add_and_crse_add() {
    let (_, _, mut fr) = one_box(IntVect::splat(2));
    let cdom = IndexBox::new(IntVect::ZERO, IntVect::splat(15));
    let cg = Geometry::new(
        cdom,
        RealBox::new([0.0; 3], [1.0; 3]).unwrap(),
        CoordSys::Cartesian,
        [true; 3],
    )
    .unwrap();
    let cba = BoxArray::from_domain(cdom, 4);
    let cdm = DistributionMapping::single(&cba);
    let f: [MultiFab; 3] = core::array::from_fn(|d| {
        let mut f = MultiFab::new(&cba.convert(faces(d)), &cdm, 2, IntVect::ZERO);
        fill(&mut f, |p, n| f64::from(p[d]) + 100.0 * n as f64);
        f
    });
    for (d, f) in f.iter().enumerate() {
        fr.crse_init(f, d, Comps::new(1, 0, 1), -2.0, CopyOp::Copy)
            .unwrap();
    }
    let lo =
        |fr: &FluxRegister, d: usize| at(fr.register(d, Side::Lo), IntVect::splat(3).with(d, 2), 0);
    let hi =
        |fr: &FluxRegister, d: usize| at(fr.register(d, Side::Hi), IntVect::splat(3).with(d, 4), 0);
    for d in 0..3 {
        assert_eq!(lo(&fr, d), -2.0 * 102.0);
        assert_eq!(hi(&fr, d), -2.0 * 104.0);
    }
    // Copy again overwrites; Add adds once per face even where coarse boxes share it
    // (face 4 is shared by the coarse boxes 0..=3 and 4..=7).
    for (d, fd) in f.iter().enumerate() {
        fr.crse_init(fd, d, Comps::new(1, 0, 1), -1.0, CopyOp::Copy)
            .unwrap();
        fr.crse_init(fd, d, Comps::first(1), 1.0, CopyOp::Add)
            .unwrap();
        assert_eq!(lo(&fr, d), -102.0 + 2.0);
        assert_eq!(hi(&fr, d), -104.0 + 4.0);
        fr.crse_add(fd, d, Comps::first(1), 1.0, &cg).unwrap();
        assert_eq!(lo(&fr, d), -102.0 + 4.0);
        assert_eq!(hi(&fr, d), -104.0 + 8.0);
    }
    // Area forms: mult · flux · area.
    let mut a = MultiFab::new(f[1].box_array(), &cdm, 1, IntVect::ZERO);
    a.set_val(0.5, .., 0).unwrap();
    fr.crse_init_area(&f[1], &a, 1, Comps::new(0, 1, 1), 4.0, CopyOp::Copy)
        .unwrap();
    assert_eq!(at(fr.register(1, Side::Lo), IntVect::new(3, 2, 3), 1), 4.0);
    fr.crse_add_area(&f[1], &a, 1, Comps::new(0, 1, 1), 4.0, &cg)
        .unwrap();
    assert_eq!(at(fr.register(1, Side::Hi), IntVect::new(3, 4, 3), 1), 16.0);
}

#[test]
fn clear_internal_borders_zeroes_shared_faces() {
    let cdom = IndexBox::new(IntVect::ZERO, IntVect::splat(15));
    let rb = RealBox::new([0.0; 3], [1.0; 3]).unwrap();
    for periodic in [false, true] {
        let cg = Geometry::new(cdom, rb, CoordSys::Cartesian, [periodic, false, false]).unwrap();
        // A and B share the face x = 8 (coarse); A and C meet across the x boundary.
        let a = IndexBox::new(IntVect::new(0, 4, 4), IntVect::new(7, 7, 7));
        let b = IndexBox::new(IntVect::new(8, 4, 4), IntVect::new(11, 7, 7));
        let c = IndexBox::new(IntVect::new(12, 4, 4), IntVect::new(15, 7, 7));
        let fba = BoxArray::new(vec![a.refine(2), b.refine(2), c.refine(2)]);
        let mut fr = FluxRegister::new(
            &fba,
            &DistributionMapping::single(&fba),
            IntVect::splat(2),
            1,
            1,
        )
        .unwrap();
        fr.set_val(1.0);
        fr.clear_internal_borders(&cg);
        let lo = fr.register(0, Side::Lo);
        let hi = fr.register(0, Side::Hi);
        let face = |x| IntVect::new(x, 5, 6);
        // Shared by A (high) and B (low), and by B (high) and C (low).
        assert_eq!(at(hi, face(8), 0), 0.0);
        assert_eq!(at(lo, face(8), 0), 0.0);
        assert_eq!(at(hi, face(12), 0), 0.0);
        assert_eq!(at(lo, face(12), 0), 0.0);
        // A's low face at 0 and C's high face at 16 are one face if x is periodic.
        let edge = if periodic { 0.0 } else { 1.0 };
        assert_eq!(lo.array_at(0)[(0, 5, 6, 0)], edge);
        assert_eq!(hi.array_at(2)[(16, 5, 6, 0)], edge);
        // The y and z faces are all on the interface.
        for d in [1, 2] {
            for s in Side::BOTH {
                assert_eq!(fr.register(d, s).min(0..1, 0).unwrap(), 1.0);
            }
        }
    }
}

#[test]
fn accessors_and_sum_reg() {
    let lv = levels(IntVect::new(2, 2, 1), true, middle(), IntVect::splat(8));
    let mut fr = FluxRegister::new(&lv.fba, &lv.fdm, lv.ratio, 3, 2).unwrap();
    assert_eq!((fr.fine_level(), fr.crse_level(), fr.ncomp()), (3, 2, 2));
    assert_eq!(fr.ratio(), IntVect::new(2, 2, 1));
    assert_eq!(fr.coarsened_boxes(), &lv.fba.coarsen(lv.ratio));
    assert_eq!(fr.distribution_map(), &lv.fdm);
    for d in 0..3 {
        for s in Side::BOTH {
            let reg = fr.register(d, s);
            assert_eq!(reg.box_array().ix_type(), faces(d));
            assert_eq!(reg.box_array().len(), lv.fba.len());
            for (k, b) in reg.box_array().boxes().iter().enumerate() {
                assert_eq!(b.length()[d], 1);
                let cb = fr.coarsened_boxes().get(k);
                let want = match s {
                    Side::Lo => cb.lo()[d],
                    Side::Hi => cb.hi()[d] + 1,
                };
                assert_eq!(b.lo()[d], want);
            }
        }
    }
    fr.set_val(1.0);
    assert_eq!(fr.sum_reg(1).unwrap(), 0.0);
    fr.register_mut(2, Side::Lo).array_mut_at(0)[(4, 4, 4, 1)] = 3.0;
    assert_eq!(fr.sum_reg(1).unwrap(), 2.0);
    assert_eq!(fr.sum_reg(0).unwrap(), 0.0);
}

// ----- errors -----------------------------------------------------------------------

fn kind(r: Result<(), AmrError>) -> K {
    r.unwrap_err().into_kind()
}

fn outside(operand: Operand, start: usize, end: usize, ncomp: usize) -> K {
    K::ComponentsOutside {
        operand,
        start,
        end,
        ncomp,
    }
}

#[test]
fn new_refuses_bad_arguments() {
    let fba = BoxArray::from_domain(IndexBox::new(IntVect::splat(8), IntVect::splat(23)), 8);
    let fdm = DistributionMapping::single(&fba);
    let new = |ba: &BoxArray, dm: &DistributionMapping, r: IntVect, lev| {
        FluxRegister::new(ba, dm, r, lev, 1).map(|_| ())
    };
    assert_eq!(
        kind(new(&fba, &fdm, IntVect::splat(2), 0)),
        K::NoCoarseLevel
    );
    assert_eq!(
        kind(new(&fba, &fdm, IntVect::new(2, 0, 2), 1)),
        K::BadRatio {
            ratio: IntVect::new(2, 0, 2)
        }
    );
    assert_eq!(
        kind(new(&fba, &fdm, IntVect::new(2, -2, 2), 1)),
        K::BadRatio {
            ratio: IntVect::new(2, -2, 2)
        }
    );
    let nodal = fba.convert(IndexType::NODE);
    assert_eq!(
        kind(new(&nodal, &fdm, IntVect::splat(2), 1)),
        K::WrongIndexType {
            operand: Operand::FineBoxes,
            expected: "cell-centred",
            found: IndexType::NODE
        }
    );
    let other = DistributionMapping::single(&BoxArray::new(vec![fba.get(0)]));
    assert_eq!(
        kind(new(&fba, &other, IntVect::splat(2), 1)),
        K::MapLength { boxes: 8, map: 1 }
    );
    let odd = BoxArray::new(vec![
        fba.get(0),
        IndexBox::new(IntVect::splat(31), IntVect::splat(34)),
    ]);
    let odd_dm = DistributionMapping::single(&odd);
    assert_eq!(
        kind(new(&odd, &odd_dm, IntVect::splat(2), 1)),
        K::NotCoarsenable {
            index: 1,
            bx: odd.get(1),
            ratio: IntVect::splat(2)
        }
    );
    let overlap = BoxArray::new(vec![
        IndexBox::new(IntVect::ZERO, IntVect::splat(3)),
        IndexBox::new(IntVect::splat(8), IntVect::splat(11)),
        IndexBox::new(IntVect::splat(2), IntVect::splat(5)),
    ]);
    let overlap_dm = DistributionMapping::single(&overlap);
    assert_eq!(
        kind(new(&overlap, &overlap_dm, IntVect::splat(2), 1)),
        K::Overlapping {
            first: 0,
            second: 2
        }
    );
    let edge = BoxArray::new(vec![IndexBox::new(
        IntVect::splat(i32::MIN),
        IntVect::splat(i32::MIN + 3),
    )]);
    let edge_dm = DistributionMapping::single(&edge);
    assert!(matches!(
        kind(new(&edge, &edge_dm, IntVect::UNIT, 1)),
        K::OutsideIndexSpace { index: 0, .. }
    ));
    // Display names the values.
    let e = FluxRegister::new(&odd, &odd_dm, IntVect::splat(2), 1, 1).unwrap_err();
    assert_eq!(e.op(), "FluxRegister::new");
    assert!(e.to_string().contains("fine box 1"), "{e}");
}

#[test]
fn operations_refuse_bad_arguments_and_change_nothing() {
    let lv = levels(IntVect::splat(2), true, middle(), IntVect::splat(8));
    let (mut uc, _, mut fr) = coarse_step(&lv, Step::REGISTERS_ONLY);
    let before = register_values(&fr);
    let state_before = values(&uc);

    let cflux = |d| face_flux(&lv.cba, &lv.cdm, d, &lv.cg, 1);
    let fflux = |d| face_flux(&lv.fba, &lv.fdm, d, &lv.fg, 10);
    let x = cflux(0);
    let cells = MultiFab::new(&lv.cba, &lv.cdm, 1, IntVect::ZERO);
    let edges = MultiFab::new(
        &lv.cba.convert(IndexType::new(true, true, false)),
        &lv.cdm,
        1,
        IntVect::ZERO,
    );

    // Direction, faces, components.
    assert_eq!(
        kind(fr.crse_init(&x, 3, Comps::first(1), -1.0, CopyOp::Copy)),
        K::BadDirection { dir: 3 }
    );
    assert_eq!(
        kind(fr.crse_init(&x, 1, Comps::first(1), -1.0, CopyOp::Copy)),
        K::WrongFaces {
            operand: Operand::Flux,
            dir: 1,
            found: faces(0)
        }
    );
    assert_eq!(
        kind(fr.crse_init(&cells, 0, Comps::first(1), -1.0, CopyOp::Add)),
        K::WrongFaces {
            operand: Operand::Flux,
            dir: 0,
            found: IndexType::CELL
        }
    );
    assert!(matches!(
        kind(fr.crse_add(&edges, 0, Comps::first(1), 1.0, &lv.cg)),
        K::WrongFaces { .. }
    ));
    assert_eq!(
        kind(fr.crse_init(&x, 0, Comps::new(1, 0, 1), -1.0, CopyOp::Copy)),
        outside(Operand::Flux, 1, 2, 1)
    );
    assert_eq!(
        kind(fr.crse_init(&x, 0, Comps::new(0, 1, 1), -1.0, CopyOp::Copy)),
        outside(Operand::Register, 1, 2, 1)
    );
    assert!(matches!(
        kind(fr.crse_init(&x, 0, Comps::new(usize::MAX, 0, 2), -1.0, CopyOp::Copy)),
        K::ComponentsOutside {
            operand: Operand::Flux,
            ..
        }
    ));
    let fx = fflux(0);
    assert_eq!(
        kind(fr.fine_add(&fx, 5, Comps::first(1), 1.0)),
        K::BadDirection { dir: 5 }
    );
    assert!(matches!(
        kind(fr.fine_add(&fx, 2, Comps::first(1), 1.0)),
        K::WrongFaces { dir: 2, .. }
    ));
    assert!(matches!(
        kind(fr.fine_add(&fx, 0, Comps::first(2), 1.0)),
        K::ComponentsOutside {
            operand: Operand::Flux,
            start: 0,
            end: 2,
            ..
        }
    ));

    // Areas: on the flux's layout, with a component.
    let wrong_area = MultiFab::new(&lv.fba.convert(faces(1)), &lv.fdm, 1, IntVect::ZERO);
    assert_eq!(
        kind(fr.fine_add_area(&fx, &wrong_area, 0, Comps::first(1), 1.0)),
        K::LayoutMismatch {
            operand: Operand::Area,
            of: Operand::Flux
        }
    );
    let no_comp = MultiFab::new(fx.box_array(), &lv.fdm, 0, IntVect::ZERO);
    assert_eq!(
        kind(fr.fine_add_area(&fx, &no_comp, 0, Comps::first(1), 1.0)),
        outside(Operand::Area, 0, 1, 0)
    );
    let cell_area = MultiFab::new(&lv.cba, &lv.cdm, 1, IntVect::ZERO);
    assert!(matches!(
        kind(fr.crse_init_area(&x, &cell_area, 0, Comps::first(1), 1.0, CopyOp::Copy)),
        K::LayoutMismatch {
            operand: Operand::Area,
            ..
        }
    ));
    assert!(matches!(
        kind(fr.crse_add_area(&x, &cell_area, 0, Comps::first(1), 1.0, &lv.cg)),
        K::LayoutMismatch {
            operand: Operand::Area,
            ..
        }
    ));

    // Reflux: a cell-centred state, components, volumes on the state's layout.
    let mut nodal = MultiFab::new(&lv.cba.convert(IndexType::NODE), &lv.cdm, 1, IntVect::ZERO);
    assert_eq!(
        kind(fr.reflux(&mut nodal, 1.0, Comps::first(1), &lv.cg)),
        K::WrongIndexType {
            operand: Operand::State,
            expected: "cell-centred",
            found: IndexType::NODE
        }
    );
    assert_eq!(
        kind(fr.reflux(&mut uc, 1.0, Comps::new(1, 0, 1), &lv.cg)),
        outside(Operand::Register, 1, 2, 1)
    );
    assert_eq!(
        kind(fr.reflux(&mut uc, 1.0, Comps::new(0, 1, 1), &lv.cg)),
        outside(Operand::State, 1, 2, 1)
    );
    let other = BoxArray::from_domain(lv.cg.domain(), 4);
    let vol = MultiFab::new(
        &other,
        &DistributionMapping::single(&other),
        1,
        IntVect::ZERO,
    );
    assert_eq!(
        kind(fr.reflux_volume(&mut uc, &vol, 1.0, Comps::first(1), &lv.cg)),
        K::LayoutMismatch {
            operand: Operand::Volume,
            of: Operand::State
        }
    );

    // overwrite_flux: each flux on its own faces, components within.
    let (mut f0, mut f1, mut f2) = (cflux(0), cflux(1), cflux(2));
    let flux_before: Vec<Vec<f64>> = [&f0, &f1, &f2].iter().map(|f| values(f)).collect();
    assert_eq!(
        kind(fr.overwrite_flux([&mut f1, &mut f0, &mut f2], 1.0, Comps::first(1), &lv.cg)),
        K::WrongFaces {
            operand: Operand::Flux,
            dir: 0,
            found: faces(1)
        }
    );
    assert_eq!(
        kind(fr.overwrite_flux(
            [&mut f0, &mut f1, &mut f2],
            1.0,
            Comps::new(0, 1, 1),
            &lv.cg
        )),
        outside(Operand::Flux, 1, 2, 1)
    );
    assert_eq!(
        kind(fr.overwrite_flux(
            [&mut f0, &mut f1, &mut f2],
            1.0,
            Comps::new(1, 0, 1),
            &lv.cg
        )),
        outside(Operand::Register, 1, 2, 1)
    );
    assert_eq!(
        kind(fr.sum_reg(1).map(|_| ())),
        outside(Operand::Register, 1, 2, 1)
    );

    // Nothing was written.
    assert_eq!(register_values(&fr), before);
    assert_eq!(values(&uc), state_before);
    let flux_after: Vec<Vec<f64>> = [&f0, &f1, &f2].iter().map(|f| values(f)).collect();
    assert_eq!(flux_after, flux_before);

    // Zero components are fine and do nothing.
    fr.crse_init(&x, 0, Comps::new(1, 1, 0), -1.0, CopyOp::Copy)
        .unwrap();
    fr.fine_add(&fx, 0, Comps::new(1, 1, 0), 1.0).unwrap();
    fr.reflux(&mut uc, 1.0, Comps::new(1, 1, 0), &lv.cg)
        .unwrap();
    assert_eq!(register_values(&fr), before);
    assert_eq!(values(&uc), state_before);
}
