/* Telemetry: every accepted event reaches the file as one valid JSON line, in
 * each producer's order; a full ring drops and counts instead of waiting; the
 * counts in the summary line add up; failures name the file. TensorBoard's event
 * files: CRC-32C against published vectors, a torn last record cut on resume
 * (python/tests/test_tensorboard.py reads the files with TensorBoard itself). */
#include "test_util.h"

#include "io/telemetry.h"
#include "io/tfevents.h"

#include <sys/stat.h>

#include <cjson/cJSON.h>
#include <pthread.h>
#include <time.h>

static char g_dir[64];

static void path_of(char *buf, size_t size, const char *name) { snprintf(buf, size, "%s/%s", g_dir, name); }

/* The parsed lines of a JSON-lines file. */
typedef struct lines {
    cJSON **items;
    int count;
} lines;

/* Reads path; fails the test unless every line ends in '\n' and is exactly
 * one JSON object. */
static lines read_lines(const char *path) {
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    lines out = {0};
    int cap = 0;
    char *line = NULL;
    size_t line_cap = 0;
    ssize_t len;
    while ((len = getline(&line, &line_cap, f)) > 0) {
        if (line[len - 1] != '\n') fail_msg("line %d has no newline: %s", out.count + 1, line);
        line[len - 1] = '\0';
        cJSON *item = cJSON_ParseWithOpts(line, NULL, true);
        if (!item || !cJSON_IsObject(item))
            fail_msg("line %d is not one JSON object: %s", out.count + 1, line);
        if (out.count == cap) {
            cap = cap ? 2 * cap : 256;
            out.items = realloc(out.items, (size_t)cap * sizeof *out.items);
            assert_non_null(out.items);
        }
        out.items[out.count++] = item;
    }
    free(line);
    fclose(f);
    return out;
}

static void free_lines(lines *l) {
    for (int i = 0; i < l->count; i++) cJSON_Delete(l->items[i]);
    free(l->items);
}

static double number_field(const cJSON *item, const char *key) {
    const cJSON *value = cJSON_GetObjectItemCaseSensitive(item, key);
    if (!cJSON_IsNumber(value)) fail_msg("no number \"%s\" in %s", key, cJSON_PrintUnformatted(item));
    return value->valuedouble;
}

static const char *string_field(const cJSON *item, const char *key) {
    const cJSON *value = cJSON_GetObjectItemCaseSensitive(item, key);
    if (!cJSON_IsString(value)) fail_msg("no string \"%s\" in %s", key, cJSON_PrintUnformatted(item));
    return value->valuestring;
}

static bool is_truncated(const cJSON *item) {
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(item, "truncated"));
}

/* The last line must be the summary, with these counts. */
static void expect_summary(const lines *l, uint64_t emitted, uint64_t written, uint64_t dropped) {
    assert_true(l->count >= 1);
    const cJSON *summary = l->items[l->count - 1];
    assert_string_equal(string_field(summary, "type"), "telemetry");
    assert_int_equal((uint64_t)number_field(summary, "emitted"), emitted);
    assert_int_equal((uint64_t)number_field(summary, "written"), written);
    assert_int_equal((uint64_t)number_field(summary, "dropped"), dropped);
}

static void test_single_producer(void **state) {
    (void)state;
    char path[128];
    path_of(path, sizeof path, "single.jsonl");
    sk_telemetry *tele = NULL;
    assert_int_equal(sk_telemetry_open(&tele, path, 256), SK_OK);
    for (int i = 0; i < 100; i++) {
        bool ok = sk_telemetry_emit(tele, i % 2 ? "episode" : "update",
                                    "\"i\": %d, \"loss\": %.6g, \"name\": \"ev%d\"", i, 0.5 * i + 0.125, i);
        assert_true(ok);
    }
    assert_int_equal(sk_telemetry_emitted(tele), 100);
    assert_int_equal(sk_telemetry_dropped(tele), 0);
    assert_int_equal(sk_telemetry_close(tele), SK_OK);

    lines l = read_lines(path);
    assert_int_equal(l.count, 101);
    double last_t = 0;
    for (int i = 0; i < 100; i++) {
        const cJSON *item = l.items[i];
        assert_string_equal(string_field(item, "type"), i % 2 ? "episode" : "update");
        assert_int_equal((int)number_field(item, "i"), i);
        assert_true(number_field(item, "loss") == 0.5 * i + 0.125);
        char name[16];
        snprintf(name, sizeof name, "ev%d", i);
        assert_string_equal(string_field(item, "name"), name);
        assert_false(is_truncated(item));
        double t = number_field(item, "t");
        if (t < last_t) fail_msg("t went back at line %d: %.6f after %.6f", i + 1, t, last_t);
        last_t = t;
    }
    assert_true(number_field(l.items[100], "t") >= last_t);
    expect_summary(&l, 100, 100, 0);
    free_lines(&l);
}

static void test_appends_to_existing_file(void **state) {
    (void)state;
    char path[128];
    path_of(path, sizeof path, "append.jsonl");
    FILE *f = fopen(path, "w");
    fputs("{\"type\": \"earlier\"}\n", f);
    fclose(f);
    sk_telemetry *tele = NULL;
    assert_int_equal(sk_telemetry_open(&tele, path, 8), SK_OK);
    assert_true(sk_telemetry_emit(tele, "later", NULL));
    assert_int_equal(sk_telemetry_close(tele), SK_OK);
    lines l = read_lines(path);
    assert_int_equal(l.count, 3);
    assert_string_equal(string_field(l.items[0], "type"), "earlier");
    assert_string_equal(string_field(l.items[1], "type"), "later");
    assert_null(cJSON_GetObjectItemCaseSensitive(l.items[1], "truncated"));
    expect_summary(&l, 1, 1, 0);
    free_lines(&l);
}

/* ---- concurrent producers ---- */

#define NUM_PRODUCERS 4
/* Producers pace themselves to one emit per microsecond (catching up in a
 * burst after a preemption), so a run spans ~50 ms: many of the writer's
 * 2 ms idle polls and many laps of a small ring, not one burst it sleeps
 * through. */
#define EMIT_INTERVAL 1e-6

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct producer {
    sk_telemetry *tele;
    pthread_barrier_t *start;
    int id, attempts;
    uint64_t accepted, dropped;
    bool *was_accepted; // (attempts)
} producer;

static void *producer_main(void *arg) {
    producer *p = arg;
    pthread_barrier_wait(p->start);
    double start = now_seconds();
    for (int seq = 0; seq < p->attempts; seq++) {
        while (now_seconds() < start + EMIT_INTERVAL * seq) {
        }
        /* echo repeats id and seq at the far end, so a torn record shows */
        bool ok = sk_telemetry_emit(p->tele, "tick", "\"producer\": %d, \"seq\": %d, \"echo\": \"p%d-s%d\"",
                                    p->id, seq, p->id, seq);
        p->was_accepted[seq] = ok;
        if (ok) p->accepted++;
        else p->dropped++;
    }
    return NULL;
}

/* Runs NUM_PRODUCERS x attempts emits into a ring of capacity, then checks
 * the file against what each producer was told. Returns the total dropped. */
static uint64_t run_producers(const char *name, int capacity, int attempts, double writer_delay) {
    char path[128];
    path_of(path, sizeof path, name);
    sk_telemetry *tele = NULL;
    assert_int_equal(sk_telemetry_open(&tele, path, capacity), SK_OK);
    sk_telemetry_test_set_writer_delay(tele, writer_delay);

    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, NUM_PRODUCERS);
    producer producers[NUM_PRODUCERS];
    pthread_t threads[NUM_PRODUCERS];
    for (int i = 0; i < NUM_PRODUCERS; i++) {
        producers[i] = (producer){.tele = tele, .start = &start, .id = i, .attempts = attempts,
                                  .was_accepted = calloc((size_t)attempts, sizeof(bool))};
        assert_non_null(producers[i].was_accepted);
        assert_int_equal(pthread_create(&threads[i], NULL, producer_main, &producers[i]), 0);
    }
    uint64_t accepted = 0, dropped = 0;
    for (int i = 0; i < NUM_PRODUCERS; i++) {
        pthread_join(threads[i], NULL);
        assert_int_equal(producers[i].accepted + producers[i].dropped, (uint64_t)attempts);
        accepted += producers[i].accepted;
        dropped += producers[i].dropped;
    }
    pthread_barrier_destroy(&start);
    uint64_t emitted = sk_telemetry_emitted(tele);
    assert_int_equal(accepted, emitted);
    assert_int_equal(dropped, sk_telemetry_dropped(tele));
    sk_telemetry_test_set_writer_delay(tele, 0);
    assert_int_equal(sk_telemetry_close(tele), SK_OK);

    lines l = read_lines(path);
    assert_int_equal((uint64_t)l.count, emitted + 1);
    expect_summary(&l, emitted, emitted, dropped);
    /* each producer's accepted events, exactly, in the order it emitted them */
    int next_seq[NUM_PRODUCERS] = {0};
    for (int i = 0; i < l.count - 1; i++) {
        const cJSON *item = l.items[i];
        assert_string_equal(string_field(item, "type"), "tick");
        int id = (int)number_field(item, "producer");
        int seq = (int)number_field(item, "seq");
        assert_in_range(id, 0, NUM_PRODUCERS - 1);
        char echo[32];
        snprintf(echo, sizeof echo, "p%d-s%d", id, seq);
        assert_string_equal(string_field(item, "echo"), echo);
        producer *p = &producers[id];
        while (next_seq[id] < attempts && !p->was_accepted[next_seq[id]]) next_seq[id]++;
        if (seq != next_seq[id])
            fail_msg("line %d: producer %d seq %d, expected its next accepted seq %d", i + 1, id, seq,
                     next_seq[id]);
        next_seq[id]++;
    }
    for (int id = 0; id < NUM_PRODUCERS; id++) {
        while (next_seq[id] < attempts && !producers[id].was_accepted[next_seq[id]]) next_seq[id]++;
        if (next_seq[id] != attempts) fail_msg("producer %d: accepted seq %d is missing", id, next_seq[id]);
        free(producers[id].was_accepted);
    }
    print_message("%s: %d producers x %d into %d slots: %llu accepted, %llu dropped\n", name,
                  NUM_PRODUCERS, attempts, capacity, (unsigned long long)accepted,
                  (unsigned long long)dropped);
    free_lines(&l);
    return dropped;
}

static void test_concurrent_overflow_accounting(void **state) {
    (void)state;
    uint64_t dropped = run_producers("overflow.jsonl", 64, 50000, 2e-6);
    assert_true(dropped > 0);
}

/* A writer as fast as it can go, on a small ring: it keeps catching up with
 * producers mid-publish, where a torn or half-written record would show. */
static void test_concurrent_fast_writer(void **state) {
    (void)state;
    run_producers("fast.jsonl", 64, 50000, 0);
}

static void test_no_loss_when_ring_never_fills(void **state) {
    (void)state;
    uint64_t dropped = run_producers("noloss.jsonl", 4096, 1000, 0);
    assert_int_equal(dropped, 0);
}

/* ---- truncation ---- */

static void test_oversized_event_truncated(void **state) {
    (void)state;
    char path[128];
    path_of(path, sizeof path, "big.jsonl");
    /* a long string full of JSON punctuation, so a cut that lost track of
     * strings, escapes or nesting would leave broken JSON */
    static const char punctuation[] = "x,{}[]: ";
    static char big[5000], xs[SK_TELEMETRY_MAX_FIELDS + 1], ones[3000];
    for (size_t i = 0; i < sizeof big - 1; i++) big[i] = punctuation[i % (sizeof punctuation - 1)];
    memcpy(big + 10, "\\\"", 2); /* an escaped quote early on */
    memset(xs, 'x', sizeof xs - 1);
    for (size_t i = 0; i + 3 < sizeof ones; i += 3) memcpy(ones + i, "1, ", 3);
    ones[sizeof ones - 3] = '1';
    /* exactly SK_TELEMETRY_MAX_FIELDS bytes fits; one more does not */
    const char *frame = "\"pad\": \"\"";
    int pad_fit = SK_TELEMETRY_MAX_FIELDS - (int)strlen(frame);

    sk_telemetry *tele = NULL;
    assert_int_equal(sk_telemetry_open(&tele, path, 16), SK_OK);
    assert_true(sk_telemetry_emit(tele, "a", "\"update\": 7, \"note\": \"%s\"", big));
    assert_true(sk_telemetry_emit(tele, "b", "\"note\": \"%s\"", big));
    assert_true(sk_telemetry_emit(tele, "c", "\"cfg\": {\"a\": 1, \"b\": [1, 2]}, \"s\": \"x,}\", "
                                             "\"note\": \"%s\"", big));
    assert_true(sk_telemetry_emit(tele, "d", "\"pad\": \"%.*s\"", pad_fit, xs));
    assert_true(sk_telemetry_emit(tele, "e", "\"pad\": \"%.*s\", \"z\": 1", pad_fit + 1, xs));
    /* a type longer than SK_TELEMETRY_MAX_TYPE, ending in a 2-byte character cut in half */
    char long_type[64];
    memset(long_type, 't', sizeof long_type);
    memcpy(long_type + SK_TELEMETRY_MAX_TYPE - 1, "\xc3\xa9", 2);
    long_type[sizeof long_type - 1] = '\0';
    assert_true(sk_telemetry_emit(tele, long_type, "\"ok\": true"));
    /* a raw newline from %s must not split the line */
    assert_true(sk_telemetry_emit(tele, "g", "\"msg\": \"%s\"", "two\nlines"));
    /* cut inside an array: its commas are not between members */
    assert_true(sk_telemetry_emit(tele, "h", "\"update\": 3, \"arr\": [%s]", ones));
    assert_int_equal(sk_telemetry_close(tele), SK_OK);

    lines l = read_lines(path);
    assert_int_equal(l.count, 9);
    const cJSON *a = l.items[0];
    assert_string_equal(string_field(a, "type"), "a");
    assert_int_equal((int)number_field(a, "update"), 7);
    assert_null(cJSON_GetObjectItemCaseSensitive(a, "note"));
    assert_true(is_truncated(a));

    const cJSON *b = l.items[1];
    assert_string_equal(string_field(b, "type"), "b");
    assert_null(cJSON_GetObjectItemCaseSensitive(b, "note"));
    assert_true(is_truncated(b));
    assert_int_equal(cJSON_GetArraySize(b), 3); /* t, type, truncated */

    const cJSON *c = l.items[2];
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(c, "cfg");
    assert_true(cJSON_IsObject(cfg));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(cfg, "b")), 2);
    assert_string_equal(string_field(c, "s"), "x,}");
    assert_null(cJSON_GetObjectItemCaseSensitive(c, "note"));
    assert_true(is_truncated(c));

    const cJSON *d = l.items[3];
    assert_int_equal(strlen(string_field(d, "pad")), (size_t)pad_fit);
    assert_false(is_truncated(d));

    const cJSON *e = l.items[4];
    assert_null(cJSON_GetObjectItemCaseSensitive(e, "pad"));
    assert_true(is_truncated(e));

    const cJSON *f = l.items[5];
    char want_type[64];
    memset(want_type, 't', SK_TELEMETRY_MAX_TYPE - 1);
    want_type[SK_TELEMETRY_MAX_TYPE - 1] = '\0'; /* the half character is gone */
    assert_string_equal(string_field(f, "type"), want_type);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, "ok")));
    assert_true(is_truncated(f));

    assert_string_equal(string_field(l.items[6], "msg"), "two lines");

    const cJSON *h = l.items[7];
    assert_int_equal((int)number_field(h, "update"), 3);
    assert_null(cJSON_GetObjectItemCaseSensitive(h, "arr"));
    assert_true(is_truncated(h));
    expect_summary(&l, 8, 8, 0);
    free_lines(&l);
}

/* ---- failures ---- */

static void expect_open_io_error(const char *path) {
    sk_telemetry *tele = NULL;
    assert_int_equal(sk_telemetry_open(&tele, path, 16), SK_ERR_IO);
    assert_null(tele);
    print_message("%s -> %s\n", path, sk_last_error());
    assert_non_null(strstr(sk_last_error(), path));
}

static void test_unwritable_path(void **state) {
    (void)state;
    char path[128];
    path_of(path, sizeof path, "no/such/dir/events.jsonl");
    expect_open_io_error(path);
    expect_open_io_error(g_dir); /* a directory; refused even to root */
}

static void test_write_failure_reported(void **state) {
    (void)state;
    if (access("/dev/full", W_OK) != 0) {
        TEST_SKIP("no /dev/full");
    }
    sk_telemetry *tele = NULL;
    assert_int_equal(sk_telemetry_open(&tele, "/dev/full", 16), SK_OK);
    for (int i = 0; i < 10; i++) assert_true(sk_telemetry_emit(tele, "x", "\"i\": %d", i));
    assert_int_equal(sk_telemetry_close(tele), SK_ERR_IO);
    print_message("/dev/full -> %s\n", sk_last_error());
    assert_non_null(strstr(sk_last_error(), "/dev/full"));
}

static void test_capacity(void **state) {
    (void)state;
    char path[128];
    path_of(path, sizeof path, "capacity.jsonl");
    sk_telemetry *tele = NULL;
    assert_int_equal(sk_telemetry_open(&tele, path, 0), SK_ERR_INVALID);
    assert_int_equal(sk_telemetry_open(&tele, path, SK_TELEMETRY_MAX_CAPACITY + 1), SK_ERR_INVALID);
    assert_null(tele);
    /* 3 rounds up to 4. The writer sleeps 0.2 s after each event it takes, so
     * during a burst it frees at most one slot: 4 or 5 are accepted. */
    assert_int_equal(sk_telemetry_open(&tele, path, 3), SK_OK);
    sk_telemetry_test_set_writer_delay(tele, 0.2);
    int accepted = 0;
    for (int i = 0; i < 100; i++) accepted += sk_telemetry_emit(tele, "x", "\"i\": %d", i);
    assert_in_range(accepted, 4, 5);
    assert_int_equal(sk_telemetry_dropped(tele), (uint64_t)(100 - accepted));
    sk_telemetry_test_set_writer_delay(tele, 0);
    assert_int_equal(sk_telemetry_close(tele), SK_OK);
    assert_int_equal(sk_telemetry_close(NULL), SK_OK);
}

/* CRC-32C's check value (the CRC catalogue's "123456789") and RFC 3720's (iSCSI)
 * vectors, B.4: 32 bytes of zeros, of ones, ascending. */
static void test_crc32c_vectors(void **state) {
    (void)state;
    uint8_t zeros[32] = {0}, ones[32], ascending[32];
    memset(ones, 0xff, sizeof ones);
    for (int k = 0; k < 32; k++) ascending[k] = (uint8_t)k;
    assert_int_equal(sk_crc32c("123456789", sizeof "123456789" - 1), 0xe3069283u);
    assert_int_equal(sk_crc32c("", 0), 0u);
    assert_int_equal(sk_crc32c(zeros, sizeof zeros), 0x8a9136aau);
    assert_int_equal(sk_crc32c(ones, sizeof ones), 0x62a8ab43u);
    assert_int_equal(sk_crc32c(ascending, sizeof ascending), 0x46dd794eu);
}

static long file_size(const char *path) {
    struct stat info;
    return stat(path, &info) == 0 ? (long)info.st_size : -1;
}

/* A kill mid-record leaves a torn tail; resuming cuts it, and the records after the
 * checkpoint's step, and keeps the rest byte for byte. */
static void test_tfevents_resume_cuts(void **state) {
    (void)state;
    char dir[128], path[4200];
    path_of(dir, sizeof dir, "tb");
    assert_int_equal(mkdir(dir, 0755), 0);
    const char *tags[] = {"a", "b"};
    float values[] = {1.5f, -2.0f};
    sk_tfevents *tb = NULL;
    assert_int_equal(sk_tfevents_open(&tb, dir, false, 0), SK_OK);
    snprintf(path, sizeof path, "%s", sk_tfevents_path(tb));
    sk_tfevents_text(tb, 0, "config", "[train]\nseed = 1\n");
    sk_tfevents_scalars(tb, 10, tags, values, 2);
    assert_int_equal(sk_tfevents_close(tb), SK_OK);
    long at_10 = file_size(path);
    assert_int_equal(sk_tfevents_open(&tb, dir, true, 10), SK_OK); /* nothing to cut */
    sk_tfevents_scalars(tb, 20, tags, values, 2);
    assert_int_equal(sk_tfevents_close(tb), SK_OK);
    FILE *torn = fopen(path, "ab");
    assert_non_null(torn);
    fwrite("\x40\0\0\0\0\0\0\0\x12\x34", 1, 10, torn); /* a header cut short */
    assert_int_equal(fclose(torn), 0);
    assert_int_equal(sk_tfevents_open(&tb, dir, true, 10), SK_OK);
    assert_int_equal(sk_tfevents_close(tb), SK_OK);
    assert_int_equal(file_size(path), at_10);
    /* keep_step 0: the text at 0 goes too (the resumed run writes its own), the
     * file_version record stays */
    assert_int_equal(sk_tfevents_open(&tb, dir, true, 0), SK_OK);
    assert_int_equal(sk_tfevents_close(tb), SK_OK);
    assert_in_range(file_size(path), 1, at_10 - 1);
    /* a new run removes the old file */
    assert_int_equal(sk_tfevents_open(&tb, dir, false, 0), SK_OK);
    assert_int_equal(sk_tfevents_close(tb), SK_OK);
    assert_true(access(path, F_OK) != 0 || file_size(path) < at_10);
    assert_int_equal(sk_tfevents_open(&tb, "/nonexistent-skinner-dir", false, 0), SK_ERR_IO);
    assert_non_null(strstr(sk_last_error(), "/nonexistent-skinner-dir/" SK_TFEVENTS_PREFIX));
}

int main(void) {
    snprintf(g_dir, sizeof g_dir, "/tmp/skinner-test-tele-XXXXXX");
    if (!mkdtemp(g_dir)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_producer),
        cmocka_unit_test(test_appends_to_existing_file),
        cmocka_unit_test(test_concurrent_overflow_accounting),
        cmocka_unit_test(test_concurrent_fast_writer),
        cmocka_unit_test(test_no_loss_when_ring_never_fills),
        cmocka_unit_test(test_oversized_event_truncated),
        cmocka_unit_test(test_unwritable_path),
        cmocka_unit_test(test_write_failure_reported),
        cmocka_unit_test(test_capacity),
        cmocka_unit_test(test_crc32c_vectors),
        cmocka_unit_test(test_tfevents_resume_cuts),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    if (system(cmd) != 0) return 1;
    return rc;
}
