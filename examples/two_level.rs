//! A fixed two-level AMR hierarchy: a Gaussian advected and diffused across a
//! coarse/fine interface, with the fine level subcycled and refluxed.
//!
//! `∂φ/∂t + u·∇φ = D ∇²φ` on the unit cube, 64³ coarse cells, periodic in y and z and
//! closed by walls in x (`foextrap`: zero gradient, so no flux leaves). Level 1 refines
//! the middle half of the domain (coarse cells 16..=47 in every direction) by 2, in
//! boxes of 32³ fine cells, so the coarse/fine interface crosses box (and, under MPI,
//! rank) boundaries. Fluxes are first-order upwind for `u` plus centred differences for
//! `D`, on faces. Each coarse step runs AMReX's subcycled loop:
//!
//! 1. level 0: `fill_patch_single_level` (ghost cells: periodic images and the walls),
//!    fluxes, update, and the coarse fluxes into the `FluxRegister` (`crse_init`);
//! 2. level 1, twice with half the step: `fill_patch_two_levels` (its ghost cells from
//!    fine neighbours where they exist, else from the coarse level interpolated in time
//!    between the old and new coarse states and in space by `cell_cons_interp`),
//!    fluxes, update, and the fine fluxes into the register (`fine_add`);
//! 3. `reflux` puts the difference of the fluxes through the interface into the coarse
//!    cells beside it, and `average_down` replaces the covered coarse cells by the mean
//!    of their fine cells.
//!
//! The total mass `Σ φ V` over the coarse level (which after `average_down` holds the
//! fine level's mass where it is covered) must stay what it was to round-off: the
//! program prints its relative change after 40 steps and fails above 1e-13. It writes a
//! two-level plotfile of the end state (`plt_two_level`, or `$TWO_LEVEL_PLOTFILE`) and
//! prints its path.
//!
//! Built with `--features mpi` and started by `mpirun -n N`, the boxes of both levels
//! are spread over the ranks; every printed number is the same on any rank count (the
//! operations and reductions are reproducible bit for bit).
use amrex::amr::boundary::{BCRec, BCType, PhysBcFunct};
use amrex::amr::fill_patch::Source;
use amrex::amr::{
    CellConsLinear, Comps, FluxRegister, average_down, fill_patch_single_level,
    fill_patch_two_levels,
};
use amrex::geometry::{CoordSys, Geometry, RealBox};
use amrex::multifab::{
    BoxArray, CopyOp, DistributionMapping, FabArrayError, IndexBox, IndexType, IntVect, MultiFab,
    Tiling, Zip,
};
use amrex::plotfile;

const N: i32 = 64;
const STEPS: usize = 40;
/// Advection velocity: none across the walls (x), diagonal in y and z.
const U: [f64; 3] = [0.0, 1.0, 0.5];
/// Diffusion coefficient.
const D: f64 = 2e-3;

type Ext = fn([f64; 3], f64, usize) -> f64;

fn no_value(_: [f64; 3], _: f64, _: usize) -> f64 {
    0.0
}

/// The initial state: a Gaussian centred below the fine region in y, so that it is
/// carried into it.
fn gaussian(x: [f64; 3]) -> f64 {
    let c = [0.45, 0.2, 0.4];
    let r2: f64 = (0..3).map(|d| (x[d] - c[d]).powi(2)).sum();
    (-r2 / (2.0 * 0.06_f64.powi(2))).exp()
}

/// One level: its geometry, boundary conditions and state.
struct Level {
    geom: Geometry,
    bc: PhysBcFunct<Ext>,
    state: MultiFab,
}

impl Level {
    fn new(geom: Geometry, ba: &BoxArray) -> Self {
        let mut rec = BCRec::uniform(BCType::IntDir);
        rec.set_lo(0, BCType::FoExtrap);
        rec.set_hi(0, BCType::FoExtrap);
        let bc = PhysBcFunct::new(geom, vec![rec], no_value as Ext);
        let dm = DistributionMapping::new(ba);
        let mut state = MultiFab::new(ba, &dm, 1, IntVect::ZERO);
        state.par_for_each_tile(Tiling::Default, IntVect::ZERO, |mut t| {
            let bx = t.region();
            t.array_mut().for_each_mut(bx, |i, j, k, _, v| {
                *v = gaussian(geom.cell_centre(IntVect::new(i, j, k)));
            });
        });
        Self { geom, bc, state }
    }

    /// A MultiFab on this level's layout with one ghost cell, for a filled state.
    fn with_ghosts(&self) -> MultiFab {
        MultiFab::new(
            self.state.box_array(),
            self.state.distribution_map(),
            1,
            IntVect::splat(1),
        )
    }
}

/// The face fluxes of `q` (ghost cells filled) in direction `d`, multiplied by the face
/// area and `dt`: what crosses each face during the step. The loop runs over the tiles
/// of the faces (each tile owns its low faces, the last one also the high face), each
/// reading `q` around its faces.
fn fluxes(q: &MultiFab, geom: &Geometry, d: usize, dt: f64) -> Result<MultiFab, FabArrayError> {
    let faces = q.box_array().convert(IndexType::CELL.with_node(d));
    let mut f = MultiFab::new(&faces, q.distribution_map(), 1, IntVect::ZERO);
    let dx = geom.cell_size();
    let area = (0..3).filter(|&e| e != d).map(|e| dx[e]).product::<f64>();
    let (u, k) = (U[d], D / dx[d]);
    let step = IntVect::ZERO.with(d, 1);
    Zip::from(&mut f)
        .and(q)
        .par_for_each(Tiling::Default, IntVect::ZERO, |_, (mut f, qa)| {
            let bx = f.index_box();
            f.for_each_mut(bx, |i, j, k_, _, v| {
                let p = IntVect::new(i, j, k_);
                let (left, right) = (qa[(p - step, 0)], qa[(p, 0)]);
                let upwind = if u >= 0.0 { left } else { right };
                *v = (u * upwind - k * (right - left)) * area * dt;
            });
        })?;
    Ok(f)
}

/// `new = old - Σ_d (F_hi - F_lo) / V` over the valid cells.
fn update(
    old: &MultiFab,
    flux: &[MultiFab; 3],
    geom: &Geometry,
) -> Result<MultiFab, FabArrayError> {
    let mut new = MultiFab::new(old.box_array(), old.distribution_map(), 1, IntVect::ZERO);
    let dx = geom.cell_size();
    let vol = dx[0] * dx[1] * dx[2];
    Zip::from(&mut new)
        .and(old)
        .and(flux.each_ref())
        .par_for_each(Tiling::Default, IntVect::ZERO, |mfi, (mut n, o, fs)| {
            n.for_each_mut(mfi.tilebox(), |i, j, k, _, v| {
                let p = IntVect::new(i, j, k);
                let mut div = 0.0;
                for (d, f) in fs.iter().enumerate() {
                    div += f[(p + IntVect::ZERO.with(d, 1), 0)] - f[(p, 0)];
                }
                *v = o[(p, 0)] - div / vol;
            });
        })?;
    Ok(new)
}

fn mass(level: &Level) -> Result<f64, Box<dyn core::error::Error>> {
    let dx = level.geom.cell_size();
    Ok(level.state.sum(0..1, 0)? * dx[0] * dx[1] * dx[2])
}

fn main() -> Result<(), Box<dyn core::error::Error>> {
    let parallel = amrex::init()?;
    let comm = parallel.communicator().clone();
    macro_rules! say {
        ($($t:tt)*) => { if comm.rank() == 0 { println!($($t)*); } };
    }
    let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(N - 1));
    let cgeom = Geometry::new(
        domain,
        RealBox::UNIT,
        CoordSys::Cartesian,
        [false, true, true],
    )?;
    let ratio = IntVect::splat(2);
    let fgeom = cgeom.refine(ratio)?;
    let cba = BoxArray::from_domain(domain, 32);
    let fine_region = IndexBox::new(IntVect::splat(N / 4), IntVect::splat(3 * N / 4 - 1));
    let fba = BoxArray::from_domain(fine_region.refine_iv(ratio), 32);
    let mut crse = Level::new(cgeom, &cba);
    let mut fine = Level::new(fgeom, &fba);
    average_down(&fine.state, &mut crse.state, 0..1, ratio)?;
    say!(
        "two levels: {N}^3 coarse cells in {} boxes, {}^3 fine cells in {} boxes (ratio 2), {} rank(s)",
        cba.len(),
        fine_region.refine_iv(ratio).length()[0],
        fba.len(),
        comm.size()
    );

    let dxf = fgeom.cell_size()[0];
    let umax = U.iter().fold(0.0_f64, |m, u| m.max(u.abs()));
    let dt_fine = 0.5 * (dxf / umax).min(dxf * dxf / (6.0 * D));
    let dt = 2.0 * dt_fine;
    let mapper = CellConsLinear::CELL_CONS_INTERP;
    let m0 = mass(&crse)?;
    let mut time = 0.0;
    say!("initial mass {m0:.15e}, coarse dt {dt:.6e}");

    for step in 1..=STEPS {
        let mut fr = FluxRegister::new(&fba, fine.state.distribution_map(), ratio, 1, 1)?;
        // Level 0.
        let mut q = crse.with_ghosts();
        fill_patch_single_level(
            &mut q,
            1,
            time,
            &Source::at(&crse.state, &crse.bc),
            Comps::first(1),
        )?;
        let [fx, fy, fz] = [0, 1, 2].map(|d| fluxes(&q, &cgeom, d, dt));
        let cflux = [fx?, fy?, fz?];
        for (d, f) in cflux.iter().enumerate() {
            fr.crse_init(f, d, Comps::first(1), -1.0, CopyOp::Copy)?;
        }
        let crse_new = update(&crse.state, &cflux, &cgeom)?;

        // Level 1, subcycled: two steps of dt/2 with coarse ghost data interpolated in
        // time between the old and the new coarse states.
        for sub in 0..2 {
            let t = time + sub as f64 * dt_fine;
            let mut q = fine.with_ghosts();
            let coarse = Source::between((&crse.state, time), (&crse_new, time + dt), &crse.bc);
            fill_patch_two_levels(
                &mut q,
                1,
                t,
                &coarse,
                &Source::at(&fine.state, &fine.bc),
                Comps::first(1),
                &mapper,
            )?;
            let [fx, fy, fz] = [0, 1, 2].map(|d| fluxes(&q, &fgeom, d, dt_fine));
            let fflux = [fx?, fy?, fz?];
            for (d, f) in fflux.iter().enumerate() {
                fr.fine_add(f, d, Comps::first(1), 1.0)?;
            }
            fine.state = update(&fine.state, &fflux, &fgeom)?;
        }

        // Synchronise the levels: reflux, then average the fine level down.
        crse.state = crse_new;
        fr.reflux(&mut crse.state, 1.0, Comps::first(1), &cgeom)?;
        average_down(&fine.state, &mut crse.state, 0..1, ratio)?;
        time += dt;
        if step % 10 == 0 {
            // Reductions are collective: every rank computes them, rank 0 prints.
            let (m, max) = (mass(&crse)?, crse.state.max(0..1, 0)?);
            say!(
                "step {step:3}  time {time:.6}  mass {m:.15e}  relative change {:+.3e}  max {max:.12}",
                (m - m0) / m0
            );
        }
    }
    let drift = (mass(&crse)? - m0).abs() / m0;
    say!("relative change of mass after {STEPS} steps: {drift:.3e} (must be <= 1e-13)");
    if drift > 1e-13 {
        return Err(format!("mass not conserved: relative change {drift:e}").into());
    }
    let dir = std::env::var("TWO_LEVEL_PLOTFILE").unwrap_or_else(|_| "plt_two_level".into());
    plotfile::write_multi_level_plotfile(
        &dir,
        &[&crse.state, &fine.state],
        &["phi"],
        &[cgeom, fgeom],
        time,
        &[STEPS as i64, 2 * STEPS as i64],
        &[ratio],
    )?;
    let back = plotfile::read_plotfile_on(&dir, &comm)?;
    let fine_sum = back.levels[1].sum(0..1, 0)?;
    say!(
        "two-level plotfile {dir}: {} levels, finest level sum {fine_sum:.15e}",
        back.levels.len()
    );
    Ok(())
}
