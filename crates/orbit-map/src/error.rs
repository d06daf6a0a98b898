//! Why a saved layout or a map snapshot was refused.

/// A saved layout (`<state>/maps/<id>.layout`) or a map snapshot that could
/// not be read: every field is checked, nothing is trusted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Not this format at all.
    #[error("not an Orbit {what} (wrong magic)")]
    Magic {
        /// `layout` or `map snapshot`.
        what: &'static str,
    },
    /// A version this Orbit does not read.
    #[error("unsupported {what} version {version}")]
    Version {
        /// `layout` or `map snapshot`.
        what: &'static str,
        /// The version found.
        version: u32,
    },
    /// The checksum does not match (a damaged file).
    #[error("the layout's checksum does not match")]
    Checksum,
    /// The bytes end inside a field or a section.
    #[error("truncated at byte {offset}: `{field}` needs {needed} more bytes")]
    Truncated {
        /// The field being read.
        field: &'static str,
        /// Where it starts.
        offset: usize,
        /// How many bytes it needs.
        needed: usize,
    },
    /// A field's value is not allowed.
    #[error("invalid `{field}`: {reason}")]
    Invalid {
        /// The field.
        field: &'static str,
        /// Why.
        reason: String,
    },
}

/// This crate's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

pub(crate) fn invalid(field: &'static str, reason: impl Into<String>) -> Error {
    Error::Invalid {
        field,
        reason: reason.into(),
    }
}
