//! Snapshots: the text of the files a reply names, as the plugin gets
//! them, refused where a file is not text or over the limits.

use std::io::Read as _;
use std::path::Path;

use agent_apply_sdk::types::{Change, Edit};

use super::PathError;
use crate::limits::{InputLimits, long_line, nul_offset};

/// A file that cannot be handed to a plugin.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error(transparent)]
    Path(#[from] PathError),
    #[error("{path} is not valid UTF-8 (first bad byte at offset {offset}); only text files can be edited")]
    NotUtf8 { path: String, offset: usize },
    #[error("{path} looks binary (it holds a NUL byte at offset {offset}); binary files are not edited")]
    Binary { path: String, offset: usize },
    #[error(
        "the edit would make {path} binary (a NUL byte at offset {offset} of its new content); binary content is not written"
    )]
    BecomesBinary { path: String, offset: usize },
    #[error("{path} is ignored by git; pass --allow-ignored to edit it anyway")]
    Ignored { path: String },
    #[error("{path} is {size} bytes, over the {limit}-byte limit for edited files")]
    TooLarge { path: String, size: u64, limit: u64 },
    #[error("line {line} of {path} is {length} bytes long, over the {limit}-byte line limit")]
    LineTooLong { path: String, line: usize, length: usize, limit: usize },
    #[error("cannot read {path}: {source}")]
    Io { path: String, source: std::io::Error },
}

impl SnapshotError {
    /// Which limit to raise, when the refusal is one.
    pub fn hint(&self) -> Option<String> {
        let key = match self {
            SnapshotError::TooLarge { .. } => "max-file-bytes",
            SnapshotError::LineTooLong { .. } => "max-line-bytes",
            _ => return None,
        };
        Some(crate::limits::raise_hint(key))
    }

    /// The path the error is about.
    pub fn path(&self) -> &str {
        match self {
            SnapshotError::Path(e) => e.path(),
            SnapshotError::NotUtf8 { path, .. }
            | SnapshotError::Binary { path, .. }
            | SnapshotError::BecomesBinary { path, .. }
            | SnapshotError::Ignored { path }
            | SnapshotError::TooLarge { path, .. }
            | SnapshotError::LineTooLong { path, .. }
            | SnapshotError::Io { path, .. } => path,
        }
    }
}

/// The repo-relative paths the edits name (targets and related paths), plus
/// `candidates`, in first-seen order without repeats.
pub fn planned_paths(edits: &[Edit], candidates: &[String]) -> Vec<String> {
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let named = edits.iter().flat_map(|e| std::iter::once(&e.path).chain(&e.related_paths));
    named.chain(candidates).filter(|path| seen.insert(path.as_str())).cloned().collect()
}

/// The changes whose new content is not text (it holds a NUL byte, as a
/// `\u0000` escape in a JSON edit can put there): each refused like a binary
/// target, by path.
pub fn binary_changes(changes: &[Change]) -> Vec<SnapshotError> {
    let written = changes.iter().filter_map(|change| match change {
        Change::Write(file) => Some((&file.path, &file.content)),
        Change::Rename(rename) => Some((&rename.to, &rename.content)),
        Change::Delete(_) => None,
    });
    written
        .filter_map(|(path, content)| {
            nul_offset(content.as_bytes()).map(|offset| SnapshotError::BecomesBinary { path: path.clone(), offset })
        })
        .collect()
}

/// The text of the file at `full` (called `path` in errors), if it exists
/// and is within `limits`: a directory, a file over `max-file-bytes`, a
/// binary, an overlong line or bad UTF-8 is refused.
pub fn read_text(full: &Path, path: &str, limits: &InputLimits) -> Result<Option<String>, SnapshotError> {
    let max_bytes = limits.file_bytes;
    let io = |source| SnapshotError::Io { path: path.to_string(), source };
    let size = match std::fs::metadata(full) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
        Ok(meta) if meta.is_dir() => {
            return Err(io(std::io::Error::other("it is a directory")));
        }
        Ok(meta) if meta.len() > max_bytes => {
            return Err(SnapshotError::TooLarge { path: path.to_string(), size: meta.len(), limit: max_bytes });
        }
        Ok(meta) => meta.len(),
    };
    // Read no more than the limit: the file may have grown since `metadata`.
    // Sized up front (one more byte, to see the end): no regrowing copies.
    let mut bytes = Vec::with_capacity(size as usize + 1);
    std::fs::File::open(full).and_then(|f| f.take(max_bytes + 1).read_to_end(&mut bytes)).map_err(io)?;
    text_within(bytes, path, limits).map(Some)
}

/// `bytes` (the content of `path`) as text, if within `limits`.
pub fn text_within(bytes: Vec<u8>, path: &str, limits: &InputLimits) -> Result<String, SnapshotError> {
    if bytes.len() as u64 > limits.file_bytes {
        let limit = limits.file_bytes;
        return Err(SnapshotError::TooLarge { path: path.to_string(), size: bytes.len() as u64, limit });
    }
    if let Some(offset) = nul_offset(&bytes) {
        return Err(SnapshotError::Binary { path: path.to_string(), offset });
    }
    if let Some((line, length)) = long_line(&bytes, limits.line_bytes) {
        return Err(SnapshotError::LineTooLong { path: path.to_string(), line, length, limit: limits.line_bytes });
    }
    String::from_utf8(bytes)
        .map_err(|e| SnapshotError::NotUtf8 { path: path.to_string(), offset: e.utf8_error().valid_up_to() })
}
