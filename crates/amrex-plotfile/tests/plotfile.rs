//! Plotfiles: read AMReX 24.10's reference plotfiles (every number checked), write
//! plotfiles whose `Header`, `Cell_H` and `Cell_D_00000` match AMReX's, and read them back;
//! the writer refuses hierarchies that readers would misread.

use std::path::{Path, PathBuf};

use amrex_box::{IndexBox, IndexType, IntVect};
use amrex_multifab::{BoxArray, DistributionMapping, HostArena, MultiFab, Tiling};
use amrex_plotfile::{
    self as plotfile, CoordSys, Geometry, PlotfileError, PlotfileHeader, RealDescriptor,
    VisMfHeader,
};

/// The reference plotfiles (`shared/` sits beside the repository); `None` when they are
/// missing and `AMREX_SKIP_SHARED_DATA=1` allows it.
fn shared_data() -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/amrex-plotfiles"
    ));
    if dir.join("plt_single/Header").is_file() {
        return Some(dir);
    }
    if std::env::var("AMREX_SKIP_SHARED_DATA").is_ok_and(|v| v == "1") {
        eprintln!("skipped: {} is missing", dir.display());
        return None;
    }
    panic!(
        "reference plotfiles not found at {} (clone shared/ beside the repository, or set \
         AMREX_SKIP_SHARED_DATA=1)",
        dir.display()
    );
}

/// A fresh scratch directory for this test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("plotfile-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The reference data's value (README): `level*1e6 + n*1e4 + i + 0.01*j + 0.0001*k`,
/// evaluated left to right as AMReX's writer did.
fn value(level: usize, p: IntVect, n: usize) -> f64 {
    level as f64 * 1e6
        + n as f64 * 1e4
        + f64::from(p[0])
        + 0.01 * f64::from(p[1])
        + 0.0001 * f64::from(p[2])
}

fn domain0() -> IndexBox {
    IndexBox::new(IntVect::ZERO, IntVect::new(31, 15, 7))
}

fn geom0() -> Geometry {
    Geometry::cartesian(domain0(), [0.0; 3], [1.0, 0.5, 0.25]).unwrap()
}

/// Level-1 boxes of `plt_two_level`: level-0 cells (8..23, 4..11, 2..5) refined by 2.
fn level1_region() -> IndexBox {
    IndexBox::new(IntVect::new(8, 4, 2), IntVect::new(23, 11, 5)).refine(2)
}

/// A MultiFab over `ba` with the reference values on valid cells and NaN in ghost cells.
fn reference_mf(ba: &BoxArray, level: usize, ngrow: i32) -> MultiFab {
    let mut mf = MultiFab::new(
        ba,
        &DistributionMapping::single(ba),
        2,
        IntVect::splat(ngrow),
    );
    mf.fill(f64::NAN).unwrap();
    for mfi in mf.mfiter(Tiling::None) {
        let vbx = mfi.validbox();
        mf.array_mut(&mfi).for_each_mut(vbx, |i, j, k, n, v| {
            *v = value(level, IntVect::new(i, j, k), n);
        });
    }
    mf
}

/// Every valid cell of `mf` holds `value(level, ..)`.
fn check_values(mf: &MultiFab, level: usize) {
    assert_eq!(mf.ncomp(), 2);
    let mut cells = 0;
    for mfi in mf.mfiter(Tiling::None) {
        mf.array(&mfi).for_each(mfi.validbox(), |i, j, k, n, &v| {
            let p = IntVect::new(i, j, k);
            assert_eq!(v, value(level, p, n), "level {level} cell {p} comp {n}");
            cells += 1;
        });
    }
    assert_eq!(cells as u64, 2 * mf.box_array().num_pts());
}

/// Checks a `Cell_H` against the level's BoxArray and values: version 1, one data file,
/// offsets that step over each FAB (header line plus data), exact minima and maxima.
fn check_cell_header(h: &VisMfHeader, ba: &BoxArray, level: usize) {
    assert_eq!(
        (h.version, h.how, h.ncomp, h.ngrow),
        (1, 1, 2, IntVect::ZERO)
    );
    assert_eq!(h.boxes, ba.boxes());
    assert_eq!(h.real_descriptor, None);
    let mut offset = 0;
    for (g, fod) in h.fabs.iter().enumerate() {
        let b = ba.get(g);
        assert_eq!(fod.file, "Cell_D_00000");
        assert_eq!(fod.offset, offset, "FAB {g}");
        let head = format!("FAB {}{b} 2\n", RealDescriptor::NATIVE_F64);
        offset += head.len() as u64 + b.num_pts() * 16;
        for n in 0..2 {
            assert_eq!(h.min[g][n], value(level, b.lo(), n), "min of FAB {g}");
            assert_eq!(h.max[g][n], value(level, b.hi(), n), "max of FAB {g}");
        }
    }
}

#[test]
#[cfg_attr(miri, ignore = "file I/O (Miri runs isolated from the file system)")]
fn reads_amrex_single_level_plotfile() {
    let Some(data) = shared_data() else { return };
    let plt = plotfile::read_plotfile(data.join("plt_single")).unwrap();
    let h = &plt.header;
    assert_eq!(h.version, "HyperCLaw-V1.1");
    assert_eq!(h.var_names, ["density", "energy"]);
    assert_eq!(plt.var_index("energy"), Some(1));
    assert_eq!((h.space_dim, h.time, h.finest_level), (3, 1.5, 0));
    assert_eq!((h.prob_lo, h.prob_hi), ([0.0; 3], [1.0, 0.5, 0.25]));
    assert!(h.ref_ratio.is_empty());
    assert_eq!(h.domains, [domain0()]);
    assert_eq!(h.level_steps, [7]);
    assert_eq!(h.cell_sizes, [[0.03125; 3]]);
    assert_eq!((h.coord_sys, h.bwidth), (CoordSys::Cartesian, 0));
    assert_eq!(h.geometry(0), geom0());
    let ba = BoxArray::from_domain(domain0(), 8);
    assert_eq!(ba.len(), 8);
    let l0 = &h.levels[0];
    assert_eq!((l0.level, l0.time, l0.step), (0, 1.5, 7));
    assert_eq!(l0.mf_path, "Level_0/Cell");
    let grids: Vec<_> = ba.boxes().iter().map(|b| geom0().box_extent(b)).collect();
    assert_eq!(l0.grids, grids);
    assert_eq!(l0.grids[1], [[0.25, 0.5], [0.0, 0.25], [0.0, 0.25]]);
    check_cell_header(&plt.cell_headers[0], &ba, 0);
    let mf = &plt.levels[0];
    assert_eq!(mf.box_array(), &ba);
    assert_eq!(mf.n_grow(), IntVect::ZERO);
    check_values(mf, 0);
}

#[test]
#[cfg_attr(miri, ignore = "file I/O (Miri runs isolated from the file system)")]
fn reads_amrex_two_level_plotfile() {
    let Some(data) = shared_data() else { return };
    let plt = plotfile::read_plotfile(data.join("plt_two_level")).unwrap();
    let h = &plt.header;
    assert_eq!(h.var_names, ["density", "energy"]);
    assert_eq!((h.time, h.finest_level, h.nlevels()), (2.5, 1, 2));
    assert_eq!(h.ref_ratio, [2]);
    assert_eq!(h.domains, [domain0(), domain0().refine(2)]);
    assert_eq!(h.level_steps, [3, 6]);
    assert_eq!(h.cell_sizes, [[0.03125; 3], [0.015625; 3]]);
    assert_eq!(h.geometry(1), geom0().refine(IntVect::splat(2)).unwrap());
    let bas = [
        BoxArray::from_domain(domain0(), 8),
        BoxArray::from_domain(level1_region(), 8),
    ];
    for (lev, ba) in bas.iter().enumerate() {
        let l = &h.levels[lev];
        assert_eq!((l.level, l.time, l.step), (lev, 2.5, h.level_steps[lev]));
        assert_eq!(l.mf_path, format!("Level_{lev}/Cell"));
        let grids: Vec<_> = ba
            .boxes()
            .iter()
            .map(|b| h.geometry(lev).box_extent(b))
            .collect();
        assert_eq!(l.grids, grids, "level {lev}");
        check_cell_header(&plt.cell_headers[lev], ba, lev);
        assert_eq!(plt.levels[lev].box_array(), ba);
        check_values(&plt.levels[lev], lev);
    }
    assert_eq!(
        h.levels[1].grids[0],
        [[0.25, 0.375], [0.125, 0.25], [0.0625, 0.1875]]
    );
    // The levels can also be read one at a time.
    let (_, l1) = plotfile::read_level(data.join("plt_two_level"), h, 1).unwrap();
    check_values(&l1, 1);
}

/// Two texts agree line by line; numbers (tokens that parse as `f64`) compare as
/// numbers, so only formatting that changes no value may differ.
fn same_structure(ours: &str, theirs: &str, what: &str) {
    let (a, b): (Vec<_>, Vec<_>) = (ours.lines().collect(), theirs.lines().collect());
    assert_eq!(
        a.len(),
        b.len(),
        "{what}: line count\n{ours}\n---\n{theirs}"
    );
    let tokens = |l: &str| -> Vec<String> {
        l.split(|c: char| c.is_whitespace() || "(),".contains(c))
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect()
    };
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        if x == y {
            continue;
        }
        let (tx, ty) = (tokens(x), tokens(y));
        assert_eq!(tx.len(), ty.len(), "{what} line {}: {x:?} vs {y:?}", i + 1);
        for (p, q) in tx.iter().zip(&ty) {
            match (p.parse::<f64>(), q.parse::<f64>()) {
                (Ok(u), Ok(v)) => assert_eq!(u, v, "{what} line {}: {x:?} vs {y:?}", i + 1),
                _ => assert_eq!(p, q, "{what} line {}: {x:?} vs {y:?}", i + 1),
            }
        }
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// Our plotfile `ours` has AMReX's structure (`theirs`): Header and `Cell_H` line by line,
/// and (same values, native doubles) the same FAB files.
fn compare_with_amrex(ours: &Path, theirs: &Path, nlev: usize) {
    // The Header has no platform-dependent numbers: it is AMReX's, byte for byte.
    assert_eq!(read(&ours.join("Header")), read(&theirs.join("Header")));
    same_structure(
        &read(&ours.join("Header")),
        &read(&theirs.join("Header")),
        "Header",
    );
    for lev in 0..nlev {
        let l = format!("Level_{lev}");
        same_structure(
            &read(&ours.join(&l).join("Cell_H")),
            &read(&theirs.join(&l).join("Cell_H")),
            &format!("{l}/Cell_H"),
        );
        let (a, b) = (
            std::fs::read(ours.join(&l).join("Cell_D_00000")).unwrap(),
            std::fs::read(theirs.join(&l).join("Cell_D_00000")).unwrap(),
        );
        if cfg!(target_endian = "little") {
            assert!(a == b, "{l}/Cell_D_00000 differs from AMReX's");
        } else {
            assert_eq!(a.len(), b.len());
        }
    }
}

#[test]
#[cfg_attr(miri, ignore = "file I/O (Miri runs isolated from the file system)")]
fn writes_single_level_plotfile_like_amrex() {
    let dir = scratch("single");
    let ba = BoxArray::from_domain(domain0(), 8);
    // Ghost cells hold NaN: they must not reach the file.
    let mf = reference_mf(&ba, 0, 2);
    let plt = dir.join("plt_single");
    plotfile::write_single_level_plotfile(&plt, &mf, &["density", "energy"], &geom0(), 1.5, 7)
        .unwrap();
    // Read back: the same header fields and every value.
    let back = plotfile::read_plotfile(&plt).unwrap();
    assert_eq!(back.header.var_names, ["density", "energy"]);
    assert_eq!((back.header.time, back.header.level_steps[0]), (1.5, 7));
    assert_eq!(back.header.geometry(0), geom0());
    check_cell_header(&back.cell_headers[0], &ba, 0);
    assert_eq!(back.levels[0].box_array(), &ba);
    check_values(&back.levels[0], 0);
    if let Some(data) = shared_data() {
        compare_with_amrex(&plt, &data.join("plt_single"), 1);
        let theirs = plotfile::read_plotfile_header(data.join("plt_single")).unwrap();
        assert_eq!(back.header, theirs);
    }
}

#[test]
#[cfg_attr(miri, ignore = "file I/O (Miri runs isolated from the file system)")]
fn writes_two_level_plotfile_like_amrex() {
    let dir = scratch("two");
    let bas = [
        BoxArray::from_domain(domain0(), 8),
        BoxArray::from_domain(level1_region(), 8),
    ];
    let mfs = [reference_mf(&bas[0], 0, 0), reference_mf(&bas[1], 1, 1)];
    let geoms = [geom0(), geom0().refine(IntVect::splat(2)).unwrap()];
    let plt = dir.join("plt_two_level");
    plotfile::write_multi_level_plotfile(
        &plt,
        &[&mfs[0], &mfs[1]],
        &["density".to_string(), "energy".to_string()],
        &geoms,
        2.5,
        &[3, 6],
        &[IntVect::splat(2)],
    )
    .unwrap();
    let back = plotfile::read_plotfile(&plt).unwrap();
    assert_eq!(back.header.ref_ratio, [2]);
    for (lev, ba) in bas.iter().enumerate() {
        assert_eq!(back.levels[lev].box_array(), ba);
        check_cell_header(&back.cell_headers[lev], ba, lev);
        check_values(&back.levels[lev], lev);
    }
    if let Some(data) = shared_data() {
        compare_with_amrex(&plt, &data.join("plt_two_level"), 2);
        let theirs = plotfile::read_plotfile_header(data.join("plt_two_level")).unwrap();
        assert_eq!(back.header, theirs);
    }
}

#[test]
#[cfg_attr(miri, ignore = "file I/O (Miri runs isolated from the file system)")]
fn vismf_round_trips_ghost_cells_nodal_boxes_and_odd_widths() {
    let dir = scratch("vismf");
    let domain = IndexBox::new(IntVect::new(-2, 0, 1), IntVect::new(9, 6, 4));
    let ba = BoxArray::from_domain_iv(domain, IntVect::new(5, 4, 3))
        .convert(IndexType::new(true, false, false));
    let ngrow = IntVect::new(1, 2, 0);
    let mut mf = MultiFab::new(&ba, &DistributionMapping::single(&ba), 3, ngrow);
    for mfi in mf.mfiter(Tiling::None) {
        let (g, fbx) = (mfi.index() as f64, mfi.fabbox());
        mf.array_mut(&mfi).for_each_mut(fbx, |i, j, k, n, v| {
            *v = value(n, IntVect::new(i, j, k), n) + 1e3 * g - 0.5;
        });
    }
    let prefix = dir.join("Cell");
    let h = plotfile::write_multifab(&mf, &prefix).unwrap();
    assert_eq!(h.ngrow, ngrow);
    let text = read(&dir.join("Cell_H"));
    assert!(text.starts_with("1\n1\n3\n(1,2,0)\n("), "{text}");
    let (h2, back) = plotfile::read_multifab(&prefix).unwrap();
    assert_eq!(h2, h);
    assert_eq!(back.box_array(), &ba);
    assert_eq!(back.n_grow(), ngrow);
    for l in 0..mf.local_size() {
        assert_eq!(back.fab(l).index_box(), mf.fab(l).index_box());
        assert_eq!(
            back.fab(l).as_slice().unwrap(),
            mf.fab(l).as_slice().unwrap()
        );
    }
}

/// Writes a one-box VisMF by hand: `Cell_H` of `version` and a FAB of `rd` data.
fn hand_written_vismf(dir: &Path, version: i32, rd: RealDescriptor, vals: &[f64]) -> PathBuf {
    let bx = IndexBox::new(IntVect::ZERO, IntVect::new(1, 1, 0));
    let mut data = Vec::new();
    if version == 1 {
        data.extend_from_slice(format!("FAB {rd}{bx} 1\n").as_bytes());
    }
    for &v in vals {
        match (rd.bytes, rd.little_endian) {
            (8, true) => data.extend_from_slice(&v.to_le_bytes()),
            (8, false) => data.extend_from_slice(&v.to_be_bytes()),
            (_, true) => data.extend_from_slice(&(v as f32).to_le_bytes()),
            (_, false) => data.extend_from_slice(&(v as f32).to_be_bytes()),
        }
    }
    std::fs::write(dir.join("M_D_00003"), data).unwrap();
    let tail = match version {
        1 | 3 => "1,1\n0,\n\n1,1\n4,\n\n".to_string(),
        4 => "0,\n4,\n".to_string(),
        _ => String::new(),
    };
    let rdline = if version >= 2 {
        format!("{rd}\n")
    } else {
        String::new()
    };
    let h =
        format!("{version}\n1\n1\n0\n(1 0\n{bx}\n)\n1\nFabOnDisk: M_D_00003 0\n\n{tail}{rdline}");
    std::fs::write(dir.join("M_H"), h).unwrap();
    dir.join("M")
}

#[test]
#[cfg_attr(miri, ignore = "file I/O (Miri runs isolated from the file system)")]
fn reads_floats_and_doubles_in_both_byte_orders_and_every_header_version() {
    let dir = scratch("formats");
    let vals = [1.0, -2.5, 3.25, 4.0];
    for version in 1..=4 {
        for bytes in [4, 8] {
            for little_endian in [true, false] {
                let rd = RealDescriptor {
                    bytes,
                    little_endian,
                };
                let prefix = hand_written_vismf(&dir, version, rd, &vals);
                let (h, mf) = plotfile::read_multifab(&prefix)
                    .unwrap_or_else(|e| panic!("version {version} {rd}: {e}"));
                assert_eq!(h.version, version);
                assert_eq!(
                    mf.fab(0).as_slice().unwrap(),
                    vals,
                    "version {version} {rd}"
                );
            }
        }
    }
}

#[test]
#[cfg_attr(miri, ignore = "file I/O (Miri runs isolated from the file system)")]
fn damaged_plotfiles_are_refused_with_the_file_and_reason() {
    let Some(data) = shared_data() else { return };
    let dir = scratch("damaged");
    let copy = |name: &str| -> PathBuf {
        let plt = dir.join(name);
        std::fs::create_dir_all(plt.join("Level_0")).unwrap();
        for f in ["Header", "Level_0/Cell_H", "Level_0/Cell_D_00000"] {
            std::fs::copy(data.join("plt_single").join(f), plt.join(f)).unwrap();
        }
        plt
    };
    // A truncated data file.
    let plt = copy("short");
    let d = plt.join("Level_0/Cell_D_00000");
    let bytes = std::fs::read(&d).unwrap();
    std::fs::write(&d, &bytes[..bytes.len() - 8]).unwrap();
    let e = plotfile::read_plotfile(&plt).unwrap_err();
    assert!(matches!(e, PlotfileError::Invalid { .. }), "{e}");
    assert!(e.to_string().contains("FAB 7"), "{e}");
    // A FAB header whose box is not the BoxArray's.
    let plt = copy("wrong_box");
    let h = plt.join("Level_0/Cell_H");
    let text = read(&h).replace(
        "FabOnDisk: Cell_D_00000 0\nFabOnDisk: Cell_D_00000 8278",
        "FabOnDisk: Cell_D_00000 8278\nFabOnDisk: Cell_D_00000 0",
    );
    std::fs::write(&h, text).unwrap();
    let e = plotfile::read_plotfile(&plt).unwrap_err();
    assert!(e.to_string().contains("FAB 0 at byte 8278 covers"), "{e}");
    // Two FABs over the same bytes.
    let plt = copy("shared_bytes");
    let h = plt.join("Level_0/Cell_H");
    let text = read(&h).replace("FabOnDisk: Cell_D_00000 8278", "FabOnDisk: Cell_D_00000 0");
    std::fs::write(&h, text).unwrap();
    let e = plotfile::read_plotfile(&plt).unwrap_err();
    assert!(
        e.to_string().contains("FABs 0 and 1 claim the same bytes"),
        "{e}"
    );
    // A malformed Header: the line is reported.
    let plt = copy("bad_header");
    let hp = plt.join("Header");
    std::fs::write(&hp, read(&hp).replace("1.5\n0\n", "1.5\nzero\n")).unwrap();
    match plotfile::read_plotfile(&plt).unwrap_err() {
        PlotfileError::Parse { line, what, .. } => {
            assert_eq!(line, 7);
            assert!(what.contains("finest level"), "{what}");
        }
        e => panic!("{e}"),
    }
    // A missing directory.
    let e = plotfile::read_plotfile(dir.join("nowhere")).unwrap_err();
    assert!(matches!(e, PlotfileError::Io { .. }), "{e}");
    assert!(core::error::Error::source(&e).is_some());
}

#[test]
#[cfg_attr(miri, ignore = "file I/O (Miri runs isolated from the file system)")]
fn writer_refuses_inconsistent_arguments() {
    let dir = scratch("args");
    let ba = BoxArray::from_domain(domain0(), 16);
    let mf = reference_mf(&ba, 0, 0);
    let e = plotfile::write_single_level_plotfile(dir.join("p"), &mf, &["a"], &geom0(), 0.0, 0)
        .unwrap_err();
    assert!(e.to_string().contains("2 components but 1 names"), "{e}");
    let e =
        plotfile::write_single_level_plotfile(dir.join("p"), &mf, &["a", "b c"], &geom0(), 0.0, 0)
            .unwrap_err();
    assert!(matches!(e, PlotfileError::Argument(_)), "{e}");
    let e = plotfile::write_multi_level_plotfile(
        dir.join("p"),
        &[&mf, &mf],
        &["a", "b"],
        &[geom0(), geom0()],
        0.0,
        &[0, 0],
        &[],
    )
    .unwrap_err();
    assert!(e.to_string().contains("refinement"), "{e}");
    // Boxes held by another rank cannot be written by this process.
    let dm = DistributionMapping::with_ranks(&ba, 2);
    let part = MultiFab::try_new_on_rank_in(&ba, &dm, 2, IntVect::ZERO, 1, HostArena).unwrap();
    let e =
        plotfile::write_single_level_plotfile(dir.join("p"), &part, &["a", "b"], &geom0(), 0.0, 0)
            .unwrap_err();
    assert!(e.to_string().contains("every box"), "{e}");
    assert!(!dir.join("p/Header").exists());
}

#[test]
fn header_text_round_trips_without_files() {
    // Runs under Miri too: formatting and parsing only.
    let geom = geom0();
    let header = PlotfileHeader {
        version: plotfile::PLOTFILE_VERSION.to_string(),
        var_names: vec!["rho".into(), "E".into()],
        space_dim: 3,
        time: 0.1,
        finest_level: 0,
        prob_lo: geom.prob_lo(),
        prob_hi: geom.prob_hi(),
        ref_ratio: vec![],
        domains: vec![geom.domain()],
        level_steps: vec![42],
        cell_sizes: vec![geom.cell_size()],
        coord_sys: CoordSys::Cartesian,
        bwidth: 0,
        levels: vec![plotfile::LevelHeader {
            level: 0,
            time: 0.1,
            step: 42,
            grids: vec![geom.box_extent(&geom.domain())],
            mf_path: "Level_0/Cell".into(),
        }],
    };
    let text = header.to_string();
    assert!(text.starts_with("HyperCLaw-V1.1\n2\nrho\nE\n3\n0.10000000000000001\n0\n0 0 0 \n"));
    assert!(text.contains("\n0 1 0.10000000000000001\n42\n0 1\n0 0.5\n0 0.25\nLevel_0/Cell\n"));
    assert_eq!(PlotfileHeader::parse(&text).unwrap(), header);
    let e = PlotfileHeader::parse(&text.replace("42 \n", "x \n")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("Header:12: expected a level step"),
        "{e}"
    );
}

/// Writes `mfs` on `geoms` with `ratios` into a fresh `dir/name` and returns the error;
/// nothing may have been created.
fn refusal(
    dir: &Path,
    name: &str,
    mfs: &[&MultiFab],
    geoms: &[Geometry],
    ratios: &[IntVect],
) -> PlotfileError {
    let plt = dir.join(name);
    let steps = vec![0; mfs.len()];
    let e =
        plotfile::write_multi_level_plotfile(&plt, mfs, &["a", "b"], geoms, 0.0, &steps, ratios)
            .expect_err(name);
    assert!(!plt.exists(), "{name}: {} was created", plt.display());
    e
}

/// The two levels of `plt_two_level`.
fn two_levels() -> ([MultiFab; 2], [Geometry; 2]) {
    let bas = [
        BoxArray::from_domain(domain0(), 8),
        BoxArray::from_domain(level1_region(), 8),
    ];
    (
        [reference_mf(&bas[0], 0, 0), reference_mf(&bas[1], 1, 0)],
        [geom0(), geom0().refine(IntVect::splat(2)).unwrap()],
    )
}

#[test]
#[cfg_attr(miri, ignore = "file I/O (Miri runs isolated from the file system)")]
fn writer_refuses_ratios_that_disagree_with_the_level_domains() {
    let dir = scratch("ratios");
    let ([m0, m1], geoms) = two_levels();
    // The level domains say 2; the ratio says 4.
    let e = refusal(&dir, "r4", &[&m0, &m1], &geoms, &[IntVect::splat(4)]);
    assert!(
        matches!(e, PlotfileError::RefRatioMismatch { level: 1, ratio, .. } if ratio == IntVect::splat(4)),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "plotfile writer: level 1's domain ((0,0,0) (63,31,15) (0,0,0)) is not level 0's \
         domain ((0,0,0) (31,15,7) (0,0,0)) refined by the ratio (4,4,4), which is \
         ((0,0,0) (127,63,31))"
    );
    // Anisotropic disagreement: z refined by 1 in the ratio, by 2 in the domains.
    let e = refusal(&dir, "r221", &[&m0, &m1], &geoms, &[IntVect::new(2, 2, 1)]);
    assert!(
        e.to_string().contains("which is ((0,0,0) (63,31,7))"),
        "{e}"
    );
    // A ratio below 1 (coarsening by it would divide by zero).
    let e = refusal(&dir, "r0", &[&m0, &m1], &geoms, &[IntVect::new(2, 0, 2)]);
    assert!(
        matches!(e, PlotfileError::RefRatioNotPositive { level: 1, .. }),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .contains("ratio (2,0,2) between levels 0 and 1"),
        "{e}"
    );
    // A fine level on another physical box: the Header records level 0's only.
    let mut moved = geoms;
    moved[1] = Geometry::cartesian(moved[1].domain(), [0.0; 3], [2.0, 0.5, 0.25]).unwrap();
    let e = refusal(&dir, "prob", &[&m0, &m1], &moved, &[IntVect::splat(2)]);
    assert!(
        matches!(e, PlotfileError::ProbDomainMismatch { level: 1, .. }),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .contains("level 1 spans [0.0, 0.0, 0.0]..[2.0, 0.5, 0.25]"),
        "{e}"
    );
}

#[test]
#[cfg_attr(miri, ignore = "file I/O (Miri runs isolated from the file system)")]
fn writer_refuses_boxes_outside_the_domain() {
    let dir = scratch("outside");
    let ba = BoxArray::from_domain(domain0(), 8);
    let mf = reference_mf(&ba, 0, 0);
    // The geometry covers only x < 16: box 2 is the first with cells beyond.
    let half = Geometry::cartesian(
        IndexBox::new(IntVect::ZERO, IntVect::new(15, 15, 7)),
        [0.0; 3],
        [0.5, 0.5, 0.25],
    )
    .unwrap();
    let e = refusal(&dir, "half", &[&mf], &[half], &[]);
    assert_eq!(
        e.to_string(),
        format!(
            "plotfile writer: level 0 box 2 {} is not inside the level's domain \
             ((0,0,0) (15,15,7) (0,0,0))",
            ba.get(2)
        )
    );
    assert!(
        matches!(
            e,
            PlotfileError::BoxOutsideDomain {
                level: 0,
                index: 2,
                ..
            }
        ),
        "{e:?}"
    );
    // On a fine level, too (checked before nesting): a box past the refined domain.
    let (mut levels, geoms) = two_levels();
    let past = IndexBox::new(IntVect::new(56, 0, 0), IntVect::new(64, 7, 7));
    levels[1] = reference_mf(&BoxArray::new(vec![past]), 1, 0);
    let e = refusal(
        &dir,
        "fine",
        &[&levels[0], &levels[1]],
        &geoms,
        &[IntVect::splat(2)],
    );
    assert!(
        matches!(e, PlotfileError::BoxOutsideDomain { level: 1, index: 0, bx, .. } if bx == past),
        "{e:?}"
    );
    // Nodal data: a box counts the cells it encloses, so the nodes on the domain's high
    // faces are inside.
    let nodal = BoxArray::from_domain(domain0(), 16).convert(IndexType::new(true, true, true));
    let mf = reference_mf(&nodal, 0, 0);
    let plt = dir.join("nodal");
    plotfile::write_single_level_plotfile(&plt, &mf, &["a", "b"], &geom0(), 0.0, 0).unwrap();
    let back = plotfile::read_plotfile(&plt).unwrap();
    assert_eq!(back.levels[0].box_array(), &nodal);
}

#[test]
#[cfg_attr(miri, ignore = "file I/O (Miri runs isolated from the file system)")]
fn writer_refuses_overlapping_boxes() {
    let dir = scratch("overlap");
    let boxes = vec![
        IndexBox::new(IntVect::ZERO, IntVect::new(7, 7, 7)),
        IndexBox::new(IntVect::new(8, 0, 0), IntVect::new(15, 7, 7)),
        IndexBox::new(IntVect::new(14, 6, 0), IntVect::new(20, 9, 7)),
    ];
    let ba = BoxArray::new(boxes.clone());
    let mf = reference_mf(&ba, 0, 0);
    let e = refusal(&dir, "single", &[&mf], &[geom0()], &[]);
    assert_eq!(
        e.to_string(),
        "plotfile writer: level 0 boxes 1 ((8,0,0) (15,7,7) (0,0,0)) and 2 \
         ((14,6,0) (20,9,7) (0,0,0)) overlap in ((14,6,0) (15,7,7) (0,0,0)) (32 cells)"
    );
    assert!(
        matches!(
            e,
            PlotfileError::OverlappingBoxes {
                level: 0,
                first: 1,
                second: 2,
                ..
            }
        ),
        "{e:?}"
    );
    // The same box twice on a fine level.
    let (levels, geoms) = two_levels();
    let fine = levels[1].box_array().get(0);
    let twice = reference_mf(&BoxArray::new(vec![fine, fine]), 1, 0);
    let e = refusal(
        &dir,
        "twice",
        &[&levels[0], &twice],
        &geoms,
        &[IntVect::splat(2)],
    );
    assert!(
        matches!(e, PlotfileError::OverlappingBoxes { level: 1, first: 0, second: 1, overlap, .. } if overlap == fine),
        "{e:?}"
    );
}

#[test]
#[cfg_attr(miri, ignore = "file I/O (Miri runs isolated from the file system)")]
fn writer_refuses_levels_not_nested_in_the_level_below() {
    let dir = scratch("nesting");
    let (levels, geoms) = two_levels();
    // Level 0 covers only x < 16; level 1 (level-0 cells 8..23 refined) reaches past it.
    let left = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::new(15, 15, 7)), 8);
    let coarse = reference_mf(&left, 0, 0);
    let e = refusal(
        &dir,
        "past_coarse",
        &[&coarse, &levels[1]],
        &geoms,
        &[IntVect::splat(2)],
    );
    let fine0 = levels[1].box_array().get(0);
    assert_eq!(fine0.lo(), IntVect::new(16, 8, 4));
    // Boxes of 8³ fine cells: box 0 (16..23) coarsens to 8..11 and is covered; the first
    // box past x = 31 in fine cells is the first to leave the coarse boxes.
    let (index, bx) = levels[1]
        .box_array()
        .boxes()
        .iter()
        .enumerate()
        .find(|(_, b)| b.hi()[0] > 31)
        .map(|(i, b)| (i, *b))
        .unwrap();
    let coarsened = bx.coarsen(2);
    match &e {
        PlotfileError::NotProperlyNested {
            level: 1,
            index: i,
            bx: b,
            ratio,
            coarsened: c,
            uncovered,
        } => {
            assert_eq!(
                (*i, *b, *ratio, *c),
                (index, bx, IntVect::splat(2), coarsened)
            );
            assert_eq!(*uncovered, coarsened.num_pts());
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        e.to_string(),
        format!(
            "plotfile writer: level 1 is not properly nested in level 0: box {index} {bx} \
             coarsened by (2,2,2) is {coarsened}, and {n} of its {n} cells lie outside \
             level 0's boxes",
            n = coarsened.num_pts()
        )
    );
    // Partly covered: a fine box that straddles the edge of the coarse boxes.
    let straddle = IndexBox::new(IntVect::new(28, 8, 4), IntVect::new(35, 15, 11));
    let fine = reference_mf(&BoxArray::new(vec![straddle]), 1, 0);
    let e = refusal(
        &dir,
        "straddle",
        &[&coarse, &fine],
        &geoms,
        &[IntVect::splat(2)],
    );
    // Coarsened: (14..17, 4..7, 2..5), of which x = 16, 17 (2 * 4 * 4 cells) is uncovered.
    assert!(
        matches!(e, PlotfileError::NotProperlyNested { uncovered: 32, .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("and 32 of its 64 cells"), "{e}");
    // Covered by the union of several coarse boxes (no single one holds it): written.
    let plt = dir.join("union");
    plotfile::write_multi_level_plotfile(
        &plt,
        &[
            &coarse,
            &reference_mf(
                &BoxArray::new(vec![IndexBox::new(
                    IntVect::new(8, 8, 4),
                    IntVect::new(23, 23, 11),
                )]),
                1,
                0,
            ),
        ],
        &["a", "b"],
        &geoms,
        0.0,
        &[0, 0],
        &[IntVect::splat(2)],
    )
    .unwrap();
    assert_eq!(plotfile::read_plotfile(&plt).unwrap().levels.len(), 2);
}

#[test]
fn geometry_cell_centres() {
    // Runs under Miri too: arithmetic only.
    let g = geom0();
    assert_eq!(g.cell_size(), [0.03125; 3]);
    assert_eq!(g.cell_centre(IntVect::ZERO), [0.015625; 3]);
    assert_eq!(
        g.cell_centre(IntVect::new(31, 15, 7)),
        [1.0 - 0.015625, 0.5 - 0.015625, 0.25 - 0.015625]
    );
    // prob_lo + (i + 0.5) * dx, per direction, for a domain starting at 0.
    let g = Geometry::cartesian(
        IndexBox::new(IntVect::ZERO, IntVect::new(9, 4, 0)),
        [-1.0, 2.0, 0.0],
        [1.5, 3.0, 4.0],
    )
    .unwrap();
    let p = IntVect::new(3, 2, 0);
    let dx = g.cell_size();
    assert_eq!(dx, [0.25, 0.2, 4.0]);
    assert_eq!(
        g.cell_centre(p),
        [-1.0 + 3.5 * dx[0], 2.0 + 2.5 * dx[1], 0.5 * dx[2]]
    );
    // The centre of a cell is the midpoint of its extent, also on a domain that does not
    // start at 0 (both measured from the domain's low corner, as the Header is) and on a
    // refined level.
    let shifted = Geometry::cartesian(
        IndexBox::new(IntVect::new(-4, 10, 3), IntVect::new(11, 17, 6)),
        [0.0, -1.0, 10.0],
        [2.0, 1.0, 11.0],
    )
    .unwrap();
    for g in [shifted, shifted.refine(IntVect::new(2, 4, 1)).unwrap()] {
        for p in [g.domain().lo(), g.domain().hi(), IntVect::new(0, 12, 4)] {
            let ext = g.box_extent(&IndexBox::new(p, p));
            let c = g.cell_centre(p);
            for d in 0..3 {
                assert!(
                    (c[d] - 0.5 * (ext[d][0] + ext[d][1])).abs() < 1e-14,
                    "{p} dir {d}"
                );
            }
        }
    }
    assert_eq!(
        shifted.cell_centre(shifted.domain().lo()),
        [0.0625, -0.875, 10.125]
    );
}

/// The checkpoint of `../shared/data/amrex-checkpoint` (AMReX's tutorial, step 20), when
/// present.
fn amrex_checkpoint() -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/amrex-checkpoint/chk00020"
    ));
    if dir.join("Header").is_file() {
        return Some(dir);
    }
    assert!(
        std::env::var("AMREX_SKIP_SHARED_DATA").is_ok_and(|v| v == "1"),
        "reference checkpoint not found at {} (or set AMREX_SKIP_SHARED_DATA=1)",
        dir.display()
    );
    None
}

#[test]
fn amrex_checkpoint_reads_and_writes_back_byte_for_byte() {
    let Some(chk) = amrex_checkpoint() else {
        return;
    };
    let h = plotfile::read_checkpoint_header(&chk).unwrap();
    assert_eq!(h.title, "Checkpoint file for AmrCoreAdv");
    assert_eq!(h.finest_level(), 2);
    assert_eq!(h.ints(0).unwrap(), [20, 40, 80]);
    assert_eq!(h.reals(1).unwrap()[0], 0.011581673274624229);
    assert_eq!(h.reals(2).unwrap(), [0.22307875274693367; 3]);
    assert_eq!(
        h.grids.iter().map(BoxArray::len).collect::<Vec<_>>(),
        [16, 20, 56]
    );
    assert_eq!(
        h.to_text(),
        std::fs::read_to_string(chk.join("Header")).unwrap()
    );
    let phi: Vec<MultiFab> = h
        .grids
        .iter()
        .enumerate()
        .map(|(lev, ba)| {
            plotfile::read_checkpoint_multifab(
                &chk,
                lev,
                "phi",
                ba,
                &DistributionMapping::single(ba),
            )
            .unwrap()
        })
        .collect();
    let out = scratch("chk-rewrite").join("chk00020");
    let levels: Vec<&MultiFab> = phi.iter().collect();
    plotfile::write_checkpoint(&out, &h, &[("phi", &levels)]).unwrap();
    for f in [
        "Header",
        "Level_0/phi_H",
        "Level_0/phi_D_00000",
        "Level_2/phi_H",
        "Level_2/phi_D_00000",
    ] {
        assert_eq!(
            std::fs::read(out.join(f)).unwrap(),
            std::fs::read(chk.join(f)).unwrap(),
            "{f}"
        );
    }
}

#[test]
fn checkpoints_round_trip_and_replace_safely() {
    let dir = scratch("chk-round-trip");
    let ba = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::splat(7)), 4);
    let fine = BoxArray::new(vec![IndexBox::new(IntVect::splat(4), IntVect::splat(11))]);
    let make = |ba: &BoxArray, ncomp, ng, k: f64| {
        let mut mf = MultiFab::new(
            ba,
            &DistributionMapping::single(ba),
            ncomp,
            IntVect::splat(ng),
        );
        for mfi in mf.mfiter(Tiling::None) {
            let fb = mf.fabbox(mfi.index());
            mf.array_mut(&mfi).for_each_mut(fb, |i, j, k2, n, v| {
                *v =
                    k + f64::from(i) + 10.0 * f64::from(j) + 100.0 * f64::from(k2) + 0.5 * n as f64;
            });
        }
        mf
    };
    let (a0, a1) = (make(&ba, 1, 0, 1.0), make(&fine, 1, 0, 2.0));
    let (b0, b1) = (make(&ba, 3, 2, 3.0), make(&fine, 3, 2, 4.0));
    let h = plotfile::CheckpointHeader::new("my code", vec![ba.clone(), fine.clone()])
        .with_ints([7, 14])
        .with_reals([0.1, 1.0 / 3.0])
        .with_reals([f64::MIN_POSITIVE, 1e300]);
    let chk = dir.join("chk00007");
    plotfile::write_checkpoint(&chk, &h, &[("a", &[&a0, &a1]), ("b", &[&b0, &b1])]).unwrap();
    let back = plotfile::read_checkpoint_header(&chk).unwrap();
    assert_eq!(back, {
        let mut h2 = h.clone();
        h2.lines.clone_from(&back.lines);
        h2
    });
    assert_eq!(back.reals(1).unwrap(), [0.1, 1.0 / 3.0]);
    assert_eq!(back.reals(2).unwrap(), [f64::MIN_POSITIVE, 1e300]);
    for (lev, (ba, want)) in [(&ba, &b0), (&fine, &b1)].into_iter().enumerate() {
        let got = plotfile::read_checkpoint_multifab(
            &chk,
            lev,
            "b",
            ba,
            &DistributionMapping::single(ba),
        )
        .unwrap();
        assert_eq!((got.ncomp(), got.n_grow()), (3, IntVect::splat(2)));
        for mfi in got.mfiter(Tiling::None) {
            let fb = got.fabbox(mfi.index());
            let (x, y) = (got.array(&mfi), want.array(&mfi));
            for p in fb.iter() {
                for n in 0..3 {
                    assert_eq!(x[(p, n)], y[(p, n)]);
                }
            }
        }
    }
    // Writing again moves the first one aside; no staging directory is left.
    plotfile::write_checkpoint(&chk, &h, &[("a", &[&a0, &a1])]).unwrap();
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(
        names.iter().any(|n| n.starts_with("chk00007.old.")),
        "{names:?}"
    );
    assert!(!chk.join("Level_0/b_H").exists());
    // A leftover staging directory (a killed writer) is never read, and is replaced.
    std::fs::create_dir_all(dir.join("chk00008.partial/Level_0")).unwrap();
    std::fs::write(dir.join("chk00008.partial/Header"), "half").unwrap();
    assert!(matches!(
        plotfile::read_checkpoint_header(dir.join("chk00008")),
        Err(PlotfileError::Io { .. })
    ));
    plotfile::write_checkpoint(dir.join("chk00008"), &h, &[("a", &[&a0, &a1])]).unwrap();
    assert!(!dir.join("chk00008.partial").exists());
    assert_eq!(
        plotfile::read_checkpoint_header(dir.join("chk00008"))
            .unwrap()
            .grids
            .len(),
        2
    );
}

#[test]
fn bad_checkpoints_are_named_errors() {
    let dir = scratch("chk-bad");
    let ba = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::splat(7)), 4);
    let mf = MultiFab::new(&ba, &DistributionMapping::single(&ba), 1, IntVect::ZERO);
    let h = plotfile::CheckpointHeader::new("t", vec![ba.clone()]).with_ints([1]);
    let chk = dir.join("chk");
    plotfile::write_checkpoint(&chk, &h, &[("phi", &[&mf])]).unwrap();
    let text = std::fs::read_to_string(chk.join("Header")).unwrap();
    let parse = |t: &str| {
        plotfile::CheckpointHeader::parse(t)
            .unwrap_err()
            .to_string()
    };
    // Truncated anywhere: an error naming the line, never a panic.
    for cut in 0..text.len() {
        if text.is_char_boundary(cut) && !text[cut..].trim().is_empty() {
            let _ = plotfile::CheckpointHeader::parse(&text[..cut]).unwrap_err();
        }
    }
    assert!(
        parse(&text.replace("(8 0", "(9 0")).contains("level 0's BoxArray"),
        "{}",
        parse(&text.replace("(8 0", "(9 0"))
    );
    assert!(parse(&text.replacen("\n0\n", "\n1\n", 1)).contains("level 1's BoxArray"));
    assert!(parse(&text.replacen("\n0\n", "\n4000000000\n", 1)).contains("finest level"));
    assert!(
        parse(&text.replacen("((0,0,0) (3,3,3) (0,0,0))", "((0,0,0) (3,3,3) (1,0,0))", 1))
            .contains("cell-centred")
    );
    assert!(parse(&format!("{text}extra\n")).contains("end of the file"));
    let bad_int = plotfile::CheckpointHeader::parse(&text.replace("1 \n", "x \n")).unwrap();
    assert!(matches!(
        bad_int.ints(0),
        Err(PlotfileError::Parse { line: 3, .. })
    ));
    assert!(bad_int.reals(5).is_err());
    // A missing checkpoint, a missing level, a level on other boxes than the Header's.
    assert!(matches!(
        plotfile::read_checkpoint_header(dir.join("nope")),
        Err(PlotfileError::Io { .. })
    ));
    let dm = DistributionMapping::single(&ba);
    assert!(plotfile::read_checkpoint_multifab(&chk, 1, "phi", &ba, &dm).is_err());
    let other = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::splat(7)), 8);
    let e = plotfile::read_checkpoint_multifab(
        &chk,
        0,
        "phi",
        &other,
        &DistributionMapping::single(&other),
    )
    .unwrap_err();
    assert!(!e.to_string().is_empty());
    // Writer arguments: nothing is created.
    for (fields, what) in [
        (vec![("a/b", vec![&mf])], "plain file name"),
        (vec![("a", vec![&mf]), ("a", vec![&mf])], "twice"),
        (vec![("a", vec![&mf, &mf])], "levels"),
    ] {
        let f: Vec<(&str, &[&MultiFab])> = fields.iter().map(|(n, l)| (*n, l.as_slice())).collect();
        let e = plotfile::write_checkpoint(dir.join("never"), &h, &f).unwrap_err();
        assert!(e.to_string().contains(what), "{e}");
        assert!(!dir.join("never").exists() && !dir.join("never.partial").exists());
    }
    let wrong = MultiFab::new(
        &other,
        &DistributionMapping::single(&other),
        1,
        IntVect::ZERO,
    );
    let e = plotfile::write_checkpoint(dir.join("never"), &h, &[("a", &[&wrong])]).unwrap_err();
    assert!(e.to_string().contains("grids"), "{e}");
}
