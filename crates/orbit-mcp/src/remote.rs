//! What a caller that has chosen one host sees: the server's identity,
//! canonical tool discovery, and the byte-transparent SSH proxy.

pub(crate) mod discovery;
pub(crate) mod identity;
pub(crate) mod ssh;
