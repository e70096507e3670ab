//! Construction, indexing, component and sub-box views.
#![warn(clippy::cast_possible_truncation)]

use amrex_array4::{Array4, Array4Error, Array4Mut, Dim3, IndexBox, IndexSpaceError, IntVect};

fn bx(lo: [i32; 3], hi: [i32; 3]) -> IndexBox {
    IndexBox::new(lo.into(), hi.into())
}

/// Value stored at `(i, j, k, n)` by `filled`.
fn val(i: i32, j: i32, k: i32, n: usize) -> f64 {
    f64::from(i) + 10.0 * f64::from(j) + 100.0 * f64::from(k) + 1000.0 * n as f64
}

/// Data of `b` with `ncomp` components in BaseFab layout, holding `val`.
fn filled(b: IndexBox, ncomp: usize) -> Vec<f64> {
    let mut v = Vec::new();
    for n in 0..ncomp {
        for p in b.iter() {
            v.push(val(p[0], p[1], p[2], n));
        }
    }
    v
}

#[test]
fn global_indexing_with_ghost_cells() {
    let valid = bx([0, 0, 0], [3, 2, 1]);
    let g = valid.grow(1);
    let data = filled(g, 2);
    let a = Array4::new(&data, g, 2);
    assert_eq!(a.begin(), IntVect::splat(-1));
    assert_eq!(a.end(), IntVect::new(5, 4, 3));
    assert_eq!(a.lbound(), Dim3::new(-1, -1, -1));
    assert_eq!(a.ubound(), Dim3::new(4, 3, 2));
    assert_eq!(a.length(), Dim3::new(6, 5, 4));
    assert_eq!(
        (a.jstride(), a.kstride(), a.nstride(), a.ncomp()),
        (6, 30, 120, 2)
    );
    assert_eq!(a.len(), 240);
    assert!(!a.is_empty());
    assert_eq!(a.index_box(), g);
    for n in 0..2 {
        for p in g.iter() {
            let (i, j, k) = (p[0], p[1], p[2]);
            assert_eq!(a[(i, j, k, n)], val(i, j, k, n));
            assert_eq!(a.get(i, j, k, n), Some(&val(i, j, k, n)));
            assert_eq!(a[(p, n)], val(i, j, k, n));
            // SAFETY: in bounds.
            assert_eq!(unsafe { *a.get_unchecked(i, j, k, n) }, val(i, j, k, n));
            let off = a.offset_of(i, j, k, n).unwrap();
            assert_eq!(off, g.index(p) + n * 120);
        }
    }
    assert_eq!(a[(0, 0, 0)], 0.0);
    assert_eq!(a[IntVect::new(1, 1, 1)], 111.0);
    assert!(a.contains(-1, -1, -1) && a.contains(4, 3, 2));
    assert!(!a.contains(5, 0, 0) && !a.contains(0, -2, 0) && !a.contains(0, 0, 3));
    assert!(a.contains_iv(IntVect::ZERO));
    for (i, j, k, n) in [
        (5, 0, 0, 0),
        (-2, 0, 0, 0),
        (0, 4, 0, 0),
        (0, -2, 0, 0),
        (0, 0, 3, 0),
        (0, 0, -2, 0),
        (0, 0, 0, 2),
    ] {
        assert_eq!(a.get(i, j, k, n), None, "({i},{j},{k},{n})");
        assert_eq!(a.offset_of(i, j, k, n), None);
    }
    assert_eq!(a.get(i32::MIN, 0, 0, 0), None);
    assert_eq!(a.get(i32::MAX, 0, 0, 0), None);
}

#[test]
#[should_panic(
    expected = "Array4 index (i, j, k, n) = (4, 0, 0, 0) is out of bounds: begin (0,0,0), end (4,4,4) (exclusive), ncomp 1"
)]
fn index_panic_message() {
    let data = vec![0.0; 64];
    let a = Array4::new(&data, bx([0; 3], [3; 3]), 1);
    let _ = a[(4, 0, 0, 0)];
}

#[test]
#[should_panic(expected = "(0, 0, 0, 1) is out of bounds")]
fn component_out_of_bounds_panics() {
    let mut data = vec![0.0; 8];
    let mut a = Array4Mut::new(&mut data, bx([0; 3], [1; 3]), 1);
    a[(0, 0, 0, 1)] = 1.0;
}

#[test]
fn constructor_errors() {
    let data = vec![0.0_f32; 7];
    assert_eq!(
        Array4::try_new(&data, bx([0; 3], [1; 3]), 1).unwrap_err(),
        Array4Error::SliceTooShort {
            needed: 8,
            found: 7
        }
    );
    assert_eq!(
        Array4::try_new(&data, bx([0; 3], [i32::MAX, 0, 0]), 1).unwrap_err(),
        Array4Error::OutsideIndexSpace(IndexSpaceError::Overflow {
            dir: 0,
            lo: 0,
            end: 1 << 31
        })
    );
    // A length of 2^31 (one above i32::MAX) whose end still fits.
    assert!(matches!(
        Array4::try_new(&data, bx([0, -1, 0], [0, i32::MAX - 1, 0]), 1).unwrap_err(),
        Array4Error::OutsideIndexSpace(IndexSpaceError::Overflow { dir: 1, .. })
    ));
    assert_eq!(
        Array4::try_new(&data, bx([0; 3], [1 << 30, 1 << 30, 1 << 30]), 1).unwrap_err(),
        Array4Error::TooLarge
    );
    // Longer slices are fine.
    assert!(Array4::try_new(&data, bx([0; 3], [1, 1, 0]), 1).is_ok());
    assert!(
        Array4Error::SliceTooShort {
            needed: 8,
            found: 7
        }
        .to_string()
        .contains("need 8")
    );
}

#[test]
#[should_panic(expected = "the slice has 7 elements")]
fn new_panics_on_short_slice() {
    let data = vec![0.0_f32; 7];
    let _ = Array4::new(&data, bx([0; 3], [1; 3]), 1);
}

#[test]
fn empty_views() {
    let data: Vec<f64> = Vec::new();
    let e = Array4::new(&data, bx([0, 0, 0], [-1, 3, 3]), 2);
    assert!(e.is_empty());
    assert_eq!(e.len(), 0);
    assert_eq!(e.get(0, 0, 0, 0), None);
    assert_eq!(e.row(0, 0, 0), &[] as &[f64]);
    let z = Array4::new(&data, bx([0; 3], [3; 3]), 0);
    assert!(z.is_empty());
    assert_eq!(z.get(0, 0, 0, 0), None);
    assert_eq!(z.cell_data(0, 0, 0).len(), 0);
}

#[test]
fn component_views() {
    let b = bx([2, 3, 4], [5, 5, 5]);
    let data = filled(b, 4);
    let a = Array4::new(&data, b, 4);
    let c = a.components(1, 2);
    assert_eq!(c.ncomp(), 2);
    assert_eq!(
        (c.jstride(), c.kstride(), c.nstride()),
        (a.jstride(), a.kstride(), a.nstride())
    );
    for p in b.iter() {
        assert_eq!(c[(p, 0)], val(p[0], p[1], p[2], 1));
        assert_eq!(c[(p, 1)], val(p[0], p[1], p[2], 2));
    }
    assert_eq!(c.get(2, 3, 4, 2), None);
    let last = a.component(3);
    assert_eq!(last[(5, 5, 5)], val(5, 5, 5, 3));
    let none = a.components(4, 0);
    assert!(none.is_empty());
}

#[test]
#[should_panic(expected = "components 3..3+2 are not within the view's 4 components")]
fn component_range_checked() {
    let data = vec![0.0; 4 * 8];
    let a = Array4::new(&data, bx([0; 3], [1; 3]), 4);
    let _ = a.components(3, 2);
}

#[test]
fn sub_box_views() {
    let b = bx([-2, -2, -2], [5, 5, 5]);
    let data = filled(b, 2);
    let a = Array4::new(&data, b, 2);
    let s = bx([0, 1, -1], [3, 2, 4]);
    let v = a.sub_box(&s);
    assert_eq!(v.begin(), s.lo());
    assert_eq!(v.end(), s.hi() + 1);
    assert_eq!(v.jstride(), 8);
    assert_eq!(v.len(), s.checked_num_pts_usize().unwrap() * 2);
    for n in 0..2 {
        for p in s.iter() {
            assert_eq!(v[(p, n)], val(p[0], p[1], p[2], n));
        }
    }
    assert_eq!(
        v.get(-1, 1, 0, 0),
        None,
        "outside the sub-box although inside the parent"
    );
    let vv = v.sub_box(&bx([1, 1, 0], [1, 2, 0])).component(1);
    assert_eq!(vv[(1, 2, 0)], val(1, 2, 0, 1));
    assert_eq!(vv.len(), 2);
    // Any index type: a nodal box is just a range of indices.
    let nodal = s.surrounding_nodes();
    assert_eq!(a.sub_box(&nodal).end(), nodal.hi() + 1);
    assert!(a.try_sub_box(&b.grow(1)).is_none());
    assert!(a.try_sub_box(&bx([0; 3], [-1; 3])).is_none());
}

#[test]
#[should_panic(expected = "is empty or not inside the view's bounds")]
fn sub_box_outside_panics() {
    let data = vec![0.0; 8];
    let a = Array4::new(&data, bx([0; 3], [1; 3]), 1);
    let _ = a.sub_box(&bx([0; 3], [2, 1, 1]));
}

#[test]
fn whole_views_are_one_slice() {
    let b = bx([-2, -1, 0], [3, 2, 1]);
    let data = filled(b, 2);
    let a = Array4::new(&data, b, 2);
    let flat = a.as_slice().expect("a compact view");
    assert_eq!(flat, &data[..]);
    for p in b.iter() {
        let o = a.layout().offset(p[0], p[1], p[2], 1).unwrap();
        assert_eq!(flat[o], val(p[0], p[1], p[2], 1));
    }
    // One whole component is contiguous, a sub-box is not (but a whole plane is).
    assert_eq!(a.component(1).as_slice(), Some(&data[48..]));
    assert!(a.sub_box(&bx([0, 0, 0], [1, 1, 1])).as_slice().is_none());
    let plane = bx([-2, -1, 1], [3, 2, 1]);
    let one = Array4::new(&data, b, 1).sub_box(&plane);
    assert_eq!(one.as_slice().unwrap(), &data[24..48]);
    let empty: [f64; 0] = [];
    assert_eq!(
        Array4::new(&empty, bx([0; 3], [-1; 3]), 1).as_slice(),
        Some(&[][..])
    );
    // The mutable view: one slice to write, none for a sub-box.
    let mut data = filled(b, 2);
    let mut m = Array4Mut::new(&mut data, b, 2);
    assert!(
        m.sub_box_mut(&bx([0, 0, 0], [1, 1, 1]))
            .as_mut_slice()
            .is_none()
    );
    let o = m.layout().offset(3, 2, 1, 1).unwrap();
    m.as_mut_slice().unwrap()[o] = -1.0;
    assert_eq!(m[(3, 2, 1, 1)], -1.0);
    assert_eq!(m.as_slice().unwrap().len(), 96);
    m.component_mut(0).as_mut_slice().unwrap().fill(0.5);
    assert_eq!(data[..48], [0.5; 48]);
    assert_eq!(data[48 + 47], -1.0);
}

#[test]
fn cell_data_and_rows() {
    let b = bx([0, 0, 0], [2, 1, 1]);
    let mut data = filled(b, 3);
    let a = Array4::new(&data, b, 3);
    let c = a.cell_data(1, 1, 0);
    assert_eq!(c.len(), 3);
    assert!(!c.is_empty());
    assert_eq!(
        (c[0], c[1], c[2]),
        (val(1, 1, 0, 0), val(1, 1, 0, 1), val(1, 1, 0, 2))
    );
    assert_eq!(c.get(3), None);
    assert_eq!(
        a.row(1, 1, 2),
        &[val(0, 1, 1, 2), val(1, 1, 1, 2), val(2, 1, 1, 2)]
    );
    let mut m = Array4Mut::new(&mut data, b, 3);
    let mut cm = m.cell_data_mut(2, 0, 1);
    cm[1] = -1.0;
    *cm.get_mut(2).unwrap() = -2.0;
    assert_eq!(cm.get(0), Some(&val(2, 0, 1, 0)));
    assert_eq!(m.cell_data(2, 0, 1)[1], -1.0);
    m.row_mut(0, 0, 0).fill(7.0);
    assert_eq!(m.row(0, 0, 0), &[7.0; 3]);
    assert_eq!(m[(2, 0, 1, 2)], -2.0);
}

#[test]
#[should_panic(expected = "CellData: component 3 is out of bounds (ncomp 3)")]
fn cell_data_component_checked() {
    let data = vec![0.0; 3];
    let a = Array4::new(&data, bx([0; 3], [0; 3]), 3);
    let _ = a.cell_data(0, 0, 0)[3];
}

#[test]
#[should_panic(expected = "out of bounds")]
fn row_out_of_bounds_panics() {
    let data = vec![0.0; 8];
    let a = Array4::new(&data, bx([0; 3], [1; 3]), 1);
    let _ = a.row(2, 0, 0);
}

#[test]
fn mutable_views_write_through() {
    let b = bx([-1, -1, -1], [1, 1, 1]);
    let mut data = vec![0.0; 27 * 2];
    {
        let mut a = Array4Mut::new(&mut data, b, 2);
        a[(-1, -1, -1, 0)] = 1.0;
        a[(1, 1, 1)] += 2.0;
        a[IntVect::new(0, 0, 0)] = 3.0;
        a[(IntVect::new(0, 0, 0), 1)] = 4.0;
        *a.get_mut(1, 0, 0, 1).unwrap() = 5.0;
        assert!(a.get_mut(2, 0, 0, 0).is_none());
        // SAFETY: in bounds.
        unsafe { *a.get_unchecked_mut(-1, 1, 0, 1) = 6.0 };
        // SAFETY: in bounds.
        assert_eq!(unsafe { *a.get_unchecked(-1, 1, 0, 1) }, 6.0);
        assert_eq!(a.get(1, 0, 0, 1), Some(&5.0));
        {
            let mut r = a.reborrow();
            r[(0, 1, 0, 0)] = 8.0;
        }
        let c = a.as_const();
        assert_eq!(c[(0, 1, 0, 0)], 8.0);
        let mut comp1 = a.component_mut(1);
        comp1[(1, 1, 1)] = 9.0;
        let mut sub = a.sub_box_mut(&bx([0, 0, 0], [1, 1, 1]));
        sub[(1, 1, 1, 0)] = 10.0;
        assert!(a.try_sub_box_mut(&b.grow(1)).is_none());
        let shared: Array4<'_, f64> = a.into();
        assert_eq!(shared[(1, 1, 1, 1)], 9.0);
    }
    assert_eq!(data[0], 1.0);
    assert_eq!(data[26], 10.0);
    assert_eq!(data[13], 3.0);
    assert_eq!(data[27 + 13], 4.0);
    assert_eq!(data[27 + 14], 5.0);
    assert_eq!(data[27 + 6 + 9], 6.0);
    assert_eq!(data[27 + 26], 9.0);
}

#[test]
fn raw_parts_with_padded_strides() {
    // A 3×2×2 box stored with jstride 4 (one pad element per row), kstride 10, nstride 20.
    let mut data: Vec<i32> = (0..40).collect();
    let p = data.as_mut_ptr();
    // SAFETY: the largest offset is 2 + 1*4 + 1*10 + 1*20 = 36 < 40; offsets are
    // distinct (jstride >= nx, kstride >= 2*jstride, nstride >= 2*kstride); `data` is
    // not used while `a` lives.
    let mut a = unsafe {
        Array4Mut::from_raw_parts(
            p,
            IntVect::new(1, 1, 1),
            IntVect::new(4, 3, 3),
            [4, 10, 20],
            2,
        )
    };
    assert_eq!(a[(1, 1, 1, 0)], 0);
    assert_eq!(a[(3, 2, 2, 1)], 36);
    assert_eq!(a.row(2, 1, 0), &[4, 5, 6]);
    a[(2, 2, 1, 0)] = -1;
    assert_eq!(data[5], -1);
}

#[test]
fn debug_and_traits() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Array4<'_, f64>>();
    send_sync::<Array4Mut<'_, f64>>();
    let data = vec![0u8; 8];
    let a = Array4::new(&data, bx([0; 3], [1; 3]), 1);
    let b = a; // Copy
    let s = format!("{b:?}");
    assert!(s.contains("jstride: 2") && s.contains("ncomp: 1"), "{s}");
    assert_eq!(a.as_ptr(), data.as_ptr());
}
