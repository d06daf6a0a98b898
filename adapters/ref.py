#!/usr/bin/env python3
"""Reference adapter for the Orbtile Adapter Protocol v1, Python stdlib only.

Copy it. It shows one session on the keypad and walks it through every
activity, and it does what every adapter must:

- reads the discovery file (``ORBTILE_API_FILE``, else the default path); no
  file means "off or not running", so it backs off instead of spinning;
- checks the server's nonce proof (``GET /info``) before it sends any session
  data;
- opens a new connection per call (``http.client`` over ``AF_UNIX``);
- on ``401`` reads the discovery file again once and retries (a regenerated
  token, a relaunched server);
- on ``404 adapter_not_registered`` registers again and resends the whole
  session (a relaunch, a regenerated token, 60 s of silence);
- heartbeats at least every 10 s while it has sessions;
- honours ``Retry-After`` on ``429`` and ``503``;
- keeps the token out of argv, URLs and logs.

Usage: ``python3 ref.py [--id dev.example.ref-py] [--title T] [--step S]
[--allow-timeout S] [--loops N] [--heartbeat S]``. Exit 0 after the walk, 2 when the user
denies the adapter or never allows it, 3 when the API is off.
"""

import argparse
import hashlib
import hmac
import http.client
import json
import os
import secrets
import socket
import sys
import time

ACTIVITIES = [
    "starting", "thinking", "tool", "streaming", "waitingPermission",
    "waitingQuestion", "compacting", "done", "error", "idle",
]

# Awkward text: bidi overrides, control characters, emoji, a long message.
AWKWARD_TITLE = "ref.py \u202eevil\u202c \u0007bell \U0001F680 r\u00e9sum\u00e9"
AWKWARD_MESSAGE = ("line one\tTab\n\u2067isolate\u2069 \U0001F469\u200d\U0001F4BB "
                   + "x" * 10_000 + " the end \u00e9")


def default_api_file():
    """The discovery file's default path (ORBTILE_API_FILE overrides it)."""
    explicit = os.environ.get("ORBTILE_API_FILE")
    if explicit:
        return explicit
    if sys.platform == "darwin":
        return os.path.expanduser(
            "~/Library/Application Support/Orbtile/adapter-api.json")
    base = os.environ.get("ORBIT_CONFIG_DIR") or os.path.join(
        os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config"), "orbit")
    return os.path.join(base, "adapter-api.json")


class Off(Exception):
    """The API is off or Orbit is not running (no discovery file)."""


class ApiError(Exception):
    def __init__(self, status, body):
        super().__init__(f"HTTP {status}: {body.get('error', {}).get('code', '?')}")
        self.status = status
        self.body = body

    @property
    def code(self):
        return self.body.get("error", {}).get("code")


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout=10):
        super().__init__("localhost", timeout=timeout)
        self.socket_path = path

    def connect(self):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self.socket_path)
        self.sock = sock


class Client:
    def __init__(self, adapter_id, registration, api_file=None):
        self.adapter_id = adapter_id
        self.registration = registration
        self.api_file = api_file or default_api_file()
        self.discovery = None
        self.verified_token = None
        self.sessions = {}  # session id -> the whole session as last sent
        self.enabled = False
        self.reason = None
        self.last_call = 0.0

    # -- discovery and transport ------------------------------------------------

    def load(self):
        try:
            with open(self.api_file, encoding="utf-8") as f:
                data = json.load(f)
        except FileNotFoundError:
            raise Off("no discovery file: the adapter API is off or Orbit is not running")
        except (OSError, ValueError) as e:
            raise Off(f"unreadable discovery file: {e.__class__.__name__}")
        if data.get("api") != 1 or not isinstance(data.get("token"), str):
            raise Off("discovery file is not API v1")
        self.discovery = data

    def raw(self, method, path, body=None, extra_headers=None):
        if self.discovery is None:
            self.load()
        d = self.discovery
        payload = b"" if body is None else json.dumps(body).encode("utf-8")
        headers = {
            "Host": "localhost",
            "Content-Type": "application/json",
            "Authorization": "Bearer " + d["token"],
            "Content-Length": str(len(payload)),
        }
        headers.update(extra_headers or {})
        conn = UnixHTTPConnection(d["socketPath"])
        try:
            conn.request(method, d.get("basePath", "/a/v1") + path, body=payload, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            retry_after = resp.getheader("Retry-After")
        except (FileNotFoundError, ConnectionRefusedError) as e:
            # The socket is gone: Orbit quit or is relaunching.
            self.discovery = None
            raise Off(f"socket unavailable: {e.__class__.__name__}")
        finally:
            conn.close()
        try:
            parsed = json.loads(data) if data else {}
        except ValueError:
            parsed = {}
        return resp.status, parsed, retry_after

    def call(self, method, path, body=None, *, reread=True, reregister=True):
        """One call with the protocol's retry rules."""
        off_wait = 0.25
        status, parsed = 0, {}
        for _ in range(12):
            try:
                status, parsed, retry_after = self.raw(method, path, body)
            except Off:
                # Orbit quit or is relaunching: wait (0.25 s doubling, about
                # 30 s in all), read the file again, retry.
                if off_wait > 16:
                    raise
                time.sleep(off_wait)
                off_wait *= 2
                try:
                    self.load()
                except Off:
                    pass
                continue
            if status in (429, 503):
                time.sleep(min(float(retry_after or 1), 30))
                continue
            if status == 401 and reread:
                reread = False  # read the file again once, then retry
                self.load()
                self.verify()
                continue
            if (status == 404 and reregister and parsed.get("error", {}).get("code")
                    == "adapter_not_registered" and path.startswith("/adapters/")):
                reregister = False
                self.register()
                # The hub lost every session: send each one whole again.
                posting = None
                if path.startswith(f"/adapters/{self.adapter_id}/sessions/") and method == "POST":
                    posting = path.rsplit("/", 1)[-1].split("?")[0]
                    body = self.sessions.get(posting, body)
                for sid, whole in self.sessions.items():
                    if sid != posting:
                        self.raw("POST", f"/adapters/{self.adapter_id}/sessions/{sid}", whole)
                continue
            if status >= 400:
                raise ApiError(status, parsed)
            if path.startswith(f"/adapters/{self.adapter_id}"):
                self.last_call = time.monotonic()
            return status, parsed
        raise ApiError(status, parsed)

    # -- the protocol ------------------------------------------------------------

    def verify(self):
        """GET /info with a nonce; the proof shows the server knows the token."""
        nonce = secrets.token_hex(16)
        status, info, _ = self.raw("GET", "/info", extra_headers={"X-Orbtile-Nonce": nonce})
        if status == 401:
            self.load()
            status, info, _ = self.raw("GET", "/info", extra_headers={"X-Orbtile-Nonce": nonce})
        if status != 200:
            raise ApiError(status, info)
        token = self.discovery["token"].encode("utf-8")
        expected = hmac.new(token, nonce.encode("ascii"), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, str(info.get("proof", ""))):
            raise SystemExit("ref.py: the server failed the nonce proof; not sending session data")
        self.verified_token = self.discovery["token"]
        return info

    def register(self):
        status, reply = self.call("PUT", f"/adapters/{self.adapter_id}", self.registration,
                                  reregister=False)
        self.enabled = bool(reply.get("enabled"))
        self.reason = reply.get("reason")
        for w in reply.get("warnings") or []:
            print(f"ref.py: warning: {w}", file=sys.stderr)
        return status, reply

    def update(self, session_id, fields):
        whole = dict(self.sessions.get(session_id, {}))
        for k, v in fields.items():
            if v is None:
                whole.pop(k, None)
            else:
                whole[k] = v
        self.sessions[session_id] = whole
        if self.verified_token != (self.discovery or {}).get("token"):
            self.verify()
        return self.call("POST", f"/adapters/{self.adapter_id}/sessions/{session_id}", fields)

    def heartbeat(self):
        return self.call("POST", f"/adapters/{self.adapter_id}/heartbeat")

    def end(self, session_id):
        self.sessions.pop(session_id, None)
        return self.call("DELETE", f"/adapters/{self.adapter_id}/sessions/{session_id}",
                         reregister=False)

    def wait_allowed(self, timeout):
        deadline = time.monotonic() + timeout
        while not self.enabled:
            if self.reason == "disabled_by_user" or time.monotonic() > deadline:
                return False
            time.sleep(0.5)
            self.register()  # cheap, counts as a sign of life, tells us about the Allow
        return True

    def sleep_with_heartbeats(self, seconds, every=5.0):
        """Sleeps, heartbeating when `every` seconds passed without a call."""
        end = time.monotonic() + seconds
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return
            if self.sessions and time.monotonic() - self.last_call >= every:
                self.heartbeat()
            time.sleep(min(left, 1.0))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--id", default="dev.example.ref-py")
    p.add_argument("--title", default=AWKWARD_TITLE)
    p.add_argument("--step", type=float, default=2.0, help="seconds per activity")
    p.add_argument("--allow-timeout", type=float, default=300.0)
    p.add_argument("--loops", type=int, default=1)
    p.add_argument("--heartbeat", type=float, default=5.0,
                   help="heartbeat after this many seconds without a call (the spec: at most 10)")
    args = p.parse_args()

    client = Client(args.id, {
        "name": "Reference (Python)", "shortName": "Py",
        "palette": {"baseHue": 280, "attentionHue": 330},
        "glyph": {"monogram": "Py"}, "version": "1.0.0",
        "urlSchemes": ["https"],
    })
    backoff = 1.0
    while True:
        try:
            client.load()
            client.verify()
            break
        except Off as e:
            print(f"ref.py: {e}; retrying in {backoff:.0f} s", file=sys.stderr)
            time.sleep(backoff)
            backoff = min(backoff * 2, 30)
            if backoff >= 30 and os.environ.get("REF_GIVE_UP"):
                return 3
    client.register()
    if not client.wait_allowed(args.allow_timeout):
        print(f"ref.py: not allowed ({client.reason})", file=sys.stderr)
        return 2
    print("ref.py: allowed", file=sys.stderr, flush=True)

    sid = "ref-py-1"
    client.update(sid, {"title": args.title, "activity": "starting", "cwd": os.getcwd(),
                        "model": "reference", "pid": os.getpid(), "ttlSeconds": 120,
                        "openURL": "https://example.com/ref-py"})
    for loop in range(args.loops):
        for n, activity in enumerate(ACTIVITIES):
            fields = {"activity": activity, "statusDetail": None}
            if activity == "tool":
                fields.update(toolLabel="Bash  make test", toolKind="shell")
            if activity == "streaming":
                fields["message"] = {"id": f"m{loop}-{n}", "text": AWKWARD_MESSAGE}
            if activity in ("waitingPermission", "error"):
                fields["statusDetail"] = "Bash wants to run \u202emake\u202c"
            if activity == "thinking":
                fields["message"] = None
            client.update(sid, fields)
            print(f"ref.py: {activity}", file=sys.stderr, flush=True)
            client.sleep_with_heartbeats(args.step, args.heartbeat)
    client.end(sid)
    print("ref.py: done", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
