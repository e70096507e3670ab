//! A minimal mutual-exclusion lock for caches shared between threads (copy plans,
//! FillPatch plans): `std::sync::Mutex` with `std`, a spin lock without.

#[cfg(feature = "std")]
mod imp {
    /// A lock around `T`.
    #[derive(Debug, Default)]
    pub struct Lock<T>(std::sync::Mutex<T>);

    impl<T> Lock<T> {
        /// Runs `f` with exclusive access to the value.
        pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
            // A panic while holding the lock leaves the cache in a consistent state
            // (entries are pushed whole), so a poisoned lock is still usable.
            let mut g = self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            f(&mut g)
        }
    }
}

#[cfg(not(feature = "std"))]
mod imp {
    use core::cell::UnsafeCell;
    use core::sync::atomic::{AtomicBool, Ordering};

    // Invariants:
    // 1. `value` is accessed only between a successful `compare_exchange` of `locked`
    //    from false to true and the store of false that ends `with`.
    // 2. So at most one `&mut T` exists at a time, which makes `Lock<T>: Sync` sound for
    //    `T: Send`.
    /// A spin lock around `T` (no_std builds have no OS mutex).
    #[derive(Debug, Default)]
    pub struct Lock<T> {
        locked: AtomicBool,
        value: UnsafeCell<T>,
    }

    // SAFETY: access to `value` is serialised by `locked` (invariant 1), so sharing the
    // lock between threads only ever moves exclusive access to `T` between threads.
    unsafe impl<T: Send> Sync for Lock<T> {}

    struct Unlock<'a>(&'a AtomicBool);
    impl Drop for Unlock<'_> {
        fn drop(&mut self) {
            self.0.store(false, Ordering::Release);
        }
    }

    impl<T> Lock<T> {
        /// Runs `f` with exclusive access to the value.
        pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
            while self
                .locked
                .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                core::hint::spin_loop();
            }
            let _unlock = Unlock(&self.locked);
            // SAFETY: we hold the lock (invariant 1), so no other reference to the value
            // exists until `_unlock` releases it after `f` returns or unwinds.
            let v = unsafe { &mut *self.value.get() };
            f(v)
        }
    }
}

pub use imp::Lock;

#[cfg(test)]
mod tests {
    use super::Lock;

    #[test]
    fn the_lock_gives_one_writer_at_a_time() {
        let lock: Lock<alloc::vec::Vec<u32>> = Lock::default();
        lock.with(|v| v.push(1));
        #[cfg(feature = "std")]
        std::thread::scope(|s| {
            for t in 0..4 {
                let lock = &lock;
                s.spawn(move || {
                    for i in 0..25 {
                        lock.with(|v| v.push(100 * t + i));
                    }
                });
            }
        });
        let n = lock.with(|v| v.len());
        assert_eq!(n, if cfg!(feature = "std") { 101 } else { 1 });
    }
}
