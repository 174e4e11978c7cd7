/* The recurrent cells' elementwise steps at one ISA level (included by level_*.c after
 * layers.c, whose tanh and sigmoid they call; src/nn/rnn.c runs the sequence and the GEMMs).
 * Compiled at x86-64-v2 with the rest of rnn.c, the portable build trained the LSTM preset 9%
 * slower than a -march=native one (user time, same machine; perf: the cells' loops).
 * The buffers of a call never overlap (rnn.c passes distinct parts of its work), and saying so
 * (restrict) is what lets the compiler vectorise the loops: without it the backward stayed
 * scalar at every level, 5% of the LSTM preset's step at avx2 (perf). The same operations per
 * element, so the same bits (tests/test_rnn_cells.c checks the vector bodies and tails). */

#include <string.h>

/* Both cells open with two sigmoid gates of the summed projections, LSTM i, f and GRU r, z:
 * gate[0, 2H) = sigmoid(gate + proj) for one row. */
static void leading_sigmoid_gates(float *gate, const float *proj, size_t width) {
    for (size_t k = 0; k < 2 * width; k++) gate[k] += proj[k];
    kernel_sigmoid_forward(gate, gate, 2 * width);
}

/* gates (B, 4H): in, the input projection; out, the gates i f g o. */
static void kernel_lstm_cell_forward(float *restrict h, float *restrict c, float *restrict gates,
                                     float *restrict tanh_c, const float *restrict hidden_proj,
                                     const float *restrict prev_c, int B, int H) {
    size_t width = (size_t)H;
    for (int row = 0; row < B; row++) {
        float *gate = gates + (size_t)row * 4 * width;
        const float *proj = hidden_proj + (size_t)row * 4 * width;
        leading_sigmoid_gates(gate, proj, width); /* i, f */
        for (size_t k = 2 * width; k < 4 * width; k++) gate[k] += proj[k];
        kernel_tanh_forward(gate + 2 * width, gate + 2 * width, width); /* g */
        kernel_sigmoid_forward(gate + 3 * width, gate + 3 * width, width); /* o */
        const float *in = gate, *forget = gate + width, *cand = gate + 2 * width,
                    *out = gate + 3 * width;
        size_t at = (size_t)row * width;
        for (size_t j = 0; j < width; j++)
            c[at + j] = forget[j] * prev_c[at + j] + in[j] * cand[j];
        kernel_tanh_forward(tanh_c + at, c + at, width);
        for (size_t j = 0; j < width; j++) h[at + j] = out[j] * tanh_c[at + j];
    }
}

/* gates (B, 3H): in, the input projection; out, the gates r z n. */
static void kernel_gru_cell_forward(float *restrict h, float *restrict gates,
                                    float *restrict hidden_n, const float *restrict hidden_proj,
                                    const float *restrict prev_h, int B, int H) {
    size_t width = (size_t)H;
    for (int row = 0; row < B; row++) {
        float *gate = gates + (size_t)row * 3 * width;
        const float *proj = hidden_proj + (size_t)row * 3 * width;
        leading_sigmoid_gates(gate, proj, width); /* r, z */
        const float *reset = gate, *update = gate + width;
        float *cand = gate + 2 * width;
        size_t at = (size_t)row * width;
        memcpy(hidden_n + at, proj + 2 * width, width * sizeof(float));
        for (size_t j = 0; j < width; j++) cand[j] += reset[j] * hidden_n[at + j];
        kernel_tanh_forward(cand, cand, width);
        /* (h - n) z + n: ATen's order of the same (1 - z) n + z h */
        for (size_t j = 0; j < width; j++)
            h[at + j] = (prev_h[at + j] - cand[j]) * update[j] + cand[j];
    }
}

/* From dh, the step output's gradient, and dh_prev / dc_prev, the gradients carried back from
 * the next step: dgates (B, 4H) of the pre-activations; dc_prev becomes the entering cell's
 * gradient, and dh_prev the part of the entering state's that bypasses W_hh (none). */
static void kernel_lstm_cell_backward(float *restrict dgates, float *restrict dh_prev,
                                      float *restrict dc_prev, const float *restrict dh,
                                      const float *restrict gates, const float *restrict tanh_c,
                                      const float *restrict prev_c, int B, int H) {
    size_t width = (size_t)H;
    for (int row = 0; row < B; row++) {
        const float *gate = gates + (size_t)row * 4 * width;
        const float *in = gate, *forget = gate + width, *cand = gate + 2 * width,
                    *out = gate + 3 * width;
        float *dgate = dgates + (size_t)row * 4 * width;
        size_t at = (size_t)row * width;
        for (size_t j = 0; j < width; j++) {
            float dh_total = dh[at + j] + dh_prev[at + j];
            float tc = tanh_c[at + j];
            float dc = dc_prev[at + j] + dh_total * out[j] * (1.0f - tc * tc);
            dgate[j] = dc * cand[j] * in[j] * (1.0f - in[j]);
            dgate[width + j] = dc * prev_c[at + j] * forget[j] * (1.0f - forget[j]);
            dgate[2 * width + j] = dc * in[j] * (1.0f - cand[j] * cand[j]);
            dgate[3 * width + j] = dh_total * tc * out[j] * (1.0f - out[j]);
            dc_prev[at + j] = dc * forget[j];
            dh_prev[at + j] = 0.0f;
        }
    }
}

/* As lstm_cell_backward for the GRU: dgates_ih and dgates_hh (B, 3H) differ in n only; the
 * part of dh_prev that bypasses W_hh is z dh'. */
static void kernel_gru_cell_backward(float *restrict dgates_ih, float *restrict dgates_hh,
                                     float *restrict dh_prev, const float *restrict dh,
                                     const float *restrict gates, const float *restrict hidden_n,
                                     const float *restrict prev_h, int B, int H) {
    size_t width = (size_t)H;
    for (int row = 0; row < B; row++) {
        const float *gate = gates + (size_t)row * 3 * width;
        const float *reset = gate, *update = gate + width, *cand = gate + 2 * width;
        float *d_ih = dgates_ih + (size_t)row * 3 * width;
        float *d_hh = dgates_hh + (size_t)row * 3 * width;
        size_t at = (size_t)row * width;
        for (size_t j = 0; j < width; j++) {
            float dh_total = dh[at + j] + dh_prev[at + j];
            float dcand = dh_total * (1.0f - update[j]) * (1.0f - cand[j] * cand[j]);
            float dupdate = dh_total * (prev_h[at + j] - cand[j]) * update[j] * (1.0f - update[j]);
            float dreset = dcand * hidden_n[at + j] * reset[j] * (1.0f - reset[j]);
            d_ih[j] = d_hh[j] = dreset;
            d_ih[width + j] = d_hh[width + j] = dupdate;
            d_ih[2 * width + j] = dcand;
            d_hh[2 * width + j] = dcand * reset[j];
            dh_prev[at + j] = dh_total * update[j];
        }
    }
}
