#ifndef CHARKMAIN_H
#define CHARKMAIN_H

/// Whether the main thread drains the main queue in hark's own loop (MainQueue.c) rather than
/// in dispatch_main: 1 once that loop has started, 0 before or when it could not be installed.
int chm_main_queue_loop_started(void);

#endif
