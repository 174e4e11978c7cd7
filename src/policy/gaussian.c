/* Diagonal Gaussian over continuous actions with a state-independent log-std
 * (CleanRL's ppo_continuous_action): the actor outputs the means, log_std is
 * a parameter vector. Samples are not clipped here; the env clips them to its
 * bounds, and the log-probability stays that of the unclipped sample. */
#include "../core/core.h"
#include "../core/rng.h"
#include "policy.h"

#include <math.h>

#define HALF_LOG_2PI 0.91893853320467274178f /* 0.5 * ln(2 pi) */

void sk_gaussian_sample(int dim, const float *mean, const float *log_std, int B, uint64_t *rng,
                        bool greedy, float *actions, float *logp) {
    for (int row = 0; row < B; row++) {
        const float *mu = mean + (size_t)row * dim;
        float *a = actions + (size_t)row * dim;
        float lp = 0.0f;
        for (int d = 0; d < dim; d++) {
            float noise = greedy ? 0.0f : (float)sk_rng_normal(rng);
            a[d] = mu[d] + expf(log_std[d]) * noise;
            lp += -0.5f * noise * noise - log_std[d] - HALF_LOG_2PI;
        }
        logp[row] = lp;
    }
}

void sk_gaussian_evaluate(int dim, const float *mean, const float *log_std, const float *actions,
                          int B, float *logp, float *entropy) {
    float row_entropy = 0.0f;
    for (int d = 0; d < dim; d++) row_entropy += 0.5f + HALF_LOG_2PI + log_std[d];
    for (int row = 0; row < B; row++) {
        const float *mu = mean + (size_t)row * dim;
        const float *a = actions + (size_t)row * dim;
        float lp = 0.0f;
        for (int d = 0; d < dim; d++) {
            float z = (a[d] - mu[d]) * expf(-log_std[d]);
            lp += -0.5f * z * z - log_std[d] - HALF_LOG_2PI;
        }
        logp[row] = lp;
        entropy[row] = row_entropy;
    }
}

void sk_gaussian_backward(int dim, const float *mean, const float *log_std, const float *actions,
                          int B, const float *dlogp, const float *dentropy, float *dmean,
                          float *dlog_std) {
    for (int row = 0; row < B; row++) {
        const float *mu = mean + (size_t)row * dim;
        const float *a = actions + (size_t)row * dim;
        float *dmu = dmean + (size_t)row * dim;
        for (int d = 0; d < dim; d++) {
            float inv_std = expf(-log_std[d]);
            float z = (a[d] - mu[d]) * inv_std;
            dmu[d] = dlogp[row] * z * inv_std;                         /* d logp / d mu */
            dlog_std[d] += dlogp[row] * (z * z - 1.0f) + dentropy[row]; /* accumulates */
        }
    }
}

void sk_space_clip(const sk_action_space *space, float *actions, int rows) {
    int dim = space->dim;
    for (int row = 0; row < rows; row++) {
        float *a = actions + (size_t)row * (size_t)dim;
        for (int d = 0; d < dim; d++)
            a[d] = a[d] < space->low[d] ? space->low[d] : a[d] > space->high[d] ? space->high[d] : a[d];
    }
}
