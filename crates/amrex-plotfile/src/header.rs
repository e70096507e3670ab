//! The plotfile `Header` (AMReX's `WriteGenericPlotfileHeader`) and [`Geometry`].

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt::{self, Write as _};

use amrex_box::{IndexBox, IntVect};

use crate::text::{Cursor, PResult, fmt_box, fmt_g};

/// The `HyperCLaw-V1.1` version string AMReX writes.
pub const PLOTFILE_VERSION: &str = "HyperCLaw-V1.1";

/// The part of AMReX's `Geometry` a plotfile records: the index domain of a level and
/// the physical box it covers (cell `i` spans `prob_lo + i*dx .. prob_lo + (i+1)*dx`
/// relative to the domain's low corner).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Geometry {
    /// The level's index domain.
    pub domain: IndexBox,
    /// Low corner of the physical domain.
    pub prob_lo: [f64; 3],
    /// High corner of the physical domain.
    pub prob_hi: [f64; 3],
    /// Coordinate system (0 Cartesian, 1 RZ, 2 spherical).
    pub coord_sys: i32,
}

impl Geometry {
    /// A Cartesian geometry.
    #[must_use]
    pub fn new(domain: IndexBox, prob_lo: [f64; 3], prob_hi: [f64; 3]) -> Self {
        Self {
            domain,
            prob_lo,
            prob_hi,
            coord_sys: 0,
        }
    }

    /// Cell size per direction, `(prob_hi - prob_lo) / ncells` (AMReX's `CellSize()`).
    #[must_use]
    pub fn cell_size(&self) -> [f64; 3] {
        let len = self.domain.length();
        core::array::from_fn(|d| (self.prob_hi[d] - self.prob_lo[d]) / f64::from(len[d]))
    }

    /// The same physical domain with the index domain refined by `ratio`.
    #[must_use]
    pub fn refine(&self, ratio: IntVect) -> Self {
        Self {
            domain: self.domain.refine_iv(ratio),
            ..*self
        }
    }

    /// Physical position of the centre of cell `p`: `prob_lo + (p - domain.lo + 0.5) * dx`
    /// per direction (AMReX's `Geometry::CellCenter`, which writes `p` for
    /// `p - domain.lo`: the same when the domain starts at 0, as AMReX's hierarchies do).
    /// Measured from the domain's low corner, like [`real_box`](Self::real_box) and the
    /// box extents in a plotfile `Header`, so the centre of a cell is the midpoint of its
    /// extent there. Points outside the domain extrapolate linearly.
    #[must_use]
    pub fn cell_center(&self, p: IntVect) -> [f64; 3] {
        let dx = self.cell_size();
        let dlo = self.domain.lo();
        // In f64: `p - dlo` may not fit an i32.
        core::array::from_fn(|d| {
            self.prob_lo[d] + (f64::from(p[d]) - f64::from(dlo[d]) + 0.5) * dx[d]
        })
    }

    /// Physical extent `[lo, hi]` per direction of index box `b` (AMReX's
    /// `RealBox(shift(b, -domain.lo), dx, prob_lo)`).
    #[must_use]
    pub fn real_box(&self, b: &IndexBox) -> [[f64; 2]; 3] {
        let dx = self.cell_size();
        let dlo = self.domain.lo();
        core::array::from_fn(|d| {
            let lo = b.lo()[d] - dlo[d];
            let hi = b.hi()[d] - dlo[d] + i32::from(b.ix_type().cell_centered_dir(d));
            [
                self.prob_lo[d] + dx[d] * f64::from(lo),
                self.prob_lo[d] + dx[d] * f64::from(hi),
            ]
        })
    }
}

/// The per-level part of a plotfile `Header`.
#[derive(Clone, Debug, PartialEq)]
pub struct LevelHeader {
    /// Level number.
    pub level: usize,
    /// Simulation time of the level.
    pub time: f64,
    /// Step number of the level.
    pub step: i64,
    /// Physical extent `[lo, hi]` of each box per direction (unused directions of a
    /// lower-dimensional plotfile are `[0, 0]`).
    pub grids: Vec<[[f64; 2]; 3]>,
    /// Path of the level's MultiFab relative to the plotfile directory, without `_H`
    /// (`Level_0/Cell`).
    pub mf_path: String,
}

/// Everything in a plotfile's `Header` file (`HyperCLaw-V1.1`, AMReX's
/// `WriteGenericPlotfileHeader`). Vectors are per level except `ref_ratio` (one per
/// coarse level). Lower-dimensional plotfiles (`space_dim` 1 or 2) read with the
/// missing directions `0..=0` and zero physical extent.
#[derive(Clone, Debug, PartialEq)]
pub struct PlotfileHeader {
    /// File format, `HyperCLaw-V1.1`.
    pub version: String,
    /// Component names.
    pub var_names: Vec<String>,
    /// `AMREX_SPACEDIM` of the writer (1–3).
    pub space_dim: usize,
    /// Simulation time.
    pub time: f64,
    /// Finest level (number of levels minus one).
    pub finest_level: usize,
    /// Low corner of the physical domain.
    pub prob_lo: [f64; 3],
    /// High corner of the physical domain.
    pub prob_hi: [f64; 3],
    /// Refinement ratio between level `l` and `l + 1` (AMReX writes the `x` ratio).
    pub ref_ratio: Vec<i32>,
    /// Index domain per level.
    pub domains: Vec<IndexBox>,
    /// Step number per level.
    pub level_steps: Vec<i64>,
    /// Cell size per level.
    pub cell_sizes: Vec<[f64; 3]>,
    /// Coordinate system (0 Cartesian).
    pub coord_sys: i32,
    /// Boundary width (AMReX writes 0).
    pub bwidth: i32,
    /// Per-level box extents and MultiFab paths.
    pub levels: Vec<LevelHeader>,
}

impl PlotfileHeader {
    /// Number of levels.
    #[must_use]
    pub fn nlevels(&self) -> usize {
        self.levels.len()
    }

    /// The [`Geometry`] of level `lev`: its domain, the plotfile's physical box and
    /// coordinate system.
    ///
    /// # Panics
    /// If `lev` is not a level of the plotfile.
    #[must_use]
    #[track_caller]
    pub fn geometry(&self, lev: usize) -> Geometry {
        Geometry {
            domain: self.domains[lev],
            prob_lo: self.prob_lo,
            prob_hi: self.prob_hi,
            coord_sys: self.coord_sys,
        }
    }

    /// Parses the text of a `Header` file.
    pub(crate) fn parse_text(text: &str) -> PResult<Self> {
        let mut c = Cursor::new(text);
        let version = c.line()?.trim().to_string();
        if !version.starts_with("HyperCLaw") {
            return Err(c.error(format!(
                "a plotfile version HyperCLaw-V1.1, found {version:?}"
            )));
        }
        let nvars: usize = c.int("the number of variables")?;
        let rest = c.line()?;
        if !rest.trim().is_empty() {
            return Err(c.error("a line break after the number of variables"));
        }
        let mut var_names = Vec::with_capacity(nvars.min(4096));
        for _ in 0..nvars {
            var_names.push(c.line()?.trim().to_string());
        }
        let space_dim: usize = c.int("the space dimension")?;
        if !(1..=3).contains(&space_dim) {
            return Err(c.error(format!("a space dimension 1-3, found {space_dim}")));
        }
        let time = c.real("the time")?;
        let finest_level: usize = c.int("the finest level")?;
        if finest_level > 100 {
            return Err(c.error(format!(
                "a finest level of at most 100, found {finest_level}"
            )));
        }
        let nlev = finest_level + 1;
        let mut prob_lo = [0.0; 3];
        let mut prob_hi = [0.0; 3];
        for v in &mut prob_lo[..space_dim] {
            *v = c.real("prob_lo")?;
        }
        for v in &mut prob_hi[..space_dim] {
            *v = c.real("prob_hi")?;
        }
        let ref_ratio = (0..finest_level)
            .map(|_| c.int("a refinement ratio"))
            .collect::<PResult<Vec<i32>>>()?;
        let domains = (0..nlev)
            .map(|_| c.index_box(space_dim, "a level domain"))
            .collect::<PResult<Vec<_>>>()?;
        let level_steps = (0..nlev)
            .map(|_| c.int("a level step"))
            .collect::<PResult<Vec<i64>>>()?;
        let mut cell_sizes = Vec::with_capacity(nlev);
        for _ in 0..nlev {
            let mut dx = [0.0; 3];
            for v in &mut dx[..space_dim] {
                *v = c.real("a cell size")?;
            }
            cell_sizes.push(dx);
        }
        let coord_sys = c.int("the coordinate system")?;
        let bwidth = c.int("the boundary width")?;
        let mut levels = Vec::with_capacity(nlev);
        for lev in 0..nlev {
            let level: usize = c.int("a level number")?;
            if level != lev {
                return Err(c.error(format!("level {lev}, found level {level}")));
            }
            let nboxes: usize = c.int("a number of boxes")?;
            let time = c.real("a level time")?;
            let step = c.int("a level step")?;
            let mut grids = Vec::with_capacity(nboxes.min(1 << 20));
            for _ in 0..nboxes {
                let mut g = [[0.0; 2]; 3];
                for gd in &mut g[..space_dim] {
                    gd[0] = c.real("a box's low coordinate")?;
                    gd[1] = c.real("a box's high coordinate")?;
                }
                grids.push(g);
            }
            let mf_path = c.word("the level's MultiFab path")?.to_string();
            if !crate::fs::confined(&mf_path) {
                return Err(c.error(format!(
                    "a MultiFab path inside the plotfile (relative, without `..`), found \
                     {mf_path:?}"
                )));
            }
            levels.push(LevelHeader {
                level,
                time,
                step,
                grids,
                mf_path,
            });
        }
        Ok(Self {
            version,
            var_names,
            space_dim,
            time,
            finest_level,
            prob_lo,
            prob_hi,
            ref_ratio,
            domains,
            level_steps,
            cell_sizes,
            coord_sys,
            bwidth,
            levels,
        })
    }
}

/// The `Header` text exactly as AMReX writes it (precision 17, trailing spaces
/// included).
impl fmt::Display for PlotfileHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dim = self.space_dim;
        let g = |x: f64| fmt_g(x, 17);
        let mut s = String::new();
        let _ = writeln!(s, "{}", self.version);
        let _ = writeln!(s, "{}", self.var_names.len());
        for n in &self.var_names {
            let _ = writeln!(s, "{n}");
        }
        let _ = writeln!(s, "{dim}");
        let _ = writeln!(s, "{}", g(self.time));
        let _ = writeln!(s, "{}", self.finest_level);
        for x in &self.prob_lo[..dim] {
            let _ = write!(s, "{} ", g(*x));
        }
        s.push('\n');
        for x in &self.prob_hi[..dim] {
            let _ = write!(s, "{} ", g(*x));
        }
        s.push('\n');
        for r in &self.ref_ratio {
            let _ = write!(s, "{r} ");
        }
        s.push('\n');
        for b in &self.domains {
            let _ = write!(s, "{} ", fmt_box(b, dim));
        }
        s.push('\n');
        for st in &self.level_steps {
            let _ = write!(s, "{st} ");
        }
        s.push('\n');
        for dx in &self.cell_sizes {
            for x in &dx[..dim] {
                let _ = write!(s, "{} ", g(*x));
            }
            s.push('\n');
        }
        let _ = writeln!(s, "{}", self.coord_sys);
        let _ = writeln!(s, "{}", self.bwidth);
        for l in &self.levels {
            let _ = writeln!(s, "{} {} {}", l.level, l.grids.len(), g(l.time));
            let _ = writeln!(s, "{}", l.step);
            for b in &l.grids {
                for gd in &b[..dim] {
                    let _ = writeln!(s, "{} {}", g(gd[0]), g(gd[1]));
                }
            }
            let _ = writeln!(s, "{}", l.mf_path);
        }
        f.write_str(&s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_LEVEL: &str = "HyperCLaw-V1.1\n2\ndensity\nenergy\n3\n2.5\n1\n0 0 0 \n1 0.5 0.25 \n2 \n\
((0,0,0) (31,15,7) (0,0,0)) ((0,0,0) (63,31,15) (0,0,0)) \n3 6 \n0.03125 0.03125 0.03125 \n\
0.015625 0.015625 0.015625 \n0\n0\n0 1 2.5\n3\n0 1\n0 0.5\n0 0.25\nLevel_0/Cell\n\
1 1 2.5\n6\n0.25 0.375\n0.125 0.25\n0.0625 0.1875\nLevel_1/Cell\n";

    #[test]
    fn parses_and_writes_back_the_same_text() {
        let h = PlotfileHeader::parse_text(TWO_LEVEL).unwrap();
        assert_eq!(h.var_names, ["density", "energy"]);
        assert_eq!(h.time, 2.5);
        assert_eq!(h.finest_level, 1);
        assert_eq!(h.ref_ratio, [2]);
        assert_eq!(h.level_steps, [3, 6]);
        assert_eq!(h.cell_sizes[1], [0.015625; 3]);
        assert_eq!(
            h.levels[1].grids[0],
            [[0.25, 0.375], [0.125, 0.25], [0.0625, 0.1875]]
        );
        assert_eq!(h.levels[1].mf_path, "Level_1/Cell");
        assert_eq!(h.to_string(), TWO_LEVEL);
        let geom = h.geometry(1);
        assert_eq!(geom.cell_size(), h.cell_sizes[1]);
        let b = IndexBox::new(IntVect::new(16, 8, 4), IntVect::new(23, 15, 11));
        assert_eq!(geom.real_box(&b), h.levels[1].grids[0]);
    }

    #[test]
    fn two_dimensional_headers_pad_the_third_direction() {
        let text = "HyperCLaw-V1.1\n1\nphi\n2\n0\n0\n-1 -1 \n1 1 \n\n((0,0) (7,3) (0,0)) \n0 \n\
0.25 0.5 \n0\n0\n0 1 0\n0\n-1 1\n-1 1\nLevel_0/Cell\n";
        let h = PlotfileHeader::parse_text(text).unwrap();
        assert_eq!(h.space_dim, 2);
        assert_eq!(
            h.domains[0],
            IndexBox::new(IntVect::ZERO, IntVect::new(7, 3, 0))
        );
        assert_eq!(h.prob_lo, [-1.0, -1.0, 0.0]);
        assert_eq!(h.to_string(), text);
    }

    #[test]
    fn reports_the_line_of_a_bad_item() {
        let bad = TWO_LEVEL.replace("3 6 \n", "3 x \n");
        let e = PlotfileHeader::parse_text(&bad).unwrap_err();
        assert_eq!(e.line, 12, "{e:?}");
        assert!(e.what.contains("level step"), "{e:?}");
        let e = PlotfileHeader::parse_text("something else\n").unwrap_err();
        assert_eq!(e.line, 2);
    }
}
