/* The poll a pa_mainloop runs (pa_mainloop_set_poll_func) when the player's output waits for
   room in its stream: libpulse's own descriptors and one more, the engine's wake pipe, so that
   the wait ends at once when the engine needs the render thread (a pause, a new gain), as
   ALSA's poll on the device and the pipe does for PlaybackDevice. No allocation: the render
   thread runs it. */
#include "CPulse.h"

#include <poll.h>

int cpulse_poll_waking(struct pollfd *ufds, unsigned long nfds, int timeout, void *userdata) {
  cpulse_wake *w = userdata;
  if (w == NULL || w->wake_fd < 0 || nfds >= w->capacity) return poll(ufds, nfds, timeout);
  for (unsigned long i = 0; i < nfds; i++) w->fds[i] = ufds[i];
  w->fds[nfds] = (struct pollfd){.fd = w->wake_fd, .events = POLLIN, .revents = 0};
  int ready = poll(w->fds, nfds + 1, timeout);
  if (ready <= 0) return ready;
  for (unsigned long i = 0; i < nfds; i++) ufds[i].revents = w->fds[i].revents;
  if (w->fds[nfds].revents != 0) {
    w->woken = 1;
    ready--;
  }
  return ready;
}
