//! [`Zip`]: one tile loop over several FabArrays of one layout, ndarray's `Zip` for
//! FabArrays (AMReX's `MFIter` loop that takes `array(mfi)` of several MultiFabs).
//!
//! Every operand is a FabArray on the same boxes (cell-centred, or face- or
//! node-centred: `ba.convert(...)` of them) and the same DistributionMapping. Tile `t`
//! of local fab `l` is one item of the loop for every operand: a cell operand's tile is
//! the cell tile, a nodal operand's the nodal tile `mfiter.rs` makes of it (each tile
//! owns its low nodes, the last one also the high node). A shared operand
//! (`&FabArray`) hands each item an [`Array4`] of its whole fab (global indices, ghost
//! cells included, for stencils); a mutable one (`&mut FabArray`) an [`Array4Mut`] of
//! its own tile grown by `ng` where the tile touches its valid box's boundary
//! (`Mfi::growntilebox`), in its own index type, so that no item can write outside its
//! tile and items never alias.

use alloc::vec::Vec;
use core::fmt;
use core::marker::PhantomData;

use amrex_arena::HostAccessible;
use amrex_array4::{Array4, Array4Mut};
use amrex_box::{IndexBox, IntVect};
use amrex_runtime::threads::par_for;

use crate::box_array::BoxArray;
use crate::distribution::DistributionMapping;
use crate::element::Element;
use crate::error::FabArrayError;
use crate::fabarray::{FabArray, RawFab};
use crate::mfiter::{MFIter, Mfi, Tiling};
use crate::ops::check_ghost;
use crate::par::tile_view;

/// A tile loop over up to six operands, each a FabArray or an array or `Option` of them
/// (ndarray's `Zip`, AMReX's `MFIter` over several MultiFabs).
///
/// [`Zip::from`] takes the first operand, the *leader*: one FabArray (`&` or `&mut`,
/// not an array or `Option`), whose [`Mfi`] items (tile box, valid box, indices, in its
/// index type) the loop hands out; [`and`](Self::and) adds the others, up to six
/// operands in all. An operand is
///
/// - `&FabArray<T, A>` (host-accessible arena): each item gets an [`Array4<'_, T>`] of
///   the whole fab, ghost cells included, indexed with global indices;
/// - `&mut FabArray<T, A>`: each item gets an [`Array4Mut<'_, T>`] of *its own tile*
///   grown by `ng` where the tile touches its valid box's boundary
///   ([`Mfi::growntilebox`]), in the operand's own index type (a nodal
///   operand's tiles own their low faces, the last one also the high face), so the
///   closure cannot write outside its tile and parallel items never alias;
/// - an array `[O; N]` of operands (`fluxes.each_mut()`, `vel.each_ref()`): an array of
///   their views;
/// - an `Option<O>`: `None` for every item when absent.
///
/// The operands must share the leader's boxes (in any index type: `ba.convert(...)` of
/// the same BoxArray) and DistributionMapping; [`for_each`](Self::for_each) and
/// [`par_for_each`](Self::par_for_each) check this, and that `ng` is neither negative
/// nor wider than a mutable operand's ghost cells, before the first item, and return
/// [`FabArrayError::LayoutMismatch`] or [`FabArrayError::GhostOutside`] rather than run.
///
/// ```
/// # #[cfg(not(miri))] { // rayon's pool needs integer-to-pointer casts Miri refuses
/// use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IndexType, IntVect, MultiFab, Tiling, Zip};
/// let ba = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::splat(15)), 8);
/// let dm = DistributionMapping::single(&ba);
/// let mut phi = MultiFab::new(&ba, &dm, 1, IntVect::splat(1));
/// phi.fill(2.0)?;
/// // The x-face fluxes -(phi(i) - phi(i-1)), on faces of the same boxes, and a new state.
/// let xfaces = ba.convert(IndexType::CELL.with_node(0));
/// let mut flux = MultiFab::new(&xfaces, &dm, 1, IntVect::ZERO);
/// let mut new = MultiFab::new(&ba, &dm, 1, IntVect::ZERO);
/// Zip::from(&mut flux).and(&phi).par_for_each(Tiling::Default, IntVect::ZERO, |_, (mut fx, p)| {
///     let faces = fx.index_box();
///     fx.for_each_mut(faces, |i, j, k, _, f| *f = -(p[(i, j, k, 0)] - p[(i - 1, j, k, 0)]));
/// })?;
/// Zip::from(&mut new).and(&phi).and(&flux).par_for_each(Tiling::Default, IntVect::ZERO, |mfi, (mut n, p, fx)| {
///     n.for_each_mut(mfi.tilebox(), |i, j, k, _, v| {
///         *v = p[(i, j, k, 0)] + fx[(i, j, k, 0)] - fx[(i + 1, j, k, 0)];
///     });
/// })?;
/// assert_eq!(new.sum(0..1, 0)?, 2.0 * 16.0 * 16.0 * 16.0);
///
/// // Boxes of another BoxArray are refused before anything runs.
/// let other = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::splat(15)), 4);
/// let odd = MultiFab::new(&other, &DistributionMapping::single(&other), 1, IntVect::ZERO);
/// let r = Zip::from(&mut new).and(&odd).for_each(Tiling::None, IntVect::ZERO, |_, _| unreachable!());
/// assert_eq!(r, Err(amrex_multifab::FabArrayError::LayoutMismatch));
/// # }
/// # Ok::<(), amrex_multifab::FabArrayError>(())
/// ```
///
/// The leader is one FabArray, not an `Option` or an array (whose absence would leave
/// the items' index type to whichever operand came next):
///
/// ```compile_fail,E0277
/// use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IntVect, MultiFab, Tiling, Zip};
/// let ba = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::splat(7)), 4);
/// let mut a = MultiFab::new(&ba, &DistributionMapping::single(&ba), 1, IntVect::ZERO);
/// Zip::from(Some(&mut a)).for_each(Tiling::None, IntVect::ZERO, |_, _| {}).unwrap();
/// ```
///
/// One FabArray cannot be both written and read (or written twice) in one loop: the
/// borrows refuse it.
///
/// ```compile_fail,E0502
/// use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IntVect, MultiFab, Tiling, Zip};
/// let ba = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::splat(7)), 4);
/// let mut a = MultiFab::new(&ba, &DistributionMapping::single(&ba), 1, IntVect::ZERO);
/// Zip::from(&mut a).and(&a).for_each(Tiling::None, IntVect::ZERO, |_, _| {}).unwrap();
/// ```
#[derive(Debug)]
#[must_use = "a Zip does nothing until for_each or par_for_each runs it"]
pub struct Zip<P> {
    operands: P,
}

mod sealed {
    pub trait Sealed {}
}

/// What a [`Zip`] can loop over: `&FabArray` and `&mut FabArray` (host-accessible
/// arenas), arrays and `Option`s of operands, and tuples of them (what
/// [`Zip::and`] builds). Sealed; its hidden methods are the loop's machinery.
pub trait Operand<'a>: sealed::Sealed {
    /// What each item of the loop gets: an [`Array4<'a, T>`] of the whole fab for
    /// `&FabArray`, an [`Array4Mut<'a, T>`] of the item's own grown tile for
    /// `&mut FabArray`, arrays, `Option`s and tuples of those.
    type View;
    /// The operand prepared for the loop.
    #[doc(hidden)]
    type Tiles: Sync;
    /// Each FabArray of the operand, for the checks.
    #[doc(hidden)]
    fn probes<'p>(&'p self, out: &mut Vec<Probe<'p>>);
    /// Prepares the loop: `tiling` and `ng` as the [`Zip`] was run with.
    #[doc(hidden)]
    fn tiles(self, tiling: Tiling, ng: IntVect) -> Self::Tiles;
    /// The views of item `n`, whose leader's item is `mfi`.
    ///
    /// # Safety
    /// No `n` is asked for twice of one `tiles`: the mutable views of distinct items never
    /// overlap, two of the same item would.
    #[doc(hidden)]
    unsafe fn view(tiles: &Self::Tiles, n: usize, mfi: &Mfi) -> Self::View;
}

/// What can lead a [`Zip`]: one FabArray, shared or mutable, so that the loop's [`Mfi`]
/// items are always that FabArray's (its index type). Sealed.
pub trait Leader<'a>: Operand<'a> {}

impl<'a, T: Element, A: HostAccessible> Leader<'a> for &'a FabArray<T, A> {}
impl<'a, T: Element, A: HostAccessible> Leader<'a> for &'a mut FabArray<T, A> {}

/// One FabArray of a [`Zip`] as its checks see it: its layout, ghost width and
/// whether the loop writes it.
#[derive(Clone, Copy, Debug)]
pub struct Probe<'p> {
    ba: &'p BoxArray,
    dm: &'p DistributionMapping,
    rank: usize,
    local: &'p [usize],
    ngrow: IntVect,
    writes: bool,
}

impl<'p> Probe<'p> {
    fn of<T: Element, A: HostAccessible>(fa: &'p FabArray<T, A>, writes: bool) -> Self {
        Self {
            ba: &fa.ba,
            dm: &fa.dm,
            rank: fa.rank,
            local: &fa.local,
            ngrow: fa.ngrow,
            writes,
        }
    }

    /// Whether this FabArray's fabs correspond one to one to the leader's: the same
    /// boxes in its own index type, the same map, the same rank's part.
    fn corresponds(&self, lead: &Probe<'_>) -> bool {
        let typ = lead.ba.ix_type();
        let same_boxes = self.ba.same_as(lead.ba)
            || (self.ba.len() == lead.ba.len()
                && self
                    .ba
                    .boxes()
                    .iter()
                    .zip(lead.ba.boxes())
                    .all(|(b, l)| b.convert(typ) == *l));
        same_boxes && (self.dm.same_as(lead.dm) || self.dm == lead.dm) && self.rank == lead.rank
    }
}

/// The checks of a [`Zip`] run with ghost width `ng`: every FabArray corresponds to the
/// leader (the first probe), and `ng` is neither negative nor wider than a written
/// FabArray's ghost cells (`ops::check_ghost`; with nothing written, against the
/// leader's, which only the sign can fail: the leader's items do not depend on `ng`).
fn check(probes: &[Probe<'_>], ng: IntVect) -> Result<(), FabArrayError> {
    let lead = probes.first().expect("a Zip's leader is a FabArray");
    if probes.iter().any(|p| !p.corresponds(lead)) {
        return Err(FabArrayError::LayoutMismatch);
    }
    let mut written = probes.iter().filter(|p| p.writes).peekable();
    if written.peek().is_none() {
        return match ng.all_ge(IntVect::ZERO) {
            true => Ok(()),
            false => Err(FabArrayError::GhostOutside {
                ng,
                ngrow: lead.ngrow,
            }),
        };
    }
    written.try_for_each(|p| check_ghost(ng, p.ngrow))
}

/// A shared operand prepared for the loop: an [`Array4`] of every local fab.
#[derive(Debug)]
pub struct ReadTiles<'a, T> {
    arrays: Vec<Array4<'a, T>>,
}

/// A mutable operand prepared for the loop: its fabs' raw layouts and, per item, its
/// own item and the region the item may write.
pub struct WriteTiles<'a, T> {
    raws: Vec<RawFab<T>>,
    regions: Vec<(Mfi, IndexBox)>,
    /// The FabArray stays borrowed exclusively while the views live.
    _borrow: PhantomData<&'a mut [T]>,
}

impl<T> fmt::Debug for WriteTiles<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WriteTiles")
            .field("regions", &self.regions)
            .finish_non_exhaustive()
    }
}

impl<T: Element, A: HostAccessible> sealed::Sealed for &FabArray<T, A> {}

impl<'a, T: Element, A: HostAccessible> Operand<'a> for &'a FabArray<T, A> {
    type View = Array4<'a, T>;
    type Tiles = ReadTiles<'a, T>;

    fn probes<'p>(&'p self, out: &mut Vec<Probe<'p>>) {
        out.push(Probe::of(self, false));
    }

    fn tiles(self, _: Tiling, _: IntVect) -> ReadTiles<'a, T> {
        ReadTiles {
            arrays: self.arrays(),
        }
    }

    unsafe fn view(tiles: &ReadTiles<'a, T>, _: usize, mfi: &Mfi) -> Array4<'a, T> {
        // The leader's local index: the checks found the same map and rank, so the same
        // local boxes in the same order.
        tiles.arrays[mfi.local_index()]
    }
}

impl<T: Element, A: HostAccessible> sealed::Sealed for &mut FabArray<T, A> {}

impl<'a, T: Element, A: HostAccessible> Operand<'a> for &'a mut FabArray<T, A> {
    type View = Array4Mut<'a, T>;
    type Tiles = WriteTiles<'a, T>;

    fn probes<'p>(&'p self, out: &mut Vec<Probe<'p>>) {
        out.push(Probe::of(self, true));
    }

    fn tiles(self, tiling: Tiling, ng: IntVect) -> WriteTiles<'a, T> {
        // The operand's own items, in the leader's order (same boxes, map and tile
        // counts): its own tiles in its own index type (`ng` was checked against its
        // ghost width).
        let (regions, raws) = self.tile_items(tiling, ng);
        WriteTiles {
            raws,
            regions,
            _borrow: PhantomData,
        }
    }

    unsafe fn view(tiles: &WriteTiles<'a, T>, n: usize, _: &Mfi) -> Array4Mut<'a, T> {
        let (mfi, region) = tiles.regions[n];
        // SAFETY: the FabArray is borrowed exclusively for 'a (`tiles` and the views
        // carry that borrow), and no item is asked for twice (the caller):
        // `tile_view`'s obligations.
        unsafe { tile_view(&tiles.raws, &mfi, region) }
    }
}

impl<O, const N: usize> sealed::Sealed for [O; N] {}

impl<'a, O: Operand<'a>, const N: usize> Operand<'a> for [O; N] {
    type View = [O::View; N];
    type Tiles = [O::Tiles; N];

    fn probes<'p>(&'p self, out: &mut Vec<Probe<'p>>) {
        for o in self {
            o.probes(out);
        }
    }

    fn tiles(self, tiling: Tiling, ng: IntVect) -> Self::Tiles {
        self.map(|o| o.tiles(tiling, ng))
    }

    unsafe fn view(tiles: &Self::Tiles, n: usize, mfi: &Mfi) -> Self::View {
        core::array::from_fn(|i| {
            // SAFETY: item `n` of each element once, as the caller asks it once.
            unsafe { O::view(&tiles[i], n, mfi) }
        })
    }
}

impl<O> sealed::Sealed for Option<O> {}

impl<'a, O: Operand<'a>> Operand<'a> for Option<O> {
    type View = Option<O::View>;
    type Tiles = Option<O::Tiles>;

    fn probes<'p>(&'p self, out: &mut Vec<Probe<'p>>) {
        if let Some(o) = self {
            o.probes(out);
        }
    }

    fn tiles(self, tiling: Tiling, ng: IntVect) -> Self::Tiles {
        self.map(|o| o.tiles(tiling, ng))
    }

    unsafe fn view(tiles: &Self::Tiles, n: usize, mfi: &Mfi) -> Self::View {
        tiles.as_ref().map(|t| {
            // SAFETY: item `n` once, as the caller asks it once.
            unsafe { O::view(t, n, mfi) }
        })
    }
}

/// `Operand` for the tuples `Zip` builds, and `Zip::and` from each arity to the next.
macro_rules! tuples {
    ($(($o:ident $t:ident $i:tt)),+) => {
        impl<$($o),+> sealed::Sealed for ($($o,)+) {}

        impl<'a, $($o: Operand<'a>),+> Operand<'a> for ($($o,)+) {
            type View = ($($o::View,)+);
            type Tiles = ($($o::Tiles,)+);

            fn probes<'p>(&'p self, out: &mut Vec<Probe<'p>>) {
                $(self.$i.probes(out);)+
            }

            fn tiles(self, tiling: Tiling, ng: IntVect) -> Self::Tiles {
                ($(self.$i.tiles(tiling, ng),)+)
            }

            unsafe fn view(tiles: &Self::Tiles, n: usize, mfi: &Mfi) -> Self::View {
                ($(
                    // SAFETY: item `n` of each operand once, as the caller asks it once.
                    // A `&mut` operand is borrowed exclusively, so no other operand is
                    // that FabArray (shared operands may repeat: they only read).
                    unsafe { $o::view(&tiles.$i, n, mfi) },
                )+)
            }
        }
    };
}

tuples!((A a 0));
tuples!((A a 0), (B b 1));
tuples!((A a 0), (B b 1), (C c 2));
tuples!((A a 0), (B b 1), (C c 2), (D d 3));
tuples!((A a 0), (B b 1), (C c 2), (D d 3), (E e 4));
tuples!((A a 0), (B b 1), (C c 2), (D d 3), (E e 4), (F f 5));

/// `Zip::and` from `n` operands to `n + 1`.
macro_rules! and {
    ($(($o:ident $v:ident)),+) => {
        impl<$($o),+> Zip<($($o,)+)> {
            /// Adds an operand (see [`Zip`]); up to six.
            pub fn and<'a, Q: Operand<'a>>(self, q: Q) -> Zip<($($o,)+ Q,)> {
                let ($($v,)+) = self.operands;
                Zip {
                    operands: ($($v,)+ q,),
                }
            }
        }
    };
}

and!((A a));
and!((A a), (B b));
and!((A a), (B b), (C c));
and!((A a), (B b), (C c), (D d));
and!((A a), (B b), (C c), (D d), (E e));

impl<A> Zip<(A,)> {
    /// A loop over `leader`'s tiles (see [`Zip`]); [`and`](Self::and) adds operands.
    pub fn from<'a>(leader: A) -> Self
    where
        A: Leader<'a>,
    {
        Self {
            operands: (leader,),
        }
    }
}

impl<P> Zip<P> {
    /// Checks the operands, then the leader's items (its MFIter's with `tiling`) and
    /// every operand prepared for them.
    fn prepare<'a>(self, tiling: Tiling, ng: IntVect) -> Result<(Vec<Mfi>, P::Tiles), FabArrayError>
    where
        P: Operand<'a>,
    {
        let mut probes = Vec::new();
        self.operands.probes(&mut probes);
        check(&probes, ng)?;
        let lead = &probes[0]; // the leader, a FabArray (`check` found it)
        let items = MFIter::new(lead.ba, lead.local, lead.ngrow, tiling).into_vec();
        Ok((items, self.operands.tiles(tiling, ng)))
    }

    /// Calls `f(mfi, views)` for every tile, one after the other in the leader's MFIter
    /// order; `mfi` is the leader's item (its tile box, valid box, indices), `views`
    /// one view per operand (see [`Zip`]), a mutable operand's restricted to its tile
    /// grown by `ng` where it touches its valid box's boundary.
    ///
    /// # Errors
    /// Before any tile: [`FabArrayError::LayoutMismatch`] if an operand's boxes (in the
    /// leader's index type), map or rank differ from the leader's;
    /// [`FabArrayError::GhostOutside`] if `ng` is negative or wider than a mutable
    /// operand's ghost cells.
    pub fn for_each<'a>(
        self,
        tiling: impl Into<Tiling>,
        ng: IntVect,
        mut f: impl FnMut(&Mfi, P::View),
    ) -> Result<(), FabArrayError>
    where
        P: Operand<'a>,
    {
        let (items, tiles) = self.prepare(tiling.into(), ng)?;
        for (n, mfi) in items.iter().enumerate() {
            // SAFETY: each item once.
            let views = unsafe { P::view(&tiles, n, mfi) };
            f(mfi, views);
        }
        Ok(())
    }

    /// [`for_each`](Self::for_each) with the tiles in parallel (one tile per task, on
    /// `amrex_runtime::threads`: rayon with `std`, sequential without); the mutable
    /// views of distinct tiles never overlap.
    ///
    /// # Errors
    /// As [`for_each`](Self::for_each), before any tile.
    pub fn par_for_each<'a>(
        self,
        tiling: impl Into<Tiling>,
        ng: IntVect,
        f: impl Fn(&Mfi, P::View) + Sync + Send,
    ) -> Result<(), FabArrayError>
    where
        P: Operand<'a>,
    {
        let (items, tiles) = self.prepare(tiling.into(), ng)?;
        par_for(items.len(), |n| {
            let mfi = &items[n];
            // SAFETY: `par_for` runs each `n` of `0..len` once.
            let views = unsafe { P::view(&tiles, n, mfi) };
            f(mfi, views);
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distribution::Strategy;
    use crate::fabarray::iMultiFab;
    use amrex_arena::HostArena;
    use amrex_box::IndexType;

    type Mf = FabArray<f64>;

    /// Every element of `fa` in its valid boxes grown by `ng` is `inside`, every other
    /// element (the rest of the ghost cells) `outside`.
    fn assert_grown_region(fa: &Mf, ng: IntVect, inside: f64, outside: f64, what: &str) {
        for mfi in fa.mfiter(Tiling::None) {
            let grown = mfi.validbox().grow_iv(ng);
            fa.array(&mfi).for_each(mfi.fabbox(), |i, j, k, n, v| {
                let p = IntVect::new(i, j, k);
                let want = if grown.contains(p) { inside } else { outside };
                assert_eq!(*v, want, "{what}: box {} point {p} comp {n}", mfi.index());
            });
        }
    }

    /// Whether two boxes have the same corners (an `Array4`'s box is cell-centred).
    fn same_points(a: IndexBox, b: IndexBox) -> bool {
        a.lo() == b.lo() && a.hi() == b.hi()
    }

    /// Every index type of the tests: cells, the three faces, nodes.
    fn types() -> [IndexType; 5] {
        [
            IndexType::CELL,
            IndexType::CELL.with_node(0),
            IndexType::CELL.with_node(1),
            IndexType::CELL.with_node(2),
            IndexType::NODE,
        ]
    }

    /// Brute force: for cell, face and node operands, tilings (none, uneven small tiles,
    /// AMReX's default) and ghost widths, every element of every mutable operand's
    /// valid box grown by `ng` is visited exactly once (each item adds 1 to its whole
    /// view) and no other element is; the shared operand's view is its whole fab, and
    /// a cell operand's region is the leader's grown tile.
    #[test]
    fn every_element_of_every_grown_region_once() {
        // Uneven boxes (a 5-cell one in x) and, under Miri, fewer cases.
        let (hi, tiles) = if cfg!(miri) {
            (
                IntVect::new(6, 4, 2),
                alloc::vec![Tiling::Size(IntVect::new(2, 2, 1))],
            )
        } else {
            (
                IntVect::new(12, 9, 6),
                alloc::vec![
                    Tiling::None,
                    Tiling::Default,
                    Tiling::Size(IntVect::new(2, 3, 2)),
                    Tiling::Size(IntVect::new(4, 2, 3)),
                ],
            )
        };
        let domain = IndexBox::new(IntVect::ZERO, hi);
        let ba = BoxArray::from_domain_iv(domain, IntVect::new(4, 5, 4));
        let dm = DistributionMapping::single(&ba);
        let ngrow = IntVect::new(2, 1, 1);
        let widths = if cfg!(miri) {
            alloc::vec![IntVect::new(1, 0, 1)]
        } else {
            alloc::vec![IntVect::ZERO, IntVect::UNIT, IntVect::new(2, 0, 1)]
        };
        let typs = types();
        for &tiling in &tiles {
            for &ng in &widths {
                let mut cell = Mf::new(&ba, &dm, 2, ngrow);
                let mut others: Vec<Mf> = typs[1..]
                    .iter()
                    .map(|&t| Mf::new(&ba.convert(t), &dm, 1, ngrow))
                    .collect();
                let mut read = Mf::new(&ba.convert(IndexType::NODE), &dm, 1, IntVect::UNIT);
                read.fill(7.0).unwrap();
                let [xf, yf, zf, nd] = &mut others[..] else {
                    unreachable!()
                };
                Zip::from(&mut cell)
                    .and(&*xf)
                    .and([&mut *yf, &mut *zf])
                    .and(Some(&mut *nd))
                    .and(&read)
                    .par_for_each(tiling, ng, |mfi, (mut c, _, [mut y, mut z], n, r)| {
                        assert_eq!(c.index_box(), mfi.growntilebox(ng));
                        let whole = mfi.validbox().convert(IndexType::NODE).grow(1);
                        assert!(same_points(r.index_box(), whole));
                        assert_eq!(r[(mfi.validbox().lo(), 0)], 7.0);
                        let mut n = n.expect("the node operand is there");
                        for a in [&mut c, &mut y, &mut z, &mut n] {
                            let bx = a.index_box();
                            a.for_each_mut(bx, |_, _, _, _, v| *v += 1.0);
                        }
                    })
                    .unwrap();
                let what = alloc::format!("{tiling:?} ng {ng}");
                assert_grown_region(&cell, ng, 1.0, 0.0, &what);
                for fa in [&*yf, &*zf, &*nd] {
                    assert_grown_region(fa, ng, 1.0, 0.0, &what);
                }
                // A face operand may lead: its items are its nodal tiles, the cell
                // operand's regions the cell tiles they come from.
                Zip::from(&mut *xf)
                    .and(&mut cell)
                    .for_each(tiling, ng, |mfi, (mut x, mut c)| {
                        assert!(same_points(x.index_box(), mfi.growntilebox(ng)));
                        assert_eq!(c.index_box().lo(), mfi.growntilebox(ng).lo());
                        for a in [&mut x, &mut c] {
                            let bx = a.index_box();
                            a.for_each_mut(bx, |_, _, _, _, v| *v += 1.0);
                        }
                    })
                    .unwrap();
                assert_grown_region(xf, ng, 1.0, 0.0, &what);
                assert_grown_region(&cell, ng, 2.0, 0.0, &what);
            }
        }
    }

    #[test]
    fn each_item_writes_its_own_tile_with_every_element_type() {
        let ba = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::new(7, 3, 3)), 4);
        let dm = DistributionMapping::single(&ba);
        let mut a = Mf::new(&ba, &dm, 1, IntVect::ZERO);
        let mut tags = iMultiFab::new(&ba, &dm, 1, IntVect::ZERO);
        a.fill(3.0).unwrap();
        let tiling = Tiling::Size(IntVect::splat(2));
        let mut items = 0;
        Zip::from(&mut tags)
            .and(&a)
            .for_each(tiling, IntVect::ZERO, |mfi, (mut t, a)| {
                items += 1;
                let bx = mfi.tilebox();
                t.for_each_mut(bx, |i, j, k, _, v| {
                    *v =
                        i32::from(a[(i, j, k, 0)] > 2.0) + i32::try_from(mfi.tile_index()).unwrap();
                });
            })
            .unwrap();
        // 2 boxes of 4 x 4 x 4, each in 8 tiles of 2³; every cell holds 1 + the index of
        // the tile that contains it.
        assert_eq!(items, 16);
        for mfi in tags.mfiter(tiling) {
            let want = 1 + i32::try_from(mfi.tile_index()).unwrap();
            tags.array(&mfi)
                .for_each(mfi.tilebox(), |_, _, _, _, v| assert_eq!(*v, want));
        }
    }

    /// A loop body that must not run.
    fn never<V>(_: &Mfi, _: V) {
        unreachable!("no tile may run");
    }

    #[test]
    fn layouts_and_ghost_widths_are_checked_before_any_tile() {
        let domain = IndexBox::new(IntVect::ZERO, IntVect::new(7, 7, 3));
        let ba = BoxArray::from_domain(domain, 4);
        let dm = DistributionMapping::single(&ba);
        let mut a = Mf::new(&ba, &dm, 1, IntVect::UNIT);
        // Other boxes, in any index type.
        let other = BoxArray::from_domain(domain, 8);
        let b = Mf::new(
            &other,
            &DistributionMapping::single(&other),
            1,
            IntVect::ZERO,
        );
        assert_eq!(
            Zip::from(&mut a)
                .and(&b)
                .for_each(Tiling::None, IntVect::ZERO, never),
            Err(FabArrayError::LayoutMismatch)
        );
        let xo = other.convert(IndexType::CELL.with_node(0));
        let mut xb = Mf::new(&xo, &DistributionMapping::single(&xo), 1, IntVect::ZERO);
        assert_eq!(
            Zip::from(&a)
                .and(&mut xb)
                .par_for_each(Tiling::None, IntVect::ZERO, never),
            Err(FabArrayError::LayoutMismatch)
        );
        // Another map, and another rank's part of the same map.
        let dm2 = DistributionMapping::with_strategy(&ba, 2, Strategy::RoundRobin);
        let c = Mf::new(&ba, &dm2, 1, IntVect::ZERO);
        assert_eq!(
            Zip::from(&mut a)
                .and(&c)
                .for_each(Tiling::None, IntVect::ZERO, never),
            Err(FabArrayError::LayoutMismatch)
        );
        let parts: Vec<Mf> = (0..2)
            .map(|r| {
                FabArray::try_new_on_rank_in(&ba, &dm2, 1, IntVect::ZERO, r, HostArena).unwrap()
            })
            .collect();
        assert_eq!(
            Zip::from(&parts[0])
                .and(&parts[1])
                .for_each(Tiling::None, IntVect::ZERO, never),
            Err(FabArrayError::LayoutMismatch)
        );
        let mut calls = 0;
        Zip::from(&parts[1])
            .and(&parts[1])
            .for_each(Tiling::None, IntVect::ZERO, |mfi, (x, y)| {
                assert_eq!(dm2.rank_of(mfi.index()), 1);
                assert_eq!(x.index_box(), y.index_box());
                calls += 1;
            })
            .unwrap();
        assert_eq!(calls, parts[1].local_size());
        // Ghost widths: wider than a written operand's, or negative, is refused; a read
        // operand is whole whatever `ng`.
        let z = Mf::new(&ba, &dm, 1, IntVect::ZERO);
        assert_eq!(
            Zip::from(&z)
                .and(&mut a)
                .for_each(Tiling::None, IntVect::splat(2), never),
            Err(FabArrayError::GhostOutside {
                ng: IntVect::splat(2),
                ngrow: IntVect::UNIT
            })
        );
        assert_eq!(
            Zip::from(&mut a).for_each(Tiling::None, IntVect::new(0, -1, 0), never),
            Err(FabArrayError::GhostOutside {
                ng: IntVect::new(0, -1, 0),
                ngrow: IntVect::UNIT
            })
        );
        // A negative width is refused with nothing written too; a written face operand
        // narrower than the cell leader bounds `ng` by its own ghost cells.
        assert_eq!(
            Zip::from(&a)
                .and(&z)
                .for_each(Tiling::None, IntVect::new(-1, 0, 0), never),
            Err(FabArrayError::GhostOutside {
                ng: IntVect::new(-1, 0, 0),
                ngrow: IntVect::UNIT
            })
        );
        let xf = ba.convert(IndexType::CELL.with_node(0));
        let mut narrow = Mf::new(&xf, &dm, 1, IntVect::ZERO);
        assert_eq!(
            Zip::from(&a)
                .and(&mut narrow)
                .for_each(Tiling::None, IntVect::UNIT, never),
            Err(FabArrayError::GhostOutside {
                ng: IntVect::UNIT,
                ngrow: IntVect::ZERO
            })
        );
        Zip::from(&mut a)
            .and(&z)
            .for_each(Tiling::None, IntVect::UNIT, |mfi, (w, r)| {
                assert_eq!(w.index_box(), mfi.fabbox());
                assert_eq!(r.index_box(), mfi.validbox());
            })
            .unwrap();
    }
}
