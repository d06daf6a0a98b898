//! `orbit keypad`: the keypad in a terminal (ratatui). Every visible session
//! is a key in its adapter's colour: the activity (waiting states in the
//! attention hue, offline dimmed), the tool motion per `toolKind`, the
//! message typed out, model and title. Enter taps the selected key (opens
//! its `openURL`, or turns a `done` key idle); `a` / `d` answer the Allow
//! banner. The state comes from the running hub's control socket
//! (`keypad.state`), polled ten times a second.
//!
//! A key of Orbit's own conversation that waits for a permission shows the
//! whole request first: Enter opens it in full (the whole command, or the
//! file and its change), and only there does a deliberate Shift+A allow or
//! Shift+D deny it (keys pressed in the first half second are ignored); the
//! always choice stays on the page (`o` opens it). A key with a question
//! opens the page on its card.

use std::collections::HashMap;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Args;
use orbit_types::{KeypadKey, KeypadMessage, KeypadState};
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph, Wrap};
use serde_json::{Value, json};

/// The environment variable naming the program that opens a key's URL
/// (default `xdg-open`, `open` on macOS).
const OPENER_ENV: &str = "ORBIT_URL_OPENER";
const KEY_WIDTH: u16 = 30;
const KEY_HEIGHT: u16 = 8;
/// Typewriter speed, characters per second.
const TYPE_RATE: f64 = 80.0;

#[derive(Debug, Args)]
pub(crate) struct KeypadArgs {}

struct Typewriter {
    message_id: String,
    started: Instant,
}

/// A waiting request shown in full before it can be answered.
struct Review {
    uid: String,
    request: orbit_types::KeypadRequest,
    title: String,
    opened: Instant,
    scroll: u16,
}

/// Keys pressed this soon after a request opens are ignored.
const ARMING: Duration = Duration::from_millis(500);

struct App {
    socket: std::path::PathBuf,
    review: Option<Review>,
    state: KeypadState,
    selected: usize,
    status: String,
    typewriters: HashMap<String, Typewriter>,
    started: Instant,
    connected: bool,
}

pub(crate) fn run(_args: &KeypadArgs) -> anyhow::Result<ExitCode> {
    let locations = crate::hub_cmd::locations()?;
    let mut app = App {
        socket: locations.control_socket(),
        review: None,
        state: KeypadState::default(),
        selected: 0,
        status: String::new(),
        typewriters: HashMap::new(),
        started: Instant::now(),
        connected: false,
    };
    let mut terminal = ratatui::try_init().context("`orbit keypad` needs a terminal")?;
    let result = (|| -> anyhow::Result<()> {
        let mut last_poll: Option<Instant> = None;
        loop {
            if last_poll.is_none_or(|t| t.elapsed() >= Duration::from_millis(100)) {
                app.refresh();
                last_poll = Some(Instant::now());
            }
            terminal.draw(|frame| app.draw(frame))?;
            if event::poll(Duration::from_millis(50))?
                && let Event::Key(key) = event::read()?
                && key.kind == KeyEventKind::Press
                && !app.on_key(key.code)
            {
                return Ok(());
            }
        }
    })();
    ratatui::restore();
    result.context("keypad")?;
    Ok(ExitCode::SUCCESS)
}

fn rgb(hex: &str) -> Color {
    let channel = |i: usize| {
        hex.get(i..i + 2)
            .and_then(|h| u8::from_str_radix(h, 16).ok())
            .unwrap_or(128)
    };
    Color::Rgb(channel(1), channel(3), channel(5))
}

fn label(activity: &str) -> &'static str {
    match activity {
        "starting" => "starting",
        "idle" => "idle",
        "thinking" => "thinking",
        "tool" => "tool",
        "streaming" => "streaming",
        "waitingPermission" => "needs permission",
        "waitingQuestion" => "has a question",
        "done" => "done",
        "error" => "error",
        "compacting" => "compacting",
        "offline" => "offline",
        _ => "?",
    }
}

/// The tool motion: frames per `toolKind`.
fn motion(kind: &str) -> &'static [&'static str] {
    match kind {
        "shell" => &["$ ▏", "$ ▎", "$ ▍", "$ ▌", "$ ▋"],
        "edit" => &["✎·  ", "✎·· ", "✎···"],
        "read" => &["◐", "◓", "◑", "◒"],
        "web" => &["◴", "◷", "◶", "◵"],
        "delegate" => &["⇢  ", " ⇢ ", "  ⇢"],
        "plan" => &["☰", "☷"],
        "integration" => &["⇄", "⇆"],
        _ => &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"],
    }
}

fn glyph(activity: &str, frame: usize) -> &'static str {
    const THINK: [&str; 4] = ["·  ", "·· ", "···", " ··"];
    match activity {
        "starting" => "○",
        "idle" => "●",
        "thinking" => THINK[frame % THINK.len()],
        "streaming" => ["▖", "▘", "▝", "▗"][frame % 4],
        "waitingPermission" => "⚠",
        "waitingQuestion" => "?",
        "done" => "✓",
        "error" => "✗",
        "compacting" => ["⣀", "⣤", "⣶", "⣿"][frame % 4],
        "offline" => "◌",
        _ => "·",
    }
}

impl App {
    fn refresh(&mut self) {
        match orbit_control::call(&self.socket, "keypad.state", Value::Null)
            .ok()
            .and_then(|v| serde_json::from_value::<KeypadMessage>(v).ok())
        {
            Some(KeypadMessage::State(state)) => {
                self.connected = true;
                for key in &state.keys {
                    let id = key.message_id.clone().unwrap_or_default();
                    let restart = self
                        .typewriters
                        .get(&key.uid)
                        .is_none_or(|t| t.message_id != id);
                    if restart {
                        self.typewriters.insert(
                            key.uid.clone(),
                            Typewriter {
                                message_id: id,
                                started: Instant::now(),
                            },
                        );
                    }
                }
                self.state = state;
                // A request answered elsewhere (or withdrawn) closes.
                if let Some(review) = &self.review {
                    let still = self.state.keys.iter().any(|k| {
                        k.uid == review.uid
                            && k.request
                                .as_ref()
                                .is_some_and(|r| r.request_id == review.request.request_id)
                    });
                    if !still {
                        self.status = format!("{}: answered elsewhere", review.title);
                        self.review = None;
                    }
                }
                if self.selected >= self.state.keys.len() {
                    self.selected = self.state.keys.len().saturating_sub(1);
                }
            }
            None => {
                self.connected = false;
                self.state = KeypadState::default();
            }
        }
    }

    /// A key press while a request is shown in full.
    fn on_review_key(&mut self, code: KeyCode) {
        let Some(review) = &mut self.review else {
            return;
        };
        if review.opened.elapsed() < ARMING {
            return;
        }
        match code {
            KeyCode::Esc | KeyCode::Char('q') => self.review = None,
            KeyCode::Down | KeyCode::Char('j') => review.scroll = review.scroll.saturating_add(1),
            KeyCode::Up | KeyCode::Char('k') => review.scroll = review.scroll.saturating_sub(1),
            KeyCode::Char('o') => {
                let uid = review.uid.clone();
                self.review = None;
                self.tap_uid(&uid, "");
            }
            KeyCode::Char(c @ ('A' | 'D')) => {
                let choice = if c == 'A' { "allow" } else { "deny" };
                let answer = orbit_control::call(
                    &self.socket,
                    "keypad.answer",
                    json!({"uid": review.uid, "requestId": review.request.request_id, "choice": choice}),
                );
                self.status = match answer {
                    Ok(_) if c == 'A' => format!("allowed: {}", review.request.title),
                    Ok(_) => format!("denied: {}", review.request.title),
                    Err(e) => format!("not answered: {e}"),
                };
                self.review = None;
                self.refresh();
            }
            _ => {}
        }
    }

    /// Handles a key press; `false` quits.
    fn on_key(&mut self, code: KeyCode) -> bool {
        if self.review.is_some() {
            self.on_review_key(code);
            return true;
        }
        let count = self.state.keys.len();
        match code {
            KeyCode::Char('q') | KeyCode::Esc => return false,
            KeyCode::Right | KeyCode::Char('l') | KeyCode::Tab if count > 0 => {
                self.selected = (self.selected + 1) % count;
            }
            KeyCode::Left | KeyCode::Char('h') | KeyCode::BackTab if count > 0 => {
                self.selected = (self.selected + count - 1) % count;
            }
            KeyCode::Enter => self.tap(),
            KeyCode::Char(c @ ('a' | 'd')) => {
                if let Some(banner) = self.state.banners.first() {
                    let method = if c == 'a' { "hub.allow" } else { "hub.deny" };
                    let id = banner.adapter_id.clone();
                    self.status =
                        match orbit_control::call(&self.socket, method, json!({ "id": id })) {
                            Ok(_) if c == 'a' => format!("allowed {id}"),
                            Ok(_) => format!("denied {id}"),
                            Err(e) => format!("error: {e}"),
                        };
                    self.refresh();
                }
            }
            _ => {}
        }
        true
    }

    fn tap(&mut self) {
        let Some(key) = self.state.keys.get(self.selected) else {
            return;
        };
        if key.activity == "waitingPermission"
            && let Some(request) = key.request.as_ref().filter(|r| r.kind == "permission")
        {
            self.review = Some(Review {
                uid: key.uid.clone(),
                request: request.clone(),
                title: key.title.clone(),
                opened: Instant::now(),
                scroll: 0,
            });
            return;
        }
        let (uid, title) = (key.uid.clone(), key.title.clone());
        self.tap_uid(&uid, &title);
    }

    fn tap_uid(&mut self, uid: &str, title: &str) {
        let answer = orbit_control::call(&self.socket, "keypad.tap", json!({ "uid": uid }));
        self.status = match answer.map(serde_json::from_value::<orbit_types::KeypadTapResult>) {
            Ok(Ok(tap)) => match (tap.action.as_str(), tap.url) {
                ("markedIdle", _) => format!("{title}: done → idle"),
                ("openUrl", Some(url)) => {
                    // A built-in key's page login is a private file: not shown.
                    let shown = if url.starts_with("file://") {
                        "the page"
                    } else {
                        url.as_str()
                    };
                    match open_url(&url) {
                        Ok(()) => format!("opened {shown}"),
                        Err(e) => format!("cannot open {shown}: {e}"),
                    }
                }
                _ => format!("{title}: nothing to open"),
            },
            Ok(Err(e)) => format!("error: {e}"),
            Err(e) => format!("error: {e}"),
        };
        self.refresh();
    }

    fn draw(&self, frame: &mut ratatui::Frame<'_>) {
        let area = frame.area();
        let banner_height = u16::try_from(self.state.banners.len()).unwrap_or(3).min(3);
        let [header, banners, grid, footer] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(banner_height),
            Constraint::Min(0),
            Constraint::Length(1),
        ])
        .areas(area);
        let api = if !self.connected {
            "no hub running (start one with `orbit hub serve`)"
        } else if self.state.adapter_api {
            "adapter API on"
        } else {
            "adapter API off"
        };
        frame.render_widget(
            Paragraph::new(Line::from(vec![
                Span::styled("Orbit keypad", Style::new().add_modifier(Modifier::BOLD)),
                Span::raw(format!(
                    "  ·  {api}  ·  {}",
                    orbit_common::count(self.state.keys.len(), "key")
                )),
            ])),
            header,
        );
        let banner_lines: Vec<Line<'_>> = self
            .state
            .banners
            .iter()
            .take(3)
            .map(|b| {
                Line::from(vec![
                    Span::styled(
                        format!(" {} ", b.text),
                        Style::new().fg(Color::Black).bg(Color::Yellow),
                    ),
                    Span::raw("  [a] Allow  [d] Deny"),
                ])
            })
            .collect();
        frame.render_widget(Paragraph::new(banner_lines), banners);
        if let Some(review) = &self.review {
            draw_review(frame, grid, review);
            frame.render_widget(
                Paragraph::new(format!(
                    "Shift+A Allow · Shift+D Deny · o open the page (always…) · ↑/↓ scroll · Esc back   {}",
                    self.status
                ))
                .style(Style::new().fg(Color::Yellow)),
                footer,
            );
            return;
        }
        self.draw_grid(frame, grid);
        // Keys beyond the screen: say so, and how to reach them.
        let per_page = per_page(grid);
        let total = self.state.keys.len();
        let more = if total > per_page {
            let first = (self.selected / per_page) * per_page;
            format!(
                "keys {}–{} of {total} (←/→ for the others) · ",
                first + 1,
                (first + per_page).min(total)
            )
        } else {
            String::new()
        };
        frame.render_widget(
            Paragraph::new(format!(
                "{more}←/→ select · Enter tap (a waiting key shows its request) · a/d allow/deny adapter · q quit   {}",
                self.status
            ))
            .style(Style::new().fg(Color::DarkGray)),
            footer,
        );
    }

    fn draw_grid(&self, frame: &mut ratatui::Frame<'_>, area: Rect) {
        let columns = (area.width / KEY_WIDTH).max(1);
        let per_page = per_page(area);
        let page_start = (self.selected / per_page) * per_page;
        for (i, key) in self
            .state
            .keys
            .iter()
            .enumerate()
            .skip(page_start)
            .take(per_page)
        {
            let n = u16::try_from(i - page_start).unwrap_or(0);
            let cell = Rect {
                x: area.x + (n % columns) * KEY_WIDTH,
                y: area.y + (n / columns) * KEY_HEIGHT,
                width: KEY_WIDTH.min(area.width),
                height: KEY_HEIGHT.min(area.height),
            };
            if cell.bottom() <= area.bottom() {
                self.draw_key(frame, cell, key, i == self.selected);
            }
        }
    }

    fn draw_key(
        &self,
        frame: &mut ratatui::Frame<'_>,
        cell: Rect,
        key: &KeypadKey,
        selected: bool,
    ) {
        let ticks = (self.started.elapsed().as_millis() / 150) as usize;
        let waiting = matches!(
            key.activity.as_str(),
            "waitingPermission" | "waitingQuestion"
        );
        let offline = key.activity == "offline";
        let color = if offline {
            rgb(&key.colors.dimmed)
        } else if waiting {
            rgb(&key.colors.attention)
        } else {
            rgb(&key.colors.working)
        };
        let text_style = if offline {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new()
        };
        let mut border = Style::new().fg(color);
        if waiting && ticks % 6 < 3 {
            border = border.add_modifier(Modifier::BOLD);
        }
        let name = key.monogram.as_deref().map_or_else(
            || key.adapter_short_name.clone(),
            |m| format!("{m} {}", key.adapter_short_name),
        );
        let host = if key.host == "local" {
            String::new()
        } else {
            format!(" @{}", key.host)
        };
        let mut block = Block::bordered()
            .border_type(if selected {
                BorderType::Thick
            } else {
                BorderType::Rounded
            })
            .border_style(border)
            .title(Span::styled(
                format!(" {name}{host} "),
                Style::new().fg(color),
            ));
        if key.background {
            block = block.title_bottom(Span::styled(
                " background ",
                Style::new().fg(Color::DarkGray),
            ));
        }
        let activity_line = {
            let mut spans = vec![Span::styled(
                format!("{} {}", glyph(&key.activity, ticks), label(&key.activity)),
                Style::new().fg(color).add_modifier(Modifier::BOLD),
            )];
            if key.activity == "tool" {
                let kind = key.tool_kind.as_deref().unwrap_or("other");
                let frames = motion(kind);
                spans.push(Span::styled(
                    format!("  {} {kind}", frames[ticks % frames.len()]),
                    Style::new().fg(color),
                ));
            }
            if key.subagent_count > 0 {
                spans.push(Span::raw(format!("  +{}", key.subagent_count)));
            }
            Line::from(spans)
        };
        // One row each for the title and the detail, so neither can push the
        // latest output out of the key; the status detail (`exit 3`) is
        // always said, the tool's label only while it runs.
        let width = usize::from(cell.width.saturating_sub(2)).max(1);
        let tool = (key.activity == "tool")
            .then_some(key.tool_label.as_deref())
            .flatten();
        let detail = [key.model.as_deref(), tool, key.status_detail.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" · ");
        let typed = key.message_text.as_deref().map(|text| {
            let shown = self.typewriters.get(&key.uid).map_or(usize::MAX, |t| {
                let typed = t.started.elapsed().as_secs_f64() * TYPE_RATE;
                #[expect(clippy::cast_sign_loss, reason = "elapsed time is never negative")]
                let typed = typed as usize;
                typed
            });
            let visible: String = text.chars().take(shown).collect();
            // The end of the latest line typed so far, as much as the rows
            // left below the title and the detail hold.
            let latest = visible.lines().rev().find(|l| !l.trim().is_empty());
            last_chars(latest.unwrap_or_default().trim(), width * TYPED_ROWS)
        });
        let lines = vec![
            activity_line,
            Line::styled(
                one_row(&key.title, width),
                text_style.add_modifier(Modifier::BOLD),
            ),
            Line::styled(one_row(&detail, width), Style::new().fg(Color::Gray)),
            Line::styled(typed.unwrap_or_default(), text_style),
        ];
        frame.render_widget(
            Paragraph::new(lines).block(block).wrap(Wrap { trim: true }),
            cell,
        );
    }
}

/// The request of a waiting key, whole, wrapped and scrollable.
fn draw_review(frame: &mut ratatui::Frame<'_>, area: Rect, review: &Review) {
    let tool = review.request.tool.as_deref().unwrap_or("a tool");
    let mut lines = vec![
        Line::styled(
            format!("{} asks to use {tool}", review.title),
            Style::new().add_modifier(Modifier::BOLD),
        ),
        Line::raw(review.request.title.clone()),
        Line::raw(""),
    ];
    lines.extend(review.request.text.lines().map(|l| Line::raw(l.to_owned())));
    if review.request.always_on_page {
        lines.push(Line::raw(""));
        lines.push(Line::styled(
            "An \"always\" choice is offered on the page (o), where its rule is shown in full.",
            Style::new().fg(Color::Gray),
        ));
    }
    let block = Block::bordered()
        .border_type(BorderType::Double)
        .border_style(Style::new().fg(Color::Yellow))
        .title(" Permission request: read it whole before you answer ");
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false })
            .scroll((review.scroll, 0)),
        area,
    );
}

/// Rows of a key left for the typed message: its height (8) less the
/// borders, the activity, the title and the detail.
const TYPED_ROWS: usize = 3;

/// How many keys a grid of `area` shows at once.
fn per_page(area: Rect) -> usize {
    let columns = (area.width / KEY_WIDTH).max(1);
    let rows = (area.height / KEY_HEIGHT).max(1);
    usize::from(columns * rows)
}

/// `text` on one row of `width` characters, cut with an ellipsis.
fn one_row(text: &str, width: usize) -> String {
    let text: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.chars().count() <= width {
        return text;
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// The last `max` characters of `text`, an ellipsis first when cut.
fn last_chars(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let mut out = String::from("…");
    out.extend(text.chars().skip(count - max.saturating_sub(1)));
    out
}

/// Opens a URL with the user's opener (`ORBIT_URL_OPENER`, else `open` on
/// macOS, `xdg-open` elsewhere), without a shell.
pub(crate) fn open_url(url: &str) -> std::io::Result<()> {
    let default = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let opener = std::env::var_os(OPENER_ENV)
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| default.into());
    spawn_detached(opener.as_ref(), &[url])
}

/// Opens a URL in an app window of Chromium or Chrome, the first found on
/// `PATH` (`--app=URL`); an error when none is installed.
pub(crate) fn open_app_window(url: &str) -> std::io::Result<()> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ]
    .iter()
    .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
    .find(|candidate| candidate.is_file());
    match found {
        Some(browser) => spawn_detached(browser.as_os_str(), &[&format!("--app={url}")]),
        None => Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no Chromium or Chrome on PATH for --app",
        )),
    }
}

/// Starts a program with arguments (argv only, no shell), detached from
/// Orbit's stdio.
#[expect(
    clippy::disallowed_methods,
    reason = "the binary's opener spawn: the URL opener or a browser, argv only"
)]
fn spawn_detached(program: &std::ffi::OsStr, args: &[&str]) -> std::io::Result<()> {
    std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use serde_json::json;

    use super::*;

    fn key(n: usize, title: &str, activity: &str, detail: Option<&str>, text: &str) -> KeypadKey {
        serde_json::from_value(json!({
            "uid": format!("u{n}"), "slot": n, "adapterId": "dev.test", "adapterShortName": "test",
            "monogram": null, "host": "local", "activity": activity, "toolKind": null,
            "toolLabel": "Bash ls", "title": title, "model": null, "messageId": "m1",
            "messageText": text, "statusDetail": detail, "subagentCount": 0,
            "background": false, "hasOpenUrl": false,
            "colors": {"working": "#336699", "attention": "#cc8800", "dimmed": "#555555", "text": "#ffffff"}
        }))
        .unwrap()
    }

    fn app(keys: Vec<KeypadKey>) -> App {
        App {
            socket: std::path::PathBuf::new(),
            state: KeypadState {
                adapter_api: true,
                keys,
                banners: Vec::new(),
            },
            selected: 0,
            status: String::new(),
            typewriters: HashMap::new(),
            started: Instant::now(),
            connected: true,
            review: None,
        }
    }

    /// The screen, one string per row.
    fn screen(app: &App, width: u16, height: u16) -> Vec<String> {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal.draw(|frame| app.draw(frame)).unwrap();
        let buffer = terminal.backend().buffer().clone();
        (0..height)
            .map(|y| {
                (0..width)
                    .map(|x| buffer[(x, y)].symbol().to_owned())
                    .collect()
            })
            .collect()
    }

    /// A long title used to wrap over the key's rows and push the latest
    /// output line out of it; the status detail was hidden by the tool's
    /// label; the header said "1 keys".
    #[test]
    fn a_key_shows_its_latest_line_and_status_detail_under_a_long_title() {
        let title = "A very long session title that goes on and on well past the key's width";
        let text = "first line of output\nan older line\nthe latest line of output";
        let app = app(vec![key(0, title, "error", Some("exit 3"), text)]);
        let rows = screen(&app, 50, 12).join("\n");
        assert!(rows.contains("the latest line of output"), "{rows}");
        assert!(rows.contains("exit 3"), "{rows}");
        assert!(!rows.contains("Bash ls"), "a finished tool's label: {rows}");
        assert!(rows.contains("A very long session title t…"), "{rows}");
        assert!(rows.contains('…'), "{rows}");
        assert!(rows.contains("·  1 key "), "{rows}");
    }

    /// On a narrow, short terminal only one key fits: the footer says how
    /// many there are and how to reach them.
    #[test]
    fn a_narrow_terminal_says_which_keys_it_shows() {
        let keys = (0..3).map(|n| key(n, "t", "idle", None, "")).collect();
        let rows = screen(&app(keys), 40, 12);
        let footer = rows.last().unwrap();
        assert!(
            footer.starts_with("keys 1–1 of 3 (←/→ for the others)"),
            "{footer}"
        );
        let wide = (0..3).map(|n| key(n, "t", "idle", None, "")).collect();
        let rows = screen(&app(wide), 120, 12);
        assert!(!rows.last().unwrap().contains("of 3"), "{rows:?}");
    }
}
