"""Splits a cold index's perf samples by phase and kind of work.

    index_attribute.py INDEX_LOG STACKS HZ CORES

INDEX_LOG is `codectx index` stderr with RUST_LOG=codectx_index=debug; STACKS is
`perf script -F tid,time,ip,sym,dso` of a `perf record -k realtime --call-graph dwarf`
run, so sample times and log timestamps share the wall clock.
"""
import collections, datetime, re, sys

# The indexer's debug messages that end each phase, in order.
MARKS = [("walk", "walked and loaded the cache"), ("parse", "parsed"),
         ("resolve", "resolved"), ("write", "written")]

KINDS = [  # (label, patterns matched in a frame); the leaf frame is tried first.
    ("tree walks (cursor, node)", ["ts_tree_cursor", "ts_node_", "tree_sitter::Node",
                                   "tree_sitter::TreeCursor"]),
    ("tree-sitter parsing", ["ts_parser", "ts_lex", "ts_stack", "stack__iter", "stack_node",
                             "ts_subtree", "ts_language", "external_scanner", "ts_reduce",
                             "set_contains", "ts_tree_delete", "tree_sitter::Parser"]),
    ("tree-sitter queries", ["ts_query", "tree_sitter::Query"]),
    ("SQLite", ["sqlite3", "rusqlite"]),
    ("redaction, regex", ["regex", "aho_corasick", "codectx_index::redact"]),
    ("hashing", ["sha2::"]),
    # The allocators (glibc's for SQLite and tree-sitter, mimalloc for Rust) and copies;
    # not `alloc::` frames in general, which hold inlined iterator code.
    ("allocation, copies", ["malloc", "free", "realloc", "memcpy", "memmove", "memset",
                            "alloc::raw_vec", "alloc::alloc::", "__rust_", "mi_", "_int_",
                            "sysmalloc", "drop_in_place"]),
    ("resolver", ["codectx_index::resolve"]),
    ("extraction (our walks' own code)", ["codectx_index::lang", "codectx_index::parse_file"]),
    ("index cache", ["codectx_index::cache"]),
]


def classify(frames):
    for frame in frames:  # leaf first
        for label, patterns in KINDS:
            if any(p in frame for p in patterns):
                return label
    return "other code"


def log_marks(path):
    """(phase, end time in epoch seconds) for each mark found, in order."""
    ansi = re.compile(r"\x1b\[[0-9;]*m")
    marks = []
    with open(path, errors="replace") as f:
        for line in f:
            line = ansi.sub("", line)
            m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)Z\s+DEBUG\s+codectx_index:\s+(.*)", line)
            if not m:
                continue
            when = datetime.datetime.fromisoformat(m.group(1)[:26]).replace(
                tzinfo=datetime.timezone.utc).timestamp()
            for phase, message in MARKS:
                if m.group(2).startswith(message + " ") and all(p != phase for p, _ in marks):
                    marks.append((phase, when))
    return marks


def samples(path):
    """(time, tid, kernel leaf, frames leaf first) per sample."""
    out, frames, head = [], [], None
    def flush():
        if head is not None and frames:
            out.append((head[0], head[1], "kernel.kallsyms" in frames[0], frames[:]))
    with open(path, errors="replace") as f:
        for line in f:
            if not line.strip():
                flush(); frames.clear(); head = None
                continue
            # Frames start with a tab; a sample's first line with its thread id, which
            # perf pads with spaces to the width of the widest.
            if not line.startswith("\t"):
                flush(); frames.clear()
                m = re.match(r"\s*(\d+)\s+([0-9.]+):", line)
                head = (float(m.group(2)), int(m.group(1))) if m else None
                continue
            parts = line.strip().split(" ", 1)
            if len(parts) == 2:
                frames.append(parts[1])
    flush()
    return out


def main(log, stacks, hz, cores):
    hz, cores = float(hz), int(cores)
    all_samples = samples(stacks)
    if not all_samples:
        sys.exit("index_attribute.py: no samples")
    start = min(s[0] for s in all_samples)
    end = max(s[0] for s in all_samples)
    bounds, previous = [], start
    for phase, when in log_marks(log):
        bounds.append((phase, previous, when))
        previous = when
    bounds.append(("finish", previous, end))
    print(f"samples: {len(all_samples)} at {hz:.0f} Hz, {cores} cores\n")
    print("| phase | wall s | CPU s | cores busy | threads | top kinds of work |")
    print("|---|---:|---:|---:|---:|---|")
    for phase, lo, hi in bounds:
        # The last phase keeps the last sample (its end is that sample's time).
        inside = [s for s in all_samples if lo <= s[0] < hi or (phase == "finish" and s[0] == hi)]
        wall = max(hi - lo, 1e-9)
        cpu = len(inside) / hz
        kinds = collections.Counter(
            "kernel" if kernel else classify(frames) for _, _, kernel, frames in inside)
        threads = len({tid for _, tid, _, _ in inside})
        top = ", ".join(f"{k} {100*n/max(len(inside),1):.0f}%" for k, n in kinds.most_common(4))
        print(f"| {phase} | {wall:.2f} | {cpu:.2f} | {cpu/wall:.2f} of {cores} | {threads} | {top} |")
    kinds = collections.Counter(
        "kernel" if kernel else classify(frames) for _, _, kernel, frames in all_samples)
    print("\n| kind of work (whole run) | CPU s | share |\n|---|---:|---:|")
    for k, n in kinds.most_common():
        print(f"| {k} | {n/hz:.2f} | {100*n/len(all_samples):.1f}% |")


main(*sys.argv[1:5])
