//! `git agent-apply read`: a file as a model should read it for a format.

use std::path::{Path, PathBuf};

use agent_apply_sdk::types::LineRange;
use clap::Args;

use super::{CommandError, Exit, GlobalArgs, open_workspace};
use crate::transaction::lexical_normal;
use crate::{Error, view};

#[derive(Debug, Args)]
pub struct ReadArgs {
    /// The file to show.
    path: PathBuf,
    /// Edit format whose view to render, or `numbered` (`cat -n` lines).
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
    let path = repo_relative(&workspace.root, &args.path);
    let ranges = args.lines.as_ref().map_or(&[][..], |r| &r.0);
    let view =
        view::read(&mut workspace, &path, &args.format, ranges, args.allow_ignored).map_err(|error| match error {
            // A file that may not be read is a usage error here, not a failed edit.
            Error::Snapshot(refused) => {
                CommandError { hints: refused.hint().into_iter().collect(), ..CommandError::usage(refused.to_string()) }
            }
            other => other.into(),
        })?;
    print!("{view}");
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
