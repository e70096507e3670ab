//! Helpers shared by the GPU backends.

#[cfg(any(feature = "cuda", feature = "hip"))]
use crate::Backend;
use crate::{ArenaError, ErrorKind};
use core::alloc::Layout;
use core::ffi::c_void;
use core::ptr::NonNull;

/// Refuses alignments above what the backend guarantees.
#[cfg(any(feature = "cuda", feature = "hip"))]
pub(crate) fn check_align(backend: Backend, layout: Layout, max: usize) -> Result<(), ArenaError> {
    if layout.align() > max {
        return Err(ErrorKind::UnsupportedAlignment {
            backend,
            align: layout.align(),
            max,
        }
        .into());
    }
    Ok(())
}

/// A pointer the runtime returned, or `AllocationFailed` when it is NULL.
pub(crate) fn non_null(p: *mut c_void, layout: Layout) -> Result<NonNull<u8>, ArenaError> {
    NonNull::new(p.cast::<u8>()).ok_or_else(|| {
        ErrorKind::AllocationFailed {
            size: layout.size(),
            align: layout.align(),
        }
        .into()
    })
}

/// Opens the first library of `names` that loads.
#[cfg(any(feature = "cuda", feature = "hip"))]
pub(crate) fn open(
    backend: Backend,
    names: &'static [&'static str],
) -> Result<libloading::Library, ArenaError> {
    names
        .iter()
        .find_map(|name| {
            // SAFETY: opening a GPU runtime library runs its initialisers, which have no
            // preconditions on our side.
            unsafe { libloading::Library::new(*name) }.ok()
        })
        .ok_or_else(|| {
            ErrorKind::LibraryNotFound {
                backend,
                tried: names,
            }
            .into()
        })
}
