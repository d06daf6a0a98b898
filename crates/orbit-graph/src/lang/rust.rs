//! Rust imports: `mod name;` (with `#[path]`), `use` trees and `extern crate`,
//! resolved through the crates the workspace's `Cargo.toml` files declare.
//!
//! Resolution follows the module tree lexically, the way rustc maps modules
//! to files: a crate root or `mod.rs` owns its folder, `foo.rs` owns
//! `foo/`; `mod x;` is `x.rs` or `x/mod.rs` there. A `use` path walks those
//! files segment by segment and the deepest file found wins (the rest of the
//! path names items inside it). Deliberate simplifications: a `#[path]`
//! module's children and inline `mod x { … }` blocks are not modelled (a
//! `use` inside one resolves as if written at file level), and a first
//! segment that names an item rather than a module (`use Enum::Variant`)
//! counts as an external crate.

mod extract;

use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;
use std::path::Path;

use orbit_common::{join_relative, join_slash as join, parent_of};
use orbit_types::EdgeKind;

use crate::import::{RawImport, Resolution};
use crate::index::FileIndex;
use crate::lang::ResolveCtx;

pub(crate) use extract::extract;

/// The manifest every crate has.
const MANIFEST: &str = "Cargo.toml";

/// Crate roots relative to the crate folder that are not under a variable
/// name (`src/bin/*.rs`, `tests/*.rs`, … are matched in [`is_crate_root`]).
const FIXED_ROOTS: &[&str] = &["src/lib.rs", "src/main.rs", "build.rs"];

/// Folders whose direct `*.rs` files, and `*/main.rs` files, are crate roots.
const TARGET_FOLDERS: &[&str] = &["src/bin", "tests", "examples", "benches"];

/// One workspace crate (a `Cargo.toml` with a `[package]`).
#[derive(Debug)]
struct Crate {
    /// The folder of its `Cargo.toml` (`""` at the workspace root).
    folder: String,
    /// Its library root file, when that file is in the graph.
    lib_root: Option<String>,
}

/// The workspace's crates, by folder and by the names other crates use.
#[derive(Debug, Default)]
pub(crate) struct Config {
    crates: Vec<Crate>,
    /// Crate folder -> index in `crates`.
    by_folder: HashMap<String, usize>,
    /// Package name (`-` made `_`) and `[lib] name` -> index in `crates`.
    by_name: HashMap<String, usize>,
}

pub(crate) fn load_config(root: &Path, index: &FileIndex) -> Config {
    let mut config = Config::default();
    let mut manifests: Vec<&String> = index.files_named(MANIFEST).iter().collect();
    // Sorted, so that two crates claiming one name resolve the same way on
    // every build.
    manifests.sort();
    // Read and parsed in parallel (a registry has hundreds), used in order.
    let tables: Vec<Option<toml::Table>> = manifests
        .par_iter()
        .map(|manifest| {
            let text = crate::lang::read_config(root, manifest)?;
            match toml::from_str(&text) {
                Ok(table) => Some(table),
                Err(error) => {
                    tracing::warn!(path = %manifest, %error, "cannot parse Cargo.toml");
                    None
                }
            }
        })
        .collect();
    for (manifest, table) in manifests.into_iter().zip(tables) {
        let Some(table) = table else {
            continue;
        };
        let Some(package) = table.get("package").and_then(toml::Value::as_table) else {
            continue;
        };
        let folder = parent_of(manifest).to_owned();
        let lib = table.get("lib").and_then(toml::Value::as_table);
        let lib_path = lib
            .and_then(|lib| lib.get("path"))
            .and_then(toml::Value::as_str)
            .and_then(|path| join_relative(&folder, path))
            .or_else(|| join_relative(&folder, "src/lib.rs"))
            .filter(|path| index.contains(path));
        let position = config.crates.len();
        config.crates.push(Crate {
            folder: folder.clone(),
            lib_root: lib_path,
        });
        config.by_folder.insert(folder, position);
        let names = [
            package.get("name").and_then(toml::Value::as_str),
            lib.and_then(|lib| lib.get("name"))
                .and_then(toml::Value::as_str),
        ];
        for name in names.into_iter().flatten() {
            config
                .by_name
                .entry(name.replace('-', "_"))
                .or_insert(position);
        }
    }
    config
}

pub(crate) fn is_config(name: &str) -> bool {
    name == MANIFEST
}

pub(crate) fn resolve(ctx: &ResolveCtx<'_>, from: &str, import: &RawImport) -> Resolution {
    let resolver = Resolver {
        index: ctx.index,
        config: &ctx.config.rust,
    };
    match import.kind {
        EdgeKind::Mod => resolver.module_declaration(from, import),
        _ => resolver.use_path(from, &import.specifier),
    }
}

/// A module: the file that defines it and the folder its `mod x;` children
/// live in.
#[derive(Debug, Clone)]
struct Module {
    file: Option<String>,
    folder: String,
}

struct Resolver<'a> {
    index: &'a FileIndex,
    config: &'a Config,
}

impl Resolver<'_> {
    fn files(path: String) -> Resolution {
        Resolution::Files(vec![path])
    }

    /// `mod name;`, or `#[path = "…"] mod name;` (relative to the declaring
    /// file's folder, the Rust reference's rule for non-inline modules).
    fn module_declaration(&self, from: &str, import: &RawImport) -> Resolution {
        if let Some(path) = &import.detail {
            return join_relative(parent_of(from), path)
                .filter(|path| self.index.contains(path))
                .map_or(Resolution::Unresolved, Resolver::files);
        }
        let folder = self.module_of(from).folder;
        self.child(&folder, &import.specifier)
            .and_then(|child| child.file)
            .map_or(Resolution::Unresolved, Resolver::files)
    }

    fn use_path(&self, from: &str, specifier: &str) -> Resolution {
        let mut segments = specifier.split("::");
        let Some(first) = segments.next() else {
            return Resolution::Unresolved;
        };
        let rest: Vec<&str> = segments.collect();
        let start = match first {
            // `::name` is always an extern crate.
            "" => {
                return rest
                    .split_first()
                    .map_or(Resolution::Unresolved, |(name, rest)| {
                        self.in_crate(name, rest)
                    });
            }
            "crate" => match self.crate_root(from) {
                Some(root) => root,
                None => return Resolution::Unresolved,
            },
            "self" => self.module_of(from),
            "super" => {
                let mut module = self.parent(&self.module_of(from));
                let mut rest = rest.as_slice();
                while let Some((&"super", tail)) = rest.split_first() {
                    module = self.parent(&module);
                    rest = tail;
                }
                return self.walk_or_unresolved(module, rest);
            }
            name => {
                // 2018 uniform paths: a child module of the current module.
                let current = self.module_of(from);
                if let Some(child) = self.child(&current.folder, name) {
                    return self.walk_or_unresolved(child, &rest);
                }
                return self.in_crate(name, &rest);
            }
        };
        self.walk_or_unresolved(start, &rest)
    }

    /// A path whose first segment names a crate: a workspace crate's library,
    /// else an external crate (`std`, `serde`, …).
    fn in_crate(&self, name: &str, rest: &[&str]) -> Resolution {
        let name = name.strip_prefix("r#").unwrap_or(name);
        let Some(position) = self.config.by_name.get(name) else {
            return Resolution::External;
        };
        match &self.config.crates[*position].lib_root {
            Some(root) => {
                let folder = parent_of(root).to_owned();
                self.walk_or_unresolved(
                    Module {
                        file: Some(root.clone()),
                        folder,
                    },
                    rest,
                )
            }
            None => Resolution::Unresolved,
        }
    }

    /// Walks `segments` down from `module`; the deepest file found wins.
    fn walk_or_unresolved(&self, mut module: Module, segments: &[&str]) -> Resolution {
        for segment in segments {
            match self.child(&module.folder, segment) {
                Some(child) if child.file.is_some() => module = child,
                _ => break,
            }
        }
        module.file.map_or(Resolution::Unresolved, Resolver::files)
    }

    /// The child module `name` of the module whose folder is `folder`, when
    /// its file exists.
    fn child(&self, folder: &str, name: &str) -> Option<Module> {
        let name = name.strip_prefix("r#").unwrap_or(name);
        if name.is_empty() || matches!(name, "self" | "super" | "crate") {
            return None;
        }
        let child_folder = join(folder, name);
        // One buffer for both candidates, `x.rs` then `x/mod.rs`.
        let mut file = String::with_capacity(child_folder.len() + "/mod.rs".len());
        file.push_str(&child_folder);
        file.push_str(".rs");
        if !self.index.contains(&file) {
            file.truncate(child_folder.len());
            file.push_str("/mod.rs");
            if !self.index.contains(&file) {
                return None;
            }
        }
        Some(Module {
            file: Some(file),
            folder: child_folder,
        })
    }

    /// The module a file defines, with the folder of its children.
    fn module_of(&self, file: &str) -> Module {
        let folder = parent_of(file);
        let name = file.rsplit('/').next().unwrap_or(file);
        let owns_folder = name == "mod.rs" || self.is_crate_root(file);
        let folder = if owns_folder {
            folder.to_owned()
        } else {
            join(folder, name.strip_suffix(".rs").unwrap_or(name))
        };
        Module {
            file: Some(file.to_owned()),
            folder,
        }
    }

    /// The parent of a module: the module that owns its folder's parent.
    fn parent(&self, module: &Module) -> Module {
        let folder = parent_of(&module.folder).to_owned();
        let file = self.module_file_of_folder(&folder);
        Module { file, folder }
    }

    /// The file of the module whose children live in `folder`: a crate root
    /// in `folder`, `folder.rs` or `folder/mod.rs`.
    fn module_file_of_folder(&self, folder: &str) -> Option<String> {
        let lib_root = self
            .crate_of(&join(folder, "_"))
            .and_then(|krate| krate.lib_root.clone())
            .filter(|root| parent_of(root) == folder);
        let roots = ["lib.rs", "main.rs"]
            .into_iter()
            .map(|name| join(folder, name));
        if let Some(root) = lib_root
            .into_iter()
            .chain(roots)
            .find(|path| self.index.contains(path) && self.is_crate_root(path))
        {
            return Some(root);
        }
        let flat = format!("{folder}.rs");
        if !folder.is_empty() && self.index.contains(&flat) {
            return Some(flat);
        }
        let nested = join(folder, "mod.rs");
        self.index.contains(&nested).then_some(nested)
    }

    /// The crate folder of a file: the nearest folder above it with a
    /// workspace crate's `Cargo.toml`.
    fn crate_of(&self, file: &str) -> Option<&Crate> {
        let mut folder = parent_of(file);
        loop {
            if let Some(position) = self.config.by_folder.get(folder) {
                return self.config.crates.get(*position);
            }
            if folder.is_empty() {
                return None;
            }
            folder = parent_of(folder);
        }
    }

    /// Whether `file` is the root of a crate target (library, binary, test,
    /// example, bench or build script). Without a `Cargo.toml` above it, any
    /// `lib.rs` or `main.rs` is taken as a root.
    fn is_crate_root(&self, file: &str) -> bool {
        let Some(krate) = self.crate_of(file) else {
            return matches!(file.rsplit('/').next(), Some("lib.rs" | "main.rs"));
        };
        if krate.lib_root.as_deref() == Some(file) {
            return true;
        }
        let inside = if krate.folder.is_empty() {
            file
        } else {
            match file
                .strip_prefix(&krate.folder)
                .and_then(|rest| rest.strip_prefix('/'))
            {
                Some(inside) => inside,
                None => return false,
            }
        };
        if FIXED_ROOTS.contains(&inside) {
            return true;
        }
        TARGET_FOLDERS.iter().any(|target| {
            inside
                .strip_prefix(target)
                .and_then(|rest| rest.strip_prefix('/'))
                .is_some_and(|rest| match rest.split_once('/') {
                    None => rest
                        .rsplit_once('.')
                        .is_some_and(|(_, extension)| extension == "rs"),
                    Some((_, name)) => name == "main.rs",
                })
        })
    }

    /// The root module of the crate `from` belongs to, for `crate::` paths.
    /// A crate root is its own; a file under a `src/bin/x/`, `tests/x/`,
    /// `examples/x/` or `benches/x/` folder belongs to that folder's
    /// `main.rs`; any other file to the library root (else `src/main.rs`).
    /// Other files under `tests/` (`tests/common/mod.rs`, shared by several
    /// test crates) get that folder with no root file.
    fn crate_root(&self, from: &str) -> Option<Module> {
        if self.is_crate_root(from) {
            return Some(Module {
                file: Some(from.to_owned()),
                folder: parent_of(from).to_owned(),
            });
        }
        let Some(krate) = self.crate_of(from) else {
            // No manifest: the nearest folder above with a `lib.rs` or
            // `main.rs`.
            let mut folder = parent_of(from);
            loop {
                if let Some(file) = ["lib.rs", "main.rs"]
                    .into_iter()
                    .map(|name| join(folder, name))
                    .find(|path| self.index.contains(path))
                {
                    return Some(Module {
                        file: Some(file),
                        folder: folder.to_owned(),
                    });
                }
                if folder.is_empty() {
                    return None;
                }
                folder = parent_of(folder);
            }
        };
        let inside = if krate.folder.is_empty() {
            from
        } else {
            from.strip_prefix(&krate.folder)
                .and_then(|rest| rest.strip_prefix('/'))
                .unwrap_or(from)
        };
        for target in TARGET_FOLDERS {
            let Some(rest) = inside
                .strip_prefix(target)
                .and_then(|rest| rest.strip_prefix('/'))
            else {
                continue;
            };
            let target_folder = join(&krate.folder, target);
            if let Some((name, _)) = rest.split_once('/') {
                let main = join(&target_folder, &format!("{name}/main.rs"));
                if self.index.contains(&main) {
                    return Some(Module {
                        file: Some(main),
                        folder: join(&target_folder, name),
                    });
                }
            }
            if *target != "src/bin" {
                return Some(Module {
                    file: None,
                    folder: target_folder,
                });
            }
        }
        let main = join(&krate.folder, "src/main.rs");
        let root = krate
            .lib_root
            .clone()
            .or_else(|| self.index.contains(&main).then_some(main))?;
        let folder = parent_of(&root).to_owned();
        Some(Module {
            file: Some(root),
            folder,
        })
    }
}
