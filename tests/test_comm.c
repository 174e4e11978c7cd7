/* sk_comm: worker sums fold in worker order (float addition does not
 * associate, so the order is part of the result), and the single-process
 * communicator's cross-rank calls are identities. */
#include "test_util.h"

#include "train/comm.h"

static void test_worker_sum_order(void **state) {
    (void)state;
    /* (1e8 + 1) - 1e8 is 0 in float: 1e8 + 1 rounds back to 1e8; any other
     * order gives 1 */
    float a[2] = {1e8f, 3.0f}, b[2] = {1.0f, 4.0f}, c[2] = {-1e8f, 5.0f};
    const float *parts[3] = {a, b, c};
    float out[2];
    sk_comm_sum_workers_f32(out, parts, 3, 2);
    assert_true(out[0] == 0.0f);
    assert_true(out[1] == 12.0f);
    const float *reordered[3] = {a, c, b};
    sk_comm_sum_workers_f32(out, reordered, 3, 2);
    assert_true(out[0] == 1.0f);
    /* in place over the first part */
    sk_comm_sum_workers_f32(a, parts, 3, 2);
    assert_true(a[0] == 0.0f && a[1] == 12.0f);
}

static void test_single_process_identities(void **state) {
    (void)state;
    sk_comm comm = sk_comm_single();
    assert_int_equal(comm.rank, 0);
    assert_int_equal(comm.size, 1);
    float f[3] = {1.5f, -2.0f, 3.25f};
    double d[2] = {0.1, 0.2};
    sk_comm_allreduce_f32(&comm, f, 3);
    sk_comm_allreduce_f64(&comm, d, 2);
    sk_comm_bcast_f32(&comm, f, 3, 0);
    sk_comm_bcast_f64(&comm, d, 2, 0);
    assert_true(f[0] == 1.5f && f[1] == -2.0f && f[2] == 3.25f);
    assert_true(d[0] == 0.1 && d[1] == 0.2);
    double all[2];
    sk_comm_allgather_f64(&comm, d, 2, all);
    assert_memory_equal(all, d, sizeof d);
    float gathered[4];
    size_t counts[1];
    assert_int_equal(sk_comm_allgatherv_f32(&comm, f, 3, gathered, 4, counts), 3);
    assert_int_equal(counts[0], 3);
    assert_memory_equal(gathered, f, sizeof f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worker_sum_order),
        cmocka_unit_test(test_single_process_identities),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
