#ifndef CPULSE_SHIM_H
#define CPULSE_SHIM_H
#include <poll.h>
#include <pulse/pulseaudio.h>

/* PA_CONTEXT_IS_GOOD is a macro-like inline Swift sees, but keep the name in our prefix. */
static inline int cpulse_context_is_good(pa_context_state_t s) { return PA_CONTEXT_IS_GOOD(s); }

/* The descriptors a pa_mainloop polls, and the engine's wake pipe beside them (Wake.c). `fds`
   has room for `capacity` descriptors, the wake pipe's included; `woken` is set when the pipe
   was readable (the caller clears it). */
typedef struct {
  int wake_fd;
  int woken;
  unsigned long capacity;
  struct pollfd *fds;
} cpulse_wake;

/* A pa_poll_func: poll(2) over libpulse's descriptors and `userdata`'s (a cpulse_wake) wake
   pipe. */
int cpulse_poll_waking(struct pollfd *ufds, unsigned long nfds, int timeout, void *userdata);

/* Loads libpulse.so.0 if it is not loaded yet (Loader.c). NULL when it is ready, else why it
   cannot be (dlerror's words). */
const char *cpulse_load(void);
#endif
