"""A stdio MCP server (version 0.0.7) offering the tools named on its command
line (`echo` when none). A call to `fail` answers an error result; any other
call answers "echoed"."""
import json, sys
TOOLS = sys.argv[1:] or ["echo"]
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method = msg.get("method")
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "echo", "version": "0.0.7"}}
    elif method == "tools/list":
        result = {"tools": [{"name": t, "description": t, "inputSchema": {"type": "object"}} for t in TOOLS]}
    elif method == "tools/call":
        failed = msg["params"]["name"] == "fail"
        result = {"content": [{"type": "text", "text": "it broke" if failed else "echoed"}], "isError": failed}
    else:
        result = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
    sys.stdout.flush()
