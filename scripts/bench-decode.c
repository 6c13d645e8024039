/* libsndfile alone, as the floor for hark's decode throughput: opens FILE, reads every frame
 * with sf_readf_float into a small buffer (as a player's decode thread does), closes it, and
 * repeats until at least MIN_SECONDS of wall time have passed. Prints one line:
 *   <frames decoded> <sample rate> <wall seconds>
 * scripts/bench compiles it at bench time: cc -O2 bench-decode.c -lsndfile
 */
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench-decode FILE [MIN_SECONDS]\n");
    return 2;
  }
  double min_seconds = argc > 2 ? atof(argv[2]) : 1.0;
  /* 4096 frames of up to 8 channels: the size of one decode-thread read in a player. */
  static float buffer[4096 * 8];
  long long frames = 0;
  int rate = 0, passes = 0;
  double start = now(), elapsed = 0;
  do {
    SF_INFO info = {0};
    SNDFILE *f = sf_open(argv[1], SFM_READ, &info);
    if (f == NULL) {
      fprintf(stderr, "bench-decode: cannot read '%s' (%s)\n", argv[1], sf_strerror(NULL));
      return 1;
    }
    if (info.channels > 8) {
      fprintf(stderr, "bench-decode: '%s' has %d channels; at most 8\n", argv[1], info.channels);
      return 1;
    }
    rate = info.samplerate;
    sf_count_t n;
    while ((n = sf_readf_float(f, buffer, 4096)) > 0) frames += n;
    sf_close(f);
    passes++;
    elapsed = now() - start;
  } while (elapsed < min_seconds || passes < 2);
  printf("%lld %d %.6f\n", frames, rate, elapsed);
  return 0;
}
