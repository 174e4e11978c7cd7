#!/usr/bin/python3
"""Issue 53 ask 6: the sweep file's key lists are each one table (src/sweep/spec.c), from which
the reader and its refusals both come; checked from outside against docs/sweeps.md:

- the keys an unknown [sweep] key's refusal names are the keys of docs/sweeps.md's [sweep]
  table, and each of them is read as a key (a file setting it is not refused as unknown);
- likewise a tuned key's section (`distribution`, `min`, ...: the doc's sentence) and the
  distributions (the doc's distribution table);
- the choices a bad method, goal or cost is refused with are in the doc's row, and each is
  accepted.

No sweep runs: every file written here lacks something, so the program refuses it before any
trial. Usage: sweep_keys_check.py 'PROGRAM' DOCS/sweeps.md
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

HEAD = "[sweep]\nenv = CartPole-v1\nmetric = final_mean_return\ntrials = 3\n"
RANGE = "[ppo.learning_rate]\ndistribution = uniform\nmin = 0.1\nmax = 0.2\n"


def backticked(text):
    return re.findall(r"`([^`]+)`", text)


def doc_lists(doc):
    """The [sweep] keys, a tuned section's keys and the distributions, as the doc gives them."""
    lines = doc.splitlines()

    def table_keys(header):
        start = next(i for i, line in enumerate(lines) if line.startswith(header))
        keys = []
        for line in lines[start + 2:]:
            if not line.startswith("|"):
                break
            keys += backticked(line.split("|")[1])
        return keys

    section = next(line for line in lines if line.startswith("A tuned key's section sets"))
    distributions = table_keys("| distribution |")
    return table_keys("| `[sweep]` key |"), backticked(section), distributions


def main():
    if len(sys.argv) != 3:
        print("usage: sweep_keys_check.py 'PROGRAM' DOCS/sweeps.md", file=sys.stderr)
        return 2
    program = shlex.split(sys.argv[1])
    with open(sys.argv[2]) as f:
        doc = f.read()
    doc_sweep, doc_section, doc_dists = doc_lists(doc)
    doc = doc.splitlines()
    failures = []
    with tempfile.TemporaryDirectory(prefix="sweep_keys.") as tmp:
        def refusal(text):
            path = os.path.join(tmp, "sweep.ini")
            with open(path, "w") as f:
                f.write(text)
            done = subprocess.run(program + ["sweep", "--config", path, "--run-dir",
                                             os.path.join(tmp, "never", "run")],
                                  capture_output=True, text=True, timeout=60)
            if done.returncode == 0:
                failures.append(f"a sweep ran from:\n{text}")
            return done.stderr

        def listed(err, pattern, what):
            found = re.search(pattern, err)
            if not found:
                failures.append(f"{what}: no list in the refusal: {err.strip()}")
                return []
            return re.split(r", | or ", found.group(1))

        def agree(what, named, documented):
            if sorted(named) != sorted(documented):
                failures.append(f"{what}: the refusal names {named}, docs/sweeps.md {documented}")
            else:
                print(f"ok: {what}: the refusal and docs/sweeps.md name the same "
                      f"{len(named)}: {', '.join(named)}")

        named = listed(refusal(HEAD + "no_such_key = 1\n"),
                       r"unknown key 'no_such_key' in \[sweep\] \(expected (.*)\)", "[sweep]")
        agree("[sweep] keys", named, doc_sweep)
        for key in named:
            err = refusal(f"[sweep]\n{key} = @\n")
            if "unknown key" in err:
                failures.append(f"[sweep] {key}, named as a key, is refused as unknown: {err}")
        named = listed(refusal(HEAD + RANGE + "no_such_key = 1\n"),
                       r"unknown key 'no_such_key' in \[ppo.learning_rate\] \(expected (.*)\)",
                       "a tuned key's section")
        agree("a tuned key's section", named, doc_section)
        for key in named:
            err = refusal(f"{HEAD}[ppo.learning_rate]\n{key} = @\n")
            if "unknown key" in err:
                failures.append(f"[ppo.learning_rate] {key} is refused as unknown: {err}")
        named = listed(refusal(HEAD + RANGE.replace("uniform", "no_such_dist")),
                       r"distribution = 'no_such_dist' is unknown \(expected (.*)\)",
                       "distributions")
        agree("distributions", named, doc_dists)
        for dist in named:
            err = refusal(HEAD + f"[ppo.learning_rate]\ndistribution = {dist}\n")
            if "is unknown" in err:
                failures.append(f"distribution {dist} is refused as unknown: {err}")
        for key in ("method", "goal", "cost"):
            choices = listed(refusal(HEAD + f"{key} = no_such_choice\n"),
                             rf"{key} = 'no_such_choice' \(expected (.*)\)", key)
            row = next(line for line in doc if line.startswith(f"| `{key}` |"))
            if not choices or not set(choices) <= set(backticked(row.split("|")[2])):
                failures.append(f"{key}: the refusal names {choices}, docs/sweeps.md's row: {row}")
            else:
                print(f"ok: {key}'s choices {', '.join(choices)} are docs/sweeps.md's")
            for choice in choices:
                err = refusal(f"[sweep]\n{key} = {choice}\n")
                if f"{key} = '{choice}'" in err:
                    failures.append(f"{key} = {choice}, named as a choice, is refused: {err}")
    for failure in failures:
        print(f"FAIL: {failure}")
    if not failures:
        print("ok: the sweep file's refusals name what the reader accepts, as docs/sweeps.md "
              "does")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
