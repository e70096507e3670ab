//! `IntVect` and `Dim3`.

use core::fmt;
use core::ops::{Add, AddAssign, Index, IndexMut, Mul, MulAssign, Neg, Sub, SubAssign};

/// Number of spatial directions (AMReX's `AMREX_SPACEDIM`); always 3 here.
pub const SPACEDIM: usize = 3;

/// A plain `(x, y, z)` triple of integers, AMReX's `Dim3`.
///
/// `Array4` bounds (`lbound`, `ubound`, `length`) are reported as `Dim3`, as in AMReX.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Dim3 {
    /// First direction (`i`).
    pub x: i32,
    /// Second direction (`j`).
    pub y: i32,
    /// Third direction (`k`).
    pub z: i32,
}

impl Dim3 {
    /// Builds a `Dim3` from its three components.
    #[inline]
    #[must_use]
    pub const fn new(x: i32, y: i32, z: i32) -> Self {
        Self { x, y, z }
    }

    /// The same triple as an [`IntVect`].
    #[inline]
    #[must_use]
    pub const fn to_int_vect(self) -> IntVect {
        IntVect::new(self.x, self.y, self.z)
    }
}

impl From<IntVect> for Dim3 {
    #[inline]
    fn from(v: IntVect) -> Self {
        v.dim3()
    }
}

impl fmt::Display for Dim3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({},{},{})", self.x, self.y, self.z)
    }
}

/// An integer vector in index space, AMReX's `IntVect`.
///
/// Arithmetic (`+`, `-`, `*`, unary `-`) is component-wise; a scalar on the right is
/// applied to every component. Overflow follows Rust's integer rules (a panic in debug
/// builds).
///
/// `IntVect` deliberately does **not** implement `PartialOrd`: AMReX's `<=` on vectors is
/// component-wise (a partial order), which a derived lexicographic order would silently
/// contradict. Use [`IntVect::all_le`], [`IntVect::all_lt`] and friends, or
/// [`IntVect::lex_cmp`] for a total order (e.g. for sorting).
///
/// ```
/// use amrex_box::IntVect;
/// let a = IntVect::new(1, 2, 3);
/// assert_eq!(a + IntVect::UNIT, IntVect::new(2, 3, 4));
/// assert_eq!(a * 2, IntVect::new(2, 4, 6));
/// assert_eq!(a[2], 3);
/// assert_eq!(a.min(IntVect::splat(2)), IntVect::new(1, 2, 2));
/// assert!(IntVect::ZERO.all_lt(a));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct IntVect([i32; SPACEDIM]);

impl IntVect {
    /// `(0, 0, 0)`.
    pub const ZERO: Self = Self([0; SPACEDIM]);
    /// `(1, 1, 1)`.
    pub const UNIT: Self = Self([1; SPACEDIM]);

    /// Builds a vector from its three components.
    #[inline]
    #[must_use]
    pub const fn new(x: i32, y: i32, z: i32) -> Self {
        Self([x, y, z])
    }

    /// A vector with every component equal to `v`.
    #[inline]
    #[must_use]
    pub const fn splat(v: i32) -> Self {
        Self([v; SPACEDIM])
    }

    /// The unit vector in direction `dir` (AMReX's `BASISV`).
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub const fn basis(dir: usize) -> Self {
        assert!(
            dir < SPACEDIM,
            "IntVect::basis: direction must be 0, 1 or 2"
        );
        let mut v = [0; SPACEDIM];
        v[dir] = 1;
        Self(v)
    }

    /// The components as an array `[x, y, z]`.
    #[inline]
    #[must_use]
    pub const fn to_array(self) -> [i32; SPACEDIM] {
        self.0
    }

    /// First component.
    #[inline]
    #[must_use]
    pub const fn x(self) -> i32 {
        self.0[0]
    }

    /// Second component.
    #[inline]
    #[must_use]
    pub const fn y(self) -> i32 {
        self.0[1]
    }

    /// Third component.
    #[inline]
    #[must_use]
    pub const fn z(self) -> i32 {
        self.0[2]
    }

    /// The vector as a [`Dim3`].
    #[inline]
    #[must_use]
    pub const fn dim3(self) -> Dim3 {
        Dim3::new(self.0[0], self.0[1], self.0[2])
    }

    /// Returns a copy with component `dir` replaced by `v`.
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub const fn with(mut self, dir: usize, v: i32) -> Self {
        self.0[dir] = v;
        self
    }

    /// Applies `f` to every component.
    #[inline]
    #[must_use]
    pub fn map(self, mut f: impl FnMut(i32) -> i32) -> Self {
        Self([f(self.0[0]), f(self.0[1]), f(self.0[2])])
    }

    /// Combines two vectors component by component.
    #[inline]
    #[must_use]
    pub fn zip_map(self, o: Self, mut f: impl FnMut(i32, i32) -> i32) -> Self {
        Self([
            f(self.0[0], o.0[0]),
            f(self.0[1], o.0[1]),
            f(self.0[2], o.0[2]),
        ])
    }

    /// Component-wise minimum.
    #[inline]
    #[must_use]
    pub fn min(self, o: Self) -> Self {
        self.zip_map(o, Ord::min)
    }

    /// Component-wise maximum.
    #[inline]
    #[must_use]
    pub fn max(self, o: Self) -> Self {
        self.zip_map(o, Ord::max)
    }

    /// Smallest component.
    #[inline]
    #[must_use]
    pub fn min_component(self) -> i32 {
        self.0[0].min(self.0[1]).min(self.0[2])
    }

    /// Largest component.
    #[inline]
    #[must_use]
    pub fn max_component(self) -> i32 {
        self.0[0].max(self.0[1]).max(self.0[2])
    }

    /// Sum of the components (as `i64`, which cannot overflow).
    #[inline]
    #[must_use]
    pub fn sum(self) -> i64 {
        i64::from(self.0[0]) + i64::from(self.0[1]) + i64::from(self.0[2])
    }

    /// Product of the components as `i64`, `None` if it does not fit.
    #[inline]
    #[must_use]
    pub fn checked_product(self) -> Option<i64> {
        i64::from(self.0[0])
            .checked_mul(i64::from(self.0[1]))?
            .checked_mul(i64::from(self.0[2]))
    }

    /// `true` if every component of `self` is `<=` the matching one of `o`
    /// (AMReX's `IntVect::operator<=`).
    #[inline]
    #[must_use]
    pub const fn all_le(self, o: Self) -> bool {
        self.0[0] <= o.0[0] && self.0[1] <= o.0[1] && self.0[2] <= o.0[2]
    }

    /// `true` if every component of `self` is `<` the matching one of `o`.
    #[inline]
    #[must_use]
    pub const fn all_lt(self, o: Self) -> bool {
        self.0[0] < o.0[0] && self.0[1] < o.0[1] && self.0[2] < o.0[2]
    }

    /// `true` if every component of `self` is `>=` the matching one of `o`.
    #[inline]
    #[must_use]
    pub const fn all_ge(self, o: Self) -> bool {
        o.all_le(self)
    }

    /// `true` if every component of `self` is `>` the matching one of `o`.
    #[inline]
    #[must_use]
    pub const fn all_gt(self, o: Self) -> bool {
        o.all_lt(self)
    }

    /// Lexicographic comparison with `z` most significant, then `y`, then `x`: the order
    /// in which a box's cells are visited (AMReX's `lexLT` compares `x` first; this
    /// order instead agrees with the Fortran-order linear index).
    #[inline]
    #[must_use]
    pub fn lex_cmp(self, o: Self) -> core::cmp::Ordering {
        self.0[2]
            .cmp(&o.0[2])
            .then(self.0[1].cmp(&o.0[1]))
            .then(self.0[0].cmp(&o.0[0]))
    }

    /// Coarsens by `ratio` with AMReX's rounding: floor division, so `-1` coarsened by
    /// 2 is `-1` (not `0`).
    ///
    /// # Panics
    /// If any component of `ratio` is not positive.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn coarsen(self, ratio: Self) -> Self {
        assert!(
            ratio.all_gt(Self::ZERO),
            "IntVect::coarsen: refinement ratio {ratio} must be positive"
        );
        self.zip_map(ratio, i32::div_euclid)
    }

    /// Refines by `ratio` (component-wise multiplication).
    ///
    /// # Panics
    /// If any component of `ratio` is not positive.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn refine(self, ratio: Self) -> Self {
        assert!(
            ratio.all_gt(Self::ZERO),
            "IntVect::refine: refinement ratio {ratio} must be positive"
        );
        self * ratio
    }
}

impl From<[i32; SPACEDIM]> for IntVect {
    #[inline]
    fn from(v: [i32; SPACEDIM]) -> Self {
        Self(v)
    }
}

impl From<IntVect> for [i32; SPACEDIM] {
    #[inline]
    fn from(v: IntVect) -> Self {
        v.0
    }
}

/// The same value in every direction (AMReX's `IntVect(int)`), so that a ghost width can
/// be written `1` where an `impl Into<IntVect>` is asked for.
impl From<i32> for IntVect {
    #[inline]
    fn from(v: i32) -> Self {
        Self::splat(v)
    }
}

impl From<(i32, i32, i32)> for IntVect {
    #[inline]
    fn from((x, y, z): (i32, i32, i32)) -> Self {
        Self([x, y, z])
    }
}

impl From<Dim3> for IntVect {
    #[inline]
    fn from(d: Dim3) -> Self {
        d.to_int_vect()
    }
}

impl Index<usize> for IntVect {
    type Output = i32;
    #[inline]
    #[track_caller]
    fn index(&self, dir: usize) -> &i32 {
        &self.0[dir]
    }
}

impl IndexMut<usize> for IntVect {
    #[inline]
    #[track_caller]
    fn index_mut(&mut self, dir: usize) -> &mut i32 {
        &mut self.0[dir]
    }
}

/// Component-wise `a op b` that panics, in every build profile, when a component leaves
/// `i32`: a wrapped corner would silently describe another box (and, under a view, other
/// memory), so overflow is never allowed to pass. Paths that take numbers from outside
/// check them first with the index-space rule ([`IndexBox::check_index_space`]) and
/// return an error instead.
///
/// [`IndexBox::check_index_space`]: crate::IndexBox::check_index_space
#[inline]
#[track_caller]
fn checked3(a: [i32; 3], b: [i32; 3], f: fn(i32, i32) -> Option<i32>, op: &str) -> [i32; 3] {
    match (f(a[0], b[0]), f(a[1], b[1]), f(a[2], b[2])) {
        (Some(x), Some(y), Some(z)) => [x, y, z],
        _ => overflow(a, b, op),
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn overflow(a: [i32; 3], b: [i32; 3], op: &str) -> ! {
    panic!("IntVect: {} {op} {} overflows i32", IntVect(a), IntVect(b))
}

macro_rules! binop {
    ($tr:ident, $m:ident, $atr:ident, $am:ident, $checked:ident, $op:literal) => {
        impl $tr for IntVect {
            type Output = IntVect;
            /// Component-wise; panics if a component overflows `i32` (in every build).
            #[inline]
            #[track_caller]
            fn $m(self, o: IntVect) -> IntVect {
                IntVect(checked3(self.0, o.0, i32::$checked, $op))
            }
        }
        impl $tr<i32> for IntVect {
            type Output = IntVect;
            /// With the scalar in every component; panics if a component overflows `i32`.
            #[inline]
            #[track_caller]
            fn $m(self, s: i32) -> IntVect {
                IntVect(checked3(self.0, [s; 3], i32::$checked, $op))
            }
        }
        impl $atr for IntVect {
            #[inline]
            #[track_caller]
            fn $am(&mut self, o: IntVect) {
                *self = $tr::$m(*self, o);
            }
        }
        impl $atr<i32> for IntVect {
            #[inline]
            #[track_caller]
            fn $am(&mut self, s: i32) {
                *self = $tr::$m(*self, s);
            }
        }
    };
}

binop!(Add, add, AddAssign, add_assign, checked_add, "+");
binop!(Sub, sub, SubAssign, sub_assign, checked_sub, "-");
binop!(Mul, mul, MulAssign, mul_assign, checked_mul, "*");

impl Mul<IntVect> for i32 {
    type Output = IntVect;
    #[inline]
    #[track_caller]
    fn mul(self, v: IntVect) -> IntVect {
        v * self
    }
}

impl Neg for IntVect {
    type Output = IntVect;
    /// Component-wise negation; panics for a component equal to `i32::MIN`.
    #[inline]
    #[track_caller]
    fn neg(self) -> IntVect {
        IntVect(checked3([0; 3], self.0, i32::checked_sub, "-"))
    }
}

impl fmt::Display for IntVect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({},{},{})", self.0[0], self.0[1], self.0[2])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic() {
        let a = IntVect::new(1, -2, 3);
        let b = IntVect::new(4, 5, -6);
        assert_eq!(a + b, IntVect::new(5, 3, -3));
        assert_eq!(a - b, IntVect::new(-3, -7, 9));
        assert_eq!(a * b, IntVect::new(4, -10, -18));
        assert_eq!(a * 3, IntVect::new(3, -6, 9));
        assert_eq!(3 * a, a * 3);
        assert_eq!(a + 1, IntVect::new(2, -1, 4));
        assert_eq!(-a, IntVect::new(-1, 2, -3));
        let mut c = a;
        c += b;
        c -= 1;
        c *= 2;
        assert_eq!(c, IntVect::new(8, 4, -8));
        assert_eq!(a.min(b), IntVect::new(1, -2, -6));
        assert_eq!(a.max(b), IntVect::new(4, 5, 3));
        assert_eq!(a.min_component(), -2);
        assert_eq!(a.max_component(), 3);
        assert_eq!(a.checked_product(), Some(-6));
        assert_eq!(a.sum(), 2);
    }

    #[test]
    fn constants_and_access() {
        assert_eq!(IntVect::ZERO, IntVect::splat(0));
        assert_eq!(IntVect::UNIT, IntVect::new(1, 1, 1));
        assert_eq!(IntVect::basis(1), IntVect::new(0, 1, 0));
        let mut v = IntVect::new(7, 8, 9);
        assert_eq!((v[0], v[1], v[2]), (7, 8, 9));
        assert_eq!((v.x(), v.y(), v.z()), (7, 8, 9));
        v[1] = 0;
        assert_eq!(v, IntVect::new(7, 0, 9));
        assert_eq!(v.with(2, 1), IntVect::new(7, 0, 1));
        assert_eq!(v.dim3(), Dim3 { x: 7, y: 0, z: 9 });
        assert_eq!(IntVect::from(v.dim3()), v);
        assert_eq!(IntVect::from([1, 2, 3]).to_array(), [1, 2, 3]);
        assert_eq!(IntVect::from((1, 2, 3)), IntVect::new(1, 2, 3));
    }

    #[test]
    #[should_panic(expected = "index out of bounds")]
    fn index_out_of_range() {
        let v = IntVect::ZERO;
        let _ = v[3];
    }

    #[test]
    fn comparisons() {
        let a = IntVect::new(0, 0, 0);
        let b = IntVect::new(1, 0, 1);
        assert!(a.all_le(b));
        assert!(!a.all_lt(b));
        assert!(b.all_ge(a));
        assert!(!b.all_gt(a));
        assert!(IntVect::UNIT.all_gt(a));
        assert_eq!(
            IntVect::new(5, 0, 0).lex_cmp(IntVect::new(0, 1, 0)),
            core::cmp::Ordering::Less
        );
    }

    #[test]
    fn coarsen_rounds_down() {
        let r = IntVect::splat(2);
        assert_eq!(
            IntVect::new(-1, -2, -3).coarsen(r),
            IntVect::new(-1, -1, -2)
        );
        assert_eq!(IntVect::new(1, 2, 3).coarsen(r), IntVect::new(0, 1, 1));
        assert_eq!(
            IntVect::new(-4, 4, -5).coarsen(IntVect::splat(4)),
            IntVect::new(-1, 1, -2)
        );
        assert_eq!(IntVect::new(-1, 2, 3).refine(r), IntVect::new(-2, 4, 6));
    }

    #[test]
    #[should_panic(expected = "must be positive")]
    fn coarsen_by_zero_panics() {
        let _ = IntVect::UNIT.coarsen(IntVect::ZERO);
    }

    #[test]
    fn display() {
        use core::fmt::Write as _;
        struct Buf([u8; 64], usize);
        impl core::fmt::Write for Buf {
            fn write_str(&mut self, s: &str) -> core::fmt::Result {
                let b = s.as_bytes();
                self.0[self.1..self.1 + b.len()].copy_from_slice(b);
                self.1 += b.len();
                Ok(())
            }
        }
        let mut buf = Buf([0; 64], 0);
        write!(buf, "{}", IntVect::new(1, -2, 3)).unwrap();
        assert_eq!(&buf.0[..buf.1], b"(1,-2,3)");
    }
}
