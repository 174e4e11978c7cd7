/*
 * Prover-v0: proving a query in a knowledge base by SLD resolution, one
 * resolution step per action (after DeepProofLog, arXiv:2511.08581).
 *
 * State: a list of up to A goal atoms [pred, arg0, arg1]. At every state the
 * env derives the next states (the successors); the observation shows the
 * state and them, and the action picks one. An episode proves a query, which
 * is a training positive or a corruption of one (a negative).
 *
 * Successors of a state g1, g2, ..., gn (only the first goal is resolved):
 *   - each train fact unifying with g1 (the query itself excluded when it is a
 *     positive, as if it were not in the knowledge base): theta applied to
 *     g2..gn;
 *   - each rule whose head unifies with g1, its variables renamed to fresh
 *     ones first: body theta followed by g2..gn theta;
 *   then, in each, ground atoms that are train facts are removed (the excluded
 *   query stays), variables are renumbered in order of first appearance, and
 *   a successor is dropped if it holds more than A atoms, if it was already
 *   visited in this episode or already derived from this state. If more than S
 *   remain the S shortest are kept (ties: derivation order, facts before rules
 *   in file order). If one successor is empty, the goals are proved and the
 *   only successor is the terminal state True; if none remain, the only one is
 *   False. Choosing True ends the episode proved, False ends it failed.
 *   The proof of a query therefore has depth d when d actions lead from the
 *   query to True: jordan's region via r1 and a neighbour whose region is a
 *   fact takes 2 (the rule, then the neighbour fact, after which the ground
 *   region atom is a fact and drops out).
 *   An episode is truncated after max_depth actions without ending.
 *   With these rules the shortest proof of every countries_s3 query with a
 *   recorded depth (train, valid, test) is exactly that depth (test_prover).
 *
 * Where this differs from DeepProofLog's env (env.py, python_unification.py),
 * by the wording or for a bounded vocabulary: a state of exactly A
 * atoms is kept (DeepProofLog drops >= A); the kept S successors stay in
 * derivation order (DeepProofLog sorts them by length when it cuts); states
 * are compared for the visited test with variables renumbered (DeepProofLog
 * compares raw, ever-fresh variable names, so it prunes only ground repeats);
 * duplicate successors are merged; a state reached at max_depth that is True
 * or False ends as terminated, not truncated.
 *
 * Indices: predicates 0 = padding, 1 True, 2 False, 3 End, then the dataset's;
 * arguments 0 = padding, 1..C constants, C+1..C+2A variables (a state of A
 * binary atoms holds at most 2A distinct variables). sk_prover_vocab gives
 * the bounds for embedding tables.
 *
 * Observation (float32 indices): the state [A,3], then the successors
 * [S,A,3], padding 0. Mask [S]: 1 for a real successor. An action outside the
 * mask is mapped into range modulo the number of successors (a policy that
 * honours the mask never sends one; `bench env` does).
 *
 * Queries: positives are drawn uniformly from the split's queries (its
 * *_depths.txt when the dataset has one, else its facts). Every env starts
 * with a positive, then negative_ratio negatives, and repeats. A negative
 * corrupts the head or the tail (even odds; only the one env.corrupt names,
 * if it names one) of a drawn positive with a
 * constant of a type seen at that position (all constants when the dataset
 * has no types), redrawn while it is a known fact of any split (after 32
 * tries the positive is used instead).
 *
 * Config (env.*):
 *   dataset          folder in DeepProofLog's format; "" (default): the
 *                    synthetic family forest of synth.c
 *   split            train | valid | test: where positives come from (train)
 *   provable_only    skip queries *_depths.txt records as unprovable (-1) (true)
 *   negative_ratio   negatives per positive (1)
 *   corrupt          both | head | tail: the side a negative corrupts, in
 *                    training and in ranking (rank.h) (both). DeepProofLog
 *                    corrupts only the tail on Countries (the region of a
 *                    country, the benchmark's protocol) and both on family
 *   reward_type      0..4, see below (4)
 *   max_depth        actions before truncation (20)
 *   end_action       offer End, which ends the proof as failed, in the last
 *                    slot beside non-terminal successors (false)
 *   max_atoms        A, atoms per state, 1..16 (10)
 *   max_successors   S, successors per state, 1..1024 (20; 2 or more with
 *                    end_action). DeepProofLog pads WN18RR's states to 262
 * The observation is 3A(1 + S) floats and the action one head of S choices
 * (630 and 20 at the defaults): the env's configure function gives the
 * table these sizes (sk_env_configure).
 */
#ifndef SK_PROVER_H
#define SK_PROVER_H

#include "skinner.h"

#include "kb.h"

#define SK_PROVER_DEFAULT_ATOMS 10       /* A */
#define SK_PROVER_DEFAULT_SUCCESSORS 20  /* S */
#define SK_PROVER_ATOMS_CAP 16           /* the largest A (working arrays are on the stack) */
#define SK_PROVER_SUCCESSORS_CAP 1024    /* the largest S */
/* A state of A binary atoms holds at most 2A distinct variables. */
#define SK_PROVER_VARS(atoms) (2 * (atoms))
/* At the defaults: one state flattened, and the observation. */
#define SK_PROVER_DEFAULT_ATOM_INTS (SK_PROVER_DEFAULT_ATOMS * 3)
#define SK_PROVER_DEFAULT_OBS_SIZE (SK_PROVER_DEFAULT_ATOM_INTS * (1 + SK_PROVER_DEFAULT_SUCCESSORS))
#define SK_PROVER_NUM_LOG_FIELDS 4 /* episode_return, episode_length, proved, positive */
#define SK_PROVER_LOG_PROVED 2     /* the episode_log field: 1 if the episode ended proved */

/*
 * Rewards by env.reward_type, DeepProofLog's five (get_done_reward in its
 * env, arXiv:2511.08581): on the step that chooses True (proved) or False/End
 * (failed); 0 on every other step, truncation included.
 *   type  proved+  failed+  proved-  failed-
 *   0      +1       0        0        0
 *   1      +1       0       -1        0
 *   2      +1       0        0       +1
 *   3      +1      -0.5     -1.5     +1
 *   4      +1      -1       -1       +1     (default)
 *
 * Potential-based shaping (env.shaping = c > 0, Ng et al. 1999, which
 * DeepProofLog's analysis of its deep-proof failures recommends): every step
 * also pays gamma Phi(s') - Phi(s) with Phi(s) = -c x (goals left in s), and
 * Phi = 0 at an ended episode, gamma env.shaping_gamma (set it to ppo.gamma).
 * Over an episode the terms telescope, so the optimal policy is unchanged;
 * the logged return (episode_log) stays the unshaped one.
 */
/* env.corrupt: which arguments negatives replace, as a bit set. */
enum { SK_PROVER_CORRUPT_HEAD = 1, SK_PROVER_CORRUPT_TAIL = 2, SK_PROVER_CORRUPT_BOTH = 3 };

/* "head", "tail" or "both" to a bit set: false for any other name. */
bool sk_prover_corrupt_parse(const char *name, int *sides);
const char *sk_prover_corrupt_name(int sides);

typedef struct sk_prover_state {
    int num_envs;
    sk_kb *kb; /* owned */
    int atoms, successors; /* A and S */
    int atom_ints, obs_size; /* 3A, 3A(1 + S) */
    int max_depth, negative_ratio, reward_type;
    double shaping, shaping_gamma; /* env.shaping (0: none), env.shaping_gamma */
    int corrupt_sides; /* SK_PROVER_CORRUPT_* */
    bool end_action;
    const int32_t (*pool)[3]; /* (pool_count) positive queries of the split */
    int32_t (*pool_storage)[3];
    int pool_count;
    int32_t first_var; /* kb->num_consts + 1 */
    int visited_cap;   /* max_depth + 1 */

    /* Per env, struct of arrays. */
    int32_t *goals;         /* (num_envs, A, 3) */
    int32_t *num_goals;     /* (num_envs) */
    int32_t *succ;          /* (num_envs, S, A, 3) successors of the current state */
    int32_t *succ_len;      /* (num_envs, S) atoms in each */
    uint64_t *succ_key;     /* (num_envs, S) their visited keys */
    int32_t *num_succ;      /* (num_envs) >= 1 */
    uint64_t *visited;      /* (num_envs, visited_cap) keys of the states of this episode */
    int32_t *num_visited;   /* (num_envs) */
    int32_t *depth;         /* (num_envs) actions taken in this episode */
    int32_t *query;         /* (num_envs, 3) */
    uint8_t *positive;      /* (num_envs) */
    float *episode_return;  /* (num_envs) */
    int64_t *episodes;      /* (num_envs) started since reset: positive every ratio+1 */
    uint64_t *rng;          /* (num_envs) */
} sk_prover_state;

extern const sk_env_def sk_env_prover;

/* Like sk_env_prover.create over a kb the caller built (finalized); takes
 * ownership of kb, also on failure. Reads the same env.* keys except
 * env.dataset. */
sk_status sk_prover_create_with_kb(void **out, int num_envs, const sk_config *cfg, sk_kb *kb);

/* Starts env i's episode on query (positive: it is a true fact, excluded from
 * the facts while it is proved) and writes its observation and mask. For
 * evaluation, and for tests. */
void sk_prover_set_query(void *state, const sk_env_io *io, int i, const int32_t query[3],
                         bool positive);

/* Predicate ids are < *num_preds, argument ids < *num_args. */
void sk_prover_vocab(const void *state, int *num_preds, int *num_args);

/* ------------------------------------------------------ the transition */

/* A state's visited key: the sum of its atoms' hashes, so states equal as sets
 * of atoms (variables numbered by first appearance) share a key. */
uint64_t sk_prover_state_key(const int32_t *atoms, int num_atoms);

typedef struct sk_prover_limits {
    int max_atoms;      /* successors with more atoms are dropped, <= SK_PROVER_ATOMS_CAP */
    int max_successors; /* at most this many are kept, <= SK_PROVER_SUCCESSORS_CAP */
    int stride;         /* atoms per successor slot of out_atoms, >= max_atoms */
    bool plain;         /* tests: every fact of the first goal one by one, without the
                         * join that skips those that cannot matter (resolve.c) */
} sk_prover_limits;

/*
 * The successors of goals[0..num_goals) (num_goals >= 1, variables numbered
 * from first_var in order of first appearance), as described above. excluded
 * is the packed key of the fact to ignore (0 for none); visited[0..num_visited)
 * the keys of the states already visited. Writes each successor's atoms into
 * out_atoms + k * 3 * limits.stride (what follows its out_len[k] atoms is
 * left as it was) and its key into out_key[k]; returns how many (>= 1; a
 * terminal successor is one atom [True|False, 0, 0] with key 0).
 * Reentrant: no allocation, no shared writes.
 */
int sk_prover_derive(const sk_kb *kb, int32_t first_var, const int32_t *goals, int num_goals,
                     uint64_t excluded, const uint64_t *visited, int num_visited,
                     sk_prover_limits limits, int32_t *out_atoms, int32_t *out_len,
                     uint64_t *out_key);

static inline bool sk_prover_is_terminal(const int32_t *atoms) {
    return atoms[0] > SK_KB_PAD && atoms[0] < SK_KB_FIRST_PRED;
}

#endif
