/* The soundtouch_ functions hark calls, each forwarding to libSoundTouchDll.so.1, which is opened
   on the first cst_load() rather than by the loader at every start: only playing at a speed
   other than 1x uses it. The declarations are CSoundTouch.h's; where libsoundtouch-dev is
   installed its SoundTouchDLL.h is included as well, so that the compiler checks each of ours
   against the library's own. */
#include "CSoundTouch.h"

#if __has_include(<SoundTouchDLL.h>)
#include <SoundTouchDLL.h>
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define SOUNDTOUCH_FUNCTIONS(X)                                                              \
  X(void *, soundtouch_createInstance, (void), ())                                           \
  X(void, soundtouch_destroyInstance, (void *h), (h))                                        \
  X(const char *, soundtouch_getVersionString, (void), ())                                   \
  X(void, soundtouch_setTempo, (void *h, float newTempo), (h, newTempo))                     \
  X(int, soundtouch_setChannels, (void *h, unsigned int numChannels), (h, numChannels))      \
  X(int, soundtouch_setSampleRate, (void *h, unsigned int srate), (h, srate))                \
  X(int, soundtouch_setSetting, (void *h, int settingId, int value), (h, settingId, value))  \
  X(int, soundtouch_getSetting, (void *h, int settingId), (h, settingId))                    \
  X(int, soundtouch_putSamples, (void *h, const float *samples, unsigned int numSamples),    \
    (h, samples, numSamples))                                                                \
  X(unsigned int, soundtouch_receiveSamples, (void *h, float *outBuffer, unsigned int max),   \
    (h, outBuffer, max))                                                                     \
  X(unsigned int, soundtouch_numSamples, (void *h), (h))                                     \
  X(void, soundtouch_clear, (void *h), (h))

/* The real functions, filled once under pthread_once. */
#define POINTER(ret, name, params, args) ret(*name) params;
struct functions {
  SOUNDTOUCH_FUNCTIONS(POINTER)
};
static struct functions real;
static char failure[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Opens `soname` and fills `f`: its handle when every function is there, else NULL with why in
   `why` (and the library closed again). */
static void *open_library(const char *soname, struct functions *f, char *why, size_t size) {
  void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    snprintf(why, size, "%s", dlerror());
    return NULL;
  }
#define RESOLVE(ret, name, params, args)                                                     \
  if (!(*(void **)&f->name = dlsym(library, #name))) {                                       \
    snprintf(why, size, "%s has no " #name, soname);                                         \
    dlclose(library);                                                                        \
    return NULL;                                                                             \
  }
  SOUNDTOUCH_FUNCTIONS(RESOLVE)
  return library;
}

/* Opened for good: its functions are in use from now on. */
static void load(void) { open_library("libSoundTouchDll.so.1", &real, failure, sizeof failure); }

const char *cst_load(void) {
  pthread_once(&once, load);
  return failure[0] ? failure : NULL;
}

int cst_check(const char *soname, char *why, size_t size) {
  struct functions f;
  void *library = open_library(soname, &f, why, size);
  if (!library) return 0;
  dlclose(library); /* cst_load's own reference, if any, stays */
  return 1;
}

#define FORWARD(ret, name, params, args)                                                     \
  ret name params { return real.name args; }
SOUNDTOUCH_FUNCTIONS(FORWARD)
