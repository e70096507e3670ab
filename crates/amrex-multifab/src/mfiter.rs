//! `MFIter`: iteration over local fabs and their tiles.

use alloc::vec::Vec;

use amrex_box::{IndexBox, IntVect};

use crate::box_array::BoxArray;

/// AMReX's CPU default tile size, `(1024000, 8, 8)`.
pub const DEFAULT_TILE_SIZE: IntVect = IntVect::new(1_024_000, 8, 8);

/// How an [`MFIter`] cuts fabs into tiles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Tiling {
    /// One item per fab (the valid box).
    #[default]
    None,
    /// AMReX's CPU default, [`DEFAULT_TILE_SIZE`].
    Default,
    /// Tiles of (about) this many cells per direction.
    Size(IntVect),
}

impl From<IntVect> for Tiling {
    fn from(s: IntVect) -> Self {
        Self::Size(s)
    }
}

impl Tiling {
    /// The tile size, `None` for no tiling.
    #[must_use]
    pub fn size(self) -> Option<IntVect> {
        match self {
            Self::None => None,
            Self::Default => Some(DEFAULT_TILE_SIZE),
            Self::Size(s) => Some(s),
        }
    }
}

/// One item of an [`MFIter`]: a tile of a local fab (AMReX's `MFIter` state).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mfi {
    index: usize,
    local: usize,
    tile: IndexBox,
    valid: IndexBox,
    ngrow: IntVect,
    tile_index: usize,
    num_tiles: usize,
}

impl Mfi {
    /// Global index of the box.
    #[must_use]
    pub fn index(&self) -> usize {
        self.index
    }

    /// Index among the local fabs.
    #[must_use]
    pub fn local_index(&self) -> usize {
        self.local
    }

    /// The tile (the valid box when not tiling), with the box's index type.
    #[must_use]
    pub fn tilebox(&self) -> IndexBox {
        self.tile
    }

    /// The valid box.
    #[must_use]
    pub fn validbox(&self) -> IndexBox {
        self.valid
    }

    /// The fab box: the valid box grown by the FabArray's ghost width.
    #[must_use]
    pub fn fabbox(&self) -> IndexBox {
        self.valid.grow_iv(self.ngrow)
    }

    /// The tile grown by `ng` on the sides where it touches the valid box's boundary
    /// (AMReX's `growntilebox(ng)`), so grown tiles still partition the grown box.
    #[must_use]
    pub fn growntilebox(&self, ng: IntVect) -> IndexBox {
        grown_tile(&self.tile, &self.valid, ng)
    }

    /// [`growntilebox`](Self::growntilebox) with the FabArray's whole ghost width.
    #[must_use]
    pub fn growntilebox_all(&self) -> IndexBox {
        self.growntilebox(self.ngrow)
    }

    /// Number of this tile within its fab.
    #[must_use]
    pub fn tile_index(&self) -> usize {
        self.tile_index
    }

    /// Number of tiles of this fab.
    #[must_use]
    pub fn num_local_tiles(&self) -> usize {
        self.num_tiles
    }
}

pub(crate) fn grown_tile(tile: &IndexBox, valid: &IndexBox, ng: IntVect) -> IndexBox {
    let mut b = *tile;
    for d in 0..3 {
        if tile.lo()[d] == valid.lo()[d] {
            b = b.grow_lo(d, ng[d]);
        }
        if tile.hi()[d] == valid.hi()[d] {
            b = b.grow_hi(d, ng[d]);
        }
    }
    b
}

/// AMReX's `buildTileArray` for one box plus `MFIter::tilebox()`'s nodal conversion:
/// cell-centred tiles of about `ts` cells, as equal as possible (the first `nleft` tiles
/// one cell longer), `x` fastest; in nodal directions each tile owns its low nodes and
/// the last tile also the high node.
pub(crate) fn tile_boxes(valid: &IndexBox, ts: Option<IntVect>) -> Vec<IndexBox> {
    let Some(ts) = ts else {
        return alloc::vec![*valid];
    };
    assert!(ts.all_gt(IntVect::ZERO), "tile size {ts} must be positive");
    let typ = valid.ix_type();
    let cbx = valid.enclosed_cells();
    let len = cbx.length();
    let mut nt = [0i32; 3];
    let mut tsize = [0i32; 3];
    let mut nleft = [0i32; 3];
    for d in 0..3 {
        nt[d] = (len[d] / ts[d]).max(1);
        tsize[d] = len[d] / nt[d];
        nleft[d] = len[d] - nt[d] * tsize[d];
    }
    let range = |d: usize, t: i32| -> (i32, i32) {
        if t < nleft[d] {
            let s = t * (tsize[d] + 1);
            (s, s + tsize[d])
        } else {
            let s = t * tsize[d] + nleft[d];
            (s, s + tsize[d] - 1)
        }
    };
    // Each count is at least 1; the capacity is only a hint (their product may not fit
    // i32, nor usize: then none is given).
    let count = nt
        .iter()
        .try_fold(1usize, |a, &n| a.checked_mul(usize::try_from(n).ok()?));
    let mut out = Vec::with_capacity(count.unwrap_or(0));
    for k in 0..nt[2] {
        let (kl, kh) = range(2, k);
        for j in 0..nt[1] {
            let (jl, jh) = range(1, j);
            for i in 0..nt[0] {
                let (il, ih) = range(0, i);
                let lo = cbx.lo() + IntVect::new(il, jl, kl);
                let hi = cbx.lo() + IntVect::new(ih, jh, kh);
                let mut t = IndexBox::new(lo, hi).convert(typ);
                for d in 0..3 {
                    if typ.node_centered_dir(d) && t.hi()[d] < valid.hi()[d] {
                        t = t.grow_hi(d, -1);
                    }
                }
                out.push(t);
            }
        }
    }
    out
}

/// Iterator over the local fabs of a FabArray and their tiles, AMReX's `MFIter`.
///
/// It owns its list of items and does not borrow the FabArray.
///
/// ```
/// use amrex_box::{IndexBox, IntVect};
/// use amrex_multifab::{BoxArray, DistributionMapping, MultiFab, Tiling};
/// // Two boxes of 16 x 16 x 8, each cut into two tiles of 16 x 8 x 8.
/// let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(15));
/// let ba = BoxArray::from_domain_iv(domain, IntVect::new(16, 16, 8));
/// let dm = DistributionMapping::single(&ba);
/// let mut mf = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
/// let mut ncells = 0;
/// for mfi in mf.mfiter(Tiling::Default) {
///     let bx = mfi.tilebox();
///     let mut a = mf.array_mut(&mfi);
///     a.fill(bx, 1.0);
///     ncells += bx.num_pts();
/// }
/// assert_eq!(ncells, 16 * 16 * 16);
/// assert_eq!(mf.mfiter(Tiling::Default).count(), 4);
/// ```
#[derive(Clone, Debug)]
pub struct MFIter {
    items: alloc::vec::IntoIter<Mfi>,
}

impl MFIter {
    pub(crate) fn new(ba: &BoxArray, local: &[usize], ngrow: IntVect, tiling: Tiling) -> Self {
        let mut items = Vec::with_capacity(local.len());
        for (l, &g) in local.iter().enumerate() {
            let valid = ba.get(g);
            let Some(size) = tiling.size() else {
                // One item per fab: no tile list to build.
                items.push(Mfi {
                    index: g,
                    local: l,
                    tile: valid,
                    valid,
                    ngrow,
                    tile_index: 0,
                    num_tiles: 1,
                });
                continue;
            };
            let tiles = tile_boxes(&valid, Some(size));
            let n = tiles.len();
            for (t, tile) in tiles.into_iter().enumerate() {
                items.push(Mfi {
                    index: g,
                    local: l,
                    tile,
                    valid,
                    ngrow,
                    tile_index: t,
                    num_tiles: n,
                });
            }
        }
        Self {
            items: items.into_iter(),
        }
    }

    /// The remaining items as a vector.
    #[must_use]
    pub fn into_vec(self) -> Vec<Mfi> {
        self.items.collect()
    }
}

impl Iterator for MFIter {
    type Item = Mfi;
    fn next(&mut self) -> Option<Mfi> {
        self.items.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.items.size_hint()
    }
}

impl ExactSizeIterator for MFIter {}
impl DoubleEndedIterator for MFIter {
    fn next_back(&mut self) -> Option<Mfi> {
        self.items.next_back()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use amrex_box::IndexType;

    #[test]
    fn tiles_follow_amrex_split() {
        let v = IndexBox::new(IntVect::ZERO, IntVect::new(63, 19, 7));
        let t = tile_boxes(&v, Some(DEFAULT_TILE_SIZE));
        // y: 20 cells / 8 -> 2 tiles of 10; z: 1 tile.
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].hi(), IntVect::new(63, 9, 7));
        // 17 cells in tiles of 8 -> 2 tiles, 9 + 8.
        let v = IndexBox::new(IntVect::ZERO, IntVect::new(3, 16, 0));
        let t = tile_boxes(&v, Some(IntVect::new(4, 8, 1)));
        assert_eq!(t.iter().map(|b| b.length()[1]).collect::<Vec<_>>(), [9, 8]);
    }

    #[test]
    fn nodal_tiles_partition_the_nodal_box() {
        // Smaller under Miri (every node is checked against every tile).
        let n = if cfg!(miri) { 8 } else { 16 };
        let v = IndexBox::new(IntVect::ZERO, IntVect::splat(n - 1)).convert(IndexType::NODE);
        let t = tile_boxes(&v, Some(IntVect::splat(n / 2)));
        assert_eq!(t.len(), 8);
        assert_eq!(t.iter().map(IndexBox::num_pts).sum::<u64>(), v.num_pts());
        for p in v.iter() {
            assert_eq!(t.iter().filter(|b| b.contains(p)).count(), 1);
        }
    }

    #[test]
    fn grown_tiles_partition_the_grown_box() {
        // Uneven tiles in every direction; smaller under Miri.
        let (v, size) = if cfg!(miri) {
            (
                IndexBox::new(IntVect::ZERO, IntVect::new(4, 8, 8)),
                IntVect::new(2, 4, 4),
            )
        } else {
            (
                IndexBox::new(IntVect::ZERO, IntVect::new(9, 17, 16)),
                IntVect::new(4, 8, 8),
            )
        };
        let g = IntVect::new(1, 2, 3);
        let t = tile_boxes(&v, Some(size));
        assert_eq!(t.len(), 8);
        let gt: Vec<_> = t.iter().map(|b| grown_tile(b, &v, g)).collect();
        for p in v.grow_iv(g).iter() {
            assert_eq!(gt.iter().filter(|b| b.contains(p)).count(), 1, "{p}");
        }
    }
}
