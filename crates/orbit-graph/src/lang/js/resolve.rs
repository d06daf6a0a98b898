//! Resolution of one JavaScript/TypeScript specifier to a file of the graph,
//! by hash lookups only.
//!
//! Order, as `tsc` with `moduleResolution: bundler` and Node workspaces:
//! relative (and root-absolute) paths are probed; bare specifiers go through
//! the nearest config's `paths`, then its `baseUrl`, then the workspace's
//! packages by name; the rest is external. `#internal` specifiers go
//! through the `imports` of the nearest `package.json`. A `paths` pattern that matches
//! with a real prefix (`@/*`, `~lib/*`) but names no file makes the import
//! unresolved rather than external: it names local code. The catch-all `*`
//! pattern does not, since npm packages match it too.

use orbit_common::{join_relative, join_slash as join, parent_of};

use super::config::{Config, Package, Project, match_pattern, split_package};
use crate::import::{RawImport, Resolution};
use crate::index::FileIndex;
use crate::lang::ResolveCtx;

/// Extensions probed after a specifier without one, in order.
const EXTENSIONS: &[&str] = &[
    ".ts", ".tsx", ".d.ts", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs", ".json",
];

/// TypeScript's ESM convention: a specifier names the JavaScript file the
/// compiler will emit, so `./x.js` means `./x.ts` when only that exists.
const EMITTED: &[(&str, &[&str])] = &[
    (".js", &[".ts", ".tsx", ".d.ts"]),
    (".jsx", &[".tsx"]),
    (".mjs", &[".mts", ".d.mts"]),
    (".cjs", &[".cts", ".d.cts"]),
];

pub(crate) fn resolve(ctx: &ResolveCtx<'_>, from: &str, import: &RawImport) -> Resolution {
    resolve_specifier(ctx.index, &ctx.config.js, from, &import.specifier)
}

fn resolve_specifier(
    index: &FileIndex,
    config: &Config,
    from: &str,
    specifier: &str,
) -> Resolution {
    if is_relative(specifier) {
        // Bundlers' resource queries (`./worker.js?worker`) name the same file.
        let path = specifier.split(['?', '#']).next().unwrap_or(specifier);
        return found(join_relative(parent_of(from), path).and_then(|path| probe(index, &path)));
    }
    if let Some(path) = specifier.strip_prefix('/') {
        // Root-absolute, as Vite and Next.js read it.
        return found(join_relative("", path).and_then(|path| probe(index, &path)));
    }
    if specifier.starts_with('#') {
        return found(package_import(index, config, from, specifier));
    }
    // `node:fs`, `bun:test`, `https://...`: a scheme names no workspace file.
    if let Some(colon) = specifier.find(':')
        && !specifier[..colon].contains('/')
    {
        return Resolution::External;
    }
    let mut names_local_code = false;
    if let Some(project) = project_for(config, from) {
        if let Some((pattern, capture)) = match_pattern(&project.paths, specifier) {
            for target in pattern.substitute(capture) {
                if let Some(file) =
                    join_relative(&project.paths_base, &target).and_then(|path| probe(index, &path))
                {
                    return Resolution::Files(vec![file]);
                }
            }
            names_local_code = !pattern.prefix.is_empty()
                || pattern
                    .suffix
                    .as_deref()
                    .is_some_and(|suffix| !suffix.is_empty());
        }
        if let Some(file) = base_url_file(index, project, specifier) {
            return Resolution::Files(vec![file]);
        }
    }
    if let Some((package, subpath)) = split_package(&config.packages, specifier) {
        return found(package_file(index, package, subpath));
    }
    if names_local_code {
        Resolution::Unresolved
    } else {
        Resolution::External
    }
}

fn base_url_file(index: &FileIndex, project: &Project, specifier: &str) -> Option<String> {
    let base_url = project.base_url.as_deref()?;
    probe(index, &join_relative(base_url, specifier)?)
}

/// The nearest config governing `from`: in its folder or an ancestor.
fn project_for<'c>(config: &'c Config, from: &str) -> Option<&'c Project> {
    if config.projects.is_empty() {
        return None;
    }
    let mut folder = parent_of(from);
    loop {
        if let Some(project) = config.projects.get(folder) {
            return Some(project);
        }
        if folder.is_empty() {
            return None;
        }
        folder = parent_of(folder);
    }
}

/// The file a `#internal` specifier names through the `imports` of the
/// nearest `package.json`.
fn package_import(
    index: &FileIndex,
    config: &Config,
    from: &str,
    specifier: &str,
) -> Option<String> {
    let mut folder = parent_of(from);
    let imports = loop {
        if let Some(imports) = config.package_imports.get(folder) {
            break imports;
        }
        if folder.is_empty() {
            return None;
        }
        folder = parent_of(folder);
    };
    let (pattern, capture) = match_pattern(imports, specifier)?;
    pattern
        .substitute(capture)
        .find_map(|target| probe(index, &target))
}

/// The file a workspace package's root (`subpath` empty) or subpath
/// (`/sub/path`) names.
fn package_file(index: &FileIndex, package: &Package, subpath: &str) -> Option<String> {
    if subpath.is_empty() {
        return package
            .root_exports
            .iter()
            .chain(&package.entry_fields)
            .find_map(|target| probe(index, target))
            .or_else(|| probe_index(index, &package.folder))
            .or_else(|| probe_index(index, &join(&package.folder, "src")));
    }
    let key = format!(".{subpath}");
    if let Some((pattern, capture)) = match_pattern(&package.subpath_exports, &key) {
        // Targets were resolved against the package folder when loaded.
        if let Some(file) = pattern
            .substitute(capture)
            .find_map(|target| probe(index, &target))
        {
            return Some(file);
        }
    }
    probe(
        index,
        &join_relative(&package.folder, subpath.trim_start_matches('/'))?,
    )
}

/// The file a path names: itself, its TypeScript source, with an extension
/// added, or its folder's `index`.
fn probe(index: &FileIndex, path: &str) -> Option<String> {
    if !path.is_empty() && !path.ends_with('/') {
        if index.contains(path) {
            return Some(path.to_owned());
        }
        for (emitted, sources) in EMITTED {
            if let Some(stem) = path.strip_suffix(emitted) {
                for source in *sources {
                    let candidate = format!("{stem}{source}");
                    if index.contains(&candidate) {
                        return Some(candidate);
                    }
                }
            }
        }
        for extension in EXTENSIONS {
            let candidate = format!("{path}{extension}");
            if index.contains(&candidate) {
                return Some(candidate);
            }
        }
    }
    probe_index(index, path.trim_end_matches('/'))
}

/// `folder/index` with one of the extensions.
fn probe_index(index: &FileIndex, folder: &str) -> Option<String> {
    if !index.folder_exists(folder) {
        return None;
    }
    EXTENSIONS
        .iter()
        .map(|extension| join(folder, &format!("index{extension}")))
        .find(|candidate| index.contains(candidate))
}

fn is_relative(specifier: &str) -> bool {
    specifier.starts_with("./")
        || specifier.starts_with("../")
        || specifier == "."
        || specifier == ".."
}

fn found(file: Option<String>) -> Resolution {
    file.map_or(Resolution::Unresolved, |file| Resolution::Files(vec![file]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(files: &[&str]) -> FileIndex {
        let mut index = FileIndex::default();
        for file in files {
            index.insert(file, None);
        }
        index
    }

    #[test]
    fn probing_order() {
        let index = index(&[
            "a.ts",
            "a.js",
            "b.d.ts",
            "c.js",
            "d/index.tsx",
            "e.ts",
            "e/index.ts",
        ]);
        assert_eq!(probe(&index, "a").as_deref(), Some("a.ts"));
        assert_eq!(probe(&index, "a.js").as_deref(), Some("a.js"));
        assert_eq!(probe(&index, "b.js").as_deref(), Some("b.d.ts"));
        assert_eq!(probe(&index, "c").as_deref(), Some("c.js"));
        assert_eq!(probe(&index, "d").as_deref(), Some("d/index.tsx"));
        assert_eq!(probe(&index, "d/").as_deref(), Some("d/index.tsx"));
        assert_eq!(probe(&index, "e").as_deref(), Some("e.ts"));
        assert_eq!(probe(&index, "").as_deref(), None);
        assert_eq!(probe(&index, "zz").as_deref(), None);
    }

    #[test]
    fn schemes_are_external() {
        let config = Config::default();
        let index = index(&["src/a.ts"]);
        let resolve = |specifier: &str| resolve_specifier(&index, &config, "src/a.ts", specifier);
        assert_eq!(resolve("node:fs"), Resolution::External);
        assert_eq!(resolve("react"), Resolution::External);
        assert_eq!(resolve("@types/node"), Resolution::External);
        assert_eq!(resolve("./missing"), Resolution::Unresolved);
        assert_eq!(resolve("../../escape"), Resolution::Unresolved);
        assert_eq!(
            resolve("./a?raw"),
            Resolution::Files(vec!["src/a.ts".into()])
        );
        assert_eq!(
            resolve("/src/a"),
            Resolution::Files(vec!["src/a.ts".into()])
        );
    }
}
