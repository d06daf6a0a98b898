//! The processes a test started and may have outlived it, found by a
//! variable of their environment (`HOME=<the test's folder>`, `TMPDIR=...`)
//! in `/proc`. Shared by the crates' tests that include it (`#[path]`).

/// Kills every process with `var` (`NAME=value`) in its environment, and
/// waits (up to 10 s) until none is left.
pub(crate) fn end_processes_with(var: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let pids = processes_with(var);
        if pids.is_empty() || std::time::Instant::now() > deadline {
            return;
        }
        for pid in pids {
            if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The processes (other than this one) with `var` in their environment; a
/// zombie's environment cannot be read, so it is not one.
pub(crate) fn processes_with(var: &str) -> Vec<i32> {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_string_lossy().parse::<u32>().ok())
        .filter(|pid| *pid != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|environ| environ.split(|b| *b == 0).any(|e| e == var.as_bytes()))
        })
        .filter_map(|pid| i32::try_from(pid).ok())
        .collect()
}
