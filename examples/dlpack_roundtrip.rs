//! Round-trips data between Rust containers and `ndarray` through DLPack, zero-copy, and
//! prints what it checked.
use amrex::dlpack::{FromDlpack, ManagedTensor, ToDlpack};
use ndarray::{Array3, ArrayView3, Ix3, s};

fn main() -> Result<(), Box<dyn core::error::Error>> {
    // A Vec moves into a DLPack tensor; the pointer is unchanged.
    let v: Vec<f64> = (0..8).map(f64::from).collect();
    let ptr = v.as_ptr();
    let t = v.to_dlpack()?;
    assert_eq!(t.view().data_ptr().cast_const().cast::<f64>(), ptr);
    println!(
        "Vec<f64> -> DLPack: shape {:?}, same pointer: yes",
        t.shape()
    );

    // Through the C ABI and back, as a consumer in another language would see it.
    let raw = t.into_raw();
    // SAFETY: `raw` came from `into_raw` above and is adopted exactly once.
    let t = unsafe { ManagedTensor::from_raw(raw) }?;
    let back = Vec::<f64>::from_dlpack(t)?;
    assert_eq!(back, (0..8).map(f64::from).collect::<Vec<_>>());
    println!("DLPack -> Vec<f64> (copy): {back:?}");

    // An ndarray view with a reversed, strided axis exports with negative strides ...
    let a = Array3::from_shape_fn((2, 3, 4), |(k, j, i)| (100 * k + 10 * j + i) as f64);
    let view = a.slice(s![.., ..;-1, ..;2]);
    let t = view.to_dlpack()?;
    let strides: Vec<i64> = t.view().strides().collect();
    println!(
        "ndarray view -> DLPack: shape {:?}, strides {strides:?}, read-only: {}",
        t.shape(),
        t.is_read_only()
    );
    // ... and imports back as an ndarray view over the same memory.
    let back: ArrayView3<'_, f64> = t.as_ndarray::<f64, Ix3>()?;
    assert_eq!(back, view);
    assert_eq!(back.as_ptr(), view.as_ptr());
    println!("DLPack -> ndarray view: equal, same pointer: yes");

    // A mutable export writes through.
    let mut b = Array3::<f64>::zeros((2, 2, 2));
    {
        let mut t = b.view_mut().to_dlpack()?;
        t.as_ndarray_mut::<f64, Ix3>()?[[1, 1, 1]] = 42.0;
    }
    assert_eq!(b[[1, 1, 1]], 42.0);
    println!(
        "write through a mutable DLPack export: b[1,1,1] = {}",
        b[[1, 1, 1]]
    );
    println!("all round trips checked");
    Ok(())
}
