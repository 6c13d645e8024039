#ifndef CFFMPEG_SHIM_H
#define CFFMPEG_SHIM_H
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libswresample/swresample.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <libavutil/mathematics.h>
#include <libavutil/mem.h>
#include <libavutil/opt.h>
#include <libavutil/samplefmt.h>

/* FFmpeg's error codes are function-like macros (AVERROR, FFERRTAG), which Swift cannot import. */
static inline int cff_error_eof(void) { return AVERROR_EOF; }
static inline int cff_error_again(void) { return AVERROR(EAGAIN); }
static inline int cff_error_invalid_data(void) { return AVERROR_INVALIDDATA; }

/* AV_NOPTS_VALUE is a macro with a cast in it, which Swift does not import. */
static inline int64_t cff_no_timestamp(void) { return AV_NOPTS_VALUE; }

/* av_err2str is a macro around a compound literal; this writes the text into `buffer`. */
static inline const char *cff_error_text(int code, char *buffer, size_t size) {
  return av_make_error_string(buffer, size, code);
}

#endif
