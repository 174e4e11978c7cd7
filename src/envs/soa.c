#include "soa.h"

#include <string.h>

static const size_t g_type_sizes[] = {
    [SK_ARRAY_F32] = 4, [SK_ARRAY_F64] = 8, [SK_ARRAY_I32] = 4,
    [SK_ARRAY_I64] = 8, [SK_ARRAY_U8] = 1,  [SK_ARRAY_U64] = 8,
};

/* The field's pointer, read and written through memcpy: its declared type is
 * double *, int32_t *, ... and void * has the same representation. */
static void *get_field(void *state, const sk_soa_field *field) {
    void *ptr;
    memcpy(&ptr, (char *)state + field->offset, sizeof ptr);
    return ptr;
}

static void set_field(void *state, const sk_soa_field *field, void *ptr) {
    memcpy((char *)state + field->offset, &ptr, sizeof ptr);
}

void *sk_soa_create(size_t size, const sk_soa_field *fields, int num_fields, int num_envs,
                    const char *env_id) {
    void *state = sk_alloc(size);
    for (int f = 0; state && f < num_fields; f++) {
        void *array = sk_alloc((size_t)num_envs * g_type_sizes[fields[f].type]);
        if (!array) {
            sk_soa_destroy(state, fields, num_fields);
            state = NULL;
            break;
        }
        set_field(state, &fields[f], array);
    }
    if (!state) sk_fail(SK_ERR_NOMEM, "out of memory for %d %s envs", num_envs, env_id);
    return state;
}

void sk_soa_destroy(void *state, const sk_soa_field *fields, int num_fields) {
    if (!state) return;
    for (int f = 0; f < num_fields; f++) sk_free(get_field(state, &fields[f]));
    sk_free(state);
}

int sk_soa_arrays(void *state, const sk_soa_field *fields, int num_fields, sk_env_array *arrays) {
    SK_ASSERT(num_fields <= SK_MAX_ENV_ARRAYS);
    /* a plugin whose create returned SK_OK without a state (issue 53 ask 3) */
    if (!state) {
        sk_fail(SK_ERR_ENV, "sk_soa_arrays was given no state (NULL): the env's create must "
                "set *state or return an error");
        return -1;
    }
    for (int f = 0; f < num_fields; f++)
        arrays[f] = (sk_env_array){fields[f].name,      fields[f].type,      1,
                                   get_field(state, &fields[f]), fields[f].has_range, fields[f].lo,
                                   fields[f].hi};
    return num_fields;
}
