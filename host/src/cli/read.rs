//! `git agent-apply read`: a file as a model should read it for a format.

use std::path::{Path, PathBuf};

use agent_apply_sdk::types::{File, LineRange};
use clap::Args;

use super::{CommandError, Exit, GlobalArgs, open_workspace};
use crate::transaction::{SnapshotError, check_path, lexical_normal, read_text};

#[derive(Debug, Args)]
pub struct ReadArgs {
    /// The file to show.
    path: PathBuf,
    /// Edit format whose view to render.
    #[arg(short, long, value_name = "NAME")]
    format: String,
    /// Line ranges to show, e.g. `10-20,45-55` or `7` (default: the whole file).
    #[arg(long, value_name = "RANGES", value_parser = parse_ranges)]
    lines: Option<LineRanges>,
    /// Show a file git ignores (as `apply --allow-ignored` edits one).
    #[arg(long)]
    allow_ignored: bool,
}

/// The value of `--lines` (a newtype, so clap takes it as one value).
#[derive(Debug, Clone, PartialEq)]
pub struct LineRanges(pub Vec<LineRange>);

/// `10-20,45-55` → ranges; `7` is line 7 alone.
pub fn parse_ranges(text: &str) -> Result<LineRanges, String> {
    text.split(',')
        .map(|part| {
            let part = part.trim();
            let (start, end) = part.split_once('-').unwrap_or((part, part));
            let number = |s: &str| {
                s.trim().parse::<u32>().ok().filter(|n| *n > 0).ok_or_else(|| {
                    format!("`{part}` is not a line range; write START-END with 1-based line numbers, e.g. 10-20")
                })
            };
            let (start, end) = (number(start)?, number(end)?);
            if end < start {
                return Err(format!("`{part}` ends before it starts"));
            }
            Ok(LineRange::new(start, end))
        })
        .collect::<Result<_, _>>()
        .map(LineRanges)
}

pub fn run(global: &GlobalArgs, args: &ReadArgs) -> Result<Exit, CommandError> {
    let mut workspace = open_workspace(global)?;
    let entry = workspace.registry.find(&args.format)?.clone();
    let path = repo_relative(&workspace.root, &args.path);
    // What a model reads obeys the same policy as what it edits, and a file
    // too large or too odd to edit is refused too: it could not be edited.
    let repo = workspace.git_repo().ok();
    let checked = match &repo {
        Some(repo) => repo.check_read_path(&path, args.allow_ignored),
        None => check_path(&workspace.root, &path).map_err(SnapshotError::from),
    };
    let content = match checked.and_then(|full| read_text(&full, &path, &workspace.config.input_limits())) {
        Ok(Some(content)) => content,
        Ok(None) => return Err(CommandError::usage(format!("cannot read {path}: no such file"))),
        Err(error) => {
            let hint = error.hint();
            return Err(CommandError { hints: hint.into_iter().collect(), ..CommandError::usage(error.to_string()) });
        }
    };
    let file = File { path, content };
    let mut instance = workspace.registry.instantiate(&entry)?;
    let options = workspace.config.plugin_options(&entry.name, None);
    let view = instance.render(&file, args.lines.as_ref().map_or(&[][..], |r| &r.0), &options)?.map_err(|message| {
        CommandError::usage(format!("format '{}' cannot render {}: {message}", entry.name, file.path))
    })?;
    print!("{view}");
    // What the model was shown is kept, so edits written against it can be
    // rebased once the file has moved on (#25). Not being able to is no
    // reason to withhold the view.
    if let Some(repo) = &repo
        && let Err(error) = crate::rebase::record_read(repo.repository(), &file.path, &file.content)
    {
        eprintln!("warning: could not record the version shown, so edits against it cannot be rebased: {error}");
    }
    Ok(Exit::Ok)
}

/// `path` as the repo-relative path the policy judges: a relative path is
/// taken from the current directory when that is inside the repository (as
/// git does), else from the root; an absolute one must lead inside the root.
/// Folded lexically: the policy then refuses any symlink on the way.
fn repo_relative(root: &Path, path: &Path) -> String {
    let canonical_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let cwd = std::env::current_dir().ok().filter(|cwd| cwd.starts_with(&canonical_root));
    let absolute = match (path.is_absolute(), cwd) {
        (true, _) => path.to_path_buf(),
        (false, Some(cwd)) => cwd.join(path),
        (false, None) => canonical_root.join(path),
    };
    match lexical_normal(&absolute).strip_prefix(&canonical_root) {
        Ok(relative) => relative.to_string_lossy().into_owned(),
        // Outside the root: left absolute, for the policy to refuse by name.
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(parse_ranges("10-20,45-55").unwrap().0, vec![LineRange::new(10, 20), LineRange::new(45, 55)]);
        assert_eq!(parse_ranges("7").unwrap().0, vec![LineRange::new(7, 7)]);
        assert!(parse_ranges("0-3").is_err());
        assert!(parse_ranges("9-3").unwrap_err().contains("ends before"));
        assert!(parse_ranges("a-b").unwrap_err().contains("START-END"));
    }
}
