/* The list of environments. Adding one: write src/envs/NAME.c exporting an
 * sk_env_def, declare it here and add it to the table. */
#include "../core/core.h"
#include "acrobot.h"
#include "cartpole.h"
#include "mountaincar.h"
#include "pendulum.h"
#include "morpho/morpho.h"
#include "prover/prover.h"

#include <string.h>
#include <strings.h>

static const sk_env_def *const g_envs[] = {
    &sk_env_cartpole,
    &sk_env_acrobot,
    &sk_env_mountaincar,
    &sk_env_mountaincar_continuous,
    &sk_env_pendulum,
    &sk_env_prover,
    &sk_env_morpho,
    NULL,
};

const sk_env_def *const *sk_env_list(void) { return g_envs; }

const sk_env_def *sk_env_find(const char *name) {
    if (name) {
        for (int i = 0; g_envs[i]; i++)
            if (strcasecmp(g_envs[i]->id, name) == 0 || strcasecmp(g_envs[i]->alias, name) == 0)
                return g_envs[i];
    }
    char known[512] = "";
    for (int i = 0; g_envs[i]; i++) {
        strncat(known, i ? ", " : "", sizeof known - strlen(known) - 1);
        strncat(known, g_envs[i]->id, sizeof known - strlen(known) - 1);
    }
    sk_fail(SK_ERR_UNKNOWN_ENV, "unknown environment '%s' (known: %s; see 'skinner envs')",
            name ? name : "(none)", known);
    return NULL;
}
