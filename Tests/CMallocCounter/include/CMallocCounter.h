#ifndef CMALLOC_COUNTER_H
#define CMALLOC_COUNTER_H
#include <pthread.h>

/* Counts the heap allocations made on one thread, for tests that the render path allocates
   nothing (docs/HACKING.md, "The audio path"). Linking this target into a test binary replaces malloc and its kin
   for the whole process; each call forwards to the C library's own. */

/* 1 when malloc is counted; 0 in a build under a sanitizer, which owns malloc itself. */
int cmc_available(void);
/* Counts the allocations of `thread` from now on (replacing any other watched thread). */
void cmc_watch(pthread_t thread);
/* Stops counting. */
void cmc_unwatch(void);
/* Allocations counted since the last cmc_watch. */
long cmc_count(void);

#endif
