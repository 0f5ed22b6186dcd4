"""Asks a running `codectx up` to search a repository until its code vectors are
complete (they are built on the back of requests: ADR 0010), printing progress every
30 s. Usage: python wait_vectors.py URL API_KEY REPOSITORY
"""

import asyncio
import sys
import time

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def main() -> None:
    url, key, repository = sys.argv[1:4]
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"}, timeout=60)
    began = reported = time.time()
    async with Client(streamable_http_client(url, http_client=http)) as client:
        while True:
            result = await client.call_tool("search", {"repository": repository, "query": "parse a duration string", "detail": True})
            text = result.content[0].text if result.content else ""
            building = [line for line in text.splitlines() if "code vectors" in line]
            if not building and not result.is_error:
                print(f"code vectors complete after {time.time() - began:.0f} s")
                return
            if time.time() - reported > 30:
                print(f"{time.time() - began:.0f} s: {(building or [text[:100]])[0].strip()}", flush=True)
                reported = time.time()
            await asyncio.sleep(2)


asyncio.run(main())
