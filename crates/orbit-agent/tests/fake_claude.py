#!/usr/bin/env python3
"""A scripted stand-in for the claude CLI, for what the real one won't do on
demand. FAKE_CLAUDE_MODE picks the behaviour:

  die       a turn starts, then the process dies (stderr line, rc 3)
  garbage   malformed lines, a 12 MB line, an unknown type, then a result with a field
            Orbit does not know
  background  launches a background subagent, ends the turn, then the
            subagent sends an envelope and never finishes
  stuck     never sends a result after an interrupt (FAKE_IGNORE_TERM=1: ignores SIGTERM too)
            (FAKE_IGNORE_INT=1, any mode: ignores SIGINT, as if Ctrl-C reached Orbit only)
  idle_exit answers one turn, then exits with rc 2 while idle
  unsupported  sends a control request Orbit does not handle, echoes the answer
  permission / question  asks (Bash / AskUserQuestion) and echoes the answer
  env       reports its argv, cwd, ELECTRON_RUN_AS_NODE and ANTHROPIC_BASE_URL as the reply text
  api_error a result with subtype success and is_error true (as the CLI reports API errors)
  hold      asks to run Bash and holds the request until an interrupt ends the turn
  cancel    asks to run Bash, then withdraws the request itself (control_cancel_request)
  spam      answers a prompt with keep_alive lines for ever, reading nothing more
  flood     before reading stdin at all, prints 8 MB of keep_alive lines (blocking
            while nobody reads them); then replies with the prompt's length

FAKE_STDIN_LOG=FILE: every stdin line is appended to FILE as it comes.
  prompt    replies with the prompt text it received (and its argv after a newline)
  compact   compaction statuses as CLI 2.1.328 sends them (`system/status`
            `compacting`, repeated; then `status: null` with `compact_result`),
            one that succeeds, one that fails, one still open at the result
  replay    replays the captured exchange FAKE_CLAUDE_FIXTURE: each captured
            stdin line of type user / control_response / interrupt waits for
            one such line from the host; the CLI's stdout lines follow
"""
import json
import os
import signal
import sys

SESSION = "11111111-2222-3333-4444-555555555555"


def out(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def init():
    out({"type": "system", "subtype": "init", "session_id": SESSION, "model": "fake-model",
         "cwd": os.getcwd(), "tools": [], "permissionMode": "default", "claude_code_version": "2.1.328"})


def text(t):
    out({"type": "assistant", "message": {"id": "msg_1", "role": "assistant", "content": [{"type": "text", "text": t}]},
         "parent_tool_use_id": None, "session_id": SESSION})


def result(total, text="done", is_error=False):
    # FAKE_TOTAL_FILE: the session's total is kept there, and a process
    # started with --resume starts from it, as the real CLI (2.1.328) reports
    # a resumed session's total with its earlier turns in it.
    if os.environ.get("FAKE_TOTAL_FILE"):
        with open(os.environ["FAKE_TOTAL_FILE"], "w") as f:
            f.write(repr(total))
    out({"type": "result", "subtype": "success", "is_error": is_error, "result": text, "num_turns": 1,
         "duration_ms": 5, "total_cost_usd": total, "session_id": SESSION})


def lines():
    log = os.environ.get("FAKE_STDIN_LOG")
    for raw in sys.stdin:
        raw = raw.strip()
        if raw:
            if log:
                with open(log, "a") as f:
                    f.write(raw + "\n")
            yield json.loads(raw)


def replay(path):
    records = [json.loads(l) for l in open(path)]
    incoming = lines()
    for rec in records:
        data = rec["data"]
        if rec["dir"] == "in":
            kind = data.get("type") if isinstance(data, dict) else None
            sub = (data.get("request") or {}).get("subtype") if kind == "control_request" else None
            if kind == "user" or kind == "control_response" or sub == "interrupt":
                for got in incoming:
                    gsub = (got.get("request") or {}).get("subtype") if got.get("type") == "control_request" else None
                    if got.get("type") == kind and (sub is None or gsub == sub):
                        break
                else:
                    return
        elif rec["dir"] == "out":
            out(data)
    for _ in incoming:
        pass


def main():
    if "--version" in sys.argv:
        print("2.1.328 (Claude Code)")
        return 0
    mode = os.environ.get("FAKE_CLAUDE_MODE", "")
    if mode == "replay":
        replay(os.environ["FAKE_CLAUDE_FIXTURE"])
        return 0
    if os.environ.get("FAKE_IGNORE_TERM") == "1":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if os.environ.get("FAKE_IGNORE_INT") == "1":
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    if mode == "flood":
        pad = " " * 4096
        for _ in range(2048):
            sys.stdout.write('{"type": "keep_alive"}' + pad + "\n")
        sys.stdout.flush()
    total = 0.0
    kept = os.environ.get("FAKE_TOTAL_FILE")
    if kept and "--resume" in sys.argv and os.path.exists(kept):
        with open(kept) as f:
            total = float(f.read())
    for msg in lines():
        kind = msg.get("type")
        if kind == "control_request":
            if os.environ.get("FAKE_NO_CONTROL_REPLY") == "1":
                continue
            rid = msg["request_id"]
            answer = {}
            if msg.get("request", {}).get("subtype") == "initialize":
                answer = {"models": [{"value": "default", "resolvedModel": "fake-model"},
                                     {"value": "opus", "resolvedModel": "fake-opus-1"}]}
                # As the real CLI does: the workspace's skills are commands.
                skills = os.path.join(os.getcwd(), ".claude", "skills")
                names = sorted(os.listdir(skills)) if os.path.isdir(skills) else []
                answer["commands"] = [{"name": "compact", "description": "Compact", "builtin": True}] + [
                    {"name": n, "description": "A skill"} for n in names]
                # As CLI 2.1.328 does: the model it was started with is listed
                # too, as a "Custom model".
                if "--model" in sys.argv[1:-1]:
                    m = sys.argv[sys.argv.index("--model") + 1]
                    answer["models"].append({"value": m, "resolvedModel": m, "displayName": m,
                                             "description": "Custom model"})
            out({"type": "control_response", "response": {"subtype": "success", "request_id": rid, "response": answer}})
            continue
        if kind != "user":
            continue
        init()
        if mode == "die":
            text("about to die")
            sys.stderr.write("fatal: the fake CLI crashed\n")
            sys.stderr.flush()
            os._exit(3)
        elif mode == "garbage":
            sys.stdout.write("this is not json\n")
            sys.stdout.write('{"type": "assistant", "message": \n')
            sys.stdout.write("\n")
            text("x" * (12 * 1024 * 1024))
            out({"type": "brand_new_type", "payload": [1, 2, 3]})
            out({"type": "system", "subtype": "brand_new_subtype"})
            total += 0.5
            out({"type": "result", "subtype": "success", "is_error": False, "result": "done", "num_turns": 1,
                 "duration_ms": 5, "total_cost_usd": total, "session_id": SESSION, "future_field": {"a": [1, "}"]}})
        elif mode == "background":
            out({"type": "assistant", "message": {"id": "msg_bg", "role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_bg", "name": "Agent",
                 "input": {"description": "Look around", "subagent_type": "Explore", "prompt": "Look.",
                           "run_in_background": True}}]}, "parent_tool_use_id": None, "session_id": SESSION})
            out({"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_bg", "content": "Async agent launched successfully."}]},
                 "parent_tool_use_id": None, "session_id": SESSION,
                 "tool_use_result": {"status": "async_launched", "agentId": "a1", "description": "Look around"}})
            total += 0.1
            result(total)
            out({"type": "assistant", "message": {"id": "msg_sub", "role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_read", "name": "Read", "input": {"file_path": "x"}}]},
                 "parent_tool_use_id": "toolu_bg", "agent_id": "a1", "session_id": SESSION})
        elif mode == "stuck":
            text(f"working {os.getpid()}")
        elif mode == "unsupported":
            out({"type": "control_request", "request_id": "req_x", "request": {"subtype": "elicitation", "message": "?"}})
            for got in lines():
                if got.get("type") == "control_response":
                    text("answer: " + json.dumps(got["response"], sort_keys=True))
                    break
            total += 0.1
            result(total)
        elif mode in ("permission", "question"):
            if mode == "permission":
                req = {"subtype": "can_use_tool", "tool_name": "Bash", "input": {"command": "make"},
                       "tool_use_id": "toolu_1", "description": "Build",
                       "permission_suggestions": [{"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "make"}],
                                                   "behavior": "allow", "destination": "localSettings"}]}
            else:
                req = {"subtype": "can_use_tool", "tool_name": "AskUserQuestion", "tool_use_id": "toolu_2",
                       "requires_user_interaction": True,
                       "input": {"questions": [{"question": "Which style?", "header": "Style", "multiSelect": False,
                                                "options": [{"label": "Casual", "description": "hi"},
                                                            {"label": "Formal", "description": "good day"}]}]}}
            out({"type": "control_request", "request_id": "req_1", "request": req})
            answer = None
            for got in lines():
                if got.get("type") == "control_response":
                    answer = got["response"]
                    break
            text("answer: " + json.dumps(answer, sort_keys=True))
            total += 0.1
            result(total)
        elif mode == "api_error":
            text("API Error: 500 Internal Server Error")
            total += 0.0
            result(total, text="API Error: 500 Internal Server Error", is_error=True)
        elif mode in ("hold", "cancel"):
            out({"type": "control_request", "request_id": "req_1", "request": {
                "subtype": "can_use_tool", "tool_name": "Bash", "input": {"command": "make"},
                "tool_use_id": "toolu_1"}})
            if mode == "cancel":
                out({"type": "control_cancel_request", "request_id": "req_1"})
                text("withdrawn")
                total += 0.1
                result(total)
                continue
            for got in lines():
                if got.get("type") != "control_request":
                    continue
                out({"type": "control_response", "response": {
                    "subtype": "success", "request_id": got["request_id"], "response": {}}})
                if got.get("request", {}).get("subtype") == "interrupt":
                    total += 0.1
                    result(total, text="interrupted")
                    break
        elif mode == "idle_exit":
            total += 0.25
            result(total)
            sys.stderr.write("fake: lost the connection\n")
            sys.stderr.flush()
            return 2
        elif mode == "spam":
            while True:
                out({"type": "keep_alive"})
        elif mode == "flood":
            text("got %d characters" % len(msg.get("message", {}).get("content") or ""))
            total += 0.1
            result(total)
        elif mode == "prompt":
            content = msg.get("message", {}).get("content")
            text(json.dumps({"prompt": content, "argv": sys.argv[1:]}))
            total += 0.1
            result(total)
        elif mode == "readwrite":
            # Reads main.rs, then writes new.rs (really: the live graph must
            # see it), as a real turn would, with each call's result.
            cwd = os.getcwd()
            for tid, name, inp in [
                ("toolu_r", "Read", {"file_path": os.path.join(cwd, "main.rs")}),
                ("toolu_w", "Write", {"file_path": os.path.join(cwd, "new.rs"), "content": "mod main;\n"}),
            ]:
                out({"type": "assistant", "message": {"id": "msg_" + tid, "role": "assistant", "content": [
                    {"type": "tool_use", "id": tid, "name": name, "input": inp}]},
                     "parent_tool_use_id": None, "session_id": SESSION})
                if name == "Write":
                    with open(inp["file_path"], "w") as f:
                        f.write(inp["content"])
                out({"type": "user", "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": tid, "content": "ok"}]},
                     "parent_tool_use_id": None, "session_id": SESSION})
            text("Read and wrote.")
            total += 0.1
            result(total)
        elif mode == "compact":
            def status(value, **extra):
                out(dict({"type": "system", "subtype": "status", "status": value, "session_id": SESSION}, **extra))
            status("requesting")
            status("compacting")
            status("compacting")
            status(None, compact_result="success")
            status(None, permissionMode="acceptEdits")
            status("compacting")
            status(None, compact_result="failed", compact_error="Not enough messages to compact.")
            status("compacting")
            total += 0.1
            result(total)
        elif mode == "env":
            text(json.dumps({"argv": sys.argv[1:], "cwd": os.getcwd(),
                             "electron": os.environ.get("ELECTRON_RUN_AS_NODE"),
                             "base_url": os.environ.get("ANTHROPIC_BASE_URL")}))
            total += 0.1
            result(total)
    return 0


if __name__ == "__main__":
    sys.exit(main())
