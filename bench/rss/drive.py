"""Drives a running `codectx up` the way agents do, for the whole-stack memory benchmark
(`make bench-rss`, bench/rss/rss.sh): each question of a workload as its call, and a
`minimal_context` with the question's text, spread over CONCURRENCY MCP sessions of the
official Python SDK, ROUNDS times. Prints the calls made and the errors.

Usage: python drive.py URL API_KEY WORKLOAD ROUNDS CONCURRENCY REPOSITORY
"""

import asyncio
import json
import sys
import time

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def calls_of(workload: str, repository: str) -> list[tuple[str, dict]]:
    calls = []
    for question in json.load(open(workload))["questions"]:
        arguments = dict(question["call"]["arguments"], repository=repository)
        calls.append((question["call"]["tool"], arguments))
        calls.append(("minimal_context", {"repository": repository, "task": question["question"]}))
    return calls


async def session(url: str, key: str, calls, share: int, sessions: int, rounds: int, errors: list) -> None:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    async with Client(streamable_http_client(url, http_client=http)) as client:
        for _ in range(rounds):
            for index, (tool, arguments) in enumerate(calls):
                if index % sessions != share:
                    continue
                result = await client.call_tool(tool, arguments)
                if result.is_error:
                    errors.append((tool, result.content[0].text[:120] if result.content else ""))


async def main() -> None:
    url, key, workload, rounds, sessions, repository = sys.argv[1:7]
    rounds, sessions = int(rounds), int(sessions)
    calls = calls_of(workload, repository)
    errors: list = []
    began = time.time()
    await asyncio.gather(*(session(url, key, calls, n, sessions, rounds, errors) for n in range(sessions)))
    print(f"calls {rounds * len(calls)}, errors {len(errors)} {errors[:3]}, {time.time() - began:.1f} s")
    if errors:
        sys.exit(1)


asyncio.run(main())
