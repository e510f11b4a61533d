//! The path policy: edits stay inside the repository.

use std::path::{Component, Path, PathBuf};

/// Why a path named by an edit is refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PathError {
    #[error("{path:?} is an absolute path; edits must name files relative to the repository root")]
    Absolute { path: String },
    #[error("{path:?} leaves the repository through `..`")]
    Escapes { path: String },
    #[error("{path:?} is inside .git/, which edits may never touch")]
    GitDir { path: String },
    #[error("{path:?} is empty or not a file path")]
    Empty { path: String },
    #[error("{path:?} goes through a symlink that leads outside the repository")]
    SymlinkEscape { path: String },
}

impl PathError {
    /// The path the error is about.
    pub fn path(&self) -> &str {
        match self {
            PathError::Absolute { path }
            | PathError::Escapes { path }
            | PathError::GitDir { path }
            | PathError::Empty { path }
            | PathError::SymlinkEscape { path } => path,
        }
    }
}

/// `root/path` if `path` is a repo-relative path that stays inside the repo
/// (also through symlinks of existing parent directories), else why not.
pub fn check_path(root: &Path, path: &str) -> Result<PathBuf, PathError> {
    let owned = || path.to_string();
    if path.trim().is_empty() || path.contains('\0') {
        return Err(PathError::Empty { path: owned() });
    }
    let relative = Path::new(path);
    if relative.is_absolute() || path.starts_with('/') || path.starts_with('\\') || path.get(1..2) == Some(":") {
        return Err(PathError::Absolute { path: owned() });
    }
    let mut depth = 0usize;
    for component in relative.components() {
        match component {
            Component::Normal(name) => {
                if depth == 0 && name.eq_ignore_ascii_case(".git") {
                    return Err(PathError::GitDir { path: owned() });
                }
                depth += 1;
            }
            Component::CurDir => {}
            Component::ParentDir => return Err(PathError::Escapes { path: owned() }),
            Component::RootDir | Component::Prefix(_) => return Err(PathError::Absolute { path: owned() }),
        }
    }
    let full = root.join(relative);
    // The deepest existing ancestor must resolve inside the repository.
    let canonical_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let mut existing = full.as_path();
    while !existing.exists() && existing.symlink_metadata().is_err() {
        match existing.parent() {
            Some(parent) => existing = parent,
            None => break,
        }
    }
    if let Ok(resolved) = existing.canonicalize() {
        if !resolved.starts_with(&canonical_root) {
            return Err(PathError::SymlinkEscape { path: owned() });
        }
    } else if existing.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
        // A dangling symlink: where it points cannot be checked, so refuse.
        return Err(PathError::SymlinkEscape { path: owned() });
    }
    Ok(full)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_paths_that_leave_the_repo() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert!(matches!(check_path(root, "/etc/passwd"), Err(PathError::Absolute { .. })));
        assert!(matches!(check_path(root, "a/../../x"), Err(PathError::Escapes { .. })));
        assert!(matches!(check_path(root, ".git/config"), Err(PathError::GitDir { .. })));
        assert!(matches!(check_path(root, ".GIT/hooks/pre-commit"), Err(PathError::GitDir { .. })));
        assert!(matches!(check_path(root, ""), Err(PathError::Empty { .. })));
        assert_eq!(check_path(root, "src/new/file.rs").unwrap(), root.join("src/new/file.rs"));
        assert!(check_path(root, "docs/.gitignore").is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn refuses_symlinks_that_point_outside() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("src"), dir.path().join("inside")).unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        assert!(matches!(check_path(dir.path(), "out/x.txt"), Err(PathError::SymlinkEscape { .. })));
        assert!(check_path(dir.path(), "inside/x.txt").is_ok());
    }
}
