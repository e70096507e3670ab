//! The CUDA [`Kernels`]: `kernels.cu` compiled at run time by NVRTC for the device's
//! architecture, loaded once per device, launched on the legacy default stream.
//!
//! NVRTC is loaded with `libloading` through our own eleven-function binding rather than
//! `cudarc::nvrtc`, because cudarc panics when the library is missing and finds it only
//! under its own names on the loader's path, while NVRTC usually comes from a Python wheel
//! (`nvidia-cuda-nvrtc-cu12`, which PyTorch depends on) outside that path. The library
//! is `$AMREX_NVRTC_LIBRARY` when set, else the first of [`NVRTC_NAMES`] that opens.
//!
//! The kernels are compiled to a CUBIN for the device's `sm_XY` (no PTX JIT, so a driver
//! older than NVRTC still loads them); if this NVRTC does not know the device, to PTX for
//! the newest architecture it knows, which the driver compiles. Without NVRTC, or with
//! `AMREX_CUDA_EMBEDDED_PTX=1`, the driver compiles the PTX shipped with the library.

use super::{Ctx, CudaDeviceArena, CudaManagedArena, check, dptr};
use crate::kernels::{Binary, CopyOrder, KernelElement, Kernels, Reduce, Region, Unary};
use crate::{Arena, ArenaError, Backend, ErrorKind, MemoryKind};
use core::ffi::{c_char, c_int, c_void};
use cudarc::driver::sys::{self, CUdevice_attribute};
use std::string::String;
use std::sync::{Arc, Mutex, OnceLock};
use std::vec::Vec;

/// The kernels' CUDA C++ source.
const SOURCE: &str = include_str!("kernels.cu");

/// The kernels as PTX for `compute_75`, for machines without NVRTC: `kernels.cu` compiled
/// by NVRTC 12.9 with [`compile_kernels`]`(75, ImageFormat::Ptx)`, its `.version` directive lowered to
/// 7.0 (the kernels use nothing newer; `ptxas` accepts the file for
/// sm_75 and sm_90), so that drivers from CUDA 11.0 on compile it. A test checks that it
/// is what the source compiles to; `AMREX_BLESS_PTX=1` rewrites it.
const EMBEDDED_PTX: &str = include_str!("kernels.ptx");

/// The PTX ISA version of [`EMBEDDED_PTX`].
#[cfg(test)]
const EMBEDDED_PTX_VERSION: &str = ".version 7.0";

/// NVRTC's PTX with its `.version` directive replaced by [`EMBEDDED_PTX_VERSION`] and the
/// trailing NUL dropped: the text [`EMBEDDED_PTX`] holds.
#[cfg(test)]
fn lowered_ptx(ptx: &[u8]) -> String {
    let text = String::from_utf8_lossy(ptx);
    let text = text.trim_end_matches('\0');
    text.lines()
        .map(|l| {
            if l.starts_with(".version ") {
                EMBEDDED_PTX_VERSION
            } else {
                l
            }
        })
        .fold(String::new(), |mut acc, l| {
            acc.push_str(l);
            acc.push('\n');
            acc
        })
}

/// NVRTC library names tried after `$AMREX_NVRTC_LIBRARY`, in order.
pub const NVRTC_NAMES: &[&str] = &[
    "$AMREX_NVRTC_LIBRARY",
    "libnvrtc.so.12",
    "libnvrtc.so.13",
    "libnvrtc.so.11.2",
    "libnvrtc.so",
    "/usr/local/cuda/lib64/libnvrtc.so",
];

type Prog = *mut c_void;

/// The NVRTC functions used, resolved once.
struct Nvrtc {
    version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int,
    create: unsafe extern "C" fn(
        *mut Prog,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> c_int,
    compile: unsafe extern "C" fn(Prog, c_int, *const *const c_char) -> c_int,
    log_size: unsafe extern "C" fn(Prog, *mut usize) -> c_int,
    log: unsafe extern "C" fn(Prog, *mut c_char) -> c_int,
    cubin_size: unsafe extern "C" fn(Prog, *mut usize) -> c_int,
    cubin: unsafe extern "C" fn(Prog, *mut c_char) -> c_int,
    ptx_size: unsafe extern "C" fn(Prog, *mut usize) -> c_int,
    ptx: unsafe extern "C" fn(Prog, *mut c_char) -> c_int,
    destroy: unsafe extern "C" fn(*mut Prog) -> c_int,
    num_archs: unsafe extern "C" fn(*mut c_int) -> c_int,
    archs: unsafe extern "C" fn(*mut c_int) -> c_int,
    _lib: libloading::Library,
}

static NVRTC: OnceLock<Result<Nvrtc, ArenaError>> = OnceLock::new();

fn nvrtc() -> Result<&'static Nvrtc, ArenaError> {
    NVRTC.get_or_init(load_nvrtc).as_ref().map_err(|e| *e)
}

fn load_nvrtc() -> Result<Nvrtc, ArenaError> {
    let from_env = std::env::var_os("AMREX_NVRTC_LIBRARY");
    let lib = from_env
        .iter()
        .map(|p| p.as_os_str())
        .chain(NVRTC_NAMES[1..].iter().map(|n| n.as_ref()))
        .find_map(|name| {
            // SAFETY: opening NVRTC runs its initialisers, which have no preconditions.
            unsafe { libloading::Library::new(name) }.ok()
        })
        .ok_or(ArenaError::new(ErrorKind::LibraryNotFound {
            backend: Backend::Cuda,
            tried: NVRTC_NAMES,
        }))?;
    macro_rules! sym {
        ($name:literal) => {{
            // SAFETY: the symbol is NVRTC's function of that name, whose C signature the
            // field's type spells (from `nvrtc.h`).
            let s = unsafe { lib.get($name.as_bytes()) }.map_err(|_| {
                ArenaError::new(ErrorKind::SymbolNotFound {
                    backend: Backend::Cuda,
                    symbol: $name,
                })
            })?;
            *s
        }};
    }
    Ok(Nvrtc {
        version: sym!("nvrtcVersion"),
        create: sym!("nvrtcCreateProgram"),
        compile: sym!("nvrtcCompileProgram"),
        log_size: sym!("nvrtcGetProgramLogSize"),
        log: sym!("nvrtcGetProgramLog"),
        cubin_size: sym!("nvrtcGetCUBINSize"),
        cubin: sym!("nvrtcGetCUBIN"),
        ptx_size: sym!("nvrtcGetPTXSize"),
        ptx: sym!("nvrtcGetPTX"),
        destroy: sym!("nvrtcDestroyProgram"),
        num_archs: sym!("nvrtcGetNumSupportedArchs"),
        archs: sym!("nvrtcGetSupportedArchs"),
        _lib: lib,
    })
}

fn nvrtc_check(r: c_int, call: &'static str) -> Result<(), ArenaError> {
    if r == 0 {
        return Ok(());
    }
    Err(ErrorKind::Driver {
        backend: Backend::Cuda,
        call,
        code: i64::from(r),
        message: "an NVRTC error",
    }
    .into())
}

/// NVRTC's `(major, minor)` version; needs no GPU.
///
/// # Errors
/// [`ErrorKind::LibraryNotFound`] or [`ErrorKind::SymbolNotFound`] for NVRTC.
pub fn nvrtc_version() -> Result<(i32, i32), ArenaError> {
    let n = nvrtc()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: two valid out-pointers.
    let r = unsafe { (n.version)(&mut major, &mut minor) };
    nvrtc_check(r, "nvrtcVersion")?;
    Ok((major, minor))
}

/// The architectures this NVRTC compiles for (`[75, 80, 86, 89, 90, ...]`).
fn supported_archs(n: &Nvrtc) -> Result<Vec<i32>, ArenaError> {
    let mut count = 0;
    // SAFETY: valid out-pointer.
    let r = unsafe { (n.num_archs)(&mut count) };
    nvrtc_check(r, "nvrtcGetNumSupportedArchs")?;
    let mut archs = std::vec![0; usize::try_from(count).unwrap_or(0)];
    // SAFETY: `archs` has room for the `count` entries NVRTC writes.
    let r = unsafe { (n.archs)(archs.as_mut_ptr()) };
    nvrtc_check(r, "nvrtcGetSupportedArchs")?;
    Ok(archs)
}

/// Compiler logs of failed compilations, each kept once for the life of the process so
/// an error can carry it as `&'static str` (repeating a failure adds nothing).
fn intern(log: String) -> &'static str {
    static LOGS: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut logs = LOGS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(&known) = logs.iter().find(|&&l| l == log) {
        return known;
    }
    let leaked: &'static str = std::boxed::Box::leak(log.into_boxed_str());
    logs.push(leaked);
    leaked
}

/// What [`compile_kernels`] makes: machine code for one GPU, or PTX the driver compiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImageFormat {
    /// A CUBIN for `sm_XY`.
    Cubin,
    /// PTX for `compute_XY`.
    Ptx,
}

/// What [`compile_kernels`] produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Image {
    /// Machine code for one `sm_XY`.
    Cubin(Vec<u8>),
    /// PTX (NUL-terminated) for a `compute_XY`, compiled by the driver when loaded.
    Ptx(Vec<u8>),
}

impl Image {
    fn bytes(&self) -> &[u8] {
        match self {
            Self::Cubin(b) | Self::Ptx(b) => b,
        }
    }
}

/// Compiles the kernels for compute capability `arch` (`90` for `sm_90`): a CUBIN for
/// `sm_XY`, or PTX for `compute_XY`, as `format` says. Needs NVRTC, not a GPU, so builds without a device can
/// check the source compiles.
///
/// # Errors
/// NVRTC missing ([`ErrorKind::LibraryNotFound`]), or [`ErrorKind::KernelCompile`] with
/// the compiler's log.
pub fn compile_kernels(arch: u32, format: ImageFormat) -> Result<Image, ArenaError> {
    let n = nvrtc()?;
    let src = std::ffi::CString::new(SOURCE).expect("the kernel source has no NUL");
    let mut prog: Prog = core::ptr::null_mut();
    // SAFETY: valid out-pointer and NUL-terminated strings; no headers.
    let r = unsafe {
        (n.create)(
            &mut prog,
            src.as_ptr(),
            c"kernels.cu".as_ptr(),
            0,
            core::ptr::null(),
            core::ptr::null(),
        )
    };
    nvrtc_check(r, "nvrtcCreateProgram")?;
    let result = compile_program(n, prog, arch, format);
    // SAFETY: `prog` came from `nvrtcCreateProgram` and is destroyed once.
    let _ = unsafe { (n.destroy)(&mut prog) };
    result
}

fn compile_program(
    n: &Nvrtc,
    prog: Prog,
    arch: u32,
    format: ImageFormat,
) -> Result<Image, ArenaError> {
    let ptx = format == ImageFormat::Ptx;
    let gpu = std::format!(
        "--gpu-architecture={}_{arch}\0",
        if ptx { "compute" } else { "sm" }
    );
    let opts: [*const c_char; 4] = [
        gpu.as_ptr().cast(),
        c"--fmad=false".as_ptr(),
        c"-std=c++17".as_ptr(),
        c"--diag-suppress=550".as_ptr(),
    ];
    // SAFETY: `prog` is live; four NUL-terminated options.
    let r = unsafe { (n.compile)(prog, opts.len() as c_int, opts.as_ptr()) };
    if r != 0 {
        let mut size = 0usize;
        // SAFETY: live program, valid out-pointer.
        let _ = unsafe { (n.log_size)(prog, &mut size) };
        let mut log = std::vec![0u8; size.max(1)];
        // SAFETY: `log` has the `size` bytes NVRTC writes.
        let _ = unsafe { (n.log)(prog, log.as_mut_ptr().cast()) };
        let text = String::from_utf8_lossy(&log)
            .trim_end_matches('\0')
            .trim()
            .into();
        return Err(ErrorKind::KernelCompile {
            backend: Backend::Cuda,
            arch,
            log: intern(text),
        }
        .into());
    }
    let (size_fn, get_fn, name) = if ptx {
        (n.ptx_size, n.ptx, "nvrtcGetPTX")
    } else {
        (n.cubin_size, n.cubin, "nvrtcGetCUBIN")
    };
    let mut size = 0usize;
    // SAFETY: compiled program, valid out-pointer.
    nvrtc_check(unsafe { size_fn(prog, &mut size) }, name)?;
    let mut image = std::vec![0u8; size];
    // SAFETY: `image` has the `size` bytes NVRTC writes.
    nvrtc_check(unsafe { get_fn(prog, image.as_mut_ptr().cast()) }, name)?;
    Ok(if ptx {
        Image::Ptx(image)
    } else {
        Image::Cubin(image)
    })
}

/// The operations, in `kernels.cu`'s names; each has an `_f32` and an `_f64` kernel.
const OPS: [&str; 15] = [
    "set",
    "add",
    "scale",
    "copy",
    "plus",
    "axpy",
    "xpay",
    "sum",
    "sumsq",
    "sumabs",
    "maxabs",
    "min",
    "max",
    "dot",
    "copy_batch",
];

#[derive(Clone, Copy)]
enum Op {
    Set,
    Add,
    Scale,
    Copy,
    Plus,
    Axpy,
    Xpay,
    Sum,
    SumSq,
    SumAbs,
    MaxAbs,
    Min,
    Max,
    Dot,
    CopyBatch,
}

/// One device's loaded kernels.
struct Module {
    /// Keeps the primary context (and so the module) alive while cached.
    _ctx: Arc<Ctx>,
    funcs: Vec<sys::CUfunction>,
}

// SAFETY: module and function handles may be used from any thread with their context
// current (every launch makes it current first).
unsafe impl Send for Module {}
// SAFETY: as above; the handles are never mutated after loading.
unsafe impl Sync for Module {}

impl Module {
    fn func<T: KernelElement>(&self, op: Op) -> sys::CUfunction {
        self.funcs[op as usize * 2 + usize::from(T::NAME == "f64")]
    }
}

/// Loaded modules by device ordinal.
static MODULES: Mutex<Vec<(i32, Arc<Module>)>> = Mutex::new(Vec::new());

fn module(ctx: &Arc<Ctx>) -> Result<Arc<Module>, ArenaError> {
    let mut cache = MODULES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, m)) = cache.iter().find(|(o, _)| *o == ctx.ordinal) {
        return Ok(m.clone());
    }
    // Only a loaded module is kept: a failure (NVRTC missing, say) is retried next time.
    let loaded = Arc::new(load_module(ctx)?);
    cache.push((ctx.ordinal, loaded.clone()));
    Ok(loaded)
}

fn attribute(ctx: &Ctx, a: CUdevice_attribute) -> Result<i32, ArenaError> {
    let mut v = 0;
    // SAFETY: valid out-pointer and device.
    let r = unsafe { sys::cuDeviceGetAttribute(&mut v, a, ctx.dev) };
    check(r, "cuDeviceGetAttribute")?;
    Ok(v)
}

/// Whether the value of `$AMREX_CUDA_EMBEDDED_PTX` asks for the shipped PTX even where
/// NVRTC is there: `1` does; anything else, or unset, does not.
fn embedded_ptx_forced(value: Option<&std::ffi::OsStr>) -> bool {
    value.is_some_and(|v| v == "1")
}

/// [`EMBEDDED_PTX`] as the driver takes it (NUL-terminated).
fn embedded_ptx_image() -> Image {
    Image::Ptx(EMBEDDED_PTX.as_bytes().iter().copied().chain([0]).collect())
}

fn load_module(ctx: &Arc<Ctx>) -> Result<Module, ArenaError> {
    let major = attribute(
        ctx,
        CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
    )?;
    let minor = attribute(
        ctx,
        CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
    )?;
    let cc = major * 10 + minor;
    let forced = embedded_ptx_forced(std::env::var_os("AMREX_CUDA_EMBEDDED_PTX").as_deref());
    let image = if forced {
        // Asked for: the shipped PTX, so that the path of machines without NVRTC can be
        // run on machines that have it.
        if cc < 75 {
            return Err(ErrorKind::Unsupported(
                "AMREX_CUDA_EMBEDDED_PTX=1, but the shipped PTX needs compute capability 7.5 or newer",
            )
            .into());
        }
        embedded_ptx_image()
    } else {
        match nvrtc() {
            Ok(n) => {
                let archs = supported_archs(n)?;
                if archs.contains(&cc) {
                    compile_kernels(cc as u32, ImageFormat::Cubin)?
                } else {
                    let newest = archs.iter().copied().filter(|&a| a <= cc).max().ok_or(
                        ArenaError::new(ErrorKind::Unsupported(
                            "this NVRTC knows no architecture at or below the device's compute capability",
                        )),
                    )?;
                    compile_kernels(newest as u32, ImageFormat::Ptx)?
                }
            }
            // No NVRTC on this machine: the PTX shipped with the library, which the driver
            // compiles for the device (any driver from CUDA 11.0 on, any GPU from sm_75 on).
            Err(e) if matches!(e.kind(), ErrorKind::LibraryNotFound { .. }) && cc >= 75 => {
                embedded_ptx_image()
            }
            Err(e) => return Err(e),
        }
    };
    ctx.make_current()?;
    let mut m: sys::CUmodule = core::ptr::null_mut();
    // SAFETY: valid out-pointer; the image is a complete CUBIN or NUL-terminated PTX that
    // outlives the call (the driver copies it).
    let r = unsafe { sys::cuModuleLoadData(&mut m, image.bytes().as_ptr().cast()) };
    check(r, "cuModuleLoadData")?;
    let mut funcs = Vec::with_capacity(OPS.len() * 2);
    for op in OPS {
        for t in ["f32", "f64"] {
            let name = std::ffi::CString::new(std::format!("{op}_{t}")).expect("no NUL");
            let mut f: sys::CUfunction = core::ptr::null_mut();
            // SAFETY: valid out-pointer, loaded module, NUL-terminated name.
            let r = unsafe { sys::cuModuleGetFunction(&mut f, m, name.as_ptr()) };
            check(r, "cuModuleGetFunction")?;
            funcs.push(f);
        }
    }
    Ok(Module {
        _ctx: ctx.clone(),
        funcs,
    })
}

/// `kernels.cu`'s `Reg<T>`: 64 bytes, passed by value.
#[repr(C)]
#[derive(Clone, Copy)]
struct RegionArg {
    p: u64,
    len: [u64; 4],
    stride: [u64; 3],
}

const _: () = assert!(core::mem::size_of::<RegionArg>() == 64);

impl From<Region> for RegionArg {
    fn from(r: Region) -> Self {
        Self {
            p: dptr(r.ptr),
            len: r.len.map(|l| l as u64),
            stride: r.stride.map(|s| s as u64),
        }
    }
}

/// 32 x 4 threads per block, as `kernels.cu` assumes (its shared arrays hold 128).
const BLOCK: (u32, u32) = (32, 4);

/// A grid over `r` with at most `cap_x` x `cap_y` blocks.
fn grid(r: &Region, cap_x: u32, cap_y: u32) -> (u32, u32) {
    let rows = r.len[1] * r.len[2] * r.len[3];
    let gx = r.len[0].div_ceil(BLOCK.0 as usize).clamp(1, cap_x as usize) as u32;
    let gy = rows.div_ceil(BLOCK.1 as usize).clamp(1, cap_y as usize) as u32;
    (gx, gy)
}

/// Device scratch memory of one call (reduction partials, copy descriptors).
struct Scratch {
    ptr: sys::CUdeviceptr,
}

impl Scratch {
    fn new(bytes: usize) -> Result<Self, ArenaError> {
        let mut ptr = 0;
        // SAFETY: valid out-pointer, non-zero size, the caller made the context current.
        let r = unsafe { sys::cuMemAlloc_v2(&mut ptr, bytes.max(1)) };
        check(r, "cuMemAlloc")?;
        Ok(Self { ptr })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // SAFETY: our allocation; every user of it synchronised the stream before the drop
        // (the partials were copied back, the copy kernels waited for).
        let _ = unsafe { sys::cuMemFree_v2(self.ptr) };
    }
}

/// The legacy default stream, which every launch uses.
fn legacy() -> sys::CUstream {
    core::ptr::null_mut()
}

/// Makes the consumer's `stream` (a `CUstream` handle) wait for all work queued so far on
/// the legacy default stream of device `ordinal`, as the DLPack `__dlpack__(stream=...)`
/// rule asks of a producer. `1` (the legacy stream) and `2` (per-thread default, which
/// synchronises with the legacy stream) need nothing.
///
/// # Safety
/// `stream` is `1`, `2` or a live `CUstream` of that device's primary context.
///
/// # Errors
/// The driver's failure.
pub unsafe fn wait_on_stream(ordinal: i32, stream: usize) -> Result<(), ArenaError> {
    if stream == 1 || stream == 2 {
        return Ok(());
    }
    let ctx = Ctx::new(ordinal)?;
    ctx.make_current()?;
    let mut ev: sys::CUevent = core::ptr::null_mut();
    // SAFETY: valid out-pointer; 2 is CU_EVENT_DISABLE_TIMING.
    check(unsafe { sys::cuEventCreate(&mut ev, 2) }, "cuEventCreate")?;
    // SAFETY: `ev` was just created in the current context.
    let mut r = check(unsafe { sys::cuEventRecord(ev, legacy()) }, "cuEventRecord");
    if r.is_ok() {
        let s: sys::CUstream = core::ptr::with_exposed_provenance_mut(stream);
        // SAFETY: the caller's obligation: `s` is a live stream of this context.
        r = check(
            unsafe { sys::cuStreamWaitEvent(s, ev, 0) },
            "cuStreamWaitEvent",
        );
    }
    // SAFETY: destroying a recorded event is allowed before it completes.
    let _ = unsafe { sys::cuEventDestroy_v2(ev) };
    r
}

macro_rules! cuda_kernels {
    ($($t:ty),+) => {$(
        impl $t {
            fn module(&self) -> Result<Arc<Module>, ArenaError> {
                let m = module(&self.ctx)?;
                self.ctx.make_current()?;
                Ok(m)
            }

            /// Launches `f` over a `gx x gy x gz` grid.
            ///
            /// # Safety
            /// `params` match the kernel's parameters and their memory obligations hold.
            unsafe fn launch(
                &self,
                f: sys::CUfunction,
                (gx, gy, gz): (u32, u32, u32),
                params: &mut [*mut c_void],
            ) -> Result<(), ArenaError> {
                // SAFETY: the caller's obligation; the block shape is the one the kernels
                // are written for; the context is current (`module`).
                let r = unsafe {
                    sys::cuLaunchKernel(
                        f, gx, gy, gz, BLOCK.0, BLOCK.1, 1, 0, legacy(),
                        params.as_mut_ptr(), core::ptr::null_mut(),
                    )
                };
                check(r, "cuLaunchKernel")?;
                // Managed memory may be touched by the host right after a call.
                if self.kind() == MemoryKind::Managed {
                    self.synchronize()?;
                }
                Ok(())
            }

            /// Reduces with kernel `op` over `x` (and `y` for `dot`), folding the blocks'
            /// partials on the host in block order.
            ///
            /// # Safety
            /// As [`Kernels::reduce`].
            unsafe fn partials<T: KernelElement>(
                &self,
                op: Op,
                fold: Reduce,
                x: Region,
                y: Option<Region>,
            ) -> Result<f64, ArenaError> {
                if x.is_empty() {
                    return Ok(fold.identity());
                }
                let m = self.module()?;
                let (gx, gy) = grid(&x, 4, 1024);
                let blocks = (gx * gy) as usize;
                let out = Scratch::new(blocks * 8)?;
                let mut xa = RegionArg::from(x);
                let mut ya = y.map(RegionArg::from);
                let mut optr = out.ptr;
                let mut params: Vec<*mut c_void> = std::vec![(&raw mut xa).cast()];
                if let Some(ya) = ya.as_mut() {
                    params.push((ya as *mut RegionArg).cast());
                }
                params.push((&raw mut optr).cast());
                // SAFETY: the kernel takes (Reg<T>[, Reg<T>], double*); `out` holds one
                // double per block; the caller's obligations cover the regions.
                unsafe { self.launch(m.func::<T>(op), (gx, gy, 1), &mut params)? };
                let mut host = std::vec![0f64; blocks];
                // SAFETY: `out` holds `blocks` doubles; the copy waits for the kernel (it
                // runs on the legacy stream, which the copy synchronises with).
                let r = unsafe {
                    sys::cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), out.ptr, blocks * 8)
                };
                check(r, "cuMemcpyDtoH")?;
                Ok(host.into_iter().fold(fold.identity(), |a, b| fold.fold(a, b)))
            }
        }

        impl Kernels for $t {
            unsafe fn apply<T: KernelElement>(&self, dst: Region, op: Unary<T>) -> Result<(), ArenaError> {
                if dst.is_empty() {
                    return Ok(());
                }
                let m = self.module()?;
                let (kernel, mut v) = match op {
                    Unary::Set(v) => (Op::Set, v),
                    Unary::Add(v) => (Op::Add, v),
                    Unary::Scale(v) => (Op::Scale, v),
                };
                let mut d = RegionArg::from(dst);
                let mut params: [*mut c_void; 2] = [(&raw mut d).cast(), (&raw mut v).cast()];
                let (gx, gy) = grid(&dst, 64, 65535);
                // SAFETY: the kernel takes (Reg<T>, T); the caller's obligations cover
                // the region.
                unsafe { self.launch(m.func::<T>(kernel), (gx, gy, 1), &mut params) }
            }

            unsafe fn combine<T: KernelElement>(&self, dst: Region, src: Region, op: Binary<T>) -> Result<(), ArenaError> {
                dst.check_same_shape(&src)?;
                if dst.is_empty() {
                    return Ok(());
                }
                let m = self.module()?;
                let (kernel, mut a) = match op {
                    Binary::Copy => (Op::Copy, T::ZERO),
                    Binary::Add => (Op::Plus, T::ZERO),
                    Binary::Axpy(a) => (Op::Axpy, a),
                    Binary::Xpay(a) => (Op::Xpay, a),
                };
                let (mut d, mut s) = (RegionArg::from(dst), RegionArg::from(src));
                let mut params: [*mut c_void; 3] =
                    [(&raw mut d).cast(), (&raw mut s).cast(), (&raw mut a).cast()];
                let (gx, gy) = grid(&dst, 64, 65535);
                // SAFETY: the kernel takes (Reg<T>, Reg<T>, T); the caller's obligations
                // cover the regions.
                unsafe { self.launch(m.func::<T>(kernel), (gx, gy, 1), &mut params) }
            }

            unsafe fn reduce<T: KernelElement>(&self, src: Region, op: Reduce) -> Result<f64, ArenaError> {
                let kernel = match op {
                    Reduce::Sum => Op::Sum,
                    Reduce::SumSquares => Op::SumSq,
                    Reduce::SumAbs => Op::SumAbs,
                    Reduce::MaxAbs => Op::MaxAbs,
                    Reduce::Min => Op::Min,
                    Reduce::Max => Op::Max,
                };
                // SAFETY: forwarded obligations.
                unsafe { self.partials::<T>(kernel, op, src, None) }
            }

            unsafe fn dot<T: KernelElement>(&self, x: Region, y: Region) -> Result<f64, ArenaError> {
                x.check_same_shape(&y)?;
                // SAFETY: forwarded obligations.
                unsafe { self.partials::<T>(Op::Dot, Reduce::Sum, x, Some(y)) }
            }

            unsafe fn copy_regions<T: KernelElement>(&self, pairs: &[(Region, Region)], order: CopyOrder) -> Result<(), ArenaError> {
                for (d, s) in pairs {
                    d.check_same_shape(s)?;
                }
                if order == CopyOrder::InOrder {
                    for &(d, s) in pairs {
                        // SAFETY: forwarded obligations; one launch per pair on one
                        // stream runs them in order.
                        unsafe { self.combine::<T>(d, s, Binary::Copy)? };
                    }
                    return Ok(());
                }
                let pairs: Vec<[RegionArg; 2]> = pairs
                    .iter()
                    .filter(|(d, _)| !d.is_empty())
                    .map(|&(d, s)| [d.into(), s.into()])
                    .collect();
                if pairs.is_empty() {
                    return Ok(());
                }
                let m = self.module()?;
                let (mut ni, mut rows) = (1u64, 1u64);
                for [d, _] in &pairs {
                    ni = ni.max(d.len[0]);
                    rows = rows.max(d.len[1] * d.len[2] * d.len[3]);
                }
                let gx = ni.div_ceil(u64::from(BLOCK.0)).min(8) as u32;
                let gy = rows.div_ceil(u64::from(BLOCK.1)).min(64) as u32;
                let gz = pairs.len().min(65535) as u32;
                let bytes = pairs.len() * core::mem::size_of::<[RegionArg; 2]>();
                let buf = Scratch::new(bytes)?;
                // SAFETY: `buf` holds `bytes` bytes; `pairs` is that many readable bytes.
                let r = unsafe { sys::cuMemcpyHtoD_v2(buf.ptr, pairs.as_ptr().cast(), bytes) };
                check(r, "cuMemcpyHtoD")?;
                let (mut p, mut n) = (buf.ptr, pairs.len() as u64);
                let mut params: [*mut c_void; 2] = [(&raw mut p).cast(), (&raw mut n).cast()];
                // SAFETY: the kernel takes (const Pair<T>*, u64); `buf` holds `n` pairs;
                // the caller's obligations cover every region and their disjointness.
                unsafe { self.launch(m.func::<T>(Op::CopyBatch), (gx, gy, gz), &mut params)? };
                // `buf` is freed on return: wait for the kernel reading it.
                // SAFETY: the legacy stream of the current context.
                check(unsafe { sys::cuStreamSynchronize(legacy()) }, "cuStreamSynchronize")
            }
        }
    )+};
}

cuda_kernels!(CudaDeviceArena, CudaManagedArena);

crate::kernels::host_kernels!(super::CudaPinnedArena);

#[cfg(test)]
mod tests {
    use super::{Image, ImageFormat, compile_kernels, nvrtc_version};
    use crate::ErrorKind;

    /// Compiles the kernels with NVRTC when it is present (no GPU needed): a CUBIN for
    /// three architectures and PTX for the oldest, so a broken `kernels.cu` fails here.
    #[test]
    #[cfg_attr(miri, ignore = "FFI")]
    fn kernels_compile_with_nvrtc() {
        match nvrtc_version() {
            Err(e) if matches!(e.kind(), ErrorKind::LibraryNotFound { .. }) => {
                // The test suite's script requires it (it installs NVRTC's wheel).
                assert!(
                    std::env::var_os("AMREX_REQUIRE_NVRTC").is_none(),
                    "AMREX_REQUIRE_NVRTC is set but {e}"
                );
                std::eprintln!("skipped kernels_compile_with_nvrtc: {e}");
                return;
            }
            Err(e) => panic!("NVRTC: {e}"),
            Ok(v) => std::eprintln!("NVRTC {v:?}"),
        }
        for arch in [75, 80, 90] {
            match compile_kernels(arch, ImageFormat::Cubin).unwrap_or_else(|e| panic!("{e}")) {
                Image::Cubin(b) => assert_eq!(&b[..4], b"\x7fELF", "sm_{arch}: not an ELF"),
                Image::Ptx(_) => panic!("asked for a CUBIN"),
            }
        }
        let Image::Ptx(ptx) = compile_kernels(75, ImageFormat::Ptx).unwrap() else {
            panic!("asked for PTX")
        };
        let text = std::string::String::from_utf8_lossy(&ptx);
        for op in super::OPS {
            for t in ["f32", "f64"] {
                assert!(
                    text.contains(&std::format!(".entry {op}_{t}(")),
                    "{op}_{t} missing"
                );
            }
        }
        // No fused multiply-add: the element-wise kernels round as the host does.
        let axpy = text.split(".entry axpy_f64(").nth(1).unwrap();
        let axpy = axpy.split(".entry").next().unwrap();
        assert!(
            !axpy.contains("fma.rn.f64"),
            "axpy_f64 contracted to an FMA"
        );
        assert!(axpy.contains("mul.rn.f64") && axpy.contains("add.rn.f64"));
    }

    /// The shipped PTX is the source compiled (with the NVRTC it was made with; another
    /// NVRTC version emits other text, and the comparison is skipped, saying so).
    #[test]
    #[cfg_attr(miri, ignore = "FFI")]
    fn embedded_ptx_is_the_compiled_source() {
        let Ok(version) = nvrtc_version() else {
            std::eprintln!("skipped embedded_ptx_is_the_compiled_source: no NVRTC");
            return;
        };
        let Image::Ptx(ptx) = compile_kernels(75, ImageFormat::Ptx).unwrap() else {
            panic!("asked for PTX")
        };
        let fresh = super::lowered_ptx(&ptx);
        if std::env::var_os("AMREX_BLESS_PTX").is_some() {
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/backend/cuda/kernels.ptx");
            std::fs::write(path, &fresh).unwrap();
            return;
        }
        if version != (12, 9) {
            std::eprintln!(
                "skipped embedded_ptx_is_the_compiled_source: NVRTC {version:?}, the PTX was made by 12.9"
            );
            return;
        }
        assert!(
            fresh == super::EMBEDDED_PTX,
            "kernels.ptx is not kernels.cu compiled: run AMREX_BLESS_PTX=1 cargo test -p amrex-arena --features cuda --lib embedded_ptx"
        );
        assert!(super::EMBEDDED_PTX.contains(super::EMBEDDED_PTX_VERSION));
    }

    /// Only `AMREX_CUDA_EMBEDDED_PTX=1` forces the shipped PTX.
    #[test]
    fn embedded_ptx_is_forced_by_one_only() {
        use super::embedded_ptx_forced as forced;
        assert!(forced(Some("1".as_ref())));
        for other in ["", "0", "yes", "true", " 1"] {
            assert!(!forced(Some(other.as_ref())), "{other:?}");
        }
        assert!(!forced(None));
    }

    /// The driver takes the shipped PTX NUL-terminated, and it has every entry point.
    #[test]
    fn embedded_ptx_image_is_nul_terminated() {
        let Image::Ptx(bytes) = super::embedded_ptx_image() else {
            panic!("not PTX")
        };
        assert_eq!(bytes.last(), Some(&0));
        assert_eq!(bytes.iter().filter(|&&b| b == 0).count(), 1);
        let text = core::str::from_utf8(&bytes[..bytes.len() - 1]).unwrap();
        for op in super::OPS {
            for t in ["f32", "f64"] {
                assert!(text.contains(&std::format!(".entry {op}_{t}(")), "{op}_{t}");
            }
        }
    }

    /// `ptxas` (CUDA's assembler, `$AMREX_PTXAS`) accepts the shipped PTX, with its
    /// lowered `.version`, for the oldest and the newest architectures it targets.
    #[test]
    #[cfg_attr(miri, ignore = "runs a program")]
    fn embedded_ptx_assembles() {
        let Some(ptxas) = std::env::var_os("AMREX_PTXAS") else {
            std::eprintln!("skipped embedded_ptx_assembles: AMREX_PTXAS is not set");
            return;
        };
        let dir = std::env::temp_dir().join(std::format!("amrex-ptx-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let input = dir.join("kernels.ptx");
        std::fs::write(&input, super::EMBEDDED_PTX).unwrap();
        for arch in ["sm_75", "sm_90"] {
            let out = std::process::Command::new(&ptxas)
                .args(["--gpu-name", arch, "-o"])
                .arg(dir.join(std::format!("{arch}.cubin")))
                .arg(&input)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "ptxas {arch}: {}",
                std::string::String::from_utf8_lossy(&out.stderr)
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
