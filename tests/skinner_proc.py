"""How the Python tests start skinner, wait for it and report on it: one copy of what
test_line_output.py, test_offpolicy_views.py, test_serve.py and test_prover_run.py each wrote
for themselves.

    import skinner_proc
    from skinner_proc import check
    done = skinner_proc.run([skinner, "train", "CartPole-v1"], timeout=300)
    check(done.returncode == 0, f"train exits 0 ({done.stderr.strip()[-300:]})")
    skinner_proc.finish()  # exit 1 naming the first miss, or "all checks passed"

- start() puts each command in its own process group (a new session) and remembers it. A
  group is killed whole: `skinner sweep`'s trials and a shell's children go with their
  parent. At the test's exit (one that raised or called sys.exit included), every group whose
  leader still runs is killed, so no child outlives the test. A SIGKILL of the test itself
  (ctest's timeout) runs no exit handler: keep the deadlines here below ctest's TIMEOUT.
- wait(), communicate() and run() take a timeout in seconds. Past it the group is killed and
  the test stops at once (exit 1) with a message naming the command and showing its output.
- check() prints each claim as "ok" or "FAIL" and keeps the misses for finish().
"""
import atexit
import os
import shlex
import signal
import subprocess
import sys

FAILS = []
_started = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILS.append(what)


def finish():
    """Exit 1 naming the first failed check, else print "all checks passed"."""
    if FAILS:
        print(f"FAIL: {len(FAILS)} checks, first: {FAILS[0]}")
        sys.exit(1)
    print("all checks passed")


def command(proc):
    return shlex.join(str(arg) for arg in proc.args) if isinstance(proc.args, list) else str(proc.args)


def start(argv, **popen):
    """subprocess.Popen(argv, **popen) in a process group of its own, killed at exit if it runs."""
    proc = subprocess.Popen(argv, start_new_session=True, **popen)
    _started.append(proc)
    return proc


def kill_group(proc):
    """SIGKILL to proc's whole process group (while its leader runs), then reap the leader."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait()


@atexit.register
def _kill_leftovers():
    for proc in _started:
        kill_group(proc)


def _timed_out(proc, timeout, output):
    kill_group(proc)
    shown = "".join((part.decode(errors="replace") if isinstance(part, bytes) else part)[-4000:]
                    for part in output if part)
    raise SystemExit(f"FAIL: did not end within {timeout} s (its process group is killed): "
                     f"{command(proc)}\n--- its output ---\n{shown}")


def wait(proc, timeout, output=""):
    """proc's exit status. Past timeout: its group is killed and the test fails, showing
    output (what the caller has read from it)."""
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _timed_out(proc, timeout, [output])


def communicate(proc, timeout, sent=None):
    """proc.communicate(sent): its (stdout, stderr) to the end. Past timeout: its group is
    killed and the test fails, showing what it printed."""
    try:
        return proc.communicate(sent, timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        _timed_out(proc, timeout, proc.communicate())


def run(argv, timeout, check=False, **popen):
    """As subprocess.run(argv, capture_output=True, text=True, **popen) with a timeout that
    kills the whole group and fails the test. check=True: a non-zero exit fails the test
    too, naming the command and showing its output. stdout/stderr may be given (DEVNULL)."""
    popen.setdefault("stdout", subprocess.PIPE)
    popen.setdefault("stderr", subprocess.PIPE)
    popen.setdefault("text", True)
    proc = start(argv, **popen)
    out, err = communicate(proc, timeout)
    if check and proc.returncode != 0:
        raise SystemExit(f"FAIL: exited {proc.returncode}: {command(proc)}\n--- stdout ---\n"
                         f"{(out or '')[-4000:]}\n--- stderr ---\n{(err or '')[-4000:]}")
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)
