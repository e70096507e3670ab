//! Counters of the distributed copies (AMReX's TinyProfiler regions of `FillBoundary`):
//! [`CommProfile`], [`comm_profile`], [`reset_comm_profile`], and the clock and
//! counters the engine adds to.

#[cfg(target_has_atomic = "64")]
use core::sync::atomic::{AtomicU64, Ordering};

/// Where the time of this process's `fill_boundary` / `parallel_copy` calls went,
/// summed since the last [`reset_comm_profile`] (AMReX's TinyProfiler regions for
/// `FillBoundary`): packing messages, local copies (done while messages are in flight),
/// waiting for messages, unpacking them; and the traffic. Times need feature `std`
/// (zero without it), and targets without 64-bit atomics count nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CommProfile {
    /// Calls that exchanged or copied anything.
    pub calls: u64,
    /// Nanoseconds packing send buffers.
    pub pack_ns: u64,
    /// Nanoseconds posting messages and doing the local copies.
    pub local_ns: u64,
    /// Nanoseconds waiting for messages.
    pub wait_ns: u64,
    /// Nanoseconds unpacking received messages.
    pub unpack_ns: u64,
    /// Messages sent and their bytes.
    pub messages_sent: u64,
    /// Bytes sent.
    pub bytes_sent: u64,
    /// Bytes received.
    pub bytes_received: u64,
    /// Bytes copied between local fabs.
    pub bytes_local: u64,
}

/// The counters (targets without 64-bit atomics keep none).
#[cfg(target_has_atomic = "64")]
static COUNTERS: [AtomicU64; 9] = [const { AtomicU64::new(0) }; 9];

/// Adds `v` to counter `i`.
pub(crate) fn add(i: usize, v: u64) {
    #[cfg(target_has_atomic = "64")]
    COUNTERS[i].fetch_add(v, Ordering::Relaxed);
    #[cfg(not(target_has_atomic = "64"))]
    let _ = (i, v);
}

fn get(i: usize) -> u64 {
    #[cfg(target_has_atomic = "64")]
    return COUNTERS[i].load(Ordering::Relaxed);
    #[cfg(not(target_has_atomic = "64"))]
    {
        let _ = i;
        0
    }
}

fn reset() {
    #[cfg(target_has_atomic = "64")]
    for c in &COUNTERS {
        c.store(0, Ordering::Relaxed);
    }
}

/// A clock for the profile: nanoseconds since some fixed instant (0 without `std`).
#[cfg(feature = "std")]
pub(crate) fn now() -> u64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static START: OnceLock<Instant> = OnceLock::new();
    // Saturates after 584 years.
    u64::try_from(START.get_or_init(Instant::now).elapsed().as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(not(feature = "std"))]
pub(crate) fn now() -> u64 {
    0
}

pub(crate) const CALLS: usize = 0;
pub(crate) const PACK: usize = 1;
pub(crate) const LOCAL: usize = 2;
pub(crate) const WAIT: usize = 3;
pub(crate) const UNPACK: usize = 4;
pub(crate) const MSGS: usize = 5;
pub(crate) const SENT: usize = 6;
pub(crate) const RECEIVED: usize = 7;
pub(crate) const LOCAL_BYTES: usize = 8;

/// The profile of this process's distributed copies since the last reset.
#[must_use]
pub fn comm_profile() -> CommProfile {
    let c = get;
    CommProfile {
        calls: c(CALLS),
        pack_ns: c(PACK),
        local_ns: c(LOCAL),
        wait_ns: c(WAIT),
        unpack_ns: c(UNPACK),
        messages_sent: c(MSGS),
        bytes_sent: c(SENT),
        bytes_received: c(RECEIVED),
        bytes_local: c(LOCAL_BYTES),
    }
}

/// Zeroes [`comm_profile`].
pub fn reset_comm_profile() {
    reset();
}
