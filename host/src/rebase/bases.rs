//! Which version of a file a reply was written against: the one `--base`
//! names, one that `read` showed (recorded as a blob), or HEAD's.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use git2::{ObjectType, Oid, Repository};
use serde::Serialize;

use crate::transaction::GitRepo;

/// Where a base came from, for the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum BaseSource {
    /// `--base REV` or `--base PATH=REV`.
    Flag,
    /// A version `git agent-apply read` showed.
    Read,
    /// The file as HEAD has it.
    Head,
    /// The file as it is: nothing to rebase.
    WorkingTree,
}

/// One version of one file.
#[derive(Debug, Clone)]
pub struct Base {
    pub source: BaseSource,
    /// For messages: "--base HEAD~1", "the version read showed (blob 1a2b3c4)".
    pub label: String,
    /// The blob id of `content`.
    pub blob: String,
    pub content: String,
}

#[derive(Debug, thiserror::Error)]
pub enum BaseError {
    #[error("--base {rev}: no such revision or blob in this repository")]
    Unknown { rev: String },
    #[error("--base {rev}: {what} is not text (binary or not UTF-8)")]
    NotText { rev: String, what: String },
    #[error("--base needs a git repository to look revisions up in")]
    NoRepository,
}

impl BaseError {
    pub fn hint(&self) -> &'static str {
        match self {
            BaseError::Unknown { .. } | BaseError::NotText { .. } => {
                "give a commit (HEAD~1), a tree, `REV:path` or a blob id, for every file or per file as PATH=REV"
            }
            BaseError::NoRepository => "run it inside the repository, or drop --base",
        }
    }
}

/// `--base` as given: for every file, or for one path.
#[derive(Debug, Clone)]
struct Spec {
    path: Option<String>,
    rev: String,
}

/// The bases of one run.
pub struct Bases<'r> {
    /// The repository, by its transaction side: its index says which files
    /// are as committed without hashing them.
    tx: Option<&'r GitRepo>,
    specs: Vec<Spec>,
}

/// The recorded reads, one `BLOB<TAB>PATH` line each, oldest first.
fn reads_log(repo: &Repository) -> PathBuf {
    repo.path().join("agent-apply").join("reads")
}

/// How many bytes of recorded reads are kept: the newest half survives a trim.
const READS_LOG_LIMIT: u64 = 256 * 1024;
/// Recorded reads of one path tried before HEAD's version.
const READS_TRIED: usize = 4;

/// Record that `read` showed `content` of `path`: the blob goes into the
/// object database (so `--base BLOB` and later runs find it), its id into
/// this worktree's log of reads.
pub fn record_read(repo: &Repository, path: &str, content: &str) -> Result<Oid, std::io::Error> {
    let blob = repo.blob(content.as_bytes()).map_err(std::io::Error::other)?;
    let log = reads_log(repo);
    std::fs::create_dir_all(log.parent().expect("the log is in a directory"))?;
    if std::fs::metadata(&log).is_ok_and(|m| m.len() > READS_LOG_LIMIT) {
        trim(&log)?;
    }
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&log)?;
    // One write per line, so concurrent readers append whole lines.
    file.write_all(format!("{blob}\t{path}\n").as_bytes())?;
    Ok(blob)
}

fn trim(log: &Path) -> Result<(), std::io::Error> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let kept = lines[lines.len() / 2..].join("\n") + "\n";
    let temporary = log.with_extension("tmp");
    std::fs::write(&temporary, kept)?;
    std::fs::rename(temporary, log)
}

impl<'r> Bases<'r> {
    /// Check every `--base` value now, so a typo stops the run before any
    /// edit is tried.
    pub fn new(tx: Option<&'r GitRepo>, flags: &[String]) -> Result<Self, BaseError> {
        let specs: Vec<Spec> = flags.iter().map(|flag| parse_flag(flag)).collect();
        if !specs.is_empty() {
            let repo = tx.map(GitRepo::repository).ok_or(BaseError::NoRepository)?;
            for spec in &specs {
                repo.revparse_single(&spec.rev).map_err(|_| BaseError::Unknown { rev: spec.rev.clone() })?;
            }
        }
        Ok(Bases { tx, specs })
    }

    fn repo(&self) -> Option<&'r Repository> {
        self.tx.map(GitRepo::repository)
    }

    /// The base `--base` names for `path` (a per-path value wins), if any,
    /// and if that revision has the file.
    pub fn explicit(&self, path: &str) -> Result<Option<Base>, BaseError> {
        let spec = self
            .specs
            .iter()
            .rev()
            .find(|s| s.path.as_deref() == Some(path))
            .or_else(|| self.specs.iter().rev().find(|s| s.path.is_none()));
        let (Some(spec), Some(repo)) = (spec, self.repo()) else { return Ok(None) };
        let object = repo.revparse_single(&spec.rev).map_err(|_| BaseError::Unknown { rev: spec.rev.clone() })?;
        // A blob id is taken as it is (what `read` recorded is already the
        // working tree's bytes); a tree's entry as `git checkout` writes it.
        let (blob, content) = match object.kind() {
            Some(ObjectType::Blob) => (object.id(), blob_text(repo, object.id())),
            _ => match object.peel_to_tree().ok().and_then(|tree| tree.get_path(Path::new(path)).ok()) {
                Some(entry) => {
                    let converted = crate::transaction::conversion(repo, path).is_some();
                    (entry.id(), checked_out(repo, path, entry.id(), converted))
                }
                None => return Ok(None),
            },
        };
        let content = content
            .ok_or_else(|| BaseError::NotText { rev: spec.rev.clone(), what: format!("its version of {path}") })?;
        Ok(Some(Base {
            source: BaseSource::Flag,
            label: format!("--base {}", spec.rev),
            blob: blob.to_string(),
            content,
        }))
    }

    /// Versions of `path` the model may have read, other than `current`:
    /// the ones `read` showed, newest first, then HEAD's.
    pub fn candidates(&self, path: &str, current: &str) -> Vec<Base> {
        let Some(repo) = self.repo() else { return Vec::new() };
        let mut seen = vec![Some(blob_id(current))];
        let mut out = Vec::new();
        for blob in self.reads_of(path) {
            if out.len() == READS_TRIED {
                break;
            }
            if seen.contains(&Some(blob)) {
                continue;
            }
            seen.push(Some(blob));
            if let Some(content) = blob_text(repo, blob) {
                let label = format!("the version `read` showed (blob {})", short(blob));
                out.push(Base { source: BaseSource::Read, label, blob: blob.to_string(), content });
            }
        }
        out.extend(self.head_other_than(path, current).filter(|head| !seen.contains(&Oid::from_str(&head.blob).ok())));
        out
    }

    /// `path` as HEAD has it, unless that is `current`. Where git converts
    /// nothing between blob and file, equal ids say so and HEAD's blob is
    /// not read (inflated and hashed again by libgit2): most files have no
    /// uncommitted change. The id of `current` is the index entry's when the
    /// file's stat data proves the file is that entry's and as long as
    /// `current` (the file as the run read it): hashing every file a reply
    /// edits was a tenth of a 10 MB `compact` reply's run, in SHA-1.
    pub fn head_other_than(&self, path: &str, current: &str) -> Option<Base> {
        let repo = self.repo()?;
        let commit = repo.head().ok()?.peel_to_commit().ok()?;
        let blob = commit.tree().ok()?.get_path(Path::new(path)).ok()?.id();
        let converted = crate::transaction::conversion(repo, path).is_some();
        if !converted && blob == self.id_of(path, current) {
            return None;
        }
        let content = checked_out(repo, path, blob, converted).filter(|content| content != current)?;
        let label = format!("HEAD ({})", short(commit.id()));
        Some(Base { source: BaseSource::Head, label, blob: blob.to_string(), content })
    }

    /// The blob id of `current`, the content of `path` as the run read it:
    /// the index's, where stat data proves the file is the index entry's
    /// and that entry is as long as `current`, else hashed.
    fn id_of(&self, path: &str, current: &str) -> Oid {
        let proven = self.tx.and_then(|tx| tx.blob_proven_by_stat(path, current.len()));
        proven.unwrap_or_else(|| blob_id(current))
    }

    /// Whether the newest recorded read of `path` is `current`: the model
    /// was then shown this very version.
    pub fn last_read_is(&self, path: &str, current: &str) -> bool {
        self.reads_of(path).next().is_some_and(|blob| blob == blob_id(current))
    }

    /// Recorded reads of `path`, newest first.
    fn reads_of(&self, path: &str) -> impl Iterator<Item = Oid> {
        let text = self.repo().and_then(|repo| std::fs::read_to_string(reads_log(repo)).ok()).unwrap_or_default();
        let blobs: Vec<Oid> = text
            .lines()
            .rev()
            .filter_map(|line| line.split_once('\t'))
            .filter(|(_, p)| *p == path)
            .filter_map(|(blob, _)| Oid::from_str(blob).ok())
            .collect();
        blobs.into_iter()
    }
}

/// `PATH=REV` names one file's base; anything else is every file's.
fn parse_flag(flag: &str) -> Spec {
    match flag.split_once('=') {
        Some((path, rev)) if !path.is_empty() && !rev.is_empty() => {
            Spec { path: Some(agent_apply_sdk::paths::normalize(path)), rev: rev.to_string() }
        }
        _ => Spec { path: None, rev: flag.to_string() },
    }
}

/// The id git gives a blob of `text`. Hashed with the `sha1` crate, which
/// uses the CPU's SHA instructions: libgit2's collision-detecting SHA-1 took
/// 7% of a run with megabytes of line-numbered edits, and these ids only
/// compare versions the user's own repository holds.
pub fn blob_id(text: &str) -> Oid {
    use sha1::{Digest as _, Sha1};
    let mut hasher = Sha1::new();
    hasher.update(format!("blob {}\0", text.len()));
    hasher.update(text);
    Oid::from_bytes(&hasher.finalize()).expect("a SHA-1 digest is an object id")
}

fn blob_text(repo: &Repository, blob: Oid) -> Option<String> {
    let blob = repo.find_blob(blob).ok()?;
    if blob.is_binary() {
        return None;
    }
    String::from_utf8(blob.content().to_vec()).ok()
}

/// A tree's blob of `path` as `git checkout` writes it (CRLF, filters and
/// all): the bytes the model saw in the working tree, and the form the
/// current file is merged in. `converted`: git converts `path` (see
/// [`crate::transaction::conversion`]).
fn checked_out(repo: &Repository, path: &str, blob: Oid, converted: bool) -> Option<String> {
    match (converted, repo.workdir()) {
        (true, Some(root)) => String::from_utf8(crate::transaction::smudge(root, path, blob).ok()?).ok(),
        _ => blob_text(repo, blob),
    }
}

pub fn short(oid: Oid) -> String {
    oid.to_string()[..7].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_ids_are_the_ones_git_gives() {
        for text in ["", "one line\n", "no final newline", "ünïcödé\r\nlines\r\n"] {
            assert_eq!(blob_id(text), Oid::hash_object(ObjectType::Blob, text.as_bytes()).unwrap(), "{text:?}");
        }
    }

    #[test]
    fn flags() {
        let spec = parse_flag("src/a.rs=HEAD~1");
        assert_eq!((spec.path.as_deref(), spec.rev.as_str()), (Some("src/a.rs"), "HEAD~1"));
        let spec = parse_flag("HEAD~1");
        assert_eq!((spec.path, spec.rev.as_str()), (None, "HEAD~1"));
    }
}
