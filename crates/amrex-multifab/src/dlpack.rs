//! DLPack: one tensor per local box, and FabArrays over imported tensors.

use alloc::vec::Vec;

use amrex_arena::{Arena, HostArena};
use amrex_basefab::BaseFab;
use amrex_box::{IndexBox, IntVect};
use amrex_dlpack_core::{DlpackError, ErrorKind, ManagedTensor, TensorSpec};

use crate::box_array::BoxArray;
use crate::distribution::DistributionMapping;
use crate::element::Element;
use crate::fabarray::{Deref, FabArray, RawFab};

/// Whether a per-box export covers the ghost cells (the whole fab, as pyAMReX's
/// `mf.array(mfi)`) or only the valid box.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Ghosts {
    /// Only the valid box.
    Exclude,
    /// The valid box grown by the FabArray's ghost width (the whole fab).
    #[default]
    Include,
}

impl<T: Element, A: Arena + 'static> FabArray<T, A> {
    fn box_spec(&self, l: usize, raw: &RawFab<T>, ghosts: Ghosts) -> ([i64; 4], [i64; 4], *mut T) {
        let g = self.local[l];
        let region = match ghosts {
            Ghosts::Include => raw.bx,
            Ghosts::Exclude => self.ba.get(g),
        };
        let len = region.length();
        // As FabLayout::dlpack_shape: the component count of a real allocation fits.
        let shape = [
            i64::try_from(self.ncomp).unwrap_or(i64::MAX),
            i64::from(len[2]),
            i64::from(len[1]),
            i64::from(len[0]),
        ];
        let strides = raw.layout.dlpack_strides();
        let empty = self.ncomp == 0 || !region.ok();
        let data = if empty {
            core::ptr::null_mut()
        } else {
            let lo = region.lo();
            // SAFETY: `lo` is a cell of the fab box, so the offset is inside the fab's
            // memory (RawFab invariant).
            unsafe { raw.ptr.as_ptr().add(raw.offset(lo[0], lo[1], lo[2], 0)) }
        };
        (shape, strides, data)
    }

    fn export(&self, l: usize, raw: &RawFab<T>, ghosts: Ghosts) -> ManagedTensor<'static> {
        let (shape, strides, data) = self.box_spec(l, raw, ghosts);
        let spec = TensorSpec {
            data: data.cast(),
            device: self.fab_ref(l).device(),
            dtype: T::DTYPE,
            shape: &shape,
            strides: &strides,
            flags: 0,
        };
        // SAFETY: the owner is the fabs' shared store, which keeps the fabs, and so their
        // memory, alive for as long as the tensor lives (fabs are replaced or resized only
        // through `fab_mut`, which the callers rule out while tensors live); the shape and
        // strides reach only elements of fab `l` (RawFab invariant), which is writable
        // (checked by `layout`). Freedom from data races with the FabArray is the
        // caller's obligation (see the callers).
        unsafe { ManagedTensor::from_owner(self.store.clone(), &spec) }
    }

    /// One writable tensor per local box, shape `(ncomp, nz, ny, nx)` and strides
    /// `(nstride, kstride, jstride, 1)` (pyAMReX's layout), over the valid box or, with
    /// `ghosts`, the whole fab. The tensors borrow the FabArray mutably; each also holds
    /// a reference to the fabs' storage.
    ///
    /// ```
    /// use amrex_box::{IndexBox, IntVect};
    /// use amrex_multifab::{BoxArray, DistributionMapping, MultiFab, Ghosts};
    /// let ba = BoxArray::from_domain(IndexBox::new(IntVect::ZERO, IntVect::splat(7)), 4);
    /// let mut mf = MultiFab::new(&ba, &DistributionMapping::single(&ba), 2, IntVect::splat(1));
    /// let tensors = mf.to_dlpack_per_box(Ghosts::Include);
    /// assert_eq!(tensors.len(), 8);
    /// assert_eq!(tensors[0].shape(), &[2, 6, 6, 6]);
    /// ```
    #[must_use]
    pub fn to_dlpack_per_box(&mut self, ghosts: Ghosts) -> Vec<ManagedTensor<'_>> {
        // The `&mut` borrow keeps Rust code away from the fabs while the tensors live.
        let raws = self.raws_mut_with(Deref::Never);
        raws.iter()
            .enumerate()
            .map(|(l, r)| self.export(l, r, ghosts))
            .collect()
    }

    /// Like [`to_dlpack_per_box`](Self::to_dlpack_per_box), but the tensors own a
    /// reference to the fabs' storage and may outlive the FabArray (pyAMReX's
    /// `MultiFab.to_xp()`): the memory stays alive until the last tensor is dropped.
    ///
    /// # Safety
    /// The FabArray and the tensors' consumers share the memory without synchronisation:
    /// while a consumer may read or write through a tensor, the caller must not use the
    /// FabArray concurrently (from another thread) on the same boxes, and must not hold a
    /// Rust reference made from a tensor (for example an imported slice) across a call
    /// that writes the FabArray; and while the tensors live, no fab may be replaced or
    /// resized through [`fab_mut`](Self::fab_mut) (that would free memory a tensor
    /// points into).
    ///
    /// # Panics
    /// If a fab was replaced through `fab_mut` by one that does not fit the FabArray or
    /// is read-only.
    #[must_use]
    pub unsafe fn to_dlpack_per_box_detached(&self, ghosts: Ghosts) -> Vec<ManagedTensor<'static>> {
        (0..self.local_size())
            .map(|l| self.export(l, &self.raw(l, Deref::Never), ghosts))
            .collect()
    }

    /// The tensor of one local box `l`, as [`to_dlpack_per_box_detached`](Self::to_dlpack_per_box_detached)
    /// makes it (pyAMReX's `mf.array(mfi)`), without exporting the other boxes.
    ///
    /// # Safety
    /// As [`to_dlpack_per_box_detached`](Self::to_dlpack_per_box_detached).
    ///
    /// # Panics
    /// If `l` is not a local index, or as `to_dlpack_per_box_detached`.
    #[must_use]
    pub unsafe fn to_dlpack_box_detached(
        &self,
        l: usize,
        ghosts: Ghosts,
    ) -> ManagedTensor<'static> {
        assert!(
            l < self.local_size(),
            "local index {l} out of range for {} local boxes",
            self.local_size()
        );
        self.export(l, &self.raw(l, Deref::Never), ghosts)
    }
}

impl<T: Element> FabArray<T, HostArena> {
    /// A non-owning FabArray over one tensor per local box (in local order, rank 0),
    /// each of shape `(ncomp, nz, ny, nx)` covering its box grown by `ngrow`, with unit
    /// `i` stride and any other non-overlapping strides (the layout rule of every box
    /// importer, `FabLayout::from_dlpack`). The tensors are kept alive (and their
    /// deleters called once) until the FabArray drops.
    ///
    /// # Errors
    /// A wrong number of tensors (`LengthMismatch`), rank, shape, dtype, device,
    /// alignment, a read-only tensor, strides that overlap, a negative ghost width
    /// (`NegativeGhost`), boxes that leave the index space grown by it
    /// (`OutsideIndexSpace`), or tensors that share memory (`AliasedTensors`); every
    /// tensor is dropped then (its deleter runs once). Use
    /// [`try_from_dlpack_per_box`](Self::try_from_dlpack_per_box) to get them back.
    pub fn from_dlpack_per_box(
        ba: &BoxArray,
        dm: &DistributionMapping,
        ngrow: IntVect,
        tensors: Vec<ManagedTensor<'static>>,
    ) -> Result<Self, DlpackError> {
        Self::try_from_dlpack_per_box(ba, dm, ngrow, tensors).map_err(|(e, _)| e)
    }

    /// As [`from_dlpack_per_box`](Self::from_dlpack_per_box), but a refusal hands every
    /// tensor back, unconsumed and in the order given, with the error.
    ///
    /// # Errors
    /// As `from_dlpack_per_box`.
    pub fn try_from_dlpack_per_box(
        ba: &BoxArray,
        dm: &DistributionMapping,
        ngrow: IntVect,
        tensors: Vec<ManagedTensor<'static>>,
    ) -> Result<Self, (DlpackError, Vec<ManagedTensor<'static>>)> {
        let local = dm.local_indices(0);
        let pre = (|| {
            if tensors.len() != local.len() {
                return Err(DlpackError::from(ErrorKind::LengthMismatch {
                    expected: local.len(),
                    found: tensors.len(),
                }));
            }
            // The one index-space rule: no negative ghost width, and every box grown by
            // it keeps an i32 end and i32 lengths.
            ba.check_ghost(ngrow)?;
            Ok(())
        })();
        if let Err(e) = pre {
            return Err((e, tensors));
        }
        let ncomp = tensors
            .first()
            .map_or(0, |t| t.view().shape().first().copied().unwrap_or(0));
        let mut fabs: Vec<BaseFab<'static, T>> = Vec::with_capacity(local.len());
        let mut spans: Vec<(usize, usize)> = Vec::with_capacity(local.len());
        // On a refusal: the fabs built so far give their tensors back, then the refused
        // one, then those not reached yet.
        fn give_back<T: Element>(
            fabs: Vec<BaseFab<'static, T>>,
            refused: Option<ManagedTensor<'static>>,
            rest: impl Iterator<Item = ManagedTensor<'static>>,
        ) -> Vec<ManagedTensor<'static>> {
            fabs.into_iter()
                .filter_map(|f| f.into_tensor().ok())
                .chain(refused)
                .chain(rest)
                .collect()
        }
        let mut it = tensors.into_iter();
        for &g in &local {
            let Some(t) = it.next() else { break };
            let bx: IndexBox = match ba.get(g).try_grow_ghost(ngrow) {
                Ok(b) => b,
                Err(e) => return Err((e.into(), give_back(fabs, Some(t), it))),
            };
            let checked = (|| {
                let v = t.view();
                v.expect_ndim(4)?;
                if v.is_read_only() {
                    return Err(DlpackError::from(ErrorKind::ReadOnly));
                }
                let len = bx.length();
                let want = [
                    ncomp,
                    i64::from(len[2]),
                    i64::from(len[1]),
                    i64::from(len[0]),
                ];
                for (axis, (&e, &f)) in want.iter().zip(v.shape()).enumerate() {
                    if e != f {
                        return Err(ErrorKind::ShapeMismatch {
                            axis,
                            expected: e,
                            found: f,
                        }
                        .into());
                    }
                }
                // dtype, host access and alignment; strides (unit `i` stride, no
                // negative or overlapping ones) are the box importer's, applied below.
                let ptr = v.typed_ptr::<T>()?;
                // Not negative (the first element is at offset 0); beyond usize, the
                // span would overflow the address space.
                let (_, hi_off) = v.offset_range();
                let hi_off = usize::try_from(hi_off).map_err(|_| ErrorKind::SpanOverflow)?;
                Ok((ptr, hi_off, v.num_elements() > 0))
            })();
            let (ptr, hi_off, nonempty) = match checked {
                Ok(c) => c,
                Err(e) => return Err((e, give_back(fabs, Some(t), it))),
            };
            // The fab keeps the tensor (its deleter runs when the fab drops). Its box is
            // cell-centred with the fab box's corners, which is what the FabArray checks.
            let fab = match BaseFab::try_from_dlpack_at(t, bx.lo()) {
                Ok(f) => f,
                Err(r) => {
                    let (e, t) = r.into_parts();
                    return Err((e, give_back(fabs, Some(t), it)));
                }
            };
            debug_assert!(fab.index_box().hi() == bx.hi() || fab.num_pts() == 0);
            if nonempty {
                // Accepted, so no stride is negative: the tensor's bytes are
                // `ptr .. ptr + (hi_off + 1) * elem`, inside the validated span.
                let bytes = (hi_off + 1) * core::mem::size_of::<T>();
                spans.push((ptr.addr(), ptr.addr() + bytes));
            }
            fabs.push(fab);
        }
        // Different fabs must not share memory.
        spans.sort_unstable();
        if spans.windows(2).any(|w| w[1].0 < w[0].1) {
            return Err((
                ErrorKind::AliasedTensors.into(),
                give_back(fabs, None, core::iter::empty()),
            ));
        }
        // The tensors' common component count (each fab has it), 0 without any.
        let ncomp = fabs.first().map_or(0, BaseFab::ncomp);
        Ok(Self::from_parts(
            ba, dm, ncomp, ngrow, 0, local, fabs, HostArena,
        ))
    }
}
