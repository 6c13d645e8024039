#ifndef CHARKSYS_H
#define CHARKSYS_H
#include <sys/types.h>
#include <spawn.h>

/* The uid and pid of the process at the other end of a connected Unix socket
   (SO_PEERCRED). Returns 0, or -1 with errno set. Swift's Glibc module does not
   export struct ucred, which glibc declares only under _GNU_SOURCE. */
int chs_peer_credentials(int fd, uid_t *uid, pid_t *pid);

/* posix_spawnattr flags that start the child in a session of its own
   (POSIX_SPAWN_SETSID, glibc 2.26+, also behind _GNU_SOURCE). */
short chs_spawn_setsid_flag(void);

/* Close every descriptor from `lowfd` up in the spawned child
   (posix_spawn_file_actions_addclosefrom_np, glibc 2.34+), so a spawned daemon never holds
   a pipe or terminal of its parent's open. Returns 0 or an error number. */
int chs_spawn_add_closefrom(posix_spawn_file_actions_t *actions, int lowfd);

/* accept4(2) with SOCK_CLOEXEC | SOCK_NONBLOCK (a GNU extension). */
int chs_accept_nonblocking(int fd);

/* pipe2(2) with O_NONBLOCK | O_CLOEXEC (a GNU extension): both flags set atomically, so a
   process spawned meanwhile by another thread never inherits the pipe. 0, or -1 with errno. */
int chs_pipe_nonblocking_cloexec(int fds[2]);

/* Makes stdout line-buffered, so each printed line reaches a pipe or file at once
   (Swift cannot touch the `stdout` global under strict concurrency). */
void chs_line_buffer_stdout(void);

/* memmem(3) (a GNU extension): where `needle` first occurs in `haystack`, or NULL. glibc's
   is vectorised, several times faster than a byte loop over a library's search text. */
const void *chs_memmem(const void *haystack, size_t haystack_length, const void *needle,
                       size_t needle_length);

#endif
