/*
 * The candidate-scoring policy for symbolic observations (the prover's): each
 * atom [p, a0, a1] is embedded TransE-like as P[p] + A[a0] - A[a1]; a state is
 * the mean of its atoms' embeddings (padding atoms, predicate 0, left out);
 * a residual block y = x + W2 tanh(W1 x + b1) + b2 encodes it; candidate j's
 * logit is the dot product of its encoding with the current state's, and the
 * value is a linear read-out of the current state's encoding. Variables are
 * argument indices like constants, so they share embeddings by slot.
 */
#include "../core/config.h"
#include "../core/core.h"
#include "../core/rng.h"
#include "../nn/nn.h"
#include "policy.h"

#include <math.h>
#include <string.h>

static const char *const g_names[SK_CAND_NUM_TENSORS] = {
    "embed.predicates", "embed.args", "encoder.0.weight", "encoder.0.bias",
    "encoder.1.weight", "encoder.1.bias", "value.weight", "value.bias",
};

sk_status sk_policy_init_candidates(sk_policy *policy, const sk_action_space *space,
                                    int mask_size, const sk_obs_atoms *atoms, int embed,
                                    sk_core_spec core) {
    memset(policy, 0, sizeof *policy);
    policy->encoder_tensor = policy->core_tensor = -1;
    if (space->kind != SK_SPACE_DISCRETE || space->num_heads != 1 ||
        space->head_sizes[0] != atoms->candidates)
        return sk_fail(SK_ERR_INVALID,
                       "the candidates policy needs one discrete head choosing among the %d "
                       "candidates",
                       atoms->candidates);
    if (atoms->atoms < 1 || atoms->candidates < 1 || atoms->num_preds < 1 || atoms->num_args < 1)
        return sk_fail(SK_ERR_INVALID, "the env describes an empty symbolic observation");
    policy->kind = &sk_kind_candidates;
    policy->atoms = *atoms;
    policy->embed = embed;
    policy->space = *space;
    policy->obs_size = 3 * atoms->atoms * (1 + atoms->candidates);
    policy->logits_size = atoms->candidates;
    policy->mask_size = mask_size;
    policy->log_std_tensor = -1;
    const int rows[SK_CAND_NUM_TENSORS] = {atoms->num_preds, atoms->num_args, embed, embed,
                                           embed, embed, 1, 1};
    const int cols[SK_CAND_NUM_TENSORS] = {embed, embed, embed, 1, embed, 1, embed, 1};
    const sk_tensor_kind matrix = SK_TENSOR_MATRIX, vector = SK_TENSOR_VECTOR;
    const sk_tensor_kind kinds[SK_CAND_NUM_TENSORS] = {matrix, matrix, matrix, vector,
                                                       matrix, vector, matrix, vector};
    size_t offset = 0;
    for (int t = 0; t < SK_CAND_NUM_TENSORS; t++)
        sk_policy_add_tensor(policy, &offset, g_names[t], rows[t], cols[t], kinds[t]);
    policy->feature_size = embed;
    if (core.ops) {
        if (core.size != embed)
            return sk_fail(SK_ERR_INVALID, "the candidates policy's core must be %d wide (its embed)",
                           embed);
        sk_status status = sk_policy_add_core(policy, &offset, embed, core);
        if (status != SK_OK) return status;
    }
    policy->num_params = offset;
    return SK_OK;
}

#define EMBED_INIT_STD 0.1 /* small: initial logits near 0, a near-uniform first policy */
#define RESIDUAL_GAIN 0.1  /* the block starts close to the identity */

static void init_params(const sk_policy *policy, float *params, uint64_t *rng) {
    memset(params, 0, policy->num_params * sizeof(float));
    for (int t = SK_CAND_PREDS; t <= SK_CAND_ARGS; t++) {
        const sk_tensor_info *info = &policy->tensors[t];
        for (size_t i = 0; i < (size_t)info->rows * (size_t)info->cols; i++)
            params[info->offset + i] = (float)(EMBED_INIT_STD * sk_rng_normal(rng));
    }
    const sk_tensor_info *w1 = &policy->tensors[SK_CAND_W1], *w2 = &policy->tensors[SK_CAND_W2];
    const sk_tensor_info *wv = &policy->tensors[SK_CAND_VALUE_W];
    sk_orthogonal_init(params + w1->offset, w1->rows, w1->cols, sqrt(2.0), rng);
    sk_orthogonal_init(params + w2->offset, w2->rows, w2->cols, RESIDUAL_GAIN, rng);
    sk_orthogonal_init(params + wv->offset, wv->rows, wv->cols, 1.0, rng);
    if (policy->core) policy->core->init_params(policy, params, rng);
}

/* Encodings per row: the current state, plus every candidate for the actor. */
static int encodings_per_row(const sk_policy *policy, int net) {
    return net == SK_NET_ACTOR ? 1 + policy->atoms.candidates : 1;
}

static sk_status work_alloc(sk_policy_work *work, const sk_policy *policy, int capacity) {
    size_t rows = (size_t)capacity, D = (size_t)policy->embed;
    bool ok = true;
    for (int net = 0; net < 2; net++) {
        size_t enc = rows * (size_t)encodings_per_row(policy, net);
        size_t out = rows * (size_t)(net == SK_NET_ACTOR ? policy->logits_size : 1);
        ok = ok && (work->out[net] = sk_alloc(out * sizeof(float)));
        ok = ok && (work->dout[net] = sk_alloc(out * sizeof(float)));
        ok = ok && (work->enc_in[net] = sk_alloc(enc * D * sizeof(float)));
        ok = ok && (work->enc_hidden[net] = sk_alloc(enc * D * sizeof(float)));
        ok = ok && (work->enc_out[net] = sk_alloc(enc * D * sizeof(float)));
        ok = ok && (work->d_enc[net][0] = sk_alloc(enc * D * sizeof(float)));
        ok = ok && (work->d_enc[net][1] = sk_alloc(enc * D * sizeof(float)));
        ok = ok && (work->atom_count[net] = sk_alloc(enc * sizeof(float)));
        ok = ok && (work->enc_pad[net] = sk_alloc(2 * D * sizeof(float)));
    }
    ok = ok && (work->logp = sk_alloc(rows * sizeof(float)));
    ok = ok && (work->entropy = sk_alloc(rows * sizeof(float)));
    if (ok && policy->core) /* the current states' encodings, for the core */
        ok = (work->state_in = sk_alloc(rows * D * sizeof(float))) &&
             (work->state_hidden = sk_alloc(rows * D * sizeof(float))) &&
             (work->state_atoms = sk_alloc(rows * sizeof(float))) &&
             (work->state_d[0] = sk_alloc(rows * D * sizeof(float))) &&
             (work->state_d[1] = sk_alloc(rows * D * sizeof(float)));
    return ok ? SK_OK : SK_ERR_NOMEM;
}

/* The atoms of encoding k (0: the current state, j + 1: candidate j) of a row. */
static inline const float *encoding_atoms(const sk_policy *policy, const float *obs_row, int k) {
    return obs_row + (size_t)k * 3 * (size_t)policy->atoms.atoms;
}

static int obs_invalid(const sk_policy *policy, const float *obs_row) {
    int count = 3 * policy->atoms.atoms * (1 + policy->atoms.candidates);
    for (int k = 0; k < count; k++) {
        float v = obs_row[k];
        float limit = (float)(k % 3 == 0 ? policy->atoms.num_preds : policy->atoms.num_args);
        if (!(v >= 0.0f && v < limit && v == (float)(int)v)) return k;
    }
    return -1;
}

static inline void check_atom(const sk_policy *policy, int p, int a0, int a1) {
    SK_ASSERT(p >= 0 && p < policy->atoms.num_preds);
    SK_ASSERT(a0 >= 0 && a0 < policy->atoms.num_args && a1 >= 0 && a1 < policy->atoms.num_args);
}

/* enc (D) = mean over the non-padding atoms of P[p] + A[a0] - A[a1]. */
static void embed_state(const sk_policy *policy, const float *params, const float *atoms,
                        float *enc, float *count) {
    int D = policy->embed;
    const float *P = params + policy->tensors[SK_CAND_PREDS].offset;
    const float *A = params + policy->tensors[SK_CAND_ARGS].offset;
    memset(enc, 0, (size_t)D * sizeof(float));
    int n = 0;
    for (int a = 0; a < policy->atoms.atoms; a++) {
        int p = (int)atoms[3 * a], a0 = (int)atoms[3 * a + 1], a1 = (int)atoms[3 * a + 2];
        if (p == 0) continue;
        check_atom(policy, p, a0, a1);
        const float *ep = P + (size_t)p * D, *e0 = A + (size_t)a0 * D, *e1 = A + (size_t)a1 * D;
        for (int d = 0; d < D; d++) enc[d] += ep[d] + e0[d] - e1[d];
        n++;
    }
    float scale = n > 0 ? 1.0f / (float)n : 0.0f;
    for (int d = 0; d < D; d++) enc[d] *= scale;
    *count = (float)n;
}

static float dot(const float *a, const float *b, int n) {
    float sum = 0.0f;
    for (int i = 0; i < n; i++) sum += a[i] * b[i];
    return sum;
}

/* Spreads d(encoding) back onto the embeddings of its atoms. */
static void embed_backward(const sk_policy *policy, float *grads, const float *atoms,
                           const float *denc, float count) {
    if (count <= 0.0f) return;
    int D = policy->embed;
    float *dP = grads + policy->tensors[SK_CAND_PREDS].offset;
    float *dA = grads + policy->tensors[SK_CAND_ARGS].offset;
    float scale = 1.0f / count;
    for (int a = 0; a < policy->atoms.atoms; a++) {
        int p = (int)atoms[3 * a], a0 = (int)atoms[3 * a + 1], a1 = (int)atoms[3 * a + 2];
        if (p == 0) continue;
        float *gp = dP + (size_t)p * D, *g0 = dA + (size_t)a0 * D, *g1 = dA + (size_t)a1 * D;
        for (int d = 0; d < D; d++) {
            float g = denc[d] * scale;
            gp[d] += g;
            g0[d] += g;
            g1[d] -= g;
        }
    }
}

/* The residual block over encodings k0..k0+K-1 of each of B rows:
 * x = embed_state (into in), h = tanh(W1 x + b1) (hid), y = x + W2 h + b2 (out).
 * Most candidate slots are padding (the prover fills a few of its S), and an
 * empty state encodes to the same x = 0, h = tanh(b1), y = W2 h + b2 in every
 * slot: the block runs on the non-empty states packed to the front, then on
 * one empty state (pad, 2 x D), and the rows are spread back to their slots
 * from the last, so in, hid and out end as if every slot had run. */
static void encode_rows(const sk_policy *policy, const float *params, const float *obs, int B,
                        int k0, int K, float *in, float *hid, float *out, float *count,
                        float *pad) {
    int D = policy->embed, E = B * K, live = 0;
    size_t row_bytes = (size_t)D * sizeof(float);
    for (int b = 0; b < B; b++) {
        const float *row = obs + (size_t)b * (size_t)policy->obs_size;
        for (int k = 0; k < K; k++) {
            size_t e = (size_t)b * K + k;
            /* written at the next packed slot, which an empty state leaves free */
            embed_state(policy, params, encoding_atoms(policy, row, k0 + k), in + (size_t)live * D,
                        &count[e]);
            live += count[e] > 0.0f;
        }
    }
    int rows = live < E ? live + 1 : live; /* the packed states, and one empty one */
    if (live < E) memset(in + (size_t)live * D, 0, row_bytes);
    const sk_tensor_info *t = policy->tensors;
    sk_linear_forward(hid, in, params + t[SK_CAND_W1].offset, params + t[SK_CAND_B1].offset, rows, D, D);
    sk_tanh_forward(hid, hid, (size_t)rows * D);
    sk_linear_forward(out, hid, params + t[SK_CAND_W2].offset, params + t[SK_CAND_B2].offset, rows, D, D);
    for (size_t i = 0; i < (size_t)rows * D; i++) out[i] += in[i];
    if (live == E) return;
    memcpy(pad, hid + (size_t)live * D, row_bytes);
    memcpy(pad + D, out + (size_t)live * D, row_bytes);
    for (int e = E - 1, from = live - 1; e >= 0; e--) {
        size_t to = (size_t)e * D;
        if (count[e] > 0.0f) { /* from <= e: a row moves only later */
            if (from != e) {
                memcpy(in + to, in + (size_t)from * D, row_bytes);
                memcpy(hid + to, hid + (size_t)from * D, row_bytes);
                memcpy(out + to, out + (size_t)from * D, row_bytes);
            }
            from--;
        } else {
            memset(in + to, 0, row_bytes);
            memcpy(hid + to, pad, row_bytes);
            memcpy(out + to, pad + D, row_bytes);
        }
    }
}

/* From dy = d(out) (overwritten: it ends as d(in)) back to the embeddings; dh is scratch. */
static void encode_rows_backward(const sk_policy *policy, const float *params, float *grads,
                                 const float *obs, int B, int k0, int K, const float *in,
                                 const float *hid, const float *count, float *dy, float *dh) {
    int D = policy->embed, E = B * K;
    size_t n = (size_t)E * D;
    const sk_tensor_info *t = policy->tensors;
    /* y = x + W2 h + b2 with h = tanh(W1 x + b1) */
    memset(dh, 0, n * sizeof(float));
    sk_linear_backward(dh, grads + t[SK_CAND_W2].offset, grads + t[SK_CAND_B2].offset, dy, hid,
                       params + t[SK_CAND_W2].offset, E, D, D);
    for (size_t i = 0; i < n; i++) dh[i] *= 1.0f - hid[i] * hid[i]; /* now d(pre-activation) */
    /* dx = dy (the identity path) + W1^T dh, accumulated into dy */
    sk_linear_backward(dy, grads + t[SK_CAND_W1].offset, grads + t[SK_CAND_B1].offset, dh, in,
                       params + t[SK_CAND_W1].offset, E, D, D);
    for (int b = 0; b < B; b++) {
        const float *row = obs + (size_t)b * (size_t)policy->obs_size;
        for (int k = 0; k < K; k++) {
            size_t e = (size_t)b * K + k;
            embed_backward(policy, grads, encoding_atoms(policy, row, k0 + k), dy + e * D, count[e]);
        }
    }
}

/* Which encodings a net computes per row: without a core, the state (and for
 * the actor every candidate after it); with one, the state comes from the
 * core, and only the actor encodes, its candidates. */
static void net_encodings(const sk_policy *policy, int net, int *k0, int *K) {
    if (!policy->core) {
        *k0 = 0;
        *K = encodings_per_row(policy, net);
    } else {
        *k0 = 1;
        *K = net == SK_NET_ACTOR ? policy->atoms.candidates : 0;
    }
}

static void forward(const sk_policy *policy, int net, const float *params, const float *obs, int B,
                    sk_policy_work *work) {
    SK_ASSERT(B <= work->capacity);
    int D = policy->embed, S = policy->atoms.candidates, k0, K;
    net_encodings(policy, net, &k0, &K);
    const float *y = work->enc_out[net];
    if (K > 0)
        encode_rows(policy, params, obs, B, k0, K, work->enc_in[net], work->enc_hidden[net],
                    work->enc_out[net], work->atom_count[net], work->enc_pad[net]);
    const sk_tensor_info *t = policy->tensors;
    for (int b = 0; b < B; b++) {
        const float *state = policy->core ? work->features + (size_t)b * D : y + (size_t)b * K * D;
        if (net == SK_NET_ACTOR) {
            const float *cands = policy->core ? y + (size_t)b * K * D : state + D;
            for (int j = 0; j < S; j++)
                work->out[net][(size_t)b * S + j] = dot(state, cands + (size_t)j * D, D);
        } else {
            work->out[net][b] = dot(params + t[SK_CAND_VALUE_W].offset, state, D) +
                                params[t[SK_CAND_VALUE_B].offset];
        }
    }
}

static void backward(const sk_policy *policy, int net, const float *params, float *grads,
                     const float *obs, int B, sk_policy_work *work) {
    int D = policy->embed, S = policy->atoms.candidates, k0, K;
    net_encodings(policy, net, &k0, &K);
    const sk_tensor_info *t = policy->tensors;
    const float *y = work->enc_out[net];
    float *dy = work->d_enc[net][0];
    if (K > 0) memset(dy, 0, (size_t)B * K * D * sizeof(float));
    const float *wv = params + t[SK_CAND_VALUE_W].offset;
    float *dwv = grads + t[SK_CAND_VALUE_W].offset;
    for (int b = 0; b < B; b++) {
        bool core = policy->core != NULL;
        const float *state = core ? work->features + (size_t)b * D : y + (size_t)b * K * D;
        float *dstate = core ? work->dfeatures + (size_t)b * D : dy + (size_t)b * K * D;
        if (net == SK_NET_ACTOR) {
            const float *cands = core ? y + (size_t)b * K * D : state + D;
            float *dcands = core ? dy + (size_t)b * K * D : dstate + D;
            for (int j = 0; j < S; j++) {
                float g = work->dout[net][(size_t)b * S + j];
                if (g == 0.0f) continue;
                const float *cand = cands + (size_t)j * D;
                float *dcand = dcands + (size_t)j * D;
                for (int d = 0; d < D; d++) {
                    dstate[d] += g * cand[d];
                    dcand[d] += g * state[d];
                }
            }
        } else {
            float g = work->dout[net][b];
            for (int d = 0; d < D; d++) {
                dwv[d] += g * state[d];
                dstate[d] += g * wv[d];
            }
            grads[t[SK_CAND_VALUE_B].offset] += g;
        }
    }
    if (K > 0)
        encode_rows_backward(policy, params, grads, obs, B, k0, K, work->enc_in[net],
                             work->enc_hidden[net], work->atom_count[net], dy, work->d_enc[net][1]);
}

static void encode(const sk_policy *policy, const float *params, const float *obs, int B,
                   sk_policy_work *work) {
    encode_rows(policy, params, obs, B, 0, 1, work->state_in, work->state_hidden, work->enc,
                work->state_atoms, work->enc_pad[SK_NET_ACTOR]);
}

static void encode_backward(const sk_policy *policy, const float *params, float *grads,
                            const float *obs, int B, sk_policy_work *work) {
    float *dy = work->state_d[0];
    memcpy(dy, work->denc, (size_t)B * (size_t)policy->embed * sizeof(float));
    encode_rows_backward(policy, params, grads, obs, B, 0, 1, work->state_in, work->state_hidden,
                         work->state_atoms, dy, work->state_d[1]);
}

/* residual blocks of every encoding, the candidates' dot products and the value */
static double forward_macs(const sk_policy *policy) {
    double D = policy->embed, S = policy->atoms.candidates;
    double encodings = policy->core ? 1.0 + S : 2.0 + S; /* the state once with a core */
    return encodings * 2.0 * D * D + S * D + D;
}

static sk_status configure(sk_policy *policy, const sk_config *cfg, const sk_env_def *env,
                           const void *env_state) {
    int64_t embed;
    sk_core_spec core;
    sk_status status;
    if ((status = sk_cfg_int(cfg, "policy.embed", 32, 1, 4096, &embed)) != SK_OK) return status;
    if ((status = sk_policy_configure_core(cfg, (int)embed, &core)) != SK_OK) return status;
    if (core.ops && core.size != embed)
        return sk_fail(SK_ERR_CONFIG,
                       "policy.core_size = %d must equal policy.embed = %d for the candidates "
                       "policy (candidates are scored against the core's output)",
                       core.size, (int)embed);
    if (!sk_env_extras_of(env)->obs_atoms)
        return sk_fail(SK_ERR_CONFIG,
                       "policy.type = candidates needs symbolic observations; %s has numeric ones "
                       "(use policy.type = mlp)",
                       env->id);
    sk_obs_atoms atoms;
    sk_env_extras_of(env)->obs_atoms(env_state, &atoms);
    return sk_policy_init_candidates(policy, &env->action_space, env->mask_size, &atoms,
                                     (int)embed, core);
}

const sk_kind_ops sk_kind_candidates = {
    .name = "candidates", .configure = configure, .init_params = init_params,
    .work_alloc = work_alloc, .forward = forward, .backward = backward, .encode = encode,
    .encode_backward = encode_backward, .obs_invalid = obs_invalid, .forward_macs = forward_macs,
};
