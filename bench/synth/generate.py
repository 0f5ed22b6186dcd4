"""A synthetic Python repository of a chosen size, for measuring codectx at scales no
repository on this machine reaches (the serving issue's 500k-symbol graph).

The code is shaped like an application's, not like noise: packages of modules, each
module with classes (some subclassing a class of another module, so IMPLEMENTS and
dispatch edges exist), methods calling each other and module functions, functions
calling functions of other modules through `from ... import`, docstrings, raised error
messages, constants, and test modules calling what they test. Names are drawn from a
fixed programming vocabulary, so the lexical index sees words that repeat as a real
code base's do. Everything derives from the seed: the same arguments write the same
files.

Beside the repository it writes a workload (the benchmark format of
bench/workloads/*.json) whose evidence comes from the generator's own ground truth:
the files that call a function, a class's subclasses, the file holding a docstring.

Usage: python3 generate.py OUT_DIR [--symbols N] [--seed S]
  OUT_DIR/repo           the repository
  OUT_DIR/workload.json  questions about it (repository key `synth`)
"""

import argparse
import json
import os
import random

VERBS = (
    "parse load read write build render fetch send validate encode decode merge split "
    "apply reset resolve compute update create delete open close flush format scan sort "
    "filter match normalize serialize register dispatch schedule retry cancel emit collect "
    "index lookup publish subscribe verify sign refresh rotate compress expand convert "
    "allocate release acquire check ensure prepare finalize attach detach mount bind"
).split()
NOUNS = (
    "header config token request response session cache buffer record schema table column "
    "query user account order invoice payment message event queue worker job task node edge "
    "graph path file stream chunk block frame packet socket channel policy rule key value "
    "entry item batch tree report metric counter timer lease lock snapshot journal segment "
    "cursor page tenant grant role credential certificate endpoint route handler listener "
    "template layout widget document attachment signature checksum manifest artifact build "
    "release migration index shard replica partition topic offset window"
).split()
ADJECTIVES = (
    "remote local cached pending active stale default primary secondary raw compact "
    "signed shared private public partial nested inline async"
).split()

SYMBOLS_PER_MODULE = 100  # about: 6 classes x (1 + 10 methods) + 30 functions + 4 constants
MODULES_PER_PACKAGE = 25


class Module:
    def __init__(self, package: str, name: str):
        self.package = package
        self.name = name
        self.path = f"{package}/{name}.py"
        self.dotted = f"{package}.{name}"
        self.functions: list[str] = []
        self.classes: list[tuple[str, list[str]]] = []
        self.constants: list[str] = []


def unique(rng: random.Random, taken: set, make) -> str:
    for _ in range(1000):
        name = make()
        if name not in taken:
            taken.add(name)
            return name
    raise RuntimeError("vocabulary exhausted")


def plan(symbols: int, rng: random.Random) -> list[Module]:
    count = max(1, round(symbols / SYMBOLS_PER_MODULE))
    modules: list[Module] = []
    packages = max(1, count // MODULES_PER_PACKAGE)
    for p in range(packages):
        package = f"{rng.choice(NOUNS)}_{rng.choice(NOUNS)}_{p}"
        taken: set = set()
        for _ in range(MODULES_PER_PACKAGE if p < packages - 1 else count - MODULES_PER_PACKAGE * (packages - 1)):
            name = unique(rng, taken, lambda: f"{rng.choice(NOUNS)}_{rng.choice(VERBS)}")
            module = Module(package, name)
            names: set = set()
            for _ in range(30):
                module.functions.append(unique(rng, names, lambda: f"{rng.choice(VERBS)}_{rng.choice(ADJECTIVES)}_{rng.choice(NOUNS)}"))
            for _ in range(6):
                cls = unique(rng, names, lambda: f"{rng.choice(ADJECTIVES).title()}{rng.choice(NOUNS).title()}{rng.choice(NOUNS).title()}")
                methods = sorted({f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}" for _ in range(10)})
                module.classes.append((cls, methods))
            for _ in range(4):
                module.constants.append(unique(rng, names, lambda: f"{rng.choice(ADJECTIVES).upper()}_{rng.choice(NOUNS).upper()}_LIMIT"))
            modules.append(module)
    return modules


def sentence(rng: random.Random, words: int) -> str:
    pool = VERBS + NOUNS + ADJECTIVES
    return " ".join(rng.choice(pool) for _ in range(words))


def write(out: str, modules: list[Module], rng: random.Random) -> dict:
    """Writes every module and its tests; returns the ground truth the workload needs."""
    callers: dict[str, set] = {}  # "dotted.function" -> files that call it
    subclasses: dict[str, list] = {}  # "dotted.Class" -> [(dotted, subclass)]
    docs: dict[str, str] = {}  # docstring -> file
    bases: dict[str, tuple] = {}  # (module path, class) -> (base module, base class)
    for module in modules:
        for cls, _ in module.classes:
            if rng.random() < 0.3:
                base = rng.choice(modules)
                if base is not module:
                    base_cls = rng.choice(base.classes)[0]
                    bases[(module.path, cls)] = (base, base_cls)
                    subclasses.setdefault(f"{base.dotted}.{base_cls}", []).append((module.dotted, cls))
    for module in modules:
        imported: dict[str, tuple[Module, str]] = {}
        others = [rng.choice(modules) for _ in range(6)]
        lines: list[str] = []
        body: list[str] = []

        own = set(module.functions) | {cls for cls, _ in module.classes} | set(module.constants)

        def import_alias(other: Module, name: str) -> str:
            """The name `name` of `other` is imported as: itself unless that is taken."""
            alias = name
            if alias in own or imported.get(alias, (other, name)) != (other, name):
                alias = f"{other.package}_{other.name}_{name}"
            imported[alias] = (other, name)
            return alias

        def call_target() -> str:
            if rng.random() < 0.5:
                return rng.choice(module.functions) + "(value)"
            other = rng.choice(others)
            if other is module:
                return rng.choice(module.functions) + "(value)"
            function = rng.choice(other.functions)
            alias = import_alias(other, function)
            callers.setdefault(f"{other.dotted}.{function}", set()).add(module.path)
            return f"{alias}(value)"

        for constant in module.constants:
            body.append(f"{constant} = {rng.randint(2, 4096)}")
        body.append("")
        for function in module.functions:
            doc = sentence(rng, 8)
            docs[doc] = module.path
            body.append("")
            body.append(f"def {function}(value, limit={rng.choice(module.constants)}):")
            body.append(f'    """{doc.capitalize()}."""')
            body.append("    if value is None:")
            body.append(f'        raise ValueError("{function.replace("_", " ")} needs a value below {{}}".format(limit))')
            for _ in range(rng.randint(1, 3)):
                body.append(f"    value = {call_target()}")
            body.append("    return value")
        for cls, methods in module.classes:
            base = bases.get((module.path, cls))
            body.append("")
            if base:
                base_module, base_cls = base
                alias = import_alias(base_module, base_cls)
                body.append(f"class {cls}({alias}):")
            else:
                body.append(f"class {cls}:")
            body.append(f'    """{sentence(rng, 10).capitalize()}."""')
            for i, method in enumerate(methods):
                body.append("")
                body.append(f"    def {method}(self, value):")
                if i + 1 < len(methods):
                    body.append(f"        value = self.{methods[i + 1]}(value)")
                body.append(f"        return {call_target()}")
        for alias, (other, name) in sorted(imported.items()):
            if alias == name:
                lines.append(f"from {other.dotted} import {name}")
            else:
                lines.append(f"from {other.dotted} import {name} as {alias}")
        text = f'"""{sentence(rng, 12).capitalize()}."""\n\n' + "\n".join(lines) + "\n\n" + "\n".join(body) + "\n"
        os.makedirs(os.path.join(out, module.package), exist_ok=True)
        with open(os.path.join(out, module.path), "w") as f:
            f.write(text)
        if rng.random() < 0.1:
            tests = rng.sample(module.functions, 5)
            test_text = f"from {module.dotted} import {', '.join(sorted(tests))}\n"
            for function in sorted(tests):
                test_text += f"\n\ndef test_{function}():\n    assert {function}(1) is not None\n"
                callers.setdefault(f"{module.dotted}.{function}", set()).add(f"tests/test_{module.package}_{module.name}.py")
            os.makedirs(os.path.join(out, "tests"), exist_ok=True)
            with open(os.path.join(out, "tests", f"test_{module.package}_{module.name}.py"), "w") as f:
                f.write(test_text)
    for package in sorted({m.package for m in modules}):
        open(os.path.join(out, package, "__init__.py"), "w").close()
    return {"callers": callers, "subclasses": subclasses, "docs": docs}


def workload(repo: str, truth: dict, rng: random.Random) -> dict:
    questions = []
    called = sorted(k for k, v in truth["callers"].items() if 2 <= len(v) <= 4)
    for n, target in enumerate(rng.sample(called, min(8, len(called)))):
        short = ".".join(target.split(".")[-2:])
        files = sorted(truth["callers"][target])
        questions.append({
            "id": f"SYN-C{n + 1:02}", "repo": "synth", "category": "callers", "expected_result": "found",
            "question": f"Which files call {short}?",
            "call": {"tool": "get_call_graph", "arguments": {"repository": "synth", "symbol": target, "direction": "callers"}},
            "must_contain": files, "must_not_contain": [], "baseline_files": files,
        })
    based = sorted(k for k, v in truth["subclasses"].items() if 1 <= len(v) <= 3)
    for n, target in enumerate(rng.sample(based, min(6, len(based)))):
        short = ".".join(target.split(".")[-2:])
        subs = [cls for _, cls in truth["subclasses"][target]]
        file = "/".join(target.split(".")[:-1]) + ".py"
        questions.append({
            "id": f"SYN-S{n + 1:02}", "repo": "synth", "category": "implementations", "expected_result": "found",
            "question": f"Which classes subclass {short}?",
            "call": {"tool": "get_symbol_context", "arguments": {"repository": "synth", "symbol": target}},
            "must_contain": [file] + subs, "must_not_contain": [], "baseline_files": [file],
        })
    for n, doc in enumerate(rng.sample(sorted(truth["docs"]), 6)):
        file = truth["docs"][doc]
        questions.append({
            "id": f"SYN-D{n + 1:02}", "repo": "synth", "category": "exact_lookup", "expected_result": "found",
            "question": f"Where is the function documented as: {doc}?",
            "call": {"tool": "search", "arguments": {"repository": "synth", "query": doc}},
            "must_contain": [file], "must_not_contain": [], "baseline_files": [file],
        })
    for question in questions:
        # The raw-file baseline (WORKLOAD.md): ceil(bytes / 4) of its files.
        question["baseline_tokens"] = sum(-(-os.path.getsize(os.path.join(repo, f)) // 4) for f in question["baseline_files"])
    return {
        "name": "synth-v1",
        "estimator": "bytes/4",
        "repos": [{"key": "synth", "language": "python", "source": "bench/synth/generate.py (seeded)"}],
        "questions": questions,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--symbols", type=int, default=500_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    repo = os.path.join(args.out, "repo")
    os.makedirs(repo, exist_ok=True)
    modules = plan(args.symbols, rng)
    truth = write(repo, modules, rng)
    with open(os.path.join(args.out, "workload.json"), "w") as f:
        json.dump(workload(repo, truth, rng), f, indent=1)
    print(f"{len(modules)} modules, about {len(modules) * SYMBOLS_PER_MODULE} symbols, in {repo}")


if __name__ == "__main__":
    main()
