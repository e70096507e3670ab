//! The element types a `FabArray` can hold.

use core::fmt::Debug;
use core::ops::{Add, Div, Mul, Neg, Sub};

use amrex_arena::kernels::{Binary, CopyOrder, KernelElement, Kernels, Reduce, Region, Unary};
use amrex_arena::{ArenaError, ErrorKind};
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
    /// `v` (a kernel's `f64` result: a reduction of values of this type) as this type.
    fn from_kernel_value(v: f64) -> Self;

    /// `v` (a kernel's `f64` sum) as the accumulator type.
    fn acc_from_kernel_value(v: f64) -> Self::Acc;

    /// `dst = op(dst)` by the arena's [`Kernels`] (the device path of the FabArray
    /// operations). Only `f32` and `f64` have kernels; other types refuse.
    ///
    /// # Safety
    /// As [`Kernels::apply`].
    ///
    /// # Errors
    /// The kernel's failure, or [`ErrorKind::Unsupported`] for a type without kernels.
    unsafe fn kernel_apply<K: Kernels>(
        k: &K,
        dst: Region,
        op: Unary<Self>,
    ) -> Result<(), ArenaError> {
        let _ = (k, dst, op);
        Err(no_kernels())
    }

    /// `dst = op(dst, src)` by the arena's [`Kernels`].
    ///
    /// # Safety
    /// As [`Kernels::combine`].
    ///
    /// # Errors
    /// As [`kernel_apply`](Self::kernel_apply).
    unsafe fn kernel_combine<K: Kernels>(
        k: &K,
        dst: Region,
        src: Region,
        op: Binary<Self>,
    ) -> Result<(), ArenaError> {
        let _ = (k, dst, src, op);
        Err(no_kernels())
    }

    /// Reduces `src` by the arena's [`Kernels`].
    ///
    /// # Safety
    /// As [`Kernels::reduce`].
    ///
    /// # Errors
    /// As [`kernel_apply`](Self::kernel_apply).
    unsafe fn kernel_reduce<K: Kernels>(k: &K, src: Region, op: Reduce) -> Result<f64, ArenaError> {
        let _ = (k, src, op);
        Err(no_kernels())
    }

    /// `sum(x * y)` by the arena's [`Kernels`].
    ///
    /// # Safety
    /// As [`Kernels::dot`].
    ///
    /// # Errors
    /// As [`kernel_apply`](Self::kernel_apply).
    unsafe fn kernel_dot<K: Kernels>(k: &K, x: Region, y: Region) -> Result<f64, ArenaError> {
        let _ = (k, x, y);
        Err(no_kernels())
    }

    /// Copies region pairs by the arena's [`Kernels`].
    ///
    /// # Safety
    /// As [`Kernels::copy_regions`].
    ///
    /// # Errors
    /// As [`kernel_apply`](Self::kernel_apply).
    unsafe fn kernel_copy_regions<K: Kernels>(
        k: &K,
        pairs: &[(Region, Region)],
        order: CopyOrder,
    ) -> Result<(), ArenaError> {
        let _ = (k, pairs, order);
        Err(no_kernels())
    }

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
            fn from_kernel_value(v: f64) -> Self {
                <$t as KernelElement>::from_f64(v)
            }
            fn acc_from_kernel_value(v: f64) -> f64 {
                v
            }
            unsafe fn kernel_apply<K: Kernels>(
                k: &K,
                dst: Region,
                op: Unary<Self>,
            ) -> Result<(), ArenaError> {
                // SAFETY: the caller's obligations, forwarded.
                unsafe { k.apply(dst, op) }
            }
            unsafe fn kernel_combine<K: Kernels>(
                k: &K,
                dst: Region,
                src: Region,
                op: Binary<Self>,
            ) -> Result<(), ArenaError> {
                // SAFETY: the caller's obligations, forwarded.
                unsafe { k.combine(dst, src, op) }
            }
            unsafe fn kernel_reduce<K: Kernels>(
                k: &K,
                src: Region,
                op: Reduce,
            ) -> Result<f64, ArenaError> {
                // SAFETY: the caller's obligations, forwarded.
                unsafe { k.reduce::<Self>(src, op) }
            }
            unsafe fn kernel_dot<K: Kernels>(
                k: &K,
                x: Region,
                y: Region,
            ) -> Result<f64, ArenaError> {
                // SAFETY: the caller's obligations, forwarded.
                unsafe { k.dot::<Self>(x, y) }
            }
            unsafe fn kernel_copy_regions<K: Kernels>(
                k: &K,
                pairs: &[(Region, Region)],
                order: CopyOrder,
            ) -> Result<(), ArenaError> {
                // SAFETY: the caller's obligations, forwarded.
                unsafe { k.copy_regions::<Self>(pairs, order) }
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
            #[expect(
                clippy::cast_possible_truncation,
                reason = "never reached: the integers keep the default kernel_reduce and \
                          kernel_dot, which refuse with no_kernels, so no kernel value of \
                          theirs exists"
            )]
            fn from_kernel_value(v: f64) -> Self {
                v as Self
            }
            #[expect(clippy::cast_possible_truncation, reason = "as from_kernel_value")]
            fn acc_from_kernel_value(v: f64) -> i64 {
                v as i64
            }
        }
    };
}
int!(i32);
int!(i64);

/// The refusal of kernel work on an element type the kernels are not built for.
fn no_kernels() -> ArenaError {
    ArenaError::new(ErrorKind::Unsupported(
        "device kernels exist for f32 and f64 only: copy integer FabArrays to host memory",
    ))
}
