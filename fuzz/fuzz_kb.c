/* The knowledge-base loader: the input is split at lines "%%" into train.txt,
 * rules.txt, test.txt, test_depths.txt and domain2constants.txt of a temporary
 * folder, which sk_kb_load reads, parses and indexes. A kb it accepts is then
 * stepped: a few Prover-v0 envs with room for 2 successors (so that the list
 * fills and the join over a free first goal runs) take actions from the
 * input's bytes, and every state's successors must equal those of the plain
 * fact loop (sk_prover_limits.plain); a difference aborts. The kb's least
 * model (up to 65,536 atoms) must hold every query the walk proves, and no
 * proof may pass through a state with a ground goal outside it: ranking fails
 * such candidates without running them. */
#include "fuzz_util.h"

#include "core/config.h"
#include "prover/kb.h"
#include "prover/prover.h"
#include "skinner/vec.h"

#include <string.h>

static const char *const g_files[] = {"train.txt", "rules.txt", "test.txt", "test_depths.txt",
                                      "domain2constants.txt"};
enum { NUM_FILES = sizeof g_files / sizeof *g_files };

static void write_part(const char *dir, const char *name, const uint8_t *data, size_t size) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    if (fclose(f) != 0) abort();
}

enum { ENVS = 4, STEPS = 24, SUCCESSORS = 2, ATOMS = 4 };

/* Steps ENVS envs over the kb in dir, checking each state against the plain loop. */
static void walk(const char *dir, const uint8_t *data, size_t size) {
    sk_config *cfg = sk_config_new();
    if (!cfg) abort();
    sk_config_set(cfg, "env.dataset", dir);
    sk_config_set(cfg, "env.max_successors", "2");
    sk_config_set(cfg, "env.max_atoms", "4");
    sk_config_set(cfg, "env.provable_only", "false");
    sk_vec *vec = NULL;
    if (sk_vec_create(&vec, &sk_env_prover, ENVS, 1, cfg) != SK_OK) { /* e.g. no queries */
        sk_config_free(cfg);
        return;
    }
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    sk_prover_state *s = sk_vec_state(vec);
    sk_kb_model model;
    if (sk_kb_model_build(s->kb, 1 << 16, &model) != SK_OK) abort();
    bool dead[ENVS] = {false};
    int32_t proving[ENVS][3]; /* each env's query before the step */
    sk_vec_reset(vec, size);
    for (int t = 0; t < STEPS; t++) {
        for (int i = 0; i < ENVS; i++) {
            const int32_t *query = s->query + 3 * i;
            uint64_t excluded = s->positive[i] ? sk_kb_key(query[0], query[1], query[2]) : 0;
            sk_prover_limits plain = {.max_atoms = ATOMS, .max_successors = SUCCESSORS,
                                      .stride = ATOMS, .plain = true};
            int32_t atoms[SUCCESSORS * 3 * ATOMS], len[SUCCESSORS];
            uint64_t key[SUCCESSORS];
            int count = sk_prover_derive(s->kb, s->first_var, s->goals + (size_t)i * s->atom_ints,
                                         s->num_goals[i], excluded,
                                         s->visited + (size_t)i * s->visited_cap,
                                         s->num_visited[i], plain, atoms, len, key);
            if (count != s->num_succ[i]) abort();
            for (int j = 0; j < count; j++)
                if (key[j] != s->succ_key[(size_t)i * SUCCESSORS + (size_t)j]) abort();
            size_t at = ((size_t)t * ENVS + (size_t)i) % (size ? size : 1);
            b->actions[i] = size ? data[at] % SUCCESSORS : 0;
            memcpy(proving[i], query, sizeof proving[i]);
            dead[i] |= sk_kb_model_rules_out(&model, s->goals + (size_t)i * s->atom_ints,
                                             s->num_goals[i], s->first_var);
        }
        sk_vec_step(vec);
        for (int i = 0; i < ENVS; i++) {
            if (!b->terminated[i] && !b->truncated[i]) continue;
            bool proved = b->terminated[i] && b->episode_log[(size_t)i * SK_PROVER_NUM_LOG_FIELDS +
                                                             SK_PROVER_LOG_PROVED] > 0.5f;
            if (proved && (dead[i] || !sk_kb_model_allows(&model, sk_kb_key(proving[i][0], proving[i][1],
                                                                             proving[i][2]))))
                abort();
            dead[i] = false;
        }
    }
    sk_kb_model_free(&model);
    sk_vec_destroy(vec);
    sk_config_free(cfg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static char dir[64];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/skinner-fuzz-kb-XXXXXX");
        if (!mkdtemp(dir)) abort();
    }
    const uint8_t *part = data, *end = data + size;
    for (int f = 0; f < NUM_FILES; f++) {
        const uint8_t *stop = end;
        for (const uint8_t *c = part; c + 3 <= end; c++)
            if (memcmp(c, "%%\n", 3) == 0 && (c == data || c[-1] == '\n')) {
                stop = c;
                break;
            }
        write_part(dir, g_files[f], part, (size_t)(stop - part));
        part = stop < end ? stop + 3 : end;
    }
    sk_kb *kb = NULL;
    if (sk_kb_load(&kb, dir) != SK_OK) return 0;
    sk_kb_free(kb);
    walk(dir, data, size); /* loads it again, as Prover-v0 does */
    return 0;
}
