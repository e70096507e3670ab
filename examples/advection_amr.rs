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
//! `plot_file`, `plot_int`, `chk_file`, `chk_int`), `adv.cfl`, `adv.do_subcycle`,
//! `adv.do_reflux`, `adv.phierr`. Directions that are not periodic get walls
//! (first-order extrapolation, `foextrap`). Checkpoint files (`amr.chk_int > 0`,
//! `amr.restart`) are not written or read: the program says so and stops.
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
    AmrCore, AmrError, AmrErrorKind, AmrMesh, CellConsLinear, FluxRegister, ParmParse, TagBoxArray,
    average_down_faces, average_down_geom, fill_patch_single_level, fill_patch_two_levels,
    interp_from_coarse_level,
};
use amrex::geometry::Geometry;
use amrex::multifab::{
    BoxArray, CopyOp, DistributionMapping, IndexBox, IndexType, IntVect, MultiFab,
};
use amrex::plotfile;
use rayon::prelude::*;

type Ext = fn([f64; 3], f64, usize) -> f64;

fn no_value(_: [f64; 3], _: f64, _: usize) -> f64 {
    0.0
}

const PI: f64 = core::f64::consts::PI;
/// Ghost cells of the state the fluxes read (the tutorial's `num_grow`).
const NUM_GROW: i32 = 3;

/// A dense scratch array over a box, `i` fastest (one component).
struct Fab {
    lo: IntVect,
    nx: i64,
    nxy: i64,
    data: Vec<f64>,
}

impl Fab {
    fn new(bx: IndexBox) -> Self {
        let len = bx.length();
        let (nx, ny, nz) = (i64::from(len[0]), i64::from(len[1]), i64::from(len[2]));
        Self {
            lo: bx.small_end(),
            nx,
            nxy: nx * ny,
            data: vec![0.0; (nx * ny * nz) as usize],
        }
    }
    #[inline]
    fn idx(&self, i: i32, j: i32, k: i32) -> usize {
        (i64::from(i - self.lo[0])
            + self.nx * i64::from(j - self.lo[1])
            + self.nxy * i64::from(k - self.lo[2])) as usize
    }
    #[inline]
    fn at(&self, i: i32, j: i32, k: i32) -> f64 {
        self.data[self.idx(i, j, k)]
    }
    #[inline]
    fn set(&mut self, i: i32, j: i32, k: i32, v: f64) {
        let n = self.idx(i, j, k);
        self.data[n] = v;
    }
    /// Fills the fab over `bx` (inside its own box) with `f(i, j, k)`.
    fn fill(&mut self, bx: IndexBox, f: impl Fn(i32, i32, i32) -> f64) {
        let (lo, hi) = (bx.lo(), bx.hi());
        for k in lo[2]..=hi[2] {
            for j in lo[1]..=hi[1] {
                for i in lo[0]..=hi[0] {
                    self.set(i, j, k, f(i, j, k));
                }
            }
        }
    }
}

/// `bx` grown by `n` in direction `d` only.
fn grow_dir(bx: IndexBox, d: usize, n: i32) -> IndexBox {
    bx.grow_dir(d, n)
}

/// The faces normal to `d` of the cells of `bx`.
fn faces(bx: IndexBox, d: usize) -> IndexBox {
    bx.surrounding_nodes_dir(d)
}

/// The tutorial's stream function at cell centre `(i, j)` of a level.
#[inline]
fn psi(i: i32, j: i32, time: f64, prob_lo: [f64; 3], dx: [f64; 3]) -> f64 {
    let x = dx[0] * (0.5 + f64::from(i)) + prob_lo[0];
    let y = dx[1] * (0.5 + f64::from(j)) + prob_lo[1];
    let (sx, sy) = ((PI * x).sin(), (PI * y).sin());
    sx * sx * (sy * sy) * (PI * time / 2.0).cos() * 1.0 / PI
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
/// function at cell centres, `w = 0`.
fn define_velocity(vel: &mut [MultiFab; 3], geom: &Geometry, time: f64) {
    let (lo, dx) = (geom.prob_lo(), geom.cell_size());
    for (d, mf) in vel.iter_mut().enumerate() {
        (0..mf.local_size()).for_each(|l| {
            let fb = mf.fabbox(mf.global_index(l));
            let mut a = mf.array_mut_at(l);
            let (flo, fhi) = (fb.lo(), fb.hi());
            // ψ on the cells around these faces.
            let pbox = IndexBox::new(
                IntVect::new(flo[0] - 1, flo[1] - 1, 0),
                IntVect::new(fhi[0] + 1, fhi[1] + 1, 0),
            );
            let mut p = Fab::new(pbox);
            p.fill(pbox, |i, j, _| psi(i, j, time, lo, dx));
            for k in flo[2]..=fhi[2] {
                for j in flo[1]..=fhi[1] {
                    for i in flo[0]..=fhi[0] {
                        a[(i, j, k)] = match d {
                            0 => {
                                -((p.at(i, j + 1, 0) + p.at(i - 1, j + 1, 0))
                                    - (p.at(i, j - 1, 0) + p.at(i - 1, j - 1, 0)))
                                    * (0.25 / dx[1])
                            }
                            1 => {
                                ((p.at(i + 1, j, 0) + p.at(i + 1, j - 1, 0))
                                    - (p.at(i - 1, j, 0) + p.at(i - 1, j - 1, 0)))
                                    * (0.25 / dx[0])
                            }
                            _ => 0.0,
                        };
                    }
                }
            }
        });
    }
}

/// The 2nd-order limited slope (MC limiter) and the 4th-order limited slope in
/// direction `d` over `gbx` (the tutorial's `slope{x,y,z}{2,4}`).
fn slopes(q: &amrex::multifab::Array4<'_, f64>, gbx: IndexBox, d: usize) -> Fab {
    let e = IntVect::basis(d);
    let s2box = grow_dir(gbx, d, 1);
    let mut s2 = Fab::new(s2box);
    let lim = |p: IntVect| {
        let (qm, q0, qp) = (q[p - e], q[p], q[p + e]);
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
    };
    s2.fill(s2box, |i, j, k| {
        let (dcen, dsgn, dlim) = lim(IntVect::new(i, j, k));
        dsgn * dlim.min(dcen.abs())
    });
    let mut s4 = Fab::new(gbx);
    s4.fill(gbx, |i, j, k| {
        let p = IntVect::new(i, j, k);
        let (dcen, dsgn, dlim) = lim(p);
        let (m, pl) = (p - e, p + e);
        let dq1 =
            4.0 / 3.0 * dcen - (1.0 / 6.0) * (s2.at(pl[0], pl[1], pl[2]) + s2.at(m[0], m[1], m[2]));
        dsgn * dlim.min(dq1.abs())
    });
    s4
}

/// The face fluxes of one fab over `bx` (valid cells), per direction, on the faces of
/// `bx`: the tutorial's CTU scheme (`flux_{x,y,z}`, the six transverse corrections and
/// `create_flux_{x,y,z}`), unscaled (`u * phi` at the face).
fn fab_fluxes(
    q: &amrex::multifab::Array4<'_, f64>,
    vel: [&amrex::multifab::Array4<'_, f64>; 3],
    bx: IndexBox,
    dtdx: [f64; 3],
) -> [Fab; 3] {
    let gbx = bx.grow(1);
    // Longitudinal face states on the faces of gbx shrunk by one in their direction.
    let edge = |d: usize| -> Fab {
        let s = slopes(q, gbx, d);
        let fb = faces(grow_dir(gbx, d, -1), d);
        let e = IntVect::basis(d);
        let mut p = Fab::new(fb);
        let v = vel[d];
        p.fill(fb, |i, j, k| {
            let f = IntVect::new(i, j, k);
            let u = v[f];
            let m = f - e;
            if u < 0.0 {
                q[f] - s.at(i, j, k) * (0.5 + 0.5 * dtdx[d] * u)
            } else {
                q[m] + s.at(m[0], m[1], m[2]) * (0.5 - 0.5 * dtdx[d] * u)
            }
        });
        p
    };
    let ph = [edge(0), edge(1), edge(2)];
    // Transverse correction of the `d`-face state by direction `t` (flux_xy etc.), on
    // the faces normal to `d` of bx grown by one in the third direction.
    let trans = |d: usize, t: usize| -> Fab {
        let third = 3 - d - t;
        let fb = faces(grow_dir(bx, third, 1), d);
        let (ed, et) = (IntVect::basis(d), IntVect::basis(t));
        let (vd, vt) = (vel[d], vel[t]);
        let mut out = Fab::new(fb);
        out.fill(fb, |i, j, k| {
            let f = IntVect::new(i, j, k);
            let c = if vd[f] < 0.0 { f } else { f - ed };
            let cp = c + et;
            ph[d].at(i, j, k)
                - dtdx[t] / 3.0
                    * (0.5
                        * (vt[cp] + vt[c])
                        * (ph[t].at(cp[0], cp[1], cp[2]) - ph[t].at(c[0], c[1], c[2])))
        });
        out
    };
    // phix_y, phix_z, phiy_x, phiy_z, phiz_x, phiz_y.
    let tr = [
        [None, Some(trans(0, 1)), Some(trans(0, 2))],
        [Some(trans(1, 0)), None, Some(trans(1, 2))],
        [Some(trans(2, 0)), Some(trans(2, 1)), None],
    ];
    let get = |d: usize, t: usize| tr[d][t].as_ref().expect("a transverse state");
    let flux = |d: usize| -> Fab {
        // The two other directions in increasing order, and the states corrected by the
        // third one: for x, phiy_z and phiz_y.
        let (a, b) = match d {
            0 => (1, 2),
            1 => (0, 2),
            _ => (0, 1),
        };
        let (pa, pb) = (get(a, b), get(b, a));
        let fb = faces(bx, d);
        let ed = IntVect::basis(d);
        let (ea, eb) = (IntVect::basis(a), IntVect::basis(b));
        let (vd, va, vb) = (vel[d], vel[a], vel[b]);
        let mut out = Fab::new(fb);
        out.fill(fb, |i, j, k| {
            let f = IntVect::new(i, j, k);
            let u = vd[f];
            let c = if u < 0.0 { f } else { f - ed };
            let (ca, cb) = (c + ea, c + eb);
            u * (ph[d].at(i, j, k)
                - 0.5
                    * dtdx[a]
                    * (0.5
                        * (va[ca] + va[c])
                        * (pa.at(ca[0], ca[1], ca[2]) - pa.at(c[0], c[1], c[2])))
                - 0.5
                    * dtdx[b]
                    * (0.5
                        * (vb[cb] + vb[c])
                        * (pb.at(cb[0], cb[1], cb[2]) - pb.at(c[0], c[1], c[2]))))
        });
        out
    };
    [flux(0), flux(1), flux(2)]
}

/// The tutorial's conservative update over `bx`.
fn conservative(
    out: &mut amrex::multifab::Array4Mut<'_, f64>,
    q: &amrex::multifab::Array4<'_, f64>,
    fl: [&dyn Fn(i32, i32, i32) -> f64; 3],
    bx: IndexBox,
    dtdx: [f64; 3],
) {
    let (lo, hi) = (bx.lo(), bx.hi());
    for k in lo[2]..=hi[2] {
        for j in lo[1]..=hi[1] {
            for i in lo[0]..=hi[0] {
                out[(i, j, k)] = q[(i, j, k)]
                    + ((fl[0](i, j, k) - fl[0](i + 1, j, k)) * dtdx[0]
                        + (fl[1](i, j, k) - fl[1](i, j + 1, k)) * dtdx[1]
                        + (fl[2](i, j, k) - fl[2](i, j, k + 1)) * dtdx[2]);
            }
        }
    }
}

/// The tutorial's parameters (`ReadParameters` and the `adv.phierr` of `ErrorEst`).
struct Params {
    max_step: i64,
    stop_time: f64,
    regrid_int: i64,
    plot_file: String,
    plot_int: i64,
    cfl: f64,
    do_reflux: bool,
    do_subcycle: bool,
    phierr: Vec<f64>,
    verbose: i32,
}

/// The tutorial's `AmrCoreAdv`.
struct AmrCoreAdv {
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
}

/// Runs `f`, adding its wall-clock time to `acc`.
fn timed<T>(acc: &mut f64, f: impl FnOnce() -> T) -> T {
    let t0 = std::time::Instant::now();
    let r = f();
    *acc += t0.elapsed().as_secs_f64();
    r
}

fn user_err(what: &str, e: impl core::fmt::Display) -> AmrError {
    AmrError::new(
        "advection_amr",
        AmrErrorKind::BadParameter {
            key: what.to_string(),
            detail: e.to_string(),
        },
    )
}

impl AmrCoreAdv {
    fn new(pp: &ParmParse) -> Result<Self, Box<dyn core::error::Error>> {
        let mesh = AmrMesh::from_parm_parse(pp)?;
        let amr = pp.prefixed("amr");
        let adv = pp.prefixed("adv");
        if amr.query_or::<i64>("chk_int", -1)? > 0 || amr.contains("restart") {
            return Err(
                "checkpoint files (amr.chk_int > 0, amr.restart) are not supported by this port"
                    .into(),
            );
        }
        let p = Params {
            max_step: pp.query_or("max_step", i64::from(i32::MAX))?,
            stop_time: pp.query_or("stop_time", f64::MAX)?,
            regrid_int: amr.query_or("regrid_int", 2)?,
            plot_file: amr.query_or("plot_file", String::from("plt"))?,
            plot_int: amr.query_or("plot_int", -1)?,
            cfl: adv.query_or("cfl", 0.7)?,
            do_reflux: adv.query_or::<i32>("do_reflux", 1)? != 0,
            do_subcycle: adv.query_or::<i32>("do_subcycle", 1)? != 0,
            phierr: adv.query_arr("phierr")?.unwrap_or_default(),
            verbose: amr.query_or("v", 0)?,
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
        let rank0 = amrex::multifab::Communicator::current().rank() == 0;
        Ok(Self {
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

    /// New state, old state, face velocities and flux register of a level on `ba`/`dm`.
    fn define_level(
        &mut self,
        lev: usize,
        time: f64,
        ba: &BoxArray,
        dm: &DistributionMapping,
        ng: i32,
    ) -> Result<MultiFab, AmrError> {
        let new = MultiFab::new(ba, dm, 1, IntVect::splat(ng));
        self.phi_old[lev] = Some(MultiFab::new(ba, dm, 1, IntVect::splat(ng)));
        self.t_new[lev] = time;
        self.t_old[lev] = time - 1.0e200;
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
        Ok(new)
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
            fill_patch_single_level(mf, ng, time, &self.get_data(0, time), 0, 0, 1)
        } else {
            fill_patch_two_levels(
                mf,
                ng,
                time,
                &self.get_data(lev - 1, time),
                &self.get_data(lev, time),
                0,
                0,
                1,
                self.mesh.ref_ratio(lev - 1),
                &CellConsLinear::CELL_CONS_INTERP,
            )
        }
    }

    fn est_time_step(&mut self, lev: usize, time: f64) -> Result<f64, AmrError> {
        let geom = *self.mesh.geom(lev);
        let t = if time == 0.0 {
            time
        } else {
            time + 0.5 * self.dt[lev]
        };
        let vel = self.facevel[lev].as_mut().expect("level data");
        define_velocity(vel, &geom, t);
        let dx = geom.cell_size();
        let mut dt_est = f64::MAX;
        for (d, v) in vel.iter().enumerate() {
            let est = v.norm0(0..1, 0).map_err(|e| user_err("facevel", e))?;
            dt_est = dt_est.min(dx[d] / est);
        }
        Ok(dt_est * self.p.cfl)
    }

    fn compute_dt(&mut self) -> Result<(), AmrError> {
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
    fn advance_phi_at_level(&mut self, lev: usize, time: f64, dt_lev: f64) -> Result<(), AmrError> {
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
        let results = compute_fluxes(&sborder, vel, dtdx);
        let mut new = MultiFab::new(old.box_array(), old.distribution_map(), 1, old.n_grow());
        write_update(&mut new, &sborder, &results, dtdx);
        let refluxing = self.p.do_reflux && (lev < self.finest() || lev > 0);
        if refluxing {
            // Fluxes times face area and dt, as the registers take them.
            let area = [
                dt_lev * dx[1] * dx[2],
                dt_lev * dx[0] * dx[2],
                dt_lev * dx[0] * dx[1],
            ];
            let fluxes = face_multifabs(&new, &results, |d, v| v * area[d]);
            if lev < self.finest()
                && let Some(fr) = self.flux_reg[lev + 1].as_mut()
            {
                for (d, f) in fluxes.iter().enumerate() {
                    fr.crse_init(f, d, 0, 0, 1, -1.0, CopyOp::Copy)?;
                }
            }
            if lev > 0
                && let Some(fr) = self.flux_reg[lev].as_mut()
            {
                for (d, f) in fluxes.iter().enumerate() {
                    fr.fine_add(f, d, 0, 0, 1, 1.0)?;
                }
            }
        }
        self.phi_new[lev] = Some(new);
        self.timers.advance += t0.elapsed().as_secs_f64();
        // The tutorial's CFL check.
        let vel = self.facevel[lev].as_ref().expect("level data");
        for (d, v) in vel.iter().enumerate() {
            let umax = v.norm0(0..1, 0).map_err(|e| user_err("facevel", e))?;
            if umax * dt_lev > dx[d] {
                return Err(user_err(
                    "adv.cfl",
                    format!(
                        "CFL violation on level {lev}: |u| {umax} dt {dt_lev} > dx {}; use a smaller adv.cfl",
                        dx[d]
                    ),
                ));
            }
        }
        Ok(())
    }

    fn time_step_with_subcycling(
        &mut self,
        lev: usize,
        time: f64,
    ) -> Result<(), Box<dyn core::error::Error>> {
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
        );
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
                    fr.reflux(state, 1.0, 0, 0, 1, &geom)
                })?;
            }
            let t0 = std::time::Instant::now();
            self.average_down_to(lev)?;
            self.timers.average_down += t0.elapsed().as_secs_f64();
        }
        Ok(())
    }

    fn time_step_no_subcycling(&mut self, time: f64) -> Result<(), Box<dyn core::error::Error>> {
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
        for lev in 0..=finest {
            let geom = *self.mesh.geom(lev);
            define_velocity(self.facevel[lev].as_mut().expect("level data"), &geom, time);
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
    fn advance_phi_all_levels(&mut self, time: f64, dt: f64) -> Result<(), AmrError> {
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
            let results = compute_fluxes(&sborder, vel, dtdx);
            all_fluxes.push(face_multifabs(old, &results, |_, v| v));
        }
        for lev in (1..=finest).rev() {
            let (lo, hi) = all_fluxes.split_at_mut(lev);
            for d in 0..3 {
                average_down_faces(
                    &hi[0][d],
                    &mut lo[lev - 1][d],
                    self.mesh.ref_ratio(lev - 1),
                    0,
                )?;
            }
        }
        for (lev, fl) in all_fluxes.iter().enumerate() {
            let dx = self.mesh.geom(lev).cell_size();
            let dtdx = [dt / dx[0], dt / dx[1], dt / dx[2]];
            let old = self.phi_old[lev].as_ref().expect("level data");
            let mut new = MultiFab::new(old.box_array(), old.distribution_map(), 1, old.n_grow());
            for l in 0..new.local_size() {
                let bx = new.box_of(new.global_index(l));
                let (q, f) = (
                    old.array_at(l),
                    [fl[0].array_at(l), fl[1].array_at(l), fl[2].array_at(l)],
                );
                let fx = |i, j, k| f[0][(i, j, k)];
                let fy = |i, j, k| f[1][(i, j, k)];
                let fz = |i, j, k| f[2][(i, j, k)];
                conservative(&mut new.array_mut_at(l), &q, [&fx, &fy, &fz], bx, dtdx);
            }
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
        average_down_geom(fine, c, &fg, &cg, 0, 1, ratio)
    }

    fn write_plot_file(&mut self) -> Result<(), Box<dyn core::error::Error>> {
        let t0 = std::time::Instant::now();
        let r = self.write_plot_file_untimed();
        self.timers.plotfile += t0.elapsed().as_secs_f64();
        r
    }

    fn write_plot_file_untimed(&self) -> Result<(), Box<dyn core::error::Error>> {
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

    fn evolve(&mut self) -> Result<(), Box<dyn core::error::Error>> {
        let t_start = std::time::Instant::now();
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
            let sum_phi = self.state(0).sum(0..1, 0).map_err(|e| user_err("sum", e))?;
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
            step += 1;
            if cur_time >= self.p.stop_time - 1.0e-6 * self.dt[0] {
                break;
            }
        }
        if self.p.plot_int > 0 && self.istep[0] > last_plot_file_step {
            self.write_plot_file()?;
        }
        self.report_timing(t_start.elapsed().as_secs_f64());
        Ok(())
    }

    /// The wall-clock split of the run per coarse step (rank 0's clock), after the
    /// lines AMReX prints.
    fn report_timing(&self, total: f64) {
        let steps = self.istep[0].max(1) as f64;
        let t = &self.timers;
        let parts = [
            ("advance", t.advance),
            ("fill_patch", t.fill_patch),
            ("reflux", t.reflux),
            ("average_down", t.average_down),
            ("regrid", t.regrid),
            ("plotfiles", t.plotfile),
        ];
        let other = total - parts.iter().map(|p| p.1).sum::<f64>();
        let ranks = amrex::multifab::Communicator::current().size();
        let threads = rayon::current_num_threads();
        self.say(&format!(
            "timing: {} coarse steps in {total:.3} s ({ranks} rank(s), {threads} thread(s) each), per coarse step:",
            self.istep[0]
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

/// Per local fab: the three face-flux arrays of its valid box.
fn compute_fluxes(sborder: &MultiFab, vel: &[MultiFab; 3], dtdx: [f64; 3]) -> Vec<[Fab; 3]> {
    (0..sborder.local_size())
        .into_par_iter()
        .map(|l| {
            let bx = sborder.box_of(sborder.global_index(l));
            let q = sborder.array_at(l);
            let v = [vel[0].array_at(l), vel[1].array_at(l), vel[2].array_at(l)];
            fab_fluxes(&q, [&v[0], &v[1], &v[2]], bx, dtdx)
        })
        .collect()
}

/// `new` over its valid cells from `sborder` and the fluxes (the conservative update).
fn write_update(new: &mut MultiFab, sborder: &MultiFab, fl: &[[Fab; 3]], dtdx: [f64; 3]) {
    for (l, f) in fl.iter().enumerate() {
        let bx = new.box_of(new.global_index(l));
        let q = sborder.array_at(l);
        let fx = |i, j, k| f[0].at(i, j, k);
        let fy = |i, j, k| f[1].at(i, j, k);
        let fz = |i, j, k| f[2].at(i, j, k);
        conservative(&mut new.array_mut_at(l), &q, [&fx, &fy, &fz], bx, dtdx);
    }
}

/// The fluxes as face MultiFabs on `like`'s layout, each value passed through `scale`.
fn face_multifabs(
    like: &MultiFab,
    fl: &[[Fab; 3]],
    scale: impl Fn(usize, f64) -> f64,
) -> [MultiFab; 3] {
    [0, 1, 2].map(|d| {
        let ba = like.box_array().convert(IndexType::CELL.with_node(d));
        let mut mf = MultiFab::new(&ba, like.distribution_map(), 1, IntVect::ZERO);
        for (l, f) in fl.iter().enumerate() {
            let fb = mf.box_of(mf.global_index(l));
            let mut a = mf.array_mut_at(l);
            for p in fb.iter() {
                a[(p[0], p[1], p[2])] = scale(d, f[d].at(p[0], p[1], p[2]));
            }
        }
        mf
    })
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
    ) -> Result<(), AmrError> {
        let Some(&phierr) = self.p.phierr.get(lev) else {
            return Ok(());
        };
        let state = self.state(lev);
        let fa = tags.fab_array_mut();
        for l in 0..fa.local_size() {
            let bx = fa.box_of(fa.global_index(l));
            let s = state.array_at(l);
            let mut t = fa.array_mut_at(l);
            for p in bx.iter() {
                if s[p] > phierr {
                    t[p] = TagBoxArray::SET;
                }
            }
        }
        Ok(())
    }

    fn make_new_level_from_scratch(
        &mut self,
        lev: usize,
        time: f64,
        ba: &BoxArray,
        dm: &DistributionMapping,
    ) -> Result<(), AmrError> {
        let mut state = self.define_level(lev, time, ba, dm, 0)?;
        let geom = *self.mesh.geom(lev);
        for l in 0..state.local_size() {
            let bx = state.box_of(state.global_index(l));
            let mut a = state.array_mut_at(l);
            for p in bx.iter() {
                a[p] = initial_phi(&geom, p[0], p[1]);
            }
        }
        self.phi_new[lev] = Some(state);
        Ok(())
    }

    fn make_new_level_from_coarse(
        &mut self,
        lev: usize,
        time: f64,
        ba: &BoxArray,
        dm: &DistributionMapping,
    ) -> Result<(), AmrError> {
        let ng = self.state(lev - 1).n_grow()[0];
        let mut state = self.define_level(lev, time, ba, dm, ng)?;
        interp_from_coarse_level(
            &mut state,
            IntVect::splat(ng),
            time,
            &self.get_data(lev - 1, time),
            &self.bcs[lev],
            0,
            0,
            0,
            1,
            self.mesh.ref_ratio(lev - 1),
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
    ) -> Result<(), AmrError> {
        let ng = self.state(lev).n_grow();
        let mut new_state = MultiFab::new(ba, dm, 1, ng);
        self.fill_patch(lev, time, &mut new_state)?;
        self.phi_new[lev] = Some(new_state);
        self.phi_old[lev] = Some(MultiFab::new(ba, dm, 1, ng));
        self.t_new[lev] = time;
        self.t_old[lev] = time - 1.0e200;
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

    fn clear_level(&mut self, lev: usize) {
        self.phi_new[lev] = None;
        self.phi_old[lev] = None;
        self.flux_reg[lev] = None;
    }
}

fn run() -> Result<(), Box<dyn core::error::Error>> {
    let _parallel = amrex::multifab::init()?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(inputs) = args.first() else {
        return Err("usage: advection_amr INPUTS [key=value ...]".into());
    };
    let mut pp = ParmParse::from_file(inputs)?;
    pp.read_command_line(&args[1..])?;
    let mut sim = AmrCoreAdv::new(&pp)?;
    if sim.mesh.info().verbose > 0 {
        sim.say("Successfully read inputs file ... ");
    }
    sim.init_from_scratch(0.0)?;
    for lev in (0..sim.finest()).rev() {
        sim.average_down_to(lev)?;
    }
    if sim.p.plot_int > 0 {
        sim.write_plot_file()?;
    }
    sim.evolve()?;
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("advection_amr: {e}");
        std::process::exit(1);
    }
}
