#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
#include <sqlite3.h>

/* SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import:
   binds through these copy the text or blob before they return. */
static inline int csq_bind_text(sqlite3_stmt *s, int i, const char *text, int n) {
  return sqlite3_bind_text(s, i, text, n, SQLITE_TRANSIENT);
}
#endif
