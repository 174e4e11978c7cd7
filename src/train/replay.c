/* The replay buffer (replay.h): its arrays in one table, from which allocation, freeing,
 * the memory estimate, checkpoint writing and checked restoring follow. */
#include "replay.h"

#include "algo.h"
#include "skinner/env.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How wide an array's row is, from the spec. */
typedef enum width_kind { W_OBS_F32, W_OBS_U8, W_HEADS, W_DIM, W_ONE, W_MASK } width_kind;

typedef struct replay_array {
    const char *name; /* checkpoint tensor */
    sk_st_dtype dtype;
    size_t offset; /* of the pointer in sk_replay */
    width_kind width;
    double lo, hi; /* every element restored must lie in [lo, hi] (actions: per head) */
} replay_array;

#define AT(member) offsetof(sk_replay, member)
static const replay_array g_arrays[] = {
    {"replay.obs", SK_ST_F32, AT(obs), W_OBS_F32, -INFINITY, INFINITY},
    {"replay.next_obs", SK_ST_F32, AT(next_obs), W_OBS_F32, -INFINITY, INFINITY},
    {"replay.obs_u8", SK_ST_U8, AT(obs_u8), W_OBS_U8, 0, 255},
    {"replay.next_obs_u8", SK_ST_U8, AT(next_obs_u8), W_OBS_U8, 0, 255},
    {"replay.actions", SK_ST_I32, AT(actions), W_HEADS, 0, INT32_MAX}, /* each below its head's size */
    {"replay.actions_f", SK_ST_F32, AT(actions_f), W_DIM, -INFINITY, INFINITY},
    {"replay.rewards", SK_ST_F32, AT(rewards), W_ONE, -INFINITY, INFINITY},
    {"replay.terminated", SK_ST_U8, AT(terminated), W_ONE, 0, 1},
    {"replay.truncated", SK_ST_U8, AT(truncated), W_ONE, 0, 1},
    {"replay.next_masks", SK_ST_U8, AT(next_masks), W_MASK, 0, 1},
};
enum { NUM_ARRAYS = sizeof g_arrays / sizeof g_arrays[0] };
/* replay.counters: capacity, streams, pos, count */
enum { R_CAPACITY, R_STREAMS, R_POS, R_COUNT, NUM_COUNTERS };

static size_t width_of(const sk_replay_spec *spec, width_kind kind) {
    switch (kind) {
    case W_OBS_F32: return spec->obs_u8 ? 0 : (size_t)spec->obs_size;
    case W_OBS_U8: return spec->obs_u8 ? (size_t)spec->obs_size : 0;
    case W_HEADS: return (size_t)spec->num_heads;
    case W_DIM: return (size_t)spec->action_dim;
    case W_ONE: return 1;
    case W_MASK: return (size_t)spec->mask_size;
    }
    return 0;
}

static void **slot_of(sk_replay *rb, const replay_array *array) {
    return (void **)((char *)rb + array->offset);
}

size_t sk_replay_bytes(const sk_replay_spec *spec) {
    size_t row = 0;
    for (int a = 0; a < NUM_ARRAYS; a++)
        row += width_of(spec, g_arrays[a].width) * sk_st_dtype_size(g_arrays[a].dtype);
    return (size_t)spec->capacity * row;
}

size_t sk_machine_available_bytes(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        unsigned long long kibibytes = 0; /* /proc/meminfo counts in 1024-byte units */
        bool found = false;
        while (!found && fgets(line, sizeof line, f))
            found = sscanf(line, "MemAvailable: %llu", &kibibytes) == 1;
        fclose(f);
        if (found) return (size_t)kibibytes * 1024;
    }
    long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0;
}

sk_status sk_replay_check_fits(const sk_replay_spec *spec, size_t other_bytes, size_t available) {
    size_t bytes = sk_replay_bytes(spec);
    if (available == 0 || bytes + other_bytes <= available) return SK_OK;
    size_t row = bytes / (size_t)spec->capacity;
    return sk_fail(SK_ERR_CONFIG,
                   "replay.size = %lld transitions of %zu bytes each need %.1f MB (%.1f MB with "
                   "the rest of the run), but this machine has %.1f MB available (MemAvailable): "
                   "set replay.size to at most %lld",
                   (long long)spec->capacity, row, (double)bytes / 1e6,
                   (double)(bytes + other_bytes) / 1e6, (double)available / 1e6,
                   (long long)(available > other_bytes ? (available - other_bytes) / row : 0));
}

sk_status sk_replay_create(sk_replay *rb, const sk_replay_spec *spec) {
    memset(rb, 0, sizeof *rb);
    if (spec->streams < 1 || spec->capacity < spec->streams || spec->capacity % spec->streams != 0)
        return sk_fail(SK_ERR_CONFIG,
                       "replay.size = %lld must be a positive multiple of the %d env rows that "
                       "add a transition each step (env.num_envs)",
                       (long long)spec->capacity, spec->streams);
    if (spec->obs_size < 1 || spec->num_heads < 0 || spec->action_dim < 0 || spec->mask_size < 0)
        return sk_fail(SK_ERR_INVALID, "replay buffer: bad sizes");
    sk_status fits = sk_replay_check_fits(spec, 0, sk_machine_available_bytes());
    if (fits != SK_OK) return fits;
    rb->spec = *spec;
    for (int a = 0; a < NUM_ARRAYS; a++) {
        size_t count = (size_t)spec->capacity * width_of(spec, g_arrays[a].width);
        if (count == 0) continue;
        void *data = calloc(count, sk_st_dtype_size(g_arrays[a].dtype));
        if (!data) {
            sk_replay_free(rb);
            return sk_fail(SK_ERR_NOMEM, "out of memory: the replay buffer's %s (%zu bytes)",
                           g_arrays[a].name, count * sk_st_dtype_size(g_arrays[a].dtype));
        }
        *slot_of(rb, &g_arrays[a]) = data;
    }
    return SK_OK;
}

void sk_replay_free(sk_replay *rb) {
    for (int a = 0; a < NUM_ARRAYS; a++) {
        free(*slot_of(rb, &g_arrays[a]));
        *slot_of(rb, &g_arrays[a]) = NULL;
    }
}

void sk_replay_advance(sk_replay *rb, int steps) {
    int64_t added = (int64_t)steps * rb->spec.streams;
    rb->pos = (rb->pos + added) % rb->spec.capacity;
    rb->count = SK_MIN(rb->count + added, rb->spec.capacity);
}

int64_t sk_replay_sampleable(const sk_replay *rb, int n_step) {
    int64_t later = (int64_t)(n_step - 1) * rb->spec.streams;
    return rb->count > later ? rb->count - later : 0;
}

void sk_replay_sample(const sk_replay *rb, uint64_t *rng, int batch, int n_step, int64_t *slots) {
    int64_t range = sk_replay_sampleable(rb, n_step), cap = rb->spec.capacity;
    SK_ASSERT(range > 0 && range <= UINT32_MAX);
    int64_t oldest = (rb->pos - rb->count + cap) % cap;
    for (int b = 0; b < batch; b++)
        slots[b] = (oldest + (int64_t)sk_rng_below(rng, (uint32_t)range)) % cap;
}

float sk_replay_nstep(const sk_replay *rb, int64_t slot, int n_step, float gamma, int64_t *last,
                      float *discount) {
    float ret = 0.0f, scale = 1.0f;
    for (int k = 0; k < n_step; k++) {
        int64_t at = sk_replay_ahead(rb, slot, k);
        ret += scale * rb->rewards[at];
        scale *= gamma;
        *last = at;
        if (rb->terminated[at]) {
            *discount = 0.0f;
            return ret;
        }
        if (rb->truncated[at]) break; /* bootstrap from the final observation */
    }
    *discount = scale;
    return ret;
}

int sk_replay_save(const sk_replay *rb, sk_st_tensor *out, int max) {
    static _Thread_local int64_t counters[NUM_COUNTERS];
    counters[R_CAPACITY] = rb->spec.capacity;
    counters[R_STREAMS] = rb->spec.streams;
    counters[R_POS] = rb->pos;
    counters[R_COUNT] = rb->count;
    int n = 0;
    SK_ASSERT(max >= NUM_ARRAYS + 1);
    out[n++] = (sk_st_tensor){.name = "replay.counters", .ndim = 1, .shape = {NUM_COUNTERS},
                              .data = counters, .dtype = SK_ST_I64};
    /* before the first wrap the rows held are slots 0..count - 1; after it, all of them */
    for (int a = 0; a < NUM_ARRAYS; a++) {
        size_t width = width_of(&rb->spec, g_arrays[a].width);
        if (width == 0 || rb->count == 0) continue;
        out[n++] = (sk_st_tensor){.name = g_arrays[a].name, .ndim = 2,
                                  .shape = {rb->count, (int64_t)width},
                                  .data = *slot_of((sk_replay *)rb, &g_arrays[a]),
                                  .dtype = g_arrays[a].dtype};
    }
    return n;
}

bool sk_replay_in_checkpoint(const sk_st_file *file) {
    return sk_st_find(file, "replay.counters") != NULL;
}

sk_status sk_replay_restore(sk_replay *rb, const sk_st_file *file, const char *path,
                            const int *head_sizes) {
    int64_t c[NUM_COUNTERS];
    sk_status status = sk_checkpoint_restore(file, path, "replay.counters", SK_ST_I64, c,
                                             NUM_COUNTERS, false, 0, 0);
    if (status != SK_OK) return status;
    const sk_replay_spec *spec = &rb->spec;
    if (c[R_CAPACITY] != spec->capacity || c[R_STREAMS] != spec->streams)
        return sk_fail(SK_ERR_CORRUPT,
                       "checkpoint '%s': replay.counters holds a buffer of %lld transitions "
                       "added %lld a step; this run's is replay.size = %lld with %d env rows "
                       "(resume with the same replay.size and env.num_envs)",
                       path, (long long)c[R_CAPACITY], (long long)c[R_STREAMS],
                       (long long)spec->capacity, spec->streams);
    bool count_ok = c[R_COUNT] >= 0 && c[R_COUNT] <= spec->capacity &&
                    c[R_COUNT] % spec->streams == 0;
    bool pos_ok = c[R_POS] >= 0 && c[R_POS] < spec->capacity && c[R_POS] % spec->streams == 0 &&
                  (c[R_COUNT] == spec->capacity || c[R_POS] == c[R_COUNT] % spec->capacity);
    if (!count_ok || !pos_ok)
        return sk_fail(SK_ERR_CORRUPT,
                       "checkpoint '%s': replay.counters' %s = %lld is out of range (count in "
                       "[0, %lld], position in [0, %lld) and equal to the count until the "
                       "buffer is full, both multiples of %d)",
                       path, count_ok ? "position" : "count",
                       (long long)(count_ok ? c[R_POS] : c[R_COUNT]), (long long)spec->capacity,
                       (long long)spec->capacity, spec->streams);
    for (int a = 0; a < NUM_ARRAYS && c[R_COUNT] > 0; a++) {
        const replay_array *array = &g_arrays[a];
        size_t width = width_of(spec, array->width);
        if (width == 0) continue;
        int64_t elements = c[R_COUNT] * (int64_t)width;
        status = sk_checkpoint_restore(file, path, array->name, array->dtype,
                                       *slot_of(rb, array), elements, true, array->lo, array->hi);
        if (status != SK_OK) return status;
    }
    for (int64_t k = 0; k < c[R_COUNT] * spec->num_heads; k++) {
        int head = (int)(k % spec->num_heads);
        if (rb->actions[k] >= head_sizes[head])
            return sk_fail(SK_ERR_CORRUPT,
                           "checkpoint '%s': replay.actions[%lld] = %d is outside head %d's "
                           "actions [0, %d)",
                           path, (long long)k, rb->actions[k], head, head_sizes[head]);
    }
    rb->pos = c[R_POS];
    rb->count = c[R_COUNT];
    return SK_OK;
}
