//! Between the host bindings' types and the SDK's: the same shapes, generated
//! twice (once by wasmtime, once by wit-bindgen). The rest of the host speaks
//! the SDK's types only.

use agent_apply_sdk::types as sdk;

use super::bindings::agent_apply::format::types as wit;

pub fn options(options: &[sdk::OptionValue]) -> Vec<wit::OptionValue<'_>> {
    options.iter().map(|o| wit::OptionValue { key: &o.key, value: &o.value }).collect()
}

pub fn file_to_host(file: &sdk::File) -> wit::FileParam<'_> {
    wit::FileParam { path: &file.path, content: &file.content }
}

fn file(file: wit::FileResult) -> sdk::File {
    sdk::File { path: file.path, content: file.content }
}

pub fn line_range_to_host(range: sdk::LineRange) -> wit::LineRange {
    wit::LineRange { start: range.start, end: range.end }
}

fn line_range(range: wit::LineRange) -> sdk::LineRange {
    sdk::LineRange { start: range.start, end: range.end }
}

fn span_to_host(span: sdk::Span) -> wit::Span {
    wit::Span { start: span.start, end: span.end, first_line: span.first_line, last_line: span.last_line }
}

fn span(span: wit::Span) -> sdk::Span {
    sdk::Span { start: span.start, end: span.end, first_line: span.first_line, last_line: span.last_line }
}

/// Borrowed, except the related paths: the contract wants a list of
/// strings, which `edit.related_paths` (owned strings) is not.
pub fn edit_to_host<'a>(edit: &'a sdk::Edit, related_paths: &'a [&'a str]) -> wit::EditParam<'a> {
    wit::EditParam {
        path: &edit.path,
        related_paths,
        span: span_to_host(edit.span),
        summary: &edit.summary,
        payload: &edit.payload,
    }
}

fn edit(edit: wit::EditResult) -> sdk::Edit {
    sdk::Edit {
        path: edit.path,
        related_paths: edit.related_paths,
        span: span(edit.span),
        summary: edit.summary,
        payload: edit.payload,
    }
}

pub fn diagnostic(d: wit::Diagnostic) -> sdk::Diagnostic {
    sdk::Diagnostic {
        severity: match d.severity {
            wit::Severity::Error => sdk::Severity::Error,
            wit::Severity::Warning => sdk::Severity::Warning,
            wit::Severity::Note => sdk::Severity::Note,
        },
        message: d.message,
        hint: d.hint,
        span: d.span.map(span),
        path: d.path,
        lines: d.lines.map(line_range),
    }
}

pub fn parse_output(out: wit::ParseOutput) -> sdk::ParseOutput {
    sdk::ParseOutput {
        edits: out.edits.into_iter().map(edit).collect(),
        diagnostics: out.diagnostics.into_iter().map(diagnostic).collect(),
        commands: out
            .commands
            .into_iter()
            .map(|c| sdk::SuggestedCommand { command: c.command, span: span(c.span) })
            .collect(),
    }
}

fn failure_kind(kind: wit::FailureKind) -> sdk::FailureKind {
    match kind {
        wit::FailureKind::Malformed => sdk::FailureKind::Malformed,
        wit::FailureKind::NotFound => sdk::FailureKind::NotFound,
        wit::FailureKind::Ambiguous => sdk::FailureKind::Ambiguous,
        wit::FailureKind::Stale => sdk::FailureKind::Stale,
        wit::FailureKind::OutOfRange => sdk::FailureKind::OutOfRange,
        wit::FailureKind::Overlap => sdk::FailureKind::Overlap,
        wit::FailureKind::AlreadyApplied => sdk::FailureKind::AlreadyApplied,
        wit::FailureKind::Forbidden => sdk::FailureKind::Forbidden,
    }
}

pub fn apply_output(out: wit::ApplyOutput) -> sdk::ApplyOutput {
    sdk::ApplyOutput {
        changes: out
            .changes
            .into_iter()
            .map(|c| match c {
                wit::Change::Write(f) => sdk::Change::Write(file(f)),
                wit::Change::Delete(path) => sdk::Change::Delete(path),
                wit::Change::Rename(r) => {
                    sdk::Change::Rename(sdk::Renamed { from: r.from, to: r.to, content: r.content })
                }
            })
            .collect(),
        outcomes: out
            .outcomes
            .into_iter()
            .map(|o| sdk::Outcome {
                edit: o.edit,
                status: match o.status {
                    wit::EditStatus::Applied => sdk::EditStatus::Applied,
                    wit::EditStatus::Failed => sdk::EditStatus::Failed,
                },
                kind: o.kind.map(failure_kind),
                message: o.message,
                hint: o.hint,
                applied_path: o.applied_path,
                lines: o.lines.map(line_range),
                matched: o.matched.map(match_info),
            })
            .collect(),
    }
}

fn match_info(m: wit::MatchInfo) -> sdk::MatchInfo {
    sdk::MatchInfo {
        level: m.level,
        relocated: m.relocated,
        stated_line: m.stated_line,
        retried: m.retried,
        candidates: m.candidates.into_iter().map(|c| sdk::LevelCount { level: c.level, count: c.count }).collect(),
    }
}

pub fn format_info(info: wit::FormatInfo) -> sdk::FormatInfo {
    sdk::FormatInfo {
        name: info.name,
        aliases: info.aliases,
        version: info.version,
        summary: info.summary,
        instructions: info.instructions,
        example_reply: info.example_reply,
        example_files: info.example_files.into_iter().map(file).collect(),
        options: info
            .options
            .into_iter()
            .map(|o| sdk::OptionDoc { key: o.key, default_value: o.default_value, description: o.description })
            .collect(),
        detect_hints: info.detect_hints,
    }
}
