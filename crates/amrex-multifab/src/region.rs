//! Global-index reads and writes of a region (what WarpX's `fields.py` offers).

use alloc::vec;
use alloc::vec::Vec;

use amrex_arena::HostAccessible;
use amrex_box::{IndexBox, IntVect};

use crate::dlpack::Ghosts;
use crate::element::Element;
use crate::fabarray::FabArray;
use amrex_basefab::{FabError, component_range};
use core::ops::RangeBounds;

impl<T: Element, A: HostAccessible> FabArray<T, A> {
    /// The values of components `comps` over `region` (global indices, ghost cells
    /// addressable), in Fortran order (`i` fastest, component slowest). Valid cells win
    /// over ghost cells; cells no local fab covers read as zero.
    ///
    /// # Errors
    /// [`FabError::ComponentsOutside`], or [`FabError::TooLarge`] for a region whose
    /// values would not fit memory.
    pub fn read_region(
        &self,
        comps: impl RangeBounds<usize>,
        region: IndexBox,
    ) -> Result<Vec<T>, FabError> {
        let c = component_range(comps, self.ncomp)?;
        let (comp, nc) = (c.start, c.len());
        let npts = region.checked_num_pts_usize().ok_or(FabError::TooLarge)?;
        let len = npts.checked_mul(nc).ok_or(FabError::TooLarge)?;
        let mut out = vec![T::ZERO; len];
        // Ghost cells first, then valid cells on top.
        for pass in 0..2 {
            for l in 0..self.local_size() {
                let g = self.local[l];
                let src = if pass == 0 {
                    self.fabbox(g)
                } else {
                    self.ba.get(g)
                };
                let Some(isect) = src.intersection(&region.convert(src.ix_type())) else {
                    continue;
                };
                let a = self.array_at(l);
                a.components(comp, nc).for_each(isect, |i, j, k, n, v| {
                    out[region.index(IntVect::new(i, j, k)) + n * npts] = *v;
                });
            }
        }
        Ok(out)
    }

    /// Writes `data` (Fortran order over `region`, components slowest) into components
    /// `comps` of every local fab cell of the region: valid cells, and with
    /// [`Ghosts::Include`] ghost cells too.
    ///
    /// # Errors
    /// [`FabError::ComponentsOutside`], or [`FabError::WrongLength`] when `data` does not
    /// hold one value per cell and component; nothing is written then.
    pub fn write_region(
        &mut self,
        data: &[T],
        ghosts: Ghosts,
        comps: impl RangeBounds<usize>,
        region: IndexBox,
    ) -> Result<(), FabError> {
        let c = component_range(comps, self.ncomp)?;
        let (comp, nc) = (c.start, c.len());
        let npts = region.checked_num_pts_usize().ok_or(FabError::TooLarge)?;
        let needed = npts.checked_mul(nc).ok_or(FabError::TooLarge)?;
        if data.len() != needed {
            return Err(FabError::WrongLength {
                needed,
                found: data.len(),
            });
        }
        for l in 0..self.local_size() {
            let g = self.local[l];
            let dst = match ghosts {
                Ghosts::Include => self.fabbox(g),
                Ghosts::Exclude => self.ba.get(g),
            };
            let Some(isect) = dst.intersection(&region.convert(dst.ix_type())) else {
                continue;
            };
            let mut a = self.array_mut_at(l);
            a.components_mut(comp, nc)
                .for_each_mut(isect, |i, j, k, n, v| {
                    *v = data[region.index(IntVect::new(i, j, k)) + n * npts];
                });
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
    ) -> Result<ndarray::Array4<T>, FabError> {
        use ndarray::ShapeBuilder;
        let c = component_range(comps, self.ncomp)?;
        let len = region.length();
        let shape = (len[0] as usize, len[1] as usize, len[2] as usize, c.len());
        let v = self.read_region(c, region)?;
        Ok(ndarray::Array4::from_shape_vec(shape.f(), v).expect("shape matches the region"))
    }

    /// Writes an `ndarray` indexed `[i, j, k, n]` relative to `region.lo()` (any
    /// memory order) into the region (feature `ndarray`); see
    /// [`write_region`](Self::write_region); the array's last axis gives the number of
    /// components written from `comp`.
    ///
    /// # Errors
    /// As [`write_region`](Self::write_region); [`FabError::WrongLength`] when the
    /// array's `i, j, k` extents are not the region's.
    #[cfg(feature = "ndarray")]
    pub fn write_region_ndarray(
        &mut self,
        a: ndarray::ArrayView4<'_, T>,
        ghosts: Ghosts,
        comp: usize,
        region: IndexBox,
    ) -> Result<(), FabError> {
        let len = region.length();
        let nc = a.dim().3;
        let want = (len[0] as usize, len[1] as usize, len[2] as usize, nc);
        if a.dim() != want {
            let needed = region
                .checked_num_pts_usize()
                .unwrap_or(usize::MAX)
                .saturating_mul(nc);
            return Err(FabError::WrongLength {
                needed,
                found: a.len(),
            });
        }
        component_range(comp..comp.saturating_add(nc), self.ncomp)?;
        let mut v = Vec::with_capacity(a.len());
        for n in 0..nc {
            for k in 0..len[2] as usize {
                for j in 0..len[1] as usize {
                    for i in 0..len[0] as usize {
                        v.push(a[[i, j, k, n]]);
                    }
                }
            }
        }
        self.write_region(&v, ghosts, comp..comp + nc, region)
    }
}
