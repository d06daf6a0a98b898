//! orbit-registry's integration tests: remembering, naming, descriptors.
#![allow(clippy::unwrap_used, reason = "tests")]

use std::path::Path;

use orbit_common::Locations;
use orbit_registry::{Registry, selector_safe};

#[test]
fn remembers_once_with_unique_names_and_private_file() {
    let dir = tempfile::tempdir().unwrap();
    let registry = Registry::new(&Locations::with_config_dir(dir.path().join("cfg")));
    assert!(registry.entries().unwrap().is_empty());
    let a = registry.remember(Path::new("/src/app")).unwrap();
    let b = registry.remember(Path::new("/other/app")).unwrap();
    let again = registry.remember(Path::new("/src/./app")).unwrap();
    assert_eq!(a.name, "app");
    assert_eq!(b.name, "app-2");
    assert_eq!(again, a);
    assert_eq!(registry.entries().unwrap().len(), 2);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(registry.file())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

#[test]
fn current_workspace_comes_first_even_unremembered() {
    let dir = tempfile::tempdir().unwrap();
    let registry = Registry::new(&Locations::with_config_dir(dir.path().to_owned()));
    registry.remember(Path::new("/w/alpha")).unwrap();
    let list = registry.descriptors(Some(Path::new("/w/beta"))).unwrap();
    assert_eq!(list.len(), 2);
    assert!(list[0].current);
    assert_eq!(list[0].selector, "beta");
    let list = registry.descriptors(Some(Path::new("/w/alpha"))).unwrap();
    assert_eq!(list.len(), 1);
    assert!(list[0].current);
}

#[test]
fn broken_file_is_an_error_not_an_empty_list() {
    let dir = tempfile::tempdir().unwrap();
    let registry = Registry::new(&Locations::with_config_dir(dir.path().to_owned()));
    fs_err::write(registry.file(), "{nope").unwrap();
    let error = registry.entries().unwrap_err().to_string();
    assert!(error.contains("workspaces.json"), "{error}");
}

#[test]
fn selectors_have_no_host_separator() {
    assert_eq!(selector_safe("a:b/c d"), "a_b_c_d");
    assert_eq!(selector_safe(""), "workspace");
    assert_eq!(selector_safe(".."), "workspace");
}

#[test]
fn a_known_workspace_takes_no_lock_and_writes_nothing() {
    use std::sync::mpsc;
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let registry = Registry::new(&Locations::with_config_dir(dir.path().join("cfg")));
    let entry = registry.remember(Path::new("/src/app")).unwrap();
    let before = std::fs::metadata(registry.file())
        .unwrap()
        .modified()
        .unwrap();
    // Another Orbit holds the writer lock for as long as the test wants.
    let mut lock_path = registry.file().as_os_str().to_owned();
    lock_path.push(".lock");
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .open(std::path::PathBuf::from(lock_path))
        .unwrap();
    lock.lock().unwrap();
    let (done, finished) = mpsc::channel();
    {
        let registry = registry.clone();
        std::thread::spawn(move || {
            let _ = done.send(registry.remember(Path::new("/src/./app")).unwrap());
        });
    }
    let again = finished.recv_timeout(Duration::from_secs(5));
    drop(lock);
    assert_eq!(
        again,
        Ok(entry),
        "remembering a known workspace waited for the lock"
    );
    let after = std::fs::metadata(registry.file())
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after, "the registry was rewritten");
}
