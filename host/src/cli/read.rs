//! `git agent-apply read`: a file as a model should read it for a format.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;

use super::{CommandError, Exit, GlobalArgs, open_workspace};
use crate::transaction::lexical_normal;
use crate::{Error, view};

#[derive(Debug, Args)]
pub struct ReadArgs {
    /// The file to show.
    path: PathBuf,
    /// Edit format whose view to render, or `numbered` (`cat -n` lines).
    #[arg(short, long, value_name = "NAME", add = clap_complete::engine::ArgValueCandidates::new(super::completions::format_candidates))]
    format: String,
    /// Line ranges to show, e.g. `10-20,45-55` or `7` (default: the whole file).
    #[arg(long, value_name = "RANGES", value_parser = view::parse_ranges)]
    lines: Option<view::LineRanges>,
    /// Show a file git ignores (as `apply --allow-ignored` edits one).
    #[arg(long)]
    allow_ignored: bool,
}

pub fn run(global: &GlobalArgs, args: &ReadArgs) -> Result<Exit, CommandError> {
    let mut workspace = open_workspace(global)?;
    let path = repo_relative(&workspace.root, &args.path);
    let ranges = args.lines.as_ref().map_or(&[][..], |r| &r.0);
    let started = std::time::Instant::now();
    let view =
        view::read(&mut workspace, &path, &args.format, ranges, args.allow_ignored).map_err(|error| match error {
            // A file that may not be read is a usage error here, not a failed edit.
            Error::Snapshot(refused) => {
                CommandError { hints: refused.hint().into_iter().collect(), ..CommandError::usage(refused.to_string()) }
            }
            other => other.into(),
        })?;
    // As the file has it: escape sequences in it are the file's, not ours to
    // strip, and a reader that stops early (`| head`) is no error.
    let _ = std::io::stdout().lock().write_all(view.text.as_bytes());
    if global.verbose {
        let total_ms = started.elapsed().as_secs_f64() * 1000.0;
        let (plugin_output, render) = match view.rendered_by {
            Some(rendered) => {
                (vec![(rendered.format, rendered.stderr)], format!("render {:.1} ms, ", rendered.render_ms))
            }
            // `numbered` needs no plugin: only the time.
            None => (Vec::new(), String::new()),
        };
        super::output::verbose(&plugin_output, &format!("{render}total {total_ms:.1} ms"));
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
