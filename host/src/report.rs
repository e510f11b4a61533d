//! What a run tells its caller: human text, or one JSON object with a
//! `schema` version, and the `reflection` an agent hands back to its model.

use agent_apply_sdk::types::{Change, Diagnostic, Edit, EditStatus, Outcome, ParseOutput, Severity, SuggestedCommand};
use serde::Serialize;
use similar::TextDiff;

use crate::registry::ChosenBy;

/// Version of the JSON objects this module prints.
pub const SCHEMA: u32 = 1;

#[derive(Debug, Serialize)]
pub struct FormatChoice {
    pub name: String,
    #[serde(flatten)]
    pub chosen_by: ChosenBy,
}

#[derive(Debug, Serialize)]
pub struct SpanJson {
    pub start: u32,
    pub end: u32,
    pub first_line: u32,
    pub last_line: u32,
}

#[derive(Debug, Serialize)]
pub struct LinesJson {
    pub start: u32,
    pub end: u32,
}

#[derive(Debug, Serialize)]
pub struct DiagnosticJson {
    pub severity: &'static str,
    pub message: String,
    pub hint: Option<String>,
    pub reply_lines: Option<LinesJson>,
    pub path: Option<String>,
    pub lines: Option<LinesJson>,
}

impl From<&Diagnostic> for DiagnosticJson {
    fn from(d: &Diagnostic) -> Self {
        DiagnosticJson {
            severity: d.severity.as_str(),
            message: d.message.clone(),
            hint: d.hint.clone(),
            reply_lines: d.span.map(|s| LinesJson { start: s.first_line, end: s.last_line }),
            path: d.path.clone(),
            lines: d.lines.map(|l| LinesJson { start: l.start, end: l.end }),
        }
    }
}

/// `git agent-apply parse --json`.
#[derive(Debug, Serialize)]
pub struct ParseReport {
    pub schema: u32,
    pub format: FormatChoice,
    pub edits: Vec<ParsedEditJson>,
    pub diagnostics: Vec<DiagnosticJson>,
    pub commands: Vec<CommandJson>,
}

#[derive(Debug, Serialize)]
pub struct ParsedEditJson {
    pub index: usize,
    pub path: String,
    pub related_paths: Vec<String>,
    pub summary: String,
    pub span: SpanJson,
}

#[derive(Debug, Serialize)]
pub struct CommandJson {
    pub command: String,
    pub reply_lines: LinesJson,
}

impl ParseReport {
    pub fn new(format: FormatChoice, output: &ParseOutput) -> Self {
        ParseReport {
            schema: SCHEMA,
            format,
            edits: output
                .edits
                .iter()
                .enumerate()
                .map(|(index, e)| ParsedEditJson {
                    index: index + 1,
                    path: e.path.clone(),
                    related_paths: e.related_paths.clone(),
                    summary: e.summary.clone(),
                    span: SpanJson {
                        start: e.span.start,
                        end: e.span.end,
                        first_line: e.span.first_line,
                        last_line: e.span.last_line,
                    },
                })
                .collect(),
            diagnostics: output.diagnostics.iter().map(DiagnosticJson::from).collect(),
            commands: output.commands.iter().map(command_json).collect(),
        }
    }

    pub fn human(&self) -> String {
        let mut out = format!("format: {}\n", self.format.name);
        for edit in &self.edits {
            out += &format!(
                "edit {} {} (reply lines {}-{}): {}\n",
                edit.index, edit.path, edit.span.first_line, edit.span.last_line, edit.summary
            );
        }
        if self.edits.is_empty() {
            out += "no edits found\n";
        }
        for d in &self.diagnostics {
            out += &diagnostic_line(d);
        }
        for c in &self.commands {
            out += &format!("suggested command (reply line {}, not run): {}\n", c.reply_lines.start, c.command);
        }
        out
    }
}

fn command_json(c: &SuggestedCommand) -> CommandJson {
    CommandJson {
        command: c.command.clone(),
        reply_lines: LinesJson { start: c.span.first_line, end: c.span.last_line },
    }
}

fn diagnostic_line(d: &DiagnosticJson) -> String {
    let at = match (&d.path, &d.lines, &d.reply_lines) {
        (Some(path), Some(lines), _) => format!("{path}:{}: ", lines.start),
        (_, _, Some(reply)) => format!("reply line {}: ", reply.start),
        _ => String::new(),
    };
    let mut line = format!("{}: {at}{}\n", d.severity, d.message);
    if let Some(hint) = &d.hint {
        line += &format!("  hint: {hint}\n");
    }
    line
}

/// What happened to one file.
#[derive(Debug, Serialize)]
pub struct FileJson {
    pub path: String,
    pub action: &'static str,
    pub from: Option<String>,
    pub lines_before: usize,
    pub lines_after: usize,
}

/// What happened to one edit.
#[derive(Debug, Serialize)]
pub struct EditJson {
    pub index: usize,
    pub path: String,
    pub status: &'static str,
    pub kind: Option<&'static str>,
    pub message: String,
    pub hint: Option<String>,
    pub applied_path: Option<String>,
    pub lines: Option<LinesJson>,
    pub reply_lines: LinesJson,
}

/// `git agent-apply [apply] --json`.
#[derive(Debug, Serialize)]
pub struct ApplyReport {
    pub schema: u32,
    pub status: &'static str,
    pub dry_run: bool,
    pub format: FormatChoice,
    pub files: Vec<FileJson>,
    pub edits: Vec<EditJson>,
    pub diagnostics: Vec<DiagnosticJson>,
    pub commands: Vec<CommandJson>,
    pub reflection: String,
    #[serde(skip)]
    pub diff: String,
}

impl ApplyReport {
    /// The report of applying `edits` (with `outcomes`) as `changes` to files
    /// that held `before` (by path).
    pub fn new(
        format: FormatChoice,
        parsed: &ParseOutput,
        outcomes: &[Outcome],
        changes: &[Change],
        before: &dyn Fn(&str) -> Option<String>,
        dry_run: bool,
    ) -> Self {
        let edits: Vec<EditJson> = outcomes
            .iter()
            .map(|o| {
                let edit: &Edit = &parsed.edits[o.edit as usize];
                EditJson {
                    index: o.edit as usize + 1,
                    path: edit.path.clone(),
                    status: o.status.as_str(),
                    kind: o.kind.map(|k| k.as_str()),
                    message: o.message.clone(),
                    hint: o.hint.clone(),
                    applied_path: o.applied_path.clone(),
                    lines: o.lines.map(|l| LinesJson { start: l.start, end: l.end }),
                    reply_lines: LinesJson { start: edit.span.first_line, end: edit.span.last_line },
                }
            })
            .collect();
        let failed = edits.iter().any(|e| e.status == EditStatus::Failed.as_str())
            || parsed.diagnostics.iter().any(|d| d.severity == Severity::Error);
        let mut files = Vec::new();
        let mut diff = String::new();
        for change in changes {
            let (path, from, action, new) = match change {
                Change::Write(file) => {
                    let action = if before(&file.path).is_some() { "modified" } else { "created" };
                    (file.path.clone(), None, action, Some(file.content.as_str()))
                }
                Change::Delete(path) => (path.clone(), None, "deleted", None),
                Change::Rename(r) => (r.to.clone(), Some(r.from.clone()), "renamed", Some(r.content.as_str())),
            };
            let old = before(from.as_deref().unwrap_or(&path));
            diff += &unified_diff(from.as_deref().unwrap_or(&path), &path, old.as_deref(), new);
            files.push(FileJson {
                lines_before: old.as_deref().map_or(0, count_lines),
                lines_after: new.map_or(0, count_lines),
                path,
                from,
                action,
            });
        }
        let status = if failed {
            "failed"
        } else if files.is_empty() {
            "unchanged"
        } else {
            "applied"
        };
        let mut report = ApplyReport {
            schema: SCHEMA,
            status,
            dry_run,
            format,
            files,
            edits,
            diagnostics: parsed.diagnostics.iter().map(DiagnosticJson::from).collect(),
            commands: parsed.commands.iter().map(command_json).collect(),
            reflection: String::new(),
            diff,
        };
        report.reflection = report.reflection_text();
        report
    }

    /// Text for the model: what failed and why, and what to send next.
    fn reflection_text(&self) -> String {
        let failed: Vec<&EditJson> = self.edits.iter().filter(|e| e.status == "failed").collect();
        let errors: Vec<&DiagnosticJson> = self.diagnostics.iter().filter(|d| d.severity == "error").collect();
        if failed.is_empty() && errors.is_empty() {
            return String::new();
        }
        let mut out = String::new();
        for d in &errors {
            out += &format!("Your reply could not be read: {}", d.message);
            if let Some(hint) = &d.hint {
                out += &format!(" ({hint})");
            }
            out += "\n";
        }
        for e in &failed {
            out += &format!("Edit {} to {} failed: {}\n", e.index, e.path, e.message);
            if let Some(hint) = &e.hint {
                out += &format!("{hint}\n");
            }
        }
        out += "None of your edits were applied, because of the problems above. Fix them and send all of the edits again.\n";
        out
    }

    pub fn human(&self) -> String {
        let mut out = String::new();
        for d in &self.diagnostics {
            out += &diagnostic_line(d);
        }
        for e in &self.edits {
            if e.status == "applied" {
                out += &format!("edit {} {}: {}\n", e.index, e.path, e.message);
            } else {
                out += &format!("edit {} {} FAILED ({}): {}\n", e.index, e.path, e.kind.unwrap_or("error"), e.message);
                if let Some(hint) = &e.hint {
                    out += &format!("  hint: {hint}\n");
                }
            }
        }
        let verb = if self.dry_run { "would be" } else { "was" };
        match self.status {
            "failed" => out += "nothing was changed\n",
            "unchanged" => out += "nothing to change\n",
            _ => {
                for f in &self.files {
                    out += &format!("{} {verb} {} ({} lines)\n", f.path, f.action, f.lines_after);
                }
            }
        }
        out
    }
}

fn count_lines(text: &str) -> usize {
    agent_apply_sdk::text::lines_with_endings(text).count()
}

/// A unified diff of one file, `None` meaning absent.
pub fn unified_diff(old_path: &str, new_path: &str, old: Option<&str>, new: Option<&str>) -> String {
    let diff = TextDiff::from_lines(old.unwrap_or(""), new.unwrap_or(""));
    let old_header = if old.is_some() { format!("a/{old_path}") } else { "/dev/null".into() };
    let new_header = if new.is_some() { format!("b/{new_path}") } else { "/dev/null".into() };
    diff.unified_diff().context_radius(3).header(&old_header, &new_header).missing_newline_hint(true).to_string()
}

/// `diff` with ANSI colours for added, removed and hunk-header lines.
pub fn colorize_diff(diff: &str) -> String {
    let mut out = String::with_capacity(diff.len() + diff.len() / 8);
    for line in diff.split_inclusive('\n') {
        let color = if line.starts_with("+++") || line.starts_with("---") {
            "\x1b[1m"
        } else if line.starts_with('+') {
            "\x1b[32m"
        } else if line.starts_with('-') {
            "\x1b[31m"
        } else if line.starts_with("@@") {
            "\x1b[36m"
        } else {
            ""
        };
        if color.is_empty() {
            out.push_str(line);
        } else {
            out += &format!(
                "{color}{}\x1b[0m{}",
                line.trim_end_matches('\n'),
                if line.ends_with('\n') { "\n" } else { "" }
            );
        }
    }
    out
}
