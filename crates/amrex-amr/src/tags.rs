//! `TagBoxArray`: per-cell refinement tags on a FabArray (AMReX's `TagBoxArray`).

use alloc::vec;
use alloc::vec::Vec;

use amrex_box::IntVect;
use amrex_geometry::Geometry;
use amrex_multifab::{
    BoxArray, BoxList, CopyOp, DistributionMapping, FabArrayError, FabError, Tiling, iMultiFab,
};

use crate::error::{AmrError, AmrErrorKind, Operand};

/// A tag value: [`TagBoxArray::CLEAR`], [`TagBoxArray::BUF`] or [`TagBoxArray::SET`].
pub type TagType = i32;

/// One tag per cell over a BoxArray, with ghost cells (AMReX's `TagBoxArray`).
///
/// `error_est` writes [`SET`](Self::SET) into the cells to refine through
/// [`fab_array_mut`](Self::fab_array_mut); the regrid then grows them with
/// [`buffer`](Self::buffer), folds ghost tags onto their owners with
/// [`map_periodic_remove_duplicates`](Self::map_periodic_remove_duplicates), coarsens
/// them and gathers them with [`collate`](Self::collate) for clustering. Storage is an
/// `i32` [`iMultiFab`] (AMReX stores a `char`; the values are the same).
#[derive(Debug)]
pub struct TagBoxArray {
    fa: iMultiFab,
}

fn mf_err(op: &'static str, e: impl Into<FabArrayError>) -> AmrError {
    AmrError::new(op, AmrErrorKind::MultiFab(e.into()))
}

impl TagBoxArray {
    /// Not tagged.
    pub const CLEAR: TagType = 0;
    /// Tagged as a buffer around a [`SET`](Self::SET) cell.
    pub const BUF: TagType = 1;
    /// Tagged for refinement.
    pub const SET: TagType = 2;

    /// All-[`CLEAR`](Self::CLEAR) tags over `ba` with `ngrow` ghost cells.
    ///
    /// # Errors
    /// [`AmrErrorKind::MultiFab`] if the grown boxes leave the index space.
    pub fn new(ba: &BoxArray, dm: &DistributionMapping, ngrow: IntVect) -> Result<Self, AmrError> {
        ba.check_ghost(ngrow)
            .map_err(|e| mf_err("TagBoxArray::new", FabError::OutsideIndexSpace(e)))?;
        let mut fa = iMultiFab::new(ba, dm, 1, ngrow);
        fa.set_val(Self::CLEAR, .., ngrow)
            .map_err(|e| mf_err("TagBoxArray::new", e))?;
        Ok(Self { fa })
    }

    /// The boxes.
    #[must_use]
    pub fn box_array(&self) -> &BoxArray {
        self.fa.box_array()
    }

    /// The map of boxes to ranks.
    #[must_use]
    pub fn dist_map(&self) -> &DistributionMapping {
        self.fa.distribution_map()
    }

    /// The ghost width.
    #[must_use]
    pub fn n_grow(&self) -> IntVect {
        self.fa.n_grow()
    }

    /// The tags (one component).
    #[must_use]
    pub fn fab_array(&self) -> &iMultiFab {
        &self.fa
    }

    /// The tags, to write (one component).
    pub fn fab_array_mut(&mut self) -> &mut iMultiFab {
        &mut self.fa
    }

    /// Sets every cell, ghost cells included, to `tag`.
    pub fn set_val(&mut self, tag: TagType) {
        let ng = self.fa.n_grow();
        // A host iMultiFab over its own boxes: set_val cannot be refused.
        let _ = self.fa.set_val(tag, .., ng);
    }

    /// Sets the cells (ghost cells included) that lie in a box of `ba` to `tag` (AMReX's
    /// `TagBoxArray::setVal(ba, val)`).
    pub fn set_val_in(&mut self, ba: &BoxArray, tag: TagType) {
        let ng = self.fa.n_grow();
        self.fa.par_for_each_tile(Tiling::None, ng, |mut t| {
            for (_, b) in ba.intersections(&t.region()) {
                t.array_mut().fill(b, tag);
            }
        });
    }

    /// As [`set_val_in`](Self::set_val_in) for the boxes of a [`BoxList`].
    pub fn set_val_in_list(&mut self, bl: &BoxList, tag: TagType) {
        let ng = self.fa.n_grow();
        self.fa.par_for_each_tile(Tiling::None, ng, |mut t| {
            for b in bl {
                if let Some(b) = b.intersection(&t.region()) {
                    t.array_mut().fill(b, tag);
                }
            }
        });
    }

    /// Marks as [`BUF`](Self::BUF) every [`CLEAR`](Self::CLEAR) cell of a fab (ghost
    /// cells included) within `nbuf` cells, per direction, of a [`SET`](Self::SET) cell
    /// of the same fab (AMReX's `TagBoxArray::buffer`).
    ///
    /// # Errors
    /// [`AmrErrorKind::GhostTooWide`] if `nbuf` is wider than the ghost cells or negative.
    pub fn buffer(&mut self, nbuf: IntVect) -> Result<(), AmrError> {
        let ng = self.fa.n_grow();
        let too_wide = || {
            AmrError::new(
                "TagBoxArray::buffer",
                AmrErrorKind::GhostTooWide {
                    operand: Operand::Dest,
                    needed: nbuf,
                    has: ng,
                },
            )
        };
        // The widths as `usize`; a negative one is refused.
        let mut widths = [0; 3];
        for (w, r) in widths.iter_mut().zip(nbuf.to_array()) {
            *w = usize::try_from(r).map_err(|_| too_wide())?;
        }
        if !nbuf.all_le(ng) {
            return Err(too_wide());
        }
        if nbuf == IntVect::ZERO {
            return Ok(());
        }
        self.fa.par_for_each_tile(Tiling::None, ng, |mut t| {
            let fbx = t.region();
            let mut a = t.array_mut();
            // The view is the whole fab, compact over `fbx`: `near` below, one flag per
            // cell in the same order, takes its lengths and strides.
            debug_assert_eq!((a.begin(), a.end()), (fbx.lo(), fbx.hi() + 1));
            let layout = a.layout();
            debug_assert!(layout.is_compact());
            let [nx, ny, nz] = [0, 1, 2].map(|d| layout.len_dir(d));
            let [js, ks, _] = layout.strides();
            // `near[n]`: a SET cell lies within `nbuf` of cell `n` in every direction.
            // The neighbourhood is a box, so it is three one-direction dilations of the
            // SET cells in turn (x, then y, then z), each a running window per line.
            let mut near: Vec<bool> = fbx
                .iter()
                .map(|p| a[(p[0], p[1], p[2])] == Self::SET)
                .collect();
            let strides = [1, js, ks];
            let lens = [nx, ny, nz];
            for d in 0..3 {
                let r = widths[d];
                if r == 0 {
                    continue;
                }
                let (st, n) = (strides[d], lens[d]);
                let mut line = vec![false; n];
                for start in 0..nx * ny * nz {
                    // One line per cell whose coordinate in d is 0.
                    if (start / st) % n != 0 {
                        continue;
                    }
                    for (m, v) in line.iter_mut().enumerate() {
                        *v = near[start + m * st];
                    }
                    // Cells with a SET cell within r before or after them on the line.
                    let mut last_set: Option<usize> = None;
                    for m in 0..n {
                        if line[m] {
                            last_set = Some(m);
                        }
                        let from_before = last_set.is_some_and(|q| m - q <= r);
                        let ahead = (m + 1..n.min(m + r + 1)).any(|q| line[q]);
                        near[start + m * st] = from_before || ahead;
                    }
                }
            }
            for (n, p) in fbx.iter().enumerate() {
                let t = &mut a[(p[0], p[1], p[2])];
                if *t == Self::CLEAR && near[n] {
                    *t = Self::BUF;
                }
            }
        });
        Ok(())
    }

    /// Makes every cell of the valid and ghost regions hold the tags of all its periodic
    /// images (in `geom`'s periodicity) and keeps each cell once, in the box of lowest
    /// index whose grown box holds it (AMReX 24.10's `mapPeriodicRemoveDuplicates`: a
    /// `ParallelAdd` into a fresh array with the ghost cells on both sides, then its
    /// non-periodic `OwnerMask`). Tags in ghost cells beyond a periodic edge stay, as
    /// AMReX keeps them: the clusters made from them reach across the edge, and are cut
    /// there only by the proper-nesting domain. A cell holds the sum of its images' tag
    /// values capped at [`SET`](Self::SET) (AMReX keeps the sum, which only its
    /// `!= CLEAR` tests read). **Collective**.
    ///
    /// # Errors
    /// [`AmrErrorKind::MultiFab`] if the exchange underneath fails.
    pub fn map_periodic_remove_duplicates(&mut self, geom: &Geometry) -> Result<(), AmrError> {
        const OP: &str = "TagBoxArray::map_periodic_remove_duplicates";
        let ng = self.fa.n_grow();
        let ba = self.fa.box_array().clone();
        let mut sum = iMultiFab::new(&ba, self.fa.distribution_map(), 1, ng);
        sum.set_val(Self::CLEAR, .., ng)
            .map_err(|e| mf_err(OP, e))?;
        sum.parallel_copy_with(&self.fa, 0, ng, geom.periodicity(), CopyOp::Add, 0..1, ng)
            .map_err(|e| mf_err(OP, e))?;
        sum.par_for_each_tile(Tiling::None, ng, |mut t| {
            let (idx, region) = (t.index(), t.region());
            let mut a = t.array_mut();
            a.for_each_mut(region, |_, _, _, _, v| {
                *v = if *v >= Self::SET {
                    Self::SET
                } else {
                    (*v).max(Self::CLEAR)
                };
            });
            for (other, owned) in ba.intersections_grown(&region, ng) {
                if other < idx {
                    a.for_each_mut(owned, |_, _, _, _, v| *v = Self::CLEAR);
                }
            }
        });
        self.fa = sum;
        Ok(())
    }

    /// Coarsens the tags by `ratio` in place: a coarse cell takes the strongest tag of
    /// its fine cells, so it is tagged if any of them is (AMReX's
    /// `TagBoxArray::coarsen`). The ghost width becomes `ceil(ngrow / ratio)`.
    ///
    /// # Errors
    /// [`AmrErrorKind::BadRatio`] for a ratio below 1; [`AmrErrorKind::NotCoarsenable`]
    /// if a box does not coarsen by `ratio`.
    pub fn coarsen(&mut self, ratio: IntVect) -> Result<(), AmrError> {
        const OP: &str = "TagBoxArray::coarsen";
        crate::check::ratio(OP, ratio)?;
        let ba = self.fa.box_array().clone();
        crate::check::coarsenable(OP, &ba, ratio)?;
        let ng = self.fa.n_grow();
        let cng = IntVect::new(
            (ng[0] + ratio[0] - 1) / ratio[0],
            (ng[1] + ratio[1] - 1) / ratio[1],
            (ng[2] + ratio[2] - 1) / ratio[2],
        );
        let cba = ba.coarsen(ratio);
        let dm = self.fa.distribution_map().clone();
        let mut c = iMultiFab::new(&cba, &dm, 1, cng);
        c.set_val(Self::CLEAR, .., cng).map_err(|e| mf_err(OP, e))?;
        let fine = &self.fa;
        c.par_for_each_tile(Tiling::None, cng, |mut t| {
            let (cbx, fbx) = (t.region(), fine.fabbox(t.index()));
            let f = fine.array(t.mfi());
            let mut a = t.array_mut();
            for p in fbx.iter() {
                let tag = f[(p[0], p[1], p[2])];
                let q = p.coarsen(ratio);
                if tag != Self::CLEAR && cbx.contains(q) {
                    let v = &mut a[(q[0], q[1], q[2])];
                    *v = (*v).max(tag);
                }
            }
        });
        self.fa = c;
        Ok(())
    }

    /// Number of tagged ([`SET`](Self::SET) or [`BUF`](Self::BUF)) valid cells on this
    /// rank.
    #[must_use]
    pub fn num_tags_local(&self) -> usize {
        self.fa
            .mfiter(Tiling::None)
            .map(|mfi| {
                let a = self.fa.array(&mfi);
                mfi.validbox()
                    .iter()
                    .filter(|p| a[(p[0], p[1], p[2])] != Self::CLEAR)
                    .count()
            })
            .sum()
    }

    /// Every rank's tagged cells, valid and ghost (AMReX's `collate` reads whole fabs),
    /// in the same order on every rank: sorted with `z`
    /// most significant, then `y`, then `x`, without repeats (AMReX's `collate`, which
    /// gathers them to one rank; here every rank gets them). **Collective**.
    ///
    /// # Errors
    /// [`AmrErrorKind::MultiFab`] if the gather fails or a rank's contribution is
    /// malformed.
    pub fn collate(&self) -> Result<Vec<IntVect>, AmrError> {
        const OP: &str = "TagBoxArray::collate";
        let mut bytes = Vec::new();
        for mfi in self.fa.mfiter(Tiling::None) {
            let a = self.fa.array(&mfi);
            for p in self.fa.fabbox(mfi.index()).iter() {
                if a[(p[0], p[1], p[2])] != Self::CLEAR {
                    for d in 0..3 {
                        bytes.extend_from_slice(&p[d].to_le_bytes());
                    }
                }
            }
        }
        let all = crate::check::Agreement::new(OP)
            .mf(&self.fa)
            .check(self.fa.communicator())?
            .all_gather_bytes(&bytes)
            .map_err(|e| crate::check::comm_error(OP, e))?;
        let mut out = Vec::new();
        for (rank, b) in all.iter().enumerate() {
            if b.len() % 12 != 0 {
                return Err(mf_err(
                    OP,
                    FabArrayError::MalformedContribution { op: OP, rank },
                ));
            }
            for c in b.chunks_exact(12) {
                let w = |i: usize| i32::from_le_bytes([c[i], c[i + 1], c[i + 2], c[i + 3]]);
                out.push(IntVect::new(w(0), w(4), w(8)));
            }
        }
        out.sort_by(|a, b| a.lex_cmp(*b));
        out.dedup();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use amrex_box::IndexBox;
    use amrex_geometry::{CoordSys, RealBox};

    fn two_boxes() -> (BoxArray, DistributionMapping) {
        let ba = BoxArray::new(vec![
            IndexBox::new(IntVect::ZERO, IntVect::new(3, 3, 0)),
            IndexBox::new(IntVect::new(4, 0, 0), IntVect::new(7, 3, 0)),
        ]);
        let dm = DistributionMapping::single(&ba);
        (ba, dm)
    }

    fn set(t: &mut TagBoxArray, l: usize, p: IntVect) {
        t.fab_array_mut().array_mut_at(l)[(p[0], p[1], p[2])] = TagBoxArray::SET;
    }

    #[test]
    fn buffer_matches_the_definition() {
        // Sparse pseudo-random SET cells and some BUF ones in two fabs with ghost cells;
        // every CLEAR cell within nbuf (per direction, in its own fab) of a SET cell
        // becomes BUF, and nothing else changes.
        let ba = BoxArray::new(vec![
            IndexBox::new(IntVect::ZERO, IntVect::new(7, 5, 3)),
            IndexBox::new(IntVect::new(8, 0, 0), IntVect::new(15, 5, 3)),
        ]);
        let dm = DistributionMapping::single(&ba);
        for nbuf in [
            IntVect::new(1, 1, 1),
            IntVect::new(2, 0, 1),
            IntVect::new(0, 2, 0),
        ] {
            let mut t = TagBoxArray::new(&ba, &dm, IntVect::splat(2)).unwrap();
            let mut seed = 12345_u64;
            for l in 0..2 {
                let fbx = t.fab_array().fabbox(l);
                let mut a = t.fab_array_mut().array_mut_at(l);
                for p in fbx.iter() {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let r = (seed >> 33) % 50;
                    a[(p[0], p[1], p[2])] = match r {
                        0 => TagBoxArray::SET,
                        1 => TagBoxArray::BUF,
                        _ => TagBoxArray::CLEAR,
                    };
                }
            }
            let before: Vec<Vec<TagType>> = (0..2)
                .map(|l| {
                    let a = t.fab_array().array_at(l);
                    t.fab_array()
                        .fabbox(l)
                        .iter()
                        .map(|p| a[(p[0], p[1], p[2])])
                        .collect()
                })
                .collect();
            t.buffer(nbuf).unwrap();
            for (l, old) in before.iter().enumerate() {
                let fbx = t.fab_array().fabbox(l);
                let a = t.fab_array().array_at(l);
                for (n, p) in fbx.iter().enumerate() {
                    let was = old[n];
                    let near = IndexBox::new(p - nbuf, p + nbuf)
                        .intersection(&fbx)
                        .is_some_and(|b| {
                            b.iter()
                                .any(|q| before[l][fbx.index(q)] == TagBoxArray::SET)
                        });
                    let want = if was == TagBoxArray::CLEAR && near {
                        TagBoxArray::BUF
                    } else {
                        was
                    };
                    assert_eq!(a[(p[0], p[1], p[2])], want, "{nbuf} fab {l} {p}");
                }
            }
        }
    }

    #[test]
    fn buffer_then_map_gives_each_index_once() {
        let (ba, dm) = two_boxes();
        let mut t = TagBoxArray::new(&ba, &dm, IntVect::new(1, 1, 0)).unwrap();
        // One SET at (3,1) in box 0, next to box 1.
        set(&mut t, 0, IntVect::new(3, 1, 0));
        t.buffer(IntVect::new(1, 1, 0)).unwrap();
        let a = t.fab_array().array_at(0);
        assert_eq!(a[(4, 2, 0)], TagBoxArray::BUF); // a ghost cell of box 0
        assert_eq!(a[(2, 0, 0)], TagBoxArray::BUF);
        assert_eq!(a[(1, 1, 0)], TagBoxArray::CLEAR);
        assert_eq!(t.num_tags_local(), 6); // 3x3 around (3,1) less the column x=4
        let domain = IndexBox::new(IntVect::ZERO, IntVect::new(7, 3, 0));
        let geom = Geometry::new(
            domain,
            RealBox::UNIT,
            CoordSys::Cartesian,
            [true, true, true],
        )
        .unwrap();
        t.map_periodic_remove_duplicates(&geom).unwrap();
        let tags = t.collate().unwrap();
        // The 3x3 block, and in box 0's ghost row y = 4 the periodic image of its row
        // y = 0 (AMReX keeps tags beyond a periodic edge).
        let mut want = Vec::new();
        for j in [0, 1, 2, 4] {
            for i in 2..5 {
                want.push(IntVect::new(i, j, 0));
            }
        }
        assert_eq!(tags, want);
        // (4, 1) is box 1's valid cell and box 0's ghost cell: the lower box owns it.
        assert_eq!(t.fab_array().array_at(0)[(4, 1, 0)], TagBoxArray::BUF);
        assert_eq!(t.fab_array().array_at(1)[(4, 1, 0)], TagBoxArray::CLEAR);
        // (3, 1) came into box 1's ghost cells by the sum, and box 0 owns it.
        assert_eq!(t.fab_array().array_at(0)[(3, 1, 0)], TagBoxArray::SET);
        assert_eq!(t.fab_array().array_at(1)[(3, 1, 0)], TagBoxArray::CLEAR);
        assert!(t.buffer(IntVect::splat(2)).is_err());
        // A negative width is refused the same way, whatever the others, and changes
        // nothing.
        let before = t.collate().unwrap();
        for nbuf in [IntVect::new(-1, 0, 0), IntVect::new(1, 1, -1)] {
            let e = t.buffer(nbuf).unwrap_err();
            assert_eq!(e.op(), "TagBoxArray::buffer");
            assert_eq!(
                e.kind(),
                &AmrErrorKind::GhostTooWide {
                    operand: Operand::Dest,
                    needed: nbuf,
                    has: t.n_grow(),
                }
            );
        }
        assert_eq!(t.collate().unwrap(), before);
    }

    #[test]
    fn periodic_ghost_tags_wrap_onto_their_owner() {
        let (ba, dm) = two_boxes();
        let mut t = TagBoxArray::new(&ba, &dm, IntVect::new(1, 1, 0)).unwrap();
        // A SET at (0,0): its buffer reaches the ghost cells x=-1 and y=-1.
        set(&mut t, 0, IntVect::new(0, 0, 0));
        t.buffer(IntVect::new(1, 1, 0)).unwrap();
        let domain = IndexBox::new(IntVect::ZERO, IntVect::new(7, 3, 0));
        let geom = Geometry::new(
            domain,
            RealBox::UNIT,
            CoordSys::Cartesian,
            [true, true, false],
        )
        .unwrap();
        t.map_periodic_remove_duplicates(&geom).unwrap();
        let tags = t.collate().unwrap();
        // Every cell of the grown boxes (x in -1..=8, y in -1..=4) whose periodic image
        // is tagged, once: x in {-1, 0, 1, 7, 8} by y in {-1, 0, 1, 3, 4}.
        let mut want = Vec::new();
        for j in [-1, 0, 1, 3, 4] {
            for i in [-1, 0, 1, 7, 8] {
                want.push(IntVect::new(i, j, 0));
            }
        }
        assert_eq!(tags, want);
        let inside: Vec<_> = tags.iter().filter(|p| domain.contains(**p)).collect();
        assert_eq!(inside.len(), 9);
    }

    #[test]
    fn coarsen_tags_a_coarse_cell_if_any_fine_cell_is() {
        let (ba, dm) = two_boxes();
        let mut t = TagBoxArray::new(&ba, &dm, IntVect::ZERO).unwrap();
        set(&mut t, 0, IntVect::new(1, 3, 0));
        set(&mut t, 1, IntVect::new(6, 0, 0));
        t.coarsen(IntVect::new(2, 2, 1)).unwrap();
        assert_eq!(
            t.box_array().get(1),
            IndexBox::new(IntVect::new(2, 0, 0), IntVect::new(3, 1, 0))
        );
        assert_eq!(
            t.collate().unwrap(),
            vec![IntVect::new(3, 0, 0), IntVect::new(0, 1, 0)]
        );
        assert!(t.coarsen(IntVect::new(3, 1, 1)).is_err());
        let mut s = TagBoxArray::new(&ba, &dm, IntVect::ZERO).unwrap();
        s.set_val_in_list(
            &BoxList::from_box(IndexBox::new(IntVect::new(3, 0, 0), IntVect::new(4, 0, 0))),
            TagBoxArray::SET,
        );
        assert_eq!(s.num_tags_local(), 2);
        s.set_val_in(&ba, TagBoxArray::CLEAR);
        assert_eq!(s.num_tags_local(), 0);
        s.set_val(TagBoxArray::BUF);
        assert_eq!(s.num_tags_local(), 32);
    }
}
