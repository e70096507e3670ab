//! Box-list helpers: difference of two boxes.

use alloc::vec::Vec;

use amrex_box::IndexBox;

/// `a` minus `b` as disjoint boxes (AMReX's `boxDiff`): at most six boxes, empty if `b`
/// covers `a`, `[a]` if they do not overlap.
#[must_use]
pub(crate) fn box_diff(a: &IndexBox, b: &IndexBox) -> Vec<IndexBox> {
    let mut out = Vec::new();
    if !a.ok() {
        return out;
    }
    if !a.intersects(b) {
        out.push(*a);
        return out;
    }
    let mut rest = *a;
    for d in (0..3).rev() {
        let (rlo, rhi) = (rest.lo()[d], rest.hi()[d]);
        let (blo, bhi) = (b.lo()[d], b.hi()[d]);
        if rlo < blo {
            let (low, high) = rest.split_at(d, blo);
            out.push(low);
            rest = high;
        }
        if rhi > bhi {
            let (low, high) = rest.split_at(d, bhi + 1);
            out.push(high);
            rest = low;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use amrex_box::IntVect;

    #[test]
    fn diff_covers_exactly_the_difference() {
        // Every cell is checked against every part: a smaller box under Miri.
        let h = if cfg!(miri) { 5 } else { 9 };
        let a = IndexBox::new(IntVect::splat(0), IntVect::splat(h));
        for b in [
            IndexBox::new(IntVect::splat(h / 3), IntVect::splat(h / 2 + 1)),
            IndexBox::new(IntVect::splat(-3), IntVect::splat(h / 2 + 1)),
            IndexBox::new(IntVect::new(0, 0, 0), IntVect::new(h, h, 2)),
            IndexBox::new(IntVect::splat(20), IntVect::splat(25)),
            a,
        ] {
            let parts = box_diff(&a, &b);
            for p in a.iter() {
                let n = parts.iter().filter(|q| q.contains(p)).count();
                assert_eq!(n, usize::from(!b.contains(p)), "point {p} b {b}");
            }
        }
    }
}
