//! [`GrowthStrategy`]: how much capacity a vector takes when it must grow, exactly as
//! AMReX computes it (`amrex::VectorGrowthStrategy::GetNewCapacity`).

/// How a [`PodVector`](crate::PodVector) picks its new capacity when it must grow.
///
/// For a vector of capacity `c` that must hold `n > c` elements of `s` bytes:
///
/// | strategy | new capacity | AMReX |
/// |---|---|---|
/// | `Exact` | `n` | `GrowthStrategy::Exact` |
/// | `Geometric` | `max((3c + 1) / 2, 64 / s, n)` (first allocation `max(64 / s, n)`) | `GrowthStrategy::Geometric`, growth factor 1.5 (`push_back`) |
/// | `Poisson` | `n + floor(3 * sqrt(n))` | `GrowthStrategy::Poisson` |
///
/// When `n <= c` the capacity is kept. `Poisson` is computed in integers as
/// `n + isqrt(9 n)`, which equals AMReX's `n + size_t(3 * std::sqrt(double(n)))` for every
/// `n` below 10^14 (beyond that, double rounding in AMReX may differ by one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GrowthStrategy {
    /// Exactly what is needed.
    Exact,
    /// Factor 1.5 with a first allocation of at least 64 bytes: AMReX's `push_back`.
    #[default]
    Geometric,
    /// `n + 3 sqrt(n)`: a few standard deviations of slack for particle counts that
    /// fluctuate like a Poisson process.
    Poisson,
}

impl GrowthStrategy {
    /// The capacity a vector of capacity `old_capacity` takes to hold `new_len` elements of
    /// `elem_size` bytes (a zero `elem_size` counts as 1), or `None` on arithmetic overflow.
    ///
    /// ```
    /// use amrex_podvector::GrowthStrategy;
    /// assert_eq!(GrowthStrategy::Geometric.new_capacity(0, 1, 8), Some(8));
    /// assert_eq!(GrowthStrategy::Geometric.new_capacity(8, 9, 8), Some(12));
    /// assert_eq!(GrowthStrategy::Poisson.new_capacity(0, 100, 8), Some(130));
    /// assert_eq!(GrowthStrategy::Exact.new_capacity(10, 11, 8), Some(11));
    /// assert_eq!(GrowthStrategy::Exact.new_capacity(10, 5, 8), Some(10));
    /// ```
    pub fn new_capacity(
        self,
        old_capacity: usize,
        new_len: usize,
        elem_size: usize,
    ) -> Option<usize> {
        if new_len <= old_capacity {
            return Some(old_capacity);
        }
        match self {
            Self::Exact => Some(new_len),
            Self::Geometric => {
                let min_capacity = (64 / elem_size.max(1)).max(new_len);
                let grown = old_capacity.checked_mul(3)?.checked_add(1)? / 2;
                Some(grown.max(min_capacity))
            }
            Self::Poisson => {
                let slack = (new_len as u128 * 9).isqrt();
                new_len.checked_add(usize::try_from(slack).ok()?)
            }
        }
    }
}

impl core::fmt::Display for GrowthStrategy {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Self::Exact => "exact",
            Self::Geometric => "geometric",
            Self::Poisson => "poisson",
        })
    }
}
