//! AMReX's `Advection_AmrCore` tutorial ("AMR101") on amrex-rs: a scalar `phi` advected
//! by a time-dependent single-vortex velocity on an AMR hierarchy whose grids follow it.
//!
//! ```sh
//! cargo run --release --example advection_amr -- inputs [key=value ...]
//! ```
//!
//! reads an inputs file in the tutorial's format (`key = value` lines, overridden by
//! `key=value` arguments after it) and writes `plt*` plotfiles into the current
//! directory. Every key the tutorial reads is honoured with the tutorial's default:
//! `max_step`, `stop_time`, `geometry.prob_lo/prob_hi/is_periodic/coord_sys`, `amr.*`
//! (`n_cell`, `max_level`, `ref_ratio`, `blocking_factor[_x|_y|_z]`, `max_grid_size`,
//! `regrid_int`, `n_error_buf`, `grid_eff`, `n_proper`, `refine_grid_layout`, `v`,
//! `plot_file`, `plot_int`, `chk_file`, `chk_int`, `restart`), `adv.cfl`,
//! `adv.do_subcycle`, `adv.do_reflux`, `adv.phierr`. Directions that are not periodic get
//! walls (first-order extrapolation, `foextrap`).
//!
//! Checkpoints are the tutorial's: with `amr.chk_int > 0` a `chkNNNNN` after the
//! initial data and every `chk_int` coarse steps (`Header` with the steps, `dt` and
//! `t_new` of every level and each level's grids, `Level_L/phi_H` and `phi_D_NNNNN`),
//! byte for byte what AMReX writes; `amr.restart = chkNNNNN` starts from one (AMReX's
//! or this program's, written on any number of ranks) and goes on as the run that wrote
//! it would have, writing a plotfile first when `amr.plot_int > 0`. A checkpoint or
//! plotfile directory that exists is moved aside to `<name>.old.<unique>`.
//!
//! The numerics are the tutorial's, operation for operation: the initial Gaussian, the
//! stream function and face velocities, fourth-order limited slopes, the unsplit
//! Godunov fluxes with transverse corrections (CTU), the conservative update, subcycling
//! in time with `FluxRegister` reflux and `average_down`, tagging `phi > phierr[lev]`,
//! `cell_cons_interp` for new and remade levels, and the regrid every `regrid_int`
//! steps of each level. Built with `--features mpi` it runs under `mpirun -n N` with
//! the same output.
use core::fmt::Write as _;

use amrex::amr::boundary::{BCRec, BCType, PhysBcFunct};
use amrex::amr::fill_patch::Source;
use amrex::amr::{
    AmrCore, AmrError, AmrMesh, CellConsLinear, Comps, FluxRegister, TagBoxArray,
    average_down_faces_geom, average_down_geom, fill_patch_single_level, fill_patch_two_levels,
    interp_from_coarse_level,
};
use amrex::array4::FabLayout;
use amrex::geometry::Geometry;
use amrex::multifab::{
    Array4, Array4Mut, BoxArray, CopyOp, DistributionMapping, FabArrayError, IndexBox, IndexType,
    IntVect, MultiFab, Tiling, Zip,
};
use amrex::plotfile;
use amrex::runtime::ParmParse;

type Ext = fn([f64; 3], f64, usize) -> f64;

fn no_value(_: [f64; 3], _: f64, _: usize) -> f64 {
    0.0
}

const PI: f64 = core::f64::consts::PI;
/// Ghost cells of the state the fluxes read (the tutorial's `num_grow`).
const NUM_GROW: i32 = 3;

/// The offset of `(i, j, k)` (component 0) in a fab's layout; the point lies in the fab.
#[inline(always)]
fn offset(lay: &FabLayout, i: i32, j: i32, k: i32) -> usize {
    lay.offset(i, j, k, 0).expect("a point of the fab")
}

/// The distance between neighbours in direction `d` in a fab's layout.
#[inline(always)]
fn stride(lay: &FabLayout, d: usize) -> usize {
    let [jstride, kstride, _] = lay.strides();
    [1, jstride, kstride][d]
}

/// The two directions other than `d`, in increasing order.
fn others(d: usize) -> (usize, usize) {
    match d {
        0 => (1, 2),
        1 => (0, 2),
        _ => (0, 1),
    }
}

/// `sin(π x)` at the cell centres `lo ..= hi` of direction `d` of a level.
fn sines(lo: i32, hi: i32, d: usize, prob_lo: [f64; 3], dx: [f64; 3]) -> Vec<f64> {
    (lo..=hi)
        .map(|i| {
            let x = dx[d] * (0.5 + f64::from(i)) + prob_lo[d];
            (PI * x).sin()
        })
        .collect()
}

/// The tutorial's stream function `sin²(πx) sin²(πy) cos(πt/2) / π` at a cell centre,
/// from `sx = sin(πx)`, `sy = sin(πy)` and `cos_t = cos(πt/2)`.
#[inline]
fn psi(sx: f64, sy: f64, cos_t: f64) -> f64 {
    sx * sx * (sy * sy) * cos_t * 1.0 / PI
}

/// The tutorial's initial state: `1 + exp(-r²/0.01)` about (0.5, 0.75).
fn initial_phi(geom: &Geometry, i: i32, j: i32) -> f64 {
    let (lo, dx) = (geom.prob_lo(), geom.cell_size());
    let y = lo[1] + (0.5 + f64::from(j)) * dx[1];
    let x = lo[0] + (0.5 + f64::from(i)) * dx[0];
    let r2 = ((x - 0.5) * (x - 0.5) + (y - 0.75) * (y - 0.75)) / 0.01;
    1.0 + (-r2).exp()
}

/// The face velocities of one level at `time` on every fab's faces and one ghost face
/// (the tutorial's `DefineVelocityAtLevel`): `u = -∂ψ/∂y`, `v = ∂ψ/∂x` from the stream
/// function at cell centres, `w = 0`. The fabs are filled in parallel, one task per box
/// for its three face fabs; the velocity does not depend on `k`, so each `(i, j)` plane
/// is computed once and copied to every `k`.
fn define_velocity(
    vel: &mut [MultiFab; 3],
    geom: &Geometry,
    time: f64,
) -> Result<(), FabArrayError> {
    let (lo, dx) = (geom.prob_lo(), geom.cell_size());
    let cos_t = (PI * time / 2.0).cos();
    let [u, v, w] = vel.each_mut();
    Zip::from(u)
        .and(v)
        .and(w)
        .par_for_each(Tiling::None, IntVect::UNIT, |_, (u, v, mut w)| {
            let wb = w.index_box();
            w.fill(wb, 0.0);
            for (d, mut a) in [(0, u), (1, v)] {
                let fb = a.index_box();
                let (flo, fhi) = (fb.lo(), fb.hi());
                // ψ on the cells around these faces, `(flo.x - 1, flo.y - 1)` first, `i` fastest.
                let (sx, sy) = (
                    sines(flo[0] - 1, fhi[0] + 1, 0, lo, dx),
                    sines(flo[1] - 1, fhi[1] + 1, 1, lo, dx),
                );
                let w = sx.len();
                let p: Vec<f64> = sy
                    .iter()
                    .flat_map(|&sy| sx.iter().map(move |&sx| psi(sx, sy, cos_t)))
                    .collect();
                // Row `j` of ψ from `i - 1 + m` on, for the faces `i` of a row.
                let n = w - 2;
                let prow = |j: i32, m: usize| {
                    let r = usize::try_from(j - (flo[1] - 1)).expect("a row of ψ");
                    &p[r * w + m..][..n]
                };
                let mut row = vec![0.0; n];
                for j in flo[1]..=fhi[1] {
                    if d == 0 {
                        let (n1, n0, s1, s0) = (
                            prow(j + 1, 1),
                            prow(j + 1, 0),
                            prow(j - 1, 1),
                            prow(j - 1, 0),
                        );
                        for (x, u) in row.iter_mut().enumerate() {
                            *u = -((n1[x] + n0[x]) - (s1[x] + s0[x])) * (0.25 / dx[1]);
                        }
                    } else {
                        let (e1, e0, w1, w0) =
                            (prow(j, 2), prow(j - 1, 2), prow(j, 0), prow(j - 1, 0));
                        for (x, v) in row.iter_mut().enumerate() {
                            *v = ((e1[x] + e0[x]) - (w1[x] + w0[x])) * (0.25 / dx[0]);
                        }
                    }
                    for k in flo[2]..=fhi[2] {
                        a.row_mut(j, k, 0).copy_from_slice(&row);
                    }
                }
            }
        })
}

/// The work arrays of `fab_fluxes` for one fab, all on the layout of the state's fab
/// (the valid box grown by `NUM_GROW`, its `FabLayout`): a cell or face array holds its value at
/// `(i, j, k)` at that point's offset, so that one offset serves every array and a
/// neighbour is a fixed stride away. One per thread, reused from fab to fab.
///
/// The kernels run over spans of whole `k`-planes (see [`FabKernels::spans`]), so they
/// also write, and compute from, points of the layout outside their box; such a value
/// is never read for a point inside a box, where every value is the tutorial's.
#[derive(Default)]
struct Scratch {
    /// The face velocities `u`, `v`, `w` (copied from the velocity fabs).
    vel: [Vec<f64>; 3],
    /// The MC limiter's centred difference and limit (`slope{x,y,z}2`), per cell.
    dcen: Vec<f64>,
    dlim: Vec<f64>,
    /// The 2nd-order limited slope of the current direction.
    slope2: Vec<f64>,
    /// The 4th-order limited slope of the current direction (`slope{x,y,z}4`).
    slope4: Vec<f64>,
    /// The edge states `phix`, `phiy`, `phiz` (`flux_{x,y,z}`).
    edge: [Vec<f64>; 3],
    /// `corrected[d][t]`: the `d`-face state corrected by direction `t` (`phix_y` is
    /// `[0][1]`, from `flux_xy`); the diagonal is not used.
    corrected: [[Vec<f64>; 3]; 3],
    /// Transverse terms at cells (`transverse_term`).
    term: [Vec<f64>; 2],
    /// The fluxes `flxx`, `flxy`, `flxz` (`create_flux_{x,y,z}`).
    flux: [Vec<f64>; 3],
}

impl Scratch {
    /// Every array at least `len` long (their values are left as they are).
    fn fit(&mut self, len: usize) {
        let Self {
            vel,
            dcen,
            dlim,
            slope2,
            slope4,
            edge,
            corrected,
            term,
            flux,
        } = self;
        let off_diagonal = corrected
            .iter_mut()
            .enumerate()
            .flat_map(|(d, c)| c.iter_mut().enumerate().filter(move |(t, _)| *t != d))
            .map(|(_, v)| v);
        for v in [dcen, dlim, slope2, slope4]
            .into_iter()
            .chain(vel)
            .chain(edge)
            .chain(off_diagonal)
            .chain(term)
            .chain(flux)
        {
            if v.len() < len {
                v.resize(len, 0.0);
            }
        }
    }
}

thread_local! {
    /// Each thread's work arrays for `fab_fluxes`.
    static SCRATCH: core::cell::RefCell<Scratch> = core::cell::RefCell::new(Scratch::default());
}

/// The MC limiter of `slope{x,y,z}2` at a cell from the state at its two neighbours in
/// one direction: the centred difference `dcen`, its sign `dsgn`, and `dlim`, twice the
/// smaller one-sided difference (in magnitude), or zero at an extremum.
#[inline(always)]
fn mc_limiter(qm: f64, q0: f64, qp: f64) -> (f64, f64, f64) {
    let dlft = q0 - qm;
    let drgt = qp - q0;
    let dcen = 0.5 * (dlft + drgt);
    let dsgn = 1.0_f64.copysign(dcen);
    let dslop = 2.0
        * if dlft.abs() < drgt.abs() {
            dlft.abs()
        } else {
            drgt.abs()
        };
    let dlim = if dlft * drgt >= 0.0 { dslop } else { 0.0 };
    (dcen, dsgn, dlim)
}

/// `a` if `cond`, else `b`, as a blend of their bits: a loop of these vectorises even
/// where computing `a` and `b` costs more than a branch would (SSE2 has no blend of
/// doubles), and the result is `a` or `b`, bit for bit.
#[inline(always)]
fn pick(cond: bool, a: f64, b: f64) -> f64 {
    let take_a = u64::from(cond).wrapping_neg();
    f64::from_bits((a.to_bits() & take_a) | (b.to_bits() & !take_a))
}

/// The `n` values of a work array from offset `o` on.
#[inline(always)]
fn at(a: &[f64], o: usize, n: usize) -> &[f64] {
    &a[o..][..n]
}

/// The `n` values of a work array from offset `o` on, to write.
#[inline(always)]
fn at_mut(a: &mut [f64], o: usize, n: usize) -> &mut [f64] {
    &mut a[o..][..n]
}

/// What the kernels of one fab share: the layout of the state and the work arrays, and
/// `dt / dx`. The kernels are inlined into `fab_fluxes`, so that the compiler sees each
/// loop whole (strides, lengths, which arrays it writes) and vectorises it.
#[derive(Clone, Copy)]
struct FabKernels {
    lay: FabLayout,
    dtdx: [f64; 3],
}

impl FabKernels {
    /// The points of `bx`, as spans `(o, n)` of the layout: for each `k`-plane, from the
    /// box's first point in it to its last, across the ends of the rows in between. A
    /// kernel slices its arrays to `n` values from `o`, so that its inner loop runs over
    /// slices, without a bounds check per point, and vectorises; the points of a span
    /// outside `bx` (at most the layout's width less the box's per row) are computed too
    /// and never used. The offsets a kernel reads for them lie between those it reads
    /// for the first and the last point of `bx` in the plane, so inside the layout.
    #[inline(always)]
    fn spans(&self, bx: IndexBox) -> impl Iterator<Item = (usize, usize)> {
        let (lay, lo, hi) = (self.lay, bx.lo(), bx.hi());
        (lo[2]..=hi[2]).map(move |k| {
            let first = offset(&lay, lo[0], lo[1], k);
            let last = offset(&lay, hi[0], hi[1], k);
            (first, last + 1 - first)
        })
    }

    /// The 2nd-order limited slope (MC limiter) on `gbx` grown by one in `d`, then the
    /// 4th-order limited slope on `gbx` into `sc.slope4` (the tutorial's
    /// `slope{x,y,z}{2,4}`). The limiter's `dcen` and `dlim` from the first pass serve
    /// the second.
    #[inline(always)]
    fn slopes(&self, q: &[f64], gbx: IndexBox, d: usize, sc: &mut Scratch) {
        let s = stride(&self.lay, d);
        let Scratch {
            dcen,
            dlim,
            slope2,
            slope4,
            ..
        } = sc;
        for (o, n) in self.spans(gbx.grow_dir(d, 1)) {
            let (qm, q0, qp) = (at(q, o - s, n), at(q, o, n), at(q, o + s, n));
            let (dc, dl) = (at_mut(dcen, o, n), at_mut(dlim, o, n));
            for (x, s2) in at_mut(slope2, o, n).iter_mut().enumerate() {
                let (dcen, dsgn, dlim) = mc_limiter(qm[x], q0[x], qp[x]);
                (dc[x], dl[x]) = (dcen, dlim);
                *s2 = dsgn * dlim.min(dcen.abs());
            }
        }
        for (o, n) in self.spans(gbx) {
            let (dcen, dlim) = (at(dcen, o, n), at(dlim, o, n));
            let (s2p, s2m) = (at(slope2, o + s, n), at(slope2, o - s, n));
            for (x, s4) in at_mut(slope4, o, n).iter_mut().enumerate() {
                let dsgn = 1.0_f64.copysign(dcen[x]);
                let dq1 = 4.0 / 3.0 * dcen[x] - (1.0 / 6.0) * (s2p[x] + s2m[x]);
                *s4 = dsgn * dlim[x].min(dq1.abs());
            }
        }
    }

    /// The tutorial's `flux_{x,y,z}`: the upwind state of direction `d` on `faces`,
    /// extrapolated from the cell above the face when `u < 0`, else from the one below.
    #[inline(always)]
    fn edge_state(
        &self,
        out: &mut [f64],
        (q, slope, u): (&[f64], &[f64], &[f64]),
        d: usize,
        faces: IndexBox,
    ) {
        let (s, dtdx) = (stride(&self.lay, d), self.dtdx[d]);
        for (o, n) in self.spans(faces) {
            let u = at(u, o, n);
            let (q_hi, s_hi) = (at(q, o, n), at(slope, o, n));
            let (q_lo, s_lo) = (at(q, o - s, n), at(slope, o - s, n));
            for ((x, out), &u) in at_mut(out, o, n).iter_mut().enumerate().zip(u) {
                let from_hi = q_hi[x] - s_hi[x] * (0.5 + 0.5 * dtdx * u);
                let from_lo = q_lo[x] + s_lo[x] * (0.5 - 0.5 * dtdx * u);
                *out = pick(u < 0.0, from_hi, from_lo);
            }
        }
    }

    /// `0.5 (v_t(c + e_t) + v_t(c)) (ph(c + e_t) - ph(c))` at each cell `c` of `cells`,
    /// `ph` a state on the faces normal to `t`: the transverse term that `flux_xy` …
    /// `flux_zy` and `create_flux_{x,y,z}` take at the cell upwind of a face. Computed
    /// once per cell, it serves the faces on both sides.
    #[inline(always)]
    fn transverse_term(
        &self,
        out: &mut [f64],
        (v, ph): (&[f64], &[f64]),
        t: usize,
        cells: IndexBox,
    ) {
        let s = stride(&self.lay, t);
        for (o, n) in self.spans(cells) {
            let (v0, v1) = (at(v, o, n), at(v, o + s, n));
            let (ph0, ph1) = (at(ph, o, n), at(ph, o + s, n));
            for (x, out) in at_mut(out, o, n).iter_mut().enumerate() {
                *out = 0.5 * (v1[x] + v0[x]) * (ph1[x] - ph0[x]);
            }
        }
    }

    /// The tutorial's `flux_xy` … `flux_zy`: the `d`-face state `ph` corrected by the
    /// transverse term `term` of direction `t` at the upwind cell, on `faces`.
    #[inline(always)]
    fn corrected_state(
        &self,
        out: &mut [f64],
        (ph, term, u): (&[f64], &[f64], &[f64]),
        (d, t): (usize, usize),
        faces: IndexBox,
    ) {
        let (s, dtdx) = (stride(&self.lay, d), self.dtdx[t]);
        for (o, n) in self.spans(faces) {
            let (u, ph) = (at(u, o, n), at(ph, o, n));
            let (above, below) = (at(term, o, n), at(term, o - s, n));
            for (x, out) in at_mut(out, o, n).iter_mut().enumerate() {
                let (above, below) = (above[x], below[x]);
                let upwind = if u[x] < 0.0 { above } else { below };
                *out = ph[x] - dtdx / 3.0 * upwind;
            }
        }
    }

    /// The tutorial's `create_flux_{x,y,z}`: `u` times the `d`-face state corrected by
    /// the transverse terms `terms` of the two other directions (each from the state
    /// corrected by the third) at the upwind cell, on `faces`; unscaled.
    #[inline(always)]
    fn create_flux(
        &self,
        out: &mut [f64],
        (ph, u): (&[f64], &[f64]),
        terms: [&[f64]; 2],
        d: usize,
        faces: IndexBox,
    ) {
        let (a, b) = others(d);
        let s = stride(&self.lay, d);
        let (dta, dtb) = (self.dtdx[a], self.dtdx[b]);
        for (o, n) in self.spans(faces) {
            let (u, ph) = (at(u, o, n), at(ph, o, n));
            let (a_above, a_below) = (at(terms[0], o, n), at(terms[0], o - s, n));
            let (b_above, b_below) = (at(terms[1], o, n), at(terms[1], o - s, n));
            for (x, out) in at_mut(out, o, n).iter_mut().enumerate() {
                let (u, above, below) = (u[x], (a_above[x], b_above[x]), (a_below[x], b_below[x]));
                let (ta, tb) = if u < 0.0 { above } else { below };
                *out = u * (ph[x] - 0.5 * dta * ta - 0.5 * dtb * tb);
            }
        }
    }
}

/// The face fluxes of one fab over `bx` (valid cells), per direction, on the faces of
/// `bx`, into `sc.flux` (on the layout of `q`, the state's whole fab with `NUM_GROW` ghost
/// cells; `vel` the velocities' whole fabs):
/// the tutorial's CTU scheme (`slope*`, `flux_{x,y,z}`, the six transverse corrections
/// and `create_flux_{x,y,z}`), unscaled (`u * phi` at the face).
fn fab_fluxes(
    q: Array4<'_, f64>,
    vel: [Array4<'_, f64>; 3],
    bx: IndexBox,
    dtdx: [f64; 3],
    sc: &mut Scratch,
) {
    let k = FabKernels {
        lay: q.layout(),
        dtdx,
    };
    let q = q.as_slice().expect("a whole fab is contiguous");
    sc.fit(k.lay.len());
    // The velocities on the work arrays' layout.
    for (d, v) in vel.iter().enumerate() {
        Array4Mut::new(&mut sc.vel[d][..k.lay.len()], k.lay.index_box(), 1).zip_mut_with(
            *v,
            v.index_box(),
            |o, &s| *o = s,
        );
    }
    let gbx = bx.grow(1);
    // Longitudinal face states on the faces of gbx shrunk by one in their direction.
    for d in 0..3 {
        k.slopes(q, gbx, d, sc);
        k.edge_state(
            &mut sc.edge[d],
            (q, &sc.slope4, &sc.vel[d]),
            d,
            gbx.grow_dir(d, -1).surrounding_nodes_dir(d),
        );
    }
    // Transverse corrections (phix_y, phix_z, phiy_x, phiy_z, phiz_x, phiz_y) on the
    // faces normal to `d` of bx grown by one in the third direction; the term of `t`
    // serves both states it corrects.
    for t in 0..3 {
        let term = &mut sc.term[0];
        k.transverse_term(term, (&sc.vel[t], &sc.edge[t]), t, gbx.grow_dir(t, -1));
        for d in (0..3).filter(|&d| d != t) {
            let third = 3 - d - t;
            k.corrected_state(
                &mut sc.corrected[d][t],
                (&sc.edge[d], &sc.term[0], &sc.vel[d]),
                (d, t),
                bx.grow_dir(third, 1).surrounding_nodes_dir(d),
            );
        }
    }
    // The fluxes; for x, from the terms of phiy_z and phiz_y.
    for d in 0..3 {
        let (a, b) = others(d);
        let cells = bx.grow_dir(d, 1);
        let [term_a, term_b] = &mut sc.term;
        k.transverse_term(term_a, (&sc.vel[a], &sc.corrected[a][b]), a, cells);
        k.transverse_term(term_b, (&sc.vel[b], &sc.corrected[b][a]), b, cells);
        k.create_flux(
            &mut sc.flux[d],
            (&sc.edge[d], &sc.vel[d]),
            [term_a, term_b],
            d,
            bx.surrounding_nodes_dir(d),
        );
    }
}

/// The tutorial's conservative update over `bx`: `new = q + Σ_d (flux_d at the low face
/// - flux_d at the high face) dt/dx_d`; `new` and `q` are views that cover `bx`, the
/// fluxes `fl` views that cover its faces.
fn conservative(
    new: &mut Array4Mut<'_, f64>,
    q: Array4<'_, f64>,
    fl: [Array4<'_, f64>; 3],
    bx: IndexBox,
    dtdx: [f64; 3],
) {
    let mut new = new.sub_box_mut(&bx);
    let q = q.sub_box(&bx);
    let [fx, fy, fz] = [0, 1, 2].map(|d| fl[d].sub_box(&bx.surrounding_nodes_dir(d)));
    let (lo, hi) = (bx.lo(), bx.hi());
    for k in lo[2]..=hi[2] {
        for j in lo[1]..=hi[1] {
            let q = q.row(j, k, 0);
            let n = q.len();
            let fx = fx.row(j, k, 0);
            let (fx0, fx1) = (&fx[..n], &fx[1..][..n]);
            let (fy0, fy1) = (&fy.row(j, k, 0)[..n], &fy.row(j + 1, k, 0)[..n]);
            let (fz0, fz1) = (&fz.row(j, k, 0)[..n], &fz.row(j, k + 1, 0)[..n]);
            for (x, out) in new.row_mut(j, k, 0)[..n].iter_mut().enumerate() {
                *out = q[x]
                    + ((fx0[x] - fx1[x]) * dtdx[0]
                        + (fy0[x] - fy1[x]) * dtdx[1]
                        + (fz0[x] - fz1[x]) * dtdx[2]);
            }
        }
    }
}

/// The tutorial's parameters (`ReadParameters`; `adv.phierr` is read by the first
/// `error_est`, as the tutorial's `ErrorEst` reads it, so that a run that never tags
/// leaves it unread).
struct Params {
    max_step: i64,
    stop_time: f64,
    regrid_int: i64,
    plot_file: String,
    plot_int: i64,
    chk_file: String,
    chk_int: i64,
    /// The checkpoint to start from (`amr.restart`; empty: from scratch).
    restart: String,
    cfl: f64,
    do_reflux: bool,
    do_subcycle: bool,
    phierr: Option<Vec<f64>>,
    verbose: i32,
}

/// The tutorial's `AmrCoreAdv`.
struct AmrCoreAdv {
    /// The inputs: kept to read `adv.phierr` late and to say at the end which keys no
    /// one read.
    pp: ParmParse,
    mesh: AmrMesh,
    p: Params,
    istep: Vec<i64>,
    nsubsteps: Vec<i64>,
    t_new: Vec<f64>,
    t_old: Vec<f64>,
    dt: Vec<f64>,
    last_regrid_step: Vec<i64>,
    phi_new: Vec<Option<MultiFab>>,
    phi_old: Vec<Option<MultiFab>>,
    facevel: Vec<Option<[MultiFab; 3]>>,
    flux_reg: Vec<Option<FluxRegister>>,
    bcs: Vec<PhysBcFunct<Ext>>,
    rank0: bool,
    timers: Timers,
}

/// Wall-clock seconds spent in each part of the run, on this rank.
#[derive(Default)]
struct Timers {
    advance: f64,
    fill_patch: f64,
    reflux: f64,
    average_down: f64,
    regrid: f64,
    plotfile: f64,
    checkpoint: f64,
}

/// Runs `f`, adding its wall-clock time to `acc`.
fn timed<T>(acc: &mut f64, f: impl FnOnce() -> T) -> T {
    let t0 = std::time::Instant::now();
    let r = f();
    *acc += t0.elapsed().as_secs_f64();
    r
}

/// What stops the tutorial: a refused AMR, MultiFab or plotfile operation (each error
/// type of the workspace converts), or the CFL check below.
type Error = Box<dyn core::error::Error>;

impl AmrCoreAdv {
    fn new(pp: ParmParse) -> Result<Self, Error> {
        let mesh = AmrMesh::from_parm_parse(&pp)?;
        let amr = pp.prefixed("amr");
        let adv = pp.prefixed("adv");
        let p = Params {
            max_step: pp.query_or("max_step", i64::from(i32::MAX))?,
            stop_time: pp.query_or("stop_time", f64::MAX)?,
            regrid_int: amr.query_or("regrid_int", 2)?,
            plot_file: amr.query_or("plot_file", String::from("plt"))?,
            plot_int: amr.query_or("plot_int", -1)?,
            chk_file: amr.query_or("chk_file", String::from("chk"))?,
            chk_int: amr.query_or("chk_int", -1)?,
            restart: amr.query_or("restart", String::new())?,
            cfl: adv.query_or("cfl", 0.7)?,
            do_reflux: adv.query_or::<i32>("do_reflux", 1)? != 0,
            do_subcycle: adv.query_or::<i32>("do_subcycle", 1)? != 0,
            phierr: None,
            verbose: mesh.info().verbose,
        };
        let nlev = mesh.max_level() + 1;
        let mut nsubsteps = vec![1; nlev];
        if p.do_subcycle {
            for (lev, n) in nsubsteps.iter_mut().enumerate().skip(1) {
                *n = i64::from(mesh.max_ref_ratio(lev - 1));
            }
        }
        // Periodic directions use internal Dirichlet; the others are walls (foextrap).
        let mut rec = BCRec::uniform(BCType::IntDir);
        for d in 0..3 {
            if !mesh.geom(0).is_periodic(d) {
                rec.set_lo(d, BCType::FoExtrap);
                rec.set_hi(d, BCType::FoExtrap);
            }
        }
        let bcs = mesh
            .geoms()
            .iter()
            .map(|g| PhysBcFunct::new(*g, vec![rec], no_value as Ext))
            .collect();
        let rank0 = amrex::runtime::Communicator::current().rank() == 0;
        Ok(Self {
            pp,
            mesh,
            p,
            istep: vec![0; nlev],
            nsubsteps,
            t_new: vec![0.0; nlev],
            t_old: vec![-1.0e100; nlev],
            dt: vec![1.0e100; nlev],
            last_regrid_step: vec![0; nlev],
            phi_new: (0..nlev).map(|_| None).collect(),
            phi_old: (0..nlev).map(|_| None).collect(),
            facevel: (0..nlev).map(|_| None).collect(),
            flux_reg: (0..nlev + 1).map(|_| None).collect(),
            bcs,
            rank0,
            timers: Timers::default(),
        })
    }

    fn finest(&self) -> usize {
        self.mesh.finest_level().unwrap_or(0)
    }

    fn say(&self, s: &str) {
        if self.rank0 {
            println!("{s}");
        }
    }

    fn state(&self, lev: usize) -> &MultiFab {
        self.phi_new[lev].as_ref().expect("level data")
    }

    /// The old state, times, face velocities and flux register of a level on `ba`/`dm`
    /// (the caller makes and fills the new state).
    fn define_level(
        &mut self,
        lev: usize,
        time: f64,
        ba: &BoxArray,
        dm: &DistributionMapping,
        ng: i32,
    ) -> Result<(), AmrError> {
        self.t_new[lev] = time;
        self.t_old[lev] = time - 1.0e200;
        self.alloc_level(lev, ba, dm, ng)
    }

    /// The old state, face velocities and flux register of a level on `ba`/`dm`.
    fn alloc_level(
        &mut self,
        lev: usize,
        ba: &BoxArray,
        dm: &DistributionMapping,
        ng: i32,
    ) -> Result<(), AmrError> {
        self.phi_old[lev] = Some(MultiFab::new(ba, dm, 1, IntVect::splat(ng)));
        self.facevel[lev] = Some([0, 1, 2].map(|d| {
            MultiFab::new(
                &ba.convert(IndexType::CELL.with_node(d)),
                dm,
                1,
                IntVect::UNIT,
            )
        }));
        if lev > 0 && self.p.do_reflux {
            self.flux_reg[lev] = Some(FluxRegister::new(
                ba,
                dm,
                self.mesh.ref_ratio(lev - 1),
                lev,
                1,
            )?);
        }
        Ok(())
    }

    /// The states of level `lev` at `time` (the tutorial's `GetData`).
    fn get_data(&self, lev: usize, time: f64) -> Source<'_, Ext> {
        let (tn, to) = (self.t_new[lev], self.t_old[lev]);
        let teps = (tn - to) * 1.0e-3;
        let new = self.phi_new[lev].as_ref().expect("level data");
        let old = self.phi_old[lev].as_ref().expect("level data");
        let bc = &self.bcs[lev];
        if time > tn - teps && time < tn + teps {
            Source::at(new, bc)
        } else if time > to - teps && time < to + teps {
            Source::at(old, bc)
        } else {
            Source::between((old, to), (new, tn), bc)
        }
    }

    /// Fills `mf` (valid and ghost cells) at `time` from level `lev` and, for `lev > 0`,
    /// the level below (the tutorial's `FillPatch`).
    fn fill_patch(&self, lev: usize, time: f64, mf: &mut MultiFab) -> Result<(), AmrError> {
        let ng = mf.n_grow();
        if lev == 0 {
            fill_patch_single_level(mf, ng, time, &self.get_data(0, time), Comps::first(1))
        } else {
            fill_patch_two_levels(
                mf,
                ng,
                time,
                &self.get_data(lev - 1, time),
                &self.get_data(lev, time),
                Comps::first(1),
                &CellConsLinear::CELL_CONS_INTERP,
            )
        }
    }

    fn est_time_step(&mut self, lev: usize, time: f64) -> Result<f64, Error> {
        let geom = *self.mesh.geom(lev);
        let t = if time == 0.0 {
            time
        } else {
            time + 0.5 * self.dt[lev]
        };
        let vel = self.facevel[lev].as_mut().expect("level data");
        define_velocity(vel, &geom, t)?;
        let dx = geom.cell_size();
        let mut dt_est = f64::MAX;
        for (d, v) in vel.iter().enumerate() {
            let est = v.norm0(0..1, 0)?;
            dt_est = dt_est.min(dx[d] / est);
        }
        Ok(dt_est * self.p.cfl)
    }

    fn compute_dt(&mut self) -> Result<(), Error> {
        let finest = self.finest();
        let mut dt_tmp = Vec::with_capacity(finest + 1);
        for lev in 0..=finest {
            dt_tmp.push(self.est_time_step(lev, self.t_new[lev])?);
        }
        let change_max = 1.1;
        let mut dt_0 = dt_tmp[0];
        let mut n_factor = 1;
        for (lev, d) in dt_tmp.iter_mut().enumerate() {
            *d = d.min(change_max * self.dt[lev]);
            n_factor *= self.nsubsteps[lev];
            dt_0 = dt_0.min(n_factor as f64 * *d);
        }
        let eps = 1.0e-3 * dt_0;
        if self.t_new[0] + dt_0 > self.p.stop_time - eps {
            dt_0 = self.p.stop_time - self.t_new[0];
        }
        self.dt[0] = dt_0;
        for lev in 1..=finest {
            self.dt[lev] = self.dt[lev - 1] / self.nsubsteps[lev] as f64;
        }
        Ok(())
    }

    /// One step of one level with the tutorial's fluxes (`AdvancePhiAtLevel`): the
    /// new state, and the fluxes into the flux registers when refluxing.
    fn advance_phi_at_level(&mut self, lev: usize, time: f64, dt_lev: f64) -> Result<(), Error> {
        core::mem::swap(&mut self.phi_old[lev], &mut self.phi_new[lev]);
        let geom = *self.mesh.geom(lev);
        let dx = geom.cell_size();
        let dtdx = [dt_lev / dx[0], dt_lev / dx[1], dt_lev / dx[2]];
        let old = self.phi_old[lev].as_ref().expect("level data");
        let mut sborder = MultiFab::new(
            old.box_array(),
            old.distribution_map(),
            1,
            IntVect::splat(NUM_GROW),
        );
        let mut fp = 0.0;
        timed(&mut fp, || self.fill_patch(lev, time, &mut sborder))?;
        self.timers.fill_patch += fp;
        let t0 = std::time::Instant::now();
        let old = self.phi_old[lev].as_ref().expect("level data");
        let vel = self.facevel[lev].as_ref().expect("level data");
        let mut new = MultiFab::new(old.box_array(), old.distribution_map(), 1, old.n_grow());
        let refluxing = self.p.do_reflux && (lev < self.finest() || lev > 0);
        // Fluxes times face area and dt, as the registers take them.
        let area = [
            dt_lev * dx[1] * dx[2],
            dt_lev * dx[0] * dx[2],
            dt_lev * dx[0] * dx[1],
        ];
        let mut fluxes = refluxing.then(|| face_multifabs(&new));
        advance_fabs(
            &sborder,
            vel,
            dtdx,
            Some(&mut new),
            fluxes.as_mut().map(|f| (f, area)),
        )?;
        if let Some(fluxes) = fluxes {
            if lev < self.finest()
                && let Some(fr) = self.flux_reg[lev + 1].as_mut()
            {
                for (d, f) in fluxes.iter().enumerate() {
                    fr.crse_init(f, d, Comps::first(1), -1.0, CopyOp::Copy)?;
                }
            }
            if lev > 0
                && let Some(fr) = self.flux_reg[lev].as_mut()
            {
                for (d, f) in fluxes.iter().enumerate() {
                    fr.fine_add(f, d, Comps::first(1), 1.0)?;
                }
            }
        }
        self.phi_new[lev] = Some(new);
        self.timers.advance += t0.elapsed().as_secs_f64();
        // The tutorial's CFL check.
        let vel = self.facevel[lev].as_ref().expect("level data");
        for (d, v) in vel.iter().enumerate() {
            let umax = v.norm0(0..1, 0)?;
            if umax * dt_lev > dx[d] {
                return Err(format!(
                    "CFL violation on level {lev}: |u| {umax} dt {dt_lev} > dx {}; use a smaller adv.cfl",
                    dx[d]
                )
                .into());
            }
        }
        Ok(())
    }

    fn time_step_with_subcycling(&mut self, lev: usize, time: f64) -> Result<(), Error> {
        let max_level = self.mesh.max_level();
        if self.p.regrid_int > 0
            && lev < max_level
            && self.istep[lev] > self.last_regrid_step[lev]
            && self.istep[lev] % self.p.regrid_int == 0
        {
            let old_finest = self.finest();
            let t0 = std::time::Instant::now();
            self.regrid(lev, time)?;
            self.timers.regrid += t0.elapsed().as_secs_f64();
            for k in lev..=self.finest() {
                self.last_regrid_step[k] = self.istep[k];
            }
            for k in old_finest + 1..=self.finest() {
                self.dt[k] = self.dt[k - 1] / f64::from(self.mesh.max_ref_ratio(k - 1));
            }
        }
        if self.p.verbose > 0 {
            self.say(&format!(
                "[Level {lev} step {}] ADVANCE with time = {} dt = {}",
                self.istep[lev] + 1,
                g10(self.t_new[lev]),
                g10(self.dt[lev])
            ));
        }
        self.t_old[lev] = self.t_new[lev];
        self.t_new[lev] += self.dt[lev];
        let t_nph = self.t_old[lev] + 0.5 * self.dt[lev];
        let geom = *self.mesh.geom(lev);
        define_velocity(
            self.facevel[lev].as_mut().expect("level data"),
            &geom,
            t_nph,
        )?;
        self.advance_phi_at_level(lev, time, self.dt[lev])?;
        self.istep[lev] += 1;
        if self.p.verbose > 0 {
            self.say(&format!(
                "[Level {lev} step {}] Advanced {} cells",
                self.istep[lev],
                self.mesh.count_cells(lev)
            ));
        }
        if lev < self.finest() {
            for i in 1..=self.nsubsteps[lev + 1] {
                let t = time + (i - 1) as f64 * self.dt[lev + 1];
                self.time_step_with_subcycling(lev + 1, t)?;
            }
            if self.p.do_reflux {
                let geom = *self.mesh.geom(lev);
                let fr = self.flux_reg[lev + 1].as_ref().expect("a flux register");
                let state = self.phi_new[lev].as_mut().expect("level data");
                timed(&mut self.timers.reflux, || {
                    fr.reflux(state, 1.0, Comps::first(1), &geom)
                })?;
            }
            let t0 = std::time::Instant::now();
            self.average_down_to(lev)?;
            self.timers.average_down += t0.elapsed().as_secs_f64();
        }
        Ok(())
    }

    fn time_step_no_subcycling(&mut self, time: f64) -> Result<(), Error> {
        if self.mesh.max_level() > 0
            && self.p.regrid_int > 0
            && self.istep[0] % self.p.regrid_int == 0
        {
            let t0 = std::time::Instant::now();
            self.regrid(0, time)?;
            self.timers.regrid += t0.elapsed().as_secs_f64();
        }
        let finest = self.finest();
        if self.p.verbose > 0 {
            for lev in 0..=finest {
                self.say(&format!(
                    "[Level {lev} step {}] ADVANCE with time = {} dt = {}",
                    self.istep[lev] + 1,
                    g10(self.t_new[lev]),
                    g10(self.dt[0])
                ));
            }
        }
        // The velocities at the middle of the step (`DefineVelocityAllLevels`).
        let t_nph = time + 0.5 * self.dt[0];
        for lev in 0..=finest {
            let geom = *self.mesh.geom(lev);
            define_velocity(
                self.facevel[lev].as_mut().expect("level data"),
                &geom,
                t_nph,
            )?;
        }
        let t0 = std::time::Instant::now();
        self.advance_phi_all_levels(time, self.dt[0])?;
        self.timers.advance += t0.elapsed().as_secs_f64();
        let t0 = std::time::Instant::now();
        for lev in (0..finest).rev() {
            self.average_down_to(lev)?;
        }
        self.timers.average_down += t0.elapsed().as_secs_f64();
        for lev in 0..=finest {
            self.istep[lev] += 1;
        }
        if self.p.verbose > 0 {
            for lev in 0..=finest {
                self.say(&format!(
                    "[Level {lev} step {}] Advanced {} cells",
                    self.istep[lev],
                    self.mesh.count_cells(lev)
                ));
            }
        }
        Ok(())
    }

    /// Every level one step of `dt` (`AdvancePhiAllLevels`): fluxes on every level, the
    /// fine fluxes averaged onto the coarse faces beneath them, then the updates.
    fn advance_phi_all_levels(&mut self, time: f64, dt: f64) -> Result<(), Error> {
        let finest = self.finest();
        let mut all_fluxes = Vec::new();
        for lev in 0..=finest {
            core::mem::swap(&mut self.phi_old[lev], &mut self.phi_new[lev]);
            self.t_old[lev] = self.t_new[lev];
            self.t_new[lev] += dt;
            let dx = self.mesh.geom(lev).cell_size();
            let dtdx = [dt / dx[0], dt / dx[1], dt / dx[2]];
            let old = self.phi_old[lev].as_ref().expect("level data");
            let mut sborder = MultiFab::new(
                old.box_array(),
                old.distribution_map(),
                1,
                IntVect::splat(NUM_GROW),
            );
            self.fill_patch(lev, time, &mut sborder)?;
            let vel = self.facevel[lev].as_ref().expect("level data");
            let mut fluxes = face_multifabs(old);
            // Unscaled: `v * 1.0` is `v`, bit for bit.
            advance_fabs(&sborder, vel, dtdx, None, Some((&mut fluxes, [1.0; 3])))?;
            all_fluxes.push(fluxes);
        }
        for lev in (1..=finest).rev() {
            let (lo, hi) = all_fluxes.split_at_mut(lev);
            for d in 0..3 {
                average_down_faces_geom(
                    &hi[0][d],
                    &mut lo[lev - 1][d],
                    self.mesh.ref_ratio(lev - 1),
                    self.mesh.geom(lev - 1),
                )?;
            }
        }
        for (lev, fl) in all_fluxes.iter().enumerate() {
            let dx = self.mesh.geom(lev).cell_size();
            let dtdx = [dt / dx[0], dt / dx[1], dt / dx[2]];
            let old = self.phi_old[lev].as_ref().expect("level data");
            let mut new = MultiFab::new(old.box_array(), old.distribution_map(), 1, old.n_grow());
            write_update(&mut new, old, fl, dtdx)?;
            self.phi_new[lev] = Some(new);
        }
        Ok(())
    }

    fn average_down_to(&mut self, crse: usize) -> Result<(), AmrError> {
        let (cg, fg) = (*self.mesh.geom(crse), *self.mesh.geom(crse + 1));
        let ratio = self.mesh.ref_ratio(crse);
        let (lo, hi) = self.phi_new.split_at_mut(crse + 1);
        let fine = hi[0].as_ref().expect("level data");
        let c = lo[crse].as_mut().expect("level data");
        average_down_geom(fine, c, &fg, &cg, 0..1, ratio)
    }

    fn write_plot_file(&mut self) -> Result<(), Error> {
        let t0 = std::time::Instant::now();
        let r = self.write_plot_file_untimed();
        self.timers.plotfile += t0.elapsed().as_secs_f64();
        r
    }

    fn write_plot_file_untimed(&self) -> Result<(), Error> {
        let name = format!("{}{:05}", self.p.plot_file, self.istep[0]);
        self.say(&format!("Writing plotfile {name}"));
        let finest = self.finest();
        let mfs: Vec<&MultiFab> = (0..=finest).map(|l| self.state(l)).collect();
        let ratios: Vec<IntVect> = (0..finest).map(|l| self.mesh.ref_ratio(l)).collect();
        plotfile::write_multi_level_plotfile(
            &name,
            &mfs,
            &["phi"],
            &self.mesh.geoms()[..=finest],
            self.t_new[0],
            &self.istep[..=finest],
            &ratios,
        )?;
        Ok(())
    }

    /// The tutorial's `WriteCheckpointFile`: `chkNNNNN` (the coarse step) with the
    /// steps, time steps and times of every level in its `Header`, and each level's
    /// `phi`.
    fn write_checkpoint_file(&mut self) -> Result<(), Error> {
        let t0 = std::time::Instant::now();
        let name = format!("{}{:05}", self.p.chk_file, self.istep[0]);
        self.say(&format!("Writing checkpoint {name}"));
        let finest = self.finest();
        let grids = (0..=finest)
            .map(|l| self.mesh.box_array(l).clone())
            .collect();
        let header = plotfile::CheckpointHeader::new("Checkpoint file for AmrCoreAdv", grids)
            .with_ints(self.istep.iter().copied())
            .with_reals(self.dt.iter().copied())
            .with_reals(self.t_new.iter().copied());
        let levels: Vec<&MultiFab> = (0..=finest).map(|l| self.state(l)).collect();
        let r = plotfile::write_checkpoint(&name, &header, &[("phi", &levels)]);
        self.timers.checkpoint += t0.elapsed().as_secs_f64();
        Ok(r?)
    }

    /// The tutorial's `ReadCheckpointFile`: the steps, time steps and times of every
    /// level and the grids from the `Header` (each level on a new distribution over
    /// this run's ranks), `phi` from each level's data. What the tutorial does not
    /// save (the old states, face velocities, flux registers) is made afresh.
    fn read_checkpoint_file(&mut self) -> Result<(), Error> {
        let dir = self.p.restart.clone();
        self.say(&format!("Restart from checkpoint {dir}"));
        let comm = amrex::runtime::Communicator::current();
        let header = plotfile::read_checkpoint_header_on(&dir, &comm)?;
        let nlev = self.mesh.max_level() + 1;
        let istep = header.ints(0)?;
        let dt = header.reals(1)?;
        let t_new = header.reals(2)?;
        for (what, n) in [
            ("steps", istep.len()),
            ("dt", dt.len()),
            ("t_new", t_new.len()),
        ] {
            if n > nlev || n < header.grids.len() {
                return Err(format!(
                    "{dir}/Header: {n} values of {what}, expected one per level of the \
                     checkpoint ({}) and at most one per level amr.max_level = {} allows",
                    header.grids.len(),
                    nlev - 1
                )
                .into());
            }
        }
        self.mesh.restore_grids(&header.grids)?;
        self.istep[..istep.len()].copy_from_slice(&istep);
        self.dt[..dt.len()].copy_from_slice(&dt);
        self.t_new[..t_new.len()].copy_from_slice(&t_new);
        for (lev, ba) in header.grids.iter().enumerate() {
            let dm = self.mesh.dist_map(lev).clone();
            self.alloc_level(lev, ba, &dm, 0)?;
            let phi = plotfile::read_checkpoint_multifab(&dir, lev, "phi", ba, &dm)?;
            if phi.ncomp() != 1 || phi.n_grow() != IntVect::ZERO {
                return Err(format!(
                    "{dir}/Level_{lev}/phi_H: {} components and {} ghost cells, expected 1 and 0",
                    phi.ncomp(),
                    phi.n_grow()
                )
                .into());
            }
            self.phi_new[lev] = Some(phi);
        }
        Ok(())
    }

    /// The tutorial's `InitData`: the hierarchy from scratch (then averaged down, and
    /// checkpointed when `chk_int > 0`) or from `amr.restart`, then a plotfile when
    /// `plot_int > 0`.
    fn init_data(&mut self) -> Result<(), Error> {
        if self.p.restart.is_empty() {
            self.init_from_scratch(0.0)?;
            for lev in (0..self.finest()).rev() {
                self.average_down_to(lev)?;
            }
            if self.p.chk_int > 0 {
                self.write_checkpoint_file()?;
            }
        } else {
            self.read_checkpoint_file()?;
        }
        if self.p.plot_int > 0 {
            self.write_plot_file()?;
        }
        Ok(())
    }

    fn evolve(&mut self) -> Result<(), Error> {
        let t_start = std::time::Instant::now();
        let first_step = self.istep[0];
        let mut cur_time = self.t_new[0];
        let mut last_plot_file_step = 0;
        let mut step = self.istep[0];
        while step < self.p.max_step && cur_time < self.p.stop_time {
            self.say(&format!("\nCoarse STEP {} starts ...", step + 1));
            self.compute_dt()?;
            if self.p.do_subcycle {
                self.time_step_with_subcycling(0, cur_time)?;
            } else {
                self.time_step_no_subcycling(cur_time)?;
            }
            cur_time += self.dt[0];
            let sum_phi = self.state(0).sum(0..1, 0)?;
            self.say(&format!(
                "Coarse STEP {} ends. TIME = {} DT = {} Sum(Phi) = {}",
                step + 1,
                g10(cur_time),
                g10(self.dt[0]),
                g10(sum_phi)
            ));
            for lev in 0..=self.finest() {
                self.t_new[lev] = cur_time;
            }
            if self.p.plot_int > 0 && (step + 1) % self.p.plot_int == 0 {
                last_plot_file_step = step + 1;
                self.write_plot_file()?;
            }
            if self.p.chk_int > 0 && (step + 1) % self.p.chk_int == 0 {
                self.write_checkpoint_file()?;
            }
            step += 1;
            if cur_time >= self.p.stop_time - 1.0e-6 * self.dt[0] {
                break;
            }
        }
        if self.p.plot_int > 0 && self.istep[0] > last_plot_file_step {
            self.write_plot_file()?;
        }
        self.report_timing(t_start.elapsed().as_secs_f64(), self.istep[0] - first_step);
        Ok(())
    }

    /// The wall-clock split of the run per coarse step (rank 0's clock), after the
    /// lines AMReX prints.
    fn report_timing(&self, total: f64, steps_run: i64) {
        let steps = steps_run.max(1) as f64;
        let t = &self.timers;
        let parts = [
            ("advance", t.advance),
            ("fill_patch", t.fill_patch),
            ("reflux", t.reflux),
            ("average_down", t.average_down),
            ("regrid", t.regrid),
            ("plotfiles", t.plotfile),
            ("checkpoints", t.checkpoint),
        ];
        let other = total - parts.iter().map(|p| p.1).sum::<f64>();
        let ranks = amrex::runtime::Communicator::current().size();
        let threads = rayon::current_num_threads();
        self.say(&format!(
            "timing: {steps_run} coarse steps in {total:.3} s ({ranks} rank(s), {threads} thread(s) each), per coarse step:"
        ));
        for (name, secs) in parts
            .iter()
            .chain(&[("other (dt, velocities, sums)", other)])
        {
            self.say(&format!(
                "  {name:<28} {:>9.3} ms  {:>5.1} %",
                1e3 * secs / steps,
                100.0 * secs / total
            ));
        }
    }
}

/// Empty face MultiFabs (one per direction, no ghost faces) on `like`'s layout.
fn face_multifabs(like: &MultiFab) -> [MultiFab; 3] {
    [0, 1, 2].map(|d| {
        let ba = like.box_array().convert(IndexType::CELL.with_node(d));
        MultiFab::new(&ba, like.distribution_map(), 1, IntVect::ZERO)
    })
}

/// The loop over fabs of the tutorial's `AdvancePhiAtLevel`, the fabs in parallel: each
/// fab's fluxes (`fab_fluxes`) from `sborder` and the face velocities, the conservative
/// update into `new` when given, and the fluxes times `scale[d]` into the face
/// MultiFabs `face_fluxes` (on `sborder`'s layout) when given.
fn advance_fabs(
    sborder: &MultiFab,
    vel: &[MultiFab; 3],
    dtdx: [f64; 3],
    new: Option<&mut MultiFab>,
    face_fluxes: Option<(&mut [MultiFab; 3], [f64; 3])>,
) -> Result<(), FabArrayError> {
    let (fluxes, scale) = match face_fluxes {
        Some((mfs, scale)) => (Some(mfs.each_mut()), scale),
        None => (None, [1.0; 3]),
    };
    Zip::from(sborder)
        .and(vel.each_ref())
        .and(new)
        .and(fluxes)
        .par_for_each(Tiling::None, IntVect::ZERO, |mfi, (q, v, new, fluxes)| {
            let bx = mfi.validbox();
            SCRATCH.with_borrow_mut(|sc| {
                fab_fluxes(q, v, bx, dtdx, sc);
                // The fluxes, on the work arrays' layout (that of `q`'s fab).
                let fab = q.index_box();
                let fl = [0, 1, 2].map(|d| Array4::new(&sc.flux[d], fab, 1));
                if let Some(mut new) = new {
                    conservative(&mut new, q, fl, bx, dtdx);
                }
                for (d, mut out) in fluxes.into_iter().flatten().enumerate() {
                    let s = scale[d];
                    out.zip_mut_with(fl[d], bx.surrounding_nodes_dir(d), |o, &f| *o = f * s);
                }
            });
        })
}

/// `new` over its valid cells from `q` and the face fluxes `fl` (the conservative
/// update), the fabs in parallel.
fn write_update(
    new: &mut MultiFab,
    q: &MultiFab,
    fl: &[MultiFab; 3],
    dtdx: [f64; 3],
) -> Result<(), FabArrayError> {
    Zip::from(new).and(q).and(fl.each_ref()).par_for_each(
        Tiling::None,
        IntVect::ZERO,
        |mfi, (mut new, q, fl)| {
            conservative(&mut new, q, fl, mfi.validbox(), dtdx);
        },
    )
}

/// `x` as C++'s default stream output with 10 significant digits (AMReX's `Print`).
fn g10(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let exp = x.abs().log10().floor() as i32;
    let mut s = String::new();
    if !(-5..10).contains(&exp) {
        let m = format!("{:.9e}", x);
        let (mant, e) = m.split_once('e').expect("an exponent");
        let mant = mant.trim_end_matches('0').trim_end_matches('.');
        let e: i32 = e.parse().expect("an integer exponent");
        let _ = write!(s, "{mant}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    } else {
        let decimals = (9 - exp).max(0) as usize;
        let f = format!("{x:.decimals$}");
        s = if f.contains('.') {
            f.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            f
        };
    }
    s
}

impl AmrCore for AmrCoreAdv {
    type Error = Error;

    fn mesh(&self) -> &AmrMesh {
        &self.mesh
    }
    fn mesh_mut(&mut self) -> &mut AmrMesh {
        &mut self.mesh
    }

    fn error_est(
        &mut self,
        lev: usize,
        tags: &mut TagBoxArray,
        _time: f64,
        _ngrow: usize,
    ) -> Result<(), Error> {
        if self.p.phierr.is_none() {
            self.p.phierr = Some(
                self.pp
                    .prefixed("adv")
                    .query_arr("phierr")?
                    .unwrap_or_default(),
            );
        }
        let Some(&phierr) = self.p.phierr.as_deref().and_then(|p| p.get(lev)) else {
            return Ok(());
        };
        Zip::from(tags.fab_array_mut())
            .and(self.state(lev))
            .par_for_each(Tiling::None, IntVect::ZERO, |mfi, (mut t, s)| {
                t.zip_mut_with(s, mfi.validbox(), |t, &s| {
                    if s > phierr {
                        *t = TagBoxArray::SET;
                    }
                });
            })?;
        Ok(())
    }

    fn make_new_level_from_scratch(
        &mut self,
        lev: usize,
        time: f64,
        ba: &BoxArray,
        dm: &DistributionMapping,
    ) -> Result<(), Error> {
        self.define_level(lev, time, ba, dm, 0)?;
        let mut state = MultiFab::new(ba, dm, 1, IntVect::ZERO);
        let geom = *self.mesh.geom(lev);
        state.par_for_each_tile(Tiling::None, IntVect::ZERO, |mut t| {
            let bx = t.region();
            t.array_mut()
                .for_each_mut(bx, |i, j, _, _, v| *v = initial_phi(&geom, i, j));
        });
        self.phi_new[lev] = Some(state);
        Ok(())
    }

    fn make_new_level_from_coarse(
        &mut self,
        lev: usize,
        time: f64,
        ba: &BoxArray,
        dm: &DistributionMapping,
    ) -> Result<(), Error> {
        let ng = self.state(lev - 1).n_grow()[0];
        self.define_level(lev, time, ba, dm, ng)?;
        let mut state = MultiFab::new(ba, dm, 1, IntVect::splat(ng));
        interp_from_coarse_level(
            &mut state,
            IntVect::splat(ng),
            time,
            &self.get_data(lev - 1, time),
            &self.bcs[lev],
            Comps::first(1),
            &CellConsLinear::CELL_CONS_INTERP,
        )?;
        self.phi_new[lev] = Some(state);
        Ok(())
    }

    fn remake_level(
        &mut self,
        lev: usize,
        time: f64,
        ba: &BoxArray,
        dm: &DistributionMapping,
    ) -> Result<(), Error> {
        let ng = self.state(lev).n_grow()[0];
        let mut new_state = MultiFab::new(ba, dm, 1, IntVect::splat(ng));
        self.fill_patch(lev, time, &mut new_state)?;
        // The new old state, times, face velocities and flux register; the new state
        // is the one just filled.
        self.define_level(lev, time, ba, dm, ng)?;
        self.phi_new[lev] = Some(new_state);
        Ok(())
    }

    fn clear_level(&mut self, lev: usize) {
        self.phi_new[lev] = None;
        self.phi_old[lev] = None;
        self.flux_reg[lev] = None;
    }
}

fn run() -> Result<(), Error> {
    let _parallel = amrex::init()?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(inputs) = args.first() else {
        return Err("usage: advection_amr INPUTS [key=value ...]".into());
    };
    let mut pp = ParmParse::from_file(inputs)?;
    pp.read_command_line(&args[1..])?;
    let mut sim = AmrCoreAdv::new(pp)?;
    if sim.mesh.info().verbose > 0 {
        sim.say("Successfully read inputs file ... ");
    }
    sim.init_data()?;
    sim.evolve()?;
    // AMReX's Finalize: the keys no one read, with `amrex.verbose` (default 1) > 0.
    let verbose = match sim.pp.query::<i32>("amrex.verbose")? {
        Some(v) => v,
        None => sim.pp.query_or("amrex.v", 1)?,
    };
    if verbose > 0
        && let Some(report) = sim.pp.unused_report()
    {
        sim.say(report.trim_end_matches('\n'));
    }
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("advection_amr: {e}");
        std::process::exit(1);
    }
}
