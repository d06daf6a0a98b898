//! Session updates (§3): identity, strict values, cleaning, merge, full
//! replace, openURL, pid, limits.

use serde_json::{Value, json};

use crate::support::{TestHub, session};

async fn hub_with_adapter() -> TestHub {
    let hub = TestHub::start().await;
    assert_eq!(hub.register("dev.aider").await.status, 201);
    hub.allow("dev.aider");
    hub
}

fn held(hub: &TestHub, sid: &str) -> Value {
    hub.status()["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["sessionId"] == sid)
        .cloned()
        .unwrap_or(Value::Null)
}

fn key(hub: &TestHub, sid: &str) -> Value {
    let state = hub.control("keypad.state", Value::Null).unwrap();
    let title = held(hub, sid)["title"].clone();
    state["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["title"] == title)
        .cloned()
        .unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_session_needs_title_and_activity() {
    let hub = hub_with_adapter().await;
    let r = hub
        .post("dev.aider", "s1", json!({"activity": "idle"}))
        .await;
    assert_eq!(
        (r.status, r.code(), r.field()),
        (422, "invalid_field", "title")
    );
    let r = hub.post("dev.aider", "s1", json!({"title": "t"})).await;
    assert_eq!((r.status, r.field()), (422, "activity"));
    let r = hub.post("dev.aider", "s1", session("t", "idle")).await;
    assert_eq!(r.status, 200);
    assert!(r.body["session"]["uid"].as_str().unwrap().len() > 1);
    let r = hub
        .post("dev.aider", "s1", json!({"activity": "thinking"}))
        .await;
    assert_eq!(r.status, 200, "an existing session takes a partial update");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn activities_are_strict() {
    let hub = hub_with_adapter().await;
    for activity in [
        "starting",
        "idle",
        "thinking",
        "tool",
        "streaming",
        "waitingPermission",
        "waitingQuestion",
        "done",
        "error",
        "compacting",
        "offline",
    ] {
        assert_eq!(
            hub.post("dev.aider", "s1", session("t", activity))
                .await
                .status,
            200,
            "{activity}"
        );
    }
    let r = hub
        .post("dev.aider", "s1", json!({"activity": "busy"}))
        .await;
    assert_eq!(r.status, 422);
    assert_eq!(
        r.body,
        json!({"error": {"code": "invalid_field", "message": "activity: unknown value 'busy'", "field": "activity"}})
    );
    let r = hub.post("dev.aider", "s1", json!({"activity": null})).await;
    assert_eq!((r.status, r.field()), (422, "activity"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_outside_type_or_range_are_refused_not_clamped() {
    let hub = hub_with_adapter().await;
    hub.post("dev.aider", "s1", session("t", "idle")).await;
    for (body, field) in [
        (json!({"title": 3}), "title"),
        (json!({"subagentCount": -1}), "subagentCount"),
        (json!({"subagentCount": 1.5}), "subagentCount"),
        (json!({"ttlSeconds": 9}), "ttlSeconds"),
        (json!({"ttlSeconds": 3601}), "ttlSeconds"),
        (json!({"background": "yes"}), "background"),
        (json!({"liveText": 1}), "liveText"),
        (json!({"message": "hi"}), "message"),
        (json!({"message": {"text": "x"}}), "message.id"),
        (json!({"message": {"id": "m"}}), "message.text"),
        (json!({"subagentCount": 4_294_967_296_u64}), "subagentCount"),
        (
            json!({"message": {"id": "x".repeat(129), "text": ""}}),
            "message.id",
        ),
        (json!({"host": ""}), "host"),
        (json!({"pid": 0}), "pid"),
        (json!({"title": null}), "title"),
    ] {
        let r = hub.post("dev.aider", "s1", body.clone()).await;
        assert_eq!(
            (r.status, r.code(), r.field()),
            (422, "invalid_field", field),
            "{body}"
        );
    }
    assert_eq!(
        hub.post(
            "dev.aider",
            "s1",
            json!({"subagentCount": 4_294_967_295_u64})
        )
        .await
        .status,
        200
    );
    for ttl in [10, 3600] {
        assert_eq!(
            hub.post("dev.aider", "s1", json!({"ttlSeconds": ttl}))
                .await
                .status,
            200
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lengths_count_characters_after_cleaning() {
    let hub = hub_with_adapter().await;
    for (field, max) in [
        ("title", 120),
        ("toolLabel", 80),
        ("statusDetail", 120),
        ("model", 64),
        ("cwd", 1024),
    ] {
        // Multi-byte characters count once; bidi marks are dropped first.
        let ok = format!("{}\u{202E}\u{200F}", "é".repeat(max));
        let mut body = session("t", "idle");
        body[field] = json!(ok);
        assert_eq!(
            hub.post("dev.aider", "s1", body).await.status,
            200,
            "{field}"
        );
        let mut body = session("t", "idle");
        body[field] = json!("é".repeat(max + 1));
        let r = hub.post("dev.aider", "s1", body).await;
        assert_eq!((r.status, r.field()), (422, field));
    }
    let r = hub
        .post(
            "dev.aider",
            "s2",
            json!({"title": "x".repeat(128), "activity": "idle"}),
        )
        .await;
    assert_eq!(r.status, 422);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn display_text_is_cleaned() {
    let hub = hub_with_adapter().await;
    let r = hub
        .post("dev.aider", "s1", json!({"title": "a\u{0}b\nc\u{202E}d\u{2066}", "activity": "idle", "message": {"id": "m1", "text": "l1\nl2\t\u{1b}[31m\u{200E}"}}))
        .await;
    assert_eq!(r.status, 200);
    let s = held(&hub, "s1");
    assert_eq!(s["title"], "a b cd");
    assert_eq!(s["messageText"], "l1\nl2\t [31m");
    for title in ["\u{202E}\u{2069}", "\u{1}\u{2}", "   "] {
        let r = hub
            .post(
                "dev.aider",
                "s2",
                json!({"title": title, "activity": "idle"}),
            )
            .await;
        assert_eq!((r.status, r.field()), (422, "title"), "{title:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn message_text_keeps_its_last_4096_bytes_on_a_character_boundary() {
    let hub = hub_with_adapter().await;
    // 'é' is 2 bytes: 4097 bytes after the first "x" means the cut lands mid-character.
    let text = format!("x{}", "é".repeat(2100));
    hub.post(
        "dev.aider",
        "s1",
        json!({"title": "t", "activity": "streaming", "message": {"id": "m1", "text": text}}),
    )
    .await;
    let kept = held(&hub, "s1")["messageText"].as_str().unwrap().to_owned();
    assert!(kept.len() <= 4096 && kept.len() >= 4095, "{}", kept.len());
    assert!(kept.chars().all(|c| c == 'é'));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merge_keeps_absent_fields_and_null_clears() {
    let hub = hub_with_adapter().await;
    hub.post("dev.aider", "s1", json!({"title": "t", "activity": "tool", "model": "m", "toolLabel": "Bash", "toolKind": "shell", "message": {"id": "m1", "text": "hi"}})).await;
    hub.post("dev.aider", "s1", json!({"activity": "streaming"}))
        .await;
    let k = key(&hub, "s1");
    assert_eq!(
        (
            k["model"].clone(),
            k["toolLabel"].clone(),
            k["messageText"].clone()
        ),
        (json!("m"), json!("Bash"), json!("hi"))
    );
    hub.post(
        "dev.aider",
        "s1",
        json!({"model": null, "message": null, "activity": "tool"}),
    )
    .await;
    let k = key(&hub, "s1");
    assert_eq!(
        (
            k["model"].clone(),
            k["messageText"].clone(),
            k["toolKind"].clone()
        ),
        (Value::Null, Value::Null, json!("shell"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn put_sessions_replaces_everything() {
    let hub = hub_with_adapter().await;
    hub.post("dev.aider", "old", session("old", "idle")).await;
    hub.post(
        "dev.aider",
        "keep",
        json!({"title": "keep", "activity": "idle", "model": "m"}),
    )
    .await;
    let uid_keep = key(&hub, "keep")["uid"].clone();
    let r = hub
        .call(
            "PUT",
            "/adapters/dev.aider/sessions",
            Some(json!({"sessions": [
                {"id": "keep", "title": "keep", "activity": "thinking"},
                {"id": "new", "title": "new", "activity": "idle", "liveText": false, "host": "box"}
            ]})),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let status = hub.status();
    let ids: Vec<_> = status["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), 2);
    assert!(ids.contains(&"keep".to_owned()) && ids.contains(&"new".to_owned()));
    let k = key(&hub, "keep");
    assert_eq!(
        (k["uid"].clone(), k["model"].clone()),
        (uid_keep, Value::Null),
        "a full replace, same key"
    );
    let r = hub
        .call(
            "PUT",
            "/adapters/dev.aider/sessions",
            Some(json!({"sessions": [{"id": "a", "title": "a"}]})),
        )
        .await;
    assert_eq!((r.status, r.field()), (422, "sessions[0].activity"));
    let r = hub
        .call(
            "PUT",
            "/adapters/dev.aider/sessions",
            Some(json!({"sessions": [session("a", "idle")]})),
        )
        .await;
    assert_eq!((r.status, r.field()), (422, "sessions[0].id"));
    let many: Vec<Value> = (0..33)
        .map(|i| json!({"id": format!("s{i}"), "title": "t", "activity": "idle"}))
        .collect();
    let r = hub
        .call(
            "PUT",
            "/adapters/dev.aider/sessions",
            Some(json!({"sessions": many})),
        )
        .await;
    assert_eq!((r.status, r.code()), (422, "limit_exceeded"));
    assert_eq!(
        hub.status()["sessions"].as_array().unwrap().len(),
        2,
        "a refused replace changes nothing"
    );
    let r = hub
        .call(
            "PUT",
            "/adapters/dev.aider/sessions",
            Some(json!({"sessions": []})),
        )
        .await;
    assert_eq!(r.status, 200);
    assert!(hub.status()["sessions"].as_array().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_url_schemes_must_be_registered_and_never_refused_ones() {
    let hub = hub_with_adapter().await;
    hub.post("dev.aider", "s1", session("t", "idle")).await;
    for url in ["myagent://run/7", "https://example.com", "HTTPS://x"] {
        assert_eq!(
            hub.post("dev.aider", "s1", json!({"openURL": url}))
                .await
                .status,
            200,
            "{url}"
        );
    }
    for url in [
        "ftp://x",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "data:text/html,x",
        "orbtile://x",
        "x-apple.systempreferences:x",
        "no-scheme",
        "https://a b",
    ] {
        let r = hub.post("dev.aider", "s1", json!({"openURL": url})).await;
        assert_eq!((r.status, r.field()), (422, "openURL"), "{url}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pid_must_be_alive_and_the_callers() {
    let hub = hub_with_adapter().await;
    let own = std::process::id();
    assert_eq!(
        hub.post(
            "dev.aider",
            "s1",
            json!({"title": "t", "activity": "idle", "pid": own})
        )
        .await
        .status,
        200
    );
    let r = hub.post("dev.aider", "s1", json!({"pid": 4_000_000})).await;
    assert_eq!((r.status, r.field()), (422, "pid"));
    // pid 1 belongs to root; the check compares owners, so it only passes when the tests run as root.
    let root = std::fs::metadata("/proc/1").map_or(0, |m| std::os::unix::fs::MetadataExt::uid(&m));
    let own_uid = orbtile::own_uid();
    let r = hub.post("dev.aider", "s1", json!({"pid": 1})).await;
    assert_eq!(r.status == 200, root == own_uid);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_identity_includes_the_host() {
    let hub = hub_with_adapter().await;
    hub.post("dev.aider", "s1", session("local one", "idle"))
        .await;
    hub.post(
        "dev.aider",
        "s1",
        json!({"title": "remote one", "activity": "idle", "host": "devbox"}),
    )
    .await;
    let status = hub.status();
    let sessions = status["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2);
    assert!(
        sessions
            .iter()
            .any(|s| s["host"] == "local" && s["title"] == "local one")
    );
    let r = hub
        .call(
            "DELETE",
            "/adapters/dev.aider/sessions/s1?host=devbox",
            None,
        )
        .await;
    assert_eq!(r.status, 204);
    let status = hub.status();
    assert_eq!(status["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(status["sessions"][0]["host"], "local");
    let r = hub
        .call(
            "DELETE",
            "/adapters/dev.aider/sessions/s1?host=devbox",
            None,
        )
        .await;
    assert_eq!((r.status, r.code()), (404, "not_found"));
    assert_eq!(
        hub.call("DELETE", "/adapters/dev.aider/sessions/s1", None)
            .await
            .status,
        204
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_fields_and_tool_kinds_are_warnings() {
    let hub = hub_with_adapter().await;
    let r = hub.post("dev.aider", "s1", json!({"title": "t", "activity": "tool", "toolKind": "teleport", "color": "red", "message": {"id": "m", "text": "", "x": 1}})).await;
    assert_eq!(r.status, 200);
    let w = r.warnings();
    assert!(
        w.contains(&"unknown field `color` ignored".to_owned()),
        "{w:?}"
    );
    assert!(
        w.contains(&"unknown field `message.x` ignored".to_owned()),
        "{w:?}"
    );
    assert!(
        w.iter()
            .any(|w| w.starts_with("toolKind: unknown value 'teleport'")),
        "{w:?}"
    );
    assert_eq!(key(&hub, "s1")["toolKind"], "other");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_two_sessions_per_adapter() {
    let hub = hub_with_adapter().await;
    for i in 0..32 {
        assert_eq!(
            hub.post("dev.aider", &format!("s{i}"), session("t", "idle"))
                .await
                .status,
            200
        );
    }
    let r = hub.post("dev.aider", "s32", session("t", "idle")).await;
    assert_eq!((r.status, r.code()), (422, "limit_exceeded"));
    assert_eq!(
        hub.post("dev.aider", "s0", json!({"activity": "done"}))
            .await
            .status,
        200
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_ids_are_percent_decoded_and_checked() {
    let hub = hub_with_adapter().await;
    assert_eq!(
        hub.post("dev.aider", "a%20b", session("t", "idle"))
            .await
            .status,
        200
    );
    assert_eq!(held(&hub, "a b")["title"], "t");
    let r = hub
        .post("dev.aider", &"x".repeat(129), session("t", "idle"))
        .await;
    assert_eq!((r.status, r.field()), (422, "sessionId"));
    let r = hub.post("dev.aider", "%0a", session("t", "idle")).await;
    assert_eq!((r.status, r.field()), (422, "sessionId"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tap_opens_the_url_or_marks_done_idle() {
    let hub = hub_with_adapter().await;
    hub.post(
        "dev.aider",
        "s1",
        json!({"title": "t", "activity": "done", "openURL": "myagent://run/1"}),
    )
    .await;
    let uid = key(&hub, "s1")["uid"].as_str().unwrap().to_owned();
    let tap = hub.control("keypad.tap", json!({"uid": uid})).unwrap();
    assert_eq!(tap["action"], "markedIdle");
    assert_eq!(held(&hub, "s1")["activity"], "idle");
    let tap = hub.control("keypad.tap", json!({"uid": uid})).unwrap();
    assert_eq!(
        (tap["action"].clone(), tap["url"].clone()),
        (json!("openUrl"), json!("myagent://run/1"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_put_row_names_its_session_with_session_id_or_id() {
    let hub = hub_with_adapter().await;
    let put = |sessions: Value| {
        hub.call(
            "PUT",
            "/adapters/dev.aider/sessions",
            Some(json!({ "sessions": sessions })),
        )
    };
    // `sessionId` (§3's path parameter), `id` (the schema's), or both alike.
    let r = put(json!([
        {"sessionId": "by-path-name", "title": "a", "activity": "idle"},
        {"id": "by-schema-name", "title": "b", "activity": "idle"},
        {"id": "both", "sessionId": "both", "title": "c", "activity": "idle"}
    ]))
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert!(
        r.warnings().is_empty(),
        "sessionId is no unknown field: {r:?}"
    );
    for sid in ["by-path-name", "by-schema-name", "both"] {
        assert_eq!(held(&hub, sid)["activity"], "idle", "{sid}");
    }
    // Both naming different sessions: 422 with the field; nothing changes.
    let r = put(json!([
        {"id": "x", "title": "x", "activity": "idle"},
        {"id": "one", "sessionId": "two", "title": "d", "activity": "idle"}
    ]))
    .await;
    assert_eq!(
        (r.status, r.field()),
        (422, "sessions[1].sessionId"),
        "{r:?}"
    );
    assert_eq!(hub.status()["sessions"].as_array().unwrap().len(), 3);
    // Neither: the row names no session.
    let r = put(json!([{"title": "e", "activity": "idle"}])).await;
    assert_eq!((r.status, r.field()), (422, "sessions[0].id"));
    let r = put(json!([{"sessionId": "", "title": "e", "activity": "idle"}])).await;
    assert_eq!((r.status, r.field()), (422, "sessions[0].sessionId"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_carriage_return_in_message_text_becomes_a_space() {
    let hub = hub_with_adapter().await;
    let r = hub
        .post(
            "dev.aider",
            "s1",
            json!({"title": "t\r\nu", "activity": "streaming", "message": {"id": "m1", "text": "a\r\nb\rc\n\td"}}),
        )
        .await;
    assert_eq!(r.status, 200);
    let s = held(&hub, "s1");
    assert_eq!(s["messageText"], "a \nb c\n\td");
    assert_eq!(s["title"], "t  u");
}
