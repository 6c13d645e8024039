#ifndef CTAGLIB_SHIM_H
#define CTAGLIB_SHIM_H
#include <tag_c.h>
#endif
