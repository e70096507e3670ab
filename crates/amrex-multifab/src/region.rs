//! Global-index reads and writes of a region (what WarpX's `fields.py` offers).

use crate::error::FabArrayError;
use alloc::vec;
use alloc::vec::Vec;

use amrex_arena::HostAccessible;
use amrex_box::{IndexBox, IntVect};

use crate::dlpack::Ghosts;
use crate::element::Element;
use crate::error::component_range;
use crate::fabarray::FabArray;
use crate::mfiter::Tiling;
use amrex_basefab::FabError;
use core::ops::RangeBounds;

impl<T: Element, A: HostAccessible> FabArray<T, A> {
    /// The values of components `comps` over `region` (global indices, ghost cells
    /// addressable), in Fortran order (`i` fastest, component slowest). Valid cells win
    /// over ghost cells; cells no fab covers read as zero.
    ///
    /// With more than one rank this is **collective** and every rank gets the whole
    /// region (as pyAMReX's and WarpX's global indexing): each rank reads its own fabs,
    /// and one all-gather merges them, valid cells over ghost cells.
    ///
    /// # Errors
    /// [`FabArrayError::Fab`]`(`[`ComponentsOutside`](amrex_basefab::FabError::ComponentsOutside)`)`, [`FabArrayError::Fab`]`(`[`TooLarge`](amrex_basefab::FabError::TooLarge)`)` for a region whose values
    /// would not fit memory, [`FabArrayError::Comm`] if the gather fails, [`FabArrayError::RanksDisagree`] or
    /// [`FabArrayError::RefusedOnOtherRank`] (on every rank) when the ranks disagree or one refuses.
    pub fn read_region(
        &self,
        comps: impl RangeBounds<usize>,
        region: IndexBox,
    ) -> Result<Vec<T>, FabArrayError> {
        let distributed = !self.dm.communicator().is_single();
        let comps = component_range(comps, self.ncomp);
        // What the ranks must agree on: the components (a refused range as such).
        let key = comps
            .as_ref()
            .map_or([u64::MAX; 2], |c| [c.start as u64, c.end as u64]);
        let local = comps.and_then(|c| self.read_local(c, region, distributed));
        if distributed {
            self.merge_ranks(local, region, key)
        } else {
            local.map(|(out, _)| out)
        }
    }

    /// This rank's part of [`read_region`](Self::read_region), with what covered each
    /// cell when `distributed`.
    fn read_local(
        &self,
        comps: impl RangeBounds<usize>,
        region: IndexBox,
        distributed: bool,
    ) -> Result<(Vec<T>, Vec<u64>), FabArrayError> {
        let c = component_range(comps, self.ncomp)?;
        let (comp, nc) = (c.start, c.len());
        let npts = region.checked_num_pts_usize().ok_or(FabError::TooLarge)?;
        let len = npts.checked_mul(nc).ok_or(FabError::TooLarge)?;
        let mut out = vec![T::ZERO; len];
        // What covers each cell here: 0 nothing, else (1 ghost / 2 valid, box index),
        // ordered as one process overwrites: valid over ghost, then the later box.
        let mut cover = if distributed {
            vec![0_u64; npts]
        } else {
            Vec::new()
        };
        // Ghost cells first, then valid cells on top; whole rows at a time.
        for pass in 0..2_u8 {
            for mfi in self.mfiter(Tiling::None) {
                let (g, fab_box) = (mfi.index(), mfi.fabbox());
                let src = if pass == 0 { fab_box } else { mfi.validbox() };
                let Some(isect) = src.intersection(&region.convert(src.ix_type())) else {
                    continue;
                };
                // The intersection's rows are the view's rows.
                let a = self.array(&mfi).sub_box(&isect);
                let (lo, hi) = (isect.lo(), isect.hi());
                for n in 0..nc {
                    for k in lo[2]..=hi[2] {
                        for j in lo[1]..=hi[1] {
                            let row = a.row(j, k, comp + n);
                            let at = region.index(IntVect::new(lo[0], j, k)) + n * npts;
                            out[at..at + row.len()].copy_from_slice(row);
                            if distributed && n == 0 {
                                cover[at..at + row.len()]
                                    .fill((u64::from(pass) + 1) << 40 | g as u64);
                            }
                        }
                    }
                }
            }
        }
        Ok((out, cover))
    }

    /// Merges every rank's part of a region read (`cover` says what covered each cell):
    /// the largest cover wins, so the result is what one process holding every box
    /// reads. The ranks first agree on the read (layout, region, components `comps`:
    /// `RanksDisagree` on every rank otherwise); a rank that refused the read sends
    /// only its flag, so every rank reaches the same verdict.
    fn merge_ranks(
        &self,
        local: Result<(Vec<T>, Vec<u64>), FabArrayError>,
        region: IndexBox,
        comps: [u64; 2],
    ) -> Result<Vec<T>, FabArrayError> {
        let mut fp = amrex_runtime::Fingerprint::new();
        fp.str("read_region")
            .word(self.layout_fingerprint())
            .iv(region.lo())
            .iv(region.hi())
            .word(comps[0])
            .word(comps[1]);
        let agreed = crate::comm::agree(self.dm.communicator(), "read_region", &fp)?;
        // The flag takes 8 bytes, so the values stay aligned in the received buffers.
        let mut payload: Vec<u8> = u64::from(local.is_ok()).to_le_bytes().to_vec();
        if let Ok((mine, cover)) = &local {
            payload.extend_from_slice(bytemuck::cast_slice(&cover[..]));
            payload.extend_from_slice(bytemuck::cast_slice(&mine[..]));
        }
        let all = agreed
            .all_gather_bytes(&payload)
            .map_err(|e| crate::message::comm_err("read_region", e))?;
        if let Some(rank) = all
            .iter()
            .position(|b| b.get(..8) != Some(&1_u64.to_le_bytes()[..]))
        {
            return Err(match local {
                Err(e) => e,
                Ok(_) => FabArrayError::RefusedOnOtherRank {
                    op: "read_region",
                    rank: Some(rank),
                },
            });
        }
        let (mut out, cover) = local?;
        let npts = cover.len();
        out.fill(T::ZERO);
        let nc = out.len() / npts.max(1);
        let mut best = vec![0_u64; npts];
        for (rank, part) in all.iter().enumerate() {
            let part = &part[8..];
            if part.len() != payload.len() - 8 {
                return Err(FabArrayError::MalformedContribution {
                    op: "read_region",
                    rank,
                });
            }
            let (cov, vals) = part.split_at(npts * 8);
            let cov: Vec<u64> = cov
                .chunks_exact(8)
                .map(bytemuck::pod_read_unaligned)
                .collect();
            let vals = crate::message::as_elements::<T>(vals);
            for p in 0..npts {
                if cov[p] == 0 || cov[p] < best[p] {
                    continue;
                }
                best[p] = cov[p];
                for n in 0..nc {
                    out[p + n * npts] = vals[p + n * npts];
                }
            }
        }
        Ok(out)
    }

    /// Writes `data` (Fortran order over `region`, components slowest) into components
    /// `comps` of every local fab cell of the region: valid cells, and with
    /// [`Ghosts::Include`] ghost cells too.
    ///
    /// # Errors
    /// [`FabArrayError::Fab`]`(`[`ComponentsOutside`](amrex_basefab::FabError::ComponentsOutside)`)`, or [`FabArrayError::WrongLength`] when `data` does not
    /// hold one value per cell and component; nothing is written then.
    pub fn write_region(
        &mut self,
        data: &[T],
        ghosts: Ghosts,
        comps: impl RangeBounds<usize>,
        region: IndexBox,
    ) -> Result<(), FabArrayError> {
        let c = component_range(comps, self.ncomp)?;
        let (comp, nc) = (c.start, c.len());
        let npts = region.checked_num_pts_usize().ok_or(FabError::TooLarge)?;
        let needed = npts.checked_mul(nc).ok_or(FabError::TooLarge)?;
        if data.len() != needed {
            return Err(FabArrayError::WrongLength {
                needed,
                found: data.len(),
            });
        }
        for mfi in self.mfiter(Tiling::None) {
            let dst = match ghosts {
                Ghosts::Include => mfi.fabbox(),
                Ghosts::Exclude => mfi.validbox(),
            };
            let Some(isect) = dst.intersection(&region.convert(dst.ix_type())) else {
                continue;
            };
            // The intersection's rows are the view's rows.
            let mut whole = self.array_mut(&mfi);
            let mut a = whole.sub_box_mut(&isect);
            let (lo, hi) = (isect.lo(), isect.hi());
            for n in 0..nc {
                for k in lo[2]..=hi[2] {
                    for j in lo[1]..=hi[1] {
                        let row = a.row_mut(j, k, comp + n);
                        let at = region.index(IntVect::new(lo[0], j, k)) + n * npts;
                        row.copy_from_slice(&data[at..at + row.len()]);
                    }
                }
            }
        }
        Ok(())
    }

    /// [`read_region`](Self::read_region) as an `ndarray` indexed `[i, j, k, n]`
    /// relative to `region.lo()` (feature `ndarray`).
    ///
    /// # Errors
    /// As [`read_region`](Self::read_region).
    #[cfg(feature = "ndarray")]
    pub fn read_region_ndarray(
        &self,
        comps: impl RangeBounds<usize>,
        region: IndexBox,
    ) -> Result<ndarray::Array4<T>, FabArrayError> {
        use ndarray::ShapeBuilder;
        let c = component_range(comps, self.ncomp)?;
        let len = region.length();
        // A negative length (an inverted region) as the largest size, as `as usize` gave:
        // no shape of that size matches the (empty) values.
        let side = |d: usize| usize::try_from(len[d]).unwrap_or(usize::MAX);
        let shape = (side(0), side(1), side(2), c.len());
        let v = self.read_region(c, region)?;
        Ok(ndarray::Array4::from_shape_vec(shape.f(), v).expect("shape matches the region"))
    }

    /// Writes an `ndarray` indexed `[i, j, k, n]` relative to `region.lo()` (any
    /// memory order) into the region (feature `ndarray`); see
    /// [`write_region`](Self::write_region); the array's last axis gives the number of
    /// components written from `comp`.
    ///
    /// # Errors
    /// As [`write_region`](Self::write_region); [`FabArrayError::WrongLength`] when the
    /// array's `i, j, k` extents are not the region's.
    #[cfg(feature = "ndarray")]
    pub fn write_region_ndarray(
        &mut self,
        a: ndarray::ArrayView4<'_, T>,
        ghosts: Ghosts,
        comp: usize,
        region: IndexBox,
    ) -> Result<(), FabArrayError> {
        let len = region.length();
        let (nx, ny, nz, nc) = a.dim();
        // A negative length (an inverted region) matches no extent.
        let side = |d: usize| usize::try_from(len[d]).ok();
        if (Some(nx), Some(ny), Some(nz)) != (side(0), side(1), side(2)) {
            let needed = region
                .checked_num_pts_usize()
                .unwrap_or(usize::MAX)
                .saturating_mul(nc);
            return Err(FabArrayError::WrongLength {
                needed,
                found: a.len(),
            });
        }
        component_range(comp..comp.saturating_add(nc), self.ncomp)?;
        let mut v = Vec::with_capacity(a.len());
        for n in 0..nc {
            for k in 0..nz {
                for j in 0..ny {
                    for i in 0..nx {
                        v.push(a[[i, j, k, n]]);
                    }
                }
            }
        }
        self.write_region(&v, ghosts, comp..comp + nc, region)
    }
}
