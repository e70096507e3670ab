//! The checkpoint reader over a checkpoint directory made of fuzzer bytes: a `Header`,
//! level 0's `phi_H` and its data file `phi_D_00000`, then what a restart does with them:
//! the `Header`'s lines read as integers and reals, its grids installed on an `AmrMesh`
//! (which refuses grids that do not fit), level 0's `phi` read onto a map of its grids,
//! and reductions over it. Anything but a clean error or data that can be read is a
//! finding: a panic, a hang, an allocation the files do not justify.
//!
//! Input: two little-endian `u16` lengths, then that many bytes of `Header`, then of
//! `phi_H`; the rest is the data file.
#![no_main]

use amrex_amr::{AmrInfo, AmrMesh};
use amrex_box::{IndexBox, IntVect};
use amrex_geometry::{CoordSys, Geometry, RealBox};
use amrex_multifab::DistributionMapping;
use amrex_plotfile as plotfile;
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("amrex-fuzz-chk-{}", std::process::id()));
        std::fs::create_dir_all(d.join("Level_0")).unwrap();
        d
    })
}

/// An 8³ domain, two levels allowed: what the grids of a fuzzed `Header` must fit.
fn mesh() -> AmrMesh {
    let dom = IndexBox::new(IntVect::ZERO, IntVect::splat(7));
    let geom = Geometry::new(dom, RealBox::UNIT, CoordSys::Cartesian, [true; 3]).unwrap();
    let info = AmrInfo {
        max_level: 1,
        blocking_factor: vec![IntVect::splat(2)],
        max_grid_size: vec![IntVect::splat(8)],
        ..AmrInfo::default()
    };
    AmrMesh::new(geom, info).unwrap()
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let hl = usize::from(u16::from_le_bytes([data[0], data[1]]));
    let ml = usize::from(u16::from_le_bytes([data[2], data[3]]));
    let rest = &data[4..];
    let (header, rest) = rest.split_at(hl.min(rest.len()));
    let (phi_h, phi_d) = rest.split_at(ml.min(rest.len()));
    let d = dir();
    std::fs::write(d.join("Header"), header).unwrap();
    std::fs::write(d.join("Level_0/phi_H"), phi_h).unwrap();
    std::fs::write(d.join("Level_0/phi_D_00000"), phi_d).unwrap();
    let Ok(h) = plotfile::read_checkpoint_header(d) else {
        return;
    };
    for i in 0..h.lines.len() + 1 {
        let _ = h.ints(i);
        let _ = h.reals(i);
    }
    // The text written back reads back the same.
    assert_eq!(plotfile::CheckpointHeader::parse(&h.to_text()).unwrap().grids, h.grids);
    let mut m = mesh();
    let _ = m.restore_grids(&h.grids);
    let ba = &h.grids[0];
    let dm = DistributionMapping::new(ba);
    let Ok(mf) = plotfile::read_checkpoint_multifab(d, 0, "phi", ba, &dm) else {
        return;
    };
    let nc = mf.ncomp();
    let _ = mf.sum(..nc, 0).unwrap();
    let _ = mf.max(..nc, 0).unwrap();
});
