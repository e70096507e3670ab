/* Calls a DLPack 1.3 exchange API table (DLPackExchangeAPI) directly, as a C consumer
 * would, compiled against the official dlpack.h (tvm-ffi ships it). Loaded by
 * test_exchange_api.py with ctypes.PyDLL, so every call runs with the GIL held, as the
 * header requires. Python objects travel as opaque void pointers: no Python headers. */
#include <dlpack/dlpack.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static char last_error[256];

static void set_error(void *ctx, const char *kind, const char *message) {
  int *calls = (int *)ctx;
  *calls += 1;
  snprintf(last_error, sizeof last_error, "%s: %s", kind, message);
}

const char *exchange_last_error(void) { return last_error; }

int exchange_version(const DLPackExchangeAPI *api, uint32_t *major, uint32_t *minor,
                     int *has_dltensor_fn) {
  *major = api->header.version.major;
  *minor = api->header.version.minor;
  *has_dltensor_fn = api->dltensor_from_py_object_no_sync != NULL;
  return api->header.prev_api == NULL ? 0 : 1;
}

/* Exports `obj`, writes ndim, shape, strides, flags and the sum of its float64 elements
 * (rank 1 or 2 compact views are summed with strides), then releases it. */
int exchange_export_sum(const DLPackExchangeAPI *api, void *obj, int64_t *ndim,
                        int64_t *shape, int64_t *strides, uint64_t *flags, double *sum,
                        void **data) {
  DLManagedTensorVersioned *t = NULL;
  if (api->managed_tensor_from_py_object_no_sync(obj, &t) != 0) return -1;
  if (t == NULL || t->version.major != 1) return -2;
  DLTensor *d = &t->dl_tensor;
  *ndim = d->ndim;
  *flags = t->flags;
  *data = d->data;
  for (int i = 0; i < d->ndim; i++) {
    shape[i] = d->shape[i];
    strides[i] = d->strides[i];
  }
  *sum = 0.0;
  if (d->dtype.code == kDLFloat && d->dtype.bits == 64 && d->ndim == 1) {
    const double *p = (const double *)((const char *)d->data + d->byte_offset);
    for (int64_t i = 0; i < d->shape[0]; i++) *sum += p[i * d->strides[0]];
  }
  if (t->deleter) t->deleter(t);
  return 0;
}

/* Exports `obj` and keeps the tensor: the caller gets it back from exchange_release. */
DLManagedTensorVersioned *exchange_export_keep(const DLPackExchangeAPI *api, void *obj) {
  DLManagedTensorVersioned *t = NULL;
  if (api->managed_tensor_from_py_object_no_sync(obj, &t) != 0) return NULL;
  return t;
}

void exchange_release(DLManagedTensorVersioned *t) {
  if (t && t->deleter) t->deleter(t);
}

/* Allocates a float64 tensor of shape (rows, cols) on `device_type`, checks it is zeroed
 * and compact, fills it with 10 * i + j, and hands it to the producer's
 * managed_tensor_to_py_object_no_sync. Returns the set_error calls on failure (< 0). */
int exchange_allocate(const DLPackExchangeAPI *api, int device_type, int64_t rows,
                      int64_t cols, void **out_obj) {
  int64_t shape[2] = {rows, cols};
  DLTensor proto;
  memset(&proto, 0, sizeof proto);
  proto.device.device_type = (DLDeviceType)device_type;
  proto.ndim = 2;
  proto.dtype.code = kDLFloat;
  proto.dtype.bits = 64;
  proto.dtype.lanes = 1;
  proto.shape = shape;
  DLManagedTensorVersioned *t = NULL;
  int calls = 0;
  if (api->managed_tensor_allocator(&proto, &t, &calls, set_error) != 0) return -calls - 1;
  DLTensor *d = &t->dl_tensor;
  if (d->ndim != 2 || d->shape[0] != rows || d->shape[1] != cols) return 1;
  if (d->strides[0] != cols || d->strides[1] != 1) return 2;
  double *p = (double *)d->data;
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++) {
      if (p[i * cols + j] != 0.0) return 3;
      p[i * cols + j] = 10.0 * (double)i + (double)j;
    }
  return api->managed_tensor_to_py_object_no_sync(t, out_obj) == 0 ? 0 : 4;
}

int exchange_stream(const DLPackExchangeAPI *api, int device_type, void **stream) {
  *stream = (void *)1;
  return api->current_work_stream((DLDeviceType)device_type, 0, stream);
}

#include <time.h>

/* ns per export + release through the table, over `n` rounds (for bench_exchange.py). */
double exchange_bench(const DLPackExchangeAPI *api, void *obj, int64_t n) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int64_t i = 0; i < n; i++) {
    DLManagedTensorVersioned *t = NULL;
    if (api->managed_tensor_from_py_object_no_sync(obj, &t) != 0) return -1.0;
    if (t->deleter) t->deleter(t);
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n;
}
