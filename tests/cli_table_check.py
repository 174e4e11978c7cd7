#!/usr/bin/python3
"""Issue 53 ask 6: the usage text, the dispatch and the refusal of an unknown command come from
one table of commands (src/cli/main.c). Read from outside the program, as a user meets them:

- `skinner help` lists the commands (its "commands:" block, less the module placeholder NAME);
- each listed command dispatches to itself: `skinner NAME --help` exits 0 and prints its own
  usage ("usage: skinner NAME ..."), not the program's nor another command's;
- an unknown command exits 2, prints the usage on stderr, and its error names exactly the
  listed commands, in the usage's order.

Usage: cli_table_check.py 'PROGRAM' (the skinner program, one word or an emulator and the
program, as tests/CMakeLists.txt's SKINNER_TEST_PROGRAM).
"""
import re
import shlex
import subprocess
import sys

UNKNOWN = "frobnicate-no-such-command"


def run(program, *args):
    done = subprocess.run(program + list(args), capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout, done.stderr


def listed_commands(usage):
    """The command words of the usage's "commands:" block, in order."""
    block = re.search(r"^commands:\n(.*?)\n\n", usage, re.S | re.M)
    if not block:
        return None
    names = []
    for line in block.group(1).splitlines():
        word = line.split()[0] if line.strip() else ""
        if word and word.islower():  # NAME ... is the modules' place, not a command
            names.append(word)
    return names


def main():
    if len(sys.argv) != 2:
        print("usage: cli_table_check.py 'PROGRAM'", file=sys.stderr)
        return 2
    program = shlex.split(sys.argv[1])
    failures = []
    code, usage, err = run(program, "help")
    names = listed_commands(usage) if code == 0 else None
    if not names:
        print(f"FAIL: `skinner help` (exit {code}) lists no commands:\n{usage}{err}")
        return 1
    print(f"ok: `skinner help` lists {len(names)} commands: {', '.join(names)}")
    if len(set(names)) != len(names):
        failures.append(f"the usage lists a command twice: {names}")
    for name in names:
        code, out, err = run(program, name, "--help")
        first = out.splitlines()[0] if out else ""
        if code != 0 or not first.startswith(f"usage: skinner {name}"):
            failures.append(f"`skinner {name} --help` exit {code}, first line '{first}' (expected "
                            f"exit 0 and 'usage: skinner {name} ...'); stderr: {err.strip()}")
        else:
            print(f"ok: `skinner {name} --help` dispatches to {name}")
    code, out, err = run(program, UNKNOWN)
    refused = re.search(rf"error: unknown command '{UNKNOWN}' \(expected (.*), or a command a "
                        r"loaded module adds\)", err)
    if code != 2 or not refused or listed_commands(err) != names:
        failures.append(f"`skinner {UNKNOWN}`: exit {code} (expected 2, the usage on stderr and "
                        f"an error naming the known commands); stderr:\n{err}")
    elif refused.group(1).split(", ") != names:
        failures.append(f"the refusal names '{refused.group(1)}', the usage lists "
                        f"'{', '.join(names)}'")
    else:
        print(f"ok: an unknown command is refused naming the {len(names)} listed commands")
    if failures:
        print("FAIL:\n" + "\n".join(failures))
        return 1
    print("ok: usage, dispatch and the refusal agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
