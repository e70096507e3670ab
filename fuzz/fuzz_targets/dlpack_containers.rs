//! Every container's DLPack importer, fed honest producer tensors of any layout, followed
//! by the operations a user runs on what was accepted: `Array4` views and loops, `BaseFab`
//! arrays, slices and reductions, a one-box `MultiFab` over the tensor (reductions,
//! arithmetic, a periodic `fill_boundary`), `PodVector` copies and zero-copy vectors, and
//! `SmallMatrix` copies and views. The producer's deleter must run exactly once.
#![no_main]

use amrex_array4::{Array4, Array4Mut};
use amrex_basefab::BaseFab;
use amrex_box::{IndexBox, IntVect};
use amrex_dlpack_core::{DlpackElement, FromDlpack, ManagedTensor};
use amrex_fuzz::{Input, RawTensor, WALK_LIMIT, assert_released_once, versioned};
use amrex_multifab::{BoxArray, DistributionMapping, FabArray, Periodicity};
use amrex_podvector::{DlpackVector, PodVector};
use amrex_smallmatrix::{ColumnMajor, RowMajor, SmallMatrix};
use libfuzzer_sys::fuzz_target;

fn begin(inp: &mut Input<'_>) -> IntVect {
    IntVect::new(inp.i32(), inp.i32(), inp.i32())
}

fn array4<T: DlpackElement + Copy + Default>(mut t: ManagedTensor<'static>, b: IntVect) {
    if let Ok(a) = Array4::<T>::from_dlpack_view(&t.view(), b) {
        let bx = a.index_box();
        let mut n = 0usize;
        a.for_each(bx, |_, _, _, _, _| n += 1);
        assert_eq!(n, a.len());
        let _ = a.get(bx.lo().x(), bx.lo().y(), bx.lo().z(), 0);
        let _ = a.get(bx.hi().x(), bx.hi().y(), bx.hi().z(), a.ncomp().saturating_sub(1));
        let _ = a.length();
        let nd = a.to_ndarray_nkji();
        assert_eq!(nd.len(), a.len());
    }
    if let Ok(v) = t.view_mut()
        && let Ok(mut a) = Array4Mut::<T>::from_dlpack_view_mut(v, b)
    {
        let bx = a.index_box();
        a.for_each_mut(bx, |_, _, _, _, v| *v = T::default());
    }
}

fn basefab<T>(t: ManagedTensor<'static>, b: IntVect)
where
    T: DlpackElement + bytemuck::AnyBitPattern + num_traits::Signed + PartialOrd + Default,
{
    let Ok(mut fab) = BaseFab::<T>::from_dlpack_at(t, b) else {
        return;
    };
    let bx = fab.index_box();
    let _ = fab.len();
    let _ = fab.as_slice();
    if let Ok(a) = fab.array() {
        let mut n = 0usize;
        a.for_each(bx, |_, _, _, _, _| n += 1);
        assert_eq!(n, fab.len());
        let _ = a.to_ndarray_nkji();
    }
    for comp in 0..fab.ncomp().min(3) {
        let _ = fab.sum(comp..=comp, bx);
        let _ = fab.max(comp..=comp, bx);
    }
    let _ = fab.set_val(T::default(), .., bx);
    let _ = fab.plus(T::default(), .., bx);
    if let Ok(s) = fab.as_mut_slice() {
        s.fill(T::default());
    }
}

/// A one-box `MultiFab` whose fab is the tensor: the valid box is the tensor's box less
/// the ghost width.
fn fabarray(t: ManagedTensor<'static>, b: IntVect, ng: IntVect) {
    let shape = t.view().shape().to_vec();
    let len = if shape.len() == 4 {
        [shape[3], shape[2], shape[1]]
    } else {
        [1, 1, 1]
    };
    let valid_lo = IntVect::new(
        b.x().saturating_add(ng.x().max(0)),
        b.y().saturating_add(ng.y().max(0)),
        b.z().saturating_add(ng.z().max(0)),
    );
    let valid_len: [i64; 3] =
        core::array::from_fn(|d| (len[d] - 2 * i64::from(ng[d].max(0))).max(1));
    let Ok(valid) = IndexBox::try_from_lo_len(valid_lo, valid_len) else {
        return;
    };
    let Ok(ba) = BoxArray::try_new(vec![valid]) else {
        return;
    };
    let dm = DistributionMapping::single(&ba);
    let Ok(mut mf) = FabArray::<f64>::from_dlpack_per_box(&ba, &dm, ng, vec![t]) else {
        return;
    };
    let nc = mf.ncomp();
    let g = mf.n_grow();
    let _ = mf.sum(..nc, g).unwrap();
    let _ = mf.norm2(..nc, 0).unwrap();
    let _ = mf.max(..nc, g).unwrap();
    let _ = mf.value_at(valid.lo(), 0);
    mf.plus(1.0, ..nc, g).unwrap();
    mf.mult(0.5, ..nc, 0).unwrap();
    mf.fill_boundary(Periodicity::all(valid)).unwrap();
    mf.fill(0.0);
}

fn podvector<T: DlpackElement + bytemuck::AnyBitPattern + Default>(t: ManagedTensor<'static>, copy: bool) {
    if copy {
        if let Ok(v) = PodVector::<T>::from_dlpack(t) {
            let _ = v.as_slice().len();
        }
    } else if let Ok(mut v) = DlpackVector::<T>::from_dlpack(t) {
        let n = v.as_slice().len();
        assert_eq!(n, v.len());
        if let Ok(s) = v.as_mut_slice() {
            s.fill(T::default());
        }
    }
}

fn smallmatrix(mut t: ManagedTensor<'static>) {
    let _ = SmallMatrix::<f64, 3, 2>::from_dlpack_copy(&t.view());
    let _ = SmallMatrix::<f64, 2, 3, RowMajor>::from_dlpack_copy(&t.view());
    if let Ok(m) = SmallMatrix::<f64, 3, 2, ColumnMajor>::view_from_dlpack(&t.view()) {
        let _ = m.transpose();
    }
    if let Ok(v) = t.view_mut()
        && let Ok(m) = SmallMatrix::<f64, 2, 2, RowMajor>::view_from_dlpack_mut(v)
    {
        *m = SmallMatrix::identity();
    }
}

fuzz_target!(|data: &[u8]| {
    let mut inp = Input::new(data);
    let sel = inp.byte();
    let b = begin(&mut inp);
    let ng = begin(&mut inp);
    let Some(raw) = RawTensor::decode(&mut inp) else {
        return;
    };
    let built = raw.import();
    let Some(t) = built.and_then(versioned) else {
        // Refused (deleter ran) or legacy (dropped, deleter ran).
        assert_released_once(true);
        return;
    };
    if t.view().num_elements() > WALK_LIMIT {
        // Imports of huge broadcast views are still checked, without walking them.
        match sel % 4 {
            0 => {
                let _ = Array4::<f64>::from_dlpack_view(&t.view(), b);
                drop(t);
            }
            1 => drop(BaseFab::<f64>::from_dlpack_at(t, b)),
            2 => drop(DlpackVector::<f64>::from_dlpack(t)),
            _ => drop(t),
        }
        assert_released_once(true);
        return;
    }
    match sel % 12 {
        0 => array4::<f64>(t, b),
        1 => array4::<f32>(t, b),
        2 => array4::<i32>(t, b),
        3 => array4::<u8>(t, b),
        4 => basefab::<f64>(t, b),
        5 => basefab::<f32>(t, b),
        6 => basefab::<i32>(t, b),
        7 => fabarray(t, b, ng),
        8 => podvector::<f64>(t, true),
        9 => podvector::<f64>(t, false),
        10 => podvector::<u8>(t, false),
        _ => smallmatrix(t),
    }
    assert_released_once(true);
});
