//! What `parse` reports: the edits a reply holds, its diagnostics and the
//! commands it suggests (shared with the apply report).

use agent_apply_sdk::types::{Diagnostic, LineRange, ParseOutput, Severity, Span, SuggestedCommand};
use schemars::JsonSchema;
use serde::Serialize;

use super::{FormatChoice, SCHEMA};

#[derive(Debug, Serialize, JsonSchema)]
pub struct DiagnosticJson {
    #[serde(serialize_with = "crate::schema::serialize_severity")]
    #[schemars(schema_with = "crate::schema::severity")]
    pub severity: Severity,
    pub message: String,
    pub hint: Option<String>,
    /// The lines of the reply it is about.
    #[schemars(schema_with = "crate::schema::optional_line_range")]
    pub reply_lines: Option<LineRange>,
    pub path: Option<String>,
    #[schemars(schema_with = "crate::schema::optional_line_range")]
    pub lines: Option<LineRange>,
}

/// The lines of the reply `span` covers.
pub(super) fn reply_lines(span: &Span) -> LineRange {
    LineRange::new(span.first_line, span.last_line)
}

impl From<&Diagnostic> for DiagnosticJson {
    fn from(d: &Diagnostic) -> Self {
        DiagnosticJson {
            severity: d.severity,
            message: d.message.clone(),
            hint: d.hint.clone(),
            reply_lines: d.span.as_ref().map(reply_lines),
            path: d.path.clone(),
            lines: d.lines,
        }
    }
}

/// `git agent-apply parse --json`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ParseReport {
    pub schema: u32,
    pub format: FormatChoice,
    pub edits: Vec<ParsedEditJson>,
    pub diagnostics: Vec<DiagnosticJson>,
    pub commands: Vec<CommandJson>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ParsedEditJson {
    pub index: usize,
    pub path: String,
    pub related_paths: Vec<String>,
    pub summary: String,
    #[schemars(schema_with = "crate::schema::span")]
    pub span: Span,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CommandJson {
    pub command: String,
    #[schemars(schema_with = "crate::schema::line_range")]
    pub reply_lines: LineRange,
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
                    span: e.span,
                })
                .collect(),
            diagnostics: output.diagnostics.iter().map(DiagnosticJson::from).collect(),
            commands: output.commands.iter().map(command_json).collect(),
        }
    }
}

pub(super) fn command_json(c: &SuggestedCommand) -> CommandJson {
    CommandJson { command: c.command.clone(), reply_lines: reply_lines(&c.span) }
}
