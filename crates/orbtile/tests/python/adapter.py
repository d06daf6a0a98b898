"""A minimal adapter written against the spec only (Python stdlib), as the
spec's reference adapters are: discovery file, proof check with its own
HMAC, registration, a session, a heartbeat, the 401 and 404 recovery."""
import hashlib
import hmac
import http.client
import json
import os
import secrets
import socket
import sys


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost")
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self.path)


def discovery():
    with open(os.environ["ORBTILE_API_FILE"]) as f:
        return json.load(f)


def call(method, path, body=None, nonce=None):
    d = discovery()
    conn = UnixConnection(d["socketPath"])
    headers = {"Content-Type": "application/json", "Authorization": "Bearer " + d["token"]}
    if nonce:
        headers["X-Orbtile-Nonce"] = nonce
    data = None if body is None else json.dumps(body).encode()
    conn.request(method, d["basePath"] + path, body=data, headers=headers)
    r = conn.getresponse()
    raw = r.read()
    conn.close()
    return r.status, (json.loads(raw) if raw else None)


def main():
    step = sys.argv[1]
    aid = "dev.pyref"
    if step == "first":
        nonce = secrets.token_hex(16)
        status, info = call("GET", "/info", nonce=nonce)
        assert status == 200, (status, info)
        token = discovery()["token"]
        expected = hmac.new(token.encode(), nonce.encode(), hashlib.sha256).hexdigest()
        assert hmac.compare_digest(info["proof"], expected), "proof mismatch"
        assert "waitingPermission" in info["activities"]
        status, reg = call("PUT", "/adapters/" + aid, {"name": "Py Ref", "palette": {"baseHue": 200, "attentionHue": 330}, "urlSchemes": ["https"]})
        assert status == 201, (status, reg)
        assert reg["enabled"] is False and reg["reason"] == "awaiting_user", reg
        status, s = call("POST", "/adapters/%s/sessions/run-1" % aid, {"title": "ünïcode \u202etitle", "activity": "thinking", "message": {"id": "m1", "text": "line1\nline2"}})
        assert status == 200 and s["session"]["visible"] is False, (status, s)
        status, _ = call("POST", "/adapters/%s/heartbeat" % aid)
        assert status == 204, status
    elif step == "after-restart":
        # The hub relaunched: a cached token would get 401 (this adapter reads
        # the file on every call), then 404 until it registers again.
        session = {"title": "again", "activity": "idle"}
        status, err = call("POST", "/adapters/%s/sessions/run-1" % aid, session)
        assert status == 404 and err["error"]["code"] == "adapter_not_registered", (status, err)
        status, reg = call("PUT", "/adapters/" + aid, {"name": "Py Ref", "palette": {"baseHue": 200, "attentionHue": 330}, "urlSchemes": ["https"]})
        assert status == 201 and reg["enabled"] is True, (status, reg)
        status, s = call("POST", "/adapters/%s/sessions/run-1" % aid, session)
        assert status == 200 and s["session"]["visible"] is True, (status, s)
        status, _ = call("DELETE", "/adapters/%s/sessions/run-1" % aid)
        assert status == 204, status
    print("ok")


main()
