//! A hand-built "C producer" for the import tests: it lays out raw managed tensors field by
//! field (including malformed ones) and counts how often its deleter runs.
#![allow(
    dead_code,
    reason = "each test file uses a different subset of the helpers"
)]

use amrex_dlpack_core::ffi::{
    DLDataType, DLDevice, DLManagedTensor, DLManagedTensorVersioned, DLPackVersion, DLTensor,
};
use amrex_dlpack_core::{DataType, Device, DlpackError, ErrorKind};
use core::ffi::c_void;
use core::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// How to fill a pointer field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ptr {
    /// Point at the builder's own storage.
    Valid,
    /// NULL.
    Null,
    /// A non-NULL pointer to nothing: any read of it is undefined behaviour (Miri reports
    /// it, and natively the address is in the unmapped first page).
    Dangling,
}

/// Where `data` points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Data {
    /// The backing buffer, shifted by this many bytes (may be unaligned).
    Backing(usize),
    /// NULL.
    Null,
    /// A bare address without provenance (only for tensors that must never be read).
    Addr(usize),
}

/// Everything the producer owns until its deleter runs.
struct Ctx {
    calls: Arc<AtomicUsize>,
    shape: Vec<i64>,
    strides: Vec<i64>,
    backing: Vec<u64>,
}

/// A producer's description of one raw tensor; every field may be set to anything.
#[derive(Clone, Debug)]
pub(crate) struct RawBuilder {
    pub(crate) version: DLPackVersion,
    pub(crate) device: DLDevice,
    pub(crate) ndim: i32,
    pub(crate) dtype: DLDataType,
    pub(crate) shape: Vec<i64>,
    pub(crate) shape_ptr: Ptr,
    pub(crate) strides: Vec<i64>,
    pub(crate) strides_ptr: Ptr,
    pub(crate) data: Data,
    pub(crate) byte_offset: u64,
    pub(crate) flags: u64,
    pub(crate) backing: Vec<u64>,
    pub(crate) null_deleter: bool,
}

/// Compact row-major strides.
pub(crate) fn c_strides(shape: &[i64]) -> Vec<i64> {
    let mut out = vec![0; shape.len()];
    amrex_dlpack_core::c_strides(shape, &mut out);
    out
}

impl RawBuilder {
    /// A well-formed C-ordered f64 tensor on the CPU holding 0.0, 1.0, 2.0, ... (version 1.3).
    pub(crate) fn f64_c(shape: &[i64]) -> Self {
        let n: i64 = shape.iter().product();
        let backing = (0..n.max(1)).map(|i| (i as f64).to_bits()).collect();
        Self {
            version: DLPackVersion { major: 1, minor: 3 },
            device: Device::CPU,
            ndim: shape.len() as i32,
            dtype: DataType::F64,
            shape: shape.to_vec(),
            shape_ptr: Ptr::Valid,
            strides: c_strides(shape),
            strides_ptr: Ptr::Valid,
            data: Data::Backing(0),
            byte_offset: 0,
            flags: 0,
            backing,
            null_deleter: false,
        }
    }

    pub(crate) fn version(mut self, major: u32, minor: u32) -> Self {
        self.version = DLPackVersion { major, minor };
        self
    }
    pub(crate) fn device(mut self, device_type: i32, device_id: i32) -> Self {
        self.device = DLDevice {
            device_type: amrex_dlpack_core::DLDeviceType(device_type),
            device_id,
        };
        self
    }
    pub(crate) fn ndim(mut self, ndim: i32) -> Self {
        self.ndim = ndim;
        self
    }
    pub(crate) fn dtype(mut self, code: u8, bits: u8, lanes: u16) -> Self {
        self.dtype = DLDataType {
            code: amrex_dlpack_core::DLDataTypeCode(code),
            bits,
            lanes,
        };
        self
    }
    /// Sets the extents and `ndim` to their count.
    pub(crate) fn shape(mut self, shape: &[i64]) -> Self {
        self.ndim = shape.len() as i32;
        self.shape = shape.to_vec();
        self
    }
    pub(crate) fn shape_ptr(mut self, p: Ptr) -> Self {
        self.shape_ptr = p;
        self
    }
    pub(crate) fn strides(mut self, strides: &[i64]) -> Self {
        self.strides = strides.to_vec();
        self
    }
    pub(crate) fn strides_ptr(mut self, p: Ptr) -> Self {
        self.strides_ptr = p;
        self
    }
    pub(crate) fn data(mut self, data: Data) -> Self {
        self.data = data;
        self
    }
    pub(crate) fn byte_offset(mut self, byte_offset: u64) -> Self {
        self.byte_offset = byte_offset;
        self
    }
    pub(crate) fn flags(mut self, flags: u64) -> Self {
        self.flags = flags;
        self
    }
    pub(crate) fn backing(mut self, backing: Vec<u64>) -> Self {
        self.backing = backing;
        self
    }
    pub(crate) fn null_deleter(mut self) -> Self {
        self.null_deleter = true;
        self
    }

    /// Moves the storage into a heap context and fills a `DLTensor` pointing into it.
    fn into_parts(self) -> (DLTensor, *mut Ctx) {
        let calls = Arc::new(AtomicUsize::new(0));
        let ctx = Box::into_raw(Box::new(Ctx {
            calls,
            shape: self.shape,
            strides: self.strides,
            backing: self.backing,
        }));
        let pick = |p: Ptr, v: *mut i64| match p {
            Ptr::Valid => v,
            Ptr::Null => core::ptr::null_mut(),
            Ptr::Dangling => core::ptr::NonNull::<i64>::dangling().as_ptr(),
        };
        // SAFETY: `ctx` is a live, uniquely owned box; we only take pointers to its Vecs'
        // heap buffers, which do not move while the context lives.
        let c = unsafe { &mut *ctx };
        let (shape, strides, backing) = (
            c.shape.as_mut_ptr(),
            c.strides.as_mut_ptr(),
            c.backing.as_mut_ptr(),
        );
        let data = match self.data {
            Data::Backing(shift) => backing.cast::<u8>().wrapping_add(shift).cast::<c_void>(),
            Data::Null => core::ptr::null_mut(),
            Data::Addr(a) => core::ptr::without_provenance_mut(a),
        };
        let tensor = DLTensor {
            data,
            device: self.device,
            ndim: self.ndim,
            dtype: self.dtype,
            shape: pick(self.shape_ptr, shape),
            strides: pick(self.strides_ptr, strides),
            byte_offset: self.byte_offset,
        };
        (tensor, ctx)
    }

    fn calls_of(ctx: *mut Ctx) -> Arc<AtomicUsize> {
        // SAFETY: `ctx` is live until the deleter runs, which has not happened yet.
        Arc::clone(unsafe { &(*ctx).calls })
    }

    /// A heap `DLManagedTensorVersioned` and the counter its deleter increments.
    pub(crate) fn build(self) -> (*mut DLManagedTensorVersioned, Arc<AtomicUsize>) {
        let (version, flags, null_deleter) = (self.version, self.flags, self.null_deleter);
        let (dl_tensor, ctx) = self.into_parts();
        let calls = Self::calls_of(ctx);
        let managed = Box::new(DLManagedTensorVersioned {
            version,
            manager_ctx: ctx.cast(),
            deleter: if null_deleter {
                None
            } else {
                Some(versioned_deleter)
            },
            flags,
            dl_tensor,
        });
        (Box::into_raw(managed), calls)
    }

    /// A heap legacy `DLManagedTensor` and the counter its deleter increments.
    pub(crate) fn build_legacy(self) -> (*mut DLManagedTensor, Arc<AtomicUsize>) {
        let null_deleter = self.null_deleter;
        let (dl_tensor, ctx) = self.into_parts();
        let calls = Self::calls_of(ctx);
        let managed = Box::new(DLManagedTensor {
            dl_tensor,
            manager_ctx: ctx.cast(),
            deleter: if null_deleter {
                None
            } else {
                Some(legacy_deleter)
            },
        });
        (Box::into_raw(managed), calls)
    }
}

unsafe extern "C" fn versioned_deleter(p: *mut DLManagedTensorVersioned) {
    // SAFETY: `p` came from `Box::into_raw` in `build` and the deleter runs once.
    let managed = unsafe { Box::from_raw(p) };
    // SAFETY: `manager_ctx` came from `Box::into_raw(Box<Ctx>)` in `into_parts`.
    let ctx = unsafe { Box::from_raw(managed.manager_ctx.cast::<Ctx>()) };
    ctx.calls.fetch_add(1, Ordering::SeqCst);
}

unsafe extern "C" fn legacy_deleter(p: *mut DLManagedTensor) {
    // SAFETY: `p` came from `Box::into_raw` in `build_legacy` and the deleter runs once.
    let managed = unsafe { Box::from_raw(p) };
    // SAFETY: `manager_ctx` came from `Box::into_raw(Box<Ctx>)` in `into_parts`.
    let ctx = unsafe { Box::from_raw(managed.manager_ctx.cast::<Ctx>()) };
    ctx.calls.fetch_add(1, Ordering::SeqCst);
}

/// Frees a tensor built with `null_deleter()` (its producer keeps ownership).
///
/// # Safety
/// `p` came from [`RawBuilder::build`] and is freed once.
pub(crate) unsafe fn release(p: *mut DLManagedTensorVersioned) {
    // SAFETY: forwarded.
    unsafe { versioned_deleter(p) }
}

/// Frees a legacy tensor built with `null_deleter()`.
///
/// # Safety
/// `p` came from [`RawBuilder::build_legacy`] and is freed once.
pub(crate) unsafe fn release_legacy(p: *mut DLManagedTensor) {
    // SAFETY: forwarded.
    unsafe { legacy_deleter(p) }
}

/// The error kind, or a panic naming what was unexpectedly accepted.
pub(crate) fn kind_of<T: core::fmt::Debug>(r: Result<T, DlpackError>) -> ErrorKind {
    match r {
        Ok(v) => panic!("expected an error, got Ok({v:?})"),
        Err(e) => {
            // Every error renders a message that starts with the protocol name.
            assert!(e.to_string().starts_with("DLPack: "), "{e}");
            e.kind()
        }
    }
}

/// An owner that counts its drops.
#[derive(Debug)]
pub(crate) struct DropCounter(pub(crate) Arc<AtomicUsize>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Reads a counter.
pub(crate) fn get(c: &AtomicUsize) -> usize {
    c.load(Ordering::SeqCst)
}
