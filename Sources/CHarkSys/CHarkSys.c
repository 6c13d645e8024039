#define _GNU_SOURCE
#include "CHarkSys.h"
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <unistd.h>

int chs_peer_credentials(int fd, uid_t *uid, pid_t *pid) {
  struct ucred cred;
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
  *uid = cred.uid;
  *pid = cred.pid;
  return 0;
}

short chs_spawn_setsid_flag(void) { return POSIX_SPAWN_SETSID; }

int chs_spawn_add_closefrom(posix_spawn_file_actions_t *actions, int lowfd) {
  return posix_spawn_file_actions_addclosefrom_np(actions, lowfd);
}

int chs_accept_nonblocking(int fd) { return accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK); }

void chs_line_buffer_stdout(void) { setvbuf(stdout, NULL, _IOLBF, 0); }

int chs_pipe_nonblocking_cloexec(int fds[2]) { return pipe2(fds, O_NONBLOCK | O_CLOEXEC); }

const void *chs_memmem(const void *haystack, size_t haystack_length, const void *needle,
                       size_t needle_length) {
  return memmem(haystack, haystack_length, needle, needle_length);
}
