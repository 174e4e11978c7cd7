/* The skinner program's commands: each runs `skinner NAME ARGS...`, given the arguments after
 * the command word, and returns the exit code (SK_EXIT_*, cli.h). main.c's table names each
 * once, with its usage line; a command file defines its own and includes this header so that
 * the compiler checks the signature. */
#ifndef SK_CLI_COMMANDS_H
#define SK_CLI_COMMANDS_H

int cmd_train(int argc, char **argv);   /* train.c */
int cmd_eval(int argc, char **argv);    /* eval_envs.c */
int cmd_envs(int argc, char **argv);    /* eval_envs.c */
int cmd_config(int argc, char **argv);  /* train.c */
int cmd_bench(int argc, char **argv);   /* bench.c */
int cmd_monitor(int argc, char **argv); /* monitor.c */
int cmd_plot(int argc, char **argv);    /* plot.c, or plot_absent.c without PLplot */
int cmd_kge(int argc, char **argv);     /* kge.c */
int cmd_check(int argc, char **argv);   /* check.c */
int cmd_sweep(int argc, char **argv);   /* sweep.c */
int cmd_export(int argc, char **argv);  /* export.c */
int cmd_serve(int argc, char **argv);   /* serve.c */

#endif
