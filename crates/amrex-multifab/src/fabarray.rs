//! `FabArray<T, A>`: one fab per local box, on an arena.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;
use core::ptr::NonNull;

use amrex_arena::{Arena, ArenaError, HostAccessible, HostArena};
use amrex_array4::{Array4, Array4Mut};
use amrex_box::{IndexBox, IntVect};
use amrex_dlpack_core::ManagedTensor;
use amrex_podvector::PodVector;

use crate::box_array::BoxArray;
use crate::distribution::DistributionMapping;
use crate::element::Element;
use crate::mfiter::{MFIter, Mfi, Tiling};

/// AMReX's `MultiFab`: `f64` data.
pub type MultiFab<A = HostArena> = FabArray<f64, A>;
/// AMReX's `iMultiFab`: `i32` data.
#[expect(non_camel_case_types, reason = "AMReX's name, so users find it")]
pub type iMultiFab<A = HostArena> = FabArray<i32, A>;

/// Keeps the memory of one fab alive.
pub(crate) enum Owner<T: Element, A: Arena> {
    /// Allocated from the FabArray's arena.
    Pod(PodVector<T, A>),
    /// Borrowed from an imported DLPack tensor (a non-owning fab).
    Tensor(#[expect(dead_code, reason = "held for its Drop")] ManagedTensor<'static>),
}

/// The memory of one fab: `ncomp` components over `bx`, with explicit strides.
pub(crate) struct FabMem<T: Element, A: Arena> {
    pub(crate) raw: RawFab<T>,
    _owner: Owner<T, A>,
}

// Invariants of `Store`:
// 1. `fabs[l].raw` describes memory kept alive by `fabs[l]._owner`: for every cell of
//    `raw.bx` and component `n < raw.ncomp`, the element at `raw.offset(..)` is inside
//    that memory, aligned and initialised; distinct (cell, component) pairs reach
//    distinct elements.
// 2. Elements are read or written through Rust references only by the one `FabArray`
//    that holds the store (following the borrow rules of that `FabArray`'s methods);
//    every other holder of the `Arc` (a DLPack export) only keeps the memory alive and
//    hands the raw pointer to a consumer.
// 3. Different fabs never share elements.
pub(crate) struct Store<T: Element, A: Arena> {
    pub(crate) fabs: Vec<FabMem<T, A>>,
}

// SAFETY: the store owns its fabs' memory (or a tensor that does); moving it to another
// thread moves that ownership, like `Vec<T>`.
unsafe impl<T: Element, A: Arena> Send for Store<T, A> {}
// SAFETY: shared access to a store only reads raw pointers; element access follows the
// borrow rules of the owning `FabArray` (invariant 2), like `&Vec<T>`.
unsafe impl<T: Element, A: Arena> Sync for Store<T, A> {}

/// Raw layout of one fab, copied into parallel kernels.
///
/// Invariant: produced from a live `Store` (its invariant 1 holds for `ptr`, `bx`,
/// strides and `ncomp`); users of the unsafe accessors promise disjoint access.
pub(crate) struct RawFab<T> {
    pub(crate) ptr: NonNull<T>,
    pub(crate) bx: IndexBox,
    pub(crate) jstride: usize,
    pub(crate) kstride: usize,
    pub(crate) nstride: usize,
    pub(crate) ncomp: usize,
}

impl<T> Clone for RawFab<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for RawFab<T> {}

// SAFETY: a layout plus a pointer; every dereference goes through an unsafe accessor
// whose caller proves exclusive or shared access as for `&mut [T]` / `&[T]`.
unsafe impl<T: Send + Sync> Send for RawFab<T> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync> Sync for RawFab<T> {}

impl<T> RawFab<T> {
    /// Compact layout over `bx` (Fortran order, components slowest).
    pub(crate) fn compact(ptr: NonNull<T>, bx: IndexBox, ncomp: usize) -> Self {
        let len = bx.length();
        let jstride = len[0] as usize;
        let kstride = jstride * len[1] as usize;
        let nstride = kstride * len[2] as usize;
        Self {
            ptr,
            bx,
            jstride,
            kstride,
            nstride,
            ncomp,
        }
    }

    /// Element offset of `(i, j, k, n)` (in bounds, checked in debug builds).
    #[inline(always)]
    pub(crate) fn offset(&self, i: i32, j: i32, k: i32, n: usize) -> usize {
        debug_assert!(self.bx.contains(IntVect::new(i, j, k)) && n < self.ncomp);
        let lo = self.bx.lo();
        (i - lo[0]) as usize
            + (j - lo[1]) as usize * self.jstride
            + (k - lo[2]) as usize * self.kstride
            + n * self.nstride
    }

    /// The `i`-row `i0..=i1` at `(j, k, n)`.
    ///
    /// # Safety
    /// The row lies inside `bx` with `n < ncomp`, and nobody writes those elements
    /// during `'a`.
    #[inline(always)]
    pub(crate) unsafe fn row<'a>(&self, i0: i32, i1: i32, j: i32, k: i32, n: usize) -> &'a [T] {
        debug_assert!(i0 <= i1 && self.bx.contains(IntVect::new(i1, j, k)));
        let off = self.offset(i0, j, k, n);
        // SAFETY: in bounds (caller), so inside the fab's memory (Store invariant 1).
        let p = unsafe { self.ptr.as_ptr().add(off) };
        // SAFETY: `i1 - i0 + 1` consecutive initialised elements (unit `i` stride), not
        // written during `'a` (caller).
        unsafe { core::slice::from_raw_parts(p, (i1 - i0 + 1) as usize) }
    }

    /// The `i`-row `i0..=i1` at `(j, k, n)`, mutably.
    ///
    /// # Safety
    /// The row lies inside `bx` with `n < ncomp`, and nobody else reads or writes those
    /// elements during `'a`.
    #[inline(always)]
    pub(crate) unsafe fn row_mut<'a>(
        &self,
        i0: i32,
        i1: i32,
        j: i32,
        k: i32,
        n: usize,
    ) -> &'a mut [T] {
        debug_assert!(i0 <= i1 && self.bx.contains(IntVect::new(i1, j, k)));
        let off = self.offset(i0, j, k, n);
        // SAFETY: in bounds (caller), so inside the fab's memory (Store invariant 1).
        let p = unsafe { self.ptr.as_ptr().add(off) };
        // SAFETY: consecutive initialised elements, exclusively ours during `'a` (caller).
        unsafe { core::slice::from_raw_parts_mut(p, (i1 - i0 + 1) as usize) }
    }

    /// `len` consecutive elements starting at `(i0, j, k, n)`: an `i`-row, or several
    /// rows/planes when the layout makes them contiguous.
    ///
    /// # Safety
    /// The elements are the cells from `(i0, j, k)` on in Fortran order within `bx`,
    /// contiguous in memory (the caller checked the strides), and nobody writes them
    /// during `'a`.
    #[inline(always)]
    pub(crate) unsafe fn run<'a>(&self, i0: i32, j: i32, k: i32, len: usize, n: usize) -> &'a [T] {
        let off = self.offset(i0, j, k, n);
        debug_assert!(off + len <= self.nstride * self.ncomp);
        // SAFETY: in bounds (caller), so inside the fab's memory (Store invariant 1).
        let p = unsafe { self.ptr.as_ptr().add(off) };
        // SAFETY: `len` contiguous initialised elements, not written during `'a` (caller).
        unsafe { core::slice::from_raw_parts(p, len) }
    }

    /// Mutable version of [`run`](Self::run).
    ///
    /// # Safety
    /// As for `run`, and nobody else reads or writes the elements during `'a`.
    #[inline(always)]
    pub(crate) unsafe fn run_mut<'a>(
        &self,
        i0: i32,
        j: i32,
        k: i32,
        len: usize,
        n: usize,
    ) -> &'a mut [T] {
        let off = self.offset(i0, j, k, n);
        debug_assert!(off + len <= self.nstride * self.ncomp);
        // SAFETY: in bounds (caller), so inside the fab's memory (Store invariant 1).
        let p = unsafe { self.ptr.as_ptr().add(off) };
        // SAFETY: contiguous initialised elements, exclusively ours during `'a` (caller).
        unsafe { core::slice::from_raw_parts_mut(p, len) }
    }

    /// Shared `Array4` over the whole fab.
    ///
    /// # Safety
    /// Nobody writes the fab's elements during `'a`.
    pub(crate) unsafe fn array4<'a>(&self) -> Array4<'a, T> {
        // SAFETY: Store invariant 1 gives items 1–3 of `from_raw_parts`; the caller
        // gives item 4.
        unsafe {
            Array4::from_raw_parts(
                self.ptr.as_ptr(),
                self.bx.lo(),
                self.bx.hi() + 1,
                [self.jstride, self.kstride, self.nstride],
                self.ncomp,
            )
        }
    }

    /// Mutable `Array4` restricted to `sub` (inside `bx`).
    ///
    /// # Safety
    /// `sub` is inside `bx` and nobody else reads or writes the elements of `sub`
    /// during `'a`.
    pub(crate) unsafe fn array4_mut<'a>(&self, sub: IndexBox) -> Array4Mut<'a, T> {
        assert!(
            self.bx.contains_box(&sub.convert(self.bx.ix_type())),
            "tile outside fab"
        );
        let lo = sub.lo();
        let off = if sub.ok() && self.ncomp > 0 {
            self.offset(lo[0], lo[1], lo[2], 0)
        } else {
            0
        };
        // SAFETY: `off` is in bounds (just checked), so inside the fab's memory.
        let p = unsafe { self.ptr.as_ptr().add(off) };
        let end = if sub.ok() { sub.hi() + 1 } else { lo };
        // SAFETY: the view covers `sub` inside `bx` with the fab's strides (Store
        // invariant 1); exclusive access to those elements is the caller's promise.
        unsafe {
            Array4Mut::from_raw_parts(
                p,
                lo,
                end,
                [self.jstride, self.kstride, self.nstride],
                self.ncomp,
            )
        }
    }
}

/// A distributed array of fabs, AMReX's `FabArray<BaseFab<T>>`.
///
/// Holds a [`BoxArray`], a [`DistributionMapping`], `ncomp` components and a ghost width
/// per direction; only the boxes owned by this process's rank are allocated, each as a
/// fab over its box grown by the ghost width, from the FabArray's arena. Fabs are
/// addressed by the [`Mfi`] items of an [`MFIter`] (or by local index).
///
/// Ghost cells are filled by [`fill_boundary`](Self::fill_boundary) and data moves
/// between FabArrays with different layouts by
/// [`parallel_copy`](Self::parallel_copy). Arithmetic and reductions run on all CPU
/// threads (feature `std`), tile by tile.
pub struct FabArray<T: Element, A: Arena = HostArena> {
    pub(crate) ba: BoxArray,
    pub(crate) dm: DistributionMapping,
    pub(crate) ncomp: usize,
    pub(crate) ngrow: IntVect,
    pub(crate) rank: usize,
    /// Local index -> global box index.
    pub(crate) local: Vec<usize>,
    /// Global box index -> local index (`u32::MAX` when not local).
    pub(crate) g2l: Vec<u32>,
    pub(crate) store: Arc<Store<T, A>>,
    pub(crate) arena: A,
}

impl<T: Element, A: Arena> fmt::Debug for FabArray<T, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FabArray")
            .field("nboxes", &self.ba.len())
            .field("nlocal", &self.local.len())
            .field("ncomp", &self.ncomp)
            .field("ngrow", &self.ngrow)
            .field("rank", &self.rank)
            .field("arena", &self.arena)
            .finish()
    }
}

impl<T: Element> FabArray<T, HostArena> {
    /// A FabArray on the host, every element zero.
    ///
    /// # Panics
    /// If the layout is inconsistent (see [`try_new_in`](Self::try_new_in)) or memory
    /// runs out.
    #[must_use]
    #[track_caller]
    pub fn new(ba: &BoxArray, dm: &DistributionMapping, ncomp: usize, ngrow: IntVect) -> Self {
        Self::new_in(ba, dm, ncomp, ngrow, HostArena)
    }
}

impl<T: Element, A: Arena> FabArray<T, A> {
    /// A FabArray whose fabs come from `arena`, every element zero, as rank 0.
    ///
    /// # Panics
    /// See [`try_new_in`](Self::try_new_in).
    #[must_use]
    #[track_caller]
    pub fn new_in(
        ba: &BoxArray,
        dm: &DistributionMapping,
        ncomp: usize,
        ngrow: IntVect,
        arena: A,
    ) -> Self {
        match Self::try_new_on_rank_in(ba, dm, ncomp, ngrow, 0, arena) {
            Ok(fa) => fa,
            Err(e) => panic!("FabArray::new: {e}"),
        }
    }

    /// Like [`new_in`](Self::new_in) but returns allocation errors.
    ///
    /// # Errors
    /// If the arena cannot allocate a fab.
    ///
    /// # Panics
    /// If `ba` and `dm` differ in length or `ngrow` is negative.
    pub fn try_new_in(
        ba: &BoxArray,
        dm: &DistributionMapping,
        ncomp: usize,
        ngrow: IntVect,
        arena: A,
    ) -> Result<Self, ArenaError> {
        Self::try_new_on_rank_in(ba, dm, ncomp, ngrow, 0, arena)
    }

    /// The part of a FabArray that rank `rank` holds (the boxes `dm` maps to it). A
    /// single-process program is rank 0; other ranks are useful to inspect plans and
    /// for the future MPI engine.
    ///
    /// # Errors
    /// If the arena cannot allocate a fab.
    ///
    /// # Panics
    /// If `ba` and `dm` differ in length, `ngrow` is negative or `rank >= dm.nranks()`.
    pub fn try_new_on_rank_in(
        ba: &BoxArray,
        dm: &DistributionMapping,
        ncomp: usize,
        ngrow: IntVect,
        rank: usize,
        arena: A,
    ) -> Result<Self, ArenaError> {
        assert_eq!(
            ba.len(),
            dm.len(),
            "FabArray: BoxArray has {} boxes but the mapping {}",
            ba.len(),
            dm.len()
        );
        assert!(
            ngrow.all_ge(IntVect::ZERO),
            "FabArray: ghost width {ngrow} is negative"
        );
        assert!(
            rank < dm.nranks(),
            "FabArray: rank {rank} is not below {}",
            dm.nranks()
        );
        let local = dm.local_indices(rank);
        let mut fabs = Vec::with_capacity(local.len());
        for &g in &local {
            let bx = ba.get(g).grow_iv(ngrow);
            let npts = bx.checked_num_pts_usize().expect("FabArray: fab too large");
            let len = npts.checked_mul(ncomp).expect("FabArray: fab too large");
            let mut v = PodVector::try_from_elem_in(T::ZERO, len, arena.clone())?;
            let ptr = NonNull::new(v.as_mut_ptr()).unwrap_or(NonNull::dangling());
            fabs.push(FabMem {
                raw: RawFab::compact(ptr, bx, ncomp),
                _owner: Owner::Pod(v),
            });
        }
        Ok(Self::from_parts(
            ba, dm, ncomp, ngrow, rank, local, fabs, arena,
        ))
    }

    #[expect(clippy::too_many_arguments, reason = "internal constructor")]
    pub(crate) fn from_parts(
        ba: &BoxArray,
        dm: &DistributionMapping,
        ncomp: usize,
        ngrow: IntVect,
        rank: usize,
        local: Vec<usize>,
        fabs: Vec<FabMem<T, A>>,
        arena: A,
    ) -> Self {
        let mut g2l = alloc::vec![u32::MAX; ba.len()];
        for (l, &g) in local.iter().enumerate() {
            g2l[g] = l as u32;
        }
        Self {
            ba: ba.clone(),
            dm: dm.clone(),
            ncomp,
            ngrow,
            rank,
            local,
            g2l,
            store: Arc::new(Store { fabs }),
            arena,
        }
    }

    pub(crate) fn fab_mem(
        ptr: NonNull<T>,
        raw: RawFab<T>,
        t: ManagedTensor<'static>,
    ) -> FabMem<T, A> {
        debug_assert_eq!(ptr, raw.ptr);
        FabMem {
            raw,
            _owner: Owner::Tensor(t),
        }
    }

    /// The BoxArray.
    #[must_use]
    pub fn box_array(&self) -> &BoxArray {
        &self.ba
    }

    /// The DistributionMapping.
    #[must_use]
    pub fn distribution_map(&self) -> &DistributionMapping {
        &self.dm
    }

    /// Number of components.
    #[must_use]
    pub fn ncomp(&self) -> usize {
        self.ncomp
    }

    /// Ghost cells per direction.
    #[must_use]
    pub fn n_grow(&self) -> IntVect {
        self.ngrow
    }

    /// The rank whose part this is (0 in a single-process program).
    #[must_use]
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The arena the fabs were allocated from.
    #[must_use]
    pub fn arena(&self) -> &A {
        &self.arena
    }

    /// Number of local fabs.
    #[must_use]
    pub fn local_size(&self) -> usize {
        self.local.len()
    }

    /// Global box index of local fab `l`.
    #[must_use]
    #[track_caller]
    pub fn global_index(&self, l: usize) -> usize {
        self.local[l]
    }

    /// Local index of global box `g`, `None` if another rank owns it.
    #[must_use]
    pub fn local_index(&self, g: usize) -> Option<usize> {
        self.g2l
            .get(g)
            .copied()
            .filter(|&l| l != u32::MAX)
            .map(|l| l as usize)
    }

    /// `true` if global box `g` is allocated here.
    #[must_use]
    pub fn is_local(&self, g: usize) -> bool {
        self.local_index(g).is_some()
    }

    /// The valid box of global box `g`.
    #[must_use]
    #[track_caller]
    pub fn box_of(&self, g: usize) -> IndexBox {
        self.ba.get(g)
    }

    /// The fab box (valid box grown by the ghost width) of global box `g`.
    #[must_use]
    #[track_caller]
    pub fn fabbox(&self, g: usize) -> IndexBox {
        self.ba.get(g).grow_iv(self.ngrow)
    }

    /// Iterates over local fabs, whole (`tiling = false`), in AMReX's default tiles
    /// (`true`), or in tiles of a given size ([`Tiling::Size`]).
    ///
    /// The iterator does not borrow the FabArray, so the loop body may call
    /// [`array_mut`](Self::array_mut).
    #[must_use]
    pub fn mfiter(&self, tiling: impl Into<Tiling>) -> MFIter {
        MFIter::new(&self.ba, &self.local, self.ngrow, tiling.into())
    }

    #[track_caller]
    pub(crate) fn local_of(&self, mfi: &Mfi) -> usize {
        let g = mfi.index();
        match self.local_index(g) {
            Some(l) => l,
            None => panic!("FabArray: box {g} is not local to rank {}", self.rank),
        }
    }

    pub(crate) fn raw(&self, l: usize) -> RawFab<T> {
        self.store.fabs[l].raw
    }

    pub(crate) fn raws(&self) -> Vec<RawFab<T>> {
        self.store.fabs.iter().map(|f| f.raw).collect()
    }

    /// `true` if `o` has the same BoxArray and mapping (so fabs correspond one to one).
    #[must_use]
    pub fn same_layout<U: Element, B: Arena>(&self, o: &FabArray<U, B>) -> bool {
        (self.ba.same_as(&o.ba) || self.ba == o.ba)
            && (self.dm.same_as(&o.dm) || self.dm == o.dm)
            && self.rank == o.rank
    }
}

impl<T: Element, A: HostAccessible> FabArray<T, A> {
    /// Shared `Array4` over the whole fab of `mfi` (ghost cells included), indexed with
    /// global indices, AMReX's `fa.array(mfi)`.
    ///
    /// # Panics
    /// If the box of `mfi` is not local.
    #[must_use]
    #[track_caller]
    pub fn array(&self, mfi: &Mfi) -> Array4<'_, T> {
        self.array_at(self.local_of(mfi))
    }

    /// Mutable `Array4` over the whole fab of `mfi`.
    ///
    /// # Panics
    /// If the box of `mfi` is not local.
    #[must_use]
    #[track_caller]
    pub fn array_mut(&mut self, mfi: &Mfi) -> Array4Mut<'_, T> {
        let l = self.local_of(mfi);
        self.array_mut_at(l)
    }

    /// Shared `Array4` over local fab `l`.
    ///
    /// # Panics
    /// If `l >= local_size()`.
    #[must_use]
    #[track_caller]
    pub fn array_at(&self, l: usize) -> Array4<'_, T> {
        let raw = self.raw(l);
        // SAFETY: `&self` keeps every writer (which needs `&mut self`) away for the
        // lifetime of the view (Store invariant 2).
        unsafe { raw.array4() }
    }

    /// Mutable `Array4` over local fab `l`.
    ///
    /// # Panics
    /// If `l >= local_size()`.
    #[must_use]
    #[track_caller]
    pub fn array_mut_at(&mut self, l: usize) -> Array4Mut<'_, T> {
        let raw = self.raw(l);
        // SAFETY: `&mut self` gives exclusive access to every fab (Store invariant 2).
        unsafe { raw.array4_mut(raw.bx) }
    }

    /// Shared `Array4`s over every local fab, in local order.
    #[must_use]
    pub fn arrays(&self) -> Vec<Array4<'_, T>> {
        (0..self.local_size()).map(|l| self.array_at(l)).collect()
    }

    /// Mutable `Array4`s over every local fab (disjoint), in local order.
    #[must_use]
    pub fn arrays_mut(&mut self) -> Vec<Array4Mut<'_, T>> {
        let raws = self.raws();
        // SAFETY: `&mut self` gives exclusive access to every fab; fabs are disjoint
        // (Store invariant 3), so the views never alias.
        raws.iter().map(|r| unsafe { r.array4_mut(r.bx) }).collect()
    }

    /// The value at global cell `p`, component `n`, from the first local fab whose valid
    /// box contains `p` (ghost cells are not consulted); `None` if no local box has it.
    #[must_use]
    pub fn value_at(&self, p: IntVect, n: usize) -> Option<T> {
        let q = IndexBox::with_type(p, p, self.ba.ix_type());
        let (g, _) = self
            .ba
            .intersections(&q)
            .into_iter()
            .find(|(g, _)| self.is_local(*g))?;
        let a = self.array_at(self.local_index(g)?);
        a.get(p[0], p[1], p[2], n).copied()
    }
}
