//! `approx` comparisons, elementwise (feature `approx`).

use approx::{AbsDiffEq, RelativeEq, UlpsEq};

use crate::matrix::SmallMatrix;
use crate::order::Order;

impl<T, const R: usize, const C: usize, O: Order, const S: usize> AbsDiffEq
    for SmallMatrix<T, R, C, O, S>
where
    T: AbsDiffEq,
    T::Epsilon: Clone,
{
    type Epsilon = T::Epsilon;

    fn default_epsilon() -> T::Epsilon {
        T::default_epsilon()
    }

    fn abs_diff_eq(&self, other: &Self, epsilon: T::Epsilon) -> bool {
        self.iter()
            .zip(other.iter())
            .all(|(a, b)| a.abs_diff_eq(b, epsilon.clone()))
    }
}

impl<T, const R: usize, const C: usize, O: Order, const S: usize> RelativeEq
    for SmallMatrix<T, R, C, O, S>
where
    T: RelativeEq,
    T::Epsilon: Clone,
{
    fn default_max_relative() -> T::Epsilon {
        T::default_max_relative()
    }

    fn relative_eq(&self, other: &Self, epsilon: T::Epsilon, max_relative: T::Epsilon) -> bool {
        self.iter()
            .zip(other.iter())
            .all(|(a, b)| a.relative_eq(b, epsilon.clone(), max_relative.clone()))
    }
}

impl<T, const R: usize, const C: usize, O: Order, const S: usize> UlpsEq
    for SmallMatrix<T, R, C, O, S>
where
    T: UlpsEq,
    T::Epsilon: Clone,
{
    fn default_max_ulps() -> u32 {
        T::default_max_ulps()
    }

    fn ulps_eq(&self, other: &Self, epsilon: T::Epsilon, max_ulps: u32) -> bool {
        self.iter()
            .zip(other.iter())
            .all(|(a, b)| a.ulps_eq(b, epsilon.clone(), max_ulps))
    }
}

#[cfg(test)]
mod tests {
    use approx::{assert_abs_diff_eq, assert_relative_eq, assert_ulps_eq, relative_ne};

    use crate::{RowMajor, SmallMatrix};

    #[test]
    fn approx_comparisons() {
        let a = SmallMatrix::<f64, 2, 2, RowMajor, 1>::from_rows([[0.1 + 0.2, 1.0], [2.0, 3.0]]);
        let b = SmallMatrix::<f64, 2, 2, RowMajor, 1>::from_rows([[0.3, 1.0], [2.0, 3.0]]);
        assert_ne!(a, b);
        assert_abs_diff_eq!(a, b, epsilon = 1e-15);
        assert_relative_eq!(a, b);
        assert_ulps_eq!(a, b);
        let mut c = b;
        c[(2, 2)] = 3.001;
        assert!(relative_ne!(a, c));
        assert!(!approx::abs_diff_eq!(a, c, epsilon = 1e-6));
    }
}
