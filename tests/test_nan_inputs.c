/* Inputs that used to be undefined behaviour: built with UBSan's
 * float-cast-overflow check, which aborts on a NaN converted to an integer. */
#include "test_util.h"

#include "nn/nn.h"

#include <math.h>

static void test_exp_poly_nan_stays_nan(void **state) {
    (void)state;
    volatile float nan_in = NAN; /* not folded at compile time */
    assert_true(isnan(sk_exp_poly(nan_in)));
    assert_true(isnan(sk_tanhf(nan_in)));

    assert_true(fabsf(sk_exp_poly(1.0f) - expf(1.0f)) < 1e-6f);
    assert_true(fabsf(sk_exp_poly(-87.0f) - expf(-87.0f)) < 1e-40f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exp_poly_nan_stays_nan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
