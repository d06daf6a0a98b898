"""Baseline server for bench/mcp: the Python MCP SDK (MCPServer) serving the
same trivial tool as Orbit (`orbit_tools_list`, answering a fixed object
given as a JSON file), on stdio."""

import json
import sys
from typing import Any

from mcp.server.mcpserver import MCPServer

with open(sys.argv[1], encoding="utf-8") as f:
    PAYLOAD: dict[str, Any] = json.load(f)

server = MCPServer("bench-python")


@server.tool(name="orbit_tools_list", structured_output=True)
def tools_list() -> dict[str, Any]:
    """Every tool by its canonical name beside its advertised one."""
    return PAYLOAD


server.run()
