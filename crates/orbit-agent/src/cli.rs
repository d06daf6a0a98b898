//! The CLI backend: one `claude` process per conversation, speaking
//! stream-json. An actor task owns the child; it decodes stdout, answers the
//! CLI's control requests with what the user decided, tracks subagents and
//! cost, escalates an interrupt (deny pending, `interrupt`, SIGTERM after the
//! grace period, SIGKILL after the next) and reports the process's end once.

mod answers;
mod inbound;
mod subagents;

use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use orbit_types::{AgentEvent, ProcessExit, TurnEnd, TurnOutcome};
use serde_json::Value;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::ChildStdin;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use crate::backend::{AgentProcess, AgentSink, Answer, ControlFuture, ProcessSpec, SessionBackend};
use crate::codec::{self, DecodeError, FieldTracker, LineRead, MAX_LINE_BYTES};
use crate::error::{AgentError, Result};
use crate::process::{self, AgentChild, Invocation};
use crate::wire::{
    CanUseTool, Inbound, Outbound, OutboundRequest, OutboundResponse, PermissionResult, UserInput,
};

use answers::{describe, split_status};
pub use answers::{model_names, parse_questions, permission_result};
use subagents::Subagents;

/// The fixed part of every invocation.
pub const BASE_ARGS: [&str; 8] = [
    "--print",
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--verbose",
    "--permission-prompt-tool",
    "stdio",
];

/// Timings of the control protocol, injectable for tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// How long an outgoing control request waits for its answer.
    pub control: Duration,
    /// After an interrupt, how long to wait for the turn's result before SIGTERM.
    pub interrupt_grace: Duration,
    /// After SIGTERM, how long before SIGKILL.
    pub term_grace: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            control: Duration::from_secs(30),
            interrupt_grace: Duration::from_secs(5),
            term_grace: Duration::from_secs(3),
        }
    }
}

/// How to run the CLI.
#[derive(Debug, Clone, Default)]
pub struct CliConfig {
    /// The probed executable.
    pub program: PathBuf,
    /// `claude.extraArgs`, appended to every invocation.
    pub extra_args: Vec<String>,
    /// Variables set on top of the inherited environment (tests).
    pub env: Vec<(OsString, OsString)>,
    /// Protocol timings.
    pub timeouts: Timeouts,
}

/// The argument list of the spec: the fixed flags, then `--model`,
/// `--effort`, `--permission-mode` (unless `default`), `--resume`, then the
/// extra arguments.
pub fn build_args(spec: &ProcessSpec, extra_args: &[String]) -> Vec<OsString> {
    let mut args: Vec<OsString> = BASE_ARGS.iter().map(OsString::from).collect();
    if let Some(model) = &spec.options.model {
        args.extend(["--model".into(), model.into()]);
    }
    if let Some(effort) = &spec.options.effort {
        args.extend(["--effort".into(), effort.into()]);
    }
    if let Some(mode) = spec
        .options
        .permission_mode
        .as_ref()
        .filter(|m| *m != "default")
    {
        args.extend(["--permission-mode".into(), mode.into()]);
    }
    if let Some(session) = &spec.resume {
        args.extend(["--resume".into(), session.into()]);
    }
    args.extend(extra_args.iter().map(OsString::from));
    args
}

/// The last running total seen per session id, shared by every process of a
/// backend: a turn's cost is the difference, so a resumed session (whose
/// total includes its earlier turns on CLI 2.1.328) never counts a turn twice.
#[derive(Debug, Clone, Default)]
pub struct CostLedger(Arc<Mutex<HashMap<String, f64>>>);

impl CostLedger {
    /// Records `total` for `session` and returns the delta against the last
    /// total seen (from zero for a session never seen). A total lower than the
    /// last one means the CLI started counting afresh: the total is the delta.
    pub fn delta(&self, session: &str, total: f64) -> f64 {
        let Ok(mut map) = self.0.lock() else {
            return total;
        };
        let last = map.insert(session.to_owned(), total).unwrap_or(0.0);
        if total >= last { total - last } else { total }
    }

    /// The last total seen for `session`.
    pub fn total(&self, session: &str) -> Option<f64> {
        self.0.lock().ok()?.get(session).copied()
    }
}

/// How long an exit waits for the rest of stderr (its last line is the
/// failure's reason).
const STDERR_READ: Duration = Duration::from_millis(500);

/// Starts `claude` processes.
#[derive(Debug, Clone, Default)]
pub struct CliBackend {
    config: CliConfig,
    ledger: CostLedger,
}

impl CliBackend {
    /// A backend running `config.program`.
    pub fn new(config: CliConfig) -> Self {
        Self {
            config,
            ledger: CostLedger::default(),
        }
    }

    /// A backend running `config.program` that takes turn costs as deltas
    /// against `ledger`'s totals (shared with an earlier backend, so a
    /// session resumed by this one is not charged its earlier turns again).
    pub fn with_ledger(config: CliConfig, ledger: CostLedger) -> Self {
        Self { config, ledger }
    }

    /// The cost ledger.
    pub fn ledger(&self) -> &CostLedger {
        &self.ledger
    }

    /// Starts a process; the concrete handle (see [`SessionBackend::start`]).
    pub fn spawn(&self, spec: &ProcessSpec, sink: Arc<dyn AgentSink>) -> Result<CliProcess> {
        let invocation = Invocation {
            program: self.config.program.clone().into_os_string(),
            args: build_args(spec, &self.config.extra_args),
            cwd: Some(spec.cwd.clone()),
            env: self.config.env.clone(),
        };
        let mut child = process::spawn(&invocation)?;
        let stdin = child.take_stdin();
        let stdout = child.take_stdout();
        let (Some(stdin), Some(stdout)) = (stdin, stdout) else {
            return Err(AgentError::Exited);
        };
        let pid = child.id();
        let (stdin_tx, stdin_rx) = mpsc::channel(STDIN_QUEUE);
        tokio::spawn(write_stdin(stdin, stdin_rx));
        let (tx, rx) = mpsc::channel(COMMAND_QUEUE);
        let (stop, stop_rx) = watch::channel(Stop::default());
        let (line_tx, line_rx) = mpsc::channel(64);
        let background = Arc::new(AtomicUsize::new(0));
        tokio::spawn(read_stdout(stdout, line_tx));
        let actor = Actor {
            child,
            stdin: Some(stdin_tx),
            outbox: VecDeque::new(),
            sink,
            ledger: self.ledger.clone(),
            timeouts: self.config.timeouts,
            pending_requests: HashMap::new(),
            pending_controls: HashMap::new(),
            turn: None,
            session_id: spec.resume.clone(),
            cli_version: None,
            subagents: Subagents::default(),
            compacting: false,
            malformed: 0,
            escalation: None,
            background: Arc::clone(&background),
            last_context: None,
        };
        tokio::spawn(actor.run(rx, stop_rx, line_rx));
        Ok(CliProcess {
            tx,
            stop,
            pid,
            background,
            next_id: Arc::new(AtomicU64::new(1)),
            control_timeout: self.config.timeouts.control,
        })
    }
}

impl SessionBackend for CliBackend {
    fn start(&self, spec: &ProcessSpec, sink: Arc<dyn AgentSink>) -> Result<Box<dyn AgentProcess>> {
        Ok(Box::new(self.spawn(spec, sink)?))
    }
}

enum Command {
    Prompt(String),
    Answer(String, Answer),
    Control(String, OutboundRequest, oneshot::Sender<Result<Value>>),
    CancelControl(String),
}

/// How many commands (prompts, answers, control requests) may wait for the
/// actor; past that, sending one fails with [`AgentError::Overloaded`].
pub const COMMAND_QUEUE: usize = 256;

/// Interrupts and disposal: state, not queued commands, so they are never
/// refused or lost; the actor reads them after the commands sent before.
#[derive(Debug, Clone, Copy, Default)]
struct Stop {
    interrupts: u64,
    dispose: bool,
}

/// A handle on one process. Dropping it disposes the process.
#[derive(Debug)]
pub struct CliProcess {
    tx: mpsc::Sender<Command>,
    stop: watch::Sender<Stop>,
    pid: Option<u32>,
    background: Arc<AtomicUsize>,
    next_id: Arc<AtomicU64>,
    control_timeout: Duration,
}

impl CliProcess {
    /// Queues a command; a full queue (the actor is not keeping up) is an
    /// error the caller sees, never a wait or a silent drop.
    fn send(&self, command: Command) -> Result<()> {
        self.tx.try_send(command).map_err(|error| match error {
            mpsc::error::TrySendError::Full(_) => AgentError::Overloaded(COMMAND_QUEUE),
            mpsc::error::TrySendError::Closed(_) => AgentError::Exited,
        })
    }
}

impl AgentProcess for CliProcess {
    fn prompt(&self, text: &str) -> Result<()> {
        self.send(Command::Prompt(text.to_owned()))
    }

    fn answer(&self, request_id: &str, answer: Answer) -> Result<()> {
        self.send(Command::Answer(request_id.to_owned(), answer))
    }

    fn interrupt(&self) {
        // Never queued behind commands, never refused: a counter the actor
        // reads after the commands sent before it.
        self.stop.send_modify(|stop| stop.interrupts += 1);
    }

    fn dispose(&self) {
        self.stop.send_modify(|stop| stop.dispose = true);
    }

    fn control(&self, request: OutboundRequest) -> ControlFuture {
        let id = format!("orbit_req_{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        let (reply_tx, reply_rx) = oneshot::channel();
        let sent = self.send(Command::Control(id.clone(), request, reply_tx));
        let tx = self.tx.clone();
        let timeout = self.control_timeout;
        Box::pin(async move {
            sent?;
            match tokio::time::timeout(timeout, reply_rx).await {
                Ok(Ok(result)) => result,
                Ok(Err(_)) => Err(AgentError::Exited),
                Err(_) => {
                    // Waits for room: the cancel must reach the wire.
                    let _ = tx.send(Command::CancelControl(id.clone())).await;
                    Err(AgentError::Timeout(id))
                }
            }
        })
    }

    fn pid(&self) -> Option<u32> {
        self.pid
    }

    fn background_work(&self) -> bool {
        self.background.load(Ordering::Relaxed) > 0
    }
}

/// How many lines the stdin writer's queue holds.
const STDIN_QUEUE: usize = 64;

/// Writes the queued lines to Claude's stdin, on a task of its own: a
/// write that waits for Claude to read never stops the actor reading
/// Claude's stdout. Ends (closing stdin) when the queue's senders are gone
/// or a write fails.
async fn write_stdin(mut stdin: ChildStdin, mut lines: mpsc::Receiver<Vec<u8>>) {
    while let Some(line) = lines.recv().await {
        if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
            return;
        }
    }
}

enum LineMsg {
    Message(Box<Inbound>),
    UnknownFields(codec::UnknownFields),
    Malformed(String),
}

/// Reads stdout lines, decodes them and hands them to the actor. Ends at EOF
/// (dropping the sender tells the actor).
async fn read_stdout(stdout: tokio::process::ChildStdout, tx: mpsc::Sender<LineMsg>) {
    let mut reader = BufReader::with_capacity(256 * 1024, stdout);
    let mut buf = Vec::new();
    let mut fields = FieldTracker::new();
    loop {
        let msg = match codec::read_line(&mut reader, &mut buf, MAX_LINE_BYTES).await {
            Ok(LineRead::Eof) | Err(_) => return,
            Ok(LineRead::TooLong(n)) => LineMsg::Malformed(DecodeError::TooLong(n).to_string()),
            Ok(LineRead::Line) => {
                // The benchmark's trace (off unless installed): the moment the line was read.
                orbit_common::latency_note(orbit_common::LatencyStage::Read, None, || {
                    let cut = buf.len().min(orbit_common::LATENCY_TEXT_BYTES);
                    String::from_utf8_lossy(&buf[..cut]).into_owned()
                });
                match fields.decode(&buf) {
                    Ok(None) => continue,
                    Ok(Some((message, unknown))) => {
                        if let Some(unknown) = unknown
                            && tx.send(LineMsg::UnknownFields(unknown)).await.is_err()
                        {
                            return;
                        }
                        LineMsg::Message(Box::new(message))
                    }
                    Err(error) => LineMsg::Malformed(error.to_string()),
                }
            }
        };
        if tx.send(msg).await.is_err() {
            return;
        }
    }
}

struct Turn {
    interrupting: bool,
}

enum Escalation {
    /// Interrupt sent; SIGTERM at the deadline.
    AwaitResult(Instant),
    /// SIGTERM sent; SIGKILL at the deadline.
    AwaitExit(Instant),
}

struct Actor {
    child: AgentChild,
    /// The writer task's queue (`None` once stdin is closed).
    stdin: Option<mpsc::Sender<Vec<u8>>>,
    /// Lines waiting for room in the writer's queue, in order.
    outbox: VecDeque<Vec<u8>>,
    sink: Arc<dyn AgentSink>,
    ledger: CostLedger,
    timeouts: Timeouts,
    /// The CLI's open `can_use_tool` requests.
    pending_requests: HashMap<String, CanUseTool>,
    /// Orbit's open control requests (the interrupt has no reply channel).
    pending_controls: HashMap<String, Option<oneshot::Sender<Result<Value>>>>,
    turn: Option<Turn>,
    session_id: Option<String>,
    /// The version the CLI's `init` gave (what met unknowns are filed under).
    cli_version: Option<String>,
    subagents: Subagents,
    /// The CLI said it is compacting the conversation and has not said
    /// it is done.
    compacting: bool,
    malformed: u64,
    escalation: Option<Escalation>,
    /// Background subagents launched and not ended (read by the handle).
    background: Arc<AtomicUsize>,
    /// The context the main thread's last API call filled (tokens).
    last_context: Option<u64>,
}

impl Actor {
    async fn run(
        mut self,
        mut commands: mpsc::Receiver<Command>,
        mut stop: watch::Receiver<Stop>,
        mut lines: mpsc::Receiver<LineMsg>,
    ) {
        let mut next_interrupt_id = 0u64;
        let mut interrupts_seen = 0u64;
        loop {
            let deadline = match self.escalation {
                Some(Escalation::AwaitResult(at) | Escalation::AwaitExit(at)) => Some(at),
                None => None,
            };
            // Claude's next line is read only when the sink has room: a
            // consumer that falls behind makes Claude wait, and no event is
            // dropped.
            let room = self.sink.room();
            tokio::select! {
                // Commands first, then a stop: an interrupt or disposal acts
                // after the commands sent before it. The escalation's
                // deadline and stdin's queue before Claude's output: a Claude
                // flooding stdout still gets its SIGTERM and its input.
                biased;
                command = commands.recv() => match command {
                    None => {
                        self.dispose().await;
                        return;
                    }
                    Some(command) => self.command(command),
                },
                changed = stop.changed() => {
                    let now = *stop.borrow_and_update();
                    if changed.is_err() || now.dispose {
                        self.dispose().await;
                        return;
                    }
                    if now.interrupts > interrupts_seen {
                        interrupts_seen = now.interrupts;
                        next_interrupt_id += 1;
                        self.interrupt(next_interrupt_id);
                    }
                }
                () = sleep_until(deadline), if deadline.is_some() => self.escalate(),
                permit = reserve(self.stdin.clone()), if !self.outbox.is_empty() => {
                    if let (Some(permit), Some(line)) = (permit, self.outbox.pop_front()) {
                        permit.send(line);
                        self.pump();
                    } else {
                        self.stdin = None;
                        self.outbox.clear();
                    }
                }
                line = async {
                    room.await;
                    lines.recv().await
                } => match line {
                    Some(LineMsg::Message(message)) => {
                        self.inbound(*message);
                        self.background
                            .store(self.subagents.background_running(), Ordering::Relaxed);
                    }
                    Some(LineMsg::UnknownFields(unknown)) => {
                        tracing::debug!(
                            "claude sent fields this Orbit does not know on {}/{}: {}",
                            unknown.message_type,
                            unknown.subtype.as_deref().unwrap_or("-"),
                            unknown.fields.join(", ")
                        );
                        let on = crate::met::message(&unknown.message_type, unknown.subtype.as_deref());
                        for field in &unknown.fields {
                            crate::met::note(self.cli_version.as_deref(), format!("{on}: {field}"));
                        }
                        self.emit(AgentEvent::UnknownFields {
                            message_type: unknown.message_type,
                            subtype: unknown.subtype,
                            fields: unknown.fields,
                        });
                    }
                    Some(LineMsg::Malformed(error)) => {
                        self.malformed += 1;
                        tracing::warn!("claude printed a malformed line ({}): {error}", self.malformed);
                        self.emit(AgentEvent::MalformedLine { count: self.malformed, error });
                    }
                    None => {
                        self.finish(&mut commands).await;
                        return;
                    }
                },
            }
        }
    }

    fn emit(&self, event: AgentEvent) {
        self.sink.event(event);
    }

    /// Queues a line for Claude's stdin. Never waits: the writer task
    /// takes what its queue holds, the rest waits in the outbox (bounded by
    /// what produces lines: commands from a bounded channel, answers to
    /// requests Claude waits on).
    fn write(&mut self, message: &Outbound) {
        if self.stdin.is_none() {
            return;
        }
        self.outbox.push_back(codec::encode_line(message));
        self.pump();
    }

    /// Moves outbox lines into the writer's queue while it has room.
    fn pump(&mut self) {
        let Some(tx) = &self.stdin else {
            self.outbox.clear();
            return;
        };
        while let Some(line) = self.outbox.pop_front() {
            match tx.try_send(line) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(line)) => {
                    self.outbox.push_front(line);
                    return;
                }
                Err(mpsc::error::TrySendError::Closed(_)) => {
                    // The process is going away; stdout's end reports it.
                    self.stdin = None;
                    self.outbox.clear();
                    return;
                }
            }
        }
    }

    /// Closes Claude's stdin once what is queued is written (the writer
    /// ends when its queue is empty and no sender is left).
    fn close_stdin(&mut self) {
        let Some(tx) = self.stdin.take() else {
            return;
        };
        let rest: Vec<Vec<u8>> = self.outbox.drain(..).collect();
        if !rest.is_empty() {
            tokio::spawn(async move {
                for line in rest {
                    if tx.send(line).await.is_err() {
                        return;
                    }
                }
            });
        }
    }

    fn command(&mut self, command: Command) {
        match command {
            Command::Prompt(text) => {
                if self.turn.is_some() {
                    self.emit(AgentEvent::Warning {
                        message: "a turn is already running; prompt not sent".to_owned(),
                    });
                    return;
                }
                self.turn = Some(Turn {
                    interrupting: false,
                });
                self.emit(AgentEvent::TurnStarted {
                    prompt: text.clone(),
                });
                self.write(&Outbound::User {
                    message: UserInput {
                        role: "user".to_owned(),
                        content: text,
                    },
                });
            }
            Command::Answer(request_id, answer) => self.answer(&request_id, answer),
            Command::Control(id, request, reply) => {
                self.pending_controls.insert(id.clone(), Some(reply));
                self.write(&Outbound::ControlRequest {
                    request_id: id,
                    request,
                });
            }
            Command::CancelControl(id) => {
                if self.pending_controls.remove(&id).is_some() {
                    self.write(&Outbound::ControlCancelRequest { request_id: id });
                }
            }
        }
    }

    fn answer(&mut self, request_id: &str, answer: Answer) {
        let Some(request) = self.pending_requests.get(request_id) else {
            self.emit(AgentEvent::Warning {
                message: format!("no pending request `{request_id}` to answer"),
            });
            return;
        };
        let result = match permission_result(request, answer) {
            Ok(result) => result,
            Err(message) => {
                self.emit(AgentEvent::Warning { message });
                return;
            }
        };
        self.pending_requests.remove(request_id);
        self.respond(request_id, &result);
    }

    fn respond(&mut self, request_id: &str, result: &PermissionResult) {
        let payload = serde_json::to_value(result).unwrap_or(Value::Null);
        self.write(&Outbound::ControlResponse {
            response: OutboundResponse::Success {
                request_id: request_id.to_owned(),
                response: payload,
            },
        });
    }

    fn interrupt(&mut self, n: u64) {
        let Some(turn) = self.turn.as_mut() else {
            return;
        };
        if turn.interrupting {
            return;
        }
        turn.interrupting = true;
        // Pending requests are denied first, so the CLI is not left asking.
        let pending: Vec<String> = self.pending_requests.keys().cloned().collect();
        for request_id in pending {
            self.pending_requests.remove(&request_id);
            self.respond(
                &request_id,
                &PermissionResult::Deny {
                    message: "The user stopped the turn.".to_owned(),
                },
            );
            self.emit(AgentEvent::RequestWithdrawn { request_id });
        }
        let id = format!("orbit_interrupt_{n}");
        self.pending_controls.insert(id.clone(), None);
        self.write(&Outbound::ControlRequest {
            request_id: id,
            request: OutboundRequest::Interrupt {},
        });
        self.escalation = Some(Escalation::AwaitResult(
            Instant::now() + self.timeouts.interrupt_grace,
        ));
    }

    fn escalate(&mut self) {
        match self.escalation.take() {
            Some(Escalation::AwaitResult(_)) => {
                tracing::warn!("claude gave no result after an interrupt; sending SIGTERM");
                self.child.terminate();
                self.escalation = Some(Escalation::AwaitExit(
                    Instant::now() + self.timeouts.term_grace,
                ));
            }
            Some(Escalation::AwaitExit(_)) => {
                tracing::warn!("claude did not exit after SIGTERM; sending SIGKILL");
                self.child.kill();
            }
            None => {}
        }
    }

    /// Stdout ended: wait for the process, report a turn it broke, then exit.
    async fn finish(&mut self, commands: &mut mpsc::Receiver<Command>) {
        self.close_stdin();
        let status = match tokio::time::timeout(self.timeouts.term_grace, self.child.wait()).await {
            Ok(Ok(status)) => Some(status),
            _ => self.child.kill_and_wait().await.ok(),
        };
        // A prompt sent as the process died never reached it: its turn
        // fails with the death's reason below, rather than vanishing.
        while let Ok(command) = commands.try_recv() {
            if let Command::Prompt(prompt) = command
                && self.turn.is_none()
            {
                self.turn = Some(Turn {
                    interrupting: false,
                });
                self.emit(AgentEvent::TurnStarted { prompt });
            }
        }
        let (code, signal) = split_status(status);
        self.child.stderr_read(STDERR_READ).await;
        let last_stderr = self.child.last_stderr();
        let during_turn = self.turn.is_some();
        self.fail_controls();
        self.end_compaction();
        if let Some(turn) = self.turn.take() {
            let outcome = if turn.interrupting {
                TurnOutcome::Interrupted
            } else {
                tracing::warn!(
                    "claude exited during a turn ({}): {}",
                    describe(code, signal),
                    last_stderr.as_deref().unwrap_or("nothing on its stderr")
                );
                TurnOutcome::Failed
            };
            self.subagents.turn_ended(&*self.sink);
            let error = last_stderr.clone().unwrap_or_else(|| {
                format!("the claude process exited ({})", describe(code, signal))
            });
            self.emit(AgentEvent::TurnEnded(TurnEnd {
                error: Some(error),
                ..TurnEnd::without_result(outcome, self.session_id.clone())
            }));
        } else if code != Some(0) {
            let message = format!(
                "claude exited while idle ({}){}{}",
                describe(code, signal),
                if last_stderr.is_some() { ": " } else { "" },
                last_stderr.as_deref().unwrap_or("")
            );
            tracing::warn!("{message}");
            self.emit(AgentEvent::Warning { message });
        }
        self.subagents.end_everything("stopped", &*self.sink);
        self.sink.exit(ProcessExit {
            code,
            signal,
            during_turn,
            last_stderr,
            disposed: false,
        });
    }

    /// Orbit ends the process (disposal, restart, drop). An idle process is
    /// let go gracefully (stdin closed: the CLI saves its session and exits),
    /// then SIGTERM, then SIGKILL; a busy one gets SIGTERM at once.
    async fn dispose(&mut self) {
        self.close_stdin();
        let grace = self.timeouts.term_grace;
        if self.turn.is_some() {
            self.child.terminate();
        }
        let mut status = tokio::time::timeout(grace, self.child.wait())
            .await
            .ok()
            .and_then(Result::ok);
        if status.is_none() {
            self.child.terminate();
            status = tokio::time::timeout(grace, self.child.wait())
                .await
                .ok()
                .and_then(Result::ok);
        }
        if status.is_none() {
            status = self.child.kill_and_wait().await.ok();
        }
        let (code, signal) = split_status(status);
        let during_turn = self.turn.is_some();
        self.fail_controls();
        self.end_compaction();
        if self.turn.take().is_some() {
            self.subagents.turn_ended(&*self.sink);
            self.emit(AgentEvent::TurnEnded(TurnEnd::without_result(
                TurnOutcome::Interrupted,
                self.session_id.clone(),
            )));
        }
        self.subagents.end_everything("stopped", &*self.sink);
        self.sink.exit(ProcessExit {
            code,
            signal,
            during_turn,
            last_stderr: self.child.last_stderr(),
            disposed: true,
        });
    }

    fn fail_controls(&mut self) {
        for (_, reply) in self.pending_controls.drain() {
            if let Some(reply) = reply {
                let _ = reply.send(Err(AgentError::Exited));
            }
        }
        self.pending_requests.clear();
    }
}

/// Room in the writer's queue (`None` when it is closed or gone).
async fn reserve(tx: Option<mpsc::Sender<Vec<u8>>>) -> Option<mpsc::OwnedPermit<Vec<u8>>> {
    tx?.reserve_owned().await.ok()
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
