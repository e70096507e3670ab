//! Global-index reads and writes of a region (what WarpX's `fields.py` offers).

use alloc::vec;
use alloc::vec::Vec;

use amrex_arena::HostAccessible;
use amrex_box::{IndexBox, IntVect};

use crate::dlpack::Ghosts;
use crate::element::Element;
use crate::fabarray::FabArray;
use crate::ops::check_comps;

impl<T: Element, A: HostAccessible> FabArray<T, A> {
    /// The values of components `comp..comp+nc` over `region` (global indices, ghost
    /// cells addressable), in Fortran order (`i` fastest, component slowest). Valid cells
    /// win over ghost cells; cells no local fab covers read as zero.
    ///
    /// # Panics
    /// If the components exceed the FabArray's or the region is too large.
    #[must_use]
    #[track_caller]
    pub fn read_region(&self, region: IndexBox, comp: usize, nc: usize) -> Vec<T> {
        check_comps("read_region", comp, nc, self.ncomp);
        let npts = region.checked_num_pts_usize().expect("region too large");
        let len = npts
            .checked_mul(nc)
            .expect("FabArray::read_region: region too large");
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
        out
    }

    /// Writes `data` (Fortran order over `region`, components `comp..comp+nc` slowest)
    /// into every local fab cell of the region: valid cells, and with
    /// [`Ghosts::Include`] ghost cells too.
    ///
    /// # Panics
    /// If `data` has the wrong length or the components exceed the FabArray's.
    #[track_caller]
    pub fn write_region(
        &mut self,
        region: IndexBox,
        comp: usize,
        nc: usize,
        data: &[T],
        ghosts: Ghosts,
    ) {
        check_comps("write_region", comp, nc, self.ncomp);
        let npts = region.checked_num_pts_usize().expect("region too large");
        assert_eq!(
            Some(data.len()),
            npts.checked_mul(nc),
            "FabArray::write_region: data length"
        );
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
    }

    /// [`read_region`](Self::read_region) as an `ndarray` indexed `[i, j, k, n]`
    /// relative to `region.lo()` (feature `ndarray`).
    #[cfg(feature = "ndarray")]
    #[must_use]
    #[track_caller]
    pub fn read_region_ndarray(
        &self,
        region: IndexBox,
        comp: usize,
        nc: usize,
    ) -> ndarray::Array4<T> {
        use ndarray::ShapeBuilder;
        let len = region.length();
        let shape = (len[0] as usize, len[1] as usize, len[2] as usize, nc);
        let v = self.read_region(region, comp, nc);
        ndarray::Array4::from_shape_vec(shape.f(), v).expect("shape matches the region")
    }

    /// Writes an `ndarray` indexed `[i, j, k, n]` relative to `region.lo()` (any
    /// memory order) into the region (feature `ndarray`); see
    /// [`write_region`](Self::write_region).
    #[cfg(feature = "ndarray")]
    #[track_caller]
    pub fn write_region_ndarray(
        &mut self,
        region: IndexBox,
        comp: usize,
        a: ndarray::ArrayView4<'_, T>,
        ghosts: Ghosts,
    ) {
        let len = region.length();
        assert_eq!(
            a.dim(),
            (len[0] as usize, len[1] as usize, len[2] as usize, a.dim().3),
            "FabArray::write_region_ndarray: shape"
        );
        let nc = a.dim().3;
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
        self.write_region(region, comp, nc, &v, ghosts);
    }
}
