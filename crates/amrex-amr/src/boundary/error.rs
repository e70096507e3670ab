//! [`BoundaryError`]: why a boundary condition code or a physical-boundary fill was
//! refused.

use core::fmt;

use amrex_box::{IndexBox, IndexType};

/// What was wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BoundaryErrorKind {
    /// An integer that is not the AMReX code of a [`BCType`](super::BCType).
    UnknownBcType {
        /// The code given.
        code: i32,
    },
    /// A component range that is reversed or reaches past the FabArray's components.
    ComponentsOutside {
        /// The first component asked for.
        start: usize,
        /// One past the last component asked for.
        end: usize,
        /// The FabArray's component count.
        ncomp: usize,
    },
    /// Fewer boundary records than the components to fill need: record `c` belongs to
    /// component `c`, so `comps.end` of them are needed.
    TooFewBcRecs {
        /// The records given.
        given: usize,
        /// The records needed (`comps.end`).
        needed: usize,
    },
    /// A box of the FabArray's BoxArray is not inside the geometry's domain (converted
    /// to the boxes' index type). Ghost cells may leave the domain; valid boxes may not.
    BoxOutsideDomain {
        /// The box's index in the BoxArray.
        index: usize,
        /// The box.
        bx: IndexBox,
        /// The domain, in the boxes' index type.
        domain: IndexBox,
    },
    /// Data that is neither cell-centred nor nodal in every direction (face- or
    /// edge-centred): AMReX's host fill aborts on such data too.
    UnsupportedIndexType {
        /// The index type found.
        found: IndexType,
    },
}

/// Why a boundary condition code or a physical-boundary fill was refused;
/// [`kind`](Self::kind) says what, and `Display` names the offending values. A fill that
/// returns an error has changed nothing.
///
/// ```
/// use amrex_amr::boundary::{BCType, BoundaryErrorKind};
/// let e = BCType::from_int(6).unwrap_err();
/// assert_eq!(e.kind(), &BoundaryErrorKind::UnknownBcType { code: 6 });
/// assert_eq!(
///     e.to_string(),
///     "expected an AMReX BCType code from -1 to 5, got 6 (AMReX's ext_dir_cc, which is not implemented)"
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoundaryError {
    kind: BoundaryErrorKind,
}

impl BoundaryError {
    /// The error of kind `kind`.
    #[must_use]
    pub const fn new(kind: BoundaryErrorKind) -> Self {
        Self { kind }
    }

    /// What was wrong.
    #[must_use]
    pub const fn kind(&self) -> &BoundaryErrorKind {
        &self.kind
    }

    /// The kind, by value.
    #[must_use]
    pub const fn into_kind(self) -> BoundaryErrorKind {
        self.kind
    }
}

impl From<BoundaryErrorKind> for BoundaryError {
    fn from(kind: BoundaryErrorKind) -> Self {
        Self::new(kind)
    }
}

/// AMReX's name for a code it defines but this crate does not implement.
const fn amrex_only_code(code: i32) -> Option<&'static str> {
    match code {
        -666 => Some("bogus"),
        6 => Some("ext_dir_cc"),
        7 => Some("direction_dependent"),
        1001 => Some("user_1"),
        1002 => Some("user_2"),
        1003 => Some("user_3"),
        _ => None,
    }
}

impl fmt::Display for BoundaryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use BoundaryErrorKind as K;
        match self.kind {
            K::UnknownBcType { code } => {
                write!(f, "expected an AMReX BCType code from -1 to 5, got {code}")?;
                match amrex_only_code(code) {
                    Some(name) => write!(f, " (AMReX's {name}, which is not implemented)"),
                    None => Ok(()),
                }
            }
            K::ComponentsOutside { start, end, ncomp } => write!(
                f,
                "components {start}..{end} are not within the FabArray's {ncomp} components"
            ),
            K::TooFewBcRecs { given, needed } => write!(
                f,
                "expected a BCRec for each of components 0..{needed} (record c is component \
                 c's), got {given}"
            ),
            K::BoxOutsideDomain { index, bx, domain } => write!(
                f,
                "box {index} {bx} of the BoxArray is not inside the geometry's domain {domain}"
            ),
            K::UnsupportedIndexType { found } => write!(
                f,
                "expected cell-centred or nodal data, got index type {found} (mixed \
                 face or edge types have no physical-boundary fill)"
            ),
        }
    }
}

impl core::error::Error for BoundaryError {}
