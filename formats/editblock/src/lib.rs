//! `editblock` (aliases `diff`, `search-replace`): SEARCH/REPLACE blocks.
//!
//! ```text
//! src/app.py
//! <<<<<<< SEARCH
//! old lines
//! =======
//! new lines
//! >>>>>>> REPLACE
//! ```
//!
//! Blocks are found with the SDK's matching ladder, so indentation,
//! whitespace, `...` and look-alike drift still apply, but a block that
//! matches in two places is refused rather than applied at the first.

use agent_apply_sdk::matching::{LadderOptions, Level, replace_block, replace_blocks_at_once};
use agent_apply_sdk::message;
use agent_apply_sdk::message::{Composite, WritePieces};
use agent_apply_sdk::prelude::*;
use agent_apply_sdk::text::{line_count, lines_with_endings, lines_without_endings, split_bom, strip_ending, trim};
use serde::{Deserialize, Serialize};

mod parse;

#[derive(Default)]
pub struct EditBlock;

/// The private payload of one block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Block {
    /// 1-based number of the block in the reply.
    pub number: usize,
    /// Reply line of the SEARCH marker.
    pub reply_line: u32,
    pub search: ReplyText,
    pub replace: ReplyText,
    /// Other readings when the block holds several `=======` lines (one of
    /// them is file content): `(search, replace)` for each other divider.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<(ReplyText, ReplyText)>,
}

const INSTRUCTIONS: &str = "\
To change files, send SEARCH/REPLACE blocks. Each block is:

1. the file's path, alone on a line (a path relative to the repository root);
2. a line `<<<<<<< SEARCH`;
3. the lines to change, copied exactly from the file, with enough surrounding lines to match \
exactly one place in it;
4. a line `=======`;
5. the new lines that replace them;
6. a line `>>>>>>> REPLACE`.

Rules:
- The SEARCH part must match the file character for character, including comments and \
indentation. Keep it short: just the lines that change plus a line or two of context so \
it is unique. A SEARCH that matches two places is refused.
- Use several small blocks rather than one big one. Blocks for the same file apply in \
order, each to the result of the previous.
- To create a file, or to add to the end of one, leave the SEARCH part empty.
- To delete lines, leave the REPLACE part empty.
- To move code, use one block to delete it and another to insert it.
- You may wrap blocks in code fences. Put shell commands in their own ```bash block; they \
are shown to the user, never run.";

const EXAMPLE_REPLY: &str = "\
I'll make `greet` take a name.

src/greet.py
```python
<<<<<<< SEARCH
def greet():
    print(\"Hello!\")
=======
def greet(name):
    print(f\"Hello, {name}!\")
>>>>>>> REPLACE
```
";

impl Format for EditBlock {
    type Op = Block;

    /// Its edits' summaries are for the host alone: a large reply's are not kept.
    fn apply_reads_summaries(&self) -> bool {
        false
    }

    fn info(&self) -> FormatInfo {
        FormatInfo {
            name: "editblock".into(),
            aliases: vec!["diff".into(), "search-replace".into()],
            version: env!("CARGO_PKG_VERSION").into(),
            summary: "SEARCH/REPLACE blocks: a path line, the old lines, `=======`, the new lines".into(),
            instructions: INSTRUCTIONS.into(),
            example_reply: EXAMPLE_REPLY.into(),
            example_files: vec![File::new("src/greet.py", "def greet():\n    print(\"Hello!\")\n")],
            options: vec![OptionDoc {
                key: "fuzzy".into(),
                default_value: "off".into(),
                description: "minimum similarity (0-1) for fuzzy matching when nothing else matches; \
                              the best place must beat the runner-up by a clear margin"
                    .into(),
            }],
            // What `detect` needs: a SEARCH marker's run of `<` or `-`, or a
            // divider's `=` (the host skips `detect` for a reply with none).
            detect_hints: vec!["<<<<<".into(), "-----".into(), "=====".into()],
        }
    }

    fn detect(&self, reply: &str) -> f32 {
        match parse::markers_in(reply) {
            (true, true, true) => 0.9,
            (true, _, _) | (_, true, true) => 0.6,
            _ => 0.0,
        }
    }

    fn parse(&self, reply: &str, options: Options<'_>) -> Parsed<Block> {
        parse::parse(reply, options.shows_summaries())
    }

    fn apply_edit(
        &self,
        workspace: &mut Workspace,
        edit: &ParsedEdit<Block>,
        options: Options<'_>,
    ) -> Result<Applied, EditFailure> {
        let ladder = ladder_options(options)?;
        let block = &edit.op;
        let path = edit.path.as_str();
        let label = label(block);
        if trim(&block.search).is_empty() {
            return create_or_append(workspace, path, &block.replace).map_err(|failure| EditFailure {
                message: format!("{label} on {path}: {}", failure.message),
                ..failure
            });
        }
        let failure = match workspace.read(path) {
            Some(content) => match apply_block(content, block, &ladder) {
                Ok((new, replaced)) => {
                    workspace.write(path, new);
                    workspace.note_match(replaced.match_info());
                    return Ok(replaced_lines(block, path, replaced.level, replaced.lines));
                }
                Err(failure) => failure,
            },
            None => EditFailure::new(FailureKind::NotFound, format!("{path} does not exist"))
                .with_hint("to create a file, leave the SEARCH part empty"),
        };
        if failure.kind == FailureKind::NotFound
            && let Some(applied) = retry_elsewhere(workspace, path, block, &ladder, &label)?
        {
            return Ok(applied);
        }
        Err(EditFailure { message: format!("{label} on {path}: {}", failure.message), ..failure })
    }

    /// Blocks apply in order, each to the result of the ones before. A reply
    /// of hundreds of blocks would rescan a file per block; when the SDK can
    /// show that one pass per file gives the same result, it is taken.
    fn apply(
        &self,
        workspace: &mut Workspace,
        edits: &[ParsedEdit<Block>],
        options: Options<'_>,
    ) -> Vec<Result<Applied, EditFailure>> {
        if let Some(done) = apply_in_one_pass(workspace, edits, options) {
            return done;
        }
        agent_apply_sdk::apply_each(self, workspace, edits, options)
    }

    fn lint(&self, file: &File) -> Vec<Diagnostic> {
        let (_, body) = split_bom(&file.content);
        let mut found = Vec::new();
        let mut has_block_marker = false;
        let mut dividers = Vec::new();
        for (index, line) in lines_with_endings(body).enumerate() {
            let number = index as u32 + 1;
            match parse::marker(line) {
                Some(parse::Marker::Divider) => dividers.push(number),
                Some(kind) => {
                    has_block_marker = true;
                    let what = if kind == parse::Marker::Search { "SEARCH" } else { "REPLACE" };
                    found.push(
                        Diagnostic::in_file(
                            format!("leftover {what} marker of an edit block: `{}`", strip_ending(line).trim()),
                            &file.path,
                            LineRange::new(number, number),
                        )
                        .with_hint(
                            "an edit block was pasted into the file instead of applied; remove the block markers",
                        ),
                    );
                }
                None => {}
            }
        }
        if has_block_marker {
            for number in dividers {
                found.push(
                    Diagnostic::in_file(
                        "leftover `=======` divider of an edit block",
                        &file.path,
                        LineRange::new(number, number),
                    )
                    .with_hint("remove the block markers"),
                );
            }
            found.sort_by_key(|d| d.lines.map(|l| l.start));
        }
        found
    }
}

fn ladder_options(options: Options<'_>) -> Result<LadderOptions, EditFailure> {
    let mut ladder = LadderOptions::default();
    // A switch, or the minimum similarity itself.
    let raw = options.get("fuzzy").map(str::trim).unwrap_or("");
    match (options.flag("fuzzy", false), raw.parse::<f32>()) {
        (_, Ok(min)) if (0.0..=1.0).contains(&min) && raw.contains('.') => ladder.fuzzy = Some(min),
        (Ok(on), _) => ladder.fuzzy = on.then_some(0.85),
        _ => {
            return Err(EditFailure::new(
                FailureKind::Malformed,
                format!("option `fuzzy` has the invalid value {raw:?} (expected off, on or a number 0-1)"),
            ));
        }
    }
    Ok(ladder)
}

/// `block 3 (reply line 14, `def f():`)`, for messages: the block's first
/// SEARCH line, shortened, is found when a message is made, not kept with
/// each of a large reply's blocks.
fn label(block: &Block) -> String {
    message!(Label::of(block))
}

/// What [`label`] writes, written straight into a message. The quote is
/// found once: a message is sized, then written.
struct Label<'a> {
    block: &'a Block,
    quote: (&'static str, &'a str, &'static str),
}

impl<'a> Label<'a> {
    fn of(block: &'a Block) -> Self {
        Label { block, quote: quoted_search(block) }
    }
}

impl Composite for Label<'_> {
    fn pieces<W: WritePieces>(&self, write: W) -> W::Done {
        let (block, (open, line, close)) = (self.block, self.quote);
        write.pieces((&"block ", &block.number, &" (reply line ", &block.reply_line, &open, &line, &close, &")"))
    }
}

agent_apply_sdk::composite_piece!(Label<'_>);

/// The label's quote of the block's first SEARCH line that is not blank,
/// in three pieces (opening, line, closing), or three empty ones.
fn quoted_search(block: &Block) -> (&'static str, &str, &'static str) {
    match block.search.lines().find(|l| !trim(l).is_empty()).map(quote) {
        Some((line, cut)) => (", `", line, if cut { "…`" } else { "`" }),
        None => ("", "", ""),
    }
}

/// A line for a message: trimmed, and cut at 60 characters (`true` if cut).
fn quote(line: &str) -> (&str, bool) {
    let line = trim(line);
    // Sixty bytes are sixty characters at most: most lines need no count.
    if line.len() <= 60 {
        return (line, false);
    }
    match line.char_indices().nth(60) {
        Some((at, _)) => (&line[..at], true),
        None => (line, false),
    }
}

/// Written piece by piece (`message!`): a reply of 20,000 blocks makes
/// 20,000 of these.
fn replaced_lines(block: &Block, path: &str, level: Level, lines: LineRange) -> Applied {
    let message =
        message!(Label::of(block), ": replaced lines ", lines.start, "-", lines.end, " of ", path, level_note(level));
    Applied { message, lines: Some(lines), applied_path: None }
}

/// Every block of the reply applied with one pass per file, or `None` (and
/// nothing written) when that is not sure to equal applying them in order:
/// blocks that create or append, hold several readings, or that the SDK's
/// one-pass check turns down go the one-by-one way, messages and all.
fn apply_in_one_pass(
    workspace: &mut Workspace,
    edits: &[ParsedEdit<Block>],
    options: Options<'_>,
) -> Option<Vec<Result<Applied, EditFailure>>> {
    let ladder = ladder_options(options).ok()?;
    if edits.len() < 2 || edits.iter().any(|e| trim(&e.op.search).is_empty() || !e.op.alternatives.is_empty()) {
        return None;
    }
    let files = agent_apply_sdk::edits_by_file(edits);
    let mut results: Vec<Option<Result<Applied, EditFailure>>> = vec![None; edits.len()];
    let mut contents = Vec::with_capacity(files.len());
    for (path, mine) in files {
        let blocks: Vec<(&str, &str)> =
            mine.iter().map(|&i| (edits[i].op.search.as_str(), edits[i].op.replace.as_str())).collect();
        let (content, outcomes) = replace_blocks_at_once(workspace.read(path)?, &blocks, &ladder)?;
        for (&i, (level, lines, matched)) in mine.iter().zip(outcomes) {
            workspace.note_match_of(i, matched);
            results[i] = Some(Ok(replaced_lines(&edits[i].op, path, level, lines)));
        }
        contents.push((path, content));
    }
    for (path, content) in contents {
        workspace.write(path, content);
    }
    results.into_iter().collect()
}

fn level_note(level: Level) -> String {
    if level == Level::Exact { String::new() } else { format!(" (matched {})", level.describe()) }
}

/// Apply a block to content, trying the other `=======` readings when the
/// block has several: exactly one reading may apply.
fn apply_block(
    content: &str,
    block: &Block,
    ladder: &LadderOptions,
) -> Result<(String, agent_apply_sdk::matching::Replaced), EditFailure> {
    let first = replace_block(content, &block.search, &block.replace, ladder);
    if block.alternatives.is_empty() {
        return first.map(|r| (r.content.clone(), r));
    }
    let mut readings = vec![first];
    for (search, replace) in &block.alternatives {
        if !trim(search).is_empty() {
            readings.push(replace_block(content, search, replace, ladder));
        }
    }
    let mut ok: Vec<usize> = (0..readings.len()).filter(|&i| readings[i].is_ok()).collect();
    // Readings that match at the same place differ only in where the SEARCH
    // part stops: the longest one is what the model copied from the file.
    let lines = |i: usize| readings[i].as_ref().map(|r| r.lines).expect("ok");
    if ok.len() > 1 && ok.iter().all(|&i| lines(i).start == lines(ok[0]).start) {
        let longest = ok.iter().map(|&i| lines(i).end).max().expect("non-empty");
        ok.retain(|&i| lines(i).end == longest);
    }
    match ok.len() {
        0 => Err(readings.swap_remove(0).expect_err("not ok")),
        1 => {
            let r = readings.swap_remove(ok[0]).expect("ok");
            Ok((r.content.clone(), r))
        }
        _ => Err(EditFailure::new(
            FailureKind::Ambiguous,
            "the block holds several `=======` lines and more than one way of reading it applies",
        )
        .with_hint("split it into smaller blocks so that only one `=======` line is the divider")),
    }
}

/// A block whose SEARCH is empty: create the file, or append to it.
fn create_or_append(workspace: &mut Workspace, path: &str, replace: &str) -> Result<Applied, EditFailure> {
    let added = line_count(replace);
    match workspace.read(path) {
        None => {
            workspace.write(path, TextStyle::default().restyle(replace));
            Ok(Applied { message: format!("created {path} ({})", LineCount(added)), lines: None, applied_path: None })
        }
        Some(existing) => {
            let style = TextStyle::detect(existing);
            let (_, body) = split_bom(existing);
            let (old, new) = (lines_without_endings(body), lines_without_endings(replace));
            if new.is_empty() {
                return Err(EditFailure::new(FailureKind::Malformed, "both SEARCH and REPLACE are empty"));
            }
            let substance: usize = new.iter().map(|l| trim(l).len()).sum();
            if substance >= 8 && old.len() >= new.len() && old[old.len() - new.len()..] == new[..] {
                let at = (old.len() - new.len() + 1) as u32;
                return Err(EditFailure::new(
                    FailureKind::AlreadyApplied,
                    format!("the REPLACE text is already at the end of {path} (lines {at}-{})", old.len()),
                )
                .with_hint("this block seems to have been applied already; do not send it again")
                .at(LineRange::new(at, old.len() as u32)));
            }
            let mut content = existing.to_string();
            if !body.is_empty() && !body.ends_with('\n') {
                content.push_str(style.eol.as_str());
            }
            for line in &new {
                content.push_str(line);
                content.push_str(style.eol.as_str());
            }
            if !style.final_newline && !body.is_empty() {
                content.truncate(content.len() - style.eol.as_str().len());
            }
            let n = old.len() as u32;
            workspace.write(path, content);
            Ok(Applied {
                message: format!("appended {added} lines to {path}"),
                lines: Some(LineRange::new(n + 1, n)),
                applied_path: None,
            })
        }
    }
}

/// The block failed on its named file: apply it to the one other file where
/// it matches exactly once, if there is exactly one such file.
fn retry_elsewhere(
    workspace: &mut Workspace,
    path: &str,
    block: &Block,
    ladder: &LadderOptions,
    label: &str,
) -> Result<Option<Applied>, EditFailure> {
    let mut hits = Vec::new();
    for other in workspace.paths() {
        if other == path {
            continue;
        }
        let content = workspace.read(other).expect("listed");
        if let Ok((new, replaced)) = apply_block(content, block, ladder) {
            hits.push((other.to_string(), new, replaced));
        }
    }
    match hits.len() {
        0 => Ok(None),
        1 => {
            let (other, new, replaced) = hits.pop().expect("one");
            workspace.write(&other, new);
            workspace.note_match(MatchInfo { retried: true, ..replaced.match_info() });
            Ok(Some(Applied {
                message: format!(
                    "{label}: the SEARCH text is not in {path}, so it was applied to {other} instead, where it matches once (lines {}-{}{})",
                    replaced.lines.start,
                    replaced.lines.end,
                    level_note(replaced.level)
                ),
                lines: Some(replaced.lines),
                applied_path: Some(other),
            }))
        }
        _ => {
            let names: Vec<&str> = hits.iter().map(|h| h.0.as_str()).collect();
            Err(EditFailure::new(
                FailureKind::Ambiguous,
                format!(
                    "{label} on {path}: the SEARCH text is not in {path}, and it matches in several other files: {}",
                    names.join(", ")
                ),
            )
            .with_hint("name the right file on the line before the block"))
        }
    }
}

agent_apply_sdk::export_format!(EditBlock);

#[cfg(test)]
mod tests;
