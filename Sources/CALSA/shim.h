#ifndef CALSA_SHIM_H
#define CALSA_SHIM_H
#include <alsa/asoundlib.h>

/* ALSA reports problems through a variadic callback, which Swift cannot define. */
static void calsa_ignore(const char *f, int l, const char *fn, int e, const char *fmt, ...) {
  (void)f; (void)l; (void)fn; (void)e; (void)fmt;
}
/* Without this, ALSA prints over the curses screen and into tests' output. */
static inline void calsa_silence_library_errors(void) { snd_lib_error_set_handler(calsa_ignore); }

/* snd_mixer_selem_id_alloca is a macro; this allocates on the heap instead (free with
   snd_mixer_selem_id_free). */
static inline snd_mixer_selem_id_t *calsa_selem_id_new(void) {
  snd_mixer_selem_id_t *id = NULL;
  if (snd_mixer_selem_id_malloc(&id) < 0) return NULL;
  return id;
}

/* SND_CTL_EVENT_MASK_REMOVE is (~0U), a macro Swift does not import. A remove event's mask is
   exactly this value, so test it before testing the mask's bits. */
static inline unsigned int calsa_ctl_event_mask_remove(void) { return SND_CTL_EVENT_MASK_REMOVE; }

#endif
