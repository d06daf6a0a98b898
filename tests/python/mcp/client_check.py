"""Drives `orbit mcp` with the Python MCP SDK and prints what it saw as JSON.

Usage:
  client_check.py stdio ORBIT [ARGS...]   (env passes through)
  client_check.py http URL [TOKEN]

The Rust test (crates/orbit/tests/it/mcp.rs) asserts on the JSON.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


async def exercise(session):
    out = {}
    init = await session.initialize()
    out["server"] = init.server_info.name
    out["protocol"] = init.protocol_version
    tools = (await session.list_tools()).tools
    out["tools"] = sorted(t.name for t in tools)
    out["output_schemas"] = all(t.output_schema and t.output_schema.get("type") == "object" for t in tools)
    listed = await session.call_tool("orbit_workspace_list", {})
    out["workspace_list"] = listed.structured_content
    # The SDK validates structured content against the output schema.
    await session.validate_tool_result("orbit_workspace_list", listed)
    imports = await session.call_tool(
        "orbit_graph_imports", {"file": "src/a.ts"}, meta={"traceparent": TRACEPARENT}
    )
    await session.validate_tool_result("orbit_graph_imports", imports)
    out["imports"] = imports.structured_content
    out["imports_meta"] = imports.meta
    out["imports_text"] = json.loads(imports.content[0].text)
    failed = await session.call_tool("orbit_graph_imports", {"file": "no/such/file.ts"})
    out["tool_error"] = {"is_error": failed.is_error, "structured": failed.structured_content}
    try:
        await session.call_tool("orbit_no_such_tool", {})
        out["unknown_tool"] = "answered"
    except Exception as error:  # MCPError
        out["unknown_tool"] = type(error).__name__ + ": " + str(error)
    keypad = await session.call_tool("orbit_keypad_sessions", {})
    await session.validate_tool_result("orbit_keypad_sessions", keypad)
    out["keypad"] = keypad.structured_content
    identity = await session.call_tool("orbit_server_identity", {})
    out["identity"] = identity.structured_content
    return out


async def run_stdio(command, args):
    params = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            return await exercise(session)


async def run_http(url, token):
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as client:
        async with streamable_http_client(url, http_client=client) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                return await exercise(session)


def main():
    mode = sys.argv[1]
    if mode == "stdio":
        result = asyncio.run(run_stdio(sys.argv[2], sys.argv[3:]))
    elif mode == "http":
        token = sys.argv[3] if len(sys.argv) > 3 else os.environ.get("ORBIT_MCP_TOKEN")
        result = asyncio.run(run_http(sys.argv[2], token))
    else:
        raise SystemExit(f"unknown mode {mode}")
    print(json.dumps(result, default=str))


if __name__ == "__main__":
    main()
