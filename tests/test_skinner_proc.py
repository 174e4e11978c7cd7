#!/usr/bin/python3
"""tests/skinner_proc.py, the Python tests' process helper, against what /proc says.

Each case runs a small Python program using the helper in a child interpreter (the helper
exits the test on a timeout) and a shell that leaves a grandchild behind, as `skinner sweep`
leaves its trials and a docs shell line its skinner:
- run() past its timeout exits 1 naming the command and showing what it printed, and the
  grandchild is gone. The control, subprocess.run(timeout=...), leaves it running: the
  liveness check can tell.
- a test that raises with a command still running: the command's whole group is gone after.
- run(check=True) on a failing command exits 1 with its status and its stderr.
- check() and finish(): exit 1 naming the first miss, 0 and "all checks passed" otherwise.

usage: test_skinner_proc.py      Exit 0 when all hold, 1 naming the first miss.
"""
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from skinner_proc import check, finish  # noqa: E402


def gone(pid, within):
    """Whether pid has ended (a zombie has) within `within` seconds."""
    deadline = time.time() + within
    while True:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        if time.time() > deadline:
            return False
        time.sleep(0.05)


def child(program):
    """Run program (Python using skinner_proc) in a fresh interpreter; its CompletedProcess."""
    head = f"import sys\nsys.path.insert(0, {HERE!r})\nimport skinner_proc, subprocess\n"
    return subprocess.run([sys.executable, "-c", head + program], capture_output=True,
                          text=True, timeout=30)


def spawner(pid_file):
    """A shell that prints, starts a grandchild writing its pid to pid_file, and sleeps."""
    return ["sh", "-c", f"echo started-{os.getpid()}; sleep 60 & echo $! > {pid_file}; sleep 60"]


def grandchild(pid_file):
    with open(pid_file) as f:
        return int(f.read())


def main():
    tmp = tempfile.mkdtemp(prefix="skinner-proc-")
    pid_file = os.path.join(tmp, "pid")

    done = child(f"skinner_proc.run({spawner(pid_file)!r}, timeout=1)\nprint('not reached')")
    pid = grandchild(pid_file)
    check(done.returncode == 1 and "not reached" not in done.stdout,
          f"run() past its timeout fails the test ({done.returncode})")
    check("did not end within 1 s" in done.stderr and f"echo started-{os.getpid()}" in done.stderr,
          f"the message names the command ({done.stderr.strip()[:200]})")
    check(f"\nstarted-{os.getpid()}" in done.stderr, "the message shows what the command printed")
    check(gone(pid, 5), f"the timed-out command's grandchild {pid} is killed with it")

    os.unlink(pid_file)
    done = child(f"try:\n    subprocess.run({spawner(pid_file)!r}, timeout=1, "
                 "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
                 "except subprocess.TimeoutExpired:\n    pass")
    pid = grandchild(pid_file)
    check(not gone(pid, 0.5), f"control: subprocess.run's timeout leaves grandchild {pid} running")
    if not gone(pid, 0):
        os.kill(pid, 9)

    os.unlink(pid_file)
    done = child(f"proc = skinner_proc.start({spawner(pid_file)!r}, stdout=subprocess.DEVNULL)\n"
                 f"import os, time\nwhile not os.path.exists({pid_file!r}) or not open({pid_file!r}).read():\n"
                 "    time.sleep(0.02)\nprint(proc.pid, flush=True)\nraise RuntimeError('a test that raised')")
    pid = grandchild(pid_file)
    leader = int(done.stdout.split()[0]) if done.stdout.split() else 0
    check(done.returncode == 1 and "a test that raised" in done.stderr,
          f"the program raised ({done.returncode})")
    check(leader and gone(leader, 5) and gone(pid, 5),
          f"a raising test leaves neither the command {leader} nor its grandchild {pid} running")

    done = child("skinner_proc.run(['sh', '-c', 'echo to-stdout; echo to-stderr >&2; exit 3'], "
                 "timeout=30, check=True)")
    check(done.returncode == 1 and "exited 3" in done.stderr and "to-stderr" in done.stderr
          and "to-stdout" in done.stderr and "exit 3" in done.stderr,
          f"run(check=True) names the command, its status and output ({done.stderr.strip()[:200]})")

    done = child("skinner_proc.check(True, 'first')\nskinner_proc.check(False, 'second')\n"
                 "skinner_proc.check(False, 'third')\nskinner_proc.finish()")
    check(done.returncode == 1 and "FAIL: 2 checks, first: second" in done.stdout,
          f"finish() exits 1 naming the first miss ({done.stdout.strip()[-80:]})")
    done = child("skinner_proc.check(True, 'first')\nskinner_proc.finish()")
    check(done.returncode == 0 and done.stdout.endswith("all checks passed\n"),
          f"finish() passes when every check held ({done.returncode})")
    subprocess.run(["rm", "-rf", tmp])
    finish()


if __name__ == "__main__":
    main()
