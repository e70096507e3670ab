//! The particle container on many ranks, under `mpirun`: `init_random` and several
//! rounds of moving particles and `redistribute` (periodic in x and y, open in z, with
//! particles leaving through the z faces) give, gathered on rank 0 and sorted by id,
//! exactly the set that one process computes in-process on the same grids; every
//! particle sits in a tile of a grid its rank owns; CIC deposition matches the
//! single-process field cell by cell; a NaN position on one rank is an error on every
//! rank and loses nothing; ranks that call different collectives, or the same one on
//! containers that differ (geometry, tile size), all get an error and none hangs; a
//! particle outside its fab on one rank is its error and `FailedOnOtherRank` on the
//! others.
//!
//! Run by `scripts/test-mpi.sh` under `mpirun -n 1`, `-n 2` and `-n 4`
//! (`cargo test -p amrex-particles --features mpi --test mpi_particles` runs it on one
//! rank). A plain `main` (`harness = false`) running the checks in the same order on
//! every rank, as `crates/amrex-multifab/tests/mpi_comm.rs` explains.
#![warn(clippy::cast_possible_truncation)]

use amrex_geometry::{CoordSys, Geometry, RealBox};
use amrex_multifab::{
    BoxArray, DistributionMapping, IndexBox, IntVect, MultiFab, Tiling, iMultiFab,
};
use amrex_particles::{AosTile, ErrorKind, ParticleContainer, ParticleTile, idcpu};
use amrex_runtime::{CommError, Communicator};

fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Uneven boxes tiling a 24 x 20 x 16 domain.
fn layout() -> (Geometry, BoxArray) {
    let dom = IndexBox::new(IntVect::ZERO, IntVect::new(23, 19, 15));
    let rb = RealBox::new([0.0, -1.0, 0.0], [1.2, 0.0, 0.8]).unwrap();
    let g = Geometry::new(dom, rb, CoordSys::Cartesian, [true, true, false]).unwrap();
    let mut boxes = Vec::new();
    for (z0, z1) in [(0, 4), (5, 11), (12, 15)] {
        for (y0, y1) in [(0, 6), (7, 9), (10, 19)] {
            for (x0, x1) in [(0, 7), (8, 10), (11, 18), (19, 23)] {
                boxes.push(IndexBox::new(
                    IntVect::new(x0, y0, z0),
                    IntVect::new(x1, y1, z1),
                ));
            }
        }
    }
    (g, BoxArray::try_new(boxes).unwrap())
}

type Pc = ParticleContainer<AosTile<1, 1>>;
type Check = (&'static str, fn(&Communicator));

/// Moves every particle by a displacement drawn from its id and the step.
fn push(pc: &mut Pc, step: u64) {
    pc.par_for_each_tile(0, |t| {
        for i in 0..t.data.len() {
            let id = idcpu::id(t.data.idcpu(i)) as u64;
            let mut p = t.data.pos(i);
            for (d, x) in p.iter_mut().enumerate() {
                let u = (mix(id * 7 + step * 3 + d as u64) >> 11) as f64 / (1u64 << 53) as f64;
                *x += (u - 0.5) * 0.4;
            }
            t.data.set_pos(i, p);
            t.data.set_real(i, 0, t.data.real(i, 0) + 1.0);
        }
    });
}

/// (id, x, y, z bits, real, int, grid) of every local particle, as bytes.
fn encode(pc: &Pc) -> Vec<u8> {
    let mut out = Vec::new();
    let g = *pc.level(0).unwrap().geom();
    let ba = pc.level(0).unwrap().box_array().clone();
    let dm = pc.level(0).unwrap().distribution_map().clone();
    for t in pc.tiles(0) {
        assert_eq!(
            dm.rank_of(t.grid),
            pc.communicator().rank(),
            "a tile of another rank"
        );
        for i in 0..t.data.len() {
            let p = t.data.pos(i);
            let c = g.cell_index(p).unwrap();
            assert!(
                ba.get(t.grid).contains(c),
                "particle {p:?} outside grid {}",
                t.grid
            );
            for v in [
                t.data.idcpu(i),
                p[0].to_bits(),
                p[1].to_bits(),
                p[2].to_bits(),
                t.data.real(i, 0).to_bits(),
                t.data.int(i, 0) as u64,
                t.grid as u64,
            ] {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
    }
    out
}

fn records(bytes: &[u8]) -> Vec<[u64; 7]> {
    let mut v: Vec<[u64; 7]> = bytes
        .chunks_exact(56)
        .map(|c| {
            core::array::from_fn(|k| u64::from_le_bytes(c[8 * k..8 * k + 8].try_into().unwrap()))
        })
        .collect();
    v.sort_unstable();
    v
}

fn check_same_as_one_process(comm: &Communicator) {
    let (g, ba) = layout();
    let dm = DistributionMapping::new(&ba);
    let one = DistributionMapping::single(&ba);
    let mut pc = Pc::new(g, &ba, &dm, AosTile::new(0, 0));
    let mut serial = Pc::new(g, &ba, &one, AosTile::new(0, 0));
    let n = 20_000;
    pc.init_random(n, 99, &[0.0], &[4]).unwrap();
    serial.init_random(n, 99, &[0.0], &[4]).unwrap();
    assert_eq!(pc.num_particles().unwrap(), n);
    let mut total_removed = 0;
    for step in 0..4 {
        push(&mut pc, step);
        push(&mut serial, step);
        let r = pc.redistribute().unwrap();
        let rs = serial.redistribute().unwrap();
        assert_eq!(
            r.removed_outside_global, rs.removed_outside_global,
            "step {step}"
        );
        total_removed += rs.removed_outside_global;
        if comm.size() > 1 && step == 0 {
            assert!(
                r.sent > 0 || r.received > 0,
                "rank {} exchanged nothing",
                comm.rank()
            );
        }
        assert_eq!(pc.num_particles().unwrap(), serial.num_particles().unwrap());
        let all = comm.gather_bytes(0, &encode(&pc)).unwrap();
        if let Some(all) = all {
            let got = records(&all.concat());
            let want = records(&encode(&serial));
            assert_eq!(got.len(), want.len(), "step {step}");
            assert!(got == want, "step {step}: the particle sets differ");
        }
    }
    assert!(
        total_removed > 0,
        "some particles should have left through z"
    );
    assert_eq!(pc.num_particles().unwrap(), n - total_removed);

    // CIC deposition: the same field as one process, cell by cell (to round-off: the
    // particles of a cell are summed in another order).
    let mut rho = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
    let mut rho1 = MultiFab::new(&ba, &one, 1, IntVect::splat(1));
    rho.set_val(0.0, .., 1).unwrap();
    rho1.set_val(0.0, .., 1).unwrap();
    pc.deposit_cic(0, &mut rho, 0, |t, i| t.real(i, 0)).unwrap();
    serial
        .deposit_cic(0, &mut rho1, 0, |t, i| t.real(i, 0))
        .unwrap();
    for mfi in rho.mfiter(Tiling::None) {
        for c in mfi.validbox().iter() {
            let (a, s) = (rho.value_at(c, 0).unwrap(), rho1.value_at(c, 0).unwrap());
            assert!(
                (a - s).abs() <= 1e-12 * s.abs().max(1.0),
                "cell {c}: {a} vs {s}"
            );
        }
    }
    let (sum, sum1) = (rho.sum(0..1, 0).unwrap(), rho1.sum(0..1, 0).unwrap());
    assert!((sum - sum1).abs() < 1e-9 * sum1.abs(), "{sum} vs {sum1}");
}

fn check_nan_on_one_rank_is_an_error_everywhere(comm: &Communicator) {
    let (g, ba) = layout();
    let dm = DistributionMapping::new(&ba);
    let mut pc = Pc::new(g, &ba, &dm, AosTile::new(0, 0));
    pc.init_random(1000, 5, &[0.0], &[0]).unwrap();
    let last = comm.size() - 1;
    if comm.rank() == last {
        let grid = (0..ba.len())
            .find(|&b| dm.rank_of(b) == last && pc.tile(0, b, 0).is_ok_and(|t| !t.is_empty()));
        let t = pc.tile_mut(0, grid.unwrap(), 0).unwrap();
        t.set_pos(0, [0.1, f64::INFINITY, 0.1]);
    }
    let e = pc.redistribute().unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::NonFinitePosition { .. }),
        "{e}"
    );
    assert_eq!(pc.num_particles().unwrap(), 1000, "nothing lost");
}

fn check_plotfile_written_on_n_ranks_reads_back_anywhere(comm: &Communicator) {
    let (g, ba) = layout();
    let dm = DistributionMapping::new(&ba);
    let mut pc = Pc::new(g, &ba, &dm, AosTile::new(0, 0));
    pc.init_random(3000, 21, &[0.0], &[0]).unwrap();
    push(&mut pc, 9);
    pc.redistribute().unwrap();
    let dir = std::env::temp_dir().join(format!("amrex_rs_mpi_particles_{}", comm.size()));
    if comm.rank() == 0 {
        let _ = std::fs::remove_dir_all(&dir);
    }
    comm.barrier().unwrap();
    pc.write_plotfile(&dir, "particles", &["q"], &["s"])
        .unwrap();
    let all = comm.gather_bytes(0, &encode(&pc)).unwrap();
    // Read back on all ranks, onto other grids.
    let ba2 = BoxArray::from_domain(g.domain(), 6);
    let dm2 = DistributionMapping::new(&ba2);
    let mut back = Pc::new(g, &ba2, &dm2, AosTile::new(0, 0));
    assert_eq!(
        back.read_plotfile(&dir, "particles").unwrap(),
        pc.num_particles().unwrap()
    );
    let strip = |v: Vec<[u64; 7]>| v.into_iter().map(|r| r[..6].to_vec()).collect::<Vec<_>>();
    let got = comm.gather_bytes(0, &encode(&back)).unwrap();
    if let (Some(all), Some(got)) = (all, got) {
        let want = strip(records(&all.concat()));
        assert_eq!(strip(records(&got.concat())), want);
        // And on one process.
        let one = DistributionMapping::single(&ba);
        let mut serial = Pc::new(g, &ba, &one, AosTile::new(0, 0));
        serial.read_plotfile(&dir, "particles").unwrap();
        assert_eq!(strip(records(&encode(&serial))), want);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// Ranks that call different collectives of a container (a count against a
/// redistribute, `init_random` with different seeds, a particle plotfile written to two
/// paths, a count of two levels, deposits into two components, a deposit against an
/// `increment`), or one on containers that differ (periodicity, tile size), all get an
/// error and go on: none hangs. A particle outside its fab on one rank is that rank's
/// `OutsideFab` and every other rank's `FailedOnOtherRank`.
fn check_mismatched_calls_are_errors_everywhere(comm: &Communicator) {
    if comm.size() == 1 {
        return;
    }
    let (g, ba) = layout();
    let dm = DistributionMapping::new(&ba);
    let mut pc = Pc::new(g, &ba, &dm, AosTile::new(0, 0));
    pc.init_random(500, 3, &[0.0], &[0]).unwrap();
    let odd = comm.rank() % 2 == 1;
    let comm_err = |e: &amrex_particles::ParticleContainerError| {
        matches!(e.kind(), ErrorKind::Comm(CommError::RanksDisagree { .. }))
    };
    let e = if odd {
        pc.num_particles().map(|_| ()).unwrap_err()
    } else {
        pc.redistribute().map(|_| ()).unwrap_err()
    };
    assert!(comm_err(&e), "{e}");
    let e = pc
        .init_random(10, comm.rank() as u64, &[0.0], &[0])
        .unwrap_err();
    assert!(comm_err(&e), "{e}");
    // One directory for all ranks (on this one machine), a plotfile name per rank: the
    // root, the only rank that creates directories, would make `dir/p0` (and `dir`) if it
    // went ahead.
    let dir = std::env::temp_dir().join(format!("amrex_rs_mpi_mismatch_{}", comm.size()));
    if comm.rank() == 0 {
        let _ = std::fs::remove_dir_all(&dir);
    }
    comm.barrier().unwrap();
    let name = format!("p{}", comm.rank());
    let e = pc.write_plotfile(&dir, &name, &["q"], &["s"]).unwrap_err();
    assert!(comm_err(&e), "{e}");
    comm.barrier().unwrap();
    assert!(!dir.exists(), "{} was created", dir.display());
    let e = pc.number_of_particles_at_level(0, odd, false).unwrap_err();
    assert!(comm_err(&e), "{e}");

    // Mesh operations: one component against another, a deposit against an increment.
    let mut rho = MultiFab::new(&ba, &dm, 2, IntVect::splat(1));
    rho.set_val(0.0, .., 1).unwrap();
    let mut cnt = iMultiFab::new(&ba, &dm, 1, IntVect::ZERO);
    cnt.set_val(0, .., 0).unwrap();
    let e = pc
        .deposit_cic(0, &mut rho, usize::from(odd), |_, _| 1.0)
        .unwrap_err();
    assert!(comm_err(&e), "{e}");
    let e = if odd {
        pc.increment(0, &mut cnt, 0).unwrap_err()
    } else {
        pc.deposit_ngp(0, &mut rho, 0, |_, _| 1.0).unwrap_err()
    };
    assert!(comm_err(&e), "{e}");
    assert_eq!(rho.sum(0..2, 1).unwrap(), 0.0, "nothing deposited");
    assert_eq!(cnt.sum(0..1, 0).unwrap(), 0, "nothing counted");

    // A particle moved out of its grid (without redistribute) on the last rank only:
    // that rank's deposit and increment fail, and every other rank stops with it before
    // `sum_boundary` instead of waiting there.
    let last = comm.size() - 1;
    if comm.rank() == last {
        let grid = (0..ba.len())
            .find(|&b| dm.rank_of(b) == last && pc.tile(0, b, 0).is_ok_and(|t| !t.is_empty()))
            .expect("the last rank has particles");
        let t = pc.tile_mut(0, grid, 0).unwrap();
        let mut p = t.pos(0);
        // 12 cells: farther than any grid is wide, ghost cells included.
        p[0] += 0.6;
        t.set_pos(0, p);
    }
    for e in [
        pc.deposit_cic(0, &mut rho, 0, |_, _| 1.0).unwrap_err(),
        pc.increment(0, &mut cnt, 0).unwrap_err(),
    ] {
        if comm.rank() == last {
            assert!(matches!(e.kind(), ErrorKind::OutsideFab { .. }), "{e}");
        } else {
            assert!(
                matches!(e.kind(), ErrorKind::FailedOnOtherRank { rank, .. } if *rank == last),
                "{e}"
            );
            assert!(
                e.to_string().ends_with(&format!(": rank {last} failed")),
                "{e}"
            );
        }
    }
    pc.redistribute().unwrap();
    pc.deposit_cic(0, &mut rho, 0, |_, _| 1.0).unwrap();

    // Containers that differ: tiles on one rank and not on the others, or tiles of
    // another size. Every rank's next collective refuses (a redistribute would send
    // particles to tiles the others do not have), and nothing is lost.
    for (mine, others) in [
        (Some(IntVect::splat(4)), None),
        (Some(IntVect::splat(4)), Some(IntVect::new(4, 4, 8))),
    ] {
        pc.set_tile_size(if comm.rank() == last { mine } else { others });
        let e = pc.redistribute().unwrap_err();
        assert!(comm_err(&e), "{e}");
        let e = pc.num_particles().unwrap_err();
        assert!(comm_err(&e), "{e}");
        pc.set_tile_size(None);
        pc.redistribute().unwrap();
    }
    // Containers on geometries that differ (periodic in z on the last rank only).
    let gz = Geometry::new(
        g.domain(),
        g.real_box(),
        CoordSys::Cartesian,
        [true, true, comm.rank() == last],
    )
    .unwrap();
    let pz = Pc::new(gz, &ba, &dm, AosTile::new(0, 0));
    let e = pz.num_particles().unwrap_err();
    assert!(comm_err(&e), "{e}");

    // Still in step, and nothing lost.
    assert_eq!(pc.num_particles().unwrap(), 500);
}

fn main() {
    let guard = amrex_runtime::init().expect("MPI init");
    let comm = guard.communicator().clone();
    let checks: [Check; 4] = [
        (
            "redistribute and deposit match one process",
            check_same_as_one_process,
        ),
        (
            "a NaN on one rank is an error on every rank",
            check_nan_on_one_rank_is_an_error_everywhere,
        ),
        (
            "a plotfile written on n ranks reads back on n and on 1",
            check_plotfile_written_on_n_ranks_reads_back_anywhere,
        ),
        (
            "mismatched collective calls are errors on every rank",
            check_mismatched_calls_are_errors_everywhere,
        ),
    ];
    for (name, f) in checks {
        f(&comm);
        comm.barrier().unwrap();
        if comm.rank() == 0 {
            println!("mpi_particles ({} ranks): {name}: ok", comm.size());
        }
    }
}
