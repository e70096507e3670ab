//! The core importer (`ManagedTensor::from_raw`, legacy and versioned) and what a user
//! does with an accepted tensor: views, typed element access, walks, copies into `Vec`,
//! `ndarray` views, re-export as legacy. The producer's deleter must run exactly once.
#![no_main]

use amrex_dlpack_core::{DlpackElement, FromDlpack, ManagedTensor, TensorView};
use amrex_fuzz::{Imported, Input, RawTensor, WALK_LIMIT, assert_released_once};
use libfuzzer_sys::fuzz_target;
use ndarray::IxDyn;

fn typed_ops<T: DlpackElement + Copy>(v: &TensorView<'_>) {
    let Ok(t) = v.typed::<T>() else { return };
    let shape: Vec<usize> = v.shape().iter().map(|&e| e as usize).collect();
    let zero = vec![0; shape.len()];
    let last: Vec<usize> = shape.iter().map(|&e| e.saturating_sub(1)).collect();
    let _ = t.get(&zero);
    let _ = t.get(&last);
    let _ = t.get(&shape);
    if v.num_elements() > WALK_LIMIT {
        return;
    }
    let mut n = 0usize;
    t.for_each(|_| n += 1);
    assert_eq!(n, v.num_elements());
    {
        let copy = t.try_to_vec().expect("small copies succeed");
        assert_eq!(copy.len(), n);
    }
    if let Some(s) = t.as_slice() {
        assert_eq!(s.len(), n);
    }
}

fn view_ops(v: &TensorView<'_>) {
    let _ = v.is_c_contiguous();
    let _ = v.is_f_contiguous();
    let _ = v.offset_range();
    assert_eq!(v.strides().len(), v.ndim());
    typed_ops::<f64>(v);
    typed_ops::<f32>(v);
    typed_ops::<i32>(v);
    typed_ops::<u8>(v);
}

fn versioned_ops(mut t: ManagedTensor<'static>, inp: &mut Input<'_>) {
    view_ops(&t.view());
    let small = t.view().num_elements() <= WALK_LIMIT;
    let _ = t.as_ndarray::<f64, IxDyn>();
    if let Ok(mut a) = t.as_ndarray_mut::<f64, IxDyn>()
        && small
    {
        a.fill(1.0);
    }
    let ndim = t.view().ndim();
    if let Ok(v) = t.view_mut()
        && let Ok(mut tv) = v.typed_mut::<f64>()
        && let Some(x) = tv.get_mut(&vec![0; ndim])
    {
        *x = 2.0;
    }
    match inp.byte() % 3 {
        0 if small => {
            if let Ok(v) = Vec::<f64>::from_dlpack(t) {
                let _ = v.len();
            }
        }
        1 => {
            let legacy = t.into_legacy();
            view_ops(&legacy.view());
        }
        _ => drop(t),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut inp = Input::new(data);
    let Some(raw) = RawTensor::decode(&mut inp) else {
        return;
    };
    match raw.import() {
        Some(Imported::Versioned(t)) => versioned_ops(t, &mut inp),
        Some(Imported::Legacy(t)) => view_ops(&t.view()),
        None => {}
    }
    assert_released_once(true);
});
