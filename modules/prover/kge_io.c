/* KGE models on disk: safetensors with the run's metadata (kge.h). */
#include "kge.h"

#include "skinner.h"
#include "skinner/safetensors.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

sk_status sk_kge_save(const sk_kge *kge, const char *path, const char *dataset, int epochs,
                      const sk_config *cfg) {
    return sk_kge_save_with(kge, path, dataset, epochs, cfg, NULL, 0);
}

sk_status sk_kge_save_with(const sk_kge *kge, const char *path, const char *dataset, int epochs,
                           const sk_config *cfg, const sk_st_tensor *extra, int num_extra) {
    size_t entities = (size_t)kge->num_entities * (size_t)kge->entity_width;
    enum { MAX_EXTRA = 8 };
    SK_ASSERT(num_extra <= MAX_EXTRA);
    sk_st_tensor tensors[2 + MAX_EXTRA] = {
        {.name = "kge.entities", .ndim = 2, .shape = {kge->num_entities, kge->entity_width},
         .data = kge->params, .dtype = SK_ST_F32},
        {.name = "kge.relations", .ndim = 2, .shape = {kge->num_relations, kge->relation_width},
         .data = kge->params + entities, .dtype = SK_ST_F32},
    };
    char dim[32], gamma[32], epoch_text[32];
    snprintf(dim, sizeof dim, "%d", kge->dim);
    snprintf(gamma, sizeof gamma, "%.9g", (double)kge->gamma);
    snprintf(epoch_text, sizeof epoch_text, "%d", epochs);
    char *config_text = sk_config_to_string(cfg);
    if (!config_text) return sk_fail(SK_ERR_NOMEM, "out of memory");
    sk_st_meta meta[] = {{"format", "skinner-kge-1"}, {"model", sk_kge_model_names[kge->model]},
                         {"dim", dim}, {"gamma", gamma}, {"dataset", dataset},
                         {"epochs", epoch_text}, {"config", config_text}};
    for (int k = 0; k < num_extra; k++) tensors[2 + k] = extra[k];
    /* sk_st_write is atomic: a temporary file, fsync'd and renamed */
    sk_status status =
        sk_st_write(path, tensors, 2 + num_extra, meta, (int)(sizeof meta / sizeof meta[0]));
    free(config_text);
    return status;
}

/* The model's numbers in its metadata, parsed to the end: "16abc" or "abc" is
 * a damaged or edited file, not 16 or 0. */
static sk_status read_meta(const sk_st_file *file, const char *path, int *model, int64_t *dim,
                           double *gamma) {
    const char *format = sk_st_meta_get(file, "format"), *name = sk_st_meta_get(file, "model");
    const char *dim_text = sk_st_meta_get(file, "dim"), *gamma_text = sk_st_meta_get(file, "gamma");
    if (!format || strcmp(format, "skinner-kge-1") != 0)
        return sk_fail(SK_ERR_CORRUPT,
                       "'%s' is not a skinner KGE model (metadata format = %s%s%s, expected "
                       "skinner-kge-1)",
                       path, format ? "\"" : "", format ? format : "(none)", format ? "\"" : "");
    *model = -1;
    for (int k = 0; name && sk_kge_model_names[k]; k++)
        if (strcmp(name, sk_kge_model_names[k]) == 0) *model = k;
    if (*model < 0)
        return sk_fail(SK_ERR_CORRUPT, "'%s': metadata model = \"%s\" is not a KGE model (%s)",
                       path, name ? name : "(none)", "expected transe, complex or rotate");
    if (!sk_parse_i64(dim_text, dim) || *dim < 1 || *dim > SK_KGE_MAX_DIM)
        return sk_fail(SK_ERR_CORRUPT,
                       "'%s': metadata dim = \"%s\" (expected an integer 1..%d)", path,
                       dim_text ? dim_text : "(none)", SK_KGE_MAX_DIM);
    if (!sk_parse_f64(gamma_text, gamma) || !(*gamma >= 0.0 && *gamma <= SK_KGE_MAX_GAMMA))
        return sk_fail(SK_ERR_CORRUPT, "'%s': metadata gamma = \"%s\" (expected a number 0..%g)",
                       path, gamma_text ? gamma_text : "(none)", SK_KGE_MAX_GAMMA);
    return SK_OK;
}

sk_status sk_kge_load(sk_kge *kge, const char *path, char *dataset, size_t size) {
    sk_st_file *file = NULL;
    sk_status status = sk_st_open(&file, path);
    if (status != SK_OK) return status;
    /* as for a policy: without a checksum any edit would load unchecked */
    int m = -1;
    int64_t d = 0;
    double g = 0.0;
    if ((status = sk_st_require_checksum(file, path)) != SK_OK ||
        (status = read_meta(file, path, &m, &d, &g)) != SK_OK) {
        sk_st_close(file);
        return status;
    }
    const char *model = sk_kge_model_names[m], *saved_dataset = sk_st_meta_get(file, "dataset");
    const sk_st_tensor *ent = sk_st_find(file, "kge.entities"), *rel = sk_st_find(file, "kge.relations");
    if (!ent || !rel || ent->ndim != 2 || rel->ndim != 2 || ent->dtype != SK_ST_F32 ||
        rel->dtype != SK_ST_F32 || ent->shape[0] < 1 || ent->shape[0] > SK_KGE_MAX_ROWS ||
        rel->shape[0] < 1 || rel->shape[0] > SK_KGE_MAX_ROWS) {
        sk_st_close(file);
        return sk_fail(SK_ERR_CORRUPT,
                       "'%s' is not a skinner KGE model (expected 2-d F32 tensors kge.entities "
                       "and kge.relations of 1..%d rows)",
                       path, SK_KGE_MAX_ROWS);
    }
    status = sk_kge_init(kge, (sk_kge_model)m, (int)ent->shape[0], (int)rel->shape[0], (int)d,
                         (float)g, 0);
    if (status == SK_OK && (ent->shape[1] != kge->entity_width || rel->shape[1] != kge->relation_width))
        status = sk_fail(SK_ERR_CORRUPT, "'%s': tensor widths do not match %s of dim %lld", path,
                         model, (long long)d);
    if (status == SK_OK) {
        size_t entities = (size_t)kge->num_entities * (size_t)kge->entity_width;
        memcpy(kge->params, ent->data, entities * sizeof(float));
        memcpy(kge->params + entities, rel->data,
               (size_t)kge->num_relations * (size_t)kge->relation_width * sizeof(float));
        for (size_t k = 0; k < kge->num_params; k++)
            if (!isfinite(kge->params[k])) {
                status = sk_fail(SK_ERR_CORRUPT, "'%s' holds a non-finite embedding value", path);
                break;
            }
    }
    if (dataset && size) snprintf(dataset, size, "%s", saved_dataset ? saved_dataset : "");
    sk_st_close(file);
    if (status != SK_OK) sk_kge_free(kge);
    return status;
}

