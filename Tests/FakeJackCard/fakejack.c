/*
 * fakejack: an alsa-lib external control plugin (ctl_ext) that plays a sound card with jacks,
 * so the tests can plug and unplug headphones on a machine without a sound card.
 *
 * Its elements: "Headphone Jack", "Line Out Jack", "Mic Jack", "Speaker Phantom Jack" (always
 * on) and "Master Playback Switch". Their values come from a state file, one "Name=0|1" per line
 * (jacks not named are unplugged); a line "gone" makes the card vanish as an unplugged USB card
 * does: POLLERR on its descriptor and ENODEV from every read.
 *
 * The test rewrites the state file (write a temporary, rename it over). The plugin's poll
 * descriptor is an inotify watch on the file's directory, so the watcher's poll(2) wakes; alsa-lib
 * then calls our poll_revents, which re-reads the file and queues an event for each element that
 * changed, twice, because real cards also report one change more than once.
 *
 * Configuration (in the test's $HOME/.asoundrc):
 *   ctl_type.fakejack { lib "/tmp/.../libasound_module_ctl_fakejack.so" }
 *   ctl.fakejack { type fakejack  state "/tmp/.../state"  driver "FakeJack" }
 * Build: gcc -shared -fPIC -o libasound_module_ctl_fakejack.so fakejack.c -lasound
 */
#include <alsa/asoundlib.h>
#include <alsa/control_external.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

enum { HEADPHONE, LINE_OUT, MIC, SPEAKER_PHANTOM, MASTER_SWITCH, ELEMENT_COUNT };

static const struct {
  const char *name;
  snd_ctl_elem_iface_t iface;
  long fixed; /* -1: from the state file; else this value always */
} elements[ELEMENT_COUNT] = {
  [HEADPHONE] = {"Headphone Jack", SND_CTL_ELEM_IFACE_CARD, -1},
  [LINE_OUT] = {"Line Out Jack", SND_CTL_ELEM_IFACE_CARD, -1},
  [MIC] = {"Mic Jack", SND_CTL_ELEM_IFACE_CARD, -1},
  [SPEAKER_PHANTOM] = {"Speaker Phantom Jack", SND_CTL_ELEM_IFACE_CARD, 1},
  [MASTER_SWITCH] = {"Master Playback Switch", SND_CTL_ELEM_IFACE_MIXER, 1},
};

#define QUEUE_SIZE 64

struct fakejack {
  snd_ctl_ext_t ext;
  char *state_path;
  long values[ELEMENT_COUNT];
  int gone;
  unsigned queue[QUEUE_SIZE]; /* element keys with an event pending */
  unsigned head, count;
};

static void queue_event(struct fakejack *card, unsigned key) {
  if (!card->ext.subscribed || card->count == QUEUE_SIZE) return;
  card->queue[(card->head + card->count) % QUEUE_SIZE] = key;
  card->count++;
}

/* Reads the state file and queues two events for each element whose value changed. */
static void reload(struct fakejack *card) {
  long values[ELEMENT_COUNT];
  int gone = 0;
  for (unsigned k = 0; k < ELEMENT_COUNT; k++)
    values[k] = elements[k].fixed >= 0 ? elements[k].fixed : 0;
  FILE *f = fopen(card->state_path, "r");
  if (f) {
    char line[256];
    while (fgets(line, sizeof line, f)) {
      line[strcspn(line, "\r\n")] = 0;
      if (strcmp(line, "gone") == 0) {
        gone = 1;
        continue;
      }
      char *eq = strrchr(line, '=');
      if (!eq) continue;
      *eq = 0;
      for (unsigned k = 0; k < ELEMENT_COUNT; k++)
        if (elements[k].fixed < 0 && strcmp(line, elements[k].name) == 0)
          values[k] = atoi(eq + 1) != 0;
    }
    fclose(f);
  }
  for (unsigned k = 0; k < ELEMENT_COUNT; k++) {
    if (values[k] == card->values[k]) continue;
    card->values[k] = values[k];
    queue_event(card, k);
    queue_event(card, k);
  }
  card->gone = card->gone || gone;
}

static int fakejack_elem_count(snd_ctl_ext_t *ext) {
  (void)ext;
  return ELEMENT_COUNT;
}

static int fakejack_elem_list(snd_ctl_ext_t *ext, unsigned int offset, snd_ctl_elem_id_t *id) {
  (void)ext;
  if (offset >= ELEMENT_COUNT) return -EINVAL;
  snd_ctl_elem_id_set_interface(id, elements[offset].iface);
  snd_ctl_elem_id_set_name(id, elements[offset].name);
  snd_ctl_elem_id_set_index(id, 0);
  return 0;
}

static snd_ctl_ext_key_t fakejack_find_elem(snd_ctl_ext_t *ext, const snd_ctl_elem_id_t *id) {
  (void)ext;
  unsigned int numid = snd_ctl_elem_id_get_numid(id);
  if (numid > 0 && numid <= ELEMENT_COUNT) return numid - 1;
  const char *name = snd_ctl_elem_id_get_name(id);
  for (unsigned k = 0; k < ELEMENT_COUNT; k++)
    if (strcmp(name, elements[k].name) == 0 && snd_ctl_elem_id_get_index(id) == 0) return k;
  return SND_CTL_EXT_KEY_NOT_FOUND;
}

static int fakejack_get_attribute(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, int *type,
                                  unsigned int *acc, unsigned int *count) {
  (void)ext;
  if (key >= ELEMENT_COUNT) return -EINVAL;
  *type = SND_CTL_ELEM_TYPE_BOOLEAN;
  *acc = key == MASTER_SWITCH ? SND_CTL_EXT_ACCESS_READWRITE : SND_CTL_EXT_ACCESS_READ;
  *count = 1;
  return 0;
}

static int fakejack_read_integer(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, long *value) {
  struct fakejack *card = ext->private_data;
  if (card->gone) return -ENODEV;
  if (key >= ELEMENT_COUNT) return -EINVAL;
  *value = card->values[key];
  return 0;
}

static int fakejack_write_integer(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, long *value) {
  struct fakejack *card = ext->private_data;
  if (card->gone) return -ENODEV;
  if (key != MASTER_SWITCH) return -EPERM;
  if (card->values[key] == !!*value) return 0;
  card->values[key] = !!*value;
  queue_event(card, key);
  return 1;
}

static void fakejack_subscribe_events(snd_ctl_ext_t *ext, int subscribe) {
  struct fakejack *card = ext->private_data;
  if (!subscribe) card->count = 0;
}

static int fakejack_read_event(snd_ctl_ext_t *ext, snd_ctl_elem_id_t *id,
                               unsigned int *event_mask) {
  struct fakejack *card = ext->private_data;
  if (card->gone) return -ENODEV;
  if (!ext->subscribed || card->count == 0) return -EAGAIN;
  unsigned key = card->queue[card->head];
  card->head = (card->head + 1) % QUEUE_SIZE;
  card->count--;
  fakejack_elem_list(ext, key, id);
  snd_ctl_elem_id_set_numid(id, key + 1);
  *event_mask = SND_CTL_EVENT_MASK_VALUE;
  return 1;
}

/* alsa-lib calls this after poll(2) with our inotify descriptor's revents: drain it, re-read
   the state, and say whether events are waiting, or that the card is gone. */
static int fakejack_poll_revents(snd_ctl_ext_t *ext, struct pollfd *pfd, unsigned int nfds,
                                 unsigned short *revents) {
  struct fakejack *card = ext->private_data;
  char buffer[4096];
  if (nfds != 1) return -EINVAL;
  if (pfd->revents & POLLIN)
    while (read(ext->poll_fd, buffer, sizeof buffer) > 0) {
    }
  reload(card);
  *revents = card->gone ? POLLERR : card->count ? POLLIN : 0;
  return 0;
}

static void fakejack_close(snd_ctl_ext_t *ext) {
  struct fakejack *card = ext->private_data;
  if (ext->poll_fd >= 0) close(ext->poll_fd);
  free(card->state_path);
  free(card);
}

static const snd_ctl_ext_callback_t fakejack_callback = {
  .close = fakejack_close,
  .elem_count = fakejack_elem_count,
  .elem_list = fakejack_elem_list,
  .find_elem = fakejack_find_elem,
  .get_attribute = fakejack_get_attribute,
  .read_integer = fakejack_read_integer,
  .write_integer = fakejack_write_integer,
  .subscribe_events = fakejack_subscribe_events,
  .read_event = fakejack_read_event,
  .poll_revents = fakejack_poll_revents,
};

SND_CTL_PLUGIN_DEFINE_FUNC(fakejack) {
  const char *state = NULL, *driver = "FakeJack", *card_name = "Fake Jack Card";
  snd_config_iterator_t i, next;
  (void)root;
  snd_config_for_each(i, next, conf) {
    snd_config_t *n = snd_config_iterator_entry(i);
    const char *id;
    if (snd_config_get_id(n, &id) < 0) continue;
    if (strcmp(id, "comment") == 0 || strcmp(id, "type") == 0) continue;
    const char **wanted = strcmp(id, "state") == 0    ? &state
                          : strcmp(id, "driver") == 0 ? &driver
                          : strcmp(id, "name") == 0   ? &card_name
                                                      : NULL;
    if (!wanted || snd_config_get_string(n, wanted) < 0) return -EINVAL;
  }
  if (!state) return -EINVAL;

  struct fakejack *card = calloc(1, sizeof *card);
  if (!card) return -ENOMEM;
  card->ext.private_data = card;
  card->ext.poll_fd = -1;
  card->state_path = strdup(state);
  char *directory = strdup(state);
  if (!card->state_path || !directory) {
    free(directory);
    fakejack_close(&card->ext);
    return -ENOMEM;
  }
  char *slash = strrchr(directory, '/');
  if (slash) *(slash == directory ? slash + 1 : slash) = 0;
  card->ext.poll_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  int watched = card->ext.poll_fd >= 0 &&
                inotify_add_watch(card->ext.poll_fd, slash ? directory : ".",
                                  IN_CLOSE_WRITE | IN_MOVED_TO) >= 0;
  free(directory);
  if (!watched) {
    int err = -errno;
    fakejack_close(&card->ext);
    return err;
  }
  for (unsigned k = 0; k < ELEMENT_COUNT; k++)
    card->values[k] = elements[k].fixed >= 0 ? elements[k].fixed : 0;
  reload(card);

  card->ext.version = SND_CTL_EXT_VERSION;
  card->ext.card_idx = 0;
  snprintf(card->ext.id, sizeof card->ext.id, "FakeJack");
  snprintf(card->ext.driver, sizeof card->ext.driver, "%s", driver);
  snprintf(card->ext.name, sizeof card->ext.name, "%s", card_name);
  snprintf(card->ext.longname, sizeof card->ext.longname, "%s (a test plugin)", card_name);
  snprintf(card->ext.mixername, sizeof card->ext.mixername, "FakeJack");
  card->ext.callback = &fakejack_callback;
  int err = snd_ctl_ext_create(&card->ext, name, mode);
  if (err < 0) {
    fakejack_close(&card->ext);
    return err;
  }
  *handlep = card->ext.handle;
  return 0;
}

SND_CTL_PLUGIN_SYMBOL(fakejack);
