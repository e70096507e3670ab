//! `CellBilinear`: trilinear interpolation of cell-centred data from the nearest
//! coarse centres (AMReX's `CellBilinear`, `cell_bilinear_interp`).

use amrex_array4::{Array4, Array4Mut};
use amrex_box::{IndexBox, IntVect};
use amrex_geometry::Geometry;

use super::{Centring, Interpolater, RowAt, for_each_fine_row, grow_sides, off, split};

/// Multilinear interpolation of cell-centred data, AMReX's `CellBilinear`
/// (`cell_bilinear_interp`, kernel `mf_cell_bilin_interp`): each fine cell centre is
/// interpolated from the 2×2×2 coarse centres around it (its own coarse cell and the
/// neighbour on the side of the fine centre in each direction). Reproduces any
/// multilinear function (in particular linear ones) exactly, up to round-off; not
/// conservative.
///
/// In a direction of ratio 1 the fine cell takes its own coarse cell's weight 1 and no
/// neighbour is read, so the coarse box does not grow there (a two-dimensional problem
/// gets AMReX's two-dimensional result).
///
/// ```
/// use amrex_amr::{CellBilinear, Comps, Interpolater};
/// use amrex_array4::{Array4, Array4Mut};
/// use amrex_box::{IndexBox, IntVect};
///
/// let cbx = IndexBox::new(IntVect::new(-1, 0, 0), IntVect::new(2, 0, 0));
/// let crse = [-4.0, 0.0, 4.0, 8.0]; // u = 4 i at the coarse centres
/// let fbx = IndexBox::new(IntVect::ZERO, IntVect::new(7, 0, 0));
/// let mut fine = [0.0; 8];
/// let ratio = IntVect::new(4, 1, 1);
/// assert_eq!(CellBilinear.coarse_box(&fbx, ratio), cbx);
/// CellBilinear.interp(Array4::new(&crse, cbx, 1), Array4Mut::new(&mut fine, fbx, 1), &fbx,
///                     Comps::first(1), ratio, None)?;
/// assert_eq!(fine, [-1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5]);
/// # Ok::<(), amrex_amr::AmrError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CellBilinear;

/// The neighbour side and own weight of a fine cell at offset `io` in its coarse cell
/// (AMReX: `-1` and `(r + 1 + 2 io) / 2r` in the low half, `+1` and
/// `(3r - 1 - 2 io) / 2r` in the high half; `0` and `1` for ratio 1).
#[inline]
fn side(io: i32, r: i32) -> (i32, f64) {
    if r == 1 {
        (0, 1.0)
    } else if io * 2 < r {
        (-1, f64::from(r + 1 + 2 * io) / f64::from(2 * r))
    } else {
        (1, f64::from(3 * r - 1 - 2 * io) / f64::from(2 * r))
    }
}

impl Interpolater for CellBilinear {
    fn name(&self) -> &'static str {
        "CellBilinear"
    }

    fn centring(&self) -> Centring {
        Centring::Cell
    }

    /// The fine region coarsened, grown by one on each side where a fine cell of the
    /// region lies in the half of its coarse cell toward that side (AMReX's
    /// `CellBilinear::CoarseBox`; not in directions of ratio 1).
    fn coarse_box(&self, fine_region: &IndexBox, ratio: IntVect) -> IndexBox {
        let mut b = fine_region.coarsen_iv(ratio);
        for d in 0..3 {
            let r = ratio[d];
            if r > 1 {
                let (_, lo) = split(fine_region.lo()[d], r);
                let (_, hi) = split(fine_region.hi()[d], r);
                b = grow_sides(b, d, lo * 2 < r, hi * 2 >= r);
            }
        }
        b
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
        // Per fine i: own and neighbour coarse offsets in a coarse row, own weight.
        let x = |ic: i32, io: i32| {
            let (s, w) = side(io, rx);
            (off(ic, cb), off(ic + s, cb), w)
        };
        for_each_fine_row(&mut fine, fine_region, ratio, x, |f, xs, at| {
            let RowAt {
                n,
                j: (jc, jo),
                k: (kc, ko),
            } = at;
            let (sy, wy) = side(jo, ry);
            let (sz, wz) = side(ko, rz);
            let c00 = crse.row(jc, kc, n);
            let c10 = crse.row(jc + sy, kc, n);
            let c01 = crse.row(jc, kc + sz, n);
            let c11 = crse.row(jc + sy, kc + sz, n);
            for (f, &(a, b, wx)) in f.iter_mut().zip(xs) {
                // AMReX's eight terms, in its order.
                *f = c00[a] * wx * wy * wz
                    + c00[b] * (1.0 - wx) * wy * wz
                    + c10[a] * wx * (1.0 - wy) * wz
                    + c10[b] * (1.0 - wx) * (1.0 - wy) * wz
                    + c01[a] * wx * wy * (1.0 - wz)
                    + c01[b] * (1.0 - wx) * wy * (1.0 - wz)
                    + c11[a] * wx * (1.0 - wy) * (1.0 - wz)
                    + c11[b] * (1.0 - wx) * (1.0 - wy) * (1.0 - wz);
            }
        });
    }
}
