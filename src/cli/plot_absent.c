/* skinner plot and the sweep figures in a build without PLplot (cmake -DSKINNER_PLOT=OFF; the
 * aarch64 cross build, whose libplplot-dev:arm64 cannot be installed beside the host's
 * libplplot-dev: docs/install.md). CMakeLists.txt compiles this file instead of plot.c and
 * sweep_plot.c. The run folders' metrics.csv and a sweep's report are written as always. */
#include "cli.h"
#include "commands.h"
#include "sweep_cli.h"

int cmd_plot(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_error(SK_EXIT_FAILURE, "plot: this skinner was built without PLplot "
                                      "(-DSKINNER_PLOT=OFF); plot metrics.csv elsewhere, or "
                                      "rebuild with libplplot-dev");
}

bool sweep_plot(const char *dir, const sk_sweep_spec *spec, const sk_sweep_trial *trials,
                int count, const int *front, int front_size, const int *index, int n) {
    (void)dir, (void)spec, (void)trials, (void)count, (void)front, (void)front_size, (void)index;
    (void)n;
    return false; /* nothing drawn: the report says so by printing no "figures:" line */
}
