/* Typed, validated reads of config keys. Each read marks the key as used and
 * records the default when the key was absent, so the table ends up holding
 * the fully resolved config that a run folder stores. */
#ifndef SK_CONFIG_H
#define SK_CONFIG_H

#include "core.h"

/* The typed reads (sk_cfg_int, sk_cfg_double, sk_cfg_bool, sk_cfg_choice,
 * sk_cfg_string, sk_cfg_path) are public, in skinner/env.h; sk_cfg_check_unused,
 * sk_config_entry_at and sk_config_to_string in skinner/module.h. */

/* The first key of `section` (before its '.') that no read took, or NULL. */
const char *sk_cfg_first_unused(const sk_config *cfg, const char *section);

/* Fails naming the first key whose section is not one of `sections`. */
sk_status sk_cfg_check_sections(const sk_config *cfg, const char *const *sections);

/* Whether key was read with sk_cfg_path (a data location such as
 * env.dataset, which evaluation may point elsewhere). */
bool sk_config_read_as_path(const sk_config *cfg, const char *key);

/* What the typed read that took key accepts ("an integer in 1..8", "true or
 * false", "one of: a, b"), or NULL if no typed read took it. */
const char *sk_config_accepts(const sk_config *cfg, const char *key);
/* sk_config_to_string with a comment line above each key read by a typed
 * read saying what it accepts (still valid INI: comments read back as
 * nothing). */
char *sk_config_to_annotated_string(const sk_config *cfg);

/* Parses INI text (as written by sk_config_to_string) into cfg. */
sk_status sk_config_load_string(sk_config *cfg, const char *text);
/* The same for size bytes that need not end in NUL (a NUL inside is an
 * error); source names them in messages. */
sk_status sk_config_load_buffer(sk_config *cfg, const char *data, size_t size, const char *source);

#endif
