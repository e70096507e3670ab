//! The ndarray bridge.
#![cfg(feature = "ndarray")]
#![warn(clippy::cast_possible_truncation)]

use amrex_array4::{Array4, Array4Mut, IndexBox, IntVect};

fn bx(lo: [i32; 3], hi: [i32; 3]) -> IndexBox {
    IndexBox::new(lo.into(), hi.into())
}

#[test]
fn views_index_like_the_array4() {
    let g = bx([-1, -2, -3], [2, 1, 0]);
    let data: Vec<f64> = (0..g.num_pts() * 3).map(|v| v as f64).collect();
    let a = Array4::new(&data, g, 3);
    let s = bx([0, -1, -2], [2, 1, -1]);
    let v = a.components(1, 2).sub_box(&s);
    let c = v.to_ndarray_nkji();
    let f = v.to_ndarray_ijkn();
    assert_eq!(c.shape(), &[2, 2, 3, 3]);
    assert_eq!(f.shape(), &[3, 3, 2, 2]);
    assert_eq!(c.strides(), &[64, 16, 4, 1]);
    assert_eq!(f.strides(), &[1, 4, 16, 64]);
    for n in 0..2 {
        for p in s.iter() {
            let q = p - s.lo();
            let (i, j, k) = (q[0] as usize, q[1] as usize, q[2] as usize);
            assert_eq!(c[[n, k, j, i]], v[(p, n)]);
            assert_eq!(f[[i, j, k, n]], v[(p, n)]);
        }
    }
    assert!(a.to_ndarray_nkji().is_standard_layout());
    assert!(a.to_ndarray_ijkn().t().is_standard_layout());
}

#[test]
fn mutable_views_write_through() {
    let b = bx([0, 0, 0], [3, 2, 1]);
    let mut data = vec![0_i32; 24 * 2];
    let mut a = Array4Mut::new(&mut data, b, 2);
    a.to_ndarray_nkji_mut()[[1, 1, 2, 3]] = 7;
    a.to_ndarray_ijkn_mut()[[0, 1, 0, 0]] = 8;
    assert_eq!(a[(3, 2, 1, 1)], 7);
    assert_eq!(a.to_ndarray_nkji()[[0, 0, 1, 0]], 8);
    assert_eq!(a.to_ndarray_ijkn()[[3, 2, 1, 1]], 7);
    a.reborrow().into_ndarray_ijkn_mut().fill(1);
    let mut whole = a.into_ndarray_nkji_mut();
    whole[[0, 0, 0, 0]] = 2;
    assert_eq!(data.iter().sum::<i32>(), 47 + 2);
}

#[test]
fn empty_views_are_empty() {
    let data: Vec<f32> = Vec::new();
    let e = Array4::new(&data, bx([0; 3], [3, -1, 3]), 2);
    assert_eq!(e.to_ndarray_nkji().shape(), &[2, 4, 0, 4]);
    assert_eq!(e.to_ndarray_ijkn().len(), 0);
    let z = Array4::new(&data, bx([0; 3], [3; 3]), 0);
    assert_eq!(z.to_ndarray_nkji().len(), 0);
    let _ = IntVect::ZERO;
}
