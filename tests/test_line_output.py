#!/usr/bin/python3
"""Output into a pipe or a file arrives a line at a time, as on a terminal (issue 52 ask 7:
progress lines reached a redirected file in bursts). BUILD is the build folder.

- skinner train, stdout and stderr into one pipe: its progress lines arrive while it trains
  (at least two before it exits), a line at a time.
- skinner sweep, stdout into a pipe: its header line ('sweep of ...') arrives before its first
  trial has finished (before DIR/trial-0000/seed-1/summary.json exists); with stdout fully
  buffered it came only with the first trial's line.

Exit 0 when all hold, 1 naming the first miss.
"""
import os
import select
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import skinner_proc  # noqa: E402
from skinner_proc import check  # noqa: E402


def lines_with_times(proc, deadline):
    """(line, seconds since start, whether the process was still running) for each line."""
    start, out, pending = time.time(), [], b""
    while time.time() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.05)
        if not ready:
            continue
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:
            break
        running = proc.poll() is None
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            out.append((line.decode(), time.time() - start, running))
    return out


def main():
    skinner = os.path.join(sys.argv[1], "skinner")
    tmp = tempfile.mkdtemp(prefix="skinner-lines-")
    # one budget for both commands, ending before ctest's TIMEOUT (300 s): a hang is reported
    # here, naming its command, and its process group is killed
    budget_end = time.time() + 280

    run = os.path.join(tmp, "train")
    proc = skinner_proc.start([skinner, "train", "CartPole-v1", "--total-steps", "3000000",
                               "--train.stop_when_solved", "false", "--threads", "1",
                               "--run-dir", run], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    got = lines_with_times(proc, budget_end)
    skinner_proc.wait(proc, max(budget_end - time.time(), 5), "\n".join(line for line, _, _ in got[-40:]))
    progress = [(t, running) for line, t, running in got if " steps/s " in line]
    early = [t for t, running in progress if running]
    check(proc.returncode == 0, f"skinner train exits 0 ({proc.returncode})")
    check(len(early) >= 2, f"{len(early)} of {len(progress)} progress lines arrived while it "
          f"trained, at {[round(t, 1) for t in early]} s")

    sweep_ini = os.path.join(tmp, "sweep.ini")
    with open(sweep_ini, "w") as f:
        f.write("[sweep]\nenv = CartPole-v1\nmethod = random\nmetric = final_mean_return\n"
                "goal = max\ncost = seconds\ntrials = 1\ntrials_at_once = 1\n"
                "threads_per_trial = 1\nseeds_per_trial = 1\nseed = 1\n"
                "[train]\ntotal_steps = 100000\n"
                "[ppo.learning_rate]\ndistribution = log_uniform\nmin = 1e-3\nmax = 1e-2\n")
    sweep = os.path.join(tmp, "sweep")
    proc = skinner_proc.start([skinner, "sweep", "--config", sweep_ini, "--run-dir", sweep],
                              stdout=subprocess.PIPE)
    first = b""
    while not first.endswith(b"\n") and time.time() < budget_end:
        chunk = os.read(proc.stdout.fileno(), 1)
        if not chunk:
            break
        first += chunk
    summary = os.path.join(sweep, "trial-0000", "seed-1", "summary.json")
    trial_done = os.path.exists(summary)
    rest = skinner_proc.communicate(proc, max(budget_end - time.time(), 5))[0]
    check(first.startswith(b"sweep of CartPole-v1"), f"the sweep's first line is its header ({first!r})")
    check(not trial_done, "the header arrived before the first trial had finished")
    check(proc.returncode == 0 and b"trial    0" in rest, f"the sweep ran its trial ({proc.returncode})")
    subprocess.run(["rm", "-rf", tmp])
    skinner_proc.finish()


if __name__ == "__main__":
    main()
