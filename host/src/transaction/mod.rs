//! From parsed edits to files: plan the paths an edit touches, refuse the
//! ones it must not, and read the snapshots a plugin applies to.
//!
//! Writing to the repository (blobs, tree, commit, working tree) belongs
//! here too; this build computes changes in memory only.

mod paths;

use std::path::{Path, PathBuf};

use agent_apply_sdk::types::{Edit, File};

pub use paths::{PathError, check_path};

/// A file that cannot be handed to a plugin.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error(transparent)]
    Path(#[from] PathError),
    #[error("{path} is not valid UTF-8 (first bad byte at offset {offset}); only text files can be edited")]
    NotUtf8 { path: String, offset: usize },
    #[error("{path} looks binary (it holds a NUL byte at offset {offset}); binary files are not edited")]
    Binary { path: String, offset: usize },
    #[error("cannot read {path}: {source}")]
    Io { path: String, source: std::io::Error },
}

/// The repo-relative paths the edits name (targets and related paths), plus
/// `candidates`, in first-seen order without repeats.
pub fn planned_paths(edits: &[Edit], candidates: &[String]) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    let named = edits.iter().flat_map(|e| std::iter::once(&e.path).chain(&e.related_paths));
    for path in named.chain(candidates) {
        if !paths.contains(path) {
            paths.push(path.clone());
        }
    }
    paths
}

/// Read the snapshots of `paths` under `root`. Missing files are left out
/// (the plugin treats them as new); every path is checked first.
pub fn read_snapshots(root: &Path, paths: &[String]) -> Result<Vec<File>, SnapshotError> {
    let mut files = Vec::with_capacity(paths.len());
    for path in paths {
        let full: PathBuf = check_path(root, path)?;
        let bytes = match std::fs::read(&full) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(source) => return Err(SnapshotError::Io { path: path.clone(), source }),
        };
        if let Some(offset) = bytes.iter().position(|&b| b == 0) {
            return Err(SnapshotError::Binary { path: path.clone(), offset });
        }
        let content = String::from_utf8(bytes)
            .map_err(|e| SnapshotError::NotUtf8 { path: path.clone(), offset: e.utf8_error().valid_up_to() })?;
        files.push(File { path: path.clone(), content });
    }
    Ok(files)
}
