//! `git agent-apply lint [--staged] [--json] [PATH...]`: edit-format
//! leftovers (every loaded format's `lint`) and git merge-conflict markers
//! in files — the working tree, or with `--staged` the index blobs.

use std::path::{Path, PathBuf};

use agent_apply_sdk::text::{lines_with_endings, strip_ending};
use agent_apply_sdk::types::File;
use clap::Args;
use schemars::JsonSchema;
use serde::Serialize;

use super::{CommandError, Exit, GlobalArgs, open_workspace};
use crate::limits::InputLimits;
use crate::runtime::PluginInstance;
use crate::transaction::{SnapshotError, read_text, text_within};

#[derive(Debug, Args)]
pub struct LintArgs {
    /// Check the staged content of staged paths (what `git commit` would
    /// record), not the working tree.
    #[arg(long)]
    staged: bool,
    /// Files or directories to check (default: every tracked file, or with
    /// `--staged` every staged file).
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
}

/// One leftover in one file.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Finding {
    path: String,
    line: u32,
    end_line: u32,
    /// `leftover` (a format's) or `merge-conflict`.
    kind: &'static str,
    /// The format that reported it; none for merge-conflict markers.
    format: Option<String>,
    message: String,
    hint: Option<String>,
}

/// `lint --json`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct LintReport {
    schema: u32,
    status: &'static str,
    staged: bool,
    files_checked: usize,
    skipped: Vec<Skipped>,
    findings: Vec<Finding>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Skipped {
    path: String,
    reason: String,
}

/// Where a candidate file's content is read from, when its turn comes (so
/// only one file is held at a time).
enum Source {
    WorkingTree(PathBuf),
    Blob(git2::Oid),
}

pub fn run(global: &GlobalArgs, args: &LintArgs) -> Result<Exit, CommandError> {
    let started = std::time::Instant::now();
    let workspace = open_workspace(global)?;
    let repo = git2::Repository::open(&workspace.root).map_err(|e| {
        CommandError::usage(format!("lint needs a git repository: {}", e.message()))
            .hint("run it inside a repository, or pass --repo DIR")
    })?;
    let filter = path_filter(&workspace.root, &args.paths)?;
    let candidates = if args.staged { staged(&repo, &filter)? } else { working_tree(&repo, &workspace.root, &filter)? };

    let mut formats = Vec::new();
    for entry in workspace.registry.entries() {
        formats.push((entry.name.clone(), workspace.registry.instantiate(entry)?));
    }
    let mut findings = Vec::new();
    let mut skipped = Vec::new();
    let mut checked = 0;
    let limits = workspace.config.input_limits();
    for (path, source) in candidates {
        if opted_out(&repo, &path) {
            skipped.push(Skipped { path, reason: "gitattributes".into() });
            continue;
        }
        let content = match read_candidate(&repo, &path, &source, &limits) {
            Ok(Some(content)) => content,
            Ok(None) => continue,
            Err(reason) => {
                skipped.push(Skipped { path, reason });
                continue;
            }
        };
        checked += 1;
        findings.extend(findings_in(File { path, content }, &mut formats)?);
    }

    let clean = findings.is_empty();
    let status = if clean { "clean" } else { "findings" };
    if global.json {
        let report = LintReport {
            schema: crate::report::SCHEMA,
            status,
            staged: args.staged,
            files_checked: checked,
            skipped,
            findings,
        };
        super::output::json(&report);
    } else {
        print_findings(&findings, args.staged);
    }
    if global.verbose {
        let plugin_output: Vec<_> = formats.iter().map(|(name, instance)| (name.clone(), instance.stderr())).collect();
        let total_ms = started.elapsed().as_secs_f64() * 1000.0;
        super::output::verbose(&plugin_output, &format!("{checked} files linted, total {total_ms:.1} ms"));
    }
    Ok(if clean { Exit::Ok } else { Exit::EditsFailed })
}

/// Conflict markers and every format's leftovers in `file`, top to bottom.
fn findings_in(file: File, formats: &mut [(String, PluginInstance)]) -> Result<Vec<Finding>, CommandError> {
    let mut found = conflict_markers(&file.path, &file.content);
    for (name, instance) in formats.iter_mut() {
        for d in instance.lint(&file)? {
            let (line, end_line) = d.lines.map_or((1, 1), |l| (l.start, l.end));
            found.push(Finding {
                path: file.path.clone(),
                line,
                end_line,
                kind: "leftover",
                format: Some(name.clone()),
                message: d.message,
                hint: d.hint,
            });
        }
    }
    found.sort_by_key(|f| (f.line, f.end_line));
    Ok(found)
}

/// `path:line: message [format]` lines, and a count on stderr.
fn print_findings(findings: &[Finding], staged: bool) {
    for f in findings {
        let tag = f.format.as_deref().unwrap_or("git");
        println!("{}:{}: {} [{tag}]", f.path, f.line, f.message);
    }
    if findings.is_empty() {
        return;
    }
    let mut paths: Vec<&str> = findings.iter().map(|f| f.path.as_str()).collect();
    paths.dedup();
    let files = paths.len();
    eprintln!(
        "{} finding{} in {files} file{}{}",
        findings.len(),
        if findings.len() == 1 { "" } else { "s" },
        if files == 1 { "" } else { "s" },
        if staged { " (staged content)" } else { "" }
    );
}

/// A candidate's text, or why it is skipped: binary, not UTF-8, or over
/// `max-file-bytes` / `max-line-bytes` (checked before the content is read).
fn read_candidate(
    repo: &git2::Repository,
    path: &str,
    source: &Source,
    limits: &InputLimits,
) -> Result<Option<String>, String> {
    let read = match source {
        Source::WorkingTree(full) => read_text(full, path, limits),
        Source::Blob(id) => {
            let size = repo.odb().and_then(|odb| odb.read_header(*id)).map(|(size, _)| size as u64);
            match size {
                Ok(size) if size > limits.file_bytes => {
                    Err(SnapshotError::TooLarge { path: path.to_string(), size, limit: limits.file_bytes })
                }
                _ => match repo.find_blob(*id) {
                    Ok(blob) => text_within(blob.content().to_vec(), path, limits).map(Some),
                    Err(e) => return Err(format!("unreadable: {}", e.message())),
                },
            }
        }
    };
    read.map_err(|error| match error {
        SnapshotError::Binary { .. } => "binary".into(),
        SnapshotError::NotUtf8 { .. } => "not UTF-8".into(),
        SnapshotError::TooLarge { size, limit, .. } => format!("{size} bytes, over max-file-bytes ({limit})"),
        SnapshotError::LineTooLong { line, limit, .. } => format!("line {line} is over max-line-bytes ({limit})"),
        other => other.to_string(),
    })
}

/// Files marked `-agent-apply-lint` (or `agent-apply-lint=false`) in
/// `.gitattributes`: fixtures that hold leftovers on purpose.
fn opted_out(repo: &git2::Repository, path: &str) -> bool {
    let value = repo.get_attr(Path::new(path), "agent-apply-lint", git2::AttrCheckFlags::FILE_THEN_INDEX);
    match value {
        Ok(value) => {
            matches!(git2::AttrValue::from_string(value), git2::AttrValue::False)
                || value.is_some_and(|v| v.eq_ignore_ascii_case("false"))
        }
        Err(_) => false,
    }
}

/// The repo-relative paths (files or directories) to restrict the check to;
/// empty for everything.
fn path_filter(root: &Path, paths: &[PathBuf]) -> Result<Vec<String>, CommandError> {
    let cwd = std::env::current_dir().map_err(|e| CommandError::usage(format!("no current directory: {e}")))?;
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    paths
        .iter()
        .map(|p| {
            let absolute = if p.is_absolute() { p.clone() } else { cwd.join(p) };
            let absolute = absolute.canonicalize().unwrap_or(absolute);
            let relative = absolute.strip_prefix(&root).map_err(|_| {
                CommandError::usage(format!("{} is outside the repository {}", p.display(), root.display()))
            })?;
            Ok(relative.to_string_lossy().replace('\\', "/").trim_end_matches('/').to_string())
        })
        .collect()
}

fn wanted(filter: &[String], path: &str) -> bool {
    filter.is_empty()
        || filter
            .iter()
            .any(|f| f.is_empty() || f == path || path.strip_prefix(f.as_str()).is_some_and(|r| r.starts_with('/')))
}

/// Tracked files (and any named file, tracked or not) from the working tree.
fn working_tree(
    repo: &git2::Repository,
    root: &Path,
    filter: &[String],
) -> Result<Vec<(String, Source)>, CommandError> {
    let index = repo.index().map_err(|e| CommandError::usage(format!("cannot read the index: {}", e.message())))?;
    let mut paths: Vec<String> = index
        .iter()
        .filter(|e| e.mode & 0o170000 == 0o100000)
        .map(|e| String::from_utf8_lossy(&e.path).into_owned())
        .filter(|p| wanted(filter, p))
        .collect();
    for f in filter {
        if !f.is_empty() && root.join(f).is_file() && !paths.contains(f) {
            paths.push(f.clone());
        }
    }
    paths.sort();
    paths.dedup();
    Ok(paths
        .into_iter()
        .filter_map(|p| {
            let full = root.join(&p);
            // A tracked file deleted in the working tree has nothing to lint.
            let meta = std::fs::symlink_metadata(&full).ok()?;
            meta.is_file().then_some((p, Source::WorkingTree(full)))
        })
        .collect())
}

/// Staged blobs of paths whose index entry differs from HEAD (every entry
/// before the first commit). Honours `GIT_INDEX_FILE`, which `git commit -a`
/// and `git commit PATH` set for their hooks.
fn staged(repo: &git2::Repository, filter: &[String]) -> Result<Vec<(String, Source)>, CommandError> {
    let error = |what: &str, e: git2::Error| CommandError::usage(format!("cannot read {what}: {}", e.message()));
    let index = match std::env::var_os("GIT_INDEX_FILE") {
        Some(path) => {
            let path = PathBuf::from(path);
            let path =
                if path.is_absolute() { path } else { std::env::current_dir().map(|d| d.join(&path)).unwrap_or(path) };
            git2::Index::open(&path).map_err(|e| error("GIT_INDEX_FILE", e))?
        }
        None => repo.index().map_err(|e| error("the index", e))?,
    };
    let head = repo.head().ok().and_then(|h| h.peel_to_tree().ok());
    let mut options = git2::DiffOptions::new();
    options.include_typechange(true);
    let diff = repo
        .diff_tree_to_index(head.as_ref(), Some(&index), Some(&mut options))
        .map_err(|e| error("the staged changes", e))?;
    let mut found = Vec::new();
    for delta in diff.deltas() {
        let file = delta.new_file();
        if matches!(delta.status(), git2::Delta::Deleted)
            || !matches!(file.mode(), git2::FileMode::Blob | git2::FileMode::BlobExecutable)
        {
            continue;
        }
        let Some(path) = file.path().map(|p| p.to_string_lossy().replace('\\', "/")) else { continue };
        if !wanted(filter, &path) {
            continue;
        }
        found.push((path, Source::Blob(file.id())));
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(found)
}

/// Git merge-conflict markers: `<<<<<<< ours` and `>>>>>>> theirs` anywhere
/// (but not editblock's `<<<<<<< SEARCH` / `>>>>>>> REPLACE`), and the
/// `=======` / `|||||||` lines between them.
fn conflict_markers(path: &str, content: &str) -> Vec<Finding> {
    let marker = |line: &str, ch: char| -> Option<String> {
        let rest = line.strip_prefix(&ch.to_string().repeat(7))?;
        (rest.is_empty() || rest.starts_with([' ', '\t'])).then(|| rest.trim().to_string())
    };
    let mut found = Vec::new();
    let mut open = false;
    for (index, line) in lines_with_endings(content).enumerate() {
        let line = strip_ending(line);
        let number = index as u32 + 1;
        let what = if let Some(label) = marker(line, '<').filter(|l| !l.eq_ignore_ascii_case("SEARCH")) {
            open = true;
            Some(format!(
                "start of a git merge conflict (ours{})",
                if label.is_empty() { String::new() } else { format!(": {label}") }
            ))
        } else if let Some(label) = marker(line, '>').filter(|l| !l.eq_ignore_ascii_case("REPLACE")) {
            let was_open = open;
            open = false;
            Some(format!(
                "end of a git merge conflict (theirs{}){}",
                if label.is_empty() { String::new() } else { format!(": {label}") },
                if was_open { "" } else { ", with no start marker" }
            ))
        } else if open && line == "=======" {
            Some("middle of a git merge conflict".to_string())
        } else if open && marker(line, '|').is_some() {
            Some("common-ancestor section of a git merge conflict".to_string())
        } else {
            None
        };
        if let Some(what) = what {
            found.push(Finding {
                path: path.to_string(),
                line: number,
                end_line: number,
                kind: "merge-conflict",
                format: None,
                message: format!("{what}: `{}`", line.chars().take(80).collect::<String>()),
                hint: Some("resolve the conflict and remove the markers".into()),
            });
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflict_markers_are_not_edit_blocks() {
        let text = "a\n<<<<<<< HEAD\nb\n||||||| base\nc\n=======\nd\n>>>>>>> feature\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n";
        let found = conflict_markers("f", text);
        assert_eq!(found.iter().map(|f| f.line).collect::<Vec<_>>(), [2, 4, 6, 8]);
        assert!(found[0].message.contains("ours: HEAD"));
        assert!(found[3].message.contains("theirs: feature"));
        // A lone `=======` (reStructuredText) is not a conflict.
        assert!(conflict_markers("f", "Title\n=======\n").is_empty());
        assert!(conflict_markers("f", "<<<<<<<<<< not a marker\n").is_empty());
    }
}
