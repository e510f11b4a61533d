//! The path policy: edits stay inside the repository, in plain files of its
//! own working tree. The lexical rules live in the SDK
//! ([`agent_apply_sdk::repo_path`]); this module adds what needs the file
//! system. [`super::protect`] adds the files a reply may never change, and
//! [`super::GitRepo::check_edit_path`] the checks that need the index.

use std::path::{Path, PathBuf};

use agent_apply_sdk::repo_path::{self, RepoPathError};

/// The longest full path the tool writes, in bytes, including the temp file
/// written beside it (Linux `PATH_MAX` is 4096 with its NUL).
const PATH_MAX: usize = 4095;

/// Why a path named by an edit is refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PathError {
    #[error("{path:?} {problem}")]
    Invalid { path: String, problem: RepoPathError },
    #[error("{path:?} is {length} bytes long inside this repository, over the {PATH_MAX}-byte path limit")]
    TooLong { path: String, length: usize },
    #[error("{path:?} goes through the symlink {link:?}, which leads outside the repository")]
    SymlinkEscape { path: String, link: String },
    #[error("{path:?} goes through the symlink {link:?} (to {target:?}); name the file under {target:?} instead")]
    ThroughSymlink { path: String, link: String, target: String },
    #[error("{path:?} is a symlink to {target:?}; edit {target:?} instead")]
    Symlink { path: String, target: String },
    #[error("{path:?} is inside {repo:?}, a repository of its own (submodule or nested repo); edit it there")]
    NestedRepository { path: String, repo: String },
    #[error("{path:?} is a directory, not a file")]
    Directory { path: String },
    #[error("{path:?} cannot be a file: {file:?} is a file, not a directory")]
    UnderFile { path: String, file: String },
    #[error("{path:?} is protected: {reason}")]
    Protected { path: String, reason: String },
}

impl PathError {
    /// The path the error is about.
    pub fn path(&self) -> &str {
        match self {
            PathError::Invalid { path, .. }
            | PathError::TooLong { path, .. }
            | PathError::SymlinkEscape { path, .. }
            | PathError::ThroughSymlink { path, .. }
            | PathError::Symlink { path, .. }
            | PathError::NestedRepository { path, .. }
            | PathError::Directory { path }
            | PathError::UnderFile { path, .. }
            | PathError::Protected { path, .. } => path,
        }
    }

    /// What the user can do about it, where there is something to do.
    pub fn hint(&self) -> Option<String> {
        match self {
            PathError::Protected { path, .. } => Some(format!(
                "if the reply really should change it, add a glob matching {path:?} to `allow-protected` in \
                 .agent-apply.toml or your user config (a reply can never change either)"
            )),
            _ => None,
        }
    }
}

/// `root/path` if `path` is a plain repo-relative file path that stays inside
/// the repository: valid by the SDK's lexical rules, not through any symlink,
/// not inside a nested repository, not a directory or symlink itself, and
/// short enough to be written (with its temp file) on this system.
pub fn check_path(root: &Path, path: &str) -> Result<PathBuf, PathError> {
    let owned = || path.to_string();
    repo_path::validate(path).map_err(|problem| PathError::Invalid { path: owned(), problem })?;
    let full = root.join(path);
    // The temp file beside it must fit too.
    let parent = full.parent().map_or(0, |p| p.as_os_str().len());
    let length = full.as_os_str().len().max(parent + 1 + super::worktree::TEMP_NAME_LEN);
    if length > PATH_MAX {
        return Err(PathError::TooLong { path: owned(), length });
    }
    let mut prefix = String::new();
    let components: Vec<&str> = path.split('/').collect();
    for (index, name) in components.iter().enumerate() {
        if !prefix.is_empty() {
            prefix.push('/');
        }
        prefix.push_str(name);
        let at = root.join(&prefix);
        let Ok(meta) = at.symlink_metadata() else {
            // Nothing further exists: the rest is created as directories.
            return Ok(full);
        };
        let last = index + 1 == components.len();
        if meta.file_type().is_symlink() {
            return Err(symlink_error(root, path, &prefix, &at, last));
        }
        if last {
            return if meta.is_dir() { Err(PathError::Directory { path: owned() }) } else { Ok(full) };
        }
        if !meta.is_dir() {
            return Err(PathError::UnderFile { path: owned(), file: prefix });
        }
        if at.join(".git").symlink_metadata().is_ok() {
            return Err(PathError::NestedRepository { path: owned(), repo: prefix });
        }
    }
    Ok(full)
}

/// `path` with `.` and `..` components folded away without touching the
/// file system. Safe for paths that [`check_path`] then checks: with no
/// symlink on the way, the lexical and the physical parent are the same.
pub fn lexical_normal(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                normal.pop();
            }
            other => normal.push(other),
        }
    }
    normal
}

/// The refusal for a path whose component `link` (at `at`) is a symlink.
fn symlink_error(root: &Path, path: &str, link: &str, at: &Path, last: bool) -> PathError {
    let canonical_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let inside = at
        .canonicalize()
        .ok()
        .and_then(|resolved| resolved.strip_prefix(&canonical_root).ok().map(|r| r.to_string_lossy().into_owned()));
    match inside {
        Some(target) if last => PathError::Symlink { path: path.to_string(), target },
        Some(target) => PathError::ThroughSymlink { path: path.to_string(), link: link.to_string(), target },
        // Outside, or dangling: where it leads cannot be shown to be inside.
        None => PathError::SymlinkEscape { path: path.to_string(), link: link.to_string() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(root: &Path, path: &str) -> Option<RepoPathError> {
        match check_path(root, path) {
            Err(PathError::Invalid { problem, .. }) => Some(problem),
            _ => None,
        }
    }

    #[test]
    fn refuses_paths_that_leave_the_repo() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert_eq!(problem(root, "/etc/passwd"), Some(RepoPathError::Absolute));
        assert_eq!(problem(root, "a/../../x"), Some(RepoPathError::ParentDir));
        assert_eq!(problem(root, ".git/config"), Some(RepoPathError::GitDir));
        assert_eq!(problem(root, ".GIT/hooks/pre-commit"), Some(RepoPathError::GitDir));
        assert_eq!(problem(root, ""), Some(RepoPathError::Empty));
        assert_eq!(check_path(root, "src/new/file.rs").unwrap(), root.join("src/new/file.rs"));
        assert!(check_path(root, "docs/.gitignore").is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn refuses_every_path_through_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/notes.txt"), "n\n").unwrap();
        std::os::unix::fs::symlink(dir.path().join("src"), dir.path().join("inside")).unwrap();
        std::os::unix::fs::symlink("notes.txt", dir.path().join("src/link.txt")).unwrap();
        assert!(matches!(check_path(dir.path(), "out/x.txt"), Err(PathError::SymlinkEscape { .. })));
        assert_eq!(
            check_path(dir.path(), "inside/x.txt"),
            Err(PathError::ThroughSymlink { path: "inside/x.txt".into(), link: "inside".into(), target: "src".into() })
        );
        assert_eq!(
            check_path(dir.path(), "src/link.txt"),
            Err(PathError::Symlink { path: "src/link.txt".into(), target: "src/notes.txt".into() })
        );
    }

    #[test]
    fn refuses_directories_nested_repositories_and_overlong_paths() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("sub/inner/.git")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("file.txt"), "").unwrap();
        assert!(matches!(check_path(root, "sub/inner/config"), Err(PathError::NestedRepository { .. })));
        assert!(matches!(check_path(root, "src"), Err(PathError::Directory { .. })));
        assert!(matches!(check_path(root, "file.txt/x"), Err(PathError::UnderFile { .. })));
        let deep = format!("{}/{}", vec!["d".repeat(240); 16].join("/"), "f".repeat(230));
        assert!(matches!(check_path(root, &deep), Err(PathError::TooLong { .. })));
    }
}
