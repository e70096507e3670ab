//! AMReX's packed particle id and cpu word (`idcpu`), bit for bit.
//!
//! One `u64` holds three things (AMReX `ParticleIDWrapper` / `ParticleCPUWrapper`):
//!
//! | bits | meaning |
//! |---|---|
//! | 63 | sign / valid bit: set when the id is `>= 0` (a valid particle) |
//! | 24..=62 | `|id|`, 39 bits |
//! | 0..=23 | the cpu (MPI rank) the particle was born on, 24 bits |
//!
//! Reading the id gives `+|id|` when bit 63 is set and `-|id|` otherwise, so
//! [`make_invalid`] (clear bit 63) turns id `7` into `-7`, and a zero word reads as id 0,
//! cpu 0, invalid — the value a default-constructed AMReX particle has.
//!
//! Setting an id or cpu outside the representable range is a caller error; AMReX only
//! asserts in debug builds and lets the bits spill. Here the plain setters panic with a
//! message and the `try_` versions return [`IdCpuError`].

use core::fmt;

/// Bits that hold `|id|`.
pub const ID_BITS: u32 = 39;
/// Bits that hold the cpu.
pub const CPU_BITS: u32 = 24;
/// Largest id magnitude: `2^39 - 1` (ids range over `-MAX_ID..=MAX_ID`).
pub const MAX_ID: i64 = (1 << ID_BITS) - 1;
/// Largest cpu: `2^24 - 1`.
pub const MAX_CPU: i32 = (1 << CPU_BITS) - 1;
/// The sign / valid bit (bit 63).
pub const VALID_BIT: u64 = 1 << 63;
/// Mask of the cpu bits (0..=23).
pub const CPU_MASK: u64 = (1 << CPU_BITS) - 1;
/// Mask of the id-magnitude bits once shifted down by [`CPU_BITS`].
pub const ID_MASK: u64 = (1 << ID_BITS) - 1;

/// AMReX's reserved particle ids (`amrex::LongParticleIds`).
pub mod special {
    /// `GhostParticleID = 2^39 - 1`.
    pub const GHOST_PARTICLE_ID: i64 = super::MAX_ID;
    /// `VirtualParticleID = GhostParticleID - 1`.
    pub const VIRTUAL_PARTICLE_ID: i64 = GHOST_PARTICLE_ID - 1;
    /// `LastParticleID = GhostParticleID - 2`: ordinary ids must stay below it.
    pub const LAST_PARTICLE_ID: i64 = GHOST_PARTICLE_ID - 2;
    /// `DoSplitParticleID = GhostParticleID - 3`.
    pub const DO_SPLIT_PARTICLE_ID: i64 = GHOST_PARTICLE_ID - 3;
    /// `NoSplitParticleID = GhostParticleID - 4`.
    pub const NO_SPLIT_PARTICLE_ID: i64 = GHOST_PARTICLE_ID - 4;
}

/// An id or cpu that does not fit the packed word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdCpuError {
    /// `|id| > 2^39 - 1`.
    IdOutOfRange(i64),
    /// `cpu < 0` or `cpu > 2^24 - 1`.
    CpuOutOfRange(i32),
}

impl fmt::Display for IdCpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::IdOutOfRange(id) => write!(
                f,
                "particle id {id} does not fit in 39 bits (expected -{MAX_ID}..={MAX_ID})"
            ),
            Self::CpuOutOfRange(cpu) => write!(
                f,
                "particle cpu {cpu} does not fit in 24 bits (expected 0..={MAX_CPU})"
            ),
        }
    }
}

impl core::error::Error for IdCpuError {}

/// The signed id stored in `idcpu` (AMReX `ParticleIDWrapper::operator Long`).
#[inline]
pub const fn id(idcpu: u64) -> i64 {
    let val = ((idcpu >> CPU_BITS) & ID_MASK) as i64;
    if idcpu >> 63 != 0 { val } else { -val }
}

/// The cpu stored in `idcpu` (AMReX `ParticleCPUWrapper::operator int`).
#[inline]
pub const fn cpu(idcpu: u64) -> i32 {
    (idcpu & CPU_MASK) as i32
}

/// Whether the valid (sign) bit is set.
#[inline]
pub const fn is_valid(idcpu: u64) -> bool {
    idcpu >> 63 != 0
}

/// Clears the valid bit (the id reads back negated; the cpu is kept).
#[inline]
pub const fn make_invalid(idcpu: u64) -> u64 {
    idcpu & !VALID_BIT
}

/// Sets the valid bit (the id reads back as its magnitude; the cpu is kept).
#[inline]
pub const fn make_valid(idcpu: u64) -> u64 {
    idcpu | VALID_BIT
}

/// `idcpu` with its sign and id bits replaced by `id` (cpu kept), or an error when
/// `|id| > 2^39 - 1`.
#[inline]
pub const fn try_with_id(idcpu: u64, id: i64) -> Result<u64, IdCpuError> {
    if id > MAX_ID || id < -MAX_ID {
        return Err(IdCpuError::IdOutOfRange(id));
    }
    let sign = (id >= 0) as u64;
    let val = id.unsigned_abs();
    Ok((idcpu & CPU_MASK) | (sign << 63) | (val << CPU_BITS))
}

/// `idcpu` with its cpu bits replaced by `cpu` (sign and id kept), or an error when `cpu`
/// is negative or above `2^24 - 1`.
#[inline]
pub const fn try_with_cpu(idcpu: u64, cpu: i32) -> Result<u64, IdCpuError> {
    if cpu < 0 || cpu > MAX_CPU {
        return Err(IdCpuError::CpuOutOfRange(cpu));
    }
    Ok((idcpu & !CPU_MASK) | cpu as u64)
}

/// `idcpu` with the id replaced.
///
/// # Panics
/// If `|id| > 2^39 - 1`.
#[inline]
#[track_caller]
pub const fn with_id(idcpu: u64, id: i64) -> u64 {
    match try_with_id(idcpu, id) {
        Ok(v) => v,
        Err(_) => panic!("particle id does not fit in 39 bits"),
    }
}

/// `idcpu` with the cpu replaced.
///
/// # Panics
/// If `cpu` is negative or above `2^24 - 1`.
#[inline]
#[track_caller]
pub const fn with_cpu(idcpu: u64, cpu: i32) -> u64 {
    match try_with_cpu(idcpu, cpu) {
        Ok(v) => v,
        Err(_) => panic!("particle cpu does not fit in 24 bits"),
    }
}

/// Packs an id and a cpu (AMReX `SetParticleIDandCPU`), or says which does not fit.
#[inline]
pub const fn try_make_id_cpu(id: i64, cpu: i32) -> Result<u64, IdCpuError> {
    match try_with_id(0, id) {
        Ok(v) => try_with_cpu(v, cpu),
        Err(e) => Err(e),
    }
}

/// Packs an id and a cpu (AMReX `SetParticleIDandCPU`).
///
/// # Panics
/// If `|id| > 2^39 - 1`, or `cpu` is outside `0..=2^24 - 1`.
#[inline]
#[track_caller]
pub const fn make_id_cpu(id: i64, cpu: i32) -> u64 {
    with_cpu(with_id(0, id), cpu)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_of_the_word() {
        let w = make_id_cpu(1, 0);
        assert_eq!(w, VALID_BIT | (1 << 24));
        let w = make_id_cpu(0, 1);
        assert_eq!(w, VALID_BIT | 1);
        let w = make_id_cpu(-1, 0);
        assert_eq!(w, 1 << 24);
        assert_eq!(make_id_cpu(MAX_ID, MAX_CPU), u64::MAX);
        assert_eq!(make_id_cpu(-MAX_ID, MAX_CPU), u64::MAX >> 1);
    }

    #[test]
    fn round_trip_corners() {
        for id in [
            0,
            1,
            -1,
            42,
            -42,
            MAX_ID,
            -MAX_ID,
            MAX_ID - 1,
            special::LAST_PARTICLE_ID,
        ] {
            for cpu in [0, 1, 12345, MAX_CPU - 1, MAX_CPU] {
                let w = make_id_cpu(id, cpu);
                assert_eq!(self::id(w), id, "id {id} cpu {cpu}");
                assert_eq!(self::cpu(w), cpu, "id {id} cpu {cpu}");
                assert_eq!(is_valid(w), id >= 0);
            }
        }
    }

    #[test]
    fn setters_keep_the_other_half() {
        let w = make_id_cpu(123, 456);
        assert_eq!(cpu(with_id(w, -99)), 456);
        assert_eq!(id(with_id(w, -99)), -99);
        assert_eq!(id(with_cpu(w, MAX_CPU)), 123);
        assert_eq!(cpu(with_cpu(w, MAX_CPU)), MAX_CPU);
        // A large old id is fully cleared by a smaller new one.
        let big = make_id_cpu(MAX_ID, 3);
        assert_eq!(id(with_id(big, 1)), 1);
    }

    #[test]
    fn invalid_negates_the_id() {
        let w = make_id_cpu(7, 9);
        let inv = make_invalid(w);
        assert!(!is_valid(inv));
        assert_eq!(id(inv), -7);
        assert_eq!(cpu(inv), 9);
        assert_eq!(make_valid(inv), w);
        // id 0 stays 0 either way; a zero word is invalid.
        assert_eq!(id(make_invalid(make_id_cpu(0, 0))), 0);
        assert!(!is_valid(0));
        assert_eq!(id(0), 0);
    }

    #[test]
    fn out_of_range() {
        assert_eq!(
            try_make_id_cpu(MAX_ID + 1, 0),
            Err(IdCpuError::IdOutOfRange(MAX_ID + 1))
        );
        assert_eq!(
            try_make_id_cpu(-MAX_ID - 1, 0),
            Err(IdCpuError::IdOutOfRange(-MAX_ID - 1))
        );
        assert_eq!(
            try_make_id_cpu(i64::MIN, 0),
            Err(IdCpuError::IdOutOfRange(i64::MIN))
        );
        assert_eq!(
            try_make_id_cpu(0, MAX_CPU + 1),
            Err(IdCpuError::CpuOutOfRange(MAX_CPU + 1))
        );
        assert_eq!(try_make_id_cpu(0, -1), Err(IdCpuError::CpuOutOfRange(-1)));
    }

    #[test]
    #[should_panic(expected = "39 bits")]
    fn id_too_large_panics() {
        let _ = make_id_cpu(MAX_ID + 1, 0);
    }

    #[test]
    #[should_panic(expected = "24 bits")]
    fn cpu_negative_panics() {
        let _ = make_id_cpu(1, -1);
    }

    #[test]
    fn special_ids() {
        assert_eq!(special::GHOST_PARTICLE_ID, 549_755_813_887);
        assert_eq!(special::VIRTUAL_PARTICLE_ID, 549_755_813_886);
        assert_eq!(special::LAST_PARTICLE_ID, 549_755_813_885);
        assert_eq!(special::DO_SPLIT_PARTICLE_ID, 549_755_813_884);
        assert_eq!(special::NO_SPLIT_PARTICLE_ID, 549_755_813_883);
        for s in [
            special::GHOST_PARTICLE_ID,
            special::VIRTUAL_PARTICLE_ID,
            special::DO_SPLIT_PARTICLE_ID,
            special::NO_SPLIT_PARTICLE_ID,
        ] {
            assert_eq!(id(make_id_cpu(s, 5)), s);
        }
    }
}
