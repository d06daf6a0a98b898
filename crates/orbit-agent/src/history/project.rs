//! Where Claude Code keeps a workspace's transcripts:
//! `<config>/projects/<sanitized cwd>/<session id>.jsonl`.

use std::path::{Path, PathBuf};

/// The longest sanitized name the CLI keeps whole; longer ones are cut here
/// and get `-<hash>` appended (a hash we cannot reproduce exactly, so we
/// match the prefix).
const MAX_SANITIZED: usize = 200;

/// The CLI's folder name for a project path: every character that is not
/// ASCII alphanumeric becomes `-`.
pub(crate) fn sanitize(path: &str) -> String {
    path.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The project folders under `projects_dir` that may hold `workspace`'s
/// transcripts: for the path as given and as resolved (symlinks), the exact
/// sanitized name, or for long paths every folder with the cut prefix.
pub(crate) fn project_dirs(projects_dir: &Path, workspace: &Path) -> Vec<PathBuf> {
    let mut names = Vec::new();
    let mut push = |p: &Path| {
        let name = sanitize(&p.to_string_lossy());
        if !names.contains(&name) {
            names.push(name);
        }
    };
    push(workspace);
    if let Ok(real) = fs_err::canonicalize(workspace) {
        push(&real);
    }
    let mut dirs = Vec::new();
    for name in names {
        if name.len() <= MAX_SANITIZED {
            let dir = projects_dir.join(&name);
            if dir.is_dir() && !dirs.contains(&dir) {
                dirs.push(dir);
            }
            continue;
        }
        let prefix = format!("{}-", &name[..MAX_SANITIZED]);
        let Ok(entries) = fs_err::read_dir(projects_dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let file_name = entry.file_name();
            if file_name.to_string_lossy().starts_with(&prefix) {
                let dir = entry.path();
                if dir.is_dir() && !dirs.contains(&dir) {
                    dirs.push(dir);
                }
            }
        }
    }
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitizes_as_the_cli_does() {
        assert_eq!(sanitize("/home/u/my.app"), "-home-u-my-app");
        assert_eq!(
            sanitize("/tmp/ccdrive_h multi/ws"),
            "-tmp-ccdrive-h-multi-ws"
        );
        assert_eq!(sanitize("/a/é"), "-a--");
    }

    #[test]
    fn long_paths_match_by_prefix() {
        let tmp = tempfile::tempdir().unwrap();
        let projects = tmp.path().join("projects");
        let long = format!("/{}", "d".repeat(250));
        let cut = &sanitize(&long)[..MAX_SANITIZED];
        fs_err::create_dir_all(projects.join(format!("{cut}-abc123"))).unwrap();
        fs_err::create_dir_all(projects.join(format!("{cut}x"))).unwrap();
        let found = project_dirs(&projects, Path::new(&long));
        assert_eq!(found, [projects.join(format!("{cut}-abc123"))]);
    }
}
