//! Runs a hot loop in a copy compiled for the widest vector instructions the CPU has.
//!
//! The workspace builds for the baseline of its target (SSE2 on x86-64), so a loop the
//! compiler vectorises works two `f64` at a time. [`widest`] compiles the loop it is
//! given twice more, with AVX2 and with AVX-512F enabled, and runs the copy the CPU
//! supports (detected at run time, with `std`). Every copy does the same operations in
//! the same order, and Rust never contracts `a * b + c` into a fused multiply-add, so
//! the results are the same bit for bit; only the vector width differs.
//!
//! The stencil sweeps of this crate and the FabArray reductions of `amrex-multifab` run
//! through it. Even a memory-bound loop gains: on a 2-core Xeon VM, from a cold cache,
//! a 256³ sum of squares with a prefetch per line took 10.6 ms as two-wide SSE2 and
//! 8.4 ms as AVX-512 (one core issues the narrow loop's instructions no faster than
//! memory delivers them).
//!
//! The loop comes as a [`Kernel`], whose `run` is always inlined into each copy: a
//! closure would be inlined only if small, and what is not inlined runs with the
//! baseline instructions.

/// A hot loop for [`widest`]: its state in fields, its body in [`run`](Self::run).
///
/// Implement `run` with `#[inline(always)]`, and keep closures out of its hot loop (or
/// small): the body must be inlined into each copy `widest` makes, and the compiler
/// inlines an always-inline method for certain but a closure called from three copies
/// only when it is small.
pub trait Kernel {
    /// What the loop returns.
    type Output;
    /// The loop.
    fn run(self) -> Self::Output;
}

/// Runs `k` in the copy of this function compiled for the widest of AVX-512F, AVX2 and
/// the target's baseline that the CPU supports. Without `std` (no run-time detection),
/// off x86-64, and under Miri, it just runs `k`.
#[inline(always)]
pub fn widest<K: Kernel>(k: K) -> K::Output {
    #[cfg(all(feature = "std", target_arch = "x86_64", not(miri)))]
    {
        if std::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F (just detected), which is all that calling
            // a function compiled with `target_feature(enable = "avx512f")` requires.
            return unsafe { avx512(k) };
        }
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: as above, for AVX2.
            return unsafe { avx2(k) };
        }
    }
    k.run()
}

#[cfg(all(feature = "std", target_arch = "x86_64", not(miri)))]
#[target_feature(enable = "avx512f")]
fn avx512<K: Kernel>(k: K) -> K::Output {
    k.run()
}

#[cfg(all(feature = "std", target_arch = "x86_64", not(miri)))]
#[target_feature(enable = "avx2")]
fn avx2<K: Kernel>(k: K) -> K::Output {
    k.run()
}
