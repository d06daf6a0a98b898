//! A prompt with skills and files, in Claude Code's own syntax: the first
//! skill as a leading slash command (`/name text`), the others named in the
//! text for Claude to load, and files as `@path` mentions (`@"a b.md"` when
//! the path has whitespace), so Claude reads them into the turn itself.
//!
//! This module only encodes: which skills and files are allowed is decided
//! by the caller (orbit-core's controller); past the limits, the rest is
//! dropped and reported.

/// At most this many skills per prompt.
pub const MAX_PROMPT_SKILLS: usize = 8;
/// At most this many files per prompt.
pub const MAX_PROMPT_FILES: usize = 20;

/// A prompt's text with its skills and files encoded, and what was dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedPrompt {
    /// The text to send as the user message.
    pub text: String,
    /// Skills left out: over the limit, repeated, or not a usable name.
    pub dropped_skills: Vec<String>,
    /// Files left out: over the limit, repeated, or not expressible as a
    /// mention (a `"` or a line break in the path).
    pub dropped_files: Vec<String>,
}

/// Encodes `text` with `skills` (names as the catalog gives them, without
/// the slash) and `files` (workspace-relative or absolute paths).
pub fn encode_prompt(text: &str, skills: &[String], files: &[String]) -> EncodedPrompt {
    let mut dropped_skills = Vec::new();
    let mut kept_skills: Vec<&str> = Vec::new();
    for skill in skills {
        let name = skill.trim().trim_start_matches('/');
        let usable = !name.is_empty()
            && !name
                .chars()
                .any(|c| c.is_whitespace() || c.is_control() || c == '/');
        if !usable || kept_skills.contains(&name) || kept_skills.len() == MAX_PROMPT_SKILLS {
            dropped_skills.push(skill.clone());
        } else {
            kept_skills.push(name);
        }
    }
    let mut dropped_files = Vec::new();
    let mut mentions: Vec<String> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for file in files {
        let usable = !file.is_empty() && !file.contains(['"', '\n', '\r', '\0']);
        if !usable || seen.contains(&file.as_str()) || mentions.len() == MAX_PROMPT_FILES {
            dropped_files.push(file.clone());
            continue;
        }
        seen.push(file);
        mentions.push(if file.chars().any(char::is_whitespace) {
            format!("@\"{file}\"")
        } else {
            format!("@{file}")
        });
    }

    let mut out = String::new();
    if let Some(first) = kept_skills.first() {
        out.push('/');
        out.push_str(first);
        if !text.is_empty() {
            out.push(' ');
        }
    }
    out.push_str(text);
    if kept_skills.len() > 1 {
        let rest: Vec<String> = kept_skills[1..].iter().map(|s| format!("/{s}")).collect();
        out.push_str("\n\nAlso use these skills: ");
        out.push_str(&rest.join(", "));
        out.push('.');
    }
    if !mentions.is_empty() {
        out.push_str("\n\n");
        out.push_str(&mentions.join(" "));
    }
    EncodedPrompt {
        text: out,
        dropped_skills,
        dropped_files,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn plain_text_is_unchanged() {
        let p = encode_prompt("fix the test", &[], &[]);
        assert_eq!(p.text, "fix the test");
        assert!(p.dropped_skills.is_empty() && p.dropped_files.is_empty());
    }

    #[test]
    fn first_skill_leads_the_rest_are_named() {
        let p = encode_prompt("review it", &strings(&["review", "/pdf", "lint"]), &[]);
        assert_eq!(
            p.text,
            "/review review it\n\nAlso use these skills: /pdf, /lint."
        );
    }

    #[test]
    fn files_as_mentions_quoted_with_whitespace() {
        let p = encode_prompt(
            "look",
            &[],
            &strings(&[
                "src/a.rs",
                "docs/a b.md",
                "/abs/t\tab.txt",
                "src/a.rs",
                "bad\"q",
            ]),
        );
        assert_eq!(
            p.text,
            "look\n\n@src/a.rs @\"docs/a b.md\" @\"/abs/t\tab.txt\""
        );
        assert_eq!(p.dropped_files, ["src/a.rs", "bad\"q"]);
    }

    #[test]
    fn limits_drop_the_rest() {
        let skills: Vec<String> = (0..10).map(|i| format!("s{i}")).collect();
        let files: Vec<String> = (0..25).map(|i| format!("f{i}.rs")).collect();
        let p = encode_prompt("", &skills, &files);
        assert!(p.text.starts_with("/s0\n\nAlso use these skills: /s1,"));
        assert!(p.text.contains("/s7."));
        assert_eq!(p.dropped_skills, ["s8", "s9"]);
        assert_eq!(p.dropped_files.len(), 5);
        assert_eq!(p.text.matches('@').count(), MAX_PROMPT_FILES);
        let p = encode_prompt("x", &strings(&["", "a b", "ok", "ok"]), &[]);
        assert_eq!(p.text, "/ok x");
        assert_eq!(p.dropped_skills, ["", "a b", "ok"]);
    }
}
