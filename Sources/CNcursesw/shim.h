#ifndef CNCURSESW_SHIM_H
#define CNCURSESW_SHIM_H
/* The wide-character API (add_wch, addnwstr, ...). pkg-config's -D flags are dropped by
   SwiftPM for system libraries (and it warns), so the define lives here, before the include. */
#define NCURSES_WIDECHAR 1
#ifndef _XOPEN_SOURCE_EXTENDED
#define _XOPEN_SOURCE_EXTENDED 1
#endif
#include <ncursesw/curses.h>
#include <locale.h>
#include <langinfo.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <wchar.h>

/* Function-like macros Swift cannot import. */
static inline int cnc_COLOR_PAIR(int n) { return (int)COLOR_PAIR(n); }
static inline void cnc_getmaxyx(WINDOW *w, int *rows, int *cols) {
  int r, c;
  getmaxyx(w, r, c);
  *rows = r;
  *cols = c;
}
static inline WINDOW *cnc_stdscr(void) { return stdscr; }

/* Attributes are macros built from NCURSES_BITS; these are the ones the views use. */
static inline int cnc_A_NORMAL(void) { return (int)A_NORMAL; }
static inline int cnc_A_BOLD(void) { return (int)A_BOLD; }
static inline int cnc_A_REVERSE(void) { return (int)A_REVERSE; }
static inline int cnc_A_DIM(void) { return (int)A_DIM; }
static inline int cnc_A_UNDERLINE(void) { return (int)A_UNDERLINE; }

/* The terminal's size from the kernel (TIOCGWINSZ is a macro). Returns 0 or -1. */
static inline int cnc_window_size(int fd, int *rows, int *cols) {
  struct winsize ws;
  if (ioctl(fd, TIOCGWINSZ, &ws) != 0 || ws.ws_row == 0 || ws.ws_col == 0) return -1;
  *rows = ws.ws_row;
  *cols = ws.ws_col;
  return 0;
}

/* How many colours and colour pairs the terminal has (globals that are macros in some
   builds of curses). */
static inline int cnc_colors(void) { return COLORS; }
static inline int cnc_color_pairs(void) { return COLOR_PAIRS; }

/* Colour pairs past 255, which COLOR_PAIR() cannot carry in an attribute: made with
   init_extended_pair and drawn through setcchar's opts, one cell at a time (a picture's). */
static inline int cnc_init_pair(int pair, int fg, int bg) { return init_extended_pair(pair, fg, bg); }
static inline int cnc_put_cell(int row, int col, wchar_t ch, int pair) {
  cchar_t cell;
  wchar_t text[2] = {ch, 0};
  if (setcchar(&cell, text, A_NORMAL, 0, &pair) != OK) return ERR;
  return mvadd_wch(row, col, &cell);
}

/* The window's size in pixels, which terminals that draw pictures report (0 when unknown). */
static inline void cnc_window_pixels(int fd, int *width, int *height) {
  struct winsize ws;
  if (ioctl(fd, TIOCGWINSZ, &ws) != 0) ws.ws_xpixel = ws.ws_ypixel = 0;
  *width = ws.ws_xpixel;
  *height = ws.ws_ypixel;
}

/* Whether the locale's character set is UTF-8 (CODESET is a macro-valued enum). */
static inline int cnc_locale_is_utf8(void) {
  const char *cs = nl_langinfo(CODESET);
  return cs && (cs[0] == 'U' || cs[0] == 'u') && (cs[1] == 'T' || cs[1] == 't') &&
         (cs[2] == 'F' || cs[2] == 'f');
}
#endif
