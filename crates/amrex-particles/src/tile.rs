//! Particle tiles: the particles of one (grid, tile), in AMReX's two layouts.
//!
//! [`AosTile`] is AMReX's `ParticleTile<Particle<NR, NI>, ...>`: an
//! [`ArrayOfStructs`] of [`Particle<NR, NI>`] plus components added at run time, stored
//! component by component. [`SoaTile`] is the pure struct-of-arrays tile of AMReX's
//! `ParticleContainerPureSoA<NR, NI>`: real components `0..3` are the position.
//!
//! The container moves particles in batches (`append_selected`, `keep_selected`,
//! `pack_selected`, `unpack_append`), so each component is walked once per batch, except
//! in `redistribute`'s sweep, which copies a leaver (`push_from`) and fills its hole
//! (`copy_particle`) while the particle's cache line is at hand.
use alloc::vec::Vec;
use amrex_aos::{ArrayOfStructs, Particle, ParticleReal, SPACEDIM, StructOfArrays, idcpu};
use amrex_podvector::{prefetch_index, prefetch_read};

/// How many particles ahead of the one they work on the streaming loops (deposit,
/// gather, `redistribute`'s sweep) ask for the next particles' cache lines: 2 KiB of
/// 64-byte particles, beyond what one read's latency times the loops' rate needs.
/// Without it, on a machine whose hardware prefetcher stays close, deposition ran at a
/// third of its speed, waiting on each particle's line.
pub(crate) const PREFETCH_AHEAD: usize = 32;

/// Bytes one real takes in a message.
const RB: usize = core::mem::size_of::<ParticleReal>();

/// What the container needs from a tile of particles. Implemented by [`AosTile`] and
/// [`SoaTile`]; the methods work on host memory.
///
/// Real components are numbered after the position: `real(i, 0)` is the first real
/// that is not a coordinate (AoS: `rdata[0]`, then the run-time components; pure SoA:
/// SoA real component 3, ...). Int components likewise (AoS: `idata`, then run-time).
pub trait ParticleTile: Send + Sync + Sized {
    /// An empty tile with the same components (and names) as `self`.
    fn new_like(&self) -> Self;
    /// Number of particles.
    fn len(&self) -> usize;
    /// `len() == 0`.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Real components besides the position.
    fn num_reals(&self) -> usize;
    /// Int components.
    fn num_ints(&self) -> usize;
    /// Position of particle `i`.
    fn pos(&self, i: usize) -> [ParticleReal; SPACEDIM];
    /// Sets the position of particle `i`.
    fn set_pos(&mut self, i: usize, p: [ParticleReal; SPACEDIM]);
    /// The packed id/cpu word of particle `i`.
    fn idcpu(&self, i: usize) -> u64;
    /// Sets the packed id/cpu word of particle `i`.
    fn set_idcpu(&mut self, i: usize, v: u64);
    /// Real component `c` (after the position) of particle `i`.
    fn real(&self, i: usize, c: usize) -> ParticleReal;
    /// Sets real component `c` of particle `i`.
    fn set_real(&mut self, i: usize, c: usize, v: ParticleReal);
    /// Int component `c` of particle `i`.
    fn int(&self, i: usize, c: usize) -> i32;
    /// Sets int component `c` of particle `i`.
    fn set_int(&mut self, i: usize, c: usize, v: i32);
    /// Hints that the position and id of particle `i` will be read soon (nothing if `i`
    /// is past the end). The container's loops call it 32 particles ahead of the one
    /// they work on. The default does nothing.
    fn prefetch(&self, i: usize) {
        let _ = i;
    }
    /// Resizes to `n` particles; new ones are zero (invalid).
    fn resize(&mut self, n: usize);
    /// Appends the particles `idx` of `src` (same components), in that order.
    fn append_selected(&mut self, src: &Self, idx: &[u32]);
    /// Keeps only the particles `idx` (strictly increasing), in that order.
    fn keep_selected(&mut self, idx: &[u32]);
    /// Appends particle `i` of `src` (same components).
    fn push_from(&mut self, src: &Self, i: usize);
    /// Copies particle `from` over particle `to`.
    fn copy_particle(&mut self, from: usize, to: usize);
    /// Reorders the particles: new particle `k` is old particle `perm[k]`.
    fn permute(&mut self, perm: &[u32]) {
        let mut t = self.new_like();
        t.append_selected(self, perm);
        *self = t;
    }
    /// Appends everything in `src` (same components).
    ///
    /// # Panics
    /// If `src` has more than `u32::MAX` particles (the indices of
    /// [`append_selected`](Self::append_selected)).
    fn append(&mut self, src: &Self) {
        let n = u32::try_from(src.len()).expect("append: more than u32::MAX particles");
        let idx: Vec<u32> = (0..n).collect();
        self.append_selected(src, &idx);
    }

    /// Bytes one particle takes in a message: idcpu, position, reals, ints.
    fn packed_bytes(&self) -> usize {
        8 + (SPACEDIM + self.num_reals()) * RB + 4 * self.num_ints()
    }
    /// Appends particles `idx` to `out` in message format (little-endian).
    fn pack_selected(&self, idx: &[u32], out: &mut Vec<u8>) {
        out.reserve(idx.len() * self.packed_bytes());
        for &i in idx {
            let i = i as usize;
            out.extend_from_slice(&self.idcpu(i).to_le_bytes());
            for x in self.pos(i) {
                out.extend_from_slice(&x.to_le_bytes());
            }
            for c in 0..self.num_reals() {
                out.extend_from_slice(&self.real(i, c).to_le_bytes());
            }
            for c in 0..self.num_ints() {
                out.extend_from_slice(&self.int(i, c).to_le_bytes());
            }
        }
    }
    /// Appends the particles in `bytes` (a whole number of [`packed_bytes`]).
    ///
    /// [`packed_bytes`]: Self::packed_bytes
    fn unpack_append(&mut self, bytes: &[u8]) {
        let pb = self.packed_bytes();
        debug_assert_eq!(bytes.len() % pb, 0);
        let n0 = self.len();
        let n = bytes.len() / pb;
        self.resize(n0 + n);
        let (nr, ni) = (self.num_reals(), self.num_ints());
        for (k, rec) in bytes.chunks_exact(pb).enumerate() {
            let i = n0 + k;
            let mut at = 0;
            let mut take = |w: usize| {
                let s = &rec[at..at + w];
                at += w;
                s
            };
            let id = u64::from_le_bytes(take(8).try_into().unwrap_or([0; 8]));
            let mut p = [0.0; SPACEDIM];
            for x in &mut p {
                *x = real_from(take(RB));
            }
            self.set_idcpu(i, id);
            self.set_pos(i, p);
            for c in 0..nr {
                let v = real_from(take(RB));
                self.set_real(i, c, v);
            }
            for c in 0..ni {
                let v = i32::from_le_bytes(take(4).try_into().unwrap_or([0; 4]));
                self.set_int(i, c, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Particle `k` of a tile: position `(k, 2k, 3k)`, id `k + 1`, every other
    /// component `10 k + c`.
    fn filled<T: ParticleTile>(mut t: T, n: usize) -> T {
        t.resize(n);
        for k in 0..n {
            let v = k as ParticleReal;
            t.set_pos(k, [v, 2.0 * v, 3.0 * v]);
            t.set_idcpu(k, idcpu::make_id_cpu(i64::try_from(k).unwrap() + 1, 0));
            for c in 0..t.num_reals() {
                t.set_real(k, c, 10.0 * v + c as ParticleReal);
            }
            for c in 0..t.num_ints() {
                t.set_int(k, c, i32::try_from(10 * k + c).unwrap());
            }
        }
        t
    }

    fn same<T: ParticleTile>(a: &T, i: usize, b: &T, j: usize) -> bool {
        a.pos(i) == b.pos(j)
            && a.idcpu(i) == b.idcpu(j)
            && (0..a.num_reals()).all(|c| a.real(i, c) == b.real(j, c))
            && (0..a.num_ints()).all(|c| a.int(i, c) == b.int(j, c))
    }

    fn check_single_particle_moves<T: ParticleTile>(template: T) {
        let src = filled(template.new_like(), 5);
        let mut dst = filled(template.new_like(), 2);
        dst.push_from(&src, 3);
        dst.push_from(&src, 0);
        assert_eq!(dst.len(), 4);
        assert!(same(&dst, 2, &src, 3) && same(&dst, 3, &src, 0));
        assert!(same(&dst, 0, &src, 0) && same(&dst, 1, &src, 1));
        dst.copy_particle(2, 0);
        assert!(same(&dst, 0, &src, 3) && same(&dst, 1, &src, 1));
    }

    #[test]
    fn push_from_and_copy_particle_move_every_component() {
        check_single_particle_moves(AosTile::<2, 1>::new(1, 1));
        check_single_particle_moves(SoaTile::<4, 1>::new(1, 1));
    }
}

fn real_from(b: &[u8]) -> ParticleReal {
    let mut a = [0u8; RB];
    a.copy_from_slice(b);
    ParticleReal::from_le_bytes(a)
}

/// Gathers `src[idx]` onto the end of `dst`.
fn gather_onto<T: Copy>(dst: &mut [T], n0: usize, src: &[T], idx: &[u32]) {
    for (d, &i) in dst[n0..].iter_mut().zip(idx) {
        *d = src[i as usize];
    }
}

/// Moves `v[idx[k]]` to `v[k]` (`idx` increasing, so `idx[k] >= k`).
fn compact<T: Copy>(v: &mut [T], idx: &[u32]) {
    for (k, &i) in idx.iter().enumerate() {
        v[k] = v[i as usize];
    }
}

/// AMReX's AoS particle tile: [`Particle<NR, NI>`] structs plus run-time real and int
/// components (AMReX's `NumRuntimeRealComps`), kept component by component.
//
// Invariant: `rt.len() == aos.len()` (every run-time vector has one entry per particle).
#[derive(Debug, Default)]
pub struct AosTile<const NR: usize, const NI: usize = 0> {
    aos: ArrayOfStructs<Particle<NR, NI>>,
    rt: StructOfArrays<0, 0>,
}

impl<const NR: usize, const NI: usize> Clone for AosTile<NR, NI> {
    fn clone(&self) -> Self {
        let mut t = self.new_like();
        t.append(self);
        t
    }
}

impl<const NR: usize, const NI: usize> AosTile<NR, NI> {
    /// An empty tile with `nrt_real` and `nrt_int` run-time components.
    #[must_use]
    pub fn new(nrt_real: usize, nrt_int: usize) -> Self {
        let mut rt = StructOfArrays::new();
        for _ in 0..nrt_real {
            let _ = rt.add_real_comp(None);
        }
        for _ in 0..nrt_int {
            let _ = rt.add_int_comp(None);
        }
        Self {
            aos: ArrayOfStructs::new(),
            rt,
        }
    }
    /// The particles.
    #[must_use]
    pub fn particles(&self) -> &[Particle<NR, NI>] {
        self.aos.as_slice()
    }
    /// The particles, mutable.
    pub fn particles_mut(&mut self) -> &mut [Particle<NR, NI>] {
        self.aos.as_mut_slice()
    }
    /// The array of structs (for its DLPack field views).
    #[must_use]
    pub fn array_of_structs(&self) -> &ArrayOfStructs<Particle<NR, NI>> {
        &self.aos
    }
    /// The array of structs, mutable (do not change its length).
    pub fn array_of_structs_mut(&mut self) -> &mut ArrayOfStructs<Particle<NR, NI>> {
        &mut self.aos
    }
    /// The run-time components (their `idcpu` vector is unused and empty-valued).
    #[must_use]
    pub fn runtime(&self) -> &StructOfArrays<0, 0> {
        &self.rt
    }
    /// Run-time real component `c` as a slice.
    pub fn runtime_real_mut(&mut self, c: usize) -> &mut [ParticleReal] {
        self.rt.real_mut(c)
    }
    /// Appends one particle with its run-time component values.
    ///
    /// # Panics
    /// If `rt_reals`/`rt_ints` do not have one value per run-time component.
    #[track_caller]
    pub fn push(&mut self, p: Particle<NR, NI>, rt_reals: &[ParticleReal], rt_ints: &[i32]) {
        self.rt
            .push(0, rt_reals, rt_ints)
            .unwrap_or_else(|e| panic!("AosTile::push: {e}"));
        self.aos.push(p);
    }
}

impl<const NR: usize, const NI: usize> ParticleTile for AosTile<NR, NI> {
    fn new_like(&self) -> Self {
        Self::new(self.rt.num_real_comps(), self.rt.num_int_comps())
    }
    #[inline]
    fn len(&self) -> usize {
        self.aos.len()
    }
    fn num_reals(&self) -> usize {
        NR + self.rt.num_real_comps()
    }
    fn num_ints(&self) -> usize {
        NI + self.rt.num_int_comps()
    }
    #[inline]
    fn pos(&self, i: usize) -> [ParticleReal; SPACEDIM] {
        self.aos[i].pos
    }
    #[inline(always)]
    fn prefetch(&self, i: usize) {
        if let Some(p) = self.aos.as_slice().get(i) {
            prefetch_read(&p.pos);
            // A particle longer than a cache line may have its id on the next one (the
            // test is a constant).
            if size_of::<Particle<NR, NI>>() > 64 {
                prefetch_read(&p.idcpu);
            }
        }
    }
    #[inline]
    fn set_pos(&mut self, i: usize, p: [ParticleReal; SPACEDIM]) {
        self.aos[i].pos = p;
    }
    #[inline]
    fn idcpu(&self, i: usize) -> u64 {
        self.aos[i].idcpu
    }
    #[inline]
    fn set_idcpu(&mut self, i: usize, v: u64) {
        self.aos[i].idcpu = v;
    }
    #[inline]
    fn real(&self, i: usize, c: usize) -> ParticleReal {
        if c < NR {
            self.aos[i].rdata[c]
        } else {
            self.rt.real(c - NR)[i]
        }
    }
    #[inline]
    fn set_real(&mut self, i: usize, c: usize, v: ParticleReal) {
        if c < NR {
            self.aos[i].rdata[c] = v;
        } else {
            self.rt.real_mut(c - NR)[i] = v;
        }
    }
    #[inline]
    fn int(&self, i: usize, c: usize) -> i32 {
        if c < NI {
            self.aos[i].idata[c]
        } else {
            self.rt.int(c - NI)[i]
        }
    }
    #[inline]
    fn set_int(&mut self, i: usize, c: usize, v: i32) {
        if c < NI {
            self.aos[i].idata[c] = v;
        } else {
            self.rt.int_mut(c - NI)[i] = v;
        }
    }
    fn resize(&mut self, n: usize) {
        self.aos.resize(n, Particle::default());
        self.rt
            .resize(n)
            .unwrap_or_else(|e| panic!("AosTile::resize: {e}"));
    }
    fn append_selected(&mut self, src: &Self, idx: &[u32]) {
        let n0 = self.len();
        self.resize(n0 + idx.len());
        gather_onto(self.aos.as_mut_slice(), n0, src.aos.as_slice(), idx);
        for c in 0..self.rt.num_real_comps() {
            gather_onto(self.rt.real_mut(c), n0, &src.rt.real(c)[..], idx);
        }
        for c in 0..self.rt.num_int_comps() {
            gather_onto(self.rt.int_mut(c), n0, &src.rt.int(c)[..], idx);
        }
    }
    fn push_from(&mut self, src: &Self, i: usize) {
        self.aos.push(src.aos[i]);
        let n = self.rt.len();
        self.rt
            .resize(n + 1)
            .unwrap_or_else(|e| panic!("AosTile::push_from: {e}"));
        for c in 0..self.rt.num_real_comps() {
            self.rt.real_mut(c)[n] = src.rt.real(c)[i];
        }
        for c in 0..self.rt.num_int_comps() {
            self.rt.int_mut(c)[n] = src.rt.int(c)[i];
        }
    }
    fn copy_particle(&mut self, from: usize, to: usize) {
        self.aos.as_mut_slice().copy_within(from..=from, to);
        for c in 0..self.rt.num_real_comps() {
            self.rt.real_mut(c).copy_within(from..=from, to);
        }
        for c in 0..self.rt.num_int_comps() {
            self.rt.int_mut(c).copy_within(from..=from, to);
        }
    }
    fn keep_selected(&mut self, idx: &[u32]) {
        compact(self.aos.as_mut_slice(), idx);
        for c in 0..self.rt.num_real_comps() {
            compact(self.rt.real_mut(c), idx);
        }
        for c in 0..self.rt.num_int_comps() {
            compact(self.rt.int_mut(c), idx);
        }
        self.resize(idx.len());
    }
}

/// The pure struct-of-arrays tile of AMReX's `ParticleContainerPureSoA<NR, NI>`: a
/// [`StructOfArrays<NR, NI>`] whose real components `0, 1, 2` are the position (so
/// `NR >= 3`), plus any components added at run time.
#[derive(Debug, Default)]
pub struct SoaTile<const NR: usize, const NI: usize = 0> {
    soa: StructOfArrays<NR, NI>,
}

impl<const NR: usize, const NI: usize> Clone for SoaTile<NR, NI> {
    fn clone(&self) -> Self {
        let mut t = self.new_like();
        t.append(self);
        t
    }
}

impl<const NR: usize, const NI: usize> SoaTile<NR, NI> {
    const HAS_POSITION: () = assert!(NR >= SPACEDIM, "SoaTile<NR, NI>: NR must be >= 3 (x, y, z)");

    /// An empty tile with `nrt_real` and `nrt_int` run-time components.
    #[must_use]
    pub fn new(nrt_real: usize, nrt_int: usize) -> Self {
        let () = Self::HAS_POSITION;
        let mut soa = StructOfArrays::new();
        for _ in 0..nrt_real {
            let _ = soa.add_real_comp(None);
        }
        for _ in 0..nrt_int {
            let _ = soa.add_int_comp(None);
        }
        Self { soa }
    }
    /// The components.
    #[must_use]
    pub fn struct_of_arrays(&self) -> &StructOfArrays<NR, NI> {
        &self.soa
    }
    /// The components, mutable (do not change their length).
    pub fn struct_of_arrays_mut(&mut self) -> &mut StructOfArrays<NR, NI> {
        &mut self.soa
    }
    /// Appends one particle: `reals` holds every real component, position first.
    ///
    /// # Panics
    /// If the component counts do not match.
    #[track_caller]
    pub fn push(&mut self, idcpu: u64, reals: &[ParticleReal], ints: &[i32]) {
        self.soa
            .push(idcpu, reals, ints)
            .unwrap_or_else(|e| panic!("SoaTile::push: {e}"));
    }
}

impl<const NR: usize, const NI: usize> ParticleTile for SoaTile<NR, NI> {
    fn new_like(&self) -> Self {
        let mut t = Self::new(
            self.soa.num_runtime_real_comps(),
            self.soa.num_runtime_int_comps(),
        );
        for c in 0..self.soa.num_real_comps() {
            if let Some(n) = self.soa.real_name(c) {
                let _ = t.soa.set_real_name(c, n);
            }
        }
        for c in 0..self.soa.num_int_comps() {
            if let Some(n) = self.soa.int_name(c) {
                let _ = t.soa.set_int_name(c, n);
            }
        }
        t
    }
    #[inline]
    fn len(&self) -> usize {
        self.soa.len()
    }
    fn num_reals(&self) -> usize {
        self.soa.num_real_comps() - SPACEDIM
    }
    fn num_ints(&self) -> usize {
        self.soa.num_int_comps()
    }
    #[inline(always)]
    fn prefetch(&self, i: usize) {
        // One hint per 8 particles (a 64-byte line holds 8 doubles or 16 floats), not
        // one per particle.
        if i.is_multiple_of(8) {
            for d in 0..SPACEDIM {
                prefetch_index(&self.soa.real(d)[..], i);
            }
            prefetch_index(&self.soa.idcpu()[..], i);
        }
    }
    #[inline]
    fn pos(&self, i: usize) -> [ParticleReal; SPACEDIM] {
        [
            self.soa.real(0)[i],
            self.soa.real(1)[i],
            self.soa.real(2)[i],
        ]
    }
    #[inline]
    fn set_pos(&mut self, i: usize, p: [ParticleReal; SPACEDIM]) {
        for (d, x) in p.into_iter().enumerate() {
            self.soa.real_mut(d)[i] = x;
        }
    }
    #[inline]
    fn idcpu(&self, i: usize) -> u64 {
        self.soa.idcpu()[i]
    }
    #[inline]
    fn set_idcpu(&mut self, i: usize, v: u64) {
        self.soa.idcpu_mut()[i] = v;
    }
    #[inline]
    fn real(&self, i: usize, c: usize) -> ParticleReal {
        self.soa.real(c + SPACEDIM)[i]
    }
    #[inline]
    fn set_real(&mut self, i: usize, c: usize, v: ParticleReal) {
        self.soa.real_mut(c + SPACEDIM)[i] = v;
    }
    #[inline]
    fn int(&self, i: usize, c: usize) -> i32 {
        self.soa.int(c)[i]
    }
    #[inline]
    fn set_int(&mut self, i: usize, c: usize, v: i32) {
        self.soa.int_mut(c)[i] = v;
    }
    fn resize(&mut self, n: usize) {
        self.soa
            .resize(n)
            .unwrap_or_else(|e| panic!("SoaTile::resize: {e}"));
    }
    fn append_selected(&mut self, src: &Self, idx: &[u32]) {
        let n0 = self.len();
        self.resize(n0 + idx.len());
        gather_onto(self.soa.idcpu_mut(), n0, &src.soa.idcpu()[..], idx);
        for c in 0..self.soa.num_real_comps() {
            gather_onto(self.soa.real_mut(c), n0, &src.soa.real(c)[..], idx);
        }
        for c in 0..self.soa.num_int_comps() {
            gather_onto(self.soa.int_mut(c), n0, &src.soa.int(c)[..], idx);
        }
    }
    fn push_from(&mut self, src: &Self, i: usize) {
        let n = self.len();
        self.resize(n + 1);
        self.soa.idcpu_mut()[n] = src.soa.idcpu()[i];
        for c in 0..self.soa.num_real_comps() {
            self.soa.real_mut(c)[n] = src.soa.real(c)[i];
        }
        for c in 0..self.soa.num_int_comps() {
            self.soa.int_mut(c)[n] = src.soa.int(c)[i];
        }
    }
    fn copy_particle(&mut self, from: usize, to: usize) {
        self.soa.idcpu_mut().copy_within(from..=from, to);
        for c in 0..self.soa.num_real_comps() {
            self.soa.real_mut(c).copy_within(from..=from, to);
        }
        for c in 0..self.soa.num_int_comps() {
            self.soa.int_mut(c).copy_within(from..=from, to);
        }
    }
    fn keep_selected(&mut self, idx: &[u32]) {
        compact(self.soa.idcpu_mut(), idx);
        for c in 0..self.soa.num_real_comps() {
            compact(self.soa.real_mut(c), idx);
        }
        for c in 0..self.soa.num_int_comps() {
            compact(self.soa.int_mut(c), idx);
        }
        self.resize(idx.len());
    }
}

/// `true` if the id/cpu word marks a valid particle (AMReX: `id() > 0`... or `>= 0`;
/// the sign bit, as [`idcpu::is_valid`]).
#[inline]
pub(crate) fn is_valid(w: u64) -> bool {
    idcpu::is_valid(w)
}

/// A particle real as `f64` (a no-op unless `ParticleReal` is `f32`, with
/// `amrex-aos/single-precision-particles`).
#[inline]
#[allow(
    clippy::useless_conversion,
    reason = "ParticleReal is f32 with amrex-aos/single-precision-particles"
)]
pub(crate) fn r2f(x: ParticleReal) -> f64 {
    f64::from(x)
}

/// An `f64` as a particle real: itself, or rounded to the nearest `f32` where
/// `ParticleReal` is `f32` (`amrex-aos/single-precision-particles`), the precision the
/// particles are stored in. (`allow`, not `expect`: the lint fires in that build only.)
#[inline(always)]
#[allow(
    clippy::cast_possible_truncation,
    reason = "rounding to ParticleReal is the conversion wanted; f32 with \
              amrex-aos/single-precision-particles, and no cast at all without it"
)]
pub(crate) fn f2r(x: f64) -> ParticleReal {
    x as ParticleReal
}
