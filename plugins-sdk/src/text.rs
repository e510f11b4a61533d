//! Lines that keep their endings, and a file's text style (BOM, CRLF or LF,
//! final newline), so edits change exactly the bytes they mean to.

/// The byte-order mark some editors put at the start of UTF-8 files.
pub const BOM: char = '\u{feff}';

/// Split `text` into lines, each keeping its ending (`\n` or `\r\n`); the last
/// line has no ending when the text does not end with a newline. Empty text has
/// no lines. Concatenating the lines gives back `text` exactly.
pub fn lines_with_endings(text: &str) -> LinesWithEndings<'_> {
    LinesWithEndings { rest: text }
}

/// How many lines [`lines_with_endings`] gives, counted without splitting.
pub fn line_count(text: &str) -> usize {
    memchr::memchr_iter(b'\n', text.as_bytes()).count() + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

/// The iterator of [`lines_with_endings`]. Source lines are short, so the
/// search for each `\n` must be cheap to start: `memchr` (SIMD where the
/// target has it, wasm `simd128` included) beats `str::split_inclusive` by
/// a wide margin on them.
#[derive(Debug, Clone)]
pub struct LinesWithEndings<'a> {
    rest: &'a str,
}

impl<'a> Iterator for LinesWithEndings<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.rest.is_empty() {
            return None;
        }
        let end = memchr::memchr(b'\n', self.rest.as_bytes()).map_or(self.rest.len(), |i| i + 1);
        // `\n` is ASCII, so `end` is a char boundary.
        let (line, rest) = self.rest.split_at(end);
        self.rest = rest;
        Some(line)
    }
}

/// A line without its `\n` or `\r\n`.
pub fn strip_ending(line: &str) -> &str {
    let line = line.strip_suffix('\n').unwrap_or(line);
    line.strip_suffix('\r').unwrap_or(line)
}

/// The ending of a line: `"\r\n"`, `"\n"` or `""`.
pub fn ending_of(line: &str) -> &str {
    &line[strip_ending(line).len()..]
}

/// `text` without a leading BOM, and whether it had one.
pub fn split_bom(text: &str) -> (bool, &str) {
    match text.strip_prefix(BOM) {
        Some(rest) => (true, rest),
        None => (false, text),
    }
}

/// A line-ending convention.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eol {
    /// `\n`
    Lf,
    /// `\r\n`
    CrLf,
}

impl Eol {
    /// The bytes of this ending.
    pub fn as_str(self) -> &'static str {
        match self {
            Eol::Lf => "\n",
            Eol::CrLf => "\r\n",
        }
    }
}

/// How a file writes its text: what an edit must keep when it rewrites lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextStyle {
    /// The file starts with a UTF-8 byte-order mark.
    pub bom: bool,
    /// The ending most of its lines use (LF on a tie).
    pub eol: Eol,
    /// The file ends with a line ending. An empty file counts as ending with
    /// one, since nothing says otherwise.
    pub final_newline: bool,
}

impl Default for TextStyle {
    /// The style of a new file: no BOM, LF, a final newline.
    fn default() -> Self {
        TextStyle { bom: false, eol: Eol::Lf, final_newline: true }
    }
}

impl TextStyle {
    /// The style of existing content.
    pub fn detect(content: &str) -> Self {
        let (bom, body) = split_bom(content);
        // Counted with memchr, not a substring search: most files hold no `\r`.
        let bytes = body.as_bytes();
        let newlines = memchr::memchr_iter(b'\n', bytes).count();
        let crlf = match memchr::memchr(b'\r', bytes) {
            Some(first) => memchr::memmem::find_iter(&bytes[first..], b"\r\n").count(),
            None => 0,
        };
        TextStyle {
            bom,
            eol: if crlf * 2 > newlines { Eol::CrLf } else { Eol::Lf },
            final_newline: body.is_empty() || body.ends_with('\n'),
        }
    }

    /// `text`, written in any style, rewritten in this one: BOM added or
    /// removed, every line ending made this style's, the final newline added
    /// or removed. Empty text stays empty (but for the BOM).
    pub fn restyle(&self, text: &str) -> String {
        let (_, body) = split_bom(text);
        let mut out = String::with_capacity(body.len() + body.len() / 32 + 4);
        if self.bom {
            out.push(BOM);
        }
        let mut lines = lines_with_endings(body).peekable();
        while let Some(line) = lines.next() {
            out.push_str(strip_ending(line));
            if lines.peek().is_some() || self.final_newline {
                out.push_str(self.eol.as_str());
            }
        }
        out
    }

    /// Join lines (without endings) in this style.
    pub fn join<'a>(&self, lines: impl IntoIterator<Item = &'a str>) -> String {
        let mut out = String::new();
        if self.bom {
            out.push(BOM);
        }
        let mut lines = lines.into_iter().peekable();
        while let Some(line) = lines.next() {
            out.push_str(line);
            if lines.peek().is_some() || self.final_newline {
                out.push_str(self.eol.as_str());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn lines_keep_their_endings() {
        let lines: Vec<_> = lines_with_endings("a\r\nb\nc").collect();
        assert_eq!(lines, ["a\r\n", "b\n", "c"]);
        assert_eq!(lines.iter().map(|l| strip_ending(l)).collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(lines.iter().map(|l| ending_of(l)).collect::<Vec<_>>(), ["\r\n", "\n", ""]);
        assert_eq!(lines_with_endings("").count(), 0);
        for text in ["", "a", "a\n", "a\r\nb", "\n\n"] {
            assert_eq!(line_count(text), lines_with_endings(text).count(), "{text:?}");
        }
    }

    #[test]
    fn detects_styles() {
        assert_eq!(TextStyle::detect("a\r\nb\r\n"), TextStyle { bom: false, eol: Eol::CrLf, final_newline: true });
        assert_eq!(TextStyle::detect("\u{feff}a\nb"), TextStyle { bom: true, eol: Eol::Lf, final_newline: false });
        assert_eq!(TextStyle::detect(""), TextStyle::default());
    }

    #[test]
    fn restyles_model_text_into_the_file_style() {
        let crlf_no_final = TextStyle::detect("\u{feff}x\r\ny");
        assert_eq!(crlf_no_final.restyle("a\nb\n"), "\u{feff}a\r\nb");
        assert_eq!(TextStyle::default().restyle("\u{feff}a\r\nb"), "a\nb\n");
        assert_eq!(TextStyle::default().restyle(""), "");
    }

    proptest! {
        #[test]
        fn restyling_in_its_own_style_is_identity(body in "([a-z \t]{0,6}(\r\n|\n)){0,6}[a-z]{0,3}", bom: bool) {
            // Uniform-ending content: restyling into its own style changes nothing.
            let uniform = body.replace("\r\n", "\n");
            for eol in ["\n", "\r\n"] {
                let text = format!("{}{}", if bom { "\u{feff}" } else { "" }, uniform.replace('\n', eol));
                prop_assert_eq!(TextStyle::detect(&text).restyle(&text), text.clone());
            }
        }

        #[test]
        fn lines_concatenate_back(text in "[a-z\r\n]{0,40}") {
            prop_assert_eq!(lines_with_endings(&text).collect::<String>(), text);
        }
    }
}
