//! Git's content conversions between the working tree and the repository:
//! clean/smudge filter drivers (Git LFS is one), `ident`,
//! `working-tree-encoding`, and end-of-line conversion (`text`, `eol`,
//! `core.autocrlf`). The blob a commit stores must be what `git add` would
//! store, and a file written back must be what `git checkout` would write.
//! libgit2 knows only some of these, and none of the filter drivers; so for
//! a path git converts, the `git` binary itself does the converting
//! (`git hash-object --path`, `git cat-file --filters`). Paths without a
//! conversion, nearly all, never start a process.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use git2::{Oid, Repository};

use super::TxError;

/// Why git converts `path` (the attribute or setting), or `None` when the
/// bytes are stored as they are.
pub fn conversion(repo: &Repository, path: &str) -> Option<String> {
    let attr = |name: &str| repo.get_attr(Path::new(path), name, git2::AttrCheckFlags::FILE_THEN_INDEX).ok().flatten();
    let set = |value: Option<&str>| value.is_some_and(|v| !matches!(v, "false" | "unset" | ""));
    if let Some(filter) = attr("filter").filter(|f| set(Some(f))) {
        return Some(format!("the `{filter}` filter"));
    }
    for name in ["ident", "working-tree-encoding", "eol"] {
        if set(attr(name)) {
            return Some(format!("the `{name}` attribute"));
        }
    }
    match attr("text") {
        Some("false") => None,
        Some(_) => Some("the `text` attribute".into()),
        None => {
            let autocrlf = repo.config().and_then(|c| c.get_string("core.autocrlf")).unwrap_or_default();
            matches!(autocrlf.to_ascii_lowercase().as_str(), "true" | "input")
                .then(|| format!("core.autocrlf={autocrlf}"))
        }
    }
}

/// Whether [`clean`] stores the blob, and where.
#[derive(Clone, Copy)]
pub enum Write<'a> {
    /// Only its id is wanted.
    No,
    /// Into the repository's own database (`None`), or a scratch
    /// repository's: the git directory given, where the filters store what
    /// they keep too (Git LFS's `lfs/objects`).
    To(Option<&'a Path>),
}

/// The blob id `git add` would give `bytes` (working-tree form) at `path`,
/// written where `write` says.
pub fn clean(root: &Path, path: &str, bytes: &[u8], write: Write<'_>) -> Result<Oid, TxError> {
    let mut args = vec!["hash-object", "--stdin"];
    if let Write::To(_) = write {
        args.push("-w");
    }
    let path_arg = format!("--path={path}");
    args.push(&path_arg);
    let scratch = match write {
        Write::To(Some(git_dir)) => Some(git_dir),
        _ => None,
    };
    let out = git(root, &args, Some(bytes), path, scratch)?;
    let hex = String::from_utf8_lossy(&out);
    Oid::from_str(hex.trim()).map_err(|e| failed(path, &format!("git printed no object id ({e})")))
}

/// What `git checkout` writes for `blob` at `path` (working-tree form).
pub fn smudge(root: &Path, path: &str, blob: Oid) -> Result<Vec<u8>, TxError> {
    let path_arg = format!("--path={path}");
    git(root, &["cat-file", "--filters", &path_arg, &blob.to_string()], None, path, None)
}

/// Run git in `root`; with `scratch`, as that scratch repository's git
/// directory on `root`'s files, so neither git nor a filter it starts
/// writes into the repository's `.git` (their `GIT_DIR` is the scratch one).
fn git(
    root: &Path,
    args: &[&str],
    input: Option<&[u8]>,
    path: &str,
    scratch: Option<&Path>,
) -> Result<Vec<u8>, TxError> {
    let mut command = Command::new("git");
    if let Some(git_dir) = scratch {
        command.env("GIT_DIR", git_dir).env("GIT_WORK_TREE", root).env_remove("GIT_OBJECT_DIRECTORY");
    }
    let mut child = super::process_tree::dies_with_run(&mut command)
        .current_dir(root)
        .args(args)
        .env_remove("GIT_INDEX_FILE")
        .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| failed(path, &format!("cannot run git: {e}")))?;
    if let Some(input) = input {
        let mut stdin = child.stdin.take().expect("piped");
        // A filter that stops reading early fails below, with its own words.
        let _ = stdin.write_all(input);
    }
    let out = child.wait_with_output().map_err(|e| failed(path, &format!("git did not finish: {e}")))?;
    if !out.status.success() {
        return Err(failed(path, String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(out.stdout)
}

fn failed(path: &str, why: &str) -> TxError {
    TxError::Converted { path: path.to_string(), conversion: why.to_string() }
}
