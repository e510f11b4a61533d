//! Drivers for fuzzing and property-testing a format on arbitrary bytes,
//! shared by the `cargo fuzz` targets (native, through [`Plugin`]), the
//! host's property tests and the replay of the fuzz regression corpus (both
//! through the real wasm components behind the same trait).
//!
//! Each driver returns `Err` for a broken promise of the contract, and a
//! panic or trap inside the format is a failure of its own; any other
//! outcome, including a clean parse error, is fine.

use std::path::Path;

use crate::Plugin;
use crate::types::File;

/// Separates the file content from the reply in an `apply` input. It never
/// occurs in UTF-8, so text seeds never hold it by accident.
pub const SEPARATOR: u8 = 0xFF;

/// An `apply` input: the content every named file starts with, then
/// [`SEPARATOR`], then the reply (all reply, with no file content, when
/// there is no separator). `None` when either part is not UTF-8, which the
/// host refuses before any format sees it.
pub fn split_apply_input(data: &[u8]) -> Option<(&str, &str)> {
    let (content, reply) = match data.iter().position(|&b| b == SEPARATOR) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (&b""[..], data),
    };
    Some((std::str::from_utf8(content).ok()?, std::str::from_utf8(reply).ok()?))
}

/// An `apply` input made of `content` and `reply` (the inverse of
/// [`split_apply_input`]), for seeding corpora.
pub fn join_apply_input(content: &str, reply: &str) -> Vec<u8> {
    [content.as_bytes(), &[SEPARATOR], reply.as_bytes()].concat()
}

/// Parse `data` as a reply: every edit's span must lie inside the reply.
pub fn parse_bytes(plugin: &dyn Plugin, data: &[u8]) -> Result<(), String> {
    let Ok(reply) = std::str::from_utf8(data) else { return Ok(()) };
    let parsed = plugin.parse(reply, &[]);
    for edit in &parsed.edits {
        let span = edit.span;
        if span.start > span.end || span.end as usize > reply.len() {
            return Err(format!(
                "edit of {:?} has span {}..{} in a {}-byte reply",
                edit.path,
                span.start,
                span.end,
                reply.len()
            ));
        }
    }
    Ok(())
}

/// Parse the reply of `data`, give every path its edits name the file
/// content of `data`, and apply: one outcome per edit, and changes only to
/// paths the edits named.
pub fn apply_bytes(plugin: &dyn Plugin, data: &[u8]) -> Result<(), String> {
    let Some((content, reply)) = split_apply_input(data) else { return Ok(()) };
    let parsed = plugin.parse(reply, &[]);
    let mut named: Vec<&str> = Vec::new();
    for path in parsed.edits.iter().flat_map(|e| std::iter::once(&e.path).chain(&e.related_paths)) {
        if !named.contains(&path.as_str()) {
            named.push(path);
        }
    }
    let files = named.iter().map(|path| File { path: path.to_string(), content: content.to_string() }).collect();
    let Ok(output) = plugin.apply(files, parsed.edits.clone(), &[]) else { return Ok(()) };
    if output.outcomes.len() != parsed.edits.len() {
        return Err(format!("{} outcomes for {} edits", output.outcomes.len(), parsed.edits.len()));
    }
    for change in &output.changes {
        let paths: Vec<&str> = match change {
            crate::types::Change::Write(file) => vec![&file.path],
            crate::types::Change::Delete(path) => vec![path],
            crate::types::Change::Rename(r) => vec![&r.from, &r.to],
        };
        if let Some(path) = paths.into_iter().find(|p| !named.contains(p)) {
            return Err(format!("a change to {path:?}, which no edit named"));
        }
    }
    Ok(())
}

/// Run `driver` on every file under `dir` (a fuzz regression corpus),
/// returning how many inputs ran. A missing directory holds no inputs.
pub fn replay(
    plugin: &dyn Plugin,
    dir: &Path,
    driver: fn(&dyn Plugin, &[u8]) -> Result<(), String>,
) -> Result<usize, String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(0) };
    let mut paths: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_file()).collect();
    paths.sort();
    for path in &paths {
        let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        driver(plugin, &data).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(paths.len())
}
