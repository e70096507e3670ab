//! The per-box loops of the flux register, over `i`-rows (slices). Each adds in AMReX's
//! order (`fluxreg_fineadd`, `fluxreg_fineareaadd`, `fluxreg_reflux`); the results have
//! not been compared with AMReX's own output.
//!
//! The callers have checked the boxes: every region lies inside the views it indexes,
//! so a violation is a bug here and panics in the views' row accessors.

use alloc::vec::Vec;

use amrex_array4::{Array4, Array4Mut};
use amrex_box::{IndexBox, IntVect};

use crate::kernels::off;

/// A length along one direction of a non-empty box, or a ratio (at least 1, checked).
#[inline]
#[track_caller]
fn len(n: i32) -> usize {
    usize::try_from(n).expect("positive length (checked)")
}

/// The `nx` elements of `a`'s `i`-row at `(j, k, n)` from global index `x0`.
#[inline]
#[track_caller]
fn sub_row<'a>(a: &Array4<'a, f64>, x0: i32, nx: usize, j: i32, k: i32, n: usize) -> &'a [f64] {
    let row = a.row(j, k, n);
    let o = off(x0, a.begin()[0]);
    &row[o..o + nx]
}

/// `d[i] = mult * s[i]`, or `d[i] = mult * s[i] * a[i]` with areas (AMReX's
/// `sfab * mult * afab`, areas of 1 when none are given), over `bx`, components
/// `scomp..` of `src` into `0..nc` of `dst`.
pub(super) fn scaled(
    dst: &mut Array4Mut<'_, f64>,
    src: Array4<'_, f64>,
    area: Option<Array4<'_, f64>>,
    bx: &IndexBox,
    scomp: usize,
    nc: usize,
    mult: f64,
) {
    let (lo, hi) = (bx.lo(), bx.hi());
    let nx = len(bx.length()[0]);
    let o0 = off(lo[0], dst.begin()[0]);
    for n in 0..nc {
        for k in lo[2]..=hi[2] {
            for j in lo[1]..=hi[1] {
                let d = &mut dst.row_mut(j, k, n)[o0..][..nx];
                let s = sub_row(&src, lo[0], nx, j, k, scomp + n);
                match &area {
                    None => d.iter_mut().zip(s).for_each(|(d, &s)| *d = s * mult),
                    Some(a) => {
                        let a = sub_row(a, lo[0], nx, j, k, 0);
                        for ((d, &s), &a) in d.iter_mut().zip(s).zip(a) {
                            *d = s * mult * a;
                        }
                    }
                }
            }
        }
    }
}

/// What `fine_add` reads and how it weighs it: the fine fluxes (components from
/// `comp`), optional fine face areas (component 0), and `mult`.
pub(super) struct FineFlux<'a> {
    /// The fine fluxes, on the faces normal to the register's direction.
    pub(super) flux: Array4<'a, f64>,
    /// The first flux component read.
    pub(super) comp: usize,
    /// The fine face areas, if the area-weighted form is asked for.
    pub(super) area: Option<Array4<'a, f64>>,
    /// The factor on every term.
    pub(super) mult: f64,
}

/// Adds to every register face of `rbox` (one plane of coarse faces normal to `dir`) the
/// fine faces it covers, `mult * flux` each (or `mult * area * flux`), for components
/// `0..nc` of `src` into `rcomp..` of `reg`: AMReX's `fluxreg_fineadd` and
/// `fluxreg_fineareaadd`, adding the fine faces of each coarse face one by one, the
/// slower tangential offset outside.
pub(super) fn fine_add(
    reg: &mut Array4Mut<'_, f64>,
    rbox: &IndexBox,
    src: &FineFlux<'_>,
    rcomp: usize,
    nc: usize,
    dir: usize,
    ratio: IntVect,
) {
    let (lo, hi) = (rbox.lo(), rbox.hi());
    let [rx, ry, rz] = ratio.to_array();
    let mult = src.mult;
    let mut terms = Vec::new();
    // The one fine face index along `dir` under the register's plane of coarse faces.
    let fd = lo[dir] * ratio[dir];
    let term = |j: i32, k: i32, i: i32, n: usize| -> f64 {
        let f = src.flux[(i, j, k, src.comp + n)];
        match &src.area {
            None => mult * f,
            Some(a) => mult * a[(i, j, k, 0)] * f,
        }
    };
    for n in 0..nc {
        if dir == 0 {
            // The `i`-rows run across the faces: one face per row, summed point by point.
            let ic = lo[0];
            for kc in lo[2]..=hi[2] {
                for jc in lo[1]..=hi[1] {
                    let mut acc = reg[(ic, jc, kc, rcomp + n)];
                    for koff in 0..rz {
                        for joff in 0..ry {
                            acc += term(ry * jc + joff, rz * kc + koff, fd, n);
                        }
                    }
                    reg[(ic, jc, kc, rcomp + n)] = acc;
                }
            }
            continue;
        }
        // Directions 1 and 2: the `i`-rows run along the faces. The fine rows under one
        // register row are the offsets in the other tangential direction (`k` for
        // direction 1, `j` for direction 2), which AMReX adds outside the `i` offsets.
        let nx = len(rbox.length()[0]);
        let (x0, fnx) = (lo[0] * rx, nx * len(rx));
        let offsets = if dir == 1 { rz } else { ry };
        let o0 = off(lo[0], reg.begin()[0]);
        for kc in lo[2]..=hi[2] {
            for jc in lo[1]..=hi[1] {
                let r = &mut reg.row_mut(jc, kc, rcomp + n)[o0..][..nx];
                for o in 0..offsets {
                    let (j, k) = if dir == 1 {
                        (fd, rz * kc + o)
                    } else {
                        (ry * jc + o, fd)
                    };
                    let f = sub_row(&src.flux, x0, fnx, j, k, src.comp + n);
                    terms.clear();
                    match &src.area {
                        None => terms.extend(f.iter().map(|&f| mult * f)),
                        Some(a) => {
                            let a = sub_row(a, x0, fnx, j, k, 0);
                            terms.extend(f.iter().zip(a).map(|(&f, &a)| mult * a * f));
                        }
                    }
                    for (r, t) in r.iter_mut().zip(terms.chunks_exact(len(rx))) {
                        for &t in t {
                            *r += t;
                        }
                    }
                }
            }
        }
    }
}

/// Where `reflux` finds the volume of the coarse cell a correction lands on.
#[derive(Clone, Copy)]
pub(super) enum Volume<'a> {
    /// One volume for every cell (Cartesian coordinates: `dx dy dz`).
    Uniform(f64),
    /// Each cell's volume from the coarse geometry (RZ and spherical coordinates), taken
    /// at the cell's periodic image inside the domain: the cell the correction of a
    /// register face on a periodic boundary lands on.
    Geometry(&'a amrex_geometry::Geometry),
    /// Component 0 of a fab that already holds the volumes of the cells the corrections
    /// land on (gathered from a volume MultiFab onto the correction's layout).
    Data(Array4<'a, f64>),
}

/// [`correction`] for one volume `v` over whole fabs: `d[p] = coef * r[p] / v`, `r` the
/// register's components in the order of `d`'s (the same points, the same layout).
pub(super) fn correction_uniform(d: &mut [f64], r: &[f64], coef: f64, v: f64) {
    debug_assert_eq!(d.len(), r.len());
    d.iter_mut().zip(r).for_each(|(d, &r)| *d = coef * r / v);
}

/// The index of cell `iv` moved into the domain of `g` along its periodic directions
/// (unchanged inside the domain and along the other directions).
fn periodic_image(g: &amrex_geometry::Geometry, iv: IntVect) -> IntVect {
    let dom = g.domain();
    let mut p = iv;
    for d in 0..3 {
        if let Some(period) = g.period(d) {
            let lo = dom.lo()[d];
            // `period` is the domain's length, positive; the result lies in the domain.
            p[d] = lo + (p[d] - lo).rem_euclid(period);
        }
    }
    p
}

/// The correction each register face of `reg` (components `scomp..scomp + nc`) makes
/// to the coarse cell just outside it, `coef * r / V` (`coef` is `-scale` for a low
/// side, `+scale` for a high side: AMReX's `fluxreg_reflux`, whose low side reads the
/// flux of the cell's high face), into components `0..nc` of `dst` over `cells`, the
/// plane of those cells; `shift` takes a cell to its face. The products and quotients
/// are the ones the state's cells then add, so adding them with a `ParallelCopy` gives
/// the state exactly `s + coef * r / V`.
#[expect(
    clippy::too_many_arguments,
    reason = "the destination and its plane, the register and its offset, the volumes, \
              the coefficient and the component range are all independent"
)]
pub(super) fn correction(
    dst: &mut Array4Mut<'_, f64>,
    cells: &IndexBox,
    reg: Array4<'_, f64>,
    shift: IntVect,
    vol: &Volume<'_>,
    coef: f64,
    scomp: usize,
    nc: usize,
) {
    let (lo, hi) = (cells.lo(), cells.hi());
    let nx = len(cells.length()[0]);
    let o0 = off(lo[0], dst.begin()[0]);
    let mut vbuf = Vec::new();
    for k in lo[2]..=hi[2] {
        for j in lo[1]..=hi[1] {
            // The row's volumes, once for every component.
            let v: &[f64] = match vol {
                Volume::Uniform(_) => &[],
                Volume::Geometry(g) => {
                    vbuf.clear();
                    let cell = |i| g.volume(periodic_image(g, IntVect::new(i, j, k)));
                    vbuf.extend((lo[0]..=hi[0]).map(cell));
                    &vbuf
                }
                Volume::Data(a) => sub_row(a, lo[0], nx, j, k, 0),
            };
            for n in 0..nc {
                let r = sub_row(
                    &reg,
                    lo[0] - shift[0],
                    nx,
                    j - shift[1],
                    k - shift[2],
                    scomp + n,
                );
                let d = &mut dst.row_mut(j, k, n)[o0..][..nx];
                match vol {
                    Volume::Uniform(v) => {
                        d.iter_mut().zip(r).for_each(|(d, &r)| *d = coef * r / v);
                    }
                    _ => {
                        for ((d, &r), &v) in d.iter_mut().zip(r).zip(v) {
                            *d = coef * r / v;
                        }
                    }
                }
            }
        }
    }
}
