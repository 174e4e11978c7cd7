/* Fixtures written by the PyTorch references (tests/reference/, tests/fixtures/make_*.py):
 * one record a line, NAME COUNT v1 ... vCOUNT, '#' lines are comments. Records keep their
 * file order (a name may repeat, e.g. one block per case). */
#ifndef SK_TEST_TORCH_FIXTURE_H
#define SK_TEST_TORCH_FIXTURE_H

#include "test_util.h"

#include "policy/policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RECORDS 512

typedef struct record {
    char name[64];
    int count;
    double *values;
} record;

typedef struct fixture {
    record records[MAX_RECORDS];
    int num_records;
} fixture;

static inline void load_fixture(fixture *f, const char *path) {
    FILE *file = fopen(path, "r");
    if (!file) fail_msg("cannot open fixture %s", path);
    f->num_records = 0;
    char name[64];
    int count;
    int c;
    while ((c = fgetc(file)) != EOF) {
        if (c == '#') {
            while ((c = fgetc(file)) != EOF && c != '\n') {}
            continue;
        }
        if (c == '\n') continue;
        ungetc(c, file);
        if (fscanf(file, "%63s %d", name, &count) != 2) fail_msg("bad record in %s", path);
        assert_true(f->num_records < MAX_RECORDS);
        record *r = &f->records[f->num_records++];
        snprintf(r->name, sizeof r->name, "%s", name);
        r->count = count;
        r->values = calloc((size_t)count + 1, sizeof(double));
        for (int i = 0; i < count; i++)
            if (fscanf(file, "%lf", &r->values[i]) != 1) fail_msg("short record %s in %s", name, path);
    }
    fclose(file);
}

static inline const record *get(const fixture *f, const char *name) {
    for (int i = 0; i < f->num_records; i++)
        if (strcmp(f->records[i].name, name) == 0) return &f->records[i];
    fail_msg("fixture has no record '%s'", name);
    return NULL;
}

static inline double scalar(const fixture *f, const char *name) { return get(f, name)->values[0]; }

static inline void free_fixture(fixture *f) {
    for (int i = 0; i < f->num_records; i++) free(f->records[i].values);
}

/* Compares a flat parameter array's tensors (those whose name starts with `only`, or
 * all) with records PREFIX.<tensor>; prints the first mismatches and the worst error. */
static inline int fixture_compare_params(const fixture *f, const sk_policy *policy,
                                         const float *values, const char *prefix,
                                         const char *only, double tol, double floor_abs) {
    int failures = 0;
    double worst = 0.0;
    for (int t = 0; t < policy->num_tensors; t++) {
        if (only && strncmp(policy->tensors[t].name, only, strlen(only)) != 0) continue;
        char name[96];
        snprintf(name, sizeof name, "%s.%s", prefix, policy->tensors[t].name);
        const record *r = get(f, name);
        size_t n = (size_t)policy->tensors[t].rows * (size_t)policy->tensors[t].cols;
        assert_int_equal(r->count, (int)n);
        for (size_t i = 0; i < n; i++) {
            double err = test_rel_err(values[policy->tensors[t].offset + i], r->values[i], floor_abs);
            if (err > worst) worst = err;
            if (err > tol && failures++ < 5)
                print_error("%s[%zu]: skinner %.9g, torch %.9g\n", name, i,
                            (double)values[policy->tensors[t].offset + i], r->values[i]);
        }
    }
    print_message("%s: worst relative error %.2e\n", prefix, worst);
    return failures;
}

#endif
