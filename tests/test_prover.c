/*
 * Prover-v0: the knowledge base, one resolution step, and the env around it.
 *
 * Most tests run on knowledge bases of a few facts and rules written inline,
 * whose successors can be listed by hand; states are compared as text,
 * "pred(arg,arg), ..." with variables printed _V1, _V2... in order of first
 * appearance (how the env numbers them). The acceptance test searches every
 * recorded proof of countries_s3 by stepping the env itself, backtracking
 * through its checkpoint arrays (state_arrays).
 */
#include "test_util.h"

#include "core/config.h"
#include "core/core.h"
#include "prover/prover.h"
#include "prover/rank.h"
#include "skinner/vec.h"

#include <string.h>
#include <sys/stat.h>

#define A SK_PROVER_DEFAULT_ATOMS
#define S SK_PROVER_DEFAULT_SUCCESSORS
#define OBS SK_PROVER_DEFAULT_OBS_SIZE
#define LOG SK_PROVER_NUM_LOG_FIELDS
#define TEXT 1024

/* ------------------------------------------------------------ helpers */

static sk_kb *kb_from(const char *facts, const char *rules) {
    sk_kb *kb = sk_kb_new();
    assert_non_null(kb);
    assert_int_equal(sk_kb_parse_facts(kb, SK_KB_TRAIN, facts, "train.txt"), SK_OK);
    assert_int_equal(sk_kb_parse_rules(kb, rules, "rules.txt"), SK_OK);
    assert_int_equal(sk_kb_finalize(kb), SK_OK);
    return kb;
}

/* Parses "p(a,_1), q(_1,b)" into goals: _k is variable k, other names are
 * constants that must exist. Returns the number of atoms. */
static int parse_goals(const sk_kb *kb, const char *text, int32_t *goals) {
    int n = 0;
    const char *p = text;
    while (*p) {
        while (*p == ' ' || *p == ',') p++;
        if (!*p) break;
        char name[3][64];
        for (int k = 0; k < 3; k++) {
            int len = 0;
            while (*p && *p != '(' && *p != ',' && *p != ')') name[k][len++] = *p++;
            name[k][len] = '\0';
            p++; /* the delimiter */
        }
        assert_true(n < A);
        goals[3 * n] = sk_kb_find_pred(kb, name[0]);
        assert_true(goals[3 * n] >= SK_KB_FIRST_PRED);
        for (int k = 1; k <= 2; k++) {
            if (name[k][0] == '_') goals[3 * n + k] = kb->num_consts + atoi(name[k] + 1);
            else goals[3 * n + k] = sk_kb_find_const(kb, name[k]);
            assert_true(goals[3 * n + k] > 0);
        }
        n++;
    }
    return n;
}

static void format_state(const sk_kb *kb, const int32_t *atoms, int len, char *out) {
    out[0] = '\0';
    for (int k = 0; k < len; k++) {
        char atom[256];
        sk_kb_format_atom(kb, atoms + 3 * k, atom, sizeof atom);
        if (k) strcat(out, ", ");
        strcat(out, atom);
    }
}

typedef struct derived {
    int count;
    char states[S][TEXT];
} derived;

/* The successors of goals, with excluded ("" for none) left out of the facts. */
static derived derive_text(const sk_kb *kb, const char *goals_text, const char *excluded_text,
                           const uint64_t *visited, int num_visited, int max_atoms,
                           int max_successors) {
    int32_t goals[3 * A], excluded[3 * A];
    int n = parse_goals(kb, goals_text, goals);
    uint64_t excluded_key = 0;
    if (excluded_text[0]) {
        assert_int_equal(parse_goals(kb, excluded_text, excluded), 1);
        excluded_key = sk_kb_key(excluded[0], excluded[1], excluded[2]);
    }
    int32_t atoms[S * SK_PROVER_DEFAULT_ATOM_INTS], len[S];
    uint64_t keys[S];
    sk_prover_limits limits = {.max_atoms = max_atoms, .max_successors = max_successors, .stride = A};
    derived d = {.count = sk_prover_derive(kb, kb->num_consts + 1, goals, n, excluded_key, visited,
                                           num_visited, limits, atoms, len, keys)};
    for (int j = 0; j < d.count; j++)
        format_state(kb, atoms + j * SK_PROVER_DEFAULT_ATOM_INTS, len[j], d.states[j]);
    return d;
}

#define DERIVE(kb, goals) derive_text(kb, goals, "", NULL, 0, A, S)

static void expect_states(const derived *d, const char *const *want, int count) {
    bool same = d->count == count;
    for (int j = 0; same && j < count; j++) same = strcmp(d->states[j], want[j]) == 0;
    if (!same)
        for (int j = 0; j < d->count || j < count; j++)
            print_message("  [%d] got %s, want %s\n", j, j < d->count ? d->states[j] : "-",
                          j < count ? want[j] : "-");
    assert_int_equal(d->count, count);
    for (int j = 0; j < count; j++) assert_string_equal(d->states[j], want[j]);
}

#define EXPECT(d, ...)                                                                             \
    do {                                                                                           \
        const char *const want_[] = {__VA_ARGS__};                                                 \
        derived got_ = (d);                                                                        \
        expect_states(&got_, want_, (int)(sizeof want_ / sizeof want_[0]));                        \
    } while (0)

/* One env over a kb, with its io buffers. */
typedef struct harness {
    sk_config *cfg;
    sk_prover_state *s;
    sk_env_io io;
    int32_t *actions;
    int num_envs;
} harness;

static void harness_io(harness *h, int num_envs) {
    size_t n = (size_t)num_envs;
    h->num_envs = num_envs;
    h->actions = calloc(n, sizeof(int32_t));
    h->io = (sk_env_io){.obs = calloc(n * OBS, sizeof(float)),
                        .final_obs = calloc(n * OBS, sizeof(float)),
                        .actions = h->actions,
                        .rewards = calloc(n, sizeof(float)),
                        .terminated = calloc(n, 1),
                        .truncated = calloc(n, 1),
                        .masks = calloc(n * S, 1),
                        .episode_log = calloc(n * LOG, sizeof(float))};
    assert_true(h->actions && h->io.obs && h->io.final_obs && h->io.rewards &&
                h->io.terminated && h->io.truncated && h->io.masks && h->io.episode_log);
}

/* cfg_pairs: "key", "value", ..., NULL. The kb is given to the env. */
static void harness_kb(harness *h, sk_kb *kb, int num_envs, const char *const *cfg_pairs) {
    memset(h, 0, sizeof *h);
    h->cfg = sk_config_new();
    for (int k = 0; cfg_pairs && cfg_pairs[k]; k += 2)
        assert_int_equal(sk_config_set(h->cfg, cfg_pairs[k], cfg_pairs[k + 1]), SK_OK);
    void *state = NULL;
    sk_status status = sk_prover_create_with_kb(&state, num_envs, h->cfg, kb);
    if (status != SK_OK) print_message("%s\n", sk_last_error());
    assert_int_equal(status, SK_OK);
    h->s = state;
    harness_io(h, num_envs);
}

static bool harness_dataset(harness *h, const char *dataset, int num_envs,
                            const char *const *cfg_pairs) {
    memset(h, 0, sizeof *h);
    h->cfg = sk_config_new();
    assert_int_equal(sk_config_set(h->cfg, "env.dataset", dataset), SK_OK);
    for (int k = 0; cfg_pairs && cfg_pairs[k]; k += 2)
        assert_int_equal(sk_config_set(h->cfg, cfg_pairs[k], cfg_pairs[k + 1]), SK_OK);
    void *state = NULL;
    sk_status status = sk_env_prover.create(&state, num_envs, h->cfg);
    if (status != SK_OK) print_message("%s\n", sk_last_error());
    assert_int_equal(status, SK_OK);
    h->s = state;
    harness_io(h, num_envs);
    return true;
}

static void harness_free(harness *h) {
    sk_env_prover.destroy(h->s);
    sk_config_free(h->cfg);
    free(h->actions);
    free(h->io.obs);
    free(h->io.final_obs);
    free(h->io.rewards);
    free(h->io.terminated);
    free(h->io.truncated);
    free(h->io.masks);
    free(h->io.episode_log);
}

static void set_query(harness *h, int i, const char *text, bool positive) {
    int32_t q[3 * A];
    assert_int_equal(parse_goals(h->s->kb, text, q), 1);
    sk_prover_set_query(h->s, &h->io, i, q, positive);
}

/* Env i's successors as text, read back from its observation. */
static derived observed(const harness *h, int i) {
    const float *obs = h->io.obs + (size_t)i * OBS;
    const uint8_t *mask = h->io.masks + (size_t)i * S;
    derived d = {.count = 0};
    while (d.count < S && mask[d.count]) {
        int32_t atoms[SK_PROVER_DEFAULT_ATOM_INTS];
        int len = 0;
        const float *succ = obs + SK_PROVER_DEFAULT_ATOM_INTS * (1 + d.count);
        for (int k = 0; k < SK_PROVER_DEFAULT_ATOM_INTS; k++) atoms[k] = (int32_t)succ[k];
        while (len < A && atoms[3 * len] != 0) len++;
        format_state(h->s->kb, atoms, len, d.states[d.count]);
        d.count++;
    }
    for (int j = d.count; j < S; j++) assert_int_equal(mask[j], 0);
    return d;
}

static void step_one(harness *h, int i, int action) {
    h->actions[i] = action;
    sk_env_prover.step(h->s, &h->io, i, i + 1);
}

/* ------------------------------------------------------------ unification */

static const char g_small_facts[] = "p(a,b).\np(a,c).\np(b,b).\nq(c,d).\ns(z,z).\n";

static void test_fact_unification_substitutes_rest(void **st) {
    (void)st;
    sk_kb *kb = kb_from(g_small_facts, "");
    /* X bound by each fact, in both of its occurrences in the rest */
    EXPECT(DERIVE(kb, "p(a,_1), s(_1,_1)"), "s(b,b)", "s(c,c)");
    /* a variable bound twice: p(X,X) unifies with p(b,b) only */
    EXPECT(DERIVE(kb, "p(_1,_1), s(_1,d)"), "s(b,d)");
    /* by the second argument */
    EXPECT(DERIVE(kb, "p(_1,b), s(_1,z)"), "s(a,z)", "s(b,z)");
    /* both arguments free: every fact of p */
    EXPECT(DERIVE(kb, "p(_1,_2), s(_2,_1)"), "s(b,a)", "s(c,a)", "s(b,b)");
    /* constants clash: no fact p(c,_), so the only successor is False */
    EXPECT(DERIVE(kb, "p(c,_1), s(_1,d)"), "False");
    /* a ground goal that is a fact is resolved away */
    EXPECT(DERIVE(kb, "p(a,b), s(d,_1)"), "s(d,_V1)");
    sk_kb_free(kb);
}

static void test_known_facts_are_removed_and_proof_found(void **st) {
    (void)st;
    sk_kb *kb = kb_from(g_small_facts, "");
    /* p(a,b) leaves q(b,d), not a fact; p(a,c) leaves q(c,d), a fact: proved, and
     * a proof replaces every other successor */
    EXPECT(DERIVE(kb, "p(a,_1), q(_1,d)"), "True");
    /* neither q(a,d) nor q(b,d) is a fact: both stay */
    EXPECT(DERIVE(kb, "p(_1,b), q(_1,d)"), "q(a,d)", "q(b,d)");
    sk_kb_free(kb);
}

static void test_rule_unification_and_renaming(void **st) {
    (void)st;
    sk_kb *kb = kb_from("hop(a,b).\nhop(b,c).\nhop(c,d).\n",
                        "trans:1:hop(X,Y), hop(Y,Z) -> hop(X,Z)\n");
    /* the rule's Y is fresh; X and Z take the goal's terms */
    EXPECT(DERIVE(kb, "hop(a,d)"), "hop(a,_V1), hop(_V1,d)");
    /* applying the rule again to a state with variables: its variables must not
     * be the state's (a shared Y would give hop(a,_V1), hop(_V1,_V1), ...) */
    EXPECT(DERIVE(kb, "hop(c,_1), hop(_1,d)"), "hop(d,d)", "hop(c,_V1), hop(_V1,_V2), hop(_V2,d)");
    /* every fact of hop, then the rule, whose fresh Y sits between X and Z */
    EXPECT(DERIVE(kb, "hop(_1,_2), hop(_2,_3), hop(_3,d)"), "hop(b,_V1), hop(_V1,d)",
           "hop(c,_V1), hop(_V1,d)", "hop(d,_V1), hop(_V1,d)",
           "hop(_V1,_V2), hop(_V2,_V3), hop(_V3,_V4), hop(_V4,d)");
    sk_kb_free(kb);
}

static void test_rule_head_with_repeated_variable(void **st) {
    (void)st;
    sk_kb *kb = kb_from("e(a,b).\n", "refl:1:e(X,Y) -> same(X,X)\n");
    /* same(X,X) against same(a,b): X bound to a, then a against b clashes */
    EXPECT(DERIVE(kb, "same(a,b)"), "False");
    EXPECT(DERIVE(kb, "same(a,a)"), "e(a,_V1)"); /* the body keeps the rule's free Y */
    /* same(_1,b): X takes _1, then _1 is bound to b, in the rest too */
    EXPECT(DERIVE(kb, "same(_1,b), e(_1,_2)"), "e(b,_V1), e(b,_V2)");
    sk_kb_free(kb);
}

static void test_fact_exclusion(void **st) {
    (void)st;
    /* p(a,b) is a fact; s and p derive each other */
    sk_kb *kb = kb_from("p(a,b).\n", "r:1:s(X,Y) -> p(X,Y)\nt:1:p(X,Y) -> s(X,Y)\n");
    EXPECT(DERIVE(kb, "p(a,b)"), "True");
    /* excluded, the fact is neither matched nor removed once derived again */
    EXPECT(derive_text(kb, "p(a,b)", "p(a,b)", NULL, 0, A, S), "s(a,b)");
    EXPECT(derive_text(kb, "s(a,b)", "p(a,b)", NULL, 0, A, S), "p(a,b)");
    /* through the env: a positive query is excluded for the whole episode, and
     * the derived p(a,b) is the visited start, so the proof fails */
    harness h;
    harness_kb(&h, kb, 1, NULL);
    set_query(&h, 0, "p(a,b)", true);
    EXPECT(observed(&h, 0), "s(a,b)");
    step_one(&h, 0, 0);
    EXPECT(observed(&h, 0), "False");
    step_one(&h, 0, 0);
    assert_true(h.io.terminated[0]);
    assert_float_equal(h.io.episode_log[2], 0.0f, 0.0f); /* not proved */
    /* as a negative (not excluded) the same atom is a fact */
    set_query(&h, 0, "p(a,b)", false);
    EXPECT(observed(&h, 0), "True");
    harness_free(&h);
}

/* ------------------------------------------------------------ pruning */

static void test_visited_states_are_pruned(void **st) {
    (void)st;
    sk_kb *kb = kb_from("z(a,a).\nz(c,b).\n", "a:1:q(X,Y) -> p(X,Y)\nb:1:p(X,Y) -> q(X,Y)\n");
    int32_t start[3];
    assert_int_equal(parse_goals(kb, "p(a,b)", start), 1);
    uint64_t visited = sk_prover_state_key(start, 1);
    EXPECT(DERIVE(kb, "q(a,b)"), "p(a,b)");
    EXPECT(derive_text(kb, "q(a,b)", "", &visited, 1, A, S), "False");
    /* visited compares states up to the order of ground atoms */
    int32_t pair[6];
    assert_int_equal(parse_goals(kb, "z(b,b), p(a,b)", pair), 2);
    uint64_t pair_key = sk_prover_state_key(pair, 2);
    EXPECT(derive_text(kb, "q(a,b), z(b,b)", "", &pair_key, 1, A, S), "False");
    /* in the env: q -> p -> q would loop; the second visit is dropped */
    harness h;
    harness_kb(&h, kb, 1, NULL);
    set_query(&h, 0, "p(a,b)", false);
    EXPECT(observed(&h, 0), "q(a,b)");
    step_one(&h, 0, 0);
    EXPECT(observed(&h, 0), "False");
    harness_free(&h);
}

static void test_states_over_max_atoms_are_pruned(void **st) {
    (void)st;
    sk_kb *kb = kb_from("e(a,b).\nz(a,a).\nz(c,d).\n",
                        "big:1:e(X,Y), e(Y,Z), e(Z,W), e(W,V), e(V,U), e(U,T), e(T,R), e(R,Q) -> "
                        "long(X,Q)\n");
    /* 8 body atoms + 2 rest = 10 = A: kept; + 3 rest = 11: dropped */
    derived ten = DERIVE(kb, "long(a,b), z(b,b), z(c,c)");
    assert_int_equal(ten.count, 1);
    assert_non_null(strstr(ten.states[0], "z(b,b), z(c,c)"));
    EXPECT(DERIVE(kb, "long(a,b), z(b,b), z(c,c), z(d,d)"), "False");
    /* atoms removed as facts do not count: z(a,a) is one */
    assert_int_equal(DERIVE(kb, "long(a,b), z(b,b), z(c,c), z(a,a)").count, 1);
    /* the limit is a parameter of the transition below A */
    EXPECT(derive_text(kb, "long(a,b)", "", NULL, 0, 7, S), "False");
    sk_kb_free(kb);
}

static void test_keep_shortest_successors(void **st) {
    (void)st;
    /* 25 facts e(a,c1..c25); u(ci,b) is a fact for i in {3, 7, 24, 25}, so those
     * successors hold 1 atom and the other 21 hold 2; the rule's holds 3 */
    char facts[4096] = "";
    for (int i = 1; i <= 25; i++) {
        char line[64];
        snprintf(line, sizeof line, "e(a,c%d).\n", i);
        strcat(facts, line);
    }
    strcat(facts, "u(c3,b).\nu(c7,b).\nu(c24,b).\nu(c25,b).\nw(b,b).\nf(b,b).\n");
    sk_kb *kb = kb_from(facts, "r:1:f(X,Y) -> e(X,Y)\n");
    derived d = DERIVE(kb, "e(a,_1), w(_1,b), u(_1,b)");
    /* the 4 one-atom states and the first 16 two-atom ones, in derivation order */
    assert_int_equal(d.count, S);
    int want[S] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 24, 25};
    for (int j = 0; j < S; j++) {
        char expect[128];
        int i = want[j];
        bool fact = i == 3 || i == 7 || i == 24 || i == 25;
        if (fact) snprintf(expect, sizeof expect, "w(c%d,b)", i);
        else snprintf(expect, sizeof expect, "w(c%d,b), u(c%d,b)", i, i);
        assert_string_equal(d.states[j], expect);
    }
    sk_kb_free(kb);
}

static void test_duplicate_successors_are_merged(void **st) {
    (void)st;
    /* two rules with one body: the same successor once */
    sk_kb *kb = kb_from("z(a,b).\n", "r1:1:q(X,Y) -> p(X,Y)\nr2:0.5:q(X,Y) -> p(X,Y)\n");
    EXPECT(DERIVE(kb, "p(a,b)"), "q(a,b)");
    sk_kb_free(kb);
}

/* ------------------------------------------------------------ episodes */

/* p(a,c): step 1 the rule; step 2 e(a,_) gives f(b,c) or f(d,c); f(b,c) leads to
 * a proof (True at step 4), f(d,c) to a dead end (False at step 5). */
static const char g_choice_facts[] = "e(a,b).\ne(a,d).\ne2(b,c).\n";
static const char g_choice_rules[] = "r:1:e(X,Y), f(Y,Z) -> p(X,Z)\ng:1:e2(X,Y) -> f(X,Y)\n";

/* Steps env 0 and records the reward; only the last step may end the episode. */
static void step_record(harness *h, int action, bool last, float *rewards, int *steps) {
    step_one(h, 0, action);
    rewards[(*steps)++] = h->io.rewards[0];
    assert_int_equal(h->io.terminated[0], last);
    assert_false(h->io.truncated[0]);
}

static void run_choice(harness *h, bool positive, bool prove, float *rewards, int *steps) {
    set_query(h, 0, "p(a,c)", positive);
    EXPECT(observed(h, 0), "e(a,_V1), f(_V1,c)");
    *steps = 0;
    step_record(h, 0, false, rewards, steps);
    EXPECT(observed(h, 0), "f(b,c)", "f(d,c)");
    step_record(h, prove ? 0 : 1, false, rewards, steps);
    if (prove) {
        EXPECT(observed(h, 0), "True");
    } else {
        EXPECT(observed(h, 0), "e2(d,c)");
        step_record(h, 0, false, rewards, steps);
        EXPECT(observed(h, 0), "False");
    }
    step_record(h, 0, true, rewards, steps);
}

static void test_proved_and_failed_termination(void **st) {
    (void)st;
    harness h;
    harness_kb(&h, kb_from(g_choice_facts, g_choice_rules), 1, NULL);
    float rewards[8];
    int steps;
    run_choice(&h, true, true, rewards, &steps);
    assert_int_equal(steps, 3);
    const float *log = h.io.episode_log;
    assert_float_equal(log[0], 1.0f, 0.0f);
    assert_float_equal(log[1], 3.0f, 0.0f);
    assert_float_equal(log[2], 1.0f, 0.0f);
    assert_float_equal(log[3], 1.0f, 0.0f);
    /* final_obs shows the terminal state and no successors */
    assert_float_equal(h.io.final_obs[0], (float)SK_KB_TRUE, 0.0f);
    for (int k = 1; k < OBS; k++) assert_float_equal(h.io.final_obs[k], 0.0f, 0.0f);
    run_choice(&h, true, false, rewards, &steps);
    assert_int_equal(steps, 4);
    assert_float_equal(log[0], -1.0f, 0.0f);
    assert_float_equal(log[1], 4.0f, 0.0f);
    assert_float_equal(log[2], 0.0f, 0.0f);
    assert_float_equal(h.io.final_obs[0], (float)SK_KB_FALSE, 0.0f);
    harness_free(&h);
}

static void test_reward_types(void **st) {
    (void)st;
    /* DeepProofLog's table: proved+, failed+, proved-, failed- */
    const float table[5][4] = {
        {1, 0, 0, 0}, {1, 0, -1, 0}, {1, 0, 0, 1}, {1, -0.5f, -1.5f, 1}, {1, -1, -1, 1}};
    for (int type = 0; type < 5; type++) {
        char value[8];
        snprintf(value, sizeof value, "%d", type);
        const char *const cfg[] = {"env.reward_type", value, NULL};
        harness h;
        harness_kb(&h, kb_from(g_choice_facts, g_choice_rules), 1, cfg);
        for (int c = 0; c < 4; c++) {
            bool positive = c < 2, prove = c % 2 == 0;
            float rewards[8];
            int steps;
            run_choice(&h, positive, prove, rewards, &steps);
            for (int k = 0; k < steps - 1; k++) assert_float_equal(rewards[k], 0.0f, 0.0f);
            assert_float_equal(rewards[steps - 1], table[type][c], 0.0f);
            assert_float_equal(h.io.episode_log[0], table[type][c], 0.0f);
            assert_float_equal(h.io.episode_log[3], positive ? 1.0f : 0.0f, 0.0f);
        }
        harness_free(&h);
    }
}

static void test_truncation_at_max_depth(void **st) {
    (void)st;
    /* a chain c0 -> c1 -> ... never repeats a state, never proves p(c0,d) */
    char facts[4096] = "";
    for (int i = 0; i < 40; i++) {
        char line[64];
        snprintf(line, sizeof line, "e(c%d,c%d).\n", i, i + 1);
        strcat(facts, line);
    }
    const char *const cfg[] = {"env.max_depth", "5", NULL};
    harness h;
    harness_kb(&h, kb_from(facts, "r:1:e(X,Y), p(Y,Z) -> p(X,Z)\n"), 1, cfg);
    set_query(&h, 0, "p(c0,c40)", false);
    for (int k = 1; k <= 5; k++) {
        step_one(&h, 0, 0);
        assert_false(h.io.terminated[0]);
        assert_int_equal(h.io.truncated[0], k == 5);
        assert_float_equal(h.io.rewards[0], 0.0f, 0.0f);
    }
    /* 5 actions: rule, fact, rule, fact, rule; final_obs shows that state and
     * its successors, the episode restarted */
    char state[TEXT];
    int32_t atoms[SK_PROVER_DEFAULT_ATOM_INTS];
    for (int k = 0; k < SK_PROVER_DEFAULT_ATOM_INTS; k++) atoms[k] = (int32_t)h.io.final_obs[k];
    format_state(h.s->kb, atoms, 2, state);
    assert_string_equal(state, "e(c2,_V1), p(_V1,c40)");
    float p = (float)sk_kb_find_pred(h.s->kb, "p");
    assert_float_equal(h.io.final_obs[SK_PROVER_DEFAULT_ATOM_INTS], p, 0.0f);
    assert_float_equal(h.io.episode_log[1], 5.0f, 0.0f);
    assert_float_equal(h.io.episode_log[2], 0.0f, 0.0f);
    assert_int_equal(h.s->depth[0], 0);
    harness_free(&h);
}

static void test_end_action(void **st) {
    (void)st;
    const char *const cfg[] = {"env.end_action", "true", NULL};
    harness h;
    harness_kb(&h, kb_from(g_choice_facts, g_choice_rules), 1, cfg);
    set_query(&h, 0, "p(a,c)", true);
    EXPECT(observed(&h, 0), "e(a,_V1), f(_V1,c)", "End");
    step_one(&h, 0, 1);
    assert_true(h.io.terminated[0]);
    assert_float_equal(h.io.rewards[0], -1.0f, 0.0f); /* ended as failed */
    assert_float_equal(h.io.episode_log[2], 0.0f, 0.0f);
    /* no End beside a terminal successor */
    set_query(&h, 0, "p(a,c)", true);
    step_one(&h, 0, 0);
    step_one(&h, 0, 0);
    EXPECT(observed(&h, 0), "True");
    harness_free(&h);
}

static void test_observation_layout_and_invalid_actions(void **st) {
    (void)st;
    harness h;
    sk_kb *kb = kb_from(g_choice_facts, g_choice_rules);
    harness_kb(&h, kb, 1, NULL);
    set_query(&h, 0, "p(a,c)", true);
    const float *obs = h.io.obs;
    int32_t p = sk_kb_find_pred(kb, "p"), e = sk_kb_find_pred(kb, "e");
    int32_t f = sk_kb_find_pred(kb, "f");
    int32_t a = sk_kb_find_const(kb, "a"), c = sk_kb_find_const(kb, "c"), v1 = kb->num_consts + 1;
    const float want_state[3] = {(float)p, (float)a, (float)c};
    for (int k = 0; k < 3; k++) assert_float_equal(obs[k], want_state[k], 0.0f);
    for (int k = 3; k < SK_PROVER_DEFAULT_ATOM_INTS; k++) assert_float_equal(obs[k], 0.0f, 0.0f);
    const float want_succ[6] = {(float)e, (float)a, (float)v1, (float)f, (float)v1, (float)c};
    for (int k = 0; k < 6; k++)
        assert_float_equal(obs[SK_PROVER_DEFAULT_ATOM_INTS + k], want_succ[k], 0.0f);
    for (int k = SK_PROVER_DEFAULT_ATOM_INTS + 6; k < OBS; k++) assert_float_equal(obs[k], 0.0f, 0.0f);
    assert_int_equal(h.io.masks[0], 1);
    for (int j = 1; j < S; j++) assert_int_equal(h.io.masks[j], 0);
    int num_preds, num_args;
    sk_prover_vocab(h.s, &num_preds, &num_args);
    assert_int_equal(num_preds, kb->num_preds);
    assert_int_equal(num_args, kb->num_consts + 1 + 2 * A);
    /* out of range actions map modulo the successors: 7 -> 1 of 2 (f(d,c)) */
    step_one(&h, 0, 0);
    step_one(&h, 0, 7);
    EXPECT(observed(&h, 0), "e2(d,c)");
    set_query(&h, 0, "p(a,c)", true);
    step_one(&h, 0, 0);
    step_one(&h, 0, -2);
    EXPECT(observed(&h, 0), "True");
    harness_free(&h);
}

/* ------------------------------------------------------------ the env */

static void test_config_validation(void **st) {
    (void)st;
    static const char *const bad[][2] = {
        {"env.max_atoms", "17"}, {"env.max_successors", "1025"}, {"env.reward_type", "5"},
        {"env.split", "holdout"}, {"env.max_depth", "0"}, {"env.negative_ratio", "-1"},
        {"env.corrupt", "relation"}, {"env.max_atoms", "0"}, {"env.max_successors", "0"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        sk_config *cfg = sk_config_new();
        assert_int_equal(sk_config_set(cfg, bad[k][0], bad[k][1]), SK_OK);
        void *state = NULL;
        sk_status status = sk_env_prover.create(&state, 1, cfg);
        print_message("%s = %s: %s\n", bad[k][0], bad[k][1], sk_last_error());
        assert_int_not_equal(status, SK_OK);
        assert_null(state);
        assert_non_null(strstr(sk_last_error(), bad[k][0]));
        sk_config_free(cfg);
    }
    /* End takes a slot of its own */
    sk_config *cfg = sk_config_new();
    assert_int_equal(sk_config_set(cfg, "env.max_successors", "1"), SK_OK);
    assert_int_equal(sk_config_set(cfg, "env.end_action", "true"), SK_OK);
    void *state = NULL;
    assert_int_equal(sk_env_prover.create(&state, 1, cfg), SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "env.max_successors = 1 with env.end_action"));
    const sk_env_def *configured = NULL;
    assert_int_equal(sk_env_configure(&sk_env_prover, cfg, &configured), SK_ERR_INVALID);
    assert_null(configured);
    sk_config_free(cfg);
    /* the table keeps the defaults */
    assert_int_equal(sk_env_prover.obs_size, 630);
    assert_int_equal(sk_env_prover.mask_size, 20);
    assert_int_equal(sk_env_prover.action_space.head_sizes[0], 20);
}

/* env.max_atoms and env.max_successors size the configured table: 3A(1 + S)
 * observations, one head of S; the defaults give back the table itself, the
 * same sizes the same interned copy. */
static void test_configured_sizes(void **st) {
    (void)st;
    const sk_env_def *env = NULL, *again = NULL;
    assert_int_equal(sk_env_configure(&sk_env_prover, NULL, &env), SK_OK);
    assert_ptr_equal(env, &sk_env_prover);
    sk_config *cfg = sk_config_new();
    assert_int_equal(sk_config_set(cfg, "env.max_atoms", "4"), SK_OK);
    assert_int_equal(sk_config_set(cfg, "env.max_successors", "7"), SK_OK);
    assert_int_equal(sk_env_configure(&sk_env_prover, cfg, &env), SK_OK);
    assert_int_equal(env->obs_size, 3 * 4 * (1 + 7));
    assert_int_equal(env->mask_size, 7);
    assert_int_equal(env->action_space.head_sizes[0], 7);
    assert_int_equal(env->max_episode_steps, 20);
    assert_true(env != &sk_env_prover && sk_env_same(env, &sk_env_prover));
    assert_int_equal(sk_env_configure(&sk_env_prover, cfg, &again), SK_OK);
    assert_ptr_equal(again, env);
    assert_int_equal(sk_config_set(cfg, "env.max_successors", "262"), SK_OK);
    assert_int_equal(sk_config_set(cfg, "env.max_depth", "30"), SK_OK);
    assert_int_equal(sk_env_configure(&sk_env_prover, cfg, &again), SK_OK);
    assert_true(again != env);
    assert_int_equal(again->obs_size, 3 * 4 * (1 + 262));
    assert_int_equal(again->max_episode_steps, 30);
    assert_int_equal(sk_config_set(cfg, "env.max_atoms", "40"), SK_OK);
    assert_int_equal(sk_env_configure(&sk_env_prover, cfg, &again), SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "env.max_atoms"));
    sk_config_free(cfg);
}

/* Sorts successor indices by length, stably (insertion sort). */
static void stable_by_length(const int32_t *len, int count, int *order) {
    for (int k = 0; k < count; k++) {
        int j = k;
        while (j > 0 && len[order[j - 1]] > len[k]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = k;
    }
}

/* Random episodes of envs of A atoms and S successors (through sk_vec, so the
 * buffers take the configured sizes): at every state the env's successors are
 * exactly the S shortest of all the distinct successors of that state (a
 * derivation with room for every one), stable by length, in derivation
 * order; and each observation row and mask holds them. */
static void check_small_shapes(const char *dataset, int atoms, int successors, int steps) {
    sk_config *cfg = sk_config_new();
    char a_text[16], s_text[16];
    snprintf(a_text, sizeof a_text, "%d", atoms);
    snprintf(s_text, sizeof s_text, "%d", successors);
    assert_int_equal(sk_config_set(cfg, "env.dataset", dataset), SK_OK);
    assert_int_equal(sk_config_set(cfg, "env.max_atoms", a_text), SK_OK);
    assert_int_equal(sk_config_set(cfg, "env.max_successors", s_text), SK_OK);
    sk_vec *vec = NULL;
    enum { N = 32, BIG = SK_PROVER_SUCCESSORS_CAP };
    if (sk_vec_create(&vec, &sk_env_prover, N, 1, cfg) != SK_OK) fail_msg("%s", sk_last_error());
    const sk_env_def *env = sk_vec_env(vec);
    assert_int_equal(env->obs_size, 3 * atoms * (1 + successors));
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    sk_prover_state *s = sk_vec_state(vec);
    int32_t *big = malloc((size_t)BIG * SK_PROVER_ATOMS_CAP * 3 * sizeof(int32_t));
    int32_t big_len[BIG];
    uint64_t big_key[BIG];
    int order[BIG];
    assert_non_null(big);
    sk_vec_reset(vec, 7);
    uint64_t rng = 99;
    long cut = 0, skipped = 0, free_pairs = 0;
    for (int t = 0; t < steps; t++) {
        for (int i = 0; i < N; i++) {
            const sk_kb *kb = s->kb;
            const int32_t *query = s->query + 3 * i;
            uint64_t excluded = s->positive[i] ? sk_kb_key(query[0], query[1], query[2]) : 0;
            sk_prover_limits all = {.max_atoms = atoms, .max_successors = BIG,
                                    .stride = SK_PROVER_ATOMS_CAP};
            int count = sk_prover_derive(kb, s->first_var, s->goals + (size_t)i * s->atom_ints,
                                         s->num_goals[i], excluded,
                                         s->visited + (size_t)i * s->visited_cap,
                                         s->num_visited[i], all, big, big_len, big_key);
            /* the same S, every fact of the first goal derived one by one: the
             * reference of the join that skips facts that cannot matter */
            sk_prover_limits plain = {.max_atoms = atoms, .max_successors = successors,
                                      .stride = atoms, .plain = true};
            int32_t plain_atoms[64 * 3 * SK_PROVER_ATOMS_CAP], plain_len[64];
            uint64_t plain_key[64];
            assert_true(successors <= 64);
            int plain_count = sk_prover_derive(
                kb, s->first_var, s->goals + (size_t)i * s->atom_ints, s->num_goals[i], excluded,
                s->visited + (size_t)i * s->visited_cap, s->num_visited[i], plain, plain_atoms,
                plain_len, plain_key);
            assert_int_equal(plain_count, s->num_succ[i]);
            for (int j = 0; j < plain_count; j++)
                assert_int_equal(plain_key[j], s->succ_key[(size_t)i * (size_t)successors + (size_t)j]);
            const int32_t *g = s->goals + (size_t)i * s->atom_ints;
            free_pairs += g[1] > kb->num_consts && g[2] > kb->num_consts && g[1] != g[2];
            int32_t *actions = b->actions;
            if (count == BIG) { /* more than even the reference holds: not checked */
                skipped++;
                actions[i] = (int32_t)sk_rng_below(&rng, (uint32_t)s->num_succ[i]);
                continue;
            }
            for (int j = 0; j < count; j++) /* distinct */
                for (int k = 0; k < j; k++) assert_true(big_key[j] != big_key[k]);
            stable_by_length(big_len, count, order);
            int kept = count < successors ? count : successors;
            cut += count > successors;
            bool chosen[BIG] = {false};
            for (int k = 0; k < kept; k++) chosen[order[k]] = true;
            const uint8_t *mask = b->masks + (size_t)i * (size_t)successors;
            const float *obs = b->obs + (size_t)i * (size_t)env->obs_size;
            int slot = 0;
            for (int j = 0; j < count; j++) {
                if (!chosen[j]) continue;
                assert_int_equal(s->succ_key[(size_t)i * (size_t)successors + (size_t)slot],
                                 big_key[j]);
                assert_true(mask[slot]);
                const float *row = obs + 3 * atoms * (1 + slot);
                for (int k = 0; k < 3 * atoms; k++)
                    assert_float_equal(row[k],
                                       k < 3 * big_len[j]
                                           ? (float)big[(size_t)j * 3 * SK_PROVER_ATOMS_CAP + (size_t)k]
                                           : 0.0f,
                                       0.0f);
                slot++;
            }
            assert_int_equal(s->num_succ[i], kept);
            for (int k = kept; k < successors; k++) assert_false(mask[k]);
            actions[i] = (int32_t)sk_rng_below(&rng, (uint32_t)kept);
        }
        sk_vec_step(vec);
    }
    print_message("%s, A = %d, S = %d: %ld of %d states had more than S successors, %ld more "
                  "than %d (checked against the plain loop only); %ld began p(X, Y)\n",
                  dataset[0] ? dataset : "synthetic", atoms, successors, cut, N * steps, skipped,
                  BIG - 1, free_pairs);
    assert_true(cut > 0);                   /* the cut was exercised */
    assert_true(skipped < N * steps / 4); /* and checked */
    if (dataset[0]) assert_true(free_pairs > 0); /* the join was exercised */
    free(big);
    sk_vec_destroy(vec);
    sk_config_free(cfg);
}

static void test_small_shapes_keep_the_shortest(void **st) {
    (void)st;
    check_small_shapes("", 4, 3, 300); /* the synthetic forest */
    OPTIONAL_SHARED(shared, "family and wn18rr");
    char dataset[4096 + 64];
    if (shared) {
        snprintf(dataset, sizeof dataset, "%s/datasets/family", shared);
        check_small_shapes(dataset, 6, 5, 200);
        check_small_shapes(dataset, 10, 40, 100);
        snprintf(dataset, sizeof dataset, "%s/datasets/wn18rr", shared);
        check_small_shapes(dataset, 10, 20, 100);
    }
}

/* Copies env 0's state in or out through its checkpoint arrays. */
typedef struct snapshot {
    unsigned char *bytes;
    size_t size;
} snapshot;

static size_t array_bytes(const sk_env_array *a) {
    static const size_t elem[] = {4, 8, 4, 8, 1, 8}; /* F32 F64 I32 I64 U8 U64 */
    return elem[a->type] * (size_t)a->count;
}

static void snapshot_take(snapshot *snap, void *state) {
    sk_env_array arrays[SK_MAX_ENV_ARRAYS];
    int n = sk_env_prover.state_arrays(state, arrays);
    size_t size = 0;
    for (int k = 0; k < n; k++) size += array_bytes(&arrays[k]);
    if (!snap->bytes) {
        snap->bytes = malloc(size);
        snap->size = size;
    }
    assert_int_equal(snap->size, size);
    size_t at = 0;
    for (int k = 0; k < n; k++) {
        memcpy(snap->bytes + at, arrays[k].data, array_bytes(&arrays[k]));
        at += array_bytes(&arrays[k]);
    }
}

static void snapshot_restore(const snapshot *snap, void *state) {
    sk_env_array arrays[SK_MAX_ENV_ARRAYS];
    int n = sk_env_prover.state_arrays(state, arrays);
    size_t at = 0;
    for (int k = 0; k < n; k++) {
        memcpy(arrays[k].data, snap->bytes + at, array_bytes(&arrays[k]));
        at += array_bytes(&arrays[k]);
    }
}

/* Whether env 0 (one env) proves its query within `budget` more actions:
 * depth-first over its successors, stepping the env and restoring it from a
 * snapshot before each alternative. */
static bool provable_within(harness *h, snapshot *snaps, int budget, long *nodes) {
    snapshot_take(&snaps[budget], h->s);
    int count = h->s->num_succ[0];
    for (int a = 0; a < count; a++) {
        if (a) snapshot_restore(&snaps[budget], h->s);
        (*nodes)++;
        step_one(h, 0, a);
        if (h->io.terminated[0]) {
            if (h->io.episode_log[2] == 1.0f) return true;
            continue;
        }
        if (h->io.truncated[0] || budget == 1) continue;
        if (provable_within(h, snaps, budget - 1, nodes)) return true;
    }
    return false;
}

/* The shortest proof of env 0's current query, by iterative deepening; 0 if
 * none within max_budget. Leaves env 0 in an arbitrary state. */
static int shortest_proof(harness *h, int max_budget, long *nodes) {
    snapshot snaps[64] = {{0}}, start = {0};
    assert_true(max_budget < 64);
    snapshot_take(&start, h->s);
    int found = 0;
    for (int budget = 1; budget <= max_budget && !found; budget++) {
        snapshot_restore(&start, h->s);
        if (provable_within(h, snaps, budget, nodes)) found = budget;
    }
    for (int k = 0; k < 64; k++) free(snaps[k].bytes);
    free(start.bytes);
    return found;
}

/* ------------------------------------------------------------ the least model */

/* The least model the slow way: every rule under every assignment of its
 * variables to constants, over and over until a pass adds nothing. Keys in a
 * plain array, searched linearly: for kbs of a few hundred atoms. */
typedef struct key_list {
    uint64_t *keys;
    int count, cap;
} key_list;

static bool key_list_has(const key_list *l, uint64_t key) {
    for (int k = 0; k < l->count; k++)
        if (l->keys[k] == key) return true;
    return false;
}

static void key_list_add(key_list *l, uint64_t key) {
    if (key_list_has(l, key)) return;
    if (l->count == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 256;
        l->keys = realloc(l->keys, (size_t)l->cap * sizeof *l->keys);
        assert_non_null(l->keys);
    }
    l->keys[l->count++] = key;
}

static key_list brute_force_model(const sk_kb *kb) {
    key_list model = {0};
    const sk_kb_atoms *train = &kb->facts[SK_KB_TRAIN];
    for (int k = 0; k < train->count; k++)
        key_list_add(&model, sk_kb_key(train->atoms[k][0], train->atoms[k][1], train->atoms[k][2]));
    int C = kb->num_consts;
    for (int before = -1; before != model.count;) {
        before = model.count;
        for (int r = 0; r < kb->num_rules; r++) {
            const sk_kb_rule *rule = &kb->rules[r];
            int32_t value[SK_KB_MAX_RULE_VARS];
            long assignments = 1;
            for (int v = 0; v < rule->num_vars; v++) assignments *= C;
            assert_true(assignments <= 10 * 1000 * 1000);
            for (long a = 0; a < assignments; a++) {
                long rest = a;
                for (int v = 0; v < rule->num_vars; v++, rest /= C) value[v] = 1 + (int32_t)(rest % C);
                bool holds = true;
                for (int k = 0; k < rule->body_len && holds; k++) {
                    const int32_t *b = rule->body[k];
                    holds = key_list_has(&model, sk_kb_key(b[0], value[b[1]], value[b[2]]));
                }
                if (holds)
                    key_list_add(&model, sk_kb_key(rule->head[0], value[rule->head[1]],
                                                   value[rule->head[2]]));
            }
        }
    }
    return model;
}

/* The model equals the brute force's: as many atoms, each of them in it. */
static void expect_model(const sk_kb *kb, const char *name) {
    key_list want = brute_force_model(kb);
    sk_kb_model got;
    assert_int_equal(sk_kb_model_build(kb, INT64_MAX, &got), SK_OK);
    print_message("%s: %d train facts, least model %lld atoms in %d rounds\n", name,
                  kb->facts[SK_KB_TRAIN].count, (long long)got.count, got.rounds);
    assert_true(got.complete);
    assert_int_equal(got.count, want.count);
    for (int k = 0; k < want.count; k++) assert_true(sk_kb_set_has(&got.set, want.keys[k]));
    /* one atom fewer than it needs: left incomplete, and then allows anything */
    sk_kb_model small;
    assert_int_equal(sk_kb_model_build(kb, got.count - 1, &small), SK_OK);
    assert_false(small.complete);
    assert_true(sk_kb_model_allows(&small, sk_kb_key(SK_KB_FIRST_PRED, 1, 1)));
    sk_kb_model exact;
    assert_int_equal(sk_kb_model_build(kb, got.count, &exact), SK_OK);
    assert_true(exact.complete);
    sk_kb_model_free(&small);
    sk_kb_model_free(&exact);
    sk_kb_model_free(&got);
    free(want.keys);
}

static void test_least_model_matches_brute_force(void **st) {
    (void)st;
    /* a chain with a loop and a self edge: recursion over several rounds, a
     * three-atom body, a repeated variable in a body and in a head, and a
     * predicate only rules define */
    sk_kb *kb = kb_from("e(a,b).\ne(b,c).\ne(c,d).\ne(d,b).\ne(f,f).\ne(f,g).\nk(a,g).\n",
                        "step:1:e(X,Y) -> path(X,Y)\n"
                        "trans:1:e(X,Z), path(Z,Y) -> path(X,Y)\n"
                        "back:1:path(Y,X) -> back(X,Y)\n"
                        "three:1:e(X,Y), e(Y,Z), e(Z,W) -> far(X,W)\n"
                        "selfish:1:e(X,X), e(X,Y) -> own(X,Y)\n"
                        "loop:1:path(X,Y) -> cyc(Y,Y)\n"
                        "mix:1:k(X,Y), own(Z,Y) -> tie(X,Z)\n");
    expect_model(kb, "hand-made");
    /* the rules derive what the join finds, not only what it was given */
    sk_kb_model m;
    assert_int_equal(sk_kb_model_build(kb, INT64_MAX, &m), SK_OK);
    int32_t path = sk_kb_find_pred(kb, "path"), tie = sk_kb_find_pred(kb, "tie");
    int32_t a = sk_kb_find_const(kb, "a"), d = sk_kb_find_const(kb, "d"), f = sk_kb_find_const(kb, "f");
    assert_true(sk_kb_set_has(&m.set, sk_kb_key(path, a, d)));
    assert_true(sk_kb_set_has(&m.set, sk_kb_key(tie, a, f)));
    assert_false(sk_kb_set_has(&m.set, sk_kb_key(path, d, a)));
    sk_kb_model_free(&m);
    sk_kb_free(kb);
    /* small synthetic family forests: the family rules, several generations */
    for (uint64_t seed = 1; seed <= 3; seed++) {
        sk_kb_synth_params params = SK_KB_SYNTH_DEFAULTS;
        params.families = 2;
        params.generations = 2;
        assert_int_equal(sk_kb_synthetic(&kb, seed, params), SK_OK);
        expect_model(kb, "synthetic");
        sk_kb_free(kb);
    }
    /* a head variable the body does not bind: not built */
    kb = kb_from("e(a,b).\n", "wild:1:e(X,Y) -> w(X,Z)\n");
    assert_int_equal(sk_kb_model_build(kb, INT64_MAX, &m), SK_OK);
    assert_false(m.complete);
    sk_kb_free(kb);
}

/* The claim ranking rests on: an atom outside the model has no proof in the
 * env, searched exhaustively. Countries: every tail corruption of the test and
 * valid queries (the model holds 24% of them). Family: 25 tail corruptions
 * of each of the first 30 valid and test queries, and every query with a
 * recorded depth is inside. */
static void test_atoms_outside_the_model_have_no_proof(void **st) {
    (void)st;
    REQUIRE_SHARED(shared);
    static const char *const names[] = {"countries_s3", "family"};
    for (int d = 0; d < 2; d++) {
        char dataset[4096 + 64];
        snprintf(dataset, sizeof dataset, "%s/datasets/%s", shared, names[d]);
        harness h;
        harness_dataset(&h, dataset, 1, NULL);
        const sk_kb *kb = h.s->kb;
        sk_kb_model m;
        assert_int_equal(sk_kb_model_build(kb, INT64_MAX, &m), SK_OK);
        assert_true(m.complete);
        int outside = 0, inside = 0, budget = d == 0 ? 6 : 3;
        long nodes = 0;
        for (int split = SK_KB_VALID; split <= SK_KB_TEST; split++) {
            const sk_kb_atoms *queries = &kb->queries[split];
            int limit = d == 0 ? queries->count : 30;
            for (int q = 0; q < queries->count && q < limit; q++) {
                const int32_t *query = queries->atoms[q];
                bool in = sk_kb_set_has(&m.set, sk_kb_key(query[0], query[1], query[2]));
                if (queries->depths[q] >= 1) assert_true(in);
                int32_t corrupt[4096][3];
                int n = sk_rank_corruptions(kb, query, 1, corrupt, 4096);
                for (int k = 0; k < n && k < (d == 0 ? n : 25); k++) {
                    if (sk_kb_set_has(&m.set, sk_kb_key(corrupt[k][0], corrupt[k][1], corrupt[k][2]))) {
                        inside++;
                        continue;
                    }
                    sk_prover_set_query(h.s, &h.io, 0, corrupt[k], false);
                    assert_int_equal(shortest_proof(&h, budget, &nodes), 0);
                    outside++;
                }
            }
        }
        print_message("%s: %lld atoms in the least model; %d corruptions outside it without a proof "
                      "within %d steps (%ld env steps), %d inside\n",
                      names[d], (long long)m.count, outside, budget, nodes, inside);
        assert_true(outside > 50);
        sk_kb_model_free(&m);
        harness_free(&h);
    }
}

/* Every countries_s3 query with a recorded depth d has a proof of depth d in
 * the env and none shorter; the test split is the acceptance criterion, valid
 * and train (positives, excluded from the facts) are checked as well. */
static void test_countries_recorded_depths(void **st) {
    (void)st;
    REQUIRE_SHARED(shared);
    char dataset[4096 + 64];
    snprintf(dataset, sizeof dataset, "%s/datasets/countries_s3", shared);
    static const char *const splits[] = {"test", "valid", "train"};
    for (int sp = 0; sp < 3; sp++) {
        const char *const cfg[] = {"env.split", splits[sp], NULL};
        harness h;
        harness_dataset(&h, dataset, 1, cfg);
        sk_kb_split split = sp == 0 ? SK_KB_TEST : sp == 1 ? SK_KB_VALID : SK_KB_TRAIN;
        const sk_kb_atoms *queries = &h.s->kb->queries[split];
        int checked = 0, unprovable = 0;
        long nodes = 0;
        for (int q = 0; q < queries->count; q++) {
            int recorded = queries->depths[q];
            sk_prover_set_query(h.s, &h.io, 0, queries->atoms[q], true);
            int found = shortest_proof(&h, recorded >= 0 ? recorded : 10, &nodes);
            if (found != (recorded >= 0 ? recorded : 0)) {
                char atom[256];
                sk_kb_format_atom(h.s->kb, queries->atoms[q], atom, sizeof atom);
                print_message("%s: recorded depth %d, shortest proof in the env %d\n", atom,
                              recorded, found);
                fail();
            }
            if (recorded >= 0) checked++;
            else unprovable++;
        }
        print_message("countries_s3 %s: %d recorded proofs found at their depth, %d recorded "
                      "unprovable found no proof within 10 (%ld env steps)\n",
                      splits[sp], checked, unprovable, nodes);
        if (sp == 0) assert_int_equal(checked, 24);
        harness_free(&h);
    }
}

static void test_synthetic_queries_are_provable(void **st) {
    (void)st;
    for (int sp = 0; sp < 3; sp++) {
        static const char *const splits[] = {"train", "valid", "test"};
        const char *const cfg[] = {"env.split", splits[sp], NULL};
        harness h;
        harness_dataset(&h, "", 1, cfg);
        const sk_kb *kb = h.s->kb;
        const sk_kb_atoms *queries = &kb->queries[sp];
        assert_true(queries->count > 100);
        int histogram[8] = {0};
        long nodes = 0;
        /* every query of a held-out split; a stride through train */
        int stride = sp == 0 ? 7 : 1;
        for (int q = 0; q < queries->count; q += stride) {
            assert_true(sk_kb_is_known(kb, sk_kb_key(queries->atoms[q][0], queries->atoms[q][1],
                                                     queries->atoms[q][2])));
            sk_prover_set_query(h.s, &h.io, 0, queries->atoms[q], true);
            int found = shortest_proof(&h, 7, &nodes);
            if (!found) {
                char atom[256];
                sk_kb_format_atom(kb, queries->atoms[q], atom, sizeof atom);
                print_message("synthetic %s query %s: no proof within 7\n", splits[sp], atom);
            }
            assert_true(found > 0);
            histogram[found]++;
        }
        print_message("synthetic %s: %d queries, %d people; shortest proofs by depth:", splits[sp],
                      queries->count, kb->num_consts);
        for (int d = 1; d < 8; d++) print_message(" %d:%d", d, histogram[d]);
        print_message(" (%ld env steps)\n", nodes);
        harness_free(&h);
    }
}

/*
 * Negatives corrupt the side env.corrupt names. On countries_s3 the train
 * queries are locatedInCR(country, region), one per country, 33 of the 243
 * countries: a tail corruption keeps a pool country as the head (always), a
 * head corruption draws any country (a pool one 33/243 = 14% of the time),
 * both sides at even odds give 57% on average.
 */
static void test_negatives_are_corruptions(void **st) {
    (void)st;
    REQUIRE_SHARED(shared);
    char dataset[4096 + 64];
    snprintf(dataset, sizeof dataset, "%s/datasets/countries_s3", shared);
    static const struct {
        const char *corrupt;
        double lo, hi; /* bounds on the fraction of negatives whose head is a pool country */
    } modes[] = {{"both", 0.45, 0.70}, {"tail", 1.0, 1.0}, {"head", 0.05, 0.25}};
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        const char *const cfg[] = {"env.negative_ratio", "2", "env.corrupt", modes[m].corrupt,
                                   NULL};
        harness h;
        harness_dataset(&h, dataset, 64, cfg);
        const sk_kb *kb = h.s->kb;
        int32_t country_type = kb->const_type[sk_kb_find_const(kb, "spain")];
        int32_t region_type = kb->const_type[sk_kb_find_const(kb, "europe")];
        assert_true(country_type > 0 && region_type > 0 && country_type != region_type);
        int32_t located = sk_kb_find_pred(kb, "locatedInCR");
        assert_int_equal(h.s->pool_count, 33);
        sk_env_prover.reset(h.s, &h.io, 0, 64, 5);
        int positives = 0, negatives = 0, pool_heads = 0;
        for (int round = 0; round < 30; round++) {
            for (int i = 0; i < 64; i++) {
                const int32_t *q = h.s->query + 3 * i;
                /* one positive then two negatives, per env */
                assert_int_equal(h.s->positive[i], (h.s->episodes[i] - 1) % 3 == 0);
                assert_int_equal(q[0], located); /* train queries: the depths file's */
                assert_int_equal(kb->const_type[q[1]], country_type);
                assert_int_equal(kb->const_type[q[2]], region_type);
                bool known = sk_kb_is_known(kb, sk_kb_key(q[0], q[1], q[2]));
                assert_int_equal(known, h.s->positive[i]);
                if (h.s->positive[i]) {
                    positives++;
                    continue;
                }
                negatives++;
                for (int k = 0; k < h.s->pool_count; k++)
                    if (h.s->pool[k][1] == q[1]) {
                        pool_heads++;
                        /* the pool query of this country is a fact, the negative is not */
                        assert_int_not_equal(h.s->pool[k][2], q[2]);
                        break;
                    }
            }
            /* end every episode: pick False/End or True, whatever comes first */
            for (int i = 0; i < 64; i++) {
                int guard = 0;
                while (!h.io.terminated[i] && !h.io.truncated[i] && guard++ < 100)
                    step_one(&h, i, 0);
                h.io.terminated[i] = h.io.truncated[i] = 0;
            }
        }
        double frac = (double)pool_heads / negatives;
        print_message("corrupt = %s: %d positives, %d negatives, %.3f with a pool country's "
                      "head\n",
                      modes[m].corrupt, positives, negatives, frac);
        assert_true(negatives > positives);
        assert_true(frac >= modes[m].lo && frac <= modes[m].hi);
        harness_free(&h);
    }
}

static void test_reset_determinism_and_checkpoint_arrays(void **st) {
    (void)st;
    REQUIRE_SHARED(shared);
    char dataset[4096 + 64];
    snprintf(dataset, sizeof dataset, "%s/datasets/countries_s3", shared);
    enum { N = 16, STEPS = 200 };
    harness h1, h2;
    harness_dataset(&h1, dataset, N, NULL);
    harness_dataset(&h2, dataset, N, NULL);
    sk_env_prover.reset(h1.s, &h1.io, 0, N, 42);
    sk_env_prover.reset(h2.s, &h2.io, 0, N, 42);
    assert_memory_equal(h1.io.obs, h2.io.obs, sizeof(float) * N * OBS);
    /* run h1 a while, copy its arrays into h2, then both must agree step by step */
    uint64_t rng = 3;
    for (int t = 0; t < STEPS; t++) {
        for (int i = 0; i < N; i++) h1.actions[i] = (int32_t)sk_rng_below(&rng, S);
        sk_env_prover.step(h1.s, &h1.io, 0, N);
    }
    sk_env_array a1[SK_MAX_ENV_ARRAYS], a2[SK_MAX_ENV_ARRAYS];
    int n1 = sk_env_prover.state_arrays(h1.s, a1), n2 = sk_env_prover.state_arrays(h2.s, a2);
    assert_int_equal(n1, n2);
    for (int k = 0; k < n1; k++) {
        assert_string_equal(a1[k].name, a2[k].name);
        memcpy(a2[k].data, a1[k].data, array_bytes(&a1[k]) * N);
    }
    for (int t = 0; t < STEPS; t++) {
        for (int i = 0; i < N; i++) h1.actions[i] = h2.actions[i] = (int32_t)sk_rng_below(&rng, S);
        sk_env_prover.step(h1.s, &h1.io, 0, N);
        sk_env_prover.step(h2.s, &h2.io, 0, N);
        assert_memory_equal(h1.io.obs, h2.io.obs, sizeof(float) * N * OBS);
        assert_memory_equal(h1.io.masks, h2.io.masks, (size_t)N * S);
        assert_memory_equal(h1.io.rewards, h2.io.rewards, sizeof(float) * N);
        assert_memory_equal(h1.io.terminated, h2.io.terminated, N);
    }
    harness_free(&h1);
    harness_free(&h2);
}

/* ------------------------------------------------------------ loading */

static char g_tmpdir[256];

static void write_file(const char *name, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", g_tmpdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void remove_file(const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", g_tmpdir, name);
    unlink(path);
}

static const char g_good_train[] = "p(a,b).\n\np(b,c).\n% a comment\nq(c,a).\n";
static const char g_good_rules[] = "r1:0.5:p(X,Y), p(Y,Z) -> q(Z,X)\n";

/* Loads g_tmpdir with `name` replaced by text; expects status and a message
 * starting with "DIR/name:LINE: expected". */
static void expect_load_error(const char *name, const char *text, sk_status want, int line,
                              const char *what) {
    write_file("train.txt", g_good_train);
    write_file("rules.txt", g_good_rules);
    write_file(name, text);
    sk_kb *kb = NULL;
    sk_status status = sk_kb_load(&kb, g_tmpdir);
    print_message("%s\n", sk_last_error());
    assert_int_equal(status, want);
    assert_null(kb);
    char prefix[600];
    snprintf(prefix, sizeof prefix, "%s/%s:%d: expected", g_tmpdir, name, line);
    assert_int_equal(strncmp(sk_last_error(), prefix, strlen(prefix)), 0);
    assert_non_null(strstr(sk_last_error(), what));
    remove_file(name);
}


/* A FIFO in a dataset folder used to block the loader forever (no writer);
 * a relative env.dataset is recorded absolute, so eval finds it from anywhere. */
static void test_loader_regular_files_and_absolute_path(void **st) {
    (void)st;
    snprintf(g_tmpdir, sizeof g_tmpdir, "/tmp/skinner_test_prover_XXXXXX");
    assert_non_null(mkdtemp(g_tmpdir));
    write_file("train.txt", g_good_train);
    write_file("rules.txt", g_good_rules);
    char fifo[512];
    snprintf(fifo, sizeof fifo, "%s/valid.txt", g_tmpdir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    alarm(20); /* a hang fails the test instead of the suite's timeout */
    sk_kb *kb = NULL;
    assert_int_equal(sk_kb_load(&kb, g_tmpdir), SK_ERR_IO);
    alarm(0);
    assert_non_null(strstr(sk_last_error(), "valid.txt"));
    assert_non_null(strstr(sk_last_error(), "FIFO"));
    unlink(fifo);

    char cwd[4096], real[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_non_null(realpath(g_tmpdir, real));
    assert_int_equal(chdir("/tmp"), 0);
    sk_config *cfg = sk_config_new();
    assert_int_equal(sk_config_set(cfg, "env.dataset", g_tmpdir + strlen("/tmp/")), SK_OK);
    void *state = NULL;
    if (sk_env_prover.create(&state, 1, cfg) != SK_OK) fail_msg("%s", sk_last_error());
    assert_string_equal(sk_config_get(cfg, "env.dataset"), real);
    sk_env_prover.destroy(state);
    sk_config_free(cfg);
    assert_int_equal(chdir(cwd), 0);
    remove_file("train.txt");
    remove_file("rules.txt");
    rmdir(g_tmpdir);
}

static void test_loader_errors(void **st) {
    (void)st;
    snprintf(g_tmpdir, sizeof g_tmpdir, "/tmp/skinner_test_prover_XXXXXX");
    assert_non_null(mkdtemp(g_tmpdir));
    expect_load_error("train.txt", "p(a,b).\nq(b,c).\np(a b).\n", SK_ERR_CORRUPT, 3,
                      "',' after argument 1 of 'p'");
    expect_load_error("train.txt", "p(a,b).\np(a).\n", SK_ERR_CORRUPT, 2, "2 arguments");
    expect_load_error("train.txt", "p(a,b,c).\n", SK_ERR_CORRUPT, 1, "2 arguments");
    expect_load_error("train.txt", "p(a,b) q\n", SK_ERR_CORRUPT, 1, "end of line");
    expect_load_error("train.txt", "pab.\n", SK_ERR_CORRUPT, 1, "'(' after 'pab.'");
    expect_load_error("train.txt", "True(a,b).\n", SK_ERR_CORRUPT, 1, "reserved");
    expect_load_error("valid.txt", "p(a,\n", SK_ERR_CORRUPT, 1, "argument 2 of 'p'");
    expect_load_error("rules.txt", "r1:1:p(X,Y) -> q(X,Y)\nr2:x:p(X,Y) -> q(X,Y)\n",
                      SK_ERR_CORRUPT, 2, "number as the weight of rule 'r2'");
    expect_load_error("rules.txt", "r1:1:p(X,Y) q(X,Y)\n", SK_ERR_CORRUPT, 1, "',' or '->'");
    expect_load_error("rules.txt", "p(X,Y) -> q(X,Y)\n", SK_ERR_CORRUPT, 1, "name:weight:");
    expect_load_error("rules.txt", "r1:1:p(X,Y) -> q(X,Y) extra\n", SK_ERR_CORRUPT, 1,
                      "end of line after the head");
    expect_load_error("rules.txt",
                      "r:1:p(A,B), p(B,C), p(C,D), p(D,E), p(E,F), p(F,G), p(G,H), p(H,I), "
                      "p(I,J) -> q(A,J)\n",
                      SK_ERR_CORRUPT, 1, "at most 8 body atoms");
    expect_load_error("test_depths.txt", "p(a,b) 2\np(b,c) deep\n", SK_ERR_CORRUPT, 2,
                      "a depth");
    expect_load_error("test_depths.txt", "p(a,b) -3\n", SK_ERR_CORRUPT, 1, "a depth");
    /* required files */
    write_file("rules.txt", g_good_rules);
    remove_file("train.txt");
    sk_kb *kb = NULL;
    assert_int_equal(sk_kb_load(&kb, g_tmpdir), SK_ERR_IO);
    assert_non_null(strstr(sk_last_error(), "train.txt"));
    /* a good folder: counts, queries from the depths file, types */
    write_file("train.txt", g_good_train);
    write_file("test.txt", "q(a,c).\n");
    write_file("test_depths.txt", "q(a,c) 2\nq(b,b) -1\n");
    write_file("domain2constants.txt", "letters a b c\nother d\n");
    assert_int_equal(sk_kb_load(&kb, g_tmpdir), SK_OK);
    assert_int_equal(kb->facts[SK_KB_TRAIN].count, 3);
    assert_int_equal(kb->queries[SK_KB_TRAIN].count, 3); /* no train_depths: the facts */
    assert_int_equal(kb->queries[SK_KB_TEST].count, 2);
    assert_int_equal(kb->queries[SK_KB_TEST].depths[1], -1);
    assert_int_equal(kb->num_rules, 1);
    assert_int_equal(kb->num_consts, 4);
    assert_true(sk_kb_is_fact(kb, sk_kb_key(sk_kb_find_pred(kb, "p"), sk_kb_find_const(kb, "a"),
                                            sk_kb_find_const(kb, "b"))));
    assert_true(sk_kb_is_known(kb, sk_kb_key(sk_kb_find_pred(kb, "q"), sk_kb_find_const(kb, "a"),
                                             sk_kb_find_const(kb, "c"))));
    assert_false(sk_kb_is_fact(kb, sk_kb_key(sk_kb_find_pred(kb, "q"), sk_kb_find_const(kb, "a"),
                                             sk_kb_find_const(kb, "c"))));
    /* corruption candidates of p's arguments: the 'letters', not d */
    int32_t p = sk_kb_find_pred(kb, "p");
    assert_int_equal(kb->cand_start[2 * p + 1] - kb->cand_start[2 * p], 3);
    /* the index: p(a,_) and p(_,c) */
    const int32_t(*begin)[2], (*end)[2];
    sk_kb_by_arg0(kb, p, sk_kb_find_const(kb, "a"), &begin, &end);
    assert_int_equal(end - begin, 1);
    assert_int_equal((*begin)[1], sk_kb_find_const(kb, "b"));
    sk_kb_by_arg1(kb, p, sk_kb_find_const(kb, "c"), &begin, &end);
    assert_int_equal(end - begin, 1);
    assert_int_equal((*begin)[0], sk_kb_find_const(kb, "b"));
    sk_kb_free(kb);
    /* through the env: a broken dataset fails create with the loader's message */
    write_file("rules.txt", "oops\n");
    sk_config *cfg = sk_config_new();
    assert_int_equal(sk_config_set(cfg, "env.dataset", g_tmpdir), SK_OK);
    void *state = NULL;
    assert_int_equal(sk_env_prover.create(&state, 1, cfg), SK_ERR_CORRUPT);
    assert_non_null(strstr(sk_last_error(), "rules.txt:1: expected"));
    sk_config_free(cfg);
    static const char *const files[] = {"train.txt", "test.txt", "test_depths.txt",
                                        "domain2constants.txt", "rules.txt", "valid.txt"};
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) remove_file(files[k]);
    rmdir(g_tmpdir);
}

/* The fact sets (a Bloom filter in front of a hash table) against a linear
 * scan of the facts: every (pred, a, b) over family's first 60 people and
 * every predicate, and every fact of every split. */
static bool scan_has(const sk_kb_atoms *atoms, const int32_t want[3]) {
    for (int k = 0; k < atoms->count; k++)
        if (memcmp(atoms->atoms[k], want, 3 * sizeof(int32_t)) == 0) return true;
    return false;
}

static void test_fact_sets_match_a_scan(void **st) {
    (void)st;
    REQUIRE_SHARED(shared);
    char dataset[4096 + 64];
    snprintf(dataset, sizeof dataset, "%s/datasets/family", shared);
    sk_kb *kb = NULL;
    assert_int_equal(sk_kb_load(&kb, dataset), SK_OK);
    int facts = 0, known = 0;
    for (int32_t p = SK_KB_FIRST_PRED; p < kb->num_preds; p++)
        for (int32_t a = 1; a <= 60; a++)
            for (int32_t b = 1; b <= 60; b++) {
                int32_t atom[3] = {p, a, b};
                uint64_t key = sk_kb_key(p, a, b);
                bool fact = scan_has(&kb->facts[SK_KB_TRAIN], atom);
                bool any = fact || scan_has(&kb->facts[SK_KB_VALID], atom) ||
                           scan_has(&kb->facts[SK_KB_TEST], atom);
                assert_int_equal(sk_kb_is_fact(kb, key), fact);
                assert_int_equal(sk_kb_is_known(kb, key), any);
                facts += fact;
                known += any;
            }
    for (int split = 0; split < SK_KB_NUM_SPLITS; split++)
        for (int k = 0; k < kb->facts[split].count; k++) {
            const int32_t *f = kb->facts[split].atoms[k];
            uint64_t key = sk_kb_key(f[0], f[1], f[2]);
            assert_true(sk_kb_is_known(kb, key));
            assert_int_equal(sk_kb_is_fact(kb, key), split == SK_KB_TRAIN);
        }
    print_message("%d train facts and %d known among %d atoms\n", facts, known,
                  (kb->num_preds - SK_KB_FIRST_PRED) * 60 * 60);
    assert_true(facts > 0 && known > facts);
    sk_kb_free(kb);
}

typedef struct indexed_atom {
    int32_t atom[3];
    int index;
} indexed_atom;

static int indexed_atom_cmp(const void *a, const void *b) {
    const indexed_atom *x = a, *y = b;
    for (int k = 0; k < 3; k++)
        if (x->atom[k] != y->atom[k]) return x->atom[k] < y->atom[k] ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* The (pred, arg) indexes against a scan of the train facts: for every
 * predicate and every constant (and one past them), by_arg0 / by_arg1 list
 * exactly the distinct train facts with that argument, in file order, and
 * by_pred all of the predicate's; the index takes O(facts) memory. */
static void check_fact_index(const sk_kb *kb) {
    const sk_kb_atoms *train = &kb->facts[SK_KB_TRAIN];
    /* first[k]: fact k is not a repeat of an earlier one (sorted by atom, then position) */
    uint8_t *first = malloc((size_t)train->count);
    indexed_atom *sorted = malloc((size_t)train->count * sizeof *sorted);
    assert_true(first && sorted);
    for (int k = 0; k < train->count; k++)
        sorted[k] = (indexed_atom){{train->atoms[k][0], train->atoms[k][1], train->atoms[k][2]}, k};
    qsort(sorted, (size_t)train->count, sizeof *sorted, indexed_atom_cmp);
    for (int k = 0; k < train->count; k++)
        first[sorted[k].index] =
            k == 0 || memcmp(sorted[k].atom, sorted[k - 1].atom, sizeof sorted[k].atom) != 0;
    free(sorted);
    long listed = 0;
    for (int32_t p = 0; p < kb->num_preds; p++) {
        const int32_t(*begin)[2], (*end)[2];
        int n = 0;
        for (int k = 0; k < train->count; k++)
            if (train->atoms[k][0] == p && first[k]) n++;
        sk_kb_by_pred(kb, p, &begin, &end);
        assert_int_equal(end - begin, n);
        for (int pos = 0; pos < 2; pos++) {
            /* constants in one pass: bucket the scan by argument */
            int32_t C = kb->num_consts + 2;
            int32_t *count = calloc((size_t)C, sizeof *count);
            assert_non_null(count);
            for (int k = 0; k < train->count; k++)
                if (train->atoms[k][0] == p && first[k]) count[train->atoms[k][1 + pos]]++;
            for (int32_t a = 0; a < C; a++) {
                if (pos) sk_kb_by_arg1(kb, p, a, &begin, &end);
                else sk_kb_by_arg0(kb, p, a, &begin, &end);
                assert_int_equal(end - begin, count[a]);
                listed += count[a];
            }
            free(count);
        }
    }
    /* order and content, for the arguments of the first facts */
    for (int k = 0; k < train->count && k < 2000; k++) {
        const int32_t *f = train->atoms[k];
        for (int pos = 0; pos < 2; pos++) {
            const int32_t(*begin)[2], (*end)[2];
            if (pos) sk_kb_by_arg1(kb, f[0], f[2], &begin, &end);
            else sk_kb_by_arg0(kb, f[0], f[1], &begin, &end);
            int n = 0;
            for (int j = 0; j < train->count; j++) {
                const int32_t *g = train->atoms[j];
                if (!first[j] || g[0] != f[0] || g[1 + pos] != f[1 + pos]) continue;
                assert_true(begin + n < end);
                assert_int_equal(begin[n][0], g[1]);
                assert_int_equal(begin[n][1], g[2]);
                n++;
            }
            assert_int_equal(end - begin, n);
        }
    }
    assert_true(listed > 0);
    assert_true(kb->by0.mask + 1 <= 4 * (uint64_t)train->count + 16);
    assert_true(kb->by1.mask + 1 <= 4 * (uint64_t)train->count + 16);
    free(first);
}

static void test_fact_index_matches_a_scan(void **st) {
    (void)st;
    sk_kb *kb = NULL;
    assert_int_equal(sk_kb_synthetic(&kb, 5, SK_KB_SYNTH_DEFAULTS), SK_OK);
    check_fact_index(kb);
    sk_kb_free(kb);
    kb = kb_from("p(a,b).\np(a,c).\np(b,b).\np(a,b).\nq(c,d).\np(c,a).\n", "");
    check_fact_index(kb);
    sk_kb_free(kb);
    OPTIONAL_SHARED(shared, "wn18rr");
    if (!shared) return;
    char dataset[4096 + 64];
    snprintf(dataset, sizeof dataset, "%s/datasets/wn18rr", shared);
    assert_int_equal(sk_kb_load(&kb, dataset), SK_OK);
    check_fact_index(kb);
    sk_kb_free(kb);
}

static void test_real_datasets_load(void **st) {
    (void)st;
    REQUIRE_SHARED(shared);
    char dataset[4096 + 64];
    snprintf(dataset, sizeof dataset, "%s/datasets/countries_s3", shared);
    sk_kb *kb = NULL;
    assert_int_equal(sk_kb_load(&kb, dataset), SK_OK);
    assert_int_equal(kb->facts[SK_KB_TRAIN].count, 983);
    assert_int_equal(kb->num_rules, 2);
    assert_int_equal(kb->queries[SK_KB_TEST].count, 24);
    assert_int_equal(kb->queries[SK_KB_TRAIN].count, 111);
    sk_kb_free(kb);
    snprintf(dataset, sizeof dataset, "%s/datasets/family", shared);
    assert_int_equal(sk_kb_load(&kb, dataset), SK_OK);
    assert_int_equal(kb->num_rules, 87);
    assert_int_equal(kb->queries[SK_KB_TEST].count, 5626);
    sk_kb_free(kb);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fact_unification_substitutes_rest),
        cmocka_unit_test(test_known_facts_are_removed_and_proof_found),
        cmocka_unit_test(test_rule_unification_and_renaming),
        cmocka_unit_test(test_rule_head_with_repeated_variable),
        cmocka_unit_test(test_fact_exclusion),
        cmocka_unit_test(test_visited_states_are_pruned),
        cmocka_unit_test(test_states_over_max_atoms_are_pruned),
        cmocka_unit_test(test_keep_shortest_successors),
        cmocka_unit_test(test_duplicate_successors_are_merged),
        cmocka_unit_test(test_proved_and_failed_termination),
        cmocka_unit_test(test_reward_types),
        cmocka_unit_test(test_truncation_at_max_depth),
        cmocka_unit_test(test_end_action),
        cmocka_unit_test(test_observation_layout_and_invalid_actions),
        cmocka_unit_test(test_config_validation),
        cmocka_unit_test(test_configured_sizes),
        cmocka_unit_test(test_small_shapes_keep_the_shortest),
        cmocka_unit_test(test_loader_errors),
        cmocka_unit_test(test_loader_regular_files_and_absolute_path),
        cmocka_unit_test(test_real_datasets_load),
        cmocka_unit_test(test_fact_index_matches_a_scan),
        cmocka_unit_test(test_countries_recorded_depths),
        cmocka_unit_test(test_least_model_matches_brute_force),
        cmocka_unit_test(test_atoms_outside_the_model_have_no_proof),
        cmocka_unit_test(test_synthetic_queries_are_provable),
        cmocka_unit_test(test_negatives_are_corruptions),
        cmocka_unit_test(test_fact_sets_match_a_scan),
        cmocka_unit_test(test_reset_determinism_and_checkpoint_arrays),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
