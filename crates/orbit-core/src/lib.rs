//! orbit-core
