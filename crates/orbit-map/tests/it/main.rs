//! orbit-map's integration tests: the layout's promises, the saved form,
//! the model's deltas and the snapshot's bytes.
#![allow(
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    reason = "grid coordinates and counts stay within MAX_SIDE (2^20): exact in i32, f32 and usize"
)]

mod layout;
