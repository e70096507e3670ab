//! Parallel loops over tiles: rayon with `std`, plain loops without.

/// `f` on every element, in parallel with `std`.
pub(crate) fn for_each_mut<I: Send>(items: &mut [I], f: impl Fn(&mut I) + Sync + Send) {
    #[cfg(feature = "std")]
    {
        use rayon::prelude::*;
        items.par_iter_mut().for_each(f);
    }
    #[cfg(not(feature = "std"))]
    items.iter_mut().for_each(f);
}

/// `f` on every element, results in order, in parallel with `std`.
pub(crate) fn map_mut<I: Send, R: Send>(
    items: &mut [I],
    f: impl Fn(&mut I) -> R + Sync + Send,
) -> alloc::vec::Vec<R> {
    #[cfg(feature = "std")]
    {
        use rayon::prelude::*;
        items.par_iter_mut().map(f).collect()
    }
    #[cfg(not(feature = "std"))]
    items.iter_mut().map(f).collect()
}
