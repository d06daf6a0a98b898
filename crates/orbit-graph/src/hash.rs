//! The graph hash: a digest of the graph's structure (node paths and
//! languages; edges' ends and kinds) that is independent of the order things
//! were found in, of sizes, times and line numbers, and cheap to keep current
//! under live updates.
//!
//! Each node and edge maps to a 128-bit digest (BLAKE3); the state keeps the
//! wrapping sum of the node digests and of the edge digests, and their
//! counts. Sums are order-independent and admit removal, so a one-file update
//! costs only the digests of what it touched; a multiset sum (not XOR) keeps
//! two equal edges from cancelling out.

use std::fmt;

use orbit_types::{EdgeKind, Language};

/// The hash of a graph's structure, shown as 32 hex digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GraphHash([u8; 16]);

impl fmt::Display for GraphHash {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        for byte in self.0 {
            write!(formatter, "{byte:02x}")?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct HashState {
    node_sum: u128,
    edge_sum: u128,
    node_count: u64,
    edge_count: u64,
}

impl HashState {
    pub(crate) fn add_node(&mut self, path: &str, language: Language) {
        self.node_sum = self.node_sum.wrapping_add(node_digest(path, language));
        self.node_count += 1;
    }

    pub(crate) fn remove_node(&mut self, path: &str, language: Language) {
        self.node_sum = self.node_sum.wrapping_sub(node_digest(path, language));
        self.node_count -= 1;
    }

    pub(crate) fn add_edge(&mut self, from: &str, to: &str, kind: EdgeKind) {
        self.edge_sum = self.edge_sum.wrapping_add(edge_digest(from, to, kind));
        self.edge_count += 1;
    }

    pub(crate) fn remove_edge(&mut self, from: &str, to: &str, kind: EdgeKind) {
        self.edge_sum = self.edge_sum.wrapping_sub(edge_digest(from, to, kind));
        self.edge_count -= 1;
    }

    /// The state as numbers, to store in a warm snapshot.
    pub(crate) fn parts(&self) -> (u128, u128, u64, u64) {
        (
            self.node_sum,
            self.edge_sum,
            self.node_count,
            self.edge_count,
        )
    }

    /// The state [`HashState::parts`] gave.
    pub(crate) fn from_parts(parts: (u128, u128, u64, u64)) -> HashState {
        let (node_sum, edge_sum, node_count, edge_count) = parts;
        HashState {
            node_sum,
            edge_sum,
            node_count,
            edge_count,
        }
    }

    /// The part that depends on nodes only: which paths, in which languages.
    pub(crate) fn node_part(&self) -> (u128, u64) {
        (self.node_sum, self.node_count)
    }

    pub(crate) fn finish(&self) -> GraphHash {
        let mut hasher = blake3::Hasher::new();
        hasher.update(b"orbit-graph-hash/1");
        hasher.update(&self.node_sum.to_le_bytes());
        hasher.update(&self.edge_sum.to_le_bytes());
        hasher.update(&self.node_count.to_le_bytes());
        hasher.update(&self.edge_count.to_le_bytes());
        let mut out = [0; 16];
        out.copy_from_slice(&hasher.finalize().as_bytes()[..16]);
        GraphHash(out)
    }
}

pub(crate) fn digest(parts: &[&[u8]]) -> u128 {
    let mut hasher = blake3::Hasher::new();
    for part in parts {
        hasher.update(&(part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    let mut out = [0; 16];
    out.copy_from_slice(&hasher.finalize().as_bytes()[..16]);
    u128::from_le_bytes(out)
}

fn node_digest(path: &str, language: Language) -> u128 {
    digest(&[b"node", path.as_bytes(), language.as_str().as_bytes()])
}

fn edge_digest(from: &str, to: &str, kind: EdgeKind) -> u128 {
    digest(&[
        b"edge",
        from.as_bytes(),
        to.as_bytes(),
        kind.as_str().as_bytes(),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removal_restores() {
        let mut state = HashState::default();
        state.add_node("a.ts", Language::TypeScript);
        let before = state.finish();
        state.add_edge("a.ts", "b.ts", EdgeKind::Import);
        state.add_edge("a.ts", "b.ts", EdgeKind::Import);
        state.remove_edge("a.ts", "b.ts", EdgeKind::Import);
        assert_ne!(
            state.finish(),
            before,
            "a duplicate edge must not cancel out"
        );
        state.remove_edge("a.ts", "b.ts", EdgeKind::Import);
        assert_eq!(state.finish(), before);
    }

    #[test]
    fn fields_are_delimited() {
        let mut first = HashState::default();
        first.add_edge("ab", "c", EdgeKind::Import);
        let mut second = HashState::default();
        second.add_edge("a", "bc", EdgeKind::Import);
        assert_ne!(first.finish(), second.finish());
    }
}
