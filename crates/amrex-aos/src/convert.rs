//! Conversions between [`ArrayOfStructs`] of [`Particle`]s and [`StructOfArrays`], in the
//! component order AMReX uses for pure-SoA particles: the positions are real components
//! `0 .. SPACEDIM`, then the particle's real components, its integer components, and the
//! `idcpu` word.
//!
//! Both directions copy every particle once, in one pass over the array of structs (each
//! particle is read or written whole while the component vectors are streamed), and
//! reuse the destination's allocation: converting to a container that already holds as
//! many particles writes nothing but the particles. Both are bandwidth bound;
//! `benches/benches/particles.rs` measures them against a STREAM triad.

use crate::aos::ArrayOfStructs;
use crate::error::{CompKind, ParticleError};
use crate::particle::{Particle, ParticleReal, SPACEDIM};
use crate::soa::StructOfArrays;
use amrex_arena::HostAccessible;

/// The array slices `v[i][..n]` of the first `N` vectors of `v`, so that indexing them
/// with `i < n` needs no bounds check.
fn first_n<'a, T, const N: usize>(v: &mut [&'a mut [T]], n: usize) -> [&'a mut [T]; N] {
    let mut it = v.iter_mut();
    core::array::from_fn(|_| match it.next() {
        Some(s) => &mut core::mem::take(s)[..n],
        None => unreachable!("fewer than {N} components"),
    })
}

/// `Err` unless a structure of arrays has exactly `reals` real and `ints` integer
/// components (none added at run time: a `Particle` has no room for them).
fn check_counts(
    real_comps: usize,
    int_comps: usize,
    reals: usize,
    ints: usize,
) -> Result<(), ParticleError> {
    if real_comps != reals {
        return Err(ParticleError::ComponentCountMismatch {
            kind: CompKind::Real,
            expected: reals,
            found: real_comps,
        });
    }
    if int_comps != ints {
        return Err(ParticleError::ComponentCountMismatch {
            kind: CompKind::Int,
            expected: ints,
            found: int_comps,
        });
    }
    Ok(())
}

impl<const NR: usize, const NI: usize, A: HostAccessible> StructOfArrays<NR, NI, A> {
    /// Replaces the particles with those of `aos` (neighbours included, with the same
    /// neighbour count): `pos` becomes real components `0 .. SPACEDIM`, `rdata` the
    /// components after them, `idata` the integer components. `NR` must be
    /// `SPACEDIM + PR` and `NI` must be `PI` (checked at compile time).
    ///
    /// ```
    /// use amrex_aos::{ArrayOfStructs, Particle, StructOfArrays};
    /// let aos: ArrayOfStructs<Particle<2, 1>> = (0..4)
    ///     .map(|i| Particle::with_fields([f64::from(i), 0.5, 0.25], [1.0, -2.0], i.into(), 0, [i]))
    ///     .collect();
    /// let mut soa = StructOfArrays::<5, 1>::new();
    /// soa.copy_from_aos(&aos)?;
    /// assert_eq!((soa.real(0)[3], soa.real(3)[3], soa.int(0)[3]), (3.0, 1.0, 3));
    /// let mut back = ArrayOfStructs::<Particle<2, 1>>::new();
    /// back.copy_from_soa(&soa)?;
    /// assert_eq!(back.as_slice(), aos.as_slice());
    /// # Ok::<(), amrex_aos::ParticleError>(())
    /// ```
    ///
    /// # Errors
    /// [`ParticleError::ComponentCountMismatch`] when components were added at run time
    /// (nothing changes then), or the arena's allocation failure.
    pub fn copy_from_aos<const PR: usize, const PI: usize, B: HostAccessible>(
        &mut self,
        aos: &ArrayOfStructs<Particle<PR, PI>, B>,
    ) -> Result<(), ParticleError> {
        const {
            assert!(
                NR == SPACEDIM + PR,
                "StructOfArrays<NR, _>: NR must be SPACEDIM + PR"
            );
            assert!(NI == PI, "StructOfArrays<_, NI>: NI must be PI");
        }
        check_counts(
            self.num_real_comps(),
            self.num_int_comps(),
            SPACEDIM + PR,
            PI,
        )?;
        let src = aos.as_slice();
        let n = src.len();
        self.resize_with_neighbors(n, aos.num_neighbors())?;
        let mut c = self.components_mut();
        let ids = &mut c.idcpu[..n];
        let mut reals: [&mut [ParticleReal]; NR] = first_n(&mut c.reals, n);
        let mut ints: [&mut [i32]; NI] = first_n(&mut c.ints, n);
        let (pos, rdata) = reals.split_at_mut(SPACEDIM);
        for (i, p) in src.iter().enumerate() {
            ids[i] = p.idcpu;
            for (comp, &v) in pos.iter_mut().zip(&p.pos) {
                comp[i] = v;
            }
            for (comp, &v) in rdata.iter_mut().zip(&p.rdata) {
                comp[i] = v;
            }
            for (comp, &v) in ints.iter_mut().zip(&p.idata) {
                comp[i] = v;
            }
        }
        Ok(())
    }
}

impl<const PR: usize, const PI: usize, A: HostAccessible> ArrayOfStructs<Particle<PR, PI>, A> {
    /// Replaces the particles with those of `soa` (neighbours included, with the same
    /// neighbour count), the inverse of
    /// [`StructOfArrays::copy_from_aos`]: real components `0 .. SPACEDIM` become `pos`,
    /// the next `PR` become `rdata`, the integer components `idata`. `NR` must be
    /// `SPACEDIM + PR` and `NI` must be `PI` (checked at compile time).
    ///
    /// # Errors
    /// [`ParticleError::ComponentCountMismatch`] when `soa` has components added at run
    /// time (nothing changes then), or the arena's allocation failure.
    pub fn copy_from_soa<const NR: usize, const NI: usize, B: HostAccessible>(
        &mut self,
        soa: &StructOfArrays<NR, NI, B>,
    ) -> Result<(), ParticleError> {
        const {
            assert!(
                NR == SPACEDIM + PR,
                "StructOfArrays<NR, _>: NR must be SPACEDIM + PR"
            );
            assert!(NI == PI, "StructOfArrays<_, NI>: NI must be PI");
        }
        check_counts(soa.num_real_comps(), soa.num_int_comps(), SPACEDIM + PR, PI)?;
        let n = soa.len();
        self.try_resize_with_neighbors(n, soa.num_neighbors())?;
        let ids = &soa.idcpu().as_slice()[..n];
        let reals: [&[ParticleReal]; NR] = core::array::from_fn(|r| &soa.real(r).as_slice()[..n]);
        let ints: [&[i32]; NI] = core::array::from_fn(|c| &soa.int(c).as_slice()[..n]);
        for (i, p) in self.as_mut_slice().iter_mut().enumerate() {
            *p = Particle {
                pos: core::array::from_fn(|d| reals[d][i]),
                rdata: core::array::from_fn(|r| reals[SPACEDIM + r][i]),
                idcpu: ids[i],
                idata: core::array::from_fn(|c| ints[c][i]),
            };
        }
        Ok(())
    }
}
