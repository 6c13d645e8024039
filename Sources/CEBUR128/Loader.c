/* The ebur128_ functions hark calls, each forwarding to libebur128.so.1, which is opened on the
   first cebur_load() rather than by the loader at every start: only the library's loudness
   measurement (the indexer's background thread, `hark library scan`) uses it. The declarations
   come from ebur128.h, so the compiler checks each forwarder against the real signature. */
#include "CEBUR128.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define EBUR128_FUNCTIONS(X)                                                                 \
  X(void, ebur128_get_version, (int *major, int *minor, int *patch), (major, minor, patch))  \
  X(ebur128_state *, ebur128_init, (unsigned int channels, unsigned long rate, int mode),    \
    (channels, rate, mode))                                                                  \
  X(void, ebur128_destroy, (ebur128_state * *st), (st))                                      \
  X(int, ebur128_set_channel, (ebur128_state * st, unsigned int i, int value), (st, i, value)) \
  X(int, ebur128_add_frames_float, (ebur128_state * st, const float *src, size_t frames),    \
    (st, src, frames))                                                                       \
  X(int, ebur128_loudness_global, (ebur128_state * st, double *out), (st, out))              \
  X(int, ebur128_loudness_global_multiple, (ebur128_state * *sts, size_t n, double *out),   \
    (sts, n, out))                                                                           \
  X(int, ebur128_loudness_momentary, (ebur128_state * st, double *out), (st, out))           \
  X(int, ebur128_sample_peak, (ebur128_state * st, unsigned int ch, double *out),            \
    (st, ch, out))                                                                           \
  X(int, ebur128_true_peak, (ebur128_state * st, unsigned int ch, double *out), (st, ch, out))

/* The real functions, filled once under pthread_once. */
#define POINTER(ret, name, params, args) ret(*name) params;
static struct {
  EBUR128_FUNCTIONS(POINTER)
} real;
static char failure[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
  void *library = dlopen("libebur128.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    snprintf(failure, sizeof failure, "%s", dlerror());
    return;
  }
#define RESOLVE(ret, name, params, args)                                                     \
  if (!(*(void **)&real.name = dlsym(library, #name))) {                                     \
    snprintf(failure, sizeof failure, "libebur128.so.1 has no " #name);                      \
    return;                                                                                  \
  }
  EBUR128_FUNCTIONS(RESOLVE)
}

const char *cebur_load(void) {
  pthread_once(&once, load);
  return failure[0] ? failure : NULL;
}

#define FORWARD(ret, name, params, args)                                                     \
  ret name params { return real.name args; }
EBUR128_FUNCTIONS(FORWARD)
