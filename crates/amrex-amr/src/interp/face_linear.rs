//! `FaceLinear`: face data, linear in the normal direction and piecewise constant
//! across it (AMReX's `FaceLinear`, `face_linear_interp`).

use amrex_array4::{Array4, Array4Mut};
use amrex_box::{IndexBox, IntVect};
use amrex_geometry::Geometry;

use super::{Centring, Interpolater, RowAt, for_each_fine_row, lengthen_single, off};

/// Interpolation of face data, AMReX's `FaceLinear` (`face_linear_interp`): for faces
/// normal to direction `d`, a fine face lying on a coarse face takes its value
/// (piecewise constant across `d`), and a fine face between two coarse faces the linear
/// blend `(1 - w) · lower + w · upper`, `w = offset / r_d` (AMReX's two passes,
/// `face_linear_face_interp_*` then `face_linear_interp_*`, with no mask). Exact for
/// functions linear in `d` and constant across it.
///
/// AMReX's second pass blends the *fine* faces on the two coarse faces, which its first
/// pass has just set to the coarse values when they lie inside the region; here the
/// blend reads the coarse values directly, which is the same number, and stays defined
/// when a region starts or ends between coarse faces.
///
/// ```
/// use amrex_amr::{Comps, FaceLinear, Interpolater};
/// use amrex_array4::{Array4, Array4Mut};
/// use amrex_box::{IndexBox, IndexType, IntVect};
///
/// let xface = IndexType::new(true, false, false);
/// let cbx = IndexBox::new(IntVect::ZERO, IntVect::new(1, 0, 0));
/// let crse = [0.0, 4.0]; // coarse x-faces 0 and 1
/// let fbx = IndexBox::with_type(IntVect::ZERO, IntVect::new(4, 1, 0), xface);
/// let mut fine = [0.0; 10];
/// FaceLinear.interp(Array4::new(&crse, cbx, 1), Array4Mut::new(&mut fine, fbx, 1), &fbx,
///                   Comps::first(1), IntVect::new(4, 2, 1), None)?;
/// assert_eq!(fine, [0.0, 1.0, 2.0, 3.0, 4.0, 0.0, 1.0, 2.0, 3.0, 4.0]);
/// # Ok::<(), amrex_amr::AmrError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FaceLinear;

impl Interpolater for FaceLinear {
    fn name(&self) -> &'static str {
        "FaceLinear"
    }

    fn centring(&self) -> Centring {
        Centring::Face
    }

    /// The fine region coarsened (its nodal high end rounded up), one face longer in the
    /// nodal direction where that leaves a single face and the ratio is above 1 (AMReX's
    /// `FaceLinear::CoarseBox`).
    fn coarse_box(&self, fine_region: &IndexBox, ratio: IntVect) -> IndexBox {
        let typ = fine_region.ix_type();
        lengthen_single(fine_region.coarsen_iv(ratio), ratio, |d| {
            typ.node_centered_dir(d)
        })
    }

    fn fill(
        &self,
        crse: Array4<'_, f64>,
        mut fine: Array4Mut<'_, f64>,
        fine_region: &IndexBox,
        ratio: IntVect,
        _fine_geom: Option<&Geometry>,
    ) {
        let typ = fine_region.ix_type();
        let dir = (0..3)
            .find(|&d| typ.node_centered_dir(d))
            .expect("face data (checked)");
        let [rx, ry, rz] = ratio.to_array();
        let cb = crse.begin()[0];
        let weight = |io: i32, r: i32| f64::from(io) * (1.0 / f64::from(r));
        // Per fine i: the coarse offset in a coarse row and, for x-faces between coarse
        // faces, the weight of the upper one.
        let x = |ic: i32, io: i32| (off(ic, cb), (dir == 0 && io != 0).then(|| weight(io, rx)));
        for_each_fine_row(&mut fine, fine_region, ratio, x, |f, xs, at| {
            let RowAt {
                n,
                j: (jc, jo),
                k: (kc, ko),
            } = at;
            let c = crse.row(jc, kc, n);
            // For y- and z-faces between coarse faces: the upper coarse row and its
            // weight.
            let upper = match dir {
                1 if jo != 0 => Some((crse.row(jc + 1, kc, n), weight(jo, ry))),
                2 if ko != 0 => Some((crse.row(jc, kc + 1, n), weight(ko, rz))),
                _ => None,
            };
            match upper {
                Some((u, w)) => {
                    for (f, &(a, _)) in f.iter_mut().zip(xs) {
                        *f = (1.0 - w) * c[a] + w * u[a];
                    }
                }
                None => {
                    for (f, &(a, wx)) in f.iter_mut().zip(xs) {
                        *f = match wx {
                            Some(w) => (1.0 - w) * c[a] + w * c[a + 1],
                            None => c[a],
                        };
                    }
                }
            }
        });
    }
}
