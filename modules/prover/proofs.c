/* A few greedy proofs as JSON lines for the dashboard's trees (proofs.h). */
#include "proofs.h"

#include "prover.h"
#include "rank.h"

#include "skinner/vec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BY_NONE = -4, BY_UNKNOWN = -3, BY_END = -2, BY_FACT = -1 }; /* else a rule id */

/* Where the successors' labels are worked out: the kb's rule tables swapped for
 * none, or for one rule, in a copy of the kb struct (sk_prover_derive reads them). */
typedef struct labeler {
    sk_kb view;
    int32_t *no_rules;   /* (num_preds + 1) zeros */
    int32_t *one_rule;   /* (num_preds + 1) 0 up to the goal's predicate, then 1 */
    int32_t rule_id;     /* view.rule_order when one_rule is in use */
    int32_t *atoms;      /* (SK_PROVER_SUCCESSORS_CAP, A, 3) */
    int32_t *len;        /* (SK_PROVER_SUCCESSORS_CAP) */
    uint64_t *keys;      /* (SK_PROVER_SUCCESSORS_CAP) */
    uint64_t *fact_keys; /* (SK_PROVER_SUCCESSORS_CAP) the successors from facts alone */
} labeler;

static void labeler_free(labeler *l) {
    free(l->no_rules);
    free(l->one_rule);
    free(l->atoms);
    free(l->len);
    free(l->keys);
    free(l->fact_keys);
}

static sk_status labeler_init(labeler *l, const sk_kb *kb, int atoms) {
    memset(l, 0, sizeof *l);
    l->view = *kb;
    size_t preds = (size_t)kb->num_preds + 1, cap = SK_PROVER_SUCCESSORS_CAP;
    l->no_rules = calloc(preds, sizeof *l->no_rules);
    l->one_rule = calloc(preds, sizeof *l->one_rule);
    l->atoms = malloc(cap * (size_t)atoms * 3 * sizeof *l->atoms);
    l->len = malloc(cap * sizeof *l->len);
    l->keys = malloc(cap * sizeof *l->keys);
    l->fact_keys = malloc(cap * sizeof *l->fact_keys);
    if (!l->no_rules || !l->one_rule || !l->atoms || !l->len || !l->keys || !l->fact_keys) {
        labeler_free(l);
        return sk_fail(SK_ERR_NOMEM, "out of memory for the proofs' labels");
    }
    return SK_OK;
}

/* Labels env 0's successors (s->succ_key order) with how they came from its first goal. */
static void label_successors(labeler *l, const sk_prover_state *s, int *by) {
    const int32_t *goals = s->goals, *query = s->query;
    int count = s->num_succ[0], num_goals = s->num_goals[0];
    uint64_t excluded = s->positive[0] ? sk_kb_key(query[0], query[1], query[2]) : 0;
    sk_prover_limits limits = {.max_atoms = s->atoms, .max_successors = SK_PROVER_SUCCESSORS_CAP,
                               .stride = s->atoms};
    const int32_t *succ = s->succ;
    for (int j = 0; j < count; j++) {
        const int32_t *atom = succ + (size_t)j * (size_t)s->atom_ints;
        by[j] = atom[0] == SK_KB_END ? BY_END : BY_UNKNOWN;
    }
    l->view.rule_start = l->no_rules;
    int got = sk_prover_derive(&l->view, s->first_var, goals, num_goals, excluded, s->visited,
                               s->num_visited[0], limits, l->atoms, l->len, l->keys);
    bool facts_prove = got == 1 && l->atoms[0] == SK_KB_TRUE;
    int num_fact_keys = sk_prover_is_terminal(l->atoms) ? 0 : got;
    memcpy(l->fact_keys, l->keys, (size_t)num_fact_keys * sizeof *l->keys);
    for (int j = 0; j < count; j++) {
        const int32_t *atom = succ + (size_t)j * (size_t)s->atom_ints;
        if (atom[0] == SK_KB_TRUE && facts_prove) by[j] = BY_FACT;
        for (int k = 0; k < num_fact_keys && by[j] == BY_UNKNOWN; k++)
            if (!sk_prover_is_terminal(atom) && l->fact_keys[k] == s->succ_key[j]) by[j] = BY_FACT;
    }
    const sk_kb *kb = s->kb;
    int32_t pred = goals[0];
    for (int32_t p = 0; p <= kb->num_preds; p++) l->one_rule[p] = p > pred;
    l->view.rule_start = l->one_rule;
    l->view.rule_order = &l->rule_id;
    for (int32_t r = kb->rule_start[pred]; r < kb->rule_start[pred + 1]; r++) {
        l->rule_id = kb->rule_order[r];
        got = sk_prover_derive(&l->view, s->first_var, goals, num_goals, excluded, s->visited,
                               s->num_visited[0], limits, l->atoms, l->len, l->keys);
        bool proves = got == 1 && l->atoms[0] == SK_KB_TRUE;
        for (int j = 0; j < count; j++) {
            const int32_t *atom = succ + (size_t)j * (size_t)s->atom_ints;
            if (by[j] != BY_UNKNOWN) continue;
            if (atom[0] == SK_KB_TRUE && proves) by[j] = l->rule_id;
            for (int k = 0; k < got && by[j] == BY_UNKNOWN && !sk_prover_is_terminal(atom); k++)
                if (l->keys[k] == s->succ_key[j]) by[j] = l->rule_id;
        }
    }
}

/* ---- JSON */

static void json_string(FILE *f, const char *text) {
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        if (*c == '"' || *c == '\\') fprintf(f, "\\%c", *c);
        else if (*c < 0x20) fprintf(f, "\\u%04x", *c);
        else fputc(*c, f);
    }
    fputc('"', f);
}

static void json_atoms(FILE *f, const sk_kb *kb, const int32_t *atoms, int len) {
    fputc('[', f);
    for (int k = 0; k < len; k++) {
        char text[256];
        sk_kb_format_atom(kb, atoms + 3 * k, text, sizeof text);
        if (k) fputs(", ", f);
        json_string(f, text);
    }
    fputc(']', f);
}

/* "rule NAME: p(A,B) :- q(A,C), r(C,B)", the rule's variables as letters. */
static void rule_text(const sk_kb *kb, int32_t id, char *buf, size_t size) {
    const sk_kb_rule *rule = &kb->rules[id];
    size_t used = 0;
    if (kb->rule_names.count == kb->num_rules)
        used += (size_t)snprintf(buf, size, "rule %s: ", kb->rule_names.names[id]);
    else used += (size_t)snprintf(buf, size, "rule %d: ", (int)id + 1);
    for (int k = -1; k < rule->body_len && used < size; k++) {
        const int32_t *atom = k < 0 ? rule->head : rule->body[k];
        const char *pred = atom[0] < kb->preds.count ? kb->preds.names[atom[0]] : "?";
        char vars[2][16];
        for (int j = 0; j < 2; j++) {
            int32_t v = atom[1 + j];
            if (v < 26) snprintf(vars[j], sizeof vars[j], "%c", 'A' + v);
            else snprintf(vars[j], sizeof vars[j], "V%d", (int)v);
        }
        used += (size_t)snprintf(buf + used, size - used, "%s%s(%s,%s)",
                                 k < 0 ? "" : k == 0 ? " :- " : ", ", pred, vars[0], vars[1]);
    }
}

static void json_by(FILE *f, const sk_kb *kb, int by) {
    char text[512];
    if (by >= 0) rule_text(kb, by, text, sizeof text);
    else snprintf(text, sizeof text, "%s",
                  by == BY_FACT ? "fact" : by == BY_END ? "end" : by == BY_NONE ? "none" : "?");
    json_string(f, text);
}

/* One step: env 0's goals, its successors with their labels, the action taken. */
static void write_step(FILE *f, labeler *l, const sk_prover_state *s, int action, float logp,
                       bool first) {
    const sk_kb *kb = s->kb;
    int count = s->num_succ[0];
    int by[SK_PROVER_SUCCESSORS_CAP];
    label_successors(l, s, by);
    fputs(first ? "{\"goals\": " : ", {\"goals\": ", f);
    json_atoms(f, kb, s->goals, s->num_goals[0]);
    fprintf(f, ", \"chosen\": %d, \"logp\": %.6g, \"successors\": [", action, (double)logp);
    int listed = 0;
    for (int j = 0; j < count; j++) {
        if (j >= SK_PROOFS_MAX_SUCCESSORS && j != action) continue; /* the chosen one always */
        const int32_t *atoms = s->succ + (size_t)j * (size_t)s->atom_ints;
        fprintf(f, "%s{\"index\": %d, \"goals\": ", listed++ ? ", " : "", j);
        json_atoms(f, kb, atoms, s->succ_len[j]);
        fputs(", \"by\": ", f);
        json_by(f, kb, atoms[0] == SK_KB_FALSE ? BY_NONE : by[j]);
        fputc('}', f);
    }
    fprintf(f, "], \"more\": %d}", count - listed);
}

sk_status sk_prover_write_proofs(const sk_env_def *env, const sk_config *env_cfg,
                                 const sk_actor *actor, sk_kb_split split, int count,
                                 const char *path) {
    if (!sk_env_same(env, &sk_env_prover))
        return sk_fail(SK_ERR_INVALID, "proofs need a Prover-v0 policy, not %s", env->id);
    if (count < 1 || count > SK_PROOFS_MAX_QUERIES)
        return sk_fail(SK_ERR_INVALID, "%d proofs (expected 1 to %d)", count,
                       SK_PROOFS_MAX_QUERIES);
    sk_vec *vec = NULL;
    sk_status status = sk_vec_create(&vec, env, 1, 1, env_cfg);
    if (status != SK_OK) return status;
    sk_vec_reset(vec, 1);
    sk_prover_state *s = sk_vec_state(vec);
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    labeler l;
    status = labeler_init(&l, s->kb, s->atoms);
    if (status != SK_OK) {
        sk_vec_destroy(vec);
        return status;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        labeler_free(&l);
        sk_vec_destroy(vec);
        return sk_fail(SK_ERR_IO, "cannot write the proofs '%s': %s (expected a writable file path)",
                       path, strerror(errno));
    }
    const sk_kb_atoms *queries = &s->kb->queries[split];
    int heads = env->action_space.num_heads;
    int32_t *actions = calloc((size_t)heads, sizeof *actions);
    for (int q = 0; q < SK_MIN(count, queries->count) && actions; q++) {
        const int32_t *query = queries->atoms[q];
        if (actor->episode_start) actor->episode_start(actor->ctx, 0, 0);
        sk_prover_set_query(s, sk_vec_io(vec), 0, query, true);
        char text[256];
        sk_kb_format_atom(s->kb, query, text, sizeof text);
        fputs("{\"query\": ", f);
        json_string(f, text);
        fprintf(f, ", \"split\": \"%s\", \"index\": %d, \"steps\": [", sk_rank_split_name(split), q);
        double logp_sum = 0.0;
        const char *outcome = "truncated";
        for (int step = 0;; step++) {
            float logp = 0.0f;
            if (actor->act_at)
                actor->act_at(actor->ctx, 0, 0, b->obs, b->masks, 1, true, actions, &logp);
            else actor->act(actor->ctx, 0, b->obs, b->masks, 1, true, actions, &logp);
            int count_now = s->num_succ[0], action = actions[0];
            if (action < 0 || action >= count_now) action = ((action % count_now) + count_now) % count_now;
            write_step(f, &l, s, action, logp, step == 0);
            logp_sum += (double)logp;
            memcpy(b->actions, actions, (size_t)heads * sizeof *actions);
            sk_vec_step_range(vec, 0, 1);
            if (b->terminated[0]) {
                outcome = b->episode_log[SK_PROVER_LOG_PROVED] > 0.5f ? "proved" : "failed";
                break;
            }
            if (b->truncated[0]) break;
        }
        fprintf(f, "], \"outcome\": \"%s\", \"logp\": %.6g}\n", outcome, logp_sum);
    }
    if (!actions) status = sk_fail(SK_ERR_NOMEM, "out of memory for %d action heads", heads);
    free(actions);
    bool failed = ferror(f) != 0;
    if (fclose(f) != 0) failed = true;
    if (failed && status == SK_OK)
        status = sk_fail(SK_ERR_IO, "writing the proofs '%s' failed (disk full?)", path);
    labeler_free(&l);
    sk_vec_destroy(vec);
    return status;
}
