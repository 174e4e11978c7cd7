/* Recording episodes of a loaded policy as a video (video.h's sk_video_record): one env,
 * stepped by the policy as actor.c acts, each state drawn by the env's render. */
#include "video.h"

#include "../../core/core.h"
#include "../../train/actor.h"

#include <string.h>

sk_status sk_video_record(const sk_loaded_policy *lp, const char *path, int episodes,
                          bool greedy, uint64_t seed, int fps, sk_video_summary *out) {
    memset(out, 0, sizeof *out);
    const sk_env_def *env = lp->env;
    const sk_env_extras *extras = sk_env_extras_of(env);
    if (!extras->render)
        return sk_fail(SK_ERR_INVALID,
                       "%s cannot be drawn: its env has no render (sk_env_extras.render), so "
                       "--video has no frames to write",
                       env->id);
    if (episodes < 1)
        return sk_fail(SK_ERR_INVALID, "episodes = %d (expected at least 1)", episodes);
    int width = extras->render_width, height = extras->render_height;
    /* a row's worth past the end: libswscale's vector code may read beyond the last pixel */
    uint8_t *rgb = malloc((size_t)width * (size_t)height * 3 + 3 * (size_t)width + 64);
    if (!rgb) return sk_fail(SK_ERR_NOMEM, "out of memory for a %dx%d frame", width, height);
    sk_vec *vec = NULL;
    sk_policy_actor actor;
    memset(&actor, 0, sizeof actor);
    sk_video *video = NULL;
    sk_status status = sk_vec_create(&vec, env, 1, 1, lp->cfg);
    /* a multi-agent env's agents all act (its rows, one per agent); its episodes are agent 0's */
    int rows = status == SK_OK ? sk_vec_num_agents(vec) : 1;
    if (status == SK_OK) status = sk_policy_actor_init(&actor, lp, 1, rows, seed);
    if (status == SK_OK) status = sk_video_open(&video, path, width, height, fps);
    if (status != SK_OK) goto done;
    sk_vec_reset(vec, seed);
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    bool discrete = env->action_space.kind == SK_SPACE_DISCRETE;
    double returns = 0.0;
    while (out->episodes < episodes && status == SK_OK) {
        extras->render(sk_vec_state(vec), 0, rgb);
        if ((status = sk_video_frame(video, rgb)) != SK_OK) break;
        out->frames++;
        int32_t *actions = discrete ? b->actions : NULL;
        float *continuous = discrete ? NULL : b->actions_continuous;
        if (b->obs_u8)
            sk_policy_actor_act_u8(&actor, 0, b->obs_u8, b->masks, rows, greedy, actions,
                                   continuous, NULL);
        else
            sk_policy_actor_act(&actor, 0, b->obs, b->masks, rows, greedy, actions, continuous,
                                NULL);
        sk_vec_step(vec);
        if (b->terminated[0] || b->truncated[0]) {
            returns += b->episode_log[0];
            out->episodes++;
            sk_policy_actor_episode_start(&actor, 0, NULL, NULL, rows);
        }
    }
    out->mean_return = out->episodes ? returns / out->episodes : 0.0;
done:;
    sk_status closed = sk_video_close(video);
    if (status == SK_OK) status = closed;
    sk_policy_actor_free(&actor);
    if (vec) sk_vec_destroy(vec);
    free(rgb);
    return status;
}
