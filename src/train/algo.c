/* The learners' table (algo.h) and train.algo. */
#include "algo.h"

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
