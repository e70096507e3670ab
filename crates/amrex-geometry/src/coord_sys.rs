//! `CoordSys`: AMReX's coordinate systems and the weights each gives a cell.

use core::f64::consts::PI;
use core::fmt;

use amrex_box::SPACEDIM;
use num_traits::Float;

use crate::error::{GeometryError, GeometryErrorKind};

/// A coordinate system, AMReX's `CoordSys::CoordType` (without its `undef`, which no
/// geometry here can have), with the cell volume, face area and `d(log A)/dr` weights
/// each gives a cell.
///
/// # Directions
///
/// | `CoordSys` | AMReX code | direction 0 | direction 1 | direction 2 |
/// |---|---|---|---|---|
/// | [`Cartesian`](CoordSys::Cartesian) | `0` (`cartesian`) | x | y | z |
/// | [`Rz`](CoordSys::Rz) | `1` (`RZ`) | r (distance from the axis) | z (along the axis) | azimuth, integrated |
/// | [`Spherical`](CoordSys::Spherical) | `2` (`SPHERICAL`) | r (distance from the origin) | θ, the polar angle from +z, in radians | azimuth φ, integrated |
///
/// AMReX has RZ and spherical coordinates only for `AMREX_SPACEDIM` 1 and 2 (in 3-D its
/// `IsRZ()` and `IsSPHERICAL()` are false and `GetVolume` aborts), so here direction 2 is
/// always the azimuth, integrated over its full turn of 2π: its cell count must be one
/// (checked by [`Geometry::new`](crate::Geometry::new)) and its extent does not enter any
/// weight. The formulas are those of AMReX's two-dimensional kernels
/// (`AMReX_COORDSYS_2D_C.H`: `amrex_setvol`, `amrex_setarea`, `amrex_setdloga`), which
/// contain AMReX's one-dimensional ones as special cases:
///
/// - **1-D RZ** (AMReX: `π (r_o² - r_i²)` per cell) is 2-D RZ with a z extent of one.
/// - **1-D spherical** (AMReX: `4π/3 (r_o³ - r_i³)`, r-face area `4π r²`) is 2-D
///   spherical with one θ cell spanning `[0, π]`.
/// - **1-D and 2-D Cartesian** are 3-D Cartesian with unit extents in the unused
///   directions (AMReX's 1-D face area is `1`, its 2-D volume `dx·dy`).
///
/// Like AMReX's kernels, RZ and spherical volumes and areas are absolute values, so a
/// radial range below zero (or θ outside `[0, π]`) gives positive weights. Faces normal to
/// direction 2 in RZ and spherical coordinates have area `0` and `d(log A)` is `0` there:
/// the azimuth is integrated, no flux crosses it.
///
/// ```
/// use amrex_geometry::CoordSys;
/// assert_eq!(CoordSys::try_from(1)?, CoordSys::Rz);
/// assert_eq!(CoordSys::Spherical.to_int(), 2);
/// assert!(CoordSys::try_from(3).is_err());
/// // One RZ cell, r in [1, 2], z in [0, 3]: a ring of volume π (2² - 1²) 3 = 9π.
/// let v = CoordSys::Rz.cell_volume([1.0, 0.0, 0.0], [1.0, 3.0, 1.0]);
/// assert!((v - 9.0 * core::f64::consts::PI).abs() < 1e-12);
/// # Ok::<(), amrex_geometry::GeometryError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CoordSys {
    /// Cartesian x, y, z (AMReX code 0), the default.
    #[default]
    Cartesian,
    /// Cylindrical r, z with the azimuth integrated (AMReX code 1).
    Rz,
    /// Spherical r, θ with the azimuth integrated (AMReX code 2).
    Spherical,
}

/// Panics with a clear message for a direction that is not 0, 1 or 2.
#[inline]
#[track_caller]
fn check_dir(dir: usize) {
    assert!(dir < SPACEDIM, "CoordSys: direction {dir} is not 0, 1 or 2");
}

impl CoordSys {
    /// AMReX's integer code: 0 Cartesian, 1 RZ, 2 spherical (`CoordSys::CoordInt()`, the
    /// `geometry.coord_sys` input and the plotfile header's value).
    #[must_use]
    pub const fn to_int(self) -> i32 {
        match self {
            Self::Cartesian => 0,
            Self::Rz => 1,
            Self::Spherical => 2,
        }
    }

    /// The coordinate system with AMReX's integer code `code`.
    ///
    /// # Errors
    /// [`UnknownCoordSys`](GeometryErrorKind::UnknownCoordSys) for anything but 0, 1, 2
    /// (AMReX's `undef`, -1, included).
    pub const fn from_int(code: i32) -> Result<Self, GeometryError> {
        match code {
            0 => Ok(Self::Cartesian),
            1 => Ok(Self::Rz),
            2 => Ok(Self::Spherical),
            _ => Err(GeometryError::new(GeometryErrorKind::UnknownCoordSys(code))),
        }
    }

    /// `true` for Cartesian coordinates (AMReX's `IsCartesian()`).
    #[must_use]
    pub const fn is_cartesian(self) -> bool {
        matches!(self, Self::Cartesian)
    }

    /// `true` for RZ coordinates (AMReX's `IsRZ()`).
    #[must_use]
    pub const fn is_rz(self) -> bool {
        matches!(self, Self::Rz)
    }

    /// `true` for spherical coordinates (AMReX's `IsSPHERICAL()`).
    #[must_use]
    pub const fn is_spherical(self) -> bool {
        matches!(self, Self::Spherical)
    }

    /// The volume of the cell whose low corner is `x_lo` and whose widths are `dx`
    /// (one cell of AMReX's `GetVolume`):
    ///
    /// - Cartesian: `dx₀ dx₁ dx₂`;
    /// - RZ: `|π dz dr (r_o + r_i)|` = `|π (r_o² - r_i²) dz|`, with `r_i = x_lo[0]`,
    ///   `r_o = r_i + dr`;
    /// - spherical: `|2π/3 (cos θ_i - cos θ_o)(r_o - r_i)(r_o² + r_o r_i + r_i²)|` =
    ///   `|2π/3 (cos θ_i - cos θ_o)(r_o³ - r_i³)|`, with `θ_i = x_lo[1]`,
    ///   `θ_o = θ_i + dθ`.
    #[must_use]
    pub fn cell_volume(self, x_lo: [f64; SPACEDIM], dx: [f64; SPACEDIM]) -> f64 {
        match self {
            Self::Cartesian => dx[0] * dx[1] * dx[2],
            Self::Rz => {
                let ri = x_lo[0];
                let ro = ri + dx[0];
                (PI * dx[1] * dx[0] * (ro + ri)).abs()
            }
            Self::Spherical => {
                let (ri, ti) = (x_lo[0], x_lo[1]);
                let (ro, to) = (ri + dx[0], ti + dx[1]);
                let angular = (2.0 * PI) * (Float::cos(ti) - Float::cos(to)) / 3.0;
                (angular * (ro - ri) * (ro * ro + ro * ri + ri * ri)).abs()
            }
        }
    }

    /// The area of the low face, normal to direction `dir`, of the cell whose low corner
    /// is `x_lo` and whose widths are `dx` (one face of AMReX's `GetFaceArea`):
    ///
    /// - Cartesian: the product of the two other widths;
    /// - RZ: r-face `|2π r_i dz|`, z-face `|2π r_c dr|` with `r_c = r_i + dr/2`
    ///   (= `π (r_o² - r_i²)`);
    /// - spherical: r-face `|2π (cos θ_i - cos θ_o) r_i²|`, θ-face
    ///   `|π sin θ_i (r_o - r_i)(r_o + r_i)|`;
    /// - RZ and spherical, `dir = 2`: `0` (the azimuth is integrated).
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[must_use]
    #[track_caller]
    pub fn face_area(self, dir: usize, x_lo: [f64; SPACEDIM], dx: [f64; SPACEDIM]) -> f64 {
        check_dir(dir);
        match (self, dir) {
            (Self::Cartesian, 0) => dx[1] * dx[2],
            (Self::Cartesian, 1) => dx[0] * dx[2],
            (Self::Cartesian, _) => dx[0] * dx[1],
            (Self::Rz, 0) => ((2.0 * PI) * x_lo[0] * dx[1]).abs(),
            (Self::Rz, 1) => {
                let rc = x_lo[0] + 0.5 * dx[0];
                (dx[0] * (2.0 * PI) * rc).abs()
            }
            (Self::Spherical, 0) => {
                let (ri, ti) = (x_lo[0], x_lo[1]);
                let to = ti + dx[1];
                ((2.0 * PI) * (Float::cos(ti) - Float::cos(to)) * ri * ri).abs()
            }
            (Self::Spherical, 1) => {
                let (ri, ti) = (x_lo[0], x_lo[1]);
                let ro = ri + dx[0];
                (PI * Float::sin(ti) * (ro - ri) * (ro + ri)).abs()
            }
            (Self::Rz | Self::Spherical, _) => 0.0,
        }
    }

    /// `d(log A)/dx_dir` at the centre of the cell whose low corner is `x_lo` and whose
    /// widths are `dx` (one cell of AMReX's `GetDLogA`): how fast the area of the faces
    /// normal to `dir` grows along `dir`, the geometric source term of a divergence.
    ///
    /// - Cartesian: `0`;
    /// - RZ: `1 / r_c` in direction 0, `0` otherwise;
    /// - spherical: `2 / r_c` in direction 0, `1 / (r_c tan θ_c)` in direction 1 (with
    ///   `θ_c = (θ_i + θ_o) / 2`), `0` in direction 2.
    ///
    /// `r_c = x_lo[0] + dx[0] / 2` is the cell centre's radius; at `r_c = 0` the result
    /// is infinite, as in AMReX.
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[must_use]
    #[track_caller]
    pub fn dloga(self, dir: usize, x_lo: [f64; SPACEDIM], dx: [f64; SPACEDIM]) -> f64 {
        check_dir(dir);
        let rc = x_lo[0] + 0.5 * dx[0];
        match (self, dir) {
            (Self::Rz, 0) => 1.0 / rc,
            (Self::Spherical, 0) => 2.0 / rc,
            (Self::Spherical, 1) => {
                let ti = x_lo[1];
                let to = ti + dx[1];
                (1.0 / Float::tan(0.5 * (ti + to))) / rc
            }
            _ => 0.0,
        }
    }
}

impl TryFrom<i32> for CoordSys {
    type Error = GeometryError;
    /// [`CoordSys::from_int`].
    fn try_from(code: i32) -> Result<Self, GeometryError> {
        Self::from_int(code)
    }
}

impl From<CoordSys> for i32 {
    /// [`CoordSys::to_int`].
    fn from(c: CoordSys) -> Self {
        c.to_int()
    }
}

impl fmt::Display for CoordSys {
    /// `Cartesian`, `RZ` or `spherical`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Cartesian => "Cartesian",
            Self::Rz => "RZ",
            Self::Spherical => "spherical",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-13 * a.abs().max(b.abs()).max(1.0)
    }

    #[test]
    fn codes_round_trip() {
        for c in [CoordSys::Cartesian, CoordSys::Rz, CoordSys::Spherical] {
            assert_eq!(CoordSys::from_int(c.to_int()), Ok(c));
            assert_eq!(i32::from(c), c.to_int());
        }
        assert_eq!(CoordSys::default(), CoordSys::Cartesian);
        for bad in [-1, 3, i32::MIN] {
            assert_eq!(
                CoordSys::try_from(bad).unwrap_err().kind(),
                GeometryErrorKind::UnknownCoordSys(bad)
            );
        }
        assert!(CoordSys::Cartesian.is_cartesian() && !CoordSys::Cartesian.is_rz());
        assert!(CoordSys::Rz.is_rz() && !CoordSys::Rz.is_spherical());
        assert!(CoordSys::Spherical.is_spherical() && !CoordSys::Spherical.is_cartesian());
    }

    #[test]
    fn cartesian_weights() {
        let c = CoordSys::Cartesian;
        let dx = [0.5, 2.0, 3.0];
        let lo = [7.0, -1.0, 4.0];
        assert_eq!(c.cell_volume(lo, dx), 3.0);
        assert_eq!(c.face_area(0, lo, dx), 6.0);
        assert_eq!(c.face_area(1, lo, dx), 1.5);
        assert_eq!(c.face_area(2, lo, dx), 1.0);
        for d in 0..3 {
            assert_eq!(c.dloga(d, lo, dx), 0.0);
        }
    }

    #[test]
    fn rz_weights_by_hand() {
        let c = CoordSys::Rz;
        // r in [1, 1.5], z in [0, 2].
        let lo = [1.0, 0.0, 0.0];
        let dx = [0.5, 2.0, 1.0];
        assert!(close(c.cell_volume(lo, dx), PI * (2.25 - 1.0) * 2.0));
        assert!(close(c.face_area(0, lo, dx), 2.0 * PI * 1.0 * 2.0));
        assert!(close(c.face_area(1, lo, dx), PI * (2.25 - 1.0)));
        assert_eq!(c.face_area(2, lo, dx), 0.0);
        assert!(close(c.dloga(0, lo, dx), 1.0 / 1.25));
        assert_eq!(c.dloga(1, lo, dx), 0.0);
        assert_eq!(c.dloga(2, lo, dx), 0.0);
        // On the axis the r-face has no area; below it the weights stay positive.
        assert_eq!(c.face_area(0, [0.0; 3], dx), 0.0);
        assert!(close(
            c.cell_volume([-1.5, 0.0, 0.0], dx),
            PI * (2.25 - 1.0) * 2.0
        ));
    }

    #[test]
    fn spherical_weights_by_hand() {
        let c = CoordSys::Spherical;
        // r in [1, 2], θ in [0, π/2]: the upper half of a shell.
        let lo = [1.0, 0.0, 0.0];
        let dx = [1.0, PI / 2.0, 1.0];
        assert!(close(c.cell_volume(lo, dx), 2.0 * PI / 3.0 * 7.0));
        // r-face: a hemisphere of radius 1.
        assert!(close(c.face_area(0, lo, dx), 2.0 * PI));
        // θ-face at θ = 0 has no area; at θ = π/2 it is the annulus π (2² - 1²).
        assert_eq!(c.face_area(1, lo, dx), 0.0);
        assert!(close(c.face_area(1, [1.0, PI / 2.0, 0.0], dx), 3.0 * PI));
        assert_eq!(c.face_area(2, lo, dx), 0.0);
        assert!(close(c.dloga(0, lo, dx), 2.0 / 1.5));
        assert!(close(c.dloga(1, lo, dx), 1.0 / (1.5 * (PI / 4.0).tan())));
        assert_eq!(c.dloga(2, lo, dx), 0.0);
        // One θ cell over [0, π] gives AMReX's 1-D weights: 4π/3 (r_o³ - r_i³), 4π r².
        let full = [1.0, PI, 1.0];
        assert!(close(c.cell_volume(lo, full), 4.0 * PI / 3.0 * 7.0));
        assert!(close(c.face_area(0, lo, full), 4.0 * PI));
    }

    #[test]
    #[should_panic(expected = "direction 3 is not 0, 1 or 2")]
    fn bad_direction_panics() {
        let _ = CoordSys::Rz.face_area(3, [0.0; 3], [1.0; 3]);
    }
}
