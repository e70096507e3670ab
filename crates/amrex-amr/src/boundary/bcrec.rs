//! [`BCType`] and [`BCRec`]: AMReX's mathematical boundary condition codes
//! (`AMReX_BC_TYPES.H`) and the per-component record of one code per face
//! (`AMReX_BCRec.H`).

use alloc::vec::Vec;
use core::fmt;

use amrex_box::{IndexBox, SPACEDIM};

use crate::error::{AmrError, AmrErrorKind};

/// How the ghost cells beyond one face of the domain get their values: AMReX's
/// `BCType::mathematicalBndryTypes`.
///
/// The formulas are those of the fill (see
/// [`fill_physical_boundary`](super::fill_physical_boundary)), written for the low face
/// of direction `d` with first interior cell `ilo` and a ghost cell `i < ilo` (the high
/// face mirrors them):
///
/// | variant | AMReX | code | cell-centred ghost value | nodal ghost value |
/// |---|---|---|---|---|
/// | [`IntDir`](Self::IntDir) | `int_dir` | 0 | left alone (periodic, or filled from other grids) | left alone |
/// | [`ReflectEven`](Self::ReflectEven) | `reflect_even` | 1 | `q(2 ilo - i - 1)` | `q(ilo)` |
/// | [`ReflectOdd`](Self::ReflectOdd) | `reflect_odd` | -1 | `-q(2 ilo - i - 1)` | `q(ilo)` |
/// | [`FoExtrap`](Self::FoExtrap) | `foextrap` | 2 | `q(ilo)` | `q(ilo)` |
/// | [`ExtDir`](Self::ExtDir) | `ext_dir` | 3 | the user's function | the user's function |
/// | [`HoExtrap`](Self::HoExtrap) | `hoextrap` | 4 | `i = ilo - 1`: `(15 q(ilo) - 10 q(ilo+1) + 3 q(ilo+2)) / 8`, or `(3 q(ilo) - q(ilo+1)) / 2` when the domain or the fab lacks `ilo + 2`; further out `q(ilo)` | `q(ilo)` |
/// | [`HoExtrapCc`](Self::HoExtrapCc) | `hoextrapcc` | 5 | `2 q(ilo) - q(ilo+1)` | `q(ilo)` |
///
/// `hoextrap` puts in the first ghost cell the value extrapolated (to second order,
/// exact for quadratics) to the domain *face*, not the ghost cell's centre: AMReX's
/// "higher order extrapolation to EDGE of bndry", the convention of its linear solvers.
/// Nodal data gets AMReX's `FilND` treatment: every type but `int_dir` copies the
/// boundary node, and `ext_dir` then overwrites with the user's function.
///
/// AMReX's other codes (`bogus` = -666, `ext_dir_cc` = 6, `direction_dependent` = 7 and
/// the `user_1..3` = 1001..1003 slots) have no variant: [`from_int`](Self::from_int)
/// refuses them like any unknown code.
///
/// ```
/// use amrex_amr::boundary::BCType;
/// assert_eq!(BCType::from_int(-1)?, BCType::ReflectOdd);
/// assert_eq!(BCType::HoExtrap.to_int(), 4);
/// assert_eq!(BCType::ExtDir.to_string(), "ext_dir");
/// assert!(BCType::from_int(6).is_err());
/// # Ok::<(), amrex_amr::AmrError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BCType {
    /// `int_dir` (0): interior or periodic; the fill leaves these ghost cells alone.
    IntDir,
    /// `reflect_even` (1): `F(-n) = F(n)`, a mirror through the face.
    ReflectEven,
    /// `reflect_odd` (-1): `F(-n) = -F(n)`, an antisymmetric mirror (the normal
    /// velocity at a symmetry plane or at the axis `r = 0`).
    ReflectOdd,
    /// `foextrap` (2): first-order extrapolation, the last interior value repeated.
    FoExtrap,
    /// `ext_dir` (3): external Dirichlet, values from the user's function.
    ExtDir,
    /// `hoextrap` (4): higher-order extrapolation to the face in the first ghost cell,
    /// the last interior value further out.
    HoExtrap,
    /// `hoextrapcc` (5): linear extrapolation `2 q(ilo) - q(ilo+1)` into every ghost
    /// cell (AMReX's host `fab_filcc`; its GPU path extrapolates linearly by distance
    /// instead, see [`fill_physical_boundary`](super::fill_physical_boundary)).
    HoExtrapCc,
}

impl BCType {
    /// Every variant, in the order of their AMReX codes.
    pub const ALL: [Self; 7] = [
        Self::ReflectOdd,
        Self::IntDir,
        Self::ReflectEven,
        Self::FoExtrap,
        Self::ExtDir,
        Self::HoExtrap,
        Self::HoExtrapCc,
    ];

    /// The type of AMReX integer code `code` (`BCType::reflect_odd` = -1 ... `hoextrapcc` = 5).
    ///
    /// # Errors
    /// [`UnknownBcType`](AmrErrorKind::UnknownBcType) for any other code, AMReX's
    /// unsupported ones (`bogus`, `ext_dir_cc`, `direction_dependent`, `user_*`) included.
    pub const fn from_int(code: i32) -> Result<Self, AmrError> {
        Ok(match code {
            -1 => Self::ReflectOdd,
            0 => Self::IntDir,
            1 => Self::ReflectEven,
            2 => Self::FoExtrap,
            3 => Self::ExtDir,
            4 => Self::HoExtrap,
            5 => Self::HoExtrapCc,
            _ => {
                return Err(AmrError::new(
                    "BCType::from_int",
                    AmrErrorKind::UnknownBcType { code },
                ));
            }
        })
    }

    /// The AMReX integer code (`int_dir` = 0, `reflect_even` = 1, ...).
    #[must_use]
    pub const fn to_int(self) -> i32 {
        match self {
            Self::ReflectOdd => -1,
            Self::IntDir => 0,
            Self::ReflectEven => 1,
            Self::FoExtrap => 2,
            Self::ExtDir => 3,
            Self::HoExtrap => 4,
            Self::HoExtrapCc => 5,
        }
    }

    /// AMReX's name of the code (`"int_dir"`, `"reflect_even"`, ...).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::ReflectOdd => "reflect_odd",
            Self::IntDir => "int_dir",
            Self::ReflectEven => "reflect_even",
            Self::FoExtrap => "foextrap",
            Self::ExtDir => "ext_dir",
            Self::HoExtrap => "hoextrap",
            Self::HoExtrapCc => "hoextrapcc",
        }
    }
}

impl fmt::Display for BCType {
    /// AMReX's name, as [`name`](Self::name).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl TryFrom<i32> for BCType {
    type Error = AmrError;
    /// [`BCType::from_int`].
    fn try_from(code: i32) -> Result<Self, AmrError> {
        Self::from_int(code)
    }
}

impl From<BCType> for i32 {
    /// [`BCType::to_int`].
    fn from(t: BCType) -> Self {
        t.to_int()
    }
}

/// The boundary condition of one component: a [`BCType`] for the low and the high face
/// of each direction (AMReX's `BCRec`).
///
/// | AMReX | here |
/// |---|---|
/// | `BCRec(loX, loY, loZ, hiX, hiY, hiZ)`, `BCRec(lo, hi)` | [`new`](Self::new), [`from_ints`](Self::from_ints) (checked) |
/// | `lo(dir)`, `hi(dir)`, `lo()`, `hi()` | [`lo`](Self::lo), [`hi`](Self::hi), [`lo_types`](Self::lo_types), [`hi_types`](Self::hi_types) |
/// | `setLo(dir, t)`, `setHi(dir, t)` | [`set_lo`](Self::set_lo), [`set_hi`](Self::set_hi) |
/// | `vect()` | [`to_ints`](Self::to_ints) (`lo` codes then `hi` codes) |
/// | `BCRec(bx, domain, bc_domain)`, `setBC` | [`restricted_to`](Self::restricted_to) |
/// | `Vector<BCRec>(ncomp, bc)` | [`repeated`](Self::repeated) |
///
/// ```
/// use amrex_amr::boundary::{BCRec, BCType};
/// use BCType::{ExtDir, FoExtrap, ReflectOdd};
/// // Inflow at low x, outflow at high x, symmetry planes in y and z.
/// let mut bc = BCRec::new([ExtDir, ReflectOdd, ReflectOdd], [FoExtrap, ReflectOdd, ReflectOdd]);
/// assert_eq!(bc.lo(0), ExtDir);
/// bc.set_hi(2, FoExtrap);
/// assert_eq!(bc.to_ints(), [3, -1, -1, 2, -1, 2]);
/// let bcs = bc.repeated(3);
/// assert_eq!(bcs.len(), 3);
/// assert_eq!(BCRec::from_ints([3, -1, -1], [2, -1, 2])?, bc);
/// # Ok::<(), amrex_amr::AmrError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BCRec {
    lo: [BCType; SPACEDIM],
    hi: [BCType; SPACEDIM],
}

impl BCRec {
    /// The record with low-face types `lo` and high-face types `hi`, per direction.
    #[must_use]
    pub const fn new(lo: [BCType; SPACEDIM], hi: [BCType; SPACEDIM]) -> Self {
        Self { lo, hi }
    }

    /// The record with type `t` on all six faces.
    #[must_use]
    pub const fn uniform(t: BCType) -> Self {
        Self::new([t; SPACEDIM], [t; SPACEDIM])
    }

    /// The record of AMReX integer codes `lo` and `hi` (AMReX's `BCRec(lo, hi)`).
    ///
    /// # Errors
    /// [`UnknownBcType`](AmrErrorKind::UnknownBcType) for the first code that is
    /// not one of [`BCType`]'s.
    pub fn from_ints(lo: [i32; SPACEDIM], hi: [i32; SPACEDIM]) -> Result<Self, AmrError> {
        let mut bc = Self::uniform(BCType::IntDir);
        for (t, &code) in bc.lo.iter_mut().zip(&lo).chain(bc.hi.iter_mut().zip(&hi)) {
            *t = BCType::from_int(code)
                .map_err(|e| AmrError::new("BCRec::from_ints", e.into_kind()))?;
        }
        Ok(bc)
    }

    /// The type of the low face in direction `dir` (AMReX's `lo(dir)`).
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[must_use]
    #[track_caller]
    pub const fn lo(&self, dir: usize) -> BCType {
        self.lo[dir]
    }

    /// The type of the high face in direction `dir` (AMReX's `hi(dir)`).
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[must_use]
    #[track_caller]
    pub const fn hi(&self, dir: usize) -> BCType {
        self.hi[dir]
    }

    /// The low-face types of the three directions (AMReX's `lo()`).
    #[must_use]
    pub const fn lo_types(&self) -> [BCType; SPACEDIM] {
        self.lo
    }

    /// The high-face types of the three directions (AMReX's `hi()`).
    #[must_use]
    pub const fn hi_types(&self) -> [BCType; SPACEDIM] {
        self.hi
    }

    /// Sets the type of the low face in direction `dir` (AMReX's `setLo`).
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[track_caller]
    pub const fn set_lo(&mut self, dir: usize, t: BCType) {
        self.lo[dir] = t;
    }

    /// Sets the type of the high face in direction `dir` (AMReX's `setHi`).
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[track_caller]
    pub const fn set_hi(&mut self, dir: usize, t: BCType) {
        self.hi[dir] = t;
    }

    /// The six AMReX codes, low faces then high faces (AMReX's `vect()`, the layout
    /// AMReX's Fortran and C kernels read).
    #[must_use]
    pub const fn to_ints(&self) -> [i32; 2 * SPACEDIM] {
        let mut v = [0; 2 * SPACEDIM];
        let mut d = 0;
        while d < SPACEDIM {
            v[d] = self.lo[d].to_int();
            v[SPACEDIM + d] = self.hi[d].to_int();
            d += 1;
        }
        v
    }

    /// This domain record as seen by box `bx`: a face keeps its type where `bx` reaches
    /// the domain's face (`bx.lo <= domain.lo`, `bx.hi >= domain.hi`) and is
    /// [`IntDir`](BCType::IntDir) elsewhere (AMReX's `BCRec(bx, domain, bc_domain)` and
    /// `setBC`). [`fill_physical_boundary`](super::fill_physical_boundary) does not need
    /// it (it fills only what lies outside the domain); it is here for code that hands
    /// per-box records to its own kernels, as AMReX's `PhysBCFunct` does.
    ///
    /// ```
    /// use amrex_amr::boundary::{BCRec, BCType};
    /// use amrex_box::{IndexBox, IntVect};
    /// let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(7));
    /// let bx = IndexBox::new(IntVect::new(-1, 2, 4), IntVect::new(3, 5, 7));
    /// let bc = BCRec::uniform(BCType::FoExtrap).restricted_to(&bx, &domain);
    /// assert_eq!(bc.lo_types(), [BCType::FoExtrap, BCType::IntDir, BCType::IntDir]);
    /// assert_eq!(bc.hi_types(), [BCType::IntDir, BCType::IntDir, BCType::FoExtrap]);
    /// ```
    #[must_use]
    pub fn restricted_to(&self, bx: &IndexBox, domain: &IndexBox) -> Self {
        let mut bc = *self;
        for d in 0..SPACEDIM {
            if bx.lo()[d] > domain.lo()[d] {
                bc.lo[d] = BCType::IntDir;
            }
            if bx.hi()[d] < domain.hi()[d] {
                bc.hi[d] = BCType::IntDir;
            }
        }
        bc
    }

    /// `ncomp` copies of this record, one per component (AMReX's
    /// `Vector<BCRec>(ncomp, bc)`), the form the fill takes.
    #[must_use]
    pub fn repeated(self, ncomp: usize) -> Vec<Self> {
        alloc::vec![self; ncomp]
    }
}

impl fmt::Display for BCRec {
    /// `(BCREC lo:hi lo:hi lo:hi)` with AMReX's integer codes, as AMReX's
    /// `operator<<` writes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(BCREC ")?;
        for d in 0..SPACEDIM {
            write!(f, "{}:{} ", self.lo[d].to_int(), self.hi[d].to_int())?;
        }
        f.write_str(")")
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::ToString;

    use super::*;

    #[test]
    fn codes_round_trip_and_match_amrex() {
        let codes: Vec<i32> = BCType::ALL.iter().map(|t| t.to_int()).collect();
        assert_eq!(codes, [-1, 0, 1, 2, 3, 4, 5]);
        for t in BCType::ALL {
            assert_eq!(BCType::from_int(t.to_int()), Ok(t));
            assert_eq!(BCType::try_from(i32::from(t)), Ok(t));
        }
        for code in [-666, -2, 6, 7, 1001, 1002, 1003, i32::MIN, i32::MAX] {
            let e = BCType::from_int(code).unwrap_err();
            assert_eq!(e.kind(), &AmrErrorKind::UnknownBcType { code });
        }
        assert_eq!(
            BCType::from_int(6).unwrap_err().to_string(),
            "BCType::from_int: expected an AMReX BCType code from -1 to 5, got 6 (AMReX's \
             ext_dir_cc, which is not implemented)"
        );
        let e = BCRec::from_ints([0, 0, 0], [0, -2, 0]).unwrap_err();
        assert_eq!(e.op(), "BCRec::from_ints");
        assert_eq!(
            e.to_string(),
            "BCRec::from_ints: expected an AMReX BCType code from -1 to 5, got -2"
        );
    }

    #[test]
    fn names_are_amrex_names() {
        let names: Vec<&str> = BCType::ALL.iter().map(|t| t.name()).collect();
        assert_eq!(
            names,
            [
                "reflect_odd",
                "int_dir",
                "reflect_even",
                "foextrap",
                "ext_dir",
                "hoextrap",
                "hoextrapcc"
            ]
        );
    }

    #[test]
    fn bcrec_accessors() {
        use BCType::*;
        let mut bc = BCRec::new(
            [ReflectOdd, IntDir, HoExtrap],
            [FoExtrap, ExtDir, HoExtrapCc],
        );
        assert_eq!(
            (0..3).map(|d| (bc.lo(d), bc.hi(d))).collect::<Vec<_>>(),
            [
                (ReflectOdd, FoExtrap),
                (IntDir, ExtDir),
                (HoExtrap, HoExtrapCc)
            ]
        );
        assert_eq!(bc.to_ints(), [-1, 0, 4, 2, 3, 5]);
        bc.set_lo(1, ReflectEven);
        bc.set_hi(0, IntDir);
        assert_eq!(bc.lo_types(), [ReflectOdd, ReflectEven, HoExtrap]);
        assert_eq!(bc.hi_types(), [IntDir, ExtDir, HoExtrapCc]);
        assert_eq!(bc.to_string(), "(BCREC -1:0 1:3 4:5 )");
        let v = bc.to_ints();
        assert_eq!(
            BCRec::from_ints([v[0], v[1], v[2]], [v[3], v[4], v[5]]),
            Ok(bc)
        );
        assert_eq!(
            BCRec::from_ints([0, 0, 0], [0, 9, 0]).unwrap_err().kind(),
            &AmrErrorKind::UnknownBcType { code: 9 }
        );
        assert_eq!(
            BCRec::uniform(ExtDir).repeated(2),
            [BCRec::uniform(ExtDir); 2]
        );
    }
}
