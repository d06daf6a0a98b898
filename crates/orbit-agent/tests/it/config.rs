//! The probe, trust and settings.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use orbit_agent::probe::{self, ProbeEnv};
use orbit_agent::settings::{self, AgentSettings, HostSettings, SettingsChange, SettingsFile};
use orbit_agent::{AgentError, TrustStore};
use orbit_common::{Locations, Settings};

fn executable(path: &Path, body: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[tokio::test]
async fn probe_configured_path_and_search() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake_claude.py");
    let env = ProbeEnv {
        path_var: Some("".into()),
        home: Some(tmp.path().to_path_buf()),
    };
    let found = probe::probe(Some(fake.to_str().unwrap()), &env)
        .await
        .unwrap();
    assert_eq!(found.version, "2.1.328");
    assert_eq!(found.path, fake);

    // Not configured: PATH, then ~/.local/bin and ~/.claude/local.
    let err = probe::locate(None, &env).unwrap_err();
    assert!(err.to_string().starts_with("agent unavailable:"), "{err}");
    executable(
        &tmp.path().join(".claude/local/claude"),
        "#!/bin/sh\necho '9.9.9 (Claude Code)'\n",
    );
    assert_eq!(
        probe::locate(None, &env).unwrap(),
        tmp.path().join(".claude/local/claude")
    );
    executable(
        &tmp.path().join(".local/bin/claude"),
        "#!/bin/sh\necho '1.2.3 (Claude Code)'\n",
    );
    assert_eq!(probe::probe(None, &env).await.unwrap().version, "1.2.3");
    let on_path = tmp.path().join("bin/claude");
    executable(&on_path, "#!/bin/sh\necho 'boom' >&2\nexit 4\n");
    let env = ProbeEnv {
        path_var: Some(tmp.path().join("bin").into()),
        ..env
    };
    let err = probe::probe(None, &env).await.unwrap_err();
    assert!(
        matches!(err, AgentError::Unavailable(_)) && err.to_string().contains("boom"),
        "{err}"
    );

    // A configured path that is not executable.
    std::fs::write(tmp.path().join("plain"), "x").unwrap();
    assert!(probe::locate(Some(tmp.path().join("plain").to_str().unwrap()), &env).is_err());
    assert_eq!(
        probe::parse_version("2.1.328 (Claude Code)\n").as_deref(),
        Some("2.1.328")
    );
    assert_eq!(probe::parse_version("Claude Code"), None);

    // Executable but not startable (its interpreter does not exist):
    // unavailable, saying why.
    let broken = tmp.path().join("broken/claude");
    executable(&broken, "#!/nonexistent/interpreter\n");
    let err = probe::probe(Some(broken.to_str().unwrap()), &env)
        .await
        .unwrap_err();
    assert!(
        matches!(err, AgentError::Unavailable(_))
            && err
                .to_string()
                .starts_with("agent unavailable: cannot start")
            && err.to_string().contains("No such file"),
        "{err}"
    );
}

#[test]
fn trust_is_recorded_privately_and_covers_subfolders() {
    let config = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("sub/deeper")).unwrap();
    let store = TrustStore::new(&Locations::with_config_dir(config.path().join("orbit")));
    assert!(!store.is_trusted(ws.path()).unwrap());
    assert!(matches!(
        store.require(ws.path()),
        Err(AgentError::Untrusted(_))
    ));
    let recorded = store.trust(&ws.path().join("sub")).unwrap();
    assert_eq!(recorded, ws.path().join("sub").canonicalize().unwrap());
    assert!(store.is_trusted(&ws.path().join("sub/deeper")).unwrap());
    assert!(!store.is_trusted(ws.path()).unwrap());
    store.trust(&ws.path().join("sub")).unwrap();
    let text = std::fs::read_to_string(store.file()).unwrap();
    assert_eq!(text.matches("sub").count(), 1, "{text}");
    let mode = std::fs::metadata(store.file())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
    let message = AgentError::Untrusted("/x/y".into()).to_string();
    assert!(message.contains("orbit trust /x/y"), "{message}");
}

#[test]
fn settings_are_checked() {
    let parsed = Settings::parse(
        r#"{"claude.model": "opus", "claude.effort": "extreme", "claude.permissionMode": "bypassPermissions", "claude.extraArgs": ["--add-dir", "../shared"]}"#,
        "s",
    )
    .unwrap();
    let s = AgentSettings::from_settings(&parsed, None);
    assert_eq!(s.options.model.as_deref(), Some("opus"));
    assert_eq!(s.options.effort, None, "a bad effort is dropped");
    assert_eq!(
        s.options.permission_mode.as_deref(),
        Some("bypassPermissions"),
        "allowed from the file"
    );
    assert_eq!(s.extra_args, ["--add-dir", "../shared"]);
    assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    // Against the CLI's model list when known.
    let known = vec!["default".to_owned(), "opus".to_owned(), "sonnet".to_owned()];
    assert!(
        AgentSettings::from_settings(&parsed, Some(&known))
            .options
            .model
            .is_some()
    );
    assert!(settings::check_model("gpt-9", Some(&known)).is_err());
    assert!(settings::check_model("--evil", None).is_err());
    assert!(settings::check_model("opus[1m]", None).is_ok());
    assert!(settings::check_model("claude-opus-5-5", None).is_ok());
    assert!(settings::check_model("a b", None).is_err());
    assert!(settings::check_permission_mode("bypassPermissions", false).is_err());
    assert!(settings::check_permission_mode("plan", false).is_ok());
    assert!(settings::check_permission_mode("yolo", true).is_err());
    for effort in settings::EFFORTS {
        assert!(settings::check_effort(effort).is_ok());
    }
}

#[test]
fn settings_file_is_reread_when_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    let mut file = SettingsFile::load(&path).unwrap();
    assert_eq!(file.current(), &AgentSettings::default());
    assert_eq!(file.refresh().unwrap(), SettingsChange::default());
    std::fs::write(&path, r#"{"claude.model": "sonnet"}"#).unwrap();
    assert_eq!(
        file.refresh().unwrap(),
        SettingsChange {
            reprobe: false,
            options: true
        }
    );
    assert_eq!(file.current().options.model.as_deref(), Some("sonnet"));
    assert_eq!(
        file.refresh().unwrap(),
        SettingsChange::default(),
        "unchanged file, no change"
    );
    std::fs::write(
        &path,
        r#"{"claude.model": "sonnet", "claude.path": "/opt/claude"}"#,
    )
    .unwrap();
    assert_eq!(
        file.refresh().unwrap(),
        SettingsChange {
            reprobe: true,
            options: false
        }
    );
    std::fs::write(
        &path,
        r#"{"claude.model": "sonnet", "claude.path": "/opt/claude", "claude.extraArgs": ["--x"]}"#,
    )
    .unwrap();
    assert_eq!(
        file.refresh().unwrap(),
        SettingsChange {
            reprobe: true,
            options: false
        }
    );
    // The model list, once known, checks the model.
    let change = file.set_models(vec!["opus".into()]).unwrap();
    assert!(change.options);
    assert_eq!(file.current().options.model, None);
    assert!(file.current().warnings.iter().any(|w| w.contains("sonnet")));
    // ... and prompts are refused with why until the setting changes.
    assert_eq!(
        file.current().model_refused.as_deref(),
        Some("`sonnet` is not one of the CLI's models (opus)")
    );
}

#[test]
fn the_host_s_settings_take_the_file_s_place_for_this_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    std::fs::write(
        &path,
        r#"{"claude.model": "sonnet", "claude.effort": "low", "claude.path": "/opt/claude"}"#,
    )
    .unwrap();
    let mut file = SettingsFile::load(&path).unwrap();
    // The model and the mode from the host: options change, no probe.
    let change = file
        .set_host(HostSettings {
            model: Some("opus".into()),
            permission_mode: Some("bypassPermissions".into()),
            ..HostSettings::default()
        })
        .unwrap();
    assert_eq!(
        change,
        SettingsChange {
            reprobe: false,
            options: true
        }
    );
    let current = file.current();
    assert_eq!(current.options.model.as_deref(), Some("opus"));
    // What the host leaves unset stays the file's.
    assert_eq!(current.options.effort.as_deref(), Some("low"));
    assert_eq!(current.path.as_deref(), Some("/opt/claude"));
    // A host setting may choose bypassPermissions (the page never can).
    assert_eq!(
        current.options.permission_mode.as_deref(),
        Some("bypassPermissions")
    );
    // A new path or extra arguments probe again; empty values are unset.
    let change = file
        .set_host(HostSettings {
            path: Some("/usr/local/bin/claude".into()),
            extra_args: Some(vec!["--add-dir".into(), "../shared".into()]),
            model: Some(String::new()),
            ..HostSettings::default()
        })
        .unwrap();
    assert_eq!(
        change,
        SettingsChange {
            reprobe: true,
            options: true
        }
    );
    assert_eq!(
        file.current().path.as_deref(),
        Some("/usr/local/bin/claude")
    );
    assert_eq!(file.current().extra_args, ["--add-dir", "../shared"]);
    assert_eq!(file.current().options.model.as_deref(), Some("sonnet"));
    assert_eq!(file.current().options.permission_mode, None);
    // A bad value is refused with the key named, as the file's are.
    file.set_host(HostSettings {
        effort: Some("extreme".into()),
        ..HostSettings::default()
    })
    .unwrap();
    assert_eq!(file.current().options.effort, None);
    assert!(
        file.current()
            .warnings
            .iter()
            .any(|w| w.contains("claude.effort") && w.contains("extreme")),
        "{:?}",
        file.current().warnings
    );
    // The file's own re-read keeps the host's settings over it.
    file.set_host(HostSettings {
        model: Some("opus".into()),
        ..HostSettings::default()
    })
    .unwrap();
    std::fs::write(
        &path,
        r#"{"claude.model": "haiku", "claude.effort": "max"}"#,
    )
    .unwrap();
    assert!(file.refresh().unwrap().options);
    assert_eq!(file.current().options.effort.as_deref(), Some("max"));
    assert_eq!(file.current().options.model.as_deref(), Some("opus"));
}

#[tokio::test]
async fn settings_changes_are_noticed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("orbit/settings.json");
    let (_watcher, mut changes) = settings::watch(&path).unwrap();
    let mut file = SettingsFile::load(&path).unwrap();
    std::fs::write(&path, r#"{"claude.effort": "max"}"#).unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(20), changes.recv())
        .await
        .expect("a change event")
        .unwrap();
    assert!(file.refresh().unwrap().options);
    assert_eq!(file.current().options.effort.as_deref(), Some("max"));
}

/// The version `orbit doctor` names as tested is the one the suites pin.
#[test]
fn the_tested_version_is_the_pinned_one() {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/node/claude-cli/package.json");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(manifest).unwrap()).unwrap();
    assert_eq!(
        manifest["dependencies"]["@anthropic-ai/claude-code"],
        orbit_agent::probe::TESTED_CLI_VERSION
    );
}
