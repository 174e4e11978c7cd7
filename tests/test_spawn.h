/* Running a program from a test: fork + execv rather than popen/system, so the wait status is
 * the program's own (a shell in between would turn a crash into exit 128+N) and no path needs
 * shell quoting. */
#ifndef SK_TEST_SPAWN_H
#define SK_TEST_SPAWN_H

#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

/* Starts argv[0] (a path) with argv (NULL-terminated): stdin from /dev/null, stdout and stderr
 * into the files out_path and err_path (truncated), and an alarm of timeout_seconds, which
 * survives execv, so a hang ends as a SIGALRM rather than a stuck test. Returns its pid, or -1
 * if fork failed; the child exits 125 if the redirection failed, 127 if execv did. */
static inline pid_t test_spawn(char *const *argv, const char *out_path, const char *err_path,
                               unsigned timeout_seconds) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid != 0) return pid;
    int in = open("/dev/null", O_RDONLY);
    int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
        _exit(125);
    alarm(timeout_seconds);
    execv(argv[0], argv);
    _exit(127);
}

#endif
