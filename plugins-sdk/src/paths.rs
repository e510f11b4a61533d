//! File paths as models write them around code blocks: `src/app.py`,
//! `**src/app.py**`, `### `src/app.py``, `File: src/app.py:`, or inside a
//! fence's info string (```` ```python src/app.py ````).

use crate::text::strip_ending;

/// Names of common files that have no extension.
const BARE_FILE_NAMES: &[&str] = &[
    "Makefile",
    "makefile",
    "GNUmakefile",
    "Dockerfile",
    "Containerfile",
    "Justfile",
    "justfile",
    "Rakefile",
    "Gemfile",
    "Procfile",
    "Vagrantfile",
    "Jenkinsfile",
    "LICENSE",
    "LICENCE",
    "COPYING",
    "NOTICE",
    "AUTHORS",
    "CONTRIBUTORS",
    "CHANGELOG",
    "VERSION",
    "README",
    "CODEOWNERS",
    "OWNERS",
    "Brewfile",
    "Podfile",
    "Pipfile",
    "Caddyfile",
    "Tiltfile",
    "Snakefile",
    "Earthfile",
    "BUILD",
    "WORKSPACE",
];

/// Whether `s` reads as a relative or absolute file path rather than a word,
/// a sentence, a number or a URL. The host's path policy decides later
/// whether the path may be touched.
///
/// One pass over the bytes: this runs on every line a block's path may be
/// on, and on each word of fence info strings.
pub fn looks_like_path(s: &str) -> bool {
    let bytes = s.as_bytes();
    if bytes.is_empty()
        || bytes.len() > 4096
        || matches!(bytes[0], b'-')
        || matches!(bytes[bytes.len() - 1], b'.' | b'/')
    {
        return false;
    }
    let (mut digits_and_dots, mut slash, mut name_start, mut dot) = (true, false, 0, None);
    for (at, &b) in bytes.iter().enumerate() {
        match b {
            b'<' | b'>' | b'|' | b'"' | b'?' | b'*' | b'`' | b'\'' => return false,
            b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => return false,
            b':' if bytes[at + 1..].starts_with(b"//") => return false,
            b'/' | b'\\' => {
                slash |= b == b'/';
                name_start = at + 1;
            }
            b'.' => dot = Some(at),
            _ => {}
        }
        digits_and_dots &= b.is_ascii_digit() || b == b'.';
    }
    // Whitespace beyond ASCII (a no-break space, say) is rare: looked for
    // only when the text is not ASCII.
    if digits_and_dots || (!s.is_ascii() && s.chars().any(char::is_whitespace)) {
        return false;
    }
    let has_extension = dot.is_some_and(|dot| dot >= name_start && dot + 1 < bytes.len());
    has_extension || slash || BARE_FILE_NAMES.contains(&&s[name_start..])
}

/// Whether `line` names `core` as a file on purpose: in backticks or bold,
/// or after a `File:` label, so an extensionless name (`run-tests`,
/// `Taskfile`) is a path there.
fn named_clearly(line: &str, core: &str) -> bool {
    let line = line.trim().trim_end_matches(':');
    let lower = line.to_ascii_lowercase();
    [format!("`{core}`"), format!("**{core}**"), format!("**`{core}`**")].iter().any(|q| line.ends_with(q.as_str()))
        || ["file:", "filename:", "path:"].iter().any(|label| lower.starts_with(label))
}

/// A bare file name: letters, digits, `-`, `_`, `.`, not all digits.
fn is_file_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 255
        && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && s.chars().any(|c| c.is_ascii_alphabetic())
}

/// `./a/b` → `a/b`, `a\b` → `a/b`.
pub fn normalize(path: &str) -> String {
    // `./` and `.\` are the same prefix once separators are `/`.
    let mut rest = path;
    while let Some(after) = rest.strip_prefix("./").or_else(|| rest.strip_prefix(".\\")) {
        rest = after;
    }
    if rest.contains('\\') { rest.replace('\\', "/") } else { rest.to_string() }
}

/// The path a line names, if the line is a path with markdown decoration
/// (`#`, `*`, `>`, `-`, backticks, quotes, a trailing `:`, a `File:` label),
/// or prose whose last backticked word is a path ("Here is `src/app.py`:").
pub fn path_from_line(line: &str) -> Option<String> {
    // A `match`, not a search of a string of them: this runs for every
    // character of every line a block's path may be on.
    let decoration = |c: char| matches!(c, '#' | '*' | '>' | '`' | '\'' | '"' | ':' | '-') || c.is_whitespace();
    let mut core = line.trim().trim_start_matches(decoration).trim_end_matches(decoration);
    for label in ["file:", "filename:", "path:", "file name:"] {
        if core.len() > label.len() && core.get(..label.len()).is_some_and(|head| head.eq_ignore_ascii_case(label)) {
            core = core[label.len()..].trim_start_matches(decoration);
        }
    }
    if looks_like_path(core) || (named_clearly(line, core) && is_file_name(core)) {
        return Some(normalize(core));
    }
    // Prose: the last path in backticks or bold, else (when the line
    // introduces the block with a colon) its last path-like word.
    let quoted = |marker: &str| {
        line.split(marker).skip(1).step_by(2).map(str::trim).filter(|q| looks_like_path(q)).last().map(normalize)
    };
    quoted("`").or_else(|| quoted("**")).or_else(|| {
        let trimmed = line.trim_end();
        trimmed.ends_with(':').then(|| {
            trimmed
                .split_whitespace()
                .map(|word| word.trim_matches(decoration))
                .rfind(|word| looks_like_path(word))
                .map(normalize)
        })?
    })
}

/// The path in a fence's info string: `src/app.py`, `python src/app.py`,
/// `python:src/app.py`, `title="src/app.py"`, `path=src/app.py`.
pub fn path_from_info(info: &str) -> Option<String> {
    info.split_whitespace()
        .map(|token| {
            let token = token.split_once('=').map_or(token, |(_, value)| value);
            let token = token.trim_matches(['"', '\'']);
            token.split_once(':').map_or(token, |(_, rest)| rest)
        })
        .find(|token| looks_like_path(token))
        .map(normalize)
}

/// The path named just before byte `offset` of `text` (where a block
/// starts): the nearest non-blank line among the `MAX_LOOKBACK` lines above.
pub fn path_before(text: &str, offset: usize) -> Option<String> {
    const MAX_LOOKBACK: usize = 3;
    // Walk back line by line from `offset`: a reply of thousands of blocks
    // must not split everything before each one.
    let mut rest = &text[..offset];
    for _ in 0..MAX_LOOKBACK {
        if rest.is_empty() {
            break;
        }
        let body = rest.strip_suffix('\n').unwrap_or(rest);
        let start = memchr::memrchr(b'\n', body.as_bytes()).map_or(0, |i| i + 1);
        let line = strip_ending(&rest[start..]);
        if !line.trim().is_empty() {
            return path_from_line(line);
        }
        rest = &rest[..start];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decorated_path_lines() {
        for line in [
            "src/app.py",
            "**src/app.py**",
            "### `src/app.py`",
            "`src/app.py`:",
            "File: src/app.py",
            "> src/app.py",
            "- ./src/app.py:",
            "Here is the updated `src/app.py`:",
            "Updated **src/app.py**:",
            "The new version of src/app.py:",
        ] {
            assert_eq!(path_from_line(line).as_deref(), Some("src/app.py"), "{line:?}");
        }
        assert_eq!(path_from_line("Makefile").as_deref(), Some("Makefile"));
        assert_eq!(path_from_line("filé: x"), None, "labels are compared on char boundaries");
    }

    #[test]
    fn the_path_before_a_block_is_on_one_of_the_three_lines_above_it() {
        let reply = "intro\nsrc/a.py\n\n\n```\n";
        assert_eq!(path_before(reply, reply.len() - 4).as_deref(), Some("src/a.py"));
        let far = "src/a.py\n\n\n\n```\n";
        assert_eq!(path_before(far, far.len() - 4), None, "more than three lines up is too far");
        let crlf = "src/b.py\r\n```\r\n";
        assert_eq!(path_before(crlf, crlf.len() - 5).as_deref(), Some("src/b.py"));
        assert_eq!(path_before("src/c.py", 8).as_deref(), Some("src/c.py"), "no ending before the offset");
        assert_eq!(path_before("x", 0), None);
    }

    #[test]
    fn prose_is_not_a_path() {
        for line in [
            "Here is the fix.",
            "Done.",
            "1.2",
            "see https://x.io/a.py",
            "Run this:",
            "e.g.",
            "I changed app.py and more",
        ] {
            assert_eq!(path_from_line(line), None, "{line:?}");
        }
    }

    #[test]
    fn info_string_paths() {
        assert_eq!(path_from_info("python src/app.py").as_deref(), Some("src/app.py"));
        assert_eq!(path_from_info("rust:src/lib.rs").as_deref(), Some("src/lib.rs"));
        assert_eq!(path_from_info("title=\"a/b.txt\"").as_deref(), Some("a/b.txt"));
        assert_eq!(path_from_info("python"), None);
        assert_eq!(path_from_info(""), None);
    }

    #[test]
    fn path_before_looks_past_blank_lines_only() {
        let text = "src/a.rs\n\n```\n";
        assert_eq!(path_before(text, text.find("```").unwrap()).as_deref(), Some("src/a.rs"));
        let text = "src/a.rs\nSome prose here\n```\n";
        assert_eq!(path_before(text, text.find("```").unwrap()), None);
    }
}

#[cfg(test)]
mod bare_names {
    use super::*;

    #[test]
    fn extensionless_files_are_paths_when_named_clearly() {
        for line in ["Makefile", "NOTICE", "`run-tests`:", "**Taskfile**", "File: Taskfile"] {
            assert!(path_from_line(line).is_some(), "{line:?}");
        }
        for line in ["Explanation", "Done:", "Next", "`42`"] {
            assert_eq!(path_from_line(line), None, "{line:?}");
        }
    }
}

#[cfg(test)]
mod one_pass {
    use super::*;
    use proptest::prelude::*;

    /// `looks_like_path` as it was written before it became one pass:
    /// the statement of what it decides.
    fn looks_like_path_by_rules(s: &str) -> bool {
        if s.is_empty()
            || s.len() > 4096
            || s.chars().any(|c| c.is_whitespace() || matches!(c, '<' | '>' | '|' | '"' | '?' | '*' | '`' | '\''))
        {
            return false;
        }
        if s.contains("://") || s.starts_with('-') || s.ends_with('.') || s.ends_with('/') {
            return false;
        }
        if s.chars().all(|c| c.is_ascii_digit() || c == '.') {
            return false;
        }
        let name = s.rsplit(['/', '\\']).next().unwrap_or(s);
        let has_extension = name.rfind('.').is_some_and(|dot| dot + 1 < name.len());
        has_extension || s.contains('/') || BARE_FILE_NAMES.contains(&name)
    }

    #[test]
    fn edge_cases_agree_with_the_rules() {
        for s in [
            "a.py",
            "a/b",
            "a\\b.c",
            "a.b\\c",
            ".",
            "..",
            "1.2",
            "1.2a",
            "-a.py",
            "a.",
            "a/",
            "x://y.z",
            "a:/b.c",
            "Makefile",
            "dir/Makefile",
            "dir\\Makefile",
            "a\u{a0}b.c",
            "a\u{b}b.c",
            "a\u{1c}b.c",
            "é.rs",
            "a\u{2028}.py",
            "a.b/c",
            ".hidden",
            "a..",
            "a/.b",
        ] {
            assert_eq!(looks_like_path(s), looks_like_path_by_rules(s), "{s:?}");
        }
    }

    proptest! {
        #[test]
        fn one_pass_decides_as_the_rules_do(s in "[a-zA-Z0-9./\\\\:_ \t\u{a0}\u{b}é*`-]{0,12}|(Makefile|README|x)(/[a-z.]{0,3})?") {
            prop_assert_eq!(looks_like_path(&s), looks_like_path_by_rules(&s));
        }

        #[test]
        fn normalize_strips_dot_prefixes_after_turning_separators(s in "[./\\\\ab]{0,10}") {
            let by_rules = {
                let path = s.replace('\\', "/");
                let mut path = path.as_str();
                while let Some(rest) = path.strip_prefix("./") {
                    path = rest;
                }
                path.to_string()
            };
            prop_assert_eq!(normalize(&s), by_rules);
        }
    }
}
