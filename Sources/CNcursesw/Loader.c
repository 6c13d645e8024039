/* The curses functions the interface calls, each forwarding to libncursesw.so.6, which is opened on
   the first cnc_load() rather than by the loader at every start: linked the usual way, every hark
   process mapped and relocated it and libtinfo (0.25 MB of the headless player's memory;
   docs/PERFORMANCE.md, "Libraries opened on first use"), though only the interface draws. The
   declarations come from curses.h (its convenience macros off, so that the functions behind them
   can be defined), and the compiler checks each forwarder against them. */
#define NCURSES_NOMACROS 1
#include "CNcursesw.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

#define CURSES_FUNCTIONS(X)                                                                  \
  X(int, attrset, (int a), (a))                                                              \
  X(int, cbreak, (void), ())                                                                 \
  X(int, clearok, (WINDOW * w, bool b), (w, b))                                              \
  X(int, curs_set, (int v), (v))                                                             \
  X(void, delscreen, (SCREEN * s), (s))                                                      \
  X(int, endwin, (void), ())                                                                 \
  X(int, erase, (void), ())                                                                  \
  X(bool, has_colors, (void), ())                                                            \
  X(int, init_pair, (short p, short f, short b), (p, f, b))                                  \
  X(int, intrflush, (WINDOW * w, bool b), (w, b))                                            \
  X(int, keypad, (WINDOW * w, bool b), (w, b))                                               \
  X(int, leaveok, (WINDOW * w, bool b), (w, b))                                              \
  X(int, mvaddnwstr, (int y, int x, const wchar_t *s, int n), (y, x, s, n))                  \
  X(SCREEN *, newterm, (const char *type, FILE *out, FILE *in), (type, out, in))             \
  X(int, noecho, (void), ())                                                                 \
  X(int, nonl, (void), ())                                                                   \
  X(int, refresh, (void), ())                                                                \
  X(int, resizeterm, (int rows, int cols), (rows, cols))                                     \
  X(int, start_color, (void), ())                                                            \
  X(char *, tigetstr, (const char *cap), (cap))                                              \
  X(int, use_default_colors, (void), ())                                                     \
  X(int, wredrawln, (WINDOW * w, int beg, int num), (w, beg, num))                           \
  X(int, init_extended_pair, (int p, int f, int b), (p, f, b))                               \
  X(int, setcchar, (cchar_t * c, const wchar_t *s, const attr_t a, short p, const void *o),  \
    (c, s, a, p, o))                                                                         \
  X(int, mvwadd_wch, (WINDOW * w, int y, int x, const cchar_t *c), (w, y, x, c))             \
  X(int, getmaxy, (const WINDOW *w), (w))                                                    \
  X(int, getmaxx, (const WINDOW *w), (w))

/* The real functions and the addresses of curses' globals, filled once under pthread_once
   before cnc_load returns NULL. */
#define POINTER(ret, name, params, args) ret(*name) params;
static struct {
  CURSES_FUNCTIONS(POINTER)
  WINDOW **stdscr;
  int *colors, *color_pairs;
} real;
static const char *failure;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
  void *library = dlopen("libncursesw.so.6", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    failure = dlerror();
    return;
  }
#define RESOLVE_AS(field, name)                                                              \
  if (!(*(void **)&real.field = dlsym(library, name))) {                                     \
    failure = "libncursesw.so.6 has no " name;                                               \
    return;                                                                                  \
  }
#define RESOLVE(ret, name, params, args) RESOLVE_AS(name, #name)
  CURSES_FUNCTIONS(RESOLVE)
  RESOLVE_AS(stdscr, "stdscr")
  RESOLVE_AS(colors, "COLORS")
  RESOLVE_AS(color_pairs, "COLOR_PAIRS")
}

const char *cnc_load(void) {
  pthread_once(&once, load);
  return failure;
}

#define FORWARD(ret, name, params, args)                                                     \
  ret name params { return real.name args; }
CURSES_FUNCTIONS(FORWARD)

WINDOW *cnc_stdscr(void) { return *real.stdscr; }
int cnc_colors(void) { return *real.colors; }
int cnc_color_pairs(void) { return *real.color_pairs; }

void cnc_getmaxyx(WINDOW *w, int *rows, int *cols) {
  *rows = real.getmaxy(w);
  *cols = real.getmaxx(w);
}

int cnc_init_pair(int pair, int fg, int bg) { return real.init_extended_pair(pair, fg, bg); }

/* A cell of colour pair `pair`, which may be past 255: passed through setcchar's opts. */
int cnc_put_cell(int row, int col, wchar_t ch, int pair) {
  cchar_t cell;
  wchar_t text[2] = {ch, 0};
  if (real.setcchar(&cell, text, A_NORMAL, 0, &pair) != OK) return ERR;
  return real.mvwadd_wch(*real.stdscr, row, col, &cell);
}
