//! What the ignore rules left out, for `orbit graph --format stats`: each
//! entry of a walked folder that is no node and no walked folder, and that
//! an ignore rule matches, counted once (an ignored folder counts as one:
//! the walk never enters it), per rule.
//!
//! The rules are the walk's, in the walk's order of precedence: `.ignore`
//! files (the deepest folder's first), then `.gitignore` files (likewise,
//! up to the filesystem's root, as the walk reads parents' files), then the
//! repository's `.git/info/exclude`, then git's global excludes file; and
//! Orbit's own rule, version-control folders (`.git`, `.hg`, ...).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use orbit_types::IgnoredStats;

use crate::scan::VCS_DIRS;

/// The matchers of each kind of ignore file, per folder, read once.
struct Rules {
    per_folder: HashMap<(PathBuf, &'static str), Option<Gitignore>>,
    exclude: Option<Gitignore>,
    global: Option<Gitignore>,
}

impl Rules {
    fn new(root: &Path) -> Self {
        let exclude = root
            .ancestors()
            .map(|dir| dir.join(".git"))
            .find(|git| git.exists())
            .map(|git| git.join("info/exclude"))
            .filter(|file| file.is_file())
            .and_then(|file| load(file.parent()?.parent()?.parent()?, &file));
        let (global, error) = Gitignore::global();
        if let Some(error) = error {
            tracing::debug!(%error, "git's global excludes file could not be read whole");
        }
        Self {
            per_folder: HashMap::new(),
            exclude,
            global: (!global.is_empty()).then_some(global),
        }
    }

    fn file(&mut self, folder: &Path, name: &'static str) -> Option<&Gitignore> {
        self.per_folder
            .entry((folder.to_path_buf(), name))
            .or_insert_with(|| {
                let file = folder.join(name);
                file.is_file().then(|| load(folder, &file)).flatten()
            })
            .as_ref()
    }

    /// The rule that decides about `path` (in `folder`): `None` when no
    /// rule ignores it (none matches, or the deciding one is a `!` rule).
    fn ignoring(
        &mut self,
        folder: &Path,
        path: &Path,
        is_dir: bool,
    ) -> Option<(Option<PathBuf>, String)> {
        for name in [".ignore", ".gitignore"] {
            for dir in folder.ancestors() {
                let Some(matcher) = self.file(dir, name) else {
                    continue;
                };
                match matcher.matched(path, is_dir) {
                    Match::None => {}
                    Match::Whitelist(_) => return None,
                    Match::Ignore(glob) => return Some(describe(glob)),
                }
            }
        }
        for matcher in [self.exclude.as_ref(), self.global.as_ref()]
            .into_iter()
            .flatten()
        {
            match matcher.matched(path, is_dir) {
                Match::None => {}
                Match::Whitelist(_) => return None,
                Match::Ignore(glob) => return Some(describe(glob)),
            }
        }
        None
    }
}

fn load(root: &Path, file: &Path) -> Option<Gitignore> {
    let mut builder = GitignoreBuilder::new(root);
    if let Some(error) = builder.add(file) {
        tracing::debug!(%error, "an ignore file could not be read whole");
    }
    builder.build().ok().filter(|matcher| !matcher.is_empty())
}

/// The rule's file and its pattern as written.
fn describe(glob: &ignore::gitignore::Glob) -> (Option<PathBuf>, String) {
    (
        glob.from().map(Path::to_path_buf),
        glob.original().to_owned(),
    )
}

/// Counts what the ignore rules left out of the walked `folders` (relative
/// to `root`, `""` the root itself): entries that are not `nodes` and not
/// walked folders, and that a rule ignores.
pub(crate) fn ignored_stats<S: std::hash::BuildHasher>(
    root: &Path,
    folders: &HashSet<String, S>,
    is_node: &dyn Fn(&str) -> bool,
) -> IgnoredStats {
    let mut stats = IgnoredStats::default();
    let mut rules = Rules::new(root);
    let root_folder = String::new();
    let mut sorted: Vec<&String> = folders.iter().chain([&root_folder]).collect();
    sorted.sort_unstable();
    sorted.dedup();
    for folder in sorted {
        let dir = if folder.is_empty() {
            root.to_path_buf()
        } else {
            root.join(folder)
        };
        let Ok(entries) = fs_err::read_dir(&dir) else {
            continue;
        };
        let mut counted: BTreeMap<String, u64> = BTreeMap::new();
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                continue;
            };
            let relative = if folder.is_empty() {
                name.to_owned()
            } else {
                format!("{folder}/{name}")
            };
            if folders.contains(&relative) || is_node(&relative) {
                continue;
            }
            let is_dir = kind.is_dir();
            let rule = if is_dir && VCS_DIRS.contains(&name) {
                Some(format!("orbit: version-control folder {name}"))
            } else {
                rules
                    .ignoring(&dir, &entry.path(), is_dir)
                    .map(|(file, pattern)| match file {
                        Some(file) => format!(
                            "{}: {pattern}",
                            file.strip_prefix(root).unwrap_or(&file).display()
                        ),
                        None => pattern,
                    })
            };
            let Some(rule) = rule else {
                continue;
            };
            if is_dir {
                stats.folders += 1;
            } else {
                stats.files += 1;
            }
            *counted.entry(rule).or_default() += 1;
        }
        for (rule, count) in counted {
            *stats.rules.entry(rule).or_default() += count;
        }
    }
    stats
}
