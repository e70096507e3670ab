//! Compares two AMReX plotfiles: `plotfile_compare A B [rtol]`.
//!
//! They must have the same variables, finest level, domains, refinement ratios, level
//! steps, cell sizes and problem box; the same time to `rtol`; on every level the same
//! boxes in the same order (the order of `Cell_H`); and in every valid cell of every
//! variable values equal to a relative tolerance `rtol` (default 1e-12): `|a - b| <=
//! rtol * max(|a|, |b|)`. It prints one line per level with the largest relative
//! difference and exits with status 1 if anything differs, naming what.
use amrex::multifab::Tiling;
use amrex::plotfile::{Plotfile, read_plotfile};

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
        if ma.box_array() != mb.box_array() {
            let (ba, bb) = (ma.box_array().boxes(), mb.box_array().boxes());
            let first = ba.iter().zip(bb).position(|(x, y)| x != y);
            bad.push(format!(
                "level {lev}: box lists differ ({} vs {} boxes; first difference at {:?}: {:?} vs {:?})",
                ba.len(),
                bb.len(),
                first,
                first.map(|i| ba[i]),
                first.map(|i| bb[i])
            ));
            continue;
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
            "  level {lev}: {} boxes, {} cells, largest relative difference {:.3e}",
            ma.box_array().len(),
            ma.box_array().num_pts(),
            worst.0
        );
        if worst.0.is_nan() || worst.0 > rtol {
            bad.push(format!(
                "level {lev}: values differ by {:.3e} relative (> {rtol:e}) at {:?}",
                worst.0, worst.1
            ));
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
    let read = |p: &str| {
        read_plotfile(p).unwrap_or_else(|e| {
            eprintln!("plotfile_compare: cannot read {p}: {e}");
            std::process::exit(2);
        })
    };
    let (a, b) = (read(&args[0]), read(&args[1]));
    println!("{} vs {}:", args[0], args[1]);
    let bad = compare(&a, &b, rtol);
    if bad.is_empty() {
        println!("  same grids on every level, values within {rtol:e}");
    } else {
        for m in &bad {
            println!("  DIFFERENT {m}");
        }
        std::process::exit(1);
    }
}
