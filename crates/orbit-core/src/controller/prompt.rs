//! A prompt's skills and files: which are kept, which are dropped and why,
//! and the one notice that says so.

use std::collections::BTreeSet;

use orbit_agent::{MAX_PROMPT_FILES, MAX_PROMPT_SKILLS, encode_prompt};

use super::refused::shown;
use super::{Files, Origin};

/// A skill or a file a prompt named and the controller left out (the
/// prompt itself still goes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    /// A skill or a file.
    pub item: DroppedItem,
    /// The name or path as sent.
    pub name: String,
    /// Why.
    pub reason: DropReason,
}

/// What a [`Dropped`] was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DroppedItem {
    /// A skill name.
    Skill,
    /// A file path.
    File,
}

/// Why a [`Dropped`] was left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DropReason {
    /// A skill the catalog does not list.
    NotInCatalog,
    /// A file the workspace graph does not hold (the page may name graph
    /// files only).
    OutsideGraph,
    /// A host file that is neither a graph file nor an existing absolute
    /// path.
    NotFound,
    /// Past the limit (eight skills, twenty files); the first ones are kept.
    OverLimit,
    /// A name or path that cannot be written in Claude Code's syntax (a
    /// space in a skill name, a `"` or line break in a path).
    Unusable,
}

/// The prompt's skills and files after the rules, and what was dropped.
#[derive(Debug)]
pub(super) struct Chosen {
    pub(super) text: String,
    pub(super) skills: Vec<String>,
    pub(super) files: Vec<String>,
    pub(super) dropped: Vec<Dropped>,
}

pub(super) fn choose(
    text: &str,
    skills: &[String],
    files: &[String],
    catalog_skills: &BTreeSet<&str>,
    graph: &dyn Files,
    origin: Origin,
) -> Chosen {
    let mut dropped = Vec::new();
    let mut drop = |item, name: &str, reason| {
        dropped.push(Dropped {
            item,
            name: name.to_owned(),
            reason,
        });
    };

    let mut kept_skills: Vec<String> = Vec::new();
    for skill in skills {
        let name = skill.trim().trim_start_matches('/');
        if !catalog_skills.contains(name) {
            drop(DroppedItem::Skill, skill, DropReason::NotInCatalog);
        } else if !skill_usable(name) {
            drop(DroppedItem::Skill, skill, DropReason::Unusable);
        } else if kept_skills.iter().any(|k| k == name) {
            // The same skill twice is the same skill: nothing is lost.
        } else if kept_skills.len() == MAX_PROMPT_SKILLS {
            drop(DroppedItem::Skill, skill, DropReason::OverLimit);
        } else {
            kept_skills.push(name.to_owned());
        }
    }

    let mut kept_files: Vec<String> = Vec::new();
    for file in files {
        let resolved = graph.graph_file(file).or_else(|| match origin {
            Origin::Host if std::path::Path::new(file).is_absolute() => graph.host_file(file),
            // From the editor's own dialog only (the extension's code told Orbit).
            Origin::Page if std::path::Path::new(file).is_absolute() => graph.picked_file(file),
            Origin::Page | Origin::Host => None,
        });
        match resolved {
            None => {
                let reason = match origin {
                    Origin::Page => DropReason::OutsideGraph,
                    Origin::Host => DropReason::NotFound,
                };
                drop(DroppedItem::File, file, reason);
            }
            Some(path) if !file_usable(&path) => {
                drop(DroppedItem::File, file, DropReason::Unusable);
            }
            Some(path) if kept_files.contains(&path) => {}
            Some(_) if kept_files.len() == MAX_PROMPT_FILES => {
                drop(DroppedItem::File, file, DropReason::OverLimit);
            }
            Some(path) => kept_files.push(path),
        }
    }

    let encoded = encode_prompt(text, &kept_skills, &kept_files);
    for skill in &encoded.dropped_skills {
        drop(DroppedItem::Skill, skill, DropReason::Unusable);
    }
    for file in &encoded.dropped_files {
        drop(DroppedItem::File, file, DropReason::Unusable);
    }
    kept_skills.retain(|s| !encoded.dropped_skills.contains(s));
    kept_files.retain(|f| !encoded.dropped_files.contains(f));
    Chosen {
        text: encoded.text,
        skills: kept_skills,
        files: kept_files,
        dropped,
    }
}

/// As `encode_prompt` takes a skill: a name without whitespace, control
/// characters or slashes.
fn skill_usable(name: &str) -> bool {
    !name.is_empty()
        && !name
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '/')
}

/// As `encode_prompt` takes a file: a path a mention can carry.
fn file_usable(path: &str) -> bool {
    !path.is_empty() && !path.contains(['"', '\n', '\r', '\0'])
}

/// At most this many names are listed per group of a notice.
const NAMES_SHOWN: usize = 5;

/// The one notice saying what a prompt dropped, e.g. "Dropped 1 skill not in
/// the catalog (foo) and 2 files outside the workspace graph (a, b)";
/// `None` when nothing was dropped. Groups come in a fixed order (skills
/// first), each naming at most five items (then "+N more"); names are
/// shortened and stripped of control characters.
#[must_use]
pub fn dropped_notice(dropped: &[Dropped]) -> Option<String> {
    let mut groups: Vec<((DroppedItem, DropReason), Vec<&str>)> = Vec::new();
    let mut keys: Vec<(DroppedItem, DropReason)> =
        dropped.iter().map(|d| (d.item, d.reason)).collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        let names = dropped
            .iter()
            .filter(|d| (d.item, d.reason) == key)
            .map(|d| d.name.as_str())
            .collect();
        groups.push((key, names));
    }
    if groups.is_empty() {
        return None;
    }
    let parts: Vec<String> = groups
        .iter()
        .map(|((item, reason), names)| {
            let count = names.len();
            let noun = match (item, count) {
                (DroppedItem::Skill, 1) => "skill",
                (DroppedItem::Skill, _) => "skills",
                (DroppedItem::File, 1) => "file",
                (DroppedItem::File, _) => "files",
            };
            let why = match (item, reason) {
                (_, DropReason::NotInCatalog) => "not in the catalog".to_owned(),
                (_, DropReason::OutsideGraph) => "outside the workspace graph".to_owned(),
                (_, DropReason::NotFound) => {
                    "neither in the workspace graph nor an existing absolute path".to_owned()
                }
                (DroppedItem::Skill, DropReason::OverLimit) => {
                    format!("over the limit of {MAX_PROMPT_SKILLS}")
                }
                (DroppedItem::File, DropReason::OverLimit) => {
                    format!("over the limit of {MAX_PROMPT_FILES}")
                }
                (DroppedItem::Skill, DropReason::Unusable) => {
                    "whose name can't be sent as a slash command".to_owned()
                }
                (DroppedItem::File, DropReason::Unusable) => {
                    "whose path can't be sent as an @ mention".to_owned()
                }
            };
            let mut listed: Vec<String> = names
                .iter()
                .take(NAMES_SHOWN)
                .map(|n| {
                    if n.is_empty() {
                        "\"\"".to_owned()
                    } else {
                        shown(n)
                    }
                })
                .collect();
            if count > NAMES_SHOWN {
                listed.push(format!("+{} more", count - NAMES_SHOWN));
            }
            format!("{count} {noun} {why} ({})", listed.join(", "))
        })
        .collect();
    let text = match parts.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => return None,
    };
    Some(format!("Dropped {text}"))
}
