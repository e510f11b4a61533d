//! The lexical half of the path policy: whether a path a reply names is a
//! plain repo-relative file path, judged from its text alone. The host adds
//! what needs the file system (symlinks, nested repositories, protected
//! files); formats may call [`validate`] to refuse a path early, with the
//! same words the host would use.
//!
//! The rules follow what git itself accepts in an index (no `.`, `..` or
//! `.git` component, no empty component) and what every file system under a
//! repository can hold (a name within `NAME_MAX`), and refuse names that
//! would mislead a person reviewing the commit: control characters, line
//! breaks and bidirectional overrides, which can make `evil.sh` display as
//! something else.

/// The longest file name (one path component) in bytes, as on Linux and
/// macOS (`NAME_MAX`).
pub const NAME_MAX: usize = 255;
/// The longest path in bytes a repo-relative path may have; the host checks
/// the full path (root included) against the system's `PATH_MAX` too.
pub const PATH_MAX: usize = 4095;

/// Why a path is not a plain repo-relative file path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RepoPathError {
    /// Empty, or only whitespace.
    Empty,
    /// Starts at a root (`/etc/passwd`, `\\server`, `C:`).
    Absolute,
    /// Holds a `..` component.
    ParentDir,
    /// Holds a `.git` component (in any case, or a spelling some file system
    /// folds to it: `.git.`, `.git `, `git~1`).
    GitDir,
    /// Ends with `/`: it names a directory.
    Directory,
    /// Holds an empty component (`a//b`) or a `.` component (`a/./b`).
    OddComponent,
    /// Holds a backslash, which is a name character on Unix and a separator
    /// on Windows: the path would mean different files on each.
    Backslash,
    /// A component longer than [`NAME_MAX`] bytes.
    NameTooLong {
        /// Its length in bytes.
        length: usize,
    },
    /// Longer than [`PATH_MAX`] bytes.
    PathTooLong {
        /// Its length in bytes.
        length: usize,
    },
    /// Holds a control character (NUL, a line break, escape, …).
    Control {
        /// The character, as `U+XXXX`.
        code: u32,
    },
    /// Holds a bidirectional-text control (U+202E and its kin).
    Bidi {
        /// The character, as `U+XXXX`.
        code: u32,
    },
}

impl std::fmt::Display for RepoPathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RepoPathError::Empty => write!(f, "is empty or not a file path"),
            RepoPathError::Absolute => {
                write!(f, "is an absolute path; edits must name files relative to the repository root")
            }
            RepoPathError::ParentDir => write!(f, "leaves the repository through `..`"),
            RepoPathError::GitDir => write!(f, "is inside a .git directory, which edits may never touch"),
            RepoPathError::Directory => write!(f, "ends with `/`: it names a directory, not a file"),
            RepoPathError::OddComponent => {
                write!(f, "has an empty or `.` component; write the path as plain names joined by `/`")
            }
            RepoPathError::Backslash => write!(f, "holds a backslash; separate directories with `/`"),
            RepoPathError::NameTooLong { length } => {
                write!(f, "has a name of {length} bytes, over the {NAME_MAX}-byte limit of file systems")
            }
            RepoPathError::PathTooLong { length } => {
                write!(f, "is {length} bytes long, over the {PATH_MAX}-byte limit")
            }
            RepoPathError::Control { code } => {
                write!(f, "holds the control character U+{code:04X}; file names must be printable")
            }
            RepoPathError::Bidi { code } => write!(
                f,
                "holds the bidirectional-text control U+{code:04X}, which makes a name display as something else"
            ),
        }
    }
}

impl std::error::Error for RepoPathError {}

/// Whether `path` is a plain repo-relative file path (see the module docs).
pub fn validate(path: &str) -> Result<(), RepoPathError> {
    if path.trim().is_empty() {
        return Err(RepoPathError::Empty);
    }
    if let Some(c) = path.chars().find(|c| c.is_control()) {
        return Err(RepoPathError::Control { code: c as u32 });
    }
    if let Some(c) = path.chars().find(|c| is_bidi_control(*c)) {
        return Err(RepoPathError::Bidi { code: c as u32 });
    }
    let bytes = path.as_bytes();
    if path.starts_with('/') || path.starts_with('\\') || (bytes.len() >= 2 && bytes[1] == b':') {
        return Err(RepoPathError::Absolute);
    }
    if path.contains('\\') {
        return Err(RepoPathError::Backslash);
    }
    if path.len() > PATH_MAX {
        return Err(RepoPathError::PathTooLong { length: path.len() });
    }
    if path.ends_with('/') {
        return Err(RepoPathError::Directory);
    }
    for component in path.split('/') {
        match component {
            ".." => return Err(RepoPathError::ParentDir),
            "" | "." => return Err(RepoPathError::OddComponent),
            name if is_git_dir_name(name) => return Err(RepoPathError::GitDir),
            name if name.len() > NAME_MAX => return Err(RepoPathError::NameTooLong { length: name.len() }),
            _ => {}
        }
    }
    Ok(())
}

/// `.git` as git itself refuses it in a path: any case, with trailing dots
/// or spaces (which Windows drops), or as its NTFS short name `git~1`.
pub fn is_git_dir_name(name: &str) -> bool {
    let trimmed = name.trim_end_matches(['.', ' ']);
    trimmed.eq_ignore_ascii_case(".git") || name.eq_ignore_ascii_case("git~1")
}

/// The Unicode bidirectional controls: embeddings, overrides, isolates and
/// marks.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_paths_pass() {
        for path in ["a.txt", "src/app.py", "docs/.gitignore", "Makefile", ".github/workflows/ci.yml", "a b/c d.txt"] {
            assert_eq!(validate(path), Ok(()), "{path}");
        }
    }

    #[test]
    fn each_rule_refuses_its_paths() {
        let cases: &[(&str, RepoPathError)] = &[
            ("", RepoPathError::Empty),
            ("  ", RepoPathError::Empty),
            ("/etc/passwd", RepoPathError::Absolute),
            ("C:/x", RepoPathError::Absolute),
            ("\\\\server\\x", RepoPathError::Absolute),
            ("a\\b.txt", RepoPathError::Backslash),
            ("a/../../x", RepoPathError::ParentDir),
            ("..", RepoPathError::ParentDir),
            (".git/config", RepoPathError::GitDir),
            ("sub/inner/.GIT/config", RepoPathError::GitDir),
            ("sub/.git./hooks/x", RepoPathError::GitDir),
            ("GIT~1/config", RepoPathError::GitDir),
            ("dir/", RepoPathError::Directory),
            (".", RepoPathError::OddComponent),
            ("a//b", RepoPathError::OddComponent),
            ("a/./b", RepoPathError::OddComponent),
            ("a\nb", RepoPathError::Control { code: 10 }),
            ("a\u{0}b", RepoPathError::Control { code: 0 }),
            ("a\u{1b}[31mb", RepoPathError::Control { code: 0x1b }),
            ("invoice\u{202E}fdp.sh", RepoPathError::Bidi { code: 0x202E }),
        ];
        for (path, expected) in cases {
            assert_eq!(validate(path).as_ref(), Err(expected), "{path:?}");
        }
        let long_name = "x".repeat(NAME_MAX + 1);
        assert_eq!(validate(&long_name), Err(RepoPathError::NameTooLong { length: NAME_MAX + 1 }));
        assert_eq!(validate(&"x".repeat(NAME_MAX)), Ok(()));
        let long_path = vec!["d"; 2100].join("/");
        assert_eq!(validate(&long_path), Err(RepoPathError::PathTooLong { length: long_path.len() }));
    }
}
