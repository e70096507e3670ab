//! Physical boundary conditions: the ghost cells of a level that lie beyond a
//! non-periodic face of the domain, filled from per-component boundary records.
//!
//! | AMReX | here |
//! |---|---|
//! | `BCType::mathematicalBndryTypes` (`AMReX_BC_TYPES.H`) | [`BCType`] (with [`from_int`](BCType::from_int) / [`to_int`](BCType::to_int) for AMReX's codes) |
//! | `BCRec` (`AMReX_BCRec.H`) | [`BCRec`] |
//! | `setBC`, `BCRec(bx, domain, bc_domain)` | [`BCRec::restricted_to`] |
//! | `PhysBCFunct<F>` (`AMReX_PhysBCFunct.H`) | [`PhysBcFunct`] |
//! | `FillDomainBoundary` (`AMReX_BCUtil.cpp`), `PhysBCFunct::operator()` | [`fill_physical_boundary`] |
//! | `CpuBndryFuncFab` with `fab_filcc` (`AMReX_FilCC_C.cpp`) | the cell-centred fill |
//! | `CpuBndryFuncFab` with `fab_filnd` (`AMReX_FilND_C.cpp`) | the nodal fill |
//! | the user's `ext_dir` fill function | the closure `Fn(position, time, component) -> f64` |
//!
//! The fill follows AMReX's host kernels direction by direction, so that edges and
//! corners get AMReX's values (see [`fill_physical_boundary`] for the order, where
//! `ext_dir` is evaluated, and how AMReX's GPU path differs). Periodic directions are
//! `fill_boundary`'s: call `mf.fill_boundary(geom.periodicity())` first, as AMReX's
//! `FillPatch` does, then this.
//!
//! ```
//! use amrex_amr::boundary::{BCRec, BCType, fill_physical_boundary};
//! use amrex_geometry::Geometry;
//! use amrex_multifab::{BoxArray, DistributionMapping, IndexBox, IntVect, MultiFab, Tiling};
//!
//! // 4³ cells over [0, 1]³ in two boxes, two ghost cells, q = i + 10 j + 100 k.
//! let domain = IndexBox::new(IntVect::ZERO, IntVect::splat(3));
//! let geom = Geometry::cartesian(domain, [0.0; 3], [1.0; 3])?;
//! let ba = BoxArray::from_domain_iv(domain, IntVect::new(2, 4, 4));
//! let mut mf = MultiFab::new(&ba, &DistributionMapping::single(&ba), 1, IntVect::splat(2));
//! mf.par_for_each_tile(Tiling::None, IntVect::ZERO, |mut t| {
//!     let vbx = t.region();
//!     t.array_mut().for_each_mut(vbx, |i, j, k, _, v| *v = f64::from(i + 10 * j + 100 * k));
//! });
//! mf.fill_boundary(geom.periodicity())?;
//!
//! // Mirror planes in x, outflow in y, a fixed value of 7 below and above in z.
//! use BCType::{ExtDir, FoExtrap, ReflectEven};
//! let bc = BCRec::new([ReflectEven, FoExtrap, ExtDir], [ReflectEven, FoExtrap, ExtDir]);
//! fill_physical_boundary(&mut mf, &geom, &[bc], 0..1, 0.0, |_x, _t, _n| 7.0)?;
//!
//! let q = mf.array_at(0);
//! assert_eq!(q[(-1, 2, 1)], 120.0); // mirror of (0, 2, 1)
//! assert_eq!(q[(-2, 2, 1)], 121.0); // mirror of (1, 2, 1)
//! assert_eq!(q[(1, -2, 3)], 301.0); // copy of (1, 0, 3)
//! assert_eq!(q[(-1, 5, 2)], 230.0); // x mirror of the y copy of (0, 3, 2)
//! assert_eq!(q[(-1, 5, -1)], 7.0); // beyond an ext_dir face: the function wins
//! # Ok::<(), Box<dyn core::error::Error>>(())
//! ```
mod bcrec;
mod fill;

pub use bcrec::{BCRec, BCType};
pub use fill::{BcRecords, PhysBcFunct, fill_physical_boundary};
