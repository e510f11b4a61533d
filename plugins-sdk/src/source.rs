//! Positions in a reply: byte offsets to 1-based line numbers and spans.

use crate::types::Span;

/// Maps byte offsets of a text to line numbers. Build it once per reply.
#[derive(Debug, Clone)]
pub struct SourceMap {
    /// `u32`, as spans are: a reply is far below 4 GiB (the host's limit).
    line_starts: Vec<u32>,
    len: usize,
}

impl SourceMap {
    /// Index the line starts of `text`.
    pub fn new(text: &str) -> Self {
        // Sized up front: a reply of a million lines would otherwise be
        // copied on every doubling, into fresh memory each time.
        let mut line_starts = Vec::with_capacity(crate::text::newline_count(text) + 1);
        line_starts.push(0);
        line_starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| (i + 1) as u32));
        SourceMap { line_starts, len: text.len() }
    }

    /// The 1-based line holding byte `offset`.
    pub fn line_of(&self, offset: usize) -> u32 {
        let index = self.line_starts.partition_point(|&start| start as usize <= offset);
        index.max(1) as u32
    }

    /// Byte offset where 1-based `line` starts (the text's end past the last line).
    pub fn line_start(&self, line: u32) -> usize {
        self.line_starts.get(line.saturating_sub(1) as usize).map_or(self.len, |&start| start as usize)
    }

    /// The span of bytes `start..end`, with its first and last lines. A span
    /// that ends right after a newline does not reach into the next line.
    pub fn span(&self, start: usize, end: usize) -> Span {
        let end = end.max(start);
        let last = if end > start { self.line_of(end - 1) } else { self.line_of(start) };
        Span { start: start as u32, end: end as u32, first_line: self.line_of(start), last_line: last }
    }

    /// The span covering 1-based lines `first..=last`.
    pub fn lines_span(&self, first: u32, last: u32) -> Span {
        self.span(self.line_start(first), self.line_start(last + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_offsets_to_lines() {
        let map = SourceMap::new("ab\ncd\n\nef");
        assert_eq!(map.line_of(0), 1);
        assert_eq!(map.line_of(2), 1);
        assert_eq!(map.line_of(3), 2);
        assert_eq!(map.line_of(6), 3);
        assert_eq!(map.line_of(7), 4);
        let span = map.lines_span(2, 3);
        assert_eq!((span.start, span.end, span.first_line, span.last_line), (3, 7, 2, 3));
        assert_eq!(map.line_start(99), 9);
    }
}
