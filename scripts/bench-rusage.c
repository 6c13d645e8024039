/* Runs a command and reports its CPU time and peak resident set, as /usr/bin/time does but to
 * the microsecond:
 *   bench-rusage OUT COMMAND [ARG...]
 * writes "<user s> <sys s> <peak RSS kB> <exit status>" to the file OUT.
 *
 * Why not wait4 from Python: Linux keeps a process's peak RSS across exec, so a player forked
 * from the 20 MB Python interpreter would report at least 20 MB. Forked from this small
 * program, the player starts from a few hundred kB. scripts/bench compiles it at bench time.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t child;

/* SIGTERM to this process (a timeout in bench.py) is passed on to the player. */
static void forward(int sig) {
  if (child > 0) kill(child, sig);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: bench-rusage OUT COMMAND [ARG...]\n");
    return 2;
  }
  child = fork();
  if (child < 0) {
    perror("bench-rusage: fork");
    return 1;
  }
  if (child == 0) {
    execvp(argv[2], argv + 2);
    perror("bench-rusage: exec");
    _exit(127);
  }
  signal(SIGTERM, forward);
  signal(SIGINT, forward);
  int status;
  struct rusage ru;
  while (wait4(child, &status, 0, &ru) < 0) {
    if (errno != EINTR) {
      perror("bench-rusage: wait4");
      return 1;
    }
  }
  FILE *out = fopen(argv[1], "w");
  if (out == NULL) {
    perror("bench-rusage: opening the output file");
    return 1;
  }
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  fprintf(out, "%ld.%06ld %ld.%06ld %ld %d\n", (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec,
          (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec, ru.ru_maxrss, code);
  fclose(out);
  return code;
}
