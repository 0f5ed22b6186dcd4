"""codectx's MCP tools end to end through the official MCP Python SDK (PyPI `mcp`, 2.x).

Run by tests/tests/mcp.rs against a running stack indexed with tests/fixtures/go as
`shop`; not meant to be run by hand (the Rust test prepares tenants and keys).

  mcp_e2e.py tools --transport http --url URL --mode auto|legacy --key A --key-b B
  mcp_e2e.py tools --transport stdio --codectx BIN --data DIR --mode ... --key A --key-b B
  mcp_e2e.py probe --url URL --key K --expect 200|401
  mcp_e2e.py sessions --url URL --key A --key-b B

Every failed check raises; the exit status is what the Rust test asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

TOOLS = {
    "list_repositories",
    "describe_repository",
    "minimal_context",
    "search",
    "get_symbol_context",
    "get_call_graph",
    "get_pr_context",
    "get_code_snippet",
    "recall",
    "remember",
    "forget",
    "compress",
    "get_compression_stats",
}


def connect(args: argparse.Namespace, key: str) -> Client:
    if args.transport == "http":
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
        return Client(streamable_http_client(args.url, http_client=http), mode=args.mode)
    command = ["mcp", "--stdio", "--data", args.data, "--api-key-env", "CODECTX_API_KEY"]
    if args.models:
        command += ["--models", args.models]
    env = {**os.environ, "CODECTX_API_KEY": key}
    return Client(StdioServerParameters(command=args.codectx, args=command, env=env), mode=args.mode)


STRUCTURED = {"codectx/structured_content": True}


async def call(client: Client, tool: str, arguments: dict) -> tuple[bool, dict, str]:
    """One tools/call asking for the structured JSON too (as a program would)."""
    result = await client.call_tool(tool, arguments, meta=STRUCTURED)
    text = result.content[0].text if result.content else ""
    value = result.structured_content
    assert value is not None, f"{tool}: no structured content although _meta asked for it"
    # The text is the compact rendering for models: the status first, every entry's file.
    expect(text.startswith(f"status: {value['status']}\n"), f"{tool}: the text starts with the status", text)
    for entry in value.get("entries", []):
        if isinstance(entry, dict) and entry.get("path"):
            expect(entry["path"] in text, f"{tool}: the text names {entry['path']}", text)
    expect(not text.lstrip().startswith("{"), f"{tool}: the text is not the JSON again", text)
    return bool(result.is_error), value, text


async def call_text(client: Client, tool: str, arguments: dict) -> tuple[bool, str]:
    """One tools/call as an agent makes it: the text alone travels by default."""
    result = await client.call_tool(tool, arguments)
    expect(result.structured_content is None, f"{tool}: no structured content by default", result.structured_content)
    text = result.content[0].text if result.content else ""
    return bool(result.is_error), text


def expect(condition: bool, message: str, value: object = None) -> None:
    if not condition:
        raise AssertionError(f"{message}: {json.dumps(value)[:2000] if value is not None else ''}")


def names(items: list[dict]) -> list[str]:
    return sorted(item["qualified_name"] for item in items)


async def tenant_a(args: argparse.Namespace) -> None:
    async with connect(args, args.key) as client:
        listed = await client.list_tools()
        expect({t.name for t in listed.tools} == TOOLS, "tools/list", [t.name for t in listed.tools])
        for tool in listed.tools:
            expect(bool(tool.description), f"{tool.name} has a description")
            expect(tool.input_schema.get("type") == "object", f"{tool.name} has an object schema")

        error, value, _ = await call(client, "list_repositories", {})
        expect(not error and [r["name"] for r in value["entries"]] == ["shop"], "list_repositories", value)
        # Each entry names the policy its graph was indexed under (the empty policy's
        # fingerprint when the checkout has no .codectx.yaml).
        expect(all(len(r.get("policy", "")) == 12 for r in value["entries"]), "list_repositories policy", value)

        # describe_repository: the fixture's languages and how deeply each is read.
        error, value, text = await call(client, "describe_repository", {"repository": "shop"})
        go = [l for l in value.get("languages", []) if l["language"] == "go"]
        expect(not error and value["repository"]["name"] == "shop" and go and go[0]["depth"] == "deep"
               and go[0]["symbols"] > 0, "describe_repository", value)
        expect(value["repository"]["policy_fingerprint"].startswith(
            [r for r in (await call(client, "list_repositories", {}))[1]["entries"]][0]["policy"]),
            "describe_repository and list_repositories name the same policy", value)
        expect("go: " in text and "; deep: " in text, "describe_repository reads as text", text)

        # A callers query and a symbol-context query return exactly the expected entries.
        error, value, _ = await call(
            client, "get_call_graph", {"repository": "shop", "symbol": "NewServer", "direction": "callers"}
        )
        expect(not error and value["status"] == "ok", "get_call_graph", value)
        expect(
            names(value["entries"][0]["callers"])
            == ["example.com/shop/server.Run", "example.com/shop/server.TestServe"],
            "callers of NewServer",
            value,
        )
        expect("callees" not in value["entries"][0], "callers only", value)
        error, value, _ = await call(client, "get_symbol_context", {"repository": "shop", "symbol": "Server.Serve"})
        entry = value["entries"][0]
        expect(entry["qualified_name"] == "example.com/shop/server.(*Server).Serve", "symbol", value)
        expect(entry["path"] == "server/server.go" and entry["lines"] == [26, 35], "symbol span", value)
        expect(names(entry["tests"]) == ["example.com/shop/server.TestServe"], "symbol tests", value)

        # No match: not_found with no candidates.
        error, value, _ = await call(client, "search", {"repository": "shop", "query": "zzzqqq"})
        expect(not error and value["status"] == "not_found" and value["entries"] == [], "no match", value)
        expect("candidates" not in value, "no candidates on not_found", value)

        # minimal_context: 1,500 tokens by the estimator; omissions listed under a small budget.
        error, value, text = await call(client, "minimal_context", {"task": "add a timeout option to NewServer"})
        expect(not error and value["status"] == "ok", "minimal_context", value)
        expect(value["tokens"] <= 1500, "minimal_context within 1,500 tokens", value)
        expect(len(text.encode()) < len(json.dumps(value).encode()), "the text is smaller than the JSON", text)
        # What an agent gets by default: the answer as text alone.
        task = {"task": "add a timeout option to NewServer"}
        error, plain = await call_text(client, "minimal_context", {**task, "fresh": True})
        expect(not error and plain.startswith("status: ok\n"), "text-only minimal_context", plain)
        expect("server.NewServer" in plain and "server/server.go:21-23" in plain, "the text names the subject", plain)
        # Session dedup: an answer this session already received, unchanged, is a
        # reference to the call that carried it; `fresh` sends it in full.
        card = {"repository": "shop", "symbol": "Server.Serve"}
        error, full = await call_text(client, "get_symbol_context", {**card, "fresh": True})
        expect(full.startswith("status: ok\n") and "unchanged:" not in full, "fresh sends the full answer", full)
        error, again = await call_text(client, "get_symbol_context", card)
        reference = again.startswith("status: ok\nunchanged: the same answer as ")
        if args.mode == "legacy":
            # 2025-11-25: an Mcp-Session-Id session, which the gateway's ledger follows.
            expect(reference and len(again) * 3 < len(full), "session dedup", again)
        else:
            # 2026-07-28: whether requests share a session is the SDK's choice; either
            # way the agent holds the full answer or a reference to one it received (in
            # this session, or in an earlier one of the same subject: cross-session dedup).
            expect(reference or again == full, "dedup or the same full answer", again)
        expect(value["entries"][0]["qualified_name"] == "example.com/shop/server.NewServer", "subject", value)
        error, value, _ = await call(
            client,
            "minimal_context",
            {"task": "server serve store open get render format name", "max_tokens": 256},
        )
        expect(value["tokens"] <= 256 and value["omitted"], "omissions under 256 tokens", value)

        # Lazy detail: the verified source.
        error, value, _ = await call(client, "get_code_snippet", {"repository": "shop", "symbol": "NewServer"})
        expect(not error and "func NewServer" in value["entries"][0]["text"], "get_code_snippet", value)

        # PR context from a diff.
        diff = (
            "--- a/server/server.go\n+++ b/server/server.go\n@@ -21,3 +21,3 @@\n"
            " func NewServer(db *store.DB) *Server {\n-\treturn &Server{db: db}\n+\treturn &Server{}\n }\n"
        )
        error, value, _ = await call(client, "get_pr_context", {"repository": "shop", "diff": diff})
        expect(not error and names(value["entries"]) == ["example.com/shop/server.NewServer"], "pr context", value)

        # Memory: remember, recall by alias and by paraphrase.
        error, value, _ = await call(
            client,
            "remember",
            {
                "repository": "shop",
                "entity": "PostgreSQL primary",
                "type": "database",
                "aliases": ["main relational database"],
                "facts": [{"predicate": "runs_on", "object": "db-01"}],
            },
        )
        expect(not error and value["status"] == "ok", "remember", value)
        error, value, _ = await call(client, "recall", {"repository": "shop", "query": "main relational database"})
        expect(not error and value["entries"][0]["name"] == "PostgreSQL primary", "recall by alias", value)
        expect(any(f["object"] == "db-01" for f in value["facts"]), "facts", value)
        expect("notice" in value, "memory notice", value)
        error, value, _ = await call(client, "recall", {"repository": "shop", "query": "the postgres server holding our tables"})
        expect(value["entries"] and value["entries"][0]["name"] == "PostgreSQL primary", "recall by paraphrase", value)
        expect("vector" in value["entries"][0]["found_by"], "found by the dense leg", value)

        # compress: a large text the agent holds, every error line kept, the kind named.
        log = "".join(
            f"2026-12-01T10:00:{n % 60:02}Z INFO GET /items/{n} 200 in {n % 13}ms\n" for n in range(300)
        ) + "2026-12-01T10:05:00Z ERROR upstream refused the connection: payments-api:8443\n"
        error, text = await call_text(client, "compress", {"text": log})
        expect(not error and text.startswith("status: ok\nkind: log (detected)"), "compress detects a log", text)
        expect("payments-api:8443" in text and len(text) * 5 < len(log), "compress keeps the error", text)
        error, text = await call_text(client, "compress", {"text": log, "kind": "yaml"})
        expect(error and "kind" in text, "compress names a bad kind", text)
        # get_compression_stats: this session's level and counts.
        error, text = await call_text(client, "get_compression_stats", {})
        expect(not error and "level: summary (from config" in text, "compression stats", text)
        if args.mode == "legacy":
            # One Mcp-Session-Id session: every call above is counted in it.
            expect("tool get_symbol_context:" in text, "per-tool counts", text)

        # Oversize inputs are rejected with a message naming the limit.
        for arguments, field, limit in [
            ({"tool": "minimal_context", "task": "x" * (9 * 1024)}, "task", 8192),
            ({"tool": "get_pr_context", "repository": "shop", "diff": "+x\n" * (5 * 1024 * 1024 // 3)}, "diff", 4194304),
            ({"tool": "get_pr_context", "repository": "shop", "files": [f"f{i}.go" for i in range(101)]}, "files", 100),
        ]:
            tool = arguments.pop("tool")
            error, value, _ = await call(client, tool, arguments)
            expect(error and value["field"] == field and value["limit"] == limit, f"{field} limit", value)
            expect(f"{limit:,}" in value["message"], f"{field} message names the limit", value)


async def tenant_b(args: argparse.Namespace) -> None:
    """Tenant B has a repository of the same name and sees none of A's code or memory."""
    async with connect(args, args.key_b) as client:
        error, value, _ = await call(client, "list_repositories", {})
        expect([r["name"] for r in value["entries"]] == ["shop"], "B's repositories", value)
        error, value, text = await call(client, "get_symbol_context", {"repository": "shop", "symbol": "Server.Serve"})
        expect(value["status"] == "not_found", "B does not see A's code", value)
        expect("example.com/shop" not in text, "no suggestion from A's graph", value)
        error, value, text = await call(client, "recall", {"repository": "shop", "query": "main relational database"})
        expect(value["status"] == "not_found" and "PostgreSQL" not in text, "B does not see A's memory", value)


async def forget_a(args: argparse.Namespace) -> None:
    async with connect(args, args.key) as client:
        error, value, _ = await call(client, "forget", {"repository": "shop", "entity": "PostgreSQL primary"})
        expect(not error and value["status"] == "ok", "forget", value)
        error, value, text = await call(client, "recall", {"repository": "shop", "query": "main relational database"})
        expect("PostgreSQL primary" not in text, "forgotten entity is not recalled", value)


async def tools(args: argparse.Namespace) -> None:
    await tenant_a(args)
    await tenant_b(args)
    await forget_a(args)


def probe(args: argparse.Namespace) -> None:
    """A raw initialize over HTTP: the status code before any MCP work."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}},
    }
    response = httpx2.post(
        args.url,
        json=body,
        headers={"Authorization": f"Bearer {args.key}", "Accept": "application/json, text/event-stream"},
    )
    expect(response.status_code == args.expect, f"HTTP {response.status_code}, expected {args.expect}", response.text)


def sessions(args: argparse.Namespace) -> None:
    """A session answers only the subject and key that created it (raw HTTP, as an
    attacker would send it): another key's GET stream, resume and DELETE get exactly the
    answer an unknown session gets, and the owner's session keeps working."""
    accept = "application/json, text/event-stream"
    version = "2025-11-25"

    def headers(key: str, session: str | None = None, scheme: str = "Bearer", **extra: str) -> dict:
        h = {"Authorization": f"{scheme} {key}", "Accept": accept, "MCP-Protocol-Version": version}
        if session is not None:
            h["Mcp-Session-Id"] = session
        h.update(extra)
        return h

    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "owner", "version": "1"}},
    }
    with httpx2.Client(timeout=10) as http:
        created = http.post(args.url, json=initialize, headers=headers(args.key))
        expect(created.status_code == 200, "initialize", created.text)
        session = created.headers.get("mcp-session-id")
        expect(bool(session), "the initialize response names a session", dict(created.headers))
        done = http.post(
            args.url,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers=headers(args.key, session),
        )
        expect(done.status_code in (200, 202), "initialized notification", done.text)

        unknown = http.get(args.url, headers=headers(args.key_b, "no-such-session"))
        expect(unknown.status_code == 404, "an unknown session is 404", unknown.text)
        attempts = [
            ("GET stream", lambda: http.get(args.url, headers=headers(args.key_b, session))),
            ("resume", lambda: http.get(args.url, headers=headers(args.key_b, session, **{"Last-Event-ID": "0"}))),
            ("POST", lambda: http.post(args.url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=headers(args.key_b, session))),
            ("DELETE", lambda: http.delete(args.url, headers=headers(args.key_b, session))),
        ]
        for name, attempt in attempts:
            answer = attempt()
            expect(
                (answer.status_code, answer.text) == (unknown.status_code, unknown.text),
                f"another key's {name} on the session answers as an unknown session",
                (answer.status_code, answer.text),
            )

        # Malformed bodies are 400 with a JSON-RPC error, and a huge id is not echoed.
        broken = http.post(
            args.url,
            content=b"{not json",
            headers={**headers(args.key, session), "Content-Type": "application/json"},
        )
        expect(broken.status_code == 400 and "-32700" in broken.text, "malformed JSON is 400", (broken.status_code, broken.text))
        huge = http.post(
            args.url,
            json={"jsonrpc": "2.0", "id": "x" * 1_000_000, "method": "tools/list"},
            headers=headers(args.key, session),
        )
        expect(huge.status_code == 400 and len(huge.content) < 1_000, "a 1 MB id is refused, not echoed", (huge.status_code, len(huge.content)))

        # The owner's session is intact (and the scheme is case-insensitive, RFC 9110).
        listed = http.post(
            args.url,
            json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
            headers=headers(args.key, session, scheme="BEARER"),
        )
        expect(listed.status_code == 200 and "minimal_context" in listed.text, "the owner lists tools", listed.text)
        ended = http.delete(args.url, headers=headers(args.key, session))
        expect(ended.status_code in (200, 202, 204), "the owner ends its session", ended.text)
        gone = http.post(
            args.url,
            json={"jsonrpc": "2.0", "id": 4, "method": "tools/list"},
            headers=headers(args.key, session),
        )
        expect(gone.status_code == 404, "an ended session is 404", gone.text)


async def call_one(args: argparse.Namespace) -> None:
    """One tools/call; prints the structured answer on stdout."""
    async with connect(args, args.key) as client:
        is_error, value, _ = await call(client, args.tool, json.loads(args.arguments))
        expect(not is_error, f"{args.tool} answered an error", value)
        print(json.dumps(value))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["tools", "probe", "sessions", "call"])
    parser.add_argument("--tool")
    parser.add_argument("--arguments", default="{}")
    parser.add_argument("--transport", choices=["http", "stdio"], default="http")
    parser.add_argument("--url")
    parser.add_argument("--codectx")
    parser.add_argument("--data")
    parser.add_argument("--models")
    parser.add_argument("--mode", default="auto")
    parser.add_argument("--key", required=True)
    parser.add_argument("--key-b")
    parser.add_argument("--expect", type=int)
    args = parser.parse_args()
    if args.command == "probe":
        probe(args)
    elif args.command == "sessions":
        sessions(args)
    elif args.command == "call":
        asyncio.run(call_one(args))
    else:
        asyncio.run(tools(args))
    print(f"mcp_e2e: {args.command} {args.transport} {args.mode}: ok", file=sys.stderr)


if __name__ == "__main__":
    main()
