//! The argument checks every operation runs before it writes anything.

use core::ops::{Bound, Range, RangeBounds};

use amrex_box::{IndexBox, IndexType, IntVect, SPACEDIM};
use amrex_geometry::Geometry;
use amrex_multifab::{BoxArray, FabArrayError, MultiFab};
use amrex_runtime::{Agreed, CommError, Communicator, Fingerprint};

use crate::error::{AmrError, AmrErrorKind, Operand};
use crate::interp::Centring;

/// `ratio >= 1` in every direction.
pub(crate) fn ratio(op: &'static str, ratio: IntVect) -> Result<(), AmrError> {
    if ratio.all_ge(IntVect::UNIT) {
        Ok(())
    } else {
        Err(AmrError::new(op, AmrErrorKind::BadRatio { ratio }))
    }
}

/// Components `start .. start + count` exist among `ncomp`.
pub(crate) fn comps(
    op: &'static str,
    operand: Operand,
    start: usize,
    count: usize,
    ncomp: usize,
) -> Result<(), AmrError> {
    comp_range(op, operand, start..start.saturating_add(count), ncomp).map(|_| ())
}

/// The components `comps` names (any range: `0..2`, `1..`, `..`) among `ncomp`, as a
/// `start..end` range that is not reversed and ends at or before `ncomp`. A bound that
/// overflows counts as `usize::MAX`, which is outside.
pub(crate) fn comp_range(
    op: &'static str,
    operand: Operand,
    comps: impl RangeBounds<usize>,
    ncomp: usize,
) -> Result<Range<usize>, AmrError> {
    let start = match comps.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.saturating_add(1),
        Bound::Unbounded => 0,
    };
    let end = match comps.end_bound() {
        Bound::Included(&e) => e.saturating_add(1),
        Bound::Excluded(&e) => e,
        Bound::Unbounded => ncomp,
    };
    if start <= end && end <= ncomp {
        Ok(start..end)
    } else {
        Err(AmrError::new(
            op,
            AmrErrorKind::ComponentsOutside {
                operand,
                start,
                end,
                ncomp,
            },
        ))
    }
}

/// `0 <= needed <= has` in every direction.
pub(crate) fn ghost(
    op: &'static str,
    operand: Operand,
    needed: IntVect,
    has: IntVect,
) -> Result<(), AmrError> {
    if needed.all_ge(IntVect::ZERO) && needed.all_le(has) {
        Ok(())
    } else {
        Err(AmrError::new(
            op,
            AmrErrorKind::GhostTooWide {
                operand,
                needed,
                has,
            },
        ))
    }
}

/// Every box of `ba` coarsens by `ratio` and refines back to itself; the first that
/// does not is named.
pub(crate) fn coarsenable(op: &'static str, ba: &BoxArray, ratio: IntVect) -> Result<(), AmrError> {
    match ba.boxes().iter().position(|b| !b.coarsenable(ratio)) {
        None => Ok(()),
        Some(index) => Err(AmrError::new(
            op,
            AmrErrorKind::NotCoarsenable {
                index,
                bx: ba.get(index),
                ratio,
            },
        )),
    }
}

/// The fine and coarse MultiFabs have the same index type.
pub(crate) fn same_type(
    op: &'static str,
    fine: &MultiFab,
    crse: &MultiFab,
) -> Result<(), AmrError> {
    let (f, c) = (fine.box_array().ix_type(), crse.box_array().ix_type());
    type_of(op, (Operand::Crse, c), (Operand::Fine, f))
}

/// Operand `a` has the index type of operand `of`.
pub(crate) fn type_of(
    op: &'static str,
    (operand, found): (Operand, IndexType),
    (of, expected): (Operand, IndexType),
) -> Result<(), AmrError> {
    if found == expected {
        Ok(())
    } else {
        Err(AmrError::new(
            op,
            AmrErrorKind::IndexTypeMismatch {
                operand,
                found,
                of,
                expected,
            },
        ))
    }
}

/// `ok` says operand `operand`, of index type `found`, has the index type the operation
/// takes, `expected` in words (`"cell-centred"`, ...).
pub(crate) fn index_type(
    op: &'static str,
    operand: Operand,
    found: IndexType,
    ok: bool,
    expected: &'static str,
) -> Result<(), AmrError> {
    if ok {
        Ok(())
    } else {
        Err(AmrError::new(
            op,
            AmrErrorKind::WrongIndexType {
                operand,
                expected,
                found,
            },
        ))
    }
}

/// Operand `operand`, of index type `found`, has the centring an interpolater takes.
pub(crate) fn centring(
    op: &'static str,
    operand: Operand,
    found: IndexType,
    centring: Centring,
) -> Result<(), AmrError> {
    index_type(
        op,
        operand,
        found,
        centring.admits(found),
        centring.describe(),
    )
}

/// `value` (a time, named `what`) is finite.
pub(crate) fn finite(op: &'static str, what: &'static str, value: f64) -> Result<(), AmrError> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(AmrError::new(op, AmrErrorKind::NotFinite { what, value }))
    }
}

/// Operand `operand`, of index type `found`, is cell-centred.
pub(crate) fn cells(op: &'static str, operand: Operand, found: IndexType) -> Result<(), AmrError> {
    index_type(op, operand, found, found.cell_centered(), "cell-centred")
}

/// `dir` is a direction: 0, 1 or 2.
pub(crate) fn dir(op: &'static str, dir: usize) -> Result<(), AmrError> {
    if dir < SPACEDIM {
        Ok(())
    } else {
        Err(AmrError::new(op, AmrErrorKind::BadDirection { dir }))
    }
}

/// `found` is the faces normal to `dir`: nodal in `dir`, cell-centred elsewhere.
pub(crate) fn faces(
    op: &'static str,
    operand: Operand,
    dir: usize,
    found: IndexType,
) -> Result<(), AmrError> {
    if found == IndexType::CELL.with_node(dir) {
        Ok(())
    } else {
        Err(AmrError::new(
            op,
            AmrErrorKind::WrongFaces {
                operand,
                dir,
                found,
            },
        ))
    }
}

/// `a` has `b`'s BoxArray and distribution mapping (so their fabs correspond).
pub(crate) fn same_layout(
    op: &'static str,
    (operand, a): (Operand, &MultiFab),
    (of, b): (Operand, &MultiFab),
) -> Result<(), AmrError> {
    if a.same_layout(b) {
        Ok(())
    } else {
        Err(AmrError::new(
            op,
            AmrErrorKind::LayoutMismatch { operand, of },
        ))
    }
}

/// An area (or volume) MultiFab: on `of`'s layout, with a component 0.
pub(crate) fn weights(
    op: &'static str,
    (operand, w): (Operand, &MultiFab),
    (of, data): (Operand, &MultiFab),
) -> Result<(), AmrError> {
    same_layout(op, (operand, w), (of, data))?;
    comps(op, operand, 0, 1, w.ncomp())
}

/// `fine` is `crse` refined by `ratio`: the same coordinate system, and the coarse
/// domain refined is the fine one.
/// The refinement ratio between two levels' geometries: the fine domain's length over
/// the coarse one's, per direction, when the fine geometry is the coarse one refined by
/// it (AMReX passes this ratio alongside the geometries and asserts that they agree;
/// here it is read off them).
pub(crate) fn ratio_of(
    op: &'static str,
    fine: &Geometry,
    crse: &Geometry,
) -> Result<IntVect, AmrError> {
    let (f, c) = (fine.domain().length(), crse.domain().length());
    let ratio = IntVect::new(f[0] / c[0].max(1), f[1] / c[1].max(1), f[2] / c[2].max(1));
    self::ratio(op, ratio)?;
    geometries(op, fine, crse, ratio)?;
    Ok(ratio)
}

pub(crate) fn geometries(
    op: &'static str,
    fine: &Geometry,
    crse: &Geometry,
    ratio: IntVect,
) -> Result<(), AmrError> {
    if fine.coord() == crse.coord() && crse.domain().refine_iv(ratio) == fine.domain() {
        Ok(())
    } else {
        Err(AmrError::new(
            op,
            AmrErrorKind::GeometryMismatch {
                fine_domain: fine.domain(),
                fine_coord: fine.coord(),
                crse_domain: crse.domain(),
                crse_coord: crse.coord(),
                ratio,
            },
        ))
    }
}

/// `region` lies inside `bounds` (the spatial bounds of a view, as cells: index types
/// are not compared, a nodal region's node indices index the view directly).
pub(crate) fn inside(
    op: &'static str,
    operand: Operand,
    region: &IndexBox,
    bounds: IndexBox,
) -> Result<(), AmrError> {
    if region.lo().all_ge(bounds.lo()) && region.hi().all_le(bounds.hi()) {
        Ok(())
    } else {
        Err(AmrError::new(
            op,
            AmrErrorKind::RegionOutside {
                operand,
                region: *region,
                bounds,
            },
        ))
    }
}

/// `given` boundary records hold records `first .. first + ncomp`.
pub(crate) fn bc_records(
    op: &'static str,
    given: usize,
    first: usize,
    ncomp: usize,
) -> Result<(), AmrError> {
    let needed = first.saturating_add(ncomp);
    if given < needed {
        return Err(AmrError::new(
            op,
            AmrErrorKind::TooFewBcRecs { given, needed },
        ));
    }
    Ok(())
}

/// The physical-boundary fill takes data of index type `ix` on `geom`: cell-centred or
/// nodal data, or any data when every direction is periodic (nothing to fill then).
pub(crate) fn boundary_type(
    op: &'static str,
    ix: IndexType,
    geom: &Geometry,
) -> Result<(), AmrError> {
    if geom.is_all_periodic() || ix.cell_centered() || ix.node_centered() {
        Ok(())
    } else {
        Err(AmrError::new(
            op,
            AmrErrorKind::UnsupportedIndexType { found: ix },
        ))
    }
}

/// Every box of `ba` lies inside `geom`'s domain (in the boxes' index type).
pub(crate) fn boxes_in_domain(
    op: &'static str,
    ba: &BoxArray,
    geom: &Geometry,
) -> Result<(), AmrError> {
    match ba
        .boxes()
        .iter()
        .position(|b| !geom.inside_physical_domain_box(b))
    {
        None => Ok(()),
        Some(index) => Err(AmrError::new(
            op,
            AmrErrorKind::BoxOutsideDomain {
                index,
                bx: ba.get(index),
                domain: geom.domain().convert(ba.ix_type()),
            },
        )),
    }
}

/// The arguments of a collective operation, hashed so that the ranks can agree on them
/// before anything else happens. Every operation of this crate that communicates builds
/// one from *all* its arguments as given (before any check) and calls
/// [`check`](Self::check) first: when the ranks agree, the local checks that follow see
/// the same arguments and the same global layouts on every rank, so they refuse on every
/// rank or on none, and every choice of path is the same everywhere — no rank is left
/// waiting in a copy the others skipped.
pub(crate) struct Agreement {
    op: &'static str,
    fp: Fingerprint,
}

impl Agreement {
    /// The agreement of operation `op`.
    pub(crate) fn new(op: &'static str) -> Self {
        let mut fp = Fingerprint::new();
        fp.str(op);
        Self { op, fp }
    }

    /// Adds a FabArray's layout (BoxArray, map, components, ghost width).
    pub(crate) fn mf<T: amrex_multifab::Element, A: amrex_arena::Arena>(
        mut self,
        m: &amrex_multifab::FabArray<T, A>,
    ) -> Self {
        m.hash_operand(&mut self.fp);
        self
    }

    /// Adds integers (component numbers, counts, directions, flags).
    pub(crate) fn words(mut self, ws: &[usize]) -> Self {
        for &w in ws {
            self.fp.word(w as u64);
        }
        self
    }

    /// Adds an index vector (a ratio, a ghost width).
    pub(crate) fn iv(mut self, v: IntVect) -> Self {
        self.fp.iv(v);
        self
    }

    /// Adds reals by their bits (times, scales).
    pub(crate) fn reals(mut self, xs: &[f64]) -> Self {
        for &x in xs {
            self.fp.f64(x);
        }
        self
    }

    /// Adds a geometry: domain, extent, coordinates, periodicity
    /// ([`hash_geometry`](amrex_multifab::hash_geometry), the words every crate hashes).
    pub(crate) fn geom(mut self, g: &Geometry) -> Self {
        amrex_multifab::hash_geometry(&mut self.fp, g);
        self
    }

    /// Adds boundary records.
    pub(crate) fn bcrecs(mut self, recs: &[crate::boundary::BCRec]) -> Self {
        self.fp.word(recs.len() as u64);
        for r in recs {
            for c in r.to_ints() {
                self.fp.word(u64::from(c.cast_unsigned()));
            }
        }
        self
    }

    /// Adds a name (an interpolater's).
    pub(crate) fn name(mut self, s: &str) -> Self {
        self.fp.str(s);
        self
    }

    /// **Collective** over `comm` ([`Communicator::agree`]): the operation's
    /// collectives when every rank passed the same arguments; else every rank returns
    /// [`MultiFab`](AmrErrorKind::MultiFab) wrapping [`FabArrayError::RanksDisagree`]. Free
    /// on one process.
    pub(crate) fn check(self, comm: &Communicator) -> Result<Agreed<'_>, AmrError> {
        let op = self.op;
        comm.agree(op, &self.fp).map_err(|e| comm_error(op, e))
    }
}

/// A communicator's error in operation `op` of this crate.
pub(crate) fn comm_error(op: &'static str, e: CommError) -> AmrError {
    AmrError::new(op, AmrErrorKind::MultiFab(FabArrayError::comm(op, e)))
}
