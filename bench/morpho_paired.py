#!/usr/bin/env python3
"""Morpho-v0 controllers compared over the same evaluation episodes.

`skinner eval Morpho-v0 ... --episodes N --seed S --trace NAME.jsonl` gives every controller the
same N hosts (episode k: the same initialisation and data order), so the differences between
two controllers can be taken episode by episode: their standard error is that of the paired
differences, not the two spreads combined.

usage: bench/morpho_paired.py LABEL=TRACE.jsonl [LABEL=TRACE.jsonl ...]
Prints, as markdown: each controller's test accuracy (mean and standard error over the
episodes), extra parameters, fossils, op distribution; then every pair's mean difference in
test accuracy, its paired standard error and the ratio of the two.
"""
import json
import math
import sys
from collections import Counter


def read(path):
    ends, ops = {}, Counter()
    with open(path) as f:
        for line in f:
            row = json.loads(line)
            if row.get("end"):  # eval runs each episode on its own env: (env, episode) names it
                ends[(row["env"], row["episode"])] = row
            elif "op" in row:
                ops[row["op"]] += 1
    return ends, ops


def mean_se(values):
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, float("nan")
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, math.sqrt(var / n)


def main(args):
    if not args or any("=" not in a for a in args):
        sys.exit(__doc__)
    runs = []
    for arg in args:
        label, path = arg.split("=", 1)
        ends, ops = read(path)
        if not ends:
            sys.exit(f"{path}: no episode ends in this trace (was it written by --trace?)")
        runs.append((label, ends, ops))
    episodes = sorted(set.intersection(*(set(e) for _, e, _ in runs)))
    print(f"{len(episodes)} episodes seen by every controller\n")
    print("| controller | test accuracy | extra parameters | fossils | ops |")
    print("| --- | --- | --- | --- | --- |")
    for label, ends, ops in runs:
        acc = [100 * ends[k]["test_acc"] for k in episodes]
        m, se = mean_se(acc)
        extra = sum(ends[k]["extra_params"] for k in episodes) / len(episodes)
        fossils = sum(ends[k]["fossils"] for k in episodes) / len(episodes)
        total = sum(ops.values())
        dist = ", ".join(f"{op} {100 * c / total:.1f}%" for op, c in ops.most_common())
        print(f"| {label} | {m:.2f}% ± {se:.2f} | {extra:,.0f} | {fossils:.2f} | {dist} |")
    print("\n| pair | mean difference (points) | paired standard error | difference / SE |")
    print("| --- | --- | --- | --- |")
    for i, (a, ea, _) in enumerate(runs):
        for b, eb, _ in runs[i + 1:]:
            diff = [100 * (ea[k]["test_acc"] - eb[k]["test_acc"]) for k in episodes]
            m, se = mean_se(diff)
            print(f"| {a} − {b} | {m:+.2f} | {se:.2f} | {m / se if se > 0 else float('inf'):+.1f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
