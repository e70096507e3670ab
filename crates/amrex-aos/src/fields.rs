//! Field descriptions of particle structs and the strided DLPack layouts over them.
//!
//! DLPack has no struct dtype, so an array of particles is shared one field at a time:
//! field `f` of particle `i` lives at `base + i * size_of::<P>() + offset(f)`, which is a
//! rank-1 tensor of the field's dtype with stride `size_of::<P>() / size_of(field)` —
//! *if* that division is exact and the first element is aligned. When the position and
//! real fields sit next to each other with one dtype (always, for [`Particle`]), they
//! also form one rank-2 `(n, SPACEDIM + NR)` tensor with strides `(size_of::<P>() /
//! size_of(real), 1)`.
//!
//! [`Particle`]: crate::Particle

use crate::particle::{Particle, ParticleReal, SPACEDIM};
use amrex_dlpack_core::{DataType, Device, DlpackElement, DlpackError, ErrorKind, TensorSpec};
use core::ffi::c_void;
use core::mem::{offset_of, size_of};

/// Which field of a particle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FieldKind {
    /// Position coordinate `d` (0 = x, 1 = y, 2 = z).
    Position(usize),
    /// Real component `n`.
    Real(usize),
    /// The packed id/cpu word (`u64`).
    IdCpu,
    /// Integer component `n`.
    Int(usize),
}

impl core::fmt::Display for FieldKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Self::Position(d) => match d {
                0 => f.write_str("x"),
                1 => f.write_str("y"),
                2 => f.write_str("z"),
                _ => write!(f, "position_{d}"),
            },
            Self::Real(n) => write!(f, "real_{n}"),
            Self::IdCpu => f.write_str("idcpu"),
            Self::Int(n) => write!(f, "int_{n}"),
        }
    }
}

/// One field of a particle struct: what it is, where it sits and its element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// Which field.
    pub kind: FieldKind,
    /// Byte offset inside the struct.
    pub offset: usize,
    /// Element type (one element per particle).
    pub dtype: DataType,
}

/// A particle struct whose fields can be shared as strided DLPack tensors.
///
/// # Safety
/// For every `index < NUM_FIELDS`, `field(index)` is `Some(f)` where:
/// 1. `f.dtype` is a dtype whose size in bytes `s` is known, and the `s` bytes at
///    `f.offset..f.offset + s` lie inside `size_of::<Self>()`;
/// 2. those bytes are always initialised (never padding) and hold a value of `f.dtype`;
/// 3. writing any value of `f.dtype` there leaves a valid `Self`;
/// 4. no two fields overlap.
///
/// (`AnyBitPattern` already makes every byte pattern, zeros included, a valid `Self`.)
///
/// `field(index)` is `None` for `index >= NUM_FIELDS`.
pub unsafe trait ParticleLayout: bytemuck::AnyBitPattern + Send + Sync {
    /// Number of fields.
    const NUM_FIELDS: usize;

    /// Field `index`, in memory order.
    fn field(index: usize) -> Option<Field>;

    /// The field of the given kind, if the struct has it.
    fn find(kind: FieldKind) -> Option<Field> {
        (0..Self::NUM_FIELDS)
            .filter_map(Self::field)
            .find(|f| f.kind == kind)
    }
}

// SAFETY: the fields are exactly the struct's `#[repr(C)]` members and array elements:
// positions and reals are `ParticleReal` at `offset_of!(pos/rdata) + i * size`, `idcpu`
// a `u64`, int components `i32` — all inside the struct, initialised, disjoint, and valid
// for every bit pattern of their dtype.
unsafe impl<const NR: usize, const NI: usize> ParticleLayout for Particle<NR, NI> {
    const NUM_FIELDS: usize = SPACEDIM + NR + 1 + NI;

    fn field(index: usize) -> Option<Field> {
        let real = size_of::<ParticleReal>();
        let f = |kind, offset, dtype| {
            Some(Field {
                kind,
                offset,
                dtype,
            })
        };
        if index < SPACEDIM {
            f(
                FieldKind::Position(index),
                offset_of!(Self, pos) + index * real,
                ParticleReal::DTYPE,
            )
        } else if index < SPACEDIM + NR {
            let n = index - SPACEDIM;
            f(
                FieldKind::Real(n),
                offset_of!(Self, rdata) + n * real,
                ParticleReal::DTYPE,
            )
        } else if index == SPACEDIM + NR {
            f(FieldKind::IdCpu, offset_of!(Self, idcpu), u64::DTYPE)
        } else if index < Self::NUM_FIELDS {
            let n = index - SPACEDIM - NR - 1;
            f(
                FieldKind::Int(n),
                offset_of!(Self, idata) + n * size_of::<i32>(),
                i32::DTYPE,
            )
        } else {
            None
        }
    }
}

/// A rank-1 or rank-2 strided tensor over particle memory: everything a DLPack export
/// needs except the owner. Built by [`field_layout`] and [`real_block_layout`].
#[derive(Clone, Copy, Debug)]
pub struct StridedLayout {
    data: *mut c_void,
    device: Device,
    dtype: DataType,
    shape: [i64; 2],
    strides: [i64; 2],
    ndim: usize,
}

// SAFETY: a plain description (address, extents, strides); it grants no access by itself.
unsafe impl Send for StridedLayout {}
// SAFETY: as above.
unsafe impl Sync for StridedLayout {}

impl StridedLayout {
    /// First element (NULL when there are no particles).
    pub fn data(&self) -> *mut c_void {
        self.data
    }

    /// Where the memory lives.
    pub fn device(&self) -> Device {
        self.device
    }

    /// Element type.
    pub fn dtype(&self) -> DataType {
        self.dtype
    }

    /// Extents: `[n]` or `[n, k]`.
    pub fn shape(&self) -> &[i64] {
        &self.shape[..self.ndim]
    }

    /// Strides in elements.
    pub fn strides(&self) -> &[i64] {
        &self.strides[..self.ndim]
    }

    /// The export spec with the given flags.
    pub fn spec(&self, flags: u64) -> TensorSpec<'_> {
        TensorSpec {
            data: self.data,
            device: self.device,
            dtype: self.dtype,
            shape: self.shape(),
            strides: self.strides(),
            flags,
        }
    }
}

/// The error for a struct size that is not a whole number of field elements.
pub(crate) fn fractional_stride() -> DlpackError {
    ErrorKind::Unsupported(
        "particle struct size is not a whole number of elements of the field's dtype, so \
         the field cannot be a strided DLPack tensor",
    )
    .into()
}

fn elem_stride<P>(dtype: DataType) -> Result<(usize, i64), DlpackError> {
    let elem = dtype
        .size_in_bytes()
        .ok_or(ErrorKind::UnsupportedDtype(dtype))?;
    let size = size_of::<P>();
    if elem == 0 || !size.is_multiple_of(elem) {
        return Err(fractional_stride());
    }
    let stride = i64::try_from(size / elem).map_err(|_| ErrorKind::SpanOverflow)?;
    Ok((elem, stride))
}

fn first_element(
    base: *const c_void,
    len: usize,
    offset: usize,
    elem: usize,
) -> Result<*mut c_void, DlpackError> {
    if len == 0 {
        return Ok(core::ptr::null_mut());
    }
    let first = base.cast::<u8>().wrapping_add(offset);
    // Every dtype we export is a primitive aligned to its size.
    if !first.addr().is_multiple_of(elem) {
        return Err(ErrorKind::Misaligned {
            address: first.addr(),
            align: elem,
        }
        .into());
    }
    Ok(first.cast_mut().cast())
}

/// The rank-1 tensor of one field over `len` particles starting at `base` on `device`.
///
/// Does not dereference `base` (it may be device memory).
///
/// # Errors
/// - `Unsupported` when `size_of::<P>()` is not a whole number of field elements;
/// - `Misaligned` when the first element is not aligned to its size;
/// - `SpanOverflow` when `len` does not fit an `i64`.
pub fn field_layout<P: ParticleLayout>(
    base: *const P,
    len: usize,
    device: Device,
    field: Field,
) -> Result<StridedLayout, DlpackError> {
    let (elem, stride) = elem_stride::<P>(field.dtype)?;
    let n = i64::try_from(len).map_err(|_| ErrorKind::SpanOverflow)?;
    let data = first_element(base.cast(), len, field.offset, elem)?;
    Ok(StridedLayout {
        data,
        device,
        dtype: field.dtype,
        shape: [n, 1],
        strides: [stride, 1],
        ndim: 1,
    })
}

/// The position and real fields of every particle as one rank-2 `(len, k)` tensor with
/// strides `(size_of::<P>() / elem, 1)`, where `k` counts those fields.
///
/// # Errors
/// - `NotContiguous` when the position and real fields are not adjacent, in order, with
///   one dtype;
/// - as [`field_layout`] otherwise.
pub fn real_block_layout<P: ParticleLayout>(
    base: *const P,
    len: usize,
    device: Device,
) -> Result<StridedLayout, DlpackError> {
    let mut reals = (0..P::NUM_FIELDS)
        .filter_map(P::field)
        .filter(|f| matches!(f.kind, FieldKind::Position(_) | FieldKind::Real(_)));
    let Some(first) = reals.next() else {
        return Err(ErrorKind::Unsupported("the particle struct has no real fields").into());
    };
    let (elem, stride) = elem_stride::<P>(first.dtype)?;
    let mut k = 1usize;
    for f in reals {
        if f.dtype != first.dtype || f.offset != first.offset + k * elem {
            return Err(ErrorKind::NotContiguous.into());
        }
        k += 1;
    }
    let n = i64::try_from(len).map_err(|_| ErrorKind::SpanOverflow)?;
    let data = first_element(base.cast(), len, first.offset, elem)?;
    Ok(StridedLayout {
        data,
        device,
        dtype: first.dtype,
        shape: [n, k as i64],
        strides: [stride, 1],
        ndim: 2,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn particle_fields_in_order() {
        type P = Particle<2, 1>;
        assert_eq!(P::NUM_FIELDS, 7);
        let kinds: [FieldKind; 7] = core::array::from_fn(|i| P::field(i).unwrap().kind);
        assert_eq!(
            kinds,
            [
                FieldKind::Position(0),
                FieldKind::Position(1),
                FieldKind::Position(2),
                FieldKind::Real(0),
                FieldKind::Real(1),
                FieldKind::IdCpu,
                FieldKind::Int(0),
            ]
        );
        assert!(P::field(7).is_none());
        let r = size_of::<ParticleReal>();
        assert_eq!(P::find(FieldKind::Real(1)).unwrap().offset, 4 * r);
        assert_eq!(
            P::find(FieldKind::IdCpu).unwrap().offset,
            offset_of!(P, idcpu)
        );
        assert!(P::find(FieldKind::Int(1)).is_none());
    }

    #[test]
    fn strides_are_struct_size_over_element() {
        type P = Particle<2, 1>;
        let v = [P::default(); 4];
        let r = size_of::<ParticleReal>();
        for (kind, elem) in [
            (FieldKind::Position(1), r),
            (FieldKind::Real(0), r),
            (FieldKind::IdCpu, 8),
            (FieldKind::Int(0), 4),
        ] {
            let f = P::find(kind).unwrap();
            let l = field_layout(v.as_ptr(), 4, Device::CPU, f).unwrap();
            assert_eq!(l.shape(), &[4]);
            assert_eq!(l.strides(), &[(size_of::<P>() / elem) as i64]);
            assert_eq!(l.data().addr(), v.as_ptr().addr() + f.offset);
        }
        let b = real_block_layout(v.as_ptr(), 4, Device::CPU).unwrap();
        assert_eq!(b.shape(), &[4, 5]);
        assert_eq!(b.strides(), &[(size_of::<P>() / r) as i64, 1]);
        let e = field_layout(v.as_ptr(), 0, Device::CPU, P::field(0).unwrap()).unwrap();
        assert!(e.data().is_null());
    }

    /// A packed struct whose size (9 bytes) is no multiple of 8.
    #[repr(C, packed)]
    #[derive(Clone, Copy)]
    struct Odd {
        x: f64,
        tag: u8,
    }

    // SAFETY: no padding; zero is a valid f64 and u8.
    unsafe impl bytemuck::Zeroable for Odd {}
    // SAFETY: every bit pattern of `f64` and `u8` is valid; `Copy + 'static`.
    unsafe impl bytemuck::AnyBitPattern for Odd {}

    // SAFETY: `x` at 0 (8 bytes), `tag` at 8 (1 byte): inside the 9-byte struct,
    // initialised, disjoint, valid for every bit pattern.
    unsafe impl ParticleLayout for Odd {
        const NUM_FIELDS: usize = 2;
        fn field(index: usize) -> Option<Field> {
            match index {
                0 => Some(Field {
                    kind: FieldKind::Position(0),
                    offset: 0,
                    dtype: DataType::F64,
                }),
                1 => Some(Field {
                    kind: FieldKind::Int(0),
                    offset: 8,
                    dtype: DataType::U8,
                }),
                _ => None,
            }
        }
    }

    #[test]
    fn fractional_stride_is_refused() {
        let v = [Odd { x: 1.0, tag: 2 }; 3];
        assert_eq!({ v[1].x }, 1.0);
        assert_eq!({ v[1].tag }, 2);
        let err = field_layout(v.as_ptr(), 3, Device::CPU, Odd::field(0).unwrap()).unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::Unsupported(m) if m.contains("whole number")));
        // A one-byte field has a whole stride (9) and is fine.
        let ok = field_layout(v.as_ptr(), 3, Device::CPU, Odd::field(1).unwrap()).unwrap();
        assert_eq!(ok.strides(), &[9]);
        assert!(real_block_layout(v.as_ptr(), 3, Device::CPU).is_err());
    }
}
