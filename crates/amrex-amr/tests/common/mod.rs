//! Helpers shared by the integration tests: MultiFabs filled from functions, reference
//! averages computed cell by cell, and interpolation of a whole fine MultiFab from a
//! coarse one (the gather a `FillPatch` would do, written out here).

#![allow(
    dead_code,
    reason = "each test file uses a different subset of the helpers"
)]

use amrex_amr::{Comps, Interpolater};
use amrex_geometry::{Geometry, Periodicity};
use amrex_multifab::{BoxArray, CopyOp, DistributionMapping, IndexBox, IntVect, MultiFab, Tiling};

/// A MultiFab on `ba` (one process) with `ncomp` components and ghost width `ng`.
pub(crate) fn mf(ba: &BoxArray, ncomp: usize, ng: impl Into<IntVect>) -> MultiFab {
    MultiFab::new(ba, &DistributionMapping::new(ba), ncomp, ng.into())
}

/// Sets every point of every local fab (ghost cells included) to `f(point, n)`.
pub(crate) fn fill(m: &mut MultiFab, f: impl Fn(IntVect, usize) -> f64) {
    let typ = m.box_array().ix_type();
    for l in 0..m.local_size() {
        let bx = m.fabbox(m.global_index(l));
        let bx = IndexBox::with_type(bx.lo(), bx.hi(), typ);
        m.array_mut_at(l)
            .for_each_mut(bx, |i, j, k, n, v| *v = f(IntVect::new(i, j, k), n));
    }
}

/// `a n` rounded down, for a fraction `a` in `[0, 1)` (a proptest's `0.0..1.0`) and
/// `n >= 0`: a cell offset in a box side of `n` cells.
#[expect(
    clippy::cast_possible_truncation,
    reason = "0 <= a n <= n (asserted), and n is an i32"
)]
pub(crate) fn fraction(a: f64, n: i32) -> i32 {
    assert!((0.0..1.0).contains(&a) && n >= 0, "fraction({a}, {n})");
    (a * f64::from(n)) as i32
}

/// A deterministic pseudo-random value in `[0, 1)` for a point and component.
pub(crate) fn noise(p: IntVect, n: usize) -> f64 {
    let mut h = (p[0] as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (p[1] as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
        ^ (p[2] as u64).wrapping_mul(0x1656_67B1_9E37_79F9)
        ^ (n as u64).wrapping_mul(0x27D4_EB2F_1656_67C5);
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    (h >> 11) as f64 / (1u64 << 53) as f64
}

/// Every valid point of every box of `m`, with its value, component `n` (points shared
/// by boxes appear once per box).
pub(crate) fn points(m: &MultiFab, n: usize) -> Vec<(IntVect, f64)> {
    let mut out = Vec::new();
    for mfi in m.mfiter(Tiling::None) {
        let bx = mfi.validbox();
        let a = m.array(&mfi);
        for p in bx {
            out.push((p, a[(p, n)]));
        }
    }
    out
}

/// The value at `p`, component `n`, of the first box holding it.
pub(crate) fn at(m: &MultiFab, p: IntVect, n: usize) -> f64 {
    m.value_at(p, n)
        .unwrap_or_else(|| panic!("no box holds {p}"))
}

/// The mean of the fine cells under coarse cell `c`, summed in AMReX's order.
pub(crate) fn reference_mean(fine: &MultiFab, c: IntVect, n: usize, r: IntVect) -> f64 {
    let mut s = 0.0;
    for kr in 0..r[2] {
        for jr in 0..r[1] {
            for ir in 0..r[0] {
                let p = IntVect::new(c[0] * r[0] + ir, c[1] * r[1] + jr, c[2] * r[2] + kr);
                s += at(fine, p, n);
            }
        }
    }
    let p = i64::from(r[0]) * i64::from(r[1]) * i64::from(r[2]);
    (1.0 / p as f64) * s
}

/// A bitwise copy of every fab of `m` (ghost cells included), to check that a refused
/// operation wrote nothing.
pub(crate) fn snapshot(m: &MultiFab) -> Vec<Vec<u64>> {
    (0..m.local_size())
        .map(|l| {
            let a = m.array_at(l);
            let mut v = Vec::new();
            a.for_each(a.index_box(), |_, _, _, _, x| v.push(x.to_bits()));
            v
        })
        .collect()
}

/// `true` if `|a - b|` is within `tol` relative to the larger magnitude (or absolute
/// below 1).
pub(crate) fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * a.abs().max(b.abs()).max(1.0)
}

/// Fills the valid region of every box of `fine` (components `0..ncomp`) from `crse`
/// through `interp`: for each fine box, the coarse data over `interp.coarse_box` is
/// gathered from `crse` (valid cells and its ghost cells, which the caller has filled)
/// by a `ParallelCopy` into a temporary on those coarse boxes, then interpolated.
pub(crate) fn interp_level(
    interp: &dyn Interpolater,
    crse: &MultiFab,
    fine: &mut MultiFab,
    ratio: IntVect,
    fine_geom: Option<&Geometry>,
) {
    let ncomp = fine.ncomp();
    let typ = fine.box_array().ix_type();
    let cboxes: Vec<IndexBox> = fine
        .box_array()
        .boxes()
        .iter()
        .map(|b| interp.coarse_box(b, ratio))
        .collect();
    let cba = BoxArray::new(cboxes);
    assert_eq!(cba.ix_type(), typ);
    let mut tmp = MultiFab::new(&cba, fine.distribution_map(), ncomp, IntVect::ZERO);
    tmp.parallel_copy_with(
        crse,
        0,
        crse.n_grow(),
        Periodicity::non_periodic(),
        CopyOp::Copy,
        0..ncomp,
        0,
    )
    .expect("gather the coarse data");
    fine.par_for_each_tile(Tiling::None, IntVect::ZERO, |mut t| {
        let fbx = t.region();
        interp
            .interp(
                tmp.array(t.mfi()),
                t.array_mut(),
                &fbx,
                Comps::first(ncomp),
                ratio,
                fine_geom,
            )
            .expect("interpolate");
    });
}
