//! `Periodicity`: which directions wrap around, and by how much.

use alloc::vec::Vec;

use amrex_box::{IndexBox, IntVect};

/// Periods of the problem domain, AMReX's `Periodicity`: `period[d] > 0` means direction
/// `d` is periodic with that period (the number of cells of the domain in `d`), `0`
/// means not periodic.
///
/// ```
/// use amrex_box::{IndexBox, IntVect};
/// use amrex_multifab::Periodicity;
/// let domain = IndexBox::new(IntVect::ZERO, IntVect::new(15, 7, 3));
/// let p = Periodicity::new(domain, [true, false, true]);
/// assert_eq!(p.period(), IntVect::new(16, 0, 4));
/// assert_eq!(p.shifts(IntVect::splat(1)).len(), 9);
/// assert_eq!(Periodicity::non_periodic().shifts(IntVect::splat(1)), [IntVect::ZERO]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Periodicity {
    period: IntVect,
}

impl Periodicity {
    /// No direction is periodic.
    #[must_use]
    pub const fn non_periodic() -> Self {
        Self {
            period: IntVect::ZERO,
        }
    }

    /// Periodic in the flagged directions, with the cell-centred length of `domain`
    /// as period (a nodal domain is converted to cells first).
    #[must_use]
    pub fn new(domain: IndexBox, periodic: [bool; 3]) -> Self {
        let len = domain.enclosed_cells().length();
        let mut period = IntVect::ZERO;
        for d in 0..3 {
            if periodic[d] {
                period[d] = len[d];
            }
        }
        Self { period }
    }

    /// Periodic in every direction over `domain`.
    #[must_use]
    pub fn all(domain: IndexBox) -> Self {
        Self::new(domain, [true; 3])
    }

    /// From explicit periods (`0` = not periodic).
    ///
    /// # Panics
    /// If a period is negative.
    #[must_use]
    #[track_caller]
    pub fn from_period(period: IntVect) -> Self {
        assert!(
            period.all_ge(IntVect::ZERO),
            "Periodicity: period {period} is negative"
        );
        Self { period }
    }

    /// The periods (`0` in non-periodic directions).
    #[must_use]
    pub const fn period(&self) -> IntVect {
        self.period
    }

    /// `true` if direction `d` is periodic.
    #[must_use]
    pub fn is_periodic(&self, d: usize) -> bool {
        self.period[d] > 0
    }

    /// `true` if any direction is periodic.
    #[must_use]
    pub fn is_any_periodic(&self) -> bool {
        (0..3).any(|d| self.is_periodic(d))
    }

    /// Every periodic image shift that can matter for ghost width `ng`, including zero,
    /// with `x` slowest and `z` fastest (AMReX's `shiftIntVect`). One image on each
    /// side per periodic direction, more if `ng` exceeds the period.
    #[must_use]
    pub fn shifts(&self, ng: IntVect) -> Vec<IntVect> {
        let m: [i32; 3] = core::array::from_fn(|d| {
            if self.is_periodic(d) {
                1 + ng[d].max(0) / self.period[d]
            } else {
                0
            }
        });
        let mut v = Vec::new();
        for i in -m[0]..=m[0] {
            for j in -m[1]..=m[1] {
                for k in -m[2]..=m[2] {
                    v.push(IntVect::new(i, j, k) * self.period);
                }
            }
        }
        v
    }
}
