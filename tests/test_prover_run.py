#!/usr/bin/python3
"""skinner prover run (issue 38 ask 4), end to end with small budgets.

Usage: test_prover_run.py SKINNER SOURCE_DIR [countries|family|wn18rr|resume|settings|readme]

- countries, family, wn18rr: the command on ../shared/datasets/NAME; its report.json's ranking
  must equal an independent `skinner eval Prover-v0 ... --tune-on valid --json` of the
  run's own models, report.md must carry the same figures, the tuned choice must be at
  least KGE-only on valid, and every stage must have a time.
- resume: the process group is killed (SIGKILL) while the policy trains; the rerun must
  not redo the KGE (its model file untouched) and must redo the policy. Then a run stopped
  after the policy (--stop-after policy) is rerun: neither the KGE nor the policy is redone,
  and the ranking and report are written.
- readme: README.md's prover block run verbatim (full derived budgets on countries_s3).
- settings: the settings derived on countries_s3, family and WN18RR against the shipped
  presets (configs/prover_*.ini, kge_*.ini).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import skinner_proc  # noqa: E402

SKINNER, SOURCE = sys.argv[1], sys.argv[2]
WHICH = sys.argv[3] if len(sys.argv) > 3 else "countries"
DATASETS = os.path.join(SOURCE, "..", "shared", "datasets")
FOLDERS = {"countries": "countries_s3", "family": "family", "wn18rr": "wn18rr"}
BUDGETS = {
    # a second of KGE and a few seconds of policy; family's ranking on its first 200 queries
    "countries": ["--steps", "200000", "--kge-epochs", "10", "--kge-dim", "100"],
    "family": ["--steps", "150000", "--kge-epochs", "1", "--kge-dim", "100", "--queries", "200"],
    # WN18RR (40,559 entities, 86,835 facts): an epoch of a small KGE, a few seconds of policy,
    # the first 100 queries (~17 s with 2 threads, the KB's loading included)
    "wn18rr": ["--steps", "100000", "--kge-epochs", "1", "--kge-dim", "50", "--queries", "100"],
}


def fail(message):
    print(f"test_prover_run: FAIL: {message}")
    sys.exit(1)


def run(args, **kwargs):
    print("$ " + " ".join(args), flush=True)
    done = subprocess.run(args, capture_output=True, text=True, **kwargs)
    sys.stdout.write(done.stdout[-3000:])
    sys.stderr.write(done.stderr[-3000:])
    if done.returncode != 0:
        fail(f"{' '.join(args)} exited {done.returncode}")
    return done.stdout


def pipeline(name, out, extra=()):
    return [SKINNER, "prover", "run", "--dataset", os.path.join(DATASETS, FOLDERS[name]), "--run-dir", out,
            "--threads", "1"] + BUDGETS[name] + list(extra)


def close(a, b, what):
    if abs(a - b) > 5e-5:
        fail(f"{what}: {a} against {b}")


def end_to_end(name):
    out = tempfile.mkdtemp(prefix=f"skinner_prover_run_{name}_")
    try:
        started = time.time()
        printed = run(pipeline(name, out))
        print(f"{name}: {time.time() - started:.1f} s")
        for stage in ("settings", "kge", "policy", "rank"):
            if f"[{stage}]" not in printed:
                fail(f"no progress line of the {stage} stage")
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
        ranking = report["ranking"]
        # the same ranking, run apart from the pipeline on its models
        args = [SKINNER, "eval", "Prover-v0", "--checkpoint", os.path.join(out, "policy"),
                "--kge", os.path.join(out, "kge"), "--negatives", "100", "--tune-on", "valid",
                "--threads", "1", "--json"]
        if "--queries" in BUDGETS[name]:
            args += ["--queries", BUDGETS[name][BUDGETS[name].index("--queries") + 1]]
        again = json.loads(run(args))
        for scorer in ("kge", "hybrid"):
            for key in ("mrr", "hits1", "hits3", "hits10"):
                close(ranking[scorer][key], again[scorer][key], f"{scorer} {key}")
        close(ranking["mrr"], again["mrr"], "RL-only mrr")
        if ranking["tuned"]["choice"] != again["tuned"]["choice"]:
            fail(f"tuned {ranking['tuned']['choice']} against {again['tuned']['choice']}")
        tuned = ranking["tuned"]
        if tuned["chosen_valid_mrr"] < tuned["kge_valid_mrr"]:
            fail(f"the tuned choice is below KGE-only on valid: {tuned}")
        if ranking["negatives"] != 100 or ranking["split"] != "test":
            fail(f"ranked {ranking['split']} with {ranking['negatives']} negatives")
        if not ranking["proved_by_depth"]:
            fail("no proof rate by depth")
        for stage in ("settings", "kge", "policy", "rank"):
            if stage not in report["stage_seconds"]:
                fail(f"no time for stage {stage}")
        with open(os.path.join(out, "report.md")) as f:
            md = f.read()
        for label, fig in (("RL-only", ranking), ("KGE-only", ranking["kge"]),
                           ("hybrid (tuned)", ranking["hybrid"])):
            row = f"| {label} | {fig['mrr']:.4f} | {fig['hits1']:.4f} | {fig['hits3']:.4f} |"
            if row not in md:
                fail(f"report.md lacks the row '{row}'")
        if tuned["choice"] not in md:
            fail("report.md does not name the tuned choice")
        with open(os.path.join(out, "settings.ini")) as f:
            settings = f.read()
        for key in ("max_atoms", "max_successors", "max_depth", "total_steps", "embed"):
            if key not in settings:
                fail(f"settings.ini lacks {key}")
        print(f"{name}: RL-only {ranking['mrr']:.4f}, KGE-only {ranking['kge']['mrr']:.4f}, "
              f"hybrid {ranking['hybrid']['mrr']:.4f} ({tuned['choice']})")
    finally:
        shutil.rmtree(out, ignore_errors=True)


def resume():
    out = tempfile.mkdtemp(prefix="skinner_prover_run_resume_")
    model = os.path.join(out, "kge", "kge.safetensors")
    try:
        # killed while the policy trains
        args = pipeline("countries", out) + ["--steps", "20000000"]
        child = skinner_proc.start(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        deadline = time.time() + 120
        while not os.path.exists(os.path.join(out, "policy", "metrics.csv")):
            if time.time() > deadline or child.poll() is not None:
                skinner_proc.kill_group(child)
                print(child.communicate()[0].decode()[-3000:])
                fail("the policy stage did not start")
            time.sleep(0.2)
        time.sleep(1.0)
        skinner_proc.kill_group(child)
        if not os.path.exists(os.path.join(out, "stages", "kge.done")):
            fail("the KGE stage did not finish before the kill")
        if os.path.exists(os.path.join(out, "stages", "policy.done")):
            fail("the policy stage finished before the kill (kill sooner)")
        kge_time = os.stat(model).st_mtime_ns
        printed = run(pipeline("countries", out, ["--stop-after", "policy"]))
        if "[kge] done already" not in printed:
            fail("the rerun redid the KGE")
        if os.stat(model).st_mtime_ns != kge_time:
            fail("the rerun rewrote the KGE model")
        if "[policy] skinner train" not in printed:
            fail("the rerun did not redo the interrupted policy")
        if os.path.exists(os.path.join(out, "report.md")):
            fail("--stop-after policy wrote a report")
        # stopped after the policy: the rest only
        policy_time = os.stat(os.path.join(out, "policy", "policy.safetensors")).st_mtime_ns
        printed = run(pipeline("countries", out))
        for stage in ("settings", "kge", "policy"):
            if f"[{stage}] done already" not in printed:
                fail(f"the rerun redid the {stage} stage")
        if os.stat(os.path.join(out, "policy", "policy.safetensors")).st_mtime_ns != policy_time:
            fail("the rerun rewrote the policy")
        if os.stat(model).st_mtime_ns != kge_time:
            fail("the rerun rewrote the KGE model")
        if not os.path.exists(os.path.join(out, "report.md")):
            fail("no report after the rerun")
    finally:
        shutil.rmtree(out, ignore_errors=True)


def ini(path):
    """An INI file's keys as section.key -> value."""
    keys, section = {}, ""
    with open(path) as f:
        for line in f:
            line = line.split(";", 1)[0].strip()
            if line.startswith("["):
                section = line.strip("[]")
            elif "=" in line:
                key, value = (part.strip() for part in line.split("=", 1))
                keys[f"{section}.{key}"] = value
    return keys


def settings():
    """The derived settings against the shipped presets' on the three datasets: the sizes
    everywhere, and family's whole policy and KGE presets (docs/prover.md says what else
    differs: Countries' and WN18RR's negative episodes, WN18RR's steps)."""
    sizes = ["env.max_atoms", "env.max_successors", "env.max_depth", "policy.embed",
             "env.corrupt"]
    defaults = {"env.max_atoms": "10", "env.max_successors": "20", "env.max_depth": "20",
                "policy.embed": "32"}
    kge_keys = ["kge.model", "kge.dim", "kge.epochs", "kge.gamma", "kge.lr", "kge.negatives",
                "kge.batch_size", "kge.lr_schedule", "kge.adversarial_temperature"]
    cases = [("countries_s3", "prover_countries", None, sizes + ["train.total_steps"]),
             ("family", "prover_family", "kge_family",
              sizes + ["train.total_steps", "env.negative_ratio", "env.reward_type"]),
             ("wn18rr", "prover_wn18rr", "kge_wn18rr", sizes + ["env.reward_type"])]
    for folder, preset, kge_preset, keys in cases:
        out = tempfile.mkdtemp(prefix="skinner_prover_settings_")
        try:
            run([SKINNER, "prover", "run", "--dataset", os.path.join(DATASETS, folder),
                 "--run-dir", out, "--stop-after", "settings"])
            derived = ini(os.path.join(out, "settings.ini"))
            shipped = dict(defaults, **ini(os.path.join(SOURCE, "configs", preset + ".ini")))
            for key in keys:
                if derived.get(key) != shipped.get(key, "both" if key == "env.corrupt" else None):
                    fail(f"{folder}: derived {key} = {derived.get(key)}, the preset's "
                         f"{shipped.get(key)}")
            if kge_preset:
                derived = ini(os.path.join(out, "settings_kge.ini"))
                shipped = ini(os.path.join(SOURCE, "configs", kge_preset + ".ini"))
                for key in kge_keys:
                    if derived.get(key) is None and shipped.get(key) is None:
                        continue
                    same = derived.get(key) == shipped.get(key) or (
                        derived.get(key) and shipped.get(key) and
                        key not in ("kge.model", "kge.lr_schedule") and
                        float(derived[key]) == float(shipped[key]))
                    if not same:
                        fail(f"{folder}: derived {key} = {derived.get(key)}, the preset's "
                             f"{shipped.get(key)}")
            print(f"{folder}: the derived settings match the preset's {', '.join(keys)}"
                  f"{' and its KGE preset' if kge_preset else ''}")
        finally:
            shutil.rmtree(out, ignore_errors=True)


def readme():
    """README.md's prover block, verbatim, from a folder beside ../shared as the README's is."""
    with open(os.path.join(SOURCE, "README.md")) as f:
        text = f.read()
    section = text[text.index("## Proving, one command"):]
    block = section[section.index("```sh\n") + 6:section.index("```", section.index("```sh\n") + 6)]
    tmp = tempfile.mkdtemp(prefix="skinner_prover_readme_")
    try:
        os.symlink(os.path.realpath(os.path.join(SOURCE, "..", "shared")), os.path.join(tmp, "shared"))
        work = os.path.join(tmp, "work")
        os.mkdir(work)
        env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(SKINNER)) + os.pathsep +
                   os.environ.get("PATH", ""))
        for line in block.strip().splitlines():
            print("$ " + line, flush=True)
            done = subprocess.run(line, shell=True, cwd=work, env=env, capture_output=True, text=True)
            sys.stdout.write(done.stdout[-2000:])
            if done.returncode != 0:
                sys.stderr.write(done.stderr[-3000:])
                fail(f"README's '{line}' exited {done.returncode}")
        with open(os.path.join(work, "runs", "countries", "report.json")) as f:
            report = json.load(f)
        print(f"README's run: hybrid MRR {report['ranking']['hybrid']['mrr']:.4f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if WHICH == "resume":
    resume()
elif WHICH == "readme":
    readme()
elif WHICH == "settings":
    settings()
else:
    end_to_end(WHICH)
print("test_prover_run: ok")
