//! The control socket (`hub.*`), the relaunch and token-regeneration
//! sequences of §3, and curl `--unix-socket` smoke tests.

use serde_json::{Value, json};

use crate::support::{TestHub, session};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hub_status_has_the_documented_shape() {
    let hub = TestHub::start().await;
    hub.register("dev.aider").await;
    hub.post("dev.aider", "s1", json!({"title": "t", "activity": "waitingPermission", "message": {"id": "m", "text": "hello"}})).await;
    let status = hub.status();
    assert_eq!(
        status,
        json!({
            "adapters": [{"id": "dev.aider", "name": "Agent", "enabled": false, "reason": "awaiting_user"}],
            "sessions": [{"adapterId": "dev.aider", "host": "local", "sessionId": "s1", "activity": "waitingPermission", "visible": false, "title": "t", "messageText": "hello"}]
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_errors_are_typed() {
    let hub = TestHub::start().await;
    let e = hub.control("nope", Value::Null).unwrap_err();
    assert!(
        matches!(&e, orbit_control::Error::Control { code, .. } if code == "unknown_method"),
        "{e}"
    );
    let e = hub.control("hub.allow", json!({})).unwrap_err();
    assert!(
        matches!(&e, orbit_control::Error::Control { code, .. } if code == "invalid_params"),
        "{e}"
    );
    let e = hub
        .control("hub.allow", json!({"id": "dev.unknown"}))
        .unwrap_err();
    assert!(
        matches!(&e, orbit_control::Error::Control { code, .. } if code == "not_found"),
        "{e}"
    );
    let ping = hub.control("orbit.ping", Value::Null).unwrap();
    assert_eq!(ping["pid"], std::process::id());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn off_removes_the_discovery_file_and_answers_api_disabled() {
    let hub = TestHub::start().await;
    let socket = hub.socket();
    let old_token = hub.token();
    hub.register("dev.aider").await;
    assert_eq!(
        hub.control("hub.off", Value::Null).unwrap(),
        json!({"adapterApi": false})
    );
    assert!(!hub.discovery_path().exists());
    let settings = std::fs::read_to_string(hub.dir.path().join("settings.json")).unwrap();
    assert!(
        !orbit_common::Settings::parse(&settings, "s")
            .unwrap()
            .hub_adapter_api
    );
    let r = crate::support::raw(
        &socket,
        "GET",
        "/a/v1/info",
        &[
            ("Host", "localhost".into()),
            ("Content-Type", "application/json".into()),
            ("Authorization", format!("Bearer {old_token}")),
        ],
        b"",
    )
    .await;
    assert_eq!((r.status, r.code()), (503, "api_disabled"));
    assert!(r.headers.contains_key("retry-after"));
    hub.control("hub.on", Value::Null).unwrap();
    let settings = std::fs::read_to_string(hub.dir.path().join("settings.json")).unwrap();
    assert!(
        orbit_common::Settings::parse(&settings, "s")
            .unwrap()
            .hub_adapter_api
    );
    assert_ne!(
        hub.token(),
        old_token,
        "turning the API on again gives a new token"
    );
    let r = hub
        .call("POST", "/adapters/dev.aider/heartbeat", None)
        .await;
    assert_eq!(r.code(), "adapter_not_registered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_token_ends_every_registration() {
    let hub = TestHub::start().await;
    let old = hub.token();
    hub.register("dev.aider").await;
    hub.allow("dev.aider");
    hub.post("dev.aider", "s1", session("t", "idle")).await;
    hub.control("hub.regenerateToken", Value::Null).unwrap();
    let new = hub.token();
    assert_ne!(old, new);
    // The old token: 401; read the file again: 404; register again: 201.
    let r = crate::support::raw(
        &hub.socket(),
        "POST",
        "/a/v1/adapters/dev.aider/heartbeat",
        &[
            ("Host", "localhost".into()),
            ("Content-Type", "application/json".into()),
            ("Authorization", format!("Bearer {old}")),
        ],
        b"",
    )
    .await;
    assert_eq!(r.status, 401);
    let r = hub
        .post("dev.aider", "s1", json!({"activity": "idle"}))
        .await;
    assert_eq!((r.status, r.code()), (404, "adapter_not_registered"));
    assert_eq!(hub.register("dev.aider").await.status, 201);
    let r = hub
        .post("dev.aider", "s1", json!({"activity": "idle"}))
        .await;
    assert_eq!(r.field(), "title");
    assert_eq!(
        hub.post("dev.aider", "s1", session("t", "idle"))
            .await
            .status,
        200
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_relaunch_sequence() {
    let mut hub = TestHub::start().await;
    let old = hub.token();
    hub.register("dev.aider").await;
    hub.allow("dev.aider");
    hub.post("dev.aider", "s1", session("t", "idle")).await;
    hub.relaunch().await;
    let r = crate::support::raw(
        &hub.socket(),
        "POST",
        "/a/v1/adapters/dev.aider/sessions/s1",
        &[
            ("Host", "localhost".into()),
            ("Content-Type", "application/json".into()),
            ("Authorization", format!("Bearer {old}")),
            ("Content-Length", "2".into()),
        ],
        b"{}",
    )
    .await;
    assert_eq!(r.status, 401, "the token lives in memory");
    let r = hub
        .post("dev.aider", "s1", json!({"activity": "thinking"}))
        .await;
    assert_eq!(r.code(), "adapter_not_registered");
    let r = hub.register("dev.aider").await;
    assert_eq!(
        (r.status, r.body["enabled"].clone()),
        (201, json!(true)),
        "the Allow is remembered"
    );
    assert_eq!(
        hub.post("dev.aider", "s1", json!({"activity": "thinking"}))
            .await
            .field(),
        "title"
    );
    assert_eq!(
        hub.post("dev.aider", "s1", session("t", "thinking"))
            .await
            .status,
        200
    );
}

fn curl(hub: &TestHub, args: &[&str]) -> (u16, Value) {
    let config = hub.dir.path().join("curl.cfg");
    std::fs::write(
        &config,
        format!("header = \"Authorization: Bearer {}\"\n", hub.token()),
    )
    .unwrap();
    let out = std::process::Command::new("curl")
        .arg("-s")
        .arg("-w")
        .arg("\n%{http_code}")
        .arg("--unix-socket")
        .arg(hub.socket())
        .arg("-K")
        .arg(&config)
        .arg("-H")
        .arg("Content-Type: application/json")
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let (body, code) = text.rsplit_once('\n').unwrap();
    let body = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(body).unwrap()
    };
    (code.parse().unwrap(), body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_smoke_test() {
    let hub = TestHub::start().await;
    let (code, body) = curl(&hub, &["http://localhost/a/v1/info"]);
    assert_eq!((code, body["api"].clone()), (200, json!(1)));
    let reg = crate::support::registration("Curl").to_string();
    let (code, _) = curl(
        &hub,
        &[
            "-X",
            "PUT",
            "http://localhost/a/v1/adapters/dev.curl",
            "-d",
            &reg,
        ],
    );
    assert_eq!(code, 201);
    let (code, body) = curl(
        &hub,
        &[
            "-X",
            "POST",
            "http://localhost/a/v1/adapters/dev.curl/sessions/s1",
            "-d",
            r#"{"title":"from curl","activity":"tool","toolKind":"shell"}"#,
        ],
    );
    assert_eq!(
        (code, body["session"]["visible"].clone()),
        (200, json!(false))
    );
    let (code, _) = curl(
        &hub,
        &[
            "-X",
            "POST",
            "http://localhost/a/v1/adapters/dev.curl/heartbeat",
        ],
    );
    assert_eq!(code, 204);
    let (code, body) = curl(
        &hub,
        &[
            "-X",
            "POST",
            "http://localhost/a/v1/adapters/dev.curl/sessions/s1",
            "-H",
            "Transfer-Encoding: chunked",
            "-d",
            "{}",
        ],
    );
    assert_eq!(
        (code, body["error"]["code"].clone()),
        (411, json!("length_required"))
    );
    let big = format!("{{\"x\":\"{}\"}}", "a".repeat(70_000));
    let (code, _) = curl(
        &hub,
        &[
            "-X",
            "POST",
            "http://localhost/a/v1/adapters/dev.curl/sessions/s1",
            "-d",
            &big,
        ],
    );
    assert_eq!(code, 413);
    let (code, _) = curl(
        &hub,
        &[
            "-X",
            "DELETE",
            "http://localhost/a/v1/adapters/dev.curl/sessions/s1",
        ],
    );
    assert_eq!(code, 204);
    let (code, _) = curl(
        &hub,
        &["-X", "DELETE", "http://localhost/a/v1/adapters/dev.curl"],
    );
    assert_eq!(code, 204);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_users_hue_overrides_the_adapters_and_is_remembered() {
    let mut hub = TestHub::start().await;
    hub.register("dev.aider").await;
    hub.allow("dev.aider");
    hub.post("dev.aider", "s1", json!({"title": "t", "activity": "tool"}))
        .await;
    let colour = |hub: &TestHub| {
        hub.control("keypad.state", Value::Null).unwrap()["keys"][0]["colors"]["working"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let before = colour(&hub);
    hub.control("hub.setHue", json!({"id": "dev.aider", "hue": 250}))
        .unwrap();
    let after = colour(&hub);
    assert_ne!(before, after, "the live key is recoloured at once");
    let r = hub.register("dev.aider").await;
    assert_eq!(r.body["adapter"]["resolvedBaseHue"], 250.0);
    assert!(
        r.warnings().iter().any(|w| w.contains("the user set")),
        "{:?}",
        r.warnings()
    );
    // Remembered across a relaunch.
    hub.relaunch().await;
    let r = hub.register("dev.aider").await;
    assert_eq!(r.body["adapter"]["resolvedBaseHue"], 250.0);
    // Reset, and refusals.
    hub.control("hub.setHue", json!({"id": "dev.aider", "hue": null}))
        .unwrap();
    let r = hub.register("dev.aider").await;
    assert_eq!(r.body["adapter"]["resolvedBaseHue"], 150.0);
    for bad in [
        json!({"id": "dev.aider", "hue": 360}),
        json!({"id": "dev.aider", "hue": "red"}),
    ] {
        let e = hub.control("hub.setHue", bad).unwrap_err();
        assert!(
            matches!(&e, orbit_control::Error::Control { code, .. } if code == "invalid_params"),
            "{e}"
        );
    }
    let e = hub
        .control("hub.setHue", json!({"id": "dev.nobody", "hue": 10}))
        .unwrap_err();
    assert!(
        matches!(&e, orbit_control::Error::Control { code, .. } if code == "not_found"),
        "{e}"
    );
}
