//! Property tests: indexing agrees with the box's linear index, and DLPack export then
//! import is the identity for random boxes, sub-boxes and component ranges.
#![warn(clippy::cast_possible_truncation)]

use amrex_array4::{Array4, IndexBox, IntVect};
use amrex_dlpack_core::ToDlpack;
use proptest::prelude::*;

fn iv(r: core::ops::Range<i32>) -> impl Strategy<Value = IntVect> {
    (r.clone(), r.clone(), r).prop_map(|(x, y, z)| IntVect::new(x, y, z))
}

fn cases() -> ProptestConfig {
    ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 128 },
        // Miri's isolation forbids the file access failure persistence needs.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// A box, a component count, a sub-box inside it and a component range.
fn setup() -> impl Strategy<Value = (IndexBox, usize, IndexBox, usize, usize)> {
    (iv(-20..20), iv(1..6), 1usize..4).prop_flat_map(|(lo, len, ncomp)| {
        let b = IndexBox::new(lo, lo + len - 1);
        let sub = (iv(0..6), iv(0..6)).prop_map(move |(a, c)| {
            let (a, c) = (a.min(len - 1), c.min(len - 1));
            IndexBox::new(lo + a.min(c), lo + a.max(c))
        });
        let comps = (0..ncomp).prop_flat_map(move |s| (Just(s), 1..=ncomp - s));
        (Just(b), Just(ncomp), sub, comps).prop_map(|(b, n, s, (c0, c1))| (b, n, s, c0, c1))
    })
}

proptest! {
    #![proptest_config(cases())]

    #[test]
    fn indexing_matches_linear_index((b, ncomp, sub, c0, cn) in setup()) {
        let np = b.checked_num_pts_usize().unwrap();
        let data: Vec<u32> = (0..u32::try_from(np * ncomp).unwrap()).collect();
        let a = Array4::new(&data, b, ncomp);
        let v = a.components(c0, cn).sub_box(&sub);
        for n in 0..cn {
            for p in sub.iter() {
                let want = u32::try_from(b.index(p) + (n + c0) * np).unwrap();
                prop_assert_eq!(v[(p, n)], want);
                prop_assert_eq!(v.get(p[0], p[1], p[2], n), Some(&want));
            }
        }
        prop_assert_eq!(v.get(sub.hi()[0] + 1, sub.lo()[1], sub.lo()[2], 0), None);
        prop_assert_eq!(v.get(sub.lo()[0], sub.lo()[1], sub.lo()[2], cn), None);
    }

    #[test]
    fn dlpack_round_trip((b, ncomp, sub, c0, cn) in setup(), shift in iv(-5..5)) {
        let np = b.checked_num_pts_usize().unwrap();
        let data: Vec<f32> = (0..np * ncomp).map(|v| v as f32).collect();
        let v = Array4::new(&data, b, ncomp).components(c0, cn).sub_box(&sub);
        let t = v.to_dlpack().unwrap();
        prop_assert!(t.is_read_only());
        let l = v.length();
        prop_assert_eq!(t.shape(), &[cn as i64, i64::from(l.z), i64::from(l.y), i64::from(l.x)]);
        // Import at the same begin: identical view. At a shifted begin: shifted indices.
        let back = Array4::<f32>::from_dlpack_view(&t.view(), sub.lo()).unwrap();
        prop_assert_eq!(back.as_ptr(), v.as_ptr());
        // Strides of axes of extent 1 are normalised on import; the others are kept.
        if l.y > 1 {
            prop_assert_eq!(back.jstride(), v.jstride());
        }
        if l.z > 1 {
            prop_assert_eq!(back.kstride(), v.kstride());
        }
        let moved = Array4::<f32>::from_dlpack_view(&t.view(), sub.lo() + shift).unwrap();
        for n in 0..cn {
            for p in sub.iter() {
                prop_assert_eq!(back[(p, n)], v[(p, n)]);
                prop_assert_eq!(moved[(p + shift, n)], v[(p, n)]);
            }
        }
    }
}
