/*
 * A test program whose every case needs ../shared, for tests/skip_check.sh: without it,
 * each case skips loudly and the program exits with TEST_SKIP_EXIT (ctest's
 * SKIP_RETURN_CODE), and under CI=true each case fails naming the missing path.
 */
#include "test_util.h"

static void test_needs_shared(void **unused) {
    (void)unused;
    REQUIRE_SHARED(shared);
    assert_int_equal(access(shared, R_OK), 0);
}

static void test_needs_shared_too(void **unused) {
    (void)unused;
    REQUIRE_SHARED(shared);
    assert_non_null(shared);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_needs_shared),
        cmocka_unit_test(test_needs_shared_too),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
