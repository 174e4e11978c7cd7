/* The classic-control envs' pictures (render.c): Gymnasium's canvas sizes. */
#ifndef SK_ENVS_RENDER_H
#define SK_ENVS_RENDER_H

#include <stdint.h>

#define SK_CARTPOLE_RENDER_WIDTH 600
#define SK_CARTPOLE_RENDER_HEIGHT 400
#define SK_ACROBOT_RENDER_SIZE 500
#define SK_MOUNTAINCAR_RENDER_WIDTH 600
#define SK_MOUNTAINCAR_RENDER_HEIGHT 400
#define SK_PENDULUM_RENDER_SIZE 500

/* sk_env_extras.render of each: env `index` of the batch's state into rgb (height x width x 3) */
void sk_cartpole_render(const void *state, int index, uint8_t *rgb);
void sk_acrobot_render(const void *state, int index, uint8_t *rgb);
void sk_mountaincar_render(const void *state, int index, uint8_t *rgb);
void sk_pendulum_render(const void *state, int index, uint8_t *rgb);

#endif
