#!/usr/bin/env python3
"""Checks a workload's evidence against a checkout before it is used: every must_contain
string must name an existing file (paths) or occur literally in the repository's
source (anything else); every baseline file must exist.

    bench/verify_workload.py bench/workloads/go-stdlib.json --repo go-src=$(go env GOROOT)/src

Strings that only exist in codectx's answers (qualified names such as
`net/http.(*Server).ListenAndServe`) are reported as "not in source" for a human to
confirm against the code; the exit status is 1 when a path or baseline file is missing.
"""
import argparse
import json
import os
import subprocess
import sys


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("workload")
    parser.add_argument("--repo", action="append", default=[], help="KEY=PATH")
    args = parser.parse_args()
    roots = dict(pair.split("=", 1) for pair in args.repo)
    workload = json.load(open(args.workload))
    missing = 0
    for question in workload["questions"]:
        root = roots.get(question["repo"])
        if root is None:
            continue
        for path in question.get("baseline_files", []):
            if not os.path.isfile(os.path.join(root, path)):
                print(f"{question['id']}: baseline file {path} does not exist")
                missing += 1
        for needle in question.get("must_contain", []):
            looks_like_path = "/" in needle or needle.endswith((".py", ".go", ".rs", ".java", ".ts"))
            if looks_like_path and " " not in needle:
                found = any(
                    os.path.isfile(os.path.join(root, candidate))
                    for candidate in [needle]
                ) or subprocess.run(
                    ["find", root, "-path", f"*{needle}", "-print", "-quit"],
                    capture_output=True, text=True,
                ).stdout.strip() != ""
                if not found:
                    print(f"{question['id']}: path {needle!r} does not exist")
                    missing += 1
                continue
            grep = subprocess.run(
                ["grep", "-rqF", "--exclude-dir=site-packages", needle, root],
                capture_output=True,
            )
            if grep.returncode != 0:
                print(f"{question['id']}: {needle!r} is not in source (check it by hand)")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
