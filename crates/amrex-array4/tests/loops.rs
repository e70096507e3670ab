//! Loop helpers, tiles and splitting.
#![warn(clippy::cast_possible_truncation)]

use amrex_array4::{Array4, Array4Mut, IndexBox, IntVect, Stencil, for_each_cell, for_each_cell_n};

fn bx(lo: [i32; 3], hi: [i32; 3]) -> IndexBox {
    IndexBox::new(lo.into(), hi.into())
}

#[test]
fn for_each_cell_visits_in_fortran_order() {
    let b = bx([-1, 0, 2], [1, 1, 3]);
    let mut seen = Vec::new();
    for_each_cell(b, |i, j, k| seen.push(IntVect::new(i, j, k)));
    assert_eq!(seen, b.iter().collect::<Vec<_>>());
    let mut seen_n = Vec::new();
    for_each_cell_n(b, 2, |i, j, k, n| seen_n.push((IntVect::new(i, j, k), n)));
    assert_eq!(seen_n.len(), 24);
    assert_eq!(seen_n[11], (b.big_end(), 0));
    assert_eq!(seen_n[12], (b.small_end(), 1));
    let mut count = 0;
    for_each_cell(bx([0; 3], [-1; 3]), |_, _, _| count += 1);
    assert_eq!(count, 0);
    // Extreme indices do not overflow.
    let edge = bx([i32::MAX - 1, i32::MIN, 0], [i32::MAX, i32::MIN, 0]);
    let mut xs = Vec::new();
    for_each_cell(edge, |i, _, _| xs.push(i));
    assert_eq!(xs, [i32::MAX - 1, i32::MAX]);
}

#[test]
fn for_each_and_fill() {
    let b = bx([0, 0, 0], [3, 2, 1]);
    let mut data = vec![0; 24 * 2];
    let mut a = Array4Mut::new(&mut data, b, 2);
    a.for_each_mut(b, |i, j, k, n, v| {
        *v = i + 10 * j + 100 * k + 1000 * i32::try_from(n).unwrap()
    });
    let inner = bx([1, 1, 0], [2, 1, 1]);
    a.fill(inner, -1);
    a.fill(bx([0; 3], [-1; 3]), 99); // empty: nothing
    let c = a.as_const();
    let mut visited = 0;
    c.for_each(b, |i, j, k, n, v| {
        visited += 1;
        let want = if inner.contains(IntVect::new(i, j, k)) {
            -1
        } else {
            i + 10 * j + 100 * k + 1000 * i32::try_from(n).unwrap()
        };
        assert_eq!(*v, want);
    });
    assert_eq!(visited, 48);
    c.for_each(bx([0; 3], [-1; 3]), |_, _, _, _, _| {
        panic!("empty box visited")
    });
}

#[test]
#[should_panic(expected = "not inside the view's bounds")]
fn for_each_outside_panics() {
    let mut data = vec![0; 8];
    let mut a = Array4Mut::new(&mut data, bx([0; 3], [1; 3]), 1);
    a.for_each_mut(bx([0; 3], [2; 3]), |_, _, _, _, _| {});
}

#[test]
fn zip_saxpy() {
    let b = bx([0, 0, 0], [4, 3, 2]);
    let x: Vec<f64> = (0..60).map(f64::from).collect();
    let mut y = vec![1.0; 60];
    let xa = Array4::new(&x, b, 1);
    let mut ya = Array4Mut::new(&mut y, b, 1);
    ya.zip_mut_with(xa, b, |y, x| *y += 2.0 * x);
    for (n, v) in y.iter().enumerate() {
        assert_eq!(*v, 1.0 + 2.0 * n as f64);
    }
}

#[test]
fn zip_over_sub_box_with_different_layouts() {
    // Destination covers the valid box; source has 2 ghost cells and 2 components.
    let valid = bx([0, 0, 0], [3, 3, 3]);
    let g = valid.grow(2);
    let src: Vec<i64> = (0..g.num_pts() as i64 * 2).collect();
    let mut dst = vec![0_i64; 64];
    let s = Array4::new(&src, g, 2).component(1);
    let mut d = Array4Mut::new(&mut dst, valid, 1);
    let part = bx([1, 1, 1], [2, 3, 2]);
    d.zip_mut_with(s, part, |d, s| *d = *s);
    for p in valid.iter() {
        let want = if part.contains(p) { s[p] } else { 0 };
        assert_eq!(d[p], want);
    }
}

#[test]
#[should_panic(expected = "the source has 1 components, the destination 2")]
fn zip_needs_components() {
    let b = bx([0; 3], [1; 3]);
    let x = vec![0.0; 8];
    let mut y = vec![0.0; 16];
    Array4Mut::new(&mut y, b, 2).zip_mut_with(Array4::new(&x, b, 1), b, |_, _| {});
}

fn laplacian_reference(phi: Array4<'_, f64>, valid: IndexBox) -> Vec<f64> {
    valid
        .iter()
        .map(|p| {
            let (i, j, k) = (p[0], p[1], p[2]);
            phi[(i + 1, j, k)]
                + phi[(i - 1, j, k)]
                + phi[(i, j + 1, k)]
                + phi[(i, j - 1, k)]
                + phi[(i, j, k + 1)]
                + phi[(i, j, k - 1)]
                - 6.0 * phi[(i, j, k)]
        })
        .collect()
}

#[test]
fn stencil_laplacian_matches_indexing() {
    let valid = bx([-3, 1, 0], [4, 6, 5]);
    let g = valid.grow(1);
    let phi: Vec<f64> = g
        .iter()
        .map(|p| f64::from(p[0] * p[0] * p[1] - 3 * p[2] * p[1] + p[2] * p[2] * p[2]))
        .collect();
    let pa = Array4::new(&phi, g, 1);
    let mut out = vec![0.0; valid.checked_num_pts_usize().unwrap()];
    let mut oa = Array4Mut::new(&mut out, valid, 1);
    oa.stencil_mut_with(pa, valid, |o, s: Stencil<'_, f64, 1>| {
        *o = s.at(1, 0, 0)
            + s.at(-1, 0, 0)
            + s.at(0, 1, 0)
            + s.at(0, -1, 0)
            + s.at(0, 0, 1)
            + s.at(0, 0, -1)
            - 6.0 * s.center();
    });
    assert_eq!(out, laplacian_reference(pa, valid));
}

#[test]
fn stencil_multi_component_and_radius_two() {
    let valid = bx([0, 0, 0], [2, 2, 2]);
    let g = valid.grow(2);
    let src: Vec<f64> = (0..g.num_pts() * 2).map(|v| v as f64).collect();
    let sa = Array4::new(&src, g, 2);
    let mut out = vec![0.0; 27 * 2];
    let mut oa = Array4Mut::new(&mut out, valid, 2);
    oa.stencil_mut_with(sa, valid, |o, s: Stencil<'_, f64, 2>| *o = *s.at(-2, 2, -1));
    let oa = Array4::new(&out, valid, 2);
    for n in 0..2 {
        for p in valid.iter() {
            assert_eq!(oa[(p, n)], sa[(p + IntVect::new(-2, 2, -1), n)]);
        }
    }
}

#[test]
#[should_panic(expected = "exceeds the radius 1")]
fn stencil_radius_checked() {
    let valid = bx([0; 3], [1; 3]);
    let g = valid.grow(2);
    let src = vec![0.0; g.checked_num_pts_usize().unwrap()];
    let mut out = vec![0.0; 8];
    Array4Mut::new(&mut out, valid, 1).stencil_mut_with(
        Array4::new(&src, g, 1),
        valid,
        |o, s: Stencil<'_, f64, 1>| {
            *o = *s.at(2, 0, 0);
        },
    );
}

#[test]
#[should_panic(expected = "not inside the view's bounds")]
fn stencil_needs_halo() {
    let valid = bx([0; 3], [1; 3]);
    let src = vec![0.0; 8];
    let mut out = vec![0.0; 8];
    Array4Mut::new(&mut out, valid, 1).stencil_mut_with(
        Array4::new(&src, valid, 1),
        valid,
        |o, s: Stencil<'_, f64, 1>| {
            *o = *s.center();
        },
    );
}

/// `div(beta grad phi)` with face coefficients `0.5 (beta_c + beta_nb)`, written with
/// checked indexing: the reference for `stencil2_mut_with`.
fn div_beta_grad_reference(
    phi: Array4<'_, f64>,
    beta: Array4<'_, f64>,
    valid: IndexBox,
    ncomp: usize,
) -> Vec<f64> {
    let mut out = Vec::new();
    for n in 0..ncomp {
        let nb = if beta.ncomp() == 1 { 0 } else { n };
        for p in valid.iter() {
            let mut acc = 0.0;
            for d in 0..3 {
                let e = IntVect::new(i32::from(d == 0), i32::from(d == 1), i32::from(d == 2));
                let bp = 0.5 * (beta[(p, nb)] + beta[(p + e, nb)]);
                let bm = 0.5 * (beta[(p, nb)] + beta[(p - e, nb)]);
                acc = acc + bp * (phi[(p + e, n)] - phi[(p, n)])
                    - bm * (phi[(p, n)] - phi[(p - e, n)]);
            }
            out.push(acc);
        }
    }
    out
}

fn div_beta_grad_helper(
    phi: Array4<'_, f64>,
    beta: Array4<'_, f64>,
    out: &mut Array4Mut<'_, f64>,
    valid: IndexBox,
) {
    out.stencil2_mut_with(
        phi,
        beta,
        valid,
        |o, s: Stencil<'_, f64, 1>, b: Stencil<'_, f64, 1>| {
            let c = *b.center();
            let mut acc = 0.0;
            for (di, dj, dk) in [(1, 0, 0), (0, 1, 0), (0, 0, 1)] {
                let bp = 0.5 * (c + b.at(di, dj, dk));
                let bm = 0.5 * (c + b.at(-di, -dj, -dk));
                acc = acc + bp * (s.at(di, dj, dk) - s.center())
                    - bm * (s.center() - s.at(-di, -dj, -dk));
            }
            *o = acc;
        },
    );
}

#[test]
fn stencil2_div_beta_grad_matches_indexing() {
    // Odd extents (the vector loop's remainder), a source larger than the halo and a
    // coefficient with more ghost cells than needed: different strides for each view.
    let valid = bx([-3, 1, 2], [9, 6, 5]);
    let gp = valid.grow(1).grow_hi(0, 3);
    let gb = valid.grow(2);
    let phi: Vec<f64> = (0..2)
        .flat_map(|n| {
            gp.iter().map(move |p| {
                f64::from(p[0] * p[0] * p[1] - 3 * p[2] * p[1] + p[2] * p[2] * p[2]) * 0.25
                    + f64::from(n * p[0])
            })
        })
        .collect();
    let beta1: Vec<f64> = gb
        .iter()
        .map(|p| 1.0 + 0.1 * f64::from(p[0] + 2 * p[1] * p[1] - p[2]))
        .collect();
    let beta2: Vec<f64> = (0..2)
        .flat_map(|n| beta1.iter().map(move |b| b + f64::from(n)))
        .collect();
    let pa = Array4::new(&phi, gp, 2);
    for (beta, nb) in [(&beta1, 1), (&beta2, 2)] {
        let ba = Array4::new(beta, gb, nb);
        let mut out = vec![0.0; valid.checked_num_pts_usize().unwrap() * 2];
        div_beta_grad_helper(pa, ba, &mut Array4Mut::new(&mut out, valid, 2), valid);
        assert_eq!(
            out,
            div_beta_grad_reference(pa, ba, valid, 2),
            "beta with {nb} components"
        );
    }
}

#[test]
fn stencil2_on_a_sub_box_writes_only_it() {
    let whole = bx([0, 0, 0], [10, 4, 3]);
    let part = bx([2, 1, 1], [8, 3, 2]);
    let g = whole.grow(1);
    let phi: Vec<f64> = g
        .iter()
        .map(|p| f64::from(p[0] * 3 + p[1] - p[2]))
        .collect();
    let beta = vec![2.0; g.checked_num_pts_usize().unwrap()];
    let (pa, ba) = (Array4::new(&phi, g, 1), Array4::new(&beta, g, 1));
    let mut out = vec![-1.0; whole.checked_num_pts_usize().unwrap()];
    let mut oa = Array4Mut::new(&mut out, whole, 1);
    div_beta_grad_helper(pa, ba, &mut oa, part);
    let want = div_beta_grad_reference(pa, ba, part, 1);
    let oa = oa.as_const();
    for (p, w) in part.iter().zip(&want) {
        assert_eq!(oa[(p, 0)], *w);
    }
    for p in whole.iter().filter(|p| !part.contains(*p)) {
        assert_eq!(oa[(p, 0)], -1.0);
    }
}

#[test]
#[should_panic(expected = "the coefficient has 2 components, the destination 3")]
fn stencil2_coefficient_components_checked() {
    let valid = bx([0; 3], [1; 3]);
    let g = valid.grow(1);
    let src = vec![0.0; g.checked_num_pts_usize().unwrap() * 3];
    let coef = vec![0.0; g.checked_num_pts_usize().unwrap() * 2];
    let mut out = vec![0.0; 8 * 3];
    Array4Mut::new(&mut out, valid, 3).stencil2_mut_with(
        Array4::new(&src, g, 3),
        Array4::new(&coef, g, 2),
        valid,
        |o, s: Stencil<'_, f64, 1>, c: Stencil<'_, f64, 0>| *o = s.center() * c.center(),
    );
}

#[test]
#[should_panic(expected = "not inside the view's bounds")]
fn stencil2_needs_coefficient_halo() {
    let valid = bx([0; 3], [1; 3]);
    let g = valid.grow(1);
    let src = vec![0.0; g.checked_num_pts_usize().unwrap()];
    let coef = vec![0.0; 8];
    let mut out = vec![0.0; 8];
    Array4Mut::new(&mut out, valid, 1).stencil2_mut_with(
        Array4::new(&src, g, 1),
        Array4::new(&coef, valid, 1),
        valid,
        |o, s: Stencil<'_, f64, 1>, c: Stencil<'_, f64, 1>| *o = s.center() * c.at(1, 0, 0),
    );
}

#[test]
fn stencil_long_rows_and_many_planes() {
    // Rows longer than the prefetch distance and more rows than it covers, radius 2,
    // three components: every cell against checked indexing. Under Miri (where the
    // prefetches are no-ops and only the pointer arithmetic is checked) shorter rows
    // walk the same code: the full size takes over seven minutes there.
    let hi_x = if cfg!(miri) { 60 } else { 700 };
    let valid = bx([-5, -2, 0], [hi_x, 3, 4]);
    let g = valid.grow(2);
    let src: Vec<f64> = (0..g.num_pts() * 3)
        .map(|v| (v % 977) as f64 * 0.5)
        .collect();
    let sa = Array4::new(&src, g, 3);
    let mut out = vec![0.0; valid.checked_num_pts_usize().unwrap() * 3];
    let mut oa = Array4Mut::new(&mut out, valid, 3);
    oa.stencil_mut_with(sa, valid, |o, s: Stencil<'_, f64, 2>| {
        *o = s.at(-2, 0, 0) - s.at(2, 1, 0) + s.at(0, -2, 2) * s.at(1, 0, -2);
    });
    let oa = oa.as_const();
    for n in 0..3 {
        for p in valid.iter() {
            let at = |d: [i32; 3]| sa[(p + IntVect::from(d), n)];
            let want = at([-2, 0, 0]) - at([2, 1, 0]) + at([0, -2, 2]) * at([1, 0, -2]);
            assert_eq!(oa[(p, n)], want);
        }
    }
}

#[test]
fn split_at_gives_disjoint_views() {
    let b = bx([0, 0, 0], [5, 3, 1]);
    let mut data = vec![0; 48];
    let a = Array4Mut::new(&mut data, b, 1);
    let (mut lo, mut hi) = a.split_at(1, 2);
    assert_eq!(lo.index_box(), bx([0, 0, 0], [5, 1, 1]));
    assert_eq!(hi.index_box(), bx([0, 2, 0], [5, 3, 1]));
    let (lb, hb) = (lo.index_box(), hi.index_box());
    lo.fill(lb, 1);
    hi.fill(hb, 2);
    let (empty, all) = hi.split_at(2, -10);
    assert!(empty.is_empty());
    assert_eq!(all.index_box(), hb);
    for p in b.iter() {
        assert_eq!(data[b.index(p)], if p[1] < 2 { 1 } else { 2 });
    }
}

#[test]
fn tiles_cover_once_and_run_on_threads() {
    let b = bx([-4, 0, 0], [11, 9, 3]);
    let mut data = vec![0_u32; b.checked_num_pts_usize().unwrap() * 2];
    let a = Array4Mut::new(&mut data, b, 2);
    let tiles: Vec<_> = a.into_tiles(IntVect::new(8, 4, 2)).collect();
    assert_eq!(tiles.len(), 2 * 3 * 2);
    std::thread::scope(|s| {
        for (t, mut tile) in tiles.into_iter().enumerate() {
            s.spawn(move || {
                let tb = tile.index_box();
                tile.for_each_mut(tb, |_, _, _, _, v| *v += u32::try_from(t).unwrap() + 1);
            });
        }
    });
    let a = Array4::new(&data, b, 2);
    let tb: Vec<_> = b.tiles(IntVect::new(8, 4, 2)).collect();
    for n in 0..2 {
        for p in b.iter() {
            let t = tb.iter().position(|t| t.contains(p)).unwrap();
            assert_eq!(a[(p, n)], u32::try_from(t).unwrap() + 1);
        }
    }
    let mut d2 = vec![0_u8; 8];
    let a2 = Array4Mut::new(&mut d2, bx([0; 3], [1; 3]), 1);
    let mut it = a2.into_tiles(IntVect::UNIT);
    assert_eq!(it.len(), 8);
    assert_eq!(it.next_back().unwrap().begin(), IntVect::UNIT);
    assert!(format!("{it:?}").contains("remaining: 7"));
}
