/*
 * Morpho-v0: a PPO controller grows a host network while it trains (after
 * Esper). One RL step is one host training epoch.
 *
 * Host (one per env, fresh each episode; the linear host, env.host = linear,
 * described here; the convolutional one in host.c): Fashion-MNIST images pooled 4x4 to
 * 7x7 = 49 features (data.h), a linear stream x -> L0 -> [slot 0] -> L1 ->
 * [slot 1] -> L2 -> [slot 2] -> Lout -> softmax over 10 classes, hidden width
 * H = 32, no non-linearity of its own: 4,042 parameters. It is deliberately
 * weak: alone it plateaus at a linear classifier's ~80% test accuracy, while
 * three residual MLP seeds in its slots reach ~86% in the same 150 epochs
 * (measured in a PyTorch prototype of the same host; see docs/morpho.md).
 * An empty slot is the identity. Seeds and blends: blocks.h; the lifecycle,
 * actions and masks: lifecycle.h.
 *
 * One epoch (one step): the action is applied; then `batches` minibatches of
 * `batch_size` examples are drawn from the env's shuffled training split
 * (a fresh permutation per pass); host and seeds each take an SGD step with
 * momentum 0.9 on the cross-entropy, each clipped to its own gradient norm.
 *   - A TRAINING seed learns on the detached host activation h: the forward
 *     output is h exactly, and the seed gets the gradient of the loss with
 *     respect to the slot's output as if it were the output (straight-
 *     through). The host's gradients are exactly those without the seed.
 *   - A BLENDING, HOLDING or FOSSILIZED seed enters the forward through its
 *     blend at the slot's alpha; host and seed learn together.
 * Then one validation pass over a fixed shard (the first val_size examples
 * of the validation split) evaluates every subset of the blending seeds:
 * the main configuration, each seed off (its contribution c_i = acc(main) -
 * acc(without i)), each alone, all off, pairs, fossils only. At the end of an
 * episode the exact Shapley value of each blending seed (over all subsets, on
 * the same shard) and the test accuracy (whole test split) are logged.
 * Governor: a non-finite minibatch loss, or an epoch loss above
 * 3x the previous epoch's (and above 1), rolls host and seeds back to the
 * epoch's starting snapshot and costs GOVERNOR_PENALTY.
 *
 * Rewards: see the reward constants in morpho.c; every term is documented
 * there and in docs/morpho.md.
 *
 * Config (env.*): data (auto | fashion | synthetic | FOLDER; auto), epochs
 * (episode length, 150), batches (24), batch_size (512), lr (host, 0.02),
 * seed_lr (0.02), clip (5.0), val_size (1000), reward (shaped | sparse), and
 * the shaped reward's weights w_accuracy, w_attr, w_rent, w_fossil, w_prune and
 * w_terminal (defaults: the W_* constants in morpho.c).
 * host (linear | cnn): the convolutional host (host.c) on the 28x28 images,
 * with its own defaults epochs 60, batches 8, batch_size 256, lr and seed_lr
 * 0.01, and its keys channels (8), host_relu (false) and precision (fp32 |
 * bf16). fixed_seeds (0..3) and fixed_blueprint (the largest): seeds grown in
 * the first slots from the first epoch, the controller ignored.
 */
#ifndef SK_MORPHO_H
#define SK_MORPHO_H

#include "skinner/env.h"

#include "lifecycle.h"

#define MORPHO_GLOBAL_FEATURES 29
#define MORPHO_SLOT_FEATURES 32
#define MORPHO_OBS_SIZE (MORPHO_GLOBAL_FEATURES + MORPHO_SLOTS * MORPHO_SLOT_FEATURES)
#define MORPHO_NUM_LOG_FIELDS 8
/* episode_log fields after return and length */
enum { MORPHO_LOG_TEST_ACC = 2, MORPHO_LOG_EXTRA_PARAMS, MORPHO_LOG_FOSSILS, MORPHO_LOG_SHAPLEY };

extern const sk_env_def sk_env_morpho;

#endif
