//! Global indexing of a `MultiFab` as pyAMReX and WarpX's `fields.py` do it:
//! `mf[i, j, k, n]` with global cell indices, slices across boxes, ghost cells through
//! imaginary indices, `()` for "valid and ghost cells", the component last.
//!
//! The subscript is parsed here into one index box and a component range; the data move
//! through `FabArray::read_region` / `write_region` (valid cells win over ghost cells on
//! reads; writes reach valid and ghost cells of every fab that covers a cell).
//!
//! Rules, per axis (`vlo..=vhi` are the valid cells of the BoxArray's minimal box, `glo`,
//! `ghi` the same grown by the ghost cells; for the component axis all four are
//! `0..=ncomp-1`):
//! - `None` bounds of a slice are `vlo` and `vhi + 1`; a step other than 1 is refused.
//! - A real integer `x` is `x` (global index), or `vhi + 1 + x` when negative.
//! - An imaginary `mj` is `vlo + m` for `m <= 0` (`-1j`: the first lower ghost cell) and
//!   `vhi + m` for `m > 0` (`1j`: the first upper ghost cell).
//! - An integer (or imaginary) index selects one cell, which must lie in `glo..=ghi`; its
//!   axis is dropped from the result, as pyAMReX squeezes every length-1 axis.
//! - `()` as an axis is every cell of it with ghosts; `mf[()]` is everything.
//! - `...` stands for as many `:` as needed; missing trailing axes are `:`.

use amrex_box::{IndexBox, IntVect};
use amrex_multifab::MultiFab;
use pyo3::exceptions::{PyIndexError, PyMemoryError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyComplex, PyEllipsis, PySlice, PyTuple};

/// A half-open range on one axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    start: i64,
    stop: i64,
}

impl Span {
    fn len(self) -> usize {
        (self.stop - self.start).max(0) as usize
    }
}

/// The parsed subscript: three spatial spans and the component span.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Region {
    axes: [Span; 4],
}

/// Bounds of one axis: valid cells `vlo..=vhi`, with ghosts `glo..=ghi`.
#[derive(Clone, Copy, Debug)]
struct Bounds {
    vlo: i64,
    vhi: i64,
    glo: i64,
    ghi: i64,
}

const AXES: [&str; 4] = ["i", "j", "k", "component"];

fn bounds(mf: &MultiFab) -> [Bounds; 4] {
    let valid = mf.box_array().minimal_box();
    let ng = mf.n_grow();
    let (lo, hi) = (valid.small_end(), valid.big_end());
    let spatial = |d: usize| Bounds {
        vlo: i64::from(lo[d]),
        vhi: i64::from(hi[d]),
        glo: i64::from(lo[d]) - i64::from(ng[d]),
        ghi: i64::from(hi[d]) + i64::from(ng[d]),
    };
    let nc = mf.ncomp() as i64;
    [
        spatial(0),
        spatial(1),
        spatial(2),
        Bounds {
            vlo: 0,
            vhi: nc - 1,
            glo: 0,
            ghi: nc - 1,
        },
    ]
}

/// What one index entry is before it is resolved against the bounds.
enum Entry<'py> {
    Full,
    WithGhosts,
    Slice(Bound<'py, PySlice>),
    Point(Bound<'py, PyAny>),
}

/// Resolves an int or imaginary position on an axis.
fn position(x: &Bound<'_, PyAny>, b: Bounds, axis: usize) -> PyResult<i64> {
    if let Ok(c) = x.cast::<PyComplex>() {
        if c.real() != 0.0 {
            return Err(PyIndexError::new_err(format!(
                "ghost-cell indices must be purely imaginary, got {} on the {} axis",
                x.repr()?,
                AXES[axis]
            )));
        }
        let m = c.imag();
        if m.fract() != 0.0 || !m.is_finite() {
            return Err(PyIndexError::new_err(format!(
                "ghost-cell indices must be whole multiples of 1j, got {}",
                x.repr()?
            )));
        }
        let m = m as i64;
        return Ok(if m <= 0 { b.vlo + m } else { b.vhi + m });
    }
    let v: i64 = x.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "MultiFab indices must be ints, imaginary ints (ghost cells), slices, () or ..., \
             got {} on the {} axis",
            crate::dlpack::common::type_name(x),
            AXES[axis]
        ))
    })?;
    Ok(if v < 0 { b.vhi + 1 + v } else { v })
}

fn resolve(entry: &Entry<'_>, b: Bounds, axis: usize) -> PyResult<Span> {
    Ok(match entry {
        Entry::Full => Span {
            start: b.vlo,
            stop: b.vhi + 1,
        },
        Entry::WithGhosts => Span {
            start: b.glo,
            stop: b.ghi + 1,
        },
        Entry::Slice(s) => {
            let step = s.getattr("step")?;
            if !step.is_none() && step.extract::<i64>().ok() != Some(1) {
                return Err(PyIndexError::new_err(format!(
                    "MultiFab slices take no step (got step {} on the {} axis); slice the \
                     returned NumPy array instead",
                    step.repr()?,
                    AXES[axis]
                )));
            }
            let start = s.getattr("start")?;
            let stop = s.getattr("stop")?;
            Span {
                start: if start.is_none() {
                    b.vlo
                } else {
                    position(&start, b, axis)?
                },
                stop: if stop.is_none() {
                    b.vhi + 1
                } else {
                    position(&stop, b, axis)?
                },
            }
        }
        Entry::Point(x) => {
            let p = position(x, b, axis)?;
            if !(b.glo..=b.ghi).contains(&p) {
                return Err(PyIndexError::new_err(format!(
                    "index {} on the {} axis is {p}, outside {}..={} (valid cells {}..={})",
                    x.repr()?,
                    AXES[axis],
                    b.glo,
                    b.ghi,
                    b.vlo,
                    b.vhi
                )));
            }
            Span {
                start: p,
                stop: p + 1,
            }
        }
    })
}

fn entry_of<'py>(x: &Bound<'py, PyAny>) -> Entry<'py> {
    if let Ok(s) = x.cast::<PySlice>() {
        Entry::Slice(s.clone())
    } else if x.cast::<PyTuple>().is_ok_and(|t| t.is_empty()) {
        Entry::WithGhosts
    } else {
        Entry::Point(x.clone())
    }
}

impl Region {
    /// Parses a subscript against `mf`'s bounds.
    pub(crate) fn parse(mf: &MultiFab, key: &Bound<'_, PyAny>) -> PyResult<Self> {
        let b = bounds(mf);
        let items: Vec<Bound<'_, PyAny>> = match key.cast::<PyTuple>() {
            Ok(t) if t.is_empty() => {
                // `mf[()]`: every cell, ghosts included, every component.
                let mut axes = [Span { start: 0, stop: 0 }; 4];
                for (d, a) in axes.iter_mut().enumerate() {
                    *a = resolve(&Entry::WithGhosts, b[d], d)?;
                }
                return Ok(Self { axes });
            }
            Ok(t) => t.iter().collect(),
            Err(_) => vec![key.clone()],
        };
        let mut entries: Vec<Entry<'_>> = Vec::with_capacity(4);
        let mut seen_ellipsis = false;
        for x in &items {
            if x.is_instance_of::<PyEllipsis>() {
                if seen_ellipsis {
                    return Err(PyIndexError::new_err(
                        "an index can only have a single ellipsis ('...')",
                    ));
                }
                seen_ellipsis = true;
                // `...` and the entries beside it make four axes.
                let fill = 5usize.saturating_sub(items.len());
                entries.extend((0..fill).map(|_| Entry::Full));
            } else {
                entries.push(entry_of(x));
            }
        }
        if entries.len() > 4 {
            return Err(PyIndexError::new_err(format!(
                "too many indices for a MultiFab: {} given, at most 4 (i, j, k, component)",
                entries.len()
            )));
        }
        while entries.len() < 4 {
            entries.push(Entry::Full);
        }
        let mut axes = [Span { start: 0, stop: 0 }; 4];
        for (d, e) in entries.iter().enumerate() {
            axes[d] = resolve(e, b[d], d)?;
        }
        let c = axes[3];
        if c.len() > 0 && (c.start < 0 || c.stop > mf.ncomp() as i64) {
            return Err(PyIndexError::new_err(format!(
                "components {}..{} out of range for {} components",
                c.start,
                c.stop,
                mf.ncomp()
            )));
        }
        Ok(Self { axes })
    }

    /// `(ni, nj, nk, nc)`.
    pub(crate) fn shape(&self) -> [usize; 4] {
        self.axes.map(Span::len)
    }

    /// The shape pyAMReX returns: length-1 axes dropped.
    pub(crate) fn squeezed_shape(&self) -> Vec<usize> {
        self.shape().into_iter().filter(|&n| n != 1).collect()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.shape().contains(&0)
    }

    /// The index box, first component and component count of a non-empty region.
    pub(crate) fn cells(&self) -> PyResult<(IndexBox, usize, usize)> {
        let mut lo = [0i32; 3];
        let mut hi = [0i32; 3];
        for d in 0..3 {
            let s = self.axes[d];
            match (i32::try_from(s.start), i32::try_from(s.stop - 1)) {
                (Ok(l), Ok(h)) => (lo[d], hi[d]) = (l, h),
                _ => {
                    return Err(PyValueError::new_err(
                        "the indexed region exceeds 32-bit cell indices",
                    ));
                }
            }
        }
        let elements = self
            .shape()
            .into_iter()
            .try_fold(1usize, usize::checked_mul)
            .filter(|&n| n <= isize::MAX as usize / 8);
        if elements.is_none() {
            return Err(PyMemoryError::new_err(format!(
                "the indexed region {:?} is too large",
                self.shape()
            )));
        }
        Ok((
            IndexBox::new(
                IntVect::new(lo[0], lo[1], lo[2]),
                IntVect::new(hi[0], hi[1], hi[2]),
            ),
            self.axes[3].start as usize,
            self.axes[3].len(),
        ))
    }
}
