//! Unit tests for every matrix operation, in both orders and with START 0 and 1.

use amrex_smallmatrix::{ColumnMajor, RowMajor, SmallMatrix, SmallRowVector, SmallVector};
use num_traits::{One, Zero};

type Cm23 = SmallMatrix<i64, 2, 3, ColumnMajor, 0>;
type Rm23 = SmallMatrix<i64, 2, 3, RowMajor, 0>;
type Cm23F = SmallMatrix<i64, 2, 3, ColumnMajor, 1>;
type Rm23F = SmallMatrix<i64, 2, 3, RowMajor, 1>;

const ROWS: [[i64; 3]; 2] = [[1, 2, 3], [4, 5, 6]];

#[test]
fn storage_order_matches_amrex() {
    // (i, j) at i + j*R (column-major) or j + i*C (row-major).
    assert_eq!(Cm23::from_rows(ROWS).as_slice(), &[1, 4, 2, 5, 3, 6]);
    assert_eq!(Rm23::from_rows(ROWS).as_slice(), &[1, 2, 3, 4, 5, 6]);
    assert_eq!(Cm23F::from_rows(ROWS).as_slice(), &[1, 4, 2, 5, 3, 6]);
    assert_eq!(Rm23F::from_rows(ROWS).as_slice(), &[1, 2, 3, 4, 5, 6]);
    let m = Cm23::from_rows(ROWS);
    assert_eq!(m.as_ptr(), m.as_slice().as_ptr());
    assert_eq!(core::mem::size_of::<Cm23>(), 6 * 8);
    assert_eq!(core::mem::align_of::<Cm23>(), core::mem::align_of::<i64>());
}

#[test]
fn constructors_agree() {
    let cols = [[1, 4], [2, 5], [3, 6]];
    assert_eq!(Cm23::from_cols(cols), Cm23::from_rows(ROWS));
    assert_eq!(Rm23::from_cols(cols), Rm23::from_rows(ROWS));
    assert_eq!(Rm23F::from_cols(cols), Rm23F::from_rows(ROWS));
    let f = Rm23F::from_fn(|i, j| ROWS[i - 1][j - 1]);
    assert_eq!(f, Rm23F::from_rows(ROWS));
    let f0 = Cm23::from_fn(|i, j| ROWS[i][j]);
    assert_eq!(f0, Cm23::from_rows(ROWS));
    assert_eq!(
        Cm23::from_slice(&[1, 4, 2, 5, 3, 6]),
        Some(Cm23::from_rows(ROWS))
    );
    assert_eq!(Cm23::from_slice(&[1, 2, 3]), None);
    assert_eq!(Cm23::splat(7).as_slice(), &[7; 6]);
    assert_eq!(Cm23::default(), Cm23::zero());
}

#[test]
fn from_fn_visits_storage_order() {
    let mut seen = Vec::new();
    let _ = SmallMatrix::<u8, 2, 2, RowMajor, 1>::from_fn(|i, j| {
        seen.push((i, j));
        0
    });
    assert_eq!(seen, [(1, 1), (1, 2), (2, 1), (2, 2)]);
    seen.clear();
    let _ = SmallMatrix::<u8, 2, 2, ColumnMajor, 0>::from_fn(|i, j| {
        seen.push((i, j));
        0
    });
    assert_eq!(seen, [(0, 0), (1, 0), (0, 1), (1, 1)]);
}

#[test]
fn zero_identity() {
    let z = SmallMatrix::<f64, 3, 2>::zero();
    assert!(z.iter().all(|&x| x == 0.0));
    assert!(z.is_zero());
    let id = SmallMatrix::<f64, 3, 3, RowMajor, 1>::identity();
    for i in 1..=3 {
        for j in 1..=3 {
            assert_eq!(id[(i, j)], if i == j { 1.0 } else { 0.0 });
        }
    }
    assert_eq!(id, SmallMatrix::one());
    assert_eq!(<SmallMatrix<f64, 3, 2> as Zero>::zero(), z);
}

#[test]
fn indexing_honours_start() {
    let mut m = Rm23F::from_rows(ROWS);
    assert_eq!(m[(1, 1)], 1);
    assert_eq!(m[(2, 3)], 6);
    m[(2, 1)] = 40;
    assert_eq!(m[(2, 1)], 40);
    assert_eq!(m.get(0, 1), None);
    assert_eq!(m.get(1, 0), None);
    assert_eq!(m.get(3, 1), None);
    assert_eq!(m.get(1, 4), None);
    assert_eq!(m.get(1, 3), Some(&3));
    *m.get_mut(1, 3).unwrap() = 30;
    assert_eq!(m[(1, 3)], 30);
    assert!(m.get_mut(0, 0).is_none());

    let z = Cm23::from_rows(ROWS);
    assert_eq!(z[(0, 0)], 1);
    assert_eq!(z[(1, 2)], 6);
    assert_eq!(z.get(2, 0), None);
    assert_eq!(z.get(0, 3), None);
    assert_eq!(Cm23::flat_index(1, 2), Some(5));
    assert_eq!(Rm23::flat_index(1, 2), Some(5));
    assert_eq!(Rm23::flat_index(1, 1), Some(4));
    assert_eq!(Cm23::flat_index(1, 1), Some(3));
    assert_eq!(Rm23F::flat_index(0, 1), None);
    assert_eq!(Cm23F::flat_index(usize::MAX, 1), None);
}

#[test]
#[should_panic(
    expected = "SmallMatrix index (0, 1) out of range for a 2x3 matrix with START 1: valid rows are 1..3, valid columns 1..4"
)]
fn index_zero_with_start_one_panics() {
    let m = Rm23F::from_rows(ROWS);
    let _ = m[(0, 1)];
}

#[test]
#[should_panic(
    expected = "SmallMatrix index (1, 3) out of range for a 2x3 matrix with START 0: valid rows are 0..2, valid columns 0..3"
)]
fn index_past_end_panics() {
    let mut m = Cm23::from_rows(ROWS);
    m[(1, 3)] = 0;
}

#[test]
fn vector_indexing() {
    let mut v = SmallVector::<f64, 4, 1>::from_fn(|i, _| i as f64 * 10.0);
    assert_eq!(v.shape(), (4, 1));
    assert_eq!(v[1], 10.0);
    assert_eq!(v[4], 40.0);
    v[2] = -1.0;
    assert_eq!(v[(2, 1)], -1.0);
    let r = SmallRowVector::<i32, 3>::from_fn(|_, j| j as i32);
    assert_eq!(r.shape(), (1, 3));
    assert_eq!((r[0], r[1], r[2]), (0, 1, 2));
    // Row-major vectors index the same way.
    let rv = SmallMatrix::<i32, 1, 3, RowMajor, 1>::from_rows([[7, 8, 9]]);
    assert_eq!((rv[1], rv[2], rv[3]), (7, 8, 9));
}

#[test]
#[should_panic(
    expected = "SmallMatrix vector index 0 out of range for length 4 with START 1: valid indices are 1..5"
)]
fn vector_index_zero_with_start_one_panics() {
    let v = SmallVector::<f64, 4, 1>::zero();
    let _ = v[0];
}

#[test]
fn transpose_and_in_place() {
    let m = Rm23F::from_rows(ROWS);
    let t = m.transpose();
    assert_eq!(t.shape(), (3, 2));
    for i in 1..=2 {
        for j in 1..=3 {
            assert_eq!(t[(j, i)], m[(i, j)]);
        }
    }
    assert_eq!(t.transpose(), m);

    let mut s =
        SmallMatrix::<i32, 3, 3, ColumnMajor, 1>::from_rows([[1, 2, 3], [4, 5, 6], [7, 8, 9]]);
    let expected = s.transpose();
    s.transpose_in_place();
    assert_eq!(s, expected);
    assert_eq!(s, SmallMatrix::from_rows([[1, 4, 7], [2, 5, 8], [3, 6, 9]]));
    let mut r = SmallMatrix::<i32, 3, 3, RowMajor>::from_rows([[1, 2, 3], [4, 5, 6], [7, 8, 9]]);
    r.transpose_in_place();
    assert_eq!(r.as_slice(), &[1, 4, 7, 2, 5, 8, 3, 6, 9]);
}

#[test]
fn reductions() {
    let m = Cm23F::from_rows(ROWS);
    assert_eq!(m.sum(), 21);
    assert_eq!(m.product(), 720);
    assert_eq!(m.dot(&m), 1 + 4 + 9 + 16 + 25 + 36);
    let sq =
        SmallMatrix::<f64, 3, 3, RowMajor>::from_rows([[1., 2., 3.], [4., 5., 6.], [7., 8., 10.]]);
    assert_eq!(sq.trace(), 16.0);
    assert_eq!(SmallMatrix::<f64, 0, 0>::zero().sum(), 0.0);
    assert_eq!(SmallMatrix::<f64, 0, 0>::zero().product(), 1.0);
    assert_eq!(SmallMatrix::<f64, 0, 0>::identity().trace(), 0.0);
}

#[test]
fn set_val_map_order_start() {
    let mut m = Rm23::from_rows(ROWS);
    m.set_val(9);
    assert!(m.iter().all(|&x| x == 9));
    let m = Rm23::from_rows(ROWS);
    let d = m.map(|x| x as f64 * 0.5);
    assert_eq!(d[(1, 2)], 3.0);
    let c: Cm23 = m.to_order::<ColumnMajor>();
    assert_eq!(c, Cm23::from_rows(ROWS));
    let f: Rm23F = m.with_start::<1>();
    assert_eq!(f[(1, 1)], m[(0, 0)]);
    assert_eq!(f.as_slice(), m.as_slice());
    let mut n = m;
    for x in &mut n {
        *x += 1;
    }
    assert_eq!((&n).into_iter().copied().sum::<i64>(), 27);
    assert_eq!(n.as_ref().len(), 6);
    n.as_mut()[0] = 0;
    n.as_mut_slice()[1] = 0;
    assert_eq!(&n.as_slice()[..2], &[0, 0]);
    assert_eq!(Rm23::ROWS, 2);
    assert_eq!(Rm23::COLS, 3);
    assert_eq!(Rm23::LEN, 6);
    assert_eq!(Rm23F::START_INDEX, 1);
}

#[test]
fn elementwise_arithmetic() {
    let a = Cm23F::from_rows(ROWS);
    let b = Cm23F::from_rows([[6, 5, 4], [3, 2, 1]]);
    assert_eq!(a + b, Cm23F::splat(7));
    assert_eq!(a - a, Cm23F::zero());
    assert_eq!(-a, Cm23F::from_rows([[-1, -2, -3], [-4, -5, -6]]));
    let mut c = a;
    c += b;
    assert_eq!(c, Cm23F::splat(7));
    c -= b;
    assert_eq!(c, a);
    assert_eq!(a * 2, Cm23F::from_rows([[2, 4, 6], [8, 10, 12]]));
    assert_eq!(2 * a, a * 2);
    let mut d = a;
    d *= 3;
    assert_eq!(d, a * 3);
}

#[test]
fn scalar_left_for_primitive_types() {
    let f = SmallMatrix::<f32, 2, 2>::identity();
    assert_eq!(2.5_f32 * f, f * 2.5);
    let g = SmallMatrix::<f64, 2, 2, RowMajor, 1>::identity();
    assert_eq!((0.5 * g)[(1, 1)], 0.5);
    assert_eq!((3_u8 * SmallMatrix::<u8, 1, 2>::splat(2))[0], 6);
    assert_eq!((3_usize * SmallMatrix::<usize, 1, 2>::splat(2))[1], 6);
    assert_eq!((-1_i128 * SmallMatrix::<i128, 2, 1>::splat(2))[1], -2);
}

#[test]
fn matrix_products() {
    // (2x3) * (3x2) = 2x2
    for_each_layout_product();
    let a = SmallMatrix::<i64, 2, 3, RowMajor, 1>::from_rows(ROWS);
    let b = SmallMatrix::<i64, 3, 2, RowMajor, 1>::from_rows([[7, 8], [9, 10], [11, 12]]);
    let c = a * b;
    assert_eq!(c, SmallMatrix::from_rows([[58, 64], [139, 154]]));
    // Matrix x vector.
    let x = SmallMatrix::<i64, 3, 1, RowMajor, 1>::from_rows([[1], [0], [-1]]);
    let y = a * x;
    assert_eq!((y[1], y[2]), (-2, -2));
    // Row vector x matrix.
    let r = SmallMatrix::<i64, 1, 2, RowMajor, 1>::from_rows([[1, 1]]);
    assert_eq!(r * a, SmallMatrix::from_rows([[5, 7, 9]]));
    // Outer product and inner product of vectors.
    let v = SmallVector::<i64, 2>::from_cols([[1, 2]]);
    let w = SmallRowVector::<i64, 2>::from_rows([[3, 4]]);
    assert_eq!(v * w, SmallMatrix::from_rows([[3, 4], [6, 8]]));
    assert_eq!((w * v)[0], 11);
    // Empty inner dimension gives zeros.
    let e = SmallMatrix::<i64, 2, 0>::zero() * SmallMatrix::<i64, 0, 2>::zero();
    assert_eq!(e, SmallMatrix::<i64, 2, 2>::zero());
    // Square *=
    let mut s = SmallMatrix::<i64, 2, 2>::from_rows([[1, 1], [0, 1]]);
    s *= s;
    assert_eq!(s, SmallMatrix::from_rows([[1, 2], [0, 1]]));
}

fn for_each_layout_product() {
    let a = SmallMatrix::<f64, 2, 3, ColumnMajor, 0>::from_rows([[1., 2., 3.], [4., 5., 6.]]);
    let b = SmallMatrix::<f64, 3, 2, ColumnMajor, 0>::from_rows([[7., 8.], [9., 10.], [11., 12.]]);
    assert_eq!(a * b, SmallMatrix::from_rows([[58., 64.], [139., 154.]]));
}

#[test]
fn debug_prints_rows() {
    let m = SmallMatrix::<i32, 2, 2, ColumnMajor, 1>::from_rows([[1, 2], [3, 4]]);
    assert_eq!(
        format!("{m:?}"),
        "SmallMatrix<2x2, ColumnMajor, START 1> [[1, 2], [3, 4]]"
    );
    let r = SmallMatrix::<i32, 1, 2, RowMajor>::from_rows([[5, 6]]);
    assert_eq!(
        format!("{r:?}"),
        "SmallMatrix<1x2, RowMajor, START 0> [[5, 6]]"
    );
}

#[test]
fn hash_and_eq_follow_elements() {
    use core::hash::{BuildHasher, BuildHasherDefault};
    use std::collections::hash_map::DefaultHasher;
    let a = Rm23::from_rows(ROWS);
    let b = Rm23::from_rows(ROWS);
    let h = BuildHasherDefault::<DefaultHasher>::default();
    assert_eq!(h.hash_one(a), h.hash_one(b));
    let mut c = b;
    c[(0, 0)] = 0;
    assert_ne!(a, c);
}

#[test]
fn non_copy_elements_work_for_structural_ops() {
    #[derive(Clone, Debug, PartialEq)]
    struct S(String);
    let m = SmallMatrix::<S, 1, 2, RowMajor>::from_rows([[S("a".into()), S("b".into())]]);
    let t = m.transpose();
    assert_eq!(t[(1, 0)], S("b".into()));
    let n = m.clone().map(|s| s.0.len());
    assert_eq!(n.sum(), 2);
}
