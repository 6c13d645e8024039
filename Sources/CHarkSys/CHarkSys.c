#define _GNU_SOURCE
#include "CHarkSys.h"
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <unistd.h>
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

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

int chs_pipe2(int fds[2], int flags) { return pipe2(fds, flags); }

int chs_send_with_descriptors(int socket, const void *bytes, size_t count, const int *fds,
                              int fdCount) {
  struct iovec io = {.iov_base = (void *)bytes, .iov_len = count};
  char control[CMSG_SPACE(sizeof(int) * CHS_MOST_DESCRIPTORS)];
  memset(control, 0, sizeof control);
  struct msghdr message = {.msg_iov = &io, .msg_iovlen = 1};
  if (fdCount < 0 || fdCount > CHS_MOST_DESCRIPTORS) {
    errno = EINVAL;
    return -1;
  }
  if (fdCount > 0) {
    message.msg_control = control;
    message.msg_controllen = CMSG_SPACE(sizeof(int) * fdCount);
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int) * fdCount);
    memcpy(CMSG_DATA(header), fds, sizeof(int) * fdCount);
  }
  ssize_t sent;
  do {
    sent = sendmsg(socket, &message, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  return sent < 0 ? -1 : (int)sent;
}

ssize_t chs_receive_with_descriptors(int socket, void *bytes, size_t capacity, int *fds,
                                     int *fdCount) {
  struct iovec io = {.iov_base = bytes, .iov_len = capacity};
  char control[CMSG_SPACE(sizeof(int) * CHS_MOST_DESCRIPTORS)];
  struct msghdr message = {
      .msg_iov = &io, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
  *fdCount = 0;
  ssize_t got;
  do {
    got = recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
  } while (got < 0 && errno == EINTR);
  if (got < 0) return -1;
  for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL;
       header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
    int n = (int)((header->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    for (int i = 0; i < n; i++) {
      int fd;
      memcpy(&fd, CMSG_DATA(header) + i * sizeof(int), sizeof fd);
      if (*fdCount < CHS_MOST_DESCRIPTORS) {
        fds[(*fdCount)++] = fd;
      } else {
        close(fd);
      }
    }
  }
  if (message.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) {
    for (int i = 0; i < *fdCount; i++) close(fds[i]);
    *fdCount = 0;
    errno = EMSGSIZE;
    return -1;
  }
  return got;
}

int chs_socketpair_seqpacket(int fds[2]) {
  return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds);
}

int chs_pidfd_open(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

pid_t chs_gettid(void) { return (pid_t)syscall(SYS_gettid); }

int chs_pidfd_send_signal(int pidfd, int signal) {
  return (int)syscall(SYS_pidfd_send_signal, pidfd, signal, NULL, 0);
}

void chs_close_all_but(int keep) {
  if (keep > 3) {
    if (syscall(SYS_close_range, 3, keep - 1, 0) != 0) {
      for (int fd = 3; fd < keep; fd++) close(fd);
    }
  }
  if (syscall(SYS_close_range, keep + 1, ~0U, 0) != 0) {
    for (int fd = keep + 1; fd < 65536; fd++) close(fd);
  }
}

const void *chs_memmem(const void *haystack, size_t haystack_length, const void *needle,
                       size_t needle_length) {
  return memmem(haystack, haystack_length, needle, needle_length);
}
