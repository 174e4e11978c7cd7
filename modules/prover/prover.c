/*
 * Prover-v0, the environment: queries, the episode loop, observations,
 * rewards and the checkpointed state. The transition itself is resolve.c.
 */
#include "prover.h"
#include "rank.h"

#include "skinner.h"

#include <stdio.h>

#include <stdlib.h>

#include <string.h>

#define LOG_FIELDS SK_PROVER_NUM_LOG_FIELDS
#define PREFETCH_AHEAD 4 /* envs */
#define DEFAULT_MAX_DEPTH 20
#define DEFAULT_REWARD_TYPE 4
/* The synthetic knowledge base is one fixed forest, like a dataset: the same
 * for every run whatever train.seed is. */
#define SYNTHETIC_SEED 2024
/* Tries at drawing a corruption that is not a known fact before the episode
 * falls back to the positive. */
#define CORRUPTION_TRIES 32

static const char *const g_split_names[] = {"train", "valid", "test", NULL};
/* env.corrupt, indexed by SK_PROVER_CORRUPT_* - 1 */
static const char *const g_corrupt_names[] = {"head", "tail", "both", NULL};

bool sk_prover_corrupt_parse(const char *name, int *sides) {
    for (int k = 0; g_corrupt_names[k]; k++)
        if (strcmp(name, g_corrupt_names[k]) == 0) {
            *sides = k + 1;
            return true;
        }
    return false;
}

const char *sk_prover_corrupt_name(int sides) {
    SK_ASSERT(sides >= SK_PROVER_CORRUPT_HEAD && sides <= SK_PROVER_CORRUPT_BOTH);
    return g_corrupt_names[sides - 1];
}

static void prover_destroy(void *state) {
    sk_prover_state *s = state;
    if (!s) return;
    sk_kb_free(s->kb);
    free(s->pool_storage);
    sk_free(s->goals);
    sk_free(s->num_goals);
    sk_free(s->succ);
    sk_free(s->succ_len);
    sk_free(s->succ_key);
    sk_free(s->num_succ);
    sk_free(s->visited);
    sk_free(s->num_visited);
    sk_free(s->depth);
    sk_free(s->query);
    sk_free(s->positive);
    sk_free(s->episode_return);
    sk_free(s->episodes);
    sk_free(s->rng);
    sk_free(s);
}

/* The env.* keys besides env.dataset. */
typedef struct prover_config {
    int atoms, successors;
    int max_depth, negative_ratio, reward_type, split, corrupt_sides;
    double shaping, shaping_gamma;
    bool end_action, provable_only;
} prover_config;

/* The keys that size the observation and the action: A, S, max_depth. */
static sk_status read_shape(const sk_config *cfg, prover_config *pc) {
    int64_t atoms, successors, depth;
    bool end_action;
    sk_status status;
    if ((status = sk_cfg_int(cfg, "env.max_atoms", SK_PROVER_DEFAULT_ATOMS, 1,
                             SK_PROVER_ATOMS_CAP, &atoms)) != SK_OK ||
        (status = sk_cfg_int(cfg, "env.max_successors", SK_PROVER_DEFAULT_SUCCESSORS, 1,
                             SK_PROVER_SUCCESSORS_CAP, &successors)) != SK_OK ||
        (status = sk_cfg_int(cfg, "env.max_depth", DEFAULT_MAX_DEPTH, 1, 100000, &depth)) != SK_OK ||
        (status = sk_cfg_bool(cfg, "env.end_action", false, &end_action)) != SK_OK)
        return status;
    if (end_action && successors < 2)
        return sk_fail(SK_ERR_INVALID,
                       "env.max_successors = %lld with env.end_action: the End action takes a "
                       "slot of its own (expected 2 or more)",
                       (long long)successors);
    pc->atoms = (int)atoms;
    pc->successors = (int)successors;
    pc->max_depth = (int)depth;
    pc->end_action = end_action;
    return SK_OK;
}

/* sk_env_def.configure: observation 3A(1 + S), one head of S choices. */
static sk_status prover_configure(sk_env_def *def, const sk_config *cfg) {
    prover_config pc = {0};
    sk_status status = read_shape(cfg, &pc);
    if (status != SK_OK) return status;
    def->obs_size = 3 * pc.atoms * (1 + pc.successors);
    def->action_space.head_sizes[0] = pc.successors;
    def->mask_size = pc.successors;
    def->max_episode_steps = pc.max_depth;
    return SK_OK;
}

static sk_status read_config(const sk_config *cfg, prover_config *pc) {
    int64_t v;
    sk_status status;
    if ((status = read_shape(cfg, pc)) != SK_OK) return status;
    if ((status = sk_cfg_int(cfg, "env.negative_ratio", 1, 0, 1000, &v)) != SK_OK) return status;
    pc->negative_ratio = (int)v;
    int corrupt;
    if ((status = sk_cfg_choice(cfg, "env.corrupt", "both", g_corrupt_names, &corrupt)) != SK_OK)
        return status;
    pc->corrupt_sides = corrupt + 1;
    if ((status = sk_cfg_int(cfg, "env.reward_type", DEFAULT_REWARD_TYPE, 0, 4, &v)) != SK_OK)
        return status;
    pc->reward_type = (int)v;
    if ((status = sk_cfg_double(cfg, "env.shaping", 0.0, 0.0, 100.0, &pc->shaping)) != SK_OK ||
        (status = sk_cfg_double(cfg, "env.shaping_gamma", 0.99, 0.0, 1.0, &pc->shaping_gamma)) !=
            SK_OK)
        return status;
    if ((status = sk_cfg_choice(cfg, "env.split", "train", g_split_names, &pc->split)) != SK_OK)
        return status;
    return sk_cfg_bool(cfg, "env.provable_only", true, &pc->provable_only);
}

/* The positive queries: the split's, without those recorded unprovable when
 * provable_only. */
static sk_status build_pool(sk_prover_state *s, const prover_config *pc) {
    const sk_kb_atoms *queries = &s->kb->queries[pc->split];
    size_t room = (size_t)(queries->count ? queries->count : 1);
    s->pool_storage = malloc(room * sizeof *s->pool_storage);
    if (!s->pool_storage) return sk_fail(SK_ERR_NOMEM, "out of memory for queries");
    int count = 0;
    for (int k = 0; k < queries->count; k++) {
        if (pc->provable_only && queries->depths[k] == -1) continue;
        memcpy(s->pool_storage[count++], queries->atoms[k], sizeof s->pool_storage[0]);
    }
    if (count == 0)
        return sk_fail(SK_ERR_INVALID, "env.split = %s has no queries%s",
                       g_split_names[pc->split],
                       pc->provable_only ? " with a recorded proof (env.provable_only)" : "");
    s->pool = (const int32_t(*)[3])s->pool_storage;
    s->pool_count = count;
    return SK_OK;
}

sk_status sk_prover_create_with_kb(void **out, int num_envs, const sk_config *cfg, sk_kb *kb) {
    *out = NULL;
    SK_ASSERT(kb && kb->finalized && num_envs >= 1);
    prover_config pc;
    sk_status status = read_config(cfg, &pc);
    if (status != SK_OK) {
        sk_kb_free(kb);
        return status;
    }
    sk_prover_state *s = sk_alloc(sizeof *s);
    if (!s) {
        sk_kb_free(kb);
        return sk_fail(SK_ERR_NOMEM, "out of memory for %d Prover envs", num_envs);
    }
    s->num_envs = num_envs;
    s->kb = kb;
    s->atoms = pc.atoms;
    s->successors = pc.successors;
    s->atom_ints = 3 * pc.atoms;
    s->obs_size = s->atom_ints * (1 + pc.successors);
    s->max_depth = pc.max_depth;
    s->negative_ratio = pc.negative_ratio;
    s->corrupt_sides = pc.corrupt_sides;
    s->reward_type = pc.reward_type;
    s->shaping = pc.shaping;
    s->shaping_gamma = pc.shaping_gamma;
    s->end_action = pc.end_action;
    s->first_var = kb->num_consts + 1;
    s->visited_cap = pc.max_depth + 1;
    if ((status = build_pool(s, &pc)) != SK_OK) {
        prover_destroy(s);
        return status;
    }
    size_t n = (size_t)num_envs, S = (size_t)s->successors, atom_ints = (size_t)s->atom_ints;
    s->goals = sk_alloc(n * atom_ints * sizeof(int32_t));
    s->num_goals = sk_alloc(n * sizeof(int32_t));
    s->succ = sk_alloc(n * S * atom_ints * sizeof(int32_t));
    s->succ_len = sk_alloc(n * S * sizeof(int32_t));
    s->succ_key = sk_alloc(n * S * sizeof(uint64_t));
    s->num_succ = sk_alloc(n * sizeof(int32_t));
    s->visited = sk_alloc(n * (size_t)s->visited_cap * sizeof(uint64_t));
    s->num_visited = sk_alloc(n * sizeof(int32_t));
    s->depth = sk_alloc(n * sizeof(int32_t));
    s->query = sk_alloc(n * 3 * sizeof(int32_t));
    s->positive = sk_alloc(n);
    s->episode_return = sk_alloc(n * sizeof(float));
    s->episodes = sk_alloc(n * sizeof(int64_t));
    s->rng = sk_alloc(n * sizeof(uint64_t));
    if (!s->goals || !s->num_goals || !s->succ || !s->succ_len || !s->succ_key || !s->num_succ ||
        !s->visited || !s->num_visited || !s->depth || !s->query || !s->positive ||
        !s->episode_return || !s->episodes || !s->rng) {
        prover_destroy(s);
        return sk_fail(SK_ERR_NOMEM, "out of memory for %d Prover envs", num_envs);
    }
    *out = s;
    return SK_OK;
}

static sk_status prover_create(void **out, int num_envs, const sk_config *cfg) {
    *out = NULL;
    const char *dataset;
    sk_status status = sk_cfg_path(cfg, "env.dataset", "", &dataset);
    if (status != SK_OK) return status;
    sk_kb *kb = NULL;
    status = dataset && dataset[0]
                           ? sk_kb_load(&kb, dataset)
                           : sk_kb_synthetic(&kb, SYNTHETIC_SEED, SK_KB_SYNTH_DEFAULTS);
    if (status != SK_OK) return status;
    return sk_prover_create_with_kb(out, num_envs, cfg, kb);
}

static void prover_obs_atoms(const void *state, sk_obs_atoms *out) {
    const sk_prover_state *s = state;
    out->atoms = s->atoms;
    out->candidates = s->successors;
    sk_prover_vocab(state, &out->num_preds, &out->num_args);
}

void sk_prover_vocab(const void *state, int *num_preds, int *num_args) {
    const sk_prover_state *s = state;
    *num_preds = s->kb->num_preds;
    *num_args = s->kb->num_consts + 1 + SK_PROVER_VARS(s->atoms);
}

/* ------------------------------------------------------------ episodes */

/* Derives the successors of env i's current state. */
static void expand(sk_prover_state *s, int i) {
    size_t si = (size_t)i;
    const int32_t *query = s->query + 3 * si;
    uint64_t excluded = s->positive[i] ? sk_kb_key(query[0], query[1], query[2]) : 0;
    size_t S = (size_t)s->successors;
    sk_prover_limits limits = {.max_atoms = s->atoms,
                               .max_successors = s->end_action ? s->successors - 1 : s->successors,
                               .stride = s->atoms};
    int32_t *succ = s->succ + si * S * (size_t)s->atom_ints;
    int32_t *len = s->succ_len + si * S;
    uint64_t *key = s->succ_key + si * S;
    int count = sk_prover_derive(s->kb, s->first_var, s->goals + si * (size_t)s->atom_ints,
                                 s->num_goals[i],
                                 excluded, s->visited + si * (size_t)s->visited_cap,
                                 s->num_visited[i], limits, succ, len, key);
    /* the end-proof action: offered unless a terminal successor already is
     * (DeepProofLog's Endf, which ends the proof as failed) */
    if (s->end_action && !sk_prover_is_terminal(succ)) {
        int32_t *end = succ + (size_t)count * (size_t)s->atom_ints;
        end[0] = SK_KB_END;
        end[1] = end[2] = 0;
        len[count] = 1;
        key[count] = 0;
        count++;
    }
    s->num_succ[i] = count;
}

static void start_episode(sk_prover_state *s, int i, const int32_t query[3], bool positive) {
    size_t si = (size_t)i;
    int32_t *goals = s->goals + si * (size_t)s->atom_ints;
    memset(goals, 0, (size_t)s->atom_ints * sizeof(int32_t));
    memcpy(goals, query, 3 * sizeof(int32_t));
    memcpy(s->query + 3 * si, query, 3 * sizeof(int32_t));
    s->num_goals[i] = 1;
    s->positive[i] = positive;
    s->depth[i] = 0;
    s->episode_return[i] = 0.0f;
    s->visited[si * (size_t)s->visited_cap] = sk_prover_state_key(goals, 1);
    s->num_visited[i] = 1;
    expand(s, i);
}

/* A corruption of query: head or tail (even odds, or the one env.corrupt
 * allows) replaced by a type-consistent constant, filtered against every
 * known fact. False if none was found. */
static bool corrupt(const sk_prover_state *s, uint64_t *rng, const int32_t query[3],
                    int32_t out[3]) {
    const sk_kb *kb = s->kb;
    for (int t = 0; t < CORRUPTION_TRIES; t++) {
        int pos = s->corrupt_sides == SK_PROVER_CORRUPT_BOTH ? (int)sk_rng_below(rng, 2)
                                                             : s->corrupt_sides - 1;
        int32_t lo = kb->cand_start[query[0] * 2 + pos];
        int32_t hi = kb->cand_start[query[0] * 2 + pos + 1];
        if (hi == lo) continue;
        int32_t c = kb->cand[lo + (int32_t)sk_rng_below(rng, (uint32_t)(hi - lo))];
        if (c == query[1 + pos]) continue;
        memcpy(out, query, 3 * sizeof(int32_t));
        out[1 + pos] = c;
        if (!sk_kb_is_known(kb, sk_kb_key(out[0], out[1], out[2]))) return true;
    }
    return false;
}

/* Draws env i's next query: one positive, then negative_ratio negatives. */
static void next_episode(sk_prover_state *s, int i) {
    uint64_t *rng = &s->rng[i];
    bool positive = s->episodes[i] % (s->negative_ratio + 1) == 0;
    s->episodes[i]++;
    const int32_t *query = s->pool[sk_rng_below(rng, (uint32_t)s->pool_count)];
    int32_t negative[3];
    if (!positive && corrupt(s, rng, query, negative)) start_episode(s, i, negative, false);
    else start_episode(s, i, query, true);
}

/* One state into atom_ints floats, zero past its atoms; a single pass, branch
 * free, so the compiler vectorises it (the atoms past len are stale but read
 * within the array). */
static inline void write_atoms(float *restrict out, const int32_t *restrict atoms, int len,
                               int atom_ints) {
    int used = 3 * len;
    for (int k = 0; k < atom_ints; k++) out[k] = k < used ? (float)atoms[k] : 0.0f;
}

static void write_obs(const sk_prover_state *s, int i, float *obs, uint8_t *mask) {
    size_t si = (size_t)i, S = (size_t)s->successors, W = (size_t)s->atom_ints;
    int count = s->num_succ[i];
    write_atoms(obs, s->goals + si * W, s->num_goals[i], s->atom_ints);
    for (int j = 0; j < count; j++)
        write_atoms(obs + W * (1 + (size_t)j), s->succ + (si * S + (size_t)j) * W,
                    s->succ_len[si * S + (size_t)j], s->atom_ints);
    memset(obs + W * (1 + (size_t)count), 0, (S - (size_t)count) * W * sizeof(float));
    if (mask)
        for (int j = 0; j < (int)S; j++) mask[j] = j < count;
}

static void prover_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    sk_prover_state *s = state;
    for (int i = lo; i < hi; i++) {
        s->rng[i] = sk_rng_seed(seed, (uint64_t)i);
        s->episodes[i] = 0;
        next_episode(s, i);
        uint8_t *mask = io->masks ? io->masks + (size_t)i * (size_t)s->successors : NULL;
        write_obs(s, i, io->obs + (size_t)i * (size_t)s->obs_size, mask);
    }
}

void sk_prover_set_query(void *state, const sk_env_io *io, int i, const int32_t query[3],
                         bool positive) {
    sk_prover_state *s = state;
    SK_ASSERT(i >= 0 && i < s->num_envs);
    start_episode(s, i, query, positive);
    write_obs(s, i, io->obs + (size_t)i * (size_t)s->obs_size,
              io->masks ? io->masks + (size_t)i * (size_t)s->successors : NULL);
}

static float reward_for(int type, bool positive, bool proved) {
    switch (type) {
    case 0: return positive && proved ? 1.0f : 0.0f;
    case 1: return proved ? (positive ? 1.0f : -1.0f) : 0.0f;
    case 2: return positive == proved ? 1.0f : 0.0f;
    case 3: return positive ? (proved ? 1.0f : -0.5f) : (proved ? -1.5f : 1.0f);
    default: return positive == proved ? 1.0f : -1.0f;
    }
}

static void prover_step(void *state, const sk_env_io *io, int lo, int hi) {
    sk_prover_state *s = state;
    const size_t S = (size_t)s->successors, W = (size_t)s->atom_ints, O = (size_t)s->obs_size;
    for (int i = lo; i < hi; i++) {
        size_t si = (size_t)i;
        /* Beyond a few thousand envs the state no longer fits in cache and the
         * read of the chosen successor misses: ask for a later env's early
         * (+6% at 4096 envs on countries_s3). */
        if (i + PREFETCH_AHEAD < hi) {
            size_t ahead = si + PREFETCH_AHEAD;
            int32_t next_action = io->actions[ahead];
            if (next_action >= 0 && (size_t)next_action < S)
                __builtin_prefetch(s->succ + (ahead * S + (size_t)next_action) * W);
            __builtin_prefetch(io->obs + ahead * O, 1);
        }
        int count = s->num_succ[i], action = io->actions[i];
        if (action < 0 || action >= count) action = ((action % count) + count) % count;
        const int32_t *chosen = s->succ + (si * S + (size_t)action) * W;
        double potential_before = -s->shaping * s->num_goals[i];
        s->depth[i]++;
        float reward = 0.0f;
        bool terminated = false, truncated = false, proved = false;
        if (sk_prover_is_terminal(chosen)) {
            proved = chosen[0] == SK_KB_TRUE;
            reward = reward_for(s->reward_type, s->positive[i], proved);
            terminated = true;
            memcpy(s->goals + si * W, chosen, 3 * sizeof(int32_t));
            s->num_goals[i] = 1;
            s->num_succ[i] = 0;
        } else {
            int len = s->succ_len[si * S + (size_t)action];
            uint64_t key = s->succ_key[si * S + (size_t)action];
            memcpy(s->goals + si * W, chosen, (size_t)len * 3 * sizeof(int32_t));
            s->num_goals[i] = len;
            SK_ASSERT(s->num_visited[i] < s->visited_cap);
            s->visited[si * (size_t)s->visited_cap + (size_t)s->num_visited[i]++] = key;
            expand(s, i);
            truncated = s->depth[i] >= s->max_depth;
        }
        s->episode_return[i] += reward;
        io->rewards[i] = reward;
        if (s->shaping > 0.0) { /* gamma Phi(s') - Phi(s); Phi = 0 once ended */
            double potential_after = terminated ? 0.0 : -s->shaping * s->num_goals[i];
            io->rewards[i] += (float)(s->shaping_gamma * potential_after - potential_before);
        }
        io->terminated[i] = terminated;
        io->truncated[i] = truncated;
        float *obs = io->obs + si * O;
        uint8_t *mask = io->masks ? io->masks + si * S : NULL;
        if (terminated || truncated) {
            write_obs(s, i, io->final_obs + si * O, NULL);
            float *log = io->episode_log + si * LOG_FIELDS;
            log[0] = s->episode_return[i];
            log[1] = (float)s->depth[i];
            log[2] = proved;
            log[3] = s->positive[i];
            next_episode(s, i);
        }
        write_obs(s, i, obs, mask);
    }
}

static int prover_state_arrays(void *state, sk_env_array *arrays) {
    sk_prover_state *s = state;
    const int A = s->atoms, S = s->successors, ATOM_INTS = s->atom_ints;
    /* ranges that keep a restored state's counts inside the arrays they
     * count; prover_check_state checks the atoms themselves */
#define RANGED(min, max) .has_range = true, .lo = (min), .hi = (max)
    const sk_env_array list[] = {
        {.name = "goals", .type = SK_ARRAY_I32, .count = ATOM_INTS, .data = s->goals},
        {.name = "num_goals", .type = SK_ARRAY_I32, .count = 1, .data = s->num_goals, RANGED(1, A)},
        {.name = "successors", .type = SK_ARRAY_I32, .count = S * ATOM_INTS, .data = s->succ},
        {.name = "successor_len", .type = SK_ARRAY_I32, .count = S, .data = s->succ_len,
         RANGED(0, A)},
        {.name = "successor_key", .type = SK_ARRAY_U64, .count = S, .data = s->succ_key},
        {.name = "num_successors", .type = SK_ARRAY_I32, .count = 1, .data = s->num_succ,
         RANGED(1, S)},
        {.name = "visited", .type = SK_ARRAY_U64, .count = s->visited_cap, .data = s->visited},
        {.name = "num_visited", .type = SK_ARRAY_I32, .count = 1, .data = s->num_visited,
         RANGED(0, s->visited_cap - 1)},
        {.name = "depth", .type = SK_ARRAY_I32, .count = 1, .data = s->depth,
         RANGED(0, s->max_depth)},
        {.name = "query", .type = SK_ARRAY_I32, .count = 3, .data = s->query},
        {.name = "positive", .type = SK_ARRAY_U8, .count = 1, .data = s->positive, RANGED(0, 1)},
        {.name = "episode_return", .type = SK_ARRAY_F32, .count = 1, .data = s->episode_return,
         RANGED(-INFINITY, INFINITY)},
        {.name = "episodes", .type = SK_ARRAY_I64, .count = 1, .data = s->episodes,
         RANGED(0, 0x1p62)},
        {.name = "rng", .type = SK_ARRAY_U64, .count = 1, .data = s->rng},
    };
#undef RANGED
    int n = (int)(sizeof list / sizeof list[0]);
    _Static_assert(sizeof list / sizeof list[0] <= SK_MAX_ENV_ARRAYS, "too many state arrays");
    for (int k = 0; k < n; k++) arrays[k] = list[k];
    return n;
}

/* Every atom a restored state holds must index the knowledge base: a
 * predicate below num_preds, arguments up to the last variable a proof can
 * number; and the query must be a ground atom of it. */
static sk_status check_atoms(const sk_prover_state *s, const char *name, int env,
                             const int32_t *atoms, int count) {
    int32_t max_arg = s->first_var + SK_PROVER_VARS(s->atoms) - 1; /* variables first_var.. */
    for (int k = 0; k < count; k++) {
        const int32_t *atom = atoms + 3 * k;
        if (atom[0] >= 0 && atom[0] < s->kb->num_preds && atom[1] >= 0 && atom[1] <= max_arg &&
            atom[2] >= 0 && atom[2] <= max_arg)
            continue;
        return sk_fail(SK_ERR_CORRUPT,
                       "env.%s of env %d: atom %d = (%d, %d, %d) is outside the knowledge base "
                       "(predicates 0..%d, arguments 0..%d)",
                       name, env, k, (int)atom[0], (int)atom[1], (int)atom[2],
                       s->kb->num_preds - 1, (int)max_arg);
    }
    return SK_OK;
}

static sk_status prover_check_state(const void *state, int num_envs) {
    const sk_prover_state *s = state;
    const size_t S = (size_t)s->successors, W = (size_t)s->atom_ints;
    for (int i = 0; i < num_envs; i++) {
        size_t si = (size_t)i;
        sk_status status = check_atoms(s, "goals", i, s->goals + si * W, s->num_goals[i]);
        for (int j = 0; status == SK_OK && j < s->num_succ[i]; j++) {
            int len = s->succ_len[si * S + (size_t)j];
            if (len < 1) /* a state has an atom: a proof step to none would be empty */
                status = sk_fail(SK_ERR_CORRUPT,
                                 "env.successor_len of env %d: successor %d has %d atoms "
                                 "(expected 1..%d)",
                                 i, j, len, s->atoms);
            else
                status = check_atoms(s, "successors", i,
                                     s->succ + (si * S + (size_t)j) * W, len);
        }
        /* every step of an episode visits one state, and the episode ends
         * (truncated) when its depth reaches max_depth: a state at depth d
         * has visited d + 1, so the steps left never outgrow visited_cap */
        if (status == SK_OK && s->num_visited[i] != s->depth[i] + 1)
            status = sk_fail(SK_ERR_CORRUPT,
                             "env.num_visited of env %d = %d with env.depth %d: a state at "
                             "depth d has visited d + 1 states (expected %d)",
                             i, (int)s->num_visited[i], (int)s->depth[i],
                             (int)s->depth[i] + 1);
        if (status == SK_OK) status = check_atoms(s, "query", i, s->query + 3 * si, 1);
        const int32_t *query = s->query + 3 * si;
        if (status == SK_OK && (query[1] < 1 || query[1] > s->kb->num_consts || query[2] < 1 ||
                                query[2] > s->kb->num_consts))
            status = sk_fail(SK_ERR_CORRUPT,
                             "env.query of env %d = (%d, %d, %d): arguments must be constants "
                             "1..%d",
                             i, (int)query[0], (int)query[1], (int)query[2], s->kb->num_consts);
        if (status != SK_OK) return status;
    }
    return SK_OK;
}

extern const sk_env_option sk_prover_eval_options[]; /* eval_options.c */

static const sk_env_extras prover_extras = {
    .preset = "prover",
    .obs_atoms = prover_obs_atoms,
    .evaluation = &sk_prover_ranking,
    .eval_options = sk_prover_eval_options,
};

const sk_env_def sk_env_prover = {
    .id = "Prover-v0",
    .alias = "prover",
    .summary = "prove a query in a knowledge base by choosing resolution steps",
    /* the defaults; prover_configure sizes the table from env.max_atoms,
     * env.max_successors and env.max_depth */
    .obs_size = SK_PROVER_DEFAULT_OBS_SIZE,
    .action_space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1,
                     .head_sizes = {SK_PROVER_DEFAULT_SUCCESSORS}},
    .mask_size = SK_PROVER_DEFAULT_SUCCESSORS,
    .max_episode_steps = DEFAULT_MAX_DEPTH,
    /* reward type 4: +1 for every correct outcome, on positives and negatives */
    .solved_threshold = 0.9,
    .num_log_fields = LOG_FIELDS,
    .log_names = {"episode_return", "episode_length", "proved", "positive"},
    .create = prover_create,
    .destroy = prover_destroy,
    .reset = prover_reset,
    .step = prover_step,
    .state_arrays = prover_state_arrays,
    .check_state = prover_check_state,
    .extras = &prover_extras,
    .configure = prover_configure,
};
