#ifndef CCURL_H
#define CCURL_H
#include <stddef.h>

/* libcurl (libcurl4-openssl-dev's header, for the compiler's check of the calls), loaded when
   a listen is first sent (Loader.c): the player that never sends one never maps it (nor
   OpenSSL, nor the dozen libraries libcurl brings). */

/* What a request gave: the HTTP status (0 when there was no answer), the body (malloc'ed,
   free with ccurl_free), Retry-After or X-RateLimit-Reset-In in seconds (-1 when absent), and
   libcurl's words when it failed. */
typedef struct {
  long status;
  char *body;
  size_t body_length;
  double retry_after;
  char error[256];
} ccurl_response;

/* Sends one request: `method` "GET" or "POST", `headers` "Name: value" each, `body` for a
   POST. At most `timeout_seconds` in all, `connect_seconds` to connect. Returns 0 when an
   answer came (whatever its status), else -1 with `error` said; both fill `out`. Any thread;
   each call its own handle. */
int ccurl_request(const char *method, const char *url, const char *const *headers,
                  int header_count, const char *body, size_t body_length, long timeout_seconds,
                  long connect_seconds, ccurl_response *out);

void ccurl_free(ccurl_response *response);

/* Loads libcurl.so.4 if it is not loaded yet: NULL when it is ready, else why not. */
const char *ccurl_load(void);
#endif
