//! Arithmetic operators: elementwise `+ - += -=`, unary `-`, scalar `*` on both sides,
//! matrix products with the inner dimension checked by the type system.

use core::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use num_traits::{One, Zero};

use crate::matrix::SmallMatrix;
use crate::order::Order;

impl<T, const R: usize, const C: usize, O: Order, const S: usize> Add for SmallMatrix<T, R, C, O, S>
where
    T: Copy + Add<Output = T>,
{
    type Output = Self;

    #[inline]
    fn add(mut self, rhs: Self) -> Self {
        for (a, &b) in self.iter_mut().zip(rhs.iter()) {
            *a = *a + b;
        }
        self
    }
}

impl<T, const R: usize, const C: usize, O: Order, const S: usize> Sub for SmallMatrix<T, R, C, O, S>
where
    T: Copy + Sub<Output = T>,
{
    type Output = Self;

    #[inline]
    fn sub(mut self, rhs: Self) -> Self {
        for (a, &b) in self.iter_mut().zip(rhs.iter()) {
            *a = *a - b;
        }
        self
    }
}

impl<T, const R: usize, const C: usize, O: Order, const S: usize> AddAssign
    for SmallMatrix<T, R, C, O, S>
where
    T: Copy + AddAssign,
{
    #[inline]
    fn add_assign(&mut self, rhs: Self) {
        for (a, &b) in self.iter_mut().zip(rhs.iter()) {
            *a += b;
        }
    }
}

impl<T, const R: usize, const C: usize, O: Order, const S: usize> SubAssign
    for SmallMatrix<T, R, C, O, S>
where
    T: Copy + SubAssign,
{
    #[inline]
    fn sub_assign(&mut self, rhs: Self) {
        for (a, &b) in self.iter_mut().zip(rhs.iter()) {
            *a -= b;
        }
    }
}

impl<T, const R: usize, const C: usize, O: Order, const S: usize> Neg for SmallMatrix<T, R, C, O, S>
where
    T: Neg<Output = T>,
{
    type Output = Self;

    #[inline]
    fn neg(self) -> Self {
        self.map(|x| -x)
    }
}

/// `matrix * scalar`.
impl<T, const R: usize, const C: usize, O: Order, const S: usize> Mul<T>
    for SmallMatrix<T, R, C, O, S>
where
    T: Copy + Mul<Output = T>,
{
    type Output = Self;

    #[inline]
    fn mul(self, rhs: T) -> Self {
        self.map(|x| x * rhs)
    }
}

/// `matrix *= scalar`.
impl<T, const R: usize, const C: usize, O: Order, const S: usize> MulAssign<T>
    for SmallMatrix<T, R, C, O, S>
where
    T: Copy + MulAssign,
{
    #[inline]
    fn mul_assign(&mut self, rhs: T) {
        for a in self.iter_mut() {
            *a *= rhs;
        }
    }
}

/// `scalar * matrix` for the primitive numeric types (a blanket impl over `T` is not
/// allowed by the orphan rules).
macro_rules! scalar_left_mul {
    ($($t:ty),* $(,)?) => {$(
        impl<const R: usize, const C: usize, O: Order, const S: usize>
            Mul<SmallMatrix<$t, R, C, O, S>> for $t
        {
            type Output = SmallMatrix<$t, R, C, O, S>;

            #[inline]
            fn mul(self, rhs: SmallMatrix<$t, R, C, O, S>) -> Self::Output {
                rhs.map(|x| self * x)
            }
        }
    )*};
}

scalar_left_mul!(
    f32, f64, i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize
);

/// Matrix product `(R × K) * (K × C) → (R × C)`; a mismatched inner dimension does
/// not type-check. Matrix × vector is the case `C == 1`.
impl<T, const R: usize, const K: usize, const C: usize, O: Order, const S: usize>
    Mul<SmallMatrix<T, K, C, O, S>> for SmallMatrix<T, R, K, O, S>
where
    T: Copy + Zero + Mul<Output = T>,
{
    type Output = SmallMatrix<T, R, C, O, S>;

    #[inline]
    fn mul(self, rhs: SmallMatrix<T, K, C, O, S>) -> Self::Output {
        SmallMatrix::from_fn(|i, j| {
            let (i0, j0) = (i - S, j - S);
            (0..K).fold(T::zero(), |acc, k| acc + *self.at(i0, k) * *rhs.at(k, j0))
        })
    }
}

/// `a *= b` for square matrices.
impl<T, const N: usize, O: Order, const S: usize> MulAssign for SmallMatrix<T, N, N, O, S>
where
    T: Copy + Zero + Mul<Output = T>,
{
    #[inline]
    fn mul_assign(&mut self, rhs: Self) {
        *self = *self * rhs;
    }
}

impl<T, const R: usize, const C: usize, O: Order, const S: usize> Zero
    for SmallMatrix<T, R, C, O, S>
where
    T: Copy + Zero,
{
    #[inline]
    fn zero() -> Self {
        Self::zero()
    }

    #[inline]
    fn is_zero(&self) -> bool {
        self.iter().all(T::is_zero)
    }
}

impl<T, const N: usize, O: Order, const S: usize> One for SmallMatrix<T, N, N, O, S>
where
    T: Copy + Zero + One,
{
    #[inline]
    fn one() -> Self {
        Self::identity()
    }
}
