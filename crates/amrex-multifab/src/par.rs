//! Parallel iteration over tiles (rayon with `std`, sequential without), through
//! `amrex_runtime::threads`.

use alloc::vec::Vec;

use amrex_arena::HostAccessible;
use amrex_array4::Array4Mut;
use amrex_box::{IndexBox, IntVect};

use crate::element::Element;
use crate::fabarray::{FabArray, RawFab};
use crate::mfiter::{Mfi, Tiling};
use amrex_runtime::threads::par_for;

/// A tile handed to one thread: the [`Mfi`] item and a mutable `Array4` restricted to
/// the tile's region, so tiles of one FabArray never alias.
#[derive(Debug)]
pub struct TileMut<'a, T> {
    mfi: Mfi,
    region: IndexBox,
    array: Array4Mut<'a, T>,
}

impl<'a, T> TileMut<'a, T> {
    /// The iterator item (box index, valid box, tile box, ...).
    #[must_use]
    pub fn mfi(&self) -> &Mfi {
        &self.mfi
    }

    /// Global index of the box.
    #[must_use]
    pub fn index(&self) -> usize {
        self.mfi.index()
    }

    /// The tile box (without ghost cells).
    #[must_use]
    pub fn tilebox(&self) -> IndexBox {
        self.mfi.tilebox()
    }

    /// The valid box of the fab.
    #[must_use]
    pub fn validbox(&self) -> IndexBox {
        self.mfi.validbox()
    }

    /// The fab box (valid box plus ghost cells).
    #[must_use]
    pub fn fabbox(&self) -> IndexBox {
        self.mfi.fabbox()
    }

    /// The region this tile may write: the tile box, grown where it touches the valid
    /// box's boundary when
    /// the tiles were asked for with ghost cells.
    #[must_use]
    pub fn region(&self) -> IndexBox {
        self.region
    }

    /// Mutable view of the region (global indices; only the region is addressable).
    #[must_use]
    pub fn array_mut(&mut self) -> Array4Mut<'_, T> {
        self.array.reborrow()
    }

    /// The mutable view, consuming the tile.
    #[must_use]
    pub fn into_array_mut(self) -> Array4Mut<'a, T> {
        self.array
    }
}

/// The mutable view of tile item `(mfi, region)` (from [`FabArray::tile_items`]) of the
/// fabs `raws`.
///
/// # Safety
/// `raws` are the fabs of a FabArray borrowed exclusively for `'t` (so nothing else
/// touches them: Store invariants 1-2), and no other view of the same item exists for
/// `'t`. Then the view aliases nothing: the items' regions are the tiles of one MFIter
/// grown by `0 <= ng <= ngrow` where they touch their valid box's boundary, which
/// partition each fab's valid box grown by `ng` (nodal tiles own their low nodes, the
/// last one also its high node), and regions of different fabs lie in different fabs'
/// memory (Store invariant 3), even where their index boxes overlap.
pub(crate) unsafe fn tile_view<'t, T>(
    raws: &[RawFab<T>],
    mfi: &Mfi,
    region: IndexBox,
) -> Array4Mut<'t, T> {
    // SAFETY: the caller's obligations; `array4_mut` asserts that the region lies inside
    // the fab (`ng <= ngrow`).
    unsafe { raws[mfi.local_index()].array4_mut(region) }
}

impl<T: Element, A: HostAccessible> FabArray<T, A> {
    /// Every item of the MFIter with `tiling`, with its tile grown by `ng` where it
    /// touches the valid box's boundary, and the raw fabs to view them in
    /// ([`tile_view`]).
    ///
    /// # Panics
    /// If `ng` is negative or wider than the FabArray's ghost cells.
    pub(crate) fn tile_items(
        &mut self,
        tiling: Tiling,
        ng: IntVect,
    ) -> (Vec<(Mfi, IndexBox)>, Vec<RawFab<T>>) {
        assert!(
            ng.all_ge(IntVect::ZERO) && ng.all_le(self.ngrow),
            "FabArray: ghost width {ng} exceeds the FabArray's {}",
            self.ngrow
        );
        let items = self
            .mfiter(tiling)
            .map(|m| (m, m.growntilebox(ng)))
            .collect();
        (items, self.raws_mut())
    }

    /// Every tile as a [`TileMut`] whose region is the tile box grown by `ng` at the
    /// valid box's boundary, in parallel (rayon). Tiles are disjoint, so any thread may write
    /// its tile; other FabArrays can be read inside the closure through
    /// [`array`](Self::array) of the tile's [`Mfi`].
    ///
    /// ```
    /// # #[cfg(not(miri))] { // rayon's pool needs integer-to-pointer casts Miri refuses
    /// use amrex_box::{IndexBox, IntVect};
    /// use amrex_multifab::{BoxArray, DistributionMapping, MultiFab, Tiling};
    /// use rayon::prelude::*;
    /// let ba = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::splat(15)), 8);
    /// let dm = DistributionMapping::single(&ba);
    /// let mut mf = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
    /// mf.par_iter_tiles_mut(Tiling::Default, IntVect::ZERO).for_each(|mut t| {
    ///     let bx = t.region();
    ///     t.array_mut().for_each_mut(bx, |i, j, k, _n, v| *v = f64::from(i + j + k));
    /// });
    /// assert_eq!(mf.sum(0..1, 0).unwrap(), 16.0 * 16.0 * 16.0 * 22.5);
    /// # }
    /// ```
    #[cfg(feature = "std")]
    pub fn par_iter_tiles_mut(
        &mut self,
        tiling: impl Into<Tiling>,
        ng: IntVect,
    ) -> impl rayon::iter::IndexedParallelIterator<Item = TileMut<'_, T>> + '_ {
        use rayon::prelude::*;
        let (items, raws) = self.tile_items(tiling.into(), ng);
        items
            .into_par_iter()
            .with_max_len(1)
            .map(move |(mfi, region)| {
                // SAFETY: `&mut self` is borrowed for the iterator's lifetime and the
                // iterator yields each item once (`tile_view`'s obligations).
                let array = unsafe { tile_view(&raws, &mfi, region) };
                TileMut { mfi, region, array }
            })
    }

    /// Sequential version of [`par_iter_tiles_mut`](Self::par_iter_tiles_mut).
    pub fn iter_tiles_mut(
        &mut self,
        tiling: impl Into<Tiling>,
        ng: IntVect,
    ) -> impl Iterator<Item = TileMut<'_, T>> + '_ {
        let (items, raws) = self.tile_items(tiling.into(), ng);
        items.into_iter().map(move |(mfi, region)| {
            // SAFETY: as in `par_iter_tiles_mut`: exclusive borrow, each item once.
            let array = unsafe { tile_view(&raws, &mfi, region) };
            TileMut { mfi, region, array }
        })
    }

    /// Calls `f` on every tile in parallel (sequentially without `std`); see
    /// [`par_iter_tiles_mut`](Self::par_iter_tiles_mut).
    pub fn par_for_each_tile(
        &mut self,
        tiling: impl Into<Tiling>,
        ng: IntVect,
        f: impl Fn(TileMut<'_, T>) + Sync + Send,
    ) {
        let (items, raws) = self.tile_items(tiling.into(), ng);
        par_for(items.len(), |n| {
            let (mfi, region) = items[n];
            // SAFETY: as in `par_iter_tiles_mut`: exclusive borrow; `par_for` runs each
            // item once.
            let array = unsafe { tile_view(&raws, &mfi, region) };
            f(TileMut { mfi, region, array });
        });
    }
}
