//! Property tests for matrix algebra: `(AB)ᵀ = BᵀAᵀ`, the identity, the trace of the
//! transpose, and order/START independence. Integer entries keep the checks exact.

use amrex_smallmatrix::{ColumnMajor, Order, RowMajor, SmallMatrix};
use proptest::prelude::*;

/// Fewer cases under Miri, and no failure files (Miri isolates the file system).
fn config() -> ProptestConfig {
    if cfg!(miri) {
        ProptestConfig {
            cases: 4,
            failure_persistence: None,
            ..ProptestConfig::default()
        }
    } else {
        ProptestConfig::with_cases(256)
    }
}

fn matrix<const R: usize, const C: usize, O: Order, const S: usize>()
-> impl Strategy<Value = SmallMatrix<i64, R, C, O, S>> {
    prop::collection::vec(-1000_i64..1000, R * C)
        .prop_map(|v| SmallMatrix::from_slice(&v).expect("strategy yields R*C elements"))
}

macro_rules! algebra_props {
    ($modname:ident, $order:ty, $start:literal) => {
        mod $modname {
            use super::*;
            type O = $order;
            const S: usize = $start;

            proptest! {
                #![proptest_config(config())]

                #[test]
                fn transpose_of_product(
                    a in matrix::<3, 4, O, S>(),
                    b in matrix::<4, 2, O, S>(),
                ) {
                    prop_assert_eq!((a * b).transpose(), b.transpose() * a.transpose());
                }

                #[test]
                fn identity_is_neutral(a in matrix::<3, 5, O, S>()) {
                    let i3 = SmallMatrix::<i64, 3, 3, O, S>::identity();
                    let i5 = SmallMatrix::<i64, 5, 5, O, S>::identity();
                    prop_assert_eq!(i3 * a, a);
                    prop_assert_eq!(a * i5, a);
                }

                #[test]
                fn trace_of_transpose(a in matrix::<4, 4, O, S>()) {
                    prop_assert_eq!(a.transpose().trace(), a.trace());
                    let mut t = a;
                    t.transpose_in_place();
                    prop_assert_eq!(t, a.transpose());
                    prop_assert_eq!(t.trace(), a.trace());
                }

                #[test]
                fn trace_of_product_commutes(
                    a in matrix::<3, 4, O, S>(),
                    b in matrix::<4, 3, O, S>(),
                ) {
                    prop_assert_eq!((a * b).trace(), (b * a).trace());
                }

                #[test]
                fn product_is_associative_and_distributes(
                    a in matrix::<2, 3, O, S>(),
                    b in matrix::<3, 3, O, S>(),
                    c in matrix::<3, 2, O, S>(),
                    d in matrix::<3, 3, O, S>(),
                ) {
                    prop_assert_eq!((a * b) * c, a * (b * c));
                    prop_assert_eq!(a * (b + d), a * b + a * d);
                    prop_assert_eq!(a * (b - d), a * b - a * d);
                }

                #[test]
                fn dot_is_trace_of_transpose_product(
                    a in matrix::<3, 2, O, S>(),
                    b in matrix::<3, 2, O, S>(),
                ) {
                    prop_assert_eq!(a.dot(&b), (a.transpose() * b).trace());
                }

                #[test]
                fn rows_cols_and_indexing_agree(a in matrix::<3, 4, O, S>()) {
                    let rows: [[i64; 4]; 3] =
                        core::array::from_fn(|i| core::array::from_fn(|j| a[(i + S, j + S)]));
                    let cols: [[i64; 3]; 4] =
                        core::array::from_fn(|j| core::array::from_fn(|i| a[(i + S, j + S)]));
                    prop_assert_eq!(SmallMatrix::<i64, 3, 4, O, S>::from_rows(rows), a);
                    prop_assert_eq!(SmallMatrix::<i64, 3, 4, O, S>::from_cols(cols), a);
                    for i in 0..3 {
                        for j in 0..4 {
                            let k = O::offset(i, j, 3, 4);
                            prop_assert_eq!(a.as_slice()[k], a[(i + S, j + S)]);
                        }
                    }
                }
            }
        }
    };
}

algebra_props!(col_major_start0, ColumnMajor, 0);
algebra_props!(col_major_start1, ColumnMajor, 1);
algebra_props!(row_major_start0, RowMajor, 0);
algebra_props!(row_major_start1, RowMajor, 1);

proptest! {
    #![proptest_config(config())]

    /// Converting the order keeps the matrix and its products.
    #[test]
    fn order_conversion_commutes_with_product(
        a in matrix::<3, 4, ColumnMajor, 0>(),
        b in matrix::<4, 2, ColumnMajor, 0>(),
    ) {
        let ar = a.to_order::<RowMajor>();
        let br = b.to_order::<RowMajor>();
        prop_assert_eq!((ar * br).to_order::<ColumnMajor>(), a * b);
        prop_assert_eq!(ar.to_order::<ColumnMajor>(), a);
    }
}
