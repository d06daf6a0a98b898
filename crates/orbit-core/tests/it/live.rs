//! `LiveGraph`: an update's walk does not keep readers waiting, and its
//! parse results reach the cache.

use std::sync::mpsc;
use std::time::Duration;

use orbit_core::live::LiveGraph;
use orbit_graph::{Graph, GraphOptions};

use crate::mcp_host::write;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_is_not_kept_waiting_while_an_update_walks() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("app");
    write(
        &work,
        &[
            ("src/a.ts", "import { b } from './b';\n"),
            ("src/b.ts", "export const b = 1;\n"),
        ],
    );
    let options = GraphOptions {
        cache_dir: Some(dir.path().join("cache")),
        ..GraphOptions::default()
    };
    let graph = Graph::build(&work, options).unwrap();
    let (live, mut updates) = LiveGraph::start(graph, Duration::from_millis(30)).unwrap();
    let live = std::sync::Arc::new(live);
    // The update waits at its start until the test lets it walk.
    let (entered, update_began) = mpsc::channel::<()>();
    let (go, wait_for_go) = mpsc::channel::<()>();
    let wait_for_go = std::sync::Mutex::new(wait_for_go);
    live.set_update_hook(move || {
        let _ = entered.send(());
        let _ = wait_for_go
            .lock()
            .unwrap()
            .recv_timeout(Duration::from_secs(10));
    });
    write(&work, &[("src/c.ts", "import { a } from './a';\n")]);
    let began =
        tokio::task::spawn_blocking(move || update_began.recv_timeout(Duration::from_secs(10)))
            .await
            .unwrap();
    assert_eq!(began, Ok(()), "no update began");
    // A reader, while the update is under way.
    let reader = {
        let live = std::sync::Arc::clone(&live);
        tokio::task::spawn_blocking(move || live.read().node_count())
    };
    let read = tokio::time::timeout(Duration::from_secs(2), reader).await;
    go.send(()).unwrap();
    assert_eq!(
        read.expect("the reader waited for the update").unwrap(),
        2,
        "the graph before the update"
    );
    let update = tokio::time::timeout(Duration::from_secs(10), updates.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(update.delta.nodes_added.len(), 1);
    assert_eq!(live.read().node_count(), 3);
}
