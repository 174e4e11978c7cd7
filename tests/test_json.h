/* JSON helpers for the C tests that read skinner's JSON output with cJSON. */
#ifndef SK_TEST_JSON_H
#define SK_TEST_JSON_H

#include "test_util.h"

#include <cjson/cJSON.h>

/* object[key] as a number; fails the test when it is missing or not a number. */
static inline double test_json_number(const cJSON *object, const char *key) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);
    if (!cJSON_IsNumber(item)) fail_msg("no number \"%s\" in the JSON", key);
    return item->valuedouble;
}

#endif
