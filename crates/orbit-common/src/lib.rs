//! Small helpers shared by every Orbit crate: lexical path normalisation,
//! `/`-separated workspace-relative paths, where Orbit keeps things
//! ([`Locations`]), the user's [`Settings`], Orbit's own private files,
//! the one rule for sign-in addresses ([`check_signin_url`]), the one
//! injectable [`Clock`], the benchmark's latency trace ([`latency_note`],
//! off unless installed), and one copy of each text rule: bidi characters
//! ([`is_bidi`]), ANSI escapes ([`strip_ansi`]), cutting ([`keep_tail`],
//! [`keep_head`]), percent-decoding ([`percent_decode_strict`],
//! [`percent_decode_lossy`]) and comparing secrets ([`constant_time_eq`]).
//!
//! It depends on no other Orbit crate. Its only I/O is Orbit's own small
//! files (settings, private files written 0600 in 0700 directories). Main
//! items: [`normalize_lexically`], [`relative_slash_path`], [`join_relative`],
//! [`Locations`], [`Settings`], [`write_private_file`], [`check_signin_url`].
#![warn(missing_docs)]

mod cache_dir;
mod clock;
mod latency_trace;
mod locations;
mod paths;
mod private_fs;
mod settings;
mod signin;
mod text;

pub use cache_dir::{CACHE_DIR_ENV, default_cache_dir};
pub use clock::{Clock, ManualClock, SystemClock};
pub use latency_trace::{
    LATENCY_TEXT_BYTES, LatencyStage, LatencyTrace, epoch_ms, install_latency_trace,
    install_latency_trace_to, latency_note, latency_trace_on,
};
pub use locations::{CONFIG_DIR_ENV, Locations, workspace_id};
pub use paths::{join_relative, join_slash, normalize_lexically, parent_of, relative_slash_path};
pub use private_fs::{
    ensure_private_dir, write_private_file, write_private_file_in_existing_dir,
    write_private_file_unsynced,
};
pub use settings::{DEFAULT_AGENTS_SCAN_SECONDS, Settings, SettingsError};
pub use signin::{BadSignInUrl, MAX_SIGNIN_URL, SignInUrl, check_signin_url};
pub use text::{
    PercentError, constant_time_eq, count, is_bidi, keep_head, keep_tail, percent_decode_lossy,
    percent_decode_strict, percent_encode_segment, strip_ansi,
};
