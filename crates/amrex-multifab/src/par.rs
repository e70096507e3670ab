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

    /// The region this tile may write: the tile box, grown at the fab's boundary when
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

impl<T: Element, A: HostAccessible> FabArray<T, A> {
    fn tile_items(
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
    /// fab boundary, in parallel (rayon). Tiles are disjoint, so any thread may write
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
                let raw = raws[mfi.local_index()];
                // SAFETY: `&mut self` is borrowed for the iterator's lifetime, so nothing
                // else touches the fabs (Store invariants 1-2); grown tiles partition each grown
                // fab box (ng <= ngrow), so the tiles' regions never overlap.
                let array = unsafe { raw.array4_mut(region) };
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
            let raw = raws[mfi.local_index()];
            // SAFETY: as in `par_iter_tiles_mut`: exclusive borrow, disjoint regions.
            let array = unsafe { raw.array4_mut(region) };
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
            let raw = raws[mfi.local_index()];
            // SAFETY: as in `par_iter_tiles_mut`: exclusive borrow, disjoint regions,
            // each item visited once.
            let array = unsafe { raw.array4_mut(region) };
            f(TileMut { mfi, region, array });
        });
    }
}
