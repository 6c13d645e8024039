/* The sqlite3_ functions hark calls, each forwarding to libsqlite3.so.0, which is opened on the
   first csq_load() rather than by the loader at every start: linked the usual way, every hark
   process mapped and relocated it (0.25 MB of the headless player's memory; docs/PERFORMANCE.md,
   "Libraries opened on first use"), though only the interface and `hark library` read the index.
   The declarations come from sqlite3.h, so the compiler checks each forwarder against the real
   signature. */
#include "CSQLite.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

#define SQLITE_FUNCTIONS(X)                                                                  \
  X(int, sqlite3_open_v2, (const char *f, sqlite3 **db, int flags, const char *vfs),         \
    (f, db, flags, vfs))                                                                      \
  X(int, sqlite3_close, (sqlite3 * db), (db))                                                \
  X(int, sqlite3_close_v2, (sqlite3 * db), (db))                                             \
  X(const char *, sqlite3_errmsg, (sqlite3 * db), (db))                                      \
  X(int, sqlite3_busy_timeout, (sqlite3 * db, int ms), (db, ms))                             \
  X(int, sqlite3_exec,                                                                       \
    (sqlite3 * db, const char *sql, int (*cb)(void *, int, char **, char **), void *arg,     \
     char **error),                                                                          \
    (db, sql, cb, arg, error))                                                               \
  X(void, sqlite3_free, (void *p), (p))                                                      \
  X(int, sqlite3_prepare_v2,                                                                 \
    (sqlite3 * db, const char *sql, int n, sqlite3_stmt **s, const char **tail),             \
    (db, sql, n, s, tail))                                                                   \
  X(int, sqlite3_step, (sqlite3_stmt * s), (s))                                              \
  X(int, sqlite3_reset, (sqlite3_stmt * s), (s))                                             \
  X(int, sqlite3_finalize, (sqlite3_stmt * s), (s))                                          \
  X(int, sqlite3_clear_bindings, (sqlite3_stmt * s), (s))                                    \
  X(int, sqlite3_bind_text,                                                                  \
    (sqlite3_stmt * s, int i, const char *text, int n, void (*destructor)(void *)),          \
    (s, i, text, n, destructor))                                                             \
  X(int, sqlite3_bind_blob,                                                                  \
    (sqlite3_stmt * s, int i, const void *data, int n, void (*destructor)(void *)),          \
    (s, i, data, n, destructor))                                                             \
  X(const void *, sqlite3_column_blob, (sqlite3_stmt * s, int i), (s, i))                    \
  X(int, sqlite3_bind_null, (sqlite3_stmt * s, int i), (s, i))                               \
  X(int, sqlite3_bind_int64, (sqlite3_stmt * s, int i, sqlite3_int64 v), (s, i, v))          \
  X(int, sqlite3_bind_double, (sqlite3_stmt * s, int i, double v), (s, i, v))                \
  X(int, sqlite3_column_type, (sqlite3_stmt * s, int i), (s, i))                             \
  X(const unsigned char *, sqlite3_column_text, (sqlite3_stmt * s, int i), (s, i))           \
  X(int, sqlite3_column_bytes, (sqlite3_stmt * s, int i), (s, i))                            \
  X(sqlite3_int64, sqlite3_column_int64, (sqlite3_stmt * s, int i), (s, i))                  \
  X(double, sqlite3_column_double, (sqlite3_stmt * s, int i), (s, i))

/* The real functions, filled once under pthread_once before csq_load returns NULL. */
#define POINTER(ret, name, params, args) ret(*name) params;
static struct {
  SQLITE_FUNCTIONS(POINTER)
} real;
static const char *failure;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
  void *library = dlopen("libsqlite3.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    failure = dlerror();
    return;
  }
#define RESOLVE(ret, name, params, args)                                                     \
  if (!(*(void **)&real.name = dlsym(library, #name))) {                                     \
    failure = "libsqlite3.so.0 has no " #name;                                               \
    return;                                                                                  \
  }
  SQLITE_FUNCTIONS(RESOLVE)
}

const char *csq_load(void) {
  pthread_once(&once, load);
  return failure;
}

#define FORWARD(ret, name, params, args)                                                     \
  ret name params { return real.name args; }
SQLITE_FUNCTIONS(FORWARD)
