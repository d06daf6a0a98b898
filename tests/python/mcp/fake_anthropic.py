"""A scripted Anthropic Messages API on 127.0.0.1 for the claude CLI test:
the first turn that offers tools asks for `mcp__orbit__orbit_workspace_list`;
once the tool's result comes back it answers with text; anything else gets a
short text. Streams SSE as the real API does. Prints its port, then logs
each request body (one JSON line per request) to the file given as argv[1].
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG = sys.argv[1]
TOOL = "mcp__orbit__orbit_workspace_list"


def events(content, stop_reason):
    yield "message_start", {"type": "message_start", "message": {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-fake",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1}}}
    for index, block in enumerate(content):
        if block["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "text", "text": ""}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": "text_delta", "text": block["text"]}}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "tool_use", "id": block["id"],
                                                            "name": block["name"], "input": {}}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": "input_json_delta",
                                                    "partial_json": json.dumps(block["input"])}}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                            "usage": {"output_tokens": 5}}
    yield "message_stop", {"type": "message_stop"}


def reply(body):
    tools = [t.get("name") for t in body.get("tools", [])]
    messages = body.get("messages", [])
    last = messages[-1] if messages else {}
    content = last.get("content") if isinstance(last.get("content"), list) else []
    if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
        return [{"type": "text", "text": "Orbit answered."}], "end_turn"
    # Claude Code defers MCP tools (ToolSearch); a model may still call one by name.
    if tools:
        return [{"type": "tool_use", "id": "toolu_fake1", "name": TOOL, "input": {}}], "tool_use"
    return [{"type": "text", "text": "ok"}], "end_turn"


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        with open(LOG, "a", encoding="utf-8") as log:
            log.write(json.dumps({"path": self.path, "body": body}) + "\n")
        if "count_tokens" in self.path:
            data = json.dumps({"input_tokens": 10}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        content, stop = reply(body)
        if not body.get("stream"):
            data = json.dumps({"id": "msg_fake", "type": "message", "role": "assistant",
                               "model": "claude-fake", "content": content, "stop_reason": stop,
                               "stop_sequence": None,
                               "usage": {"input_tokens": 10, "output_tokens": 5}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        for name, data in events(content, stop):
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()
        self.close_connection = True


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
