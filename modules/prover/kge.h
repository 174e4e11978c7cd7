/*
 * Knowledge-graph embeddings (KGE): TransE, ComplEx and RotatE scoring
 * (head, relation, tail) triples, trained by negative sampling with
 * DeepProofLog's loss, and ranked by the usual filtered protocols. They give
 * Prover-v0's hybrid ranking its KGE half (docs/prover.md).
 *
 * Every model scores a triple through a query vector: q from the known side
 * and the relation, then f(q, e) against the entity e on the corrupted side,
 * so that one q serves a positive and all its negatives:
 *
 *   model    tail side: q from (h, r)       head side: q from (t, r)         f(q, e)
 *   TransE   q = h + r                      q = t - r                        gamma - sum |q - e|
 *   RotatE   q = h o r, r_j = exp(i th_j)   q = t o conj(r)                  gamma - sum_j |q_j - e_j|
 *   ComplEx  q = h o r                      q = conj(r o conj(t))            sum_j Re(q_j conj(e_j))
 *
 * (o: element-wise complex product; for RotatE |h o r - t| = |h - t o conj(r)|
 * since |r_j| = 1, so both sides give the same score as the textbook form.)
 * Entity rows hold dim floats (TransE) or dim complex numbers as dim real
 * parts then dim imaginary parts (ComplEx, RotatE); relation rows hold dim
 * floats (TransE), dim complex numbers (ComplEx) or dim phases (RotatE).
 */
#ifndef SK_KGE_H
#define SK_KGE_H

#include "skinner.h"

#include <stddef.h>
#include <stdint.h>

typedef enum sk_kge_model { SK_KGE_TRANSE, SK_KGE_COMPLEX, SK_KGE_ROTATE } sk_kge_model;
extern const char *const sk_kge_model_names[]; /* "transe", "complex", "rotate"; NULL-terminated */

typedef enum sk_kge_side { SK_KGE_TAIL = 0, SK_KGE_HEAD = 1 } sk_kge_side;

typedef struct sk_kge {
    sk_kge_model model;
    int num_entities, num_relations;
    int dim;                            /* real (TransE) or complex (ComplEx, RotatE) dimensions */
    int entity_width, relation_width;   /* floats per row */
    float gamma;                        /* TransE's and RotatE's margin */
    float *params;                      /* the arena: entities (E x ew), then relations (R x rw) */
    size_t num_params;
} sk_kge;

/* Allocates a model with PyTorch-style uniform initialisation from seed:
 * entities and TransE/ComplEx relations uniform in [-b, b] with
 * b = (gamma + 2) / dim (RotatE's and the KGE reference code's range), RotatE
 * phases uniform in [-pi, pi). */
sk_status sk_kge_init(sk_kge *kge, sk_kge_model model, int num_entities, int num_relations, int dim,
                      float gamma, uint64_t seed);
void sk_kge_free(sk_kge *kge);

static inline float *sk_kge_entity(const sk_kge *kge, int e) {
    return kge->params + (size_t)e * (size_t)kge->entity_width;
}
static inline float *sk_kge_relation(const sk_kge *kge, int r) {
    return kge->params + (size_t)kge->num_entities * (size_t)kge->entity_width +
           (size_t)r * (size_t)kge->relation_width;
}

/* q (entity_width floats) of a triple seen from `side`: known is h (tail
 * side) or t (head side), rel the relation's row. */
void sk_kge_query(const sk_kge *kge, sk_kge_side side, const float *known, const float *rel,
                  float *q);
/* f(q, e). */
float sk_kge_score_query(const sk_kge *kge, const float *q, const float *e);
/* score(h, r, t) (equal up to rounding from either side). */
float sk_kge_score(const sk_kge *kge, const float *h, const float *rel, const float *t);
/* Accumulates df * df/dq into gq and df * df/de into ge (either may be NULL). */
void sk_kge_score_query_grad(const sk_kge *kge, const float *q, const float *e, float df, float *gq,
                             float *ge);
/* Backpropagates gq into the known entity's row (gknown) and the relation's (grel), accumulating. */
void sk_kge_query_grad(const sk_kge *kge, sk_kge_side side, const float *known, const float *rel,
                       const float *gq, float *gknown, float *grel);

/*
 * One batch of DeepProofLog's loss: B positives (h, r, t) (entity and
 * relation indices), each against the same N negative entities on `side`
 * (corrupted tails or heads):
 *     loss = 1/B sum_b [ -log sigmoid(s_b) - sum_k w_bk log sigmoid(-s_bk) ]
 * with w_bk = 1/N at temperature 0 (DeepProofLog's), and otherwise RotatE's
 * self-adversarial weights (Sun et al. 2019): w_bk = softmax_k(temperature *
 * s_bk), taken as constants (no gradient flows through them), so the
 * negatives the model scores highest weigh most. Returns the loss and
 * accumulates its gradient into grads (num_params floats, the arena's
 * layout). work holds sk_kge_batch_work_size floats.
 */
size_t sk_kge_batch_work_size(const sk_kge *kge, int negatives);
double sk_kge_batch_loss_grad(const sk_kge *kge, const int32_t (*triples)[3], int batch,
                              sk_kge_side side, const int32_t *negatives, int num_negatives,
                              double temperature, float *grads, float *work);

/* Rows of a model read back (entities or relations) at most. */
#define SK_KGE_MAX_ROWS (1 << 24)
/* kge.dim and kge.gamma at most, in a config and in a model's metadata
 * (sk_kge_score holds a query of 2 * SK_KGE_MAX_DIM floats on the stack). */
#define SK_KGE_MAX_DIM 4096
#define SK_KGE_MAX_GAMMA 1e6

/* Writes kge to path (atomically) with its dataset, epochs and config as
 * metadata (format "skinner-kge-1"). */
sk_status sk_kge_save(const sk_kge *kge, const char *path, const char *dataset, int epochs,
                      const sk_config *cfg);
/* The same with more tensors (a trainer's state) after the model's. */
struct sk_st_tensor;
sk_status sk_kge_save_with(const sk_kge *kge, const char *path, const char *dataset, int epochs,
                           const sk_config *cfg, const struct sk_st_tensor *extra, int num_extra);
/* Reads a model written by sk_kge_save into kge (allocated; sk_kge_free it),
 * validating every field; its dataset's path into dataset (size bytes, "" if
 * none). SK_ERR_CORRUPT names what is wrong. */
sk_status sk_kge_load(sk_kge *kge, const char *path, char *dataset, size_t size);

/* The same for `count` positives of a batch of 1 / inv_b (a worker's part). */
double sk_kge_part_loss_grad(const sk_kge *kge, const int32_t (*triples)[3], int count,
                             double inv_b, sk_kge_side side, const int32_t *negatives,
                             int num_negatives, double temperature, float *grads, float *work);

#endif
