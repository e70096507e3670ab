//! `PcInterp`: piecewise-constant interpolation (AMReX's `PCInterp`, `pc_interp`).

use amrex_array4::{Array4, Array4Mut};
use amrex_box::{IndexBox, IntVect};
use amrex_geometry::Geometry;

use super::{Centring, Interpolater, for_each_fine_row, off};

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
        let cb = crse.begin()[0];
        // The coarse row offset of each fine i.
        for_each_fine_row(
            &mut fine,
            fine_region,
            ratio,
            |ic, _| off(ic, cb),
            |f, idx, at| {
                let c = crse.row(at.j.0, at.k.0, at.n);
                for (f, &ic) in f.iter_mut().zip(idx) {
                    *f = c[ic];
                }
            },
        );
    }
}
