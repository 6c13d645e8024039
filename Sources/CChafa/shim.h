#ifndef CCHAFA_SHIM_H
#define CCHAFA_SHIM_H
/* The hark-cover helper's two steps, in C because both libraries are C through and through:
   a picture decoded and scaled to RGBA by FFmpeg (libavformat, libavcodec, libswscale), and
   RGBA made into character cells by chafa. Swift sees only these functions and plain types. */
#include <chafa.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/dict.h>
#include <libavutil/mem.h>
#include <libswscale/swscale.h>
#include <stdint.h>
#include <string.h>

enum {
  HC_OK = 0,
  /* No picture: the file has no attached one (embedded), or has no video stream at all. */
  HC_NO_PICTURE = 1,
  /* FFmpeg cannot open or read the file. */
  HC_CANNOT_OPEN = 2,
  /* The picture is there but does not decode (damaged, a codec FFmpeg lacks). */
  HC_CANNOT_DECODE = 3,
  /* Wider or taller than 8,192 pixels, or empty. */
  HC_TOO_LARGE = 4,
  HC_NO_MEMORY = 5,
};

/* Decodes the picture of `path` and scales it to fit inside max_width x max_height (its shape
   kept; never scaled up), as RGBA rows of width*4 bytes. `embedded`: the file's attached
   picture (an MP3's APIC, a FLAC's PICTURE block, an MP4's covr, a Matroska attachment);
   otherwise the file is itself a picture (cover.jpg). On HC_OK, *rgba is the caller's, freed
   with av_free. Only the file protocol: a name FFmpeg would take for a URL is not fetched. */
static inline int hc_load_picture(const char *path, int embedded, int max_width, int max_height,
                                  uint8_t **rgba, int *width, int *height) {
  *rgba = NULL;
  AVFormatContext *format = NULL;
  AVDictionary *options = NULL;
  av_dict_set(&options, "protocol_whitelist", "file", 0);
  int rc = avformat_open_input(&format, path, NULL, &options);
  av_dict_free(&options);
  if (rc < 0) return HC_CANNOT_OPEN;
  if (!embedded && avformat_find_stream_info(format, NULL) < 0) {
    avformat_close_input(&format);
    return HC_CANNOT_OPEN;
  }
  AVStream *stream = NULL;
  for (unsigned i = 0; i < format->nb_streams; i++) {
    AVStream *s = format->streams[i];
    if (s->codecpar->codec_type != AVMEDIA_TYPE_VIDEO) continue;
    if (embedded && !(s->disposition & AV_DISPOSITION_ATTACHED_PIC)) continue;
    stream = s;
    break;
  }
  if (!stream) {
    avformat_close_input(&format);
    return HC_NO_PICTURE;
  }
  int result = HC_CANNOT_DECODE;
  AVPacket *packet = av_packet_alloc();
  AVFrame *frame = av_frame_alloc();
  AVCodecContext *codec = NULL;
  struct SwsContext *scaler = NULL;
  if (!packet || !frame) {
    result = HC_NO_MEMORY;
    goto done;
  }
  if (embedded) {
    if (stream->attached_pic.size <= 0 || av_packet_ref(packet, &stream->attached_pic) < 0) {
      result = HC_NO_PICTURE;
      goto done;
    }
  } else {
    int found = 0;
    for (int tries = 0; tries < 64 && !found; tries++) {
      if (av_read_frame(format, packet) < 0) break;
      if (packet->stream_index == stream->index) found = 1;
      else av_packet_unref(packet);
    }
    if (!found) goto done;
  }
  /* Refused before it is decoded, when the file says its size: a hostile header must not cost
     a gigabyte. The decoder is held to the same (max_pixels) when it does not say. */
  if (stream->codecpar->width > 8192 || stream->codecpar->height > 8192) {
    result = HC_TOO_LARGE;
    goto done;
  }
  const AVCodec *decoder = avcodec_find_decoder(stream->codecpar->codec_id);
  if (!decoder) goto done;
  codec = avcodec_alloc_context3(decoder);
  if (!codec) {
    result = HC_NO_MEMORY;
    goto done;
  }
  if (avcodec_parameters_to_context(codec, stream->codecpar) < 0) goto done;
  codec->thread_count = 1;
  codec->max_pixels = 8192 * 8192;
  if (avcodec_open2(codec, decoder, NULL) < 0) goto done;
  if (avcodec_send_packet(codec, packet) < 0) goto done;
  avcodec_send_packet(codec, NULL);
  if (avcodec_receive_frame(codec, frame) < 0) goto done;
  int w = frame->width, h = frame->height;
  if (w <= 0 || h <= 0 || w > 8192 || h > 8192) {
    result = HC_TOO_LARGE;
    goto done;
  }
  int dw = w, dh = h;
  if (dw > max_width) {
    dh = (int)((int64_t)dh * max_width / dw);
    dw = max_width;
  }
  if (dh > max_height) {
    dw = (int)((int64_t)dw * max_height / dh);
    dh = max_height;
  }
  if (dw < 1) dw = 1;
  if (dh < 1) dh = 1;
  scaler = sws_getContext(w, h, (enum AVPixelFormat)frame->format, dw, dh, AV_PIX_FMT_RGBA,
                          SWS_AREA, NULL, NULL, NULL);
  if (!scaler) goto done;
  uint8_t *out = av_mallocz((size_t)dw * dh * 4);
  if (!out) {
    result = HC_NO_MEMORY;
    goto done;
  }
  uint8_t *planes[4] = {out, NULL, NULL, NULL};
  int strides[4] = {dw * 4, 0, 0, 0};
  if (sws_scale(scaler, (const uint8_t *const *)frame->data, frame->linesize, 0, h, planes,
                strides) <= 0) {
    av_free(out);
    goto done;
  }
  *rgba = out;
  *width = dw;
  *height = dh;
  result = HC_OK;
done:
  sws_freeContext(scaler);
  avcodec_free_context(&codec);
  av_frame_free(&frame);
  av_packet_free(&packet);
  avformat_close_input(&format);
  return result;
}

/* The cells `rgba` (width x height, rows of width*4 bytes) makes in at most columns x rows
   character cells, its shape kept for cells font_ratio as wide as tall: *used_columns x *used_rows
   of them, row by row, into chars (Unicode scalars: block elements and spaces, one cell wide
   each), fg and bg (palette indexes for 8, 16 or 256 colours; -1: the terminal's own). The
   arrays hold columns*rows entries. */
static inline void hc_render_cells(const uint8_t *rgba, int width, int height, int columns,
                                   int rows, int colors, float font_ratio, uint32_t *chars,
                                   int32_t *fg, int32_t *bg, int *used_columns, int *used_rows) {
  gint cw = columns, ch = rows;
  chafa_calc_canvas_geometry(width, height, &cw, &ch, font_ratio, FALSE, FALSE);
  if (cw < 1) cw = 1;
  if (ch < 1) ch = 1;
  if (cw > columns) cw = columns;
  if (ch > rows) ch = rows;
  ChafaSymbolMap *symbols = chafa_symbol_map_new();
  chafa_symbol_map_add_by_tags(symbols, CHAFA_SYMBOL_TAG_BLOCK | CHAFA_SYMBOL_TAG_SPACE);
  chafa_symbol_map_remove_by_tags(symbols, CHAFA_SYMBOL_TAG_WIDE | CHAFA_SYMBOL_TAG_AMBIGUOUS);
  ChafaCanvasConfig *config = chafa_canvas_config_new();
  chafa_canvas_config_set_geometry(config, cw, ch);
  chafa_canvas_config_set_canvas_mode(config, colors >= 256  ? CHAFA_CANVAS_MODE_INDEXED_240
                                              : colors >= 16 ? CHAFA_CANVAS_MODE_INDEXED_16
                                                             : CHAFA_CANVAS_MODE_INDEXED_8);
  chafa_canvas_config_set_symbol_map(config, symbols);
  ChafaCanvas *canvas = chafa_canvas_new(config);
  chafa_canvas_draw_all_pixels(canvas, CHAFA_PIXEL_RGBA8_UNASSOCIATED, rgba, width, height,
                               width * 4);
  for (int y = 0; y < ch; y++) {
    for (int x = 0; x < cw; x++) {
      int i = y * cw + x;
      gint f = -1, b = -1;
      chafa_canvas_get_raw_colors_at(canvas, x, y, &f, &b);
      chars[i] = (uint32_t)chafa_canvas_get_char_at(canvas, x, y);
      /* 256 and up are chafa's "transparent", "foreground" and "background". */
      fg[i] = (f >= 0 && f < 256) ? f : -1;
      bg[i] = (b >= 0 && b < 256) ? b : -1;
    }
  }
  chafa_canvas_unref(canvas);
  chafa_canvas_config_unref(config);
  chafa_symbol_map_unref(symbols);
  *used_columns = cw;
  *used_rows = ch;
}

/* The sixel image (a DCS sequence: ESC P 0;1;0 q … ESC \\) that draws `rgba` (width x height,
   rows of width*4 bytes) over columns x rows cells of cell_width x cell_height pixels, for a
   terminal that draws sixels: chafa chooses its palette (up to 256 colours) and dithers.
   chafa keeps the image within the cells: its height a multiple of six pixels (a sixel band)
   no taller than theirs, so it never reaches the row below. The bytes are the caller's, freed
   with g_free; NULL when chafa makes none. */
static inline char *hc_render_sixels(const uint8_t *rgba, int width, int height, int columns,
                                     int rows, int cell_width, int cell_height, size_t *length) {
  ChafaCanvasConfig *config = chafa_canvas_config_new();
  chafa_canvas_config_set_geometry(config, columns, rows);
  chafa_canvas_config_set_cell_geometry(config, cell_width, cell_height);
  chafa_canvas_config_set_pixel_mode(config, CHAFA_PIXEL_MODE_SIXELS);
  chafa_canvas_config_set_canvas_mode(config, CHAFA_CANVAS_MODE_TRUECOLOR);
  ChafaCanvas *canvas = chafa_canvas_new(config);
  chafa_canvas_draw_all_pixels(canvas, CHAFA_PIXEL_RGBA8_UNASSOCIATED, rgba, width, height,
                               width * 4);
  /* Only the two sequences a sixel image needs; nothing of the terminal's own. */
  ChafaTermInfo *info = chafa_term_info_new();
  chafa_term_info_set_seq(info, CHAFA_TERM_SEQ_BEGIN_SIXELS, "\033P%1;%2;%3q", NULL);
  chafa_term_info_set_seq(info, CHAFA_TERM_SEQ_END_SIXELS, "\033\\", NULL);
  GString *printed = chafa_canvas_print(canvas, info);
  chafa_term_info_unref(info);
  chafa_canvas_unref(canvas);
  chafa_canvas_config_unref(config);
  if (!printed) return NULL;
  *length = printed->len;
  return g_string_free(printed, FALSE);
}

/* g_free for Swift. */
static inline void hc_free_sixels(char *p) { g_free(p); }

/* av_free for Swift (it takes a void pointer). */
static inline void hc_free(void *p) { av_free(p); }

/* FFmpeg's log off: a damaged picture is said in hark's words. */
static inline void hc_quiet(void) { av_log_set_level(AV_LOG_QUIET); }
#endif
