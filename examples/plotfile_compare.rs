//! Compares two AMReX plotfiles, or two checkpoints: `plotfile_compare A B [rtol]`.
//!
//! Plotfiles must have the same variables, finest level, domains, refinement ratios,
//! level steps, cell sizes and problem box; the same time to `rtol`; on every level the
//! same boxes in the same order (the order of `Cell_H`); and in every valid cell of
//! every variable values equal to a relative tolerance `rtol` (default 1e-12): `|a - b|
//! <= rtol * max(|a|, |b|)`.
//!
//! Checkpoints (a `Header` that is not a plotfile's) must have the same title, the same
//! grids on every level, the same numbers in the caller's `Header` lines (to `rtol`),
//! the same MultiFabs (`Level_L/<name>_H`) and in them values equal to `rtol`, whatever
//! the number of ranks that wrote them (the data files may be cut differently).
//!
//! It prints one line per level with the largest relative difference and exits with
//! status 1 if anything differs, naming what.
use amrex::multifab::{MultiFab, Tiling};
use amrex::plotfile::{
    CheckpointHeader, Plotfile, read_checkpoint_header, read_multifab, read_plotfile,
};

fn rel(a: f64, b: f64) -> f64 {
    if a == b {
        0.0
    } else {
        (a - b).abs() / a.abs().max(b.abs())
    }
}

fn compare(a: &Plotfile, b: &Plotfile, rtol: f64) -> Vec<String> {
    let (ha, hb) = (&a.header, &b.header);
    let mut bad = Vec::new();
    macro_rules! same {
        ($what:literal, $x:expr, $y:expr) => {
            if $x != $y {
                bad.push(format!("{}: {:?} vs {:?}", $what, $x, $y));
            }
        };
    }
    same!("variables", ha.var_names, hb.var_names);
    same!("finest level", ha.finest_level, hb.finest_level);
    same!("domains", ha.domains, hb.domains);
    same!("refinement ratios", ha.ref_ratio, hb.ref_ratio);
    same!("level steps", ha.level_steps, hb.level_steps);
    same!("cell sizes", ha.cell_sizes, hb.cell_sizes);
    same!("prob_lo", ha.prob_lo, hb.prob_lo);
    same!("prob_hi", ha.prob_hi, hb.prob_hi);
    if rel(ha.time, hb.time) > rtol {
        bad.push(format!("time: {} vs {}", ha.time, hb.time));
    }
    if !bad.is_empty() {
        return bad;
    }
    let nvar = ha.var_names.len();
    for (lev, (ma, mb)) in a.levels.iter().zip(&b.levels).enumerate() {
        compare_level(&format!("level {lev}"), ma, mb, nvar, rtol, &mut bad);
    }
    bad
}

/// Compares one level's MultiFabs (`what` names them): the same boxes in the same order,
/// and the values of components `0..nvar` in the valid cells to `rtol`.
fn compare_level(
    what: &str,
    ma: &MultiFab,
    mb: &MultiFab,
    nvar: usize,
    rtol: f64,
    bad: &mut Vec<String>,
) {
    if ma.box_array() != mb.box_array() {
        let (ba, bb) = (ma.box_array().boxes(), mb.box_array().boxes());
        let first = ba.iter().zip(bb).position(|(x, y)| x != y);
        bad.push(format!(
            "{what}: box lists differ ({} vs {} boxes; first difference at {:?}: {:?} vs {:?})",
            ba.len(),
            bb.len(),
            first,
            first.map(|i| ba[i]),
            first.map(|i| bb[i])
        ));
        return;
    }
    let mut worst = (0.0_f64, None);
    for mfi in ma.mfiter(Tiling::None) {
        let bx = mfi.validbox();
        let (xa, xb) = (ma.array(&mfi), mb.array(&mfi));
        for n in 0..nvar {
            for p in bx.iter() {
                let d = rel(xa[(p, n)], xb[(p, n)]);
                if d > worst.0 || d.is_nan() {
                    worst = (d, Some((p, n, xa[(p, n)], xb[(p, n)])));
                }
            }
        }
    }
    println!(
        "  {what}: {} boxes, {} cells, largest relative difference {:.3e}",
        ma.box_array().len(),
        ma.box_array().num_pts(),
        worst.0
    );
    if worst.0.is_nan() || worst.0 > rtol {
        bad.push(format!(
            "{what}: values differ by {:.3e} relative (> {rtol:e}) at {:?}",
            worst.0, worst.1
        ));
    }
}

/// The MultiFab names of a checkpoint level (`<name>_H` in `Level_<lev>`), sorted.
fn multifab_names(dir: &str, lev: usize) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(format!("{dir}/Level_{lev}"))
        .map(|rd| {
            rd.filter_map(|e| {
                let n = e.ok()?.file_name().into_string().ok()?;
                n.strip_suffix("_H").map(str::to_string)
            })
            .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn compare_checkpoints(
    a: (&str, &CheckpointHeader),
    b: (&str, &CheckpointHeader),
    rtol: f64,
) -> Vec<String> {
    let ((da, ha), (db, hb)) = (a, b);
    let mut bad = Vec::new();
    if ha.title != hb.title {
        bad.push(format!("title: {:?} vs {:?}", ha.title, hb.title));
    }
    if ha.grids != hb.grids {
        bad.push(format!(
            "grids: {:?} vs {:?} boxes per level",
            ha.grids.iter().map(|g| g.len()).collect::<Vec<_>>(),
            hb.grids.iter().map(|g| g.len()).collect::<Vec<_>>()
        ));
    }
    if ha.lines.len() != hb.lines.len() {
        bad.push(format!(
            "{} vs {} Header lines",
            ha.lines.len(),
            hb.lines.len()
        ));
    }
    for (i, (la, lb)) in ha.lines.iter().zip(&hb.lines).enumerate() {
        let (wa, wb) = (ha.reals(i), hb.reals(i));
        let same = match (&wa, &wb) {
            (Ok(x), Ok(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(p, q)| rel(*p, *q) <= rtol)
            }
            _ => la == lb,
        };
        if !same {
            bad.push(format!("Header line {}: {la:?} vs {lb:?}", i + 3));
        }
    }
    if !bad.is_empty() {
        return bad;
    }
    for lev in 0..ha.grids.len() {
        let names = multifab_names(da, lev);
        if names != multifab_names(db, lev) {
            bad.push(format!(
                "level {lev}: MultiFabs {names:?} vs {:?}",
                multifab_names(db, lev)
            ));
            continue;
        }
        for name in names {
            let read = |d: &str| read_multifab(format!("{d}/Level_{lev}/{name}")).map(|r| r.1);
            match (read(da), read(db)) {
                (Ok(ma), Ok(mb)) => {
                    let nvar = ma.ncomp().min(mb.ncomp());
                    if ma.ncomp() != mb.ncomp() {
                        bad.push(format!(
                            "level {lev} {name}: {} vs {} components",
                            ma.ncomp(),
                            mb.ncomp()
                        ));
                    }
                    compare_level(
                        &format!("level {lev} {name}"),
                        &ma,
                        &mb,
                        nvar,
                        rtol,
                        &mut bad,
                    );
                }
                (Err(e), _) | (_, Err(e)) => bad.push(format!("level {lev} {name}: {e}")),
            }
        }
    }
    bad
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 || args.len() > 3 {
        eprintln!("usage: plotfile_compare A B [rtol]");
        std::process::exit(2);
    }
    let rtol = args
        .get(2)
        .map_or(Ok(1e-12), |s| s.parse::<f64>())
        .unwrap_or_else(|e| {
            eprintln!("plotfile_compare: bad rtol: {e}");
            std::process::exit(2);
        });
    let fail = |p: &str, e: &dyn core::fmt::Display| -> ! {
        eprintln!("plotfile_compare: cannot read {p}: {e}");
        std::process::exit(2);
    };
    let is_plotfile = |p: &str| {
        std::fs::read_to_string(format!("{p}/Header")).is_ok_and(|t| t.starts_with("HyperCLaw"))
    };
    println!("{} vs {}:", args[0], args[1]);
    let bad = if is_plotfile(&args[0]) {
        let read = |p: &str| read_plotfile(p).unwrap_or_else(|e| fail(p, &e));
        compare(&read(&args[0]), &read(&args[1]), rtol)
    } else {
        let read = |p: &str| read_checkpoint_header(p).unwrap_or_else(|e| fail(p, &e));
        let (ha, hb) = (read(&args[0]), read(&args[1]));
        compare_checkpoints((&args[0], &ha), (&args[1], &hb), rtol)
    };
    if bad.is_empty() {
        println!("  same grids on every level, values within {rtol:e}");
    } else {
        for m in &bad {
            println!("  DIFFERENT {m}");
        }
        std::process::exit(1);
    }
}
