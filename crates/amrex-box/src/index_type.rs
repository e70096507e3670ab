//! `IndexType`: cell or node centring per direction.

use core::fmt;

use crate::int_vect::{IntVect, SPACEDIM};

/// Per-direction centring of a box's indices, AMReX's `IndexType`.
///
/// A bitmask: bit `d` set means the box indexes **nodes** in direction `d`, clear means
/// **cells**. The default is all-cell.
///
/// ```
/// use amrex_box::{IndexType, IntVect};
/// let xface = IndexType::new(true, false, false);
/// assert!(xface.node_centered_dir(0) && xface.cell_centered_dir(1));
/// assert_eq!(xface.ix_type(), IntVect::new(1, 0, 0));
/// assert_eq!(IndexType::NODE.ix_type(), IntVect::UNIT);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct IndexType(u8);

impl IndexType {
    /// Cell-centred in every direction.
    pub const CELL: Self = Self(0);
    /// Node-centred in every direction.
    pub const NODE: Self = Self(0b111);

    /// Builds an index type from one flag per direction (`true` = node).
    #[inline]
    #[must_use]
    pub const fn new(node_x: bool, node_y: bool, node_z: bool) -> Self {
        Self(node_x as u8 | (node_y as u8) << 1 | (node_z as u8) << 2)
    }

    /// Builds an index type from AMReX's integer convention: a component of `iv` that
    /// is non-zero means node in that direction.
    #[inline]
    #[must_use]
    pub const fn from_int_vect(iv: IntVect) -> Self {
        let a = iv.to_array();
        Self::new(a[0] != 0, a[1] != 0, a[2] != 0)
    }

    /// Builds an index type from its bitmask; bits above the third are ignored.
    #[inline]
    #[must_use]
    pub const fn from_bits(bits: u8) -> Self {
        Self(bits & 0b111)
    }

    /// The bitmask (bit `d` set = node in direction `d`).
    #[inline]
    #[must_use]
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// `1` for node and `0` for cell in each direction (AMReX's `ixType()`).
    #[inline]
    #[must_use]
    pub const fn ix_type(self) -> IntVect {
        IntVect::new(
            (self.0 & 1) as i32,
            ((self.0 >> 1) & 1) as i32,
            ((self.0 >> 2) & 1) as i32,
        )
    }

    /// `true` if node-centred in direction `dir`.
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub const fn node_centered_dir(self, dir: usize) -> bool {
        assert!(dir < SPACEDIM, "IndexType: direction must be 0, 1 or 2");
        self.0 & (1 << dir) != 0
    }

    /// `true` if cell-centred in direction `dir`.
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub const fn cell_centered_dir(self, dir: usize) -> bool {
        !self.node_centered_dir(dir)
    }

    /// `true` if node-centred in every direction.
    #[inline]
    #[must_use]
    pub const fn node_centered(self) -> bool {
        self.0 == Self::NODE.0
    }

    /// `true` if cell-centred in every direction.
    #[inline]
    #[must_use]
    pub const fn cell_centered(self) -> bool {
        self.0 == 0
    }

    /// `true` if node-centred in at least one direction (AMReX's `any()`).
    #[inline]
    #[must_use]
    pub const fn any_node(self) -> bool {
        self.0 != 0
    }

    /// Returns a copy that is node-centred in direction `dir`.
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub const fn with_node(self, dir: usize) -> Self {
        assert!(dir < SPACEDIM, "IndexType: direction must be 0, 1 or 2");
        Self(self.0 | 1 << dir)
    }

    /// Returns a copy that is cell-centred in direction `dir`.
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub const fn with_cell(self, dir: usize) -> Self {
        assert!(dir < SPACEDIM, "IndexType: direction must be 0, 1 or 2");
        Self(self.0 & !(1 << dir))
    }
}

impl fmt::Display for IndexType {
    /// AMReX's notation: `(C,C,N)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = |d: usize| if self.node_centered_dir(d) { 'N' } else { 'C' };
        write!(f, "({},{},{})", c(0), c(1), c(2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_and_directions() {
        let t = IndexType::new(false, true, true);
        assert_eq!(t.bits(), 0b110);
        assert!(t.cell_centered_dir(0));
        assert!(t.node_centered_dir(1) && t.node_centered_dir(2));
        assert!(!t.cell_centered() && !t.node_centered() && t.any_node());
        assert_eq!(t.ix_type(), IntVect::new(0, 1, 1));
        assert_eq!(IndexType::from_int_vect(t.ix_type()), t);
        assert_eq!(t.with_node(0), IndexType::NODE);
        assert_eq!(t.with_cell(1).with_cell(2), IndexType::CELL);
        assert_eq!(IndexType::from_bits(0xff), IndexType::NODE);
        assert_eq!(IndexType::default(), IndexType::CELL);
        assert!(IndexType::CELL.cell_centered() && !IndexType::CELL.any_node());
    }

    #[test]
    #[should_panic(expected = "direction must be")]
    fn bad_direction() {
        let _ = IndexType::CELL.node_centered_dir(3);
    }
}
