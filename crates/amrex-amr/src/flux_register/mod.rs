//! Refluxing at coarse/fine interfaces: [`FluxRegister`], AMReX's `FluxRegister`
//! (`AMReX_FluxRegister.H`, its kernels in `AMReX_FluxReg_3D_C.H`, and the
//! `BndryRegister`/`FabSet` storage underneath it).
//!
//! When a fine level covers part of a coarse one, both levels update the cells next to
//! the coarse/fine interface with a flux through it: the coarse level with its own
//! coarse-face flux, the fine level with the fine-face fluxes (summed over its
//! subcycled steps). Those differ, so mass leaks through the interface. A flux register
//! records, on every coarse face of the interface, `-(coarse flux) + Σ (fine fluxes)`
//! (each weighted by area and time step by the caller), and [`FluxRegister::reflux`]
//! puts the difference into the coarse cells just outside the fine region, so the
//! coarse cells see exactly the flux the fine cells saw: the two levels together
//! conserve to round-off.
//!
//! | AMReX | here |
//! |---|---|
//! | `FluxRegister(fine_boxes, dm, ref_ratio, fine_lev, nvar)` | [`FluxRegister::new`] |
//! | `CrseInit(mflx, dir, srccomp, destcomp, numcomp, mult, op)` | [`crse_init`](FluxRegister::crse_init) |
//! | `CrseInit(mflx, area, dir, ...)` | [`crse_init_area`](FluxRegister::crse_init_area) |
//! | `CrseAdd(mflx, dir, ..., mult, geom)` | [`crse_add`](FluxRegister::crse_add) |
//! | `CrseAdd(mflx, area, dir, ..., mult, geom)` | [`crse_add_area`](FluxRegister::crse_add_area) |
//! | `FineAdd(mflx, dir, srccomp, destcomp, numcomp, mult)` (`fluxreg_fineadd`) | [`fine_add`](FluxRegister::fine_add) |
//! | `FineAdd(mflx, area, dir, ...)` (`fluxreg_fineareaadd`) | [`fine_add_area`](FluxRegister::fine_add_area) |
//! | `Reflux(mf, scale, scomp, dcomp, nc, geom)` (`fluxreg_reflux`) | [`reflux`](FluxRegister::reflux) |
//! | `Reflux(mf, volume, scale, scomp, dcomp, nc, geom)` | [`reflux_volume`](FluxRegister::reflux_volume) |
//! | `ClearInternalBorders(geom)` | [`clear_internal_borders`](FluxRegister::clear_internal_borders) |
//! | `OverwriteFlux(crse_fluxes, scale, srccomp, destcomp, numcomp, geom)` | [`overwrite_flux`](FluxRegister::overwrite_flux) |
//! | `setVal(v)` | [`set_val`](FluxRegister::set_val) |
//! | `SumReg(comp)` | [`sum_reg`](FluxRegister::sum_reg) |
//! | `operator[](Orientation)` | [`register`](FluxRegister::register), [`register_mut`](FluxRegister::register_mut) |
//! | `FrOp::COPY`, `FrOp::ADD` | [`CopyOp::Copy`], [`CopyOp::Add`] |
//!
//! # Layout
//!
//! The register lives on the coarse side of the interface but on the fine level's
//! distribution: for every fine box `k` (coarsened by the ratio) and every direction
//! `d`, one plane of coarse faces on its low side and one on its high side, each a
//! MultiFab box nodal in `d` ([`register`](FluxRegister::register)`(d, side)`, box `k`),
//! owned by the rank that owns fine box `k`. So [`fine_add`](FluxRegister::fine_add) is
//! local box by box, and everything that crosses levels ([`crse_init`](FluxRegister::crse_init),
//! [`reflux`](FluxRegister::reflux), [`overwrite_flux`](FluxRegister::overwrite_flux))
//! goes through `ParallelCopy`: the coarse MultiFabs may have any BoxArray and any
//! distribution, on any number of ranks. A fine flux on another layout than the fine
//! boxes' faces is first `ParallelCopy`'d onto them.
//!
//! # Sign convention and scales
//!
//! With fluxes `F` already multiplied by their face area and time step (AMReX's
//! `AmrCoreAdv` tutorial), one coarse step is
//!
//! ```text
//! fr.crse_init(&crse_flux[d], d, Comps::first(n), -1.0, CopyOp::Copy)   // every direction d
//! fr.fine_add(&fine_flux[d], d, Comps::first(n), 1.0)                   // every fine substep, every d
//! fr.reflux(&mut crse_state, 1.0, Comps::first(n), &crse_geom)
//! ```
//!
//! and [`reflux`](FluxRegister::reflux) adds `-scale * r / V` to the coarse cell below
//! each low-side register face `r` and `+scale * r / V` to the coarse cell above each
//! high-side one (`V` the coarse cell volume). With unscaled fluxes, put `dt * area`
//! into `mult` instead (`-dt_c * A_c` for the coarse level, `dt_f * A_f` for each fine
//! substep).
//!
//! # Differences from AMReX
//!
//! - The registers start at zero (AMReX fills them with NaN).
//! - [`clear_internal_borders`](FluxRegister::clear_internal_borders) also clears a high
//!   face that meets another fine box's low face across a periodic boundary (AMReX
//!   compares the face's node index with the domain's last cell and so misses it; the
//!   faces it leaves only ever correct covered coarse cells).
//! - [`crse_add`](FluxRegister::crse_add) adds each coarse face's flux once, even where
//!   two coarse boxes (or a box and a periodic image) share that face.
//! - [`reflux`](FluxRegister::reflux) divides by each cell's volume in RZ and spherical
//!   coordinates (AMReX's constant-volume form always divides by `dx dy dz`, which is the
//!   same in Cartesian coordinates).
//!
//! Every operation checks its arguments before it writes anything, so an error leaves
//! the register and the MultiFabs as they were; only an exchange between MPI ranks that
//! fails part-way can leave an operation partly done.

mod kernels;

use crate::comps::Comps;
use alloc::vec::Vec;
use core::ops::Range;

use amrex_box::{IndexBox, IndexType, IntVect};
use amrex_geometry::{CoordSys, Geometry, Periodicity};
use amrex_multifab::{BoxArray, CopyOp, DistributionMapping, MultiFab, Tiling};

use kernels::{FineFlux, Volume};

use crate::check;
use crate::error::{AmrError, AmrErrorKind, Operand, fab_err};
use crate::kernels::off;

/// The side of a fine box a plane of register faces lies on (with a direction, AMReX's
/// `Orientation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// The low side: the faces at the fine box's smallest index in the direction.
    Lo,
    /// The high side: the faces just past the fine box's largest index.
    Hi,
}

impl Side {
    /// Both sides, low first.
    pub const BOTH: [Self; 2] = [Self::Lo, Self::Hi];

    /// 0 for the low side, 1 for the high side.
    const fn index(self) -> usize {
        match self {
            Self::Lo => 0,
            Self::Hi => 1,
        }
    }
}

/// Flux corrections on the coarse faces of a fine level's boundary, AMReX's
/// `FluxRegister`; see the [module documentation](self) for the layout, the sign
/// convention and the differences from AMReX.
///
/// ```
/// use amrex_amr::{Comps, FluxRegister};
/// use amrex_amr::flux_register::Side;
/// use amrex_geometry::Geometry;
/// use amrex_multifab::{BoxArray, CopyOp, DistributionMapping, IndexBox, IndexType, IntVect, MultiFab};
///
/// // A coarse level of 8³ cells over the unit cube, a fine level over coarse cells 2..=5.
/// let cdom = IndexBox::new(IntVect::ZERO, IntVect::splat(7));
/// let cgeom = Geometry::cartesian(cdom, [0.0; 3], [1.0; 3]).unwrap();
/// let cba = BoxArray::from_domain(cdom, 4);
/// let cdm = DistributionMapping::single(&cba);
/// let fba = BoxArray::from_domain(IndexBox::new(IntVect::splat(2), IntVect::splat(5)).refine(2), 8);
/// let fdm = DistributionMapping::single(&fba);
/// let mut fr = FluxRegister::new(&fba, &fdm, IntVect::splat(2), 1, 1)?;
///
/// // Fluxes in x already scaled by area and dt: 1 on every coarse face, 0.3 on every fine one.
/// let xfaces = IndexType::CELL.with_node(0);
/// let mut cflux = MultiFab::new(&cba.convert(xfaces), &cdm, 1, IntVect::ZERO);
/// cflux.set_val(1.0, .., 0)?;
/// let mut fflux = MultiFab::new(&fba.convert(xfaces), &fdm, 1, IntVect::ZERO);
/// fflux.set_val(0.3, .., 0)?;
/// fr.crse_init(&cflux, 0, Comps::first(1), -1.0, CopyOp::Copy)?;
/// fr.fine_add(&fflux, 0, Comps::first(1), 1.0)?;
///
/// // Each coarse face of the interface covers 4 fine faces: -1 + 4 * 0.3.
/// let r = fr.register(0, Side::Lo).value_at(IntVect::new(2, 3, 3), 0).unwrap();
/// assert!((r - 0.2).abs() < 1e-15);
///
/// // Refluxing moves that into the coarse cell just below (cell volume 1/512).
/// let mut state = MultiFab::new(&cba, &cdm, 1, IntVect::ZERO);
/// fr.reflux(&mut state, 1.0, Comps::first(1), &cgeom)?;
/// let s = state.value_at(IntVect::new(1, 3, 3), 0).unwrap();
/// assert!((s + 0.2 * 512.0).abs() < 1e-10);
/// # Ok::<(), Box<dyn core::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct FluxRegister {
    /// The fine boxes coarsened by the ratio (AMReX's `coarsenedBoxes`).
    grids: BoxArray,
    /// The fine level's distribution, shared by every register MultiFab.
    dm: DistributionMapping,
    ratio: IntVect,
    fine_level: usize,
    ncomp: usize,
    /// The fine boxes on the faces normal to each direction: the layout `fine_add`
    /// reads (a flux on another layout is copied onto it first).
    fine_faces: [BoxArray; 3],
    /// `regs[dir][side]`: box `k` is the plane of coarse faces normal to `dir` on that
    /// side of coarsened fine box `k`.
    regs: [[MultiFab; 2]; 3],
    /// `shadows[dir][side]`: box `k` is the plane of coarse cells just outside the faces
    /// of `regs[dir][side]` box `k`, the cells `reflux` corrects. `reflux` computes the
    /// corrections on these cell-centred boxes and adds them into the coarse state with
    /// a `ParallelCopy`, so its copy plans are cached on BoxArrays that live as long as
    /// the register and the state.
    shadows: [[BoxArray; 2]; 3],
}

/// The BoxArray of `boxes`, of index type `typ` even when there are none.
fn box_array(boxes: Vec<IndexBox>, typ: IndexType) -> BoxArray {
    if boxes.is_empty() {
        BoxArray::new(boxes).convert(typ)
    } else {
        BoxArray::new(boxes)
    }
}

/// The plane of faces normal to `dir` on `side` of cell box `b`, and the plane of cells
/// just outside it, or `None` if those cells leave the index space.
fn planes(b: &IndexBox, dir: usize, side: Side) -> Option<(IndexBox, IndexBox)> {
    let (lo, hi) = (b.lo(), b.hi());
    let (face, cell) = match side {
        Side::Lo => (lo[dir], lo[dir].checked_sub(1)?),
        Side::Hi => {
            let f = hi[dir].checked_add(1)?;
            (f, f)
        }
    };
    // A face index must still have a cell after it: `face + 1` fits (AMReX's nodal
    // boxes need `big_end + 1`).
    face.checked_add(1)?;
    let faces = IndexBox::with_type(
        lo.with(dir, face),
        hi.with(dir, face),
        IndexType::CELL.with_node(dir),
    );
    let cells = IndexBox::new(lo.with(dir, cell), hi.with(dir, cell));
    Some((faces, cells))
}

/// The two fine boxes with the lowest indices that overlap, if any.
fn first_overlap(ba: &BoxArray) -> Option<(usize, usize)> {
    ba.boxes().iter().enumerate().find_map(|(i, b)| {
        ba.intersections(b)
            .into_iter()
            .map(|(j, _)| j)
            .find(|&j| j != i)
            .map(|j| (i.min(j), i.max(j)))
    })
}

impl FluxRegister {
    /// A register for the interface of fine level `fine_level` (at least 1) with boxes
    /// `fine_ba` on `fine_dm`, refined by `ratio` from the level below, with `ncomp`
    /// components (AMReX's `FluxRegister(fine_boxes, dm, ref_ratio, fine_lev, nvar)`).
    /// Every register value starts at zero.
    ///
    /// # Errors
    /// [`NoCoarseLevel`](AmrErrorKind::NoCoarseLevel),
    /// [`BadRatio`](AmrErrorKind::BadRatio) (a ratio below 1),
    /// [`WrongIndexType`](AmrErrorKind::WrongIndexType) (fine boxes not cell-centred),
    /// [`MapLength`](AmrErrorKind::MapLength),
    /// [`NotCoarsenable`](AmrErrorKind::NotCoarsenable),
    /// [`Overlapping`](AmrErrorKind::Overlapping) fine boxes, and
    /// [`OutsideIndexSpace`](AmrErrorKind::OutsideIndexSpace).
    pub fn new(
        fine_ba: &BoxArray,
        fine_dm: &DistributionMapping,
        ratio: impl Into<IntVect>,
        fine_level: usize,
        ncomp: usize,
    ) -> Result<Self, AmrError> {
        const OP: &str = "FluxRegister::new";
        use AmrErrorKind as K;
        let ratio = ratio.into();
        let err = |kind| Err(AmrError::new(OP, kind));
        if fine_level == 0 {
            return err(K::NoCoarseLevel);
        }
        check::ratio(OP, ratio)?;
        check::cells(OP, Operand::FineBoxes, fine_ba.ix_type())?;
        if fine_dm.len() != fine_ba.len() {
            return err(K::MapLength {
                boxes: fine_ba.len(),
                map: fine_dm.len(),
            });
        }
        check::coarsenable(OP, fine_ba, ratio)?;
        if let Some((first, second)) = first_overlap(fine_ba) {
            return err(K::Overlapping { first, second });
        }
        let grids = fine_ba.coarsen(ratio);
        let mut planes_of = Vec::with_capacity(6);
        for dir in 0..3 {
            for side in Side::BOTH {
                let mut faces = Vec::with_capacity(grids.len());
                let mut cells = Vec::with_capacity(grids.len());
                for (index, b) in grids.boxes().iter().enumerate() {
                    let Some((f, c)) = planes(b, dir, side) else {
                        return err(K::OutsideIndexSpace { index, bx: *b });
                    };
                    faces.push(f);
                    cells.push(c);
                }
                planes_of.push((faces, cells));
            }
        }
        let mut planes_of = planes_of.into_iter();
        let mut next = |dir: usize| {
            let (faces, cells) = planes_of.next().expect("six planes");
            let typ = IndexType::CELL.with_node(dir);
            (
                MultiFab::new(&box_array(faces, typ), fine_dm, ncomp, IntVect::ZERO),
                box_array(cells, IndexType::CELL),
            )
        };
        let mut regs = Vec::with_capacity(3);
        let mut shadows = Vec::with_capacity(3);
        for dir in 0..3 {
            let (rlo, slo) = next(dir);
            let (rhi, shi) = next(dir);
            regs.push([rlo, rhi]);
            shadows.push([slo, shi]);
        }
        Ok(Self {
            fine_faces: core::array::from_fn(|d| fine_ba.convert(IndexType::CELL.with_node(d))),
            grids,
            dm: fine_dm.clone(),
            ratio,
            fine_level,
            ncomp,
            regs: regs.try_into().expect("three directions"),
            shadows: shadows.try_into().expect("three directions"),
        })
    }

    /// The refinement ratio (AMReX's `refRatio`).
    #[must_use]
    pub fn ratio(&self) -> IntVect {
        self.ratio
    }

    /// The fine level's number (AMReX's `fineLevel`).
    #[must_use]
    pub fn fine_level(&self) -> usize {
        self.fine_level
    }

    /// The coarse level's number, `fine_level() - 1` (AMReX's `crseLevel`).
    #[must_use]
    pub fn crse_level(&self) -> usize {
        self.fine_level - 1
    }

    /// The number of components (AMReX's `nComp`).
    #[must_use]
    pub fn ncomp(&self) -> usize {
        self.ncomp
    }

    /// The fine boxes coarsened by the ratio (AMReX's `coarsenedBoxes`).
    #[must_use]
    pub fn coarsened_boxes(&self) -> &BoxArray {
        &self.grids
    }

    /// The fine level's distribution mapping, which the registers use.
    #[must_use]
    pub fn distribution_map(&self) -> &DistributionMapping {
        &self.dm
    }

    /// The register of the faces normal to `dir` on `side` of the fine boxes: box `k` is
    /// the plane of coarse faces on that side of coarsened fine box `k` (AMReX's
    /// `operator[](Orientation)`).
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[must_use]
    #[track_caller]
    pub fn register(&self, dir: usize, side: Side) -> &MultiFab {
        &self.regs[dir][side.index()]
    }

    /// The register of `dir` and `side`, to write (AMReX's `FineSetVal` and the like).
    /// Keep its fabs' boxes as they are: the operations rely on them.
    ///
    /// # Panics
    /// If `dir >= 3`.
    #[must_use]
    #[track_caller]
    pub fn register_mut(&mut self, dir: usize, side: Side) -> &mut MultiFab {
        &mut self.regs[dir][side.index()]
    }

    /// Every component of every register face becomes `v` (AMReX's `setVal`).
    pub fn set_val(&mut self, v: f64) {
        for reg in self.regs.iter_mut().flatten() {
            reg.fill(v)
                .expect("filling a host MultiFab over all its components cannot fail");
        }
    }

    /// The sum of component `comp` over every low-side register face minus the sum over
    /// every high-side one, all directions (AMReX's `SumReg`). **Collective**.
    ///
    /// # Errors
    /// [`ComponentsOutside`](AmrErrorKind::ComponentsOutside) for the register;
    /// [`MultiFab`](AmrErrorKind::MultiFab) if the reduction over ranks fails.
    pub fn sum_reg(&self, comp: usize) -> Result<f64, AmrError> {
        const OP: &str = "FluxRegister::sum_reg";
        check::comps(OP, Operand::Register, comp, 1, self.ncomp)?;
        let mut sum = 0.0;
        for [lo, hi] in &self.regs {
            sum += lo.sum(comp..=comp, 0).map_err(fab_err(OP))?;
            sum -= hi.sum(comp..=comp, 0).map_err(fab_err(OP))?;
        }
        Ok(sum)
    }

    /// The checks of `crse_init`, `crse_add`, `fine_add` and their area forms.
    fn check_flux(
        &self,
        op: &'static str,
        flux: &MultiFab,
        area: Option<&MultiFab>,
        dir: usize,
        (srccomp, destcomp, numcomp): (usize, usize, usize),
    ) -> Result<(), AmrError> {
        check::dir(op, dir)?;
        check::faces(op, Operand::Flux, dir, flux.box_array().ix_type())?;
        check::comps(op, Operand::Flux, srccomp, numcomp, flux.ncomp())?;
        check::comps(op, Operand::Register, destcomp, numcomp, self.ncomp)?;
        if let Some(a) = area {
            check::weights(op, (Operand::Area, a), (Operand::Flux, flux))?;
        }
        Ok(())
    }

    /// `mult * flux` (times the areas), components `srccomp..` into a MultiFab of
    /// `numcomp` components on the flux's layout (AMReX's first loop of `CrseInit`).
    fn scaled_flux(
        flux: &MultiFab,
        area: Option<&MultiFab>,
        srccomp: usize,
        numcomp: usize,
        mult: f64,
    ) -> MultiFab {
        let mut mf = MultiFab::new(
            flux.box_array(),
            flux.distribution_map(),
            numcomp,
            IntVect::ZERO,
        );
        mf.par_for_each_tile(Tiling::Default, IntVect::ZERO, |mut t| {
            let bx = t.tilebox();
            let src = flux.array(t.mfi());
            let area = area.map(|a| a.array(t.mfi()));
            kernels::scaled(&mut t.array_mut(), src, area, &bx, srccomp, numcomp, mult);
        });
        mf
    }

    /// The agreement of operation `op` on this register: its layout (the registers'
    /// boxes and map), ratio, level and components, to which the operation adds its
    /// arguments.
    fn agreement(&self, op: &'static str) -> check::Agreement {
        let mut ag = check::Agreement::new(op);
        for [lo, hi] in &self.regs {
            ag = ag.mf(lo).mf(hi);
        }
        ag.iv(self.ratio).words(&[self.fine_level, self.ncomp])
    }

    /// `crse_init`, `crse_add` and their area forms: the checks, `mult * flux` (times
    /// the areas) on the flux's layout, then copied or added (`how`) into the registers
    /// through `ParallelCopy` with periodicity `period`.
    fn crse_impl(
        &mut self,
        (op, how, period): (&'static str, CopyOp, Periodicity),
        flux: &MultiFab,
        area: Option<&MultiFab>,
        dir: usize,
        (srccomp, destcomp, numcomp): (usize, usize, usize),
        mult: f64,
    ) -> Result<(), AmrError> {
        let mut ag = self.agreement(op).mf(flux);
        if let Some(a) = area {
            ag = ag.mf(a);
        }
        ag.words(&[usize::from(area.is_some()), dir, srccomp, destcomp, numcomp])
            .reals(&[mult])
            .words(&[usize::from(how == CopyOp::Add)])
            .iv(period.period())
            .check(self.dm.communicator())?;
        self.check_flux(op, flux, area, dir, (srccomp, destcomp, numcomp))?;
        let mf = Self::scaled_flux(flux, area, srccomp, numcomp, mult);
        self.take_crse(op, &mf, dir, destcomp..destcomp + numcomp, how, period)
    }

    /// `mf` (components `0..comps.len()`) into components `comps` of the registers of
    /// `dir`: copied (`CopyOp::Copy`) or added (`CopyOp::Add`, through a
    /// temporary copy, so each register face takes each coarse face once).
    fn take_crse(
        &mut self,
        op: &'static str,
        mf: &MultiFab,
        dir: usize,
        comps: Range<usize>,
        how: CopyOp,
        period: Periodicity,
    ) -> Result<(), AmrError> {
        let numcomp = comps.len();
        for reg in &mut self.regs[dir] {
            match how {
                CopyOp::Copy => reg
                    .parallel_copy_with(mf, 0, 0, period, CopyOp::Copy, comps.clone(), 0)
                    .map_err(fab_err(op))?,
                CopyOp::Add => {
                    let mut fs = MultiFab::new(reg.box_array(), &self.dm, numcomp, IntVect::ZERO);
                    fs.parallel_copy_with(mf, 0, 0, period, CopyOp::Copy, .., 0)
                        .map_err(fab_err(op))?;
                    reg.add(&fs, 0, comps.clone(), 0).map_err(fab_err(op))?;
                }
            }
        }
        Ok(())
    }

    /// Copies (`CopyOp::Copy`) or adds (`CopyOp::Add`) `mult` times the coarse flux
    /// `flux` (faces normal to `dir`, components `comps.src_range()`) into register
    /// components `comps.dst_range()` on both sides, wherever a register face is one of
    /// the flux's faces (AMReX's `CrseInit`, whose default `mult` is `-1`). Register faces
    /// the flux does not cover keep their values. No periodic images are looked at: a
    /// coarse flux over the whole domain covers every register face. **Collective**.
    ///
    /// # Errors
    /// [`BadDirection`](AmrErrorKind::BadDirection),
    /// [`WrongFaces`](AmrErrorKind::WrongFaces) for the flux,
    /// [`ComponentsOutside`](AmrErrorKind::ComponentsOutside) for the flux or the
    /// register, [`MultiFab`](AmrErrorKind::MultiFab) if the `ParallelCopy` is
    /// refused.
    pub fn crse_init(
        &mut self,
        flux: &MultiFab,
        dir: usize,
        comps: impl Into<Comps>,
        mult: f64,
        op: CopyOp,
    ) -> Result<(), AmrError> {
        let Comps {
            src: srccomp,
            dst: destcomp,
            count: numcomp,
        } = comps.into();
        self.crse_impl(
            ("FluxRegister::crse_init", op, Periodicity::non_periodic()),
            flux,
            None,
            dir,
            (srccomp, destcomp, numcomp),
            mult,
        )
    }

    /// [`crse_init`](Self::crse_init) with face areas: `mult * flux * area`, `area`
    /// (component 0) on the flux's BoxArray and distribution (AMReX's `CrseInit(mflx,
    /// area, ...)`). **Collective**.
    ///
    /// # Errors
    /// As [`crse_init`](Self::crse_init);
    /// [`LayoutMismatch`](AmrErrorKind::LayoutMismatch) or
    /// [`ComponentsOutside`](AmrErrorKind::ComponentsOutside) for the area.
    pub fn crse_init_area(
        &mut self,
        flux: &MultiFab,
        area: &MultiFab,
        dir: usize,
        comps: impl Into<Comps>,
        mult: f64,
        op: CopyOp,
    ) -> Result<(), AmrError> {
        let Comps {
            src: srccomp,
            dst: destcomp,
            count: numcomp,
        } = comps.into();
        self.crse_impl(
            (
                "FluxRegister::crse_init_area",
                op,
                Periodicity::non_periodic(),
            ),
            flux,
            Some(area),
            dir,
            (srccomp, destcomp, numcomp),
            mult,
        )
    }

    /// Adds `mult` times the coarse flux (faces normal to `dir`, components
    /// `comps.src_range()`) to register components `comps.dst_range()` on both sides, taking the flux from periodic images too (AMReX's
    /// `CrseAdd`, for codes whose coarse boxes under the fine level compute no fluxes).
    /// Each register face receives its coarse face's flux once, even where two coarse
    /// boxes or a periodic image share that face. **Collective**.
    ///
    /// # Errors
    /// As [`crse_init`](Self::crse_init).
    pub fn crse_add(
        &mut self,
        flux: &MultiFab,
        dir: usize,
        comps: impl Into<Comps>,
        mult: f64,
        crse_geom: &Geometry,
    ) -> Result<(), AmrError> {
        let Comps {
            src: srccomp,
            dst: destcomp,
            count: numcomp,
        } = comps.into();
        self.crse_impl(
            (
                "FluxRegister::crse_add",
                CopyOp::Add,
                crse_geom.periodicity(),
            ),
            flux,
            None,
            dir,
            (srccomp, destcomp, numcomp),
            mult,
        )
    }

    /// [`crse_add`](Self::crse_add) with face areas: `mult * flux * area` (AMReX's
    /// `CrseAdd(mflx, area, ...)`). **Collective**.
    ///
    /// # Errors
    /// As [`crse_init_area`](Self::crse_init_area).
    pub fn crse_add_area(
        &mut self,
        flux: &MultiFab,
        area: &MultiFab,
        dir: usize,
        comps: impl Into<Comps>,
        mult: f64,
        crse_geom: &Geometry,
    ) -> Result<(), AmrError> {
        let Comps {
            src: srccomp,
            dst: destcomp,
            count: numcomp,
        } = comps.into();
        self.crse_impl(
            (
                "FluxRegister::crse_add_area",
                CopyOp::Add,
                crse_geom.periodicity(),
            ),
            flux,
            Some(area),
            dir,
            (srccomp, destcomp, numcomp),
            mult,
        )
    }

    /// Adds to every register face normal to `dir`, components `comps.dst_range()`, the sum of
    /// the fine faces it covers, each times `mult` (AMReX's `FineAdd`, whose kernel is
    /// `fluxreg_fineadd`): as many fine faces as the product of the two tangential ratios
    /// per coarse face, added one by one in AMReX's order. The flux (faces normal to
    /// `dir`, components `comps.src_range()`) is read on the faces of the fine
    /// boxes' boundaries; a flux on another BoxArray or distribution than the fine
    /// boxes' is first copied onto them, so it must hold those faces. **Collective** when
    /// that copy is needed.
    ///
    /// # Errors
    /// As [`crse_init`](Self::crse_init).
    pub fn fine_add(
        &mut self,
        flux: &MultiFab,
        dir: usize,
        comps: impl Into<Comps>,
        mult: f64,
    ) -> Result<(), AmrError> {
        let Comps {
            src: srccomp,
            dst: destcomp,
            count: numcomp,
        } = comps.into();
        self.fine_add_impl(
            "FluxRegister::fine_add",
            flux,
            None,
            dir,
            (srccomp, destcomp, numcomp),
            mult,
        )
    }

    /// [`fine_add`](Self::fine_add) with fine face areas: each fine face adds
    /// `mult * area * flux` (AMReX's `FineAdd(mflx, area, ...)`, kernel
    /// `fluxreg_fineareaadd`); `area` (component 0) is on the flux's BoxArray and
    /// distribution. **Collective** when the flux must be copied onto the fine boxes.
    ///
    /// # Errors
    /// As [`crse_init_area`](Self::crse_init_area).
    pub fn fine_add_area(
        &mut self,
        flux: &MultiFab,
        area: &MultiFab,
        dir: usize,
        comps: impl Into<Comps>,
        mult: f64,
    ) -> Result<(), AmrError> {
        let Comps {
            src: srccomp,
            dst: destcomp,
            count: numcomp,
        } = comps.into();
        self.fine_add_impl(
            "FluxRegister::fine_add_area",
            flux,
            Some(area),
            dir,
            (srccomp, destcomp, numcomp),
            mult,
        )
    }

    fn fine_add_impl(
        &mut self,
        op: &'static str,
        flux: &MultiFab,
        area: Option<&MultiFab>,
        dir: usize,
        (srccomp, destcomp, numcomp): (usize, usize, usize),
        mult: f64,
    ) -> Result<(), AmrError> {
        let mut ag = self.agreement(op).mf(flux);
        if let Some(a) = area {
            ag = ag.mf(a);
        }
        ag.words(&[usize::from(area.is_some()), dir, srccomp, destcomp, numcomp])
            .reals(&[mult])
            .check(self.dm.communicator())?;
        self.check_flux(op, flux, area, dir, (srccomp, destcomp, numcomp))?;
        if numcomp == 0 {
            return Ok(());
        }
        let faces = &self.fine_faces[dir];
        let on_fine_faces = flux.box_array() == faces
            && flux.distribution_map() == &self.dm
            && flux.rank() == self.regs[dir][0].rank();
        // Off the fine boxes' faces: copy the components (and areas) needed onto them.
        let copied = if on_fine_faces {
            None
        } else {
            let copy = |src: &MultiFab, scomp: usize, n: usize| {
                let mut mf = MultiFab::new(faces, &self.dm, n, IntVect::ZERO);
                mf.parallel_copy_with(
                    src,
                    scomp,
                    0,
                    Periodicity::non_periodic(),
                    CopyOp::Copy,
                    ..,
                    0,
                )
                .map(|()| mf)
                .map_err(fab_err(op))
            };
            let f = copy(flux, srccomp, numcomp)?;
            let a = area.map(|a| copy(a, 0, 1)).transpose()?;
            Some((f, a))
        };
        let (flux, area, fcomp) = match &copied {
            None => (flux, area, srccomp),
            Some((f, a)) => (f, a.as_ref(), 0),
        };
        let ratio = self.ratio;
        let [lo, hi] = &mut self.regs[dir];
        for l in 0..flux.local_size() {
            let src = FineFlux {
                flux: flux.array_at(l),
                comp: fcomp,
                area: area.map(|a| a.array_at(l)),
                mult,
            };
            for reg in [&mut *lo, &mut *hi] {
                let rbox = reg.box_of(reg.global_index(l));
                kernels::fine_add(
                    &mut reg.array_mut_at(l),
                    &rbox,
                    &src,
                    destcomp,
                    numcomp,
                    dir,
                    ratio,
                );
            }
        }
        Ok(())
    }

    /// The checks of `reflux` and `reflux_volume`.
    fn check_reflux(
        &self,
        op: &'static str,
        state: &MultiFab,
        volume: Option<&MultiFab>,
        (srccomp, destcomp, numcomp): (usize, usize, usize),
    ) -> Result<(), AmrError> {
        check::cells(op, Operand::State, state.box_array().ix_type())?;
        check::comps(op, Operand::Register, srccomp, numcomp, self.ncomp)?;
        check::comps(op, Operand::State, destcomp, numcomp, state.ncomp())?;
        if let Some(v) = volume {
            check::weights(op, (Operand::Volume, v), (Operand::State, state))?;
        }
        Ok(())
    }

    /// Adds the register's correction to the coarse state: for every register face `r`
    /// (components `comps.src_range()`), `-scale * r / V` into the coarse cell
    /// just below a low-side face and `+scale * r / V` into the cell just above a
    /// high-side face, state components `comps.dst_range()` (AMReX's `Reflux`, kernel
    /// `fluxreg_reflux`). `V` is the cell's volume in `crse_geom` (`dx dy dz` in
    /// Cartesian coordinates, as AMReX), and faces on a periodic boundary correct the
    /// periodic image's cell. The faces between two fine boxes correct cells the fine
    /// level covers (which averaging down overwrites) unless
    /// [`clear_internal_borders`](Self::clear_internal_borders) zeroed them. The state
    /// may have any BoxArray and distribution; its ghost cells are not touched, and
    /// neither is any cell beside no register face: each orientation's corrections are
    /// computed on a plane-sized temporary and added with one `ParallelCopy`, in AMReX's
    /// order of orientations, so a cell beside several faces sums them in that order.
    /// **Collective**.
    ///
    /// # Errors
    /// [`WrongIndexType`](AmrErrorKind::WrongIndexType) for a state not cell-centred,
    /// [`ComponentsOutside`](AmrErrorKind::ComponentsOutside) for the register
    /// or the state, [`MultiFab`](AmrErrorKind::MultiFab) if a `ParallelCopy`
    /// is refused.
    pub fn reflux(
        &self,
        state: &mut MultiFab,
        scale: f64,
        comps: impl Into<Comps>,
        crse_geom: &Geometry,
    ) -> Result<(), AmrError> {
        let Comps {
            src: srccomp,
            dst: destcomp,
            count: numcomp,
        } = comps.into();
        const OP: &str = "FluxRegister::reflux";
        let comps = (srccomp, destcomp, numcomp);
        self.agreement(OP)
            .mf(state)
            .reals(&[scale])
            .words(&[srccomp, destcomp, numcomp])
            .geom(crse_geom)
            .check(self.dm.communicator())?;
        self.check_reflux(OP, state, None, comps)?;
        self.reflux_impl(
            OP,
            state,
            Volumes::Geometry(crse_geom),
            scale,
            comps,
            crse_geom,
        )
    }

    /// [`reflux`](Self::reflux) dividing by the cell volumes in `volume` (component 0, on
    /// the state's BoxArray and distribution) instead of the geometry's (AMReX's
    /// `Reflux(mf, volume, ...)`). **Collective**.
    ///
    /// # Errors
    /// As [`reflux`](Self::reflux);
    /// [`LayoutMismatch`](AmrErrorKind::LayoutMismatch) or
    /// [`ComponentsOutside`](AmrErrorKind::ComponentsOutside) for the volume.
    pub fn reflux_volume(
        &self,
        state: &mut MultiFab,
        volume: &MultiFab,
        scale: f64,
        comps: impl Into<Comps>,
        crse_geom: &Geometry,
    ) -> Result<(), AmrError> {
        let Comps {
            src: srccomp,
            dst: destcomp,
            count: numcomp,
        } = comps.into();
        const OP: &str = "FluxRegister::reflux_volume";
        let comps = (srccomp, destcomp, numcomp);
        self.agreement(OP)
            .mf(state)
            .mf(volume)
            .reals(&[scale])
            .words(&[srccomp, destcomp, numcomp])
            .geom(crse_geom)
            .check(self.dm.communicator())?;
        self.check_reflux(OP, state, Some(volume), comps)?;
        self.reflux_impl(OP, state, Volumes::Data(volume), scale, comps, crse_geom)
    }

    /// Each orientation's corrections are computed on a plane-sized MultiFab (the
    /// register's `shadows`, on the register's distribution) and added into the state
    /// with one `ParallelCopy`, so only the cells beside the register faces are read
    /// and written. The orientations go in AMReX's order, each adding once to a cell,
    /// so a cell beside several faces sums their corrections in that order.
    fn reflux_impl(
        &self,
        op: &'static str,
        state: &mut MultiFab,
        volumes: Volumes<'_>,
        scale: f64,
        (srccomp, destcomp, numcomp): (usize, usize, usize),
        crse_geom: &Geometry,
    ) -> Result<(), AmrError> {
        if numcomp == 0 {
            return Ok(());
        }
        let period = crse_geom.periodicity();
        // AMReX's order of orientations: the low sides of x, y, z, then the high sides.
        for side in Side::BOTH {
            let coef = match side {
                Side::Lo => -scale,
                Side::Hi => scale,
            };
            for dir in 0..3 {
                let s = side.index();
                let (reg, cells) = (&self.regs[dir][s], &self.shadows[dir][s]);
                let volumes = match volumes {
                    // A volume MultiFab's values at the cells the corrections land on
                    // (their periodic images included), gathered onto the planes.
                    Volumes::Data(v) => {
                        let mut g = MultiFab::new(cells, &self.dm, 1, IntVect::ZERO);
                        g.parallel_copy_with(v, 0, 0, period, CopyOp::Copy, 0..1, 0)
                            .map_err(fab_err(op))?;
                        PlaneVolumes::Gathered(g)
                    }
                    Volumes::Geometry(g) if g.coord() == CoordSys::Cartesian => {
                        PlaneVolumes::Fixed(Volume::Uniform(g.volume(IntVect::ZERO)))
                    }
                    Volumes::Geometry(g) => PlaneVolumes::Fixed(Volume::Geometry(g)),
                };
                let mut corr = MultiFab::new(cells, &self.dm, numcomp, IntVect::ZERO);
                if let PlaneVolumes::Fixed(Volume::Uniform(v)) = volumes {
                    // One volume: the register fab and the correction fab hold the same
                    // points in the same order (one plane, no ghost cells), so each
                    // component is one slice, with no per-row work (a plane normal to
                    // x has rows of one cell).
                    for l in 0..corr.local_size() {
                        let npts = reg.fab(l).len() / self.ncomp;
                        let r = reg.fab(l).as_slice().expect(COMPACT);
                        let r = &r[srccomp * npts..(srccomp + numcomp) * npts];
                        let d = corr.fab_mut(l).as_mut_slice().expect(COMPACT);
                        kernels::correction_uniform(d, r, coef, v);
                    }
                } else {
                    corr.par_for_each_tile(Tiling::None, IntVect::ZERO, |mut t| {
                        let l = t.mfi().local_index();
                        let (rb, cb) = (reg.box_of(t.index()), t.validbox());
                        let v = match &volumes {
                            PlaneVolumes::Fixed(v) => *v,
                            PlaneVolumes::Gathered(g) => Volume::Data(g.array_at(l)),
                        };
                        kernels::correction(
                            &mut t.array_mut(),
                            &cb,
                            reg.array_at(l),
                            cb.lo() - rb.lo(),
                            &v,
                            coef,
                            srccomp,
                            numcomp,
                        );
                    });
                }
                state
                    .parallel_copy_with(
                        &corr,
                        0,
                        0,
                        period,
                        CopyOp::Add,
                        destcomp..destcomp + numcomp,
                        0,
                    )
                    .map_err(fab_err(op))?;
            }
        }
        Ok(())
    }

    /// Zeroes every register face that is also a face of another fine box: a low-side
    /// face that is some box's high-side face and the other way round, including faces
    /// that meet across a periodic boundary of `crse_geom` (AMReX's
    /// `ClearInternalBorders`). Afterwards only faces on the coarse/fine interface hold
    /// corrections, so [`reflux`](Self::reflux) changes no cell the fine level covers.
    /// Local: no messages.
    pub fn clear_internal_borders(&mut self, crse_geom: &Geometry) {
        let domain = crse_geom.domain();
        for (dir, [lo, hi]) in self.regs.iter_mut().enumerate() {
            let period = crse_geom.period(dir);
            let (balo, bahi) = (lo.box_array().clone(), hi.box_array().clone());
            // (the register, the other side's boxes, the face index of the domain
            // boundary past which that side's periodic partner lies, the shift to it)
            let sides = [
                (lo, &bahi, domain.lo()[dir], period),
                (hi, &balo, domain.hi()[dir] + 1, period.map(|p| -p)),
            ];
            for (reg, other, edge, shift) in sides {
                reg.par_for_each_tile(Tiling::None, IntVect::ZERO, |mut t| {
                    let bx = t.region();
                    let mut zero = Vec::new();
                    zero.extend(other.intersections(&bx).into_iter().map(|(_, b)| b));
                    if let Some(s) = shift
                        && bx.lo()[dir] == edge
                    {
                        let images = other.intersections(&bx.shift(dir, s));
                        zero.extend(images.into_iter().map(|(_, b)| b.shift(dir, -s)));
                    }
                    let mut a = t.array_mut();
                    for b in zero {
                        a.fill(b, 0.0);
                    }
                });
            }
        }
    }

    /// Overwrites the coarse fluxes on the coarse/fine interface with the register: every
    /// face of `crse_fluxes[d]` (faces normal to `d`) between a coarse cell and a cell the
    /// fine level covers becomes `scale` times the register's value there (the low-side
    /// and high-side registers added), components `comps.src_range()` of the register
    /// into `comps.dst_range()` of the fluxes (AMReX's `OverwriteFlux`). Use it after
    /// [`set_val`](Self::set_val)`(0.0)` and [`fine_add`](Self::fine_add) so that the
    /// coarse update itself uses the fine fluxes and needs no reflux. Faces on the
    /// physical boundary, between two coarse cells or between two covered cells are
    /// left as they are; periodic images count. **Collective**.
    ///
    /// # Errors
    /// [`WrongFaces`](AmrErrorKind::WrongFaces) if `crse_fluxes[d]` is not on the
    /// faces normal to `d`,
    /// [`ComponentsOutside`](AmrErrorKind::ComponentsOutside) for the register or
    /// a flux, [`MultiFab`](AmrErrorKind::MultiFab) if a `ParallelCopy` is
    /// refused.
    pub fn overwrite_flux(
        &self,
        crse_fluxes: [&mut MultiFab; 3],
        scale: f64,
        comps: impl Into<Comps>,
        crse_geom: &Geometry,
    ) -> Result<(), AmrError> {
        let Comps {
            src: srccomp,
            dst: destcomp,
            count: numcomp,
        } = comps.into();
        const OP: &str = "FluxRegister::overwrite_flux";
        let mut ag = self.agreement(OP);
        for f in &crse_fluxes {
            ag = ag.mf(&**f);
        }
        ag.reals(&[scale])
            .words(&[srccomp, destcomp, numcomp])
            .geom(crse_geom)
            .check(self.dm.communicator())?;
        check::comps(OP, Operand::Register, srccomp, numcomp, self.ncomp)?;
        for (dir, f) in crse_fluxes.iter().enumerate() {
            check::faces(OP, Operand::Flux, dir, f.box_array().ix_type())?;
            check::comps(OP, Operand::Flux, destcomp, numcomp, f.ncomp())?;
        }
        if numcomp == 0 {
            return Ok(());
        }
        let period = crse_geom.periodicity();
        let shifts = period.shifts(IntVect::ZERO);
        // The cells that count as coarse: the domain, and one cell past each periodic
        // boundary (the images of the cells there).
        let mut cdomain = crse_geom.domain();
        for d in 0..3 {
            if crse_geom.is_periodic(d) {
                cdomain = cdomain.grow_dir(d, 1);
            }
        }
        let mask = Mask {
            grids: &self.grids,
            shifts: &shifts,
            cdomain,
        };
        for (dir, crse_flux) in crse_fluxes.into_iter().enumerate() {
            let [lo, hi] = &self.regs[dir];
            let mut fine = MultiFab::new(
                crse_flux.box_array(),
                crse_flux.distribution_map(),
                numcomp,
                IntVect::ZERO,
            );
            fine.parallel_copy_with(lo, srccomp, 0, period, CopyOp::Copy, .., 0)
                .map_err(fab_err(OP))?;
            fine.parallel_copy_with(hi, srccomp, 0, period, CopyOp::Add, .., 0)
                .map_err(fab_err(OP))?;
            crse_flux.par_for_each_tile(Tiling::Default, IntVect::ZERO, |mut t| {
                let bx = t.tilebox();
                let f = fine.array(t.mfi());
                let m = mask.around(&bx, dir);
                let mut c = t.array_mut();
                let e = IntVect::basis(dir);
                let (lo, hi) = (bx.lo(), bx.hi());
                let (co, fo) = (off(lo[0], c.begin()[0]), off(lo[0], f.begin()[0]));
                // Which faces of one row are on the interface, found once per row.
                let mut on: Vec<bool> = Vec::new();
                for k in lo[2]..=hi[2] {
                    for j in lo[1]..=hi[1] {
                        on.clear();
                        on.extend((lo[0]..=hi[0]).map(|i| {
                            let p = IntVect::new(i, j, k);
                            m.is_interface(p - e, p)
                        }));
                        if !on.contains(&true) {
                            continue;
                        }
                        for n in 0..numcomp {
                            let src = &f.row(j, k, n)[fo..fo + on.len()];
                            let dst = &mut c.row_mut(j, k, destcomp + n)[co..co + on.len()];
                            for ((d, &s), &on) in dst.iter_mut().zip(src).zip(&on) {
                                if on {
                                    *d = scale * s;
                                }
                            }
                        }
                    }
                }
            });
        }
        Ok(())
    }
}

/// Where `reflux` takes the coarse cell volumes from.
#[derive(Clone, Copy)]
enum Volumes<'a> {
    /// The coarse geometry: `dx dy dz` in Cartesian coordinates, each cell's volume in
    /// the others.
    Geometry(&'a Geometry),
    /// Component 0 of a MultiFab on the state's layout.
    Data(&'a MultiFab),
}

/// Why a fab of a MultiFab made by `MultiFab::new` is one slice.
const COMPACT: &str = "a host MultiFab's fab is one compact slice";

/// Where one orientation's corrections find the volumes of the cells they land on.
enum PlaneVolumes<'a> {
    /// The same source for every plane: one volume, or the coarse geometry.
    Fixed(Volume<'a>),
    /// A volume MultiFab's values, gathered onto the planes.
    Gathered(MultiFab),
}

/// What a coarse cell is for [`FluxRegister::overwrite_flux`] (AMReX's `crse_cell`,
/// `fine_cell`, `phbc_cell`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cell {
    /// A coarse cell the fine level does not cover.
    Crse,
    /// A coarse cell under the fine level (or under a periodic image of it).
    Fine,
    /// Outside the domain, past a physical boundary.
    Outside,
}

/// Builds the cell masks of `overwrite_flux`.
struct Mask<'a> {
    /// The coarsened fine boxes.
    grids: &'a BoxArray,
    /// Every periodic shift, zero included.
    shifts: &'a [IntVect],
    /// The cells that are coarse unless covered.
    cdomain: IndexBox,
}

/// The mask of the cells on both sides of a box of faces.
struct CellMask {
    cells: IndexBox,
    kind: Vec<Cell>,
}

impl Mask<'_> {
    /// The mask of every cell next to a face of `faces` (normal to `dir`).
    fn around(&self, faces: &IndexBox, dir: usize) -> CellMask {
        let cells = IndexBox::new(faces.lo() - IntVect::basis(dir), faces.hi());
        let mut kind: Vec<Cell> = cells
            .iter()
            .map(|c| {
                if self.cdomain.contains(c) {
                    Cell::Crse
                } else {
                    Cell::Outside
                }
            })
            .collect();
        for &s in self.shifts {
            for (_, b) in self.grids.intersections(&cells.shift_iv(s)) {
                for c in b.shift_iv(-s) {
                    kind[cells.index(c)] = Cell::Fine;
                }
            }
        }
        CellMask { cells, kind }
    }
}

impl CellMask {
    /// The face between cells `below` and `above` separates a coarse cell from a covered
    /// one.
    fn is_interface(&self, below: IntVect, above: IntVect) -> bool {
        let (a, b) = (
            self.kind[self.cells.index(below)],
            self.kind[self.cells.index(above)],
        );
        matches!((a, b), (Cell::Crse, Cell::Fine) | (Cell::Fine, Cell::Crse))
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec;

    use super::*;

    #[test]
    fn planes_are_the_faces_and_the_cells_outside() {
        let b = IndexBox::new(IntVect::new(2, 3, 4), IntVect::new(5, 7, 9));
        let (f, c) = planes(&b, 1, Side::Lo).unwrap();
        assert_eq!(
            f,
            IndexBox::with_type(
                IntVect::new(2, 3, 4),
                IntVect::new(5, 3, 9),
                IndexType::CELL.with_node(1)
            )
        );
        assert_eq!(
            c,
            IndexBox::new(IntVect::new(2, 2, 4), IntVect::new(5, 2, 9))
        );
        let (f, c) = planes(&b, 2, Side::Hi).unwrap();
        assert_eq!(
            f,
            IndexBox::with_type(
                IntVect::new(2, 3, 10),
                IntVect::new(5, 7, 10),
                IndexType::CELL.with_node(2)
            )
        );
        assert_eq!(
            c,
            IndexBox::new(IntVect::new(2, 3, 10), IntVect::new(5, 7, 10))
        );
        // No cell below i32::MIN, no face index past i32::MAX.
        let low = IndexBox::new(IntVect::splat(i32::MIN), IntVect::splat(i32::MIN + 1));
        assert!(planes(&low, 0, Side::Lo).is_none());
        assert!(planes(&low, 0, Side::Hi).is_some());
        let high = IndexBox::new(IntVect::splat(i32::MAX - 3), IntVect::splat(i32::MAX - 1));
        assert!(planes(&high, 0, Side::Hi).is_none());
    }

    #[test]
    fn first_overlap_names_the_lowest_pair() {
        let b = |lo: i32, hi: i32| IndexBox::new(IntVect::splat(lo), IntVect::splat(hi));
        assert_eq!(first_overlap(&BoxArray::new(vec![b(0, 3), b(4, 7)])), None);
        assert_eq!(
            first_overlap(&BoxArray::new(vec![b(0, 3), b(8, 9), b(6, 8), b(3, 4)])),
            Some((0, 3))
        );
    }

    #[test]
    fn empty_fine_levels_have_face_registers() {
        let ba = box_array(Vec::new(), IndexType::CELL);
        let fr = FluxRegister::new(
            &ba,
            &DistributionMapping::single(&ba),
            IntVect::splat(2),
            1,
            1,
        )
        .unwrap();
        for d in 0..3 {
            for s in Side::BOTH {
                assert_eq!(
                    fr.register(d, s).box_array().ix_type(),
                    IndexType::CELL.with_node(d)
                );
            }
        }
    }

    #[test]
    fn mask_marks_covered_outside_and_periodic_images() {
        let grids = BoxArray::new(vec![IndexBox::new(
            IntVect::new(0, 0, 0),
            IntVect::new(1, 3, 3),
        )]);
        // Periodic in x over 0..=7: cell -1 is the image of 7, so it counts as coarse;
        // cell 8 is the image of 0, which is covered.
        let shifts = Periodicity::new(
            IndexBox::new(IntVect::ZERO, IntVect::splat(7)),
            [true, false, false],
        )
        .shifts(IntVect::ZERO);
        let mask = Mask {
            grids: &grids,
            shifts: &shifts,
            cdomain: IndexBox::new(IntVect::new(-1, 0, 0), IntVect::new(8, 7, 7)),
        };
        let faces = IndexBox::with_type(
            IntVect::new(0, 0, 0),
            IntVect::new(8, 0, 0),
            IndexType::CELL.with_node(0),
        );
        let m = mask.around(&faces, 0);
        let face = |i: i32| m.is_interface(IntVect::new(i - 1, 0, 0), IntVect::new(i, 0, 0));
        assert!(face(0), "coarse image of 7 below, covered 0 above");
        assert!(!face(1), "both covered");
        assert!(face(2), "covered 1 below, coarse 2 above");
        assert!(!face(5), "both coarse");
        assert!(face(8), "coarse 7 below, image of covered 0 above");
        // In y, nothing is periodic: cells below 0 are outside, not coarse.
        let yfaces = IndexBox::with_type(
            IntVect::new(4, 0, 0),
            IntVect::new(4, 0, 0),
            IndexType::CELL.with_node(1),
        );
        let m = mask.around(&yfaces, 1);
        assert!(!m.is_interface(IntVect::new(4, -1, 0), IntVect::new(4, 0, 0)));
    }

    /// A value in `[0.5, 1.5)` from a hash of `parts` (never zero, never `-0.0`).
    fn noise(parts: [i64; 5]) -> f64 {
        let mut h: u64 = 0x9e37_79b9_7f4a_7c15;
        for p in parts {
            h = (h ^ p.cast_unsigned()).wrapping_mul(0xff51_afd7_ed55_8ccd);
            h ^= h >> 29;
        }
        0.5 + (h >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Fills every valid cell of `mf` with `noise` of `seed`, the cell and the component.
    fn fill_noise(mf: &mut MultiFab, seed: i64) {
        mf.par_for_each_tile(Tiling::None, IntVect::ZERO, |mut t| {
            let bx = t.region();
            t.array_mut().for_each_mut(bx, |i, j, k, n, v| {
                let n = i64::try_from(n).unwrap();
                *v = noise([seed, i.into(), j.into(), k.into(), n]);
            });
        });
    }

    /// `reflux` as it was first written, over the whole state: for each orientation, a
    /// correction MultiFab on the state's layout is zeroed, the register's values are
    /// copied onto the cells beside its faces and from there into the correction
    /// (periodic images included), and every state cell adds `coef * c / V`.
    fn reflux_whole_state(
        fr: &FluxRegister,
        state: &mut MultiFab,
        volume: Option<&MultiFab>,
        scale: f64,
        (srccomp, destcomp, numcomp): (usize, usize, usize),
        geom: &Geometry,
    ) {
        for side in Side::BOTH {
            let coef = if side == Side::Lo { -scale } else { scale };
            for dir in 0..3 {
                let reg = fr.register(dir, side);
                let cells = &fr.shadows[dir][side.index()];
                let mut shadow = MultiFab::new(cells, &fr.dm, numcomp, IntVect::ZERO);
                for l in 0..shadow.local_size() {
                    let g = shadow.global_index(l);
                    let shift = cells.get(g).lo() - reg.box_of(g).lo();
                    let r = reg.array_at(l);
                    shadow
                        .array_mut_at(l)
                        .for_each_mut(cells.get(g), |i, j, k, n, v| {
                            let p = IntVect::new(i, j, k) - shift;
                            *v = r[(p[0], p[1], p[2], srccomp + n)];
                        });
                }
                let mut corr = MultiFab::new(
                    state.box_array(),
                    state.distribution_map(),
                    numcomp,
                    IntVect::ZERO,
                );
                corr.parallel_copy_with(&shadow, 0, 0, geom.periodicity(), CopyOp::Copy, .., 0)
                    .unwrap();
                state.par_for_each_tile(Tiling::None, IntVect::ZERO, |mut t| {
                    let bx = t.region();
                    let c = corr.array(t.mfi());
                    let vol = volume.map(|v| v.array(t.mfi()));
                    t.array_mut().for_each_mut(bx, |i, j, k, n, s| {
                        if n < destcomp || n >= destcomp + numcomp {
                            return;
                        }
                        let v = match vol {
                            Some(v) => v[(i, j, k, 0)],
                            None => geom.volume(IntVect::new(i, j, k)),
                        };
                        *s += coef * c[(i, j, k, n - destcomp)] / v;
                    });
                });
            }
        }
    }

    /// The bits of every valid value of `mf`, box by box.
    fn bits(mf: &MultiFab) -> Vec<u64> {
        let mut out = Vec::new();
        for mfi in mf.mfiter(Tiling::None) {
            let bx = mfi.validbox();
            let a = mf.array(&mfi);
            for n in 0..mf.ncomp() {
                for p in bx.iter() {
                    out.push(a[(p[0], p[1], p[2], n)].to_bits());
                }
            }
        }
        out
    }

    /// Refluxing only the cells beside the register planes gives every state value the
    /// bits the whole-state form gives: Cartesian and RZ volumes and a volume MultiFab,
    /// fine regions on periodic boundaries, a state layout unrelated to the fine one,
    /// and a component range inside both.
    #[test]
    fn reflux_matches_the_whole_state_form_bit_for_bit() {
        let rb = amrex_geometry::RealBox::new([0.0; 3], [1.0, 0.7, 1.3]).unwrap();
        // RZ is two-dimensional: one cell in z.
        let cases = [
            (CoordSys::Cartesian, [true, true, true], false),
            (CoordSys::Cartesian, [true, false, true], true),
            (CoordSys::Rz, [false, true, false], false),
            (CoordSys::Rz, [false, true, false], true),
        ];
        for (seed, (coord, periodic, with_volume)) in (0i64..).zip(cases) {
            let nz = if coord == CoordSys::Cartesian { 14 } else { 1 };
            let dom = IndexBox::new(IntVect::ZERO, IntVect::new(15, 11, nz - 1));
            let geom = Geometry::new(dom, rb, coord, periodic).unwrap();
            let ratio = IntVect::new(2, 3, if nz == 1 { 1 } else { 2 });
            // A fine region on the low x, low y and high z boundaries, in several boxes.
            let zlo = nz / 2;
            let region = IndexBox::new(IntVect::new(0, 0, zlo), IntVect::new(6, 5, nz - 1));
            let fba = BoxArray::from_domain_iv(region.refine_iv(ratio), IntVect::new(6, 9, 8));
            let fdm = DistributionMapping::single(&fba);
            let mut fr = FluxRegister::new(&fba, &fdm, ratio, 1, 3).unwrap();
            for d in 0..3 {
                for s in Side::BOTH {
                    let t = 10 * seed + i64::try_from(2 * d + s.index()).unwrap();
                    fill_noise(fr.register_mut(d, s), t);
                }
            }
            let cba = BoxArray::from_domain_iv(dom, IntVect::new(5, 7, 4));
            let cdm = DistributionMapping::single(&cba);
            let mut state = MultiFab::new(&cba, &cdm, 4, IntVect::ZERO);
            fill_noise(&mut state, 100 + seed);
            let mut volume = MultiFab::new(&cba, &cdm, 1, IntVect::ZERO);
            fill_noise(&mut volume, 200 + seed);
            let mut want = MultiFab::new(&cba, &cdm, 4, IntVect::ZERO);
            want.parallel_copy(&state, Periodicity::non_periodic())
                .unwrap();
            let comps = (1, 2, 2);
            let vol = with_volume.then_some(&volume);
            reflux_whole_state(&fr, &mut want, vol, 0.7, comps, &geom);
            let before = bits(&state);
            match vol {
                Some(v) => fr.reflux_volume(&mut state, v, 0.7, Comps::new(1, 2, 2), &geom),
                None => fr.reflux(&mut state, 0.7, Comps::new(1, 2, 2), &geom),
            }
            .unwrap();
            let got = bits(&state);
            assert_eq!(got, bits(&want), "case {seed}");
            let changed = got.iter().zip(&before).filter(|(a, b)| a != b).count();
            assert!(changed > 40, "case {seed}: only {changed} values changed");
        }
    }
}
