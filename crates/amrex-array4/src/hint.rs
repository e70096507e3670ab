//! Cache hints for the hot loops of the workspace: the stencil sweeps here, the
//! reductions of `amrex-basefab`, FillBoundary's row copies in `amrex-multifab`.
//!
//! A prefetch asks the CPU to start loading a cache line that a loop will read soon, so
//! that the wait for memory overlaps the work on the lines before it. It is only a hint:
//! it never faults, whatever the address (the addresses here are computed with wrapping
//! arithmetic and may point past an allocation), and it changes no value the program
//! can see, so results are the same with or without it. On targets other than x86-64,
//! and under Miri, the functions do nothing.
//!
//! Why by hand: the hardware prefetchers follow a few long streams well, but not one
//! stream read fast (a reduction), nor the many short rows of a stencil tile or a
//! ghost-cell face. Measured on the benchmarks of `benches/` (`docs/multifab.md`).

/// The cache-line size prefetches step by (64 bytes on every x86-64 CPU).
pub const LINE: usize = 64;

/// Prefetches the cache line holding `p` into every cache level.
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: a prefetch is only a hint: it never faults, whatever the address, and
    // reads or writes no memory as far as the program can observe.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>());
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = p;
}

/// Prefetches every cache line of the `bytes` bytes from `p`.
#[inline(always)]
pub fn prefetch_span(p: *const u8, bytes: usize) {
    if bytes == 0 {
        return;
    }
    let mut off = 0;
    while off < bytes {
        prefetch(p.wrapping_add(off));
        off += LINE;
    }
    prefetch(p.wrapping_add(bytes - 1));
}
