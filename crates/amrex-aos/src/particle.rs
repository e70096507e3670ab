//! [`Particle`]: AMReX's particle struct with C layout.

use crate::idcpu;

/// Floating-point type of particle positions and real components: `f64`, or `f32` with
/// the `single-precision-particles` feature (AMReX `ParticleReal`).
#[cfg(not(feature = "single-precision-particles"))]
pub type ParticleReal = f64;
/// Floating-point type of particle positions and real components: `f64`, or `f32` with
/// the `single-precision-particles` feature (AMReX `ParticleReal`).
#[cfg(feature = "single-precision-particles")]
pub type ParticleReal = f32;

/// Number of position coordinates (AMReX `AMREX_SPACEDIM`; always 3 here, lower-dimensional
/// problems leave the unused coordinates alone).
pub const SPACEDIM: usize = 3;

/// One particle: `SPACEDIM` positions and `NR` real components, the packed id/cpu word,
/// and `NI` integer components, in that order with C layout — the byte layout of AMReX's
/// `Particle<NR, NI>` (built with `AMREX_SPACEDIM = 3`).
///
/// In double precision `Particle<2, 1>` is 56 bytes: `pos` at 0..24, `rdata` at 24..40,
/// `idcpu` at 40, `idata` at 48, 4 bytes of tail padding.
///
/// The default particle is all zeros: id 0, cpu 0 and *invalid* (the valid bit is clear),
/// as in AMReX.
///
/// ```
/// use amrex_aos::{Particle, idcpu};
/// let mut p = Particle::<2, 1>::new([0.5, 1.5, 2.5]);
/// p.set_id_cpu(42, 3);
/// assert_eq!((p.id(), p.cpu(), p.is_valid()), (42, 3, true));
/// p.make_invalid();
/// assert_eq!((p.id(), p.is_valid()), (-42, false));
/// assert_eq!(p.idcpu, idcpu::make_id_cpu(-42, 3));
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Particle<const NR: usize, const NI: usize = 0> {
    /// Position.
    pub pos: [ParticleReal; SPACEDIM],
    /// Real components.
    pub rdata: [ParticleReal; NR],
    /// Packed id and cpu; see [`idcpu`](crate::idcpu).
    pub idcpu: u64,
    /// Integer components.
    pub idata: [i32; NI],
}

impl<const NR: usize, const NI: usize> Default for Particle<NR, NI> {
    fn default() -> Self {
        Self {
            pos: [0.0; SPACEDIM],
            rdata: [0.0; NR],
            idcpu: 0,
            idata: [0; NI],
        }
    }
}

// SAFETY: every field is an array of `f32`/`f64`/`u64`/`i32`, for which all-zero bytes
// are a valid value (0.0 and 0); padding may hold anything.
unsafe impl<const NR: usize, const NI: usize> bytemuck::Zeroable for Particle<NR, NI> {}
// SAFETY: `Copy + 'static`, and every bit pattern of every field is a valid float or
// integer; padding bytes are allowed for `AnyBitPattern` (it is not `NoUninit`).
unsafe impl<const NR: usize, const NI: usize> bytemuck::AnyBitPattern for Particle<NR, NI> {}

impl<const NR: usize, const NI: usize> Particle<NR, NI> {
    /// Number of real components (AMReX `NReal`).
    pub const NREAL: usize = NR;
    /// Number of integer components (AMReX `NInt`).
    pub const NINT: usize = NI;

    /// A particle at `pos` with zero components and the all-zero (invalid) id/cpu.
    pub const fn new(pos: [ParticleReal; SPACEDIM]) -> Self {
        Self {
            pos,
            rdata: [0.0; NR],
            idcpu: 0,
            idata: [0; NI],
        }
    }

    /// A particle with every field given.
    ///
    /// # Panics
    /// If `id` or `cpu` do not fit (see [`idcpu::make_id_cpu`]).
    #[track_caller]
    pub const fn with_fields(
        pos: [ParticleReal; SPACEDIM],
        rdata: [ParticleReal; NR],
        id: i64,
        cpu: i32,
        idata: [i32; NI],
    ) -> Self {
        Self {
            pos,
            rdata,
            idcpu: idcpu::make_id_cpu(id, cpu),
            idata,
        }
    }

    /// The signed id.
    #[inline]
    pub const fn id(&self) -> i64 {
        idcpu::id(self.idcpu)
    }

    /// The cpu the particle was born on.
    #[inline]
    pub const fn cpu(&self) -> i32 {
        idcpu::cpu(self.idcpu)
    }

    /// Sets the id, keeping the cpu.
    ///
    /// # Panics
    /// If `|id| > 2^39 - 1`.
    #[inline]
    #[track_caller]
    pub const fn set_id(&mut self, id: i64) {
        self.idcpu = idcpu::with_id(self.idcpu, id);
    }

    /// Sets the cpu, keeping the id.
    ///
    /// # Panics
    /// If `cpu` is outside `0..=2^24 - 1`.
    #[inline]
    #[track_caller]
    pub const fn set_cpu(&mut self, cpu: i32) {
        self.idcpu = idcpu::with_cpu(self.idcpu, cpu);
    }

    /// Sets both (AMReX `SetParticleIDandCPU`).
    ///
    /// # Panics
    /// If either does not fit.
    #[inline]
    #[track_caller]
    pub const fn set_id_cpu(&mut self, id: i64, cpu: i32) {
        self.idcpu = idcpu::make_id_cpu(id, cpu);
    }

    /// Sets both, or says which does not fit (and changes nothing).
    #[inline]
    pub const fn try_set_id_cpu(&mut self, id: i64, cpu: i32) -> Result<(), idcpu::IdCpuError> {
        match idcpu::try_make_id_cpu(id, cpu) {
            Ok(w) => {
                self.idcpu = w;
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Whether the valid bit is set.
    #[inline]
    pub const fn is_valid(&self) -> bool {
        idcpu::is_valid(self.idcpu)
    }

    /// Clears the valid bit (AMReX `make_invalid`): the id reads back negated.
    #[inline]
    pub const fn make_invalid(&mut self) {
        self.idcpu = idcpu::make_invalid(self.idcpu);
    }

    /// Sets the valid bit (AMReX `make_valid`).
    #[inline]
    pub const fn make_valid(&mut self) {
        self.idcpu = idcpu::make_valid(self.idcpu);
    }
}

// Layout checks (AMReX `Particle<NR, NI>` with AMREX_SPACEDIM = 3). `ParticleReal` is 8 or 4
// bytes, `u64` has 8-byte alignment on every 64-bit target, so these hold there; on 32-bit
// targets `u64` may be 4-aligned and only the relative order is checked.
const R: usize = core::mem::size_of::<ParticleReal>();
const _: () = {
    use core::mem::{offset_of, size_of};
    type P21 = Particle<2, 1>;
    assert!(offset_of!(P21, pos) == 0);
    assert!(offset_of!(P21, rdata) == 3 * R);
    assert!(offset_of!(P21, idcpu) >= 5 * R);
    assert!(offset_of!(P21, idata) == offset_of!(P21, idcpu) + 8);
    type P00 = Particle<0, 0>;
    assert!(offset_of!(P00, idcpu) >= 3 * R);
    assert!(size_of::<P00>() >= 3 * R + 8);
};
#[cfg(all(
    target_pointer_width = "64",
    not(feature = "single-precision-particles")
))]
const _: () = {
    use core::mem::{align_of, offset_of, size_of};
    type P21 = Particle<2, 1>;
    assert!(size_of::<P21>() == 56);
    assert!(align_of::<P21>() == 8);
    assert!(offset_of!(P21, idcpu) == 40);
    assert!(offset_of!(P21, idata) == 48);
    assert!(size_of::<Particle<0, 0>>() == 32);
    assert!(size_of::<Particle<2, 0>>() == 48);
    assert!(size_of::<Particle<1, 2>>() == 48);
};
#[cfg(all(target_pointer_width = "64", feature = "single-precision-particles"))]
const _: () = {
    use core::mem::{offset_of, size_of};
    type P21 = Particle<2, 1>;
    // pos 0..12, rdata 12..20, 4 bytes padding, idcpu 24..32, idata 32..36, padding to 40.
    assert!(size_of::<P21>() == 40);
    assert!(offset_of!(P21, idcpu) == 24);
    assert!(offset_of!(P21, idata) == 32);
    assert!(size_of::<Particle<0, 0>>() == 24);
};

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::{offset_of, size_of};

    #[test]
    fn default_is_zero_and_invalid() {
        let p = Particle::<2, 1>::default();
        assert_eq!(p.idcpu, 0);
        assert!(!p.is_valid());
        assert_eq!((p.id(), p.cpu()), (0, 0));
        assert_eq!(p, Particle::new([0.0; 3]));
    }

    #[test]
    fn bytes_in_place() {
        let p = Particle::<2, 1>::with_fields([1.0, 2.0, 3.0], [4.0, 5.0], 77, 8, [-9]);
        let base = core::ptr::from_ref(&p).cast::<u8>();
        let off = offset_of!(Particle<2, 1>, idcpu);
        // SAFETY: `off` is the offset of the `u64` field inside `p`.
        let word = unsafe { base.wrapping_add(off).cast::<u64>().read_unaligned() };
        assert_eq!(word, idcpu::make_id_cpu(77, 8));
        let off = offset_of!(Particle<2, 1>, rdata) + size_of::<ParticleReal>();
        // SAFETY: the second real component lies at `off` inside `p`.
        let r1 = unsafe {
            base.wrapping_add(off)
                .cast::<ParticleReal>()
                .read_unaligned()
        };
        assert_eq!(r1, 5.0);
    }

    #[test]
    fn setters() {
        let mut p = Particle::<0, 0>::default();
        p.set_id(idcpu::MAX_ID);
        p.set_cpu(idcpu::MAX_CPU);
        assert_eq!((p.id(), p.cpu()), (idcpu::MAX_ID, idcpu::MAX_CPU));
        p.set_id(-idcpu::MAX_ID);
        assert_eq!((p.id(), p.cpu()), (-idcpu::MAX_ID, idcpu::MAX_CPU));
        assert!(!p.is_valid());
        p.make_valid();
        assert_eq!(p.id(), idcpu::MAX_ID);
        assert_eq!(
            p.try_set_id_cpu(idcpu::MAX_ID + 1, 0),
            Err(idcpu::IdCpuError::IdOutOfRange(idcpu::MAX_ID + 1))
        );
        assert_eq!(p.id(), idcpu::MAX_ID, "a refused set changes nothing");
        assert_eq!(Particle::<3, 2>::NREAL + Particle::<3, 2>::NINT, 5);
    }
}
