//! The plotfile reader over a plotfile directory made of fuzzer bytes: a `Header`, one
//! level's `Cell_H` and its data file `Cell_D_00000`, then what a user does with the
//! result (values at points, reductions). Anything but a clean error or a plotfile whose
//! values can be read is a finding: a panic, a hang, an allocation the files do not
//! justify (libFuzzer's `-rss_limit_mb` and `-malloc_limit_mb` catch those).
//!
//! Input: two little-endian `u16` lengths, then that many bytes of `Header`, then of
//! `Cell_H`; the rest is the data file.
#![no_main]

use amrex_box::IntVect;
use amrex_plotfile as plotfile;
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("amrex-fuzz-plotfile-{}", std::process::id()));
        std::fs::create_dir_all(d.join("Level_0")).unwrap();
        d
    })
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let hl = usize::from(u16::from_le_bytes([data[0], data[1]]));
    let cl = usize::from(u16::from_le_bytes([data[2], data[3]]));
    let rest = &data[4..];
    let (header, rest) = rest.split_at(hl.min(rest.len()));
    let (cell_h, cell_d) = rest.split_at(cl.min(rest.len()));
    let d = dir();
    std::fs::write(d.join("Header"), header).unwrap();
    std::fs::write(d.join("Level_0/Cell_H"), cell_h).unwrap();
    std::fs::write(d.join("Level_0/Cell_D_00000"), cell_d).unwrap();
    let Ok(_) = plotfile::read_plotfile_header(d) else {
        return;
    };
    let Ok(p) = plotfile::read_plotfile(d) else {
        return;
    };
    for mf in &p.levels {
        let nc = mf.ncomp();
        let _ = mf.sum(..nc, 0).unwrap();
        let _ = mf.max(..nc, 0).unwrap();
        for b in mf.box_array().boxes() {
            for n in 0..nc {
                let _ = mf.value_at(b.lo(), n);
                let _ = mf.value_at(b.hi(), n);
            }
        }
    }
});
