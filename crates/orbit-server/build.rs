//! Fails the build with one line when the page's build (`web/dist`) is
//! missing: the assets are embedded in the binary.

use std::path::Path;

fn main() {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default();
    let dist = Path::new(&manifest).join("../../web/dist");
    println!("cargo::rerun-if-changed={}", dist.display());
    if !dist.join("index.html").is_file() {
        println!(
            "cargo::error=web/dist is missing: run `npm --prefix web ci && npm --prefix web run build` (or ./scripts/run)"
        );
    }
}
