//! `PcInterp`: piecewise-constant interpolation (AMReX's `PCInterp`, `pc_interp`).

use alloc::vec::Vec;

use amrex_array4::{Array4, Array4Mut};
use amrex_box::{IndexBox, IntVect};
use amrex_geometry::Geometry;

use super::{Centring, Interpolater, off};

/// Piecewise-constant interpolation, AMReX's `PCInterp` (`pc_interp`): every fine
/// point takes the value of the coarse point `floor(i / r)` it lies in. Exact for
/// constants; any index type (a nodal or face point takes the coarse point at or below
/// it).
///
/// ```
/// use amrex_amr::{Comps, Interpolater, PcInterp};
/// use amrex_array4::{Array4, Array4Mut};
/// use amrex_box::{IndexBox, IntVect};
///
/// let cbx = IndexBox::new(IntVect::ZERO, IntVect::new(1, 0, 0));
/// let crse = [1.0, 2.0];
/// let fbx = IndexBox::new(IntVect::ZERO, IntVect::new(5, 0, 0));
/// let mut fine = [0.0; 6];
/// PcInterp.interp(Array4::new(&crse, cbx, 1), Array4Mut::new(&mut fine, fbx, 1), &fbx,
///                 Comps::first(1), IntVect::new(3, 1, 1), None)?;
/// assert_eq!(fine, [1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
/// # Ok::<(), amrex_amr::AmrError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PcInterp;

impl Interpolater for PcInterp {
    fn name(&self) -> &'static str {
        "PcInterp"
    }

    fn centring(&self) -> Centring {
        Centring::Any
    }

    /// The fine region coarsened (AMReX's `PCInterp::CoarseBox`).
    fn coarse_box(&self, fine_region: &IndexBox, ratio: IntVect) -> IndexBox {
        fine_region.coarsen_iv(ratio)
    }

    fn fill(
        &self,
        crse: Array4<'_, f64>,
        mut fine: Array4Mut<'_, f64>,
        fine_region: &IndexBox,
        ratio: IntVect,
        _fine_geom: Option<&Geometry>,
    ) {
        let [rx, ry, rz] = ratio.to_array();
        let (lo, hi) = (fine_region.lo(), fine_region.hi());
        let (cb, fb) = (crse.begin()[0], fine.begin()[0]);
        // The coarse row offset of each fine i.
        let idx: Vec<usize> = (lo[0]..=hi[0]).map(|i| off(i.div_euclid(rx), cb)).collect();
        let fo = off(lo[0], fb);
        for n in 0..fine.ncomp() {
            for k in lo[2]..=hi[2] {
                for j in lo[1]..=hi[1] {
                    let c = crse.row(j.div_euclid(ry), k.div_euclid(rz), n);
                    let f = &mut fine.row_mut(j, k, n)[fo..fo + idx.len()];
                    for (f, &ic) in f.iter_mut().zip(&idx) {
                        *f = c[ic];
                    }
                }
            }
        }
    }
}
