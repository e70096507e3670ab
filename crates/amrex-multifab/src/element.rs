//! The element types a `FabArray` can hold.

use core::fmt::Debug;
use core::ops::{Add, Div, Mul, Neg, Sub};

use amrex_dlpack_core::DlpackElement;
use bytemuck::AnyBitPattern;

/// A number stored in a `FabArray`: `f64` (`MultiFab`), `f32`, `i32` (`iMultiFab`) or `i64`.
///
/// Sums accumulate in [`Element::Acc`] (`f64` for floats, `i64` for integers, as
/// AMReX's `iMultiFab::sum` returns a `Long`).
pub trait Element:
    DlpackElement
    + AnyBitPattern
    + bytemuck::Pod
    + Default
    + PartialOrd
    + Debug
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// Accumulator for sums and dot products.
    type Acc: bytemuck::Pod + Send + Sync + Default + Debug + PartialEq + Add<Output = Self::Acc>;
    /// `0`.
    const ZERO: Self;
    /// `1`.
    const ONE: Self;
    /// The smallest value (identity of `max`).
    const LOWEST: Self;
    /// The largest value (identity of `min`).
    const HIGHEST: Self;
    /// `|self|`.
    fn abs(self) -> Self;
    /// Converts to the accumulator type.
    fn to_acc(self) -> Self::Acc;
    /// Converts an accumulated value to `f64` (for `norm2`).
    fn acc_to_f64(a: Self::Acc) -> f64;
    /// The larger of two values (`self` if they are unordered).
    #[inline(always)]
    fn max_of(self, o: Self) -> Self {
        if o > self { o } else { self }
    }
    /// The smaller of two values (`self` if they are unordered).
    #[inline(always)]
    fn min_of(self, o: Self) -> Self {
        if o < self { o } else { self }
    }
}

macro_rules! float {
    ($t:ty, $u:ty) => {
        impl Element for $t {
            type Acc = f64;
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const LOWEST: Self = <$t>::MIN;
            const HIGHEST: Self = <$t>::MAX;
            #[inline(always)]
            fn abs(self) -> Self {
                // Clear the sign bit (core has no `abs` for floats without std).
                <$t>::from_bits(self.to_bits() & !(1 << (<$u>::BITS - 1)))
            }
            #[inline(always)]
            fn to_acc(self) -> f64 {
                f64::from(self)
            }
            #[inline(always)]
            fn acc_to_f64(a: f64) -> f64 {
                a
            }
        }
    };
}
float!(f64, u64);
float!(f32, u32);

macro_rules! int {
    ($t:ty) => {
        impl Element for $t {
            type Acc = i64;
            const ZERO: Self = 0;
            const ONE: Self = 1;
            const LOWEST: Self = <$t>::MIN;
            const HIGHEST: Self = <$t>::MAX;
            #[inline(always)]
            fn abs(self) -> Self {
                self.wrapping_abs()
            }
            #[inline(always)]
            fn to_acc(self) -> i64 {
                i64::from(self)
            }
            #[inline(always)]
            fn acc_to_f64(a: i64) -> f64 {
                a as f64
            }
        }
    };
}
int!(i32);
int!(i64);
