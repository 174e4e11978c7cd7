/*
 * A saved policy leaving skinner: a dependency-free C header (c_header.c) and an ONNX model
 * (onnx.c), both of the acting path of an MLP-kind policy as actor.c runs it: the frozen
 * observation normaliser, the encoder (a CNN over uint8 or float images, or none), the
 * recurrent core (LSTM or GRU, its state an input and an output), the actor's and the
 * critic's nets and the greedy action (per head, within the mask; or the Gaussian's mean).
 * docs/export.md says what each file holds and its limits.
 */
#ifndef SK_EXPORT_H
#define SK_EXPORT_H

#include "../train/eval.h"

/* SK_OK when lp can be exported, else SK_ERR_INVALID naming what cannot (the candidates
 * kind: its observation is a symbolic layout of indices, not numbers). */
sk_status sk_export_supported(const sk_loaded_policy *lp);

/* Writes lp as one C99 header (static weight arrays, policy_forward and policy_act, a
 * policy_state for a recurrent core) to path; source is a line for its comment (the
 * checkpoint's path) or NULL. SK_ERR_IO naming the path on a write failure. */
sk_status sk_export_c_header(const sk_loaded_policy *lp, const char *path, const char *source);

/* Writes lp as an ONNX model (opset 17, IR 8) to path. Inputs: "obs" (batch, obs) float32
 * or uint8, with a core "state_in" (batch, state), with masks "mask" (1 or
 * batch, mask_size) uint8 (one row of ones allows every action). Outputs: per discrete head
 * "logits_H" (batch, n), or "mean" (batch, dim) and "log_std" (1, dim); "value"
 * (batch, 1); "action" (batch, heads) int64 or (batch, dim) float32; with a core
 * "state_out". */
sk_status sk_export_onnx(const sk_loaded_policy *lp, const char *path);

#endif
