//! Which tools the mux routes how, from the catalog's scopes.

use orbit_tools::Scope;

/// The scope of a canonical tool (`None`: not in the catalog).
pub(crate) fn scope_of(tool: &str) -> Option<Scope> {
    orbit_tools::catalog()
        .into_iter()
        .find(|spec| spec.name == tool)
        .map(|spec| spec.scope)
}
