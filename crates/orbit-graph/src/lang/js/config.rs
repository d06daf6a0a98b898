//! What a workspace's `tsconfig.json`, `jsconfig.json` and `package.json`
//! files say about resolution, read once per configuration load.
//!
//! Every `tsconfig.json`/`jsconfig.json` of the graph becomes a [`Project`]
//! keyed by its folder, with its `extends` chain already folded in (relative
//! paths and workspace packages; cycles are cut). Every `package.json` with a
//! `name` becomes a [`Package`]. Broken files are logged and skipped.

use rustc_hash::FxHashMap as HashMap;
use std::path::Path;

use orbit_common::{join_relative, join_slash as join, parent_of};
use serde_json::Value;

use crate::index::FileIndex;
use crate::lang::read_config;

/// Deeper JSON than this is refused before parsing: the JSON5 parser
/// recurses, and no real configuration nests this deep.
const MAX_JSON_DEPTH: usize = 64;

/// How many configurations an `extends` chain may go through.
const MAX_EXTENDS_DEPTH: usize = 32;

/// What the project files say.
#[derive(Debug, Default)]
pub(crate) struct Config {
    /// Folder -> the `tsconfig.json` (else `jsconfig.json`) in it.
    pub(super) projects: HashMap<String, Project>,
    /// Package name -> the workspace package.
    pub(super) packages: HashMap<String, Package>,
    /// Folder of every `package.json` -> its `imports` (`#internal/*`),
    /// targets resolved. Node reads only the nearest `package.json`, named
    /// or not.
    pub(super) package_imports: HashMap<String, Vec<PathPattern>>,
}

/// The resolution options of one `tsconfig.json`/`jsconfig.json`, with what
/// it extends folded in. Folders are workspace-relative.
#[derive(Debug, Default, Clone)]
pub(super) struct Project {
    /// `compilerOptions.baseUrl`, relative to the config that set it.
    pub(super) base_url: Option<String>,
    /// `compilerOptions.paths`, in the order written.
    pub(super) paths: Vec<PathPattern>,
    /// The folder `paths` substitutions are relative to: the base URL, else
    /// the folder of the config that set `paths`.
    pub(super) paths_base: String,
}

/// One `paths` (or `exports`) key: `prefix*suffix`, or an exact key.
#[derive(Debug, Clone)]
pub(super) struct PathPattern {
    pub(super) prefix: String,
    /// `None` for a key without `*`.
    pub(super) suffix: Option<String>,
    /// The substitutions, tried in order (each may hold one `*`).
    pub(super) targets: Vec<String>,
}

impl PathPattern {
    fn new(key: &str, targets: Vec<String>) -> Self {
        match key.split_once('*') {
            Some((prefix, suffix)) => PathPattern {
                prefix: prefix.to_owned(),
                suffix: Some(suffix.to_owned()),
                targets,
            },
            None => PathPattern {
                prefix: key.to_owned(),
                suffix: None,
                targets,
            },
        }
    }

    /// What `*` stands for when `specifier` matches this pattern.
    fn capture<'s>(&self, specifier: &'s str) -> Option<&'s str> {
        let suffix = self.suffix.as_deref()?;
        let rest = specifier.strip_prefix(self.prefix.as_str())?;
        rest.strip_suffix(suffix)
    }

    /// The targets with `*` replaced by `capture`.
    pub(super) fn substitute<'p>(&'p self, capture: &'p str) -> impl Iterator<Item = String> + 'p {
        self.targets
            .iter()
            .map(move |target| target.replacen('*', capture, 1))
    }
}

/// The pattern `specifier` matches, with what `*` stands for: an exact key
/// first, else the star pattern with the longest prefix (as `tsc` and Node
/// choose).
pub(super) fn match_pattern<'p, 's>(
    patterns: &'p [PathPattern],
    specifier: &'s str,
) -> Option<(&'p PathPattern, &'s str)> {
    if let Some(exact) = patterns
        .iter()
        .find(|pattern| pattern.suffix.is_none() && pattern.prefix == specifier)
    {
        return Some((exact, ""));
    }
    let mut best: Option<(&PathPattern, &str)> = None;
    for pattern in patterns {
        if let Some(capture) = pattern.capture(specifier)
            && best.is_none_or(|(chosen, _)| pattern.prefix.len() > chosen.prefix.len())
        {
            best = Some((pattern, capture));
        }
    }
    best
}

/// A package of the workspace, from its `package.json`. Paths are
/// workspace-relative.
#[derive(Debug, Default)]
pub(super) struct Package {
    pub(super) folder: String,
    /// Candidates for the package root from `exports`, in preference order.
    pub(super) root_exports: Vec<String>,
    /// `exports` subpaths (`./sub`, `./features/*`), targets resolved.
    pub(super) subpath_exports: Vec<PathPattern>,
    /// `source`, `module`, `main`, `types`, `typings`, in that order.
    pub(super) entry_fields: Vec<String>,
}

pub(crate) fn is_config(name: &str) -> bool {
    // `tsc` and Node read these names exactly as written, case included.
    name == "package.json"
        || name
            .strip_suffix(".json")
            .is_some_and(|stem| stem.starts_with("tsconfig") || stem.starts_with("jsconfig"))
}

pub(crate) fn load_config(root: &Path, index: &FileIndex) -> Config {
    let mut config = Config::default();
    let mut package_files: Vec<&str> = index
        .files()
        .filter(|path| file_name(path) == "package.json" && !in_node_modules(path))
        .collect();
    // Shallowest first, so that of two packages with the same name the one
    // nearest the root wins, whatever the index order.
    package_files.sort_by(|a, b| (depth(a), *a).cmp(&(depth(b), *b)));
    for path in package_files {
        let Some(value) = read_json(root, path) else {
            continue;
        };
        let folder = parent_of(path);
        config
            .package_imports
            .insert(folder.to_owned(), subpath_map(folder, value.get("imports")));
        let Some(name) = value.get("name").and_then(Value::as_str) else {
            continue;
        };
        if !name.is_empty() && !config.packages.contains_key(name) {
            config
                .packages
                .insert(name.to_owned(), package(parent_of(path), &value));
        }
    }

    let mut loader = ProjectLoader {
        root,
        index,
        packages: &config.packages,
        done: HashMap::default(),
    };
    let mut projects = HashMap::default();
    for path in index.files() {
        let name = file_name(path);
        if (name != "tsconfig.json" && name != "jsconfig.json") || in_node_modules(path) {
            continue;
        }
        let folder = parent_of(path);
        if name == "jsconfig.json" && index.contains(&join(folder, "tsconfig.json")) {
            continue;
        }
        let project = loader.load(path, &mut Vec::new());
        projects.insert(folder.to_owned(), project);
    }
    config.projects = projects;
    config
}

/// Loads `tsconfig`s, each once, following `extends`.
struct ProjectLoader<'a> {
    root: &'a Path,
    index: &'a FileIndex,
    packages: &'a HashMap<String, Package>,
    done: HashMap<String, Project>,
}

impl ProjectLoader<'_> {
    /// The options of the config at `path`, folded with what it extends.
    /// `chain` holds the configs being loaded, to cut cycles.
    fn load(&mut self, path: &str, chain: &mut Vec<String>) -> Project {
        if let Some(done) = self.done.get(path) {
            return done.clone();
        }
        if chain.iter().any(|seen| seen == path) || chain.len() >= MAX_EXTENDS_DEPTH {
            tracing::warn!(path = %path, "`extends` cycle or chain too long, cut here");
            return Project::default();
        }
        let Some(value) = read_json(self.root, path) else {
            return Project::default();
        };
        let folder = parent_of(path);
        chain.push(path.to_owned());
        // Later bases override earlier ones, and the config itself all of
        // them.
        let mut project = Project::default();
        let bases: Vec<&str> = match value.get("extends") {
            Some(Value::String(base)) => vec![base.as_str()],
            Some(Value::Array(bases)) => bases.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        for base in bases {
            match self.extended_path(folder, base) {
                Some(base_path) => {
                    let inherited = self.load(&base_path, chain);
                    if inherited.base_url.is_some() {
                        project.base_url = inherited.base_url;
                    }
                    if !inherited.paths.is_empty() {
                        project.paths = inherited.paths;
                        project.paths_base = inherited.paths_base;
                    }
                }
                None => {
                    tracing::debug!(path = %path, extends = %base, "`extends` not in the workspace");
                }
            }
        }
        chain.pop();

        let options = value.get("compilerOptions");
        if let Some(base_url) = options
            .and_then(|options| options.get("baseUrl"))
            .and_then(Value::as_str)
        {
            project.base_url = join_relative(folder, base_url);
        }
        if let Some(Value::Object(paths)) = options.and_then(|options| options.get("paths")) {
            project.paths = paths
                .iter()
                .map(|(key, targets)| {
                    let targets = match targets {
                        Value::String(target) => vec![target.clone()],
                        Value::Array(targets) => targets
                            .iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect(),
                        _ => Vec::new(),
                    };
                    PathPattern::new(key, targets)
                })
                .collect();
            folder.clone_into(&mut project.paths_base);
        }
        // `paths` are relative to the base URL whenever there is one, even
        // when a base config set `paths`.
        if let Some(base_url) = &project.base_url {
            project.paths_base.clone_from(base_url);
        }
        self.done.insert(path.to_owned(), project.clone());
        project
    }

    /// The config file an `extends` entry names, if it is in the graph: a
    /// relative path, or a file of a workspace package.
    fn extended_path(&self, folder: &str, base: &str) -> Option<String> {
        let candidate = if base.starts_with("./") || base.starts_with("../") {
            join_relative(folder, base)?
        } else {
            let (package, subpath) = split_package(self.packages, base)?;
            if subpath.is_empty() {
                join(&package.folder, "tsconfig.json")
            } else {
                join_relative(&package.folder, subpath)?
            }
        };
        if self.index.contains(&candidate) {
            return Some(candidate);
        }
        let with_json = format!("{candidate}.json");
        self.index.contains(&with_json).then_some(with_json)
    }
}

/// The workspace package a bare specifier names (its longest name prefix
/// that is a package), and the rest of the specifier (`""` or `/sub/path`).
pub(super) fn split_package<'p, 's>(
    packages: &'p HashMap<String, Package>,
    specifier: &'s str,
) -> Option<(&'p Package, &'s str)> {
    let mut end = specifier.len();
    loop {
        if let Some(package) = packages.get(&specifier[..end]) {
            return Some((package, &specifier[end..]));
        }
        end = specifier[..end].rfind('/')?;
    }
}

fn package(folder: &str, value: &Value) -> Package {
    let mut package = Package {
        folder: folder.to_owned(),
        ..Package::default()
    };
    let resolve_target = |target: String| join_relative(folder, &target);
    match value.get("exports") {
        Some(Value::Object(map)) if map.keys().any(|key| key.starts_with('.')) => {
            for (key, target) in map {
                let mut targets = Vec::new();
                export_targets(target, &mut targets, 0);
                let targets: Vec<String> = targets.into_iter().filter_map(resolve_target).collect();
                if key == "." {
                    package.root_exports = targets;
                } else {
                    package.subpath_exports.push(PathPattern::new(key, targets));
                }
            }
        }
        Some(exports) => {
            let mut targets = Vec::new();
            export_targets(exports, &mut targets, 0);
            package.root_exports = targets.into_iter().filter_map(resolve_target).collect();
        }
        None => {}
    }
    for field in ["source", "module", "main", "types", "typings"] {
        if let Some(target) = value.get(field).and_then(Value::as_str)
            && let Some(path) = join_relative(folder, target)
        {
            package.entry_fields.push(path);
        }
    }
    package
}

/// The entries of an `imports` map (`"#x/*": target or conditions`), with
/// targets resolved against the package folder.
fn subpath_map(folder: &str, map: Option<&Value>) -> Vec<PathPattern> {
    let Some(Value::Object(map)) = map else {
        return Vec::new();
    };
    map.iter()
        .map(|(key, target)| {
            let mut targets = Vec::new();
            export_targets(target, &mut targets, 0);
            let targets = targets
                .iter()
                .filter_map(|target| join_relative(folder, target))
                .collect();
            PathPattern::new(key, targets)
        })
        .collect()
}

/// The conditions of `exports` tried first, in this order; others follow in
/// key order.
const PREFERRED_CONDITIONS: &[&str] = &["types", "import", "default", "require"];

/// Every target of one `exports` entry (a string, a condition object or a
/// fallback array), preferred ones first.
fn export_targets(value: &Value, out: &mut Vec<String>, depth: usize) {
    if depth > MAX_JSON_DEPTH {
        return;
    }
    match value {
        Value::String(target) => out.push(target.clone()),
        Value::Array(items) => {
            for item in items {
                export_targets(item, out, depth + 1);
            }
        }
        Value::Object(conditions) => {
            for condition in PREFERRED_CONDITIONS {
                if let Some(target) = conditions.get(*condition) {
                    export_targets(target, out, depth + 1);
                }
            }
            for (condition, target) in conditions {
                if !PREFERRED_CONDITIONS.contains(&condition.as_str()) {
                    export_targets(target, out, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// Reads and parses a JSON file of the graph (JSON5: comments and trailing
/// commas are fine), or logs why not.
fn read_json(root: &Path, path: &str) -> Option<Value> {
    let text = read_config(root, path)?;
    if nesting_depth(&text) > MAX_JSON_DEPTH {
        tracing::warn!(path = %path, "project file nests too deep, ignored");
        return None;
    }
    // Strict JSON parses fast; JSON5 covers the comments `tsconfig` allows.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    match serde_json::from_str::<Value>(text) {
        Ok(value) => Some(value),
        Err(_) => match json5::from_str::<Value>(text) {
            Ok(value) => Some(value),
            Err(error) => {
                tracing::warn!(path = %path, %error, "malformed project file, ignored");
                None
            }
        },
    }
}

/// The deepest bracket nesting of `text`, counting brackets in strings too
/// (an over-estimate is harmless: it only guards the parser's recursion).
fn nesting_depth(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for byte in text.bytes() {
        match byte {
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn in_node_modules(path: &str) -> bool {
    path.split('/').any(|part| part == "node_modules")
}

fn depth(path: &str) -> usize {
    path.bytes().filter(|&byte| byte == b'/').count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patterns(keys: &[&str]) -> Vec<PathPattern> {
        keys.iter()
            .map(|key| PathPattern::new(key, vec![(*key).to_owned()]))
            .collect()
    }

    #[test]
    fn longest_prefix_wins_and_exact_first() {
        let patterns = patterns(&["*", "@app/*", "@app/ui/*", "@app/ui/button"]);
        let chosen = |specifier: &str| {
            match_pattern(&patterns, specifier)
                .map(|(pattern, capture)| (pattern.targets[0].clone(), capture.to_owned()))
        };
        assert_eq!(chosen("@app/ui/x"), Some(("@app/ui/*".into(), "x".into())));
        assert_eq!(chosen("@app/core"), Some(("@app/*".into(), "core".into())));
        assert_eq!(
            chosen("@app/ui/button"),
            Some(("@app/ui/button".into(), String::new()))
        );
        assert_eq!(chosen("react"), Some(("*".into(), "react".into())));
    }

    #[test]
    fn suffix_patterns() {
        let patterns = patterns(&["*.svg"]);
        assert!(match_pattern(&patterns, "./logo.svg").is_some());
        assert!(match_pattern(&patterns, "./logo.png").is_none());
    }

    #[test]
    fn config_names() {
        assert!(is_config("tsconfig.json"));
        assert!(is_config("tsconfig.base.json"));
        assert!(is_config("jsconfig.json"));
        assert!(is_config("package.json"));
        assert!(!is_config("package-lock.json"));
        assert!(!is_config("tsconfig.ts"));
    }

    #[test]
    fn exports_preference() {
        let value: Value = serde_json::from_str(
            r#"{ "node": "./n.js", "require": "./r.cjs", "import": "./i.mjs", "types": "./t.d.ts" }"#,
        )
        .unwrap();
        let mut targets = Vec::new();
        export_targets(&value, &mut targets, 0);
        assert_eq!(targets, ["./t.d.ts", "./i.mjs", "./r.cjs", "./n.js"]);
    }
}
