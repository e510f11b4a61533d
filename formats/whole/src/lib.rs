//! `whole`: the model sends each changed file complete, in a fenced block with
//! its path on the line before (or in the fence's info string).
//!
//! The danger of this format is a model that leaves code out ("... rest of the
//! file unchanged ..."): written as is, the file would lose that code. Such
//! blocks are refused, never applied.

use agent_apply_sdk::elision::{elisions_not_in, find_elisions};
use agent_apply_sdk::fence::{Fence, fenced_blocks, is_shell_info};
use agent_apply_sdk::fragment::{Fragment, fragment_of};
use agent_apply_sdk::markers::first_marker;
use agent_apply_sdk::paths::{path_before, path_from_info};
use agent_apply_sdk::prelude::*;
use agent_apply_sdk::text::line_count;
use serde::{Deserialize, Serialize};

#[derive(Default)]
pub struct Whole;

/// The private payload of one edit: the file's new contents as the model wrote them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WholeFile {
    pub content: ReplyText,
    /// `parse` found placeholder lines in `content` (and warned): only then
    /// does `apply` look for them again, against the file. Absent in a
    /// payload from elsewhere: look.
    #[serde(default = "unknown")]
    pub placeholders: bool,
}

fn unknown() -> bool {
    true
}

const INSTRUCTIONS: &str = "\
To change a file, send its complete new contents. Write the file's path alone on a line, \
then the whole file in a fenced code block. Every line of the file must be there, \
including the lines you did not change: never shorten it with comments such as \
`// ... existing code ...` or `# rest of the file unchanged`, since the file is replaced \
by exactly what you send. To create a file, do the same with the new path. Send one block \
per file, and only for files you change.";

const EXAMPLE_REPLY: &str = "\
I'll make `greet` take a name.

src/greet.py
```python
def greet(name):
    print(f\"Hello, {name}!\")
```
";

impl Format for Whole {
    type Op = WholeFile;

    /// Its edits' summaries are for the host alone: a large reply's are not kept.
    fn apply_reads_summaries(&self) -> bool {
        false
    }

    fn info(&self) -> FormatInfo {
        FormatInfo {
            name: "whole".into(),
            aliases: vec!["whole-file".into(), "wholefile".into()],
            version: env!("CARGO_PKG_VERSION").into(),
            summary: "Whole-file replacement: a path line, then the complete file in a fenced block".into(),
            instructions: INSTRUCTIONS.into(),
            example_reply: EXAMPLE_REPLY.into(),
            example_files: vec![File::new("src/greet.py", "def greet():\n    print(\"Hello!\")\n")],
            options: vec![OptionDoc {
                key: "allow-fragment".into(),
                default_value: "false".into(),
                description: "write new contents that keep only a few of a file's lines in order (a real \
                              rewrite that drops most of the file); implied by `--format whole`"
                    .into(),
            }],
            detect_hints: vec!["```".into(), "~~~".into()],
        }
    }

    fn detect(&self, reply: &str) -> f32 {
        let blocks = fenced_blocks(reply);
        // Another format's edit inside a block is that format's reply, never a file.
        if blocks.iter().any(|b| first_marker(b.body).is_some()) {
            return 0.0;
        }
        let named = blocks.iter().filter(|b| block_path(reply, b).is_some() && !starts_indented(b.body)).count();
        if named == 0 {
            0.0
        } else if named == blocks.len() {
            0.4
        } else {
            0.2
        }
    }

    fn parse(&self, reply: &str, _options: Options<'_>) -> Parsed<WholeFile> {
        let map = SourceMap::new(reply);
        let mut parsed = Parsed::default();
        for block in fenced_blocks(reply) {
            let span = map.span(block.start, block.end);
            let Some(path) = block_path(reply, &block) else {
                if is_shell_info(block.info) {
                    parsed.commands.push(SuggestedCommand { command: block.body.trim_end().to_string(), span });
                } else if !parsed.edits.is_empty() {
                    // After a whole file, an unnamed block is a usage example.
                    parsed.diagnostics.push(
                        Diagnostic::warning(
                            format!(
                                "the code block at reply line {} names no file; it was taken as an example, not applied",
                                span.first_line
                            ),
                            Some(span),
                        )
                        .with_hint("to write it to a file, put the file's path alone on the line before the fence"),
                    );
                } else {
                    parsed.diagnostics.push(
                        Diagnostic::error(
                            format!("the code block at reply line {} names no file", span.first_line),
                            Some(span),
                        )
                        .with_hint("put the file's path alone on the line before the opening fence"),
                    );
                }
                continue;
            };
            if !block.closed {
                let inside = format!(
                    "inside the code block for {path} (reply line {}): it has no closing fence",
                    span.first_line
                );
                parsed.diagnostics.push(Diagnostic::cut_off(inside, Some(span)));
                continue;
            }
            let elisions = find_elisions(block.body);
            for elision in &elisions {
                let reply_line = map.line_of(block.body_start) + elision.line - 1;
                parsed.diagnostics.push(
                    Diagnostic::warning(
                        format!("the contents of {path} leave code out: `{}`", elision.text.trim()),
                        Some(map.lines_span(reply_line, reply_line)),
                    )
                    .with_hint(
                        "unless the file already has this line, the edit will be refused; send every line of the file",
                    ),
                );
            }
            let lines = line_count(block.body);
            parsed.edits.push(ParsedEdit {
                path,
                related_paths: Vec::new(),
                span,
                summary: format!("write the whole file ({})", LineCount(lines)),
                op: WholeFile { content: ReplyText::new(block.body), placeholders: !elisions.is_empty() },
            });
        }
        parsed
    }

    fn apply_edit(
        &self,
        workspace: &mut Workspace,
        edit: &ParsedEdit<WholeFile>,
        options: Options<'_>,
    ) -> Result<Applied, EditFailure> {
        let path = edit.path.as_str();
        if let Some((line, format)) = first_marker(&edit.op.content) {
            return Err(EditFailure::new(
                FailureKind::Forbidden,
                format!("the new contents of {path} hold a {format} edit marker at line {line}, not file contents"),
            )
            .with_hint(format!("apply the reply with --format {format}, or send the complete file without markers"))
            .at(LineRange::new(line, line)));
        }
        let original = workspace.read(path);
        // A placeholder-looking line the file already has is its content.
        let elisions = if edit.op.placeholders {
            elisions_not_in(&edit.op.content, original.unwrap_or("").lines())
        } else {
            Vec::new()
        };
        if let Some(elision) = elisions.first() {
            return Err(EditFailure::new(
                FailureKind::Forbidden,
                format!(
                    "the new contents of {path} leave code out at line {} (`{}`); writing them would delete that code",
                    elision.line,
                    elision.text.trim()
                ),
            )
            .with_hint("send the complete file with every line, or use a format that edits parts of a file")
            .at(LineRange::new(elision.line, elision.line)));
        }
        let allow_fragment = options.get("allow-fragment") == Some("true") || options.get("chosen-by") == Some("flag");
        if let Some(old) = original.filter(|_| !allow_fragment) {
            check_not_a_fragment(path, old, &edit.op.content)?;
        }
        let style = original.map(TextStyle::detect).unwrap_or_default();
        let content = style.restyle(&edit.op.content);
        let new_lines = line_count(&content);
        let old_lines = original.map_or(0, line_count);
        let message = match original {
            None => format!("created {path} ({})", LineCount(new_lines)),
            Some(old) if old == content => format!("{path} already had these contents"),
            Some(_) if content.is_empty() || content == "\u{feff}" => {
                return Err(EditFailure::new(
                    FailureKind::Forbidden,
                    format!("an empty block would erase all {old_lines} lines of {path}"),
                )
                .with_hint("send the file's complete new contents; to delete a file, say so in prose"));
            }
            Some(_) => format!("replaced {path}: {old_lines} lines before, {new_lines} now"),
        };
        workspace.write(path, content);
        workspace.note_match(MatchInfo::at("whole-file"));
        Ok(Applied { message, lines: (old_lines > 0).then(|| LineRange::new(1, old_lines as u32)), applied_path: None })
    }

    fn lint(&self, file: &File) -> Vec<Diagnostic> {
        find_elisions(&file.content)
            .into_iter()
            .map(|e| {
                Diagnostic::in_file(
                    format!("elision placeholder left by a model: `{}`", e.text.trim()),
                    &file.path,
                    LineRange::new(e.line, e.line),
                )
                .with_hint("replace it with the code it stands for")
            })
            .collect()
    }
}

/// Refuse new contents that read as a snippet of the old file (see
/// [`fragment_of`]): written as a whole file, a snippet deletes the rest.
fn check_not_a_fragment(path: &str, old: &str, new: &str) -> Result<(), EditFailure> {
    let Some(Fragment { lines, of }) = fragment_of(old, new) else { return Ok(()) };
    Err(EditFailure::new(
        FailureKind::Forbidden,
        format!(
            "the {lines} lines sent for {path} are a fragment of its {of} lines; writing them as the whole file would delete the rest"
        ),
    )
    .with_hint(
        "send the complete file, or the change as SEARCH/REPLACE blocks; if the file really should shrink to these lines, apply with --format whole",
    ))
}

/// Whether a block's first code line is indented: a whole file starts at
/// the margin, a snippet cut from inside a function does not.
fn starts_indented(body: &str) -> bool {
    body.lines().find(|l| !l.trim().is_empty()).is_some_and(|l| l.starts_with([' ', '\t']))
}

/// The path a block writes to: from its info string, else from the line before it.
fn block_path(reply: &str, block: &Fence<'_>) -> Option<String> {
    path_from_info(block.info).or_else(|| path_before(reply, block.start))
}

agent_apply_sdk::export_format!(Whole);

#[cfg(test)]
mod tests;
