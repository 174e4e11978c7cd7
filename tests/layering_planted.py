#!/usr/bin/python3
"""Issue 31 ask 8: the layering check fails on a planted violation. Copies the
tree's sources and docs/architecture.md to a temporary folder, checks that the
copy passes, then plants one violation of each rule at a time (an include
against the order, a module including a private header, a neutral layer naming
an env in code and in a string, a command including what the entry main.c
defines, the CLI's helpers including a command, a folder in no layer, a stale
exception) and
checks that tests/layering_check.py exits 1 naming the file, the line and the
rule of each.

Usage: layering_planted.py (the repository is the one this file is in)
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
CHECKER = os.path.join(HERE, "layering_check.py")


def copy_tree(dest):
    for top in ("src", "include", "modules"):
        for folder, _, files in os.walk(os.path.join(REPO, top)):
            # every folder, even one without C (modules/mujoco/models' MJCF files): a declared
            # module folder must exist in the copy as in the tree
            os.makedirs(os.path.join(dest, os.path.relpath(folder, REPO)), exist_ok=True)
            for name in files:
                if name.endswith((".c", ".h")):
                    source = os.path.join(folder, name)
                    target = os.path.join(dest, os.path.relpath(source, REPO))
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    shutil.copyfile(source, target)
    os.makedirs(os.path.join(dest, "docs"))
    shutil.copyfile(os.path.join(REPO, "docs", "architecture.md"),
                    os.path.join(dest, "docs", "architecture.md"))


def run_checker(root):
    done = subprocess.run([sys.executable, CHECKER, "--root", root], capture_output=True,
                          text=True, timeout=120)
    return done.returncode, done.stdout + done.stderr


def append(root, path, text):
    """Appends a line to path; returns its line number."""
    full = os.path.join(root, path)
    with open(full) as f:
        content = f.read()
    if content and not content.endswith("\n"):
        content += "\n"
    with open(full, "w") as f:
        f.write(content + text + "\n")
    return content.count("\n") + 1


def main():
    failures = []
    with tempfile.TemporaryDirectory(prefix="layering_planted.") as clean:
        copy_tree(clean)
        code, out = run_checker(clean)
        if code != 0:
            print(f"FAIL: the unplanted copy does not pass (exit {code}):\n{out}")
            return 1
        print("ok: the unplanted copy passes")
        module = sorted(d for d in os.listdir(os.path.join(clean, "modules"))
                        if os.path.isdir(os.path.join(clean, "modules", d)))[0]
        module_file = next(f"modules/{module}/{name}"
                           for name in sorted(os.listdir(os.path.join(clean, "modules", module)))
                           if name.endswith(".c"))

        def plant_line(path, text):
            return lambda root: f"{path}:{append(root, path, text)}"

        def plant_folder(root):
            os.makedirs(os.path.join(root, "src", "extra"))
            with open(os.path.join(root, "src", "extra", "extra.c"), "w") as f:
                f.write("int sk_extra;\n")
            return "src/extra/:0"

        def plant_stale_allow(root):
            doc = os.path.join(root, "docs", "architecture.md")
            with open(doc) as f:
                text = f.read()
            text = text.replace("neutral core vec train cli",
                                "neutral core vec train cli\n"
                                "allow src/core/core.c order ../train/gone.h   a planted stale one")
            with open(doc, "w") as f:
                f.write(text)
            return "docs/architecture.md"

        def plant_entry(root):
            """main.c defines a helper again and cli.h declares it (issue 53 ask 6's layout):
            every command that includes cli.h is named."""
            append(root, "src/cli/main.c", "int cli_planted_helper(void) { return 0; }")
            append(root, "src/cli/cli.h", "int cli_planted_helper(void);")
            with open(os.path.join(root, "src", "cli", "check.c")) as f:
                line = f.read().split("\n").index('#include "cli.h"') + 1
            return f"src/cli/check.c:{line}"

        plants = [
            ("order", "core includes train",
             plant_line("src/core/core.c", '#include "../train/trainer_internal.h"')),
            ("order", "the kit includes a private header",
             plant_line("include/skinner/env.h", '#include "../../src/core/core.h"')),
            ("order", "nn includes its peer vec",
             plant_line("src/nn/nn.c", '#include "../vec/vec_internal.h"')),
            ("private", "a module includes src/",
             plant_line(module_file, '#include "../../src/core/core.h"')),
            ("names", "train names a module's identifier",
             plant_line("src/train/trainer.c", "static int prover_depth_limit;")),
            ("names", "the CLI names an env in a string",
             plant_line("src/cli/main.c", 'static const char *g_example = "Morpho-v0";')),
            ("names", "vec includes a module's header by name",
             plant_line("src/vec/vec.c", '#include "kb.h"')),
            ("order", "policy includes a module's header by its path under modules/",
             plant_line("src/policy/policy.c", '#include "minatar/minatar.h"')),
            ("entry", "a command includes a header declaring what main.c defines", plant_entry),
            ("base", "the CLI's helpers include a command's header",
             plant_line("src/cli/cli.c", '#include "commands.h"')),
            ("drift", "a folder in no layer", plant_folder),
            ("drift", "a stale exception", plant_stale_allow),
        ]
        for rule, what, plant in plants:
            with tempfile.TemporaryDirectory(prefix="layering_planted.") as root:
                shutil.copytree(clean, root, dirs_exist_ok=True)
                where = plant(root)
                code, out = run_checker(root)
                expected = f"{where}: {rule}:" if where != "docs/architecture.md" else \
                    "docs/architecture.md: drift:"
                ok = code == 1 and expected in out
                print(f"{'ok' if ok else 'FAIL'}: {what}: exit {code}, "
                      f"{'names' if expected in out else 'does not name'} '{expected}'")
                if not ok:
                    failures.append(f"{what}: expected exit 1 naming '{expected}', got exit "
                                    f"{code}:\n{out}")
    if failures:
        print("FAIL:\n" + "\n".join(failures))
        return 1
    print(f"all {len(plants)} planted violations are named")
    return 0


if __name__ == "__main__":
    sys.exit(main())
