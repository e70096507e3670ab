//! The DLPack import conformance table: one list of layouts fed to every importer, and
//! the verdict each must give. The box containers (`Array4`, `Array4Mut`, `BaseFab`, a
//! `FabArray` per box) share one importer (`FabLayout::from_dlpack`), so on the same
//! tensor they give the same verdict and the same error kind, except where their
//! contracts differ on purpose, which the table names: a shared `Array4` (and a
//! `READ_ONLY` `BaseFab`) may overlap; `BaseFab` accepts any device (host operations are
//! refused later); a `FabArray` adopts only writable host tensors. The rank-1 and rank-2
//! containers (`Vec`, `PodVector`, `DlpackVector`, `SmallMatrix`) and the core's typed
//! views see the same refusals for what they share: dtype, alignment, `READ_ONLY`.

use amrex::array4::{Array4, Array4Mut};
use amrex::basefab::BaseFab;
use amrex::boxes::{IndexBox, IntVect};
use amrex::dlpack::{Device, DlpackError, ErrorKind, FromDlpack, ManagedTensor, TensorSpec, flags};
use amrex::multifab::{BoxArray, DistributionMapping, MultiFab};
use amrex::podvector::{DlpackVector, PodVector};
use amrex::smallmatrix::SmallMatrix;

/// A producer's tensor over a fresh buffer of `len` f64 (or i32 when `int`): data at
/// element `first` plus `shift` bytes, with the given shape, strides, device and flags.
struct Case {
    name: &'static str,
    shape: &'static [i64],
    strides: &'static [i64],
    first: usize,
    shift: usize,
    device: Device,
    fl: u64,
    int: bool,
}

const fn case(name: &'static str, shape: &'static [i64], strides: &'static [i64]) -> Case {
    Case {
        name,
        shape,
        strides,
        first: 0,
        shift: 0,
        device: Device::CPU,
        fl: 0,
        int: false,
    }
}

impl Case {
    fn tensor(&self) -> ManagedTensor<'static> {
        // 64 elements cover every layout below from `first`, in both directions.
        let len = 64 + self.first;
        if self.int {
            let data: Vec<i32> = (0..len as i32).collect();
            let p = data.as_ptr().wrapping_add(self.first);
            let spec = TensorSpec::host(p, self.shape, self.strides)
                .on_device(self.device)
                .with_flags(self.fl);
            // SAFETY: every offset the layouts reach from `first` is inside `data`, whose
            // provenance the pointer keeps; `data` moves into the tensor.
            unsafe { ManagedTensor::from_owner(data, &spec) }
        } else {
            let data: Vec<f64> = (0..len).map(|i| i as f64).collect();
            let p = data
                .as_ptr()
                .wrapping_add(self.first)
                .cast::<u8>()
                .wrapping_add(self.shift)
                .cast::<f64>();
            // A shifted (misaligned) first element is exported as is: the importers must
            // refuse it.
            let spec = TensorSpec::host(p, self.shape, self.strides)
                .on_device(self.device)
                .with_flags(self.fl);
            // SAFETY: as above (a shifted pointer stays inside `data`).
            unsafe { ManagedTensor::from_owner(data, &spec) }
        }
    }
}

type Verdict = Option<ErrorKind>;

fn verdict<T>(r: Result<T, DlpackError>) -> Verdict {
    r.err().map(|e| e.kind())
}

/// What the box importers say about a rank-4 case.
#[derive(Debug, PartialEq)]
struct Box4 {
    array4: Verdict,
    array4_mut: Verdict,
    basefab: Verdict,
    fabarray: Verdict,
}

fn box4(c: &Case) -> Box4 {
    let array4 = verdict(Array4::<f64>::from_dlpack_view(
        &c.tensor().view(),
        IntVect::ZERO,
    ));
    let mut t = c.tensor();
    let array4_mut = match t.view_mut() {
        Ok(v) => verdict(Array4Mut::<f64>::from_dlpack_view_mut(v, IntVect::ZERO)),
        Err(e) => Some(e.kind()),
    };
    let basefab = verdict(BaseFab::<f64>::from_dlpack_at(c.tensor(), IntVect::ZERO));
    // A one-box FabArray whose box is the tensor's (n, k, j, i) extent.
    let s = c.shape;
    let fabarray = if s.len() == 4 && s[1..].iter().all(|&e| e > 0) {
        let bx = IndexBox::new(
            IntVect::ZERO,
            IntVect::new(s[3] as i32 - 1, s[2] as i32 - 1, s[1] as i32 - 1),
        );
        let ba = BoxArray::new(vec![bx]);
        let dm = DistributionMapping::single(&ba);
        verdict(MultiFab::from_dlpack_per_box(
            &ba,
            &dm,
            IntVect::ZERO,
            vec![c.tensor()],
        ))
    } else {
        None
    };
    Box4 {
        array4,
        array4_mut,
        basefab,
        fabarray,
    }
}

/// Every box importer gives `v`.
fn all(v: Verdict) -> Box4 {
    Box4 {
        array4: v,
        array4_mut: v,
        basefab: v,
        fabarray: v,
    }
}

#[test]
fn box_importers_agree() {
    use ErrorKind as K;
    let neg = |axis, stride| Some(K::NegativeStride { axis, stride });
    let cpu = |mut c: Case, f| {
        c.fl = f;
        c
    };
    let table: Vec<(Case, Box4)> = vec![
        (
            case("C order (n,k,j,i)", &[2, 2, 3, 4], &[24, 12, 4, 1]),
            all(None),
        ),
        // Every axis order of (n, k, j) that stays non-overlapping, i innermost.
        (
            case("k faster than j", &[1, 2, 3, 4], &[24, 4, 8, 1]),
            all(None),
        ),
        (
            case("n fastest above i", &[2, 2, 3, 4], &[4, 24, 8, 1]),
            all(None),
        ),
        (
            case("padded rows", &[1, 2, 2, 3], &[20, 10, 5, 1]),
            all(None),
        ),
        (
            case("rank 3 (k,j,i)", &[2, 3, 4], &[12, 4, 1]),
            Box4 {
                fabarray: None,
                ..all(None)
            },
        ),
        (case("rank 1 (i)", &[5], &[1]), all(None)),
        (
            Case {
                first: 8,
                ..case("negative j stride", &[1, 1, 3, 4], &[12, 12, -4, 1])
            },
            all(neg(2, -4)),
        ),
        (
            Case {
                first: 32,
                ..case("negative n stride", &[2, 2, 2, 4], &[-16, 8, 4, 1])
            },
            all(neg(0, -16)),
        ),
        (
            case("non-unit i stride", &[1, 1, 2, 3], &[12, 12, 6, 2]),
            all(Some(K::NonUnitStride { axis: 3, stride: 2 })),
        ),
        (
            case("zero j stride (overlap)", &[1, 1, 3, 4], &[4, 4, 0, 1]),
            Box4 {
                array4: None,
                ..all(Some(K::OverlappingStrides))
            },
        ),
        (
            case(
                "interleaved n and j (overlap)",
                &[2, 1, 3, 4],
                &[2, 12, 4, 1],
            ),
            Box4 {
                array4: None,
                ..all(Some(K::OverlappingStrides))
            },
        ),
        (
            cpu(
                case("read-only", &[1, 2, 3, 4], &[24, 12, 4, 1]),
                flags::READ_ONLY,
            ),
            Box4 {
                array4: None,
                basefab: None,
                ..all(Some(K::ReadOnly))
            },
        ),
        (
            cpu(
                case("read-only and overlapping", &[1, 1, 3, 4], &[4, 4, 0, 1]),
                flags::READ_ONLY,
            ),
            Box4 {
                array4: None,
                basefab: None,
                ..all(Some(K::ReadOnly))
            },
        ),
        (
            case("zero extent", &[1, 0, 3, 4], &[12, 12, 4, 1]),
            all(None),
        ),
        (
            Case {
                first: 1,
                ..case("byte offset (one element)", &[1, 2, 3, 4], &[24, 12, 4, 1])
            },
            all(None),
        ),
        (
            Case {
                shift: 4,
                ..case("misaligned", &[1, 1, 2, 3], &[6, 6, 3, 1])
            },
            all(Some(K::Misaligned {
                address: 0,
                align: 8,
            })),
        ),
        (
            Case {
                int: true,
                ..case("dtype i32", &[1, 1, 2, 3], &[6, 6, 3, 1])
            },
            all(Some(K::DtypeMismatch {
                expected: <f64 as amrex::dlpack::DlpackElement>::DTYPE,
                found: <i32 as amrex::dlpack::DlpackElement>::DTYPE,
            })),
        ),
        (
            Case {
                device: Device::new(amrex::dlpack::ffi::DLDeviceType::CUDA, 0),
                ..case("CUDA device memory", &[1, 1, 2, 3], &[6, 6, 3, 1])
            },
            Box4 {
                basefab: None,
                ..all(Some(K::NotHostAccessible(Device::new(
                    amrex::dlpack::ffi::DLDeviceType::CUDA,
                    0,
                ))))
            },
        ),
        (
            case("rank 5", &[1, 1, 1, 2, 3], &[6, 6, 6, 3, 1]),
            Box4 {
                fabarray: None,
                ..all(Some(K::RankMismatch {
                    expected: 4,
                    found: 5,
                }))
            },
        ),
    ];
    for (c, want) in &table {
        let mut got = box4(c);
        // Addresses differ run to run: compare the kind and the alignment only.
        for v in [
            &mut got.array4,
            &mut got.array4_mut,
            &mut got.basefab,
            &mut got.fabarray,
        ] {
            if let Some(K::Misaligned { address, .. }) = v {
                *address = 0;
            }
        }
        // Rows without a rank-4 shape of positive spatial extents have no one-box
        // FabArray verdict (`box4` reports None for it).
        assert_eq!(&got, want, "{}", c.name);
    }
}

#[test]
fn vector_matrix_and_core_importers_share_the_refusals() {
    use ErrorKind as K;
    let f64_dtype = <f64 as amrex::dlpack::DlpackElement>::DTYPE;
    let i32_dtype = <i32 as amrex::dlpack::DlpackElement>::DTYPE;
    // (case, verdict of: core typed view, Vec copy, PodVector copy, DlpackVector view,
    //  SmallMatrix<f64, 2, 3> copy)
    let rank1 = |name, shape: &'static [i64], strides: &'static [i64]| case(name, shape, strides);
    let table: Vec<(Case, [Verdict; 4])> = vec![
        (rank1("contiguous", &[6], &[1]), [None, None, None, None]),
        (
            rank1("strided", &[3], &[2]),
            [
                None,
                None,
                None,
                Some(K::NonUnitStride { axis: 0, stride: 2 }),
            ],
        ),
        (
            Case {
                int: true,
                ..rank1("dtype i32", &[6], &[1])
            },
            [Some(K::DtypeMismatch {
                expected: f64_dtype,
                found: i32_dtype,
            }); 4],
        ),
        (
            Case {
                shift: 4,
                ..rank1("misaligned", &[6], &[1])
            },
            [Some(K::Misaligned {
                address: 0,
                align: 8,
            }); 4],
        ),
    ];
    for (c, want) in &table {
        let mut got = [
            verdict(c.tensor().view().typed::<f64>().map(|_| ())),
            verdict(Vec::<f64>::from_dlpack(c.tensor())),
            verdict(PodVector::<f64>::from_dlpack(c.tensor())),
            verdict(DlpackVector::<f64>::from_dlpack(c.tensor())),
        ];
        for v in &mut got {
            if let Some(K::Misaligned { address, .. }) = v {
                *address = 0;
            }
        }
        assert_eq!(&got, want, "{}", c.name);
    }
    // SmallMatrix: the same dtype and alignment refusals on its (R, C) layouts.
    let m = case("2x3 column-major", &[2, 3], &[1, 2]);
    assert!(SmallMatrix::<f64, 2, 3>::from_dlpack_copy(&m.tensor().view()).is_ok());
    let m = Case {
        int: true,
        ..case("2x3 i32", &[2, 3], &[1, 2])
    };
    assert_eq!(
        verdict(SmallMatrix::<f64, 2, 3>::from_dlpack_copy(
            &m.tensor().view()
        )),
        Some(K::DtypeMismatch {
            expected: f64_dtype,
            found: i32_dtype
        })
    );
    let m = Case {
        shift: 4,
        ..case("2x3 misaligned", &[2, 3], &[1, 2])
    };
    assert!(matches!(
        verdict(SmallMatrix::<f64, 2, 3>::view_from_dlpack(
            &m.tensor().view()
        )),
        Some(K::Misaligned { align: 8, .. })
    ));
    // READ_ONLY: every mutable import refuses it with the same kind.
    let ro = Case {
        fl: flags::READ_ONLY,
        ..case("read-only 2x3", &[2, 3], &[1, 2])
    };
    let mut t = ro.tensor();
    assert_eq!(verdict(t.view_mut()), Some(K::ReadOnly));
    let mut v = DlpackVector::<f64>::from_dlpack(
        Case {
            fl: flags::READ_ONLY,
            ..rank1("ro", &[6], &[1])
        }
        .tensor(),
    )
    .unwrap();
    assert_eq!(verdict(v.as_mut_slice()), Some(K::ReadOnly));
}

/// Counts how often the producer's memory was released.
struct Released(std::sync::Arc<core::sync::atomic::AtomicUsize>);

impl Drop for Released {
    fn drop(&mut self) {
        self.0.fetch_add(1, core::sync::atomic::Ordering::SeqCst);
    }
}

fn counted(
    shape: &'static [i64],
    strides: &'static [i64],
) -> (
    ManagedTensor<'static>,
    std::sync::Arc<core::sync::atomic::AtomicUsize>,
) {
    let n = std::sync::Arc::new(core::sync::atomic::AtomicUsize::new(0));
    let data: Vec<f64> = (0..64).map(f64::from).collect();
    let spec = TensorSpec::host(data.as_ptr(), shape, strides);
    // SAFETY: the layouts used reach only elements of `data`, which moves into the owner
    // (its heap buffer does not move).
    let t = unsafe { ManagedTensor::from_owner((data, Released(n.clone())), &spec) };
    (t, n)
}

#[test]
fn a_refused_import_hands_the_tensor_back() {
    use core::sync::atomic::Ordering::SeqCst;
    // A (2, 3) f64 tensor: refused as i32 by every container, then taken as f64.
    let (t, released) = counted(&[2, 3], &[3, 1]);
    let r = Vec::<i32>::try_from_dlpack(t).unwrap_err();
    assert!(matches!(r.error().kind(), ErrorKind::RankMismatch { .. }));
    let r = PodVector::<f64>::try_from_dlpack(r.into_tensor()).unwrap_err();
    let r = DlpackVector::<f64>::try_from_dlpack(r.into_tensor()).unwrap_err();
    let r = BaseFab::<i32>::try_from_dlpack_at(r.into_tensor(), IntVect::ZERO).unwrap_err();
    assert!(matches!(r.error().kind(), ErrorKind::DtypeMismatch { .. }));
    assert_eq!(
        released.load(SeqCst),
        0,
        "nothing refused released the memory"
    );
    let fab = BaseFab::<f64>::try_from_dlpack_at(r.into_tensor(), IntVect::ZERO).unwrap();
    assert_eq!(fab.array().unwrap()[(2, 1, 0, 0)], 5.0);
    // A fab adopted from a tensor gives it back, still alive.
    let t = fab.into_tensor().unwrap();
    assert_eq!(released.load(SeqCst), 0);
    drop(t);
    assert_eq!(released.load(SeqCst), 1);

    // A FabArray refusal gives every tensor back in order: the second box's tensor has
    // the wrong shape, after the first was adopted.
    let ba = BoxArray::new(vec![
        IndexBox::new(IntVect::ZERO, IntVect::new(1, 1, 0)),
        IndexBox::new(IntVect::new(2, 0, 0), IntVect::new(3, 1, 0)),
    ]);
    let dm = DistributionMapping::single(&ba);
    let (a, ra) = counted(&[1, 1, 2, 2], &[4, 4, 2, 1]);
    let (b, rb) = counted(&[1, 1, 2, 3], &[6, 6, 3, 1]);
    let (e, back) =
        MultiFab::try_from_dlpack_per_box(&ba, &dm, IntVect::ZERO, vec![a, b]).unwrap_err();
    assert!(
        matches!(
            e.kind(),
            ErrorKind::ShapeMismatch {
                axis: 3,
                expected: 2,
                found: 3
            }
        ),
        "{e}"
    );
    assert_eq!(back.len(), 2);
    assert_eq!((ra.load(SeqCst), rb.load(SeqCst)), (0, 0));
    assert_eq!(back[1].shape(), &[1, 1, 2, 3]);
    drop(back);
    assert_eq!((ra.load(SeqCst), rb.load(SeqCst)), (1, 1));
    // Two tensors over the same memory: AliasedTensors, both handed back.
    let data = vec![0.0f64; 8];
    let p = data.as_ptr();
    let spec = TensorSpec::host(p, &[1, 1, 2, 2], &[4, 4, 2, 1]);
    // SAFETY: four elements of `data`, which the first tensor owns and keeps alive.
    let a = unsafe { ManagedTensor::from_owner(data, &spec) };
    // SAFETY: the same elements, borrowed by a tensor that owns nothing. It goes first in
    // the vector, and the vector handed back keeps that order, so it drops before `a`.
    let b = unsafe { ManagedTensor::from_owner((), &spec) };
    let (e, back) =
        MultiFab::try_from_dlpack_per_box(&ba, &dm, IntVect::ZERO, vec![b, a]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AliasedTensors);
    assert_eq!(back.len(), 2);
}
