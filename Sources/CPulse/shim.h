#ifndef CPULSE_SHIM_H
#define CPULSE_SHIM_H
#include <pulse/pulseaudio.h>

/* PA_CONTEXT_IS_GOOD is a macro-like inline Swift sees, but keep the name in our prefix. */
static inline int cpulse_context_is_good(pa_context_state_t s) { return PA_CONTEXT_IS_GOOD(s); }
#endif
