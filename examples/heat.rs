//! The main example: the heat equation on a periodic `MultiFab`, checked three ways.
//!
//! `∂u/∂t = ∇²u` on a periodic 64³ grid (unit spacing) in boxes of 32³ with one ghost
//! cell, stepped with forward Euler: each step fills the ghost cells (`fill_boundary`),
//! computes the 7-point Laplacian tile by tile on all threads, and adds `dt · ∇²u`
//! (`saxpy`). The initial state is 1 plus a product of sines; both parts are
//! eigenvectors of the discrete Laplacian, so after `n` steps the exact discrete answer is
//! `1 + (1 + dt λ)^n · sines`, and the total heat stays `N³`. The example checks:
//!
//! 1. the `MultiFab` result against that closed form, everywhere, and the total heat;
//! 2. the same simulation written independently with `ndarray` (periodic indexing, no
//!    ghost cells), after exchanging data with the `MultiFab` through global-index
//!    regions;
//! 3. DLPack: every local box exported zero-copy, read and scaled through the tensors,
//!    and the `MultiFab` reductions see the change;
//! 4. a plotfile of the final state (`plt00040`, or `$HEAT_PLOTFILE`), read back.
//!
//! The same program runs on many processes: built with `--features mpi` and started by
//! `mpirun -n 4`, `amrex::init()` starts MPI, `DistributionMapping::new`
//! spreads the boxes over the ranks, and every operation (ghost exchange, reductions,
//! global-index reads) runs across them; rank 0 prints the same numbers as one process
//! does (the reductions are reproducible: bit for bit the same on any rank count).
use amrex::array4::Stencil;
use amrex::multifab::{
    BoxArray, DistributionMapping, Ghosts, IndexBox, IntVect, MultiFab, Periodicity, Tiling,
};
use amrex::plotfile::{self, Geometry};
use amrex::runtime::ReduceOp;
use core::f64::consts::PI;
use ndarray::{Array4, Ix4, Zip};

const N: i32 = 64;
const MAX_GRID: i32 = 32;
const STEPS: usize = 40;
const DT: f64 = 0.1;

/// The oscillating part of the initial state: an eigenvector of the discrete Laplacian.
fn mode(i: i32, j: i32, k: i32) -> f64 {
    let w = 2.0 * PI / f64::from(N);
    (w * f64::from(i)).sin() * (w * f64::from(j)).sin() * (w * f64::from(k)).sin()
}

/// Initial state: a constant (eigenvalue 0, so the total heat is conserved) plus the mode.
fn initial(i: i32, j: i32, k: i32) -> f64 {
    1.0 + mode(i, j, k)
}

fn main() -> Result<(), Box<dyn core::error::Error>> {
    // AMReX's `amrex::Initialize`: MPI with `--features mpi`, one process without.
    let parallel = amrex::init()?;
    let comm = parallel.communicator().clone();
    // Rank 0 reports.
    macro_rules! say {
        ($($t:tt)*) => { if comm.rank() == 0 { println!($($t)*); } };
    }
    let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(N - 1));
    let ba = BoxArray::from_domain(domain, MAX_GRID);
    let dm = DistributionMapping::new(&ba);
    let mut phi = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
    let mut lap = MultiFab::new(&ba, &dm, 1, IntVect::ZERO);
    let period = Periodicity::all(domain);
    say!(
        "heat equation on {N}^3 cells in {} boxes of at most {MAX_GRID}^3, {} rank(s) x {} rayon threads",
        ba.len(),
        comm.size(),
        rayon::current_num_threads()
    );

    // Initial state, valid cells only, written tile by tile in parallel.
    phi.par_for_each_tile(Tiling::Default, IntVect::ZERO, |mut t| {
        let bx = t.region();
        t.array_mut()
            .for_each_mut(bx, |i, j, k, _n, v| *v = initial(i, j, k));
    });

    let start = std::time::Instant::now();
    for _ in 0..STEPS {
        phi.fill_boundary(period)?;
        lap.par_for_each_tile(Tiling::Default, IntVect::ZERO, |mut t| {
            let p = phi.array(t.mfi());
            let bx = t.region();
            // Bounds are checked once per tile; the loop along i vectorises.
            t.array_mut()
                .stencil_mut_with(p, bx, |o, s: Stencil<'_, f64, 1>| {
                    *o = s.at(1, 0, 0)
                        + s.at(-1, 0, 0)
                        + s.at(0, 1, 0)
                        + s.at(0, -1, 0)
                        + s.at(0, 0, 1)
                        + s.at(0, 0, -1)
                        - 6.0 * s.center();
                });
        });
        phi.saxpy(DT, &lap, 0, 0..1, 0)?;
    }
    let elapsed = start.elapsed();
    say!(
        "{STEPS} steps in {:.1} ms ({:.1} ns per cell-step)",
        elapsed.as_secs_f64() * 1e3,
        elapsed.as_secs_f64() * 1e9 / (STEPS as f64 * f64::from(N).powi(3))
    );

    // 1. The closed form: the discrete eigenvalue of the product of sines.
    let lambda = 3.0 * (2.0 * (2.0 * PI / f64::from(N)).cos() - 2.0);
    let factor = (1.0 + DT * lambda).powi(STEPS as i32);
    let mut worst = 0.0_f64;
    for mfi in phi.mfiter(Tiling::None) {
        phi.array(&mfi).for_each(mfi.validbox(), |i, j, k, _n, v| {
            worst = worst.max((v - (1.0 + factor * mode(i, j, k))).abs());
        });
    }
    let worst = comm.all_reduce_f64(worst, ReduceOp::Max)?;
    say!(
        "1. MultiFab vs closed form (1 + dt*lambda)^n: amplitude {factor:.6}, max error {worst:.2e}"
    );
    assert!(worst < 1e-12, "closed form mismatch: {worst}");
    let total = phi.sum(0..1, 0)?;
    say!("   total heat {total:.9} (initially {})", N * N * N);
    assert!(
        (total - f64::from(N).powi(3)).abs() < 1e-8,
        "heat not conserved: {total}"
    );

    // 2. The same steps written with ndarray, starting from the MultiFab's initial data.
    let mut u: Array4<f64> =
        Array4::from_shape_fn((N as usize, N as usize, N as usize, 1), |(i, j, k, _)| {
            initial(i as i32, j as i32, k as i32)
        });
    let n = N as usize;
    for _ in 0..STEPS {
        let mut next = u.clone();
        Zip::indexed(&mut next).for_each(|(i, j, k, c), out| {
            let at =
                |di: usize, dj: usize, dk: usize| u[[(i + di) % n, (j + dj) % n, (k + dk) % n, c]];
            let l = at(1, 0, 0)
                + at(n - 1, 0, 0)
                + at(0, 1, 0)
                + at(0, n - 1, 0)
                + at(0, 0, 1)
                + at(0, 0, n - 1)
                - 6.0 * u[[i, j, k, c]];
            *out = u[[i, j, k, c]] + DT * l;
        });
        u = next;
    }
    let from_mf = phi.read_region_ndarray(0..1, domain)?;
    let diff = Zip::from(&from_mf)
        .and(&u)
        .fold(0.0_f64, |m, a, b| m.max((a - b).abs()));
    say!("2. MultiFab vs an independent ndarray solver: max difference {diff:.2e}");
    assert!(diff < 1e-13, "ndarray mismatch: {diff}");
    // And back: write the ndarray result into the MultiFab (ghost cells untouched).
    phi.write_region_ndarray(u.view(), Ghosts::Exclude, 0, domain)?;

    // 3. DLPack: one zero-copy tensor per box (valid region); read and double through it.
    let before_sum = phi.sum(0..1, 0)?;
    let before_max = phi.max(0..1, 0)?;
    let mut via_dlpack = 0.0;
    {
        let mut tensors = phi.to_dlpack_per_box(Ghosts::Exclude);
        for t in &mut tensors {
            let mut a = t.as_ndarray_mut::<f64, Ix4>()?;
            assert_eq!(
                a.shape(),
                &[1, MAX_GRID as usize, MAX_GRID as usize, MAX_GRID as usize]
            );
            via_dlpack += a.sum();
            a.mapv_inplace(|v| 2.0 * v);
        }
    }
    // Each rank exported its own boxes.
    let via_dlpack = comm.all_reduce_f64(via_dlpack, ReduceOp::Sum)?;
    let after_max = phi.max(0..1, 0)?;
    say!(
        "3. DLPack per-box tensors: sum {via_dlpack:.6e} (MultiFab::sum {before_sum:.6e}); \
         after doubling through the tensors, max {after_max:.6} = 2 x {before_max:.6}"
    );
    assert!((via_dlpack - before_sum).abs() <= 1e-9 * before_sum.abs().max(1.0));
    assert_eq!(after_max, 2.0 * before_max);

    // A plotfile of the final state (every rank writes its own boxes; yt and AMReX read
    // it), read back on the same ranks.
    let dir = std::env::var("HEAT_PLOTFILE").unwrap_or_else(|_| format!("plt{STEPS:05}"));
    let geom = Geometry::cartesian(domain, [0.0; 3], [1.0; 3])?;
    plotfile::write_single_level_plotfile(
        &dir,
        &phi,
        &["phi"],
        &geom,
        DT * STEPS as f64,
        STEPS as i64,
    )?;
    let back = plotfile::read_plotfile_on(&dir, &comm)?;
    let (written, read) = (phi.sum(0..1, 0)?, back.levels[0].sum(0..1, 0)?);
    say!("4. plotfile {dir}: written and read back, sum {read:.6e}");
    assert_eq!(read.to_bits(), written.to_bits(), "plotfile round trip");
    say!("all checks passed");
    Ok(())
}
