//! Fenced code blocks (```` ``` ```` or `~~~`, three or more) as models write them.

use crate::text::strip_ending;

/// A fenced code block in a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence<'a> {
    /// The info string after the opening fence, trimmed (`python`, `diff`, `rust src/lib.rs`).
    pub info: &'a str,
    /// The lines between the fences, with their endings.
    pub body: &'a str,
    /// Byte offset of the opening fence line.
    pub start: usize,
    /// Byte offset of the first body line.
    pub body_start: usize,
    /// Byte offset just past the body (where the closing fence starts).
    pub body_end: usize,
    /// Byte offset just past the closing fence line (or the text's end).
    pub end: usize,
    /// Whether a closing fence was found; an unclosed block runs to the end.
    pub closed: bool,
}

/// A fence line: its character, its length and its info string.
fn fence_marker(line: &str) -> Option<(u8, usize, &str)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let ch = *trimmed.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let count = trimmed.bytes().take_while(|&b| b == ch).count();
    if count < 3 {
        return None;
    }
    let info = trimmed[count..].trim();
    if ch == b'`' && info.contains('`') {
        return None;
    }
    Some((ch, count, info))
}

/// Whether `line` opens a fence, and with which info string.
pub fn opening_info(line: &str) -> Option<&str> {
    fence_marker(strip_ending(line)).map(|(_, _, info)| info)
}

/// The fence lines of `text`, in order: where each starts, the offset just
/// past it, and its marker. They are found from the fence characters, not
/// line by line: a megabyte reply has a few fences among its thousands of
/// lines, and every format looks for them.
fn fence_lines(text: &str) -> impl Iterator<Item = (usize, usize, (u8, usize, &str))> {
    let bytes = text.as_bytes();
    let mut from = 0;
    std::iter::from_fn(move || {
        while let Some(found) = memchr::memchr2(b'`', b'~', &bytes[from..]) {
            let at = from + found;
            from = at + 1;
            // A fence character opens a fence line only if at most three
            // spaces stand before it on its line.
            let indent = bytes[..at].iter().rev().take(4).take_while(|&&b| b == b' ').count();
            let line_start = at - indent;
            if indent > 3 || (line_start > 0 && bytes[line_start - 1] != b'\n') {
                continue;
            }
            // Any later fence character on this line has text before it.
            from = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i + 1);
            if let Some(marker) = fence_marker(strip_ending(&text[line_start..from])) {
                return Some((line_start, from, marker));
            }
        }
        None
    })
}

/// All top-level fenced blocks of `text`, in order.
///
/// A block closes at a bare fence of the same character at least as long as
/// the opening one. Inside a block, a fence line of the same character and
/// length *with an info string* opens a nested block (a Markdown file inside a
/// reply, say), and the next bare fence closes that one first, so nested
/// fences in file content do not end the outer block early.
pub fn fenced_blocks(text: &str) -> Vec<Fence<'_>> {
    let mut blocks = Vec::new();
    let mut open: Option<(u8, usize, &str, usize, usize)> = None; // ch, len, info, start, body_start
    let mut depth = 0usize;
    for (line_start, line_end, (c, l, i)) in fence_lines(text) {
        match open {
            None => {
                open = Some((c, l, i, line_start, line_end));
                depth = 0;
            }
            Some((ch, len, info, start, body_start)) if c == ch => {
                if i.is_empty() && l >= len {
                    if depth == 0 {
                        blocks.push(Fence {
                            info,
                            body: &text[body_start..line_start],
                            start,
                            body_start,
                            body_end: line_start,
                            end: line_end,
                            closed: true,
                        });
                        open = None;
                    } else {
                        depth -= 1;
                    }
                } else if !i.is_empty() && l == len {
                    depth += 1;
                }
            }
            Some(_) => {}
        }
    }
    if let Some((_, _, info, start, body_start)) = open {
        blocks.push(Fence {
            info,
            body: &text[body_start..],
            start,
            body_start,
            body_end: text.len(),
            end: text.len(),
            closed: false,
        });
    }
    blocks
}

/// Whether an info string names a shell language: the block holds commands
/// to run, not file contents.
pub fn is_shell_info(info: &str) -> bool {
    let lang = info.split_whitespace().next().unwrap_or("");
    matches!(
        lang.to_ascii_lowercase().as_str(),
        "bash" | "sh" | "shell" | "zsh" | "console" | "shell-session" | "fish" | "powershell" | "ps1" | "cmd" | "bat"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The fence lines by definition: every line, one at a time.
    fn fence_lines_one_by_one(text: &str) -> Vec<(usize, usize, (u8, usize, &str))> {
        let mut offset = 0;
        crate::text::lines_with_endings(text)
            .filter_map(|line| {
                let start = offset;
                offset += line.len();
                fence_marker(strip_ending(line)).map(|marker| (start, offset, marker))
            })
            .collect()
    }

    proptest! {
        #[test]
        fn fence_lines_are_the_lines_with_a_fence_marker(
            text in "(( {0,5}|x|\t|\r)?([`~]{1,5}|``` ```|~~~ ``)[a-z`~ ]{0,3}\r?\n|code `x`\n|a\n|\n|[ `~]{0,4}){0,30}",
        ) {
            prop_assert_eq!(fence_lines(&text).collect::<Vec<_>>(), fence_lines_one_by_one(&text));
        }
    }

    #[test]
    fn finds_blocks_with_info_strings() {
        let text = "intro\n```python\nx = 1\n```\n~~~~\ny\n~~~~\n";
        let blocks = fenced_blocks(text);
        assert_eq!(blocks.len(), 2);
        assert_eq!((blocks[0].info, blocks[0].body), ("python", "x = 1\n"));
        assert_eq!((blocks[1].info, blocks[1].body), ("", "y\n"));
        assert_eq!(&text[blocks[0].start..blocks[0].end], "```python\nx = 1\n```\n");
    }

    #[test]
    fn longer_outer_fence_holds_shorter_inner_ones() {
        let text = "````markdown\n# T\n```\ncode\n```\n````\n";
        let blocks = fenced_blocks(text);
        assert_eq!(blocks.len(), 1);
        assert_eq!(blocks[0].body, "# T\n```\ncode\n```\n");
    }

    #[test]
    fn same_length_nested_block_with_info_string() {
        let text = "```markdown\n# T\n```rust\nfn f() {}\n```\nend\n```\nafter\n";
        let blocks = fenced_blocks(text);
        assert_eq!(blocks.len(), 1);
        assert_eq!(blocks[0].body, "# T\n```rust\nfn f() {}\n```\nend\n");
    }

    #[test]
    fn unclosed_block_runs_to_the_end() {
        let blocks = fenced_blocks("```\na\nb");
        assert_eq!(blocks.len(), 1);
        assert!(!blocks[0].closed);
        assert_eq!(blocks[0].body, "a\nb");
    }

    #[test]
    fn tildes_do_not_close_backticks_and_short_fences_are_text() {
        let blocks = fenced_blocks("```\n~~~\n``\n```\n");
        assert_eq!(blocks[0].body, "~~~\n``\n");
    }

    #[test]
    fn shell_languages() {
        assert!(is_shell_info("bash"));
        assert!(is_shell_info("Shell session"));
        assert!(!is_shell_info("python"));
        assert!(!is_shell_info(""));
    }
}
