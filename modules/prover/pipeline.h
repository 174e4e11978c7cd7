/* `skinner prover ...`: the Prover module's command (pipeline.c), which
 * module.c exports as sk_module_command_prover (skinner/module.h). */
#ifndef SK_PROVER_PIPELINE_H
#define SK_PROVER_PIPELINE_H

#include "skinner/module.h"

/* argv[0] is "prover"; the program's exit code (0, 1 failure, 2 usage). */
int sk_prover_command(int argc, char **argv);

#endif
