//! A file as a model should read it: through the same path policy as an
//! edit, rendered by a format (numbered or hash-tagged lines where the
//! format has such a view) or as `cat -n` numbered lines.

use agent_apply_sdk::types::{File, LineRange};

use crate::Error;
use crate::transaction::{SnapshotError, check_path, read_text};
use crate::workspace::Workspace;

/// The view that needs no format: each line after its number and a tab,
/// as the agents' own `view`/`Read` tools show files.
pub const NUMBERED: &str = "numbered";

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

/// A file as `read` shows it.
#[derive(Debug, Clone)]
pub struct View {
    pub text: String,
    /// The format plugin that rendered `text`; none for [`NUMBERED`].
    pub rendered_by: Option<Rendered>,
}

/// What a format plugin did while rendering a view, for `--verbose`.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub format: String,
    /// What the plugin wrote to its stderr (captured; empty for a native
    /// plugin, whose stderr is the host's own).
    pub stderr: String,
    pub render_ms: f64,
}

/// `path` (repo-relative) in `view` (a format name or alias, or
/// [`NUMBERED`]), only `ranges` of it when given. A file too large or too
/// odd to edit is refused: it could not be edited either.
pub fn read(
    workspace: &mut Workspace,
    path: &str,
    view: &str,
    ranges: &[LineRange],
    allow_ignored: bool,
) -> Result<View, Error> {
    let entry = if view == NUMBERED { None } else { Some(workspace.registry.find(view)?.clone()) };
    let repo = workspace.git_repo().ok();
    let checked = match &repo {
        Some(repo) => repo.check_read_path(path, allow_ignored),
        None => check_path(&workspace.root, path).map_err(SnapshotError::from),
    };
    let content = checked
        .and_then(|full| read_text(&full, path, &workspace.config.input_limits()))?
        .ok_or_else(|| Error::NoSuchFile(path.to_string()))?;
    let file = File { path: path.to_string(), content };
    // What the model is shown is kept, so edits written against it can be
    // rebased once the file has moved on (#25). Failing to keep it costs
    // only that: a later stale edit is refused instead of rebased, so it is
    // no reason to withhold the view.
    if let Some(repo) = &repo {
        let _ = crate::rebase::record_read(repo.repository(), &file.path, &file.content);
    }
    let Some(entry) = entry else { return Ok(View { text: numbered(&file.content, ranges), rendered_by: None }) };
    let mut instance = workspace.registry.instantiate(&entry)?;
    let options = workspace.config.plugin_options(&entry.name, None);
    let started = std::time::Instant::now();
    let text = instance.render(&file, ranges, &options)?.map_err(|message| Error::RenderRefused {
        format: entry.name.clone(),
        path: file.path.clone(),
        message,
    })?;
    let render_ms = started.elapsed().as_secs_f64() * 1000.0;
    let rendered_by = Rendered { format: entry.name, stderr: instance.stderr(), render_ms };
    Ok(View { text, rendered_by: Some(rendered_by) })
}

/// `content`'s lines in `ranges` (all when empty), each as `{number:>6}\t{line}`.
fn numbered(content: &str, ranges: &[LineRange]) -> String {
    let wanted = |number: u32| ranges.is_empty() || ranges.iter().any(|r| (r.start..=r.end).contains(&number));
    let mut out = String::new();
    for (number, line) in (1u32..).zip(content.lines()).filter(|(n, _)| wanted(*n)) {
        out += &format!("{number:>6}\t{line}\n");
    }
    out
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

    #[test]
    fn numbered_lines_in_ranges() {
        assert_eq!(numbered("a\nb\nc\n", &[]), "     1\ta\n     2\tb\n     3\tc\n");
        assert_eq!(numbered("a\nb\nc", &[LineRange::new(2, 3)]), "     2\tb\n     3\tc\n");
    }
}
