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

/* Whether section is one of algo's own. */
static bool owns(const sk_algo *algo, const char *section, size_t len) {
    for (const char *const *mine = algo->sections; *mine; mine++)
        if (strlen(*mine) == len && strncmp(*mine, section, len) == 0) return true;
    return false;
}

/* key of another learner's section: refused naming the learners it belongs to. */
static sk_status foreign_key(const sk_algo *algo, const char *key, size_t section_len) {
    char owners[64] = "";
    for (int b = 0; sk_algo_table[b]; b++)
        if (owns(sk_algo_table[b], key, section_len))
            snprintf(owners + strlen(owners), sizeof owners - strlen(owners), "%s%s",
                     owners[0] ? " or " : "", sk_algo_table[b]->name);
    return sk_fail(SK_ERR_CONFIG, "%s applies only with train.algo = %s; this run's is %s (set "
                   "--train.algo, or drop the key; %s's keys are in docs/algorithms.md)", key,
                   owners, algo->name, algo->name);
}

sk_status sk_algo_check_sections(const sk_algo *algo, const sk_config *cfg) {
    for (int a = 0; sk_algo_table[a]; a++)
        for (const char *const *section = sk_algo_table[a]->sections; *section; section++) {
            /* replay.* is SAC's and DQN's; ppo.* is read by every run, so never unused */
            const char *key = owns(algo, *section, strlen(*section))
                                  ? NULL : sk_cfg_first_unused(cfg, *section);
            if (key) return foreign_key(algo, key, strlen(*section));
        }
    return SK_OK;
}

sk_status sk_config_check_learner_keys(const sk_config *given, const sk_config *cfg) {
    /* read without marking it (sk_algo_resolve, later, refuses a name it does not know) */
    const char *name = sk_config_get(cfg, "train.algo");
    const sk_algo *algo = sk_algo_table[0];
    for (int a = 0; name && sk_algo_table[a]; a++)
        if (strcmp(sk_algo_table[a]->name, name) == 0) algo = sk_algo_table[a];
    const char *key, *value;
    for (int i = 0; sk_config_entry_at(given, i, &key, &value); i++) {
        const char *dot = strchr(key, '.');
        if (!dot || owns(algo, key, (size_t)(dot - key))) continue;
        for (int a = 0; sk_algo_table[a]; a++)
            if (owns(sk_algo_table[a], key, (size_t)(dot - key)))
                return foreign_key(algo, key, (size_t)(dot - key));
    }
    return SK_OK;
}
