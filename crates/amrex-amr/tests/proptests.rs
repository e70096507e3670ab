//! Property tests over random layouts and ratios: `average_down` against the
//! cell-by-cell reference, conservation, and `average_down(cons_interp(c)) == c`.
#![warn(clippy::cast_possible_truncation)]

mod common;

use amrex_amr::{CellConsLinear, average_down};
use amrex_geometry::Periodicity;
use amrex_multifab::{BoxArray, IndexBox, IntVect};
use common::{at, close, fill, interp_level, mf, noise, points, reference_mean};
use proptest::prelude::*;

/// A random layout: the coarse domain, the coarse chopping size, a fine region (coarse
/// cells inside the domain) with its chopping size, and the ratio.
#[derive(Clone, Debug)]
struct Layout {
    domain: IndexBox,
    crse_max: i32,
    region: IndexBox,
    fine_max: i32,
    ratio: IntVect,
}

fn layout() -> impl Strategy<Value = Layout> {
    (
        prop::array::uniform3(-3..=3i32),
        prop::array::uniform3(3..=7i32),
        2..=5i32,
        1..=4i32,
        prop::array::uniform3(1..=4i32),
        prop::array::uniform3((0.0..1.0f64, 0.0..1.0f64)),
    )
        .prop_map(|(lo, len, crse_max, fine_max, ratio, cut)| {
            let lo = IntVect::from(lo);
            let hi = lo + IntVect::from(len) - 1;
            // A sub-box of the domain from the two cut fractions.
            let mut rlo = lo;
            let mut rhi = lo;
            for d in 0..3 {
                let (a, b) = cut[d];
                let n = len[d];
                let x = common::fraction(a, n);
                let y = common::fraction(b, n);
                rlo[d] = lo[d] + x.min(y);
                rhi[d] = lo[d] + x.max(y);
            }
            Layout {
                domain: IndexBox::new(lo, hi),
                crse_max,
                region: IndexBox::new(rlo, rhi),
                fine_max,
                ratio: IntVect::from(ratio),
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn average_down_matches_the_reference_and_conserves(l in layout()) {
        let r = l.ratio;
        let fba = BoxArray::from_domain(l.region, l.fine_max).refine(r);
        let mut fine = mf(&fba, 2, 0);
        fill(&mut fine, |p, n| noise(p, n) - 0.5);
        let mut crse = mf(&BoxArray::from_domain(l.domain, l.crse_max), 2, 0);
        fill(&mut crse, |_, _| 9.0);
        average_down(&fine, &mut crse, 0..2, r).unwrap();
        let nf = f64::from(r[0] * r[1] * r[2]);
        for n in 0..2 {
            let mut csum = 0.0;
            for (p, v) in points(&crse, n) {
                if l.region.contains(p) {
                    prop_assert_eq!(v, reference_mean(&fine, p, n, r));
                    csum += v * nf;
                } else {
                    prop_assert_eq!(v, 9.0);
                }
            }
            let fsum: f64 = points(&fine, n).iter().map(|(_, v)| v).sum();
            prop_assert!(close(fsum, csum, 1e-12), "{} vs {}", fsum, csum);
        }
    }

    #[test]
    fn cons_interp_then_average_down_is_the_identity(l in layout(), lincc in any::<bool>()) {
        let r = l.ratio;
        let mut crse = mf(&BoxArray::from_domain(l.domain, l.crse_max), 1, 1);
        fill(&mut crse, |p, _| noise(p, 3) * 3.0);
        crse.fill_boundary(Periodicity::all(l.domain)).unwrap();
        let fba = BoxArray::from_domain(l.region, l.fine_max).refine(r);
        let mut fine = mf(&fba, 1, 0);
        let interp = CellConsLinear::new(lincc);
        interp_level(&interp, &crse, &mut fine, r, None);
        let mut back = mf(crse.box_array(), 1, 0);
        average_down(&fine, &mut back, 0..1, r).unwrap();
        for p in l.region {
            let (a, b) = (at(&back, p, 0), at(&crse, p, 0));
            prop_assert!(close(a, b, 1e-14), "{}: {} vs {}", p, a, b);
        }
    }
}
