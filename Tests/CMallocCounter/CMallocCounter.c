#define _GNU_SOURCE
#include "CMallocCounter.h"

/* Under AddressSanitizer or ThreadSanitizer the sanitizer's runtime owns malloc; replacing it
   here crashed their start-up. The counter is then absent (cmc_available() says so) and the
   allocation tests are skipped in those runs: the plain run has them. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define CMC_UNDER_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CMC_UNDER_SANITIZER 1
#endif

#ifdef CMC_UNDER_SANITIZER

int cmc_available(void) { return 0; }
void cmc_watch(pthread_t thread) { (void)thread; }
void cmc_unwatch(void) {}
long cmc_count(void) { return 0; }

#else

#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);
static void (*real_free)(void *);

static _Atomic int watching;
static _Atomic pthread_t watched;
static _Atomic long counted;

/* dlsym itself may call calloc before real_calloc is known: serve that from here. */
static char early[4096];
static size_t early_used;
static _Atomic int resolving;

static void resolve(void) {
  if (real_malloc) return;
  atomic_store(&resolving, 1);
  real_calloc = dlsym(RTLD_NEXT, "calloc");
  real_malloc = dlsym(RTLD_NEXT, "malloc");
  real_realloc = dlsym(RTLD_NEXT, "realloc");
  real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
  real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
  real_memalign = dlsym(RTLD_NEXT, "memalign");
  real_free = dlsym(RTLD_NEXT, "free");
  atomic_store(&resolving, 0);
}

static inline void note(void) {
  if (atomic_load_explicit(&watching, memory_order_relaxed) &&
      pthread_equal(pthread_self(), atomic_load_explicit(&watched, memory_order_relaxed)))
    atomic_fetch_add_explicit(&counted, 1, memory_order_relaxed);
}

static int is_early(void *p) {
  return (char *)p >= early && (char *)p < early + sizeof early;
}

void *malloc(size_t n) {
  resolve();
  note();
  return real_malloc(n);
}

void *calloc(size_t count, size_t size) {
  if (!real_calloc) {
    if (atomic_load(&resolving)) {
      size_t n = (count * size + 15) & ~(size_t)15;
      if (early_used + n > sizeof early) return NULL;
      void *p = early + early_used;
      early_used += n;
      memset(p, 0, n);
      return p;
    }
    resolve();
  }
  note();
  return real_calloc(count, size);
}

void *realloc(void *p, size_t n) {
  resolve();
  note();
  if (is_early(p)) {
    void *q = real_malloc(n);
    if (q) memcpy(q, p, n < sizeof early ? n : sizeof early);
    return q;
  }
  return real_realloc(p, n);
}

int posix_memalign(void **out, size_t alignment, size_t n) {
  resolve();
  note();
  return real_posix_memalign(out, alignment, n);
}

void *aligned_alloc(size_t alignment, size_t n) {
  resolve();
  note();
  return real_aligned_alloc(alignment, n);
}

void *memalign(size_t alignment, size_t n) {
  resolve();
  note();
  return real_memalign(alignment, n);
}

void free(void *p) {
  if (!p || is_early(p)) return;
  resolve();
  real_free(p);
}

void cmc_watch(pthread_t thread) {
  atomic_store(&counted, 0);
  atomic_store(&watched, thread);
  atomic_store(&watching, 1);
}

void cmc_unwatch(void) { atomic_store(&watching, 0); }

long cmc_count(void) { return atomic_load(&counted); }

int cmc_available(void) { return 1; }

#endif
