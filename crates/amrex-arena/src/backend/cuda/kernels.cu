// The CUDA kernels behind `amrex_arena::kernels::Kernels` for CUDA memory, compiled at run
// time by NVRTC (see kernels.rs beside this file). Every kernel runs a 2-D grid of
// 32 x 4 thread blocks: x walks the contiguous i axis (coalesced), y walks the rows
// (j, k, n flattened), both with grid-stride loops, so any region fits any grid.
//
// Compiled with --fmad=false: every element-wise result rounds exactly as the host loops.

typedef unsigned long long u64;

// Mirrors `RegionArg` in kernels.rs: element (i, j, k, n) is p[i + j*sj + k*sk + n*sn].
template <typename T> struct Reg {
    T* p;
    u64 ni, nj, nk, nc;
    u64 sj, sk, sn;
};

template <typename T> struct Pair {
    Reg<T> dst;
    Reg<T> src;
};

// Element offset of row `row` (j fastest, then k, then n).
template <typename T> __device__ __forceinline__ u64 row_offset(const Reg<T>& r, u64 row) {
    const u64 j = row % r.nj;
    const u64 kn = row / r.nj;
    return j * r.sj + (kn % r.nk) * r.sk + (kn / r.nk) * r.sn;
}

// Calls f(dst_offset, src_offset) for every element this thread owns.
template <typename T, typename F>
__device__ __forceinline__ void each2(const Reg<T>& d, const Reg<T>& s, F f) {
    const u64 rows = d.nj * d.nk * d.nc;
    for (u64 row = blockIdx.y * (u64)blockDim.y + threadIdx.y; row < rows;
         row += (u64)gridDim.y * blockDim.y) {
        const u64 od = row_offset(d, row), os = row_offset(s, row);
        for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < d.ni;
             i += (u64)gridDim.x * blockDim.x) {
            f(od + i, os + i);
        }
    }
}

#define UNARY(name, T, expr)                                                     \
    extern "C" __global__ void name(Reg<T> d, T v) {                             \
        each2(d, d, [&](u64 o, u64) { T x = d.p[o]; (void)x; d.p[o] = (expr); }); \
    }

#define BINARY(name, T, expr)                                                    \
    extern "C" __global__ void name(Reg<T> d, Reg<T> s, T a) {                   \
        (void)a;                                                                 \
        each2(d, s, [&](u64 od, u64 os) {                                        \
            T x = s.p[os]; T y = d.p[od]; (void)y;                               \
            d.p[od] = (expr);                                                    \
        });                                                                      \
    }

#define ELEMENTWISE(T, S)             \
    UNARY(set_##S, T, v)              \
    UNARY(add_##S, T, x + v)          \
    UNARY(scale_##S, T, x * v)        \
    BINARY(copy_##S, T, x)            \
    BINARY(plus_##S, T, y + x)        \
    BINARY(axpy_##S, T, y + a * x)    \
    BINARY(xpay_##S, T, x + a * y)

ELEMENTWISE(float, f32)
ELEMENTWISE(double, f64)

// Block-wide fold of one double per thread in shared memory, in a fixed order; thread 0
// writes the block's partial to out[block]. 128 threads per block.
template <typename Op>
__device__ __forceinline__ void block_fold(double v, double* out, Op op) {
    __shared__ double sh[128];
    const unsigned t = threadIdx.y * blockDim.x + threadIdx.x;
    sh[t] = v;
    __syncthreads();
    for (unsigned w = 64; w > 0; w >>= 1) {
        if (t < w) sh[t] = op(sh[t], sh[t + w]);
        __syncthreads();
    }
    if (t == 0) out[blockIdx.y * gridDim.x + blockIdx.x] = sh[0];
}

struct FoldSum { __device__ double operator()(double a, double b) const { return a + b; } };
struct FoldMax { __device__ double operator()(double a, double b) const { return b > a ? b : a; } };
struct FoldMin { __device__ double operator()(double a, double b) const { return b < a ? b : a; } };

#define REDUCE(name, T, init, Fold, term)                                        \
    extern "C" __global__ void name(Reg<T> s, double* out) {                     \
        Fold fold;                                                               \
        double acc = (init);                                                     \
        each2(s, s, [&](u64 o, u64) { double x = (double)s.p[o]; acc = fold(acc, (term)); }); \
        block_fold(acc, out, fold);                                              \
    }

#define REDUCTIONS(T, S)                                                         \
    REDUCE(sum_##S, T, 0.0, FoldSum, x)                                          \
    REDUCE(sumsq_##S, T, 0.0, FoldSum, x * x)                                    \
    REDUCE(sumabs_##S, T, 0.0, FoldSum, fabs(x))                                 \
    REDUCE(maxabs_##S, T, 0.0, FoldMax, fabs(x))                                 \
    REDUCE(min_##S, T, __longlong_as_double(0x7ff0000000000000ULL), FoldMin, x) \
    REDUCE(max_##S, T, -__longlong_as_double(0x7ff0000000000000ULL), FoldMax, x) \
    extern "C" __global__ void dot_##S(Reg<T> x, Reg<T> y, double* out) {      \
        double acc = 0.0;                                                        \
        each2(x, y, [&](u64 ox, u64 oy) { acc += (double)x.p[ox] * (double)y.p[oy]; }); \
        block_fold(acc, out, FoldSum());                                         \
    }

REDUCTIONS(float, f32)
REDUCTIONS(double, f64)

// Copies pairs[z] for z = blockIdx.z, blockIdx.z + gridDim.z, ...; destinations of one
// batch do not overlap, so the pairs run concurrently.
#define COPY_BATCH(T, S)                                                         \
    extern "C" __global__ void copy_batch_##S(const Pair<T>* pairs, u64 n) {    \
        for (u64 z = blockIdx.z; z < n; z += gridDim.z) {                        \
            const Reg<T> d = pairs[z].dst, s = pairs[z].src;                     \
            each2(d, s, [&](u64 od, u64 os) { d.p[od] = s.p[os]; });             \
        }                                                                        \
    }

COPY_BATCH(float, f32)
COPY_BATCH(double, f64)
