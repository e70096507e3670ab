//! The plotfile `Header` (AMReX's `WriteGenericPlotfileHeader`) and the level
//! [`Geometry`]s it records.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt::{self, Write as _};

use amrex_box::{IndexBox, SPACEDIM};
use amrex_geometry::{CoordSys, Geometry, GeometryError, RealBox};

use crate::text::{Cursor, ParseError, fmt_box, fmt_g};

/// The `HyperCLaw-V1.1` version string AMReX writes.
pub const PLOTFILE_VERSION: &str = "HyperCLaw-V1.1";

/// Why a `Header`'s text does not make a [`PlotfileHeader`]: its text is not in the
/// format, or its numbers make no [`Geometry`].
#[derive(Debug)]
pub(crate) enum HeaderError {
    /// Not in the format: the line and what was expected there.
    Text(ParseError),
    /// The coordinate system, `prob_lo`/`prob_hi` (`level: None`) or a level's domain
    /// over them (`level: Some(..)`) make no [`Geometry`].
    Geometry {
        level: Option<usize>,
        source: GeometryError,
    },
}

impl From<ParseError> for HeaderError {
    fn from(e: ParseError) -> Self {
        Self::Text(e)
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
/// missing directions `0..=0` and zero physical extent (and [`geometry`](Self::geometry)
/// gives those directions one cell of unit extent, as [`Geometry`] takes 1-D and 2-D
/// problems).
///
/// A parsed header always has a [`geometry`](Self::geometry) for each level: the reader
/// refuses a coordinate system other than 0, 1 or 2, a non-finite or inverted
/// `prob_lo`/`prob_hi`, and a level domain that makes no [`Geometry`] over them
/// ([`PlotfileError::BadGeometry`](crate::PlotfileError::BadGeometry)). Periodicity is
/// not recorded in a plotfile (AMReX's `WriteGenericPlotfileHeader` writes none), so the
/// geometries read back are not periodic.
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
    /// Coordinate system (written as AMReX's code: 0 Cartesian, 1 RZ, 2 spherical).
    pub coord_sys: CoordSys,
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

    /// The [`Geometry`] of level `lev`: its domain over the plotfile's physical box, in
    /// its coordinate system, periodic nowhere (a plotfile does not record periodicity).
    /// The directions a 1-D or 2-D plotfile lacks span `[0, 1]`, one cell.
    ///
    /// # Panics
    /// If `lev` is not a level of the plotfile, or if the header's fields were set to
    /// values that make no geometry (a `prob_hi` below `prob_lo`, say). Headers the
    /// reader returns have been checked and never panic here.
    #[must_use]
    #[track_caller]
    pub fn geometry(&self, lev: usize) -> Geometry {
        assert!(
            lev < self.domains.len(),
            "PlotfileHeader::geometry: level {lev} of a plotfile of {} levels",
            self.domains.len()
        );
        self.try_geometry(lev).unwrap_or_else(|(level, source)| {
            panic!(
                "PlotfileHeader::geometry: {}{source}",
                level.map_or_else(String::new, |l| format!("level {l}: "))
            )
        })
    }

    /// The physical box of the plotfile: `prob_lo ..= prob_hi` in its `space_dim`
    /// directions, `[0, 1]` in the others.
    fn prob_domain(&self) -> Result<RealBox, GeometryError> {
        let dim = self.space_dim.min(SPACEDIM);
        let lo = core::array::from_fn(|d| if d < dim { self.prob_lo[d] } else { 0.0 });
        let hi = core::array::from_fn(|d| if d < dim { self.prob_hi[d] } else { 1.0 });
        RealBox::new(lo, hi)
    }

    /// [`geometry`](Self::geometry), or why there is none: the physical box
    /// (`None`) or level `lev`'s domain over it (`Some(lev)`). `lev` is a level.
    fn try_geometry(&self, lev: usize) -> Result<Geometry, (Option<usize>, GeometryError)> {
        let rb = self.prob_domain().map_err(|e| (None, e))?;
        Geometry::new(self.domains[lev], rb, self.coord_sys, [false; SPACEDIM])
            .map_err(|e| (Some(lev), e))
    }

    /// Parses the text of a `Header` file.
    ///
    /// # Errors
    /// [`HeaderError::Text`] at the first item not in the format, then
    /// [`HeaderError::Geometry`] if the numbers make no geometry for some level.
    pub(crate) fn parse_text(text: &str) -> Result<Self, HeaderError> {
        let mut c = Cursor::new(text);
        let version = c.line()?.trim().to_string();
        if !version.starts_with("HyperCLaw") {
            return Err(c
                .error(format!(
                    "a plotfile version HyperCLaw-V1.1, found {version:?}"
                ))
                .into());
        }
        let nvars: usize = c.int("the number of variables")?;
        let rest = c.line()?;
        if !rest.trim().is_empty() {
            return Err(c.error("a line break after the number of variables").into());
        }
        let mut var_names = Vec::with_capacity(nvars.min(4096));
        for _ in 0..nvars {
            var_names.push(c.line()?.trim().to_string());
        }
        let space_dim: usize = c.int("the space dimension")?;
        if !(1..=3).contains(&space_dim) {
            return Err(c
                .error(format!("a space dimension 1-3, found {space_dim}"))
                .into());
        }
        let time = c.real("the time")?;
        let finest_level: usize = c.int("the finest level")?;
        if finest_level > 100 {
            return Err(c
                .error(format!(
                    "a finest level of at most 100, found {finest_level}"
                ))
                .into());
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
            .collect::<Result<Vec<i32>, ParseError>>()?;
        let domains = (0..nlev)
            .map(|_| c.index_box(space_dim, "a level domain"))
            .collect::<Result<Vec<_>, ParseError>>()?;
        let level_steps = (0..nlev)
            .map(|_| c.int("a level step"))
            .collect::<Result<Vec<i64>, ParseError>>()?;
        let mut cell_sizes = Vec::with_capacity(nlev);
        for _ in 0..nlev {
            let mut dx = [0.0; 3];
            for v in &mut dx[..space_dim] {
                *v = c.real("a cell size")?;
            }
            cell_sizes.push(dx);
        }
        let coord_sys = CoordSys::from_int(c.int("the coordinate system")?).map_err(|source| {
            HeaderError::Geometry {
                level: None,
                source,
            }
        })?;
        let bwidth = c.int("the boundary width")?;
        let mut levels = Vec::with_capacity(nlev);
        for lev in 0..nlev {
            let level: usize = c.int("a level number")?;
            if level != lev {
                return Err(c.error(format!("level {lev}, found level {level}")).into());
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
                return Err(c
                    .error(format!(
                        "a MultiFab path inside the plotfile (relative, without `..`), found \
                     {mf_path:?}"
                    ))
                    .into());
            }
            levels.push(LevelHeader {
                level,
                time,
                step,
                grids,
                mf_path,
            });
        }
        let header = Self {
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
        };
        for lev in 0..nlev {
            header
                .try_geometry(lev)
                .map_err(|(level, source)| HeaderError::Geometry { level, source })?;
        }
        Ok(header)
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
        let _ = writeln!(s, "{}", self.coord_sys.to_int());
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
    use amrex_box::IntVect;

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
        assert_eq!(geom.coord(), CoordSys::Cartesian);
        let b = IndexBox::new(IntVect::new(16, 8, 4), IntVect::new(23, 15, 11));
        assert_eq!(geom.box_extent(&b), h.levels[1].grids[0]);
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
        // The geometry gives the missing direction one cell over [0, 1].
        let g = h.geometry(0);
        assert_eq!(g.domain(), h.domains[0]);
        assert_eq!(
            (g.prob_lo(), g.prob_hi()),
            ([-1.0, -1.0, 0.0], [1.0, 1.0, 1.0])
        );
        assert_eq!(g.cell_size(), [0.25, 0.5, 1.0]);
    }

    #[test]
    fn reports_the_line_of_a_bad_item() {
        let text_error = |t: &str| match PlotfileHeader::parse_text(t) {
            Err(HeaderError::Text(e)) => e,
            other => panic!("{other:?}"),
        };
        let bad = TWO_LEVEL.replace("3 6 \n", "3 x \n");
        let e = text_error(&bad);
        assert_eq!(e.line, 12, "{e:?}");
        assert!(e.what.contains("level step"), "{e:?}");
        let e = text_error("something else\n");
        assert_eq!(e.line, 2);
    }

    #[test]
    fn refuses_numbers_that_make_no_geometry() {
        use amrex_geometry::{GeometryErrorKind as K, Side};
        let geometry_error = |t: &str| match PlotfileHeader::parse_text(t) {
            Err(HeaderError::Geometry { level, source }) => (level, source.kind()),
            other => panic!("{other:?}"),
        };
        // The coordinate system line (the first "0\n0\n" is coord_sys then bwidth).
        let bad = TWO_LEVEL.replacen("\n0\n0\n", "\n3\n0\n", 1);
        assert_eq!(geometry_error(&bad), (None, K::UnknownCoordSys(3)));
        let bad = TWO_LEVEL.replacen("\n1 0.5 0.25 \n", "\n1 nan 0.25 \n", 1);
        assert_eq!(
            geometry_error(&bad),
            (
                None,
                K::NanCoordinate {
                    side: Side::Hi,
                    dir: 1
                }
            )
        );
        // RZ takes one cell in z; level 0 has 8.
        let bad = TWO_LEVEL.replacen("\n0\n0\n", "\n1\n0\n", 1);
        assert_eq!(
            geometry_error(&bad),
            (
                Some(0),
                K::CurvilinearThirdDirection {
                    coord: CoordSys::Rz,
                    cells: 8
                }
            )
        );
    }
}
