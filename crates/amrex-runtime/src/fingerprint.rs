//! The fingerprint the ranks compare before a collective operation
//! ([`Communicator::agree`](crate::Communicator::agree)): FNV-1a over bytes. BoxArrays
//! and DistributionMappings hash themselves with it once when they are made; operations
//! add their arguments. Every crate makes its agreements with this one hash.

use amrex_box::IntVect;

/// FNV-1a: the fingerprint the ranks compare before a collective operation
/// ([`Communicator::agree`](crate::Communicator::agree)). The same words in the same
/// order give the same value on every rank and every platform.
///
/// ```
/// use amrex_box::IntVect;
/// use amrex_runtime::Fingerprint;
/// let mut a = Fingerprint::new();
/// a.str("average_down").iv(IntVect::splat(2)).word(3);
/// let mut b = Fingerprint::new();
/// b.str("average_down").iv(IntVect::splat(4)).word(3);
/// assert_ne!(a.value(), b.value());
/// ```
#[derive(Clone, Debug)]
pub struct Fingerprint(u64);

impl Default for Fingerprint {
    fn default() -> Self {
        Self::new()
    }
}

impl Fingerprint {
    /// The empty fingerprint.
    #[must_use]
    pub const fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    /// The hash so far.
    #[must_use]
    pub const fn value(&self) -> u64 {
        self.0
    }

    /// Adds bytes.
    pub fn bytes(&mut self, bytes: &[u8]) -> &mut Self {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        self
    }

    /// Adds a word (its little-endian bytes).
    pub fn word(&mut self, w: u64) -> &mut Self {
        self.bytes(&w.to_le_bytes())
    }

    /// Adds a string, its length first (so that `"ab", "c"` and `"a", "bc"` differ).
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.usize(s.len()).bytes(s.as_bytes())
    }

    /// Adds a count or an index (as 64 bits on every target).
    pub fn usize(&mut self, n: usize) -> &mut Self {
        self.word(n as u64)
    }

    /// Adds a float by its bits (so `-0.0` and `0.0`, and NaNs, are told apart).
    pub fn f64(&mut self, x: f64) -> &mut Self {
        self.word(x.to_bits())
    }

    /// Adds the three components of `v`.
    pub fn iv(&mut self, v: IntVect) -> &mut Self {
        for d in 0..3 {
            self.word(u64::from(v[d].cast_unsigned()));
        }
        self
    }

    /// Adds what `f` adds (for hashers that live with the types they hash).
    pub fn with(&mut self, f: impl FnOnce(&mut Self)) -> &mut Self {
        f(self);
        self
    }
}
