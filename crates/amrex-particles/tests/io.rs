//! Particle plotfiles: the exact header AMReX writes, a round trip onto other grids,
//! hostile files refused with a named error, and yt's AMReX frontend reading the
//! particles (when the project's `.venv` has yt).
#![warn(clippy::cast_possible_truncation)]

use amrex_geometry::{CoordSys, Geometry, RealBox};
use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IntVect, MultiFab};
use amrex_particles::{
    AosTile, ErrorKind, ParticleArrays, ParticleContainer, ParticleTile, SoaTile, idcpu,
};
use std::path::{Path, PathBuf};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("amrex_rs_particles_{name}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn geom() -> Geometry {
    let dom = IndexBox::new(IntVect::ZERO, IntVect::new(15, 11, 7));
    let rb = RealBox::new([0.0; 3], [2.0, 1.5, 1.0]).unwrap();
    Geometry::new(dom, rb, CoordSys::Cartesian, [true; 3]).unwrap()
}

fn records<T: ParticleTile + Clone>(pc: &ParticleContainer<T>) -> Vec<(u64, Vec<u64>, Vec<i32>)> {
    let mut v = Vec::new();
    for t in pc.tiles(0) {
        let d = t.data;
        for i in 0..d.len() {
            let mut r: Vec<u64> = d.pos(i).iter().map(|x| x.to_bits()).collect();
            r.extend((0..d.num_reals()).map(|c| d.real(i, c).to_bits()));
            v.push((
                d.idcpu(i),
                r,
                (0..d.num_ints()).map(|c| d.int(i, c)).collect(),
            ));
        }
    }
    v.sort();
    v
}

fn filled() -> ParticleContainer<AosTile<2, 1>> {
    let g = geom();
    let ba = BoxArray::from_domain(g.domain(), 8);
    let dm = DistributionMapping::new(&ba);
    let mut pc = ParticleContainer::new(g, &ba, &dm, AosTile::<2, 1>::new(1, 0));
    pc.init_random(700, 17, &[0.0, 0.0, 0.0], &[0]).unwrap();
    pc.par_for_each_tile(0, |t| {
        for i in 0..t.data.len() {
            let id = idcpu::id(t.data.idcpu(i));
            t.data.set_real(i, 0, id as f64 * 0.5);
            t.data.set_real(i, 1, -(id as f64));
            t.data.set_real(i, 2, 1.0 / id as f64);
            t.data.set_int(i, 0, (id % 3) as i32);
        }
    });
    pc
}

#[test]
fn header_is_what_amrex_writes_and_round_trip_onto_other_grids() {
    let pc = filled();
    let dir = tmp("roundtrip");
    pc.write_plotfile(&dir, "particles", &["charge", "vx", "w"], &["species"])
        .unwrap();
    let h = std::fs::read_to_string(dir.join("particles/Header")).unwrap();
    let lines: Vec<&str> = h.lines().collect();
    assert_eq!(
        &lines[..13],
        &[
            "Version_Two_Dot_Zero_double",
            "3",
            "3",
            "charge",
            "vx",
            "w",
            "1",
            "species",
            "1",
            "700",
            "701",
            "0",
            "4"
        ]
    );
    assert_eq!(lines.len(), 13 + 4);
    let ph = std::fs::read_to_string(dir.join("particles/Level_0/Particle_H")).unwrap();
    assert!(ph.starts_with("(4 0\n((0,0,0) (7,7,7) (0,0,0))\n"), "{ph}");
    // Per grid: ints (id, cpu, species) then reals (x, y, z, charge, vx, w).
    let first: Vec<u64> = lines[13].split(' ').map(|x| x.parse().unwrap()).collect();
    let data = std::fs::read(dir.join("particles/Level_0/DATA_00000")).unwrap();
    let count = usize::try_from(first[1]).unwrap();
    // 700 particles, each 3 ints and 6 doubles, all in this one rank's file.
    assert_eq!(data.len(), 700 * (3 * 4 + 6 * 8));
    assert_eq!(first[..1], [0]);
    let id0 = i32::from_le_bytes(data[0..4].try_into().unwrap());
    let x0 = f64::from_le_bytes(data[12 * count..12 * count + 8].try_into().unwrap());
    let grid0 = BoxArray::from_domain(geom().domain(), 8).get(0);
    assert!(id0 > 0);
    assert!(
        grid0.contains(
            geom()
                .cell_index([x0, 0.0, 0.0])
                .unwrap()
                .with(1, 0)
                .with(2, 0)
        )
    );

    // Read onto other grids (and the pure-SoA layout): the same particles.
    let g = geom();
    let ba = BoxArray::from_domain(g.domain(), 4);
    let dm = DistributionMapping::new(&ba);
    let mut back = ParticleContainer::new(g, &ba, &dm, AosTile::<2, 1>::new(1, 0));
    assert_eq!(back.read_plotfile(&dir, "particles").unwrap(), 700);
    assert_eq!(records(&back), records(&pc));
    assert_eq!(back.next_id(), 701);
    let mut soa = ParticleContainer::new(g, &ba, &dm, SoaTile::<6, 1>::new(0, 0));
    soa.read_plotfile(&dir, "particles").unwrap();
    assert_eq!(records(&soa), records(&pc));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn hostile_files_are_refused_with_a_named_error() {
    let pc = filled();
    let dir = tmp("hostile");
    pc.write_plotfile(&dir, "p", &["a", "b", "c"], &["i"])
        .unwrap();
    let g = geom();
    let ba = BoxArray::from_domain(g.domain(), 8);
    let dm = DistributionMapping::new(&ba);
    // Other component counts.
    let mut other = ParticleContainer::new(g, &ba, &dm, AosTile::<1, 1>::new(0, 0));
    let e = other.read_plotfile(&dir, "p").unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Format { .. }), "{e}");
    assert!(e.to_string().contains("3 real and 1 int"), "{e}");
    assert_eq!(other.num_particles().unwrap(), 0);
    // Names that are not one per component.
    let e = pc.write_plotfile(&dir, "q", &["a"], &["i"]).unwrap_err();
    assert!(
        matches!(
            e.kind(),
            ErrorKind::ComponentCount {
                expected: 3,
                found: 1,
                ..
            }
        ),
        "{e}"
    );
    // A truncated data file.
    let f = dir.join("p/Level_0/DATA_00000");
    let len = std::fs::metadata(&f).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&f)
        .unwrap()
        .set_len(len - 8)
        .unwrap();
    let mut back = ParticleContainer::new(g, &ba, &dm, AosTile::<2, 1>::new(1, 0));
    let e = back.read_plotfile(&dir, "p").unwrap_err();
    assert!(e.to_string().contains("need"), "{e}");
    assert_eq!(back.num_particles().unwrap(), 0, "nothing added");
    // A header whose counts disagree, a bad version, a missing directory.
    let hp = dir.join("p/Header");
    let h = std::fs::read_to_string(&hp).unwrap();
    std::fs::write(&hp, h.replace("\n700\n", "\n701\n")).unwrap();
    let e = back.read_plotfile(&dir, "p").unwrap_err();
    assert!(
        e.to_string()
            .contains("the grids hold 700 particles, the header says 701"),
        "{e}"
    );
    std::fs::write(
        &hp,
        h.replace("Version_Two_Dot_Zero_double", "Version_Three"),
    )
    .unwrap();
    let e = back.read_plotfile(&dir, "p").unwrap_err();
    assert!(
        e.to_string().contains("unknown version \"Version_Three\""),
        "{e}"
    );
    let e = back.read_plotfile(&dir, "nothing").unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Io { .. }), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ids_beyond_the_formats_i32_are_refused_not_cut() {
    let g = geom();
    let ba = BoxArray::from_domain(g.domain(), 8);
    let dm = DistributionMapping::new(&ba);
    let (x, y, z) = ([0.1, 1.9], [0.1, 1.4], [0.1, 0.9]);
    let empty = || ParticleContainer::new(g, &ba, &dm, AosTile::<0, 0>::new(0, 0));
    let with_ids = |ids: &[i64]| {
        let mut pc = empty();
        pc.add_particles(&ParticleArrays::new(&x, &y, &z).with_ids(ids))
            .unwrap();
        pc
    };
    // i32::MAX is the largest id the format holds: written and read back.
    let dir = tmp("big_ids");
    let top = i64::from(i32::MAX);
    with_ids(&[1, top])
        .write_plotfile(&dir, "p", &[], &[])
        .unwrap();
    let mut back = empty();
    assert_eq!(back.read_plotfile(&dir, "p").unwrap(), 2);
    let mut got: Vec<i64> = back
        .tiles(0)
        .flat_map(|t| (0..t.data.len()).map(move |i| idcpu::id(t.data.idcpu(i))))
        .collect();
    got.sort_unstable();
    assert_eq!(got, [1, top]);
    // One more is refused (its low 32 bits would read back as i32::MIN), and no header
    // is written.
    let e = with_ids(&[1, top + 1])
        .write_plotfile(&dir, "q", &[], &[])
        .unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::BadId { id: top + 1 });
    assert!(!dir.join("q/Header").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The project's Python, if it has yt.
fn python_with_yt() -> Option<PathBuf> {
    let py = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python");
    let ok = std::process::Command::new(&py)
        .args(["-c", "import yt"])
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some(py)
}

#[test]
fn yt_reads_the_particles() {
    let Some(py) = python_with_yt() else {
        eprintln!(
            "yt_reads_the_particles: skipped (no .venv with yt; scripts/setup.sh installs it)"
        );
        return;
    };
    let pc = filled();
    let g = geom();
    let lev = pc.level(0).unwrap();
    let mut mf = MultiFab::new(lev.box_array(), lev.distribution_map(), 1, IntVect::ZERO);
    mf.set_val(1.0, .., 0).unwrap();
    let dir = tmp("yt");
    amrex_plotfile::write_single_level_plotfile(&dir, &mf, &["rho"], &g, 0.0, 0).unwrap();
    pc.write_plotfile(&dir, "particles", &["charge", "vx", "w"], &["species"])
        .unwrap();
    let script = r#"
import sys, numpy as np, yt
yt.set_log_level(50)
ds = yt.load(sys.argv[1])
ad = ds.all_data()
x = np.asarray(ad["particle_position_x"])
i = np.asarray(ad["particle_id"]).astype(np.int64)
q = np.asarray(ad["particle_charge"])
o = np.argsort(i)
print(len(x), i[o][0], i[o][-1], repr(float(x[o][0])), repr(float(q[o][-1])))
"#;
    let out = std::process::Command::new(&py)
        .arg("-c")
        .arg(script)
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = String::from_utf8(out.stdout).unwrap();
    let r = records(&pc);
    let x1 = f64::from_bits(r.iter().find(|p| idcpu::id(p.0) == 1).unwrap().1[0]);
    let q700 = f64::from_bits(r.iter().find(|p| idcpu::id(p.0) == 700).unwrap().1[3]);
    assert_eq!(s.trim(), format!("700 1 700 {x1:?} {q700:?}"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn two_levels_round_trip() {
    let g0 = geom();
    let g1 = g0.refine(IntVect::splat(2)).unwrap();
    let ba0 = BoxArray::from_domain(g0.domain(), 8);
    let ba1 = BoxArray::from_domain(
        IndexBox::new(IntVect::new(8, 8, 4), IntVect::new(23, 15, 11)),
        8,
    );
    let (dm0, dm1) = (
        DistributionMapping::new(&ba0),
        DistributionMapping::new(&ba1),
    );
    let mk = || {
        ParticleContainer::new_hierarchy(
            &[g0, g1],
            &[ba0.clone(), ba1.clone()],
            &[dm0.clone(), dm1.clone()],
            SoaTile::<4, 0>::new(0, 0),
        )
        .unwrap()
    };
    let mut pc = mk();
    pc.init_random(500, 3, &[2.5], &[]).unwrap();
    let (n0, n1) = (
        pc.number_of_particles_at_level(0, true, true).unwrap(),
        pc.number_of_particles_at_level(1, true, true).unwrap(),
    );
    assert!(n0 > 0 && n1 > 0 && n0 + n1 == 500);
    let dir = tmp("levels");
    pc.write_plotfile(&dir, "p", &["q"], &[]).unwrap();
    let h = std::fs::read_to_string(dir.join("p/Header")).unwrap();
    let lines: Vec<&str> = h.lines().collect();
    // The count, the next id, finest level 1, then the grids of each level.
    assert_eq!(
        &lines[6..11],
        &[
            "500",
            "501",
            "1",
            &ba0.len().to_string(),
            &ba1.len().to_string()
        ]
    );
    assert!(dir.join("p/Level_1/Particle_H").exists());
    let mut back = mk();
    assert_eq!(back.read_plotfile(&dir, "p").unwrap(), 500);
    assert_eq!(
        back.number_of_particles_at_level(1, true, true).unwrap(),
        n1
    );
    let ids = |pc: &ParticleContainer<SoaTile<4, 0>>| {
        let mut v: Vec<(u64, u64)> = (0..2)
            .flat_map(|l| {
                pc.tiles(l)
                    .flat_map(|t| {
                        (0..t.data.len())
                            .map(move |i| (t.data.idcpu(i), t.data.pos(i)[0].to_bits()))
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        v.sort_unstable();
        v
    };
    assert_eq!(ids(&back), ids(&pc));
    std::fs::remove_dir_all(&dir).unwrap();
}
