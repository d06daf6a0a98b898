//! A card that waits while no page of its workspace is connected still
//! reaches the user: the running Orbit raises a desktop notification
//! (freedesktop notifications over the session D-Bus, through `zbus`)
//! whose action opens the page on the card (a fresh one-time login address
//! with `&card=<key>/<request id>`, through the same private redirect file
//! as `orbit open`); a question's also offers to skip the questions (the
//! skip goes through the controller like the card's own). The notification
//! is closed once the card is answered anywhere, and once a page of the
//! workspace is connected (the page shows the card, and raises its own
//! notification while hidden: a card never has two); it is raised only after
//! no page has been connected for two seconds (a reload is no reason). With no notification
//! service (no session bus, or nobody owning `org.freedesktop.Notifications`),
//! `orbit open`'s terminal says so, with the card's address.
//!
//! The watcher follows the workspace's log as a page would (its own
//! `connect`, which does not count as a page) and keeps the cards waiting
//! per conversation.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use orbit_common::Locations;
use orbit_core::page_port::PagePort as _;
use orbit_core::workspace::WorkspaceHandle;
use orbit_server::PageServer;
use orbit_types::{HostBody, HostFrame, PageFrame, PageMessage, PageRequest, PendingCard};
use tokio::sync::broadcast::error::RecvError;
use zbus::zvariant::Value as Variant;

const BUS_NAME: &str = "org.freedesktop.Notifications";
const OBJECT_PATH: &str = "/org/freedesktop/Notifications";
/// How often the watcher checks whether a page is connected.
const CHECK: Duration = Duration::from_secs(1);
/// How long no page must have been connected before a card is notified on
/// the desktop (a page reloading is away for a moment).
const GRACE: Duration = Duration::from_secs(2);
/// After the service could not be reached, how long before trying again.
const RETRY: Duration = Duration::from_secs(30);

/// A card and the conversation it waits in.
#[derive(Debug, Clone)]
struct Waiting {
    key: String,
    card: PendingCard,
}

/// What a notification says for a card: summary, body, actions (key, label).
fn notification_text(
    workspace: &str,
    card: &PendingCard,
) -> (String, String, Vec<(&'static str, &'static str)>) {
    match card {
        PendingCard::Permission(card) => (
            format!("Claude asks: {}", card.title),
            format!("{workspace}: no Orbit page is open. Allow, always or deny on the card."),
            vec![("default", "Open Orbit"), ("open", "Open Orbit")],
        ),
        PendingCard::Questions(card) => {
            let first = card
                .questions
                .first()
                .map(|q| q.question.clone())
                .unwrap_or_default();
            let summary = if card.questions.len() == 1 {
                "Claude has a question".to_owned()
            } else {
                format!("Claude has {} questions", card.questions.len())
            };
            (
                summary,
                format!("{workspace}: {first}"),
                vec![
                    ("default", "Open Orbit"),
                    ("open", "Open Orbit"),
                    ("skip", "Skip the questions"),
                ],
            )
        }
    }
}

/// The session bus's notification service, connected on first use.
struct Desktop {
    proxy: Option<zbus::Proxy<'static>>,
    actions: Option<zbus::proxy::SignalStream<'static>>,
    failed_at: Option<Instant>,
}

impl Desktop {
    fn new() -> Self {
        Desktop {
            proxy: None,
            actions: None,
            failed_at: None,
        }
    }

    async fn connect() -> zbus::Result<(zbus::Proxy<'static>, zbus::proxy::SignalStream<'static>)> {
        let connection = zbus::Connection::session().await?;
        let proxy = zbus::Proxy::new_owned(connection, BUS_NAME, OBJECT_PATH, BUS_NAME).await?;
        let actions = proxy.receive_signal("ActionInvoked").await?;
        Ok((proxy, actions))
    }

    /// Raises one notification; its id, or why there is none.
    async fn notify(
        &mut self,
        summary: &str,
        body: &str,
        actions: &[(&str, &str)],
    ) -> Result<u32, String> {
        if self.proxy.is_none() {
            if self.failed_at.is_some_and(|at| at.elapsed() < RETRY) {
                return Err("no session bus".to_owned());
            }
            match Self::connect().await {
                Ok((proxy, stream)) => {
                    self.proxy = Some(proxy);
                    self.actions = Some(stream);
                }
                Err(error) => {
                    self.failed_at = Some(Instant::now());
                    return Err(one_line(&error));
                }
            }
        }
        let Some(proxy) = &self.proxy else {
            return Err("no session bus".to_owned());
        };
        let flat: Vec<&str> = actions.iter().flat_map(|(k, l)| [*k, *l]).collect();
        let mut hints: HashMap<&str, Variant<'_>> = HashMap::new();
        hints.insert("urgency", Variant::U8(2));
        hints.insert("category", Variant::from("im.received"));
        let reply: zbus::Result<u32> = proxy
            .call(
                "Notify",
                &("Orbit", 0u32, "", summary, body, flat, hints, 0i32),
            )
            .await;
        reply.map_err(|error| {
            // The service went away: connect again next time.
            self.proxy = None;
            self.actions = None;
            self.failed_at = Some(Instant::now());
            one_line(&error)
        })
    }

    async fn close(&self, id: u32) {
        if let Some(proxy) = &self.proxy {
            let closed: zbus::Result<()> = proxy.call("CloseNotification", &(id,)).await;
            if let Err(error) = closed {
                tracing::debug!(error = %one_line(&error), "closing a desktop notification failed");
            }
        }
    }

    /// The next action invoked on any notification: (id, action key).
    async fn next_action(&mut self) -> Option<(u32, String)> {
        loop {
            let Some(stream) = self.actions.as_mut() else {
                return std::future::pending().await;
            };
            let Some(message) = stream.next().await else {
                self.actions = None;
                self.proxy = None;
                continue;
            };
            if let Ok(invoked) = message.body().deserialize::<(u32, String)>() {
                return Some(invoked);
            }
        }
    }
}

fn one_line(error: &impl std::fmt::Display) -> String {
    error
        .to_string()
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// What the watcher needs of the running Orbit.
pub(crate) struct Context {
    pub(crate) server: PageServer,
    pub(crate) locations: Locations,
}

/// Follows `workspace`'s cards for as long as it is open.
pub(crate) async fn watch(workspace: Arc<WorkspaceHandle>, context: Arc<Context>) {
    let mut desktop = Desktop::new();
    // Request id -> notification id.
    let mut shown: HashMap<String, u32> = HashMap::new();
    // Request ids the terminal was told of.
    let mut told: Vec<String> = Vec::new();
    // Since when no page has been connected (None while one is).
    let mut alone_since: Option<Instant> = None;
    loop {
        let Ok(connection) = workspace.connect(None, None).await else {
            break;
        };
        let mut pending: HashMap<String, Vec<PendingCard>> = HashMap::new();
        for frame in &connection.first {
            apply(&mut pending, frame);
        }
        let mut live = connection.live;
        let mut check = tokio::time::interval(CHECK);
        let lagged = loop {
            sync(
                &workspace,
                &context,
                &mut desktop,
                &pending,
                &mut shown,
                &mut told,
                &mut alone_since,
            )
            .await;
            tokio::select! {
                frame = live.recv() => match frame {
                    Ok(frame) => apply(&mut pending, &frame),
                    Err(RecvError::Lagged(_)) => break true,
                    Err(RecvError::Closed) => break false,
                },
                _ = check.tick() => {}
                Some((id, action)) = desktop.next_action() => {
                    invoked(&workspace, &context, &pending, &shown, id, &action);
                }
            }
        };
        if !lagged {
            break;
        }
    }
    for id in shown.values() {
        desktop.close(*id).await;
    }
}

/// Keeps the cards waiting per conversation from the log's frames.
fn apply(pending: &mut HashMap<String, Vec<PendingCard>>, frame: &HostFrame) {
    match &frame.body {
        HostBody::Page(PageMessage::Session(session)) => {
            pending.insert(session.key.clone(), session.pending.clone());
        }
        HostBody::Page(PageMessage::Sessions(sessions)) => {
            pending.retain(|key, _| sessions.conversations.iter().any(|c| &c.key == key));
        }
        _ => {}
    }
}

fn waiting(pending: &HashMap<String, Vec<PendingCard>>) -> Vec<Waiting> {
    let mut all: Vec<Waiting> = pending
        .iter()
        .flat_map(|(key, cards)| {
            cards.iter().map(|card| Waiting {
                key: key.clone(),
                card: card.clone(),
            })
        })
        .collect();
    all.sort_by(|a, b| a.key.cmp(&b.key));
    all
}

/// Raises a notification for each card waiting once no page has been
/// connected for [`GRACE`]; closes those whose card is gone, and every one
/// once a page is connected (the page shows the card, and notifies itself).
async fn sync(
    workspace: &WorkspaceHandle,
    context: &Context,
    desktop: &mut Desktop,
    pending: &HashMap<String, Vec<PendingCard>>,
    shown: &mut HashMap<String, u32>,
    told: &mut Vec<String>,
    alone_since: &mut Option<Instant>,
) {
    let now = waiting(pending);
    let gone: Vec<String> = shown
        .keys()
        .filter(|id| !now.iter().any(|w| w.card.request_id() == id.as_str()))
        .cloned()
        .collect();
    for request_id in gone {
        if let Some(id) = shown.remove(&request_id) {
            desktop.close(id).await;
        }
    }
    told.retain(|id| now.iter().any(|w| w.card.request_id() == id.as_str()));
    if workspace.pages() > 0 {
        // A page shows the cards (and raises its own notification while
        // hidden): the desktop's are closed, so that a card never has two.
        *alone_since = None;
        for (_, id) in shown.drain() {
            desktop.close(id).await;
        }
        return;
    }
    // A page that reloads is gone for a moment: no notification for that.
    let alone = *alone_since.get_or_insert_with(Instant::now);
    if alone.elapsed() < GRACE {
        return;
    }
    for waiting in now {
        let request_id = waiting.card.request_id().to_owned();
        if shown.contains_key(&request_id) || told.contains(&request_id) {
            continue;
        }
        let (summary, body, actions) = notification_text(workspace.name(), &waiting.card);
        match desktop.notify(&summary, &body, &actions).await {
            Ok(id) => {
                tracing::info!(
                    workspace = workspace.id(),
                    "a card waits with no page open: desktop notification raised"
                );
                shown.insert(request_id, id);
            }
            Err(error) => {
                told.push(request_id.clone());
                let address = context
                    .server
                    .card_login_url(workspace.id(), &waiting.key, &request_id)
                    .unwrap_or_default();
                let _ = writeln!(
                    std::io::stderr().lock(),
                    "orbit: {summary} in {}, and no page is open; no desktop notification service ({error}). Open the card: {address}",
                    workspace.name()
                );
            }
        }
    }
}

/// The user chose `action` on the notification `id`.
fn invoked(
    workspace: &WorkspaceHandle,
    context: &Context,
    pending: &HashMap<String, Vec<PendingCard>>,
    shown: &HashMap<String, u32>,
    id: u32,
    action: &str,
) {
    let Some(request_id) = shown
        .iter()
        .find(|(_, n)| **n == id)
        .map(|(r, _)| r.clone())
    else {
        return;
    };
    let Some(waiting) = waiting(pending)
        .into_iter()
        .find(|w| w.card.request_id() == request_id)
    else {
        return;
    };
    match action {
        "skip" if matches!(waiting.card, PendingCard::Questions(_)) => {
            let frame = PageFrame::Action {
                id: format!("desktop-{id}-{}", std::process::id()),
                request: PageRequest::SkipQuestions {
                    key: waiting.key.clone(),
                    request_id,
                },
            };
            // Through the controller, as the card's own Skip.
            drop(workspace.act_frame(frame));
        }
        "default" | "open" => {
            match context
                .server
                .card_login_url(workspace.id(), &waiting.key, &request_id)
            {
                Ok(url) => {
                    if let Err(error) =
                        crate::open_cmd::open_browser(&context.locations, &url, false)
                    {
                        tracing::warn!(error = %one_line(&error), "cannot open the card's page");
                    }
                }
                Err(error) => tracing::warn!(error = %one_line(&error), "no address for the card"),
            }
        }
        _ => {}
    }
}
