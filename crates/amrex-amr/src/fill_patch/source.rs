//! [`Source`]: one level's data for a FillPatch, one or two states in time and the
//! level's boundary conditions.

use amrex_box::{IndexType, SPACEDIM};
use amrex_geometry::Geometry;
use amrex_multifab::MultiFab;

use crate::boundary::PhysBcFunct;
use crate::check;
use crate::error::{AmrError, AmrErrorKind, Operand};

/// The states of a [`Source`]: one, used at any time, or two with their times.
#[derive(Clone, Copy, Debug)]
pub(crate) enum States<'a> {
    One(&'a MultiFab),
    Two((&'a MultiFab, f64), (&'a MultiFab, f64)),
}

/// One level's data for a FillPatch: the state (or the old and new states with their
/// times, between which the fill interpolates linearly in time) and the level's
/// physical boundary conditions — AMReX's `smf`, `stime`, `physbcf` and `bcfcomp`
/// arguments in one value. The boundary conditions' geometry is the level's geometry.
///
/// ```
/// use amrex_amr::boundary::{BCRec, BCType, PhysBcFunct};
/// use amrex_amr::fill_patch::Source;
/// use amrex_geometry::Geometry;
/// use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IntVect, MultiFab};
///
/// let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(7));
/// let geom = Geometry::cartesian(domain, [0.0; 3], [1.0; 3])?;
/// let ba = BoxArray::from_domain(domain, 4);
/// let dm = DistributionMapping::single(&ba);
/// let (old, new) = (MultiFab::new(&ba, &dm, 1, IntVect::ZERO), MultiFab::new(&ba, &dm, 1, IntVect::ZERO));
/// let bc = PhysBcFunct::new(geom, vec![BCRec::uniform(BCType::FoExtrap)], |_, _, _| 0.0);
/// let now = Source::at(&new, &bc);
/// let between = Source::between((&old, 0.0), (&new, 0.5), &bc);
/// assert!(Source::from_slices(&[&old, &new], &[0.0], &bc).is_err());
/// # let _ = (now, between);
/// # Ok::<(), Box<dyn core::error::Error>>(())
/// ```
pub struct Source<'a, F> {
    pub(crate) states: States<'a>,
    pub(crate) bc: &'a PhysBcFunct<F>,
    pub(crate) bc_comp: usize,
}

impl<F> Clone for Source<'_, F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<F> Copy for Source<'_, F> {}

impl<F> core::fmt::Debug for Source<'_, F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Source")
            .field("states", &self.states)
            .field("bc", self.bc)
            .field("bc_comp", &self.bc_comp)
            .finish()
    }
}

impl<'a, F> Source<'a, F>
where
    F: Fn([f64; SPACEDIM], f64, usize) -> f64,
{
    /// One state, used whatever the fill's time (AMReX's one-element `smf`).
    #[must_use]
    pub fn at(state: &'a MultiFab, bc: &'a PhysBcFunct<F>) -> Self {
        Self {
            states: States::One(state),
            bc,
            bc_comp: 0,
        }
    }

    /// Two states at times `t0` and `t1` (the same BoxArray and distribution): a fill at
    /// time `t` takes the first at `t == t0`, the second at `t == t1`, else
    /// `(t1 - t)/(t1 - t0) · s0 + (t - t0)/(t1 - t0) · s1` — extrapolating outside
    /// `[t0, t1]`, as AMReX does — and the first when `|t1 - t0| <= 1e-16`.
    #[must_use]
    pub fn between(
        old: (&'a MultiFab, f64),
        new: (&'a MultiFab, f64),
        bc: &'a PhysBcFunct<F>,
    ) -> Self {
        Self {
            states: States::Two(old, new),
            bc,
            bc_comp: 0,
        }
    }

    /// AMReX's vector form: one or two states with one time each.
    ///
    /// # Errors
    /// [`SourceCount`](AmrErrorKind::SourceCount) for another number of states, or as
    /// many times as states.
    pub fn from_slices(
        states: &[&'a MultiFab],
        times: &[f64],
        bc: &'a PhysBcFunct<F>,
    ) -> Result<Self, AmrError> {
        match (states, times) {
            (&[s], &[_]) => Ok(Self::at(s, bc)),
            (&[s0, s1], &[t0, t1]) => Ok(Self::between((s0, t0), (s1, t1), bc)),
            _ => Err(AmrError::new(
                "Source::from_slices",
                AmrErrorKind::SourceCount {
                    states: states.len(),
                    times: times.len(),
                },
            )),
        }
    }

    /// The boundary record of the first component filled (AMReX's `bcfcomp`): a fill of
    /// `ncomp` components uses records `bc_comp .. bc_comp + ncomp` of the boundary
    /// conditions, and their numbers are what `ext_dir` is told. 0 unless set.
    #[must_use]
    pub fn with_bc_comp(mut self, bc_comp: usize) -> Self {
        self.bc_comp = bc_comp;
        self
    }

    /// The level's geometry (that of the boundary conditions).
    #[must_use]
    pub fn geometry(&self) -> &Geometry {
        self.bc.geometry()
    }

    /// Adds the states' layouts and times, the geometry, the records and `bc_comp` to an
    /// agreement.
    pub(crate) fn hashed(&self, ag: check::Agreement) -> check::Agreement {
        let ag = match self.states {
            States::One(s) => ag.words(&[1]).mf(s),
            States::Two((s0, t0), (s1, t1)) => ag.words(&[2]).mf(s0).mf(s1).reals(&[t0, t1]),
        };
        ag.geom(self.bc.geometry())
            .bcrecs(self.bc.bcrecs())
            .words(&[self.bc_comp])
    }

    /// The first (or only) state.
    pub(crate) fn first(&self) -> &'a MultiFab {
        match self.states {
            States::One(s) | States::Two((s, _), _) => s,
        }
    }

    /// Checks the states and records for a fill of components `scomp .. scomp + ncomp`
    /// into data of index type `ix`: components, index types, the two states' layouts,
    /// finite times, enough boundary records.
    pub(crate) fn check(
        &self,
        op: &'static str,
        operand: Operand,
        ix: IndexType,
        scomp: usize,
        ncomp: usize,
    ) -> Result<(), AmrError> {
        let states: &[&MultiFab] = match &self.states {
            States::One(s) => &[*s],
            States::Two((s0, t0), (s1, t1)) => {
                for t in [*t0, *t1] {
                    check::finite(op, "source time", t)?;
                }
                if s0.box_array() != s1.box_array()
                    || s0.distribution_map() != s1.distribution_map()
                {
                    return Err(AmrError::new(op, AmrErrorKind::StatesDiffer { operand }));
                }
                &[*s0, *s1]
            }
        };
        for s in states {
            check::comps(op, operand, scomp, ncomp, s.ncomp())?;
            check::type_of(op, (operand, s.box_array().ix_type()), (Operand::Dest, ix))?;
        }
        check::bc_records(op, self.bc.bcrecs().len(), self.bc_comp, ncomp)
    }
}
