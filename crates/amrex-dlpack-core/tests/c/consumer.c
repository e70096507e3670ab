/*
 * C side of amrex-dlpack-core's interop test (tests/c_interop.rs).
 *
 * Compiled at test time against the official dlpack.h shipped in the apache-tvm-ffi wheel
 * (never copied into this repository). It plays both roles:
 *   - a consumer that checks every field of tensors Rust exported through `into_raw`,
 *     writes through them and calls their deleter;
 *   - a producer whose tensors Rust imports with `from_raw`, counting deleter calls.
 * Check functions return 0 on success or the source line of the first failed check.
 */
#include <dlpack/dlpack.h>

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* ----------------------------------------------------------------- layout, at compile time */

_Static_assert(sizeof(DLPackVersion) == 8, "DLPackVersion size");
_Static_assert(offsetof(DLPackVersion, major) == 0, "major");
_Static_assert(offsetof(DLPackVersion, minor) == 4, "minor");
_Static_assert(sizeof(DLDevice) == 8, "DLDevice size");
_Static_assert(offsetof(DLDevice, device_type) == 0, "device_type");
_Static_assert(offsetof(DLDevice, device_id) == 4, "device_id");
_Static_assert(sizeof(DLDataType) == 4, "DLDataType size");
_Static_assert(offsetof(DLDataType, code) == 0, "code");
_Static_assert(offsetof(DLDataType, bits) == 1, "bits");
_Static_assert(offsetof(DLDataType, lanes) == 2, "lanes");
#if UINTPTR_MAX == 0xffffffffffffffffu
_Static_assert(sizeof(DLTensor) == 48, "DLTensor size");
_Static_assert(offsetof(DLTensor, data) == 0, "data");
_Static_assert(offsetof(DLTensor, device) == 8, "device");
_Static_assert(offsetof(DLTensor, ndim) == 16, "ndim");
_Static_assert(offsetof(DLTensor, dtype) == 20, "dtype");
_Static_assert(offsetof(DLTensor, shape) == 24, "shape");
_Static_assert(offsetof(DLTensor, strides) == 32, "strides");
_Static_assert(offsetof(DLTensor, byte_offset) == 40, "byte_offset");
_Static_assert(sizeof(DLManagedTensor) == 64, "DLManagedTensor size");
_Static_assert(offsetof(DLManagedTensor, dl_tensor) == 0, "dl_tensor");
_Static_assert(offsetof(DLManagedTensor, manager_ctx) == 48, "manager_ctx");
_Static_assert(offsetof(DLManagedTensor, deleter) == 56, "deleter");
_Static_assert(sizeof(DLManagedTensorVersioned) == 80, "DLManagedTensorVersioned size");
_Static_assert(offsetof(DLManagedTensorVersioned, version) == 0, "version");
_Static_assert(offsetof(DLManagedTensorVersioned, manager_ctx) == 8, "manager_ctx");
_Static_assert(offsetof(DLManagedTensorVersioned, deleter) == 16, "deleter");
_Static_assert(offsetof(DLManagedTensorVersioned, flags) == 24, "flags");
_Static_assert(offsetof(DLManagedTensorVersioned, dl_tensor) == 32, "dl_tensor");
#endif

/* ----------------------------------------------------------------- layout, reported to Rust */

/* Sizes, alignments and offsets in the order tests/c_interop.rs lists them. */
size_t amrex_c_layout(size_t *out, size_t cap) {
  const size_t v[] = {
      sizeof(DLPackVersion), alignof(DLPackVersion),
      offsetof(DLPackVersion, major), offsetof(DLPackVersion, minor),
      sizeof(DLDevice), alignof(DLDevice),
      offsetof(DLDevice, device_type), offsetof(DLDevice, device_id),
      sizeof(DLDataType), alignof(DLDataType),
      offsetof(DLDataType, code), offsetof(DLDataType, bits), offsetof(DLDataType, lanes),
      sizeof(DLTensor), alignof(DLTensor),
      offsetof(DLTensor, data), offsetof(DLTensor, device), offsetof(DLTensor, ndim),
      offsetof(DLTensor, dtype), offsetof(DLTensor, shape), offsetof(DLTensor, strides),
      offsetof(DLTensor, byte_offset),
      sizeof(DLManagedTensor), alignof(DLManagedTensor),
      offsetof(DLManagedTensor, dl_tensor), offsetof(DLManagedTensor, manager_ctx),
      offsetof(DLManagedTensor, deleter),
      sizeof(DLManagedTensorVersioned), alignof(DLManagedTensorVersioned),
      offsetof(DLManagedTensorVersioned, version),
      offsetof(DLManagedTensorVersioned, manager_ctx),
      offsetof(DLManagedTensorVersioned, deleter),
      offsetof(DLManagedTensorVersioned, flags),
      offsetof(DLManagedTensorVersioned, dl_tensor),
  };
  size_t n = sizeof v / sizeof v[0];
  for (size_t i = 0; i < n && i < cap; ++i) out[i] = v[i];
  return n;
}

/* Every constant of the header, in the order tests/c_interop.rs lists them. */
size_t amrex_c_constants(int64_t *out, size_t cap) {
  const int64_t v[] = {
      DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION,
      kDLCPU, kDLCUDA, kDLCUDAHost, kDLOpenCL, kDLVulkan, kDLMetal, kDLVPI, kDLROCM,
      kDLROCMHost, kDLExtDev, kDLCUDAManaged, kDLOneAPI, kDLWebGPU, kDLHexagon, kDLMAIA,
      kDLTrn,
      kDLInt, kDLUInt, kDLFloat, kDLOpaqueHandle, kDLBfloat, kDLComplex, kDLBool,
      kDLFloat8_e3m4, kDLFloat8_e4m3, kDLFloat8_e4m3b11fnuz, kDLFloat8_e4m3fn,
      kDLFloat8_e4m3fnuz, kDLFloat8_e5m2, kDLFloat8_e5m2fnuz, kDLFloat8_e8m0fnu,
      kDLFloat6_e2m3fn, kDLFloat6_e3m2fn, kDLFloat4_e2m1fn,
      (int64_t)DLPACK_FLAG_BITMASK_READ_ONLY, (int64_t)DLPACK_FLAG_BITMASK_IS_COPIED,
      (int64_t)DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED,
  };
  size_t n = sizeof v / sizeof v[0];
  for (size_t i = 0; i < n && i < cap; ++i) out[i] = v[i];
  return n;
}

/* ----------------------------------------------------------------- consumer */

#define CHECK(cond)            \
  do {                         \
    if (!(cond)) return __LINE__; \
  } while (0)

/*
 * Expects exactly what Rust exports for a 3x4 C-ordered f64 array holding 10*i + j:
 * version 1.3, flags 0, a deleter, CPU device 0, ndim 2, float64 x1, shape {3, 4},
 * strides {4, 1}, byte_offset 0. Negates every element through the strides, then calls
 * the deleter (as the consumer that took ownership). Checks happen before the deleter
 * runs; on failure the deleter is still called, so nothing leaks.
 */
static int check_f64_3x4(DLManagedTensorVersioned *t) {
  CHECK(t != NULL);
  CHECK(t->version.major == DLPACK_MAJOR_VERSION);
  CHECK(t->version.minor == 3);
  CHECK(t->flags == 0);
  CHECK(t->deleter != NULL);
  CHECK(t->manager_ctx != NULL);
  const DLTensor *dl = &t->dl_tensor;
  CHECK(dl->data != NULL);
  CHECK(dl->device.device_type == kDLCPU);
  CHECK(dl->device.device_id == 0);
  CHECK(dl->ndim == 2);
  CHECK(dl->dtype.code == kDLFloat);
  CHECK(dl->dtype.bits == 64);
  CHECK(dl->dtype.lanes == 1);
  CHECK(dl->shape != NULL && dl->shape[0] == 3 && dl->shape[1] == 4);
  CHECK(dl->strides != NULL && dl->strides[0] == 4 && dl->strides[1] == 1);
  CHECK(dl->byte_offset == 0);
  CHECK(((uintptr_t)dl->data) % alignof(double) == 0);
  double *first = (double *)((char *)dl->data + dl->byte_offset);
  for (int64_t i = 0; i < dl->shape[0]; ++i)
    for (int64_t j = 0; j < dl->shape[1]; ++j) {
      double *p = first + i * dl->strides[0] + j * dl->strides[1];
      CHECK(*p == (double)(10 * i + j));
      *p = -*p;
    }
  return 0;
}

int amrex_c_consume_f64_3x4(DLManagedTensorVersioned *t) {
  int rc = check_f64_3x4(t);
  if (t != NULL && t->deleter != NULL) t->deleter(t);
  return rc;
}

/*
 * Sums an int32 tensor of any rank <= 8 by walking its strides (NULL strides = C order),
 * checks its flags and dtype, and calls the deleter. Used for READ_ONLY, negative-stride
 * and scalar exports.
 */
static int sum_i32(const DLTensor *dl, int64_t *sum) {
  CHECK(dl->ndim >= 0 && dl->ndim <= 8);
  CHECK(dl->device.device_type == kDLCPU && dl->device.device_id == 0);
  CHECK(dl->dtype.code == kDLInt && dl->dtype.bits == 32 && dl->dtype.lanes == 1);
  CHECK(dl->ndim == 0 || dl->shape != NULL);
  int64_t strides[8], idx[8] = {0}, count = 1;
  for (int a = dl->ndim - 1; a >= 0; --a) {
    strides[a] = dl->strides ? dl->strides[a] : (a == dl->ndim - 1 ? 1 : strides[a + 1] * dl->shape[a + 1]);
    count *= dl->shape[a];
  }
  *sum = 0;
  if (count == 0) return 0;
  const int32_t *first = (const int32_t *)((const char *)dl->data + dl->byte_offset);
  for (int64_t n = 0; n < count; ++n) {
    int64_t off = 0;
    for (int a = 0; a < dl->ndim; ++a) off += idx[a] * strides[a];
    *sum += first[off];
    for (int a = dl->ndim - 1; a >= 0; --a) {
      if (++idx[a] < dl->shape[a]) break;
      idx[a] = 0;
    }
  }
  return 0;
}

int amrex_c_consume_sum_i32(DLManagedTensorVersioned *t, uint64_t expected_flags,
                            int64_t *sum) {
  int rc = 0;
  if (t == NULL) return __LINE__;
  if (t->version.major != DLPACK_MAJOR_VERSION) rc = __LINE__;
  else if (t->flags != expected_flags) rc = __LINE__;
  else if (t->dl_tensor.ndim > 0 && t->dl_tensor.strides == NULL) rc = __LINE__;
  else rc = sum_i32(&t->dl_tensor, sum);
  if (t->deleter != NULL) t->deleter(t);
  return rc;
}

int amrex_c_consume_legacy_sum_i32(DLManagedTensor *t, int64_t *sum) {
  if (t == NULL) return __LINE__;
  int rc = sum_i32(&t->dl_tensor, sum);
  if (t->deleter != NULL) t->deleter(t);
  return rc;
}

/* ----------------------------------------------------------------- producer */

/*
 * One malloc block per tensor: the header first (so the deleter can free the block from
 * the pointer it gets), then extents, strides and data. `counter` is incremented by the
 * deleter; the test reads it.
 */
typedef struct {
  DLManagedTensorVersioned managed;
  int *counter;
  int64_t shape[2];
  int64_t strides[2];
  int32_t data[8];
} Produced;

static void produced_deleter(DLManagedTensorVersioned *self) {
  Produced *p = (Produced *)self->manager_ctx;
  *p->counter += 1;
  free(p);
}

/*
 * A 2x3 int32 tensor in Fortran order (strides {1, 2}) whose element (i, j) is 100*i + j,
 * placed after two padding elements reached through byte_offset = 8. data[0..2] hold
 * sentinels -1 that a consumer ignoring byte_offset would read.
 */
DLManagedTensorVersioned *amrex_c_produce(uint32_t major, uint32_t minor, uint64_t flags,
                                          int *counter) {
  Produced *p = (Produced *)calloc(1, sizeof(Produced));
  if (p == NULL) return NULL;
  p->counter = counter;
  p->shape[0] = 2;
  p->shape[1] = 3;
  p->strides[0] = 1;
  p->strides[1] = 2;
  p->data[0] = -1;
  p->data[1] = -1;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) p->data[2 + i * 1 + j * 2] = 100 * i + j;
  p->managed.version.major = major;
  p->managed.version.minor = minor;
  p->managed.manager_ctx = p;
  p->managed.deleter = produced_deleter;
  p->managed.flags = flags;
  DLTensor *dl = &p->managed.dl_tensor;
  dl->data = p->data;
  dl->device.device_type = kDLCPU;
  dl->device.device_id = 0;
  dl->ndim = 2;
  dl->dtype.code = kDLInt;
  dl->dtype.bits = 32;
  dl->dtype.lanes = 1;
  dl->shape = p->shape;
  dl->strides = p->strides;
  dl->byte_offset = 2 * sizeof(int32_t);
  return &p->managed;
}

typedef struct {
  DLManagedTensor managed;
  int *counter;
  int64_t shape[2];
  float data[4];
} ProducedLegacy;

static void produced_legacy_deleter(DLManagedTensor *self) {
  ProducedLegacy *p = (ProducedLegacy *)self->manager_ctx;
  *p->counter += 1;
  free(p);
}

/* A legacy 2x2 float32 tensor with NULL strides (compact row-major): 0.5, 1.5, 2.5, 3.5. */
DLManagedTensor *amrex_c_produce_legacy(int *counter) {
  ProducedLegacy *p = (ProducedLegacy *)calloc(1, sizeof(ProducedLegacy));
  if (p == NULL) return NULL;
  p->counter = counter;
  p->shape[0] = 2;
  p->shape[1] = 2;
  for (int k = 0; k < 4; ++k) p->data[k] = (float)k + 0.5f;
  p->managed.manager_ctx = p;
  p->managed.deleter = produced_legacy_deleter;
  DLTensor *dl = &p->managed.dl_tensor;
  dl->data = p->data;
  dl->device.device_type = kDLCPU;
  dl->ndim = 2;
  dl->dtype.code = kDLFloat;
  dl->dtype.bits = 32;
  dl->dtype.lanes = 1;
  dl->shape = p->shape;
  dl->strides = NULL;
  dl->byte_offset = 0;
  return &p->managed;
}
