//! Global-index region reads and writes.
#![warn(clippy::cast_possible_truncation)]

use amrex_box::{IndexBox, IntVect};
use amrex_multifab::{BoxArray, DistributionMapping, Ghosts, MultiFab};

#[test]
fn region_round_trip_across_boxes_and_ghosts() {
    // Every cell goes through a closure: smaller under Miri.
    let (hi, region_hi) = if cfg!(miri) {
        (IntVect::new(7, 5, 3), IntVect::new(5, 6, 2))
    } else {
        (IntVect::new(11, 9, 5), IntVect::new(6, 10, 3))
    };
    let domain = IndexBox::new(IntVect::ZERO, hi);
    let ba = BoxArray::from_domain(domain, 4);
    let mut mf = MultiFab::new(&ba, &DistributionMapping::single(&ba), 2, IntVect::splat(1));
    // A region that crosses box boundaries and reaches into the ghost cells.
    let region = IndexBox::new(IntVect::new(-1, 2, 1), region_hi);
    let data: Vec<f64> = (0..region.checked_num_pts_usize().unwrap() * 2)
        .map(|x| x as f64)
        .collect();
    mf.write_region(&data, Ghosts::Include, 0..2, region)
        .unwrap();
    let back = mf.read_region(0..2, region).unwrap();
    assert_eq!(back, data);
    // Valid cells only: ghost cells outside the domain keep zero.
    mf.fill(0.0).unwrap();
    mf.write_region(
        &data[..region.checked_num_pts_usize().unwrap()],
        Ghosts::Exclude,
        1..2,
        region,
    )
    .unwrap();
    let back = mf.read_region(1..2, region).unwrap();
    for (n, p) in region.iter().enumerate() {
        let want = if domain.contains(p) { data[n] } else { 0.0 };
        assert_eq!(back[n], want, "{p}");
    }
}

#[cfg(feature = "ndarray")]
#[test]
fn ndarray_region_is_indexed_i_j_k_n() {
    let domain = IndexBox::new(IntVect::ZERO, IntVect::new(7, 7, 7));
    let ba = BoxArray::from_domain(domain, 4);
    let mut mf = MultiFab::new(&ba, &DistributionMapping::single(&ba), 1, IntVect::ZERO);
    for mfi in mf.mfiter(amrex_multifab::Tiling::None) {
        let vbx = mfi.validbox();
        mf.array_mut(&mfi)
            .for_each_mut(vbx, |i, j, k, _, v| *v = f64::from(i + 10 * j + 100 * k));
    }
    let region = IndexBox::new(IntVect::new(2, 3, 1), IntVect::new(5, 6, 6));
    let a = mf.read_region_ndarray(0..1, region).unwrap();
    assert_eq!(a[[1, 2, 3, 0]], f64::from(3 + 10 * 5 + 100 * 4));
    let mut b = a.clone();
    b.mapv_inplace(|x| -x);
    mf.write_region_ndarray(b.view(), Ghosts::Exclude, 0, region)
        .unwrap();
    assert_eq!(mf.read_region_ndarray(0..1, region).unwrap(), b);
    // Extents other than the region's, and any for an inverted region (a negative
    // length), are refused.
    let inverted = IndexBox::new(IntVect::new(5, 3, 1), IntVect::new(2, 6, 6));
    for (r, dims) in [(region, (4, 4, 5, 1)), (inverted, (0, 4, 6, 1))] {
        let c = ndarray::Array4::<f64>::zeros(dims);
        let e = mf
            .write_region_ndarray(c.view(), Ghosts::Exclude, 0, r)
            .unwrap_err();
        assert!(
            matches!(e, amrex_multifab::FabArrayError::WrongLength { .. }),
            "{e}"
        );
    }
    assert_eq!(mf.read_region_ndarray(0..1, region).unwrap(), b);
}
