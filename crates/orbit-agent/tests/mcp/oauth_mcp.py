"""An MCP server over streamable HTTP that needs OAuth, for the MCP view's
sign-in test: 401 with resource metadata until a request carries the token
its /token endpoint gives; /authorize redirects straight to the client's
redirect_uri (the test plays the browser). Prints its port, then serves on
127.0.0.1. Every request is logged as a JSON line to argv[1]. argv[2], when
given, is the authorization endpoint to advertise instead of /authorize
(`{host}` stands for 127.0.0.1:PORT), for the tests of refused sign-in
addresses."""
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
log = open(sys.argv[1], "a") if len(sys.argv) > 1 else sys.stderr
def authorize(handler):
    host = "127.0.0.1:%d" % handler.server.server_address[1]
    if len(sys.argv) > 2:
        return sys.argv[2].replace("{host}", host)
    return "http://" + host + "/authorize"
class H(BaseHTTPRequestHandler):
    def base(self):
        return "http://127.0.0.1:%d" % self.server.server_address[1]
    def send_json(self, code, body, headers=()):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
    def record(self, body=b""):
        log.write(json.dumps({"method": self.command, "path": self.path, "auth": self.headers.get("authorization"), "body": body.decode(errors="replace")}) + "\n")
        log.flush()
    def do_GET(self):
        self.record()
        b = self.base()
        if self.path.startswith("/.well-known/oauth-protected-resource"):
            self.send_json(200, {"resource": b + "/mcp", "authorization_servers": [b]})
        elif self.path.startswith("/.well-known/oauth-authorization-server") or self.path.startswith("/.well-known/openid-configuration"):
            self.send_json(200, {"issuer": b, "authorization_endpoint": authorize(self), "token_endpoint": b + "/token",
                                 "registration_endpoint": b + "/register", "response_types_supported": ["code"],
                                 "grant_types_supported": ["authorization_code", "refresh_token"],
                                 "code_challenge_methods_supported": ["S256"], "token_endpoint_auth_methods_supported": ["none"]})
        elif self.path.startswith("/authorize"):
            from urllib.parse import urlparse, parse_qs, urlencode
            q = parse_qs(urlparse(self.path).query)
            loc = q["redirect_uri"][0] + "?" + urlencode({"code": "fake-code", "state": q["state"][0]})
            self.send_response(302)
            self.send_header("location", loc)
            self.send_header("content-length", "0")
            self.end_headers()
        else:
            self.send_json(401, {"error": "unauthorized"}, [("WWW-Authenticate", 'Bearer resource_metadata="%s/.well-known/oauth-protected-resource"' % b)])
    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(n)
        self.record(body)
        if self.path.startswith("/register"):
            req = json.loads(body or b"{}")
            req.update({"client_id": "fake-client-id", "client_id_issued_at": 1})
            self.send_json(201, req)
        elif self.path.startswith("/token"):
            self.send_json(200, {"access_token": "fake-access-token", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "fake-refresh"})
        elif self.headers.get("authorization") == "Bearer fake-access-token":
            msg = json.loads(body or b"{}")
            if "id" not in msg:
                self.send_response(202); self.send_header("content-length", "0"); self.end_headers(); return
            m = msg.get("method")
            if m == "initialize":
                res = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "web", "version": "1.2.3"}}
            elif m == "tools/list":
                res = {"tools": [{"name": "fetch", "description": "fetch", "inputSchema": {"type": "object"}}]}
            elif m == "server/discover":
                self.send_json(200, {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}}); return
            else:
                res = {}
            self.send_json(200, {"jsonrpc": "2.0", "id": msg["id"], "result": res})
        else:
            self.send_json(401, {"error": "unauthorized"}, [("WWW-Authenticate", 'Bearer resource_metadata="%s/.well-known/oauth-protected-resource"' % self.base())])
    def log_message(self, *a):
        pass
srv = HTTPServer(("127.0.0.1", 0), H)
print(srv.server_address[1], flush=True)
srv.serve_forever()
