"""skinner.sweep: `skinner sweep` from Python (docs/sweeps.md).

A sweep runs each trial as the `skinner` program (a trial that crashes cannot take the
caller down), so this runs that program too and reads back what it wrote.
"""

import json
import os
import shutil
import subprocess

_HERE = os.path.dirname(os.path.abspath(__file__))


def _program():
    """The skinner program: $SKINNER_PROGRAM, the build tree's (BUILD/python/skinner ->
    BUILD/skinner), an install's (PREFIX/lib/pythonX.Y/dist-packages/skinner ->
    PREFIX/bin/skinner) or a wheel's (VENV/lib/pythonX.Y/site-packages/skinner ->
    VENV/bin/skinner, the same four folders up), or the one on PATH."""
    candidates = [os.environ.get("SKINNER_PROGRAM"),
                  os.path.join(_HERE, "..", "..", "skinner"),
                  os.path.join(_HERE, "..", "..", "..", "..", "bin", "skinner"),
                  shutil.which("skinner")]
    for path in candidates:
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return os.path.realpath(path)
    raise FileNotFoundError("the skinner program is not found: set SKINNER_PROGRAM to its path")


def sweep(config=None, run_dir=None, resume=None, quiet=True):
    """Runs a sweep (config: the sweep file, run_dir: its new folder) or continues one
    (resume: its folder), then its report. Returns a dict: "trials", the finished trials
    as sweep.jsonl holds them (each a dict: trial, status, params, metric and cost or
    message); "best_config", the path of DIR/best.ini (None when no trial succeeded);
    "report", the report's text. Raises RuntimeError with the program's message when the
    sweep is refused or fails."""
    if resume is not None:
        if config is not None or run_dir is not None:
            raise ValueError("resume takes the sweep's own file: give no config or run_dir")
        args, folder = ["--resume", os.fspath(resume)], os.fspath(resume)
    else:
        if config is None or run_dir is None:
            raise ValueError("a new sweep needs config (the sweep file) and run_dir")
        args, folder = ["--config", os.fspath(config), "--run-dir", os.fspath(run_dir)], os.fspath(run_dir)
    program = _program()
    result = subprocess.run([program, "sweep"] + args + (["--quiet"] if quiet else []),
                            capture_output=quiet, text=True)
    if result.returncode != 0:
        raise RuntimeError((result.stderr or "").strip() or f"skinner sweep exited with {result.returncode}")
    report = subprocess.run([program, "sweep", "report", folder], capture_output=True, text=True)
    with open(os.path.join(folder, "sweep.jsonl"), encoding="utf-8") as lines:
        trials = [json.loads(line) for line in lines if line.strip()]
    best = os.path.join(folder, "best.ini")
    return {"trials": trials, "best_config": best if report.returncode == 0 else None,
            "report": report.stdout}
