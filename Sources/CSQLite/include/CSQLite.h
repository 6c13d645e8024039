#ifndef CSQLITE_H
#define CSQLITE_H
#include <sqlite3.h>

/* SQLite, loaded when the index is first opened (Loader.c), so that the processes that never
   read the library (the headless player, the session server, hark ctl) do not map it. */

/* Loads libsqlite3 if it is not loaded yet. NULL when it is ready, else why it cannot be
   (dlerror's words); every sqlite3_ function here may be called only after NULL. */
const char *csq_load(void);

/* SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import:
   binds through these copy the text or blob before they return. */
static inline int csq_bind_text(sqlite3_stmt *s, int i, const char *text, int n) {
  return sqlite3_bind_text(s, i, text, n, SQLITE_TRANSIENT);
}
static inline int csq_bind_blob(sqlite3_stmt *s, int i, const void *data, int n) {
  return sqlite3_bind_blob(s, i, data, n, SQLITE_TRANSIENT);
}
#endif
