#include "sac_net.h"

#include "../nn/gemm_small.h"
#include "../nn/kernels.h"
#include "../nn/nn.h"

#include <string.h>

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

/* The arithmetic is an ISA kernel (src/nn/isa/squash.c): vectorised across rows. */
void sk_sac_squash_forward(const float *head, const float *noise, int rows, int dim,
                           const float *scale, const float *bias, float *actions, float *logp,
                           float *squashed, float *log_std_tanh) {
    sk_nn_kernels_used()->sac_squash_forward(head, noise, rows, dim, scale, bias, actions, logp,
                                             squashed, log_std_tanh);
}

void sk_sac_squash_backward(const float *head, const float *noise, int rows, int dim,
                            const float *scale, const float *squashed,
                            const float *log_std_tanh, const float *dactions,
                            const float *dlogp, float *dhead) {
    sk_nn_kernels_used()->sac_squash_backward(head, noise, rows, dim, scale, squashed,
                                              log_std_tanh, dactions, dlogp, dhead);
}
