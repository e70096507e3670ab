//! Plotfiles on many ranks, under `mpirun`: every rank writes its own FABs, rank 0 the
//! headers; reading back distributed (default map and a map of our own), on rank 0 alone
//! (`read_plotfile`), and against a single-process write of the same values; NFiles
//! groups; checkpoints; and errors on one rank (a directory that cannot be made, a
//! truncated data file, a missing checkpoint, arguments that differ between ranks) that
//! must come back as errors on every rank, not hangs.
//!
//! Run by `scripts/test-mpi.sh` under `mpirun -n 1`, `-n 2` and `-n 4`
//! (`cargo test -p amrex-plotfile --features mpi --test mpi_plotfile` runs it on one
//! rank). A plain `main` (`harness = false`) running the checks in the same order on
//! every rank, as `crates/amrex-multifab/tests/mpi_comm.rs` explains; a failed check
//! panics, and the panic hook `init()` installs aborts the job.

use std::path::{Path, PathBuf};

use amrex_multifab::{
    BoxArray, DistributionMapping, IndexBox, IntVect, MultiFab, Strategy, Tiling,
};
use amrex_plotfile::{self as plotfile, Geometry, PlotfileError};
use amrex_runtime::Communicator;

/// splitmix64: deterministic, the same on every rank.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Cut points of `0..=hi` into pieces of 2..=7 cells (random-ish, the same on every rank).
fn cuts(hi: i32, seed: u64) -> Vec<(i32, i32)> {
    let mut out = Vec::new();
    let (mut lo, mut s) = (0, seed);
    while lo <= hi {
        s = mix(s);
        let len = 2 + (s % 6) as i32;
        let end = (lo + len - 1).min(hi);
        out.push((lo, end));
        lo = end + 1;
    }
    out
}

/// A BoxArray of uneven boxes tiling `domain` (low corner 0).
fn random_ba(domain: IndexBox, seed: u64) -> BoxArray {
    let hi = domain.hi();
    let mut boxes = Vec::new();
    for (z0, z1) in cuts(hi[2], seed ^ 3) {
        for (y0, y1) in cuts(hi[1], seed ^ 2) {
            for (x0, x1) in cuts(hi[0], seed ^ 1) {
                boxes.push(IndexBox::new(
                    IntVect::new(x0, y0, z0),
                    IntVect::new(x1, y1, z1),
                ));
            }
        }
    }
    BoxArray::try_new(boxes).expect("a valid BoxArray")
}

/// The value of global cell `(i, j, k)`, component `n`, on level `lev`.
fn value(lev: usize, i: i32, j: i32, k: i32, n: usize) -> f64 {
    f64::from(i * 7 + j * 131 + k * 1031) * 0.25 + n as f64 * 1e5 + lev as f64 * 1e7
}

/// A MultiFab on `dm` whose valid cells hold `value(lev, ..)`, ghosts -1 (never written).
fn filled(ba: &BoxArray, dm: &DistributionMapping, lev: usize) -> MultiFab {
    let mut mf = MultiFab::new(ba, dm, 2, IntVect::splat(1));
    mf.fill(-1.0).unwrap();
    for mfi in mf.mfiter(Tiling::None) {
        let vbx = mfi.validbox();
        mf.array_mut(&mfi)
            .for_each_mut(vbx, |i, j, k, n, v| *v = value(lev, i, j, k, n));
    }
    mf
}

/// Every valid cell of this rank's boxes holds `value(lev, ..)`; returns the cells seen.
fn check_values(mf: &MultiFab, lev: usize) -> u64 {
    let mut cells = 0u64;
    for mfi in mf.mfiter(Tiling::None) {
        mf.array(&mfi).for_each(mfi.validbox(), |i, j, k, n, &v| {
            assert_eq!(
                v,
                value(lev, i, j, k, n),
                "level {lev} ({i},{j},{k}) comp {n}"
            );
            cells += 1;
        });
    }
    cells
}

fn domain() -> IndexBox {
    IndexBox::new(IntVect::ZERO, IntVect::new(22, 16, 12))
}

fn geom() -> Geometry {
    Geometry::cartesian(domain(), [0.0; 3], [1.0, 0.75, 0.5]).unwrap()
}

/// Scratch directories: rank 0 names one (its pid keeps concurrent runs apart) and
/// broadcasts it, so every rank writes to the same place.
struct Scratch(PathBuf);

impl Scratch {
    fn new(c: &Communicator) -> Self {
        let mut name = Vec::new();
        if c.rank() == 0 {
            let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
                "mpi_plotfile_{}_{}",
                std::process::id(),
                c.size()
            ));
            let _ = std::fs::remove_dir_all(&base);
            std::fs::create_dir_all(&base).expect("scratch directory");
            name = base.to_string_lossy().into_owned().into_bytes();
        }
        c.broadcast_bytes(0, &mut name).expect("broadcast");
        Self(PathBuf::from(String::from_utf8(name).expect("UTF-8")))
    }

    fn dir(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

type Check = fn(&Communicator, &Scratch);

fn single_level_round_trip(c: &Communicator, s: &Scratch) {
    let ba = random_ba(domain(), 12);
    assert!(ba.len() >= 2 * c.size(), "{} boxes", ba.len());
    let dm = DistributionMapping::new(&ba);
    assert_eq!(dm.communicator(), c);
    let mf = filled(&ba, &dm, 0);
    let dir = s.dir("plt_one");
    plotfile::write_single_level_plotfile(&dir, &mf, &["u", "v"], &geom(), 1.5, 7)
        .expect("write on every rank");
    c.barrier().unwrap();

    // Who wrote what: one data file per rank, each FAB named by its owner's file.
    let plt = plotfile::read_plotfile_on(&dir, c).expect("distributed read");
    let h = &plt.cell_headers[0];
    for (g, fod) in h.fabs.iter().enumerate() {
        assert_eq!(fod.file, format!("Cell_D_{:05}", dm.rank_of(g)), "box {g}");
    }
    for r in 0..c.size() {
        assert!(
            dir.join(format!("Level_0/Cell_D_{r:05}")).is_file(),
            "rank {r}'s file"
        );
    }
    // Distributed: the default map is the writer's, so each rank reads its own file.
    let back = &plt.levels[0];
    assert_eq!(back.box_array(), &ba);
    assert_eq!(back.distribution_map().pmap(), dm.pmap());
    assert_eq!(back.communicator(), c);
    let cells = check_values(back, 0);
    let total = c
        .all_reduce_u64(cells, amrex_runtime::ReduceOp::Sum)
        .unwrap();
    assert_eq!(total, 2 * ba.num_pts());
    // Minima and maxima from the owners.
    for (g, b) in ba.boxes().iter().enumerate() {
        for n in 0..2 {
            let (lo, hi) = (b.lo(), b.hi());
            assert_eq!(h.min[g][n], value(0, lo[0], lo[1], lo[2], n), "box {g}");
            assert_eq!(h.max[g][n], value(0, hi[0], hi[1], hi[2], n), "box {g}");
        }
    }
    assert_eq!((plt.header.time, plt.header.level_steps[0]), (1.5, 7));

    // Rank 0 alone, as a serial tool (yt, amrex's fcompare) reads it.
    if c.rank() == 0 {
        let serial = plotfile::read_plotfile(&dir).expect("single-process read");
        assert_eq!(serial.levels[0].local_size(), ba.len());
        assert_eq!(check_values(&serial.levels[0], 0), 2 * ba.num_pts());
        // The same values written by one process: same Header, same Cell_H but for the
        // data file names and offsets.
        let one = filled(&ba, &DistributionMapping::single(&ba), 0);
        let sdir = s.dir("plt_one_serial");
        plotfile::write_single_level_plotfile(&sdir, &one, &["u", "v"], &geom(), 1.5, 7)
            .expect("serial write");
        let read = |d: &Path, f: &str| std::fs::read_to_string(d.join(f)).expect(f);
        assert_eq!(read(&dir, "Header"), read(&sdir, "Header"));
        let strip = |t: String| -> Vec<String> {
            t.lines()
                .filter(|l| !l.starts_with("FabOnDisk:"))
                .map(String::from)
                .collect()
        };
        assert_eq!(
            strip(read(&dir, "Level_0/Cell_H")),
            strip(read(&sdir, "Level_0/Cell_H"))
        );
        if c.size() == 1 {
            for f in ["Level_0/Cell_H", "Level_0/Cell_D_00000"] {
                assert_eq!(
                    std::fs::read(dir.join(f)).unwrap(),
                    std::fs::read(sdir.join(f)).unwrap(),
                    "{f}"
                );
            }
        }
    }
}

fn read_into_another_map(c: &Communicator, s: &Scratch) {
    let dir = s.dir("plt_one");
    let ba = random_ba(domain(), 12);
    // Round robin: most boxes are read by a rank that did not write them.
    let dm = DistributionMapping::with_strategy_on(&ba, c, Strategy::RoundRobin);
    let header = plotfile::read_plotfile_header_on(&dir, c).expect("header");
    let (h, mf) = plotfile::read_level_with(&dir, &header, 0, &dm).expect("read_level_with");
    assert_eq!(h.fabs.len(), ba.len());
    assert_eq!(mf.distribution_map().pmap(), dm.pmap());
    assert_eq!(mf.local_size(), dm.local_indices(c.rank()).len());
    let cells = check_values(&mf, 0);
    assert_eq!(
        c.all_reduce_u64(cells, amrex_runtime::ReduceOp::Sum)
            .unwrap(),
        2 * ba.num_pts()
    );
    // VisMF level: ghost cells included, read on the default map.
    let ba2 = random_ba(domain(), 5);
    let src = filled(&ba2, &DistributionMapping::new(&ba2), 0);
    let vdir = s.dir("vismf");
    if c.rank() == 0 {
        std::fs::create_dir_all(&vdir).unwrap();
    }
    c.barrier().unwrap();
    let written = plotfile::write_multifab(&src, vdir.join("mf")).expect("write_multifab");
    assert_eq!(written.ngrow, IntVect::splat(1));
    let (h2, back) = plotfile::read_multifab_on(vdir.join("mf"), c).expect("read_multifab_on");
    assert_eq!(h2, written, "every rank returns the header rank 0 wrote");
    for mfi in back.mfiter(Tiling::None) {
        let l = mfi.local_index();
        let g = back.global_index(l);
        let a = back.array(&mfi);
        let b = src.array_at(src.local_index(g).expect("same map, same owner"));
        a.for_each(mfi.fabbox(), |i, j, k, n, &v| {
            assert_eq!(
                v,
                b[(i, j, k, n)],
                "box {g} ({i},{j},{k}) comp {n} with ghosts"
            );
        });
    }
    // Wrong length: refused on every rank.
    let short = DistributionMapping::on(&random_ba(domain(), 99), c);
    if short.len() != ba.len() {
        let e = plotfile::read_level_with(&dir, &header, 0, &short).unwrap_err();
        assert!(matches!(e, PlotfileError::Argument(_)), "{e}");
    }
}

fn multi_level_and_nfiles(c: &Communicator, s: &Scratch) {
    let ba0 = random_ba(domain(), 21);
    let fine_domain = IndexBox::new(IntVect::new(4, 4, 2), IntVect::new(15, 11, 9)).refine(2);
    let ba1 = {
        let shifted = random_ba(
            IndexBox::new(IntVect::ZERO, fine_domain.hi() - fine_domain.lo()),
            22,
        );
        BoxArray::try_new(
            shifted
                .boxes()
                .iter()
                .map(|b| b.shift_iv(fine_domain.lo()))
                .collect(),
        )
        .unwrap()
    };
    let l0 = filled(&ba0, &DistributionMapping::new(&ba0), 0);
    let l1 = filled(&ba1, &DistributionMapping::new(&ba1), 1);
    let g0 = geom();
    let geoms = [g0, g0.refine(IntVect::splat(2)).unwrap()];
    // Two files for however many ranks: ranks share them, appending in turn.
    plotfile::set_nfiles(2);
    let dir = s.dir("plt_two");
    let r = plotfile::write_multi_level_plotfile(
        &dir,
        &[&l0, &l1],
        &["u", "v"],
        &geoms,
        0.25,
        &[3, 6],
        &[IntVect::splat(2)],
    );
    plotfile::set_nfiles(plotfile::DEFAULT_NFILES);
    r.expect("multi-level write");
    let plt = plotfile::read_plotfile_on(&dir, c).expect("read");
    let files = c.size().min(2);
    for (lev, h) in plt.cell_headers.iter().enumerate() {
        let per = c.size().div_ceil(files);
        for (g, fod) in h.fabs.iter().enumerate() {
            let owner = plt.levels[lev].distribution_map().rank_of(g);
            assert_eq!(
                fod.file,
                format!("Cell_D_{:05}", owner / per),
                "level {lev} box {g}"
            );
        }
        assert!(!dir.join(format!("Level_{lev}/Cell_D_{files:05}")).exists());
    }
    for (lev, mf) in plt.levels.iter().enumerate() {
        let cells = check_values(mf, lev);
        assert_eq!(
            c.all_reduce_u64(cells, amrex_runtime::ReduceOp::Sum)
                .unwrap(),
            2 * mf.box_array().num_pts()
        );
    }
    if c.rank() == 0 {
        let serial = plotfile::read_plotfile(&dir).expect("serial read");
        for (lev, mf) in serial.levels.iter().enumerate() {
            assert_eq!(check_values(mf, lev), 2 * mf.box_array().num_pts());
        }
    }
}

/// `e` is this rank's own error if it is `culprit`, else `OtherRank { rank: culprit }`.
fn failed_on(
    c: &Communicator,
    e: &PlotfileError,
    culprit: usize,
    own: impl Fn(&PlotfileError) -> bool,
) {
    if c.rank() == culprit {
        assert!(own(e), "rank {}: {e}", c.rank());
    } else {
        assert!(
            matches!(e, PlotfileError::OtherRank { rank, .. } if *rank == culprit),
            "rank {}: {e}",
            c.rank()
        );
    }
}

/// A checkpoint of two levels and two fields written on every rank, read back onto
/// another map and on rank 0 alone; a corrupt `Header` and a missing checkpoint are
/// errors on every rank.
fn checkpoints(c: &Communicator, s: &Scratch) {
    let ba0 = random_ba(domain(), 5);
    let ba1 = BoxArray::new(vec![IndexBox::new(IntVect::splat(8), IntVect::splat(23))])
        .max_size(IntVect::splat(8));
    let dms = [
        DistributionMapping::new(&ba0),
        DistributionMapping::new(&ba1),
    ];
    let (l0, l1) = (filled(&ba0, &dms[0], 0), filled(&ba1, &dms[1], 1));
    let header = plotfile::CheckpointHeader::new("mpi", vec![ba0.clone(), ba1.clone()])
        .with_ints([3, 6])
        .with_reals([0.5, 0.25]);
    let dir = s.dir("chk");
    plotfile::write_checkpoint(&dir, &header, &[("u", &[&l0, &l1])]).expect("write");
    let h = plotfile::read_checkpoint_header_on(&dir, c).expect("header");
    assert_eq!(h, header);
    for (lev, ba) in h.grids.iter().enumerate() {
        // Another map than the writer's: the FABs come from other ranks' files.
        let dm = DistributionMapping::with_strategy_on(ba, c, Strategy::RoundRobin);
        let mf = plotfile::read_checkpoint_multifab(&dir, lev, "u", ba, &dm).expect("level");
        let cells = check_values(&mf, lev);
        let total = c
            .all_reduce_u64(cells, amrex_runtime::ReduceOp::Sum)
            .unwrap();
        assert_eq!(total, 2 * ba.num_pts());
    }
    if c.rank() == 0 {
        let h0 = plotfile::read_checkpoint_header(&dir).unwrap();
        let mf = plotfile::read_checkpoint_multifab(
            &dir,
            1,
            "u",
            &h0.grids[1],
            &DistributionMapping::single(&h0.grids[1]),
        )
        .unwrap();
        assert_eq!(check_values(&mf, 1), 2 * ba1.num_pts());
    }
    c.barrier().unwrap();
    // Every rank parses the same broadcast text: the same error everywhere.
    if c.rank() == 0 {
        let text = std::fs::read_to_string(dir.join("Header")).unwrap();
        std::fs::write(dir.join("Header"), text.replacen("(", "[", 1)).unwrap();
    }
    c.barrier().unwrap();
    let e = plotfile::read_checkpoint_header_on(&dir, c).unwrap_err();
    assert!(
        matches!(e, PlotfileError::Parse { .. }),
        "rank {}: {e}",
        c.rank()
    );
    let e = plotfile::read_checkpoint_header_on(s.dir("no_chk"), c).unwrap_err();
    failed_on(c, &e, 0, |e| matches!(e, PlotfileError::Io { .. }));
}

fn errors_reach_every_rank(c: &Communicator, s: &Scratch) {
    let ba = random_ba(domain(), 12);
    let mf = filled(&ba, &DistributionMapping::new(&ba), 0);
    let last = c.size() - 1;
    let is_io = |e: &PlotfileError| matches!(e, PlotfileError::Io { .. });

    // Rank 0 cannot create the directory (a file is in the way).
    let blocker = s.dir("blocker");
    if c.rank() == 0 {
        std::fs::write(&blocker, b"not a directory").unwrap();
    }
    c.barrier().unwrap();
    let e = plotfile::write_single_level_plotfile(
        blocker.join("plt"),
        &mf,
        &["u", "v"],
        &geom(),
        0.0,
        0,
    )
    .unwrap_err();
    failed_on(c, &e, 0, is_io);

    assert!(
        !blocker.join("plt").exists(),
        "nothing under the name after a failed write"
    );
    // A half-written plotfile of a killed run (`<dir>.partial`) is replaced, and the
    // plotfile appears under its name only when complete; an existing one is moved aside.
    let dir = s.dir("plt_partial");
    if c.rank() == 0 {
        std::fs::create_dir_all(s.dir("plt_partial.partial/Level_0")).unwrap();
        std::fs::write(s.dir("plt_partial.partial/Header"), "half").unwrap();
    }
    c.barrier().unwrap();
    for _ in 0..2 {
        plotfile::write_single_level_plotfile(&dir, &mf, &["u", "v"], &geom(), 0.0, 0).unwrap();
    }
    c.barrier().unwrap();
    assert!(!s.dir("plt_partial.partial").exists());
    let aside = std::fs::read_dir(&s.0)
        .unwrap()
        .filter(|e| {
            let n = e.as_ref().unwrap().file_name();
            n.to_string_lossy().starts_with("plt_partial.old.")
        })
        .count();
    assert_eq!(aside, 1);
    let back = plotfile::read_plotfile_on(&dir, c).unwrap();
    let cells = check_values(&back.levels[0], 0);
    let total = c
        .all_reduce_u64(cells, amrex_runtime::ReduceOp::Sum)
        .unwrap();
    assert_eq!(total, 2 * ba.num_pts());

    // Reading: a missing plotfile (rank 0 reads the Header) ...
    let e = plotfile::read_plotfile_on(s.dir("nowhere"), c).unwrap_err();
    failed_on(c, &e, 0, is_io);
    // ... and a data file that only its owner reads, truncated.
    let dir = s.dir("plt_truncated");
    plotfile::write_single_level_plotfile(&dir, &mf, &["u", "v"], &geom(), 0.0, 0).unwrap();
    if c.rank() == 0 {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.join(format!("Level_0/Cell_D_{last:05}")))
            .unwrap();
        f.set_len(10).unwrap();
    }
    c.barrier().unwrap();
    let e = plotfile::read_plotfile_on(&dir, c).unwrap_err();
    failed_on(
        c,
        &e,
        last,
        |e| matches!(e, PlotfileError::Invalid { what, .. } if what.contains("bytes")),
    );

    // Arguments that differ between ranks: refused on every rank, nothing written.
    let dir = s.dir("plt_mismatch");
    let r =
        plotfile::write_single_level_plotfile(&dir, &mf, &["u", "v"], &geom(), c.rank() as f64, 0);
    if c.size() == 1 {
        r.expect("one rank agrees with itself");
    } else {
        let e = r.unwrap_err();
        assert!(matches!(e, PlotfileError::Comm(_)), "{e}");
        assert!(!dir.exists());
    }
    // Refusals of the hierarchy stay the same everywhere.
    let e = plotfile::write_single_level_plotfile(s.dir("p"), &mf, &["u"], &geom(), 0.0, 0)
        .unwrap_err();
    assert!(e.to_string().contains("2 components but 1 names"), "{e}");
}

fn main() {
    let parallel = amrex_runtime::init().expect("MPI initialises");
    let c = parallel.communicator().clone();
    let s = Scratch::new(&c);
    let checks: &[(&str, Check)] = &[
        ("single_level_round_trip", single_level_round_trip),
        ("read_into_another_map", read_into_another_map),
        ("multi_level_and_nfiles", multi_level_and_nfiles),
        ("errors_reach_every_rank", errors_reach_every_rank),
        ("checkpoints", checkpoints),
    ];
    for (name, check) in checks {
        check(&c, &s);
        c.barrier().unwrap();
        if c.rank() == 0 {
            println!("ok {name} ({} ranks)", c.size());
        }
    }
    if c.rank() == 0 {
        let _ = std::fs::remove_dir_all(&s.0);
        println!(
            "mpi_plotfile on {} ranks: {} passed, 0 failed",
            c.size(),
            checks.len()
        );
    }
    drop(c);
    drop(parallel);
}
