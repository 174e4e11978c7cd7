#include "sac_net.h"

#include "../nn/gemm_small.h"
#include "../nn/nn.h"

#include <math.h>
#include <string.h>

#define HALF_LOG_2PI 0.91893853320467274178f /* 0.5 * ln(2 pi) */
#define LOG_STD_HALF_RANGE (0.5f * (SK_SAC_LOG_STD_MAX - SK_SAC_LOG_STD_MIN))

void sk_sac_net_forward(const sk_sac_net *net, const float *params, const float *wt,
                        const float *inp, int rows, float *const *acts, float *out) {
    for (int l = 0; l < net->num_linear; l++) {
        bool last = l == net->num_linear - 1;
        float *dst = last ? out : acts[l];
        sk_linear_forward_pre(dst, inp, params + net->weight[l],
                              wt && net->transposed[l] ? wt + net->wt[l] : NULL,
                              params + net->bias[l], rows, net->in[l], net->out[l]);
        if (!last) sk_relu_forward(dst, dst, (size_t)rows * (size_t)net->out[l]);
        inp = dst;
    }
}

void sk_sac_net_backward(const sk_sac_net *net, const float *params, float *grads,
                         const float *inp, float *const *acts, const float *dout, float *dinp,
                         int rows, float *scratch) {
    int widest = 0;
    for (int l = 0; l + 1 < net->num_linear; l++) widest = net->out[l] > widest ? net->out[l] : widest;
    /* each hidden layer's d(ReLU output), then in place its d(ReLU input): the two halves of
     * scratch in turn, one read while the next is written */
    float *halves[2] = {scratch, scratch + (size_t)rows * (size_t)widest};
    int half = 0;
    const float *dcur = dout;
    for (int l = net->num_linear - 1; l >= 0; l--) {
        const float *layer_in = l == 0 ? inp : acts[l - 1];
        size_t in_n = (size_t)rows * (size_t)net->in[l];
        float *dlayer_in = l > 0 ? halves[half] : dinp;
        if (l > 0) memset(dlayer_in, 0, in_n * sizeof(float));
        if (grads || dlayer_in)
            sk_linear_backward(dlayer_in, grads ? grads + net->weight[l] : NULL,
                               grads ? grads + net->bias[l] : NULL, dcur, layer_in,
                               params + net->weight[l], rows, net->in[l], net->out[l]);
        if (l == 0) break;
        /* ReLU's backward in place: one pass where a zeroed copy took two */
        const float *post = acts[l - 1];
        for (size_t i = 0; i < in_n; i++) dlayer_in[i] = post[i] > 0.0f ? dlayer_in[i] : 0.0f;
        dcur = dlayer_in;
        half ^= 1;
    }
}

void sk_sac_net_transpose(const sk_sac_net *net, const float *params, float *wt, int l) {
    if (net->transposed[l])
        sk_gemm_small_transpose(wt + net->wt[l], params + net->weight[l], net->out[l], net->in[l]);
}

double sk_sac_net_macs(const sk_sac_net *net) {
    double macs = 0.0;
    for (int l = 0; l < net->num_linear; l++) macs += (double)net->in[l] * (double)net->out[l];
    return macs;
}

double sk_sac_net_first_macs(const sk_sac_net *net) {
    return (double)net->in[0] * (double)net->out[0];
}

/* 1 - tanh(x)^2 = 4 e / (1 + e)^2 with e = exp(-2 |x|): exact to a few ulp where tanh(x) rounds
 * to +-1 within a few ulp of it. */
static inline float sech2(float x) {
    float e = expf(-2.0f * fabsf(x));
    float denominator = 1.0f + e;
    return 4.0f * e / (denominator * denominator);
}

void sk_sac_squash_forward(const float *head, const float *noise, int rows, int dim,
                           const float *scale, const float *bias, float *actions, float *logp,
                           float *squashed, float *log_std_tanh) {
    for (int row = 0; row < rows; row++) {
        const float *mean = head + (size_t)row * 2 * (size_t)dim, *raw = mean + dim;
        const float *eps = noise + (size_t)row * (size_t)dim;
        size_t at = (size_t)row * (size_t)dim;
        float sum = 0.0f;
        for (int d = 0; d < dim; d++) {
            float t = tanhf(raw[d]);
            float log_std = SK_SAC_LOG_STD_MIN + LOG_STD_HALF_RANGE * (t + 1.0f);
            float u = mean[d] + expf(log_std) * eps[d];
            float y = tanhf(u);
            actions[at + d] = y * scale[d] + bias[d];
            squashed[at + d] = y;
            log_std_tanh[at + d] = t;
            sum += -0.5f * eps[d] * eps[d] - log_std - HALF_LOG_2PI -
                   logf(scale[d] * sech2(u) + SK_SAC_LOG_EPS);
        }
        if (logp) logp[row] = sum;
    }
}

void sk_sac_squash_backward(const float *head, const float *noise, int rows, int dim,
                            const float *scale, const float *squashed,
                            const float *log_std_tanh, const float *dactions,
                            const float *dlogp, float *dhead) {
    for (int row = 0; row < rows; row++) {
        const float *mean = head + (size_t)row * 2 * (size_t)dim, *raw = mean + dim;
        const float *eps = noise + (size_t)row * (size_t)dim;
        float *dmean = dhead + (size_t)row * 2 * (size_t)dim, *draw = dmean + dim;
        size_t at = (size_t)row * (size_t)dim;
        for (int d = 0; d < dim; d++) {
            float log_std = SK_SAC_LOG_STD_MIN + LOG_STD_HALF_RANGE * (log_std_tanh[at + d] + 1.0f);
            float std = expf(log_std);
            float u = mean[d] + std * eps[d];
            float y = squashed[at + d], slope = sech2(u); /* d tanh(u) / du */
            /* d/du of -log(scale (1 - y^2) + 1e-6) = 2 y scale (1 - y^2) / (scale (1 - y^2) + 1e-6) */
            float dcorrection = 2.0f * y * scale[d] * slope / (scale[d] * slope + SK_SAC_LOG_EPS);
            float du = dlogp[row] * dcorrection;
            if (dactions) du += dactions[at + d] * scale[d] * slope;
            float dlog_std = du * std * eps[d] - dlogp[row]; /* u's std, and -log_std */
            dmean[d] += du;
            draw[d] += dlog_std * LOG_STD_HALF_RANGE * sech2(raw[d]);
        }
    }
}
