//! The workspace's one thread-pool shim: loops over independent work items that run on
//! rayon's threads with `std` and one after the other without it.
//!
//! Every crate that loops over tiles, fabs or particle tiles in parallel calls these, so
//! the choice of pool, the one-item-per-task grain and the Miri fallback are made here
//! once. Results keep the items' order, so a reduction folded over them gives the same
//! answer for every thread count.
//!
//! Under Miri, rayon cannot run with `-Zmiri-strict-provenance` (crossbeam-epoch casts
//! integers to pointers), so the same tasks run on two scoped threads that take items
//! from a shared counter: Miri still sees the work run concurrently and checks it for
//! data races.

use alloc::vec::Vec;

/// Maps `f` over `0..n`, in parallel with `std`; the results keep their order.
///
/// ```
/// let squares = amrex_runtime::threads::par_map(4, |i| i * i);
/// assert_eq!(squares, [0, 1, 4, 9]);
/// ```
pub fn par_map<R: Send>(n: usize, f: impl Fn(usize) -> R + Sync + Send) -> Vec<R> {
    #[cfg(all(feature = "std", not(miri)))]
    {
        use rayon::prelude::*;
        (0..n).into_par_iter().with_max_len(1).map(f).collect()
    }
    #[cfg(all(feature = "std", miri))]
    {
        miri_threads::map(n, f)
    }
    #[cfg(not(feature = "std"))]
    {
        (0..n).map(f).collect()
    }
}

/// Runs `f` for each of `0..n`, in parallel with `std`.
pub fn par_for(n: usize, f: impl Fn(usize) + Sync + Send) {
    #[cfg(all(feature = "std", not(miri)))]
    {
        use rayon::prelude::*;
        (0..n).into_par_iter().with_max_len(1).for_each(f);
    }
    #[cfg(all(feature = "std", miri))]
    {
        miri_threads::map(n, f);
    }
    #[cfg(not(feature = "std"))]
    {
        (0..n).for_each(f);
    }
}

/// Runs `f` on every element of `items`, in parallel with `std`.
///
/// ```
/// let mut v = [1, 2, 3];
/// amrex_runtime::threads::par_for_each_mut(&mut v, |x| *x *= 10);
/// assert_eq!(v, [10, 20, 30]);
/// ```
pub fn par_for_each_mut<I: Send>(items: &mut [I], f: impl Fn(&mut I) + Sync + Send) {
    par_map_mut(items, f);
}

/// Maps `f` over the elements of `items`, in parallel with `std`; the results keep the
/// elements' order. Unlike [`par_map`] (one item per task, for tiles that each hold
/// much work), rayon splits the slice adaptively here, which suits many small items
/// (particle tiles).
pub fn par_map_mut<I: Send, R: Send>(
    items: &mut [I],
    f: impl Fn(&mut I) -> R + Sync + Send,
) -> Vec<R> {
    #[cfg(all(feature = "std", not(miri)))]
    {
        use rayon::prelude::*;
        items.par_iter_mut().map(f).collect()
    }
    #[cfg(not(all(feature = "std", not(miri))))]
    {
        items.iter_mut().map(f).collect()
    }
}

/// The number of threads the loops above run on (1 without `std`).
#[must_use]
pub fn current_num_threads() -> usize {
    #[cfg(feature = "std")]
    {
        rayon::current_num_threads()
    }
    #[cfg(not(feature = "std"))]
    {
        1
    }
}

#[cfg(all(feature = "std", miri))]
mod miri_threads {
    use alloc::vec::Vec;
    use core::sync::atomic::{AtomicUsize, Ordering};

    pub(super) fn map<R: Send>(n: usize, f: impl Fn(usize) -> R + Sync) -> Vec<R> {
        let next = AtomicUsize::new(0);
        let work = || {
            let mut done = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    return done;
                }
                done.push((i, f(i)));
            }
        };
        let mut out: Vec<Option<R>> = (0..n).map(|_| None).collect();
        std::thread::scope(|s| {
            let handles = [s.spawn(work), s.spawn(work)];
            for h in handles {
                match h.join() {
                    Ok(done) => {
                        for (i, r) in done {
                            out[i] = Some(r);
                        }
                    }
                    Err(payload) => std::panic::resume_unwind(payload),
                }
            }
        });
        out.into_iter()
            .map(|r| r.expect("every item was run"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_their_order() {
        assert_eq!(
            par_map(100, |i| 3 * i),
            (0..100).map(|i| 3 * i).collect::<Vec<_>>()
        );
        let mut v: Vec<usize> = (0..50).collect();
        assert_eq!(par_map_mut(&mut v, |x| *x + 1), (1..51).collect::<Vec<_>>());
        let seen = core::sync::atomic::AtomicUsize::new(0);
        par_for(10, |i| {
            seen.fetch_add(i, core::sync::atomic::Ordering::Relaxed);
        });
        assert_eq!(seen.into_inner(), 45);
        assert!(current_num_threads() >= 1);
    }
}
