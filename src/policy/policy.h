/*
 * A policy: a kind (policy.type; sk_kind_ops: mlp.c, candidates.c) that reads the
 * observation, encodes it and scores the actions with an actor and a critic, an optional
 * core between the encoder and the heads (policy.core; sk_core_ops: core_rnn.c's LSTM and
 * GRU) that carries a state per env, and the action distributions (categorical.c,
 * gaussian.c). A new kind or core is one file and one row in its table. Parameters live
 * in one flat float array laid out by the tensor table below (torch.nn.Linear order:
 * weight (out, in), then bias), so gradients and Adam moments mirror it and checkpoints
 * name each tensor.
 */
#ifndef SK_POLICY_H
#define SK_POLICY_H

#include "../nn/conv.h"
#include "../nn/rnn.h"
#include "skinner.h"

#include <stddef.h>

#define SK_MAX_LAYERS 8
/* the two nets' layers, log-std, the core's encoder (2) and recurrent layer (4) */
#define SK_MAX_CONV 4 /* convolutions of a CNN encoder */
#define SK_MAX_TENSORS (2 * 2 * (SK_MAX_LAYERS + 1) + 1 + 2 + SK_RNN_NUM_TENSORS + 2 * SK_MAX_CONV)
/* policy.per_role: the most roles (agents of an env) that get a policy each, and the
 * tensors of all of them */
#define SK_MAX_POLICY_ROLES 4
#define SK_MAX_POLICY_TENSORS (SK_MAX_TENSORS * SK_MAX_POLICY_ROLES)
/* tensor indices of a CANDIDATES policy */
enum { SK_CAND_PREDS, SK_CAND_ARGS, SK_CAND_W1, SK_CAND_B1, SK_CAND_W2, SK_CAND_B2,
       SK_CAND_VALUE_W, SK_CAND_VALUE_B, SK_CAND_NUM_TENSORS };

typedef enum sk_activation { SK_ACTIVATION_TANH, SK_ACTIVATION_RELU } sk_activation;

extern const char *const sk_activation_names[]; /* NULL-terminated, by enum value */

typedef struct sk_policy sk_policy;
typedef struct sk_policy_work sk_policy_work;
typedef struct sk_kind_ops sk_kind_ops;
typedef struct sk_core_ops sk_core_ops;
typedef struct sk_encoder_ops sk_encoder_ops;

/* What policy.encoder = cnn asks for (encoder.c): the input image (height, width,
 * channels: channels last, as the observation) and each convolution's settings. */
typedef struct sk_cnn_spec {
    int layers;
    int height, width, channels;
    int out_channels[SK_MAX_CONV], kernel[SK_MAX_CONV], stride[SK_MAX_CONV],
        padding[SK_MAX_CONV];
    sk_precision precision; /* policy.cnn_precision: fp32, or bf16 inputs with fp32 sums */
    int dense; /* policy.cnn_dense: a shared Linear + ReLU of this width after the flatten; 0 none */
} sk_cnn_spec;

enum { SK_NET_ACTOR = 0, SK_NET_CRITIC = 1 };

/* What a tensor holds, told where it is laid out (sk_policy_add_tensor): its checkpoint
 * entry's dimensions and whether the rollout keeps it transposed follow from this, not from
 * its name. */
typedef enum sk_tensor_kind {
    SK_TENSOR_MATRIX, /* a linear map's weights (rows = outputs), an embedding table: 2-D */
    SK_TENSOR_VECTOR, /* a bias, log_std (cols = 1): 1-D */
    SK_TENSOR_CONV,   /* a convolution's weights (out, in * kh * kw): 2-D, and oneDNN keeps
                         its own reorder of them (src/nn/conv.h) */
} sk_tensor_kind;

typedef struct sk_tensor_info {
    char name[32];   /* e.g. "actor.0.weight" */
    size_t offset;   /* into the flat parameter array, in floats */
    int rows, cols;  /* cols is 1 for a bias */
    sk_tensor_kind kind;
} sk_tensor_info;

struct sk_policy {
    const sk_kind_ops *kind; /* what reads the observation and scores the actions */
    sk_obs_atoms atoms; /* CANDIDATES: the observation's layout */
    int embed;          /* CANDIDATES: embedding width */
    int obs_size, hidden, layers;
    sk_activation activation;
    sk_action_space space;
    int logits_size; /* actor outputs: sum of head sizes, or the action dim (means) */
    int log_std_tensor; /* continuous: index of actor.log_std in tensors, else -1 */
    float log_std_init; /* continuous: actor.log_std's value at initialisation (policy.log_std_init) */
    int mask_size;   /* 0 or sk_action_mask_size(&space) */
    size_t num_params; /* every role's (policy.per_role) */
    int num_tensors;
    sk_tensor_info tensors[SK_MAX_POLICY_TENSORS];
    /* policy.per_role (roles.c): roles > 1 copies of the networks, role r's parameters at
     * params + r * role_params, its tensors the entries r * role_tensors onwards (named
     * "AGENT.actor.0.weight", ...). The kinds' code sees one copy: the first role_tensors
     * entries (role 0's offsets) and the parameters it is handed. 0 or 1: one policy. */
    int roles, role_tensors;
    size_t role_params;
    /* per net, per linear layer (layers + 1 of them): index into tensors of the weight */
    int weight_tensor[2][SK_MAX_LAYERS + 1];
    /* The recurrent core (policy.core; NULL: none), shared by actor and critic and placed
     * between the encoder and the heads:
     *   MLP:        obs -> encoder (Linear + activation, `hidden` wide) -> core -> the actor
     *               and critic nets (`layers` hidden layers each, 0 allowed) read its output
     *   CANDIDATES: a state's encoding (embed) -> core (core_size = embed) -> the candidates
     *               are scored against its output, and the value reads it.
     * Its state, per env, is core->num_parts parts of core_size floats, one after another
     * (LSTM: h, then c; GRU: h). */
    const sk_core_ops *core;
    int core_size;       /* the core's output width (0 without a core) */
    sk_rnn rnn;          /* recurrent cores: input: the encoding (enc_size); hidden: core_size */
    int enc_size;        /* the encoder's output width */
    int feature_size;    /* what the heads read: core_size with a core, else obs_size */
    int encoder_tensor;  /* MLP with a core: index of encoder.weight (the bias follows), else -1 */
    int core_tensor;     /* index of the core's first tensor (its block follows), else -1 */
    /* The encoder stage (policy.encoder; encoder.c), in front of the trunk of an MLP kind:
     * NULL or mlp: the trunk reads the observation; cnn: convolutions + ReLU over the
     * image, flattened channels last (h, w, c), encoded_size wide. Its tensors come first
     * ("encoder.conv0.weight" (out, in * kh * kw): torch's (out, in, kh, kw) in memory). */
    const sk_encoder_ops *encoder;
    sk_cnn_spec cnn;
    sk_conv_shape conv[SK_MAX_CONV];
    int conv_tensor;     /* index of encoder.conv0.weight, else -1 */
    int encoded_size;    /* what the trunk reads: obs_size, or the flattened feature map */
};

/* A policy kind (policy.type): how the observation is read, encoded for a core and scored.
 * A new kind is one file holding one of these and one row in sk_kind_table (policy.c). */
struct sk_kind_ops {
    const char *name; /* policy.type's value */
    /* Reads the kind's policy.* keys and lays the policy out for env (core: policy.core's
     * choice, its size not yet checked against the kind's widths). */
    sk_status (*configure)(sk_policy *policy, const sk_config *cfg, const sk_env_def *env,
                           const void *env_state);
    void (*init_params)(const sk_policy *policy, float *params, uint64_t *rng);
    /* The kind's scratch (the core's part follows, from sk_policy_work_alloc). */
    sk_status (*work_alloc)(sk_policy_work *work, const sk_policy *policy, int capacity);
    void (*forward)(const sk_policy *policy, int net, const float *params, const float *obs,
                    int B, sk_policy_work *work);
    void (*backward)(const sk_policy *policy, int net, const float *params, float *grads,
                     const float *obs, int B, sk_policy_work *work);
    /* Optional: both nets sharing one pass of the encoder stage (NULL: forward and backward
     * per net, in sk_policy_forward_both / sk_policy_backward_both). */
    void (*forward_both)(const sk_policy *policy, const float *params, const float *obs, int B,
                         sk_policy_work *work);
    void (*backward_both)(const sk_policy *policy, const float *params, float *grads,
                          const float *obs, int B, sk_policy_work *work);
    /* With a core: the rows' encodings into work->enc, and back from work->denc. */
    void (*encode)(const sk_policy *policy, const float *params, const float *obs, int rows,
                   sk_policy_work *work);
    void (*encode_backward)(const sk_policy *policy, const float *params, float *grads,
                            const float *obs, int rows, sk_policy_work *work);
    int (*obs_invalid)(const sk_policy *policy, const float *obs_row);
    /* multiply-adds of one row's forward through both nets, the core's left out */
    double (*forward_macs)(const sk_policy *policy);
};
extern const sk_kind_ops sk_kind_mlp, sk_kind_candidates;

/* An encoder (policy.encoder): what turns the observation into the vector the trunk
 * reads. A new encoder is one file and one row in sk_encoder_table (encoder.c). The
 * actor and critic share its parameters; each net's forward runs it on its own (slot =
 * the net; the core's encode uses slot 0) and keeps its activations for its backward. */
struct sk_encoder_ops {
    const char *name; /* policy.encoder's value */
    /* Reads the encoder's policy.* keys for env's observation (obs_size values). */
    sk_status (*configure)(sk_cnn_spec *spec, const sk_config *cfg, const sk_env_def *env,
                           int obs_size);
    /* Appends its tensors at *offset and sets encoded_size (policy->cnn is set). */
    sk_status (*layout)(sk_policy *policy, size_t *offset);
    void (*init_params)(const sk_policy *policy, float *params, uint64_t *rng);
    sk_status (*work_alloc)(sk_policy_work *work, const sk_policy *policy, int capacity);
    /* The rows' codes (B, encoded_size); NULL for the identity (the trunk reads obs). */
    const float *(*forward)(const sk_policy *policy, int slot, const float *params,
                            const float *obs, int B, sk_policy_work *work);
    /* From dcode (B, encoded_size; clobbered) into grads (accumulated). */
    void (*backward)(const sk_policy *policy, int slot, const float *params, float *grads,
                     float *dcode, const float *obs, int B, sk_policy_work *work);
    double (*forward_macs)(const sk_policy *policy);
};
extern const sk_encoder_ops sk_encoder_mlp, sk_encoder_cnn;
extern const sk_encoder_ops *const sk_encoder_table[]; /* NULL-terminated; first: default */
/* Whether the policy runs an encoder stage (not the identity). */
bool sk_policy_has_encoder(const sk_policy *policy);
/* policy.encoder and its keys: *encoder the row, spec its settings. */
sk_status sk_policy_configure_encoder(const sk_config *cfg, const sk_env_def *env,
                                      const sk_encoder_ops **encoder, sk_cnn_spec *spec);
extern const sk_kind_ops *const sk_kind_table[]; /* NULL-terminated; the first is the default */

#define SK_CORE_MAX_PARTS 2
/* A policy core (policy.core): what sits between the encoder and the heads and carries a
 * state per env from step to step. The state of B rows is (B, state floats): each row's
 * parts one after another. A new core is one file holding one of these and one row in
 * sk_core_table (core.c). */
struct sk_core_ops {
    const char *name; /* policy.core's value */
    int num_parts;    /* parts of an env's state, core_size floats each */
    /* checkpoint tensor "state.core_NAME" of each part, (envs x core_size), and the largest
     * |value| a part may hold when read back (a checkpoint, a caller's state) */
    const char *part_names[SK_CORE_MAX_PARTS];
    double part_limits[SK_CORE_MAX_PARTS];
    /* Appends the core's tensors at *offset for an input of input_size and sets the
     * policy's core fields (core_tensor, rnn). size is checked by the caller. */
    void (*layout)(sk_policy *policy, size_t *offset, int input_size, int size);
    void (*init_params)(const sk_policy *policy, float *params, uint64_t *rng);
    /* Floats of the core's own work for `capacity` rows (a sequence's T x B at most). */
    size_t (*work_floats)(const sk_policy *policy, int capacity);
    /* T steps of B rows from work->enc (T * B, enc_size) into work->features (T * B,
     * core_size), from state0 (B, state floats; NULL: zero) and resets (T, B) or NULL;
     * keeps what backward needs in work->core_work. */
    void (*forward)(const sk_policy *policy, const float *params, const float *state0,
                    const uint8_t *resets, int T, int B, sk_policy_work *work);
    /* From work->dfeatures into work->denc (overwritten) and grads (accumulated). */
    void (*backward)(const sk_policy *policy, const float *params, float *grads,
                     const uint8_t *resets, int T, int B, sk_policy_work *work);
    /* One step of B rows from work->enc: state (B, state floats) advances in place and
     * work->features holds the output. */
    void (*step)(const sk_policy *policy, const float *params, float *state, int B,
                 sk_policy_work *work);
    double (*forward_macs)(const sk_policy *policy); /* one row's step */
};
extern const sk_core_ops sk_core_lstm, sk_core_gru;
/* NULL-terminated; policy.core = none is the absence of a core, not a row */
extern const sk_core_ops *const sk_core_table[];

/* What policy.core asks for: no core (ops NULL), or a core of `size` units. */
typedef struct sk_core_spec {
    const sk_core_ops *ops;
    int size;
} sk_core_spec;

/* How a tensor is shaped in checkpoints, by its kind: 1 for biases and log-std vectors,
 * 2 for weight matrices (rows, cols). */
int sk_policy_tensor_ndim(const sk_tensor_info *info);

/* Lays out the parameters. SK_ERR_INVALID if the shape is unsupported. */
sk_status sk_policy_init(sk_policy *policy, int obs_size, const sk_action_space *space,
                         int mask_size, int hidden, int layers, sk_activation activation);
/* The same with a recurrent core (see sk_policy.has_core); layers may then be 0. */
sk_status sk_policy_init_core(sk_policy *policy, int obs_size, const sk_action_space *space,
                              int mask_size, int hidden, int layers, sk_activation activation,
                              sk_core_spec core);
/* The same behind an encoder (NULL or sk_encoder_mlp: none) with the settings spec. */
sk_status sk_policy_init_encoded(sk_policy *policy, int obs_size, const sk_action_space *space,
                                 int mask_size, int hidden, int layers, sk_activation activation,
                                 sk_core_spec core, const sk_encoder_ops *encoder,
                                 const sk_cnn_spec *spec);
/* Reads policy.* keys (type, hidden, layers, activation, embed) from cfg and
 * lays out the policy for env's spaces; env_state (an instance of env) gives
 * the vocabulary sizes of symbolic observations. Names the offending key on
 * bad input. */
sk_status sk_policy_configure(sk_policy *policy, const sk_config *cfg, const sk_env_def *env,
                              const void *env_state);

/* Lays out a CANDIDATES policy (see sk_policy_type). */
sk_status sk_policy_init_candidates(sk_policy *policy, const sk_action_space *space,
                                    int mask_size, const sk_obs_atoms *atoms, int embed,
                                    sk_core_spec core);

/* Orthogonal init with gain sqrt(2) for hidden layers, 0.01 for the logits or
 * means and 1 for the value head; zero biases and log-std (CleanRL's
 * layer_init). */
void sk_policy_init_params(const sk_policy *policy, float *params, uint64_t *rng);

/* Appends the core's tensors ("core.weight_ih_l0", ...) at *offset, for an input of
 * input_size; sets core, core_size, enc_size and core_tensor. */
sk_status sk_policy_add_core(sk_policy *policy, size_t *offset, int input_size, sk_core_spec core);
/* Appends a tensor of that kind to the layout at *offset (SK_MAX_POLICY_TENSORS at most). */
sk_tensor_info *sk_policy_add_tensor(sk_policy *policy, size_t *offset, const char *name, int rows,
                                     int cols, sk_tensor_kind kind);
/* policy.core and policy.core_size (default: default_size). */
sk_status sk_policy_configure_core(const sk_config *cfg, int default_size, sk_core_spec *core);

/* The arrays of weights a work may hold transposed at once: the learner's, self-play's pool. */
#define SK_POLICY_TRANSPOSED 2

/* Scratch activations for up to `capacity` rows. */
struct sk_policy_work {
    int capacity;
    int64_t actor_rows; /* rows run through the actor so far (tests count work done twice) */
    float *hidden[2][SK_MAX_LAYERS]; /* (capacity, hidden) per net and layer */
    float *out[2];                   /* logits (capacity, logits_size), values (capacity) */
    float *dhidden[2];               /* two (capacity, hidden) halves per net */
    float *dout[2];                  /* dlogits, dvalues */
    float *logp, *entropy;           /* (capacity) */
    /* CANDIDATES, per net: encodings of rows x (1 + candidates) states */
    float *enc_in[2], *enc_hidden[2], *enc_out[2]; /* (encodings, embed) */
    float *d_enc[2][2];                            /* two (encodings, embed) scratch */
    float *atom_count[2];                          /* (encodings) */
    float *enc_pad[2]; /* (2, embed): an empty state's hidden and output encodings */
    /* with a core: the encoder's output and its gradient (capacity, enc_size); the
     * core's outputs h, which the heads read, their cell states c (LSTM) and the
     * gradient the heads' backward accumulates (capacity, core_size); the
     * recurrent layer's own work; CANDIDATES: the state encodings' scratch */
    float *enc, *denc, *features, *cells, *dfeatures, *core_work;
    float *core_state; /* (capacity, state floats) the core's scratch for a state's parts */
    float *state_in, *state_hidden, *state_atoms, *state_d[2];
    /* a CNN encoder's: its convolutions' oneDNN primitives (one thread's), each slot's
     * post-ReLU maps per convolution (capacity, map floats), two gradient maps and the
     * code's gradient */
    sk_conv *cnn_conv[SK_MAX_CONV];
    float *cnn_out[2][SK_MAX_CONV], *cnn_d[2], *cnn_dcode;
    /* with policy.cnn_dense: each slot's dense output (capacity, dense); the encoder's
     * output of each slot's last forward (what the trunk reads: the flattened last map
     * or the dense output) */
    float *cnn_dense_out[2];
    const float *cnn_code[2];
    /* weights transposed beforehand (sk_policy_work_use_transposed): the forwards of
     * parameters within [of, of + count) read W^T from t, at the same offsets; of NULL:
     * none, each forward transposes its own */
    struct {
        const float *t, *of;
        size_t count;
    } transposed[SK_POLICY_TRANSPOSED];
};

sk_status sk_policy_work_alloc(sk_policy_work *work, const sk_policy *policy, int capacity);
/* params_t (the params' layout) = W^T of each SK_TENSOR_MATRIX of params whose forward
 * transposes it at the ISA level in use (sk_gemm_small_forward_transposes); the rest of params_t is left as
 * it was. Made where the weights stopped changing (issue 53 ask 7: a rollout's forwards read
 * it instead of transposing at every call). */
void sk_policy_transpose_weights(const sk_policy *policy, const float *params, float *params_t);
/* From now on work's forwards of the count parameters at params (any policy's or role's part
 * of them) read W^T from params_t, made by sk_policy_transpose_weights and kept as it is
 * while they run; params NULL: none (after the weights change). slot: 0 ..
 * SK_POLICY_TRANSPOSED - 1, each array's own. The same bits either way. */
void sk_policy_work_use_transposed(sk_policy_work *work, int slot, const float *params,
                                   const float *params_t, size_t count);
/* W^T of the weight at params + offset, or NULL (work holds none for params). */
const float *sk_policy_weight_t(const sk_policy_work *work, const float *params, size_t offset);
/* The core's part of the work (nothing without a core); SK_ERR_NOMEM, unreported. */
sk_status sk_policy_core_work_alloc(sk_policy_work *work, const sk_policy *policy, int capacity);
void sk_policy_work_free(sk_policy_work *work);

/* Runs net (actor or critic) on obs (B, obs_size); the result lands in
 * work->out[net] and the hidden activations stay in work for backward. With
 * a core the nets read work->features (sk_policy_core_forward or _step run
 * first; CANDIDATES still read the candidates' atoms from obs). */
void sk_policy_forward(const sk_policy *policy, int net, const float *params, const float *obs,
                       int B, sk_policy_work *work);
/* Accumulates parameter gradients of net from work->dout[net], using the
 * activations of the last forward of that net on the same obs. With a core
 * it also accumulates d(features) into work->dfeatures (zeroed by the caller
 * before the first net's backward). */
void sk_policy_backward(const sk_policy *policy, int net, const float *params, float *grads,
                        const float *obs, int B, sk_policy_work *work);
/* Both nets on obs, as sk_policy_forward of the actor then the critic, but the encoder
 * stage (policy.encoder = cnn without a core) runs once for both; backward_both after
 * forward_both on the same obs is the two nets' sk_policy_backward, the encoder's
 * gradient taken once from both nets' sum. What the training loop calls. */
void sk_policy_forward_both(const sk_policy *policy, const float *params, const float *obs,
                            int B, sk_policy_work *work);
void sk_policy_backward_both(const sk_policy *policy, const float *params, float *grads,
                             const float *obs, int B, sk_policy_work *work);

/* The largest |c| an LSTM cell state may hold when it is read back (a
 * checkpoint, a caller's state): |c| grows by at most 1 a step from 0 at an
 * episode's start, and far larger values would overflow on the way to NaN. */
#define SK_CORE_CELL_MAX 1e9

/* FLOPs (2 per multiply-add) of the matrix products of one row's forward
 * through both nets (and the core), the elementwise work left out. */
double sk_policy_forward_flops(const sk_policy *policy);

/* ---- the recurrent core (policy.h's sk_policy.has_core) ---- */

/* Floats of an env's recurrent state, its core's parts one after another (LSTM: h, then c;
 * GRU: h); 0 without a core. */
int sk_policy_state_size(const sk_policy *policy);
/* The features of a sequence of T steps of B rows, obs (T, B, obs_size)
 * time-major, from the states state0 (B, state floats; NULL: zero) entering
 * the first step, with resets (T, B) or NULL (1: the row's episode starts at
 * that step, its state is zeroed): work->features (T * B, core_size). Keeps
 * what sk_policy_core_backward needs. */
void sk_policy_core_forward(const sk_policy *policy, const float *params, const float *obs,
                            const float *state0, const uint8_t *resets, int T, int B,
                            sk_policy_work *work);
/* Backpropagation through time within the sequence, from work->dfeatures;
 * accumulates into grads. */
void sk_policy_core_backward(const sk_policy *policy, const float *params, float *grads,
                             const float *obs, const uint8_t *resets, int T, int B,
                             sk_policy_work *work);
/* One acting step of B rows: state (B, state floats) advances in place from
 * obs (B, obs_size), and work->features holds the core's output. */
void sk_policy_core_step(const sk_policy *policy, const float *params, const float *obs,
                         float *state, int B, sk_policy_work *work);
/* The first value of a state row (state floats) outside what its core can hold, or -1. */
int sk_policy_state_invalid(const sk_policy *policy, const float *state_row);

/* ---- one policy per role (roles.c) ---- */

/* policy.per_role for env, after the kind has laid out one policy: copies the layout for
 * each of the env's agents. Refused for a single-agent env, more than SK_MAX_POLICY_ROLES
 * agents, or a recurrent core. */
sk_status sk_policy_configure_roles(sk_policy *policy, const sk_config *cfg, const sk_env_def *env);
/* The policy's roles: 1 unless policy.per_role. */
static inline int sk_policy_roles(const sk_policy *policy) {
    return policy->roles > 1 ? policy->roles : 1;
}
/* Floats of one role's parameters (all of them with one role). */
static inline size_t sk_policy_role_params(const sk_policy *policy) {
    return policy->roles > 1 ? policy->role_params : policy->num_params;
}
/* One role's view of a per-role policy (itself with one role): its parameters are the
 * caller's params + r * role_params. */
sk_policy sk_policy_one_role(const sk_policy *policy);

/* Scratch for acting by role: rows gathered by role and their results, for up to the
 * caller's rows. */
typedef struct sk_role_scratch {
    int32_t *rows;    /* (rows) indices of the rows gathered */
    float *obs;       /* (rows, obs_size) */
    uint8_t *masks;   /* (rows, mask_size), or NULL without masks */
    int32_t *actions; /* (rows, heads) */
    float *actions_f; /* (rows, dim) */
    float *logp;      /* (rows) */
} sk_role_scratch;

/* Acting with a per-role policy on B rows, row i of role i % roles (the caller's rows
 * start at an env's first agent): each role's rows gathered, run through that role's
 * actor (and critic when values is not NULL), sampled in role order from rng, and the
 * actions, logp and values written back to the rows. actions, actions_f, logp may be NULL
 * (not wanted). */
void sk_policy_act_roles(const sk_policy *policy, const float *params, const float *obs,
                         const uint8_t *masks, int B, uint64_t *rng, bool greedy, int32_t *actions,
                         float *actions_f, float *logp, float *values, sk_policy_work *work,
                         const sk_role_scratch *scratch);
/* Acting for `count` chosen rows of a batch, rows[k] the index of the k-th: their
 * observations (obs + rows[k] * obs_size) and masks gathered into scratch, run through the
 * actor (and the critic when values is not NULL) with params, sampled from rng in the order
 * of rows, and each row's results written at its index (actions + rows[k] * heads, ...;
 * actions, actions_f, logp may be NULL). skip_batch > 0: rows increase and the stream moves
 * as a sampling of all skip_batch rows would, the draws of the rows not chosen skipped (so
 * that the rows chosen draw what they drew when every row was sampled). rng NULL: no actor
 * and no sample, the critic's values alone. rows may be scratch->rows. */
void sk_policy_act_rows(const sk_policy *policy, const float *params, const float *obs,
                        const uint8_t *masks, const int32_t *rows, int count, int skip_batch,
                        uint64_t *rng, bool greedy, int32_t *actions, float *actions_f,
                        float *logp, float *values, sk_policy_work *work,
                        const sk_role_scratch *scratch);
/* The critic's values of `count` rows obs with a per-role policy, row k of role
 * rows[k] % roles (rows: their indices in the env batch), into values. */
void sk_policy_values_roles(const sk_policy *policy, const float *params, const float *obs,
                            const int32_t *rows, int count, float *values, sk_policy_work *work,
                            const sk_role_scratch *scratch);

/* ---- the action distribution, whichever the space: these dispatch ---- */

/* Samples actions for B rows from the actor's output `head` (B, logits_size):
 * discrete into actions_discrete (B, num_heads), continuous into
 * actions_continuous (B, dim); logp (B) of what was sampled. */
void sk_policy_sample(const sk_policy *policy, const float *params, const float *head,
                      const uint8_t *mask, int B, uint64_t *rng, bool greedy,
                      int32_t *actions_discrete, float *actions_continuous, float *logp);
/* The draws of rng that sk_policy_sample takes a row when not greedy (test_multiagent's
 * test_sample_draws holds it against the samplers). */
int sk_policy_sample_draws(const sk_policy *policy);
/* Log-probability and entropy (B each) of given actions. */
void sk_policy_evaluate(const sk_policy *policy, const float *params, const float *head,
                        const uint8_t *mask, const int32_t *actions_discrete,
                        const float *actions_continuous, int B, float *logp, float *entropy);
/* dhead (B, logits_size) from dlogp and dentropy (overwritten); accumulates
 * the gradient of distribution parameters (log-std) into grads. */
void sk_policy_dist_backward(const sk_policy *policy, const float *params, float *grads,
                             const float *head, const uint8_t *mask,
                             const int32_t *actions_discrete, const float *actions_continuous,
                             int B, const float *dlogp, const float *dentropy, float *dhead);

/* ---- diagonal Gaussian with state-independent log-std ---- */
void sk_gaussian_sample(int dim, const float *mean, const float *log_std, int B, uint64_t *rng,
                        bool greedy, float *actions, float *logp);
void sk_gaussian_evaluate(int dim, const float *mean, const float *log_std, const float *actions,
                          int B, float *logp, float *entropy);
/* actions (rows, space.dim) clipped in place to the space's [low, high] per dimension, as
 * np.clip(action, low, high) (CleanRL's ClipAction; SB3's rollout): a NaN stays NaN, for the
 * env's own check to name. */
void sk_space_clip(const sk_action_space *space, float *actions, int rows);
/* dmean (B, dim) overwritten; dlog_std (dim) accumulated. */
void sk_gaussian_backward(int dim, const float *mean, const float *log_std, const float *actions,
                          int B, const float *dlogp, const float *dentropy, float *dmean,
                          float *dlog_std);

/* ---- factored masked categorical over the logits ---- */

/* Samples each row's actions (B, num_heads) and their joint log-probability
 * (relevant heads only). mask is (B, mask_size) or NULL. greedy takes the most
 * likely allowed action. rng advances once per head per row. */
/* The first value of an observation row the policy cannot take (symbolic
 * observations: an index outside the layout's ranges; others: a non-finite
 * value), or -1. A restored checkpoint's observations are checked with it. */
int sk_policy_obs_invalid(const sk_policy *policy, const float *obs_row);

/* The encoder's input from a uint8 observation (sk_env_def.obs_dtype
 * SK_OBS_U8): out[k] = in[k] as a float, count values. Observations stay
 * bytes in the env batch and the rollout; the actor and the learner widen
 * them here, at the policy's door, and nowhere else. */
void sk_obs_widen(float *out, const uint8_t *in, size_t count);

/* sk_action_mask_unusable (skinner/env.h) is implemented in categorical.c */

void sk_categorical_sample(const sk_action_space *space, const float *logits, const uint8_t *mask,
                           int B, uint64_t *rng, bool greedy, int32_t *actions, float *logp);
/* Log-probability and entropy (B each) of given actions, summed over the
 * heads relevant to each row. */
void sk_categorical_evaluate(const sk_action_space *space, const float *logits,
                             const uint8_t *mask, const int32_t *actions, int B, float *logp,
                             float *entropy);
/* dlogits (B, logits_size) = dlogp * d logp/d logits + dentropy * d entropy/d logits
 * (overwritten, not accumulated). */
void sk_categorical_backward(const sk_action_space *space, const float *logits,
                             const uint8_t *mask, const int32_t *actions, int B,
                             const float *dlogp, const float *dentropy, float *dlogits);

#endif
