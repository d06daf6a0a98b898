//! No self-approval: a request that would answer Claude's own questions (a
//! join's login address, an answer to a card) is refused to a caller whose
//! process descends from a `claude` that Orbit started, so that Claude's
//! own shell commands cannot answer for the user. The caller's pid comes
//! from the socket's credentials; its ancestry from `/proc`.

use std::collections::HashSet;

/// Ancestors followed at most (a loop in `/proc` data, or a very deep
/// tree, ends the walk).
const MAX_DEPTH: usize = 256;

/// The parent of `pid`, from `/proc/<pid>/stat` (`None`: gone, or no
/// `/proc`).
#[must_use]
pub fn parent_of(pid: u32) -> Option<u32> {
    let stat = fs_err::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat_parent(&stat)
}

/// The parent pid field of a `/proc/<pid>/stat` line: the fourth field,
/// counted after the command name's closing parenthesis (a name may hold
/// spaces and parentheses).
#[must_use]
pub fn parse_stat_parent(stat: &str) -> Option<u32> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_whitespace();
    let _state = fields.next()?;
    fields.next()?.parse().ok()
}

/// Whether `pid` is one of `agents` or descends from one.
#[must_use]
pub fn descends_from(pid: u32, agents: &[u32]) -> bool {
    descends_from_with(pid, agents, parent_of)
}

/// [`descends_from`] with the parent lookup given (tests).
pub fn descends_from_with(pid: u32, agents: &[u32], parent: impl Fn(u32) -> Option<u32>) -> bool {
    if agents.is_empty() {
        return false;
    }
    let agents: HashSet<u32> = agents.iter().copied().collect();
    let mut current = pid;
    let mut seen = HashSet::new();
    for _ in 0..MAX_DEPTH {
        if agents.contains(&current) {
            return true;
        }
        if current <= 1 || !seen.insert(current) {
            return false;
        }
        match parent(current) {
            Some(next) => current = next,
            None => return false,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parent_field_survives_odd_names() {
        assert_eq!(parse_stat_parent("42 (bash) S 7 42 42 0"), Some(7));
        assert_eq!(parse_stat_parent("42 (a) b) (c) R 9 1 1"), Some(9));
        assert_eq!(parse_stat_parent("garbage"), None);
        assert_eq!(parse_stat_parent("1 (x) S"), None);
    }

    #[test]
    fn a_grandchild_of_an_agent_descends_from_it() {
        let tree = |pid| match pid {
            30 => Some(20),
            20 => Some(10),
            10 => Some(1),
            _ => None,
        };
        assert!(descends_from_with(30, &[10], tree));
        assert!(descends_from_with(10, &[10], tree));
        assert!(!descends_from_with(30, &[11], tree));
        assert!(!descends_from_with(30, &[], tree));
        // A loop in the data ends the walk.
        assert!(!descends_from_with(5, &[10], |pid| Some(if pid == 5 {
            6
        } else {
            5
        })));
    }

    #[test]
    fn this_process_descends_from_its_parent_in_proc() {
        let me = std::process::id();
        let parent = parent_of(me).expect("/proc gives this process's parent");
        assert!(descends_from(me, &[parent]));
        assert!(!descends_from(parent, &[me]));
    }
}
