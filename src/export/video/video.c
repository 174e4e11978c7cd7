/* The video writer (video.h) over libavformat, libavcodec and libswscale (FFmpeg 5.1's API,
 * Debian 12's libavcodec59). */
#include "video.h"

#include "../../core/core.h"

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>

#include <string.h>
#include <strings.h>

#define GIF_MAX_COLORS 256
#define WEBM_ENCODER "libvpx-vp9"
#define WEBM_CRF "20"     /* libvpx's 0..63 quality scale; 15..35 is its guide's usual range */
#define WEBM_CPU_USED "4" /* speed 0..8 at the "good" deadline: 4 trades little quality */
/* The GIF encoder (FFmpeg's, with its default transdiff) marks the pixels a frame keeps from
 * the one before with the transparent entry it found in the FIRST frame's palette: the
 * least opaque entry. An unused entry left transparent there was the one the next new colour
 * took (a snake's body, new on the frame it first grows), which then decoded as "kept". So
 * the last entry is transparent and never a colour; the unused ones are opaque. */
#define GIF_TRANSPARENT (GIF_MAX_COLORS - 1)

struct sk_video {
    AVFormatContext *format;
    AVCodecContext *codec;
    AVStream *stream;
    AVFrame *frame;
    AVPacket *packet;
    struct SwsContext *scale; /* RGB to yuv420p (video codecs) */
    int width, height;
    int64_t next_pts;
    bool gif, header_written;
    int num_colors;                 /* GIF: the colours so far, in order of appearance */
    uint32_t palette[GIF_MAX_COLORS]; /* 0xAARRGGBB, as AV_PIX_FMT_PAL8 holds it */
    char path[4096];
};

static sk_status av_failure(const char *what, const char *path, int code) {
    char text[AV_ERROR_MAX_STRING_SIZE] = {0};
    av_strerror(code, text, sizeof text);
    return sk_fail(SK_ERR_IO, "video '%s': %s failed: %s", path, what, text);
}

static void video_free(sk_video *video) {
    if (!video) return;
    if (video->format && video->format->pb) avio_closep(&video->format->pb);
    avformat_free_context(video->format);
    avcodec_free_context(&video->codec);
    av_frame_free(&video->frame);
    av_packet_free(&video->packet);
    sws_freeContext(video->scale);
    free(video);
}

static bool has_suffix(const char *path, const char *suffix) {
    size_t n = strlen(path), m = strlen(suffix);
    return n >= m && strcasecmp(path + n - m, suffix) == 0;
}

sk_status sk_video_open(sk_video **out, const char *path, int width, int height, int fps) {
    *out = NULL;
    bool gif = has_suffix(path, ".gif"), webm = has_suffix(path, ".webm");
    if (!gif && !webm && !has_suffix(path, ".mp4") && !has_suffix(path, ".mkv"))
        return sk_fail(SK_ERR_INVALID,
                       "video '%s': expected a name ending in .mp4, .mkv, .webm or .gif", path);
    if (width < 2 || height < 2 || fps < 1 || fps > 240 || (!gif && (width % 2 || height % 2)))
        return sk_fail(SK_ERR_INVALID, "video '%s': frames of %dx%d at %d fps (expected even "
                       "sides for H.264 and VP9, 1..240 fps)", path, width, height, fps);
    /* WebM holds VP8, VP9 or AV1 only: VP9 from libvpx, where FFmpeg was built with it (Debian's
     * libavcodec is); asked for by name at run time, since another build may lack it */
    if (webm && !avcodec_find_encoder_by_name(WEBM_ENCODER))
        return sk_fail(SK_ERR_IO,
                       "video '%s': this FFmpeg's libavcodec has no VP9 encoder (%s, from "
                       "libvpx), which a .webm needs; write .mp4, .mkv or .gif instead",
                       path, WEBM_ENCODER);
    av_log_set_level(AV_LOG_ERROR); /* libx264 reports its settings at the default level */
    sk_video *video = calloc(1, sizeof *video);
    if (!video) return sk_fail(SK_ERR_NOMEM, "out of memory for a video");
    video->gif = gif;
    for (int k = 0; k < GIF_MAX_COLORS; k++) video->palette[k] = k == GIF_TRANSPARENT ? 0 : 0xff000000u;
    video->width = width, video->height = height;
    snprintf(video->path, sizeof video->path, "%s", path);
    int code = avformat_alloc_output_context2(&video->format, NULL, NULL, path);
    if (code < 0 || !video->format) {
        video_free(video);
        return av_failure("choosing the container", path, code);
    }
    const AVCodec *codec = gif    ? avcodec_find_encoder(AV_CODEC_ID_GIF)
                           : webm ? avcodec_find_encoder_by_name(WEBM_ENCODER)
                                  : avcodec_find_encoder_by_name("libx264");
    if (!codec && !gif) codec = avcodec_find_encoder(AV_CODEC_ID_MPEG4);
    if (!codec) {
        video_free(video);
        return sk_fail(SK_ERR_IO, "video '%s': this FFmpeg has no %s encoder", path,
                       gif ? "GIF" : "H.264 or MPEG-4");
    }
    video->stream = avformat_new_stream(video->format, NULL);
    video->codec = avcodec_alloc_context3(codec);
    video->frame = av_frame_alloc();
    video->packet = av_packet_alloc();
    if (!video->stream || !video->codec || !video->frame || !video->packet) {
        video_free(video);
        return sk_fail(SK_ERR_NOMEM, "out of memory for a video");
    }
    AVCodecContext *c = video->codec;
    c->width = width, c->height = height;
    c->time_base = (AVRational){1, fps};
    c->framerate = (AVRational){fps, 1};
    c->pix_fmt = gif ? AV_PIX_FMT_PAL8 : AV_PIX_FMT_YUV420P;
    c->gop_size = 2 * fps;
    if (!gif && strcmp(codec->name, "libx264") == 0) av_opt_set(c->priv_data, "crf", "18", 0);
    if (!gif && codec->id == AV_CODEC_ID_MPEG4) c->bit_rate = 4000000;
    if (webm) { /* constant quality (crf with no bit rate), at libvpx's faster "good" speeds */
        c->bit_rate = 0;
        av_opt_set(c->priv_data, "crf", WEBM_CRF, 0);
        av_opt_set(c->priv_data, "deadline", "good", 0);
        av_opt_set(c->priv_data, "cpu-used", WEBM_CPU_USED, 0);
    }
    if (video->format->oformat->flags & AVFMT_GLOBALHEADER) c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    if ((code = avcodec_open2(c, codec, NULL)) < 0 ||
        (code = avcodec_parameters_from_context(video->stream->codecpar, c)) < 0) {
        video_free(video);
        return av_failure("opening the encoder", path, code);
    }
    video->stream->time_base = c->time_base;
    video->frame->format = c->pix_fmt;
    video->frame->width = width, video->frame->height = height;
    if ((code = av_frame_get_buffer(video->frame, 0)) < 0) {
        video_free(video);
        return av_failure("allocating a frame", path, code);
    }
    if (!gif) {
        video->scale = sws_getContext(width, height, AV_PIX_FMT_RGB24, width, height,
                                      AV_PIX_FMT_YUV420P, SWS_BICUBIC, NULL, NULL, NULL);
        if (!video->scale) {
            video_free(video);
            return sk_fail(SK_ERR_NOMEM, "video '%s': no RGB to yuv420p scaler", path);
        }
    }
    if ((code = avio_open(&video->format->pb, path, AVIO_FLAG_WRITE)) < 0) {
        video_free(video);
        return av_failure("opening the file", path, code);
    }
    if ((code = avformat_write_header(video->format, NULL)) < 0) {
        video_free(video);
        return av_failure("writing the header", path, code);
    }
    video->header_written = true;
    *out = video;
    return SK_OK;
}

/* Sends frame (NULL: the end) and writes every packet the encoder has ready. */
static sk_status encode(sk_video *video, AVFrame *frame) {
    int code = avcodec_send_frame(video->codec, frame);
    if (code < 0) return av_failure("encoding a frame", video->path, code);
    for (;;) {
        code = avcodec_receive_packet(video->codec, video->packet);
        if (code == AVERROR(EAGAIN) || code == AVERROR_EOF) return SK_OK;
        if (code < 0) return av_failure("encoding a frame", video->path, code);
        /* every frame lasts one tick: without it the MP4 muxer's edit list ends at the last
         * frame's start and players drop that frame */
        video->packet->duration = 1;
        av_packet_rescale_ts(video->packet, video->codec->time_base, video->stream->time_base);
        video->packet->stream_index = video->stream->index;
        code = av_interleaved_write_frame(video->format, video->packet);
        if (code < 0) return av_failure("writing a frame", video->path, code);
    }
}

/* The palette index of color, added when new; -1 once the palette is full. */
static int palette_index(sk_video *video, uint32_t color) {
    for (int k = 0; k < video->num_colors; k++)
        if (video->palette[k] == color) return k;
    if (video->num_colors == GIF_TRANSPARENT) return -1;
    video->palette[video->num_colors] = color;
    return video->num_colors++;
}

/* The nearest palette entry of color (a frame with colours the palette lacks). */
static int nearest(const sk_video *video, uint32_t color) {
    int best = 0;
    long best_distance = -1;
    for (int k = 0; k < video->num_colors; k++) {
        long distance = 0;
        for (int shift = 0; shift <= 16; shift += 8) {
            long d = (long)((color >> shift) & 0xff) - (long)((video->palette[k] >> shift) & 0xff);
            distance += d * d;
        }
        if (best_distance < 0 || distance < best_distance) best = k, best_distance = distance;
    }
    return best;
}

static void to_palette(sk_video *video, const uint8_t *rgb) {
    AVFrame *f = video->frame;
    int last_index = -1;
    uint32_t last_color = 0;
    for (int y = 0; y < video->height; y++)
        for (int x = 0; x < video->width; x++) {
            const uint8_t *p = rgb + 3 * ((size_t)y * (size_t)video->width + (size_t)x);
            uint32_t color = 0xff000000u | (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
            if (last_index < 0 || color != last_color) {
                last_index = palette_index(video, color);
                if (last_index < 0) last_index = nearest(video, color);
                last_color = color;
            }
            f->data[0][(size_t)y * (size_t)f->linesize[0] + (size_t)x] = (uint8_t)last_index;
        }
    memcpy(f->data[1], video->palette, sizeof video->palette);
}

sk_status sk_video_frame(sk_video *video, const uint8_t *rgb) {
    int code = av_frame_make_writable(video->frame);
    if (code < 0) return av_failure("reusing a frame", video->path, code);
    if (video->gif) {
        to_palette(video, rgb);
    } else {
        const uint8_t *planes[1] = {rgb};
        const int strides[1] = {3 * video->width};
        sws_scale(video->scale, planes, strides, 0, video->height, video->frame->data,
                  video->frame->linesize);
    }
    video->frame->pts = video->next_pts++;
    return encode(video, video->frame);
}

sk_status sk_video_close(sk_video *video) {
    if (!video) return SK_OK;
    sk_status status = encode(video, NULL);
    int code = av_write_trailer(video->format);
    if (status == SK_OK && code < 0) status = av_failure("finishing the file", video->path, code);
    if (video->format->pb && (code = avio_closep(&video->format->pb)) < 0 && status == SK_OK)
        status = av_failure("closing the file", video->path, code);
    video_free(video);
    return status;
}
