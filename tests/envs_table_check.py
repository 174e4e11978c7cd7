#!/usr/bin/env python3
"""docs/envs.md's table of envs against what `skinner envs --json` lists.

Every env the program lists has a row (a MinAtar -v0 id on its -v1 row, whose actions cell
names the -v0 action space), and each row's id, alias, episode limit, solved threshold and,
for Discrete spaces, action count are the program's. Exits 1 naming each mismatch.
usage: envs_table_check.py --build DIR --source DIR
"""
import argparse
import json
import os
import re
import subprocess
import sys


def doc_rows(path):
    """The rows of the first table in path: a dict per row keyed by the header's cells."""
    rows, header = [], None
    for line in open(path, encoding="utf-8"):
        if not line.startswith("|"):
            if header:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
        elif not set("".join(cells)) <= set("-: "):
            rows.append(dict(zip(header, cells)))
    return rows


def number(text):
    match = re.search(r"-?[0-9][0-9.]*", text)
    return float(match.group()) if match else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True)
    parser.add_argument("--source", required=True)
    args = parser.parse_args()
    out = subprocess.run([f"{args.build}/skinner", "envs", "--json"], capture_output=True,
                         text=True, check=True).stdout
    envs = {e["id"]: e for e in map(json.loads, out.splitlines())}
    rows = {r["id"]: r for r in doc_rows(f"{args.source}/docs/envs.md")}
    errors = []
    for env_id, env in envs.items():
        row = rows.get(env_id)
        if row is None and env_id.endswith("-v0") and env_id[:-1] + "1" in rows:
            sibling = rows[env_id[:-1] + "1"]
            if f"-v0 {env['actions']}" not in sibling["actions"]:
                errors.append(f"{env_id}: the row of {env_id[:-1]}1 says '{sibling['actions']}' "
                              f"(expected '-v0 {env['actions']}' in it)")
            continue
        if row is None:
            errors.append(f"{env_id}: listed by `skinner envs` but has no row in docs/envs.md")
            continue
        if row["alias"] != (env["alias"] or ""):
            errors.append(f"{env_id}: alias '{row['alias']}' in the docs, '{env['alias']}' listed")
        if number(row["limit"]) != env["max_episode_steps"]:
            errors.append(f"{env_id}: limit {row['limit']} in the docs, "
                          f"{env['max_episode_steps']} listed")
        threshold = env["solved_threshold"]
        solved = number(row["solved at"])
        if (threshold is None) != (solved is None) or (threshold is not None and solved != threshold):
            errors.append(f"{env_id}: solved at '{row['solved at']}' in the docs, {threshold} listed")
        if env["actions"].startswith("Discrete(") and re.match(r"Discrete\(\d+\)", row["actions"]) \
                and not row["actions"].startswith(env["actions"]):
            errors.append(f"{env_id}: actions '{row['actions']}' in the docs, {env['actions']} listed")
    # the MuJoCo module is built only where MuJoCo is installed (docs/mujoco.md): without it,
    # its rows (those citing docs/mujoco.md) stay unlisted
    mujoco_built = os.path.exists(f"{args.build}/modules/skinner-mujoco.so")
    for env_id in rows:
        if env_id not in envs:
            if not mujoco_built and "docs/mujoco.md" in rows[env_id]["actions"]:
                continue
            errors.append(f"{env_id}: a row in docs/envs.md but not listed by `skinner envs`")
    for e in errors:
        print(f"envs_table_check: {e}", file=sys.stderr)
    print(f"envs_table_check: {len(rows)} rows, {len(envs)} envs, {len(errors)} mismatches")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
