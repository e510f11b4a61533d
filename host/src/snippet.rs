//! `auto` and snippets under a path. A fenced block under a file's path is
//! either the whole file (`whole` reads it so, at 0.4) or a few lines quoted
//! from it, and the reply's text alone cannot tell which: a format's
//! `detect` sees only the reply, never the files (plugins get no file
//! system). The host reads the files, so here, before a weak automatic
//! choice is read, it is tried on the files its edits name: when every edit
//! would replace an existing file wholesale with a fragment of it (the
//! SDK's [`fragment_of`], the rule `whole` itself refuses such a write by),
//! the reply is not in that format. The next likeliest format reads it
//! instead (usually none does: a reply with no edit), and the model is told
//! that its snippet was not a whole file.

use std::path::Path;

use agent_apply_sdk::fragment::{Fragment, fragment_of};
use agent_apply_sdk::types::{Change, Diagnostic, Edit, EditStatus, File, OptionValue, ParseOutput};

use crate::Error;
use crate::limits::InputLimits;
use crate::registry::{Chosen, ChosenBy};
use crate::transaction::{check_path, read_text};

/// An automatic choice at least this sure is taken on the reply's word:
/// only a bare fenced block under a path scores lower (`whole`, 0.4).
const TRUSTED: f32 = 0.5;

/// The text of `path` under `root`, when it is a file the path policy's
/// confinement allows (the file is only compared, never written, so the
/// git-side checks of the policy do not matter here).
pub fn on_disk<'a>(root: &'a Path, limits: &'a InputLimits) -> impl Fn(&str) -> Option<String> + 'a {
    move |path| check_path(root, path).ok().and_then(|full| read_text(&full, path, limits).ok().flatten())
}

/// What the snippet trial found: one diagnostic per edit of `chosen`'s
/// reading when it is a weak automatic choice and every edit would replace
/// an existing file (`existing` reads them) by a fragment of it, and
/// otherwise none, with the reading it made (the format's `parse` of the
/// same reply with the same options: the caller reads on with it rather
/// than parse a reply of megabytes twice). `options` are the format's; the
/// trial's `apply` lifts the fragment guard (`allow-fragment`, an option
/// of `apply`), so the format writes what it read and the host can compare.
pub fn snippets(
    chosen: &mut Chosen,
    options: &[OptionValue],
    reply: &str,
    existing: &dyn Fn(&str) -> Option<String>,
) -> Result<(Vec<Diagnostic>, Option<ParseOutput>), Error> {
    if !matches!(chosen.by, ChosenBy::Auto { confidence } if confidence < TRUSTED) {
        return Ok((Vec::new(), None));
    }
    let parsed = chosen.instance.parse(reply, options)?;
    let Some(first) = parsed.edits.first() else { return Ok((Vec::new(), Some(parsed))) };
    let mut options = options.to_vec();
    options.push(OptionValue { key: "allow-fragment".into(), value: "true".into() });
    // Most such replies are whole files: the edits of the first file, tried
    // alone, say so without reading and trying every file (a reply of
    // megabytes was applied twice). A format applies a file's edits the
    // same with or without the other files' (the contract's `apply`).
    let first_file: Vec<usize> = (0..parsed.edits.len()).filter(|&i| parsed.edits[i].path == first.path).collect();
    if first_file.len() < parsed.edits.len()
        && fragments(chosen, &options, &parsed.edits, &first_file, existing)?.is_none()
    {
        return Ok((Vec::new(), Some(parsed)));
    }
    let all: Vec<usize> = (0..parsed.edits.len()).collect();
    match fragments(chosen, &options, &parsed.edits, &all, existing)? {
        Some(found) => Ok((found, None)),
        None => Ok((Vec::new(), Some(parsed))),
    }
}

/// One diagnostic per edit when every one of the edits at `indexes` of
/// `parsed` (the instance's latest parse) would replace an existing file
/// (`existing` reads them) by a fragment of it; else `None`.
fn fragments(
    chosen: &mut Chosen,
    options: &[OptionValue],
    parsed: &[Edit],
    indexes: &[usize],
    existing: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Vec<Diagnostic>>, Error> {
    let edits: Vec<&Edit> = indexes.iter().map(|&i| &parsed[i]).collect();
    let mut files: Vec<File> = Vec::new();
    for edit in &edits {
        if files.iter().all(|f| f.path != edit.path)
            && let Some(content) = existing(&edit.path)
        {
            files.push(File { path: edit.path.clone(), content });
        }
    }
    if files.is_empty() {
        return Ok(None);
    }
    let kept: Vec<u32> = indexes.iter().map(|&i| i as u32).collect();
    let parse = chosen.instance.latest_parse().map(|parse| (parse, &kept[..]));
    let Ok(output) = chosen.instance.apply_parsed(&files, &edits, parse, options)? else { return Ok(None) };
    let written = |path: &str| {
        output.changes.iter().find_map(|change| match change {
            Change::Write(file) if file.path == path => Some(file.content.as_str()),
            _ => None,
        })
    };
    let mut found = Vec::new();
    for (edit, outcome) in edits.iter().zip(&output.outcomes) {
        // Only an edit the format placed as a whole-file write says "this is the file".
        let whole_file =
            outcome.status == EditStatus::Applied && outcome.matched.as_ref().is_some_and(|m| m.level == "whole-file");
        let old = files.iter().find(|f| f.path == edit.path);
        let fragment = match (whole_file, old, written(&edit.path)) {
            (true, Some(old), Some(new)) => fragment_of(&old.content, new),
            _ => None,
        };
        let Some(fragment) = fragment else { return Ok(None) };
        found.push(not_a_whole_file(&edit.path, edit.span, fragment));
    }
    Ok(Some(found))
}

fn not_a_whole_file(path: &str, span: agent_apply_sdk::types::Span, Fragment { lines, of }: Fragment) -> Diagnostic {
    Diagnostic::error(
        format!(
            "the code block under {path} (reply lines {}-{}) is a snippet of that file ({lines} of its {of} lines), \
             not the whole file; it was not applied",
            span.first_line, span.last_line
        ),
        Some(span),
    )
    .with_hint(format!(
        "to change {path}, send the complete file under its path, or the change as SEARCH/REPLACE blocks \
         (`git agent-apply prompt editblock`); to make the file just these lines, apply with --format whole"
    ))
}
