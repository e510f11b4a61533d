//! The paths of a diff's headers, as models and tools write them:
//! `--- a/x.py`, with a timestamp after it, C-quoted (`"a/sp ace.txt"`),
//! `/dev/null`, and the two paths of a `diff --git a/x b/y` line.

use agent_apply_sdk::paths::normalize;

/// Whether the remaining words of a header line are a timestamp
/// (`2024-01-02 10:00:00.000 +0100`, `Mon Jan  1 10:00:00 2024`).
fn is_timestamp(words: &[&str]) -> bool {
    let Some(first) = words.first() else { return false };
    let days = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
    let starts_with_digit = first.chars().next().is_some_and(|c| c.is_ascii_digit());
    (starts_with_digit && (first.contains('-') || first.contains(':') || first.contains('/')))
        || days.contains(&first.to_ascii_lowercase().trim_end_matches(',')).then_some(()).is_some()
}

/// Undo C-style quoting of a git path: `"a/sp ace\t.txt"`.
fn unquote(s: &str) -> Option<(String, &str)> {
    let body = s.strip_prefix('"')?;
    let mut out: Vec<u8> = Vec::new();
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((String::from_utf8_lossy(&out).into_owned(), &body[i + 1..])),
            '\\' => {
                let (_, e) = chars.next()?;
                match e {
                    'n' => out.push(b'\n'),
                    't' => out.push(b'\t'),
                    '"' => out.push(b'"'),
                    '\\' => out.push(b'\\'),
                    '0'..='7' => {
                        let mut value = e.to_digit(8)?;
                        for _ in 0..2 {
                            let (_, d) = chars.next()?;
                            value = value * 8 + d.to_digit(8)?;
                        }
                        out.push(value as u8);
                    }
                    other => {
                        let mut buf = [0; 4];
                        out.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
                    }
                }
            }
            other => {
                let mut buf = [0; 4];
                out.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    None
}

/// The path of a `---`/`+++` header (after the marker): `None` for
/// `/dev/null`. Timestamps and a trailing tab-separated part are dropped.
pub(crate) fn header_path(raw: &str) -> Option<String> {
    let raw = raw.trim();
    let path = if let Some((path, _)) = unquote(raw) {
        path
    } else {
        let raw = raw.split('\t').next().unwrap_or("").trim_end();
        let words: Vec<&str> = raw.split_whitespace().collect();
        if words.len() > 1 && is_timestamp(&words[1..]) { words[0].to_string() } else { raw.to_string() }
    };
    if path == "/dev/null" || path.is_empty() { None } else { Some(path) }
}

/// The two paths of `diff --git a/x b/y`, prefixes kept.
pub(crate) fn git_line_paths(rest: &str) -> (Option<String>, Option<String>) {
    let rest = rest.trim();
    if let Some((a, tail)) = unquote(rest) {
        let b = tail.trim();
        let b = unquote(b).map(|(p, _)| p).unwrap_or_else(|| b.to_string());
        return (Some(a), Some(b));
    }
    // Prefer the split where both halves name the same file.
    let bytes = rest.as_bytes();
    let mut first = None;
    for (i, _) in rest.match_indices(' ') {
        let (a, b) = (&rest[..i], &rest[i + 1..]);
        if first.is_none() && (b.starts_with("b/") || !a.starts_with("a/")) {
            first = Some(i);
        }
        if a.len() > 2 && b.len() > 2 && a.get(2..) == b.get(2..) && bytes.len() > i {
            return (Some(a.to_string()), Some(b.to_string()));
        }
    }
    match first {
        Some(i) => (Some(rest[..i].to_string()), Some(rest[i + 1..].to_string())),
        None => (Some(rest.to_string()), Some(rest.to_string())),
    }
}

/// The two header paths without git's `a/` and `b/` prefixes, when both have them.
pub(crate) fn strip_prefix_pair(old: Option<String>, new: Option<String>) -> (Option<String>, Option<String>) {
    let ok_old = old.as_deref().is_none_or(|p| p.starts_with("a/"));
    let ok_new = new.as_deref().is_none_or(|p| p.starts_with("b/"));
    if ok_old && ok_new && (old.is_some() || new.is_some()) {
        (old.map(|p| p[2..].to_string()), new.map(|p| p[2..].to_string()))
    } else {
        (old, new)
    }
}

/// A header path, trimmed and normalized.
pub(crate) fn clean(path: String) -> String {
    normalize(path.trim())
}
