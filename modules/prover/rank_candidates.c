/* A query's filtered corruptions, sampled or all, and the chunks of
 * consecutive queries' corruptions that the workers score together. */
#include "rank_internal.h"

#include "skinner.h"

#include <stdio.h>

#include <stdlib.h>
#include <string.h>

int sk_rank_corruptions(const sk_kb *kb, const int32_t query[3], int side, int32_t (*out)[3],
                        int cap) {
    SK_ASSERT(side == 0 || side == 1);
    SK_ASSERT(query[0] >= SK_KB_FIRST_PRED && query[0] < kb->num_preds);
    int32_t lo = kb->cand_start[query[0] * 2 + side], hi = kb->cand_start[query[0] * 2 + side + 1];
    int count = 0;
    for (int32_t k = lo; k < hi; k++) {
        int32_t c = kb->cand[k];
        if (c == query[1 + side]) continue;
        int32_t atom[3] = {query[0], query[1], query[2]};
        atom[1 + side] = c;
        if (sk_kb_is_known(kb, sk_kb_key(atom[0], atom[1], atom[2]))) continue;
        SK_ASSERT(count < cap);
        memcpy(out[count++], atom, sizeof atom);
    }
    return count;
}

int sk_rank_sample(int32_t (*atoms)[3], int count, int keep, uint64_t *rng) {
    if (keep <= 0 || keep >= count) return count;
    for (int k = 0; k < keep; k++) {
        int j = k + (int)sk_rng_below(rng, (uint32_t)(count - k));
        int32_t tmp[3];
        memcpy(tmp, atoms[k], sizeof tmp);
        memcpy(atoms[k], atoms[j], sizeof tmp);
        memcpy(atoms[j], tmp, sizeof tmp);
    }
    return keep;
}

uint64_t sk_rank_sample_stream(uint64_t seed, int query) {
    return sk_rng_seed(seed ^ 0x5a3d1e5ULL, (uint64_t)query);
}

void sk_rank_chunk_free(rank_chunk *c) {
    free(c->atoms);
    free(c->score);
    free(c->bound);
    free(c->start);
    free(c->num_head);
    free(c->num_tail);
}

sk_status sk_rank_chunk_alloc(rank_chunk *c, int cap) {
    memset(c, 0, sizeof *c);
    c->cap = cap;
    size_t n = (size_t)cap;
    c->atoms = malloc(n * sizeof *c->atoms);
    c->score = malloc(n * sizeof *c->score);
    c->bound = malloc(n * sizeof *c->bound);
    c->start = malloc(n * sizeof *c->start);
    c->num_head = malloc(n * sizeof *c->num_head);
    c->num_tail = malloc(n * sizeof *c->num_tail);
    if (!c->atoms || !c->score || !c->bound || !c->start || !c->num_head || !c->num_tail) {
        sk_rank_chunk_free(c);
        return sk_fail(SK_ERR_NOMEM, "out of memory for %d ranking candidates", cap);
    }
    return SK_OK;
}

int sk_rank_room_for(const sk_kb *kb, int32_t pred, int sides) {
    const int32_t *s = kb->cand_start + pred * 2;
    return 1 + (sides & SK_PROVER_CORRUPT_HEAD ? s[1] - s[0] : 0) +
           (sides & SK_PROVER_CORRUPT_TAIL ? s[2] - s[1] : 0);
}

void sk_rank_chunk_add(rank_chunk *c, const sk_kb *kb, const int32_t query[3], double score,
                       int sides, int negatives, uint64_t *rng) {
    int q = c->num_queries++, at = c->count;
    c->start[q] = at;
    int room = c->cap - at;
    c->num_head[q] = sides & SK_PROVER_CORRUPT_HEAD
                         ? sk_rank_sample(c->atoms + at,
                                          sk_rank_corruptions(kb, query, 0, c->atoms + at, room),
                                          negatives, rng)
                         : 0;
    int32_t (*tail)[3] = c->atoms + at + c->num_head[q];
    c->num_tail[q] = sides & SK_PROVER_CORRUPT_TAIL
                         ? sk_rank_sample(tail,
                                          sk_rank_corruptions(kb, query, 1, tail,
                                                              room - c->num_head[q]),
                                          negatives, rng)
                         : 0;
    c->count = at + c->num_head[q] + c->num_tail[q];
    for (int k = at; k < c->count; k++) c->bound[k] = score;
}
