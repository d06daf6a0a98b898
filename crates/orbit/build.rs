//! Links the `orbit` binary as a position-dependent executable on Linux
//! (`-no-pie`): `orbit hook EVENT` runs on every tool call of Claude Code,
//! and a PIE of this size spends most of its start-up applying ~38,000
//! relative relocations (writing ~170 pages of `.data.rel.ro` and `.got`
//! before `main`). Without them `orbit hook` takes ~0.8 ms of CPU instead
//! of ~1.2 ms and 115 page faults instead of 285 (bench/README.md, "Claude
//! Code hooks"). The cost: the binary's own code and data load at a fixed
//! address (the shared libraries, stack, heap and mappings stay
//! randomised). Only the link changes: every crate is still compiled as
//! position-independent code, so nothing else is rebuilt.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu" {
        println!("cargo::rustc-link-arg-bins=-no-pie");
    }
}
