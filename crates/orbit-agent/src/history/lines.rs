//! A line reader whose memory is bounded by a cap, not by the file: a
//! transcript of hundreds of megabytes costs one buffer, and a line longer
//! than the cap is skipped without being held.

use std::io::{BufRead, BufReader, Read};

/// What [`LineReader::next_line`] found.
pub(crate) enum Line<'a> {
    /// A whole line, without its newline.
    Text(&'a [u8]),
    /// A line longer than the cap, skipped.
    TooLong,
}

pub(crate) struct LineReader<R> {
    inner: BufReader<R>,
    buf: Vec<u8>,
    cap: usize,
}

impl<R: Read> LineReader<R> {
    pub(crate) fn new(inner: R, cap: usize) -> Self {
        Self {
            inner: BufReader::with_capacity(256 * 1024, inner),
            buf: Vec::new(),
            cap,
        }
    }

    pub(crate) fn next_line(&mut self) -> std::io::Result<Option<Line<'_>>> {
        self.buf.clear();
        let mut skipping = false;
        let mut any = false;
        loop {
            let available = match self.inner.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                // End of file: the last line may have no newline.
                return Ok(match (any, skipping) {
                    (false, _) => None,
                    (true, true) => Some(Line::TooLong),
                    (true, false) => Some(Line::Text(&self.buf)),
                });
            }
            any = true;
            if let Some(at) = memchr::memchr(b'\n', available) {
                if !skipping {
                    self.buf.extend_from_slice(&available[..at]);
                    skipping = self.buf.len() > self.cap;
                }
                self.inner.consume(at + 1);
                return Ok(Some(if skipping {
                    Line::TooLong
                } else {
                    Line::Text(&self.buf)
                }));
            }
            let len = available.len();
            if !skipping {
                self.buf.extend_from_slice(available);
                if self.buf.len() > self.cap {
                    skipping = true;
                    self.buf = Vec::new();
                }
            }
            self.inner.consume(len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(input: &[u8], cap: usize) -> Vec<Option<Vec<u8>>> {
        let mut reader = LineReader::new(input, cap);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().unwrap() {
            out.push(match line {
                Line::Text(t) => Some(t.to_vec()),
                Line::TooLong => None,
            });
        }
        out
    }

    #[test]
    fn lines_last_without_newline_and_too_long() {
        assert_eq!(
            collect(b"a\n\nbc", 10),
            [Some(b"a".to_vec()), Some(Vec::new()), Some(b"bc".to_vec())]
        );
        let mut big = vec![b'x'; 600_000];
        big.extend_from_slice(b"\nok\n");
        assert_eq!(collect(&big, 1000), [None, Some(b"ok".to_vec())]);
        assert!(collect(b"", 10).is_empty());
    }
}
