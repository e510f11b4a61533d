//! Placeholders models write instead of code: `// ... existing code ...`,
//! `# rest of the file unchanged`, a bare `...`. Writing one into a file would
//! delete the code it stands for, so formats that take whole text refuse them.

use crate::text::{lines_with_endings, strip_ending};

/// A placeholder found in some text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Elision {
    /// 1-based line number.
    pub line: u32,
    /// The line as written, without its ending.
    pub text: String,
}

const COMMENT_OPENERS: &[&str] = &["//", "#", "--", "/*", "<!--", ";", "%", "*", "{/*", "'"];
const COMMENT_CLOSERS: &[&str] = &["*/}", "*/", "-->"];

/// Phrases that, at the start of a comment, mean "code left out here".
const PLACEHOLDER_PHRASES: &[&str] = &[
    "rest of",
    "existing code",
    "existing imports",
    "existing methods",
    "existing functions",
    "remaining code",
    "remaining methods",
    "previous code",
    "code unchanged",
    "unchanged code",
    "code omitted",
    "omitted for brevity",
    "other code",
    "other methods",
    "other functions",
    "same as before",
    "same as above",
    "keep existing",
    "implementation unchanged",
    "everything else",
];

/// The comment text of `line`, if the whole line is one comment.
fn comment_text(line: &str) -> Option<&str> {
    let opener = COMMENT_OPENERS.iter().find(|o| line.starts_with(**o))?;
    let mut body = &line[opener.len()..];
    for closer in COMMENT_CLOSERS {
        if let Some(rest) = body.trim_end().strip_suffix(closer) {
            body = rest;
            break;
        }
    }
    Some(body.trim())
}

fn is_dots(text: &str) -> bool {
    text.starts_with("...") || text.starts_with('…')
}

/// Whether a trimmed line is an elision placeholder. `after_block_opener`
/// says the previous code line ended with `:`, where a bare `...` is a real
/// Python statement (a stub body), not a placeholder.
pub fn is_placeholder(trimmed: &str, after_block_opener: bool) -> bool {
    if trimmed == "..." || trimmed == "…" {
        return !after_block_opener;
    }
    // `... rest of code ...` written as plain text (not JS spread `...args`).
    if trimmed.starts_with("... ") || trimmed.starts_with("…") {
        return true;
    }
    let Some(comment) = comment_text(trimmed) else { return false };
    if comment.is_empty() {
        return false;
    }
    let lower = comment.to_lowercase();
    let words = lower.trim_start_matches(['.', '…', ' ', '(', '[']);
    let starts_with_phrase = PLACEHOLDER_PHRASES.iter().any(|p| words.starts_with(p));
    (is_dots(&lower) && (words.is_empty() || starts_with_phrase || lower.ends_with("...") || lower.ends_with('…')))
        || starts_with_phrase
}

/// Every placeholder line in `text`.
pub fn find_elisions(text: &str) -> Vec<Elision> {
    let mut found = Vec::new();
    let mut after_block_opener = false;
    for (index, line) in lines_with_endings(text).enumerate() {
        let line = strip_ending(line);
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        if is_placeholder(trimmed, after_block_opener) {
            found.push(Elision { line: index as u32 + 1, text: line.to_string() });
        }
        after_block_opener = trimmed.ends_with(':');
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_usual_placeholders() {
        for line in [
            "// ... existing code ...",
            "# ... rest of the file unchanged ...",
            "# rest of the file unchanged",
            "// existing code here",
            "/* ... */",
            "<!-- ... -->",
            "...",
            "…",
            "... rest of code ...",
            "    # ...",
            "-- ... other functions",
            "{/* ... existing JSX ... */}",
        ] {
            assert_eq!(find_elisions(line).len(), 1, "{line:?} is a placeholder");
        }
    }

    #[test]
    fn leaves_real_code_alone() {
        for line in [
            "// keep the rest of the buffer unchanged",
            "const all = [...items];",
            "...args,",
            "x = y[1:...]",
            "# TODO: handle errors",
            "// see https://example.com/a...b",
            "..Default::default()",
        ] {
            assert!(find_elisions(line).is_empty(), "{line:?} is code");
        }
    }

    #[test]
    fn python_stub_body_is_code() {
        assert!(find_elisions("class P(Protocol):\n    def f(self) -> int:\n        ...\n").is_empty());
        assert_eq!(find_elisions("import os\n...\n")[0].line, 2);
    }
}
