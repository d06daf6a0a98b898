//! A private session D-Bus (`dbus-daemon --session`) with a small
//! `org.freedesktop.Notifications` listener of the test's own: it records
//! every `Notify` and `CloseNotification`, and emits `ActionInvoked` when
//! told to, as a desktop's notification daemon would when the user clicks.
#![allow(
    clippy::used_underscore_binding,
    clippy::unused_self,
    reason = "the interface macro uses every argument of the freedesktop signatures, and methods take self"
)]

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zbus::object_server::SignalEmitter;
use zbus::zvariant::OwnedValue;

/// One `Notify` call as the listener got it.
#[derive(Debug, Clone)]
pub(crate) struct Notified {
    pub(crate) id: u32,
    pub(crate) app: String,
    pub(crate) summary: String,
    pub(crate) body: String,
    pub(crate) actions: Vec<String>,
}

#[derive(Default)]
struct Record {
    notified: Vec<Notified>,
    closed: Vec<u32>,
}

struct Listener {
    record: Arc<Mutex<Record>>,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Listener {
    #[allow(
        clippy::too_many_arguments,
        reason = "the freedesktop method's signature"
    )]
    fn notify(
        &mut self,
        app_name: String,
        _replaces_id: u32,
        _app_icon: String,
        summary: String,
        body: String,
        actions: Vec<String>,
        _hints: HashMap<String, OwnedValue>,
        _expire_timeout: i32,
    ) -> u32 {
        let mut record = self.record.lock().unwrap();
        let id = u32::try_from(record.notified.len()).unwrap() + 1;
        record.notified.push(Notified {
            id,
            app: app_name,
            summary,
            body,
            actions,
        });
        id
    }

    fn close_notification(&mut self, id: u32) {
        self.record.lock().unwrap().closed.push(id);
    }

    fn get_capabilities(&self) -> Vec<String> {
        vec!["actions".to_owned(), "body".to_owned()]
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        (
            "orbit-test".to_owned(),
            "orbit".to_owned(),
            "1".to_owned(),
            "1.2".to_owned(),
        )
    }

    #[zbus(signal)]
    async fn action_invoked(
        emitter: &SignalEmitter<'_>,
        id: u32,
        action_key: &str,
    ) -> zbus::Result<()>;
}

/// The bus daemon, the listener's connection and what it recorded.
pub(crate) struct DesktopBus {
    daemon: Child,
    runtime: tokio::runtime::Runtime,
    connection: zbus::Connection,
    record: Arc<Mutex<Record>>,
    pub(crate) address: String,
    _dir: tempfile::TempDir,
}

impl DesktopBus {
    /// Starts `dbus-daemon --session` on a private socket and the listener on it.
    pub(crate) fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut daemon = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address"])
            .arg(format!(
                "--address=unix:path={}",
                dir.path().join("bus").display()
            ))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-daemon is missing: apt-get install dbus");
        let mut address = String::new();
        BufReader::new(daemon.stdout.take().unwrap())
            .read_line(&mut address)
            .unwrap();
        let address = address.trim().to_owned();
        assert!(address.starts_with("unix:"), "{address}");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let record = Arc::new(Mutex::new(Record::default()));
        let listener = Listener {
            record: Arc::clone(&record),
        };
        let connection = runtime.block_on(async {
            zbus::connection::Builder::address(address.as_str())
                .unwrap()
                .name("org.freedesktop.Notifications")
                .unwrap()
                .serve_at("/org/freedesktop/Notifications", listener)
                .unwrap()
                .build()
                .await
                .unwrap()
        });
        Self {
            daemon,
            runtime,
            connection,
            record,
            address,
            _dir: dir,
        }
    }

    /// Waits for the first notification.
    pub(crate) fn wait_notified(&self) -> Notified {
        let deadline = Instant::now() + Duration::from_mins(2);
        loop {
            if let Some(first) = self.record.lock().unwrap().notified.first().cloned() {
                return first;
            }
            assert!(Instant::now() < deadline, "no desktop notification came");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub(crate) fn notified(&self) -> Vec<Notified> {
        self.record.lock().unwrap().notified.clone()
    }

    /// Waits until `id` is closed.
    pub(crate) fn wait_closed(&self, id: u32) {
        let deadline = Instant::now() + Duration::from_mins(1);
        while !self.record.lock().unwrap().closed.contains(&id) {
            assert!(
                Instant::now() < deadline,
                "notification {id} was never closed"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The user chose `action` on the notification `id`.
    pub(crate) fn invoke(&self, id: u32, action: &str) {
        self.runtime.block_on(async {
            let iface = self
                .connection
                .object_server()
                .interface::<_, Listener>("/org/freedesktop/Notifications")
                .await
                .unwrap();
            Listener::action_invoked(iface.signal_emitter(), id, action)
                .await
                .unwrap();
        });
    }
}

impl Drop for DesktopBus {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}
