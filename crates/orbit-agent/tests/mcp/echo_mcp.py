"""A stdio MCP server (version 0.0.7) offering the tools named on its command
line (`echo` when none). A call to `fail` answers an error result; any other
call answers "echoed".

With ECHO_MCP_INIT_DELAY=SECONDS in its environment it waits that long
before answering `initialize` (the server stays `pending` meanwhile); it
exits early if its parent goes away."""
import json, os, sys, time
TOOLS = sys.argv[1:] or ["echo"]
DELAY = float(os.environ.get("ECHO_MCP_INIT_DELAY", "0"))


def wait(seconds):
    parent = os.getppid()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if os.getppid() != parent:
            sys.exit(0)
        time.sleep(0.1)


for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method = msg.get("method")
    if method == "initialize":
        wait(DELAY)
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
