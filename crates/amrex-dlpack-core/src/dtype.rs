//! Element types: [`DataType`] helpers and the [`DlpackElement`] trait.

use crate::ffi::{DLDataType, DLDataTypeCode};

/// The element type of a tensor (`DLDataType`).
pub type DataType = DLDataType;

impl DLDataType {
    /// Builds a scalar (`lanes = 1`) data type.
    pub const fn scalar(code: DLDataTypeCode, bits: u8) -> Self {
        Self {
            code,
            bits,
            lanes: 1,
        }
    }
    /// `bool` (8 bits).
    pub const BOOL: Self = Self::scalar(DLDataTypeCode::BOOL, 8);
    /// `i8`.
    pub const I8: Self = Self::scalar(DLDataTypeCode::INT, 8);
    /// `i16`.
    pub const I16: Self = Self::scalar(DLDataTypeCode::INT, 16);
    /// `i32`.
    pub const I32: Self = Self::scalar(DLDataTypeCode::INT, 32);
    /// `i64`.
    pub const I64: Self = Self::scalar(DLDataTypeCode::INT, 64);
    /// `u8`.
    pub const U8: Self = Self::scalar(DLDataTypeCode::UINT, 8);
    /// `u16`.
    pub const U16: Self = Self::scalar(DLDataTypeCode::UINT, 16);
    /// `u32`.
    pub const U32: Self = Self::scalar(DLDataTypeCode::UINT, 32);
    /// `u64`.
    pub const U64: Self = Self::scalar(DLDataTypeCode::UINT, 64);
    /// IEEE half precision.
    pub const F16: Self = Self::scalar(DLDataTypeCode::FLOAT, 16);
    /// `f32`.
    pub const F32: Self = Self::scalar(DLDataTypeCode::FLOAT, 32);
    /// `f64`.
    pub const F64: Self = Self::scalar(DLDataTypeCode::FLOAT, 64);
    /// bfloat16.
    pub const BF16: Self = Self::scalar(DLDataTypeCode::BFLOAT, 16);
    /// Complex of two `f32`.
    pub const C64: Self = Self::scalar(DLDataTypeCode::COMPLEX, 64);
    /// Complex of two `f64`.
    pub const C128: Self = Self::scalar(DLDataTypeCode::COMPLEX, 128);

    /// The data type of `T`.
    pub const fn of<T: DlpackElement>() -> Self {
        T::DTYPE
    }

    /// Bytes one element occupies in memory (sub-byte types are padded to one byte), or
    /// `None` when `bits * lanes` is not a whole number of bytes and the type is not a
    /// known sub-byte float.
    pub const fn size_in_bytes(self) -> Option<usize> {
        let total = self.bits as usize * self.lanes as usize;
        if total == 0 {
            return None;
        }
        if total.is_multiple_of(8) {
            Some(total / 8)
        } else if self.lanes == 1 && self.bits < 8 {
            Some(1)
        } else {
            None
        }
    }
}

/// A Rust type with a DLPack data type and the memory layout DLPack describes.
///
/// # Safety
/// Implementors guarantee that `DTYPE` describes exactly the in-memory representation of
/// `Self` (`bits / 8 == size_of::<Self>()`, `lanes == 1`), and that every bit pattern a
/// DLPack producer may legitimately store for `DTYPE` is a valid `Self` (for `bool`, only 0
/// and 1, which is what the DLPack `kDLBool` type allows).
pub unsafe trait DlpackElement: Copy + Send + Sync + 'static {
    /// The DLPack data type of `Self`.
    const DTYPE: DataType;
}

macro_rules! element {
    ($($t:ty => $dt:ident),* $(,)?) => {$(
        // SAFETY: `$t` is a primitive whose size and representation are exactly `$dt`.
        unsafe impl DlpackElement for $t {
            const DTYPE: DataType = DataType::$dt;
        }
        const _: () = assert!(DataType::$dt.bits as usize == 8 * core::mem::size_of::<$t>());
    )*};
}

element!(
    bool => BOOL, i8 => I8, i16 => I16, i32 => I32, i64 => I64,
    u8 => U8, u16 => U16, u32 => U32, u64 => U64, f32 => F32, f64 => F64,
);

#[cfg(feature = "half")]
element!(half::f16 => F16, half::bf16 => BF16);

#[cfg(feature = "num-complex")]
element!(num_complex::Complex<f32> => C64, num_complex::Complex<f64> => C128);
