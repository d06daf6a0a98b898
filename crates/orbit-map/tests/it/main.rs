//! orbit-map's integration tests: the layout's promises, the saved form,
//! the model's deltas and the snapshot's bytes.
#![allow(
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::float_cmp,
    reason = "grid coordinates stay within 2^20: exact in i32, f32 and usize, compared exactly"
)]

mod layout;
mod model;
