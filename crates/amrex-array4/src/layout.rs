//! [`FabLayout`]: the one description of how AMReX lays out a box with components, and
//! the one DLPack importer of such layouts.

use core::ptr::NonNull;

use amrex_box::{IndexBox, IntVect};
use amrex_dlpack_core::{DlpackElement, DlpackError, ErrorKind, TensorView};

use crate::error::Array4Error;

/// How an imported tensor will be used, which decides what its strides must satisfy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Read only: strides may reach one element from several indices.
    ReadOnly,
    /// Written: distinct indices must reach distinct elements.
    Writable,
}

/// Where the elements of a box with `ncomp` components sit, relative to element
/// `(begin.x, begin.y, begin.z, 0)`: element `(i, j, k, n)` is at offset
/// `(i - begin.x) + (j - begin.y)*jstride + (k - begin.z)*kstride + n*nstride` (the `i`
/// stride is always 1, as in AMReX's `Array4`).
///
/// Every container describes its memory with this type: `Array4`/`Array4Mut` (a pointer
/// plus a layout), `BaseFab`, each fab of a `FabArray`, and their DLPack exports
/// ([`dlpack_shape`](Self::dlpack_shape) / [`dlpack_strides`](Self::dlpack_strides),
/// pyAMReX's `(ncomp, nz, ny, nx)` / `(nstride, kstride, jstride, 1)`) and imports
/// ([`from_dlpack`](Self::from_dlpack)). A layout describes memory; it grants no access.
///
/// Invariants (every constructor establishes them):
/// 1. `begin <= end` component-wise, and `begin .. end` lies in the `i32` index space
///    (each length `end - begin` is at most `i32::MAX`).
/// 2. The largest offset of an element, and the element count, fit `usize`.
///
/// ```
/// use amrex_array4::{FabLayout, IndexBox, IntVect};
/// let bx = IndexBox::new(IntVect::new(-1, 0, 0), IntVect::new(2, 1, 0));
/// let l = FabLayout::compact(&bx, 2)?;
/// assert_eq!(l.strides(), [4, 8, 8]);
/// assert_eq!(l.dlpack_shape(), [2, 1, 2, 4]);
/// assert_eq!(l.offset(2, 1, 0, 1), Some(3 + 4 + 8));
/// assert_eq!(l.offset(3, 0, 0, 0), None);
/// # Ok::<(), amrex_array4::Array4Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FabLayout {
    pub(crate) begin: IntVect,
    pub(crate) end: IntVect,
    pub(crate) jstride: usize,
    pub(crate) kstride: usize,
    pub(crate) nstride: usize,
    pub(crate) ncomp: usize,
}

/// Offset of `i` from `b` when `b <= i < e`, for `b <= e` (invariant 1 of
/// [`FabLayout`]).
#[inline(always)]
#[expect(
    clippy::cast_possible_truncation,
    reason = "d < len = e - b <= u32::MAX as b <= e, and usize has at least 32 bits (lib.rs)"
)]
fn rel(i: i32, b: i32, e: i32) -> Option<usize> {
    debug_assert!(b <= e);
    // Differences of two i32 fit i64; a negative one wraps to a huge u64 and fails.
    let d = (i64::from(i) - i64::from(b)).cast_unsigned();
    let len = (i64::from(e) - i64::from(b)).cast_unsigned();
    (d < len).then_some(d as usize)
}

impl FabLayout {
    /// The compact (AMReX) layout of `bx` with `ncomp` components: `jstride = nx`,
    /// `kstride = nx*ny`, `nstride = nx*ny*nz`. The one place the compact-stride rule is
    /// written.
    ///
    /// # Errors
    /// [`Array4Error::OutsideIndexSpace`] if the box leaves the `i32` index space,
    /// [`Array4Error::TooLarge`] if the element count overflows `usize`.
    pub fn compact(bx: &IndexBox, ncomp: usize) -> Result<Self, Array4Error> {
        let begin = bx.lo();
        // An empty direction gets `end = begin` (zero extent).
        let end = bx.try_end().map_err(Array4Error::OutsideIndexSpace)?;
        let mut l = Self {
            begin,
            end,
            jstride: 0,
            kstride: 0,
            nstride: 0,
            ncomp,
        };
        let nx = l.len_dir(0);
        let nxy = nx.checked_mul(l.len_dir(1)).ok_or(Array4Error::TooLarge)?;
        let cells = nxy.checked_mul(l.len_dir(2)).ok_or(Array4Error::TooLarge)?;
        cells.checked_mul(ncomp).ok_or(Array4Error::TooLarge)?;
        (l.jstride, l.kstride, l.nstride) = (nx, nxy, cells);
        Ok(l)
    }

    /// A layout with explicit strides `[jstride, kstride, nstride]` over `begin .. end`
    /// (AMReX's `Array4(p, begin, end, ncomp)` without the pointer).
    ///
    /// # Errors
    /// [`Array4Error::OutsideIndexSpace`] if `begin .. end` is not a box of the index
    /// space (`begin > end` somewhere, or a length above `i32::MAX`);
    /// [`Array4Error::TooLarge`] if the largest offset overflows `usize`.
    pub fn with_strides(
        begin: IntVect,
        end: IntVect,
        strides: [usize; 3],
        ncomp: usize,
    ) -> Result<Self, Array4Error> {
        let len: [i64; 3] = core::array::from_fn(|d| i64::from(end[d]) - i64::from(begin[d]));
        if let Some(dir) = len.iter().position(|&n| n < 0) {
            return Err(Array4Error::OutsideIndexSpace(
                amrex_box::IndexSpaceError::Overflow {
                    dir,
                    lo: i64::from(begin[dir]),
                    end: i64::from(end[dir]),
                },
            ));
        }
        IndexBox::try_from_lo_len(begin, len).map_err(Array4Error::OutsideIndexSpace)?;
        let [jstride, kstride, nstride] = strides;
        let l = Self {
            begin,
            end,
            jstride,
            kstride,
            nstride,
            ncomp,
        };
        if !l.is_empty() && l.max_offset().is_none() {
            return Err(Array4Error::TooLarge);
        }
        Ok(l)
    }

    /// Inclusive low corner.
    #[inline]
    #[must_use]
    pub fn begin(&self) -> IntVect {
        self.begin
    }

    /// Exclusive high corner (`big_end + 1`; `begin` in an empty direction).
    #[inline]
    #[must_use]
    pub fn end(&self) -> IntVect {
        self.end
    }

    /// Number of components.
    #[inline]
    #[must_use]
    pub fn ncomp(&self) -> usize {
        self.ncomp
    }

    /// `[jstride, kstride, nstride]` in elements (the `i` stride is 1).
    #[inline]
    #[must_use]
    pub fn strides(&self) -> [usize; 3] {
        [self.jstride, self.kstride, self.nstride]
    }

    /// Length in direction `d` (`end - begin`).
    #[inline(always)]
    #[must_use]
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "invariant 1: 0 <= end - begin <= i32::MAX, and usize has at least 32 bits (lib.rs)"
    )]
    pub fn len_dir(&self, d: usize) -> usize {
        debug_assert!(self.begin[d] <= self.end[d]);
        (i64::from(self.end[d]) - i64::from(self.begin[d])) as usize
    }

    /// Number of elements (`nx * ny * nz * ncomp`); invariant 2 makes it exact.
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        let dims = [
            self.len_dir(0),
            self.len_dir(1),
            self.len_dir(2),
            self.ncomp,
        ];
        if dims.contains(&0) {
            return 0;
        }
        dims.iter().fold(1usize, |acc, &d| acc.saturating_mul(d))
    }

    /// Whether there are no elements.
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The largest element offset, `None` when empty or if it overflows `usize`.
    #[must_use]
    pub fn max_offset(&self) -> Option<usize> {
        if self.is_empty() {
            return None;
        }
        (self.len_dir(0) - 1)
            .checked_add((self.len_dir(1) - 1).checked_mul(self.jstride)?)?
            .checked_add((self.len_dir(2) - 1).checked_mul(self.kstride)?)?
            .checked_add((self.ncomp - 1).checked_mul(self.nstride)?)
    }

    /// Whether the strides are the compact ones (axes of extent 1 may carry any stride).
    #[must_use]
    pub fn is_compact(&self) -> bool {
        let (nx, ny, nz) = (self.len_dir(0), self.len_dir(1), self.len_dir(2));
        self.is_empty()
            || ((ny <= 1 || self.jstride == nx)
                && (nz <= 1 || self.kstride == nx * ny)
                && (self.ncomp <= 1 || self.nstride == nx * ny * nz))
    }

    /// Whether distinct indices reach distinct elements (what a writable view needs).
    #[must_use]
    pub fn is_non_overlapping(&self) -> bool {
        !amrex_dlpack_core::strides_overlap(&mut [
            (1usize, self.len_dir(0)),
            (self.jstride, self.len_dir(1)),
            (self.kstride, self.len_dir(2)),
            (self.nstride, self.ncomp),
        ])
    }

    /// The bounds as a cell-centred box `begin ..= end - 1`.
    #[inline]
    #[must_use]
    pub fn index_box(&self) -> IndexBox {
        // Invariant 1: end - 1 >= begin - 1 >= i32::MIN when empty, as boxes of the
        // index space never start at i32::MIN with zero length.
        IndexBox::new(self.begin, self.end - 1)
    }

    /// Whether `(i, j, k)` lies inside the bounds.
    #[inline(always)]
    #[must_use]
    pub fn contains(&self, i: i32, j: i32, k: i32) -> bool {
        rel(i, self.begin[0], self.end[0]).is_some()
            && rel(j, self.begin[1], self.end[1]).is_some()
            && rel(k, self.begin[2], self.end[2]).is_some()
    }

    /// Whether `p` lies inside the bounds.
    #[inline(always)]
    #[must_use]
    pub fn contains_iv(&self, p: IntVect) -> bool {
        self.contains(p[0], p[1], p[2])
    }

    /// Whether `(j, k)` is in bounds and `n < ncomp` (whatever the `i` extent).
    #[inline(always)]
    #[must_use]
    pub fn row_in_bounds(&self, j: i32, k: i32, n: usize) -> bool {
        rel(j, self.begin[1], self.end[1]).is_some()
            && rel(k, self.begin[2], self.end[2]).is_some()
            && n < self.ncomp
    }

    /// Whether `bx` (any index type) is non-empty and inside the bounds.
    #[inline]
    #[must_use]
    pub fn covers(&self, bx: &IndexBox) -> bool {
        bx.ok() && self.contains_iv(bx.lo()) && self.contains_iv(bx.hi())
    }

    /// Element offset of `(i, j, k, n)`, `None` out of bounds.
    #[inline(always)]
    #[must_use]
    pub fn offset(&self, i: i32, j: i32, k: i32, n: usize) -> Option<usize> {
        let di = rel(i, self.begin[0], self.end[0])?;
        let dj = rel(j, self.begin[1], self.end[1])?;
        let dk = rel(k, self.begin[2], self.end[2])?;
        if n >= self.ncomp {
            return None;
        }
        // In bounds, so at most `max_offset`, which fits usize (invariant 2).
        Some(di + dj * self.jstride + dk * self.kstride + n * self.nstride)
    }

    /// Element offset without bounds checks (only meaningful in bounds).
    #[inline(always)]
    #[must_use]
    pub fn offset_unchecked(&self, i: i32, j: i32, k: i32, n: usize) -> isize {
        // `cast_signed` as `as isize` did: in bounds, a stride of an axis longer than 1
        // reaches elements of one allocation, so it fits isize; that of an axis of length
        // 1 may not, but it only ever multiplies 0.
        let d = |x: i32, b: i32| x as isize - b as isize;
        d(i, self.begin[0])
            + d(j, self.begin[1]) * self.jstride.cast_signed()
            + d(k, self.begin[2]) * self.kstride.cast_signed()
            + n.cast_signed() * self.nstride.cast_signed()
    }

    /// The DLPack shape `(ncomp, nz, ny, nx)`.
    #[must_use]
    pub fn dlpack_shape(&self) -> [i64; 4] {
        // Invariant 2: every extent fits usize, and lengths are at most i32::MAX; the
        // component count of a real allocation fits isize.
        let c = |v: usize| i64::try_from(v).unwrap_or(i64::MAX);
        [
            c(self.ncomp),
            c(self.len_dir(2)),
            c(self.len_dir(1)),
            c(self.len_dir(0)),
        ]
    }

    /// The DLPack strides `(nstride, kstride, jstride, 1)` in elements.
    #[must_use]
    pub fn dlpack_strides(&self) -> [i64; 4] {
        let c = |v: usize| i64::try_from(v).unwrap_or(i64::MAX);
        [c(self.nstride), c(self.kstride), c(self.jstride), 1]
    }

    /// The layout of a rank 1–4 DLPack tensor read as `(nx)`, `(ny, nx)`,
    /// `(nz, ny, nx)` or `(ncomp, nz, ny, nx)` (pyAMReX's rule: missing leading axes have
    /// extent 1), with its box starting at `begin`: the one importer every container
    /// uses. Checks, in order: the rank, no negative stride on an axis longer than 1,
    /// unit stride along `i`, the box inside the `i32` index space and, for
    /// [`Access::Writable`] imports, strides under which distinct indices reach distinct elements. Strides of
    /// axes of extent 1 are never used and get the value that continues the faster axes
    /// (`jstride * ny` for an unused `kstride`, and so on). The dtype, device
    /// and first element are checked by [`first_element`](Self::first_element).
    ///
    /// # Errors
    /// `RankMismatch`, `NegativeStride`, `NonUnitStride`, `OutsideIndexSpace`,
    /// `OverlappingStrides`.
    pub fn from_dlpack(
        view: &TensorView<'_>,
        begin: IntVect,
        access: Access,
    ) -> Result<Self, DlpackError> {
        let ndim = view.ndim();
        if !(1..=4).contains(&ndim) {
            return Err(ErrorKind::RankMismatch {
                expected: 4,
                // At most i32::MAX: DLPack's `ndim` is an `int32_t`.
                found: i32::try_from(ndim).unwrap_or(i32::MAX),
            }
            .into());
        }
        // Pad to (ncomp, nz, ny, nx): tensor axis `a` is slot `4 - ndim + a`.
        let mut ext = [1i64; 4];
        let mut st = [0i64; 4];
        for (axis, (&e, s)) in view.shape().iter().zip(view.strides()).enumerate() {
            if e > 1 && s < 0 {
                return Err(ErrorKind::NegativeStride { axis, stride: s }.into());
            }
            ext[4 - ndim + axis] = e;
            st[4 - ndim + axis] = s;
        }
        if ext[3] > 1 && st[3] != 1 {
            return Err(ErrorKind::NonUnitStride {
                axis: ndim - 1,
                stride: st[3],
            }
            .into());
        }
        let bx = IndexBox::try_from_lo_len(begin, [ext[3], ext[2], ext[1]])?;
        // The tensor passed validation: its extents multiply within isize and every
        // offset its strides reach (of axes longer than 1) fits isize, so these fit.
        let as_usize =
            |v: i64| usize::try_from(v).map_err(|_| DlpackError::from(ErrorKind::SpanOverflow));
        let ncomp = as_usize(ext[0])?;
        let mut l = Self::compact(&bx, ncomp).map_err(|_| ErrorKind::SpanOverflow)?;
        // An axis of extent <= 1 never uses its stride: it gets the value that continues
        // the axes below it (so a re-export of a sub-view still reads as one).
        let (nx, ny, nz) = (l.len_dir(0), l.len_dir(1), l.len_dir(2));
        let pick = |e: usize, s: i64, below: usize| if e > 1 { as_usize(s) } else { Ok(below) };
        l.jstride = pick(ny, st[2], nx)?;
        l.kstride = pick(nz, st[1], l.jstride.saturating_mul(ny))?;
        l.nstride = pick(ncomp, st[0], l.kstride.saturating_mul(nz))?;
        if access == Access::Writable && !l.is_empty() && !l.is_non_overlapping() {
            return Err(ErrorKind::OverlappingStrides.into());
        }
        Ok(l)
    }

    /// The typed first element of an imported tensor with this layout: dtype `T`, aligned,
    /// non-NULL unless the layout is empty, in which case it is a dangling (aligned)
    /// pointer that is never dereferenced. The one place the "NULL data when empty" rule
    /// is written. Device-agnostic: host access is the caller's check.
    ///
    /// # Errors
    /// `DtypeMismatch`, `Misaligned`, `NullData`.
    pub fn first_element<T: DlpackElement>(
        &self,
        view: &TensorView<'_>,
    ) -> Result<NonNull<T>, DlpackError> {
        if view.dtype() != T::DTYPE {
            return Err(ErrorKind::DtypeMismatch {
                expected: T::DTYPE,
                found: view.dtype(),
            }
            .into());
        }
        if self.is_empty() || view.num_elements() == 0 {
            return Ok(NonNull::dangling());
        }
        let p = view.data_ptr().cast::<T>();
        let align = core::mem::align_of::<T>();
        if !p.addr().is_multiple_of(align) {
            return Err(ErrorKind::Misaligned {
                address: p.addr(),
                align,
            }
            .into());
        }
        NonNull::new(p).ok_or_else(|| ErrorKind::NullData.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_strides() {
        // Found by the fuzzer: an empty direction has no largest offset, which is not
        // an overflow.
        let l = FabLayout::with_strides(
            IntVect::new(-100, -1, 0),
            IntVect::new(-99, -1, 1),
            [7, 9, 11],
            2,
        )
        .unwrap();
        assert!(l.is_empty() && l.max_offset().is_none());
        assert_eq!(
            FabLayout::with_strides(IntVect::ZERO, IntVect::new(2, 2, 1), [usize::MAX, 0, 0], 1),
            Err(Array4Error::TooLarge)
        );
        assert!(matches!(
            FabLayout::with_strides(IntVect::new(0, 5, 0), IntVect::new(1, 4, 1), [1, 1, 1], 1),
            Err(Array4Error::OutsideIndexSpace(_))
        ));
        let l =
            FabLayout::with_strides(IntVect::ZERO, IntVect::new(4, 3, 2), [5, 20, 40], 2).unwrap();
        assert_eq!(l.max_offset(), Some(3 + 2 * 5 + 20 + 40));
        assert!(!l.is_compact() && l.is_non_overlapping());
        assert_eq!(l.dlpack_shape(), [2, 2, 3, 4]);
        assert_eq!(l.dlpack_strides(), [40, 20, 5, 1]);
    }
}
