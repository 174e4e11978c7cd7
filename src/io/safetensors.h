/*
 * safetensors files: the public reader and writer are skinner/safetensors.h;
 * what only skinner's tests and fuzzers use is here.
 */
#ifndef SK_SAFETENSORS_H
#define SK_SAFETENSORS_H

#include "skinner.h"
#include "skinner/safetensors.h"

/* Rewrites the checksums of a whole file held in memory to match its bytes,
 * as a deliberate tamperer would: for tests and fuzzing, which must reach the
 * validation behind the checksums. False if the file carries none. */
bool sk_st_reseal(char *bytes, size_t size);

#endif
