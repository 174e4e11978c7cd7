/* sk_code_folder (src/core/folder.c), the one answer to "the folder I run from" that the module
 * loader, the convolution backend's loader and the presets' lookup share (issue 53 ask 5): the
 * program run through a symlink, by a relative path from a folder it then left, and by a bare
 * name found on PATH; a library loaded through a symlinked folder. Each gives the real folder. */
#define _GNU_SOURCE /* execvp with a PATH of our own */
#include "test_util.h"

#include "core/core.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char g_tmp[] = "/tmp/skinner-code-folder-XXXXXX";
static char g_self_folder[PATH_MAX]; /* the test program's real folder */

/* In the child: leave the folder it was started from, then print the answer. */
static int print_folder(void) {
    if (chdir("/") != 0) return 3;
    char folder[PATH_MAX];
    if (!sk_code_folder((void (*)(void))print_folder, folder, sizeof folder)) return 4;
    printf("%s\n", folder);
    return 0;
}

/* Runs argv (execvp, with PATH = path when given) from cwd and returns what it printed. */
static void run_child(const char *cwd, const char *path, char *const argv[], char *out,
                      size_t size) {
    int pipe_fds[2];
    assert_int_equal(pipe(pipe_fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(pipe_fds[1], STDOUT_FILENO);
        close(pipe_fds[0]);
        if (chdir(cwd) != 0) _exit(5);
        if (path) setenv("PATH", path, 1);
        execvp(argv[0], argv);
        _exit(6);
    }
    close(pipe_fds[1]);
    ssize_t got = read(pipe_fds[0], out, size - 1);
    close(pipe_fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    out[got > 0 ? got : 0] = '\0';
    char *newline = strchr(out, '\n');
    if (newline) *newline = '\0';
}

static void test_program(void **state) {
    (void)state;
    char bin[PATH_MAX + 32], link_path[PATH_MAX + 64], out[PATH_MAX + 64];
    snprintf(bin, sizeof bin, "%s/bin", g_tmp);
    assert_int_equal(mkdir(bin, 0755), 0);
    snprintf(link_path, sizeof link_path, "%s/skinner-link", bin);
    char self[PATH_MAX];
    assert_non_null(realpath("/proc/self/exe", self));
    assert_int_equal(symlink(self, link_path), 0);
    /* a relative path through a symlink, from a folder the child then leaves */
    char *relative[] = {"./skinner-link", "--print-folder", NULL};
    run_child(bin, NULL, relative, out, sizeof out);
    assert_string_equal(out, g_self_folder);
    /* a bare name found on PATH */
    char *bare[] = {"skinner-link", "--print-folder", NULL};
    run_child("/", bin, bare, out, sizeof out);
    assert_string_equal(out, g_self_folder);
    /* the program's own symbol in this process: the same folder */
    assert_true(sk_code_folder((void (*)(void))print_folder, out, sizeof out));
    assert_string_equal(out, g_self_folder);
    /* too small a buffer: false, not a cut path */
    char tiny[4];
    assert_false(sk_code_folder((void (*)(void))print_folder, tiny, sizeof tiny));
}

/* libskinner.so loaded as TMP/libs/libskinner.so, TMP/libs a symlink to its real folder */
static void test_library_through_symlinked_folder(void **state) {
    (void)state;
    char real[PATH_MAX], real_folder[PATH_MAX], libs[PATH_MAX + 32], path[PATH_MAX + 64];
    assert_non_null(realpath(SKINNER_SHARED_LIBRARY, real));
    snprintf(real_folder, sizeof real_folder, "%s", real);
    *strrchr(real_folder, '/') = '\0';
    snprintf(libs, sizeof libs, "%s/libs", g_tmp);
    assert_int_equal(symlink(real_folder, libs), 0);
    snprintf(path, sizeof path, "%s/%s", libs, strrchr(real, '/') + 1);
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) fail_msg("dlopen %s: %s", path, dlerror());
    void *symbol = dlsym(handle, "sk_vec_create");
    assert_non_null(symbol);
    void (*code)(void);
    memcpy(&code, &symbol, sizeof code);
    char out[PATH_MAX];
    assert_true(sk_code_folder(code, out, sizeof out));
    assert_string_equal(out, real_folder);
    dlclose(handle);
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--print-folder") == 0) return print_folder();
    if (!mkdtemp(g_tmp)) return 1;
    char self[PATH_MAX];
    if (!realpath("/proc/self/exe", self)) return 1;
    snprintf(g_self_folder, sizeof g_self_folder, "%s", self);
    *strrchr(g_self_folder, '/') = '\0';
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_program),
        cmocka_unit_test(test_library_through_symlinked_folder),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    char command[PATH_MAX + 16];
    snprintf(command, sizeof command, "rm -rf '%s'", g_tmp);
    if (system(command) != 0) return 1;
    return failed;
}
