//! C interop against the official `dlpack.h` (layouts, constants, deleters, versions,
//! strides, byte offsets): `tests/c/consumer.c` is compiled with `cc` against the header shipped in the
//! `apache-tvm-ffi` wheel and loaded with libloading.
//!
//! - Layout and constants: the C compiler's `sizeof`/`alignof`/`offsetof` and enum values
//!   equal Rust's.
//! - Rust → C: tensors exported with `into_raw` are checked field by field in C, written
//!   through, and freed by C calling the deleter.
//! - C → Rust: tensors made in C are imported with `from_raw`, read, and dropped; C counts
//!   its deleter calls.
//!
//! The header is found through, in order: `AMREX_DLPACK_INCLUDE` (a folder holding
//! `dlpack/dlpack.h`), `tvm-ffi-config --dlpack-includedir` from the workspace venv
//! (`.venv`) or `VIRTUAL_ENV` or `PATH`, then a glob of the venv's site-packages. When it is
//! missing the tests print a loud message and pass, unless `AMREX_REQUIRE_C_TESTS` is set
//! (as `scripts/test.sh` does), in which case they fail.
#![cfg(feature = "alloc")]

use amrex_dlpack_core::ffi::{
    DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, DLManagedTensor, DLManagedTensorVersioned,
    DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION, DLPackVersion, DLTensor, flags,
};
use amrex_dlpack_core::{
    DataType, ErrorKind, LegacyManagedTensor, ManagedTensor, TensorSpec, ToDlpack,
};
use core::ffi::c_int;
use core::mem::{align_of, offset_of, size_of};
use libloading::Library;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

type LayoutFn = unsafe extern "C" fn(*mut usize, usize) -> usize;
type ConstantsFn = unsafe extern "C" fn(*mut i64, usize) -> usize;
type ConsumeF64Fn = unsafe extern "C" fn(*mut DLManagedTensorVersioned) -> c_int;
type ConsumeSumFn = unsafe extern "C" fn(*mut DLManagedTensorVersioned, u64, *mut i64) -> c_int;
type ConsumeLegacySumFn = unsafe extern "C" fn(*mut DLManagedTensor, *mut i64) -> c_int;
type ProduceFn = unsafe extern "C" fn(u32, u32, u64, *mut c_int) -> *mut DLManagedTensorVersioned;
type ProduceLegacyFn = unsafe extern "C" fn(*mut c_int) -> *mut DLManagedTensor;

fn has_header(dir: &Path) -> bool {
    dir.join("dlpack").join("dlpack.h").is_file()
}

fn tvm_ffi_config(program: &Path) -> Option<PathBuf> {
    let out = Command::new(program)
        .arg("--dlpack-includedir")
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let dir = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    has_header(&dir).then_some(dir)
}

/// The folder holding `dlpack/dlpack.h`, and how it was found.
fn find_include_dir() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("AMREX_DLPACK_INCLUDE") {
        let dir = PathBuf::from(dir);
        return if has_header(&dir) {
            Ok(dir)
        } else {
            Err(format!(
                "AMREX_DLPACK_INCLUDE={} has no dlpack/dlpack.h",
                dir.display()
            ))
        };
    }
    let workspace_venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv");
    let mut venvs = vec![workspace_venv];
    if let Some(v) = std::env::var_os("VIRTUAL_ENV") {
        venvs.push(PathBuf::from(v));
    }
    for venv in &venvs {
        if let Some(dir) = tvm_ffi_config(&venv.join("bin").join("tvm-ffi-config")) {
            return Ok(dir);
        }
    }
    if let Some(dir) = tvm_ffi_config(Path::new("tvm-ffi-config")) {
        return Ok(dir);
    }
    for venv in &venvs {
        let Ok(libs) = std::fs::read_dir(venv.join("lib")) else {
            continue;
        };
        for python in libs.flatten() {
            let dir = python.path().join("site-packages/tvm_ffi/include");
            if has_header(&dir) {
                return Ok(dir);
            }
        }
    }
    Err(format!(
        "no dlpack/dlpack.h: install the apache-tvm-ffi wheel into {} \
         (`python3 -m venv .venv && .venv/bin/pip install apache-tvm-ffi`) or set \
         AMREX_DLPACK_INCLUDE",
        venvs[0].display()
    ))
}

/// Compiles `tests/c/consumer.c` into a shared library and loads it (once per process).
fn build_library() -> Result<Library, String> {
    let include = find_include_dir()?;
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/consumer.c");
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("amrex-dlpack-core-c");
    std::fs::create_dir_all(&out_dir).map_err(|e| e.to_string())?;
    let lib = out_dir.join(format!("libconsumer-{}.so", std::process::id()));
    let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let status = Command::new(&cc)
        .args([
            "-std=c11",
            "-O1",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
        ])
        .args(["-shared", "-fPIC", "-I"])
        .arg(&include)
        .arg(&src)
        .arg("-o")
        .arg(&lib)
        .status()
        .map_err(|e| format!("cannot run {}: {e}", cc.to_string_lossy()))?;
    if !status.success() {
        // A C compile error is a real failure (layout static_asserts live there).
        panic!(
            "compiling {} against {} failed",
            src.display(),
            include.display()
        );
    }
    // SAFETY: our own library; its initialisers do nothing.
    let library = unsafe { Library::new(&lib) }.map_err(|e| e.to_string())?;
    eprintln!(
        "c_interop: consumer.c compiled against {}",
        include.display()
    );
    Ok(library)
}

/// The loaded library, or `None` (after a loud message) when the header is missing and
/// `AMREX_REQUIRE_C_TESTS` is unset.
fn library() -> Option<&'static Library> {
    static LIB: OnceLock<Result<Library, String>> = OnceLock::new();
    match LIB.get_or_init(build_library) {
        Ok(lib) => Some(lib),
        Err(why) if std::env::var_os("AMREX_REQUIRE_C_TESTS").is_none() => {
            static ONCE: std::sync::Once = std::sync::Once::new();
            // Written to the stderr handle, not with `eprintln!`, so the test harness does
            // not capture (and hide) it.
            ONCE.call_once(|| {
                let _ = writeln!(
                    std::io::stderr(),
                    "\n!!!!!!!!!! c_interop SKIPPED: {why}\n\
                     !!!!!!!!!! set AMREX_REQUIRE_C_TESTS=1 to make this a failure\n"
                );
            });
            None
        }
        Err(why) => panic!("c_interop required (AMREX_REQUIRE_C_TESTS is set) but: {why}"),
    }
}

/// A function of the library.
fn sym<T: Copy>(lib: &Library, name: &str) -> T {
    // SAFETY: every `T` used here is the exact C signature of `name` in consumer.c.
    *unsafe { lib.get::<T>(name) }.unwrap_or_else(|e| panic!("{name}: {e}"))
}

// ------------------------------------------------------------------------ layout

#[test]
#[cfg_attr(miri, ignore = "FFI")]
fn layout_equals_the_c_compilers() {
    let Some(lib) = library() else { return };
    let rust = [
        size_of::<DLPackVersion>(),
        align_of::<DLPackVersion>(),
        offset_of!(DLPackVersion, major),
        offset_of!(DLPackVersion, minor),
        size_of::<DLDevice>(),
        align_of::<DLDevice>(),
        offset_of!(DLDevice, device_type),
        offset_of!(DLDevice, device_id),
        size_of::<DLDataType>(),
        align_of::<DLDataType>(),
        offset_of!(DLDataType, code),
        offset_of!(DLDataType, bits),
        offset_of!(DLDataType, lanes),
        size_of::<DLTensor>(),
        align_of::<DLTensor>(),
        offset_of!(DLTensor, data),
        offset_of!(DLTensor, device),
        offset_of!(DLTensor, ndim),
        offset_of!(DLTensor, dtype),
        offset_of!(DLTensor, shape),
        offset_of!(DLTensor, strides),
        offset_of!(DLTensor, byte_offset),
        size_of::<DLManagedTensor>(),
        align_of::<DLManagedTensor>(),
        offset_of!(DLManagedTensor, dl_tensor),
        offset_of!(DLManagedTensor, manager_ctx),
        offset_of!(DLManagedTensor, deleter),
        size_of::<DLManagedTensorVersioned>(),
        align_of::<DLManagedTensorVersioned>(),
        offset_of!(DLManagedTensorVersioned, version),
        offset_of!(DLManagedTensorVersioned, manager_ctx),
        offset_of!(DLManagedTensorVersioned, deleter),
        offset_of!(DLManagedTensorVersioned, flags),
        offset_of!(DLManagedTensorVersioned, dl_tensor),
    ];
    let mut c = [0usize; 64];
    let layout: LayoutFn = sym(lib, "amrex_c_layout");
    // SAFETY: `c` has room for 64 entries, which the C side respects.
    let n = unsafe { layout(c.as_mut_ptr(), c.len()) };
    assert_eq!(&c[..n], &rust[..]);
}

#[test]
#[cfg_attr(miri, ignore = "FFI")]
fn constants_equal_the_headers() {
    let Some(lib) = library() else { return };
    let mut rust: Vec<i64> = vec![
        i64::from(DLPACK_MAJOR_VERSION),
        i64::from(DLPACK_MINOR_VERSION),
    ];
    rust.extend(
        [
            DLDeviceType::CPU,
            DLDeviceType::CUDA,
            DLDeviceType::CUDA_HOST,
            DLDeviceType::OPENCL,
            DLDeviceType::VULKAN,
            DLDeviceType::METAL,
            DLDeviceType::VPI,
            DLDeviceType::ROCM,
            DLDeviceType::ROCM_HOST,
            DLDeviceType::EXT_DEV,
            DLDeviceType::CUDA_MANAGED,
            DLDeviceType::ONE_API,
            DLDeviceType::WEBGPU,
            DLDeviceType::HEXAGON,
            DLDeviceType::MAIA,
            DLDeviceType::TRN,
        ]
        .map(|d| i64::from(d.0)),
    );
    rust.extend(
        [
            DLDataTypeCode::INT,
            DLDataTypeCode::UINT,
            DLDataTypeCode::FLOAT,
            DLDataTypeCode::OPAQUE_HANDLE,
            DLDataTypeCode::BFLOAT,
            DLDataTypeCode::COMPLEX,
            DLDataTypeCode::BOOL,
            DLDataTypeCode::FLOAT8_E3M4,
            DLDataTypeCode::FLOAT8_E4M3,
            DLDataTypeCode::FLOAT8_E4M3B11FNUZ,
            DLDataTypeCode::FLOAT8_E4M3FN,
            DLDataTypeCode::FLOAT8_E4M3FNUZ,
            DLDataTypeCode::FLOAT8_E5M2,
            DLDataTypeCode::FLOAT8_E5M2FNUZ,
            DLDataTypeCode::FLOAT8_E8M0FNU,
            DLDataTypeCode::FLOAT6_E2M3FN,
            DLDataTypeCode::FLOAT6_E3M2FN,
            DLDataTypeCode::FLOAT4_E2M1FN,
        ]
        .map(|c| i64::from(c.0)),
    );
    rust.extend(
        [
            flags::READ_ONLY,
            flags::IS_COPIED,
            flags::IS_SUBBYTE_TYPE_PADDED,
        ]
        .map(|f| f as i64),
    );
    let mut c = [0i64; 64];
    let constants: ConstantsFn = sym(lib, "amrex_c_constants");
    // SAFETY: `c` has room for 64 entries, which the C side respects.
    let n = unsafe { constants(c.as_mut_ptr(), c.len()) };
    assert_eq!(&c[..n], &rust[..]);
}

// ------------------------------------------------------------------------ Rust -> C

#[test]
#[cfg_attr(miri, ignore = "FFI")]
fn c_consumer_checks_writes_and_frees_a_rust_export() {
    let Some(lib) = library() else { return };
    let consume: ConsumeF64Fn = sym(lib, "amrex_c_consume_f64_3x4");
    let mut values: Vec<f64> = (0..12).map(|k| f64::from(10 * (k / 4) + k % 4)).collect();
    let alive = Arc::new(());
    let (shape, strides) = ([3, 4], [4, 1]);
    let spec = TensorSpec::host(values.as_mut_ptr().cast_const(), &shape, &strides);
    // SAFETY: `values` outlives the tensor (C frees it before `consume` returns) and is not
    // touched by Rust meanwhile; the owner is an `Arc` whose count shows the drop.
    let t = unsafe { ManagedTensor::from_owner(Arc::clone(&alive), &spec) };
    let raw = t.into_raw();
    assert_eq!(Arc::strong_count(&alive), 2);
    // SAFETY: ownership of `raw` passes to C, which calls the deleter once.
    let rc = unsafe { consume(raw) };
    assert_eq!(rc, 0, "consumer.c check failed at line {rc}");
    assert_eq!(Arc::strong_count(&alive), 1, "C called the deleter once");
    let negated: Vec<f64> = (0..12).map(|k| -f64::from(10 * (k / 4) + k % 4)).collect();
    assert_eq!(values, negated, "C's writes are visible: zero copy");
}

#[test]
#[cfg_attr(miri, ignore = "FFI")]
fn c_consumer_sums_strided_read_only_and_scalar_exports() {
    let Some(lib) = library() else { return };
    let consume: ConsumeSumFn = sym(lib, "amrex_c_consume_sum_i32");
    let mut sum = 0i64;

    // A borrowed slice: READ_ONLY.
    let data: Vec<i32> = (1..=10).collect();
    let t = data.as_slice().to_dlpack().unwrap();
    // SAFETY: ownership passes to C; `data` outlives the call.
    let rc = unsafe { consume(t.into_raw(), flags::READ_ONLY, &mut sum) };
    assert_eq!((rc, sum), (0, 55));

    // Negative strides: every other element of `data`, reversed, as 1x5 viewed from the end.
    let (shape, strides) = ([5, 1], [-2, 7]);
    let spec = TensorSpec::host(data.as_ptr().wrapping_add(9), &shape, &strides);
    // SAFETY: offsets 9, 7, 5, 3, 1 lie inside `data`, which outlives the call.
    let t = unsafe { ManagedTensor::from_owner((), &spec) };
    // SAFETY: ownership passes to C.
    let rc = unsafe { consume(t.into_raw(), 0, &mut sum) };
    assert_eq!((rc, sum), (0, 10 + 8 + 6 + 4 + 2));

    // A scalar (ndim 0, NULL shape and strides).
    let spec = TensorSpec::host(&data[6] as *const i32, &[], &[]);
    // SAFETY: `data[6]` outlives the call.
    let t = unsafe { ManagedTensor::from_owner((), &spec) };
    // SAFETY: ownership passes to C.
    let rc = unsafe { consume(t.into_raw(), 0, &mut sum) };
    assert_eq!((rc, sum), (0, 7));

    // An empty owned Vec: NULL data, zero sum, owner dropped by C.
    let t = Vec::<i32>::new().to_dlpack().unwrap();
    // SAFETY: ownership passes to C.
    let rc = unsafe { consume(t.into_raw(), 0, &mut sum) };
    assert_eq!((rc, sum), (0, 0));

    // The legacy header.
    let legacy_consume: ConsumeLegacySumFn = sym(lib, "amrex_c_consume_legacy_sum_i32");
    let alive = Arc::new(());
    let owned = vec![3i32; 4];
    let (shape, strides) = ([2, 2], [2, 1]);
    let spec = TensorSpec::host(owned.as_ptr(), &shape, &strides);
    // SAFETY: the Vec moves in with the flag; its buffer does not move.
    let t = unsafe { ManagedTensor::from_owner((owned, Arc::clone(&alive)), &spec) };
    let legacy = t.into_legacy();
    // SAFETY: ownership passes to C.
    let rc = unsafe { legacy_consume(legacy.into_raw(), &mut sum) };
    assert_eq!((rc, sum), (0, 12));
    assert_eq!(
        Arc::strong_count(&alive),
        1,
        "one deleter call freed both headers"
    );
}

// ------------------------------------------------------------------------ C -> Rust

#[test]
#[cfg_attr(miri, ignore = "FFI")]
fn rust_imports_a_c_producers_tensor() {
    let Some(lib) = library() else { return };
    let produce: ProduceFn = sym(lib, "amrex_c_produce");
    let mut calls: c_int = 0;
    // SAFETY: `calls` outlives every tensor produced with it.
    let raw = unsafe { produce(1, 3, 0, &mut calls) };
    // SAFETY: ownership of a valid tensor passes.
    let mut t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    assert_eq!(t.version(), DLPackVersion::CURRENT);
    assert_eq!(t.dtype(), DataType::I32);
    assert_eq!(t.shape(), &[2, 3]);
    assert_eq!(t.view().strides().collect::<Vec<_>>(), [1, 2]);
    assert!(t.view().is_f_contiguous());
    assert_eq!(t.view().raw().byte_offset, 8);
    let v = t.view().typed::<i32>().unwrap();
    for i in 0..2 {
        for j in 0..3 {
            assert_eq!(v.get(&[i, j]), Some(&(100 * i as i32 + j as i32)));
        }
    }
    assert_eq!(v.to_vec(), [0, 1, 2, 100, 101, 102], "byte_offset honoured");
    let mut w = t.view_mut().unwrap().typed_mut::<i32>().unwrap();
    *w.get_mut(&[1, 2]).unwrap() = 7;
    assert_eq!(t.view().typed::<i32>().unwrap().get(&[1, 2]), Some(&7));
    #[cfg(feature = "ndarray")]
    assert_eq!(
        t.as_ndarray::<i32, ndarray::Ix2>().unwrap(),
        ndarray::arr2(&[[0, 1, 2], [100, 101, 7]])
    );
    assert_eq!(calls, 0);
    drop(t);
    assert_eq!(calls, 1, "Rust called the C deleter once");

    // READ_ONLY from C is honoured; a future minor is accepted.
    // SAFETY: as above.
    let raw = unsafe { produce(1, 9, flags::READ_ONLY, &mut calls) };
    // SAFETY: as above.
    let mut t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    assert_eq!(t.version().minor, 9);
    assert_eq!(t.view_mut().unwrap_err().kind(), ErrorKind::ReadOnly);
    drop(t);
    assert_eq!(calls, 2);
}

#[test]
#[cfg_attr(miri, ignore = "FFI")]
fn rust_refuses_a_c_tensor_of_major_2_and_frees_it_once() {
    let Some(lib) = library() else { return };
    let produce: ProduceFn = sym(lib, "amrex_c_produce");
    let mut calls: c_int = 0;
    // SAFETY: `calls` outlives the tensor.
    let raw = unsafe { produce(2, 0, 0, &mut calls) };
    // SAFETY: ownership passes; only version and deleter are read.
    let err = unsafe { ManagedTensor::from_raw(raw) }.unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::UnsupportedVersion { major: 2, minor: 0 }
    );
    assert_eq!(calls, 1);

    // A refusal after validation (dtype with lanes 2) also frees once.
    // SAFETY: as above.
    let raw = unsafe { produce(1, 3, 0, &mut calls) };
    // SAFETY: we still own `raw` and nothing else references it.
    unsafe { (*raw).dl_tensor.dtype.lanes = 2 };
    // SAFETY: ownership passes.
    let err = unsafe { ManagedTensor::from_raw(raw) }.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Lanes(2));
    assert_eq!(calls, 2);
}

#[test]
#[cfg_attr(miri, ignore = "FFI")]
fn rust_imports_a_c_legacy_tensor_with_null_strides() {
    let Some(lib) = library() else { return };
    let produce: ProduceLegacyFn = sym(lib, "amrex_c_produce_legacy");
    let mut calls: c_int = 0;
    // SAFETY: `calls` outlives the tensor.
    let raw = unsafe { produce(&mut calls) };
    // SAFETY: ownership passes.
    let t = unsafe { LegacyManagedTensor::from_raw(raw) }.unwrap();
    assert_eq!(t.view().strides_raw(), None);
    assert!(t.view().is_c_contiguous());
    assert_eq!(
        t.view().typed::<f32>().unwrap().as_slice(),
        Some(&[0.5f32, 1.5, 2.5, 3.5][..])
    );
    drop(t);
    assert_eq!(calls, 1);
}
