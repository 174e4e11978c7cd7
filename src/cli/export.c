/* `skinner export CHECKPOINT --onnx FILE --c FILE`: a saved policy leaving skinner
 * (src/export/, docs/export.md). */
#include "../export/export.h"
#include "cli.h"
#include "commands.h"

#include <string.h>
#include <sys/stat.h>

static const char *const usage =
    "usage: skinner export CHECKPOINT [--onnx FILE] [--c FILE]\n"
    "\n"
    "Writes the saved policy (a policy.safetensors, or the run folder holding it) for use\n"
    "outside skinner; at least one of:\n"
    "  --onnx FILE  an ONNX model (opset 17): inputs obs, state_in (recurrent cores) and\n"
    "               mask (masked envs); outputs each head's logits (or mean and log_std),\n"
    "               the value, the greedy action and state_out\n"
    "  --c FILE     one C99 header with the weights as static arrays and policy_act, needing\n"
    "               libm only\n"
    "docs/export.md describes both and their limits.\n";

int cmd_export(int argc, char **argv) {
    const char *checkpoint = NULL, *onnx_path = NULL, *c_path = NULL;
    cli_args args = {argc, 0, argv};
    while (args.index < args.argc) {
        const char *arg = argv[args.index], *value = NULL;
        bool missing = false;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            fputs(usage, stdout);
            return SK_EXIT_OK;
        }
        if (cli_flag(&args, "--onnx", &value, &missing) ||
            cli_flag(&args, "--c", &c_path, &missing)) {
            if (missing) return cli_error(SK_EXIT_USAGE, "%s needs a file name", arg);
            if (value) onnx_path = value;
            continue;
        }
        if (arg[0] == '-') {
            fputs(usage, stderr);
            return cli_error(SK_EXIT_USAGE, "unknown option '%s'", arg);
        }
        if (checkpoint) return cli_error(SK_EXIT_USAGE, "one CHECKPOINT only (got '%s' and '%s')",
                                         checkpoint, arg);
        checkpoint = arg;
        args.index++;
    }
    if (!checkpoint || (!onnx_path && !c_path)) {
        fputs(usage, stderr);
        return cli_error(SK_EXIT_USAGE, "expected a CHECKPOINT and --onnx FILE or --c FILE");
    }
    /* a run folder stands for its policy.safetensors */
    struct stat info;
    char in_folder[4200];
    if (stat(checkpoint, &info) == 0 && S_ISDIR(info.st_mode)) {
        snprintf(in_folder, sizeof in_folder, "%s/policy.safetensors", checkpoint);
        checkpoint = in_folder;
    }
    sk_loaded_policy lp;
    if (sk_policy_load(&lp, checkpoint, NULL) != SK_OK)
        return cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
    sk_status status = SK_OK;
    if (onnx_path && (status = sk_export_onnx(&lp, onnx_path)) == SK_OK)
        printf("wrote %s (ONNX) for %s\n", onnx_path, lp.env->id);
    if (status == SK_OK && c_path && (status = sk_export_c_header(&lp, c_path, checkpoint)) == SK_OK)
        printf("wrote %s (C header) for %s\n", c_path, lp.env->id);
    sk_loaded_policy_free(&lp);
    return status == SK_OK ? SK_EXIT_OK : cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
}
