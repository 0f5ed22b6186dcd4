"""Attributes perf samples (perf script -F comm,tid,ip,sym,dso) to a service and to a kind of work."""
import collections, re, sys

SERVICES = [  # (label, patterns matched anywhere in a frame), innermost match wins
    # The load clients first: their rmcp and hyper frames would otherwise count as the
    # gateway's (they are the official rmcp client over reqwest, in the same process).
    ("bench MCP clients", ["codectx::bench", "bench::load", "codectx::mcp_client", "reqwest::",
                           "streamable_http_client", "RoleClient", "dispatch::Client", "hyper_util::client"]),
    ("gateway (MCP, HTTP, compression)", ["codectx_gateway", "codectx_compress", "rmcp::"]),
    ("authz", ["codectx_authz", "AuthzServiceServer"]),
    ("context-assembler", ["codectx_context_assembler", "ContextAssemblerServiceServer"]),
    ("graph-hydrator", ["codectx_graph_hydrator", "GraphHydratorServiceServer", "codectx_graph::"]),
    ("lexical-ranker", ["codectx_lexical_ranker", "codectx_lexical::", "LexicalRankerServiceServer"]),
    ("vector-gateway", ["codectx_vector_gateway", "codectx_vector::", "VectorGatewayServiceServer"]),
    ("embedding", ["codectx_embedding", "codectx_embed::", "EmbeddingServiceServer", "onnxruntime"]),
]
KINDS = [
    # Not "ring::" alone: "String::" holds it.
    ("TLS (rustls, crypto)", ["rustls", "aws_lc", "ring::aead", "ring::digest", "ring::hmac",
                              "ring::ec", "ring::rsa", "ring::rand", "ring_core", "aes", "gcm", "chacha"]),
    ("tenant context sign/verify", ["ed25519", "curve25519", "codectx_tenant"]),
    ("SQLite", ["sqlite3", "rusqlite"]),
    ("BM25 scoring", ["codectx_lexical::"]),
    ("vector scan", ["codectx_vector::embedded", "simsimd", "dot"]),
    ("ONNX Runtime", ["onnxruntime"]),
    ("protobuf encode/decode", ["prost::", "encoded_len", "merge_field", "::encode", "::decode"]),
    ("JSON (serde_json)", ["serde_json", "serde::"]),
    ("HTTP/2 framing (h2, hyper)", ["h2::", "hyper::", "hpack"]),
    ("allocation, copies", ["malloc", "free", "realloc", "memcpy", "memmove", "memset", "alloc::", "__rust_"]),
    ("tracing, metrics", ["tracing", "opentelemetry", "metrics"]),
    ("tokio scheduling", ["tokio::"]),
]

def classify(frames, table, default):
    for frame in frames:  # leaf first
        for label, patterns in table:
            if any(p in frame for p in patterns):
                return label
    return default

def main(path):
    by_service = collections.Counter()
    by_kind = collections.Counter()
    cross = collections.Counter()
    total = 0
    frames = []
    kernel = False
    def flush():
        nonlocal total
        if not frames:
            return
        total += 1
        service = classify(frames, SERVICES, "other (runtime, shared)")
        leaf = [frames[0]]
        if kernel_leaf[0]:
            kind = "kernel (syscalls, network, scheduling)"
        else:
            kind = classify(leaf, KINDS, None) or classify(frames[:6], KINDS, "other code")
        by_service[service] += 1
        by_kind[kind] += 1
        cross[(service, kind)] += 1
    kernel_leaf = [False]
    with open(path, errors="replace") as f:
        for line in f:
            if not line.strip():
                flush(); frames = []; kernel_leaf[0] = False
                continue
            if not line.startswith("\t") and not line.startswith(" "):
                flush(); frames = []; kernel_leaf[0] = False
                continue
            parts = line.strip().split(" ", 1)
            if len(parts) < 2:
                continue
            if not frames:
                kernel_leaf[0] = "kernel.kallsyms" in parts[1]
            frames.append(parts[1])
    flush()
    print(f"samples: {total}\n")
    print("| service | share of CPU |\n|---|---:|")
    for s, n in by_service.most_common():
        print(f"| {s} | {100*n/total:.1f}% |")
    print("\n| kind of work (leaf frame) | share of CPU |\n|---|---:|")
    for k, n in by_kind.most_common():
        print(f"| {k} | {100*n/total:.1f}% |")
    print("\n| service | top kinds |\n|---|---|")
    for s, _ in by_service.most_common():
        kinds = sorted(((n, k) for (ss, k), n in cross.items() if ss == s), reverse=True)[:5]
        print(f"| {s} | " + ", ".join(f"{k} {100*n/total:.1f}%" for n, k in kinds) + " |")

main(sys.argv[1])
