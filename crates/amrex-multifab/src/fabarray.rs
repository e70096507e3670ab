//! `FabArray<T, A>`: one fab per local box, on an arena.

use crate::error::FabArrayError;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::cell::UnsafeCell;
use core::fmt;
use core::ops::{Index, IndexMut};
use core::ptr::NonNull;

use amrex_arena::{Arena, ArenaError, HostAccessible, HostArena};
use amrex_array4::{Array4, Array4Mut};

pub(crate) use crate::raw_fab::RawFab;
use amrex_basefab::{BaseFab, FabError};
use amrex_box::{IndexBox, IntVect};
use amrex_geometry::Geometry;
use amrex_podvector::PodVector;

use crate::box_array::BoxArray;
use crate::distribution::DistributionMapping;
use crate::element::Element;
use crate::mfiter::{MFIter, Mfi, Tiling};
use amrex_runtime::Fingerprint;

/// Whether the CPU will dereference the pointers of a fab's raw layout (the host loops)
/// or only hand them on (DLPack exports of any memory).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Deref {
    /// The host loops will read or write through them: the memory must be host
    /// accessible.
    Host,
    /// Only the pointer is used (exports).
    Never,
}

/// AMReX's `MultiFab`: `f64` data.
pub type MultiFab<A = HostArena> = FabArray<f64, A>;
/// AMReX's `iMultiFab`: `i32` data.
#[expect(non_camel_case_types, reason = "AMReX's name, so users find it")]
pub type iMultiFab<A = HostArena> = FabArray<i32, A>;

// Invariants of `Store`:
// 1. The cells are dereferenced only by the one `FabArray` that holds the store, and
//    only under that FabArray's borrow: shared references to a fab while the FabArray
//    is borrowed shared, an exclusive reference while it is borrowed exclusively. Every
//    other holder of the `Arc` (a DLPack export) never dereferences a cell: it only
//    keeps the fabs, and so their memory, alive, and drops them if it is the last.
// 2. Elements are reached through a [`RawFab`] only while the FabArray is borrowed
//    (shared to read, exclusively to write), after `FabArray::layout` has checked that
//    the fab still has the FabArray's fab box (corners) and component count, is
//    writable, and (for host work) host accessible; the `RawFab` is built from the fab
//    as it is then, and no fab changes while the borrow lasts.
// 3. Different fabs never share elements: each owns its vector, or borrows memory
//    exclusively (`BaseFab` invariant 6; read-only fabs are refused by `layout`), and
//    `from_dlpack_per_box` checks that its tensors do not overlap.
pub(crate) struct Store<T: Element, A: Arena> {
    fabs: Vec<UnsafeCell<BaseFab<'static, T, A>>>,
}

// SAFETY: shared access to a store only hands out shared fab references, under the
// owning FabArray's shared borrow, or exclusive ones under its exclusive borrow
// (invariant 1); other holders never touch the cells. So sharing a store between
// threads is sharing `&BaseFab`s (Sync for `T: Sync`) or moving `&mut BaseFab`s
// (Send for `T: Send`).
unsafe impl<T: Element, A: Arena> Sync for Store<T, A> {}

impl<T: Element, A: Arena> Store<T, A> {
    fn new(fabs: Vec<BaseFab<'static, T, A>>) -> Self {
        Self {
            fabs: fabs.into_iter().map(UnsafeCell::new).collect(),
        }
    }
}

/// A distributed array of fabs, AMReX's `FabArray<BaseFab<T>>`.
///
/// Holds a [`BoxArray`], a [`DistributionMapping`], `ncomp` components and a ghost width
/// per direction; only the boxes owned by this process's rank are allocated, each as a
/// [`BaseFab`] over its box grown by the ghost width, from the FabArray's arena. Fabs are
/// addressed by the [`Mfi`] items of an [`MFIter`] or by local index:
/// [`fab`](Self::fab) / [`fab_mut`](Self::fab_mut), or `fa[&mfi]` (AMReX's `fa[mfi]`).
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
    /// A `fill_boundary_nowait` whose messages are in flight.
    pub(crate) pending: Option<crate::comm::PendingFill>,
    /// How reductions combine over boxes and ranks.
    pub(crate) reduction: crate::ops::Reduction,
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

/// What the FabArray operations add to an agreement's [`Fingerprint`] besides their
/// operands.
pub(crate) trait HashArgs {
    /// A component range as resolved, or as asked for when it was refused (so that a
    /// rank that refuses still agrees with the others on what was asked).
    fn comps(&mut self, c: &Result<core::ops::Range<usize>, FabArrayError>) -> &mut Self;
}

impl HashArgs for Fingerprint {
    fn comps(&mut self, c: &Result<core::ops::Range<usize>, FabArrayError>) -> &mut Self {
        let (s, e) = match c {
            Ok(r) => (r.start, r.end),
            Err(FabArrayError::Fab(FabError::ComponentsOutside { start, end, .. })) => {
                (*start, *end)
            }
            Err(_) => (usize::MAX, usize::MAX),
        };
        self.usize(s).usize(e)
    }
}

/// Adds what distributed operations on a level hash of its geometry to `fp`: the
/// domain's corners, the coordinate system, the physical extent (by the bits of
/// `prob_lo` and `prob_hi`) and the periodic flags.
///
/// Next to [`FabArray::hash_operand`] so that every crate that agrees on a geometry (the
/// AMR level operations, the particle container) hashes the same words in the same
/// order; here because this crate depends on both `amrex-geometry` and `amrex-runtime`,
/// and neither of those depends on the other.
///
/// ```
/// use amrex_geometry::{CoordSys, Geometry, RealBox};
/// use amrex_multifab::{IndexBox, IntVect, hash_geometry};
/// use amrex_runtime::Fingerprint;
/// let dom = IndexBox::new(IntVect::ZERO, IntVect::splat(7));
/// let rb = RealBox::new([0.0; 3], [1.0; 3])?;
/// let a = Geometry::new(dom, rb, CoordSys::Cartesian, [true; 3])?;
/// let b = Geometry::new(dom, rb, CoordSys::Cartesian, [true, true, false])?;
/// let (mut fa, mut fb) = (Fingerprint::new(), Fingerprint::new());
/// hash_geometry(&mut fa, &a);
/// hash_geometry(&mut fb, &b);
/// assert_ne!(fa.value(), fb.value());
/// # Ok::<(), amrex_geometry::GeometryError>(())
/// ```
pub fn hash_geometry(fp: &mut Fingerprint, g: &Geometry) {
    let d = g.domain();
    fp.iv(d.lo())
        .iv(d.hi())
        .word(i64::from(g.coord().to_int()).cast_unsigned());
    for x in g.prob_lo().into_iter().chain(g.prob_hi()) {
        fp.f64(x);
    }
    for dir in 0..3 {
        fp.word(u64::from(g.is_periodic(dir)));
    }
}

impl<T: Element, A: Arena> FabArray<T, A> {
    /// Adds this FabArray's BoxArray and map to `fp`, by the fingerprints each computed
    /// once when it was made (so an operation costs no pass over the boxes), then its
    /// component count and ghost width.
    pub(crate) fn hash_layout(&self, fp: &mut Fingerprint) {
        fp.word(self.ba.fingerprint())
            .word(self.dm.fingerprint())
            .word(self.ncomp as u64)
            .iv(self.ngrow);
    }

    /// The fingerprint of the layout that reductions compare between ranks.
    pub(crate) fn layout_fingerprint(&self) -> u64 {
        let mut fp = Fingerprint::new();
        self.hash_layout(&mut fp);
        fp.value()
    }

    /// Adds what every distributed operation on this FabArray hashes to `fp`: its
    /// layout, the element size, the communicator's message limit, and whether the
    /// FabArray is this process's own rank's part (one built for another rank cannot
    /// exchange).
    ///
    /// Public so that operations built on FabArrays (the AMR level operations) can agree
    /// on their operands between ranks before they start, as this crate's do.
    pub fn hash_operand(&self, fp: &mut Fingerprint) {
        let comm = self.dm.communicator();
        self.hash_layout(fp);
        fp.word(core::mem::size_of::<T>() as u64)
            .word(comm.message_limit() as u64)
            .word(u64::from(self.rank == comm.rank()));
    }

    /// A FabArray whose fabs come from `arena`, every element zero: the boxes `dm` maps
    /// to this process's rank in its communicator (rank 0 for a map made for inspection,
    /// see [`DistributionMapping::with_ranks`]).
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
        match Self::try_new_on_rank_in(ba, dm, ncomp, ngrow, dm.my_rank(), arena) {
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
        Self::try_new_on_rank_in(ba, dm, ncomp, ngrow, dm.my_rank(), arena)
    }

    /// The part of a FabArray that rank `rank` holds (the boxes `dm` maps to it), to
    /// inspect plans. Only a FabArray built for this process's own rank (as
    /// [`new_in`](Self::new_in) builds) can run operations that exchange messages.
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
        if let Err(e) = ba.check_ghost(ngrow) {
            panic!("FabArray: ghost width {ngrow}: {e}");
        }
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
            let v = PodVector::try_from_elem_in(T::ZERO, len, arena.clone())?;
            // The vector has exactly the compact length, so this only fails for sizes
            // past `isize` bytes, which the allocation above already refused.
            let fab = BaseFab::from_pod_vector(v, bx, ncomp)
                .unwrap_or_else(|e| panic!("FabArray: fab over {bx}: {e}"));
            fabs.push(fab);
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
        fabs: Vec<BaseFab<'static, T, A>>,
        arena: A,
    ) -> Self {
        let mut g2l = alloc::vec![u32::MAX; ba.len()];
        for (l, &g) in local.iter().enumerate() {
            // `l < ba.len()`, at most u32::MAX (asserted by every BoxArray), so it is
            // also never the `u32::MAX` of a box that is not local.
            g2l[g] = u32::try_from(l).expect("fewer local boxes than u32::MAX");
        }
        Self {
            ba: ba.clone(),
            dm: dm.clone(),
            ncomp,
            ngrow,
            rank,
            local,
            g2l,
            store: Arc::new(Store::new(fabs)),
            arena,
            pending: None,
            reduction: crate::ops::Reduction::default(),
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

    /// The communicator of the FabArray's map: whose ranks own its boxes.
    #[must_use]
    pub fn communicator(&self) -> &amrex_runtime::Communicator {
        self.dm.communicator()
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

    /// Local fab `l`, shared.
    ///
    /// # Panics
    /// If `l >= local_size()`.
    #[track_caller]
    pub(crate) fn fab_ref(&self, l: usize) -> &BaseFab<'static, T, A> {
        // SAFETY: `&self` is borrowed for the returned lifetime, so only shared references
        // to the fabs exist meanwhile (Store invariant 1).
        unsafe { &*self.store.fabs[l].get() }
    }

    /// Local fab `l`, exclusively.
    ///
    /// # Panics
    /// If `l >= local_size()`.
    #[track_caller]
    pub(crate) fn fab_ref_mut(&mut self, l: usize) -> &mut BaseFab<'static, T, A> {
        // SAFETY: `&mut self` is borrowed for the returned lifetime, so no other reference
        // to this fab exists meanwhile (Store invariant 1).
        unsafe { &mut *self.store.fabs[l].get() }
    }

    /// The raw layout of local fab `l` for kernels, checked against the FabArray (Store
    /// invariant 2): `ptr` is the fab's first element, `bx` the FabArray's fab box.
    #[track_caller]
    fn layout(
        &self,
        l: usize,
        fab: &BaseFab<'static, T, A>,
        ptr: *mut T,
        deref: Deref,
    ) -> RawFab<T> {
        let bx = self.fabbox(self.local[l]);
        let fb = fab.index_box();
        let same_box = if bx.ok() {
            fb.ok() && fb.lo() == bx.lo() && fb.hi() == bx.hi()
        } else {
            fab.num_pts() == 0
        };
        assert!(
            same_box && fab.ncomp() == self.ncomp,
            "FabArray: fab {l} covers {fb} with {} components, but the FabArray needs {bx} \
             with {} (was it replaced through fab_mut?)",
            fab.ncomp(),
            self.ncomp
        );
        assert!(
            !fab.is_read_only(),
            "FabArray: fab {l} is read-only (was it replaced through fab_mut?)"
        );
        assert!(
            deref == Deref::Never || fab.host_accessible(),
            "FabArray: fab {l} is on {:?}, which the CPU cannot access",
            fab.device()
        );
        RawFab {
            ptr: NonNull::new(ptr).unwrap_or(NonNull::dangling()),
            bx,
            layout: fab.layout(),
        }
    }

    /// Layout of local fab `l` for reading (shared borrow); `deref` says whether the CPU will read it.
    #[track_caller]
    pub(crate) fn raw(&self, l: usize, deref: Deref) -> RawFab<T> {
        let fab = self.fab_ref(l);
        self.layout(l, fab, fab.as_ptr().cast_mut(), deref)
    }

    /// Layouts of every local fab for writing: the pointers come from the fabs'
    /// `as_mut_ptr` under the exclusive borrow; `deref` says whether the CPU will access them.
    #[track_caller]
    pub(crate) fn raws_mut_with(&mut self, deref: Deref) -> Vec<RawFab<T>> {
        (0..self.local_size())
            .map(|l| {
                // Writable: `layout` refuses read-only fabs, so this is never an error
                // that `layout` would not report first.
                let ptr = self
                    .fab_ref_mut(l)
                    .as_mut_ptr()
                    .unwrap_or(core::ptr::null_mut());
                self.layout(l, self.fab_ref(l), ptr, deref)
            })
            .collect()
    }

    /// Layouts of every local fab for reading on the CPU.
    #[track_caller]
    pub(crate) fn raws(&self) -> Vec<RawFab<T>> {
        (0..self.local_size())
            .map(|l| self.raw(l, Deref::Host))
            .collect()
    }

    /// Layouts of every local fab for writing on the CPU.
    #[track_caller]
    pub(crate) fn raws_mut(&mut self) -> Vec<RawFab<T>> {
        self.raws_mut_with(Deref::Host)
    }

    /// Local fab `i` (a local index, or the [`Mfi`] of an [`MFIter`]): AMReX's
    /// `fa[mfi]` / `fa.atLocalIdx(l)`. Its box is the valid box grown by the ghost
    /// width (see [`fabbox`](Self::fabbox)).
    ///
    /// ```
    /// use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IntVect, MultiFab, Tiling};
    /// let ba = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::splat(7)), 4);
    /// let mut mf = MultiFab::new(&ba, &DistributionMapping::single(&ba), 2, IntVect::splat(1));
    /// for mfi in mf.mfiter(Tiling::None) {
    ///     let vbx = mfi.validbox();
    ///     let fab = mf.fab_mut(&mfi);
    ///     fab.set_val(1.0, 0..1, vbx)?;          // BaseFab operations
    ///     fab.array_mut()?[(vbx.lo()[0], vbx.lo()[1], vbx.lo()[2], 1)] = 2.0;
    /// }
    /// assert_eq!(mf.fab(0).index_box(), mf.fabbox(mf.global_index(0)));
    /// assert_eq!(mf[&mf.mfiter(Tiling::None).next().unwrap()].sum(0..1, ba.get(0))?, 64.0);
    /// assert_eq!(mf.sum(0..2, 0).unwrap(), 512.0 + 2.0 * 8.0);
    /// # Ok::<(), amrex_multifab::FabArrayError>(())
    /// ```
    ///
    /// # Panics
    /// If a local index is out of range or the box of an [`Mfi`] is not local.
    #[must_use]
    #[track_caller]
    pub fn fab(&self, i: impl FabIndex) -> &BaseFab<'static, T, A> {
        let l = i.local_in(self);
        self.fab_ref(l)
    }

    /// Local fab `i`, mutably (AMReX's non-const `fa[mfi]`). Element operations,
    /// `array_mut` and DLPack export of the fab work as for any [`BaseFab`].
    ///
    /// The fab may even be replaced (`core::mem::swap`) or resized, but FabArray
    /// operations check each fab before use and panic if one no longer covers the fab
    /// box with `ncomp` components, is read-only, or (for host work) sits in memory the
    /// CPU cannot access. A replaced fab takes its memory with it: tensors from
    /// [`to_dlpack_per_box_detached`](Self::to_dlpack_per_box_detached) must not be alive
    /// then (that function's safety contract).
    ///
    /// # Panics
    /// If a local index is out of range or the box of an [`Mfi`] is not local.
    #[must_use]
    #[track_caller]
    pub fn fab_mut(&mut self, i: impl FabIndex) -> &mut BaseFab<'static, T, A> {
        let l = i.local_in(self);
        self.fab_ref_mut(l)
    }

    /// Every local fab, in local order.
    pub fn fabs(&self) -> impl ExactSizeIterator<Item = &BaseFab<'static, T, A>> + '_ {
        (0..self.local_size()).map(|l| self.fab_ref(l))
    }

    /// Every local fab mutably (disjoint), in local order.
    pub fn fabs_mut(&mut self) -> impl ExactSizeIterator<Item = &mut BaseFab<'static, T, A>> + '_ {
        self.store.fabs.iter().map(|c| {
            // SAFETY: `&mut self` is borrowed for the iterator's lifetime, and each cell is
            // visited once, so these exclusive references are the only ones to their fabs
            // (Store invariant 1).
            unsafe { &mut *c.get() }
        })
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
    /// If the box of `mfi` is not local, or its fab was replaced by one the CPU cannot
    /// read.
    #[must_use]
    #[track_caller]
    pub fn array(&self, mfi: &Mfi) -> Array4<'_, T> {
        self.array_at(self.local_of(mfi))
    }

    /// Mutable `Array4` over the whole fab of `mfi`.
    ///
    /// # Panics
    /// If the box of `mfi` is not local, or its fab was replaced by a read-only one or
    /// one the CPU cannot write.
    #[must_use]
    #[track_caller]
    pub fn array_mut(&mut self, mfi: &Mfi) -> Array4Mut<'_, T> {
        let l = self.local_of(mfi);
        self.array_mut_at(l)
    }

    /// Shared `Array4` over local fab `l`.
    ///
    /// # Panics
    /// If `l >= local_size()`, or as [`array`](Self::array).
    #[must_use]
    #[track_caller]
    pub fn array_at(&self, l: usize) -> Array4<'_, T> {
        match self.fab_ref(l).array() {
            Ok(a) => a,
            Err(e) => panic!("FabArray::array: fab {l}: {e}"),
        }
    }

    /// Mutable `Array4` over local fab `l`.
    ///
    /// # Panics
    /// If `l >= local_size()`, or as [`array_mut`](Self::array_mut).
    #[must_use]
    #[track_caller]
    pub fn array_mut_at(&mut self, l: usize) -> Array4Mut<'_, T> {
        match self.fab_ref_mut(l).array_mut() {
            Ok(a) => a,
            Err(e) => panic!("FabArray::array_mut: fab {l}: {e}"),
        }
    }

    /// Shared `Array4`s over every local fab, in local order.
    #[must_use]
    pub fn arrays(&self) -> Vec<Array4<'_, T>> {
        (0..self.local_size()).map(|l| self.array_at(l)).collect()
    }

    /// Mutable `Array4`s over every local fab (disjoint), in local order.
    #[must_use]
    pub fn arrays_mut(&mut self) -> Vec<Array4Mut<'_, T>> {
        self.fabs_mut()
            .enumerate()
            .map(|(l, f)| match f.array_mut() {
                Ok(a) => a,
                Err(e) => panic!("FabArray::arrays_mut: fab {l}: {e}"),
            })
            .collect()
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

mod sealed {
    pub trait Sealed {}
    impl Sealed for usize {}
    impl Sealed for &crate::Mfi {}
}

/// What selects a local fab of a [`FabArray`]: a local index (`usize`, AMReX's
/// `atLocalIdx`; not the global box index, see [`FabArray::local_index`]) or a
/// `&Mfi` (AMReX's `fa[mfi]`, found by its global box index).
pub trait FabIndex: sealed::Sealed {
    /// The local index in `fa`.
    ///
    /// # Panics
    /// If there is no such local fab.
    #[doc(hidden)]
    fn local_in<T: Element, A: Arena>(&self, fa: &FabArray<T, A>) -> usize;
}

impl FabIndex for usize {
    #[track_caller]
    fn local_in<T: Element, A: Arena>(&self, fa: &FabArray<T, A>) -> usize {
        assert!(
            *self < fa.local_size(),
            "FabArray: local index {self} out of range ({} local fabs)",
            fa.local_size()
        );
        *self
    }
}

impl FabIndex for &Mfi {
    #[track_caller]
    fn local_in<T: Element, A: Arena>(&self, fa: &FabArray<T, A>) -> usize {
        fa.local_of(self)
    }
}

/// `fa[&mfi]`: the fab of an MFIter item (AMReX's `fa[mfi]`); see [`FabArray::fab`].
impl<T: Element, A: Arena> Index<&Mfi> for FabArray<T, A> {
    type Output = BaseFab<'static, T, A>;
    #[track_caller]
    fn index(&self, mfi: &Mfi) -> &Self::Output {
        self.fab(mfi)
    }
}

/// `fa[&mfi]` mutably; see [`FabArray::fab_mut`].
impl<T: Element, A: Arena> IndexMut<&Mfi> for FabArray<T, A> {
    #[track_caller]
    fn index_mut(&mut self, mfi: &Mfi) -> &mut Self::Output {
        self.fab_mut(mfi)
    }
}
