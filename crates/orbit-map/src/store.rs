//! The saved layout (`<state>/maps/<workspace id>.layout`): positions kept
//! by path, so the same workspace gives the same picture after a restart.
//!
//! ```text
//! "ORBL" · u32 version (1)
//! u32 folder count, then per folder (sorted by path, the root "" first):
//!     string path · i32 x, y, w, h (its region) · u32 host (the index of
//!     the folder whose region holds it; u32::MAX for the root) ·
//!     u32 block count, then per block: u32 host · i32 x, y, w, h
//! u32 file count, then per file (sorted by path):
//!     string path · u32 folder · u32 block (within the folder) · u32 cell
//! 32 bytes: BLAKE3 of everything before
//! ```
//!
//! Strings are a `u32` length and UTF-8. Integers are little-endian. The
//! decoder checks everything: order, ancestry of hosts, sizes, that each
//! file lies in its folder and each cell holds one file.
#![allow(
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    reason = "grid coordinates and counts stay within MAX_SIDE (2^20): exact in i32, f32 and usize"
)]

use orbit_common::parent_of;

use crate::bytes::Reader;
use crate::error::{Error, Result, invalid};
use crate::layout::{Layout, MAX_SIDE, Rect, SavedFolder, is_file_path};

/// The saved layout's magic.
pub(crate) const MAGIC: [u8; 4] = *b"ORBL";
/// The saved layout's format version.
pub(crate) const VERSION: u32 = 1;
const CHECKSUM: usize = 32;
/// The most cells all blocks together may have.
const MAX_CELLS: i64 = 1 << 24;

impl Layout {
    /// The saved form.
    pub fn encode(&self) -> Vec<u8> {
        let (folders, files) = self.to_parts();
        let mut out = Vec::with_capacity(64 + files.len() * 48 + folders.len() * 64);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        put_u32(&mut out, folders.len() as u32);
        for (path, host, region, blocks) in &folders {
            put_str(&mut out, path);
            put_rect(&mut out, *region);
            put_u32(&mut out, host.unwrap_or(u32::MAX));
            put_u32(&mut out, blocks.len() as u32);
            for (host, rect) in blocks {
                put_u32(&mut out, *host);
                put_rect(&mut out, *rect);
            }
        }
        put_u32(&mut out, files.len() as u32);
        for (path, folder, block, cell) in &files {
            put_str(&mut out, path);
            put_u32(&mut out, *folder);
            put_u32(&mut out, *block);
            put_u32(&mut out, *cell);
        }
        let checksum = blake3::hash(&out);
        out.extend_from_slice(checksum.as_bytes());
        out
    }

    /// Reads a saved layout, refusing anything that is not exactly one
    /// this crate wrote. Languages are unknown (`text`) until the caller
    /// reconciles it with the graph.
    #[expect(
        clippy::too_many_lines,
        reason = "one check after another, in file order"
    )]
    pub fn decode(bytes: &[u8]) -> Result<Self> {
        if bytes.len() < 8 || bytes[..4] != MAGIC {
            return Err(Error::Magic { what: "layout" });
        }
        let version = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
        if version != VERSION {
            return Err(Error::Version {
                what: "layout",
                version,
            });
        }
        if bytes.len() < 8 + CHECKSUM {
            return Err(Error::Truncated {
                field: "checksum",
                offset: bytes.len(),
                needed: 8 + CHECKSUM - bytes.len(),
            });
        }
        let (body, checksum) = bytes.split_at(bytes.len() - CHECKSUM);
        if blake3::hash(body).as_bytes() != checksum {
            return Err(Error::Checksum);
        }
        let mut reader = Reader::new(body, 8);
        let folder_count = reader.count("folder count", 24)?;
        if folder_count == 0 {
            return Err(invalid("folder count", "the root is missing"));
        }
        let mut folders: Vec<SavedFolder> = Vec::with_capacity(folder_count);
        let mut cells = 0i64;
        let mut index_of: std::collections::HashMap<String, u32> =
            std::collections::HashMap::with_capacity(folder_count);
        for index in 0..folder_count {
            let path = reader.string("folder path")?;
            let region = read_rect(&mut reader, "folder region")?;
            let host = reader.u32("folder host")?;
            if index == 0 {
                if !path.is_empty() || host != u32::MAX {
                    return Err(invalid("folder path", "the first folder is not the root"));
                }
            } else {
                if !is_file_path(&path) {
                    return Err(invalid("folder path", "not a workspace-relative path"));
                }
                if folders.last().is_some_and(|(last, ..)| *last >= path) {
                    return Err(invalid("folder path", "folders out of order"));
                }
                if !index_of.contains_key(parent_of(&path)) {
                    return Err(invalid("folder path", "its parent folder is missing"));
                }
                check_host(&folders, host, &path, "folder host")?;
            }
            let block_count = reader.count("block count", 20)?;
            let mut blocks = Vec::with_capacity(block_count);
            for _ in 0..block_count {
                let host = reader.u32("block host")?;
                if host != index as u32 {
                    check_host(&folders, host, &path, "block host")?;
                }
                let rect = read_rect(&mut reader, "block")?;
                cells += i64::from(rect.w) * i64::from(rect.h);
                if cells > MAX_CELLS {
                    return Err(invalid("block", "too many cells"));
                }
                blocks.push((host, rect));
            }
            index_of.insert(path.clone(), index as u32);
            let host = (index > 0).then_some(host);
            folders.push((path, host, region, blocks));
        }
        let file_count = reader.count("file count", 16)?;
        let mut files: Vec<(String, u32, u32, u32)> = Vec::with_capacity(file_count);
        let mut taken: std::collections::HashSet<(u32, u32, u32)> =
            std::collections::HashSet::with_capacity(file_count);
        for _ in 0..file_count {
            let path = reader.string("file path")?;
            let folder = reader.u32("file folder")?;
            let block = reader.u32("file block")?;
            let cell = reader.u32("file cell")?;
            if !is_file_path(&path) {
                return Err(invalid("file path", "not a workspace-relative path"));
            }
            if files.last().is_some_and(|(last, ..)| *last >= path) {
                return Err(invalid("file path", "files out of order"));
            }
            let Some((folder_path, _, _, blocks)) = folders.get(folder as usize) else {
                return Err(invalid("file folder", "no such folder"));
            };
            if parent_of(&path) != folder_path {
                return Err(invalid("file folder", "the file is not in that folder"));
            }
            let Some((_, rect)) = blocks.get(block as usize) else {
                return Err(invalid("file block", "no such block"));
            };
            if i64::from(cell) >= i64::from(rect.w) * i64::from(rect.h) {
                return Err(invalid("file cell", "outside its block"));
            }
            if !taken.insert((folder, block, cell)) {
                return Err(invalid("file cell", "two files in one cell"));
            }
            files.push((path, folder, block, cell));
        }
        if reader.at() != body.len() {
            return Err(invalid("layout", "bytes after the files"));
        }
        Ok(Layout::from_parts(folders, files))
    }
}

/// A host must be an earlier folder that is an ancestor of `path`.
fn check_host(folders: &[SavedFolder], host: u32, path: &str, field: &'static str) -> Result<()> {
    let Some((host_path, ..)) = folders.get(host as usize) else {
        return Err(invalid(field, "no such folder"));
    };
    let ancestor = host_path.is_empty()
        || (path.len() > host_path.len()
            && path.starts_with(host_path.as_str())
            && path.as_bytes()[host_path.len()] == b'/');
    if ancestor {
        Ok(())
    } else {
        Err(invalid(field, "not an ancestor"))
    }
}

fn put_u32(out: &mut Vec<u8>, value: u32) {
    out.extend_from_slice(&value.to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, value: &str) {
    put_u32(out, value.len() as u32);
    out.extend_from_slice(value.as_bytes());
}

fn put_rect(out: &mut Vec<u8>, rect: Rect) {
    for value in [rect.x, rect.y, rect.w, rect.h] {
        out.extend_from_slice(&value.to_le_bytes());
    }
}

/// A rectangle within the map's bounds.
fn read_rect(reader: &mut Reader<'_>, field: &'static str) -> Result<Rect> {
    let rect = Rect {
        x: reader.i32(field)?,
        y: reader.i32(field)?,
        w: reader.i32(field)?,
        h: reader.i32(field)?,
    };
    let within = |v: i32| (-MAX_SIDE..=MAX_SIDE).contains(&v);
    if rect.w < 1
        || rect.h < 1
        || rect.w > MAX_SIDE
        || rect.h > MAX_SIDE
        || !within(rect.x)
        || !within(rect.y)
        || !within(rect.right())
        || !within(rect.bottom())
    {
        return Err(invalid(field, "outside the map's bounds"));
    }
    Ok(rect)
}
