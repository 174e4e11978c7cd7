/* The skinner program's helpers (cli.c), below its commands: every command file includes
 * this header, and cli.c includes no command. The commands are in commands.h. */
#ifndef SK_CLI_H
#define SK_CLI_H

#include "skinner.h"

#include <stdio.h>

#define SK_EXIT_OK 0
#define SK_EXIT_FAILURE 1
#define SK_EXIT_USAGE 2

/* Prints "skinner: error: ..." to stderr; returns code. */
int cli_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A cursor over argv for "--flag value" and "--flag=value" parsing. */
typedef struct cli_args {
    int argc, index;
    char **argv;
} cli_args;

/* If argv[index] is --name or --name=..., consumes it and returns true; the
 * value (inline or the next argument) goes to *value, which must then exist,
 * else *missing is set. Pass value NULL for a switch. */
bool cli_flag(cli_args *args, const char *name, const char **value, bool *missing);
/* If argv[index] is --SECTION.KEY VALUE or --SECTION.KEY=VALUE (SECTION being section, or
 * any section when section is NULL), consumes it and returns true, with "SECTION.KEY" in
 * key[key_size] and the value in *value; *exit_code is SK_EXIT_USAGE (reported) when the
 * option is too long or its value is missing, else SK_EXIT_OK. */
bool cli_key_flag(cli_args *args, const char *section, char *key, size_t key_size,
                  const char **value, int *exit_code);
/* If argv[index] is --env.KEY VALUE or --env.KEY=VALUE, consumes it, sets
 * env.KEY in cfg and returns true; *exit_code is SK_EXIT_USAGE (reported)
 * when the value is missing or refused, else SK_EXIT_OK. */
bool cli_env_flag(cli_args *args, sk_config *cfg, int *exit_code);
bool cli_parse_int(const char *flag, const char *text, long long lo, long long hi, long long *out,
                   int *exit_code);
bool cli_parse_double(const char *flag, const char *text, double lo, double hi, double *out,
                      int *exit_code);

/* Loads the env's preset (configs/PRESET.ini next to the program, in
 * $SKINNER_CONFIG_DIR, or where it was installed) into cfg, then explicit_path
 * (if any) on top of it: the file's keys override the preset's. Each file is
 * read once; explicit_keys, if not NULL, receives the explicit file's own keys. */
int cli_load_config(sk_config *cfg, const sk_env_def *env, const char *explicit_path,
                    sk_config *explicit_keys);

/* How to name env on a later command line: its id, or FILE.so:ID for an env
 * of a plugin (which a later run must load again); in buf if not the id. */
const char *cli_env_name(const sk_env_def *env, char *buf, size_t size);

/* The learner of the run whose metrics.csv is at `metrics` (its config.ini's train.algo:
 * "ppo", "sac", "dqn") into out; false without a config.ini (a bare live file). */
bool cli_monitor_learner(const char *metrics, char *out, size_t size);
/* An off-policy run's own figures, its learner.csv's last row ("alpha 0.0412, qf1_value 51.3,
 * qf2_value 51.2, gradient_steps 12000, replay_rows 13000"), into out; false when the run
 * has no learner.csv (PPO) or no row in it yet. */
bool cli_monitor_figures_line(const char *metrics, char *out, size_t size);

/* skinner monitor's self-play lines (monitor_files.c), read beside the run's metrics.csv
 * at path `metrics`: its elo.csv's last row ("learner 1040 after 554 games; pool 960 ...") and
 * its opponents.csv's last 10 updates ("alphabeta:3 0.98, alphabeta:4 0.87 (last 10 updates,
 * 812 games)"), into out; false when the run has no such file or no row in it yet. */
bool cli_monitor_elo_line(const char *metrics, char *out, size_t size);
bool cli_monitor_opponents_line(const char *metrics, char *out, size_t size);
/* skinner monitor on a folder that holds run folders (runs/): one line a run (name, env,
 * status by sk_run_state, steps, return) and each sweep's folder; an error naming dir when
 * it holds neither. */
int cli_monitor_folder(const char *dir);
/* A consistent copy of a live file's record, tried 20 times 10 ms apart (a writer
 * mid-update); false if it never settled (monitor_files.c). */
struct sk_live_reader;
struct sk_live_data;
bool cli_live_snapshot_patiently(const struct sk_live_reader *reader, struct sk_live_data *data);

#endif
