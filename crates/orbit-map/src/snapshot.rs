//! The map's binary snapshot (`GET /w/<id>/map`, `docs/page-protocol.md`,
//! "The map"): little-endian, each section at a 4-byte aligned offset.
//!
//! ```text
//! header (32 bytes): "ORBM", version 1, N nodes, E edges, F folders,
//!                    S string bytes, H hash bytes, 0
//! hash u8[H] · positions f32[2N] · language u8[N] · nodeFolder u32[N]
//! nodeName u32[N] (end offsets) · edges u32[2E] · edgeCount u32[E]
//! folderRect f32[4F] · folderParent u32[F] · folderName u32[F] (end offsets,
//! continuing after the node paths) · strings u8[S]
//! ```
#![allow(
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    reason = "grid coordinates and counts stay within MAX_SIDE (2^20): exact in i32, f32 and usize"
)]

use orbit_types::Language;

use crate::bytes::Reader;
use crate::error::{Error, Result, invalid};

/// The snapshot's magic.
pub(crate) const MAGIC: [u8; 4] = *b"ORBM";
/// The snapshot's format version.
pub(crate) const VERSION: u32 = 1;
/// The header's size.
pub(crate) const HEADER: usize = 32;
/// A root folder's parent.
pub const NO_PARENT: u32 = u32::MAX;

/// A node of a snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotNode {
    /// Its path.
    pub path: String,
    /// Its cell's centre.
    pub x: f32,
    /// Its cell's centre.
    pub y: f32,
    /// Its language.
    pub language: Language,
    /// The index of its folder entry.
    pub folder: u32,
}

/// A folder entry of a snapshot: a folder's region or one of its annexes
/// (an annex repeats the folder's path and parent).
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotFolder {
    /// Its path (`""`: the root).
    pub path: String,
    /// `x, y, w, h`.
    pub rect: [f32; 4],
    /// The parent's entry, [`NO_PARENT`] for the root.
    pub parent: u32,
}

/// An import pair of a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotEdge {
    /// The importing node's index.
    pub from: u32,
    /// The imported node's index.
    pub to: u32,
    /// How many graph edges it stands for.
    pub count: u32,
}

/// A whole snapshot, decoded (or to encode).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Snapshot {
    /// The graph hash it was made at.
    pub hash: String,
    /// Sorted by path.
    pub nodes: Vec<SnapshotNode>,
    /// Distinct ordered pairs.
    pub edges: Vec<SnapshotEdge>,
    /// Folder 0 is the root.
    pub folders: Vec<SnapshotFolder>,
}

fn pad(bytes: &mut Vec<u8>) {
    while !bytes.len().is_multiple_of(4) {
        bytes.push(0);
    }
}

fn put_u32(bytes: &mut Vec<u8>, value: u32) {
    bytes.extend_from_slice(&value.to_le_bytes());
}

fn put_f32(bytes: &mut Vec<u8>, value: f32) {
    bytes.extend_from_slice(&value.to_le_bytes());
}

/// The index of `language` in [`Language::ALL`].
pub fn language_index(language: Language) -> u8 {
    Language::ALL
        .iter()
        .position(|l| *l == language)
        .unwrap_or(Language::ALL.len() - 1) as u8
}

impl Snapshot {
    /// Encodes it (the caller keeps the counts within `u32`).
    pub fn encode(&self) -> Vec<u8> {
        let strings: usize = self.nodes.iter().map(|n| n.path.len()).sum::<usize>()
            + self.folders.iter().map(|f| f.path.len()).sum::<usize>();
        let n = self.nodes.len();
        let mut bytes = Vec::with_capacity(
            HEADER
                + self.hash.len()
                + n * 21
                + self.edges.len() * 12
                + self.folders.len() * 24
                + strings
                + 16,
        );
        bytes.extend_from_slice(&MAGIC);
        put_u32(&mut bytes, VERSION);
        put_u32(&mut bytes, n as u32);
        put_u32(&mut bytes, self.edges.len() as u32);
        put_u32(&mut bytes, self.folders.len() as u32);
        put_u32(&mut bytes, strings as u32);
        put_u32(&mut bytes, self.hash.len() as u32);
        put_u32(&mut bytes, 0);
        bytes.extend_from_slice(self.hash.as_bytes());
        pad(&mut bytes);
        for node in &self.nodes {
            put_f32(&mut bytes, node.x);
            put_f32(&mut bytes, node.y);
        }
        for node in &self.nodes {
            bytes.push(language_index(node.language));
        }
        pad(&mut bytes);
        for node in &self.nodes {
            put_u32(&mut bytes, node.folder);
        }
        let mut end = 0u32;
        for node in &self.nodes {
            end += node.path.len() as u32;
            put_u32(&mut bytes, end);
        }
        for edge in &self.edges {
            put_u32(&mut bytes, edge.from);
            put_u32(&mut bytes, edge.to);
        }
        for edge in &self.edges {
            put_u32(&mut bytes, edge.count);
        }
        for folder in &self.folders {
            for value in folder.rect {
                put_f32(&mut bytes, value);
            }
        }
        for folder in &self.folders {
            put_u32(&mut bytes, folder.parent);
        }
        for folder in &self.folders {
            end += folder.path.len() as u32;
            put_u32(&mut bytes, end);
        }
        for node in &self.nodes {
            bytes.extend_from_slice(node.path.as_bytes());
        }
        for folder in &self.folders {
            bytes.extend_from_slice(folder.path.as_bytes());
        }
        bytes
    }

    /// Decodes a snapshot, checking every count, offset, index and float
    /// (the page's decoder makes the same checks).
    #[expect(
        clippy::too_many_lines,
        reason = "one check after another, in section order"
    )]
    pub fn decode(bytes: &[u8]) -> Result<Self> {
        let mut reader = Reader::new(bytes, 0);
        if reader.take("magic", 4)? != MAGIC {
            return Err(Error::Magic {
                what: "map snapshot",
            });
        }
        let version = reader.u32("version")?;
        if version != VERSION {
            return Err(Error::Version {
                what: "map snapshot",
                version,
            });
        }
        let nodes_len = reader.u32("node count")? as usize;
        let edges_len = reader.u32("edge count")? as usize;
        let folders_len = reader.u32("folder count")? as usize;
        let strings_len = reader.u32("string bytes")? as usize;
        let hash_len = reader.u32("hash length")? as usize;
        let _reserved = reader.u32("reserved")?;
        if folders_len == 0 {
            return Err(invalid("folder count", "at least the root"));
        }
        let hash = std::str::from_utf8(reader.take("hash", hash_len)?)
            .map_err(|_| invalid("hash", "not UTF-8"))?
            .to_owned();
        reader.align();
        let positions = reader.f32s("positions", nodes_len.checked_mul(2))?;
        let languages = reader.take("language", nodes_len)?.to_vec();
        reader.align();
        let node_folder = reader.u32s("nodeFolder", Some(nodes_len))?;
        let node_name = reader.u32s("nodeName", Some(nodes_len))?;
        let edges = reader.u32s("edges", edges_len.checked_mul(2))?;
        let edge_count = reader.u32s("edgeCount", Some(edges_len))?;
        let folder_rect = reader.f32s("folderRect", folders_len.checked_mul(4))?;
        let folder_parent = reader.u32s("folderParent", Some(folders_len))?;
        let folder_name = reader.u32s("folderName", Some(folders_len))?;
        let strings = reader.take("strings", strings_len)?;
        let mut previous = 0usize;
        let mut slice = |end: u32, field: &'static str| -> Result<String> {
            let end = end as usize;
            if end < previous || end > strings_len {
                return Err(invalid(field, "offsets decrease or pass the string area"));
            }
            let text = std::str::from_utf8(&strings[previous..end])
                .map_err(|_| invalid(field, "not UTF-8"))?
                .to_owned();
            previous = end;
            Ok(text)
        };
        let mut nodes = Vec::with_capacity(nodes_len);
        for i in 0..nodes_len {
            let (x, y) = (positions[2 * i], positions[2 * i + 1]);
            if !x.is_finite() || !y.is_finite() {
                return Err(invalid("positions", "not finite"));
            }
            let language = *Language::ALL
                .get(usize::from(languages[i]))
                .ok_or_else(|| invalid("language", "no such language"))?;
            if node_folder[i] as usize >= folders_len {
                return Err(invalid("nodeFolder", "no such folder"));
            }
            nodes.push(SnapshotNode {
                path: slice(node_name[i], "nodeName")?,
                x,
                y,
                language,
                folder: node_folder[i],
            });
        }
        let mut folders = Vec::with_capacity(folders_len);
        for i in 0..folders_len {
            let rect = [
                folder_rect[4 * i],
                folder_rect[4 * i + 1],
                folder_rect[4 * i + 2],
                folder_rect[4 * i + 3],
            ];
            if rect.iter().any(|v| !v.is_finite()) {
                return Err(invalid("folderRect", "not finite"));
            }
            let parent = folder_parent[i];
            if parent != NO_PARENT && parent as usize >= folders_len {
                return Err(invalid("folderParent", "no such folder"));
            }
            folders.push(SnapshotFolder {
                path: slice(folder_name[i], "folderName")?,
                rect,
                parent,
            });
        }
        let mut pairs = Vec::with_capacity(edges_len);
        for i in 0..edges_len {
            let (from, to) = (edges[2 * i], edges[2 * i + 1]);
            if from as usize >= nodes_len || to as usize >= nodes_len {
                return Err(invalid("edges", "no such node"));
            }
            pairs.push(SnapshotEdge {
                from,
                to,
                count: edge_count[i],
            });
        }
        Ok(Self {
            hash,
            nodes,
            edges: pairs,
            folders,
        })
    }
}
