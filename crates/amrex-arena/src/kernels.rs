//! Element-wise kernels, reductions and batched region copies that run where an arena's
//! memory lives: CUDA kernels for CUDA device and managed memory, host loops for host
//! memory (and for the test stand-in `testing::FakeDeviceArena`, feature `testing`).
//!
//! The unit of work is a [`Region`]: a 4-D block `(i, j, k, n)` of elements, `i`
//! contiguous, with element strides for `j`, `k` and `n`. That is exactly a box of
//! components of an AMReX fab, so containers above this crate translate their boxes into
//! regions and call the [`Kernels`] of their arena; the kernels know nothing of boxes.
//!
//! The CUDA kernels are compiled without fused multiply-add contraction, so that each
//! element-wise operation rounds as the host loops do: on one NVIDIA H200 the results
//! were bit for bit the host's (`amrex-multifab`'s `tests/device_ops.rs`), which is a
//! measurement on that GPU, not a proof for every GPU. Reductions fold in a fixed order
//! for a given region, which on a device is not the host's order. HIP and
//! Level Zero memory has no kernels: their arenas return [`ErrorKind::NoKernels`].

use crate::{Arena, ArenaError, ErrorKind, HostArena, MemoryKind};
use amrex_dlpack_core::Device;
use core::any::TypeId;
use core::ops::{Add, Mul};
use core::ptr::NonNull;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// An element type the kernels are built for: `f32` and `f64`.
pub trait KernelElement:
    Copy + Send + Sync + PartialOrd + Add<Output = Self> + Mul<Output = Self> + sealed::Sealed + 'static
{
    /// The suffix of the kernels' names (`"f32"`, `"f64"`).
    const NAME: &'static str;
    /// `0`.
    const ZERO: Self;
    /// Widening conversion (exact).
    fn to_f64(self) -> f64;
    /// Narrowing conversion (exact for values that came from [`to_f64`](Self::to_f64)).
    fn from_f64(v: f64) -> Self;
    /// `|self|`.
    fn abs(self) -> Self;
}

impl KernelElement for f32 {
    const NAME: &'static str = "f32";
    const ZERO: Self = 0.0;
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn abs(self) -> Self {
        f32::from_bits(self.to_bits() & !(1 << 31))
    }
}

impl KernelElement for f64 {
    const NAME: &'static str = "f64";
    const ZERO: Self = 0.0;
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(v: f64) -> Self {
        v
    }
    fn abs(self) -> Self {
        f64::from_bits(self.to_bits() & !(1 << 63))
    }
}

/// A 4-D block of elements in an arena's memory: `len = [ni, nj, nk, nc]`, element
/// `(i, j, k, n)` at `ptr + (i + j*stride[0] + k*stride[1] + n*stride[2]) * size_of::<T>()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// Element `(0, 0, 0, 0)`, in the arena's address space (a device pointer on a device).
    pub ptr: NonNull<u8>,
    /// Extents along `i`, `j`, `k` and the component axis.
    pub len: [usize; 4],
    /// Element strides of `j`, `k` and the component axis (`i` is contiguous).
    pub stride: [usize; 3],
}

// SAFETY: a region is a description (address and extents); it grants access only through
// the `unsafe` kernel calls, whose callers prove the memory is theirs to use.
unsafe impl Send for Region {}
// SAFETY: as above.
unsafe impl Sync for Region {}

impl Region {
    /// Number of elements.
    pub fn count(&self) -> usize {
        self.len.iter().product()
    }

    /// Whether the region has no element.
    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }

    /// Element offset of `(i, j, k, n)`.
    #[inline(always)]
    fn offset(&self, j: usize, k: usize, n: usize) -> usize {
        j * self.stride[0] + k * self.stride[1] + n * self.stride[2]
    }

    /// The same region at another address (the test arena moves between address spaces).
    pub fn at(self, ptr: NonNull<u8>) -> Self {
        Self { ptr, ..self }
    }

    /// `Ok` when `other` has the same extents.
    ///
    /// # Errors
    /// [`ErrorKind::LengthMismatch`] on the element counts otherwise.
    pub fn check_same_shape(&self, other: &Region) -> Result<(), ArenaError> {
        if self.len == other.len {
            Ok(())
        } else {
            Err(ErrorKind::LengthMismatch {
                expected: self.count(),
                found: other.count(),
            }
            .into())
        }
    }
}

/// An operation on one region: `dst = op(dst)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Unary<T> {
    /// `dst = v` (AMReX `setVal`).
    Set(T),
    /// `dst += v` (`plus`).
    Add(T),
    /// `dst *= v` (`mult`).
    Scale(T),
}

/// An operation on two regions of one shape: `dst = op(dst, src)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Binary<T> {
    /// `dst = src` (`Copy`).
    Copy,
    /// `dst += src` (`Add`).
    Add,
    /// `dst += a * src` (`Saxpy`).
    Axpy(T),
    /// `dst = src + a * dst` (`Xpay`).
    Xpay(T),
}

/// A reduction of one region to a number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reduce {
    /// Sum, accumulated in `f64`.
    Sum,
    /// Sum of squares, in `f64` (`norm2` is its square root).
    SumSquares,
    /// Sum of absolute values, in `f64` (`norm1`).
    SumAbs,
    /// Largest absolute value (`norm0`), `0` for an empty region.
    MaxAbs,
    /// Smallest value; the type's largest value for an empty region.
    Min,
    /// Largest value; the type's lowest value for an empty region.
    Max,
}

impl Reduce {
    /// Folds two partial results.
    pub fn fold(self, a: f64, b: f64) -> f64 {
        match self {
            Self::Sum | Self::SumSquares | Self::SumAbs => a + b,
            Self::MaxAbs | Self::Max => {
                if b > a {
                    b
                } else {
                    a
                }
            }
            Self::Min => {
                if b < a {
                    b
                } else {
                    a
                }
            }
        }
    }

    /// The result for no elements (the fold's identity).
    pub fn identity(self) -> f64 {
        match self {
            Self::Sum | Self::SumSquares | Self::SumAbs | Self::MaxAbs => 0.0,
            Self::Min => f64::INFINITY,
            Self::Max => f64::NEG_INFINITY,
        }
    }
}

/// Work an arena runs on its own memory.
///
/// Implemented for the host arena and pinned arenas (host loops), for the CUDA device and
/// managed arenas (CUDA kernels compiled at run time with NVRTC, see
/// [`cuda`](crate::cuda)), and for the test stand-in. Arenas without kernels (HIP and
/// Level Zero device memory, for now) return [`ErrorKind::NoKernels`].
///
/// Work may be queued and still running when a call returns (on the device's default
/// stream, in order); [`Arena::synchronize`] waits for it, and every copy to the host
/// does. Reductions return their value, so they wait.
///
/// # Safety (every method)
/// 1. Each region lies in a live allocation of this arena (or a clone) for every element
///    its extents and strides reach, and its pointer is aligned for `T`.
/// 2. Nothing else reads or writes a destination region while the call and the work it
///    queued run; within one call, a destination overlaps no source region (a region of
///    a [`Binary`] operation may be both its destination and its source only when it is
///    the same region).
pub trait Kernels: Arena + 'static {
    /// Which memory this arena's kernels reach. Two arenas whose spaces are equal run
    /// kernels on each other's memory: the same arena type (so the same backend and the
    /// same kind of pointer), device and kind. A stand-in that reports a real device
    /// (the test arena says `kDLCUDA:0`) is a different type, so its space differs from
    /// the real arena's even where the device and kind agree. [`AnyArena`](crate::AnyArena)
    /// reports the space of the arena inside.
    fn memory_space(&self) -> MemorySpace {
        MemorySpace {
            arena: TypeId::of::<Self>(),
            device: self.device(),
            kind: self.kind(),
        }
    }

    /// Whether the callers' own host loops should do the work on this arena's memory
    /// instead of these kernels: `true` for memory the CPU may always dereference (host
    /// and pinned memory), whose containers run their tiled, threaded loops on it;
    /// `false` (the default) for memory whose work must go through these kernels
    /// (device and managed memory, the test stand-in). Callers still check that the
    /// memory is host accessible before they dereference it.
    fn host_loops(&self) -> bool {
        false
    }

    /// `dst = op(dst)` element by element.
    ///
    /// # Safety
    /// See the trait.
    ///
    /// # Errors
    /// The backend's failure.
    unsafe fn apply<T: KernelElement>(&self, dst: Region, op: Unary<T>) -> Result<(), ArenaError>;

    /// `dst = op(dst, src)` element by element; the regions have one shape.
    ///
    /// # Safety
    /// See the trait.
    ///
    /// # Errors
    /// [`ErrorKind::LengthMismatch`] when the shapes differ, or the backend's failure.
    unsafe fn combine<T: KernelElement>(
        &self,
        dst: Region,
        src: Region,
        op: Binary<T>,
    ) -> Result<(), ArenaError>;

    /// Reduces `src`; the identity of `op` when it is empty.
    ///
    /// # Safety
    /// See the trait.
    ///
    /// # Errors
    /// The backend's failure.
    unsafe fn reduce<T: KernelElement>(&self, src: Region, op: Reduce) -> Result<f64, ArenaError>;

    /// `sum(x * y)`, accumulated in `f64`; the regions have one shape.
    ///
    /// # Safety
    /// See the trait.
    ///
    /// # Errors
    /// [`ErrorKind::LengthMismatch`] when the shapes differ, or the backend's failure.
    unsafe fn dot<T: KernelElement>(&self, x: Region, y: Region) -> Result<f64, ArenaError>;

    /// Copies each `(dst, src)` pair (same shape), in the given [`CopyOrder`]:
    /// [`CopyOrder::InOrder`] applies them one after another, so where destinations
    /// overlap the last pair wins; with [`CopyOrder::Concurrent`] they may run
    /// concurrently and destinations must not overlap.
    ///
    /// # Safety
    /// See the trait; additionally no destination overlaps any source of the batch.
    ///
    /// # Errors
    /// [`ErrorKind::LengthMismatch`] when a pair's shapes differ, or the backend's failure.
    unsafe fn copy_regions<T: KernelElement>(
        &self,
        pairs: &[(Region, Region)],
        order: CopyOrder,
    ) -> Result<(), ArenaError>;
}

/// The memory an arena's kernels reach ([`Kernels::memory_space`]): equal spaces mean
/// that one arena's kernels may run on the other's memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemorySpace {
    arena: TypeId,
    device: Device,
    kind: MemoryKind,
}

impl MemorySpace {
    /// The device the memory is on.
    pub fn device(&self) -> Device {
        self.device
    }

    /// The kind of memory.
    pub fn kind(&self) -> MemoryKind {
        self.kind
    }
}

/// In which order [`Kernels::copy_regions`] applies its pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CopyOrder {
    /// One after another, so where destinations overlap the last pair wins.
    InOrder,
    /// Possibly concurrently: the destinations must not overlap.
    Concurrent,
}

/// The kernels as host loops over host memory: the host arenas' implementation, and the
/// reference the device kernels are tested against.
pub mod host {
    use super::{Binary, KernelElement, Reduce, Region, Unary};
    use crate::ArenaError;

    /// Calls `f(row_ptr)` for every `i`-row of `r`, in `j`, `k`, `n` order.
    #[inline(always)]
    fn rows<T>(r: &Region, mut f: impl FnMut(*mut T)) {
        let base = r.ptr.as_ptr().cast::<T>();
        for n in 0..r.len[3] {
            for k in 0..r.len[2] {
                for j in 0..r.len[1] {
                    // The caller's obligation 1 (see `Kernels`): every row lies in the
                    // allocation; `wrapping_add` keeps this computation itself safe.
                    f(base.wrapping_add(r.offset(j, k, n)));
                }
            }
        }
    }

    /// Host `apply`.
    ///
    /// # Safety
    /// As [`Kernels::apply`](super::Kernels::apply), with host memory.
    pub unsafe fn apply<T: KernelElement>(dst: Region, op: Unary<T>) -> Result<(), ArenaError> {
        let ni = dst.len[0];
        rows::<T>(&dst, |p| {
            // SAFETY: the row `p..p+ni` lies in the destination (obligation 1) and nothing
            // else touches it (obligation 2).
            let row = unsafe { core::slice::from_raw_parts_mut(p, ni) };
            match op {
                Unary::Set(v) => row.fill(v),
                Unary::Add(v) => row.iter_mut().for_each(|x| *x = *x + v),
                Unary::Scale(v) => row.iter_mut().for_each(|x| *x = *x * v),
            }
        });
        Ok(())
    }

    /// Host `combine`.
    ///
    /// # Safety
    /// As [`Kernels::combine`](super::Kernels::combine), with host memory.
    pub unsafe fn combine<T: KernelElement>(
        dst: Region,
        src: Region,
        op: Binary<T>,
    ) -> Result<(), ArenaError> {
        dst.check_same_shape(&src)?;
        let ni = dst.len[0];
        let (sb, db) = (src.ptr.as_ptr().cast::<T>(), dst.ptr.as_ptr().cast::<T>());
        for n in 0..dst.len[3] {
            for k in 0..dst.len[2] {
                for j in 0..dst.len[1] {
                    let d = db.wrapping_add(dst.offset(j, k, n));
                    let s = sb.wrapping_add(src.offset(j, k, n)).cast_const();
                    let f = |x: T, y: T| match op {
                        Binary::Copy => x,
                        Binary::Add => y + x,
                        Binary::Axpy(a) => y + a * x,
                        Binary::Xpay(a) => x + a * y,
                    };
                    // SAFETY: the row lies in the destination region (obligation 1), which
                    // nothing else touches (obligation 2).
                    let drow = unsafe { core::slice::from_raw_parts_mut(d, ni) };
                    if core::ptr::eq(d.cast_const(), s) {
                        // The permitted `dst == src` case: one row, read then written.
                        drow.iter_mut().for_each(|y| *y = f(*y, *y));
                    } else {
                        // SAFETY: the row lies in the source region (obligation 1), which
                        // does not overlap the destination (obligation 2).
                        let srow = unsafe { core::slice::from_raw_parts(s, ni) };
                        drow.iter_mut().zip(srow).for_each(|(y, &x)| *y = f(x, *y));
                    }
                }
            }
        }
        Ok(())
    }

    /// Host `reduce`, folding in `i`, `j`, `k`, `n` order.
    ///
    /// # Safety
    /// As [`Kernels::reduce`](super::Kernels::reduce), with host memory.
    pub unsafe fn reduce<T: KernelElement>(src: Region, op: Reduce) -> Result<f64, ArenaError> {
        let mut acc = op.identity();
        let ni = src.len[0];
        rows::<T>(&src, |p| {
            // SAFETY: the row lies in the region (obligation 1).
            let row = unsafe { core::slice::from_raw_parts(p.cast_const(), ni) };
            for &x in row {
                let v = x.to_f64();
                acc = match op {
                    Reduce::Sum => acc + v,
                    Reduce::SumSquares => acc + v * v,
                    Reduce::SumAbs => acc + x.abs().to_f64(),
                    Reduce::MaxAbs => op.fold(acc, x.abs().to_f64()),
                    Reduce::Min | Reduce::Max => op.fold(acc, v),
                };
            }
        });
        Ok(acc)
    }

    /// Host `dot`.
    ///
    /// # Safety
    /// As [`Kernels::dot`](super::Kernels::dot), with host memory.
    pub unsafe fn dot<T: KernelElement>(x: Region, y: Region) -> Result<f64, ArenaError> {
        x.check_same_shape(&y)?;
        let (xb, yb) = (x.ptr.as_ptr().cast::<T>(), y.ptr.as_ptr().cast::<T>());
        let mut acc = 0.0;
        for n in 0..x.len[3] {
            for k in 0..x.len[2] {
                for j in 0..x.len[1] {
                    let xp = xb.wrapping_add(x.offset(j, k, n)).cast_const();
                    let yp = yb.wrapping_add(y.offset(j, k, n)).cast_const();
                    // SAFETY: both rows lie in their regions (obligation 1); both are read.
                    let xr = unsafe { core::slice::from_raw_parts(xp, x.len[0]) };
                    // SAFETY: as above.
                    let yr = unsafe { core::slice::from_raw_parts(yp, x.len[0]) };
                    for (a, b) in xr.iter().zip(yr) {
                        acc += a.to_f64() * b.to_f64();
                    }
                }
            }
        }
        Ok(acc)
    }

    /// Host `copy_regions`, always in order.
    ///
    /// # Safety
    /// As [`Kernels::copy_regions`](super::Kernels::copy_regions), with host memory.
    pub unsafe fn copy_regions<T: KernelElement>(
        pairs: &[(Region, Region)],
    ) -> Result<(), ArenaError> {
        for (d, s) in pairs {
            d.check_same_shape(s)?;
        }
        for &(d, s) in pairs {
            // SAFETY: forwarded; copying is `combine` with `Copy`.
            unsafe { combine::<T>(d, s, Binary::Copy)? };
        }
        Ok(())
    }
}

/// Implements [`Kernels`] with the [`host`] loops, for arenas whose memory the CPU may
/// dereference directly.
macro_rules! host_kernels {
    ($($t:ty),+ $(,)?) => {$(
        impl $crate::kernels::Kernels for $t {
            fn host_loops(&self) -> bool {
                true
            }
            unsafe fn apply<T: $crate::kernels::KernelElement>(&self, dst: $crate::kernels::Region, op: $crate::kernels::Unary<T>) -> Result<(), $crate::ArenaError> {
                // SAFETY: forwarded obligations; this arena's memory is host memory.
                unsafe { $crate::kernels::host::apply(dst, op) }
            }
            unsafe fn combine<T: $crate::kernels::KernelElement>(&self, dst: $crate::kernels::Region, src: $crate::kernels::Region, op: $crate::kernels::Binary<T>) -> Result<(), $crate::ArenaError> {
                // SAFETY: as above.
                unsafe { $crate::kernels::host::combine(dst, src, op) }
            }
            unsafe fn reduce<T: $crate::kernels::KernelElement>(&self, src: $crate::kernels::Region, op: $crate::kernels::Reduce) -> Result<f64, $crate::ArenaError> {
                // SAFETY: as above.
                unsafe { $crate::kernels::host::reduce::<T>(src, op) }
            }
            unsafe fn dot<T: $crate::kernels::KernelElement>(&self, x: $crate::kernels::Region, y: $crate::kernels::Region) -> Result<f64, $crate::ArenaError> {
                // SAFETY: as above.
                unsafe { $crate::kernels::host::dot::<T>(x, y) }
            }
            unsafe fn copy_regions<T: $crate::kernels::KernelElement>(&self, pairs: &[($crate::kernels::Region, $crate::kernels::Region)], _order: $crate::kernels::CopyOrder) -> Result<(), $crate::ArenaError> {
                // SAFETY: as above.
                unsafe { $crate::kernels::host::copy_regions::<T>(pairs) }
            }
        }
    )+};
}
#[cfg(any(feature = "cuda", feature = "hip", feature = "level-zero"))]
pub(crate) use host_kernels;

host_kernels!(HostArena);

/// Implements [`Kernels`] by refusing: the arena has memory but no kernels yet.
#[cfg(any(feature = "hip", feature = "level-zero"))]
macro_rules! no_kernels {
    ($backend:expr; $($t:ty),+ $(,)?) => {$(
        impl $crate::kernels::Kernels for $t {
            unsafe fn apply<T: $crate::kernels::KernelElement>(&self, _: $crate::kernels::Region, _: $crate::kernels::Unary<T>) -> Result<(), $crate::ArenaError> {
                Err($crate::ErrorKind::NoKernels($backend).into())
            }
            unsafe fn combine<T: $crate::kernels::KernelElement>(&self, _: $crate::kernels::Region, _: $crate::kernels::Region, _: $crate::kernels::Binary<T>) -> Result<(), $crate::ArenaError> {
                Err($crate::ErrorKind::NoKernels($backend).into())
            }
            unsafe fn reduce<T: $crate::kernels::KernelElement>(&self, _: $crate::kernels::Region, _: $crate::kernels::Reduce) -> Result<f64, $crate::ArenaError> {
                Err($crate::ErrorKind::NoKernels($backend).into())
            }
            unsafe fn dot<T: $crate::kernels::KernelElement>(&self, _: $crate::kernels::Region, _: $crate::kernels::Region) -> Result<f64, $crate::ArenaError> {
                Err($crate::ErrorKind::NoKernels($backend).into())
            }
            unsafe fn copy_regions<T: $crate::kernels::KernelElement>(&self, _: &[($crate::kernels::Region, $crate::kernels::Region)], _: $crate::kernels::CopyOrder) -> Result<(), $crate::ArenaError> {
                Err($crate::ErrorKind::NoKernels($backend).into())
            }
        }
    )+};
}
#[cfg(any(feature = "hip", feature = "level-zero"))]
pub(crate) use no_kernels;

/// A region's pointer, checked non-null (a helper for callers building regions from raw
/// pointers).
///
/// # Errors
/// [`ErrorKind::Unsupported`] for NULL.
pub fn region_ptr<T>(p: *const T) -> Result<NonNull<u8>, ArenaError> {
    NonNull::new(p.cast_mut().cast()).ok_or(ArenaError::new(ErrorKind::Unsupported(
        "a NULL region pointer",
    )))
}
