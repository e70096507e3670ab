//! A software prefetch hint: the one place the workspace asks the CPU to start loading a
//! cache line before it is read.
//!
//! Loops that read one record per iteration and do tens of instructions of work on it
//! (particle deposition, gather, `redistribute`'s scan) keep only a few cache misses in
//! flight: the reorder buffer fills with the work of a handful of records. On some
//! machines the hardware prefetcher does not run far enough ahead of such a stream, and
//! the loop then waits on memory latency, at a fraction of the bandwidth. A prefetch
//! instruction retires at once, so a hint a few kilobytes ahead keeps the stream moving.
//!
//! Written here rather than taken from a crate: it is one intrinsic of `core::arch`
//! (`_mm_prefetch`, the instruction `prefetcht0`), an `unsafe fn` that this crate,
//! already checked by Miri, wraps once with its proof. Other targets get no hint:
//! stable Rust has no prefetch intrinsic for them (AArch64's is unstable).

/// Hints that `*r` will be read soon. No effect on the program's results; a no-op on
/// targets other than x86-64. (Miri runs the x86-64 path: it accepts the intrinsic.)
#[inline(always)]
pub fn prefetch_read<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: `_mm_prefetch` (`prefetcht0`, SSE, which every x86-64 CPU has) only
        // hints the cache: it never faults, whatever the address, and changes no memory
        // or register the program can observe. The pointer comes from a live reference.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(core::ptr::from_ref(r).cast::<i8>()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

/// [`prefetch_read`] of `s[i]`; nothing when `i` is out of range (the end of a loop).
#[inline(always)]
pub fn prefetch_index<T>(s: &[T], i: usize) {
    if let Some(r) = s.get(i) {
        prefetch_read(r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A smoke test: under Miri (`scripts/test.sh`) it runs the intrinsic, on an element
    /// and on the last one, and shows that an index past the end is not touched.
    #[test]
    fn hints_change_nothing() {
        let v = [1.0f64, 2.0, 3.0];
        prefetch_read(&v[1]);
        prefetch_index(&v, 2);
        prefetch_index(&v, 3); // past the end: no access
        prefetch_index::<f64>(&[], 0);
        assert_eq!(v, [1.0, 2.0, 3.0]);
    }
}
