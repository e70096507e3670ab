//! Particle–mesh operations: deposition (`particle_to_mesh`), gather
//! (`mesh_to_particle`), AMReX's nearest-grid-point and cloud-in-cell weights
//! (`ParticleInterpolator::Nearest` / `Linear`), `increment` and
//! `sort_particles_by_cell`.
use crate::container::{ParticleContainer, ParticleLevel, TileEntry, agree_failure};
use crate::error::{ErrorKind, ParticleContainerError, Result};
use crate::tile::{PREFETCH_AHEAD, ParticleTile, f2r, r2f};
use alloc::vec;
use alloc::vec::Vec;
use amrex_aos::{ParticleReal, SPACEDIM};
use amrex_array4::FabLayout;
use amrex_basefab::component_range;
use amrex_geometry::Geometry;
use amrex_multifab::{Array4, Array4Mut, BaseFab, FabArray, IntVect, MultiFab, iMultiFab};
use amrex_runtime::Fingerprint;
use amrex_runtime::threads::{par_for_each_mut, par_map_mut};

/// What a particle needs to find its cells: the domain's low corner, inverse cell size
/// and first cell index (from a [`Geometry`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeshMap {
    /// `prob_lo`.
    pub plo: [f64; SPACEDIM],
    /// `1 / dx`.
    pub dxi: [f64; SPACEDIM],
    /// The domain's `small_end`.
    pub dlo: IntVect,
}

impl MeshMap {
    /// The map of `geom`.
    #[must_use]
    pub fn new(geom: &Geometry) -> Self {
        Self {
            plo: geom.prob_lo(),
            dxi: geom.inv_cell_size(),
            dlo: geom.domain().small_end(),
        }
    }
}

/// `floor(y)` as an `i32`, for `y` in `i32`'s range (else a saturated value). Exactly
/// `f64::floor` there, but inlined: without SSE4.1 in the target, `floor` is a libm
/// call, the largest cost of a deposit.
#[inline(always)]
#[expect(
    clippy::cast_possible_truncation,
    reason = "the saturating float-to-int conversion is the one wanted (see above): it \
              rounds toward zero, which the next line turns into floor"
)]
pub(crate) fn floor_i32(y: f64) -> i32 {
    let t = y as i32;
    if f64::from(t) > y { t - 1 } else { t }
}

/// The cell of `p` as [`Geometry::cell_index`] finds it (`floor((x - plo) / dx) +
/// small_end`), for positions whose index fits `i32` comfortably (inside or near the
/// domain); `None` otherwise.
#[inline]
pub(crate) fn cell_of(map: &MeshMap, p: [ParticleReal; SPACEDIM]) -> Option<IntVect> {
    let mut c = IntVect::ZERO;
    for d in 0..SPACEDIM {
        let y = (r2f(p[d]) - map.plo[d]) * map.dxi[d];
        if !(y > -1e9 && y < 1e9) {
            return None;
        }
        c[d] = floor_i32(y) + map.dlo[d];
    }
    Some(c)
}

/// Nearest-grid-point weights (AMReX `ParticleInterpolator::Nearest`): the particle's
/// cell, `floor((x - plo) / dx)`, with weight 1 — the cell
/// [`Geometry::cell_index`] gives, so a point on a face goes to the cell above.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nearest {
    /// The cell.
    pub index: IntVect,
}

impl Nearest {
    /// The weights of a particle at `pos`.
    #[inline]
    #[must_use]
    pub fn new(map: &MeshMap, pos: [ParticleReal; SPACEDIM]) -> Self {
        let index = IntVect::new(
            floor_i32((r2f(pos[0]) - map.plo[0]) * map.dxi[0]) + map.dlo[0],
            floor_i32((r2f(pos[1]) - map.plo[1]) * map.dxi[1]) + map.dlo[1],
            floor_i32((r2f(pos[2]) - map.plo[2]) * map.dxi[2]) + map.dlo[2],
        );
        Self { index }
    }
}

/// Cloud-in-cell (trilinear) weights for cell-centred data (AMReX
/// `ParticleInterpolator::Linear`): with `l = (x - plo) / dx - 1/2`, the cells
/// `floor(l)` and `floor(l) + 1` per direction get weights `1 - (l - floor(l))` and
/// `l - floor(l)`. The 8 weights sum to 1. A particle in cell `c` touches `c - 1 ..=
/// c + 1`: one ghost cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Linear {
    /// The lower of the two cells per direction.
    pub index: IntVect,
    /// `[w_low, w_high]` per direction.
    pub w: [[f64; 2]; SPACEDIM],
}

impl Linear {
    /// The weights of a particle at `pos`.
    #[inline]
    #[must_use]
    pub fn new(map: &MeshMap, pos: [ParticleReal; SPACEDIM]) -> Self {
        let mut index = IntVect::ZERO;
        let mut w = [[0.0; 2]; SPACEDIM];
        for d in 0..SPACEDIM {
            let l = (r2f(pos[d]) - map.plo[d]) * map.dxi[d] - 0.5;
            let f = floor_i32(l);
            index[d] = f + map.dlo[d];
            let hi = l - f64::from(f);
            w[d] = [1.0 - hi, hi];
        }
        Self { index, w }
    }

    /// Calls `f(cell, weight)` for the 8 cells, `i` fastest.
    #[inline]
    pub fn for_each(&self, mut f: impl FnMut(IntVect, f64)) {
        for (dk, wz) in self.w[2].iter().enumerate() {
            for (dj, wy) in self.w[1].iter().enumerate() {
                for (di, wx) in self.w[0].iter().enumerate() {
                    #[expect(
                        clippy::cast_possible_truncation,
                        clippy::cast_possible_wrap,
                        reason = "di, dj, dk < 2: indices of a [f64; 2]"
                    )]
                    let d = IntVect::new(di as i32, dj as i32, dk as i32);
                    let c = self.index + d;
                    f(c, wx * wy * wz);
                }
            }
        }
    }
}

/// `2^52`: adding it to an integer-valued `f64` in `[0, 2^52)` leaves the integer in the
/// low mantissa bits.
const TWO52: f64 = 4_503_599_627_370_496.0;
/// `1.5 · 2^52`: adding and subtracting it rounds to the nearest integer (`|l| < 2^51`).
const ROUND: f64 = 6_755_399_441_055_744.0;

/// `floor(l)` as an `f64`, exact for `|l| < 2^51` (larger values are far outside every fab
/// and [`Locator::locate`] rejects them); infinities stay infinite, NaN stays NaN. Two
/// additions round to the nearest integer: the baseline x86-64 target has no SSE4.1
/// `roundsd` (`f64::floor` is a libm call there), and the saturating `as i32` of
/// [`floor_i32`] takes nine instructions.
#[inline(always)]
fn floor_f64(l: f64) -> f64 {
    let r = (l + ROUND) - ROUND;
    r - if r > l { 1.0 } else { 0.0 }
}

/// `v` as a `u64`, for an integer `v` in `[0, 2^52)`: its low mantissa bits after adding
/// `2^52`.
#[inline(always)]
fn index_bits(v: f64) -> u64 {
    (v + TWO52).to_bits().wrapping_sub(TWO52.to_bits())
}

/// The ready-made kernels' per-fab constants, hoisted out of the particle loop: where a
/// particle's stencil (`reach + 1` cells per direction) starts in the slice of one fab
/// component, and the fractional offsets of its weights. The cell is the one [`Nearest`]
/// (`reach` 0) or [`Linear`] (`reach` 1) chooses, bit for bit: the same `l` and an exact
/// floor. Cell indices stay `f64` (exact integers) through the bounds check (a product
/// per direction, one compare and one branch for all three) and the offset, which one
/// bit move turns into an integer: no saturating conversions (five instructions each),
/// and the compiler pairs the `y` and `z` arithmetic in SSE2.
#[derive(Clone, Copy)]
struct Locator {
    plo: [f64; SPACEDIM],
    dxi: [f64; SPACEDIM],
    /// 1/2 for CIC (cell-centred weights), 0 for NGP.
    half: f64,
    /// The domain's `small_end` less the fab's low corner.
    shift: [f64; SPACEDIM],
    /// The largest stencil start, relative to the fab's low corner: `len - 1 - reach`.
    last: [f64; SPACEDIM],
    /// Strides of `j` and `k`, as `f64` and as `usize`.
    jsf: f64,
    ksf: f64,
    js: usize,
    ks: usize,
}

impl Locator {
    fn new(map: &MeshMap, fi: &FabLayout, reach: i32) -> Self {
        let (lo, end) = (fi.begin(), fi.end());
        let last = [0, 1, 2].map(|d| f64::from(end[d]) - 1.0 - f64::from(lo[d]) - f64::from(reach));
        // A fab thinner than a stencil (not with the ghost cells `check_layout` asks
        // for) holds no stencil: an infinite shift puts every particle outside.
        let thin = last.iter().any(|&l| l < 0.0);
        Self {
            plo: map.plo,
            dxi: map.dxi,
            half: if reach == 0 { 0.0 } else { 0.5 },
            shift: [0, 1, 2].map(|d| match thin {
                true => f64::NEG_INFINITY,
                false => f64::from(map.dlo[d]) - f64::from(lo[d]),
            }),
            last,
            jsf: fi.strides()[0] as f64,
            ksf: fi.strides()[1] as f64,
            js: fi.strides()[0],
            ks: fi.strides()[1],
        }
    }

    /// The stencil start of the particle at `p` in one component of the fab, and
    /// `l - floor(l)` per direction; `None` if the stencil leaves the fab. For a NaN
    /// position, an offset beyond every fab (the caller's slice access fails).
    #[inline(always)]
    fn locate(&self, p: [ParticleReal; SPACEDIM]) -> Option<(usize, [f64; SPACEDIM])> {
        let mut rel = [0.0; SPACEDIM];
        let mut frac = [0.0; SPACEDIM];
        let mut room = [0.0; SPACEDIM];
        for d in 0..SPACEDIM {
            let l = (r2f(p[d]) - self.plo[d]) * self.dxi[d] - self.half;
            let fl = floor_f64(l);
            frac[d] = l - fl;
            rel[d] = fl + self.shift[d];
            // `0 <= rel <= last` (with `last >= 0`) exactly when this is not negative:
            // a product of integers, so its sign is exact.
            room[d] = rel[d] * (self.last[d] - rel[d]);
        }
        // Not `f64::min` (which needs more instructions to ignore NaN): a NaN position
        // makes `o` NaN, and `index_bits` then an offset of at least 2^61.
        let least = |a: f64, b: f64| if a < b { a } else { b };
        if least(least(room[0], room[1]), room[2]) < 0.0 {
            return None;
        }
        // Exact: an integer below the fab's size.
        let o = rel[0] + rel[1] * self.jsf + rel[2] * self.ksf;
        // Not `as usize`: the offset of a NaN (at least 2^61) would wrap to a small one
        // on a 32-bit target; `try_from` is free where `usize` has 64 bits.
        let at = usize::try_from(index_bits(o)).ok()?;
        Some((at, frac))
    }
}

#[cold]
fn outside(grid: usize, position: [ParticleReal; SPACEDIM]) -> ParticleContainerError {
    ErrorKind::OutsideFab { grid, position }.into()
}

/// `s[at]` and `s[at + 1]`, with one bounds check.
#[inline(always)]
fn pair(s: &[f64], at: usize) -> [f64; 2] {
    match s.get(at..at + 2) {
        Some(&[a, b]) => [a, b],
        _ => out_of_range(at, s.len()),
    }
}

/// `s[at] += v[0]` and `s[at + 1] += v[1]`, with one bounds check.
#[inline(always)]
fn add_pair(s: &mut [f64], at: usize, v: [f64; 2]) {
    let len = s.len();
    match s.get_mut(at..at + 2) {
        Some([a, b]) => {
            *a += v[0];
            *b += v[1];
        }
        _ => out_of_range(at, len),
    }
}

/// `a · b`, per element.
#[inline(always)]
fn mul_pair(a: [f64; 2], b: [f64; 2]) -> [f64; 2] {
    [a[0] * b[0], a[1] * b[1]]
}

/// `a + b`, per element.
#[inline(always)]
fn add_pair_to(a: [f64; 2], b: [f64; 2]) -> [f64; 2] {
    [a[0] + b[0], a[1] + b[1]]
}

#[cold]
#[track_caller]
fn out_of_range(at: usize, len: usize) -> ! {
    panic!("stencil at {at} outside a fab slice of {len} (Locator bug)")
}

/// Where the four `x` pairs of a 2x2x2 stencil start, relative to its first cell, and the
/// stencil's length in the slice: computed with checked additions once per fab, so that
/// the compiler can prove every pair inside a slice of `span` elements (one bounds check
/// per stencil instead of one per pair).
#[derive(Clone, Copy)]
struct Rows {
    at: [usize; 4],
    span: usize,
}

impl Rows {
    #[inline(always)]
    fn new(js: usize, ks: usize) -> Self {
        let ksjs = ks.checked_add(js);
        let span = ksjs.and_then(|r| r.checked_add(2));
        let (Some(ksjs), Some(span)) = (ksjs, span) else {
            out_of_range(ks, js)
        };
        let at = [0, js, ks, ksjs];
        // The very test `pair` makes, once here: the compiler then drops it from the
        // particle loop.
        for a in at {
            if !(a <= a + 2 && a + 2 <= span) {
                out_of_range(a, span);
            }
        }
        Self { at, span }
    }
}

/// Deposits `weight(tile, i)` of every particle of `tile` into `data` (one fab
/// component), nearest-grid-point (`CIC` false) or cloud-in-cell. The same products,
/// added to the same cells in the same order as `q · wx · wy · wz` per cell would be;
/// the `x` pairs of a row go in one SSE2 add.
// Not inlined: as a function its arguments are `noalias`, so the compiler keeps the
// tile's length and pointers in registers across the stores into the fab.
#[inline(never)]
fn deposit_tile<T: ParticleTile, const CIC: bool>(
    loc: &Locator,
    data: &mut [f64],
    grid: usize,
    tile: &T,
    weight: &impl Fn(&T, usize) -> f64,
) -> Result<()> {
    let rows = Rows::new(loc.js, loc.ks);
    for i in 0..tile.len() {
        tile.prefetch(i + PREFETCH_AHEAD);
        let p = tile.pos(i);
        let q = weight(tile, i);
        let Some((o, hi)) = loc.locate(p) else {
            return Err(outside(grid, p));
        };
        if CIC {
            let [wx, wy, wz] = hi.map(|h| [1.0 - h, h]);
            let (q0, q1) = (q * wz[0], q * wz[1]);
            let w = [q0 * wy[0], q0 * wy[1], q1 * wy[0], q1 * wy[1]];
            // One bounds check for the whole stencil.
            let Some(s) = data.get_mut(o..).and_then(|s| s.get_mut(..rows.span)) else {
                return Err(outside(grid, p));
            };
            for (at, w) in rows.at.into_iter().zip(w) {
                add_pair(s, at, [w * wx[0], w * wx[1]]);
            }
        } else {
            let Some(v) = data.get_mut(o) else {
                return Err(outside(grid, p));
            };
            *v += q;
        }
    }
    Ok(())
}

/// Sets real components `dst` of every particle of `tile` to the nearest-grid-point
/// (`CIC` false) or trilinear interpolation of the components `src..src + K` of a fab's
/// slice `data` (`ns` cells each): one bounds check per particle serves all of them.
// Not inlined, as `deposit_tile`.
#[inline(never)]
fn gather_tile<T: ParticleTile, const CIC: bool, const K: usize>(
    loc: &Locator,
    (data, src, ns): (&[f64], usize, usize),
    grid: usize,
    tile: &mut T,
    dst: [usize; K],
) -> Result<()> {
    // Components `src..src + K`, made here so that the compiler sees their equal lengths.
    let comps: [&[f64]; K] = core::array::from_fn(|k| &data[(src + k) * ns..][..ns]);
    let rows = Rows::new(loc.js, loc.ks);
    for i in 0..tile.len() {
        tile.prefetch(i + PREFETCH_AHEAD);
        let p = tile.pos(i);
        let Some((o, hi)) = loc.locate(p) else {
            return Err(outside(grid, p));
        };
        if CIC {
            let [wx, wy, wz] = hi.map(|h| [1.0 - h, h]);
            // The 8 weights as four x pairs, one per (y, z) row of the stencil.
            let (q0, q1) = (wz[0], wz[1]);
            let w =
                [q0 * wy[0], q0 * wy[1], q1 * wy[0], q1 * wy[1]].map(|w| [w * wx[0], w * wx[1]]);
            for (c, d) in comps.into_iter().zip(dst) {
                // One bounds check for the whole stencil (and all components).
                let Some(s) = c.get(o..).and_then(|s| s.get(..rows.span)) else {
                    return Err(outside(grid, p));
                };
                let [a0, a1, a2, a3] = rows.at;
                let mut acc = mul_pair(w[0], pair(s, a0));
                acc = add_pair_to(acc, mul_pair(w[1], pair(s, a1)));
                acc = add_pair_to(acc, mul_pair(w[2], pair(s, a2)));
                acc = add_pair_to(acc, mul_pair(w[3], pair(s, a3)));
                tile.set_real(i, d, f2r(acc[0] + acc[1]));
            }
        } else {
            for (c, d) in comps.into_iter().zip(dst) {
                let Some(&v) = c.get(o) else {
                    return Err(outside(grid, p));
                };
                tile.set_real(i, d, f2r(v));
            }
        }
    }
    Ok(())
}

/// [`gather_tile`] with the component count as a constant for the common counts (so the
/// loop over components unrolls), one component at a time otherwise.
fn gather_tile_any<T: ParticleTile, const CIC: bool>(
    loc: &Locator,
    (data, src, ns): (&[f64], usize, usize),
    grid: usize,
    tile: &mut T,
    dst: &[usize],
) -> Result<()> {
    let f = (data, src, ns);
    match *dst {
        [a] => gather_tile::<T, CIC, 1>(loc, f, grid, tile, [a]),
        [a, b] => gather_tile::<T, CIC, 2>(loc, f, grid, tile, [a, b]),
        [a, b, c] => gather_tile::<T, CIC, 3>(loc, f, grid, tile, [a, b, c]),
        _ => {
            for (k, &d) in dst.iter().enumerate() {
                gather_tile::<T, CIC, 1>(loc, (data, src + k, ns), grid, tile, [d])?;
            }
            Ok(())
        }
    }
}

/// Groups the local tiles of level `lev` by grid: `(grid, first, end)` in `tiles`.
fn grid_runs<T>(tiles: &[TileEntry<T>], lev: usize) -> Vec<(usize, usize, usize)> {
    let mut runs: Vec<(usize, usize, usize)> = Vec::new();
    for (s, t) in tiles.iter().enumerate() {
        if t.level != lev {
            continue;
        }
        match runs.last_mut() {
            Some((g, _, e)) if *g == t.grid && *e == s => *e = s + 1,
            _ => runs.push((t.grid, s, s + 1)),
        }
    }
    runs
}

/// The arguments a collective particle–mesh operation agrees on (with the container's
/// layout, [`ParticleContainer::agree`]) before anything is checked, so that every rank
/// then takes the same path, refusals included: the level, the component and the mesh
/// operand.
fn mesh_args<E: amrex_multifab::Element>(lev: usize, comp: usize, mf: &FabArray<E>) -> Fingerprint {
    let mut fp = Fingerprint::new();
    fp.usize(lev).usize(comp).with(|fp| mf.hash_operand(fp));
    fp
}

/// The first error of a parallel loop, if any.
fn first_error(errs: impl IntoIterator<Item = Result<()>>) -> Option<ParticleContainerError> {
    errs.into_iter().find_map(core::result::Result::err)
}

impl<T: ParticleTile + Clone> ParticleContainer<T> {
    /// The level `lev` when `mf` is on its grids and map, components `comp..comp +
    /// ncomp` (at least one) are among `mf`'s and `mf` has `ghosts` ghost cells.
    fn check_layout<E: amrex_multifab::Element>(
        &self,
        lev: usize,
        mf: &FabArray<E>,
        comp: usize,
        ncomp: usize,
        ghosts: i32,
    ) -> Result<&ParticleLevel> {
        let l = self.level(lev)?;
        if mf.box_array().boxes() != l.box_array().boxes()
            || mf.distribution_map().pmap() != l.distribution_map().pmap()
        {
            return Err(ErrorKind::LayoutMismatch { level: lev }.into());
        }
        if ncomp == 0 || component_range(comp..comp.saturating_add(ncomp), mf.ncomp()).is_err() {
            return Err(ErrorKind::BadComponent {
                start: comp,
                count: ncomp,
                ncomp: mf.ncomp(),
            }
            .into());
        }
        let ng = mf.n_grow();
        if (0..SPACEDIM).any(|d| ng[d] < ghosts) {
            return Err(ErrorKind::NotEnoughGhosts {
                need: ghosts,
                have: ng,
            }
            .into());
        }
        Ok(l)
    }

    /// Local fabs of `mf` paired with the run of local tiles of their grid.
    fn fab_runs<'m, E: amrex_multifab::Element>(
        &self,
        lev: usize,
        mf: &'m mut FabArray<E>,
    ) -> Vec<(&'m mut BaseFab<'static, E>, usize, usize)> {
        let runs = grid_runs(self.entries(), lev);
        let grids: Vec<usize> = (0..mf.local_size()).map(|l| mf.global_index(l)).collect();
        let mut out = Vec::new();
        let mut r = runs.iter().peekable();
        for (fab, g) in mf.fabs_mut().zip(grids) {
            while r.peek().is_some_and(|x| x.0 < g) {
                r.next();
            }
            if let Some(&&(rg, s, e)) = r.peek()
                && rg == g
            {
                out.push((fab, s, e));
            }
        }
        out
    }

    /// Deposits with a closure per particle (AMReX `ParticleToMesh`): `f(tile, i,
    /// array)` adds particle `i`'s contribution into the fab of its grid (valid and
    /// ghost cells), then `sum_boundary` adds the ghost cells into the valid cells that
    /// own them (periodic images included), so every contribution lands once. Set the
    /// MultiFab to zero first (ghosts included), as in AMReX. Grids run in parallel.
    /// **Collective**.
    ///
    /// # Errors
    /// On every rank, before anything is written: [`ErrorKind::Comm`] when the ranks do
    /// not all call it with the same level and MultiFab layout on the same container
    /// layout; [`ErrorKind::NoSuchLevel`]; [`ErrorKind::LayoutMismatch`] if `mf` is not
    /// on level `lev`'s grids and mapping; [`ErrorKind::BadComponent`] for a MultiFab
    /// without components. [`ErrorKind::MultiFab`] from a fab this rank cannot write (the
    /// other ranks get [`ErrorKind::FailedOnOtherRank`]), or from `sum_boundary`.
    pub fn particle_to_mesh(
        &self,
        lev: usize,
        mf: &mut MultiFab,
        f: impl Fn(&T, usize, &mut Array4Mut<'_, f64>) + Sync + Send,
    ) -> Result<()> {
        let agreed = self.agree("particle_to_mesh", &mesh_args(lev, 0, mf))?;
        let l = self.check_layout(lev, mf, 0, mf.ncomp(), 0)?;
        let period = l.geom().periodicity();
        let tiles = self.entries();
        let mut jobs = self.fab_runs(lev, mf);
        let errs = par_map_mut(&mut jobs, |(fab, s, e)| -> Result<()> {
            let mut a = fab.array_mut()?;
            for t in &tiles[*s..*e] {
                for i in 0..t.data.len() {
                    t.data.prefetch(i + PREFETCH_AHEAD);
                    f(&t.data, i, &mut a);
                }
            }
            Ok(())
        });
        drop(jobs);
        agree_failure(&agreed, "particle_to_mesh", first_error(errs))?;
        mf.sum_boundary(period)?;
        Ok(())
    }

    /// Cloud-in-cell deposition of `weight(tile, i)` into component `comp` of `mf`
    /// (which needs one ghost cell), then `sum_boundary`: the sum over valid cells grows
    /// by the particles' total weight, to round-off. Set `mf` to zero first.
    /// **Collective**.
    ///
    /// # Errors
    /// On every rank, before anything is written: [`ErrorKind::Comm`] when the ranks do
    /// not all call it with the same level, component and MultiFab layout on the same
    /// container layout; [`ErrorKind::NoSuchLevel`], [`ErrorKind::LayoutMismatch`],
    /// [`ErrorKind::BadComponent`], [`ErrorKind::NotEnoughGhosts`].
    /// [`ErrorKind::OutsideFab`] on a rank with a particle moved out of its grid without
    /// `redistribute` (or at a position that is not finite), and
    /// [`ErrorKind::MultiFab`] on one whose fab cannot be written: the other ranks get
    /// [`ErrorKind::FailedOnOtherRank`]. [`ErrorKind::MultiFab`] from `sum_boundary`.
    pub fn deposit_cic(
        &self,
        lev: usize,
        mf: &mut MultiFab,
        comp: usize,
        weight: impl Fn(&T, usize) -> f64 + Sync + Send,
    ) -> Result<()> {
        self.deposit_with(lev, mf, comp, 1, weight)
    }

    /// Nearest-grid-point deposition (no ghost cell needed), as
    /// [`deposit_cic`](Self::deposit_cic).
    ///
    /// # Errors
    /// As [`deposit_cic`](Self::deposit_cic).
    pub fn deposit_ngp(
        &self,
        lev: usize,
        mf: &mut MultiFab,
        comp: usize,
        weight: impl Fn(&T, usize) -> f64 + Sync + Send,
    ) -> Result<()> {
        self.deposit_with(lev, mf, comp, 0, weight)
    }

    fn deposit_with(
        &self,
        lev: usize,
        mf: &mut MultiFab,
        comp: usize,
        reach: i32,
        weight: impl Fn(&T, usize) -> f64 + Sync + Send,
    ) -> Result<()> {
        let op = if reach == 0 {
            "deposit_ngp"
        } else {
            "deposit_cic"
        };
        let agreed = self.agree(op, &mesh_args(lev, comp, mf))?;
        let l = self.check_layout(lev, mf, comp, 1, reach)?;
        let map = MeshMap::new(l.geom());
        let period = l.geom().periodicity();
        let tiles = self.entries();
        let mut jobs = self.fab_runs(lev, mf);
        let errs = par_map_mut(&mut jobs, |(fab, s, e)| -> Result<()> {
            let fi = fab.layout();
            let ns = fi.strides()[2];
            let loc = Locator::new(&map, &fi, reach);
            let data = &mut fab.as_mut_slice()?[comp * ns..][..ns];
            for t in &tiles[*s..*e] {
                if reach == 0 {
                    deposit_tile::<T, false>(&loc, data, t.grid, &t.data, &weight)?;
                } else {
                    deposit_tile::<T, true>(&loc, data, t.grid, &t.data, &weight)?;
                }
            }
            Ok(())
        });
        drop(jobs);
        agree_failure(&agreed, op, first_error(errs))?;
        mf.sum_boundary_with(period, comp..=comp, IntVect::splat(reach).min(mf.n_grow()))?;
        Ok(())
    }

    /// Gathers with a closure per particle (AMReX `MeshToParticle`): `f(tile, i,
    /// array)` reads the fab of the particle's grid (fill its ghost cells first with
    /// `fill_boundary`) and sets the particle's components. Tiles run in parallel.
    /// Not collective.
    ///
    /// # Errors
    /// [`ErrorKind::NoSuchLevel`], [`ErrorKind::LayoutMismatch`],
    /// [`ErrorKind::BadComponent`] for a MultiFab without components,
    /// [`ErrorKind::MultiFab`] for a fab that cannot be read (not host-accessible).
    pub fn mesh_to_particle(
        &mut self,
        lev: usize,
        mf: &MultiFab,
        f: impl Fn(&mut T, usize, &Array4<'_, f64>) + Sync + Send,
    ) -> Result<()> {
        self.check_layout(lev, mf, 0, mf.ncomp(), 0)?;
        let grids: Vec<Option<usize>> = self.grid_to_local(lev, mf);
        let (_, tiles) = self.entries_mut();
        let errs = par_map_mut(tiles, |t| -> Result<()> {
            if t.level != lev {
                return Ok(());
            }
            let Some(l) = grids[t.grid] else {
                return Ok(());
            };
            let a = mf.fab(l).array()?;
            for i in 0..t.data.len() {
                t.data.prefetch(i + PREFETCH_AHEAD);
                f(&mut t.data, i, &a);
            }
            Ok(())
        });
        errs.into_iter().collect()
    }

    fn grid_to_local<E: amrex_multifab::Element>(
        &self,
        lev: usize,
        mf: &FabArray<E>,
    ) -> Vec<Option<usize>> {
        let n = self.levels_len_grids(lev);
        let mut v = vec![None; n];
        for l in 0..mf.local_size() {
            v[mf.global_index(l)] = Some(l);
        }
        v
    }

    fn levels_len_grids(&self, lev: usize) -> usize {
        self.level(lev).map_or(0, |l| l.box_array().len())
    }

    /// Cloud-in-cell gather: real component `dst[k]` of every particle becomes the
    /// trilinear interpolation of component `src + k` of `mf` (which needs one ghost
    /// cell, filled). Not collective.
    ///
    /// # Errors
    /// [`ErrorKind::LayoutMismatch`], [`ErrorKind::BadComponent`] (also for a `dst`
    /// beyond the particles' real components), [`ErrorKind::NotEnoughGhosts`],
    /// [`ErrorKind::OutsideFab`] (as for [`deposit_cic`](Self::deposit_cic)).
    pub fn gather_cic(
        &mut self,
        lev: usize,
        mf: &MultiFab,
        src: usize,
        dst: &[usize],
    ) -> Result<()> {
        self.gather_with(lev, mf, src, dst, 1)
    }

    /// Nearest-grid-point gather, as [`gather_cic`](Self::gather_cic) (no ghost cell).
    ///
    /// # Errors
    /// As [`gather_cic`](Self::gather_cic).
    pub fn gather_ngp(
        &mut self,
        lev: usize,
        mf: &MultiFab,
        src: usize,
        dst: &[usize],
    ) -> Result<()> {
        self.gather_with(lev, mf, src, dst, 0)
    }

    fn gather_with(
        &mut self,
        lev: usize,
        mf: &MultiFab,
        src: usize,
        dst: &[usize],
        reach: i32,
    ) -> Result<()> {
        let l = self.check_layout(lev, mf, src, dst.len(), reach)?;
        if let Some(&bad) = dst.iter().find(|&&c| c >= self.num_real_comps()) {
            return Err(ErrorKind::BadComponent {
                start: bad,
                count: 1,
                ncomp: self.num_real_comps(),
            }
            .into());
        }
        let map = MeshMap::new(l.geom());
        let grids = self.grid_to_local(lev, mf);
        let (_, tiles) = self.entries_mut();
        let errs = par_map_mut(tiles, |t| -> Result<()> {
            if t.level != lev {
                return Ok(());
            }
            let Some(lf) = grids[t.grid] else {
                return Ok(());
            };
            let fab = mf.fab(lf);
            let fi = fab.layout();
            let ns = fi.strides()[2];
            let loc = Locator::new(&map, &fi, reach);
            let data = fab.as_slice()?;
            if reach == 0 {
                gather_tile_any::<T, false>(&loc, (data, src, ns), t.grid, &mut t.data, dst)
            } else {
                gather_tile_any::<T, true>(&loc, (data, src, ns), t.grid, &mut t.data, dst)
            }
        });
        errs.into_iter().collect()
    }

    /// Adds the number of particles in each cell to component `comp` of `imf` (AMReX
    /// `Increment`), on level `lev`'s grids (valid cells: after `redistribute` each particle's
    /// cell is in its grid). **Collective** (the ranks agree on success).
    ///
    /// # Errors
    /// On every rank, before anything is written: [`ErrorKind::Comm`] when the ranks do
    /// not all call it with the same level, component and iMultiFab layout on the same
    /// container layout; [`ErrorKind::NoSuchLevel`], [`ErrorKind::LayoutMismatch`],
    /// [`ErrorKind::BadComponent`]. [`ErrorKind::OutsideFab`] on a rank with a particle
    /// outside its grid, [`ErrorKind::MultiFab`] on one whose fab cannot be written: the
    /// other ranks get [`ErrorKind::FailedOnOtherRank`].
    pub fn increment(&self, lev: usize, imf: &mut iMultiFab, comp: usize) -> Result<()> {
        let agreed = self.agree("increment", &mesh_args(lev, comp, imf))?;
        let l = self.check_layout(lev, imf, comp, 1, 0)?;
        let map = MeshMap::new(l.geom());
        let tiles = self.entries();
        let mut jobs = self.fab_runs(lev, imf);
        let errs = par_map_mut(&mut jobs, |(fab, s, e)| -> Result<()> {
            let fi = fab.layout();
            let ns = fi.strides()[2];
            // Component `comp` (checked above), so offsets below are of component 0.
            let data = &mut fab.as_mut_slice()?[comp * ns..][..ns];
            for t in &tiles[*s..*e] {
                for i in 0..t.data.len() {
                    t.data.prefetch(i + PREFETCH_AHEAD);
                    let p = t.data.pos(i);
                    let c = Nearest::new(&map, p).index;
                    let o = fi.offset(c[0], c[1], c[2], 0).ok_or_else(
                        || -> ParticleContainerError {
                            ErrorKind::OutsideFab {
                                grid: t.grid,
                                position: p,
                            }
                            .into()
                        },
                    )?;
                    data[o] += 1;
                }
            }
            Ok(())
        });
        drop(jobs);
        agree_failure(&agreed, "increment", first_error(errs))
    }

    /// Sorts the particles of every local tile of level `lev` by cell (AMReX
    /// `SortParticlesByCell`): Fortran order of the cell within the tile box, stable, so
    /// particles of one cell keep their order. Particles outside their tile box go last.
    /// Tiles run in parallel.
    ///
    /// # Panics
    /// If a tile has more than `u32::MAX` particles (the indices of
    /// [`ParticleTile::permute`]), or more cells than `usize` holds.
    pub fn sort_particles_by_cell(&mut self, lev: usize) {
        let Ok(l) = self.level(lev) else { return };
        let map = MeshMap::new(l.geom());
        let (_, tiles) = self.entries_mut();
        par_for_each_mut(tiles, |t| {
            if t.level != lev || t.data.len() < 2 {
                return;
            }
            let tb = t.tilebox;
            // As `tb.index`, which panics for a cell index beyond usize.
            let ncell = usize::try_from(tb.num_pts())
                .expect("sort_particles_by_cell: more cells in a tile than usize holds");
            let keys: Vec<usize> = (0..t.data.len())
                .map(|i| {
                    t.data.prefetch(i + PREFETCH_AHEAD);
                    let c = Nearest::new(&map, t.data.pos(i)).index;
                    if tb.contains(c) { tb.index(c) } else { ncell }
                })
                .collect();
            // `permute` takes u32 indices: the counts and indices below fit u32.
            assert!(
                u32::try_from(keys.len()).is_ok(),
                "sort_particles_by_cell: more than u32::MAX particles in a tile"
            );
            let mut start = vec![0u32; ncell + 2];
            for &k in &keys {
                start[k + 1] += 1;
            }
            for k in 0..=ncell {
                start[k + 1] += start[k];
            }
            let mut perm = vec![0u32; keys.len()];
            for (i, &k) in keys.iter().enumerate() {
                #[expect(
                    clippy::cast_possible_truncation,
                    reason = "i < keys.len() <= u32::MAX (asserted above)"
                )]
                let i = i as u32;
                perm[start[k] as usize] = i;
                start[k] += 1;
            }
            t.data.permute(&perm);
        });
    }
}
