//! [`StructOfArrays`]: one vector per particle component.

use crate::error::{CompKind, ParticleError};
use crate::fields::FieldKind;
use crate::particle::ParticleReal;
use alloc::string::String;
use alloc::vec::Vec;
use amrex_arena::{Arena, HostArena};
use amrex_dlpack_core::{Device, DlpackElement, ManagedTensor, ToDlpack};
use amrex_podvector::PodVector;
use bytemuck::AnyBitPattern;

/// Read-only export of one component vector (cannot fail: a vector's length fits `i64`).
fn vec_to_dlpack<T: AnyBitPattern + DlpackElement, A: Arena>(
    v: &PodVector<T, A>,
) -> ManagedTensor<'_> {
    v.to_dlpack()
        .unwrap_or_else(|e| unreachable!("vector export: {e}"))
}

/// Writable export of one component vector.
fn vec_to_dlpack_mut<T: AnyBitPattern + DlpackElement, A: Arena>(
    v: &mut PodVector<T, A>,
) -> ManagedTensor<'_> {
    v.to_dlpack()
        .unwrap_or_else(|e| unreachable!("vector export: {e}"))
}

/// Particles stored component by component (AMReX `StructOfArrays<NR, NI>`): an `idcpu`
/// vector, `NR` real and `NI` integer component vectors fixed at compile time, and any
/// number of real and integer components added at run time, each with an optional name.
///
/// Every component vector has the same length. The last [`num_neighbors`] entries are
/// neighbour (halo) particles: [`len`] counts them, [`num_particles`] does not. All
/// vectors live in the arena `A`; on device arenas read and write them with the vectors'
/// bulk copies, never through slices.
///
/// ```
/// use amrex_aos::{StructOfArrays, idcpu};
/// let mut soa = StructOfArrays::<3, 1>::new();
/// soa.push(idcpu::make_id_cpu(1, 0), &[0.5, 1.5, 2.5], &[7])?;
/// let w = soa.add_real_comp(Some("weight"))?;
/// assert_eq!(w, 3);
/// soa.real_mut(w)[0] = 2.0;
/// assert_eq!(soa.real_by_name("weight").unwrap()[0], 2.0);
/// assert_eq!(soa.real(1)[0], 1.5);
/// soa.set_num_neighbors(2)?; // appends two neighbour slots
/// assert_eq!((soa.len(), soa.num_particles()), (3, 1));
/// # Ok::<(), amrex_aos::ParticleError>(())
/// ```
///
/// [`len`]: Self::len
/// [`num_particles`]: Self::num_particles
/// [`num_neighbors`]: Self::num_neighbors
//
// Invariants:
// 1. `reals.len() == real_names.len() >= NR`, `ints.len() == int_names.len() >= NI`.
// 2. Every vector in `reals` and `ints` has `idcpu.len()` elements.
// 3. `num_neighbors <= idcpu.len()`.
// 4. Names that are `Some` are unique within reals and within ints.
// 5. Every vector was made with (a clone of) `arena`.
#[derive(Debug)]
pub struct StructOfArrays<const NR: usize, const NI: usize = 0, A: Arena = HostArena> {
    idcpu: PodVector<u64, A>,
    reals: Vec<PodVector<ParticleReal, A>>,
    ints: Vec<PodVector<i32, A>>,
    real_names: Vec<Option<String>>,
    int_names: Vec<Option<String>>,
    num_neighbors: usize,
    arena: A,
}

impl<const NR: usize, const NI: usize> StructOfArrays<NR, NI, HostArena> {
    /// An empty container in host memory.
    pub fn new() -> Self {
        Self::new_in(HostArena)
    }
}

impl<const NR: usize, const NI: usize> Default for StructOfArrays<NR, NI, HostArena> {
    fn default() -> Self {
        Self::new()
    }
}

fn fill_names(n: usize) -> Vec<Option<String>> {
    (0..n).map(|_| None).collect()
}

impl<const NR: usize, const NI: usize, A: Arena> StructOfArrays<NR, NI, A> {
    /// An empty container whose vectors allocate from `arena`.
    pub fn new_in(arena: A) -> Self {
        Self {
            idcpu: PodVector::new_in(arena.clone()),
            reals: (0..NR).map(|_| PodVector::new_in(arena.clone())).collect(),
            ints: (0..NI).map(|_| PodVector::new_in(arena.clone())).collect(),
            real_names: fill_names(NR),
            int_names: fill_names(NI),
            num_neighbors: 0,
            arena,
        }
    }

    /// The arena.
    pub fn arena(&self) -> &A {
        &self.arena
    }

    /// Where the memory lives.
    pub fn device(&self) -> Device {
        self.arena.device()
    }

    /// Particles held, neighbours included (AMReX `size`).
    pub fn len(&self) -> usize {
        self.idcpu.len()
    }

    /// Whether no particles (not even neighbours) are held.
    pub fn is_empty(&self) -> bool {
        self.idcpu.is_empty()
    }

    /// Particles held, neighbours excluded (AMReX `numParticles`).
    pub fn num_particles(&self) -> usize {
        self.len() - self.num_neighbors
    }

    /// Neighbour particles at the end (AMReX `numNeighborParticles`).
    pub fn num_neighbors(&self) -> usize {
        self.num_neighbors
    }

    /// Sets the number of neighbour particles and resizes to `num_particles() + n`, as
    /// AMReX's `setNumNeighbors` does (new slots are zero: id 0, invalid).
    ///
    /// # Errors
    /// The arena's allocation failure.
    pub fn set_num_neighbors(&mut self, n: usize) -> Result<(), ParticleError> {
        let real = self.num_particles();
        self.resize(real + n)?;
        self.num_neighbors = n;
        Ok(())
    }

    /// Number of real components (`NR` plus those added at run time).
    pub fn num_real_comps(&self) -> usize {
        self.reals.len()
    }

    /// Number of integer components (`NI` plus those added at run time).
    pub fn num_int_comps(&self) -> usize {
        self.ints.len()
    }

    /// Number of real components added at run time.
    pub fn num_runtime_real_comps(&self) -> usize {
        self.reals.len() - NR
    }

    /// Number of integer components added at run time.
    pub fn num_runtime_int_comps(&self) -> usize {
        self.ints.len() - NI
    }

    fn check_name(names: &[Option<String>], name: Option<&str>) -> Result<(), ParticleError> {
        if let Some(name) = name
            && names.iter().any(|n| n.as_deref() == Some(name))
        {
            return Err(ParticleError::DuplicateName(name.into()));
        }
        Ok(())
    }

    /// Adds a real component (zero for every particle held) and returns its index.
    ///
    /// # Errors
    /// [`ParticleError::DuplicateName`], or the arena's failure.
    pub fn add_real_comp(&mut self, name: Option<&str>) -> Result<usize, ParticleError> {
        Self::check_name(&self.real_names, name)?;
        let mut v = PodVector::new_in(self.arena.clone());
        v.try_resize(self.len(), 0.0)?;
        self.reals.push(v);
        self.real_names.push(name.map(String::from));
        Ok(self.reals.len() - 1)
    }

    /// Adds an integer component (zero for every particle held) and returns its index.
    ///
    /// # Errors
    /// As [`add_real_comp`](Self::add_real_comp).
    pub fn add_int_comp(&mut self, name: Option<&str>) -> Result<usize, ParticleError> {
        Self::check_name(&self.int_names, name)?;
        let mut v = PodVector::new_in(self.arena.clone());
        v.try_resize(self.len(), 0)?;
        self.ints.push(v);
        self.int_names.push(name.map(String::from));
        Ok(self.ints.len() - 1)
    }

    /// Names real component `i` (compile-time components can be named too).
    ///
    /// # Errors
    /// [`ParticleError::NoSuchComponent`] or [`ParticleError::DuplicateName`].
    pub fn set_real_name(&mut self, i: usize, name: &str) -> Result<(), ParticleError> {
        Self::set_name(&mut self.real_names, CompKind::Real, i, name)
    }

    /// Names integer component `i`.
    ///
    /// # Errors
    /// As [`set_real_name`](Self::set_real_name).
    pub fn set_int_name(&mut self, i: usize, name: &str) -> Result<(), ParticleError> {
        Self::set_name(&mut self.int_names, CompKind::Int, i, name)
    }

    fn set_name(
        names: &mut [Option<String>],
        kind: CompKind,
        i: usize,
        name: &str,
    ) -> Result<(), ParticleError> {
        let count = names.len();
        if i >= count {
            return Err(ParticleError::NoSuchComponent {
                kind,
                index: i,
                count,
            });
        }
        if names
            .iter()
            .enumerate()
            .any(|(j, n)| j != i && n.as_deref() == Some(name))
        {
            return Err(ParticleError::DuplicateName(name.into()));
        }
        names[i] = Some(name.into());
        Ok(())
    }

    /// The name of real component `i`, if it has one.
    pub fn real_name(&self, i: usize) -> Option<&str> {
        self.real_names.get(i)?.as_deref()
    }

    /// The name of integer component `i`, if it has one.
    pub fn int_name(&self, i: usize) -> Option<&str> {
        self.int_names.get(i)?.as_deref()
    }

    /// The index of the real component called `name`.
    pub fn find_real(&self, name: &str) -> Option<usize> {
        self.real_names
            .iter()
            .position(|n| n.as_deref() == Some(name))
    }

    /// The index of the integer component called `name`.
    pub fn find_int(&self, name: &str) -> Option<usize> {
        self.int_names
            .iter()
            .position(|n| n.as_deref() == Some(name))
    }

    /// The `idcpu` vector (AMReX `GetIdCPUData`).
    pub fn idcpu(&self) -> &PodVector<u64, A> {
        &self.idcpu
    }

    /// The `idcpu` vector, for writing in place (its length cannot change from here).
    pub fn idcpu_mut(&mut self) -> &mut [u64]
    where
        A: amrex_arena::HostAccessible,
    {
        self.idcpu.as_mut_slice()
    }

    /// Real component `i`.
    ///
    /// # Panics
    /// If `i >= num_real_comps()`.
    #[track_caller]
    pub fn real(&self, i: usize) -> &PodVector<ParticleReal, A> {
        &self.reals[i]
    }

    /// Real component `i`, if there is one.
    pub fn get_real(&self, i: usize) -> Option<&PodVector<ParticleReal, A>> {
        self.reals.get(i)
    }

    /// Real component `i` as a mutable slice (host memory).
    ///
    /// # Panics
    /// If `i >= num_real_comps()`.
    #[track_caller]
    pub fn real_mut(&mut self, i: usize) -> &mut [ParticleReal]
    where
        A: amrex_arena::HostAccessible,
    {
        self.reals[i].as_mut_slice()
    }

    /// The real component called `name`.
    pub fn real_by_name(&self, name: &str) -> Option<&PodVector<ParticleReal, A>> {
        self.reals.get(self.find_real(name)?)
    }

    /// Integer component `i`.
    ///
    /// # Panics
    /// If `i >= num_int_comps()`.
    #[track_caller]
    pub fn int(&self, i: usize) -> &PodVector<i32, A> {
        &self.ints[i]
    }

    /// Integer component `i`, if there is one.
    pub fn get_int(&self, i: usize) -> Option<&PodVector<i32, A>> {
        self.ints.get(i)
    }

    /// Integer component `i` as a mutable slice (host memory).
    ///
    /// # Panics
    /// If `i >= num_int_comps()`.
    #[track_caller]
    pub fn int_mut(&mut self, i: usize) -> &mut [i32]
    where
        A: amrex_arena::HostAccessible,
    {
        self.ints[i].as_mut_slice()
    }

    /// The integer component called `name`.
    pub fn int_by_name(&self, name: &str) -> Option<&PodVector<i32, A>> {
        self.ints.get(self.find_int(name)?)
    }

    /// Mutable slices of every component at once, for kernels that read some
    /// components while writing others: `(idcpu, reals, ints)`.
    pub fn components_mut(&mut self) -> ComponentsMut<'_>
    where
        A: amrex_arena::HostAccessible,
    {
        ComponentsMut {
            idcpu: self.idcpu.as_mut_slice(),
            reals: self.reals.iter_mut().map(|v| v.as_mut_slice()).collect(),
            ints: self.ints.iter_mut().map(|v| v.as_mut_slice()).collect(),
        }
    }

    /// Raw pointers to every component (`idcpu`, reals, ints) for device kernels; valid
    /// until the container is resized or dropped. Never dereference them on the host for
    /// device arenas.
    pub fn component_ptrs_mut(&mut self) -> (*mut u64, Vec<*mut ParticleReal>, Vec<*mut i32>) {
        (
            self.idcpu.as_mut_ptr(),
            self.reals.iter_mut().map(PodVector::as_mut_ptr).collect(),
            self.ints.iter_mut().map(PodVector::as_mut_ptr).collect(),
        )
    }

    /// Resizes every component to `n` particles; new entries are zero (id 0, invalid).
    /// Shrinking drops neighbours (at the end) first; growing keeps the neighbour count.
    ///
    /// # Errors
    /// The arena's allocation failure (components may then have different capacities,
    /// but all keep the old length).
    pub fn resize(&mut self, n: usize) -> Result<(), ParticleError> {
        // Reserve everything first so a failure leaves every length unchanged.
        let extra = n.saturating_sub(self.len());
        self.idcpu.try_reserve(extra)?;
        for v in &mut self.reals {
            v.try_reserve(extra)?;
        }
        for v in &mut self.ints {
            v.try_reserve(extra)?;
        }
        if n < self.len() {
            self.num_neighbors = n.saturating_sub(self.num_particles());
        }
        self.idcpu.try_resize(n, 0)?;
        for v in &mut self.reals {
            v.try_resize(n, 0.0)?;
        }
        for v in &mut self.ints {
            v.try_resize(n, 0)?;
        }
        Ok(())
    }

    /// Resizes to `n` particles of which the last `neighbors` are neighbours (new
    /// entries are zero); for the conversions, which overwrite every entry.
    pub(crate) fn resize_with_neighbors(
        &mut self,
        n: usize,
        neighbors: usize,
    ) -> Result<(), ParticleError> {
        debug_assert!(neighbors <= n);
        self.resize(n)?;
        self.num_neighbors = neighbors.min(n);
        Ok(())
    }

    /// Appends one particle (after any neighbours; the neighbour count is unchanged).
    ///
    /// # Errors
    /// [`ParticleError::ComponentCountMismatch`] when `reals`/`ints` do not have one value
    /// per component, or the arena's failure; nothing is appended then.
    pub fn push(
        &mut self,
        idcpu: u64,
        reals: &[ParticleReal],
        ints: &[i32],
    ) -> Result<(), ParticleError> {
        if reals.len() != self.reals.len() {
            return Err(ParticleError::ComponentCountMismatch {
                kind: CompKind::Real,
                expected: self.reals.len(),
                found: reals.len(),
            });
        }
        if ints.len() != self.ints.len() {
            return Err(ParticleError::ComponentCountMismatch {
                kind: CompKind::Int,
                expected: self.ints.len(),
                found: ints.len(),
            });
        }
        self.idcpu.try_reserve(1)?;
        for v in &mut self.reals {
            v.try_reserve(1)?;
        }
        for v in &mut self.ints {
            v.try_reserve(1)?;
        }
        self.idcpu.try_push(idcpu)?;
        for (v, &x) in self.reals.iter_mut().zip(reals) {
            v.try_push(x)?;
        }
        for (v, &x) in self.ints.iter_mut().zip(ints) {
            v.try_push(x)?;
        }
        Ok(())
    }

    /// Removes every particle and neighbour; keeps components, names and capacity.
    pub fn clear(&mut self) {
        self.idcpu.clear();
        self.reals.iter_mut().for_each(PodVector::clear);
        self.ints.iter_mut().for_each(PodVector::clear);
        self.num_neighbors = 0;
    }

    /// Exchanges everything with `other`.
    pub fn swap(&mut self, other: &mut Self) {
        core::mem::swap(self, other);
    }

    /// Exports the `idcpu` vector read-only as a `u64` tensor `(len,)`.
    pub fn idcpu_to_dlpack(&self) -> ManagedTensor<'_> {
        vec_to_dlpack(&self.idcpu)
    }

    /// Exports the `idcpu` vector writable.
    pub fn idcpu_to_dlpack_mut(&mut self) -> ManagedTensor<'_> {
        vec_to_dlpack_mut(&mut self.idcpu)
    }

    /// Exports real component `i` read-only as a tensor `(len,)`, if it exists.
    pub fn real_to_dlpack(&self, i: usize) -> Option<ManagedTensor<'_>> {
        self.reals.get(i).map(vec_to_dlpack)
    }

    /// Exports real component `i` writable, if it exists.
    pub fn real_to_dlpack_mut(&mut self, i: usize) -> Option<ManagedTensor<'_>> {
        self.reals.get_mut(i).map(vec_to_dlpack_mut)
    }

    /// Exports integer component `i` read-only as an `i32` tensor `(len,)`, if it exists.
    pub fn int_to_dlpack(&self, i: usize) -> Option<ManagedTensor<'_>> {
        self.ints.get(i).map(vec_to_dlpack)
    }

    /// Exports integer component `i` writable, if it exists.
    pub fn int_to_dlpack_mut(&mut self, i: usize) -> Option<ManagedTensor<'_>> {
        self.ints.get_mut(i).map(vec_to_dlpack_mut)
    }

    /// Exports every component read-only: `idcpu`, then reals, then ints.
    pub fn to_dlpack_all(&self) -> Vec<(FieldKind, ManagedTensor<'_>)> {
        let mut out = Vec::with_capacity(1 + self.reals.len() + self.ints.len());
        out.push((FieldKind::IdCpu, vec_to_dlpack(&self.idcpu)));
        out.extend(
            self.reals
                .iter()
                .enumerate()
                .map(|(i, v)| (FieldKind::Real(i), vec_to_dlpack(v))),
        );
        out.extend(
            self.ints
                .iter()
                .enumerate()
                .map(|(i, v)| (FieldKind::Int(i), vec_to_dlpack(v))),
        );
        out
    }

    /// Exports every component writable at once (the vectors are disjoint).
    pub fn to_dlpack_all_mut(&mut self) -> Vec<(FieldKind, ManagedTensor<'_>)> {
        let mut out = Vec::with_capacity(1 + self.reals.len() + self.ints.len());
        out.push((FieldKind::IdCpu, vec_to_dlpack_mut(&mut self.idcpu)));
        out.extend(
            self.reals
                .iter_mut()
                .enumerate()
                .map(|(i, v)| (FieldKind::Real(i), vec_to_dlpack_mut(v))),
        );
        out.extend(
            self.ints
                .iter_mut()
                .enumerate()
                .map(|(i, v)| (FieldKind::Int(i), vec_to_dlpack_mut(v))),
        );
        out
    }
}

/// Every component of a host [`StructOfArrays`] as mutable slices of one length.
#[derive(Debug)]
pub struct ComponentsMut<'a> {
    /// The `idcpu` words.
    pub idcpu: &'a mut [u64],
    /// Real components, compile-time ones first.
    pub reals: Vec<&'a mut [ParticleReal]>,
    /// Integer components, compile-time ones first.
    pub ints: Vec<&'a mut [i32]>,
}
