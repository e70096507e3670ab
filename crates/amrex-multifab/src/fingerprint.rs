//! The fingerprint the ranks compare before a distributed operation: FNV-1a over 64-bit
//! words. BoxArrays and DistributionMappings hash themselves with it once when they are
//! made; operations add their arguments.

use amrex_basefab::FabError;
use amrex_box::IntVect;
use core::ops::Range;

/// FNV-1a over 64-bit words: the fingerprint the ranks compare before an exchange.
pub(crate) struct Fingerprint(u64);

impl Fingerprint {
    /// The empty fingerprint.
    pub(crate) fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    /// The hash so far.
    pub(crate) fn value(&self) -> u64 {
        self.0
    }

    /// Adds a word.
    pub(crate) fn word(&mut self, w: u64) -> &mut Self {
        for b in w.to_le_bytes() {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        self
    }

    /// Adds the three components of `v`.
    pub(crate) fn iv(&mut self, v: IntVect) -> &mut Self {
        for d in 0..3 {
            self.word(v[d] as u32 as u64);
        }
        self
    }

    /// Adds what `f` adds (for hashers that live with the types they hash).
    pub(crate) fn with(&mut self, f: impl FnOnce(&mut Self)) -> &mut Self {
        f(self);
        self
    }

    /// A component range as resolved, or as asked for when it was refused.
    pub(crate) fn comps(&mut self, c: &Result<Range<usize>, FabError>) -> &mut Self {
        let (s, e) = match c {
            Ok(r) => (r.start, r.end),
            Err(FabError::ComponentsOutside { start, end, .. }) => (*start, *end),
            Err(_) => (usize::MAX, usize::MAX),
        };
        self.word(s as u64).word(e as u64)
    }
}
