#!/usr/bin/python3
"""Issue 31 ask 4: `skinner train` and `skinner eval` resolve env, plugin, config
and checkpoint once. Each command runs twice, outside the program's own code:

- under strace, counting the opens of every file it reads (the checkpoint, the
  run's config.ini, a --config file, the plugin .so): each is opened once (a
  plugin is loaded once: read for its ELF check, then mapped by dlopen);
- under gdb, counting the calls of the registry's name lookups (sk_env_find and
  sk_env_of_config, which holds the other's inlined body): one per command.

Usage: resolve_once.py SKINNER_BINARY GRIDWORLD_PLUGIN
Without strace or gdb the test skips loudly (exit 77), and fails under CI.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def skip(why):
    print(f"SKIP: {why}", file=sys.stderr)
    sys.exit(1 if os.environ.get("CI") else SKIP)


def run(argv, cwd):
    # under strace and gdb (ptrace) a sanitizer build's LeakSanitizer cannot run and aborts
    # the program: leaks are the other tests' business here
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS"), "detect_leaks=0"]))
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300, env=env)
    if done.returncode != 0:
        sys.exit(f"FAIL: {' '.join(argv)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return done


def reads_of(binary, args, cwd, paths):
    """How often the command opened each of paths for reading (strace, every thread)."""
    log = os.path.join(cwd, "strace.log")
    run(["strace", "-f", "-qq", "-e", "trace=open,openat", "-o", log, binary] + args, cwd)
    counts = {p: 0 for p in paths}
    wanted = {os.path.realpath(os.path.join(cwd, p)): p for p in paths}
    with open(log) as f:
        for line in f:
            found = re.search(r'open(?:at)?\((?:AT_FDCWD, )?"([^"]*)", ([A-Z_|]+)', line)
            if not found or "= -1" in line:
                continue
            path, flags = found.group(1), found.group(2)
            if "O_WRONLY" in flags or "O_RDWR" in flags:
                continue  # the run's own writes (config.ini, checkpoints) are not reads
            key = os.path.realpath(os.path.join(cwd, path))
            if key in wanted:
                counts[wanted[key]] += 1
    os.remove(log)
    return counts


LOOKUPS = ("sk_env_find", "sk_env_of_config")


def lookups_of(binary, args, cwd):
    """Calls of the registry's name lookups (gdb breakpoints, hit counts)."""
    gdb = ["gdb", "-nx", "-batch", "-ex", "set breakpoint pending on"]
    for k, name in enumerate(LOOKUPS, start=1):
        gdb += ["-ex", f"break {name}", "-ex", f"ignore {k} 1000000"]
    gdb += ["-ex", "run", "-ex", "info breakpoints", "--args", binary] + args
    out = run(gdb, cwd).stdout
    if "exited normally" not in out:
        sys.exit(f"FAIL: {' '.join(args)} under gdb did not exit normally:\n{out[-3000:]}")
    hits = {name: 0 for name in LOOKUPS}
    current = None
    for line in out.splitlines():
        # "<sk_env_find+4>" without debug info, "in sk_env_find at registry.c:306" with it
        found = re.search(r"<(\w+)(?:\+\d+)?>|\bin (\w+) at ", line)
        if found and (found.group(1) or found.group(2)) in hits:
            current = found.group(1) or found.group(2)
        found = re.search(r"already hit (\d+) time", line)
        if found and current:
            hits[current] = int(found.group(1))
    return hits


def main():
    binary, plugin = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    for tool in ("strace", "gdb"):
        if not shutil.which(tool):
            skip(f"{tool} is not installed (apt-get install {tool})")
    failures = []
    with tempfile.TemporaryDirectory(prefix="resolve_once.") as work:
        with open(os.path.join(work, "short.ini"), "w") as f:
            f.write("[train]\ntotal_steps = 2048\n[env]\nnum_envs = 8\n")
        steps = ["--quiet", "--threads", "1"]
        ckpt, grid_ckpt = "run/policy.safetensors", "grid/policy.safetensors"
        cases = [
            # (what, argv, {file: opens expected})
            ("train with --config",
             ["train", "CartPole-v1", "--config", "short.ini", "--run-dir", "run"] + steps,
             {"short.ini": 1}),
            ("train --resume",
             ["train", "CartPole-v1", "--resume", "run", "--total-steps", "4096"] + steps,
             {ckpt: 1, "run/config.ini": 1}),
            ("eval --checkpoint FILE",
             ["eval", "CartPole-v1", "--checkpoint", ckpt, "--episodes", "2"], {ckpt: 1}),
            ("eval --checkpoint RUN_DIR",
             ["eval", "CartPole-v1", "--checkpoint", "run", "--episodes", "2"], {ckpt: 1}),
            ("eval --policy random --config",
             ["eval", "CartPole-v1", "--policy", "random", "--config", "short.ini",
              "--episodes", "2"], {"short.ini": 1}),
            ("train FILE.so:ID",
             ["train", f"{plugin}:GridWorld-v0", "--config", "short.ini", "--run-dir", "grid"]
             + steps, {"short.ini": 1, plugin: 2}),
            ("train ID --resume (the run names its plugin)",
             ["train", "GridWorld-v0", "--resume", "grid", "--total-steps", "4096"] + steps,
             {grid_ckpt: 1, "grid/config.ini": 1, plugin: 2}),
            ("train FILE.so:ID --resume",
             ["train", f"{plugin}:GridWorld-v0", "--resume", "grid", "--total-steps", "6144"]
             + steps, {grid_ckpt: 1, "grid/config.ini": 1, plugin: 2}),
            ("eval ID --checkpoint RUN_DIR (the checkpoint names its plugin)",
             ["eval", "GridWorld-v0", "--checkpoint", "grid", "--episodes", "2"],
             {grid_ckpt: 1, plugin: 2}),
            ("eval --env-lib FILE ID --checkpoint FILE",
             ["--env-lib", plugin, "eval", "gridworld", "--checkpoint", grid_ckpt,
              "--episodes", "2"], {grid_ckpt: 1, plugin: 2}),
        ]
        for what, args, expected in cases:
            opens = reads_of(binary, args, work, list(expected))
            for path, want in expected.items():
                label = os.path.basename(path) if path == plugin else path
                status = "ok" if opens[path] == want else "FAIL"
                print(f"{status}: {what}: {label} opened {opens[path]} time(s) (expected {want})")
                if opens[path] != want:
                    failures.append(f"{what}: {label} opened {opens[path]} times, expected {want}")
            if "--run-dir" in args:  # the traced run wrote its folder: the rerun replaces it
                args = args + ["--force"]
            hits = lookups_of(binary, args, work)
            total = sum(hits.values())
            detail = ", ".join(f"{name} {count}" for name, count in hits.items())
            status = "ok" if total == 1 else "FAIL"
            print(f"{status}: {what}: {total} env lookup(s) by name ({detail}; expected 1)")
            if total != 1:
                failures.append(f"{what}: the env was looked up by name {total} times ({detail}), "
                                "expected once")
    if failures:
        print("FAIL:\n  " + "\n  ".join(failures), file=sys.stderr)
        return 1
    print(f"all {len(cases)} commands resolve once")
    return 0


if __name__ == "__main__":
    sys.exit(main())
