//! `Periodicity`: AMReX's `Periodicity`, which directions wrap around and by how much.

#[cfg(feature = "alloc")]
use alloc::vec::Vec;

use amrex_box::{IndexBox, IntVect, SPACEDIM};

/// Periods of the problem domain, AMReX's `Periodicity`: `period[d] > 0` means direction
/// `d` is periodic with that period (the number of cells of the domain in `d`), `0`
/// means not periodic.
///
/// ```
/// use amrex_box::{IndexBox, IntVect};
/// use amrex_geometry::Periodicity;
/// let domain = IndexBox::new(IntVect::ZERO, IntVect::new(15, 7, 3));
/// let p = Periodicity::new(domain, [true, false, true]);
/// assert_eq!(p.period(), IntVect::new(16, 0, 4));
/// assert_eq!(p.shift_iter(IntVect::splat(1)).count(), 9);
/// assert!(Periodicity::non_periodic().shift_iter(IntVect::splat(1)).eq([IntVect::ZERO]));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Periodicity {
    period: IntVect,
}

impl Periodicity {
    /// No direction is periodic (AMReX's `Periodicity::NonPeriodic()`).
    #[must_use]
    pub const fn non_periodic() -> Self {
        Self {
            period: IntVect::ZERO,
        }
    }

    /// Periodic in the flagged directions, with the cell-centred length of `domain`
    /// as period (a nodal domain is converted to cells first).
    #[must_use]
    #[track_caller]
    pub fn new(domain: IndexBox, periodic: [bool; SPACEDIM]) -> Self {
        let len = domain.enclosed_cells().length();
        let mut period = IntVect::ZERO;
        for d in 0..SPACEDIM {
            if periodic[d] {
                period[d] = len[d];
            }
        }
        Self { period }
    }

    /// Periodic in every direction over `domain`.
    #[must_use]
    #[track_caller]
    pub fn all(domain: IndexBox) -> Self {
        Self::new(domain, [true; SPACEDIM])
    }

    /// From explicit periods (`0` = not periodic), AMReX's `Periodicity(IntVect)`.
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

    /// The periods (`0` in non-periodic directions), AMReX's `intVect()`.
    #[must_use]
    pub const fn period(&self) -> IntVect {
        self.period
    }

    /// `true` if direction `d` is periodic (AMReX's `isPeriodic(d)`).
    ///
    /// # Panics
    /// If `d >= 3`.
    #[must_use]
    #[track_caller]
    pub fn is_periodic(&self, d: usize) -> bool {
        self.period[d] > 0
    }

    /// `true` if any direction is periodic (AMReX's `isAnyPeriodic()`).
    #[must_use]
    pub fn is_any_periodic(&self) -> bool {
        (0..SPACEDIM).any(|d| self.is_periodic(d))
    }

    /// `true` if every direction is periodic (AMReX's `isAllPeriodic()`).
    #[must_use]
    pub fn is_all_periodic(&self) -> bool {
        (0..SPACEDIM).all(|d| self.is_periodic(d))
    }

    /// The cell-centred box of one period, AMReX's `Periodicity::Domain()`: `0 ..
    /// period - 1` in periodic directions and `i32::MIN .. i32::MAX - 1` (the whole index
    /// space, less one so that it can still be made nodal) in the others.
    #[must_use]
    pub fn domain(&self) -> IndexBox {
        let mut lo = IntVect::ZERO;
        let mut hi = IntVect::ZERO;
        for d in 0..SPACEDIM {
            if self.is_periodic(d) {
                hi[d] = self.period[d] - 1;
            } else {
                lo[d] = i32::MIN;
                hi[d] = i32::MAX - 1;
            }
        }
        IndexBox::new(lo, hi)
    }

    /// Every periodic image shift that can matter for ghost width `ng`, including zero,
    /// with `x` slowest and `z` fastest (AMReX's `shiftIntVect(ng)`). One image on each
    /// side per periodic direction, more if `ng` exceeds the period. Needs nothing from
    /// `alloc`; [`shifts`](Self::shifts) collects it.
    ///
    /// # Panics
    /// While iterating, if a shift overflows `i32` (a ghost width near `i32::MAX`).
    #[must_use]
    pub fn shift_iter(&self, ng: IntVect) -> PeriodicShifts {
        let m: [i32; SPACEDIM] = core::array::from_fn(|d| {
            if self.is_periodic(d) {
                1 + ng[d].max(0) / self.period[d]
            } else {
                0
            }
        });
        PeriodicShifts {
            period: self.period,
            m,
            next: Some([-m[0], -m[1], -m[2]]),
        }
    }

    /// [`shift_iter`](Self::shift_iter) collected into a vector.
    ///
    /// ```
    /// use amrex_box::{IndexBox, IntVect};
    /// use amrex_geometry::Periodicity;
    /// let p = Periodicity::new(IndexBox::new(IntVect::ZERO, IntVect::splat(7)), [true, false, false]);
    /// assert_eq!(p.shifts(IntVect::splat(2)), [IntVect::new(-8, 0, 0), IntVect::ZERO, IntVect::new(8, 0, 0)]);
    /// assert_eq!(Periodicity::non_periodic().shifts(IntVect::splat(1)), [IntVect::ZERO]);
    /// ```
    ///
    /// # Panics
    /// If a shift overflows `i32`.
    #[cfg(feature = "alloc")]
    #[must_use]
    #[track_caller]
    pub fn shifts(&self, ng: IntVect) -> Vec<IntVect> {
        self.shift_iter(ng).collect()
    }
}

/// The iterator [`Periodicity::shift_iter`] returns: image shifts `(i, j, k) * period`
/// for `i` in `-m₀ ..= m₀` (slowest), `j` in `-m₁ ..= m₁`, `k` in `-m₂ ..= m₂` (fastest).
#[derive(Clone, Debug)]
pub struct PeriodicShifts {
    period: IntVect,
    m: [i32; SPACEDIM],
    /// The image multipliers of the next shift, `None` when done.
    next: Option<[i32; SPACEDIM]>,
}

impl Iterator for PeriodicShifts {
    type Item = IntVect;

    #[track_caller]
    fn next(&mut self) -> Option<IntVect> {
        let cur = self.next?;
        // Advance with k fastest; when i passes its end, the iterator is done.
        let mut n = cur;
        self.next = None;
        for d in (0..SPACEDIM).rev() {
            if n[d] < self.m[d] {
                n[d] += 1;
                self.next = Some(n);
                break;
            }
            n[d] = -self.m[d];
        }
        Some(IntVect::from(cur) * self.period)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let Some(cur) = self.next else {
            return (0, Some(0));
        };
        // Remaining = total - already visited, in u128 (each side has at most 2³² values).
        let side = |d: usize| 2 * u128::from(self.m[d].unsigned_abs()) + 1;
        let pos = |d: usize| u128::from(cur[d].abs_diff(-self.m[d]));
        let visited = (pos(0) * side(1) + pos(1)) * side(2) + pos(2);
        let left = side(0) * side(1) * side(2) - visited;
        match usize::try_from(left) {
            Ok(n) => (n, Some(n)),
            Err(_) => (usize::MAX, None),
        }
    }
}

impl core::iter::FusedIterator for PeriodicShifts {}

#[cfg(test)]
mod tests {
    use super::*;

    fn domain() -> IndexBox {
        IndexBox::new(IntVect::ZERO, IntVect::new(15, 7, 3))
    }

    #[test]
    fn periods_and_flags() {
        let p = Periodicity::new(domain(), [true, false, true]);
        assert_eq!(p.period(), IntVect::new(16, 0, 4));
        assert!(p.is_periodic(0) && !p.is_periodic(1) && p.is_periodic(2));
        assert!(p.is_any_periodic() && !p.is_all_periodic());
        let all = Periodicity::all(domain());
        assert!(all.is_all_periodic());
        assert_eq!(all.period(), IntVect::new(16, 8, 4));
        let np = Periodicity::non_periodic();
        assert!(!np.is_any_periodic());
        assert_eq!(np, Periodicity::default());
        assert_eq!(
            Periodicity::from_period(IntVect::new(0, 5, 0)).period()[1],
            5
        );
        // A nodal domain's period is its number of cells.
        let nodal = Periodicity::all(domain().surrounding_nodes());
        assert_eq!(nodal, all);
    }

    #[test]
    #[should_panic(expected = "is negative")]
    fn negative_period_panics() {
        let _ = Periodicity::from_period(IntVect::new(0, -1, 0));
    }

    #[test]
    fn shifts_in_amrex_order() {
        let p = Periodicity::new(domain(), [true, false, true]);
        let s: [IntVect; 9] = {
            let mut it = p.shift_iter(IntVect::splat(1));
            core::array::from_fn(|_| it.next().unwrap())
        };
        assert_eq!(
            s,
            [
                IntVect::new(-16, 0, -4),
                IntVect::new(-16, 0, 0),
                IntVect::new(-16, 0, 4),
                IntVect::new(0, 0, -4),
                IntVect::ZERO,
                IntVect::new(0, 0, 4),
                IntVect::new(16, 0, -4),
                IntVect::new(16, 0, 0),
                IntVect::new(16, 0, 4),
            ]
        );
        let mut it = p.shift_iter(IntVect::splat(1));
        assert_eq!(it.size_hint(), (9, Some(9)));
        it.next();
        assert_eq!(it.size_hint(), (8, Some(8)));
        assert_eq!(it.by_ref().count(), 8);
        assert_eq!(it.size_hint(), (0, Some(0)));
        assert_eq!(it.next(), None);
    }

    #[test]
    fn wide_ghosts_reach_further_images() {
        // Period 4 in z: ghost width 9 needs images up to 1 + 9/4 = 3 periods away.
        let p = Periodicity::new(domain(), [false, false, true]);
        let mut it = p.shift_iter(IntVect::new(0, 0, 9));
        assert_eq!(it.size_hint(), (7, Some(7)));
        assert_eq!(it.next(), Some(IntVect::new(0, 0, -12)));
        assert_eq!(it.last(), Some(IntVect::new(0, 0, 12)));
        // Negative ghost widths count as zero.
        assert_eq!(p.shift_iter(IntVect::splat(-5)).count(), 3);
        assert_eq!(
            Periodicity::all(domain()).shift_iter(IntVect::ZERO).count(),
            27
        );
    }

    #[test]
    fn one_period_box() {
        let p = Periodicity::new(domain(), [true, false, true]);
        let d = p.domain();
        assert_eq!(d.lo(), IntVect::new(0, i32::MIN, 0));
        assert_eq!(d.hi(), IntVect::new(15, i32::MAX - 1, 3));
        assert!(d.cell_centered());
        // It can be made nodal without overflow.
        assert_eq!(d.surrounding_nodes().hi()[1], i32::MAX);
    }
}
