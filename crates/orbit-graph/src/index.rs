//! The file index resolution asks: which files exist, what each folder holds,
//! files by name, and Java/Kotlin files by package.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use orbit_common::parent_of;

/// Every file of the graph, indexed the ways resolvers look them up. Paths are
/// relative to the workspace root and `/`-separated; the root folder is `""`.
#[derive(Debug, Default)]
pub(crate) struct FileIndex {
    files: HashSet<String>,
    /// Folder -> the files directly in it.
    folder_files: HashMap<String, Vec<String>>,
    /// Folder -> how many files are under it, at any depth.
    folder_depth_count: HashMap<String, usize>,
    /// File name -> paths.
    by_name: HashMap<String, Vec<String>>,
    /// Java/Kotlin package -> files that declare it.
    packages: HashMap<String, Vec<String>>,
    /// File -> the package it declares.
    package_of: HashMap<String, String>,
    /// Every dotted prefix of a declared package (`a`, `a.b` for `a.b`) ->
    /// how many files declare a package under it.
    package_prefixes: HashMap<String, usize>,
}

impl FileIndex {
    pub(crate) fn insert(&mut self, path: &str, package: Option<&str>) {
        if !self.files.insert(path.to_owned()) {
            self.remove(path);
            self.files.insert(path.to_owned());
        }
        let folder = parent_of(path);
        push_to(&mut self.folder_files, folder, path);
        let mut ancestor = Some(folder);
        while let Some(current) = ancestor {
            // Look up before allocating a key: most folders are known.
            if let Some(count) = self.folder_depth_count.get_mut(current) {
                *count += 1;
            } else {
                self.folder_depth_count.insert(current.to_owned(), 1);
            }
            ancestor = if current.is_empty() {
                None
            } else {
                Some(parent_of(current))
            };
        }
        let name = path.rsplit('/').next().unwrap_or(path);
        push_to(&mut self.by_name, name, path);
        if let Some(package) = package {
            self.packages
                .entry(package.to_owned())
                .or_default()
                .push(path.to_owned());
            self.package_of.insert(path.to_owned(), package.to_owned());
            for prefix in package_prefixes(package) {
                *self.package_prefixes.entry(prefix.to_owned()).or_default() += 1;
            }
        }
    }

    pub(crate) fn remove(&mut self, path: &str) {
        if !self.files.remove(path) {
            return;
        }
        let folder = parent_of(path);
        remove_from(&mut self.folder_files, folder, path);
        let mut ancestor = Some(folder);
        while let Some(current) = ancestor {
            if let Some(count) = self.folder_depth_count.get_mut(current) {
                *count -= 1;
                if *count == 0 {
                    self.folder_depth_count.remove(current);
                }
            }
            ancestor = if current.is_empty() {
                None
            } else {
                Some(parent_of(current))
            };
        }
        let name = path.rsplit('/').next().unwrap_or(path);
        remove_from(&mut self.by_name, name, path);
        if let Some(package) = self.package_of.remove(path) {
            remove_from(&mut self.packages, &package, path);
            for prefix in package_prefixes(&package) {
                if let Some(count) = self.package_prefixes.get_mut(prefix) {
                    *count -= 1;
                    if *count == 0 {
                        self.package_prefixes.remove(prefix);
                    }
                }
            }
        }
    }

    /// Whether `path` is a file of the graph.
    pub(crate) fn contains(&self, path: &str) -> bool {
        self.files.contains(path)
    }

    /// Whether `folder` holds any file of the graph, at any depth.
    pub(crate) fn folder_exists(&self, folder: &str) -> bool {
        self.folder_depth_count.contains_key(folder)
    }

    /// The files directly in `folder`.
    pub(crate) fn files_in(&self, folder: &str) -> &[String] {
        self.folder_files.get(folder).map_or(&[], Vec::as_slice)
    }

    /// Every file called `name`, anywhere.
    pub(crate) fn files_named(&self, name: &str) -> &[String] {
        self.by_name.get(name).map_or(&[], Vec::as_slice)
    }

    /// The files that declare the Java/Kotlin `package`.
    pub(crate) fn package_files(&self, package: &str) -> &[String] {
        self.packages.get(package).map_or(&[], Vec::as_slice)
    }

    /// Whether some file declares `prefix` or a package under it (`a.b` for
    /// `a.b.c`).
    pub(crate) fn has_package_prefix(&self, prefix: &str) -> bool {
        self.package_prefixes.contains_key(prefix)
    }

    /// Every file, in no particular order.
    pub(crate) fn files(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(String::as_str)
    }
}

/// `a`, `a.b`, `a.b.c` for `a.b.c` (nothing for the default package).
fn package_prefixes(package: &str) -> impl Iterator<Item = &str> {
    package
        .match_indices('.')
        .map(|(index, _)| &package[..index])
        .chain((!package.is_empty()).then_some(package))
}

fn push_to(map: &mut HashMap<String, Vec<String>>, key: &str, path: &str) {
    if let Some(list) = map.get_mut(key) {
        list.push(path.to_owned());
    } else {
        map.insert(key.to_owned(), vec![path.to_owned()]);
    }
}

fn remove_from(map: &mut HashMap<String, Vec<String>>, key: &str, path: &str) {
    if let Some(list) = map.get_mut(key) {
        list.retain(|entry| entry != path);
        if list.is_empty() {
            map.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_and_remove() {
        let mut index = FileIndex::default();
        index.insert("src/a/b.java", Some("a"));
        index.insert("src/c.ts", None);
        assert!(index.contains("src/c.ts"));
        assert!(index.folder_exists("src/a"));
        assert!(index.folder_exists("src"));
        assert!(index.folder_exists(""));
        assert_eq!(index.package_files("a"), ["src/a/b.java"]);
        index.insert("src/x/y/Z.java", Some("x.y"));
        assert!(index.has_package_prefix("x") && index.has_package_prefix("x.y"));
        assert!(!index.has_package_prefix("x.y.z"));
        index.remove("src/x/y/Z.java");
        assert!(!index.has_package_prefix("x"));
        assert_eq!(index.files_named("c.ts"), ["src/c.ts"]);
        index.remove("src/a/b.java");
        assert!(!index.folder_exists("src/a"));
        assert!(index.folder_exists("src"));
        assert!(index.package_files("a").is_empty());
        assert_eq!(index.files_in("src"), ["src/c.ts"]);
    }
}
