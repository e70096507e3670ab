//! The writer's consistency checks on a level hierarchy: what AMReX's plotfile readers
//! (yt, VisIt, AMReX's own `amrvis`/`fcompare`) assume about the levels they read, checked
//! before a file is created.
//!
//! For level `l` on geometry `geoms[l]`, with `r = ref_ratio[l - 1]`:
//! 1. `r >= 1` in every direction;
//! 2. `geoms[l].domain()` is `geoms[l - 1].domain()` refined by `r` (corners computed
//!    in `i64`, so no domain can overflow the check);
//! 3. `geoms[l]` has level 0's physical box and coordinate system (the `Header` records
//!    level 0's only);
//! 4. every box (of cells: a nodal box counts the cells it encloses) lies in the domain;
//! 5. no two boxes of the level share a cell;
//! 6. every box, coarsened by `r`, is covered by level `l - 1`'s boxes (which step 5
//!    has shown disjoint, so the covered cells are the sum of the intersections).

use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use amrex_box::{IndexBox, IndexType, IntVect};
use amrex_geometry::Geometry;
use amrex_multifab::BoxArray;

use crate::error::PlotfileError;

/// The corners `(lo * r, (hi + 1) * r - 1)` of cell box `b` refined by `r`, in `i64`.
pub(crate) fn refined_corners(b: &IndexBox, r: IntVect) -> ([i64; 3], [i64; 3]) {
    let (lo, hi) = (b.lo(), b.hi());
    (
        core::array::from_fn(|d| i64::from(lo[d]) * i64::from(r[d])),
        core::array::from_fn(|d| (i64::from(hi[d]) + 1) * i64::from(r[d]) - 1),
    )
}

/// `((a,b,c) (d,e,f))`, AMReX's box notation without the index type.
pub(crate) fn fmt_corners((lo, hi): ([i64; 3], [i64; 3])) -> String {
    format!(
        "(({},{},{}) ({},{},{}))",
        lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]
    )
}

/// The level's boxes as cells (nodal boxes shrink to the cells they enclose).
fn cell_boxes(level: usize, ba: &BoxArray) -> Result<BoxArray, PlotfileError> {
    if ba.ix_type().cell_centered() {
        return Ok(ba.clone());
    }
    let cells: Vec<IndexBox> = ba
        .boxes()
        .iter()
        .map(|b| b.convert(IndexType::CELL))
        .collect();
    BoxArray::try_new(cells)
        .map_err(|e| PlotfileError::Argument(format!("level {level}: {e} (no enclosed cells)")))
}

/// Checks 1–6 (see the module docs) for every level; `ref_ratio` has at least
/// `bas.len() - 1` entries and `geoms` as many as `bas`.
pub(crate) fn check_hierarchy(
    bas: &[&BoxArray],
    geoms: &[Geometry],
    ref_ratio: &[IntVect],
) -> Result<(), PlotfileError> {
    let mut coarser: Option<BoxArray> = None;
    for (level, (ba, geom)) in bas.iter().zip(geoms).enumerate() {
        // A `Geometry`'s domain is cell-centred.
        let domain = geom.domain();
        if level > 0 {
            let ratio = ref_ratio[level - 1];
            if !ratio.all_ge(IntVect::UNIT) {
                return Err(PlotfileError::RefRatioNotPositive { level, ratio });
            }
            let coarse = geoms[level - 1].domain();
            let (lo, hi) = refined_corners(&coarse, ratio);
            let (flo, fhi) = (domain.lo(), domain.hi());
            if (0..3).any(|d| i64::from(flo[d]) != lo[d] || i64::from(fhi[d]) != hi[d]) {
                return Err(PlotfileError::RefRatioMismatch {
                    level,
                    ratio,
                    coarse,
                    fine: domain,
                });
            }
            let g0 = &geoms[0];
            if geom.real_box() != g0.real_box() || geom.coord() != g0.coord() {
                return Err(PlotfileError::ProbDomainMismatch {
                    level,
                    found: Box::new(*geom),
                    expected: Box::new(*g0),
                });
            }
        }
        let cells = cell_boxes(level, ba)?;
        for (index, bx) in cells.boxes().iter().enumerate() {
            if !domain.contains_box(bx) {
                return Err(PlotfileError::BoxOutsideDomain {
                    level,
                    index,
                    bx: ba.get(index),
                    domain,
                });
            }
        }
        if !cells.is_disjoint() {
            for (first, bx) in cells.boxes().iter().enumerate() {
                // Sorted by index: the first other box found has a higher index, or the
                // pair would have been reported at that box.
                if let Some(&(second, overlap)) =
                    cells.intersections(bx).iter().find(|(j, _)| *j != first)
                {
                    return Err(PlotfileError::OverlappingBoxes {
                        level,
                        first,
                        second,
                        first_box: ba.get(first),
                        second_box: ba.get(second),
                        overlap,
                    });
                }
            }
        }
        if let Some(coarse) = &coarser {
            let ratio = ref_ratio[level - 1];
            for (index, bx) in cells.boxes().iter().enumerate() {
                let coarsened = bx.coarsen_iv(ratio);
                let covered: u64 = coarse
                    .intersections(&coarsened)
                    .iter()
                    .map(|(_, isect)| isect.num_pts())
                    .sum();
                let uncovered = coarsened.num_pts() - covered;
                if uncovered != 0 {
                    return Err(PlotfileError::NotProperlyNested {
                        level,
                        index,
                        bx: ba.get(index),
                        ratio,
                        coarsened,
                        uncovered,
                    });
                }
            }
        }
        coarser = Some(cells);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refined_corners_do_not_overflow() {
        let b = IndexBox::new(IntVect::new(-3, 0, 5), IntVect::new(i32::MAX - 1, 1, 5));
        let (lo, hi) = refined_corners(&b, IntVect::new(4, 2, 1));
        assert_eq!(lo, [-12, 0, 5]);
        assert_eq!(hi, [i64::from(i32::MAX) * 4 - 1, 3, 5]);
        assert_eq!(fmt_corners((lo, hi)), "((-12,0,5) (8589934587,3,5))");
    }
}
