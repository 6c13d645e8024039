// The main thread of hark's async main, kept alive.
//
// Swift's async main hands the main thread to the main queue with dispatch_main(), which on Linux
// ends the thread with pthread_exit(). That unwinds the main thread's stack: libgcc_s looks each
// frame up in the executable's unwind tables (.eh_frame_hdr's binary search, then .eh_frame), and
// since the kernel maps 64 KB around each page read, about 0.8 MB of tables the process never reads
// again became resident in every hark process, on top of the unwinder's own code
// (docs/PERFORMANCE.md, "The main thread kept alive"). Here the main thread drains the main queue
// itself, as CoreFoundation's run loop does on Linux: it waits on the queue's wake-up handle (an
// eventfd) and runs what was queued, for as long as the process lives. Nothing else changes: the
// main actor's jobs and DispatchQueue.main's blocks run on the main thread, in order, as before.
//
// Installed before main() through the Swift runtime's hook for draining the main queue. Should
// the hook or libdispatch's entry points be missing (a toolchain without them), the runtime's
// own way is left as it is.
#define _GNU_SOURCE
#include <malloc.h>
#include "CHarkMain.h"
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

typedef void (*chm_original)(void);
typedef void (*chm_override)(chm_original);
typedef void (*chm_hook)(chm_original, chm_override);

// The Swift runtime's (libswift_Concurrency) and libdispatch's, weak so that their absence
// leaves them null rather than failing the link.
extern __attribute__((weak)) chm_hook swift_task_asyncMainDrainQueue_hook;
extern __attribute__((weak)) int _dispatch_get_main_queue_handle_4CF(void);
extern __attribute__((weak)) void _dispatch_main_queue_callback_4CF(void *message);

static volatile int chm_started;

int chm_main_queue_loop_started(void) { return chm_started; }

// The thread signals are delivered to: it waits with none blocked, for as long as the
// process lives (libdispatch's _dispatch_sigsuspend).
static void *chm_take_signals(void *unused) {
  (void)unused;
  sigset_t none;
  sigemptyset(&none);
  for (;;) sigsuspend(&none);
  return NULL;
}

// Never returns (as dispatch_main): the process ends with exit() or a signal.
__attribute__((swiftcall, noreturn)) static void chm_drain_main_queue(
    chm_original original, chm_override compat) {
  (void)original;
  (void)compat;
  // Signals as dispatch_main leaves them. It gives the main thread the mask libdispatch's
  // worker threads have (every signal blocked but those a fault raises on the thread itself),
  // and the thread, once its stack is unwound, waits in sigsuspend with none blocked: the one
  // thread asynchronous signals are delivered to. Their handlers run there (the interface's
  // SIGWINCH, SIGTSTP, SIGINT), their default actions apply (SIGHUP ends a headless player),
  // and a signal set to SIG_IGN for a dispatch source is still queued for it (the main thread,
  // the process's leader, blocks it). Here that waiting thread is one of its own.
  sigset_t mask;
  sigfillset(&mask);
  int synchronous[] = {SIGILL, SIGTRAP, SIGFPE, SIGBUS, SIGSEGV, SIGSYS, SIGPIPE, SIGPROF};
  for (unsigned i = 0; i < sizeof synchronous / sizeof *synchronous; i++)
    sigdelset(&mask, synchronous[i]);
  pthread_sigmask(SIG_BLOCK, &mask, NULL);
  pthread_t signals;
  if (pthread_create(&signals, NULL, chm_take_signals, NULL) == 0) {
    pthread_setname_np(signals, "hark-signals");
    pthread_detach(signals);
  } else {
    pthread_sigmask(SIG_UNBLOCK, &mask, NULL);  // no such thread: the main thread takes them
  }
  int fd = _dispatch_get_main_queue_handle_4CF();
  chm_started = 1;
  for (;;) {
    // What was queued before the handle existed (the main task itself) runs first.
    _dispatch_main_queue_callback_4CF(NULL);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (poll(&p, 1, -1) < 0) {
      if (errno != EINTR) abort();
    }
    // Taken before the queue is run: a wake-up that comes meanwhile wakes the next poll.
    uint64_t count;
    (void)!read(fd, &count, sizeof count);
  }
}

__attribute__((constructor)) static void chm_install(void) {
  if (&swift_task_asyncMainDrainQueue_hook == NULL || !_dispatch_get_main_queue_handle_4CF
      || !_dispatch_main_queue_callback_4CF)
    return;
  swift_task_asyncMainDrainQueue_hook = (chm_hook)chm_drain_main_queue;
}

/* One malloc arena for the whole process, set before any thread allocates (glibc fixes the
   number of arenas when a second thread first needs one, so this cannot wait for main). By
   default each thread that allocates while another does gets an arena of its own (up to 8 a
   processor), and what it frees stays there for that thread: the interface builds its search
   table, reads a queue's tags and scans the index on threads of their own, and held 97 MB at
   its peak with the library open, 77 MB with one arena (a whole library of 50,000 tracks
   queued). The player's render thread allocates nothing, so it never waits for the arena's
   lock; the others allocate little once started. */
__attribute__((constructor)) static void chm_one_arena(void) { mallopt(M_ARENA_MAX, 1); }
