#ifndef CPULSE_SHIM_H
#define CPULSE_SHIM_H
#include <pulse/pulseaudio.h>

/* PA_CONTEXT_IS_GOOD is a macro-like inline Swift sees, but keep the name in our prefix. */
static inline int cpulse_context_is_good(pa_context_state_t s) { return PA_CONTEXT_IS_GOOD(s); }

/* Loads libpulse.so.0 if it is not loaded yet (Loader.c). NULL when it is ready, else why it
   cannot be (dlerror's words). */
const char *cpulse_load(void);
#endif
