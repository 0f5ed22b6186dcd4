#!/usr/bin/env python3
"""Chooses the code no-match floors (DENSE,LEXICAL) on the labelled calibration sets
bench/calibration/code.json and code-extra.json (224 tasks over eight projects), never on
the task workloads they are judged by.

For each pair of a grid it runs `codectx bench --workload SET --mode task --code-floors
DENSE,LEXICAL` on the hybrid arm for each set and counts the tasks answered
right: the labelled symbol and file among the returned entries, or `not_found` for a
task with no answer. Prints a table and the best point: among the points within
--tolerance right answers of the most (default 1: a difference of one answer in 224 is
below what the sets can tell apart), the one that answers more of the tasks that have an
answer (most of an agent's tasks do), then the most right, then the lowest floors.

  bench/calibrate-code.py --codectx target/release/codectx --corpus ~/.cache/codectx/corpus

(`make bench-calibrate-code`.)
"""

import argparse
import json
import pathlib
import subprocess
import sys

# Each labelled set, its report name and its repositories (pinned in bench/corpus.toml).
SETS = {
    "bench/calibration/code.json": ("code-calibration-v1", {
        "logrus": "go/logrus-v1.9.3",
        "click": "python/click-8.1.7",
        "commander": "npm/commander-12.1.0",
        "semver": "crate/semver-1.0.23",
    }),
    "bench/calibration/code-extra.json": ("code-calibration-extra", {
        "uuid": "go/uuid-v1.6.0",
        "attrs": "python/attrs-24.2.0",
        "chalk": "npm/chalk-5.3.0",
        "anyhow": "crate/anyhow-1.0.89",
    }),
}


def run(args, dense, lexical, weight):
    """Runs every set at one point of the grid; counts over all of them."""
    passed = {"found": 0, "none": 0}
    total = {"found": 0, "none": 0}
    for workload, (name, repos) in SETS.items():
        out = pathlib.Path(args.out) / f"d{dense}-l{lexical}-w{weight}"
        command = [args.codectx, "bench", "--workload", workload,
                   "--arms", "hybrid", "--mode", "task", "--code-floors", f"{dense},{lexical},{weight}",
                   "--data", args.data, "--out", str(out)]
        for key, path in repos.items():
            command += ["--repo", f"{key}={pathlib.Path(args.corpus).expanduser() / path}"]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        report = json.loads((out / f"{name}.json").read_text())
        for question in report["questions"]:
            if question["arm"] != "hybrid":
                continue
            kind = "none" if question.get("expected_result") == "none" or question.get("category") == "no_match" else "found"
            total[kind] += 1
            passed[kind] += bool(question["passed"])
    return passed, total


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--codectx", default="target/debug/codectx")
    parser.add_argument("--corpus", default="~/.cache/codectx/corpus")
    parser.add_argument("--data", default=".codectx-bench/calibration-data")
    parser.add_argument("--out", default=".codectx-bench/calibration")
    parser.add_argument("--dense", default="0.30,0.33,0.36,0.37,0.38,0.39,0.40,0.42,0.45")
    parser.add_argument("--lexical", default="1.2,1.6,2.0,2.5")
    parser.add_argument("--tolerance", type=int, default=1,
                        help="right answers below the most that still count as as good")
    parser.add_argument("--weight", default="0,0.3,1",
                        help="weights of a weak BM25 list when the dense leg matched")
    args = parser.parse_args()
    rows = []
    print("| dense | lexical | weak BM25 weight | right | found | not_found |")
    print("|---:|---:|---:|---:|---:|---:|")
    for dense in [float(x) for x in args.dense.split(",")]:
        for lexical in [float(x) for x in args.lexical.split(",")]:
            for weight in [float(x) for x in args.weight.split(",")]:
                passed, total = run(args, dense, lexical, weight)
                right = passed["found"] + passed["none"]
                rows.append((right, dense, lexical, weight, passed, total))
                print(f"| {dense:.3f} | {lexical:.2f} | {weight:.2f} | {right}/{total['found'] + total['none']} "
                      f"| {passed['found']}/{total['found']} | {passed['none']}/{total['none']} |", flush=True)
    # Within the tolerance of the most right: most found; then most right; then the lowest
    # floors and weight.
    most = max(r[0] for r in rows)
    good = [r for r in rows if r[0] >= most - args.tolerance]
    best = max(good, key=lambda r: (r[4]["found"], r[0], -r[1], -r[2], -r[3]))
    print(f"best: dense {best[1]:.3f}, lexical {best[2]:.2f}, weight {best[3]:.2f}: {best[0]} right")

if __name__ == "__main__":
    sys.exit(main())
