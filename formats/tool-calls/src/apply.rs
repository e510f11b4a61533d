//! What each call does to a file. `old_string` is looked for as the tools
//! look for it, as exact text (in the file's line endings), and must occur
//! once unless `replace_all`; only when it is nowhere does the SDK's
//! matching ladder try, and the message then says how far it had to bend.

use std::borrow::Cow;

use agent_apply_sdk::elision::find_elisions;
use agent_apply_sdk::matching::{
    AMBIGUITY_LIMIT, Level, ambiguous_failure, elided_replacement, ladder_match, merge_matches,
};
use agent_apply_sdk::message;
use agent_apply_sdk::message::{Composite, Piece, WritePieces};
use agent_apply_sdk::prelude::*;
use agent_apply_sdk::text::{
    Eol, find_all, line_count, lines_with_endings, lines_without_endings, newline_count, splice_lines, split_bom,
    strip_ending,
};

use crate::Replacement;

/// A file's new content and what was done, for the message.
pub struct Done {
    pub content: String,
    pub lines: Option<LineRange>,
    pub how: String,
    /// How it was placed, for the report: a ladder level with the places
    /// each level found, `line-numbers` (insert) or `whole-file`.
    pub matched: MatchInfo,
}

/// Apply one replacement to the file's current content (`None`: it does
/// not exist).
pub fn replace(current: Option<&str>, path: &str, r: &Replacement) -> Result<Done, EditFailure> {
    if r.old.is_empty() {
        return create_with(current, path, &r.new);
    }
    let Some(content) = current else {
        return Err(EditFailure::new(FailureKind::NotFound, format!("{path} does not exist"))
            .with_hint("check the path; to create the file, send an empty old_string (or use Write / create)"));
    };
    if r.old == r.new {
        return Err(EditFailure::new(
            FailureKind::Malformed,
            "old_string and new_string are the same: the call changes nothing",
        )
        .with_hint("put the text as it should become in new_string"));
    }
    if let Some(done) = exact(content, r)? {
        return Ok(done);
    }
    match replace_block(content, &r.old, &r.new, &LadderOptions::default()) {
        Ok(replaced) => Ok(Done {
            matched: replaced.match_info(),
            content: replaced.content,
            lines: Some(replaced.lines),
            how: format!(
                "replaced lines {}-{}, NOT an exact match: old_string matched only {} ({} level of the ladder); \
                 the tool this call was written for demands an exact match, so check the result",
                replaced.lines.start,
                replaced.lines.end,
                replaced.level.describe(),
                replaced.level.as_str()
            ),
        }),
        Err(mut failure) => {
            if r.all && failure.kind == FailureKind::Ambiguous {
                failure.hint = Some(
                    "replace_all replaces exact occurrences only: copy the text exactly as it is in the file".into(),
                );
            }
            Err(failure)
        }
    }
}

/// `text` in the file's line endings, when the model wrote `\n` for a
/// CRLF file.
fn in_style<'t>(text: &'t str, eol: Eol) -> Cow<'t, str> {
    if eol == Eol::CrLf && text.contains('\n') && !text.contains("\r\n") {
        Cow::Owned(text.replace('\n', "\r\n"))
    } else {
        Cow::Borrowed(text)
    }
}

/// [`elided_replacement`] of `old` replaced by `new`, their lines split only
/// when `new` holds a placeholder: most replacements hold none, and a
/// large reply's thousands of calls each split both texts for nothing.
pub(crate) fn elided_texts<'a>(
    old: &'a str,
    new: &str,
    file: impl IntoIterator<Item = &'a str>,
) -> Option<EditFailure> {
    if find_elisions(new).is_empty() {
        return None;
    }
    elided_replacement(&lines_without_endings(old), &lines_without_endings(new), file)
}

/// The exact level: `old` as a substring. `None` when it is nowhere.
fn exact(content: &str, r: &Replacement) -> Result<Option<Done>, EditFailure> {
    let eol = TextStyle::detect(content).eol;
    let limit = if r.all { usize::MAX } else { AMBIGUITY_LIMIT + 1 };
    let find = |old: &str| find_all(content, old).take(limit).collect::<Vec<usize>>();
    // As written first; in the file's line endings only if not found so.
    let (old, places) = match (find(&r.old), in_style(&r.old, eol)) {
        (places, _) if !places.is_empty() => (Cow::Borrowed(r.old.as_str()), places),
        (_, Cow::Owned(restyled)) => {
            let places = find(&restyled);
            (Cow::Owned(restyled), places)
        }
        (none, borrowed) => (borrowed, none),
    };
    let new = in_style(&r.new, eol);
    if places.is_empty() {
        return Ok(None);
    }
    let starts = line_indexes(content, &places);
    let span = line_count(&old);
    if places.len() > 1 && !r.all {
        let mut failure = ambiguous_failure(Level::Exact, &starts, span.max(1));
        failure.hint = Some(format!(
            "{}, or set replace_all to true to replace every occurrence",
            failure.hint.unwrap_or_default()
        ));
        return Err(failure);
    }
    if let Some(failure) = elided_texts(&old, &new, lines_with_endings(content).map(strip_ending)) {
        return Err(failure);
    }
    let mut out = String::with_capacity(content.len() + places.len() * new.len());
    let mut copied = 0;
    for &at in &places {
        out.push_str(&content[copied..at]);
        out.push_str(&new);
        copied = at + old.len();
    }
    out.push_str(&content[copied..]);
    let first = starts[0] as u32 + 1;
    let last = (starts[starts.len() - 1] + span.max(1)) as u32;
    let lines = LineRange::new(first, last);
    let how = message!(replaced_exactly(lines, places.len()));
    Ok(Some(Done { content: out, lines: Some(lines), how, matched: exact_match(places.len()) }))
}

/// What an exact replacement of `places` places, spanning `lines`, did.
pub(crate) fn replaced_exactly(lines: LineRange, places: usize) -> impl Piece {
    ReplacedExactly { lines, places }
}

/// What [`replaced_exactly`] writes: into the message, with no string of its own.
struct ReplacedExactly {
    lines: LineRange,
    places: usize,
}

impl Composite for ReplacedExactly {
    fn pieces<W: WritePieces>(&self, write: W) -> W::Done {
        let (first, last) = (&self.lines.start, &self.lines.end);
        match self.places {
            1 => write.pieces((&"replaced lines ", first, &"-", last, &" (exact match)")),
            n => write.pieces((
                &"replaced all ",
                &n,
                &" occurrences, lines ",
                first,
                &"-",
                last,
                &" (exact matches, replace_all)",
            )),
        }
    }
}

agent_apply_sdk::composite_piece!(ReplacedExactly);

/// The tools' own exact level: every place it found (several only under replace_all).
pub(crate) fn exact_match(places: usize) -> MatchInfo {
    ladder_match(Level::Exact, &[(Level::Exact, places)])
}

/// The 0-based line of each byte offset (ascending), counted in one pass.
fn line_indexes(content: &str, offsets: &[usize]) -> Vec<usize> {
    let (mut line, mut from) = (0, 0);
    offsets
        .iter()
        .map(|&at| {
            line += newline_count(&content[from..at]);
            from = at;
            line
        })
        .collect()
}

/// An empty `old_string`: create the file (or fill an empty one).
fn create_with(current: Option<&str>, path: &str, new: &str) -> Result<Done, EditFailure> {
    match current {
        Some(existing) if !split_bom(existing).1.is_empty() => Err(EditFailure::new(
            FailureKind::Malformed,
            format!("old_string is empty, but {path} already exists and is not empty"),
        )
        .with_hint("to change it, put the lines to replace in old_string; to replace it whole, use Write")),
        _ => {
            let what = if current.is_some() { "filled the empty" } else { "created" };
            Ok(Done {
                content: new.to_string(),
                lines: None,
                how: format!("{what} {path} ({})", LineCount(line_count(new))),
                matched: MatchInfo::at("whole-file"),
            })
        }
    }
}

/// Anthropic's `insert`: `text` after line `after` (0: at the top).
pub fn insert(current: Option<&str>, path: &str, after: u32, text: &str) -> Result<Done, EditFailure> {
    let Some(content) = current else {
        return Err(EditFailure::new(FailureKind::NotFound, format!("{path} does not exist"))
            .with_hint("to create the file, use the create command"));
    };
    let n = line_count(split_bom(content).1);
    if after as usize > n {
        return Err(EditFailure::new(
            FailureKind::OutOfRange,
            format!("insert_line {after} is past the end of {path}, which has {n} lines"),
        )
        .with_hint(format!("insert_line counts from 0 (the top) to {n} (after the last line)")));
    }
    let lines = lines_without_endings(text);
    if lines.is_empty() {
        return Err(EditFailure::new(FailureKind::Malformed, "insert_text is empty: nothing to insert"));
    }
    let style = TextStyle::detect(content);
    let at = after as usize;
    let content = splice_lines(content, [(at..at, &lines[..])], style.eol.as_str(), style.final_newline);
    let how = match after {
        0 => format!("inserted {} at the top", LineCount(lines.len())),
        _ => format!("inserted {} after line {after}", LineCount(lines.len())),
    };
    let matched = MatchInfo::at("line-numbers");
    Ok(Done { content, lines: Some(LineRange::new(at as u32 + 1, at as u32)), how, matched })
}

/// Write / create: the whole file. An existing file keeps its BOM, line
/// endings and final newline; `create` refuses to overwrite, as the text
/// editor does (the model believed the file absent and never read it).
pub fn write(current: Option<&str>, path: &str, content: &str, overwrite: bool) -> Result<Done, EditFailure> {
    let Some(existing) = current else {
        let how = format!("created {path} ({})", LineCount(line_count(content)));
        return Ok(Done { content: content.to_string(), lines: None, how, matched: MatchInfo::at("whole-file") });
    };
    let restyled = TextStyle::detect(existing).restyle(content);
    let before = line_count(split_bom(existing).1);
    if restyled == existing {
        return Err(EditFailure::new(FailureKind::AlreadyApplied, format!("{path} already has exactly this content"))
            .with_hint("this call seems to have been applied already; do not send it again"));
    }
    if !overwrite {
        return Err(EditFailure::new(
            FailureKind::Forbidden,
            format!("create would overwrite the existing {path} ({before} lines); create only makes new files"),
        )
        .with_hint("to change the file, use str_replace on the lines to change (view it first)"));
    }
    // The whole file is being replaced: its lines are the text replaced.
    if let Some(failure) = elided_texts(split_bom(existing).1, content, []) {
        return Err(failure);
    }
    let after = line_count(split_bom(&restyled).1);
    let how = format!("rewrote {path} ({after} lines, {before} before)");
    let lines = Some(LineRange::new(1, before.max(1) as u32));
    Ok(Done { content: restyled, lines, how, matched: MatchInfo::at("whole-file") })
}

/// MultiEdit: each edit on the result of the previous, all or nothing.
pub fn multi_edit(current: Option<&str>, path: &str, edits: &[Replacement]) -> Result<Done, EditFailure> {
    let mut content = current.map(str::to_string);
    let mut done = Vec::with_capacity(edits.len());
    let mut matched: Option<MatchInfo> = None;
    for (index, edit) in edits.iter().enumerate() {
        let step = replace(content.as_deref(), path, edit).map_err(|failure| EditFailure {
            message: format!(
                "edit {} of {} failed, so none of this MultiEdit's edits was applied: {}",
                index + 1,
                edits.len(),
                failure.message
            ),
            ..failure
        })?;
        done.push(format!("edit {}: {}", index + 1, step.how));
        matched = Some(merge_matches(matched, step.matched));
        content = Some(step.content);
    }
    let content = content.unwrap_or_default();
    let how = format!("{} edits in order: {}", edits.len(), done.join("; "));
    // An empty MultiEdit fails as malformed before it gets here.
    Ok(Done { content, lines: None, how, matched: matched.unwrap_or_else(|| MatchInfo::at(Level::Exact.as_str())) })
}
