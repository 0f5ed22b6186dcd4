#!/usr/bin/env python3
"""The depth table of the languages read through query files (docs/indexing.md,
"Languages by query files"): one real project per language from bench/corpus.toml
(`make corpus`), indexed cold by `codectx index`; per language, the files and symbols it
gave, the indexing speed of the whole project, the tests found, and the call sites by how
they resolved (resolved: through scopes, receivers, imports; name_match: the only
callable of that name; unresolved: to a name outside the graph).

  bench/languages.py --codectx target/release/codectx --corpus ~/.cache/codectx/corpus
  (`make bench-languages`)
"""

import argparse
import pathlib
import re
import sqlite3
import subprocess
import sys
import tempfile

# (language as the graph names it, project path under the corpus)
PROJECTS = [
    ("c", "debian/zlib-1.2.13.dfsg"),
    ("cpp", "debian/fmtlib-9.1.0+ds1"),
    ("cpp", "debian/googletest-1.12.1"),
    ("csharp", "python/pythonnet-3.0.5"),
    ("ruby", "debian/ruby-rack-2.2.22"),
    ("php", "debian/php-monolog-2.9.1"),
    ("kotlin", "maven/okhttp-4.12.0"),
    ("swift", "npm/expo-modules-core-2.2.3"),
    ("scala", "maven/cats-core_2.13-2.10.0"),
    ("bash", "debian/bash-completion-2.11"),
    ("lua", "debian/lua-penlight-1.13.1"),
    ("elixir", "debian/elixir-lang-1.14.0.dfsg"),
    ("protobuf", "python/googleapis-common-protos-1.66.0"),
]
CONFIDENCE = {1: "resolved", 2: "name_match", 3: "unresolved", 4: "dispatch"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--codectx", default="target/release/codectx")
    parser.add_argument("--corpus", default="~/.cache/codectx/corpus")
    args = parser.parse_args()
    corpus = pathlib.Path(args.corpus).expanduser()
    print("| language | project | files | files/s (whole project) | symbols | tests | calls | resolved | name_match | unresolved |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for language, project in PROJECTS:
        with tempfile.TemporaryDirectory() as data:
            key = re.sub(r"[^a-z0-9-]", "-", project.split("/")[-1].lower())
            run = subprocess.run(
                [args.codectx, "index", "--data", data, "--name", key, str(corpus / project)],
                check=True, capture_output=True, text=True)
            speed = re.search(r"\(([\d.]+) files/s\)", run.stdout + run.stderr)
            db = sqlite3.connect(pathlib.Path(data) / "graph.db")
            files = db.execute(
                "select count(*) from nodes where kind = 'file' and language = ?", (language,)).fetchone()[0]
            symbols, tests = db.execute(
                "select count(*), coalesce(sum(test), 0) from nodes where language = ? and kind in "
                "('function','method','type','interface','class','constant','variable')",
                (language,)).fetchone()
            calls = dict(db.execute(
                "select e.confidence, count(*) from edges e join nodes a on a.nid = e.src "
                "where e.kind = 10 and a.language = ? group by e.confidence", (language,)).fetchall())
            total = sum(calls.values()) or 1
            share = {name: 100.0 * calls.get(code, 0) / total for code, name in CONFIDENCE.items()}
            print(f"| {language} | {project.split('/')[-1]} | {files} | {speed.group(1) if speed else '?'} | "
                  f"{symbols} | {tests} | {sum(calls.values())} | {share['resolved']:.0f}% | "
                  f"{share['name_match']:.0f}% | {share['unresolved']:.0f}% |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
