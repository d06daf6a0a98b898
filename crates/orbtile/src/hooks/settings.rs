//! Orbit's entries in Claude Code's settings (`settings.json`,
//! `settings.local.json`), added and removed with text edits: the user's
//! other hooks, keys, comments, indentation and line ends stay as written.
//! An install followed by an uninstall gives back the file byte for byte
//! (the containers an install had to create are named in the install's
//! [`Created`] record, so the uninstall removes exactly those).

use std::ops::Range;

/// The hook events Orbit installs, in the order they are written.
pub const EVENTS: [&str; 14] = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "MessageDisplay",
    "PreCompact",
    "PostCompact",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "SessionEnd",
];

/// The events whose groups carry a tool matcher.
const TOOL_EVENTS: [&str; 4] = [
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
];

/// Why a settings file cannot be edited.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EditError {
    /// Not JSON (with the byte offset).
    #[error("not valid JSON at byte {at}: {what}")]
    Syntax {
        /// Byte offset.
        at: usize,
        /// What was expected.
        what: &'static str,
    },
    /// A value of the wrong type where Orbit writes.
    #[error("`{0}` is not a JSON object or array as Claude Code expects")]
    Shape(String),
}

/// One hook command Orbit installs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The event (one of [`EVENTS`]).
    pub event: String,
    /// The command line (`/abs/orbit hook EVENT`).
    pub command: String,
    /// The hook's timeout in seconds.
    pub timeout: u64,
}

/// What an install had to create (the uninstall removes exactly these when
/// they are empty again).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Created {
    /// The whole file (it did not exist or was blank).
    pub file: bool,
    /// The `hooks` key.
    pub hooks: bool,
    /// The events' keys under `hooks`.
    pub events: Vec<String>,
    /// The file existed (blank) before the install: an uninstall empties
    /// it rather than removing it (set by the caller).
    #[serde(default)]
    pub existed: bool,
}

/// A hook command found in a settings file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The event it runs on.
    pub event: String,
    /// Its command line.
    pub command: String,
}

/// Whether `command` is one of Orbit's: its program's file name is `orbit`
/// (any folder, quoted or not) and its first argument `hook`.
pub fn is_orbit_command(command: &str) -> bool {
    let words = split_words(command);
    let mut words = words.iter();
    let program = words.next().map(String::as_str).unwrap_or_default();
    let name = program.rsplit('/').next().unwrap_or_default();
    name == "orbit" && words.next().is_some_and(|w| w == "hook")
}

/// The command line that runs `program` as `orbit hook EVENT`, quoted for
/// the shell Claude Code runs it with.
pub fn command_line(program: &str, event: &str) -> String {
    let plain = program
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-+,:@".contains(&b));
    if plain {
        format!("{program} hook {event}")
    } else {
        format!("'{}' hook {event}", program.replace('\'', r"'\''"))
    }
}

/// Shell-like words: single and double quotes and backslashes.
fn split_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        _ => word.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

// ---------------------------------------------------------------------------
// A JSON reader that keeps every value's byte span (comments are skipped as
// blanks, so a JSONC file is edited too).

#[derive(Debug)]
enum Node {
    Object {
        span: Range<usize>,
        members: Vec<Member>,
    },
    Array {
        span: Range<usize>,
        items: Vec<Node>,
    },
    Scalar {
        span: Range<usize>,
        string: Option<String>,
    },
}

#[derive(Debug)]
struct Member {
    key: String,
    key_start: usize,
    value: Node,
}

impl Node {
    fn span(&self) -> Range<usize> {
        match self {
            Self::Object { span, .. } | Self::Array { span, .. } | Self::Scalar { span, .. } => {
                span.clone()
            }
        }
    }

    fn member(&self, key: &str) -> Option<&Member> {
        match self {
            Self::Object { members, .. } => members.iter().rev().find(|m| m.key == key),
            _ => None,
        }
    }
}

struct Reader<'a> {
    text: &'a [u8],
    at: usize,
    depth: usize,
}

const MAX_DEPTH: usize = 128;

impl Reader<'_> {
    fn err(&self, what: &'static str) -> EditError {
        EditError::Syntax { at: self.at, what }
    }

    fn blanks(&mut self) -> Result<(), EditError> {
        loop {
            match self.text.get(self.at) {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.at += 1,
                Some(b'/') if self.text.get(self.at + 1) == Some(&b'/') => {
                    while self.text.get(self.at).is_some_and(|b| *b != b'\n') {
                        self.at += 1;
                    }
                }
                Some(b'/') if self.text.get(self.at + 1) == Some(&b'*') => {
                    self.at += 2;
                    loop {
                        match self.text.get(self.at) {
                            None => return Err(self.err("an end of comment")),
                            Some(b'*') if self.text.get(self.at + 1) == Some(&b'/') => {
                                self.at += 2;
                                break;
                            }
                            Some(_) => self.at += 1,
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self) -> Result<Node, EditError> {
        self.blanks()?;
        let start = self.at;
        match self.text.get(self.at) {
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => {
                let string = self.string()?;
                Ok(Node::Scalar {
                    span: start..self.at,
                    string: Some(string),
                })
            }
            Some(b) if b.is_ascii_alphanumeric() || *b == b'-' => {
                while self
                    .text
                    .get(self.at)
                    .is_some_and(|b| b.is_ascii_alphanumeric() || b"+-.".contains(b))
                {
                    self.at += 1;
                }
                Ok(Node::Scalar {
                    span: start..self.at,
                    string: None,
                })
            }
            _ => Err(self.err("a value")),
        }
    }

    fn string(&mut self) -> Result<String, EditError> {
        let start = self.at;
        self.at += 1;
        loop {
            match self.text.get(self.at) {
                None => return Err(self.err("an end of string")),
                Some(b'"') => {
                    self.at += 1;
                    break;
                }
                Some(b'\\') => self.at += 2,
                Some(_) => self.at += 1,
            }
        }
        let raw = self.text.get(start..self.at).unwrap_or_default();
        let raw = std::str::from_utf8(raw).map_err(|_| self.err("UTF-8"))?;
        serde_json::from_str(raw).map_err(|_| EditError::Syntax {
            at: start,
            what: "a valid string",
        })
    }

    fn enter(&mut self) -> Result<(), EditError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err("less nesting"));
        }
        self.at += 1;
        Ok(())
    }

    fn object(&mut self) -> Result<Node, EditError> {
        let start = self.at;
        self.enter()?;
        let mut members = Vec::new();
        loop {
            self.blanks()?;
            match self.text.get(self.at) {
                Some(b'}') => break,
                Some(b'"') => {}
                _ => return Err(self.err("a key or `}`")),
            }
            let key_start = self.at;
            let key = self.string()?;
            self.blanks()?;
            if self.text.get(self.at) != Some(&b':') {
                return Err(self.err("`:`"));
            }
            self.at += 1;
            let value = self.value()?;
            members.push(Member {
                key,
                key_start,
                value,
            });
            self.blanks()?;
            match self.text.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b'}') => break,
                _ => return Err(self.err("`,` or `}`")),
            }
        }
        self.at += 1;
        self.depth -= 1;
        Ok(Node::Object {
            span: start..self.at,
            members,
        })
    }

    fn array(&mut self) -> Result<Node, EditError> {
        let start = self.at;
        self.enter()?;
        let mut items = Vec::new();
        loop {
            self.blanks()?;
            if self.text.get(self.at) == Some(&b']') {
                break;
            }
            items.push(self.value()?);
            self.blanks()?;
            match self.text.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b']') => break,
                _ => return Err(self.err("`,` or `]`")),
            }
        }
        self.at += 1;
        self.depth -= 1;
        Ok(Node::Array {
            span: start..self.at,
            items,
        })
    }
}

fn parse(text: &str) -> Result<Node, EditError> {
    let mut reader = Reader {
        text: text.as_bytes(),
        at: 0,
        depth: 0,
    };
    let root = reader.value()?;
    reader.blanks()?;
    if reader.at != text.len() {
        return Err(reader.err("the end of the file"));
    }
    Ok(root)
}

// ---------------------------------------------------------------------------
// Layout: the file's indentation unit and line end.

struct Layout {
    unit: String,
    newline: &'static str,
}

fn layout(text: &str, root: &Node) -> Layout {
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let unit = match root {
        Node::Object { members, .. } => members
            .first()
            .map(|m| indent_at(text, m.key_start))
            .filter(|i| !i.is_empty()),
        _ => None,
    };
    Layout {
        unit: unit.unwrap_or_else(|| "  ".to_owned()),
        newline,
    }
}

/// The blanks that start the line of byte `at` (empty when something else
/// comes before `at` on its line).
fn indent_at(text: &str, at: usize) -> String {
    let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
    let before = &text[line_start..at];
    if before.chars().all(|c| c == ' ' || c == '\t') {
        before.to_owned()
    } else {
        String::new()
    }
}

/// `value` as pretty JSON, every line after the first indented by `base`.
fn pretty(value: &serde_json::Value, base: &str, layout: &Layout) -> String {
    use serde::Serialize as _;
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(layout.unit.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    let _ = value.serialize(&mut ser);
    let text = String::from_utf8_lossy(&out).into_owned();
    text.split('\n')
        .enumerate()
        .map(|(i, line)| {
            if i == 0 {
                line.to_owned()
            } else {
                format!("{base}{line}")
            }
        })
        .collect::<Vec<_>>()
        .join(layout.newline)
}

fn group(entry: &Entry) -> serde_json::Value {
    let hook = serde_json::json!({
        "type": "command",
        "command": entry.command,
        "timeout": entry.timeout,
    });
    if TOOL_EVENTS.contains(&entry.event.as_str()) {
        serde_json::json!({"matcher": "*", "hooks": [hook]})
    } else {
        serde_json::json!({"hooks": [hook]})
    }
}

/// An edit: replace `range` with `with`.
struct Splice {
    range: Range<usize>,
    with: String,
}

fn apply(text: &str, mut splices: Vec<Splice>) -> String {
    splices.sort_by_key(|s| std::cmp::Reverse(s.range.start));
    let mut out = text.to_owned();
    for s in splices {
        out.replace_range(s.range, &s.with);
    }
    out
}

/// The blanks that start the line of byte `at`.
fn line_indent(text: &str, at: usize) -> String {
    let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
    text[line_start..at]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

/// The text that adds `element` as the last of the container `span` whose
/// elements end at `last_end` (`None`: it is empty). `element` is already
/// laid out for the element's indentation.
fn append(text: &str, span: &Range<usize>, last: Option<Range<usize>>, element: &str, layout: &Layout) -> Splice {
    match last {
        Some(last) => {
            // The gap before the last element, repeated before the new one.
            let indent = indent_at(text, last.start);
            let gap = if indent.is_empty() {
                " ".to_owned()
            } else {
                format!("{}{indent}", layout.newline)
            };
            Splice {
                range: last.end..last.end,
                with: format!(",{gap}{element}"),
            }
        }
        None => {
            let parent = line_indent(text, span.start);
            Splice {
                range: span.start + 1..span.start + 1,
                with: format!(
                    "{nl}{parent}{unit}{element}{nl}{parent}",
                    nl = layout.newline,
                    unit = layout.unit
                ),
            }
        }
    }
}

/// The text that removes the element `index` of a container (`elements`
/// are the spans of all its elements, a member's from its key on).
fn remove(text: &str, span: &Range<usize>, elements: &[Range<usize>], index: usize, layout: &Layout) -> Splice {
    let this = elements[index].clone();
    if index > 0 {
        // From the end of the one before: the comma and the gap go too.
        return Splice {
            range: elements[index - 1].end..this.end,
            with: String::new(),
        };
    }
    if let Some(next) = elements.get(1) {
        return Splice {
            range: this.start..next.start,
            with: String::new(),
        };
    }
    // The only element: what `append` added to an empty container goes.
    let parent = line_indent(text, span.start);
    let tail = format!("{}{parent}", layout.newline);
    let mut end = this.end;
    if text[end..].starts_with(&tail) {
        end += tail.len();
    }
    Splice {
        range: span.start + 1..end,
        with: String::new(),
    }
}

/// The splices that remove the elements `indices` (ascending) of a
/// container: all of them at once when none stays.
fn remove_many(
    text: &str,
    span: &Range<usize>,
    elements: &[Range<usize>],
    indices: &[usize],
    layout: &Layout,
) -> Vec<Splice> {
    if indices.is_empty() {
        return Vec::new();
    }
    if indices.len() == elements.len() {
        let last = elements.len() - 1;
        let mut whole = remove(text, span, &elements[last..], 0, layout);
        whole.range.start = span.start + 1;
        return vec![whole];
    }
    let mut kept = elements.to_vec();
    let mut splices = Vec::new();
    for &i in indices.iter().rev() {
        let position = kept.iter().position(|s| *s == elements[i]).unwrap_or(0);
        splices.push(remove(text, span, &kept, position, layout));
        kept.remove(position);
    }
    splices
}

fn member_span(member: &Member) -> Range<usize> {
    member.key_start..member.value.span().end
}

/// Orbit's hook commands in `text`, by event.
///
/// # Errors
/// The text is not JSON, or `hooks` is not shaped as Claude Code expects.
pub fn find(text: &str) -> Result<Vec<Found>, EditError> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let root = parse(text)?;
    let mut found = Vec::new();
    let Some(hooks) = root.member("hooks") else {
        return Ok(found);
    };
    let Node::Object { members, .. } = &hooks.value else {
        return Err(EditError::Shape("hooks".to_owned()));
    };
    for event in members {
        let Node::Array { items, .. } = &event.value else {
            continue;
        };
        for group in items {
            for command in group_commands(group) {
                if is_orbit_command(&command.1) {
                    found.push(Found {
                        event: event.key.clone(),
                        command: command.1,
                    });
                }
            }
        }
    }
    Ok(found)
}

/// The command hooks of a matcher group: (span, command).
fn group_commands(group: &Node) -> Vec<(Range<usize>, String)> {
    let Some(hooks) = group.member("hooks") else {
        return Vec::new();
    };
    let Node::Array { items, .. } = &hooks.value else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|hook| {
            let command = hook.member("command")?;
            let Node::Scalar {
                string: Some(command),
                ..
            } = &command.value
            else {
                return None;
            };
            Some((hook.span(), command.clone()))
        })
        .collect()
}

/// Whether a matcher group is Orbit's: every command hook in it is.
fn is_orbit_group(group: &Node) -> bool {
    let commands = group_commands(group);
    !commands.is_empty() && commands.iter().all(|(_, c)| is_orbit_command(c))
}

/// `text` with Orbit's entries removed (with `previous`, the last
/// install's record, as [`uninstall`] does), then `entries` added; and what
/// the install had to create. Running it twice changes nothing the second
/// time.
///
/// # Errors
/// The text is not JSON, or a key Orbit writes under has another type.
pub fn install(
    text: &str,
    entries: &[Entry],
    previous: Option<&Created>,
) -> Result<(String, Created), EditError> {
    let (text, _) = uninstall(text, previous)?;
    if text.trim().is_empty() {
        let layout = Layout {
            unit: "  ".to_owned(),
            newline: "\n",
        };
        let mut hooks = serde_json::Map::new();
        for entry in entries {
            hooks.insert(entry.event.clone(), serde_json::json!([group(entry)]));
        }
        let body = pretty(&serde_json::json!({"hooks": hooks}), "", &layout);
        let created = Created {
            file: true,
            hooks: true,
            events: entries.iter().map(|e| e.event.clone()).collect(),
            existed: false,
        };
        return Ok((format!("{body}\n"), created));
    }
    let root = parse(&text)?;
    let Node::Object { span, members } = &root else {
        return Err(EditError::Shape("the top level".to_owned()));
    };
    let layout = layout(&text, &root);
    let mut created = Created::default();
    let hooks = root.member("hooks");
    let Some(hooks) = hooks else {
        // A new `hooks` key with every event.
        let mut all = serde_json::Map::new();
        for entry in entries {
            all.insert(entry.event.clone(), serde_json::json!([group(entry)]));
        }
        let base = member_indent(&text, span, members.last().map(|m| m.key_start), &layout);
        let element = format!(
            "\"hooks\": {}",
            pretty(&serde_json::Value::Object(all), &base, &layout)
        );
        let splice = append(&text, span, members.last().map(member_span), &element, &layout);
        created.hooks = true;
        created.events = entries.iter().map(|e| e.event.clone()).collect();
        return Ok((apply(&text, vec![splice]), created));
    };
    let Node::Object {
        span: hooks_span,
        members: events,
    } = &hooks.value
    else {
        return Err(EditError::Shape("hooks".to_owned()));
    };
    let mut splices = Vec::new();
    let event_base = member_indent(&text, hooks_span, events.last().map(|m| m.key_start), &layout);
    let mut new_events = Vec::new();
    for entry in entries {
        match hooks.value.member(&entry.event) {
            Some(existing) => {
                let Node::Array { span, items } = &existing.value else {
                    return Err(EditError::Shape(format!("hooks.{}", entry.event)));
                };
                let base = member_indent(&text, span, items.last().map(|i| i.span().start), &layout);
                let element = pretty(&group(entry), &base, &layout);
                splices.push(append(
                    &text,
                    span,
                    items.last().map(Node::span),
                    &element,
                    &layout,
                ));
            }
            None => new_events.push(entry),
        }
    }
    if !new_events.is_empty() {
        // One splice adds every new event after the last one there.
        let mut added = Vec::new();
        for entry in &new_events {
            let base = format!("{event_base}{}", layout.unit);
            let array = format!(
                "[{nl}{base}{group}{nl}{event_base}]",
                nl = layout.newline,
                group = pretty(&group(entry), &base, &layout)
            );
            added.push(format!("{}: {array}", serde_json::Value::from(entry.event.clone())));
            created.events.push(entry.event.clone());
        }
        let last = events.last().map(member_span);
        let joined = if last.is_some() || !added.is_empty() {
            let sep = match &last {
                Some(last) if indent_at(&text, last.start).is_empty() => ", ".to_owned(),
                _ => format!(",{}{event_base}", layout.newline),
            };
            added.join(&sep)
        } else {
            String::new()
        };
        splices.push(append(&text, hooks_span, last, &joined, &layout));
    }
    Ok((apply(&text, splices), created))
}

/// The indentation of a container's elements: that of its last element,
/// else one unit more than the line of its opening bracket.
fn member_indent(text: &str, span: &Range<usize>, last_start: Option<usize>, layout: &Layout) -> String {
    match last_start {
        Some(start) => indent_at(text, start),
        None => format!("{}{}", line_indent(text, span.start), layout.unit),
    }
}

/// `text` without Orbit's hook entries (matcher groups whose every command
/// is Orbit's; an Orbit command inside a group of the user's own is taken
/// out of it). With `created` (the install's record), the containers the
/// install made go when they are empty again; without it, they stay.
/// Returns the text and how many commands went.
///
/// # Errors
/// The text is not JSON.
pub fn uninstall(text: &str, created: Option<&Created>) -> Result<(String, usize), EditError> {
    if text.trim().is_empty() {
        return Ok((text.to_owned(), 0));
    }
    let root = parse(text)?;
    let layout = layout(text, &root);
    let Node::Object {
        span: root_span,
        members: root_members,
    } = &root
    else {
        return Ok((text.to_owned(), 0));
    };
    let Some(hooks_index) = root_members.iter().rposition(|m| m.key == "hooks") else {
        return Ok((text.to_owned(), 0));
    };
    let hooks = &root_members[hooks_index];
    let Node::Object {
        span: hooks_span,
        members: events,
    } = &hooks.value
    else {
        return Ok((text.to_owned(), 0));
    };
    let mut removed = 0;
    let mut splices = Vec::new();
    let event_spans: Vec<Range<usize>> = events.iter().map(member_span).collect();
    let mut events_left = events.len();
    let mut drop_events = Vec::new();
    for (event_index, event) in events.iter().enumerate() {
        let Node::Array { span, items } = &event.value else {
            continue;
        };
        let item_spans: Vec<Range<usize>> = items.iter().map(Node::span).collect();
        let ours: Vec<usize> = (0..items.len()).filter(|i| is_orbit_group(&items[*i])).collect();
        // Orbit's commands inside the user's own groups.
        for (i, item) in items.iter().enumerate() {
            if ours.contains(&i) {
                continue;
            }
            let Some(hooks) = item.member("hooks") else {
                continue;
            };
            let Node::Array {
                span: inner_span,
                items: inner,
            } = &hooks.value
            else {
                continue;
            };
            let inner_spans: Vec<Range<usize>> = inner.iter().map(Node::span).collect();
            let commands = group_commands(item);
            let mut gone = 0;
            for (j, hook) in inner.iter().enumerate().rev() {
                let is_ours = commands
                    .iter()
                    .any(|(s, c)| *s == hook.span() && is_orbit_command(c));
                if is_ours && inner.len() - gone > 1 {
                    splices.push(remove(text, inner_span, &inner_spans, j, &layout));
                    gone += 1;
                    removed += 1;
                }
            }
        }
        if ours.is_empty() {
            continue;
        }
        removed += ours.len();
        let empty_after = ours.len() == items.len();
        let made_by_us = created.is_some_and(|c| c.events.contains(&event.key));
        if empty_after && made_by_us {
            drop_events.push(event_index);
            events_left -= 1;
            continue;
        }
        splices.extend(remove_many(text, span, &item_spans, &ours, &layout));
    }
    let hooks_made = created.is_some_and(|c| c.hooks);
    if events_left == 0 && hooks_made && !drop_events.is_empty() {
        let spans: Vec<Range<usize>> = root_members.iter().map(member_span).collect();
        splices = vec![remove(text, root_span, &spans, hooks_index, &layout)];
    } else {
        splices.extend(remove_many(
            text,
            hooks_span,
            &event_spans,
            &drop_events,
            &layout,
        ));
    }
    let mut out = apply_nested(text, splices);
    if created.is_some_and(|c| c.file) && parse(&out).is_ok_and(|r| matches!(&r, Node::Object { members, .. } if members.is_empty())) {
        out = String::new();
    }
    Ok((out, removed))
}

/// Applies splices that never overlap except by nesting (an outer removal
/// wins over the inner ones it contains).
fn apply_nested(text: &str, splices: Vec<Splice>) -> String {
    let mut kept: Vec<Splice> = Vec::new();
    for s in splices {
        let inside = |o: &Splice| o.range.start <= s.range.start && s.range.end <= o.range.end;
        if kept.iter().any(inside) {
            continue;
        }
        kept.retain(|o| !(s.range.start <= o.range.start && o.range.end <= s.range.end));
        kept.push(s);
    }
    apply(text, kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries() -> Vec<Entry> {
        EVENTS
            .iter()
            .map(|e| Entry {
                event: (*e).to_owned(),
                command: command_line("/opt/my tools/orbit", e),
                timeout: 10,
            })
            .collect()
    }

    fn round_trip(original: &str) {
        let (installed, created) = install(original, &entries(), None).unwrap();
        assert_ne!(installed, original);
        let value: serde_json::Value = json5_like(&installed);
        assert_eq!(
            value["hooks"]["PreToolUse"]
                .as_array()
                .unwrap()
                .last()
                .unwrap()["hooks"][0]["command"],
            "'/opt/my tools/orbit' hook PreToolUse"
        );
        assert_eq!(find(&installed).unwrap().len(), EVENTS.len());
        let (again, again_created) = install(&installed, &entries(), Some(&created)).unwrap();
        assert_eq!(again_created, created);
        assert_eq!(again, installed, "a second install changes nothing");
        let (back, removed) = uninstall(&installed, Some(&created)).unwrap();
        assert_eq!(removed, EVENTS.len());
        assert_eq!(back, original, "install then uninstall is byte for byte");
    }

    fn json5_like(text: &str) -> serde_json::Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn install_then_uninstall_gives_the_file_back() {
        round_trip("");
        round_trip("{}\n");
        round_trip("{\n  \"model\": \"opus\"\n}\n");
        round_trip("{\r\n\t\"model\": \"opus\",\r\n\t\"env\": {\"A\": \"1\"}\r\n}\r\n");
        round_trip(
            "{\n    \"hooks\": {\n        \"PreToolUse\": [\n            {\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"my-guard\"}]}\n        ],\n        \"Stop\": []\n    },\n    \"theme\": \"dark\"\n}",
        );
        round_trip("{\"hooks\":{},\"x\":1}");
        round_trip("{\"a\": [1, 2], \"hooks\": {\"Notification\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify-send hi\"}]}]}}");
    }

    #[test]
    fn the_user_s_hooks_stay_and_only_orbit_s_go() {
        let original = "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}, {\"type\": \"command\", \"command\": \"/usr/bin/orbit hook Stop\"}]}]}}";
        let (out, removed) = uninstall(original, None).unwrap();
        assert_eq!(removed, 1);
        assert_eq!(
            out,
            "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}]}}"
        );
    }

    #[test]
    fn orbit_commands_are_recognised() {
        assert!(is_orbit_command("/usr/local/bin/orbit hook Stop"));
        assert!(is_orbit_command("'/opt/my tools/orbit' hook Stop"));
        assert!(!is_orbit_command("/usr/bin/orbital hook Stop"));
        assert!(!is_orbit_command("orbit open"));
        assert_eq!(split_words(&command_line("/a b/it's/orbit", "Stop"))[0], "/a b/it's/orbit");
    }

    #[test]
    fn bad_files_are_refused_with_a_place() {
        assert!(matches!(install("{\"a\": ", &entries(), None), Err(EditError::Syntax { .. })));
        assert_eq!(
            install("{\"hooks\": []}", &entries(), None).unwrap_err(),
            EditError::Shape("hooks".to_owned())
        );
        assert!(install("[1]", &entries(), None).is_err());
    }
}
