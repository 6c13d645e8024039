/* The libpulse functions the sound-server watcher and the player's sound-server output
   (PulseOutput) call, each forwarding to libpulse.so.0, which is opened on the first call (or
   cpulse_load()) rather than by the loader at every start. Linked the
   usual way, every hark process mapped libpulse and the 15 libraries it needs (X11's, libsystemd's,
   libgcrypt) and resolved their symbols before main: 1.4 ms of every start, the player's first
   sound included (docs/PERFORMANCE.md, "Libraries opened on first use"). The session server's
   watcher loads it when it starts; a player loads it when it opens its output on the sound
   server, on the thread that opens the output. */
#include "CPulse.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

/* Every function of the library that hark calls, with its declaration's parameters: the
   compiler checks each forwarder below against the library's own header. */
#define PULSE_FUNCTIONS(X) \
  X(pa_channel_map *, pa_channel_map_init_extend, (pa_channel_map *m, unsigned channels, pa_channel_map_def_t def), (m, channels, def)) \
  X(int, pa_context_connect, (pa_context *c, const char *server, pa_context_flags_t flags, const pa_spawn_api *api), (c, server, flags, api)) \
  X(void, pa_context_disconnect, (pa_context *c), (c)) \
  X(int, pa_context_errno, (const pa_context *c), (c)) \
  X(pa_operation *, pa_context_get_client_info, (pa_context *c, uint32_t idx, pa_client_info_cb_t cb, void *userdata), (c, idx, cb, userdata)) \
  X(pa_operation *, pa_context_get_client_info_list, (pa_context *c, pa_client_info_cb_t cb, void *userdata), (c, cb, userdata)) \
  X(pa_operation *, pa_context_get_server_info, (pa_context *c, pa_server_info_cb_t cb, void *userdata), (c, cb, userdata)) \
  X(pa_operation *, pa_context_get_sink_info_by_index, (pa_context *c, uint32_t idx, pa_sink_info_cb_t cb, void *userdata), (c, idx, cb, userdata)) \
  X(pa_operation *, pa_context_get_sink_info_list, (pa_context *c, pa_sink_info_cb_t cb, void *userdata), (c, cb, userdata)) \
  X(pa_operation *, pa_context_get_sink_input_info, (pa_context *c, uint32_t idx, pa_sink_input_info_cb_t cb, void *userdata), (c, idx, cb, userdata)) \
  X(pa_operation *, pa_context_get_sink_input_info_list, (pa_context *c, pa_sink_input_info_cb_t cb, void *userdata), (c, cb, userdata)) \
  X(pa_context_state_t, pa_context_get_state, (const pa_context *c), (c)) \
  X(pa_operation *, pa_context_kill_sink_input, (pa_context *c, uint32_t idx, pa_context_success_cb_t cb, void *userdata), (c, idx, cb, userdata)) \
  X(pa_context *, pa_context_new_with_proplist, (pa_mainloop_api *mainloop, const char *name, const pa_proplist *proplist), (mainloop, name, proplist)) \
  X(void, pa_context_set_state_callback, (pa_context *c, pa_context_notify_cb_t cb, void *userdata), (c, cb, userdata)) \
  X(void, pa_context_set_subscribe_callback, (pa_context *c, pa_context_subscribe_cb_t cb, void *userdata), (c, cb, userdata)) \
  X(pa_operation *, pa_context_subscribe, (pa_context *c, pa_subscription_mask_t m, pa_context_success_cb_t cb, void *userdata), (c, m, cb, userdata)) \
  X(void, pa_context_unref, (pa_context *c), (c)) \
  X(struct timeval *, pa_gettimeofday, (struct timeval *tv), (tv)) \
  X(int, pa_mainloop_dispatch, (pa_mainloop *m), (m)) \
  X(void, pa_mainloop_free, (pa_mainloop *m), (m)) \
  X(pa_mainloop_api *, pa_mainloop_get_api, (pa_mainloop *m), (m)) \
  X(pa_mainloop *, pa_mainloop_new, (void), ()) \
  X(int, pa_mainloop_poll, (pa_mainloop *m), (m)) \
  X(int, pa_mainloop_prepare, (pa_mainloop *m, int timeout), (m, timeout)) \
  X(void, pa_mainloop_set_poll_func, (pa_mainloop *m, pa_poll_func poll_func, void *userdata), (m, poll_func, userdata)) \
  X(pa_operation_state_t, pa_operation_get_state, (const pa_operation *o), (o)) \
  X(void, pa_operation_unref, (pa_operation *o), (o)) \
  X(void, pa_proplist_free, (pa_proplist *p), (p)) \
  X(const char *, pa_proplist_gets, (const pa_proplist *p, const char *key), (p, key)) \
  X(const char *, pa_proplist_iterate, (const pa_proplist *p, void * *state), (p, state)) \
  X(pa_proplist *, pa_proplist_new, (void), ()) \
  X(int, pa_proplist_sets, (pa_proplist *p, const char *key, const char *value), (p, key, value)) \
  X(int, pa_stream_connect_playback, (pa_stream *s, const char *dev, const pa_buffer_attr *attr, pa_stream_flags_t flags, const pa_cvolume *volume, pa_stream *sync_stream), (s, dev, attr, flags, volume, sync_stream)) \
  X(pa_operation *, pa_stream_cork, (pa_stream *s, int b, pa_stream_success_cb_t cb, void *userdata), (s, b, cb, userdata)) \
  X(int, pa_stream_disconnect, (pa_stream *s), (s)) \
  X(pa_operation *, pa_stream_drain, (pa_stream *s, pa_stream_success_cb_t cb, void *userdata), (s, cb, userdata)) \
  X(pa_operation *, pa_stream_flush, (pa_stream *s, pa_stream_success_cb_t cb, void *userdata), (s, cb, userdata)) \
  X(const pa_buffer_attr *, pa_stream_get_buffer_attr, (pa_stream *s), (s)) \
  X(int, pa_stream_get_latency, (pa_stream *s, pa_usec_t *r_usec, int *negative), (s, r_usec, negative)) \
  X(const pa_timing_info *, pa_stream_get_timing_info, (pa_stream *s), (s)) \
  X(pa_stream_state_t, pa_stream_get_state, (const pa_stream *p), (p)) \
  X(pa_operation *, pa_stream_update_timing_info, (pa_stream *p, pa_stream_success_cb_t cb, void *userdata), (p, cb, userdata)) \
  X(pa_stream *, pa_stream_new_with_proplist, (pa_context *c, const char *name, const pa_sample_spec *ss, const pa_channel_map *map, pa_proplist *p), (c, name, ss, map, p)) \
  X(void, pa_stream_set_started_callback, (pa_stream *p, pa_stream_notify_cb_t cb, void *userdata), (p, cb, userdata)) \
  X(void, pa_stream_set_underflow_callback, (pa_stream *p, pa_stream_notify_cb_t cb, void *userdata), (p, cb, userdata)) \
  X(void, pa_stream_unref, (pa_stream *s), (s)) \
  X(size_t, pa_stream_writable_size, (const pa_stream *p), (p)) \
  X(int, pa_stream_write, (pa_stream *p, const void *data, size_t nbytes, pa_free_cb_t free_cb, int64_t offset, pa_seek_mode_t seek), (p, data, nbytes, free_cb, offset, seek)) \
  X(const char *, pa_strerror, (int error), (error)) \
  X(void, pa_threaded_mainloop_free, (pa_threaded_mainloop *m), (m)) \
  X(pa_mainloop_api *, pa_threaded_mainloop_get_api, (pa_threaded_mainloop *m), (m)) \
  X(int, pa_threaded_mainloop_in_thread, (pa_threaded_mainloop *m), (m)) \
  X(void, pa_threaded_mainloop_lock, (pa_threaded_mainloop *m), (m)) \
  X(pa_threaded_mainloop *, pa_threaded_mainloop_new, (void), ()) \
  X(int, pa_threaded_mainloop_start, (pa_threaded_mainloop *m), (m)) \
  X(void, pa_threaded_mainloop_stop, (pa_threaded_mainloop *m), (m)) \
  X(void, pa_threaded_mainloop_unlock, (pa_threaded_mainloop *m), (m)) \
  X(struct timeval *, pa_timeval_add, (struct timeval *tv, pa_usec_t v), (tv, v))

/* The real functions, filled once under pthread_once. */
#define POINTER(ret, name, params, args) ret(*name) params;
static struct {
  PULSE_FUNCTIONS(POINTER)
} real;
static char failure[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
  void *library = dlopen("libpulse.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    snprintf(failure, sizeof failure, "%s", dlerror());
    return;
  }
#define RESOLVE(ret, name, params, args)                                                     \
  if (!(*(void **)&real.name = dlsym(library, #name))) {                                      \
    snprintf(failure, sizeof failure, "libpulse.so.0 has no " #name);                              \
    return;                                                                                  \
  }
  PULSE_FUNCTIONS(RESOLVE)
}

const char *cpulse_load(void) {
  pthread_once(&once, load);
  return failure[0] ? failure : NULL;
}

/* Each loads the library first, so that no caller can reach a function not yet resolved; a
   caller learns from cpulse_load() whether it can be loaded at all. Hidden: the executable
   does not offer them to the libraries it loads (ALSA's pulse plugin binds to libpulse's
   own). */
#define FORWARD(ret, name, params, args)                                                     \
  __attribute__((visibility("hidden"))) ret name params {                                    \
    pthread_once(&once, load);                                                               \
    return real.name args;                                                                   \
  }
PULSE_FUNCTIONS(FORWARD)
