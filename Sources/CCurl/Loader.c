/* The few libcurl calls hark makes, through libcurl.so.4 opened on first use rather than by
   the loader at every start: only the scrobbler sends, and only once a listen is made. The
   request is made here in C whole, as curl_easy_setopt and curl_easy_getinfo are variadic
   (Swift cannot call them). */
#include "CCurl.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static struct {
  CURLcode (*global_init)(long flags);
  CURL *(*easy_init)(void);
  CURLcode (*easy_setopt)(CURL *curl, CURLoption option, ...);
  CURLcode (*easy_perform)(CURL *curl);
  CURLcode (*easy_getinfo)(CURL *curl, CURLINFO info, ...);
  void (*easy_cleanup)(CURL *curl);
  const char *(*easy_strerror)(CURLcode code);
  struct curl_slist *(*slist_append)(struct curl_slist *list, const char *string);
  void (*slist_free_all)(struct curl_slist *list);
} real;
static char failure[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
  void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    snprintf(failure, sizeof failure, "%s", dlerror());
    return;
  }
#define RESOLVE(field, name)                                                                 \
  if (!(*(void **)&real.field = dlsym(library, name))) {                                     \
    snprintf(failure, sizeof failure, "libcurl.so.4 has no " name);                          \
    return;                                                                                  \
  }
  RESOLVE(global_init, "curl_global_init")
  RESOLVE(easy_init, "curl_easy_init")
  RESOLVE(easy_setopt, "curl_easy_setopt")
  RESOLVE(easy_perform, "curl_easy_perform")
  RESOLVE(easy_getinfo, "curl_easy_getinfo")
  RESOLVE(easy_cleanup, "curl_easy_cleanup")
  RESOLVE(easy_strerror, "curl_easy_strerror")
  RESOLVE(slist_append, "curl_slist_append")
  RESOLVE(slist_free_all, "curl_slist_free_all")
  /* Once, before any thread makes a handle (curl_global_init is not thread-safe). */
  real.global_init(CURL_GLOBAL_DEFAULT);
}

const char *ccurl_load(void) {
  pthread_once(&once, load);
  return failure[0] ? failure : NULL;
}

static size_t on_body(char *data, size_t size, size_t count, void *context) {
  ccurl_response *out = context;
  size_t n = size * count;
  /* At most 4 MiB of answer: the services' are a few hundred bytes. */
  if (out->body_length + n > (4u << 20)) return 0;
  char *grown = realloc(out->body, out->body_length + n + 1);
  if (!grown) return 0;
  memcpy(grown + out->body_length, data, n);
  out->body = grown;
  out->body_length += n;
  out->body[out->body_length] = 0;
  return n;
}

static size_t on_header(char *data, size_t size, size_t count, void *context) {
  ccurl_response *out = context;
  size_t n = size * count;
  const char *names[] = {"Retry-After:", "X-RateLimit-Reset-In:"};
  for (int i = 0; i < 2; i++) {
    size_t len = strlen(names[i]);
    if (n > len && strncasecmp(data, names[i], len) == 0) {
      char value[64] = {0};
      size_t m = n - len < sizeof value - 1 ? n - len : sizeof value - 1;
      memcpy(value, data + len, m);
      char *end = NULL;
      double seconds = strtod(value, &end);
      if (end != value && seconds >= 0) out->retry_after = seconds;
    }
  }
  return n;
}

int ccurl_request(const char *method, const char *url, const char *const *headers,
                  int header_count, const char *body, size_t body_length, long timeout_seconds,
                  long connect_seconds, ccurl_response *out) {
  memset(out, 0, sizeof *out);
  out->retry_after = -1;
  const char *why = ccurl_load();
  if (why) {
    snprintf(out->error, sizeof out->error, "libcurl cannot be loaded (%s)", why);
    return -1;
  }
  CURL *curl = real.easy_init();
  if (!curl) {
    snprintf(out->error, sizeof out->error, "libcurl could not make a request");
    return -1;
  }
  struct curl_slist *list = NULL;
  for (int i = 0; i < header_count; i++) list = real.slist_append(list, headers[i]);
  /* An empty Expect: no 100-continue round trip before the body. */
  list = real.slist_append(list, "Expect:");
  real.easy_setopt(curl, CURLOPT_URL, url);
  real.easy_setopt(curl, CURLOPT_HTTPHEADER, list);
  real.easy_setopt(curl, CURLOPT_USERAGENT, "hark/1 (a terminal music player)");
  real.easy_setopt(curl, CURLOPT_TIMEOUT, timeout_seconds);
  real.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, connect_seconds);
  /* No signals from libcurl's resolver in a threaded program. */
  real.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  real.easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  real.easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  real.easy_setopt(curl, CURLOPT_WRITEDATA, out);
  real.easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  real.easy_setopt(curl, CURLOPT_HEADERDATA, out);
  if (strcmp(method, "POST") == 0) {
    real.easy_setopt(curl, CURLOPT_POST, 1L);
    real.easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_length);
    real.easy_setopt(curl, CURLOPT_COPYPOSTFIELDS, body ? body : "");
  }
  CURLcode rc = real.easy_perform(curl);
  if (rc == CURLE_OK) {
    real.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &out->status);
  } else {
    snprintf(out->error, sizeof out->error, "%s", real.easy_strerror(rc));
  }
  real.easy_cleanup(curl);
  real.slist_free_all(list);
  return rc == CURLE_OK ? 0 : -1;
}

void ccurl_free(ccurl_response *response) {
  free(response->body);
  response->body = NULL;
  response->body_length = 0;
}
