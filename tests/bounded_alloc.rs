//! The plotfile reader allocates no more than the bytes behind it justify: this test
//! binary records the largest single allocation while a hostile plotfile is read.
//! (Its own binary, because it installs a global allocator.)

use amrex::boxes::{IndexBox, IntVect};
use amrex::multifab::{BoxArray, DistributionMapping, MultiFab};
use amrex::plotfile::{self, Geometry};
use core::alloc::{GlobalAlloc, Layout};
use core::sync::atomic::{AtomicUsize, Ordering};
use std::alloc::System;
use std::path::PathBuf;
use std::sync::Mutex;

/// The system allocator, remembering the largest request since the last reset.
struct Largest;

static LARGEST: AtomicUsize = AtomicUsize::new(0);
/// The tests reset and read `LARGEST`; one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

// SAFETY: forwards every call to `System` unchanged; only records sizes.
unsafe impl GlobalAlloc for Largest {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract for `alloc`, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with `layout` (forwarded contract).
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        // SAFETY: forwarded contract for `realloc`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Largest = Largest;

/// The largest single allocation `f` makes.
fn largest_during(f: impl FnOnce()) -> usize {
    LARGEST.store(0, Ordering::Relaxed);
    f();
    LARGEST.load(Ordering::Relaxed)
}

#[test]
#[cfg_attr(miri, ignore = "file I/O")]
fn a_huge_box_over_an_empty_data_file_allocates_nothing_big() {
    let _g = SERIAL.lock().unwrap();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "bounded-alloc-{}",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let domain = IndexBox::new(IntVect::ZERO, IntVect::new(7, 3, 3));
    let ba = BoxArray::from_domain(domain, 4);
    let mf = MultiFab::new(&ba, &DistributionMapping::single(&ba), 1, IntVect::ZERO);
    let geom = Geometry::cartesian(domain, [0.0; 3], [1.0; 3]).unwrap();
    plotfile::write_single_level_plotfile(&dir, &mf, &["a"], &geom, 0.0, 0).unwrap();
    // Claim ~2e9 cells in the second box and empty the data file.
    let cell_h = dir.join("Level_0/Cell_H");
    let text = std::fs::read_to_string(&cell_h).unwrap();
    let text = text.replacen(
        "((4,0,0) (7,3,3) (0,0,0))",
        "((4,0,0) (999999990,1,1) (0,0,0))",
        1,
    );
    std::fs::write(&cell_h, text).unwrap();
    std::fs::write(dir.join("Level_0/Cell_D_00000"), b"").unwrap();
    let most = largest_during(|| assert!(plotfile::read_plotfile(&dir).is_err()));
    assert!(most < 1 << 20, "the reader allocated {most} bytes at once");
}
