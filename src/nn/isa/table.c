/* This level's table (included last by level_*.c, after the kernels it lists). */
#define SK_ISA_CAT2(a, b) a##b
#define SK_ISA_CAT(a, b) SK_ISA_CAT2(a, b)

const sk_nn_kernels SK_ISA_CAT(sk_nn_kernels_, SK_ISA_SUFFIX) = {
    .level = SK_ISA_LEVEL,
    .gemm_forward = kernel_forward,
    .gemm_forward_t = kernel_forward_t,
    .gemm_forward_transposes = kernel_forward_transposes,
    .gemm_dinput = kernel_dinput,
    .gemm_dweight = kernel_dweight,
    .transpose = kernel_transpose,
    .tanhf = kernel_tanhf,
    .tanh_forward = kernel_tanh_forward,
    .tanh_backward = kernel_tanh_backward,
    .bias_grad = kernel_bias_grad,
    .adam_update = kernel_adam_update,
    .relu_forward = kernel_relu_forward,
    .relu_backward = kernel_relu_backward,
    .sigmoid_forward = kernel_sigmoid_forward,
    .lstm_cell_forward = kernel_lstm_cell_forward,
    .gru_cell_forward = kernel_gru_cell_forward,
    .lstm_cell_backward = kernel_lstm_cell_backward,
    .gru_cell_backward = kernel_gru_cell_backward,
    .binary_sample = kernel_binary_sample,
    .binary_evaluate = kernel_binary_evaluate,
    .binary_backward = kernel_binary_backward,
    .sac_squash_forward = kernel_sac_squash_forward,
    .sac_squash_backward = kernel_sac_squash_backward,
};
