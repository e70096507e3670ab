//! `AmrInfo`/`AmrMesh` against AMReX's rules: the `amr.*` keys and their defaults,
//! every `checkInput` rule as its own error, `MakeBaseGrids` and `ChopGrids`; and the
//! regrid driver (`AmrCore`) on a toy simulation whose tags are a function of position:
//! after every regrid the grids are properly nested, aligned to the blocking factor and
//! no longer than `max_grid_size`, cover every tag, and stay inside the domain; a tag
//! in a ghost cell beyond a wall makes no grid outside the domain; and an `error_est`
//! that fails or panics is an error, not a crash.
#![warn(clippy::cast_possible_truncation)]

use amrex_amr::{AmrCore, AmrError, AmrErrorKind, AmrInfo, AmrMesh, TagBoxArray};
use amrex_geometry::{CoordSys, Geometry, RealBox};
use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IntVect, Tiling};
use amrex_runtime::ParmParse;

fn geom(n: [i32; 3], periodic: [bool; 3]) -> Geometry {
    Geometry::new(
        IndexBox::new(IntVect::ZERO, IntVect::new(n[0] - 1, n[1] - 1, n[2] - 1)),
        RealBox::UNIT,
        CoordSys::Cartesian,
        periodic,
    )
    .unwrap()
}

fn info(max_level: usize) -> AmrInfo {
    AmrInfo {
        max_level,
        max_grid_size: vec![IntVect::splat(16)],
        ..AmrInfo::default()
    }
}

fn rule_of(e: &AmrError) -> &'static str {
    match e.kind() {
        AmrErrorKind::BadMeshInput { rule, .. } => rule,
        k => panic!("expected BadMeshInput, got {k:?}"),
    }
}

#[test]
fn parm_parse_keys_and_defaults() {
    let pp = ParmParse::from_text(
        "amr.n_cell = 64 64 8\namr.max_level = 2\namr.ref_ratio = 2 4\n\
         amr.blocking_factor_x = 8\namr.blocking_factor_y = 8 16\namr.blocking_factor_z = 4\n\
         amr.max_grid_size = 16 32\namr.n_error_buf = 2\namr.grid_eff = 0.8\n\
         amr.refine_grid_layout_z = 0\n\
         geometry.prob_lo = 0 0 0\ngeometry.prob_hi = 1 1 0.125\ngeometry.is_periodic = 1 0 1\n",
        "inputs",
    )
    .unwrap();
    let i = AmrInfo::from_parm_parse(&pp).unwrap();
    assert_eq!(i.max_level, 2);
    assert_eq!(i.ref_ratio, vec![IntVect::splat(2), IntVect::splat(4)]);
    // Per direction, the last value repeated for the finer levels.
    assert_eq!(
        i.blocking_factor,
        vec![
            IntVect::new(8, 8, 4),
            IntVect::new(8, 16, 4),
            IntVect::new(8, 16, 4)
        ]
    );
    assert_eq!(
        i.max_grid_size,
        vec![IntVect::splat(16), IntVect::splat(32), IntVect::splat(32)]
    );
    assert_eq!(i.n_error_buf, vec![IntVect::splat(2); 3]);
    assert_eq!(i.grid_eff, 0.8);
    assert_eq!(i.n_proper, 1);
    assert_eq!(i.refine_grid_layout, [true, true, false]);
    let mesh = AmrMesh::from_parm_parse(&pp).unwrap();
    assert_eq!(
        mesh.geom(0).domain(),
        IndexBox::new(IntVect::ZERO, IntVect::new(63, 63, 7))
    );
    assert_eq!(
        mesh.geom(2).domain(),
        IndexBox::new(IntVect::ZERO, IntVect::new(511, 511, 63))
    );
    assert_eq!(mesh.geom(0).periodic_flags(), [true, false, true]);
    assert_eq!(mesh.geom(0).prob_hi(), [1.0, 1.0, 0.125]);
    assert_eq!(mesh.finest_level(), None);

    // AMReX's defaults where nothing is given.
    let d =
        AmrInfo::from_parm_parse(&ParmParse::from_text("amr.max_level = 1", "x").unwrap()).unwrap();
    assert_eq!(d.blocking_factor, vec![IntVect::splat(8); 2]);
    assert_eq!(d.max_grid_size, vec![IntVect::splat(32); 2]);
    assert_eq!(d.ref_ratio, vec![IntVect::splat(2)]);
    assert_eq!((d.grid_eff, d.n_proper, d.check_input), (0.7, 1, true));
}

#[test]
fn parm_parse_errors_name_the_key() {
    let e = AmrInfo::from_parm_parse(&ParmParse::from_text("amr.n_cell = 8 8 8", "in").unwrap())
        .unwrap_err();
    assert!(matches!(e.kind(), AmrErrorKind::Input(_)), "{e}");
    assert!(e.to_string().contains("amr.max_level"), "{e}");
    let pp = ParmParse::from_text("amr.max_level = 1\namr.grid_eff = high", "in").unwrap();
    let e = AmrInfo::from_parm_parse(&pp).unwrap_err();
    assert!(e.to_string().contains("amr.grid_eff"), "{e}");
    let pp = ParmParse::from_text(
        "amr.max_level = 1\namr.ref_ratio = 2\namr.ref_ratio_vect = 2 2 2",
        "in",
    )
    .unwrap();
    let e = AmrInfo::from_parm_parse(&pp).unwrap_err();
    assert!(e.to_string().contains("not both"), "{e}");
    let pp = ParmParse::from_text(
        "amr.max_level = 0\namr.n_cell = 8 8\ngeometry.prob_lo = 0 0 0\ngeometry.prob_hi = 1 1 1",
        "in",
    )
    .unwrap();
    let e = AmrMesh::from_parm_parse(&pp).unwrap_err();
    assert!(e.to_string().contains("amr.n_cell"), "{e}");
    // A max_level far beyond AMReX's range is refused before any per-level list is made
    // (found by the parm_parse fuzz target: a 2^31-level Vec), from inputs and from code.
    let pp = ParmParse::from_text("amr.max_level = 2147483647", "in").unwrap();
    let e = AmrInfo::from_parm_parse(&pp).unwrap_err();
    assert!(
        e.to_string().contains("amr.max_level") && e.to_string().contains("999"),
        "{e}"
    );
    let e = AmrMesh::new(geom([8, 8, 8], [false; 3]), info(1 << 40)).unwrap_err();
    assert!(e.to_string().contains("amr.max_level"), "{e}");
    // Keys AMReX does not read from inputs are not read here either, and so are listed
    // as unused.
    let pp = ParmParse::from_text(
        "amr.max_level = 0
amr.use_new_chop = 1",
        "in",
    )
    .unwrap();
    assert!(!AmrInfo::from_parm_parse(&pp).unwrap().use_new_chop);
    assert_eq!(pp.unused().len(), 1);
    assert_eq!(pp.unused()[0].0, "amr.use_new_chop");
}

#[test]
fn check_input_rules_are_specific_errors() {
    let g = geom([64, 64, 8], [true; 3]);
    // The domain is not a multiple of the blocking factor.
    let e = AmrMesh::new(geom([60, 64, 8], [true; 3]), info(1)).unwrap_err();
    assert_eq!(
        rule_of(&e),
        "domain size not divisible by the blocking factor"
    );
    assert!(e.to_string().contains("direction 0"), "{e}");
    // A blocking factor that is not a power of 2.
    let mut i = info(1);
    i.blocking_factor = vec![IntVect::splat(8), IntVect::new(8, 12, 8)];
    i.max_grid_size = vec![IntVect::splat(24)];
    assert_eq!(
        rule_of(&AmrMesh::new(g, i).unwrap_err()),
        "blocking factor not a power of 2"
    );
    // bf[l] * rr[l] < bf[l+1].
    let mut i = info(1);
    i.blocking_factor = vec![IntVect::splat(4), IntVect::splat(16)];
    let e = AmrMesh::new(g, i).unwrap_err();
    assert!(
        rule_of(&e).starts_with("blocking factors vary too much"),
        "{e}"
    );
    // max_grid_size not a multiple of the blocking factor.
    let mut i = info(1);
    i.max_grid_size = vec![IntVect::splat(20)];
    i.blocking_factor = vec![IntVect::splat(8)];
    let e = AmrMesh::new(g, i).unwrap_err();
    assert_eq!(
        rule_of(&e),
        "max_grid_size not divisible by the blocking factor"
    );
    // Ratios out of range.
    for r in [IntVect::splat(1), IntVect::new(2, 0, 2), IntVect::splat(32)] {
        let mut i = info(1);
        i.ref_ratio = vec![r];
        let e = AmrMesh::new(g, i).unwrap_err();
        assert!(
            rule_of(&e).starts_with("refinement ratio out of range"),
            "{r}: {e}"
        );
    }
    // Coarse blocking factor not a multiple of the fine one over the ratio.
    let mut i = info(1);
    i.blocking_factor = vec![IntVect::splat(8), IntVect::splat(16)];
    i.max_grid_size = vec![IntVect::splat(4)];
    let e = AmrMesh::new(g, i).unwrap_err();
    assert!(
        rule_of(&e).starts_with("coarse blocking factor not a multiple"),
        "{e}"
    );
    // Out-of-range efficiency; and check_input = false lets an odd layout through.
    let mut i = info(1);
    i.grid_eff = 1.5;
    assert!(matches!(
        AmrMesh::new(g, i).unwrap_err().kind(),
        AmrErrorKind::BadParameter { .. }
    ));
    let mut i = info(0);
    i.check_input = false;
    assert!(AmrMesh::new(geom([60, 64, 8], [true; 3]), i).is_ok());
}

#[test]
fn base_grids_and_chop_follow_amrex() {
    // The tutorial's level 0: 64x64x8 in 16^3 chunks -> 4x4x1 boxes of 16x16x8.
    let mesh = AmrMesh::new(geom([64, 64, 8], [true; 3]), info(0)).unwrap();
    let ba = mesh.make_base_grids(1);
    assert_eq!(ba.len(), 16);
    assert_eq!(
        ba.get(0),
        IndexBox::new(IntVect::ZERO, IntVect::new(15, 15, 7))
    );
    assert_eq!(
        ba.get(1),
        IndexBox::new(IntVect::new(16, 0, 0), IntVect::new(31, 15, 7))
    );
    // 40 ranks: the chunk (16, 16, 8), at most the domain, is halved in its longest
    // direction (the highest among equals) while the half is a multiple of 8, one
    // direction per round: y to 32 boxes, then x to 64 boxes of 8³.
    let ba = mesh.make_base_grids(40);
    assert_eq!(ba.len(), 64);
    assert!(ba.boxes().iter().all(|b| b.length() == IntVect::splat(8)));
    let ba = mesh.make_base_grids(20);
    assert_eq!(ba.len(), 32);
    assert!(
        ba.boxes()
            .iter()
            .all(|b| b.length() == IntVect::new(16, 8, 8))
    );
    // An odd number of cells in a direction keeps that direction at factor 1.
    let mut i = info(0);
    i.blocking_factor = vec![IntVect::new(8, 8, 1)];
    i.max_grid_size = vec![IntVect::splat(16)];
    let mesh = AmrMesh::new(geom([32, 32, 3], [true; 3]), i).unwrap();
    let ba = mesh.make_base_grids(1);
    assert_eq!(ba.num_pts(), 32 * 32 * 3);
    assert!(ba.boxes().iter().all(|b| b.length()[2] == 3));
}

/// A toy simulation: tags wherever `f(x, y, z) > 0` on every level, data is nothing but
/// the layout, and a switch that makes `error_est` fail or panic.
struct Toy {
    mesh: AmrMesh,
    tag: fn([f64; 3], f64) -> bool,
    fail: Option<&'static str>,
    made: Vec<(usize, &'static str, usize)>,
    tag_ghosts: bool,
}

impl Toy {
    fn new(mesh: AmrMesh, tag: fn([f64; 3], f64) -> bool) -> Self {
        Self {
            mesh,
            tag,
            fail: None,
            made: Vec::new(),
            tag_ghosts: false,
        }
    }
}

/// The toy's own error: its `error_est` refusal, or the drivers'.
#[derive(Debug)]
enum ToyError {
    /// `error_est` refused level `.0`.
    Refused(usize),
    /// The drivers (grids, tags, MPI).
    Amr(AmrError),
}

impl From<AmrError> for ToyError {
    fn from(e: AmrError) -> Self {
        Self::Amr(e)
    }
}

impl core::fmt::Display for ToyError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Refused(lev) => write!(f, "toy error_est refused level {lev}"),
            Self::Amr(e) => write!(f, "{e}"),
        }
    }
}

impl AmrCore for Toy {
    type Error = ToyError;

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
        time: f64,
        _ng: usize,
    ) -> Result<(), ToyError> {
        match self.fail {
            Some("error") => return Err(ToyError::Refused(lev)),
            Some("panic") => panic!("toy error_est panics on level {lev}"),
            _ => {}
        }
        let g = *self.mesh.geom(lev);
        let ng = if self.tag_ghosts {
            tags.fab_array_mut().n_grow()
        } else {
            IntVect::ZERO
        };
        tags.fab_array_mut()
            .par_for_each_tile(Tiling::None, ng, |mut t| {
                let bx = t.region();
                t.array_mut().for_each_mut(bx, |i, j, k, _n, v| {
                    if (self.tag)(g.cell_centre(IntVect::new(i, j, k)), time) {
                        *v = TagBoxArray::SET;
                    }
                });
            });
        Ok(())
    }
    fn make_new_level_from_scratch(
        &mut self,
        lev: usize,
        _t: f64,
        ba: &BoxArray,
        _dm: &DistributionMapping,
    ) -> Result<(), ToyError> {
        self.made.push((lev, "scratch", ba.len()));
        Ok(())
    }
    fn make_new_level_from_coarse(
        &mut self,
        lev: usize,
        _t: f64,
        ba: &BoxArray,
        _dm: &DistributionMapping,
    ) -> Result<(), ToyError> {
        self.made.push((lev, "coarse", ba.len()));
        Ok(())
    }
    fn remake_level(
        &mut self,
        lev: usize,
        _t: f64,
        ba: &BoxArray,
        _dm: &DistributionMapping,
    ) -> Result<(), ToyError> {
        self.made.push((lev, "remake", ba.len()));
        Ok(())
    }
    fn clear_level(&mut self, lev: usize) {
        self.made.push((lev, "clear", 0));
    }
}

/// Every invariant a regrid promises, on every level above 0.
fn check_hierarchy(t: &Toy) {
    let m = &t.mesh;
    let finest = m.finest_level().unwrap();
    for lev in 1..=finest {
        let ba = m.box_array(lev);
        let dom = m.geom(lev).domain();
        let bf = m.info().blocking_factor[lev];
        let mgs = m.info().max_grid_size[lev];
        assert!(ba.is_disjoint(), "level {lev} overlaps");
        for b in ba.boxes() {
            assert!(dom.contains_box(b), "level {lev}: {b} outside {dom}");
            assert!(b.length().all_le(mgs), "level {lev}: {b} longer than {mgs}");
            for d in 0..3 {
                assert_eq!(
                    b.small_end()[d] % bf[d],
                    0,
                    "level {lev}: {b} not aligned to {bf}"
                );
                assert_eq!(
                    b.length()[d] % bf[d],
                    0,
                    "level {lev}: {b} not a multiple of {bf}"
                );
            }
        }
        // Proper nesting: each fine box grown by n_proper coarse cells (inside the
        // domain, periodic images folded back) is covered by the coarser level.
        let r = m.ref_ratio(lev - 1);
        let crse = m.box_array(lev - 1);
        let cdom = m.geom(lev - 1).domain();
        let np = IntVect::splat(m.info().n_proper);
        for b in ba.coarsen(r).boxes() {
            let grown = b.grow_iv(np).intersection(&cdom).unwrap();
            assert!(
                crse.contains_box(&grown),
                "level {lev}: {b} not properly nested in level {}",
                lev - 1
            );
        }
    }
}

fn blob(x: [f64; 3], t: f64) -> bool {
    let c = [0.3 + 0.4 * t, 0.5, 0.5];
    (x[0] - c[0]).powi(2) + (x[1] - c[1]).powi(2) + (x[2] - c[2]).powi(2) < 0.02
}

#[test]
fn regrid_keeps_every_invariant() {
    let mut i = info(2);
    i.blocking_factor = vec![IntVect::splat(4)];
    let mut toy = Toy::new(
        AmrMesh::new(geom([32, 32, 32], [false; 3]), i).unwrap(),
        blob,
    );
    toy.init_from_scratch(0.0).unwrap();
    assert_eq!(toy.mesh.finest_level(), Some(2));
    check_hierarchy(&toy);
    for step in 1..=6 {
        let t = f64::from(step) * 0.1;
        toy.regrid(0, t).unwrap();
        check_hierarchy(&toy);
        // Every tagged cell of level 0 is covered by level 1.
        let g = *toy.mesh.geom(0);
        let l1 = toy.mesh.box_array(1).coarsen(toy.mesh.ref_ratio(0));
        for p in g.domain().iter() {
            if blob(g.cell_centre(p), t) {
                assert!(l1.contains(p), "step {step}: tagged {p} not refined");
            }
        }
    }
    assert!(toy.made.iter().any(|m| m.1 == "remake"), "{:?}", toy.made);
    // Nothing tagged: the fine levels go.
    toy.tag = |_, _| false;
    toy.regrid(0, 1.0).unwrap();
    assert_eq!(toy.mesh.finest_level(), Some(0));
    assert!(
        toy.made.ends_with(&[(1, "clear", 0), (2, "clear", 0)])
            || toy.made.iter().filter(|m| m.1 == "clear").count() == 2,
        "{:?}",
        toy.made
    );
}

#[test]
fn periodic_tags_at_the_edge_and_tags_beyond_a_wall() {
    // Tags in the corner of a domain periodic in x: the grids stay inside the domain,
    // and still nest.
    let mut i = info(1);
    i.blocking_factor = vec![IntVect::splat(4)];
    let corner = |x: [f64; 3], _: f64| x[0] < 0.1 && x[1] < 0.2;
    let mut toy = Toy {
        tag_ghosts: true,
        ..Toy::new(
            AmrMesh::new(geom([32, 32, 8], [true, false, false]), i.clone()).unwrap(),
            corner,
        )
    };
    toy.init_from_scratch(0.0).unwrap();
    assert_eq!(toy.mesh.finest_level(), Some(1));
    check_hierarchy(&toy);
    // Ghost tags beyond the walls (y < 0, z outside) make no cells outside the domain;
    // the ones beyond the periodic x edge fold onto the far side of the domain.
    let fine = toy.mesh.box_array(1);
    assert!(fine.contains(IntVect::new(0, 0, 0)));
    assert!(
        fine.contains(IntVect::new(63, 0, 0)),
        "the periodic image of a ghost tag"
    );
}

#[test]
fn failing_or_panicking_error_est_is_an_error() {
    for how in ["error", "panic"] {
        let mut toy = Toy {
            fail: Some(how),
            ..Toy::new(
                AmrMesh::new(geom([16, 16, 16], [false; 3]), info(1)).unwrap(),
                blob,
            )
        };
        // The rank whose error_est failed gets its own error back; a panic is the
        // drivers' ErrorEstFailed.
        match (how, toy.init_from_scratch(0.0).unwrap_err()) {
            ("error", ToyError::Refused(0)) => {}
            ("panic", ToyError::Amr(e)) => match e.kind() {
                AmrErrorKind::ErrorEstFailed {
                    level: 0,
                    ranks: 1,
                    message,
                } => assert!(message.contains("panics on level 0"), "{message}"),
                k => panic!("{how}: {k:?}"),
            },
            (how, e) => panic!("{how}: {e}"),
        }
        // Level 0 exists; nothing above it was made.
        assert_eq!(toy.mesh.finest_level(), Some(0));
    }
    // regrid from a level at max_level does nothing; regrid before init is an error.
    let mut toy = Toy::new(
        AmrMesh::new(geom([16, 16, 16], [false; 3]), info(1)).unwrap(),
        blob,
    );
    assert!(toy.regrid(0, 0.0).is_err());
    toy.init_from_scratch(0.0).unwrap();
    toy.regrid(1, 0.0).unwrap();
}
