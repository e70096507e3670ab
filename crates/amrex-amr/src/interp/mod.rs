//! Interpolation from a coarse level onto a fine one, AMReX's `Interpolater` family
//! (`AMReX_Interpolater`): the [`Interpolater`] trait and its five implementations, each
//! in a file of its own.
//!
//! An interpolater works on one fab at a time: given the coarse data (an [`Array4`]
//! that covers [`Interpolater::coarse_box`] of the fine region) it fills a region of a
//! fine fab (an [`Array4Mut`]). Gathering the coarse data from a coarse MultiFab
//! (AMReX's `FillPatch`) is not built yet.

use crate::comps::Comps;
use alloc::vec::Vec;

use amrex_array4::{Array4, Array4Mut};
use amrex_box::{IndexBox, IndexType, IntVect};
use amrex_geometry::Geometry;

use crate::check;
#[cfg(doc)]
use crate::error::AmrErrorKind;
use crate::error::{AmrError, Operand};

mod cell_bilinear;
mod cell_cons;
mod face_linear;
mod node_bilinear;
mod pc;

pub use cell_bilinear::CellBilinear;
pub use cell_cons::CellConsLinear;
pub use face_linear::FaceLinear;
pub use node_bilinear::NodeBilinear;
pub use pc::PcInterp;

/// The index types an [`Interpolater`] takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Centring {
    /// Any index type.
    Any,
    /// Cell-centred data.
    Cell,
    /// Nodal data (nodal in every direction).
    Node,
    /// Face data (nodal in exactly one direction).
    Face,
}

impl Centring {
    /// `true` if data of index type `typ` has this centring.
    #[must_use]
    pub fn admits(self, typ: IndexType) -> bool {
        match self {
            Self::Any => true,
            Self::Cell => typ.cell_centered(),
            Self::Node => typ.node_centered(),
            Self::Face => (0..3).filter(|&d| typ.node_centered_dir(d)).count() == 1,
        }
    }

    /// The centring in words, for error messages.
    #[must_use]
    pub const fn describe(self) -> &'static str {
        match self {
            Self::Any => "any",
            Self::Cell => "cell-centred",
            Self::Node => "nodal",
            Self::Face => "face-centred (nodal in exactly one direction)",
        }
    }
}

/// AMReX's `Interpolater`: fills a region of a fine fab from coarse data.
///
/// An implementation says which coarse cells it needs ([`coarse_box`](Self::coarse_box))
/// and how to fill ([`fill`](Self::fill)); [`interp`](Self::interp), provided, checks the
/// arguments first (ratio, index type, components, that the fine region lies in the
/// fine data and its coarse box in the coarse data) and then calls `fill` with both
/// views cut down to the components to use, so a new interpolater needs no checks of
/// its own. Interpolaters are `Sync` (they hold settings, not state), so FillPatch can
/// interpolate several fabs at once with one of them.
///
/// ```
/// use amrex_amr::{Centring, Comps, Interpolater, PcInterp};
/// use amrex_array4::{Array4, Array4Mut};
/// use amrex_box::{IndexBox, IntVect};
/// use amrex_geometry::Geometry;
///
/// /// Injection of a constant: every fine cell gets the coarse mean of its whole
/// /// neighbourhood (a made-up interpolater, to show the trait).
/// struct Smear;
/// impl Interpolater for Smear {
///     fn name(&self) -> &'static str { "Smear" }
///     fn centring(&self) -> Centring { Centring::Cell }
///     fn coarse_box(&self, fine: &IndexBox, ratio: IntVect) -> IndexBox {
///         fine.coarsen_iv(ratio).grow(1)
///     }
///     fn fill(&self, crse: Array4<'_, f64>, mut fine: Array4Mut<'_, f64>, region: &IndexBox,
///             ratio: IntVect, _geom: Option<&Geometry>) {
///         let cbx = self.coarse_box(region, ratio);
///         let mut sum = 0.0;
///         crse.for_each(cbx, |_, _, _, _, v| sum += v);
///         let mean = sum / cbx.num_pts() as f64;
///         fine.for_each_mut(*region, |_, _, _, _, v| *v = mean);
///     }
/// }
///
/// let cbx = IndexBox::new(IntVect::splat(-1), IntVect::splat(2));
/// let crse_data = vec![2.0; cbx.num_pts() as usize];
/// let fbx = IndexBox::new(IntVect::ZERO, IntVect::splat(3));
/// let mut fine_data = vec![0.0; fbx.num_pts() as usize];
/// Smear.interp(Array4::new(&crse_data, cbx, 1), Array4Mut::new(&mut fine_data, fbx, 1),
///              &fbx, Comps::first(1), IntVect::splat(2), None)?;
/// assert!(fine_data.iter().all(|&v| v == 2.0));
/// // The provided checks refuse a fine region the coarse data does not cover.
/// let err = PcInterp.interp(Array4::new(&crse_data, cbx, 1), Array4Mut::new(&mut fine_data, fbx, 1),
///              &fbx, Comps::first(1), IntVect::splat(1), None).unwrap_err();
/// assert!(err.to_string().contains("coarse region"));
/// # Ok::<(), amrex_amr::AmrError>(())
/// ```
pub trait Interpolater: Sync {
    /// The name used in error messages (`"PcInterp"`, ...).
    fn name(&self) -> &'static str;

    /// The index types the interpolater takes.
    fn centring(&self) -> Centring;

    /// The coarse region whose data filling `fine_region` reads (AMReX's
    /// `CoarseBox(fine, ratio)`), in coarse indices and of `fine_region`'s index type.
    fn coarse_box(&self, fine_region: &IndexBox, ratio: IntVect) -> IndexBox;

    /// Fills `fine_region` of `fine` from `crse`. Called by [`interp`](Self::interp)
    /// after its checks: `crse` and `fine` have the same components (the ones to use,
    /// from 0), `fine_region` is non-empty, of an admitted index type and inside `fine`,
    /// its [`coarse_box`](Self::coarse_box) is inside `crse`, and `ratio >= 1`.
    /// `fine_geom` is the fine level's geometry, when the caller has one.
    ///
    /// # Panics
    /// An implementation may panic if called without those guarantees.
    fn fill(
        &self,
        crse: Array4<'_, f64>,
        fine: Array4Mut<'_, f64>,
        fine_region: &IndexBox,
        ratio: IntVect,
        fine_geom: Option<&Geometry>,
    );

    /// Fills `fine_region` of `fine` (components `comps.dst..`) from `crse` (components
    /// `comps.src..`), AMReX's `interp(crse, crse_comp, fine, fine_comp, ncomp,
    /// fine_region, ratio, crse_geom, fine_geom, ...)`. `fine_geom` is the fine level's
    /// geometry (only [`CellConsLinear`] reads it, for RZ coordinates); `None` stands
    /// for Cartesian. An empty `fine_region` does nothing.
    ///
    /// # Errors
    /// Nothing is written when any of these is returned:
    /// [`BadRatio`](AmrErrorKind::BadRatio);
    /// [`WrongIndexType`](AmrErrorKind::WrongIndexType) for a region of an index type
    /// the interpolater does not take;
    /// [`ComponentsOutside`](AmrErrorKind::ComponentsOutside);
    /// [`RegionOutside`](AmrErrorKind::RegionOutside) when the fine region is not inside
    /// `fine`, or its coarse box not inside `crse` (the coarse data lacks the ghost
    /// cells the interpolater reads).
    fn interp(
        &self,
        crse: Array4<'_, f64>,
        fine: Array4Mut<'_, f64>,
        fine_region: &IndexBox,
        comps: Comps,
        ratio: IntVect,
        fine_geom: Option<&Geometry>,
    ) -> Result<(), AmrError> {
        let op = self.name();
        check::ratio(op, ratio)?;
        check::centring(op, Operand::Fine, fine_region.ix_type(), self.centring())?;
        check::comps(op, Operand::Crse, comps.src, comps.count, crse.ncomp())?;
        check::comps(op, Operand::Fine, comps.dst, comps.count, fine.ncomp())?;
        if fine_region.is_empty() || comps.count == 0 {
            return Ok(());
        }
        check::inside(op, Operand::Fine, fine_region, fine.index_box())?;
        let needed = self.coarse_box(fine_region, ratio);
        check::inside(op, Operand::Crse, &needed, crse.index_box())?;
        self.fill(
            crse.components(comps.src, comps.count),
            fine.into_components(comps.dst, comps.count),
            fine_region,
            ratio,
            fine_geom,
        );
        Ok(())
    }
}

/// Where a fine `i`-row lies over the coarse data: its component `n`, and the coarse
/// index and offset ([`split`]) of its `j` and of its `k`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RowAt {
    pub(crate) n: usize,
    pub(crate) j: (i32, i32),
    pub(crate) k: (i32, i32),
}

/// The row loop the interpolaters share: `row(f, xs, at)` for every `i`-row of
/// `fine_region` in `fine`, every component, with `f` the row's part inside the region
/// and `xs[m] = x(ic, io)` for the `m`-th fine index `i` of the region, `(ic, io) =
/// split(i, rx)`, computed once for all rows.
pub(crate) fn for_each_fine_row<X>(
    fine: &mut Array4Mut<'_, f64>,
    fine_region: &IndexBox,
    ratio: IntVect,
    x: impl Fn(i32, i32) -> X,
    mut row: impl FnMut(&mut [f64], &[X], RowAt),
) {
    let [rx, ry, rz] = ratio.to_array();
    let (lo, hi) = (fine_region.lo(), fine_region.hi());
    let xs: Vec<X> = (lo[0]..=hi[0])
        .map(|i| {
            let (ic, io) = split(i, rx);
            x(ic, io)
        })
        .collect();
    let fo = off(lo[0], fine.begin()[0]);
    for n in 0..fine.ncomp() {
        for k in lo[2]..=hi[2] {
            let k = (k, split(k, rz));
            for j in lo[1]..=hi[1] {
                let f = &mut fine.row_mut(j, k.0, n)[fo..fo + xs.len()];
                let at = RowAt {
                    n,
                    j: split(j, ry),
                    k: k.1,
                };
                row(f, &xs, at);
            }
        }
    }
}

/// Per fine index `i` of `lo..=hi` along a direction of ratio `r`: the coarse index
/// `floor(i / r)` and the offset `i - r floor(i / r)` in `0..r`.
pub(crate) fn split(i: i32, r: i32) -> (i32, i32) {
    let c = i.div_euclid(r);
    (c, i - c * r)
}

pub(crate) use crate::kernels::off;

/// `b` one point longer on the high side in every direction `d` where `dirs(d)` holds,
/// the ratio is above 1 and `b` has a single point: the coarse box of the nodal
/// interpolaters, which blend two coarse points.
pub(crate) fn lengthen_single(
    mut b: IndexBox,
    ratio: IntVect,
    dirs: impl Fn(usize) -> bool,
) -> IndexBox {
    for d in 0..3 {
        if dirs(d) && ratio[d] > 1 && b.length()[d] < 2 {
            b = b.grow_hi(d, 1);
        }
    }
    b
}

/// Grows `b` by one cell on the low side in direction `d` (`lo`), the high side (`hi`).
pub(crate) fn grow_sides(b: IndexBox, d: usize, lo: bool, hi: bool) -> IndexBox {
    let b = if lo { b.grow_lo(d, 1) } else { b };
    if hi { b.grow_hi(d, 1) } else { b }
}
