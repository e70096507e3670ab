//! BaseFab operations against a naive reference on random boxes, sub-boxes and
//! component ranges, for owned (compact) and borrowed (strided) fabs.
#![warn(clippy::cast_possible_truncation)]

use amrex_basefab::{Array4Mut, BaseFab, FArrayBox, FabError, IArrayBox, IndexBox, IntVect, Real};
use proptest::prelude::*;

/// Reference: compact Fortran-order storage with global indexing.
#[derive(Clone, Debug)]
struct Model {
    bx: IndexBox,
    ncomp: usize,
    data: Vec<f64>,
}

impl Model {
    fn idx(&self, p: IntVect, n: usize) -> usize {
        let l = self.bx.length();
        let lo = self.bx.lo();
        let (i, j, k) = (
            (p[0] - lo[0]) as usize,
            (p[1] - lo[1]) as usize,
            (p[2] - lo[2]) as usize,
        );
        i + l[0] as usize * (j + l[1] as usize * (k + l[2] as usize * n))
    }
    fn get(&self, p: IntVect, n: usize) -> f64 {
        self.data[self.idx(p, n)]
    }
    fn set(&mut self, p: IntVect, n: usize, v: f64) {
        let i = self.idx(p, n);
        self.data[i] = v;
    }
    fn apply(&mut self, bx: IndexBox, comps: core::ops::Range<usize>, f: impl Fn(f64) -> f64) {
        for n in comps {
            for p in bx.iter() {
                let v = self.get(p, n);
                self.set(p, n, f(v));
            }
        }
    }
}

fn check(fab: &BaseFab<'_, f64>, m: &Model) -> Result<(), TestCaseError> {
    prop_assert_eq!(fab.index_box(), m.bx);
    let a = fab.array().unwrap();
    for n in 0..m.ncomp {
        for p in m.bx.iter() {
            prop_assert_eq!(a[(p, n)], m.get(p, n), "at {} comp {}", p, n);
        }
    }
    Ok(())
}

/// A box with lo in -4..4 and lengths 1..=5 (smaller under Miri).
fn arb_box() -> impl Strategy<Value = IndexBox> {
    let max = if cfg!(miri) { 3 } else { 6 };
    (
        prop::array::uniform3(-4i32..4),
        prop::array::uniform3(1i32..max),
    )
        .prop_map(|(lo, len)| {
            let lo = IntVect::from(lo);
            IndexBox::new(lo, lo + IntVect::from(len) - 1)
        })
}

/// A sub-box of `bx` (possibly all of it).
fn arb_sub(bx: IndexBox) -> impl Strategy<Value = IndexBox> {
    let l = bx.length();
    (0..l[0], 0..l[1], 0..l[2])
        .prop_flat_map(move |(a, b, c)| {
            let lo = bx.lo() + IntVect::new(a, b, c);
            (Just(lo), 0..l[0] - a, 0..l[1] - b, 0..l[2] - c)
        })
        .prop_map(|(lo, x, y, z)| IndexBox::new(lo, lo + IntVect::new(x, y, z)))
}

fn arb_comps(ncomp: usize) -> impl Strategy<Value = core::ops::Range<usize>> {
    (0..=ncomp)
        .prop_flat_map(move |s| (Just(s), s..=ncomp))
        .prop_map(|(s, e)| s..e)
}

/// Values: small integers, so every sum and product is exact in any order.
fn values(n: usize, seed: u64) -> Vec<f64> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((x % 41) as i64 - 20) as f64
        })
        .collect()
}

/// Either an owning fab or a strided view into a larger buffer (padding 0..2 each side).
struct Setup {
    parent: Vec<f64>,
    parent_box: IndexBox,
    bx: IndexBox,
    ncomp: usize,
    strided: bool,
}

impl Setup {
    fn new(bx: IndexBox, ncomp: usize, pad: i32, strided: bool, seed: u64) -> (Self, Model) {
        let parent_box = bx.grow(pad);
        let n = parent_box.checked_num_pts_usize().unwrap() * ncomp;
        let parent = values(n, seed);
        let pm = Model {
            bx: parent_box,
            ncomp,
            data: parent.clone(),
        };
        let mut m = Model {
            bx,
            ncomp,
            data: vec![0.0; bx.checked_num_pts_usize().unwrap() * ncomp],
        };
        for c in 0..ncomp {
            for p in bx.iter() {
                m.set(p, c, pm.get(p, c));
            }
        }
        (
            Setup {
                parent,
                parent_box,
                bx,
                ncomp,
                strided,
            },
            m,
        )
    }

    fn fab(&mut self) -> BaseFab<'_, f64> {
        if self.strided {
            let a = Array4Mut::new(&mut self.parent, self.parent_box, self.ncomp);
            BaseFab::from_array4(a.into_sub_box(&self.bx))
        } else {
            // An owning fab filled from the model region of the parent.
            let pm = Model {
                bx: self.parent_box,
                ncomp: self.ncomp,
                data: self.parent.clone(),
            };
            let mut f = BaseFab::<f64>::new(self.bx, self.ncomp);
            let mut a = f.array_mut().unwrap();
            for c in 0..self.ncomp {
                for p in self.bx.iter() {
                    a[(p, c)] = pm.get(p, c);
                }
            }
            f.try_clone().unwrap()
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Op {
    SetVal(f64),
    Plus(f64),
    Mult(f64),
    Negate,
    Abs,
    Invert(f64),
}

fn arb_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (-9i32..9).prop_map(|v| Op::SetVal(v.into())),
        (-9i32..9).prop_map(|v| Op::Plus(v.into())),
        (-3i32..4).prop_map(|v| Op::Mult(v.into())),
        Just(Op::Negate),
        Just(Op::Abs),
        (1i32..5).prop_map(|v| Op::Invert(v.into())),
    ]
}

const CASES: u32 = 96;

/// Fewer cases under Miri, and no failure persistence there (it needs the file system).
fn config() -> ProptestConfig {
    let mut c = ProptestConfig::with_cases(if cfg!(miri) { 3 } else { CASES });
    if cfg!(miri) {
        c.failure_persistence = None;
    }
    c
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn unary_ops_match_reference(
        (bx, sub) in arb_box().prop_flat_map(|b| (Just(b), arb_sub(b))),
        (ncomp, comps) in (1usize..4).prop_flat_map(|n| (Just(n), arb_comps(n))),
        op in arb_op(),
        strided in any::<bool>(),
        pad in 0i32..2,
        seed in any::<u64>(),
    ) {
        let (mut setup, mut m) = Setup::new(bx, ncomp, pad, strided, seed);
        let mut fab = setup.fab();
        let c = comps.clone();
        match op {
            Op::SetVal(v) => { fab.set_val(v, c, sub).unwrap(); m.apply(sub, comps, |_| v); }
            Op::Plus(v) => { fab.plus(v, c, sub).unwrap(); m.apply(sub, comps, |x| x + v); }
            Op::Mult(v) => { fab.mult(v, c, sub).unwrap(); m.apply(sub, comps, |x| x * v); }
            Op::Negate => { fab.negate(c, sub).unwrap(); m.apply(sub, comps, |x| -x); }
            Op::Abs => { fab.abs(c, sub).unwrap(); m.apply(sub, comps, f64::abs); }
            Op::Invert(v) => { fab.invert(v, c, sub).unwrap(); m.apply(sub, comps, |x| v / x); }
        }
        check(&fab, &m)?;
    }

    #[test]
    fn reductions_match_reference(
        (bx, sub) in arb_box().prop_flat_map(|b| (Just(b), arb_sub(b))),
        ncomp in 1usize..4,
        strided in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let (mut setup, m) = Setup::new(bx, ncomp, 1, strided, seed);
        let fab = setup.fab();
        for c in 0..ncomp {
            let vals: Vec<f64> = sub.iter().map(|p| m.get(p, c)).collect();
            prop_assert_eq!(fab.sum(c..=c, sub).unwrap(), vals.iter().sum::<f64>());
            prop_assert_eq!(fab.min(c..=c, sub).unwrap(), vals.iter().copied().fold(f64::INFINITY, f64::min));
            prop_assert_eq!(fab.max(c..=c, sub).unwrap(), vals.iter().copied().fold(f64::NEG_INFINITY, f64::max));
            let (lo, hi) = fab.min_max(c..=c, sub).unwrap();
            prop_assert_eq!((lo.to_bits(), hi.to_bits()), (fab.min(c..=c, sub).unwrap().to_bits(), fab.max(c..=c, sub).unwrap().to_bits()));
            prop_assert_eq!(fab.norm0(c..=c, sub).unwrap(), vals.iter().fold(0.0f64, |a, x| a.max(x.abs())));
            prop_assert_eq!(fab.norm1(c..=c, sub).unwrap(), vals.iter().map(|x| x.abs()).sum::<f64>());
            let n2 = vals.iter().map(|x| x * x).sum::<f64>().sqrt();
            prop_assert!((fab.norm2(c..=c, sub).unwrap() - n2).abs() <= 1e-12 * n2.max(1.0));
        }
    }

    #[test]
    fn binary_ops_with_shift_match_reference(
        (sbx, ssub) in arb_box().prop_flat_map(|b| (Just(b), arb_sub(b))),
        dlo in prop::array::uniform3(-6i32..6),
        dpad in prop::array::uniform3(0i32..2),
        (sn, dn) in (1usize..4, 1usize..4),
        which in 0u8..3,
        strided in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let ncomp_max = sn.min(dn);
        // `seed / div % m` as usize (below m).
        let pick = |div: u64, m: usize| usize::try_from(seed / div % m as u64).unwrap();
        let ncomp = 1 + pick(1, ncomp_max);
        let scomp = pick(7, sn - ncomp + 1);
        let dcomp = pick(11, dn - ncomp + 1);
        let dsub = IndexBox::new(IntVect::from(dlo), IntVect::from(dlo) + ssub.length() - 1);
        let dbx = IndexBox::new(dsub.lo() - IntVect::from(dpad), dsub.hi() + IntVect::from(dpad));
        let (mut ssetup, sm) = Setup::new(sbx, sn, 1, strided, seed);
        let (mut dsetup, mut dm) = Setup::new(dbx, dn, 1, !strided, seed ^ 0x5555);
        let src = ssetup.fab();
        let mut dst = dsetup.fab();
        let shift = dsub.lo() - ssub.lo();
        match which {
            0 => dst.copy_from(&src, scomp, ssub, dcomp..dcomp + ncomp, dsub).unwrap(),
            1 => dst.plus_from(&src, scomp, ssub, dcomp..dcomp + ncomp, dsub).unwrap(),
            _ => dst.mult_from(&src, scomp, ssub, dcomp..dcomp + ncomp, dsub).unwrap(),
        }
        for n in 0..ncomp {
            for p in ssub.iter() {
                let s = sm.get(p, scomp + n);
                let q = p + shift;
                let d = dm.get(q, dcomp + n);
                dm.set(q, dcomp + n, match which { 0 => s, 1 => d + s, _ => d * s });
            }
        }
        check(&dst, &dm)?;
    }
}

#[test]
fn iarraybox_is_exact() {
    let bx = IndexBox::new(IntVect::splat(-2), IntVect::new(3, 2, 1));
    let mut f = IArrayBox::new(bx, 2);
    f.set_val(-3, .., bx).unwrap();
    f.plus(
        1,
        1..2,
        IndexBox::new(IntVect::splat(-2), IntVect::splat(-2)),
    )
    .unwrap();
    f.abs(0..1, bx).unwrap();
    let n = i32::try_from(bx.num_pts()).unwrap();
    assert_eq!(f.sum(0..1, bx).unwrap(), 3 * n);
    assert_eq!(f.sum(1..2, bx).unwrap(), -3 * n + 1);
    assert_eq!(f.max(1..2, bx).unwrap(), -2);
    assert_eq!(f.min(1..2, bx).unwrap(), -3);
    assert_eq!(f.norm1(1..2, bx).unwrap(), 3 * n - 1);
    f.negate(0..1, bx).unwrap();
    f.mult(2, 0..1, bx).unwrap();
    assert_eq!(f.norm0(0..1, bx).unwrap(), 6);
}

#[test]
fn refusals_are_named() {
    let bx = IndexBox::new(IntVect::ZERO, IntVect::splat(3));
    let mut f = BaseFab::<f64>::new(bx, 2);
    let big = bx.grow(1);
    assert!(matches!(
        f.set_val(1.0, .., big),
        Err(FabError::BoxOutside { .. })
    ));
    assert_eq!(
        f.plus(1.0, 1..3, bx),
        Err(FabError::ComponentsOutside {
            start: 1,
            end: 3,
            ncomp: 2
        })
    );
    assert!(matches!(
        f.sum(2..3, bx),
        Err(FabError::ComponentsOutside { .. })
    ));
    let g = BaseFab::<f64>::new(bx, 2);
    let small = IndexBox::new(IntVect::ZERO, IntVect::splat(1));
    assert!(matches!(
        f.copy_from(&g, 0, bx, 0..1, small),
        Err(FabError::BoxSizeMismatch { .. })
    ));
    let empty = IndexBox::new(IntVect::splat(2), IntVect::splat(1));
    assert_eq!(f.min(0..1, empty), Err(FabError::EmptyBox));
    assert_eq!(f.sum(0..1, empty), Ok(0.0));
    // An empty box or component range is a no-op, even "outside".
    f.set_val(1.0, .., empty.shift(0, 100)).unwrap();
    f.set_val(1.0, 1..1, big).unwrap();
    assert_eq!(f.norm0(0..1, bx), Ok(0.0));
    let data = vec![1.0; 128];
    let mut ro = BaseFab::from_slice_ref(&data, bx, 2).unwrap();
    assert_eq!(ro.set_val(0.0, .., bx), Err(FabError::ReadOnly));
    assert_eq!(ro.sum(1..2, bx), Ok(64.0));
    assert!(ro.array_mut().is_err());
    assert!(matches!(
        BaseFab::from_slice_ref(&data[..10], bx, 2),
        Err(FabError::SliceTooShort {
            needed: 128,
            found: 10
        })
    ));
}

#[test]
fn from_slice_writes_through() {
    let bx = IndexBox::new(IntVect::new(-1, 0, 0), IntVect::new(2, 1, 0));
    let mut data = vec![0.0; 16];
    {
        let mut f = BaseFab::from_slice(&mut data, bx, 2).unwrap();
        assert!(!f.is_owning());
        f.set_val(
            3.0,
            1..2,
            IndexBox::new(IntVect::new(2, 1, 0), IntVect::new(2, 1, 0)),
        )
        .unwrap();
    }
    assert_eq!(data[15], 3.0);
    assert_eq!(data.iter().sum::<f64>(), 3.0);
}

#[test]
fn resize_and_swap() {
    let a_box = IndexBox::new(IntVect::ZERO, IntVect::splat(3));
    let mut a = BaseFab::<f64>::new(a_box, 2);
    let small = IndexBox::new(IntVect::ZERO, IntVect::splat(1));
    a.resize(small, 1).unwrap();
    assert_eq!((a.index_box(), a.ncomp(), a.len()), (small, 1, 8));
    assert_eq!(a.strides(), [2, 4, 8]);
    a.set_val(2.0, .., small).unwrap();
    assert_eq!(a.sum(0..1, small).unwrap(), 16.0);
    let t = a.try_clone().unwrap();
    assert_eq!(t.as_slice().unwrap().len(), 8);
    a.resize(a_box.grow(2), 3).unwrap();
    assert_eq!(a.len(), 512 * 3);
    a.set_val(1.0, .., a_box.grow(2)).unwrap();
    let mut b = BaseFab::<f64>::new(small, 1);
    a.swap(&mut b);
    assert_eq!(a.index_box(), small);
    assert_eq!(b.sum(2..3, a_box.grow(2)).unwrap(), 512.0);
    // Resizing a borrowed fab makes it owning.
    let mut data = vec![5.0; 8];
    let mut c = BaseFab::from_slice(&mut data, small, 1).unwrap();
    c.resize(a_box, 1).unwrap();
    assert!(c.is_owning());
    c.set_val(0.0, .., a_box).unwrap();
    drop(c);
    assert_eq!(data, [5.0; 8]);
}

#[test]
fn array_views_use_global_indices() {
    let bx = IndexBox::new(IntVect::splat(-1), IntVect::splat(2));
    let mut f = BaseFab::<f64>::new(bx, 3);
    {
        let mut a = f.array_comps_mut(1..3).unwrap();
        assert_eq!(a.ncomp(), 2);
        a[(-1, -1, -1, 1)] = 7.0; // fab component 2
    }
    assert_eq!(f.array().unwrap()[(-1, -1, -1, 2)], 7.0);
    assert_eq!(f.array_comps(2..3).unwrap()[(-1, -1, -1, 0)], 7.0);
    assert!(matches!(
        f.array_comps(2..4),
        Err(FabError::ComponentsOutside { .. })
    ));
}

#[test]
fn pod_vector_and_raw_parts() {
    use amrex_basefab::HostArena;
    use amrex_podvector::PodVector;
    let bx = IndexBox::new(IntVect::ZERO, IntVect::new(3, 1, 0));
    let v = PodVector::from_vec((0..16).map(f64::from).collect());
    let f = BaseFab::from_pod_vector(v, bx, 2).unwrap();
    assert!(f.is_owning());
    assert_eq!(f.sum(1..2, bx).unwrap(), (8..16).sum::<i32>() as f64);
    let v = f.into_pod_vector().unwrap();
    assert_eq!(v.len(), 16);
    assert!(matches!(
        BaseFab::from_pod_vector(v, bx.grow(1), 2),
        Err(FabError::SliceTooShort { .. })
    ));
    // A strided window: every other row of a 4x4 plane.
    let mut data: Vec<f64> = (0..16).map(f64::from).collect();
    let win = IndexBox::new(IntVect::ZERO, IntVect::new(3, 1, 0));
    // SAFETY: rows j = 0, 1 at stride 8 of a 16-element buffer, exclusive for the fab's life.
    let mut g =
        unsafe { BaseFab::from_raw_parts_in(data.as_mut_ptr(), win, 1, [8, 16, 16], HostArena) };
    assert_eq!(
        g.sum(0..1, win).unwrap(),
        (0..4).chain(8..12).sum::<i32>() as f64
    );
    g.set_val(0.0, .., win).unwrap();
    drop(g);
    assert_eq!(
        data.iter().sum::<f64>(),
        (4..8).chain(12..16).sum::<i32>() as f64
    );
}

#[test]
fn farraybox_is_real() {
    let bx = IndexBox::new(IntVect::ZERO, IntVect::splat(1));
    let mut f = FArrayBox::new(bx, 1);
    f.set_val(0.5 as Real, .., bx).unwrap();
    assert_eq!(f.sum(0..1, bx).unwrap(), 4.0 as Real);
    assert_eq!(
        core::mem::size_of::<Real>(),
        if cfg!(feature = "single-precision") {
            4
        } else {
            8
        }
    );
}
