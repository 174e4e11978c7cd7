"""The parts of a sweep-against-preset results file that bench/sweep_minatar.sh and
bench/sweep_prover.sh share (issue 53 ask 9): the machine line, the sweep's trial count, and
the best config and the sweep's report at the end. Each script writes its own table between."""
import json
import os


def cpu_model():
    return next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                 if line.startswith("model name")), "?")


def head(f, d, title, command, load_before, load_after, seconds):
    """The title, the machine and command line, and the sweep's 'N trials (K ok) in S s'."""
    lines = [json.loads(line) for line in open(os.path.join(d, "sweep", "sweep.jsonl"))]
    ok = sum(1 for line in lines if line["status"] == "ok")
    f.write(f"# {title}\n\n")
    f.write(f"Machine: {cpu_model()}, {os.cpu_count()} cores, shared (load average {load_before} "
            f"before, {load_after} after). Command: {command}.\n\n")
    f.write(f"The sweep: {len(lines)} trials ({ok} ok) in {float(seconds):.0f} s. ")


def tail(f, d):
    """The best config and the sweep's report, as they were written."""
    f.write("The best config:\n\n```ini\n" + open(os.path.join(d, "sweep", "best.ini")).read()
            + "```\n\nThe report:\n\n```text\n" + open(os.path.join(d, "report.txt")).read()
            + "```\n")
