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
        // Each `\n` starts the next line: read off the line splitter's
        // newline masks, a block of the text at a time, no line made.
        let mut block = 0;
        while block < text.len() {
            let mut newlines = crate::text::newline_mask(text.as_bytes(), block);
            while newlines != 0 {
                line_starts.push((block + newlines.trailing_zeros() as usize + 1) as u32);
                newlines &= newlines - 1;
            }
            block += crate::text::BLOCK;
        }
        SourceMap { line_starts, len: text.len() }
    }

    /// The 1-based line holding byte `offset`.
    pub fn line_of(&self, offset: usize) -> u32 {
        let index = self.line_starts.partition_point(|&start| start as usize <= offset);
        index.max(1) as u32
    }

    /// Byte offset where 1-based `line` starts (the text's end past the last line).
    #[inline]
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

/// A text's lines by index, each with its ending and byte offset, found
/// from the [`SourceMap`]'s line starts: a parser that steps back and forth
/// over a reply's lines needs no vector of slices beside it (a 10 MB reply
/// has some 300,000 lines, and a slice each is megabytes of a plugin's
/// memory, which never shrinks).
#[derive(Debug, Clone)]
pub struct IndexedLines<'a> {
    text: &'a str,
    map: SourceMap,
    count: usize,
}

impl<'a> IndexedLines<'a> {
    /// Index the lines of `text`: as many as
    /// [`lines_with_endings`](crate::text::lines_with_endings) yields.
    pub fn new(text: &'a str) -> Self {
        let map = SourceMap::new(text);
        let starts = map.line_starts.len();
        // A text that ends with a newline (or is empty) has no line after it.
        let count = if map.line_starts[starts - 1] as usize == text.len() { starts - 1 } else { starts };
        IndexedLines { text, map, count }
    }

    /// How many lines the text has.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether the text has no lines (it is empty).
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Byte offset where line `index` (0-based) starts; the text's length
    /// past the last line.
    #[inline]
    pub fn offset(&self, index: usize) -> usize {
        self.map.line_start(index as u32 + 1)
    }

    /// Line `index` (0-based) with its ending. Panics past the last line, as
    /// a slice index does.
    #[inline]
    pub fn line(&self, index: usize) -> &'a str {
        if index >= self.count {
            past_the_last_line(index, self.count);
        }
        // A parser asks for every line of a reply, some several times: the
        // checks of a `str` slice (each end a character boundary) cost more
        // than the rest of the call in a component.
        let starts = &self.map.line_starts;
        // SAFETY: `index < count <= starts.len()`; a line start is 0, just
        // past a `\n` or the text's length (the next start, or the text's
        // end, is never before it), so both ends are character boundaries
        // of `text`, in order.
        unsafe {
            let start = *starts.get_unchecked(index) as usize;
            let end = starts.get(index + 1).map_or(self.text.len(), |&end| end as usize);
            self.text.get_unchecked(start..end)
        }
    }

    /// Index of the first line that starts at or after byte `offset`.
    pub fn index_at(&self, offset: usize) -> usize {
        self.map.line_starts[..self.count].partition_point(|&start| (start as usize) < offset)
    }

    /// The line starts as a [`SourceMap`], for spans.
    pub fn map(&self) -> &SourceMap {
        &self.map
    }
}

#[cold]
#[inline(never)]
fn past_the_last_line(index: usize, count: usize) -> ! {
    panic!("line {index} of a text of {count} lines")
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// A line starts at 0 and after every `\n`, whatever the text's
        /// length against the 64-byte blocks it is read in.
        #[test]
        fn lines_start_after_every_newline(text in "[a\n\r]{0,200}") {
            let naive: Vec<u32> = std::iter::once(0)
                .chain(text.match_indices('\n').map(|(at, _)| at as u32 + 1))
                .collect();
            proptest::prop_assert_eq!(SourceMap::new(&text).line_starts, naive);
        }

        /// Each indexed line is the text's line, with its ending, whatever
        /// characters surround its newlines.
        #[test]
        fn indexed_lines_are_the_texts_lines(text in "[a\n\r\u{e9}\u{20ac}\u{1F600}]{0,200}") {
            let lines = IndexedLines::new(&text);
            let got: Vec<&str> = (0..lines.len()).map(|i| lines.line(i)).collect();
            let expected: Vec<&str> = crate::text::lines_with_endings(&text).collect();
            proptest::prop_assert_eq!(got, expected);
        }
    }

    #[test]
    #[should_panic(expected = "line 2 of a text of 2 lines")]
    fn a_line_past_the_last_panics() {
        IndexedLines::new("a\nb").line(2);
    }

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

    #[test]
    fn indexed_lines_are_the_lines_with_endings() {
        for text in ["", "\n", "a", "a\n", "a\nb", "a\r\nb\n\n", "\n\nx"] {
            let lines = IndexedLines::new(text);
            let expected: Vec<&str> = crate::text::lines_with_endings(text).collect();
            let got: Vec<&str> = (0..lines.len()).map(|i| lines.line(i)).collect();
            assert_eq!(got, expected, "{text:?}");
            let mut offset = 0;
            for (index, line) in expected.iter().enumerate() {
                assert_eq!(lines.offset(index), offset, "{text:?} line {index}");
                assert_eq!(lines.index_at(offset), index, "{text:?} at {offset}");
                offset += line.len();
            }
            assert_eq!(lines.offset(lines.len()), text.len());
            assert_eq!(lines.index_at(text.len()), lines.len(), "{text:?}");
            assert_eq!(lines.is_empty(), text.is_empty());
        }
        // Between two line starts: the next line.
        assert_eq!(IndexedLines::new("ab\ncd\n").index_at(1), 1);
    }
}
