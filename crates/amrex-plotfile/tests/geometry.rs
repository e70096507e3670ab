//! The level geometries a plotfile records: RZ and spherical geometries written and read
//! back with their coordinate system, `Header`s whose coordinate system, `prob_lo` or
//! `prob_hi` make no geometry refused with an error that names the file and the value,
//! and the geometries of AMReX's own multi-level plotfiles.

use std::path::{Path, PathBuf};

use amrex_box::{IndexBox, IntVect};
use amrex_multifab::{BoxArray, DistributionMapping, MultiFab, Tiling};
use amrex_plotfile::{
    self as plotfile, CoordSys, Geometry, GeometryErrorKind, PlotfileError, PlotfileHeader,
    RealBox, VisMfHeader,
};

/// A fresh scratch directory for this test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("plotfile-geometry-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One component over `ba` holding `1000 * level + i + 0.01 * j`.
fn level_mf(ba: &BoxArray, level: usize) -> MultiFab {
    let mut mf = MultiFab::new(ba, &DistributionMapping::single(ba), 1, IntVect::ZERO);
    for mfi in mf.mfiter(Tiling::None) {
        let vbx = mfi.validbox();
        mf.array_mut(&mfi).for_each_mut(vbx, |i, j, _, _, v| {
            *v = 1000.0 * level as f64 + f64::from(i) + 0.01 * f64::from(j);
        });
    }
    mf
}

/// An axisymmetric problem: r in [0, 1] (16 cells), z in [-1, 1] (32 cells), the azimuth
/// one cell.
fn rz_level0() -> Geometry {
    let domain = IndexBox::new(IntVect::ZERO, IntVect::new(15, 31, 0));
    let rb = RealBox::new([0.0, -1.0, 0.0], [1.0, 1.0, 1.0]).unwrap();
    Geometry::new(domain, rb, CoordSys::Rz, [false; 3]).unwrap()
}

/// Line `n` (0-based) of `text`.
fn line(text: &str, n: usize) -> &str {
    text.lines().nth(n).unwrap()
}

/// The 0-based line of `prob_lo` in a `Header` of one variable (version, count, name,
/// dimension, time, finest level); `prob_hi` follows.
const PROB_LO_LINE: usize = 6;

/// The 0-based line of the coordinate system in a `Header` of one variable and `nlev`
/// levels: after `prob_lo`, `prob_hi`, the ratios, the domains, the steps and one line
/// of cell sizes per level.
fn coord_line(nlev: usize) -> usize {
    PROB_LO_LINE + 5 + nlev
}

/// Replaces line `n` of `path`, which must read `from`, by `to`.
fn set_line(path: &Path, n: usize, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[n], from, "line {n} of {}", path.display());
    lines[n] = to;
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

#[test]
#[cfg_attr(miri, ignore = "file I/O (Miri runs isolated from the file system)")]
fn rz_geometry_round_trips_through_write_and_read() {
    let dir = scratch("rz");
    let g0 = rz_level0();
    // A 2-D hierarchy refines by 1 in direction 2, the azimuth.
    let ratio = IntVect::new(2, 2, 1);
    let g1 = g0.refine(ratio).unwrap();
    let bas = [
        BoxArray::from_domain(g0.domain(), 8),
        BoxArray::from_domain(
            IndexBox::new(IntVect::new(4, 8, 0), IntVect::new(11, 23, 0)).refine_iv(ratio),
            8,
        ),
    ];
    let mfs = [level_mf(&bas[0], 0), level_mf(&bas[1], 1)];
    let plt = dir.join("plt_rz");
    plotfile::write_multi_level_plotfile(
        &plt,
        &[&mfs[0], &mfs[1]],
        &["phi"],
        &[g0, g1],
        0.25,
        &[3, 6],
        &[ratio],
    )
    .unwrap();
    // The Header says RZ with AMReX's code, 1.
    let text = std::fs::read_to_string(plt.join("Header")).unwrap();
    assert_eq!(line(&text, coord_line(2)), "1");
    assert_eq!(line(&text, PROB_LO_LINE), "0 -1 0 ");
    assert_eq!(line(&text, PROB_LO_LINE + 1), "1 1 1 ");
    // Read back: the same geometries, coordinate system included, and the same data.
    let back = plotfile::read_plotfile(&plt).unwrap();
    let h = &back.header;
    assert_eq!(h.coord_sys, CoordSys::Rz);
    assert_eq!(h.geometry(0), g0);
    assert_eq!(h.geometry(1), g1);
    assert!(h.geometry(1).coord().is_rz() && !h.geometry(1).is_any_periodic());
    for (lev, (ba, mf)) in bas.iter().zip(&mfs).enumerate() {
        assert_eq!(h.cell_sizes[lev], h.geometry(lev).cell_size());
        let grids: Vec<_> = ba
            .boxes()
            .iter()
            .map(|b| h.geometry(lev).box_extent(b))
            .collect();
        assert_eq!(h.levels[lev].grids, grids, "level {lev}");
        assert_eq!(back.levels[lev].box_array(), ba);
        assert_eq!(
            back.levels[lev].sum(0..1, 0).unwrap(),
            mf.sum(0..1, 0).unwrap()
        );
    }
    // RZ weights from the geometry read back: the volumes add up to the cylinder's,
    // π r² h.
    let total: f64 = g0.domain().iter().map(|iv| h.geometry(0).volume(iv)).sum();
    assert!(
        (total - 2.0 * core::f64::consts::PI).abs() < 1e-12,
        "{total}"
    );
    // Spherical: code 2.
    let domain = IndexBox::new(IntVect::ZERO, IntVect::new(7, 7, 0));
    let rb = RealBox::new([0.5, 0.0, 0.0], [1.5, core::f64::consts::PI, 1.0]).unwrap();
    let sph = Geometry::new(domain, rb, CoordSys::Spherical, [false; 3]).unwrap();
    let plt = dir.join("plt_spherical");
    let mf = level_mf(&BoxArray::from_domain(domain, 4), 0);
    plotfile::write_single_level_plotfile(&plt, &mf, &["phi"], &sph, 0.0, 0).unwrap();
    let text = std::fs::read_to_string(plt.join("Header")).unwrap();
    assert_eq!(line(&text, coord_line(1)), "2");
    assert_eq!(
        plotfile::read_plotfile_header(&plt).unwrap().geometry(0),
        sph
    );
}

#[test]
#[cfg_attr(miri, ignore = "file I/O (Miri runs isolated from the file system)")]
fn writer_refuses_levels_in_other_coordinates() {
    let dir = scratch("mixed");
    let g0 = rz_level0();
    let ratio = IntVect::new(2, 2, 1);
    let fine = g0.refine(ratio).unwrap();
    let cartesian = Geometry::new(
        fine.domain(),
        fine.real_box(),
        CoordSys::Cartesian,
        [false; 3],
    )
    .unwrap();
    let mfs = [
        level_mf(&BoxArray::from_domain(g0.domain(), 8), 0),
        level_mf(&BoxArray::from_domain(fine.domain(), 8), 1),
    ];
    let plt = dir.join("plt");
    let e = plotfile::write_multi_level_plotfile(
        &plt,
        &[&mfs[0], &mfs[1]],
        &["phi"],
        &[g0, cartesian],
        0.0,
        &[0, 0],
        &[ratio],
    )
    .unwrap_err();
    assert!(
        matches!(&e, PlotfileError::ProbDomainMismatch { level: 1, found, expected }
            if **found == cartesian && **expected == g0),
        "{e:?}"
    );
    assert!(
        e.to_string().contains(
            "level 1 spans [0.0, -1.0, 0.0]..[1.0, 1.0, 1.0] (Cartesian coordinates), but \
             level 0 spans [0.0, -1.0, 0.0]..[1.0, 1.0, 1.0] (RZ coordinates)"
        ),
        "{e}"
    );
    assert!(!plt.exists());
}

/// A valid one-level Cartesian plotfile with one variable in `dir/name`.
fn small_plotfile(dir: &Path, name: &str) -> PathBuf {
    let domain = IndexBox::new(IntVect::ZERO, IntVect::new(7, 3, 3));
    let geom = Geometry::cartesian(domain, [0.0; 3], [1.0, 0.5, 0.5]).unwrap();
    let plt = dir.join(name);
    let mf = level_mf(&BoxArray::from_domain(domain, 4), 0);
    plotfile::write_single_level_plotfile(&plt, &mf, &["phi"], &geom, 1.5, 7).unwrap();
    plt
}

/// The `BadGeometry` error of reading `plt`, checked to name its `Header`; the header
/// alone and the whole plotfile are refused alike, and so is the text on its own.
fn bad_geometry(plt: &Path) -> (Option<usize>, GeometryErrorKind, String) {
    let header = plt.join("Header");
    let e = plotfile::read_plotfile_header(plt).unwrap_err();
    let whole = plotfile::read_plotfile(plt).unwrap_err();
    assert_eq!(whole.to_string(), e.to_string());
    let text = std::fs::read_to_string(&header).unwrap();
    let alone = PlotfileHeader::parse(&text).unwrap_err();
    let msg = e.to_string();
    assert_eq!(
        alone.to_string(),
        msg.replacen(&header.display().to_string(), "Header", 1)
    );
    match e {
        PlotfileError::BadGeometry {
            path,
            level,
            source,
        } => {
            assert_eq!(path, header);
            assert!(msg.starts_with(&format!("{}: ", header.display())), "{msg}");
            assert!(core::error::Error::source(&whole).is_some());
            (level, source.kind(), msg)
        }
        other => panic!("{other:?}"),
    }
}

#[test]
#[cfg_attr(miri, ignore = "file I/O (Miri runs isolated from the file system)")]
fn headers_whose_numbers_make_no_geometry_are_refused() {
    use amrex_plotfile::GeometryErrorKind as K;
    let dir = scratch("bad");
    let coord = coord_line(1);
    // An unknown coordinate system.
    let plt = small_plotfile(&dir, "coord7");
    set_line(&plt.join("Header"), coord, "0", "7");
    let (level, kind, msg) = bad_geometry(&plt);
    assert_eq!((level, kind), (None, K::UnknownCoordSys(7)));
    assert!(
        msg.ends_with("Header: CoordSys: expected 0 (Cartesian), 1 (RZ) or 2 (spherical), got 7"),
        "{msg}"
    );
    // AMReX's `undef`, -1, is no coordinate system either.
    let plt = small_plotfile(&dir, "undef");
    set_line(&plt.join("Header"), coord, "0", "-1");
    assert_eq!(bad_geometry(&plt).1, K::UnknownCoordSys(-1));
    // A NaN prob_lo.
    let plt = small_plotfile(&dir, "nan");
    set_line(&plt.join("Header"), PROB_LO_LINE, "0 0 0 ", "0 nan 0 ");
    let (level, kind, msg) = bad_geometry(&plt);
    assert_eq!(
        (level, kind),
        (
            None,
            K::NanCoordinate {
                side: amrex_geometry::Side::Lo,
                dir: 1
            }
        )
    );
    assert!(msg.ends_with("Header: RealBox: prob_lo[1] is NaN"), "{msg}");
    // An infinite prob_hi.
    let plt = small_plotfile(&dir, "inf");
    set_line(
        &plt.join("Header"),
        PROB_LO_LINE + 1,
        "1 0.5 0.5 ",
        "1 0.5 inf ",
    );
    let (_, kind, msg) = bad_geometry(&plt);
    assert!(
        matches!(kind, K::InfiniteCoordinate { dir: 2, .. }),
        "{kind:?}"
    );
    assert!(msg.contains("prob_hi[2], got inf"), "{msg}");
    // prob_hi below prob_lo.
    let plt = small_plotfile(&dir, "inverted");
    set_line(
        &plt.join("Header"),
        PROB_LO_LINE + 1,
        "1 0.5 0.5 ",
        "-1 0.5 0.5 ",
    );
    let (level, kind, msg) = bad_geometry(&plt);
    assert_eq!(
        (level, kind),
        (
            None,
            K::EmptyExtent {
                dir: 0,
                lo: 0.0,
                hi: -1.0
            }
        )
    );
    assert!(
        msg.contains("direction 0: expected prob_hi > prob_lo, got prob_lo = 0, prob_hi = -1"),
        "{msg}"
    );
    // RZ over a domain of four cells in direction 2: the level is named.
    let plt = small_plotfile(&dir, "rz3d");
    set_line(&plt.join("Header"), coord, "0", "1");
    let (level, kind, msg) = bad_geometry(&plt);
    assert_eq!(
        (level, kind),
        (
            Some(0),
            K::CurvilinearThirdDirection {
                coord: CoordSys::Rz,
                cells: 4
            }
        )
    );
    assert!(
        msg.contains("Header: level 0: Geometry: RZ coordinates"),
        "{msg}"
    );
    // The untouched file reads.
    let plt = small_plotfile(&dir, "good");
    let h = plotfile::read_plotfile_header(&plt).unwrap();
    assert_eq!(h.coord_sys, CoordSys::Cartesian);
    assert_eq!(
        h.geometry(0),
        Geometry::cartesian(h.domains[0], [0.0; 3], [1.0, 0.5, 0.5]).unwrap()
    );
}

#[test]
#[should_panic(expected = "PlotfileHeader::geometry: RealBox: prob_lo[0] is NaN")]
fn geometry_of_a_header_edited_into_nonsense_panics_with_the_reason() {
    // Runs under Miri too: parsing only.
    let text = "HyperCLaw-V1.1\n1\nphi\n3\n0\n0\n0 0 0 \n1 1 1 \n\n((0,0,0) (1,1,1) (0,0,0)) \n\
0 \n0.5 0.5 0.5 \n0\n0\n0 1 0\n0\n0 1\n0 1\n0 1\nLevel_0/Cell\n";
    let mut h = PlotfileHeader::parse(text).unwrap();
    assert_eq!(h.geometry(0).cell_size(), [0.5; 3]);
    h.prob_lo[0] = f64::NAN;
    let _ = h.geometry(0);
}

/// AMReX's advection tutorial output (three levels, ratio 2), beside the repository;
/// `None` when it is missing and `AMREX_SKIP_SHARED_DATA=1` allows it.
fn advection_data() -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/amrex-advection"
    ));
    if dir.join("plt00000/Header").is_file() {
        return Some(dir);
    }
    if std::env::var("AMREX_SKIP_SHARED_DATA").is_ok_and(|v| v == "1") {
        eprintln!("skipped: {} is missing", dir.display());
        return None;
    }
    panic!(
        "AMReX's advection plotfiles not found at {} (clone shared/ beside the repository, \
         or set AMREX_SKIP_SHARED_DATA=1)",
        dir.display()
    );
}

#[test]
#[cfg_attr(miri, ignore = "file I/O (Miri runs isolated from the file system)")]
fn amrex_multi_level_plotfiles_give_refined_geometries() {
    let Some(data) = advection_data() else { return };
    for step in ["plt00000", "plt00010", "plt00020", "plt00030", "plt00040"] {
        let plt = data.join(step);
        let h = plotfile::read_plotfile_header(&plt).unwrap();
        assert_eq!(
            (h.nlevels(), h.coord_sys),
            (3, CoordSys::Cartesian),
            "{step}"
        );
        let g0 = h.geometry(0);
        assert_eq!(
            g0,
            Geometry::cartesian(
                IndexBox::new(IntVect::ZERO, IntVect::new(63, 63, 7)),
                [0.0; 3],
                [1.0, 1.0, 0.125]
            )
            .unwrap(),
            "{step}"
        );
        for lev in 0..h.nlevels() {
            let g = h.geometry(lev);
            if lev > 0 {
                let r = h.ref_ratio[lev - 1];
                assert_eq!(g, h.geometry(lev - 1).refine(r).unwrap(), "{step} {lev}");
            }
            // The cell sizes and box extents AMReX wrote are the geometry's, exactly.
            assert_eq!(h.cell_sizes[lev], g.cell_size(), "{step} level {lev}");
            let cell_h = plt.join(format!("{}_H", h.levels[lev].mf_path));
            let vismf = VisMfHeader::parse(&std::fs::read_to_string(cell_h).unwrap(), 3).unwrap();
            let extents: Vec<_> = vismf.boxes.iter().map(|b| g.box_extent(b)).collect();
            assert_eq!(h.levels[lev].grids, extents, "{step} level {lev}");
        }
    }
}
