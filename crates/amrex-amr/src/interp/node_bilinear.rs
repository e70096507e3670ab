//! `NodeBilinear`: multilinear interpolation of nodal data (AMReX's `NodeBilinear`,
//! `node_bilinear_interp`).

use amrex_array4::{Array4, Array4Mut};
use amrex_box::{IndexBox, IntVect};
use amrex_geometry::Geometry;

use super::{Centring, Interpolater, RowAt, for_each_fine_row, lengthen_single, off};

/// Multilinear interpolation of nodal data, AMReX's `NodeBilinear`
/// (`node_bilinear_interp`, kernel `mf_nodebilin_interp`): a fine node on a coarse node
/// takes its value, one on a coarse edge the linear blend of the edge's two ends, one
/// on a coarse face the bilinear blend of its four corners, one inside a coarse cell
/// the trilinear blend of its eight. Reproduces multilinear functions exactly (up to
/// round-off).
///
/// ```
/// use amrex_amr::{Comps, Interpolater, NodeBilinear};
/// use amrex_array4::{Array4, Array4Mut};
/// use amrex_box::{IndexBox, IndexType, IntVect};
///
/// let nodes = IndexType::new(true, true, true);
/// let cbx = IndexBox::new(IntVect::ZERO, IntVect::new(1, 0, 0));
/// let crse = [0.0, 3.0];
/// let fbx = IndexBox::with_type(IntVect::ZERO, IntVect::new(3, 0, 0), nodes);
/// let mut fine = [9.0; 4];
/// NodeBilinear.interp(Array4::new(&crse, cbx, 1), Array4Mut::new(&mut fine, fbx, 1), &fbx,
///                     Comps::first(1), IntVect::new(3, 1, 1), None)?;
/// assert_eq!(fine, [0.0, 1.0, 2.0, 3.0]);
/// # Ok::<(), amrex_amr::AmrError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct NodeBilinear;

impl Interpolater for NodeBilinear {
    fn name(&self) -> &'static str {
        "NodeBilinear"
    }

    fn centring(&self) -> Centring {
        Centring::Node
    }

    /// The fine region coarsened (its high end rounded up), one node longer where that
    /// leaves a single node and the ratio is above 1 (AMReX's `NodeBilinear::CoarseBox`,
    /// which also lengthens ratio-1 directions).
    fn coarse_box(&self, fine_region: &IndexBox, ratio: IntVect) -> IndexBox {
        lengthen_single(fine_region.coarsen_iv(ratio), ratio, |_| true)
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
        let cb = crse.begin()[0];
        let (rxinv, ryinv, rzinv) = (
            1.0 / f64::from(rx),
            1.0 / f64::from(ry),
            1.0 / f64::from(rz),
        );
        let w = |a: i32| f64::from(a);
        // Per fine i: the coarse node's offset in a coarse row and the fine offset.
        let x = |ic: i32, io: i32| (off(ic, cb), io);
        for_each_fine_row(&mut fine, fine_region, ratio, x, |f, xs, at| {
            let RowAt {
                n,
                j: (jc, jo),
                k: (kc, ko),
            } = at;
            // Rows (jc + dj, kc + dk), read only where the offsets need them.
            let r00 = crse.row(jc, kc, n);
            let r10 = if jo != 0 {
                crse.row(jc + 1, kc, n)
            } else {
                r00
            };
            let r01 = if ko != 0 {
                crse.row(jc, kc + 1, n)
            } else {
                r00
            };
            let r11 = if jo != 0 && ko != 0 {
                crse.row(jc + 1, kc + 1, n)
            } else {
                r00
            };
            for (f, &(a, io)) in f.iter_mut().zip(xs) {
                let b = a + 1;
                let (mx, my, mz) = (rx - io, ry - jo, rz - ko);
                *f = match (io != 0, jo != 0, ko != 0) {
                    (true, true, true) => {
                        rxinv
                            * ryinv
                            * rzinv
                            * (r00[a] * w(mx * my * mz)
                                + r00[b] * w(io * my * mz)
                                + r10[a] * w(mx * jo * mz)
                                + r10[b] * w(io * jo * mz)
                                + r01[a] * w(mx * my * ko)
                                + r01[b] * w(io * my * ko)
                                + r11[a] * w(mx * jo * ko)
                                + r11[b] * w(io * jo * ko))
                    }
                    (false, true, true) => {
                        ryinv
                            * rzinv
                            * (r00[a] * w(my * mz)
                                + r10[a] * w(jo * mz)
                                + r01[a] * w(my * ko)
                                + r11[a] * w(jo * ko))
                    }
                    (true, false, true) => {
                        rxinv
                            * rzinv
                            * (r00[a] * w(mx * mz)
                                + r00[b] * w(io * mz)
                                + r01[a] * w(mx * ko)
                                + r01[b] * w(io * ko))
                    }
                    (true, true, false) => {
                        rxinv
                            * ryinv
                            * (r00[a] * w(mx * my)
                                + r00[b] * w(io * my)
                                + r10[a] * w(mx * jo)
                                + r10[b] * w(io * jo))
                    }
                    (true, false, false) => rxinv * (w(mx) * r00[a] + w(io) * r00[b]),
                    (false, true, false) => ryinv * (w(my) * r00[a] + w(jo) * r10[a]),
                    (false, false, true) => rzinv * (w(mz) * r00[a] + w(ko) * r01[a]),
                    (false, false, false) => r00[a],
                };
            }
        });
    }
}
