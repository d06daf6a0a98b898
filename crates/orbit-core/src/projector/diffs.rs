//! The diff of a file-editing tool call, from the call's own input:
//! `Edit`'s old and new strings, each of `MultiEdit`'s edits, `Write`'s
//! content (all added: the input does not say what the file held), and
//! `NotebookEdit`'s new cell source. Diffed line by line with `similar`
//! (three lines of context), and bounded: at most [`MAX_INPUT_LINES`] lines
//! of each side are diffed and [`MAX_DIFF_LINES`] diff lines kept, each cut
//! at [`MAX_LINE_CHARS`] characters; what is left out is counted in
//! `omittedLines` for the page to say so.

use orbit_types::{DiffHunk, DiffLine, DiffOp, FileDiff};
use serde_json::Value;
use similar::{ChangeTag, TextDiff};

/// Lines of each side that are diffed at most.
pub(crate) const MAX_INPUT_LINES: usize = 5_000;
/// Diff lines kept per call.
pub(crate) const MAX_DIFF_LINES: usize = 300;
/// Characters kept per line.
pub(crate) const MAX_LINE_CHARS: usize = 400;

/// The diff a call's input describes; `None` for a tool that edits no file
/// or an input without the strings.
pub(crate) fn tool_diff(name: &str, input: &Value) -> Option<FileDiff> {
    let text = |key: &str| input.get(key).and_then(Value::as_str);
    let mut diff = Builder::default();
    let (source, replace_all) = match name {
        "Edit" => {
            diff.pair(text("old_string")?, text("new_string")?);
            (
                "edit",
                input.get("replace_all").and_then(Value::as_bool) == Some(true),
            )
        }
        "MultiEdit" => {
            let edits = input.get("edits").and_then(Value::as_array)?;
            let mut all = false;
            for edit in edits {
                let (Some(old), Some(new)) = (
                    edit.get("old_string").and_then(Value::as_str),
                    edit.get("new_string").and_then(Value::as_str),
                ) else {
                    continue;
                };
                all |= edit.get("replace_all").and_then(Value::as_bool) == Some(true);
                diff.pair(old, new);
            }
            ("multiEdit", all)
        }
        "Write" => {
            diff.pair("", text("content")?);
            ("write", false)
        }
        "NotebookEdit" => {
            let deleting = text("edit_mode") == Some("delete");
            diff.pair("", if deleting { "" } else { text("new_source")? });
            ("notebook", false)
        }
        _ => return None,
    };
    Some(FileDiff {
        source: source.to_owned(),
        replace_all,
        hunks: diff.hunks,
        added: diff.added,
        removed: diff.removed,
        omitted_lines: diff.omitted,
    })
}

#[derive(Default)]
struct Builder {
    hunks: Vec<DiffHunk>,
    kept: usize,
    added: u32,
    removed: u32,
    omitted: u32,
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The first `MAX_INPUT_LINES` lines of `text`, and how many lines were left.
fn head(text: &str) -> (&str, usize) {
    match text.match_indices('\n').nth(MAX_INPUT_LINES - 1) {
        Some((at, _)) => (&text[..=at], text[at + 1..].lines().count()),
        None => (text, 0),
    }
}

fn cut(line: &str) -> String {
    let line = line.strip_suffix('\n').unwrap_or(line);
    let line = line.strip_suffix('\r').unwrap_or(line);
    match line.char_indices().nth(MAX_LINE_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_owned(),
    }
}

impl Builder {
    fn pair(&mut self, old: &str, new: &str) {
        let (old, old_left) = head(old);
        let (new, new_left) = head(new);
        self.omitted = self.omitted.saturating_add(count(old_left + new_left));
        let diff = TextDiff::configure()
            .algorithm(similar::Algorithm::Patience)
            .diff_lines(old, new);
        for group in diff.grouped_ops(3) {
            let (Some(first), Some(last)) = (group.first(), group.last()) else {
                continue;
            };
            let old_range = first.old_range().start..last.old_range().end;
            let new_range = first.new_range().start..last.new_range().end;
            let mut lines = Vec::new();
            for op in &group {
                for change in diff.iter_changes(op) {
                    let op = match change.tag() {
                        ChangeTag::Equal => DiffOp::Keep,
                        ChangeTag::Insert => {
                            self.added += 1;
                            DiffOp::Add
                        }
                        ChangeTag::Delete => {
                            self.removed += 1;
                            DiffOp::Remove
                        }
                    };
                    if self.kept >= MAX_DIFF_LINES {
                        self.omitted = self.omitted.saturating_add(1);
                        continue;
                    }
                    self.kept += 1;
                    lines.push(DiffLine {
                        op,
                        text: cut(change.value()),
                    });
                }
            }
            if lines.is_empty() {
                continue;
            }
            self.hunks.push(DiffHunk {
                old_start: count(old_range.start + usize::from(!old_range.is_empty())),
                old_lines: count(old_range.len()),
                new_start: count(new_range.start + usize::from(!new_range.is_empty())),
                new_lines: count(new_range.len()),
                lines,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ops(diff: &FileDiff) -> Vec<String> {
        diff.hunks
            .iter()
            .flat_map(|h| &h.lines)
            .map(|l| {
                let sign = match l.op {
                    DiffOp::Keep => ' ',
                    DiffOp::Add => '+',
                    DiffOp::Remove => '-',
                };
                format!("{sign}{}", l.text)
            })
            .collect()
    }

    #[test]
    fn an_edit_diffs_its_old_and_new_strings_with_context() {
        let diff = tool_diff(
            "Edit",
            &json!({"file_path": "a.rs", "old_string": "a\nb\nc\n", "new_string": "a\nB\nc\n"}),
        )
        .unwrap();
        assert_eq!(diff.source, "edit");
        assert_eq!(ops(&diff), [" a", "-b", "+B", " c"]);
        assert_eq!((diff.added, diff.removed, diff.omitted_lines), (1, 1, 0));
        let hunk = &diff.hunks[0];
        assert_eq!(
            (
                hunk.old_start,
                hunk.old_lines,
                hunk.new_start,
                hunk.new_lines
            ),
            (1, 3, 1, 3)
        );
    }

    #[test]
    fn a_write_is_all_added_and_a_multi_edit_gives_each_edit() {
        let write = tool_diff("Write", &json!({"file_path": "n.rs", "content": "x\ny"})).unwrap();
        assert_eq!(ops(&write), ["+x", "+y"]);
        assert_eq!(write.hunks[0].old_start, 0);
        let multi = tool_diff(
            "MultiEdit",
            &json!({"file_path": "m.rs", "edits": [
                {"old_string": "one", "new_string": "uno"},
                {"old_string": "two", "new_string": "dos", "replace_all": true},
            ]}),
        )
        .unwrap();
        assert_eq!(ops(&multi), ["-one", "+uno", "-two", "+dos"]);
        assert_eq!(multi.hunks.len(), 2);
        assert!(multi.replace_all);
        let cell = tool_diff(
            "NotebookEdit",
            &json!({"notebook_path": "n.ipynb", "new_source": "print(1)"}),
        )
        .unwrap();
        assert_eq!(ops(&cell), ["+print(1)"]);
        assert!(tool_diff("Read", &json!({"file_path": "a"})).is_none());
        assert!(tool_diff("Edit", &json!({"file_path": "a"})).is_none());
    }

    #[test]
    fn a_large_write_is_cut_and_says_how_much_was_left_out() {
        let content = "line\n".repeat(12_000);
        let long = "y".repeat(2 * MAX_LINE_CHARS);
        let diff = tool_diff("Write", &json!({"content": format!("{long}\n{content}")})).unwrap();
        let lines: usize = diff.hunks.iter().map(|h| h.lines.len()).sum();
        assert_eq!(lines, MAX_DIFF_LINES);
        assert_eq!(diff.omitted_lines as usize, 12_001 - MAX_DIFF_LINES);
        let first = &diff.hunks[0].lines[0].text;
        assert_eq!(first.chars().count(), MAX_LINE_CHARS + 1);
        assert!(first.ends_with('…'));
    }
}
