//! Shared pieces of the fuzz targets: a decoder that turns fuzzer bytes into an *honest*
//! DLPack producer's tensor (any shape, strides, dtype, device, flags, offset and
//! alignment, but always backed by enough memory for the span it claims, because a
//! consumer cannot detect a producer that lies about its memory), a deleter that counts
//! its calls, and the post-import operations a user runs on each container.
//!
//! # Input format
//! Bytes are read front to back; a missing byte reads as 0, so every input decodes.
//! Integers are read with [`Input::int`]: one tag byte picks a small value (`tag - 100`
//! for tags below 200), an edge value from [`EDGES`], or eight little-endian bytes. That
//! keeps the interesting numbers (0, 1, -1, `i32::MAX`, 2^31, `i64::MIN`, ...) one byte
//! away, so mutations find them.

use amrex_dlpack_core::ffi::{
    DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, DLManagedTensor,
    DLManagedTensorVersioned, DLPackVersion, DLTensor, flags,
};
use amrex_dlpack_core::{LegacyManagedTensor, ManagedTensor};
use core::cell::Cell;
use core::ffi::c_void;

/// Edge values an integer tag can select.
pub const EDGES: [i64; 24] = [
    i64::MIN,
    i64::MIN + 1,
    i64::MAX,
    i64::MAX - 1,
    i32::MIN as i64,
    i32::MIN as i64 + 1,
    i32::MAX as i64,
    i32::MAX as i64 - 1,
    i32::MAX as i64 + 1,
    i32::MAX as i64 + 2,
    u32::MAX as i64,
    1 << 30,
    1 << 31,
    1 << 32,
    1 << 40,
    1 << 62,
    -(1 << 31),
    -(1 << 40),
    isize::MAX as i64 / 8,
    isize::MAX as i64 / 8 + 1,
    1000,
    4096,
    65536,
    -1000,
];

/// A cursor over fuzzer bytes.
#[derive(Debug)]
pub struct Input<'a> {
    bytes: &'a [u8],
}

impl<'a> Input<'a> {
    /// Reads `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    /// One byte (0 past the end).
    pub fn byte(&mut self) -> u8 {
        match self.bytes.split_first() {
            Some((&b, rest)) => {
                self.bytes = rest;
                b
            }
            None => 0,
        }
    }

    /// An integer, small or an edge value most of the time (see the module docs).
    pub fn int(&mut self) -> i64 {
        let tag = self.byte();
        match tag {
            0..200 => i64::from(tag) - 100,
            200..224 => EDGES[usize::from(tag - 200)],
            _ => {
                let mut b = [0u8; 8];
                for x in &mut b {
                    *x = self.byte();
                }
                i64::from_le_bytes(b)
            }
        }
    }

    /// An integer clamped into `i32` by saturation.
    pub fn i32(&mut self) -> i32 {
        self.int().clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
    }

    /// The bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        self.bytes
    }
}

/// Dtypes a tensor can claim: the ones the containers hold, near misses, and nonsense.
const DTYPES: [(u8, u8, u16); 12] = [
    (DLDataTypeCode::FLOAT.0, 64, 1),
    (DLDataTypeCode::FLOAT.0, 32, 1),
    (DLDataTypeCode::INT.0, 32, 1),
    (DLDataTypeCode::UINT.0, 8, 1),
    (DLDataTypeCode::INT.0, 64, 1),
    (DLDataTypeCode::FLOAT.0, 64, 2),
    (DLDataTypeCode::BOOL.0, 8, 1),
    (DLDataTypeCode::FLOAT.0, 16, 1),
    (DLDataTypeCode::INT.0, 4, 1),
    (DLDataTypeCode::COMPLEX.0, 128, 1),
    (DLDataTypeCode::FLOAT.0, 63, 1),
    (250, 8, 1),
];

/// Device types: mostly the CPU, then host-accessible GPU memory, device memory and
/// unknown codes (the harness's memory is host memory whatever the label says).
const DEVICES: [i32; 8] = [1, 1, 1, 3, 13, 2, 14, 999];

/// What the harness's producer keeps until its deleter runs.
struct Ctx {
    _shape: Vec<i64>,
    _strides: Vec<i64>,
    _backing: Vec<u64>,
}

thread_local! {
    /// Calls of the producer's deleter since the last [`take_deleter_calls`].
    static DELETER_CALLS: Cell<usize> = const { Cell::new(0) };
}

/// Deleter calls since the last call of this function (and resets the count).
pub fn take_deleter_calls() -> usize {
    DELETER_CALLS.with(|c| c.replace(0))
}

unsafe extern "C" fn versioned_deleter(p: *mut DLManagedTensorVersioned) {
    DELETER_CALLS.with(|c| c.set(c.get() + 1));
    // SAFETY: `p` and its context were made by `Box::into_raw` in `RawTensor::build`, and
    // the consumer calls the deleter once (which the count checks).
    let m = unsafe { Box::from_raw(p) };
    // SAFETY: as above, for the context.
    drop(unsafe { Box::from_raw(m.manager_ctx.cast::<Ctx>()) });
}

unsafe extern "C" fn legacy_deleter(p: *mut DLManagedTensor) {
    DELETER_CALLS.with(|c| c.set(c.get() + 1));
    // SAFETY: as `versioned_deleter`.
    let m = unsafe { Box::from_raw(p) };
    // SAFETY: as above, for the context.
    drop(unsafe { Box::from_raw(m.manager_ctx.cast::<Ctx>()) });
}

/// Most elements a post-import operation walks: a zero stride lets a few bytes describe
/// 2^62 elements, and walking those is slow, not wrong, so larger views are imported
/// and inspected but not walked.
pub const WALK_LIMIT: usize = 1 << 18;

/// Largest backing buffer the harness allocates; tensors that need more are skipped.
const MAX_BACKING: i128 = 1 << 22;

/// A decoded producer tensor, ready to be built.
#[derive(Debug)]
pub struct RawTensor {
    major: u32,
    legacy: bool,
    flags: u64,
    dtype: DLDataType,
    device: DLDevice,
    shape: Vec<i64>,
    strides: Option<Vec<i64>>,
    /// Bytes from the backing start to `data`.
    data_shift: usize,
    /// `byte_offset` (the rest of the distance to the first element).
    byte_offset: u64,
    backing_words: usize,
    null_data: bool,
}

/// Either kind of owning import.
#[derive(Debug)]
pub enum Imported {
    /// A `DLManagedTensorVersioned` that passed validation.
    Versioned(ManagedTensor<'static>),
    /// A legacy `DLManagedTensor` that passed validation.
    Legacy(LegacyManagedTensor<'static>),
}

impl RawTensor {
    /// Decodes a tensor, or `None` if its honest backing would exceed the harness's
    /// budget (then nothing is allocated).
    pub fn decode(inp: &mut Input<'_>) -> Option<Self> {
        let mode = inp.byte();
        let ndim = usize::from(inp.byte() % 7);
        let (code, bits, lanes) = DTYPES[usize::from(inp.byte()) % DTYPES.len()];
        let device_type = DEVICES[usize::from(inp.byte()) % DEVICES.len()];
        let shape: Vec<i64> = (0..ndim).map(|_| inp.int()).collect();
        let null_strides = mode & 4 != 0;
        let strides: Vec<i64> = (0..ndim).map(|_| inp.int()).collect();
        let misalign = usize::from(inp.byte() % 8);
        let split = inp.byte();
        let elem = i128::from(bits.div_ceil(8).max(1));
        // The span the producer's strides reach, in elements (exact, in i128).
        let empty = shape.iter().any(|&e| e <= 0);
        let (lo, hi) = if empty || shape.iter().any(|&e| e < 0) {
            (0i128, 0i128)
        } else if null_strides {
            let n = shape.iter().fold(1i128, |a, &e| a.saturating_mul(i128::from(e)));
            (0, n - 1)
        } else {
            let mut lo = 0i128;
            let mut hi = 0i128;
            for (&e, &s) in shape.iter().zip(&strides) {
                // At most 6 terms of at most 2^126: checked anyway, a wrap would size
                // the backing wrongly.
                let r = i128::from(e - 1).checked_mul(i128::from(s))?;
                if r < 0 {
                    lo = lo.checked_add(r)?;
                } else {
                    hi = hi.checked_add(r)?;
                }
            }
            (lo, hi)
        };
        let bytes = if empty {
            0
        } else {
            (hi - lo + 1).checked_mul(elem)?
        };
        let first = (-lo).checked_mul(elem)? + misalign as i128;
        if bytes < 0 || first < 0 || bytes.checked_add(first)? > MAX_BACKING {
            return None;
        }
        let total = (bytes + first) as usize;
        let data_shift = if split & 1 == 0 { 0 } else { first as usize };
        Some(Self {
            major: if mode & 8 != 0 { 2 } else { 1 },
            legacy: mode & 1 != 0,
            flags: if mode & 2 != 0 { flags::READ_ONLY } else { 0 }
                | if mode & 16 != 0 { flags::IS_COPIED } else { 0 },
            dtype: DLDataType {
                code: DLDataTypeCode(code),
                bits,
                lanes,
            },
            device: DLDevice {
                device_type: DLDeviceType(device_type),
                device_id: 0,
            },
            shape,
            strides: (!null_strides).then_some(strides),
            data_shift,
            byte_offset: (first as usize - data_shift) as u64,
            backing_words: total.div_ceil(8) + 1,
            null_data: empty && mode & 32 != 0,
        })
    }

    /// Builds the producer's tensor and hands it to the importer (`from_raw`). A refused
    /// tensor has had its deleter called by then.
    pub fn import(self) -> Option<Imported> {
        let mut shape = self.shape;
        let mut strides = self.strides;
        let mut backing = vec![0x3ff0_0000_0000_0001u64; self.backing_words];
        let base = backing.as_mut_ptr().cast::<u8>();
        let data: *mut c_void = if self.null_data {
            core::ptr::null_mut()
        } else {
            base.wrapping_add(self.data_shift).cast()
        };
        let dl = DLTensor {
            data,
            device: self.device,
            ndim: shape.len() as i32,
            dtype: self.dtype,
            shape: if shape.is_empty() { core::ptr::null_mut() } else { shape.as_mut_ptr() },
            strides: match &mut strides {
                Some(s) if !s.is_empty() => s.as_mut_ptr(),
                _ => core::ptr::null_mut(),
            },
            byte_offset: self.byte_offset,
        };
        let ctx = Box::into_raw(Box::new(Ctx {
            _shape: shape,
            _strides: strides.unwrap_or_default(),
            _backing: backing,
        }))
        .cast::<c_void>();
        if self.legacy {
            let m = Box::into_raw(Box::new(DLManagedTensor {
                dl_tensor: dl,
                manager_ctx: ctx,
                deleter: Some(legacy_deleter),
            }));
            // SAFETY: a fresh tensor whose ownership passes to the importer; its shape,
            // strides and memory (sized for the span they reach) live in `ctx` until the
            // deleter runs.
            unsafe { LegacyManagedTensor::from_raw(m) }.ok().map(Imported::Legacy)
        } else {
            let m = Box::into_raw(Box::new(DLManagedTensorVersioned {
                version: DLPackVersion {
                    major: self.major,
                    minor: 3,
                },
                manager_ctx: ctx,
                deleter: Some(versioned_deleter),
                flags: self.flags,
                dl_tensor: dl,
            }));
            // SAFETY: as above.
            unsafe { ManagedTensor::from_raw(m) }.ok().map(Imported::Versioned)
        }
    }
}

/// The versioned tensor of an import (legacy ones are re-wrapped as versioned by value:
/// the containers take `ManagedTensor`).
pub fn versioned(i: Imported) -> Option<ManagedTensor<'static>> {
    match i {
        Imported::Versioned(t) => Some(t),
        // Legacy tensors are exercised by the core target's view operations; the
        // containers only adopt versioned ones.
        Imported::Legacy(_) => None,
    }
}

/// Checks that the producer's deleter ran exactly once for a tensor that was built.
///
/// # Panics
/// If it ran any other number of times: a leak or a double free.
pub fn assert_released_once(built: bool) {
    let calls = take_deleter_calls();
    let want = usize::from(built);
    assert_eq!(calls, want, "deleter ran {calls} times, expected {want}");
}
