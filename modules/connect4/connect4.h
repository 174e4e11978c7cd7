/* The Connect Four module's table (env.c) and sizes; the rules are c4.h. */
#ifndef SK_CONNECT4_H
#define SK_CONNECT4_H

#include <skinner/env.h>

#include "c4.h"

#define C4_OBS (2 * C4_CELLS + 1) /* own stones, the opponent's, whose move */
#define C4_IMAGE (3 * C4_CELLS) /* ConnectFour-v1: 6 x 7 x 3 bytes */
#define C4_LOG_FIELDS 4           /* return, length, win, draw */

extern const sk_env_def sk_env_connect_four;
extern const sk_env_def sk_env_connect_four_v1;

#endif
