"""python -m skinner ARGS: the skinner program with ARGS, as `skinner ARGS` runs it.

The process becomes the program (exec): its exit status, signals and output are the
program's own. The program is the one skinner.sweep runs (sweep._program says where it
looks: $SKINNER_PROGRAM, the build tree's, the install's or a wheel's, then PATH).
"""

import os
import sys

from .sweep import _program

if __name__ == "__main__":
    program = _program()
    os.execv(program, [program] + sys.argv[1:])
