//! [`ArrayOfStructs`]: particles stored whole, one struct after another.

use crate::error::ParticleError;
use crate::fields::{FieldKind, ParticleLayout, StridedLayout, field_layout, real_block_layout};
use alloc::vec::Vec;
use amrex_arena::{Arena, ArenaError, ErrorKind as ArenaErrorKind, HostAccessible, HostArena};
use amrex_dlpack_core::{Device, DlpackError, ErrorKind, ManagedTensor, flags};
use amrex_podvector::{GrowthStrategy, PodVector};
use core::fmt;
use core::mem::size_of;
use core::ops::{Deref, DerefMut};

/// Particles stored whole (AMReX `ArrayOfStructs<Particle<NR, NI>>`) in memory from the
/// arena `A`, with a count of neighbour (halo) particles kept at the end.
///
/// [`len`](Self::len) counts every particle, [`num_particles`](Self::num_particles)
/// excludes the neighbours, and [`set_num_neighbors`](Self::set_num_neighbors) resizes
/// to `num_particles() + n` as AMReX does. Growth follows a [`GrowthStrategy`] (default
/// geometric, AMReX's `push_back`).
///
/// On host-accessible arenas it derefs to `[P]`. On device arenas it has no slices:
/// move data with [`copy_from_host`](Self::copy_from_host) /
/// [`to_host_vec`](Self::to_host_vec), and hand kernels [`as_mut_ptr`](Self::as_mut_ptr).
/// DLPack field views work on every arena (they describe memory, never read it).
///
/// Storage is a [`PodVector<P, A>`](PodVector) (AMReX's `PODVector` of particles);
/// particles may have padding (`Particle<2, 1>` ends in 4 padding bytes), which
/// `PodVector`'s `AnyBitPattern` bound allows.
///
/// ```
/// use amrex_aos::{ArrayOfStructs, FieldKind, Particle};
/// let mut aos = ArrayOfStructs::<Particle<2, 1>>::new();
/// for i in 0..4 {
///     let mut p = Particle::new([f64::from(i), 0.0, 0.0]);
///     p.set_id_cpu(i64::from(i) + 1, 0);
///     aos.push(p);
/// }
/// aos.set_num_neighbors(1)?;
/// assert_eq!((aos.len(), aos.num_particles()), (5, 4));
///
/// // A zero-copy, writable view of every particle's x coordinate.
/// let mut x = aos.field_to_dlpack_mut(FieldKind::Position(0))?;
/// assert_eq!(x.shape(), &[5]);
/// assert_eq!(x.view().stride(0), 7); // 56-byte particles, 8-byte reals
/// let mut xs = x.view_mut()?.typed_mut::<f64>()?;
/// *xs.get_mut(&[2]).unwrap() = 42.0;
/// drop(x);
/// assert_eq!(aos[2].pos[0], 42.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
//
// Invariant: `num_neighbors <= data.len()`.
pub struct ArrayOfStructs<P: ParticleLayout, A: Arena = HostArena> {
    data: PodVector<P, A>,
    num_neighbors: usize,
}

fn overflow() -> ArenaError {
    ArenaError::new(ArenaErrorKind::CapacityOverflow)
}

#[cold]
#[track_caller]
fn fail(what: &str, e: impl fmt::Display) -> ! {
    panic!("ArrayOfStructs::{what}: {e}")
}

impl<P: ParticleLayout> ArrayOfStructs<P, HostArena> {
    /// An empty container in host memory; allocates nothing.
    pub fn new() -> Self {
        Self::new_in(HostArena)
    }

    /// A host container holding a copy of `particles`.
    pub fn from_slice(particles: &[P]) -> Self {
        let mut v = Self::new();
        v.extend_from_slice(particles);
        v
    }
}

impl<P: ParticleLayout> Default for ArrayOfStructs<P, HostArena> {
    fn default() -> Self {
        Self::new()
    }
}

impl<P: ParticleLayout, A: Arena> ArrayOfStructs<P, A> {
    /// An empty container on `arena`; allocates nothing.
    pub fn new_in(arena: A) -> Self {
        Self {
            data: PodVector::new_in(arena),
            num_neighbors: 0,
        }
    }

    /// An empty container on `arena` with room for exactly `capacity` particles.
    ///
    /// # Errors
    /// Allocation failure or overflow.
    pub fn try_with_capacity_in(capacity: usize, arena: A) -> Result<Self, ArenaError> {
        Ok(Self {
            data: PodVector::try_with_capacity_in(capacity, arena)?,
            num_neighbors: 0,
        })
    }

    /// Wraps a vector of particles (none of them neighbours).
    pub fn from_pod_vector(data: PodVector<P, A>) -> Self {
        Self {
            data,
            num_neighbors: 0,
        }
    }

    /// The underlying vector (neighbours included).
    pub fn as_pod_vector(&self) -> &PodVector<P, A> {
        &self.data
    }

    /// Gives up the neighbour count and returns the vector.
    pub fn into_pod_vector(self) -> PodVector<P, A> {
        self.data
    }

    /// The same container with growth strategy `strategy`.
    pub fn with_growth_strategy(mut self, strategy: GrowthStrategy) -> Self {
        self.data.set_growth_strategy(strategy);
        self
    }

    /// The growth strategy.
    pub fn growth_strategy(&self) -> GrowthStrategy {
        self.data.growth_strategy()
    }

    /// Particles held, neighbours included (AMReX `size`).
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether nothing (not even a neighbour) is held.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Particles held, neighbours excluded (AMReX `numParticles` / `numRealParticles`).
    pub fn num_particles(&self) -> usize {
        self.len() - self.num_neighbors
    }

    /// Neighbour particles at the end (AMReX `numNeighborParticles`).
    pub fn num_neighbors(&self) -> usize {
        self.num_neighbors
    }

    /// Sets the neighbour count and resizes to `num_particles() + n` (AMReX
    /// `setNumNeighbors`); new slots are all-zero particles (id 0, invalid).
    ///
    /// # Errors
    /// Allocation failure; nothing changes then.
    pub fn set_num_neighbors(&mut self, n: usize) -> Result<(), ParticleError> {
        let real = self.num_particles();
        let new_len = real.checked_add(n).ok_or_else(overflow)?;
        self.try_resize(new_len, P::zeroed())?;
        self.num_neighbors = n;
        Ok(())
    }

    /// Capacity in particles.
    pub fn capacity(&self) -> usize {
        self.data.capacity()
    }

    /// The arena.
    pub fn arena(&self) -> &A {
        self.data.arena()
    }

    /// Where the memory lives (the arena's DLPack device).
    pub fn device(&self) -> Device {
        self.data.device()
    }

    /// Pointer to the first particle (device memory for device arenas).
    pub fn as_ptr(&self) -> *const P {
        self.data.as_ptr()
    }

    /// Mutable pointer to the first particle (device memory for device arenas).
    pub fn as_mut_ptr(&mut self) -> *mut P {
        self.data.as_mut_ptr()
    }

    /// Makes room for `additional` more particles by the growth strategy.
    ///
    /// # Errors
    /// Allocation failure or overflow; nothing changes then.
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), ArenaError> {
        self.data.try_reserve(additional)
    }

    /// As [`try_reserve`](Self::try_reserve).
    ///
    /// # Panics
    /// On its errors.
    #[track_caller]
    pub fn reserve(&mut self, additional: usize) {
        self.try_reserve(additional)
            .unwrap_or_else(|e| fail("reserve", e));
    }

    /// Appends a particle (after any neighbours; the neighbour count is unchanged).
    ///
    /// # Errors
    /// Allocation or copy failure; nothing changes then.
    pub fn try_push(&mut self, p: P) -> Result<(), ArenaError> {
        self.data.try_push(p)
    }

    /// As [`try_push`](Self::try_push).
    ///
    /// # Panics
    /// On its errors.
    #[inline]
    #[track_caller]
    pub fn push(&mut self, p: P) {
        self.data.push(p);
    }

    /// Appends copies of host particles.
    ///
    /// # Errors
    /// Allocation or copy failure; nothing changes then.
    pub fn try_extend_from_slice(&mut self, src: &[P]) -> Result<(), ArenaError> {
        self.data.try_extend_from_slice(src)
    }

    /// As [`try_extend_from_slice`](Self::try_extend_from_slice).
    ///
    /// # Panics
    /// On its errors.
    #[track_caller]
    pub fn extend_from_slice(&mut self, src: &[P]) {
        self.try_extend_from_slice(src)
            .unwrap_or_else(|e| fail("extend_from_slice", e));
    }

    /// Sets the length to `n`, filling new slots with `value`. Shrinking drops neighbours
    /// (at the end) first; growing keeps the neighbour count.
    ///
    /// # Errors
    /// Allocation or copy failure; nothing changes then.
    pub fn try_resize(&mut self, n: usize, value: P) -> Result<(), ArenaError> {
        let shrunk = self.neighbors_after(n);
        self.data.try_resize(n, value)?;
        self.num_neighbors = shrunk;
        Ok(())
    }

    /// As [`try_resize`](Self::try_resize).
    ///
    /// # Panics
    /// On its errors.
    #[track_caller]
    pub fn resize(&mut self, n: usize, value: P) {
        self.try_resize(n, value)
            .unwrap_or_else(|e| fail("resize", e));
    }

    /// Resizes to `n` particles of which the last `neighbors` are neighbours (new slots
    /// are all-zero particles); for the conversions, which overwrite every particle.
    pub(crate) fn try_resize_with_neighbors(
        &mut self,
        n: usize,
        neighbors: usize,
    ) -> Result<(), ArenaError> {
        debug_assert!(neighbors <= n);
        self.data.try_resize(n, P::zeroed())?;
        self.num_neighbors = neighbors.min(n);
        Ok(())
    }

    /// The neighbour count once the length becomes `n`: neighbours sit at the end, so
    /// shrinking drops them first.
    fn neighbors_after(&self, n: usize) -> usize {
        if n < self.len() {
            n.saturating_sub(self.num_particles())
                .min(self.num_neighbors)
        } else {
            self.num_neighbors
        }
    }

    /// Shortens to `n` particles (no effect when shorter), dropping neighbours first.
    pub fn truncate(&mut self, n: usize) {
        self.num_neighbors = self.neighbors_after(n);
        self.data.truncate(n);
    }

    /// Removes every particle and neighbour; keeps the capacity.
    pub fn clear(&mut self) {
        self.data.clear();
        self.num_neighbors = 0;
    }

    /// Reduces the capacity to the length.
    ///
    /// # Errors
    /// The arena's failure; nothing changes then.
    pub fn try_shrink_to_fit(&mut self) -> Result<(), ArenaError> {
        self.data.try_shrink_to_fit()
    }

    /// Exchanges everything with `other`.
    pub fn swap(&mut self, other: &mut Self) {
        core::mem::swap(self, other);
    }

    /// Overwrites the particles with host data of the same length (works on every arena).
    ///
    /// # Errors
    /// `LengthMismatch` when `src.len() != len()`, or the arena's copy failure.
    pub fn copy_from_host(&mut self, src: &[P]) -> Result<(), ArenaError> {
        self.data.copy_from_host(src)
    }

    /// Copies the particles to a host vector (works on every arena).
    ///
    /// # Errors
    /// The arena's copy failure.
    pub fn to_host_vec(&self) -> Result<Vec<P>, ArenaError> {
        self.data.to_host_vec()
    }

    /// A copy on the same arena.
    ///
    /// # Errors
    /// Allocation or copy failure.
    pub fn try_clone(&self) -> Result<Self, ArenaError> {
        Ok(Self {
            data: self.data.try_clone()?,
            num_neighbors: self.num_neighbors,
        })
    }

    // ---------------------------------------------------------------- DLPack

    /// The strided layout of one field over every particle (neighbours included), for
    /// exporters that bring their own owner (the Python bindings).
    ///
    /// # Errors
    /// `Unsupported` when the struct has no such field or its size is not a whole
    /// number of the field's elements; `Misaligned` for a misaligned first element.
    pub fn field_layout(&self, kind: FieldKind) -> Result<StridedLayout, DlpackError> {
        let field = P::find(kind).ok_or(ErrorKind::Unsupported(
            "the particle struct has no such field",
        ))?;
        field_layout(self.as_ptr(), self.len(), self.device(), field)
    }

    /// The rank-2 `(len, SPACEDIM + NR)` layout of all position and real fields.
    ///
    /// # Errors
    /// `NotContiguous` when those fields are not adjacent with one dtype.
    pub fn real_block_layout(&self) -> Result<StridedLayout, DlpackError> {
        real_block_layout(self.as_ptr(), self.len(), self.device())
    }

    /// Exports one field read-only as a rank-1 strided tensor (zero copy).
    ///
    /// # Errors
    /// As [`field_layout`](Self::field_layout).
    pub fn field_to_dlpack(&self, kind: FieldKind) -> Result<ManagedTensor<'_>, DlpackError> {
        let l = self.field_layout(kind)?;
        // SAFETY: the layout describes `len` elements of one field of written particles
        // in this container's memory, on its device (`field_layout` checked stride and
        // alignment); the shared borrow keeps them alive and unwritten; READ_ONLY.
        Ok(unsafe { ManagedTensor::from_owner((), &l.spec(flags::READ_ONLY)) })
    }

    /// Exports one field writable (zero copy): writes land in the particles.
    ///
    /// # Errors
    /// As [`field_layout`](Self::field_layout).
    pub fn field_to_dlpack_mut(
        &mut self,
        kind: FieldKind,
    ) -> Result<ManagedTensor<'_>, DlpackError> {
        let l = self.field_layout(kind)?;
        // SAFETY: as `field_to_dlpack`; the exclusive borrow makes the consumer the only
        // accessor, and any value of the field's dtype leaves a valid particle
        // (`ParticleLayout` rule 3).
        Ok(unsafe { ManagedTensor::from_owner((), &l.spec(0)) })
    }

    /// Exports all position and real fields read-only as one `(len, SPACEDIM + NR)`
    /// tensor with strides `(size_of::<P>() / size_of::<real>(), 1)`.
    ///
    /// # Errors
    /// As [`real_block_layout`](Self::real_block_layout).
    pub fn real_block_to_dlpack(&self) -> Result<ManagedTensor<'_>, DlpackError> {
        let l = self.real_block_layout()?;
        // SAFETY: as `field_to_dlpack`, for the adjacent real fields.
        Ok(unsafe { ManagedTensor::from_owner((), &l.spec(flags::READ_ONLY)) })
    }

    /// As [`real_block_to_dlpack`](Self::real_block_to_dlpack), writable.
    ///
    /// # Errors
    /// As [`real_block_layout`](Self::real_block_layout).
    pub fn real_block_to_dlpack_mut(&mut self) -> Result<ManagedTensor<'_>, DlpackError> {
        let l = self.real_block_layout()?;
        // SAFETY: as `field_to_dlpack_mut`, for the adjacent real fields.
        Ok(unsafe { ManagedTensor::from_owner((), &l.spec(0)) })
    }

    /// Exports every field read-only, in memory order.
    ///
    /// # Errors
    /// As [`field_layout`](Self::field_layout), for the first field that fails.
    pub fn fields_to_dlpack(&self) -> Result<Vec<(FieldKind, ManagedTensor<'_>)>, DlpackError> {
        (0..P::NUM_FIELDS)
            .filter_map(P::field)
            .map(|f| Ok((f.kind, self.field_to_dlpack(f.kind)?)))
            .collect()
    }

    /// Exports every field writable at once, in memory order. The fields are disjoint,
    /// so consumers may write all of them concurrently.
    ///
    /// # Errors
    /// As [`field_layout`](Self::field_layout), for the first field that fails.
    pub fn fields_to_dlpack_mut(
        &mut self,
    ) -> Result<Vec<(FieldKind, ManagedTensor<'_>)>, DlpackError> {
        let mut out = Vec::with_capacity(P::NUM_FIELDS);
        for f in (0..P::NUM_FIELDS).filter_map(P::field) {
            let l = self.field_layout(f.kind)?;
            // SAFETY: as `field_to_dlpack_mut`; fields never overlap (`ParticleLayout`
            // rule 4), so the tensors alias no element, and all of them live inside the
            // one exclusive borrow of `self`.
            out.push((f.kind, unsafe { ManagedTensor::from_owner((), &l.spec(0)) }));
        }
        Ok(out)
    }
}

/// Host-only operations.
impl<P: ParticleLayout, A: HostAccessible> ArrayOfStructs<P, A> {
    /// Every particle, neighbours included.
    pub fn as_slice(&self) -> &[P] {
        self.data.as_slice()
    }

    /// Every particle, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [P] {
        self.data.as_mut_slice()
    }

    /// The particles that are not neighbours.
    pub fn particles(&self) -> &[P] {
        &self.as_slice()[..self.num_particles()]
    }

    /// The particles that are not neighbours, mutably.
    pub fn particles_mut(&mut self) -> &mut [P] {
        let n = self.num_particles();
        &mut self.as_mut_slice()[..n]
    }

    /// The neighbour particles.
    pub fn neighbors(&self) -> &[P] {
        &self.as_slice()[self.num_particles()..]
    }

    /// Removes and returns the last particle (a neighbour if there are any).
    pub fn pop(&mut self) -> Option<P> {
        let last = *self.as_slice().last()?;
        self.truncate(self.len() - 1);
        Some(last)
    }
}

impl<P: ParticleLayout, A: HostAccessible> Deref for ArrayOfStructs<P, A> {
    type Target = [P];
    fn deref(&self) -> &[P] {
        self.as_slice()
    }
}

impl<P: ParticleLayout, A: HostAccessible> DerefMut for ArrayOfStructs<P, A> {
    fn deref_mut(&mut self) -> &mut [P] {
        self.as_mut_slice()
    }
}

impl<P: ParticleLayout, A: Arena> Clone for ArrayOfStructs<P, A> {
    #[track_caller]
    fn clone(&self) -> Self {
        self.try_clone().unwrap_or_else(|e| fail("clone", e))
    }
}

impl<P: ParticleLayout, A: Arena> fmt::Debug for ArrayOfStructs<P, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArrayOfStructs")
            .field("len", &self.len())
            .field("num_neighbors", &self.num_neighbors)
            .field("capacity", &self.capacity())
            .field("particle_size", &size_of::<P>())
            .field("device", &self.device())
            .finish()
    }
}

impl<P: ParticleLayout, A: Arena> Extend<P> for ArrayOfStructs<P, A> {
    fn extend<I: IntoIterator<Item = P>>(&mut self, iter: I) {
        for p in iter {
            self.push(p);
        }
    }
}

impl<P: ParticleLayout> FromIterator<P> for ArrayOfStructs<P, HostArena> {
    fn from_iter<I: IntoIterator<Item = P>>(iter: I) -> Self {
        let mut v = Self::new();
        v.extend(iter);
        v
    }
}
