#ifndef CEBUR128_H
#define CEBUR128_H
#include <ebur128.h>

/* libebur128 (libebur128-dev's header), loaded when loudness is first measured (Loader.c), so
   that the processes that never measure (the player, the session server, hark ctl) do not map
   it. */

/* Loads libebur128.so.1 if it is not loaded yet. NULL when it is ready, else why it cannot be
   (dlerror's words); every ebur128_ function here may be called only after NULL. */
const char *cebur_load(void);
#endif
