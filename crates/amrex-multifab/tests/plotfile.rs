//! Plotfiles: read AMReX 24.10's reference plotfiles (every number checked), write
//! plotfiles whose `Header`, `Cell_H` and `Cell_D_00000` match AMReX's, and read them back.
#![cfg(feature = "std")]

use std::path::{Path, PathBuf};

use amrex_box::{IndexBox, IndexType, IntVect};
use amrex_multifab::plotfile::{
    self, Geometry, PlotfileError, PlotfileHeader, RealDescriptor, VisMfHeader,
};
use amrex_multifab::{BoxArray, DistributionMapping, HostArena, MultiFab};

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
    Geometry::new(domain0(), [0.0; 3], [1.0, 0.5, 0.25])
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
    mf.set_val(f64::NAN);
    for mfi in mf.mfiter(false) {
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
    for mfi in mf.mfiter(false) {
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
    assert_eq!((h.coord_sys, h.bwidth), (0, 0));
    assert_eq!(h.geometry(0), geom0());
    let ba = BoxArray::from_domain(domain0(), 8);
    assert_eq!(ba.len(), 8);
    let l0 = &h.levels[0];
    assert_eq!((l0.level, l0.time, l0.step), (0, 1.5, 7));
    assert_eq!(l0.mf_path, "Level_0/Cell");
    let grids: Vec<_> = ba.boxes().iter().map(|b| geom0().real_box(b)).collect();
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
    assert_eq!(h.geometry(1), geom0().refine(IntVect::splat(2)));
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
            .map(|b| h.geometry(lev).real_box(b))
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
    let geoms = [geom0(), geom0().refine(IntVect::splat(2))];
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
    for mfi in mf.mfiter(false) {
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
    let dm = DistributionMapping::new(&ba, 2);
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
        prob_lo: geom.prob_lo,
        prob_hi: geom.prob_hi,
        ref_ratio: vec![],
        domains: vec![geom.domain],
        level_steps: vec![42],
        cell_sizes: vec![geom.cell_size()],
        coord_sys: 0,
        bwidth: 0,
        levels: vec![plotfile::LevelHeader {
            level: 0,
            time: 0.1,
            step: 42,
            grids: vec![geom.real_box(&geom.domain)],
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
