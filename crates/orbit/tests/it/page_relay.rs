//! The page's channel relayed over the control socket (`orbit.page.*`, what
//! the VS Code extension host uses): a real `orbit open`, its real control
//! socket, the pinned `claude` against the fake Messages API.

use std::process::Child;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fake_api::{text, tool};
use crate::open_support::OrbitEnv;

struct Relayed {
    env: OrbitEnv,
    child: Child,
}

impl Relayed {
    fn start(settings: Value, trusted: bool) -> Self {
        let env = OrbitEnv::new(settings);
        std::fs::write(env.ws.path().join("main.py"), "import os\n").unwrap();
        if trusted {
            env.trust();
        }
        let child = env.open_quiet();
        Self { env, child }
    }

    fn connect(&self, trusted: bool) -> Value {
        let answer = self.env.call(
            "orbit.page.connect",
            json!({"workspace": self.env.ws.path(), "instanceId": null, "lastSeq": null, "trusted": trusted}),
        );
        answer["result"].clone()
    }

    /// Polls until a frame matches `found`; every frame seen.
    fn until(&self, conn: &str, found: impl Fn(&Value) -> bool) -> Vec<Value> {
        page_until(&self.env, conn, found)
    }

    fn act(&self, conn: &str, frame: Value) -> Value {
        self.env
            .call("orbit.page.act", json!({"conn": conn, "frame": frame}))
    }
}

impl Drop for Relayed {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls a relayed page's frames until one matches `found` (90 s at most);
/// every frame seen.
pub(crate) fn page_until(env: &OrbitEnv, conn: &str, found: impl Fn(&Value) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut seen = Vec::new();
    loop {
        let next = env.call("orbit.page.next", json!({"conn": conn, "timeoutMs": 2000}));
        let frames = next["result"]["frames"].as_array().unwrap().clone();
        let hit = frames.iter().any(&found);
        seen.extend(frames);
        if hit {
            return seen;
        }
        assert!(Instant::now() < deadline, "never came: {seen:?}");
    }
}

fn workspace_trusted(frames: &[Value]) -> Option<bool> {
    frames
        .iter()
        .rev()
        .find(|f| f["body"]["type"] == "workspace")
        .and_then(|f| f["body"]["trusted"].as_bool())
}

fn prompt(id: &str, text: &str) -> Value {
    json!({"type": "action", "id": id, "request": {"type": "prompt", "text": text}})
}

#[test]
fn a_relayed_page_gets_the_snapshot_needs_both_trusts_and_resumes() {
    let orbit = Relayed::start(json!({}), false);
    let first = orbit.connect(false);
    let conn = first["conn"].as_str().unwrap().to_owned();
    let frames = first["first"].as_array().unwrap();
    assert_eq!(frames[0]["body"]["type"], "hello", "{first}");
    assert_eq!(frames[0]["body"]["resumed"], false);
    assert_eq!(frames.last().unwrap()["body"]["type"], "snapshotEnd");
    assert_eq!(workspace_trusted(frames), Some(false));

    // The window does not trust the folder: no prompt, no trust from the page.
    let refused = orbit.act(&conn, prompt("p0", "Hello?"));
    assert_eq!(refused["result"]["ok"], false, "{refused}");
    assert_eq!(refused["result"]["code"], "untrusted", "{refused}");
    let trust = orbit.act(&conn, json!({"type": "trust", "id": "t0"}));
    assert_eq!(trust["result"]["code"], "untrusted", "{trust}");
    // What needs no trust goes through.
    let fresh = orbit.act(
        &conn,
        json!({"type": "action", "id": "n0", "request": {"type": "newConversation"}}),
    );
    assert_eq!(fresh["result"]["ok"], true, "{fresh}");

    // The window trusts it now: Orbit's own trust is still needed.
    let trust_set = orbit
        .env
        .call("orbit.page.trust", json!({"conn": conn, "trusted": true}));
    assert_eq!(trust_set["result"], json!({}), "{trust_set}");
    let seen = orbit.until(&conn, |f| f["body"]["type"] == "workspace");
    assert_eq!(workspace_trusted(&seen), Some(false));
    let refused = orbit.act(&conn, prompt("p1", "Hello?"));
    assert_eq!(refused["result"]["code"], "untrusted", "{refused}");
    // Trusting through the relay (what the extension does once VS Code trusts).
    let trust = orbit.act(&conn, json!({"type": "trust", "id": "t1"}));
    assert_eq!(trust["result"]["ok"], true, "{trust}");
    let seen = orbit.until(&conn, |f| {
        f["body"]["type"] == "workspace" && f["body"]["trusted"] == true
    });
    assert_eq!(workspace_trusted(&seen), Some(true));

    orbit.env.api.script([text("Hi from the relay.")]);
    let sent = orbit.act(&conn, prompt("p2", "Hello?"));
    assert_eq!(sent["result"]["ok"], true, "{sent}");
    // A resent id gets its first answer.
    let again = orbit.act(&conn, prompt("p2", "Hello?"));
    assert_eq!(again["result"], sent["result"]);
    let seen = orbit.until(&conn, |f| {
        f.to_string().contains("Hi from the relay.") && f["body"]["type"] == "transcript"
    });
    let last_seq = seen.iter().filter_map(|f| f["seq"].as_u64()).max().unwrap();
    let instance = frames[0]["body"]["instanceId"].clone();

    // Taking the window's trust away hides the sessions again.
    orbit
        .env
        .call("orbit.page.trust", json!({"conn": conn, "trusted": false}));
    let seen = orbit.until(&conn, |f| f["body"]["type"] == "workspace");
    assert_eq!(workspace_trusted(&seen), Some(false));

    // Closed, then resumed where it was: nothing lost, nothing twice.
    let closed = orbit.env.call("orbit.page.close", json!({"conn": conn}));
    assert_eq!(closed["result"], json!({}), "{closed}");
    let gone = orbit
        .env
        .call("orbit.page.next", json!({"conn": conn, "timeoutMs": 0}));
    assert_eq!(gone["error"]["code"], "not_found", "{gone}");
    let resumed = orbit.env.call(
        "orbit.page.connect",
        json!({"workspace": first["workspaceId"], "instanceId": instance, "lastSeq": last_seq, "trusted": true}),
    );
    let frames = resumed["result"]["first"].as_array().unwrap();
    assert_eq!(frames[0]["body"]["type"], "hello", "{resumed}");
    assert_eq!(frames[0]["body"]["resumed"], true, "{resumed}");
    assert!(
        frames
            .iter()
            .filter_map(|f| f["seq"].as_u64())
            .all(|seq| seq > last_seq),
        "{resumed}"
    );
}

fn agent_available(frames: &[Value]) -> Option<bool> {
    frames
        .iter()
        .rev()
        .find(|f| f["body"]["type"] == "workspace")
        .and_then(|f| f["body"]["agent"]["available"].as_bool())
}

#[test]
fn the_editor_s_settings_reach_the_workspace_over_orbit_s_own() {
    // Orbit's own settings.json names a model; the editor's wins for this workspace.
    let orbit = Relayed::start(json!({"claude.model": "sonnet"}), true);
    let conn = orbit.connect(true)["conn"].as_str().unwrap().to_owned();
    let settings = |values: Value| {
        orbit.env.call(
            "orbit.page.settings",
            json!({"conn": conn, "settings": values}),
        )
    };

    let applied = settings(json!({"model": "haiku", "effort": null}));
    assert_eq!(applied["result"]["options"], true, "{applied}");
    assert_eq!(applied["result"]["reprobed"], false, "{applied}");
    assert_eq!(applied["result"]["agent"]["available"], true, "{applied}");
    // A file from the editor's own dialog (told by the extension, not the
    // page) may go into the page's prompt; another absolute path may not.
    let notes = orbit.env.home.path().join("picked-notes.md");
    let secret = orbit.env.home.path().join("not-picked.md");
    std::fs::write(&notes, "picked\n").unwrap();
    std::fs::write(&secret, "secret\n").unwrap();
    let picked = orbit
        .env
        .call("orbit.page.picked", json!({"conn": conn, "paths": [notes]}));
    assert_eq!(picked["result"]["picked"], 1, "{picked}");
    let relative = orbit.env.call(
        "orbit.page.picked",
        json!({"conn": conn, "paths": ["notes.md"]}),
    );
    assert_eq!(relative["error"]["code"], "invalid_params", "{relative}");
    orbit.env.api.script([text("Hi with the editor's model.")]);
    let sent = orbit.act(
        &conn,
        json!({"type": "action", "id": "p1", "request": {"type": "prompt", "text": "Hello with a picked file?", "files": [notes, secret]}}),
    );
    assert_eq!(sent["result"]["ok"], true, "{sent}");
    orbit.until(&conn, |f| {
        f.to_string().contains("Hi with the editor's model.") && f["body"]["type"] == "transcript"
    });
    let requests = orbit.env.api.requests();
    let asked = requests
        .iter()
        .find(|r| r.to_string().contains("Hello with a picked file?"))
        .unwrap_or_else(|| panic!("the prompt never reached the API: {requests:?}"));
    let model = asked["model"].as_str().unwrap_or_default();
    assert!(model.contains("haiku"), "the request's model is {model}");
    let request = asked.to_string();
    assert!(request.contains("picked-notes.md"), "{request}");
    assert!(!request.contains("not-picked.md"), "{request}");

    // A new path probes again at once: the page hears `claude` is gone.
    let missing = orbit.env.home.path().join("no-claude-here");
    let applied = settings(json!({"path": missing, "model": "haiku"}));
    assert_eq!(applied["result"]["reprobed"], true, "{applied}");
    assert_eq!(applied["result"]["options"], false, "{applied}");
    assert_eq!(applied["result"]["agent"]["available"], false, "{applied}");
    let seen = orbit.until(&conn, |f| {
        f["body"]["type"] == "workspace" && f["body"]["agent"]["available"] == false
    });
    assert_eq!(agent_available(&seen), Some(false));
    let refused = orbit.act(&conn, prompt("p2", "Hello?"));
    assert_eq!(refused["result"]["ok"], false, "{refused}");
    // Back to Orbit's own path: available again.
    let applied = settings(json!({}));
    assert_eq!(applied["result"]["reprobed"], true, "{applied}");
    assert_eq!(applied["result"]["agent"]["available"], true, "{applied}");

    // The host may choose bypassPermissions (the page never can); a bad
    // value is refused with the setting named, and the rest applies.
    let applied = settings(json!({"permissionMode": "bypassPermissions", "effort": "extreme"}));
    assert_eq!(applied["result"]["options"], true, "{applied}");
    let warnings = applied["result"]["warnings"].to_string();
    assert!(
        warnings.contains("claude.effort") && warnings.contains("extreme"),
        "{applied}"
    );
    assert!(!warnings.contains("permissionMode"), "{applied}");
    let page_bypass = orbit.act(
        &conn,
        json!({"type": "action", "id": "m1", "request": {"type": "setPermissionMode", "mode": "bypassPermissions"}}),
    );
    assert_eq!(page_bypass["result"]["ok"], false, "{page_bypass}");

    // Bad calls name the field.
    let bad = settings(json!({"extraArgs": "--add-dir"}));
    assert_eq!(bad["error"]["code"], "invalid_params", "{bad}");
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap()
            .contains("settings.extraArgs"),
        "{bad}"
    );
    let unknown = orbit.env.call(
        "orbit.page.settings",
        json!({"conn": "r999", "settings": {}}),
    );
    assert_eq!(unknown["error"]["code"], "not_found", "{unknown}");
}

#[test]
fn bad_relay_calls_get_specific_errors() {
    let orbit = Relayed::start(json!({}), false);
    let no_trust = orbit.env.call(
        "orbit.page.connect",
        json!({"workspace": orbit.env.ws.path()}),
    );
    assert_eq!(no_trust["error"]["code"], "invalid_params", "{no_trust}");
    assert!(
        no_trust["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`trusted`")
    );
    let relative = orbit.env.call(
        "orbit.page.connect",
        json!({"workspace": "some/folder", "trusted": true}),
    );
    assert_eq!(relative["error"]["code"], "not_found", "{relative}");
    let unknown = orbit
        .env
        .call("orbit.page.next", json!({"conn": "r999", "timeoutMs": 0}));
    assert_eq!(unknown["error"]["code"], "not_found", "{unknown}");
    let conn = orbit.connect(true)["conn"].as_str().unwrap().to_owned();
    let bad = orbit.act(&conn, json!({"type": "resume"}));
    assert_eq!(bad["result"]["code"], "bad_frame", "{bad}");
    let unknown_field = orbit.act(&conn, json!({"type": "trust", "id": "x", "extra": 1}));
    assert_eq!(
        unknown_field["error"]["code"], "invalid_params",
        "{unknown_field}"
    );
    // An empty poll answers at its deadline with no frames. The workspace
    // sends frames of its own after the snapshot (the history scan's
    // progress, at a moment of its own): those are taken by earlier polls.
    let mut polls = 0;
    let (empty, took) = loop {
        let started = Instant::now();
        let answer = orbit
            .env
            .call("orbit.page.next", json!({"conn": conn, "timeoutMs": 300}));
        let frames = answer["result"]["frames"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if frames.is_empty() {
            break (answer, started.elapsed());
        }
        assert!(
            frames
                .iter()
                .all(|f| f["body"]["type"] == "historyProgress"),
            "{answer}"
        );
        polls += 1;
        assert!(polls < 10, "the workspace never went quiet: {answer}");
    };
    assert_eq!(empty["result"]["frames"], json!([]), "{empty}");
    assert!(took >= Duration::from_millis(250));
}

/// Reads the map over the relay as the extension does: offset 0, then on
/// from where each chunk ended; the bytes and how many calls it took.
fn read_map(orbit: &Relayed, conn: &str) -> (Vec<u8>, usize) {
    let mut bytes = Vec::new();
    let mut calls = 0;
    loop {
        let answer = orbit.env.call(
            "orbit.page.map",
            json!({"conn": conn, "offset": bytes.len()}),
        );
        calls += 1;
        let result = &answer["result"];
        assert_eq!(result["offset"], bytes.len(), "{answer}");
        let data = base64::Engine::decode(
            &base64::engine::general_purpose::STANDARD,
            result["data"].as_str().unwrap(),
        )
        .unwrap();
        bytes.extend_from_slice(&data);
        if Some(bytes.len() as u64) == result["total"].as_u64() {
            return (bytes, calls);
        }
        assert!(!data.is_empty(), "an empty chunk before the end: {answer}");
    }
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

#[test]
fn a_relayed_page_reads_the_map_s_snapshot_in_chunks() {
    let orbit = Relayed::start(json!({}), true);
    for (path, text) in [
        ("pkg/__init__.py", "from . import util\n"),
        ("pkg/util.py", "import os\n"),
        ("pkg/deep/mod.py", "from pkg import util\n"),
    ] {
        let file = orbit.env.ws.path().join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    let first = orbit.connect(true);
    let conn = first["conn"].as_str().unwrap().to_owned();
    // The workspace's graph once it has all four files.
    let mut frames = first["first"].as_array().unwrap().clone();
    let graph = loop {
        let graph = frames
            .iter()
            .rev()
            .find(|f| f["body"]["type"] == "workspace")
            .map(|f| f["body"]["graph"].clone());
        if let Some(graph) = graph.filter(|g| g["files"] == 4) {
            break graph;
        }
        frames = orbit.until(&conn, |f| {
            f["body"]["type"] == "workspace" && f["body"]["graph"]["files"] == 4
        });
    };
    // Read again until the map has caught up with that graph.
    let deadline = Instant::now() + Duration::from_secs(30);
    let (map, calls) = loop {
        let (map, calls) = read_map(&orbit, &conn);
        let hash_len = u32_at(&map, 24) as usize;
        if map[32..32 + hash_len] == *graph["hash"].as_str().unwrap().as_bytes() {
            break (map, calls);
        }
        assert!(Instant::now() < deadline, "the map never reached {graph}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!((&map[..4], u32_at(&map, 4)), (&b"ORBM"[..], 1));
    // As many nodes as the graph has files, each path in the string area.
    assert_eq!(u64::from(u32_at(&map, 8)), graph["files"].as_u64().unwrap());
    assert!(u32_at(&map, 12) >= 2, "the imports are pairs of the map");
    let text = String::from_utf8_lossy(&map);
    for path in [
        "main.py",
        "pkg/__init__.py",
        "pkg/util.py",
        "pkg/deep/mod.py",
    ] {
        assert!(text.contains(path), "{path} is not in the map");
    }
    assert_eq!(calls, 1, "a small map is one chunk");
    // A later offset reads on from the snapshot taken at offset 0.
    let on = orbit
        .env
        .call("orbit.page.map", json!({"conn": conn, "offset": 8}));
    let tail = base64::Engine::decode(
        &base64::engine::general_purpose::STANDARD,
        on["result"]["data"].as_str().unwrap(),
    )
    .unwrap();
    assert_eq!(tail, map[8..], "{on}");
    // The same bytes again (nothing changed), and an offset past them named.
    assert_eq!(read_map(&orbit, &conn).0, map);
    let past = orbit.env.call(
        "orbit.page.map",
        json!({"conn": conn, "offset": map.len() + 1}),
    );
    assert_eq!(past["error"]["code"], "invalid_params", "{past}");
    assert!(
        past["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`offset`"),
        "{past}"
    );
    let missing = orbit.env.call("orbit.page.map", json!({"conn": conn}));
    assert_eq!(missing["error"]["code"], "invalid_params", "{missing}");
    let closed = orbit
        .env
        .call("orbit.page.map", json!({"conn": "r999", "offset": 0}));
    assert_eq!(closed["error"]["code"], "not_found", "{closed}");
    // A new connection reads on from nothing: it starts at offset 0.
    let other = orbit.connect(true)["conn"].as_str().unwrap().to_owned();
    let early = orbit
        .env
        .call("orbit.page.map", json!({"conn": other, "offset": 8}));
    assert_eq!(early["error"]["code"], "not_found", "{early}");
}

#[test]
fn claude_s_own_shell_cannot_relay_a_page() {
    let orbit = Relayed::start(
        json!({"claude.extraArgs": ["--allowedTools", "Bash"]}),
        true,
    );
    let call = format!(
        "import socket,json\ns=socket.socket(socket.AF_UNIX)\ns.connect({:?})\ns.sendall((json.dumps({{'id':1,'method':'orbit.page.connect','params':{{'workspace':{:?},'trusted':True}}}})+'\\n').encode())\ns.sendall((json.dumps({{'id':2,'method':'orbit.page.settings','params':{{'conn':'r1','settings':{{'permissionMode':'bypassPermissions'}}}}}})+'\\n').encode())\nf=s.makefile()\nprint('answer=' + f.readline() + ' settings=' + f.readline())\n",
        orbit.env.socket().display().to_string(),
        orbit.env.ws.path().display().to_string(),
    );
    let script = orbit.env.home.path().join("relay.py");
    std::fs::write(&script, call).unwrap();
    orbit.env.api.script([
        tool(
            "Bash",
            json!({"command": format!("python3 {}", script.display()), "description": "Relay"}),
        ),
        text("Tried."),
    ]);
    let conn = orbit.connect(true)["conn"].as_str().unwrap().to_owned();
    let sent = orbit.act(&conn, prompt("p", "Connect to Orbit's page."));
    assert_eq!(sent["result"]["ok"], true, "{sent}");
    let deadline = Instant::now() + Duration::from_secs(90);
    let result = loop {
        let found = orbit
            .env
            .api
            .requests()
            .iter()
            .map(Value::to_string)
            .find(|r| r.contains("answer="));
        if let Some(found) = found {
            break found;
        }
        assert!(Instant::now() < deadline, "the Bash result never came");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        result.contains("forbidden") && !result.contains("snapshotEnd"),
        "{result}"
    );
    // Nor choose Claude's permissions through the editor's settings.
    let settings = result.split("settings=").nth(1).unwrap_or_default();
    assert!(settings.contains("forbidden"), "{result}");
}
