//! The one reader of the map's little-endian files (the saved layout, the
//! snapshot): every read is bounds-checked and names the field it was
//! reading, so a cut or forged file is an [`Error`], never a panic or a
//! huge allocation.

use crate::error::{Error, Result, invalid};

/// A cursor over a file's bytes.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// Reads `bytes` from offset `at`.
    pub(crate) fn new(bytes: &'a [u8], at: usize) -> Self {
        Self { bytes, at }
    }

    /// Where it stands.
    pub(crate) fn at(&self) -> usize {
        self.at
    }

    /// How many bytes are left.
    pub(crate) fn left(&self) -> usize {
        self.bytes.len() - self.at
    }

    /// The next `len` bytes.
    pub(crate) fn take(&mut self, field: &'static str, len: usize) -> Result<&'a [u8]> {
        let end = self
            .at
            .checked_add(len)
            .filter(|end| *end <= self.bytes.len())
            .ok_or(Error::Truncated {
                field,
                offset: self.at,
                needed: len.saturating_sub(self.bytes.len().saturating_sub(self.at)),
            })?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    /// On to the next 4-byte boundary (at most the end).
    pub(crate) fn align(&mut self) {
        self.at = self.at.next_multiple_of(4).min(self.bytes.len());
    }

    fn four(&mut self, field: &'static str) -> Result<[u8; 4]> {
        let b = self.take(field, 4)?;
        Ok([b[0], b[1], b[2], b[3]])
    }

    pub(crate) fn u32(&mut self, field: &'static str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.four(field)?))
    }

    pub(crate) fn i32(&mut self, field: &'static str) -> Result<i32> {
        Ok(i32::from_le_bytes(self.four(field)?))
    }

    /// A count of records of at least `min_size` bytes each: no larger than
    /// what the rest could hold (no allocation from a forged count).
    pub(crate) fn count(&mut self, field: &'static str, min_size: usize) -> Result<usize> {
        let count = self.u32(field)? as usize;
        if count > self.left() / min_size {
            return Err(invalid(field, "larger than the file"));
        }
        Ok(count)
    }

    /// A `u32` length, then that many bytes of UTF-8.
    pub(crate) fn string(&mut self, field: &'static str) -> Result<String> {
        let len = self.u32(field)? as usize;
        let bytes = self.take(field, len)?;
        std::str::from_utf8(bytes)
            .map(str::to_owned)
            .map_err(|_| invalid(field, "not UTF-8"))
    }

    /// `count` 4-byte words, each made a `T` by `from`.
    fn words<T>(
        &mut self,
        field: &'static str,
        count: Option<usize>,
        from: fn([u8; 4]) -> T,
    ) -> Result<Vec<T>> {
        let len = count
            .and_then(|c| c.checked_mul(4))
            .ok_or_else(|| invalid(field, "count too large"))?;
        Ok(self
            .take(field, len)?
            .chunks_exact(4)
            .map(|c| from([c[0], c[1], c[2], c[3]]))
            .collect())
    }

    /// `count` little-endian `u32`s.
    pub(crate) fn u32s(&mut self, field: &'static str, count: Option<usize>) -> Result<Vec<u32>> {
        self.words(field, count, u32::from_le_bytes)
    }

    /// `count` little-endian `f32`s.
    pub(crate) fn f32s(&mut self, field: &'static str, count: Option<usize>) -> Result<Vec<f32>> {
        self.words(field, count, f32::from_le_bytes)
    }
}
