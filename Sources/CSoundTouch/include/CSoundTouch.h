#ifndef CSOUNDTOUCH_H
#define CSOUNDTOUCH_H
#include <stddef.h>

/* SoundTouch's C interface (libSoundTouchDll.so.1, Debian's libsoundtouch1), loaded when a speed
   other than 1x is first asked for (Loader.c), so that the processes and the listeners that never
   change speed do not map it (nor the C++ runtime it brings).

   The declarations are SoundTouchDLL.h's (libsoundtouch-dev), with its HANDLE spelled void *:
   declared here because a listener's machine has only the runtime package, not the header.
   Where the header is installed, Loader.c includes it too, so that the compiler checks these
   against it. */

void *soundtouch_createInstance(void);
void soundtouch_destroyInstance(void *h);
const char *soundtouch_getVersionString(void);
void soundtouch_setTempo(void *h, float newTempo);
/* 0 when SoundTouch refused the count (more than its 16 channels), else 1. */
int soundtouch_setChannels(void *h, unsigned int numChannels);
int soundtouch_setSampleRate(void *h, unsigned int srate);
/* settingId: SoundTouch.h's SETTING_ numbers (CST_SETTING_ below); 1 when taken. */
int soundtouch_setSetting(void *h, int settingId, int value);
int soundtouch_getSetting(void *h, int settingId);
/* Interleaved frames: numSamples counts frames, not floats. */
int soundtouch_putSamples(void *h, const float *samples, unsigned int numSamples);
/* Frames copied into outBuffer (at most maxSamples frames). */
unsigned int soundtouch_receiveSamples(void *h, float *outBuffer, unsigned int maxSamples);
/* Frames ready to be received. */
unsigned int soundtouch_numSamples(void *h);
/* Drops every frame in the pipeline, in and out. */
void soundtouch_clear(void *h);

/* SoundTouch.h's setting numbers (a C++ header, so not included). */
enum {
  CST_SETTING_USE_QUICKSEEK = 2,
  CST_SETTING_SEQUENCE_MS = 3,
  CST_SETTING_SEEKWINDOW_MS = 4,
  CST_SETTING_OVERLAP_MS = 5,
  CST_SETTING_INITIAL_LATENCY = 8,
};

/* Loads libSoundTouchDll.so.1 if it is not loaded yet. NULL when it is ready, else why it cannot
   be (dlerror's words, or the function it lacks); every soundtouch_ function here may be called
   only after NULL. */
const char *cst_load(void);

/* For tests: whether the library named `soname` could serve (opened and every function above
   found), without touching what cst_load loaded. 1 when it could; else 0, with the reason in
   `why` (`size` bytes). */
int cst_check(const char *soname, char *why, size_t size);
#endif
