/* The learners' table (algo.h) and train.algo. */
#include "algo.h"

#include <stdio.h>
#include <string.h>

const sk_algo *const sk_algo_table[] = {&sk_algo_ppo, &sk_algo_dqn, &sk_algo_sac, NULL};

sk_status sk_algo_resolve(const sk_config *cfg, const sk_algo **out) {
    enum { MAX_ALGOS = 16 };
    const char *names[MAX_ALGOS + 1];
    int count = 0;
    for (; sk_algo_table[count]; count++) {
        SK_ASSERT(count < MAX_ALGOS);
        names[count] = sk_algo_table[count]->name;
    }
    names[count] = NULL;
    int index;
    sk_status status = sk_cfg_choice(cfg, "train.algo", names[0], names, &index);
    if (status != SK_OK) return status;
    *out = sk_algo_table[index];
    return SK_OK;
}

sk_status sk_algo_check_sections(const sk_algo *algo, const sk_config *cfg) {
    for (int a = 0; sk_algo_table[a]; a++)
        for (const char *const *section = sk_algo_table[a]->sections; *section; section++) {
            bool own = false; /* replay.* is SAC's and DQN's */
            for (const char *const *mine = algo->sections; *mine && !own; mine++)
                own = strcmp(*mine, *section) == 0;
            const char *key = own ? NULL : sk_cfg_first_unused(cfg, *section);
            if (!key) continue;
            char owners[64] = "";
            for (int b = 0; sk_algo_table[b]; b++)
                for (const char *const *other = sk_algo_table[b]->sections; *other; other++)
                    if (strcmp(*other, *section) == 0)
                        snprintf(owners + strlen(owners), sizeof owners - strlen(owners), "%s%s",
                                 owners[0] ? " or " : "", sk_algo_table[b]->name);
            return sk_fail(SK_ERR_CONFIG, "%s applies only with train.algo = %s; this run's is "
                           "%s (set --train.algo, or drop the key)", key, owners, algo->name);
        }
    return SK_OK;
}
