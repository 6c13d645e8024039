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

/* pipe2(2) (a GNU extension): a pipe with `flags` (O_CLOEXEC, O_NONBLOCK) set atomically, so
   that a process spawned meanwhile by another thread never inherits it. 0, or -1 with errno. */
int chs_pipe2(int fds[2], int flags);

/* Makes stdout line-buffered, so each printed line reaches a pipe or file at once
   (Swift cannot touch the `stdout` global under strict concurrency). */
void chs_line_buffer_stdout(void);

/* The most descriptors one message of chs_send_with_descriptors carries. */
#define CHS_MOST_DESCRIPTORS 8

/* sendmsg(2) of `count` bytes with `fdCount` descriptors attached (SCM_RIGHTS; Swift cannot
   use the CMSG macros), without SIGPIPE. The bytes sent, or -1 with errno set. */
int chs_send_with_descriptors(int socket, const void *bytes, size_t count, const int *fds,
                              int fdCount);

/* recvmsg(2) of one message into `bytes` and up to CHS_MOST_DESCRIPTORS descriptors into
   `fds` (close-on-exec; their number in *fdCount). The bytes received (0 at the end), or -1
   with errno set; EMSGSIZE, with no descriptor kept, for a message or descriptors cut short. */
ssize_t chs_receive_with_descriptors(int socket, void *bytes, size_t capacity, int *fds,
                                     int *fdCount);

/* socketpair(2) of SOCK_SEQPACKET Unix sockets, close-on-exec. 0, or -1 with errno. */
int chs_socketpair_seqpacket(int fds[2]);

/* pidfd_open(2) (Linux 5.3): a descriptor that polls readable when the child `pid` ends.
   -1 with errno (ENOSYS on older kernels). */
int chs_pidfd_open(pid_t pid);

/* pidfd_send_signal(2) (Linux 5.1): `signal` to the process of `pidfd`, never to another that
   took its pid after it was reaped. 0, or -1 with errno. */
int chs_pidfd_send_signal(int pidfd, int signal);

/* Closes every descriptor from 3 up but `keep` (close_range(2), Linux 5.9; one by one
   before that): a forked process that will not exec lets go of what its parent had open. */
void chs_close_all_but(int keep);

/* memmem(3) (a GNU extension): where `needle` first occurs in `haystack`, or NULL. glibc's
   is vectorised, several times faster than a byte loop over a library's search text. */
const void *chs_memmem(const void *haystack, size_t haystack_length, const void *needle,
                       size_t needle_length);

/* gettid(2): the calling thread's id, as /proc/self/task and setpriority(2) name it (glibc's
   wrapper is a GNU extension Swift's Glibc module does not show). */
pid_t chs_gettid(void);

#endif
