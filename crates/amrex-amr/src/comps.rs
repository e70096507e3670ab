//! [`Comps`]: which components an operation reads and which it writes.

use core::ops::Range;

/// Which components an operation between two pieces of data reads and writes: `count`
/// components from `src` in the data read go to `count` components from `dst` in the
/// data written (AMReX's `scomp`, `dcomp`, `ncomp`). Every operation of this crate that
/// moves components between two operands takes one, in place of AMReX's three integers:
///
/// | operation | read (`src`) | written (`dst`) |
/// |---|---|---|
/// | averages, `sum_fine_to_coarse` | fine data | coarse data |
/// | interpolaters, `interp_from_coarse_level` | coarse data | fine data |
/// | FillPatch | the source states | the destination |
/// | `FluxRegister::crse_*`, `fine_*` | the fluxes | the register |
/// | `FluxRegister::reflux*` | the register | the state |
///
/// A range `a..b` is the same components on both sides.
///
/// ```
/// use amrex_amr::Comps;
/// assert_eq!(Comps::from(1..3), Comps::new(1, 1, 2));
/// assert_eq!(Comps::first(2), Comps::new(0, 0, 2));
/// assert_eq!(Comps::new(0, 4, 2).dst_range(), 4..6);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Comps {
    /// The first component read.
    pub src: usize,
    /// The first component written.
    pub dst: usize,
    /// How many components.
    pub count: usize,
}

impl Comps {
    /// `count` components from `src` to `count` components from `dst`.
    #[must_use]
    pub const fn new(src: usize, dst: usize, count: usize) -> Self {
        Self { src, dst, count }
    }

    /// The first `count` components of both.
    #[must_use]
    pub const fn first(count: usize) -> Self {
        Self::new(0, 0, count)
    }

    /// The components read, `src..src + count` (saturating).
    #[must_use]
    pub const fn src_range(&self) -> Range<usize> {
        self.src..self.src.saturating_add(self.count)
    }

    /// The components written, `dst..dst + count` (saturating).
    #[must_use]
    pub const fn dst_range(&self) -> Range<usize> {
        self.dst..self.dst.saturating_add(self.count)
    }
}

impl From<Range<usize>> for Comps {
    /// The same components on both sides (an empty or reversed range is no component).
    fn from(r: Range<usize>) -> Self {
        Self::new(r.start, r.start, r.end.saturating_sub(r.start))
    }
}
