//! Regression tests for what an attacker found in the containers after an accepted DLPack
//! import, and in the plotfile reader: index-space overflows that reached out-of-bounds
//! reads through safe API in release builds, unbounded loops and allocations, panics and a
//! path traversal. Every case must now end in a named error. The suite runs in debug and
//! release builds (`scripts/test.sh` runs both), because release builds wrap where debug
//! builds panic.

use amrex::array4::Array4;
use amrex::basefab::{BaseFab, FabError};
use amrex::boxes::{IndexBox, IndexSpaceError, IntVect};
use amrex::dlpack::{DlpackError, ErrorKind, FromDlpack, ManagedTensor, TensorSpec, flags};
use amrex::multifab::{BoxArray, BoxArrayError, DistributionMapping, MultiFab, Periodicity};
use amrex::plotfile::{self, Geometry, PlotfileError};
use amrex::podvector::PodVector;
use std::path::{Path, PathBuf};

const MAX: i32 = i32::MAX;

/// A tensor over `data` with the given layout (the caller keeps the layout inside it).
fn tensor<T: amrex::dlpack::DlpackElement + Send + 'static>(
    data: Vec<T>,
    shape: &[i64],
    strides: &[i64],
    fl: u64,
) -> ManagedTensor<'static> {
    let spec = TensorSpec::host(data.as_ptr(), shape, strides).with_flags(fl);
    // SAFETY: every test layout reaches only elements of `data` (zero strides or extents
    // that fit), and `data` moves into the tensor, whose heap buffer does not move.
    unsafe { ManagedTensor::from_owner(data, &spec) }
}

fn kind<T>(r: Result<T, DlpackError>) -> ErrorKind {
    match r {
        Ok(_) => panic!("expected a refusal"),
        Err(e) => e.kind(),
    }
}

fn outside(dir: usize) -> impl Fn(ErrorKind) -> bool {
    move |k| matches!(k, ErrorKind::OutsideIndexSpace { dir: d, .. } if d == dir)
}

#[test]
fn basefab_import_at_the_edge_of_the_index_space() {
    // i32[3] at begin (0, i32::MAX, 0): the box would end at 2^31 (once read past the
    // 12-byte buffer through `array()` and `to_ndarray_nkji()`).
    let t = tensor(vec![1i32, 2, 3], &[3], &[1], 0);
    let k = kind(BaseFab::<i32>::from_dlpack_at(t, IntVect::new(0, MAX, 0)));
    assert_eq!(
        k,
        ErrorKind::OutsideIndexSpace {
            dir: 1,
            lo: i64::from(MAX),
            end: i64::from(MAX) + 1
        }
    );
    // u8 [2^31 + 1, 1] with strides [0, 1], read-only, at begin y = -3: the length
    // 2^31 + 1 wrapped and `as_slice()` handed out 1.8e19 elements.
    let t = tensor(vec![7u8], &[(1 << 31) + 1, 1], &[0, 1], flags::READ_ONLY);
    let k = kind(BaseFab::<u8>::from_dlpack_at(t, IntVect::new(0, -3, 0)));
    assert!(outside(1)(k), "{k:?}");
    // The largest accepted fab at the edge still works and reads only its own elements.
    let t = tensor(vec![1i32, 2, 3], &[3], &[1], 0);
    let fab = BaseFab::<i32>::from_dlpack_at(t, IntVect::new(MAX - 3, 0, 0)).unwrap();
    assert_eq!(fab.index_box().hi().x(), MAX - 1);
    assert_eq!(fab.array().unwrap()[(MAX - 1, 0, 0, 0)], 3);
    assert_eq!(fab.as_slice().unwrap(), &[1, 2, 3]);
}

#[test]
fn array4_import_at_the_edge_of_the_index_space() {
    // [2^31, 1] at begin (0, -1, 0): length().y was i32::MIN.
    let t = tensor(vec![0.0f64], &[1 << 31, 1], &[0, 1], flags::READ_ONLY);
    let k = kind(Array4::<f64>::from_dlpack_view(
        &t.view(),
        IntVect::new(0, -1, 0),
    ));
    assert!(outside(1)(k), "{k:?}");
    // [i64::MAX - 1, 1] at begin (0, 2, 0): `begin + extent` overflowed i64.
    let t = tensor(vec![0.0f64], &[i64::MAX - 1, 1], &[0, 1], flags::READ_ONLY);
    let k = kind(Array4::<f64>::from_dlpack_view(
        &t.view(),
        IntVect::new(0, 2, 0),
    ));
    assert!(outside(1)(k), "{k:?}");
    // Just inside: length i32::MAX ending at i32::MAX - 1.
    let t = tensor(
        vec![0.5f64],
        &[i64::from(MAX), 1],
        &[0, 1],
        flags::READ_ONLY,
    );
    let a = Array4::<f64>::from_dlpack_view(&t.view(), IntVect::new(0, -1, 0)).unwrap();
    assert_eq!(a.length().y, MAX);
    assert_eq!(a[(0, MAX - 2, 0, 0)], 0.5);
}

#[test]
fn fabarray_boxes_at_the_edge_of_the_index_space() {
    // A box ending at z = i32::MAX made `sum` and `set_val` loop forever.
    let edge = IndexBox::new(IntVect::new(0, 0, MAX - 1), IntVect::new(1, 1, MAX));
    match BoxArray::try_new(vec![edge]) {
        Err(BoxArrayError::OutsideIndexSpace { index: 0, err, .. }) => {
            assert!(matches!(err, IndexSpaceError::Overflow { dir: 2, .. }));
        }
        other => panic!("expected OutsideIndexSpace, got {other:?}"),
    }
    // One below the edge works: the slab walk ends.
    let ok = IndexBox::new(IntVect::new(0, 0, MAX - 3), IntVect::new(1, 1, MAX - 1));
    let ba = BoxArray::new(vec![ok]);
    let mut mf = MultiFab::new(&ba, &DistributionMapping::single(&ba), 1, IntVect::ZERO);
    mf.fill(2.0).unwrap();
    assert_eq!(mf.sum(0..1, 0).unwrap(), 2.0 * 12.0);
    // ... but not with a ghost cell that would cross it.
    assert!(ba.check_ghost(IntVect::new(0, 0, 1)).is_err());
}

/// Found by the `dlpack_containers` fuzz target: a periodic `fill_boundary` of a box at
/// the low edge of the index space built its periodic images with an overflowing shift.
/// The ghost values must be those of the same problem translated to the origin.
#[test]
fn periodic_fill_boundary_at_the_edge_of_the_index_space() {
    let ghosts = |lo: IntVect| {
        let valid = IndexBox::new(lo, lo + IntVect::new(4, 3, 5));
        let ba = BoxArray::new(vec![valid]);
        let mut mf = MultiFab::new(&ba, &DistributionMapping::single(&ba), 1, IntVect::splat(2));
        let fab = mf.fab_mut(0);
        let mut a = fab.array_mut().unwrap();
        a.for_each_mut(valid, |i, j, k, _, v| {
            *v = f64::from((i - lo.x()) + 10 * (j - lo.y()) + 100 * (k - lo.z()));
        });
        mf.fill_boundary(Periodicity::all(valid)).unwrap();
        let grown = valid.grow(2);
        let a = mf.fab(0).array().unwrap();
        let mut out = Vec::new();
        a.for_each(grown, |_, _, _, _, v| out.push(*v));
        out
    };
    let at_origin = ghosts(IntVect::ZERO);
    assert_eq!(ghosts(IntVect::new(-100, 0, i32::MIN + 2)), at_origin);
    assert_eq!(ghosts(IntVect::new(MAX - 7, MAX - 6, 0)), at_origin);
}

/// Found by the `dlpack_containers` fuzz target: a FabArray without components over a
/// tall box allocates nothing, but a reduction made one work item per k-plane (1.3 GB
/// for 2^26 planes).
#[test]
fn reductions_of_a_componentless_fabarray_do_no_work() {
    let tall = IndexBox::new(IntVect::ZERO, IntVect::new(0, 0, (1 << 30) - 1));
    let ba = BoxArray::new(vec![tall]);
    let mut mf = MultiFab::new(&ba, &DistributionMapping::single(&ba), 0, IntVect::ZERO);
    assert_eq!(mf.sum(0..0, 0).unwrap(), 0.0);
    mf.fill(1.0).unwrap();
    assert_eq!(mf.norm2(0..0, 0).unwrap(), 0.0);
}

/// Component ranges whose end overflows `usize` (`usize::MAX` and 2 components) wrapped
/// past the bound checks of `fill_boundary_with`, `parallel_copy_with` and the region
/// reads in release builds, and the copies then wrote past the fabs. They must be refused
/// by the same check as every other operation's.
fn two_box_mf() -> MultiFab {
    let ba = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::new(7, 3, 3)), 4);
    MultiFab::new(&ba, &DistributionMapping::single(&ba), 2, IntVect::splat(1))
}

#[test]
fn fill_boundary_refuses_a_wrapping_component_range() {
    let mut mf = two_box_mf();
    let period = Periodicity::all(IndexBox::new(IntVect::ZERO, IntVect::new(7, 3, 3)));
    let e = mf
        .fill_boundary_with(
            period,
            amrex::multifab::FillPattern::Full,
            usize::MAX - 1..=usize::MAX,
            1,
        )
        .unwrap_err();
    assert!(
        matches!(
            e.as_fab(),
            Some(FabError::ComponentsOutside { ncomp: 2, .. })
        ),
        "{e}"
    );
}

#[test]
fn parallel_copy_refuses_a_wrapping_component_range() {
    let mut dst = two_box_mf();
    let src = two_box_mf();
    let before = dst.read_region(.., dst.box_array().minimal_box()).unwrap();
    let e = dst
        .parallel_copy_with(
            &src,
            usize::MAX,
            0,
            Periodicity::non_periodic(),
            amrex::multifab::CopyOp::Copy,
            0..2,
            0,
        )
        .unwrap_err();
    assert!(
        matches!(
            e.as_fab(),
            Some(FabError::ComponentsOutside {
                start: usize::MAX,
                ..
            })
        ),
        "{e}"
    );
    assert_eq!(
        dst.read_region(.., dst.box_array().minimal_box()).unwrap(),
        before
    );
}

#[test]
fn read_region_refuses_a_wrapping_component_range() {
    let mf = two_box_mf();
    let e = mf
        .read_region(
            usize::MAX - 1..=usize::MAX,
            IndexBox::new(IntVect::ZERO, IntVect::splat(1)),
        )
        .unwrap_err();
    assert!(
        matches!(e.as_fab(), Some(FabError::ComponentsOutside { .. })),
        "{e}"
    );
}

#[test]
#[should_panic(expected = "leave the i32 index space")]
fn boxarray_new_panics_with_the_reason() {
    let _ = BoxArray::new(vec![IndexBox::new(IntVect::ZERO, IntVect::new(MAX, 0, 0))]);
}

#[test]
#[should_panic(expected = "ghost width")]
fn fabarray_new_refuses_a_ghost_width_past_the_index_space() {
    let ba = BoxArray::new(vec![IndexBox::new(IntVect::ZERO, IntVect::splat(7))]);
    let _ = MultiFab::new(
        &ba,
        &DistributionMapping::single(&ba),
        1,
        IntVect::new(0, 1 << 30, 0),
    );
}

#[test]
fn per_box_import_checks_ghost_widths() {
    let ba = BoxArray::new(vec![IndexBox::new(IntVect::ZERO, IntVect::splat(1))]);
    let dm = DistributionMapping::single(&ba);
    let t = || tensor(vec![0.0f64; 8], &[1, 2, 2, 2], &[8, 4, 2, 1], 0);
    // A negative ghost width used to be accepted (then every reduction panicked).
    let e = MultiFab::from_dlpack_per_box(&ba, &dm, IntVect::new(0, -1, 0), vec![t()]);
    assert_eq!(kind(e), ErrorKind::NegativeGhost { dir: 1, ghost: -1 });
    // A ghost width of 2^30 overflowed the grown box.
    let e = MultiFab::from_dlpack_per_box(&ba, &dm, IntVect::new(0, 1 << 30, 0), vec![t()]);
    assert!(outside(1)(kind(e)));
    // Boxes near the limits.
    let edge = BoxArray::new(vec![IndexBox::new(
        IntVect::new(MAX - 2, 0, 0),
        IntVect::new(MAX - 1, 1, 1),
    )]);
    let dm = DistributionMapping::single(&edge);
    let e = MultiFab::from_dlpack_per_box(&edge, &dm, IntVect::splat(1), vec![t()]);
    assert!(outside(0)(kind(e)));
    let mf = MultiFab::from_dlpack_per_box(&edge, &dm, IntVect::ZERO, vec![t()]).unwrap();
    assert_eq!(mf.sum(0..1, 0).unwrap(), 0.0);
}

#[test]
fn copying_importers_refuse_producer_sized_allocations() {
    // 8 bytes seen as 2^40 f64 through a zero stride: Vec aborted the process.
    let t = tensor(vec![1.0f64], &[1 << 40], &[0], 0);
    assert_eq!(
        kind(Vec::<f64>::from_dlpack(t)),
        ErrorKind::AllocationFailed
    );
    let t = tensor(vec![1.0f64], &[1 << 40], &[0], 0);
    assert!(PodVector::<f64>::from_dlpack(t).is_err());
}

// ---- plotfiles -------------------------------------------------------------------------

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "hostile-{name}-{}",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    ));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// A small valid plotfile: one level, two 4³ boxes, two variables.
fn small_plotfile(name: &str) -> PathBuf {
    let dir = scratch(name);
    let domain = IndexBox::new(IntVect::ZERO, IntVect::new(7, 3, 3));
    let ba = BoxArray::from_domain(domain, 4);
    let mut mf = MultiFab::new(&ba, &DistributionMapping::single(&ba), 2, IntVect::ZERO);
    mf.fill(1.5).unwrap();
    let geom = Geometry::cartesian(domain, [0.0; 3], [1.0; 3]).unwrap();
    plotfile::write_single_level_plotfile(&dir, &mf, &["a", "b"], &geom, 0.0, 0).unwrap();
    dir
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{from:?} not in {}", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

fn refused(dir: &Path) -> String {
    match plotfile::read_plotfile(dir) {
        Ok(_) => panic!("{} was accepted", dir.display()),
        Err(e) => e.to_string(),
    }
}

#[test]
#[cfg_attr(miri, ignore = "file I/O")]
fn plotfile_boxes_outside_the_index_space() {
    let dir = small_plotfile("edge_box");
    assert!(plotfile::read_plotfile(&dir).is_ok());
    let cell_h = dir.join("Level_0/Cell_H");
    // A box ending at i32::MAX (then `value_at` read out of bounds).
    edit(
        &cell_h,
        "((4,0,0) (7,3,3) (0,0,0))",
        "((4,0,0) (7,3,2147483647) (0,0,0))",
    );
    let e = refused(&dir);
    assert!(e.contains("index space") && e.contains("Cell_H"), "{e}");
    // A box ((-2,0,0) (2147483646,0,0)): a length of 2^31 + 1.
    let dir = small_plotfile("long_box");
    let cell_h = dir.join("Level_0/Cell_H");
    edit(
        &cell_h,
        "((0,0,0) (3,3,3) (0,0,0))",
        "((-2,0,0) (2147483646,0,0) (0,0,0))",
    );
    assert!(refused(&dir).contains("index space"));
    // A ghost width of 2^31 - 1.
    let dir = small_plotfile("ghosts");
    let cell_h = dir.join("Level_0/Cell_H");
    edit(&cell_h, "\n0\n(2 0", "\n2147483647\n(2 0");
    assert!(refused(&dir).contains("ghost width"));
}

#[test]
#[cfg_attr(miri, ignore = "file I/O")]
fn plotfile_sizes_are_checked_against_the_data_files() {
    // A Cell_H box of ~4e9 cells over an empty Cell_D: the reader allocated 64 GB before
    // it looked at the data file.
    let dir = small_plotfile("huge_box");
    let cell_h = dir.join("Level_0/Cell_H");
    edit(
        &cell_h,
        "((4,0,0) (7,3,3) (0,0,0))",
        "((4,0,0) (999999990,1,1) (0,0,0))",
    );
    std::fs::write(dir.join("Level_0/Cell_D_00000"), b"").unwrap();
    let e = refused(&dir);
    assert!(e.contains("but the file has 0 bytes"), "{e}");
}

#[test]
#[cfg_attr(miri, ignore = "file I/O")]
fn plotfile_header_numbers() {
    // finest_level = 2^64 - 1 overflowed `finest_level + 1`.
    let dir = small_plotfile("levels");
    let header = dir.join("Header");
    let text = std::fs::read_to_string(&header).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // HyperCLaw-V1.1, nvars, 2 names, dim, time, finest level.
    assert_eq!(lines[6], "0");
    let mut bad: Vec<String> = lines.iter().map(|s| (*s).to_string()).collect();
    bad[6] = "18446744073709551615".into();
    std::fs::write(&header, bad.join("\n") + "\n").unwrap();
    let e = refused(&dir);
    assert!(e.contains("18446744073709551615"), "{e}");
}

#[test]
#[cfg_attr(miri, ignore = "file I/O")]
fn plotfile_paths_stay_inside_the_plotfile() {
    let outside_dir = small_plotfile("victim");
    for (name, path) in [
        ("abs", format!("{}/Level_0/Cell", outside_dir.display())),
        ("dotdot", "../hostile-victim-x/Level_0/Cell".to_string()),
        ("inner_dotdot", "Level_0/../Level_0/Cell".to_string()),
    ] {
        let dir = small_plotfile(name);
        edit(&dir.join("Header"), "Level_0/Cell", &path);
        match plotfile::read_plotfile(&dir) {
            Err(PlotfileError::Parse { what, .. }) => {
                assert!(what.contains("inside the plotfile"), "{what}");
            }
            other => panic!("{name}: expected a parse error, got {other:?}"),
        }
    }
}
