#ifndef CNCURSESW_H
#define CNCURSESW_H
/* The wide-character API (add_wch, addnwstr, ...): the define pkg-config's ncursesw flags
   carry, here, before the include. */
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

/* ncurses, loaded when the interface takes the terminal (Loader.c), so that the processes that
   draw nothing (the headless player, the session server, hark ctl) do not map it. */

/* Loads libncursesw (and libtinfo with it) if it is not loaded yet. NULL when it is ready,
   else why it cannot be (dlerror's words); no curses function may be called before NULL. */
const char *cnc_load(void);

/* Function-like macros Swift cannot import. */
static inline int cnc_COLOR_PAIR(int n) { return (int)COLOR_PAIR(n); }
void cnc_getmaxyx(WINDOW *w, int *rows, int *cols);
WINDOW *cnc_stdscr(void);

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
int cnc_colors(void);
int cnc_color_pairs(void);

/* Colour pairs past 255, which COLOR_PAIR() cannot carry in an attribute: made with
   init_extended_pair and drawn through setcchar's opts, one cell at a time (a picture's). */
int cnc_init_pair(int pair, int fg, int bg);
int cnc_put_cell(int row, int col, wchar_t ch, int pair);

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
