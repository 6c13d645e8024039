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

/* EIO is FFmpeg's network layer's answer for much it cannot name (an unknown host, a TLS
   failure): only its log says which. */
static inline int cff_error_io(void) { return AVERROR(EIO); }

/* The last error FFmpeg logged on this thread, without its "[tcp @ 0x...]" prefix; "" when none
   since `cff_forget_logged_error`. Kept by `cff_keep_logged_errors`'s log callback, which also
   passes everything on to FFmpeg's own (that prints what av_log_set_level lets through). */
static inline char *cff_logged_error(void) {
  static _Thread_local char text[512]; /* in a function: Swift does not emit a header's globals */
  return text;
}

static void cff_log_callback(void *context, int level, const char *format, va_list arguments) {
  if (level <= AV_LOG_ERROR) {
    va_list copy;
    va_copy(copy, arguments);
    int print_prefix = 0;
    av_log_format_line2(context, level, format, copy, cff_logged_error(), 512, &print_prefix);
    va_end(copy);
  }
  av_log_default_callback(context, level, format, arguments);
}

static inline void cff_keep_logged_errors(void) { av_log_set_callback(cff_log_callback); }
static inline void cff_forget_logged_error(void) { cff_logged_error()[0] = 0; }
static inline const char *cff_last_logged_error(void) { return cff_logged_error(); }

#endif
