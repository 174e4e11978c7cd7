/*
 * Episode videos (`skinner eval ENV --checkpoint C --video out.mp4|out.webm|out.gif`): frames from an
 * env's render (sk_env_extras.render) written through FFmpeg's libraries (libavformat,
 * libavcodec, libswscale). Built into the skinner program and the tests only when they are
 * found (SKINNER_VIDEO), so libskinner never links FFmpeg; nothing here runs unless a video
 * is asked for.
 */
#ifndef SK_EXPORT_VIDEO_H
#define SK_EXPORT_VIDEO_H

#include "../../train/eval.h"

#include <stdint.h>

typedef struct sk_video sk_video;

/* Opens path for frames of width x height RGB at fps frames a second; the container and codec
 * follow the name: .gif (GIF, a palette of the first frame's colours: lossless for renders of
 * up to 256 colours), .mp4 / .mkv (H.264 by libx264, yuv420p, crf 18; else MPEG-4 part 2) or
 * .webm (VP9 by libvpx, yuv420p, crf 20). SK_ERR_INVALID for another extension or an odd size
 * (all but .gif), SK_ERR_IO naming the file, or naming the missing encoder when this FFmpeg
 * has no libvpx-vp9 for a .webm. */
sk_status sk_video_open(sk_video **out, const char *path, int width, int height, int fps);
/* Appends one frame (height x width x 3 bytes, top row first). */
sk_status sk_video_frame(sk_video *video, const uint8_t *rgb);
/* Finishes the file and frees video (NULL-safe); a failure to finish is reported. */
sk_status sk_video_close(sk_video *video);

typedef struct sk_video_summary {
    int episodes, frames;
    double mean_return;
} sk_video_summary;

/* Runs `episodes` episodes of lp's env (one env, created from lp's config, reset with seed)
 * with lp acting (greedy or sampled from seed's stream) and writes one frame a step, showing
 * the state the action was chosen in, to path. SK_ERR_INVALID when the env has no render. */
sk_status sk_video_record(const sk_loaded_policy *lp, const char *path, int episodes,
                          bool greedy, uint64_t seed, int fps, sk_video_summary *out);

#endif
