//! A particle-in-cell loop on AMReX's particle container: charged particles in a
//! periodic box, pushed each step by a velocity field gathered (cloud-in-cell) from a
//! `MultiFab`, redistributed to the grids and ranks that own them, and their charge
//! deposited (cloud-in-cell) into a `MultiFab`.
//!
//! The unit cube, 32³ cells in 16³ grids, periodic in every direction; 200 000
//! particles from `init_random` (the same set on any rank count), each with charge
//! `1 + id mod 5` (integers, so the particles' total is exact in any summation order).
//! The velocity field `v = A (sin 2πy, sin 2πz, sin 2πx)` lives at cell centres with one
//! ghost cell filled by `fill_boundary`. Each of 20 steps gathers `v` onto the particles,
//! moves them by `v dt` (a fifth of a cell or less), `redistribute`s (particles cross
//! grid, rank and periodic boundaries), and deposits the charge: the deposited total
//! equals the particles' total to round-off (the program fails otherwise). At the end
//! it writes a plotfile (`plt_particles_pic`, or `$PARTICLES_PIC_PLOTFILE`) with the
//! charge density and the particles (`particles/`), which yt opens.
//!
//! Built with `--features mpi` and started by `mpirun -n N`, the grids are spread over
//! the ranks and every printed number is the same as on one process.
use amrex::geometry::{CoordSys, Geometry, RealBox};
use amrex::multifab::{BoxArray, DistributionMapping, IndexBox, IntVect, MultiFab, Tiling};
use amrex::particles::{AosTile, ParticleContainer, ParticleTile, idcpu};
use amrex::plotfile;
use amrex::runtime::ReduceOp;
use core::f64::consts::TAU;

const N: u64 = 200_000;
const STEPS: usize = 20;
const A: f64 = 0.5;

fn main() -> Result<(), Box<dyn core::error::Error>> {
    let parallel = amrex::init()?;
    let comm = parallel.communicator().clone();
    let say = |s: String| {
        if comm.rank() == 0 {
            println!("{s}");
        }
    };

    let n = 32;
    let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(n - 1));
    let geom = Geometry::new(
        domain,
        RealBox::new([0.0; 3], [1.0; 3])?,
        CoordSys::Cartesian,
        [true; 3],
    )?;
    let ba = BoxArray::from_domain(domain, 16);
    let dm = DistributionMapping::new(&ba);
    say(format!(
        "particles_pic: {n}^3 cells in {} grids on {} rank(s), {N} particles, {STEPS} steps",
        ba.len(),
        comm.size()
    ));

    // The velocity field at cell centres, ghost cells filled (periodic images).
    let mut vel = MultiFab::new(&ba, &dm, 3, IntVect::splat(1));
    vel.par_for_each_tile(Tiling::Default, IntVect::ZERO, |mut t| {
        let vbx = t.region();
        t.array_mut().for_each_mut(vbx, |i, j, k, c, v| {
            let x = geom.cell_centre(IntVect::new(i, j, k));
            *v = A * (TAU * x[(c + 1) % 3]).sin();
        });
    });
    vel.fill_boundary(geom.periodicity())?;

    // Particle<4, 0>: rdata = [charge, vx, vy, vz].
    let mut pc = ParticleContainer::new(geom, &ba, &dm, AosTile::<4, 0>::new(0, 0));
    pc.init_random(N, 2026, &[0.0; 4], &[])?;
    pc.par_for_each_tile(0, |t| {
        for i in 0..t.data.len() {
            let id = idcpu::id(t.data.idcpu(i));
            t.data.set_real(i, 0, 1.0 + (id % 5) as f64);
        }
    });

    let dt = 0.2 * geom.cell_size()[0] / A;
    let mut rho = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
    for step in 1..=STEPS {
        pc.gather_cic(0, &vel, 0, &[1, 2, 3])?;
        pc.par_for_each_tile(0, |t| {
            for i in 0..t.data.len() {
                let mut p = t.data.pos(i);
                for (d, x) in p.iter_mut().enumerate() {
                    *x += dt * t.data.real(i, 1 + d);
                }
                t.data.set_pos(i, p);
            }
        });
        let r = pc.redistribute()?;
        rho.set_val(0.0, .., 1)?;
        pc.deposit_cic(0, &mut rho, 0, |t, i| t.real(i, 0))?;
        let deposited = rho.sum(0..1, 0)?;
        let densest = rho.max(0..1, 0)?;
        let local: f64 = pc
            .tiles(0)
            .map(|t| (0..t.data.len()).map(|i| t.data.real(i, 0)).sum::<f64>())
            .sum();
        let total = comm.all_reduce_f64(local, ReduceOp::Sum)?;
        let moved = comm.all_reduce_u64((r.moved_local + r.sent) as u64, ReduceOp::Sum)?;
        let ok = (deposited - total).abs() <= 1e-12 * total;
        say(format!(
            "step {step:2}: {} particles ({moved} changed grid), densest cell {densest:.8e}, charge deposited {deposited:.10e}, particles' charge {total}, equal to round-off: {}",
            pc.num_particles()?,
            if ok { "yes" } else { "NO" }
        ));
        if !ok {
            return Err(
                format!("step {step}: deposited {deposited}, particles carry {total}").into(),
            );
        }
    }

    let dir =
        std::env::var("PARTICLES_PIC_PLOTFILE").unwrap_or_else(|_| "plt_particles_pic".into());
    plotfile::write_single_level_plotfile(
        &dir,
        &rho,
        &["rho"],
        &geom,
        dt * STEPS as f64,
        STEPS as i64,
    )?;
    pc.write_plotfile(&dir, "particles", &["charge", "vx", "vy", "vz"], &[])?;
    say(format!(
        "wrote {dir} (rho and {} particles in {dir}/particles)",
        pc.num_particles()?
    ));
    Ok(())
}
